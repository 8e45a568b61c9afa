/* bench_cpu.c -- the CPU backend's speed (backend_cpu.h).

   1. The matrix-product kernel of the fast path, GFLOP/s on the shapes of
      an MLP step and of a convolution as im2col, next to OpenBLAS on the
      same shapes when libopenblas can be loaded at run time (single
      thread for both; nothing is linked, so the benchmark builds without
      it).  Inputs are the accumulation type (KT_CPU_ACC, double unless
      configured): dgemm, or sgemm for float.
   2. Whole operators through kt_cpu_run_op: the fast path (packing +
      kernel) against the generic evaluator (the reference semantics), as
      a ratio measured in the same run.
   3. `ktile verify` of mlp:layers=4,hidden=1024,batch=256 on 8 devices
      (the target: under 10 s) and of a small Wide ResNet-50,
      split into its serial and partitioned runs.
   Times are wall clock, best of 3; the machine is shared, so compare the
   ratios printed in one run. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KT_IMPLEMENTATION
#include "../backend_cpu.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* cblas_?gemm with the enums as int (same ABI). */
typedef void (*gemm_fn)(int, int, int, int, int, int, kt_acc, const kt_acc *,
                        int, const kt_acc *, int, kt_acc, kt_acc *, int);
typedef void (*threads_fn)(int);

static gemm_fn load_openblas(void) {
    static const char *const names[] = {"libopenblas.so.0", "libopenblas.so",
                                        "libopenblas.dylib"};
    const char *sym = sizeof(kt_acc) == 8 ? "cblas_dgemm" : "cblas_sgemm";
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL), *f, *t;
        gemm_fn g;
        threads_fn th;
        if (!h) continue;
        f = dlsym(h, sym);
        t = dlsym(h, "openblas_set_num_threads");
        if (!f) continue;
        if (t) { /* ISO C has no object-to-function cast: copy the bits */
            memcpy(&th, &t, sizeof th);
            th(1);
        }
        memcpy(&g, &f, sizeof g);
        return g;
    }
    return NULL;
}

static void fill(kt_acc *a, int64_t n, uint64_t seed) {
    int64_t i;
    for (i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        a[i] = (kt_acc)((double)(seed >> 11) / 9007199254740992.0 - 0.5);
    }
}

static void bench_kernel(gemm_fn blas) {
    static const struct {
        int64_t m, n, k;
        const char *what;
    } shapes[] = {
        {256, 1024, 1024, "MLP forward  x[256,1024] W[1024,1024]"},
        {1024, 1024, 256, "MLP dW       dx^T x over batch 256"},
        {64, 1024, 1024, "one 64-row panel (the packing block)"},
        {4096, 64, 576, "conv im2col  64x64 image, 64->64 ch, 3x3"},
    };
    size_t s;
    printf("matrix-product kernel, %s accumulation, GFLOP/s (best of 3)\n",
           sizeof(kt_acc) == 8 ? "float64" : "float32");
    printf("  %-42s %9s %9s %7s\n", "shape (m x n x k)", "ktile", "OpenBLAS",
           "ratio");
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t m = shapes[s].m, n = shapes[s].n, k = shapes[s].k;
        kt_acc *a = (kt_acc *)malloc(sizeof(kt_acc) * (size_t)(m * k));
        kt_acc *b = (kt_acc *)malloc(sizeof(kt_acc) * (size_t)(k * n));
        kt_acc *c = (kt_acc *)calloc((size_t)(m * n), sizeof(kt_acc));
        double flops = 2.0 * (double)m * (double)n * (double)k, best = 1e30,
               bbest = 1e30;
        int r;
        if (!a || !b || !c) return;
        fill(a, m * k, 1);
        fill(b, k * n, 2);
        for (r = 0; r < 3; r++) {
            double t0 = now();
            kt_cpu_gemm(m, n, k, a, b, c);
            t0 = now() - t0;
            if (t0 < best) best = t0;
            if (blas) {
                t0 = now();
                blas(101, 111, 111, (int)m, (int)n, (int)k, 1, a, (int)k, b,
                     (int)n, 1, c, (int)n);
                t0 = now() - t0;
                if (t0 < bbest) bbest = t0;
            }
        }
        printf("  %-42s %9.2f", shapes[s].what, flops / best * 1e-9);
        if (blas)
            printf(" %9.2f %7.2f\n", flops / bbest * 1e-9, bbest / best);
        else
            printf(" %9s %7s\n", "-", "-");
        free(a);
        free(b);
        free(c);
    }
    if (!blas) printf("  (OpenBLAS not found at run time: install libopenblas)\n");
}

/* One op of a model file, fast path against the reference evaluator. */
static void bench_op(const char *what, const char *src, const char *out,
                     double flops) {
    kt_graph *g = NULL;
    kt_error err;
    kt_cpu_state s;
    kt_cpu_options fast, ref;
    double tf = 1e30, tr = 1e30;
    int o, r, op = -1;
    if (kt_graph_create(&g, &err) != KT_OK ||
        kt_graph_parse(g, src, strlen(src), &err) != KT_OK ||
        kt_cpu_state_init(&s, g, &err) != KT_OK) {
        printf("  %s: %s\n", what, err.message);
        kt_graph_destroy(g);
        return;
    }
    for (o = 0; o < kt_graph_op_count(g); o++)
        if (strcmp(kt_graph_op(g, o)->name, out) == 0) op = o;
    kt_cpu_fill_inputs(g, &s, 1);
    memset(&fast, 0, sizeof fast);
    memset(&ref, 0, sizeof ref);
    ref.reference_only = 1;
    for (r = 0; r < 3 && op >= 0; r++) {
        double t0 = now();
        kt_cpu_run_op(g, op, &s, &fast, &err);
        t0 = now() - t0;
        if (t0 < tf) tf = t0;
        if (r == 0) { /* the reference is slow: once */
            t0 = now();
            kt_cpu_run_op(g, op, &s, &ref, &err);
            tr = now() - t0;
        }
    }
    printf("  %-42s %9.2f %9.3f %9.2f\n", what, flops / tf * 1e-9,
           flops / tr * 1e-9, tr / tf);
    kt_cpu_state_free(&s);
    kt_graph_destroy(g);
}

static void bench_verify(const char *spec, int devices) {
    kt_graph *g = NULL;
    kt_error err;
    kt_factors f;
    kt_plan p;
    kt_search_options so;
    kt_program prog;
    kt_cpu_state ref, leaves;
    kt_cpu_devices dev;
    kt_cpu_report rep;
    kt_cpu_verify_options o;
    double t0, ts, tp, tv;
    int t;
    if (kt_zoo_build(spec, &g, &err) != KT_OK) {
        printf("%s: %s\n", spec, err.message);
        return;
    }
    memset(&so, 0, sizeof so);
    kt_factors_default(devices, &f, &err);
    if (kt_plan_search(g, &f, &so, &p, &err) != KT_OK ||
        kt_lower(g, &p, &prog, &err) != KT_OK) {
        printf("%s: %s\n", spec, err.message);
        kt_graph_destroy(g);
        return;
    }
    kt_cpu_state_init(&ref, g, &err);
    kt_cpu_state_init(&leaves, g, &err);
    kt_cpu_fill_inputs(g, &ref, 1);
    for (t = 0; t < ref.ntensors; t++)
        memcpy(leaves.val[t], ref.val[t], sizeof(kt_real) * (size_t)ref.numel[t]);
    t0 = now();
    kt_cpu_run_serial(g, &ref, NULL, &err);
    ts = now() - t0;
    t0 = now();
    kt_cpu_run_partitioned(g, &p, &prog, &leaves, NULL, &dev, &err);
    tp = now() - t0;
    kt_cpu_devices_free(&dev);
    kt_cpu_verify_defaults(&o);
    t0 = now();
    kt_cpu_verify(g, &p, &o, &rep, &err);
    tv = now() - t0;
    printf("verify %s on %d devices (DP plan)\n", spec, devices);
    printf("  serial step %.2f s, partitioned step %.2f s (default worker "
           "threads), whole verification %.2f s: %s\n", ts, tp, tv,
           rep.ok ? "ok" : "FAILED");
    kt_cpu_state_free(&ref);
    kt_cpu_state_free(&leaves);
    kt_program_free(&prog);
    kt_plan_free(&p);
    kt_graph_destroy(g);
}

int main(void) {
    bench_kernel(load_openblas());
    printf("\nwhole operators (kt_cpu_run_op), GFLOP/s\n");
    printf("  %-42s %9s %9s %9s\n", "op", "fast", "reference", "speedup");
    bench_op("matmul x[256,1024] * W[1024,1024]",
             "input x[256,1024]\nweight W[1024,1024]\n"
             "y[i,k] = sum(j) x[i,j] * W[j,k]\n", "y",
             2.0 * 256 * 1024 * 1024);
    bench_op("conv 8x64x32x32, 64 filters 3x3, pad 1",
             "input x[8,64,32,32]\nweight f[64,64,3,3]\n"
             "o[n,co,h:32,w:32] = sum(ci,kh,kw) pad(x[n,ci,h+kh-1,w+kw-1]) * "
             "f[co,ci,kh,kw]\n", "o", 2.0 * 8 * 64 * 32 * 32 * 64 * 9);
    bench_op("attention scores b=8,h=8,s=t=128,e=64",
             "input q[8,128,8,64]\ninput k[8,128,8,64]\n"
             "sc[b,h,s,t] = sum(e) q[b,s,h,e] * k[b,t,h,e]\n", "sc",
             2.0 * 8 * 8 * 128 * 128 * 64);
    /* autodiff's input gradient of a 3x3 stride-2 convolution: 1.5 of
       the 3 filter taps per axis meet a point (narrowed, then summed by
       offsets); the reference sums all 8 x 8 (i, j) */
    bench_op("stride-2 3x3 conv input grad 2x32x16x16",
             "input dy[2,32,8,8]\ninput f[32,32,3,3]\n"
             "dx[n,ci,h:16,w:16] = sum(co,i,j) pad(f[co,ci,h-2*i+1,w-2*j+1]) "
             "* dy[n,co,i,j]\n", "dx", 2.0 * 2 * 32 * 16 * 16 * 32 * 2.25);
    /* an SGD step on a 1x1 convolution's weights: rows of one element */
    bench_op("element-wise w - 0.01 * dw, 512x512x1x1",
             "input w[512,512,1,1]\ninput dw[512,512,1,1]\n"
             "u[a,b,c,d] = w[a,b,c,d] - 0.01 * dw[a,b,c,d]\n", "u",
             2.0 * 512 * 512);
    printf("\n");
    bench_verify("mlp:layers=4,hidden=1024,batch=256", 8);
    bench_verify("wresnet:depth=50,widen=1,batch=2,image=64", 8);
    return 0;
}
