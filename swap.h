/* swap.h -- ktile part 3: swapping between device and host memory.
                                                     MIT licence, see LICENSE.

   WHAT IT IS FOR
     When even a partitioned training step does not fit in one device's
     memory, ktile plans which tensors to move to host memory and back, and
     when, so that the copies overlap the computation (SwapAdvisor, Huang
     thesis chapter 4).  A plan is judged by the sched.h simulator with
     three "devices": the compute stream and the swap-in and swap-out
     streams (thesis 4.3.1), so a swap runs beside the computation.

       memory model   tensor sizes and lifetimes under a schedule;
                      parameters and inputs start in host memory;
                      activations and gradients are created on the
                      device; optional per-operator scratch tensors.
       memory pool    size classes (thesis 4.3.1, 4.4.3): TS, the sorted
                      distinct tensor sizes; CLS, the class of each size,
                      monotone with steps of +0 or +1; CNT, the objects
                      per class; checks against the capacity and the
                      thesis's repair rules.
       swap planner   thesis 4.3.2: Belady (furthest next use) inside the
                      size class, a threshold on recent use for victims of
                      a swap-in, the double pass that makes the parameters
                      resident at the end of a step those at its start,
                      drops instead of copies when the host copy is
                      current, and the augmented graph (op -> swap-out ->
                      swap-in -> op).  The plan is a per-step list of
                      actions with each tensor's pool object, for an
                      executor.
       simulator      the plan as a kt_sim (sched.h) and kt_sim_run.
       search         the genetic algorithm of thesis 4.4 over schedule
                      and allocation; baselines: no search, on-demand LRU
                      swapping with prefetch (ODSwap, thesis 5.1), GeePS
                      placement (Zhang thesis Algorithm 4) and the ideal
                      (unlimited memory).

   HOW TO USE IT
     #define KT_IMPLEMENTATION in one C file before including it (it
     includes sched.h and tiling.h itself).  Never put the ktile directory
     on the include path (sched.h would shadow POSIX <sched.h>).

       kt_swap_model m;  kt_swap_result r;  kt_swap_options o;
       kt_swap_model_from_graph(g, NULL, &m, &err);
       memset(&o, 0, sizeof o);  o.memory = 8LL << 30;  o.seconds = 10;
       kt_swap_search(&m, KT_SWAP_SEARCH_GA, &o, &r, &err);
       ... r.step_seconds, r.plan.action[...] ...
       kt_swap_result_free(&r);  kt_swap_model_free(&m);

   PUBLIC FUNCTIONS
     model       kt_swap_model_init kt_swap_model_add_tensor
                 kt_swap_model_add_op kt_swap_model_add_use
                 kt_swap_model_add_scratch kt_swap_model_finish
                 kt_swap_model_from_graph kt_swap_model_from_plan
                 kt_swap_model_from_program kt_swap_op_buffers
                 kt_swap_model_free kt_swap_ideal_seconds
     pool        kt_swap_alloc_init kt_swap_alloc_free kt_swap_class_min
                 kt_swap_alloc_check kt_swap_cls_repair kt_swap_cnt_repair
                 kt_swap_alloc_crossover kt_swap_alloc_minimal
                 kt_swap_alloc_default
     schedules   kt_swap_schedule_crossover kt_swap_schedule_mutate
     planning    kt_swap_plan_build kt_swap_plan_odswap kt_swap_plan_geeps
                 kt_swap_plan_free
     simulation  kt_swap_sim_build kt_swap_simulate
     search      kt_swap_search kt_swap_result_free

   CONFIGURATION
     KT_SWAP_HOST_BW   50e9   default host link bytes/s per direction
                              (PCIe 5.0 x16, what is usable of it)

   LIMITS
     KT_SWAP_MAX_POPULATION  4096    the GA's largest population (its
                                     selection is quadratic in it)
     KT_SWAP_MAX_PRESSURE    1e6     the GA's largest selection pressure
     KT_SWAP_MAX_OBJECTS     1<<22   the most objects in one pool

   CHECKS
     Every function that takes a model refuses with KT_ERR_INVALID one
     never finished or changed since (a tensor, op or use added; a size,
     on_host or keep changed: the message says to call
     kt_swap_model_finish), and one whose sizes, op times or host link are
     not usable;
     every one that takes an order, a pool or a plan checks it against the
     model first (an order is a permutation of the ops, and where it is a
     schedule also after the ops it depends on; a pool has the model's
     sizes, a valid CLS and CNT; a plan the model's steps, and actions whose
     fields are in range), naming the step, action, class or field.

   Deterministic: the same model, options and seed give the same plan when
   the search is bounded by generations; a time budget (KT_CLOCK(): the
   process's CPU time, clock(), unless defined otherwise) stops it after a
   varying number of generations.

   Running a plan: backend_cpu.h (kt_cpu_run_swapped, kt_cpu_verify_swap,
   `ktile verify --memory`) executes a pool plan with each device's memory
   one arena of the capacity; build its model with
   kt_swap_model_from_program, which adds the executor's receive and result
   buffers (kt_swap_op_buffers) as per-op scratch tensors.
*/
#ifndef KT_SWAP_H
#define KT_SWAP_H

#include "sched.h"

#ifndef KT_SWAP_HOST_BW
#define KT_SWAP_HOST_BW 50e9
#endif
#define KT_SWAP_MAX_POPULATION 4096
/* Already at 1e4 a plan 0.1% slower than the best is drawn e^-10 times as
   often; an infinite pressure would give the best itself the weight
   exp(inf * 0). */
#define KT_SWAP_MAX_PRESSURE 1e6
#define KT_SWAP_MAX_OBJECTS (1 << 22)

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------- memory model */

/* One step as the swap planner sees it: tensors with sizes, operators in a
   valid order (their index order) that use tensors, and the host link.
   The fields above the line are the caller's (fill them through the
   builder; seconds and the host link may be changed afterwards, e.g. a
   profile; after changing bytes, on_host or keep call
   kt_swap_model_finish again); those below are derived by
   kt_swap_model_finish. */
typedef struct kt_swap_model {
    int ntensors, nops;
    int64_t *bytes;           /* per tensor                                  */
    unsigned char *on_host;   /* 1: starts in host memory, valid there
                                 (parameters, inputs, optimizer state)       */
    unsigned char *keep;      /* 1: lives to the end of the step even after
                                 its last use (parameters; activations
                                 needed by a part of the graph not given)   */
    double *seconds;          /* per op: its compute time                    */
    int *use_first;           /* op o uses use[use_first[o]..use_first[o+1]) */
    int *use;                 /* tensors, distinct within an op              */
    unsigned char *use_mode;  /* KT_SWAP_READ | KT_SWAP_WRITE per use        */
    int *graph_tensor;        /* kt_graph ids when built from a graph, -1    */
    int *graph_op;
    double h2d_bw, d2h_bw;    /* host link, bytes/s per direction            */
    double latency;           /* seconds added to every copy                 */
    /* ---- derived */
    int nsizes;               /* TS: sorted distinct sizes of used tensors  */
    int64_t *size;
    int *size_of;             /* tensor -> index in TS, -1 when never used   */
    unsigned char *param;     /* on_host and keep: may stay resident
                                 from one step to the next                   */
    unsigned char *updated;   /* a param written during the step             */
    int *dep_first, *dep;     /* ops an op must follow                       */
    int *succ_first, *succ;   /* the reverse                                 */
    int finished;             /* 1: derived from the tensors, ops and uses
                                 as they are; any add clears it            */
    int seen_tensors, seen_ops, seen_uses; /* the counts finish saw, and  */
    uint64_t seen_hash;       /* a hash of the sizes, flags and uses: a
                                 change since is refused                    */
    int cap_tensors, cap_ops, cap_uses, nuses; /* builder storage           */
} kt_swap_model;

kt_status kt_swap_model_init(kt_swap_model *m, kt_error *err);
/* Adding after kt_swap_model_finish is allowed: the model is unfinished
   again (m->finished = 0) until the next kt_swap_model_finish, and every
   planner refuses it till then.
   Returns the new tensor's id, or -1 (err filled).  bytes >= 0; a tensor
   of 0 bytes takes no memory (it gets objects of 0 bytes). */
int kt_swap_model_add_tensor(kt_swap_model *m, int64_t bytes, int on_host,
                             int keep, kt_error *err);
/* Ops are added in a valid execution order; returns the op's id or -1. */
int kt_swap_model_add_op(kt_swap_model *m, double seconds, kt_error *err);
/* How an op uses a tensor: reads it, writes it (an output: no need to
   fetch it), or both (an in-place update). */
enum { KT_SWAP_READ = 1, KT_SWAP_WRITE = 2 };
/* Adds a use (KT_SWAP_READ and/or KT_SWAP_WRITE) to the op added last
   (KT_ERR_INVALID for any other op, or when no op was added). */
kt_status kt_swap_model_add_use(kt_swap_model *m, int op, int tensor,
                                int mode, kt_error *err);
/* Per-operator scratch space (thesis 4.1): a tensor the op writes and
   nobody reads, so it is allocated for the op and freed right after. */
kt_status kt_swap_model_add_scratch(kt_swap_model *m, int op, int64_t bytes,
                                    kt_error *err);
/* Checks the sizes (>= 0), op times, host link and uses (every read of a
   tensor not in host memory follows a write of it) and derives TS,
   dependencies and parameter flags; sets m->finished.  May be called
   again (after adds, or changed sizes): it derives everything afresh. */
kt_status kt_swap_model_finish(kt_swap_model *m, kt_error *err);
/* The whole graph on one device: tensor bytes from shapes, op times from
   sched.h's roofline on the topology's device (NULL: kt_machine_default),
   host link KT_SWAP_HOST_BW.  Weights, optimizer state and inputs are
   parameters: in host memory at first, kept from step to step.  A
   topology given is checked as sched.h's consumers check one. */
kt_status kt_swap_model_from_graph(const kt_graph *g, const kt_topology *t,
                                   kt_swap_model *m, kt_error *err);
/* One device of a partitioned step: every tensor at its tile size on the
   fullest device (kt_plan_tensor_bytes), every op at the time of its
   slowest sub-operator in the lowered program.  Receive buffers of
   conversions are not modelled (kt_swap_model_from_program does). */
kt_status kt_swap_model_from_plan(const kt_graph *g, const kt_plan *p,
                                  const kt_topology *t, kt_swap_model *m,
                                  kt_error *err);
/* The working buffers an executor of program prog (kt_lower of p) needs
   for graph op `op` beside the tiles, in bytes on the device needing most
   (0: none).  buf[j], j < ninputs: a receive buffer for input j, where on
   some device the region the sub-operator reads is not inside that
   device's tile (a halo, a conversion): the local part and the received
   parts are gathered there.  buf[ninputs]: a result buffer, where the op
   updates its output in place, or its result is reduced or sent to other
   devices, or on some device the region it computes is not exactly the
   device's tile of the output; otherwise the op writes straight into the
   tile.  One rule for every executor (backend_cpu.h follows it).
   It cannot report an error: an op outside the graph, a plan or a
   program not of g's shape (kt_swap_model_from_program checks them in
   full) give all zeros. */
void kt_swap_op_buffers(const kt_graph *g, const kt_plan *p,
                        const kt_program *prog, int op, int64_t *buf);
/* kt_swap_model_from_plan for an executor: the same tensors and times,
   plus kt_swap_op_buffers' buffers of every op as its scratch tensors
   (added per op in input order, the result buffer last), so the pool
   holds the transfers' receive buffers too.  With one device (a plan
   without cuts) the only buffers are those of in-place updates.  The plan
   is checked against the graph, the program against both (kt_lower's
   shape: tasks, transfers and xfer_first in range) and the topology as
   sched.h checks one; KT_ERR_INVALID names what is wrong. */
kt_status kt_swap_model_from_program(const kt_graph *g, const kt_plan *p,
                                     const kt_program *prog,
                                     const kt_topology *t, kt_swap_model *m,
                                     kt_error *err);
void kt_swap_model_free(kt_swap_model *m);
/* Unlimited memory: the compute stream alone. */
double kt_swap_ideal_seconds(const kt_swap_model *m);

/* ----------------------------------------------------------- memory pool */

/* Thesis 4.4.3 with 0-based classes: cls[i] is the class of size TS[i],
   cls[0] = 0 and cls[i] - cls[i-1] in {0, 1}; a class's objects are as big
   as its largest size; cnt[c] objects in class c (nclass = cls[n-1]+1).  */
typedef struct kt_swap_alloc {
    int n;         /* sizes (the model's nsizes) */
    int *cls;      /* n */
    int *cnt;      /* n entries, the first nclass used */
} kt_swap_alloc;

/* n >= 0 sizes (KT_ERR_INVALID otherwise); cls and cnt zeroed. */
kt_status kt_swap_alloc_init(kt_swap_alloc *a, int n, kt_error *err);
void kt_swap_alloc_free(kt_swap_alloc *a);
/* The fewest objects each class needs: the most tensors of that class one
   op uses at once, written to min_cnt (cls[nsizes-1]+1 entries).
   KT_ERR_INVALID, writing nothing, when the model is not finished or cls
   is not a valid class map of its nsizes sizes (the message names the
   first bad entry); KT_ERR_NOMEM past 64 classes (their counts are kept
   on the heap) when out of memory. */
kt_status kt_swap_class_min(const kt_swap_model *m, const int *cls,
                            int *min_cnt, kt_error *err);
/* A valid pool for the model within `capacity` bytes; the message names
   the sizes, class or op that does not fit.  A pool whose size overflows
   64 bits fits nothing. */
kt_status kt_swap_alloc_check(const kt_swap_model *m, const kt_swap_alloc *a,
                              int64_t capacity, kt_error *err);
/* Thesis 4.4.3 repairs.  cls: each element raised or lowered the least so
   the sequence starts at 0 and steps by 0 or 1.  cnt: raised to min_cnt
   (NULL: 1), then, while over capacity, every class above its minimum
   gives up an equal share of the excess in bytes (so counts fall in
   inverse proportion to the class size; a class of 0-byte objects frees
   nothing, so it keeps its count).  *fits: whether the repaired pool fits
   (0 when no pool of these classes does).  KT_ERR_INVALID, leaving cnt
   alone, when cls is not a valid class map or a size is negative;
   KT_ERR_NOMEM (cnt alone too) past 64 classes when out of memory. */
void kt_swap_cls_repair(int *cls, int n);
kt_status kt_swap_cnt_repair(const int64_t *ts, int n, const int *cls,
                             int *cnt, const int *min_cnt, int64_t capacity,
                             int *fits, kt_error *err);
/* Crossover of two allocations at point cr (the GA draws 1..n-1; clamped
   to 0..n as kt_swap_schedule_crossover clamps, 0 and n giving the
   parents' own maps, repaired): the children's CLS
   are cls2[0..cr) + cls1[cr..) and cls1[0..cr) + cls2[cr..), repaired;
   their CNT come from the parents' extended CNT (objects per size)
   crossed the same way and averaged within each child class, rounded to
   nearest, then repaired against capacity.  *fits: how many children fit
   (they are written either way).  KT_ERR_INVALID, writing nothing, when a
   pool is not of n sizes, a parent's CLS is not a valid class map or a
   size is negative.  KT_ERR_NOMEM past 64 sizes or classes when out of
   memory, possibly after the children's CLS and CNT were written (a pool
   then, but not repaired against capacity). */
kt_status kt_swap_alloc_crossover(const int64_t *ts, int n,
                                  const kt_swap_alloc *p1,
                                  const kt_swap_alloc *p2, int cr,
                                  const int *min_cnt1, const int *min_cnt2,
                                  int64_t capacity, kt_swap_alloc *c1,
                                  kt_swap_alloc *c2, int *fits,
                                  kt_error *err);
/* The pool with the fewest bytes that can run every op (dynamic
   programming over the monotone class maps); *bytes its size.
   KT_ERR_INVALID when that size overflows 64 bits. */
kt_status kt_swap_alloc_minimal(const kt_swap_model *m, kt_swap_alloc *a,
                                int64_t *bytes, kt_error *err);
/* The pool the planner uses without a search: one class per size with as
   many objects as that size has tensors alive at once under `order`
   (NULL: op order; else a schedule: every op once, after the ops it
   depends on) when that fits, else the minimal pool with the spare
   bytes shared by the classes in proportion to their unmet demand.
   KT_ERR_INVALID when nothing fits, when capacity is not positive, and
   for an order that is not a schedule of m. */
kt_status kt_swap_alloc_default(const kt_swap_model *m, const int *order,
                                int steady, int64_t capacity,
                                kt_swap_alloc *a, kt_error *err);

/* -------------------------------------------------------------- schedules */

/* Thesis 4.4.2 (after Hou et al.): child1 = s2[0..cr) then the rest in s1's
   order; child2 = s1[0..cr) then the rest in s2's order (cr clamped to
   0..n).  KT_ERR_INVALID, writing nothing, when s1 or s2 is not a
   permutation of 0..n-1 (two schedules give schedules). */
kt_status kt_swap_schedule_crossover(int n, const int *s1, const int *s2,
                                     int cr, int *child1, int *child2,
                                     kt_error *err);
/* Ready-set mutation: a list scheduler that, with probability p, runs a
   random ready op, else the ready op earliest in `in` (NULL: op order;
   else a permutation of the ops, in any order).  *rng is a xorshift64
   state (nonzero). */
kt_status kt_swap_schedule_mutate(const kt_swap_model *m, const int *in,
                                  double p, uint64_t *rng, int *out,
                                  kt_error *err);

/* --------------------------------------------------------------- planning */

typedef enum kt_swap_action_kind {
    KT_SWAP_IN = 0,  /* copy host -> device into `object`                   */
    KT_SWAP_OUT,     /* copy device -> host; then `object` is empty         */
    KT_SWAP_DROP,    /* forget the device copy: the host copy is current    */
    KT_SWAP_FREE,    /* the tensor is dead (or the step is over)            */
    KT_SWAP_ALLOC    /* the op of `step` creates the tensor in `object`     */
} kt_swap_action_kind;

/* One action, to be done before the op of `step` runs (step == nsteps: at
   the end of the step).  An executor with copy streams may start it as
   soon as the op of `after_step` has finished (negative: at the start)
   and the swap-outs wait_out and wait_self (action indices, -1 none) are
   done:
   wait_out empties the object (for the baselines, which evict several
   tensors for one, the previous eviction: a chain), wait_self is the
   tensor's own last copy to the host.  These are the control edges of
   thesis 4.3.2 (op -> swap-out -> swap-in -> op). */
typedef struct kt_swap_action {
    kt_swap_action_kind kind;
    int tensor;
    int object;      /* pool object; -1: a dynamic allocation (baselines) */
    int step;
    int after_step;
    int wait_out;
    int wait_self;
} kt_swap_action;

typedef struct kt_swap_plan {
    int nsteps;
    int *order;              /* op of every step                            */
    int nobjects;
    int64_t *object_bytes;   /* the pool; objects numbered class by class   */
    int ninitial;            /* resident at the start of a step            */
    int *initial_tensor, *initial_object;
    unsigned char *initial_clean; /* 1: its host copy is current at the
                                     start too (the step ends by swapping
                                     it back in after its last update);
                                     0: the device copy is the newer one
                                     if the step updates it.  NULL: all 0 */
    int nactions;
    kt_swap_action *action;  /* by step, ascending                          */
    int *step_first;         /* nsteps + 2: step s's actions are
                                action[step_first[s] .. step_first[s+1])    */
    int64_t swapped_bytes;   /* copied in + copied out                      */
    int64_t peak_bytes;      /* most bytes of objects holding tensors
                                (GeePS: the bytes its placement reserves,
                                pinned data and the double buffer)          */
    int64_t pool_bytes;      /* bytes of the whole pool                     */
} kt_swap_plan;

typedef struct kt_swap_options {
    int64_t memory;        /* device bytes for tensors (required)           */
    int cold;              /* 1: one step from an empty device, parameters
                              in host memory, nothing restored at the end;
                              0: the steady state of training, double pass */
    int recent_steps;      /* a swap-in's victim is, when possible, not used
                              by the last recent_steps ops (thesis 4.3.2);
                              0: pure Belady                               */
    /* search */
    double seconds;        /* GA CPU-time budget, KT_CLOCK (0: generations
                              only)                                        */
    int generations;       /* GA generation budget (0: seconds only; both
                              0: 50)                                        */
    int population;        /* N_p (0 or 1: 32), at most
                              KT_SWAP_MAX_POPULATION                       */
    double mutation;       /* P, from 0 to 1 (0: 0.1)                       */
    double pressure;       /* softmax scale on t_norm, up to
                              KT_SWAP_MAX_PRESSURE (0: 100; thesis: 1)     */
    uint64_t seed;
    int keep_schedule;     /* 1: search the allocation only                 */
    /* called after every generation (NULL: silent) */
    void (*progress)(void *ctx, int generation, double best, double average,
                     double worst, int64_t evaluations, double seconds);
    void *progress_ctx;
} kt_swap_options;

/* The swap planner (thesis 4.3.2) for schedule `order` (NULL: op order;
   else every op once, after the ops it depends on) and pool `a` (the
   model's sizes, at most o->memory bytes).  KT_ERR_INVALID, naming the
   op, when the pool cannot run some op; naming the step, class or field
   when the order or the pool is not the model's. */
kt_status kt_swap_plan_build(const kt_swap_model *m, const int *order,
                             const kt_swap_alloc *a,
                             const kt_swap_options *o, kt_swap_plan *out,
                             kt_error *err);
/* ODSwap (thesis 5.1): op order, a byte budget without a pool (an ideal
   dynamic allocator), on demand: an op's missing inputs are fetched when
   it is reached, least recently used tensors evicted; the next op's inputs
   are prefetched when they fit without evicting.  Steady mode reports the
   second step, memory as the first left it.  KT_ERR_INVALID when
   o->memory is not positive or cannot hold some op's tensors. */
kt_status kt_swap_plan_odswap(const kt_swap_model *m,
                              const kt_swap_options *o, kt_swap_plan *out,
                              kt_error *err);
/* GeePS (Zhang thesis Algorithm 4): a buffer twice the peak of what ops
   use from host memory (double buffering); local data used at the peak
   pinned first, then other local data, then parameters.  Unpinned data is
   fetched for every op that reads it and written back after every op that
   writes it. */
kt_status kt_swap_plan_geeps(const kt_swap_model *m, const kt_swap_options *o,
                             kt_swap_plan *out, kt_error *err);
void kt_swap_plan_free(kt_swap_plan *p);

/* ------------------------------------------------------------- simulation */

/* The augmented graph as sched.h tasks: compute tasks (device 0, one per
   step, chained in schedule order), swap-ins on link 0 (device 1) and
   swap-outs on link 1 (device 2), with the plan's control edges.  Tasks
   0..nsteps-1 are the steps' ops; a copy's src or dst is -1 (host).
   The plan is checked against the model first: as many steps as ops, an
   order that is a schedule, step_first ascending from 0 to nactions, and
   every action of a known kind, of its step, with its tensor, object,
   after_step and waits (swap-outs' indices, or -1) in range;
   KT_ERR_INVALID names the action and field. */
kt_status kt_swap_sim_build(const kt_swap_model *m, const kt_swap_plan *p,
                            kt_sim *out, kt_error *err);
kt_status kt_swap_simulate(const kt_swap_model *m, const kt_swap_plan *p,
                           double *step_seconds, kt_error *err);

/* ----------------------------------------------------------------- search */

typedef enum kt_swap_search_kind {
    KT_SWAP_SEARCH_GA = 0,  /* genetic search, thesis 4.4                   */
    KT_SWAP_SEARCH_NONE,    /* op order and kt_swap_alloc_default           */
    KT_SWAP_SEARCH_ODSWAP,
    KT_SWAP_SEARCH_GEEPS
} kt_swap_search_kind;

typedef struct kt_swap_result {
    kt_swap_plan plan;
    kt_swap_alloc alloc;     /* empty for the baselines without a pool      */
    double step_seconds, ideal_seconds;
    int64_t swapped_bytes, peak_bytes;
    int64_t evaluations;
    int generations;
    double search_seconds;
} kt_swap_result;

/* Runs the search `kind` under o->memory.  The GA runs until its budget
   (generations or CPU seconds, KT_CLOCK) is spent, or until its best step
   is the ideal one (kt_swap_ideal_seconds, up to rounding): no plan is faster
   than the compute stream alone, so r->generations can be below the
   budget.  KT_ERR_INVALID for the GA when o->population, o->mutation or
   o->pressure is out of its range (NaN included), naming it. */
kt_status kt_swap_search(const kt_swap_model *m, kt_swap_search_kind kind,
                         const kt_swap_options *o, kt_swap_result *r,
                         kt_error *err);
void kt_swap_result_free(kt_swap_result *r);

#ifdef __cplusplus
}
#endif
#endif /* KT_SWAP_H */

/* ======================================================================= */
/*                              IMPLEMENTATION                             */
/* ======================================================================= */
#ifdef KT_IMPLEMENTATION
#ifndef KT_SWAP_IMPLEMENTED
#define KT_SWAP_IMPLEMENTED

/* The header this one builds on, again: if it was first included without
   KT_IMPLEMENTATION, its declarations guard kept it from being re-read
   above, and its implementation would be missing.  Its own guards make
   this a no-op otherwise. */
#include "sched.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------- memory model */

static kt_status kt__swap_nomem(kt_error *err) {
    return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory planning swaps");
}

/* KT_ERR_INVALID for a required pointer argument that is NULL: `what`
   names it, `fn` the call. */
static kt_status kt__swap_null(const char *fn, const char *what,
                               kt_error *err) {
    return kt__fail(err, KT_ERR_INVALID, 0, "%s: no %s (NULL)", fn, what);
}

/* Sums and products of byte counts >= 0 saturate at KT__SWAP_HUGE: int64
   arithmetic would wrap a pool of huge tensors to a small or negative size
   that seems to fit.  A saturated size fits no memory (kt__swap_fits). */
#define KT__SWAP_HUGE INT64_MAX

static int64_t kt__swap_add_sat(int64_t a, int64_t b) {
    return a > KT__SWAP_HUGE - b ? KT__SWAP_HUGE : a + b;
}

static int64_t kt__swap_mul_sat(int64_t a, int64_t b) {
    return a > 0 && b > KT__SWAP_HUGE / a ? KT__SWAP_HUGE : a * b;
}

static int kt__swap_fits(int64_t bytes, int64_t capacity) {
    return bytes < KT__SWAP_HUGE && bytes <= capacity;
}

/* A count of objects grown by `more` (a share of spare bytes, perhaps
   far beyond an int when the memory is huge): converted only once
   clamped, the conversion of a double outside int being undefined.  The
   caller clamps it to the class's tensors after. */
static int kt__swap_cnt_plus(int cnt, double more) {
    double v = (double)cnt + (more > 0 ? more : 0);
    return v >= (double)KT_SWAP_MAX_OBJECTS ? KT_SWAP_MAX_OBJECTS : (int)v;
}

/* Grows *p (of *cap elements of `size` bytes) to hold `need`. */
static int kt__swap_grow(void **p, int *cap, int need, size_t size) {
    int nc;
    void *q;
    if (need <= *cap) return 1;
    nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > (1 << 29)) return 0;
        nc *= 2;
    }
    q = KT_REALLOC(*p, (size_t)nc * size);
    if (!q) return 0;
    memset((char *)q + (size_t)*cap * size, 0,
           (size_t)(nc - *cap) * size);
    *p = q;
    *cap = nc;
    return 1;
}

kt_status kt_swap_model_init(kt_swap_model *m, kt_error *err) {
    if (!m) return kt__swap_null("kt_swap_model_init", "model", err);
    memset(m, 0, sizeof *m);
    m->h2d_bw = m->d2h_bw = KT_SWAP_HOST_BW;
    m->use_first = (int *)kt__calloc(1, sizeof(int));
    if (!m->use_first) return kt__swap_nomem(err);
    kt__ok(err);
    return KT_OK;
}

/* Grows the per-tensor arrays together. */
static int kt__swap_grow_tensors(kt_swap_model *m, int need) {
    int c1 = m->cap_tensors, c2 = c1, c3 = c1, c4 = c1;
    if (!kt__swap_grow((void **)&m->bytes, &c1, need, sizeof(int64_t)) ||
        !kt__swap_grow((void **)&m->on_host, &c2, need, 1) ||
        !kt__swap_grow((void **)&m->keep, &c3, need, 1) ||
        !kt__swap_grow((void **)&m->graph_tensor, &c4, need, sizeof(int)))
        return 0;
    m->cap_tensors = c1;
    return 1;
}

int kt_swap_model_add_tensor(kt_swap_model *m, int64_t bytes, int on_host,
                             int keep, kt_error *err) {
    int t;
    if (!m) {
        kt__swap_null("kt_swap_model_add_tensor", "model", err);
        return -1;
    }
    t = m->ntensors;
    if (bytes < 0) {
        kt__fail(err, KT_ERR_INVALID, 0, "tensor %d: negative size", t);
        return -1;
    }
    if (!kt__swap_grow_tensors(m, t + 1)) {
        kt__swap_nomem(err);
        return -1;
    }
    m->finished = 0; /* the derived arrays no longer cover every tensor */
    m->bytes[t] = bytes;
    m->on_host[t] = (unsigned char)(on_host != 0);
    m->keep[t] = (unsigned char)(keep != 0);
    m->graph_tensor[t] = -1;
    m->ntensors++;
    kt__ok(err);
    return t;
}

int kt_swap_model_add_op(kt_swap_model *m, double seconds, kt_error *err) {
    int o, c1, c2, *uf;
    if (!m) {
        kt__swap_null("kt_swap_model_add_op", "model", err);
        return -1;
    }
    o = m->nops;
    c1 = c2 = m->cap_ops;
    if (!(seconds >= 0) || seconds > 1e12) {
        kt__fail(err, KT_ERR_INVALID, 0, "op %d: time %g is not a finite "
                 "number of seconds >= 0", o, seconds);
        return -1;
    }
    if (!kt__swap_grow((void **)&m->seconds, &c1, o + 1, sizeof(double)) ||
        !kt__swap_grow((void **)&m->graph_op, &c2, o + 1, sizeof(int))) {
        kt__swap_nomem(err);
        return -1;
    }
    m->cap_ops = c1;
    uf = (int *)KT_REALLOC(m->use_first, ((size_t)o + 2) * sizeof(int));
    if (!uf) {
        kt__swap_nomem(err);
        return -1;
    }
    m->use_first = uf;
    m->finished = 0;
    m->seconds[o] = seconds;
    m->graph_op[o] = -1;
    m->use_first[o + 1] = m->nuses;
    m->nops++;
    kt__ok(err);
    return o;
}

/* Uses and scratch go to the op added last.  (use_first[op] is read
   after this: op -1 on a model without ops is not "the op added last".) */
static kt_status kt__swap_last_op(const kt_swap_model *m, int op,
                                  const char *what, kt_error *err) {
    if (!m) return kt__swap_null("kt_swap_model_add_use/scratch", "model", err);
    if (m->nops == 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "op %d: no op added yet "
                        "(kt_swap_model_add_op first)", op);
    if (op != m->nops - 1)
        return kt__fail(err, KT_ERR_INVALID, 0, "op %d: %s added to the op "
                        "added last (%d)", op, what, m->nops - 1);
    return KT_OK;
}

kt_status kt_swap_model_add_use(kt_swap_model *m, int op, int tensor,
                                int mode, kt_error *err) {
    int i, c1, c2;
    kt_status st = kt__swap_last_op(m, op, "uses are", err);
    if (st != KT_OK) return st;
    c1 = c2 = m->cap_uses;
    if (tensor < 0 || tensor >= m->ntensors)
        return kt__fail(err, KT_ERR_INVALID, 0, "op %d: no tensor %d", op,
                        tensor);
    if (mode < KT_SWAP_READ || mode > (KT_SWAP_READ | KT_SWAP_WRITE))
        return kt__fail(err, KT_ERR_INVALID, 0, "op %d: use mode %d is not "
                        "read, write or both", op, mode);
    m->finished = 0; /* even a merged mode changes the dependencies */
    for (i = m->use_first[op]; i < m->nuses; i++)
        if (m->use[i] == tensor) {
            /* one entry per tensor: a read and a write is an update */
            m->use_mode[i] |= (unsigned char)mode;
            kt__ok(err);
            return KT_OK;
        }
    if (!kt__swap_grow((void **)&m->use, &c1, m->nuses + 1, sizeof(int)) ||
        !kt__swap_grow((void **)&m->use_mode, &c2, m->nuses + 1, 1))
        return kt__swap_nomem(err);
    m->cap_uses = c1;
    m->use[m->nuses] = tensor;
    m->use_mode[m->nuses] = (unsigned char)mode;
    m->nuses++;
    m->use_first[op + 1] = m->nuses;
    kt__ok(err);
    return KT_OK;
}

kt_status kt_swap_model_add_scratch(kt_swap_model *m, int op, int64_t bytes,
                                    kt_error *err) {
    int t;
    /* the op is checked first, even when there is nothing to add */
    kt_status st = kt__swap_last_op(m, op, "scratch is", err);
    if (st != KT_OK) return st;
    if (bytes < 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "op %d: scratch of %lld "
                        "bytes", op, (long long)bytes);
    if (bytes == 0) {
        kt__ok(err);
        return KT_OK;
    }
    t = kt_swap_model_add_tensor(m, bytes, 0, 0, err);
    if (t < 0) return err ? err->status : KT_ERR_INVALID;
    return kt_swap_model_add_use(m, op, t, KT_SWAP_WRITE, err);
}

/* Frees what kt_swap_model_finish derives from the tensors and uses (it
   derives it afresh each time it is called). */
static void kt__swap_model_free_derived(kt_swap_model *m) {
    KT_FREE(m->size);
    KT_FREE(m->size_of);
    KT_FREE(m->param);
    KT_FREE(m->updated);
    KT_FREE(m->dep_first);
    KT_FREE(m->dep);
    KT_FREE(m->succ_first);
    KT_FREE(m->succ);
    m->size = NULL;
    m->size_of = NULL;
    m->param = m->updated = NULL;
    m->dep_first = m->dep = m->succ_first = m->succ = NULL;
}

void kt_swap_model_free(kt_swap_model *m) {
    if (!m) return;
    KT_FREE(m->bytes);
    KT_FREE(m->on_host);
    KT_FREE(m->keep);
    KT_FREE(m->seconds);
    KT_FREE(m->use_first);
    KT_FREE(m->use);
    KT_FREE(m->use_mode);
    KT_FREE(m->graph_tensor);
    KT_FREE(m->graph_op);
    kt__swap_model_free_derived(m);
    memset(m, 0, sizeof *m);
}

static int kt__swap_cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Index of v in the sorted array ts[0..n). */
static int kt__swap_size_index(const int64_t *ts, int n, int64_t v) {
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (ts[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Appends the edge "op a follows op b". */
static int kt__swap_edge(int **edges, int *cap, int *n, int a, int b) {
    if (a == b) return 1;
    if (!kt__swap_grow((void **)edges, cap, 2 * (*n + 1), sizeof(int)))
        return 0;
    (*edges)[2 * *n] = a;
    (*edges)[2 * *n + 1] = b;
    (*n)++;
    return 1;
}

/* Dependencies from the uses in op order: a read follows the last write
   of its tensor; a write follows the previous write and every read since
   (an in-place update waits for the readers of the old value). */
static kt_status kt__swap_derive_deps(kt_swap_model *m, kt_error *err) {
    int nt = m->ntensors, no = m->nops, o, i, cap = 0, n = 0, nreader = 0;
    int *last_write = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    int *reads_first = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    int *reader_op = (int *)kt__calloc((size_t)m->nuses + 1, sizeof(int));
    int *reader_next = (int *)kt__calloc((size_t)m->nuses + 1, sizeof(int));
    int *edges = NULL; /* pairs (op, op it follows) */
    kt_status st = KT_OK;
    if (!last_write || !reads_first || !reader_op || !reader_next) {
        st = kt__swap_nomem(err);
        goto out;
    }
    for (i = 0; i < nt; i++) {
        last_write[i] = -1;
        reads_first[i] = -1; /* a linked list of reads since the last write */
    }
    for (o = 0; o < no; o++) {
        for (i = m->use_first[o]; i < m->use_first[o + 1]; i++) {
            int t = m->use[i], r;
            if ((m->use_mode[i] & KT_SWAP_READ) && last_write[t] < 0 &&
                !m->on_host[t]) {
                st = kt__fail(err, KT_ERR_GRAPH, 0, "op %d reads tensor %d "
                              "before anything writes it and it is not in "
                              "host memory", o, t);
                goto out;
            }
            if (last_write[t] >= 0 &&
                !kt__swap_edge(&edges, &cap, &n, o, last_write[t])) {
                st = kt__swap_nomem(err);
                goto out;
            }
            if (m->use_mode[i] & KT_SWAP_WRITE) {
                for (r = reads_first[t]; r >= 0; r = reader_next[r])
                    if (!kt__swap_edge(&edges, &cap, &n, o, reader_op[r])) {
                        st = kt__swap_nomem(err);
                        goto out;
                    }
                reads_first[t] = -1;
                last_write[t] = o;
            } else {
                reader_op[nreader] = o;
                reader_next[nreader] = reads_first[t];
                reads_first[t] = nreader++;
            }
        }
    }
    m->dep_first = (int *)kt__calloc((size_t)no + 2, sizeof(int));
    m->succ_first = (int *)kt__calloc((size_t)no + 2, sizeof(int));
    m->dep = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    m->succ = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    if (!m->dep_first || !m->succ_first || !m->dep || !m->succ) {
        st = kt__swap_nomem(err);
        goto out;
    }
    for (i = 0; i < n; i++) {
        m->dep_first[edges[2 * i] + 1]++;
        m->succ_first[edges[2 * i + 1] + 1]++;
    }
    for (o = 0; o < no; o++) {
        m->dep_first[o + 1] += m->dep_first[o];
        m->succ_first[o + 1] += m->succ_first[o];
    }
    {
        int *fd = (int *)kt__calloc((size_t)no + 1, sizeof(int));
        int *fs = (int *)kt__calloc((size_t)no + 1, sizeof(int));
        if (!fd || !fs) {
            KT_FREE(fd);
            KT_FREE(fs);
            st = kt__swap_nomem(err);
            goto out;
        }
        for (i = 0; i < n; i++) {
            int a = edges[2 * i], b = edges[2 * i + 1];
            m->dep[m->dep_first[a] + fd[a]++] = b;
            m->succ[m->succ_first[b] + fs[b]++] = a;
        }
        KT_FREE(fd);
        KT_FREE(fs);
    }
out:
    KT_FREE(last_write);
    KT_FREE(reads_first);
    KT_FREE(reader_op);
    KT_FREE(reader_next);
    KT_FREE(edges);
    return st;
}

/* What a caller may set directly (the fields are public): sizes >= 0, op
   times as kt_swap_model_add_op takes them, a host link that moves data.
   Checked by finish and again by every planner: seconds and the link may
   change after finish. */
static kt_status kt__swap_model_values(const kt_swap_model *m,
                                       kt_error *err) {
    int i;
    if (!(m->h2d_bw > 0) || !(m->d2h_bw > 0) || !(m->latency >= 0) ||
        m->h2d_bw > 1e18 || m->d2h_bw > 1e18 || m->latency > 1e6)
        return kt__fail(err, KT_ERR_INVALID, 0, "host link: bandwidths must "
                        "be positive and finite, latency >= 0");
    for (i = 0; i < m->ntensors; i++)
        if (m->bytes[i] < 0)
            return kt__fail(err, KT_ERR_INVALID, 0, "tensor %d: negative "
                            "size %lld", i, (long long)m->bytes[i]);
    for (i = 0; i < m->nops; i++)
        if (!(m->seconds[i] >= 0) || m->seconds[i] > 1e12)
            return kt__fail(err, KT_ERR_INVALID, 0, "op %d: time %g is not a "
                            "finite number of seconds >= 0", i,
                            m->seconds[i]);
    return KT_OK;
}

/* FNV-1a over what kt_swap_model_finish derives from -- sizes, on_host,
   keep and the uses -- so that the planners can tell a model changed
   since (the fields are public) without a copy of it. */
static uint64_t kt__swap_fnv(uint64_t h, const void *data, size_t len) {
    const unsigned char *b = (const unsigned char *)data;
    size_t i;
    for (i = 0; i < len; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

static uint64_t kt__swap_model_hash(const kt_swap_model *m) {
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t nt = (size_t)m->ntensors, nu = (size_t)m->nuses;
    h = kt__swap_fnv(h, m->bytes, nt * sizeof *m->bytes);
    h = kt__swap_fnv(h, m->on_host, nt);
    h = kt__swap_fnv(h, m->keep, nt);
    h = kt__swap_fnv(h, m->use_first, ((size_t)m->nops + 1) * sizeof(int));
    h = kt__swap_fnv(h, m->use, nu * sizeof *m->use);
    return kt__swap_fnv(h, m->use_mode, nu);
}

/* A model every planner can index: finished since its last add (the
   derived arrays cover every tensor, op and use), nothing finish derived
   from changed since (a size: the pool's objects come from TS; on_host or
   keep: the parameters), and usable values. */
static kt_status kt__swap_model_usable(const kt_swap_model *m,
                                       kt_error *err) {
    int t;
    kt_status st;
    if (!m) return kt__fail(err, KT_ERR_INVALID, 0, "no model (NULL)");
    if (!m->finished || !m->size_of || !m->param || !m->dep_first ||
        !m->succ_first)
        return kt__fail(err, KT_ERR_INVALID, 0, "model: not finished: call "
                        "kt_swap_model_finish after adding its tensors, ops "
                        "and uses (and again after adding more)");
    if (m->ntensors != m->seen_tensors || m->nops != m->seen_ops ||
        m->nuses != m->seen_uses)
        return kt__fail(err, KT_ERR_INVALID, 0, "model: %d tensors, %d ops "
                        "and %d uses, kt_swap_model_finish saw %d, %d and "
                        "%d; call it again", m->ntensors, m->nops, m->nuses,
                        m->seen_tensors, m->seen_ops, m->seen_uses);
    if ((st = kt__swap_model_values(m, err)) != KT_OK) return st;
    for (t = 0; t < m->ntensors; t++) {
        int z = m->size_of[t];
        if (m->param[t] != (m->on_host[t] && m->keep[t]))
            return kt__fail(err, KT_ERR_INVALID, 0, "tensor %d: on_host or "
                            "keep changed since kt_swap_model_finish; call "
                            "it again", t);
        if (z >= 0 && (z >= m->nsizes || m->size[z] != m->bytes[t]))
            return kt__fail(err, KT_ERR_INVALID, 0, "tensor %d: %lld bytes, "
                            "kt_swap_model_finish saw %lld; call it again "
                            "after changing sizes", t,
                            (long long)m->bytes[t],
                            (long long)(z < m->nsizes ? m->size[z] : -1));
    }
    if (kt__swap_model_hash(m) != m->seen_hash)
        return kt__fail(err, KT_ERR_INVALID, 0, "model: a tensor's size, "
                        "on_host or keep, or a use, changed since "
                        "kt_swap_model_finish; call it again");
    return KT_OK;
}

/* order[0..nops) names every op of m once (the planners index their
   arrays with it) and, when `deps`, is a schedule: every op after the ops
   it depends on (m->dep: the last writer of each tensor it uses, and for
   a write the readers since) -- the order constraints of the model.
   `what` names the array in the messages. */
static kt_status kt__swap_order_check(const kt_swap_model *m,
                                      const int *order, int deps,
                                      const char *what, kt_error *err) {
    int n = m->nops, i, j;
    int *pos = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    kt_status st = KT_OK;
    if (!pos) return kt__swap_nomem(err);
    for (i = 0; i < n; i++) pos[i] = -1;
    for (i = 0; i < n && st == KT_OK; i++) {
        int o = order[i];
        if (o < 0 || o >= n)
            st = kt__fail(err, KT_ERR_INVALID, 0, "%s: step %d is op %d, not "
                          "one of the model's %d ops", what, i, o, n);
        else if (pos[o] >= 0)
            st = kt__fail(err, KT_ERR_INVALID, 0, "%s: op %d at steps %d and "
                          "%d (every op once)", what, o, pos[o], i);
        else
            pos[o] = i;
    }
    for (i = 0; deps && i < n && st == KT_OK; i++)
        for (j = m->dep_first[i]; j < m->dep_first[i + 1]; j++)
            if (pos[m->dep[j]] > pos[i]) {
                st = kt__fail(err, KT_ERR_INVALID, 0, "%s: op %d (step %d) "
                              "runs before op %d (step %d), which it must "
                              "follow: one writes a tensor the other uses",
                              what, i, pos[i], m->dep[j], pos[m->dep[j]]);
                break;
            }
    KT_FREE(pos);
    return st;
}

/* The device memory of options o: a positive size (the pool, or the
   baselines' budget, must fit in it). */
static kt_status kt__swap_memory_check(int64_t memory, kt_error *err) {
    if (memory <= 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "memory: %lld bytes; give a "
                        "positive size", (long long)memory);
    return KT_OK;
}

kt_status kt_swap_model_finish(kt_swap_model *m, kt_error *err) {
    int nt, i, n = 0;
    int64_t *sizes;
    kt_status st;
    if (!m) return kt__swap_null("kt_swap_model_finish", "model", err);
    nt = m->ntensors;
    m->finished = 0;
    if ((st = kt__swap_model_values(m, err)) != KT_OK) return st;
    kt__swap_model_free_derived(m);
    m->size_of = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    m->param = (unsigned char *)kt__calloc((size_t)nt + 1, 1);
    m->updated = (unsigned char *)kt__calloc((size_t)nt + 1, 1);
    sizes = (int64_t *)kt__calloc((size_t)nt + 1, sizeof(int64_t));
    if (!m->size_of || !m->param || !m->updated || !sizes) {
        KT_FREE(sizes);
        return kt__swap_nomem(err);
    }
    for (i = 0; i < nt; i++) {
        m->size_of[i] = -1;
        m->param[i] = (unsigned char)(m->on_host[i] && m->keep[i]);
    }
    for (i = 0; i < m->nuses; i++) {
        int t = m->use[i];
        if (m->size_of[t] == -1) {
            m->size_of[t] = 0;
            sizes[n++] = m->bytes[t];
        }
        if ((m->use_mode[i] & KT_SWAP_WRITE) && m->param[t]) m->updated[t] = 1;
    }
    qsort(sizes, (size_t)n, sizeof(int64_t), kt__swap_cmp_i64);
    m->nsizes = 0;
    for (i = 0; i < n; i++)
        if (m->nsizes == 0 || sizes[i] != sizes[m->nsizes - 1])
            sizes[m->nsizes++] = sizes[i];
    m->size = sizes;
    for (i = 0; i < nt; i++)
        if (m->size_of[i] == 0)
            m->size_of[i] = kt__swap_size_index(sizes, m->nsizes, m->bytes[i]);
    if (kt__swap_derive_deps(m, err) != KT_OK)
        return err ? err->status : KT_ERR_GRAPH;
    m->seen_tensors = m->ntensors;
    m->seen_ops = m->nops;
    m->seen_uses = m->nuses;
    m->seen_hash = kt__swap_model_hash(m);
    m->finished = 1;
    kt__ok(err);
    return KT_OK;
}

double kt_swap_ideal_seconds(const kt_swap_model *m) {
    double s = 0;
    int o;
    for (o = 0; o < m->nops; o++) s += m->seconds[o];
    return s;
}

static int64_t kt__swap_tensor_bytes(const kt_tensor *x) {
    int64_t b = x->elem_bytes;
    int d;
    for (d = 0; d < x->rank; d++) b *= x->shape[d];
    return b;
}

/* The device whose roofline prices the ops. */
static kt_topology kt__swap_one_device(const kt_topology *t) {
    kt_topology one;
    kt_machine m = kt_machine_default();
    if (t) return *t;
    kt_topology_single(&one, m.peak_flops, m.mem_bw);
    return one;
}

/* The shared part of from_graph and from_plan: tensors of the given sizes,
   ops with the given times, uses from the statements. */
static kt_status kt__swap_model_build(const kt_graph *g, const int64_t *bytes,
                                      const double *seconds,
                                      const int64_t *scratch,
                                      kt_swap_model *m, kt_error *err) {
    int nt = kt_graph_tensor_count(g), no = kt_graph_op_count(g), t, o, j;
    kt_status st = kt_swap_model_init(m, err);
    if (st != KT_OK) return st;
    for (t = 0; t < nt; t++) {
        const kt_tensor *x = kt_graph_tensor(g, t);
        /* inputs too: the data loader puts the next batch where the last
           one was, in device memory while it stays there, else in host
           memory -- outside the step, like the thesis's Data operator */
        int param = x->kind == KT_WEIGHT || x->kind == KT_OPTSTATE ||
                    x->kind == KT_INPUT;
        int id = kt_swap_model_add_tensor(m, bytes[t], param, param, err);
        if (id < 0) return err ? err->status : KT_ERR_INVALID;
        m->graph_tensor[id] = t;
    }
    for (o = 0; o < no; o++) {
        const kt_op *op = kt_graph_op(g, o);
        int id = kt_swap_model_add_op(m, seconds[o], err);
        if (id < 0) return err ? err->status : KT_ERR_INVALID;
        m->graph_op[id] = o;
        for (j = 0; j < op->ninputs; j++)
            if ((st = kt_swap_model_add_use(m, id, op->input[j], KT_SWAP_READ,
                                            err)) != KT_OK)
                return st;
        /* an in-place update's output is also an input: one entry, both */
        if ((st = kt_swap_model_add_use(m, id, op->output, KT_SWAP_WRITE,
                                        err)) != KT_OK)
            return st;
        /* an executor's working buffers: inputs in order, result last */
        for (j = 0; scratch && j <= op->ninputs; j++)
            if ((st = kt_swap_model_add_scratch(
                     m, id, scratch[(size_t)o * (KT_MAX_VARS + 1) + j],
                     err)) != KT_OK)
                return st;
    }
    return kt_swap_model_finish(m, err);
}

kt_status kt_swap_model_from_graph(const kt_graph *g, const kt_topology *t,
                                   kt_swap_model *m, kt_error *err) {
    int nt = kt_graph_tensor_count(g), no = kt_graph_op_count(g), i;
    int64_t *bytes;
    double *secs;
    kt_topology dev;
    kt_status st;
    if (!m) return kt__fail(err, KT_ERR_INVALID, 0, "no model (NULL)");
    memset(m, 0, sizeof *m);
    if ((st = kt__graph_check_final(g, err)) != KT_OK) return st;
    /* the roofline indexes the topology's kinds with its kind map */
    if (t && (st = kt__topology_usable(t, err)) != KT_OK) return st;
    dev = kt__swap_one_device(t);
    bytes = (int64_t *)kt__calloc((size_t)nt + 1, sizeof(int64_t));
    secs = (double *)kt__calloc((size_t)no + 1, sizeof(double));
    if (!bytes || !secs) {
        KT_FREE(bytes);
        KT_FREE(secs);
        return kt__swap_nomem(err);
    }
    for (i = 0; i < nt; i++)
        bytes[i] = kt__swap_tensor_bytes(kt_graph_tensor(g, i));
    for (i = 0; i < no; i++) {
        const kt_op *op = kt_graph_op(g, i);
        kt_range box[KT_MAX_VARS];
        kt_op_var_box(op, box);
        /* the whole op, on device 0 */
        secs[i] = kt__task_seconds(g, op, box, &dev, 0);
    }
    st = kt__swap_model_build(g, bytes, secs, NULL, m, err);
    KT_FREE(bytes);
    KT_FREE(secs);
    if (st != KT_OK) kt_swap_model_free(m);
    return st;
}

/* kt_swap_op_buffers without its checks (the caller has checked the plan
   and the program in full). */
static void kt__swap_op_buffers(const kt_graph *g, const kt_plan *p,
                                const kt_program *prog, int op,
                                int64_t *buf);

/* One device's share of a partitioned step under program prog: tile
   sizes of the fullest device, the slowest sub-operator's time, and with
   `buffers` the executor's working buffers as scratch. */
static kt_status kt__swap_model_program(const kt_graph *g, const kt_plan *p,
                                        const kt_program *prog,
                                        const kt_topology *t, int buffers,
                                        kt_swap_model *m, kt_error *err) {
    int nt = kt_graph_tensor_count(g), no = kt_graph_op_count(g), i;
    int64_t *bytes = (int64_t *)kt__calloc((size_t)nt + 1, sizeof(int64_t));
    double *secs = (double *)kt__calloc((size_t)no + 1, sizeof(double));
    int64_t *scratch = NULL;
    kt_topology dev = kt__swap_one_device(t);
    kt_status st;
    memset(m, 0, sizeof *m);
    if (buffers)
        scratch = (int64_t *)kt__calloc((size_t)no * (KT_MAX_VARS + 1) + 1,
                                        sizeof(int64_t));
    if (!bytes || !secs || (buffers && !scratch)) {
        KT_FREE(bytes);
        KT_FREE(secs);
        KT_FREE(scratch);
        return kt__swap_nomem(err);
    }
    for (i = 0; i < nt; i++) bytes[i] = kt_plan_tensor_bytes(g, p, i);
    /* the slowest device sets the pace of the op */
    for (i = 0; i < prog->ntask; i++) {
        const kt_task *tk = &prog->task[i];
        double s = kt__task_seconds(g, kt_graph_op(g, tk->op), tk->box, &dev,
                                    tk->device);
        if (s > secs[tk->op]) secs[tk->op] = s;
    }
    for (i = 0; buffers && i < no; i++) /* checked by the caller */
        kt__swap_op_buffers(g, p, prog, i,
                            scratch + (size_t)i * (KT_MAX_VARS + 1));
    st = kt__swap_model_build(g, bytes, secs, scratch, m, err);
    KT_FREE(bytes);
    KT_FREE(secs);
    KT_FREE(scratch);
    if (st != KT_OK) kt_swap_model_free(m);
    return st;
}

kt_status kt_swap_model_from_plan(const kt_graph *g, const kt_plan *p,
                                  const kt_topology *t, kt_swap_model *m,
                                  kt_error *err) {
    kt_program prog;
    kt_status st;
    if (!m) return kt__swap_null("kt_swap_model_from_plan", "model", err);
    memset(m, 0, sizeof *m);
    memset(&prog, 0, sizeof prog);
    if (t && (st = kt__topology_usable(t, err)) != KT_OK) return st;
    st = kt_lower(g, p, &prog, err); /* checks the plan against g */
    if (st == KT_OK) st = kt__swap_model_program(g, p, &prog, t, 0, m, err);
    kt_program_free(&prog);
    return st;
}

static int kt__swap_box_inside(const kt_box *in, const kt_box *out, int rank) {
    int d;
    for (d = 0; d < rank; d++)
        if (in->r[d].hi > in->r[d].lo &&
            (in->r[d].lo < out->r[d].lo || in->r[d].hi > out->r[d].hi))
            return 0;
    return 1;
}

static int64_t kt__swap_box_numel(const kt_box *b, int rank) {
    int64_t n = 1;
    int d;
    for (d = 0; d < rank; d++)
        n *= b->r[d].hi > b->r[d].lo ? b->r[d].hi - b->r[d].lo : 0;
    return n;
}

static void kt__swap_op_buffers(const kt_graph *g, const kt_plan *p,
                                const kt_program *prog, int op,
                                int64_t *buf) {
    const kt_op *o = kt_graph_op(g, op);
    const kt_tensor *y = kt_graph_tensor(g, o->output);
    int64_t d, ndev = prog->ndev;
    int j, x, result = 0;
    for (j = 0; j <= KT_MAX_VARS; j++) buf[j] = 0;
    for (j = 0; j < o->ninputs; j++) {
        const kt_tensor *in = kt_graph_tensor(g, o->input[j]);
        int64_t most = 0, n;
        int gather = 0;
        if (o->input[j] == o->output) result = 1; /* an in-place update */
        for (d = 0; d < ndev; d++) {
            kt_box need, tile;
            int empty = 0;
            kt_op_input_box(g, o, j, prog->task[(int64_t)op * ndev + d].box,
                            &need, &empty);
            if (empty || (n = kt__swap_box_numel(&need, in->rank)) == 0)
                continue;
            kt_tiling_device_box(&p->tiling[o->input[j]], in->rank, in->shape,
                                 &p->f, d, &tile, NULL);
            if (!kt__swap_box_inside(&need, &tile, in->rank)) gather = 1;
            if (n * in->elem_bytes > most) most = n * in->elem_bytes;
        }
        buf[j] = gather ? most : 0;
    }
    /* the result goes elsewhere than the tile: transfers read it */
    for (x = prog->xfer_first[op]; x < prog->xfer_first[op + 1]; x++)
        if (prog->xfer[x].role >= o->ninputs) result = 1;
    {
        int64_t most = 0;
        for (d = 0; d < ndev; d++) {
            kt_box ob, tile;
            int64_t n;
            kt_op_output_box(o, prog->task[(int64_t)op * ndev + d].box, &ob);
            kt_tiling_device_box(&p->tiling[o->output], y->rank, y->shape,
                                 &p->f, d, &tile, NULL);
            n = kt__swap_box_numel(&ob, y->rank);
            if (n != kt__swap_box_numel(&tile, y->rank) ||
                (n > 0 && !kt__swap_box_inside(&ob, &tile, y->rank)))
                result = 1;
            if (n * y->elem_bytes > most) most = n * y->elem_bytes;
        }
        buf[o->ninputs] = result ? most : 0;
    }
}

/* What kt__swap_op_buffers reads for op `op`, checked in time linear in
   the op's part of the program (the public function is called once per
   op): the plan's shape and the tilings of the op's tensors, the op's
   tasks and its transfers' range. */
static int kt__swap_op_buffers_ok(const kt_graph *g, const kt_plan *p,
                                  const kt_program *prog, int op) {
    const kt_op *o;
    kt_error e;
    int64_t d, nd = prog->ndev;
    int j;
    if (op < 0 || op >= kt_graph_op_count(g) || !p->tiling ||
        p->ntensors != kt_graph_tensor_count(g) ||
        p->nops != kt_graph_op_count(g) ||
        kt_factors_check(&p->f, &e) != KT_OK ||
        nd != kt_factors_devices(&p->f) || prog->nops != p->nops ||
        (int64_t)prog->ntask != (int64_t)prog->nops * nd || !prog->task ||
        !prog->xfer_first || prog->nxfer < 0 ||
        prog->xfer_first[op] < 0 ||
        prog->xfer_first[op] > prog->xfer_first[op + 1] ||
        prog->xfer_first[op + 1] > prog->nxfer)
        return 0;
    o = kt_graph_op(g, op);
    for (j = 0; j <= o->ninputs; j++) {
        int tt = j < o->ninputs ? o->input[j] : o->output;
        const kt_tensor *x = kt_graph_tensor(g, tt);
        if (kt_tiling_check(&p->tiling[tt], x->name, x->rank, x->shape,
                            &p->f, 0, &e) != KT_OK)
            return 0;
    }
    for (d = 0; d < nd; d++)
        if (prog->task[(int64_t)op * nd + d].op != op) return 0;
    return prog->xfer_first[op + 1] == prog->xfer_first[op] || prog->xfer;
}

void kt_swap_op_buffers(const kt_graph *g, const kt_plan *p,
                        const kt_program *prog, int op, int64_t *buf) {
    int j;
    if (!kt__swap_op_buffers_ok(g, p, prog, op)) {
        for (j = 0; j <= KT_MAX_VARS; j++) buf[j] = 0;
        return;
    }
    kt__swap_op_buffers(g, p, prog, op, buf);
}

kt_status kt_swap_model_from_program(const kt_graph *g, const kt_plan *p,
                                     const kt_program *prog,
                                     const kt_topology *t, kt_swap_model *m,
                                     kt_error *err) {
    kt_status st;
    if (!m || !prog)
        return kt__swap_null("kt_swap_model_from_program",
                             m ? "program" : "model", err);
    memset(m, 0, sizeof *m);
    /* the plan, the program and the topology index the graph's tensors
       and ops, one another's devices and the kinds: each is checked
       before any is read */
    if ((st = kt__plan_check(g, p, err)) != KT_OK) return st;
    if (t && (st = kt__topology_usable(t, err)) != KT_OK) return st;
    if (prog->ndev != kt_factors_devices(&p->f))
        return kt__fail(err, KT_ERR_INVALID, 0, "swap model: the program "
                        "(%d ops on %lld devices) is not the plan's "
                        "(%d ops on %lld)", prog->nops,
                        (long long)prog->ndev, kt_graph_op_count(g),
                        (long long)kt_factors_devices(&p->f));
    if ((st = kt__program_check(g, prog, prog->ndev, err)) != KT_OK)
        return st;
    return kt__swap_model_program(g, p, prog, t, 1, m, err);
}

/* ----------------------------------------------------------- memory pool */

kt_status kt_swap_alloc_init(kt_swap_alloc *a, int n, kt_error *err) {
    if (!a) return kt__swap_null("kt_swap_alloc_init", "pool", err);
    memset(a, 0, sizeof *a);
    if (n < 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "pool: %d sizes; give n >= 0 "
                        "(the model's nsizes)", n);
    a->n = n;
    a->cls = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    a->cnt = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    if (!a->cls || !a->cnt) {
        kt_swap_alloc_free(a);
        return kt__swap_nomem(err);
    }
    kt__ok(err);
    return KT_OK;
}

void kt_swap_alloc_free(kt_swap_alloc *a) {
    if (!a) return;
    KT_FREE(a->cls);
    KT_FREE(a->cnt);
    memset(a, 0, sizeof *a);
}

static void kt__swap_alloc_copy(kt_swap_alloc *dst, const kt_swap_alloc *src) {
    memcpy(dst->cls, src->cls, (size_t)src->n * sizeof(int));
    memcpy(dst->cnt, src->cnt, (size_t)src->n * sizeof(int));
}

static int kt__swap_nclass(const int *cls, int n) {
    return n > 0 ? cls[n - 1] + 1 : 0;
}

/* A class's objects are as big as the largest size mapped to it. */
static int64_t kt__swap_class_bytes(const int64_t *ts, int n, const int *cls,
                                    int c) {
    int i;
    int64_t b = 0;
    for (i = 0; i < n; i++)
        if (cls[i] == c) b = ts[i];
    return b;
}

/* Saturated (KT__SWAP_HUGE when it overflows). */
static int64_t kt__swap_pool_bytes(const int64_t *ts, int n, const int *cls,
                                   const int *cnt) {
    int i;
    int64_t b = 0;
    for (i = 0; i < n; i++)
        if (i == n - 1 || cls[i + 1] != cls[i])
            b = kt__swap_add_sat(b, kt__swap_mul_sat(ts[i], cnt[cls[i]]));
    return b;
}

/* The first i where cls[0..n) does not start at 0 or step by 0 or 1, or
   -1: a valid map's class indices are all below its nclass, so arrays of
   nclass entries can be indexed with them. */
static int kt__swap_cls_bad(const int *cls, int n) {
    int i;
    for (i = 0; i < n; i++)
        if (i == 0 ? cls[0] != 0
                   : cls[i] < cls[i - 1] || cls[i] > cls[i - 1] + 1)
            return i;
    return -1;
}

/* KT_ERR_INVALID naming the first entry of cls[0..n) that makes it no
   class map (`what` names the map in the message). */
static kt_status kt__swap_cls_check(const int *cls, int n, const char *what,
                                    kt_error *err) {
    int i;
    if (n > 0 && !cls)
        return kt__fail(err, KT_ERR_INVALID, 0, "%s: no CLS (NULL)", what);
    if ((i = kt__swap_cls_bad(cls, n)) == 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "%s: CLS[0] = %d, not 0",
                        what, cls[0]);
    if (i > 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "%s: CLS[%d] = %d does not "
                        "follow CLS[%d] by 0 or 1", what, i, cls[i], i - 1);
    return KT_OK;
}

/* The pool's shape against the model (what the planner indexes): the
   model's sizes, a valid CLS, and counts whose total the planner's int
   object numbers hold. */
static kt_status kt__swap_pool_shape(const kt_swap_model *m,
                                     const kt_swap_alloc *a, kt_error *err) {
    int n = m->nsizes, i, nc;
    int64_t objs = 0;
    kt_status st;
    if (a->n != n)
        return kt__fail(err, KT_ERR_INVALID, 0, "pool: %d sizes, the model "
                        "has %d (kt_swap_alloc_init it with the model's "
                        "nsizes)", a->n, n);
    if (n > 0 && (!a->cls || !a->cnt))
        return kt__fail(err, KT_ERR_INVALID, 0, "pool: no CLS or CNT (freed, "
                        "or never initialised)");
    if ((st = kt__swap_cls_check(a->cls, n, "pool", err)) != KT_OK)
        return st;
    nc = kt__swap_nclass(a->cls, n);
    for (i = 0; i < nc; i++) {
        if (a->cnt[i] < 0 || a->cnt[i] > KT_SWAP_MAX_OBJECTS - objs)
            return kt__fail(err, KT_ERR_INVALID, 0, "pool: class %d has %d "
                            "objects; a pool has 0 to %d in all "
                            "(KT_SWAP_MAX_OBJECTS)", i, a->cnt[i],
                            KT_SWAP_MAX_OBJECTS);
        objs += a->cnt[i];
    }
    return KT_OK;
}

static kt_status kt__swap_pool_within(const kt_swap_model *m,
                                      const kt_swap_alloc *a,
                                      int64_t capacity, kt_error *err) {
    int64_t bytes = kt__swap_pool_bytes(m->size, m->nsizes, a->cls, a->cnt);
    if (bytes == KT__SWAP_HUGE)
        return kt__fail(err, KT_ERR_INVALID, 0, "pool: its size overflows 64 "
                        "bits, more than the %lld bytes of memory",
                        (long long)capacity);
    if (bytes > capacity)
        return kt__fail(err, KT_ERR_INVALID, 0, "pool: %lld bytes, more than "
                        "the %lld of memory", (long long)bytes,
                        (long long)capacity);
    return KT_OK;
}

/* kt_swap_class_min on a model and class map already checked. */
static kt_status kt__swap_class_min(const kt_swap_model *m, const int *cls,
                                    int *min_cnt, kt_error *err) {
    int nc = kt__swap_nclass(cls, m->nsizes), o, i;
    int count[64], *cnt = count;
    if (nc > 64 && !(cnt = (int *)kt__calloc((size_t)nc, sizeof(int))))
        return kt__swap_nomem(err);
    for (i = 0; i < nc; i++) min_cnt[i] = cnt[i] = 0;
    /* (a used tensor has a size, and a valid map's classes are < nc) */
    for (o = 0; o < m->nops; o++) {
        for (i = m->use_first[o]; i < m->use_first[o + 1]; i++) {
            int c = cls[m->size_of[m->use[i]]];
            if (++cnt[c] > min_cnt[c]) min_cnt[c] = cnt[c];
        }
        for (i = m->use_first[o]; i < m->use_first[o + 1]; i++)
            cnt[cls[m->size_of[m->use[i]]]] = 0;
    }
    if (cnt != count) KT_FREE(cnt);
    return KT_OK;
}

kt_status kt_swap_class_min(const kt_swap_model *m, const int *cls,
                            int *min_cnt, kt_error *err) {
    kt_status st;
    /* size_of and use_first, the derived arrays it walks, are a finished
       model's; the class indices it writes must stay below nclass */
    if ((st = kt__swap_model_usable(m, err)) != KT_OK ||
        (st = kt__swap_cls_check(cls, m->nsizes, "class map", err)) != KT_OK)
        return st;
    if (m->nsizes > 0 && !min_cnt)
        return kt__fail(err, KT_ERR_INVALID, 0, "class map: no min_cnt "
                        "(NULL)");
    if ((st = kt__swap_class_min(m, cls, min_cnt, err)) == KT_OK) kt__ok(err);
    return st;
}

void kt_swap_cls_repair(int *cls, int n) {
    int i;
    if (n > 0) cls[0] = 0;
    for (i = 1; i < n; i++) {
        if (cls[i] < cls[i - 1]) cls[i] = cls[i - 1];
        if (cls[i] > cls[i - 1] + 1) cls[i] = cls[i - 1] + 1;
    }
}

static int kt__swap_floor_of(const int *min_cnt, int c) {
    return min_cnt && min_cnt[c] > 1 ? min_cnt[c] : 1;
}

/* Can class c give up objects to save bytes?  Not below its floor, and
   not when its objects are of 0 bytes: dropping them saves nothing (and
   the share of bytes per object would divide by 0). */
static int kt__swap_shrinkable(const int64_t *ob, const int *cnt,
                               const int *min_cnt, int c) {
    return ob[c] > 0 && cnt[c] > kt__swap_floor_of(min_cnt, c);
}

/* The sizes ts[0..n) and a class map over them, as the repairs and the
   crossover read them: n >= 0, the map valid (arrays of nclass entries
   are indexed by its classes), no size negative. */
static kt_status kt__swap_sizes_check(const int64_t *ts, int n,
                                      const int *cls, const char *what,
                                      kt_error *err) {
    int i;
    kt_status st;
    if (n < 0 || (n > 0 && !ts))
        return kt__fail(err, KT_ERR_INVALID, 0, "%s: %d sizes%s", what, n,
                        n < 0 ? "" : " and no array of them (NULL)");
    if ((st = kt__swap_cls_check(cls, n, what, err)) != KT_OK) return st;
    for (i = 0; i < n; i++)
        if (ts[i] < 0)
            return kt__fail(err, KT_ERR_INVALID, 0, "%s: size %d is %lld "
                            "bytes", what, i, (long long)ts[i]);
    return KT_OK;
}

kt_status kt_swap_cnt_repair(const int64_t *ts, int n, const int *cls,
                             int *cnt, const int *min_cnt, int64_t capacity,
                             int *fits, kt_error *err) {
    int nc, c, i, guard;
    int64_t objbytes[64], *ob = objbytes, total = 0;
    kt_status st = kt__swap_sizes_check(ts, n, cls, "CNT repair", err);
    if (st != KT_OK) return st;
    if (!fits || (n > 0 && !cnt))
        return kt__fail(err, KT_ERR_INVALID, 0, "CNT repair: no %s (NULL)",
                        fits ? "CNT" : "fits");
    nc = kt__swap_nclass(cls, n);
    if (nc > 64 && !(ob = (int64_t *)kt__calloc((size_t)nc, sizeof(int64_t))))
        return kt__swap_nomem(err);
    for (i = 0; i < n; i++) ob[cls[i]] = ts[i];
    for (c = 0; c < nc; c++) {
        if (cnt[c] < kt__swap_floor_of(min_cnt, c))
            cnt[c] = kt__swap_floor_of(min_cnt, c);
        total = kt__swap_add_sat(total, kt__swap_mul_sat(ob[c], cnt[c]));
    }
    /* thesis 4.4.3: every class gives up the same bytes, i.e. counts fall
       in inverse proportion to the object size, until the pool fits (a
       negative capacity: nothing fits, not even an empty pool) */
    for (guard = 0; capacity >= 0 && !kt__swap_fits(total, capacity) &&
                    guard < 64;
         guard++) {
        int shrinkable = 0;
        int64_t share, excess = total - capacity; /* > 0, no overflow */
        for (c = 0; c < nc; c++)
            shrinkable += kt__swap_shrinkable(ob, cnt, min_cnt, c);
        if (!shrinkable) break;
        share = excess / shrinkable + (excess % shrinkable != 0);
        total = 0;
        for (c = 0; c < nc; c++) {
            int lo = kt__swap_floor_of(min_cnt, c);
            if (kt__swap_shrinkable(ob, cnt, min_cnt, c)) {
                int64_t drop = share / ob[c] + (share % ob[c] != 0);
                cnt[c] = cnt[c] - drop < lo ? lo : (int)(cnt[c] - drop);
            }
            total = kt__swap_add_sat(total, kt__swap_mul_sat(ob[c], cnt[c]));
        }
    }
    if (ob != objbytes) KT_FREE(ob);
    *fits = kt__swap_fits(total, capacity);
    kt__ok(err);
    return KT_OK;
}

/* Objects per size (the thesis's extended CNT): cnt of each size's class. */
static void kt__swap_cnt_extend(const int *cls, const int *cnt, int n,
                                double *ext) {
    int i;
    for (i = 0; i < n; i++) ext[i] = cnt[cls[i]];
}

/* Back from objects per size to objects per class: the average within
   each class, rounded to nearest. */
static void kt__swap_cnt_fold(const int *cls, const double *ext, int n,
                              int *cnt) {
    int i = 0;
    while (i < n) {
        int j = i;
        double sum = 0;
        while (j < n && cls[j] == cls[i]) sum += ext[j++];
        cnt[cls[i]] = (int)floor(sum / (j - i) + 0.5);
        if (cnt[cls[i]] < 1) cnt[cls[i]] = 1;
        i = j;
    }
}

kt_status kt_swap_alloc_crossover(const int64_t *ts, int n,
                                  const kt_swap_alloc *p1,
                                  const kt_swap_alloc *p2, int cr,
                                  const int *min_cnt1, const int *min_cnt2,
                                  int64_t capacity, kt_swap_alloc *c1,
                                  kt_swap_alloc *c2, int *fits,
                                  kt_error *err) {
    const kt_swap_alloc *pool[4];
    double buf[256], *e1 = buf, *e2, *x1, *x2;
    int i, fit1, fit2;
    kt_status st;
    /* the parents' CNT are indexed by their CLS, the children written
       over n sizes */
    pool[0] = p1;
    pool[1] = p2;
    pool[2] = c1;
    pool[3] = c2;
    if (!fits)
        return kt__fail(err, KT_ERR_INVALID, 0, "crossover: no fits (NULL)");
    for (i = 0; i < 4; i++)
        if (!pool[i] || pool[i]->n != n || (n > 0 && (!pool[i]->cls ||
                                                      !pool[i]->cnt)))
            return kt__fail(err, KT_ERR_INVALID, 0, "crossover: %s %d is not "
                            "a pool of the %d sizes", i < 2 ? "parent" :
                            "child", i % 2 + 1, n);
    if ((st = kt__swap_sizes_check(ts, n, p1->cls, "crossover: parent 1",
                                   err)) != KT_OK ||
        (st = kt__swap_cls_check(p2->cls, n, "crossover: parent 2", err)) !=
            KT_OK)
        return st;
    if (n > 64 && !(e1 = (double *)kt__calloc((size_t)n * 4, sizeof(double))))
        return kt__swap_nomem(err);
    e2 = e1 + n;
    x1 = e2 + n;
    x2 = x1 + n;
    if (cr < 0) cr = 0;
    if (cr > n) cr = n;
    kt__swap_cnt_extend(p1->cls, p1->cnt, n, e1);
    kt__swap_cnt_extend(p2->cls, p2->cnt, n, e2);
    for (i = 0; i < n; i++) {
        c1->cls[i] = i < cr ? p2->cls[i] : p1->cls[i];
        c2->cls[i] = i < cr ? p1->cls[i] : p2->cls[i];
        x1[i] = i < cr ? e2[i] : e1[i];
        x2[i] = i < cr ? e1[i] : e2[i];
    }
    kt_swap_cls_repair(c1->cls, n);
    kt_swap_cls_repair(c2->cls, n);
    kt__swap_cnt_fold(c1->cls, x1, n, c1->cnt);
    kt__swap_cnt_fold(c2->cls, x2, n, c2->cnt);
    if (e1 != buf) KT_FREE(e1);
    st = kt_swap_cnt_repair(ts, n, c1->cls, c1->cnt, min_cnt1, capacity,
                            &fit1, err);
    if (st == KT_OK)
        st = kt_swap_cnt_repair(ts, n, c2->cls, c2->cnt, min_cnt2, capacity,
                                &fit2, err);
    if (st == KT_OK) *fits = fit1 + fit2;
    return st;
}

/* kt_swap_alloc_check on a model already checked (the search's every
   evaluation). */
static kt_status kt__swap_alloc_fit(const kt_swap_model *m,
                                    const kt_swap_alloc *a, int64_t capacity,
                                    kt_error *err) {
    int n = m->nsizes, i, nc, *mins;
    kt_status st = kt__swap_pool_shape(m, a, err);
    if (st != KT_OK) return st;
    nc = kt__swap_nclass(a->cls, n);
    mins = (int *)kt__calloc((size_t)nc + 1, sizeof(int));
    if (!mins) return kt__swap_nomem(err);
    if ((st = kt__swap_class_min(m, a->cls, mins, err)) != KT_OK) {
        KT_FREE(mins);
        return st;
    }
    for (i = 0; i < nc; i++)
        if (a->cnt[i] < mins[i]) {
            int need = mins[i];
            KT_FREE(mins);
            return kt__fail(err, KT_ERR_INVALID, 0, "pool: class %d (objects "
                            "of %lld bytes) has %d objects, an op uses %d at "
                            "once", i,
                            (long long)kt__swap_class_bytes(m->size, n, a->cls,
                                                            i),
                            a->cnt[i], need);
        }
    KT_FREE(mins);
    if ((st = kt__swap_pool_within(m, a, capacity, err)) != KT_OK) return st;
    kt__ok(err);
    return KT_OK;
}

kt_status kt_swap_alloc_check(const kt_swap_model *m, const kt_swap_alloc *a,
                              int64_t capacity, kt_error *err) {
    kt_status st = kt__swap_model_usable(m, err);
    if (st != KT_OK) return st;
    if (!a) return kt__swap_null("kt_swap_alloc_check", "pool", err);
    return kt__swap_alloc_fit(m, a, capacity, err);
}

kt_status kt_swap_alloc_minimal(const kt_swap_model *m, kt_swap_alloc *a,
                                int64_t *bytes, kt_error *err) {
    int n, i, j, o, k;
    int *sfirst, *sop, *cnt, *from, *fromcnt, *fill;
    int64_t *best;
    kt_status st = kt__swap_model_usable(m, err);
    if (st != KT_OK || !a || !bytes) {
        if (a) memset(a, 0, sizeof *a);
        return st != KT_OK ? st
                           : kt__swap_null("kt_swap_alloc_minimal",
                                           a ? "bytes" : "pool", err);
    }
    n = m->nsizes;
    /* per size, the ops using tensors of that size (once per use) */
    sfirst = (int *)kt__calloc((size_t)n + 2, sizeof(int));
    sop = (int *)kt__calloc((size_t)m->nuses + 1, sizeof(int));
    cnt = (int *)kt__calloc((size_t)m->nops + 1, sizeof(int));
    best = (int64_t *)kt__calloc((size_t)n + 1, sizeof(int64_t));
    from = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    fromcnt = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    fill = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    st = kt_swap_alloc_init(a, n, err);
    if (st != KT_OK || !sfirst || !sop || !cnt || !best || !from ||
        !fromcnt || !fill) {
        if (st == KT_OK) st = kt__swap_nomem(err);
        goto out;
    }
    for (i = 0; i < m->nuses; i++) sfirst[m->size_of[m->use[i]] + 1]++;
    for (i = 0; i < n; i++) sfirst[i + 1] += sfirst[i];
    for (o = 0; o < m->nops; o++)
        for (i = m->use_first[o]; i < m->use_first[o + 1]; i++) {
            int s = m->size_of[m->use[i]];
            sop[sfirst[s] + fill[s]++] = o;
        }
    /* best[j]: fewest bytes for sizes 0..j-1 split into classes; the last
       class [i..j) costs TS[j-1] times the most of its tensors one op uses.
       Growing j for a fixed i only adds uses, so that maximum is kept
       incrementally. */
    best[0] = 0;
    for (j = 1; j <= n; j++) best[j] = -1;
    for (i = 0; i < n; i++) {
        int mx = 0;
        if (best[i] < 0) continue;
        for (o = 0; o < m->nops; o++) cnt[o] = 0;
        for (j = i; j < n; j++) {
            int64_t c;
            for (k = sfirst[j]; k < sfirst[j + 1]; k++)
                if (++cnt[sop[k]] > mx) mx = cnt[sop[k]];
            c = kt__swap_add_sat(best[i],
                                 kt__swap_mul_sat(m->size[j], (int64_t)mx));
            if (best[j + 1] < 0 || c < best[j + 1]) {
                best[j + 1] = c;
                from[j + 1] = i;
                fromcnt[j + 1] = mx;
            }
        }
    }
    /* walk back over the class boundaries, numbering classes from the end */
    {
        int nc = 0, c;
        for (j = n; j > 0; j = from[j]) nc++;
        c = nc;
        for (j = n; j > 0; j = from[j]) {
            c--;
            for (k = from[j]; k < j; k++) a->cls[k] = c;
            a->cnt[c] = fromcnt[j] > 0 ? fromcnt[j] : 1;
        }
    }
    *bytes = n > 0 ? best[n] : 0;
    if (*bytes == KT__SWAP_HUGE) {
        st = kt__fail(err, KT_ERR_INVALID, 0, "pool: the smallest that can "
                      "run every op overflows 64 bits (tensor sizes too "
                      "large)");
        goto out;
    }
    kt__ok(err);
out:
    KT_FREE(sfirst);
    KT_FREE(sop);
    KT_FREE(cnt);
    KT_FREE(best);
    KT_FREE(from);
    KT_FREE(fromcnt);
    KT_FREE(fill);
    if (st != KT_OK) kt_swap_alloc_free(a);
    return st;
}

/* Counting sort of the tensors by a step key (key[t] < 0: left out):
   first[s]..first[s+1] index list[] for step s. */
static int kt__swap_bucket(const int *key, int nt, int n, int **first,
                           int **list) {
    int t, *fill;
    *first = (int *)kt__calloc((size_t)n + 2, sizeof(int));
    *list = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    fill = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    if (!*first || !*list || !fill) {
        KT_FREE(fill);
        return 0;
    }
    for (t = 0; t < nt; t++)
        if (key[t] >= 0) (*first)[key[t] + 1]++;
    for (t = 0; t < n; t++) (*first)[t + 1] += (*first)[t];
    for (t = 0; t < nt; t++)
        if (key[t] >= 0) (*list)[(*first)[key[t]] + fill[key[t]]++] = t;
    KT_FREE(fill);
    return 1;
}

/* How many tensors of each size are alive at once at most under order
   (NULL: op order): a tensor lives from its first to its last use, kept
   ones to the end of the step, parameters in steady state all along. */
static kt_status kt__swap_peak_counts(const kt_swap_model *m,
                                      const int *order, int steady, int *peak,
                                      kt_error *err) {
    int nt = m->ntensors, n = m->nops, s, i;
    int *first = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    int *last = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    int *cur = (int *)kt__calloc((size_t)m->nsizes + 1, sizeof(int));
    int *bf = NULL, *bl = NULL, *df = NULL, *dl = NULL;
    kt_status st = KT_OK;
    if (!first || !last || !cur) {
        st = kt__swap_nomem(err);
        goto out;
    }
    for (i = 0; i < nt; i++) first[i] = last[i] = -1;
    for (s = 0; s < n; s++) {
        int o = order ? order[s] : s;
        for (i = m->use_first[o]; i < m->use_first[o + 1]; i++) {
            int t = m->use[i];
            if (first[t] < 0) first[t] = s;
            last[t] = s;
        }
    }
    for (i = 0; i < nt; i++) {
        if (first[i] < 0) continue;
        if (m->keep[i]) last[i] = n - 1;
        if (steady && m->param[i]) first[i] = 0;
    }
    if (!kt__swap_bucket(first, nt, n, &bf, &bl) ||
        !kt__swap_bucket(last, nt, n, &df, &dl)) {
        st = kt__swap_nomem(err);
        goto out;
    }
    for (i = 0; i < m->nsizes; i++) peak[i] = 0;
    /* born at s, counted, then those whose last use is s leave */
    for (s = 0; s < n; s++) {
        for (i = bf[s]; i < bf[s + 1]; i++) {
            int z = m->size_of[bl[i]];
            if (++cur[z] > peak[z]) peak[z] = cur[z];
        }
        for (i = df[s]; i < df[s + 1]; i++) cur[m->size_of[dl[i]]]--;
    }
out:
    KT_FREE(first);
    KT_FREE(last);
    KT_FREE(cur);
    KT_FREE(bf);
    KT_FREE(bl);
    KT_FREE(df);
    KT_FREE(dl);
    return st;
}

/* More objects than a class has tensors are never used: caps every
   count there (keeps random pools from holding millions of tiny
   objects). */
static kt_status kt__swap_alloc_clamp(const kt_swap_model *m,
                                      kt_swap_alloc *a, kt_error *err) {
    int n = m->nsizes, nc = kt__swap_nclass(a->cls, n), c, t;
    int ntens[64], *k = ntens;
    if (nc > 64 && !(k = (int *)kt__calloc((size_t)nc, sizeof(int))))
        return kt__swap_nomem(err);
    for (c = 0; c < nc; c++) k[c] = 0;
    for (t = 0; t < m->ntensors; t++)
        if (m->size_of[t] >= 0) k[a->cls[m->size_of[t]]]++;
    for (c = 0; c < nc; c++)
        if (a->cnt[c] > k[c]) a->cnt[c] = k[c] > 0 ? k[c] : 1;
    if (k != ntens) KT_FREE(k);
    return KT_OK;
}

/* Shares the bytes left in `capacity` among the classes of a pool that
   fits, in proportion to each class's demand beyond what it has. */
static kt_status kt__swap_fill(const kt_swap_model *m, kt_swap_alloc *a,
                               const int *peak_per_size, int64_t capacity,
                               kt_error *err) {
    int n = m->nsizes, nc = kt__swap_nclass(a->cls, n), c, i;
    int64_t spare = capacity - kt__swap_pool_bytes(m->size, n, a->cls, a->cnt);
    double demand_total = 0, demand[64], *d = demand;
    if (spare <= 0 || nc == 0) return KT_OK;
    if (nc > 64 && !(d = (double *)kt__calloc((size_t)nc, sizeof(double))))
        return kt__swap_nomem(err);
    for (c = 0; c < nc; c++) d[c] = 0;
    for (i = 0; i < n; i++) d[a->cls[i]] += peak_per_size[i];
    for (c = 0; c < nc; c++) {
        int64_t ob = kt__swap_class_bytes(m->size, n, a->cls, c);
        d[c] = d[c] > a->cnt[c] ? (d[c] - a->cnt[c]) * (double)ob : 0;
        demand_total += d[c];
    }
    if (demand_total > 0)
        for (c = 0; c < nc; c++) {
            int64_t ob = kt__swap_class_bytes(m->size, n, a->cls, c);
            double share = (double)spare * d[c] / demand_total;
            if (ob > 0)
                a->cnt[c] = kt__swap_cnt_plus(a->cnt[c], share / (double)ob);
        }
    if (d != demand) KT_FREE(d);
    return kt__swap_alloc_clamp(m, a, err);
}

kt_status kt_swap_alloc_default(const kt_swap_model *m, const int *order,
                                int steady, int64_t capacity,
                                kt_swap_alloc *a, kt_error *err) {
    int n, i, *peak, *mins, fits = 0;
    int64_t minbytes = 0;
    kt_status st;
    if (!a) return kt__swap_null("kt_swap_alloc_default", "pool", err);
    memset(a, 0, sizeof *a);
    if ((st = kt__swap_model_usable(m, err)) != KT_OK ||
        (st = kt__swap_memory_check(capacity, err)) != KT_OK ||
        (order && (st = kt__swap_order_check(m, order, 1, "order", err)) !=
                      KT_OK))
        return st;
    n = m->nsizes;
    peak = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    mins = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    if (!peak || !mins) {
        KT_FREE(peak);
        KT_FREE(mins);
        return kt__swap_nomem(err);
    }
    st = kt__swap_peak_counts(m, order, steady, peak, err);
    if (st == KT_OK) st = kt_swap_alloc_init(a, n, err);
    if (st == KT_OK) {
        /* one class per size, as many objects as ever live at once */
        for (i = 0; i < n; i++) {
            a->cls[i] = i;
            a->cnt[i] = peak[i] > 0 ? peak[i] : 1;
        }
        st = kt__swap_class_min(m, a->cls, mins, err);
        if (st == KT_OK)
            st = kt_swap_cnt_repair(m->size, n, a->cls, a->cnt, mins,
                                    capacity, &fits, err);
        if (st != KT_OK) {
            kt_swap_alloc_free(a);
        } else if (!fits) {
            kt_swap_alloc_free(a);
            st = kt_swap_alloc_minimal(m, a, &minbytes, err);
            if (st == KT_OK && minbytes > capacity) {
                kt_swap_alloc_free(a);
                st = kt__fail(err, KT_ERR_INVALID, 0, "memory: %lld bytes "
                              "cannot run every op; the smallest pool that "
                              "can is %lld bytes", (long long)capacity,
                              (long long)minbytes);
            } else if (st == KT_OK) {
                st = kt__swap_fill(m, a, peak, capacity, err);
                if (st != KT_OK) kt_swap_alloc_free(a);
            }
        }
    }
    KT_FREE(peak);
    KT_FREE(mins);
    if (st == KT_OK) kt__ok(err);
    return st;
}

/* -------------------------------------------------------------- schedules */

/* One child: head[0..cr), then the ops not in it in tail's order.
   KT_ERR_NOMEM, child unwritten, when out of memory. */
static kt_status kt__swap_cross_one(int n, const int *head, const int *tail,
                                    int cr, int *child, kt_error *err) {
    unsigned char *taken = (unsigned char *)kt__calloc((size_t)n + 1, 1);
    int i, k = 0;
    if (!taken) return kt__swap_nomem(err);
    if (cr > n) cr = n;
    for (i = 0; i < cr; i++) {
        child[k++] = head[i];
        taken[head[i]] = 1;
    }
    for (i = 0; i < n; i++)
        if (!taken[tail[i]]) child[k++] = tail[i];
    KT_FREE(taken);
    return KT_OK;
}

/* s[0..n) is a permutation of 0..n-1 (what cross_one indexes `taken`
   with). */
static kt_status kt__swap_perm_check(int n, const int *s, const char *what,
                                     kt_error *err) {
    unsigned char *seen = (unsigned char *)kt__calloc((size_t)n + 1, 1);
    int i;
    kt_status st = KT_OK;
    if (!seen) return kt__swap_nomem(err);
    for (i = 0; i < n && st == KT_OK; i++) {
        if (s[i] < 0 || s[i] >= n)
            st = kt__fail(err, KT_ERR_INVALID, 0, "%s: step %d is op %d, "
                          "outside 0..%d", what, i, s[i], n - 1);
        else if (seen[s[i]]++)
            st = kt__fail(err, KT_ERR_INVALID, 0, "%s: op %d twice (step %d)",
                          what, s[i], i);
    }
    KT_FREE(seen);
    return st;
}

kt_status kt_swap_schedule_crossover(int n, const int *s1, const int *s2,
                                     int cr, int *child1, int *child2,
                                     kt_error *err) {
    kt_status st;
    if (n < 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "crossover: %d ops", n);
    if (!s1 || !s2 || !child1 || !child2)
        return kt__swap_null("kt_swap_schedule_crossover",
                             !s1 ? "s1" : !s2 ? "s2" : !child1 ? "child1"
                                                               : "child2",
                             err);
    if ((st = kt__swap_perm_check(n, s1, "crossover: s1", err)) != KT_OK ||
        (st = kt__swap_perm_check(n, s2, "crossover: s2", err)) != KT_OK)
        return st;
    if (cr < 0) cr = 0;
    if ((st = kt__swap_cross_one(n, s2, s1, cr, child1, err)) != KT_OK ||
        (st = kt__swap_cross_one(n, s1, s2, cr, child2, err)) != KT_OK)
        return st;
    kt__ok(err);
    return KT_OK;
}

static uint64_t kt__swap_rng(uint64_t *s) { /* xorshift64 */
    uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ULL;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

static double kt__swap_unit(uint64_t *s) {
    return (double)(kt__swap_rng(s) >> 11) / 9007199254740992.0;
}

static int kt__swap_below(uint64_t *s, int n) {
    return n > 0 ? (int)(kt__swap_rng(s) % (uint64_t)n) : 0;
}

/* kt_swap_schedule_mutate on a model and `in` already checked (the
   search's children). */
static kt_status kt__swap_mutate(const kt_swap_model *m, const int *in,
                                 double p, uint64_t *rng, int *out,
                                 kt_error *err) {
    int n = m->nops, i, nready = 0, k;
    int *pos = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    int *indeg = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    int *ready = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    if (!pos || !indeg || !ready) {
        KT_FREE(pos);
        KT_FREE(indeg);
        KT_FREE(ready);
        return kt__swap_nomem(err);
    }
    for (i = 0; i < n; i++) {
        pos[in ? in[i] : i] = i;
        indeg[i] = m->dep_first[i + 1] - m->dep_first[i];
    }
    for (i = 0; i < n; i++)
        if (indeg[i] == 0) ready[nready++] = i;
    for (k = 0; k < n && nready > 0; k++) {
        int pick = 0, op, j;
        if (p > 0 && kt__swap_unit(rng) < p) {
            pick = kt__swap_below(rng, nready); /* a mutation */
        } else {
            for (j = 1; j < nready; j++)
                if (pos[ready[j]] < pos[ready[pick]]) pick = j;
        }
        op = ready[pick];
        ready[pick] = ready[--nready];
        out[k] = op;
        for (j = m->succ_first[op]; j < m->succ_first[op + 1]; j++)
            if (--indeg[m->succ[j]] == 0) ready[nready++] = m->succ[j];
    }
    KT_FREE(pos);
    KT_FREE(indeg);
    KT_FREE(ready);
    if (k < n)
        return kt__fail(err, KT_ERR_INTERNAL, 0, "schedule: the op "
                        "dependencies have a cycle");
    kt__ok(err);
    return KT_OK;
}

kt_status kt_swap_schedule_mutate(const kt_swap_model *m, const int *in,
                                  double p, uint64_t *rng, int *out,
                                  kt_error *err) {
    kt_status st = kt__swap_model_usable(m, err);
    if (st != KT_OK) return st;
    if (!rng)
        return kt__fail(err, KT_ERR_INVALID, 0, "mutate: no random state");
    if (!out) return kt__swap_null("kt_swap_schedule_mutate", "out", err);
    /* `in` is a priority order, not a schedule: any permutation will do */
    if (in && (st = kt__swap_order_check(m, in, 0, "mutate: in", err)) !=
                  KT_OK)
        return st;
    return kt__swap_mutate(m, in, p, rng, out, err);
}

/* --------------------------------------------------------------- planning */

void kt_swap_plan_free(kt_swap_plan *p) {
    if (!p) return;
    KT_FREE(p->order);
    KT_FREE(p->object_bytes);
    KT_FREE(p->initial_tensor);
    KT_FREE(p->initial_object);
    KT_FREE(p->initial_clean);
    KT_FREE(p->action);
    KT_FREE(p->step_first);
    memset(p, 0, sizeof *p);
}

/* The planner's state while it walks the schedule (thesis 4.3.2). */
typedef struct kt__swap_ctx {
    const kt_swap_model *m;
    const int *order;
    int n, steady, recent;
    /* the pool: objects numbered class by class */
    int nobj, nclass;
    int64_t *obj_bytes;
    int *class_first;           /* nclass + 1                              */
    int *obj_tensor;            /* -1: empty                               */
    int *obj_rel_step;          /* the op after which it was emptied (-1)  */
    int *obj_rel_out;           /* the swap-out that emptied it (-1)       */
    int *fq, *fq_head, *fq_len; /* empty objects per class, oldest first   */
    /* tensors */
    int *where;                 /* object, -1: not on the device           */
    unsigned char *dirty;       /* the device copy is newer than the host's */
    unsigned char *start_clean; /* a parameter resident at the start whose
                                   host copy is current then (the step
                                   before ended by swapping it back in) */
    int *host_out;              /* the swap-out that wrote the host copy   */
    int *last_user;             /* step of the last use, -1: none yet      */
    int *pinned;                /* == step: used by the op of that step    */
    int *upos_first, *upos, *cursor; /* the steps using each tensor        */
    int *first_write;           /* the first step writing it (n: none)     */
    /* output */
    kt_swap_action *act;
    int nact, cap;
    int64_t occupied, peak, swapped;
    int fail_step, fail_tensor;
    int dry;                    /* 1: a first pass, whose actions are not kept */
    /* dynamic-memory baselines */
    int64_t budget, used;
    int *last_out_at;           /* GeePS: last swap-out issued after a step */
} kt__swap_ctx;

static int kt__swap_act(kt__swap_ctx *c, kt_swap_action_kind kind, int t,
                        int obj, int step, int after, int wait_out,
                        int wait_self) {
    kt_swap_action *a;
    if (c->dry) return 0; /* only the state the pass leaves matters */
    if (c->nact >= c->cap &&
        !kt__swap_grow((void **)&c->act, &c->cap, c->nact + 1,
                       sizeof(kt_swap_action)))
        return -1;
    a = &c->act[c->nact];
    a->kind = kind;
    a->tensor = t;
    a->object = obj;
    a->step = step;
    a->after_step = after;
    a->wait_out = wait_out;
    a->wait_self = wait_self;
    if (kind == KT_SWAP_IN || kind == KT_SWAP_OUT)
        c->swapped = kt__swap_add_sat(c->swapped, c->m->bytes[t]);
    return c->nact++;
}

static void kt__swap_ctx_free(kt__swap_ctx *c) {
    KT_FREE(c->obj_bytes);
    KT_FREE(c->class_first);
    KT_FREE(c->obj_tensor);
    KT_FREE(c->obj_rel_step);
    KT_FREE(c->obj_rel_out);
    KT_FREE(c->fq);
    KT_FREE(c->fq_head);
    KT_FREE(c->fq_len);
    KT_FREE(c->where);
    KT_FREE(c->dirty);
    KT_FREE(c->start_clean);
    KT_FREE(c->host_out);
    KT_FREE(c->last_user);
    KT_FREE(c->pinned);
    KT_FREE(c->upos_first);
    KT_FREE(c->upos);
    KT_FREE(c->cursor);
    KT_FREE(c->first_write);
    KT_FREE(c->act);
    KT_FREE(c->last_out_at);
}

/* Tensor arrays and the steps that use every tensor under the order. */
static int kt__swap_ctx_tensors(kt__swap_ctx *c, const kt_swap_model *m,
                                const int *order, const kt_swap_options *o) {
    int nt = m->ntensors, n = m->nops, s, i;
    c->m = m;
    c->order = order;
    c->n = n;
    c->steady = !o->cold;
    c->recent = o->recent_steps > 0 ? o->recent_steps : 0;
    c->where = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    c->dirty = (unsigned char *)kt__calloc((size_t)nt + 1, 1);
    c->start_clean = (unsigned char *)kt__calloc((size_t)nt + 1, 1);
    c->host_out = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    c->last_user = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    c->pinned = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    c->upos_first = (int *)kt__calloc((size_t)nt + 2, sizeof(int));
    c->upos = (int *)kt__calloc((size_t)m->nuses + 1, sizeof(int));
    c->cursor = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    c->first_write = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    if (!c->where || !c->dirty || !c->start_clean || !c->host_out ||
        !c->last_user || !c->pinned || !c->upos_first || !c->upos ||
        !c->cursor || !c->first_write)
        return 0;
    for (i = 0; i < nt; i++) c->first_write[i] = n;
    for (i = 0; i < m->nuses; i++) c->upos_first[m->use[i] + 1]++;
    for (i = 0; i < nt; i++) c->upos_first[i + 1] += c->upos_first[i];
    for (s = 0; s < n; s++) { /* steps in order: each list comes sorted */
        int op = order[s];
        for (i = m->use_first[op]; i < m->use_first[op + 1]; i++) {
            int t = m->use[i];
            c->upos[c->upos_first[t] + c->cursor[t]++] = s;
            if ((m->use_mode[i] & KT_SWAP_WRITE) && c->first_write[t] == n)
                c->first_write[t] = s;
        }
    }
    return 1;
}

/* Every tensor back in host memory, nothing used yet: a new pass. */
static void kt__swap_reset_tensors(kt__swap_ctx *c) {
    int t;
    for (t = 0; t < c->m->ntensors; t++) {
        c->where[t] = -1;
        c->dirty[t] = 0;
        c->host_out[t] = -1;
        c->last_user[t] = -1;
        c->pinned[t] = -1;
        c->cursor[t] = c->upos_first[t];
    }
    c->nact = 0;
    c->occupied = c->peak = c->swapped = 0;
    c->used = 0;
}

/* The step of t's next use after the current one; past the end of the
   step: a parameter in steady state is next used in the next step, at
   n + its first use; anything else never (2n + 1). */
static int kt__swap_next_use(const kt__swap_ctx *c, int t) {
    if (c->cursor[t] < c->upos_first[t + 1]) return c->upos[c->cursor[t]];
    if (c->steady && c->m->param[t])
        return c->n + c->upos[c->upos_first[t]];
    return 2 * c->n + 1;
}

static int kt__swap_has_future(const kt__swap_ctx *c, int t) {
    return c->cursor[t] < c->upos_first[t + 1] || c->m->keep[t];
}

/* ------- the pool */

static int kt__swap_pool_init(kt__swap_ctx *c, const kt_swap_alloc *a) {
    const kt_swap_model *m = c->m;
    int n = m->nsizes, k, cl, i;
    c->nclass = kt__swap_nclass(a->cls, n);
    c->nobj = 0;
    for (cl = 0; cl < c->nclass; cl++) c->nobj += a->cnt[cl];
    c->obj_bytes = (int64_t *)kt__calloc((size_t)c->nobj + 1, sizeof(int64_t));
    c->class_first = (int *)kt__calloc((size_t)c->nclass + 2, sizeof(int));
    c->obj_tensor = (int *)kt__calloc((size_t)c->nobj + 1, sizeof(int));
    c->obj_rel_step = (int *)kt__calloc((size_t)c->nobj + 1, sizeof(int));
    c->obj_rel_out = (int *)kt__calloc((size_t)c->nobj + 1, sizeof(int));
    c->fq = (int *)kt__calloc((size_t)c->nobj + 1, sizeof(int));
    c->fq_head = (int *)kt__calloc((size_t)c->nclass + 1, sizeof(int));
    c->fq_len = (int *)kt__calloc((size_t)c->nclass + 1, sizeof(int));
    if (!c->obj_bytes || !c->class_first || !c->obj_tensor ||
        !c->obj_rel_step || !c->obj_rel_out || !c->fq || !c->fq_head ||
        !c->fq_len)
        return 0;
    k = 0;
    for (cl = 0; cl < c->nclass; cl++) {
        int64_t b = kt__swap_class_bytes(m->size, n, a->cls, cl);
        c->class_first[cl] = k;
        for (i = 0; i < a->cnt[cl]; i++) c->obj_bytes[k++] = b;
    }
    c->class_first[c->nclass] = k;
    return 1;
}

static void kt__swap_fq_push(kt__swap_ctx *c, int cl, int o) {
    int size = c->class_first[cl + 1] - c->class_first[cl];
    c->fq[c->class_first[cl] + (c->fq_head[cl] + c->fq_len[cl]) % size] = o;
    c->fq_len[cl]++;
}

static int kt__swap_fq_pop(kt__swap_ctx *c, int cl) {
    int size = c->class_first[cl + 1] - c->class_first[cl], o;
    if (c->fq_len[cl] == 0) return -1;
    o = c->fq[c->class_first[cl] + c->fq_head[cl]];
    c->fq_head[cl] = (c->fq_head[cl] + 1) % size;
    c->fq_len[cl]--;
    return o;
}

/* A parameter resident at the start is newer on the device than its host
   copy when the step updates it, unless the step before ended by swapping
   it back in after its update (start_clean); and it leaves the next step
   that clean when the step ends so. */
static int kt__swap_start_dirty(const kt__swap_ctx *c, int t) {
    return c->m->updated[t] && !c->start_clean[t];
}
static int kt__swap_ends_clean(const kt__swap_ctx *c, int t) {
    return c->m->updated[t] && !c->dirty[t];
}

/* Empties the pool, then puts start[o] (a parameter or -1) in object o;
   the empty objects queue in index order. */
static void kt__swap_pool_reset(kt__swap_ctx *c, const int *start) {
    int o, cl;
    for (cl = 0; cl < c->nclass; cl++) c->fq_head[cl] = c->fq_len[cl] = 0;
    for (cl = 0; cl < c->nclass; cl++)
        for (o = c->class_first[cl]; o < c->class_first[cl + 1]; o++) {
            int t = start ? start[o] : -1;
            c->obj_tensor[o] = t;
            c->obj_rel_step[o] = -1;
            c->obj_rel_out[o] = -1;
            if (t >= 0) {
                c->where[t] = o;
                c->dirty[t] = (unsigned char)kt__swap_start_dirty(c, t);
                c->occupied += c->obj_bytes[o];
            } else {
                kt__swap_fq_push(c, cl, o);
            }
        }
    if (c->occupied > c->peak) c->peak = c->occupied;
}

/* Removes resident t from object o: a copy to the host when the device
   copy is newer and still needed, else a drop (thesis 4.3.2: parameters
   not modified are dropped, not copied back). */
static int kt__swap_evict(kt__swap_ctx *c, int t, int o, int step,
                          int after_floor, int chain) {
    int idx, after = c->last_user[t] > after_floor ? c->last_user[t]
                                                   : after_floor;
    if (c->dirty[t] && kt__swap_has_future(c, t)) {
        idx = kt__swap_act(c, KT_SWAP_OUT, t, o, step, after, chain, -1);
        if (idx < 0) return -2;
        c->host_out[t] = idx;
        c->dirty[t] = 0;
    } else {
        if (kt__swap_act(c, kt__swap_has_future(c, t) ? KT_SWAP_DROP
                                                      : KT_SWAP_FREE,
                         t, o, step, after, -1, -1) < 0)
            return -2;
        idx = -1;
    }
    if (o >= 0) {
        c->obj_tensor[o] = -1;
        c->obj_rel_step[o] = after;
        c->obj_rel_out[o] = idx;
        c->occupied -= c->obj_bytes[o];
    } else {
        c->used -= c->m->bytes[t];
    }
    c->where[t] = -1;
    return idx;
}

/* Belady inside the class (thesis 4.3.2): the resident tensor next used
   furthest in the future; among equals one that needs no copy, then the
   least recently used.  For a swap-in, tensors used by the last `recent`
   ops are passed over when others exist: the swap-in could only start
   once they are released. */
static int kt__swap_victim(const kt__swap_ctx *c, int cl, int step,
                           int for_swap_in) {
    int pass;
    for (pass = 0; pass < 2; pass++) {
        int o, best = -1, bnext = -1, bclean = 0, blast = 0;
        for (o = c->class_first[cl]; o < c->class_first[cl + 1]; o++) {
            int t = c->obj_tensor[o], next, clean;
            if (t < 0 || c->pinned[t] == step) continue;
            if (pass == 0 && for_swap_in && c->recent > 0 &&
                c->last_user[t] >= step - c->recent)
                continue;
            next = kt__swap_next_use(c, t);
            clean = !c->dirty[t];
            if (best < 0 || next > bnext ||
                (next == bnext && (clean > bclean ||
                                   (clean == bclean &&
                                    c->last_user[t] < blast)))) {
                best = o;
                bnext = next;
                bclean = clean;
                blast = c->last_user[t];
            }
        }
        if (best >= 0 || !(for_swap_in && c->recent > 0)) return best;
    }
    return -1;
}

/* An object of class cl for a tensor of the op at `step`: the empty one
   released longest ago, else the victim's.  -1 when every object holds a
   tensor the op uses; -2 out of memory. */
static int kt__swap_take(kt__swap_ctx *c, int cl, int step, int for_swap_in) {
    int o = kt__swap_fq_pop(c, cl), t;
    if (o >= 0) return o;
    o = kt__swap_victim(c, cl, step, for_swap_in);
    if (o < 0) return -1;
    t = c->obj_tensor[o];
    if (kt__swap_evict(c, t, o, step, -1, -1) == -2) return -2;
    return o;
}

/* One walk over the schedule with the pool: returns 1, 0 when an op cannot
   get its tensors, -1 out of memory. */
static int kt__swap_scan(kt__swap_ctx *c, const int *cls) {
    const kt_swap_model *m = c->m;
    int s, i;
    for (s = 0; s < c->n; s++) {
        int op = c->order[s];
        int u0 = m->use_first[op], u1 = m->use_first[op + 1];
        for (i = u0; i < u1; i++) c->pinned[m->use[i]] = s;
        for (i = u0; i < u1; i++) {
            int t = m->use[i], reads = m->use_mode[i] & KT_SWAP_READ, o, a;
            if (c->where[t] >= 0) continue;
            o = kt__swap_take(c, cls[m->size_of[t]], s, reads);
            if (o == -2) return -1;
            if (o < 0) {
                c->fail_step = s;
                c->fail_tensor = t;
                return 0;
            }
            /* the control edges: the object's release, and for a swap-in
               the tensor's own copy to the host */
            a = kt__swap_act(c, reads ? KT_SWAP_IN : KT_SWAP_ALLOC, t, o, s,
                             c->obj_rel_step[o], c->obj_rel_out[o],
                             reads ? c->host_out[t] : -1);
            if (a < 0) return -1;
            c->where[t] = o;
            c->obj_tensor[o] = t;
            c->occupied += c->obj_bytes[o];
        }
        if (c->occupied > c->peak) c->peak = c->occupied;
        for (i = u0; i < u1; i++) {
            int t = m->use[i];
            c->last_user[t] = s;
            c->cursor[t]++;
            if (m->use_mode[i] & KT_SWAP_WRITE) c->dirty[t] = 1;
        }
        /* dead tensors free their objects after the op */
        for (i = u0; i < u1; i++) {
            int t = m->use[i], o = c->where[t];
            if (kt__swap_has_future(c, t)) continue;
            if (kt__swap_evict(c, t, o, s + 1, s, -1) == -2) return -1;
            kt__swap_fq_push(c, cls[m->size_of[t]], o);
        }
    }
    return 1;
}

/* The end of a steady step (thesis 4.3.2 double pass): what is not a
   parameter is discarded, and the objects are brought back to the
   parameters they held at the start, so the next step runs the same
   plan.  Swap-outs first, then the swap-ins they make room for. */
static int kt__swap_restore(kt__swap_ctx *c, const int *start) {
    int o, n = c->n;
    for (o = 0; o < c->nobj; o++) {
        int t = c->obj_tensor[o];
        if (t < 0 || (c->m->param[t] && start[o] == t)) continue;
        if (!c->m->param[t]) { /* the step is over: nothing to keep */
            if (kt__swap_act(c, KT_SWAP_FREE, t, o, n, c->last_user[t], -1,
                             -1) < 0)
                return 0;
            c->obj_tensor[o] = -1;
            c->obj_rel_step[o] = c->last_user[t];
            c->obj_rel_out[o] = -1;
            c->occupied -= c->obj_bytes[o];
            c->where[t] = -1;
            continue;
        }
        if (kt__swap_evict(c, t, o, n, -1, -1) == -2) return 0;
    }
    for (o = 0; o < c->nobj; o++) {
        int t = start[o];
        if (t < 0 || c->obj_tensor[o] == t) continue;
        if (kt__swap_act(c, KT_SWAP_IN, t, o, n, c->obj_rel_step[o],
                         c->obj_rel_out[o], c->host_out[t]) < 0)
            return 0;
        c->obj_tensor[o] = t;
        c->where[t] = o;
        c->occupied += c->obj_bytes[o];
    }
    if (c->occupied > c->peak) c->peak = c->occupied;
    return 1;
}

/* Moves the actions and the pool into a plan. */
static int kt__swap_emit(kt__swap_ctx *c, const int *start, kt_swap_plan *p) {
    int i, k = 0;
    memset(p, 0, sizeof *p);
    p->nsteps = c->n;
    p->order = (int *)kt__calloc((size_t)c->n + 1, sizeof(int));
    p->step_first = (int *)kt__calloc((size_t)c->n + 2, sizeof(int));
    p->object_bytes = (int64_t *)kt__calloc((size_t)c->nobj + 1,
                                            sizeof(int64_t));
    if (!p->order || !p->step_first || !p->object_bytes) return 0;
    memcpy(p->order, c->order, (size_t)c->n * sizeof(int));
    p->nobjects = c->nobj;
    for (i = 0; i < c->nobj; i++) {
        p->object_bytes[i] = c->obj_bytes[i];
        p->pool_bytes += c->obj_bytes[i];
        if (start && start[i] >= 0) p->ninitial++;
    }
    if (c->obj_bytes == NULL) p->pool_bytes = c->budget;
    p->initial_tensor = (int *)kt__calloc((size_t)p->ninitial + 1, sizeof(int));
    p->initial_object = (int *)kt__calloc((size_t)p->ninitial + 1, sizeof(int));
    p->initial_clean = (unsigned char *)kt__calloc((size_t)p->ninitial + 1, 1);
    if (!p->initial_tensor || !p->initial_object || !p->initial_clean)
        return 0;
    for (i = 0; i < c->nobj && start; i++)
        if (start[i] >= 0) {
            p->initial_tensor[k] = start[i];
            p->initial_clean[k] = c->start_clean[start[i]];
            p->initial_object[k++] = i;
        }
    for (i = 0; i < c->nact; i++) p->step_first[c->act[i].step + 1]++;
    for (i = 0; i <= c->n; i++) p->step_first[i + 1] += p->step_first[i];
    p->nactions = c->nact;
    p->action = c->act;
    c->act = NULL;
    c->nact = c->cap = 0;
    p->swapped_bytes = c->swapped;
    p->peak_bytes = c->peak;
    return 1;
}

/* The op that found no room: in a pool, every object of the tensor's
   class held one of the op's tensors; without a pool (ODSwap), the op's
   tensors together did not fit in the memory. */
static kt_status kt__swap_fail_op(const kt__swap_ctx *c, kt_error *err) {
    const kt_swap_model *m = c->m;
    int op = c->order[c->fail_step], t = c->fail_tensor;
    int gop = m->graph_op[op] >= 0 ? m->graph_op[op] : op;
    int gt = m->graph_tensor[t] >= 0 ? m->graph_tensor[t] : t;
    if (!c->obj_bytes)
        return kt__fail(err, KT_ERR_INVALID, 0, "memory: %lld bytes are too "
                        "few: op %d (step %d) cannot fit tensor %d (%lld "
                        "bytes) beside the other tensors it uses",
                        (long long)c->budget, gop, c->fail_step, gt,
                        (long long)m->bytes[t]);
    return kt__fail(err, KT_ERR_INVALID, 0, "op %d (step %d) cannot get an "
                    "object for tensor %d (%lld bytes): every object of its "
                    "class holds a tensor the op uses", gop, c->fail_step, gt,
                    (long long)m->bytes[t]);
}

/* A parameter the steady walk brings back by swapping it in after its
   last update ends the step with a current host copy, so the next step
   starts with one too: the copy out that evicts it before its update
   (the walk took every updated parameter for newer on the device) is a
   drop, and the waits on that copy go.  Only the kinds change: the walk's
   choices, and so the state it ends in, are the same -- every parameter
   taken for clean at the start is clean at the end.  (Walking again with
   the parameters clean moved the victims, and a GA given such plans did
   worse, measured 2026-12-08.) */
static void kt__swap_clean_start(kt__swap_ctx *c, const int *start) {
    const kt_swap_model *m = c->m;
    int o, i, any = 0;
    for (o = 0; o < c->nobj; o++)
        if (start[o] >= 0 && kt__swap_ends_clean(c, start[o]))
            any = c->start_clean[start[o]] = 1;
    if (!any) return;
    for (i = 0; i < c->nact; i++) {
        kt_swap_action *a = &c->act[i];
        if (a->kind == KT_SWAP_OUT && c->start_clean[a->tensor] &&
            a->step <= c->first_write[a->tensor])
            a->kind = KT_SWAP_DROP;
    }
    /* the copies' bytes again (a saturated sum cannot be taken back) */
    c->swapped = 0;
    for (i = 0; i < c->nact; i++)
        if (c->act[i].kind == KT_SWAP_IN || c->act[i].kind == KT_SWAP_OUT)
            c->swapped =
                kt__swap_add_sat(c->swapped, m->bytes[c->act[i].tensor]);
    /* waits name swap-outs: one that became a drop is no wait */
    for (i = 0; i < c->nact; i++) {
        kt_swap_action *a = &c->act[i];
        if (a->wait_out >= 0 && c->act[a->wait_out].kind == KT_SWAP_DROP)
            a->wait_out = -1;
        if (a->wait_self >= 0 && c->act[a->wait_self].kind == KT_SWAP_DROP)
            a->wait_self = -1;
    }
}

/* kt_swap_plan_build with its inputs checked (the search builds a plan
   per evaluation from orders and pools it made). */
static kt_status kt__swap_plan_build(const kt_swap_model *m, const int *order,
                                     const kt_swap_alloc *a,
                                     const kt_swap_options *o,
                                     kt_swap_plan *out, kt_error *err) {
    kt__swap_ctx c;
    int *ident = NULL, *start = NULL, r, i;
    kt_status st = KT_OK;
    memset(&c, 0, sizeof c);
    memset(out, 0, sizeof *out);
    if (!order) {
        ident = (int *)kt__calloc((size_t)m->nops + 1, sizeof(int));
        if (!ident) return kt__swap_nomem(err);
        for (i = 0; i < m->nops; i++) ident[i] = i;
        order = ident;
    }
    if (!kt__swap_ctx_tensors(&c, m, order, o) || !kt__swap_pool_init(&c, a)) {
        st = kt__swap_nomem(err);
        goto out;
    }
    kt__swap_reset_tensors(&c);
    kt__swap_pool_reset(&c, NULL);
    c.dry = c.steady;
    r = kt__swap_scan(&c, a->cls);
    c.dry = 0;
    if (r == 1 && c.steady) {
        /* second pass: from the parameters the first left resident */
        start = (int *)kt__calloc((size_t)c.nobj + 1, sizeof(int));
        if (!start) {
            st = kt__swap_nomem(err);
            goto out;
        }
        for (i = 0; i < c.nobj; i++) {
            int t = c.obj_tensor[i];
            start[i] = t >= 0 && m->param[t] ? t : -1;
        }
        kt__swap_reset_tensors(&c);
        kt__swap_pool_reset(&c, start);
        r = kt__swap_scan(&c, a->cls);
        if (r == 1 && !kt__swap_restore(&c, start)) r = -1;
        if (r == 1) kt__swap_clean_start(&c, start);
    }
    if (r < 0) st = kt__swap_nomem(err);
    else if (r == 0) st = kt__swap_fail_op(&c, err);
    else if (!kt__swap_emit(&c, start, out)) st = kt__swap_nomem(err);
out:
    if (st != KT_OK) kt_swap_plan_free(out);
    else kt__ok(err);
    kt__swap_ctx_free(&c);
    KT_FREE(ident);
    KT_FREE(start);
    return st;
}

kt_status kt_swap_plan_build(const kt_swap_model *m, const int *order,
                             const kt_swap_alloc *a,
                             const kt_swap_options *o, kt_swap_plan *out,
                             kt_error *err) {
    kt_status st;
    if (out) memset(out, 0, sizeof *out);
    if (!a || !o || !out)
        return kt__swap_null("kt_swap_plan_build",
                             !a ? "pool" : !o ? "options" : "plan", err);
    /* the order indexes the ops, the pool's CLS the classes and its CNT
       the objects: all are the model's before the planner reads them */
    if ((st = kt__swap_model_usable(m, err)) != KT_OK ||
        (st = kt__swap_memory_check(o->memory, err)) != KT_OK ||
        (order && (st = kt__swap_order_check(m, order, 1, "order", err)) !=
                      KT_OK) ||
        (st = kt__swap_pool_shape(m, a, err)) != KT_OK ||
        (st = kt__swap_pool_within(m, a, o->memory, err)) != KT_OK)
        return st;
    return kt__swap_plan_build(m, order, a, o, out, err);
}

/* ------- baselines without a pool */

/* A tensor resident under a byte budget (no objects). */
enum { KT__SWAP_RESIDENT = 1 };

static int kt__swap_dyn_place(kt__swap_ctx *c, int t) {
    c->where[t] = KT__SWAP_RESIDENT;
    c->used += c->m->bytes[t];
    if (c->used > c->peak) c->peak = c->used;
    return 1;
}

/* Least recently used resident tensor the op at `step` does not use. */
static int kt__swap_lru(const kt__swap_ctx *c, int step) {
    int t, best = -1;
    for (t = 0; t < c->m->ntensors; t++)
        if (c->where[t] >= 0 && c->pinned[t] != step &&
            (best < 0 || c->last_user[t] < c->last_user[best]))
            best = t;
    return best;
}

/* ODSwap's walk over op order: 1, 0 (does not fit) or -1 (no memory). */
static int kt__swap_od_scan(kt__swap_ctx *c) {
    const kt_swap_model *m = c->m;
    int s, i;
    for (s = 0; s < c->n; s++) {
        int op = c->order[s], u0 = m->use_first[op], u1 = m->use_first[op + 1];
        for (i = u0; i < u1; i++) c->pinned[m->use[i]] = s;
        for (i = u0; i < u1; i++) {
            int t = m->use[i], reads = m->use_mode[i] & KT_SWAP_READ;
            int chain = -1;
            if (c->where[t] >= 0) continue;
            /* on demand: decided when the op is reached, i.e. after the
               previous op; LRU victims until the tensor fits */
            while (m->bytes[t] > c->budget - c->used) { /* no overflow */
                int v = kt__swap_lru(c, s), r;
                if (v < 0) {
                    c->fail_step = s;
                    c->fail_tensor = t;
                    return 0;
                }
                r = kt__swap_evict(c, v, -1, s, s - 1, chain);
                if (r == -2) return -1;
                if (r >= 0) chain = r;
            }
            if (kt__swap_act(c, reads ? KT_SWAP_IN : KT_SWAP_ALLOC, t, -1, s,
                             s - 1, chain, reads ? c->host_out[t] : -1) < 0)
                return -1;
            kt__swap_dyn_place(c, t);
        }
        /* the prefetcher: the next op's inputs, while they fit without
           evicting anything */
        if (s + 1 < c->n) {
            int nx = c->order[s + 1];
            for (i = m->use_first[nx]; i < m->use_first[nx + 1]; i++) {
                int t = m->use[i];
                if (!(m->use_mode[i] & KT_SWAP_READ) || c->where[t] >= 0 ||
                    m->bytes[t] > c->budget - c->used ||
                    (!m->on_host[t] && c->host_out[t] < 0))
                    continue;
                if (kt__swap_act(c, KT_SWAP_IN, t, -1, s + 1, s - 1, -1,
                                 c->host_out[t]) < 0)
                    return -1;
                kt__swap_dyn_place(c, t);
                c->last_user[t] = s;
            }
        }
        for (i = u0; i < u1; i++) {
            int t = m->use[i];
            c->last_user[t] = s;
            c->cursor[t]++;
            if (m->use_mode[i] & KT_SWAP_WRITE) c->dirty[t] = 1;
        }
        for (i = u0; i < u1; i++) {
            int t = m->use[i];
            if (c->where[t] < 0 || kt__swap_has_future(c, t)) continue;
            if (kt__swap_evict(c, t, -1, s + 1, s, -1) == -2) return -1;
        }
    }
    return 1;
}

/* The parameters resident after a pass stay for the next (dynamic). */
static int kt__swap_dyn_keep_params(kt__swap_ctx *c, int **start, int *nstart) {
    int t, k = 0, nt = c->m->ntensors;
    *start = (int *)kt__calloc((size_t)nt + 1, sizeof(int));
    if (!*start) return 0;
    for (t = 0; t < nt; t++)
        if (c->where[t] >= 0 && c->m->param[t]) (*start)[k++] = t;
    *nstart = k;
    return 1;
}

static void kt__swap_dyn_start(kt__swap_ctx *c, const int *start, int nstart) {
    int i;
    for (i = 0; i < nstart; i++) {
        kt__swap_dyn_place(c, start[i]);
        c->dirty[start[i]] = (unsigned char)kt__swap_start_dirty(c, start[i]);
    }
}

static int kt__swap_emit_dyn(kt__swap_ctx *c, const int *start, int nstart,
                             kt_swap_plan *p) {
    int i;
    if (!kt__swap_emit(c, NULL, p)) return 0;
    p->pool_bytes = c->budget;
    KT_FREE(p->initial_tensor);
    KT_FREE(p->initial_object);
    KT_FREE(p->initial_clean);
    p->initial_tensor = (int *)kt__calloc((size_t)nstart + 1, sizeof(int));
    p->initial_object = (int *)kt__calloc((size_t)nstart + 1, sizeof(int));
    p->initial_clean = (unsigned char *)kt__calloc((size_t)nstart + 1, 1);
    if (!p->initial_tensor || !p->initial_object || !p->initial_clean)
        return 0;
    p->ninitial = nstart;
    for (i = 0; i < nstart; i++) {
        p->initial_tensor[i] = start[i];
        p->initial_object[i] = -1;
        p->initial_clean[i] = c->start_clean[start[i]];
    }
    return 1;
}

static int *kt__swap_identity(int n) {
    int *id = (int *)kt__calloc((size_t)n + 1, sizeof(int)), i;
    if (id)
        for (i = 0; i < n; i++) id[i] = i;
    return id;
}

kt_status kt_swap_plan_odswap(const kt_swap_model *m,
                              const kt_swap_options *o, kt_swap_plan *out,
                              kt_error *err) {
    kt__swap_ctx c;
    int *order = NULL, *start = NULL, nstart = 0, r;
    kt_status st = KT_OK;
    if (out) memset(out, 0, sizeof *out);
    if (!o || !out)
        return kt__swap_null("kt_swap_plan_odswap", o ? "plan" : "options",
                             err);
    memset(&c, 0, sizeof c);
    if ((st = kt__swap_model_usable(m, err)) != KT_OK ||
        (st = kt__swap_memory_check(o->memory, err)) != KT_OK)
        return st;
    order = kt__swap_identity(m->nops);
    if (!order || !kt__swap_ctx_tensors(&c, m, order, o)) {
        st = kt__swap_nomem(err);
        goto out;
    }
    c.budget = o->memory;
    kt__swap_reset_tensors(&c);
    r = kt__swap_od_scan(&c);
    if (r == 1 && c.steady) {
        /* the second step, memory as the first left it: the parameters
           resident, each clean or newer than its host copy */
        if (!kt__swap_dyn_keep_params(&c, &start, &nstart)) r = -1;
        else {
            int i;
            for (i = 0; i < nstart; i++)
                c.start_clean[start[i]] =
                    (unsigned char)kt__swap_ends_clean(&c, start[i]);
            kt__swap_reset_tensors(&c);
            kt__swap_dyn_start(&c, start, nstart);
            r = kt__swap_od_scan(&c);
        }
    }
    if (r < 0) st = kt__swap_nomem(err);
    else if (r == 0) st = kt__swap_fail_op(&c, err);
    else if (!kt__swap_emit_dyn(&c, start, nstart, out))
        st = kt__swap_nomem(err);
out:
    if (st != KT_OK) kt_swap_plan_free(out);
    else kt__ok(err);
    kt__swap_ctx_free(&c);
    KT_FREE(order);
    KT_FREE(start);
    return st;
}

/* The most bytes one op uses of tensors not pinned, and that op. */
static int64_t kt__swap_geeps_peak(const kt_swap_model *m,
                                   const unsigned char *pin, int *at) {
    int o, i;
    int64_t peak = 0;
    *at = -1;
    for (o = 0; o < m->nops; o++) {
        int64_t b = 0;
        for (i = m->use_first[o]; i < m->use_first[o + 1]; i++)
            if (!pin[m->use[i]]) b = kt__swap_add_sat(b, m->bytes[m->use[i]]);
        if (b > peak || *at < 0) {
            peak = b;
            *at = o;
        }
    }
    return peak;
}

/* Zhang thesis Algorithm 4: what to pin in device memory.  Returns the
   bytes the placement reserves (pinned data + the double buffer), or -1
   when not even the double buffer fits. */
static int64_t kt__swap_geeps_place(const kt_swap_model *m, int64_t total,
                                    unsigned char *pin) {
    int at, t, i;
    int64_t peak = kt__swap_geeps_peak(m, pin, &at), avail, buffer;
    buffer = kt__swap_mul_sat(2, peak);
    if (!kt__swap_fits(buffer, total)) return -1;
    avail = total - buffer;
    /* first the local data used at the peak: pinning it also shrinks the
       buffer, twice over */
    while (at >= 0) {
        int best = -1, at2;
        int64_t np, dmem;
        for (i = m->use_first[at]; i < m->use_first[at + 1]; i++) {
            int x = m->use[i];
            if (!pin[x] && !m->param[x] &&
                (best < 0 || m->bytes[x] > m->bytes[best]))
                best = x;
        }
        if (best < 0) break;
        pin[best] = 1;
        np = kt__swap_geeps_peak(m, pin, &at2);
        dmem = m->bytes[best] + 2 * (np - peak);
        if (avail < dmem) {
            pin[best] = 0;
            break;
        }
        avail -= dmem;
        peak = np;
        at = at2;
    }
    /* then any local data, then parameters, while they fit */
    for (i = 0; i < 2; i++)
        for (t = 0; t < m->ntensors; t++)
            if (!pin[t] && m->size_of[t] >= 0 && (m->param[t] != 0) == i &&
                avail >= m->bytes[t]) {
                pin[t] = 1;
                avail -= m->bytes[t];
            }
    return total - avail;
}

kt_status kt_swap_plan_geeps(const kt_swap_model *m, const kt_swap_options *o,
                             kt_swap_plan *out, kt_error *err) {
    kt__swap_ctx c;
    int *order = NULL, *start = NULL, nstart = 0, s, i;
    unsigned char *pin = NULL;
    int64_t reserved;
    kt_status st = KT_OK;
    if (out) memset(out, 0, sizeof *out);
    if (!o || !out)
        return kt__swap_null("kt_swap_plan_geeps", o ? "plan" : "options",
                             err);
    memset(&c, 0, sizeof c);
    if ((st = kt__swap_model_usable(m, err)) != KT_OK ||
        (st = kt__swap_memory_check(o->memory, err)) != KT_OK)
        return st;
    order = kt__swap_identity(m->nops);
    pin = (unsigned char *)kt__calloc((size_t)m->ntensors + 1, 1);
    if (!order || !pin || !kt__swap_ctx_tensors(&c, m, order, o) ||
        !(c.last_out_at = (int *)kt__calloc((size_t)m->nops + 1, sizeof(int))) ||
        !(start = (int *)kt__calloc((size_t)m->ntensors + 1, sizeof(int)))) {
        st = kt__swap_nomem(err);
        goto out;
    }
    reserved = kt__swap_geeps_place(m, o->memory, pin);
    if (reserved < 0) {
        int at;
        int64_t peak = kt__swap_geeps_peak(m, pin, &at);
        st = kt__fail(err, KT_ERR_INVALID, 0, "GeePS: op %d uses %lld bytes; "
                      "twice that (its double buffer) does not fit in %lld "
                      "bytes", m->graph_op[at] >= 0 ? m->graph_op[at] : at,
                      (long long)peak, (long long)o->memory);
        goto out;
    }
    c.budget = o->memory;
    kt__swap_reset_tensors(&c);
    for (s = 0; s < m->nops; s++) c.last_out_at[s] = -1;
    /* pinned parameters stay from step to step */
    for (i = 0; i < m->ntensors; i++)
        if (pin[i] && m->param[i] && c.steady) start[nstart++] = i;
    kt__swap_dyn_start(&c, start, nstart);
    for (s = 0; s < c.n; s++) {
        int op = order[s], u0 = m->use_first[op], u1 = m->use_first[op + 1];
        /* buffers for this op: free once the op two back has released
           its own (double buffering) */
        int after = s - 2, wait = s >= 2 ? c.last_out_at[s - 2] : -1;
        for (i = u0; i < u1; i++) {
            int t = m->use[i], reads = m->use_mode[i] & KT_SWAP_READ;
            if (c.where[t] >= 0) continue;
            if (kt__swap_act(&c, reads ? KT_SWAP_IN : KT_SWAP_ALLOC, t, -1, s,
                             pin[t] ? -1 : after, pin[t] ? -1 : wait,
                             reads ? c.host_out[t] : -1) < 0)
                goto nomem;
            c.where[t] = KT__SWAP_RESIDENT;
        }
        for (i = u0; i < u1; i++) {
            int t = m->use[i];
            c.last_user[t] = s;
            c.cursor[t]++;
            if (m->use_mode[i] & KT_SWAP_WRITE) c.dirty[t] = 1;
        }
        /* unpinned data goes back after every op; written data is copied */
        for (i = u0; i < u1; i++) {
            int t = m->use[i], fut = kt__swap_has_future(&c, t), a;
            if (pin[t] && fut) continue;
            if (c.dirty[t] && fut) {
                a = kt__swap_act(&c, KT_SWAP_OUT, t, -1, s + 1, s, -1, -1);
                if (a < 0) goto nomem;
                c.host_out[t] = a;
                c.dirty[t] = 0;
                c.last_out_at[s] = a;
            } else if (kt__swap_act(&c, fut ? KT_SWAP_DROP : KT_SWAP_FREE, t,
                                    -1, s + 1, s, -1, -1) < 0) {
                goto nomem;
            }
            c.where[t] = -1;
        }
    }
    c.peak = reserved;
    if (!kt__swap_emit_dyn(&c, start, nstart, out)) goto nomem;
    out->pool_bytes = reserved;
    goto out;
nomem:
    st = kt__swap_nomem(err);
out:
    if (st != KT_OK) kt_swap_plan_free(out);
    else kt__ok(err);
    kt__swap_ctx_free(&c);
    KT_FREE(order);
    KT_FREE(start);
    KT_FREE(pin);
    return st;
}

/* ------------------------------------------------------------- simulation */

/* A simulation whose arrays are kept from one plan to the next (the GA
   prices thousands of plans; fresh arrays each time cost more than the
   simulation). */
typedef struct kt__swap_simbuf {
    kt_sim sim;
    int cap_task, cap_pred, cap_tidx;
    int *tidx;
} kt__swap_simbuf;

static void kt__swap_simbuf_free(kt__swap_simbuf *b) {
    kt_sim_free(&b->sim);
    KT_FREE(b->tidx);
    memset(b, 0, sizeof *b);
}

static kt_status kt__swap_sim_fill(const kt_swap_model *m,
                                   const kt_swap_plan *p, kt__swap_simbuf *b,
                                   kt_error *err) {
    int n = p->nsteps, i, s, ntask = n, npred = 0, k;
    kt_sim *out = &b->sim;
    if (!kt__swap_grow((void **)&b->tidx, &b->cap_tidx, p->nactions + 1,
                       sizeof(int)))
        return kt__swap_nomem(err);
    for (i = 0; i < p->nactions; i++) {
        const kt_swap_action *a = &p->action[i];
        b->tidx[i] = -1;
        if (a->kind == KT_SWAP_IN || a->kind == KT_SWAP_OUT) {
            b->tidx[i] = ntask++;
            npred += 4; /* its three waits, and the op waiting for it */
        } else if (a->kind == KT_SWAP_ALLOC && a->wait_out >= 0) {
            npred++;
        }
    }
    npred += n;
    if (!kt__swap_grow((void **)&out->task, &b->cap_task, ntask + 1,
                       sizeof(kt_sim_task)) ||
        !kt__swap_grow((void **)&out->pred, &b->cap_pred, npred + 1,
                       sizeof(int)))
        return kt__swap_nomem(err);
    if (!out->busy && !(out->busy = (double *)kt__calloc(1, sizeof(double))))
        return kt__swap_nomem(err);
    /* zeroed: fields sched.h may add later start from 0 */
    memset(out->task, 0, (size_t)ntask * sizeof(kt_sim_task));
    out->ntask = ntask;
    out->ndev = 1;  /* the compute stream                                  */
    out->nlink = 2; /* link 0: swap-in stream, link 1: swap-out stream     */
    k = 0;
    /* the compute stream runs the schedule in order, each op after its
       swap-ins and after the swap-outs that make room for its outputs */
    for (s = 0; s < n; s++) {
        kt_sim_task *t = &out->task[s];
        t->kind = KT_TASK_COMPUTE;
        t->op = p->order[s];
        t->device = 0;
        t->seconds = m->seconds[p->order[s]];
        t->pred_first = k;
        if (s > 0) out->pred[k++] = s - 1;
        for (i = p->step_first[s]; i < p->step_first[s + 1]; i++) {
            const kt_swap_action *a = &p->action[i];
            if (a->kind == KT_SWAP_IN) out->pred[k++] = b->tidx[i];
            else if (a->kind == KT_SWAP_ALLOC && a->wait_out >= 0)
                out->pred[k++] = b->tidx[a->wait_out];
        }
        t->npred = k - t->pred_first;
    }
    /* a copy waits for the op that last used what leaves the object, the
       swap-out that empties it, and its own last copy to the host */
    for (i = 0; i < p->nactions; i++) {
        const kt_swap_action *a = &p->action[i];
        kt_sim_task *t;
        int in = a->kind == KT_SWAP_IN;
        if (b->tidx[i] < 0) continue;
        t = &out->task[b->tidx[i]];
        t->kind = KT_TASK_TRANSFER;
        t->op = a->step < n ? p->order[a->step] : -1;
        t->device = in ? 1 : 2;
        t->src = in ? -1 : 0;
        t->dst = in ? 0 : -1;
        t->bytes = m->bytes[a->tensor];
        t->seconds = m->latency +
                     (double)t->bytes / (in ? m->h2d_bw : m->d2h_bw);
        t->pred_first = k;
        if (a->after_step >= 0) out->pred[k++] = a->after_step;
        if (a->wait_out >= 0 && b->tidx[a->wait_out] >= 0)
            out->pred[k++] = b->tidx[a->wait_out];
        if (a->wait_self >= 0 && b->tidx[a->wait_self] >= 0)
            out->pred[k++] = b->tidx[a->wait_self];
        t->npred = k - t->pred_first;
    }
    kt__ok(err);
    return KT_OK;
}

/* wait_out and wait_self name a swap-out (or -1): the simulator makes its
   task a predecessor. */
static int kt__swap_is_out(const kt_swap_plan *p, int w) {
    return w == -1 ||
           (w >= 0 && w < p->nactions && p->action[w].kind == KT_SWAP_OUT);
}

/* The action's first field out of range, or NULL. */
static const char *kt__swap_action_bad(const kt_swap_model *m,
                                       const kt_swap_plan *p,
                                       const kt_swap_action *a, int s) {
    if (a->step != s) return "step (not the step whose actions hold it)";
    if ((int)a->kind < (int)KT_SWAP_IN || (int)a->kind > (int)KT_SWAP_ALLOC)
        return "kind (not a kt_swap_action_kind)";
    if (a->tensor < 0 || a->tensor >= m->ntensors)
        return "tensor (not one of the model's)";
    if (a->object < -1 || a->object >= p->nobjects)
        return "object (not one of the plan's, or -1)";
    /* negative: at the start (GeePS's s - 2 at step 0 is -2) */
    if (a->after_step >= p->nsteps)
        return "after_step (not a step, or negative)";
    if (!kt__swap_is_out(p, a->wait_out))
        return "wait_out (not a swap-out's action index, or -1)";
    if (!kt__swap_is_out(p, a->wait_self))
        return "wait_self (not a swap-out's action index, or -1)";
    return NULL;
}

/* Plan p is one of model m: every index the simulator (or an executor)
   takes from it -- order, step_first, the actions' tensors, objects,
   steps and waits, the initial residents -- in range.  A plan of another
   model, or one changed by hand, is refused naming the step, action and
   field, instead of being read out of bounds. */
static kt_status kt__swap_plan_check(const kt_swap_model *m,
                                     const kt_swap_plan *p, kt_error *err) {
    int n = m->nops, s, i;
    kt_status st;
    if (!p) return kt__fail(err, KT_ERR_INVALID, 0, "no plan (NULL)");
    if (p->nsteps != n)
        return kt__fail(err, KT_ERR_INVALID, 0, "plan: %d steps, the model "
                        "has %d ops (a plan of another model?)", p->nsteps,
                        n);
    if (!p->order || !p->step_first || (p->nactions > 0 && !p->action))
        return kt__fail(err, KT_ERR_INVALID, 0, "plan: no order, step_first "
                        "or actions (freed, or never built)");
    /* the simulator counts 5 task-graph entries per action in an int */
    if (p->nactions < 0 || p->nactions > (INT_MAX - n - 1) / 5)
        return kt__fail(err, KT_ERR_INVALID, 0, "plan: nactions %d, outside "
                        "0..%d", p->nactions, (INT_MAX - n - 1) / 5);
    if (p->nobjects < 0 || (p->nobjects > 0 && !p->object_bytes))
        return kt__fail(err, KT_ERR_INVALID, 0, "plan: nobjects %d without "
                        "their object_bytes", p->nobjects);
    if (p->ninitial < 0 ||
        (p->ninitial > 0 && (!p->initial_tensor || !p->initial_object)))
        return kt__fail(err, KT_ERR_INVALID, 0, "plan: ninitial %d without "
                        "their tensors and objects", p->ninitial);
    if ((st = kt__swap_order_check(m, p->order, 1, "plan: order", err)) !=
        KT_OK)
        return st;
    if (p->step_first[0] != 0 || p->step_first[n + 1] != p->nactions)
        return kt__fail(err, KT_ERR_INVALID, 0, "plan: step_first runs from "
                        "%d to %d, expected 0 to nactions (%d)",
                        p->step_first[0], p->step_first[n + 1], p->nactions);
    for (s = 0; s <= n; s++)
        if (p->step_first[s + 1] < p->step_first[s])
            return kt__fail(err, KT_ERR_INVALID, 0, "plan: step_first goes "
                            "back at step %d (%d after %d)", s + 1,
                            p->step_first[s + 1], p->step_first[s]);
    for (s = 0; s <= n; s++)
        for (i = p->step_first[s]; i < p->step_first[s + 1]; i++) {
            const kt_swap_action *a = &p->action[i];
            const char *bad = kt__swap_action_bad(m, p, a, s);
            if (bad)
                return kt__fail(err, KT_ERR_INVALID, 0, "plan: step %d, "
                                "action %d (kind %d, tensor %d, object %d, "
                                "step %d, after_step %d, wait_out %d, "
                                "wait_self %d): bad %s", s, i, (int)a->kind,
                                a->tensor, a->object, a->step, a->after_step,
                                a->wait_out, a->wait_self, bad);
        }
    for (i = 0; i < p->ninitial; i++)
        if (p->initial_tensor[i] < 0 || p->initial_tensor[i] >= m->ntensors ||
            p->initial_object[i] < -1 ||
            p->initial_object[i] >= p->nobjects)
            return kt__fail(err, KT_ERR_INVALID, 0, "plan: initial resident "
                            "%d is tensor %d in object %d, outside the "
                            "model's %d tensors or the plan's %d objects", i,
                            p->initial_tensor[i], p->initial_object[i],
                            m->ntensors, p->nobjects);
    return KT_OK;
}

kt_status kt_swap_sim_build(const kt_swap_model *m, const kt_swap_plan *p,
                            kt_sim *out, kt_error *err) {
    kt__swap_simbuf b;
    kt_status st;
    if (!out) return kt__swap_null("kt_swap_sim_build", "kt_sim", err);
    memset(&b, 0, sizeof b);
    memset(out, 0, sizeof *out);
    if ((st = kt__swap_model_usable(m, err)) != KT_OK ||
        (st = kt__swap_plan_check(m, p, err)) != KT_OK)
        return st;
    st = kt__swap_sim_fill(m, p, &b, err);
    KT_FREE(b.tidx);
    if (st != KT_OK) {
        kt_sim_free(&b.sim);
        memset(out, 0, sizeof *out);
        return st;
    }
    *out = b.sim;
    return KT_OK;
}

kt_status kt_swap_simulate(const kt_swap_model *m, const kt_swap_plan *p,
                           double *step_seconds, kt_error *err) {
    kt_sim sim;
    kt_status st;
    if (!step_seconds)
        return kt__swap_null("kt_swap_simulate", "step_seconds", err);
    *step_seconds = 0;
    st = kt_swap_sim_build(m, p, &sim, err);
    if (st != KT_OK) return st;
    st = kt_sim_run(&sim, err);
    *step_seconds = sim.step_seconds;
    kt_sim_free(&sim);
    return st;
}

/* ----------------------------------------------------------------- search */

void kt_swap_result_free(kt_swap_result *r) {
    if (!r) return;
    kt_swap_plan_free(&r->plan);
    kt_swap_alloc_free(&r->alloc);
    memset(r, 0, sizeof *r);
}

/* Simulated step time of schedule + pool; HUGE_VAL when the pool does not
   fit or cannot run some op.  Returns KT_OK or an out-of-memory status. */
static kt_status kt__swap_eval(const kt_swap_model *m, const int *order,
                               const kt_swap_alloc *a,
                               const kt_swap_options *o, double *t,
                               kt__swap_simbuf *sb, kt_error *err) {
    kt_swap_plan p;
    kt_status st;
    *t = HUGE_VAL;
    if (kt__swap_alloc_fit(m, a, o->memory, err) != KT_OK) {
        if (err && err->status == KT_ERR_NOMEM) return KT_ERR_NOMEM;
        kt__ok(err);
        return KT_OK;
    }
    st = kt__swap_plan_build(m, order, a, o, &p, err);
    if (st == KT_ERR_INVALID) {
        kt__ok(err);
        return KT_OK;
    }
    if (st != KT_OK) return st;
    st = kt__swap_sim_fill(m, &p, sb, err);
    if (st == KT_OK) st = kt_sim_run(&sb->sim, err);
    if (st == KT_OK) *t = sb->sim.step_seconds;
    kt_swap_plan_free(&p);
    return st;
}

static double kt__swap_gauss(uint64_t *rng) {
    double u1 = 1.0 - kt__swap_unit(rng), u2 = kt__swap_unit(rng);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Spare bytes shared by the classes with random weights. */
static kt_status kt__swap_random_fill(const kt_swap_model *m,
                                      kt_swap_alloc *a, int64_t capacity,
                                      uint64_t *rng, kt_error *err) {
    int n = m->nsizes, nc = kt__swap_nclass(a->cls, n), c;
    int64_t spare = capacity - kt__swap_pool_bytes(m->size, n, a->cls, a->cnt);
    double w[64], *wt = w, sum = 0;
    if (spare <= 0) return KT_OK;
    if (nc > 64 && !(wt = (double *)kt__calloc((size_t)nc, sizeof(double))))
        return kt__swap_nomem(err);
    for (c = 0; c < nc; c++) sum += (wt[c] = kt__swap_unit(rng));
    for (c = 0; c < nc && sum > 0; c++) {
        int64_t ob = kt__swap_class_bytes(m->size, n, a->cls, c);
        if (ob > 0)
            a->cnt[c] = kt__swap_cnt_plus(
                a->cnt[c], (double)spare * wt[c] / sum / (double)ob);
    }
    if (wt != w) KT_FREE(wt);
    return kt__swap_alloc_clamp(m, a, err);
}

/* Thesis 4.4.3 mutation: each CLS element with probability p moves by one
   (up when equal to its predecessor, else down), shifting those after it;
   the counts follow through the extended CNT; then each count with
   probability p is drawn from a Gaussian around itself; then repair. */
static kt_status kt__swap_alloc_mutate(const kt_swap_model *m,
                                       kt_swap_alloc *a, double p,
                                       int64_t capacity, int *mins,
                                       uint64_t *rng, kt_error *err) {
    int n = m->nsizes, i, j, nc, changed = 0, fits;
    double ext[64], *e = ext;
    kt_status st;
    if (n > 64 && !(e = (double *)kt__calloc((size_t)n, sizeof(double))))
        return kt__swap_nomem(err);
    kt__swap_cnt_extend(a->cls, a->cnt, n, e);
    for (i = 1; i < n; i++)
        if (kt__swap_unit(rng) < p) {
            int d = a->cls[i] == a->cls[i - 1] ? 1 : -1;
            for (j = i; j < n; j++) a->cls[j] += d;
            changed = 1;
        }
    if (changed) kt__swap_cnt_fold(a->cls, e, n, a->cnt);
    nc = kt__swap_nclass(a->cls, n);
    for (i = 0; i < nc; i++)
        if (kt__swap_unit(rng) < p) {
            double sd = a->cnt[i] / 4.0 > 1 ? a->cnt[i] / 4.0 : 1;
            double v = floor(a->cnt[i] + sd * kt__swap_gauss(rng) + 0.5);
            a->cnt[i] = v < 1 ? 1 : v > 1e8 ? 100000000 : (int)v;
        }
    if (e != ext) KT_FREE(e);
    /* (a pool that still does not fit is priced as such by the search) */
    st = kt__swap_alloc_clamp(m, a, err);
    if (st == KT_OK) st = kt__swap_class_min(m, a->cls, mins, err);
    if (st == KT_OK)
        st = kt_swap_cnt_repair(m->size, n, a->cls, a->cnt, mins, capacity,
                                &fits, err);
    return st;
}

static kt_status kt__swap_alloc_random(const kt_swap_model *m,
                                       kt_swap_alloc *a,
                                       const kt_swap_alloc *fallback,
                                       int64_t capacity, int *mins,
                                       uint64_t *rng, kt_error *err) {
    int n = m->nsizes, i;
    kt_status st;
    for (i = 0; i < n; i++)
        a->cls[i] = i == 0 ? 0 : a->cls[i - 1] + (kt__swap_unit(rng) < 0.5);
    if ((st = kt__swap_class_min(m, a->cls, mins, err)) != KT_OK) return st;
    for (i = 0; i < n; i++) a->cnt[i] = mins[i] > 0 ? mins[i] : 1;
    if (kt__swap_pool_bytes(m->size, n, a->cls, a->cnt) > capacity) {
        kt__swap_alloc_copy(a, fallback);
        return KT_OK;
    }
    return kt__swap_random_fill(m, a, capacity, rng, err);
}

/* Is step time t an improvement on the best so far?  Not by rounding: two
   schedules add the same run times in different orders, and a plan that
   swaps must not displace an earlier one that does not for the last bit
   of a sum. */
static int kt__swap_better(double t, double best) {
    return best == HUGE_VAL ? t < best : t < best - 1e-12 * best;
}

/* Softmax survival (thesis Eq. 4.1) on t_norm = (T_best - t) / T_best,
   scaled by `pressure`; the best always survives (elitism, so the search
   never loses its best).  Picks np of the nslot candidates in `cand`
   into `keep`.  A feasible plan's weight is at least DBL_MIN: under a
   high pressure exp() of a plan several times slower than the best
   underflows to 0, the weight of an infeasible plan, and every feasible
   plan must still come before any infeasible one. */
static void kt__swap_select(const double *t, const int *cand, int ncand,
                            int np, double tbest, double pressure,
                            uint64_t *rng, int *keep, double *w) {
    int i, k, best = 0;
    for (i = 1; i < ncand; i++)
        if (t[cand[i]] < t[cand[best]]) best = i;
    for (i = 0; i < ncand; i++) {
        w[i] = 0;
        if (t[cand[i]] < HUGE_VAL) {
            w[i] = exp(pressure * (tbest - t[cand[i]]) / tbest);
            if (w[i] < DBL_MIN) w[i] = DBL_MIN;
        }
    }
    keep[0] = cand[best];
    w[best] = -1;
    for (k = 1; k < np; k++) {
        double sum = 0, r;
        int pick = -1;
        for (i = 0; i < ncand; i++)
            if (w[i] > 0) sum += w[i];
        if (sum > 0) {
            r = kt__swap_unit(rng) * sum;
            for (i = 0; i < ncand; i++)
                if (w[i] > 0) {
                    pick = i;
                    if ((r -= w[i]) < 0) break;
                }
        } else { /* only infeasible ones left: any, at random */
            int left = 0, nth;
            for (i = 0; i < ncand; i++) left += w[i] == 0;
            nth = left > 0 ? kt__swap_below(rng, left) : -1;
            for (i = 0; i < ncand && pick < 0; i++)
                if (w[i] == 0 && nth-- == 0) pick = i;
        }
        if (pick < 0) break;
        keep[k] = cand[pick];
        w[pick] = -1;
    }
}

typedef struct kt__swap_ga {
    const kt_swap_model *m;
    const kt_swap_options *o;
    int n, nsz;              /* ops, size classes                     */
    int np, npairs, nslot;   /* population, pairs bred, slots         */
    double mutation, pressure;
    uint64_t rng;
    int *order;              /* nslot * n                             */
    kt_swap_alloc *alloc;    /* nslot                                 */
    double *t;               /* nslot                                 */
    int *pop;                /* np slots of the population            */
    int *cand;               /* parents then children, for selection  */
    int *child;              /* the slots outside the population      */
    int *chosen;             /* selection's pick, np                  */
    unsigned char *in_pop;   /* nslot                                 */
    double *weight;          /* selection's scratch                   */
    int *mins;               /* each size class's least count         */
    kt_swap_alloc minimal;   /* the smallest pool that runs the step  */
    double tbest;            /* the best step found so far            */
    int *best_order;
    kt_swap_alloc best_alloc;
    kt__swap_simbuf sim;
} kt__swap_ga;

static void kt__swap_ga_free(kt__swap_ga *g) {
    int i;
    KT_FREE(g->order);
    for (i = 0; g->alloc && i < g->nslot; i++) kt_swap_alloc_free(&g->alloc[i]);
    KT_FREE(g->alloc);
    KT_FREE(g->t);
    KT_FREE(g->pop);
    KT_FREE(g->cand);
    KT_FREE(g->child);
    KT_FREE(g->chosen);
    KT_FREE(g->in_pop);
    KT_FREE(g->weight);
    KT_FREE(g->mins);
    KT_FREE(g->best_order);
    kt_swap_alloc_free(&g->minimal);
    kt_swap_alloc_free(&g->best_alloc);
    kt__swap_simbuf_free(&g->sim);
}

static int *kt__swap_ga_order(const kt__swap_ga *g, int slot) {
    return g->order + (size_t)slot * (size_t)g->n;
}

/* The options' defaults (population 32, mutation 0.1, pressure 100) and
   every array the search needs, allocated once. */
static kt_status kt__swap_ga_init(kt__swap_ga *g, const kt_swap_model *m,
                                  const kt_swap_options *o, kt_error *err) {
    size_t nslot;
    int i;
    kt_status st = KT_OK;
    memset(g, 0, sizeof *g);
    g->m = m;
    g->o = o;
    g->n = m->nops;
    g->nsz = m->nsizes;
    g->np = o->population > 1 ? o->population : 32;
    g->npairs = (g->np + 1) / 2;
    g->nslot = g->np + 4 * g->npairs;
    g->mutation = o->mutation > 0 ? o->mutation : 0.1;
    g->pressure = o->pressure > 0 ? o->pressure : 100;
    g->rng = o->seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL;
    g->tbest = HUGE_VAL;
    nslot = (size_t)g->nslot;
    g->order = (int *)kt__calloc(nslot * (size_t)g->n + 1, sizeof(int));
    g->alloc = (kt_swap_alloc *)kt__calloc(nslot, sizeof(kt_swap_alloc));
    g->t = (double *)kt__calloc(nslot, sizeof(double));
    g->pop = (int *)kt__calloc(nslot, sizeof(int));
    g->cand = (int *)kt__calloc(nslot, sizeof(int));
    g->child = (int *)kt__calloc(nslot, sizeof(int));
    g->chosen = (int *)kt__calloc(nslot, sizeof(int));
    g->in_pop = (unsigned char *)kt__calloc(nslot, 1);
    g->weight = (double *)kt__calloc(nslot, sizeof(double));
    g->mins = (int *)kt__calloc((size_t)g->nsz + 1, sizeof(int));
    g->best_order = (int *)kt__calloc((size_t)g->n + 1, sizeof(int));
    if (!g->order || !g->alloc || !g->t || !g->pop || !g->cand ||
        !g->child || !g->chosen || !g->in_pop || !g->weight || !g->mins ||
        !g->best_order)
        return kt__swap_nomem(err);
    for (i = 0; i < g->nslot && st == KT_OK; i++)
        st = kt_swap_alloc_init(&g->alloc[i], g->nsz, err);
    if (st == KT_OK) st = kt_swap_alloc_init(&g->best_alloc, g->nsz, err);
    return st;
}

/* Records slot's plan when it beats the best so far. */
static void kt__swap_ga_keep_if_best(kt__swap_ga *g, int slot) {
    if (!kt__swap_better(g->t[slot], g->tbest)) return;
    g->tbest = g->t[slot];
    memcpy(g->best_order, kt__swap_ga_order(g, slot),
           (size_t)g->n * sizeof(int));
    kt__swap_alloc_copy(&g->best_alloc, &g->alloc[slot]);
}

/* Simulates slot's plan into g->t[slot]. */
static kt_status kt__swap_ga_eval(kt__swap_ga *g, int slot, kt_swap_result *r,
                                  kt_error *err) {
    r->evaluations++;
    return kt__swap_eval(g->m, kt__swap_ga_order(g, slot), &g->alloc[slot],
                         g->o, &g->t[slot], &g->sim, err);
}

/* Generation 0 (thesis 4.4.1): the op order with the default pool, the op
   order with the minimal pool filled up to the memory, and the rest
   random schedules with random pools. */
static kt_status kt__swap_ga_first_generation(kt__swap_ga *g,
                                              kt_swap_result *r,
                                              kt_error *err) {
    const kt_swap_model *m = g->m;
    const kt_swap_options *o = g->o;
    kt_swap_alloc def;
    int64_t minbytes;
    int i, k, *peak = (int *)kt__calloc((size_t)g->nsz + 1, sizeof(int));
    kt_status st;
    if (!peak) return kt__swap_nomem(err);
    st = kt_swap_alloc_default(m, NULL, !o->cold, o->memory, &def, err);
    if (st == KT_OK) {
        kt__swap_alloc_copy(&g->alloc[0], &def);
        kt_swap_alloc_free(&def);
        st = kt_swap_alloc_minimal(m, &g->minimal, &minbytes, err);
    }
    if (st == KT_OK) st = kt__swap_peak_counts(m, NULL, !o->cold, peak, err);
    if (st == KT_OK) {
        kt__swap_alloc_copy(&g->alloc[1 % g->np], &g->minimal);
        st = kt__swap_fill(m, &g->alloc[1 % g->np], peak, o->memory, err);
    }
    KT_FREE(peak);
    for (i = 0; i < g->np && st == KT_OK; i++) {
        int *ord = kt__swap_ga_order(g, i);
        g->pop[i] = i;
        if (i < 2 || o->keep_schedule) {
            for (k = 0; k < g->n; k++) ord[k] = k;
        } else {
            st = kt__swap_mutate(m, NULL, 1.0, &g->rng, ord, err);
        }
        if (i >= 2 && st == KT_OK)
            st = kt__swap_alloc_random(m, &g->alloc[i], &g->minimal,
                                       o->memory, g->mins, &g->rng, err);
        if (st == KT_OK) st = kt__swap_ga_eval(g, i, r, err);
    }
    return st;
}

/* Records the population's best and reports the generation's best so
   far, average and worst step over the plans that run. */
static void kt__swap_ga_report(kt__swap_ga *g, int gen, const kt_swap_result *r,
                               double start) {
    double sum = 0, worst = 0;
    int i, nfin = 0;
    for (i = 0; i < g->np; i++) {
        double t = g->t[g->pop[i]];
        kt__swap_ga_keep_if_best(g, g->pop[i]);
        if (t < HUGE_VAL) {
            sum += t;
            nfin++;
            if (t > worst) worst = t;
        }
    }
    if (g->o->progress)
        g->o->progress(g->o->progress_ctx, gen, g->tbest,
                       nfin ? sum / nfin : HUGE_VAL, nfin ? worst : HUGE_VAL,
                       r->evaluations, kt__now() - start);
}

/* Two parents' four children, into slots s[0..3]: their schedules
   crossed (thesis 4.4.2) and their pools crossed (4.4.3), each mutated,
   then paired both ways -- (A,a) (B,b) (A,b) (B,a). */
static kt_status kt__swap_ga_breed(kt__swap_ga *g, int a, int b, const int *s,
                                   kt_error *err) {
    const kt_swap_model *m = g->m;
    const kt_swap_options *o = g->o;
    int n = g->n, nsz = g->nsz, cl, fits;
    int *oa = kt__swap_ga_order(g, s[0]), *ob = kt__swap_ga_order(g, s[1]);
    int *oc = kt__swap_ga_order(g, s[2]), *od = kt__swap_ga_order(g, s[3]);
    int cr = n > 1 ? 1 + kt__swap_below(&g->rng, n - 1) : 0;
    int crm = nsz > 1 ? 1 + kt__swap_below(&g->rng, nsz - 1) : 0;
    kt_status st = KT_OK;
    if (o->keep_schedule) {
        memcpy(oa, kt__swap_ga_order(g, a), (size_t)n * sizeof(int));
        memcpy(ob, kt__swap_ga_order(g, b), (size_t)n * sizeof(int));
    } else {
        /* crossed into slots 2 and 3, mutated into 0 and 1 (the parents
           are permutations: the search made them) */
        st = kt__swap_cross_one(n, kt__swap_ga_order(g, b),
                                kt__swap_ga_order(g, a), cr, oc, err);
        if (st == KT_OK)
            st = kt__swap_cross_one(n, kt__swap_ga_order(g, a),
                                    kt__swap_ga_order(g, b), cr, od, err);
        if (st == KT_OK)
            st = kt__swap_mutate(m, oc, g->mutation, &g->rng, oa, err);
        if (st == KT_OK)
            st = kt__swap_mutate(m, od, g->mutation, &g->rng, ob, err);
    }
    memcpy(oc, oa, (size_t)n * sizeof(int));
    memcpy(od, ob, (size_t)n * sizeof(int));
    if (st != KT_OK) return st;
    /* the mutation repairs against each child's own class minima */
    st = kt_swap_alloc_crossover(m->size, nsz, &g->alloc[a], &g->alloc[b],
                                 crm, NULL, NULL, o->memory, &g->alloc[s[0]],
                                 &g->alloc[s[1]], &fits, err);
    if (st == KT_OK)
        st = kt__swap_alloc_mutate(m, &g->alloc[s[0]], g->mutation, o->memory,
                                   g->mins, &g->rng, err);
    if (st == KT_OK)
        st = kt__swap_alloc_mutate(m, &g->alloc[s[1]], g->mutation, o->memory,
                                   g->mins, &g->rng, err);
    for (cl = 0; cl < nsz; cl++) {
        g->alloc[s[2]].cls[cl] = g->alloc[s[1]].cls[cl];
        g->alloc[s[2]].cnt[cl] = g->alloc[s[1]].cnt[cl];
        g->alloc[s[3]].cls[cl] = g->alloc[s[0]].cls[cl];
        g->alloc[s[3]].cnt[cl] = g->alloc[s[0]].cnt[cl];
    }
    return st;
}

/* One generation: npairs pairs of parents drawn at random breed four
   children each into the slots outside the population; the children are
   simulated, and selection (kt__swap_select) picks the next population
   from parents and children. */
static kt_status kt__swap_ga_next_generation(kt__swap_ga *g, kt_swap_result *r,
                                             kt_error *err) {
    int i, k, c, nc = 4 * g->npairs;
    kt_status st = KT_OK;
    memset(g->in_pop, 0, (size_t)g->nslot);
    for (i = 0; i < g->np; i++) g->in_pop[g->pop[i]] = 1;
    for (i = 0, k = 0; i < g->nslot; i++)
        if (!g->in_pop[i]) g->child[k++] = i;
    for (k = 0; k < g->npairs && st == KT_OK; k++) {
        int a = g->pop[kt__swap_below(&g->rng, g->np)];
        int b = g->pop[kt__swap_below(&g->rng, g->np)];
        st = kt__swap_ga_breed(g, a, b, &g->child[4 * k], err);
    }
    for (c = 0; c < nc && st == KT_OK; c++)
        st = kt__swap_ga_eval(g, g->child[c], r, err);
    if (st != KT_OK) return st;
    for (i = 0; i < g->np; i++) g->cand[i] = g->pop[i];
    for (c = 0; c < nc; c++) g->cand[g->np + c] = g->child[c];
    /* a child better than the best so far is recorded before selection */
    for (c = 0; c < nc; c++) kt__swap_ga_keep_if_best(g, g->child[c]);
    /* t_norm divides by the best time: 1 when there is none, or it is 0
       (ops of no time, nothing swapped) */
    kt__swap_select(g->t, g->cand, g->np + nc, g->np,
                    g->tbest < HUGE_VAL && g->tbest > 0 ? g->tbest : 1,
                    g->pressure, &g->rng, g->chosen, g->weight);
    memcpy(g->pop, g->chosen, (size_t)g->np * sizeof(int));
    return KT_OK;
}

/* A step within rounding of the compute stream alone (kt_swap_ideal_seconds,
   a lower bound: no plan is faster) cannot be improved: the GA stops
   there instead of spending the rest of its budget (a step that fits with
   nothing swapped took the whole 10 s default per memory size). */
static int kt__swap_at_ideal(const kt_swap_model *m, double step) {
    return step <= kt_swap_ideal_seconds(m) * (1 + 1e-9);
}

/* SwapAdvisor's genetic search (thesis 4.4): generations of schedules and
   pools until the generation or time budget ends or a plan reaches the
   ideal step; the best plan found is built into r. */
static kt_status kt__swap_ga_run(const kt_swap_model *m,
                                 const kt_swap_options *o,
                                 kt_swap_result *r, kt_error *err) {
    int gens = o->generations, gen;
    double start = kt__now();
    kt__swap_ga g;
    kt_status st = kt__swap_ga_init(&g, m, o, err);
    if (gens <= 0 && !(o->seconds > 0)) gens = 50;
    if (st == KT_OK) st = kt__swap_ga_first_generation(&g, r, err);
    for (gen = 0; st == KT_OK; gen++) {
        kt__swap_ga_report(&g, gen, r, start);
        r->generations = gen;
        if ((gens > 0 && gen >= gens) ||
            (o->seconds > 0 && kt__now() - start >= o->seconds) ||
            kt__swap_at_ideal(m, g.tbest))
            break;
        st = kt__swap_ga_next_generation(&g, r, err);
    }
    if (st == KT_OK && !(g.tbest < HUGE_VAL))
        st = kt__fail(err, KT_ERR_INVALID, 0, "memory: %lld bytes: no pool "
                      "the search found can run every op",
                      (long long)o->memory);
    if (st == KT_OK)
        st = kt__swap_plan_build(m, g.best_order, &g.best_alloc, o, &r->plan,
                                 err);
    if (st == KT_OK) {
        r->alloc = g.best_alloc;
        memset(&g.best_alloc, 0, sizeof g.best_alloc);
    }
    r->search_seconds = kt__now() - start;
    kt__swap_ga_free(&g);
    return st;
}

kt_status kt_swap_search(const kt_swap_model *m, kt_swap_search_kind kind,
                         const kt_swap_options *o, kt_swap_result *r,
                         kt_error *err) {
    kt_status st;
    if (!r || !o)
        return kt__fail(err, KT_ERR_INVALID, 0, "search: no %s (NULL)",
                        r ? "options" : "result");
    memset(r, 0, sizeof *r);
    if ((st = kt__swap_memory_check(o->memory, err)) != KT_OK ||
        (st = kt__swap_model_usable(m, err)) != KT_OK)
        return st;
    /* the GA's arrays are about 3 populations, its selection quadratic */
    if (kind == KT_SWAP_SEARCH_GA &&
        (o->population < 0 || o->population > KT_SWAP_MAX_POPULATION))
        return kt__fail(err, KT_ERR_INVALID, 0, "search: population %d; give "
                        "0 (the default, 32) up to %d "
                        "(KT_SWAP_MAX_POPULATION)",
                        o->population, KT_SWAP_MAX_POPULATION);
    /* written so that NaN fails too: a NaN rate or pressure would
       otherwise fall back to the default without a word */
    if (kind == KT_SWAP_SEARCH_GA && !(o->mutation >= 0 && o->mutation <= 1))
        return kt__fail(err, KT_ERR_INVALID, 0, "search: mutation %g; give "
                        "a probability from 0 to 1 (0: the default, 0.1)",
                        o->mutation);
    if (kind == KT_SWAP_SEARCH_GA &&
        !(o->pressure >= 0 && o->pressure <= KT_SWAP_MAX_PRESSURE))
        return kt__fail(err, KT_ERR_INVALID, 0, "search: pressure %g; give "
                        "0 (the default, 100) up to %g "
                        "(KT_SWAP_MAX_PRESSURE)", o->pressure,
                        KT_SWAP_MAX_PRESSURE);
    /* (NaN fails: it would end the GA at its first generation) */
    if (kind == KT_SWAP_SEARCH_GA &&
        (!(o->seconds >= 0 && o->seconds < HUGE_VAL) || o->generations < 0))
        return kt__fail(err, KT_ERR_INVALID, 0, "search: a budget of %g "
                        "seconds and %d generations; give finite numbers "
                        ">= 0 (both 0: 50 generations)", o->seconds,
                        o->generations);
    r->ideal_seconds = kt_swap_ideal_seconds(m);
    switch (kind) {
    case KT_SWAP_SEARCH_GA:
        st = kt__swap_ga_run(m, o, r, err);
        break;
    case KT_SWAP_SEARCH_NONE:
        st = kt_swap_alloc_default(m, NULL, !o->cold, o->memory, &r->alloc, err);
        if (st == KT_OK)
            st = kt_swap_plan_build(m, NULL, &r->alloc, o, &r->plan, err);
        r->evaluations = 1;
        break;
    case KT_SWAP_SEARCH_ODSWAP:
        st = kt_swap_plan_odswap(m, o, &r->plan, err);
        break;
    case KT_SWAP_SEARCH_GEEPS:
        st = kt_swap_plan_geeps(m, o, &r->plan, err);
        break;
    default:
        st = kt__fail(err, KT_ERR_INVALID, 0, "search: unknown kind %d",
                      (int)kind);
    }
    if (st == KT_OK) st = kt_swap_simulate(m, &r->plan, &r->step_seconds, err);
    if (st != KT_OK) {
        kt_swap_result_free(r);
        return st;
    }
    r->swapped_bytes = r->plan.swapped_bytes;
    r->peak_bytes = r->plan.peak_bytes;
    kt__ok(err);
    return KT_OK;
}

#endif /* KT_SWAP_IMPLEMENTED */
#endif /* KT_IMPLEMENTATION */
