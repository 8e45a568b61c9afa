/* kcut_walkthrough.c -- the recursive k-cut search, one cut at a time.
   Read it next to SOYBEAN 4.3 (Algorithm 1, k-cuts tiling) and Tofu 5.2
   (recursive partitioning).

       kcut_walkthrough [SPEC [DEVICES]]
       default: mlp:layers=3,hidden=256,batch=512 on 8 devices

   N devices are factored into cuts k_1 >= k_2 >= ... (prime factors,
   largest first, Tofu 5.2).  Cut 1 splits the devices into k_1 groups and
   picks, by the level DP of SOYBEAN 4.2, one choice per tensor (split one
   dimension, S<d>, or replicate, R) and one index variable per operator.
   Every tensor then shrinks to its tile, and cut 2 solves the same problem
   inside each group, given cut 1's choices -- and so on.

   SOYBEAN's Algorithm 1 writes the total as c_k = delta_k + 2 c_{k-1}: a
   cut's cost delta is paid once per group.  ktile's plan.cut_bytes[i] is
   Tofu's delta_i, "the total communication cost incurred by all worker
   groups at step i", so the total is just their sum.  It is also what the
   plan truncated to cuts 1..i costs minus the plan truncated to cuts
   1..i-1; this program recomputes that prefix cost with kt_plan_op_cost
   to show it.  Tofu's Theorem 1 says the deltas never decrease: the cheap
   splits are taken first, and the costly ones are left for the innermost
   cut (the fastest links of a hierarchical machine). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KT_IMPLEMENTATION
#include "../tiling.h"

/* Prints "name=what" items, wrapped to 78 columns. */
static int wrap_item(int col, const char *name, const char *what) {
    int n = (int)(strlen(name) + strlen(what)) + 2;
    if (col + n > 78) {
        printf("\n   ");
        col = 3;
    }
    printf(" %s=%s", name, what);
    return col + n;
}

int main(int argc, char **argv) {
    const char *spec = argc > 1 ? argv[1] : "mlp:layers=3,hidden=256,batch=512";
    long devices = argc > 2 ? strtol(argv[2], NULL, 10) : 8;
    kt_graph *g = NULL;
    kt_factors f;
    kt_plan plan;
    kt_error err;
    int64_t before = 0;
    int i, t, o, rc = 0;

    if (argc > 3 || devices < 1) {
        fprintf(stderr, "usage: kcut_walkthrough [SPEC [DEVICES]]\n");
        return 2;
    }
    if (kt_zoo_build(spec, &g, &err) != KT_OK ||
        kt_factors_default(devices, &f, &err) != KT_OK ||
        kt_plan_search(g, &f, NULL, &plan, &err) != KT_OK) {
        fprintf(stderr, "kcut_walkthrough: %s\n", err.message);
        kt_graph_destroy(g);
        return 1;
    }
    printf("%s on %ld devices, cuts", spec, devices);
    for (i = 0; i < f.count; i++) printf("%s%d", i ? "," : " ", f.k[i]);
    printf(": %lld bytes per step\n", (long long)plan.total_bytes);
    if (f.count == 0) printf("(one device: no cuts, nothing moves)\n");

    for (i = 0; i < f.count; i++) {
        int64_t prefix = 0, groups = 1, bytes;
        int col = 3, j;
        char what[16];
        for (j = 0; j < i; j++) groups *= f.k[j];
        /* The plan truncated to cuts 1..i+1: every operator priced over
           k_1 * ... * k_{i+1} groups. */
        for (o = 0; o < kt_graph_op_count(g); o++) {
            if (kt_plan_op_cost(g, &plan, o, i + 1, &bytes, &err) != KT_OK) {
                fprintf(stderr, "kcut_walkthrough: %s\n", err.message);
                rc = 1;
                goto out;
            }
            prefix += bytes;
        }
        if (i == 0)
            printf("\ncut 1: factor %d over the whole graph", f.k[0]);
        else
            printf("\ncut %d: factor %d inside each of the %lld groups so "
                   "far", i + 1, f.k[i], (long long)groups);
        printf("; adds delta_%d = %lld bytes\n", i + 1,
               (long long)plan.cut_bytes[i]);
        printf("  plan truncated to cuts 1..%d costs %lld bytes "
               "(%lld before + %lld)%s\n", i + 1, (long long)prefix,
               (long long)before, (long long)(prefix - before),
               prefix - before == plan.cut_bytes[i] ? "" : "  MISMATCH");
        if (i > 0 && plan.cut_bytes[i] < plan.cut_bytes[i - 1])
            printf("  (smaller than cut %d's: Tofu Theorem 1 does not hold "
                   "here)\n", i);
        before = prefix;

        printf("  tensors:\n   ");
        for (t = 0; t < kt_graph_tensor_count(g); t++) {
            const kt_tensor *x = kt_graph_tensor(g, t);
            int c = plan.tiling[t].cut[i];
            if (x->kind != KT_WEIGHT && x->kind != KT_ACTIVATION) continue;
            if (c >= 0) snprintf(what, sizeof what, "S%d", c);
            else snprintf(what, sizeof what, "R");
            col = wrap_item(col, x->name, what);
        }
        printf("\n  operators (variable split):\n   ");
        col = 3;
        for (o = 0; o < kt_graph_op_count(g); o++) {
            const kt_op *op = kt_graph_op(g, o);
            int v = plan.split[o * KT_MAX_CUTS + i];
            col = wrap_item(col, op->name,
                            v == KT_SPLIT_REPLICATE ? "*" : op->var[v].name);
        }
        printf("\n");
    }

    /* The composition of the cuts: each tensor's whole tiling, each
       operator's whole strategy. */
    printf("\nwhole plan (cut 1 first):\n   ");
    {
        int col = 3;
        char buf[KT_MAX_CUTS * (KT_NAME_MAX + 1) + 2];
        for (t = 0; t < kt_graph_tensor_count(g); t++) {
            const kt_tensor *x = kt_graph_tensor(g, t);
            if (x->kind != KT_WEIGHT && x->kind != KT_ACTIVATION) continue;
            kt_tiling_format(&plan.tiling[t], buf, sizeof buf);
            col = wrap_item(col, x->name, buf);
        }
        printf("\n   ");
        col = 3;
        for (o = 0; o < kt_graph_op_count(g); o++) {
            kt_plan_format_split(g, &plan, o, buf, sizeof buf);
            col = wrap_item(col, kt_graph_op(g, o)->name, buf);
        }
        printf("\n");
    }
out:
    kt_plan_free(&plan);
    kt_graph_destroy(g);
    return rc;
}
