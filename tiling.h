/* tiling.h -- ktile part 1: graph IR, TDL operator descriptions, tiling
   algebra and exact conversion cost.                       MIT licence, see end.

   WHAT IT IS FOR
     A deep-learning training step is a dataflow graph of tensors and
     operators.  To run it on N devices every tensor gets a *tiling*: at each
     of the cuts k_1..k_m (product N) it is split along one dimension (S<d>),
     replicated (R), or -- as an operator result only -- held as partial sums
     (P).  This header holds what everything else stands on:
       - the graph IR and the model-file parser (one TDL index statement per
         operator, as in Tofu section 4.1),
       - symbolic interval analysis of those statements (Tofu 4.2), which
         yields every operator's partition strategies and the input regions
         each part needs (halos included),
       - the tiling algebra of SOYBEAN section 4.1/4.4 (composition,
         flattening, device coordinates, balanced block splits),
       - the exact conversion cost of ../shared/DESIGN.md, computed by
         coordinate compression,
       - training graphs (autodiff of the built-in forms) and a model zoo,
       - the search: level DP per cut (SOYBEAN 4.2, Tofu 5.1 coarsening),
         recursive k-cuts for any factorisation (SOYBEAN 4.3, Tofu 5.2),
         baselines, the bytes and time objectives and a memory cap.

   HOW TO USE IT
     In exactly one C file:
         #define KT_IMPLEMENTATION
         #include "tiling.h"       (or <ktile/tiling.h> once installed)
     Everywhere else include it without the define.  Never put the ktile
     directory itself on the include path: sched.h would shadow the POSIX
     <sched.h> that <pthread.h> includes.

   PUBLIC FUNCTIONS
     errors      kt_status_string
     memory      kt_free
     factors     kt_factors_parse kt_factors_default kt_factors_devices
                 kt_factors_check kt_device_coords kt_device_index
     splits      kt_split_range
     tilings     kt_tiling_parse kt_tiling_format kt_tiling_check
                 kt_tiling_device_box kt_tiling_flatten kt_tiling_same_grid
                 kt_tiling_enumerate
     placements  kt_placement_init kt_placement_free kt_placement_from_tiling
     cost        kt_conversion_cost kt_tiling_conversion_cost
     graph       kt_graph_create kt_graph_destroy kt_graph_add_tensor
                 kt_graph_add_op kt_graph_finalize kt_graph_parse
                 kt_graph_load_file kt_graph_find_tensor kt_graph_find_op
                 kt_graph_tensor_count
                 kt_graph_tensor kt_graph_op_count kt_graph_op kt_graph_loss
     analysis    kt_sym_interval_eval kt_op_strategies kt_op_var_box
                 kt_op_input_box kt_op_output_box kt_op_placements
                 kt_op_flops_per_point
     plans       kt_plan_init kt_plan_free kt_plan_search kt_plan_eval
                 kt_plan_op_cost kt_plan_tensor_bytes kt_plan_memory
                 kt_plan_step_seconds kt_plan_format_split kt_plan_parse_split
     machines    kt_machine_default kt_machine_parse kt_machine_level_of_cut
                 kt_machine_factors
     training    kt_graph_autodiff
     zoo         kt_zoo_build kt_zoo_text kt_zoo_name kt_zoo_params
                 kt_zoo_about

   CONFIGURATION (define before including)
     KT_MALLOC(n) KT_REALLOC(p,n) KT_FREE(p)   all three or none (stdlib)
     KT_ASSERT(x)                               internal invariants (assert)
     KT_MAX_DIMS    8      largest tensor rank
     KT_MAX_CUTS    16     most cuts in one tiling (2^16 devices)
     KT_MAX_VARS    16     most index variables in one statement
     KT_MAX_LINE    65536  longest model-file line accepted
     KT_MAX_NESTING 256    deepest nest of parentheses, minus signs and
                           function calls in one statement; its operator
                           tree may be 4x as deep (a + b + ... is flat
                           text), autodiff's statements twice that + 64.
                           The recursions over a tree of 1023 operators
                           need about 512 KB of stack
     KT_NAME_MAX    64     longest tensor or variable name + 1
     KT_MAX_DEVICES 2^20   most devices a plan may have
     KT_ZOO_MAX_BLOCKS 1024  most layers (x steps) of a zoo model
     KT_CLOCK()     CPU time  seconds, as a double, for search time budgets
                              and search_seconds (default clock() /
                              CLOCKS_PER_SEC: the process's CPU time, all
                              threads' together)

   The library never prints, never exits, and reports every bad input as a
   kt_status with a kt_error message that names the line, tensor and
   dimension concerned.
*/
#ifndef KT_TILING_H
#define KT_TILING_H

#include <stddef.h>
#include <stdint.h>

#ifndef KT_MAX_DIMS
#define KT_MAX_DIMS 8
#endif
#ifndef KT_MAX_CUTS
#define KT_MAX_CUTS 16
#endif
#ifndef KT_MAX_VARS
#define KT_MAX_VARS 16
#endif
#ifndef KT_MAX_LINE
#define KT_MAX_LINE 65536
#endif
#ifndef KT_MAX_NESTING
#define KT_MAX_NESTING 256
#endif
#ifndef KT_NAME_MAX
#define KT_NAME_MAX 64
#endif
#ifndef KT_MAX_DEVICES
#define KT_MAX_DEVICES (1 << 20)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ errors */

typedef enum kt_status {
    KT_OK = 0,
    KT_ERR_INVALID,     /* an argument is malformed or out of range        */
    KT_ERR_PARSE,       /* a model file or statement does not parse        */
    KT_ERR_SHAPE,       /* shapes, ranks or extents disagree               */
    KT_ERR_GRAPH,       /* the graph is ill-formed (cycle, missing tensor) */
    KT_ERR_IO,          /* a file cannot be read                           */
    KT_ERR_NOMEM,       /* an allocation failed                            */
    KT_ERR_LIMIT,       /* a compile-time limit (KT_MAX_*) is exceeded     */
    KT_ERR_INTERNAL     /* a bug in ktile                                  */
} kt_status;

typedef struct kt_error {
    kt_status status;
    int line;           /* model-file line, 0 when not from a file */
    char message[512];
} kt_error;

const char *kt_status_string(kt_status s);
/* Frees what a call allocated for its caller to free (kt_zoo_text's text,
   kt_sync_layers_from_plan's layers) with the allocator the
   implementation was built with (KT_FREE), which a file that only
   includes the declarations cannot name.  NULL is fine. */
void kt_free(void *p);

/* ----------------------------------------------------------- tiling algebra */

/* Cut factors k_1..k_m; their product is the device count.  Devices are
   numbered mixed-radix over the cuts with cut 1 most significant. */
typedef struct kt_factors {
    int count;
    int k[KT_MAX_CUTS];
} kt_factors;

/* One cut of a tiling: a dimension index >= 0 means S<d>. */
enum { KT_CUT_R = -1, KT_CUT_P = -2 };

/* A tiling names one choice per cut, cut 1 first ("S0.S1", "R.S0", "P"). */
typedef struct kt_tiling {
    int ncuts;
    signed char cut[KT_MAX_CUTS];
} kt_tiling;

/* Half-open interval [lo, hi). */
typedef struct kt_range {
    int64_t lo, hi;
} kt_range;

/* A region of a tensor: one half-open range per dimension. */
typedef struct kt_box {
    kt_range r[KT_MAX_DIMS];
} kt_box;

/* The flattened view of SOYBEAN Theorem 2: a grid of tiles with parts[d]
   pieces along dimension d, each tile held by `replicas` devices, in
   `partials` partial-sum classes. */
typedef struct kt_flat {
    int64_t parts[KT_MAX_DIMS];
    int64_t replicas;
    int64_t partials;
} kt_flat;

/* "2,2" or "3" -> factors; every factor >= 2, product <= KT_MAX_DEVICES. */
kt_status kt_factors_parse(const char *text, kt_factors *out, kt_error *err);
/* Prime factors of n, largest first (Tofu 5.2); n == 1 gives no cuts. */
kt_status kt_factors_default(int64_t n, kt_factors *out, kt_error *err);
/* Fails unless f is what kt_factors_parse could give: 0 .. KT_MAX_CUTS
   cuts, every factor >= 2, product <= KT_MAX_DEVICES.  Every function
   taking factors or a plan checks them with it. */
kt_status kt_factors_check(const kt_factors *f, kt_error *err);
int64_t kt_factors_devices(const kt_factors *f);
void kt_device_coords(const kt_factors *f, int64_t device, int *coords);
int64_t kt_device_index(const kt_factors *f, const int *coords);

/* Part p of r split into k balanced blocks:
   [lo + floor(p*n/k), lo + floor((p+1)*n/k)) with n = hi - lo; the empty
   range [lo, lo) for k < 1 or p outside [0, k). */
kt_range kt_split_range(kt_range r, int k, int p);

kt_status kt_tiling_parse(const char *text, kt_tiling *out, kt_error *err);
/* Writes "S0.R.P"; returns the length the full text needs (snprintf rule). */
int kt_tiling_format(const kt_tiling *t, char *buf, size_t cap);
/* Checks t against a tensor: one cut per factor, split dimensions exist,
   no dimension split into more parts than it has elements, and P only when
   allow_partial.  `name` (may be NULL) goes into the message. */
kt_status kt_tiling_check(const kt_tiling *t, const char *name, int rank,
                          const int64_t *shape, const kt_factors *f,
                          int allow_partial, kt_error *err);
/* The region device `device` holds and its partial class in [0, partials). */
void kt_tiling_device_box(const kt_tiling *t, int rank, const int64_t *shape,
                          const kt_factors *f, int64_t device, kt_box *box,
                          int64_t *partial_class);
kt_flat kt_tiling_flatten(const kt_tiling *t, int rank, const kt_factors *f);
/* 1 when both tilings flatten to the same grid (SOYBEAN Theorem 2). */
int kt_tiling_same_grid(const kt_tiling *a, const kt_tiling *b, int rank,
                        const kt_factors *f);

enum {
    KT_ENUM_REPLICATE = 1, /* allow R cuts                                  */
    KT_ENUM_PARTIAL = 2,   /* allow P cuts                                  */
    KT_ENUM_DISTINCT = 4   /* one sequence per flattened grid               */
};
/* Enumerates tilings of a rank-`rank` tensor for factors f.  shape may be
   NULL; when given, tilings that split a dimension into more parts than it
   has elements are left out.  Writes at most cap tilings to out (which may
   be NULL) and the full count to *count.  Order is deterministic: sequences
   in lexicographic order of their cuts (S0 < S1 < ... < R < P per cut);
   with KT_ENUM_DISTINCT the first sequence of each grid is kept. */
kt_status kt_tiling_enumerate(int rank, const int64_t *shape,
                              const kt_factors *f, unsigned flags,
                              kt_tiling *out, size_t cap, size_t *count,
                              kt_error *err);

/* -------------------------------------------------------------- placements */

/* Where the elements of one tensor are, or are needed: one box per device
   (an empty box when a device holds or needs nothing) and the number of
   partial-sum classes.  A source placement with partials q >= 2 (at most
   ndev: every device holds one class) puts device d in class
   partial_class[d], in [0, q); a target placement has partials == 1. */
typedef struct kt_placement {
    int rank;
    int64_t ndev;
    int64_t partials;
    kt_box *box;              /* ndev entries   */
    int64_t *partial_class;   /* ndev entries   */
    int grid;                 /* 1: any two boxes are equal or disjoint
                                 (tilings and op outputs are); lets the
                                 cost skip coordinate compression */
} kt_placement;

kt_status kt_placement_init(kt_placement *p, int rank, int64_t ndev,
                            kt_error *err);
void kt_placement_free(kt_placement *p);
kt_status kt_placement_from_tiling(kt_placement *p, const kt_tiling *t,
                                   int rank, const int64_t *shape,
                                   const kt_factors *f, kt_error *err);

/* ------------------------------------------------------------------- cost */

/* DESIGN.md "Conversion cost": for every element e, H = devices holding it,
   T = devices needing it, q = from->partials:
       q == 1:  |T \ H|
       q >= 2:  (q - 1) + |T| - [T and H intersect]     (0 when T is empty)
   summed over the tensor and multiplied by elem_bytes.  received (may be
   NULL) gets the bytes each device receives; it sums to *bytes.  A reduction
   is attributed as a reduce-scatter: each element's reduction lands on one
   of the devices in T∩H (or H when that is empty), each cell of the grid
   split among them along its longest dimension, and is then delivered to
   the rest of T. */
kt_status kt_conversion_cost(int rank, const int64_t *shape, int elem_bytes,
                             const kt_placement *from, const kt_placement *to,
                             int64_t *bytes, int64_t *received, kt_error *err);
/* The same between two tilings of one tensor; `to` may not contain P. */
kt_status kt_tiling_conversion_cost(int rank, const int64_t *shape,
                                    int elem_bytes, const kt_factors *f,
                                    const kt_tiling *from, const kt_tiling *to,
                                    int64_t *bytes, int64_t *received,
                                    kt_error *err);

/* ------------------------------------------------------------------ graph */

typedef enum kt_tensor_kind {
    KT_INPUT = 0,
    KT_WEIGHT,
    KT_ACTIVATION,
    KT_GRADIENT,
    KT_OPTSTATE
} kt_tensor_kind;

typedef struct kt_tensor {
    char name[KT_NAME_MAX];
    int rank;
    int64_t shape[KT_MAX_DIMS];
    int elem_bytes;
    kt_tensor_kind kind;
    int producer;   /* op that creates it, -1 for a leaf                   */
    int updater;    /* op that writes it in place afterwards, -1 if none   */
    int of;         /* a gradient's or optimizer state's tensor, else -1   */
    int line;       /* where it was declared or first defined, 0 if API    */
} kt_tensor;

typedef enum kt_reducer {
    KT_REDUCE_NONE = 0,
    KT_REDUCE_SUM,
    KT_REDUCE_MAX,
    KT_REDUCE_MIN,
    KT_REDUCE_PROD
} kt_reducer;

/* Symbolic interval (Tofu 4.2, Figure 4) over the symbolic bounds of the
   statement's index variables.  Variable v ranges over [LO_v, HI_v]
   (inclusive); a bound is  (sum_v a_v*LO_v + b_v*HI_v + c) / divisor,
   rounded down.  Tofu keeps only upper-bound symbols; ktile keeps the lower
   ones too, so balanced block splits with uneven extents are exact. */
typedef struct kt_sym_bound {
    int64_t lo_coef[KT_MAX_VARS];
    int64_t hi_coef[KT_MAX_VARS];
    int64_t c;
} kt_sym_bound;

typedef struct kt_sym_interval {
    kt_sym_bound lower, upper;
    int64_t divisor; /* >= 1; division is only allowed as the last step */
} kt_sym_interval;

typedef struct kt_index_var {
    char name[KT_NAME_MAX];
    int64_t extent;
    int reduction;   /* 1 for a variable of sum(...)/max(...)            */
    int splittable;  /* 0 for output variables bound by an opaque call   */
} kt_index_var;

/* One read of an input tensor inside a statement. */
typedef struct kt_access {
    int tensor;
    int input;                         /* index into kt_op.input          */
    int padded;                        /* pad(x[...]): zeros outside      */
    int whole[KT_MAX_DIMS];            /* ':' in an opaque argument       */
    kt_sym_interval dim[KT_MAX_DIMS];  /* index range per dimension       */
} kt_access;

/* Expression tree of the statement's body (used by the CPU reference). */
typedef enum kt_expr_kind {
    KT_EXPR_CONST = 0,
    KT_EXPR_ACCESS, /* value of access[index]                           */
    KT_EXPR_UNARY,  /* fn(a)                                            */
    KT_EXPR_BINARY  /* a op b, op one of + - * /                        */
} kt_expr_kind;

typedef struct kt_expr {
    kt_expr_kind kind;
    double value;     /* CONST                                          */
    int index;        /* ACCESS: access index                           */
    int fn;           /* UNARY: a KT_FN_* code; BINARY: '+','-','*','/' */
    int a, b;         /* child node indices                             */
} kt_expr;

enum {
    KT_FN_NEG = 0, KT_FN_RELU, KT_FN_TANH, KT_FN_SIGMOID, KT_FN_EXP,
    KT_FN_LOG, KT_FN_SQRT, KT_FN_STEP, KT_FN_COUNT
};

typedef struct kt_op {
    char name[KT_NAME_MAX + 8];     /* output name, "W.update" in place    */
    int line;
    char *text;                     /* the statement as written            */
    int output;                     /* tensor written                      */
    int in_place;                   /* 1 when it updates an existing tensor */
    int nvars;
    kt_index_var var[KT_MAX_VARS];  /* output variables first, in order    */
    int out_rank;                   /* output dim d is indexed by var d    */
    kt_reducer reducer;
    char opaque[KT_NAME_MAX];       /* non-empty for opaque(name, ...)     */
    int ninputs;
    int input[KT_MAX_VARS];         /* distinct input tensors              */
    int naccess;
    kt_access *access;
    int nexpr;
    kt_expr *expr;                  /* root is expr[nexpr - 1]             */
    int group;                      /* forward op it was generated for, -1 */
    int flops;                      /* per point: kt_op_flops_per_point    */
} kt_op;

typedef struct kt_graph kt_graph;

kt_status kt_graph_create(kt_graph **out, kt_error *err);
void kt_graph_destroy(kt_graph *g);
/* Declares a tensor.  Leaves (input, weight) and activations declared ahead
   of the statement that produces them.  elem_bytes in {1,2,4,8}. */
kt_status kt_graph_add_tensor(kt_graph *g, const char *name, int rank,
                              const int64_t *shape, int elem_bytes,
                              kt_tensor_kind kind, kt_error *err);
/* Adds one TDL statement (grammar in README.md).  A new output tensor is
   created with the inferred shape; an existing, unproduced declared tensor
   is produced; an existing produced tensor is written in place. `line` goes
   into messages (0 when not from a file). */
kt_status kt_graph_add_op(kt_graph *g, const char *statement, int line,
                          kt_error *err);
/* Checks every read tensor is produced or a leaf, and orders the ops
   topologically; reports a cycle by naming the tensors on it. */
kt_status kt_graph_finalize(kt_graph *g, kt_error *err);
/* Parses a whole model file held in memory (len bytes) and finalizes. */
kt_status kt_graph_parse(kt_graph *g, const char *text, size_t len,
                         kt_error *err);
kt_status kt_graph_load_file(kt_graph **out, const char *path, kt_error *err);

int kt_graph_find_tensor(const kt_graph *g, const char *name); /* -1 if none */
/* The op named `name`, or -1: an op is named after the tensor it writes,
   or "T.update" when it updates tensor T in place. */
int kt_graph_find_op(const kt_graph *g, const char *name);
int kt_graph_tensor_count(const kt_graph *g);
const kt_tensor *kt_graph_tensor(const kt_graph *g, int i);
int kt_graph_op_count(const kt_graph *g);
const kt_op *kt_graph_op(const kt_graph *g, int i);
/* The tensor named by a `loss NAME` line, or -1. */
int kt_graph_loss(const kt_graph *g);

/* --------------------------------------------------------------- analysis */

/* Concrete [lo, hi) of a symbolic interval for variable ranges box[v]
   (half-open); empty when some variable range is empty. */
kt_range kt_sym_interval_eval(const kt_sym_interval *s, int nvars,
                              const kt_range *box);
/* The variables a cut of factor k may split (partition-n-reduce, Tofu 4.2):
   splittable output variables (the output is concatenated) and reduction
   variables (the output is partial), each with extent >= k within `box`
   (NULL: the full extents).  Returns how many were written to vars. */
int kt_op_strategies(const kt_op *op, int k, const kt_range *box, int *vars);
/* Full variable ranges of op: box[v] = [0, extent_v). */
void kt_op_var_box(const kt_op *op, kt_range *box);
/* Region of input `input` (index into op->input) the variable box needs:
   the union of all its accesses, clipped to the tensor where a read is
   padded.  *empty set when nothing is needed. */
void kt_op_input_box(const kt_graph *g, const kt_op *op, int input,
                     const kt_range *box, kt_box *region, int *empty);
void kt_op_output_box(const kt_op *op, const kt_range *box, kt_box *region);
/* Arithmetic operations per point of op's variable space, as the roofline
   counts them: one per function and + - * / of the body, one more per
   point when a reduction combines it into the output (a product-sum's
   multiply and add: 2; a plain sum: 1; a copy: 0).  What a compiler folds
   is free: operations on constants alone, `* 1`, `/ 1`, `+ 0`, `- 0`.  An
   opaque body is unknown to TDL and counts 1.  Counted when the statement
   is parsed (kt_op.flops). */
double kt_op_flops_per_point(const kt_op *op);
/* Placements of op run with factors f, splitting variable split_var[i] at
   cut i (KT_SPLIT_REPLICATE: not split, each group computes all of it): what each device needs of every input (needed[0..ninputs)) and
   what it produces (produced, partial when a reduction variable is split).
   The caller frees them with kt_placement_free. */
kt_status kt_op_placements(const kt_graph *g, const kt_op *op,
                           const kt_factors *f, const int *split_var,
                           kt_placement *needed, kt_placement *produced,
                           kt_error *err);


/* ------------------------------------------------------------------ plans */

/* An operator that has no index variable left to split at a cut computes
   that cut's share redundantly (every group computes all of it).  ktile
   uses it only when no splittable variable has enough elements, e.g. a
   10-element bias update on 16 devices. */
#define KT_SPLIT_REPLICATE (-1)

/* A plan: one tiling per tensor and, per operator, the variable each cut
   splits. */
typedef struct kt_plan {
    kt_factors f;
    int ntensors, nops;
    kt_tiling *tiling;      /* ntensors                                    */
    int *split;             /* nops * KT_MAX_CUTS, row per op              */
    int64_t total_bytes;    /* exact cost over all devices                 */
    int64_t cut_bytes[KT_MAX_CUTS]; /* what each cut adds (sums to total)  */
    double search_seconds;  /* CPU seconds the search took (KT_CLOCK)       */
    double step_seconds;    /* modelled step time (kt_plan_step_seconds)    */
    int64_t memory_bytes;   /* tensor bytes on the fullest device           */
} kt_plan;

typedef enum kt_strategy {
    KT_STRATEGY_DP = 0,      /* level DP at every cut (SOYBEAN 4.2, 4.3)   */
    KT_STRATEGY_BRUTEFORCE,  /* enumerate every tiling at every cut        */
    KT_STRATEGY_DATA,        /* data parallelism (SOYBEAN 4.1)             */
    KT_STRATEGY_MODEL,       /* model parallelism (SOYBEAN 4.1)            */
    KT_STRATEGY_GREEDY,      /* AllRow-greedy: every tensor on dim 0 (Tofu 7.3) */
    KT_STRATEGY_SPARTAN,     /* largest tensor first, cheapest given its
                                neighbours (Spartan, thesis Fig. 2.8)      */
    KT_STRATEGY_EQUALCHOP    /* DP, each tensor cut along one dimension
                                only (Tofu 7.3)                            */
} kt_strategy;

typedef enum kt_objective {
    KT_OBJECTIVE_BYTES = 0, /* bytes moved (the papers')                     */
    KT_OBJECTIVE_TIME       /* seconds: bytes over link bandwidth + compute  */
} kt_objective;

/* What `time` is measured on: the bandwidth (bytes/s, per device and
   direction) of each interconnect level, slowest first, and how many
   groups each level joins; plus a roofline of one device.  SOYBEAN 5.1:
   cut 1 goes on the slowest level.  One roofline for all devices: for
   devices of several kinds sched.h's kt_topology_machine gives the
   slowest kind, since balanced tiles make every op wait for it. */
typedef struct kt_machine {
    int nlevels;
    double level_bw[KT_MAX_CUTS];   /* bytes/s, slowest level first         */
    int64_t level_fanout[KT_MAX_CUTS]; /* groups a level joins (0: any)     */
    double peak_flops;              /* per device, flop/s                   */
    double mem_bw;                  /* per device, bytes/s                  */
} kt_machine;

typedef struct kt_search_options {
    kt_strategy strategy;
    kt_objective objective;
    const kt_machine *machine;  /* NULL: kt_machine_default()               */
    int64_t memory_cap;         /* bytes per device for tensors; 0: none    */
    int coalesce;               /* 1: tie element-wise operands (Tofu 5.1) */
    int64_t bruteforce_limit;   /* most assignments brute force tries; 0: 2^22 */
    int64_t dp_state_limit;     /* largest DP table; 0: 2^24                */
} kt_search_options;

kt_status kt_plan_init(kt_plan *p, const kt_graph *g, const kt_factors *f,
                       kt_error *err);
void kt_plan_free(kt_plan *p);
/* Exact cost of a plan: every operator's inputs converted to what its
   strategy needs and its output converted to the output tensor's tiling,
   over all devices (DESIGN.md); cut_bytes[i] is what cut i+1 adds, i.e.
   the cost of the plan truncated to cuts 1..i+1 minus that of 1..i. */
kt_status kt_plan_eval(const kt_graph *g, kt_plan *p, kt_error *err);
/* The same for one operator of the plan, truncated to its first ncuts
   cuts. */
kt_status kt_plan_op_cost(const kt_graph *g, const kt_plan *p, int op,
                          int ncuts, int64_t *bytes, kt_error *err);
/* Bytes of tensor t on the device holding most of it; -1 for a t out of
   range or a plan that is not of g's shape. */
int64_t kt_plan_tensor_bytes(const kt_graph *g, const kt_plan *p, int t);
/* Searches a plan for factors f; p is initialised by the call. */
kt_status kt_plan_search(const kt_graph *g, const kt_factors *f,
                         const kt_search_options *opt, kt_plan *p,
                         kt_error *err);
/* Per-device tensor memory of the plan: the sum over tensors of
   kt_plan_tensor_bytes (a bound: the fullest device of each tensor); -1
   for a plan that is not of g's shape. */
int64_t kt_plan_memory(const kt_graph *g, const kt_plan *p);
/* Modelled step time: cut i's bytes spread over all devices at the
   bandwidth of the level it maps to, plus every op's compute time on its
   slowest device: the highest roofline time, max(flops/peak,
   bytes/mem_bw), of its tiles (the largest, unless where a tile sits
   changes what it reads: padded, divided or doubly read indices).  NaN
   for a plan not of g's shape.  The machine is taken as it is: infinite
   bandwidths price the compute alone. */
double kt_plan_step_seconds(const kt_graph *g, const kt_plan *p,
                            const kt_machine *m);
/* A single-level machine of one H200-class GPU per device (450 GB/s links,
   67 TFLOP/s fp32, 4.8 TB/s HBM). */
kt_machine kt_machine_default(void);
/* "flat:N:BW" or "nodes:MxG:INTRA_BW:INTER_BW" (BW in bytes/s with K, M,
   G, T prefixes, powers of 1000 in either case, or bits/s with b or bit:
   400Gb, 400gbps; 50GB/s for bytes). */
kt_status kt_machine_parse(const char *spec, kt_machine *m, kt_error *err);
/* The interconnect level cut i (0-based) is priced at: the slowest level
   that two devices differing only in their cut-i coordinate talk over
   (levels as sched.h's kt_topology_level has them), when the machine's
   fanouts multiply to the plan's device count; else the levels are
   taken in order, slowest first. */
int kt_machine_level_of_cut(const kt_machine *m, const kt_factors *f, int cut);
/* Default cut factors for n devices on m: when m's fanouts multiply to n,
   each level's prime factors (largest first), level by level in m's
   order (slowest first, as specs and topology files list them), so that
   no cut straddles two levels (SOYBEAN 5.1); else, and for a NULL m,
   kt_factors_default(n).  The same primes, and errors, as
   kt_factors_default. */
kt_status kt_machine_factors(const kt_machine *m, int64_t n, kt_factors *out,
                             kt_error *err);

/* Writes op's strategy as variable names per cut ("i.j", "*" for a
   replicated cut); returns the length needed, or -1 (and writes "") for
   an op out of range or a plan not of g's shape. */
int kt_plan_format_split(const kt_graph *g, const kt_plan *p, int op,
                         char *buf, size_t cap);
kt_status kt_plan_parse_split(const kt_graph *g, kt_plan *p, int op,
                              const char *text, kt_error *err);

/* ---------------------------------------------------- training graphs */

typedef struct kt_autodiff_options {
    double learning_rate;   /* 0: 0.01                                       */
    int adam;               /* 1: Adam (two state tensors per weight)       */
} kt_autodiff_options;

/* Generates the backward pass of the loss tensor (kt_graph_loss, or `loss`)
   and the in-place update of every weight, for the built-in forms:
   product-sums with affine indices (matrix products, convolutions, with
   strides), element-wise functions, broadcasts, max/min pooling and
   opaque(softmax_xent, ...).  Gradients are KT_GRADIENT tensors named
   d<name>; every generated op records the forward op it belongs to in
   kt_op.group (Tofu 5.1 coarsening).  The loss gradient is an input.
   The graph must be finalized; a failure leaves it as it was. */
kt_status kt_graph_autodiff(kt_graph *g, const kt_autodiff_options *opt,
                            kt_error *err);

/* ---------------------------------------------------------------- model zoo */

/* Builds a zoo model from a spec "name:key=value,...", e.g.
   "mlp:layers=5,hidden=300,batch=400" (training graph unless infer=1).
   At most KT_ZOO_MAX_BLOCKS (1024) layers, layers x steps for rnn:
   KT_ERR_LIMIT beyond. */
kt_status kt_zoo_build(const char *spec, kt_graph **out, kt_error *err);
/* The model file text of a spec (what kt_zoo_build parses before
   autodiff); the caller frees it with kt_free.  training may be NULL. */
kt_status kt_zoo_text(const char *spec, char **text, int *training,
                      kt_error *err);
/* Name, parameters with defaults, and a line of description of zoo model
   i; NULL past the end. */
const char *kt_zoo_name(int i);
const char *kt_zoo_params(int i);
const char *kt_zoo_about(int i);

#ifdef __cplusplus
}
#endif
#endif /* KT_TILING_H */

/* ======================================================================= */
/*                              IMPLEMENTATION                             */
/* ======================================================================= */
#ifdef KT_IMPLEMENTATION
#ifndef KT_TILING_IMPLEMENTED
#define KT_TILING_IMPLEMENTED

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(KT_MALLOC) && defined(KT_REALLOC) && defined(KT_FREE)
/* all three given */
#elif !defined(KT_MALLOC) && !defined(KT_REALLOC) && !defined(KT_FREE)
#include <stdlib.h>
#define KT_MALLOC(n) malloc(n)
#define KT_REALLOC(p, n) realloc(p, n)
#define KT_FREE(p) free(p)
#else
#error "ktile: define all of KT_MALLOC, KT_REALLOC and KT_FREE, or none"
#endif
#ifndef KT_ASSERT
#include <assert.h>
#define KT_ASSERT(x) assert(x)
#endif
/* The clock every time budget reads (kt_plan_search's search_seconds,
   MCMC's and the swap search's budgets): a program with threads of its
   own may want wall time, a test a clock it steps itself. */
#ifndef KT_CLOCK
#define KT_CLOCK() ((double)clock() / CLOCKS_PER_SEC)
#endif

/* ------------------------------------------------------------------ errors */

void kt_free(void *p) { KT_FREE(p); }

const char *kt_status_string(kt_status s) {
    switch (s) {
    case KT_OK: return "ok";
    case KT_ERR_INVALID: return "invalid argument";
    case KT_ERR_PARSE: return "parse error";
    case KT_ERR_SHAPE: return "shape error";
    case KT_ERR_GRAPH: return "graph error";
    case KT_ERR_IO: return "i/o error";
    case KT_ERR_NOMEM: return "out of memory";
    case KT_ERR_LIMIT: return "limit exceeded";
    case KT_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

/* Every failure goes through here so the message and status always agree. */
static kt_status kt__fail(kt_error *err, kt_status s, int line,
                          const char *fmt, ...) {
    if (err) {
        va_list ap;
        int n = 0;
        err->status = s;
        err->line = line;
        if (line > 0)
            n = snprintf(err->message, sizeof err->message, "line %d: ", line);
        va_start(ap, fmt);
        vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return s;
}

/* A failure in a named text (a file, or a spec): "NAME: line N: ...", the
   name first as a compiler puts it (no line: "NAME: ..."); err->line is
   the line. */
static kt_status kt__fail_named(kt_error *err, kt_status s, const char *name,
                                int line, const char *fmt, ...) {
    if (err) {
        va_list ap;
        int n;
        err->status = s;
        err->line = line;
        n = line > 0 ? snprintf(err->message, sizeof err->message,
                                "%.200s: line %d: ", name, line)
                     : snprintf(err->message, sizeof err->message, "%.200s: ",
                                name);
        if (n < 0 || (size_t)n >= sizeof err->message) n = 0;
        va_start(ap, fmt);
        vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return s;
}

/* An error from parsing a file's text, named after the file: "line N:
   ..." becomes "PATH: line N: ...". */
static void kt__error_in_file(kt_error *err, const char *path) {
    char msg[sizeof err->message];
    const char *rest = msg;
    if (!err) return;
    memcpy(msg, err->message, sizeof msg);
    msg[sizeof msg - 1] = '\0';
    if (err->line > 0 && strncmp(msg, "line ", 5) == 0 && strstr(msg, ": "))
        rest = strstr(msg, ": ") + 2; /* kt__fail_named puts the line back */
    (void)kt__fail_named(err, err->status, path, err->line, "%s", rest);
}

static void kt__ok(kt_error *err) {
    if (err) {
        err->status = KT_OK;
        err->line = 0;
        err->message[0] = '\0';
    }
}

static void *kt__calloc(size_t count, size_t size) {
    void *p;
    if (count == 0 || size == 0) count = size = 1;
    if (count > SIZE_MAX / size) return NULL;
    p = KT_MALLOC(count * size);
    if (p) memset(p, 0, count * size);
    return p;
}

/* ----------------------------------------------------------- tiling algebra */

int64_t kt_factors_devices(const kt_factors *f) {
    int64_t n = 1;
    int i;
    for (i = 0; i < f->count; i++) n *= f->k[i];
    return n;
}

kt_status kt_factors_parse(const char *text, kt_factors *out, kt_error *err) {
    const char *p = text;
    int64_t product = 1;
    memset(out, 0, sizeof *out);
    if (!text || !*text)
        return kt__fail(err, KT_ERR_INVALID, 0, "factors: empty list");
    for (;;) {
        char *end;
        long v;
        size_t item = strcspn(p, ","); /* this factor's text */
        if (!isdigit((unsigned char)*p))
            return kt__fail(err, KT_ERR_INVALID, 0,
                            "factors '%s': expected a number at '%s'", text, p);
        v = strtol(p, &end, 10);
        if (end != p + item) /* 1e308, 1.5, 0x10: not read as 1 or 0 */
            return kt__fail(err, KT_ERR_INVALID, 0,
                            "factors '%s': factor '%.*s' is not a whole "
                            "number", text, (int)item, p);
        if (v < 2)
            return kt__fail(err, KT_ERR_INVALID, 0,
                            "factors '%s': the factor %ld is below 2 (every "
                            "factor splits a cut into 2 or more groups)",
                            text, v);
        if (v > KT_MAX_DEVICES || end - p > 9)
            return kt__fail(err, KT_ERR_INVALID, 0,
                            "factors '%s': factor %.*s exceeds %d devices",
                            text, (int)(end - p), p, KT_MAX_DEVICES);
        if (out->count == KT_MAX_CUTS)
            return kt__fail(err, KT_ERR_LIMIT, 0,
                            "factors '%s': more than %d cuts", text,
                            KT_MAX_CUTS);
        product *= v;
        if (product > KT_MAX_DEVICES)
            return kt__fail(err, KT_ERR_INVALID, 0,
                            "factors '%s': more than %d devices", text,
                            KT_MAX_DEVICES);
        out->k[out->count++] = (int)v;
        p = end; /* at the comma or the end (checked above) */
        if (*p == '\0') break;
        p++;
    }
    kt__ok(err);
    return KT_OK;
}

/* Factors filled in by hand (or a plan's, read from anywhere) index
   fixed arrays by their count and size tables by their product, so both
   are bounded before anything reads them. */
kt_status kt_factors_check(const kt_factors *f, kt_error *err) {
    int64_t product = 1;
    int i;
    if (!f) return kt__fail(err, KT_ERR_INVALID, 0, "no factors (NULL)");
    if (f->count < 0 || f->count > KT_MAX_CUTS)
        return kt__fail(err, KT_ERR_INVALID, 0, "factors: %d cuts; from 0 "
                        "to %d allowed", f->count, KT_MAX_CUTS);
    for (i = 0; i < f->count; i++) {
        if (f->k[i] < 2 || f->k[i] > KT_MAX_DEVICES)
            return kt__fail(err, KT_ERR_INVALID, 0, "factors: cut %d's "
                            "factor %d must be from 2 to %d", i + 1, f->k[i],
                            KT_MAX_DEVICES);
        product *= f->k[i];
        if (product > KT_MAX_DEVICES)
            return kt__fail(err, KT_ERR_INVALID, 0, "factors: more than %d "
                            "devices by cut %d", KT_MAX_DEVICES, i + 1);
    }
    kt__ok(err);
    return KT_OK;
}

/* Appends n's prime factors to out, largest first (Tofu 5.2: the most
   expensive cut is the one made across the fewest, biggest groups).
   KT_ERR_LIMIT past KT_MAX_CUTS cuts in all. */
static kt_status kt__append_prime_factors(int64_t n, kt_factors *out,
                                          kt_error *err) {
    int64_t p, primes[64];
    int np = 0, i;
    for (p = 2; p * p <= n; p++)
        while (n % p == 0) { primes[np++] = p; n /= p; }
    if (n > 1) primes[np++] = n;
    if (out->count + np > KT_MAX_CUTS)
        return kt__fail(err, KT_ERR_LIMIT, 0,
                        "%d prime factors exceed KT_MAX_CUTS (%d)",
                        out->count + np, KT_MAX_CUTS);
    for (i = 0; i < np; i++) out->k[out->count++] = (int)primes[np - 1 - i];
    return KT_OK;
}

kt_status kt_factors_default(int64_t n, kt_factors *out, kt_error *err) {
    kt_status s;
    memset(out, 0, sizeof *out);
    if (n < 1 || n > KT_MAX_DEVICES)
        return kt__fail(err, KT_ERR_INVALID, 0,
                        "device count %lld must be between 1 and %d",
                        (long long)n, KT_MAX_DEVICES);
    if ((s = kt__append_prime_factors(n, out, err)) != KT_OK) {
        memset(out, 0, sizeof *out);
        return s;
    }
    kt__ok(err);
    return KT_OK;
}

void kt_device_coords(const kt_factors *f, int64_t device, int *coords) {
    int i;
    for (i = f->count - 1; i >= 0; i--) {
        coords[i] = (int)(device % f->k[i]);
        device /= f->k[i];
    }
}

int64_t kt_device_index(const kt_factors *f, const int *coords) {
    int64_t d = 0;
    int i;
    for (i = 0; i < f->count; i++) d = d * f->k[i] + coords[i];
    return d;
}

/* floor(p*n/k) without overflowing p*n. */
static int64_t kt__split_point(int64_t n, int k, int p) {
    return (n / k) * p + ((n % k) * p) / k;
}

kt_range kt_split_range(kt_range r, int k, int p) {
    kt_range out;
    int64_t n = r.hi - r.lo;
    if (k < 1 || p < 0 || p >= k) {
        out.lo = out.hi = r.lo;
        return out;
    }
    out.lo = r.lo + kt__split_point(n, k, p);
    out.hi = r.lo + kt__split_point(n, k, p + 1);
    return out;
}

kt_status kt_tiling_parse(const char *text, kt_tiling *out, kt_error *err) {
    const char *p = text;
    memset(out, 0, sizeof *out);
    if (!text || !*text)
        return kt__fail(err, KT_ERR_INVALID, 0, "tiling: empty text");
    if (strcmp(text, "-") == 0) { /* one device: no cuts */
        kt__ok(err);
        return KT_OK;
    }
    for (;;) {
        int code;
        if (out->ncuts == KT_MAX_CUTS)
            return kt__fail(err, KT_ERR_LIMIT, 0,
                            "tiling '%s': more than %d cuts", text,
                            KT_MAX_CUTS);
        if (*p == 'R' || *p == 'P') {
            code = *p == 'R' ? KT_CUT_R : KT_CUT_P;
            p++;
        } else if (*p == 'S' && isdigit((unsigned char)p[1]) &&
                   !(p[1] == '0' && isdigit((unsigned char)p[2]))) {
            char *end;
            long d = strtol(p + 1, &end, 10);
            if (d >= KT_MAX_DIMS) /* quoted as written: d may be clamped */
                return kt__fail(err, KT_ERR_INVALID, 0,
                                "tiling '%s': S%.*s names dimension %.*s, "
                                "and no tensor has more than %d "
                                "(KT_MAX_DIMS)", text, (int)(end - p - 1),
                                p + 1, (int)(end - p - 1), p + 1,
                                KT_MAX_DIMS);
            code = (int)d;
            p = end;
        } else {
            return kt__fail(err, KT_ERR_INVALID, 0,
                            "tiling '%s': expected S<dim>, R or P at '%s' "
                            "(cuts are joined by dots, e.g. S0.R)", text, p);
        }
        out->cut[out->ncuts++] = (signed char)code;
        if (*p == '\0') break;
        if (*p != '.')
            return kt__fail(err, KT_ERR_INVALID, 0,
                            "tiling '%s': expected '.' between cuts at '%s'",
                            text, p);
        p++;
    }
    kt__ok(err);
    return KT_OK;
}

int kt_tiling_format(const kt_tiling *t, char *buf, size_t cap) {
    char tmp[8 * KT_MAX_CUTS + 8];
    size_t n = 0;
    /* a hand-filled count past the array prints what the array holds (the
       checks that format it for a message refuse it) */
    int i, ncuts = t->ncuts < 0 ? 0 : t->ncuts;
    if (ncuts > KT_MAX_CUTS) ncuts = KT_MAX_CUTS;
    for (i = 0; i < ncuts; i++) {
        if (i) tmp[n++] = '.';
        if (t->cut[i] == KT_CUT_R) tmp[n++] = 'R';
        else if (t->cut[i] == KT_CUT_P) tmp[n++] = 'P';
        else if (t->cut[i] < 0) tmp[n++] = '?';
        else n += (size_t)snprintf(tmp + n, sizeof tmp - n, "S%d", t->cut[i]);
    }
    if (ncuts == 0) tmp[n++] = '-'; /* one device: nothing is cut */
    tmp[n] = '\0';
    if (cap) snprintf(buf, cap, "%s", tmp);
    return (int)n;
}

kt_status kt_tiling_check(const kt_tiling *t, const char *name, int rank,
                          const int64_t *shape, const kt_factors *f,
                          int allow_partial, kt_error *err) {
    int64_t parts[KT_MAX_DIMS];
    char text[8 * KT_MAX_CUTS + 8];
    int i;
    const char *who = name ? name : "tensor";
    text[0] = '\0';
    if (rank < 0 || rank > KT_MAX_DIMS)
        return kt__fail(err, KT_ERR_INVALID, 0, "%s: rank %d is outside "
                        "0..%d", who, rank, KT_MAX_DIMS);
    if (f->count < 0 || f->count > KT_MAX_CUTS)
        return kt__fail(err, KT_ERR_INVALID, 0, "%s: %d cut factors, outside "
                        "0..%d", who, f->count, KT_MAX_CUTS);
    /* the tiling's text only for a message: formatting it on every check
       took a tenth of an MCMC proposal's instructions (a plan check) */
    if (t->ncuts != f->count) {
        kt_tiling_format(t, text, sizeof text);
        return kt__fail(err, KT_ERR_INVALID, 0,
                        "%s: tiling %s has %d cut%s but there %s %d "
                        "factor%s", who, text, t->ncuts,
                        t->ncuts == 1 ? "" : "s", f->count == 1 ? "is" : "are",
                        f->count, f->count == 1 ? "" : "s");
    }
    for (i = 0; i < rank; i++) parts[i] = 1;
    for (i = 0; i < t->ncuts; i++) {
        int c = t->cut[i];
        if (c < KT_CUT_P) {
            kt_tiling_format(t, text, sizeof text);
            return kt__fail(err, KT_ERR_INVALID, 0, "%s: tiling %s: cut %d "
                            "is %d, not S<dim>, R or P", who, text, i + 1, c);
        }
        if (c == KT_CUT_P && !allow_partial) {
            kt_tiling_format(t, text, sizeof text);
            return kt__fail(err, KT_ERR_INVALID, 0,
                            "%s: tiling %s: P (partial sums) is only a "
                            "source, never a tensor's target tiling", who,
                            text);
        }
        if (c >= 0) {
            if (c >= rank) {
                kt_tiling_format(t, text, sizeof text);
                return kt__fail(err, KT_ERR_INVALID, 0,
                                "%s: tiling %s splits dim %d but the tensor "
                                "has rank %d", who, text, c, rank);
            }
            parts[c] *= f->k[i];
            if (shape && parts[c] > shape[c])
                return kt__fail(err, KT_ERR_SHAPE, 0,
                                "%s: dim %d (%lld) has fewer elements than "
                                "%lld parts", who, c, (long long)shape[c],
                                (long long)parts[c]);
        }
    }
    kt__ok(err);
    return KT_OK;
}

void kt_tiling_device_box(const kt_tiling *t, int rank, const int64_t *shape,
                          const kt_factors *f, int64_t device, kt_box *box,
                          int64_t *partial_class) {
    int coords[KT_MAX_CUTS];
    int64_t pc = 0;
    int i;
    kt_device_coords(f, device, coords);
    if (rank > KT_MAX_DIMS) rank = KT_MAX_DIMS; /* callers check; no overrun */
    for (i = 0; i < rank; i++) {
        box->r[i].lo = 0;
        box->r[i].hi = shape[i];
    }
    /* A later cut on the same dimension splits the block of the earlier one
       (DESIGN.md, balanced splits); P cuts number the partial classes
       mixed-radix in cut order, like devices. */
    for (i = 0; i < t->ncuts; i++) {
        int c = t->cut[i];
        if (c >= 0) box->r[c] = kt_split_range(box->r[c], f->k[i], coords[i]);
        else if (c == KT_CUT_P) pc = pc * f->k[i] + coords[i];
    }
    if (partial_class) *partial_class = pc;
}

kt_flat kt_tiling_flatten(const kt_tiling *t, int rank, const kt_factors *f) {
    kt_flat fl;
    int i;
    memset(&fl, 0, sizeof fl);
    if (rank > KT_MAX_DIMS) rank = KT_MAX_DIMS; /* callers check; no overrun */
    for (i = 0; i < rank; i++) fl.parts[i] = 1;
    fl.replicas = fl.partials = 1;
    for (i = 0; i < t->ncuts && i < f->count; i++) {
        int c = t->cut[i];
        if (c >= 0 && c < rank) fl.parts[c] *= f->k[i];
        else if (c == KT_CUT_R) fl.replicas *= f->k[i];
        else if (c == KT_CUT_P) fl.partials *= f->k[i];
    }
    return fl;
}

int kt_tiling_same_grid(const kt_tiling *a, const kt_tiling *b, int rank,
                        const kt_factors *f) {
    kt_flat x = kt_tiling_flatten(a, rank, f), y = kt_tiling_flatten(b, rank, f);
    int i;
    for (i = 0; i < rank; i++)
        if (x.parts[i] != y.parts[i]) return 0;
    return x.replicas == y.replicas && x.partials == y.partials;
}

/* Choices per cut in enumeration order: S0..S<rank-1>, then R, then P. */
static int kt__cut_choices(int rank, unsigned flags, signed char *choice) {
    int n = 0, d;
    for (d = 0; d < rank; d++) choice[n++] = (signed char)d;
    if (flags & KT_ENUM_REPLICATE) choice[n++] = KT_CUT_R;
    if (flags & KT_ENUM_PARTIAL) choice[n++] = KT_CUT_P;
    return n;
}

kt_status kt_tiling_enumerate(int rank, const int64_t *shape,
                              const kt_factors *f, unsigned flags,
                              kt_tiling *out, size_t cap, size_t *count,
                              kt_error *err) {
    signed char choice[KT_MAX_DIMS + 2];
    int digit[KT_MAX_CUTS];
    int nchoice, i;
    size_t found = 0;
    kt_flat *seen = NULL;
    size_t nseen = 0, seen_cap = 0;
    *count = 0;
    if (rank < 1 || rank > KT_MAX_DIMS)
        return kt__fail(err, KT_ERR_INVALID, 0,
                        "rank %d is outside 1..%d", rank, KT_MAX_DIMS);
    nchoice = kt__cut_choices(rank, flags, choice);
    memset(digit, 0, sizeof digit);
    /* Odometer over choice^m sequences, last cut fastest, so the order is
       lexicographic in the cuts. */
    for (;;) {
        kt_tiling t;
        int keep = 1;
        t.ncuts = f->count;
        for (i = 0; i < f->count; i++) t.cut[i] = choice[digit[i]];
        if (shape) keep = kt_tiling_check(&t, NULL, rank, shape, f, 1, NULL)
                          == KT_OK;
        if (keep && (flags & KT_ENUM_DISTINCT)) {
            kt_flat fl = kt_tiling_flatten(&t, rank, f);
            size_t j;
            for (j = 0; j < nseen && keep; j++)
                if (memcmp(&seen[j], &fl, sizeof fl) == 0) keep = 0;
            if (keep) {
                if (nseen == seen_cap) {
                    size_t nc = seen_cap ? 2 * seen_cap : 64;
                    kt_flat *ns = (kt_flat *)KT_REALLOC(seen, nc * sizeof *ns);
                    if (!ns) {
                        KT_FREE(seen);
                        return kt__fail(err, KT_ERR_NOMEM, 0,
                                        "out of memory enumerating tilings");
                    }
                    seen = ns;
                    seen_cap = nc;
                }
                seen[nseen++] = fl;
            }
        }
        if (keep) {
            if (out && found < cap) out[found] = t;
            found++;
        }
        for (i = f->count - 1; i >= 0; i--) {
            if (++digit[i] < nchoice) break;
            digit[i] = 0;
        }
        if (i < 0) break;
    }
    KT_FREE(seen);
    *count = found;
    kt__ok(err);
    return KT_OK;
}

/* -------------------------------------------------------------- placements */

kt_status kt_placement_init(kt_placement *p, int rank, int64_t ndev,
                            kt_error *err) {
    memset(p, 0, sizeof *p);
    if (rank < 0 || rank > KT_MAX_DIMS || ndev < 1)
        return kt__fail(err, KT_ERR_INVALID, 0,
                        "placement: rank %d or device count %lld out of range",
                        rank, (long long)ndev);
    p->rank = rank;
    p->ndev = ndev;
    p->partials = 1;
    p->box = (kt_box *)kt__calloc((size_t)ndev, sizeof *p->box);
    p->partial_class = (int64_t *)kt__calloc((size_t)ndev, sizeof(int64_t));
    if (!p->box || !p->partial_class) {
        kt_placement_free(p);
        return kt__fail(err, KT_ERR_NOMEM, 0,
                        "out of memory for a placement on %lld devices",
                        (long long)ndev);
    }
    kt__ok(err);
    return KT_OK;
}

void kt_placement_free(kt_placement *p) {
    if (!p) return;
    KT_FREE(p->box);
    KT_FREE(p->partial_class);
    p->box = NULL;
    p->partial_class = NULL;
}

kt_status kt_placement_from_tiling(kt_placement *p, const kt_tiling *t,
                                   int rank, const int64_t *shape,
                                   const kt_factors *f, kt_error *err) {
    int64_t d, ndev = kt_factors_devices(f);
    /* check quietly first: formatting the message costs more than the
       check, and the search calls this in its inner loop */
    kt_status s = kt_tiling_check(t, NULL, rank, shape, f, 1, NULL);
    if (s != KT_OK) return kt_tiling_check(t, NULL, rank, shape, f, 1, err);
    s = kt_placement_init(p, rank, ndev, err);
    if (s != KT_OK) return s;
    p->partials = kt_tiling_flatten(t, rank, f).partials;
    p->grid = 1;
    /* Cut by cut, every box so far becomes k boxes (split, or copied for
       R and P): device order is mixed-radix with cut 1 most significant,
       exactly kt_tiling_device_box's, at O(1) per device and cut. */
    {
        int64_t n = 1, i, j;
        int c, k;
        for (d = 0; d < rank; d++) {
            p->box[0].r[d].lo = 0;
            p->box[0].r[d].hi = shape[d];
        }
        p->partial_class[0] = 0;
        for (c = 0; c < f->count; c++) {
            k = f->k[c];
            for (i = n - 1; i >= 0; i--) /* backwards: expand in place */
                for (j = k - 1; j >= 0; j--) {
                    kt_box b = p->box[i];
                    int64_t pc = p->partial_class[i];
                    if (t->cut[c] >= 0)
                        b.r[t->cut[c]] = kt_split_range(b.r[t->cut[c]], k,
                                                        (int)j);
                    else if (t->cut[c] == KT_CUT_P)
                        pc = pc * k + j;
                    p->box[i * k + j] = b;
                    p->partial_class[i * k + j] = pc;
                }
            n *= k;
        }
    }
    return KT_OK;
}

/* ------------------------------------------------------------------- cost */

/* Coordinate compression (DESIGN.md "Conversion cost"): along each
   dimension the boundaries of every source and target box cut the tensor
   into intervals; the cells of that grid are uniform -- every element of a
   cell is held and needed by the same devices -- so the per-element rule is
   applied once per cell and weighted by its volume. */
typedef struct kt__grid {
    int rank;
    int64_t *cut[KT_MAX_DIMS]; /* sorted distinct boundaries per dim */
    int ncut[KT_MAX_DIMS];
    int64_t stride[KT_MAX_DIMS];
    int64_t ncells;
} kt__grid;


static void kt__grid_free(kt__grid *g) {
    int d;
    for (d = 0; d < g->rank; d++) KT_FREE(g->cut[d]);
}

static kt_status kt__grid_build(kt__grid *g, int rank, const int64_t *shape,
                                const kt_placement *a, const kt_placement *b,
                                kt_error *err) {
    int d;
    memset(g, 0, sizeof *g);
    g->rank = rank;
    g->ncells = 1;
    for (d = rank - 1; d >= 0; d--) {
        size_t m = 0, i;
        int64_t dev, *c = (int64_t *)kt__calloc(
            (size_t)(a->ndev + b->ndev) * 2 + 2, sizeof(int64_t));
        if (!c) {
            kt__grid_free(g);
            return kt__fail(err, KT_ERR_NOMEM, 0,
                            "out of memory compressing coordinates");
        }
        g->cut[d] = c;
        c[m++] = 0;
        c[m++] = shape[d];
        /* Boxes are clipped to the tensor: what lies outside (padding) is
           neither held nor sent.  Devices share few distinct boundaries, so
           each is inserted into the sorted distinct list directly. */
        for (i = 0; i < 2; i++) {
            const kt_placement *pl = i ? b : a;
            for (dev = 0; dev < pl->ndev; dev++) {
                int64_t x[2];
                int e;
                x[0] = pl->box[dev].r[d].lo;
                x[1] = pl->box[dev].r[d].hi;
                for (e = 0; e < 2; e++) {
                    size_t lo = 0, hi = m;
                    if (x[e] <= 0 || x[e] >= shape[d]) continue;
                    while (lo < hi) {
                        size_t mid = (lo + hi) / 2;
                        if (c[mid] < x[e]) lo = mid + 1;
                        else hi = mid;
                    }
                    if (lo < m && c[lo] == x[e]) continue;
                    memmove(c + lo + 1, c + lo, (m - lo) * sizeof *c);
                    c[lo] = x[e];
                    m++;
                }
            }
        }

        g->ncut[d] = (int)m;
        g->stride[d] = g->ncells;
        g->ncells *= (int64_t)(m - 1);
    }
    return KT_OK;
}

/* Index of the first boundary >= x (x is always a boundary or outside). */
static int kt__grid_find(const kt__grid *g, int d, int64_t x) {
    int lo = 0, hi = g->ncut[d] - 1;
    if (x <= g->cut[d][0]) return 0;
    if (x >= g->cut[d][hi]) return hi;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (g->cut[d][mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The cell-index ranges [first, last) per dimension a box covers; 0 when
   the box misses the tensor. */
static int kt__grid_span(const kt__grid *g, const kt_box *box, int *first,
                         int *last) {
    int d;
    for (d = 0; d < g->rank; d++) {
        first[d] = kt__grid_find(g, d, box->r[d].lo);
        last[d] = kt__grid_find(g, d, box->r[d].hi);
        if (first[d] >= last[d]) return 0;
    }
    return 1;
}

static int64_t kt__cell_volume(const kt__grid *g, int64_t cell) {
    int64_t v = 1;
    int d;
    for (d = 0; d < g->rank; d++) {
        int i = (int)((cell / g->stride[d]) % (g->ncut[d] - 1));
        v *= g->cut[d][i + 1] - g->cut[d][i];
    }
    return v;
}

/* Walks the cells of a span in row-major order. */
typedef struct kt__span_iter {
    int first[KT_MAX_DIMS], last[KT_MAX_DIMS], at[KT_MAX_DIMS];
    int64_t cell;
    int done;
} kt__span_iter;

static void kt__span_locate(kt__span_iter *it, const kt__grid *g) {
    int d;
    it->cell = 0;
    for (d = 0; d < g->rank; d++) it->cell += it->at[d] * g->stride[d];
}

static void kt__span_begin(kt__span_iter *it, const kt__grid *g,
                           const int *first, const int *last) {
    int d;
    it->done = 0;
    for (d = 0; d < g->rank; d++) {
        it->first[d] = it->at[d] = first[d];
        it->last[d] = last[d];
    }
    kt__span_locate(it, g);
}

static void kt__span_next(kt__span_iter *it, const kt__grid *g) {
    int d;
    for (d = g->rank - 1; d >= 0; d--) {
        if (++it->at[d] < it->last[d]) break;
        it->at[d] = it->first[d];
    }
    if (d < 0) it->done = 1;
    else kt__span_locate(it, g);
}

static int kt__span_contains(const kt__grid *g, const int *first,
                             const int *last, int64_t cell) {
    int d;
    for (d = 0; d < g->rank; d++) {
        int i = (int)((cell / g->stride[d]) % (g->ncut[d] - 1));
        if (i < first[d] || i >= last[d]) return 0;
    }
    return 1;
}

static kt_status kt__check_placement(const kt_placement *p, int rank,
                                     const char *role, kt_error *err) {
    if (!p || !p->box || p->rank != rank)
        return kt__fail(err, KT_ERR_INVALID, 0,
                        "conversion cost: %s placement has rank %d, the "
                        "tensor %d", role, p ? p->rank : -1, rank);
    if (p->partials < 1 || p->partials > p->ndev)
        return kt__fail(err, KT_ERR_INVALID, 0,
                        "conversion cost: %s placement has %lld partial "
                        "classes on %lld device%s (1 to the device count: "
                        "every device holds one class)", role,
                        (long long)p->partials, (long long)p->ndev,
                        p->ndev == 1 ? "" : "s");
    if (p->partials > 1) {
        int64_t d;
        if (!p->partial_class)
            return kt__fail(err, KT_ERR_INVALID, 0, "conversion cost: %s "
                            "placement has partial sums and no classes",
                            role);
        for (d = 0; d < p->ndev; d++)
            if (p->partial_class[d] < 0 ||
                p->partial_class[d] >= p->partials)
                return kt__fail(err, KT_ERR_INVALID, 0,
                                "conversion cost: %s placement puts device "
                                "%lld in partial class %lld of %lld", role,
                                (long long)d, (long long)p->partial_class[d],
                                (long long)p->partials);
    }
    return KT_OK;
}

/* How many of a cell's elements root r of n reduces: the cell is split
   along its longest dimension into n balanced blocks (sched.h's kt_lower
   sends exactly these blocks). */
static int64_t kt__root_share(const kt__grid *g, int64_t cell, int64_t n,
                              int64_t r) {
    kt_range len[KT_MAX_DIMS];
    int64_t share = 1;
    int d, longest = 0;
    for (d = 0; d < g->rank; d++) {
        int i = (int)((cell / g->stride[d]) % (g->ncut[d] - 1));
        len[d].lo = g->cut[d][i];
        len[d].hi = g->cut[d][i + 1];
        if (len[d].hi - len[d].lo > len[longest].hi - len[longest].lo)
            longest = d;
    }
    len[longest] = kt_split_range(len[longest], (int)n, (int)r);
    for (d = 0; d < g->rank; d++) share *= len[d].hi - len[d].lo;
    return share;
}

/* Who receives what.  Without partial sums a device receives what it
   needs and does not hold.  With partial sums the roots of a cell are the
   devices in T and H (or all of H when no device of T holds a partial);
   root j of n reduces block j of the cell (split along its longest
   dimension, as a ring reduce-scatter shares the work): it receives the
   q-1 other partials of that block, then every other device of T receives
   the block from it. */
static void kt__attribute_received(const kt__grid *g, const kt_placement *from,
                                   const kt_placement *to, const int64_t *need,
                                   const int64_t *both, const int64_t *held,
                                   int64_t *roots_seen, int elem_bytes,
                                   int64_t *received) {
    int64_t q = from->partials, dev;
    for (dev = 0; dev < to->ndev; dev++) {
        int tf[KT_MAX_DIMS], tl[KT_MAX_DIMS], hf[KT_MAX_DIMS], hl[KT_MAX_DIMS];
        int needs = kt__grid_span(g, &to->box[dev], tf, tl);
        int holds = kt__grid_span(g, &from->box[dev], hf, hl);
        int64_t got = 0;
        kt__span_iter it;
        if (needs)
        for (kt__span_begin(&it, g, tf, tl); !it.done; kt__span_next(&it, g)) {
            int64_t c = it.cell;
            int64_t vol = kt__cell_volume(g, c);
            int in_h = holds && kt__span_contains(g, hf, hl, c);
            if (!in_h) {
                got += vol;
                if (q > 1 && held[c] == 0)
                    /* no device holds a partial (a hand-made source with a
                       gap): the needers share the q-1 reduction terms */
                    got += (q - 1) *
                           kt__root_share(g, c, need[c], roots_seen[c]++);
            } else if (q > 1) {
                /* in T and H: one of the both[c] roots */
                int64_t part = kt__root_share(g, c, both[c], roots_seen[c]++);
                got += (q - 1) * part + (vol - part);
            }
        }
        /* A holder outside T is a root only where T holds nothing. */
        if (holds && q > 1)
        for (kt__span_begin(&it, g, hf, hl); !it.done; kt__span_next(&it, g)) {
            int64_t c = it.cell;
            if (need[c] > 0 && both[c] == 0)
                got += (q - 1) *
                       kt__root_share(g, c, held[c], roots_seen[c]++);
        }
        received[dev] = got * elem_bytes;
    }
}

/* Clips a box to the tensor; 0 when nothing is left. */
static int kt__clip_box(kt_box *b, int rank, const int64_t *shape) {
    int d;
    for (d = 0; d < rank; d++) {
        if (b->r[d].lo < 0) b->r[d].lo = 0;
        if (b->r[d].hi > shape[d]) b->r[d].hi = shape[d];
        if (b->r[d].hi <= b->r[d].lo) return 0;
    }
    return 1;
}

static int kt__cmp_box(const void *x, const void *y) {
    const kt_range *a = ((const kt_box *)x)->r, *b = ((const kt_box *)y)->r;
    int d;
    for (d = 0; d < KT_MAX_DIMS; d++) {
        if (a[d].lo != b[d].lo) return a[d].lo < b[d].lo ? -1 : 1;
        if (a[d].hi != b[d].hi) return a[d].hi < b[d].hi ? -1 : 1;
    }
    return 0;
}

/* Elements covered by at least one of n boxes (clipped, in place):
   duplicates are dropped first -- replicas and partial classes repeat the
   same boxes -- and the rest are counted on their compressed grid.
   -1 when out of memory. */
static int64_t kt__union_volume(kt_box *box, int64_t n, int rank,
                                const int64_t *shape, int disjoint) {
    kt_placement pa, pb;
    kt__grid g;
    unsigned char *covered;
    int64_t i, m = 0, total = 0, cell;
    for (i = 0; i < n; i++) {
        int d;
        if (!kt__clip_box(&box[i], rank, shape)) continue;
        for (d = rank; d < KT_MAX_DIMS; d++) box[i].r[d].lo = box[i].r[d].hi = 0;
        box[m++] = box[i];
    }
    if (m == 0) return 0;
    qsort(box, (size_t)m, sizeof *box, kt__cmp_box);
    for (i = 1, n = 1; i < m; i++)
        if (kt__cmp_box(&box[i], &box[n - 1]) != 0) box[n++] = box[i];
    m = n;
    if (m == 1 || disjoint) {
        /* distinct boxes that cannot overlap: their volumes add up */
        for (i = 0; i < m; i++) {
            int64_t v = 1;
            int d;
            for (d = 0; d < rank; d++) v *= box[i].r[d].hi - box[i].r[d].lo;
            total += v;
        }
        return total;
    }
    memset(&pa, 0, sizeof pa);
    pa.rank = rank;
    pa.ndev = m;
    pa.box = box;
    pb = pa;
    pb.ndev = 0;
    if (kt__grid_build(&g, rank, shape, &pa, &pb, NULL) != KT_OK) return -1;
    covered = (unsigned char *)kt__calloc((size_t)g.ncells, 1);
    if (!covered) {
        kt__grid_free(&g);
        return -1;
    }
    for (i = 0; i < m; i++) {
        int f[KT_MAX_DIMS], l[KT_MAX_DIMS];
        kt__span_iter it;
        if (!kt__grid_span(&g, &box[i], f, l)) continue;
        for (kt__span_begin(&it, &g, f, l); !it.done; kt__span_next(&it, &g))
            covered[it.cell] = 1;
    }
    for (cell = 0; cell < g.ncells; cell++)
        if (covered[cell]) total += kt__cell_volume(&g, cell);
    KT_FREE(covered);
    kt__grid_free(&g);
    return total;
}

/* Partial sums, total only: summing (q-1) + |T| - [T and H meet] over the
   needed elements is (q-1) |union of needs| + sum of need volumes -
   |union of (need and hold)|, per device boxes and two union volumes. */
static kt_status kt__partial_total(int rank, const int64_t *shape,
                                   const kt_placement *from,
                                   const kt_placement *to, int64_t *total,
                                   kt_error *err) {
    int64_t dev, q = from->partials, sum = 0, u_need, u_both;
    kt_box *need = (kt_box *)kt__calloc((size_t)to->ndev, sizeof(kt_box));
    kt_box *both = (kt_box *)kt__calloc((size_t)to->ndev, sizeof(kt_box));
    if (!need || !both) {
        KT_FREE(need);
        KT_FREE(both);
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    }
    for (dev = 0; dev < to->ndev; dev++) {
        int d;
        int64_t v = 1;
        need[dev] = to->box[dev];
        both[dev] = to->box[dev];
        for (d = 0; d < rank; d++) {
            kt_range h = from->box[dev].r[d];
            if (h.lo > both[dev].r[d].lo) both[dev].r[d].lo = h.lo;
            if (h.hi < both[dev].r[d].hi) both[dev].r[d].hi = h.hi;
        }
        if (kt__clip_box(&need[dev], rank, shape))
            for (d = 0; d < rank; d++) v *= need[dev].r[d].hi - need[dev].r[d].lo;
        else
            v = 0;
        sum += v;
    }
    /* Intersections of two grids' tiles are equal or disjoint too. */
    u_need = kt__union_volume(need, to->ndev, rank, shape, to->grid);
    u_both = kt__union_volume(both, to->ndev, rank, shape,
                              to->grid && from->grid);
    KT_FREE(need);
    KT_FREE(both);
    if (u_need < 0 || u_both < 0)
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    *total = (q - 1) * u_need + sum - u_both;
    return KT_OK;
}

/* kt_conversion_cost's arguments: two placements of one tensor on the
   same devices, a target without partial sums, a positive element size
   and extents, and a worst case (q - 1 + ndev per element) whose bytes
   stay inside int64. */
static kt_status kt__conversion_check(int rank, const int64_t *shape,
                                      int elem_bytes,
                                      const kt_placement *from,
                                      const kt_placement *to, kt_error *err) {
    double worst;
    int d;
    kt_status s;
    if ((s = kt__check_placement(from, rank, "source", err)) != KT_OK) return s;
    if ((s = kt__check_placement(to, rank, "target", err)) != KT_OK) return s;
    if (from->ndev != to->ndev)
        return kt__fail(err, KT_ERR_INVALID, 0,
                        "conversion cost: source on %lld devices, target on "
                        "%lld", (long long)from->ndev, (long long)to->ndev);
    if (to->partials != 1)
        return kt__fail(err, KT_ERR_INVALID, 0,
                        "conversion cost: the target cannot hold partial "
                        "sums");
    if (elem_bytes < 1)
        return kt__fail(err, KT_ERR_INVALID, 0,
                        "conversion cost: element size %d", elem_bytes);
    worst = (double)elem_bytes * (double)(from->partials + to->ndev);
    for (d = 0; d < rank; d++) {
        if (shape[d] < 1)
            return kt__fail(err, KT_ERR_SHAPE, 0,
                            "conversion cost: dim %d has extent %lld", d,
                            (long long)shape[d]);
        worst *= (double)shape[d];
    }
    if (worst > (double)(INT64_C(1) << 60))
        return kt__fail(err, KT_ERR_LIMIT, 0, "conversion cost: up to %.3g "
                        "bytes could move, beyond 2^60", worst);
    return KT_OK;
}

/* Without partial sums, summing |T \ H| over the elements is summing
   over the devices what each needs and does not hold: two box volumes
   per device, no grid needed.  Returns the elements moved; received
   (when not NULL) gets each device's bytes. */
static int64_t kt__copy_cost(int rank, const int64_t *shape, int elem_bytes,
                             const kt_placement *from,
                             const kt_placement *to, int64_t *received) {
    int64_t total = 0, dev;
    int d;
    for (dev = 0; dev < to->ndev; dev++) {
        int64_t need = 1, both = 1;
        for (d = 0; d < rank; d++) {
            kt_range t = to->box[dev].r[d], h = from->box[dev].r[d];
            int64_t tlo = t.lo > 0 ? t.lo : 0;
            int64_t thi = t.hi < shape[d] ? t.hi : shape[d];
            int64_t blo = h.lo > tlo ? h.lo : tlo;
            int64_t bhi = h.hi < thi ? h.hi : thi;
            need *= thi > tlo ? thi - tlo : 0;
            both *= bhi > blo ? bhi - blo : 0;
        }
        total += need - both;
        if (received) received[dev] = (need - both) * elem_bytes;
    }
    return total;
}

/* Partial sums with each device's received bytes: the DESIGN.md rule
   cell by cell on the grid of both placements' tile boundaries (every
   element of a cell is in the same tiles).  Per cell: |T| (need),
   |T and H| (both), |H| (held), and how many of its reduction roots
   have been met so far (roots_seen, for kt__attribute_received).
   *total gets the elements moved. */
static kt_status kt__grid_cost(int rank, const int64_t *shape,
                               int elem_bytes, const kt_placement *from,
                               const kt_placement *to, int64_t *total,
                               int64_t *received, kt_error *err) {
    kt__grid g;
    int64_t *need = NULL, *both = NULL, *held = NULL, *roots_seen = NULL;
    int64_t dev, cell, q = from->partials;
    int ok = 1;
    kt_status s = kt__grid_build(&g, rank, shape, from, to, err);
    if (s != KT_OK) return s;
    need = (int64_t *)kt__calloc((size_t)g.ncells, sizeof(int64_t));
    both = (int64_t *)kt__calloc((size_t)g.ncells, sizeof(int64_t));
    held = (int64_t *)kt__calloc((size_t)g.ncells, sizeof(int64_t));
    roots_seen = (int64_t *)kt__calloc((size_t)g.ncells, sizeof(int64_t));
    if (!need || !both || !held || !roots_seen) {
        ok = 0;
        goto done;
    }
    for (dev = 0; dev < to->ndev; dev++) {
        int tf[KT_MAX_DIMS], tl[KT_MAX_DIMS], hf[KT_MAX_DIMS], hl[KT_MAX_DIMS];
        int holds = kt__grid_span(&g, &from->box[dev], hf, hl);
        kt__span_iter it;
        if (holds)
            for (kt__span_begin(&it, &g, hf, hl); !it.done;
                 kt__span_next(&it, &g))
                held[it.cell]++;
        if (!kt__grid_span(&g, &to->box[dev], tf, tl)) continue;
        for (kt__span_begin(&it, &g, tf, tl); !it.done;
             kt__span_next(&it, &g)) {
            need[it.cell]++;
            if (holds && kt__span_contains(&g, hf, hl, it.cell))
                both[it.cell]++;
        }
    }
    /* each needed cell, from DESIGN.md's q >= 2 rule (reduce, then
       deliver): q - 1 partials sent to one root, then the sum to every
       device that needs it, less one when a needing device holds a
       partial and can be the root */
    *total = 0;
    for (cell = 0; cell < g.ncells; cell++)
        if (need[cell] > 0)
            *total += ((q - 1) + need[cell] - (both[cell] > 0)) *
                      kt__cell_volume(&g, cell);
    kt__attribute_received(&g, from, to, need, both, held, roots_seen,
                           elem_bytes, received);
done:
    KT_FREE(need);
    KT_FREE(both);
    KT_FREE(held);
    KT_FREE(roots_seen);
    kt__grid_free(&g);
    if (!ok)
        return kt__fail(err, KT_ERR_NOMEM, 0,
                        "out of memory: %lld cells in the conversion grid",
                        (long long)g.ncells);
    return KT_OK;
}

kt_status kt_conversion_cost(int rank, const int64_t *shape, int elem_bytes,
                             const kt_placement *from, const kt_placement *to,
                             int64_t *bytes, int64_t *received, kt_error *err) {
    int64_t total = 0, dev;
    kt_status s;
    *bytes = 0;
    s = kt__conversion_check(rank, shape, elem_bytes, from, to, err);
    if (s != KT_OK) return s;
    if (received)
        for (dev = 0; dev < to->ndev; dev++) received[dev] = 0;
    if (from->partials == 1)
        total = kt__copy_cost(rank, shape, elem_bytes, from, to, received);
    else if (!received)
        s = kt__partial_total(rank, shape, from, to, &total, err);
    else
        s = kt__grid_cost(rank, shape, elem_bytes, from, to, &total,
                          received, err);
    if (s != KT_OK) return s;
    *bytes = total * elem_bytes;
    kt__ok(err);
    return KT_OK;
}

kt_status kt_tiling_conversion_cost(int rank, const int64_t *shape,
                                    int elem_bytes, const kt_factors *f,
                                    const kt_tiling *from, const kt_tiling *to,
                                    int64_t *bytes, int64_t *received,
                                    kt_error *err) {
    kt_placement a, b;
    kt_status s;
    if (!bytes) return kt__fail(err, KT_ERR_INVALID, 0, "no bytes (NULL)");
    *bytes = 0;
    if ((s = kt_tiling_check(from, "source", rank, shape, f, 1, err)) != KT_OK)
        return s;
    if ((s = kt_tiling_check(to, "target", rank, shape, f, 0, err)) != KT_OK)
        return s;
    if ((s = kt_placement_from_tiling(&a, from, rank, shape, f, err)) != KT_OK)
        return s;
    if ((s = kt_placement_from_tiling(&b, to, rank, shape, f, err)) != KT_OK) {
        kt_placement_free(&a);
        return s;
    }
    s = kt_conversion_cost(rank, shape, elem_bytes, &a, &b, bytes, received,
                           err);
    kt_placement_free(&a);
    kt_placement_free(&b);
    return s;
}

/* ------------------------------------------------------------------ graph */

struct kt_graph {
    kt_tensor *tensor;
    int ntensor, cap_tensor;
    int *index;      /* open-addressing name -> tensor, cap_index slots */
    int cap_index;
    kt_op *op;
    int nop, cap_op;
    int loss;
    int finalized;   /* kt_graph_finalize succeeded since the last change */
};

kt_status kt_graph_create(kt_graph **out, kt_error *err) {
    kt_graph *g;
    if (!out)
        return kt__fail(err, KT_ERR_INVALID, 0, "kt_graph_create: nowhere to "
                        "put the graph (NULL)");
    *out = NULL;
    g = (kt_graph *)kt__calloc(1, sizeof *g);
    if (!g) return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory for a graph");
    g->loss = -1;
    *out = g;
    kt__ok(err);
    return KT_OK;
}

static void kt__op_free(kt_op *op) {
    KT_FREE(op->text);
    KT_FREE(op->access);
    KT_FREE(op->expr);
    op->text = NULL;
    op->access = NULL;
    op->expr = NULL;
}

void kt_graph_destroy(kt_graph *g) {
    int i;
    if (!g) return;
    for (i = 0; i < g->nop; i++) kt__op_free(&g->op[i]);
    KT_FREE(g->op);
    KT_FREE(g->tensor);
    KT_FREE(g->index);
    KT_FREE(g);
}

static size_t kt__name_hash(const char *name) {
    size_t h = 5381;
    while (*name) h = h * 33 + (unsigned char)*name++;
    return h;
}

/* The slot of `name` in an open-addressing table of indices (slot[i] < 0:
   empty; cap a power of two) whose entry k is the name at base + k *
   stride: where it is, or the empty slot where it would go.  The graph's
   tensor index and autodiff's set of names taken share it. */
static size_t kt__name_slot(const int *slot, size_t cap, const char *base,
                            size_t stride, const char *name) {
    size_t i = kt__name_hash(name) & (cap - 1);
    while (slot[i] >= 0 && strcmp(base + (size_t)slot[i] * stride, name) != 0)
        i = (i + 1) & (cap - 1);
    return i;
}

/* The slot of `name` in the graph's tensor index (cap_index > 0). */
static size_t kt__tensor_slot(const kt_graph *g, const char *name) {
    return kt__name_slot(g->index, (size_t)g->cap_index, g->tensor->name,
                         sizeof(kt_tensor), name);
}

int kt_graph_find_tensor(const kt_graph *g, const char *name) {
    if (!g || !name) return -1;
    return g->cap_index ? g->index[kt__tensor_slot(g, name)] : -1;
}

/* Through the tensor index and the producer and updater every tensor
   records, so no index of op names is needed; the final comparison keeps
   a name that only looks like an op's ("x.update" of a tensor updated by
   nothing) from matching. */
int kt_graph_find_op(const kt_graph *g, const char *name) {
    static const char suffix[] = ".update";
    const char *dot = name ? strchr(name, '.') : NULL;
    char base[KT_NAME_MAX];
    int t, o;
    if (!g || !name) return -1;
    if (!dot) {
        t = kt_graph_find_tensor(g, name);
        o = t >= 0 ? g->tensor[t].producer : -1;
    } else {
        size_t n = (size_t)(dot - name);
        if (strcmp(dot, suffix) != 0 || n >= sizeof base) return -1;
        memcpy(base, name, n);
        base[n] = '\0';
        t = kt_graph_find_tensor(g, base);
        o = t >= 0 ? g->tensor[t].updater : -1;
    }
    return o >= 0 && strcmp(g->op[o].name, name) == 0 ? o : -1;
}

/* Keeps the name index at most half full (64 slots, doubled: a power of
   two); 0 when out of memory. */
static int kt__index_tensor(kt_graph *g, int t) {
    if (2 * (g->ntensor + 1) > g->cap_index) {
        int nc = g->cap_index ? 2 * g->cap_index : 64, k;
        int *ni = (int *)KT_MALLOC(sizeof(int) * (size_t)nc);
        if (!ni) return 0;
        for (k = 0; k < nc; k++) ni[k] = -1;
        KT_FREE(g->index);
        g->index = ni;
        g->cap_index = nc;
        for (k = 0; k < g->ntensor; k++)
            if (k != t) g->index[kt__tensor_slot(g, g->tensor[k].name)] = k;
    }
    g->index[kt__tensor_slot(g, g->tensor[t].name)] = t;
    return 1;
}
int kt_graph_tensor_count(const kt_graph *g) { return g ? g->ntensor : 0; }
const kt_tensor *kt_graph_tensor(const kt_graph *g, int i) {
    return (g && i >= 0 && i < g->ntensor) ? &g->tensor[i] : NULL;
}
int kt_graph_op_count(const kt_graph *g) { return g ? g->nop : 0; }
const kt_op *kt_graph_op(const kt_graph *g, int i) {
    return (g && i >= 0 && i < g->nop) ? &g->op[i] : NULL;
}
int kt_graph_loss(const kt_graph *g) { return g ? g->loss : -1; }

/* What every consumer of a graph relies on: ops in a topological order
   and every read tensor produced or a leaf.  kt_graph_finalize checks and
   establishes both (kt_graph_parse, autodiff and the zoo call it); an op
   or tensor added since may break either. */
static kt_status kt__graph_check_final(const kt_graph *g, kt_error *err) {
    if (!g) return kt__fail(err, KT_ERR_INVALID, 0, "no graph (NULL)");
    if (!g->finalized)
        return kt__fail(err, KT_ERR_INVALID, 0, "the graph is not "
                        "finalized: kt_graph_finalize must succeed after "
                        "the last kt_graph_add_op or kt_graph_add_tensor");
    return KT_OK;
}

/* The graph as it was when a kt_graph_parse began, so that a failed
   parse undoes the lines before the bad one (a failed kt_graph_add_op
   changes nothing by itself).  The tensors that existed are copied
   whole: a later line may produce or update one. */
typedef struct kt__graph_mark {
    int ntensor, nop, loss, finalized;
    kt_tensor *tensor;
} kt__graph_mark;

static kt_status kt__graph_mark_set(const kt_graph *g, kt__graph_mark *m,
                                    kt_error *err) {
    m->ntensor = g->ntensor;
    m->nop = g->nop;
    m->loss = g->loss;
    m->finalized = g->finalized;
    m->tensor = (kt_tensor *)KT_MALLOC(((size_t)g->ntensor + 1) *
                                       sizeof(kt_tensor));
    if (!m->tensor)
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory parsing");
    if (g->ntensor)
        memcpy(m->tensor, g->tensor, (size_t)g->ntensor * sizeof(kt_tensor));
    return KT_OK;
}

/* Drops the ops and tensors added since the mark and rebuilds the name
   index from the tensors kept (open addressing cannot delete in place). */
static void kt__graph_rollback(kt_graph *g, const kt__graph_mark *m) {
    int k;
    while (g->nop > m->nop) kt__op_free(&g->op[--g->nop]);
    g->ntensor = m->ntensor;
    if (m->ntensor)
        memcpy(g->tensor, m->tensor, (size_t)m->ntensor * sizeof(kt_tensor));
    for (k = 0; k < g->cap_index; k++) g->index[k] = -1;
    for (k = 0; k < g->ntensor; k++)
        g->index[kt__tensor_slot(g, g->tensor[k].name)] = k;
    g->loss = m->loss;
    g->finalized = m->finalized;
}

static int kt__is_name_start(int c) { return isalpha(c) || c == '_'; }
static int kt__is_name_char(int c) { return isalnum(c) || c == '_'; }

static kt_status kt__check_name(const char *name, int line, kt_error *err) {
    size_t i, n = name ? strlen(name) : 0;
    if (n == 0 || !kt__is_name_start((unsigned char)name[0]))
        return kt__fail(err, KT_ERR_INVALID, line,
                        "'%s' is not a name (a letter or _ first)",
                        name ? name : "");
    for (i = 1; i < n; i++)
        if (!kt__is_name_char((unsigned char)name[i]))
            return kt__fail(err, KT_ERR_INVALID, line,
                            "'%s' is not a name (letters, digits, _)", name);
    if (n >= KT_NAME_MAX)
        return kt__fail(err, KT_ERR_LIMIT, line,
                        "name '%.32s...' is longer than %d characters", name,
                        KT_NAME_MAX - 1);
    return KT_OK;
}

static kt_status kt__add_tensor(kt_graph *g, const char *name, int rank,
                                const int64_t *shape, int elem_bytes,
                                kt_tensor_kind kind, int line, kt_error *err) {
    kt_tensor *t, copy;
    int d, old;
    kt_status s = kt__check_name(name, line, err);
    if (s != KT_OK) return s;
    old = kt_graph_find_tensor(g, name);
    if (old >= 0) {
        if (g->tensor[old].line > 0)
            return kt__fail(err, KT_ERR_GRAPH, line,
                            "duplicate tensor name %s (first defined on line "
                            "%d)", name, g->tensor[old].line);
        return kt__fail(err, KT_ERR_GRAPH, line, "duplicate tensor name %s",
                        name);
    }
    if (rank < 1 || rank > KT_MAX_DIMS)
        return kt__fail(err, KT_ERR_SHAPE, line,
                        "tensor %s: rank %d is outside 1..%d", name, rank,
                        KT_MAX_DIMS);
    if (!shape)
        return kt__fail(err, KT_ERR_INVALID, line, "tensor %s: no shape "
                        "(NULL)", name);
    {
        /* element counts stay far from int64 so every volume is exact
           (byte counts are checked where they are summed) */
        double elements = 1;
        for (d = 0; d < rank; d++) {
            if (shape[d] < 1 || shape[d] > (INT64_C(1) << 40))
                return kt__fail(err, KT_ERR_SHAPE, line,
                                "tensor %s: dim %d has extent %lld (must be "
                                "1..2^40)", name, d, (long long)shape[d]);
            elements *= (double)shape[d];
        }
        if (elements > (double)(INT64_C(1) << 46))
            return kt__fail(err, KT_ERR_LIMIT, line,
                            "tensor %s has %.3g elements, more than 2^46",
                            name, elements);
    }
    if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 &&
        elem_bytes != 8)
        return kt__fail(err, KT_ERR_INVALID, line,
                        "tensor %s: element size %d is not 1, 2, 4 or 8",
                        name, elem_bytes);
    if ((unsigned)kind > (unsigned)KT_OPTSTATE)
        return kt__fail(err, KT_ERR_INVALID, line, "tensor %s: unknown kind",
                        name);
    /* name and shape may point into g->tensor (autodiff passes the loss's
       shape), which growing the array below frees: copy them first */
    snprintf(copy.name, sizeof copy.name, "%s", name);
    for (d = 0; d < rank; d++) copy.shape[d] = shape[d];
    if (g->ntensor == g->cap_tensor) {
        int nc = g->cap_tensor ? 2 * g->cap_tensor : 16;
        kt_tensor *nt =
            (kt_tensor *)KT_REALLOC(g->tensor, (size_t)nc * sizeof *nt);
        if (!nt)
            return kt__fail(err, KT_ERR_NOMEM, line,
                            "out of memory adding tensor %s", copy.name);
        g->tensor = nt;
        g->cap_tensor = nc;
    }
    t = &g->tensor[g->ntensor++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", copy.name);
    t->rank = rank;
    for (d = 0; d < rank; d++) t->shape[d] = copy.shape[d];
    t->elem_bytes = elem_bytes;
    t->kind = kind;
    t->producer = t->updater = t->of = -1;
    t->line = line;
    if (!kt__index_tensor(g, g->ntensor - 1)) {
        g->ntensor--;
        return kt__fail(err, KT_ERR_NOMEM, line,
                        "out of memory adding tensor %s", name);
    }
    g->finalized = 0;
    kt__ok(err);
    return KT_OK;
}

kt_status kt_graph_add_tensor(kt_graph *g, const char *name, int rank,
                              const int64_t *shape, int elem_bytes,
                              kt_tensor_kind kind, kt_error *err) {
    if (!g) return kt__fail(err, KT_ERR_INVALID, 0, "no graph (NULL)");
    return kt__add_tensor(g, name, rank, shape, elem_bytes, kind, 0, err);
}

/* --------------------------------------------- symbolic intervals (Tofu 4.2) */

/* Index expressions are computed as exact affine forms
   sum_v a_v * v + c (Tofu's Figure 4 rules act on the forms term by term:
   I + I', I - I', I * k, I / k), and only then turned into a symbolic
   interval: v ranges over [LO_v, HI_v], so the lower bound takes LO_v
   where a_v > 0 and HI_v where a_v < 0, and the upper bound the opposite.
   Working on the forms keeps x[2*i - i] exact where naive interval
   subtraction would widen it. */
typedef struct kt__affine {
    int64_t coef[KT_MAX_VARS];
    int64_t c;
    int64_t divisor; /* >= 1; a division is the last step */
} kt__affine;

/* Limits that keep every bound evaluation inside int64: |a_v| <= 2^16,
   |c| <= 2^40, extents <= 2^40, at most KT_MAX_VARS terms. */
#define KT__COEF_MAX (INT64_C(1) << 16)
#define KT__CONST_MAX (INT64_C(1) << 40)

static void kt__aff_const(kt__affine *a, int64_t c) {
    memset(a, 0, sizeof *a);
    a->c = c;
    a->divisor = 1;
}

/* Index variable v alone (Tofu's ZV[u_v = 1]). */
static void kt__aff_var(kt__affine *a, int v) {
    kt__aff_const(a, 0);
    a->coef[v] = 1;
}

static int kt__aff_is_const(const kt__affine *a) {
    int v;
    for (v = 0; v < KT_MAX_VARS; v++)
        if (a->coef[v]) return 0;
    return a->divisor == 1;
}

static int kt__aff_in_range(const kt__affine *a) {
    int v;
    if (a->c > KT__CONST_MAX || a->c < -KT__CONST_MAX) return 0;
    for (v = 0; v < KT_MAX_VARS; v++)
        if (a->coef[v] > KT__COEF_MAX || a->coef[v] < -KT__COEF_MAX) return 0;
    return 1;
}

/* a += sign * b; 0 when a coefficient or constant leaves its range. */
static int kt__aff_add(kt__affine *a, const kt__affine *b, int sign) {
    int v;
    for (v = 0; v < KT_MAX_VARS; v++) a->coef[v] += sign * b->coef[v];
    a->c += sign * b->c;
    return kt__aff_in_range(a);
}

/* a *= k, with both already in range, so the product cannot overflow. */
static int kt__aff_scale(kt__affine *a, int64_t k) {
    int v;
    if (k > KT__CONST_MAX || k < -KT__CONST_MAX) return 0;
    for (v = 0; v < KT_MAX_VARS; v++) {
        if (a->coef[v] && (k > KT__COEF_MAX || k < -KT__COEF_MAX)) return 0;
        a->coef[v] *= k;
    }
    if (a->c && (k > KT__COEF_MAX || k < -KT__COEF_MAX) &&
        (a->c > KT__COEF_MAX || a->c < -KT__COEF_MAX))
        return 0;
    a->c *= k;
    return kt__aff_in_range(a);
}

static void kt__sym_from_affine(kt_sym_interval *s, const kt__affine *a) {
    int v;
    memset(s, 0, sizeof *s);
    for (v = 0; v < KT_MAX_VARS; v++) {
        if (a->coef[v] > 0) {
            s->lower.lo_coef[v] = a->coef[v];
            s->upper.hi_coef[v] = a->coef[v];
        } else {
            s->lower.hi_coef[v] = a->coef[v];
            s->upper.lo_coef[v] = a->coef[v];
        }
    }
    s->lower.c = s->upper.c = a->c;
    s->divisor = a->divisor;
}

static int64_t kt__floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

static int64_t kt__bound_eval(const kt_sym_bound *b, int nvars,
                              const kt_range *box, int64_t divisor) {
    int64_t x = b->c;
    int v;
    for (v = 0; v < nvars; v++)
        x += b->lo_coef[v] * box[v].lo + b->hi_coef[v] * (box[v].hi - 1);
    return kt__floor_div(x, divisor);
}

kt_range kt_sym_interval_eval(const kt_sym_interval *s, int nvars,
                              const kt_range *box) {
    kt_range r = {0, 0};
    int v;
    for (v = 0; v < nvars; v++)
        if (box[v].hi <= box[v].lo) return r;
    r.lo = kt__bound_eval(&s->lower, nvars, box, s->divisor);
    r.hi = kt__bound_eval(&s->upper, nvars, box, s->divisor) + 1;
    return r;
}

/* Coefficient of v in the affine index (a*v + ... + c)/divisor that the
   interval came from: the lower bound holds a*LO_v for a > 0 and a*HI_v for
   a < 0. */
static int64_t kt__sym_coef(const kt_sym_interval *s, int v) {
    return s->lower.lo_coef[v] + s->lower.hi_coef[v];
}

/* ------------------------------------------------------------ TDL parsing */

/* Tokens of one statement. */
enum { KT__TOK_END = 0, KT__TOK_NAME, KT__TOK_NUM, KT__TOK_PUNCT };

typedef struct kt__lexer {
    const char *p;
    int tok;
    char name[KT_NAME_MAX];
    double num;
    int num_is_int;
    int punct;
    const char *at; /* start of the current token, for messages */
} kt__lexer;

/* Where an index variable's extent came from, for messages. */
typedef struct kt__extent_src {
    int known;
    char from[KT_NAME_MAX + 32];
} kt__extent_src;

/* Names defined later in a model file, to tell "read before it is defined"
   from "unknown". */
typedef struct kt__later_defs {
    char (*name)[KT_NAME_MAX];
    int *line;
    int count;
} kt__later_defs;

typedef struct kt__parser {
    kt_graph *g;
    kt_op op;
    kt__lexer lx;
    kt_error *err;
    int line;
    int cap_access, cap_expr;
    int in_opaque;
    int depth;       /* atoms being parsed, one inside another */
    int nest_most;   /* the most such levels (KT_MAX_NESTING)            */
    int *node_depth; /* per node of op.expr: its subtree's depth          */
    int depth_most;  /* the deepest tree allowed                          */
    const kt__later_defs *later;
    kt__extent_src src[KT_MAX_VARS];
} kt__parser;

static kt_status kt__perr(kt__parser *ps, kt_status s, const char *fmt, ...) {
    kt_error *err = ps->err;
    if (err) {
        va_list ap;
        int n = 0;
        err->status = s;
        err->line = ps->line;
        if (ps->line > 0)
            n = snprintf(err->message, sizeof err->message, "line %d: ",
                         ps->line);
        va_start(ap, fmt);
        vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return s;
}

static kt_status kt__next(kt__parser *ps) {
    kt__lexer *lx = &ps->lx;
    const char *p = lx->p;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v')
        p++;
    lx->at = p;
    if (*p == '\0' || *p == '\n' || *p == '#') {
        lx->tok = KT__TOK_END;
    } else if (kt__is_name_start((unsigned char)*p)) {
        size_t n = 0;
        while (kt__is_name_char((unsigned char)p[n])) n++;
        if (n >= KT_NAME_MAX)
            return kt__perr(ps, KT_ERR_LIMIT,
                            "name '%.32s...' is longer than %d characters", p,
                            KT_NAME_MAX - 1);
        memcpy(lx->name, p, n);
        lx->name[n] = '\0';
        lx->tok = KT__TOK_NAME;
        p += n;
    } else if (isdigit((unsigned char)*p) ||
               (*p == '.' && isdigit((unsigned char)p[1]))) {
        char *end;
        const char *q = p;
        lx->num = strtod(p, &end);
        lx->num_is_int = 1;
        for (; q < end; q++)
            if (*q == '.' || *q == 'e' || *q == 'E') lx->num_is_int = 0;
        for (q = p; q < end; q++)
            if (*q == 'x' || *q == 'X') /* strtod reads C's hex floats */
                return kt__perr(ps, KT_ERR_PARSE, "number %.*s: write it "
                                "in decimal", (int)(end - p), p);
        if (lx->num_is_int && lx->num > 1e15)
            return kt__perr(ps, KT_ERR_PARSE, "number %.*s is too large",
                            (int)(end - p), p);
        if (!isfinite(lx->num)) /* 1e400: HUGE_VAL, an infinite constant */
            return kt__perr(ps, KT_ERR_PARSE, "number %.*s is beyond a "
                            "double's range", (int)(end - p), p);
        lx->tok = KT__TOK_NUM;
        p = end;
    } else if (strchr("[](),:=+-*/", *p)) {
        lx->tok = KT__TOK_PUNCT;
        lx->punct = *p++;
    } else {
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
            return kt__perr(ps, KT_ERR_PARSE,
                            "unexpected byte 0x%02x in a statement",
                            (unsigned char)*p);
        return kt__perr(ps, KT_ERR_PARSE, "unexpected character '%c'", *p);
    }
    lx->p = p;
    return KT_OK;
}

/* The first non-blank character after the current token. */
static int kt__next_char(const kt__parser *ps) {
    const char *p = ps->lx.p;
    while (*p == ' ' || *p == '\t') p++;
    return *p;
}

static int kt__is_punct(const kt__parser *ps, int c) {
    return ps->lx.tok == KT__TOK_PUNCT && ps->lx.punct == c;
}

static kt_status kt__expect(kt__parser *ps, int c, const char *what) {
    if (!kt__is_punct(ps, c)) {
        if (ps->lx.tok == KT__TOK_END)
            return kt__perr(ps, KT_ERR_PARSE, "expected '%c' %s, found the "
                            "end of the line", c, what);
        return kt__perr(ps, KT_ERR_PARSE, "expected '%c' %s at '%.20s'", c,
                        what, ps->lx.at);
    }
    return kt__next(ps);
}

static int kt__find_var(const kt_op *op, const char *name) {
    int v;
    for (v = 0; v < op->nvars; v++)
        if (strcmp(op->var[v].name, name) == 0) return v;
    return -1;
}

/* `name` or `name:extent` in an output or reduction list. */
static kt_status kt__parse_var_decl(kt__parser *ps, int reduction) {
    kt_op *op = &ps->op;
    kt_index_var *iv;
    kt_status s;
    if (ps->lx.tok != KT__TOK_NAME)
        return kt__perr(ps, KT_ERR_PARSE, "expected an index variable at "
                        "'%.20s'", ps->lx.at);
    if (kt__find_var(op, ps->lx.name) >= 0)
        return kt__perr(ps, KT_ERR_PARSE, "index variable %s appears twice "
                        "in the %s list", ps->lx.name,
                        reduction ? "output and reduction" : "output");
    if (op->nvars == KT_MAX_VARS)
        return kt__perr(ps, KT_ERR_LIMIT, "more than %d index variables",
                        KT_MAX_VARS);
    iv = &op->var[op->nvars];
    memset(iv, 0, sizeof *iv);
    snprintf(iv->name, sizeof iv->name, "%s", ps->lx.name);
    iv->reduction = reduction;
    iv->splittable = 1;
    iv->extent = -1;
    memset(&ps->src[op->nvars], 0, sizeof ps->src[0]);
    op->nvars++;
    if ((s = kt__next(ps)) != KT_OK) return s;
    if (kt__is_punct(ps, ':')) {
        if ((s = kt__next(ps)) != KT_OK) return s;
        if (ps->lx.tok != KT__TOK_NUM || !ps->lx.num_is_int || ps->lx.num < 1)
            return kt__perr(ps, KT_ERR_PARSE, "index variable %s: expected a "
                            "positive integer extent after ':'", iv->name);
        iv->extent = (int64_t)ps->lx.num;
        ps->src[op->nvars - 1].known = 1;
        snprintf(ps->src[op->nvars - 1].from,
                 sizeof ps->src[0].from, "its declaration %s:%lld", iv->name,
                 (long long)iv->extent);
        return kt__next(ps);
    }
    return KT_OK;
}

/* Index expressions are affine in the index variables with integer
   coefficients (Tofu 4.2): +, -, * and / by constants; the product of two
   intervals is not affine and is refused, as Tofu does; a division may only
   be the last step, so rounding happens once. */
static kt_status kt__parse_index_sum(kt__parser *ps, kt__affine *out);

static kt_status kt__index_too_large(kt__parser *ps) {
    return kt__perr(ps, KT_ERR_LIMIT, "an index expression has a coefficient "
                    "above 2^16 or a constant above 2^40");
}

/* The parser descends one C call per parenthesis, minus sign or function
   call, each opening a level here: a bound keeps a line of 64 KB of '('
   from overflowing the stack (of a worker thread above all), and
   autodiff's derivative of a deep nest of functions, whose text grows
   with the square of the depth, small.  Levels in an index count on top
   of those of the value around it. */
static kt_status kt__nest_enter(kt__parser *ps) {
    if (++ps->depth <= ps->nest_most) return KT_OK;
    return kt__perr(ps, KT_ERR_LIMIT, "an expression nested more than %d "
                    "levels deep (parentheses, minus signs, function calls; "
                    "KT_MAX_NESTING)", ps->nest_most);
}

/* sub(ps, out) one level deeper. */
static kt_status kt__nested_index(kt__parser *ps,
                                  kt_status (*sub)(kt__parser *, kt__affine *),
                                  kt__affine *out) {
    kt_status s = kt__nest_enter(ps);
    if (s == KT_OK) s = sub(ps, out);
    ps->depth--;
    return s;
}

static kt_status kt__nested_value(kt__parser *ps,
                                  kt_status (*sub)(kt__parser *, int *),
                                  int *node) {
    kt_status s = kt__nest_enter(ps);
    if (s == KT_OK) s = sub(ps, node);
    ps->depth--;
    return s;
}

static kt_status kt__parse_index_atom(kt__parser *ps, kt__affine *out) {
    kt_status s;
    if (kt__is_punct(ps, '-')) {
        if ((s = kt__next(ps)) != KT_OK) return s;
        if ((s = kt__nested_index(ps, kt__parse_index_atom, out)) != KT_OK)
            return s;
        if (out->divisor != 1)
            return kt__perr(ps, KT_ERR_PARSE, "a division must be the last "
                            "step of an index expression");
        kt__aff_scale(out, -1);
        return KT_OK;
    }
    if (kt__is_punct(ps, '(')) {
        if ((s = kt__next(ps)) != KT_OK) return s;
        if ((s = kt__nested_index(ps, kt__parse_index_sum, out)) != KT_OK)
            return s;
        return kt__expect(ps, ')', "closing the index expression");
    }
    if (ps->lx.tok == KT__TOK_NUM) {
        if (!ps->lx.num_is_int)
            return kt__perr(ps, KT_ERR_PARSE, "index constants are integers, "
                            "found '%.20s'", ps->lx.at);
        kt__aff_const(out, (int64_t)ps->lx.num);
        if (!kt__aff_in_range(out)) return kt__index_too_large(ps);
        return kt__next(ps);
    }
    if (ps->lx.tok == KT__TOK_NAME) {
        int v = kt__find_var(&ps->op, ps->lx.name);
        if (v < 0)
            return kt__perr(ps, KT_ERR_PARSE, "index variable %s is neither "
                            "an output variable nor a reduction variable",
                            ps->lx.name);
        kt__aff_var(out, v);
        return kt__next(ps);
    }
    return kt__perr(ps, KT_ERR_PARSE, "expected an index expression at "
                    "'%.20s'", ps->lx.at);
}

static kt_status kt__parse_index_product(kt__parser *ps, kt__affine *out) {
    kt_status s = kt__parse_index_atom(ps, out);
    while (s == KT_OK && (kt__is_punct(ps, '*') || kt__is_punct(ps, '/'))) {
        int op = ps->lx.punct;
        kt__affine rhs;
        if (out->divisor != 1)
            return kt__perr(ps, KT_ERR_PARSE, "a division must be the last "
                            "step of an index expression");
        if ((s = kt__next(ps)) != KT_OK) return s;
        if ((s = kt__parse_index_atom(ps, &rhs)) != KT_OK) return s;
        if (rhs.divisor != 1)
            return kt__perr(ps, KT_ERR_PARSE, "a division must be the last "
                            "step of an index expression");
        if (op == '*') {
            int ok;
            if (!kt__aff_is_const(out) && !kt__aff_is_const(&rhs))
                return kt__perr(ps, KT_ERR_PARSE, "an index expression "
                                "multiplies two index variables; only "
                                "affine indices can be analysed "
                                "(Tofu 4.2)");
            if (kt__aff_is_const(out)) {
                int64_t k = out->c;
                *out = rhs;
                ok = kt__aff_scale(out, k);
            } else {
                ok = kt__aff_scale(out, rhs.c);
            }
            if (!ok) return kt__index_too_large(ps);
        } else {
            if (!kt__aff_is_const(&rhs))
                return kt__perr(ps, KT_ERR_PARSE, "an index expression "
                                "divides by an index variable");
            if (rhs.c <= 0)
                return kt__perr(ps, KT_ERR_PARSE, "an index expression "
                                "divides by %lld; divisors must be positive",
                                (long long)rhs.c);
            if (kt__aff_is_const(out))
                kt__aff_const(out, kt__floor_div(out->c, rhs.c));
            else
                out->divisor = rhs.c;
        }
    }
    return s;
}

static kt_status kt__parse_index_sum(kt__parser *ps, kt__affine *out) {
    kt_status s = kt__parse_index_product(ps, out);
    while (s == KT_OK && (kt__is_punct(ps, '+') || kt__is_punct(ps, '-'))) {
        int sign = ps->lx.punct == '+' ? 1 : -1;
        kt__affine rhs;
        if ((s = kt__next(ps)) != KT_OK) return s;
        if ((s = kt__parse_index_product(ps, &rhs)) != KT_OK) return s;
        if (out->divisor != 1 || rhs.divisor != 1)
            return kt__perr(ps, KT_ERR_PARSE, "a division must be the last "
                            "step of an index expression");
        if (!kt__aff_add(out, &rhs, sign)) return kt__index_too_large(ps);
    }
    return s;
}

/* Appends node e, whose children are already in place.  Every consumer
   of the tree (evaluators, autodiff, printing) recurses over it, so its
   depth is bounded as the parser's own nesting is: a + b + c + ... parses
   in a loop but makes a tree as deep as it is long. */
static kt_status kt__push_expr(kt__parser *ps, const kt_expr *e, int *index) {
    kt_op *op = &ps->op;
    int d = 1;
    if (op->nexpr == ps->cap_expr) {
        int nc = ps->cap_expr ? 2 * ps->cap_expr : 16;
        kt_expr *ne = (kt_expr *)KT_REALLOC(op->expr, (size_t)nc * sizeof *ne);
        int *nd;
        if (!ne) return kt__perr(ps, KT_ERR_NOMEM, "out of memory");
        op->expr = ne;
        nd = (int *)KT_REALLOC(ps->node_depth, (size_t)nc * sizeof *nd);
        if (!nd) return kt__perr(ps, KT_ERR_NOMEM, "out of memory");
        ps->node_depth = nd;
        ps->cap_expr = nc;
    }
    if (e->kind == KT_EXPR_UNARY || e->kind == KT_EXPR_BINARY)
        d = 1 + ps->node_depth[e->a];
    if (e->kind == KT_EXPR_BINARY && 1 + ps->node_depth[e->b] > d)
        d = 1 + ps->node_depth[e->b];
    if (d > ps->depth_most)
        return kt__perr(ps, KT_ERR_LIMIT, "an expression whose operator "
                        "tree is more than %d levels deep (a chain of %d "
                        "operators is as deep; 4 x KT_MAX_NESTING)",
                        ps->depth_most, ps->depth_most);
    ps->node_depth[op->nexpr] = d;
    op->expr[op->nexpr] = *e;
    *index = op->nexpr++;
    return KT_OK;
}

/* Report an unknown tensor, telling apart one that a later line defines. */
static kt_status kt__unknown_tensor(kt__parser *ps, const char *name) {
    int i;
    if (ps->later)
        for (i = 0; i < ps->later->count; i++)
            if (strcmp(ps->later->name[i], name) == 0 &&
                ps->later->line[i] > ps->line)
                return kt__perr(ps, KT_ERR_GRAPH, "tensor %s is read before "
                                "it is defined (line %d)", name,
                                ps->later->line[i]);
    return kt__perr(ps, KT_ERR_GRAPH, "unknown tensor %s", name);
}

/* Appends which read an index error happened in. */
static kt_status kt__name_read(kt__parser *ps, kt_status s, const char *tensor,
                               int dim) {
    if (ps->err) {
        size_t n = strlen(ps->err->message);
        if (n < sizeof ps->err->message - 1)
            snprintf(ps->err->message + n, sizeof ps->err->message - n,
                     " (in the index of %s dim %d)", tensor, dim);
    }
    return s;
}

/* NAME[index, ...] -- one access; `padded` when written inside pad(...). */
static kt_status kt__parse_access(kt__parser *ps, int padded, int *access) {
    kt_op *op = &ps->op;
    kt_access *a;
    const kt_tensor *t;
    int ti, d = 0, j;
    kt_status s;
    char tname[KT_NAME_MAX];
    snprintf(tname, sizeof tname, "%s", ps->lx.name);
    ti = kt_graph_find_tensor(ps->g, tname);
    if (ti < 0) return kt__unknown_tensor(ps, tname);
    t = &ps->g->tensor[ti];
    if (t->updater >= 0)
        return kt__perr(ps, KT_ERR_GRAPH, "tensor %s is read after its "
                        "in-place update on line %d", tname,
                        ps->g->op[t->updater].line);
    if (op->naccess == ps->cap_access) {
        int nc = ps->cap_access ? 2 * ps->cap_access : 4;
        kt_access *na =
            (kt_access *)KT_REALLOC(op->access, (size_t)nc * sizeof *na);
        if (!na) return kt__perr(ps, KT_ERR_NOMEM, "out of memory");
        op->access = na;
        ps->cap_access = nc;
    }
    a = &op->access[op->naccess];
    memset(a, 0, sizeof *a);
    a->tensor = ti;
    a->padded = padded;
    for (j = 0; j < op->ninputs && op->input[j] != ti; j++) {}
    if (j == op->ninputs) {
        if (op->ninputs == KT_MAX_VARS)
            return kt__perr(ps, KT_ERR_LIMIT, "more than %d input tensors",
                            KT_MAX_VARS);
        op->input[op->ninputs++] = ti;
    }
    a->input = j;
    if ((s = kt__next(ps)) != KT_OK) return s;
    if ((s = kt__expect(ps, '[', "after a tensor name")) != KT_OK) return s;
    for (;;) {
        if (d == KT_MAX_DIMS)
            return kt__perr(ps, KT_ERR_SHAPE, "tensor %s is indexed with more "
                            "than %d indices", tname, KT_MAX_DIMS);
        if (kt__is_punct(ps, ':')) {
            if (!ps->in_opaque)
                return kt__perr(ps, KT_ERR_PARSE, "%s dim %d: ':' (a whole "
                                "dimension) is only allowed in an "
                                "opaque(...) argument", tname, d);
            a->whole[d] = 1;
            a->dim[d].divisor = 1;
            if ((s = kt__next(ps)) != KT_OK) return s;
        } else {
            kt__affine aff;
            if ((s = kt__parse_index_sum(ps, &aff)) != KT_OK)
                return kt__name_read(ps, s, tname, d);
            kt__sym_from_affine(&a->dim[d], &aff);
        }
        d++;
        if (kt__is_punct(ps, ']')) break;
        if ((s = kt__expect(ps, ',', "between indices")) != KT_OK) return s;
    }
    if (d != t->rank)
        return kt__perr(ps, KT_ERR_SHAPE, "tensor %s has rank %d but is "
                        "indexed with %d ind%s", tname, t->rank, d,
                        d == 1 ? "ex" : "ices");
    *access = op->naccess++;
    return kt__next(ps);
}

static const char *const kt__fn_names[KT_FN_COUNT] = {
    "neg", "relu", "tanh", "sigmoid", "exp", "log", "sqrt", "step"};

static kt_status kt__parse_value_sum(kt__parser *ps, int *node);

static kt_status kt__parse_value_atom(kt__parser *ps, int *node) {
    kt_expr e;
    kt_status s;
    memset(&e, 0, sizeof e);
    if (kt__is_punct(ps, '-')) {
        int child;
        if ((s = kt__next(ps)) != KT_OK) return s;
        if ((s = kt__nested_value(ps, kt__parse_value_atom, &child)) != KT_OK)
            return s;
        e.kind = KT_EXPR_UNARY;
        e.fn = KT_FN_NEG;
        e.a = child;
        return kt__push_expr(ps, &e, node);
    }
    if (kt__is_punct(ps, '(')) {
        if ((s = kt__next(ps)) != KT_OK) return s;
        if ((s = kt__nested_value(ps, kt__parse_value_sum, node)) != KT_OK)
            return s;
        return kt__expect(ps, ')', "closing the parenthesis");
    }
    if (ps->lx.tok == KT__TOK_NUM) {
        e.kind = KT_EXPR_CONST;
        e.value = ps->lx.num;
        if ((s = kt__next(ps)) != KT_OK) return s;
        return kt__push_expr(ps, &e, node);
    }
    if (ps->lx.tok == KT__TOK_NAME) {
        char name[KT_NAME_MAX];
        const char *save = ps->lx.p;
        int fn;
        snprintf(name, sizeof name, "%s", ps->lx.name);
        while (*save == ' ' || *save == '\t') save++;
        if (*save == '[') {
            e.kind = KT_EXPR_ACCESS;
            if ((s = kt__parse_access(ps, 0, &e.index)) != KT_OK) return s;
            return kt__push_expr(ps, &e, node);
        }
        if (*save != '(')
            return kt__perr(ps, KT_ERR_PARSE, "%s must be followed by [...] "
                            "(a tensor) or (...) (a function)", name);
        if ((s = kt__next(ps)) != KT_OK) return s;
        if ((s = kt__next(ps)) != KT_OK) return s; /* past '(' */
        if (strcmp(name, "pad") == 0) {
            /* pad(x[...]): reads outside x give zeros (DESIGN.md: the
               marking of a zero-padded input). */
            const char *after = ps->lx.p; /* what follows the name */
            while (*after == ' ' || *after == '\t') after++;
            if (ps->lx.tok != KT__TOK_NAME || *after != '[')
                return kt__perr(ps, KT_ERR_PARSE, "pad(...) takes one tensor "
                                "read such as pad(x[i-1])");
            e.kind = KT_EXPR_ACCESS;
            if ((s = kt__parse_access(ps, 1, &e.index)) != KT_OK) return s;
            if ((s = kt__expect(ps, ')', "closing pad(")) != KT_OK) return s;
            return kt__push_expr(ps, &e, node);
        }
        for (fn = 0; fn < KT_FN_COUNT; fn++)
            if (strcmp(name, kt__fn_names[fn]) == 0) break;
        if (fn == KT_FN_COUNT) {
            if (!strcmp(name, "sum") || !strcmp(name, "max") ||
                !strcmp(name, "min") || !strcmp(name, "prod") ||
                !strcmp(name, "opaque"))
                return kt__perr(ps, KT_ERR_PARSE, "%s(...) must come first "
                                "on the right-hand side", name);
            return kt__perr(ps, KT_ERR_PARSE, "unknown function %s (known: "
                            "neg relu tanh sigmoid exp log sqrt step)", name);
        }
        e.kind = KT_EXPR_UNARY;
        e.fn = fn;
        if ((s = kt__nested_value(ps, kt__parse_value_sum, &e.a)) != KT_OK)
            return s;
        if ((s = kt__expect(ps, ')', "closing the function call")) != KT_OK)
            return s;
        return kt__push_expr(ps, &e, node);
    }
    if (ps->lx.tok == KT__TOK_END)
        return kt__perr(ps, KT_ERR_PARSE, "the statement ends where a value "
                        "was expected");
    return kt__perr(ps, KT_ERR_PARSE, "expected a value at '%.20s'",
                    ps->lx.at);
}

static kt_status kt__parse_value_binary(kt__parser *ps, int *node,
                                        const char *ops,
                                        kt_status (*sub)(kt__parser *, int *)) {
    kt_status s = sub(ps, node);
    while (s == KT_OK && ps->lx.tok == KT__TOK_PUNCT &&
           strchr(ops, ps->lx.punct)) {
        kt_expr e;
        memset(&e, 0, sizeof e);
        e.kind = KT_EXPR_BINARY;
        e.fn = ps->lx.punct;
        e.a = *node;
        if ((s = kt__next(ps)) != KT_OK) return s;
        if ((s = sub(ps, &e.b)) != KT_OK) return s;
        s = kt__push_expr(ps, &e, node);
    }
    return s;
}

static kt_status kt__parse_value_product(kt__parser *ps, int *node) {
    return kt__parse_value_binary(ps, node, "*/", kt__parse_value_atom);
}

static kt_status kt__parse_value_sum(kt__parser *ps, int *node) {
    return kt__parse_value_binary(ps, node, "+-", kt__parse_value_product);
}

/* opaque(name, X[...], ...): a computation TDL cannot see into.  Only the
   output variables its arguments are indexed by may be split (Tofu 4.1,
   batch_cholesky). */
static kt_status kt__parse_opaque(kt__parser *ps, int *node) {
    kt_op *op = &ps->op;
    kt_status s;
    int v, a, root = -1;
    if ((s = kt__next(ps)) != KT_OK) return s;
    if ((s = kt__expect(ps, '(', "after opaque")) != KT_OK) return s;
    if (ps->lx.tok != KT__TOK_NAME)
        return kt__perr(ps, KT_ERR_PARSE, "opaque(...) starts with the name "
                        "of the computation, e.g. opaque(cholesky, a[b,:,:])");
    snprintf(op->opaque, sizeof op->opaque, "%s", ps->lx.name);
    if ((s = kt__next(ps)) != KT_OK) return s;
    ps->in_opaque = 1;
    while (kt__is_punct(ps, ',')) {
        kt_expr e;
        memset(&e, 0, sizeof e);
        if ((s = kt__next(ps)) != KT_OK) return s;
        if (ps->lx.tok != KT__TOK_NAME)
            return kt__perr(ps, KT_ERR_PARSE, "opaque(...) arguments are "
                            "tensor reads such as a[b,:,:]");
        e.kind = KT_EXPR_ACCESS;
        if ((s = kt__parse_access(ps, 0, &e.index)) != KT_OK) return s;
        if ((s = kt__push_expr(ps, &e, &root)) != KT_OK) return s;
    }
    ps->in_opaque = 0;
    if (op->naccess == 0)
        return kt__perr(ps, KT_ERR_PARSE, "opaque(%s) has no tensor "
                        "argument", op->opaque);
    if ((s = kt__expect(ps, ')', "closing opaque(")) != KT_OK) return s;
    for (v = 0; v < op->out_rank; v++) {
        int used = 0;
        for (a = 0; a < op->naccess; a++) {
            int d;
            for (d = 0; d < ps->g->tensor[op->access[a].tensor].rank; d++)
                if (kt__sym_coef(&op->access[a].dim[d], v) != 0) used = 1;
        }
        op->var[v].splittable = used;
    }
    *node = root;
    return KT_OK;
}

/* ------------------------------------------------------ shape inference */

static void kt__set_extent(kt__parser *ps, int v, int64_t extent,
                           const char *tensor, int dim) {
    ps->op.var[v].extent = extent;
    ps->src[v].known = 1;
    snprintf(ps->src[v].from, sizeof ps->src[v].from, "%s dim %d", tensor,
             dim);
}

/* Count the variables an index depends on; *only is the last of them. */
static int kt__index_vars(const kt_sym_interval *s, int nvars, int *only) {
    int v, n = 0;
    for (v = 0; v < nvars; v++)
        if (kt__sym_coef(s, v) != 0) {
            n++;
            *only = v;
        }
    return n;
}

/* A plain index x[..., v, ...] fixes v's extent to that dimension (a
   padded read proposes it but may disagree). */
static kt_status kt__infer_plain(kt__parser *ps, int *changed) {
    kt_op *op = &ps->op;
    int a, d, v = -1;
    for (a = 0; a < op->naccess; a++) {
        const kt_access *ac = &op->access[a];
        const kt_tensor *t = &ps->g->tensor[ac->tensor];
        for (d = 0; d < t->rank; d++) {
            const kt_sym_interval *s = &ac->dim[d];
            if (ac->whole[d] || kt__index_vars(s, op->nvars, &v) != 1 ||
                kt__sym_coef(s, v) != 1 || s->lower.c != 0 || s->divisor != 1)
                continue;
            if (!ps->src[v].known) {
                kt__set_extent(ps, v, t->shape[d], t->name, d);
                *changed = 1;
            } else if (op->var[v].extent != t->shape[d] && !ac->padded) {
                /* a padded read may run past its tensor: no conflict */
                return kt__perr(ps, KT_ERR_SHAPE, "index variable %s has "
                                "extent %lld from %s but %lld from %s dim %d",
                                op->var[v].name, (long long)op->var[v].extent,
                                ps->src[v].from, (long long)t->shape[d],
                                t->name, d);
            }
        }
    }
    return KT_OK;
}

/* An affine index with one variable of unknown extent: the largest extent
   that keeps every read inside the dimension (a valid convolution's output
   height H - KH + 1, a 2x2 pooling's H / 2). */
static kt_status kt__infer_affine(kt__parser *ps, int *changed) {
    kt_op *op = &ps->op;
    int a, d, u;
    for (a = 0; a < op->naccess; a++) {
        const kt_access *ac = &op->access[a];
        const kt_tensor *t = &ps->g->tensor[ac->tensor];
        if (ac->padded) continue;
        for (d = 0; d < t->rank; d++) {
            const kt_sym_interval *s = &ac->dim[d];
            int64_t rest_max = s->lower.c, rest_min = s->lower.c, coef = 0,
                    room, extent;
            int unknown = -1, nunknown = 0;
            if (ac->whole[d]) continue;
            for (u = 0; u < op->nvars; u++) {
                int64_t k = kt__sym_coef(s, u);
                if (k == 0) continue;
                if (!ps->src[u].known) {
                    unknown = u;
                    coef = k;
                    nunknown++;
                } else if (k > 0) {
                    rest_max += k * (op->var[u].extent - 1);
                } else {
                    rest_min += k * (op->var[u].extent - 1);
                }
            }
            if (nunknown != 1) continue;
            /* floor(x / div) <= D - 1  <=>  x <= div*D - 1 */
            if (coef > 0)
                room = kt__floor_div(s->divisor * t->shape[d] - 1 - rest_max,
                                     coef);
            else
                room = kt__floor_div(rest_min, -coef);
            extent = room + 1;
            if (extent < 1)
                return kt__perr(ps, KT_ERR_SHAPE, "tensor %s: dim %d (%lld) "
                                "is too small for index variable %s in "
                                "this read", t->name, d,
                                (long long)t->shape[d], op->var[unknown].name);
            kt__set_extent(ps, unknown, extent, t->name, d);
            *changed = 1;
            return KT_OK; /* plain indices get the next word */
        }
    }
    return KT_OK;
}

static kt_status kt__infer_extents(kt__parser *ps, int out_tensor) {
    kt_op *op = &ps->op;
    kt_status s;
    int v, changed = 1;
    /* An existing output tensor (a declared activation or an in-place
       update) fixes the extents of the output variables. */
    if (out_tensor >= 0) {
        const kt_tensor *t = &ps->g->tensor[out_tensor];
        if (t->rank != op->out_rank)
            return kt__perr(ps, KT_ERR_SHAPE, "tensor %s has rank %d but is "
                            "written with %d ind%s", t->name, t->rank,
                            op->out_rank, op->out_rank == 1 ? "ex" : "ices");
        for (v = 0; v < op->out_rank; v++) {
            if (ps->src[v].known && op->var[v].extent != t->shape[v])
                return kt__perr(ps, KT_ERR_SHAPE, "index variable %s has "
                                "extent %lld from %s but %lld from %s dim %d",
                                op->var[v].name, (long long)op->var[v].extent,
                                ps->src[v].from, (long long)t->shape[v],
                                t->name, v);
            kt__set_extent(ps, v, t->shape[v], t->name, v);
        }
    }
    while (changed) {
        changed = 0;
        if ((s = kt__infer_plain(ps, &changed)) != KT_OK) return s;
        if (!changed && (s = kt__infer_affine(ps, &changed)) != KT_OK)
            return s;
    }
    /* Opaque: output variables its arguments do not index take the extents
       of the ':' dimensions in order (batch_cholesky's i and j). */
    if (op->opaque[0]) {
        int a, d;
        v = 0;
        for (a = 0; a < op->naccess; a++) {
            const kt_tensor *t = &ps->g->tensor[op->access[a].tensor];
            for (d = 0; d < t->rank; d++) {
                if (!op->access[a].whole[d]) continue;
                while (v < op->out_rank && ps->src[v].known) v++;
                if (v < op->out_rank) kt__set_extent(ps, v, t->shape[d],
                                                     t->name, d);
            }
        }
    }
    for (v = 0; v < op->nvars; v++)
        if (!ps->src[v].known)
            return kt__perr(ps, KT_ERR_SHAPE, "the extent of index variable "
                            "%s cannot be inferred; give it as %s:N in the "
                            "%s list", op->var[v].name, op->var[v].name,
                            op->var[v].reduction ? "reduction" : "output");
    return KT_OK;
}

/* Every read must stay inside its tensor unless it is marked pad(...). */
static kt_status kt__check_reads(kt__parser *ps) {
    kt_op *op = &ps->op;
    kt_range box[KT_MAX_VARS];
    int a, d;
    kt_op_var_box(op, box);
    for (a = 0; a < op->naccess; a++) {
        const kt_access *ac = &op->access[a];
        const kt_tensor *t = &ps->g->tensor[ac->tensor];
        if (ac->padded) continue;
        for (d = 0; d < t->rank; d++) {
            kt_range r;
            if (ac->whole[d]) continue;
            r = kt_sym_interval_eval(&ac->dim[d], op->nvars, box);
            if (r.lo < 0 || r.hi > t->shape[d])
                return kt__perr(ps, KT_ERR_SHAPE, "tensor %s: dim %d is read "
                                "at indices %lld..%lld but has %lld elements; "
                                "mark a zero-padded read as pad(%s[...])",
                                t->name, d, (long long)r.lo,
                                (long long)r.hi - 1, (long long)t->shape[d],
                                t->name);
        }
    }
    return KT_OK;
}

/* 1 when expression node e is the literal v. */
static int kt__expr_is(const kt_expr *x, int e, double v) {
    return x[e].kind == KT_EXPR_CONST && x[e].value == v;
}

/* kt_op.flops (kt_op_flops_per_point): the body's operations from its
   root down, each node's count from its children's.  The parser pushes a
   node after its children, so one pass in order sees children first (a
   node left behind when the root was moved to the end is counted, but
   only the root's count is kept). */
static kt_status kt__count_flops(kt__parser *ps) {
    kt_op *op = &ps->op;
    const kt_expr *x = op->expr;
    int *count, e, n = op->nexpr;
    unsigned char *constant; /* no tensor read below: folded, free */
    op->flops = 1;            /* opaque: unknown, one per point */
    if (op->opaque[0] || n == 0) return KT_OK;
    count = (int *)KT_MALLOC((size_t)n * sizeof *count);
    constant = (unsigned char *)KT_MALLOC((size_t)n);
    if (!count || !constant) {
        KT_FREE(count);
        KT_FREE(constant);
        return kt__perr(ps, KT_ERR_NOMEM, "out of memory");
    }
    for (e = 0; e < n; e++) {
        int a = x[e].a, b = x[e].b;
        count[e] = 0;
        constant[e] = x[e].kind == KT_EXPR_CONST;
        if (x[e].kind == KT_EXPR_UNARY) {
            KT_ASSERT(a >= 0 && a < e);
            constant[e] = constant[a];
            count[e] = constant[a] ? 0 : count[a] + 1;
        } else if (x[e].kind == KT_EXPR_BINARY) {
            int f = x[e].fn;
            KT_ASSERT(a >= 0 && a < e && b >= 0 && b < e);
            constant[e] = constant[a] && constant[b];
            if (constant[e])
                count[e] = 0;
            else if ((f == '*' && kt__expr_is(x, a, 1)) ||
                     (f == '+' && kt__expr_is(x, a, 0)))
                count[e] = count[b]; /* 1 * y, 0 + y */
            else if (((f == '*' || f == '/') && kt__expr_is(x, b, 1)) ||
                     ((f == '+' || f == '-') && kt__expr_is(x, b, 0)))
                count[e] = count[a]; /* y * 1, y / 1, y + 0, y - 0 */
            else
                count[e] = count[a] + count[b] + 1;
        }
    }
    op->flops = count[n - 1];
    /* the reduction folds each point's value into the output: one more */
    if (op->reducer != KT_REDUCE_NONE) op->flops++;
    KT_FREE(count);
    KT_FREE(constant);
    return KT_OK;
}

/* ------------------------------------------------------------- statements */

static kt_status kt__parse_statement(kt__parser *ps, char *out_name) {
    kt_op *op = &ps->op;
    kt_status s;
    int root = -1;
    if ((s = kt__next(ps)) != KT_OK) return s;
    if (ps->lx.tok != KT__TOK_NAME)
        return kt__perr(ps, KT_ERR_PARSE, "a statement starts with the "
                        "tensor it defines, e.g. y[i,k] = ...");
    snprintf(out_name, KT_NAME_MAX, "%s", ps->lx.name);
    if ((s = kt__next(ps)) != KT_OK) return s;
    if ((s = kt__expect(ps, '[', "after the output tensor")) != KT_OK)
        return s;
    for (;;) {
        if ((s = kt__parse_var_decl(ps, 0)) != KT_OK) return s;
        if (kt__is_punct(ps, ']')) break;
        if ((s = kt__expect(ps, ',', "between output variables")) != KT_OK)
            return s;
    }
    op->out_rank = op->nvars;
    if (op->out_rank > KT_MAX_DIMS)
        return kt__perr(ps, KT_ERR_SHAPE, "output %s has more than %d "
                        "dimensions", out_name, KT_MAX_DIMS);
    if ((s = kt__next(ps)) != KT_OK) return s;
    if ((s = kt__expect(ps, '=', "after the output")) != KT_OK) return s;
    if (ps->lx.tok == KT__TOK_NAME && kt__next_char(ps) == '(') {
        static const char *const red[] = {"sum", "max", "min", "prod"};
        int r;
        for (r = 0; r < 4; r++)
            if (strcmp(ps->lx.name, red[r]) == 0) break;
        if (r < 4) {
            op->reducer = (kt_reducer)(KT_REDUCE_SUM + r);
            if ((s = kt__next(ps)) != KT_OK) return s;
            if ((s = kt__next(ps)) != KT_OK) return s; /* past '(' */
            for (;;) {
                if ((s = kt__parse_var_decl(ps, 1)) != KT_OK) return s;
                if (kt__is_punct(ps, ')')) break;
                if ((s = kt__expect(ps, ',', "between reduction variables"))
                    != KT_OK)
                    return s;
            }
            if ((s = kt__next(ps)) != KT_OK) return s;
        } else if (strcmp(ps->lx.name, "opaque") == 0) {
            if ((s = kt__parse_opaque(ps, &root)) != KT_OK) return s;
        }
    }
    if (root < 0 && (s = kt__parse_value_sum(ps, &root)) != KT_OK) return s;
    if (ps->lx.tok != KT__TOK_END)
        return kt__perr(ps, KT_ERR_PARSE, "unexpected '%.20s' after the "
                        "statement", ps->lx.at);
    if (op->naccess == 0)
        return kt__perr(ps, KT_ERR_PARSE, "%s reads no tensor", out_name);
    /* The root must be the last node: move it there if a parenthesised
       sub-expression left it earlier. */
    if (root != op->nexpr - 1) {
        kt_expr e = op->expr[root];
        int dummy;
        if ((s = kt__push_expr(ps, &e, &dummy)) != KT_OK) return s;
    }
    return kt__count_flops(ps);
}

/* Wires the parsed op into the graph: creates, produces or updates its
   output tensor. */
static kt_status kt__commit_op(kt__parser *ps, const char *out_name,
                               int out_tensor, const char *statement) {
    kt_graph *g = ps->g;
    kt_op *op = &ps->op;
    int index = g->nop, v;
    size_t n = strlen(statement);
    if (g->nop == g->cap_op) {
        int nc = g->cap_op ? 2 * g->cap_op : 16;
        kt_op *no = (kt_op *)KT_REALLOC(g->op, (size_t)nc * sizeof *no);
        if (!no) return kt__perr(ps, KT_ERR_NOMEM, "out of memory");
        g->op = no;
        g->cap_op = nc;
    }
    op->text = (char *)KT_MALLOC(n + 1);
    if (!op->text) return kt__perr(ps, KT_ERR_NOMEM, "out of memory");
    memcpy(op->text, statement, n + 1);
    while (n > 0 && (op->text[n - 1] == '\n' || op->text[n - 1] == '\r'))
        op->text[--n] = '\0';
    if (out_tensor < 0) {
        int64_t shape[KT_MAX_DIMS];
        int elem = g->tensor[op->input[0]].elem_bytes;
        kt_status s;
        for (v = 0; v < op->out_rank; v++) shape[v] = op->var[v].extent;
        s = kt__add_tensor(g, out_name, op->out_rank, shape, elem,
                           KT_ACTIVATION, ps->line, ps->err);
        if (s != KT_OK) return s;
        out_tensor = g->ntensor - 1;
    }
    op->output = out_tensor;
    op->group = -1;
    snprintf(op->name, sizeof op->name, "%s", out_name);
    if (g->tensor[out_tensor].producer < 0 &&
        (g->tensor[out_tensor].kind == KT_ACTIVATION ||
         g->tensor[out_tensor].kind == KT_GRADIENT)) {
        g->tensor[out_tensor].producer = index;
    } else {
        op->in_place = 1;
        snprintf(op->name, sizeof op->name, "%s.update", out_name);
        g->tensor[out_tensor].updater = index;
    }
    g->op[g->nop++] = *op;
    g->finalized = 0;
    memset(op, 0, sizeof *op); /* ownership moved to the graph */
    return KT_OK;
}

/* How deep a statement may nest (KT_MAX_NESTING): a user's as the macro
   says, its operator tree 4x as deep since an operator chain is flat text;
   one autodiff wrote (`generated`) twice that, as a derivative's tree is
   at most about twice as deep as its statement's and autodiff prints it
   with a parenthesis per operator (test_graph's test_nesting_limit
   differentiates statements at the limits). */
static void kt__parser_start(kt__parser *ps, kt_graph *g, kt_error *err,
                             int line, int generated) {
    memset(ps, 0, sizeof *ps);
    ps->g = g;
    ps->err = err;
    ps->line = line;
    ps->depth_most = 4 * KT_MAX_NESTING;
    ps->nest_most = generated ? 2 * ps->depth_most + 64 : KT_MAX_NESTING;
    if (generated) ps->depth_most = ps->nest_most;
}

static kt_status kt__add_op(kt_graph *g, const char *statement, int line,
                            const kt__later_defs *later, int generated,
                            kt_error *err) {
    kt__parser ps;
    char out_name[KT_NAME_MAX];
    int out_tensor;
    kt_status s;
    kt__parser_start(&ps, g, err, line, generated);
    ps.later = later;
    ps.lx.p = statement ? statement : "";
    out_name[0] = '\0';
    s = kt__parse_statement(&ps, out_name);
    out_tensor = s == KT_OK ? kt_graph_find_tensor(g, out_name) : -1;
    if (s == KT_OK && out_tensor >= 0 && g->tensor[out_tensor].updater >= 0)
        s = kt__perr(&ps, KT_ERR_GRAPH, "tensor %s is already updated in "
                     "place on line %d", out_name,
                     g->op[g->tensor[out_tensor].updater].line);
    if (s == KT_OK) s = kt__infer_extents(&ps, out_tensor);
    if (s == KT_OK) s = kt__check_reads(&ps);
    if (s == KT_OK) s = kt__commit_op(&ps, out_name, out_tensor, statement);
    KT_FREE(ps.node_depth);
    if (s != KT_OK) {
        kt__op_free(&ps.op);
        return s;
    }
    ps.op.line = 0;
    g->op[g->nop - 1].line = line;
    kt__ok(err);
    return KT_OK;
}

kt_status kt_graph_add_op(kt_graph *g, const char *statement, int line,
                          kt_error *err) {
    if (!g) return kt__fail(err, KT_ERR_INVALID, line, "no graph (NULL)");
    return kt__add_op(g, statement, line, NULL, 0, err);
}

/* ---------------------------------------------------- ordering and checks */

typedef struct kt__edges {
    int *from, *to;
    int count, cap;
} kt__edges;

static int kt__edge_add(kt__edges *e, int from, int to) {
    if (e->count == e->cap) {
        int nc = e->cap ? 2 * e->cap : 64;
        int *nf = (int *)KT_REALLOC(e->from, (size_t)nc * sizeof(int));
        int *nt;
        if (!nf) return 0;
        e->from = nf;
        nt = (int *)KT_REALLOC(e->to, (size_t)nc * sizeof(int));
        if (!nt) return 0;
        e->to = nt;
        e->cap = nc;
    }
    e->from[e->count] = from;
    e->to[e->count] = to;
    e->count++;
    return 1;
}

/* The dependencies between ops: producer -> reader, and for an in-place
   update of X, X's producer and every other reader of X -> the update (the
   old value is read before it is overwritten).  The readers of each
   tensor are listed first (rd[first[x] .. first[x + 1]), in op order), so
   an update finds them without scanning every op: the scan made a model
   of W weights updated in place cost O(W x ops) (4,000 layers 1.2 s,
   64,000 minutes). */
static int kt__collect_edges(const kt_graph *g, kt__edges *e) {
    int *first = (int *)kt__calloc((size_t)g->ntensor + 2, sizeof(int));
    int *fill = (int *)kt__calloc((size_t)g->ntensor + 1, sizeof(int));
    int *rd = NULL, i, j, k, ok = 0;
    if (!first || !fill) goto done;
    for (i = 0; i < g->nop; i++) /* an op's inputs are distinct */
        for (j = 0; j < g->op[i].ninputs; j++) first[g->op[i].input[j] + 1]++;
    for (i = 0; i < g->ntensor; i++) first[i + 1] += first[i];
    if (!(rd = (int *)kt__calloc((size_t)first[g->ntensor] + 1, sizeof(int))))
        goto done;
    for (i = 0; i < g->nop; i++)
        for (j = 0; j < g->op[i].ninputs; j++) {
            int x = g->op[i].input[j];
            rd[first[x] + fill[x]++] = i;
        }
    for (i = 0; i < g->nop; i++) {
        const kt_op *op = &g->op[i];
        for (j = 0; j < op->ninputs; j++) {
            int p = g->tensor[op->input[j]].producer;
            if (p >= 0 && p != i && !kt__edge_add(e, p, i)) goto done;
        }
        if (op->in_place) {
            int x = op->output, p = g->tensor[x].producer;
            if (p >= 0 && p != i && !kt__edge_add(e, p, i)) goto done;
            for (k = first[x]; k < first[x + 1]; k++)
                if (rd[k] != i && !kt__edge_add(e, rd[k], i)) goto done;
        }
    }
    ok = 1;
done:
    KT_FREE(first);
    KT_FREE(fill);
    KT_FREE(rd);
    return ok;
}

/* Names the tensors on one cycle among the ops Kahn's algorithm left. */
static kt_status kt__report_cycle(const kt_graph *g, const kt__edges *e,
                                  const int *indeg, kt_error *err) {
    char msg[400];
    size_t n = 0;
    int *seen = (int *)kt__calloc((size_t)g->nop, sizeof(int));
    int at = -1, i, step = 1;
    if (!seen) return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    for (i = 0; i < g->nop && at < 0; i++)
        if (indeg[i] > 0) at = i;
    /* Walk back along unresolved predecessors until an op repeats. */
    while (at >= 0 && !seen[at]) {
        seen[at] = step++;
        for (i = 0; i < e->count; i++)
            if (e->to[i] == at && indeg[e->from[i]] > 0) break;
        at = i < e->count ? e->from[i] : -1;
    }
    if (at >= 0) {
        /* at starts the cycle; print it forwards (reverse of the walk) */
        int start = seen[at], k, cur;
        int len = step - start;
        int *order = (int *)kt__calloc((size_t)len + 1, sizeof(int));
        if (!order) {
            KT_FREE(seen);
            return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
        }
        for (cur = 0; cur < g->nop; cur++)
            if (seen[cur] >= start) order[seen[cur] - start] = cur;
        for (k = len - 1; k >= 0 && n < sizeof msg - 80; k--)
            n += (size_t)snprintf(msg + n, sizeof msg - n, "%s -> ",
                                  g->tensor[g->op[order[k]].output].name);
        snprintf(msg + n, sizeof msg - n, "%s",
                 g->tensor[g->op[order[len - 1]].output].name);
        KT_FREE(order);
    } else {
        snprintf(msg, sizeof msg, "(not located)");
    }
    KT_FREE(seen);
    return kt__fail(err, KT_ERR_GRAPH, 0, "the graph has a cycle: %s", msg);
}

/* Kahn's algorithm, always taking the earliest ready op, so a graph whose
   statements are already in order keeps that order. */
static kt_status kt__topo_order(kt_graph *g, int *order, kt_error *err) {
    kt__edges e;
    int *indeg = (int *)kt__calloc((size_t)g->nop, sizeof(int));
    int *first = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    int *succ = NULL, *heap = NULL;
    int i, n = 0, nheap = 0;
    kt_status s = KT_OK;
    memset(&e, 0, sizeof e);
    if (!indeg || !first || !kt__collect_edges(g, &e)) goto nomem;
    succ = (int *)kt__calloc((size_t)e.count + 1, sizeof(int));
    heap = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    if (!succ || !heap) goto nomem;
    for (i = 0; i < e.count; i++) {
        indeg[e.to[i]]++;
        first[e.from[i] + 1]++;
    }
    for (i = 0; i < g->nop; i++) first[i + 1] += first[i];
    {
        int *fill = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
        if (!fill) goto nomem;
        for (i = 0; i < e.count; i++)
            succ[first[e.from[i]] + fill[e.from[i]]++] = e.to[i];
        KT_FREE(fill);
    }
    for (i = 0; i < g->nop; i++)
        if (indeg[i] == 0) heap[nheap++] = i; /* ascending: a valid heap */
    while (nheap > 0) {
        int top = heap[0], k, at;
        /* pop the smallest */
        heap[0] = heap[--nheap];
        for (at = 0;;) {
            int l = 2 * at + 1, r = l + 1, m = at, t;
            if (l < nheap && heap[l] < heap[m]) m = l;
            if (r < nheap && heap[r] < heap[m]) m = r;
            if (m == at) break;
            t = heap[m];
            heap[m] = heap[at];
            heap[at] = t;
            at = m;
        }
        order[n++] = top;
        for (k = first[top]; k < first[top + 1]; k++) {
            int v = succ[k];
            if (--indeg[v] == 0) {
                /* push */
                at = nheap++;
                heap[at] = v;
                while (at > 0 && heap[(at - 1) / 2] > heap[at]) {
                    int t = heap[(at - 1) / 2];
                    heap[(at - 1) / 2] = heap[at];
                    heap[at] = t;
                    at = (at - 1) / 2;
                }
            }
        }
    }
    if (n < g->nop) s = kt__report_cycle(g, &e, indeg, err);
    goto done;
nomem:
    s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory ordering the graph");
done:
    KT_FREE(indeg);
    KT_FREE(first);
    KT_FREE(succ);
    KT_FREE(heap);
    KT_FREE(e.from);
    KT_FREE(e.to);
    return s;
}

kt_status kt_graph_finalize(kt_graph *g, kt_error *err) {
    int i, j, *order, *where;
    kt_op *sorted;
    kt_status s;
    if (!g) return kt__fail(err, KT_ERR_INVALID, 0, "no graph (NULL)");
    for (i = 0; i < g->nop; i++)
        for (j = 0; j < g->op[i].ninputs; j++) {
            const kt_tensor *t = &g->tensor[g->op[i].input[j]];
            if ((t->kind == KT_ACTIVATION || t->kind == KT_GRADIENT) &&
                t->producer < 0)
                return kt__fail(err, KT_ERR_GRAPH, g->op[i].line,
                                "tensor %s is read but no statement "
                                "produces it", t->name);
        }
    if (g->nop == 0) {
        g->finalized = 1;
        kt__ok(err);
        return KT_OK;
    }
    order = (int *)kt__calloc((size_t)g->nop, sizeof(int));
    where = (int *)kt__calloc((size_t)g->nop, sizeof(int));
    sorted = (kt_op *)kt__calloc((size_t)g->nop, sizeof(kt_op));
    if (!order || !where || !sorted) {
        s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory ordering the graph");
        goto done;
    }
    if ((s = kt__topo_order(g, order, err)) != KT_OK) goto done;
    for (i = 0; i < g->nop; i++) {
        sorted[i] = g->op[order[i]];
        where[order[i]] = i;
    }
    memcpy(g->op, sorted, (size_t)g->nop * sizeof *sorted);
    for (i = 0; i < g->nop; i++)
        if (g->op[i].group >= 0) g->op[i].group = where[g->op[i].group];
    for (i = 0; i < g->ntensor; i++) {
        if (g->tensor[i].producer >= 0)
            g->tensor[i].producer = where[g->tensor[i].producer];
        if (g->tensor[i].updater >= 0)
            g->tensor[i].updater = where[g->tensor[i].updater];
    }
    g->finalized = 1;
    kt__ok(err);
done:
    KT_FREE(order);
    KT_FREE(where);
    KT_FREE(sorted);
    return s;
}

/* ------------------------------------------------------------ model files */

static int kt__dtype_bytes(const char *name) {
    static const struct { const char *name; int bytes; } types[] = {
        {"f64", 8}, {"f32", 4}, {"f16", 2}, {"bf16", 2},
        {"i64", 8}, {"i32", 4}, {"i8", 1},  {"u8", 1}};
    size_t i;
    for (i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(name, types[i].name) == 0) return types[i].bytes;
    return 0;
}

/* `input NAME[d0,d1,...] [dtype]`, likewise `weight` and `state`. */
static kt_status kt__parse_decl(kt__parser *ps, kt_tensor_kind kind) {
    char name[KT_NAME_MAX];
    int64_t shape[KT_MAX_DIMS];
    int rank = 0, elem = 4;
    kt_status s;
    if ((s = kt__next(ps)) != KT_OK) return s;
    if (ps->lx.tok != KT__TOK_NAME)
        return kt__perr(ps, KT_ERR_PARSE, "expected a tensor name after the "
                        "declaration keyword");
    snprintf(name, sizeof name, "%s", ps->lx.name);
    if ((s = kt__next(ps)) != KT_OK) return s;
    if ((s = kt__expect(ps, '[', "after the tensor name")) != KT_OK) return s;
    for (;;) {
        if (rank == KT_MAX_DIMS)
            return kt__perr(ps, KT_ERR_SHAPE, "tensor %s has more than %d "
                            "dimensions", name, KT_MAX_DIMS);
        if (ps->lx.tok != KT__TOK_NUM || !ps->lx.num_is_int || ps->lx.num < 1)
            return kt__perr(ps, KT_ERR_SHAPE, "tensor %s: dim %d must be a "
                            "positive integer, found '%.20s'", name, rank,
                            ps->lx.at);
        shape[rank++] = (int64_t)ps->lx.num;
        if ((s = kt__next(ps)) != KT_OK) return s;
        if (kt__is_punct(ps, ']')) break;
        if ((s = kt__expect(ps, ',', "between dimensions")) != KT_OK) return s;
    }
    if ((s = kt__next(ps)) != KT_OK) return s;
    if (ps->lx.tok == KT__TOK_NAME) {
        elem = kt__dtype_bytes(ps->lx.name);
        if (!elem)
            return kt__perr(ps, KT_ERR_PARSE, "tensor %s: unknown element "
                            "type %s (f64 f32 f16 bf16 i64 i32 i8 u8)", name,
                            ps->lx.name);
        if ((s = kt__next(ps)) != KT_OK) return s;
    }
    if (ps->lx.tok != KT__TOK_END)
        return kt__perr(ps, KT_ERR_PARSE, "unexpected '%.20s' after the "
                        "declaration of %s", ps->lx.at, name);
    return kt__add_tensor(ps->g, name, rank, shape, elem, kind, ps->line,
                          ps->err);
}

/* The name a line defines ("input x[..]" -> x, "y[i] = .." -> y), for the
   read-before-defined message. */
static int kt__defined_name(const char *line, char *name) {
    const char *p = line, *q;
    size_t n;
    while (*p == ' ' || *p == '\t') p++;
    for (q = p; kt__is_name_char((unsigned char)*q); q++) {}
    n = (size_t)(q - p);
    if (n == 0 || n >= KT_NAME_MAX || !kt__is_name_start((unsigned char)*p))
        return 0;
    if ((n == 5 && !strncmp(p, "input", 5)) ||
        (n == 6 && !strncmp(p, "weight", 6)) ||
        (n == 5 && !strncmp(p, "state", 5))) {
        const char *r = q;
        while (*r == ' ' || *r == '\t') r++;
        if (*r != '[') {
            for (q = r; kt__is_name_char((unsigned char)*q); q++) {}
            n = (size_t)(q - r);
            if (n == 0 || n >= KT_NAME_MAX) return 0;
            memcpy(name, r, n);
            name[n] = '\0';
            return 1;
        }
    }
    memcpy(name, p, n);
    name[n] = '\0';
    while (*q == ' ' || *q == '\t') q++;
    return *q == '[';
}

/* Checks the whole file is text and no line is too long; counts lines. */
static kt_status kt__check_text(const char *text, size_t len, int *nlines,
                                kt_error *err) {
    size_t i, line_start = 0;
    int line = 1;
    if (len == 0)
        return kt__fail(err, KT_ERR_PARSE, 0, "the model file is empty");
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n') {
            line++;
            line_start = i + 1;
            continue;
        }
        if (c == 0)
            return kt__fail(err, KT_ERR_PARSE, line, "NUL byte at offset "
                            "%lu: this is not a text file", (unsigned long)i);
        if ((c < 0x20 && c != '\t' && c != '\r' && c != '\f' && c != '\v') ||
            c == 0x7f)
            return kt__fail(err, KT_ERR_PARSE, line, "control byte 0x%02x: "
                            "this is not a text file", c);
        if (i - line_start >= KT_MAX_LINE)
            return kt__fail(err, KT_ERR_LIMIT, line, "the line is longer "
                            "than %d characters", KT_MAX_LINE);
    }
    *nlines = line;
    return KT_OK;
}

kt_status kt_graph_parse(kt_graph *g, const char *text, size_t len,
                         kt_error *err) {
    kt__later_defs later;
    kt__graph_mark mark;
    char *buf = NULL, loss_name[KT_NAME_MAX];
    int nlines = 0, lineno, items = 0, loss_line = 0;
    size_t at;
    kt_status s;
    memset(&later, 0, sizeof later);
    loss_name[0] = '\0';
    if (!g || (!text && len))
        return kt__fail(err, KT_ERR_INVALID, 0, "kt_graph_parse: no %s "
                        "(NULL)", g ? "text" : "graph");
    if ((s = kt__check_text(text ? text : "", len, &nlines, err)) != KT_OK)
        return s;
    if ((s = kt__graph_mark_set(g, &mark, err)) != KT_OK) return s;
    later.name = (char(*)[KT_NAME_MAX])kt__calloc((size_t)nlines,
                                                  KT_NAME_MAX);
    later.line = (int *)kt__calloc((size_t)nlines, sizeof(int));
    buf = (char *)KT_MALLOC(KT_MAX_LINE + 2);
    if (!later.name || !later.line || !buf) {
        s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory parsing");
        goto done;
    }
    /* Pass 1: what each line defines.  Pass 2: declarations, statements
       and `loss`, one line at a time. */
    for (at = 0, lineno = 1; at < len; lineno++) {
        size_t end = at, n;
        while (end < len && text[end] != '\n') end++;
        n = end - at;
        memcpy(buf, text + at, n);
        buf[n] = '\0';
        if (kt__defined_name(buf, later.name[later.count]))
            later.line[later.count++] = lineno;
        at = end + 1;
    }
    for (at = 0, lineno = 1; at < len && s == KT_OK; lineno++) {
        size_t end = at, n;
        kt__parser ps;
        while (end < len && text[end] != '\n') end++;
        n = end - at;
        memcpy(buf, text + at, n);
        buf[n] = '\0';
        at = end + 1;
        kt__parser_start(&ps, g, err, lineno, 0);
        ps.lx.p = buf;
        if ((s = kt__next(&ps)) != KT_OK) break;
        if (ps.lx.tok == KT__TOK_END) continue;
        items++;
        if (ps.lx.tok == KT__TOK_NAME && *ps.lx.p != '[' &&
            (!strcmp(ps.lx.name, "input") || !strcmp(ps.lx.name, "weight") ||
             !strcmp(ps.lx.name, "state"))) {
            kt_tensor_kind kind = !strcmp(ps.lx.name, "input")    ? KT_INPUT
                                  : !strcmp(ps.lx.name, "weight") ? KT_WEIGHT
                                                                  : KT_OPTSTATE;
            s = kt__parse_decl(&ps, kind);
        } else if (ps.lx.tok == KT__TOK_NAME && *ps.lx.p != '[' &&
                   !strcmp(ps.lx.name, "loss")) {
            if (loss_line)
                s = kt__fail(err, KT_ERR_PARSE, lineno, "a second loss line "
                             "(the first is line %d)", loss_line);
            else if ((s = kt__next(&ps)) == KT_OK) {
                if (ps.lx.tok != KT__TOK_NAME)
                    s = kt__fail(err, KT_ERR_PARSE, lineno,
                                 "loss takes a tensor name");
                else {
                    snprintf(loss_name, sizeof loss_name, "%s", ps.lx.name);
                    loss_line = lineno;
                    if ((s = kt__next(&ps)) == KT_OK &&
                        ps.lx.tok != KT__TOK_END)
                        s = kt__fail(err, KT_ERR_PARSE, lineno,
                                     "unexpected '%.20s' after loss %s",
                                     ps.lx.at, loss_name);
                }
            }
        } else {
            s = kt__add_op(g, buf, lineno, &later, 0, err);
        }
    }
    if (s != KT_OK) goto done;
    if (items == 0) {
        s = kt__fail(err, KT_ERR_PARSE, 0, "the model file is empty: no "
                     "declarations or statements");
        goto done;
    }
    if (loss_line) {
        g->loss = kt_graph_find_tensor(g, loss_name);
        if (g->loss < 0) {
            s = kt__fail(err, KT_ERR_GRAPH, loss_line, "loss names unknown "
                         "tensor %s", loss_name);
            goto done;
        }
    }
    s = kt_graph_finalize(g, err);
done:
    if (s != KT_OK) kt__graph_rollback(g, &mark);
    KT_FREE(mark.tensor);
    KT_FREE(later.name);
    KT_FREE(later.line);
    KT_FREE(buf);
    return s;
}

/* A whole file as NUL-terminated text (*text is the caller's to free);
   `what` names it in the messages ("model file", "profile"). */
static kt_status kt__read_file(const char *path, const char *what,
                               char **text_out, size_t *len_out,
                               kt_error *err) {
    FILE *f;
    char *text = NULL;
    const char *nul;
    size_t len = 0, cap = 0, got;
    *text_out = NULL;
    *len_out = 0;
    if (!path)
        return kt__fail(err, KT_ERR_INVALID, 0, "%s: no path (NULL)", what);
    f = fopen(path, "rb");
    if (!f) /* the reason: missing, a directory, no permission, ... */
        return kt__fail(err, KT_ERR_IO, 0, "cannot open %s %s: %s", what,
                        path, strerror(errno));
    for (;;) {
        if (len + 1 >= cap) { /* room for the NUL at the end */
            size_t most = ((size_t)1 << 30) + 1, nc; /* 1 GiB and the NUL */
            char *nt;
            if (cap == most) { /* full at the limit: is there more? */
                if (fgetc(f) == EOF) break;
                KT_FREE(text);
                fclose(f);
                return kt__fail(err, KT_ERR_LIMIT, 0, "%s %s is larger than "
                                "1 GiB", what, path);
            }
            nc = cap ? 2 * cap : 65536;
            if (nc > most) nc = most;
            nt = (char *)KT_REALLOC(text, nc);
            if (!nt) {
                KT_FREE(text);
                fclose(f);
                return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory reading "
                                "%s %s", what, path);
            }
            text = nt;
            cap = nc;
        }
        got = fread(text + len, 1, cap - len - 1, f);
        nul = got ? (const char *)memchr(text + len, 0, got) : NULL;
        if (nul) {
            /* not text: said at once, not after reading 1 GiB of
               /dev/zero (the parsers say it too, of text in memory) */
            size_t at = (size_t)(nul - text), i;
            int line = 1;
            for (i = 0; i < at; i++) line += text[i] == '\n';
            KT_FREE(text);
            fclose(f);
            kt__fail(err, KT_ERR_PARSE, 0, "%s %s: line %d: NUL byte at "
                     "offset %lu: this is not a text file", what, path, line,
                     (unsigned long)at);
            if (err) err->line = line;
            return KT_ERR_PARSE;
        }
        len += got;
        if (got == 0) break;
    }
    if (ferror(f)) { /* a directory, say */
        fclose(f);
        KT_FREE(text);
        return kt__fail(err, KT_ERR_IO, 0, "cannot read %s %s", what, path);
    }
    fclose(f);
    text[len] = '\0';
    *text_out = text;
    *len_out = len;
    return KT_OK;
}

kt_status kt_graph_load_file(kt_graph **out, const char *path, kt_error *err) {
    char *text;
    size_t len;
    kt_status s;
    *out = NULL;
    if ((s = kt__read_file(path, "model file", &text, &len, err)) != KT_OK)
        return s;
    if ((s = kt_graph_create(out, err)) == KT_OK)
        s = kt_graph_parse(*out, text, len, err);
    KT_FREE(text);
    if (s != KT_OK) {
        kt_graph_destroy(*out);
        *out = NULL;
        kt__error_in_file(err, path);
    }
    return s;
}

/* --------------------------------------------------------------- analysis */

void kt_op_var_box(const kt_op *op, kt_range *box) {
    int v;
    for (v = 0; v < op->nvars; v++) {
        box[v].lo = 0;
        box[v].hi = op->var[v].extent;
    }
}

int kt_op_strategies(const kt_op *op, int k, const kt_range *box, int *vars) {
    int v, n = 0;
    for (v = 0; v < op->nvars; v++) {
        int64_t extent = box ? box[v].hi - box[v].lo : op->var[v].extent;
        if (op->var[v].splittable && extent >= k) vars[n++] = v;
    }
    return n;
}

void kt_op_input_box(const kt_graph *g, const kt_op *op, int input,
                     const kt_range *box, kt_box *region, int *empty) {
    const kt_tensor *t = &g->tensor[op->input[input]];
    int a, d, any = 0;
    memset(region, 0, sizeof *region);
    for (a = 0; a < op->naccess; a++) {
        const kt_access *ac = &op->access[a];
        kt_box r;
        int hit = 1;
        if (ac->input != input) continue;
        for (d = 0; d < t->rank; d++) {
            if (ac->whole[d]) {
                r.r[d].lo = 0;
                r.r[d].hi = t->shape[d];
            } else {
                r.r[d] = kt_sym_interval_eval(&ac->dim[d], op->nvars, box);
            }
            /* a padded read needs only the part inside the tensor */
            if (r.r[d].lo < 0) r.r[d].lo = 0;
            if (r.r[d].hi > t->shape[d]) r.r[d].hi = t->shape[d];
            if (r.r[d].hi <= r.r[d].lo) hit = 0;
        }
        if (!hit) continue;
        for (d = 0; d < t->rank; d++) {
            if (!any || r.r[d].lo < region->r[d].lo) region->r[d].lo = r.r[d].lo;
            if (!any || r.r[d].hi > region->r[d].hi) region->r[d].hi = r.r[d].hi;
        }
        any = 1;
    }
    *empty = !any;
}

void kt_op_output_box(const kt_op *op, const kt_range *box, kt_box *region) {
    int d;
    memset(region, 0, sizeof *region);
    for (d = 0; d < op->out_rank; d++) region->r[d] = box[d];
}

kt_status kt_op_placements(const kt_graph *g, const kt_op *op,
                           const kt_factors *f, const int *split_var,
                           kt_placement *needed, kt_placement *produced,
                           kt_error *err) {
    int64_t ndev = kt_factors_devices(f), dev, parts[KT_MAX_VARS];
    int i, j, v;
    kt_status s;
    for (v = 0; v < op->nvars; v++) parts[v] = 1;
    for (i = 0; i < f->count; i++) {
        v = split_var[i];
        if (v == KT_SPLIT_REPLICATE) continue;
        if (v < 0 || v >= op->nvars)
            return kt__fail(err, KT_ERR_INVALID, op->line, "op %s: cut %d "
                            "splits variable %d, but the statement has %d",
                            op->name, i + 1, v, op->nvars);
        /* (the op is named: generated backward and update ops have no
           line of their own, and share variable names with others) */
        if (!op->var[v].splittable)
            return kt__fail(err, KT_ERR_INVALID, op->line, "op %s: cut %d: "
                            "%s of opaque(%s) cannot be split", op->name,
                            i + 1, op->var[v].name, op->opaque);
        parts[v] *= f->k[i];
        if (parts[v] > op->var[v].extent)
            return kt__fail(err, KT_ERR_SHAPE, op->line, "op %s: index "
                            "variable %s (%lld) has fewer elements than %lld "
                            "parts", op->name, op->var[v].name,
                            (long long)op->var[v].extent,
                            (long long)parts[v]);
    }
    for (j = 0; j < op->ninputs; j++) memset(&needed[j], 0, sizeof needed[j]);
    memset(produced, 0, sizeof *produced);
    s = kt_placement_init(produced, op->out_rank, ndev, err);
    for (j = 0; j < op->ninputs && s == KT_OK; j++)
        s = kt_placement_init(&needed[j], g->tensor[op->input[j]].rank, ndev,
                              err);
    if (s != KT_OK) {
        for (j = 0; j < op->ninputs; j++) kt_placement_free(&needed[j]);
        kt_placement_free(produced);
        return s;
    }
    for (i = 0; i < f->count; i++)
        if (split_var[i] >= 0 && op->var[split_var[i]].reduction)
            produced->partials *= f->k[i];
    produced->grid = 1; /* output blocks of balanced splits */
    for (dev = 0; dev < ndev; dev++) {
        kt_range box[KT_MAX_VARS];
        int coords[KT_MAX_CUTS], empty;
        int64_t pc = 0;
        kt_device_coords(f, dev, coords);
        kt_op_var_box(op, box);
        /* Partition-n-reduce at every cut (Tofu 4.2, 5.2): the cut's
           variable range is split among its k groups; splitting a
           reduction variable makes the output a partial sum whose class
           numbers the reduction cuts mixed-radix. */
        for (i = 0; i < f->count; i++) {
            v = split_var[i];
            if (v == KT_SPLIT_REPLICATE) continue; /* every group: all */
            box[v] = kt_split_range(box[v], f->k[i], coords[i]);
            if (op->var[v].reduction) pc = pc * f->k[i] + coords[i];
        }
        kt_op_output_box(op, box, &produced->box[dev]);
        produced->partial_class[dev] = pc;
        for (j = 0; j < op->ninputs; j++) {
            kt_op_input_box(g, op, j, box, &needed[j].box[dev], &empty);
            if (empty) memset(&needed[j].box[dev], 0, sizeof(kt_box));
        }
    }
    kt__ok(err);
    return KT_OK;
}

/* ------------------------------------------------------------------ plans */

kt_status kt_plan_init(kt_plan *p, const kt_graph *g, const kt_factors *f,
                       kt_error *err) {
    int t, o, i;
    kt_status s;
    if (!p) return kt__fail(err, KT_ERR_INVALID, 0, "no plan (NULL)");
    memset(p, 0, sizeof *p);
    if ((s = kt__graph_check_final(g, err)) != KT_OK ||
        (s = kt_factors_check(f, err)) != KT_OK)
        return s;
    p->f = *f;
    p->ntensors = g->ntensor;
    p->nops = g->nop;
    p->tiling = (kt_tiling *)kt__calloc((size_t)g->ntensor + 1,
                                        sizeof *p->tiling);
    p->split = (int *)kt__calloc((size_t)(g->nop + 1) * KT_MAX_CUTS,
                                 sizeof(int));
    if (!p->tiling || !p->split) {
        kt_plan_free(p);
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory for a plan");
    }
    for (t = 0; t < g->ntensor; t++) {
        p->tiling[t].ncuts = f->count;
        for (i = 0; i < f->count; i++) p->tiling[t].cut[i] = KT_CUT_R;
    }
    for (o = 0; o < g->nop; o++)
        for (i = 0; i < KT_MAX_CUTS; i++)
            p->split[o * KT_MAX_CUTS + i] = KT_SPLIT_REPLICATE;
    kt__ok(err);
    return KT_OK;
}

void kt_plan_free(kt_plan *p) {
    if (!p) return;
    KT_FREE(p->tiling);
    KT_FREE(p->split);
    p->tiling = NULL;
    p->split = NULL;
}

static kt_factors kt__prefix_factors(const kt_factors *f, int ncuts) {
    kt_factors fp = *f;
    fp.count = ncuts;
    return fp;
}

static kt_tiling kt__prefix_tiling(const kt_tiling *t, int ncuts) {
    kt_tiling tp = *t;
    tp.ncuts = ncuts;
    return tp;
}

/* Cost of converting tensor x, tiled `tiling` over the first ncuts cuts,
   to (or from) a placement. */
static kt_status kt__tensor_conversion(const kt_graph *g, int x,
                                       const kt_tiling *tiling,
                                       const kt_factors *fp,
                                       const kt_placement *other, int to_tensor,
                                       int64_t *bytes, kt_error *err) {
    const kt_tensor *t = &g->tensor[x];
    kt_placement tp;
    kt_status s = kt_placement_from_tiling(&tp, tiling, t->rank, t->shape, fp,
                                           err);
    if (s != KT_OK) return s;
    if (to_tensor)
        s = kt_conversion_cost(t->rank, t->shape, t->elem_bytes, other, &tp,
                               bytes, NULL, err);
    else
        s = kt_conversion_cost(t->rank, t->shape, t->elem_bytes, &tp, other,
                               bytes, NULL, err);
    kt_placement_free(&tp);
    return s;
}

static void kt__free_op_placements(const kt_op *op, kt_placement *needed,
                                   kt_placement *produced) {
    int j;
    for (j = 0; j < op->ninputs; j++) kt_placement_free(&needed[j]);
    kt_placement_free(produced);
}

/* DESIGN.md "the cost of a plan is the sum over operators of the cost of
   converting each input to what the chosen strategy needs plus the
   strategy's output to the output tensor's tiling". */
static kt_status kt__op_cost(const kt_graph *g, int o, const kt_factors *fp,
                             const kt_tiling *tilings, const int *split,
                             int64_t *bytes, kt_error *err) {
    const kt_op *op = &g->op[o];
    kt_placement needed[KT_MAX_VARS], produced;
    int64_t part;
    int j;
    kt_status s;
    *bytes = 0;
    if (fp->count == 0) return KT_OK;
    s = kt_op_placements(g, op, fp, split, needed, &produced, err);
    if (s != KT_OK) return s;
    for (j = 0; j < op->ninputs && s == KT_OK; j++) {
        kt_tiling tp = kt__prefix_tiling(&tilings[op->input[j]], fp->count);
        s = kt__tensor_conversion(g, op->input[j], &tp, fp, &needed[j], 0,
                                  &part, err);
        *bytes += part;
    }
    if (s == KT_OK) {
        kt_tiling tp = kt__prefix_tiling(&tilings[op->output], fp->count);
        s = kt__tensor_conversion(g, op->output, &tp, fp, &produced, 1, &part,
                                  err);
        *bytes += part;
    }
    kt__free_op_placements(op, needed, &produced);
    return s;
}

/* The plan is one of g's: as many tilings and splits as g has tensors
   and ops, and factors that number them.  What the functions that look
   at one op or tensor need (checking every tiling would make a loop over
   the ops quadratic); kt__plan_check adds the rest. */
static kt_status kt__plan_shape_check(const kt_graph *g, const kt_plan *p,
                                      kt_error *err) {
    if (!g || !p)
        return kt__fail(err, KT_ERR_INVALID, 0, "no %s (NULL)",
                        g ? "plan" : "graph");
    if (!p->tiling || !p->split)
        return kt__fail(err, KT_ERR_INVALID, 0, "the plan has no tilings or "
                        "splits (freed, or never initialised)");
    if (p->ntensors != g->ntensor || p->nops != g->nop)
        return kt__fail(err, KT_ERR_INVALID, 0, "the plan has %d tensors and "
                        "%d ops, the graph %d and %d", p->ntensors, p->nops,
                        g->ntensor, g->nop);
    return kt_factors_check(&p->f, err);
}

/* Op op's conversions under the plan truncated to its first ncuts cuts
   (all checked by the caller). */
static kt_status kt__plan_op_cost(const kt_graph *g, const kt_plan *p, int op,
                                  int ncuts, int64_t *bytes, kt_error *err) {
    kt_factors fp = kt__prefix_factors(&p->f, ncuts);
    return kt__op_cost(g, op, &fp, p->tiling, &p->split[op * KT_MAX_CUTS],
                       bytes, err);
}

kt_status kt_plan_op_cost(const kt_graph *g, const kt_plan *p, int op,
                          int ncuts, int64_t *bytes, kt_error *err) {
    kt_status s = kt__plan_shape_check(g, p, err);
    if (s != KT_OK) return s;
    if (!bytes) return kt__fail(err, KT_ERR_INVALID, 0, "no bytes (NULL)");
    if (op < 0 || op >= g->nop || ncuts < 0 || ncuts > p->f.count)
        return kt__fail(err, KT_ERR_INVALID, 0, "op %d or cut count %d out "
                        "of range (%d ops, %d cuts)", op, ncuts, g->nop,
                        p->f.count);
    return kt__plan_op_cost(g, p, op, ncuts, bytes, err);
}

/* A plan of g's shape: every tiling valid, and every op's split at each
   cut one of its variables or KT_SPLIT_REPLICATE -- what the consumers
   index arrays with (whether the variable can take the split is
   kt_op_placements' to say, with its reason). */
static kt_status kt__plan_check(const kt_graph *g, const kt_plan *p,
                                kt_error *err) {
    int t, o, i;
    kt_status s;
    if ((s = kt__graph_check_final(g, err)) != KT_OK ||
        (s = kt__plan_shape_check(g, p, err)) != KT_OK)
        return s;
    for (t = 0; t < g->ntensor; t++) {
        const kt_tensor *x = &g->tensor[t];
        s = kt_tiling_check(&p->tiling[t], x->name, x->rank, x->shape, &p->f,
                            0, err);
        if (s != KT_OK) return s;
    }
    for (o = 0; o < g->nop; o++)
        for (i = 0; i < p->f.count; i++) {
            int v = p->split[o * KT_MAX_CUTS + i];
            if (v != KT_SPLIT_REPLICATE && (v < 0 || v >= g->op[o].nvars))
                return kt__fail(err, KT_ERR_INVALID, 0, "op %s: cut %d "
                                "splits variable %d; it has %d",
                                g->op[o].name, i + 1, v, g->op[o].nvars);
        }
    return KT_OK;
}

kt_status kt_plan_eval(const kt_graph *g, kt_plan *p, kt_error *err) {
    int64_t before = 0;
    int i, o;
    kt_status s = kt__plan_check(g, p, err);
    if (s != KT_OK) return s;
    p->total_bytes = 0;
    memset(p->cut_bytes, 0, sizeof p->cut_bytes);
    /* The plan truncated to cuts 1..i is a plan for k_1*..*k_i groups; what
       cut i adds is the difference, so the per-cut figures sum to the
       exact total. */
    for (i = 1; i <= p->f.count; i++) {
        int64_t total = 0, bytes;
        for (o = 0; o < g->nop; o++) {
            if ((s = kt__plan_op_cost(g, p, o, i, &bytes, err)) != KT_OK)
                return s;
            total += bytes;
        }
        p->cut_bytes[i - 1] = total - before;
        before = total;
    }
    p->total_bytes = before;
    kt__ok(err);
    return KT_OK;
}

/* The last part of a balanced split is the largest (ceil(n/k)), at every
   level of nesting, and tiles form a grid: so the last device holds the
   largest tile of every tensor (and computes the largest tile of every
   op). */
static int64_t kt__largest_tile_bytes(const kt_graph *g, const kt_plan *p,
                                      int t) {
    const kt_tensor *x = &g->tensor[t];
    kt_box b;
    int64_t v = x->elem_bytes;
    int k;
    kt_tiling_device_box(&p->tiling[t], x->rank, x->shape, &p->f,
                         kt_factors_devices(&p->f) - 1, &b, NULL);
    for (k = 0; k < x->rank; k++) v *= b.r[k].hi - b.r[k].lo;
    return v;
}

int64_t kt_plan_tensor_bytes(const kt_graph *g, const kt_plan *p, int t) {
    if (kt__plan_shape_check(g, p, NULL) != KT_OK || t < 0 ||
        t >= g->ntensor)
        return -1;
    return kt__largest_tile_bytes(g, p, t);
}

int kt_plan_format_split(const kt_graph *g, const kt_plan *p, int op,
                         char *buf, size_t cap) {
    char tmp[KT_MAX_CUTS * (KT_NAME_MAX + 1) + 2];
    size_t n = 0;
    int i;
    if (cap) buf[0] = '\0';
    if (kt__plan_shape_check(g, p, NULL) != KT_OK || op < 0 || op >= g->nop)
        return -1;
    for (i = 0; i < p->f.count; i++) {
        int v = p->split[op * KT_MAX_CUTS + i];
        n += (size_t)snprintf(tmp + n, sizeof tmp - n, "%s%s", i ? "." : "",
                              v < 0 ? "*" : g->op[op].var[v].name);
    }
    if (p->f.count == 0) n += (size_t)snprintf(tmp, sizeof tmp, "-");
    if (cap) snprintf(buf, cap, "%s", tmp);
    return (int)n;
}

kt_status kt_plan_parse_split(const kt_graph *g, kt_plan *p, int op,
                              const char *text, kt_error *err) {
    const kt_op *o;
    const char *q = text;
    int i;
    kt_status s = kt__plan_shape_check(g, p, err);
    if (s != KT_OK) return s;
    if (op < 0 || op >= g->nop)
        return kt__fail(err, KT_ERR_INVALID, 0, "op %d out of range (%d ops)",
                        op, g->nop);
    if (!text)
        return kt__fail(err, KT_ERR_INVALID, 0, "op %s: no strategy (NULL)",
                        g->op[op].name);
    o = &g->op[op];
    if (p->f.count == 0 && strcmp(text, "-") == 0) {
        kt__ok(err);
        return KT_OK;
    }
    for (i = 0; i < p->f.count; i++) {
        char name[KT_NAME_MAX];
        size_t n = 0;
        int v;
        while (q[n] && q[n] != '.') n++;
        if (n == 0 || n >= sizeof name)
            return kt__fail(err, KT_ERR_INVALID, 0, "op %s: strategy '%s' "
                            "needs %d variable names joined by dots", o->name,
                            text, p->f.count);
        memcpy(name, q, n);
        name[n] = '\0';
        if (strcmp(name, "*") == 0) v = KT_SPLIT_REPLICATE;
        else if ((v = kt__find_var(o, name)) < 0)
            return kt__fail(err, KT_ERR_INVALID, 0, "op %s: strategy '%s': "
                            "%s is not one of its index variables", o->name,
                            text, name);
        p->split[op * KT_MAX_CUTS + i] = v;
        q += n;
        if (*q == '.' && i + 1 < p->f.count) q++;
        else if (i + 1 < p->f.count)
            return kt__fail(err, KT_ERR_INVALID, 0, "op %s: strategy '%s' "
                            "has %d cut%s, the plan %d", o->name, text, i + 1,
                            i ? "s" : "", p->f.count);
    }
    if (*q)
        return kt__fail(err, KT_ERR_INVALID, 0, "op %s: strategy '%s' has "
                        "more cuts than the plan's %d", o->name, text,
                        p->f.count);
    kt__ok(err);
    return KT_OK;
}

/* ----------------------------------------------------- machine and time */

kt_machine kt_machine_default(void) {
    kt_machine m;
    memset(&m, 0, sizeof m);
    m.nlevels = 1;
    m.level_bw[0] = 450e9;
    m.level_fanout[0] = 0;
    m.peak_flops = 67e12;
    m.mem_bw = 4.8e12;
    return m;
}

/* A rate (flop/s, bytes/s) from 1 to `most`: below 1 a large op's or
   transfer's time can overflow to infinity (1e10 bytes at 1e-310 bytes/s),
   which the simulator refuses and a modelled step would print as nothing
   finite.  False for NaN too. */
static int kt__rate_ok(double x, double most) { return x >= 1 && x <= most; }

/* The fastest link a topology may have, bytes/s: an exabyte a second,
   far past any interconnect, for the plan's cost model and the
   simulator alike (a spec that one takes the other takes); and the
   largest device rate (flop/s, memory bytes/s). */
#define KT__MAX_BANDWIDTH 1e18
#define KT__MAX_RATE 1e30

/* Whether text[0..len) is written as a plain decimal number: a digit or
   a point first, no hex.  strtod alone would also skip leading blanks,
   take a sign and read C's hex floats; rates, latencies and the CLI's
   decimal options are read through this first. */
static int kt__decimal_text(const char *text, size_t len) {
    size_t i;
    if (!text || len == 0) return 0;
    if (!isdigit((unsigned char)text[0]) && text[0] != '.') return 0;
    for (i = 0; i < len; i++)
        if (text[i] == 'x' || text[i] == 'X') return 0;
    return 1;
}

/* A rate with an optional prefix K, M, G or T (powers of 1000, either
   case: link speeds are quoted both ways, "100Gbps", "25gbit"), an
   optional unit b or bit (bits) or B (bytes), and an optional "/s" ("ps"
   after a unit): "300G" -> 3e11, "400Gb" -> 5e10, "50GB/s" -> 5e10,
   "100gbps" and "100Gbit/s" -> 1.25e10; 0 unless from 1 to `most`. */
static int kt__parse_rate(const char *text, size_t len, double most,
                          double *out) {
    static const char prefixes[] = "kmgt";
    char buf[64], *end;
    const char *at;
    double v, scale = 1;
    int i, unit = 0;
    if (len >= sizeof buf || !kt__decimal_text(text, len)) return 0;
    memcpy(buf, text, len);
    buf[len] = '\0';
    v = strtod(buf, &end);
    if (end == buf) return 0;
    at = *end ? strchr(prefixes, tolower((unsigned char)*end)) : NULL;
    if (at) {
        for (i = 0; i <= at - prefixes; i++) scale *= 1e3;
        end++;
    }
    if (!strncmp(end, "bit", 3) || *end == 'b') {
        scale /= 8;
        end += strncmp(end, "bit", 3) ? 1 : 3;
        unit = 1;
    } else if (*end == 'B') {
        end++;
        unit = 1;
    }
    if (!strcmp(end, "/s") || (unit && !strcmp(end, "ps"))) end += 2;
    if (*end || !kt__rate_ok(v * scale, most)) return 0; /* NaN, inf too */
    *out = v * scale;
    return 1;
}

kt_status kt_machine_parse(const char *spec, kt_machine *m, kt_error *err) {
    const char *f[5];
    size_t flen[5];
    int nf = 0;
    const char *p = spec;
    *m = kt_machine_default();
    if (!spec || !*spec)
        return kt__fail(err, KT_ERR_INVALID, 0, "topology: empty spec");
    while (nf < 5) {
        const char *q = strchr(p, ':');
        f[nf] = p;
        flen[nf] = q ? (size_t)(q - p) : strlen(p);
        nf++;
        if (!q) break;
        p = q + 1;
    }
    if (nf == 3 && flen[0] == 4 && !strncmp(f[0], "flat", 4)) {
        char *end;
        long n = strtol(f[1], &end, 10);
        if (end != f[1] + flen[1] || n < 1 || !isdigit((unsigned char)f[1][0]))
            return kt__fail(err, KT_ERR_INVALID, 0, "topology '%s': device "
                            "count must be a positive integer", spec);
        if (!kt__parse_rate(f[2], flen[2], KT__MAX_BANDWIDTH, &m->level_bw[0]))
            return kt__fail(err, KT_ERR_INVALID, 0, "topology '%s': bad "
                            "bandwidth '%.*s' (1 to 1e18 bytes/s, e.g. 300G, "
                            "400Gb)", spec,
                            (int)flen[2], f[2]);
        m->nlevels = 1;
        m->level_fanout[0] = n;
    } else if (nf == 4 && flen[0] == 5 && !strncmp(f[0], "nodes", 5)) {
        char *end;
        int k;
        long nodes = strtol(f[1], &end, 10), gpus;
        if (end == f[1] || *end != 'x' || nodes < 1 ||
            !isdigit((unsigned char)f[1][0]) ||
            !isdigit((unsigned char)end[1]))
            return kt__fail(err, KT_ERR_INVALID, 0, "topology '%s': expected "
                            "nodes:MxG:INTRA_BW:INTER_BW", spec);
        gpus = strtol(end + 1, &end, 10);
        if (end != f[1] + flen[1] || gpus < 1)
            return kt__fail(err, KT_ERR_INVALID, 0, "topology '%s': expected "
                            "MxG such as 4x8", spec);
        m->nlevels = 2;
        m->level_fanout[0] = nodes;
        m->level_fanout[1] = gpus;
        /* level 0 is the slowest, the network between nodes (field 3) */
        for (k = 2; k <= 3; k++)
            if (!kt__parse_rate(f[k], flen[k], KT__MAX_BANDWIDTH,
                                &m->level_bw[3 - k]))
                return kt__fail(err, KT_ERR_INVALID, 0, "topology '%s': bad "
                                "%s bandwidth '%.*s' (1 to 1e18 bytes/s, "
                                "e.g. 450G, 400Gb)", spec,
                                k == 2 ? "INTRA" : "INTER", (int)flen[k],
                                f[k]);
    } else {
        return kt__fail(err, KT_ERR_INVALID, 0, "topology '%s': expected "
                        "flat:N:BW or nodes:MxG:INTRA_BW:INTER_BW", spec);
    }
    kt__ok(err);
    return KT_OK;
}

/* A machine given directly (not parsed): what kt_machine_parse and
   topology files guarantee -- 1 to KT_MAX_CUTS levels, every rate a
   finite number from 1 to its most, fanouts not negative. */
static kt_status kt__machine_check(const kt_machine *m, kt_error *err) {
    int l;
    if (m->nlevels < 1 || m->nlevels > KT_MAX_CUTS)
        return kt__fail(err, KT_ERR_INVALID, 0, "machine: %d levels; from 1 "
                        "to %d allowed", m->nlevels, KT_MAX_CUTS);
    for (l = 0; l < m->nlevels; l++) {
        if (!kt__rate_ok(m->level_bw[l], KT__MAX_BANDWIDTH))
            return kt__fail(err, KT_ERR_INVALID, 0, "machine: level %d's "
                            "bandwidth %g is not from 1 to %g bytes/s", l,
                            m->level_bw[l], KT__MAX_BANDWIDTH);
        if (m->level_fanout[l] < 0)
            return kt__fail(err, KT_ERR_INVALID, 0, "machine: level %d's "
                            "fanout %lld is negative (0: any)", l,
                            (long long)m->level_fanout[l]);
    }
    if (!kt__rate_ok(m->peak_flops, KT__MAX_RATE) ||
        !kt__rate_ok(m->mem_bw, KT__MAX_RATE))
        return kt__fail(err, KT_ERR_INVALID, 0, "machine: peak %g flop/s and "
                        "memory bandwidth %g bytes/s must be from 1 to %g",
                        m->peak_flops, m->mem_bw, KT__MAX_RATE);
    return KT_OK;
}

/* The machine's levels cover exactly the plan's devices: every fanout
   known and their product the device count. */
static int kt__machine_fits(const kt_machine *m, const kt_factors *f) {
    int64_t n = 1;
    int l;
    if (m->nlevels < 1 || m->nlevels > KT_MAX_CUTS) return 0;
    for (l = 0; l < m->nlevels; l++) {
        if (m->level_fanout[l] <= 0 || n > INT64_MAX / m->level_fanout[l])
            return 0;
        n *= m->level_fanout[l];
    }
    return n == kt_factors_devices(f);
}

/* SOYBEAN 5.1 maps cut 1 to the slowest level.  Cut i's bytes move
   between devices that differ only in their cut-i coordinate, and such a
   group is as slow as the slowest link inside it, so the cut's level is
   the slowest that any such group crosses.  Devices are numbered cut 1
   most significant (DESIGN.md), so a group is a stride-S_i comb inside a
   block of B_i = k_i * S_i consecutive devices (S_i the product of the
   later factors); level l's groups are blocks of `span` consecutive
   devices (kt_topology_level's), and a comb crosses no boundary of them
   exactly when span is a multiple of B_i.  So: the first level whose
   span is not.  With factors that follow the fanouts (8x8 and 2^6) cuts
   1-3 land on level 0 and 4-6 on level 1; with factors across a fanout
   (nodes:2x3 and factors 3,2) both cuts cross nodes.  A machine that
   does not describe the plan's devices (a fanout of 0, "any", or another
   device count) has its levels taken in order instead, a cut on the
   first level with groups left to divide. */
int kt_machine_level_of_cut(const kt_machine *m, const kt_factors *f,
                            int cut) {
    int level = 0, i;
    int64_t used = 1, block = 1, span = kt_factors_devices(f);
    if (kt__machine_fits(m, f)) {
        for (i = f->count - 1; i >= cut && i >= 0; i--) block *= f->k[i];
        for (level = 0; level + 1 < m->nlevels; level++) {
            span /= m->level_fanout[level];
            if (span % block != 0) break;
        }
        return level;
    }
    for (i = 0; i <= cut && i < f->count; i++) {
        while (level + 1 < m->nlevels && level + 1 < KT_MAX_CUTS &&
               m->level_fanout[level] > 0 &&
               used >= m->level_fanout[level]) {
            level++;
            used = 1;
        }
        used *= f->k[i];
    }
    return level;
}

/* SOYBEAN 5.1 maps cut 1 to the slowest level, so the default factors
   on a machine follow its levels: each level's fanout, slowest first, in
   prime factors, largest first within the level.  Every cut then stays
   inside one level (kt_machine_level_of_cut), where the largest-first
   order of kt_factors_default can make a cut straddle two (nodes:2x3
   with 3,2 puts devices of different nodes in one group of cut 2, and
   both cuts run at the network's speed).  The same primes as
   kt_factors_default, so the same number of cuts; its factors, too,
   when the fanouts do not multiply to n. */
kt_status kt_machine_factors(const kt_machine *m, int64_t n, kt_factors *out,
                             kt_error *err) {
    kt_status s;
    int l;
    if ((s = kt_factors_default(n, out, err)) != KT_OK) return s;
    if (!m || !kt__machine_fits(m, out)) return KT_OK;
    /* the fanouts multiply to n: the same primes in another order, so
       they fit in KT_MAX_CUTS as n's did */
    out->count = 0;
    for (l = 0; l < m->nlevels; l++)
        (void)kt__append_prime_factors(m->level_fanout[l], out, err);
    return KT_OK;
}

double kt_op_flops_per_point(const kt_op *op) { return op->flops; }

/* How many integers v in [lo, hi) put a*v + k in [lower, upper] (a != 0). */
static int64_t kt__affine_hits(int64_t a, int64_t k, int64_t lower,
                               int64_t upper, int64_t lo, int64_t hi) {
    int64_t first, last;
    if (a > 0) {
        first = -kt__floor_div(-(lower - k), a); /* ceil((lower - k) / a) */
        last = kt__floor_div(upper - k, a);
    } else {
        first = -kt__floor_div(-(upper - k), a);
        last = kt__floor_div(lower - k, a);
    }
    if (first < lo) first = lo;
    if (last > hi - 1) last = hi - 1;
    return last >= first ? last - first + 1 : 0;
}

/* The share of the box's points at which dimension d of padded read `acc`
   lands inside its tensor: exact over the (at most two) variables its
   index uses, one counted in closed form, the other enumerated; 1 when it
   uses more or the enumeration would be long. */
static double kt__pad_share_dim(const kt_access *acc, int d, int64_t extent,
                                const kt_range *box) {
    const kt_sym_interval *s = &acc->dim[d];
    int64_t coef[KT_MAX_VARS], upper = s->divisor * extent - 1, hits = 0, x;
    int v, used[2], n = 0;
    for (v = 0; v < KT_MAX_VARS; v++) {
        coef[v] = s->lower.lo_coef[v] + s->lower.hi_coef[v];
        if (coef[v] && n < 2) used[n] = v;
        if (coef[v]) n++;
    }
    if (n == 0) return s->lower.c >= 0 && s->lower.c <= upper ? 1.0 : 0.0;
    if (n > 2) return 1.0;
    if (n == 2 && box[used[1]].hi - box[used[1]].lo <
                      box[used[0]].hi - box[used[0]].lo) {
        v = used[0]; /* enumerate the shorter range */
        used[0] = used[1];
        used[1] = v;
    }
    if (n == 1)
        return (double)kt__affine_hits(coef[used[0]], s->lower.c, 0, upper,
                                       box[used[0]].lo, box[used[0]].hi) /
               (double)(box[used[0]].hi - box[used[0]].lo);
    if (box[used[0]].hi - box[used[0]].lo > 100000) return 1.0;
    for (x = box[used[0]].lo; x < box[used[0]].hi; x++)
        hits += kt__affine_hits(coef[used[1]], s->lower.c + coef[used[0]] * x,
                                0, upper, box[used[1]].lo, box[used[1]].hi);
    return (double)hits / ((double)(box[used[0]].hi - box[used[0]].lo) *
                           (double)(box[used[1]].hi - box[used[1]].lo));
}

/* The share of a product-sum's points that add anything: a product with a
   padded read is zero where the read falls outside its tensor, and a
   kernel skips those terms.  It matters for the transposed convolutions
   autodiff writes for strided ones (a stride-2 3x3 convolution's input
   gradient sums over every output row, of which about 1.5 in 8 meet the
   kernel along each axis).  Dimensions and reads multiply as if
   independent (exact for the usual convolution, whose axes use disjoint
   variables); not a product-sum: 1. */
static double kt__useful_share(const kt_graph *g, const kt_op *op,
                               const kt_range *box) {
    double share = 1;
    int a, d, e;
    if (op->reducer != KT_REDUCE_SUM) return 1;
    for (e = 0; e < op->nexpr; e++) {
        const kt_expr *x = &op->expr[e];
        if (x->kind == KT_EXPR_UNARY ||
            (x->kind == KT_EXPR_BINARY && x->fn != '*'))
            return 1;
    }
    for (a = 0; a < op->naccess; a++) {
        const kt_access *acc = &op->access[a];
        const kt_tensor *x = &g->tensor[acc->tensor];
        if (!acc->padded) continue;
        for (d = 0; d < x->rank; d++)
            if (!acc->whole[d])
                share *= kt__pad_share_dim(acc, d, x->shape[d], box);
    }
    return share;
}

/* The work of one sub-operator on its box (the roofline's two terms):
   the flops of the terms that are not zero (kt__useful_share) and the
   bytes of its input and output regions.  The level DP's time objective
   and the simulator's compute tasks both price a tile here. */
static void kt__box_work(const kt_graph *g, const kt_op *op,
                         const kt_range *box, double *flops, double *bytes) {
    double points = 1;
    kt_box r;
    int v, j, d, empty;
    for (v = 0; v < op->nvars; v++) points *= (double)(box[v].hi - box[v].lo);
    *flops = points * kt__useful_share(g, op, box) * kt_op_flops_per_point(op);
    *bytes = 0;
    for (j = 0; j < op->ninputs; j++) {
        double vol = g->tensor[op->input[j]].elem_bytes;
        kt_op_input_box(g, op, j, box, &r, &empty);
        if (empty) continue;
        for (d = 0; d < g->tensor[op->input[j]].rank; d++)
            vol *= (double)(r.r[d].hi - r.r[d].lo);
        *bytes += vol;
    }
    kt_op_output_box(op, box, &r);
    {
        double vol = g->tensor[op->output].elem_bytes;
        for (d = 0; d < op->out_rank; d++) vol *= (double)(r.r[d].hi - r.r[d].lo);
        *bytes += vol;
    }
}

static int kt__same_interval(const kt_sym_interval *a,
                             const kt_sym_interval *b) {
    int v;
    if (a->divisor != b->divisor || a->lower.c != b->lower.c ||
        a->upper.c != b->upper.c)
        return 0;
    for (v = 0; v < KT_MAX_VARS; v++)
        if (a->lower.lo_coef[v] != b->lower.lo_coef[v] ||
            a->lower.hi_coef[v] != b->lower.hi_coef[v] ||
            a->upper.lo_coef[v] != b->upper.lo_coef[v] ||
            a->upper.hi_coef[v] != b->upper.hi_coef[v])
            return 0;
    return 1;
}

/* The variables (a bit each) whose position, not only their range's
   length, changes what a tile of op reads -- those indexing a dimension
   that is
   - read padded: an edge tile reads padding where a middle one reads
     data (and its product-sum skips those zeros, kt__useful_share);
   - read divided: x[i/2] over an even range starting at an odd i reads
     one element more than starting at an even one;
   - read twice from one input with different indices: x[i,j] + x[j,i]
     reads the box around both, the larger the farther apart they are.
   Any other read's region has a size set by the ranges' lengths alone. */
static unsigned kt__position_vars(const kt_graph *g, const kt_op *op) {
    unsigned mask = 0;
    int a, b, d, v;
    typedef char kt__mask_holds_every_var[KT_MAX_VARS <= 32 ? 1 : -1];
    for (a = 0; a < op->naccess; a++) {
        const kt_access *acc = &op->access[a];
        for (d = 0; d < g->tensor[acc->tensor].rank; d++) {
            const kt_sym_interval *x = &acc->dim[d];
            int moves = acc->padded || x->divisor != 1;
            if (acc->whole[d]) continue;
            for (b = 0; b < op->naccess && !moves; b++)
                if (b != a && op->access[b].input == acc->input &&
                    (op->access[b].whole[d] ||
                     !kt__same_interval(&op->access[b].dim[d], x)))
                    moves = 1;
            if (!moves) continue;
            for (v = 0; v < KT_MAX_VARS; v++)
                if (x->lower.lo_coef[v] || x->lower.hi_coef[v] ||
                    x->upper.lo_coef[v] || x->upper.hi_coef[v])
                    mask |= 1u << v;
        }
    }
    (void)sizeof(kt__mask_holds_every_var);
    return mask;
}

/* Roofline time of op's tile at device coordinates coords: the slower of
   compute and memory traffic (kt__box_work). */
static double kt__tile_seconds(const kt_graph *g, const kt_op *op,
                               const kt_factors *f, const int *split,
                               const int *coords, const kt_machine *m) {
    kt_range box[KT_MAX_VARS];
    double flops, bytes, a, b;
    int i;
    kt_op_var_box(op, box);
    for (i = 0; i < f->count; i++)
        if (split[i] >= 0)
            box[split[i]] = kt_split_range(box[split[i]], f->k[i], coords[i]);
    kt__box_work(g, op, box, &flops, &bytes);
    a = flops / m->peak_flops;
    b = bytes / m->mem_bw;
    return a > b ? a : b;
}

/* The time of op's sub-operator on its slowest device: the operator ends
   when that one does.  The last device holds the largest tile of every
   balanced split (kt_plan_tensor_bytes), which is the slowest unless
   where a tile sits changes its work (kt__position_vars: padded, divided
   and doubly read dimensions).  So the cuts that split such a variable
   try every position, and the other cuts keep the last.  moving is
   kt__position_vars(g, op), which the caller computes once per op. */
static double kt__op_seconds(const kt_graph *g, int o, const kt_factors *f,
                             const int *split, const kt_machine *m,
                             unsigned moving) {
    const kt_op *op = &g->op[o];
    int coords[KT_MAX_CUTS], vary[KT_MAX_CUTS], nvary = 0, i, j;
    double worst = 0;
    kt_device_coords(f, kt_factors_devices(f) - 1, coords);
    for (i = 0; i < f->count; i++)
        if (split[i] >= 0 && (moving >> split[i] & 1u)) {
            vary[nvary++] = i;
            coords[i] = 0;
        }
    for (;;) { /* every combination of the varied cuts' positions */
        double t = kt__tile_seconds(g, op, f, split, coords, m);
        if (t > worst) worst = t;
        for (j = 0; j < nvary && ++coords[vary[j]] == f->k[vary[j]]; j++)
            coords[vary[j]] = 0;
        if (j == nvary) return worst;
    }
}

double kt_plan_step_seconds(const kt_graph *g, const kt_plan *p,
                            const kt_machine *m) {
    kt_machine def = kt_machine_default();
    double t = 0, ndev;
    int i, o;
    if (!m) m = &def;
    if (kt__plan_shape_check(g, p, NULL) != KT_OK) return NAN;
    ndev = (double)kt_factors_devices(&p->f);
    for (i = 0; i < p->f.count; i++)
        t += (double)p->cut_bytes[i] /
             (ndev * m->level_bw[kt_machine_level_of_cut(m, &p->f, i)]);
    for (o = 0; o < g->nop; o++)
        t += kt__op_seconds(g, o, &p->f, &p->split[o * KT_MAX_CUTS], m,
                            kt__position_vars(g, &g->op[o]));
    return t;
}

int64_t kt_plan_memory(const kt_graph *g, const kt_plan *p) {
    int64_t total = 0;
    int t;
    if (kt__plan_shape_check(g, p, NULL) != KT_OK) return -1;
    for (t = 0; t < g->ntensor; t++) total += kt__largest_tile_bytes(g, p, t);
    return total;
}

static int kt__tensor_root(const kt_graph *g, int t) {
    int guard = 0;
    while (g->tensor[t].of >= 0 && guard++ < 8) t = g->tensor[t].of;
    return t;
}

/* ------------------------------------------------- one cut: the factor graph */

/* Tofu 5.1 coalescing of unrolled time steps: tensors named NAME_t<k> are
   one tensor over the steps and share a tiling; the partial gradients
   d<X>__k that such steps produce are one tensor too; operators whose
   outputs are tied share a strategy ("one strategy for all steps").
   kt__tie_key writes the class name of tensor t. */
/* Removes every "_t<digits>" that ends the name or precedes "__". */
static void kt__strip_step(char *name) {
    char *p = name;
    while ((p = strstr(p, "_t")) != NULL) {
        char *q = p + 2;
        while (isdigit((unsigned char)*q)) q++;
        if (q > p + 2 && (*q == '\0' || (q[0] == '_' && q[1] == '_')))
            memmove(p, q, strlen(q) + 1);
        else
            p += 2;
    }
}

static void kt__tie_key(const kt_graph *g, int t, char *key, size_t cap) {
    const kt_tensor *x = &g->tensor[t];
    const char *parts = strstr(x->name, "__");
    char base[KT_NAME_MAX];
    snprintf(base, sizeof base, "%s", x->name);
    if (parts && x->kind == KT_GRADIENT && x->producer >= 0) {
        /* the partial gradients of one tensor (summed by the chain rule)
           are one class: Tofu 5.1 groups them with the tensor */
        base[parts - x->name] = '\0';
        kt__strip_step(base);
        snprintf(key, cap, "%s__", base);
        return;
    }
    kt__strip_step(base);
    snprintf(key, cap, "%s", base);
}

static int kt__same_tensor_shape(const kt_tensor *a, const kt_tensor *b) {
    int d;
    if (a->rank != b->rank || a->elem_bytes != b->elem_bytes) return 0;
    for (d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d]) return 0;
    return 1;
}

static int kt__same_op_shape(const kt_op *a, const kt_op *b) {
    int v;
    if (a->nvars != b->nvars || a->in_place != b->in_place ||
        a->reducer != b->reducer)
        return 0;
    for (v = 0; v < a->nvars; v++)
        if (a->var[v].extent != b->var[v].extent ||
            a->var[v].splittable != b->var[v].splittable ||
            a->var[v].reduction != b->var[v].reduction)
            return 0;
    return 1;
}

/* An element-wise operand: read with exactly the output's index list. */
static int kt__elementwise_operand(const kt_graph *g, const kt_op *op,
                                   const kt_access *ac) {
    const kt_tensor *x = &g->tensor[ac->tensor];
    int d, v;
    if (x->rank != op->out_rank || ac->padded) return 0;
    for (d = 0; d < x->rank; d++) {
        const kt_sym_interval *si = &ac->dim[d];
        if (ac->whole[d] || si->divisor != 1 || si->lower.c != 0 ||
            x->shape[d] != op->var[d].extent)
            return 0;
        for (v = 0; v < op->nvars; v++)
            if (kt__sym_coef(si, v) != (v == d ? 1 : 0)) return 0;
    }
    return 1;
}

static int kt__find(int *parent, int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
}

/* The smaller index represents a class, so classes are deterministic. */
static void kt__union(int *parent, int a, int b) {
    a = kt__find(parent, a);
    b = kt__find(parent, b);
    if (a < b) parent[b] = a;
    else if (b < a) parent[a] = b;
}

/* tcls[t]: representative of t's class; ocls[o] likewise for ops.  With
   coalesce, an element-wise operator's output and its element-wise
   operands are one class too (Tofu 5.1: consecutive element-wise
   operators, optimizer updates, a tensor with its gradient and state). */
typedef char kt__tie_name[2 * KT_NAME_MAX + 4];

/* Indices 0..n-1 sorted by key, ties by index: a merge sort (qsort has no
   context argument, and the library keeps no global state). */
static int kt__sort_by_key(int *idx, int n, kt__tie_name *key) {
    int *tmp = (int *)kt__calloc((size_t)n + 1, sizeof(int)), width, i;
    if (!tmp) return 0;
    for (i = 0; i < n; i++) idx[i] = i;
    for (width = 1; width < n; width *= 2) {
        for (i = 0; i < n; i += 2 * width) {
            int lo = i, mid = i + width < n ? i + width : n,
                hi = i + 2 * width < n ? i + 2 * width : n, a = lo, b = mid,
                k = lo;
            while (a < mid && b < hi)
                tmp[k++] = strcmp(key[idx[b]], key[idx[a]]) < 0 ? idx[b++]
                                                                : idx[a++];
            while (a < mid) tmp[k++] = idx[a++];
            while (b < hi) tmp[k++] = idx[b++];
        }
        memcpy(idx, tmp, sizeof(int) * (size_t)n);
    }
    KT_FREE(tmp);
    return 1;
}

static kt_status kt__tie_classes(const kt_graph *g, int coalesce, int *tcls,
                                 int *ocls, kt_error *err) {
    int nt = g->ntensor, n = g->nop, t, o, a, i, j;
    kt__tie_name *key = (kt__tie_name *)kt__calloc(
        (size_t)(nt > n ? nt : n) + 1, sizeof(kt__tie_name));
    kt__tie_name *okey = (kt__tie_name *)kt__calloc((size_t)n + 1,
                                                    sizeof(kt__tie_name));
    int *idx = (int *)kt__calloc((size_t)(nt > n ? nt : n) + 1, sizeof(int));
    if (!key || !okey || !idx) {
        KT_FREE(key);
        KT_FREE(okey);
        KT_FREE(idx);
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    }
    /* tensors with one step-free name (and shape and kind) are one class */
    for (t = 0; t < nt; t++) {
        kt__tie_key(g, t, key[t], sizeof key[t]);
        tcls[t] = t;
    }
    if (!kt__sort_by_key(idx, nt, key)) goto nomem;
    for (i = 0; i < nt; i = j) {
        for (j = i + 1; j < nt && strcmp(key[idx[i]], key[idx[j]]) == 0; j++) {
            int k;
            for (k = i; k < j; k++)
                if (kt__same_tensor_shape(&g->tensor[idx[k]],
                                          &g->tensor[idx[j]]) &&
                    g->tensor[idx[k]].kind == g->tensor[idx[j]].kind) {
                    kt__union(tcls, idx[k], idx[j]);
                    break;
                }
        }
    }
    for (o = 0; coalesce && o < n; o++) {
        const kt_op *op = &g->op[o];
        if (op->reducer != KT_REDUCE_NONE || op->opaque[0]) continue;
        for (a = 0; a < op->naccess; a++)
            if (kt__elementwise_operand(g, op, &op->access[a]))
                kt__union(tcls, op->access[a].tensor, op->output);
    }
    for (t = 0; t < nt; t++) tcls[t] = kt__find(tcls, t);
    /* Ops are tied only as steps of one unrolled computation: their outputs
       have the same name up to the step suffix. */
    for (o = 0; o < n; o++) {
        snprintf(okey[o], sizeof okey[o], "%s%s", g->op[o].in_place ? "!" : "",
                 g->tensor[g->op[o].output].name);
        kt__strip_step(okey[o]);
        ocls[o] = o;
    }
    if (!kt__sort_by_key(idx, n, okey)) goto nomem;
    for (i = 0; i < n; i = j) {
        for (j = i + 1; j < n && strcmp(okey[idx[i]], okey[idx[j]]) == 0; j++) {
            int k;
            for (k = i; k < j; k++)
                if (ocls[idx[k]] == idx[k] &&
                    g->op[idx[k]].output != g->op[idx[j]].output &&
                    kt__same_op_shape(&g->op[idx[k]], &g->op[idx[j]])) {
                    ocls[idx[j]] = idx[k];
                    break;
                }
        }
    }
    KT_FREE(key);
    KT_FREE(okey);
    KT_FREE(idx);
    return KT_OK;
nomem:
    KT_FREE(key);
    KT_FREE(okey);
    KT_FREE(idx);
    return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
}

/* At one cut every tensor picks S<d> or R and every operator a variable to
   split.  An operator's cost depends only on its own tensors' picks, so
   minimising over its strategies turns it into a factor over those
   tensors; the level DP and brute force then search tensor picks only. */
typedef struct kt__factor {
    int nt;                      /* distinct tensor classes it touches    */
    int tensor[64];
    int64_t size;                /* product of their choice counts        */
    double *cost;                /* min over strategies, per assignment   */
    signed char *best;           /* index into the op's strategies        */
} kt__factor;

/* Conversion costs met while searching, keyed by everything they depend
   on (tensor shape, its tiling so far, the factors, and the op's variable
   extents, accesses and splits): repeated layers and tied steps price each
   distinct conversion once. */
typedef struct kt__memo_entry {
    uint64_t k1, k2;
    int64_t bytes;
} kt__memo_entry;

typedef struct kt__memo {
    kt__memo_entry *e;
    size_t cap, used;
} kt__memo;

typedef struct kt__hash {
    uint64_t a, b;
} kt__hash;

/* Mixes one word into a hash (a multiply-xorshift step on each half). */
static void kt__hash_word(kt__hash *h, uint64_t w) {
    h->a = (h->a ^ w) * UINT64_C(0x9e3779b97f4a7c15);
    h->a ^= h->a >> 29;
    h->b = (h->b + w) * UINT64_C(0xbf58476d1ce4e5b9);
    h->b ^= h->b >> 31;
}

static void kt__hash_i64(kt__hash *h, int64_t v) {
    kt__hash_word(h, (uint64_t)v);
}

static void kt__hash_i64s(kt__hash *h, const int64_t *v, int n) {
    int i;
    for (i = 0; i < n; i++) kt__hash_word(h, (uint64_t)v[i]);
}

/* The capacity is a power of two, so a slot is the hash masked (no
   division on the search's most frequent lookup). */
static int kt__memo_get(const kt__memo *m, kt__hash h, int64_t *bytes) {
    size_t i, mask = m->cap - 1;
    if (!m->cap) return 0;
    if (h.a == 0 && h.b == 0) h.b = 1; /* as stored: 0,0 marks a free slot */
    for (i = (size_t)h.a & mask;; i = (i + 1) & mask) {
        if (m->e[i].k1 == 0 && m->e[i].k2 == 0) return 0;
        if (m->e[i].k1 == h.a && m->e[i].k2 == h.b) {
            *bytes = m->e[i].bytes;
            return 1;
        }
    }
}

static void kt__memo_put(kt__memo *m, kt__hash h, int64_t bytes) {
    size_t i;
    if (h.a == 0 && h.b == 0) h.b = 1;
    if (2 * (m->used + 1) > m->cap) {
        size_t nc = m->cap ? 2 * m->cap : 4096, j;
        kt__memo_entry *ne =
            (kt__memo_entry *)kt__calloc(nc, sizeof(kt__memo_entry));
        if (!ne) return; /* a cache: losing an entry is harmless */
        for (j = 0; j < m->cap; j++)
            if (m->e[j].k1 || m->e[j].k2) {
                size_t k = (size_t)m->e[j].k1 & (nc - 1);
                while (ne[k].k1 || ne[k].k2) k = (k + 1) & (nc - 1);
                ne[k] = m->e[j];
            }
        KT_FREE(m->e);
        m->e = ne;
        m->cap = nc;
    }
    for (i = (size_t)h.a & (m->cap - 1); m->e[i].k1 || m->e[i].k2;
         i = (i + 1) & (m->cap - 1))
        if (m->e[i].k1 == h.a && m->e[i].k2 == h.b) return;
    m->e[i].k1 = h.a;
    m->e[i].k2 = h.b;
    m->e[i].bytes = bytes;
    m->used++;
}

/* What a conversion's price depends on besides the cuts: the tensor's
   shape and element size, the op's variable extents and, for an input, how
   the op reads it.  Hashed once per op and role. */
static kt__hash kt__role_hash(const kt_graph *g, int o, int r) {
    const kt_op *op = &g->op[o];
    int x = r < op->ninputs ? op->input[r] : op->output, a, d, v;
    const kt_tensor *tx = &g->tensor[x];
    kt__hash h;
    h.a = UINT64_C(0xcbf29ce484222325);
    h.b = UINT64_C(0x84222325cbf29ce4);
    kt__hash_i64(&h, r < op->ninputs ? 1 : 2);
    kt__hash_i64(&h, tx->rank);
    kt__hash_i64(&h, tx->elem_bytes);
    kt__hash_i64s(&h, tx->shape, tx->rank);
    kt__hash_i64(&h, op->nvars);
    for (v = 0; v < op->nvars; v++) {
        kt__hash_i64(&h, op->var[v].extent);
        kt__hash_i64(&h, op->var[v].reduction);
    }
    if (r == op->ninputs) {
        kt__hash_i64(&h, op->out_rank);
        return h;
    }
    for (a = 0; a < op->naccess; a++) {
        const kt_access *ac = &op->access[a];
        if (ac->input != r) continue;
        kt__hash_i64(&h, ac->padded);
        for (d = 0; d < tx->rank; d++) {
            kt__hash_i64(&h, ac->whole[d]);
            kt__hash_i64s(&h, ac->dim[d].lower.lo_coef, op->nvars);
            kt__hash_i64s(&h, ac->dim[d].lower.hi_coef, op->nvars);
            kt__hash_i64s(&h, ac->dim[d].upper.lo_coef, op->nvars);
            kt__hash_i64s(&h, ac->dim[d].upper.hi_coef, op->nvars);
            kt__hash_i64(&h, ac->dim[d].lower.c);
            kt__hash_i64(&h, ac->dim[d].upper.c);
            kt__hash_i64(&h, ac->dim[d].divisor);
        }
    }
    return h;
}

/* The key of converting a role whose structure hashes to `role`, with
   tensor tiling t and op split `split` over factors fp. */
static kt__hash kt__conversion_key(kt__hash role, const kt_tiling *t,
                                   const int *split, const kt_factors *fp) {
    int i;
    kt__hash_word(&role, (uint64_t)fp->count);
    for (i = 0; i < fp->count; i++)
        kt__hash_word(&role, (uint64_t)(uint32_t)fp->k[i] |
                                 ((uint64_t)(uint8_t)t->cut[i] << 32) |
                                 ((uint64_t)(uint16_t)split[i] << 40));
    return role;
}

typedef struct kt__cut {
    kt__memo *memo;
    const kt__hash *role;  /* per op, per role (KT_MAX_VARS + 1 each)    */
    const kt_graph *g;
    kt_plan *p;
    int cut;                                 /* 0-based                    */
    const int *tcls, *ocls;                  /* tie classes                */
    int *nchoice;                            /* per tensor                 */
    signed char (*choice)[KT_MAX_DIMS + 1];  /* per tensor: cut codes      */
    int *nstrat;                             /* per op                     */
    int (*strat)[KT_MAX_VARS + 1];           /* per op: variables          */
    kt__factor *factor;                      /* per op class (its rep)     */
    int *pick;                               /* per tensor class           */
    double byte_weight;   /* objective units per byte moved at this cut    */
    const kt_machine *machine; /* with time: op compute at the last cut    */
    double lambda;        /* memory penalty per byte of tensor per device  */
    int *mfirst, *members; /* op class -> its member ops (CSR)             */
    int one_dim;          /* EqualChop: one dimension per tensor            */
    int *rec_at;          /* what the last priced member op added:          */
    int64_t *rec_bytes;   /* positions in its factor's cost table, bytes    */
    int nrec;
} kt__cut;

static void kt__cut_free(kt__cut *c) {
    int o;
    if (c->factor)
        for (o = 0; o < c->g->nop; o++) {
            KT_FREE(c->factor[o].cost);
            KT_FREE(c->factor[o].best);
        }
    KT_FREE(c->factor);
    KT_FREE(c->mfirst);
    KT_FREE(c->members);
    KT_FREE(c->nchoice);
    KT_FREE(c->choice);
    KT_FREE(c->nstrat);
    KT_FREE(c->strat);
    KT_FREE(c->pick);
    KT_FREE(c->rec_at);
    KT_FREE(c->rec_bytes);
}

/* Parts dimension d (or variable v) already has from the earlier cuts. */
static int64_t kt__dim_parts(const kt_tiling *t, const kt_factors *f, int cut,
                             int d) {
    int64_t parts = 1;
    int i;
    for (i = 0; i < cut; i++)
        if (t->cut[i] == d) parts *= f->k[i];
    return parts;
}

static int64_t kt__var_parts(const int *split, const kt_factors *f, int cut,
                             int v) {
    int64_t parts = 1;
    int i;
    for (i = 0; i < cut; i++)
        if (split[i] == v) parts *= f->k[i];
    return parts;
}

/* Choices at this cut: a dimension may be split while it keeps at least
   one element per part; R always. */
static void kt__cut_choices_of(kt__cut *c) {
    const kt_graph *g = c->g;
    int k = c->p->f.k[c->cut], t, o, d, v;
    for (t = 0; t < g->ntensor; t++) {
        const kt_tensor *x = &g->tensor[t];
        int n = 0;
        for (d = 0; d < x->rank; d++)
            if (kt__dim_parts(&c->p->tiling[t], &c->p->f, c->cut, d) * k <=
                    x->shape[d] &&
                /* EqualChop: later cuts keep cutting the first cut's dim */
                (!c->one_dim || c->cut == 0 || c->p->tiling[t].cut[0] == d))
                c->choice[t][n++] = (signed char)d;
        if (!c->one_dim || c->cut == 0 || n == 0 ||
            c->p->tiling[t].cut[0] == KT_CUT_R)
            c->choice[t][n++] = KT_CUT_R;
        c->nchoice[t] = n;
    }
    for (o = 0; o < g->nop; o++) {
        const kt_op *op = &g->op[o];
        const int *split = &c->p->split[o * KT_MAX_CUTS];
        int n = 0;
        for (v = 0; v < op->nvars; v++)
            if (op->var[v].splittable &&
                kt__var_parts(split, &c->p->f, c->cut, v) * k <=
                    op->var[v].extent)
                c->strat[o][n++] = v;
        if (n == 0) c->strat[o][n++] = KT_SPLIT_REPLICATE;
        c->nstrat[o] = n;
    }
}

static int kt__factor_slot(const kt__factor *fa, int tensor) {
    int i;
    for (i = 0; i < fa->nt; i++)
        if (fa->tensor[i] == tensor) return i;
    return -1;
}

/* Adds one member op's prefix costs (cuts 1..cut+1) to its class factor's
   separable table: cost[(slot*ns + s)*(KT_MAX_DIMS+1) + choice].  What it
   adds is also written to rec (position and bytes, *nrec entries), so
   that a tied step priced exactly alike can repeat it (kt__same_member). */
static kt_status kt__member_costs(kt__cut *c, int o, kt__factor *fa,
                                  int64_t *cost, double *compute,
                                  int *rec_at, int64_t *rec_bytes, int *nrec,
                                  kt_error *err) {
    const kt_graph *g = c->g;
    const kt_op *op = &g->op[o];
    kt_factors fp = kt__prefix_factors(&c->p->f, c->cut + 1);
    int ns = c->nstrat[o], r, s, ch;
    int split[KT_MAX_CUTS];
    unsigned moving = c->machine ? kt__position_vars(g, op) : 0;
    /* each tensor placement is built at most once, on the first miss */
    kt_placement tp[KT_MAX_VARS + 1][KT_MAX_DIMS + 1];
    kt_status st = KT_OK;
    for (r = 0; r <= op->ninputs; r++)
        for (ch = 0; ch < c->nchoice[r < op->ninputs ? op->input[r]
                                                      : op->output];
             ch++)
            tp[r][ch].box = NULL;
    memcpy(split, &c->p->split[o * KT_MAX_CUTS], sizeof split);
    for (s = 0; s < ns && st == KT_OK; s++) {
        kt_placement needed[KT_MAX_VARS], produced;
        int placed = 0;
        split[c->cut] = c->strat[o][s];
        if (c->machine && c->cut + 1 == c->p->f.count)
            compute[s] +=
                kt__op_seconds(g, o, &c->p->f, split, c->machine, moving);
        for (r = 0; r <= op->ninputs && st == KT_OK; r++) {
            int x = r < op->ninputs ? op->input[r] : op->output;
            const kt_tensor *tx = &g->tensor[x];
            int slot = kt__factor_slot(fa, c->tcls[x]);
            for (ch = 0; ch < c->nchoice[x] && st == KT_OK; ch++) {
                kt_tiling t = kt__prefix_tiling(&c->p->tiling[x], c->cut + 1);
                int64_t bytes;
                kt__hash key;
                t.cut[c->cut] = c->choice[x][ch];
                key = kt__conversion_key(c->role[o * (KT_MAX_VARS + 1) + r],
                                         &t, split, &fp);
                if (!kt__memo_get(c->memo, key, &bytes)) {
                    /* placements only when a price is missing */
                    if (!placed) {
                        st = kt_op_placements(g, op, &fp, split, needed,
                                              &produced, err);
                        if (st != KT_OK) break;
                        placed = 1;
                    }
                    if (!tp[r][ch].box) {
                        st = kt_placement_from_tiling(&tp[r][ch], &t, tx->rank,
                                                      tx->shape, &fp, err);
                        if (st != KT_OK) break;
                    }
                    if (r < op->ninputs)
                        st = kt_conversion_cost(tx->rank, tx->shape,
                                                tx->elem_bytes, &tp[r][ch],
                                                &needed[r], &bytes, NULL, err);
                    else
                        st = kt_conversion_cost(tx->rank, tx->shape,
                                                tx->elem_bytes, &produced,
                                                &tp[r][ch], &bytes, NULL, err);
                    if (st == KT_OK) kt__memo_put(c->memo, key, bytes);
                }
                cost[(slot * ns + s) * (KT_MAX_DIMS + 1) + ch] += bytes;
                rec_at[*nrec] = (slot * ns + s) * (KT_MAX_DIMS + 1) + ch;
                rec_bytes[(*nrec)++] = bytes;
            }
        }
        if (placed) kt__free_op_placements(op, needed, &produced);
    }
    for (r = 0; r <= op->ninputs; r++)
        for (ch = 0; ch < c->nchoice[r < op->ninputs ? op->input[r]
                                                      : op->output];
             ch++)
            if (tp[r][ch].box) kt_placement_free(&tp[r][ch]);
    return st;
}

/* Two members of an op class (tied steps) whose every role has the same
   structure (kt__role_hash) on the same tensor class are priced alike at
   every cut: the memo key of each of their conversions is the same, since
   a tensor class shares its tiling and the class its strategies.  Steps
   1..n-1 of an unrolled cell are such; step 0 reads the initial state. */
static int kt__same_member(const kt__cut *c, int a, int b) {
    const kt_op *oa = &c->g->op[a], *ob = &c->g->op[b];
    int r;
    if (oa->ninputs != ob->ninputs) return 0;
    for (r = 0; r <= oa->ninputs; r++) {
        kt__hash ha = c->role[a * (KT_MAX_VARS + 1) + r],
                 hb = c->role[b * (KT_MAX_VARS + 1) + r];
        int xa = r < oa->ninputs ? oa->input[r] : oa->output,
            xb = r < ob->ninputs ? ob->input[r] : ob->output;
        if (ha.a != hb.a || ha.b != hb.b || c->tcls[xa] != c->tcls[xb])
            return 0;
    }
    return 1;
}

/* Builds the factor of op class `rep`: the tensor classes its members
   touch, and for every joint choice of them the cheapest shared strategy. */
static kt_status kt__build_factor(kt__cut *c, int rep, kt_error *err) {
    const kt_graph *g = c->g;
    kt__factor *fa = &c->factor[rep];
    int ns = c->nstrat[rep], s, j, o, r;
    int64_t *cost = NULL, a;
    double compute[KT_MAX_VARS + 1];
    kt_status st = KT_OK;
    int m;
    fa->nt = 0;
    for (m = c->mfirst[rep]; m < c->mfirst[rep + 1]; m++) {
        o = c->members[m];
        for (r = 0; r <= g->op[o].ninputs; r++) {
            int x = c->tcls[r < g->op[o].ninputs ? g->op[o].input[r]
                                                  : g->op[o].output];
            if (kt__factor_slot(fa, x) >= 0) continue;
            if (fa->nt == 64)
                return kt__fail(err, KT_ERR_LIMIT, 0, "op %s: its tied steps "
                                "touch more than 64 tensors", g->op[rep].name);
            fa->tensor[fa->nt++] = x;
        }
    }
    fa->size = 1;
    for (j = 0; j < fa->nt; j++) {
        fa->size *= c->nchoice[fa->tensor[j]];
        if (fa->size > (INT64_C(1) << 26))
            return kt__fail(err, KT_ERR_LIMIT, 0, "op %s touches too many "
                            "tensors for one factor", g->op[rep].name);
    }
    cost = (int64_t *)kt__calloc((size_t)fa->nt * ns * (KT_MAX_DIMS + 1),
                                 sizeof(int64_t));
    fa->cost = (double *)kt__calloc((size_t)fa->size, sizeof(double));
    fa->best = (signed char *)kt__calloc((size_t)fa->size, 1);
    if (!cost || !fa->cost || !fa->best) {
        KT_FREE(cost);
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory for op %s",
                        g->op[rep].name);
    }
    for (s = 0; s < ns; s++) compute[s] = 0;
    for (m = c->mfirst[rep]; m < c->mfirst[rep + 1] && st == KT_OK; m++) {
        int k;
        o = c->members[m];
        if (m > c->mfirst[rep] && c->machine == NULL &&
            kt__same_member(c, c->members[m - 1], o)) {
            /* priced like the previous step: repeat what it added (the
               time objective's compute term is per op, so it prices
               every step) */
            for (k = 0; k < c->nrec; k++) cost[c->rec_at[k]] += c->rec_bytes[k];
            continue;
        }
        c->nrec = 0;
        st = kt__member_costs(c, o, fa, cost, compute, c->rec_at,
                              c->rec_bytes, &c->nrec, err);
    }
    if (st != KT_OK) {
        KT_FREE(cost);
        return st;
    }
    {
        /* the assignments in table order: pickc is an odometer over the
           tensors' choices (first fastest) */
        int pickc[64];
        for (j = 0; j < fa->nt; j++) pickc[j] = 0;
        for (a = 0; a < fa->size; a++) {
            double best = -1;
            for (s = 0; s < ns; s++) {
                int64_t total = 0;
                double value;
                for (j = 0; j < fa->nt; j++)
                    total += cost[(j * ns + s) * (KT_MAX_DIMS + 1) + pickc[j]];
                value = (double)total * c->byte_weight + compute[s];
                if (best < 0 || value < best) {
                    best = value;
                    fa->best[a] = (signed char)s;
                }
            }
            fa->cost[a] = best;
            for (j = 0; j < fa->nt && ++pickc[j] == c->nchoice[fa->tensor[j]];
                 j++)
                pickc[j] = 0;
        }
    }
    KT_FREE(cost);
    return KT_OK;
}

/* Bytes tensor t would occupy on its fullest device with `code` at this
   cut (the later cuts not yet known). */
static double kt__tile_bytes(const kt__cut *c, int t, int code) {
    const kt_tensor *x = &c->g->tensor[t];
    double bytes = x->elem_bytes;
    int d;
    for (d = 0; d < x->rank; d++) {
        int64_t parts = kt__dim_parts(&c->p->tiling[t], &c->p->f, c->cut, d);
        if (code == d) parts *= c->p->f.k[c->cut];
        bytes *= (double)((x->shape[d] + parts - 1) / parts);
    }
    return bytes;
}

/* A memory cap is met by a Lagrangian penalty: every tensor's tile bytes
   times lambda join the factor of the first op class touching it. */
static kt_status kt__add_memory_penalty(kt__cut *c, kt_error *err) {
    const kt_graph *g = c->g;
    int t, o, j;
    int *owner = (int *)kt__calloc((size_t)g->ntensor + 1, sizeof(int));
    /* (without the penalty the cap would be ignored: not a plan to give) */
    if (!owner) return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    for (t = 0; t < g->ntensor; t++) owner[t] = -1;
    for (o = 0; o < g->nop; o++)
        if (c->ocls[o] == o)
            for (j = 0; j < c->factor[o].nt; j++)
                if (owner[c->factor[o].tensor[j]] < 0)
                    owner[c->factor[o].tensor[j]] = o;
    for (t = 0; t < g->ntensor; t++) {
        int rep = c->tcls[t];
        o = owner[rep];
        if (o < 0) continue;
        {
            kt__factor *fa = &c->factor[o];
            int slot = kt__factor_slot(fa, rep);
            int64_t a, stride = 1;
            for (j = 0; j < slot; j++) stride *= c->nchoice[fa->tensor[j]];
            for (a = 0; a < fa->size; a++) {
                int ch = (int)((a / stride) % c->nchoice[rep]);
                fa->cost[a] +=
                    c->lambda * kt__tile_bytes(c, t, c->choice[rep][ch]);
            }
        }
    }
    KT_FREE(owner);
    return KT_OK;
}

static kt_status kt__cut_setup(kt__cut *c, const kt_graph *g, kt_plan *p,
                               int cut, const int *tcls, const int *ocls,
                               const kt_search_options *opt, double lambda,
                               kt__memo *memo, const kt__hash *role,
                               kt_error *err) {
    int o;
    kt_status s;
    memset(c, 0, sizeof *c);
    c->memo = memo;
    c->role = role;
    c->one_dim = opt->strategy == KT_STRATEGY_EQUALCHOP;
    c->g = g;
    c->p = p;
    c->cut = cut;
    c->tcls = tcls;
    c->ocls = ocls;
    c->lambda = lambda;
    c->byte_weight = 1;
    if (opt->objective == KT_OBJECTIVE_TIME) {
        /* bytes of this cut cross its level's links, all devices at once */
        c->machine = opt->machine;
        c->byte_weight =
            1.0 / ((double)kt_factors_devices(&p->f) *
                   opt->machine->level_bw[kt_machine_level_of_cut(
                       opt->machine, &p->f, cut)]);
    }
    c->nchoice = (int *)kt__calloc((size_t)g->ntensor + 1, sizeof(int));
    c->choice = (signed char(*)[KT_MAX_DIMS + 1])kt__calloc(
        (size_t)g->ntensor + 1, KT_MAX_DIMS + 1);
    c->nstrat = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    c->strat = (int(*)[KT_MAX_VARS + 1])kt__calloc(
        (size_t)g->nop + 1, sizeof(int) * (KT_MAX_VARS + 1));
    c->factor = (kt__factor *)kt__calloc((size_t)g->nop + 1,
                                         sizeof(kt__factor));
    c->pick = (int *)kt__calloc((size_t)g->ntensor + 1, sizeof(int));
    /* a member op adds one price per strategy, role and choice */
    c->rec_at = (int *)kt__calloc((size_t)(KT_MAX_VARS + 1) *
                                      (KT_MAX_VARS + 1) * (KT_MAX_DIMS + 1),
                                  sizeof(int));
    c->rec_bytes = (int64_t *)kt__calloc((size_t)(KT_MAX_VARS + 1) *
                                             (KT_MAX_VARS + 1) *
                                             (KT_MAX_DIMS + 1),
                                         sizeof(int64_t));
    if (!c->nchoice || !c->choice || !c->nstrat || !c->strat || !c->factor ||
        !c->pick || !c->rec_at || !c->rec_bytes) {
        kt__cut_free(c);
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    }
    c->mfirst = (int *)kt__calloc((size_t)g->nop + 2, sizeof(int));
    c->members = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    if (!c->mfirst || !c->members) {
        kt__cut_free(c);
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    }
    for (o = 0; o < g->nop; o++) c->mfirst[ocls[o] + 1]++;
    for (o = 0; o < g->nop; o++) c->mfirst[o + 1] += c->mfirst[o];
    {
        int *fill = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
        if (!fill) {
            kt__cut_free(c);
            return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
        }
        for (o = 0; o < g->nop; o++)
            c->members[c->mfirst[ocls[o]] + fill[ocls[o]]++] = o;
        KT_FREE(fill);
    }
    kt__cut_choices_of(c);
    for (o = 0; o < g->nop; o++)
        if (ocls[o] == o && (s = kt__build_factor(c, o, err)) != KT_OK) {
            kt__cut_free(c);
            return s;
        }
    if (lambda > 0 && (s = kt__add_memory_penalty(c, err)) != KT_OK) {
        kt__cut_free(c);
        return s;
    }
    return KT_OK;
}

static int64_t kt__factor_index(const kt__cut *c, const kt__factor *fa) {
    int64_t idx = 0, stride = 1;
    int j;
    for (j = 0; j < fa->nt; j++) {
        idx += c->pick[fa->tensor[j]] * stride;
        stride *= c->nchoice[fa->tensor[j]];
    }
    return idx;
}

/* Writes the picks of this cut into the plan: every tensor takes its
   class's pick, every op its class's best strategy.  Returns the objective
   of the cut (the prefix cost in bytes for the bytes objective). */
static double kt__cut_apply(kt__cut *c) {
    const kt_graph *g = c->g;
    double total = 0;
    int t, o;
    for (t = 0; t < g->ntensor; t++)
        c->p->tiling[t].cut[c->cut] = c->choice[t][c->pick[c->tcls[t]]];
    for (o = 0; o < g->nop; o++) {
        int rep = c->ocls[o];
        int64_t a = kt__factor_index(c, &c->factor[rep]);
        c->p->split[o * KT_MAX_CUTS + c->cut] =
            c->strat[rep][(int)c->factor[rep].best[a]];
        if (rep == o) total += c->factor[o].cost[a];
    }
    return total;
}

/* ----------------------------------------------------------- brute force */

static kt_status kt__cut_bruteforce(kt__cut *c, int64_t limit, kt_error *err) {
    const kt_graph *g = c->g;
    int *best = (int *)kt__calloc((size_t)g->ntensor + 1, sizeof(int));
    double best_cost = -1, space = 1;
    int t, o;
    if (!best) return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    for (t = 0; t < g->ntensor; t++)
        if (c->tcls[t] == t) space *= c->nchoice[t];
    if (space > (double)limit) {
        KT_FREE(best);
        /* %.3g: the count can run to 90 digits */
        return kt__fail(err, KT_ERR_LIMIT, 0, "brute force: %.3g tiling "
                        "assignments at cut %d exceed the limit of %lld; use "
                        "it on graphs of at most about 20 small tensors",
                        space, c->cut + 1, (long long)limit);
    }
    memset(c->pick, 0, sizeof(int) * (size_t)g->ntensor);
    for (;;) {
        double total = 0;
        for (o = 0; o < g->nop; o++)
            if (c->ocls[o] == o)
                total += c->factor[o].cost[kt__factor_index(c, &c->factor[o])];
        if (best_cost < 0 || total < best_cost) {
            best_cost = total;
            memcpy(best, c->pick, sizeof(int) * (size_t)g->ntensor);
        }
        for (t = 0; t < g->ntensor; t++) {
            if (c->tcls[t] != t) continue;
            if (++c->pick[t] < c->nchoice[t]) break;
            c->pick[t] = 0;
        }
        if (t == g->ntensor) break;
    }
    memcpy(c->pick, best, sizeof(int) * (size_t)g->ntensor);
    KT_FREE(best);
    return KT_OK;
}

/* ------------------------------------------------------------- level DP */

/* The order in which the DP visits operators (SOYBEAN 4.2 with Tofu 5.1's
   coarsening): a forward operator, the backward and update operators
   generated for it (kt_op.group) and its tied steps form one group; the
   groups are ordered by BFS levels over the undirected graph in which two
   groups are adjacent when they touch the same tensor class. */
typedef struct kt__rank_key {
    int level, grp, op;
} kt__rank_key;

static int kt__cmp_rank(const void *x, const void *y) {
    const kt__rank_key *a = (const kt__rank_key *)x, *b = (const kt__rank_key *)y;
    if (a->level != b->level) return a->level < b->level ? -1 : 1;
    if (a->grp != b->grp) return a->grp < b->grp ? -1 : 1;
    return (a->op > b->op) - (a->op < b->op);
}

static int kt__op_class_of_role(const kt__cut *c, int o, int j) {
    const kt_op *op = &c->g->op[o];
    return c->tcls[kt__tensor_root(c->g, j < op->ninputs ? op->input[j]
                                                        : op->output)];
}

static kt_status kt__dp_rank(const kt__cut *c, int *rank, kt_error *err) {
    const kt_graph *g = c->g;
    int n = g->nop, nt = g->ntensor, i, j, head = 0, tail = 0, nedge = 0;
    int *grp = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    int *level = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    int *queue = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    int *gfirst = (int *)kt__calloc((size_t)n + 2, sizeof(int));
    int *gops = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    int *tfirst = (int *)kt__calloc((size_t)nt + 2, sizeof(int));
    int *tops = NULL, *fill = NULL;
    unsigned char *texpanded = (unsigned char *)kt__calloc((size_t)nt + 1, 1);
    kt__rank_key *keys = (kt__rank_key *)kt__calloc((size_t)n + 1,
                                                    sizeof(kt__rank_key));
    kt_status s = KT_OK;
    if (!grp || !level || !queue || !gfirst || !gops || !tfirst || !keys ||
        !texpanded)
        goto nomem;
    for (i = 0; i < n; i++) {
        int f = g->op[i].group >= 0 ? g->op[i].group : i;
        grp[i] = c->ocls[f];
        level[i] = -1;
        nedge += g->op[i].ninputs + 1;
    }
    /* group -> its ops, tensor class -> the ops touching it (CSR) */
    for (i = 0; i < n; i++) gfirst[grp[i] + 1]++;
    for (i = 0; i < n; i++) gfirst[i + 1] += gfirst[i];
    fill = (int *)kt__calloc((size_t)(n > nt ? n : nt) + 1, sizeof(int));
    tops = (int *)kt__calloc((size_t)nedge + 1, sizeof(int));
    if (!fill || !tops) goto nomem;
    for (i = 0; i < n; i++) gops[gfirst[grp[i]] + fill[grp[i]]++] = i;
    for (i = 0; i < n; i++)
        for (j = 0; j <= g->op[i].ninputs; j++)
            tfirst[kt__op_class_of_role(c, i, j) + 1]++;
    for (i = 0; i < nt; i++) tfirst[i + 1] += tfirst[i];
    memset(fill, 0, sizeof(int) * (size_t)(n > nt ? n : nt));
    for (i = 0; i < n; i++)
        for (j = 0; j <= g->op[i].ninputs; j++) {
            int x = kt__op_class_of_role(c, i, j);
            tops[tfirst[x] + fill[x]++] = i;
        }
    /* BFS over groups: adjacent when they touch one tensor class */
    for (i = 0; i < n; i++) {
        if (level[grp[i]] >= 0) continue;
        level[grp[i]] = 0;
        queue[tail++] = grp[i];
        while (head < tail) {
            int gc = queue[head++], a;
            for (a = gfirst[gc]; a < gfirst[gc + 1]; a++) {
                int op = gops[a];
                for (j = 0; j <= g->op[op].ninputs; j++) {
                    int x = kt__op_class_of_role(c, op, j), b;
                    /* a class once expanded has leveled all its groups;
                       a tied class is touched by every step's ops */
                    if (texpanded[x]) continue;
                    texpanded[x] = 1;
                    for (b = tfirst[x]; b < tfirst[x + 1]; b++) {
                        int gb = grp[tops[b]];
                        if (level[gb] >= 0) continue;
                        level[gb] = level[gc] + 1;
                        queue[tail++] = gb;
                    }
                }
            }
        }
    }
    for (i = 0; i < n; i++) {
        keys[i].level = level[grp[i]];
        keys[i].grp = grp[i];
        keys[i].op = i;
    }
    qsort(keys, (size_t)n, sizeof *keys, kt__cmp_rank);
    for (i = 0; i < n; i++) rank[keys[i].op] = i;
    goto done;
nomem:
    s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
done:
    KT_FREE(grp);
    KT_FREE(level);
    KT_FREE(queue);
    KT_FREE(gfirst);
    KT_FREE(gops);
    KT_FREE(tfirst);
    KT_FREE(tops);
    KT_FREE(fill);
    KT_FREE(keys);
    KT_FREE(texpanded);
    return s;
}

/* A factor of the elimination: a table over some tensor classes. */
typedef struct kt__table {
    int nv;
    int *var;
    int64_t size;
    double *t;
    int alive;
} kt__table;

typedef struct kt__elim {
    int var;
    int nothers;
    int *others;
    unsigned char *argmin;
} kt__elim;

/* Size of the table left when v is eliminated: the product of the domains
   of every variable sharing a factor with v, v excepted. */
/* Which tables mention each variable (dead tables are skipped). */
typedef struct kt__adj {
    int *id;
    int n, cap;
} kt__adj;

static int kt__adj_add(kt__adj *a, int id) {
    if (a->n == a->cap) {
        int nc = a->cap ? 2 * a->cap : 8;
        int *ni = (int *)KT_REALLOC(a->id, sizeof(int) * (size_t)nc);
        if (!ni) return 0;
        a->id = ni;
        a->cap = nc;
    }
    a->id[a->n++] = id;
    return 1;
}

static double kt__elim_size(const kt__table *tab, const kt__adj *adj,
                            const int *dom, int v, int *mark, int stamp) {
    double size = 1;
    int k, j;
    for (k = 0; k < adj[v].n; k++) {
        const kt__table *t = &tab[adj[v].id[k]];
        if (!t->alive) continue;
        for (j = 0; j < t->nv; j++) {
            int x = t->var[j];
            if (x == v || mark[x] == stamp) continue;
            mark[x] = stamp;
            size *= dom[x];
        }
    }
    return size;
}

/* The elimination's inner loops walk a table `dst` in storage order (first
   variable fastest) while following the entry of another table `src` that
   shares some of its variables.  Instead of recomputing src's index from
   all digits at every step, each digit j gets a carry step: when digit j
   is the lowest one that does not wrap, src's index moves by src's stride
   for that variable minus what the wrapped lower digits had added.  So
   following src costs one addition per entry. */
static int64_t kt__var_stride(const kt__table *src, int x, const int *dom) {
    int64_t stride = 1;
    int q;
    for (q = 0; q < src->nv; q++) {
        if (src->var[q] == x) return stride;
        stride *= dom[src->var[q]];
    }
    return 0; /* src does not depend on x */
}

static void kt__carry_steps(const kt__table *src, const int *var, int nv,
                            const int *dom, int64_t *step) {
    int64_t back = 0;
    int j;
    for (j = 0; j < nv; j++) {
        int64_t s = kt__var_stride(src, var[j], dom);
        step[j] = s - back;
        back += s * (dom[var[j]] - 1);
    }
}

/* Advances the odometer digit[0..nv) (radix dom[var[j]]); returns the
   lowest digit that did not wrap, or nv when all wrapped (the end). */
static int kt__odometer_next(int *digit, const int *var, int nv,
                             const int *dom) {
    int j;
    for (j = 0; j < nv && ++digit[j] == dom[var[j]]; j++) digit[j] = 0;
    return j;
}

/* dst += src, src's values broadcast over the variables it lacks; src's
   variables must all be dst's.  step and digit hold dst->nv entries. */
static void kt__table_accumulate(kt__table *dst, const kt__table *src,
                                 const int *dom, int64_t *step, int *digit) {
    int64_t idx, at = 0;
    int j, nv = dst->nv;
    kt__carry_steps(src, dst->var, nv, dom, step);
    for (j = 0; j < nv; j++) digit[j] = 0;
    for (idx = 0; idx < dst->size; idx++) {
        dst->t[idx] += src->t[at];
        j = kt__odometer_next(digit, dst->var, nv, dom);
        if (j < nv) at += step[j];
    }
}

/* Number of states of the union of a's and b's variables; mark[] gets
   `stamp` on a's variables. */
static int64_t kt__union_size(const kt__table *a, const kt__table *b,
                              const int *dom, int *mark, int stamp) {
    int64_t size = a->size;
    int j;
    for (j = 0; j < a->nv; j++) mark[a->var[j]] = stamp;
    for (j = 0; j < b->nv; j++)
        if (mark[b->var[j]] != stamp) size *= dom[b->var[j]];
    return size;
}

/* A bucket's tables are summed once per joint state of all their
   variables (`joint` states), so every table costs `joint` additions.  Two
   tables whose variables together span far fewer states are cheaper to add
   up first: a table whose variables another one has is added into that one
   in place; otherwise the pair is summed into a new table over their union
   when that costs (about three passes over the union) less than the pass
   over the joint it saves.  The cheapest pair goes first, until no pair
   pays.  Addition is associative, so the minimum is unchanged (bytes are
   integers, exact in a double).  In an unrolled LSTM the forward cell and
   its backward ops touch the same tensors in different orders, so a bucket
   of five tables over twelve tensors shrinks to two. */
static kt_status kt__bucket_presum(kt__table *b, int *owned, int *nb,
                                   int64_t joint, const int *dom, int *mark,
                                   int *stamp, int64_t *step, int *digit) {
    /* the pair search is quadratic per merge: a bucket of a tensor read
       by hundreds of op classes is summed as it is */
    if (*nb > 64) return KT_OK;
    for (;;) {
        int i, j, bi = -1, bj = -1, sub = 0, k;
        int64_t best = 0;
        for (i = 0; i < *nb; i++)
            for (j = 0; j < *nb; j++) {
                int64_t u;
                if (i == j) continue;
                u = kt__union_size(&b[i], &b[j], dom, mark, ++*stamp);
                /* j's variables all in i: added in place, one pass */
                if (u == b[i].size) {
                    if (u < joint && (bi < 0 || !sub || u < best)) {
                        bi = i, bj = j, best = u, sub = 1;
                    }
                } else if (3 * u < joint && !sub && (bi < 0 || u < best)) {
                    bi = i, bj = j, best = u;
                }
            }
        if (bi < 0) return KT_OK;
        if (!sub) {
            /* a new table over i's variables and j's others */
            kt__table u;
            int n = b[bi].nv;
            memset(&u, 0, sizeof u);
            u.size = best;
            u.var = (int *)kt__calloc((size_t)(b[bi].nv + b[bj].nv) + 1,
                                      sizeof(int));
            u.t = (double *)kt__calloc((size_t)best, sizeof(double));
            if (!u.var || !u.t) {
                KT_FREE(u.var);
                KT_FREE(u.t);
                return KT_ERR_NOMEM;
            }
            memcpy(u.var, b[bi].var, sizeof(int) * (size_t)n);
            ++*stamp;
            for (k = 0; k < n; k++) mark[u.var[k]] = *stamp;
            for (k = 0; k < b[bj].nv; k++)
                if (mark[b[bj].var[k]] != *stamp) u.var[n++] = b[bj].var[k];
            u.nv = n;
            u.alive = 1;
            kt__table_accumulate(&u, &b[bi], dom, step, digit);
            if (owned[bi]) {
                KT_FREE(b[bi].var);
                KT_FREE(b[bi].t);
            }
            b[bi] = u;
            owned[bi] = 1;
        }
        kt__table_accumulate(&b[bi], &b[bj], dom, step, digit);
        if (owned[bj]) {
            KT_FREE(b[bj].var);
            KT_FREE(b[bj].t);
        }
        for (k = bj; k + 1 < *nb; k++) {
            b[k] = b[k + 1];
            owned[k] = owned[k + 1];
        }
        --*nb;
    }
}

/* The smallest over v's dv values of the sum of the bucket's tables at
   ptr[q] (v's value val at ptr[q][val * sv[q]]), and the first value
   reaching it.  The comparisons are written as selections, which compile
   without data-dependent branches.  Tables are added in bucket order
   starting from 0, so the sums are the same whatever loop computes them
   (two tables have their own loop in kt__minimise_out). */
static double kt__bucket_min(const double *const *ptr, const int64_t *sv,
                             int nb, int dv, int *arg) {
    double best, x;
    int val, q, at = 0;
    if (nb == 1) {
        const double *p0 = ptr[0];
        int64_t s0 = sv[0];
        best = p0[0];
        for (val = 1; val < dv; val++) {
            x = p0[val * s0];
            at = x < best ? val : at;
            best = x < best ? x : best;
        }
    } else {
        best = 0;
        for (val = 0; val < dv; val++) {
            x = 0;
            for (q = 0; q < nb; q++) x += ptr[q][val * sv[q]];
            at = val > 0 && x < best ? val : at;
            best = val == 0 || x < best ? x : best;
        }
    }
    *arg = at;
    return best;
}

/* The minimisation itself: for every assignment idx of `vars` (first
   fastest), out[idx] = min over v of the sum of the bucket's tables, and
   argmin[idx] the first minimising choice of v.  Every table is followed
   by carry steps (ptr[q]); v's stride in it, sv[q], picks v's values. */
static void kt__minimise_out(const kt__table *b, int nb, int v,
                             const int *vars, int nv, const int *dom,
                             int64_t size, double *out,
                             unsigned char *argmin, int64_t *step,
                             const double **ptr, int64_t *sv, int *digit) {
    int dv = dom[v], q, j;
    int64_t idx;
    /* argmin is written through a local chunk: a store through an
       unsigned char pointer may alias anything, and would make the
       compiler reload every table pointer and index after it */
    unsigned char chunk[256];
    for (q = 0; q < nb; q++) {
        kt__carry_steps(&b[q], vars, nv, dom, &step[(size_t)q * nv]);
        sv[q] = kt__var_stride(&b[q], v, dom);
        ptr[q] = b[q].t;
    }
    for (j = 0; j < nv; j++) digit[j] = 0;
    if (nb == 2) {
        /* most work ends here once buckets are pre-summed (the dense
           clusters of an LSTM, a residual block's convolutions): both
           tables' positions and steps in registers, three choices (S0, S1
           or R of a matrix) unrolled */
        const double *p0 = ptr[0], *p1 = ptr[1];
        const int64_t *step0 = step, *step1 = step + nv;
        int64_t s0 = sv[0], s1 = sv[1];
        for (idx = 0; idx < size; idx++) {
            double best = p0[0] + p1[0], x;
            int arg = 0, val;
            if (dv == 3) {
                double x1 = p0[s0] + p1[s1], x2 = p0[2 * s0] + p1[2 * s1];
                arg = x1 < best;
                best = x1 < best ? x1 : best;
                arg = x2 < best ? 2 : arg;
                best = x2 < best ? x2 : best;
            } else {
                for (val = 1; val < dv; val++) {
                    x = p0[val * s0] + p1[val * s1];
                    arg = x < best ? val : arg;
                    best = x < best ? x : best;
                }
            }
            out[idx] = best;
            chunk[idx & 255] = (unsigned char)arg;
            if ((idx & 255) == 255 || idx + 1 == size)
                memcpy(argmin + (idx & ~(int64_t)255), chunk,
                       (size_t)(idx & 255) + 1);
            j = kt__odometer_next(digit, vars, nv, dom);
            if (j < nv) {
                p0 += step0[j];
                p1 += step1[j];
            }
        }
        return;
    }
    for (idx = 0; idx < size; idx++) {
        int arg;
        out[idx] = kt__bucket_min(ptr, sv, nb, dv, &arg);
        chunk[idx & 255] = (unsigned char)arg;
        if ((idx & 255) == 255 || idx + 1 == size)
            memcpy(argmin + (idx & ~(int64_t)255), chunk,
                   (size_t)(idx & 255) + 1);
        j = kt__odometer_next(digit, vars, nv, dom);
        if (j < nv)
            for (q = 0; q < nb; q++) ptr[q] += step[(size_t)q * nv + j];
    }
}

/* Appends table t to the DP's list *ptab (of *ntab, room for *cap),
   doubling the room when it is full.  0: out of memory (t is the
   caller's to free). */
static int kt__table_push(kt__table **ptab, int *ntab, int *cap,
                          kt__table t) {
    if (*ntab == *cap) {
        kt__table *grown = (kt__table *)KT_REALLOC(
            *ptab, (size_t)*cap * 2 * sizeof **ptab);
        if (!grown) return 0;
        *ptab = grown;
        *cap *= 2;
    }
    (*ptab)[(*ntab)++] = t;
    return 1;
}

/* Eliminates v: adds up every factor containing it (its bucket), minimises
   v out, and remembers the minimiser for every assignment of the rest (the
   g_l tables of SOYBEAN equations 4-5). */
static kt_status kt__eliminate(kt__table **ptab, int *ntab, int *cap,
                               kt__adj *adj, int nvars, const int *dom,
                               int v, kt__elim *e, int *mark, int *stamp,
                               kt_error *err) {
    kt__table *tab = *ptab, nt, *bucket = NULL;
    int f, j, k, nin = 0, *in = NULL, *vars = NULL, nv = 0, *owned = NULL;
    int *digit = NULL;
    int64_t size = 1, *step = NULL, *sv = NULL;
    const double **ptr = NULL;
    memset(&nt, 0, sizeof nt);
    in = (int *)KT_MALLOC(sizeof(int) * ((size_t)adj[v].n + 1));
    vars = (int *)KT_MALLOC(sizeof(int) * ((size_t)nvars + 1));
    if (!in || !vars) goto nomem;
    ++*stamp;
    for (k = 0; k < adj[v].n; k++) {
        f = adj[v].id[k];
        if (!tab[f].alive) continue;
        in[nin++] = f;
        for (j = 0; j < tab[f].nv; j++) {
            int x = tab[f].var[j];
            if (x == v || mark[x] == *stamp) continue;
            mark[x] = *stamp;
            vars[nv++] = x;
            size *= dom[x];
        }
    }
    nt.nv = nv;
    nt.var = (int *)kt__calloc((size_t)nv + 1, sizeof(int));
    nt.size = size;
    nt.t = (double *)KT_MALLOC((size_t)size * sizeof(double));
    nt.alive = 1;
    e->var = v;
    e->nothers = nv;
    e->others = (int *)kt__calloc((size_t)nv + 1, sizeof(int));
    e->argmin = (unsigned char *)KT_MALLOC((size_t)size);
    /* scratch: the bucket's tables (copies of the structs), carry steps
       per table and digit, odometer digits (a table of the bucket has at
       most v and the nv others) */
    bucket = (kt__table *)kt__calloc((size_t)nin + 1, sizeof(kt__table));
    owned = (int *)kt__calloc((size_t)nin + 1, sizeof(int));
    step = (int64_t *)KT_MALLOC((size_t)(nin + 1) * ((size_t)nv + 2) *
                                sizeof(int64_t));
    ptr = (const double **)KT_MALLOC(((size_t)nin + 1) * sizeof(double *));
    sv = (int64_t *)KT_MALLOC(((size_t)nin + 1) * sizeof(int64_t));
    digit = (int *)KT_MALLOC(((size_t)nv + 2) * sizeof(int));
    if (!nt.var || !nt.t || !e->others || !e->argmin || !bucket || !owned ||
        !step || !ptr || !sv || !digit)
        goto nomem;
    memcpy(nt.var, vars, sizeof(int) * (size_t)nv);
    memcpy(e->others, vars, sizeof(int) * (size_t)nv);
    for (j = 0; j < nin; j++) bucket[j] = tab[in[j]];
    if (kt__bucket_presum(bucket, owned, &nin, size * dom[v], dom, mark,
                          stamp, step, digit) != KT_OK)
        goto nomem;
    kt__minimise_out(bucket, nin, v, vars, nv, dom, size, nt.t, e->argmin,
                     step, ptr, sv, digit);
    for (j = 0; j < nin; j++)
        if (owned[j]) {
            KT_FREE(bucket[j].var);
            KT_FREE(bucket[j].t);
        }
    /* the bucket's tables are consumed */
    for (k = 0; k < adj[v].n; k++) {
        f = adj[v].id[k];
        if (!tab[f].alive) continue;
        tab[f].alive = 0;
        KT_FREE(tab[f].var);
        KT_FREE(tab[f].t);
        tab[f].var = NULL;
        tab[f].t = NULL;
    }
    KT_FREE(bucket);
    KT_FREE(owned);
    KT_FREE(step);
    KT_FREE((void *)ptr);
    KT_FREE(sv);
    KT_FREE(digit);
    bucket = NULL;
    owned = NULL;
    step = sv = NULL;
    ptr = NULL;
    digit = NULL;
    if (!kt__table_push(ptab, ntab, cap, nt)) goto nomem;
    tab = *ptab;
    KT_FREE(in);
    KT_FREE(vars);
    for (j = 0; j < nv; j++)
        if (!kt__adj_add(&adj[e->others[j]], *ntab - 1)) {
            /* the new table is the DP's to free; the record is not kept */
            KT_FREE(e->others);
            KT_FREE(e->argmin);
            e->others = NULL;
            e->argmin = NULL;
            return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory in the DP");
        }
    return KT_OK;
nomem:
    if (bucket && owned)
        for (j = 0; j < nin; j++)
            if (owned[j]) {
                KT_FREE(bucket[j].var);
                KT_FREE(bucket[j].t);
            }
    KT_FREE(bucket);
    KT_FREE(owned);
    KT_FREE(step);
    KT_FREE((void *)ptr);
    KT_FREE(sv);
    KT_FREE(digit);
    KT_FREE(nt.var);
    KT_FREE(nt.t);
    KT_FREE(in);
    KT_FREE(vars);
    KT_FREE(e->others);
    KT_FREE(e->argmin);
    e->others = NULL;
    e->argmin = NULL;
    return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory in the DP");
}

/* Adds every table whose variables are a subset of another's into that
   one (its values broadcast over the extra variables) and retires it:
   a forward op and its backward ops often touch the same tensors, and
   fewer, larger tables make each elimination cheaper.  A table that can
   take a's values contains a's first variable, so only the tables on that
   variable's list are candidates (in table order, as a full scan). */
static kt_status kt__absorb_tables(kt__table *tab, int ntab,
                                   const kt__adj *adj, const int *dom,
                                   int nvars, kt_error *err) {
    int a, k, i, j;
    int64_t *step = (int64_t *)kt__calloc((size_t)nvars + 1, sizeof(int64_t));
    int *digit = (int *)kt__calloc((size_t)nvars + 1, sizeof(int));
    if (!step || !digit) {
        KT_FREE(step);
        KT_FREE(digit);
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory in the DP");
    }
    for (a = 0; a < ntab; a++) {
        const kt__adj *cand;
        if (!tab[a].alive || tab[a].nv == 0) continue;
        cand = &adj[tab[a].var[0]];
        for (k = 0; k < cand->n; k++) {
            int b = cand->id[k], sub = 1;
            if (b == a || !tab[b].alive || tab[b].nv < tab[a].nv ||
                (tab[b].nv == tab[a].nv && b < a))
                continue;
            for (i = 0; i < tab[a].nv && sub; i++) {
                for (j = 0; j < tab[b].nv && tab[b].var[j] != tab[a].var[i]; j++) {}
                sub = j < tab[b].nv;
            }
            if (!sub) continue;
            kt__table_accumulate(&tab[b], &tab[a], dom, step, digit);
            tab[a].alive = 0;
            break;
        }
    }
    KT_FREE(step);
    KT_FREE(digit);
    return KT_OK;
}

/* The DP's initial factors (kt__cut_dp), one table per op class, copied
   from the class factors into *ptab; marks their tensors active and dirty
   (to be scored), gives each the BFS rank of its first op (vrank), and
   lists each table on its tensors' adjacency lists. */
static kt_status kt__dp_initial_tables(const kt__cut *c, const int *rank,
                                       int *vrank, int *active, int *dirty,
                                       kt__table **ptab, int *ntab, int *cap,
                                       kt__adj *adj, kt_error *err) {
    const kt_graph *g = c->g;
    int i, j;
    for (i = 0; i < g->nop; i++) {
        const kt__factor *fa = &c->factor[i];
        kt__table t;
        if (c->ocls[i] != i) continue;
        memset(&t, 0, sizeof t);
        t.nv = fa->nt;
        t.size = fa->size;
        t.alive = 1;
        t.var = (int *)kt__calloc((size_t)fa->nt + 1, sizeof(int));
        t.t = (double *)KT_MALLOC((size_t)fa->size * sizeof(double));
        if (!t.var || !t.t || !kt__table_push(ptab, ntab, cap, t)) {
            KT_FREE(t.var);
            KT_FREE(t.t);
            return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory in the DP");
        }
        memcpy(t.var, fa->tensor, sizeof(int) * (size_t)fa->nt);
        memcpy(t.t, fa->cost, sizeof(double) * (size_t)fa->size);
        for (j = 0; j < fa->nt; j++) {
            active[fa->tensor[j]] = 1;
            dirty[fa->tensor[j]] = 1;
            if (rank[i] < vrank[fa->tensor[j]]) vrank[fa->tensor[j]] = rank[i];
            if (!kt__adj_add(&adj[fa->tensor[j]], *ntab - 1))
                return kt__fail(err, KT_ERR_NOMEM, 0,
                                "out of memory in the DP");
        }
    }
    return KT_OK;
}

/* The DP's choices (c->pick) from its ne eliminations, walked backwards:
   each one's argmin is indexed by the choices of the tensors eliminated
   after it. */
static void kt__dp_backtrack(kt__cut *c, const kt__elim *el, int ne) {
    int i, j;
    for (i = 0; i < c->g->ntensor; i++) c->pick[i] = 0;
    for (i = ne - 1; i >= 0; i--) {
        int64_t idx = 0, stride = 1;
        for (j = 0; j < el[i].nothers; j++) {
            idx += c->pick[el[i].others[j]] * stride;
            stride *= c->nchoice[el[i].others[j]];
        }
        c->pick[el[i].var] = el[i].argmin[idx];
    }
}

/* The DP over one cut as variable elimination on the factor graph of
   tensor classes.  SOYBEAN 4.2 eliminates level by level along BFS levels,
   keeping the tensors shared by adjacent levels as the state; ktile
   eliminates one tensor at a time, always the one whose elimination leaves
   the smallest table (BFS order breaks ties), which keeps the state small
   on branchy graphs (attention, residual blocks) where whole BFS levels
   are wide.  The optimum is the same exact minimum.  Where the time goes:
   the tables of dense clusters (an unrolled LSTM cell with its backward
   ops ties about a dozen tensor classes, 3^11-state tables), so each
   elimination first pre-sums its bucket (kt__bucket_presum) and then
   walks the joint states once with carry steps (kt__minimise_out). */
static kt_status kt__cut_dp(kt__cut *c, int64_t limit, kt_error *err) {
    const kt_graph *g = c->g;
    int nt = g->ntensor, i, j, ne = 0, ntab = 0, cap = 16, stamp = 0, left;
    int *rank = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    int *vrank = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    int *active = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    int *mark = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    double *score = (double *)kt__calloc((size_t)nt + 1, sizeof(double));
    int *dirty = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    kt__elim *el = (kt__elim *)kt__calloc((size_t)nt + 1, sizeof(kt__elim));
    kt__table *tab = (kt__table *)kt__calloc((size_t)cap, sizeof(kt__table));
    kt__adj *adj = (kt__adj *)kt__calloc((size_t)nt + 1, sizeof(kt__adj));
    kt_status s = KT_OK;
    if (!rank || !vrank || !active || !mark || !score || !dirty || !el ||
        !tab || !adj) {
        s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory in the DP");
        goto done;
    }
    if ((s = kt__dp_rank(c, rank, err)) != KT_OK) goto done;
    for (i = 0; i < nt; i++) vrank[i] = g->nop;
    s = kt__dp_initial_tables(c, rank, vrank, active, dirty, &tab, &ntab,
                              &cap, adj, err);
    if (s == KT_OK)
        s = kt__absorb_tables(tab, ntab, adj, c->nchoice, nt, err);
    /* the variables still to eliminate, as a list (most tensors are tied
       steps whose class is represented by another) */
    for (left = 0, i = 0; i < nt; i++)
        if (active[i]) active[left++] = i;
    while (s == KT_OK && left > 0) {
        int best = -1, at = -1, a;
        for (a = 0; a < left; a++) {
            i = active[a];
            if (dirty[i]) {
                score[i] = kt__elim_size(tab, adj, c->nchoice, i, mark,
                                         ++stamp);
                dirty[i] = 0;
            }
            /* smallest table, then BFS rank, then index: a total order,
               so the list's order does not matter */
            if (best < 0 || score[i] < score[best] ||
                (score[i] == score[best] &&
                 (vrank[i] < vrank[best] ||
                  (vrank[i] == vrank[best] && i < best)))) {
                best = i;
                at = a;
            }
        }
        if (score[best] > (double)limit) {
            s = kt__fail(err, KT_ERR_LIMIT, 0, "level DP: eliminating tensor "
                         "%s needs a table of %.0f states, above the limit of "
                         "%lld", g->tensor[best].name, score[best],
                         (long long)limit);
            break;
        }
        s = kt__eliminate(&tab, &ntab, &cap, adj, nt, c->nchoice, best,
                          &el[ne], mark, &stamp, err);
        if (s != KT_OK) break;
        for (j = 0; j < el[ne].nothers; j++) dirty[el[ne].others[j]] = 1;
        ne++;
        active[at] = active[--left];
    }
    if (s != KT_OK) goto done;
    kt__dp_backtrack(c, el, ne);
done:
    for (i = 0; i < ne; i++) {
        KT_FREE(el[i].argmin);
        KT_FREE(el[i].others);
    }
    for (i = 0; tab && i < ntab; i++) {
        KT_FREE(tab[i].var);
        KT_FREE(tab[i].t);
    }
    KT_FREE(tab);
    for (i = 0; adj && i < nt; i++) KT_FREE(adj[i].id);
    KT_FREE(adj);
    KT_FREE(el);
    KT_FREE(rank);
    KT_FREE(vrank);
    KT_FREE(active);
    KT_FREE(mark);
    KT_FREE(score);
    KT_FREE(dirty);
    return s;
}

/* --------------------------------------------------------------- baselines */

/* SOYBEAN 4.1: data parallelism splits every activation (and its gradient)
   along the batch dimension 0 and replicates weights; model parallelism
   splits weights by rows (dim 0), activations by columns (dim 1: an MLP's
   features, a CNN's channels) and replicates the rest (activation
   gradients).  AllRow-greedy (Tofu 7.3) splits every tensor on dim 0. */
static int kt__is_weightlike(const kt_graph *g, int t) {
    kt_tensor_kind k = g->tensor[kt__tensor_root(g, t)].kind;
    return k == KT_WEIGHT || k == KT_OPTSTATE;
}

static kt_status kt__cut_baseline(kt__cut *c, kt_strategy which,
                                  kt_error *err) {
    const kt_graph *g = c->g;
    int t, q;
    for (t = 0; t < g->ntensor; t++) {
        const kt_tensor *x = &g->tensor[t];
        int want;
        if (which == KT_STRATEGY_GREEDY)
            want = 0; /* AllRow: dim 0, or R once dim 0 is used up */
        else if (which == KT_STRATEGY_DATA)
            want = kt__is_weightlike(g, t) ? KT_CUT_R : 0;
        else if (kt__is_weightlike(g, t))
            want = 0;
        else if (x->kind == KT_GRADIENT)
            want = KT_CUT_R;
        else /* features: an MLP's columns, a CNN's channels */
            want = x->rank > 1 ? 1 : 0;
        if (c->tcls[t] != t) continue; /* a tied step follows its class */
        for (q = 0; q < c->nchoice[t] && c->choice[t][q] != want; q++) {}
        if (q == c->nchoice[t] && which != KT_STRATEGY_DATA)
            q = c->nchoice[t] - 1; /* R where the dimension is used up */
        if (q == c->nchoice[t])
            return kt__fail(err, KT_ERR_SHAPE, 0, "%s parallelism: tensor "
                            "%s: dim %d (%lld) cannot be split into %lld "
                            "parts", which == KT_STRATEGY_DATA ? "data"
                                                               : "model",
                            x->name, want, (long long)x->shape[want],
                            (long long)(kt__dim_parts(&c->p->tiling[t],
                                                      &c->p->f, c->cut,
                                                      want) *
                                        c->p->f.k[c->cut]));
        c->pick[t] = q;
    }
    return KT_OK;
}

/* Spartan (Huang thesis Fig. 2.8, as Tofu 7.3 describes it): tensors in
   decreasing size; each takes the choice that is cheapest given the
   choices already made, its undecided neighbours at their best. */
static kt_status kt__cut_spartan(kt__cut *c, kt_error *err) {
    const kt_graph *g = c->g;
    int nt = g->ntensor, i, j, o;
    int *order = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    int *decided = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    double *size = (double *)kt__calloc((size_t)nt + 1, sizeof(double));
    if (!order || !decided || !size) {
        KT_FREE(order);
        KT_FREE(decided);
        KT_FREE(size);
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    }
    for (i = 0; i < nt; i++) {
        int d;
        size[i] = g->tensor[i].elem_bytes;
        for (d = 0; d < g->tensor[i].rank; d++) size[i] *= (double)g->tensor[i].shape[d];
        order[i] = i;
    }
    for (i = 1; i < nt; i++) { /* stable insertion sort, largest first */
        int x = order[i];
        for (j = i - 1; j >= 0 && size[order[j]] < size[x]; j--)
            order[j + 1] = order[j];
        order[j + 1] = x;
    }
    for (i = 0; i < nt; i++) {
        int t = order[i], ch, best = 0;
        double best_cost = -1;
        if (c->tcls[t] != t) continue;
        for (ch = 0; ch < c->nchoice[t]; ch++) {
            double total = 0;
            for (o = 0; o < g->nop; o++) {
                const kt__factor *fa = &c->factor[o];
                int slot, q;
                int64_t a;
                double m = -1;
                if (c->ocls[o] != o || (slot = kt__factor_slot(fa, t)) < 0)
                    continue;
                for (a = 0; a < fa->size; a++) {
                    int64_t rest = a;
                    int ok = 1;
                    for (q = 0; q < fa->nt && ok; q++) {
                        int x = fa->tensor[q], pick = (int)(rest % c->nchoice[x]);
                        rest /= c->nchoice[x];
                        if (q == slot) ok = pick == ch;
                        else if (decided[x]) ok = pick == c->pick[x];
                    }
                    if (ok && (m < 0 || fa->cost[a] < m)) m = fa->cost[a];
                }
                total += m;
            }
            if (best_cost < 0 || total < best_cost) {
                best_cost = total;
                best = ch;
            }
        }
        c->pick[t] = best;
        decided[t] = 1;
    }
    KT_FREE(order);
    KT_FREE(decided);
    KT_FREE(size);
    return KT_OK;
}

/* ------------------------------------------------------ recursive k-cuts */

static double kt__now(void);

/* SOYBEAN Algorithm 1 / Tofu 5.2: one cut at a time, largest factor first,
   each solved over the whole graph given the earlier cuts.  A cut's
   factors price the plan truncated to cuts 1..i, so what the DP minimises
   at cut i is exactly what that cut adds, uneven tiles included. */
static kt_status kt__search_once(const kt_graph *g, const kt_factors *f,
                                 const kt_search_options *o, double lambda,
                                 kt_plan *p, kt_error *err) {
    double before = 0;
    int i;
    kt__memo memo;
    int *tcls = (int *)kt__calloc((size_t)g->ntensor + 1, sizeof(int));
    int *ocls = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    kt__hash *role = (kt__hash *)kt__calloc(
        (size_t)(g->nop + 1) * (KT_MAX_VARS + 1), sizeof(kt__hash));
    kt_status s;
    if (!tcls || !ocls || !role) {
        KT_FREE(tcls);
        KT_FREE(ocls);
        KT_FREE(role);
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    }
    for (i = 0; i < g->nop; i++) {
        int r;
        for (r = 0; r <= g->op[i].ninputs; r++)
            role[i * (KT_MAX_VARS + 1) + r] = kt__role_hash(g, i, r);
    }
    memset(&memo, 0, sizeof memo);
    if ((s = kt__tie_classes(g, o->coalesce, tcls, ocls, err)) != KT_OK ||
        (s = kt_plan_init(p, g, f, err)) != KT_OK) {
        KT_FREE(tcls);
        KT_FREE(ocls);
        KT_FREE(role);
        return s;
    }
    for (i = 0; i < f->count; i++) {
        kt__cut c;
        double total;
        if ((s = kt__cut_setup(&c, g, p, i, tcls, ocls, o, lambda, &memo,
                               role, err)) != KT_OK)
            break;
        switch (o->strategy) {
        case KT_STRATEGY_DP: s = kt__cut_dp(&c, o->dp_state_limit, err); break;
        case KT_STRATEGY_BRUTEFORCE:
            s = kt__cut_bruteforce(&c, o->bruteforce_limit, err);
            break;
        case KT_STRATEGY_DATA:
        case KT_STRATEGY_MODEL:
        case KT_STRATEGY_GREEDY:
            s = kt__cut_baseline(&c, o->strategy, err);
            break;
        case KT_STRATEGY_SPARTAN: s = kt__cut_spartan(&c, err); break;
        case KT_STRATEGY_EQUALCHOP:
            s = kt__cut_dp(&c, o->dp_state_limit, err);
            break;
        default:
            s = kt__fail(err, KT_ERR_INVALID, 0, "unknown strategy %d",
                         (int)o->strategy);
        }
        if (s == KT_OK) {
            /* bytes only for the plain bytes objective; otherwise the plan
               is priced exactly below */
            total = kt__cut_apply(&c);
            if (lambda == 0 && o->objective == KT_OBJECTIVE_BYTES)
                p->cut_bytes[i] = (int64_t)(total - before);
            before = total;
        }
        kt__cut_free(&c);
        if (s != KT_OK) break;
    }
    KT_FREE(memo.e);
    KT_FREE(role);
    KT_FREE(tcls);
    KT_FREE(ocls);
    if (s != KT_OK) {
        kt_plan_free(p);
        return s;
    }
    if (lambda == 0 && o->objective == KT_OBJECTIVE_BYTES)
        p->total_bytes = (int64_t)before;
    /* With a penalty or the time objective the DP's totals are not bytes:
       price the plan exactly. */
    if (lambda > 0 || o->objective == KT_OBJECTIVE_TIME)
        s = kt_plan_eval(g, p, err);
    if (s != KT_OK) {
        kt_plan_free(p);
        return s;
    }
    p->memory_bytes = kt_plan_memory(g, p);
    p->step_seconds = kt_plan_step_seconds(g, p, o->machine);
    return KT_OK;
}

/* 1 when plan a beats plan b on the search's objective: step time (then
   bytes) for time, bytes for bytes. */
static int kt__plan_better(const kt_plan *a, const kt_plan *b,
                           kt_objective objective) {
    if (objective == KT_OBJECTIVE_TIME && a->step_seconds != b->step_seconds)
        return a->step_seconds < b->step_seconds;
    return a->total_bytes < b->total_bytes;
}

kt_status kt_plan_search(const kt_graph *g, const kt_factors *f,
                         const kt_search_options *opt, kt_plan *p,
                         kt_error *err) {
    kt_search_options o;
    kt_machine def = kt_machine_default();
    double start = kt__now();
    kt_status s;
    memset(&o, 0, sizeof o);
    if (opt) o = *opt;
    if (!o.machine) o.machine = &def;
    if (o.bruteforce_limit <= 0) o.bruteforce_limit = INT64_C(1) << 22;
    if (o.dp_state_limit <= 0) o.dp_state_limit = INT64_C(1) << 24;
    if (!p) return kt__fail(err, KT_ERR_INVALID, 0, "no plan (NULL)");
    memset(p, 0, sizeof *p);
    if ((s = kt__graph_check_final(g, err)) != KT_OK ||
        (s = kt_factors_check(f, err)) != KT_OK ||
        (s = kt__machine_check(o.machine, err)) != KT_OK)
        return s;
    if ((unsigned)o.objective > (unsigned)KT_OBJECTIVE_TIME)
        return kt__fail(err, KT_ERR_INVALID, 0, "unknown objective %d",
                        (int)o.objective);
    if (o.memory_cap < 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "memory cap %lld bytes is "
                        "negative (0: none)", (long long)o.memory_cap);
    if ((s = kt__search_once(g, f, &o, 0, p, err)) != KT_OK) return s;
    if (o.memory_cap > 0 && p->memory_bytes > o.memory_cap) {
        /* Memory cap: a Lagrangian penalty on tensor bytes per device.
           Raise it until a plan fits, then bisect towards the smallest
           penalty that fits and keep the fitting plan best on the
           objective (the best of this family, not a proven constrained
           optimum). */
        double lo = 0, hi = 1e-9;
        int64_t smallest = p->memory_bytes;
        int fits = 0, step;
        for (step = 0; step < 80 && !fits; step++, hi *= 4) {
            kt_plan q;
            if ((s = kt__search_once(g, f, &o, hi, &q, err)) != KT_OK) break;
            if (q.memory_bytes < smallest) smallest = q.memory_bytes;
            fits = q.memory_bytes <= o.memory_cap;
            if (fits) {
                kt_plan_free(p);
                *p = q;
                break;
            }
            kt_plan_free(&q);
            lo = hi;
        }
        for (step = 0; fits && s == KT_OK && step < 16; step++) {
            double mid = (lo + hi) / 2;
            kt_plan q;
            if ((s = kt__search_once(g, f, &o, mid, &q, err)) != KT_OK) break;
            if (q.memory_bytes <= o.memory_cap) {
                hi = mid;
                if (kt__plan_better(&q, p, o.objective)) {
                    kt_plan_free(p);
                    *p = q;
                    continue;
                }
            } else {
                lo = mid;
            }
            kt_plan_free(&q);
        }
        if (s == KT_OK && !fits)
            s = kt__fail(err, KT_ERR_SHAPE, 0, "no plan fits in %lld bytes "
                         "per device: the smallest found needs %lld",
                         (long long)o.memory_cap, (long long)smallest);
        if (s != KT_OK) {
            kt_plan_free(p);
            return s;
        }
    }
    p->search_seconds = kt__now() - start;
    kt__ok(err);
    return KT_OK;
}

static double kt__now(void) { return (double)(KT_CLOCK()); }

/* --------------------------------------------------------------- autodiff */

/* Backward statements are generated as TDL text and added through the same
   parser as everything else, so they get the same shape inference,
   interval analysis and strategies. */

/* A growable string. */
typedef struct kt__str {
    char *s;
    size_t len, cap;
    int oom;
} kt__str;

static void kt__str_add(kt__str *b, const char *fmt, ...) {
    va_list ap;
    int n;
    if (b->oom) return;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        n = b->cap ? vsnprintf(b->s + b->len, room, fmt, ap) : -1;
        va_end(ap);
        if (n >= 0 && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        {
            size_t nc = b->cap ? 2 * b->cap + (n > 0 ? (size_t)n : 0) : 256;
            char *ns = (char *)KT_REALLOC(b->s, nc);
            if (!ns) {
                b->oom = 1;
                return;
            }
            b->s = ns;
            b->cap = nc;
        }
    }
}

/* Index variables of one generated statement: the forward op's variables
   first, then new ones (gradient output variables, strides). */
#define KT__GV (2 * KT_MAX_VARS)
typedef struct kt__gvars {
    int n;
    char name[KT__GV][KT_NAME_MAX + 4];
    int64_t extent[KT__GV];
} kt__gvars;

/* An index as an affine form over the generated statement's variables;
   `over` > 1 means the whole form is divided by it (floor). */
typedef struct kt__gindex {
    int64_t coef[KT__GV];
    int64_t c;
    int64_t over;
    int whole; /* ':' */
} kt__gindex;

typedef struct kt__gaccess {
    int tensor;
    int padded;
    int rank;
    kt__gindex idx[KT_MAX_DIMS];
} kt__gaccess;

static void kt__gindex_from_sym(kt__gindex *gi, const kt_sym_interval *s,
                                int whole) {
    int v;
    memset(gi, 0, sizeof *gi);
    gi->whole = whole;
    for (v = 0; v < KT_MAX_VARS; v++)
        gi->coef[v] = s->lower.lo_coef[v] + s->lower.hi_coef[v];
    gi->c = s->lower.c;
    gi->over = s->divisor;
}

static void kt__gindex_print(kt__str *b, const kt__gindex *gi,
                             const kt__gvars *gv) {
    int v, first = 1;
    if (gi->whole) {
        kt__str_add(b, ":");
        return;
    }
    if (gi->over > 1) kt__str_add(b, "(");
    for (v = 0; v < gv->n; v++) {
        int64_t a = gi->coef[v];
        if (!a) continue;
        if (a < 0) kt__str_add(b, first ? "-" : "-");
        else if (!first) kt__str_add(b, "+");
        if (a != 1 && a != -1) kt__str_add(b, "%lld*", (long long)(a < 0 ? -a : a));
        kt__str_add(b, "%s", gv->name[v]);
        first = 0;
    }
    if (first) kt__str_add(b, "%lld", (long long)gi->c);
    else if (gi->c > 0) kt__str_add(b, "+%lld", (long long)gi->c);
    else if (gi->c < 0) kt__str_add(b, "-%lld", (long long)-gi->c);
    if (gi->over > 1) kt__str_add(b, ")/%lld", (long long)gi->over);
}

static void kt__gaccess_print(kt__str *b, const kt_graph *g,
                              const kt__gaccess *a, const kt__gvars *gv) {
    int d;
    if (a->padded) kt__str_add(b, "pad(");
    kt__str_add(b, "%s[", g->tensor[a->tensor].name);
    for (d = 0; d < a->rank; d++) {
        if (d) kt__str_add(b, ",");
        kt__gindex_print(b, &a->idx[d], gv);
    }
    kt__str_add(b, "]");
    if (a->padded) kt__str_add(b, ")");
}

/* Replaces variable v by (p - rest) / a_v in an index (a_v = +-1): the
   inversion that turns x[h+kh] into dx[p] with h = p - kh (Tofu's
   backward convolution reads dy with a halo). */
static int kt__gindex_subst(kt__gindex *e, int v, const kt__gindex *pivot,
                            int p) {
    int64_t k = e->coef[v], av = pivot->coef[v];
    int u;
    if (!k) return 1;
    if (e->over > 1) return 0;
    e->coef[v] = 0;
    /* v = (p - sum_{u != v} a_u u - c) / av, av = +-1 */
    e->coef[p] += k * av;
    for (u = 0; u < KT__GV; u++)
        if (u != v) e->coef[u] -= k * av * pivot->coef[u];
    e->c -= k * av * pivot->c;
    return 1;
}

/* The derivative of an expression node with respect to access `wrt`, as
   TDL text into b; returns 0 when it is identically zero.  Function
   derivatives use the function's argument (relu' = step(u)). */
typedef struct kt__dctx {
    const kt_graph *g;
    const kt_op *op;
    const kt__gaccess *acc;  /* the op's accesses, substituted */
    const kt__gvars *gv;
} kt__dctx;

static void kt__expr_print(kt__str *b, const kt__dctx *x, int node) {
    const kt_expr *e = &x->op->expr[node];
    switch (e->kind) {
    case KT_EXPR_CONST: kt__str_add(b, "%.17g", e->value); break;
    case KT_EXPR_ACCESS:
        kt__gaccess_print(b, x->g, &x->acc[e->index], x->gv);
        break;
    case KT_EXPR_UNARY:
        kt__str_add(b, "%s(", kt__fn_names[e->fn]);
        kt__expr_print(b, x, e->a);
        kt__str_add(b, ")");
        break;
    case KT_EXPR_BINARY:
        kt__str_add(b, "(");
        kt__expr_print(b, x, e->a);
        kt__str_add(b, " %c ", e->fn);
        kt__expr_print(b, x, e->b);
        kt__str_add(b, ")");
        break;
    }
}

/* Derivative text with the constants 0 and 1 folded away: returns
   KT__D_ZERO, KT__D_ONE or KT__D_TEXT (text appended to b). */
enum { KT__D_ZERO = 0, KT__D_ONE, KT__D_TEXT };

static int kt__deriv(kt__str *b, const kt__dctx *x, int node, int wrt);

/* f'(u) for the unary functions, as text templates in which @ stands for
   the argument u (in KT_FN_* order). */
static const char *const kt__fn_deriv_text[KT_FN_COUNT] = {
    "-1",                          /* neg     */
    "step(@)",                     /* relu    */
    "(1 - tanh(@)*tanh(@))",       /* tanh    */
    "sigmoid(@)*(1 - sigmoid(@))", /* sigmoid */
    "exp(@)",                      /* exp     */
    "(1 / @)",                     /* log     */
    "(0.5 / sqrt(@))",             /* sqrt    */
    "0"                            /* step: flat almost everywhere */
};

static void kt__fn_deriv(kt__str *b, const kt__dctx *x, int fn, int arg) {
    const char *t;
    for (t = kt__fn_deriv_text[fn]; *t; t++) {
        if (*t == '@') kt__expr_print(b, x, arg);
        else kt__str_add(b, "%c", *t);
    }
}

/* "coefficient * derivative" with the derivative's own kind. */
static void kt__times(kt__str *b, int kind, const kt__str *d) {
    if (kind == KT__D_TEXT) kt__str_add(b, " * %s", d->s);
}

static int kt__deriv(kt__str *b, const kt__dctx *x, int node, int wrt) {
    const kt_expr *e = &x->op->expr[node];
    kt__str da, db;
    int ka, kb, result = KT__D_TEXT;
    if (e->kind == KT_EXPR_CONST) return KT__D_ZERO;
    if (e->kind == KT_EXPR_ACCESS)
        return e->index == wrt ? KT__D_ONE : KT__D_ZERO;
    memset(&da, 0, sizeof da);
    memset(&db, 0, sizeof db);
    ka = kt__deriv(&da, x, e->a, wrt);
    kb = e->kind == KT_EXPR_BINARY ? kt__deriv(&db, x, e->b, wrt) : KT__D_ZERO;
    if (e->kind == KT_EXPR_UNARY) {
        if (ka == KT__D_ZERO || e->fn == KT_FN_STEP) result = KT__D_ZERO;
        else {
            kt__fn_deriv(b, x, e->fn, e->a);
            kt__times(b, ka, &da);
        }
    } else if (ka == KT__D_ZERO && kb == KT__D_ZERO) {
        result = KT__D_ZERO;
    } else if (e->fn == '+' || e->fn == '-') {
        kt__str_add(b, "(");
        if (ka != KT__D_ZERO) kt__str_add(b, "%s", ka == KT__D_ONE ? "1" : da.s);
        if (kb != KT__D_ZERO)
            kt__str_add(b, "%s%s", e->fn == '-' ? " - " : (ka ? " + " : ""),
                        kb == KT__D_ONE ? "1" : db.s);
        kt__str_add(b, ")");
    } else if (e->fn == '*') {
        kt__str_add(b, "(");
        if (ka != KT__D_ZERO) {
            kt__expr_print(b, x, e->b);
            kt__times(b, ka, &da);
        }
        if (ka != KT__D_ZERO && kb != KT__D_ZERO) kt__str_add(b, " + ");
        if (kb != KT__D_ZERO) {
            kt__expr_print(b, x, e->a);
            kt__times(b, kb, &db);
        }
        kt__str_add(b, ")");
    } else { /* (a/b)' = a'/b - a b'/b^2 */
        kt__str_add(b, "(");
        if (ka != KT__D_ZERO) {
            kt__str_add(b, "%s / ", ka == KT__D_ONE ? "1" : da.s);
            kt__expr_print(b, x, e->b);
        }
        if (kb != KT__D_ZERO) {
            kt__str_add(b, " - ");
            kt__expr_print(b, x, e->a);
            kt__times(b, kb, &db);
            kt__str_add(b, " / (");
            kt__expr_print(b, x, e->b);
            kt__str_add(b, " * ");
            kt__expr_print(b, x, e->b);
            kt__str_add(b, ")");
        }
        kt__str_add(b, ")");
    }
    if (da.oom || db.oom) b->oom = 1;
    KT_FREE(da.s);
    KT_FREE(db.s);
    return result;
}

static int kt__gvar_new(kt__gvars *gv, const char *base, int64_t extent) {
    int v, n = 0;
    char name[KT_NAME_MAX + 4];
    for (;;) {
        int clash = 0;
        snprintf(name, sizeof name, "%s%d", base, n++);
        for (v = 0; v < gv->n; v++)
            if (strcmp(gv->name[v], name) == 0) clash = 1;
        if (!clash) break;
    }
    if (gv->n == KT__GV) return -1;
    snprintf(gv->name[gv->n], sizeof gv->name[0], "%s", name);
    gv->extent[gv->n] = extent;
    return gv->n++;
}

/* How many accesses other than `skip` use variable v. */
static int kt__gvar_uses(const kt__gaccess *acc, int nacc, int skip, int v) {
    int a, d, n = 0;
    for (a = 0; a < nacc; a++) {
        if (a == skip) continue;
        for (d = 0; d < acc[a].rank; d++)
            if (acc[a].idx[d].coef[v]) n++;
    }
    return n;
}

/* One backward statement being derived: its index variables (the op's,
   then the ones solving introduces), the accesses (the op's reads, then
   dY[o...] at `dyi`), the access `wrt` whose gradient it writes, which
   variables are solved away, which reads were rewritten (they become
   zero-padded) and the variable of each output dimension. */
typedef struct kt__gstmt {
    const kt_graph *g;
    const kt_op *op;
    const kt_tensor *x; /* the tensor read by access wrt */
    kt__gvars gv;
    kt__gaccess acc[KT_MAX_VARS * 2 + 2];
    int nacc, dyi, wrt;
    int eliminated[KT__GV], touched[KT_MAX_VARS * 2 + 2];
    int outvar[KT_MAX_DIMS];
} kt__gstmt;

static kt_status kt__grad_cannot_invert(const kt__gstmt *s, int d,
                                        kt_error *err) {
    return kt__fail(err, KT_ERR_INVALID, s->op->line, "autodiff: cannot "
                    "invert the index of %s dim %d in %s", s->x->name, d,
                    s->op->name);
}

/* A new variable of the statement, or KT_ERR_LIMIT when there is no room. */
static kt_status kt__grad_new_var(kt__gstmt *s, const char *name,
                                  int64_t extent, int *v, kt_error *err) {
    *v = kt__gvar_new(&s->gv, name, extent);
    if (*v >= 0) return KT_OK;
    return kt__fail(err, KT_ERR_LIMIT, s->op->line, "autodiff: too many "
                    "index variables for %s", s->op->name);
}

/* The op's variables and reads as affine forms, and dY read at the
   output's variables. */
static kt_status kt__gstmt_init(kt__gstmt *s, const kt_graph *g, int o,
                                int wrt, int dy, kt_error *err) {
    const kt_op *op = &g->op[o];
    int a, d, v;
    memset(s, 0, sizeof *s);
    s->g = g;
    s->op = op;
    s->wrt = wrt;
    s->x = &g->tensor[op->access[wrt].tensor];
    s->nacc = op->naccess + 1;
    s->dyi = op->naccess;
    if (s->nacc > (int)(sizeof s->acc / sizeof s->acc[0]))
        return kt__fail(err, KT_ERR_LIMIT, op->line, "autodiff: op %s has "
                        "too many reads", op->name);
    for (v = 0; v < op->nvars; v++) {
        snprintf(s->gv.name[v], sizeof s->gv.name[0], "%s", op->var[v].name);
        s->gv.extent[v] = op->var[v].extent;
    }
    s->gv.n = op->nvars;
    for (a = 0; a < op->naccess; a++) {
        kt__gaccess *ac = &s->acc[a];
        ac->tensor = op->access[a].tensor;
        ac->padded = op->access[a].padded;
        ac->rank = g->tensor[ac->tensor].rank;
        for (d = 0; d < ac->rank; d++)
            kt__gindex_from_sym(&ac->idx[d], &op->access[a].dim[d],
                                op->access[a].whole[d]);
    }
    s->acc[s->dyi].tensor = dy;
    s->acc[s->dyi].rank = op->out_rank;
    for (d = 0; d < op->out_rank; d++) {
        s->acc[s->dyi].idx[d].coef[d] = 1;
        s->acc[s->dyi].idx[d].over = 1;
    }
    return KT_OK;
}

/* x[..., i, ...] with i a plain variable not yet used by an earlier
   dimension: i is the output variable itself.  1 when it applies. */
static int kt__invert_plain(kt__gstmt *s, int d, int nv, int only) {
    const kt__gindex *e = &s->acc[s->wrt].idx[d];
    int q;
    if (nv != 1 || e->coef[only] != 1 || e->c != 0 || e->over != 1 ||
        s->eliminated[only])
        return 0;
    for (q = 0; q < d; q++)
        if (s->outvar[q] == only) return 0;
    s->outvar[d] = only;
    return 1;
}

/* x[i/k] (upsampling): i = k*p + r, r a new summed variable of extent k. */
static kt_status kt__invert_upsampling(kt__gstmt *s, int d, int nv, int only,
                                       kt_error *err) {
    kt__gindex *e = &s->acc[s->wrt].idx[d];
    int p, r, a, q;
    kt_status st;
    if (nv != 1 || e->coef[only] != 1 || e->c != 0)
        return kt__grad_cannot_invert(s, d, err);
    if ((st = kt__grad_new_var(s, "p", s->x->shape[d], &p, err)) != KT_OK ||
        (st = kt__grad_new_var(s, "r", e->over, &r, err)) != KT_OK)
        return st;
    for (a = 0; a < s->nacc; a++)
        for (q = 0; q < s->acc[a].rank; q++) {
            kt__gindex *f = &s->acc[a].idx[q];
            int64_t k = f->coef[only];
            if (!k || (a == s->wrt && q == d)) continue;
            f->coef[only] = 0;
            f->coef[p] += k * e->over;
            f->coef[r] += k;
            s->touched[a] = 1;
        }
    memset(e, 0, sizeof *e);
    e->coef[p] = 1;
    e->over = 1;
    s->eliminated[only] = 1;
    s->outvar[d] = p;
    return KT_OK;
}

/* The variable to solve dimension d's index for: a +-1 coefficient,
   preferably a variable whose range a zero-padded read of dY (an output
   variable) or of another tensor enforces; -1 when none is enforced. */
static int kt__invert_pick(const kt__gstmt *s, int d) {
    const kt__gindex *e = &s->acc[s->wrt].idx[d];
    int v, best = -1, score = -1;
    for (v = 0; v < s->gv.n; v++) {
        int sc;
        if (!e->coef[v] || (e->coef[v] != 1 && e->coef[v] != -1) ||
            s->eliminated[v])
            continue;
        sc = v < s->op->out_rank ? 2
             : kt__gvar_uses(s->acc, s->nacc, s->wrt, v) > 0 ? 1 : 0;
        if (sc > score) {
            score = sc;
            best = v;
        }
    }
    return score >= 1 ? best : -1;
}

/* x[h + kh - 1] solved for `best` (h = p - kh + 1, the transposed
   convolution): the new output variable p replaces it in every read. */
static kt_status kt__invert_solve(kt__gstmt *s, int d, int best,
                                  kt_error *err) {
    kt__gindex pivot = s->acc[s->wrt].idx[d];
    int p, a, q;
    kt_status st = kt__grad_new_var(s, "p", s->x->shape[d], &p, err);
    if (st != KT_OK) return st;
    for (a = 0; a < s->nacc; a++)
        for (q = 0; q < s->acc[a].rank; q++)
            if (s->acc[a].idx[q].coef[best]) {
                if (!kt__gindex_subst(&s->acc[a].idx[q], best, &pivot, p))
                    return kt__grad_cannot_invert(s, d, err);
                if (a != s->wrt) s->touched[a] = 1;
            }
    s->eliminated[best] = 1;
    s->outvar[d] = p;
    return KT_OK;
}

/* x[h*k + w] with w of extent k read nowhere else: the windows do not
   overlap (pooling), so h = p / k and w is determined. */
static kt_status kt__invert_window(kt__gstmt *s, int d, int nv,
                                   kt_error *err) {
    kt__gindex *e = &s->acc[s->wrt].idx[d];
    int h = -1, w = -1, p, v, a, q;
    kt_status st;
    for (v = 0; v < s->gv.n; v++) {
        if (!e->coef[v]) continue;
        if (e->coef[v] == 1 && s->gv.extent[v] > 1 && w < 0 &&
            kt__gvar_uses(s->acc, s->nacc, s->wrt, v) == 0)
            w = v;
        else
            h = v;
    }
    if (nv != 2 || h < 0 || w < 0 || e->c != 0 ||
        e->coef[h] != s->gv.extent[w])
        return kt__grad_cannot_invert(s, d, err);
    if ((st = kt__grad_new_var(s, "p", s->x->shape[d], &p, err)) != KT_OK)
        return st;
    for (a = 0; a < s->nacc; a++) {
        if (a == s->wrt) continue;
        for (q = 0; q < s->acc[a].rank; q++) {
            kt__gindex *f = &s->acc[a].idx[q];
            int u, plain = f->coef[h] == 1 && f->c == 0 && f->over == 1;
            if (!f->coef[h]) continue;
            for (u = 0; u < s->gv.n; u++)
                if (u != h && f->coef[u]) plain = 0;
            if (!plain) return kt__grad_cannot_invert(s, d, err);
            f->coef[h] = 0;
            f->coef[p] = 1;
            f->over = s->gv.extent[w];
            s->touched[a] = 1;
        }
    }
    memset(e, 0, sizeof *e);
    e->coef[p] = 1;
    e->over = 1;
    s->eliminated[h] = s->eliminated[w] = 1;
    s->outvar[d] = p;
    return KT_OK;
}

/* Makes dimension d of x's index an output variable of the backward
   statement, by the first of the forms above that applies. */
static kt_status kt__invert_dim(kt__gstmt *s, int d, kt_error *err) {
    const kt__gindex *e = &s->acc[s->wrt].idx[d];
    int only = -1, nv = 0, v, best;
    for (v = 0; v < s->gv.n; v++)
        if (e->coef[v]) {
            nv++;
            only = v;
        }
    if (e->whole)
        return kt__fail(err, KT_ERR_INVALID, s->op->line, "autodiff: %s "
                        "reads all of %s dim %d; only opaque forms may",
                        s->op->name, s->x->name, d);
    if (kt__invert_plain(s, d, nv, only)) return KT_OK;
    if (e->over > 1) return kt__invert_upsampling(s, d, nv, only, err);
    if ((best = kt__invert_pick(s, d)) >= 0)
        return kt__invert_solve(s, d, best, err);
    return kt__invert_window(s, d, nv, err);
}

/* Writes into[outvars] = sum(the rest) dY * d body / d access. */
static kt_status kt__gstmt_print(const kt__gstmt *s, const char *into,
                                 kt__str *out, kt_error *err) {
    const kt_op *op = s->op;
    const kt_graph *g = s->g;
    kt__dctx ctx;
    int d, v, first = 1;
    kt__str_add(out, "%s[", into);
    for (d = 0; d < s->x->rank; d++)
        kt__str_add(out, "%s%s:%lld", d ? "," : "", s->gv.name[s->outvar[d]],
                    (long long)s->x->shape[d]);
    kt__str_add(out, "] = ");
    for (v = 0; v < s->gv.n; v++) {
        int isout = 0;
        for (d = 0; d < s->x->rank; d++) isout |= s->outvar[d] == v;
        if (isout || s->eliminated[v]) continue;
        kt__str_add(out, "%s%s:%lld", first ? "sum(" : ",", s->gv.name[v],
                    (long long)s->gv.extent[v]);
        first = 0;
    }
    if (!first) kt__str_add(out, ") ");
    ctx.g = g;
    ctx.op = op;
    ctx.acc = s->acc;
    ctx.gv = &s->gv;
    kt__gaccess_print(out, g, &s->acc[s->dyi], &s->gv);
    if (op->reducer == KT_REDUCE_MAX || op->reducer == KT_REDUCE_MIN) {
        /* the elements equal to the result receive the gradient */
        kt__gaccess ya = s->acc[s->dyi];
        ya.tensor = op->output;
        kt__str_add(out, " * (1 - step(");
        kt__expr_print(out, &ctx, op->nexpr - 1);
        kt__str_add(out, " - ");
        kt__gaccess_print(out, g, &ya, &s->gv);
        kt__str_add(out, ") - step(");
        kt__gaccess_print(out, g, &ya, &s->gv);
        kt__str_add(out, " - ");
        kt__expr_print(out, &ctx, op->nexpr - 1);
        kt__str_add(out, "))");
    } else if (op->reducer == KT_REDUCE_PROD) {
        return kt__fail(err, KT_ERR_INVALID, op->line, "autodiff: prod(...) "
                        "in %s is not differentiated", op->name);
    }
    {
        kt__str dv;
        int kind;
        memset(&dv, 0, sizeof dv);
        kind = kt__deriv(&dv, &ctx, op->nexpr - 1, s->wrt);
        if (kind == KT__D_ZERO) kt__str_add(out, " * 0");
        kt__times(out, kind, &dv);
        if (dv.oom) out->oom = 1;
        KT_FREE(dv.s);
    }
    return out->oom ? kt__fail(err, KT_ERR_NOMEM, 0, "out of memory") : KT_OK;
}

/* One backward statement: the gradient of op's output (dY) pushed back to
   access `wrt`, written into tensor `into`.  For y[o] = red(r) body it is
     into[p...] = sum(everything else) dY[o] * d body / d access
   where the access's index variables become the output variables: a
   plain index keeps its variable; x[h+kh] makes h = p - kh (h is read
   from dY with zero padding, the transposed convolution); x[h*2+dh] with
   dh of extent 2 makes h = p/2 (non-overlapping pooling windows);
   x[i/2] makes i = 2p + r (upsampling).  max/min reductions route the
   gradient to the elements equal to the result.  Every read an inversion
   rewrote becomes zero-padded: its index may now leave the tensor. */
static kt_status kt__grad_statement(const kt_graph *g, int o, int wrt,
                                    const char *into, int dy, kt__str *out,
                                    kt_error *err) {
    kt__gstmt s;
    int d, a;
    kt_status st = kt__gstmt_init(&s, g, o, wrt, dy, err);
    for (d = 0; st == KT_OK && d < s.x->rank; d++)
        st = kt__invert_dim(&s, d, err);
    if (st != KT_OK) return st;
    for (a = 0; a < s.nacc; a++)
        if (s.touched[a]) s.acc[a].padded = 1;
    return kt__gstmt_print(&s, into, out, err);
}

/* opaque(name, a[..], ...): the gradient is opaque(name_grad, a, the other
   arguments, dY), with a's ':' dimensions (and dY's) kept whole. */
static kt_status kt__grad_opaque(const kt_graph *g, int o, int wrt,
                                 const char *into, int dy, kt__str *out,
                                 kt_error *err) {
    const kt_op *op = &g->op[o];
    const kt_access *ac = &op->access[wrt];
    const kt_tensor *x = &g->tensor[ac->tensor];
    kt__gvars gv;
    int d, a, v;
    memset(&gv, 0, sizeof gv);
    for (v = 0; v < op->nvars; v++) {
        snprintf(gv.name[v], sizeof gv.name[0], "%s", op->var[v].name);
        gv.extent[v] = op->var[v].extent;
    }
    gv.n = op->nvars;
    kt__str_add(out, "%s[", into);
    for (d = 0; d < x->rank; d++) {
        kt__gindex gi;
        kt__gindex_from_sym(&gi, &ac->dim[d], ac->whole[d]);
        if (d) kt__str_add(out, ",");
        if (ac->whole[d]) {
            int nv = kt__gvar_new(&gv, "c", x->shape[d]);
            if (nv < 0) return kt__fail(err, KT_ERR_LIMIT, op->line, "autodiff: "
                                        "too many variables");
            kt__str_add(out, "%s:%lld", gv.name[nv], (long long)x->shape[d]);
        } else {
            int nvars = 0, only = -1;
            for (v = 0; v < gv.n; v++)
                if (gi.coef[v]) { nvars++; only = v; }
            if (nvars != 1 || gi.coef[only] != 1 || gi.c || gi.over != 1)
                return kt__fail(err, KT_ERR_INVALID, op->line, "autodiff: "
                                "opaque %s reads %s dim %d with a non-plain "
                                "index", op->opaque, x->name, d);
            kt__str_add(out, "%s", gv.name[only]);
        }
    }
    kt__str_add(out, "] = opaque(%s_grad", op->opaque);
    for (a = -1; a < op->naccess; a++) {
        const kt_access *ar = &op->access[a < 0 ? wrt : a];
        kt__gaccess ga;
        if (a == wrt) continue;
        ga.tensor = ar->tensor;
        ga.padded = 0;
        ga.rank = g->tensor[ar->tensor].rank;
        for (d = 0; d < ga.rank; d++)
            kt__gindex_from_sym(&ga.idx[d], &ar->dim[d], ar->whole[d]);
        kt__str_add(out, ", ");
        kt__gaccess_print(out, g, &ga, &gv);
    }
    kt__str_add(out, ", %s[", g->tensor[dy].name);
    for (d = 0; d < op->out_rank; d++)
        kt__str_add(out, "%s%s", d ? "," : "",
                    op->var[d].splittable ? op->var[d].name : ":");
    kt__str_add(out, "])");
    return out->oom ? kt__fail(err, KT_ERR_NOMEM, 0, "out of memory") : KT_OK;
}

/* Adds one generated statement and files it under forward op `group`. */
static kt_status kt__emit(kt_graph *g, kt__str *b, int group, kt_error *err) {
    kt_status s;
    if (b->oom) return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    s = kt__add_op(g, b->s, 0, NULL, 1, err);
    if (s != KT_OK && err) { /* named by the user's statement it derives */
        char msg[sizeof err->message];
        const kt_op *fwd = group >= 0 && group < g->nop ? &g->op[group] : NULL;
        memcpy(msg, err->message, sizeof msg);
        if (fwd && fwd->line > 0) {
            err->line = fwd->line;
            snprintf(err->message, sizeof err->message,
                     "line %d: the backward pass of %.40s: autodiff "
                     "generated '%.200s': %.200s", fwd->line, fwd->name,
                     b->s, msg);
        } else {
            snprintf(err->message, sizeof err->message,
                     "autodiff generated '%.200s': %.250s", b->s, msg);
        }
    }
    if (s == KT_OK) g->op[g->nop - 1].group = group;
    b->len = 0;
    if (b->s) b->s[0] = '\0';
    return s;
}

static void kt__plain_index(kt__str *b, const char *tensor, int rank) {
    int d;
    kt__str_add(b, "%s[", tensor);
    for (d = 0; d < rank; d++) kt__str_add(b, "%si%d", d ? "," : "", d);
    kt__str_add(b, "]");
}

/* A name no tensor has yet: prefix + name, with more underscores as
   needed. */
static void kt__fresh_name(const kt_graph *g, const char *prefix,
                           const char *name, const char *suffix, char *out) {
    char p[16];
    int n;
    snprintf(p, sizeof p, "%s", prefix);
    for (n = 0; n < 8; n++) {
        snprintf(out, KT_NAME_MAX, "%s%.40s%s", p, name, suffix);
        if (kt_graph_find_tensor(g, out) < 0) return;
        strncat(p, "_", sizeof p - strlen(p) - 1);
    }
}

/* The gradient names taken so far in a run of autodiff: a set of indices
   into name[], open addressing (cap a power of two, at most half full).
   A scan of every earlier name made autodiff quadratic in the tensors. */
typedef struct kt__name_set {
    char (*name)[KT_NAME_MAX];
    int *slot; /* -1: empty */
    size_t cap;
} kt__name_set;

static size_t kt__name_set_slot(const kt__name_set *t, const char *s) {
    return kt__name_slot(t->slot, t->cap, t->name[0], KT_NAME_MAX, s);
}

/* A gradient name no tensor and no earlier gradient of this run has:
   d<name>, else d<name>_1, d<name>_2, ...  ("__" is kept for partial
   gradients, so no candidate adds one).  Written to taken->name[k] and
   added to the set. */
static int kt__gradient_name(const kt_graph *g, const char *name,
                             kt__name_set *taken, int k) {
    char *out = taken->name[k];
    size_t slot;
    int n;
    for (n = 0; n < 1000; n++) {
        if (n == 0) snprintf(out, KT_NAME_MAX, "d%.40s", name);
        else snprintf(out, KT_NAME_MAX, "d%.40s_%d", name, n);
        if (kt_graph_find_tensor(g, out) >= 0) continue;
        if (taken->slot[slot = kt__name_set_slot(taken, out)] < 0) {
            taken->slot[slot] = k;
            return 1;
        }
    }
    return 0;
}

/* dX = dX__1 + dX__2 + ... (the chain rule's sum over X's readers; Tofu
   5.1 groups it with X).  A statement reads at most KT_MAX_VARS tensors,
   so long sums (a weight shared by many unrolled steps) go in stages
   through dX__s1, dX__s2, ... */
static kt_status kt__emit_grad_sum(kt_graph *g, int x, const char *gname,
                                   int parts, int group, kt__str *b,
                                   kt_error *err) {
    int rank = g->tensor[x].rank, first = 1, stage = 0, k;
    char prev[KT_NAME_MAX + 16];
    kt_status s;
    prev[0] = '\0';
    while (first <= parts) {
        int room = KT_MAX_VARS - (prev[0] ? 1 : 0), last;
        char target[KT_NAME_MAX + 16];
        last = first + room - 1;
        if (last >= parts) {
            last = parts;
            snprintf(target, sizeof target, "%s", gname);
        } else {
            snprintf(target, sizeof target, "%s__s%d", gname, ++stage);
        }
        kt__plain_index(b, target, rank);
        kt__str_add(b, " = ");
        if (prev[0]) kt__plain_index(b, prev, rank);
        for (k = first; k <= last; k++) {
            char part[KT_NAME_MAX + 16];
            snprintf(part, sizeof part, "%s__%d", gname, k);
            if (k > first || prev[0]) kt__str_add(b, " + ");
            kt__plain_index(b, part, rank);
        }
        if ((s = kt__emit(g, b, group, err)) != KT_OK) return s;
        snprintf(prev, sizeof prev, "%s", target);
        first = last + 1;
    }
    return KT_OK;
}

static kt_status kt__emit_update(kt_graph *g, int w, const char *gname,
                                 const kt_autodiff_options *o, int group,
                                 kt__str *b, kt_error *err) {
    const kt_tensor *t = &g->tensor[w];
    char name[KT_NAME_MAX], m[KT_NAME_MAX], v[KT_NAME_MAX];
    int rank = t->rank;
    kt_status s;
    snprintf(name, sizeof name, "%s", t->name);
    if (!o->adam) {
        kt__plain_index(b, name, rank);
        kt__str_add(b, " = ");
        kt__plain_index(b, name, rank);
        kt__str_add(b, " - %.17g * ", o->learning_rate);
        kt__plain_index(b, gname, rank);
        return kt__emit(g, b, group, err);
    }
    /* Adam: the weight is updated from the old moments, then the moments
       (one in-place update per tensor, after its readers). */
    kt__fresh_name(g, "m_", name, "", m);
    kt__fresh_name(g, "v_", name, "", v);
    if ((s = kt__add_tensor(g, m, rank, t->shape, t->elem_bytes, KT_OPTSTATE,
                            0, err)) != KT_OK)
        return s;
    g->tensor[g->ntensor - 1].of = w;
    if ((s = kt__add_tensor(g, v, rank, g->tensor[w].shape,
                            g->tensor[w].elem_bytes, KT_OPTSTATE, 0, err)) !=
        KT_OK)
        return s;
    g->tensor[g->ntensor - 1].of = w;
    kt__plain_index(b, name, rank);
    kt__str_add(b, " = ");
    kt__plain_index(b, name, rank);
    kt__str_add(b, " - %.17g * (0.9 * ", o->learning_rate);
    kt__plain_index(b, m, rank);
    kt__str_add(b, " + 0.1 * ");
    kt__plain_index(b, gname, rank);
    kt__str_add(b, ") / (sqrt(0.999 * ");
    kt__plain_index(b, v, rank);
    kt__str_add(b, " + 0.001 * ");
    kt__plain_index(b, gname, rank);
    kt__str_add(b, " * ");
    kt__plain_index(b, gname, rank);
    kt__str_add(b, ") + 0.00000001)");
    if ((s = kt__emit(g, b, group, err)) != KT_OK) return s;
    kt__plain_index(b, m, rank);
    kt__str_add(b, " = 0.9 * ");
    kt__plain_index(b, m, rank);
    kt__str_add(b, " + 0.1 * ");
    kt__plain_index(b, gname, rank);
    if ((s = kt__emit(g, b, group, err)) != KT_OK) return s;
    kt__plain_index(b, v, rank);
    kt__str_add(b, " = 0.999 * ");
    kt__plain_index(b, v, rank);
    kt__str_add(b, " + 0.001 * ");
    kt__plain_index(b, gname, rank);
    kt__str_add(b, " * ");
    kt__plain_index(b, gname, rank);
    return kt__emit(g, b, group, err);
}

/* What autodiff needs of the forward graph: a loss computed by a
   statement, and no in-place update yet. */
static kt_status kt__autodiff_check(const kt_graph *g, kt_error *err) {
    int i, loss = g->loss;
    if (loss < 0)
        return kt__fail(err, KT_ERR_GRAPH, 0, "autodiff: no loss tensor (add "
                        "a line `loss NAME`)");
    /* a loss is computed: data and state get no gradient, so the loss's
       own would have no name (it was refused as "'' is not a name"), and
       a weight as the loss made its gradient an input and its update
       vanish (accepted silently) */
    if (g->tensor[loss].producer < 0)
        return kt__fail(err, KT_ERR_GRAPH, 0, "autodiff: the loss %s is %s, "
                        "not computed by a statement: name a tensor a "
                        "statement computes", g->tensor[loss].name,
                        g->tensor[loss].kind == KT_INPUT    ? "an input"
                        : g->tensor[loss].kind == KT_WEIGHT ? "a weight"
                                                            : "optimizer "
                                                              "state");
    for (i = 0; i < g->nop; i++)
        if (g->op[i].in_place)
            return kt__fail(err, KT_ERR_GRAPH, g->op[i].line, "autodiff: the "
                            "forward graph already updates %s in place",
                            g->tensor[g->op[i].output].name);
    return KT_OK;
}

/* Gradient tensors (and their partial sums, NAME__k) belong to their
   forward tensor (Tofu 5.1): every activation created since the first
   nt tensors whose name, up to "__", is the gradient of a needed tensor
   becomes a KT_GRADIENT of it. */
static kt_status kt__mark_gradients(kt_graph *g, int nt, const int *need,
                                    char (*gname)[KT_NAME_MAX],
                                    kt_error *err) {
    int *owner = (int *)kt__calloc((size_t)g->ntensor + 1, sizeof(int));
    int i;
    if (!owner) return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    for (i = 0; i < g->ntensor; i++) owner[i] = -1;
    for (i = 0; i < nt; i++) {
        int t = need[i] ? kt_graph_find_tensor(g, gname[i]) : -1;
        if (t >= 0) owner[t] = i;
    }
    for (i = nt; i < g->ntensor; i++) {
        char base[KT_NAME_MAX];
        char *cut;
        int t;
        if (g->tensor[i].kind != KT_ACTIVATION) continue;
        snprintf(base, sizeof base, "%s", g->tensor[i].name);
        cut = strstr(base, "__");
        if (cut) *cut = '\0';
        t = kt_graph_find_tensor(g, base);
        if (t < 0 || owner[t] < 0) continue;
        g->tensor[i].kind = KT_GRADIENT;
        g->tensor[i].of = owner[t];
    }
    KT_FREE(owner);
    return KT_OK;
}

kt_status kt_graph_autodiff(kt_graph *g, const kt_autodiff_options *opt,
                            kt_error *err) {
    kt_autodiff_options o;
    int nfwd, nt, loss, i, a;
    int *need = NULL, *relevant = NULL, *parts = NULL, *done = NULL,
        *first_reader = NULL;
    char (*gname)[KT_NAME_MAX] = NULL;
    kt__name_set taken;
    kt__str b;
    kt__graph_mark mark;
    kt_status s = KT_OK;
    memset(&b, 0, sizeof b);
    memset(&taken, 0, sizeof taken);
    memset(&o, 0, sizeof o);
    if (opt) o = *opt;
    if (o.learning_rate <= 0) o.learning_rate = 0.01;
    if ((s = kt__graph_check_final(g, err)) != KT_OK ||
        (s = kt__autodiff_check(g, err)) != KT_OK ||
        (s = kt__graph_mark_set(g, &mark, err)) != KT_OK) /* (as parse) */
        return s;
    nfwd = g->nop;
    nt = g->ntensor;
    loss = g->loss;
    need = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    parts = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    done = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    first_reader = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    relevant = (int *)kt__calloc((size_t)nfwd + 1, sizeof(int));
    gname = (char(*)[KT_NAME_MAX])kt__calloc((size_t)nt + 1, KT_NAME_MAX);
    for (taken.cap = 16; taken.cap < 2 * ((size_t)nt + 1); taken.cap *= 2) {}
    taken.name = gname;
    taken.slot = (int *)kt__calloc(taken.cap, sizeof(int));
    if (!need || !parts || !done || !first_reader || !relevant || !gname ||
        !taken.slot) {
        s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
        goto done;
    }
    memset(taken.slot, 0xff, taken.cap * sizeof(int)); /* all -1: empty */
    /* What the loss depends on, walking back from it. */
    need[loss] = 1;
    for (i = nfwd - 1; i >= 0; i--) {
        if (!need[g->op[i].output]) continue;
        relevant[i] = 1;
        for (a = 0; a < g->op[i].ninputs; a++) need[g->op[i].input[a]] = 1;
    }
    for (i = 0; i < nt; i++) {
        first_reader[i] = -1;
        if (g->tensor[i].kind == KT_INPUT || g->tensor[i].kind == KT_OPTSTATE)
            need[i] = 0; /* data and state get no gradient */
        if (need[i] && !kt__gradient_name(g, g->tensor[i].name, &taken, i)) {
            s = kt__fail(err, KT_ERR_LIMIT, 0, "autodiff: no free name for "
                         "the gradient of %s", g->tensor[i].name);
            goto done;
        }
    }
    for (i = 0; i < nfwd; i++) {
        if (!relevant[i]) continue;
        for (a = 0; a < g->op[i].naccess; a++) {
            int x = g->op[i].access[a].tensor;
            if (first_reader[x] < 0) first_reader[x] = i;
            if (need[x]) parts[x]++;
        }
    }
    /* The loss gradient is given (an input of the training step).  The
       shape is copied first: adding a tensor may move g->tensor. */
    {
        int64_t shape[KT_MAX_DIMS];
        memcpy(shape, g->tensor[loss].shape, sizeof shape);
        s = kt__add_tensor(g, gname[loss], g->tensor[loss].rank, shape,
                           g->tensor[loss].elem_bytes, KT_INPUT, 0, err);
    }
    if (s != KT_OK) goto done;
    g->tensor[g->ntensor - 1].of = loss;
    /* Reverse topological order: every reader of Y is differentiated
       before Y's producer, so dY is complete when it is needed. */
    for (i = nfwd - 1; i >= 0 && s == KT_OK; i--) {
        int y = g->op[i].output, dy;
        if (!relevant[i]) continue;
        if (parts[y] > 1 &&
            (s = kt__emit_grad_sum(g, y, gname[y], parts[y], i, &b, err)) !=
                KT_OK)
            break;
        dy = kt_graph_find_tensor(g, gname[y]);
        if (dy < 0) continue; /* nothing downstream reached the loss */
        for (a = 0; a < g->op[i].naccess && s == KT_OK; a++) {
            int x = g->op[i].access[a].tensor;
            char into[KT_NAME_MAX + 16];
            if (!need[x]) continue;
            if (parts[x] > 1)
                snprintf(into, sizeof into, "%s__%d", gname[x], ++done[x]);
            else
                snprintf(into, sizeof into, "%s", gname[x]);
            if (g->op[i].opaque[0])
                s = kt__grad_opaque(g, i, a, into, dy, &b, err);
            else
                s = kt__grad_statement(g, i, a, into, dy, &b, err);
            if (s == KT_OK) s = kt__emit(g, &b, i, err);
        }
    }
    /* Weights: sum their gradients, then update them in place. */
    for (i = 0; i < nt && s == KT_OK; i++) {
        if (!need[i] || g->tensor[i].kind != KT_WEIGHT) continue;
        if (parts[i] > 1)
            s = kt__emit_grad_sum(g, i, gname[i], parts[i], first_reader[i],
                                  &b, err);
        if (s == KT_OK && parts[i] > 0)
            s = kt__emit_update(g, i, gname[i], &o, first_reader[i], &b, err);
    }
    if (s == KT_OK) s = kt__mark_gradients(g, nt, need, gname, err);
    if (s == KT_OK) s = kt_graph_finalize(g, err);
done:
    if (s != KT_OK) kt__graph_rollback(g, &mark);
    KT_FREE(mark.tensor);
    KT_FREE(need);
    KT_FREE(parts);
    KT_FREE(done);
    KT_FREE(first_reader);
    KT_FREE(relevant);
    KT_FREE(gname);
    KT_FREE(taken.slot);
    KT_FREE(b.s);
    return s;
}

/* ---------------------------------------------------------------- model zoo */

/* Zoo models are written as model files (kt_zoo_text) and parsed like any
   other, so `ktile zoo --print SPEC` shows exactly what is planned. */

typedef struct kt__zoo_param {
    char key[16];
    int64_t value;
} kt__zoo_param;

typedef struct kt__zoo_args {
    int n;
    kt__zoo_param p[12];
} kt__zoo_args;

/* What a model builder writes: the model file text and, for the
   convolution models, the first layer whose output has no pixels left (the
   image was too small for the conv/pool stack; kt_zoo_text reports it). */
typedef struct kt__zoo_net {
    kt__str b;
    char empty[32];
} kt__zoo_net;

static int64_t kt__zoo_get(const kt__zoo_args *a, const char *key) {
    int i;
    for (i = 0; i < a->n; i++)
        if (strcmp(a->p[i].key, key) == 0) return a->p[i].value;
    return -1;
}

/* Records that layer `name` came out with `size` < 1 pixels (the first such
   layer is the one an error names). */
static void kt__zoo_size(kt__zoo_net *net, const char *name,
                         int64_t size) {
    if (size < 1 && !net->empty[0])
        snprintf(net->empty, sizeof net->empty, "%s", name);
}

/* A convolution (with stride and zero padding) followed by relu. */
static void kt__zoo_conv(kt__zoo_net *net, const char *out, const char *in,
                         const char *w, int64_t cin, int64_t cout,
                         int64_t size, int64_t k, int64_t stride, int64_t pad,
                         int relu, int64_t *out_size) {
    kt__str *b = &net->b;
    /* floor division: an input smaller than the window gives no output */
    int64_t span = size + 2 * pad - k,
            o = span < 0 ? 0 : span / stride + 1;
    kt__zoo_size(net, out, o);
    kt__str_add(b, "weight %s[%lld,%lld,%lld,%lld]\n", w, (long long)cout,
                (long long)cin, (long long)k, (long long)k);
    kt__str_add(b, "%s%s[n,co,h:%lld,w:%lld] = sum(ci,kh,kw) ", relu ? "c_" : "",
                out, (long long)o, (long long)o);
    if (pad)
        kt__str_add(b, "pad(%s[n,ci,h*%lld+kh-%lld,w*%lld+kw-%lld])", in,
                    (long long)stride, (long long)pad, (long long)stride,
                    (long long)pad);
    else
        kt__str_add(b, "%s[n,ci,h*%lld+kh,w*%lld+kw]", in, (long long)stride,
                    (long long)stride);
    kt__str_add(b, " * %s[co,ci,kh,kw]\n", w);
    if (relu)
        kt__str_add(b, "%s[n,c,h,w] = relu(c_%s[n,c,h,w])\n", out, out);
    *out_size = o;
}

/* 2x2 max pooling with stride 2 (non-overlapping windows). */
static void kt__zoo_pool(kt__zoo_net *net, const char *out, const char *in,
                         int64_t *size) {
    kt__str_add(&net->b, "%s[n,c,h,w] = max(dh:2,dw:2) %s[n,c,h*2+dh,w*2+dw]\n",
                out, in);
    *size /= 2;
    kt__zoo_size(net, out, *size);
}

static void kt__zoo_fc(kt__str *b, const char *out, const char *in,
                       const char *w, int64_t nin, int64_t nout, int relu) {
    kt__str_add(b, "weight %s[%lld,%lld]\n", w, (long long)nin, (long long)nout);
    kt__str_add(b, "%s%s[n,k] = sum(j) %s[n,j] * %s[j,k]\n", relu ? "f_" : "",
                out, in, w);
    if (relu) kt__str_add(b, "%s[n,k] = relu(f_%s[n,k])\n", out, out);
}

/* A classifier head: softmax cross-entropy against one-hot labels. */
static void kt__zoo_loss(kt__str *b, const char *logits, int64_t batch,
                         int64_t classes) {
    kt__str_add(b, "input labels[%lld,%lld]\n", (long long)batch,
                (long long)classes);
    kt__str_add(b, "xent[n] = opaque(softmax_xent, %s[n,:], labels[n,:])\n",
                logits);
    kt__str_add(b, "loss xent\n");
}

static void kt__zoo_mlp(kt__zoo_net *net, const kt__zoo_args *a) {
    kt__str *b = &net->b;
    int64_t L = kt__zoo_get(a, "layers"), H = kt__zoo_get(a, "hidden"),
            B = kt__zoo_get(a, "batch");
    int64_t l;
    kt__str_add(b, "# SOYBEAN 2.2 / Figure 8: %lld fully connected layer%s of "
                "%lld, batch %lld\ninput x0[%lld,%lld]\n", (long long)L,
                L == 1 ? "" : "s", (long long)H, (long long)B, (long long)B,
                (long long)H);
    for (l = 1; l <= L; l++) {
        kt__str_add(b, "weight W%lld[%lld,%lld]\n", (long long)l, (long long)H,
                    (long long)H);
        kt__str_add(b, "%sx%lld[i,k] = sum(j) x%lld[i,j] * W%lld[j,k]\n",
                    l < L ? "h" : "", (long long)l, (long long)(l - 1),
                    (long long)l);
        if (l < L)
            kt__str_add(b, "x%lld[i,k] = relu(hx%lld[i,k])\n", (long long)l,
                        (long long)l);
    }
    kt__str_add(b, "loss x%lld\n", (long long)L);
}

/* AlexNet.  Every channel count is a multiple of `width` (96, 256, 384,
   384, 256 at the default 32); `fc` is the width of the two hidden fully
   connected layers, `classes` of the last.  The default image is 227
   pixels, the size at which the 11x11 stride-4 convolution tiles the image
   exactly (the paper's "224" does not); the smallest is 39 (one pixel left
   after the third pooling). */
static void kt__zoo_alexnet(kt__zoo_net *net, const kt__zoo_args *a) {
    kt__str *b = &net->b;
    int64_t B = kt__zoo_get(a, "batch"), s = kt__zoo_get(a, "image"),
            w = kt__zoo_get(a, "width"), F = kt__zoo_get(a, "fc"),
            K = kt__zoo_get(a, "classes");
    kt__str_add(b, "# AlexNet (Krizhevsky et al.), 2x2 pooling, no biases\n"
                "input x[%lld,3,%lld,%lld]\n", (long long)B, (long long)s,
                (long long)s);
    kt__zoo_conv(net, "a1", "x", "f1", 3, 3 * w, s, 11, 4, 0, 1, &s);
    kt__zoo_pool(net, "p1", "a1", &s);
    kt__zoo_conv(net, "a2", "p1", "f2", 3 * w, 8 * w, s, 5, 1, 2, 1, &s);
    kt__zoo_pool(net, "p2", "a2", &s);
    kt__zoo_conv(net, "a3", "p2", "f3", 8 * w, 12 * w, s, 3, 1, 1, 1, &s);
    kt__zoo_conv(net, "a4", "a3", "f4", 12 * w, 12 * w, s, 3, 1, 1, 1, &s);
    kt__zoo_conv(net, "a5", "a4", "f5", 12 * w, 8 * w, s, 3, 1, 1, 1, &s);
    kt__zoo_pool(net, "p5", "a5", &s);
    kt__str_add(b, "weight W6[%lld,%lld,%lld,%lld]\n", (long long)(8 * w),
                (long long)s, (long long)s, (long long)F);
    kt__str_add(b, "f_a6[n,k] = sum(c,y,z) p5[n,c,y,z] * W6[c,y,z,k]\n"
                "a6[n,k] = relu(f_a6[n,k])\n");
    kt__zoo_fc(b, "a7", "a6", "W7", F, F, 1);
    kt__zoo_fc(b, "a8", "a7", "W8", F, K, 0);
    kt__zoo_loss(b, "a8", B, K);
}

/* VGG-16: 13 3x3 convolutions in five stages of width x 1, 2, 4, 8, 8
   channels (64 ... 512 at the default 64), each stage closed by 2x2
   pooling; the smallest image is 32. */
static void kt__zoo_vgg16(kt__zoo_net *net, const kt__zoo_args *a) {
    static const int cfg[] = {1, 1, 0, 2, 2, 0, 4, 4, 4, 0,
                              8, 8, 8, 0, 8, 8, 8, 0};
    kt__str *b = &net->b;
    int64_t B = kt__zoo_get(a, "batch"), s = kt__zoo_get(a, "image"),
            wd = kt__zoo_get(a, "width"), F = kt__zoo_get(a, "fc"),
            K = kt__zoo_get(a, "classes"), cin = 3;
    char in[32] = "x", out[32], w[32];
    int i, nconv = 0;
    kt__str_add(b, "# VGG-16 (Simonyan and Zisserman), no biases\n"
                "input x[%lld,3,%lld,%lld]\n", (long long)B, (long long)s,
                (long long)s);
    for (i = 0; i < (int)(sizeof cfg / sizeof cfg[0]); i++) {
        if (cfg[i] == 0) {
            snprintf(out, sizeof out, "p%d", nconv);
            kt__zoo_pool(net, out, in, &s);
        } else {
            nconv++;
            snprintf(out, sizeof out, "a%d", nconv);
            snprintf(w, sizeof w, "f%d", nconv);
            kt__zoo_conv(net, out, in, w, cin, cfg[i] * wd, s, 3, 1, 1, 1, &s);
            cin = cfg[i] * wd;
        }
        snprintf(in, sizeof in, "%s", out);
    }
    kt__str_add(b, "weight W14[%lld,%lld,%lld,%lld]\n", (long long)cin,
                (long long)s, (long long)s, (long long)F);
    kt__str_add(b, "f_a14[n,k] = sum(c,y,z) %s[n,c,y,z] * W14[c,y,z,k]\n"
                "a14[n,k] = relu(f_a14[n,k])\n", in);
    kt__zoo_fc(b, "a15", "a14", "W15", F, F, 1);
    kt__zoo_fc(b, "a16", "a15", "W16", F, K, 0);
    kt__zoo_loss(b, "a16", B, K);
}

/* Bottleneck blocks per stage of the ResNet depths (3 layers a block, plus
   the stem and the classifier); NULL for any other depth. */
static const int *kt__wresnet_blocks(int64_t depth) {
    static const struct {
        int depth, blocks[4];
    } table[] = {{26, {2, 2, 2, 2}},
                 {50, {3, 4, 6, 3}},
                 {101, {3, 4, 23, 3}},
                 {152, {3, 8, 36, 3}}};
    size_t i;
    for (i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].depth == depth) return table[i].blocks;
    return NULL;
}

/* Wide ResNet as in Tofu's evaluation: ResNet bottleneck blocks with every
   channel count multiplied by the widening factor.  Stage i has blocks of
   (width << i) * widen channels inside and 4 times that out (width 64:
   ResNet's).  Depth 26 (two blocks per stage) is the smallest with both
   kinds of shortcut: a projection (1x1 convolution, strided from stage 2
   on) in a stage's first block and the identity in its others. */
static void kt__zoo_wresnet(kt__zoo_net *net, const kt__zoo_args *a) {
    kt__str *b = &net->b;
    int64_t depth = kt__zoo_get(a, "depth"), wf = kt__zoo_get(a, "widen"),
            B = kt__zoo_get(a, "batch"), s = kt__zoo_get(a, "image"),
            base = kt__zoo_get(a, "width"), K = kt__zoo_get(a, "classes");
    const int *blocks = kt__wresnet_blocks(depth);
    int64_t cin, stage, blk, cmid;
    char in[32];
    int id = 0;
    kt__str_add(b, "# Wide ResNet-%lld, widening factor %lld (bottleneck "
                "blocks, every width x%lld), no batch norm\n"
                "input x[%lld,3,%lld,%lld]\n", (long long)depth, (long long)wf,
                (long long)wf, (long long)B, (long long)s, (long long)s);
    kt__zoo_conv(net, "stem", "x", "fstem", 3, base * wf, s, 7, 2, 3, 1, &s);
    kt__zoo_pool(net, "pool", "stem", &s);
    snprintf(in, sizeof in, "pool");
    cin = base * wf;
    for (stage = 0; stage < 4; stage++) {
        cmid = (base << stage) * wf;
        for (blk = 0; blk < blocks[stage]; blk++) {
            int64_t stride = (stage > 0 && blk == 0) ? 2 : 1, s1, s2, s3;
            char n1[32], n2[32], n3[32], f1[32], f2[32], f3[32], sc[32],
                fs[32], out[32];
            id++;
            snprintf(n1, sizeof n1, "b%da", id);
            snprintf(n2, sizeof n2, "b%db", id);
            snprintf(n3, sizeof n3, "b%dc", id);
            snprintf(f1, sizeof f1, "w%da", id);
            snprintf(f2, sizeof f2, "w%db", id);
            snprintf(f3, sizeof f3, "w%dc", id);
            snprintf(out, sizeof out, "r%d", id);
            kt__zoo_conv(net, n1, in, f1, cin, cmid, s, 1, 1, 0, 1, &s1);
            kt__zoo_conv(net, n2, n1, f2, cmid, cmid, s1, 3, stride, 1, 1, &s2);
            kt__zoo_conv(net, n3, n2, f3, cmid, 4 * cmid, s2, 1, 1, 0, 0, &s3);
            if (stride != 1 || cin != 4 * cmid) {
                int64_t ss;
                snprintf(sc, sizeof sc, "s%d", id);
                snprintf(fs, sizeof fs, "ws%d", id);
                kt__zoo_conv(net, sc, in, fs, cin, 4 * cmid, s, 1, stride, 0, 0,
                             &ss);
            } else {
                snprintf(sc, sizeof sc, "%s", in);
            }
            kt__str_add(b, "%s[n,c,h,w] = relu(%s[n,c,h,w] + %s[n,c,h,w])\n",
                        out, n3, sc);
            snprintf(in, sizeof in, "%s", out);
            cin = 4 * cmid;
            s = s3;
        }
    }
    /* 1/(s*s) only when there are pixels (an empty stack is reported by
       kt_zoo_text, whose text is never parsed) */
    kt__str_add(b, "gap[n,c] = sum(h,w) %s[n,c,h,w] * %.17g\n", in,
                s > 0 ? 1.0 / ((double)s * (double)s) : 0.0);
    kt__zoo_fc(b, "logits", "gap", "Wfc", cin, K, 0);
    kt__zoo_loss(b, "logits", B, K);
}

/* Stacked LSTM unrolled over `steps`; a layer's weights are shared by its
   steps, and its per-step tensors are named NAME_t<step> so the planner
   coalesces the steps (Tofu 5.1). */
static void kt__zoo_rnn(kt__zoo_net *net, const kt__zoo_args *a) {
    kt__str *b = &net->b;
    int64_t L = kt__zoo_get(a, "layers"), H = kt__zoo_get(a, "hidden"),
            T = kt__zoo_get(a, "steps"), B = kt__zoo_get(a, "batch"), l, t;
    static const char gate[4] = {'i', 'f', 'o', 'g'};
    int q;
    kt__str_add(b, "# %lld-layer LSTM, hidden %lld, %lld steps, batch %lld\n",
                (long long)L, (long long)H, (long long)T, (long long)B);
    for (t = 0; t < T; t++)
        kt__str_add(b, "input x_l0_t%lld[%lld,%lld]\n", (long long)t,
                    (long long)B, (long long)H);
    for (l = 1; l <= L; l++) {
        kt__str_add(b, "input h_l%lld_init[%lld,%lld]\ninput c_l%lld_init"
                    "[%lld,%lld]\n", (long long)l, (long long)B, (long long)H,
                    (long long)l, (long long)B, (long long)H);
        for (q = 0; q < 4; q++)
            kt__str_add(b, "weight W%c_l%lld[%lld,%lld]\nweight U%c_l%lld"
                        "[%lld,%lld]\n", gate[q], (long long)l, (long long)H,
                        (long long)H, gate[q], (long long)l, (long long)H,
                        (long long)H);
        for (t = 0; t < T; t++) {
            char hp[48], cp[48], xin[48];
            if (t == 0) {
                snprintf(hp, sizeof hp, "h_l%lld_init", (long long)l);
                snprintf(cp, sizeof cp, "c_l%lld_init", (long long)l);
            } else {
                snprintf(hp, sizeof hp, "x_l%lld_t%lld", (long long)l,
                         (long long)(t - 1));
                snprintf(cp, sizeof cp, "c_l%lld_t%lld", (long long)l,
                         (long long)(t - 1));
            }
            snprintf(xin, sizeof xin, "x_l%lld_t%lld", (long long)(l - 1),
                     (long long)t);
            for (q = 0; q < 4; q++) {
                kt__str_add(b, "z%c_l%lld_t%lld[n,k] = sum(j) %s[n,j] * "
                            "W%c_l%lld[j,k] + %s[n,j] * U%c_l%lld[j,k]\n",
                            gate[q], (long long)l, (long long)t, xin, gate[q],
                            (long long)l, hp, gate[q], (long long)l);
                kt__str_add(b, "%c_l%lld_t%lld[n,k] = %s(z%c_l%lld_t%lld"
                            "[n,k])\n", gate[q], (long long)l, (long long)t,
                            q == 3 ? "tanh" : "sigmoid", gate[q], (long long)l,
                            (long long)t);
            }
            kt__str_add(b, "c_l%lld_t%lld[n,k] = f_l%lld_t%lld[n,k] * %s[n,k] "
                        "+ i_l%lld_t%lld[n,k] * g_l%lld_t%lld[n,k]\n",
                        (long long)l, (long long)t, (long long)l, (long long)t,
                        cp, (long long)l, (long long)t, (long long)l,
                        (long long)t);
            kt__str_add(b, "x_l%lld_t%lld[n,k] = o_l%lld_t%lld[n,k] * "
                        "tanh(c_l%lld_t%lld[n,k])\n", (long long)l,
                        (long long)t, (long long)l, (long long)t, (long long)l,
                        (long long)t);
        }
    }
    kt__str_add(b, "loss x_l%lld_t%lld\n", (long long)L, (long long)(T - 1));
}

/* A GPT-style decoder layer stack.  Per-head weights such as
   Wq[dmodel,heads,hdim] let heads be split without reshapes (Megatron's
   column/row split is then just a choice of the planner).  No layer norm,
   no causal mask; the loss is taken on the last layer's output. */
static void kt__zoo_transformer(kt__zoo_net *net, const kt__zoo_args *a) {
    kt__str *b = &net->b;
    int64_t L = kt__zoo_get(a, "layers"), D = kt__zoo_get(a, "dmodel"),
            Hh = kt__zoo_get(a, "heads"), F = kt__zoo_get(a, "ffn"),
            S = kt__zoo_get(a, "seq"), B = kt__zoo_get(a, "batch"), E, l;
    char x[32];
    E = D / Hh;
    kt__str_add(b, "# GPT-style transformer: %lld layers, dmodel %lld, %lld "
                "heads of %lld, ffn %lld, seq %lld, batch %lld\n"
                "input x0[%lld,%lld,%lld]\n", (long long)L, (long long)D,
                (long long)Hh, (long long)E, (long long)F, (long long)S,
                (long long)B, (long long)B, (long long)S, (long long)D);
    snprintf(x, sizeof x, "x0");
    for (l = 1; l <= L; l++) {
        long long n = (long long)l;
        kt__str_add(b, "weight Wq%lld[%lld,%lld,%lld]\nweight Wk%lld[%lld,%lld,"
                    "%lld]\nweight Wv%lld[%lld,%lld,%lld]\nweight Wo%lld[%lld,"
                    "%lld,%lld]\nweight W1_%lld[%lld,%lld]\nweight W2_%lld"
                    "[%lld,%lld]\n", n, (long long)D, (long long)Hh,
                    (long long)E, n, (long long)D, (long long)Hh, (long long)E,
                    n, (long long)D, (long long)Hh, (long long)E, n,
                    (long long)Hh, (long long)E, (long long)D, n, (long long)D,
                    (long long)F, n, (long long)F, (long long)D);
        kt__str_add(b, "q%lld[b,s,h,e] = sum(d) %s[b,s,d] * Wq%lld[d,h,e]\n"
                    "k%lld[b,s,h,e] = sum(d) %s[b,s,d] * Wk%lld[d,h,e]\n"
                    "v%lld[b,s,h,e] = sum(d) %s[b,s,d] * Wv%lld[d,h,e]\n",
                    n, x, n, n, x, n, n, x, n);
        kt__str_add(b, "sc%lld[b,h,s,t] = sum(e) q%lld[b,s,h,e] * "
                    "k%lld[b,t,h,e] * %.17g\n", n, n, n,
                    1.0 / sqrt((double)E));
        kt__str_add(b, "mx%lld[b,h,s] = max(t) sc%lld[b,h,s,t]\n"
                    "ex%lld[b,h,s,t] = exp(sc%lld[b,h,s,t] - mx%lld[b,h,s])\n"
                    "den%lld[b,h,s] = sum(t) ex%lld[b,h,s,t]\n"
                    "pr%lld[b,h,s,t] = ex%lld[b,h,s,t] / den%lld[b,h,s]\n",
                    n, n, n, n, n, n, n, n, n, n);
        kt__str_add(b, "at%lld[b,s,h,e] = sum(t) pr%lld[b,h,s,t] * "
                    "v%lld[b,t,h,e]\n"
                    "o%lld[b,s,d] = sum(h,e) at%lld[b,s,h,e] * Wo%lld[h,e,d]\n"
                    "r%lld[b,s,d] = %s[b,s,d] + o%lld[b,s,d]\n",
                    n, n, n, n, n, n, n, x, n);
        kt__str_add(b, "f%lld[b,s,f] = sum(d) r%lld[b,s,d] * W1_%lld[d,f]\n"
                    "g%lld[b,s,f] = relu(f%lld[b,s,f])\n"
                    "m%lld[b,s,d] = sum(f) g%lld[b,s,f] * W2_%lld[f,d]\n"
                    "x%lld[b,s,d] = r%lld[b,s,d] + m%lld[b,s,d]\n",
                    n, n, n, n, n, n, n, n, n, n, n);
        snprintf(x, sizeof x, "x%lld", n);
    }
    kt__str_add(b, "loss %s\n", x);
}

typedef struct kt__zoo_model {
    const char *name, *params, *about;
    void (*build)(kt__zoo_net *net, const kt__zoo_args *a);
} kt__zoo_model;

static const kt__zoo_model kt__zoo[] = {
    {"mlp", "layers=5,hidden=300,batch=400",
     "fully connected layers with relu (SOYBEAN 2.2)", kt__zoo_mlp},
    {"alexnet", "batch=128,image=227,width=32,fc=4096,classes=1000",
     "AlexNet, 5 convolutions (width x 3, 8, 12, 12, 8 channels) and 3 "
     "fully connected", kt__zoo_alexnet},
    {"vgg16", "batch=32,image=224,width=64,fc=4096,classes=1000",
     "VGG-16, 13 convolutions (width x 1, 2, 4, 8, 8 channels) and 3 fully "
     "connected", kt__zoo_vgg16},
    {"wresnet", "depth=50,widen=4,batch=8,image=224,width=64,classes=1000",
     "Wide ResNet 26/50/101/152 with bottleneck blocks (Tofu 7)",
     kt__zoo_wresnet},
    {"rnn", "layers=2,hidden=1024,steps=10,batch=64",
     "stacked LSTM unrolled over steps, weights shared (Tofu 7)", kt__zoo_rnn},
    {"transformer", "layers=2,dmodel=1024,heads=16,ffn=4096,seq=512,batch=8",
     "GPT-style layers with per-head weights", kt__zoo_transformer},
};

#define KT__NZOO ((int)(sizeof kt__zoo / sizeof kt__zoo[0]))

const char *kt_zoo_name(int i) { return i >= 0 && i < KT__NZOO ? kt__zoo[i].name : NULL; }
const char *kt_zoo_params(int i) { return i >= 0 && i < KT__NZOO ? kt__zoo[i].params : NULL; }
const char *kt_zoo_about(int i) { return i >= 0 && i < KT__NZOO ? kt__zoo[i].about : NULL; }

/* "key=value,..." into args; keys must be known to the model (its
   defaults) or `infer`. */
static kt_status kt__zoo_parse_args(const char *text, kt__zoo_args *a,
                                    int known_only, const char *model,
                                    const char *known, kt_error *err) {
    const char *p = text;
    int set_here[12] = {0}; /* a->p[i] given by this text: twice is an error
                               (the last one used to win silently) */
    /* "mlp:" and "mlp:layers=3," were taken, ",," refused: an empty
       parameter is a slip either way */
    if (known_only && (!*p || p[strlen(p) - 1] == ','))
        return kt__fail(err, KT_ERR_INVALID, 0, "zoo %s: an empty parameter "
                        "(nothing after %s)", model, *p ? "','" : "':'");
    while (p && *p) {
        char key[16];
        const char *eq = strchr(p, '='), *end;
        size_t kl;
        char *numend = NULL;
        long long v;
        int i;
        if (!eq)
            return kt__fail(err, KT_ERR_INVALID, 0, "zoo %s: expected "
                            "key=value at '%s'", model, p);
        kl = (size_t)(eq - p);
        if (kl == 0 || kl >= sizeof key)
            return kt__fail(err, KT_ERR_INVALID, 0, "zoo %s: bad key at '%s'",
                            model, p);
        memcpy(key, p, kl);
        key[kl] = '\0';
        /* digits only: strtoll would also take a sign and spaces */
        v = isdigit((unsigned char)eq[1]) ? strtoll(eq + 1, &numend, 10) : -1;
        if (v < 0 || (*numend && *numend != ','))
            return kt__fail(err, KT_ERR_INVALID, 0, "zoo %s: %s needs a "
                            "whole number (digits only)", model, key);
        if (v > (INT64_C(1) << 40))
            return kt__fail(err, KT_ERR_INVALID, 0, "zoo %s: %s=%.*s is more "
                            "than 2^40", model, key,
                            (int)(numend - eq - 1), eq + 1);
        end = numend;
        if (known_only && strcmp(key, "infer") != 0) {
            /* the key must appear in the defaults as "key=" */
            const char *k = known;
            int found = 0;
            while ((k = strstr(k, key)) != NULL) {
                if ((k == known || k[-1] == ',') && k[kl] == '=') found = 1;
                k += kl;
            }
            if (!found)
                return kt__fail(err, KT_ERR_INVALID, 0, "zoo %s: unknown "
                                "parameter %s (known: %s, infer=0|1)", model,
                                key, known);
        }
        for (i = 0; i < a->n && strcmp(a->p[i].key, key) != 0; i++) {}
        if (i < a->n && set_here[i])
            return kt__fail(err, KT_ERR_INVALID, 0, "zoo %s: %s is given "
                            "twice", model, key);
        if (i == a->n) {
            if (a->n == 12)
                return kt__fail(err, KT_ERR_LIMIT, 0, "zoo %s: too many "
                                "parameters", model);
            a->n++;
        }
        set_here[i] = 1;
        snprintf(a->p[i].key, sizeof a->p[i].key, "%s", key);
        a->p[i].value = v;
        p = *end ? end + 1 : end;
    }
    return KT_OK;
}

/* Most repeated blocks of statements a zoo model may have: its layers,
   times an RNN's steps.  The builders write one block per layer (and
   step), so without a bound layers=2^40 ran for minutes and then took
   gigabytes before any error (found by fuzzing kt_zoo_build). */
#ifndef KT_ZOO_MAX_BLOCKS
#define KT_ZOO_MAX_BLOCKS 1024
#endif

static kt_status kt__zoo_check(const char *model, const kt__zoo_args *a,
                               kt_error *err) {
    int64_t layers = kt__zoo_get(a, "layers"), steps = kt__zoo_get(a, "steps");
    int i;
    for (i = 0; i < a->n; i++) {
        int infer = strcmp(a->p[i].key, "infer") == 0; /* a switch, 0 or 1 */
        if (infer && a->p[i].value != 0 && a->p[i].value != 1)
            return kt__fail(err, KT_ERR_INVALID, 0, "zoo %s: infer is 0 "
                            "(training, the default) or 1 (inference)",
                            model);
        if (!infer && a->p[i].value < 1)
            return kt__fail(err, KT_ERR_INVALID, 0, "zoo %s: %s must be at "
                            "least 1", model, a->p[i].key);
    }
    if (layers < 1) layers = 1; /* a model without layers (convnets) */
    if (steps < 1) steps = 1;   /* or without steps (all but rnn) */
    if (layers > KT_ZOO_MAX_BLOCKS || steps > KT_ZOO_MAX_BLOCKS / layers) {
        char what[64];
        snprintf(what, sizeof what, " x %lld steps", (long long)steps);
        return kt__fail(err, KT_ERR_LIMIT, 0, "zoo %s: %lld layer%s%s, "
                        "more than %d blocks (KT_ZOO_MAX_BLOCKS)", model,
                        (long long)layers, layers == 1 ? "" : "s",
                        steps > 1 ? what : "", KT_ZOO_MAX_BLOCKS);
    }
    if (!strcmp(model, "wresnet")) {
        int64_t d = kt__zoo_get(a, "depth");
        int64_t width = kt__zoo_get(a, "width"), wf = kt__zoo_get(a, "widen");
        if (!kt__wresnet_blocks(d))
            return kt__fail(err, KT_ERR_INVALID, 0, "zoo wresnet: depth %lld "
                            "is not 26, 50, 101 or 152", (long long)d);
        /* the widest layer has width * widen * 32 channels (stage 4's
           8x, bottleneck 4x); keep it where int64 products stay exact --
           a tensor that large is refused later by its element count */
        if (width > (INT64_C(1) << 40) / 32 / wf)
            return kt__fail(err, KT_ERR_INVALID, 0, "zoo wresnet: width %lld "
                            "x widen %lld x 32 channels is more than 2^40",
                            (long long)width, (long long)wf);
    }
    if (!strcmp(model, "transformer") &&
        kt__zoo_get(a, "dmodel") % kt__zoo_get(a, "heads") != 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "zoo transformer: dmodel "
                        "%lld is not a multiple of heads %lld",
                        (long long)kt__zoo_get(a, "dmodel"),
                        (long long)kt__zoo_get(a, "heads"));
    return KT_OK;
}

/* The error for an image too small for a model's conv/pool stack: it names
   the first layer left without pixels and the smallest image that works
   (found by building the model for growing images: the stacks are too
   varied -- strides, padding, floor divisions -- for one formula). */
static kt_status kt__zoo_too_small(const kt__zoo_model *m,
                                   const kt__zoo_args *given,
                                   const char *layer, kt_error *err) {
    kt__zoo_args a = *given;
    int64_t image = kt__zoo_get(given, "image"), smallest = -1, s;
    int k;
    for (k = 0; k < a.n && strcmp(a.p[k].key, "image") != 0; k++) {}
    for (s = image + 1; k < a.n && smallest < 0 && s <= 4096; s++) {
        kt__zoo_net net;
        memset(&net, 0, sizeof net);
        a.p[k].value = s;
        m->build(&net, &a);
        if (!net.b.oom && !net.empty[0]) smallest = s;
        KT_FREE(net.b.s);
    }
    if (smallest < 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "zoo %s: image %lld is too "
                        "small: layer %s has no pixels left", m->name,
                        (long long)image, layer);
    return kt__fail(err, KT_ERR_INVALID, 0, "zoo %s: image %lld is too small: "
                    "layer %s has no pixels left (the smallest image is "
                    "%lld)", m->name, (long long)image, layer,
                    (long long)smallest);
}

kt_status kt_zoo_text(const char *spec, char **text, int *training,
                      kt_error *err) {
    char name[32];
    const char *colon;
    size_t nl;
    int i;
    kt__zoo_args args;
    kt__zoo_net net;
    kt_status s;
    int training_unused;
    if (!text) return kt__fail(err, KT_ERR_INVALID, 0, "zoo: nowhere to put "
                               "the text (NULL)");
    if (!training) training = &training_unused;
    *text = NULL;
    *training = 0;
    if (!spec || !*spec)
        return kt__fail(err, KT_ERR_INVALID, 0, "zoo: empty model spec");
    colon = strchr(spec, ':');
    nl = colon ? (size_t)(colon - spec) : strlen(spec);
    if (nl >= sizeof name) nl = sizeof name - 1;
    memcpy(name, spec, nl);
    name[nl] = '\0';
    for (i = 0; i < KT__NZOO && strcmp(kt__zoo[i].name, name) != 0; i++) {}
    if (i == KT__NZOO)
        return kt__fail(err, KT_ERR_INVALID, 0, "zoo: unknown model '%s' "
                        "(mlp alexnet vgg16 wresnet rnn transformer)%s", name,
                        strpbrk(name, "./") ? "; a model file is read by "
                        "kt_graph_load_file (ktile: --model-file)" : "");
    memset(&args, 0, sizeof args);
    s = kt__zoo_parse_args(kt__zoo[i].params, &args, 0, name, "", err);
    if (s == KT_OK && colon)
        s = kt__zoo_parse_args(colon + 1, &args, 1, name, kt__zoo[i].params,
                               err);
    if (s == KT_OK) s = kt__zoo_check(name, &args, err);
    if (s != KT_OK) return s;
    memset(&net, 0, sizeof net);
    kt__zoo[i].build(&net, &args);
    if (net.b.oom) {
        KT_FREE(net.b.s);
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    }
    if (net.empty[0]) {
        KT_FREE(net.b.s);
        return kt__zoo_too_small(&kt__zoo[i], &args, net.empty, err);
    }
    *training = kt__zoo_get(&args, "infer") > 0 ? 0 : 1;
    if (!*training) {
        /* inference: the same graph planned as written */
        char *l = strstr(net.b.s, "\nloss ");
        if (l) l[1] = '\0';
    }
    *text = net.b.s;
    kt__ok(err);
    return KT_OK;
}

kt_status kt_zoo_build(const char *spec, kt_graph **out, kt_error *err) {
    char *text;
    int training;
    kt_status s = kt_zoo_text(spec, &text, &training, err);
    *out = NULL;
    if (s != KT_OK) return s;
    if ((s = kt_graph_create(out, err)) == KT_OK)
        s = kt_graph_parse(*out, text, strlen(text), err);
    if (s == KT_OK && training) s = kt_graph_autodiff(*out, NULL, err);
    KT_FREE(text);
    if (s != KT_OK) {
        kt_graph_destroy(*out);
        *out = NULL;
    }
    return s;
}

#endif /* KT_TILING_IMPLEMENTED */
#endif /* KT_IMPLEMENTATION */
