/* test_swap_exec.c -- backend_cpu.h running swap.h plans (SwapAdvisor,
   Huang thesis 4.3) with each device's memory one arena of the capacity.

   What is checked (every run: against the serial run on fresh random
   inputs, every tensor on every device within tol + |ref| * eps; the
   transfers' bytes = kt_plan_eval's; the executor's own checks -- every
   tensor inside its object and the arena, no two live tensors overlapping,
   objects in use never above the capacity; executed swap bytes = the
   plan's at each device's tile sizes, alone = the plan's swapped_bytes;
   peak objects in use = the plan's peak_bytes):
     1. Figure 4.1 (thesis 4.2) as a model file, one "MB" = 64 f32
        elements, capacity 10 "MB" = 2560 bytes: the right-first schedule
        with the fine pool (plan (d)) simulates to 6 units plus the Data
        operator's 4-byte input batch (1/64 unit; the figure's Data reads
        nothing), the other three combinations too, and every one
        executes in exactly 2560 bytes.
     2. Zoo models at small sizes (MLP, LSTM, transformer; a Wide ResNet
        outside valgrind): alone and partitioned on 2 and 4 devices (the
        receive and result buffers of the transfers in the pool), at the
        smallest pool that runs every op, a little above it, half way to
        everything resident, and everything resident; steady and cold;
        no search and the GA.
     3. Random small training graphs (matrix products, element-wise ops,
        broadcasts, joins; backward pass and in-place SGD updates) on 1 to
        4 devices at a random capacity between the minimum and everything,
        random schedules (GA).
     4. Corrupted plans are caught with a message naming the step and the
        tensor: a swap-in removed, an allocation into an occupied object,
        a swap-out turned into a drop (an update lost), an object made
        smaller than its tensor, a pool larger than the arena, a dynamic
        (ODSwap) plan, and a model without the receive buffers.
     5. test_cpu.c's staged program (relays from a receive buffer and
        from a tile, a reduction tree) at the smallest pool and with
        everything resident.
   Under valgrind (KT_WRAP set) fewer sizes and device counts run. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h> /* alarm */

/* The library allocates through these: they pass through to the C
   library unless test_out_of_memory arms `fail_at`; then the fail_at-th
   allocation from then on returns NULL (once).  A mutex: the workers
   allocate from their threads. */
static long alloc_count = 0, fail_at = 0;
static pthread_mutex_t alloc_mu = PTHREAD_MUTEX_INITIALIZER;
static int alloc_fails(void) {
    int f;
    pthread_mutex_lock(&alloc_mu);
    f = fail_at > 0 && ++alloc_count == fail_at;
    pthread_mutex_unlock(&alloc_mu);
    return f;
}
static void *test_malloc(size_t n) { return alloc_fails() ? NULL : malloc(n); }
static void *test_realloc(void *p, size_t n) {
    return alloc_fails() ? NULL : realloc(p, n);
}
#define KT_MALLOC(n) test_malloc(n)
#define KT_REALLOC(p, n) test_realloc(p, n)
#define KT_FREE(p) free(p)

/* Worker threads start through this: pthread_create unless
   test_thread_start_fails arms `thread_fail_at`; then the
   thread_fail_at-th start from then on fails (once), as when the process
   is out of threads -- with thread_fail_late, only once every worker
   started before it waits at the run's barrier (so that the run must
   release them itself).  The caller's thread starts them all. */
static int thread_starts = 0, thread_fail_at = 0, thread_fail_late = 0;
static void wait_until_workers_wait(void *worker, int started);
static int test_thread_create(pthread_t *t, void *(*start)(void *),
                              void *arg) {
    if (thread_fail_at > 0 && ++thread_starts == thread_fail_at) {
        if (thread_fail_late) wait_until_workers_wait(arg, thread_fail_at - 1);
        return EAGAIN;
    }
    return pthread_create(t, NULL, start, arg);
}
#define KT_CPU_THREAD_CREATE(t, start, arg) test_thread_create(t, start, arg)

#define KT_IMPLEMENTATION
#include "../backend_cpu.h"

#include "kt_test.h"
#include "kt_test_pairs.h"

static int under_valgrind(void) { return getenv("KT_WRAP") != NULL; }

/* Until the `started` workers of the run `worker` belongs to all wait at
   its barrier: the first barrier counts every worker, so it cannot open
   while one is not started, and each started worker gets there (at most
   about 20 s, so that a change in the executor fails the test instead of
   hanging it). */
static void wait_until_workers_wait(void *worker, int started) {
    kt__barrier *b = &((kt__worker *)worker)->run->bar;
    struct timespec ms = {0, 1000000};
    int i, all = 0;
    for (i = 0; i < 20000 && !all; i++) {
        pthread_mutex_lock(&b->mu);
        all = b->waiting >= started;
        pthread_mutex_unlock(&b->mu);
        if (!all) nanosleep(&ms, NULL);
    }
    CHECKF(all, "%d started workers never all waited at the barrier",
           started);
}

/* Everything a swapped run needs, built from a graph and a device count. */
typedef struct setup {
    kt_plan plan;
    kt_program prog;
    kt_swap_model model;
    int64_t minimal;   /* the smallest pool that runs every op            */
    int64_t all;       /* every tensor and buffer resident at once        */
    int ok;
} setup;

static void setup_free(setup *s) {
    if (!s->ok) return;
    kt_swap_model_free(&s->model);
    kt_program_free(&s->prog);
    kt_plan_free(&s->plan);
    s->ok = 0;
}

/* The rest of a setup from its plan and program (both s's from now on,
   freed on failure). */
static int setup_finish(const char *label, const kt_graph *g, setup *s) {
    kt_swap_alloc a;
    kt_error err;
    int i;
    if (kt_swap_model_from_program(g, &s->plan, &s->prog, NULL, &s->model,
                                   &err) != KT_OK) {
        CHECKF(0, "%s: model: %s", label, err.message);
        kt_program_free(&s->prog);
        kt_plan_free(&s->plan);
        return 0;
    }
    s->ok = 1;
    if (kt_swap_alloc_minimal(&s->model, &a, &s->minimal, &err) != KT_OK) {
        CHECKF(0, "%s: minimal pool: %s", label, err.message);
        setup_free(s);
        return 0;
    }
    kt_swap_alloc_free(&a);
    for (i = 0; i < s->model.ntensors; i++)
        if (s->model.size_of[i] >= 0) s->all += s->model.bytes[i];
    return 1;
}

static int setup_make(const char *label, const kt_graph *g, int ndev,
                      setup *s) {
    kt_factors f;
    kt_search_options so;
    kt_error err;
    memset(s, 0, sizeof *s);
    memset(&so, 0, sizeof so);
    so.strategy = KT_STRATEGY_DP;
    if (kt_factors_default(ndev, &f, &err) != KT_OK ||
        kt_plan_search(g, &f, &so, &s->plan, &err) != KT_OK) {
        CHECKF(0, "%s: plan: %s", label, err.message);
        return 0;
    }
    if (kt_lower(g, &s->plan, &s->prog, &err) != KT_OK) {
        CHECKF(0, "%s: lower: %s", label, err.message);
        kt_plan_free(&s->plan);
        return 0;
    }
    return setup_finish(label, g, s);
}

/* Whether two runs left the same tiles and pairs (kt_test_same_devices)
   and swapped the same bytes on every device. */
static int same_runs(const kt_graph *g, const kt_cpu_devices *a,
                     const kt_cpu_swap_report *ra, const kt_cpu_devices *b,
                     const kt_cpu_swap_report *rb) {
    return kt_test_same_devices(g, a, b) && ra->ndev == rb->ndev &&
           !memcmp(ra->device, rb->device,
                   sizeof *ra->device * (size_t)ra->ndev);
}

/* The swap executor's per-pair counts, what each receiver copied into
   its arena, equal the program's pairs (kt_test_pairs_match), with one
   worker thread and with one per device; and the two runs agree bit for
   bit (kt_cpu_verify_swap ran with the default count). */
static int executed_pairs_match(const char *label, const kt_graph *g,
                                setup *s, const kt_swap_plan *sp,
                                int64_t capacity) {
    kt_cpu_state leaves;
    kt_cpu_devices dev[2];
    kt_cpu_swap_report sr[2];
    kt_cpu_options o;
    kt_error err;
    int ok = 1, i;
    if (kt_cpu_state_init(&leaves, g, &err) != KT_OK) {
        CHECKF(0, "%s: %s", label, err.message);
        return 0;
    }
    kt_cpu_fill_inputs(g, &leaves, 1);
    memset(&o, 0, sizeof o);
    for (i = 0; i < 2; i++) {
        o.threads = i == 0 ? 1 : (int)s->prog.ndev;
        if (kt_cpu_run_swapped(g, &s->plan, &s->prog, &s->model, sp, capacity,
                               &leaves, &o, &dev[i], &sr[i], &err) == KT_OK) {
            ok = kt_test_pairs_match(label, &dev[i], &s->prog) && ok;
        } else {
            CHECKF(0, "%s, %d threads: %s", label, o.threads, err.message);
            ok = 0;
            break;
        }
    }
    if (i == 2) {
        CHECKF(same_runs(g, &dev[0], &sr[0], &dev[1], &sr[1]),
               "%s: 1 and %lld worker threads differ", label,
               (long long)s->prog.ndev);
        ok = ok && same_runs(g, &dev[0], &sr[0], &dev[1], &sr[1]);
    }
    while (i-- > 0) {
        kt_cpu_devices_free(&dev[i]);
        kt_cpu_swap_report_free(&sr[i]);
    }
    kt_cpu_state_free(&leaves);
    return ok;
}

/* Runs plan sp under `capacity` and checks everything the header lists. */
static int check_run(const char *label, const kt_graph *g, setup *s,
                     const kt_swap_plan *sp, int64_t capacity,
                     uint64_t seed) {
    kt_cpu_verify_options vo;
    kt_cpu_report rep;
    kt_cpu_swap_report sr;
    kt_error err;
    int64_t d, ndev;
    int good;
    kt_cpu_verify_defaults(&vo);
    vo.seed = seed;
    if (kt_cpu_verify_swap(g, &s->plan, &s->prog, &s->model, sp, capacity,
                           &vo, &rep, &sr, &err) != KT_OK) {
        CHECKF(0, "%s: %s", label, err.message);
        return 0;
    }
    good = rep.ok && rep.values_ok && rep.bytes_ok && sr.ok;
    CHECKF(rep.values_ok, "%s: %lld mismatches, first in %s (%g vs %g)",
           label, (long long)rep.mismatches,
           rep.nreported ? kt_graph_tensor(g, rep.first[0].tensor)->name : "-",
           rep.nreported ? rep.first[0].got : 0.0,
           rep.nreported ? rep.first[0].want : 0.0);
    CHECKF(rep.bytes_ok, "%s: transfers moved %lld, predicted %lld", label,
           (long long)rep.bytes_moved, (long long)rep.predicted_bytes);
    CHECKF(sr.ok, "%s: swap figures disagree with the plan", label);
    CHECK(rep.compared > 0);
    CHECK(sr.peak_bytes <= capacity && sr.peak_bytes == sp->peak_bytes);
    for (d = 0; d < sr.ndev; d++) {
        const kt_cpu_swap_device *x = &sr.device[d];
        CHECKF(x->in_bytes == x->planned_in_bytes &&
               x->out_bytes == x->planned_out_bytes,
               "%s, device %lld: swapped in %lld/%lld planned, out %lld/%lld",
               label, (long long)d, (long long)x->in_bytes,
               (long long)x->planned_in_bytes, (long long)x->out_bytes,
               (long long)x->planned_out_bytes);
        CHECK(x->high_water <= capacity && x->peak_bytes <= capacity);
        CHECK(x->peak_tensor_bytes <= x->peak_bytes);
        CHECK(x->in_bytes + x->out_bytes <= sp->swapped_bytes);
    }
    if (sr.ndev == 1)
        CHECK_EQ_I64(sr.swapped_in_bytes + sr.swapped_out_bytes,
                     sp->swapped_bytes);
    ndev = sr.ndev;
    kt_cpu_swap_report_free(&sr);
    if (ndev > 1 && !under_valgrind()) /* (a second run) */
        good = executed_pairs_match(label, g, s, sp, capacity) && good;
    return good;
}

/* ---------------------------------------------------------- Figure 4.1 */

/* The figure's graph: Conv ops as element-wise products with their 1 MB
   weights, A2 and A5 of 2 MB (two rows), Data reading a 4-byte batch. */
static const char fig41[] =
    "input X[1]\n"
    "weight W1[64]\n"
    "weight W2[64]\n"
    "weight W3[64]\n"
    "weight W4[64]\n"
    "A0[i:64] = X[0] * 0.5\n"                  /* Data   */
    "A1[i] = A0[i] * W1[i]\n"                  /* Conv1  */
    "A2[c:2,i] = A0[i] * W2[i]\n"              /* Conv2  */
    "A3[i] = sum(c) A2[c,i] * W3[i]\n"         /* Conv3  */
    "A4[i] = A3[i] * W4[i]\n"                  /* Conv4  */
    "A5[c:2,i] = A1[i] + A4[i]\n";             /* Concat */

static void test_figure41(void) {
    static const int left[6] = {0, 1, 2, 3, 4, 5};
    static const int right[6] = {0, 2, 3, 4, 1, 5};
    /* thesis: (b) 6 (ktile's Belady: 7, see test_swap.c), (c) 7, (d) 6,
       (e) 7 time units; here plus X's 1/64 unit */
    static const double want[4] = {7, 7, 6, 7};
    const int64_t unit = 64 * 4, capacity = 10 * unit;
    kt_graph *g = NULL;
    kt_error err;
    setup s;
    int c, i;
    CHECK(kt_graph_create(&g, &err) == KT_OK);
    if (kt_graph_parse(g, fig41, strlen(fig41), &err) != KT_OK) {
        CHECKF(0, "figure 4.1: %s", err.message);
        kt_graph_destroy(g);
        return;
    }
    if (!setup_make("figure 4.1", g, 1, &s)) {
        kt_graph_destroy(g);
        return;
    }
    /* the figure's model: activations kept (the backward pass, not drawn,
       needs them), one time unit per op and per MB copied */
    for (i = 0; i < s.model.ntensors; i++)
        if (!s.model.on_host[i]) s.model.keep[i] = 1;
    for (i = 0; i < s.model.nops; i++) s.model.seconds[i] = 1;
    s.model.h2d_bw = s.model.d2h_bw = (double)unit;
    CHECK(kt_swap_model_finish(&s.model, &err) == KT_OK);
    CHECK_EQ_I64(s.model.nsizes, 3); /* X, the 1 MB and the 2 MB tensors */
    for (c = 0; c < 4; c++) {
        const int *order = c < 2 ? (c == 0 ? left : right)
                                 : (c == 2 ? right : left);
        int fine = c >= 2;
        kt_swap_alloc a;
        kt_swap_options o;
        kt_swap_plan p;
        double t = -1;
        char label[64];
        snprintf(label, sizeof label, "figure 4.1 (%c)", 'b' + c);
        kt_swap_alloc_init(&a, 3, &err);
        a.cls[0] = a.cls[1] = 0; /* X's 4 bytes share the 1 MB class */
        a.cls[2] = fine ? 1 : 0;
        a.cnt[0] = fine ? 8 : 5;
        a.cnt[1] = 1;
        memset(&o, 0, sizeof o);
        o.memory = capacity;
        o.cold = 1; /* the figure starts with the parameters on the host */
        CHECK(kt_swap_alloc_check(&s.model, &a, capacity, &err) == KT_OK);
        if (kt_swap_plan_build(&s.model, order, &a, &o, &p, &err) != KT_OK) {
            CHECKF(0, "%s: %s", label, err.message);
            kt_swap_alloc_free(&a);
            continue;
        }
        CHECK_EQ_I64(p.pool_bytes, capacity);
        CHECK(kt_swap_simulate(&s.model, &p, &t, &err) == KT_OK);
        CHECKF(t == want[c] + 1.0 / 64, "%s: %g units", label, t);
        CHECKF(p.swapped_bytes > 0, "%s swaps nothing", label);
        check_run(label, g, &s, &p, capacity, 41 + (uint64_t)c);
        kt_swap_plan_free(&p);
        kt_swap_alloc_free(&a);
    }
    setup_free(&s);
    kt_graph_destroy(g);
}

/* ---------------------------------------------------------- zoo models */

/* Plans with `kind` at capacity cap and runs it; 0 when nothing fits. */
static int plan_and_run(const char *label, const kt_graph *g, setup *s,
                        kt_swap_search_kind kind, int cold, int64_t cap,
                        uint64_t seed) {
    kt_swap_options o;
    kt_swap_result r;
    kt_error err;
    kt_status st;
    memset(&o, 0, sizeof o);
    o.memory = cap;
    o.cold = cold;
    o.generations = 2;
    o.population = 8;
    o.seed = seed;
    st = kt_swap_search(&s->model, kind, &o, &r, &err);
    if (st != KT_OK) {
        CHECKF(0, "%s: search: %s", label, err.message);
        return 0;
    }
    CHECK(r.plan.pool_bytes <= cap);
    check_run(label, g, s, &r.plan, cap, seed);
    kt_swap_result_free(&r);
    return 1;
}

static void run_sizes(const char *spec, const kt_graph *g, int ndev,
                      int nsizes, uint64_t seed) {
    int ncold = nsizes == 1 && !under_valgrind() ? 1 : 2;
    setup s;
    int k;
    char label[256];
    if (!setup_make(spec, g, ndev, &s)) return;
    /* alone, everything fits at `all`; just above the minimum swaps */
    CHECK(s.minimal > 0 && s.minimal <= s.all);
    for (k = 0; k < nsizes; k++) {
        int64_t cap = k == 0   ? s.minimal
                      : k == 1 ? s.minimal + s.minimal / 16
                      : k == 2 ? (s.minimal + s.all) / 2
                               : s.all;
        int cold;
        for (cold = 0; cold < ncold; cold++) {
            kt_swap_search_kind kind =
                (k + cold) % 2 ? KT_SWAP_SEARCH_GA : KT_SWAP_SEARCH_NONE;
            snprintf(label, sizeof label, "%s, %d device%s, %lld bytes "
                     "(minimum %lld), %s, %s", spec, ndev, ndev > 1 ? "s" : "",
                     (long long)cap, (long long)s.minimal,
                     cold ? "cold" : "steady",
                     kind == KT_SWAP_SEARCH_GA ? "GA" : "no search");
            plan_and_run(label, g, &s, kind, cold, cap,
                         seed + (uint64_t)(k * 2 + cold));
        }
    }
    setup_free(&s);
}

static void test_zoo(void) {
    static const char *const specs[] = {
        "mlp:layers=3,hidden=24,batch=12",
        "rnn:layers=2,hidden=8,steps=3,batch=8",
        "transformer:layers=1,dmodel=16,heads=2,ffn=32,seq=4,batch=4",
        "wresnet:depth=50,widen=1,batch=1,image=64",
    };
    static const int devices[] = {1, 2, 4};
    int m, di, nm = under_valgrind() ? 3 : 4;
    for (m = 0; m < nm; m++) {
        kt_graph *g = NULL;
        kt_error err;
        if (kt_zoo_build(specs[m], &g, &err) != KT_OK) {
            CHECKF(0, "%s: %s", specs[m], err.message);
            continue;
        }
        for (di = 0; di < 3; di++) {
            int nsizes = 4;
            /* the Wide ResNet has 23 million weights: one run at its
               minimum on 2 devices unless KT_TEST_LONG */
            if (m == 3 && !getenv("KT_TEST_LONG")) {
                if (devices[di] != 2) continue;
                nsizes = 1;
            }
            if (under_valgrind()) nsizes = devices[di] == 1 ? 2 : 1;
            run_sizes(specs[m], g, devices[di], nsizes, 100 + (uint64_t)m);
        }
        kt_graph_destroy(g);
    }
}

/* Swapping moves bytes: at the minimum some tensor of an MLP goes to the
   host and back, and the run still agrees. */
static void test_swaps_happen(void) {
    kt_graph *g = NULL;
    kt_error err;
    setup s;
    kt_swap_options o;
    kt_swap_result r;
    if (kt_zoo_build("mlp:layers=4,hidden=16,batch=8", &g, &err) != KT_OK)
        return;
    if (setup_make("mlp swaps", g, 2, &s)) {
        memset(&o, 0, sizeof o);
        o.memory = s.minimal;
        if (kt_swap_search(&s.model, KT_SWAP_SEARCH_NONE, &o, &r, &err) ==
            KT_OK) {
            int i, nin = 0, nout = 0;
            for (i = 0; i < r.plan.nactions; i++) {
                nin += r.plan.action[i].kind == KT_SWAP_IN;
                nout += r.plan.action[i].kind == KT_SWAP_OUT;
            }
            CHECKF(nin > 0 && nout > 0, "%d swap-ins, %d swap-outs", nin,
                   nout);
            check_run("mlp at the minimum, 2 devices", g, &s, &r.plan,
                      s.minimal, 7);
            kt_swap_result_free(&r);
        } else {
            CHECKF(0, "mlp swaps: %s", err.message);
        }
        setup_free(&s);
    }
    kt_graph_destroy(g);
}

/* ------------------------------------------------- random small graphs */

static uint64_t rng_next(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

static int rng_below(uint64_t *s, int n) { return (int)(rng_next(s) % (uint64_t)n); }

/* A random training graph: activations a0..a(n-1) of shape [B,H], made by
   products with fresh weights, relu, joins of two earlier ones and bias
   broadcasts; the loss is the last one. */
static void random_model(uint64_t *rng, char *buf, size_t cap) {
    int b = 2 + rng_below(rng, 5), h = 2 + rng_below(rng, 6), n, i, w = 0;
    size_t len = 0;
    len += (size_t)snprintf(buf + len, cap - len, "input x[%d,%d]\n", b, h);
    len += (size_t)snprintf(buf + len, cap - len, "weight V[%d,%d]\n", h, h);
    len += (size_t)snprintf(buf + len, cap - len,
                            "a0[i,k] = sum(j) x[i,j] * V[j,k]\n");
    n = 2 + rng_below(rng, 5);
    for (i = 1; i < n; i++) {
        int kind = rng_below(rng, 4), p = rng_below(rng, i);
        switch (kind) {
        case 0:
            len += (size_t)snprintf(buf + len, cap - len,
                                    "weight W%d[%d,%d]\na%d[i,k] = sum(j) "
                                    "a%d[i,j] * W%d[j,k]\n", w, h, h, i, p, w);
            w++;
            break;
        case 1:
            len += (size_t)snprintf(buf + len, cap - len,
                                    "a%d[i,k] = relu(a%d[i,k])\n", i, p);
            break;
        case 2:
            len += (size_t)snprintf(buf + len, cap - len,
                                    "a%d[i,k] = a%d[i,k] * a%d[i,k]\n", i, p,
                                    rng_below(rng, i));
            break;
        default:
            len += (size_t)snprintf(buf + len, cap - len,
                                    "weight b%d[%d]\na%d[i,k] = a%d[i,k] + "
                                    "b%d[k]\n", w, h, i, p, w);
            w++;
            break;
        }
    }
    snprintf(buf + len, cap - len, "loss a%d\n", n - 1);
}

static void test_random(void) {
    uint64_t rng = 0x5eed5eedULL;
    int trial, ntrial = under_valgrind() ? 4 : 30;
    for (trial = 0; trial < ntrial; trial++) {
        char text[2048], label[96];
        kt_graph *g = NULL;
        kt_error err;
        setup s;
        int ndev = 1 + rng_below(&rng, 4);
        int64_t cap;
        random_model(&rng, text, sizeof text);
        if (kt_graph_create(&g, &err) != KT_OK) continue;
        if (kt_graph_parse(g, text, strlen(text), &err) != KT_OK ||
            kt_graph_autodiff(g, NULL, &err) != KT_OK) {
            CHECKF(0, "random graph %d: %s\n%s", trial, err.message, text);
            kt_graph_destroy(g);
            continue;
        }
        snprintf(label, sizeof label, "random graph %d on %d devices", trial,
                 ndev);
        if (setup_make(label, g, ndev, &s)) {
            cap = s.minimal + (int64_t)(rng_next(&rng) %
                                        (uint64_t)(s.all - s.minimal + 1));
            plan_and_run(label, g, &s, KT_SWAP_SEARCH_GA,
                         rng_below(&rng, 2), cap, 900 + (uint64_t)trial);
            setup_free(&s);
        }
        kt_graph_destroy(g);
    }
}

/* ------------------------------------------------------ corrupted plans */

static int plan_copy(const kt_swap_plan *a, kt_swap_plan *b) {
    memset(b, 0, sizeof *b);
    *b = *a;
    b->order = (int *)KT_MALLOC(((size_t)a->nsteps + 1) * sizeof(int));
    b->object_bytes = (int64_t *)KT_MALLOC(((size_t)a->nobjects + 1) *
                                           sizeof(int64_t));
    b->initial_tensor = (int *)KT_MALLOC(((size_t)a->ninitial + 1) * sizeof(int));
    b->initial_object = (int *)KT_MALLOC(((size_t)a->ninitial + 1) * sizeof(int));
    b->initial_clean = (unsigned char *)KT_MALLOC((size_t)a->ninitial + 1);
    b->action = (kt_swap_action *)KT_MALLOC(((size_t)a->nactions + 1) *
                                            sizeof(kt_swap_action));
    b->step_first = (int *)KT_MALLOC(((size_t)a->nsteps + 2) * sizeof(int));
    if (!b->order || !b->object_bytes || !b->initial_tensor ||
        !b->initial_object || !b->initial_clean || !b->action ||
        !b->step_first) {
        kt_swap_plan_free(b);
        return 0;
    }
    memcpy(b->order, a->order, (size_t)a->nsteps * sizeof(int));
    memcpy(b->object_bytes, a->object_bytes, (size_t)a->nobjects * sizeof(int64_t));
    memcpy(b->initial_tensor, a->initial_tensor, (size_t)a->ninitial * sizeof(int));
    memcpy(b->initial_object, a->initial_object, (size_t)a->ninitial * sizeof(int));
    if (a->initial_clean)
        memcpy(b->initial_clean, a->initial_clean, (size_t)a->ninitial);
    else
        memset(b->initial_clean, 0, (size_t)a->ninitial + 1);
    memcpy(b->action, a->action, (size_t)a->nactions * sizeof(kt_swap_action));
    memcpy(b->step_first, a->step_first, ((size_t)a->nsteps + 2) * sizeof(int));
    return 1;
}

/* Removes action i (the steps' ranges shrink after it). */
static void plan_remove(kt_swap_plan *p, int i) {
    int s;
    memmove(&p->action[i], &p->action[i + 1],
            (size_t)(p->nactions - i - 1) * sizeof(kt_swap_action));
    p->nactions--;
    for (s = 0; s <= p->nsteps + 1; s++)
        if (p->step_first[s] > i) p->step_first[s]--;
}

/* The run must fail with KT_ERR_INVALID and a message containing `want`. */
static void expect_caught(const char *label, const kt_graph *g, setup *s,
                          const kt_swap_plan *p, int64_t cap,
                          const char *want) {
    kt_cpu_verify_options vo;
    kt_cpu_report rep;
    kt_cpu_swap_report sr;
    kt_error err;
    kt_status st;
    kt_cpu_verify_defaults(&vo);
    st = kt_cpu_verify_swap(g, &s->plan, &s->prog, &s->model, p, cap, &vo,
                            &rep, &sr, &err);
    CHECKF(st == KT_ERR_INVALID && strstr(err.message, want),
           "%s: status %d, message '%s', expected '%s'", label, (int)st,
           st == KT_OK ? "" : err.message, want);
    if (st == KT_OK) kt_cpu_swap_report_free(&sr);
}

static void test_corrupted(void) {
    kt_graph *g = NULL;
    kt_error err;
    setup s;
    kt_swap_options o;
    kt_swap_result r;
    kt_swap_plan bad;
    int i, done;
    if (kt_zoo_build("mlp:layers=3,hidden=16,batch=8", &g, &err) != KT_OK)
        return;
    if (!setup_make("corrupted", g, 2, &s)) {
        kt_graph_destroy(g);
        return;
    }
    memset(&o, 0, sizeof o);
    o.memory = s.minimal;
    o.cold = 1;
    if (kt_swap_search(&s.model, KT_SWAP_SEARCH_NONE, &o, &r, &err) != KT_OK) {
        CHECKF(0, "corrupted: %s", err.message);
        goto out;
    }
    /* the plan itself runs */
    check_run("uncorrupted", g, &s, &r.plan, s.minimal, 3);
    /* a run whose values agree but whose swap figures do not (the plan's
       peak changed by hand): kt_cpu_verify_swap's rep.ok needs srep.ok */
    if (plan_copy(&r.plan, &bad)) {
        kt_cpu_verify_options vo;
        kt_cpu_report rep;
        kt_cpu_swap_report sr;
        bad.peak_bytes -= 1;
        kt_cpu_verify_defaults(&vo);
        if (kt_cpu_verify_swap(g, &s.plan, &s.prog, &s.model, &bad, s.minimal,
                               &vo, &rep, &sr, &err) == KT_OK) {
            CHECKF(rep.values_ok && rep.bytes_ok && !sr.ok && !rep.ok,
                   "peak off by one: values_ok %d, bytes_ok %d, swap ok %d, "
                   "ok %d (want 1, 1, 0, 0)", rep.values_ok, rep.bytes_ok,
                   sr.ok, rep.ok);
            kt_cpu_swap_report_free(&sr);
        } else {
            CHECKF(0, "peak off by one: %s", err.message);
        }
        kt_swap_plan_free(&bad);
    }
    /* a swap-in removed: the op finds its tensor missing */
    for (i = 0, done = 0; i < r.plan.nactions && !done; i++)
        if (r.plan.action[i].kind == KT_SWAP_IN && plan_copy(&r.plan, &bad)) {
            plan_remove(&bad, i);
            expect_caught("swap-in removed", g, &s, &bad, s.minimal,
                          "the plan did not put it there");
            kt_swap_plan_free(&bad);
            done = 1;
        }
    CHECK(done);
    /* an allocation into an object another live tensor holds */
    for (i = 0, done = 0; i < r.plan.nactions && !done; i++) {
        const kt_swap_action *a = &r.plan.action[i];
        int j;
        if (a->kind != KT_SWAP_ALLOC) continue;
        for (j = i - 1; j >= 0 && !done; j--) {
            const kt_swap_action *b = &r.plan.action[j];
            int k, freed = 0;
            if (b->kind != KT_SWAP_ALLOC && b->kind != KT_SWAP_IN) continue;
            if (r.plan.object_bytes[b->object] !=
                r.plan.object_bytes[a->object])
                continue;
            for (k = j + 1; k < i; k++) /* b's tensor still in its object? */
                if (r.plan.action[k].tensor == b->tensor &&
                    r.plan.action[k].kind != KT_SWAP_IN &&
                    r.plan.action[k].kind != KT_SWAP_ALLOC)
                    freed = 1;
            if (freed || b->object == a->object || !plan_copy(&r.plan, &bad))
                continue;
            bad.action[i].object = b->object;
            expect_caught("overlapping allocation", g, &s, &bad, s.minimal,
                          "would overlap");
            kt_swap_plan_free(&bad);
            done = 1;
        }
    }
    CHECK(done);
    /* a swap-out turned into a drop: an update would be lost */
    for (i = 0, done = 0; i < r.plan.nactions && !done; i++)
        if (r.plan.action[i].kind == KT_SWAP_OUT && plan_copy(&r.plan, &bad)) {
            bad.action[i].kind = KT_SWAP_DROP;
            expect_caught("swap-out made a drop", g, &s, &bad, s.minimal,
                          "would be lost");
            kt_swap_plan_free(&bad);
            done = 1;
        }
    CHECK(done);
    /* an object smaller than its tensor: it would spill into the next */
    for (i = 0, done = 0; i < r.plan.nactions && !done; i++)
        if (r.plan.action[i].kind == KT_SWAP_ALLOC &&
            r.plan.object_bytes[r.plan.action[i].object] > 8 &&
            plan_copy(&r.plan, &bad)) {
            bad.object_bytes[bad.action[i].object] -= 8;
            expect_caught("object too small", g, &s, &bad, s.minimal,
                          "do not fit");
            kt_swap_plan_free(&bad);
            done = 1;
        }
    CHECK(done);
    /* the arena smaller than the pool */
    expect_caught("arena below the pool", g, &s, &r.plan, r.plan.pool_bytes - 4,
                  "more than the");
    /* a model not finished (an add since), or none, or no plan: refused
       as the planners refuse them, before the run reads the derived
       arrays */
    s.model.finished = 0;
    expect_caught("model not finished", g, &s, &r.plan, s.minimal,
                  "not finished");
    s.model.finished = 1;
    {
        kt_cpu_verify_options vo;
        kt_cpu_report rep;
        kt_cpu_swap_report sr;
        kt_cpu_verify_defaults(&vo);
        CHECK(kt_cpu_verify_swap(g, &s.plan, &s.prog, NULL, &r.plan,
                                 s.minimal, &vo, &rep, &sr, &err) ==
                  KT_ERR_INVALID &&
              strstr(err.message, "no model"));
        CHECK(kt_cpu_verify_swap(g, &s.plan, &s.prog, &s.model, NULL,
                                 s.minimal, &vo, &rep, &sr, &err) ==
                  KT_ERR_INVALID &&
              strstr(err.message, "no swap plan"));
    }
    kt_swap_result_free(&r);
    /* a steady plan that takes a parameter it leaves newer on the device
       for clean at the start: the next step would drop its update */
    o.cold = 0;
    o.memory = s.all;
    if (kt_swap_search(&s.model, KT_SWAP_SEARCH_NONE, &o, &r, &err) == KT_OK) {
        for (i = 0, done = 0; i < r.plan.ninitial && !done; i++)
            if (s.model.updated[r.plan.initial_tensor[i]] &&
                !r.plan.initial_clean[i] && plan_copy(&r.plan, &bad)) {
                bad.initial_clean[i] = 1;
                expect_caught("clean claimed", g, &s, &bad, s.all,
                              "taken for clean at the start");
                kt_swap_plan_free(&bad);
                done = 1;
            }
        CHECK(done);
        kt_swap_result_free(&r);
    }
    o.cold = 1;
    o.memory = s.minimal;
    /* a dynamic plan (ODSwap) has no objects */
    if (kt_swap_search(&s.model, KT_SWAP_SEARCH_ODSWAP, &o, &r, &err) ==
        KT_OK) {
        expect_caught("ODSwap plan", g, &s, &r.plan, s.all, "pool plans");
        kt_swap_result_free(&r);
    } else
        CHECKF(0, "ODSwap search failed: %s", err.message);
    /* a model without the executor's buffers (kt_swap_model_from_plan) */
    {
        kt_swap_model m2;
        kt_swap_plan_free(&bad);
        if (kt_swap_model_from_plan(g, &s.plan, NULL, &m2, &err) == KT_OK) {
            kt_cpu_verify_options vo;
            kt_cpu_report rep;
            kt_cpu_swap_report sr;
            kt_status st;
            o.memory = s.all;
            if (kt_swap_search(&m2, KT_SWAP_SEARCH_NONE, &o, &r, &err) ==
                KT_OK) {
                kt_cpu_verify_defaults(&vo);
                st = kt_cpu_verify_swap(g, &s.plan, &s.prog, &m2, &r.plan,
                                        s.all, &vo, &rep, &sr, &err);
                CHECKF(st == KT_ERR_INVALID &&
                           strstr(err.message, "kt_swap_model_from_program"),
                       "model without buffers: %d %s", (int)st,
                       st == KT_OK ? "" : err.message);
                if (st == KT_OK) kt_cpu_swap_report_free(&sr);
                kt_swap_result_free(&r);
            } else
                CHECKF(0, "search on the model without buffers: %s",
                       err.message);
            kt_swap_model_free(&m2);
        } else
            CHECKF(0, "kt_swap_model_from_plan: %s", err.message);
    }
out:
    setup_free(&s);
    kt_graph_destroy(g);
}

/* Index of a swap-in (from index `from` on) that can be turned into an
   allocation into the object its tensor was last released from, with that
   object untouched in between: the device copy left behind is the right
   value, so only the executor's NaN poison of a released object tells the
   stale read.  The tensor must not be dropped later (an allocated copy
   counts as newer than the host's, and its drop is refused), nor be taken
   for clean at the start (for the same reason the step would end with it
   newer than the host's, which the run refuses).  -1 if none; *object
   gets the object. */
static int stale_swap_in(const kt_swap_plan *p, int from, int *object) {
    int j, i, k;
    for (j = from; j < p->nactions; j++) {
        const kt_swap_action *in = &p->action[j];
        int left = -1, dropped_later = 0;
        if (in->kind != KT_SWAP_IN) continue;
        for (i = 0; i < p->ninitial; i++)
            if (p->initial_tensor[i] == in->tensor && p->initial_clean &&
                p->initial_clean[i])
                dropped_later = 1;
        for (i = j - 1; i >= 0 && left < 0; i--)
            if (p->action[i].tensor == in->tensor &&
                (p->action[i].kind == KT_SWAP_OUT ||
                 p->action[i].kind == KT_SWAP_DROP))
                left = i;
        if (left < 0) continue;
        for (k = left + 1; k < j && left >= 0; k++)
            if ((p->action[k].kind == KT_SWAP_IN ||
                 p->action[k].kind == KT_SWAP_ALLOC) &&
                p->action[k].object == p->action[left].object)
                left = -1; /* something else was written there since */
        for (k = j + 1; k < p->nactions; k++)
            dropped_later |= p->action[k].tensor == in->tensor &&
                             p->action[k].kind == KT_SWAP_DROP;
        if (left < 0 || dropped_later) continue;
        *object = p->action[left].object;
        return j;
    }
    return -1;
}

/* A plan that brings a tensor back with an allocation instead of a
   swap-in, into the very object it left, reads what that object held when
   it left: the right numbers, by luck.  The executor poisons a released
   object with NaN, so the run must disagree with the serial one.  Tried
   over pool sizes and both plan kinds until such a swap-in turns up. */
static void test_stale_object(void) {
    kt_graph *g = NULL;
    kt_error err;
    setup s;
    int k, cold, found = 0;
    if (kt_zoo_build("mlp:layers=4,hidden=16,batch=64", &g, &err) != KT_OK)
        return;
    if (!setup_make("stale object", g, 2, &s)) {
        kt_graph_destroy(g);
        return;
    }
    for (k = 0; k < 8 && !found; k++)
        for (cold = 0; cold < 2 && !found; cold++) {
            kt_swap_options o;
            kt_swap_result r;
            kt_swap_plan bad;
            int j, obj = -1;
            memset(&o, 0, sizeof o);
            o.memory = s.minimal + k * (s.all - s.minimal) / 8;
            o.cold = cold;
            if (kt_swap_search(&s.model, KT_SWAP_SEARCH_NONE, &o, &r, &err) !=
                KT_OK) {
                CHECKF(0, "stale object: %s", err.message);
                continue;
            }
            j = stale_swap_in(&r.plan, 0, &obj);
            if (j >= 0 && plan_copy(&r.plan, &bad)) {
                kt_cpu_verify_options vo;
                kt_cpu_report rep;
                kt_cpu_swap_report sr;
                bad.action[j].kind = KT_SWAP_ALLOC;
                bad.action[j].object = obj;
                kt_cpu_verify_defaults(&vo);
                if (kt_cpu_verify_swap(g, &s.plan, &s.prog, &s.model, &bad,
                                       o.memory, &vo, &rep, &sr, &err) ==
                    KT_OK) {
                    CHECKF(!rep.values_ok && rep.mismatches > 0 && !rep.ok,
                           "stale object %d read as if swapped in: "
                           "values_ok %d, %lld mismatches", obj,
                           rep.values_ok, (long long)rep.mismatches);
                    kt_cpu_swap_report_free(&sr);
                } else {
                    CHECKF(0, "stale object: %s", err.message);
                }
                kt_swap_plan_free(&bad);
                found = 1;
            }
            kt_swap_result_free(&r);
        }
    CHECKF(found, "no plan swaps a tensor back into an untouched object");
    setup_free(&s);
    kt_graph_destroy(g);
}

/* The buffers: alone only in-place updates have one (a result buffer);
   partitioned, conversions add receive buffers. */
static void test_buffers(void) {
    kt_graph *g = NULL;
    kt_error err;
    setup s1, s4;
    int o, in_place = 0, with_buf = 0, recv = 0;
    int64_t buf[KT_MAX_VARS + 1];
    if (kt_zoo_build("rnn:layers=2,hidden=8,steps=2,batch=8", &g, &err) !=
        KT_OK)
        return;
    if (setup_make("buffers 1", g, 1, &s1)) {
        for (o = 0; o < kt_graph_op_count(g); o++) {
            const kt_op *op = kt_graph_op(g, o);
            int j, self = 0, any = 0;
            kt_swap_op_buffers(g, &s1.plan, &s1.prog, o, buf);
            for (j = 0; j < op->ninputs; j++) {
                self |= op->input[j] == op->output;
                any |= buf[j] != 0;
            }
            CHECK(!any);
            CHECK((buf[op->ninputs] != 0) == self);
            in_place += self;
            with_buf += buf[op->ninputs] != 0;
        }
        CHECK(in_place > 0 && with_buf == in_place);
        setup_free(&s1);
    }
    if (setup_make("buffers 4", g, 4, &s4)) {
        /* every transfer lands in a buffer: an input's in its receive
           buffer, a result's (reduced or sent) from its result buffer */
        for (o = 0; o < kt_graph_op_count(g); o++) {
            int x;
            kt_swap_op_buffers(g, &s4.plan, &s4.prog, o, buf);
            for (x = s4.prog.xfer_first[o]; x < s4.prog.xfer_first[o + 1];
                 x++) {
                CHECK(buf[s4.prog.xfer[x].role] > 0);
                recv++;
            }
        }
        CHECK(recv > 0);
        setup_free(&s4);
    }
    kt_graph_destroy(g);
}

/* ---------------------------------------------------------- staged programs */

/* The staged program test_cpu.c runs too (kt_test_staged.h). */
#include "kt_test_staged.h"

/* Every allocation of a staged run (partitioned, then swapped at
   capacity cap under plan sp, on `threads` worker threads, so that a
   worker with several devices fails too) failing in turn: a worker that fails
   before its transfers keeps the stages' barriers, so the run ends with
   KT_ERR_NOMEM, never a hang or a relay read of a buffer it never had. */
static void staged_out_of_memory(const kt_graph *g, setup *s,
                                 const kt_swap_plan *sp, int64_t cap,
                                 int threads) {
    kt_cpu_state leaves;
    kt_cpu_options o;
    kt_error err;
    long k, nnomem = 0, other = 0, done = 0;
    if (kt_cpu_state_init(&leaves, g, &err) != KT_OK) return;
    kt_cpu_fill_inputs(g, &leaves, 9);
    memset(&o, 0, sizeof o);
    o.threads = threads;
    for (k = 1; done < 2 && k < 100000; k++) {
        kt_cpu_devices dev;
        kt_cpu_swap_report sr;
        kt_status st;
        int swapped;
        done = 0;
        for (swapped = 0; swapped < 2; swapped++) {
            alloc_count = 0;
            fail_at = k;
            st = swapped ? kt_cpu_run_swapped(g, &s->plan, &s->prog, &s->model,
                                              sp, cap, &leaves, &o, &dev,
                                              &sr, &err)
                         : kt_cpu_run_partitioned(g, &s->plan, &s->prog,
                                                  &leaves, &o, &dev, &err);
            fail_at = 0;
            if (st == KT_OK) {
                kt_cpu_devices_free(&dev);
                if (swapped) kt_cpu_swap_report_free(&sr);
                done += alloc_count < k; /* no allocation left to fail */
            } else if (st == KT_ERR_NOMEM)
                nnomem++;
            else {
                CHECKF(0, "staged, %d threads, allocation %ld failing: %s",
                       threads, k, err.message);
                other++;
            }
        }
    }
    CHECKF(nnomem > 10 && other == 0, "staged, %d threads: %ld runs out "
           "of memory, %ld other", threads, nnomem, other);
    kt_cpu_state_free(&leaves);
}

/* The staged program run under a memory cap: the relay of W reads the
   sender's receive buffer in its arena, the relay of s its tile there;
   at the smallest pool and with everything resident, steady and cold;
   and out of memory at every allocation with 1 to 4 worker threads
   (staged_out_of_memory). */
static void test_staged(void) {
    kt_graph *g = NULL;
    kt_error err;
    kt_plan p;
    setup s;
    int k;
    CHECK(kt_graph_create(&g, &err) == KT_OK);
    if (kt_graph_parse(g, staged_src, strlen(staged_src), &err) != KT_OK) {
        CHECKF(0, "staged: %s", err.message);
        kt_graph_destroy(g);
        return;
    }
    memset(&s, 0, sizeof s);
    if (!staged_plan(g, &p)) {
        kt_graph_destroy(g);
        return;
    }
    if (!staged_program(g, &p, &s.prog)) {
        kt_plan_free(&p);
        kt_graph_destroy(g);
        return;
    }
    s.plan = p;
    if (!setup_finish("staged", g, &s)) {
        kt_graph_destroy(g);
        return;
    }
    for (k = 0; k < 4; k++) {
        char label[96];
        int64_t cap = k < 2 ? s.minimal : s.all;
        snprintf(label, sizeof label, "staged, %lld bytes, %s", (long long)cap,
                 k % 2 ? "cold" : "steady");
        plan_and_run(label, g, &s, k % 2 ? KT_SWAP_SEARCH_GA
                                          : KT_SWAP_SEARCH_NONE,
                     k % 2, cap, 70 + (uint64_t)k);
    }
    {
        kt_swap_options o;
        kt_swap_result r;
        memset(&o, 0, sizeof o);
        o.memory = s.minimal;
        if (kt_swap_search(&s.model, KT_SWAP_SEARCH_NONE, &o, &r, &err) ==
            KT_OK) {
            int threads;
            for (threads = 1; threads <= 4; threads++)
                staged_out_of_memory(g, &s, &r.plan, s.minimal, threads);
            kt_swap_result_free(&r);
        } else
            CHECKF(0, "staged: %s", err.message);
    }
    setup_free(&s);
    kt_graph_destroy(g);
}

/* Every allocation of a swapped run on `threads` worker threads failing
   in turn: the run reports KT_ERR_NOMEM (or, where the failure is
   absorbed, succeeds) and frees everything (ASan and valgrind see
   leaks).  With several threads which allocation fails depends on how
   they interleave, so the count of runs out of memory varies a little
   from run to run. */
static void swapped_out_of_memory(const kt_graph *g, setup *s,
                                  const kt_swap_plan *sp,
                                  const kt_cpu_state *leaves, int threads) {
    kt_cpu_options o;
    kt_error err;
    long k, nok = 0, nnomem = 0, other = 0, step = under_valgrind() ? 7 : 1;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    for (k = 1;; k += step) {
        kt_cpu_devices dev;
        kt_cpu_swap_report sr;
        kt_status st;
        alloc_count = 0;
        fail_at = k;
        st = kt_cpu_run_swapped(g, &s->plan, &s->prog, &s->model, sp,
                                s->minimal, leaves, &o, &dev, &sr, &err);
        fail_at = 0;
        if (st == KT_OK) {
            kt_cpu_devices_free(&dev);
            kt_cpu_swap_report_free(&sr);
            nok++;
            if (alloc_count < k) break; /* no allocation left to fail */
        } else if (st == KT_ERR_NOMEM) {
            CHECK(dev.tile == NULL && sr.device == NULL);
            nnomem++;
        } else {
            CHECKF(0, "%d threads, allocation %ld failing: status %d, %s",
                   threads, k, (int)st, err.message);
            other++;
        }
        if (k > 100000) break;
    }
    CHECKF(nnomem > 10 && other == 0, "%d threads: %ld runs out of memory, "
           "%ld OK, %ld other", threads, nnomem, nok, other);
}

/* What the failure tests run: a zoo model on ndev devices, the swap plan
   without search at the smallest pool, and random leaves. */
typedef struct failing_run {
    kt_graph *g;
    setup s;
    kt_swap_result r;
    kt_cpu_state leaves;
} failing_run;

/* 0: not made (reported), nothing left to free. */
static int failing_run_make(const char *label, const char *model, int ndev,
                            uint64_t seed, failing_run *f) {
    kt_error err;
    kt_swap_options o;
    memset(f, 0, sizeof *f);
    if (kt_zoo_build(model, &f->g, &err) != KT_OK) {
        CHECKF(0, "%s: %s", label, err.message);
        return 0;
    }
    if (!setup_make(label, f->g, ndev, &f->s)) {
        kt_graph_destroy(f->g);
        return 0;
    }
    memset(&o, 0, sizeof o);
    o.memory = f->s.minimal;
    if (kt_swap_search(&f->s.model, KT_SWAP_SEARCH_NONE, &o, &f->r, &err) !=
        KT_OK) {
        CHECKF(0, "%s: %s", label, err.message);
        setup_free(&f->s);
        kt_graph_destroy(f->g);
        return 0;
    }
    if (kt_cpu_state_init(&f->leaves, f->g, &err) != KT_OK) {
        CHECKF(0, "%s: %s", label, err.message);
        kt_swap_result_free(&f->r);
        setup_free(&f->s);
        kt_graph_destroy(f->g);
        return 0;
    }
    kt_cpu_fill_inputs(f->g, &f->leaves, seed);
    return 1;
}

static void failing_run_free(failing_run *f) {
    kt_cpu_state_free(&f->leaves);
    kt_swap_result_free(&f->r);
    setup_free(&f->s);
    kt_graph_destroy(f->g);
}

/* Every allocation of a verification (serial and partitioned runs, the
   leaves' copy, each op's spans) failing in turn: KT_ERR_NOMEM, or, where
   the failure is absorbed (an element-wise op then goes point by point),
   a verification that passes -- the fallback computes the same values. */
static void verify_out_of_memory(const kt_graph *g, setup *s) {
    kt_cpu_verify_options o;
    kt_error err;
    long k, nok = 0, nnomem = 0, other = 0, step = under_valgrind() ? 7 : 1;
    kt_cpu_verify_defaults(&o);
    o.run.threads = 1;
    for (k = 1;; k += step) {
        kt_cpu_report rep;
        kt_status st;
        alloc_count = 0;
        fail_at = k;
        st = kt_cpu_verify_program(g, &s->plan, &s->prog, &o, &rep, &err);
        fail_at = 0;
        if (st == KT_OK) {
            CHECKF(rep.ok, "verify, allocation %ld failing: passed the run "
                   "but not the comparison", k);
            nok++;
            if (alloc_count < k) break; /* no allocation left to fail */
        } else if (st == KT_ERR_NOMEM) {
            nnomem++;
        } else {
            CHECKF(0, "verify, allocation %ld failing: status %d, %s", k,
                   (int)st, err.message);
            other++;
        }
        if (k > 100000) break;
    }
    CHECKF(nnomem > 10 && other == 0, "verify: %ld runs out of memory, %ld "
           "OK, %ld other", nnomem, nok, other);
}

/* A small MLP on 2 devices out of memory at every allocation, with one
   worker thread and with one per device, and its verification. */
static void test_out_of_memory(void) {
    failing_run f;
    if (!failing_run_make("out of memory", "mlp:layers=2,hidden=8,batch=4", 2,
                          5, &f))
        return;
    swapped_out_of_memory(f.g, &f.s, &f.r.plan, &f.leaves, 1);
    swapped_out_of_memory(f.g, &f.s, &f.r.plan, &f.leaves, 2);
    verify_out_of_memory(f.g, &f.s);
    failing_run_free(&f);
}

/* One run of test_thread_start_fails: swapped (under sp) or partitioned,
   on `threads` workers, start `fails` failing (threads + 1: none),
   `late` or at once. */
static void thread_start_case(const kt_graph *g, setup *s,
                              const kt_swap_plan *sp,
                              const kt_cpu_state *leaves, int threads,
                              int fails, int late, int swapped) {
    const char *how = swapped ? "swapped" : "partitioned";
    kt_cpu_options o;
    kt_cpu_devices dev;
    kt_cpu_swap_report sr;
    kt_error err;
    kt_status st;
    char want[64];
    memset(&o, 0, sizeof o);
    o.threads = threads;
    thread_starts = 0;
    thread_fail_at = fails;
    thread_fail_late = late;
    st = swapped ? kt_cpu_run_swapped(g, &s->plan, &s->prog, &s->model, sp,
                                      s->minimal, leaves, &o, &dev, &sr, &err)
                 : kt_cpu_run_partitioned(g, &s->plan, &s->prog, leaves, &o,
                                          &dev, &err);
    thread_fail_at = 0;
    snprintf(want, sizeof want, "could not start worker thread %d of %d",
             fails, threads);
    if (fails > threads)
        CHECKF(st == KT_OK, "%s, %d threads: %s", how, threads, err.message);
    else
        CHECKF(st == KT_ERR_NOMEM && strstr(err.message, want) &&
                   dev.tile == NULL && (!swapped || sr.device == NULL),
               "%s, thread %d of %d not started%s: status %d, %s", how,
               fails, threads, late ? " late" : "", (int)st, err.message);
    if (st == KT_OK) {
        kt_cpu_devices_free(&dev);
        if (swapped) kt_cpu_swap_report_free(&sr);
    }
}

/* A worker thread that cannot be started (the process is out of them):
   both executors, on 4 devices with 2 to 4 threads and every start
   failing in turn, end with KT_ERR_NOMEM naming the thread, and hand back
   nothing -- the threads already started are released from the barrier
   they wait at and joined, not left hanging (ASan and valgrind see what
   is not freed): failing at once, while they may still be on their way
   to it, and failing once all of them wait there (the run must wake
   them).  Then a run starts every thread and succeeds. */
static void test_thread_start_fails(void) {
    failing_run f;
    int threads, fails, swapped, late;
    if (!failing_run_make("thread start", "mlp:layers=2,hidden=8,batch=8", 4,
                          6, &f))
        return;
    alarm(300); /* a run left hanging at its barrier ends the test */
    for (threads = 2; threads <= 4; threads++)
        for (fails = 1; fails <= threads + 1; fails++)
            for (late = 0; late <= (fails > 1 && fails <= threads); late++)
                for (swapped = 0; swapped < 2; swapped++)
                    thread_start_case(f.g, &f.s, &f.r.plan, &f.leaves,
                                      threads, fails, late, swapped);
    alarm(0);
    failing_run_free(&f);
}

int main(void) {
    test_figure41();
    test_buffers();
    test_swaps_happen();
    test_corrupted();
    test_stale_object();
    test_out_of_memory();
    test_thread_start_fails();
    test_staged();
    test_zoo();
    test_random();
    return KT_TEST_SUMMARY();
}
