/* test_cpu.c -- the CPU backend: the serial executor against independent
   computations written here, and the partitioned executor against the
   serial one (DESIGN.md "Tests": the CPU backend is the oracle).

   - serial: a matrix product, a padded strided convolution, max pooling,
     a broadcast and softmax cross-entropy computed by hand in this file;
     the fast path (matrix products) equal to the generic evaluator;
   - every element-wise function and operator, sum/max/min/prod, strided
     and divided reads, multi-term and negated products, a padded strided
     convolution and its input gradient (tightened reductions), a 2-D
     one summed by offsets, an element-wise op on a sub-box written by
     spans into a larger buffer, and kt_cpu_gemm past every block edge,
     all on small values by hand;
   - kt_cpu_fill_inputs' values, and the report's counts and first
     mismatches, by hand; a NaN kept when partial max/min are combined;
   - partitioned == serial and bytes moved == kt_plan_eval's bytes for
     every zoo model at small sizes (MLP, LSTM, transformer, AlexNet,
     VGG-16, Wide ResNet-26; Wide ResNet-50 with the DP plan) on 1, 2, 3,
     4, 6 and 8 devices, with the DP plan and every baseline that applies
     (brute force where its plan space is small enough), on random plans
     (a random tiling per tensor, a random strategy per op), on model
     files with padding, pooling, broadcasting, division, max/min
     reductions and uneven tiles;
   - a program with one transfer dropped is caught (values and bytes);
   - on every random plan, lowered alone and on two nodes, each device
     runs its transfers in the order that fixes its sums bit for bit (op,
     part, stage, program order: check_pull_order), end to end;
   - a staged program by hand (stages 0 to 3: a relayed fetch, a
     two-level reduction tree, a relayed broadcast) == serial, its bytes
     moved pair by pair; a relay of what its sender never received, at
     stage 0 or its part's first stage, on a reduction, and stages out of
     range are refused;
   - bad arguments are refused with a message, never read out of bounds:
     a plan, state, program or result of another graph, an op that does
     not exist, every way a program can be malformed, a swap plan's pool
     with a negative object count or sizes that overflow.
   Under valgrind (KT_WRAP set) fewer device counts and models run. */
#include <stddef.h>
#include <stdint.h>

/* Every transfer each receiver runs, in the order it runs them, while a
   test arms pull_log (check_pull_order): device d's go to
   pull_log[pull_first[d] ..], pull_len[d] of them.  A device's slots are
   written by its worker alone. */
static int *pull_log = NULL, *pull_first = NULL, *pull_len = NULL;
static int pull_overflow = 0;
static void pull_record(int64_t dev, int x) {
    if (!pull_log) return;
    if (pull_first[dev] + pull_len[dev] < pull_first[dev + 1])
        pull_log[pull_first[dev] + pull_len[dev]++] = x;
    else
        pull_overflow = 1; /* one device's worker alone meets this */
}
#define KT__PULLED(dev, x) pull_record(dev, x)

#define KT_IMPLEMENTATION
#include "../backend_cpu.h"
#include "kt_test.h"
#include "kt_testlib.h"
#include "kt_test_pairs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int under_valgrind(void) { return getenv("KT_WRAP") != NULL; }

/* ThreadSanitizer remaps the shadow of every large block a program
   frees: thousands of devices' buffers, allocated one after another,
   split its mappings past the kernel's count (vm.max_map_count, 65530),
   and the run dies out of memory.  The runs of thousands of devices are
   left out under it. */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

/* ------------------------------------------------ serial, by hand */

static kt_graph *training(const char *what, const char *src) {
    kt_graph *g = parse(what, src);
    kt_error err;
    if (g && kt_graph_loss(g) >= 0 &&
        kt_graph_autodiff(g, NULL, &err) != KT_OK) {
        CHECKF(0, "%s: autodiff: %s", what, err.message);
        kt_graph_destroy(g);
        return NULL;
    }
    return g;
}

static double *val(const kt_graph *g, kt_cpu_state *s, const char *name) {
    int t = kt_graph_find_tensor(g, name);
    CHECKF(t >= 0, "no tensor %s", name);
    return t >= 0 ? s->val[t] : NULL;
}

static int close_to(double got, double want) {
    return fabs(got - want) <= 1e-12 + 1e-10 * fabs(want);
}

/* Runs the model text serially (fast paths and reference evaluator) and
   returns the state of the fast run; checks both agree exactly up to
   summation order. */
static int run_both(const char *what, kt_graph *g, kt_cpu_state *s) {
    kt_cpu_state r;
    kt_cpu_options ref;
    kt_error err;
    int t, ok = 1;
    int64_t i;
    memset(&ref, 0, sizeof ref);
    ref.reference_only = 1;
    if (kt_cpu_state_init(s, g, &err) != KT_OK ||
        kt_cpu_state_init(&r, g, &err) != KT_OK) {
        CHECKF(0, "%s: %s", what, err.message);
        return 0;
    }
    kt_cpu_fill_inputs(g, s, 7);
    kt_cpu_fill_inputs(g, &r, 7);
    CHECKF(kt_cpu_run_serial(g, s, NULL, &err) == KT_OK, "%s: %s", what,
           err.message);
    CHECKF(kt_cpu_run_serial(g, &r, &ref, &err) == KT_OK, "%s: %s", what,
           err.message);
    for (t = 0; t < s->ntensors; t++)
        for (i = 0; i < s->numel[t]; i++)
            if (!(fabs(s->val[t][i] - r.val[t][i]) <=
                  1e-12 + 1e-9 * fabs(r.val[t][i]))) {
                if (ok)
                    printf("%s: %s[%lld] fast %.17g reference %.17g\n", what,
                           kt_graph_tensor(g, t)->name, (long long)i,
                           s->val[t][i], r.val[t][i]);
                ok = 0;
            }
    CHECKF(ok, "%s: the fast paths differ from the reference evaluator", what);
    kt_cpu_state_free(&r);
    return 1;
}

static void test_serial_matmul(void) {
    kt_graph *g = parse("matmul", "input x[5,7]\nweight W[7,3]\ninput b[3]\n"
                                  "y[i,k] = sum(j) x[i,j] * W[j,k]\n"
                                  "z[i,k] = relu(y[i,k] + b[k])\n");
    kt_cpu_state s;
    double *x, *w, *y, *z, *b;
    int i, j, k, bad = 0;
    if (!g) return;
    if (!run_both("matmul", g, &s)) goto done;
    x = val(g, &s, "x"), w = val(g, &s, "W"), y = val(g, &s, "y");
    z = val(g, &s, "z"), b = val(g, &s, "b");
    for (i = 0; i < 5; i++)
        for (k = 0; k < 3; k++) {
            double acc = 0, r;
            for (j = 0; j < 7; j++) acc += x[i * 7 + j] * w[j * 3 + k];
            r = acc + b[k] > 0 ? acc + b[k] : 0;
            if (!close_to(y[i * 3 + k], acc) || !close_to(z[i * 3 + k], r)) bad++;
        }
    CHECKF(bad == 0, "matmul: %d elements differ from the hand computation", bad);
    /* the inputs are never zero, and no output stayed poisoned */
    for (i = 0; i < 35; i++) if (x[i] == 0) bad++;
    for (i = 0; i < 15; i++) if (y[i] != y[i]) bad++;
    CHECK(bad == 0);
    kt_cpu_state_free(&s);
done:
    kt_graph_destroy(g);
}

/* A 3x3 convolution with stride 2 and one element of zero padding, then
   2x2 max pooling, computed by hand. */
static void test_serial_conv_pool(void) {
    kt_graph *g = parse("conv", "input x[2,3,9,9]\nweight f[4,3,3,3]\n"
                        "o[n,co,h:5,w:5] = sum(ci,kh,kw) pad(x[n,ci,h*2+kh-1,"
                        "w*2+kw-1]) * f[co,ci,kh,kw]\n"
                        "m[n,c,h:3,w:3] = max(dh:2,dw:2) pad(o[n,c,h*2+dh,w*2+dw])\n");
    kt_cpu_state s;
    double *x, *f, *o, *m;
    int n, co, h, w, ci, kh, kw, bad = 0, c;
    if (!g) return;
    if (!run_both("conv", g, &s)) goto done;
    x = val(g, &s, "x"), f = val(g, &s, "f"), o = val(g, &s, "o");
    m = val(g, &s, "m");
    for (n = 0; n < 2; n++)
        for (co = 0; co < 4; co++)
            for (h = 0; h < 5; h++)
                for (w = 0; w < 5; w++) {
                    double acc = 0;
                    for (ci = 0; ci < 3; ci++)
                        for (kh = 0; kh < 3; kh++)
                            for (kw = 0; kw < 3; kw++) {
                                int y = h * 2 + kh - 1, xx = w * 2 + kw - 1;
                                if (y < 0 || y >= 9 || xx < 0 || xx >= 9) continue;
                                acc += x[((n * 3 + ci) * 9 + y) * 9 + xx] *
                                       f[((co * 3 + ci) * 3 + kh) * 3 + kw];
                            }
                    if (!close_to(o[((n * 4 + co) * 5 + h) * 5 + w], acc)) bad++;
                }
    CHECKF(bad == 0, "conv: %d elements differ", bad);
    /* pooling 5x5 -> 3x3 windows, the last one half outside (padded: 0) */
    bad = 0;
    for (n = 0; n < 2; n++)
        for (c = 0; c < 4; c++)
            for (h = 0; h < 3; h++)
                for (w = 0; w < 3; w++) {
                    double best = -INFINITY;
                    int dh, dw;
                    for (dh = 0; dh < 2; dh++)
                        for (dw = 0; dw < 2; dw++) {
                            int y = h * 2 + dh, xx = w * 2 + dw;
                            double v = (y < 5 && xx < 5)
                                           ? o[((n * 4 + c) * 5 + y) * 5 + xx]
                                           : 0;
                            if (v > best) best = v;
                        }
                    if (m[((n * 4 + c) * 3 + h) * 3 + w] != best) bad++;
                }
    CHECKF(bad == 0, "max pooling: %d elements differ", bad);
    kt_cpu_state_free(&s);
done:
    kt_graph_destroy(g);
}

static void test_serial_softmax_xent(void) {
    kt_graph *g = training("xent", "input x[3,5]\nweight W[5,4]\n"
                           "input labels[3,4]\n"
                           "z[n,k] = sum(j) x[n,j] * W[j,k]\n"
                           "xent[n] = opaque(softmax_xent, z[n,:], labels[n,:])\n"
                           "loss xent\n");
    kt_cpu_state s;
    double *z, *l, *xe, *dz, *dx;
    int n, c, bad = 0;
    if (!g) return;
    if (!run_both("xent", g, &s)) goto done;
    z = val(g, &s, "z"), l = val(g, &s, "labels"), xe = val(g, &s, "xent");
    dz = val(g, &s, "dz"), dx = val(g, &s, "dxent");
    for (n = 0; n < 3 && z && dz && dx; n++) {
        double mx = z[n * 4], se = 0, want = 0, sl = 0;
        for (c = 1; c < 4; c++) if (z[n * 4 + c] > mx) mx = z[n * 4 + c];
        for (c = 0; c < 4; c++) se += exp(z[n * 4 + c] - mx);
        for (c = 0; c < 4; c++) {
            double logp = z[n * 4 + c] - mx - log(se);
            want -= l[n * 4 + c] * logp;
            sl += l[n * 4 + c];
        }
        if (!close_to(xe[n], want)) bad++;
        for (c = 0; c < 4; c++) {
            double p = exp(z[n * 4 + c] - mx) / se;
            if (!close_to(dz[n * 4 + c], dx[n] * (p * sl - l[n * 4 + c]))) bad++;
        }
    }
    CHECKF(bad == 0, "softmax_xent: %d values differ", bad);
    kt_cpu_state_free(&s);
done:
    kt_graph_destroy(g);
}

static void test_errors(void) {
    kt_graph *g = parse("cholesky", "input a[2,3,3]\n"
                        "c[b,i,j] = opaque(cholesky, a[b,:,:])\n");
    kt_error err;
    kt_cpu_state s;
    if (!g) return;
    CHECK(kt_cpu_check_graph(g, &err) == KT_ERR_INVALID);
    CHECKF(strstr(err.message, "cholesky") && strstr(err.message, "line 2"),
           "message '%s'", err.message);
    CHECK(kt_cpu_state_init(&s, g, &err) == KT_OK);
    CHECK(kt_cpu_run_serial(g, &s, NULL, &err) == KT_ERR_INVALID);
    kt_cpu_state_free(&s);
    kt_graph_destroy(g);
}

/* Work the reference evaluator refuses before starting it: an op of more
   than KT_CPU_MAX_OP_POINTS index points (a reduction over 2^46 x 2^46
   terms would run for ages; it hung `ktile verify`), and a partitioned
   run asking for more than KT_CPU_MAX_THREADS worker threads. */
static void test_refused_work(void) {
    kt_graph *g = parse("huge sum", "input x[4,4]\n"
                        "y[i] = sum(j:70368744177664,k:70368744177664) "
                        "x[i,0]\n");
    kt_graph *h;
    kt_cpu_verify_options vo;
    kt_cpu_report rep;
    kt_factors f;
    kt_plan p;
    kt_error err;
    kt_cpu_state s;
    char text[64];
    if (!g) return;
    CHECKF(kt_cpu_check_graph(g, &err) == KT_ERR_LIMIT &&
               strstr(err.message, "op y") &&
               strstr(err.message, "1.98e+28 index points") &&
               err.line == 2,
           "%s", err.message);
    CHECK(kt_cpu_state_init(&s, g, &err) == KT_OK);
    CHECK(kt_cpu_run_serial(g, &s, NULL, &err) == KT_ERR_LIMIT);
    kt_cpu_state_free(&s);
    kt_graph_destroy(g);
    /* the limit itself passes: 1e6 x 1e7 points */
    g = parse("at the limit", "input x[1000000]\n"
              "y[i] = sum(j:10000000) x[i]\n");
    if (g) CHECKF(kt_cpu_check_graph(g, &err) == KT_OK, "%s", err.message);
    kt_graph_destroy(g);
    /* more worker threads than KT_CPU_MAX_THREADS, or fewer than none,
       are refused; more devices than that run, sharing the workers (a
       thread per device stopped at 4096 devices before) */
    snprintf(text, sizeof text, "input x[%d]\ny[i] = x[i] * x[i]\n",
             2 * KT_CPU_MAX_THREADS);
    h = parse("many devices", text);
    if (!h) return;
    kt_cpu_verify_defaults(&vo);
    CHECK(kt_factors_default(2 * KT_CPU_MAX_THREADS, &f, &err) == KT_OK);
    CHECK(kt_plan_init(&p, h, &f, &err) == KT_OK);
    /* (refused before the serial run: the report's device count, set
       after the checks, is still 0) */
    vo.run.threads = KT_CPU_MAX_THREADS + 1;
    CHECKF(kt_cpu_verify(h, &p, &vo, &rep, &err) == KT_ERR_LIMIT &&
               strstr(err.message, "4097 worker threads") &&
               strstr(err.message, "KT_CPU_MAX_THREADS") && rep.ndev == 0,
           "%s", err.message);
    vo.run.threads = -1;
    CHECKF(kt_cpu_verify(h, &p, &vo, &rep, &err) == KT_ERR_INVALID &&
               strstr(err.message, "-1 worker threads") && rep.ndev == 0,
           "%s", err.message);
    vo.run.threads = 0;
    if (!UNDER_TSAN)
        CHECKF(kt_cpu_verify(h, &p, &vo, &rep, &err) == KT_OK && rep.ok &&
                   rep.bytes_ok,
               "%s", err.message);
    kt_plan_free(&p);
    kt_graph_destroy(h);
}

/* ------------------------------------------------ kernels, by hand */

/* Overwrites leaf `name` of s with the n values v. */
static int set_values(const kt_graph *g, kt_cpu_state *s, const char *name,
                      const double *v, int64_t n) {
    int t = kt_graph_find_tensor(g, name);
    CHECKF(t >= 0 && s->numel[t] == n, "tensor %s: not %lld values", name,
           (long long)n);
    if (t < 0 || s->numel[t] != n) return 0;
    memcpy(s->val[t], v, sizeof *v * (size_t)n);
    return 1;
}

/* A state of g with leaf `in` set to v (the other leaves random) run
   serially: fast paths (reference 0) or the reference evaluator alone. */
static int run_values(const char *what, const kt_graph *g, const char *in,
                      const double *v, int64_t n, int reference,
                      kt_cpu_state *s) {
    kt_cpu_options o;
    kt_error err;
    memset(&o, 0, sizeof o);
    o.reference_only = reference;
    if (kt_cpu_state_init(s, g, &err) != KT_OK) {
        CHECKF(0, "%s: %s", what, err.message);
        return 0;
    }
    kt_cpu_fill_inputs(g, s, 1);
    if (!set_values(g, s, in, v, n) ||
        kt_cpu_run_serial(g, s, &o, &err) != KT_OK) {
        CHECKF(0, "%s: %s", what, err.message);
        kt_cpu_state_free(s);
        return 0;
    }
    return 1;
}

/* Tensor `name` of s equals want[0..n) (close_to; NaN where want is). */
static void expect_values(const char *what, const kt_graph *g,
                          kt_cpu_state *s, const char *name,
                          const double *want, int64_t n) {
    const double *got = val(g, s, name);
    int64_t i;
    for (i = 0; got && i < n; i++) {
        int ok = want[i] != want[i] ? got[i] != got[i]
                                    : got[i] == want[i] ||
                                          close_to(got[i], want[i]);
        CHECKF(ok, "%s: %s[%lld] = %.17g, want %.17g", what, name,
               (long long)i, got[i], want[i]);
    }
}

/* Every element-wise function and operator at x = -2, 0, 1/4, 4 (the
   functions autodiff's derivatives are made of: step is relu's). */
static void test_elementwise(void) {
    static const double x[4] = {-2, 0, 0.25, 4};
    const double l2 = log(2.0);
    const double neg[4] = {2, 0, -0.25, -4}, relu[4] = {0, 0, 0.25, 4},
                 step[4] = {0, 0, 1, 1}, /* step(0) = 0 */
                 sig[4] = {1 / (1 + exp(2.0)), 0.5, 1 / (1 + exp(-0.25)),
                           1 / (1 + exp(-4.0))},
                 th[4] = {tanh(-2.0), 0, tanh(0.25), tanh(4.0)},
                 ex[4] = {exp(-2.0), 1, exp(0.25), exp(4.0)},
                 lg[4] = {NAN, -INFINITY, -2 * l2, 2 * l2},
                 sq[4] = {NAN, 0, 0.5, 2},
                 sub[4] = {-3, -1, -0.75, 3},  /* x - 1     */
                 rsub[4] = {3, 1, 0.75, -3},   /* 1 - x     */
                 dv[4] = {-0.5, 0, 0.0625, 1}, /* x / 4     */
                 lin[4] = {-5, 1, 1.75, 13};   /* x * 3 + 1 */
    kt_graph *g = parse("element-wise", "input x[4]\n"
                        "n[i] = neg(x[i])\nr[i] = relu(x[i])\n"
                        "st[i] = step(x[i])\nsg[i] = sigmoid(x[i])\n"
                        "th[i] = tanh(x[i])\ne[i] = exp(x[i])\n"
                        "lg[i] = log(x[i])\nsq[i] = sqrt(x[i])\n"
                        "d[i] = x[i] - 1\nrd[i] = 1 - x[i]\n"
                        "q[i] = x[i] / 4\nm[i] = x[i] * 3 + 1\n");
    kt_cpu_state s;
    if (!g) return;
    if (run_values("element-wise", g, "x", x, 4, 0, &s)) {
        expect_values("element-wise", g, &s, "n", neg, 4);
        expect_values("element-wise", g, &s, "r", relu, 4);
        expect_values("element-wise", g, &s, "st", step, 4);
        expect_values("element-wise", g, &s, "sg", sig, 4);
        expect_values("element-wise", g, &s, "th", th, 4);
        expect_values("element-wise", g, &s, "e", ex, 4);
        expect_values("element-wise", g, &s, "lg", lg, 4);
        expect_values("element-wise", g, &s, "sq", sq, 4);
        expect_values("element-wise", g, &s, "d", sub, 4);
        expect_values("element-wise", g, &s, "rd", rsub, 4);
        expect_values("element-wise", g, &s, "q", dv, 4);
        expect_values("element-wise", g, &s, "m", lin, 4);
        kt_cpu_state_free(&s);
    }
    kt_graph_destroy(g);
}

/* Reductions and strided reads of z = [[1, -2, 3], [-4, 5, -6]], with the
   fast paths and with the reference evaluator alone. */
static void test_reductions(void) {
    static const double z[6] = {1, -2, 3, -4, 5, -6};
    static const double sum[2] = {2, -5}, mx[2] = {3, 5}, mn[2] = {-2, -6},
                        prod[2] = {-6, 120},
                        col[3] = {-3, 3, -3},  /* sum over rows      */
                        dot[2] = {14, 77},     /* 1+4+9, 16+25+36    */
                        twice[2] = {28, 154},  /* dot + dot          */
                        halfdot[2] = {7, 38.5},/* dot - dot / 2      */
                        negdot[2] = {-14, -77},
                        mxlow[2] = {-7, -5},   /* max of z - 10 < 0  */
                        mnhigh[2] = {8, 4},    /* min of z + 10 > 0  */
                        tr[6] = {1, -4, -2, 5, 3, -6},
                        even[4] = {1, 3, -4, -6}, /* z[i, 2k]        */
                        half[12] = {1, 1, -2, -2, 3, 3, -4, -4, 5, 5, -6, -6},
                        /* z[i, k/2] * (row sum 2, resp. -5) */
                        halfsum[12] = {2, 2, -4, -4, 6, 6,
                                       20, 20, -25, -25, 30, 30};
    kt_graph *g = parse("reductions", "input z[2,3]\n"
                        "s[i] = sum(k) z[i,k]\nmx[i] = max(k) z[i,k]\n"
                        "mn[i] = min(k) z[i,k]\np[i] = prod(k) z[i,k]\n"
                        "c[k] = sum(i) z[i,k]\n"
                        "dt[i] = sum(k) z[i,k] * z[i,k]\n"
                        "tw[i] = sum(k) z[i,k] * z[i,k] + z[i,k] * z[i,k]\n"
                        "df[i] = sum(k) z[i,k] * z[i,k] - z[i,k] * z[i,k] * 0.5\n"
                        "ng[i] = sum(k) neg(z[i,k]) * z[i,k]\n"
                        "ml[i] = max(k) z[i,k] - 10\n"
                        "mh[i] = min(k) z[i,k] + 10\n"
                        "tr[k,i] = z[i,k]\nev[i,k:2] = z[i,k*2]\n"
                        "hf[i,k:6] = z[i,k/2]\n"
                        "hs[i,k:6] = sum(j) z[i,k/2] * z[i,j]\n");
    kt_cpu_state s;
    int reference;
    if (!g) return;
    for (reference = 0; reference < 2; reference++) {
        const char *what = reference ? "reductions (reference)" : "reductions";
        if (!run_values(what, g, "z", z, 6, reference, &s)) continue;
        expect_values(what, g, &s, "s", sum, 2);
        expect_values(what, g, &s, "mx", mx, 2);
        expect_values(what, g, &s, "mn", mn, 2);
        expect_values(what, g, &s, "p", prod, 2);
        expect_values(what, g, &s, "c", col, 3);
        expect_values(what, g, &s, "dt", dot, 2);
        expect_values(what, g, &s, "tw", twice, 2);
        expect_values(what, g, &s, "df", halfdot, 2);
        expect_values(what, g, &s, "ng", negdot, 2);
        expect_values(what, g, &s, "ml", mxlow, 2);
        expect_values(what, g, &s, "mh", mnhigh, 2);
        expect_values(what, g, &s, "tr", tr, 6);
        expect_values(what, g, &s, "ev", even, 4);
        expect_values(what, g, &s, "hf", half, 12);
        expect_values(what, g, &s, "hs", halfsum, 12);
        kt_cpu_state_free(&s);
    }
    kt_graph_destroy(g);
}

/* A strided, padded 1-D convolution and the input gradient autodiff writes
   for it (the filter read at h - 2j + 1), with the fast paths and the
   reference evaluator alone.  x = 1..5, f = 1, 10, 100, dy = 1..8:
   o[h] = sum_k pad(x[2h+k-1]) f[k]:
     o[0] = 0*1 + 1*10 + 2*100 = 210, o[1] = 2 + 30 + 400 = 432,
     o[2] = 4 + 50 + 0 (x[5] padding) = 54;
   dx[h] = sum_j pad(f[h-2j+1]) dy[j]: h even only k = 1 (j = h/2):
   10 * (h/2 + 1); h odd k = 0 (j = (h+1)/2, while < 8) and k = 2
   (j = (h-1)/2): dy[(h+1)/2] + 100 * dy[(h-1)/2].  dr reads the reversed
   filter r = 100, 10, 1 at 2j - h + 1 (a positive coefficient): r[2j-h+1]
   = f[h-2j+1], so dr = dx.  ob[c,h] = sum_k f2[c,k] pad(x[2h+k-1+c]), f2's
   rows both f, makes c a batch variable (both reads move with it) whose
   points see padding in different places: ob[0,.] = o, and
   ob[1,h] = sum_k f[k] pad(x[2h+k]): 1 + 20 + 300 = 321, 3 + 40 + 500 =
   543, 5 + 0 + 0 = 5. */
static void test_conv_edges(void) {
    static const double x[5] = {1, 2, 3, 4, 5}, o[3] = {210, 432, 54},
                        ob[6] = {210, 432, 54, 321, 543, 5};
    static const double f[3] = {1, 10, 100}, r[3] = {100, 10, 1},
                        f2[6] = {1, 10, 100, 1, 10, 100},
                        dy[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    kt_graph *g = parse("conv edges", "input x[5]\ninput f[3]\ninput r[3]\n"
                        "input dy[8]\ninput f2[2,3]\n"
                        "o[h:3] = sum(k) pad(x[h*2+k-1]) * f[k]\n"
                        "dx[h:16] = sum(j) pad(f[h-2*j+1]) * dy[j]\n"
                        "dr[h:16] = sum(j) pad(r[2*j-h+1]) * dy[j]\n"
                        "ob[c:2,h:3] = sum(k) f2[c,k] * pad(x[h*2+k-1+c])\n");
    double dx[16];
    kt_cpu_state s;
    int reference, h;
    if (!g) return;
    for (h = 0; h < 16; h++)
        dx[h] = h % 2 == 0 ? 10.0 * (h / 2 + 1)
                           : ((h + 1) / 2 < 8 ? (h + 1) / 2 + 1 : 0) +
                                 100.0 * ((h - 1) / 2 + 1);
    for (reference = 0; reference < 2; reference++) {
        const char *what = reference ? "conv edges (reference)" : "conv edges";
        if (!run_values(what, g, "x", x, 5, reference, &s)) continue;
        if (set_values(g, &s, "f", f, 3) && set_values(g, &s, "r", r, 3) &&
            set_values(g, &s, "dy", dy, 8) && set_values(g, &s, "f2", f2, 6)) {
            kt_cpu_options op;
            kt_error err;
            memset(&op, 0, sizeof op);
            op.reference_only = reference;
            CHECK(kt_cpu_run_serial(g, &s, &op, &err) == KT_OK);
            expect_values(what, g, &s, "o", o, 3);
            expect_values(what, g, &s, "dx", dx, 16);
            expect_values(what, g, &s, "dr", dx, 16);
            expect_values(what, g, &s, "ob", ob, 6);
        }
        kt_cpu_state_free(&s);
    }
    kt_graph_destroy(g);
}

/* The input gradients of a 2-D convolution with stride 2 and 3x3
   filters, as autodiff writes them: the filter read at h - 2i + 1, a
   reduction over (co, i, j) that kt__tighten narrows to one or two
   points of i and j, summed by offsets (kt__dot_sum: the inner loop along
   the last variable with more than one point).  dz also reads dy padded
   at i + j - 2, which moves with two reduction variables and so is not
   narrowed: where some point leaves dy, the sum must take the generic
   loop, which reads zero there.  Checked bit for bit against a loop
   written here that adds the evaluator's terms in its order (co, i, j;
   the skipped ones are +-0), on the fast paths' run; run_both holds the
   reference evaluator to it within its tolerance; test_model_files runs
   such a gradient on devices. */
static void test_transposed_conv(void) {
    kt_graph *g = parse("transposed conv", "input dy[2,4,5,5]\n"
                        "input f[4,3,3,3]\n"
                        "dx[n,ci,h:10,w:10] = sum(co,i,j) "
                        "pad(f[co,ci,h-2*i+1,w-2*j+1]) * dy[n,co,i,j]\n"
                        "dz[n,ci,h:10,w:10] = sum(co,i:5,j:5) "
                        "pad(f[co,ci,h-2*i+1,w-2*j+1]) * "
                        "pad(dy[n,co,i,i+j-2])\n");
    kt_cpu_state s;
    double *dy, *f, *dx, *dz;
    int n, ci, h, w, co, i, j, bad = 0;
    if (!g) return;
    if (!run_both("transposed conv", g, &s)) goto done;
    dy = val(g, &s, "dy"), f = val(g, &s, "f");
    dx = val(g, &s, "dx"), dz = val(g, &s, "dz");
    for (n = 0; n < 2 && dy && f && dx && dz; n++)
        for (ci = 0; ci < 3; ci++)
            for (h = 0; h < 10; h++)
                for (w = 0; w < 10; w++) {
                    double sx = 0, sz = 0;
                    for (co = 0; co < 4; co++)
                        for (i = 0; i < 5; i++)
                            for (j = 0; j < 5; j++) {
                                int kh = h - 2 * i + 1, kw = w - 2 * j + 1,
                                    k = i + j - 2;
                                double fv, term;
                                if (kh < 0 || kh > 2 || kw < 0 || kw > 2)
                                    continue;
                                fv = f[((co * 3 + ci) * 3 + kh) * 3 + kw];
                                /* product, then sum: never fused */
                                term = fv * dy[((n * 4 + co) * 5 + i) * 5 + j];
                                sx += term;
                                if (k >= 0 && k < 5) {
                                    term = fv * dy[((n * 4 + co) * 5 + i) * 5 + k];
                                    sz += term;
                                }
                            }
                    /* the evaluator's terms in its order (the others are
                       +-0): equal to the last bit */
                    if (dx[((n * 3 + ci) * 10 + h) * 10 + w] != sx ||
                        dz[((n * 3 + ci) * 10 + h) * 10 + w] != sz)
                        bad++;
                }
    CHECKF(bad == 0, "transposed conv: %d elements differ from the loop "
           "here in the evaluator's order", bad);
    kt_cpu_state_free(&s);
done:
    kt_graph_destroy(g);
}

/* An element-wise op over part of its index space, as a device runs it
   (kt__run_box on a box, white box): y[i,j,k] = x[i,j,k] * 2 + 1 over
   i in [1,3), j in [0,2), k in [2,3).  x's buffer holds exactly that box,
   so its four reads lie back to back (one run for kt__span_cut); y's is
   the whole 4x3x5 tensor, where they do not: j steps by 5, i by 15 (not
   2 x 5), and k, of one point, does not move.  Every element of the box must be
   2x + 1 and every other one untouched (NaN), with the spans and with
   the reference evaluator point by point. */
static void test_elementwise_box(void) {
    kt_graph *g = parse("element-wise box", "input x[4,3,5]\n"
                        "y[i,j,k] = x[i,j,k] * 2 + 1\n");
    int reference;
    if (!g) return;
    for (reference = 0; reference < 2; reference++) {
        const kt_op *op = kt_graph_op(g, 0);
        kt__opctx *cx = (kt__opctx *)calloc(1, sizeof *cx);
        kt_real xs[4], ys[60];
        kt__view in[1], out;
        kt_box xb, yb;
        kt_cpu_options opt;
        kt_error err;
        int i, j, k, bad = 0, n = 0;
        static const int64_t shape[3] = {4, 3, 5};
        if (!cx) break;
        memset(&opt, 0, sizeof opt);
        opt.reference_only = reference;
        memset(&xb, 0, sizeof xb);
        xb.r[0].lo = 1, xb.r[0].hi = 3, xb.r[1].lo = 0, xb.r[1].hi = 2;
        xb.r[2].lo = 2, xb.r[2].hi = 3;
        for (i = 0; i < 4; i++) xs[i] = (kt_real)(0.5 + i);
        for (i = 0; i < 60; i++) ys[i] = (kt_real)NAN;
        kt__full_box(3, shape, &yb);
        kt__view_set(&in[0], xs, 3, &xb);
        kt__view_set(&out, ys, 3, &yb);
        cx->g = g;
        cx->op = op;
        cx->in = in;
        cx->out = &out;
        for (i = 0; i < 3; i++) cx->box[i] = xb.r[i];
        CHECK(kt__run_box(cx, &opt, &err) == KT_OK);
        for (i = 0; i < 4; i++)
            for (j = 0; j < 3; j++)
                for (k = 0; k < 5; k++) {
                    double y = ys[(i * 3 + j) * 5 + k];
                    if (i >= 1 && i < 3 && j < 2 && k == 2) {
                        if (y != 2 * xs[n++] + 1) bad++;
                    } else if (y == y) {
                        bad++;
                    }
                }
        CHECKF(bad == 0, "element-wise box%s: %d elements wrong",
               reference ? " (reference)" : "", bad);
        free(cx);
    }
    kt_graph_destroy(g);
}

/* kt_cpu_gemm past every block edge: m = 5 (a partial block of 4 rows),
   n = 515 (two column blocks of 512, the last a partial panel), k = 259
   (two blocks of 256 along the shared dimension).  A[i][p] = p + i,
   B[p][j] = p + j + 1, C = 1 beforehand (it adds):
   C[i][j] = 1 + sum_p (p+i)(p+j+1)
           = 1 + S2 + (i+j+1) S1 + i (j+1) k,
   S1 = sum p = k(k-1)/2, S2 = sum p^2 = (k-1)k(2k-1)/6: integers, exact
   in double. */
static void test_gemm_edges(void) {
    enum { M = 5, N = 515, K = 259 };
    kt_acc *a = (kt_acc *)malloc(sizeof(kt_acc) * M * K);
    kt_acc *b = (kt_acc *)malloc(sizeof(kt_acc) * K * N);
    kt_acc *c = (kt_acc *)malloc(sizeof(kt_acc) * M * N);
    const double s1 = (double)K * (K - 1) / 2,
                 s2 = (double)(K - 1) * K * (2 * K - 1) / 6;
    int i, j, p, bad = 0;
    if (a && b && c) {
        for (i = 0; i < M; i++)
            for (p = 0; p < K; p++) a[i * K + p] = (kt_acc)(p + i);
        for (p = 0; p < K; p++)
            for (j = 0; j < N; j++) b[p * N + j] = (kt_acc)(p + j + 1);
        for (i = 0; i < M * N; i++) c[i] = 1;
        kt_cpu_gemm(M, N, K, a, b, c);
        for (i = 0; i < M; i++)
            for (j = 0; j < N; j++) {
                double want = 1 + s2 + (i + j + 1) * s1 + (double)i * (j + 1) * K;
                /* exact in double (every partial sum below 2^53) */
                if (fabs((double)c[i * N + j] - want) >
                    (sizeof(kt_acc) >= 8 ? 0 : 1e-6 * want)) {
                    if (!bad)
                        printf("gemm: C[%d][%d] = %.17g, want %.17g\n", i, j,
                               (double)c[i * N + j], want);
                    bad++;
                }
            }
        CHECKF(bad == 0, "gemm: %d elements of C differ", bad);
    } else
        CHECK(0);
    free(a);
    free(b);
    free(c);
}

/* kt_cpu_fill_inputs: every leaf's values are kt_cpu_input_value's, of
   magnitude in [0.25, 1) with both signs (an optimiser state positive),
   a weight's divided by sqrt of its fan-in (here j's extent, 4: in
   [0.125, 0.5)); every other tensor NaN, the poison of unwritten
   elements. */
static void test_fill_inputs(void) {
    kt_graph *g = parse("fill", "input x[3,4]\nweight W[4,8]\nstate m[2]\n"
                        "y[i,k] = sum(j) x[i,j] * W[j,k]\n"
                        "u[k] = m[k] * 2\n");
    kt_cpu_state s;
    kt_error err;
    int t, negative = 0, bad = 0;
    int64_t i;
    if (!g) return;
    CHECK(kt_cpu_state_init(&s, g, &err) == KT_OK);
    kt_cpu_fill_inputs(g, &s, 5);
    for (t = 0; t < s.ntensors; t++) {
        const kt_tensor *x = kt_graph_tensor(g, t);
        double lo = x->kind == KT_WEIGHT ? 0.125 : 0.25;
        for (i = 0; i < s.numel[t]; i++) {
            double v = s.val[t][i];
            if (x->producer >= 0) {
                if (v == v) bad++;
                continue;
            }
            if (v != kt_cpu_input_value(g, t, i, 5) || fabs(v) < lo ||
                fabs(v) >= 4 * lo || (x->kind == KT_OPTSTATE && v < 0))
                bad++;
            if (v < 0) negative++;
        }
    }
    CHECKF(bad == 0, "fill: %d values out of place", bad);
    CHECK(negative > 0);
    kt_cpu_state_free(&s);
    kt_graph_destroy(g);
}

/* Runs p on g serially into *ref and partitioned into *dv, both from
   leaves whose tensor `in` holds v[0..n): 1 when both ran. */
static int run_plan_values(const char *what, const kt_graph *g,
                           const kt_plan *p, const char *in, const double *v,
                           int64_t n, kt_cpu_state *ref, kt_cpu_devices *dv) {
    kt_program prog;
    kt_cpu_state st;
    kt_error err;
    int ok = 0;
    if (kt_lower(g, p, &prog, &err) != KT_OK) {
        CHECKF(0, "%s: %s", what, err.message);
        return 0;
    }
    if (kt_cpu_state_init(ref, g, &err) == KT_OK) {
        if (kt_cpu_state_init(&st, g, &err) == KT_OK) {
            kt_cpu_fill_inputs(g, ref, 1);
            kt_cpu_fill_inputs(g, &st, 1);
            ok = set_values(g, ref, in, v, n) && set_values(g, &st, in, v, n) &&
                 kt_cpu_run_serial(g, ref, NULL, &err) == KT_OK &&
                 kt_cpu_run_partitioned(g, p, &prog, &st, NULL, dv, &err) ==
                     KT_OK;
            kt_cpu_state_free(&st);
        }
        if (!ok) kt_cpu_state_free(ref);
    }
    CHECKF(ok, "%s: %s", what, err.message);
    kt_program_free(&prog);
    return ok;
}

/* A plan of g on 2 devices: every tensor tiled as `tiling`, every op's
   first cut on variable `var`. */
static int two_device_plan(const kt_graph *g, const char *tiling, int var,
                           kt_plan *p) {
    kt_factors f;
    kt_error err;
    int t, o;
    if (kt_factors_default(2, &f, &err) != KT_OK ||
        kt_plan_init(p, g, &f, &err) != KT_OK)
        return 0;
    for (t = 0; t < kt_graph_tensor_count(g); t++)
        CHECK(kt_tiling_parse(tiling, &p->tiling[t], &err) == KT_OK);
    for (o = 0; o < kt_graph_op_count(g); o++) p->split[o * KT_MAX_CUTS] = var;
    return 1;
}

/* max and min over k split on 2 devices (k < 2 on one, k >= 2 on the
   other), a NaN (log of -1) in every row, in rows 0 and 3 on the first
   half, in rows 1 and 2 on the second: serially every result is NaN (the
   poison sticks), and whichever device is the root of a row, combining
   the partial results must keep it -- all 2 x 4 results on both devices
   unchecked, none a mismatch; 32 compared (z's 16 once, m's and n's 4 on
   each device). */
static void test_reduce_nan(void) {
    static const double z[16] = {-1, 1, 2, 3, 1, 2, -1, 3,
                                 1, 2, 3, -1, 1, -1, 2, 3};
    kt_graph *g = parse("reduce nan", "input z[4,4]\n"
                        "m[i] = max(k) log(z[i,k])\n"
                        "n[i] = min(k) log(z[i,k])\n");
    kt_plan p;
    kt_cpu_state ref;
    kt_cpu_devices dv;
    kt_cpu_report rep;
    kt_error err;
    int t, i;
    if (!g) return;
    if (!two_device_plan(g, "R", 1, &p)) {
        CHECK(0);
        kt_graph_destroy(g);
        return;
    }
    CHECK(kt_tiling_parse("S1", &p.tiling[kt_graph_find_tensor(g, "z")],
                          &err) == KT_OK);
    if (run_plan_values("reduce nan", g, &p, "z", z, 16, &ref, &dv)) {
        for (t = 0; t < 2; t++)
            for (i = 0; i < 4; i++) {
                double v = ref.val[kt_graph_find_tensor(g, t ? "n" : "m")][i];
                CHECK(v != v);
            }
        memset(&rep, 0, sizeof rep);
        CHECK(kt_cpu_compare(g, &ref, &dv, 1e-9, 1e-7, &rep, &err) == KT_OK);
        CHECKF(rep.compared == 32 && rep.unchecked == 16 &&
                   rep.mismatches == 0,
               "reduce nan: %lld compared, %lld unchecked, %lld mismatches",
               (long long)rep.compared, (long long)rep.unchecked,
               (long long)rep.mismatches);
        kt_cpu_devices_free(&dv);
        kt_cpu_state_free(&ref);
    }
    kt_plan_free(&p);
    kt_graph_destroy(g);
}

/* The report's counts and first mismatches, by hand: y = 2x on 2 devices,
   x[i][j] = 6i + j (0..11) and y tiled along j (device 0 holds columns
   [0, 3), device 1 [3, 6), each a 2x3 tile), so 24 elements compared (12
   of x, 12 of y), each once; y[i][j] = 2(6i + j). */
static void test_report_fields(void) {
    static const double x[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    kt_graph *g = parse("report", "input x[2,6]\ny[i,j] = x[i,j] * 2\n");
    kt_plan p;
    kt_cpu_state ref;
    kt_cpu_devices dv;
    kt_cpu_report rep;
    kt_error err;
    int y, k;
    double *y0, *y1;
    if (!g) return;
    y = kt_graph_find_tensor(g, "y");
    if (!two_device_plan(g, "S1", 1 /* j */, &p)) {
        CHECK(0);
        kt_graph_destroy(g);
        return;
    }
    if (!run_plan_values("report", g, &p, "x", x, 12, &ref, &dv)) goto done;
    CHECK(dv.box[0 * 2 + y].r[1].lo == 0 && dv.box[0 * 2 + y].r[1].hi == 3 &&
          dv.box[1 * 2 + y].r[1].lo == 3 && dv.box[1 * 2 + y].r[1].hi == 6);
    y0 = dv.tile[0 * 2 + y];
    y1 = dv.tile[1 * 2 + y];
    /* the partitioned run's own tiles, row-major 2x3: element k is
       y[k/3][k%3] on device 0, y[k/3][3 + k%3] on device 1 */
    for (k = 0; k < 6; k++)
        CHECK(y0[k] == 2 * (6 * (k / 3) + k % 3) &&
              y1[k] == 2 * (6 * (k / 3) + 3 + k % 3));
    memset(&rep, 0, sizeof rep);
    CHECK(kt_cpu_compare(g, &ref, &dv, 1e-9, 1e-7, &rep, &err) == KT_OK);
    CHECK(rep.compared == 24 && rep.mismatches == 0 && rep.unchecked == 0 &&
          rep.nreported == 0 && rep.worst_tensor == -1 &&
          rep.first_unchecked == -1 && rep.values_ok);
    /* y[1][4] (device 1, its element 1*3 + 1) off by one: got 21, want 20 */
    y1[4] = 21;
    CHECK(kt_cpu_compare(g, &ref, &dv, 1e-9, 1e-7, &rep, &err) == KT_OK);
    CHECK(rep.compared == 24 && rep.mismatches == 1 && rep.nreported == 1 &&
          rep.worst_tensor == y && !rep.values_ok && rep.max_abs_error == 1);
    CHECKF(rep.first[0].tensor == y && rep.first[0].device == 1 &&
               rep.first[0].index[0] == 1 && rep.first[0].index[1] == 4 &&
               rep.first[0].got == 21 && rep.first[0].want == 20,
           "first mismatch: tensor %d, device %lld, index %lld,%lld, got %g, "
           "want %g", rep.first[0].tensor, (long long)rep.first[0].device,
           (long long)rep.first[0].index[0], (long long)rep.first[0].index[1],
           rep.first[0].got, rep.first[0].want);
    /* every y off by one: 12 mismatches, the first 8 reported in device
       order: device 0's six, then device 1's y[0][3] and y[0][4] */
    for (k = 0; k < 6; k++) {
        y0[k] += 1;
        y1[k] = 2 * (6 * (k / 3) + 3 + k % 3) + 1;
    }
    CHECK(kt_cpu_compare(g, &ref, &dv, 1e-9, 1e-7, &rep, &err) == KT_OK);
    CHECK(rep.mismatches == 12 && rep.nreported == KT_CPU_REPORT_MISMATCHES);
    for (k = 0; k < KT_CPU_REPORT_MISMATCHES; k++) {
        int i = k < 6 ? k / 3 : 0, j = k < 6 ? k % 3 : k - 3;
        CHECKF(rep.first[k].device == (k < 6 ? 0 : 1) &&
                   rep.first[k].index[0] == i && rep.first[k].index[1] == j &&
                   rep.first[k].got == 2 * (6 * i + j) + 1 &&
                   rep.first[k].want == 2 * (6 * i + j),
               "mismatch %d: device %lld, index %lld,%lld", k,
               (long long)rep.first[k].device,
               (long long)rep.first[k].index[0],
               (long long)rep.first[k].index[1]);
    }
    /* restored, y[0][2] NaN on both sides: unchecked, still compared */
    for (k = 0; k < 6; k++) {
        y0[k] -= 1;
        y1[k] -= 1;
    }
    y0[2] = NAN;
    ref.val[y][2] = NAN;
    CHECK(kt_cpu_compare(g, &ref, &dv, 1e-9, 1e-7, &rep, &err) == KT_OK);
    CHECK(rep.compared == 24 && rep.mismatches == 0 && rep.unchecked == 1 &&
          rep.first_unchecked == y && !rep.values_ok);
    kt_cpu_devices_free(&dv);
    kt_cpu_state_free(&ref);
done:
    kt_plan_free(&p);
    kt_graph_destroy(g);
}

/* ------------------------------------------------ partitioned == serial */

static int nchecked = 0, nskipped = 0;

/* Verifies plan p; prints the first mismatches when it fails. */
static void verify_plan(const char *what, const kt_graph *g, const kt_plan *p,
                        uint64_t seed) {
    kt_cpu_verify_options o;
    kt_cpu_report r;
    kt_error err;
    kt_status s;
    int i;
    kt_cpu_verify_defaults(&o);
    o.seed = seed;
    s = kt_cpu_verify(g, p, &o, &r, &err);
    CHECKF(s == KT_OK, "%s: %s", what, err.message);
    if (s != KT_OK) return;
    nchecked++;
    CHECKF(r.values_ok, "%s: %lld of %lld elements differ, largest relative "
           "error %.3g in %s", what, (long long)r.mismatches,
           (long long)r.compared, r.max_rel_error,
           r.worst_tensor >= 0 ? kt_graph_tensor(g, r.worst_tensor)->name : "-");
    CHECKF(r.bytes_moved == r.predicted_bytes && r.bytes_ok,
           "%s: moved %lld bytes, the plan predicts %lld", what,
           (long long)r.bytes_moved, (long long)r.predicted_bytes);
    CHECK_EQ_I64(r.program_bytes, r.predicted_bytes);
    CHECK(r.compared > 0 && r.ok == (r.values_ok && r.bytes_ok));
    for (i = 0; i < r.nreported && !r.values_ok; i++)
        printf("  %s on device %lld at [%lld,%lld,...]: %.17g, serial %.17g\n",
               kt_graph_tensor(g, r.first[i].tensor)->name,
               (long long)r.first[i].device, (long long)r.first[i].index[0],
               (long long)r.first[i].index[1], r.first[i].got, r.first[i].want);
}

static const struct {
    kt_strategy s;
    const char *name;
} strategies[] = {
    {KT_STRATEGY_DP, "dp"},         {KT_STRATEGY_DATA, "data"},
    {KT_STRATEGY_MODEL, "model"},   {KT_STRATEGY_GREEDY, "greedy"},
    {KT_STRATEGY_SPARTAN, "spartan"}, {KT_STRATEGY_EQUALCHOP, "equalchop"},
    {KT_STRATEGY_BRUTEFORCE, "bruteforce"},
};

/* Every strategy on every device count; a baseline that does not apply to
   a shape (data parallelism with a batch smaller than the devices) says so
   and is skipped, the DP plan must always exist. */
static void verify_all_plans(const char *what, const kt_graph *g,
                             const int *devices, int ndevices, int nstrat) {
    int di, si;
    for (di = 0; di < ndevices; di++)
        for (si = 0; si < nstrat; si++) {
            kt_factors f;
            kt_plan p;
            kt_search_options so;
            kt_error err;
            char label[256];
            kt_status s;
            memset(&so, 0, sizeof so);
            so.strategy = strategies[si].s;
            so.bruteforce_limit = 1 << 14;
            CHECK(kt_factors_default(devices[di], &f, &err) == KT_OK);
            snprintf(label, sizeof label, "%s, %d devices, %s plan", what,
                     devices[di], strategies[si].name);
            s = kt_plan_search(g, &f, &so, &p, &err);
            if (s != KT_OK) {
                CHECKF(si != 0, "%s: %s", label, err.message);
                nskipped++;
                continue;
            }
            verify_plan(label, g, &p, 1000 + (uint64_t)devices[di]);
            kt_plan_free(&p);
        }
}

static void test_zoo(void) {
    static const int all[] = {1, 2, 3, 4, 6, 8}, few[] = {2, 3, 4};
    static const char *const small[] = {
        "mlp:layers=3,hidden=24,batch=24",
        "mlp:layers=2,hidden=10,batch=7", /* uneven tiles */
        "rnn:layers=2,hidden=12,steps=3,batch=24",
        "transformer:layers=1,dmodel=24,heads=2,ffn=48,seq=6,batch=24",
        "transformer:layers=2,dmodel=12,heads=3,ffn=20,seq=5,batch=3",
    };
    int m, nm = 5;
    for (m = 0; m < nm; m++) {
        kt_graph *g = NULL;
        kt_error err;
        if (kt_zoo_build(small[m], &g, &err) != KT_OK) {
            CHECKF(0, "%s: %s", small[m], err.message);
            continue;
        }
        if (under_valgrind()) /* DP and data parallelism */
            verify_all_plans(small[m], g, m < 3 ? all : few, m < 3 ? 6 : 3, 2);
        else
            verify_all_plans(small[m], g, all, 6, m < 2 ? 7 : 6);
        kt_graph_destroy(g);
    }
}

/* The convolution models of the zoo at small sizes (the zoo's image, width,
   fc and classes parameters), each the smallest that keeps every layer
   kind: AlexNet's 11x11 stride-4 convolution, padded 5x5 and 3x3 ones, 2x2
   pooling, the fully connected layers and softmax cross-entropy (39 px: one
   pixel after the last pooling); VGG-16's 13 padded 3x3 convolutions in
   five pooled stages (32 px); Wide ResNet-26's stride-2 stem, pooling,
   bottleneck blocks with strided projection shortcuts and identity ones,
   global average pooling (32 px: 1 pixel in the last stage).  A batch of 8
   lets data parallelism apply on all six counts (unevenly on 3 and 6).
   Every plan on 1, 2, 3, 4, 6 and 8 devices; Wide ResNet-50 (all 16 blocks)
   with the DP plan.  Under valgrind: the DP plan of the first three.
   KT_TEST_LONG=1 adds a Wide ResNet-50 of 23 million weights (64 px) on
   all six counts with the DP and data-parallel plans (minutes of CPU). */
static void test_zoo_conv(void) {
    static const int all[] = {1, 2, 3, 4, 6, 8};
    static const struct {
        const char *spec;
        int strategies; /* how many of strategies[] (all, or DP only) */
    } models[] = {
        {"alexnet:batch=8,image=39,width=2,fc=16,classes=10", 7},
        {"vgg16:batch=8,image=32,width=1,fc=16,classes=10", 7},
        {"wresnet:depth=26,widen=1,width=2,batch=8,image=32,classes=10", 7},
        {"wresnet:depth=50,widen=1,width=2,batch=8,image=32,classes=10", 1},
    };
    const char *big = "wresnet:depth=50,widen=1,batch=2,image=64";
    int m;
    for (m = 0; m < (int)(sizeof models / sizeof models[0]); m++) {
        kt_graph *g = NULL;
        kt_error err;
        if (kt_zoo_build(models[m].spec, &g, &err) != KT_OK) {
            CHECKF(0, "%s: %s", models[m].spec, err.message);
            continue;
        }
        if (!under_valgrind())
            verify_all_plans(models[m].spec, g, all, 6, models[m].strategies);
        else if (models[m].strategies > 1)
            verify_all_plans(models[m].spec, g, all, 6, 1);
        kt_graph_destroy(g);
    }
    if (getenv("KT_TEST_LONG") && !under_valgrind()) {
        kt_graph *g = NULL;
        kt_error err;
        if (kt_zoo_build(big, &g, &err) != KT_OK) {
            CHECKF(0, "%s: %s", big, err.message);
            return;
        }
        verify_all_plans(big, g, all, 6, 2);
        kt_graph_destroy(g);
    }
}

/* A random plan: a random tiling for every tensor, a random variable (or
   replication) per op and cut, drawn among what the shapes allow. */
static int random_plan(const kt_graph *g, const kt_factors *f, uint64_t *rng,
                       kt_plan *p) {
    kt_error err;
    int t, o, c;
    if (kt_plan_init(p, g, f, &err) != KT_OK) return 0;
    for (t = 0; t < kt_graph_tensor_count(g); t++) {
        const kt_tensor *x = kt_graph_tensor(g, t);
        kt_tiling buf[512];
        size_t n = 0;
        if (kt_tiling_enumerate(x->rank, x->shape, f, KT_ENUM_REPLICATE, buf,
                                512, &n, &err) != KT_OK || n == 0) {
            kt_plan_free(p);
            return 0;
        }
        if (n > 512) n = 512;
        p->tiling[t] = buf[xorshift64(rng) % n];
    }
    for (o = 0; o < kt_graph_op_count(g); o++) {
        const kt_op *op = kt_graph_op(g, o);
        kt_range box[KT_MAX_VARS];
        kt_op_var_box(op, box);
        for (c = 0; c < f->count; c++) {
            int vars[KT_MAX_VARS], n = kt_op_strategies(op, f->k[c], box, vars);
            int v = n ? vars[xorshift64(rng) % (uint64_t)n] : KT_SPLIT_REPLICATE;
            if (n && xorshift64(rng) % 8 == 0) v = KT_SPLIT_REPLICATE;
            p->split[o * KT_MAX_CUTS + c] = v;
            if (v >= 0) box[v] = kt_split_range(box[v], f->k[c], 0);
        }
    }
    return 1;
}

/* Runs plan p's program on the CPU backend and compares the executed
   per-pair counts with the program's (kt_test_pairs_match).  Returns 1
   when they agree. */
static int executed_pairs_match(const char *what, const kt_graph *g,
                                const kt_plan *p) {
    kt_program prog;
    kt_cpu_state leaves;
    kt_cpu_devices dev;
    kt_error err;
    int ok = 0;
    if (kt_lower(g, p, &prog, &err) != KT_OK) {
        CHECKF(0, "%s: %s", what, err.message);
        return 0;
    }
    if (kt_cpu_state_init(&leaves, g, &err) == KT_OK) {
        kt_cpu_fill_inputs(g, &leaves, 1);
        if (kt_cpu_run_partitioned(g, p, &prog, &leaves, NULL, &dev, &err) ==
            KT_OK) {
            ok = kt_test_pairs_match(what, &dev, &prog);
            kt_cpu_devices_free(&dev);
        } else {
            CHECKF(0, "%s: %s", what, err.message);
        }
        kt_cpu_state_free(&leaves);
    } else {
        CHECKF(0, "%s: %s", what, err.message);
    }
    kt_program_free(&prog);
    return ok;
}

/* Whether transfer x may come before y in a receive group: an earlier
   part or stage (kt__pull_stages runs them so), or the same one and
   earlier in the program. */
static int inbox_in_order(const kt__run *r, int x, int y) {
    int64_t sx = kt__inbox_key(r, x), sy = kt__inbox_key(r, y);
    return sx < sy || (sx == sy && x < y);
}

/* kt__inbox_build's groups: every transfer once, in the group of its op
   and receiver, and within a group by part and stage, in program order
   within one -- the order a receiver adds partial sums in, which decides
   the float results bit for bit (verify's tolerance would hide a
   change). */
static void check_inbox(const char *what, const kt_graph *g,
                        const kt_plan *p) {
    kt_program prog;
    kt__run r;
    kt_error err;
    int64_t k, wrong = 0, seen = 0;
    if (kt_lower(g, p, &prog, &err) != KT_OK) {
        CHECKF(0, "%s: %s", what, err.message);
        return;
    }
    memset(&r, 0, sizeof r);
    r.g = g;
    r.prog = &prog;
    r.ndev = prog.ndev;
    if (kt__inbox_build(&r, &err) == KT_OK) {
        for (k = 0; k < prog.ntask; k++) {
            int i, lo = r.inbox_first[k], hi = r.inbox_first[k + 1];
            for (i = lo; i < hi; i++) {
                const kt_transfer *t = &prog.xfer[r.inbox[i]];
                seen++;
                if ((int64_t)t->op * prog.ndev + t->dst != k ||
                    (i > lo && !inbox_in_order(&r, r.inbox[i - 1],
                                               r.inbox[i])))
                    wrong++;
            }
        }
        CHECKF(wrong == 0 && seen == prog.nxfer &&
                   r.inbox_first[prog.ntask] == prog.nxfer,
               "%s: %lld transfers out of place in the receive index, %lld "
               "of %d listed", what, (long long)wrong, (long long)seen,
               prog.nxfer);
    } else {
        CHECKF(0, "%s: %s", what, err.message);
    }
    kt__inbox_free(&r);
    kt_program_free(&prog);
}

/* The order device dev must run its transfers in for its sums (and
   maxima) to be combined as in every earlier build: op by op, each op's
   inputs, then its reductions, then its result copies, each part stage
   by stage, and within a stage in program order -- written out from the
   program alone, without the receive index.  n: how many went to want. */
static int expected_pulls(const kt_graph *g, const kt_program *prog,
                          int64_t dev, int *want) {
    int o, part, st, x, n = 0;
    for (o = 0; o < prog->nops; o++)
        for (part = 0; part < KT__NPARTS; part++)
            for (st = 0; st < KT_XFER_STAGES; st++)
                for (x = prog->xfer_first[o]; x < prog->xfer_first[o + 1];
                     x++) {
                    const kt_transfer *t = &prog->xfer[x];
                    if (t->dst == dev && t->stage == st &&
                        (int)kt__xfer_part(g, t) == part)
                        want[n++] = x;
                }
    return n;
}

/* End to end, what check_inbox checks of the index: a partitioned run of
   p's program (lowered on topology t, or without one), on 3 worker
   threads, runs every device's transfers in exactly the order of
   expected_pulls.  A change there moves the float results by a rounding
   -- and verify's tolerance would not notice. */
static void check_pull_order(const char *what, const kt_graph *g,
                             const kt_plan *p, const kt_topology *t,
                             uint64_t seed) {
    kt_program prog;
    kt_cpu_state leaves;
    kt_cpu_devices dev;
    kt_cpu_options o;
    kt_error err;
    int64_t d, wrong = -1;
    int *want = NULL, n, i;
    if ((t ? kt_lower_on(g, p, t, &prog, &err) : kt_lower(g, p, &prog, &err))
        != KT_OK) {
        CHECKF(0, "%s: %s", what, err.message);
        return;
    }
    pull_first = (int *)calloc((size_t)prog.ndev + 1, sizeof(int));
    pull_len = (int *)calloc((size_t)prog.ndev + 1, sizeof(int));
    pull_log = (int *)calloc((size_t)prog.nxfer + 1, sizeof(int));
    want = (int *)calloc((size_t)prog.nxfer + 1, sizeof(int));
    if (!pull_first || !pull_len || !pull_log || !want ||
        kt_cpu_state_init(&leaves, g, &err) != KT_OK) {
        CHECKF(0, "%s: out of memory", what);
        goto done;
    }
    for (i = 0; i < prog.nxfer; i++) pull_first[prog.xfer[i].dst + 1]++;
    for (d = 0; d < prog.ndev; d++) pull_first[d + 1] += pull_first[d];
    pull_overflow = 0;
    kt_cpu_fill_inputs(g, &leaves, seed);
    memset(&o, 0, sizeof o);
    o.threads = 3;
    if (kt_cpu_run_partitioned(g, p, &prog, &leaves, &o, &dev, &err) ==
        KT_OK) {
        for (d = 0; d < prog.ndev && wrong < 0; d++) {
            n = expected_pulls(g, &prog, d, want);
            if (n != pull_len[d] ||
                memcmp(want, &pull_log[pull_first[d]], sizeof(int) * n))
                wrong = d;
        }
        CHECKF(wrong < 0 && !pull_overflow, "%s: device %lld ran its "
               "transfers in another order than the program's", what,
               (long long)wrong);
        kt_cpu_devices_free(&dev);
    } else {
        CHECKF(0, "%s: %s", what, err.message);
    }
    kt_cpu_state_free(&leaves);
done:
    free(pull_log);
    pull_log = NULL; /* disarmed */
    free(pull_first);
    free(pull_len);
    free(want);
    kt_program_free(&prog);
}

static int npairs_matched = 0;

/* One partitioned run of p's program on the leaves with `threads`
   worker threads (0: the default). */
static int run_with_threads(const char *what, const kt_graph *g,
                            const kt_plan *p, const kt_program *prog,
                            const kt_cpu_state *leaves, int threads,
                            kt_cpu_devices *dev) {
    kt_cpu_options o;
    kt_error err;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    if (kt_cpu_run_partitioned(g, p, prog, leaves, &o, dev, &err) == KT_OK)
        return 1;
    CHECKF(0, "%s, %d threads: %s", what, threads, err.message);
    return 0;
}

/* The worker count changes nothing: p's program run with 1 thread, with 2,
   3 and 5 (devices dealt round-robin, some workers with more than
   others), and with one per device gives the same tiles bit for bit and
   the same bytes per pair.  A device's work, and the order its sums are
   added in, must not depend on who runs it. */
static void check_thread_counts(const char *what, const kt_graph *g,
                                const kt_plan *p, uint64_t seed) {
    static const int counts[] = {2, 3, 5, -1};
    kt_program prog;
    kt_cpu_state leaves;
    kt_cpu_devices one, other;
    kt_error err;
    int i;
    if (kt_lower(g, p, &prog, &err) != KT_OK) {
        CHECKF(0, "%s: %s", what, err.message);
        return;
    }
    if (kt_cpu_state_init(&leaves, g, &err) != KT_OK) {
        CHECKF(0, "%s: %s", what, err.message);
        kt_program_free(&prog);
        return;
    }
    kt_cpu_fill_inputs(g, &leaves, seed);
    if (run_with_threads(what, g, p, &prog, &leaves, 1, &one)) {
        for (i = 0; i < 4; i++) {
            int n = counts[i] < 0 ? (int)prog.ndev : counts[i];
            if (!run_with_threads(what, g, p, &prog, &leaves, n, &other))
                continue;
            CHECKF(kt_test_same_devices(g, &one, &other),
                   "%s: 1 and %d worker threads differ", what, n);
            kt_cpu_devices_free(&other);
        }
        kt_cpu_devices_free(&one);
    }
    kt_cpu_state_free(&leaves);
    kt_program_free(&prog);
}

static void test_random_plans(void) {
    static const char *const models[] = {
        "mlp:layers=2,hidden=12,batch=10",
        "transformer:layers=1,dmodel=8,heads=2,ffn=12,seq=4,batch=3",
        /* steps=3, not 2: with 2 steps the forward graph has 32 tensors,
           and kt_graph_autodiff adding the loss gradient reads the loss's
           shape from the tensor array its own realloc has just freed (a
           tiling.h bug, reported; ASan catches it) */
        "rnn:layers=1,hidden=6,steps=3,batch=5",
    };
    static const int devices[] = {2, 3, 4, 6, 8, 12};
    uint64_t rng = 0x9e3779b97f4a7c15ULL;
    int m, d, k, rounds = under_valgrind() ? 1 : 3;
    for (m = 0; m < 3; m++) {
        kt_graph *g = NULL;
        kt_error err;
        if (kt_zoo_build(models[m], &g, &err) != KT_OK) {
            CHECKF(0, "%s: %s", models[m], err.message);
            continue;
        }
        for (d = 0; d < 6; d++)
            for (k = 0; k < rounds; k++) {
                kt_factors f;
                kt_plan p;
                char label[200];
                kt_factors_default(devices[d], &f, &err);
                if (!random_plan(g, &f, &rng, &p)) {
                    CHECKF(0, "%s: no random plan", models[m]);
                    continue;
                }
                snprintf(label, sizeof label, "%s, %d devices, random plan %d",
                         models[m], devices[d], k);
                verify_plan(label, g, &p, rng);
                check_thread_counts(label, g, &p, rng);
                if (executed_pairs_match(label, g, &p)) npairs_matched++;
                check_inbox(label, g, &p);
                check_pull_order(label, g, &p, NULL, rng);
                if (devices[d] % 2 == 0) {
                    /* two nodes: trees with more stages */
                    kt_topology t;
                    char spec[64];
                    snprintf(spec, sizeof spec, "nodes:2x%d:300G:25G",
                             devices[d] / 2);
                    if (kt_topology_parse(spec, &t, &err) == KT_OK)
                        check_pull_order(label, g, &p, &t, rng);
                    else
                        CHECKF(0, "%s: %s", spec, err.message);
                }
                kt_plan_free(&p);
            }
        kt_graph_destroy(g);
    }
    printf("random plans: executed pairs equal the program's in %d plans\n",
           npairs_matched);
}

/* Many devices: every device's receives are found through the index by
   (op, receiver) -- 256 devices, each op's transfers spread over them --
   and the run still equals the serial one, pair by pair; with the DP
   plan, also with 1, 2, 3, 5 and 256 worker threads, bit for bit.  (Not
   under valgrind: 256 threads.) */
static void test_many_devices(void) {
    static const kt_strategy strategies_here[] = {KT_STRATEGY_DP,
                                                  KT_STRATEGY_DATA,
                                                  KT_STRATEGY_MODEL};
    kt_graph *g = NULL;
    kt_error err;
    kt_factors f;
    int i;
    if (under_valgrind()) return;
    CHECK(kt_zoo_build("mlp:layers=2,hidden=32,batch=256", &g, &err) ==
          KT_OK);
    kt_factors_default(256, &f, &err);
    for (i = 0; i < 3; i++) {
        kt_search_options so;
        kt_plan p;
        char label[80];
        memset(&so, 0, sizeof so);
        so.strategy = strategies_here[i];
        CHECK(kt_plan_search(g, &f, &so, &p, &err) == KT_OK);
        snprintf(label, sizeof label, "mlp on 256 devices, strategy %d",
                 (int)so.strategy);
        verify_plan(label, g, &p, 5);
        if (i == 0) check_thread_counts(label, g, &p, 5);
        CHECK(executed_pairs_match(label, g, &p));
        check_inbox(label, g, &p);
        kt_plan_free(&p);
    }
    kt_graph_destroy(g);
}

/* Model files: padding, pooling, broadcasting,
   division, min/max reductions, upsampling, a product reduction, Adam,
   uneven extents. */
static void test_model_files(void) {
    static const char *const files[] = {
        "input x[4,3,9,9]\nweight f[5,3,3,3]\nweight g[2,5,2,2]\nweight s[5]\n"
        "o[n,co,h:5,w:5] = sum(ci,kh,kw) pad(x[n,ci,h*2+kh-1,w*2+kw-1]) * "
        "f[co,ci,kh,kw]\n"
        "a[n,c,h,w] = tanh(o[n,c,h,w]) * s[c]\n"
        "m[n,c,h:4,w:4] = max(dh:2,dw:2) a[n,c,h+dh,w+dw]\n"
        "u[n,c,h,w] = m[n,c,h/2,w/2] + 0.5\n"
        "q[n,co,h,w] = sum(ci,kh,kw) u[n,ci,h+kh,w+kw] * g[co,ci,kh,kw]\n"
        "loss q\n",
        "input x[7,5]\nweight W[5,6]\nweight b[6]\ninput t[7,6]\n"
        "y[i,k] = sum(j) x[i,j] * W[j,k]\n"
        "z[i,k] = sigmoid(y[i,k] + b[k])\n"
        "lo[i] = min(k) z[i,k]\n"
        "hi[i] = max(k) z[i,k]\n"
        "r[i,k] = (z[i,k] - lo[i]) / (hi[i] - lo[i] + 1) - t[i,k]\n"
        "l[i,k] = r[i,k] * r[i,k]\n"
        "loss l\n",
        "input x[6,10]\nweight W[10,5]\ninput labels[6,5]\n"
        "z[n,k] = sum(j) x[n,j] * W[j,k]\n"
        "xent[n] = opaque(softmax_xent, z[n,:], labels[n,:])\n"
        "loss xent\n",
        "input x[6,4]\ninput y[4,5]\n"
        "p[i,k] = prod(j) x[i,j] + y[j,k]\n"
        "e[i,k] = exp(p[i,k] * 0.1)\n",
        /* AlexNet's forms at a small size: an 11x11 stride-4 convolution,
           2x2 max pooling (the zoo's), a padded 5x5 convolution, fully
           connected layers, softmax cross-entropy */
        "input x[4,3,39,39]\ninput labels[4,10]\n"
        "weight f1[8,3,11,11]\nweight f2[12,8,5,5]\nweight W6[12,4,4,16]\n"
        "weight W7[16,10]\n"
        "c1[n,co,h:8,w:8] = sum(ci,kh,kw) x[n,ci,h*4+kh,w*4+kw] * "
        "f1[co,ci,kh,kw]\n"
        "a1[n,c,h,w] = relu(c1[n,c,h,w])\n"
        "p1[n,c,h,w] = max(dh:2,dw:2) a1[n,c,h*2+dh,w*2+dw]\n"
        "c2[n,co,h:4,w:4] = sum(ci,kh,kw) pad(p1[n,ci,h+kh-2,w+kw-2]) * "
        "f2[co,ci,kh,kw]\n"
        "a2[n,c,h,w] = relu(c2[n,c,h,w])\n"
        "h6[n,k] = sum(c,h,w) a2[n,c,h,w] * W6[c,h,w,k]\n"
        "a6[n,k] = relu(h6[n,k])\n"
        "z[n,k] = sum(j) a6[n,j] * W7[j,k]\n"
        "xent[n] = opaque(softmax_xent, z[n,:], labels[n,:])\n"
        "loss xent\n",
        /* a padded 3x3 convolution of a 1x1 image (Wide ResNet at its
           smallest image): split along kh on 3 devices, two devices' share
           of the filter gradient reads only padding, and they hold none of
           x -- the matrix-product gather must give 0 there, not report a
           read outside the (empty) region */
        "input x[2,2,1,1]\nweight f[2,2,3,3]\n"
        "o[n,co,h:1,w:1] = sum(ci,kh,kw) pad(x[n,ci,h+kh-1,w+kw-1]) * "
        "f[co,ci,kh,kw]\n"
        "loss o\n",
        /* a padded stride-2 3x3 convolution after a scale: autodiff's
           gradient of s is a narrowed sum (kt__tighten), run by offsets
           over each device's views (kt__dot_at) */
        "input x[2,3,10,10]\nweight sc[3]\nweight f[4,3,3,3]\n"
        "s[n,c,h,w] = x[n,c,h,w] * sc[c]\n"
        "o[n,co,h:5,w:5] = sum(ci,kh,kw) pad(s[n,ci,h*2+kh-1,w*2+kw-1]) * "
        "f[co,ci,kh,kw]\n"
        "loss o\n",
    };
    static const int all[] = {2, 3, 4, 6, 8}, few[] = {2, 4};
    int i;
    for (i = 0; i < (int)(sizeof files / sizeof files[0]); i++) {
        char what[64];
        kt_graph *g = training("model file", files[i]);
        if (!g) continue;
        snprintf(what, sizeof what, "model file %d", i + 1);
        if (under_valgrind()) verify_all_plans(what, g, few, 2, 1);
        else verify_all_plans(what, g, all, 5, 6);
        kt_graph_destroy(g);
    }
    {   /* Adam: optimizer states updated in place beside the weights */
        kt_graph *g = parse("adam", "input x[8,6]\nweight W[6,4]\n"
                            "y[i,k] = sum(j) x[i,j] * W[j,k]\nloss y\n");
        kt_autodiff_options ao;
        kt_error err;
        static const int dev[] = {2, 4};
        memset(&ao, 0, sizeof ao);
        ao.adam = 1;
        if (g && kt_graph_autodiff(g, &ao, &err) == KT_OK)
            verify_all_plans("adam", g, dev, 2, 2);
        else CHECKF(0, "adam: %s", g ? err.message : "no graph");
        kt_graph_destroy(g);
    }
}

/* Executed pairs of a program with transfer `which` dropped: every pair
   of the whole program counted as before, less the dropped transfer's
   bytes at its own pair -- the counts are what ran, not the program's
   own figures. */
static void dropped_pair_counts(const kt_graph *g, const kt_plan *p,
                                kt_program *whole, const kt_program *broken,
                                int which) {
    const kt_transfer *gone = &whole->xfer[which];
    kt_cpu_state leaves;
    kt_cpu_devices dev;
    kt_error err;
    int64_t i, wrong = 0;
    if (kt_program_count_pairs(whole, &err) != KT_OK ||
        kt_cpu_state_init(&leaves, g, &err) != KT_OK) {
        CHECKF(0, "dropped transfer %d: %s", which, err.message);
        return;
    }
    kt_cpu_fill_inputs(g, &leaves, 1);
    if (kt_cpu_run_partitioned(g, p, broken, &leaves, NULL, &dev, &err) !=
        KT_OK) {
        CHECKF(0, "dropped transfer %d: %s", which, err.message);
        kt_cpu_state_free(&leaves);
        return;
    }
    for (i = 0; i < whole->npairs; i++) {
        const kt_pair_bytes *q = &whole->pairs[i];
        int64_t want = q->bytes - (q->src == gone->src && q->dst == gone->dst
                                       ? gone->bytes
                                       : 0);
        if (kt_pair_bytes_lookup(dev.pairs, dev.npairs, q->src, q->dst) !=
            want)
            wrong++;
    }
    CHECKF(wrong == 0 && dev.bytes_moved == whole->total_bytes - gone->bytes,
           "dropped transfer %d (%lld -> %lld): %lld pairs counted wrong",
           which, (long long)gone->src, (long long)gone->dst,
           (long long)wrong);
    kt_cpu_devices_free(&dev);
    kt_cpu_state_free(&leaves);
}

/* One transfer dropped: the receiver keeps NaN poison (or a partial sum)
   where the values should be, so the comparison must fail, and the bytes
   moved fall short of the prediction. */
static void test_broken_program(void) {
    kt_graph *g = NULL;
    kt_error err;
    kt_factors f;
    kt_plan p;
    kt_search_options so;
    kt_program prog;
    int which, tried = 0, caught = 0, reduce_caught = 0;
    if (kt_zoo_build("mlp:layers=3,hidden=16,batch=12", &g, &err) != KT_OK) {
        CHECKF(0, "mlp: %s", err.message);
        return;
    }
    memset(&so, 0, sizeof so);
    so.strategy = KT_STRATEGY_MODEL; /* partial sums and copies */
    kt_factors_default(4, &f, &err);
    CHECK(kt_plan_search(g, &f, &so, &p, &err) == KT_OK);
    CHECK(kt_lower(g, &p, &prog, &err) == KT_OK);
    CHECK(prog.nxfer > 2);
    for (which = 0; which < prog.nxfer; which += under_valgrind() ? 7 : 1) {
        kt_program broken = prog;
        kt_transfer *x = (kt_transfer *)malloc(sizeof *x * (size_t)prog.nxfer);
        int *first = (int *)malloc(sizeof(int) * (size_t)(prog.nops + 1));
        kt_cpu_report r;
        kt_cpu_verify_options o;
        int i, o2;
        if (!x || !first) break;
        for (i = 0, o2 = 0; i < prog.nxfer; i++)
            if (i != which) x[o2++] = prog.xfer[i];
        for (i = 0; i <= prog.nops; i++)
            first[i] = prog.xfer_first[i] - (prog.xfer_first[i] > which);
        broken.xfer = x;
        broken.nxfer = prog.nxfer - 1;
        broken.xfer_first = first;
        broken.total_bytes = prog.total_bytes - prog.xfer[which].bytes;
        kt_cpu_verify_defaults(&o);
        CHECK(kt_cpu_verify_program(g, &p, &broken, &o, &r, &err) == KT_OK);
        tried++;
        if (!r.values_ok && !r.bytes_ok && !r.ok) caught++;
        else
            printf("dropping transfer %d (tensor %d to device %lld) was not "
                   "caught\n", which, prog.xfer[which].tensor,
                   (long long)prog.xfer[which].dst);
        if (prog.xfer[which].kind == KT_XFER_REDUCE && !r.values_ok)
            reduce_caught++;
        CHECK_EQ_I64(r.bytes_moved, r.predicted_bytes - prog.xfer[which].bytes);
        dropped_pair_counts(g, &p, &prog, &broken, which);
        free(x);
        free(first);
    }
    CHECKF(caught == tried && tried > 0, "%d of %d broken programs caught",
           caught, tried);
    if (!under_valgrind()) CHECK(reduce_caught > 0);
    {   /* the counts are what the workers copied, not the program's own
           figures: a transfer whose recorded bytes are wrong is counted by
           the region it moves */
        kt_program lying = prog;
        kt_transfer *x = (kt_transfer *)malloc(sizeof *x * (size_t)prog.nxfer);
        kt_cpu_state leaves;
        kt_cpu_devices dev;
        if (x && kt_cpu_state_init(&leaves, g, &err) == KT_OK) {
            memcpy(x, prog.xfer, sizeof *x * (size_t)prog.nxfer);
            x[prog.nxfer / 2].bytes += 1000;
            lying.xfer = x;
            lying.pairs = NULL;
            lying.npairs = 0;
            kt_cpu_fill_inputs(g, &leaves, 1);
            CHECK(kt_cpu_run_partitioned(g, &p, &lying, &leaves, NULL, &dev,
                                         &err) == KT_OK);
            CHECK(kt_test_pairs_match("a transfer's bytes misrecorded", &dev,
                                      &prog));
            kt_cpu_devices_free(&dev);
            kt_cpu_state_free(&leaves);
        }
        free(x);
    }
    {   /* a transfer whose region reaches past its tensor is malformed;
           one inside its tensor that the sender does not hold, or the
           receiver does not want, is refused as a lowering bug */
        kt_cpu_report r;
        kt_program bad = prog;
        kt_transfer *x = (kt_transfer *)malloc(sizeof *x * (size_t)prog.nxfer);
        int i, d, internal = 0, other = 0;
        if (x) {
            memcpy(x, prog.xfer, sizeof *x * (size_t)prog.nxfer);
            x[0].region.r[0].hi += 1000;
            bad.xfer = x;
            CHECK(kt_cpu_verify_program(g, &p, &bad, NULL, &r, &err) ==
                  KT_ERR_INVALID);
            CHECKF(strstr(err.message, "region") != NULL, "'%s'", err.message);
            for (i = 0; i < prog.nxfer; i += under_valgrind() ? 7 : 1) {
                const kt_tensor *t = kt_graph_tensor(g, prog.xfer[i].tensor);
                kt_status s;
                memcpy(x, prog.xfer, sizeof *x * (size_t)prog.nxfer);
                for (d = 0; d < t->rank; d++) {
                    x[i].region.r[d].lo = 0;
                    x[i].region.r[d].hi = t->shape[d];
                }
                s = kt_cpu_verify_program(g, &p, &bad, NULL, &r, &err);
                if (s == KT_ERR_INTERNAL && strstr(err.message, "region"))
                    internal++;
                else if (s != KT_OK)
                    other++;
            }
            CHECKF(internal > 0 && other == 0, "whole-tensor regions: %d "
                   "refused as not held or not wanted, %d otherwise",
                   internal, other);
            free(x);
        }
    }
    kt_program_free(&prog);
    kt_plan_free(&p);
    kt_graph_destroy(g);
}

/* ------------------------------------------------ bad arguments */

/* s is KT_ERR_INVALID with a message containing `needle`. */
static void expect_invalid(const char *what, kt_status s, const kt_error *err,
                           const char *needle) {
    CHECKF(s == KT_ERR_INVALID && strstr(err->message, needle) != NULL,
           "%s: status %d '%s', expected invalid argument naming '%s'", what,
           (int)s, s == KT_OK ? "" : err->message, needle);
}

/* A plan, state, program or result of another graph is refused with a
   message, never indexed by this graph's counts (each of these read or
   wrote out of bounds, or dereferenced NULL, before). */
static void test_foreign_arguments(void) {
    static const char *const src_a =
        "input x[4,6]\nweight W[6,4]\ny[i,k] = sum(j) x[i,j] * W[j,k]\n"
        "z[i,k] = relu(y[i,k])\n";
    kt_graph *a = parse("graph a", src_a);
    kt_graph *b = parse("graph b", "input x[4,6]\ny[i,j] = tanh(x[i,j])\n");
    /* as many tensors as a, other sizes */
    kt_graph *c = parse("graph c", "input x[4,7]\nweight W[7,4]\n"
                        "y[i,k] = sum(j) x[i,j] * W[j,k]\n"
                        "z[i,k] = relu(y[i,k])\n");
    kt_factors f1, f2;
    kt_plan p, p1, q, q1;
    kt_program prog, prog1;
    kt_cpu_state st, ref, stb, stc;
    kt_cpu_devices dv;
    kt_cpu_report rep;
    kt_search_options so;
    kt_error err;
    double before;
    if (!a || !b || !c) goto graphs;
    memset(&so, 0, sizeof so);
    CHECK(kt_factors_default(1, &f1, &err) == KT_OK);
    CHECK(kt_factors_default(2, &f2, &err) == KT_OK);
    if (kt_plan_search(a, &f2, &so, &p, &err) != KT_OK) {
        CHECKF(0, "search: %s", err.message);
        goto graphs;
    }
    CHECK(kt_plan_init(&p1, a, &f1, &err) == KT_OK);
    CHECK(kt_plan_init(&q, b, &f2, &err) == KT_OK);
    CHECK(kt_plan_init(&q1, b, &f1, &err) == KT_OK);
    CHECK(kt_lower(a, &p, &prog, &err) == KT_OK);
    CHECK(kt_lower(a, &p1, &prog1, &err) == KT_OK);
    CHECK(kt_cpu_state_init(&st, a, &err) == KT_OK);
    CHECK(kt_cpu_state_init(&ref, a, &err) == KT_OK);
    CHECK(kt_cpu_state_init(&stb, b, &err) == KT_OK);
    CHECK(kt_cpu_state_init(&stc, c, &err) == KT_OK);
    kt_cpu_fill_inputs(a, &st, 1);
    kt_cpu_fill_inputs(a, &ref, 1);
    kt_cpu_fill_inputs(b, &stb, 1);
    kt_cpu_fill_inputs(c, &stc, 1);

    /* plans of graph b for graph a: verification, 2 devices, 1 device */
    expect_invalid("verify_program, plan of b",
                   kt_cpu_verify_program(a, &q, &prog, NULL, &rep, &err), &err,
                   "tensors");
    expect_invalid("run_partitioned, plan of b",
                   kt_cpu_run_partitioned(a, &q, &prog, &st, NULL, &dv, &err),
                   &err, "tensors");
    expect_invalid("run_partitioned, 1-device plan of b",
                   kt_cpu_run_partitioned(a, &q1, &prog1, &st, NULL, &dv, &err),
                   &err, "tensors");
    /* states of graphs b (fewer tensors) and c (other sizes) */
    expect_invalid("run_partitioned, leaves of b",
                   kt_cpu_run_partitioned(a, &p, &prog, &stb, NULL, &dv, &err),
                   &err, "leaves");
    expect_invalid("run_partitioned, leaves of c",
                   kt_cpu_run_partitioned(a, &p, &prog, &stc, NULL, &dv, &err),
                   &err, "tensor x");
    expect_invalid("run_serial, state of b",
                   kt_cpu_run_serial(a, &stb, NULL, &err), &err, "state");
    expect_invalid("run_serial, state of c",
                   kt_cpu_run_serial(a, &stc, NULL, &err), &err, "tensor x");
    expect_invalid("run_op, state of c", kt_cpu_run_op(a, 0, &stc, NULL, &err),
                   &err, "tensor x");
    expect_invalid("state_check, state of c", kt_cpu_state_check(a, &stc, &err),
                   &err, "tensor x");
    CHECK(kt_cpu_state_check(a, &st, &err) == KT_OK);
    /* ops that do not exist */
    expect_invalid("run_op 7", kt_cpu_run_op(a, 7, &st, NULL, &err), &err,
                   "op 7");
    expect_invalid("run_op -1", kt_cpu_run_op(a, -1, &st, NULL, &err), &err,
                   "op -1");
    expect_invalid("run_op 2", kt_cpu_run_op(a, kt_graph_op_count(a), &st,
                                             NULL, &err), &err, "op 2");
    /* functions without a status: safe, and documented so */
    before = st.val[0][0];
    kt_cpu_fill_inputs(b, &st, 2);
    CHECK(st.val[0][0] == before);
    before = stb.val[0][0];
    kt_cpu_fill_inputs(a, &stb, 2);
    CHECK(stb.val[0][0] == before);
    CHECK(kt_cpu_input_value(a, 99, 0, 1) != kt_cpu_input_value(a, 99, 0, 1));
    CHECK(kt_cpu_input_value(a, -1, 0, 1) != kt_cpu_input_value(a, -1, 0, 1));
    CHECK(kt_cpu_input_value(a, 3, 0, 1) == kt_cpu_input_value(a, 3, 0, 1));

    /* the comparison: graph, reference and devices must agree */
    CHECK(kt_cpu_run_serial(a, &ref, NULL, &err) == KT_OK);
    if (kt_cpu_run_partitioned(a, &p, &prog, &st, NULL, &dv, &err) == KT_OK) {
        kt_box keep = dv.box[0];
        memset(&rep, 0, sizeof rep);
        rep.bytes_ok = 1;
        CHECK(kt_cpu_compare(a, &ref, &dv, 1e-9, 1e-7, &rep, &err) == KT_OK);
        CHECK(rep.values_ok && rep.compared > 0);
        expect_invalid("compare, graph b",
                       kt_cpu_compare(b, &stb, &dv, 1e-9, 1e-7, &rep, &err),
                       &err, "devices");
        expect_invalid("compare, reference of b",
                       kt_cpu_compare(a, &stb, &dv, 1e-9, 1e-7, &rep, &err),
                       &err, "reference");
        dv.box[0].r[0].hi = 1000;
        expect_invalid("compare, a box past its tensor",
                       kt_cpu_compare(a, &ref, &dv, 1e-9, 1e-7, &rep, &err),
                       &err, "tile of x");
        dv.box[0] = keep;
        kt_cpu_devices_free(&dv);
    } else {
        CHECKF(0, "run_partitioned: %s", err.message);
    }
    kt_cpu_state_free(&st);
    kt_cpu_state_free(&ref);
    kt_cpu_state_free(&stb);
    kt_cpu_state_free(&stc);
    kt_program_free(&prog);
    kt_program_free(&prog1);
    kt_plan_free(&p);
    kt_plan_free(&p1);
    kt_plan_free(&q);
    kt_plan_free(&q1);
graphs:
    kt_graph_destroy(a);
    kt_graph_destroy(b);
    kt_graph_destroy(c);
}

/* A private copy of prog's arrays, to alter. */
static int program_copy(const kt_program *prog, kt_program *c) {
    *c = *prog;
    c->pairs = NULL;
    c->npairs = 0;
    c->task = (kt_task *)malloc(sizeof *c->task * ((size_t)prog->ntask + 1));
    c->xfer = (kt_transfer *)malloc(sizeof *c->xfer *
                                    ((size_t)prog->nxfer + 1));
    c->xfer_first = (int *)malloc(sizeof(int) * ((size_t)prog->nops + 1));
    if (!c->task || !c->xfer || !c->xfer_first) return 0;
    memcpy(c->task, prog->task, sizeof *c->task * (size_t)prog->ntask);
    memcpy(c->xfer, prog->xfer, sizeof *c->xfer * (size_t)prog->nxfer);
    memcpy(c->xfer_first, prog->xfer_first,
           sizeof(int) * ((size_t)prog->nops + 1));
    return 1;
}

static void program_copy_free(kt_program *c) {
    free(c->task);
    free(c->xfer);
    free(c->xfer_first);
}

/* The ways a program can be malformed (the field each message names). */
static const struct {
    const char *what, *needle;
} malformed[] = {
    {"xfer_first past the end", "xfer_first"},
    {"xfer_first negative", "xfer_first"},
    {"nxfer -1", "nxfer is -1"},
    {"region backwards", "region"},
    {"region INT64_MIN..INT64_MAX", "region"},
    {"region below 0", "region"},
    {"task box backwards", "task 3"},
    {"task box 2^40", "task 3"},
    {"task box below 0", "task 1"},
    {"transfer kind 9", "kind 9"},
    {"transfer bytes -100", "-100 bytes"},
    {"transfer of another op", "names op"},
    {"transfer to its sender", "devices"},
    {"transfer role 99", "role 99"},
    {"a task missing", "tasks"},
    {"task of op 5000", "task 2"},
    {"program for 2 devices", "devices"},
};
#define NMALFORMED ((int)(sizeof malformed / sizeof malformed[0]))

/* Malformation k of program c (transfer x of op `op`). */
static void malform(kt_program *c, int k, int x) {
    int op = c->xfer[x].op;
    switch (k) {
    case 0: c->xfer_first[op + 1] = c->nxfer + 1000; break;
    case 1: c->xfer_first[op] = -5; break;
    case 2: c->nxfer = -1; break;
    case 3: c->xfer[x].region.r[0].lo = 3; c->xfer[x].region.r[0].hi = 1; break;
    case 4:
        c->xfer[x].region.r[0].lo = INT64_MIN;
        c->xfer[x].region.r[0].hi = INT64_MAX;
        break;
    case 5: c->xfer[x].region.r[0].lo = -3; break;
    case 6: c->task[3].box[0].lo = 5; c->task[3].box[0].hi = 2; break;
    case 7: c->task[3].box[0].lo = 0; c->task[3].box[0].hi = (int64_t)1 << 40; break;
    case 8: c->task[1].box[0].lo = -50; break;
    case 9: c->xfer[x].kind = (kt_xfer_kind)9; break;
    case 10: c->xfer[x].bytes = -100; break;
    case 11: c->xfer[x].op = (op + 1) % c->nops; break;
    case 12: c->xfer[x].dst = c->xfer[x].src; break;
    case 13: c->xfer[x].role = 99; break;
    case 14: c->ntask--; break;
    case 15: c->task[2].op = 5000; break;
    case 16: c->ndev = 2; break;
    }
}

/* Every malformation is refused before anything runs or is allocated:
   before, some returned KT_OK (xfer_first past the end or negative,
   nxfer -1, backwards regions and boxes), some overflowed (a region of
   INT64_MIN..INT64_MAX) or allocated 16 TB (a task box to 2^40). */
static void test_malformed_programs(void) {
    kt_graph *g = NULL;
    kt_error err;
    kt_factors f;
    kt_plan p;
    kt_search_options so;
    kt_program prog;
    kt_cpu_state leaves;
    int k;
    if (kt_zoo_build("mlp:layers=2,hidden=8,batch=8", &g, &err) != KT_OK) {
        CHECKF(0, "mlp: %s", err.message);
        return;
    }
    memset(&so, 0, sizeof so);
    CHECK(kt_factors_default(4, &f, &err) == KT_OK);
    CHECK(kt_plan_search(g, &f, &so, &p, &err) == KT_OK);
    CHECK(kt_lower(g, &p, &prog, &err) == KT_OK);
    CHECK(prog.nxfer > 2 && prog.ntask > 3);
    CHECK(kt_cpu_state_init(&leaves, g, &err) == KT_OK);
    kt_cpu_fill_inputs(g, &leaves, 1);
    for (k = 0; k < NMALFORMED; k++) {
        kt_program c;
        kt_cpu_devices dv;
        kt_cpu_report rep;
        char label[96];
        if (program_copy(&prog, &c)) {
            malform(&c, k, prog.nxfer / 2);
            snprintf(label, sizeof label, "run_partitioned, %s",
                     malformed[k].what);
            expect_invalid(label, kt_cpu_run_partitioned(g, &p, &c, &leaves,
                                                         NULL, &dv, &err),
                           &err, malformed[k].needle);
            snprintf(label, sizeof label, "verify_program, %s",
                     malformed[k].what);
            expect_invalid(label, kt_cpu_verify_program(g, &p, &c, NULL, &rep,
                                                        &err),
                           &err, malformed[k].needle);
        }
        program_copy_free(&c);
    }
    kt_cpu_state_free(&leaves);
    kt_program_free(&prog);
    kt_plan_free(&p);
    kt_graph_destroy(g);
}

/* ------------------------------------------------ staged programs */

#include "kt_test_staged.h"

/* The ways a staged program can be wrong (what the message names, and
   the status: malformed fields are invalid, a relay of what its sender
   never had is a lowering bug).  Transfer 1 is W's relay to device 1,
   6 a stage-1 reduction.  The last three make a device forward or
   reduce at one stage what arrives at that stage. */
static const struct {
    const char *what, *needle;
    kt_status status;
} misstaged[] = {
    {"a relay that reduces", "a relay is a copy after stage 0",
     KT_ERR_INVALID},
    {"a relay at stage 0", "stage 0, relay 1", KT_ERR_INVALID},
    {"stage KT_XFER_STAGES", "a stage of 0..", KT_ERR_INVALID},
    {"stage -1", "stage -1", KT_ERR_INVALID},
    {"relay 2", "relay 2", KT_ERR_INVALID},
    {"a relay of an input the sender never received",
     "in what the sender received", KT_ERR_INTERNAL},
    {"a relay at the first stage of the result copies", "first stage",
     KT_ERR_INTERNAL},
    /* read and written at one stage (kt__check_stage_hazards) */
    {"a relay of an input arriving at its own stage",
     "at stage 1, transfer 1 of W (device 0 to 1) reads a region of device "
     "0's input buffer that transfer 0 (device 2 to 0) writes",
     KT_ERR_INTERNAL},
    {"a partial sum sent on at the stage it is reduced",
     "at stage 1, transfer 6 of s (device 2 to 0) reads a region of device "
     "2's partial result that transfer 5 (device 3 to 2) writes",
     KT_ERR_INTERNAL},
    {"a sum relayed at the stage it arrives",
     "at stage 3, transfer 18 of s (device 2 to 3) reads a region of device "
     "2's tile that transfer 17 (device 0 to 2) writes",
     KT_ERR_INTERNAL},
};
#define NMISSTAGED ((int)(sizeof misstaged / sizeof misstaged[0]))

static void misstage(const kt_graph *g, kt_program *c, int k) {
    kt_transfer *t = &c->xfer[1];
    int x = kt_graph_find_tensor(g, "x"), i;
    switch (k) {
    case 0: c->xfer[6].relay = 1; break;
    case 1: t->stage = 0; break;
    case 2: c->xfer[0].stage = KT_XFER_STAGES; break;
    case 3: c->xfer[0].stage = -1; break;
    case 4: t->relay = 2; break;
    case 5: /* device 0 relays device 1's rows of x, which it never had */
        t->role = 0;
        t->tensor = x;
        t->region.r[0].lo = 2;
        t->region.r[0].hi = 4;
        t->region.r[1].hi = kt_graph_tensor(g, x)->shape[1];
        break;
    case 6:
        for (i = c->xfer_first[1]; i < c->nxfer; i++)
            if (c->xfer[i].kind == KT_XFER_COPY) c->xfer[i].stage = 3;
        break;
    case 7: c->xfer[0].stage = 1; break;  /* W into device 0, relayed by 1 */
    case 8: c->xfer[5].stage = 1; break;  /* into device 2, sent on by 6   */
    case 9: c->xfer[17].stage = 3; break; /* into device 2, relayed by 18  */
    }
}

/* A staged program (staged_program: a relayed fetch, a two-level
   reduction tree and a relayed broadcast, stages 0 to 3) runs with the
   values of the serial run and moves exactly its bytes, pair by pair;
   on three seeds and again run by run (a missed barrier shows as a
   flaky value, or a hang).  Every misstaging is refused before anything
   runs, naming the transfer. */
static void test_staged_program(void) {
    kt_graph *g = parse("staged", staged_src);
    kt_plan p;
    kt_program c;
    kt_cpu_state leaves;
    kt_cpu_devices dev;
    kt_cpu_verify_options o;
    kt_cpu_report r;
    kt_error err;
    uint64_t seed;
    int k;
    if (!g) return;
    if (!staged_plan(g, &p)) {
        kt_graph_destroy(g);
        return;
    }
    if (!staged_program(g, &p, &c)) goto done;
    kt_cpu_verify_defaults(&o);
    for (seed = 1; seed <= (under_valgrind() ? 1u : 20u); seed++) {
        o.seed = seed;
        if (kt_cpu_verify_program(g, &p, &c, &o, &r, &err) != KT_OK) {
            CHECKF(0, "staged: %s", err.message);
            break;
        }
        CHECKF(r.values_ok && r.compared > 0, "staged, seed %llu: %lld of "
               "%lld elements differ, first in %s on device %lld",
               (unsigned long long)seed, (long long)r.mismatches,
               (long long)r.compared,
               r.nreported ? kt_graph_tensor(g, r.first[0].tensor)->name : "-",
               r.nreported ? (long long)r.first[0].device : -1LL);
        CHECKF(r.bytes_moved == c.total_bytes && r.bytes_ok,
               "staged: moved %lld bytes, the program %lld, the plan %lld",
               (long long)r.bytes_moved, (long long)c.total_bytes,
               (long long)r.predicted_bytes);
    }
    CHECK(kt_cpu_state_init(&leaves, g, &err) == KT_OK);
    kt_cpu_fill_inputs(g, &leaves, 3);
    if (kt_cpu_run_partitioned(g, &p, &c, &leaves, NULL, &dev, &err) ==
        KT_OK) {
        kt_test_pairs_match("staged", &dev, &c);
        kt_cpu_devices_free(&dev);
    } else
        CHECKF(0, "staged: %s", err.message);
    for (k = 0; k < NMISSTAGED; k++) {
        kt_program bad;
        kt_status s;
        if (program_copy(&c, &bad)) {
            misstage(g, &bad, k);
            s = kt_cpu_verify_program(g, &p, &bad, NULL, &r, &err);
            CHECKF(s == misstaged[k].status &&
                       strstr(err.message, misstaged[k].needle),
                   "staged, %s: status %d '%s', expected %d naming '%s'",
                   misstaged[k].what, (int)s, s ? err.message : "",
                   (int)misstaged[k].status, misstaged[k].needle);
            s = kt_cpu_run_partitioned(g, &p, &bad, &leaves, NULL, &dev, &err);
            CHECKF(s == misstaged[k].status, "staged, %s: run status %d",
                   misstaged[k].what, (int)s);
            CHECK(strstr(err.message, "op ") != NULL &&
                  strstr(err.message, "transfer ") != NULL);
        }
        program_copy_free(&bad);
    }
    kt_cpu_state_free(&leaves);
    kt_program_free(&c);
done:
    kt_plan_free(&p);
    kt_graph_destroy(g);
}

/* Whether some transfer of c reads a region another writes at its
   stage, by comparing every pair (what kt__check_stage_hazards finds by
   a sweep): a relay or a reduction reads from its sender's buffer --
   its input buffer of that role, its partial result, its tile of the
   result -- which a transfer of the same part into that device writes. */
static int hazard_brute_force(const kt_graph *g, const kt_program *c) {
    int a, b, d;
    for (a = 0; a < c->nxfer; a++) {
        const kt_transfer *r = &c->xfer[a];
        int rank = kt_graph_tensor(g, r->tensor)->rank;
        if (!r->relay && r->kind != KT_XFER_REDUCE) continue;
        for (b = 0; b < c->nxfer; b++) {
            const kt_transfer *w = &c->xfer[b];
            int meet = 1;
            if (w->op != r->op || w->dst != r->src || w->stage != r->stage ||
                kt__xfer_part(g, w) != kt__xfer_part(g, r) ||
                (kt__xfer_part(g, r) == KT__INPUTS && w->role != r->role))
                continue;
            for (d = 0; d < rank; d++)
                meet &= r->region.r[d].lo < w->region.r[d].hi &&
                        w->region.r[d].lo < r->region.r[d].hi &&
                        r->region.r[d].lo < r->region.r[d].hi &&
                        w->region.r[d].lo < w->region.r[d].hi;
            if (meet) return 1;
        }
    }
    return 0;
}

/* The hazard check's sweep (one dimension, equal regions skipped, lists
   dropped as the sweep passes them) against every pair: random
   transfers of one op's three roles among 4 devices and 3 stages, their
   regions cut on a coarse grid so that they often touch, repeat or
   meet, and some empty. */
static void test_stage_hazard_sweep(void) {
    kt_graph *g = parse("staged", staged_src);
    uint64_t rng = 7;
    kt_transfer xs[40];
    int first[3], trial, found = 0, agree = 0, x, d;
    if (!g) return;
    for (trial = 0; trial < 4000; trial++) {
        kt_program c;
        kt_error err;
        int n = 2 + (int)(xorshift64(&rng) % 39), haz;
        kt_status s;
        memset(&c, 0, sizeof c);
        for (x = 0; x < n; x++) {
            kt_transfer *t = &xs[x];
            const kt_tensor *tt;
            memset(t, 0, sizeof *t);
            t->op = 0;
            t->role = (int)(xorshift64(&rng) % 3);
            t->tensor = t->role < 2 ? kt_graph_op(g, 0)->input[t->role]
                                    : kt_graph_op(g, 0)->output;
            tt = kt_graph_tensor(g, t->tensor);
            t->src = (int64_t)(xorshift64(&rng) % 4);
            t->dst = (t->src + 1 + (int64_t)(xorshift64(&rng) % 3)) % 4;
            t->stage = (int)(xorshift64(&rng) % 3);
            t->kind = t->role == 2 && xorshift64(&rng) % 2 ? KT_XFER_REDUCE
                                                          : KT_XFER_COPY;
            t->relay = t->kind == KT_XFER_COPY && xorshift64(&rng) % 2;
            for (d = 0; d < tt->rank; d++) {
                int64_t a = (int64_t)(xorshift64(&rng) % 3) * tt->shape[d] / 3,
                        b = (int64_t)(xorshift64(&rng) % 4) * tt->shape[d] / 3;
                t->region.r[d].lo = a < b ? a : b;
                t->region.r[d].hi = a < b ? b : a + (a == b);
                if (xorshift64(&rng) % 16 == 0) /* empty: meets nothing */
                    t->region.r[d].hi = t->region.r[d].lo;
            }
        }
        first[0] = 0;
        first[1] = first[2] = n;
        c.ndev = 4;
        c.nops = 2;
        c.nxfer = n;
        c.xfer = xs;
        c.xfer_first = first;
        s = kt__check_stage_hazards(g, &c, &err);
        haz = hazard_brute_force(g, &c);
        found += haz;
        if ((s == KT_ERR_INTERNAL) == haz &&
            (s == KT_OK || strstr(err.message, "reads a region")))
            agree++;
        else if (trial - agree < 3)
            CHECKF(0, "trial %d, %d transfers: the sweep says %d '%s', every "
                   "pair %d", trial, n, (int)s, s ? err.message : "", haz);
    }
    CHECKF(agree == trial && found > trial / 10 && found < trial * 9 / 10,
           "%d of %d trials agree, %d with a hazard", agree, trial, found);
    kt_graph_destroy(g);
}

/* kt_cpu_run_swapped: the same checks of its plan, program and leaves,
   and a pool with a negative object count (read out of bounds before) or
   sizes near INT64_MAX (summed into a signed overflow before the check). */
static void test_swap_arguments(void) {
    kt_graph *g = NULL, *b;
    kt_error err;
    kt_factors f;
    kt_plan p;
    kt_search_options so;
    kt_program prog, c;
    kt_swap_model m;
    kt_swap_alloc al;
    kt_swap_options o;
    kt_swap_result r;
    kt_cpu_swap_report sr;
    kt_cpu_devices dv;
    kt_cpu_state leaves, lb;
    int64_t minimal = 0, keep;
    int n;
    if (kt_zoo_build("mlp:layers=2,hidden=8,batch=8", &g, &err) != KT_OK) {
        CHECKF(0, "mlp: %s", err.message);
        return;
    }
    b = parse("graph b", "input x[4,6]\ny[i,j] = tanh(x[i,j])\n");
    memset(&so, 0, sizeof so);
    memset(&o, 0, sizeof o);
    CHECK(kt_factors_default(4, &f, &err) == KT_OK);
    CHECK(kt_plan_search(g, &f, &so, &p, &err) == KT_OK);
    CHECK(kt_lower(g, &p, &prog, &err) == KT_OK);
    CHECK(kt_swap_model_from_program(g, &p, &prog, NULL, &m, &err) == KT_OK);
    CHECK(kt_swap_alloc_minimal(&m, &al, &minimal, &err) == KT_OK);
    kt_swap_alloc_free(&al);
    o.memory = minimal * 2;
    CHECK(kt_swap_search(&m, KT_SWAP_SEARCH_NONE, &o, &r, &err) == KT_OK);
    CHECK(kt_cpu_state_init(&leaves, g, &err) == KT_OK);
    kt_cpu_fill_inputs(g, &leaves, 1);
    /* the plan runs as it is */
    CHECKF(kt_cpu_run_swapped(g, &p, &prog, &m, &r.plan, o.memory, &leaves,
                              NULL, &dv, &sr, &err) == KT_OK,
           "%s", err.message);
    kt_cpu_devices_free(&dv);
    kt_cpu_swap_report_free(&sr);
    CHECK(r.plan.nobjects > 0);
    n = r.plan.nobjects;
    r.plan.nobjects = -1;
    expect_invalid("run_swapped, -1 objects",
                   kt_cpu_run_swapped(g, &p, &prog, &m, &r.plan, o.memory,
                                      &leaves, NULL, &dv, &sr, &err),
                   &err, "-1 pool objects");
    r.plan.nobjects = n;
    keep = r.plan.object_bytes[0];
    r.plan.object_bytes[0] = INT64_MAX - 7;
    expect_invalid("run_swapped, an object of INT64_MAX - 7 bytes",
                   kt_cpu_run_swapped(g, &p, &prog, &m, &r.plan, o.memory,
                                      &leaves, NULL, &dv, &sr, &err),
                   &err, "arena");
    r.plan.object_bytes[0] = keep;
    if (b && kt_cpu_state_init(&lb, b, &err) == KT_OK) {
        kt_cpu_fill_inputs(b, &lb, 1);
        expect_invalid("run_swapped, leaves of another graph",
                       kt_cpu_run_swapped(g, &p, &prog, &m, &r.plan, o.memory,
                                          &lb, NULL, &dv, &sr, &err),
                       &err, "leaves");
        kt_cpu_state_free(&lb);
    }
    if (program_copy(&prog, &c)) {
        malform(&c, 7, prog.nxfer / 2); /* a task box to 2^40 */
        expect_invalid("run_swapped, task box 2^40",
                       kt_cpu_run_swapped(g, &p, &c, &m, &r.plan, o.memory,
                                          &leaves, NULL, &dv, &sr, &err),
                       &err, "task 3");
    }
    program_copy_free(&c);
    kt_cpu_state_free(&leaves);
    kt_swap_result_free(&r);
    kt_swap_model_free(&m);
    kt_program_free(&prog);
    kt_plan_free(&p);
    kt_graph_destroy(g);
    kt_graph_destroy(b);
}

/* A max, min or product over a split reduction variable leaves partial
   maxima (minima, products) on the devices: the REDUCE transfers must
   combine them with the op's reducer, not add them (sched.h's lowering
   calls every reduction "partial sums"). */
static void test_split_reducers(void) {
    kt_graph *g = parse("reducers", "input z[5,9]\n"
                        "m[i] = max(k) z[i,k]\n"
                        "n[i] = min(k) z[i,k]\n"
                        "p[i] = prod(k) z[i,k] + 1.5\n"
                        "s[i] = sum(k) z[i,k]\n");
    kt_factors f;
    kt_plan p;
    kt_program prog;
    kt_error err;
    int o, x, reduces = 0, dev;
    for (dev = 2; dev <= 3 && g; dev++) {
        char label[64];
        CHECK(kt_factors_default(dev, &f, &err) == KT_OK);
        CHECK(kt_plan_init(&p, g, &f, &err) == KT_OK);
        /* z split along k; every op splits k; results replicated */
        CHECK(kt_tiling_parse("S1", &p.tiling[kt_graph_find_tensor(g, "z")],
                              &err) == KT_OK);
        for (o = 0; o < kt_graph_op_count(g); o++) {
            const kt_op *op = kt_graph_op(g, o);
            CHECK(kt_tiling_parse("R", &p.tiling[op->output], &err) == KT_OK);
            p.split[o * KT_MAX_CUTS] = 1; /* k */
        }
        CHECK(kt_lower(g, &p, &prog, &err) == KT_OK);
        for (x = 0; x < prog.nxfer; x++)
            if (prog.xfer[x].kind == KT_XFER_REDUCE) reduces++;
        kt_program_free(&prog);
        snprintf(label, sizeof label, "split max/min/prod on %d devices", dev);
        verify_plan(label, g, &p, 5);
        kt_plan_free(&p);
    }
    CHECK(reduces > 0);
    kt_graph_destroy(g);
}

/* The same seed gives the same report; another seed other inputs. */
static void test_determinism(void) {
    kt_graph *g = NULL;
    kt_error err;
    kt_factors f;
    kt_plan p;
    kt_search_options so;
    kt_cpu_verify_options o;
    kt_cpu_report a, b;
    if (kt_zoo_build("mlp:layers=2,hidden=8,batch=8", &g, &err) != KT_OK) return;
    memset(&so, 0, sizeof so);
    kt_factors_default(4, &f, &err);
    CHECK(kt_plan_search(g, &f, &so, &p, &err) == KT_OK);
    kt_cpu_verify_defaults(&o);
    CHECK(kt_cpu_verify(g, &p, &o, &a, &err) == KT_OK);
    CHECK(kt_cpu_verify(g, &p, &o, &b, &err) == KT_OK);
    CHECK(a.ok && b.ok && a.max_rel_error == b.max_rel_error);
    CHECK(kt_cpu_input_value(g, 0, 3, 1) == kt_cpu_input_value(g, 0, 3, 1));
    CHECK(kt_cpu_input_value(g, 0, 3, 1) != kt_cpu_input_value(g, 0, 3, 2));
    kt_plan_free(&p);
    kt_graph_destroy(g);
}

/* A plan of g on 3 devices with every op's variable `var` split (a
   reduction: partial sums reduced over the devices), `in` tiled along
   `dim` and everything else replicated. */
static int split_reduction_plan(const kt_graph *g, const char *in, int dim,
                                int var, kt_plan *p) {
    kt_factors f;
    kt_error err;
    int o, t;
    char tiling[8];
    if (kt_factors_default(3, &f, &err) != KT_OK ||
        kt_plan_init(p, g, &f, &err) != KT_OK)
        return 0;
    for (t = 0; t < kt_graph_tensor_count(g); t++)
        kt_tiling_parse("R", &p->tiling[t], &err);
    snprintf(tiling, sizeof tiling, "S%d", dim);
    kt_tiling_parse(tiling, &p->tiling[kt_graph_find_tensor(g, in)], &err);
    for (o = 0; o < kt_graph_op_count(g); o++)
        p->split[o * KT_MAX_CUTS] =
            kt_graph_op(g, o)->reducer != KT_REDUCE_NONE ? var
                                                         : KT_SPLIT_REPLICATE;
    return kt_plan_eval(g, p, &err) == KT_OK;
}

/* Every reduction transfer of p dropped in turn must fail verification
   with absolute tolerance `tol`: the count of those that passed. */
static int dropped_reductions_passing(const kt_graph *g, const kt_plan *p,
                                      double tol, int *reductions) {
    kt_program prog;
    kt_error err;
    int which, passed = 0;
    *reductions = 0;
    if (kt_lower(g, p, &prog, &err) != KT_OK) return -1;
    for (which = 0; which < prog.nxfer; which++) {
        kt_program broken = prog;
        kt_transfer *x;
        int *first, i, n;
        kt_cpu_verify_options o;
        kt_cpu_report r;
        if (prog.xfer[which].kind != KT_XFER_REDUCE) continue;
        x = (kt_transfer *)malloc(sizeof *x * (size_t)prog.nxfer);
        first = (int *)malloc(sizeof(int) * (size_t)(prog.nops + 1));
        if (!x || !first) {
            free(x);
            free(first);
            break;
        }
        for (i = 0, n = 0; i < prog.nxfer; i++)
            if (i != which) x[n++] = prog.xfer[i];
        for (i = 0; i <= prog.nops; i++)
            first[i] = prog.xfer_first[i] - (prog.xfer_first[i] > which);
        broken.xfer = x;
        broken.nxfer = n;
        broken.xfer_first = first;
        broken.pairs = NULL;
        broken.npairs = 0;
        kt_cpu_verify_defaults(&o);
        o.tol = tol;
        (*reductions)++;
        if (kt_cpu_verify_program(g, p, &broken, &o, &r, &err) == KT_OK &&
            r.values_ok)
            passed++;
        free(x);
        free(first);
    }
    kt_program_free(&prog);
    return passed;
}

/* Verifies the DP plan on 3 devices of the model `src` with the default
   tolerances into *r: 1 when it ran (a failed check otherwise). */
static int verify_text_model(const char *name, const char *src,
                             kt_cpu_report *r) {
    kt_graph *g = parse(name, src);
    kt_factors f;
    kt_plan p;
    kt_search_options so;
    kt_cpu_verify_options o;
    kt_error err;
    int ran = 0;
    memset(&so, 0, sizeof so);
    kt_factors_default(3, &f, &err);
    if (g && kt_plan_search(g, &f, &so, &p, &err) == KT_OK) {
        kt_cpu_verify_defaults(&o);
        ran = kt_cpu_verify(g, &p, &o, r, &err) == KT_OK;
        CHECKF(ran, "%s: %s", name, err.message);
        kt_plan_free(&p);
    }
    kt_graph_destroy(g);
    return ran;
}

/* kt_cpu_compare's bound, element by element: |got - ref| <= tol + |ref| *
   eps, inclusive, eps scaled by |ref|; a NaN on one side only is a
   mismatch (an element nobody wrote), not "unchecked".  tol 0.5, eps
   0.25, ref 2: bound 1.0 (all values exact in binary). */
static void test_compare_bound(void) {
    static const struct { double got; int agree; } cases[] = {
        {3.0, 1},    /* diff 1.0 == bound: agrees (<=, not <)         */
        {1.0, 1},    /* the same below                                 */
        {2.75, 1},   /* diff 0.75 > tol: agrees only by |ref| * eps    */
        {3.0625, 0}, /* just past the bound                            */
        {0.9375, 0}};
    kt_graph *g = parse("compare bound", "input x[4]\ny[i] = x[i] * 2\n");
    kt_factors f;
    kt_plan p;
    kt_program prog;
    kt_cpu_state ref, st;
    kt_cpu_devices dv;
    kt_cpu_report rep;
    kt_error err;
    int y, c, nt;
    if (!g) return;
    y = kt_graph_find_tensor(g, "y");
    nt = kt_graph_tensor_count(g);
    CHECK(kt_factors_default(1, &f, &err) == KT_OK);
    CHECK(kt_plan_init(&p, g, &f, &err) == KT_OK);
    CHECK(kt_lower(g, &p, &prog, &err) == KT_OK);
    CHECK(kt_cpu_state_init(&ref, g, &err) == KT_OK);
    CHECK(kt_cpu_state_init(&st, g, &err) == KT_OK);
    kt_cpu_fill_inputs(g, &ref, 1);
    kt_cpu_fill_inputs(g, &st, 1);
    CHECK(kt_cpu_run_serial(g, &ref, NULL, &err) == KT_OK);
    CHECK(kt_cpu_run_partitioned(g, &p, &prog, &st, NULL, &dv, &err) == KT_OK);
    ref.val[y][0] = 2.0;
    for (c = 0; c < 6; c++) {
        double got = c < 5 ? cases[c].got : NAN;
        int agree = c < 5 ? cases[c].agree : 0;
        dv.tile[0 * nt + y][0] = got;
        memset(&rep, 0, sizeof rep);
        rep.bytes_ok = 1;
        CHECK(kt_cpu_compare(g, &ref, &dv, 0.5, 0.25, &rep, &err) == KT_OK);
        CHECKF(rep.values_ok == agree && rep.ok == agree &&
                   rep.mismatches == !agree && rep.unchecked == 0,
               "got %g, ref 2, tol 0.5, eps 0.25: values_ok %d, %lld "
               "mismatches, %lld unchecked (want %d, %d, 0)", got,
               rep.values_ok, (long long)rep.mismatches,
               (long long)rep.unchecked, agree, !agree);
        /* agreement iff max_rel_error <= eps: 1.0 / (2 + 0.5/0.25) */
        if (c == 0) CHECK(rep.max_rel_error == 0.25 && rep.worst_tensor == y);
        if (c == 5) CHECK(rep.max_rel_error == INFINITY && rep.nreported == 1);
    }
    kt_cpu_devices_free(&dv);
    kt_cpu_state_free(&ref);
    kt_cpu_state_free(&st);
    kt_program_free(&prog);
    kt_plan_free(&p);
    kt_graph_destroy(g);
}


/* tol is absolute: a partial sum dropped from a product of tiny values,
   or from a product reduction far below its factors, moves values by less
   than the default 1e-9 and passes (a known limit, README
   "Verification"); with tol 0, the check relative to each value alone,
   every drop fails and the right program still passes.  Values NaN in
   the serial run itself cannot be checked and fail with a count; equal
   infinities agree (inf - inf is NaN, which failed them). */
static void test_tolerance(void) {
    static const struct {
        const char *name, *src, *in;
        int dim, var;
    } cases[] = {
        {"tiny product-sum",
         "input x[6,40]\nweight W[40,8]\n"
         "h[i,k] = sum(j) x[i,j] * W[j,k] * 0.000000001\n",
         "x", 1, 2},
        {"product of 120 factors",
         "input x[4,120]\np[i] = prod(j) x[i,j]\n", "x", 1, 1}};
    int c;
    for (c = 0; c < 2; c++) {
        kt_graph *g = parse(cases[c].name, cases[c].src);
        kt_plan p;
        int reductions = 0, passed;
        if (!g) continue;
        if (!split_reduction_plan(g, cases[c].in, cases[c].dim, cases[c].var,
                                  &p)) {
            CHECKF(0, "%s: no plan", cases[c].name);
            kt_graph_destroy(g);
            continue;
        }
        verify_plan(cases[c].name, g, &p, 1); /* the right program passes */
        {
            kt_cpu_verify_options o;
            kt_cpu_report r;
            kt_error err;
            kt_cpu_verify_defaults(&o);
            o.tol = 0;
            CHECKF(kt_cpu_verify(g, &p, &o, &r, &err) == KT_OK && r.ok,
                   "%s with tol 0: %lld mismatches", cases[c].name,
                   (long long)r.mismatches);
        }
        passed = dropped_reductions_passing(g, &p, 0, &reductions);
        CHECKF(reductions > 0 && passed == 0, "%s: %d of %d dropped partial "
               "sums passed verification", cases[c].name, passed, reductions);
        kt_plan_free(&p);
        kt_graph_destroy(g);
    }
    {   /* NaN in the serial run: unchecked, not agreeing */
        kt_cpu_report r;
        if (verify_text_model("log", "input x[5,7]\nweight W[7,3]\n"
                              "l[i,j] = log(x[i,j])\n"
                              "y[i,k] = sum(j) l[i,j] * W[j,k]\n", &r))
            CHECKF(!r.values_ok && !r.ok && r.unchecked > 0 &&
                       r.mismatches == 0 && r.first_unchecked == 2 /* l */,
                   "values_ok %d, %lld unchecked (first in %d), %lld "
                   "mismatches", r.values_ok, (long long)r.unchecked,
                   r.first_unchecked, (long long)r.mismatches);
    }
    {   /* equal infinities agree; an exact run reports no worst tensor */
        kt_cpu_report r;
        if (verify_text_model("exp", "input x[5,7]\n"
                              "e[i,j] = exp(x[i,j] * 1000)\n"
                              "y[i,j] = e[i,j] * 2\n", &r))
            CHECKF(r.ok && r.mismatches == 0 && r.unchecked == 0 &&
                       r.worst_tensor == -1 && r.max_rel_error == 0,
                   "ok %d, %lld mismatches, worst %d", r.ok,
                   (long long)r.mismatches, r.worst_tensor);
    }
}

/* A tolerance that is NaN, infinite or negative is refused before any
   run (a NaN one failed every element, without an error). */
static void test_tolerance_refused(void) {
    kt_graph *g = parse("tol", "input x[4,6]\nweight W[6,2]\n"
                               "y[i,k] = sum(j) x[i,j] * W[j,k]\n");
    kt_factors f;
    kt_plan p;
    kt_error err;
    int i;
    if (!g) return;
    kt_factors_default(2, &f, &err);
    CHECK(kt_plan_search(g, &f, NULL, &p, &err) == KT_OK);
    for (i = 0; i < 4; i++) {
        kt_cpu_verify_options o;
        kt_cpu_report r;
        kt_status s;
        kt_cpu_verify_defaults(&o);
        if (i == 0) o.tol = nan("");
        else if (i == 1) o.eps = nan("");
        else if (i == 2) o.tol = -1;
        else o.eps = HUGE_VAL;
        s = kt_cpu_verify(g, &p, &o, &r, &err);
        CHECKF(s == KT_ERR_INVALID && strstr(err.message, "tolerance"),
               "case %d: %d %s", i, s, err.message);
    }
    kt_plan_free(&p);
    kt_graph_destroy(g);
}

/* A graph kt_graph_finalize did not accept is refused: before, one whose
   activation was read and never produced verified as ok, the activation
   taken for an input. */
static void test_unfinalized_refused(void) {
    kt_graph *g = NULL;
    kt_error err;
    int64_t shape[1] = {8};
    kt_cpu_state st;
    kt_status s;
    kt_graph_create(&g, &err);
    kt_graph_add_tensor(g, "x", 1, shape, 4, KT_INPUT, &err);
    kt_graph_add_tensor(g, "h", 1, shape, 4, KT_ACTIVATION, &err);
    CHECK(kt_graph_add_op(g, "y[i] = relu(h[i]) + x[i]", 0, &err) == KT_OK);
    CHECK(kt_graph_finalize(g, &err) == KT_ERR_GRAPH);
    s = kt_cpu_check_graph(g, &err);
    CHECKF(s == KT_ERR_INVALID && strstr(err.message, "not finalized"), "%s",
           err.message);
    memset(&st, 0, sizeof st);
    s = kt_cpu_run_serial(g, &st, NULL, &err);
    CHECKF(s == KT_ERR_INVALID && strstr(err.message, "not finalized"), "%s",
           err.message);
    s = kt_cpu_run_op(g, 0, &st, NULL, &err);
    CHECKF(s == KT_ERR_INVALID && strstr(err.message, "not finalized"), "%s",
           err.message);
    kt_graph_destroy(g);
}

/* An op of more tensor reads than the per-op context holds is refused by
   name (KT_CPU_MAX_READS); one that autodiff wrote names its forward op's
   line, since it has none of its own. */
static void test_read_limit(void) {
    char src[4096];
    size_t n;
    int i;
    kt_graph *g;
    kt_cpu_state st;
    kt_error err;
    kt_status s;
    n = (size_t)snprintf(src, sizeof src, "input x[4]\ny[i] = x[i]");
    for (i = 1; i < KT_CPU_MAX_READS + 1; i++)
        n += (size_t)snprintf(src + n, sizeof src - n, " + x[i]");
    snprintf(src + n, sizeof src - n, "\n");
    g = parse("65 reads", src);
    if (g) {
        s = kt_cpu_check_graph(g, &err);
        CHECKF(s == KT_ERR_LIMIT && err.line == 2 &&
                   strstr(err.message, "op y: 65 tensor reads") &&
                   strstr(err.message, "KT_CPU_MAX_READS"),
               "%d %s", s, err.message);
        kt_graph_destroy(g);
    }
    /* d/dw of 40 nested tanh: each level's derivative reads its argument
       again, past 64 reads in the weight's gradient */
    n = (size_t)snprintf(src, sizeof src, "input x[4]\nweight w[4]\ny[i] = ");
    for (i = 0; i < 40; i++) n += (size_t)snprintf(src + n, sizeof src - n, "tanh(");
    n += (size_t)snprintf(src + n, sizeof src - n, "x[i] * w[i]");
    for (i = 0; i < 40; i++) n += (size_t)snprintf(src + n, sizeof src - n, ")");
    snprintf(src + n, sizeof src - n, "\nloss y\n");
    g = training("deep tanh", src);
    if (g) {
        memset(&st, 0, sizeof st);
        s = kt_cpu_run_serial(g, &st, NULL, &err);
        CHECKF(s == KT_ERR_LIMIT && strstr(err.message, "(autodiff's, for "
                                                        "line 3)"),
               "%d %s", s, err.message);
        kt_graph_destroy(g);
    }
}

int main(void) {
    (void)tx; /* kt_testlib.h helpers this program does not need */
    (void)rnd;
    test_serial_matmul();
    test_tolerance_refused();
    test_unfinalized_refused();
    test_read_limit();
    test_serial_conv_pool();
    test_serial_softmax_xent();
    test_errors();
    test_refused_work();
    test_elementwise();
    test_reductions();
    test_conv_edges();
    test_transposed_conv();
    test_elementwise_box();
    test_gemm_edges();
    test_fill_inputs();
    test_report_fields();
    test_reduce_nan();
    test_determinism();
    test_split_reducers();
    test_tolerance();
    test_compare_bound();
    test_broken_program();
    test_foreign_arguments();
    test_malformed_programs();
    test_staged_program();
    test_stage_hazard_sweep();
    test_swap_arguments();
    test_model_files();
    test_random_plans();
    test_many_devices();
    test_zoo();
    test_zoo_conv();
    printf("%d plans verified, %d baselines not applicable to a shape\n",
           nchecked, nskipped);
    return KT_TEST_SUMMARY();
}
