/* bench_search.c -- how fast is the plan search, how much memory does it
   take, and how much does it save over the baselines?

     (1) kt_plan_search with the level DP (KT_STRATEGY_DP) and the default
         factors (kt_factors_default: prime factors, largest first) on
         2, 4, 8, ..., 1024 devices for four zoo models.  Targets, on one
         core: wresnet-152 (widen 10) and the 10-layer RNN (hidden 8192)
         each under 0.2 s of search CPU time on 8 devices and under 2 s on
         1024 devices.
     (2) On 8 devices, the total bytes of the plan every strategy finds
         (dp, data, model, greedy, spartan, equalchop) and each baseline's
         ratio to DP (baseline / dp, so > 1 means DP moves less).

   "search CPU s" is kt_plan.search_seconds (CPU time, clock()); "wall s" is
   CLOCK_MONOTONIC around the kt_plan_search call.  "peak MB" is the most
   bytes (10^6) the library held at once during the search beyond what it
   held when the search started (the graph, built before, is not counted),
   measured by counting allocation wrappers installed through KT_MALLOC /
   KT_REALLOC / KT_FREE; it includes the plan the search returns but not
   the allocator's own overhead.  Total bytes are in GB (10^9).

   Usage: bench_search [--quick] [--max-devices N]
     --quick          table 1 only up to 64 devices
     --max-devices N  table 1 only up to N devices (default 1024)

   A missed target is reported in the table; the program still exits 0
   (timings depend on the machine), and exits 1 only when the library fails
   (a zoo model does not build, or the DP search fails). */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------- counting allocator */

/* A header in front of every block holds its size; the union keeps the
   block that follows aligned for any type the library stores. */
typedef union bench_header {
    size_t size;
    long double ld;
    long long ll;
    double d;
    void *p;
} bench_header;

static size_t mem_current = 0, mem_peak = 0;

static void mem_note(size_t grown) {
    mem_current += grown;
    if (mem_current > mem_peak) mem_peak = mem_current;
}

static void *bench_malloc(size_t n) {
    bench_header *h = (bench_header *)malloc(sizeof *h + n);
    if (!h) return NULL;
    h->size = n;
    mem_note(n);
    return h + 1;
}

static void bench_free(void *p) {
    bench_header *h;
    if (!p) return;
    h = (bench_header *)p - 1;
    mem_current -= h->size;
    free(h);
}

static void *bench_realloc(void *p, size_t n) {
    bench_header *h, *q;
    size_t old;
    if (!p) return bench_malloc(n);
    h = (bench_header *)p - 1;
    old = h->size;
    q = (bench_header *)realloc(h, sizeof *q + n);
    if (!q) return NULL; /* the old block is still held */
    q->size = n;
    mem_current -= old;
    mem_note(n);
    return q + 1;
}

#define KT_MALLOC(n) bench_malloc(n)
#define KT_REALLOC(p, n) bench_realloc(p, n)
#define KT_FREE(p) bench_free(p)
#define KT_IMPLEMENTATION
#include "../tiling.h"

/* ------------------------------------------------------------- helpers */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct model {
    const char *label; /* short name for the tables */
    const char *spec;  /* kt_zoo_build spec          */
    double target8;    /* search CPU seconds on 8 devices, 0: none    */
    double target1024; /* search CPU seconds on 1024 devices, 0: none */
    kt_graph *g;
} model;

static model models[] = {
    {"wresnet152x10", "wresnet:depth=152,widen=10,batch=8", 0.2, 2, NULL},
    {"rnn10x8192", "rnn:layers=10,hidden=8192,steps=20,batch=128", 0.2, 2,
     NULL},
    {"transformer2x1024",
     "transformer:layers=2,dmodel=1024,heads=16,ffn=4096,seq=512,batch=8", 0,
     0, NULL},
    {"mlp5x300", "mlp:layers=5,hidden=300,batch=400", 0, 0, NULL},
    {"alexnet", "alexnet", 0, 0, NULL},
    {"vgg16", "vgg16", 0, 0, NULL},
    {"wresnet50x4", "wresnet:depth=50,widen=4,batch=8", 0, 0, NULL},
};
#define NMODELS ((int)(sizeof models / sizeof models[0]))
#define NTABLE1 4 /* table 1 covers the first four models */

static void format_factors(const kt_factors *f, char *buf, size_t cap) {
    size_t n = 0;
    int i;
    buf[0] = '\0';
    for (i = 0; i < f->count && n < cap; i++) {
        int w = snprintf(buf + n, cap - n, "%s%d", i ? "," : "", f->k[i]);
        if (w < 0) break;
        n += (size_t)w;
    }
    if (f->count == 0) snprintf(buf, cap, "-");
}

/* One search; returns the status and fills the plan, times and peak. */
typedef struct run_result {
    kt_status status;
    kt_error err;
    double cpu_s, wall_s;
    size_t peak_bytes;
    int64_t total_bytes;
} run_result;

static run_result run_search(const kt_graph *g, const kt_factors *f,
                             kt_strategy strategy) {
    kt_search_options opt;
    kt_plan plan;
    run_result r;
    size_t base;
    double t0;

    memset(&opt, 0, sizeof opt);
    memset(&r, 0, sizeof r);
    opt.strategy = strategy;
    base = mem_current;
    mem_peak = mem_current;
    t0 = now();
    r.status = kt_plan_search(g, f, &opt, &plan, &r.err);
    r.wall_s = now() - t0;
    r.peak_bytes = mem_peak - base;
    if (r.status == KT_OK) {
        r.cpu_s = plan.search_seconds;
        r.total_bytes = plan.total_bytes;
        kt_plan_free(&plan);
    }
    return r;
}

static void usage(void) {
    fprintf(stderr, "usage: bench_search [--quick] [--max-devices N]\n");
    exit(2);
}

/* --------------------------------------------------------- table 1 */

static int table1(int64_t max_devices) {
    int m, failed = 0;
    int64_t n;
    printf("Table 1: DP search (KT_STRATEGY_DP, kt_factors_default), "
           "2..%lld devices\n\n", (long long)max_devices);
    printf("%-18s %7s  %-19s %12s %9s %9s %14s %9s  %s\n", "model", "devices",
           "factors", "search CPU s", "wall s", "peak MB", "total GB",
           "target", "result");
    for (m = 0; m < NTABLE1; m++) {
        for (n = 2; n <= max_devices; n *= 2) {
            kt_factors f;
            kt_error err;
            run_result r;
            char fs[64], target[32];
            double t = 0;
            if (kt_factors_default(n, &f, &err) != KT_OK) {
                fprintf(stderr, "bench_search: %s\n", err.message);
                return 1;
            }
            format_factors(&f, fs, sizeof fs);
            r = run_search(models[m].g, &f, KT_STRATEGY_DP);
            if (n == 8) t = models[m].target8;
            if (n == 1024) t = models[m].target1024;
            if (t > 0) snprintf(target, sizeof target, "< %g s", t);
            else snprintf(target, sizeof target, "-");
            if (r.status != KT_OK) {
                printf("%-18s %7lld  %-19s  error: %s\n", models[m].label,
                       (long long)n, fs, r.err.message);
                failed = 1;
                continue;
            }
            printf("%-18s %7lld  %-19s %12.3f %9.3f %9.1f %14.4f %9s",
                   models[m].label, (long long)n, fs, r.cpu_s, r.wall_s,
                   (double)r.peak_bytes / 1e6, (double)r.total_bytes / 1e9,
                   target);
            if (t > 0) printf("  %s", r.cpu_s < t ? "pass" : "MISS");
            printf("\n");
            fflush(stdout);
        }
    }
    return failed;
}

/* --------------------------------------------------------- table 2 */

static const struct {
    const char *name;
    kt_strategy strategy;
} strategies[] = {
    {"dp", KT_STRATEGY_DP},         {"data", KT_STRATEGY_DATA},
    {"model", KT_STRATEGY_MODEL},   {"greedy", KT_STRATEGY_GREEDY},
    {"spartan", KT_STRATEGY_SPARTAN}, {"equalchop", KT_STRATEGY_EQUALCHOP},
};
#define NSTRAT ((int)(sizeof strategies / sizeof strategies[0]))

static int table2(void) {
    enum { MAXNOTES = 64 };
    char notes[MAXNOTES][320];
    int nnotes = 0, m, s, failed = 0, i;
    kt_factors f;
    kt_error err;

    if (kt_factors_default(8, &f, &err) != KT_OK) {
        fprintf(stderr, "bench_search: %s\n", err.message);
        return 1;
    }
    printf("\nTable 2: total bytes (GB) of each strategy's plan on 8 devices "
           "(2,2,2); ratio = strategy / dp\n\n");
    printf("%-18s", "model");
    for (s = 0; s < NSTRAT; s++)
        printf(" %*s", s == 0 ? 10 : 20, strategies[s].name);
    printf("\n");
    for (m = 0; m < NMODELS; m++) {
        int64_t dp = -1;
        printf("%-18s", models[m].label);
        for (s = 0; s < NSTRAT; s++) {
            run_result r = run_search(models[m].g, &f, strategies[s].strategy);
            char cell[40];
            if (r.status != KT_OK) {
                snprintf(cell, sizeof cell, "n/a [%d]", nnotes + 1);
                if (nnotes < MAXNOTES) {
                    snprintf(notes[nnotes], sizeof notes[nnotes],
                             "[%d] %s on %s: %.250s", nnotes + 1,
                             strategies[s].name, models[m].label,
                             r.err.message);
                    nnotes++;
                }
                if (s == 0) failed = 1;
            } else if (s == 0) {
                dp = r.total_bytes;
                snprintf(cell, sizeof cell, "%.4f", (double)dp / 1e9);
            } else if (dp > 0) {
                snprintf(cell, sizeof cell, "%.4f (%.2fx)",
                         (double)r.total_bytes / 1e9,
                         (double)r.total_bytes / (double)dp);
            } else {
                snprintf(cell, sizeof cell, "%.4f (-)",
                         (double)r.total_bytes / 1e9);
            }
            printf(" %*s", s == 0 ? 10 : 20, cell);
            fflush(stdout);
        }
        printf("\n");
    }
    for (i = 0; i < nnotes; i++) printf("%s\n", notes[i]);
    return failed;
}

/* ----------------------------------------------------------------- main */

int main(int argc, char **argv) {
    int64_t max_devices = 1024;
    int i, m, failed = 0;
    kt_error err;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            max_devices = 64;
        } else if (strcmp(argv[i], "--max-devices") == 0 && i + 1 < argc) {
            char *end;
            long long v = strtoll(argv[++i], &end, 10);
            if (*end || v < 2 || v > KT_MAX_DEVICES) usage();
            max_devices = (int64_t)v;
        } else {
            usage();
        }
    }

    printf("models:\n");
    for (m = 0; m < NMODELS; m++) {
        if (kt_zoo_build(models[m].spec, &models[m].g, &err) != KT_OK) {
            fprintf(stderr, "bench_search: %s: %s\n", models[m].spec,
                    err.message);
            return 1;
        }
        printf("  %-18s %s (%d tensors, %d ops)\n", models[m].label,
               models[m].spec, kt_graph_tensor_count(models[m].g),
               kt_graph_op_count(models[m].g));
    }
    printf("\n");

    failed |= table1(max_devices);
    failed |= table2();

    for (m = 0; m < NMODELS; m++) kt_graph_destroy(models[m].g);
    if (mem_current != 0)
        printf("(%lu bytes still allocated at exit)\n",
               (unsigned long)mem_current);
    return failed;
}
