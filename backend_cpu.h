/* backend_cpu.h -- ktile part 4: the CPU reference executor and the
   verification of partitioned training steps.   MIT licence, see LICENSE.

   WHAT IT IS FOR
     ktile's promise is that a partitioned step computes the same numbers
     as the serial one.  This header is the proof, and the oracle every
     other backend is checked against:
       - a serial reference executor for every operator a model file can
         state: a generic evaluator that walks the index space of the TDL
         statement (Tofu 4.1) -- zero padding where a read is pad(...),
         sum/max/min/prod reductions, opaque(softmax_xent) -- plus a fast
         path that runs product-sums (matrix products, batched products,
         convolutions as im2col) as blocked matrix multiplications;
       - a partitioned executor that runs the per-device program of
         sched.h's kt_lower, its devices dealt round-robin to worker
         threads (one per processor by default; the results do not depend
         on the count).  Every device owns its buffers (no tensor is
         shared between devices); transfers copy regions from one device's
         buffers into another's,
         reductions combine partial results, and every received byte is
         counted per device pair (SOYBEAN 5, Tofu 6: the executed
         communication must be what the plan's cost predicts);
       - verification: both runs on the same fresh random inputs (seeded,
         never zeros; every computed tensor poisoned with NaN before each
         run), every tensor on every device compared with the serial value
         within tol + |ref| * eps, and the bytes moved compared with
         kt_plan_eval's prediction.
       - runs under a memory cap: a swap.h plan (SwapAdvisor, Huang thesis
         4.3) executed with each device's memory ONE arena of the given
         capacity carved into the plan's pool objects, host memory beside
         it; swap-ins and swap-outs are real copies, every op reads and
         writes the arena, and the executor checks (never assumes) that
         every tensor lies inside its object and the arena, that no two
         live tensors overlap, that the objects in use stay within the
         capacity, and counts the bytes it swaps against the plan's.

   LAYERING
     backend_cpu.h includes swap.h (which includes sched.h and tiling.h):
     DESIGN.md's one-way order tiling.h -> sched.h -> swap.h ->
     backend_cpu.h.  Nothing of swap.h is needed to run or verify plans
     without a memory cap; the swap types appear only in the
     kt_cpu_*swap* functions.

   HOW TO USE IT
     #define KT_IMPLEMENTATION in one C file before including it (it
     includes swap.h, sched.h and tiling.h itself); link with -lpthread.
     Never put the ktile directory on the include path (sched.h would
     shadow the POSIX <sched.h> that <pthread.h> includes).

         kt_cpu_verify_options o;  kt_cpu_report r;
         kt_cpu_verify_defaults(&o);
         kt_cpu_verify(graph, &plan, &o, &r, &err);   -> r.ok, r.max_rel_error

     The program sched.h simulates on a topology t (its collectives'
     trees follow t's levels; kt_cpu_verify runs kt_lower's, a level per
     cut), as `ktile verify --topology` does:
         kt_lower_on(graph, &plan, &t, &prog, &err);
         kt_cpu_verify_program(graph, &plan, &prog, &o, &r, &err);

     Under a memory cap (swap.h): lower the plan, build the model with the
     executor's buffers, plan, run:
         kt_lower(graph, &plan, &prog, &err);
         kt_swap_model_from_program(graph, &plan, &prog, NULL, &m, &err);
         so.memory = cap;  kt_swap_search(&m, KT_SWAP_SEARCH_GA, &so, &res, &err);
         kt_cpu_verify_swap(graph, &plan, &prog, &m, &res.plan, cap, &o, &r,
                            &sr, &err);   -> r.ok, sr.swapped_in_bytes, ...

   PUBLIC FUNCTIONS
     values      kt_cpu_state_init kt_cpu_state_free kt_cpu_state_check
                 kt_cpu_fill_inputs kt_cpu_input_value
     serial      kt_cpu_check_graph kt_cpu_run_op kt_cpu_run_serial
     partitioned kt_cpu_run_partitioned kt_cpu_devices_free
     verify      kt_cpu_verify_defaults kt_cpu_verify kt_cpu_verify_program
                 kt_cpu_compare
     swap runs   kt_cpu_run_swapped kt_cpu_verify_swap kt_cpu_swap_report_free
     kernels     kt_cpu_gemm

   CONFIGURATION (define before including)
     KT_CPU_REAL   double   element type of every buffer (float allowed)
     KT_CPU_ACC    double   accumulation type of sums and products (float64
                            accumulation by default; float for speed)
     KT_CPU_BLAS   -        defined: the matrix products of the fast path
                            call cblas_sgemm/cblas_dgemm (link OpenBLAS)
     KT_CPU_NO_SIMD -       defined: no vector extensions and no AVX2 copy
                            of the kernel (plain C loops)
     KT_CPU_MAX_OP_POINTS 1e13  most index points of one op (the product
                            of its variables' extents); more is refused,
                            KT_ERR_LIMIT naming the op and line
     KT_CPU_MAX_READS 64    most tensor reads in one op (each costs about
                            1.4 KB of the per-op context); more is
                            KT_ERR_LIMIT naming the op (and, for an op
                            autodiff wrote, its forward op's line)
     KT_CPU_MAX_THREADS 4096  most worker threads a partitioned run takes
                            (kt_cpu_options.threads); more is KT_ERR_LIMIT
     KT_CPU_THREAD_CREATE(thread, start, arg)  how a worker thread is
                            started (pthread_t *, void *(*)(void *),
                            void *): pthread_create(thread, NULL, start,
                            arg) by default.  Called on the caller's
                            thread once per worker; 0 must mean the
                            thread runs start(arg), anything else ends
                            the run with KT_ERR_NOMEM.  A program may
                            route it to a function of its own that sets
                            a stack size (a pthread_attr_t) or counts
                            threads
     and those of tiling.h (KT_MALLOC, KT_REALLOC, KT_FREE, KT_ASSERT).

   Byte counts are elements moved times the tensor's declared element size
   (kt_tensor.elem_bytes), whatever KT_CPU_REAL is, so they compare with the
   plan's cost.  The library never prints and never exits.
*/
#ifndef KT_BACKEND_CPU_H
#define KT_BACKEND_CPU_H

#include "swap.h"

#ifndef KT_CPU_REAL
#define KT_CPU_REAL double
#endif
#ifndef KT_CPU_ACC
#define KT_CPU_ACC double
#endif
/* The most index points one op may have (the product of its variables'
   extents): the reference evaluator visits each, so a model whose
   reductions run over 2^40 points would run for days; refused instead,
   naming the op and line. */
#ifndef KT_CPU_MAX_OP_POINTS
#define KT_CPU_MAX_OP_POINTS 1e13
#endif
/* The most tensor reads one op may have: the per-op context holds each
   read's affine map in fixed arrays (no allocation per read). */
#ifndef KT_CPU_MAX_READS
#define KT_CPU_MAX_READS 64
#endif
/* The most worker threads a partitioned run takes (kt_cpu_options.threads;
   any number of devices shares them): tens of thousands of threads
   exhaust the process. */
#ifndef KT_CPU_MAX_THREADS
#define KT_CPU_MAX_THREADS 4096
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef KT_CPU_REAL kt_real;
typedef KT_CPU_ACC kt_acc;

/* The value of every tensor of a graph: full size, row-major. */
typedef struct kt_cpu_state {
    int ntensors;
    kt_real **val;      /* ntensors arrays                                 */
    int64_t *numel;     /* elements of each                                */
} kt_cpu_state;

typedef struct kt_cpu_options {
    int reference_only; /* 1: the generic evaluator for every op (no fast
                           paths): slow, the plain reference semantics    */
    int threads;        /* worker threads of a partitioned run, each
                           running every threads-th device (0: one per
                           online processor; never more than the
                           devices).  The results are the same bit for
                           bit whatever the count: a device's work and
                           the order of its sums do not depend on it    */
} kt_cpu_options;

/* The result of a partitioned run: every device's tile of every tensor
   (its place in the tensor's tiling) and the bytes it received. */
typedef struct kt_cpu_devices {
    int64_t ndev;
    int ntensors;
    kt_box *box;          /* ndev * ntensors: [d * ntensors + t]          */
    kt_real **tile;       /* ndev * ntensors: row-major over box          */
    int64_t npairs;       /* ordered device pairs some executed transfer  */
    kt_pair_bytes *pairs; /*   joined, and the bytes dst received from src,
                             counted as the workers copied them; sorted by
                             (src, dst) like kt_program_count_pairs' list
                             (kt_pair_bytes_lookup reads either): memory
                             follows the transfers, not ndev^2            */
    int64_t bytes_moved;  /* their sum                                     */
} kt_cpu_devices;

typedef struct kt_cpu_mismatch {
    int tensor;
    int64_t device;               /* -1: the serial run itself            */
    int64_t index[KT_MAX_DIMS];
    double got, want;
} kt_cpu_mismatch;

#define KT_CPU_REPORT_MISMATCHES 8

typedef struct kt_cpu_report {
    int ok;                 /* values_ok and bytes_ok                      */
    int values_ok;          /* every element within tol + |ref| * eps, and
                               none unchecked                              */
    int bytes_ok;           /* bytes_moved == predicted_bytes              */
    double max_rel_error;   /* max |got - ref| / (|ref| + tol / eps) (eps
                               0: / (|ref| + 1)): with eps > 0 the values
                               agree iff it is <= eps and nothing is
                               unchecked                                  */
    double max_abs_error;
    int worst_tensor;       /* where max_rel_error was seen, -1 if every
                               element agrees exactly                     */
    int64_t compared;       /* elements compared (every device's tiles)    */
    int64_t mismatches;
    int64_t unchecked;      /* elements NaN in the serial run and on the
                               device: nothing to check them by (NaN also
                               marks an element nobody wrote), so values_ok
                               needs none                                  */
    int first_unchecked;    /* the tensor of the first, -1 if none         */
    int nreported;          /* first mismatches, in tensor/device order    */
    kt_cpu_mismatch first[KT_CPU_REPORT_MISMATCHES];
    int64_t bytes_moved;    /* counted by the partitioned executor         */
    int64_t predicted_bytes;/* kt_plan_eval's total                        */
    int64_t program_bytes;  /* the lowered program's total                 */
    int64_t ndev;
} kt_cpu_report;

typedef struct kt_cpu_verify_options {
    uint64_t seed;          /* input values; same seed, same report        */
    double tol, eps;        /* an element agrees when |got - ref| <= tol +
                               |ref| * eps (equal values, infinities
                               included, always agree).  tol is absolute:
                               values far below it are checked only as
                               closely as it says (README "Verification") */
    kt_cpu_options run;
} kt_cpu_verify_options;

/* ----- values */
kt_status kt_cpu_state_init(kt_cpu_state *s, const kt_graph *g,
                            kt_error *err);
void kt_cpu_state_free(kt_cpu_state *s);
/* Whether s is a state of g (what kt_cpu_state_init(s, g) made): its
   tensor count and every tensor's size are g's.  Every function taking a
   graph and a state checks this first and refuses another graph's state
   with KT_ERR_INVALID naming the tensor. */
kt_status kt_cpu_state_check(const kt_graph *g, const kt_cpu_state *s,
                             kt_error *err);
/* The value verification gives element `index` (row-major) of leaf tensor
   t for a seed: magnitude in [0.25, 1) times a scale, random sign, never
   zero.  Weights are scaled by 1/sqrt(fan-in) (the extent of the
   reduction of the first product-sum reading them), so activations stay
   near 1 through deep models; optimizer states are positive (Adam takes
   their square root).  NaN when g has no tensor t. */
double kt_cpu_input_value(const kt_graph *g, int t, int64_t index,
                          uint64_t seed);
/* Leaves (inputs, weights, optimizer states) get kt_cpu_input_value, every
   other tensor NaN (a poison: an element nobody writes shows).  Does
   nothing when s is not a state of g (kt_cpu_state_check says why; every
   run refuses such a state anyway). */
void kt_cpu_fill_inputs(const kt_graph *g, kt_cpu_state *s, uint64_t seed);

/* ----- serial */
/* Checks that every op can be executed (known opaque computations with
   the arguments they expect); names the op and line otherwise. */
kt_status kt_cpu_check_graph(const kt_graph *g, kt_error *err);
/* Runs op `op` over its whole index space on s (in place where the op
   writes a tensor it reads).  KT_ERR_INVALID when g has no op `op` or s
   does not hold its tensors at g's sizes. */
kt_status kt_cpu_run_op(const kt_graph *g, int op, kt_cpu_state *s,
                        const kt_cpu_options *opt, kt_error *err);
/* Every op in graph order (opt may be NULL); s must be a state of g. */
kt_status kt_cpu_run_serial(const kt_graph *g, kt_cpu_state *s,
                            const kt_cpu_options *opt, kt_error *err);

/* ----- partitioned */
/* Runs program prog (kt_lower of plan p; a test may alter it) on
   opt->threads worker threads (opt may be NULL: the default, one per
   online processor; never more than the devices), worker w running
   devices w, w + threads, ...: the tiles and byte counts are the same
   bit for bit for every count.  Leaf tiles are loaded from `leaves` (a state of g;
   only its leaf tensors are read), every other buffer starts as NaN.
   Before anything is allocated, p, prog and leaves are checked against g
   (linear in the program): KT_ERR_INVALID, naming the field, for a plan
   or state of another graph, a program of other ops or devices, a task
   box outside its op's index space or inverted, xfer_first not running
   from 0 to nxfer without going back, a transfer of another op, role,
   tensor or device pair, of an unknown kind or negative bytes, or over a
   region outside its tensor or inverted.  KT_ERR_INTERNAL when a
   transfer's region, inside its tensor, is not where the program says
   (not held by the sender or not wanted by the receiver), or when a
   relay or reduction reads a region another transfer of its stage
   writes into its sender (a stage runs at once: it would race).
   KT_ERR_LIMIT for an op of more than INT_MAX / 4 transfers, or more than
   KT_CPU_MAX_THREADS threads asked for; KT_ERR_INVALID for fewer than
   none. */
kt_status kt_cpu_run_partitioned(const kt_graph *g, const kt_plan *p,
                                 const kt_program *prog,
                                 const kt_cpu_state *leaves,
                                 const kt_cpu_options *opt,
                                 kt_cpu_devices *out, kt_error *err);
void kt_cpu_devices_free(kt_cpu_devices *d);

/* ----- verification */
void kt_cpu_verify_defaults(kt_cpu_verify_options *o);
/* Serial and partitioned run of plan p on the same inputs, compared.
   Returns KT_OK when both ran (rep->ok says whether they agree). */
kt_status kt_cpu_verify(const kt_graph *g, const kt_plan *p,
                        const kt_cpu_verify_options *o, kt_cpu_report *rep,
                        kt_error *err);
/* The same with a given program (tests drop a transfer from one); the
   plan and the program are checked against g as kt_cpu_run_partitioned
   does, before the serial run. */
kt_status kt_cpu_verify_program(const kt_graph *g, const kt_plan *p,
                                const kt_program *prog,
                                const kt_cpu_verify_options *o,
                                kt_cpu_report *rep, kt_error *err);
/* Compares every device's tiles with the serial values: fills the value
   fields of rep (ok, values_ok, max errors, mismatches).  KT_ERR_INVALID,
   rep untouched, when ref is not a state of g or dev not a result of g's
   tensors (another tensor count, a box outside its tensor, a missing
   tile). */
kt_status kt_cpu_compare(const kt_graph *g, const kt_cpu_state *ref,
                         const kt_cpu_devices *dev, double tol, double eps,
                         kt_cpu_report *rep, kt_error *err);

/* ----- kernels */
/* C[m x n] += A[m x k] * B[k x n], all row-major and contiguous: the
   blocked kernel of the fast path (or BLAS with KT_CPU_BLAS). */
void kt_cpu_gemm(int64_t m, int64_t n, int64_t k, const kt_acc *a,
                 const kt_acc *b, kt_acc *c);

/* ----- runs under a memory cap (swap.h plans) */
/* What one device's run of a swap plan did: copies counted in the
   tensors' declared bytes, as the plan counts them. */
typedef struct kt_cpu_swap_device {
    int64_t in_bytes, out_bytes;       /* executed: host -> arena, back     */
    int64_t planned_in_bytes;          /* the plan's copies at this         */
    int64_t planned_out_bytes;         /*   device's tile sizes             */
    int64_t peak_bytes;        /* most bytes of pool objects holding tensors */
    int64_t peak_tensor_bytes; /* most bytes of tensors in the arena         */
    int64_t high_water;        /* highest arena byte ever written + 1        */
    int64_t actions;           /* plan actions carried out                  */
} kt_cpu_swap_device;

typedef struct kt_cpu_swap_report {
    int ok;                    /* every device copied what the plan says,
                                  its peak is the plan's, and one device
                                  alone copies the plan's swapped_bytes    */
    int64_t ndev, capacity;    /* bytes of each device's arena              */
    int64_t pool_bytes;        /* the plan's pool, laid out in the arena    */
    int64_t plan_swapped_bytes, plan_peak_bytes; /* the plan's figures     */
    int64_t swapped_in_bytes, swapped_out_bytes; /* executed, all devices  */
    int64_t planned_in_bytes, planned_out_bytes; /* the same, planned      */
    int64_t peak_bytes;        /* most over the devices                    */
    kt_cpu_swap_device *device;/* ndev entries                             */
} kt_cpu_swap_report;

/* Runs program prog (kt_lower of plan p) following swap plan sp (a pool
   plan of kt_swap_plan_build or kt_swap_search's GA/none) of model m
   (kt_swap_model_from_program of the same g, p, prog): every device's
   memory is one arena of `capacity` bytes carved into the plan's pool
   objects, host memory holds the rest.  Leaves come from `leaves`; out
   gets every device's final tiles (a dead tensor's value as it was freed)
   and the bytes the transfers moved; rep the swap figures (free with
   kt_cpu_swap_report_free).  A plan that does not run -- an op whose
   tensor is not in device memory, two tensors in one object, an object
   outside the arena, a drop that would lose an update, a swap-in of a
   stale host copy -- is KT_ERR_INVALID naming the step, device, op and
   tensor.  g, p, prog and leaves are checked as kt_cpu_run_partitioned
   checks them, and sp's pool (a negative object count or size, sizes
   summing past the capacity) before anything is allocated. */
kt_status kt_cpu_run_swapped(const kt_graph *g, const kt_plan *p,
                             const kt_program *prog, const kt_swap_model *m,
                             const kt_swap_plan *sp, int64_t capacity,
                             const kt_cpu_state *leaves,
                             const kt_cpu_options *opt, kt_cpu_devices *out,
                             kt_cpu_swap_report *rep, kt_error *err);
void kt_cpu_swap_report_free(kt_cpu_swap_report *rep);
/* Serial run and kt_cpu_run_swapped on the same inputs, compared as
   kt_cpu_verify does; rep->ok also requires srep->ok. */
kt_status kt_cpu_verify_swap(const kt_graph *g, const kt_plan *p,
                             const kt_program *prog, const kt_swap_model *m,
                             const kt_swap_plan *sp, int64_t capacity,
                             const kt_cpu_verify_options *o,
                             kt_cpu_report *rep, kt_cpu_swap_report *srep,
                             kt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* KT_BACKEND_CPU_H */

/* ======================================================================= */
/*                              IMPLEMENTATION                             */
/* ======================================================================= */
#ifdef KT_IMPLEMENTATION
#ifndef KT_BACKEND_CPU_IMPLEMENTED
#define KT_BACKEND_CPU_IMPLEMENTED

/* The header this one builds on, again: if it was first included without
   KT_IMPLEMENTATION, its declarations guard kept it from being re-read
   above, and its implementation would be missing (swap.h's pulls in
   sched.h's and tiling.h's; the swap runs check a model as its planners
   do).  Its own guards make this a no-op otherwise. */
#include "swap.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h> /* sysconf: the processors, for the default threads */
/* Internal, for the tests: called as each receiver runs a transfer (its
   device, the transfer), on that device's worker thread, so that a test
   can check the order sums are combined in end to end. */
#ifndef KT__PULLED
#define KT__PULLED(dev, x) ((void)0)
#endif
#ifndef KT_CPU_THREAD_CREATE
#define KT_CPU_THREAD_CREATE(thread, start, arg) \
    pthread_create(thread, NULL, start, arg)
#endif
#ifdef KT_CPU_BLAS
#include <cblas.h>
#endif

#ifdef __cplusplus
#define KT__RESTRICT __restrict
#else
#define KT__RESTRICT restrict
#endif

/* ------------------------------------------------------------ accesses */

/* One read of a statement, made concrete: dimension d of the tensor is
   read at floor((sum_v coef[d][v] * v + c[d]) / div[d]).  At a single point
   of the index space a symbolic interval's lower and upper bound agree,
   so its lower bound with LO_v = HI_v = v is the index (Tofu 4.2). */
typedef struct kt__acc {
    int tensor, input, padded, rank;
    int64_t shape[KT_MAX_DIMS];
    int64_t coef[KT_MAX_DIMS][KT_MAX_VARS];
    int64_t c[KT_MAX_DIMS], div[KT_MAX_DIMS];
    int whole[KT_MAX_DIMS];
    int depends[KT_MAX_VARS]; /* 1 when some dimension moves with v */
} kt__acc;

static void kt__acc_make(const kt_graph *g, const kt_op *op, int a,
                         kt__acc *out) {
    const kt_access *ac = &op->access[a];
    const kt_tensor *t = kt_graph_tensor(g, ac->tensor);
    int d, v;
    memset(out, 0, sizeof *out);
    out->tensor = ac->tensor;
    out->input = ac->input;
    out->padded = ac->padded;
    out->rank = t->rank;
    for (d = 0; d < t->rank; d++) {
        const kt_sym_interval *s = &ac->dim[d];
        out->shape[d] = t->shape[d];
        out->whole[d] = ac->whole[d];
        out->c[d] = s->lower.c;
        out->div[d] = s->divisor > 0 ? s->divisor : 1;
        for (v = 0; v < op->nvars; v++) {
            out->coef[d][v] = s->lower.lo_coef[v] + s->lower.hi_coef[v];
            if (out->coef[d][v] && !ac->whole[d]) out->depends[v] = 1;
        }
    }
}

/* The output as an access: dimension d is variable d. */
static void kt__acc_output(const kt_graph *g, const kt_op *op, kt__acc *out) {
    const kt_tensor *t = kt_graph_tensor(g, op->output);
    int d;
    memset(out, 0, sizeof *out);
    out->tensor = op->output;
    out->input = -1;
    out->rank = op->out_rank;
    for (d = 0; d < op->out_rank; d++) {
        out->shape[d] = t->shape[d];
        out->coef[d][d] = 1;
        out->div[d] = 1;
        out->depends[d] = 1;
    }
}

static int64_t kt__floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b) && ((a < 0) != (b < 0))) q--;
    return q;
}

/* ------------------------------------------------------------- views */

/* A buffer holding region `box` of a tensor, row-major over the box. */
typedef struct kt__view {
    kt_real *data;
    int rank;
    kt_box box;
    int64_t stride[KT_MAX_DIMS];
} kt__view;

static int64_t kt__box_numel(const kt_box *b, int rank) {
    int64_t n = 1;
    int d;
    for (d = 0; d < rank; d++) {
        int64_t e = b->r[d].hi - b->r[d].lo;
        if (e <= 0) return 0;
        n *= e;
    }
    return n;
}

static void kt__view_set(kt__view *v, kt_real *data, int rank,
                         const kt_box *box) {
    int d;
    v->data = data;
    v->rank = rank;
    v->box = *box;
    for (d = rank - 1; d >= 0; d--)
        v->stride[d] = d == rank - 1 ? 1
                                     : v->stride[d + 1] * (box->r[d + 1].hi -
                                                           box->r[d + 1].lo);
}

static void kt__full_box(int rank, const int64_t *shape, kt_box *b) {
    int d;
    memset(b, 0, sizeof *b);
    for (d = 0; d < rank; d++) {
        b->r[d].lo = 0;
        b->r[d].hi = shape[d];
    }
}

/* Offset of tensor index idx in the view; -1 when outside it. */
static int64_t kt__view_offset(const kt__view *v, const int64_t *idx) {
    int64_t off = 0;
    int d;
    for (d = 0; d < v->rank; d++) {
        if (idx[d] < v->box.r[d].lo || idx[d] >= v->box.r[d].hi) return -1;
        off += (idx[d] - v->box.r[d].lo) * v->stride[d];
    }
    return off;
}

static int kt__box_inside(const kt_box *in, const kt_box *out, int rank) {
    int d;
    if (kt__box_numel(in, rank) == 0) return 1;
    for (d = 0; d < rank; d++)
        if (in->r[d].lo < out->r[d].lo || in->r[d].hi > out->r[d].hi) return 0;
    return 1;
}

/* How a copied element lands: replaced, or combined with the receiver's
   partial result by the op's reducer (a REDUCE transfer). */
typedef enum kt__combine {
    KT__SET = 0, KT__ADD, KT__MAX, KT__MIN, KT__MUL
} kt__combine;

static kt_real kt__combine1(kt__combine how, kt_real old, kt_real v) {
    switch (how) {
    case KT__SET: return v;
    case KT__ADD: return (kt_real)((kt_acc)old + (kt_acc)v);
    case KT__MUL: return (kt_real)((kt_acc)old * (kt_acc)v);
    case KT__MAX: return (v > old || v != v) ? v : old; /* NaN wins */
    case KT__MIN: return (v < old || v != v) ? v : old;
    }
    return v;
}

/* Dimension d of region r spans the whole of both views along it. */
static int kt__spans_views(const kt_box *r, const kt__view *a,
                           const kt__view *b, int d) {
    return r->r[d].lo == a->box.r[d].lo && r->r[d].hi == a->box.r[d].hi &&
           r->r[d].lo == b->box.r[d].lo && r->r[d].hi == b->box.r[d].hi;
}

/* Copies region `r` (inside both views) from src to dst; returns the
   number of elements.  It goes a stretch at a time: the last dimension's
   row, and the dimensions before it as long as the rows after them span
   both views whole (back to back in both buffers: the feature maps of a
   convolution are rows of 2 to 32 elements). */
static int64_t kt__copy_region(const kt__view *src, kt__view *dst,
                               const kt_box *r, kt__combine how) {
    int rank = src->rank, d, outer = rank - 1;
    int64_t at[KT_MAX_DIMS], n = kt__box_numel(r, rank), inner, done = 0;
    if (n == 0) return 0;
    if (rank == 0) {
        dst->data[0] = kt__combine1(how, dst->data[0], src->data[0]);
        return 1;
    }
    inner = r->r[outer].hi - r->r[outer].lo;
    while (outer > 0 && kt__spans_views(r, src, dst, outer)) {
        outer--;
        inner *= r->r[outer].hi - r->r[outer].lo;
    }
    for (d = 0; d < rank; d++) at[d] = r->r[d].lo;
    while (done < n) {
        int64_t so = kt__view_offset(src, at), dof = kt__view_offset(dst, at),
                i;
        const kt_real *s = src->data + so;
        kt_real *t = dst->data + dof;
        if (how == KT__SET) memcpy(t, s, (size_t)inner * sizeof *t);
        else
            for (i = 0; i < inner; i++) t[i] = kt__combine1(how, t[i], s[i]);
        done += inner;
        for (d = outer - 1; d >= 0; d--) { /* odometer over the outer dims */
            if (++at[d] < r->r[d].hi) break;
            at[d] = r->r[d].lo;
        }
        if (d < 0) break;
    }
    return n;
}

static void kt__box_intersect(const kt_box *a, const kt_box *b, int rank,
                              kt_box *out) {
    int d;
    memset(out, 0, sizeof *out);
    for (d = 0; d < rank; d++) {
        out->r[d].lo = a->r[d].lo > b->r[d].lo ? a->r[d].lo : b->r[d].lo;
        out->r[d].hi = a->r[d].hi < b->r[d].hi ? a->r[d].hi : b->r[d].hi;
        if (out->r[d].hi < out->r[d].lo) out->r[d].hi = out->r[d].lo;
    }
}

static void kt__fill_nan(kt_real *p, int64_t n) {
    int64_t i;
    for (i = 0; i < n; i++) p[i] = (kt_real)NAN;
}

/* ------------------------------------------------------- random inputs */

static uint64_t kt__mix64(uint64_t x) { /* splitmix64's finaliser */
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Fan-in of a weight: the reduction extent of the first product-sum that
   reads it (Xavier/He scaling keeps every layer's values near 1, so a
   float tolerance means the same at every depth). */
static double kt__fan_in(const kt_graph *g, int t) {
    int o, a, v;
    for (o = 0; o < kt_graph_op_count(g); o++) {
        const kt_op *op = kt_graph_op(g, o);
        double n = 1;
        int reads = 0;
        if (op->reducer != KT_REDUCE_SUM || op->in_place) continue;
        for (a = 0; a < op->naccess; a++)
            if (op->access[a].tensor == t) reads = 1;
        if (!reads) continue;
        for (v = op->out_rank; v < op->nvars; v++) n *= (double)op->var[v].extent;
        return n;
    }
    return 1;
}

/* kt_cpu_input_value of leaf x (tensor t), given sqrt of its fan-in:
   kt__fan_in walks every op, so a tensor's fill asks it once, not once
   per element. */
static double kt__leaf_value(const kt_tensor *x, int t, int64_t index,
                             uint64_t seed, double sqrt_fan_in) {
    uint64_t h = kt__mix64(seed ^ kt__mix64((uint64_t)t * 0x100000001b3ULL ^
                                            kt__mix64((uint64_t)index)));
    double u = 0.25 + 0.75 * (double)(h >> 11) / 9007199254740992.0;
    if (x->kind == KT_OPTSTATE) return u;
    if (h & 1) u = -u;
    if (x->kind == KT_WEIGHT) u /= sqrt_fan_in;
    return u;
}

double kt_cpu_input_value(const kt_graph *g, int t, int64_t index,
                          uint64_t seed) {
    const kt_tensor *x = kt_graph_tensor(g, t);
    /* no status to return: NaN, the poison every comparison shows */
    if (!x) return (double)NAN;
    return kt__leaf_value(x, t, index, seed,
                          x->kind == KT_WEIGHT ? sqrt(kt__fan_in(g, t)) : 1);
}

static int kt__is_leaf(const kt_tensor *x) { return x->producer < 0; }

kt_status kt_cpu_state_init(kt_cpu_state *s, const kt_graph *g,
                            kt_error *err) {
    int t, n = kt_graph_tensor_count(g);
    memset(s, 0, sizeof *s);
    s->val = (kt_real **)kt__calloc((size_t)n + 1, sizeof(kt_real *));
    s->numel = (int64_t *)kt__calloc((size_t)n + 1, sizeof(int64_t));
    s->ntensors = n;
    if (!s->val || !s->numel) goto oom;
    for (t = 0; t < n; t++) {
        const kt_tensor *x = kt_graph_tensor(g, t);
        kt_box b;
        kt__full_box(x->rank, x->shape, &b);
        s->numel[t] = kt__box_numel(&b, x->rank);
        s->val[t] = (kt_real *)kt__calloc((size_t)s->numel[t] + 1,
                                          sizeof(kt_real));
        if (!s->val[t]) goto oom;
    }
    kt__ok(err);
    return KT_OK;
oom:
    kt_cpu_state_free(s);
    return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory for tensor values");
}

void kt_cpu_state_free(kt_cpu_state *s) {
    int t;
    if (!s) return;
    if (s->val)
        for (t = 0; t < s->ntensors; t++) KT_FREE(s->val[t]);
    KT_FREE(s->val);
    KT_FREE(s->numel);
    memset(s, 0, sizeof *s);
}

/* Elements of tensor x. */
static int64_t kt__tensor_numel(const kt_tensor *x) {
    kt_box b;
    kt__full_box(x->rank, x->shape, &b);
    return kt__box_numel(&b, x->rank);
}

/* Whether s holds tensor t of g: a value array of the tensor's size. */
static kt_status kt__state_tensor(const kt_graph *g, const kt_cpu_state *s,
                                  int t, const char *what, kt_error *err) {
    const kt_tensor *x = kt_graph_tensor(g, t);
    int64_t n = kt__tensor_numel(x);
    if (s->numel[t] != n || (n > 0 && !s->val[t]))
        return kt__fail(err, KT_ERR_INVALID, 0, "%s: tensor %s has %lld "
                        "values%s, the graph gives it %lld (a state of "
                        "another graph?)", what, x->name,
                        (long long)s->numel[t], s->val[t] ? "" : " (none "
                        "allocated)", (long long)n);
    return KT_OK;
}

/* A state belongs to the graph it was made for (kt_cpu_state_init): it
   records the tensor count and every tensor's size, and nothing else ties
   them, so both are compared before any value is read or written -- a
   state of a smaller graph would be indexed out of bounds.  leaves_only:
   only the leaf tensors' sizes (what a partitioned run reads). */
static kt_status kt__state_check(const kt_graph *g, const kt_cpu_state *s,
                                 int leaves_only, const char *what,
                                 kt_error *err) {
    int t, nt = kt_graph_tensor_count(g);
    kt_status st;
    if (!s || !s->val || !s->numel || s->ntensors != nt)
        return kt__fail(err, KT_ERR_INVALID, 0, "%s: a state of %d tensors%s "
                        "for a graph of %d (a state of another graph?)", what,
                        s ? s->ntensors : 0,
                        s && s->val && s->numel ? "" : " (not initialised)",
                        nt);
    for (t = 0; t < nt; t++) {
        if (leaves_only && !kt__is_leaf(kt_graph_tensor(g, t))) continue;
        if ((st = kt__state_tensor(g, s, t, what, err)) != KT_OK) return st;
    }
    return KT_OK;
}

kt_status kt_cpu_state_check(const kt_graph *g, const kt_cpu_state *s,
                             kt_error *err) {
    kt_status st = kt__state_check(g, s, 0, "state", err);
    if (st == KT_OK) kt__ok(err);
    return st;
}

void kt_cpu_fill_inputs(const kt_graph *g, kt_cpu_state *s, uint64_t seed) {
    int t;
    /* void (callers outside this header use it so): a state of another
       graph is left as it is, and the run it is given to refuses it */
    if (kt__state_check(g, s, 0, "state", NULL) != KT_OK) return;
    for (t = 0; t < s->ntensors; t++) {
        const kt_tensor *x = kt_graph_tensor(g, t);
        double sqrt_fan_in;
        int64_t i;
        if (!kt__is_leaf(x)) {
            kt__fill_nan(s->val[t], s->numel[t]);
            continue;
        }
        sqrt_fan_in = x->kind == KT_WEIGHT ? sqrt(kt__fan_in(g, t)) : 1;
        for (i = 0; i < s->numel[t]; i++)
            s->val[t][i] = (kt_real)kt__leaf_value(x, t, i, seed, sqrt_fan_in);
    }
}

/* ----------------------------------------------------- the generic path */

/* Everything one op needs to run on one device (or serially): its reads,
   the views of its inputs and output, the variable box to cover. */
typedef struct kt__opctx {
    const kt_graph *g;
    const kt_op *op;
    kt__acc acc[KT_CPU_MAX_READS];
    int naccess;
    const kt__view *in;   /* per op input (op->input[j])                   */
    kt__view *out;        /* holds at least the output box of `box`        */
    kt_range box[KT_MAX_VARS];
    int outside;          /* a read fell outside its view: a lowering bug  */
    int linear[KT_CPU_MAX_READS]; /* read a: no division, and inside its
                                    view over the whole box (so no
                                    padding applies: kt__read_inside)    */
    int64_t lin_base[KT_CPU_MAX_READS];
    int64_t lin_step[KT_CPU_MAX_READS][KT_MAX_VARS];
    int out_inside;       /* the output box lies inside cx->out           */
    int ntight;           /* bounds on reduction variables (kt__tighten)   */
    int tight_acc[KT_MAX_DIMS * 2], tight_dim[KT_MAX_DIMS * 2],
        tight_var[KT_MAX_DIMS * 2];
} kt__opctx;

/* Value of access a at the variable point `at`: 0 outside a padded read
   (DESIGN.md: pad(...) marks zero padding), NaN (and a flag) outside the
   view, which the executors never let happen. */
static kt_acc kt__read_at(kt__opctx *cx, int a, const int64_t *at) {
    const kt__acc *ac = &cx->acc[a];
    const kt__view *v = &cx->in[ac->input];
    int64_t idx[KT_MAX_DIMS], off;
    int d, u;
    if (cx->linear[a]) {
        off = cx->lin_base[a];
        for (u = 0; u < cx->op->nvars; u++) off += cx->lin_step[a][u] * at[u];
        return (kt_acc)v->data[off];
    }
    for (d = 0; d < ac->rank; d++) {
        int64_t x = ac->c[d];
        for (u = 0; u < cx->op->nvars; u++) x += ac->coef[d][u] * at[u];
        idx[d] = kt__floordiv(x, ac->div[d]);
        if (ac->padded && (idx[d] < 0 || idx[d] >= ac->shape[d])) return 0;
    }
    off = kt__view_offset(v, idx);
    if (off < 0) {
        cx->outside = 1;
        return (kt_acc)NAN;
    }
    return (kt_acc)v->data[off];
}

/* A read without division whose index range over the whole box
   (interval analysis, Tofu 4.2) lies inside its view is an affine
   function of the variables straight into the buffer: no bounds check
   per element.  A padded read qualifies too: every view is a region of
   its tensor (a whole tensor, a tile, or an input box clipped to the
   tensor), so the padding never applies there. */
static int kt__read_inside(const kt__acc *ac, const kt__view *vw,
                           const kt_range *box, int nvars) {
    int d, v;
    for (d = 0; d < ac->rank; d++) {
        int64_t lo = ac->c[d], hi = ac->c[d];
        if (ac->div[d] != 1 || ac->whole[d]) return 0;
        for (v = 0; v < nvars; v++) {
            int64_t k = ac->coef[d][v];
            lo += k * (k > 0 ? box[v].lo : box[v].hi - 1);
            hi += k * (k > 0 ? box[v].hi - 1 : box[v].lo);
        }
        if (lo < vw->box.r[d].lo || hi >= vw->box.r[d].hi) return 0;
    }
    return 1;
}

/* The affine map of a read into its view's buffer: the element at the
   variable point `at` is data[base + sum_v step[v] * at[v]]. */
static void kt__read_offsets(const kt__acc *ac, const kt__view *vw, int nvars,
                             int64_t *base, int64_t *step) {
    int d, v;
    *base = 0;
    for (v = 0; v < nvars; v++) step[v] = 0;
    for (d = 0; d < ac->rank; d++) {
        *base += (ac->c[d] - vw->box.r[d].lo) * vw->stride[d];
        for (v = 0; v < nvars; v++) step[v] += ac->coef[d][v] * vw->stride[d];
    }
}

static void kt__linearize(kt__opctx *cx) {
    const kt_op *op = cx->op;
    int a;
    for (a = 0; a < cx->naccess; a++) {
        const kt__acc *ac = &cx->acc[a];
        const kt__view *vw = &cx->in[ac->input];
        cx->linear[a] = kt__read_inside(ac, vw, cx->box, op->nvars);
        if (cx->linear[a])
            kt__read_offsets(ac, vw, op->nvars, &cx->lin_base[a],
                             cx->lin_step[a]);
    }
}

/* Unary functions propagate NaN, so a poisoned element is never hidden by
   relu or step. */
static kt_acc kt__unary(int fn, kt_acc a) {
    switch (fn) {
    case KT_FN_NEG: return -a;
    case KT_FN_RELU: return a < 0 ? 0 : a;
    case KT_FN_TANH: return (kt_acc)tanh((double)a);
    case KT_FN_SIGMOID: return (kt_acc)(1 / (1 + exp(-(double)a)));
    case KT_FN_EXP: return (kt_acc)exp((double)a);
    case KT_FN_LOG: return (kt_acc)log((double)a);
    case KT_FN_SQRT: return (kt_acc)sqrt((double)a);
    case KT_FN_STEP: return a != a ? a : (a > 0 ? 1 : 0);
    }
    return (kt_acc)NAN;
}

static kt_acc kt__eval(kt__opctx *cx, int node, const int64_t *at) {
    const kt_expr *e = &cx->op->expr[node];
    kt_acc a, b;
    switch (e->kind) {
    case KT_EXPR_CONST: return (kt_acc)e->value;
    case KT_EXPR_ACCESS: return kt__read_at(cx, e->index, at);
    case KT_EXPR_UNARY: return kt__unary(e->fn, kt__eval(cx, e->a, at));
    case KT_EXPR_BINARY:
        a = kt__eval(cx, e->a, at);
        b = kt__eval(cx, e->b, at);
        switch (e->fn) {
        case '+': return a + b;
        case '-': return a - b;
        case '*': return a * b;
        default: return a / b;
        }
    }
    return (kt_acc)NAN;
}

/* Steps `at` over vars [v0, v1) of the box, last fastest; 0 at the end. */
static int kt__odometer(int64_t *at, const kt_range *box, int v0, int v1) {
    int v;
    for (v = v1 - 1; v >= v0; v--) {
        if (++at[v] < box[v].hi) return 1;
        at[v] = box[v].lo;
    }
    return 0;
}

static int kt__box_empty(const kt_range *box, int nvars) {
    int v;
    for (v = 0; v < nvars; v++)
        if (box[v].hi <= box[v].lo) return 1;
    return 0;
}

static kt_real *kt__out_at(kt__opctx *cx, const int64_t *at) {
    int64_t off = kt__view_offset(cx->out, at); /* output dim d is var d */
    if (off < 0) {
        cx->outside = 1;
        return NULL;
    }
    return cx->out->data + off;
}

static int64_t kt__ceildiv(int64_t a, int64_t b) {
    return -kt__floordiv(-a, b);
}

/* The reduction box at output point `at`, narrowed to where every
   tightening read is inside its tensor; 0 when nothing is left. */
static int kt__tight_box(const kt__opctx *cx, const int64_t *at,
                         kt_range *rbox) {
    const kt_op *op = cx->op;
    int i, v;
    memcpy(rbox, cx->box, sizeof(kt_range) * (size_t)op->nvars);
    for (i = 0; i < cx->ntight; i++) {
        const kt__acc *ac = &cx->acc[cx->tight_acc[i]];
        int d = cx->tight_dim[i], r = cx->tight_var[i];
        int64_t base = ac->c[d], k = ac->coef[d][r], lo, hi;
        for (v = 0; v < op->out_rank; v++) base += ac->coef[d][v] * at[v];
        /* 0 <= base + k*r <= shape-1 */
        if (k > 0) {
            lo = kt__ceildiv(-base, k);
            hi = kt__floordiv(ac->shape[d] - 1 - base, k) + 1;
        } else {
            lo = kt__ceildiv(base - ac->shape[d] + 1, -k);
            hi = kt__floordiv(base, -k) + 1;
        }
        if (lo > rbox[r].lo) rbox[r].lo = lo;
        if (hi < rbox[r].hi) rbox[r].hi = hi;
        if (rbox[r].hi <= rbox[r].lo) return 0;
    }
    return 1;
}

/* A body that is the product of two reads, a[...] * b[...]: the
   transposed convolutions kt__tighten narrows. */
typedef struct kt__dot {
    int a, b;
    int64_t base_a, base_b, step_a[KT_MAX_VARS], step_b[KT_MAX_VARS];
} kt__dot;

static int kt__dot_make(const kt__opctx *cx, kt__dot *dot) {
    const kt_op *op = cx->op;
    const kt_expr *e = &op->expr[op->nexpr - 1];
    if (e->kind != KT_EXPR_BINARY || e->fn != '*' ||
        op->expr[e->a].kind != KT_EXPR_ACCESS ||
        op->expr[e->b].kind != KT_EXPR_ACCESS)
        return 0;
    dot->a = op->expr[e->a].index;
    dot->b = op->expr[e->b].index;
    kt__read_offsets(&cx->acc[dot->a], &cx->in[cx->acc[dot->a].input],
                     op->nvars, &dot->base_a, dot->step_a);
    kt__read_offsets(&cx->acc[dot->b], &cx->in[cx->acc[dot->b].input],
                     op->nvars, &dot->base_b, dot->step_b);
    return 1;
}

/* The sum over reduction box rbox (variables v0 on) of A[oa] * B[ob],
   the offsets stepping with the variables: the odometer's order, last
   variable fastest, so the same additions in the same order as the
   generic loop's.  The inner loop runs along the last variable with more
   than one point (those after it stand still): a narrowed filter often
   leaves its last ones a single point. */
static kt_acc kt__dot_sum(const kt_real *A, int64_t oa, const int64_t *sa,
                          const kt_real *B, int64_t ob, const int64_t *sb,
                          const kt_range *rbox, int v0, int nvars) {
    int64_t at[KT_MAX_VARS], x, n;
    int v, last = nvars - 1;
    kt_acc acc = 0;
    for (v = v0; v < nvars; v++) {
        at[v] = rbox[v].lo;
        oa += sa[v] * at[v];
        ob += sb[v] * at[v];
    }
    while (last > v0 && rbox[last].hi - rbox[last].lo == 1) last--;
    n = rbox[last].hi - rbox[last].lo;
    for (;;) {
        for (x = 0; x < n; x++) {
            /* two statements: a compiler may fuse a*b + c within one
               (clang does where there is FMA), which kt__eval's loop, the
               product returned and then added, never is */
            kt_acc product =
                (kt_acc)A[oa + x * sa[last]] * (kt_acc)B[ob + x * sb[last]];
            acc += product;
        }
        for (v = last - 1; v >= v0; v--) {
            oa += sa[v];
            ob += sb[v];
            if (++at[v] < rbox[v].hi) break;
            oa -= sa[v] * (rbox[v].hi - rbox[v].lo);
            ob -= sb[v] * (rbox[v].hi - rbox[v].lo);
            at[v] = rbox[v].lo;
        }
        if (v < v0) return acc;
    }
}

/* The narrowed sum at output point `at` when both reads stay inside
   their views (and tensors) over it: offsets instead of kt__eval's index
   arithmetic per read (5-11x faster on most of a Wide ResNet-50's
   strided input gradients).  0 when a read leaves them (the generic loop
   then pads). */
static int kt__dot_at(const kt__opctx *cx, const kt__dot *dot,
                      const int64_t *at, const kt_range *rbox, kt_acc *sum) {
    const kt_op *op = cx->op;
    const kt__acc *A = &cx->acc[dot->a], *B = &cx->acc[dot->b];
    const kt__view *va = &cx->in[A->input], *vb = &cx->in[B->input];
    kt_range point[KT_MAX_VARS];
    int64_t oa = dot->base_a, ob = dot->base_b;
    int v;
    memcpy(point, rbox, sizeof(kt_range) * (size_t)op->nvars);
    for (v = 0; v < op->out_rank; v++) {
        point[v].lo = at[v];
        point[v].hi = at[v] + 1;
        oa += dot->step_a[v] * at[v];
        ob += dot->step_b[v] * at[v];
    }
    if (!kt__read_inside(A, va, point, op->nvars) ||
        !kt__read_inside(B, vb, point, op->nvars))
        return 0;
    *sum = kt__dot_sum(va->data, oa, dot->step_a, vb->data, ob, dot->step_b,
                       rbox, op->out_rank, op->nvars);
    return 1;
}

/* ------------------------------------ element-wise ops, a span at once */

/* Points an element-wise op evaluates together, in the box's order (last
   variable fastest): each node of its body gets a buffer of this many
   values, and the tree is walked once per span instead of once per
   point. */
#define KT__SPAN 64

/* A span cut into runs: stretches of points along which every linear
   read and the output step by one fixed stride (a row, or several rows
   where they lie back to back in every buffer: a 1x1 convolution's
   weights have rows of one element). */
typedef struct kt__span {
    int64_t n;                          /* points in the span           */
    int nruns;
    int64_t len[KT__SPAN];              /* points of run r              */
    int64_t at[KT__SPAN][KT_MAX_VARS];  /* its first point              */
    int block;   /* variables [block, nvars) form the back-to-back block */
    int row;     /* the block's last variable of more than one point    */
    kt_acc *val; /* nexpr * KT__SPAN values, node k's from k * KT__SPAN  */
} kt__span;

/* Variable v's step is the next moving variable w's step times w's
   extent in every linear read and, when given, in the output's strides:
   the two walk as one. */
static int kt__vars_abut(const kt__opctx *cx, const int64_t *ostride, int v,
                         int w) {
    int64_t ext = cx->box[w].hi - cx->box[w].lo;
    int a;
    if (ostride && ostride[v] != ostride[w] * ext) return 0;
    for (a = 0; a < cx->naccess; a++)
        if (cx->linear[a] && cx->lin_step[a][v] != cx->lin_step[a][w] * ext)
            return 0;
    return 1;
}

/* sp->block and sp->row for cx->box (variables of one point always
   belong to the block: they never move). */
static void kt__span_block(const kt__opctx *cx, const int64_t *ostride,
                           kt__span *sp) {
    int nv = cx->op->nvars, v, w = nv - 1;
    sp->row = sp->block = 0;
    if (nv == 0) return; /* a scalar: one run of one point */
    while (w > 0 && cx->box[w].hi - cx->box[w].lo == 1) w--;
    sp->row = w;
    for (v = w - 1; v >= 0; v--) {
        if (cx->box[v].hi - cx->box[v].lo == 1) continue;
        if (!kt__vars_abut(cx, ostride, v, w)) break;
        w = v;
    }
    sp->block = v + 1;
}

/* Cuts the n points from `at` on into runs, and moves `at` past them. */
static void kt__span_cut(const kt__opctx *cx, int64_t *at, int64_t n,
                         kt__span *sp) {
    const kt_range *box = cx->box;
    int nv = cx->op->nvars, v;
    sp->n = n;
    sp->nruns = 0;
    while (n > 0) {
        int64_t rest = 1, points = 1, len, carry;
        /* points left in the block from `at`: a mixed-radix count */
        for (v = nv - 1; v >= sp->block; v--) {
            rest += (box[v].hi - 1 - at[v]) * points;
            points *= box[v].hi - box[v].lo;
        }
        len = rest < n ? rest : n;
        sp->len[sp->nruns] = len;
        memcpy(sp->at[sp->nruns++], at, sizeof(int64_t) * (size_t)nv);
        n -= len;
        for (carry = len, v = nv - 1; v >= 0 && carry; v--) {
            int64_t ext = box[v].hi - box[v].lo, pos = at[v] - box[v].lo + carry;
            at[v] = box[v].lo + pos % ext;
            carry = pos / ext;
        }
    }
}

/* Offset of the affine map (base, step) at point `at`. */
static int64_t kt__affine_at(int64_t base, const int64_t *step,
                             const int64_t *at, int nv) {
    int v;
    for (v = 0; v < nv; v++) base += step[v] * at[v];
    return base;
}

/* Access a at the span's points: kt__read_at's values, by stepping an
   offset along each run where the read is linear over the box. */
static void kt__read_span(kt__opctx *cx, int a, const kt__span *sp,
                          kt_acc *out) {
    int nv = cx->op->nvars, r;
    int64_t k;
    for (r = 0; r < sp->nruns; r++) {
        if (cx->linear[a]) {
            const kt_real *data = cx->in[cx->acc[a].input].data;
            int64_t along = nv ? cx->lin_step[a][sp->row] : 0,
                    off = kt__affine_at(cx->lin_base[a], cx->lin_step[a],
                                        sp->at[r], nv);
            for (k = 0; k < sp->len[r]; k++)
                out[k] = (kt_acc)data[off + k * along];
        } else {
            int64_t p[KT_MAX_VARS];
            memcpy(p, sp->at[r], sizeof(int64_t) * (size_t)nv);
            for (k = 0; k < sp->len[r]; k++) {
                out[k] = kt__read_at(cx, a, p);
                kt__odometer(p, cx->box, 0, nv);
            }
        }
        out += sp->len[r];
    }
}

/* kt__eval at the span's points, node by node into sp->val: each point's
   value through the same operations as kt__eval's, so the same values
   (but for a NaN's sign: a compiler may swap the operands of + and *). */
static void kt__eval_span(kt__opctx *cx, int node, kt__span *sp) {
    const kt_expr *e = &cx->op->expr[node];
    kt_acc *r = sp->val + (size_t)node * KT__SPAN, *a, *b;
    int64_t i, n = sp->n;
    switch (e->kind) {
    case KT_EXPR_CONST:
        for (i = 0; i < n; i++) r[i] = (kt_acc)e->value;
        return;
    case KT_EXPR_ACCESS: kt__read_span(cx, e->index, sp, r); return;
    case KT_EXPR_UNARY:
        kt__eval_span(cx, e->a, sp);
        a = sp->val + (size_t)e->a * KT__SPAN;
        for (i = 0; i < n; i++) r[i] = kt__unary(e->fn, a[i]);
        return;
    case KT_EXPR_BINARY:
        kt__eval_span(cx, e->a, sp);
        kt__eval_span(cx, e->b, sp);
        a = sp->val + (size_t)e->a * KT__SPAN;
        b = sp->val + (size_t)e->b * KT__SPAN;
        switch (e->fn) {
        case '+': for (i = 0; i < n; i++) r[i] = a[i] + b[i]; return;
        case '-': for (i = 0; i < n; i++) r[i] = a[i] - b[i]; return;
        case '*': for (i = 0; i < n; i++) r[i] = a[i] * b[i]; return;
        default: for (i = 0; i < n; i++) r[i] = a[i] / b[i]; return;
        }
    }
    for (i = 0; i < n; i++) r[i] = (kt_acc)NAN;
}

/* Writes the span's values (the root's) to the output: output dim d is
   variable d. */
static void kt__store_span(kt__opctx *cx, const kt__span *sp, int inside) {
    const kt__view *ov = cx->out;
    const kt_acc *val = sp->val + (size_t)(cx->op->nexpr - 1) * KT__SPAN;
    int nv = cx->op->nvars, r;
    int64_t k;
    for (r = 0; r < sp->nruns; r++) {
        if (inside) {
            int64_t along = nv ? ov->stride[sp->row] : 0,
                    off = kt__view_offset(ov, sp->at[r]);
            for (k = 0; k < sp->len[r]; k++)
                ov->data[off + k * along] = (kt_real)val[k];
        } else {
            int64_t p[KT_MAX_VARS];
            memcpy(p, sp->at[r], sizeof(int64_t) * (size_t)nv);
            for (k = 0; k < sp->len[r]; k++) {
                kt_real *o = kt__out_at(cx, p);
                if (o) *o = (kt_real)val[k];
                kt__odometer(p, cx->box, 0, nv);
            }
        }
        val += sp->len[r];
    }
}

/* An op without reduction over cx->box, KT__SPAN points at a time; 0
   (nothing written) without memory for a span: the caller then goes
   point by point. */
static int kt__run_elementwise(kt__opctx *cx) {
    const kt_op *op = cx->op;
    kt__span *sp = (kt__span *)KT_MALLOC(sizeof(kt__span));
    int64_t at[KT_MAX_VARS], left = 1;
    kt_box ob;
    int v, inside;
    if (!sp) return 0;
    sp->val = (kt_acc *)KT_MALLOC(sizeof(kt_acc) * KT__SPAN * (size_t)op->nexpr);
    if (!sp->val) {
        KT_FREE(sp);
        return 0;
    }
    kt_op_output_box(op, cx->box, &ob);
    inside = kt__box_inside(&ob, &cx->out->box, op->out_rank);
    kt__span_block(cx, inside ? cx->out->stride : NULL, sp);
    for (v = 0; v < op->nvars; v++) {
        at[v] = cx->box[v].lo;
        left *= cx->box[v].hi - cx->box[v].lo;
    }
    while (left > 0) {
        kt__span_cut(cx, at, left < KT__SPAN ? left : KT__SPAN, sp);
        left -= sp->n;
        kt__eval_span(cx, op->nexpr - 1, sp);
        kt__store_span(cx, sp, inside);
    }
    KT_FREE(sp->val);
    KT_FREE(sp);
    return 1;
}

/* The reference semantics of a TDL statement (Tofu 4.1): for every output
   point of the box, the reducer over every reduction point of the box of
   the body's value.  fast: element-wise ops by spans (the same values;
   the reference evaluator goes point by point, which the tests compare
   them with). */
static void kt__run_generic(kt__opctx *cx, int fast) {
    const kt_op *op = cx->op;
    int64_t at[KT_MAX_VARS];
    int v, nred = op->nvars - op->out_rank;
    kt__dot dot;
    int has_dot;
    if (kt__box_empty(cx->box, op->nvars)) return;
    kt__linearize(cx);
    if (fast && nred == 0 && kt__run_elementwise(cx)) return;
    has_dot = cx->ntight && kt__dot_make(cx, &dot);
    for (v = 0; v < op->nvars; v++) at[v] = cx->box[v].lo;
    do {
        kt_acc acc = 0;
        kt_real *o;
        kt_range rbox[KT_MAX_VARS];
        for (v = op->out_rank; v < op->nvars; v++) at[v] = cx->box[v].lo;
        switch (nred ? op->reducer : KT_REDUCE_NONE) {
        case KT_REDUCE_NONE: acc = kt__eval(cx, op->nexpr - 1, at); break;
        case KT_REDUCE_SUM:
            acc = 0;
            if (cx->ntight) {
                if (!kt__tight_box(cx, at, rbox)) break;
                if (has_dot && kt__dot_at(cx, &dot, at, rbox, &acc)) break;
                for (v = op->out_rank; v < op->nvars; v++) at[v] = rbox[v].lo;
                do acc += kt__eval(cx, op->nexpr - 1, at);
                while (kt__odometer(at, rbox, op->out_rank, op->nvars));
                break;
            }
            do acc += kt__eval(cx, op->nexpr - 1, at);
            while (kt__odometer(at, cx->box, op->out_rank, op->nvars));
            break;
        case KT_REDUCE_PROD:
            acc = 1;
            do acc *= kt__eval(cx, op->nexpr - 1, at);
            while (kt__odometer(at, cx->box, op->out_rank, op->nvars));
            break;
        case KT_REDUCE_MAX:
        case KT_REDUCE_MIN: {
            int first = 1, mx = op->reducer == KT_REDUCE_MAX;
            do {
                kt_acc x = kt__eval(cx, op->nexpr - 1, at);
                /* a NaN (poison) wins and then sticks */
                if (first) acc = x;
                else if (acc == acc && (x != x || (mx ? x > acc : x < acc)))
                    acc = x;
                first = 0;
            } while (kt__odometer(at, cx->box, op->out_rank, op->nvars));
            break;
        }
        }
        o = kt__out_at(cx, at);
        if (o) *o = (kt_real)acc;
    } while (kt__odometer(at, cx->box, 0, op->out_rank));
}

/* ------------------------------------------------------ opaque compute */

/* The opaque computations the CPU backend knows.  softmax_xent(z[..,:],
   labels[..,:]) is the cross-entropy of softmax(z) against labels along
   the ':' dimension, sum(l) * logsumexp(z) - sum(l * z);
   softmax_xent_grad(z, labels, dy) is its gradient with respect to z,
   dy * (softmax(z) * sum(l) - l), the class along the output variable
   that no argument indexes (autodiff writes it so). */
static int kt__whole_dim(const kt__acc *a) {
    int d, w = -1;
    for (d = 0; d < a->rank; d++)
        if (a->whole[d]) {
            if (w >= 0) return -2;
            w = d;
        }
    return w;
}

static kt_status kt__check_opaque(const kt_graph *g, const kt_op *op,
                                  kt_error *err) {
    int grad = !strcmp(op->opaque, "softmax_xent_grad"), a, classes = -1;
    int64_t nclass = -1;
    kt__acc ac;
    if (!grad && strcmp(op->opaque, "softmax_xent"))
        return kt__fail(err, KT_ERR_INVALID, op->line, "op %s: opaque "
                        "computation '%s' has no CPU implementation (known: "
                        "softmax_xent, softmax_xent_grad)", op->name,
                        op->opaque);
    if (op->naccess != (grad ? 3 : 2))
        return kt__fail(err, KT_ERR_INVALID, op->line, "op %s: opaque(%s) "
                        "takes %d tensor arguments, not %d", op->name,
                        op->opaque, grad ? 3 : 2, op->naccess);
    for (a = 0; a < 2; a++) {
        int w;
        kt__acc_make(g, op, a, &ac);
        w = kt__whole_dim(&ac);
        if (w < 0 || (nclass >= 0 && ac.shape[w] != nclass))
            return kt__fail(err, KT_ERR_INVALID, op->line, "op %s: opaque(%s)"
                            " argument %d must have exactly one ':' "
                            "dimension, of the same extent as the others",
                            op->name, op->opaque, a + 1);
        nclass = ac.shape[w];
    }
    if (grad) {
        kt__acc_make(g, op, 2, &ac);
        if (kt__whole_dim(&ac) != -1)
            return kt__fail(err, KT_ERR_INVALID, op->line, "op %s: the "
                            "gradient argument of opaque(%s) has a ':' "
                            "dimension", op->name, op->opaque);
        for (a = 0; a < op->out_rank; a++)
            if (!op->var[a].splittable) {
                if (classes >= 0) classes = -2;
                else classes = a;
            }
        if (classes < 0 || op->var[classes].extent != nclass)
            return kt__fail(err, KT_ERR_INVALID, op->line, "op %s: "
                            "opaque(%s) needs one output variable of extent "
                            "%lld for the class", op->name, op->opaque,
                            (long long)nclass);
    }
    return KT_OK;
}

/* Reads argument a along its ':' dimension at the point `at`. */
static kt_acc kt__read_row(kt__opctx *cx, int a, const int64_t *at,
                           int64_t cls) {
    const kt__acc *ac = &cx->acc[a];
    int64_t idx[KT_MAX_DIMS], off;
    int d, u;
    for (d = 0; d < ac->rank; d++) {
        int64_t x = ac->c[d];
        if (ac->whole[d]) {
            idx[d] = cls;
            continue;
        }
        for (u = 0; u < cx->op->nvars; u++) x += ac->coef[d][u] * at[u];
        idx[d] = kt__floordiv(x, ac->div[d]);
    }
    off = kt__view_offset(&cx->in[ac->input], idx);
    if (off < 0) {
        cx->outside = 1;
        return (kt_acc)NAN;
    }
    return (kt_acc)cx->in[ac->input].data[off];
}

static void kt__run_opaque(kt__opctx *cx) {
    const kt_op *op = cx->op;
    int grad = !strcmp(op->opaque, "softmax_xent_grad"), v, cv = -1;
    int64_t at[KT_MAX_VARS], c, nclass = 0;
    int d;
    for (d = 0; d < cx->acc[0].rank; d++)
        if (cx->acc[0].whole[d]) nclass = cx->acc[0].shape[d];
    if (grad)
        for (v = 0; v < op->out_rank; v++)
            if (!op->var[v].splittable) cv = v;
    if (kt__box_empty(cx->box, op->nvars)) return;
    for (v = 0; v < op->nvars; v++) at[v] = cx->box[v].lo;
    do {
        /* one row of logits: recomputed per output element, which is
           O(classes) work per element; the reference favours plainness */
        kt_acc mx = 0, se = 0, sl = 0, slz = 0, lse, val;
        kt_real *o;
        for (c = 0; c < nclass; c++) {
            kt_acc z = kt__read_row(cx, 0, at, c);
            if (c == 0 || z > mx || z != z) mx = z;
        }
        for (c = 0; c < nclass; c++) {
            kt_acc z = kt__read_row(cx, 0, at, c), l = kt__read_row(cx, 1, at, c);
            se += (kt_acc)exp((double)(z - mx));
            sl += l;
            slz += l * z;
        }
        lse = mx + (kt_acc)log((double)se);
        if (!grad) val = sl * lse - slz;
        else {
            kt_acc z = kt__read_row(cx, 0, at, at[cv]);
            kt_acc l = kt__read_row(cx, 1, at, at[cv]);
            kt_acc dy = kt__read_at(cx, 2, at);
            val = dy * ((kt_acc)exp((double)(z - lse)) * sl - l);
        }
        o = kt__out_at(cx, at);
        if (o) *o = (kt_real)val;
    } while (kt__odometer(at, cx->box, 0, op->out_rank));
}

/* ---------------------------------------------------------- GEMM kernel */

/* C += A * B.  The classic blocking of GotoBLAS/BLIS: B is packed a
   block of KT__KB rows by KT__NB columns at a time into panels of KT__NR
   columns, and a micro-kernel keeps a KT__MR x KT__NR block of C in
   registers while it runs down the shared dimension, so each element of
   A and B loaded serves KT__NR (resp. KT__MR) multiply-adds.  The
   micro-kernel is plain C with fixed trip counts, which compilers
   vectorise; on x86 with GCC or Clang a second copy is compiled for AVX2
   and chosen at run time when the CPU has it (KT_CPU_NO_SIMD: never). */
#ifndef KT_CPU_BLAS
#if defined(__GNUC__) && !defined(KT_CPU_NO_SIMD)
/* GCC and Clang vector extensions: 32-byte vectors (AVX2 registers; two
   SSE registers elsewhere), two per row of the register block. */
#define KT__VEC 1
typedef kt_acc kt__vec __attribute__((vector_size(32)));
#define KT__VL ((int64_t)(32 / sizeof(kt_acc)))
#define KT__NR (2 * KT__VL)
#else
#define KT__NR 8
#endif
#define KT__MR 4
#define KT__KB 256
#define KT__NB 512

#if defined(__GNUC__)
#define KT__INLINE static inline __attribute__((always_inline))
#else
#define KT__INLINE static inline
#endif

/* acc[MR][NR] = sum over k of a[r * lda + p] * bp[p * NR + j], added to
   the mr x nr corner of C. */
KT__INLINE void kt__micro(int64_t kb, const kt_acc *KT__RESTRICT a,
                          int64_t lda, const kt_acc *KT__RESTRICT bp,
                          kt_acc *KT__RESTRICT c, int64_t ldc, int64_t mr,
                          int64_t nr) {
    kt_acc acc[KT__MR][KT__NR];
    int64_t p, r, j;
#ifdef KT__VEC
    kt__vec zero, c00, c01, c10, c11, c20, c21, c30, c31;
    memset(&zero, 0, sizeof zero); /* no compound literal: C++ compiles it */
    c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = zero;
    for (p = 0; p < kb; p++) {
        kt__vec b0, b1, a0, a1, a2, a3;
        memcpy(&b0, bp + p * KT__NR, sizeof b0);
        memcpy(&b1, bp + p * KT__NR + KT__VL, sizeof b1);
        a0 = zero + a[p]; /* broadcast */
        a1 = zero + a[lda + p];
        a2 = zero + a[2 * lda + p];
        a3 = zero + a[3 * lda + p];
        c00 += a0 * b0;
        c01 += a0 * b1;
        c10 += a1 * b0;
        c11 += a1 * b1;
        c20 += a2 * b0;
        c21 += a2 * b1;
        c30 += a3 * b0;
        c31 += a3 * b1;
    }
    memcpy(&acc[0][0], &c00, sizeof c00);
    memcpy(&acc[0][KT__VL], &c01, sizeof c01);
    memcpy(&acc[1][0], &c10, sizeof c10);
    memcpy(&acc[1][KT__VL], &c11, sizeof c11);
    memcpy(&acc[2][0], &c20, sizeof c20);
    memcpy(&acc[2][KT__VL], &c21, sizeof c21);
    memcpy(&acc[3][0], &c30, sizeof c30);
    memcpy(&acc[3][KT__VL], &c31, sizeof c31);
#else
    for (r = 0; r < KT__MR; r++)
        for (j = 0; j < KT__NR; j++) acc[r][j] = 0;
    for (p = 0; p < kb; p++) {
        const kt_acc *b = bp + p * KT__NR;
        for (r = 0; r < KT__MR; r++) {
            kt_acc av = a[r * lda + p];
            for (j = 0; j < KT__NR; j++) acc[r][j] += av * b[j];
        }
    }
#endif
    for (r = 0; r < mr; r++)
        for (j = 0; j < nr; j++) c[r * ldc + j] += acc[r][j];
}

/* B[k0.., j0..] as panels of NR columns, zero beyond column n. */
KT__INLINE void kt__pack_b(const kt_acc *b, int64_t n, int64_t kb,
                           int64_t nb, kt_acc *out) {
    int64_t q, p, j;
    for (q = 0; q < nb; q += KT__NR)
        for (p = 0; p < kb; p++) {
            kt_acc *o = out + (q / KT__NR) * kb * KT__NR + p * KT__NR;
            for (j = 0; j < KT__NR; j++)
                o[j] = q + j < nb ? b[p * n + q + j] : 0;
        }
}

KT__INLINE void kt__gemm_core(int64_t m, int64_t n, int64_t k,
                              const kt_acc *a, const kt_acc *b, kt_acc *c,
                              kt_acc *bpack, kt_acc *apad) {
    int64_t j0, p0, i, q, r, p;
    for (j0 = 0; j0 < n; j0 += KT__NB) {
        int64_t nb = n - j0 < KT__NB ? n - j0 : KT__NB;
        for (p0 = 0; p0 < k; p0 += KT__KB) {
            int64_t kb = k - p0 < KT__KB ? k - p0 : KT__KB;
            kt__pack_b(b + p0 * n + j0, n, kb, nb, bpack);
            for (i = 0; i < m; i += KT__MR) {
                int64_t mr = m - i < KT__MR ? m - i : KT__MR;
                const kt_acc *ap = a + i * k + p0;
                int64_t lda = k;
                if (mr < KT__MR) { /* the last rows, zero-padded */
                    for (r = 0; r < KT__MR; r++)
                        for (p = 0; p < kb; p++)
                            apad[r * kb + p] = r < mr ? ap[r * k + p] : 0;
                    ap = apad;
                    lda = kb;
                }
                for (q = 0; q < nb; q += KT__NR)
                    kt__micro(kb, ap, lda, bpack + (q / KT__NR) * kb * KT__NR,
                              c + i * n + j0 + q, n, mr,
                              nb - q < KT__NR ? nb - q : KT__NR);
            }
        }
    }
}

static void kt__gemm_plain(int64_t m, int64_t n, int64_t k, const kt_acc *a,
                           const kt_acc *b, kt_acc *c, kt_acc *bp,
                           kt_acc *ap) {
    kt__gemm_core(m, n, k, a, b, c, bp, ap);
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && \
    !defined(KT_CPU_NO_SIMD)
#define KT__HAVE_AVX2_COPY 1
__attribute__((target("avx2,fma"))) static void
kt__gemm_avx2(int64_t m, int64_t n, int64_t k, const kt_acc *a,
              const kt_acc *b, kt_acc *c, kt_acc *bp, kt_acc *ap) {
    kt__gemm_core(m, n, k, a, b, c, bp, ap);
}
#endif

/* Returns 0 when the packing buffers cannot be allocated (C untouched). */
static int kt__gemm(int64_t m, int64_t n, int64_t k, const kt_acc *a,
                    const kt_acc *b, kt_acc *c) {
    kt_acc *bp, *ap;
    if (m <= 0 || n <= 0 || k <= 0) return 1;
    bp = (kt_acc *)KT_MALLOC(sizeof(kt_acc) * (size_t)(KT__KB * (KT__NB + KT__NR)));
    ap = (kt_acc *)KT_MALLOC(sizeof(kt_acc) * (size_t)(KT__KB * KT__MR));
    if (!bp || !ap) {
        KT_FREE(bp);
        KT_FREE(ap);
        return 0;
    }
#ifdef KT__HAVE_AVX2_COPY
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        kt__gemm_avx2(m, n, k, a, b, c, bp, ap);
    else
#endif
        kt__gemm_plain(m, n, k, a, b, c, bp, ap);
    KT_FREE(bp);
    KT_FREE(ap);
    return 1;
}

#endif /* !KT_CPU_BLAS */

void kt_cpu_gemm(int64_t m, int64_t n, int64_t k, const kt_acc *a,
                 const kt_acc *b, kt_acc *c) {
#ifdef KT_CPU_BLAS
    if (m <= 0 || n <= 0 || k <= 0) return;
    if (sizeof(kt_acc) == sizeof(double))
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n,
                    (int)k, 1.0, (const double *)(const void *)a, (int)k,
                    (const double *)(const void *)b, (int)n, 1.0,
                    (double *)(void *)c, (int)n);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n,
                    (int)k, 1.0f, (const float *)(const void *)a, (int)k,
                    (const float *)(const void *)b, (int)n, 1.0f,
                    (float *)(void *)c, (int)n);
#else
    /* without memory for the packing buffers: the plain triple loop */
    if (!kt__gemm(m, n, k, a, b, c)) {
        int64_t i, j, p;
        for (i = 0; i < m; i++)
            for (p = 0; p < k; p++)
                for (j = 0; j < n; j++) c[i * n + j] += a[i * k + p] * b[p * n + j];
    }
#endif
}

/* ------------------------------------------------------ the fast path */

/* A product-sum term: coef * access[a] * access[b]. */
typedef struct kt__term {
    double coef;
    int a, b;
} kt__term;

#define KT__MAX_TERMS 8

/* Multiplies the factors of a product into *coef and the access list. */
static int kt__factors(const kt_op *op, int node, double *coef, int *acc,
                       int *nacc) {
    const kt_expr *e = &op->expr[node];
    if (e->kind == KT_EXPR_CONST) {
        *coef *= e->value;
        return 1;
    }
    if (e->kind == KT_EXPR_ACCESS) {
        if (*nacc == 2) return 0;
        acc[(*nacc)++] = e->index;
        return 1;
    }
    if (e->kind == KT_EXPR_UNARY && e->fn == KT_FN_NEG) {
        *coef = -*coef;
        return kt__factors(op, e->a, coef, acc, nacc);
    }
    if (e->kind == KT_EXPR_BINARY && e->fn == '*')
        return kt__factors(op, e->a, coef, acc, nacc) &&
               kt__factors(op, e->b, coef, acc, nacc);
    return 0;
}

/* Splits the body into a sum of products of two reads each (x*W, or the
   LSTM's x*W + h*U); 0 when it is anything else. */
static int kt__terms(const kt_op *op, int node, double sign, kt__term *t,
                     int *n) {
    const kt_expr *e = &op->expr[node];
    double coef = sign;
    int acc[2], nacc = 0;
    if (e->kind == KT_EXPR_BINARY && (e->fn == '+' || e->fn == '-'))
        return kt__terms(op, e->a, sign, t, n) &&
               kt__terms(op, e->b, e->fn == '-' ? -sign : sign, t, n);
    if (!kt__factors(op, node, &coef, acc, &nacc) || nacc != 2 ||
        *n == KT__MAX_TERMS)
        return 0;
    t[*n].coef = coef;
    t[*n].a = acc[0];
    t[*n].b = acc[1];
    (*n)++;
    return 1;
}

/* The points of a group of variables (last fastest) and, for each, the
   part of an access's index every dimension gets from them:
   table[p * rank + d] = sum over the group of coef[d][v] * v. */
static int64_t *kt__group_table(const kt__acc *ac, const int *vars, int nv,
                                const kt_range *box, int64_t npts) {
    int64_t *t = (int64_t *)kt__calloc((size_t)(npts * (ac->rank ? ac->rank : 1)),
                                       sizeof(int64_t));
    int64_t at[KT_MAX_VARS], p;
    int i, d;
    if (!t) return NULL;
    for (i = 0; i < nv; i++) at[i] = box[vars[i]].lo;
    for (p = 0; p < npts; p++) {
        for (d = 0; d < ac->rank; d++) {
            int64_t s = 0;
            for (i = 0; i < nv; i++) s += ac->coef[d][vars[i]] * at[i];
            t[p * ac->rank + d] = s;
        }
        for (i = nv - 1; i >= 0; i--) {
            if (++at[i] < box[vars[i]].hi) break;
            at[i] = box[vars[i]].lo;
        }
    }
    return t;
}

/* Gathers a matrix of an access's values: row r, column q at the index
   base + rows[r] + cols[q] (im2col when the access is a convolution's
   input).  Zero outside a padded read; 0 returned when a read falls
   outside the view. */
/* Per point of a group table, the part of the view offset its index
   part contributes: sum_d part[d] * stride[d], plus the base's share
   sum_d (base[d] - lo[d]) * stride[d] when base is given.  A row's and a
   column's parts add up to the element's offset. */
static int64_t *kt__offsets(const kt__view *v, const int64_t *base,
                            const int64_t *part, int64_t n) {
    int64_t *o = (int64_t *)KT_MALLOC(sizeof(int64_t) * (size_t)(n + 1)), i;
    int d;
    if (!o) return NULL;
    for (i = 0; i < n; i++) {
        o[i] = 0;
        for (d = 0; d < v->rank; d++)
            o[i] += (part[i * v->rank + d] +
                     (base ? base[d] - v->box.r[d].lo : 0)) * v->stride[d];
    }
    return o;
}

static int kt__gather(const kt__acc *ac, const kt__view *v,
                      const int64_t *base, const int64_t *rows, int64_t nr,
                      const int64_t *cols, int64_t nc, double coef,
                      int inside, kt_acc *out) {
    int64_t r, q;
    int d, rank = ac->rank;
    if (inside) { /* every read inside the view: offsets are sums */
        int64_t *ro = kt__offsets(v, base, rows, nr);
        int64_t *co = kt__offsets(v, NULL, cols, nc);
        if (ro && co)
            for (r = 0; r < nr; r++) {
                const kt_real *src = v->data + ro[r];
                kt_acc *o = out + r * nc;
                for (q = 0; q < nc; q++) o[q] = (kt_acc)coef * (kt_acc)src[co[q]];
            }
        KT_FREE(ro);
        KT_FREE(co);
        if (ro && co) return 1;
    }
    for (r = 0; r < nr; r++)
        for (q = 0; q < nc; q++) {
            int64_t idx[KT_MAX_DIMS], off = 0;
            int zero = 0;
            /* a padded read outside the tensor in any dimension is 0 before
               the view is asked: a device may hold none of a tensor whose
               every read of its share is padding (an empty view) */
            for (d = 0; d < rank; d++) {
                int64_t x = base[d] + rows[r * rank + d] + cols[q * rank + d];
                if (ac->div[d] != 1) x = kt__floordiv(x, ac->div[d]);
                if (x < 0 || x >= ac->shape[d]) {
                    if (!ac->padded) return 0;
                    zero = 1;
                }
                idx[d] = x;
            }
            if (zero) {
                out[r * nc + q] = 0;
                continue;
            }
            for (d = 0; d < rank; d++) {
                if (idx[d] < v->box.r[d].lo || idx[d] >= v->box.r[d].hi)
                    return 0;
                off += (idx[d] - v->box.r[d].lo) * v->stride[d];
            }
            out[r * nc + q] = (kt_acc)coef * (kt_acc)v->data[off];
        }
    return 1;
}

typedef struct kt__gemm_plan {
    int bat[KT_MAX_VARS], mv[KT_MAX_VARS], nvv[KT_MAX_VARS], kv[KT_MAX_VARS];
    int nb, nm, nn, nk;
    int64_t npb, npm, npn, npk;
} kt__gemm_plan;

static int64_t kt__group_points(const int *vars, int nv, const kt_range *box) {
    int64_t n = 1;
    int i;
    for (i = 0; i < nv; i++) n *= box[vars[i]].hi - box[vars[i]].lo;
    return n;
}

/* Variables of a term as a matrix product (the einsum view): output
   variables both reads move with are batch, those only the first moves
   with (or neither) are rows, those only the second are columns; every
   reduction variable is the inner dimension. */
static void kt__gemm_classify(const kt_op *op, const kt__acc *A,
                              const kt__acc *B, const kt_range *box,
                              kt__gemm_plan *gp) {
    int v;
    memset(gp, 0, sizeof *gp);
    for (v = 0; v < op->nvars; v++) {
        if (v >= op->out_rank) gp->kv[gp->nk++] = v;
        else if (A->depends[v] && B->depends[v]) gp->bat[gp->nb++] = v;
        else if (B->depends[v]) gp->nvv[gp->nn++] = v;
        else gp->mv[gp->nm++] = v;
    }
    gp->npb = kt__group_points(gp->bat, gp->nb, box);
    gp->npm = kt__group_points(gp->mv, gp->nm, box);
    gp->npn = kt__group_points(gp->nvv, gp->nn, box);
    gp->npk = kt__group_points(gp->kv, gp->nk, box);
}

#define KT__GEMM_ROWS 64

/* Adds block c[nr x nc] to the output elements it belongs to. */
static int64_t *kt__offsets(const kt__view *v, const int64_t *base,
                            const int64_t *part, int64_t n);

static void kt__scatter_add(kt__opctx *cx, const kt__acc *O,
                            const int64_t *base, const int64_t *rows,
                            int64_t nr, const int64_t *cols, int64_t nc,
                            const kt_acc *c) {
    int64_t i, j;
    int d;
    if (cx->out_inside) { /* the box's outputs are all in the view */
        int64_t *ro = kt__offsets(cx->out, base, rows, nr);
        int64_t *co = kt__offsets(cx->out, NULL, cols, nc);
        if (ro && co)
            for (i = 0; i < nr; i++) {
                kt_real *dst = cx->out->data + ro[i];
                for (j = 0; j < nc; j++)
                    dst[co[j]] = (kt_real)((kt_acc)dst[co[j]] + c[i * nc + j]);
            }
        KT_FREE(ro);
        KT_FREE(co);
        if (ro && co) return;
    }
    for (i = 0; i < nr; i++)
        for (j = 0; j < nc; j++) {
            int64_t idx[KT_MAX_DIMS], off;
            for (d = 0; d < O->rank; d++)
                idx[d] = base[d] + rows[i * O->rank + d] + cols[j * O->rank + d];
            off = kt__view_offset(cx->out, idx);
            if (off < 0) {
                cx->outside = 1;
                return;
            }
            cx->out->data[off] = (kt_real)((kt_acc)cx->out->data[off] + c[i * nc + j]);
        }
}

/* One term over the box, added into the output: for every batch point,
   B packed as [inner x columns], A gathered KT__GEMM_ROWS rows at a time,
   multiplied, and the block added to the output elements. */
static kt_status kt__run_term(kt__opctx *cx, const kt__term *tm,
                              kt_error *err) {
    const kt_op *op = cx->op;
    const kt__acc *A = &cx->acc[tm->a], *B = &cx->acc[tm->b];
    const kt__view *va = &cx->in[A->input], *vb = &cx->in[B->input];
    kt__acc O;
    kt__gemm_plan gp;
    int64_t *ta[3] = {NULL, NULL, NULL}, *tb[3] = {NULL, NULL, NULL},
            *to[3] = {NULL, NULL, NULL};
    kt_acc *pa = NULL, *pb = NULL, *pc = NULL;
    int64_t bp, r0, c0, i, nbcols;
    kt_status s = KT_OK;
    int d, bad = 0;
    int ina = kt__read_inside(A, va, cx->box, op->nvars);
    int inb = kt__read_inside(B, vb, cx->box, op->nvars);
    kt__acc_output(cx->g, op, &O);
    kt__gemm_classify(op, A, B, cx->box, &gp);
    /* index tables: [0] batch, [1] rows or columns, [2] inner */
    ta[0] = kt__group_table(A, gp.bat, gp.nb, cx->box, gp.npb);
    ta[1] = kt__group_table(A, gp.mv, gp.nm, cx->box, gp.npm);
    ta[2] = kt__group_table(A, gp.kv, gp.nk, cx->box, gp.npk);
    tb[0] = kt__group_table(B, gp.bat, gp.nb, cx->box, gp.npb);
    tb[1] = kt__group_table(B, gp.nvv, gp.nn, cx->box, gp.npn);
    tb[2] = kt__group_table(B, gp.kv, gp.nk, cx->box, gp.npk);
    to[0] = kt__group_table(&O, gp.bat, gp.nb, cx->box, gp.npb);
    to[1] = kt__group_table(&O, gp.mv, gp.nm, cx->box, gp.npm);
    to[2] = kt__group_table(&O, gp.nvv, gp.nn, cx->box, gp.npn);
    /* B is packed a block of columns at a time: at most 2^21 values */
    nbcols = (int64_t)(1 << 21) / (gp.npk > 0 ? gp.npk : 1);
    if (nbcols < 1) nbcols = 1;
    if (nbcols > gp.npn) nbcols = gp.npn;
    pb = (kt_acc *)kt__calloc((size_t)(gp.npk * nbcols), sizeof(kt_acc));
    pa = (kt_acc *)kt__calloc((size_t)(KT__GEMM_ROWS * gp.npk), sizeof(kt_acc));
    pc = (kt_acc *)kt__calloc((size_t)(KT__GEMM_ROWS * nbcols), sizeof(kt_acc));
    for (i = 0; i < 3; i++)
        if (!ta[i] || !tb[i] || !to[i]) bad = 1;
    if (bad || !pa || !pb || !pc) {
        s = kt__fail(err, KT_ERR_NOMEM, op->line, "op %s: out of memory for "
                     "the matrix-product buffers", op->name);
        goto done;
    }
    for (bp = 0; bp < gp.npb && !cx->outside; bp++) {
        int64_t basea[KT_MAX_DIMS], baseb[KT_MAX_DIMS];
        for (d = 0; d < A->rank; d++) basea[d] = A->c[d] + ta[0][bp * A->rank + d];
        for (d = 0; d < B->rank; d++) baseb[d] = B->c[d] + tb[0][bp * B->rank + d];
        for (c0 = 0; c0 < gp.npn && !cx->outside; c0 += nbcols) {
            int64_t nc = gp.npn - c0 < nbcols ? gp.npn - c0 : nbcols;
            if (!kt__gather(B, vb, baseb, tb[2], gp.npk, tb[1] + c0 * B->rank,
                            nc, 1.0, inb, pb)) {
                cx->outside = 1;
                break;
            }
            for (r0 = 0; r0 < gp.npm; r0 += KT__GEMM_ROWS) {
                int64_t nr = gp.npm - r0 < KT__GEMM_ROWS ? gp.npm - r0
                                                         : KT__GEMM_ROWS;
                if (!kt__gather(A, va, basea, ta[1] + r0 * A->rank, nr, ta[2],
                                gp.npk, tm->coef, ina, pa)) {
                    cx->outside = 1;
                    break;
                }
                memset(pc, 0, (size_t)(nr * nc) * sizeof *pc);
                kt_cpu_gemm(nr, nc, gp.npk, pa, pb, pc);
                kt__scatter_add(cx, &O, to[0] + bp * O.rank,
                                to[1] + r0 * O.rank, nr,
                                to[2] + c0 * O.rank, nc, pc);
            }
        }
    }
done:
    for (i = 0; i < 3; i++) {
        KT_FREE(ta[i]);
        KT_FREE(tb[i]);
        KT_FREE(to[i]);
    }
    KT_FREE(pa);
    KT_FREE(pb);
    KT_FREE(pc);
    return s;
}

/* Zeroes the output elements of the box (the terms add into them). */
static void kt__zero_output(kt__opctx *cx) {
    int64_t at[KT_MAX_VARS];
    int v;
    for (v = 0; v < cx->op->out_rank; v++) at[v] = cx->box[v].lo;
    do {
        kt_real *o = kt__out_at(cx, at);
        if (o) *o = 0;
    } while (kt__odometer(at, cx->box, 0, cx->op->out_rank));
}

/* The fast path applies to a sum over reduction variables of products of
   two reads: matrix products, batched products (attention), convolutions
   and their gradients. */
static int kt__gemm_terms(const kt_op *op, kt__term *t, int *n) {
    *n = 0;
    if (op->opaque[0] || op->reducer != KT_REDUCE_SUM ||
        op->nvars == op->out_rank)
        return 0;
    return kt__terms(op, op->nexpr - 1, 1.0, t, n);
}

/* The gradient autodiff writes for a strided convolution's input reads
   the filter at -2h+p0: a sum over all of h where, for each output point,
   only one h reads inside the zero-padded filter.  When the body is one
   product and a padded factor's dimension moves with a single reduction
   variable, the reduction can skip the points where that factor is zero
   (0 * x taken as 0); cx->ntight lists those bounds.  Returns the fraction
   of the reduction space left (1: nothing to gain). */
static double kt__tighten(kt__opctx *cx) {
    const kt_op *op = cx->op;
    kt__term t[KT__MAX_TERMS];
    int nt = 0, f, d, v;
    double density = 1;
    cx->ntight = 0;
    if (op->opaque[0] || op->reducer != KT_REDUCE_SUM ||
        op->nvars == op->out_rank ||
        !kt__terms(op, op->nexpr - 1, 1.0, t, &nt) || nt != 1)
        return 1;
    for (f = 0; f < 2; f++) {
        int a = f ? t[0].b : t[0].a;
        const kt__acc *ac = &cx->acc[a];
        if (!ac->padded) continue;
        for (d = 0; d < ac->rank; d++) {
            int r = -1, n = 0;
            double reach;
            for (v = op->out_rank; v < op->nvars; v++)
                if (ac->coef[d][v]) {
                    r = v;
                    n++;
                }
            if (n != 1 || ac->div[d] != 1 || cx->ntight == KT_MAX_DIMS * 2)
                continue;
            cx->tight_acc[cx->ntight] = a;
            cx->tight_dim[cx->ntight] = d;
            cx->tight_var[cx->ntight++] = r;
            reach = (double)ac->shape[d] /
                    (double)(ac->coef[d][r] > 0 ? ac->coef[d][r]
                                                : -ac->coef[d][r]);
            if (reach < (double)op->var[r].extent)
                density *= reach / (double)op->var[r].extent;
        }
    }
    return density;
}

/* Runs cx->op over cx->box into cx->out. */
static kt_status kt__run_box(kt__opctx *cx, const kt_cpu_options *opt,
                             kt_error *err) {
    const kt_op *op = cx->op;
    kt__term terms[KT__MAX_TERMS];
    int nterms, a, i;
    kt_status s = KT_OK;
    cx->naccess = op->naccess;
    for (a = 0; a < op->naccess; a++) kt__acc_make(cx->g, op, a, &cx->acc[a]);
    cx->outside = 0;
    cx->ntight = 0;
    if (op->opaque[0]) kt__run_opaque(cx);
    else if ((!opt || !opt->reference_only) && kt__gemm_terms(op, terms, &nterms) &&
             !kt__box_empty(cx->box, op->nvars) && kt__tighten(cx) >= 0.25) {
        kt_box ob;
        cx->ntight = 0; /* dense: the matrix product does all of it */
        kt_op_output_box(op, cx->box, &ob);
        cx->out_inside = kt__box_inside(&ob, &cx->out->box, op->out_rank);
        kt__zero_output(cx);
        for (i = 0; i < nterms && s == KT_OK; i++) s = kt__run_term(cx, &terms[i], err);
    } else {
        int fast = !opt || !opt->reference_only;
        if (fast) kt__tighten(cx);
        kt__run_generic(cx, fast);
    }
    if (s == KT_OK && cx->outside)
        s = kt__fail(err, KT_ERR_INTERNAL, op->line, "op %s: a read or write "
                     "fell outside the region its device holds", op->name);
    return s;
}

/* ------------------------------------------------------------ serial */

/* One op of kt_cpu_check_graph: kt_cpu_run_op checks its own op (a whole
   graph's check per op would make a serial run quadratic). */
static kt_status kt__check_op(const kt_graph *g, const kt_op *op,
                              kt_error *err) {
    kt_range box[KT_MAX_VARS];
    double points = 1;
    int v;
    if (op->naccess > KT_CPU_MAX_READS) {
        /* an op autodiff wrote has no line: name its forward op's */
        const kt_op *fwd = op->line == 0 ? kt_graph_op(g, op->group) : NULL;
        char from[48] = "";
        if (fwd && fwd->line > 0)
            snprintf(from, sizeof from, " (autodiff's, for line %d)",
                     fwd->line);
        return kt__fail(err, KT_ERR_LIMIT, op->line, "op %s%s: %d tensor "
                        "reads, more than the CPU backend takes "
                        "(KT_CPU_MAX_READS, %d)", op->name, from,
                        op->naccess, KT_CPU_MAX_READS);
    }
    kt_op_var_box(op, box);
    for (v = 0; v < op->nvars; v++) points *= (double)(box[v].hi - box[v].lo);
    if (points > KT_CPU_MAX_OP_POINTS)
        return kt__fail(err, KT_ERR_LIMIT, op->line, "op %s: %.3g index "
                        "points, more than the CPU backend evaluates "
                        "(KT_CPU_MAX_OP_POINTS, %.3g)", op->name, points,
                        (double)KT_CPU_MAX_OP_POINTS);
    if (op->opaque[0]) return kt__check_opaque(g, op, err);
    return KT_OK;
}

kt_status kt_cpu_check_graph(const kt_graph *g, kt_error *err) {
    int o;
    kt_status s;
    if ((s = kt__graph_check_final(g, err)) != KT_OK) return s;
    for (o = 0; o < kt_graph_op_count(g); o++)
        if ((s = kt__check_op(g, kt_graph_op(g, o), err)) != KT_OK) return s;
    kt__ok(err);
    return KT_OK;
}

/* Op o of g exists and st holds the tensors it reads and writes (only
   those: kt_cpu_run_serial checks the whole state once, and this stays
   linear in the op). */
static kt_status kt__run_op_check(const kt_graph *g, int o,
                                  const kt_cpu_state *st, kt_error *err) {
    const kt_op *op = kt_graph_op(g, o);
    char what[KT_NAME_MAX + 16];
    int j;
    kt_status s;
    if ((s = kt__graph_check_final(g, err)) != KT_OK) return s;
    if (!op)
        return kt__fail(err, KT_ERR_INVALID, 0, "op %d: the graph has ops 0 "
                        "to %d", o, kt_graph_op_count(g) - 1);
    if ((s = kt__check_op(g, op, err)) != KT_OK) return s;
    snprintf(what, sizeof what, "op %s", op->name);
    if (!st || !st->val || !st->numel ||
        st->ntensors != kt_graph_tensor_count(g))
        return kt__state_check(g, st, 0, what, err);
    for (j = 0; j < op->ninputs; j++)
        if ((s = kt__state_tensor(g, st, op->input[j], what, err)) != KT_OK)
            return s;
    return kt__state_tensor(g, st, op->output, what, err);
}

kt_status kt_cpu_run_op(const kt_graph *g, int o, kt_cpu_state *st,
                        const kt_cpu_options *opt, kt_error *err) {
    const kt_op *op;
    const kt_tensor *y;
    kt__view in[KT_MAX_VARS], out;
    kt__opctx *cx;
    kt_real *tmp = NULL;
    kt_box b;
    int j, reads_output = 0;
    kt_status s;
    if ((s = kt__run_op_check(g, o, st, err)) != KT_OK) return s;
    op = kt_graph_op(g, o);
    y = kt_graph_tensor(g, op->output);
    for (j = 0; j < op->ninputs; j++) {
        const kt_tensor *x = kt_graph_tensor(g, op->input[j]);
        kt__full_box(x->rank, x->shape, &b);
        kt__view_set(&in[j], st->val[op->input[j]], x->rank, &b);
        if (op->input[j] == op->output) reads_output = 1;
    }
    /* An in-place update reads what it writes: compute aside, then copy. */
    if (reads_output) {
        tmp = (kt_real *)kt__calloc((size_t)st->numel[op->output] + 1,
                                    sizeof(kt_real));
        if (!tmp)
            return kt__fail(err, KT_ERR_NOMEM, op->line, "op %s: out of "
                            "memory", op->name);
    }
    kt__full_box(y->rank, y->shape, &b);
    kt__view_set(&out, tmp ? tmp : st->val[op->output], y->rank, &b);
    cx = (kt__opctx *)kt__calloc(1, sizeof *cx);
    if (!cx) {
        KT_FREE(tmp);
        return kt__fail(err, KT_ERR_NOMEM, op->line, "out of memory");
    }
    cx->g = g;
    cx->op = op;
    cx->in = in;
    cx->out = &out;
    kt_op_var_box(op, cx->box);
    s = kt__run_box(cx, opt, err);
    if (s == KT_OK && tmp)
        memcpy(st->val[op->output], tmp,
               (size_t)st->numel[op->output] * sizeof(kt_real));
    KT_FREE(cx);
    KT_FREE(tmp);
    if (s == KT_OK) kt__ok(err);
    return s;
}

kt_status kt_cpu_run_serial(const kt_graph *g, kt_cpu_state *s,
                            const kt_cpu_options *opt, kt_error *err) {
    int o;
    kt_status st;
    if ((st = kt_cpu_check_graph(g, err)) != KT_OK ||
        (st = kt__state_check(g, s, 0, "state", err)) != KT_OK)
        return st;
    for (o = 0; o < kt_graph_op_count(g); o++)
        if ((st = kt_cpu_run_op(g, o, s, opt, err)) != KT_OK) return st;
    return KT_OK;
}

/* ------------------------------------------------------- partitioned */

/* A reusable barrier (mutex + condition: pthread_barrier_t is optional in
   POSIX).  It also carries a failure flag, snapshot when the last worker
   arrives, so every worker sees the same value and they all stop at the
   same phase instead of some waiting forever. */
typedef struct kt__barrier {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t count, waiting, generation;
    int failed, failed_at_release;
} kt__barrier;

/* Returns the failure flag as it was when the phase ended. */
static int kt__barrier_wait(kt__barrier *b) {
    int64_t gen;
    int f;
    pthread_mutex_lock(&b->mu);
    gen = b->generation;
    if (++b->waiting == b->count) {
        b->waiting = 0;
        b->generation++;
        b->failed_at_release = b->failed;
        pthread_cond_broadcast(&b->cv);
    } else
        while (gen == b->generation) pthread_cond_wait(&b->cv, &b->mu);
    f = b->failed_at_release;
    pthread_mutex_unlock(&b->mu);
    return f;
}

/* What every worker shares (read-only while the workers run, except the
   per-device slots each worker alone writes and the barrier). */
typedef struct kt__run {
    const kt_graph *g;
    const kt_plan *p;
    const kt_program *prog;
    const kt_cpu_options *opt;
    int64_t ndev;
    int ntensors;
    kt__view *home;       /* ndev * ntensors: tiles in their tilings      */
    kt__view *outbuf;     /* ndev: the current op's result on each device */
    int *inbox;           /* the program's transfers grouped by (op,
                             receiver), within a group by part and stage
                             (kt__pull_key), program order among equals   */
    int *inbox_first;     /* ntask + 1: what device d receives for op o is
                             inbox[inbox_first[o * ndev + d] .. next)      */
    int64_t *xfer_bytes;  /* nxfer: bytes each transfer moved, written by
                             its receiver's worker alone                  */
    uint64_t *stages;     /* nops * KT__NPARTS: the stages each part of an
                             op's transfers uses over all devices (bit s:
                             stage s), so every worker waits as often     */
    kt__view *inview;     /* ndev * nin: each device's input views of the
                             current op, which relays read; set before an
                             op's first input stage, cleared after its
                             compute                                      */
    int nin;              /* the most inputs of any op (at least 1): 200
                             bytes a view, so a million devices take 0.6
                             GB for 3 inputs, not 3.3 for KT_MAX_VARS     */
    kt__barrier bar;
    int64_t nworkers;     /* worker threads; worker w runs the devices w,
                             w + nworkers, w + 2 * nworkers, ...         */
    kt_real **inmem;      /* ndev * KT_MAX_VARS: each device's input
                             buffers of the current op (kt__phase_inputs) */
    kt_real **outmem;     /* ndev: its result buffer (kt__phase_compute)  */
    kt_error *errs;       /* ndev: a failing device's message              */
    kt_status *status;    /* ndev: written by the device's worker alone;
                             once a device fails its worker skips its
                             work up to the barrier that stops them all  */
} kt__run;

typedef struct kt__worker {
    kt__run *run;         /* (for the swap executor, the kt__srun whose
                             first member it is)                         */
    int64_t first;        /* its first device                             */
} kt__worker;

/* Every device worker w runs, in ascending order. */
#define KT__EACH_DEVICE(r, w, dev) \
    for ((dev) = (w)->first; (dev) < (r)->ndev; (dev) += (r)->nworkers)

/* How many worker threads a run of ndev devices gets: opt->threads, or
   by default one per online processor, never more than the devices (a
   worker without one would only meet the barriers). */
static kt_status kt__worker_count(const kt_cpu_options *opt, int64_t ndev,
                                  int64_t *n, kt_error *err) {
    int64_t want = opt ? opt->threads : 0;
    if (want < 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "%lld worker threads: give "
                        "1 or more, or 0 for one per processor",
                        (long long)want);
    if (want > KT_CPU_MAX_THREADS)
        return kt__fail(err, KT_ERR_LIMIT, 0, "%lld worker threads: at most "
                        "%d (KT_CPU_MAX_THREADS)", (long long)want,
                        KT_CPU_MAX_THREADS);
    if (want == 0) {
#ifdef _SC_NPROCESSORS_ONLN
        want = (int64_t)sysconf(_SC_NPROCESSORS_ONLN);
#endif
        if (want < 1) want = 1;
        if (want > KT_CPU_MAX_THREADS) want = KT_CPU_MAX_THREADS;
    }
    *n = want < ndev ? want : ndev;
    if (*n < 1) *n = 1;
    return KT_OK;
}

/* Runs worker_main on r->nworkers threads and waits for them; then the
   first failing device's status and message.  A thread that cannot be
   started leaves the barrier short, so the started ones would wait for
   ever: it is counted as failed and the rest drain at their next
   barrier. */
static kt_status kt__run_workers(kt__run *r, void *(*worker_main)(void *),
                                 kt_error *err) {
    int64_t i, d, started, n = r->nworkers;
    kt__worker *w = (kt__worker *)kt__calloc((size_t)n, sizeof *w);
    pthread_t *th = (pthread_t *)kt__calloc((size_t)n, sizeof *th);
    kt_status s = KT_OK;
    if (!w || !th) {
        KT_FREE(w);
        KT_FREE(th);
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory for %lld worker "
                        "threads", (long long)n);
    }
    pthread_mutex_init(&r->bar.mu, NULL);
    pthread_cond_init(&r->bar.cv, NULL);
    r->bar.count = n;
    for (i = 0; i < n; i++) {
        w[i].run = r;
        w[i].first = i;
    }
    for (started = 0; started < n; started++)
        if (KT_CPU_THREAD_CREATE(&th[started], worker_main, &w[started]))
            break;
    if (started < n) {
        pthread_mutex_lock(&r->bar.mu);
        r->bar.failed = 1;
        r->bar.count = started; /* the started ones still meet */
        if (started > 0 && r->bar.waiting >= started) { /* all already wait */
            r->bar.waiting = 0;
            r->bar.generation++;
            r->bar.failed_at_release = 1;
            pthread_cond_broadcast(&r->bar.cv);
        }
        pthread_mutex_unlock(&r->bar.mu);
    }
    for (i = 0; i < started; i++) pthread_join(th[i], NULL);
    pthread_cond_destroy(&r->bar.cv);
    pthread_mutex_destroy(&r->bar.mu);
    if (started < n)
        s = kt__fail(err, KT_ERR_NOMEM, 0, "could not start worker thread "
                     "%lld of %lld", (long long)started + 1, (long long)n);
    for (d = 0; d < r->ndev && s == KT_OK; d++)
        if (r->status[d] != KT_OK) {
            if (err) *err = r->errs[d];
            s = r->status[d];
        }
    KT_FREE(w);
    KT_FREE(th);
    return s;
}

static void kt__worker_fail(kt__run *r, int64_t dev, kt_status s) {
    r->status[dev] = s;
    pthread_mutex_lock(&r->bar.mu);
    r->bar.failed = 1;
    pthread_mutex_unlock(&r->bar.mu);
}

static int kt__xfer_is_output(const kt_graph *g, const kt_transfer *t) {
    return t->role >= kt_graph_op(g, t->op)->ninputs;
}

/* The part of an op's run a transfer belongs to: the copies of its
   inputs (before it computes), the reductions of its result, then the
   copies of its result -- each part run stage by stage. */
typedef enum kt__part { KT__INPUTS = 0, KT__REDUCES, KT__OUTPUTS } kt__part;
#define KT__NPARTS 3

static kt__part kt__xfer_part(const kt_graph *g, const kt_transfer *t) {
    if (!kt__xfer_is_output(g, t)) return KT__INPUTS;
    return t->kind == KT_XFER_REDUCE ? KT__REDUCES : KT__OUTPUTS;
}

/* The stages each part of op o uses over every device's transfers:
   sets[part] has bit s for stage s (stages checked to be in range). */
static void kt__op_stages(const kt_graph *g, const kt_program *prog, int o,
                          uint64_t *sets) {
    int x;
    sets[KT__INPUTS] = sets[KT__REDUCES] = sets[KT__OUTPUTS] = 0;
    for (x = prog->xfer_first[o]; x < prog->xfer_first[o + 1]; x++)
        sets[kt__xfer_part(g, &prog->xfer[x])] |= (uint64_t)1
                                                  << prog->xfer[x].stage;
}

static kt__combine kt__reduce_combine(const kt_op *op) {
    switch (op->reducer) {
    case KT_REDUCE_MAX: return KT__MAX;
    case KT_REDUCE_MIN: return KT__MIN;
    case KT_REDUCE_PROD: return KT__MUL;
    default: return KT__ADD;
    }
}

/* The receive group of transfer x: its op and receiver, numbered as the
   program's tasks are (op * ndev + device). */
static int64_t kt__inbox_group(const kt__run *r, int x) {
    return (int64_t)r->prog->xfer[x].op * r->ndev + r->prog->xfer[x].dst;
}

/* Where a receiver runs the transfers of part `part`, stage `stage` of an
   op among the rest (kt__pull_stages): the parts in turn, each stage by
   stage -- the key a receive group is ordered by. */
static int64_t kt__pull_key(kt__part part, int stage) {
    return (int64_t)part * KT_XFER_STAGES + stage;
}
#define KT__PULL_KEYS (KT__NPARTS * KT_XFER_STAGES)
static int64_t kt__inbox_key(const kt__run *r, int x) {
    const kt_transfer *t = &r->prog->xfer[x];
    return kt__pull_key(kt__xfer_part(r->g, t), t->stage);
}

/* Stable counting sort of from[0..n) by key(r, x) in [0, nkeys) into to
   (not overlapping from); count: nkeys + 1 zeroed ints, left as where
   each key's run starts (count[nkeys] = n). */
static void kt__inbox_sort(const kt__run *r, const int *from, int *to, int n,
                           int64_t (*key)(const kt__run *, int),
                           int *count, int64_t nkeys) {
    int64_t k;
    int i;
    for (i = 0; i < n; i++) count[key(r, from[i]) + 1]++;
    for (k = 0; k < nkeys; k++) count[k + 1] += count[k];
    for (i = 0; i < n; i++) to[count[key(r, from[i])]++] = from[i];
    /* each key's counter now holds where the next key starts: shift back */
    for (k = nkeys; k > 0; k--) count[k] = count[k - 1];
    count[0] = 0;
}

/* The program's transfers grouped by (op, receiver) and within a group
   ordered by part and stage (kt__pull_key), program order among equals,
   into r->inbox and r->inbox_first; also a zeroed count per transfer,
   the stages of every op's parts and the input views.  Two stable
   counting sorts, as a radix sort does it: by (part, stage) first, then
   by group, which keeps the first order within each group.  So a
   device's transfers of one part and stage are adjacent and in program
   order (the order partial results are combined in, sums or maxima,
   which fixes the floats bit for bit): a stage costs a binary search and
   its own transfers, not a scan of the receiver's whole group once per
   stage.  Without the grouping every worker scanned every transfer of
   every op for its own: ndev workers times all transfers, which took
   119 s (now ~2.4 s) to verify a two-layer MLP on 4096 devices.  The
   program is checked first (kt__check_program): ops, devices, stages
   and ntask = nops * ndev. */
static kt_status kt__inbox_build(kt__run *r, kt_error *err) {
    const kt_program *prog = r->prog;
    int x, k, *by_key, *count;
    int64_t ncount = prog->ntask > KT__PULL_KEYS ? prog->ntask
                                                 : KT__PULL_KEYS;
    r->inbox = (int *)kt__calloc((size_t)prog->nxfer + 1, sizeof(int));
    r->inbox_first = (int *)kt__calloc((size_t)prog->ntask + 2, sizeof(int));
    r->xfer_bytes =
        (int64_t *)kt__calloc((size_t)prog->nxfer + 1, sizeof(int64_t));
    r->stages = (uint64_t *)kt__calloc((size_t)prog->nops * KT__NPARTS + 1,
                                       sizeof(uint64_t));
    if (!r->inbox || !r->inbox_first || !r->xfer_bytes || !r->stages)
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory for the "
                        "transfer index of %d transfers", prog->nxfer);
    for (r->nin = 1, k = 0; k < prog->nops; k++)
        if (kt_graph_op(r->g, k)->ninputs > r->nin)
            r->nin = kt_graph_op(r->g, k)->ninputs;
    r->inview = (kt__view *)kt__calloc((size_t)r->ndev * (size_t)r->nin,
                                       sizeof(kt__view));
    if (!r->inview)
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory for the input "
                        "views of %lld devices", (long long)r->ndev);
    for (k = 0; k < prog->nops; k++)
        kt__op_stages(r->g, prog, k, &r->stages[(int64_t)k * KT__NPARTS]);
    by_key = (int *)kt__calloc((size_t)prog->nxfer + 1, sizeof(int));
    count = (int *)kt__calloc((size_t)ncount + 1, sizeof(int));
    if (!by_key || !count) {
        KT_FREE(by_key);
        KT_FREE(count);
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory for the "
                        "transfer index of %d transfers", prog->nxfer);
    }
    for (x = 0; x < prog->nxfer; x++) r->inbox[x] = x; /* program order */
    kt__inbox_sort(r, r->inbox, by_key, prog->nxfer, kt__inbox_key, count,
                   KT__PULL_KEYS);
    memset(count, 0, sizeof(int) * ((size_t)ncount + 1));
    kt__inbox_sort(r, by_key, r->inbox, prog->nxfer, kt__inbox_group, count,
                   prog->ntask);
    memcpy(r->inbox_first, count, sizeof(int) * ((size_t)prog->ntask + 1));
    KT_FREE(by_key);
    KT_FREE(count);
    return KT_OK;
}

/* What device dev receives for op o: r->inbox[lo .. hi). */
static int kt__inbox_lo(const kt__run *r, int o, int64_t dev) {
    return r->inbox_first[(int64_t)o * r->ndev + dev];
}
static int kt__inbox_hi(const kt__run *r, int o, int64_t dev) {
    return r->inbox_first[(int64_t)o * r->ndev + dev + 1];
}

/* The first place in inbox[lo .. hi) (one receive group, ordered by
   kt__inbox_key) whose key is at least `key`, hi when none: a binary
   search. */
static int kt__inbox_seek(const kt__run *r, int lo, int hi, int64_t key) {
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (kt__inbox_key(r, r->inbox[mid]) < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Transfer x was executed by its receiver: its bytes as the region it
   copied, counted where the receiver alone writes. */
static void kt__count_received(kt__run *r, int x) {
    const kt_transfer *t = &r->prog->xfer[x];
    const kt_tensor *tt = kt_graph_tensor(r->g, t->tensor);
    r->xfer_bytes[x] += kt__box_numel(&t->region, tt->rank) * tt->elem_bytes;
}

/* After the workers: the bytes moved and their pairs, from what each
   transfer's receiver counted. */
static kt_status kt__tally_received(const kt__run *r, kt_cpu_devices *out,
                                    kt_error *err) {
    int x;
    out->bytes_moved = 0;
    for (x = 0; x < r->prog->nxfer; x++) out->bytes_moved += r->xfer_bytes[x];
    return kt__count_pairs(r->prog->xfer, r->prog->nxfer, r->xfer_bytes,
                           r->ndev, &out->pairs, &out->npairs, err);
}

static void kt__inbox_free(kt__run *r) {
    KT_FREE(r->inbox);
    KT_FREE(r->inbox_first);
    KT_FREE(r->xfer_bytes);
    KT_FREE(r->stages);
    KT_FREE(r->inview);
}

/* Transfer x, pulled by its receiver dev: an input region from the
   sender's tile, a partial result combined (the op's reducer: sums for
   sum(...), maxima for max(...)) or a result copied from its result
   buffer -- and for a relay, what an earlier stage delivered to the
   sender: its input buffer, or the sum it stored in its tile. */
static void kt__pull(kt__run *r, int64_t dev, int x) {
    const kt_transfer *t = &r->prog->xfer[x];
    const kt__view *home = &r->home[t->src * r->ntensors + t->tensor];
    KT__PULLED(dev, x);
    switch (kt__xfer_part(r->g, t)) {
    case KT__INPUTS:
        kt__copy_region(t->relay ? &r->inview[t->src * r->nin + t->role]
                                 : home,
                        &r->inview[dev * r->nin + t->role], &t->region,
                        KT__SET);
        break;
    case KT__REDUCES:
        kt__copy_region(&r->outbuf[t->src], &r->outbuf[dev], &t->region,
                        kt__reduce_combine(kt_graph_op(r->g, t->op)));
        break;
    case KT__OUTPUTS:
        kt__copy_region(t->relay ? home : &r->outbuf[t->src],
                        &r->home[dev * r->ntensors + t->tensor], &t->region,
                        KT__SET);
        break;
    }
    kt__count_received(r, x);
}

/* One part of op o on worker w's devices: the transfers into each, stage
   by stage in ascending order, with a barrier between consecutive stages
   of the part (its stages over all devices, so every worker waits as
   often; a part at one stage waits for none).  The barrier is what a
   relay needs: what it forwards arrived, and its sender's buffers were
   set up, before it.  Within a stage the devices go one after the other,
   which is one of the orders threads of their own could take: no
   transfer reads what another of its stage writes (checked before the
   run, kt__check_stage_hazards).  A device that failed, or every device
   with skip, only keeps the barriers.  1: a barrier reported a failure
   (every worker stops there). */
static int kt__pull_stages(kt__run *r, const kt__worker *w, int o,
                           kt__part part, int skip) {
    uint64_t set = r->stages[(int64_t)o * KT__NPARTS + part];
    int64_t dev;
    int st, i, hi, first = 1;
    for (st = 0; st < KT_XFER_STAGES; st++) {
        int64_t key = kt__pull_key(part, st);
        if (!(set >> st & 1)) continue;
        if (!first && kt__barrier_wait(&r->bar)) return 1;
        first = 0;
        if (skip) continue;
        KT__EACH_DEVICE(r, w, dev) {
            if (r->status[dev] != KT_OK) continue;
            hi = kt__inbox_hi(r, o, dev);
            for (i = kt__inbox_seek(r, kt__inbox_lo(r, o, dev), hi, key);
                 i < hi && kt__inbox_key(r, r->inbox[i]) == key; i++)
                kt__pull(r, dev, r->inbox[i]);
        }
    }
    return 0;
}

/* Device dev's input views (r->inview), dropped after its compute: no
   relay of a later op reads a buffer freed or reused since. */
static void kt__inviews_drop(kt__run *r, int64_t dev) {
    memset(&r->inview[dev * r->nin], 0, (size_t)r->nin * sizeof(kt__view));
}

/* Phase 1 of an op on one device, before its transfers: a buffer (in[j],
   the device's slots of r->inview) for every input region its
   sub-operator reads, and what its own tiles hold of it by a local copy;
   the rest comes by the program's transfers (kt__pull_stages). */
static kt_status kt__phase_inputs(kt__run *r, int64_t dev, int o,
                                  const kt_task *task, kt__view *in,
                                  kt_real **inmem, kt_error *err) {
    const kt_op *op = kt_graph_op(r->g, o);
    int j;
    for (j = 0; j < op->ninputs; j++) {
        const kt_tensor *t = kt_graph_tensor(r->g, op->input[j]);
        kt_box need, local;
        int empty = 0;
        int64_t n;
        kt_op_input_box(r->g, op, j, task->box, &need, &empty);
        if (empty) memset(&need, 0, sizeof need);
        n = kt__box_numel(&need, t->rank);
        inmem[j] = (kt_real *)kt__calloc((size_t)n + 1, sizeof(kt_real));
        if (!inmem[j])
            return kt__fail(err, KT_ERR_NOMEM, op->line, "op %s, device %lld: "
                            "out of memory for input %s", op->name,
                            (long long)dev, t->name);
        kt__fill_nan(inmem[j], n);
        kt__view_set(&in[j], inmem[j], t->rank, &need);
        kt__box_intersect(&need, &r->home[dev * r->ntensors + op->input[j]].box,
                          t->rank, &local);
        kt__copy_region(&r->home[dev * r->ntensors + op->input[j]], &in[j],
                        &local, KT__SET);
    }
    return KT_OK;
}

/* Phase 2: the device's sub-operator over its box of the index space. */
static kt_status kt__phase_compute(kt__run *r, int64_t dev, int o,
                                   const kt_task *task, const kt__view *in,
                                   kt_real **outmem, kt_error *err) {
    const kt_op *op = kt_graph_op(r->g, o);
    const kt_tensor *y = kt_graph_tensor(r->g, op->output);
    kt__opctx *cx;
    kt_box ob;
    int64_t n;
    kt_status s;
    kt_op_output_box(op, task->box, &ob);
    n = kt__box_numel(&ob, y->rank);
    if (n == 0) memset(&ob, 0, sizeof ob);
    *outmem = (kt_real *)kt__calloc((size_t)n + 1, sizeof(kt_real));
    cx = (kt__opctx *)kt__calloc(1, sizeof *cx);
    if (!*outmem || !cx) {
        KT_FREE(cx);
        return kt__fail(err, KT_ERR_NOMEM, op->line, "op %s, device %lld: out "
                        "of memory", op->name, (long long)dev);
    }
    kt__fill_nan(*outmem, n);
    kt__view_set(&r->outbuf[dev], *outmem, y->rank, &ob);
    cx->g = r->g;
    cx->op = op;
    cx->in = in;
    cx->out = &r->outbuf[dev];
    memcpy(cx->box, task->box, sizeof cx->box);
    s = n ? kt__run_box(cx, r->opt, err) : KT_OK;
    KT_FREE(cx);
    return s;
}

/* Phase 4: the result lands in the output tensor's tiles -- each of
   worker w's devices' own part by a local copy, then the program's copies
   stage by stage (which overwrite a local partial sum with the reduced
   value where the device is not the root of an element).  skip: keep the
   barriers only.  1: stop (kt__pull_stages). */
static int kt__phase_store(kt__run *r, const kt__worker *w, int o, int skip) {
    const kt_op *op = kt_graph_op(r->g, o);
    const kt_tensor *y = kt_graph_tensor(r->g, op->output);
    int64_t dev;
    if (!skip)
        KT__EACH_DEVICE(r, w, dev) {
            kt__view *home = &r->home[dev * r->ntensors + op->output];
            kt_box local;
            kt__box_intersect(&r->outbuf[dev].box, &home->box, y->rank, &local);
            kt__copy_region(&r->outbuf[dev], home, &local, KT__SET);
        }
    return kt__pull_stages(r, w, o, KT__OUTPUTS, skip);
}

/* Phases 1 and 2 of op o on device dev, each when the device has not
   failed: its input buffers, then (once the barrier after the input
   transfers has passed: compute) its sub-operator. */
static void kt__device_inputs(kt__run *r, int64_t dev, int o) {
    const kt_task *task = &r->prog->task[(int64_t)o * r->ndev + dev];
    kt_status s;
    if (r->status[dev] != KT_OK) return;
    s = kt__phase_inputs(r, dev, o, task, &r->inview[dev * r->nin],
                         &r->inmem[dev * KT_MAX_VARS], &r->errs[dev]);
    if (s != KT_OK) kt__worker_fail(r, dev, s);
}
static void kt__device_compute(kt__run *r, int64_t dev, int o) {
    const kt_task *task = &r->prog->task[(int64_t)o * r->ndev + dev];
    kt_status s;
    if (r->status[dev] != KT_OK) return;
    s = kt__phase_compute(r, dev, o, task, &r->inview[dev * r->nin],
                          &r->outmem[dev], &r->errs[dev]);
    if (s != KT_OK) kt__worker_fail(r, dev, s);
}

/* What device dev held for op o, dropped: its input views (no relay of a
   later op reads a buffer freed or reused since) and buffers after the
   compute, its result buffer once every worker has read it. */
static void kt__device_drop_inputs(kt__run *r, int64_t dev) {
    int j;
    kt__inviews_drop(r, dev);
    for (j = 0; j < KT_MAX_VARS; j++) {
        KT_FREE(r->inmem[dev * KT_MAX_VARS + j]);
        r->inmem[dev * KT_MAX_VARS + j] = NULL;
    }
}
static void kt__device_drop_result(kt__run *r, int64_t dev) {
    memset(&r->outbuf[dev], 0, sizeof r->outbuf[dev]);
    KT_FREE(r->outmem[dev]);
    r->outmem[dev] = NULL;
}

/* One worker: every op in program order, four phases each over its
   devices, separated by barriers so that no buffer is read while it is
   written (inputs are read from tiles nobody writes in phase 1; results
   from result buffers nobody writes in phase 4; in phase 3 every element
   has one root), and each phase's stages by more barriers
   (kt__pull_stages): what a relay or a reduction tree's inner device
   sends on, it received at an earlier stage.  A failure reported by a
   barrier stops every worker there. */
static void *kt__worker_main(void *arg) {
    const kt__worker *w = (const kt__worker *)arg;
    kt__run *r = w->run;
    int64_t dev;
    int o, stop = 0;
    for (o = 0; o < kt_graph_op_count(r->g) && !stop; o++) {
        KT__EACH_DEVICE(r, w, dev) kt__device_inputs(r, dev, o);
        stop = kt__pull_stages(r, w, o, KT__INPUTS, 0) ||
               kt__barrier_wait(&r->bar);
        if (!stop) KT__EACH_DEVICE(r, w, dev) kt__device_compute(r, dev, o);
        KT__EACH_DEVICE(r, w, dev) kt__device_drop_inputs(r, dev);
        if (!stop && kt__barrier_wait(&r->bar)) stop = 1;
        /* phase 3: the reductions */
        if (!stop && kt__pull_stages(r, w, o, KT__REDUCES, 0)) stop = 1;
        if (!stop && kt__barrier_wait(&r->bar)) stop = 1;
        if (!stop && kt__phase_store(r, w, o, 0)) stop = 1;
        if (!stop && kt__barrier_wait(&r->bar)) stop = 1;
        KT__EACH_DEVICE(r, w, dev) kt__device_drop_result(r, dev);
    }
    return NULL;
}

/* Transfer x moves a region its sender holds into a buffer its receiver
   has, and a relay comes after an earlier stage of its part of the op
   (sets: kt__op_stages), whose barrier is what makes its sender's buffer
   ready.  The sender's buffer: its tile, or its result buffer for a
   result; a relay's is its input buffer for an input, its tile for a
   result. */
static kt_status kt__check_xfer(const kt_graph *g, const kt_program *prog,
                                const kt_box *home, const uint64_t *sets,
                                int x, kt_error *err) {
    int64_t ndev = prog->ndev;
    int nt = kt_graph_tensor_count(g);
    const kt_transfer *t = &prog->xfer[x];
    const kt_op *op = kt_graph_op(g, t->op);
    const kt_tensor *tt = kt_graph_tensor(g, t->tensor);
    const kt_task *ts = &prog->task[(int64_t)t->op * ndev + t->src];
    const kt_task *td = &prog->task[(int64_t)t->op * ndev + t->dst];
    kt_box sb, db;
    int empty = 0, held, wanted;
    if (t->role < op->ninputs) {
        if (t->kind != KT_XFER_COPY)
            return kt__fail(err, KT_ERR_INTERNAL, 0, "transfer %d of op "
                            "%s: an input is reduced", x, op->name);
        if (t->relay) {
            kt_op_input_box(g, op, t->role, ts->box, &sb, &empty);
            if (empty) memset(&sb, 0, sizeof sb);
        } else
            sb = home[t->src * nt + t->tensor];
        empty = 0;
        kt_op_input_box(g, op, t->role, td->box, &db, &empty);
        if (empty) memset(&db, 0, sizeof db);
    } else {
        if (t->relay) sb = home[t->src * nt + t->tensor];
        else kt_op_output_box(op, ts->box, &sb);
        if (t->kind == KT_XFER_REDUCE) kt_op_output_box(op, td->box, &db);
        else db = home[t->dst * nt + t->tensor];
    }
    held = kt__box_inside(&t->region, &sb, tt->rank);
    wanted = kt__box_inside(&t->region, &db, tt->rank);
    if (!held || !wanted)
        return kt__fail(err, KT_ERR_INTERNAL, 0, "op %s: transfer %d of %s "
                        "from device %lld to %lld: the region is not %s",
                        op->name, x, tt->name, (long long)t->src,
                        (long long)t->dst,
                        !held && !t->relay ? "held by the sender"
                        : !held && t->role < op->ninputs
                            ? "in what the sender received (a relay)"
                        : !held ? "in the sender's tile (a relay)"
                                : "wanted by the receiver");
    if (t->relay && !(sets[kt__xfer_part(g, t)] &
                      (((uint64_t)1 << t->stage) - 1)))
        return kt__fail(err, KT_ERR_INTERNAL, 0, "op %s: transfer %d of %s "
                        "from device %lld to %lld: a relay at the first "
                        "stage (%d) of the op's %s: nothing was delivered to "
                        "the sender before", op->name, x, tt->name,
                        (long long)t->src, (long long)t->dst, t->stage,
                        t->role < op->ninputs ? "input copies"
                                              : "result copies");
    return KT_OK;
}

/* ---- stage hazards: what a stage's transfers read, none of them writes */

/* A transfer's side of one stage: the receiver writes its region into
   one of its buffers; a sender that forwards (a relay) or reduces reads
   its region from a buffer that transfers into its own device may write
   at the same stage (its input buffer, its tile, its partial result).
   The other reads -- a tile's own data for an input, a result buffer
   for a result copy -- are of buffers nothing writes in that part. */
typedef struct kt__access {
    int64_t dev; /* whose buffer                                     */
    int stage;
    int buffer;  /* an input's role (an input copy), KT__OUTBUF (a
                    reduction) or KT__HOME (a result copy): the buffer
                    names the part of the op's run too               */
    int read;    /* 1: the sender reads it; 0: the receiver writes it */
    int x;       /* the transfer                                      */
    const kt_box *box; /* its region                                   */
    int64_t lo, hi;    /* the region along the sweep's dimension       */
} kt__access;
#define KT__OUTBUF KT_MAX_VARS     /* the partial result (reductions)   */
#define KT__HOME (KT_MAX_VARS + 1) /* the tile of the op's result       */

/* One number for (stage, buffer), below KT__BUFFER_KEYS. */
#define KT__BUFFER_KEYS (KT_XFER_STAGES * (KT_MAX_VARS + 2))
static int kt__access_key(const kt__access *a) {
    return a->stage * (KT_MAX_VARS + 2) + a->buffer;
}

/* The sweep's order: by the low end along its dimension, writes before
   reads, then by region, so that equal regions of one kind are
   adjacent. */
static int kt__access_sweep_cmp(const void *pa, const void *pb) {
    const kt__access *a = (const kt__access *)pa, *b = (const kt__access *)pb;
    int c;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    if (a->read != b->read) return a->read - b->read;
    c = memcmp(a->box, b->box, sizeof(kt_box));
    return c ? c : a->x - b->x;
}

static int kt__boxes_meet(const kt_box *a, const kt_box *b, int rank) {
    int d;
    for (d = 0; d < rank; d++)
        if (a->r[d].lo >= b->r[d].hi || b->r[d].lo >= a->r[d].hi) return 0;
    return 1;
}

/* The dimension a sweep over these regions is cheapest along: the one
   they cover the least of, so that the fewest overlap in it (cells of a
   grid overlap there only within one band).  -1 for a scalar. */
static int kt__sweep_dim(const kt_tensor *t, const kt__access *a, int n) {
    int d, i, best = -1;
    double least = 0;
    for (d = 0; d < t->rank; d++) {
        double cover = 0;
        for (i = 0; i < n; i++)
            cover += (double)(a[i].box->r[d].hi - a[i].box->r[d].lo) /
                     (double)t->shape[d];
        if (best < 0 || cover < least) {
            best = d;
            least = cover;
        }
    }
    return best;
}

static kt_status kt__hazard_fail(const kt_graph *g, const kt_program *prog,
                                 const kt__access *rd, const kt__access *wr,
                                 kt_error *err) {
    const kt_transfer *r = &prog->xfer[rd->x], *w = &prog->xfer[wr->x];
    return kt__fail(err, KT_ERR_INTERNAL, 0, "op %s: at stage %d, transfer "
                    "%d of %s (device %lld to %lld) reads a region of device "
                    "%lld's %s that transfer %d (device %lld to %lld) writes; "
                    "a stage's transfers run at once, so what one forwards "
                    "or reduces must arrive at an earlier stage",
                    kt_graph_op(g, r->op)->name, r->stage, rd->x,
                    kt_graph_tensor(g, r->tensor)->name, (long long)r->src,
                    (long long)r->dst, (long long)r->src,
                    rd->buffer == KT__OUTBUF ? "partial result"
                    : rd->buffer == KT__HOME ? "tile"
                                             : "input buffer",
                    wr->x, (long long)w->src, (long long)w->dst);
}

/* One buffer at one stage, a[0 .. n), reads and writes: does a region
   read meet a region written?  A sweep along one dimension in order of
   the regions' low ends: each region is compared only with the regions
   of the other kind still open there (dropped from a list as the sweep
   passes their ends), and a region equal to the one before it of its
   kind is skipped (a reduction's sink receives one cell from every
   member).  open: two lists of n indices each. */
static kt_status kt__buffer_hazards(const kt_graph *g, const kt_program *prog,
                                    kt__access *a, int n, int *open,
                                    kt_error *err) {
    const kt_tensor *t = kt_graph_tensor(g, prog->xfer[a[0].x].tensor);
    int *list[2], len[2] = {0, 0}, i, k, sd, prev[2] = {-1, -1};
    list[0] = open;
    list[1] = open + n;
    sd = kt__sweep_dim(t, a, n);
    for (i = 0; i < n; i++) {
        a[i].lo = sd < 0 ? 0 : a[i].box->r[sd].lo;
        a[i].hi = sd < 0 ? 1 : a[i].box->r[sd].hi;
    }
    qsort(a, (size_t)n, sizeof *a, kt__access_sweep_cmp);
    for (i = 0; i < n; i++) {
        int own = a[i].read, other = !own, kept = 0;
        if (kt__box_numel(a[i].box, t->rank) == 0) continue;
        if (prev[own] >= 0 &&
            !memcmp(a[prev[own]].box, a[i].box, sizeof(kt_box)))
            continue;
        prev[own] = i;
        for (k = 0; k < len[other]; k++) {
            const kt__access *o = &a[list[other][k]];
            if (o->hi <= a[i].lo) continue; /* passed: dropped */
            list[other][kept++] = list[other][k];
            if (kt__boxes_meet(a[i].box, o->box, t->rank))
                return own ? kt__hazard_fail(g, prog, &a[i], o, err)
                           : kt__hazard_fail(g, prog, o, &a[i], err);
        }
        len[other] = kept;
        list[own][len[own]++] = i;
    }
    return KT_OK;
}

/* Op o's transfers as accesses (kt__access) into acc: one write each,
   and one read for a relay or a reduction.  Returns their number. */
static int kt__op_accesses(const kt_graph *g, const kt_program *prog, int o,
                           kt__access *acc) {
    int x, n = 0;
    for (x = prog->xfer_first[o]; x < prog->xfer_first[o + 1]; x++) {
        const kt_transfer *t = &prog->xfer[x];
        kt__part part = kt__xfer_part(g, t);
        kt__access w;
        memset(&w, 0, sizeof w);
        w.stage = t->stage;
        w.buffer = part == KT__INPUTS    ? t->role
                   : part == KT__REDUCES ? KT__OUTBUF
                                         : KT__HOME;
        w.x = x;
        w.box = &t->region;
        w.dev = t->dst;
        acc[n++] = w;
        if (t->relay || part == KT__REDUCES) {
            w.dev = t->src;
            w.read = 1;
            acc[n++] = w;
        }
    }
    return n;
}

static int64_t kt__access_sort_key(const kt__access *a, int by_dev) {
    return by_dev ? a->dev : kt__access_key(a);
}

/* One pass of a stable counting sort: from[0 .. n) into to, by the
   device or the key of acc[from[i]], below nkeys (count: nkeys + 1
   zeroed entries, left zeroed). */
static void kt__count_sort(const kt__access *acc, const int *from, int *to,
                           int n, int64_t nkeys, int64_t *count, int by_dev) {
    int i;
    int64_t k;
    for (i = 0; i < n; i++)
        count[kt__access_sort_key(&acc[from[i]], by_dev) + 1]++;
    for (k = 0; k < nkeys; k++) count[k + 1] += count[k];
    for (i = 0; i < n; i++)
        to[count[kt__access_sort_key(&acc[from[i]], by_dev)]++] = from[i];
    memset(count, 0, sizeof *count * (size_t)(nkeys + 1));
}

/* The scratch of kt__check_stage_hazards, sized for the op with the
   most transfers. */
typedef struct kt__hazard_scratch {
    kt__access *acc, *group; /* an op's accesses; one buffer's, in order  */
    int *order, *tmp, *open;
    int64_t *count;
} kt__hazard_scratch;

static void kt__hazard_scratch_free(kt__hazard_scratch *h) {
    KT_FREE(h->acc);
    KT_FREE(h->group);
    KT_FREE(h->order);
    KT_FREE(h->tmp);
    KT_FREE(h->open);
    KT_FREE(h->count);
}

/* Op o's accesses grouped by buffer and stage -- two stable counting
   passes, by (stage, buffer) and then by device, so that a
   group's accesses keep program order -- and each group with reads and
   writes swept (kt__buffer_hazards). */
static kt_status kt__op_hazards(const kt_graph *g, const kt_program *prog,
                                int o, kt__hazard_scratch *h, kt_error *err) {
    int n = kt__op_accesses(g, prog, o, h->acc), i, j, k;
    kt_status s = KT_OK;
    for (i = 0; i < n; i++) h->tmp[i] = i;
    kt__count_sort(h->acc, h->tmp, h->order, n, KT__BUFFER_KEYS, h->count, 0);
    kt__count_sort(h->acc, h->order, h->tmp, n, prog->ndev, h->count, 1);
    for (i = 0; i < n && s == KT_OK; i = j) {
        const kt__access *first = &h->acc[h->tmp[i]];
        int reads = first->read;
        for (j = i + 1; j < n && h->acc[h->tmp[j]].dev == first->dev &&
                        kt__access_key(&h->acc[h->tmp[j]]) ==
                            kt__access_key(first);
             j++)
            reads += h->acc[h->tmp[j]].read;
        if (reads == 0 || reads == j - i) continue; /* nothing to meet */
        for (k = i; k < j; k++) h->group[k - i] = h->acc[h->tmp[k]];
        s = kt__buffer_hazards(g, prog, h->group, j - i, h->open, err);
    }
    return s;
}

/* No transfer reads a region that another transfer of its stage writes
   (kt__pull_stages runs a stage's transfers at once, each by its
   receiver's worker): the executors would race on it, and a GPU running
   the program would too.  kt_lower's collectives never do this (what a
   device forwards or reduces arrived at an earlier stage, and at one
   stage it sends and receives different cells); a program made or
   altered by hand may.  Linear in the transfers, plus the devices and
   the (stage, buffer) keys once per op, plus the sweeps. */
static kt_status kt__check_stage_hazards(const kt_graph *g,
                                         const kt_program *prog,
                                         kt_error *err) {
    kt__hazard_scratch h;
    int o, most = 0;
    kt_status s = KT_OK;
    int64_t keys = prog->ndev > KT__BUFFER_KEYS ? prog->ndev : KT__BUFFER_KEYS;
    for (o = 0; o < prog->nops; o++)
        if (prog->xfer_first[o + 1] - prog->xfer_first[o] > most)
            most = prog->xfer_first[o + 1] - prog->xfer_first[o];
    if (most > INT_MAX / 4)
        return kt__fail(err, KT_ERR_LIMIT, 0, "an op of %d transfers: at most "
                        "%d can be checked", most, INT_MAX / 4);
    h.acc = (kt__access *)kt__calloc((size_t)most * 2 + 1, sizeof *h.acc);
    h.group = (kt__access *)kt__calloc((size_t)most * 2 + 1, sizeof *h.group);
    h.order = (int *)kt__calloc((size_t)most * 2 + 1, sizeof(int));
    h.tmp = (int *)kt__calloc((size_t)most * 2 + 1, sizeof(int));
    h.open = (int *)kt__calloc((size_t)most * 4 + 1, sizeof(int));
    h.count = (int64_t *)kt__calloc((size_t)keys + 1, sizeof(int64_t));
    if (!h.acc || !h.group || !h.order || !h.tmp || !h.open || !h.count)
        s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory checking the "
                     "stages of %d transfers", prog->nxfer);
    for (o = 0; o < prog->nops && s == KT_OK; o++)
        s = kt__op_hazards(g, prog, o, &h, err);
    kt__hazard_scratch_free(&h);
    return s;
}

/* Before any worker starts and any tile is allocated (home: the tiles'
   boxes, kt__tile_boxes): the program is well-formed (kt__program_check,
   which also checks each transfer's stage and relay), and every transfer
   moves a region its sender holds into a buffer its receiver has
   (kt__check_xfer), so the workers never read or write out of bounds
   whatever program they are given; and no stage reads what it writes
   (kt__check_stage_hazards), so they never race on a buffer. */
static kt_status kt__check_program(const kt_graph *g, const kt_plan *p,
                                   const kt_program *prog, const kt_box *home,
                                   kt_error *err) {
    uint64_t sets[KT__NPARTS];
    int x, o;
    kt_status s;
    (void)p;
    if ((s = kt__program_check(g, prog, prog->ndev, err)) != KT_OK) return s;
    for (o = 0; o < prog->nops; o++) {
        kt__op_stages(g, prog, o, sets);
        for (x = prog->xfer_first[o]; x < prog->xfer_first[o + 1]; x++)
            if ((s = kt__check_xfer(g, prog, home, sets, x, err)) != KT_OK)
                return s;
    }
    return kt__check_stage_hazards(g, prog, err);
}

/* What every run of a plan checks first: the plan is one of g's
   (kt__plan_check: tensor and op counts, tilings, splits), the program is
   for its devices and well-formed, and `leaves` (NULL: not yet, for a
   verification, which makes its own) is a state of g.  Nothing else ties
   the four together, and each is indexed by the others' counts. */
static kt_status kt__check_run_args(const kt_graph *g, const kt_plan *p,
                                    const kt_program *prog,
                                    const kt_cpu_state *leaves, int need_leaves,
                                    kt_error *err) {
    kt_status s;
    if ((s = kt_cpu_check_graph(g, err)) != KT_OK ||
        (s = kt__plan_check(g, p, err)) != KT_OK)
        return s;
    if (!prog) return kt__fail(err, KT_ERR_INVALID, 0, "no program (NULL)");
    if (prog->ndev != kt_factors_devices(&p->f))
        return kt__fail(err, KT_ERR_INVALID, 0, "the program is for %lld "
                        "devices, the plan for %lld", (long long)prog->ndev,
                        (long long)kt_factors_devices(&p->f));
    /* (sched.h's check: kt_lower's shape, every task and transfer) */
    if ((s = kt__program_check(g, prog, prog->ndev, err)) != KT_OK) return s;
    if (need_leaves &&
        (s = kt__state_check(g, leaves, 1, "leaves", err)) != KT_OK)
        return s;
    return KT_OK;
}

void kt_cpu_devices_free(kt_cpu_devices *d) {
    int64_t i;
    if (!d) return;
    if (d->tile)
        for (i = 0; i < d->ndev * d->ntensors; i++) KT_FREE(d->tile[i]);
    KT_FREE(d->tile);
    KT_FREE(d->box);
    KT_FREE(d->pairs);
    memset(d, 0, sizeof *d);
}

/* Every device's box of every tensor, in its tiling (the plan checked):
   out->box, before anything of the tiles' size is allocated. */
static void kt__tile_boxes(const kt_graph *g, const kt_plan *p,
                           kt_cpu_devices *out) {
    int64_t d;
    int t, nt = out->ntensors;
    for (d = 0; d < out->ndev; d++)
        for (t = 0; t < nt; t++) {
            const kt_tensor *x = kt_graph_tensor(g, t);
            kt_box *b = &out->box[d * nt + t];
            int64_t pc = 0;
            kt_tiling_device_box(&p->tiling[t], x->rank, x->shape, &p->f, d, b,
                                 &pc);
            if (kt__box_numel(b, x->rank) == 0) memset(b, 0, sizeof *b);
        }
}

/* Every device's tiles over out->box: leaves loaded from `leaves`, the
   rest NaN. */
static kt_status kt__alloc_tiles(const kt_graph *g, const kt_cpu_state *leaves,
                                 kt_cpu_devices *out, kt_error *err) {
    int64_t d, ndev = out->ndev;
    int t, nt = out->ntensors;
    for (d = 0; d < ndev; d++)
        for (t = 0; t < nt; t++) {
            const kt_tensor *x = kt_graph_tensor(g, t);
            const kt_box *b = &out->box[d * nt + t];
            kt_box full;
            int64_t n = kt__box_numel(b, x->rank);
            kt__view src, dst;
            out->tile[d * nt + t] =
                (kt_real *)kt__calloc((size_t)n + 1, sizeof(kt_real));
            if (!out->tile[d * nt + t])
                return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory for the "
                                "tile of %s on device %lld", x->name,
                                (long long)d);
            kt__fill_nan(out->tile[d * nt + t], n);
            if (!kt__is_leaf(x) || n == 0) continue;
            kt__full_box(x->rank, x->shape, &full);
            kt__view_set(&src, leaves->val[t], x->rank, &full);
            kt__view_set(&dst, out->tile[d * nt + t], x->rank, b);
            kt__copy_region(&src, &dst, b, KT__SET);
        }
    return KT_OK;
}

kt_status kt_cpu_run_partitioned(const kt_graph *g, const kt_plan *p,
                                 const kt_program *prog,
                                 const kt_cpu_state *leaves,
                                 const kt_cpu_options *opt,
                                 kt_cpu_devices *out, kt_error *err) {
    kt__run r;
    int64_t d, ndev = prog ? prog->ndev : 0;
    int t, nt = kt_graph_tensor_count(g);
    kt_status s;
    memset(out, 0, sizeof *out);
    memset(&r, 0, sizeof r);
    if ((s = kt__check_run_args(g, p, prog, leaves, 1, err)) != KT_OK ||
        (s = kt__worker_count(opt, ndev, &r.nworkers, err)) != KT_OK)
        return s;
    out->ndev = ndev;
    out->ntensors = nt;
    out->box = (kt_box *)kt__calloc((size_t)(ndev * nt) + 1, sizeof(kt_box));
    out->tile = (kt_real **)kt__calloc((size_t)(ndev * nt) + 1, sizeof(kt_real *));
    r.home = (kt__view *)kt__calloc((size_t)(ndev * nt) + 1, sizeof(kt__view));
    r.outbuf = (kt__view *)kt__calloc((size_t)ndev, sizeof(kt__view));
    r.errs = (kt_error *)kt__calloc((size_t)ndev, sizeof(kt_error));
    r.status = (kt_status *)kt__calloc((size_t)ndev, sizeof(kt_status));
    r.inmem = (kt_real **)kt__calloc((size_t)ndev * KT_MAX_VARS,
                                     sizeof(kt_real *));
    r.outmem = (kt_real **)kt__calloc((size_t)ndev, sizeof(kt_real *));
    if (!out->box || !out->tile || !r.home || !r.outbuf || !r.errs ||
        !r.status || !r.inmem || !r.outmem) {
        s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory for %lld devices",
                     (long long)ndev);
        goto done;
    }
    kt__tile_boxes(g, p, out);
    if ((s = kt__check_program(g, p, prog, out->box, err)) != KT_OK ||
        (s = kt__alloc_tiles(g, leaves, out, err)) != KT_OK)
        goto done;
    for (d = 0; d < ndev; d++)
        for (t = 0; t < nt; t++)
            kt__view_set(&r.home[d * nt + t], out->tile[d * nt + t],
                         kt_graph_tensor(g, t)->rank, &out->box[d * nt + t]);
    r.g = g;
    r.p = p;
    r.prog = prog;
    r.opt = opt;
    r.ndev = ndev;
    r.ntensors = nt;
    if ((s = kt__inbox_build(&r, err)) != KT_OK) goto done;
    if ((s = kt__run_workers(&r, kt__worker_main, err)) != KT_OK) goto done;
    if ((s = kt__tally_received(&r, out, err)) != KT_OK) goto done;
    kt__ok(err);
done:
    kt__inbox_free(&r);
    KT_FREE(r.home);
    KT_FREE(r.outbuf);
    KT_FREE(r.errs);
    KT_FREE(r.status);
    KT_FREE(r.inmem);
    KT_FREE(r.outmem);
    if (s != KT_OK) kt_cpu_devices_free(out);
    return s;
}

/* ---------------------------------------------------------- verification */

void kt_cpu_verify_defaults(kt_cpu_verify_options *o) {
    memset(o, 0, sizeof *o);
    o->seed = 1;
    /* float64 values: partitioned sums differ from serial ones only by
       their order; float32 storage needs about 1e-4 and 1e-3 */
    o->tol = sizeof(kt_real) >= 8 ? 1e-9 : 1e-4;
    o->eps = sizeof(kt_real) >= 8 ? 1e-7 : 1e-3;
}

/* dev holds every device's tile of every tensor of g: its tensor count
   is g's, and every box lies inside its tensor, not inverted, with a tile
   where it is not empty -- the comparison reads ref at every box's
   indices.  Linear in the boxes. */
static kt_status kt__devices_check(const kt_graph *g,
                                   const kt_cpu_devices *dev, kt_error *err) {
    int t, nt = kt_graph_tensor_count(g), k;
    int64_t d;
    if (dev->ndev < 0 || dev->ntensors != nt ||
        (dev->ndev > 0 && (!dev->box || !dev->tile)))
        return kt__fail(err, KT_ERR_INVALID, 0, "devices: %lld devices' tiles "
                        "of %d tensors%s, for a graph of %d tensors (the "
                        "result of another graph?)", (long long)dev->ndev,
                        dev->ntensors, dev->box && dev->tile ? "" : " (none "
                        "allocated)", nt);
    for (d = 0; d < dev->ndev; d++)
        for (t = 0; t < nt; t++) {
            const kt_tensor *x = kt_graph_tensor(g, t);
            const kt_box *b = &dev->box[d * nt + t];
            for (k = 0; k < x->rank; k++)
                if (b->r[k].lo < 0 || b->r[k].lo > b->r[k].hi ||
                    b->r[k].hi > x->shape[k])
                    return kt__fail(err, KT_ERR_INVALID, 0, "devices: the "
                                    "tile of %s on device %lld spans [%lld, "
                                    "%lld) of dim %d, not a range of [0, "
                                    "%lld)", x->name, (long long)d,
                                    (long long)b->r[k].lo,
                                    (long long)b->r[k].hi, k,
                                    (long long)x->shape[k]);
            if (kt__box_numel(b, x->rank) > 0 && !dev->tile[d * nt + t])
                return kt__fail(err, KT_ERR_INVALID, 0, "devices: no tile of "
                                "%s on device %lld", x->name, (long long)d);
        }
    return KT_OK;
}

/* One element: 0 agrees, 1 differs, 2 cannot be checked (NaN in both
   runs: the model computes NaN from these inputs, and a NaN on the device
   could as well be an element nobody wrote).  *diff and *rel: the error
   and the relative error that max_rel_error takes. */
static int kt__compare_one(double got, double want, double tol, double eps,
                           double floor_, double *diff, double *rel) {
    int got_nan = got != got, want_nan = want != want;
    *diff = *rel = 0;
    if (got_nan || want_nan) {
        if (got_nan && want_nan) return 2;
        *diff = *rel = INFINITY; /* NaN on one side: unwritten, or wrong */
        return 1;
    }
    if (got == want) return 0; /* (infinities too: inf - inf is NaN) */
    *diff = fabs(got - want);
    *rel = *diff / (fabs(want) + floor_);
    return !(*diff <= tol + fabs(want) * eps);
}

static void kt__report_mismatch(kt_cpu_report *rep, int t, int64_t d,
                                const int64_t *idx, double got,
                                double want) {
    if (rep->nreported < KT_CPU_REPORT_MISMATCHES) {
        kt_cpu_mismatch *m = &rep->first[rep->nreported++];
        m->tensor = t;
        m->device = d;
        memcpy(m->index, idx, sizeof m->index);
        m->got = got;
        m->want = want;
    }
    rep->mismatches++;
}

/* The tolerance of a comparison, tol + |want| * eps, and the floor of
   the relative error's denominator. */
typedef struct kt__limits {
    double tol, eps, floor_;
} kt__limits;

/* Device d's tile of tensor x (tensor t, box b, row-major) against the
   reference's values rv, element by element in the tile's order, a row
   of the last dimension at a time (offsets step by one along it). */
static void kt__compare_tile(const kt_tensor *x, int t, int64_t d,
                             const kt_box *b, const kt_real *tile,
                             const kt__view *rv, const kt__limits *lim,
                             kt_cpu_report *rep) {
    int64_t idx[KT_MAX_DIMS], j, n, i = 0;
    int k, last = x->rank - 1;
    if (kt__box_numel(b, x->rank) == 0) return;
    memset(idx, 0, sizeof idx);
    for (k = 0; k < x->rank; k++) idx[k] = b->r[k].lo;
    n = x->rank ? b->r[last].hi - b->r[last].lo : 1;
    do {
        const kt_real *want_row = rv->data + kt__view_offset(rv, idx);
        rep->compared += n;
        for (j = 0; j < n; j++, i++) {
            double got = (double)tile[i], want = (double)want_row[j], diff,
                   rel;
            int verdict;
            if (got == want) continue; /* most are: no error to record */
            verdict = kt__compare_one(got, want, lim->tol, lim->eps,
                                      lim->floor_, &diff, &rel);
            if (verdict == 2) {
                if (rep->unchecked++ == 0) rep->first_unchecked = t;
                continue;
            }
            if (diff > rep->max_abs_error) rep->max_abs_error = diff;
            if (rel > rep->max_rel_error) {
                rep->max_rel_error = rel;
                rep->worst_tensor = t;
            }
            if (verdict == 1) {
                int64_t at[KT_MAX_DIMS];
                memcpy(at, idx, sizeof at);
                if (x->rank) at[last] += j;
                kt__report_mismatch(rep, t, d, at, got, want);
            }
        }
    } while (kt__odometer(idx, b->r, 0, last));
}

/* tol and eps finite and >= 0; checked before a verification's runs.
   (NaN fails: every comparison with it is false, so every element would
   be called a mismatch.) */
static kt_status kt__tolerance_check(double tol, double eps, kt_error *err) {
    if (!(tol >= 0 && tol < HUGE_VAL && eps >= 0 && eps < HUGE_VAL))
        return kt__fail(err, KT_ERR_INVALID, 0, "compare: tolerance %g and "
                        "relative tolerance %g must be finite numbers >= 0",
                        tol, eps);
    return KT_OK;
}

kt_status kt_cpu_compare(const kt_graph *g, const kt_cpu_state *ref,
                         const kt_cpu_devices *dev, double tol, double eps,
                         kt_cpu_report *rep, kt_error *err) {
    int t, nt = kt_graph_tensor_count(g);
    int64_t d;
    kt__limits lim;
    kt_status s;
    lim.tol = tol;
    lim.eps = eps;
    lim.floor_ = eps > 0 ? tol / eps : 1;
    if ((s = kt__tolerance_check(tol, eps, err)) != KT_OK ||
        (s = kt__state_check(g, ref, 0, "reference", err)) != KT_OK ||
        (s = kt__devices_check(g, dev, err)) != KT_OK)
        return s;
    rep->max_rel_error = 0;
    rep->max_abs_error = 0;
    rep->worst_tensor = -1;
    rep->compared = 0;
    rep->mismatches = 0;
    rep->unchecked = 0;
    rep->first_unchecked = -1;
    rep->nreported = 0;
    for (t = 0; t < nt; t++) {
        const kt_tensor *x = kt_graph_tensor(g, t);
        kt_box full;
        kt__view rv;
        kt__full_box(x->rank, x->shape, &full);
        kt__view_set(&rv, ref->val[t], x->rank, &full);
        for (d = 0; d < dev->ndev; d++)
            kt__compare_tile(x, t, d, &dev->box[d * nt + t],
                             dev->tile[d * nt + t], &rv, &lim, rep);
    }
    rep->values_ok = rep->mismatches == 0 && rep->unchecked == 0;
    rep->ok = rep->values_ok && rep->bytes_ok;
    kt__ok(err);
    return KT_OK;
}

static kt_status kt__plan_copy_eval(const kt_graph *g, const kt_plan *p,
                                    int64_t *bytes, kt_error *err) {
    kt_plan c;
    kt_status s;
    if ((s = kt_plan_init(&c, g, &p->f, err)) != KT_OK) return s;
    memcpy(c.tiling, p->tiling, (size_t)kt_graph_tensor_count(g) * sizeof *c.tiling);
    memcpy(c.split, p->split,
           (size_t)kt_graph_op_count(g) * KT_MAX_CUTS * sizeof *c.split);
    s = kt_plan_eval(g, &c, err);
    *bytes = c.total_bytes;
    kt_plan_free(&c);
    return s;
}

/* What a run under a memory cap adds to a verification: the swap plan,
   its memory model, the arena capacity and the report of the swaps. */
typedef struct kt__cpu_swap_run {
    const kt_swap_model *m;
    const kt_swap_plan *sp;
    int64_t capacity;
    kt_cpu_swap_report *rep;
} kt__cpu_swap_run;

/* The leaves' initial values (the serial run updates weights in place),
   in a state of g that holds nothing else: the partitioned runs read
   only leaves from it (kt__check_run_args), so the activations and
   gradients, most of a step's memory, are not copied. */
static kt_status kt__leaves_copy(const kt_graph *g, const kt_cpu_state *ref,
                                 kt_cpu_state *leaves, kt_error *err) {
    int t, nt = kt_graph_tensor_count(g);
    memset(leaves, 0, sizeof *leaves);
    leaves->ntensors = nt;
    leaves->val = (kt_real **)kt__calloc((size_t)nt + 1, sizeof(kt_real *));
    leaves->numel = (int64_t *)kt__calloc((size_t)nt + 1, sizeof(int64_t));
    if (!leaves->val || !leaves->numel) goto oom;
    for (t = 0; t < nt; t++) {
        leaves->numel[t] = ref->numel[t];
        if (!kt__is_leaf(kt_graph_tensor(g, t))) continue;
        leaves->val[t] = (kt_real *)KT_MALLOC(
            ((size_t)ref->numel[t] + 1) * sizeof(kt_real));
        if (!leaves->val[t]) goto oom;
        memcpy(leaves->val[t], ref->val[t],
               (size_t)ref->numel[t] * sizeof(kt_real));
    }
    return KT_OK;
oom:
    kt_cpu_state_free(leaves);
    return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory for the leaves' "
                    "values");
}

/* The one verification: the serial step and the partitioned one (in
   per-device arenas when `swap` is given) from the same leaves, every
   tensor compared, the bytes moved set against the plan's prediction. */
static kt_status kt__cpu_verify_run(const kt_graph *g, const kt_plan *p,
                                    const kt_program *prog,
                                    const kt__cpu_swap_run *swap,
                                    const kt_cpu_verify_options *o,
                                    kt_cpu_report *rep, kt_error *err) {
    kt_cpu_verify_options def;
    kt_cpu_state ref, leaves;
    kt_cpu_devices dev;
    kt_status s;
    int64_t nworkers;
    memset(rep, 0, sizeof *rep);
    memset(&dev, 0, sizeof dev);
    rep->worst_tensor = -1;
    if (!o) {
        kt_cpu_verify_defaults(&def);
        o = &def;
    }
    if ((s = kt__tolerance_check(o->tol, o->eps, err)) != KT_OK) return s;
    /* plan, program and thread count against g before the plan is copied
       by g's counts and before the serial run (what the run would refuse) */
    if ((s = kt__check_run_args(g, p, prog, NULL, 0, err)) != KT_OK ||
        (s = kt__worker_count(&o->run, prog->ndev, &nworkers, err)) != KT_OK ||
        (s = kt__plan_copy_eval(g, p, &rep->predicted_bytes, err)) != KT_OK)
        return s;
    rep->program_bytes = prog->total_bytes;
    rep->ndev = prog->ndev;
    if ((s = kt_cpu_state_init(&ref, g, err)) != KT_OK) return s;
    kt_cpu_fill_inputs(g, &ref, o->seed);
    if ((s = kt__leaves_copy(g, &ref, &leaves, err)) != KT_OK) {
        kt_cpu_state_free(&ref);
        return s;
    }
    s = kt_cpu_run_serial(g, &ref, &o->run, err);
    if (s == KT_OK && swap)
        s = kt_cpu_run_swapped(g, p, prog, swap->m, swap->sp, swap->capacity,
                               &leaves, &o->run, &dev, swap->rep, err);
    else if (s == KT_OK)
        s = kt_cpu_run_partitioned(g, p, prog, &leaves, &o->run, &dev, err);
    if (s == KT_OK) {
        rep->bytes_moved = dev.bytes_moved;
        rep->bytes_ok = dev.bytes_moved == rep->predicted_bytes;
        s = kt_cpu_compare(g, &ref, &dev, o->tol, o->eps, rep, err);
        if (swap) rep->ok = rep->ok && swap->rep->ok;
    }
    kt_cpu_devices_free(&dev);
    kt_cpu_state_free(&ref);
    kt_cpu_state_free(&leaves);
    return s;
}

kt_status kt_cpu_verify_program(const kt_graph *g, const kt_plan *p,
                                const kt_program *prog,
                                const kt_cpu_verify_options *o,
                                kt_cpu_report *rep, kt_error *err) {
    return kt__cpu_verify_run(g, p, prog, NULL, o, rep, err);
}

kt_status kt_cpu_verify(const kt_graph *g, const kt_plan *p,
                        const kt_cpu_verify_options *o, kt_cpu_report *rep,
                        kt_error *err) {
    kt_program prog;
    kt_status s;
    memset(rep, 0, sizeof *rep);
    rep->worst_tensor = -1;
    if ((s = kt_lower(g, p, &prog, err)) != KT_OK) return s;
    s = kt_cpu_verify_program(g, p, &prog, o, rep, err);
    kt_program_free(&prog);
    return s;
}

/* ------------------------------------------------- runs under a memory cap */

/* A swap plan (swap.h, SwapAdvisor: Huang thesis 4.3.2) executed for real.
   Each device's memory is ONE arena of `capacity` bytes, as the plan counts
   bytes (declared element sizes); the plan's pool objects are laid out in
   it class by class, and each element is stored as one kt_real at the
   slot of its byte offset divided by the graph's smallest element size.
   A tensor lives in an object while the plan keeps it resident and in host
   memory (the tile buffers of kt_cpu_devices) otherwise.  Every op reads
   its inputs from the arena and writes its output into it, with its
   receive and result buffers (kt_swap_op_buffers) in objects of their own.
   The actions are done synchronously, in plan order, before each op: a
   CPU has no copy streams, and the order is what matters for the values
   (the simulator prices the overlap).
   What is not in the arena: the kernels' own workspace (the fast path's
   gathered operand panels, like a GPU library's workspace) is host memory
   of this reference executor.  A model's scratch tensors beyond the
   buffers (kt_swap_model_add_scratch after them, e.g. a profiled
   workspace) are allocated in the arena by the plan and left untouched.
   Tiles of a partitioned run are at most the model's sizes (the fullest
   device's); the copies count each device's actual tile bytes. */

/* One device's memories. */
typedef struct kt__sdev {
    kt_real *arena;
    kt_real **host;          /* per graph tensor: its tile in host memory  */
    unsigned char *valid;    /* per model tensor: the host copy is current */
    unsigned char *dirty;    /* per model tensor: the device copy is newer */
    int *where;              /* per model tensor: object, -1 not resident  */
    int *obj_tensor;         /* per object: model tensor, -1 empty         */
    int *resident, nres;     /* model tensors in the arena                 */
    int64_t occupied, tensor_bytes;
    kt_cpu_swap_device *st;
} kt__sdev;

typedef struct kt__srun {
    kt__run r;               /* the partitioned executor's shared state   */
    const kt_swap_model *m;
    const kt_swap_plan *sp;
    int64_t capacity, unit, slots;
    int64_t *obj_off;        /* byte offset of every object in the arena  */
    int *mt_of;              /* graph tensor -> model tensor (-1: none)   */
    int *buf;                /* graph op * (KT_MAX_VARS + 1): the model's
                                scratch tensor for each buffer, -1 none   */
    const kt_box *box;       /* the tiles, [d * ntensors + t]             */
    kt__sdev *dev;
} kt__srun;

/* Bytes model tensor mt takes on device d: its tile, or a buffer's size. */
static int64_t kt__s_bytes(const kt__srun *s, int64_t d, int mt) {
    int t = s->m->graph_tensor[mt];
    const kt_tensor *x;
    if (t < 0) return s->m->bytes[mt];
    x = kt_graph_tensor(s->r.g, t);
    return kt__box_numel(&s->box[d * s->r.ntensors + t], x->rank) *
           x->elem_bytes;
}

static const char *kt__s_name(const kt__srun *s, int mt, char *buf,
                              size_t cap) {
    int t = s->m->graph_tensor[mt];
    if (t >= 0) return kt_graph_tensor(s->r.g, t)->name;
    snprintf(buf, cap, "buffer (model tensor %d)", mt);
    return buf;
}

static kt_real *kt__s_slot(const kt__srun *s, int64_t d, int obj) {
    return s->dev[d].arena + s->obj_off[obj] / s->unit;
}

static kt_status kt__s_fail(const kt__srun *s, int64_t d, int step, int mt,
                            kt_error *err, const char *what) {
    char nb[48];
    const char *opname = "the end of the step";
    if (step < s->sp->nsteps) {
        int go = s->m->graph_op[s->sp->order[step]];
        opname = go >= 0 ? kt_graph_op(s->r.g, go)->name : "?";
    }
    return kt__fail(err, KT_ERR_INVALID, 0, "swap plan, step %d (%s), "
                    "device %lld, tensor %s: %s", step, opname, (long long)d,
                    mt >= 0 ? kt__s_name(s, mt, nb, sizeof nb) : "-", what);
}

/* Puts model tensor mt into object obj of device d, checking that the
   object is inside the arena, empty and big enough, and that no live
   tensor overlaps the bytes it takes (checked on the byte ranges
   themselves, not on the object bookkeeping). */
static kt_status kt__s_place(kt__srun *s, int64_t d, int mt, int obj,
                             int step, kt_error *err) {
    kt__sdev *v = &s->dev[d];
    int64_t lo, hi, b = kt__s_bytes(s, d, mt);
    int i, t = s->m->graph_tensor[mt];
    char msg[200];
    if (obj < 0 || obj >= s->sp->nobjects) {
        snprintf(msg, sizeof msg, "object %d is not in the pool (%d objects;"
                 " -1 is a dynamic allocation, which this executor does not "
                 "run: use a pool plan)", obj, s->sp->nobjects);
        return kt__s_fail(s, d, step, mt, err, msg);
    }
    if (v->where[mt] >= 0)
        return kt__s_fail(s, d, step, mt, err, "already in device memory");
    if (v->obj_tensor[obj] >= 0) {
        char nb[48];
        snprintf(msg, sizeof msg, "object %d still holds %s: the two would "
                 "overlap", obj, kt__s_name(s, v->obj_tensor[obj], nb,
                                            sizeof nb));
        return kt__s_fail(s, d, step, mt, err, msg);
    }
    lo = s->obj_off[obj];
    hi = lo + b;
    if (b > s->sp->object_bytes[obj] || hi > s->capacity) {
        snprintf(msg, sizeof msg, "%lld bytes at arena offset %lld do not fit"
                 " in object %d (%lld bytes) inside the %lld-byte arena",
                 (long long)b, (long long)lo, obj,
                 (long long)s->sp->object_bytes[obj], (long long)s->capacity);
        return kt__s_fail(s, d, step, mt, err, msg);
    }
    for (i = 0; i < v->nres; i++) {
        int o2 = v->resident[i];
        int64_t lo2 = s->obj_off[v->where[o2]], hi2 = lo2 + kt__s_bytes(s, d, o2);
        if (lo < hi2 && lo2 < hi && b > 0 && hi2 > lo2) {
            char nb[48];
            snprintf(msg, sizeof msg, "arena bytes [%lld, %lld) overlap "
                     "those of %s", (long long)lo, (long long)hi,
                     kt__s_name(s, o2, nb, sizeof nb));
            return kt__s_fail(s, d, step, mt, err, msg);
        }
    }
    v->where[mt] = obj;
    v->obj_tensor[obj] = mt;
    v->resident[v->nres++] = mt;
    v->occupied += s->sp->object_bytes[obj];
    v->tensor_bytes += b;
    if (v->occupied > s->capacity)
        return kt__s_fail(s, d, step, mt, err, "the objects in use exceed "
                          "the capacity");
    if (v->occupied > v->st->peak_bytes) v->st->peak_bytes = v->occupied;
    if (v->tensor_bytes > v->st->peak_tensor_bytes)
        v->st->peak_tensor_bytes = v->tensor_bytes;
    if (hi > v->st->high_water) v->st->high_water = hi;
    if (t >= 0)
        kt__view_set(&s->r.home[d * s->r.ntensors + t], kt__s_slot(s, d, obj),
                     kt_graph_tensor(s->r.g, t)->rank,
                     &s->box[d * s->r.ntensors + t]);
    return KT_OK;
}

/* Takes mt out of the arena; its object is poisoned with NaN so a stale
   read of it shows in the values. */
static void kt__s_release(kt__srun *s, int64_t d, int mt) {
    kt__sdev *v = &s->dev[d];
    int obj = v->where[mt], i, t = s->m->graph_tensor[mt];
    kt__fill_nan(kt__s_slot(s, d, obj), kt__s_bytes(s, d, mt) / s->unit);
    v->occupied -= s->sp->object_bytes[obj];
    v->tensor_bytes -= kt__s_bytes(s, d, mt);
    v->obj_tensor[obj] = -1;
    v->where[mt] = -1;
    for (i = 0; i < v->nres; i++)
        if (v->resident[i] == mt) {
            v->resident[i] = v->resident[--v->nres];
            break;
        }
    if (t >= 0) s->r.home[d * s->r.ntensors + t].data = NULL;
}

/* Elements of graph tensor t's tile on device d. */
static int64_t kt__s_numel(const kt__srun *s, int64_t d, int t) {
    return kt__box_numel(&s->box[d * s->r.ntensors + t],
                         kt_graph_tensor(s->r.g, t)->rank);
}

/* One action of the plan on device d (thesis 4.3.2's swap-in, swap-out,
   drop; the planner's allocations and frees). */
static kt_status kt__s_action(kt__srun *s, int64_t d, const kt_swap_action *a,
                              kt_error *err) {
    kt__sdev *v = &s->dev[d];
    int mt = a->tensor, t, obj;
    int64_t n;
    kt_status st;
    if (mt < 0 || mt >= s->m->ntensors)
        return kt__s_fail(s, d, a->step, -1, err, "an action names no tensor");
    t = s->m->graph_tensor[mt];
    obj = v->where[mt];
    n = t >= 0 ? kt__s_numel(s, d, t) : 0;
    v->st->actions++;
    switch (a->kind) {
    case KT_SWAP_IN:
        if (t < 0 || !v->valid[mt])
            return kt__s_fail(s, d, a->step, mt, err, "swap-in of a host copy "
                              "that is not current");
        if ((st = kt__s_place(s, d, mt, a->object, a->step, err)) != KT_OK)
            return st;
        memcpy(kt__s_slot(s, d, a->object), v->host[t],
               (size_t)n * sizeof(kt_real));
        v->st->in_bytes += kt__s_bytes(s, d, mt);
        v->dirty[mt] = 0;
        return KT_OK;
    case KT_SWAP_ALLOC:
        /* created by the op: the object's NaN poison stays until written */
        if ((st = kt__s_place(s, d, mt, a->object, a->step, err)) != KT_OK)
            return st;
        v->dirty[mt] = 1;
        v->valid[mt] = 0; /* the op overwrites it: the host copy is old */
        return KT_OK;
    case KT_SWAP_OUT:
        if (obj < 0 || (a->object >= 0 && obj != a->object))
            return kt__s_fail(s, d, a->step, mt, err, "swap-out of a tensor "
                              "not in that object");
        if (t < 0)
            return kt__s_fail(s, d, a->step, mt, err, "swap-out of a buffer");
        memcpy(v->host[t], kt__s_slot(s, d, obj), (size_t)n * sizeof(kt_real));
        v->st->out_bytes += kt__s_bytes(s, d, mt);
        v->valid[mt] = 1;
        v->dirty[mt] = 0;
        kt__s_release(s, d, mt);
        return KT_OK;
    case KT_SWAP_DROP:
        if (obj < 0 || (a->object >= 0 && obj != a->object))
            return kt__s_fail(s, d, a->step, mt, err, "drop of a tensor not "
                              "in that object");
        if (v->dirty[mt] || !v->valid[mt])
            return kt__s_fail(s, d, a->step, mt, err, "drop of a device copy "
                              "newer than the host's: its update would be "
                              "lost");
        kt__s_release(s, d, mt);
        return KT_OK;
    case KT_SWAP_FREE:
        if (obj < 0) return KT_OK; /* its last value is in host memory */
        /* dead: its last value is kept for the comparison in its host
           buffer (the verifier's tap -- not a swap, not counted, and no
           op of the step reads it) */
        if (t >= 0) {
            memcpy(v->host[t], kt__s_slot(s, d, obj),
                   (size_t)n * sizeof(kt_real));
            v->valid[mt] = 0;
        }
        kt__s_release(s, d, mt);
        return KT_OK;
    }
    return kt__s_fail(s, d, a->step, mt, err, "an unknown action");
}

static kt_status kt__s_actions(kt__srun *s, int64_t d, int step,
                               kt_error *err) {
    int i;
    kt_status st;
    for (i = s->sp->step_first[step]; i < s->sp->step_first[step + 1]; i++)
        if ((st = kt__s_action(s, d, &s->sp->action[i], err)) != KT_OK)
            return st;
    return KT_OK;
}

/* Before an op: every tensor and buffer it uses is in the arena.  A
   missing one is a bug of the plan, reported, never read from host. */
static kt_status kt__s_check_op(kt__srun *s, int64_t d, int step,
                                kt_error *err) {
    const kt_swap_model *m = s->m;
    int mo = s->sp->order[step], i;
    for (i = m->use_first[mo]; i < m->use_first[mo + 1]; i++)
        if (s->dev[d].where[m->use[i]] < 0)
            return kt__s_fail(s, d, step, m->use[i], err, "the op needs it "
                              "in device memory and the plan did not put it "
                              "there");
    return KT_OK;
}

/* A view of buffer `bt` (a scratch object) over region b. */
static kt_status kt__s_buffer_view(kt__srun *s, int64_t d, int bt,
                                   const kt_tensor *x, const kt_box *b,
                                   int step, kt__view *out, kt_error *err) {
    int64_t n = kt__box_numel(b, x->rank);
    if (n * x->elem_bytes > s->m->bytes[bt])
        return kt__s_fail(s, d, step, bt, err, "the region is larger than "
                          "the buffer the model gives it");
    kt__view_set(out, kt__s_slot(s, d, s->dev[d].where[bt]), x->rank, b);
    kt__fill_nan(out->data, n);
    return KT_OK;
}

/* Before device dev's transfers of op o: each input one lands in a
   receive buffer, and every sender's tile it reads (an input's, or a
   relayed result's) is in device memory -- set by the step's actions,
   which the barrier before the op ends, so no worker changes it now.  A
   relayed input is read from the sender's receive buffer for the same
   role of the same op (this op's, r->inview), resident through it.  The
   failure names the tensor of the first transfer found wanting, in the
   receive group's order (kt__inbox_build). */
static kt_status kt__s_sources(kt__srun *s, int64_t dev, int o, int step,
                               kt_error *err) {
    kt__run *r = &s->r;
    int i;
    for (i = kt__inbox_lo(r, o, dev); i < kt__inbox_hi(r, o, dev); i++) {
        const kt_transfer *t = &r->prog->xfer[r->inbox[i]];
        const kt__view *src = &r->home[t->src * r->ntensors + t->tensor];
        kt__part part = kt__xfer_part(r->g, t);
        if (part == KT__INPUTS &&
            (s->buf[o * (KT_MAX_VARS + 1) + t->role] < 0 ||
             (!t->relay && !src->data)))
            return kt__s_fail(s, dev, step, s->mt_of[t->tensor], err,
                              "a transfer has no receive buffer, or its "
                              "sender's tile is not in device memory");
        if (part == KT__OUTPUTS && t->relay && !src->data)
            return kt__s_fail(s, dev, step, s->mt_of[t->tensor], err,
                              "a relayed result's sender's tile is not in "
                              "device memory");
    }
    return KT_OK;
}

/* Phase 1 under swapping, before the transfers (kt__pull_stages): an
   input is read in place from its tile in the arena, or gathered into its
   receive buffer (the local part here, the rest by the transfers from the
   senders' tiles, also in their arenas, or their receive buffers). */
static kt_status kt__s_inputs(kt__srun *s, int64_t dev, int o, int step,
                              kt__view *in, kt_error *err) {
    kt__run *r = &s->r;
    const kt_op *op = kt_graph_op(r->g, o);
    const kt_task *task = &r->prog->task[(int64_t)o * r->ndev + dev];
    int j;
    kt_status st;
    for (j = 0; j < op->ninputs; j++) {
        const kt_tensor *t = kt_graph_tensor(r->g, op->input[j]);
        const kt__view *home = &r->home[dev * r->ntensors + op->input[j]];
        int bt = s->buf[o * (KT_MAX_VARS + 1) + j], empty = 0;
        kt_box need, local;
        kt_op_input_box(r->g, op, j, task->box, &need, &empty);
        if (empty) memset(&need, 0, sizeof need);
        if (bt < 0) {
            if (!kt__box_inside(&need, &home->box, t->rank))
                return kt__s_fail(s, dev, step, s->mt_of[op->input[j]], err,
                                  "the op reads outside the tile and the "
                                  "model has no receive buffer (build it "
                                  "with kt_swap_model_from_program)");
            in[j] = *home;
            continue;
        }
        if ((st = kt__s_buffer_view(s, dev, bt, t, &need, step, &in[j],
                                    err)) != KT_OK)
            return st;
        kt__box_intersect(&need, &home->box, t->rank, &local);
        kt__copy_region(home, &in[j], &local, KT__SET);
    }
    return kt__s_sources(s, dev, o, step, err);
}

/* Phase 2 under swapping: the result goes into its result buffer, or
   straight into the output's tile when the region computed is the tile. */
static kt_status kt__s_compute(kt__srun *s, int64_t dev, int o, int step,
                               const kt__view *in, kt_error *err) {
    kt__run *r = &s->r;
    const kt_op *op = kt_graph_op(r->g, o);
    const kt_tensor *y = kt_graph_tensor(r->g, op->output);
    const kt_task *task = &r->prog->task[(int64_t)o * r->ndev + dev];
    kt__view *home = &r->home[dev * r->ntensors + op->output];
    int bt = s->buf[o * (KT_MAX_VARS + 1) + op->ninputs];
    kt__opctx *cx;
    kt_box ob;
    int64_t n;
    kt_status st;
    kt_op_output_box(op, task->box, &ob);
    n = kt__box_numel(&ob, y->rank);
    if (n == 0) memset(&ob, 0, sizeof ob);
    if (bt >= 0) {
        if ((st = kt__s_buffer_view(s, dev, bt, y, &ob, step, &r->outbuf[dev],
                                    err)) != KT_OK)
            return st;
    } else {
        if (n != kt__box_numel(&home->box, y->rank) ||
            !kt__box_inside(&ob, &home->box, y->rank))
            return kt__s_fail(s, dev, step, s->mt_of[op->output], err,
                              "the op computes another region than the tile "
                              "and the model has no result buffer (build it "
                              "with kt_swap_model_from_program)");
        r->outbuf[dev] = *home;
    }
    if (n == 0) return KT_OK;
    cx = (kt__opctx *)kt__calloc(1, sizeof *cx);
    if (!cx)
        return kt__fail(err, KT_ERR_NOMEM, op->line, "op %s, device %lld: out "
                        "of memory", op->name, (long long)dev);
    cx->g = r->g;
    cx->op = op;
    cx->in = in;
    cx->out = &r->outbuf[dev];
    memcpy(cx->box, task->box, sizeof cx->box);
    st = kt__run_box(cx, r->opt, err);
    KT_FREE(cx);
    return st;
}

/* Device dev's part of a step before and after the op (each when the
   device has not failed): the step's actions and the check that the
   op's tensors are in place; then its input buffers, and once the
   transfers are in (compute) its sub-operator. */
static void kt__s_device_actions(kt__srun *s, int64_t dev, int step) {
    kt__run *r = &s->r;
    kt_status st;
    if (r->status[dev] != KT_OK) return;
    st = kt__s_actions(s, dev, step, &r->errs[dev]);
    if (st == KT_OK && step < s->sp->nsteps)
        st = kt__s_check_op(s, dev, step, &r->errs[dev]);
    if (st != KT_OK) kt__worker_fail(r, dev, st);
}
static void kt__s_device_op(kt__srun *s, int64_t dev, int o, int step,
                            int compute) {
    kt__run *r = &s->r;
    kt__view *in = &r->inview[dev * r->nin];
    kt_status st;
    if (r->status[dev] != KT_OK) return;
    st = compute ? kt__s_compute(s, dev, o, step, in, &r->errs[dev])
                 : kt__s_inputs(s, dev, o, step, in, &r->errs[dev]);
    if (st != KT_OK) kt__worker_fail(r, dev, st);
}

/* After model op mo on device dev: what it wrote is newer in the arena
   than on the host. */
static void kt__s_device_wrote(kt__srun *s, int64_t dev, int mo) {
    const kt_swap_model *m = s->m;
    int i;
    for (i = m->use_first[mo]; i < m->use_first[mo + 1]; i++)
        if (m->use_mode[i] & KT_SWAP_WRITE) {
            s->dev[dev].dirty[m->use[i]] = 1;
            s->dev[dev].valid[m->use[i]] = 0;
        }
}

/* One worker: the plan's steps in its order, each the step's actions and
   the op's phases over its devices (an extra barrier after the actions:
   another worker's transfers read this one's arenas only once their tiles
   are in place), each phase's stages as kt__worker_main has them. */
static void *kt__sworker_main(void *arg) {
    const kt__worker *w = (const kt__worker *)arg;
    kt__srun *s = (kt__srun *)w->run; /* (its first member) */
    kt__run *r = &s->r;
    int64_t dev;
    int step, stop = 0, n = s->sp->nsteps;
    for (step = 0; step < n && !stop; step++) {
        int mo = s->sp->order[step], o = s->m->graph_op[mo];
        const kt_op *op = kt_graph_op(r->g, o);
        int res = s->buf[o * (KT_MAX_VARS + 1) + op->ninputs] >= 0;
        KT__EACH_DEVICE(r, w, dev) kt__s_device_actions(s, dev, step);
        if (kt__barrier_wait(&r->bar)) break;
        KT__EACH_DEVICE(r, w, dev) kt__s_device_op(s, dev, o, step, 0);
        if (kt__pull_stages(r, w, o, KT__INPUTS, 0) ||
            kt__barrier_wait(&r->bar))
            break;
        KT__EACH_DEVICE(r, w, dev) {
            kt__s_device_op(s, dev, o, step, 1);
            kt__inviews_drop(r, dev);
        }
        if (kt__barrier_wait(&r->bar)) break;
        if (kt__pull_stages(r, w, o, KT__REDUCES, 0) ||
            kt__barrier_wait(&r->bar))
            break;
        stop = kt__phase_store(r, w, o, !res) || kt__barrier_wait(&r->bar);
        KT__EACH_DEVICE(r, w, dev) {
            memset(&r->outbuf[dev], 0, sizeof r->outbuf[dev]);
            kt__s_device_wrote(s, dev, mo);
        }
    }
    if (step == n && !stop) /* the step's end */
        KT__EACH_DEVICE(r, w, dev) kt__s_device_actions(s, dev, n);
    return NULL;
}

static int64_t kt__gcd64(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The model, the plan and the program belong together: one model tensor
   per graph tensor an op uses, every tile within its model size, every
   op's buffers among its scratch tensors (in kt_swap_op_buffers' order). */
static kt_status kt__s_bind(kt__srun *s, kt_error *err) {
    const kt_graph *g = s->r.g;
    const kt_swap_model *m = s->m;
    const kt_swap_plan *sp = s->sp;
    int nt = s->r.ntensors, no = kt_graph_op_count(g), i, j, mo;
    int64_t d, need[KT_MAX_VARS + 1], pool = 0;
    unsigned char *seen;
    if (m->nops != no || sp->nsteps != no)
        return kt__fail(err, KT_ERR_INVALID, 0, "swap plan: %d steps and a "
                        "model of %d ops for a graph of %d ops", sp->nsteps,
                        m->nops, no);
    if (!sp->step_first || sp->step_first[0] != 0 ||
        sp->step_first[no + 1] != sp->nactions)
        return kt__fail(err, KT_ERR_INVALID, 0, "swap plan: its step index "
                        "does not cover its %d actions", sp->nactions);
    for (i = 0; i <= no; i++)
        if (sp->step_first[i + 1] < sp->step_first[i])
            return kt__fail(err, KT_ERR_INVALID, 0, "swap plan: step %d's "
                            "actions end before they start", i);
    for (i = 0; i < nt; i++) s->mt_of[i] = -1;
    for (i = 0; i < m->ntensors; i++) {
        int t = m->graph_tensor[i];
        if (t >= nt)
            return kt__fail(err, KT_ERR_INVALID, 0, "swap model: tensor %d "
                            "is graph tensor %d, the graph has %d", i, t, nt);
        if (t >= 0) s->mt_of[t] = i;
    }
    for (i = 0; i < nt; i++)
        for (d = 0; d < s->r.ndev && s->mt_of[i] >= 0; d++)
            if (kt__s_bytes(s, d, s->mt_of[i]) > m->bytes[s->mt_of[i]])
                return kt__fail(err, KT_ERR_INVALID, 0, "swap model: tensor "
                                "%s has %lld bytes on device %lld, the model "
                                "gives it %lld", kt_graph_tensor(g, i)->name,
                                (long long)kt__s_bytes(s, d, s->mt_of[i]),
                                (long long)d,
                                (long long)m->bytes[s->mt_of[i]]);
    seen = (unsigned char *)kt__calloc((size_t)no + 1, 1);
    if (!seen) return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    for (i = 0; i < no; i++) {
        mo = sp->order[i];
        if (mo < 0 || mo >= no || seen[mo] || m->graph_op[mo] < 0 ||
            m->graph_op[mo] >= no) {
            KT_FREE(seen);
            return kt__fail(err, KT_ERR_INVALID, 0, "swap plan: step %d runs "
                            "op %d: not a graph op, or run twice", i, mo);
        }
        seen[mo] = 1;
    }
    KT_FREE(seen);
    for (mo = 0; mo < no; mo++) {
        int o = m->graph_op[mo], k = m->use_first[mo];
        const kt_op *op = kt_graph_op(g, o);
        kt_swap_op_buffers(g, s->r.p, s->r.prog, o, need);
        for (j = 0; j <= op->ninputs; j++) {
            int bt = -1;
            s->buf[o * (KT_MAX_VARS + 1) + j] = -1;
            if (need[j] == 0) continue;
            while (k < m->use_first[mo + 1] && m->graph_tensor[m->use[k]] >= 0)
                k++;
            if (k < m->use_first[mo + 1]) bt = m->use[k++];
            if (bt < 0 || m->bytes[bt] < need[j])
                return kt__fail(err, KT_ERR_INVALID, op->line, "swap model: "
                                "op %s needs a %s buffer of %lld bytes for "
                                "%s that the model does not have (build it "
                                "with kt_swap_model_from_program)", op->name,
                                j < op->ninputs ? "receive" : "result",
                                (long long)need[j],
                                kt_graph_tensor(g, j < op->ninputs
                                                       ? op->input[j]
                                                       : op->output)->name);
            s->buf[o * (KT_MAX_VARS + 1) + j] = bt;
        }
    }
    for (i = 0; i < sp->nactions; i++)
        if (sp->action[i].object < 0)
            return kt__fail(err, KT_ERR_INVALID, 0, "swap plan: action %d "
                            "allocates dynamically (an ODSwap or GeePS plan);"
                            " the CPU executor runs pool plans (GA or none)",
                            i);
    /* the pool, object after object, inside the arena: every size checked
       and the total (saturated: sizes near INT64_MAX must not wrap) set
       against the capacity before any offset is summed */
    for (i = 0; i < sp->nobjects; i++) {
        if (sp->object_bytes[i] < 0 || sp->object_bytes[i] % s->unit)
            return kt__fail(err, KT_ERR_INVALID, 0, "swap plan: object %d has "
                            "%lld bytes, not a multiple of the element size "
                            "%lld", i, (long long)sp->object_bytes[i],
                            (long long)s->unit);
        pool = sp->object_bytes[i] > INT64_MAX - pool
                   ? INT64_MAX
                   : pool + sp->object_bytes[i];
    }
    if (pool == INT64_MAX)
        return kt__fail(err, KT_ERR_INVALID, 0, "swap plan: its objects' "
                        "sizes add up past 2^63 bytes, more than the "
                        "%lld-byte arena", (long long)s->capacity);
    if (pool > s->capacity)
        return kt__fail(err, KT_ERR_INVALID, 0, "swap plan: its pool has %lld "
                        "bytes, more than the %lld-byte arena",
                        (long long)pool, (long long)s->capacity);
    for (i = 0; i < sp->nobjects; i++)
        s->obj_off[i + 1] = s->obj_off[i] + sp->object_bytes[i];
    /* memory is allocated for the pool only: every placement is checked
       against its object and the capacity, so nothing past the pool is
       ever addressed, and an 80 GB capacity costs no more host memory
       than the step's pool */
    s->slots = s->obj_off[sp->nobjects] / s->unit;
    return KT_OK;
}

/* Device d's memories: host copies are the leaves' tiles (already in
   out->tile), the initial residents of a steady plan are put in their
   objects -- what the previous step left there.  A parameter the step
   updates was left newer than its host copy, unless the previous step
   swapped it back in after updating it (the plan's initial_clean), so
   that copy is poisoned: a plan that drops it instead of copying it out
   shows in the values. */
static kt_status kt__s_init_device(kt__srun *s, int64_t d,
                                   kt_cpu_devices *out, kt_error *err) {
    kt__sdev *v = &s->dev[d];
    const kt_swap_model *m = s->m;
    int i, nm = m->ntensors, nt = s->r.ntensors;
    kt_status st;
    /* the pool's slots (kt__s_bind), poisoned below object by object */
    if ((uint64_t)s->slots + 1 <= (uint64_t)SIZE_MAX / sizeof(kt_real))
        v->arena = (kt_real *)KT_MALLOC(((size_t)s->slots + 1) *
                                        sizeof(kt_real));
    v->valid = (unsigned char *)kt__calloc((size_t)nm + 1, 1);
    v->dirty = (unsigned char *)kt__calloc((size_t)nm + 1, 1);
    v->where = (int *)kt__calloc((size_t)nm + 1, sizeof(int));
    v->resident = (int *)kt__calloc((size_t)nm + 1, sizeof(int));
    v->obj_tensor = (int *)kt__calloc((size_t)s->sp->nobjects + 1, sizeof(int));
    if (!v->arena || !v->valid || !v->dirty || !v->where || !v->resident ||
        !v->obj_tensor)
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory for the pool "
                        "of %lld bytes of device %lld",
                        (long long)s->obj_off[s->sp->nobjects], (long long)d);
    v->host = out->tile + d * nt;
    for (i = 0; i < s->sp->nobjects; i++) {
        v->obj_tensor[i] = -1;
        kt__fill_nan(kt__s_slot(s, d, i), s->sp->object_bytes[i] / s->unit);
    }
    for (i = 0; i < nm; i++) {
        int t = m->graph_tensor[i];
        v->where[i] = -1;
        v->valid[i] = t >= 0 && kt__is_leaf(kt_graph_tensor(s->r.g, t));
    }
    for (i = 0; i < nt; i++) s->r.home[d * nt + i].data = NULL;
    for (i = 0; i < s->sp->ninitial; i++) {
        int mt = s->sp->initial_tensor[i], t;
        if (mt < 0 || mt >= nm || (t = m->graph_tensor[mt]) < 0 ||
            !v->valid[mt])
            return kt__s_fail(s, d, 0, mt, err, "an initial resident that is "
                              "not a leaf tensor");
        if ((st = kt__s_place(s, d, mt, s->sp->initial_object[i], 0, err)) !=
            KT_OK)
            return st;
        memcpy(kt__s_slot(s, d, s->sp->initial_object[i]), v->host[t],
               (size_t)kt__s_numel(s, d, t) * sizeof(kt_real));
        /* updated last step and not swapped back in after: the host copy
           is stale (NaN, so that a plan reading it fails) */
        if (m->updated[mt] &&
            !(s->sp->initial_clean && s->sp->initial_clean[i])) {
            v->dirty[mt] = 1;
            v->valid[mt] = 0;
            kt__fill_nan(v->host[t], kt__s_numel(s, d, t));
        }
    }
    return KT_OK;
}

/* A parameter the plan takes for clean at the start of the step
   (initial_clean: the step before swapped it back in after updating it)
   must be so at the end, which is the next step's start: else the next
   step would drop an update. */
static kt_status kt__s_check_end(kt__srun *s, int64_t d, kt_error *err) {
    int i;
    for (i = 0; s->sp->initial_clean && i < s->sp->ninitial; i++) {
        int mt = s->sp->initial_tensor[i];
        if (s->sp->initial_clean[i] && s->dev[d].dirty[mt])
            return kt__s_fail(s, d, s->sp->nsteps, mt, err, "taken for "
                              "clean at the start (initial_clean), it ends "
                              "the step newer on the device than on the "
                              "host: the next step would lose the update");
    }
    return KT_OK;
}

/* The plan's copies at device d's tile sizes. */
static void kt__s_planned(kt__srun *s, int64_t d) {
    int i;
    for (i = 0; i < s->sp->nactions; i++) {
        const kt_swap_action *a = &s->sp->action[i];
        if (a->tensor < 0 || a->tensor >= s->m->ntensors) continue;
        if (a->kind == KT_SWAP_IN)
            s->dev[d].st->planned_in_bytes += kt__s_bytes(s, d, a->tensor);
        if (a->kind == KT_SWAP_OUT)
            s->dev[d].st->planned_out_bytes += kt__s_bytes(s, d, a->tensor);
    }
}

/* Final values: what is in the arena at the end is copied to the host
   tiles, which already hold the rest (host copies, dead tensors' taps). */
static void kt__s_collect(kt__srun *s, int64_t d) {
    kt__sdev *v = &s->dev[d];
    int i;
    for (i = 0; i < v->nres; i++) {
        int mt = v->resident[i], t = s->m->graph_tensor[mt];
        if (t >= 0)
            memcpy(v->host[t], kt__s_slot(s, d, v->where[mt]),
                   (size_t)kt__s_numel(s, d, t) * sizeof(kt_real));
    }
}

static void kt__s_report(kt__srun *s, kt_cpu_swap_report *rep) {
    int64_t d;
    rep->ok = 1;
    for (d = 0; d < rep->ndev; d++) {
        const kt_cpu_swap_device *x = &rep->device[d];
        rep->swapped_in_bytes += x->in_bytes;
        rep->swapped_out_bytes += x->out_bytes;
        rep->planned_in_bytes += x->planned_in_bytes;
        rep->planned_out_bytes += x->planned_out_bytes;
        if (x->peak_bytes > rep->peak_bytes) rep->peak_bytes = x->peak_bytes;
        if (x->in_bytes != x->planned_in_bytes ||
            x->out_bytes != x->planned_out_bytes ||
            x->peak_bytes != rep->plan_peak_bytes ||
            x->peak_bytes > rep->capacity ||
            x->in_bytes + x->out_bytes > rep->plan_swapped_bytes)
            rep->ok = 0;
    }
    /* alone, the tiles are the model's tensors: the plan's own figure */
    if (rep->ndev == 1 &&
        rep->swapped_in_bytes + rep->swapped_out_bytes !=
            rep->plan_swapped_bytes)
        rep->ok = 0;
    (void)s;
}

void kt_cpu_swap_report_free(kt_cpu_swap_report *rep) {
    if (!rep) return;
    KT_FREE(rep->device);
    memset(rep, 0, sizeof *rep);
}

kt_status kt_cpu_run_swapped(const kt_graph *g, const kt_plan *p,
                             const kt_program *prog, const kt_swap_model *m,
                             const kt_swap_plan *sp, int64_t capacity,
                             const kt_cpu_state *leaves,
                             const kt_cpu_options *opt, kt_cpu_devices *out,
                             kt_cpu_swap_report *rep, kt_error *err) {
    kt__srun s;
    int64_t d, ndev = prog ? prog->ndev : 0;
    int t, nt = kt_graph_tensor_count(g), no = kt_graph_op_count(g);
    kt_status st;
    if (!out || !rep || !sp)
        return kt__fail(err, KT_ERR_INVALID, 0, "kt_cpu_run_swapped: no %s "
                        "(NULL)", !out ? "devices" : !rep ? "report"
                                                          : "swap plan");
    memset(out, 0, sizeof *out);
    memset(rep, 0, sizeof *rep);
    memset(&s, 0, sizeof s);
    /* the model as the planners take it: finished, unchanged since (the
       plan's actions are checked as they are carried out) */
    if ((st = kt__check_run_args(g, p, prog, leaves, 1, err)) != KT_OK ||
        (st = kt__worker_count(opt, ndev, &s.r.nworkers, err)) != KT_OK ||
        (st = kt__swap_model_usable(m, err)) != KT_OK)
        return st;
    if (capacity <= 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "memory: %lld bytes is not a "
                        "capacity", (long long)capacity);
    /* the pool's object count sizes the arrays below */
    if (sp->nobjects < 0 || (sp->nobjects > 0 && !sp->object_bytes))
        return kt__fail(err, KT_ERR_INVALID, 0, "swap plan: %d pool objects%s",
                        sp->nobjects, sp->object_bytes ? "" : " and no sizes");
    for (t = 0; t < nt; t++)
        s.unit = kt__gcd64(s.unit, kt_graph_tensor(g, t)->elem_bytes);
    if (s.unit <= 0) s.unit = 1;
    s.m = m;
    s.sp = sp;
    s.capacity = capacity;
    rep->ndev = ndev;
    rep->capacity = capacity;
    rep->pool_bytes = sp->pool_bytes;
    rep->plan_swapped_bytes = sp->swapped_bytes;
    rep->plan_peak_bytes = sp->peak_bytes;
    out->ndev = ndev;
    out->ntensors = nt;
    out->box = (kt_box *)kt__calloc((size_t)(ndev * nt) + 1, sizeof(kt_box));
    out->tile = (kt_real **)kt__calloc((size_t)(ndev * nt) + 1,
                                       sizeof(kt_real *));
    rep->device = (kt_cpu_swap_device *)kt__calloc((size_t)ndev,
                                                   sizeof(kt_cpu_swap_device));
    s.r.home = (kt__view *)kt__calloc((size_t)(ndev * nt) + 1, sizeof(kt__view));
    s.r.outbuf = (kt__view *)kt__calloc((size_t)ndev, sizeof(kt__view));
    s.r.errs = (kt_error *)kt__calloc((size_t)ndev, sizeof(kt_error));
    s.r.status = (kt_status *)kt__calloc((size_t)ndev, sizeof(kt_status));
    s.obj_off = (int64_t *)kt__calloc((size_t)sp->nobjects + 1, sizeof(int64_t));
    s.mt_of = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    s.buf = (int *)kt__calloc((size_t)no * (KT_MAX_VARS + 1) + 1, sizeof(int));
    s.dev = (kt__sdev *)kt__calloc((size_t)ndev, sizeof(kt__sdev));
    if (!out->box || !out->tile || !rep->device || !s.r.home ||
        !s.r.outbuf || !s.r.errs || !s.r.status || !s.obj_off ||
        !s.mt_of || !s.buf || !s.dev) {
        st = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory for %lld devices",
                      (long long)ndev);
        goto done;
    }
    s.r.g = g;
    s.r.p = p;
    s.r.prog = prog;
    s.r.opt = opt;
    s.r.ndev = ndev;
    s.r.ntensors = nt;
    s.box = out->box;
    kt__tile_boxes(g, p, out);
    if ((st = kt__check_program(g, p, prog, out->box, err)) != KT_OK ||
        (st = kt__alloc_tiles(g, leaves, out, err)) != KT_OK ||
        (st = kt__inbox_build(&s.r, err)) != KT_OK)
        goto done;
    if ((st = kt__s_bind(&s, err)) != KT_OK) goto done;
    for (d = 0; d < ndev; d++) {
        s.dev[d].st = &rep->device[d];
        kt__s_planned(&s, d);
        if ((st = kt__s_init_device(&s, d, out, err)) != KT_OK) goto done;
    }
    if ((st = kt__run_workers(&s.r, kt__sworker_main, err)) != KT_OK)
        goto done;
    for (d = 0; d < ndev; d++)
        if ((st = kt__s_check_end(&s, d, err)) != KT_OK) goto done;
    for (d = 0; d < ndev; d++) kt__s_collect(&s, d);
    if ((st = kt__tally_received(&s.r, out, err)) != KT_OK) goto done;
    kt__s_report(&s, rep);
    kt__ok(err);
done:
    if (s.dev)
        for (d = 0; d < ndev; d++) {
            KT_FREE(s.dev[d].arena);
            KT_FREE(s.dev[d].valid);
            KT_FREE(s.dev[d].dirty);
            KT_FREE(s.dev[d].where);
            KT_FREE(s.dev[d].resident);
            KT_FREE(s.dev[d].obj_tensor);
        }
    KT_FREE(s.dev);
    kt__inbox_free(&s.r);
    KT_FREE(s.r.home);
    KT_FREE(s.r.outbuf);
    KT_FREE(s.r.errs);
    KT_FREE(s.r.status);
    KT_FREE(s.obj_off);
    KT_FREE(s.mt_of);
    KT_FREE(s.buf);
    if (st != KT_OK) {
        kt_cpu_devices_free(out);
        kt_cpu_swap_report_free(rep);
    }
    return st;
}

kt_status kt_cpu_verify_swap(const kt_graph *g, const kt_plan *p,
                             const kt_program *prog, const kt_swap_model *m,
                             const kt_swap_plan *sp, int64_t capacity,
                             const kt_cpu_verify_options *o,
                             kt_cpu_report *rep, kt_cpu_swap_report *srep,
                             kt_error *err) {
    kt__cpu_swap_run swap;
    if (!srep)
        return kt__fail(err, KT_ERR_INVALID, 0, "kt_cpu_verify_swap: no swap "
                        "report (NULL)");
    memset(srep, 0, sizeof *srep);
    swap.m = m;
    swap.sp = sp;
    swap.capacity = capacity;
    swap.rep = srep;
    return kt__cpu_verify_run(g, p, prog, &swap, o, rep, err);
}

#endif /* KT_BACKEND_CPU_IMPLEMENTED */
#endif /* KT_IMPLEMENTATION */
