/* bench_cost.c -- how fast is the exact conversion cost?  The level DP and
   the k-cut search call it for every pair of tilings of every tensor they
   meet, so it must stay in the microseconds.

     (a) one conversion between two 4-cut tilings of an uneven 4-D tensor
         (13x11x7x9 on 2,2,2,2 = 16 devices): target under 20 us per call;
     (b) every ordered pair of the distinct tilings (one sequence per grid,
         S and R cuts, no P) of a 64x32x16x8 tensor on 2,2,2 = 8 devices:
         target under 50 ms in all.

   Each figure is the best of several repetitions (CLOCK_MONOTONIC).  The
   "placements precomputed" rows build the placements once and time only
   kt_conversion_cost, to show how the time splits between building
   placements and the coordinate-compressed count.  A missed target is
   reported in the table; the program still exits 0 (timings depend on the
   machine), and exits 1 only when the library fails. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define KT_IMPLEMENTATION
#include "../tiling.h"

#define REPS 7

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int64_t checksum = 0; /* keeps the work observable */

static void die(const kt_error *err) {
    fprintf(stderr, "bench_cost: %s\n", err->message);
    exit(1);
}

static void row(const char *name, double seconds, double target, int per_us) {
    char t[32], v[32];
    double shown = per_us ? seconds * 1e6 : seconds * 1e3;
    const char *unit = per_us ? "us" : "ms";
    snprintf(v, sizeof v, "%.2f %s", shown, unit);
    if (target > 0) snprintf(t, sizeof t, "< %g %s", target, unit);
    else snprintf(t, sizeof t, "-");
    if (target <= 0) printf("%-50s %12s %10s\n", name, v, t);
    else printf("%-50s %12s %10s  %s\n", name, v, t,
                shown < target ? "pass" : "MISS");
}

/* ---------------------------------------------------------- (a) one pair */

typedef struct pair_case {
    const char *from, *to;
} pair_case;

/* Best seconds per call of kt_tiling_conversion_cost, then of
   kt_conversion_cost on placements built once. */
static void time_pair(int rank, const int64_t *shape, const kt_factors *f,
                      const pair_case *c, double *per_call,
                      double *per_call_placed) {
    kt_tiling from, to;
    kt_placement a, b;
    kt_error err;
    int64_t bytes;
    double best = 1e30, best_placed = 1e30, t0;
    long iters = 1, i;
    int rep;

    if (kt_tiling_parse(c->from, &from, &err) != KT_OK) die(&err);
    if (kt_tiling_parse(c->to, &to, &err) != KT_OK) die(&err);
    if (kt_placement_from_tiling(&a, &from, rank, shape, f, &err) != KT_OK)
        die(&err);
    if (kt_placement_from_tiling(&b, &to, rank, shape, f, &err) != KT_OK)
        die(&err);
    /* Enough calls per repetition to fill about 20 ms. */
    for (;;) {
        t0 = now();
        for (i = 0; i < iters; i++) {
            if (kt_tiling_conversion_cost(rank, shape, 4, f, &from, &to,
                                          &bytes, NULL, &err) != KT_OK)
                die(&err);
            checksum += bytes;
        }
        if (now() - t0 > 0.02 || iters > (1L << 24)) break;
        iters *= 2;
    }
    for (rep = 0; rep < REPS; rep++) {
        double t;
        t0 = now();
        for (i = 0; i < iters; i++) {
            kt_tiling_conversion_cost(rank, shape, 4, f, &from, &to, &bytes,
                                      NULL, &err);
            checksum += bytes;
        }
        t = (now() - t0) / (double)iters;
        if (t < best) best = t;
        t0 = now();
        for (i = 0; i < iters; i++) {
            kt_conversion_cost(rank, shape, 4, &a, &b, &bytes, NULL, &err);
            checksum += bytes;
        }
        t = (now() - t0) / (double)iters;
        if (t < best_placed) best_placed = t;
    }
    kt_placement_free(&a);
    kt_placement_free(&b);
    *per_call = best;
    *per_call_placed = best_placed;
}

/* --------------------------------------------------------- (b) all pairs */

static void time_all_pairs(int rank, const int64_t *shape, const kt_factors *f,
                           size_t *npairs, double *total, double *total_placed,
                           int64_t *sum) {
    kt_tiling *t;
    kt_placement *p;
    kt_error err;
    size_t n, i, j;
    double best = 1e30, best_placed = 1e30, t0, el;
    int rep;
    unsigned flags = KT_ENUM_DISTINCT | KT_ENUM_REPLICATE;

    if (kt_tiling_enumerate(rank, shape, f, flags, NULL, 0, &n, &err) != KT_OK)
        die(&err);
    t = (kt_tiling *)malloc(n * sizeof *t);
    p = (kt_placement *)malloc(n * sizeof *p);
    if (!t || !p) {
        fprintf(stderr, "bench_cost: out of memory\n");
        exit(1);
    }
    if (kt_tiling_enumerate(rank, shape, f, flags, t, n, &n, &err) != KT_OK)
        die(&err);
    for (i = 0; i < n; i++)
        if (kt_placement_from_tiling(&p[i], &t[i], rank, shape, f, &err)
            != KT_OK)
            die(&err);
    for (rep = 0; rep < REPS; rep++) {
        int64_t s = 0, bytes;
        t0 = now();
        for (i = 0; i < n; i++)
            for (j = 0; j < n; j++) {
                if (kt_tiling_conversion_cost(rank, shape, 4, f, &t[i], &t[j],
                                              &bytes, NULL, &err) != KT_OK)
                    die(&err);
                s += bytes;
            }
        el = now() - t0;
        if (el < best) best = el;
        *sum = s;
        s = 0;
        t0 = now();
        for (i = 0; i < n; i++)
            for (j = 0; j < n; j++) {
                if (kt_conversion_cost(rank, shape, 4, &p[i], &p[j], &bytes,
                                       NULL, &err) != KT_OK)
                    die(&err);
                s += bytes;
            }
        el = now() - t0;
        if (el < best_placed) best_placed = el;
        if (s != *sum) {
            fprintf(stderr, "bench_cost: placements disagree with tilings\n");
            exit(1);
        }
        checksum += s;
    }
    for (i = 0; i < n; i++) kt_placement_free(&p[i]);
    free(p);
    free(t);
    *npairs = n * n;
    *total = best;
    *total_placed = best_placed;
}

int main(void) {
    static const pair_case cases[] = {
        {"S0.S1.S2.S3", "S3.R.S1.S0"},
        {"S0.S1.S2.S3", "S1.S0.S3.S2"},
        {"S0.S1.S2.S3", "R.R.R.R"},
        {"P.P.S0.S1", "S1.R.S2.S3"},
        {"P.P.P.P", "R.R.R.R"},
    };
    const int64_t uneven[4] = {13, 11, 7, 9}, even[4] = {64, 32, 16, 8};
    kt_factors f16, f8;
    kt_error err;
    size_t c, npairs;
    double per_call, per_call_placed, total, total_placed;
    int64_t sum;
    char name[96];

    if (kt_factors_parse("2,2,2,2", &f16, &err) != KT_OK) die(&err);
    if (kt_factors_parse("2,2,2", &f8, &err) != KT_OK) die(&err);

    printf("%-50s %12s %10s  %s\n", "case", "time", "target", "result");
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        time_pair(4, uneven, &f16, &cases[c], &per_call, &per_call_placed);
        snprintf(name, sizeof name, "13x11x7x9/2,2,2,2 %s -> %s",
                 cases[c].from, cases[c].to);
        row(name, per_call, 20, 1);
        row("  placements precomputed", per_call_placed, 0, 1);
    }
    time_all_pairs(4, even, &f8, &npairs, &total, &total_placed, &sum);
    snprintf(name, sizeof name, "64x32x16x8/2,2,2 all %lu pairs (S,R distinct)",
             (unsigned long)npairs);
    row(name, total, 50, 0);
    row("  placements precomputed", total_placed, 0, 0);
    printf("(checksum %lld, all-pairs bytes %lld)\n", (long long)checksum,
           (long long)sum);
    return 0;
}
