/* bench_swap.c -- how fast and how good is the swap search (swap.h)?

     (1) Throughput: plans priced per CPU second by the genetic search
         (planner + simulation of each candidate) on the
         wresnet:depth=152,widen=10 training graph, memory at a third of
         its ideal footprint.  Target: >= 2,000 per second on one core.
     (2) Convergence on that graph: the best step after 1, 2, 5, 10, 20,
         60 and 120 CPU seconds of one search (the best/average/worst of
         every generation on stderr with --curve), and the 10 s result over
         the 120 s one.  Target: within 5% (ratio <= 1.05).
     (3) Against the baselines, memory at a third of the ideal footprint:
         rnn:layers=8,hidden=8192 and the wresnet above: GA (10 s), no
         search, ODSwap, GeePS; ratio baseline / GA.  Target for the RNN:
         ODSwap / GA >= 2.
     (4) Thesis Table 5.2: wresnet:depth=152,widen=1 inference at batch 1,
         16, 32, 64 for 64 MB .. 1 GB of device memory (steady state: the
         weights stay resident from one inference to the next where they
         fit), GA 2 s per cell; N/A where no pool can run every op.

   The "ideal footprint" is the peak of the plan with unlimited memory (op
   order, every tensor alive from its first to its last use, parameters
   all the time).  Times are simulated seconds on the default device (an
   H200-class roofline, 50 GB/s host link per direction); search budgets
   are CPU time (clock()).

   Usage: bench_swap [--quick] [--curve]
     --quick   (2) for 20 s instead of 120 s, (4) batch 1 and 16 only
     --curve   print every generation of (2) on stderr

   Exits 1 only when the library fails. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KT_IMPLEMENTATION
#include "../swap.h"

static int build(const char *spec, kt_swap_model *m) {
    kt_graph *g = NULL;
    kt_error err;
    if (kt_zoo_build(spec, &g, &err) != KT_OK ||
        kt_swap_model_from_graph(g, NULL, m, &err) != KT_OK) {
        fprintf(stderr, "%s: %s\n", spec, err.message);
        kt_graph_destroy(g);
        return 0;
    }
    kt_graph_destroy(g);
    return 1;
}

/* Peak bytes with unlimited memory. */
static int64_t footprint(const kt_swap_model *m) {
    kt_swap_options o;
    kt_swap_result r;
    kt_error err;
    int64_t total = 0, peak;
    int t;
    for (t = 0; t < m->ntensors; t++) total += m->bytes[t];
    memset(&o, 0, sizeof o);
    o.memory = 2 * total;
    if (kt_swap_search(m, KT_SWAP_SEARCH_NONE, &o, &r, &err) != KT_OK) {
        fprintf(stderr, "footprint: %s\n", err.message);
        return -1;
    }
    peak = r.peak_bytes;
    kt_swap_result_free(&r);
    return peak;
}

typedef struct curve {
    double at[8];
    double best[8];
    int n, print;
} curve;

static void on_generation(void *ctx, int gen, double best, double avg,
                          double worst, int64_t evals, double secs) {
    curve *c = (curve *)ctx;
    while (c->n < 7 && secs >= c->at[c->n]) c->best[c->n++] = best;
    c->best[7] = best;
    if (c->print)
        fprintf(stderr, "gen %5d  %8.2f s  %8lld plans  best %.6f  avg %.6f"
                "  worst %.6f\n", gen, secs, (long long)evals, best, avg,
                worst);
}

static double run(const kt_swap_model *m, kt_swap_search_kind k,
                  int64_t memory, double seconds, curve *c, int64_t *evals,
                  double *cpu) {
    kt_swap_options o;
    kt_swap_result r;
    kt_error err;
    double t;
    memset(&o, 0, sizeof o);
    o.memory = memory;
    o.seconds = seconds;
    o.seed = 1;
    if (c) {
        o.progress = on_generation;
        o.progress_ctx = c;
    }
    if (kt_swap_search(m, k, &o, &r, &err) != KT_OK) {
        if (err.status != KT_ERR_INVALID) {
            fprintf(stderr, "search: %s\n", err.message);
            exit(1);
        }
        return -1; /* nothing fits */
    }
    t = r.step_seconds;
    if (evals) *evals = r.evaluations;
    if (cpu) *cpu = r.search_seconds;
    kt_swap_result_free(&r);
    return t;
}

int main(int argc, char **argv) {
    const char *wres = "wresnet:depth=152,widen=10";
    const char *rnn = "rnn:layers=8,hidden=8192";
    int quick = 0, print_curve = 0, i, j;
    double long_s;
    kt_swap_model m;
    int64_t fp, evals = 0;
    double cpu = 0;
    curve c;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--curve") == 0) print_curve = 1;
        else {
            fprintf(stderr, "usage: bench_swap [--quick] [--curve]\n");
            return 2;
        }
    }
    long_s = quick ? 20 : 120;

    /* (1) and (2) */
    if (!build(wres, &m) || (fp = footprint(&m)) < 0) return 1;
    printf("(1) throughput, %s training: %d ops, %d sizes, ideal %.4f s, "
           "footprint %.2f GB, memory %.2f GB\n", wres, m.nops, m.nsizes,
           kt_swap_ideal_seconds(&m), fp / 1e9, fp / 3 / 1e9);
    memset(&c, 0, sizeof c);
    c.at[0] = 1; c.at[1] = 2; c.at[2] = 5; c.at[3] = 10;
    c.at[4] = 20; c.at[5] = 60; c.at[6] = 120;
    c.print = print_curve;
    run(&m, KT_SWAP_SEARCH_GA, fp / 3, long_s, &c, &evals, &cpu);
    printf("    %lld plans in %.1f CPU s: %.0f plans per second (target "
           ">= 2000)\n\n", (long long)evals, cpu, evals / cpu);
    printf("(2) convergence: best simulated step after CPU seconds\n");
    printf("    %8s  %12s\n", "CPU s", "best step s");
    for (i = 0; i < 7 && i < c.n; i++)
        printf("    %8.0f  %12.6f\n", c.at[i], c.best[i]);
    printf("    %8s  %12.6f\n", "end", c.best[7]);
    if (c.n > 3)
        printf("    10 s / %.0f s result: %.4f (target <= 1.05)\n\n", long_s,
               c.best[3] / c.best[7]);

    /* (3) */
    printf("(3) memory at a third of the ideal footprint: step seconds and "
           "baseline / GA\n");
    printf("    %-28s %10s %10s %10s %10s %10s  %8s %8s %8s\n", "model",
           "ideal", "GA 10s", "none", "ODSwap", "GeePS", "none/GA",
           "OD/GA", "GeePS/GA");
    for (j = 0; j < 2; j++) {
        const char *spec = j == 0 ? rnn : wres;
        double t[4];
        kt_swap_model mm;
        int64_t f;
        if (j == 0) {
            if (!build(spec, &mm) || (f = footprint(&mm)) < 0) return 1;
        } else {
            mm = m;
            f = fp;
        }
        t[0] = run(&mm, KT_SWAP_SEARCH_GA, f / 3, 10, NULL, NULL, NULL);
        t[1] = run(&mm, KT_SWAP_SEARCH_NONE, f / 3, 0, NULL, NULL, NULL);
        t[2] = run(&mm, KT_SWAP_SEARCH_ODSWAP, f / 3, 0, NULL, NULL, NULL);
        t[3] = run(&mm, KT_SWAP_SEARCH_GEEPS, f / 3, 0, NULL, NULL, NULL);
        printf("    %-28s %10.4f", spec, kt_swap_ideal_seconds(&mm));
        for (i = 0; i < 4; i++)
            if (t[i] < 0) printf(" %10s", "N/A");
            else printf(" %10.4f", t[i]);
        for (i = 1; i < 4; i++)
            if (t[i] < 0 || t[0] <= 0) printf(" %8s", "-");
            else printf(" %8.2f", t[i] / t[0]);
        printf("\n");
        if (j == 0) kt_swap_model_free(&mm);
    }
    kt_swap_model_free(&m);

    /* (4) */
    printf("\n(4) thesis Table 5.2: wresnet:depth=152,widen=1 inference, "
           "step time per device memory (GA 2 s a cell)\n");
    {
        static const int batches[4] = {1, 16, 32, 64};
        static const int mem_mb[8] = {64, 128, 192, 256, 320, 512, 640, 1024};
        int nb = quick ? 2 : 4;
        kt_swap_model bm[4];
        printf("    %8s", "MB/batch");
        for (j = 0; j < nb; j++) {
            char spec[96];
            snprintf(spec, sizeof spec,
                     "wresnet:depth=152,widen=1,batch=%d,infer=1", batches[j]);
            if (!build(spec, &bm[j])) return 1;
            printf(" %10d", batches[j]);
        }
        printf("\n");
        for (i = 0; i < 8; i++) {
            printf("    %8d", mem_mb[i]);
            for (j = 0; j < nb; j++) {
                double t = run(&bm[j], KT_SWAP_SEARCH_GA,
                               (int64_t)mem_mb[i] << 20, 2, NULL, NULL, NULL);
                if (t < 0) printf(" %10s", "N/A");
                else printf(" %9.2fms", t * 1e3);
            }
            printf("\n");
            fflush(stdout);
        }
        printf("    %8s", "ideal");
        for (j = 0; j < nb; j++) {
            printf(" %9.2fms", kt_swap_ideal_seconds(&bm[j]) * 1e3);
            kt_swap_model_free(&bm[j]);
        }
        printf("\n");
    }
    return 0;
}
