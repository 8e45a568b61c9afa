/* soybean_mlp.c -- the MLP example of SOYBEAN section 2.2, priced exactly.
   Read it next to SOYBEAN 2.2 ("Scaling challenges and trade-offs") and 4.1
   ("Parallelism as the tiling problem").

   The network: 5 fully connected layers of 300 neurons, batch 400, on 16
   devices.  Weights are 300x300 (5 x 360 KB = 1.8 MB of float32
   parameters), activations 400x300 (5 x 480 KB = 2.4 MB).  The paper
   compares three ways to train it:

     data parallelism   activations split by the batch (rows), weights
                        replicated; devices exchange weight gradients:
                        1.8 MB x 16 devices x 2 (push, pull) = 57.6 MB
     model parallelism  weights split by rows, activations by columns,
                        activation gradients replicated; devices exchange
                        activations: 2.4 MB x 16 x 2 = 76.8 MB
     hybrid             4 groups of 4: data parallelism across the groups,
                        model parallelism inside them: 14.4 + 4 x 4.8 =
                        33.6 MB

   SOYBEAN 4.1 turns each of these into a *tiling* of every matrix (R row,
   C column, r replicated; ktile writes S0, S1, R) composed over the cuts
   (16 devices = 4 cuts of 2), and 4.2-4.3 search the tiling with the least
   communication.  This program asks ktile for all three: data and model
   parallelism are fixed tilings (KT_STRATEGY_DATA, KT_STRATEGY_MODEL), the
   DP plan (KT_STRATEGY_DP) is the one-cut DP applied cut by cut.

   ktile's figures differ from the paper's because the accounting differs:
   the paper counts a parameter-server push and pull per device; ktile
   counts, element by element, the bytes every device must receive
   (DESIGN.md "Conversion cost": an all-reduce over k devices is 2(k-1)S),
   composed over the 4 cuts, and it prices the backward pass and the weight
   update as generated operators.  An operator never computes redundantly,
   so data parallelism also pays for gathering each updated weight back to
   all devices.  The ranking is the paper's point, and it holds: the
   searched plan moves far less than either pure form.

   The graph comes from the zoo, `ktile zoo --print mlp` shows its model
   file: x_l = relu(x_{l-1} W_l) (hx_l before the relu), no relu after the
   last layer, the loss gradient dx5 an input. */
#include <stdio.h>
#include <string.h>

#define KT_IMPLEMENTATION
#include "../tiling.h"

#define SPEC "mlp:layers=5,hidden=300,batch=400"

/* SOYBEAN's letters for ktile's cuts of a matrix: S0 is row tiling R, S1
   column tiling C, R replication r. */
static void soybean_letters(const kt_tiling *t, char *buf) {
    int i;
    for (i = 0; i < t->ncuts; i++)
        buf[i] = t->cut[i] == 0 ? 'R' : t->cut[i] == 1 ? 'C' : 'r';
    buf[t->ncuts] = '\0';
}

static double mb(int64_t bytes) { return (double)bytes / 1e6; }

int main(void) {
    static const struct {
        kt_strategy strategy;
        const char *name;
        double paper_mb;
    } rows[] = {
        {KT_STRATEGY_DATA, "data parallelism", 57.6},
        {KT_STRATEGY_MODEL, "model parallelism", 76.8},
        {KT_STRATEGY_DP, "DP plan (paper hybrid)", 33.6},
    };
    static const char *const show[] = {"W1", "x1", "dW1"};
    kt_graph *g = NULL;
    kt_factors f;
    kt_error err;
    kt_plan plan[3];
    int r, i;

    if (kt_zoo_build(SPEC, &g, &err) != KT_OK ||
        kt_factors_parse("2,2,2,2", &f, &err) != KT_OK) {
        fprintf(stderr, "soybean_mlp: %s\n", err.message);
        kt_graph_destroy(g);
        return 1;
    }
    printf("SOYBEAN 2.2: %s on 16 devices (cuts 2,2,2,2), %d tensors, "
           "%d operators\n\n", SPEC, kt_graph_tensor_count(g),
           kt_graph_op_count(g));
    printf("%-24s %10s %10s   %s\n", "", "ktile (MB)", "paper (MB)",
           "bytes per cut, cut 1 first");
    for (r = 0; r < 3; r++) {
        kt_search_options opt;
        memset(&opt, 0, sizeof opt);
        opt.strategy = rows[r].strategy;
        if (kt_plan_search(g, &f, &opt, &plan[r], &err) != KT_OK) {
            fprintf(stderr, "soybean_mlp: %s: %s\n", rows[r].name,
                    err.message);
            while (r-- > 0) kt_plan_free(&plan[r]);
            kt_graph_destroy(g);
            return 1;
        }
        printf("%-24s %10.2f %10.1f  ", rows[r].name,
               mb(plan[r].total_bytes), rows[r].paper_mb);
        for (i = 0; i < f.count; i++)
            printf(" %8lld", (long long)plan[r].cut_bytes[i]);
        printf("\n");
    }
    /* The paper's hybrid saves 41.7% over data and 56.2% over model
       parallelism. */
    printf("\nThe DP plan saves %.1f%% over data and %.1f%% over model "
           "parallelism\n(the paper's hybrid: 41.7%% and 56.2%%).\n",
           100.0 * (1.0 - (double)plan[2].total_bytes / plan[0].total_bytes),
           100.0 * (1.0 - (double)plan[2].total_bytes / plan[1].total_bytes));

    /* SOYBEAN 4.1 writes data parallelism as r for weights, R for the rest,
       and model parallelism as R for weights, C for activations, r for the
       rest; the DP plan mixes them per tensor and per cut. */
    printf("\nTilings, cut 1 first (ktile; SOYBEAN's letters R row, "
           "C column, r replicated):\n");
    printf("%-6s %-22s %-22s %s\n", "", "data", "model", "DP");
    for (i = 0; i < 3; i++) {
        int t = kt_graph_find_tensor(g, show[i]);
        printf("%-6s", show[i]);
        for (r = 0; r < 3; r++) {
            char text[64], letters[KT_MAX_CUTS + 1], cell[96];
            kt_tiling_format(&plan[r].tiling[t], text, sizeof text);
            soybean_letters(&plan[r].tiling[t], letters);
            snprintf(cell, sizeof cell, "%s (%s)", text, letters);
            printf(r < 2 ? " %-22s" : " %s", cell);
        }
        printf("\n");
    }
    printf("\nktile counts the bytes every device receives, the paper "
           "push+pull per device;\nsee the comment at the top of "
           "examples/soybean_mlp.c.\n");

    for (r = 0; r < 3; r++) kt_plan_free(&plan[r]);
    kt_graph_destroy(g);
    return 0;
}
