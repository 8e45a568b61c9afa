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
         coordinate compression.

   HOW TO USE IT
     In exactly one C file:
         #define KT_IMPLEMENTATION
         #include "tiling.h"       (or <ktile/tiling.h> once installed)
     Everywhere else include it without the define.  Never put the ktile
     directory itself on the include path: sched.h would shadow the POSIX
     <sched.h> that <pthread.h> includes.

   PUBLIC FUNCTIONS
     errors      kt_status_string
     factors     kt_factors_parse kt_factors_default kt_factors_devices
                 kt_device_coords kt_device_index
     splits      kt_split_range
     tilings     kt_tiling_parse kt_tiling_format kt_tiling_check
                 kt_tiling_device_box kt_tiling_flatten kt_tiling_same_grid
                 kt_tiling_enumerate
     placements  kt_placement_init kt_placement_free kt_placement_from_tiling
     cost        kt_conversion_cost kt_tiling_conversion_cost
     graph       kt_graph_create kt_graph_destroy kt_graph_add_tensor
                 kt_graph_add_op kt_graph_finalize kt_graph_parse
                 kt_graph_load_file kt_graph_find_tensor kt_graph_tensor_count
                 kt_graph_tensor kt_graph_op_count kt_graph_op
     analysis    kt_sym_interval_eval kt_op_strategies kt_op_var_box
                 kt_op_input_box kt_op_output_box kt_op_placements

   CONFIGURATION (define before including)
     KT_MALLOC(n) KT_REALLOC(p,n) KT_FREE(p)   all three or none (stdlib)
     KT_ASSERT(x)                               internal invariants (assert)
     KT_MAX_DIMS    8      largest tensor rank
     KT_MAX_CUTS    16     most cuts in one tiling (2^16 devices)
     KT_MAX_VARS    16     most index variables in one statement
     KT_MAX_LINE    65536  longest model-file line accepted
     KT_NAME_MAX    64     longest tensor or variable name + 1

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
#ifndef KT_NAME_MAX
#define KT_NAME_MAX 64
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

/* "2,2" or "3" -> factors; every factor >= 2, product <= 2^30. */
kt_status kt_factors_parse(const char *text, kt_factors *out, kt_error *err);
/* Prime factors of n, largest first (Tofu 5.2); n == 1 gives no cuts. */
kt_status kt_factors_default(int64_t n, kt_factors *out, kt_error *err);
int64_t kt_factors_devices(const kt_factors *f);
void kt_device_coords(const kt_factors *f, int64_t device, int *coords);
int64_t kt_device_index(const kt_factors *f, const int *coords);

/* Part p of r split into k balanced blocks:
   [lo + floor(p*n/k), lo + floor((p+1)*n/k)) with n = hi - lo. */
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
   partial-sum classes.  A source placement with partials q >= 2 puts device
   d in class partial_class[d]; a target placement has partials == 1. */
typedef struct kt_placement {
    int rank;
    int64_t ndev;
    int64_t partials;
    kt_box *box;              /* ndev entries   */
    int64_t *partial_class;   /* ndev entries   */
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
   of the devices in T∩H (or H when that is empty), the elements of a tile
   shared evenly among them, and is then delivered to the rest of T. */
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
/* Placements of op run with factors f, splitting variable split_var[i] at
   cut i: what each device needs of every input (needed[0..ninputs)) and
   what it produces (produced, partial when a reduction variable is split).
   The caller frees them with kt_placement_free. */
kt_status kt_op_placements(const kt_graph *g, const kt_op *op,
                           const kt_factors *f, const int *split_var,
                           kt_placement *needed, kt_placement *produced,
                           kt_error *err);

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
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

/* ------------------------------------------------------------------ errors */

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
        if (!isdigit((unsigned char)*p))
            return kt__fail(err, KT_ERR_INVALID, 0,
                            "factors '%s': expected a number at '%s'", text, p);
        v = strtol(p, &end, 10);
        if (v < 2 || v > (1L << 30))
            return kt__fail(err, KT_ERR_INVALID, 0,
                            "factors '%s': factor %ld must be at least 2",
                            text, v);
        if (out->count == KT_MAX_CUTS)
            return kt__fail(err, KT_ERR_LIMIT, 0,
                            "factors '%s': more than %d cuts", text,
                            KT_MAX_CUTS);
        product *= v;
        if (product > (INT64_C(1) << 30))
            return kt__fail(err, KT_ERR_INVALID, 0,
                            "factors '%s': more than 2^30 devices", text);
        out->k[out->count++] = (int)v;
        p = end;
        if (*p == '\0') break;
        if (*p != ',')
            return kt__fail(err, KT_ERR_INVALID, 0,
                            "factors '%s': unexpected '%c'", text, *p);
        p++;
    }
    kt__ok(err);
    return KT_OK;
}

kt_status kt_factors_default(int64_t n, kt_factors *out, kt_error *err) {
    int64_t p, primes[64];
    int np = 0, i;
    memset(out, 0, sizeof *out);
    if (n < 1 || n > (INT64_C(1) << 30))
        return kt__fail(err, KT_ERR_INVALID, 0,
                        "device count %lld must be between 1 and 2^30",
                        (long long)n);
    for (p = 2; p * p <= n; p++)
        while (n % p == 0) { primes[np++] = p; n /= p; }
    if (n > 1) primes[np++] = n;
    if (np > KT_MAX_CUTS)
        return kt__fail(err, KT_ERR_LIMIT, 0,
                        "%d prime factors exceed KT_MAX_CUTS (%d)", np,
                        KT_MAX_CUTS);
    /* Tofu 5.2: the largest factor first, so the most expensive cut is the
       one made across the fewest, biggest groups. */
    for (i = 0; i < np; i++) out->k[i] = (int)primes[np - 1 - i];
    out->count = np;
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

kt_range kt_split_range(kt_range r, int k, int p) {
    kt_range out;
    int64_t n = r.hi - r.lo;
    out.lo = r.lo + (n * p) / k;
    out.hi = r.lo + (n * (p + 1)) / k;
    return out;
}

kt_status kt_tiling_parse(const char *text, kt_tiling *out, kt_error *err) {
    const char *p = text;
    memset(out, 0, sizeof *out);
    if (!text || !*text)
        return kt__fail(err, KT_ERR_INVALID, 0, "tiling: empty text");
    for (;;) {
        int code;
        if (out->ncuts == KT_MAX_CUTS)
            return kt__fail(err, KT_ERR_LIMIT, 0,
                            "tiling '%s': more than %d cuts", text,
                            KT_MAX_CUTS);
        if (*p == 'R' || *p == 'P') {
            code = *p == 'R' ? KT_CUT_R : KT_CUT_P;
            p++;
        } else if (*p == 'S' && isdigit((unsigned char)p[1])) {
            char *end;
            long d = strtol(p + 1, &end, 10);
            if (d >= KT_MAX_DIMS)
                return kt__fail(err, KT_ERR_INVALID, 0,
                                "tiling '%s': S%ld names a dimension beyond "
                                "the largest rank %d", text, d, KT_MAX_DIMS);
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
    int i;
    for (i = 0; i < t->ncuts; i++) {
        if (i) tmp[n++] = '.';
        if (t->cut[i] == KT_CUT_R) tmp[n++] = 'R';
        else if (t->cut[i] == KT_CUT_P) tmp[n++] = 'P';
        else n += (size_t)snprintf(tmp + n, sizeof tmp - n, "S%d", t->cut[i]);
    }
    if (t->ncuts == 0) tmp[n++] = '-'; /* one device: nothing is cut */
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
    kt_tiling_format(t, text, sizeof text);
    if (t->ncuts != f->count)
        return kt__fail(err, KT_ERR_INVALID, 0,
                        "%s: tiling %s has %d cut%s but there are %d factors",
                        who, text, t->ncuts, t->ncuts == 1 ? "" : "s",
                        f->count);
    for (i = 0; i < rank; i++) parts[i] = 1;
    for (i = 0; i < t->ncuts; i++) {
        int c = t->cut[i];
        if (c == KT_CUT_P && !allow_partial)
            return kt__fail(err, KT_ERR_INVALID, 0,
                            "%s: tiling %s: P (partial sums) is only a "
                            "source, never a tensor's target tiling", who,
                            text);
        if (c >= 0) {
            if (c >= rank)
                return kt__fail(err, KT_ERR_INVALID, 0,
                                "%s: tiling %s splits dim %d but the tensor "
                                "has rank %d", who, text, c, rank);
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
    kt_status s = kt_tiling_check(t, NULL, rank, shape, f, 1, err);
    if (s != KT_OK) return s;
    s = kt_placement_init(p, rank, ndev, err);
    if (s != KT_OK) return s;
    p->partials = kt_tiling_flatten(t, rank, f).partials;
    for (d = 0; d < ndev; d++)
        kt_tiling_device_box(t, rank, shape, f, d, &p->box[d],
                             &p->partial_class[d]);
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

static int kt__cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

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
        size_t n = 0, m = 0, i;
        int64_t dev, *c = (int64_t *)kt__calloc(
            (size_t)(a->ndev + b->ndev) * 2 + 2, sizeof(int64_t));
        if (!c) {
            kt__grid_free(g);
            return kt__fail(err, KT_ERR_NOMEM, 0,
                            "out of memory compressing coordinates");
        }
        g->cut[d] = c;
        c[n++] = 0;
        c[n++] = shape[d];
        /* Boxes are clipped to the tensor: what lies outside (padding) is
           neither held nor sent. */
        for (dev = 0; dev < a->ndev; dev++) {
            kt_range r = a->box[dev].r[d];
            if (r.lo > 0 && r.lo < shape[d]) c[n++] = r.lo;
            if (r.hi > 0 && r.hi < shape[d]) c[n++] = r.hi;
        }
        for (dev = 0; dev < b->ndev; dev++) {
            kt_range r = b->box[dev].r[d];
            if (r.lo > 0 && r.lo < shape[d]) c[n++] = r.lo;
            if (r.hi > 0 && r.hi < shape[d]) c[n++] = r.hi;
        }
        qsort(c, n, sizeof *c, kt__cmp_i64);
        for (i = 0; i < n; i++)
            if (m == 0 || c[m - 1] != c[i]) c[m++] = c[i];
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
    if (p->partials < 1)
        return kt__fail(err, KT_ERR_INVALID, 0,
                        "conversion cost: %s placement has %lld partial "
                        "classes", role, (long long)p->partials);
    return KT_OK;
}

/* Who receives what.  Without partial sums a device receives what it
   needs and does not hold.  With partial sums the roots of a cell are the
   devices in T and H (or all of H when no device of T holds a partial);
   root j of n reduces block j of the cell's elements (a balanced split, as
   a ring reduce-scatter does): it receives the q-1 other partials of that
   block, then every other device of T receives the block from it. */
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
            } else if (q > 1) {
                /* in T and H: one of the both[c] roots */
                kt_range all, mine;
                int64_t part;
                all.lo = 0;
                all.hi = vol;
                mine = kt_split_range(all, (int)both[c], (int)roots_seen[c]++);
                part = mine.hi - mine.lo;
                got += (q - 1) * part + (vol - part);
            }
        }
        /* A holder outside T is a root only where T holds nothing. */
        if (holds && q > 1)
        for (kt__span_begin(&it, g, hf, hl); !it.done; kt__span_next(&it, g)) {
            int64_t c = it.cell;
            if (need[c] > 0 && both[c] == 0) {
                kt_range all, mine;
                all.lo = 0;
                all.hi = kt__cell_volume(g, c);
                mine = kt_split_range(all, (int)held[c], (int)roots_seen[c]++);
                got += (q - 1) * (mine.hi - mine.lo);
            }
        }
        received[dev] = got * elem_bytes;
    }
}

kt_status kt_conversion_cost(int rank, const int64_t *shape, int elem_bytes,
                             const kt_placement *from, const kt_placement *to,
                             int64_t *bytes, int64_t *received, kt_error *err) {
    kt__grid g;
    int64_t *need = NULL, *both = NULL, *held = NULL, *roots_seen = NULL;
    int64_t total = 0, dev, cell, q;
    int d, ok = 1;
    kt_status s;
    *bytes = 0;
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
    for (d = 0; d < rank; d++)
        if (shape[d] < 1)
            return kt__fail(err, KT_ERR_SHAPE, 0,
                            "conversion cost: dim %d has extent %lld", d,
                            (long long)shape[d]);
    if (received)
        for (dev = 0; dev < to->ndev; dev++) received[dev] = 0;
    s = kt__grid_build(&g, rank, shape, from, to, err);
    if (s != KT_OK) return s;
    q = from->partials;
    /* Per cell: |T| (need), |T and H| (both), |H| (held), and how many of
       its reduction roots have been met so far (roots_seen). */
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
    /* Cost of every cell from the DESIGN.md rule. */
    for (cell = 0; cell < g.ncells; cell++) {
        int64_t per;
        if (need[cell] == 0) continue;
        if (q == 1) per = need[cell] - both[cell];
        else per = (q - 1) + need[cell] - (both[cell] > 0);
        total += per * kt__cell_volume(&g, cell);
    }
    *bytes = total * elem_bytes;
    if (received) kt__attribute_received(&g, from, to, need, both, held,
                                         roots_seen, elem_bytes, received);
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

#endif /* KT_TILING_IMPLEMENTED */
#endif /* KT_IMPLEMENTATION */
