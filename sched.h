/* sched.h -- ktile part 2: from a plan to what each device does.
                                                     MIT licence, see LICENSE.

   WHAT IT IS FOR
     A plan (tiling.h) says how every tensor is tiled and which index
     variable every operator splits at each cut.  sched.h lowers it into the
     per-device program (SOYBEAN 5, Tofu 6): every operator's sub-operator
     on every device with its share of the index space, and every
     conversion as concrete transfers -- a region of a tensor sent from one
     device to another, plain copies or partial sums to be added -- whose
     bytes add up to exactly what the plan's cost predicts.  It builds
     FlexFlow's task graph of that program on a device topology (compute
     times from a roofline or a measured profile), simulates one step in
     full or as a delta after some tasks change, searches plans by MCMC on
     the simulated time, and holds the gradient-synchronisation models of
     the Zhang thesis (Table 3.4, Eq. 8.3, wait-free backprop, bucket
     merging).

     The MCMC search prices a proposal incrementally (kt_plan_sim): only
     the conversions the proposal changes are lowered again and written
     into the task graph (whose tasks keep their numbers: every op's
     tasks have a slot with room), and the timeline is re-simulated only
     around the changes -- from the first position a change can affect until the run
     rejoins the previous timeline up to a constant, then that timeline,
     moved, up to the next change -- exactly what lowering, building and
     simulating from scratch give.  The timeline is kept once, in blocks
     of positions with a time offset each: a proposal's kept stretches
     are those blocks moved (nothing written per task), and accepting
     splices in what its run simulated.

     Speed on wresnet-152 over 64 devices (369k tasks; README
     "Performance" has the figures, bench/HISTORY.md how each round got
     them): a full simulation takes ~11-15 ms on a shared 2-core Xeon,
     up to 1.5-1.9x that when other jobs load it (each run reads the
     caller's task structs and predecessor lists to see whether the graph
     changed); a delta simulation after a single-operator change 35-45x
     less, because it resumes from a checkpoint and stops where the
     timeline rejoins the previous one moved by a constant.  An MCMC
     proposal with its accept takes ~9 ms there (~110 a second in
     kt_plan_mcmc's chain; the project's target is 10,000): the
     re-lowering of the roles it changes, the task graph updated in
     place (slots grow into the nearest holes), and ~130,000 task starts
     re-simulated before the rejoin (~29,000 with the one-hop
     conversions before 2026-12-07: the collectives' relays spread a
     change over more devices), each setting up its wait state from its
     predecessors in a timeline kept as moved blocks.  An exact delta
     simulation cannot go much further at this granularity: those
     starts alone, at a full run's ~16 ns a start, take ~2 ms, about
     500 proposals a second at most.

   HOW TO USE IT
     #define KT_IMPLEMENTATION in one C file before including it (it
     includes tiling.h itself).  Never put the ktile directory on the
     include path: this header's name would shadow POSIX <sched.h>.

   PUBLIC FUNCTIONS
     lowering    kt_lower kt_lower_on kt_program_count_pairs kt_program_bytes_between
                 kt_pair_bytes_lookup kt_program_free
     topology    kt_topology_parse kt_topology_parse_text
                 kt_topology_load_file kt_topology_single kt_topology_level
                 kt_topology_device_kind kt_topology_find_kind
                 kt_topology_machine
     profiles    kt_profile_parse kt_profile_load_file kt_profile_lookup
                 kt_profile_lookup_kind kt_profile_check_kinds
                 kt_profile_write kt_profile_free
     simulation  kt_sim_build kt_sim_build_ordered kt_schedule_check
                 kt_schedule_parse kt_schedule_load_file
                 kt_sim_run kt_sim_delta kt_sim_timeline kt_sim_invalidate
                 kt_sim_free
     incremental kt_plan_sim_init kt_plan_sim_propose kt_plan_sim_accept
                 kt_plan_sim_timeline kt_plan_sim_free
     search      kt_plan_mcmc
     sync costs  kt_sync_ps_worker kt_sync_ps_server kt_sync_ps_both
                 kt_sync_sfb kt_sync_collective kt_sync_best_method
                 kt_sync_layer_seconds kt_sync_schedule_run
                 kt_sync_schedule_buckets kt_sync_best_bucket
                 kt_sync_schedule_free kt_sync_layers_from_plan

   CONFIGURATION MACROS (define before including)
     KT_MAX_DEVICE_KINDS  16   most device kinds in one topology
     KT_MAX_KIND_RANGES   256  most items (D or D1-D2) in the devices
                               lines of a topology file, so most ranges
                               in its device -> kind map (kept as ranges
                               so that a kt_topology stays a plain value)
     KT_MCMC_BETA_PER_OP  40   kt_plan_mcmc's default beta, per op of
                               the graph: a proposal slower by the
                               fraction x is accepted with probability
                               exp(-beta x), and one move changes a step
                               by about 1/ops of it, so a bigger graph
                               needs a bigger beta (README "Performance"
                               has how it was chosen)
     KT_SIM_MAX_RESOURCES 2^26 most devices plus links in one simulation:
                               a run keeps state for each (16
                               bytes, 32 once kt_sim_delta has been
                               called) whether a task uses it
                               or not, so a kt_sim that declares more
                               is refused with KT_ERR_LIMIT rather than
                               allocating gigabytes it may never touch
     KT_SIM_CHECKPOINT    1024 kt_sim_delta's spacing of checkpoints
                               (in task starts) and block of its shift
                               index: a delta re-simulates about half of
                               it for nothing, and moves every later block
                               by one add; also the size of kt_plan_sim's
                               timeline blocks (28 bytes a position, a
                               whole block even for a small graph), so at
                               most 65536
     and tiling.h's.
*/
#ifndef KT_SCHED_H
#define KT_SCHED_H

#include <stdio.h> /* FILE, for kt_profile_write */

#include "tiling.h"

#ifndef KT_SIM_CHECKPOINT
#define KT_SIM_CHECKPOINT 1024
#endif
#if KT_SIM_CHECKPOINT < 1 || KT_SIM_CHECKPOINT > 65536
#error "KT_SIM_CHECKPOINT must be from 1 to 65536"
#endif
#ifndef KT_MCMC_BETA_PER_OP
#define KT_MCMC_BETA_PER_OP 40.0
#endif
#ifndef KT_SIM_MAX_RESOURCES
#define KT_SIM_MAX_RESOURCES (1 << 26)
#endif
#if KT_SIM_MAX_RESOURCES < 1 || KT_SIM_MAX_RESOURCES > 2147483647
#error "KT_SIM_MAX_RESOURCES must be from 1 to INT_MAX"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- lowering */

typedef enum kt_xfer_kind {
    KT_XFER_COPY = 0, /* dst receives the values                        */
    KT_XFER_REDUCE    /* dst combines the partial results it receives with
                         its own by the op's reducer (+, max, min or *)   */
} kt_xfer_kind;

/* Stages of one conversion's collective: reductions climb the device
   hierarchy (stages 0 .. cuts - 1), sums and fetched values descend it
   (up to 2 * cuts - 1), so a stage fits below this. */
#define KT_XFER_STAGES (2 * KT_MAX_CUTS)
#if KT_XFER_STAGES > 64
#error "KT_MAX_CUTS must be at most 32 (a conversion's stages are a 64-bit set)"
#endif

/* One transfer: `region` of `tensor` sent from device src to dst, as part
   of converting role `role` of operator `op` (an input index, or the
   op's input count for its output).  A conversion is a collective built
   level by level (kt_lower): a transfer may send what the transfers of
   its op and role into its src at lower stages delivered -- and at one
   stage reductions come before copies -- so the executors run a
   conversion's stages in order, and the task graph makes each transfer
   wait for those that bring it data (kt__xfer_feeds).  A relay sends on
   what an earlier stage delivered to it: the input region it received,
   or the sum it stored, not its own tile or result. */
typedef struct kt_transfer {
    int op, role, tensor;
    int64_t src, dst;
    kt_box region;
    int64_t bytes;
    kt_xfer_kind kind;
    int stage; /* 0 .. KT_XFER_STAGES - 1                                */
    int relay; /* 1: src forwards (a copy, stage > 0); 0: its own data    */
} kt_transfer;

/* One sub-operator: op run on `device` over its share of the index space
   (box[v] for every index variable v). */
typedef struct kt_task {
    int op;
    int64_t device;
    kt_range box[KT_MAX_VARS];
} kt_task;

/* The bytes one ordered pair of devices exchanges in a program. */
typedef struct kt_pair_bytes {
    int64_t src, dst, bytes;
} kt_pair_bytes;

/* The per-device program.  Tasks are in operator order, so every device
   runs its sub-operators in the original order (the control dependencies
   of Tofu 6).  An op's transfers are xfer[xfer_first[op] ..
   xfer_first[op+1]): first those of its inputs (before the op runs), then
   those of its output (after).  Reductions of a conversion come before
   its copies. */
typedef struct kt_program {
    int64_t ndev;
    int nops;
    int ntask;
    kt_task *task;
    int nxfer;
    kt_transfer *xfer;
    int *xfer_first;       /* nops + 1 entries                            */
    int64_t total_bytes;   /* sum of all transfers' bytes                 */
    int64_t npairs;        /* ordered device pairs some transfer joins    */
    kt_pair_bytes *pairs;  /* their bytes, sorted by (src, dst), each pair
                              once; NULL until kt_program_count_pairs
                              (a sort of the transfers, which lowering
                              itself does not need)                       */
} kt_program;

/* Lowers plan p of graph g.  Every conversion is a collective built
   level by level over the cuts (cut 1 the slowest level, SOYBEAN 5.1):
   an element a device lacks comes from the nearest holder, entering each
   block of devices that needs it once and passed on inside it (relays);
   partial sums are shared among their roots, reduced onto each root
   innermost level first and the sums broadcast the same way.  Each
   transfer's stage orders it after what it forwards or combines.
   total_bytes equals kt_plan_eval's total.  *out is written whole (also
   on failure, as an empty program): kt_program_free a filled one before
   lowering into it again. */
kt_status kt_lower(const kt_graph *g, const kt_plan *p, kt_program *out,
                   kt_error *err);
/* Fills prog->pairs and npairs (again, if already filled): linear in
   devices plus transfers, where a dense ndev x ndev table would take
   2 GB at 16k devices.  kt_program_free frees them. */
kt_status kt_program_count_pairs(kt_program *prog, kt_error *err);
/* Bytes prog's transfers send from device src to device dst, from
   prog->pairs (0 for a pair they do not join, a device out of range, or
   pairs not counted yet). */
int64_t kt_program_bytes_between(const kt_program *prog, int64_t src,
                                 int64_t dst);
/* The bytes of pair (src, dst) in any list sorted by (src, dst), as
   kt_program_count_pairs and the CPU backend's executed counts
   (kt_cpu_devices) keep them: 0 for a pair not listed. */
int64_t kt_pair_bytes_lookup(const kt_pair_bytes *pairs, int64_t npairs,
                             int64_t src, int64_t dst);
void kt_program_free(kt_program *prog);

/* ------------------------------------------------------------ topology */

#ifndef KT_MAX_DEVICE_KINDS
#define KT_MAX_DEVICE_KINDS 16
#endif
#ifndef KT_MAX_KIND_RANGES
#define KT_MAX_KIND_RANGES 256
#endif
#define KT_KIND_NAME_MAX 32

/* A kind of device (issue 4: "per device kind"): its roofline.  The one
   kind of a topology without kind lines has the empty name. */
typedef struct kt_device_kind {
    char name[KT_KIND_NAME_MAX];
    double peak_flops; /* flop/s                                          */
    double mem_bw;     /* bytes/s                                         */
} kt_device_kind;

/* Devices devices.lo .. devices.hi - 1 are of kind `kind`. */
typedef struct kt_kind_range {
    kt_range devices;
    int kind;
} kt_kind_range;

/* Devices joined by a hierarchy of interconnect levels, slowest first
   (SOYBEAN 5.1): level l groups devices into fanout[l] groups of the next
   level.  Two devices communicate over the level of the first group they
   do not share, at that level's bandwidth (bytes/s per direction) and
   latency (s).  Specs:
     flat:N:BW                       one level of N devices
     nodes:MxG:INTRA_BW:INTER_BW     M nodes of G devices
   bandwidths in bytes/s with K, M, G, T prefixes (powers of 1000, either
   case), or bits/s with b or bit (400Gb, 400gbps; 50GB/s for bytes);
   every device is of one unnamed kind
   (an H200-class roofline, kt_machine_default).  A topology file has
   lines
     level FANOUT BANDWIDTH [LATENCY]      (slowest level first)
     device flops PEAK_FLOPS | device membw BYTES_PER_S
   and `#` comments; the device lines set the one kind's roofline.  For
   devices of several kinds, name them instead and give each device one:
     kind NAME flops PEAK_FLOPS membw BYTES_PER_S
     devices LIST NAME     LIST: all, D or D1-D2 (inclusive), joined by
                           commas: devices 0-3,8-11 h200
   A file with kind lines has no device lines, and every device gets
   exactly one kind.  A latency not given (specs, file levels without
   LATENCY) is 5 us on the slowest of several levels and 1 us on the
   others, so a file with a spec's levels is that spec. */
typedef struct kt_topology {
    int nlevels;
    int64_t fanout[KT_MAX_CUTS];
    double bandwidth[KT_MAX_CUTS];
    double latency[KT_MAX_CUTS];
    int64_t ndev;               /* product of the fanouts */
    int nkinds;                 /* 1 .. KT_MAX_DEVICE_KINDS */
    kt_device_kind kind[KT_MAX_DEVICE_KINDS];
    int nkind_ranges;           /* the map device -> kind: ranges sorted */
    kt_kind_range kind_range[KT_MAX_KIND_RANGES]; /* by device, covering
                                                     0 .. ndev - 1 once  */
    const struct kt_profile *profile; /* measured compute times (NULL: the
                                         roofline alone); not owned       */
    int ports;  /* 0: every ordered device pair is a link of its own at
                   its level's bandwidth (the default, FlexFlow's
                   connections); 1: a device has one port per level, and
                   every transfer it sends over that level queues there
                   (a switch-attached GPU's NIC); `links ports` in a file */
} kt_topology;

kt_status kt_topology_parse(const char *spec, kt_topology *t, kt_error *err);
/* The text of a topology file; `name` (the file's) starts the messages. */
kt_status kt_topology_parse_text(const char *text, const char *name,
                                 kt_topology *t, kt_error *err);
kt_status kt_topology_load_file(const char *path, kt_topology *t,
                                kt_error *err);
/* One device of roofline peak_flops / mem_bw (the unnamed kind). */
void kt_topology_single(kt_topology *t, double peak_flops, double mem_bw);
/* The level two devices communicate over (-1 for the same device). */
int kt_topology_level(const kt_topology *t, int64_t a, int64_t b);
/* The kind of device dev (an index into t->kind). */
int kt_topology_device_kind(const kt_topology *t, int64_t dev);
/* kt_lower for topology t (NULL: kt_lower itself): consecutive cuts whose
   devices talk over one level of t make one level of the collectives'
   trees, where kt_lower makes every cut a level (a tree step inside one
   level of links only adds a hop).  What kt_sim_build and kt_plan_sim
   simulate on t; t must have the plan's devices. */
kt_status kt_lower_on(const kt_graph *g, const kt_plan *p,
                      const kt_topology *t, kt_program *out, kt_error *err);
/* The kind index called `name`, or -1. */
int kt_topology_find_kind(const kt_topology *t, const char *name);
/* The same levels as a tiling.h machine, for the time objective.  Its one
   roofline is the slowest of the kinds in use: the least peak and the
   least memory bandwidth of any kind some device has.  The level DP
   prices an op by its slowest tile and balanced splits give every device
   about an equal share, so a step waits for the slowest device -- exact
   when one kind is slowest in both, an upper bound otherwise. */
kt_machine kt_topology_machine(const kt_topology *t);

/* ------------------------------------------------------------- profiles */

/* Measured run times of sub-operators (FlexFlow 5.1, assumption A1: an
   operator's time depends on its input sizes, so it is measured once per
   size and reused).  Keyed by the operator, the extents of its index
   variables on one device and, optionally, the device kind it was
   measured on.  Text lines
       OP EXTENTS SECONDS [KIND]     fc1 16x1024x1024 1.2e-4
                                     fc1 16x1024x1024 3.1e-4 a100
   with EXTENTS in the op's variable order (the output's first), joined by
   `x`, and `#` comments.  A line without a kind holds for every kind.  A
   sub-operator on a device of kind K takes the time of its line for K,
   else of its line without a kind, else the roofline of K: a time measured
   on another kind says little about this one.  kt_profile_write prints
   every sub-operator of a lowered program in this form with the time the
   simulator would use, with the kind of its device when the topology
   names kinds: a template to measure. */
typedef struct kt_profile_entry {
    int op;
    int line;  /* where it was read, 0 when not from text */
    int nvars;
    int64_t extent[KT_MAX_VARS];
    char kind[KT_KIND_NAME_MAX]; /* "": any kind */
    double seconds;
} kt_profile_entry;

typedef struct kt_profile {
    int n;
    kt_profile_entry *entry; /* sorted by (op, extents, kind) */
} kt_profile;

kt_status kt_profile_parse(const kt_graph *g, const char *text, size_t len,
                           kt_profile *out, kt_error *err);
kt_status kt_profile_load_file(const kt_graph *g, const char *path,
                               kt_profile *out, kt_error *err);
/* The time of op `op` over `box` (one range per index variable) on a
   device of kind `kind` (NULL or "": the unnamed kind): the entry for
   that kind, else the entry without a kind, or -1 when there is neither. */
double kt_profile_lookup_kind(const kt_profile *p, int op,
                              const kt_range *box, int nvars,
                              const char *kind);
/* The same for the unnamed kind: the entry without a kind, or -1. */
double kt_profile_lookup(const kt_profile *p, int op, const kt_range *box,
                         int nvars);
/* Fails, naming the line, when an entry's kind is not one of t's: such a
   line would never be used (a misspelt kind, a table for another
   machine). */
kt_status kt_profile_check_kinds(const kt_profile *p, const kt_topology *t,
                                 kt_error *err);
kt_status kt_profile_write(const kt_graph *g, const kt_program *prog,
                           const kt_topology *t, FILE *f, kt_error *err);
void kt_profile_free(kt_profile *p);

/* -------------------------------------------------- task graph, simulation */

/* FlexFlow 5: compute tasks on devices, communication tasks on links
   (every ordered device pair is a link, itself a device of the simulator,
   so compute and transfers overlap), each device running its tasks in
   FIFO order of readiness. */
typedef enum kt_task_kind { KT_TASK_COMPUTE = 0, KT_TASK_TRANSFER } kt_task_kind;

typedef struct kt_sim_task {
    kt_task_kind kind;
    int op;              /* the operator it belongs to                    */
    int64_t device;      /* compute: the device; transfer: ndev + its link */
    int64_t src, dst;    /* transfer: its devices                          */
    int64_t bytes;       /* transfer: bytes                                */
    double seconds;      /* its run time                                   */
    int npred;           /* predecessors: pred[pred_first .. +npred)       */
    int pred_first;
} kt_sim_task;          /* (its start and end: kt_sim's start and end)    */

typedef struct kt_sim {
    int ntask;
    kt_sim_task *task;
    int *pred;            /* predecessor lists                             */
    int64_t ndev;         /* compute devices                               */
    int64_t nlink;        /* links used: ordered device pairs that talk,
                             numbered in order of first use               */
    double step_seconds;  /* makespan of the last simulation               */
    double tick;          /* its unit of time: every run time was rounded
                             to a whole number of these (a power of two,
                             2^-50 to 2^-48 of the sum of all run times;
                             see kt_sim_run)                              */
    double *busy;         /* per compute device, seconds busy: sized by
                             kt_sim_run (NULL in a kt_sim filled by hand;
                             a caller's must come from KT_MALLOC, as
                             kt_sim_free frees it)                         */
    const double *start;  /* per task, when it starts and ends (s), after  */
    const double *end;    /*   kt_sim_run and kt_sim_timeline; owned by the
                             simulation state (freed by kt_sim_invalidate),
                             NULL before the first run and after a failed
                             one.  A kt_sim_delta leaves them stale until
                             kt_sim_timeline.                              */
    int ncritical;        /* the critical path, first task first           */
    int *critical;
    struct kt__sim_work *work; /* the last timeline and the successor lists,
                                  kept for delta simulation (internal)      */
} kt_sim;

/* Builds the task graph of a lowered program on a topology: compute times
   from a roofline of the op's tile (or 0 flops ops: memory time), transfer
   times latency + bytes / bandwidth of the devices' level.  A program
   not shaped as kt_lower makes them (one task per op and device, in that
   order; each op's transfers one of its roles' conversions, between
   devices of the topology) is refused with KT_ERR_INVALID naming the
   task or transfer.  The tasks: op o on device d is task o * ndev + d;
   then each op's transfer tasks, ops in order, one per (role, stage,
   relay, kind, src, dst) its transfers use, in that order (reductions
   before copies), adding up their bytes and times.  *out is written whole:
   kt_sim_free a built one before building into it again. */
kt_status kt_sim_build(const kt_graph *g, const kt_plan *p,
                       const kt_program *prog, const kt_topology *t,
                       kt_sim *out, kt_error *err);
/* The same with the operators run on every device in `order` (a
   permutation of the op indices; NULL: op order), checked with
   kt_schedule_check. */
kt_status kt_sim_build_ordered(const kt_graph *g, const kt_plan *p,
                               const kt_program *prog, const kt_topology *t,
                               const int *order, kt_sim *out, kt_error *err);
/* Checks that order[0..n) is a topological order of the graph: every op
   once, after the producers of what it reads, and an in-place update after
   every other reader of the tensor it writes. */
kt_status kt_schedule_check(const kt_graph *g, const int *order, int n,
                            kt_error *err);
/* A schedule written as text (NUL-terminated): the op names (a
   statement's output, e.g. `h1`, `dW1`, `W1.update`; `ktile plan --json`
   lists them in graph order under "ops") in the order to run them,
   separated by blanks or newlines, `#` to the end of a line a comment.
   Fills order[0..nop) and checks it (kt_schedule_check); a name the graph
   does not have, or a missing or repeated op, is refused naming `name`
   (the file's, in messages; NULL: "schedule") and the line. */
kt_status kt_schedule_parse(const kt_graph *g, const char *text,
                            const char *name, int *order, kt_error *err);
kt_status kt_schedule_load_file(const kt_graph *g, const char *path,
                                int *order, kt_error *err);
/* Full simulation (FlexFlow Algorithm 1): sets s->start and s->end (the
   simulation's own arrays, not copies), step_seconds, busy and the
   critical path.  Time is counted in whole ticks (s->tick, a
   power of two 2^-50 to 2^-48 of the sum of all run times): every run
   time is rounded to a tick, so that sums are exact, which lets
   kt_sim_delta move stretches of a timeline and still agree bit for bit.
   A run time must be a finite number of seconds >= 0 (at most 1e30).
   Every predecessor named must be a task of s; for a kt_sim filled by
   hand, s->pred must hold pred_first + npred entries for every task (a
   length C cannot check, as with memcpy's).  KT_ERR_LIMIT, before
   allocating, past KT_SIM_MAX_RESOURCES devices plus links. */
kt_status kt_sim_run(kt_sim *s, kt_error *err);
/* Delta simulation (FlexFlow Algorithm 2): tasks[i] now takes seconds[i]
   (>= 0); the timeline is brought up to date by re-simulating only from a
   checkpoint before the first changed task until the timeline rejoins the
   previous one up to a shift (every later task moved by the same amount),
   so its cost follows the size of the change, not of the task graph.
   Gives exactly kt_sim_run's result: step_seconds and busy at once; the
   tasks' start and end (s->start, s->end) and the critical path when
   kt_sim_timeline asks for them (a pass over every task, and a walk
   through the whole graph's arrays, would cost more than the delta;
   ncritical is 0 till then, and start and end are stale).  Needs a
   kt_sim_run of this task graph before; the first kt_sim_delta on a
   kt_sim runs it once more with checkpoints, which every later
   kt_sim_run then takes too (about a tenth of a run), and so does a
   delta whose run times call for another tick (their sum past a power of
   two).  Between runs, change run times through kt_sim_delta only (a
   kt_sim_run takes them from the tasks). */
kt_status kt_sim_delta(kt_sim *s, int n, const int *tasks,
                       const double *seconds, kt_error *err);
/* After kt_sim_delta: brings s->start, s->end and the critical path up
   to the current timeline (kt_sim_run leaves them so itself). */
kt_status kt_sim_timeline(kt_sim *s, kt_error *err);
/* Frees the state kt_sim_run keeps for kt_sim_delta (kt_sim_free does
   too).  Not needed when the caller changes the tasks of s between runs
   (another kt_sim_build needs kt_sim_free first): every
   kt_sim_run compares the tasks' devices, kinds and predecessor lists
   with those of its previous run, reuses the successor lists derived then
   when they are the same and derives them afresh otherwise. */
void kt_sim_invalidate(kt_sim *s);
void kt_sim_free(kt_sim *s);

/* ------------------------------------------ incremental task graph */

/* The task graph and timeline of a plan, updated rather than rebuilt when
   the plan changes a little (FlexFlow 6's proposals: one op's
   configuration, one tensor's tiling).  A proposal re-lowers only the
   conversions that change -- those of an op whose strategy changed, and
   of every op reading or writing a tensor whose tiling changed -- writes
   their transfer tasks into a second task graph kept equal to the
   current one (every op's tasks in a slot with room, so that a task's
   number does not change when another op's block changes size: nothing
   kept is renumbered), rebuilds the predecessor and successor lists that
   read them, and simulates only around the changes (delta simulation,
   FlexFlow 5.3): from the first position of the previous timeline a
   change can affect until the state is the previous run's moved by a
   constant, then the previous timeline, moved, up to the next position a
   change can show, and so on to the end.  The result is exactly what
   kt_lower, kt_sim_build and kt_sim_run of the proposed plan give, up to
   the numbering of the links (a test checks task by task; the links are
   numbered in order of first use by any proposal, accepted or not, so
   nlink counts every link used so far, an upper bound of kt_sim_build's
   count): ntask, the
   step time and busy times at once; the task structs, `pred`, start and
   end and the critical path, in kt_sim_build's numbering, after
   kt_plan_sim_timeline (NULL and ncritical 0 until then: the graphs
   inside have holes, and compacting them is a pass over every task that
   MCMC, reading only step times, does not need).  The same holds for
   `current` after an accept, which cannot fail and copies no task
   graph: it splices what the proposal's run simulated into the kept
   timeline (the graph that was current becomes the one the next
   proposal is built in, brought up to date in the ops the accepted
   proposal touched).  g and t must outlive
   it; `current` and `proposed` are read-only. */
typedef struct kt_plan_sim {
    const kt_sim *current;  /* the current plan's task graph and timeline */
    const kt_sim *proposed; /* the last proposal's; NULL when none pending */
    const kt_plan *plan;    /* the current plan (a copy owned here): its
                               tilings and splits.  Its total_bytes,
                               cut_bytes, step_seconds and memory_bytes
                               stay those of the plan given to
                               kt_plan_sim_init (an accept does not
                               evaluate them;
                               kt_plan_eval and kt_plan_memory give them,
                               as kt_plan_mcmc does for its result; the
                               simulated step is current->step_seconds) */
    int kept;               /* starts of the previous timeline the last
                               proposal's simulation kept                 */
    struct kt__plan_sim_work *work;
} kt_plan_sim;

/* Lowers, builds and simulates plan p on topology t, and copies the task
   graph into the second one that proposals are built in (so the first
   proposal costs what later ones do).  The graphs' per-task arrays get
   room for four times the task slots (KT__PS_ROOM) so that a chain's
   growing graph seldom moves them: address space, whose pages are
   touched only as the graph grows into them. */
kt_status kt_plan_sim_init(const kt_graph *g, const kt_plan *p,
                           const kt_topology *t, kt_plan_sim *ps,
                           kt_error *err);
/* The task graph and timeline of plan `next` (same factors) in
   ps->proposed; the current plan stays until kt_plan_sim_accept.  A
   failure (KT_ERR_NOMEM; KT_ERR_LIMIT when the graphs' slots would need
   more than INT_MAX - 1 tasks or list entries) leaves ps usable, with
   its current plan. */
kt_status kt_plan_sim_propose(kt_plan_sim *ps, const kt_plan *next,
                              kt_error *err);
/* Completes the task structs, predecessor lists, start and end and the
   critical path of the last proposal (ps->proposed, when one is pending)
   and of the current plan (ps->current, when a proposal was accepted
   since they were last completed), in kt_sim_build's numbering:
   kt_plan_sim_propose and kt_plan_sim_accept leave them out (NULL), a
   pass over all tasks and a walk through the graph that MCMC, reading
   only step times, does not need.  ntask, step time and busy times are
   set by kt_plan_sim_propose.  Cannot fail: the proposal made the room
   it needs. */
void kt_plan_sim_timeline(kt_plan_sim *ps);
/* The last proposal becomes the current plan (no-op when none); its task
   structs, times and critical path are completed by
   kt_plan_sim_timeline, when they were not before.  Cannot fail (the
   proposal reserved what it takes) and copies no task graph: it splices
   what the proposal's run simulated into the kept timeline, in time
   proportional to that, and the next proposal brings the other graph up
   to date in what this one changed. */
void kt_plan_sim_accept(kt_plan_sim *ps);
void kt_plan_sim_free(kt_plan_sim *ps);

/* ------------------------------------------------------------ MCMC search */

typedef struct kt_mcmc_options {
    double seconds;        /* CPU time budget (KT_CLOCK); 0: none           */
    int64_t proposals;     /* proposal budget; 0: none.  Both set: the
                              first to run out; neither: 1000 proposals    */
    double beta;           /* Metropolis: a proposal slower by the fraction
                              x is accepted with probability exp(-beta x);
                              0: KT_MCMC_BETA_PER_OP (40) times the op
                              count (a 1000-op graph: 40,000, a move
                              0.0025% slower accepted one time in e)      */
    uint64_t seed;         /* same seed and proposal budget, same plan; 0
                              is taken as 0x9e3779b97f4a7c15 (the xorshift
                              generator's state must not be 0)             */
    int restarts;          /* chains: the first from data parallelism (or
                              the DP plan when it does not apply), the rest
                              from random plans; 0: 2                       */
    const kt_plan *start;  /* when set, the first chain starts here instead
                              (e.g. the level DP's plan, to refine it)      */
} kt_mcmc_options;

typedef enum kt_mcmc_origin {
    KT_MCMC_FROM_START = 0, /* opt->start, the caller's plan               */
    KT_MCMC_FROM_DATA,      /* data parallelism                            */
    KT_MCMC_FROM_DP         /* the level DP's plan by bytes: data
                               parallelism does not apply (e.g. a batch
                               smaller than the devices)                   */
} kt_mcmc_origin;

typedef struct kt_mcmc_result {
    double step_seconds;       /* the best plan's simulated step           */
    int64_t tried, accepted;   /* proposals, over all chains               */
    kt_mcmc_origin first_start; /* what the first chain started from       */
    int chains;                /* chains run: fewer than the restarts when
                                  the budget ran out first                 */
} kt_mcmc_result;

/* FlexFlow 6: a Markov chain over plans.  A proposal picks a random
   operator and gives it a random configuration -- a random variable to
   split at every cut, its output tensor tiled to match (split where the
   op's output is split, replicated where it is reduced or replicated) --
   or, half of the time, gives a random tensor a random tiling (the only
   way weights and inputs move); it prices the plan on topology t with a
   kt_plan_sim per chain (the changed conversions re-lowered, delta
   simulation; the same step times as a full simulation, so the same
   plans as lowering every proposal afresh), and accepts it by the
   Metropolis rule on the relative change of the step time.  Each chain
   gets an equal share of the budget left; it ends early, as FlexFlow
   6.2's search leaves an initial strategy, when its best plan has not
   improved for the last half of its proposals (counted once it has had
   as many as the graph has ops and tensors), and hands what it leaves to
   the chains after it -- so a search can end before its budget.  *p is
   the best plan seen (initialised by the call), evaluated as
   kt_plan_search's plans are: its bytes, memory and, in step_seconds,
   the modelled step (kt_plan_step_seconds on kt_topology_machine(t)).
   *result (when not NULL) gets the best plan's simulated step (what the
   search minimised), the proposals tried and accepted, and what the
   first chain started from, set only on success.  A beta, budget or
   restart count below 0 (0 is the default), a NaN beta, or seconds NaN
   or infinite, is KT_ERR_INVALID.  opt->start may be p
   itself (refining a plan in place): on failure p is then left as it
   was. */
kt_status kt_plan_mcmc(const kt_graph *g, const kt_factors *f,
                       const kt_topology *t, const kt_mcmc_options *opt,
                       kt_plan *p, kt_mcmc_result *result, kt_error *err);

/* ---------------------------------------------- gradient synchronisation */

/* Elements one node sends and receives to synchronise an M x N
   fully-connected layer with P1 workers and P2 servers, batch K (Zhang
   thesis Table 3.4): a parameter-server worker 2MN, a server 2 P1 MN / P2,
   a node that is both 2 MN (P1 + P2 - 2) / P2, and sufficient-factor
   broadcasting 2 K (P1 - 1)(M + N).  NaN outside the model: M, N or K
   below 0, P1 or P2 below 1. */
double kt_sync_ps_worker(int64_t m, int64_t n);
double kt_sync_ps_server(int64_t m, int64_t n, int64_t p1, int64_t p2);
double kt_sync_ps_both(int64_t m, int64_t n, int64_t p1, int64_t p2);
double kt_sync_sfb(int64_t m, int64_t n, int64_t k, int64_t p1);

typedef enum kt_collective {
    KT_ALLREDUCE = 0,
    KT_REDUCESCATTER,
    KT_ALLGATHER,
    KT_BROADCAST,
    KT_REDUCE
} kt_collective;

/* Seconds of one collective over a ring of w workers for a message of
   `bytes` (Zhang thesis Eq. 8.3): 2(w-1)/w, (w-1)/w, (w-1)/w, 1 and 1
   times the message over the ring's slowest bandwidth, plus w * phi of
   per-step latency and delta of fixed cost.  NaN outside the model: an
   unknown collective c, w below 1, a bandwidth not above 0, bytes, phi
   or delta below 0, or bytes infinite. */
double kt_sync_collective(kt_collective c, double bytes, int64_t w,
                          double bandwidth, double phi, double delta);

/* Gradient-synchronisation schedules (Zhang thesis 3.2, 3.3, 7.6.3, 8.3).
   A training iteration's backward pass is a list of layers in backward
   order (the output layer first): layer l computes for b^l seconds and then
   has its weight gradient of `bytes` bytes, which every replica must
   synchronise before the next iteration.  How: */
typedef enum kt_sync_method {
    KT_SYNC_ALLREDUCE = 0, /* ring all-reduce over `workers` (Eq. 8.3)     */
    KT_SYNC_PS,            /* parameter server: `servers` of the `workers`
                              nodes hold a shard each (Table 3.4)           */
    KT_SYNC_SFB,           /* sufficient-factor broadcasting of an m x n
                              fully-connected layer, batch k (Table 3.4)    */
    KT_SYNC_ADAPTIVE       /* Poseidon Algorithm 2: SFB where it moves no
                              more than PS, else PS                         */
} kt_sync_method;

typedef struct kt_sync_layer {
    double backward_seconds; /* b^l                                         */
    double bytes;            /* gradient bytes; 0: compute only, no sync    */
    kt_sync_method method;
    int64_t workers;         /* P1, or the w of the ring (>= 1)             */
    int64_t servers;         /* P2 (PS, adaptive): 1 <= servers <= workers  */
    int64_t m, n, k;         /* SFB, adaptive: the layer is m x n, k samples
                                per worker; adaptive with m = n = 0: not a
                                fully-connected layer, so PS                */
    double bandwidth;        /* bytes/s per direction, slowest link used    */
    double phi;              /* seconds of overhead per peer or ring step   */
    double delta;            /* seconds of fixed cost per synchronisation   */
    int tensor;              /* the weight (kt_sync_layers_from_plan), or -1;
                                informational                               */
} kt_sync_layer;

typedef enum kt_sync_mode {
    KT_SYNC_TRADITIONAL = 0, /* every layer's sync after the whole backward,
                                in layer order (Figure 3.3 top)             */
    KT_SYNC_WFBP,            /* wait-free backprop: layer l's sync as soon
                                as b^l ends, one sync at a time (3.2.2)     */
    KT_SYNC_BUCKET,          /* WFBP of buckets: consecutive gradients
                                merged up to bucket_bytes (7.6.3: a merged
                                collective pays the per-call cost once, but
                                waits for its last gradient)                */
    KT_SYNC_BUCKET_OPTIMAL   /* WFBP of the contiguous partition with the
                                least completion time (exact DP; among
                                equals, each prefix's with the smallest
                                last bucket)                                */
} kt_sync_mode;

/* A schedule.  Layers with bytes > 0 are sent in buckets (one layer each
   unless merged); a bucket is sent once its last layer's backward has
   ended and the network has finished the bucket before it. */
typedef struct kt_sync_schedule {
    int nlayers;
    int nbuckets;             /* buckets that send something               */
    double backward_seconds;  /* when the backward pass ends: sum of b^l   */
    double total_seconds;     /* backward + sync: the later of the backward
                                 end and the last sync's end               */
    double network_seconds;   /* sum of the buckets' sync times            */
    double *ready;            /* per layer: when b^l ends                  */
    double *start, *end;      /* per layer: its bucket's sync (ready when
                                 the layer sends nothing)                  */
    int *bucket;              /* per layer: its bucket, 0 sent first; -1
                                 when it sends nothing                     */
    kt_sync_method *method;   /* per layer: the method used (adaptive
                                 resolved)                                 */
} kt_sync_schedule;

/* Poseidon's choice for an m x n fully-connected layer (Zhang thesis
   Algorithm 2): SFB when 2K(P1-1)(M+N) <= 2MN(P1+P2-2)/P2, else PS; PS
   when m or n is 0 (not a fully-connected layer). */
kt_sync_method kt_sync_best_method(int64_t m, int64_t n, int64_t k,
                                   int64_t p1, int64_t p2);
/* One layer's sync time split into what the bytes take on the wire and
   the per-sync overhead (the phi and delta terms, paid once per bucket),
   with the method it uses. */
kt_status kt_sync_layer_seconds(const kt_sync_layer *layer,
                                kt_sync_method *used, double *wire,
                                double *overhead, kt_error *err);
/* The schedule of n layers in mode `mode`; bucket_bytes is the bucket cap
   of KT_SYNC_BUCKET (> 0, INFINITY allowed), ignored otherwise. */
kt_status kt_sync_schedule_run(const kt_sync_layer *layers, int n,
                               kt_sync_mode mode, double bucket_bytes,
                               kt_sync_schedule *out, kt_error *err);
/* The WFBP schedule of a given partition: bucket[l] is layer l's bucket;
   the senders' buckets count 0, 1, 2, ... in order (contiguous), entries
   of layers that send nothing are ignored, and a bucket's layers must use
   one method on one set of workers and links. */
kt_status kt_sync_schedule_buckets(const kt_sync_layer *layers, int n,
                                   const int *bucket, kt_sync_schedule *out,
                                   kt_error *err);
/* KT_SYNC_BUCKET for each of ncand caps; the fastest (the first of equals)
   in *best_bytes and *out. */
kt_status kt_sync_best_bucket(const kt_sync_layer *layers, int n,
                              const double *candidates, int ncand,
                              double *best_bytes, kt_sync_schedule *out,
                              kt_error *err);
void kt_sync_schedule_free(kt_sync_schedule *s);

typedef struct kt_sync_plan_options {
    kt_sync_method method; /* ALLREDUCE (default), PS (a server on every
                              worker) or ADAPTIVE                           */
    double delta;          /* fixed seconds per synchronisation (>= 0)      */
    int backward_as_forward; /* 1: time each backward op as the forward op
                              it belongs to (kt_op.group: the same product-
                              sum with roles swapped, the same flops) rather
                              than by its own roofline (which estimates the
                              useful terms of a strided convolution's
                              transposed one as if its axes were
                              independent)                                 */
} kt_sync_plan_options;

/* The sync layers of a plan on topology t (Zhang thesis 3.2.1, applied to
   a ktile plan): every weight the plan replicates at some cuts has a
   gradient that is a partial sum over the devices differing in those cuts,
   synchronised over them (a ring in device order: the slowest of its hops'
   bandwidths, the largest of their latencies as phi).  The backward ops
   (autodiff's, not the in-place updates) are walked in op order, each
   taking its roofline time on the plan's busiest device (or its forward
   op's, with backward_as_forward); a layer ends
   where a synchronised gradient is produced, and compute after the last
   one is a final layer with nothing to send.  *layers is allocated
   (kt_free it); *n may be 0. */
kt_status kt_sync_layers_from_plan(const kt_graph *g, const kt_plan *p,
                                   const kt_topology *t,
                                   const kt_sync_plan_options *opt,
                                   kt_sync_layer **layers, int *n,
                                   kt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* KT_SCHED_H */

/* ======================================================================= */
/*                              IMPLEMENTATION                             */
/* ======================================================================= */
#ifdef KT_IMPLEMENTATION
#ifndef KT_SCHED_IMPLEMENTED
#define KT_SCHED_IMPLEMENTED

/* The header this one builds on, again: if it was first included without
   KT_IMPLEMENTATION, its declarations guard kept it from being re-read
   above, and its implementation would be missing.  Its own guards make
   this a no-op otherwise. */
#include "tiling.h"

/* ------------------------------------------------------------- lowering */

typedef struct kt__xfers {
    kt_transfer *x;
    int n, cap;
    int oom;
} kt__xfers;

static void kt__xfer_push(kt__xfers *b, const kt_transfer *t) {
    if (b->oom) return;
    if (b->n == b->cap) {
        int nc = b->cap ? 2 * b->cap : 256;
        kt_transfer *nx =
            (kt_transfer *)KT_REALLOC(b->x, (size_t)nc * sizeof *nx);
        if (!nx) {
            b->oom = 1;
            return;
        }
        b->x = nx;
        b->cap = nc;
    }
    b->x[b->n++] = *t;
}

/* The box of one cell of the compressed grid. */
static void kt__cell_box(const kt__grid *g, int64_t cell, kt_box *b) {
    int d;
    memset(b, 0, sizeof *b);
    for (d = 0; d < g->rank; d++) {
        int i = (int)((cell / g->stride[d]) % (g->ncut[d] - 1));
        b->r[d].lo = g->cut[d][i];
        b->r[d].hi = g->cut[d][i + 1];
    }
}

/* How many leading cut coordinates devices a and b share, with span[L] =
   k[L] * .. * k[count - 1]: devices of one group of the first cuts sit on
   the same node (SOYBEAN 5.1), so the larger, the nearer.  Cut 1 is the
   most significant digit of a device number, so sharing L coordinates is
   lying in the same block of span[L] numbers.  With the spans of a
   collective's levels (kt__levels: cuts over one topology level merged)
   it counts shared levels the same way. */
static int kt__shared_cuts(const int64_t *span, int ncuts, int64_t a,
                           int64_t b) {
    int L = 0;
    while (L < ncuts && a / span[L + 1] == b / span[L + 1]) L++;
    return L;
}

/* Devices whose boxes cover each cell, as lists (CSR). */
typedef struct kt__cover {
    int64_t *first; /* ncells + 1 */
    int64_t *dev;
} kt__cover;

static void kt__cover_free(kt__cover *c) {
    KT_FREE(c->first);
    KT_FREE(c->dev);
}

static int kt__cover_build(kt__cover *c, const kt__grid *g,
                           const kt_placement *pl) {
    int64_t d, *fill, total = 0, cell;
    c->first = (int64_t *)kt__calloc((size_t)g->ncells + 1, sizeof(int64_t));
    fill = (int64_t *)kt__calloc((size_t)g->ncells + 1, sizeof(int64_t));
    c->dev = NULL;
    if (!c->first || !fill) {
        KT_FREE(fill);
        return 0;
    }
    for (d = 0; d < pl->ndev; d++) {
        int f[KT_MAX_DIMS], l[KT_MAX_DIMS];
        kt__span_iter it;
        if (!kt__grid_span(g, &pl->box[d], f, l)) continue;
        for (kt__span_begin(&it, g, f, l); !it.done; kt__span_next(&it, g)) {
            c->first[it.cell + 1]++;
            total++;
        }
    }
    for (cell = 0; cell < g->ncells; cell++) c->first[cell + 1] += c->first[cell];
    c->dev = (int64_t *)kt__calloc((size_t)total + 1, sizeof(int64_t));
    if (!c->dev) {
        KT_FREE(fill);
        return 0;
    }
    for (d = 0; d < pl->ndev; d++) { /* ascending: lists sorted by device */
        int f[KT_MAX_DIMS], l[KT_MAX_DIMS];
        kt__span_iter it;
        if (!kt__grid_span(g, &pl->box[d], f, l)) continue;
        for (kt__span_begin(&it, g, f, l); !it.done; kt__span_next(&it, g))
            c->dev[c->first[it.cell] + fill[it.cell]++] = d;
    }
    KT_FREE(fill);
    return 1;
}

/* The first position of dev[lo .. hi) (ascending) holding v or more. */
static int64_t kt__lower_bound(const int64_t *dev, int64_t lo, int64_t hi,
                               int64_t v) {
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (dev[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* A binary search: the lists are sorted, and a scan made lowering a
   replicated tensor quadratic in the devices (every needing device looked
   through every holder). */
static int kt__covers(const kt__cover *c, int64_t cell, int64_t dev) {
    int64_t hi = c->first[cell + 1],
            i = kt__lower_bound(c->dev, c->first[cell], hi, dev);
    return i < hi && c->dev[i] == dev;
}

/* The member of list[lo .. hi) (ascending) nearest to `target` (sharing
   the longest prefix of cut coordinates, SOYBEAN 5.1), the first in
   device order among equals.  Devices sharing target's first L
   coordinates are the block of span[L] device numbers around it, so the
   nearest member is the first one in the smallest block that has one: a
   binary search per cut, not a scan.  -1 for an empty list. */
static int64_t kt__nearest_in(const int64_t *list, int64_t lo, int64_t hi,
                              const int64_t *span, int ncuts,
                              int64_t target) {
    int L;
    for (L = ncuts; L >= 0; L--) {
        int64_t base = target / span[L] * span[L];
        int64_t i = kt__lower_bound(list, lo, hi, base);
        if (i < hi && list[i] < base + span[L]) return list[i];
    }
    return -1;
}

/* The holder of `cell` nearest to dst (the caller has checked there is
   one). */
static int64_t kt__nearest_holder(const kt__cover *held, int64_t cell,
                                  const int64_t *span, int ncuts,
                                  int64_t dst) {
    return kt__nearest_in(held->dev, held->first[cell],
                          held->first[cell + 1], span, ncuts, dst);
}

static int64_t kt__box_volume(const kt_box *b, int rank) {
    int64_t v = 1;
    int d;
    for (d = 0; d < rank; d++) v *= b->r[d].hi - b->r[d].lo;
    return v;
}

/* The levels of the collectives' trees (kt__collective_levels): n levels,
   a block of level L being span[L] consecutive devices (span[0] all of
   them, span[n] = 1). */
typedef struct kt__levels {
    int n;
    int64_t span[KT_MAX_CUTS + 1];
} kt__levels;

/* Every cut is a level of the trees (SOYBEAN 5.1 maps cut i to a level of
   the machine); on a topology t (NULL: none), consecutive cuts whose
   devices talk over the same level of t are one: a hop inside a level is
   as fast as any other there, so a tree step between them would only add
   a hop.  Cut L separates devices 0 and k[L+1] * .. * k[count-1], and
   its level is theirs: factors that do not follow t's fanouts (3,2 on
   two nodes of three, whose cut 2 mixes nodes) merge into one level and
   stay one hop. */
static void kt__collective_levels(const kt_factors *f, const kt_topology *t,
                                  kt__levels *lv) {
    int64_t cut_span[KT_MAX_CUTS + 1];
    int L;
    cut_span[f->count] = 1;
    for (L = f->count - 1; L >= 0; L--) cut_span[L] = cut_span[L + 1] * f->k[L];
    lv->n = 0;
    lv->span[0] = cut_span[0];
    for (L = 0; L < f->count; L++) {
        int last = L + 1 == f->count;
        if (last || !t ||
            kt_topology_level(t, 0, cut_span[L + 1]) !=
                kt_topology_level(t, 0, cut_span[L + 2]))
            lv->span[++lv->n] = cut_span[L + 1];
    }
}

/* What the cells of one conversion share while they are lowered
   (kt__lower_conversion). */
typedef struct kt__cell_lowering {
    const kt_tensor *x;
    const kt_placement *from;
    kt__cover held, need;            /* per cell: who holds it, needs it */
    int nlevels;                     /* levels of the collectives' trees */
    int64_t span[KT_MAX_CUTS + 1];   /* devices of a block of each level:
                                        kt__collective_levels           */
    int64_t *best, *roots;           /* scratch: per partial class, root */
    int64_t *lacking, *members;      /* scratch: devices of one collective */
    kt__xfers *out, copies;          /* copies go after every reduction */
    kt_transfer t;                   /* op, role, tensor and region */
} kt__cell_lowering;

/* The device in the block of level L that holds `dev` with like's
   coordinates at cuts L+1 onwards: where a collective sends like's share
   inside another node, so that the shares of different devices land on
   different devices there (every GPU of a node uses its own network
   port, as hierarchical all-reduce does). */
static int64_t kt__mirror(const kt__cell_lowering *cl, int64_t dev,
                          int64_t like, int L) {
    return dev / cl->span[L] * cl->span[L] + like % cl->span[L];
}

/* The end of the run of list[i ..) (ascending) in list[i]'s block of
   level L. */
static int64_t kt__block_run(const kt__cell_lowering *cl, const int64_t *list,
                             int64_t i, int64_t hi, int L) {
    int64_t block = list[i] / cl->span[L], end = i + 1;
    while (end < hi && list[end] / cl->span[L] == block) end++;
    return end;
}

static void kt__lower_push(kt__cell_lowering *cl, kt__xfers *to, int64_t src,
                           int64_t dst, kt_xfer_kind kind, int stage,
                           int relay) {
    cl->t.src = src;
    cl->t.dst = dst;
    cl->t.kind = kind;
    cl->t.stage = stage;
    cl->t.relay = relay;
    cl->t.bytes = kt__box_volume(&cl->t.region, cl->x->rank) *
                  cl->x->elem_bytes;
    kt__xfer_push(to, &cl->t);
}

/* A broadcast built level by level: src's value (the region in cl->t)
   reaches every device of list[lo .. hi) (ascending, all in src's block
   of level L; src itself may be among them).  Each block of level L + 1
   without src gets one transfer, into the member nearest src's mirror,
   which then passes the value on inside its block -- so the value crosses
   a level once per block that needs it, not once per device, and the
   slow levels (the first cuts, SOYBEAN 5.1) carry the least.  A transfer
   crossing cut L is stage stage0 + L; one from a device that received
   the value here is a relay.  One transfer per device of the list but
   src, what DESIGN.md's cost counts. */
static void kt__lower_broadcast(kt__cell_lowering *cl, kt__xfers *to,
                                const int64_t *list, int64_t lo, int64_t hi,
                                int64_t src, int L, int stage0,
                                int src_relays) {
    int64_t i, end;
    if (L >= cl->nlevels) return; /* one device: src */
    for (i = lo; i < hi; i = end) {
        int64_t rep;
        end = kt__block_run(cl, list, i, hi, L + 1);
        if (list[i] / cl->span[L + 1] == src / cl->span[L + 1]) {
            kt__lower_broadcast(cl, to, list, i, end, src, L + 1, stage0,
                                src_relays);
            continue;
        }
        rep = kt__nearest_in(list, i, end, cl->span, cl->nlevels,
                             kt__mirror(cl, list[i], src, L + 1));
        kt__lower_push(cl, to, src, rep, KT_XFER_COPY, stage0 + L,
                       src_relays);
        kt__lower_broadcast(cl, to, list, i, end, rep, L + 1, stage0, 1);
    }
}

/* A reduction built level by level: the partial values of list[lo .. hi)
   (ascending, in sink's block of level L, sink among them) combined on
   sink.  Each block of level L + 1 first combines its members' values on
   one member (sink if it is there, else the one nearest sink's mirror),
   which sends the combination on: one transfer per member but sink (the
   q - 1 of DESIGN.md's cost), the innermost level first (stage
   cuts - 1 - L for a transfer crossing cut L). */
static void kt__lower_reduce_tree(kt__cell_lowering *cl, const int64_t *list,
                                  int64_t lo, int64_t hi, int64_t sink,
                                  int L) {
    int64_t i, end;
    if (L >= cl->nlevels) return;
    for (i = lo; i < hi; i = end) {
        int64_t rep = sink;
        end = kt__block_run(cl, list, i, hi, L + 1);
        if (list[i] / cl->span[L + 1] != sink / cl->span[L + 1])
            rep = kt__nearest_in(list, i, end, cl->span, cl->nlevels,
                                 kt__mirror(cl, list[i], sink, L + 1));
        kt__lower_reduce_tree(cl, list, i, end, rep, L + 1);
        if (rep != sink)
            kt__lower_push(cl, cl->out, rep, sink, KT_XFER_REDUCE,
                           cl->nlevels - 1 - L, 0);
    }
}

/* One cell without partial sums: the devices that need it and do not
   hold it get it from the nearest holder, level by level.  Those whose
   nearest holder shares their first L cut coordinates form blocks of
   level L + 1 with no holder; each such block is one broadcast from its
   nearest holder (kt__lower_broadcast). */
static void kt__lower_cell_fetch(kt__cell_lowering *cl, int64_t cell) {
    int64_t n = 0, i, end;
    for (i = cl->need.first[cell]; i < cl->need.first[cell + 1]; i++)
        if (!kt__covers(&cl->held, cell, cl->need.dev[i]))
            cl->lacking[n++] = cl->need.dev[i];
    for (i = 0; i < n; i = end) {
        int64_t h = kt__nearest_holder(&cl->held, cell, cl->span,
                                       cl->nlevels, cl->lacking[i]);
        int L = kt__shared_cuts(cl->span, cl->nlevels, h, cl->lacking[i]);
        end = kt__block_run(cl, cl->lacking, i, n, L + 1);
        kt__lower_broadcast(cl, cl->out, cl->lacking, i, end, h, L, 0, 0);
    }
}

static int kt__int64_less(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Takes the first holder of each class not taken yet from hold[lo .. hi)
   (kt__reduce_members). */
static void kt__reduce_take(kt__cell_lowering *cl, const int64_t *hold,
                            int64_t lo, int64_t hi, int64_t *nm) {
    int64_t i;
    for (i = lo; i < hi; i++) {
        int64_t c = cl->from->partial_class[hold[i]];
        if (cl->best[c] < 0) {
            cl->best[c] = hold[i];
            cl->members[(*nm)++] = hold[i];
        }
    }
}

/* The members of root's reduction of a cell held by hold[h0 .. h1)
   (ascending), of `nclasses` partial classes: the nearest holder of each
   class (sharing the most cut coordinates with root, SOYBEAN 5.1), the
   first in device order among equally near ones; written ascending to
   cl->members, their number returned.  Holders sharing root's first L
   coordinates form one run of the list (the block of span[L] devices
   around root), so the walk reads the runs outward from root's own
   block, each new ring in device order, and takes the first holder it
   meets of each class; it stops once every class has one.  (A scan of
   every holder for every root read holders x roots entries per cell:
   2.2x the time on 4,096 devices with two classes of replicated
   partials, README "Lowering and the task graph at many devices".)
   cl->best[c] is -1 for every class before and after. */
static int64_t kt__reduce_members(kt__cell_lowering *cl, const int64_t *hold,
                                  int64_t h0, int64_t h1, int64_t root,
                                  int64_t nclasses) {
    const int64_t *cls = cl->from->partial_class;
    int64_t in_lo = kt__lower_bound(hold, h0, h1, root), in_hi = in_lo;
    int64_t nm = 0, k;
    int L;
    for (L = cl->nlevels; L >= 0 && nm < nclasses; L--) {
        /* the ring of level L: root's block there less the one inside */
        int64_t base = root / cl->span[L] * cl->span[L];
        int64_t lo = kt__lower_bound(hold, h0, in_lo, base);
        int64_t hi = kt__lower_bound(hold, in_hi, h1, base + cl->span[L]);
        kt__reduce_take(cl, hold, lo, in_lo, &nm);
        kt__reduce_take(cl, hold, in_hi, hi, &nm);
        in_lo = lo;
        in_hi = hi;
    }
    for (k = 0; k < nm; k++) cl->best[cls[cl->members[k]]] = -1;
    qsort(cl->members, (size_t)nm, sizeof *cl->members, kt__int64_less);
    return nm;
}

/* One cell with partial sums: its elements are shared along its longest
   dimension among its roots (the devices that need and hold it, else
   those that hold it).  For each root's share, the nearest holder of
   every partial class takes part in a reduction onto the root
   (kt__lower_reduce_tree: REDUCE transfers), and the root's sum is
   broadcast to the other devices that need it (COPY transfers at later
   stages, queued after all reductions). */
static void kt__lower_cell_reduce(kt__cell_lowering *cl, int64_t cell,
                                  const kt_box *box) {
    const kt__cover *held = &cl->held, *need = &cl->need;
    const int64_t *cls = cl->from->partial_class;
    int64_t h0 = held->first[cell], h1 = held->first[cell + 1];
    int64_t n0 = need->first[cell], n1 = need->first[cell + 1];
    int64_t nroots = 0, nclasses = 0, r, i, nm;
    int longest = 0, d, m = cl->nlevels;
    for (i = h0; i < h1; i++) /* the classes held (best[] as marks) */
        if (cl->best[cls[held->dev[i]]] == -1) {
            cl->best[cls[held->dev[i]]] = -2;
            nclasses++;
        }
    for (i = h0; i < h1; i++) cl->best[cls[held->dev[i]]] = -1;
    for (i = n0; i < n1; i++)
        if (kt__covers(held, cell, need->dev[i]))
            cl->roots[nroots++] = need->dev[i];
    if (nroots == 0)
        for (i = h0; i < h1; i++) cl->roots[nroots++] = held->dev[i];
    for (d = 1; d < cl->x->rank; d++)
        if (box->r[d].hi - box->r[d].lo >
            box->r[longest].hi - box->r[longest].lo)
            longest = d;
    for (r = 0; r < nroots; r++) {
        int64_t root = cl->roots[r];
        cl->t.region = *box;
        cl->t.region.r[longest] =
            kt_split_range(box->r[longest], (int)nroots, (int)r);
        if (cl->t.region.r[longest].hi <= cl->t.region.r[longest].lo)
            continue;
        nm = kt__reduce_members(cl, held->dev, h0, h1, root, nclasses);
        kt__lower_reduce_tree(cl, cl->members, 0, nm, root, 0);
        kt__lower_broadcast(cl, &cl->copies, need->dev, n0, n1, root, 0, m,
                            0);
    }
}

/* The transfers of one conversion, cell by cell of the compressed grid
   (DESIGN.md "Conversion cost"): without partial sums the devices lacking
   a cell get it from the nearest holder, by a broadcast tree over the
   device hierarchy (kt__lower_cell_fetch); with them every cell's
   elements are shared among its roots, and each root's share is reduced
   by a tree onto the root (REDUCE) and broadcast from it (COPY:
   kt__lower_cell_reduce).  Any tree moves the bytes DESIGN.md's cost
   counts -- one transfer per device reached, one per partial class
   combined -- and a tree built level by level crosses each slow level
   once per block, where one-hop transfers crossed it once per device. */
static kt_status kt__lower_conversion(const kt_graph *g,
                                      const kt__levels *lv, int op, int role,
                                      int tensor, const kt_placement *from,
                                      const kt_placement *to, kt__xfers *out,
                                      kt_error *err) {
    kt__cell_lowering cl;
    kt__grid grid;
    int64_t cell;
    kt_status s;
    memset(&cl, 0, sizeof cl);
    cl.x = &g->tensor[tensor];
    cl.nlevels = lv->n;
    memcpy(cl.span, lv->span, sizeof cl.span);
    cl.from = from;
    cl.out = out;
    cl.t.op = op;
    cl.t.role = role;
    cl.t.tensor = tensor;
    if ((s = kt__grid_build(&grid, cl.x->rank, cl.x->shape, from, to, err)) !=
        KT_OK)
        return s;
    cl.best = (int64_t *)kt__calloc((size_t)from->partials + 1,
                                    sizeof(int64_t));
    cl.roots = (int64_t *)kt__calloc((size_t)(from->ndev + to->ndev) + 1,
                                     sizeof(int64_t));
    cl.lacking = (int64_t *)kt__calloc((size_t)to->ndev + 1, sizeof(int64_t));
    cl.members = (int64_t *)kt__calloc((size_t)from->partials + 1,
                                       sizeof(int64_t));
    if (!cl.best || !cl.roots || !cl.lacking || !cl.members ||
        !kt__cover_build(&cl.held, &grid, from) ||
        !kt__cover_build(&cl.need, &grid, to)) {
        s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory lowering %s",
                     cl.x->name);
        goto done;
    }
    for (cell = 0; cell < from->partials; cell++) cl.best[cell] = -1;
    for (cell = 0; cell < grid.ncells; cell++) {
        kt_box box;
        if (cl.need.first[cell] == cl.need.first[cell + 1]) continue;
        if (cl.held.first[cell] == cl.held.first[cell + 1]) {
            s = kt__fail(err, KT_ERR_INTERNAL, 0, "lowering %s: an element "
                         "is needed but held by no device", cl.x->name);
            goto done;
        }
        kt__cell_box(&grid, cell, &box);
        cl.t.region = box;
        if (from->partials == 1)
            kt__lower_cell_fetch(&cl, cell);
        else
            kt__lower_cell_reduce(&cl, cell, &box);
    }
    for (cell = 0; cell < cl.copies.n; cell++)
        kt__xfer_push(out, &cl.copies.x[cell]);
    if (out->oom || cl.copies.oom)
        s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory for transfers");
done:
    KT_FREE(cl.copies.x);
    KT_FREE(cl.best);
    KT_FREE(cl.roots);
    KT_FREE(cl.lacking);
    KT_FREE(cl.members);
    kt__cover_free(&cl.held);
    kt__cover_free(&cl.need);
    kt__grid_free(&grid);
    return s;
}

void kt_program_free(kt_program *prog) {
    if (!prog) return;
    KT_FREE(prog->task);
    KT_FREE(prog->xfer);
    KT_FREE(prog->xfer_first);
    KT_FREE(prog->pairs);
    memset(prog, 0, sizeof *prog);
}

/* Op o's share of the index space on device dev: every variable it splits
   at a cut narrowed to the device's part at that cut. */
static void kt__op_task_box(const kt_graph *g, const kt_plan *p, int o,
                            int64_t dev, kt_range *box) {
    int coords[KT_MAX_CUTS], i;
    kt_op_var_box(&g->op[o], box);
    kt_device_coords(&p->f, dev, coords);
    for (i = 0; i < p->f.count; i++) {
        int v = p->split[o * KT_MAX_CUTS + i];
        if (v >= 0) box[v] = kt_split_range(box[v], p->f.k[i], coords[i]);
    }
}

/* Every op's sub-operator on every device, in op order. */
static kt_status kt__lower_tasks(const kt_graph *g, const kt_plan *p,
                                 kt_program *prog, kt_error *err) {
    int o;
    int64_t dev, k = 0;
    if ((double)g->nop * (double)prog->ndev > (double)(INT_MAX / 2))
        return kt__fail(err, KT_ERR_LIMIT, 0, "lowering: %d ops on %lld "
                        "devices are too many tasks", g->nop,
                        (long long)prog->ndev);
    prog->ntask = (int)(g->nop * prog->ndev);
    prog->task = (kt_task *)kt__calloc((size_t)prog->ntask + 1,
                                       sizeof(kt_task));
    if (!prog->task) return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    for (o = 0; o < g->nop; o++)
        for (dev = 0; dev < prog->ndev; dev++, k++) {
            kt_task *t = &prog->task[k];
            t->op = o;
            t->device = dev;
            kt__op_task_box(g, p, o, dev, t->box);
        }
    return KT_OK;
}

/* Op o's conversions of roles jlo .. jhi - 1 as transfers, appended to
   xs: each input from its tensor's tiling to what o's strategy needs,
   then (role ninputs) o's result to its tensor's tiling.  A role's
   transfers depend on o's strategy and on the tiling of that role's
   tensor, nothing else (what the MCMC search's incremental task graph
   relies on: kt__plan_sim_stage lowers only the roles that change) --
   and on the levels of the collectives' trees, from topology t (NULL:
   a level per cut; kt__collective_levels). */
static kt_status kt__lower_roles(const kt_graph *g, const kt_plan *p,
                                 const kt_topology *t, int o, int jlo,
                                 int jhi, kt__xfers *xs, kt_error *err) {
    const kt_op *op = &g->op[o];
    kt_placement needed[KT_MAX_VARS], produced, tp;
    kt__levels lv;
    kt_status s;
    int j;
    if (p->f.count == 0) return KT_OK;
    kt__collective_levels(&p->f, t, &lv);
    s = kt_op_placements(g, op, &p->f, &p->split[o * KT_MAX_CUTS], needed,
                         &produced, err);
    if (s != KT_OK) return s;
    for (j = jlo; j < jhi && j <= op->ninputs && s == KT_OK; j++) {
        int x = j < op->ninputs ? op->input[j] : op->output;
        const kt_tensor *tx = &g->tensor[x];
        s = kt_placement_from_tiling(&tp, &p->tiling[x], tx->rank, tx->shape,
                                     &p->f, err);
        if (s != KT_OK) break;
        if (j < op->ninputs)
            s = kt__lower_conversion(g, &lv, o, j, x, &tp, &needed[j], xs,
                                     err);
        else
            s = kt__lower_conversion(g, &lv, o, j, x, &produced, &tp, xs,
                                     err);
        kt_placement_free(&tp);
    }
    kt__free_op_placements(op, needed, &produced);
    if (s == KT_OK && xs->oom)
        s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory for transfers");
    return s;
}

/* Every conversion of op o (kt__lower_roles). */
static kt_status kt__lower_op(const kt_graph *g, const kt_plan *p,
                              const kt_topology *t, int o, kt__xfers *xs,
                              kt_error *err) {
    return kt__lower_roles(g, p, t, o, 0, g->op[o].ninputs + 1, xs, err);
}

/* One stable counting sort of the transfer indices order[0..n) by
   device (src or dst): counts has ndev + 1 entries; the result goes to
   sorted. */
static void kt__sort_xfers_by_device(const kt_transfer *x, const int *order,
                                     int n, int by_src, int64_t ndev,
                                     int64_t *counts, int *sorted) {
    int64_t d;
    int i;
    memset(counts, 0, (size_t)(ndev + 1) * sizeof *counts);
    for (i = 0; i < n; i++)
        counts[(by_src ? x[order[i]].src : x[order[i]].dst) + 1]++;
    for (d = 0; d < ndev; d++) counts[d + 1] += counts[d];
    for (i = 0; i < n; i++) {
        int64_t dev = by_src ? x[order[i]].src : x[order[i]].dst;
        sorted[counts[dev]++] = order[i];
    }
}

/* Sorting the transfers by dst and then, stably, by src puts each
   ordered pair's transfers side by side, and adding up each run gives
   its bytes: bytes[i] for transfer i, or its own bytes when bytes is
   NULL (the CPU backend counts what it executed).  Every transfer's
   devices must be below ndev.  *pairs, sorted by (src, dst), is the
   caller's to free. */
static kt_status kt__count_pairs(const kt_transfer *xfer, int n,
                                 const int64_t *bytes, int64_t ndev,
                                 kt_pair_bytes **pairs, int64_t *npairs,
                                 kt_error *err) {
    int i;
    int *order, *sorted;
    int64_t *counts, np = 0;
    kt_pair_bytes *list;
    kt_status s = KT_OK;
    order = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    sorted = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    counts = (int64_t *)kt__calloc((size_t)ndev + 1, sizeof(int64_t));
    list = (kt_pair_bytes *)kt__calloc((size_t)n + 1, sizeof(kt_pair_bytes));
    if (!order || !sorted || !counts || !list) {
        s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory counting pairs");
        KT_FREE(list);
        list = NULL;
        goto done;
    }
    for (i = 0; i < n; i++) order[i] = i;
    kt__sort_xfers_by_device(xfer, order, n, 0, ndev, counts, sorted);
    kt__sort_xfers_by_device(xfer, sorted, n, 1, ndev, counts, order);
    for (i = 0; i < n; i++) {
        const kt_transfer *x = &xfer[order[i]];
        int64_t b = bytes ? bytes[order[i]] : x->bytes;
        kt_pair_bytes *last = np ? &list[np - 1] : NULL;
        if (last && last->src == x->src && last->dst == x->dst) {
            last->bytes += b;
        } else {
            list[np].src = x->src;
            list[np].dst = x->dst;
            list[np++].bytes = b;
        }
    }
    { /* the room of merged runs given back (a failed shrink keeps it) */
        kt_pair_bytes *fit = (kt_pair_bytes *)KT_REALLOC(
            list, (size_t)(np + 1) * sizeof *fit);
        if (fit) list = fit;
    }
done:
    KT_FREE(order);
    KT_FREE(sorted);
    KT_FREE(counts);
    *pairs = list;
    *npairs = np;
    return s;
}

/* The transfers' bytes, each >= 0 and all together within int64_t: the
   task graph and the pair table add them up (a program edited by hand
   could make those sums overflow). */
static kt_status kt__xfer_bytes_check(const kt_transfer *x, int n,
                                      const char *what, kt_error *err) {
    int64_t total = 0;
    int i;
    for (i = 0; i < n; i++) {
        if (x[i].bytes < 0 || x[i].bytes > INT64_MAX - total)
            return kt__fail(err, KT_ERR_INVALID, 0, "%s: transfer %d moves "
                            "%lld bytes%s", what, i, (long long)x[i].bytes,
                            x[i].bytes < 0 ? "" : ", and the transfers "
                            "together more than 2^63 - 1");
        total += x[i].bytes;
    }
    return KT_OK;
}

kt_status kt_program_count_pairs(kt_program *out, kt_error *err) {
    int i;
    kt_status s;
    if (!out || out->ndev < 1 || out->nxfer < 0 ||
        (out->nxfer > 0 && !out->xfer))
        return kt__fail(err, KT_ERR_INVALID, 0, "count pairs: no program");
    for (i = 0; i < out->nxfer; i++) /* (the sort indexes by device) */
        if (out->xfer[i].src < 0 || out->xfer[i].src >= out->ndev ||
            out->xfer[i].dst < 0 || out->xfer[i].dst >= out->ndev)
            return kt__fail(err, KT_ERR_INVALID, 0, "count pairs: transfer "
                            "%d goes from device %lld to %lld, not between "
                            "two of %lld", i, (long long)out->xfer[i].src,
                            (long long)out->xfer[i].dst,
                            (long long)out->ndev);
    if ((s = kt__xfer_bytes_check(out->xfer, out->nxfer, "count pairs",
                                  err)) != KT_OK)
        return s;
    KT_FREE(out->pairs);
    out->pairs = NULL;
    out->npairs = 0;
    s = kt__count_pairs(out->xfer, out->nxfer, NULL, out->ndev, &out->pairs,
                        &out->npairs, err);
    if (s == KT_OK) kt__ok(err);
    return s;
}

int64_t kt_pair_bytes_lookup(const kt_pair_bytes *pairs, int64_t npairs,
                             int64_t src, int64_t dst) {
    int64_t lo = 0, hi = npairs;
    if (!pairs) return 0;
    while (lo < hi) { /* the first pair not before (src, dst) */
        int64_t mid = lo + (hi - lo) / 2;
        const kt_pair_bytes *q = &pairs[mid];
        if (q->src < src || (q->src == src && q->dst < dst))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < npairs && pairs[lo].src == src && pairs[lo].dst == dst)
        return pairs[lo].bytes;
    return 0;
}

int64_t kt_program_bytes_between(const kt_program *prog, int64_t src,
                                 int64_t dst) {
    if (!prog) return 0;
    return kt_pair_bytes_lookup(prog->pairs, prog->npairs, src, dst);
}

static kt_status kt__topology_usable(const kt_topology *t, kt_error *err);

kt_status kt_lower(const kt_graph *g, const kt_plan *p, kt_program *out,
                   kt_error *err) {
    return kt_lower_on(g, p, NULL, out, err);
}

kt_status kt_lower_on(const kt_graph *g, const kt_plan *p,
                      const kt_topology *t, kt_program *out, kt_error *err) {
    kt__xfers xs;
    int o;
    int64_t i;
    kt_status s;
    if (!out) return kt__fail(err, KT_ERR_INVALID, 0, "no program (NULL)");
    memset(out, 0, sizeof *out);
    memset(&xs, 0, sizeof xs);
    if ((s = kt__plan_check(g, p, err)) != KT_OK) return s;
    if (t && (s = kt__topology_usable(t, err)) != KT_OK) return s;
    if (t && t->ndev != kt_factors_devices(&p->f))
        return kt__fail(err, KT_ERR_INVALID, 0, "lowering: the topology has "
                        "%lld devices, the plan %lld", (long long)t->ndev,
                        (long long)kt_factors_devices(&p->f));
    out->ndev = kt_factors_devices(&p->f);
    out->nops = g->nop;
    out->xfer_first = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    if (!out->xfer_first) {
        kt_program_free(out);
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory lowering");
    }
    if ((s = kt__lower_tasks(g, p, out, err)) != KT_OK) {
        kt_program_free(out);
        return s;
    }
    for (o = 0; o < g->nop && s == KT_OK; o++) {
        out->xfer_first[o] = xs.n;
        s = kt__lower_op(g, p, t, o, &xs, err);
    }
    if (s != KT_OK) {
        KT_FREE(xs.x);
        kt_program_free(out);
        return s;
    }
    out->xfer_first[g->nop] = xs.n;
    out->xfer = xs.x;
    out->nxfer = xs.n;
    for (i = 0; i < xs.n; i++) out->total_bytes += xs.x[i].bytes;
    kt__ok(err);
    return KT_OK;
}

/* ------------------------------------------------------------ topology */

/* Splits line in place into at most max words; returns how many (max + 1
   when there are more). */
static int kt__words(char *line, char **word, int max) {
    int n = 0;
    for (;;) {
        while (*line == ' ' || *line == '\t' || *line == '\r') *line++ = '\0';
        if (*line == '\0') return n;
        if (n == max) return max + 1;
        word[n++] = line;
        while (*line && *line != ' ' && *line != '\t' && *line != '\r')
            line++;
    }
}

/* One unnamed kind with the default roofline, no levels yet. */
static void kt__topology_defaults(kt_topology *t) {
    kt_machine m = kt_machine_default();
    memset(t, 0, sizeof *t);
    t->nkinds = 1;
    t->kind[0].peak_flops = m.peak_flops;
    t->kind[0].mem_bw = m.mem_bw;
}

/* Every device of kind 0: the map of a topology that names no kinds. */
static void kt__topology_one_kind(kt_topology *t) {
    t->nkind_ranges = 1;
    t->kind_range[0].devices.lo = 0;
    t->kind_range[0].devices.hi = t->ndev;
    t->kind_range[0].kind = 0;
}

/* The rooflines and the levels of t, its device count (the fanouts'
   product) into *ndev; t is only read. */
static kt_status kt__topology_levels(const kt_topology *t, const char *what,
                                     int64_t *ndev, kt_error *err) {
    int l, k;
    if (t->nkinds < 1 || t->nkinds > KT_MAX_DEVICE_KINDS)
        return kt__fail(err, KT_ERR_INVALID, 0, "topology %s: %d device "
                        "kinds, outside 1..%d", what, t->nkinds,
                        KT_MAX_DEVICE_KINDS);
    for (k = 0; k < t->nkinds; k++)
        if (!kt__rate_ok(t->kind[k].peak_flops, KT__MAX_RATE) ||
            !kt__rate_ok(t->kind[k].mem_bw, KT__MAX_RATE))
            return t->kind[k].name[0]
                ? kt__fail(err, KT_ERR_INVALID, 0, "topology %s: kind %s: "
                           "flops and membw must be from 1 to 1e30 (per "
                           "second)", what, t->kind[k].name)
                : kt__fail(err, KT_ERR_INVALID, 0, "topology %s: device "
                           "flops and memory bandwidth must be from 1 to "
                           "1e30 (per second)", what);
    if (t->nlevels < 1 || t->nlevels > KT_MAX_CUTS)
        return kt__fail(err, KT_ERR_INVALID, 0, "topology %s: %d levels, "
                        "outside 1..%d", what, t->nlevels, KT_MAX_CUTS);
    *ndev = 1;
    for (l = 0; l < t->nlevels; l++) {
        if (t->fanout[l] < 1 ||
            !kt__rate_ok(t->bandwidth[l], KT__MAX_BANDWIDTH) ||
            !(t->latency[l] >= 0) || t->latency[l] > 1e6)
            return kt__fail(err, KT_ERR_INVALID, 0, "topology %s: level %d "
                            "needs a fan-out >= 1, a bandwidth from 1 to "
                            "1e18 bytes/s and a latency from 0 to 1e6 s",
                            what, l + 1);
        if (t->fanout[l] > KT_MAX_DEVICES / *ndev)
            return kt__fail(err, KT_ERR_INVALID, 0, "topology %s: more than "
                            "%d devices", what, KT_MAX_DEVICES);
        *ndev *= t->fanout[l];
    }
    kt__ok(err);
    return KT_OK;
}

/* The same for a topology being read: sets its ndev. */
static kt_status kt__topology_check(kt_topology *t, const char *what,
                                    kt_error *err) {
    return kt__topology_levels(t, what, &t->ndev, err);
}

static int kt__cmp_profile(const void *a, const void *b);

/* A profile as kt_profile_parse makes one: its entries there and sorted
   (lookups are binary searches), every kind name ended.  A profile hung on
   a topology, or filled by hand, is checked so before it is used. */
static kt_status kt__profile_usable(const kt_profile *p, kt_error *err) {
    int i;
    if (p->n < 0 || (p->n > 0 && !p->entry))
        return kt__fail(err, KT_ERR_INVALID, 0, "profile: %d entries%s",
                        p->n, p->n < 0 ? "" : " and no entry array (NULL)");
    for (i = 0; i < p->n; i++) {
        if (!memchr(p->entry[i].kind, '\0', KT_KIND_NAME_MAX) ||
            p->entry[i].nvars < 0 || p->entry[i].nvars > KT_MAX_VARS)
            return kt__fail(err, KT_ERR_INVALID, 0, "profile: entry %d has "
                            "%d variables (0..%d) or an unended kind name",
                            i, p->entry[i].nvars, KT_MAX_VARS);
        if (i > 0 && kt__cmp_profile(&p->entry[i - 1], &p->entry[i]) >= 0)
            return kt__fail(err, KT_ERR_INVALID, 0, "profile: entries %d and "
                            "%d are out of order or the same (sorted by op, "
                            "extents and kind, as kt_profile_parse leaves "
                            "them)", i - 1, i);
    }
    return KT_OK;
}

/* A topology a caller hands in, perhaps filled by hand (the fields are
   public): what the readers would have refused is refused here, before
   the simulator divides by a fanout or indexes a level or a kind with
   it -- and ndev must be the fanouts' product, the kind map's ranges
   devices of it and its kinds ones the topology has. */
static kt_status kt__topology_usable(const kt_topology *t, kt_error *err) {
    int64_t nd;
    int i;
    kt_status s;
    if (!t) return kt__fail(err, KT_ERR_INVALID, 0, "no topology (NULL)");
    if ((s = kt__topology_levels(t, "(as given)", &nd, err)) != KT_OK)
        return s;
    if (nd != t->ndev)
        return kt__fail(err, KT_ERR_INVALID, 0, "topology (as given): ndev "
                        "%lld, but its fanouts make %lld devices",
                        (long long)t->ndev, (long long)nd);
    if (t->nkind_ranges < 0 || t->nkind_ranges > KT_MAX_KIND_RANGES)
        return kt__fail(err, KT_ERR_INVALID, 0, "topology (as given): %d "
                        "kind ranges, outside 0..%d", t->nkind_ranges,
                        KT_MAX_KIND_RANGES);
    for (i = 0; i < t->nkind_ranges; i++) {
        const kt_kind_range *r = &t->kind_range[i];
        if (r->kind < 0 || r->kind >= t->nkinds || r->devices.lo < 0 ||
            r->devices.lo > r->devices.hi || r->devices.hi > nd)
            return kt__fail(err, KT_ERR_INVALID, 0, "topology (as given): "
                            "kind range %d (devices %lld..%lld, kind %d) is "
                            "not of its %lld devices and %d kinds", i + 1,
                            (long long)r->devices.lo,
                            (long long)r->devices.hi - 1, r->kind,
                            (long long)nd, t->nkinds);
        /* the lookup is a binary search: in device order, each device
           once, every device (a device outside them would silently be of
           the first kind) */
        if (r->devices.lo != (i ? t->kind_range[i - 1].devices.hi : 0))
            return kt__fail(err, KT_ERR_INVALID, 0, "topology (as given): "
                            "kind range %d starts at device %lld, not at "
                            "%lld%s: the ranges must cover devices 0..%lld "
                            "once, in order", i + 1,
                            (long long)r->devices.lo,
                            (long long)(i ? t->kind_range[i - 1].devices.hi
                                          : 0),
                            i ? " where the range before it ends" : "",
                            (long long)nd - 1);
        if (i == t->nkind_ranges - 1 && r->devices.hi != nd)
            return kt__fail(err, KT_ERR_INVALID, 0, "topology (as given): "
                            "the last kind range, %d, ends at device %lld; "
                            "the ranges must cover devices 0..%lld once, in "
                            "order", i + 1, (long long)r->devices.hi - 1,
                            (long long)nd - 1);
    }
    for (i = 0; i < t->nkinds; i++)
        if (!memchr(t->kind[i].name, '\0', KT_KIND_NAME_MAX))
            return kt__fail(err, KT_ERR_INVALID, 0, "topology (as given): "
                            "kind %d's name fills all %d bytes of "
                            "kt_device_kind.name without a NUL", i,
                            KT_KIND_NAME_MAX);
    if (t->ports != 0 && t->ports != 1)
        return kt__fail(err, KT_ERR_INVALID, 0, "topology (as given): ports "
                        "%d; 0 (a link per device pair) or 1 (a port per "
                        "device and level)", t->ports);
    return t->profile ? kt__profile_usable(t->profile, err) : KT_OK;
}

/* A level's latency when none is given, in specs and files alike: the
   slowest of several levels is taken for a network hop (5 us), every other
   level for a link inside a node (1 us). */
static double kt__default_latency(int level, int nlevels) {
    return nlevels > 1 && level == 0 ? 5e-6 : 1e-6;
}

kt_status kt_topology_parse(const char *spec, kt_topology *t, kt_error *err) {
    kt_machine m;
    kt_status s = kt_machine_parse(spec, &m, err);
    int l;
    kt__topology_defaults(t);
    if (s != KT_OK) return s;
    /* the spec forms are tiling.h's machines */
    t->nlevels = m.nlevels;
    for (l = 0; l < m.nlevels; l++) {
        t->fanout[l] = m.level_fanout[l];
        t->bandwidth[l] = m.level_bw[l];
        t->latency[l] = kt__default_latency(l, m.nlevels);
    }
    if ((s = kt__topology_check(t, spec, err)) != KT_OK) return s;
    kt__topology_one_kind(t);
    return KT_OK;
}

void kt_topology_single(kt_topology *t, double peak_flops, double mem_bw) {
    kt_machine m = kt_machine_default();
    kt__topology_defaults(t);
    t->nlevels = 1;
    t->fanout[0] = 1;
    t->bandwidth[0] = m.level_bw[0];
    t->latency[0] = 1e-6;
    t->ndev = 1;
    t->kind[0].peak_flops = peak_flops;
    t->kind[0].mem_bw = mem_bw;
    kt__topology_one_kind(t);
}

/* A `devices` item as read, before the level lines are all known. */
typedef struct kt__kind_item {
    int64_t lo, hi;  /* devices lo .. hi - 1; hi < 0: all of them */
    int kind, line;
} kt__kind_item;

#define KT__TOPO_WORDS 16 /* most words on a topology file line */

typedef struct kt__topo_reader {
    const char *name;      /* the file, for messages                     */
    int named;             /* kind lines seen                            */
    int device_line;       /* the first `device` line, 0: none           */
    int flops_line, membw_line; /* the `device flops` / `membw` lines    */
    int kind_line[KT_MAX_DEVICE_KINDS];
    int nitem;
    kt__kind_item item[KT_MAX_KIND_RANGES];
} kt__topo_reader;

/* A kind name: a letter or _ first, then letters, digits, _ . -, so that
   it reads as one word everywhere (files, profiles, SVG labels). */
static int kt__kind_name_ok(const char *s) {
    size_t i, n = strlen(s);
    if (n == 0 || n >= KT_KIND_NAME_MAX || strcmp(s, "all") == 0) return 0;
    if (!isalpha((unsigned char)s[0]) && s[0] != '_') return 0;
    for (i = 1; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '.' &&
            s[i] != '-')
            return 0;
    return 1;
}

int kt_topology_find_kind(const kt_topology *t, const char *name) {
    int k;
    /* (bounded: a topology filled by hand may have any nkinds, and names
       that fill their arrays) */
    for (k = 0; t && name && k < t->nkinds && k < KT_MAX_DEVICE_KINDS; k++)
        if (strncmp(t->kind[k].name, name, KT_KIND_NAME_MAX) == 0 &&
            strlen(name) < KT_KIND_NAME_MAX)
            return k;
    return -1;
}

/* "h200, a100" */
static void kt__kind_list(const kt_topology *t, char *buf, size_t cap) {
    size_t n = 0;
    int k;
    buf[0] = '\0';
    for (k = 0; k < t->nkinds && n < cap; k++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", k ? ", " : "",
                              t->kind[k].name);
}

/* kind NAME flops PEAK membw BW (the two pairs in either order) */
static kt_status kt__topo_kind_line(kt__topo_reader *r, kt_topology *t,
                                    char **w, int n, int line,
                                    kt_error *err) {
    double v[2] = {0, 0};
    int i, have[2] = {0, 0}, k;
    if (r->device_line)
        return kt__fail_named(
            err, KT_ERR_PARSE, r->name, line,
            "a file with kind "
            "lines has no `device` lines (line %d): give flops "
            "and membw on each kind line",
            r->device_line);
    if (n != 6)
        return kt__fail_named(err, KT_ERR_PARSE, r->name, line,
                              "expected `kind NAME "
                              "flops PEAK_FLOPS membw BYTES_PER_S`");
    if (!kt__kind_name_ok(w[1]))
        return kt__fail_named(
            err, KT_ERR_PARSE, r->name, line,
            "kind name '%s': "
            "expected a letter or _ and then letters, digits, "
            "_ . or -, at most %d characters, not `all`",
            w[1], KT_KIND_NAME_MAX - 1);
    if (r->named && (k = kt_topology_find_kind(t, w[1])) >= 0)
        return kt__fail_named(err, KT_ERR_PARSE, r->name, line,
                              "kind %s is declared "
                              "twice (lines %d and %d)",
                              w[1], r->kind_line[k], line);
    if (r->named == KT_MAX_DEVICE_KINDS)
        return kt__fail_named(err, KT_ERR_LIMIT, r->name, line,
                              "more than %d device "
                              "kinds (KT_MAX_DEVICE_KINDS)",
                              KT_MAX_DEVICE_KINDS);
    for (i = 2; i < 6; i += 2) {
        int which = strcmp(w[i], "flops") == 0   ? 0
                    : strcmp(w[i], "membw") == 0 ? 1
                                                 : -1;
        if (which < 0 || have[which])
            return kt__fail_named(err, KT_ERR_PARSE, r->name, line,
                                  "expected `kind "
                                  "NAME flops PEAK_FLOPS membw BYTES_PER_S`");
        if (!kt__parse_rate(w[i + 1], strlen(w[i + 1]), KT__MAX_RATE,
                            &v[which]))
            return kt__fail_named(
                err, KT_ERR_PARSE, r->name, line,
                "kind %s: bad "
                "number '%s' (1 to 1e30 per second, e.g. 989T, "
                "4.8T)",
                w[1], w[i + 1]);
        have[which] = 1;
    }
    /* the first kind line replaces the unnamed kind */
    k = r->named++;
    t->nkinds = r->named;
    memset(&t->kind[k], 0, sizeof t->kind[k]);
    strcpy(t->kind[k].name, w[1]);
    t->kind[k].peak_flops = v[0];
    t->kind[k].mem_bw = v[1];
    r->kind_line[k] = line;
    return KT_OK;
}

/* One item of a device list: "all", "5" or "0-3". */
static kt_status kt__topo_device_item(kt__topo_reader *r, const char *s,
                                      size_t len, int kind, int line,
                                      kt_error *err) {
    char buf[48], *end;
    long long lo, hi;
    kt__kind_item *it;
    if (len == 0 || len >= sizeof buf)
        return kt__fail_named(err, KT_ERR_PARSE, r->name, line,
                              "device list: expected "
                              "all, D or D1-D2 joined by commas (0-3,8)");
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (strcmp(buf, "all") == 0) {
        lo = 0;
        hi = -1;
    } else {
        lo = strtoll(buf, &end, 10);
        hi = lo;
        if (*end == '-' && end > buf && isdigit((unsigned char)end[1]))
            hi = strtoll(end + 1, &end, 10);
        if (*end || !isdigit((unsigned char)buf[0]) || lo < 0 || hi < 0 ||
            lo > KT_MAX_DEVICES || hi > KT_MAX_DEVICES)
            return kt__fail_named(err, KT_ERR_PARSE, r->name, line,
                                  "device list item "
                                  "'%s': expected all, D or D1-D2 (0-3)",
                                  buf);
        if (hi < lo)
            return kt__fail_named(err, KT_ERR_PARSE, r->name, line,
                                  "device range '%s' "
                                  "runs backwards",
                                  buf);
        hi++;
    }
    if (r->nitem == KT_MAX_KIND_RANGES)
        return kt__fail_named(
            err, KT_ERR_LIMIT, r->name, line,
            "more than %d device "
            "list items (KT_MAX_KIND_RANGES): give devices of "
            "one kind as ranges",
            KT_MAX_KIND_RANGES);
    it = &r->item[r->nitem++];
    it->lo = lo;
    it->hi = hi;
    it->kind = kind;
    it->line = line;
    return KT_OK;
}

/* devices LIST [LIST ...] NAME */
static kt_status kt__topo_devices_line(kt__topo_reader *r, kt_topology *t,
                                       char **w, int n, int line,
                                       kt_error *err) {
    const char *name;
    int i, kind;
    kt_status s;
    if (n < 3)
        return kt__fail_named(err, KT_ERR_PARSE, r->name, line,
                              "expected `devices "
                              "LIST KIND` (devices 0-3 h200)");
    if (n > KT__TOPO_WORDS)
        return kt__fail_named(err, KT_ERR_PARSE, r->name, line,
                              "more than %d words: "
                              "join the device lists with commas (0-3,8-11)",
                              KT__TOPO_WORDS);
    name = w[n - 1];
    kind = r->named ? kt_topology_find_kind(t, name) : -1;
    if (kind < 0) {
        char known[KT_MAX_DEVICE_KINDS * (KT_KIND_NAME_MAX + 2)];
        if (!r->named)
            return kt__fail_named(err, KT_ERR_PARSE, r->name, line,
                                  "unknown kind '%s': "
                                  "declare it first with `kind %s flops "
                                  "PEAK_FLOPS membw BYTES_PER_S`",
                                  name, name);
        kt__kind_list(t, known, sizeof known);
        return kt__fail_named(err, KT_ERR_PARSE, r->name, line,
                              "unknown kind '%s' "
                              "(declared so far: %s)",
                              name, known);
    }
    for (i = 1; i < n - 1; i++) {
        const char *p = w[i];
        for (;;) {
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            if ((s = kt__topo_device_item(r, p, len, kind, line, err)) !=
                KT_OK)
                return s;
            if (!comma) break;
            p = comma + 1;
        }
    }
    return KT_OK;
}

/* level FANOUT BANDWIDTH [LATENCY]; a bad field is named with its
   range. */
static kt_status kt__topo_level_line(kt__topo_reader *r, kt_topology *t,
                                     char **w, int n, int line,
                                     kt_error *err) {
    char *end;
    long fan;
    double lat = -1; /* none given: kt__default_latency once all are read */
    if (n != 3 && n != 4)
        return kt__fail_named(err, KT_ERR_PARSE, r->name, line,
                              "expected `level FANOUT BANDWIDTH [LATENCY]`");
    if (t->nlevels == KT_MAX_CUTS)
        return kt__fail_named(err, KT_ERR_PARSE, r->name, line,
                              "more than %d levels", KT_MAX_CUTS);
    errno = 0;
    fan = strtol(w[1], &end, 10);
    if (*end || fan < 1 || errno || !isdigit((unsigned char)w[1][0]))
        return kt__fail_named(err, KT_ERR_PARSE, r->name, line,
                              "fan-out '%s': expected a whole number from 1",
                              w[1]);
    if (!kt__parse_rate(w[2], strlen(w[2]), KT__MAX_BANDWIDTH,
                        &t->bandwidth[t->nlevels]))
        return kt__fail_named(err, KT_ERR_PARSE, r->name, line,
                              "bandwidth '%s': expected 1 to 1e18 bytes/s "
                              "(e.g. 450G, or 400Gb in bits)", w[2]);
    if (n == 4 && (!kt__decimal_text(w[3], strlen(w[3])) ||
                   (lat = strtod(w[3], &end), *end || !(lat >= 0) ||
                    lat > 1e6)))
        return kt__fail_named(err, KT_ERR_PARSE, r->name, line,
                              "latency '%s': expected 0 to 1e6 seconds",
                              w[3]);
    t->fanout[t->nlevels] = fan;
    t->latency[t->nlevels] = lat;
    t->nlevels++;
    return KT_OK;
}

/* device flops PEAK | device membw BW: the unnamed kind's roofline */
static kt_status kt__topo_device_line(kt__topo_reader *r, kt_topology *t,
                                      char **w, int n, int line,
                                      kt_error *err) {
    double v;
    if (n != 3 || (strcmp(w[1], "flops") && strcmp(w[1], "membw")))
        return kt__fail_named(
            err, KT_ERR_PARSE, r->name, line,
            "expected `device "
            "flops PEAK_FLOPS` or `device membw BYTES_PER_S`");
    if (r->named)
        return kt__fail_named(
            err, KT_ERR_PARSE, r->name, line,
            "a file with kind "
            "lines (line %d) has no `device` lines: give flops "
            "and membw on each kind line",
            r->kind_line[0]);
    if (!kt__parse_rate(w[2], strlen(w[2]), KT__MAX_RATE, &v))
        return kt__fail_named(err, KT_ERR_PARSE, r->name, line,
                              "bad number '%s' (1 "
                              "to 1e30 per second, e.g. 67T)",
                              w[2]);
    {   /* each once: a second value would silently replace the first */
        int *seen = !strcmp(w[1], "flops") ? &r->flops_line : &r->membw_line;
        if (*seen)
            return kt__fail_named(err, KT_ERR_PARSE, r->name, line,
                                  "device %s given twice (first on line "
                                  "%d)", w[1], *seen);
        *seen = line;
    }
    if (!strcmp(w[1], "flops")) t->kind[0].peak_flops = v;
    else t->kind[0].mem_bw = v;
    if (!r->device_line) r->device_line = line;
    return KT_OK;
}

static int kt__cmp_kind_item(const void *x, const void *y) {
    const kt__kind_item *a = (const kt__kind_item *)x;
    const kt__kind_item *b = (const kt__kind_item *)y;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    return (a->line > b->line) - (a->line < b->line);
}

/* The device -> kind map from the `devices` items, now that ndev is
   known: every device exactly once, neighbours of one kind merged. */
static kt_status kt__topo_kind_map(kt__topo_reader *r, kt_topology *t,
                                   kt_error *err) {
    int64_t next = 0; /* devices 0 .. next - 1 have their kind */
    int i, reach = 0;
    if (!r->named) {
        kt__topology_one_kind(t);
        return KT_OK;
    }
    for (i = 0; i < r->nitem; i++) { /* in file order: the first bad line */
        kt__kind_item *it = &r->item[i];
        if (it->hi < 0) it->hi = t->ndev;
        if (it->hi > t->ndev)
            return kt__fail_named(
                err, KT_ERR_PARSE, r->name, it->line,
                "device %lld "
                "is out of range: the levels give %lld devices "
                "(0-%lld)",
                (long long)(it->lo > t->ndev ? it->lo : t->ndev),
                (long long)t->ndev, (long long)(t->ndev - 1));
    }
    qsort(r->item, (size_t)r->nitem, sizeof r->item[0], kt__cmp_kind_item);
    t->nkind_ranges = 0;
    for (i = 0; i < r->nitem; i++) {
        const kt__kind_item *it = &r->item[i];
        if (it->lo < next) { /* item `reach` covers it->lo already */
            const kt__kind_item *a = &r->item[reach];
            const kt__kind_item *b = it;
            if (a->line > b->line) {
                b = a;
                a = it;
            }
            if (a->kind == b->kind)
                return kt__fail_named(err, KT_ERR_PARSE, r->name, b->line,
                                      "device "
                                      "%lld is listed twice (lines %d and %d)",
                                      (long long)it->lo, a->line, b->line);
            return kt__fail_named(
                err, KT_ERR_PARSE, r->name, b->line,
                "device %lld is "
                "given two kinds: %s (line %d) and %s (line %d)",
                (long long)it->lo, t->kind[a->kind].name, a->line,
                t->kind[b->kind].name, b->line);
        }
        if (it->lo > next) break; /* a gap: reported below */
        if (t->nkind_ranges > 0 &&
            t->kind_range[t->nkind_ranges - 1].kind == it->kind) {
            t->kind_range[t->nkind_ranges - 1].devices.hi = it->hi;
        } else {
            kt_kind_range *nr = &t->kind_range[t->nkind_ranges++];
            nr->devices.lo = it->lo;
            nr->devices.hi = it->hi;
            nr->kind = it->kind;
        }
        next = it->hi;
        reach = i;
    }
    if (next < t->ndev)
        return kt__fail_named(err, KT_ERR_PARSE, r->name, 0,
                              "device %lld has no kind: "
                              "with kind lines every device needs one from a "
                              "`devices LIST KIND` line",
                              (long long)next);
    return KT_OK;
}

kt_status kt_topology_parse_text(const char *text, const char *name,
                                 kt_topology *t, kt_error *err) {
    kt__topo_reader *r;
    const char *at = text;
    int lineno = 0;
    kt_status s = KT_OK;
    if (!t || !text)
        return kt__fail(err, KT_ERR_INVALID, 0, "%s: no %s (NULL)",
                        name ? name : "topology", t ? "text" : "topology");
    kt__topology_defaults(t);
    r = (kt__topo_reader *)kt__calloc(1, sizeof *r);
    if (!r) return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    r->name = name ? name : "topology";
    name = r->name;
    while (*at && s == KT_OK) {
        char line[512], *w[KT__TOPO_WORDS], *hash;
        const char *eol = strchr(at, '\n');
        size_t len = eol ? (size_t)(eol - at) : strlen(at);
        int n;
        lineno++;
        if (len >= sizeof line) {
            s = kt__fail_named(err, KT_ERR_PARSE, name, lineno,
                               "line longer than "
                               "%d characters",
                               (int)sizeof line - 1);
            break;
        }
        memcpy(line, at, len);
        line[len] = '\0';
        at += len + (eol ? 1 : 0);
        if ((hash = strchr(line, '#')) != NULL) *hash = '\0';
        n = kt__words(line, w, KT__TOPO_WORDS);
        if (n == 0) continue;
        if (!strcmp(w[0], "level"))
            s = kt__topo_level_line(r, t, w, n, lineno, err);
        else if (!strcmp(w[0], "device"))
            s = kt__topo_device_line(r, t, w, n, lineno, err);
        else if (!strcmp(w[0], "kind"))
            s = kt__topo_kind_line(r, t, w, n, lineno, err);
        else if (!strcmp(w[0], "devices"))
            s = kt__topo_devices_line(r, t, w, n, lineno, err);
        else if (!strcmp(w[0], "links") && n == 2 &&
                 (!strcmp(w[1], "ports") || !strcmp(w[1], "pairs")))
            t->ports = !strcmp(w[1], "ports");
        else if (!strcmp(w[0], "links"))
            s = kt__fail_named(err, KT_ERR_PARSE, name, lineno,
                               "expected `links pairs` or `links ports`");
        else
            s = kt__fail_named(
                err, KT_ERR_PARSE, name, lineno,
                "unknown line "
                "(level FANOUT BW [LATENCY] | device flops|membw "
                "VALUE | kind NAME flops F membw B | devices LIST "
                "KIND | links pairs|ports)");
    }
    if (s == KT_OK) {
        int l;
        for (l = 0; l < t->nlevels; l++)
            if (t->latency[l] < 0)
                t->latency[l] = kt__default_latency(l, t->nlevels);
        s = kt__topology_check(t, name, err);
    }
    if (s == KT_OK) s = kt__topo_kind_map(r, t, err);
    KT_FREE(r);
    if (s == KT_OK) kt__ok(err);
    return s;
}

kt_status kt_topology_load_file(const char *path, kt_topology *t,
                                kt_error *err) {
    char *text;
    size_t len;
    kt_status s;
    kt__topology_defaults(t);
    if ((s = kt__read_file(path, "topology file", &text, &len, err)) != KT_OK)
        return s;
    if (strlen(text) != len) {
        KT_FREE(text);
        return kt__fail(err, KT_ERR_PARSE, 0, "topology file %s: not a text "
                        "file (a NUL byte)", path);
    }
    s = kt_topology_parse_text(text, path, t, err);
    KT_FREE(text);
    return s;
}

int kt_topology_level(const kt_topology *t, int64_t a, int64_t b) {
    int64_t span;
    int l;
    if (!t || a == b) return -1;
    span = t->ndev;
    /* level l splits each group of `span` devices into fanout[l] groups */
    for (l = 0; l < t->nlevels && l < KT_MAX_CUTS; l++) {
        /* (a fanout below 1 -- a topology filled by hand, which the
           simulator refuses -- ends the walk rather than dividing by 0) */
        if (t->fanout[l] < 1 || (span /= t->fanout[l]) < 1) return l;
        if (a / span != b / span) return l;
        a %= span;
        b %= span;
    }
    return l > 0 ? l - 1 : 0; /* the last level (level 0 if none) */
}

int kt_topology_device_kind(const kt_topology *t, int64_t dev) {
    int lo = 0, hi = t->nkind_ranges - 1;
    /* binary search of the sorted ranges; a device outside them (a
       topology filled by hand) is of the first kind */
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        const kt_range *d = &t->kind_range[mid].devices;
        if (dev < d->lo) hi = mid - 1;
        else if (dev >= d->hi) lo = mid + 1;
        else return t->kind_range[mid].kind;
    }
    return 0;
}

/* tiling.h's level DP has one roofline for all devices (kt_machine): it
   prices an op by its slowest tile, and with balanced splits every device
   gets about that much, so the op ends when the slowest device does.  The machine's roofline is therefore the slowest
   of the kinds that hold a device, each of its two roofs taken
   separately (see kt_topology_machine's declaration). */
kt_machine kt_topology_machine(const kt_topology *t) {
    kt_machine m;
    int l, i, used = 0;
    memset(&m, 0, sizeof m);
    m.nlevels = t->nlevels < KT_MAX_CUTS ? t->nlevels : KT_MAX_CUTS;
    for (l = 0; l < m.nlevels; l++) {
        m.level_bw[l] = t->bandwidth[l];
        m.level_fanout[l] = t->fanout[l];
    }
    for (i = 0; i < t->nkind_ranges && i < KT_MAX_KIND_RANGES; i++) {
        const kt_device_kind *k;
        if (t->kind_range[i].kind < 0 ||
            t->kind_range[i].kind >= KT_MAX_DEVICE_KINDS)
            continue; /* (refused by every consumer: kt__topology_usable) */
        k = &t->kind[t->kind_range[i].kind];
        if (!used || k->peak_flops < m.peak_flops) m.peak_flops = k->peak_flops;
        if (!used || k->mem_bw < m.mem_bw) m.mem_bw = k->mem_bw;
        used = 1;
    }
    if (!used) { /* no map: a topology filled by hand, the first kind */
        m.peak_flops = t->kind[0].peak_flops;
        m.mem_bw = t->kind[0].mem_bw;
    }
    return m;
}

/* ------------------------------------------------------------- profiles */

static int kt__cmp_profile(const void *x, const void *y) {
    const kt_profile_entry *a = (const kt_profile_entry *)x;
    const kt_profile_entry *b = (const kt_profile_entry *)y;
    int v;
    if (a->op != b->op) return a->op < b->op ? -1 : 1;
    for (v = 0; v < a->nvars; v++)
        if (a->extent[v] != b->extent[v])
            return a->extent[v] < b->extent[v] ? -1 : 1;
    return strcmp(a->kind, b->kind); /* "" (any kind) first */
}

void kt_profile_free(kt_profile *p) {
    if (!p) return;
    KT_FREE(p->entry);
    memset(p, 0, sizeof *p);
}

/* One line `OP EXTENTS SECONDS [KIND]` into *e. */
static kt_status kt__profile_line(const kt_graph *g, char *line,
                                  int lineno, kt_profile_entry *e,
                                  kt_error *err) {
    char *w[4], *name, *ext, *secs, *end;
    const char *p;
    int nwords = kt__words(line, w, 4), n, o;
    const kt_op *op = NULL;
    if (nwords != 3 && nwords != 4)
        return kt__fail(err, KT_ERR_PARSE, lineno, "profile: expected `OP "
                        "EXTENTS SECONDS [KIND]`, e.g. `fc1 16x1024x1024 "
                        "1.2e-4` or `fc1 16x1024x1024 3e-4 a100`");
    name = w[0];
    ext = w[1];
    secs = w[2];
    for (o = 0; o < g->nop && !op; o++)
        if (strcmp(g->op[o].name, name) == 0) op = &g->op[o];
    if (!op)
        return kt__fail(err, KT_ERR_PARSE, lineno, "profile: the graph has "
                        "no operator %s", name);
    memset(e, 0, sizeof *e);
    e->op = (int)(op - g->op);
    e->line = lineno;
    e->nvars = op->nvars;
    for (p = ext, n = 0;; n++) {
        long long v = strtoll(p, &end, 10);
        if (n == op->nvars)
            return kt__fail(err, KT_ERR_PARSE, lineno, "profile: operator %s "
                            "has %d index variables, '%s' gives more "
                            "extents", name, op->nvars, ext);
        /* (digits only: strtoll would also take blanks and a sign, and an
           empty field, `16xx64`, was reported as out of range) */
        if (!isdigit((unsigned char)*p))
            return kt__fail(err, KT_ERR_PARSE, lineno, "profile: operator %s: "
                            "extent %d of '%s' is not a whole number (digits; "
                            "extents joined by x)", name, n + 1, ext);
        if (v < 1 || v > op->var[n].extent)
            return kt__fail(err, KT_ERR_PARSE, lineno, "profile: operator %s: "
                            "extent %d of '%s' must be 1 to %lld (variable "
                            "%s)", name, n + 1, ext,
                            (long long)op->var[n].extent, op->var[n].name);
        e->extent[n] = v;
        if (*end == '\0') break;
        if (*end != 'x')
            return kt__fail(err, KT_ERR_PARSE, lineno, "profile: extents "
                            "'%s': expected numbers joined by x", ext);
        p = end + 1;
    }
    if (n + 1 != op->nvars)
        return kt__fail(err, KT_ERR_PARSE, lineno, "profile: operator %s has "
                        "%d index variables, '%s' gives %d extents", name,
                        op->nvars, ext, n + 1);
    e->seconds = strtod(secs, &end);
    if (*end || !(e->seconds > 0) || e->seconds > 1e6)
        return kt__fail(err, KT_ERR_PARSE, lineno, "profile: run time '%s' "
                        "must be a positive number of seconds, at most 1e6",
                        secs);
    if (nwords == 4) {
        if (!kt__kind_name_ok(w[3]))
            return kt__fail(err, KT_ERR_PARSE, lineno, "profile: expected "
                            "`OP EXTENTS SECONDS [KIND]`; '%s' is not a "
                            "device kind name (a letter or _, then letters, "
                            "digits, _ . or -)", w[3]);
        strcpy(e->kind, w[3]);
    }
    return KT_OK;
}

kt_status kt_profile_parse(const kt_graph *g, const char *text, size_t len,
                           kt_profile *out, kt_error *err) {
    size_t at = 0, cap = 0;
    int lineno = 0, i;
    kt_status s = KT_OK;
    if (!out)
        return kt__fail(err, KT_ERR_INVALID, 0, "profile: no kt_profile "
                        "(NULL)");
    memset(out, 0, sizeof *out);
    if ((s = kt__graph_check_final(g, err)) != KT_OK) return s;
    if (!text && len > 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "profile: no text (NULL) "
                        "of %lu bytes", (unsigned long)len);
    while (at < len && s == KT_OK) {
        char line[1024];
        size_t n = 0;
        lineno++;
        while (at < len && text[at] != '\n') {
            if (text[at] == '\0') { /* C's strings would end the line */
                s = kt__fail(err, KT_ERR_PARSE, lineno, "profile: a NUL "
                             "byte in the text");
                break;
            }
            if (n + 1 < sizeof line) line[n++] = text[at];
            else n = sizeof line; /* too long: reported below */
            at++;
        }
        if (s != KT_OK) break;
        at++;
        if (n >= sizeof line) {
            s = kt__fail(err, KT_ERR_PARSE, lineno, "profile: line longer "
                         "than %d characters", (int)sizeof line - 1);
            break;
        }
        line[n] = '\0';
        if (strchr(line, '#')) *strchr(line, '#') = '\0';
        if (strspn(line, " \t\r") == strlen(line)) continue;
        if ((size_t)out->n == cap) {
            size_t nc = cap ? 2 * cap : 64;
            kt_profile_entry *ne = (kt_profile_entry *)KT_REALLOC(
                out->entry, nc * sizeof *ne);
            if (!ne) {
                s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
                break;
            }
            out->entry = ne;
            cap = nc;
        }
        s = kt__profile_line(g, line, lineno, &out->entry[out->n], err);
        if (s == KT_OK) out->n++;
    }
    if (s == KT_OK && out->n > 1) {
        qsort(out->entry, (size_t)out->n, sizeof *out->entry,
              kt__cmp_profile);
        for (i = 1; i < out->n && s == KT_OK; i++)
            if (kt__cmp_profile(&out->entry[i - 1], &out->entry[i]) == 0) {
                const kt_profile_entry *a = &out->entry[i - 1];
                const kt_profile_entry *b = &out->entry[i];
                s = kt__fail(err, KT_ERR_PARSE,
                             a->line > b->line ? a->line : b->line,
                             "profile: operator %s is listed twice with the "
                             "same extents%s%s (lines %d and %d)",
                             g->op[b->op].name, b->kind[0] ? " on " : "",
                             b->kind,
                             a->line < b->line ? a->line : b->line,
                             a->line > b->line ? a->line : b->line);
            }
    }
    if (s != KT_OK) {
        kt_profile_free(out);
        return s;
    }
    kt__ok(err);
    return KT_OK;
}

kt_status kt_profile_load_file(const kt_graph *g, const char *path,
                               kt_profile *out, kt_error *err) {
    char *text;
    size_t len;
    kt_status s;
    memset(out, 0, sizeof *out);
    if ((s = kt__read_file(path, "profile", &text, &len, err)) != KT_OK)
        return s;
    s = kt_profile_parse(g, text, len, out, err);
    if (s != KT_OK)
        kt__error_in_file(err, path);
    KT_FREE(text);
    return s;
}

/* The entry of exactly (op, extents of box, kind), or NULL. */
static const kt_profile_entry *kt__profile_find(const kt_profile *p, int op,
                                                const kt_range *box,
                                                int nvars, const char *kind) {
    kt_profile_entry key;
    const kt_profile_entry *hit;
    int v;
    if (!p || p->n == 0 || nvars > KT_MAX_VARS ||
        strlen(kind) >= KT_KIND_NAME_MAX)
        return NULL;
    memset(&key, 0, sizeof key);
    key.op = op;
    key.nvars = nvars;
    for (v = 0; v < nvars; v++) key.extent[v] = box[v].hi - box[v].lo;
    strcpy(key.kind, kind);
    hit = (const kt_profile_entry *)bsearch(&key, p->entry, (size_t)p->n,
                                            sizeof key, kt__cmp_profile);
    return hit && hit->nvars == nvars ? hit : NULL;
}

double kt_profile_lookup_kind(const kt_profile *p, int op,
                              const kt_range *box, int nvars,
                              const char *kind) {
    const kt_profile_entry *hit = NULL;
    /* the time measured on this kind, else one that holds for any kind;
       never another kind's: the roofline of this one is a better guess */
    if (kind && kind[0]) hit = kt__profile_find(p, op, box, nvars, kind);
    if (!hit) hit = kt__profile_find(p, op, box, nvars, "");
    return hit ? hit->seconds : -1;
}

double kt_profile_lookup(const kt_profile *p, int op, const kt_range *box,
                         int nvars) {
    return kt_profile_lookup_kind(p, op, box, nvars, NULL);
}

kt_status kt_profile_check_kinds(const kt_profile *p, const kt_topology *t,
                                 kt_error *err) {
    int i;
    kt_status s;
    if (p && (s = kt__profile_usable(p, err)) != KT_OK) return s;
    /* (a profile without kind names needs no topology to agree with) */
    for (i = 0; !t && p && i < p->n; i++)
        if (p->entry[i].kind[0])
            return kt__fail(err, KT_ERR_INVALID, p->entry[i].line, "profile: "
                            "kind %s, and no topology (NULL) to find it in",
                            p->entry[i].kind);
    if (!t) return KT_OK;
    if ((s = kt__topology_usable(t, err)) != KT_OK) return s;
    for (i = 0; p && i < p->n; i++) {
        const kt_profile_entry *e = &p->entry[i];
        char known[KT_MAX_DEVICE_KINDS * (KT_KIND_NAME_MAX + 2)];
        if (!e->kind[0] || kt_topology_find_kind(t, e->kind) >= 0) continue;
        kt__kind_list(t, known, sizeof known);
        if (!known[0])
            return kt__fail(err, KT_ERR_INVALID, e->line, "profile: kind %s "
                            "is not a kind of the topology (it names no "
                            "kinds)", e->kind);
        return kt__fail(err, KT_ERR_INVALID, e->line, "profile: kind %s is "
                        "not a kind of the topology (%s)", e->kind, known);
    }
    kt__ok(err);
    return KT_OK;
}

static double kt__task_seconds(const kt_graph *g, const kt_op *op,
                               const kt_range *box, const kt_topology *t,
                               int64_t device);

static kt_status kt__program_check(const kt_graph *g, const kt_program *prog,
                                   int64_t nd, kt_error *err);

kt_status kt_profile_write(const kt_graph *g, const kt_program *prog,
                           const kt_topology *t, FILE *f, kt_error *err) {
    kt_profile seen;
    kt_status s;
    int i, v;
    /* the program indexes g's ops and t's devices: another graph's or
       another device count's is refused, not read out of bounds */
    if ((s = kt__topology_usable(t, err)) != KT_OK) return s;
    if (!prog || !f)
        return kt__fail(err, KT_ERR_INVALID, 0, "profile: no %s (NULL)",
                        prog ? "file" : "program");
    if ((s = kt__program_check(g, prog, t->ndev, err)) != KT_OK) return s;
    memset(&seen, 0, sizeof seen);
    seen.entry = (kt_profile_entry *)kt__calloc((size_t)prog->ntask + 1,
                                                sizeof *seen.entry);
    if (!seen.entry) return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    for (i = 0; i < prog->ntask; i++) {
        const kt_task *tk = &prog->task[i];
        kt_profile_entry *e = &seen.entry[seen.n++];
        e->op = tk->op;
        e->nvars = g->op[tk->op].nvars;
        for (v = 0; v < e->nvars; v++)
            e->extent[v] = tk->box[v].hi - tk->box[v].lo;
        /* the unnamed kind writes no kind column: the old format */
        strcpy(e->kind,
               t->kind[kt_topology_device_kind(t, tk->device)].name);
        e->seconds =
            kt__task_seconds(g, &g->op[tk->op], tk->box, t, tk->device);
    }
    qsort(seen.entry, (size_t)seen.n, sizeof *seen.entry, kt__cmp_profile);
    fprintf(f, "# ktile profile: OP EXTENTS SECONDS [KIND], one line per "
               "distinct sub-operator\n# (and device kind); replace the "
               "modelled times with measured ones\n");
    for (i = 0; i < seen.n; i++) {
        const kt_profile_entry *e = &seen.entry[i];
        double secs = e->seconds;
        int j;
        if (i > 0 && kt__cmp_profile(&seen.entry[i - 1], e) == 0) continue;
        /* tiles of one shape can differ in padding at the borders: the
           slowest of them, whatever order qsort left them in */
        for (j = i + 1; j < seen.n &&
                        kt__cmp_profile(&seen.entry[j], e) == 0; j++)
            if (seen.entry[j].seconds > secs) secs = seen.entry[j].seconds;
        fprintf(f, "%s ", g->op[e->op].name);
        for (v = 0; v < e->nvars; v++)
            fprintf(f, "%s%lld", v ? "x" : "", (long long)e->extent[v]);
        fprintf(f, " %.17g%s%s\n", secs, e->kind[0] ? " " : "", e->kind);
    }
    KT_FREE(seen.entry);
    /* a full disk or a stream not open for writing: the profile is not
       there, whatever fprintf returned line by line */
    if (fflush(f) != 0 || ferror(f))
        return kt__fail(err, KT_ERR_IO, 0, "profile: writing failed: %s",
                        strerror(errno));
    kt__ok(err);
    return KT_OK;
}

/* -------------------------------------------------- task graph, simulation */

void kt_sim_free(kt_sim *s) {
    if (!s) return;
    KT_FREE(s->task);
    KT_FREE(s->pred);
    KT_FREE(s->busy);
    KT_FREE(s->critical);
    kt_sim_invalidate(s);
    memset(s, 0, sizeof *s);
}

/* Time of one sub-operator on its box on `device` (FlexFlow 5.1: a
   task's exeTime is its time "on the given device", so devices of
   different kinds differ): its profile entry for the device's kind, or
   the roofline of that kind (kt__box_work's flops over the kind's peak,
   or its bytes over the kind's memory bandwidth, whichever is longer). */
static double kt__task_seconds(const kt_graph *g, const kt_op *op,
                               const kt_range *box, const kt_topology *t,
                               int64_t device) {
    const kt_device_kind *kind = &t->kind[kt_topology_device_kind(t, device)];
    double flops, bytes, a, b;
    if (t->profile) {
        double measured = kt_profile_lookup_kind(
            t->profile, (int)(op - g->op), box, op->nvars, kind->name);
        if (measured >= 0) return measured;
    }
    kt__box_work(g, op, box, &flops, &bytes);
    a = flops / kind->peak_flops;
    b = bytes / kind->mem_bw;
    return a > b ? a : b;
}

/* The links a program uses, numbered in order of first use: an open-
   addressing map from src * ndev + dst to a link id, so memory follows the
   pairs that talk, not ndev^2. */
typedef struct kt__links {
    int64_t *key;
    int64_t *id;
    int64_t cap, n;
    int oom;
} kt__links;

/* The slot a link key starts probing at: the key times 2^64 / golden
   ratio, its high half folded onto the low (where every key bit has
   reached), masked to the table.  Keys are src * ndev + dst, so
   key % cap with a power-of-two cap kept only dst's low bits: the links
   of a device crowded into one run of slots, and finding a link took a
   probe per link already there (65% of a 16,384-device build). */
static int64_t kt__link_slot(int64_t key, int64_t cap) {
    uint64_t h = (uint64_t)key * UINT64_C(0x9e3779b97f4a7c15);
    return (int64_t)((h ^ (h >> 32)) & (uint64_t)(cap - 1)); /* (cap: a
                                                              power of 2) */
}

static int64_t kt__link_id(kt__links *l, int64_t key) {
    int64_t i;
    if (2 * (l->n + 1) > l->cap) {
        int64_t nc = l->cap ? 2 * l->cap : 1024, j;
        int64_t *nk = (int64_t *)KT_MALLOC(sizeof(int64_t) * (size_t)nc);
        int64_t *ni = (int64_t *)KT_MALLOC(sizeof(int64_t) * (size_t)nc);
        if (!nk || !ni) {
            KT_FREE(nk);
            KT_FREE(ni);
            l->oom = 1;
            return 0;
        }
        for (j = 0; j < nc; j++) nk[j] = -1;
        for (j = 0; j < l->cap; j++)
            if (l->key[j] >= 0) {
                int64_t k = kt__link_slot(l->key[j], nc);
                while (nk[k] >= 0) k = (k + 1) & (nc - 1);
                nk[k] = l->key[j];
                ni[k] = l->id[j];
            }
        KT_FREE(l->key);
        KT_FREE(l->id);
        l->key = nk;
        l->id = ni;
        l->cap = nc;
    }
    for (i = kt__link_slot(key, l->cap); l->key[i] >= 0;
         i = (i + 1) & (l->cap - 1))
        if (l->key[i] == key) return l->id[i];
    l->key[i] = key;
    l->id[i] = l->n;
    return l->n++;
}

/* A transfer's place in its conversion's collective and what it sends:
   4 * stage + 2 * relay + 1 for a copy (reductions first at one stage),
   below 4 * KT_XFER_STAGES.  Tasks aggregate transfers of one rank. */
static int kt__xfer_rank(const kt_transfer *x) {
    return 4 * x->stage + 2 * x->relay + (x->kind == KT_XFER_COPY);
}
#define KT__RANK_STAGE(r) ((r) >> 2)
#define KT__RANK_RELAY(r) (((r) >> 1) & 1)
#define KT__RANK_COPY(r) ((r)&1)

/* Does a transfer of rank ru into the source of a transfer of rank ri
   (one op, one role) bring what the latter sends (kt_transfer)?  A relay
   forwards what copies delivered at lower stages; a reduction sends its
   sender's result once the reductions into it of lower stages are
   combined; a copy of the sender's own result (a root's sum) waits for
   every reduction into it, at its stage or below; the rest -- a holder
   sending its own tile -- waits for none.  Waiting for more would only
   slow the model, and for the transfers into a device from every other
   (an all-to-all) cost N^3 to list. */
static int kt__xfer_feeds(int ru, int ri) {
    if (KT__RANK_RELAY(ri))
        return KT__RANK_COPY(ru) && KT__RANK_STAGE(ru) < KT__RANK_STAGE(ri);
    if (KT__RANK_COPY(ru)) return 0;
    return KT__RANK_COPY(ri) ? KT__RANK_STAGE(ru) <= KT__RANK_STAGE(ri)
                             : KT__RANK_STAGE(ru) < KT__RANK_STAGE(ri);
}

/* Transfers are aggregated per (op, role, kind, stage, relay, src, dst):
   one task moves all of a conversion's bytes between two devices of one
   kind at one stage of its collective.  Sorting an op's transfers by that key
   brings each task's transfers together (kt__tg_sort); the sort is
   stable, so a task's bytes are added up in the order they were lowered
   (its seconds, a floating-point sum, depend on that order). */
static int kt__same_xfer_key(const kt_transfer *a, const kt_transfer *b) {
    return a->role == b->role && kt__xfer_rank(a) == kt__xfer_rank(b) &&
           a->src == b->src && a->dst == b->dst;
}

kt_status kt_schedule_parse(const kt_graph *g, const char *text,
                            const char *name, int *order, kt_error *err) {
    int *line_of, n = 0, line = 1;
    const char *p = text ? text : "";
    kt_status s = KT_OK;
    if (!name) name = "schedule";
    if ((s = kt__graph_check_final(g, err)) != KT_OK) return s;
    if (!order)
        return kt__fail(err, KT_ERR_INVALID, 0, "%s: no order (NULL)", name);
    line_of = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    if (!line_of) return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    while (*p && s == KT_OK) {
        char word[KT_NAME_MAX + 8];
        size_t len;
        int o;
        if (*p == '\n') line++;
        if (*p == '#') { /* a comment, to the end of the line */
            while (*p && *p != '\n') p++;
            continue;
        }
        if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
            p++;
            continue;
        }
        len = strcspn(p, " \t\r\n#");
        if (len >= sizeof word || !kt__is_name_start((unsigned char)*p)) {
            s = kt__fail_named(err, KT_ERR_PARSE, name, line, "expected an op "
                               "name (a statement's output, such as h1 or "
                               "W1.update)");
            break;
        }
        memcpy(word, p, len);
        word[len] = '\0';
        p += len;
        o = kt_graph_find_op(g, word);
        if (o < 0 && kt_graph_find_tensor(g, word) >= 0)
            s = kt__fail_named(err, KT_ERR_PARSE, name, line, "%s is a "
                               "tensor no op of the graph computes (an input, "
                               "weight or state)", word);
        else if (o < 0)
            s = kt__fail_named(err, KT_ERR_PARSE, name, line, "the graph has "
                               "no op %s", word);
        else if (line_of[o])
            s = kt__fail_named(err, KT_ERR_PARSE, name, line, "op %s again "
                               "(first on line %d)", word, line_of[o]);
        else {
            line_of[o] = line;
            order[n++] = o;
        }
    }
    if (s == KT_OK && n < g->nop) {
        int o;
        for (o = 0; o < g->nop && line_of[o]; o++) continue;
        s = kt__fail_named(err, KT_ERR_PARSE, name, 0, "%d of the graph's %d "
                           "ops listed; op %s is missing", n, g->nop,
                           g->op[o].name);
    }
    KT_FREE(line_of);
    if (s == KT_OK && (s = kt_schedule_check(g, order, n, err)) != KT_OK &&
        err) { /* the order breaks a dependence: the message names the ops */
        char msg[sizeof err->message];
        memcpy(msg, err->message, sizeof msg);
        (void)kt__fail_named(err, s, name, 0, "%s", msg);
    }
    return s;
}

kt_status kt_schedule_load_file(const kt_graph *g, const char *path,
                                int *order, kt_error *err) {
    char *text;
    size_t len;
    kt_status s;
    if ((s = kt__read_file(path, "schedule", &text, &len, err)) != KT_OK)
        return s;
    if (strlen(text) != len)
        s = kt__fail_named(err, KT_ERR_PARSE, path, 0, "a NUL byte in the "
                           "text");
    else
        s = kt_schedule_parse(g, text, path, order, err);
    KT_FREE(text);
    return s;
}

kt_status kt_schedule_check(const kt_graph *g, const int *order, int n,
                            kt_error *err) {
    int *pos, i, j, o2;
    kt_status s = kt__graph_check_final(g, err);
    if (s != KT_OK) return s;
    if (!order && n > 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "schedule: no order (NULL)");
    pos = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    if (!pos) return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    if (n != g->nop)
        s = kt__fail(err, KT_ERR_INVALID, 0, "schedule: %d ops given, the "
                     "graph has %d", n, g->nop);
    for (i = 0; i < g->nop; i++) pos[i] = -1;
    for (i = 0; i < n && s == KT_OK; i++) {
        if (order[i] < 0 || order[i] >= g->nop)
            s = kt__fail(err, KT_ERR_INVALID, 0, "schedule: entry %d is op "
                         "%d, not an op of the graph", i, order[i]);
        else if (pos[order[i]] >= 0)
            s = kt__fail(err, KT_ERR_INVALID, 0, "schedule: op %s appears "
                         "twice", g->op[order[i]].name);
        else
            pos[order[i]] = i;
    }
    for (i = 0; i < g->nop && s == KT_OK; i++) {
        const kt_op *op = &g->op[i];
        for (j = 0; j < op->ninputs && s == KT_OK; j++) {
            int pr = g->tensor[op->input[j]].producer;
            if (pr >= 0 && pr != i && pos[pr] > pos[i])
                s = kt__fail(err, KT_ERR_INVALID, 0, "schedule: op %s runs "
                             "before %s, which produces its input %s",
                             op->name, g->op[pr].name,
                             g->tensor[op->input[j]].name);
        }
        if (op->in_place)
            for (o2 = 0; o2 < g->nop && s == KT_OK; o2++)
                if (o2 != i && pos[o2] > pos[i])
                    for (j = 0; j < g->op[o2].ninputs; j++)
                        if (g->op[o2].input[j] == op->output) {
                            s = kt__fail(err, KT_ERR_INVALID, 0, "schedule: "
                                         "%s updates %s before %s reads it",
                                         op->name, g->tensor[op->output].name,
                                         g->op[o2].name);
                            break;
                        }
    }
    KT_FREE(pos);
    if (s == KT_OK) kt__ok(err);
    return s;
}

/* Grows *p to hold `need` elements: to `want` of them when want >= need,
   else to the next doubling of its capacity.  Only its first `used`
   elements are kept: an array whose tail, or whole, is to be rewritten
   before it is read is allocated anew and only what it holds is copied
   (a realloc copies every element, and the copy touches -- faults in --
   a fresh page for each 4 KB of it: on wresnet-152 over 64 devices
   those page faults were a fifth of the time of an MCMC chain).  Every
   element kept: a realloc, which may move no page at all.  NULL: out of
   memory, and *p is as it was.  (Capacity only ever grows, so a caller
   that refills one kt_sim for many task graphs allocates rarely.) */
static void *kt__grow_to(void *p, size_t *cap, size_t need, size_t want,
                         size_t used, size_t elem) {
    size_t nc;
    void *q;
    if (need <= *cap && p) return p;
    nc = want;
    if (nc < need)
        for (nc = *cap ? *cap : 64; nc < need;) nc *= 2;
    if (used >= *cap || !p) {
        q = KT_REALLOC(p, nc * elem);
    } else {
        if (!(q = KT_MALLOC(nc * elem))) return NULL;
        if (used) memcpy(q, p, used * elem);
        KT_FREE(p);
    }
    if (q) *cap = nc;
    return q;
}

static void *kt__sim_grow(void *p, size_t *cap, size_t need, size_t elem) {
    return kt__grow_to(p, cap, need, 0, (size_t)-1, elem);
}

/* ----------------------------------------------- the task graph, op by op */

/* A task graph laid out op by op (FlexFlow 5.2), so that it can be built
   in one go (kt_sim_build) or updated when some ops' conversions change
   (an MCMC proposal, FlexFlow 6: kt_plan_sim_propose).  Tasks: the compute
   tasks first, task o * nd + d for op o on device d, then each op's
   transfer tasks -- "its block", tasks base[o] .. base[o + 1), ops in
   order, a block sorted by (role, stage, relay, kind, src, dst).  The
   predecessor lists are stored op by op as well: those of op o's compute
   tasks, then those of its block, form pred[seg[o] .. seg[o + 1]).

   Where the predecessors come from.  Op o's compute task on d waits for
   the op run before it on d, for the producers of its inputs on d and
   their output transfers into d, for o's own input transfers into d and,
   when o updates a tensor in place, for every transfer reading that
   tensor out of d and its producer's output transfers out of and into
   d (the old value's last uses there).  A transfer of one of o's inputs
   waits for the input's producer on its source and that producer's
   output transfers into the source; a transfer of o's output waits for
   o on its source (and, for an in-place o, on its destination, whose
   tile it overwrites); in a collective, a transfer also waits for those
   of its role into its source that bring what it sends
   (kt__xfer_feeds).  So the lists of op o's tasks read only the blocks
   of o, of the producers of its inputs and, for an in-place o, of the
   readers and the producer of its output: when some blocks change, only
   those ops' lists are rebuilt. */
/* The most task slots, or predecessor or successor entries, a task
   graph may hold: they are numbered with ints (and arrays get one more
   entry).  kt_plan_sim's graphs, whose slots have room, can pass it where
   the compact numbering of the same plan fits. */
#ifndef KT__PS_MAX /* (a test lowers it, to reach it with small graphs) */
#define KT__PS_MAX (INT_MAX - 1)
#endif

typedef struct kt__tg {
    kt_sim sim;       /* tasks, predecessor lists, devices, links          */
    int *role, *rank; /* per task: a transfer's role and kt__xfer_rank     */
    int *base;        /* nop + 1: each op's first block task               */
    int *bend;        /* nop: the end of each op's block (base[o + 1] but
                         in kt_plan_sim's graphs, whose blocks have room:
                         tasks bend[o] .. base[o + 1] are holes)          */
    int *seg;         /* nop + 1: each op's first predecessor entry        */
    int *send;        /* nop: the end of its entries (seg[o + 1] but in
                         kt_plan_sim's graphs, the same way)              */
    int full;         /* an entry was refused: past KT__PS_MAX            */
    size_t cap_task, cap_pred;
} kt__tg;

/* What building a task graph needs besides the tasks: the program order,
   who reads each tensor, the link ids, scratch. */
typedef struct kt__tgctx {
    const kt_graph *g;
    const kt_topology *t;
    int64_t nd;
    int *prev;              /* nop: the op run before o on every device     */
    int *rd_first, *rd_op;  /* tensor x -> the ops reading it, ascending    */
    kt__links links;        /* (src, dst) -> link id, in order of first use */
    int *gfirst, *gitem;    /* scratch of kt__tg_group                      */
    size_t cap_gfirst, cap_gitem;
    int *xord, *xtmp, *xcnt; /* scratch of kt__tg_sort                      */
    size_t cap_xord, cap_xcnt;
} kt__tgctx;

static void kt__tg_free(kt__tg *tg) {
    kt_sim_free(&tg->sim);
    KT_FREE(tg->role);
    KT_FREE(tg->rank);
    KT_FREE(tg->base);
    KT_FREE(tg->bend);
    KT_FREE(tg->seg);
    KT_FREE(tg->send);
    memset(tg, 0, sizeof *tg);
}

static void kt__tgctx_free(kt__tgctx *c) {
    KT_FREE(c->prev);
    KT_FREE(c->rd_first);
    KT_FREE(c->rd_op);
    KT_FREE(c->links.key);
    KT_FREE(c->links.id);
    KT_FREE(c->gfirst);
    KT_FREE(c->gitem);
    KT_FREE(c->xord);
    KT_FREE(c->xtmp);
    KT_FREE(c->xcnt);
    memset(c, 0, sizeof *c);
}

/* order: the ops' order on every device (NULL: op order), already
   checked. */
static int kt__tgctx_init(kt__tgctx *c, const kt_graph *g,
                          const kt_topology *t, const int *order) {
    int o, j, x;
    memset(c, 0, sizeof *c);
    c->g = g;
    c->t = t;
    c->nd = t->ndev;
    c->prev = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    c->rd_first = (int *)kt__calloc((size_t)g->ntensor + 2, sizeof(int));
    if (!c->prev || !c->rd_first) return 0;
    for (o = 0; o < g->nop; o++) {
        int here = order ? order[o] : o;
        c->prev[here] = o == 0 ? -1 : (order ? order[o - 1] : o - 1);
    }
    for (o = 0; o < g->nop; o++)
        for (j = 0; j < g->op[o].ninputs; j++)
            c->rd_first[g->op[o].input[j] + 1]++;
    for (x = 0; x < g->ntensor; x++) c->rd_first[x + 1] += c->rd_first[x];
    c->rd_op = (int *)kt__calloc((size_t)c->rd_first[g->ntensor] + 1,
                                 sizeof(int));
    if (!c->rd_op) return 0;
    for (o = 0; o < g->nop; o++) /* ascending; inputs are distinct */
        for (j = 0; j < g->op[o].ninputs; j++)
            c->rd_op[c->rd_first[g->op[o].input[j]]++] = o;
    for (x = g->ntensor; x > 0; x--) c->rd_first[x] = c->rd_first[x - 1];
    c->rd_first[0] = 0;
    return 1;
}

/* Room for n tasks and p predecessor entries (a growth of the tasks'
   arrays as kt__grow_to's `want` and `used` say). */
static int kt__tg_reserve_to(kt__tg *tg, size_t n, size_t p, size_t want,
                             size_t used) {
    void *np;
    if (n > tg->cap_task || !tg->sim.task) {
        size_t c = tg->cap_task;
        if (!(np = kt__grow_to(tg->sim.task, &c, n, want, used,
                               sizeof(kt_sim_task))))
            return 0;
        tg->sim.task = (kt_sim_task *)np;
        c = tg->cap_task;
        if (!(np = kt__grow_to(tg->role, &c, n, want, used, sizeof(int))))
            return 0;
        tg->role = (int *)np;
        c = tg->cap_task;
        if (!(np = kt__grow_to(tg->rank, &c, n, want, used, sizeof(int))))
            return 0;
        tg->rank = (int *)np;
        tg->cap_task = c;
    }
    if (p > tg->cap_pred || !tg->sim.pred) {
        if (!(np = kt__sim_grow(tg->sim.pred, &tg->cap_pred, p, sizeof(int))))
            return 0;
        tg->sim.pred = (int *)np;
    }
    return 1;
}

static int kt__tg_reserve(kt__tg *tg, size_t n, size_t p) {
    return kt__tg_reserve_to(tg, n, p, 0, (size_t)-1);
}

/* One pass of kt__tg_sort: the indices in[0..n) into out, stably by
   digit `which` of their transfers (0: dst, 1: src, 2: role and rank),
   a digit below nb. */
static void kt__tg_sort_pass(const kt_transfer *x, const int *in, int *out,
                             int n, int *cnt, int nb, int which) {
    int i, b, sum = 0;
    for (b = 0; b < nb; b++) cnt[b] = 0;
#define KT__DIGIT(t)                                                        \
    (which == 0 ? (int)(t).dst                                              \
                : which == 1 ? (int)(t).src                                 \
                             : 4 * KT_XFER_STAGES * (t).role + kt__xfer_rank(&(t)))
    for (i = 0; i < n; i++) cnt[KT__DIGIT(x[in[i]])]++;
    for (b = 0; b < nb; b++) { /* counts -> first places */
        int k = cnt[b];
        cnt[b] = sum;
        sum += k;
    }
    for (i = 0; i < n; i++) out[cnt[KT__DIGIT(x[in[i]])]++] = in[i];
#undef KT__DIGIT
}

/* The order of transfers x[0..nx) by (role, rank, src, dst), stable, into
   c->xord: a least-significant-digit radix sort, three counting passes
   (dst, src, then role and rank) over nd buckets -- linear, where a
   comparison sort of the 100-byte structs took a fifth of an MCMC
   proposal's instructions.  0: out of memory. */
static int kt__tg_sort(kt__tgctx *c, const kt_transfer *x, int nx) {
    int i, nroles = 0, nb;
    void *np;
    size_t cap;
    for (i = 0; i < nx; i++)
        if (x[i].role + 1 > nroles) nroles = x[i].role + 1;
    nb = 4 * KT_XFER_STAGES * nroles;
    if (nb < (int)c->nd) nb = (int)c->nd;
    cap = c->cap_xord;
    if (!(np = kt__sim_grow(c->xord, &cap, (size_t)nx + 1, sizeof(int))))
        return 0;
    c->xord = (int *)np;
    cap = c->cap_xord;
    if (!(np = kt__sim_grow(c->xtmp, &cap, (size_t)nx + 1, sizeof(int))))
        return 0;
    c->xtmp = (int *)np;
    c->cap_xord = cap;
    if (!(np = kt__sim_grow(c->xcnt, &c->cap_xcnt, (size_t)nb + 1,
                            sizeof(int))))
        return 0;
    c->xcnt = (int *)np;
    for (i = 0; i < nx; i++) c->xord[i] = i;
    kt__tg_sort_pass(x, c->xord, c->xtmp, nx, c->xcnt, (int)c->nd, 0);
    kt__tg_sort_pass(x, c->xtmp, c->xord, nx, c->xcnt, (int)c->nd, 1);
    kt__tg_sort_pass(x, c->xord, c->xtmp, nx, c->xcnt,
                     4 * KT_XFER_STAGES * nroles, 2);
    np = c->xord; /* the result in xord */
    c->xord = c->xtmp;
    c->xtmp = (int *)np;
    return 1;
}

/* Op o's block from its transfers x[0..nx) (in kt__tg_sort's order): one
   task per (role, rank, src, dst) moving all of their bytes, written from
   task `at` on.  Returns the number of tasks, -1 when out of memory. */
static int kt__tg_block(kt__tgctx *c, kt__tg *tg, int o,
                        const kt_transfer *xs, int nx, int at) {
    int i, n = at;
    const kt_transfer *x = NULL, *prev = NULL;
    if (!kt__tg_reserve(tg, (size_t)(at + nx) + 1, 1) ||
        !kt__tg_sort(c, xs, nx))
        return -1;
    for (i = 0; i < nx; prev = x, i++) {
        int lv;
        x = &xs[c->xord[i]];
        lv = kt_topology_level(c->t, x->src, x->dst);
        if (!prev || !kt__same_xfer_key(x, prev)) {
            kt_sim_task *st = &tg->sim.task[n];
            memset(st, 0, sizeof *st);
            st->kind = KT_TASK_TRANSFER;
            st->op = o;
            st->src = x->src;
            st->dst = x->dst;
            /* the resource: the pair's own link, or the sender's port
               for the level (kt_topology.ports) */
            st->device = c->nd +
                         kt__link_id(&c->links,
                                     c->t->ports
                                         ? x->src * KT_MAX_CUTS + lv
                                         : x->src * c->nd + x->dst);
            if (c->links.oom) { /* the table is as it was: retry later */
                c->links.oom = 0;
                return -1;
            }
            st->seconds = c->t->latency[lv];
            tg->role[n] = x->role;
            tg->rank[n] = kt__xfer_rank(x);
            n++;
        }
        tg->sim.task[n - 1].bytes += x->bytes;
        tg->sim.task[n - 1].seconds +=
            (double)x->bytes / c->t->bandwidth[lv];
    }
    return n - at;
}

/* Which block tasks kt__tg_group collects. */
enum {
    KT__G_OUTPUT,    /* the op's output transfers, by dst                   */
    KT__G_REDUCE,    /* its reductions, by dst                              */
    KT__G_COPY,      /* its copies, by dst                                  */
    KT__G_INPUT,     /* its input transfers, by dst                          */
    KT__G_READS,     /* its input transfers reading tensor x, by src         */
    KT__G_PRODUCED   /* its output transfers, by src and again by dst        */
};

/* Does task i of op's block belong to a group of kind `what`: the op's
   output conversions, its reductions, its copies, its input
   conversions, or those reading tensor x? */
static int kt__tg_selects(const kt__tg *tg, const kt_op *op, int i, int what,
                          int x) {
    int r = tg->role[i];
    if (what == KT__G_OUTPUT || what == KT__G_PRODUCED)
        return r == op->ninputs;
    if (what == KT__G_REDUCE) return !KT__RANK_COPY(tg->rank[i]);
    if (what == KT__G_COPY) return KT__RANK_COPY(tg->rank[i]);
    if (what == KT__G_INPUT) return r < op->ninputs;
    return r < op->ninputs && op->input[r] == x;
}

/* The devices a group files task i under, written to dev; returns how
   many: readers by sender, a produced value's transfers by both ends
   (what an in-place update of it must wait for on either), the rest by
   receiver. */
static int kt__tg_group_devices(const kt__tg *tg, int i, int what,
                                int64_t dev[2]) {
    const kt_sim_task *st = &tg->sim.task[i];
    dev[0] = what == KT__G_READS || what == KT__G_PRODUCED ? st->src : st->dst;
    dev[1] = st->dst;
    return what == KT__G_PRODUCED ? 2 : 1;
}

/* Group `gi` of the scratch: the tasks of op q's block that `what` selects,
   by device d in gitem[gfirst[f + d] .. gfirst[f + d + 1]) with f = gi *
   (nd + 1), ascending; the items from *nitem on.  Several ops may add to
   one group (readers), ops ascending. */
static void kt__tg_group(kt__tgctx *c, const kt__tg *tg, int gi,
                         const int *ops, int nops, int what, int x,
                         int *nitem) {
    int64_t nd = c->nd, d, dev[2];
    int *first = c->gfirst + gi * (nd + 1), k, i, e, from = *nitem;
    for (d = 0; d <= nd; d++) first[d] = 0;
    for (k = 0; k < nops; k++) {
        const kt_op *op = &c->g->op[ops[k]];
        for (i = tg->base[ops[k]]; i < tg->bend[ops[k]]; i++) {
            if (!kt__tg_selects(tg, op, i, what, x)) continue;
            for (e = kt__tg_group_devices(tg, i, what, dev); e-- > 0;)
                first[dev[e] + 1]++;
        }
    }
    first[0] = from;
    for (d = 0; d < nd; d++) first[d + 1] += first[d];
    /* fill with first[d] as cursors, then shift them back */
    for (k = 0; k < nops; k++) {
        const kt_op *op = &c->g->op[ops[k]];
        for (i = tg->base[ops[k]]; i < tg->bend[ops[k]]; i++) {
            if (!kt__tg_selects(tg, op, i, what, x)) continue;
            for (e = kt__tg_group_devices(tg, i, what, dev); e-- > 0;)
                c->gitem[first[dev[e]]++] = i;
        }
    }
    for (d = nd; d > 0; d--) first[d] = first[d - 1];
    first[0] = from;
    *nitem = first[nd];
}

/* Appends predecessor v of task `self` (none when v < 0 or v is itself).
   0: out of memory, or past KT__PS_MAX entries (tg->full set: the entry
   number would overflow an int). */
static int kt__tg_push(kt__tg *tg, int *n, int v, int self) {
    if (v < 0 || v == self) return 1;
    if (*n >= KT__PS_MAX) {
        tg->full = 1;
        return 0;
    }
    if ((size_t)*n + 1 > tg->cap_pred) {
        void *np = kt__sim_grow(tg->sim.pred, &tg->cap_pred, (size_t)*n + 1,
                                sizeof(int));
        if (!np) return 0;
        tg->sim.pred = (int *)np;
    }
    tg->sim.pred[(*n)++] = v;
    return 1;
}

#define KT__PUSH(v, self)                                                   \
    do {                                                                    \
        if (!kt__tg_push(tg, &n, (v), (self))) return 0;                    \
    } while (0)

/* The predecessor lists of op o's tasks, written from pred[at] on; sets
   *end past the last entry.  The blocks of every op must be in place.
   0: out of memory. */
static int kt__tg_op_preds(kt__tgctx *c, kt__tg *tg, int o, int at,
                           int *end) {
    const kt_graph *g = c->g;
    const kt_op *op = &g->op[o];
    int64_t nd = c->nd, d;
    int ni = op->ninputs, j, i, k, n = at, nitem = 0, pr[KT_MAX_VARS];
    int lo = tg->base[o], hi = tg->bend[o], items = 0;
    int gin = ni, gred = ni + 1, gcpy = ni + 2, grd = ni + 3, gold = ni + 4;
    int x = op->output, relays = 0;
    /* an in-place update overwrites the value x's producer left */
    int px = op->in_place ? g->tensor[x].producer : -1;
    int *f;
    void *np;
    /* scratch: one group per input (its producer's output transfers),
       o's reductions, its copies (when a relay reads them), its input
       transfers, the readers of o's output, its producer's output
       transfers (both for an in-place o) */
    for (j = 0; j < ni; j++) {
        pr[j] = g->tensor[op->input[j]].producer;
        if (pr[j] >= 0) items += tg->bend[pr[j]] - tg->base[pr[j]];
    }
    items += 3 * (hi - lo);
    for (i = lo; i < hi; i++) relays += KT__RANK_RELAY(tg->rank[i]);
    if (op->in_place)
        for (k = c->rd_first[x]; k < c->rd_first[x + 1]; k++)
            items += tg->bend[c->rd_op[k]] - tg->base[c->rd_op[k]];
    if (px >= 0) items += 2 * (tg->bend[px] - tg->base[px]);
    if (!(np = kt__sim_grow(c->gfirst, &c->cap_gfirst,
                            (size_t)(ni + 5) * (size_t)(nd + 1), sizeof(int))))
        return 0;
    c->gfirst = (int *)np;
    if (!(np = kt__sim_grow(c->gitem, &c->cap_gitem, (size_t)items + 1,
                            sizeof(int))))
        return 0;
    c->gitem = (int *)np;
    for (j = 0; j < ni; j++)
        if (pr[j] >= 0)
            kt__tg_group(c, tg, j, &pr[j], 1, KT__G_OUTPUT, -1, &nitem);
    kt__tg_group(c, tg, gred, &o, 1, KT__G_REDUCE, -1, &nitem);
    kt__tg_group(c, tg, gcpy, &o, relays ? 1 : 0, KT__G_COPY, -1, &nitem);
    kt__tg_group(c, tg, gin, &o, 1, KT__G_INPUT, -1, &nitem);
    if (op->in_place)
        kt__tg_group(c, tg, grd, c->rd_op + c->rd_first[x],
                     c->rd_first[x + 1] - c->rd_first[x], KT__G_READS, x,
                     &nitem);
    kt__tg_group(c, tg, gold, &px, px >= 0 ? 1 : 0, KT__G_PRODUCED, -1,
                 &nitem);
    for (d = 0; d < nd; d++) {
        int self = (int)(o * nd + d);
        kt_sim_task *st = &tg->sim.task[self];
        st->pred_first = n;
        /* the device's program order (Tofu 6 control dependencies) */
        if (c->prev[o] >= 0) KT__PUSH((int)(c->prev[o] * nd + d), self);
        /* the data of an input on d: its producer ran there and the
           producer's output transfers into d are done */
        for (j = 0; j < ni; j++) {
            if (pr[j] < 0) continue;
            f = c->gfirst + j * (nd + 1);
            KT__PUSH((int)(pr[j] * nd + d), self);
            for (k = f[d]; k < f[d + 1]; k++) KT__PUSH(c->gitem[k], self);
        }
        /* o's own input transfers into d */
        f = c->gfirst + gin * (nd + 1);
        for (k = f[d]; k < f[d + 1]; k++) KT__PUSH(c->gitem[k], self);
        /* an in-place update waits for every transfer reading the old
           value out of its device, its own included, and for the
           producer's output transfers out of it (relays forward the old
           value) and into it (they write the old value) */
        if (op->in_place) {
            f = c->gfirst + grd * (nd + 1);
            for (k = f[d]; k < f[d + 1]; k++) KT__PUSH(c->gitem[k], self);
            f = c->gfirst + gold * (nd + 1);
            for (k = f[d]; k < f[d + 1]; k++) KT__PUSH(c->gitem[k], self);
        }
        st->npred = n - st->pred_first;
    }
    for (i = lo; i < hi; i++) {
        kt_sim_task *st = &tg->sim.task[i];
        int64_t src = st->src;
        st->pred_first = n;
        if (tg->role[i] < ni) {
            /* an input transfer: after the input is ready on its source */
            j = tg->role[i];
            if (pr[j] >= 0) {
                f = c->gfirst + j * (nd + 1);
                KT__PUSH((int)(pr[j] * nd + src), i);
                for (k = f[src]; k < f[src + 1]; k++) KT__PUSH(c->gitem[k], i);
            }
        } else {
            /* an output transfer: after o ran on its source; an in-place
               o's also after o ran on its destination, whose tile it
               overwrites, so after every use of the old value there */
            KT__PUSH((int)(o * nd + src), i);
            if (op->in_place) KT__PUSH((int)(o * nd + st->dst), i);
        }
        /* in the collective: after the transfers of its role into the
           source that bring what it sends (kt__xfer_feeds) */
        f = c->gfirst +
            (KT__RANK_RELAY(tg->rank[i]) ? gcpy : gred) * (nd + 1);
        for (k = f[src]; k < f[src + 1]; k++) {
            int u = c->gitem[k];
            if (tg->role[u] == tg->role[i] &&
                kt__xfer_feeds(tg->rank[u], tg->rank[i]))
                KT__PUSH(u, i);
        }
        st->npred = n - st->pred_first;
    }
    *end = n;
    return 1;
}
#undef KT__PUSH

kt_status kt_sim_build(const kt_graph *g, const kt_plan *p,
                       const kt_program *prog, const kt_topology *t,
                       kt_sim *out, kt_error *err) {
    return kt_sim_build_ordered(g, p, prog, t, NULL, out, err);
}

/* The task graph of a lowered program into tg (empty), ops run on every
   device in c's order. */
static kt_status kt__tg_build(kt__tgctx *c, kt__tg *tg, const kt_program *prog,
                              kt_error *err) {
    const kt_graph *g = c->g;
    int64_t nd = c->nd;
    int o, i, n;
    tg->base = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    tg->bend = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    tg->seg = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    tg->send = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    tg->sim.busy = (double *)kt__calloc((size_t)nd + 1, sizeof(double));
    if (!tg->base || !tg->bend || !tg->seg || !tg->send || !tg->sim.busy ||
        !kt__tg_reserve(tg, (size_t)(prog->ntask + prog->nxfer) + 1,
                        (size_t)(prog->ntask + prog->nxfer) * 4 + 1))
        goto nomem;
    tg->sim.ndev = nd;
    /* compute tasks first: task o * nd + d */
    for (i = 0; i < prog->ntask; i++) {
        const kt_task *tk = &prog->task[i];
        kt_sim_task *st = &tg->sim.task[i];
        memset(st, 0, sizeof *st);
        st->kind = KT_TASK_COMPUTE;
        st->op = tk->op;
        st->device = st->src = st->dst = tk->device;
        st->seconds = kt__task_seconds(g, &g->op[tk->op], tk->box, c->t,
                                       tk->device);
        tg->role[i] = tg->rank[i] = -1;
    }
    /* then the transfer tasks, op by op */
    for (o = 0, n = prog->ntask; o < g->nop; o++) {
        int lo = prog->xfer_first[o], hi = prog->xfer_first[o + 1], m;
        tg->base[o] = n;
        if ((m = kt__tg_block(c, tg, o, prog->xfer + lo, hi - lo, n)) < 0)
            goto nomem;
        n += m;
        tg->bend[o] = n;
    }
    tg->base[g->nop] = n;
    tg->sim.ntask = n;
    tg->sim.nlink = c->links.n;
    tg->seg[0] = 0;
    tg->full = 0;
    for (o = 0; o < g->nop; o++) {
        if (!kt__tg_op_preds(c, tg, o, tg->seg[o], &tg->seg[o + 1]))
            return tg->full
                       ? kt__fail(err, KT_ERR_LIMIT, 0, "the task graph "
                                  "has more than %d predecessor entries "
                                  "(they are numbered with ints)",
                                  KT__PS_MAX)
                       : kt__fail(err, KT_ERR_NOMEM, 0, "out of memory "
                                  "building the task graph");
        tg->send[o] = tg->seg[o + 1];
    }
    return KT_OK;
nomem:
    return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory building the task "
                    "graph");
}

/* Task i of prog is op i / nd on device i % nd, over a box inside the
   op's index space and not inverted (an executor allocates its buffers
   from the box: a box past the extents would be an allocation of any
   size, a 2^40 box 16 TB, before any read is checked). */
static kt_status kt__program_task_check(const kt_graph *g,
                                        const kt_program *prog, int64_t nd,
                                        int i, kt_error *err) {
    const kt_task *tk = &prog->task[i];
    const kt_op *op;
    int v;
    if (tk->op != (int)(i / nd) || tk->device != i % nd)
        return kt__fail(err, KT_ERR_INVALID, 0, "program: task %d is op %d "
                        "on device %lld, expected op %d on device %lld", i,
                        tk->op, (long long)tk->device, (int)(i / nd),
                        (long long)(i % nd));
    op = &g->op[tk->op];
    for (v = 0; v < op->nvars; v++)
        if (tk->box[v].lo < 0 || tk->box[v].lo > tk->box[v].hi ||
            tk->box[v].hi > op->var[v].extent)
            return kt__fail(err, KT_ERR_INVALID, 0, "program: task %d (op %s "
                            "on device %lld) runs variable %s over [%lld, "
                            "%lld), not a range of 0..%lld", i, op->name,
                            (long long)tk->device, op->var[v].name,
                            (long long)tk->box[v].lo,
                            (long long)tk->box[v].hi,
                            (long long)op->var[v].extent);
    return KT_OK;
}

/* Transfer x, listed under op o, converts one of o's roles (an input
   index, or its input count for the output) of the right tensor between
   two distinct devices of nd, as a copy or a reduction of >= 0 bytes at
   a stage of its collective (a relay: a copy after stage 0), over a
   region inside the tensor and not inverted (the element count of
   a region past the tensor can overflow, and executors index tiles with
   it). */
static kt_status kt__program_xfer_check(const kt_graph *g,
                                        const kt_program *prog, int64_t nd,
                                        int o, int x, kt_error *err) {
    const kt_transfer *t = &prog->xfer[x];
    const kt_op *op = &g->op[o];
    const kt_tensor *tt;
    int d;
    if (t->op != o)
        return kt__fail(err, KT_ERR_INVALID, 0, "program: transfer %d is "
                        "listed under op %s (xfer_first) but names op %d", x,
                        op->name, t->op);
    if (t->role < 0 || t->role > op->ninputs ||
        t->tensor != (t->role < op->ninputs ? op->input[t->role] : op->output))
        return kt__fail(err, KT_ERR_INVALID, op->line, "op %s: transfer %d: "
                        "role %d does not name tensor %d", op->name, x,
                        t->role, t->tensor);
    tt = &g->tensor[t->tensor];
    if (t->src < 0 || t->src >= nd || t->dst < 0 || t->dst >= nd ||
        t->src == t->dst)
        return kt__fail(err, KT_ERR_INVALID, op->line, "op %s: transfer %d of "
                        "%s from device %lld to %lld: not two devices of %lld",
                        op->name, x, tt->name, (long long)t->src,
                        (long long)t->dst, (long long)nd);
    if ((t->kind != KT_XFER_COPY && t->kind != KT_XFER_REDUCE) || t->bytes < 0)
        return kt__fail(err, KT_ERR_INVALID, op->line, "op %s: transfer %d of "
                        "%s: kind %d and %lld bytes (a copy or a reduction of "
                        ">= 0 bytes expected)", op->name, x, tt->name,
                        (int)t->kind, (long long)t->bytes);
    if (t->stage < 0 || t->stage >= KT_XFER_STAGES ||
        (t->relay != 0 && t->relay != 1) ||
        (t->relay && (t->kind != KT_XFER_COPY || t->stage == 0)))
        return kt__fail(err, KT_ERR_INVALID, op->line, "op %s: transfer %d of "
                        "%s: stage %d, relay %d (a stage of 0..%d; a relay is "
                        "a copy after stage 0)", op->name, x, tt->name,
                        t->stage, t->relay, KT_XFER_STAGES - 1);
    for (d = 0; d < tt->rank; d++)
        if (t->region.r[d].lo < 0 || t->region.r[d].lo > t->region.r[d].hi ||
            t->region.r[d].hi > tt->shape[d])
            return kt__fail(err, KT_ERR_INVALID, op->line, "op %s: transfer "
                            "%d of %s: region [%lld, %lld) of dim %d is not a "
                            "range of [0, %lld)", op->name, x, tt->name,
                            (long long)t->region.r[d].lo,
                            (long long)t->region.r[d].hi, d,
                            (long long)tt->shape[d]);
    return KT_OK;
}

/* Whether prog has the shape kt_lower gives a program of g over nd
   devices, which the task graph and the executors rely on: op o's
   sub-operator on device d is task o * nd + d, and op o's transfers
   x[xfer_first[o] .. xfer_first[o + 1]), with xfer_first running from 0
   to nxfer without going back, are well-formed
   (kt__program_xfer_check).  A hand-built program that is not is
   refused, naming the task or transfer, instead of being read out of
   bounds.  Linear in the program. */
static kt_status kt__program_check(const kt_graph *g, const kt_program *prog,
                                   int64_t nd, kt_error *err) {
    int i, o, k;
    kt_status s;
    if (nd < 1 || prog->nops != g->nop ||
        (int64_t)prog->ntask != (int64_t)g->nop * nd)
        return kt__fail(err, KT_ERR_INVALID, 0, "program: %d ops and %d tasks "
                        "on %lld devices; the graph has %d ops, so %lld tasks "
                        "(one per op and device; a program of another "
                        "graph?)", prog->nops, prog->ntask, (long long)nd,
                        g->nop, (long long)((int64_t)g->nop * nd));
    if (prog->nxfer < 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "program: nxfer is %d, not a "
                        "transfer count", prog->nxfer);
    if ((prog->ntask > 0 && !prog->task) || (prog->nxfer > 0 && !prog->xfer) ||
        !prog->xfer_first)
        return kt__fail(err, KT_ERR_INVALID, 0, "program: no %s array (freed, "
                        "or never lowered)",
                        !prog->xfer_first               ? "xfer_first"
                        : prog->ntask > 0 && !prog->task ? "task"
                                                         : "xfer");
    for (i = 0; i < prog->ntask; i++)
        if ((s = kt__program_task_check(g, prog, nd, i, err)) != KT_OK)
            return s;
    if (prog->xfer_first[0] != 0 || prog->xfer_first[g->nop] != prog->nxfer)
        return kt__fail(err, KT_ERR_INVALID, 0, "program: xfer_first runs "
                        "from %d to %d, expected 0 to %d transfers",
                        prog->xfer_first[0], prog->xfer_first[g->nop],
                        prog->nxfer);
    for (o = 0; o < g->nop; o++)
        if (prog->xfer_first[o + 1] < prog->xfer_first[o])
            return kt__fail(err, KT_ERR_INVALID, 0, "program: xfer_first "
                            "goes back at op %d (%d after %d)", o + 1,
                            prog->xfer_first[o + 1], prog->xfer_first[o]);
    for (o = 0; o < g->nop; o++)
        for (k = prog->xfer_first[o]; k < prog->xfer_first[o + 1]; k++)
            if ((s = kt__program_xfer_check(g, prog, nd, o, k, err)) != KT_OK)
                return s;
    return kt__xfer_bytes_check(prog->xfer, prog->nxfer, "program", err);
}

kt_status kt_sim_build_ordered(const kt_graph *g, const kt_plan *p,
                               const kt_program *prog, const kt_topology *t,
                               const int *order, kt_sim *out, kt_error *err) {
    kt__tgctx c;
    kt__tg tg;
    kt_status s;
    (void)p;
    if (!out) return kt__fail(err, KT_ERR_INVALID, 0, "no kt_sim (NULL)");
    memset(out, 0, sizeof *out);
    memset(&tg, 0, sizeof tg);
    if ((s = kt__graph_check_final(g, err)) != KT_OK ||
        (s = kt__topology_usable(t, err)) != KT_OK)
        return s;
    if (!prog) return kt__fail(err, KT_ERR_INVALID, 0, "no program (NULL)");
    if (order && (s = kt_schedule_check(g, order, g->nop, err)) != KT_OK)
        return s;
    if (t->ndev != prog->ndev)
        return kt__fail(err, KT_ERR_INVALID, 0, "the topology has %lld "
                        "devices, the plan %lld", (long long)t->ndev,
                        (long long)prog->ndev);
    if ((s = kt__program_check(g, prog, t->ndev, err)) != KT_OK) return s;
    if (!kt__tgctx_init(&c, g, t, order)) {
        kt__tgctx_free(&c);
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory building the "
                        "task graph");
    }
    s = kt__tg_build(&c, &tg, prog, err);
    kt__tgctx_free(&c);
    if (s == KT_OK) {
        *out = tg.sim; /* the kt_sim keeps the tasks and lists */
        memset(&tg.sim, 0, sizeof tg.sim);
        kt__ok(err);
    }
    kt__tg_free(&tg);
    return s;
}

/* The simulator's workspace, kept in the kt_sim between runs so that a
   delta simulation can start from the previous timeline.

   Why resuming is exact.  Algorithm 1 is a deterministic machine whose
   state after k starts (which tasks started and when, which are waiting
   and since when, when each device is free) depends only on the run times
   of the k tasks started so far: a task's run time matters from its start
   on.  So new run times for some tasks change nothing before the first of
   them in the previous order, and the simulation can resume there from
   the state the previous run had.

   The hot per-task data lives here in compact arrays (the task structs
   are 56 bytes: one cache miss each): a full run reads the structs once
   (kt__sim_prepare), and its start and end arrays are the ones the
   caller reads (kt_sim's start and end; after a delta, kt_sim_timeline
   folds the shift index into them). */
typedef struct kt__qitem {
    uint64_t key; /* the bits of its ready time */
    int task;     /* count 0: the task; else the first of its tasks in   */
    int count;    /*   q->list[count > 0] (see kt__qpush_list)          */
} kt__qitem;

typedef struct kt__qlist {
    kt__qitem *item;
    int n, cap;
} kt__qlist;

typedef struct kt__queue { /* see kt__qpush */
    kt__qlist bucket[65]; /* bucket b >= 1 (0 is `now`)                */
    uint64_t used;   /* bit b - 1: bucket b is not empty                  */
    uint64_t last;   /* the ready time being taken (bits)                  */
    int *now, *spare, nnow, inow; /* bucket 0: now[inow .. nnow)          */
    int *runs, *words; /* kt__qsort_now's scratch, and its bitmap of task */
    uint64_t *bits;    /*   indices (all 0 between sorts)                 */
    int sorted;      /* now is sorted and being taken                      */
    int *late, nlate; /* tasks ready at `last` that came after the sort    */
    const int *list[2]; /* where items of several tasks list them: [1] for
                         a count > 0, [0] for a count < 0 (-count tasks) */
    int count;       /* tasks queued                                       */
    int nomem;       /* a bucket could not grow                            */
} kt__queue;

/* What runs once or more per task in a simulation (the queue's
   operations, counting a run time): inlined into the simulation loops
   wherever the compiler allows it. */
#if defined(__GNUC__)
#define KT__HOT inline __attribute__((always_inline))
#define KT__PREFETCH(p) __builtin_prefetch(p)
#else
#define KT__HOT inline
#define KT__PREFETCH(p) ((void)(p))
#endif
#define KT__PREFETCH_AHEAD 64

typedef struct kt__wait {
    double ready; /* latest end of the predecessors started so far */
    int indeg;    /* predecessors not yet started                   */
    unsigned set; /* kt_plan_sim's resumed runs: == its wait_base when
                     set up since the last restore point (in the
                     struct's padding, so that the look at a successor's
                     stamp reads the line its count is on); 0 when the
                     array grows, ignored by the other runs            */
} kt__wait;

/* A full run's wait state: one for each predecessor list of two or more
   entries (the only lists that need one: a task waiting for one
   predecessor alone is queued at its end, one without at the start),
   shared by the tasks that follow one another with equal lists -- their
   counts reach zero at the same release, with the same latest end, so
   one count serves them all.  On wresnet-152 over 64 devices 140k tasks
   have such lists, in 75.7k runs of equal ones (several transfers of a
   conversion wait for the same tasks), so a run updates 873k states
   instead of 1.57 M.  They are numbered apart, in order of their first
   task, so that the states a run reads and writes lie together (1.2 MB
   here instead of the 7 MB of kt__wait for every task, which delta runs
   keep using). */
typedef struct kt__fwait {
    double ready; /* latest end of the predecessors started so far */
    int indeg;    /* predecessors not yet started                   */
    int tasks;    /* its tasks: fwtask[tasks] of them, listed after  */
} kt__fwait;

/* The powers of two a run time (0 < s <= 1e30) can fall below: frexp's
   exponents from the least subnormal's up to 1e30's. */
#define KT__EXP_LO (-1080)
#define KT__NEXP 1184

/* Consecutive tasks whose predecessor lists lie one after the other in
   s->pred (kt_sim_build lays them out op by op: 1,591 stretches for the
   448k tasks of wresnet-152 over 64 devices), noted by kt__sim_prepare's
   pass and compared with the previous run's lists a stretch at a time. */
struct kt__stretch {
    size_t e;   /* its first entry among all tasks' entries */
    int task;   /* its first task                           */
};

struct kt__sim_work {
    int n;               /* tasks the workspace was built for             */
    int64_t nres;        /* compute devices + links                        */
    int *pred_first;     /* task i waits for pred[pred_first[i] ..        */
    int *npred;          /*   + npred[i])                                  */
    int *succ_first;     /* successors (CSR), derived from the pred lists  */
    int *succ_sole;      /* task i's successors succ[succ_first[i] ..
                            succ_sole[i]) wait for it alone, the rest for
                            others too                                     */
    int *succ;
    int *ffirst;         /* a full run's lists of wait states: task i's  */
    int *fsucc;          /*   fsucc[ffirst[i] .. ffirst[i + 1]) are the
                              numbers of the wait states that count it
                              (each once per entry of i in their list); its
                              sole successors are queued from succ         */
    kt__fwait *fwait;    /* a full run's wait states (kt__fwait),          */
    int *fwnpred;        /*   the length of each one's list,              */
    int *fwtask;         /*   and its tasks (a count, then the tasks)      */
    int nfwait;
    size_t cap_ffirst, cap_fsucc, cap_fwait, cap_fwnpred, cap_fwtask;
    int *preds;          /* the predecessor lists, task by task, as the    */
    size_t ne;           /*   successors were derived from (ne entries)   */
    struct kt__stretch *stretch; /* a run's stretches of predecessor lists */
    size_t cap_stretch;
    unsigned char *compute; /* per task: a compute task                    */
    int64_t ndev;        /* compute devices                                */
    int derived;         /* succ, busy lists match dev, compute and preds  */
    int *dev;            /* per task: its resource                         */
    double *sec, *start, *end;
    int *order;          /* tasks in the order the last run started them   */
    int *pos;            /* pos[order[k]] == k                             */
    int *devprev;        /* the task before it on its device, -1: none     */
    kt__wait *wait;      /* scratch of one run                              */
    size_t set_init;     /* wait[0 .. set_init) have their `set` stamps     */
    int *pend;           /* scratch of deriving the successor lists        */
    kt__queue queue;
    double *free_at;     /* per resource: when it is free,                 */
    int *res_last;       /*   its last task so far,                        */
    int *res_oldmax;     /*   and the largest previous position of its
                              tasks (delta and proposal runs)              */
    int simulated;       /* a timeline of the current task graph exists     */
    size_t cap_n, cap_res, cap_e, cap_succ, cap_crit; /* allocated lengths */
    size_t cap_busy;     /* ... and of s->busy, when it is busy_sized      */
    const double *busy_sized;
    int64_t busy_ndev;   /* the devices it was sized for                  */
    double tick;         /* the tick of the last run's run times, 0: none */
    int64_t tick_hist[KT__NEXP]; /* run times below 2^e s and not below
                                    2^(e-1): tick_hist[e - KT__EXP_LO]  */
    struct kt__delta *dl; /* checkpoints and shift index of kt_sim_delta,
                             NULL until a kt_sim_delta asks for them      */
};

/* One checkpoint of a timeline (kt_sim_delta): the state before the task
   at some position starts, as task indices that stay valid when later
   deltas move times -- the tasks waiting in the queue, then for every
   device or link still busy then, a task it ran before (its last one
   when the checkpoint was taken; the last one is reached from it along
   `devnext`). */
typedef struct kt__snap {
    int nready, nbusy; /* task[0 .. nready): queued; then nbusy busy ones */
    int *task;
    size_t cap;
} kt__snap;

/* Positions per block of the shift index, and between checkpoints. */
#define KT__DBLOCK KT_SIM_CHECKPOINT

/* What kt_sim_delta keeps besides the timeline: checkpoints taken by every
   full run once a delta has been asked for, and the shift index -- per
   block of KT__DBLOCK positions an amount added to the start and end
   stored for its tasks, so that moving every later task by d costs a
   block's worth of writes plus one add per block -- and the scratch of
   one delta run. */
struct kt__delta {
    int n, nblk;          /* sized for n tasks, nblk blocks                */
    int64_t nres;
    kt__snap *snap;       /* snap[b]: before position b * KT__DBLOCK        */
    int snaps_valid;      /* they describe the current timeline            */
    int index_valid;      /* boff, bmax and devnext do                     */
    double *boff;         /* per block: added to its stored times          */
    double *bmax;         /* per block: the latest stored end,             */
    int *bmax_at;         /*   at its first position                       */
    int *devnext;         /* per task: the next task on its device, -1     */
    int last;             /* the task that ends last, and whether the      */
    int critical_stale;   /*   critical path from it is still to be walked */
    /* one delta run (and the marks of one checkpoint) */
    unsigned epoch;       /* stamps equal to it were set in this run:      */
    unsigned *tstamp;     /*   the task started,                           */
    unsigned *wstamp;     /*   its waiting state is set up,                */
    unsigned *rstamp;     /*   the resource's state is set up              */
    double *nstart, *nend;/* the run's times (the timeline keeps the old)  */
    int *norder;          /* the run's starts, from the checkpoint on      */
    int *ndevprev;
    int *touched, ntouched;   /* resources set up in this run              */
    int *partial, npartial;   /* tasks some but not all of whose           */
    int *partial_at;          /*   predecessors have ended, and where      */
    int *prebusy, nprebusy;   /* busy at the checkpoint: their last task   */
    int *rnext;           /* per resource: first task after the rejoin     */
    size_t cap_n, cap_res, cap_blk;
};

static void kt__delta_free(struct kt__delta *dl) {
    int b;
    if (!dl) return;
    for (b = 0; b < (int)dl->cap_blk; b++) KT_FREE(dl->snap[b].task);
    KT_FREE(dl->snap);
    KT_FREE(dl->boff);
    KT_FREE(dl->bmax);
    KT_FREE(dl->bmax_at);
    KT_FREE(dl->devnext);
    KT_FREE(dl->tstamp);
    KT_FREE(dl->wstamp);
    KT_FREE(dl->rstamp);
    KT_FREE(dl->nstart);
    KT_FREE(dl->nend);
    KT_FREE(dl->norder);
    KT_FREE(dl->ndevprev);
    KT_FREE(dl->touched);
    KT_FREE(dl->partial);
    KT_FREE(dl->partial_at);
    KT_FREE(dl->prebusy);
    KT_FREE(dl->rnext);
    KT_FREE(dl);
}

/* A stamp no array holds yet (all are cleared when the counter wraps). */
static unsigned kt__delta_epoch(struct kt__delta *dl) {
    if (++dl->epoch == 0) {
        memset(dl->tstamp, 0, sizeof(unsigned) * dl->cap_n);
        memset(dl->wstamp, 0, sizeof(unsigned) * dl->cap_n);
        memset(dl->rstamp, 0, sizeof(unsigned) * dl->cap_res);
        dl->epoch = 1;
    }
    return dl->epoch;
}

/* The shift a task's block has had since the last full run. */
static double kt__sim_off(const struct kt__sim_work *w, int t) {
    return w->dl && w->dl->index_valid ? w->dl->boff[w->pos[t] / KT__DBLOCK]
                                       : 0;
}
static double kt__sim_start_of(const struct kt__sim_work *w, int t) {
    return w->start[t] + kt__sim_off(w, t);
}
static double kt__sim_end_of(const struct kt__sim_work *w, int t) {
    return w->end[t] + kt__sim_off(w, t);
}

/* The simulator counts time in whole ticks, held in doubles: every run
   time is rounded to a tick, so every start and end is a whole number of
   ticks and sums are exact -- (a + d) + s == (a + s) + d -- which lets a
   delta simulation move a stretch of the previous timeline by an amount d
   and still equal a full run bit for bit.  The tick is a power of two
   that puts the sum of all run times under 2^50 ticks: every time is at
   most that sum (each run time rounded up by at most half a tick), so all
   stay below 2^52 ticks, where doubles add whole numbers exactly.  The
   sum is bounded from a histogram of the run times' powers of two (a run
   time below 2^e counts as 2^e, at most twice its due), which does not
   depend on the order of the tasks and which a delta updates by its
   changes alone, so it knows at once whether they keep the tick.  The
   tick comes out between 2^-50 and 2^-48 of the sum of all run times. */
static KT__HOT int kt__sim_exponent(double seconds) { /* seconds < 2^e */
    uint64_t bits;
    int e;
    if (!(seconds > 0)) return INT_MIN;
    memcpy(&bits, &seconds, sizeof bits);
    e = (int)(bits >> 52 & 0x7ff); /* biased: a normal number is below */
    if (e) return e - 1022;        /* 2^(e - 1022), as frexp says      */
    (void)frexp(seconds, &e);      /* subnormal */
    return e;
}

static KT__HOT void kt__sim_count(struct kt__sim_work *w, double seconds,
                                 int add) {
    int e = kt__sim_exponent(seconds);
    if (e != INT_MIN) w->tick_hist[e - KT__EXP_LO] += add;
}

/* The tick of the run times counted in w's histogram (1 when all are 0). */
static double kt__sim_tick(const struct kt__sim_work *w) {
    int i, top = -1, e;
    double sum = 0;
    for (i = KT__NEXP - 1; i >= 0 && top < 0; i--)
        if (w->tick_hist[i]) top = i;
    if (top < 0) return 1.0;
    for (i = 0; i <= top; i++) /* in units of the top power: a fixed order */
        if (w->tick_hist[i])
            sum += ldexp((double)w->tick_hist[i], i - top);
    /* sum * 2^(top + KT__EXP_LO) bounds the run times' sum; one more power
       of two absorbs the rounding of `sum` */
    e = ilogb(sum) + top + KT__EXP_LO + 3 - 52;
    return ldexp(1.0, e < -1074 ? -1074 : e); /* the least double > 0 */
}

static double kt__sim_per_tick(double tick) {
    double per = 1.0 / tick;
    return per < HUGE_VAL ? per : 0; /* 1 / 2^-1074 overflows */
}

/* seconds rounded to whole ticks; per_s: 1 / tick when that is finite (a
   power of two, so exact: a product costs less than a quotient), else 0 */
static KT__HOT double kt__sim_quantize(double seconds, double tick,
                                       double per_s) {
    const double two52 = 4503599627370496.0;
    double ticks = per_s > 0 ? seconds * per_s : seconds / tick;
    /* adding 2^52 leaves no bits for a fraction: rounds to the nearest
       whole number (a compiler told to ignore IEEE rounding would fold it
       away: then the library call) */
#ifdef __FAST_MATH__
    (void)two52;
    ticks = rint(ticks);
#else
    if (ticks >= 0 && ticks < two52) ticks = (ticks + two52) - two52;
#endif
    return ticks * tick;
}


static void kt__sim_work_free(struct kt__sim_work *w) {
    int i;
    if (!w) return;
    KT_FREE(w->pred_first);
    KT_FREE(w->npred);
    KT_FREE(w->succ_first);
    KT_FREE(w->succ_sole);
    KT_FREE(w->succ);
    KT_FREE(w->ffirst);
    KT_FREE(w->fsucc);
    KT_FREE(w->fwait);
    KT_FREE(w->fwnpred);
    KT_FREE(w->fwtask);
    KT_FREE(w->preds);
    KT_FREE(w->stretch);
    KT_FREE(w->compute);
    KT_FREE(w->dev);
    KT_FREE(w->sec);
    KT_FREE(w->start);
    KT_FREE(w->end);
    KT_FREE(w->order);
    KT_FREE(w->pos);
    KT_FREE(w->devprev);
    KT_FREE(w->wait);
    KT_FREE(w->pend);
    for (i = 1; i <= 64; i++) KT_FREE(w->queue.bucket[i].item);
    KT_FREE(w->queue.now);
    KT_FREE(w->queue.spare);
    KT_FREE(w->queue.late);
    KT_FREE(w->queue.runs);
    KT_FREE(w->queue.words);
    KT_FREE(w->queue.bits);
    KT_FREE(w->free_at);
    KT_FREE(w->res_last);
    KT_FREE(w->res_oldmax);
    kt__delta_free(w->dl);
    KT_FREE(w);
}

void kt_sim_invalidate(kt_sim *s) {
    if (!s) return;
    kt__sim_work_free(s->work);
    s->work = NULL;
    s->start = s->end = NULL; /* they were the workspace's */
}


static void kt__qreset(kt__queue *q);
static void kt__qstart(kt__queue *q);
static KT__HOT void kt__qpush(kt__queue *q, double ready, int task);

/* Checks the predecessor entries src[0 .. len) (task indices) and keeps
   them at w->preds[e ..], noting in *same whether they were there already
   (then they were checked when they were kept: one memcmp, the cheapest
   pass over them).  0: an entry is not a task. */
static int kt__sim_take_preds(struct kt__sim_work *w, const int *src,
                              size_t len, size_t e, int *same) {
    unsigned n = (unsigned)w->n, bad = 0;
    size_t j;
    if (*same && memcmp(src, w->preds + e, sizeof(int) * len) == 0) return 1;
    *same = 0;
    for (j = 0; j < len; j++) bad |= (unsigned)src[j] >= n; /* or < 0 */
    if (bad) return 0;
    memcpy(w->preds + e, src, sizeof(int) * len);
    return 1;
}

/* Allocates s's workspace when it has none and sizes its arrays for
   s->ntask tasks on s->ndev + s->nlink resources (capacities only grow;
   a growth gives `want` task entries when that is enough, else doubles,
   and keeps the first `used` entries of every per-task array -- all of
   them: (size_t)-1).  0: out of memory -- and then nothing is lost: every
   array keeps its contents (one that grew before the failure is merely
   larger), so the incremental task graph, which keeps its timeline in
   these arrays between proposals, can grow a graph and fail without
   losing it. */
static int kt__sim_grow_work_to(kt_sim *s, size_t want, size_t used) {
    struct kt__sim_work *w = s->work;
    size_t n1 = (size_t)s->ntask + 1, nr = (size_t)(s->ndev + s->nlink) + 1;
    if (!w) {
        w = (struct kt__sim_work *)kt__calloc(1, sizeof *w);
        if (!w) return 0;
        s->work = w;
    }
    if (n1 > w->cap_n) {
        size_t c = w->cap_n, need = n1 + 1;
        uint64_t *bits;
        void *np;
        s->start = s->end = NULL; /* the arrays move */
        if (used < w->set_init) w->set_init = used; /* (the rest is lost) */
#define KT__GROW(field, type)                                               \
    (c = w->cap_n,                                                          \
     (np = kt__grow_to(w->field, &c, need, want, used, sizeof(type))) !=    \
             NULL                                                           \
         ? (w->field = (type *)np, 1) : 0)
        if (!KT__GROW(pred_first, int) || !KT__GROW(npred, int) ||
            !KT__GROW(succ_first, int) || !KT__GROW(succ_sole, int) ||
            !KT__GROW(dev, int) ||
            !KT__GROW(compute, unsigned char) ||
            !KT__GROW(sec, double) || !KT__GROW(start, double) ||
            !KT__GROW(end, double) || !KT__GROW(order, int) ||
            !KT__GROW(pos, int) || !KT__GROW(devprev, int) ||
            !KT__GROW(wait, kt__wait) || !KT__GROW(pend, int) ||
            !KT__GROW(queue.now, int) || !KT__GROW(queue.spare, int) ||
            !KT__GROW(queue.late, int) || !KT__GROW(queue.runs, int) ||
            !KT__GROW(queue.words, int))
            return 0;
#undef KT__GROW
        /* (a bit per task; zeroed: a sort leaves it as it found it; the
           old one is freed only once the new one is there) */
        bits = (uint64_t *)kt__calloc(c / 64 + 1, sizeof(uint64_t));
        if (!bits) return 0;
        KT_FREE(w->queue.bits);
        w->queue.bits = bits;
        w->cap_n = c;
    }
    if (n1 > w->set_init) { /* the new wait states' stamps: never set up
                               (up to the tasks, not the capacity: its
                               pages are touched only when used) */
        size_t i;
        for (i = w->set_init; i < n1; i++) w->wait[i].set = 0;
        w->set_init = n1;
    }
    if (nr > w->cap_res) {
        size_t c = w->cap_res;
        void *np;
#define KT__GROW(field, type)                                               \
    (c = w->cap_res,                                                        \
     (np = kt__sim_grow(w->field, &c, nr, sizeof(type))) != NULL            \
         ? (w->field = (type *)np, 1) : 0)
        if (!KT__GROW(free_at, double) || !KT__GROW(res_last, int) ||
            !KT__GROW(res_oldmax, int))
            return 0;
#undef KT__GROW
        w->cap_res = c;
    }
    return 1;
}

static int kt__sim_grow_work(kt_sim *s) {
    return kt__sim_grow_work_to(s, 0, (size_t)-1);
}

/* s->busy with room for every device: a kt_sim filled by hand may leave
   it NULL, or keep the array of a run on fewer devices.  One the run did
   not size itself for these devices -- another pointer, or another device
   count (a caller's array may have come back at the same address) -- is
   reallocated to the length needed (a caller's is KT_MALLOC'd, as
   kt_sim_free expects).  0 when out of memory. */
static int kt__sim_size_busy(kt_sim *s) {
    struct kt__sim_work *w = s->work;
    void *p;
    if (!s->busy || s->busy != w->busy_sized || s->ndev != w->busy_ndev)
        w->cap_busy = 0;
    p = kt__sim_grow(s->busy, &w->cap_busy, (size_t)s->ndev + 1,
                     sizeof(double));
    if (!p) return 0;
    s->busy = (double *)p;
    w->busy_sized = s->busy;
    w->busy_ndev = s->ndev;
    return 1;
}

/* kt__sim_grow_work for a run (kt__sim_prepare starts with it), the
   sizes checked first; out of memory, the workspace is freed (a failed
   run leaves no half-sized workspace behind). */
static kt_status kt__sim_reserve(kt_sim *s, kt_error *err) {
    int n = s->ntask;
    if (s->ndev < 0 || s->nlink < 0 || n < 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "simulation: %d tasks on "
                        "%lld devices and %lld links", n, (long long)s->ndev,
                        (long long)s->nlink);
    /* (the sum is taken only once each is at most the limit: no
       overflow) */
    if (s->ndev > KT_SIM_MAX_RESOURCES || s->nlink > KT_SIM_MAX_RESOURCES ||
        s->ndev + s->nlink > KT_SIM_MAX_RESOURCES)
        return kt__fail(err, KT_ERR_LIMIT, 0, "simulation: %lld devices and "
                        "%lld links are more than KT_SIM_MAX_RESOURCES (%d)",
                        (long long)s->ndev, (long long)s->nlink,
                        (int)KT_SIM_MAX_RESOURCES);
    if (kt__sim_grow_work(s) && kt__sim_size_busy(s)) return KT_OK;
    kt_sim_invalidate(s);
    return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory simulating");
}

/* Every full run's wait states as the start of a run needs them: nothing
   ended yet (a pass over the distinct lists, not over the tasks). */
static void kt__sim_reset_waits(struct kt__sim_work *w) {
    kt__fwait *x = w->fwait;
    const int *np = w->fwnpred;
    int i, nw = w->nfwait;
    for (i = 0; i < nw; i++) {
        x[i].ready = 0;
        x[i].indeg = np[i];
    }
}

/* Whether the predecessor lists a[0 .. len) and b[0 .. len) are equal
   (short: compared in place, no call). */
static int kt__sim_same_list(const int *a, const int *b, int len) {
    int j = 0;
    while (j < len && a[j] == b[j]) j++;
    return j == len;
}

/* The successor lists of the predecessor lists in w->preds, and a full
   run's wait states.  succ: every task's successors, those waiting for it
   alone first (succ_first, succ_sole), read by delta runs and
   kt_plan_sim; a full run queues the sole ones straight from it.  The
   wait states (kt__fwait): each task with two or more predecessor
   entries joins the state of the task with two or more before it when
   their lists are equal, entry for entry, and starts a state of its own
   otherwise -- tasks that share a list come one after the other
   (kt_sim_build makes an op's tasks together: on wresnet-152 over 64
   devices this finds 75,700 states where a hash table of all lists finds
   75,220).  fwtask lists each state's tasks after their count; ffirst
   and fsucc list the states that count each task, once per entry of the
   task in their list, in ascending order (a count and a maximum would
   not depend on it; the queue's sort of a group does).  The counts are
   set by kt__sim_reset_waits.  0: out of memory. */
static int kt__sim_derive(struct kt__sim_work *w) {
    int n = w->n, i, j, nw = 0, prev = -1, hdr = 0, x;
    size_t e = w->ne, prev_e = 0, at = 0;
    void *np = kt__sim_grow(w->succ, &w->cap_succ, e + 1, sizeof(int));
    if (!np) return 0;
    w->succ = (int *)np;
#define KT__GROW_TO(field, cap, need, type)                                  \
    ((np = kt__sim_grow(w->field, &w->cap, (need), sizeof(type))) != NULL  \
         ? (w->field = (type *)np, 1) : 0)
    if (!KT__GROW_TO(ffirst, cap_ffirst, (size_t)n + 1, int) ||
        !KT__GROW_TO(fwait, cap_fwait, (size_t)n + 1, kt__fwait) ||
        !KT__GROW_TO(fwnpred, cap_fwnpred, (size_t)n + 1, int) ||
        !KT__GROW_TO(fwtask, cap_fwtask, 2 * (size_t)n + 1, int))
        return 0;
    /* the lengths, and the states: a state's entries are counted at its
       first task (ffirst[p]: the states that count p, so far) */
    for (i = 0; i <= n; i++) w->succ_first[i] = w->ffirst[i] = 0;
    for (i = 0, e = 0; i < n; e += (size_t)w->npred[i++]) {
        const int *list = w->preds + e;
        int len = w->npred[i];
        for (j = 0; j < len; j++) w->succ_first[list[j] + 1]++;
        if (len < 2) continue;
        if (prev < 0 || w->npred[prev] != len ||
            !kt__sim_same_list(w->preds + prev_e, list, len)) {
            hdr = (int)at++; /* a new state */
            w->fwtask[hdr] = 0;
            w->fwait[nw].tasks = hdr;
            w->fwnpred[nw++] = len;
            for (j = 0; j < len; j++) w->ffirst[list[j]]++;
        }
        w->fwtask[hdr]++;
        w->fwtask[at++] = i;
        prev = i;
        prev_e = e;
    }
    w->nfwait = nw;
    /* succ_first: where each list starts (pend: where its next entry
       goes); ffirst[p]: where p's ends, for now (filled from the end, it
       ends up where the list starts, and ffirst[n] is the total) */
    for (i = 0; i < n; i++) {
        w->pend[i] = w->succ_first[i];
        w->succ_first[i + 1] += w->succ_first[i];
        w->ffirst[i + 1] += w->ffirst[i];
    }
    if (!KT__GROW_TO(fsucc, cap_fsucc, (size_t)w->ffirst[n] + 1, int))
        return 0;
#undef KT__GROW_TO
    /* each list of succ has first the successors that wait for this task
       alone, then the others */
    for (i = 0, e = 0; i < n; e += (size_t)w->npred[i++])
        if (w->npred[i] == 1) {
            int p = w->preds[e];
            w->succ[w->pend[p]++] = i;
        }
    for (i = 0; i < n; i++) w->succ_sole[i] = w->pend[i];
    for (i = 0, e = 0; i < n; e += (size_t)w->npred[i++])
        if (w->npred[i] > 1)
            for (j = 0; j < w->npred[i]; j++)
                w->succ[w->pend[w->preds[e + j]]++] = i;
    /* fsucc, filled from the end, states in descending order: each list
       ascending, so that the tasks a release wakes are queued in order
       of index, as the queue's sort of a group likes them */
    for (i = n - 1, e = w->ne, x = nw - 1; x >= 0; i--) {
        int first = w->fwtask[w->fwait[x].tasks + 1]; /* state x's */
        e -= (size_t)w->npred[i];
        if (i != first) continue;
        for (j = 0; j < w->npred[i]; j++)
            w->fsucc[--w->ffirst[w->preds[e + j]]] = x;
        x--;
    }
    return 1;
}

/* Task i of a caller's graph as the simulator needs it: a device or link
   of the nres resources, a known kind, a predecessor range that does not
   wrap, and a finite run time >= 0 (the ready queue needs times that
   never go back). */
static kt_status kt__sim_check_task(const kt_sim_task *t, int i, int64_t nres,
                                    kt_error *err) {
    if (t->device < 0 || t->device >= nres)
        return kt__fail(err, KT_ERR_INVALID, 0, "simulation: task %d has "
                        "device %lld of %lld", i, (long long)t->device,
                        (long long)nres);
    /* (a kind outside the enum was taken for a transfer) */
    if (t->kind != KT_TASK_COMPUTE && t->kind != KT_TASK_TRANSFER)
        return kt__fail(err, KT_ERR_INVALID, 0, "simulation: task %d is of "
                        "kind %d, neither compute nor transfer", i,
                        (int)t->kind);
    if (t->npred < 0 || t->pred_first < 0 ||
        t->pred_first > INT_MAX - t->npred)
        return kt__fail(err, KT_ERR_INVALID, 0, "simulation: task %d has "
                        "predecessors pred[%d .. %d + %d)", i, t->pred_first,
                        t->pred_first, t->npred);
    if (!(t->seconds >= 0) || t->seconds > 1e30)
        return kt__fail(err, KT_ERR_INVALID, 0, "simulation: task %d (op "
                        "%d): run time %g s is not a number of seconds "
                        "from 0 to 1e30", i, t->op, t->seconds);
    return KT_OK;
}

/* The run times rounded again to s->tick, when it is not the tick the
   pass guessed, and the busy times summed again (whole ticks, so
   exactly, in any order). */
static void kt__sim_requantize(kt_sim *s, struct kt__sim_work *w) {
    double tick = s->tick, *sec = w->sec, *busy = s->busy;
    double per_s = kt__sim_per_tick(tick);
    int i;
    for (i = 0; i < s->ndev; i++) busy[i] = 0;
    for (i = 0; i < s->ntask; i++) {
        sec[i] = kt__sim_quantize(s->task[i].seconds, tick, per_s);
        if (w->compute[i] && w->dev[i] < s->ndev) busy[w->dev[i]] += sec[i];
    }
}

/* Names the first task with a predecessor outside the graph. */
static kt_status kt__sim_bad_pred(const kt_sim *s,
                                  const struct kt__sim_work *w,
                                  kt_error *err) {
    int i, j, n = s->ntask;
    for (i = 0; i < n; i++)
        for (j = 0; j < w->npred[i]; j++) {
            int p = s->pred[w->pred_first[i] + j];
            if (p < 0 || p >= n)
                return kt__fail(err, KT_ERR_INVALID, 0, "simulation: task %d "
                                "waits for task %d of %d", i, p, n);
        }
    return kt__fail(err, KT_ERR_INTERNAL, 0, "simulation: a predecessor list "
                    "was refused but names only tasks of the graph");
}

/* Sizes the workspace and derives from the tasks what a run needs: each
   task's resource, predecessor range and the successor lists.  Done on
   every full run, so a caller may refill a kt_sim with another task graph
   between runs (swap.h does, thousands of times).  The same pass queues
   the tasks without predecessors, and the wait states are reset after
   it, so that kt__sim_algorithm1 finds them ready. */
static kt_status kt__sim_prepare(kt_sim *s, kt_error *err) {
    struct kt__sim_work *w;
    int n = s->ntask, i, j, same, bad = 0, run_len = 0;
    size_t e = 0, ne_old, nst = 0, next_first = (size_t)-1;
    uint64_t bits, run_bits = 0;
    double run_s = 0, run_q = 0;
    double guess, per_s, *busy;
    int64_t ndev = s->ndev;
    kt_status st;
    /* the previous timeline is gone (its arrays may move): start and end
       come back when this run ends, and stay NULL when it fails */
    s->start = s->end = NULL;
    if (n > 0 && !s->task)
        return kt__fail(err, KT_ERR_INVALID, 0, "simulation: %d tasks and "
                        "no task array (NULL)", n);
    st = kt__sim_reserve(s, err);
    if (st != KT_OK) return st;
    w = s->work;
    busy = s->busy; /* (sized by the reserve: it may have moved) */
    same = w->derived && w->n == n && w->nres == s->ndev + s->nlink &&
           w->ndev == s->ndev;
    ne_old = same ? w->ne : 0;
    w->simulated = 0;
    w->n = n;
    w->nres = s->ndev + s->nlink;
    w->ndev = s->ndev;
    /* Validate the tasks, keeping a copy of their devices, kinds and
       predecessor lists: when all are what the last run had, the
       successor lists and busy lists derived then still hold and are not
       derived again (the common case of runs on one task graph; a kt_sim
       refilled with another graph, however it was changed, differs
       somewhere and is derived afresh).  The task structs are read once,
       here, for all a run needs of them: their run times too, rounded to
       the tick of the previous run (almost always the tick of this one:
       checked after the pass, which the rare other case repeats), the
       busy times, and the histogram that sets the tick. */
    memset(w->tick_hist, 0, sizeof w->tick_hist);
    guess = w->tick; /* 0: no run yet */
    per_s = guess > 0 ? kt__sim_per_tick(guess) : 0;
    for (i = 0; i < ndev; i++) busy[i] = 0;
    kt__qstart(&w->queue);
    for (i = 0; i < n; i++) {
        const kt_sim_task *t = &s->task[i];
        unsigned char compute = t->kind == KT_TASK_COMPUTE;
        double sec;
        /* the structs are asked for 64 ahead (3.5 KB): the stream of
           them is the pass's cost, and other jobs on the machine keep
           the hardware's own prefetching from staying that far ahead */
        if (i + KT__PREFETCH_AHEAD < n)
            KT__PREFETCH(&s->task[i + KT__PREFETCH_AHEAD]);
        if ((st = kt__sim_check_task(t, i, w->nres, err)) != KT_OK) {
            w->derived = 0;
            return st;
        }
        /* written only when they differ: most runs change nothing here */
        if (!same || w->dev[i] != (int)t->device ||
            w->npred[i] != t->npred || w->compute[i] != compute) {
            same = 0;
            w->dev[i] = (int)t->device;
            w->npred[i] = t->npred;
            w->compute[i] = compute;
        }
        if (!same || w->pred_first[i] != t->pred_first)
            w->pred_first[i] = t->pred_first;
        if ((size_t)t->pred_first != next_first) { /* a new stretch */
            if (nst == w->cap_stretch) {
                void *np = kt__sim_grow(w->stretch, &w->cap_stretch, nst + 1,
                                        sizeof(struct kt__stretch));
                if (!np) goto nomem;
                w->stretch = (struct kt__stretch *)np;
            }
            w->stretch[nst].e = e;
            w->stretch[nst++].task = i;
        }
        next_first = (size_t)t->pred_first + (size_t)t->npred;
        /* a run of equal run times (an op's tasks on every device) is
           rounded once and counted in the histogram once */
        memcpy(&bits, &t->seconds, sizeof bits);
        if (bits != run_bits) {
            if (run_len) kt__sim_count(w, run_s, run_len);
            run_bits = bits;
            run_len = 0;
            run_s = t->seconds;
            run_q = guess > 0 ? kt__sim_quantize(run_s, guess, per_s) : run_s;
        }
        run_len++;
        sec = run_q;
        w->sec[i] = sec;
        if (compute && t->device < ndev) busy[t->device] += sec;
        if (t->npred == 0) kt__qpush(&w->queue, 0, i);
        e += (size_t)t->npred;
    }
    if (run_len) kt__sim_count(w, run_s, run_len);
    if (e > (size_t)INT_MAX - 1) {
        /* successor lists are numbered with ints (overlapping predecessor
           ranges can count more entries than s->pred holds) */
        w->derived = 0;
        return kt__fail(err, KT_ERR_INVALID, 0, "simulation: the tasks "
                        "list %lu predecessor entries in all, more than %d",
                        (unsigned long)e, INT_MAX - 1);
    }
    if (e > 0 && !s->pred) {
        w->derived = 0;
        return kt__fail(err, KT_ERR_INVALID, 0, "simulation: the tasks list "
                        "%lu predecessor entries and pred is NULL",
                        (unsigned long)e);
    }
    /* the tick of these run times: when it is not the one guessed, the
       run times are rounded again, and the busy times summed again
       (whole ticks, so exactly, in any order) */
    s->tick = kt__sim_tick(w);
    if (s->tick != guess) kt__sim_requantize(s, w);
    w->tick = s->tick;
    if (e + 1 > w->cap_e) {
        void *np = kt__sim_grow(w->preds, &w->cap_e, e + 1, sizeof(int));
        if (!np) goto nomem;
        w->preds = (int *)np;
    }
    if (ne_old != e) same = 0;
    /* the predecessor lists, a stretch at a time (the pass noted them:
       no second pass over the tasks' counts and offsets) */
    for (j = 0; (size_t)j < nst && !bad; j++) {
        size_t at = w->stretch[j].e;
        size_t len = ((size_t)j + 1 < nst ? w->stretch[j + 1].e : e) - at;
        if (len > 0 &&
            !kt__sim_take_preds(w, s->pred + w->pred_first[w->stretch[j].task],
                                len, at, &same))
            bad = 1;
    }
    if (bad) {
        w->derived = 0;
        return kt__sim_bad_pred(s, w, err);
    }
    w->ne = e;
    if (!same && !kt__sim_derive(w)) goto nomem;
    w->derived = 1;
    kt__sim_reset_waits(w);
    return KT_OK;
nomem:
    kt_sim_invalidate(s);
    return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory simulating");
}


/* The ready queue of Algorithm 1: tasks taken in order of (ready time,
   task index).  The ready times taken never decrease -- a task becomes
   ready when its last predecessor ends, no earlier than that predecessor
   was itself ready -- which allows a radix heap (Ahuja, Mehlhorn, Orlin
   and Tarjan, "Faster algorithms for the shortest path problem", 1990)
   instead of a comparison heap.  Every queued time is >= `last`, the time
   of the tasks being taken now, and a task waits in bucket b = 1 + the
   highest bit in which its time differs from `last` (nonnegative doubles
   order like their bit patterns, so those are the keys).  When the tasks
   at `last` run out, the lowest nonempty bucket holds the least time
   queued: it becomes `last`, and the bucket's other tasks move to lower
   buckets -- each task moves at most 64 times, in practice once or twice,
   and no comparison heap is kept in order on every take.

   Bucket 0, the tasks ready exactly at `last`, is where the index order
   matters.  Such tasks come in groups (every successor a task releases is
   ready at its end, and a step on 64 devices ends many tasks at the same
   instant), so they are sorted by index once, when their time comes, and
   taken in order.  A task that becomes ready at `last` while that group
   is being taken (its predecessor took no time) goes to a small min-heap
   by index, and each take is the lesser of the two heads. */
static uint64_t kt__qbits(double ready) {
    uint64_t b;
    memcpy(&b, &ready, sizeof b);
    return b;
}

static double kt__qtime(uint64_t b) {
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* The bucket of key b (b > q->last). */
static int kt__qbucket(const kt__queue *q, uint64_t b) {
    uint64_t x = b ^ q->last;
#if defined(__GNUC__)
    return 64 - __builtin_clzll(x);
#else
    int k = 1; /* 1 + the position of the highest set bit, by halving */
    if (x >> 32) { k += 32; x >>= 32; }
    if (x >> 16) { k += 16; x >>= 16; }
    if (x >> 8) { k += 8; x >>= 8; }
    if (x >> 4) { k += 4; x >>= 4; }
    if (x >> 2) { k += 2; x >>= 2; }
    if (x >> 1) k += 1;
    return k;
#endif
}

/* Makes room for `more` more tasks in a bucket (rare: the buckets are
   kept between runs); 0: out of memory, noted for the run to report. */
static int kt__qgrow(kt__queue *q, kt__qlist *l, int more) {
    size_t cap = (size_t)l->cap, need = (size_t)l->n + (size_t)more;
    void *np;
    /* a bucket counts its tasks in an int: refused before it grows, so
       that a moved array is never dropped */
    if (need > INT_MAX / 2) {
        q->nomem = 1;
        return 0;
    }
    np = kt__sim_grow(l->item, &cap, need, sizeof(kt__qitem));
    if (!np) {
        q->nomem = 1;
        return 0;
    }
    if (cap > INT_MAX) cap = INT_MAX;
    l->item = (kt__qitem *)np;
    l->cap = (int)cap;
    return 1;
}

/* The tasks an item stands for. */
static int kt__qitem_tasks(const kt__qitem *x) {
    return x->count == 0 ? 1 : x->count > 0 ? x->count : -x->count;
}

static KT__HOT void kt__qappend(kt__queue *q, int b, uint64_t key,
                                int task, int count) {
    kt__qlist *l = &q->bucket[b];
    int n = l->n;
    if (n == l->cap && !kt__qgrow(q, l, 1)) {
        kt__qitem lost;
        lost.count = count;
        q->count -= kt__qitem_tasks(&lost); /* lost; the run fails */
        return;
    }
    /* marked only when it was empty: a store to q->used on every append
       would chain them all through memory */
    if (n == 0) q->used |= UINT64_C(1) << (b - 1);
    l->item[n].key = key;
    l->item[n].task = task;
    l->item[n].count = count;
    l->n = n + 1;
}

/* the min-heap by index of the tasks ready at `last` that came late */
static void kt__qlate_push(kt__queue *q, int task) {
    int i = q->nlate++;
    while (i > 0 && task < q->late[(i - 1) / 2]) {
        q->late[i] = q->late[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->late[i] = task;
}

static int kt__qlate_pop(kt__queue *q) {
    int top = q->late[0], x = q->late[--q->nlate], i = 0, c;
    while ((c = 2 * i + 1) < q->nlate) {
        if (c + 1 < q->nlate && q->late[c + 1] < q->late[c]) c++;
        if (x < q->late[c]) break;
        q->late[i] = q->late[c];
        i = c;
    }
    if (q->nlate > 0) q->late[i] = x;
    return top;
}

static int kt__ctz64(uint64_t x) { /* x != 0 */
#if defined(__GNUC__)
    return __builtin_ctzll(x);
#else
    int k = 0;
    while (!(x & 1)) {
        x >>= 1;
        k++;
    }
    return k;
#endif
}

/* The starts of a[0 .. n)'s ascending runs in run[0 ..), returned: how
   many. */
static int kt__runs(const int *a, int n, int *run) {
    int nr = 1, i;
    run[0] = 0;
    for (i = 1; i < n; i++) { /* without a branch */
        run[nr] = i;
        nr += a[i] < a[i - 1];
    }
    return nr;
}

/* a[0 .. n), whose nr ascending runs start at run[0 .. nr) (run has room
   for nr + 1), sorted by merging the runs pairwise round by round,
   ping-ponging between a and o; returns the one that holds the result. */
static int *kt__merge_runs(int *a, int *o, int *run, int nr, int n) {
    while (nr > 1) {
        int r, m = 0, *t;
        run[nr] = n;
        for (r = 0; r < nr; r += 2) {
            int x = run[r], j = run[r + 1], k = r + 2 <= nr ? run[r + 2] : n;
            int y = j, at = x; /* (an odd run out: y == k, copied) */
            run[m++] = x;
            while (x < j && y < k) {
                /* without a branch: which side is taken is a coin toss */
                int ax = a[x], ay = a[y], right = ay < ax;
                o[at++] = right ? ay : ax;
                y += right;
                x += !right;
            }
            while (x < j) o[at++] = a[x++];
            while (y < k) o[at++] = a[y++];
        }
        nr = m;
        t = a;
        a = o;
        o = t;
    }
    return a;
}

/* Sorts q->now[0 .. nnow), the group of tasks ready at one instant, by
   index.  Tasks released together come in index order, so a group has a
   few ascending runs (half the groups on wresnet-152 only one: nothing to
   do).  The others are sorted through a bitmap of all task indices, a
   bit per task: each task's bit is set, noting each 64-bit word that was
   empty; only those words are sorted (a group's tasks lie in a few
   stretches of indices -- an op's tasks on every device, the next op's
   transfers -- so a group of 32 tasks may have 4 words), and their bits
   read back in order, each word cleared as it is read.  When some task
   was queued twice (no run does that, but the queue does not rely on
   it), or the words are as many as the tasks, the runs are merged
   instead. */
static void kt__qsort_now(kt__queue *q) {
    int n = q->nnow, *a = q->now, *run = q->runs, *words = q->words;
    int nr = kt__runs(a, n, run), nw = 0, i, k = 0, *wsorted;
    uint64_t *bits = q->bits, twice = 0;
    if (nr == 1) return; /* sorted */
    for (i = 0; i < n; i++) {
        int wd = a[i] / 64;
        uint64_t old = bits[wd], bit = UINT64_C(1) << (a[i] % 64);
        twice |= old & bit;
        bits[wd] = old | bit;
        words[nw] = wd; /* kept when the word was empty */
        nw += old == 0;
    }
    if (twice || nw == n) {
        for (i = 0; i < nw; i++) bits[words[i]] = 0;
        a = kt__merge_runs(a, q->spare, run, nr, n);
        q->spare = a == q->now ? q->spare : q->now;
        q->now = a;
        return;
    }
    wsorted = kt__merge_runs(words, q->spare, run, kt__runs(words, nw, run),
                             nw);
    for (i = 0; i < nw; i++) {
        int wd = wsorted[i];
        uint64_t m = bits[wd];
        bits[wd] = 0;
        while (m) {
            a[k++] = wd * 64 + kt__ctz64(m);
            m &= m - 1;
        }
    }
}

/* Empties the queue.  A failure to grow a bucket (nomem) stays noted:
   a run that restarts from a restore point (kt__plan_sim_requeue) empties
   its queue many times, and a task lost before must still fail the run;
   kt__qstart clears it when a run starts. */
static void kt__qreset(kt__queue *q) {
    int b;
    for (b = 1; b <= 64; b++) q->bucket[b].n = 0;
    q->used = 0;
    q->last = 0;
    q->nnow = q->inow = q->nlate = 0;
    q->sorted = 0;
    q->count = 0;
}

/* The queue emptied for a new run, its failure forgotten. */
static void kt__qstart(kt__queue *q) {
    kt__qreset(q);
    q->nomem = 0;
    q->list[0] = q->list[1] = NULL;
}

/* Queues a task ready at `ready` (>= the time of the last task taken). */
static KT__HOT void kt__qpush(kt__queue *q, double ready, int task) {
    uint64_t b = kt__qbits(ready);
    q->count++;
    if (b != q->last) kt__qappend(q, kt__qbucket(q, b), b, task, 0);
    else if (!q->sorted) q->now[q->nnow++] = task;
    else kt__qlate_push(q, task);
}

/* Queues the tasks q->list[which][first .. first + n) (n >= 1), all ready
   at `ready`: when that is not now, as one item of the bucket, listed
   again only when their time comes (kt__qadvance).  A full run's tasks
   are queued in such lists -- a task's sole successors, the tasks of a
   wait state -- so its buckets hold 129k items instead of 448k tasks on
   wresnet-152 over 64 devices, and the items moved down or searched for
   the least key are fewer by as much. */
static KT__HOT void kt__qpush_list(kt__queue *q, double ready, int which,
                                   int first, int n) {
    uint64_t key = kt__qbits(ready);
    q->count += n;
    if (key != q->last) { /* (a list of one: the task itself) */
        if (n == 1)
            kt__qappend(q, kt__qbucket(q, key), key, q->list[which][first],
                        0);
        else
            kt__qappend(q, kt__qbucket(q, key), key, first, which ? n : -n);
    } else { /* now: one by one, into the group or the late heap */
        const int *tasks = q->list[which] + first;
        int i;
        q->count -= n;
        for (i = 0; i < n; i++) kt__qpush(q, ready, tasks[i]);
    }
}

/* The next time with tasks: the least in the lowest nonempty bucket; its
   tasks become the group taken now, the others of that bucket move down
   (each to a bucket below b: they share with the new `last` the bits
   above b - 1 that they shared with the old one, and bit b - 1 too). */
static void kt__qadvance(kt__queue *q) {
    int b = 1 + kt__ctz64(q->used), i, n, nnow = 0, *now = q->now;
    uint64_t least, l2;
    kt__qitem *it;
    it = q->bucket[b].item;
    n = q->bucket[b].n;
    /* the least key, in two chains of comparisons (half the latency) */
    least = l2 = it[0].key;
    for (i = 1; i + 1 < n; i += 2) {
        uint64_t x = it[i].key, y = it[i + 1].key;
        least = x < least ? x : least;
        l2 = y < l2 ? y : l2;
    }
    if (i < n && it[i].key < least) least = it[i].key;
    if (l2 < least) least = l2;
    q->last = least;
    q->bucket[b].n = 0;
    q->used &= ~(UINT64_C(1) << (b - 1));
    /* (the group counted in a local: a store through q->now could be
       q->nnow for all the compiler knows) */
    for (i = 0; i < n; i++) {
        uint64_t key = it[i].key;
        int c = it[i].count;
        if (key != least)
            kt__qappend(q, kt__qbucket(q, key), key, it[i].task, c);
        else if (c == 0)
            now[nnow++] = it[i].task;
        else { /* a list of tasks (a few: copied without a call) */
            const int *from = q->list[c > 0] + it[i].task;
            int m = c > 0 ? c : -c, j;
            for (j = 0; j < m; j++) now[nnow + j] = from[j];
            nnow += m;
        }
    }
    q->nnow = nnow;
    q->inow = 0;
}

/* kt__qpop when the group at `last` is not being taken in plain order:
   the next group to be found or sorted, or late arrivals to merge. */
static int kt__qpop_slow(kt__queue *q, double *ready) {
    int t;
    if (q->inow == q->nnow && q->nlate == 0) {
        kt__qadvance(q);
        q->sorted = 0;
    }
    if (!q->sorted) {
        kt__qsort_now(q);
        q->sorted = 1;
    }
    if (q->nlate > 0 &&
        (q->inow == q->nnow || q->late[0] < q->now[q->inow]))
        t = kt__qlate_pop(q);
    else
        t = q->now[q->inow++];
    q->count--;
    *ready = kt__qtime(q->last);
    return t;
}

/* Takes the task with the least (ready time, index); the queue must not
   be empty.  Most takes are the next of a sorted group. */
static KT__HOT int kt__qpop(kt__queue *q, double *ready) {
    int t;
    if (!q->sorted || q->nlate > 0 || q->inow == q->nnow)
        return kt__qpop_slow(q, ready);
    t = q->now[q->inow++];
    q->count--;
    *ready = kt__qtime(q->last);
    return t;
}

/* The queued tasks in no particular order (a checkpoint notes them, a
   delta compares their ready times): 1 and the next one's task and ready
   time, 0 after the last.  Start with a zeroed iterator. */
typedef struct kt__qiter {
    int part, b, i, j; /* j: the next of item i's tasks */
} kt__qiter;

static int kt__qnext(const kt__queue *q, kt__qiter *it, int *task,
                     double *ready) {
    if (it->part == 0) { /* the group at `last`, not yet taken */
        if (it->i < q->nnow - q->inow) {
            *task = q->now[q->inow + it->i++];
            *ready = kt__qtime(q->last);
            return 1;
        }
        it->part = 1;
        it->i = 0;
    }
    if (it->part == 1) { /* late arrivals at `last` */
        if (it->i < q->nlate) {
            *task = q->late[it->i++];
            *ready = kt__qtime(q->last);
            return 1;
        }
        it->part = 2;
        it->b = 1;
        it->i = 0;
    }
    for (; it->b <= 64; it->b++, it->i = 0)
        if (it->i < q->bucket[it->b].n) {
            const kt__qitem *x = &q->bucket[it->b].item[it->i];
            if (x->count == 0) {
                *task = x->task;
            } else {
                *task = q->list[x->count > 0][x->task + it->j];
                if (++it->j < kt__qitem_tasks(x)) {
                    *ready = kt__qtime(x->key);
                    return 1;
                }
            }
            it->i++;
            it->j = 0;
            *ready = kt__qtime(x->key);
            return 1;
        }
    return 0;
}

/* The critical path, walked back from the last task: a task that waited
   for its device came after the task before it there, any other after its
   latest predecessor. */
static kt_status kt__sim_critical(kt_sim *s, int last, kt_error *err) {
    struct kt__sim_work *w = s->work;
    int t = last, i;
    void *np;
    s->ncritical = 0;
    if (!s->critical) w->cap_crit = 0;
    np = kt__sim_grow(s->critical, &w->cap_crit, (size_t)s->ntask + 1,
                      sizeof(int));
    if (!np) return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory simulating");
    s->critical = (int *)np;
    while (t >= 0 && s->ncritical < s->ntask) {
        double ready = 0;
        int next = -1, j;
        s->critical[s->ncritical++] = t;
        for (j = 0; j < w->npred[t]; j++) {
            int p = s->pred[w->pred_first[t] + j];
            double e = kt__sim_end_of(w, p);
            if (next < 0 || e > ready) {
                ready = e;
                next = p;
            }
        }
        if (kt__sim_start_of(w, t) > ready) next = w->devprev[t];
        t = next;
    }
    for (i = 0; i < s->ncritical / 2; i++) {
        int tmp = s->critical[i];
        s->critical[i] = s->critical[s->ncritical - 1 - i];
        s->critical[s->ncritical - 1 - i] = tmp;
    }
    return KT_OK;
}

/* A checkpoint's queued tasks, with room for `busy` busy entries after
   them.  0 when out of memory. */
static int kt__snap_queue(kt__snap *sp, const kt__queue *q, size_t busy) {
    kt__qiter it = {0, 0, 0, 0};
    double ready;
    int i;
    void *np = kt__sim_grow(sp->task, &sp->cap,
                            (size_t)q->count + busy + 1, sizeof(int));
    if (!np) return 0;
    sp->task = (int *)np;
    for (i = 0; kt__qnext(q, &it, &sp->task[i], &ready); i++) {}
    sp->nready = q->count;
    sp->nbusy = 0;
    return 1;
}

/* Checkpoint b of a full run for kt_sim_delta, taken before position
   b * KT__DBLOCK starts: the queue, and every device or link still busy
   after `now` (the latest ready time taken from the queue: one free by
   then cannot delay any later task, which is ready at `now` or after).
   Only one busy at the previous checkpoint or running a task since can
   be busy.  0 when out of memory. */
static int kt__sim_checkpoint(struct kt__sim_work *w, int b, double now) {
    struct kt__delta *dl = w->dl;
    kt__snap *sp = &dl->snap[b], *pv = b > 0 ? &dl->snap[b - 1] : NULL;
    int nh = w->queue.count, i, nb = 0;
    unsigned stamp = kt__delta_epoch(dl);
    if (!kt__snap_queue(sp, &w->queue,
                        pv ? (size_t)pv->nbusy + KT__DBLOCK : 0))
        return 0;
    for (i = 0; pv && i < pv->nbusy + KT__DBLOCK; i++) {
        int r = i < pv->nbusy ? w->dev[pv->task[pv->nready + i]]
                              : w->dev[w->order[(b - 1) * KT__DBLOCK +
                                                i - pv->nbusy]];
        if (dl->rstamp[r] == stamp || !(w->free_at[r] > now)) continue;
        dl->rstamp[r] = stamp;
        sp->task[nh + nb++] = w->res_last[r];
    }
    sp->nbusy = nb;
    return 1;
}

static kt_status kt__sim_ended(kt_sim *s, double step, int at,
                               kt_error *err);

/* Task t ended at `end`: each successor waits for one predecessor less,
   and is queued when it waits for none (ready at its predecessors' latest
   end).  The hottest loop of the simulation: ~2 wait states per task
   read, maximised and written (873k on wresnet-152 over 64 devices, the
   states shared by tasks with equal lists), each a scattered access, so
   everything else is in locals. */
static void kt__sim_release(struct kt__sim_work *w, int t, double end) {
    int first = w->succ_first[t], nsole = w->succ_sole[t] - first;
    const int *u = w->fsucc + w->ffirst[t];
    const int *stop = w->fsucc + w->ffirst[t + 1];
    kt__fwait *wait = w->fwait;
    kt__queue *q = &w->queue;
    /* a successor waiting for t alone is ready at its end: it has no wait
       state (two thirds of the tasks on wresnet-152) */
    if (nsole > 0) kt__qpush_list(q, end, 1, first, nsole);
    for (; u < stop; u++) {
        kt__fwait *x = &wait[*u];
        /* the latest end, stored whichever it is: a conditional store
           would be a branch, taken at random */
        double r = x->ready;
        x->ready = end > r ? end : r;
        if (--x->indeg == 0) { /* its tasks are ready */
            kt__qpush_list(q, x->ready, 0, x->tasks + 1,
                           w->fwtask[x->tasks]);
        }
    }
}

/* Task t, taken from the queue ready at `ready`, starts as the k-th: when
   its device is also free, on the device after the task before it there.
   Returns its end.  (Shared by full runs and kt_plan_sim's runs; a delta
   writes its times apart, kt__delta_run.) */
static KT__HOT double kt__sim_start(struct kt__sim_work *w, int t,
                                    double ready, int k) {
    int d = w->dev[t];
    double free_at = w->free_at[d];
    /* (without a branch: ready or free first is a coin toss) */
    double start = free_at > ready ? free_at : ready;
    double end = start + w->sec[t];
    w->start[t] = start;
    w->end[t] = end;
    w->devprev[t] = w->res_last[d];
    w->free_at[d] = end;
    w->res_last[d] = t;
    w->order[k] = t;
    w->pos[t] = k;
    return end;
}

/* FlexFlow Algorithm 1 on a prepared task graph (kt__sim_prepare queued
   the tasks without predecessors): in order of readiness each task starts
   when its device (a compute device or a link) is free, so every device
   runs its tasks in FIFO order; each start is recorded in order, pos and
   devprev, and every KT__DBLOCK starts a checkpoint is taken once
   kt_sim_delta has asked for them. */
static kt_status kt__sim_algorithm1(kt_sim *s, kt_error *err) {
    struct kt__sim_work *w = s->work;
    int n = s->ntask, kk = 0, latest_at = 0;
    int checkpoints = w->dl != NULL;
    double now = 0, latest = -1;
    int64_t r;
    for (r = 0; r < w->nres; r++) {
        w->free_at[r] = 0;
        w->res_last[r] = -1;
    }
    /* the lists kt__sim_release queues tasks from */
    w->queue.list[1] = w->succ;
    w->queue.list[0] = w->fwtask;
    if (checkpoints) {
        w->dl->index_valid = 0; /* stored times are true times again */
        w->dl->snaps_valid = 0;
        w->dl->critical_stale = 0;
    }
    while (w->queue.count > 0) {
        double end;
        int t;
        if (checkpoints && kk % KT__DBLOCK == 0 &&
            !kt__sim_checkpoint(w, kk / KT__DBLOCK, now))
            checkpoints = 0; /* out of memory: the next delta runs in full */
        t = kt__qpop(&w->queue, &now);
        end = kt__sim_start(w, t, now, kk);
        /* the step time so far, and the first position that ends then */
        latest_at = end > latest ? kk : latest_at;
        latest = end > latest ? end : latest;
        kk++;
        kt__sim_release(w, t, end);
    }
    if (w->queue.nomem) {
        w->simulated = 0;
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory simulating");
    }
    if (kk < n)
        return kt__fail(err, KT_ERR_INVALID, 0, "simulation: the task "
                        "graph has a cycle (%d of %d tasks can run)", kk, n);
    if (checkpoints) w->dl->snaps_valid = 1;
    return kt__sim_ended(s, latest, latest_at, err);
}

/* A run's timeline is complete, with step time `step` first reached by
   the task at position `at` (when there are tasks): the public view of
   it, and the critical path from that task. */
static kt_status kt__sim_ended(kt_sim *s, double step, int at,
                               kt_error *err) {
    struct kt__sim_work *w = s->work;
    s->ncritical = 0;
    if (s->ntask > 0) {
        /* the walk reads the workspace's times; only a run that ends
           with its critical path publishes them (NULL after a failure) */
        kt_status st = kt__sim_critical(s, w->order[at], err);
        if (st != KT_OK) return st;
    }
    s->start = w->start; /* the timeline itself, not a copy */
    s->end = w->end;
    s->step_seconds = s->ntask > 0 ? step : 0;
    w->simulated = 1;
    return KT_OK;
}

static int kt__delta_size(struct kt__sim_work *w);

/* A full simulation: the task graph read and checked, then Algorithm 1
   (with checkpoints once kt_sim_delta has asked for them). */
static kt_status kt__sim_full(kt_sim *s, kt_error *err) {
    kt_status st = kt__sim_prepare(s, err);
    if (st != KT_OK) return st;
    if (s->work->dl && !kt__delta_size(s->work)) {
        kt__delta_free(s->work->dl); /* kt_sim_delta asks again */
        s->work->dl = NULL;
    }
    return kt__sim_algorithm1(s, err);
}

kt_status kt_sim_run(kt_sim *s, kt_error *err) {
    kt_status st;
    if (!s) return kt__fail(err, KT_ERR_INVALID, 0, "kt_sim_run: no kt_sim");
    st = kt__sim_full(s, err);
    if (st == KT_OK) kt__ok(err);
    return st;
}

/* The shift index folded into the stored times, which become the true
   ones again (all shifts 0): a pass in task order, moving only the tasks
   of a shifted block.  Exact: whole ticks below 2^52 (kt__sim_quantize). */
static void kt__sim_fold_shifts(struct kt__sim_work *w) {
    struct kt__delta *dl = w->dl;
    int b, t, any = 0;
    if (!dl || !dl->index_valid) return;
    for (b = 0; b < dl->nblk && !any; b++) any = dl->boff[b] != 0;
    if (!any) return;
    for (t = 0; t < w->n; t++) {
        double d = dl->boff[w->pos[t] / KT__DBLOCK];
        if (d != 0) {
            w->start[t] += d;
            w->end[t] += d;
        }
    }
    for (b = 0; b < dl->nblk; b++) {
        dl->bmax[b] += dl->boff[b];
        dl->boff[b] = 0;
    }
}

kt_status kt_sim_timeline(kt_sim *s, kt_error *err) {
    struct kt__sim_work *w = s ? s->work : NULL;
    kt_status st;
    if (!w || !w->simulated || w->n != s->ntask)
        return kt__fail(err, KT_ERR_INVALID, 0, "kt_sim_timeline: no "
                        "simulation of this task graph");
    kt__sim_fold_shifts(w);
    s->start = w->start;
    s->end = w->end;
    if (w->dl && w->dl->critical_stale) {
        if ((st = kt__sim_critical(s, w->dl->last, err)) != KT_OK) return st;
        w->dl->critical_stale = 0;
    }
    kt__ok(err);
    return KT_OK;
}

/* ----------------------------------------------------- delta simulation */

/* FlexFlow 5.3 (Algorithm 2) brings a timeline up to date after some run
   times change by re-simulating only the part that changes.  Here it is
   Algorithm 1 resumed with two devices that make its cost depend on the
   size of the change rather than of the timeline:
   - checkpoints: every KT__DBLOCK starts, a full run notes which tasks
     wait in its queue and which devices and links are busy; a delta
     resumes from the last checkpoint before the first changed task, so
     nothing earlier is visited;
   - rejoining up to a shift: it stops as soon as everything that can
     still matter -- every ready time, partial ready time and free time
     later than the present -- is what the previous run had at the same
     point, all moved by one amount d.  The rule that orders the queue
     does not change when every key moves by d, so from there on the
     previous timeline moved by d is the answer; the move is recorded in
     the shift index (per block of positions), not written task by task.
   Times are whole ticks (kt__sim_quantize), so "moved by d" is exact and
   the result equals a full run bit for bit (a property test checks it). */

/* Sizes the checkpoints, shift index and run scratch for the task graph
   (capacities only grow).  0 when out of memory. */
static int kt__delta_size(struct kt__sim_work *w) {
    struct kt__delta *dl = w->dl;
    size_t n = (size_t)w->n + 1, nres = (size_t)w->nres + 1;
    size_t nblk = (size_t)w->n / KT__DBLOCK + 2, c;
    void *np;
    dl->n = w->n;
    dl->nres = w->nres;
    dl->nblk = (w->n + KT__DBLOCK - 1) / KT__DBLOCK;
    dl->snaps_valid = dl->index_valid = 0;
#define KT__DGROW(field, type, capf, need)                                  \
    (c = dl->capf,                                                          \
     (np = kt__sim_grow(dl->field, &c, need, sizeof(type))) != NULL         \
         ? (dl->field = (type *)np, 1) : 0)
    if (n > dl->cap_n) {
        size_t old = dl->cap_n;
        if (!KT__DGROW(devnext, int, cap_n, n) ||
            !KT__DGROW(tstamp, unsigned, cap_n, n) ||
            !KT__DGROW(wstamp, unsigned, cap_n, n) ||
            !KT__DGROW(nstart, double, cap_n, n) ||
            !KT__DGROW(nend, double, cap_n, n) ||
            !KT__DGROW(norder, int, cap_n, n) ||
            !KT__DGROW(ndevprev, int, cap_n, n) ||
            !KT__DGROW(partial, int, cap_n, n) ||
            !KT__DGROW(partial_at, int, cap_n, n))
            return 0;
        dl->cap_n = c;
        memset(dl->tstamp + old, 0, sizeof(unsigned) * (c - old));
        memset(dl->wstamp + old, 0, sizeof(unsigned) * (c - old));
    }
    if (nres > dl->cap_res) {
        size_t old = dl->cap_res;
        if (!KT__DGROW(rstamp, unsigned, cap_res, nres) ||
            !KT__DGROW(touched, int, cap_res, nres) ||
            !KT__DGROW(prebusy, int, cap_res, nres) ||
            !KT__DGROW(rnext, int, cap_res, nres))
            return 0;
        dl->cap_res = c;
        memset(dl->rstamp + old, 0, sizeof(unsigned) * (c - old));
    }
    if (nblk > dl->cap_blk) {
        size_t old = dl->cap_blk;
        if (!KT__DGROW(boff, double, cap_blk, nblk) ||
            !KT__DGROW(bmax, double, cap_blk, nblk) ||
            !KT__DGROW(bmax_at, int, cap_blk, nblk) ||
            !KT__DGROW(snap, kt__snap, cap_blk, nblk))
            return 0;
        dl->cap_blk = c;
        memset(dl->snap + old, 0, sizeof(kt__snap) * (c - old));
    }
#undef KT__DGROW
    return 1;
}

/* Block b's latest stored end and its first position. */
static void kt__delta_block_max(struct kt__sim_work *w, int b) {
    struct kt__delta *dl = w->dl;
    int k = b * KT__DBLOCK, hi = k + KT__DBLOCK < w->n ? k + KT__DBLOCK : w->n;
    dl->bmax[b] = w->end[w->order[k]];
    dl->bmax_at[b] = k;
    for (k++; k < hi; k++)
        if (w->end[w->order[k]] > dl->bmax[b]) {
            dl->bmax[b] = w->end[w->order[k]];
            dl->bmax_at[b] = k;
        }
}

/* The shift index of a timeline a full run just made: no shifts yet. */
static void kt__delta_index(struct kt__sim_work *w) {
    struct kt__delta *dl = w->dl;
    int t, b;
    for (t = 0; t < w->n; t++) dl->devnext[t] = -1;
    for (t = 0; t < w->n; t++)
        if (w->devprev[t] >= 0) dl->devnext[w->devprev[t]] = t;
    for (b = 0; b < dl->nblk; b++) {
        dl->boff[b] = 0;
        kt__delta_block_max(w, b);
    }
    dl->index_valid = 1;
}

/* When task t is ready on the current timeline: its predecessors' latest
   end, 0 when it has none. */
static double kt__delta_ready(const kt_sim *s, int t) {
    const struct kt__sim_work *w = s->work;
    const int *pred = s->pred + w->pred_first[t];
    double ready = 0;
    int j;
    for (j = 0; j < w->npred[t]; j++) {
        double e = kt__sim_end_of(w, pred[j]);
        if (e > ready) ready = e;
    }
    return ready;
}

/* The state before position c = b * KT__DBLOCK of the current timeline,
   from checkpoint b: the queue, each task's ready time recomputed from its
   predecessors' ends (all earlier), and the busy devices and links, each
   with its last task before c (the noted task or a later one of its own:
   earlier deltas may have reordered a stretch). */
static void kt__delta_restore(kt_sim *s, int b) {
    struct kt__sim_work *w = s->work;
    struct kt__delta *dl = w->dl;
    const kt__snap *sp = &dl->snap[b];
    int c = b * KT__DBLOCK, i;
    unsigned ep = dl->epoch;
    dl->ntouched = dl->npartial = dl->nprebusy = 0;
    kt__qstart(&w->queue); /* (once per delta run) */
    for (i = 0; i < sp->nready; i++) {
        int u = sp->task[i];
        dl->wstamp[u] = ep;
        w->wait[u].indeg = 0;
        w->wait[u].ready = kt__delta_ready(s, u);
        kt__qpush(&w->queue, w->wait[u].ready, u);
    }
    for (i = 0; i < sp->nbusy; i++) {
        int q = sp->task[sp->nready + i], r = w->dev[q];
        while (dl->devnext[q] >= 0 && w->pos[dl->devnext[q]] < c)
            q = dl->devnext[q];
        dl->rstamp[r] = ep;
        w->free_at[r] = kt__sim_end_of(w, q);
        w->res_last[r] = q;
        w->res_oldmax[r] = -1;
        dl->touched[dl->ntouched++] = r;
        dl->prebusy[dl->nprebusy++] = q;
    }
}

/* Resource r's first task in this run is t, and r was idle at the
   checkpoint c: its last task before c, found back along r's tasks. */
static void kt__delta_touch(struct kt__sim_work *w, int r, int t, int c) {
    struct kt__delta *dl = w->dl;
    int q = w->devprev[t];
    while (q >= 0 && w->pos[q] >= c) q = w->devprev[q];
    dl->rstamp[r] = dl->epoch;
    w->free_at[r] = q >= 0 ? kt__sim_end_of(w, q) : 0;
    w->res_last[r] = q;
    w->res_oldmax[r] = -1;
    dl->touched[dl->ntouched++] = r;
}

/* Task u, first seen in this run as a successor of a task that started:
   the predecessors that started before c have ended (their latest end),
   the others are still to come. */
static void kt__delta_wait(kt_sim *s, int u, int c) {
    struct kt__sim_work *w = s->work;
    struct kt__delta *dl = w->dl;
    const int *pred = s->pred + w->pred_first[u];
    int j;
    w->wait[u].ready = 0;
    w->wait[u].indeg = 0;
    for (j = 0; j < w->npred[u]; j++) {
        int p = pred[j];
        if (w->pos[p] < c) {
            double e = kt__sim_end_of(w, p);
            if (e > w->wait[u].ready) w->wait[u].ready = e;
        } else {
            w->wait[u].indeg++;
        }
    }
    dl->wstamp[u] = dl->epoch;
    dl->partial_at[u] = dl->npartial;
    dl->partial[dl->npartial++] = u;
}

static void kt__delta_unpartial(struct kt__delta *dl, int u) {
    int at = dl->partial_at[u], last = dl->partial[--dl->npartial];
    dl->partial[at] = last;
    dl->partial_at[last] = at;
}

/* A time that can still matter: x in the new run (present tnew) and xo in
   the previous one (present told) agree up to the shift d, or neither is
   later than its present -- a device free by now, or predecessors done
   by now, delay nothing that is still to start. */
static int kt__delta_agrees(double x, double xo, double tnew, double told,
                            double d) {
    return (x <= tnew && xo <= told) || x == xo + d;
}

/* Whether the state after kk starts -- the same tasks as the previous
   run's first kk, which started before -- is the previous run's state at
   that point moved by d = tnew - told in every time that can still
   matter: the free time of each device or link this run used or found
   busy, the end of each task busy at the checkpoint, the ready time of
   each queued task and the partial ready time of each task whose other
   predecessors are still to come.  Nothing else can matter: a device or
   link this run did not reach was idle at the checkpoint; a task started
   before it and still running ended no later than the last task of its
   device, which is checked (ends never decrease along a device's tasks);
   a task not yet reached waits only for predecessors still to start. */
static int kt__delta_rejoined(kt_sim *s, int c, int kk, double tnew,
                              double *shift) {
    struct kt__sim_work *w = s->work;
    struct kt__delta *dl = w->dl;
    double told = kt__delta_ready(s, w->order[kk - 1]), d = tnew - told;
    double ready;
    int i, j, u;
    kt__qiter it = {0, 0, 0, 0};
    for (i = 0; i < dl->ntouched; i++) {
        int r = dl->touched[i];
        double xo = w->res_oldmax[r] >= 0
                        ? kt__sim_end_of(w, w->order[w->res_oldmax[r]])
                        : w->free_at[r]; /* ran nothing here: unchanged */
        if (!kt__delta_agrees(w->free_at[r], xo, tnew, told, d)) return 0;
    }
    for (i = 0; i < dl->nprebusy; i++) {
        double e = kt__sim_end_of(w, dl->prebusy[i]);
        if (!kt__delta_agrees(e, e, tnew, told, d)) return 0;
    }
    while (kt__qnext(&w->queue, &it, &u, &ready))
        if (!kt__delta_agrees(ready, kt__delta_ready(s, u), tnew, told, d))
            return 0;
    for (i = 0; i < dl->npartial; i++) {
        const int *pred;
        u = dl->partial[i];
        pred = s->pred + w->pred_first[u];
        double xo = 0;
        for (j = 0; j < w->npred[u]; j++) {
            int p = pred[j];
            if (w->pos[p] < c || dl->tstamp[p] == dl->epoch) {
                double e = kt__sim_end_of(w, p);
                if (e > xo) xo = e;
            }
        }
        if (!kt__delta_agrees(w->wait[u].ready, xo, tnew, told, d)) return 0;
    }
    *shift = d;
    return 1;
}

/* Checkpoint b inside a delta run, before position b * KT__DBLOCK: the
   queue and the resources busy after `now` (only those this run set up
   can be).  0 when out of memory. */
static int kt__delta_checkpoint(struct kt__sim_work *w, int b, double now) {
    struct kt__delta *dl = w->dl;
    kt__snap *sp = &dl->snap[b];
    int i, nb = 0, nh = w->queue.count;
    if (!kt__snap_queue(sp, &w->queue, (size_t)dl->ntouched)) return 0;
    for (i = 0; i < dl->ntouched; i++) {
        int r = dl->touched[i];
        if (w->free_at[r] > now && w->res_last[r] >= 0)
            sp->task[nh + nb++] = w->res_last[r];
    }
    sp->nbusy = nb;
    return 1;
}

/* The run's starts c .. kk become the timeline's, and every later task
   moves by d: its stored times within kk's block, a block shift after. */
static void kt__delta_commit(kt_sim *s, int c, int kk, double d) {
    struct kt__sim_work *w = s->work;
    struct kt__delta *dl = w->dl;
    int i, k, b, n = w->n;
    /* the first later task of each device or link this run used: its
       device predecessor is now that resource's last task of the run */
    for (i = 0; i < dl->ntouched; i++) {
        int r = dl->touched[i];
        dl->rnext[i] = w->res_oldmax[r] >= 0
                           ? dl->devnext[w->order[w->res_oldmax[r]]] : -1;
    }
    /* the blocks the run rewrites store true times again (their shift
       folded into the tasks after kk in the last one), so a block's shift
       is only ever what it moved since it was last written: bounded by
       the times themselves, so exact */
    for (b = c / KT__DBLOCK; b * KT__DBLOCK < kk; b++) {
        int hi = (b + 1) * KT__DBLOCK < n ? (b + 1) * KT__DBLOCK : n;
        for (k = kk; k < hi && dl->boff[b] != 0; k++) {
            w->start[w->order[k]] += dl->boff[b];
            w->end[w->order[k]] += dl->boff[b];
        }
        dl->boff[b] = 0;
    }
    for (k = c; k < kk; k++) {
        int t = dl->norder[k - c];
        w->order[k] = t;
        w->pos[t] = k;
        w->start[t] = dl->nstart[t];
        w->end[t] = dl->nend[t];
        w->devprev[t] = dl->ndevprev[t];
        dl->devnext[t] = -1;
        if (dl->ndevprev[t] >= 0) dl->devnext[dl->ndevprev[t]] = t;
    }
    for (i = 0; i < dl->ntouched; i++) {
        int r = dl->touched[i], last = w->res_last[r], next = dl->rnext[i];
        if (w->res_oldmax[r] < 0) continue; /* ran nothing here */
        dl->devnext[last] = next;
        if (next >= 0) w->devprev[next] = last;
    }
    for (b = c / KT__DBLOCK; b * KT__DBLOCK < kk; b++)
        kt__delta_block_max(w, b);
    if (d != 0 && kk < n) {
        b = kk / KT__DBLOCK;
        if (kk % KT__DBLOCK) { /* the rest of kk's block, task by task */
            int hi = (b + 1) * KT__DBLOCK < n ? (b + 1) * KT__DBLOCK : n;
            for (k = kk; k < hi; k++) {
                w->start[w->order[k]] += d;
                w->end[w->order[k]] += d;
            }
            kt__delta_block_max(w, b++);
        }
        for (; b < dl->nblk; b++) dl->boff[b] += d;
    }
}

/* The step time, the latest end, from the blocks' maxima; the task that
   ends then (at its first position, as a full run takes it) starts the
   critical path when kt_sim_timeline walks it -- a walk through the
   whole task graph's arrays that would cost more than the delta. */
static void kt__delta_finish(kt_sim *s) {
    struct kt__sim_work *w = s->work;
    struct kt__delta *dl = w->dl;
    int b, best = 0;
    for (b = 1; b < dl->nblk; b++)
        if (dl->bmax[b] + dl->boff[b] > dl->bmax[best] + dl->boff[best])
            best = b;
    s->step_seconds = dl->bmax[best] + dl->boff[best];
    dl->last = w->order[dl->bmax_at[best]];
    dl->critical_stale = 1;
    s->ncritical = 0;
}

/* The resumed run: Algorithm 1 from checkpoint b up to the first point
   after the last changed task (position k1) where it rejoins the previous
   timeline up to a shift, or to the end.  Checks for a rejoin cost about
   what the state holds, so after a failed one the next waits until the
   run has done as much again. */
static kt_status kt__delta_run(kt_sim *s, int b, int k1, kt_error *err) {
    struct kt__sim_work *w = s->work;
    struct kt__delta *dl = w->dl;
    int c = b * KT__DBLOCK, kk = c, maxpos = c - 1, next_check = c, j;
    int rejoined = 0;
    double now = 0, d = 0;
    unsigned ep = kt__delta_epoch(dl);
    kt__delta_restore(s, b);
    while (w->queue.count > 0) {
        int t, r;
        double start, end;
        if (kk % KT__DBLOCK == 0 && kk > c &&
            !kt__delta_checkpoint(w, kk / KT__DBLOCK, now))
            goto nomem;
        t = kt__qpop(&w->queue, &start);
        r = w->dev[t];
        if (dl->rstamp[r] != ep) kt__delta_touch(w, r, t, c);
        now = start;
        if (w->free_at[r] > start) start = w->free_at[r];
        end = start + w->sec[t];
        dl->nstart[t] = start;
        dl->nend[t] = end;
        dl->tstamp[t] = ep;
        dl->ndevprev[t] = w->res_last[r];
        w->free_at[r] = end;
        w->res_last[r] = t;
        if (w->pos[t] > w->res_oldmax[r]) w->res_oldmax[r] = w->pos[t];
        if (w->pos[t] > maxpos) maxpos = w->pos[t];
        dl->norder[kk - c] = t;
        kk++;
        for (j = w->succ_first[t]; j < w->succ_first[t + 1]; j++) {
            int u = w->succ[j];
            kt__wait *wu = &w->wait[u];
            if (dl->wstamp[u] != ep) kt__delta_wait(s, u, c);
            if (end > wu->ready) wu->ready = end;
            if (--wu->indeg == 0) {
                kt__delta_unpartial(dl, u);
                kt__qpush(&w->queue, wu->ready, u);
            }
        }
        /* the same tasks started as in the previous run's first kk, every
           changed one among them: compare the states */
        if (maxpos >= k1 && kk == maxpos + 1 && kk >= next_check) {
            if ((rejoined = kt__delta_rejoined(s, c, kk, now, &d))) break;
            next_check = kk + dl->ntouched + dl->nprebusy + w->queue.count +
                         dl->npartial;
        }
    }
    if (w->queue.nomem) goto nomem;
    if (!rejoined && kk < w->n) { /* cannot happen: it ran in full before */
        w->simulated = 0;
        return kt__fail(err, KT_ERR_INVALID, 0, "delta simulation: the "
                        "task graph has a cycle");
    }
    kt__delta_commit(s, c, kk, rejoined ? d : 0);
    kt__delta_finish(s);
    return KT_OK;
nomem:
    dl->snaps_valid = 0;
    w->simulated = 0;
    return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory simulating");
}

/* FlexFlow Algorithm 2 (above): new run times for some tasks, then the
   resumed run.  The result is exactly what kt_sim_run would give: the
   step time and busy times at once, task start and end and the critical
   path through kt_sim_timeline. */
kt_status kt_sim_delta(kt_sim *s, int n, const int *tasks,
                       const double *seconds, kt_error *err) {
    struct kt__sim_work *w = s ? s->work : NULL;
    int i, k0, k1 = -1;
    unsigned ep;
    double per_s;
    kt_status st;
    /* (busy replaced or the devices changed since: its length is
       unknown) */
    if (!w || !w->simulated || w->n != s->ntask || s->busy != w->busy_sized ||
        s->ndev != w->busy_ndev)
        return kt__fail(err, KT_ERR_INVALID, 0, "delta simulation: run "
                        "kt_sim_run on this task graph first");
    k0 = s->ntask;
    if (n < 0 || (n > 0 && (!tasks || !seconds)))
        return kt__fail(err, KT_ERR_INVALID, 0, "delta simulation: %d "
                        "changes%s", n, n < 0 ? "" : " without their tasks "
                        "or run times (NULL)");
    for (i = 0; i < n; i++) {
        if (tasks[i] < 0 || tasks[i] >= s->ntask)
            return kt__fail(err, KT_ERR_INVALID, 0, "delta simulation: "
                            "task %d of %d", tasks[i], s->ntask);
        if (!(seconds[i] >= 0) || seconds[i] > 1e30)
            return kt__fail(err, KT_ERR_INVALID, 0, "delta simulation: task "
                            "%d: run time %g s is not a number of seconds "
                            "from 0 to 1e30", tasks[i], seconds[i]);
    }
    if (!w->dl) { /* the first delta: checkpoints from now on */
        w->dl = (struct kt__delta *)kt__calloc(1, sizeof *w->dl);
        if (!w->dl || !kt__delta_size(w)) goto nomem;
        w->simulated = 0;
    }
    for (i = 0; i < n; i++) { /* the tick the new run times call for */
        int t = tasks[i];
        kt__sim_count(w, s->task[t].seconds, -1);
        kt__sim_count(w, seconds[i], 1);
        s->task[t].seconds = seconds[i];
    }
    /* a full run instead: before the first checkpoints, or when the
       changes call for another tick (every time would change) */
    if (!w->simulated || !w->dl->snaps_valid || kt__sim_tick(w) != s->tick) {
        st = kt__sim_full(s, err);
        if (st != KT_OK) return st;
        kt__ok(err); /* without memory for checkpoints the next delta
                        runs in full again */
        return KT_OK;
    }
    /* each task once, however often listed: its last run time in ticks,
       and busy times moved by its net change (whole ticks below 2^52, so
       exactly; a run time listed before the last could be far out of that
       range) */
    ep = kt__delta_epoch(w->dl);
    for (i = 0; i < n; i++) w->dl->tstamp[tasks[i]] = ep;
    per_s = kt__sim_per_tick(s->tick);
    for (i = 0; i < n; i++) {
        int t = tasks[i];
        const kt_sim_task *tk = &s->task[t];
        double q;
        if (w->dl->tstamp[t] != ep) continue; /* done already */
        w->dl->tstamp[t] = 0;
        q = kt__sim_quantize(tk->seconds, s->tick, per_s);
        if (q == w->sec[t]) continue;
        if (tk->kind == KT_TASK_COMPUTE && tk->device < s->ndev)
            s->busy[tk->device] += q - w->sec[t];
        w->sec[t] = q;
        if (w->pos[t] < k0) k0 = w->pos[t];
        if (w->pos[t] > k1) k1 = w->pos[t];
    }
    if (k1 < 0) { /* no run time changed by a tick */
        kt__ok(err);
        return KT_OK;
    }
    if (!w->dl->index_valid) kt__delta_index(w);
    st = kt__delta_run(s, k0 / KT__DBLOCK, k1, err);
    if (st == KT_OK) kt__ok(err);
    return st;
nomem:
    return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory simulating");
}

/* ------------------------------------------------------------ MCMC search */

static uint64_t kt__rng(uint64_t *s) { /* xorshift64 */
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double kt__rng_unit(uint64_t *s) {
    return (double)(kt__rng(s) >> 11) / (double)(UINT64_C(1) << 53);
}

static kt_status kt__plan_copy(kt_plan *dst, const kt_plan *src,
                               const kt_graph *g, kt_error *err) {
    kt_status s = kt_plan_init(dst, g, &src->f, err);
    if (s != KT_OK) return s;
    memcpy(dst->tiling, src->tiling, sizeof(kt_tiling) * (size_t)g->ntensor);
    memcpy(dst->split, src->split,
           sizeof(int) * (size_t)g->nop * KT_MAX_CUTS);
    return KT_OK;
}

/* A random configuration of op o (FlexFlow 6's proposal): a splittable
   variable with enough elements at every cut, and the output tiled where
   the op computes it.  0 when the op's output cannot take that tiling. */
static int kt__propose(const kt_graph *g, kt_plan *p, int o, uint64_t *rng) {
    const kt_op *op = &g->op[o];
    const kt_tensor *x = &g->tensor[op->output];
    int64_t parts[KT_MAX_VARS], dparts[KT_MAX_DIMS];
    int i, v, d, cand[KT_MAX_VARS], n;
    kt_tiling t = p->tiling[op->output];
    int split[KT_MAX_CUTS];
    for (v = 0; v < op->nvars; v++) parts[v] = 1;
    for (d = 0; d < x->rank; d++) dparts[d] = 1;
    for (i = 0; i < p->f.count; i++) {
        int k = p->f.k[i];
        for (n = 0, v = 0; v < op->nvars; v++)
            if (op->var[v].splittable && parts[v] * k <= op->var[v].extent)
                cand[n++] = v;
        v = n ? cand[kt__rng(rng) % (uint64_t)n] : KT_SPLIT_REPLICATE;
        split[i] = v;
        if (v >= 0) parts[v] *= k;
        /* the output where the op leaves it: split along the variable's
           dimension, replicated after a reduction (or when the dimension
           is used up, or the op is in place: its tiling is the tensor's) */
        if (v >= 0 && !op->var[v].reduction && v < op->out_rank &&
            dparts[v] * k <= x->shape[v] && !op->in_place) {
            t.cut[i] = (signed char)v;
            dparts[v] *= k;
        } else if (!op->in_place) {
            t.cut[i] = KT_CUT_R;
        }
    }
    if (kt_tiling_check(&t, NULL, x->rank, x->shape, &p->f, 0, NULL) != KT_OK)
        return 0;
    for (i = 0; i < p->f.count; i++) p->split[o * KT_MAX_CUTS + i] = split[i];
    p->tiling[op->output] = t;
    return 1;
}

/* The other move: a random tensor gets a random tiling (leaves such as
   weights are no op's output, so only this move retiles them). */
static int kt__propose_tensor(const kt_graph *g, kt_plan *p, int x,
                              uint64_t *rng) {
    const kt_tensor *tx = &g->tensor[x];
    int64_t parts[KT_MAX_DIMS];
    int i, d, cand[KT_MAX_DIMS + 1], n;
    kt_tiling t = p->tiling[x];
    for (d = 0; d < tx->rank; d++) parts[d] = 1;
    for (i = 0; i < p->f.count; i++) {
        int k = p->f.k[i];
        for (n = 0, d = 0; d < tx->rank; d++)
            if (parts[d] * k <= tx->shape[d]) cand[n++] = d;
        cand[n++] = KT_CUT_R;
        d = cand[kt__rng(rng) % (uint64_t)n];
        t.cut[i] = (signed char)d;
        if (d >= 0) parts[d] *= k;
    }
    p->tiling[x] = t;
    return 1;
}

static int kt__same_factors(const kt_factors *a, const kt_factors *b) {
    int i;
    if (a->count != b->count) return 0;
    for (i = 0; i < a->count; i++)
        if (a->k[i] != b->k[i]) return 0;
    return 1;
}

/* ------------------------------------- incremental task graph (MCMC) */

/* The incremental task graph (FlexFlow 6's proposals priced by a delta
   simulation, FlexFlow 5.3).  How it is built:

   Stable task numbers.  kt_plan_sim keeps two task graphs, the current
   plan's and a scratch one the proposals are built in, in one layout of
   slots: the compute tasks first (task o * nd + d, as kt_sim_build
   numbers them), then for every op, in op order, a slot for its block
   with room (tasks base[o] .. base[o + 1]: its transfer tasks base[o] ..
   bend[o], holes after them).  Both graphs have the same slots, so a
   task a proposal keeps has the same number in both, and a block that
   changes size moves no other task: nothing kept is renumbered.  An
   op's predecessor entries (seg[o] .. send[o]) and its tasks' successor
   entries lie in slots with room too, but each graph keeps its own
   (entries are reached through each task's range, not by number): a
   list that outgrows its slot gets a new one at the end of its graph's
   array, and the copies between the graphs move ranges by the
   difference.  The maps between the graphs are the identity but in the
   slots of the ops whose block changed (marked in `fresh`: there an index
   is a task gone in the current graph and an added one in the proposal).

   Holes are inert: no predecessors and no successors, never queued,
   never started, no position (pos -1), no run time, and no timeline,
   start order, busy time or critical path has them.  The slots keep the
   ops in order, so the live tasks are numbered in the same relative
   order as in the compact numbering of kt_sim_build: the ready queue
   breaks ties by task index, so the simulation is the same.

   Re-sync.  The scratch graph equals the current one but in the ops the
   last proposal touched (w->dirty: the ops whose predecessor lists or
   whose tasks' successor lists it rebuilt, the changed blocks among
   them).  After an accept the scratch graph is the old current one and
   lacks the accepted change; after a reject it holds the rejected
   change: either way the next proposal first copies those ops' slots
   from the current graph (tasks, predecessor entries, the simulator's
   per-task data, successor lists: what changed, not the graph).  Then it
   writes the new blocks into their slots and rebuilds only the
   predecessor lists and successor lists that read a changed block.

   The timeline is kept apart, once for both graphs (kt__tl below): the
   current one as blocks of positions with a time offset each, and a
   proposal's as pieces of it -- runs of whole blocks moved by an amount
   of seconds and of positions, nothing written per task -- with what its
   run simulated (and the tasks of the blocks a piece cuts) in its
   graph's arrays between them.  Accepting splices those into new blocks
   (kt__plan_sim_commit: what the run wrote, and a pass over the blocks);
   a rejected proposal wrote nothing there.  The graphs' own start, end,
   order and pos arrays are the runs' scratch, written out whole only by
   kt__plan_sim_write_timeline (kt_plan_sim_timeline, the tests), which
   also derives the device predecessors from the order.

   Growing a slot (a local relayout).  A block that outgrows its slot
   gets 1.5 times its need plus nd (kt__plan_sim_grow_slot): the blocks
   of the ops around it move into their holes -- those below it down,
   those above it up, whichever window of slots moves the fewest tasks
   (kt__plan_sim_window) -- in both graphs, and only the moved tasks are
   renumbered, with the lists and the timeline's slots that name them.
   When the holes run out, or reaching them would move more than an
   eighth of the later tasks, every later block moves and gets back the
   room of the first layout (w->refills counts these): else a long
   chain's growths drain whole stretches of slots and each later one
   moves most of the graph.  A relayout of every task (renumbering O(tasks)) would cost as
   much as a proposal did before: blocks jump from nothing to thousands
   of transfers on 64 devices, so a chain grows some slot in most of its
   first proposals, and only a local move keeps that cheap.  The first
   layout (kt__plan_sim_relayout) gives every slot room the same way.
   w->relayouts counts the growths, w->moved the tasks they renumbered,
   w->refills the growths that gave the later slots their room back.
   A proposal whose run times call for another tick is simulated in full
   (kt__plan_sim_full, in compact numbering: the simulator knows no
   holes).

   The public kt_sims (ps->current, ps->proposed) are apart from the two
   graphs: ntask, step time and busy times are set at once; the task
   structs and predecessor lists, start and end and the critical path,
   in kt_sim_build's compact numbering, when kt_plan_sim_timeline asks
   for them (kt__plan_sim_publish, a pass over the tasks). */

/* The current timeline, kept once for both task graphs (their task
   numbers are the same) as blocks of positions -- what lets a proposal
   cost what it changes rather than O(tasks) (FlexFlow 5.3's delta
   simulation applied to a changed graph; the shift index of
   kt_sim_delta, here for positions too).  Every block holds up to
   KT__DBLOCK tasks in start order at slots b * KT__DBLOCK + i, each with
   its resource, its start and end less the block's time offset toff[b],
   and how many starts it waited in the queue (its position less its
   qpos); seq lists the blocks in timeline order and first[] is the
   position of each one's first task.  So a task's position is first of
   its block plus its index, its times its stored ones plus toff, and the
   timeline of a proposal is the current one's blocks, some of them moved
   by an amount of seconds and of positions (a piece: nothing written but
   toff), with new blocks between them for what the run simulated (and
   for the tasks of a partly copied block).  Accepting splices the new
   blocks in (what changed, and a pass over the ~450 blocks); a rejected
   proposal wrote nothing here.  Blocks left part-full by the splices are
   repacked when there are twice as many as a packed timeline needs
   (O(tasks), amortised over the accepts that fragmented it). */
typedef struct kt__tl {
    int *ord;            /* per slot: its task                             */
    int *dev;            /* per slot: the task's resource                  */
    double *start, *end; /* per slot: its times less toff of its block     */
    int *wait;           /* per slot: its position less its qpos           */
    int *sp;             /* per task slot: its timeline slot, -1: none     */
    int *cnt;            /* per block: its tasks (slots i < cnt)           */
    int *at;             /* per block: its index in seq, -1: not in use    */
    double *toff;        /* per block: added to its stored times           */
    double *bmax;        /* per block: its latest stored end,              */
    int *bmax_at;        /*   first reached at this index,                 */
    int *bwait;          /*   and the most starts a task of it waited      */
    int *seq, *seq2;     /* the blocks in timeline order (seq2: scratch)   */
    int *first;          /* per index of seq: its first position; nseq + 1 */
    int nseq;
    int *freeb, nfree;   /* blocks not in use                              */
    int nblk;            /* blocks allocated                               */
    int n;               /* tasks in the timeline                          */
    int *snap;           /* snapshot j at snap + j * snap_w: every
                            resource's last slot in the blocks seq[0 ..
                            (j + 1) * KT__TL_SNAP), -1: none (kt__tl_snap) */
    int snap_w, nsnap;   /*   resources in each; the first nsnap are valid */
    size_t cap_snap;
} kt__tl;

/* Repack the timeline's blocks when there are more than KT__TL_REPACK4
   quarters of the packed count plus KT__TL_SLACK (8 and 2: twice; the
   tests lower them). */
#ifndef KT__TL_REPACK4
#define KT__TL_REPACK4 8
#endif
#ifndef KT__TL_SLACK
#define KT__TL_SLACK 2
#endif

/* A resource snapshot (kt__tl_snap) every KT__TL_SNAP blocks of the
   timeline: taken only where a snapshot's resources are at most that
   many blocks' slots, so a copy of one costs no more than the scan of
   the blocks it stands for, and all of them take at most as much memory
   as one per-slot array. */
#ifndef KT__TL_SNAP
#define KT__TL_SNAP 8
#endif

/* A stretch of the current timeline in a proposal's: its blocks
   seq[ilo .. ihi), old positions olo .. olo + nhi - nlo, at new
   positions nlo .. nhi, every time moved by d. */
typedef struct kt__tl_piece {
    int nlo, nhi, olo, ilo, ihi;
    double d;
} kt__tl_piece;

static void kt__tl_free(kt__tl *tl) {
    KT_FREE(tl->ord);
    KT_FREE(tl->dev);
    KT_FREE(tl->start);
    KT_FREE(tl->end);
    KT_FREE(tl->wait);
    KT_FREE(tl->sp);
    KT_FREE(tl->cnt);
    KT_FREE(tl->at);
    KT_FREE(tl->toff);
    KT_FREE(tl->bmax);
    KT_FREE(tl->bmax_at);
    KT_FREE(tl->bwait);
    KT_FREE(tl->seq);
    KT_FREE(tl->seq2);
    KT_FREE(tl->first);
    KT_FREE(tl->freeb);
    KT_FREE(tl->snap);
    memset(tl, 0, sizeof *tl);
}

/* Room for `want` free blocks besides the ones in use (half as many
   again when it grows: amortised).  0: out of memory -- nothing lost,
   every array keeps its contents. */
static int kt__tl_reserve(kt__tl *tl, int want) {
    int64_t nb = tl->nblk + (want - tl->nfree), b;
    size_t slots;
    void *np;
    if (tl->nfree >= want) return 1;
    if (nb < tl->nblk + tl->nblk / 2) nb = tl->nblk + tl->nblk / 2;
    if (nb > INT_MAX / KT__DBLOCK - 1) return 0;
    slots = (size_t)nb * KT__DBLOCK;
#define KT__TLGROW(f, type, len)                                            \
    if (!(np = KT_REALLOC(tl->f, sizeof(type) * (len)))) return 0;          \
    tl->f = (type *)np;
    KT__TLGROW(ord, int, slots)
    KT__TLGROW(dev, int, slots)
    KT__TLGROW(start, double, slots)
    KT__TLGROW(end, double, slots)
    KT__TLGROW(wait, int, slots)
    KT__TLGROW(cnt, int, (size_t)nb)
    KT__TLGROW(at, int, (size_t)nb)
    KT__TLGROW(toff, double, (size_t)nb)
    KT__TLGROW(bmax, double, (size_t)nb)
    KT__TLGROW(bmax_at, int, (size_t)nb)
    KT__TLGROW(bwait, int, (size_t)nb)
    KT__TLGROW(seq, int, (size_t)nb)
    KT__TLGROW(seq2, int, (size_t)nb)
    KT__TLGROW(freeb, int, (size_t)nb)
    KT__TLGROW(first, int, (size_t)nb + 1)
#undef KT__TLGROW
    if (tl->nblk == 0) tl->first[0] = 0;
    for (b = nb - 1; b >= tl->nblk; b--) { /* the lowest taken first */
        tl->at[b] = -1;
        tl->freeb[tl->nfree++] = (int)b;
    }
    tl->nblk = (int)nb;
    return 1;
}

/* Where task t is in the current timeline: its position and end. */
static int kt__tl_pos(const kt__tl *tl, int t) {
    int s = tl->sp[t];
    return tl->first[tl->at[s / KT__DBLOCK]] + s % KT__DBLOCK;
}
static double kt__tl_end(const kt__tl *tl, int t) {
    int s = tl->sp[t];
    return tl->end[s] + tl->toff[s / KT__DBLOCK];
}

/* The index in seq of the last block whose first position is at most k
   (0 <= k <= n; k == n: nseq). */
static int kt__tl_upto(const kt__tl *tl, int k) {
    int lo = 0, hi = tl->nseq;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (tl->first[mid] <= k) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* The index in seq of the first block starting at or after position k. */
static int kt__tl_from(const kt__tl *tl, int k) {
    int i = kt__tl_upto(tl, k);
    return tl->first[i] < k ? i + 1 : i;
}

/* The slot and the task at position k (0 <= k < n). */
static int kt__tl_slot_at(const kt__tl *tl, int k) {
    int i = kt__tl_upto(tl, k);
    return tl->seq[i] * KT__DBLOCK + k - tl->first[i];
}
static int kt__tl_task(const kt__tl *tl, int k) {
    return tl->ord[kt__tl_slot_at(tl, k)];
}

/* Writing a timeline into seq2: new blocks filled task by task (from the
   free ones, reserved before), the current seq's blocks kept whole. */
typedef struct kt__tl_writer {
    int n;    /* blocks in seq2 so far */
    int b;    /* the block being filled, -1: none */
    int fill; /* its tasks so far */
} kt__tl_writer;

static void kt__tl_close(kt__tl *tl, kt__tl_writer *wr) {
    int s0, j, b = wr->b;
    if (b < 0) return;
    s0 = b * KT__DBLOCK;
    tl->cnt[b] = wr->fill;
    tl->toff[b] = 0;
    tl->bmax_at[b] = 0;
    tl->bmax[b] = tl->end[s0];
    tl->bwait[b] = 0;
    for (j = 0; j < wr->fill; j++) {
        if (tl->end[s0 + j] > tl->bmax[b]) {
            tl->bmax[b] = tl->end[s0 + j];
            tl->bmax_at[b] = j;
        }
        if (tl->wait[s0 + j] > tl->bwait[b]) tl->bwait[b] = tl->wait[s0 + j];
    }
    wr->b = -1;
}

static void kt__tl_put(kt__tl *tl, kt__tl_writer *wr, int t, int dev,
                       double start, double end, int wait) {
    int s;
    if (wr->b >= 0 && wr->fill == KT__DBLOCK) kt__tl_close(tl, wr);
    if (wr->b < 0) {
        wr->b = tl->freeb[--tl->nfree];
        wr->fill = 0;
        tl->seq2[wr->n++] = wr->b;
    }
    s = wr->b * KT__DBLOCK + wr->fill++;
    tl->ord[s] = t;
    tl->dev[s] = dev;
    tl->start[s] = start;
    tl->end[s] = end;
    tl->wait[s] = wait;
    tl->sp[t] = s;
}

/* The current blocks seq[ilo .. ihi) kept, moved by d seconds. */
static void kt__tl_keep(kt__tl *tl, kt__tl_writer *wr, int ilo, int ihi,
                        double d) {
    int i;
    kt__tl_close(tl, wr);
    for (i = ilo; i < ihi; i++) {
        tl->toff[tl->seq[i]] += d; /* whole ticks: exact */
        tl->seq2[wr->n++] = tl->seq[i];
    }
}

/* seq2 becomes the timeline; the blocks it dropped are free. */
static void kt__tl_finish(kt__tl *tl, kt__tl_writer *wr) {
    int i, *tmp;
    kt__tl_close(tl, wr);
    /* the snapshots of the blocks kept in place stay (a block in use keeps
       its slots; a new one is taken from the free ones) */
    for (i = 0; i < tl->nseq && i < wr->n && tl->seq[i] == tl->seq2[i]; i++)
        ;
    if (tl->nsnap > i / KT__TL_SNAP) tl->nsnap = i / KT__TL_SNAP;
    for (i = 0; i < tl->nseq; i++) tl->at[tl->seq[i]] = -1;
    for (i = 0; i < wr->n; i++) tl->at[tl->seq2[i]] = i;
    for (i = 0; i < tl->nseq; i++)
        if (tl->at[tl->seq[i]] < 0) tl->freeb[tl->nfree++] = tl->seq[i];
    tmp = tl->seq;
    tl->seq = tl->seq2;
    tl->seq2 = tmp;
    tl->nseq = wr->n;
    tl->first[0] = 0;
    for (i = 0; i < tl->nseq; i++)
        tl->first[i + 1] = tl->first[i] + tl->cnt[tl->seq[i]];
    tl->n = tl->first[tl->nseq];
}

/* The blocks packed again, KT__DBLOCK tasks each (the splices leave
   part-full ones): O(tasks), done when there are twice as many blocks
   as packed ones would be.  0: out of memory (nothing changed). */
static int kt__tl_repack(kt__tl *tl) {
    kt__tl_writer wr = {0, -1, 0};
    int i, j;
    if (!kt__tl_reserve(tl, tl->n / KT__DBLOCK + 1)) return 0;
    for (i = 0; i < tl->nseq; i++) {
        int b = tl->seq[i], s0 = b * KT__DBLOCK;
        for (j = 0; j < tl->cnt[b]; j++)
            kt__tl_put(tl, &wr, tl->ord[s0 + j], tl->dev[s0 + j],
                       tl->start[s0 + j] + tl->toff[b],
                       tl->end[s0 + j] + tl->toff[b], tl->wait[s0 + j]);
    }
    kt__tl_finish(tl, &wr);
    return 1;
}

/* The snapshot of every resource's last slot in the blocks seq[0 .. *hi),
   *hi the most whole multiples of KT__TL_SNAP blocks up to ib: taken
   from the last valid one (or none), a scan of the blocks between --
   once per accept that changed them, where a resumed run scanned every
   block it copied, most of the timeline per proposal on wresnet-152
   over 64 devices (kt__plan_sim_piece).  nres: the resources (the
   timeline's lie below it).  NULL (*hi 0): none, too many resources for
   one (see KT__TL_SNAP), or out of memory -- the caller scans. */
static const int *kt__tl_snap(kt__tl *tl, int ib, int64_t nres, int *hi) {
    int j = ib / KT__TL_SNAP, k, i, x;
    void *np;
    *hi = 0;
    if (j == 0 || nres > (int64_t)KT__TL_SNAP * KT__DBLOCK) return NULL;
    if (nres != tl->snap_w) { /* more links numbered: take them anew */
        tl->snap_w = (int)nres;
        tl->nsnap = 0;
    }
    if (!(np = kt__sim_grow(tl->snap, &tl->cap_snap, (size_t)j * nres,
                            sizeof(int))))
        return NULL;
    tl->snap = (int *)np;
    for (k = tl->nsnap; k < j; k++) {
        int *sn = tl->snap + (size_t)k * nres;
        if (k == 0)
            for (x = 0; x < nres; x++) sn[x] = -1;
        else
            memcpy(sn, sn - nres, sizeof(int) * (size_t)nres);
        for (i = k * KT__TL_SNAP; i < (k + 1) * KT__TL_SNAP; i++) {
            int b = tl->seq[i], s0 = b * KT__DBLOCK;
            for (x = 0; x < tl->cnt[b]; x++) sn[tl->dev[s0 + x]] = s0 + x;
        }
    }
    if (j > tl->nsnap) tl->nsnap = j;
    *hi = j * KT__TL_SNAP;
    return tl->snap + (size_t)(j - 1) * nres;
}

struct kt__ps_run; /* the resumed run's bookkeeping (kt__plan_sim_run) */

/* What one of the two task graphs has besides its kt__tg: its successor
   lists (task u's are se[sfirst[u] .. + sn[u]), inside the slot of its
   op, sseg[o] .. scap[o]), the ends of its ops' predecessor slots, the
   op of every task slot, and the sizes of its arrays. */
typedef struct kt__ps_side {
    int *se, *sfirst, *sn;
    int *sseg, *scap;      /* per op: its successor slot,                  */
    int *suse;             /*   of which its lists fill sseg .. + suse      */
    int *pcap;             /* per op: the end of its predecessor slot,
                              seg[o] .. pcap[o]                           */
    int *owner;            /* per task slot: its op                        */
    int nslot;             /* task slots: base[nop]                         */
    int nseg, nsseg;       /* predecessor and successor entries in slots   */
    size_t cap_se, cap_n;
} kt__ps_side;

struct kt__plan_sim_work {
    kt__tgctx c;
    kt__tg tg[2];          /* the current plan's and the scratch graph     */
    kt__ps_side side[2];
    kt_plan plan[2];
    int cur, pending;
    int ntc;               /* compute tasks: nop * nd                       */
    int *nxt;              /* per op: the op run after it on every device  */
    int *dep_first, *dep_op; /* op b -> the ops whose lists read b's block */
    int *tch_first, *tch_op; /* tensor x -> the ops converting it          */
    unsigned char *spl;    /* per op: its strategy changed                 */
    unsigned char *blk;    /* per op: its block changed                    */
    unsigned char *lst;    /* per op: its predecessor lists are rebuilt    */
    unsigned char *sdirt;  /* per op: its tasks' successor lists are       */
    unsigned char *rmark;  /*   rebuilt; its lists are read for them       */
    int *sops, nsops;      /* the ops of sdirt (this proposal's dirty ops) */
    unsigned char *gmark;  /* per op, growing a slot: its successor lists */
    int *gops, ngops;      /*   name moved tasks                           */
    int *rops, nrops;      /* the ops of rmark                              */
    int *dirty, ndirty;    /* the ops the scratch graph may differ in      */
    unsigned char *dlists; /*   per entry of dirty: in its tasks and lists
                              (else only in its tasks' successor lists)   */
    int resync_all;        /* it may differ anywhere (after a failure, a
                              relayout or a full run)                      */
    int too_big;           /* a layout was refused: past KT__PS_MAX        */
    int relayouts;         /* slots grown by proposals (local relayouts)   */
    int64_t moved;         /*   and the tasks they renumbered              */
    int refills;           /*   and those that gave every later slot room  */
    int downs;             /*   and those that took holes below the slot  */
    int *lstart;           /* per rebuilt op: its lists past the slots     */
    int *chg, nchg;        /* the ops whose block changed, ascending       */
    kt__tg stage;          /* the changed ops' new blocks, back to back    */
    int *stage_first;      /* nchg + 1: where each one starts in stage     */
    double *csec;          /* nchg * nd: new compute times                 */
    kt__xfers xs;          /* one op's transfers                           */
    int *cset, ncset;      /* the proposal's new and changed tasks         */
    int *bound;            /* per new task: no earlier start position      */
    unsigned char *inc;    /* per new task: in cset                        */
    size_t cap_cset, cap_bound, cap_inc, cap_csec;
    /* per task slot (kt__plan_sim_size) */
    unsigned char *fresh;  /* of a changed op's slot: not the same task in
                              the two graphs                              */
    int *qpos[2];          /* per task graph: how many tasks had started
                              when each task was ready to be queued (its
                              predecessors all started): the run's, and
                              kt__plan_sim_write_timeline's (the current
                              timeline keeps them in kt__tl)              */
    int qpos_ok[2];        /*   valid for that graph's timeline            */
    int qwait[2];          /*   and the most starts a task of that graph
                                waited in the queue (its position less its
                                qpos): how far kt__plan_sim_requeue looks */
    unsigned *mark;        /* per new task: == mark_base when started     */
    unsigned *cmark;       /*   == mark_base when new or changed (cset)    */
    unsigned mark_base, wait_base;
    int *rpos, nrpos;      /* old positions of the tasks gone, ascending   */
    size_t cap_rpos;
    int *partial, *partial_at, npartial; /* tasks waiting for some, not all,
                              of their predecessors, and where in the list */
    int *ecnt;             /* successor entries counted per task (all 0
                              between proposals)                          */
    int *s2c, *c2s;        /* slot -> compact task number and back         */
    size_t cap_nt, cap_c2s;
    size_t nt_init;        /* the per-slot arrays' slots 0 .. nt_init are
                              in use, or initialised (kt__plan_sim_size)  */
    int crit_last[2];      /* per task graph: the task its critical path is
                              walked back from                            */
    /* the public views (kt__plan_sim_publish) */
    kt_sim pub[2];
    int pub_ok[2];         /* its structs, times and critical path are
                              those of its graph                          */
    kt_sim_task *ptask[2];
    int *ppred[2], *pcrit[2];
    double *pstart[2], *pend[2];
    size_t cap_pt[2], cap_pp[2];
    /* full runs in compact numbering (kt__plan_sim_full) */
    kt_sim flat;
    size_t cap_ft, cap_fp;
    /* the timeline (kt__tl): the current one, and the pending proposal's
       pieces of it, in order; the pieces' tasks the run queued before
       the piece (their qpos is the run's), as pairs (task, wait) */
    kt__tl tl;
    kt__tl_piece *pc;
    int npc;
    int *qov, nqov;
    size_t cap_pc, cap_qov;
    int jumped;            /* the run has started every kept task of old
                              position below it (besides the marked ones) */
    int whole;             /* the proposal was simulated in full: its
                              graph's arrays hold its timeline            */
    int *roslot;           /* per resource: the timeline slot of the task
                              at res_oldmax                               */
    size_t cap_roslot;
    int repacks;           /* the timeline's blocks repacked (for tests)   */
    /* for the tests: called at every rejoin the run found, before it
       copies (P: the old position, tnew: the run's present) */
    void (*on_rejoin)(struct kt__plan_sim_work *w, struct kt__ps_run *st,
                      int P, double tnew);
};

static void kt__ps_side_free(kt__ps_side *sd) {
    KT_FREE(sd->se);
    KT_FREE(sd->sfirst);
    KT_FREE(sd->sn);
    KT_FREE(sd->sseg);
    KT_FREE(sd->scap);
    KT_FREE(sd->suse);
    KT_FREE(sd->pcap);
    KT_FREE(sd->owner);
    memset(sd, 0, sizeof *sd);
}

static void kt__plan_sim_work_free(struct kt__plan_sim_work *w) {
    int i;
    if (!w) return;
    kt__tgctx_free(&w->c);
    for (i = 0; i < 2; i++) {
        kt__tg_free(&w->tg[i]);
        kt__ps_side_free(&w->side[i]);
        kt_plan_free(&w->plan[i]);
        KT_FREE(w->qpos[i]);
        KT_FREE(w->ptask[i]);
        KT_FREE(w->ppred[i]);
        KT_FREE(w->pcrit[i]);
        KT_FREE(w->pstart[i]);
        KT_FREE(w->pend[i]);
        KT_FREE(w->pub[i].busy);
    }
    kt__tg_free(&w->stage);
    kt_sim_free(&w->flat);
    kt__tl_free(&w->tl);
    KT_FREE(w->pc);
    KT_FREE(w->qov);
    KT_FREE(w->roslot);
    KT_FREE(w->nxt);
    KT_FREE(w->dep_first);
    KT_FREE(w->dep_op);
    KT_FREE(w->tch_first);
    KT_FREE(w->tch_op);
    KT_FREE(w->spl);
    KT_FREE(w->blk);
    KT_FREE(w->lst);
    KT_FREE(w->sdirt);
    KT_FREE(w->rmark);
    KT_FREE(w->sops);
    KT_FREE(w->gmark);
    KT_FREE(w->gops);
    KT_FREE(w->rops);
    KT_FREE(w->dirty);
    KT_FREE(w->dlists);
    KT_FREE(w->lstart);
    KT_FREE(w->chg);
    KT_FREE(w->stage_first);
    KT_FREE(w->csec);
    KT_FREE(w->xs.x);
    KT_FREE(w->cset);
    KT_FREE(w->bound);
    KT_FREE(w->inc);
    KT_FREE(w->fresh);
    KT_FREE(w->mark);
    KT_FREE(w->cmark);
    KT_FREE(w->rpos);
    KT_FREE(w->partial);
    KT_FREE(w->partial_at);
    KT_FREE(w->ecnt);
    KT_FREE(w->s2c);
    KT_FREE(w->c2s);
    KT_FREE(w);
}

void kt_plan_sim_free(kt_plan_sim *ps) {
    if (!ps) return;
    kt__plan_sim_work_free(ps->work);
    memset(ps, 0, sizeof *ps);
}

/* The ops whose blocks the predecessor lists of op o read (see kt__tg):
   o, the producers of its inputs and, when o updates a tensor in place,
   the readers and the producer of that tensor.  Written to src; returns
   their number (at most 2 + KT_MAX_VARS + the readers). */
static int kt__lists_sources(const kt__tgctx *c, int o, int *src) {
    const kt_op *op = &c->g->op[o];
    int n = 0, j, k;
    src[n++] = o;
    for (j = 0; j < op->ninputs; j++)
        if (c->g->tensor[op->input[j]].producer >= 0)
            src[n++] = c->g->tensor[op->input[j]].producer;
    if (op->in_place) {
        for (k = c->rd_first[op->output]; k < c->rd_first[op->output + 1]; k++)
            src[n++] = c->rd_op[k];
        if (c->g->tensor[op->output].producer >= 0)
            src[n++] = c->g->tensor[op->output].producer;
    }
    return n;
}

/* Op b -> the ops whose predecessor lists read b's block (the transpose
   of kt__lists_sources); tensor x -> the ops converting x (its readers
   and writers: what kt__lower_op reads x's tiling for); op o -> the op
   run after it on every device (whose compute tasks wait for o's). */
static int kt__plan_sim_index(struct kt__plan_sim_work *w,
                              const kt_graph *g) {
    const kt__tgctx *c = &w->c;
    int o, k, x, n, maxr = 0, *src;
    for (x = 0; x < g->ntensor; x++)
        if (c->rd_first[x + 1] - c->rd_first[x] > maxr)
            maxr = c->rd_first[x + 1] - c->rd_first[x];
    src = (int *)kt__calloc((size_t)(maxr + KT_MAX_VARS + 3), sizeof(int));
    w->dep_first = (int *)kt__calloc((size_t)g->nop + 2, sizeof(int));
    w->tch_first = (int *)kt__calloc((size_t)g->ntensor + 2, sizeof(int));
    w->nxt = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    if (!src || !w->dep_first || !w->tch_first || !w->nxt) {
        KT_FREE(src);
        return 0;
    }
    for (o = 0; o < g->nop; o++) w->nxt[o] = -1;
    for (o = 0; o < g->nop; o++)
        if (c->prev[o] >= 0) w->nxt[c->prev[o]] = o;
    for (o = 0, n = 0; o < g->nop; o++) {
        int ns = kt__lists_sources(c, o, src);
        for (k = 0; k < ns; k++) w->dep_first[src[k] + 1]++;
        n += ns;
    }
    for (o = 0; o < g->nop; o++) w->dep_first[o + 1] += w->dep_first[o];
    w->dep_op = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    if (!w->dep_op) {
        KT_FREE(src);
        return 0;
    }
    for (o = 0; o < g->nop; o++) { /* dep_first[b] as cursors */
        int ns = kt__lists_sources(c, o, src);
        for (k = 0; k < ns; k++) w->dep_op[w->dep_first[src[k]]++] = o;
    }
    for (o = g->nop; o > 0; o--) w->dep_first[o] = w->dep_first[o - 1];
    w->dep_first[0] = 0;
    KT_FREE(src);
    for (x = 0; x < g->ntensor; x++)
        w->tch_first[x + 1] = c->rd_first[x + 1] - c->rd_first[x];
    for (o = 0; o < g->nop; o++) w->tch_first[g->op[o].output + 1]++;
    for (x = 0; x < g->ntensor; x++) w->tch_first[x + 1] += w->tch_first[x];
    w->tch_op = (int *)kt__calloc((size_t)w->tch_first[g->ntensor] + 1,
                                  sizeof(int));
    if (!w->tch_op) return 0;
    for (x = 0; x < g->ntensor; x++)
        for (k = c->rd_first[x]; k < c->rd_first[x + 1]; k++)
            w->tch_op[w->tch_first[x]++] = c->rd_op[k];
    for (o = 0; o < g->nop; o++) w->tch_op[w->tch_first[g->op[o].output]++] = o;
    for (x = g->ntensor; x > 0; x--) w->tch_first[x] = w->tch_first[x - 1];
    w->tch_first[0] = 0;
    return 1;
}

/* The capacity in task slots that the slots' arrays get when they grow:
   KT__PS_ROOM times what is asked.  A proposal's chain grows the graph
   (on wresnet-152 over 64 devices from 450k tasks, 705k slots, to 1.05M
   tasks, 1.35M slots, in 600 proposals, 1.62M slots in 1000): growing
   by doubling moved some 40 per-slot arrays of both graphs at once at
   every power of two, copying them into fresh pages (one proposal of
   0.9-1.1 s in 600).  Room never written costs address space, not
   memory: the arrays are copied only as far as they are used
   (kt__grow_to) and initialised only as far as there are slots
   (nt_init, kt__sim_work's set_init).  (Where address space is short --
   a 32-bit build, ulimit -v -- define KT__PS_ROOM 2 or 1.) */
#ifndef KT__PS_ROOM
#define KT__PS_ROOM 4
#endif
static size_t kt__plan_sim_want(size_t n) {
    return n <= (size_t)-1 / KT__PS_ROOM / 64 ? n * KT__PS_ROOM : n;
}

/* Sizes the per-slot arrays for n task slots (capacities only grow; mark,
   cmark, ecnt and fresh start at 0 -- up to nt_init, the slots sized so
   far -- and ecnt is left at 0 by every proposal).  0: out of memory. */
static int kt__plan_sim_size(struct kt__plan_sim_work *w, size_t n) {
    size_t c = w->cap_nt, want = kt__plan_sim_want(n), used = w->nt_init;
    void *np;
    if (n > w->cap_nt) {
#define KT__PGROW(field, type)                                              \
    (c = w->cap_nt,                                                         \
     (np = kt__grow_to(w->field, &c, n, want, used, sizeof(type))) != NULL  \
         ? (w->field = (type *)np, 1) : 0)
        if (!KT__PGROW(qpos[0], int) || !KT__PGROW(qpos[1], int) ||
            !KT__PGROW(mark, unsigned) || !KT__PGROW(cmark, unsigned) ||
            !KT__PGROW(partial, int) ||
            !KT__PGROW(partial_at, int) || !KT__PGROW(ecnt, int) ||
            !KT__PGROW(fresh, unsigned char) || !KT__PGROW(s2c, int) ||
            !KT__PGROW(tl.sp, int))
            return 0;
#undef KT__PGROW
        w->cap_nt = c;
    }
    if (n > w->nt_init) {
        size_t m = n - used;
        memset(w->tl.sp + used, 0xff, sizeof(int) * m);
        memset(w->mark + used, 0, sizeof(unsigned) * m);
        memset(w->cmark + used, 0, sizeof(unsigned) * m);
        memset(w->ecnt + used, 0, sizeof(int) * m);
        memset(w->fresh + used, 0, m);
        w->nt_init = n;
    }
    return 1;
}

/* Room for graph x's arrays over its slots: task structs, predecessor
   entries (and `extra` past them, where rebuilt lists are first
   written), the simulator's per-task arrays, the successor lists and
   the slots' owners.  Capacities only grow.  0: out of memory -- and
   nothing lost (every array keeps its contents: kt__plan_sim_grow_slot
   fails with both graphs, the current timeline too, as they were). */
static int kt__plan_sim_room(struct kt__plan_sim_work *w, int x,
                             size_t extra) {
    kt__tg *X = &w->tg[x];
    kt__ps_side *sd = &w->side[x];
    /* (a growth keeps the slots the graph had: X->sim.ntask, till set) */
    size_t n = (size_t)sd->nslot + 1, c, want = kt__plan_sim_want(n);
    size_t used = (size_t)X->sim.ntask + 1;
    void *np;
    if (!kt__tg_reserve_to(X, n, (size_t)sd->nseg + extra + 1, want, used) ||
        !kt__plan_sim_size(w, n))
        return 0;
    X->sim.ntask = sd->nslot;
    X->sim.ndev = w->c.nd;
    X->sim.nlink = w->c.links.n;
    /* (not kt__sim_reserve: a failure must not free the timeline) */
    if (!kt__sim_grow_work_to(&X->sim, want, used)) return 0;
    if (!X->sim.critical) X->sim.work->cap_crit = 0;
    if (!(np = kt__grow_to(X->sim.critical, &X->sim.work->cap_crit, n, want,
                           used, sizeof(int))))
        return 0;
    X->sim.critical = (int *)np;
    if (!(np = kt__sim_grow(sd->se, &sd->cap_se,
                            (size_t)sd->nsseg + 1, sizeof(int))))
        return 0;
    sd->se = (int *)np;
    c = sd->cap_n;
    if (!(np = kt__grow_to(sd->sfirst, &c, n, want, used, sizeof(int))))
        return 0;
    sd->sfirst = (int *)np;
    c = sd->cap_n;
    if (!(np = kt__grow_to(sd->sn, &c, n, want, used, sizeof(int))))
        return 0;
    sd->sn = (int *)np;
    c = sd->cap_n;
    if (!(np = kt__grow_to(sd->owner, &c, n, want, used, sizeof(int))))
        return 0;
    sd->owner = (int *)np;
    sd->cap_n = c;
    return 1;
}

/* Slot u made a hole in graph x: inert for the simulator (see the top). */
static void kt__plan_sim_hole(struct kt__plan_sim_work *w, int x, int u) {
    kt__tg *X = &w->tg[x];
    struct kt__sim_work *sw = X->sim.work;
    kt_sim_task *t = &X->sim.task[u];
    memset(t, 0, sizeof *t);
    t->kind = KT_TASK_TRANSFER;
    t->device = w->c.nd;
    X->role[u] = X->rank[u] = -1;
    sw->dev[u] = 0;
    sw->npred[u] = 0;
    sw->pred_first[u] = 0;
    sw->compute[u] = 0;
    sw->sec[u] = 0;
    sw->pos[u] = -1;
    w->side[x].sn[u] = 0;
    w->side[x].sfirst[u] = 0;
}

/* The live tasks of graph x, and their predecessor entries. */
static int kt__plan_sim_live(const struct kt__plan_sim_work *w, int x,
                             int *npred) {
    const kt__tg *X = &w->tg[x];
    int o, n = w->ntc, p = 0;
    for (o = 0; o < w->c.g->nop; o++) {
        n += X->bend[o] - X->base[o];
        p += X->send[o] - X->seg[o];
    }
    if (npred) *npred = p;
    return n;
}

/* Graph x's slot -> compact numbering (kt_sim_build's: the compute tasks,
   then the blocks back to back) in s2c, and back in c2s when c2s. */
static void kt__plan_sim_compact_map(struct kt__plan_sim_work *w, int x,
                                     int *c2s) {
    const kt__tg *X = &w->tg[x];
    int o, u, n = w->ntc;
    for (u = 0; u < w->ntc; u++) {
        w->s2c[u] = u;
        if (c2s) c2s[u] = u;
    }
    for (o = 0; o < w->c.g->nop; o++) {
        for (u = X->base[o]; u < X->bend[o]; u++) {
            if (c2s) c2s[n] = u;
            w->s2c[u] = n++;
        }
        for (; u < X->base[o + 1]; u++) w->s2c[u] = -1;
    }
}

/* Graph x's task structs and predecessor lists in compact numbering into
   task[] and pred[] (room for them made before). */
static void kt__plan_sim_compact(struct kt__plan_sim_work *w, int x,
                                 kt_sim_task *task, int *pred) {
    const kt__tg *X = &w->tg[x];
    int64_t nd = w->c.nd;
    int o, u, j, at = 0, n = w->ntc;
    for (o = 0; o < w->c.g->nop; o++) {
        int shift = at - X->seg[o];
        for (j = X->seg[o]; j < X->send[o]; j++)
            pred[at++] = w->s2c[X->sim.pred[j]];
        for (u = (int)(o * nd); u < (int)(o * nd + nd); u++) {
            task[u] = X->sim.task[u];
            task[u].pred_first += shift;
        }
        for (u = X->base[o]; u < X->bend[o]; u++) {
            task[n] = X->sim.task[u];
            task[n++].pred_first += shift;
        }
    }
}

/* The two ranges of op a's live tasks in graph X: its compute tasks and
   its block (r = 0, 1). */
static void kt__plan_sim_range(const struct kt__plan_sim_work *w,
                               const kt__tg *X, int a, int r, int *lo,
                               int *hi) {
    if (r == 0) {
        *lo = (int)(a * w->c.nd);
        *hi = (int)(a * w->c.nd + w->c.nd);
    } else {
        *lo = X->base[a];
        *hi = X->bend[a];
    }
}

/* Op q's tasks' successor lists are to be rebuilt (sdirt, sops), and the
   ops whose lists can name q's tasks are to be read for them (rmark,
   rops): the readers of q's block (dep_op) and the op run after q,
   whose compute tasks wait for q's (the readers of q's compute tasks are
   that op, q itself and q's consumers, which read q's block too). */
static void kt__plan_sim_sdirty(struct kt__plan_sim_work *w, int q) {
    int k, a;
    if (q < 0 || w->sdirt[q]) return;
    w->sdirt[q] = 1;
    w->sops[w->nsops++] = q;
    for (k = w->dep_first[q]; k <= w->dep_first[q + 1]; k++) {
        a = k < w->dep_first[q + 1] ? w->dep_op[k] : w->nxt[q];
        if (a >= 0 && !w->rmark[a]) {
            w->rmark[a] = 1;
            w->rops[w->nrops++] = a;
        }
    }
}

/* Forgets sdirt and rmark (the lists stay). */
static void kt__plan_sim_sclear(struct kt__plan_sim_work *w) {
    int k;
    for (k = 0; k < w->nsops; k++) w->sdirt[w->sops[k]] = 0;
    for (k = 0; k < w->nrops; k++) w->rmark[w->rops[k]] = 0;
}

/* A slot's room for `want` entries: 1.5 times as many plus nd, so that a
   slot outgrown is outgrown again only after its need has grown by half
   (growing a slot moves tasks: rare by a geometric margin). */
static int64_t kt__plan_sim_slot(const struct kt__plan_sim_work *w,
                                 int want) {
    return (int64_t)want + want / 2 + w->c.nd;
}

/* *end moved past a slot of `room` more entries; 0 (and too_big noted,
   nothing changed) when that passes KT__PS_MAX. */
static int kt__plan_sim_extend(struct kt__plan_sim_work *w, int *end,
                               int64_t room) {
    if (room > (int64_t)KT__PS_MAX - *end) {
        w->too_big = 1;
        return 0;
    }
    *end += (int)room;
    return 1;
}

/* The failure of a step that returned 0: a layout refused (too_big),
   else out of memory.  A refused layout may have moved some of the
   scratch graph's lists to new slots at the end before the one refused:
   the scratch graph is then re-synced whole, in the current graph's
   layout, so that the space they took does not bring the next proposal
   nearer the limit. */
static kt_status kt__plan_sim_failed(struct kt__plan_sim_work *w,
                                     kt_error *err, const char *doing) {
    if (w->too_big) {
        w->too_big = 0;
        w->resync_all = 1;
        return kt__fail(err, KT_ERR_LIMIT, 0, "%s: the task graph laid out "
                        "in slots with room needs more than %d task slots "
                        "or list entries (KT__PS_MAX: they are numbered "
                        "with ints)", doing, KT__PS_MAX);
    }
    return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory %s", doing);
}

/* Op q's successor entries in graph x, as counted in ecnt. */
static int kt__plan_sim_succ_need(const struct kt__plan_sim_work *w,
                                  const kt__tg *X, int q) {
    int r, lo, hi, u, need = 0;
    for (r = 0; r < 2; r++) {
        kt__plan_sim_range(w, X, q, r, &lo, &hi);
        for (u = lo; u < hi; u++) need += w->ecnt[u];
    }
    return need;
}

/* Every op in sops given a successor slot with room for its entries
   (counted in ecnt): one that has outgrown its slot gets a new one at the
   end of graph x's array.  The array grows first, so that a failure moves
   no slot (a slot past the end of the array would be written by the next
   re-sync).  0: out of memory or past KT__PS_MAX (nothing changed). */
static int kt__plan_sim_succ_place(struct kt__plan_sim_work *w, int x) {
    const kt__tg *X = &w->tg[x];
    kt__ps_side *sd = &w->side[x];
    int k, end = sd->nsseg;
    void *np;
    for (k = 0; k < w->nsops; k++) {
        int q = w->sops[k], need = kt__plan_sim_succ_need(w, X, q);
        if (need > sd->scap[q] - sd->sseg[q] &&
            !kt__plan_sim_extend(w, &end, kt__plan_sim_slot(w, need)))
            return 0;
    }
    if (!(np = kt__sim_grow(sd->se, &sd->cap_se, (size_t)end + 1,
                            sizeof(int))))
        return 0;
    sd->se = (int *)np;
    for (k = 0; k < w->nsops; k++) {
        int q = w->sops[k], need = kt__plan_sim_succ_need(w, X, q);
        if (need > sd->scap[q] - sd->sseg[q]) {
            sd->sseg[q] = sd->nsseg;
            sd->nsseg += (int)kt__plan_sim_slot(w, need); /* checked */
            sd->scap[q] = sd->nsseg;
        }
    }
    return 1;
}

/* Successor lists rebuilt: for every op in sops, those of its tasks in
   graph x, from the lists of the ops in rops (every entry naming one of
   its tasks is in one of them), written in the op's successor slot -- a
   new one at the end of the array when it has outgrown its slot (a
   list's order does not matter: the queue orders by ready time and
   index).  0: out of memory (nothing was written; ecnt is left at 0). */
static int kt__plan_sim_succ(struct kt__plan_sim_work *w, int x) {
    const kt__tg *X = &w->tg[x];
    const struct kt__sim_work *sw = X->sim.work;
    kt__ps_side *sd = &w->side[x];
    int k, r, u, j, lo, hi, pass, ok = 1;
    for (pass = 0; pass < 2; pass++) {
        /* pass 0 counts each task's successors, pass 1 writes them */
        for (k = 0; k < w->nrops; k++)
            for (r = 0; r < 2; r++) {
                kt__plan_sim_range(w, X, w->rops[k], r, &lo, &hi);
                for (u = lo; u < hi; u++) {
                    const int *pr = X->sim.pred + sw->pred_first[u];
                    for (j = 0; j < sw->npred[u]; j++) {
                        int p = pr[j];
                        if (!w->sdirt[sd->owner[p]]) continue;
                        if (pass == 0) w->ecnt[p]++;
                        else sd->se[sd->sfirst[p] + sd->sn[p]++] = u;
                    }
                }
            }
        if (pass == 1) break;
        ok = kt__plan_sim_succ_place(w, x);
        for (k = 0; k < w->nsops; k++) { /* each list's place; ecnt to 0 */
            int q = w->sops[k], at = sd->sseg[q];
            for (r = 0; r < 2; r++) {
                kt__plan_sim_range(w, X, q, r, &lo, &hi);
                for (u = lo; u < hi; u++) {
                    if (ok) {
                        sd->sfirst[u] = at;
                        sd->sn[u] = 0;
                    }
                    at += w->ecnt[u];
                    w->ecnt[u] = 0;
                }
            }
            if (ok) sd->suse[q] = at - sd->sseg[q];
        }
        if (!ok) return 0;
    }
    return 1;
}

/* Graph x simulated in full (FlexFlow Algorithm 1), in compact numbering
   (the simulator knows no holes) and its timeline, run times in ticks,
   busy times and tick written back into x's slots.  For the first layout,
   a relayout and a proposal whose run times call for another tick. */
static kt_status kt__plan_sim_full(struct kt__plan_sim_work *w, int x,
                                   kt_error *err) {
    kt__tg *X = &w->tg[x];
    struct kt__sim_work *xw = X->sim.work;
    const struct kt__sim_work *fw;
    kt_sim *f = &w->flat;
    int np_, n = kt__plan_sim_live(w, x, &np_), u, k;
    void *np;
    kt_status s;
    /* Every array of the flat graph, its simulator's too, is rewritten
       whole by this run (another graph: derived afresh): one that grows
       keeps nothing (no copy of what is overwritten anyway). */
    if (!(np = kt__grow_to(w->c2s, &w->cap_c2s, (size_t)n + 1, 0, 0,
                           sizeof(int))))
        goto nomem;
    w->c2s = (int *)np;
    if (!(np = kt__grow_to(f->task, &w->cap_ft, (size_t)n + 1, 0, 0,
                           sizeof(kt_sim_task))))
        goto nomem;
    f->task = (kt_sim_task *)np;
    if (!(np = kt__grow_to(f->pred, &w->cap_fp, (size_t)np_ + 1, 0, 0,
                           sizeof(int))))
        goto nomem;
    f->pred = (int *)np;
    if (!f->busy &&
        !(f->busy = (double *)kt__calloc((size_t)w->c.nd + 1, sizeof(double))))
        goto nomem;
    f->ntask = n;
    f->ndev = w->c.nd;
    f->nlink = w->c.links.n;
    if (f->work && (size_t)n + 1 > f->work->cap_n) {
        f->work->derived = 0; /* (what it derived is lost) */
        if (!kt__sim_grow_work_to(f, 0, 0)) goto nomem;
    }
    kt__plan_sim_compact_map(w, x, w->c2s);
    kt__plan_sim_compact(w, x, f->task, f->pred);
    if ((s = kt_sim_run(f, err)) != KT_OK) return s;
    fw = f->work;
    for (u = 0; u < w->side[x].nslot; u++) {
        int c = w->s2c[u];
        if (c < 0) continue; /* a hole: inert already */
        xw->dev[u] = fw->dev[c];
        xw->npred[u] = fw->npred[c];
        xw->pred_first[u] = X->sim.task[u].pred_first;
        xw->compute[u] = fw->compute[c];
        xw->sec[u] = fw->sec[c];
        xw->start[u] = fw->start[c];
        xw->end[u] = fw->end[c];
        xw->pos[u] = fw->pos[c];
        xw->devprev[u] = fw->devprev[c] < 0 ? -1 : w->c2s[fw->devprev[c]];
    }
    for (k = 0; k < n; k++) xw->order[k] = w->c2s[fw->order[k]];
    memcpy(X->sim.busy, f->busy, sizeof(double) * (size_t)w->c.nd);
    memcpy(xw->tick_hist, fw->tick_hist, sizeof xw->tick_hist);
    X->sim.step_seconds = f->step_seconds;
    X->sim.tick = xw->tick = f->tick;
    xw->n = w->side[x].nslot;
    xw->nres = w->c.nd + w->c.links.n;
    xw->ndev = w->c.nd;
    xw->simulated = 1;
    xw->derived = 0;
    w->crit_last[x] = f->ncritical ? w->c2s[f->critical[f->ncritical - 1]]
                                   : -1;
    w->qpos_ok[x] = 0;
    return KT_OK;
nomem:
    return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory simulating");
}

/* A layout of every slot (see the top; kt_plan_sim_init's, of the
   compact graph kt__tg_build makes): the current graph's tasks and
   predecessor lists written into the scratch graph with room in every
   slot, simulated in full there, and the two graphs swapped -- the
   current graph is then the same graph and timeline, renumbered, and the
   scratch one is to be copied whole.  The current graph is not written:
   on failure it stays. */
static kt_status kt__plan_sim_relayout(struct kt__plan_sim_work *w,
                                       kt_error *err) {
    const kt_graph *g = w->c.g;
    int ox = w->cur, nx = 1 - w->cur, o, u, j, nb = w->ntc, ns = 0, nss = 0;
    kt__tg *O = &w->tg[ox], *N = &w->tg[nx];
    kt__ps_side *so = &w->side[ox], *sn = &w->side[nx], tmp_side;
    int64_t nd = w->c.nd;
    int *cnt = w->lstart; /* scratch: successor entries per op */
    kt__tg tmp;
    kt_status s;
    int tq[2], tw[2], tc[2], *tp;
    w->resync_all = 1; /* whatever happens, the scratch graph is rewritten */
    for (o = 0; o <= g->nop; o++) cnt[o] = 0;
    for (o = 0; o < g->nop; o++)
        for (j = O->seg[o]; j < O->send[o]; j++) cnt[so->owner[O->sim.pred[j]]]++;
    for (o = 0; o < g->nop; o++) {
        int bl = O->bend[o] - O->base[o], pl = O->send[o] - O->seg[o];
        N->base[o] = nb;
        N->bend[o] = nb + bl;
        N->seg[o] = ns;
        N->send[o] = ns + pl;
        sn->sseg[o] = nss;
        if (!kt__plan_sim_extend(w, &nb, kt__plan_sim_slot(w, bl)) ||
            !kt__plan_sim_extend(w, &ns, kt__plan_sim_slot(w, pl)) ||
            !kt__plan_sim_extend(w, &nss, kt__plan_sim_slot(w, cnt[o])))
            return kt__plan_sim_failed(w, err, "laying out the task graph");
        sn->pcap[o] = ns;
        sn->scap[o] = nss;
    }
    N->base[g->nop] = sn->nslot = nb;
    N->seg[g->nop] = sn->nseg = ns;
    sn->nsseg = nss;
    if (!kt__plan_sim_room(w, nx, 0))
        return kt__plan_sim_failed(w, err, "laying out the task graph");
    for (u = 0; u < w->ntc; u++) {
        o = (int)(u / nd);
        sn->owner[u] = o;
        N->sim.task[u] = O->sim.task[u];
        N->sim.task[u].pred_first += N->seg[o] - O->seg[o];
        N->role[u] = N->rank[u] = -1;
    }
    for (o = 0; o < g->nop; o++) {
        for (u = N->base[o]; u < N->base[o + 1]; u++) {
            int t = O->base[o] + u - N->base[o];
            sn->owner[u] = o;
            if (u >= N->bend[o]) {
                kt__plan_sim_hole(w, nx, u);
                continue;
            }
            N->sim.task[u] = O->sim.task[t];
            N->sim.task[u].pred_first += N->seg[o] - O->seg[o];
            N->role[u] = O->role[t];
            N->rank[u] = O->rank[t];
        }
        for (j = O->seg[o]; j < O->send[o]; j++) {
            int v = O->sim.pred[j], q = so->owner[v];
            N->sim.pred[N->seg[o] + j - O->seg[o]] =
                v < w->ntc ? v : N->base[q] + v - O->base[q];
        }
    }
    if ((s = kt__plan_sim_full(w, nx, err)) != KT_OK) return s;
    /* every op's successor lists */
    w->nsops = w->nrops = 0;
    for (o = 0; o < g->nop; o++) kt__plan_sim_sdirty(w, o);
    if (!kt__plan_sim_succ(w, nx)) /* (sized to fit: no new slot) */
        return kt__plan_sim_failed(w, err, "laying out the task graph");
    kt__plan_sim_sclear(w);
    w->nsops = w->nrops = 0;
    /* the scratch graph becomes the current one */
    tmp = *O;
    *O = *N;
    *N = tmp;
    tmp_side = *so;
    *so = *sn;
    *sn = tmp_side;
    tp = w->qpos[0];
    w->qpos[0] = w->qpos[1];
    w->qpos[1] = tp;
    tq[0] = w->qpos_ok[1], tq[1] = w->qpos_ok[0];
    tw[0] = w->qwait[1], tw[1] = w->qwait[0];
    tc[0] = w->crit_last[1], tc[1] = w->crit_last[0];
    for (j = 0; j < 2; j++) {
        w->qpos_ok[j] = tq[j];
        w->qwait[j] = tw[j];
        w->crit_last[j] = tc[j];
    }
    memset(w->fresh, 0, w->nt_init);
    return KT_OK;
}

/* Room at the end of graph x's predecessor array for a slot of `want`
   entries for op q, which moves there (its entries are copied by the
   caller).  0: out of memory or past KT__PS_MAX (nothing changed). */
static int kt__plan_sim_pred_slot(struct kt__plan_sim_work *w, int x, int q,
                                  int want) {
    kt__tg *X = &w->tg[x];
    kt__ps_side *sd = &w->side[x];
    int end = sd->nseg;
    if (!kt__plan_sim_extend(w, &end, kt__plan_sim_slot(w, want)) ||
        !kt__tg_reserve(X, 0, (size_t)end + 1))
        return 0;
    X->seg[q] = sd->nseg;
    sd->nseg = end;
    sd->pcap[q] = end;
    return 1;
}

/* Op q's successor slot in the scratch graph given room for `slen`
   entries: one too small, or not inside its array (never, but a slot
   past the end would be written out of bounds), is replaced by a new
   one at the end.  0: out of memory or past KT__PS_MAX (nothing
   changed). */
static int kt__plan_sim_succ_room(struct kt__plan_sim_work *w, int q,
                                  int slen) {
    kt__ps_side *sn = &w->side[1 - w->cur];
    void *np;
    if (slen > sn->scap[q] - sn->sseg[q] ||
        (size_t)sn->scap[q] > sn->cap_se) {
        int end = sn->nsseg;
        if (!kt__plan_sim_extend(w, &end, kt__plan_sim_slot(w, slen)) ||
            !(np = kt__sim_grow(sn->se, &sn->cap_se, (size_t)end + 1,
                                sizeof(int))))
            return 0;
        sn->se = (int *)np;
        sn->sseg[q] = sn->nsseg;
        sn->nsseg = end;
        sn->scap[q] = end;
    }
    return 1;
}

/* Op q's tasks' successor lists in the scratch graph made the current
   graph's again, in the scratch graph's own successor slot: what a
   proposal changes of an op whose successor lists it rebuilt but not
   its tasks or predecessor lists (the producers and the op run before
   an op whose lists were rebuilt), so that the re-sync copies no more of
   it.  0: out of memory (nothing copied). */
static int kt__plan_sim_copy_succ(struct kt__plan_sim_work *w, int q) {
    const kt__tg *O = &w->tg[w->cur];
    const kt__ps_side *so = &w->side[w->cur];
    kt__ps_side *sn = &w->side[1 - w->cur];
    int r, lo, hi, u, slen = so->suse[q], sshift;
    if (!kt__plan_sim_succ_room(w, q, slen)) return 0;
    sshift = sn->sseg[q] - so->sseg[q];
    for (r = 0; r < 2; r++) {
        kt__plan_sim_range(w, O, q, r, &lo, &hi); /* the holes' stay 0 */
        for (u = lo; u < hi; u++) {
            sn->sfirst[u] = so->sfirst[u] + sshift;
            sn->sn[u] = so->sn[u];
        }
    }
    sn->suse[q] = slen;
    memcpy(sn->se + sn->sseg[q], so->se + so->sseg[q],
           sizeof(int) * (size_t)slen);
    return 1;
}

/* Op q's slots in the scratch graph made the current graph's again: its
   compute tasks and block slot (structs, roles and kinds, the
   simulator's per-task data, positions -- a hole's is -1 -- and
   successor ranges), its predecessor entries and its successor entries,
   the last two in the scratch graph's own slots (moved to the end of its
   arrays when too small), every range moved by the difference.  0: out
   of memory (then nothing of q is copied but its new slots). */
static int kt__plan_sim_copy_slot(struct kt__plan_sim_work *w, int q,
                                  int whole) {
    const kt__tg *O = &w->tg[w->cur];
    kt__tg *N = &w->tg[1 - w->cur];
    const struct kt__sim_work *wo = O->sim.work;
    struct kt__sim_work *wn = N->sim.work;
    const kt__ps_side *so = &w->side[w->cur];
    kt__ps_side *sn = &w->side[1 - w->cur];
    int r, lo, hi, u, plen = O->send[q] - O->seg[q], pshift, sshift;
    int slen = so->suse[q];
    size_t len;
    /* a slot too small, or not inside its array (never, but a slot past
       the end would be written out of bounds), is replaced */
    if ((plen > sn->pcap[q] - N->seg[q] ||
         (size_t)sn->pcap[q] > N->cap_pred) &&
        !kt__plan_sim_pred_slot(w, 1 - w->cur, q, plen))
        return 0;
    if (!kt__plan_sim_succ_room(w, q, slen)) return 0;
    pshift = N->seg[q] - O->seg[q];
    sshift = sn->sseg[q] - so->sseg[q];
    for (r = 0; r < 2; r++) {
        if (r == 0) {
            lo = (int)(q * w->c.nd);
            hi = (int)(lo + w->c.nd);
        } else { /* the live tasks of either (the rest are holes in both)
                    or, `whole`, the slot */
            lo = O->base[q];
            hi = O->bend[q] > N->bend[q] ? O->bend[q] : N->bend[q];
            if (whole) hi = O->base[q + 1];
        }
        len = (size_t)(hi - lo);
        memcpy(N->sim.task + lo, O->sim.task + lo, sizeof(kt_sim_task) * len);
        memcpy(N->role + lo, O->role + lo, sizeof(int) * len);
        memcpy(N->rank + lo, O->rank + lo, sizeof(int) * len);
        memcpy(wn->dev + lo, wo->dev + lo, sizeof(int) * len);
        memcpy(wn->npred + lo, wo->npred + lo, sizeof(int) * len);
        memcpy(wn->compute + lo, wo->compute + lo, len);
        memcpy(wn->sec + lo, wo->sec + lo, sizeof(double) * len);
        memcpy(sn->sn + lo, so->sn + lo, sizeof(int) * len);
        if (r == 1) memcpy(wn->pos + lo, wo->pos + lo, sizeof(int) * len);
        if (r == 1) hi = O->bend[q]; /* the holes' ranges are empty */
        for (u = lo; u < hi; u++) {
            N->sim.task[u].pred_first += pshift;
            wn->pred_first[u] = wo->pred_first[u] + pshift;
            sn->sfirst[u] = so->sfirst[u] + sshift;
        }
    }
    N->bend[q] = O->bend[q];
    N->send[q] = N->seg[q] + plen;
    sn->suse[q] = slen;
    memcpy(N->sim.pred + N->seg[q], O->sim.pred + O->seg[q],
           sizeof(int) * (size_t)plen);
    memcpy(sn->se + sn->sseg[q], so->se + so->sseg[q],
           sizeof(int) * (size_t)slen);
    return 1;
}

/* The scratch graph made equal to the current one before a proposal
   (see the top): the ops the last proposal touched, or everything after
   a failure, a relayout or a full run.  0: out of memory (the ops still
   to copy stay listed). */
static int kt__plan_sim_resync(struct kt__plan_sim_work *w) {
    const kt_graph *g = w->c.g;
    const kt__tg *O = &w->tg[w->cur];
    kt__tg *N = &w->tg[1 - w->cur];
    const kt__ps_side *so = &w->side[w->cur];
    kt__ps_side *sn = &w->side[1 - w->cur];
    size_t nop1 = (size_t)g->nop + 1;
    int k, u;
    if (w->resync_all) {
        /* the current graph's layout, its entry slots too */
        memcpy(N->base, O->base, sizeof(int) * nop1);
        memcpy(N->seg, O->seg, sizeof(int) * nop1);
        memcpy(sn->pcap, so->pcap, sizeof(int) * nop1);
        memcpy(sn->sseg, so->sseg, sizeof(int) * nop1);
        memcpy(sn->scap, so->scap, sizeof(int) * nop1);
        sn->nslot = so->nslot;
        sn->nseg = so->nseg;
        sn->nsseg = so->nsseg;
        if (!kt__plan_sim_room(w, 1 - w->cur, 0)) return 0;
        memcpy(sn->owner, so->owner, sizeof(int) * (size_t)so->nslot);
        N->sim.tick = O->sim.tick;
        N->sim.work->tick = O->sim.work->tick;
        for (u = 0; u < g->nop; u++)
            if (!kt__plan_sim_copy_slot(w, u, 1)) return 0;
        w->resync_all = 0;
    } else {
        for (k = w->ndirty; k > 0; k--) { /* the last first: a failure */
            int q = w->dirty[k - 1];          /* keeps those still to do */
            if (w->dlists[k - 1] ? !kt__plan_sim_copy_slot(w, q, 0)
                                 : !kt__plan_sim_copy_succ(w, q))
                return 0;
            w->ndirty = k - 1;
        }
    }
    w->ndirty = 0;
    return 1;
}

/* Room in the public view of graph x for its compact task structs,
   predecessor lists, times and critical path (kt__plan_sim_publish
   cannot fail), and its step and busy times, set at once.  0: out of
   memory. */
static int kt__plan_sim_pub_room(struct kt__plan_sim_work *w, int x) {
    kt_sim *P = &w->pub[x];
    int npr, n = kt__plan_sim_live(w, x, &npr);
    size_t c;
    void *np;
    w->pub_ok[x] = 0;
    P->task = NULL;
    P->pred = NULL;
    P->start = P->end = NULL;
    P->critical = NULL;
    P->ncritical = 0;
    if (!P->busy &&
        !(P->busy = (double *)kt__calloc((size_t)w->c.nd + 1, sizeof(double))))
        return 0;
    /* (nothing kept when they grow: kt__plan_sim_publish writes them
       whole, and a chain that never asks for a timeline never touches
       their pages) */
    c = w->cap_pt[x];
    if (!(np = kt__grow_to(w->ptask[x], &c, (size_t)n + 1, 0, 0,
                           sizeof(kt_sim_task))))
        return 0;
    w->ptask[x] = (kt_sim_task *)np;
    c = w->cap_pt[x];
    if (!(np = kt__grow_to(w->pstart[x], &c, (size_t)n + 1, 0, 0,
                           sizeof(double))))
        return 0;
    w->pstart[x] = (double *)np;
    c = w->cap_pt[x];
    if (!(np = kt__grow_to(w->pend[x], &c, (size_t)n + 1, 0, 0,
                           sizeof(double))))
        return 0;
    w->pend[x] = (double *)np;
    c = w->cap_pt[x];
    if (!(np = kt__grow_to(w->pcrit[x], &c, (size_t)n + 1, 0, 0,
                           sizeof(int))))
        return 0;
    w->pcrit[x] = (int *)np;
    w->cap_pt[x] = c;
    if (!(np = kt__grow_to(w->ppred[x], &w->cap_pp[x], (size_t)npr + 1, 0, 0,
                           sizeof(int))))
        return 0;
    w->ppred[x] = (int *)np;
    P->ntask = n;
    P->ndev = w->c.nd;
    P->nlink = w->c.links.n;
    P->tick = w->tg[x].sim.tick;
    P->step_seconds = w->tg[x].sim.step_seconds;
    memcpy(P->busy, w->tg[x].sim.busy, sizeof(double) * (size_t)w->c.nd);
    return 1;
}

static void kt__plan_sim_write_timeline(struct kt__plan_sim_work *w, int x);
static void kt__plan_sim_tl_build(struct kt__plan_sim_work *w, int x);
static void kt__plan_sim_commit(struct kt__plan_sim_work *w);

/* The public view of graph x completed in compact numbering: task
   structs, predecessor lists, start and end, and the critical path
   (walked in the slots, where the simulator's arrays are). */
static void kt__plan_sim_publish(struct kt__plan_sim_work *w, int x) {
    kt_sim *P = &w->pub[x], *S = &w->tg[x].sim;
    const struct kt__sim_work *sw = S->work;
    int u, i;
    if (w->pub_ok[x]) return;
    kt__plan_sim_write_timeline(w, x);
    kt__plan_sim_compact_map(w, x, NULL);
    kt__plan_sim_compact(w, x, w->ptask[x], w->ppred[x]);
    for (u = 0; u < w->side[x].nslot; u++)
        if (w->s2c[u] >= 0) {
            w->pstart[x][w->s2c[u]] = sw->start[u];
            w->pend[x][w->s2c[u]] = sw->end[u];
        }
    S->ncritical = 0;
    if (w->crit_last[x] >= 0)
        (void)kt__sim_critical(S, w->crit_last[x], NULL); /* room made */
    for (i = 0; i < S->ncritical; i++) w->pcrit[x][i] = w->s2c[S->critical[i]];
    P->task = w->ptask[x];
    P->pred = w->ppred[x];
    P->start = w->pstart[x];
    P->end = w->pend[x];
    P->critical = w->pcrit[x];
    P->ncritical = S->ncritical;
    w->pub_ok[x] = 1;
}

kt_status kt_plan_sim_init(const kt_graph *g, const kt_plan *p,
                           const kt_topology *t, kt_plan_sim *ps,
                           kt_error *err) {
    struct kt__plan_sim_work *w;
    kt_program prog;
    kt_status s;
    int i, u;
    size_t nop1;
    if (!ps)
        return kt__fail(err, KT_ERR_INVALID, 0, "kt_plan_sim_init: no "
                        "kt_plan_sim (NULL)");
    memset(ps, 0, sizeof *ps);
    if ((s = kt__topology_usable(t, err)) != KT_OK ||
        (s = kt__plan_check(g, p, err)) != KT_OK)
        return s;
    nop1 = (size_t)g->nop + 1;
    if (t->ndev != kt_factors_devices(&p->f))
        return kt__fail(err, KT_ERR_INVALID, 0, "the topology has %lld "
                        "devices, the plan %lld", (long long)t->ndev,
                        (long long)kt_factors_devices(&p->f));
    if ((s = kt_lower_on(g, p, t, &prog, err)) != KT_OK) return s;
    w = (struct kt__plan_sim_work *)kt__calloc(1, sizeof *w);
    ps->work = w;
    if (!w || !kt__tgctx_init(&w->c, g, t, NULL) ||
        !kt__plan_sim_index(w, g))
        goto nomem;
    w->ntc = (int)(g->nop * t->ndev);
    w->spl = (unsigned char *)kt__calloc(nop1, 1);
    w->blk = (unsigned char *)kt__calloc(nop1, 1);
    w->lst = (unsigned char *)kt__calloc(nop1, 1);
    w->sdirt = (unsigned char *)kt__calloc(nop1, 1);
    w->rmark = (unsigned char *)kt__calloc(nop1, 1);
    w->sops = (int *)kt__calloc(nop1, sizeof(int));
    w->gmark = (unsigned char *)kt__calloc(nop1, 1);
    w->gops = (int *)kt__calloc(nop1, sizeof(int));
    w->rops = (int *)kt__calloc(nop1, sizeof(int));
    w->dirty = (int *)kt__calloc(nop1, sizeof(int));
    w->dlists = (unsigned char *)kt__calloc(nop1, 1);
    w->lstart = (int *)kt__calloc(nop1, sizeof(int));
    w->chg = (int *)kt__calloc(nop1, sizeof(int));
    w->stage_first = (int *)kt__calloc(nop1 + 1, sizeof(int));
    w->stage.base = (int *)kt__calloc(nop1, sizeof(int));
    if (!w->spl || !w->blk || !w->lst || !w->sdirt || !w->rmark ||
        !w->sops || !w->gmark || !w->gops || !w->rops || !w->dirty ||
        !w->dlists ||
        !w->lstart || !w->chg ||
        !w->stage_first || !w->stage.base)
        goto nomem;
    for (i = 0; i < 2; i++) {
        if ((s = kt__plan_copy(&w->plan[i], p, g, err)) != KT_OK) {
            kt_program_free(&prog);
            kt_plan_sim_free(ps);
            return s;
        }
        w->side[i].sseg = (int *)kt__calloc(nop1, sizeof(int));
        w->side[i].scap = (int *)kt__calloc(nop1, sizeof(int));
        w->side[i].suse = (int *)kt__calloc(nop1, sizeof(int));
        w->side[i].pcap = (int *)kt__calloc(nop1, sizeof(int));
        if (!w->side[i].sseg || !w->side[i].scap || !w->side[i].pcap ||
            !w->side[i].suse)
            goto nomem;
    }
    w->tg[1].base = (int *)kt__calloc(nop1, sizeof(int));
    w->tg[1].bend = (int *)kt__calloc(nop1, sizeof(int));
    w->tg[1].seg = (int *)kt__calloc(nop1, sizeof(int));
    w->tg[1].send = (int *)kt__calloc(nop1, sizeof(int));
    w->tg[1].sim.busy = (double *)kt__calloc((size_t)t->ndev + 1,
                                             sizeof(double));
    if (!w->tg[1].base || !w->tg[1].bend || !w->tg[1].seg ||
        !w->tg[1].send || !w->tg[1].sim.busy)
        goto nomem;
    /* the compact graph (kt_sim_build's), then laid out in slots */
    if ((s = kt__tg_build(&w->c, &w->tg[0], &prog, err)) != KT_OK) {
        kt_program_free(&prog);
        kt_plan_sim_free(ps);
        return s;
    }
    kt_program_free(&prog);
    w->side[0].nslot = w->tg[0].base[g->nop];
    w->side[0].nseg = w->tg[0].seg[g->nop];
    w->side[0].owner = (int *)kt__calloc((size_t)w->side[0].nslot + 1,
                                         sizeof(int));
    if (!w->side[0].owner) goto nomem_late;
    for (u = 0; u < w->ntc; u++) w->side[0].owner[u] = (int)(u / t->ndev);
    for (i = 0; i < g->nop; i++) {
        for (u = w->tg[0].base[i]; u < w->tg[0].bend[i]; u++)
            w->side[0].owner[u] = i;
        w->side[0].pcap[i] = w->tg[0].seg[i + 1];
    }
    if ((s = kt__plan_sim_relayout(w, err)) != KT_OK) {
        kt_plan_sim_free(ps);
        return s;
    }
    /* the scratch graph made the current one (the relayout left it the
       compact graph): one-time work that would otherwise fall to the
       first proposal (a copy of every slot, a tenth of the init) */
    if (!kt__plan_sim_resync(w)) goto nomem_late;
    if (!kt__tl_reserve(&w->tl, w->side[w->cur].nslot / KT__DBLOCK + 1))
        goto nomem_late;
    kt__plan_sim_tl_build(w, w->cur);
    if (!kt__plan_sim_pub_room(w, w->cur)) goto nomem_late;
    kt__plan_sim_publish(w, w->cur);
    ps->current = &w->pub[w->cur];
    ps->plan = &w->plan[w->cur];
    kt__ok(err);
    return KT_OK;
nomem:
    kt_program_free(&prog);
nomem_late:
    kt_plan_sim_free(ps);
    return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory building the task "
                    "graph");
}

/* Accepting: the proposal's graph becomes the current one.  Nothing is
   written in the graphs: the graph that was current becomes the scratch
   graph, which the next proposal re-syncs in the ops this one touched
   (w->dirty).  Its timeline is spliced into the one kept apart
   (kt__plan_sim_commit: what its run simulated; the free blocks for it
   were reserved by the proposal, so this cannot fail). */
void kt_plan_sim_accept(kt_plan_sim *ps) {
    struct kt__plan_sim_work *w = ps ? ps->work : NULL;
    if (!w || !w->pending) return;
    kt__plan_sim_commit(w);
    w->cur = 1 - w->cur;
    w->pending = 0;
    ps->current = &w->pub[w->cur];
    ps->plan = &w->plan[w->cur];
    ps->proposed = NULL;
}

static int kt__same_tiling(const kt_tiling *a, const kt_tiling *b) {
    int i;
    if (a->ncuts != b->ncuts) return 0;
    for (i = 0; i < a->ncuts && i < KT_MAX_CUTS; i++)
        if (a->cut[i] != b->cut[i]) return 0;
    return 1;
}

/* Which blocks the proposal changes: an op whose strategy changed (its
   compute tasks too), and every op converting a tensor whose tiling
   changed (kt__lower_op's inputs).  Which lists are rebuilt: those
   reading a changed block. */
static void kt__plan_sim_diff(struct kt__plan_sim_work *w, const kt_graph *g,
                              const kt_plan *from, const kt_plan *to) {
    int o, x, k;
    memset(w->spl, 0, (size_t)g->nop);
    memset(w->blk, 0, (size_t)g->nop);
    memset(w->lst, 0, (size_t)g->nop);
    for (o = 0; o < g->nop; o++)
        if (memcmp(&from->split[o * KT_MAX_CUTS], &to->split[o * KT_MAX_CUTS],
                   sizeof(int) * (size_t)from->f.count) != 0)
            w->spl[o] = w->blk[o] = 1;
    for (x = 0; x < g->ntensor; x++)
        if (!kt__same_tiling(&from->tiling[x], &to->tiling[x]))
            for (k = w->tch_first[x]; k < w->tch_first[x + 1]; k++)
                w->blk[w->tch_op[k]] = 1;
    w->nchg = 0;
    for (o = 0; o < g->nop; o++)
        if (w->blk[o]) {
            w->chg[w->nchg++] = o;
            for (k = w->dep_first[o]; k < w->dep_first[o + 1]; k++)
                w->lst[w->dep_op[k]] = 1;
        }
}

/* Whether role j of op o converts the same way in the current plan and
   in p: o's strategy and that role's tensor's tiling are the same (then
   its transfer tasks are too: kt__lower_roles). */
static int kt__plan_sim_same_role(const struct kt__plan_sim_work *w,
                                  const kt_plan *p, int o, int j) {
    const kt_op *op = &w->c.g->op[o];
    int x = j < op->ninputs ? op->input[j] : op->output;
    return !w->spl[o] &&
           kt__same_tiling(&w->plan[w->cur].tiling[x], &p->tiling[x]);
}

/* Op o's new block written into w->stage from task `at` on, role by role
   (the order kt__tg_block sorts in): a role that converts as before
   copies its tasks from the current graph's block (their lists are
   rebuilt: o's are), the others are lowered again.  A proposal moving
   one tensor's tiling changes one role of each op it touches, so most
   of an op's conversions are not lowered again.  Returns the number of
   tasks, -1 when out of memory; *s: a lowering's failure. */
static int kt__plan_sim_stage_op(struct kt__plan_sim_work *w,
                                 const kt_plan *p, int o, int at,
                                 kt_status *s, kt_error *err) {
    const kt__tg *O = &w->tg[w->cur];
    int j, n = at, m, i = O->base[o];
    for (j = 0; j <= w->c.g->op[o].ninputs; j++) {
        int i0;
        for (; i < O->bend[o] && O->role[i] < j; i++) {}
        for (i0 = i; i < O->bend[o] && O->role[i] == j; i++) {}
        if (kt__plan_sim_same_role(w, p, o, j)) {
            if (!kt__tg_reserve(&w->stage, (size_t)(n + i - i0) + 1, 1))
                return -1;
            memcpy(w->stage.sim.task + n, O->sim.task + i0,
                   sizeof(kt_sim_task) * (size_t)(i - i0));
            memcpy(w->stage.role + n, O->role + i0,
                   sizeof(int) * (size_t)(i - i0));
            memcpy(w->stage.rank + n, O->rank + i0,
                   sizeof(int) * (size_t)(i - i0));
            n += i - i0;
            continue;
        }
        w->xs.n = 0;
        w->xs.oom = 0; /* a failed proposal's, forgotten */
        if ((*s = kt__lower_roles(w->c.g, p, w->c.t, o, j, j + 1, &w->xs,
                                  err)) !=
            KT_OK)
            return -1;
        if ((m = kt__tg_block(&w->c, &w->stage, o, w->xs.x, w->xs.n, n)) < 0)
            return -1;
        n += m;
    }
    return n - at;
}

/* The changed ops' new blocks (into w->stage) and compute times. */
static kt_status kt__plan_sim_stage(struct kt__plan_sim_work *w,
                                    const kt_plan *p, kt_error *err) {
    const kt_graph *g = w->c.g;
    int64_t nd = w->c.nd, d;
    int k, n = 0;
    void *np;
    kt_status s = KT_OK;
    if (!(np = kt__sim_grow(w->csec, &w->cap_csec,
                            (size_t)w->nchg * (size_t)nd + 1,
                            sizeof(double))))
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory");
    w->csec = (double *)np;
    for (k = 0; k < w->nchg; k++) {
        int o = w->chg[k], m;
        w->stage_first[k] = n;
        if ((m = kt__plan_sim_stage_op(w, p, o, n, &s, err)) < 0)
            return s != KT_OK ? s
                              : kt__fail(err, KT_ERR_NOMEM, 0,
                                         "out of memory");
        n += m;
        if (w->spl[o])
            for (d = 0; d < nd; d++) {
                kt_range box[KT_MAX_VARS];
                kt__op_task_box(g, p, o, d, box);
                w->csec[k * nd + d] =
                    kt__task_seconds(g, &g->op[o], box, w->c.t, d);
            }
    }
    w->stage_first[w->nchg] = n;
    return KT_OK;
}

/* Task t's number once the blocks of ops o + 1 .. b have moved to
   nbase (kt__plan_sim_grow_slot).  Their live tasks are the numbers
   base[o + 1] .. bend[b] of X (mlo .. mhi): a range check first, so that
   the owner (a scattered read) is looked up only for a moved task. */
static int kt__plan_sim_moved(const struct kt__plan_sim_work *w,
                              const kt__tg *X, const int *nbase, int mlo,
                              int mhi, int t) {
    int q;
    if (t < mlo || t >= mhi) return t;
    q = w->side[w->cur].owner[t];
    return t + nbase[q] - X->base[q];
}

/* Op q's tasks' successor lists name tasks about to move (gmark). */
static void kt__plan_sim_gadd(struct kt__plan_sim_work *w, int q) {
    if (q < 0 || w->gmark[q]) return;
    w->gmark[q] = 1;
    w->gops[w->ngops++] = q;
}

/* Graph x's per-task data of tasks from .. from + n moved to to .. to + n
   (kt__plan_sim_grow_slot; the timeline's slots with graph 0's). */
static void kt__plan_sim_move_block(struct kt__plan_sim_work *w, int x,
                                    int from, int to, int n) {
    kt__tg *X = &w->tg[x];
    kt__ps_side *sd = &w->side[x];
    struct kt__sim_work *xw = X->sim.work;
    size_t m = (size_t)n;
    memmove(X->sim.task + to, X->sim.task + from, sizeof(kt_sim_task) * m);
    memmove(X->role + to, X->role + from, sizeof(int) * m);
    memmove(X->rank + to, X->rank + from, sizeof(int) * m);
    memmove(xw->dev + to, xw->dev + from, sizeof(int) * m);
    memmove(xw->npred + to, xw->npred + from, sizeof(int) * m);
    memmove(xw->pred_first + to, xw->pred_first + from, sizeof(int) * m);
    memmove(xw->compute + to, xw->compute + from, m);
    memmove(xw->sec + to, xw->sec + from, sizeof(double) * m);
    memmove(xw->start + to, xw->start + from, sizeof(double) * m);
    memmove(xw->end + to, xw->end + from, sizeof(double) * m);
    memmove(xw->pos + to, xw->pos + from, sizeof(int) * m);
    memmove(xw->devprev + to, xw->devprev + from, sizeof(int) * m);
    memmove(w->qpos[x] + to, w->qpos[x] + from, sizeof(int) * m);
    memmove(sd->sfirst + to, sd->sfirst + from, sizeof(int) * m);
    memmove(sd->sn + to, sd->sn + from, sizeof(int) * m);
    if (x == 0) memmove(w->tl.sp + to, w->tl.sp + from, sizeof(int) * m);
}

/* The holes and the live tasks of op k's slot in the current graph. */
static int kt__plan_sim_holes_of(const kt__tg *O, int k) {
    return O->base[k + 1] - O->bend[k];
}
static int kt__plan_sim_live_of(const kt__tg *O, int k) {
    return O->bend[k] - O->base[k];
}

/* The cheapest window of slots to take `grow` holes from for op o's slot
   (kt__plan_sim_grow_slot): the holes of ops *a .. o - 1, by moving the
   blocks of ops *a + 1 .. o down (o's old block too), and those of ops
   o + 1 .. *b, by moving their blocks up -- the pair that moves the
   fewest tasks (*a == o: nothing taken below o; *b == o: nothing
   above).  Holes below o are taken only from ops whose blocks this
   proposal keeps (a changed op earlier in kt__plan_sim_fit has its slot
   fitted already).  Returns the tasks moved, -1 when the holes of every
   window fall short. */
static int64_t kt__plan_sim_window(const struct kt__plan_sim_work *w, int o,
                                   int64_t grow, int *a, int *b) {
    const kt__tg *O = &w->tg[w->cur];
    int nop = w->c.g->nop, lo, hi = o;
    int64_t best = -1, lh = 0, lc = 0, rh = 0, rc = 0;
    while (rh < grow && hi + 1 < nop) { /* above o only */
        hi++;
        rh += kt__plan_sim_holes_of(O, hi);
        rc += kt__plan_sim_live_of(O, hi);
    }
    *a = *b = o;
    if (rh >= grow) {
        best = rc;
        *b = hi;
    }
    /* then reaching one more op down at a time, and as few up as that
       leaves needed (two pointers: both only move down) */
    for (lo = o - 1; lo >= 0 && !w->blk[lo]; lo--) {
        lh += kt__plan_sim_holes_of(O, lo);
        lc += kt__plan_sim_live_of(O, lo + 1);
        if (best >= 0 && lc >= best) break;
        while (hi > o && lh + rh - kt__plan_sim_holes_of(O, hi) >= grow) {
            rh -= kt__plan_sim_holes_of(O, hi);
            rc -= kt__plan_sim_live_of(O, hi);
            hi--;
        }
        if (lh + rh >= grow && (best < 0 || lc + rc < best)) {
            best = lc + rc;
            *a = lo;
            *b = hi;
        }
    }
    return best;
}

/* The new first slots nbase[] of the window's ops (kt__plan_sim_window):
   `down` holes taken below o, the rest of `grow` above; every other op
   stays.  *first: the lowest op whose block moves. */
static void kt__plan_sim_window_bases(const struct kt__plan_sim_work *w,
                                      int o, int64_t grow, int a, int b,
                                      int *nbase, int *first) {
    const kt__tg *O = &w->tg[w->cur];
    int nop = w->c.g->nop, k;
    int64_t lh = 0, r;
    for (k = 0; k <= nop; k++) nbase[k] = O->base[k];
    for (k = a; k < o; k++) lh += kt__plan_sim_holes_of(O, k);
    r = lh < grow ? lh : grow; /* down: from o-1's holes on */
    *first = o + 1;
    for (k = o; k > a && r > 0; k--) {
        int64_t h = kt__plan_sim_holes_of(O, k - 1);
        nbase[k] = (int)(O->base[k] - r);
        *first = k;
        r -= h < r ? h : r;
    }
    r = grow - (lh < grow ? lh : grow); /* up: from o+1's holes on */
    for (k = o + 1; k <= b && r > 0; k++) {
        int64_t h = kt__plan_sim_holes_of(O, k);
        nbase[k] = (int)(O->base[k] + r);
        r -= h < r ? h : r;
    }
}

/* The bases of kt__plan_sim_grow_slot's refill, into nbase: when the
   holes ran out (the slots grow at the end), or reaching them moves more
   than an eighth of the later tasks, every block after o moves, and each
   gets back the room of the first layout (kt__plan_sim_slot) where it has
   less.  Else the growths drain the holes of whole stretches of slots,
   and each later growth before them moves all their tasks again (in a
   long chain, most of the graph a growth).  The room given back is paid
   for by the growths that use it up, as a growable array's doubling is:
   this move costs at most eight times the one it replaces.  (Measured on
   the bench's chain, tasks moved by all growths: with a half instead of
   an eighth 4.5M against 2.0M over 200 proposals on 64 devices, 28.9M
   against 9.6M over 600, 1.5M against 0.3M over 400 on 8; a sixteenth
   moves more again, 2.4M over 200.)  `grow` is the slots' growth at the
   end; both sides get room for the new end.  0: out of memory or past
   KT__PS_MAX (nothing changed). */
static int kt__plan_sim_refill_bases(struct kt__plan_sim_work *w, int o,
                                     int grow, int *nbase) {
    const kt__tg *O = &w->tg[w->cur];
    int nop = w->c.g->nop, ns_old = w->side[w->cur].nslot, e, k, x;
    e = O->base[o + 1];
    if (!kt__plan_sim_extend(w, &e, grow)) return 0;
    for (k = 0; k <= o; k++) nbase[k] = O->base[k];
    for (k = o + 1; k < nop; k++) {
        int have = O->base[k + 1] - O->base[k];
        int64_t want = kt__plan_sim_slot(w, kt__plan_sim_live_of(O, k));
        nbase[k] = e;
        if (!kt__plan_sim_extend(w, &e, want > have ? want : have))
            return 0;
    }
    nbase[nop] = e;
    for (x = 0; x < 2; x++) {
        w->side[x].nslot = nbase[nop];
        if (!kt__plan_sim_room(w, x, 0)) {
            w->side[0].nslot = w->side[1].nslot = ns_old;
            w->tg[0].sim.ntask = w->tg[1].sim.ntask = ns_old;
            return 0;
        }
    }
    return 1;
}

/* Every reference to a task of the blocks of ops first..b (in the old
   numbering, O's), renumbered to nbase's layout (kt__plan_sim_moved):
   the predecessor entries of the ops reading those blocks (dep_op), the
   successor entries of the ops whose tasks they wait for (the op itself
   and the producers of its inputs: kt__tg_op_preds), the critical path's
   last task and the timeline's slots (kt__tl: one for both graphs).  The
   lists are renumbered in the current graph and copied into the scratch
   one, whose lists are the same (right after the re-sync), in slots of
   their own. */
static void kt__plan_sim_renumber(struct kt__plan_sim_work *w, int first,
                                  int b, const int *nbase) {
    const kt_graph *g = w->c.g;
    const kt__tg *O = &w->tg[w->cur];
    kt__tg *Y = &w->tg[1 - w->cur];
    const kt__ps_side *sd = &w->side[w->cur];
    kt__ps_side *sy = &w->side[1 - w->cur];
    int *pred = O->sim.pred, *se = sd->se;
    int mlo = O->base[first], mhi = O->bend[b], k, j, j2, r, u, x, lo, hi;
    /* who names a moved task: readers (rmark) and read ops (gmark) */
    w->nrops = w->ngops = 0;
    for (k = first; k <= b; k++) {
        const kt_op *op = &g->op[k];
        if (O->bend[k] == O->base[k]) continue; /* moves no task */
        for (j = w->dep_first[k]; j < w->dep_first[k + 1]; j++) {
            int d = w->dep_op[j];
            if (!w->rmark[d]) {
                w->rmark[d] = 1;
                w->rops[w->nrops++] = d;
            }
        }
        kt__plan_sim_gadd(w, k);
        for (j = 0; j < op->ninputs; j++)
            kt__plan_sim_gadd(w, g->tensor[op->input[j]].producer);
    }
    for (k = 0; k < w->nrops; k++) {
        int q = w->rops[k];
        j2 = O->send[q];
        for (j = O->seg[q]; j < j2; j++)
            pred[j] = kt__plan_sim_moved(w, O, nbase, mlo, mhi, pred[j]);
        memcpy(Y->sim.pred + Y->seg[q], pred + O->seg[q],
               sizeof(int) * (size_t)(j2 - O->seg[q]));
    }
    for (k = 0; k < w->ngops; k++) {
        int q = w->gops[k];
        for (r = 0; r < 2; r++) {
            kt__plan_sim_range(w, O, q, r, &lo, &hi);
            for (u = lo; u < hi; u++) {
                j2 = sd->sfirst[u] + sd->sn[u];
                for (j = sd->sfirst[u]; j < j2; j++)
                    se[j] = kt__plan_sim_moved(w, O, nbase, mlo, mhi, se[j]);
            }
        }
        memcpy(sy->se + sy->sseg[q], se + sd->sseg[q],
               sizeof(int) * (size_t)sd->suse[q]);
    }
    for (x = 0; x < 2; x++)
        if (w->crit_last[x] >= 0)
            w->crit_last[x] =
                kt__plan_sim_moved(w, O, nbase, mlo, mhi, w->crit_last[x]);
    for (k = first; k <= b; k++)
        for (u = O->base[k]; u < O->bend[k]; u++)
            if (w->tl.sp[u] >= 0)
                w->tl.ord[w->tl.sp[u]] =
                    kt__plan_sim_moved(w, O, nbase, mlo, mhi, u);
    for (k = 0; k < w->nrops; k++) w->rmark[w->rops[k]] = 0;
    for (k = 0; k < w->ngops; k++) w->gmark[w->gops[k]] = 0;
    w->nrops = w->ngops = 0;
}

/* The blocks of ops first..b moved to nbase's layout in graph x: their
   tasks' data (the blocks moving down lowest first, those moving up last
   first -- memmove: each over the holes it takes), the bases, and the
   slots' owners, with holes where no task lives from op hfirst on.
   Returns the tasks moved. */
static int kt__plan_sim_move_blocks(struct kt__plan_sim_work *w, int x,
                                    int o, int first, int hfirst, int b,
                                    const int *nbase) {
    kt__tg *X = &w->tg[x];
    kt__ps_side *sd = &w->side[x];
    int nop = w->c.g->nop, moved = 0, j, k, u;
    for (j = first; j <= b; j++) {
        int from, to, n;
        k = j <= o ? j : b - (j - (o + 1));
        from = X->base[k];
        to = nbase[k];
        n = X->bend[k] - from;
        if (to != from && n > 0) kt__plan_sim_move_block(w, x, from, to, n);
        X->bend[k] = to + n;
        moved += n;
    }
    for (k = first; k <= nop; k++) X->base[k] = nbase[k];
    for (k = hfirst; k <= b; k++) /* owners, and holes where none lives */
        for (u = X->bend[k]; u < X->base[k + 1]; u++) {
            sd->owner[u] = k;
            kt__plan_sim_hole(w, x, u);
            w->tl.sp[u] = -1;
        }
    for (k = first; k <= b; k++)
        for (u = X->base[k]; u < X->bend[k]; u++) sd->owner[u] = k;
    return moved;
}

/* Op o's block slot grown to room for `need` tasks (FlexFlow 6's
   proposals change blocks' sizes; see "Relayout" at the top) by moving
   the blocks of the ops around it, in both graphs (equal but for the
   timeline here: right after the re-sync): the holes of the window of
   slots that moves the fewest tasks (kt__plan_sim_window: below o, above
   it or both -- each side alone moves about twice as many on the 64
   device bench) are taken, or, when the holes run out or taking them
   moves more than an eighth of the tasks after o, every later slot is
   refilled (kt__plan_sim_refill_bases).  The moved tasks are renumbered
   in order (so the live tasks keep the compact order): their per-task
   data moves (kt__plan_sim_move_blocks), and every reference to one is
   renumbered (kt__plan_sim_renumber).  Compute tasks never move, so an
   op whose block is empty moves no task and names none to renumber.
   0: out of memory or past KT__PS_MAX (nothing changed). */
static int kt__plan_sim_grow_slot(struct kt__plan_sim_work *w, int o,
                                  int need) {
    const kt__tg *O = &w->tg[w->cur];
    int nop = w->c.g->nop, *nbase = w->lstart, a, b, first, hfirst, k;
    int slot = O->base[o + 1] - O->base[o], end = O->base[nop], moved;
    int64_t later = 0, cost; /* the tasks after o */
    int refill = 0;
    /* (every moved number stays below the new end of the slots) */
    if (!kt__plan_sim_extend(w, &end, kt__plan_sim_slot(w, need) - slot))
        return 0;
    for (k = o + 1; k < nop; k++) later += kt__plan_sim_live_of(O, k);
    cost = kt__plan_sim_window(w, o, end - O->base[nop], &a, &b);
    if (cost >= 0 && cost <= later / 8) {
        kt__plan_sim_window_bases(w, o, end - O->base[nop], a, b, nbase,
                                  &first);
        hfirst = a;
        w->downs += first <= o;
    } else {
        if (!kt__plan_sim_refill_bases(w, o, end - O->base[nop], nbase))
            return 0;
        first = o + 1;
        hfirst = o;
        b = nop - 1;
        refill = 1;
    }
    kt__plan_sim_renumber(w, first, b, nbase);
    moved = kt__plan_sim_move_blocks(w, 0, o, first, hfirst, b, nbase);
    kt__plan_sim_move_blocks(w, 1, o, first, hfirst, b, nbase);
    w->relayouts++;
    w->moved += moved;
    w->refills += refill;
    return 1;
}

/* Every changed op's slot made room for its new block (grown when too
   small).  0: out of memory. */
static int kt__plan_sim_fit(struct kt__plan_sim_work *w) {
    const kt__tg *O = &w->tg[w->cur];
    int k;
    for (k = 0; k < w->nchg; k++) {
        int o = w->chg[k], len = w->stage_first[k + 1] - w->stage_first[k];
        if (len > O->base[o + 1] - O->base[o] &&
            !kt__plan_sim_grow_slot(w, o, len))
            return 0;
    }
    return 1;
}

/* What the proposal touches in the scratch graph: the slots of the
   changed ops are fresh (their indices name other tasks in the two
   graphs), and the ops whose successor lists are rebuilt -- those of
   every task a rebuilt list can name, old or new: the op itself, the
   producers of its inputs, for an in-place op the readers and the
   producer of its output (kt__lists_sources), and the op run before it
   -- which include the ops whose lists are rebuilt; they are the scratch
   graph's dirty ops from here on. */
static void kt__plan_sim_touch(struct kt__plan_sim_work *w) {
    const kt_graph *g = w->c.g;
    const kt__tg *O = &w->tg[w->cur];
    int o, k, j;
    for (k = 0; k < w->nchg; k++)
        memset(w->fresh + O->base[w->chg[k]], 1,
               (size_t)(O->base[w->chg[k] + 1] - O->base[w->chg[k]]));
    w->nsops = w->nrops = 0;
    for (o = 0; o < g->nop; o++) {
        const kt_op *op = &g->op[o];
        if (!w->lst[o]) continue;
        kt__plan_sim_sdirty(w, o);
        kt__plan_sim_sdirty(w, w->c.prev[o]);
        for (j = 0; j < op->ninputs; j++)
            kt__plan_sim_sdirty(w, g->tensor[op->input[j]].producer);
        if (op->in_place) {
            for (k = w->c.rd_first[op->output];
                 k < w->c.rd_first[op->output + 1]; k++)
                kt__plan_sim_sdirty(w, w->c.rd_op[k]);
            kt__plan_sim_sdirty(w, g->tensor[op->output].producer);
        }
    }
    memcpy(w->dirty, w->sops, sizeof(int) * (size_t)w->nsops);
    for (k = 0; k < w->nsops; k++) w->dlists[k] = w->lst[w->sops[k]];
    w->ndirty = w->nsops;
}

/* Undoes kt__plan_sim_touch's marks (the dirty list stays). */
static void kt__plan_sim_untouch(struct kt__plan_sim_work *w) {
    const kt__tg *O = &w->tg[w->cur];
    int k;
    for (k = 0; k < w->nchg; k++)
        memset(w->fresh + O->base[w->chg[k]], 0,
               (size_t)(O->base[w->chg[k] + 1] - O->base[w->chg[k]]));
    kt__plan_sim_sclear(w);
}

/* The tick of the proposal's run times (kt__sim_tick), without a pass over
   its tasks: the current graph's histogram of run-time powers of two, less
   the tasks gone and the compute times replaced, plus the new ones --
   into wn's histogram, which is then the one kt__sim_prepare would
   count. */
static double kt__plan_sim_tick(struct kt__plan_sim_work *w,
                                struct kt__sim_work *wn) {
    const kt__tg *O = &w->tg[w->cur];
    const struct kt__sim_work *wo = O->sim.work;
    int64_t nd = w->c.nd, d;
    int k, i;
    memcpy(wn->tick_hist, wo->tick_hist, sizeof wn->tick_hist);
    for (k = 0; k < w->nchg; k++) {
        int o = w->chg[k];
        for (i = O->base[o]; i < O->bend[o]; i++)
            kt__sim_count(wn, O->sim.task[i].seconds, -1);
        for (i = w->stage_first[k]; i < w->stage_first[k + 1]; i++)
            kt__sim_count(wn, w->stage.sim.task[i].seconds, 1);
        if (w->spl[o])
            for (d = 0; d < nd; d++) {
                kt__sim_count(wn, O->sim.task[o * nd + d].seconds, -1);
                kt__sim_count(wn, w->csec[k * nd + d], 1);
            }
    }
    return kt__sim_tick(wn);
}

/* What the simulator needs of new task u, from its struct (a task whose
   list was rebuilt): its resource, predecessor range and run time in
   ticks.  0: a run time the simulator cannot take. */
static int kt__plan_sim_take(const kt__tg *N, struct kt__sim_work *wn, int u,
                             double tick, double per_s) {
    const kt_sim_task *t = &N->sim.task[u];
    if (!(t->seconds >= 0) || t->seconds > 1e30) return 0;
    wn->dev[u] = (int)t->device;
    wn->npred[u] = t->npred;
    wn->pred_first[u] = t->pred_first;
    wn->compute[u] = t->kind == KT_TASK_COMPUTE;
    wn->sec[u] = kt__sim_quantize(t->seconds, tick, per_s);
    return 1;
}

/* The changed ops' new blocks written into their slots of the scratch
   graph (the rest of a slot made holes) and their new compute times. */
static void kt__plan_sim_write_blocks(struct kt__plan_sim_work *w) {
    kt__tg *N = &w->tg[1 - w->cur];
    int64_t nd = w->c.nd, d;
    int k, u;
    for (k = 0; k < w->nchg; k++) {
        int o = w->chg[k], len = w->stage_first[k + 1] - w->stage_first[k];
        int at = N->base[o], old_end = N->bend[o];
        memcpy(N->sim.task + at, w->stage.sim.task + w->stage_first[k],
               sizeof(kt_sim_task) * (size_t)len);
        memcpy(N->role + at, w->stage.role + w->stage_first[k],
               sizeof(int) * (size_t)len);
        memcpy(N->rank + at, w->stage.rank + w->stage_first[k],
               sizeof(int) * (size_t)len);
        N->bend[o] = at + len;
        for (u = at + len; u < old_end; u++)
            kt__plan_sim_hole(w, 1 - w->cur, u);
        if (w->spl[o])
            for (d = 0; d < nd; d++)
                N->sim.task[o * nd + d].seconds = w->csec[k * nd + d];
    }
}

/* The predecessor lists of the ops in w->lst rebuilt in the scratch
   graph, each written at the end of its array and moved into its slot
   (or, when it has outgrown the slot, left there with room after it as
   its new slot), with the simulator's view of their tasks (resources,
   ranges, run times in ticks of `tick`) and the busy times. */
static kt_status kt__plan_sim_lists(struct kt__plan_sim_work *w,
                                    double tick, kt_error *err) {
    const kt_graph *g = w->c.g;
    kt__tg *O = &w->tg[w->cur], *N = &w->tg[1 - w->cur];
    kt__ps_side *sn = &w->side[1 - w->cur];
    const struct kt__sim_work *wo = O->sim.work;
    struct kt__sim_work *wn = N->sim.work;
    int64_t nd = w->c.nd, d;
    int o, at, end, r, lo, hi, u, len, shift, bad;
    double per_s = kt__sim_per_tick(tick);
    memcpy(N->sim.busy, O->sim.busy, sizeof(double) * (size_t)nd);
    for (o = 0; o < g->nop; o++) {
        if (!w->lst[o]) continue;
        at = sn->nseg;
        N->full = 0;
        if (!kt__tg_op_preds(&w->c, N, o, at, &end)) {
            w->too_big |= N->full; /* written past the end of the slots */
            return kt__plan_sim_failed(w, err, "updating the task graph");
        }
        len = end - at;
        if (len <= sn->pcap[o] - N->seg[o]) {
            memcpy(N->sim.pred + N->seg[o], N->sim.pred + at,
                   sizeof(int) * (size_t)len);
        } else { /* outgrown: its new slot is where it was written */
            if (!kt__plan_sim_pred_slot(w, 1 - w->cur, o, len))
                return kt__plan_sim_failed(w, err, "updating the task "
                                           "graph");
        }
        shift = N->seg[o] - at;
        N->send[o] = N->seg[o] + len;
        bad = 0;
        for (r = 0; r < 2; r++) {
            kt__plan_sim_range(w, N, o, r, &lo, &hi);
            for (u = lo; u < hi; u++) {
                N->sim.task[u].pred_first += shift;
                bad |= !kt__plan_sim_take(N, wn, u, tick, per_s);
            }
        }
        if (bad)
            return kt__fail(err, KT_ERR_INVALID, 0, "simulation: op %d has a "
                            "run time that is not a finite number of "
                            "seconds >= 0", o);
        if (w->spl[o]) /* whole ticks: exact in any order */
            for (d = 0; d < nd; d++)
                if (d < N->sim.ndev)
                    N->sim.busy[d] += wn->sec[o * nd + d] -
                                      wo->sec[o * nd + d];
    }
    N->sim.tick = tick;
    wn->n = sn->nslot;
    wn->nres = N->sim.ndev + N->sim.nlink;
    wn->ndev = N->sim.ndev;
    wn->simulated = 0;
    wn->derived = 0;
    return KT_OK;
}

/* Whether task u (kept: the same task in both graphs) waits for the same
   tasks (a predecessor in a fresh slot is another task in the two). */
static int kt__plan_sim_same_preds(const struct kt__plan_sim_work *w,
                                   int u) {
    const kt_sim *os = &w->tg[w->cur].sim, *ns = &w->tg[1 - w->cur].sim;
    const struct kt__sim_work *wo = os->work, *wn = ns->work;
    const int *a = os->pred + wo->pred_first[u];
    const int *b = ns->pred + wn->pred_first[u];
    int j;
    if (wo->npred[u] != wn->npred[u]) return 0;
    for (j = 0; j < wn->npred[u]; j++)
        if (a[j] != b[j] || w->fresh[a[j]]) return 0;
    return 1;
}

/* Where the first change can show (FlexFlow 5.3, Algorithm 2, as in
   kt_sim_delta a resumption of Algorithm 1).  The previous run's first
   k0 starts stay valid when every task they started is unchanged and
   nothing new could have started among them.  So k0 is the smallest of:
   the old position of every task that is gone or whose run time or
   predecessors changed, and, for every new or changed task, a position it
   cannot start before -- one after the latest position of its
   predecessors (a task starts only after its predecessors; for a changed
   or new predecessor its own bound), found as the least fixed point of
   those rules (iterating up from 0; every iterate is a valid bound).
   Task numbers are stable and in the compact order, so ties resolve as
   before. */
static int kt__plan_sim_bounds(struct kt__plan_sim_work *w, int *k0out) {
    const kt_graph *g = w->c.g;
    kt__tg *O = &w->tg[w->cur], *N = &w->tg[1 - w->cur];
    int64_t nd = w->c.nd, d;
    int n = w->side[1 - w->cur].nslot, k0 = kt__plan_sim_live(w, w->cur, NULL);
    int o, k, i, j, pass, changed;
    void *np;
    if (!(np = kt__sim_grow(w->bound, &w->cap_bound, (size_t)n + 1,
                            sizeof(int))))
        return 0;
    w->bound = (int *)np;
    k = (int)w->cap_inc; /* inc is all 0 between proposals */
    if (!(np = kt__sim_grow(w->inc, &w->cap_inc, (size_t)n + 1, 1))) return 0;
    w->inc = (unsigned char *)np;
    if (w->cap_inc > (size_t)k) memset(w->inc + k, 0, w->cap_inc - (size_t)k);
    /* the changed and new tasks */
    w->ncset = 0;
    for (o = 0; o < g->nop; o++) {
        int nlo = N->base[o], nhi = N->bend[o];
        if (!w->lst[o]) continue;
        if (!(np = kt__sim_grow(w->cset, &w->cap_cset,
                                (size_t)(w->ncset + nd + nhi - nlo) + 1,
                                sizeof(int))))
            return 0;
        w->cset = (int *)np;
        for (d = 0; d < nd; d++) {
            int u = (int)(o * nd + d);
            if (N->sim.task[u].seconds != O->sim.task[u].seconds ||
                !kt__plan_sim_same_preds(w, u))
                w->cset[w->ncset++] = u;
        }
        for (i = nlo; i < nhi; i++)
            if (w->blk[o] || !kt__plan_sim_same_preds(w, i))
                w->cset[w->ncset++] = i;
    }
    /* gone: the old tasks of the changed blocks */
    for (k = 0; k < w->nchg; k++)
        for (i = O->base[w->chg[k]]; i < O->bend[w->chg[k]]; i++)
            if (kt__tl_pos(&w->tl, i) < k0) k0 = kt__tl_pos(&w->tl, i);
    for (k = 0; k < w->ncset; k++) {
        w->inc[w->cset[k]] = 1;
        w->bound[w->cset[k]] = 0;
    }
    for (pass = 0, changed = 1; changed && pass < 64; pass++) {
        changed = 0;
        for (k = 0; k < w->ncset; k++) {
            int u = w->cset[k], b = 0;
            const kt_sim_task *tu = &N->sim.task[u];
            for (j = 0; j < tu->npred; j++) {
                int p = N->sim.pred[tu->pred_first + j];
                int at = w->inc[p] ? w->bound[p] : kt__tl_pos(&w->tl, p);
                if (at + 1 > b) b = at + 1;
            }
            if (!w->fresh[u] && kt__tl_pos(&w->tl, u) < b) /* an old task */
                b = kt__tl_pos(&w->tl, u);
            if (b != w->bound[u]) {
                w->bound[u] = b;
                changed = 1;
            }
        }
    }
    for (k = 0; k < w->ncset; k++) {
        if (w->bound[w->cset[k]] < k0) k0 = w->bound[w->cset[k]];
        w->inc[w->cset[k]] = 0;
    }
    if (k0 > n) k0 = n;
    *k0out = k0;
    return 1;
}

/* The resumed run's bookkeeping.  The run alternates: it simulates from a
   restore point (an old position R whose state it set up from the old
   run's), and whenever its state is the old run's at some old position P
   moved by a constant, it copies the old timeline from P up to the next
   position where a change can show (a jump) and restores there -- or to
   the end, when no change is left. */
struct kt__ps_run {
    int kk;          /* tasks started, at new positions 0 .. kk            */
    int maxpos;      /* the latest old position of a kept task started     */
    int new_started; /* added tasks started                                */
    int nrem;        /* tasks gone whose old positions are passed          */
    int first;       /* no jump yet: every time before the restore point is
                        the old one                                        */
    double emax_new, emax_old; /* the latest end, new and old, of the tasks
                        started before the restore point                  */
    double old_acc;  /* the latest old end of the kept tasks started       */
    double top;      /* the latest end so far, first at position top_at   */
    int top_at;
    int kept;        /* old starts copied                                  */
    int next_check;  /* no full comparison of the states before this start */
    int next_try;    /* no comparison at all before this one               */
    int wkind, wid;  /* the last comparison's witness: what differed
                        (KT__PS_WIT_*: device or link wid, queued task
                        wid, ready at wready), looked at first by the
                        next one                                          */
    double wready;
    int qwait;       /* the most starts a task started so far waited in
                        the queue (kt__plan_sim_work's qwait)             */
};
typedef struct kt__ps_run kt__ps_run;

/* What the last failed comparison of the states found differing
   (kt__plan_sim_rejoined): nothing known, a device or link, a queued
   task. */
#define KT__PS_WIT_NONE 0
#define KT__PS_WIT_RES 1
#define KT__PS_WIT_QUEUED 2

/* A full comparison of the states that failed after looking at c items
   (devices, links, queued and waiting tasks) waits for c /
   KT__PS_CHECK_SHARE more starts before the next one: comparisons then
   cost at most that share of the items per start, however long the run
   goes without rejoining. */
#ifndef KT__PS_CHECK_SHARE
#define KT__PS_CHECK_SHARE 4
#endif

/* A resumed run compares its state with the old run's at most every
   KT__PS_CHECK_GAP starts (whenever its tasks match the old run's first
   ones).  On wresnet-152 over 64 devices gaps of 1 to 256 all rejoin
   about as early (1.68-1.70 M starts in the bench's first 60 proposals,
   against 2.43 M when each failed comparison held the next off for
   ~4,000 starts); a gap of 1 compares 1 M times there, 32 about 33 k. */
#ifndef KT__PS_CHECK_GAP
#define KT__PS_CHECK_GAP 32
#endif

/* The proposal's piece (kt__tl_piece) holding old position k, which one
   holds (k below w->jumped, its task not marked). */
static const kt__tl_piece *kt__ps_piece(const struct kt__plan_sim_work *w,
                                        int k) {
    int lo = 0, hi = w->npc - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (w->pc[mid].olo <= k) lo = mid;
        else hi = mid - 1;
    }
    return &w->pc[lo];
}

/* Whether the run has started task u of the proposal's graph, and then
   its end and position there: a task the run started or copied one by
   one is marked (its times in the graph's arrays); a kept task of old
   position below w->jumped that is not lies in a piece (the old timeline
   moved, nothing written per task). */
static KT__HOT int kt__ps_started_at(const struct kt__plan_sim_work *w,
                                     int u, double *end, int *pos) {
    const struct kt__sim_work *wn = w->tg[1 - w->cur].sim.work;
    const kt__tl_piece *pc;
    int k;
    if (w->mark[u] == w->mark_base) {
        *end = wn->end[u];
        *pos = wn->pos[u];
        return 1;
    }
    /* (the old position first: most tasks looked at have not started,
       and are past w->jumped; a slot of none, -1, is a task added) */
    if (w->jumped == 0 || w->tl.sp[u] < 0 ||
        (k = kt__tl_pos(&w->tl, u)) >= w->jumped || w->fresh[u])
        return 0;
    pc = kt__ps_piece(w, k);
    *end = kt__tl_end(&w->tl, u) + pc->d;
    *pos = k + pc->nlo - pc->olo;
    return 1;
}
static int kt__ps_started(const struct kt__plan_sim_work *w, int u) {
    return w->mark[u] == w->mark_base ||
           (!w->fresh[u] && kt__tl_pos(&w->tl, u) < w->jumped);
}

/* The task at new position k of the proposal's timeline. */
static int kt__ps_task(const struct kt__plan_sim_work *w, int k) {
    int lo = 0, hi = w->npc - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (w->pc[mid].nlo <= k) lo = mid;
        else hi = mid - 1;
    }
    if (w->npc > 0 && w->pc[lo].nlo <= k && k < w->pc[lo].nhi)
        return kt__tl_task(&w->tl, k - w->pc[lo].nlo + w->pc[lo].olo);
    return w->tg[1 - w->cur].sim.work->order[k];
}

/* Task u of the proposal's graph, first met since the restore point: its
   wait state from the predecessors started so far (their latest end)
   and the others, still to come; queued when there are none.  by: the
   predecessor being started now (-1: none), not counted as started yet
   -- and not looked up: it has not (it was neither marked nor copied). */
static void kt__plan_sim_wait(struct kt__plan_sim_work *w, int u, int by) {
    const kt_sim *ns = &w->tg[1 - w->cur].sim;
    struct kt__sim_work *wn = ns->work;
    const int *pred = ns->pred + wn->pred_first[u];
    kt__wait *wt = &wn->wait[u];
    int j, at = 0, np = wn->npred[u]; /* (read once: the stores below
                                         could alias it) */
    wt->ready = 0;
    wt->indeg = 0;
    for (j = 0; j < np; j++) {
        double e;
        int k;
        if (pred[j] == by) {
            wt->indeg++;
        } else if (kt__ps_started_at(w, pred[j], &e, &k)) {
            if (e > wt->ready) wt->ready = e;
            if (k + 1 > at) at = k + 1;
        } else {
            wt->indeg++;
        }
    }
    wt->set = w->wait_base;
    if (wt->indeg == 0) {
        w->qpos[1 - w->cur][u] = at;
        kt__qpush(&wn->queue, wt->ready, u);
    } else {
        w->partial_at[u] = w->npartial;
        w->partial[w->npartial++] = u;
    }
}

/* When the old run had task u (new index, a task kept with its list: its
   predecessors are the old ones, renumbered) ready: its predecessors'
   latest old end; with `started`, only among those started so far. */
static double kt__plan_sim_old_ready(const struct kt__plan_sim_work *w,
                                     int u, int started) {
    const kt_sim *ns = &w->tg[1 - w->cur].sim;
    const struct kt__sim_work *wn = ns->work;
    const int *pred = ns->pred + wn->pred_first[u];
    double ready = 0;
    int j;
    for (j = 0; j < wn->npred[u]; j++) {
        int p = pred[j];
        if (started && !kt__ps_started(w, p)) continue;
        if (kt__tl_end(&w->tl, p) > ready) ready = kt__tl_end(&w->tl, p);
    }
    return ready;
}

/* The next old position at or after P where a change can show, when the
   run has started the old run's first P tasks (but for those gone) and
   nothing after: the next task gone, the next changed task kept, and the
   first position at which a new or changed task still to start could
   start -- after its predecessors still to start (their old position + 1,
   or for a new or changed one its own bound), found as the least fixed
   point from P up (every iterate is a valid bound).  n_old: none.  The
   gone tasks' old positions before rpos[from] are all before P (the run
   passes them in order). */
static int kt__plan_sim_next_change(struct kt__plan_sim_work *w, int P,
                                    int from) {
    const kt_sim *ns = &w->tg[1 - w->cur].sim;
    const struct kt__sim_work *wn = ns->work;
    int R = w->tl.n, k, j, pass, changed;
    for (k = from; k < w->nrpos; k++)
        if (w->rpos[k] >= P) {
            R = w->rpos[k];
            break;
        }
    for (k = 0; k < w->ncset; k++) {
        int u = w->cset[k];
        if (w->mark[u] == w->mark_base) continue;
        w->bound[u] = P;
        if (!w->fresh[u] && kt__tl_pos(&w->tl, u) < R)
            R = kt__tl_pos(&w->tl, u);
    }
    for (pass = 0, changed = 1; changed && pass < 64; pass++) {
        changed = 0;
        for (k = 0; k < w->ncset; k++) {
            int u = w->cset[k], b = P;
            const int *pred = ns->pred + wn->pred_first[u];
            if (w->mark[u] == w->mark_base) continue;
            for (j = 0; j < wn->npred[u]; j++) {
                int p = pred[j], at;
                if (kt__ps_started(w, p)) continue;
                at = w->cmark[p] == w->mark_base ? w->bound[p]
                                                 : kt__tl_pos(&w->tl, p);
                if (at + 1 > b) b = at + 1;
            }
            if (b > w->bound[u]) {
                w->bound[u] = b;
                changed = 1;
            }
        }
    }
    for (k = 0; k < w->ncset; k++)
        if (w->mark[w->cset[k]] != w->mark_base && w->bound[w->cset[k]] < R)
            R = w->bound[w->cset[k]];
    return R;
}

/* Whether device or link r's free time agrees with the old one's, moved by
   d (kt__plan_sim_rejoined): the old one is the end of its task at the
   latest old position it ran, 0 when none. */
static int kt__ps_res_agrees(const struct kt__plan_sim_work *w,
                             const struct kt__sim_work *wn, int64_t r,
                             double tnew, double told, double d) {
    const kt__tl *tl = &w->tl;
    int sl = w->roslot[r];
    double xo = wn->res_oldmax[r] >= 0
                    ? tl->end[sl] + tl->toff[sl / KT__DBLOCK] : 0;
    return kt__delta_agrees(wn->free_at[r], xo, tnew, told, d);
}

/* Whether task u, queued ready at `ready`, agrees: kept with its list
   (not new or changed), ready when the old run had it ready, moved by
   d. */
static int kt__ps_queued_agrees(const struct kt__plan_sim_work *w, int u,
                                double ready, double tnew, double told,
                                double d) {
    return w->cmark[u] != w->mark_base &&
           kt__delta_agrees(ready, kt__plan_sim_old_ready(w, u, 0), tnew,
                            told, d);
}

/* Whether the last comparison's witness still differs (kt__ps_run's
   wkind): a failed comparison names what differed, and while that still
   differs the states do, so most comparisons cost one look.  A queued
   witness is still queued while it has not started (the queue is only
   emptied by a restore, which forgets the witness). */
static int kt__ps_witness_differs(const struct kt__plan_sim_work *w,
                                  const kt__ps_run *st, double tnew,
                                  double told, double d) {
    const struct kt__sim_work *wn = w->tg[1 - w->cur].sim.work;
    if (st->wkind == KT__PS_WIT_RES)
        return !kt__ps_res_agrees(w, wn, st->wid, tnew, told, d);
    if (st->wkind == KT__PS_WIT_QUEUED && w->mark[st->wid] != w->mark_base)
        return !kt__ps_queued_agrees(w, st->wid, st->wready, tnew, told, d);
    return 0;
}

/* Whether the run, after its kk starts, is the old run after its first P
   moved by d = tnew - told in every time that can still matter (the
   shifted rejoin of kt__delta_rejoined, here across a changed graph), and
   how far the old timeline then holds (*R, kt__plan_sim_next_change).
   The caller has checked that the tasks started are the old run's first P
   (but for the ones gone) and added ones.  What can still matter: the
   free time of every device and link (the old one: the end of its task
   at the latest old position it ran, or ran a task now gone), the ready
   time of each queued task and the partial ready time of each task some
   of whose predecessors started since the restore point -- unless both
   are no later than their run's present, when they delay nothing still
   to start -- and the ends of the tasks started before the restore point
   (emax_*: their latest), which the free times do not cover once a later
   task ran on the same device: they must be past, or, when they are the
   old ones (no jump yet), d = 0.  A new or changed task queued, not yet
   in the old run, rules a rejoin out.  Times are whole ticks, so the
   comparison is exact.

   The run asks often (every KT__PS_CHECK_GAP starts whose tasks match),
   so that it rejoins soon after the first position it can: holding
   every comparison off for as many starts as a full one costs, it ran on
   past rejoins (a third more starts on wresnet-152 over 64 devices).
   What keeps that cheap: the last failure's witness is looked at first;
   the queue, short, before the ~4,000 devices and links, and the tasks
   waiting for some predecessors (each a look at all of them, and seldom
   the one differing) last; and a full
   comparison that fails holds the next full one off for a share of its
   cost in starts (KT__PS_CHECK_SHARE). */
static int kt__plan_sim_rejoined(struct kt__plan_sim_work *w, kt__ps_run *st,
                                 int P, double tnew, double *shift, int *R) {
    const kt__tg *O = &w->tg[w->cur];
    const struct kt__sim_work *wo = O->sim.work;
    const struct kt__sim_work *wn = w->tg[1 - w->cur].sim.work;
    const kt__tl *tl = &w->tl;
    double told = 0, d, ready;
    int64_t r;
    int i, u, looked = 0;
    kt__qiter it = {0, 0, 0, 0};
    if (P > 0) {
        int t = kt__tl_task(tl, P - 1), j;
        const int *pred = O->sim.pred + wo->pred_first[t];
        for (j = 0; j < wo->npred[t]; j++)
            if (kt__tl_end(tl, pred[j]) > told) told = kt__tl_end(tl, pred[j]);
    }
    d = tnew - told;
    if (st->first ? !kt__delta_agrees(st->emax_new, st->emax_old, tnew, told, d)
                  : st->emax_new > tnew || st->emax_old > told)
        return 0;
    if (kt__ps_witness_differs(w, st, tnew, told, d) ||
        st->kk < st->next_check)
        return 0;
    st->wkind = KT__PS_WIT_NONE;
    while (kt__qnext(&wn->queue, &it, &u, &ready)) {
        looked++;
        if (!kt__ps_queued_agrees(w, u, ready, tnew, told, d)) {
            st->wkind = KT__PS_WIT_QUEUED;
            st->wid = u;
            st->wready = ready;
            goto differs;
        }
    }
    for (r = 0; r < wn->nres; r++) {
        looked++;
        if (!kt__ps_res_agrees(w, wn, r, tnew, told, d)) {
            st->wkind = KT__PS_WIT_RES;
            st->wid = (int)r;
            goto differs;
        }
    }
    for (i = 0; i < w->npartial; i++) {
        u = w->partial[i];
        looked++;
        if (w->cmark[u] == w->mark_base) continue; /* set up at the jump */
        if (!kt__delta_agrees(wn->wait[u].ready, kt__plan_sim_old_ready(w, u, 1),
                              tnew, told, d))
            goto differs;
    }
    looked += w->ncset;
    if ((*R = kt__plan_sim_next_change(w, P, st->nrem)) <= P) goto differs;
    *shift = d;
    return 1;
differs:
    st->next_check = st->kk + looked / KT__PS_CHECK_SHARE;
    return 0;
}

/* One task of the old timeline (task t, slot s, old position k, P <= k <
   R) copied into the new run as started, moved by d seconds and dk
   positions: its position, times and queue position (a task ready after
   P moves with it; one ready by then was queued by the run, which noted
   when).  Its number is the same in both graphs.  (Its device
   predecessor is not kept: kt__plan_sim_write_timeline derives them
   from the order.) */
static void kt__plan_sim_move(struct kt__plan_sim_work *w, kt__ps_run *st,
                              int t, int s, int k, int P, int dk, double d) {
    const kt__tl *tl = &w->tl;
    struct kt__sim_work *wn = w->tg[1 - w->cur].sim.work;
    int *qn = w->qpos[1 - w->cur];
    int at = k + dk, qo = k - tl->wait[s];
    double off = tl->toff[s / KT__DBLOCK], oe = tl->end[s] + off, e = oe + d;
    wn->pos[t] = at;
    wn->start[t] = tl->start[s] + off + d;
    wn->end[t] = e;
    wn->order[at] = t;
    if (qo > P) qn[t] = qo + dk;
    if (at - qn[t] > st->qwait) st->qwait = at - qn[t];
    if (e > st->top || (e == st->top && at < st->top_at)) {
        st->top = e;
        st->top_at = at;
    }
    if (oe > st->old_acc) st->old_acc = oe;
}

/* Old positions k1 .. k2 copied task by task (kt__plan_sim_move, marked
   as started), with every device's or link's state after them. */
static void kt__plan_sim_copy_each(struct kt__plan_sim_work *w,
                                   kt__ps_run *st, int P, int k1, int k2,
                                   int dk, double d) {
    const kt__tl *tl = &w->tl;
    struct kt__sim_work *wn = w->tg[1 - w->cur].sim.work;
    int i, k = k1;
    if (k1 >= k2) return;
    for (i = kt__tl_upto(tl, k1); k < k2; i++) {
        int b = tl->seq[i], e = tl->first[i + 1] < k2 ? tl->first[i + 1] : k2;
        for (; k < e; k++) {
            int s = b * KT__DBLOCK + k - tl->first[i], t = tl->ord[s];
            int r = tl->dev[s];
            kt__plan_sim_move(w, st, t, s, k, P, dk, d);
            w->mark[t] = w->mark_base;
            wn->free_at[r] = wn->end[t];
            wn->res_oldmax[r] = k;
            w->roslot[r] = s;
        }
    }
}

/* The whole blocks seq[ia .. ib) of the old timeline into the new run as
   a piece (kt__tl_piece): moved by d seconds and dk positions, nothing
   written per task.  The latest end, the latest old end and the longest
   wait come from the blocks' summaries; the tasks the run had queued
   before the piece (ready by P: their queue position is the run's) are
   noted apart; with `scan`, the state of every device and link after
   them is read off the blocks in order (the run goes on from there):
   each resource's last slot in them noted -- from the snapshot of the
   blocks up to the piece's last whole multiple of KT__TL_SNAP
   (kt__tl_snap), the blocks after it scanned (a read and a store a
   task) -- then a pass over the resources whose last slot it noted. */
static void kt__plan_sim_piece(struct kt__plan_sim_work *w, kt__ps_run *st,
                               int ia, int ib, int dk, double d, int scan) {
    const kt__tl *tl = &w->tl;
    struct kt__sim_work *wn = w->tg[1 - w->cur].sim.work;
    const int *qn = w->qpos[1 - w->cur];
    kt__tl_piece *pc = &w->pc[w->npc++]; /* room made: one block or more */
    int a = tl->first[ia], b = tl->first[ib], i, j, u;
    kt__qiter it = {0, 0, 0, 0};
    double ready;
    pc->nlo = a + dk;
    pc->nhi = b + dk;
    pc->olo = a;
    pc->ilo = ia;
    pc->ihi = ib;
    pc->d = d;
    for (i = ia; i < ib; i++) {
        int bl = tl->seq[i], at;
        double off = tl->toff[bl], oe = tl->bmax[bl] + off;
        at = tl->first[i] + tl->bmax_at[bl] + dk;
        if (oe > st->old_acc) st->old_acc = oe;
        if (oe + d > st->top || (oe + d == st->top && at < st->top_at)) {
            st->top = oe + d;
            st->top_at = at;
        }
        if (tl->bwait[bl] > st->qwait) st->qwait = tl->bwait[bl];
    }
    if (scan) { /* (a slot noted before is of a block before the piece) */
        int64_t r;
        int hi;
        const int *sn = kt__tl_snap(&w->tl, ib, wn->nres, &hi);
        if (sn && hi > ia) { /* the blocks ia .. hi from the snapshot */
            for (r = 0; r < wn->nres; r++)
                if (sn[r] >= 0 && tl->at[sn[r] / KT__DBLOCK] >= ia)
                    w->roslot[r] = sn[r];
        } else {
            hi = ia;
        }
        for (i = hi; i < ib; i++) {
            int bl = tl->seq[i], s0 = bl * KT__DBLOCK;
            for (j = 0; j < tl->cnt[bl]; j++)
                w->roslot[tl->dev[s0 + j]] = s0 + j;
        }
        for (r = 0; r < wn->nres; r++) {
            int sl = w->roslot[r], bl, ix;
            if (sl < 0) continue;
            bl = sl / KT__DBLOCK;
            ix = tl->at[bl];
            if (ix < ia || ix >= ib) continue;
            wn->free_at[r] = tl->end[sl] + tl->toff[bl] + d;
            wn->res_oldmax[r] = tl->first[ix] + sl % KT__DBLOCK;
        }
    }
    while (kt__qnext(&wn->queue, &it, &u, &ready)) {
        int k;
        void *np;
        if (w->fresh[u] || (k = kt__tl_pos(tl, u)) < a || k >= b) continue;
        if (!(np = kt__sim_grow(w->qov, &w->cap_qov,
                                (size_t)w->nqov * 2 + 2, sizeof(int)))) {
            wn->queue.nomem = 1; /* reported when the run ends */
            continue;
        }
        w->qov = (int *)np;
        w->qov[w->nqov * 2] = u;
        w->qov[w->nqov * 2 + 1] = k + dk - qn[u];
        if (k + dk - qn[u] > st->qwait) st->qwait = k + dk - qn[u];
        w->nqov++;
    }
}

/* The old timeline's positions P .. R into the new run, moved by d
   seconds and by kk - P positions (P = -1: the kept prefix, unmoved), as
   started tasks, with every device's or link's state after them: the
   whole blocks inside as a piece, the tasks of the blocks it cuts one by
   one.  From here every kept task of old position below R has started
   (w->jumped). */
static void kt__plan_sim_copy(struct kt__plan_sim_work *w, kt__ps_run *st,
                              int P, int R, double d) {
    const kt__tl *tl = &w->tl;
    int lo = P < 0 ? 0 : P, ia, ib;
    int dk = P < 0 ? 0 : st->kk - P;
    if (R <= lo) return;
    ia = kt__tl_from(tl, lo);
    ib = kt__tl_upto(tl, R);
    if (ia < ib) {
        kt__plan_sim_copy_each(w, st, P, lo, tl->first[ia], dk, d);
        kt__plan_sim_piece(w, st, ia, ib, dk, d, 1);
        kt__plan_sim_copy_each(w, st, P, tl->first[ib], R, dk, d);
    } else {
        kt__plan_sim_copy_each(w, st, P, lo, R, dk, d);
    }
    w->jumped = R;
    st->kept += R - lo;
    st->kk = R + dk;
    st->maxpos = R - 1;
}

/* The rest of the old timeline, from P to its end, where no device's
   state is needed after it: the tasks up to the next block one by one,
   the rest a piece. */
static void kt__plan_sim_tail(struct kt__plan_sim_work *w, kt__ps_run *st,
                              int P, double d) {
    const kt__tl *tl = &w->tl;
    int no = tl->n, dk = st->kk - P, ia = kt__tl_from(tl, P);
    kt__plan_sim_copy_each(w, st, P, P, tl->first[ia], dk, d);
    if (ia < tl->nseq) kt__plan_sim_piece(w, st, ia, tl->nseq, dk, d, 0);
    w->jumped = no;
    st->kept += no - P;
    st->kk = no + dk;
}

/* Every wait state of graph s marked as not set up (kt__wait's stamp,
   when wait_base wraps). */
static void kt__plan_sim_clear_stamps(kt_sim *s) {
    size_t i;
    if (!s->work) return;
    for (i = 0; i < s->work->set_init; i++) s->work->wait[i].set = 0;
}

/* The queue at restore point R, with the old timeline copied up to it:
   the old queue there (the tasks kept with their lists that were ready
   and not started, qpos <= R <= pos: ready after P, they move with the
   copy) and the new or changed tasks ready; every other task's wait state
   is set up when a predecessor next starts (kt__plan_sim_wait).  The
   tasks started so far are the restore point's `emax`.  A task of the old
   queue at R started at most qwait positions after R (no task waited
   longer), so only old positions R .. R + qwait are looked at, not every
   task: a proposal restores once per jump, and a pass over all tasks per
   restore made the restores O(jumps x tasks).  (The queue orders its
   tasks by ready time and index whatever order they come in.) */
static void kt__plan_sim_requeue(struct kt__plan_sim_work *w, kt__ps_run *st,
                                 int P, int R, int dk) {
    const kt__tg *N = &w->tg[1 - w->cur];
    const kt__tl *tl = &w->tl;
    struct kt__sim_work *wn = N->sim.work;
    int *qn = w->qpos[1 - w->cur];
    int no = tl->n, k, i, hi = no;
    if (R + w->qwait[w->cur] < no) hi = R + w->qwait[w->cur] + 1;
    if (++w->wait_base == 0) { /* wrapped: clear the stamps */
        kt__plan_sim_clear_stamps(&w->tg[0].sim);
        kt__plan_sim_clear_stamps(&w->tg[1].sim);
        w->wait_base = 1;
    }
    kt__qreset(&wn->queue);
    w->npartial = 0;
    st->emax_new = st->top;
    st->emax_old = st->old_acc;
    for (k = 0; k < w->ncset; k++)
        if (w->mark[w->cset[k]] != w->mark_base)
            kt__plan_sim_wait(w, w->cset[k], -1);
    k = R < 0 ? 0 : R;
    for (i = k < hi ? kt__tl_upto(tl, k) : 0; k < hi; i++) {
        int e = tl->first[i + 1] < hi ? tl->first[i + 1] : hi;
        for (; k < e; k++) {
            int s = tl->seq[i] * KT__DBLOCK + k - tl->first[i];
            int u = tl->ord[s], qo = k - tl->wait[s], j, at;
            const int *pred;
            kt__wait *wt;
            double x;
            if (qo > R || w->fresh[u] || w->cmark[u] == w->mark_base)
                continue;
            wt = &wn->wait[u];
            pred = N->sim.pred + wn->pred_first[u];
            wt->ready = 0;
            wt->indeg = 0;
            for (j = 0; j < wn->npred[u]; j++) /* all started */
                if (kt__ps_started_at(w, pred[j], &x, &at) && x > wt->ready)
                    wt->ready = x;
            wt->set = w->wait_base;
            if (qo > P) qn[u] = qo + dk;
            kt__qpush(&wn->queue, wt->ready, u);
        }
    }
    st->next_check = st->kk;
    st->wkind = KT__PS_WIT_NONE; /* (a queued witness is gone) */
}

static int kt__ps_cmp_int(const void *x, const void *y) {
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

/* The tasks gone, by old position (kt__plan_sim_run folds them into the
   free times as the run passes them).  0: out of memory. */
static int kt__plan_sim_gone(struct kt__plan_sim_work *w) {
    const kt__tg *O = &w->tg[w->cur];
    int k, i, n = 0;
    void *np;
    for (k = 0; k < w->nchg; k++) n += O->bend[w->chg[k]] - O->base[w->chg[k]];
    if (!(np = kt__sim_grow(w->rpos, &w->cap_rpos, (size_t)n + 1,
                            sizeof(int))))
        return 0;
    w->rpos = (int *)np;
    w->nrpos = 0;
    for (k = 0; k < w->nchg; k++)
        for (i = O->base[w->chg[k]]; i < O->bend[w->chg[k]]; i++)
            w->rpos[w->nrpos++] = kt__tl_pos(&w->tl, i);
    qsort(w->rpos, (size_t)w->nrpos, sizeof(int), kt__ps_cmp_int);
    return 1;
}

/* kt__sim_start for a resumed run: the same times, position and order,
   without the device predecessor and the device's last task, which no
   one reads before kt__plan_sim_write_timeline derives them from the
   order (a scattered store less per start). */
static KT__HOT double kt__ps_start(struct kt__sim_work *w, int t,
                                   double ready, int k) {
    int d = w->dev[t];
    double free_at = w->free_at[d];
    double start = free_at > ready ? free_at : ready;
    double end = start + w->sec[t];
    w->start[t] = start;
    w->end[t] = end;
    w->free_at[d] = end;
    w->order[k] = t;
    w->pos[t] = k;
    return end;
}

/* The resumed run of the proposal's graph (FlexFlow 5.3): Algorithm 1
   from the old run's state after k0 starts, copying the old timeline,
   moved, wherever the run has rejoined it up to a constant
   (kt__plan_sim_rejoined) until the next change, to the end.  Exactly
   kt_sim_run's timeline and step time (start and end in the workspace's
   arrays, which the proposal's kt_sim points at); the critical path
   waits for kt_plan_sim_timeline (a walk through the graph's arrays that
   MCMC does not need), with the room for it made here.  *kept: the old
   timeline's starts copied. */
static kt_status kt__plan_sim_run(struct kt__plan_sim_work *w, int k0,
                                  int *kept, kt_error *err) {
    kt__tg *N = &w->tg[1 - w->cur];
    const kt__tl *tl = &w->tl;
    struct kt__sim_work *wn = N->sim.work;
    int n = kt__plan_sim_live(w, 1 - w->cur, NULL);
    int no = tl->n, k, done = 0;
    const kt__ps_side *sd = &w->side[1 - w->cur];
    int *qn = w->qpos[1 - w->cur];
    int64_t r;
    kt__ps_run st;
    double now = 0;
    w->crit_last[1 - w->cur] = -1;
    memset(&st, 0, sizeof st);
    st.maxpos = -1;
    st.first = 1;
    st.top = st.old_acc = -1;
    st.top_at = -1;
    w->npc = w->nqov = w->jumped = 0;
    for (k = 0; k < w->ncset; k++) w->cmark[w->cset[k]] = w->mark_base;
    for (r = 0; r < wn->nres; r++) {
        wn->free_at[r] = 0;
        wn->res_oldmax[r] = w->roslot[r] = -1;
    }
    kt__qstart(&wn->queue); /* the requeues keep a failure noted */
    kt__plan_sim_copy(w, &st, -1, k0, 0);
    kt__plan_sim_requeue(w, &st, -1, k0, 0);
    while (wn->queue.count > 0) {
        double end, d;
        int t = kt__qpop(&wn->queue, &now), r1 = wn->dev[t], ot, j, P, R;
        int j1 = sd->sfirst[t], j2 = j1 + sd->sn[t]; /* its successors */
        end = kt__ps_start(wn, t, now, st.kk++);
        if (st.kk - 1 - qn[t] > st.qwait) st.qwait = st.kk - 1 - qn[t];
        if (end > st.top) {
            st.top = end;
            st.top_at = st.kk - 1;
        }
        if (w->fresh[t]) {
            st.new_started++;
        } else {
            int s = tl->sp[t];
            double oe = tl->end[s] + tl->toff[s / KT__DBLOCK];
            ot = tl->first[tl->at[s / KT__DBLOCK]] + s % KT__DBLOCK;
            if (ot > st.maxpos) st.maxpos = ot;
            if (ot > wn->res_oldmax[r1]) {
                wn->res_oldmax[r1] = ot;
                w->roslot[r1] = s;
            }
            if (oe > st.old_acc) st.old_acc = oe;
        }
        for (j = j1; j < j2; j++) {
            int u = sd->se[j];
            kt__wait *wu = &wn->wait[u];
            if (wu->set != w->wait_base) kt__plan_sim_wait(w, u, t);
            if (end > wu->ready) wu->ready = end;
            if (--wu->indeg == 0) {
                int at = w->partial_at[u], last = w->partial[--w->npartial];
                w->partial[at] = last;
                w->partial_at[last] = at;
                qn[u] = st.kk;
                kt__qpush(&wn->queue, wu->ready, u);
            }
        }
        w->mark[t] = w->mark_base; /* after its successors' first look */
        /* the tasks gone up to maxpos count as passed, their devices'
           free times as the old run had them */
        P = st.maxpos + 1;
        while (st.nrem < w->nrpos && w->rpos[st.nrem] < P) {
            int at = w->rpos[st.nrem++], s = kt__tl_slot_at(tl, at);
            int rg = tl->dev[s];
            if (at > wn->res_oldmax[rg]) {
                wn->res_oldmax[rg] = at;
                w->roslot[rg] = s;
            }
        }
        /* the same tasks started as the old run's first P, but for the
           ones gone, plus added ones: compare the states */
        if (st.kk - st.new_started + st.nrem == P && st.kk >= st.next_try) {
            if (kt__plan_sim_rejoined(w, &st, P, now, &d, &R)) {
                int dk = st.kk - P;
                if (w->on_rejoin) w->on_rejoin(w, &st, P, now);
                /* the tail only when every added task has started (one
                   waiting for the old timeline's last task is still to
                   come at R == no: copy up to there and run it) */
                if (R >= no && st.new_started == n - no + w->nrpos) {
                    kt__plan_sim_tail(w, &st, P, d);
                    done = 1;
                    break;
                }
                kt__plan_sim_copy(w, &st, P, R, d);
                st.first = 0;
                kt__plan_sim_requeue(w, &st, P, R, dk);
                continue;
            }
            st.next_try = st.kk + KT__PS_CHECK_GAP;
        }
    }
    if (wn->queue.nomem)
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory simulating");
    if (!done && st.kk < n)
        return kt__fail(err, KT_ERR_INVALID, 0, "simulation: the task "
                        "graph has a cycle (%d of %d tasks can run)", st.kk,
                        n);
    *kept = st.kept;
    w->qpos_ok[1 - w->cur] = 1;
    w->qwait[1 - w->cur] = st.qwait;
    /* the step time: the latest end, first reached at top_at */
    wn->simulated = 1;
    N->sim.step_seconds = n ? st.top : 0;
    N->sim.ncritical = 0;
    if (n == 0) return KT_OK;
    w->crit_last[1 - w->cur] = kt__ps_task(w, st.top_at);
    return KT_OK;
}

/* The current timeline (kt__tl) made that of graph x's arrays, simulated
   in full there: every task in start order, its qpos from its
   predecessors' positions.  Free blocks for all of it were reserved. */
static void kt__plan_sim_tl_build(struct kt__plan_sim_work *w, int x) {
    const kt__tg *X = &w->tg[x];
    const struct kt__sim_work *xw = X->sim.work;
    kt__tl *tl = &w->tl;
    kt__tl_writer wr = {0, -1, 0};
    int n = kt__plan_sim_live(w, x, NULL), k, j, most = 0;
    for (k = 0; k < w->side[x].nslot; k++) tl->sp[k] = -1;
    for (k = 0; k < n; k++) {
        int t = xw->order[k], at = 0;
        const int *pred = X->sim.pred + xw->pred_first[t];
        for (j = 0; j < xw->npred[t]; j++)
            if (xw->pos[pred[j]] + 1 > at) at = xw->pos[pred[j]] + 1;
        if (k - at > most) most = k - at;
        kt__tl_put(tl, &wr, t, xw->dev[t], xw->start[t], xw->end[t], k - at);
    }
    kt__tl_finish(tl, &wr);
    w->qwait[x] = most;
    w->qpos_ok[x] = 1;
}

/* Free blocks for splicing the proposal's timeline into the current one
   (kt__plan_sim_commit, which cannot fail): one per KT__DBLOCK tasks of
   each stretch between its pieces -- all of it when it was simulated in
   full.  0: out of memory. */
static int kt__plan_sim_reserve_commit(struct kt__plan_sim_work *w) {
    int n = kt__plan_sim_live(w, 1 - w->cur, NULL), need = 0, k = 0, i;
    if (w->whole)
        return kt__tl_reserve(&w->tl, n / KT__DBLOCK + 1);
    for (i = 0; i < w->npc; i++) {
        need += (w->pc[i].nlo - k + KT__DBLOCK - 1) / KT__DBLOCK;
        k = w->pc[i].nhi;
    }
    need += (n - k + KT__DBLOCK - 1) / KT__DBLOCK;
    return kt__tl_reserve(&w->tl, need);
}

/* Accepting: the proposal's timeline becomes the current one -- its
   pieces stay where they are (each block's time offset moved), the
   stretches between them go into new blocks, the tasks gone leave the
   timeline, and the pieces' tasks that the run queued take their waits.
   Costs what the run simulated plus a pass over the blocks. */
static void kt__plan_sim_commit(struct kt__plan_sim_work *w) {
    const kt__tg *O = &w->tg[w->cur];
    const struct kt__sim_work *wn = w->tg[1 - w->cur].sim.work;
    const int *qn = w->qpos[1 - w->cur];
    kt__tl *tl = &w->tl;
    kt__tl_writer wr = {0, -1, 0};
    int n = kt__plan_sim_live(w, 1 - w->cur, NULL), k = 0, i, j;
    if (w->whole) {
        kt__plan_sim_tl_build(w, 1 - w->cur);
        return;
    }
    for (i = 0; i < w->nchg; i++) /* gone (an added task may take it) */
        for (j = O->base[w->chg[i]]; j < O->bend[w->chg[i]]; j++)
            tl->sp[j] = -1;
    for (i = 0; i <= w->npc; i++) {
        int to = i < w->npc ? w->pc[i].nlo : n;
        for (; k < to; k++) {
            int t = wn->order[k];
            kt__tl_put(tl, &wr, t, wn->dev[t], wn->start[t], wn->end[t],
                       k - qn[t]);
        }
        if (i == w->npc) break;
        kt__tl_keep(tl, &wr, w->pc[i].ilo, w->pc[i].ihi, w->pc[i].d);
        k = w->pc[i].nhi;
    }
    for (i = 0; i < w->nqov; i++) {
        int s = tl->sp[w->qov[2 * i]], b = s / KT__DBLOCK;
        tl->wait[s] = w->qov[2 * i + 1];
        if (tl->wait[s] > tl->bwait[b]) tl->bwait[b] = tl->wait[s];
    }
    kt__tl_finish(tl, &wr);
}

/* Graph x's timeline written out into its simulator's arrays -- order,
   pos, start, end, qpos and the device predecessors (derived from the
   order) of every live task -- for kt__plan_sim_publish (a pass over the
   tasks) and the tests: the current graph's from kt__tl; a pending
   proposal's, but for what its run wrote there already, from its
   pieces. */
static void kt__plan_sim_write_timeline(struct kt__plan_sim_work *w, int x) {
    const kt__tl *tl = &w->tl;
    struct kt__sim_work *xw = w->tg[x].sim.work;
    int *q = w->qpos[x], n = kt__plan_sim_live(w, x, NULL), i, j, k;
    int64_t r;
    if (x == w->cur || !w->whole) {
        int ipc = 0;
        for (i = x == w->cur ? 0 : -1; x == w->cur ? i < tl->nseq
                                                   : ipc < w->npc;) {
            int ilo = i, ihi = i + 1, dk = 0;
            double d = 0;
            if (x != w->cur) { /* a piece: several blocks, moved */
                ilo = w->pc[ipc].ilo;
                ihi = w->pc[ipc].ihi;
                dk = w->pc[ipc].nlo - w->pc[ipc].olo;
                d = w->pc[ipc].d;
                ipc++;
            } else {
                i++;
            }
            for (j = ilo; j < ihi; j++) {
                int b = tl->seq[j], s0 = b * KT__DBLOCK, m;
                for (m = 0; m < tl->cnt[b]; m++) {
                    int t = tl->ord[s0 + m];
                    k = tl->first[j] + m + dk;
                    xw->order[k] = t;
                    xw->pos[t] = k;
                    xw->start[t] = tl->start[s0 + m] + tl->toff[b] + d;
                    xw->end[t] = tl->end[s0 + m] + tl->toff[b] + d;
                    q[t] = k - tl->wait[s0 + m];
                }
            }
        }
        if (x != w->cur)
            for (i = 0; i < w->nqov; i++)
                q[w->qov[2 * i]] = xw->pos[w->qov[2 * i]] - w->qov[2 * i + 1];
    }
    for (r = 0; r < xw->nres; r++) xw->res_last[r] = -1;
    for (k = 0; k < n; k++) {
        int t = xw->order[k];
        xw->devprev[t] = xw->res_last[xw->dev[t]];
        xw->res_last[xw->dev[t]] = t;
    }
}

/* A mark base no entry of w->mark or w->cmark holds (both cleared when it
   wraps). */
static void kt__plan_sim_epoch(struct kt__plan_sim_work *w) {
    if (++w->mark_base == 0) {
        memset(w->mark, 0, sizeof(unsigned) * w->nt_init);
        memset(w->cmark, 0, sizeof(unsigned) * w->nt_init);
        w->mark_base = 1;
    }
}


/* The proposal's graph in the scratch slots (FlexFlow 6): re-synced with
   the current one, the new blocks written, the predecessor and successor
   lists that read them rebuilt -- after a relayout, and again from a
   full copy, when a block outgrows its slot (one relayout gives every
   block the room it needs).  *tick: the tick of its run times. */
static kt_status kt__plan_sim_splice(struct kt__plan_sim_work *w,
                                     double *tick, kt_error *err) {
    kt_status s;
    if (!kt__plan_sim_resync(w) || !kt__plan_sim_fit(w)) goto nomem;
    /* the links the new blocks use (numbered in order of first use) */
    w->tg[1 - w->cur].sim.nlink = w->c.links.n;
    if (!kt__sim_grow_work(&w->tg[1 - w->cur].sim)) goto nomem;
    kt__plan_sim_touch(w);
    *tick = kt__plan_sim_tick(w, w->tg[1 - w->cur].sim.work);
    kt__plan_sim_write_blocks(w);
    if ((s = kt__plan_sim_lists(w, *tick, err)) != KT_OK) return s;
    if (!kt__plan_sim_succ(w, 1 - w->cur)) goto nomem;
    return KT_OK;
nomem:
    return kt__plan_sim_failed(w, err, "updating the task graph");
}

/* The proposal's simulation: the splice, then the resumed run -- or, when
   the tick changes (every run time rounds anew), a full run. */
static kt_status kt__plan_sim_resume(struct kt__plan_sim_work *w,
                                     int *kept, kt_error *err) {
    double tick = 0;
    int k0;
    kt_status s;
    void *np;
    w->whole = 0;
    w->npc = w->nqov = 0;
    /* blocks left part-full by the splices: packed again when there are
       twice as many as needed (amortised over the accepts since) */
    if ((int64_t)w->tl.nseq * 4 >
        (int64_t)(w->tl.n / KT__DBLOCK + 1) * KT__TL_REPACK4 +
            4 * KT__TL_SLACK) {
        if (!kt__tl_repack(&w->tl))
            return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory "
                            "simulating");
        w->repacks++;
    }
    if ((s = kt__plan_sim_splice(w, &tick, err)) != KT_OK) return s;
    if (tick != w->tg[w->cur].sim.tick) {
        *kept = 0;
        w->resync_all = 1; /* every run time of the scratch graph changes */
        w->whole = 1;
        s = kt__plan_sim_full(w, 1 - w->cur, err);
    } else {
        if (!kt__plan_sim_bounds(w, &k0) || !kt__plan_sim_gone(w) ||
            !(np = kt__sim_grow(w->pc, &w->cap_pc, (size_t)w->tl.nseq + 1,
                                sizeof(kt__tl_piece))) ||
            !(w->pc = (kt__tl_piece *)np,
              np = kt__sim_grow(w->roslot, &w->cap_roslot,
                                (size_t)w->tg[1 - w->cur].sim.work->nres + 1,
                                sizeof(int))))
            return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory simulating");
        w->roslot = (int *)np;
        kt__plan_sim_epoch(w);
        s = kt__plan_sim_run(w, k0, kept, err);
    }
    if (s == KT_OK && !kt__plan_sim_reserve_commit(w))
        s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory simulating");
    return s;
}

void kt_plan_sim_timeline(kt_plan_sim *ps) {
    struct kt__plan_sim_work *w = ps ? ps->work : NULL;
    if (!w) return;
    kt__plan_sim_publish(w, w->cur);
    if (w->pending) kt__plan_sim_publish(w, 1 - w->cur);
}

kt_status kt_plan_sim_propose(kt_plan_sim *ps, const kt_plan *next,
                              kt_error *err) {
    struct kt__plan_sim_work *w = ps ? ps->work : NULL;
    const kt_graph *g;
    kt_plan *np;
    kt_status s;
    if (!w) return kt__fail(err, KT_ERR_INVALID, 0, "kt_plan_sim_propose: "
                            "not initialised");
    g = w->c.g;
    ps->proposed = NULL;
    w->pending = 0;
    if ((s = kt__plan_check(g, next, err)) != KT_OK) return s;
    if (!kt__same_factors(&next->f, &ps->plan->f))
        return kt__fail(err, KT_ERR_INVALID, 0, "kt_plan_sim_propose: the "
                        "plan has other cut factors than the current one");
    np = &w->plan[1 - w->cur];
    memcpy(np->tiling, next->tiling, sizeof(kt_tiling) * (size_t)g->ntensor);
    memcpy(np->split, next->split, sizeof(int) * (size_t)g->nop * KT_MAX_CUTS);
    w->pub_ok[1 - w->cur] = 0;
    w->crit_last[1 - w->cur] = -1;
    kt__plan_sim_diff(w, g, ps->plan, np);
    s = kt__plan_sim_stage(w, np, err);
    if (s == KT_OK) s = kt__plan_sim_resume(w, &ps->kept, err);
    kt__plan_sim_untouch(w);
    if (s == KT_OK && !kt__plan_sim_pub_room(w, 1 - w->cur))
        s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory simulating");
    if (s != KT_OK) return s;
    w->pending = 1;
    ps->proposed = &w->pub[1 - w->cur];
    kt__ok(err);
    return KT_OK;
}

/* The Metropolis rule (FlexFlow 6.1, Eq. 2) on the relative change of the
   step time: a proposal no slower is accepted, a slower one with
   probability exp(-beta (next - cur) / cur).  Relative, so that one beta
   suits steps of microseconds and of seconds. */
static int kt__mcmc_accepts(double cur, double next, double beta,
                            uint64_t *rng) {
    return next <= cur || kt__rng_unit(rng) < exp(-beta * (next - cur) / cur);
}

/* The default beta: KT_MCMC_BETA_PER_OP per op.  A single move changes
   one op's conversions, about 1/ops of a step, so a beta fixed for all
   graphs makes the chain on a big graph a random walk (it accepts
   nearly every move, worse or not) and on a small one a greedy descent;
   per op, a typical move is accepted as often on any graph. */
static double kt__mcmc_default_beta(const kt_graph *g) {
    return KT_MCMC_BETA_PER_OP * (double)g->nop;
}

/* FlexFlow 6.2's second reason to leave an initial strategy: its chain
   "cannot further improve the best discovered strategy for half of the
   search time" -- here counted in proposals (so that a seed and a
   proposal budget still fix the plan): the chain's best was last
   improved at least half of its `step` proposals ago.  The chain's own
   best, not the search's: a chain from a random plan starts far behind
   and would be left before it could catch up.  Not before the chain has
   had `least` proposals, about one per op and tensor, so that a start
   is not left before most of the plan was proposed a change. */
static int kt__mcmc_stalled(int64_t step, int64_t improved_at,
                            int64_t least) {
    return step >= least && step - improved_at >= step - step / 2;
}

/* The plan chain `chain` starts from (FlexFlow 6.2: "existing strategies
   ... as well as randomly generated strategies"): the caller's start
   plan or data parallelism (the DP plan where it does not apply) for the
   first, a random plan -- every op proposed once from data parallelism
   -- for the others.  *origin (when not NULL) says which. */
static kt_status kt__mcmc_start(const kt_graph *g, const kt_factors *f,
                                const kt_mcmc_options *o, const kt_machine *m,
                                int chain, uint64_t *rng, kt_plan *cur,
                                kt_mcmc_origin *origin, kt_error *err) {
    kt_search_options so;
    kt_status s;
    int op;
    if (chain == 0 && o->start) {
        if ((s = kt__plan_check(g, o->start, err)) != KT_OK) return s;
        if (!kt__same_factors(&o->start->f, f))
            return kt__fail(err, KT_ERR_INVALID, 0, "mcmc: the start plan "
                            "has other cut factors than the search");
        if (origin) *origin = KT_MCMC_FROM_START;
        return kt__plan_copy(cur, o->start, g, err);
    }
    memset(&so, 0, sizeof so);
    so.machine = m;
    so.strategy = KT_STRATEGY_DATA;
    if (origin) *origin = KT_MCMC_FROM_DATA;
    if ((s = kt_plan_search(g, f, &so, cur, err)) != KT_OK) {
        if (s == KT_ERR_NOMEM) return s; /* not "does not apply" */
        so.strategy = KT_STRATEGY_DP;
        if (origin) *origin = KT_MCMC_FROM_DP;
        if ((s = kt_plan_search(g, f, &so, cur, err)) != KT_OK) return s;
    }
    if (chain > 0)
        for (op = 0; op < g->nop; op++) (void)kt__propose(g, cur, op, rng);
    return KT_OK;
}

/* One proposal (FlexFlow 6.2) into `next`, a copy of the current plan:
   half of the time a random op's random configuration, half of the time
   a random tensor's random tiling.  0: the op drawn cannot take the
   configuration drawn (nothing to price). */
static int kt__mcmc_propose(const kt_graph *g, const kt_plan *cur,
                            kt_plan *next, uint64_t *rng) {
    int x;
    memcpy(next->tiling, cur->tiling, sizeof(kt_tiling) * (size_t)g->ntensor);
    memcpy(next->split, cur->split,
           sizeof(int) * (size_t)g->nop * KT_MAX_CUTS);
    if (kt__rng(rng) & 1) {
        x = (int)(kt__rng(rng) % (uint64_t)g->nop);
        return kt__propose(g, next, x, rng);
    }
    x = (int)(kt__rng(rng) % (uint64_t)g->ntensor);
    return kt__propose_tensor(g, next, x, rng);
}

/* The search's state across chains: the best plan seen and the counts. */
typedef struct kt__mcmc_run {
    const kt_graph *g;
    kt_plan *best;
    double best_time; /* < 0: none yet */
    int64_t tried, accepted;
} kt__mcmc_run;

/* The plan priced last becomes the best when it is faster than the best
   seen (strictly: among equals the first found stays). */
static kt_status kt__mcmc_keep(kt__mcmc_run *r, const kt_plan *p,
                               double seconds, kt_error *err) {
    kt_status s;
    if (r->best_time >= 0 && !(seconds < r->best_time)) return KT_OK;
    kt_plan_free(r->best);
    r->best_time = -1;
    if ((s = kt__plan_copy(r->best, p, r->g, err)) == KT_OK)
        r->best_time = seconds;
    return s;
}

/* One chain (FlexFlow 6): from ps's plan, propose and accept by the
   Metropolis rule until `budget` proposals (0: no limit) or the clock
   (KT_CLOCK, CPU time by default) passes `deadline` (0: none) or the
   chain stalls.  `next` is a plan of the graph's shape, scratch. */
static kt_status kt__mcmc_chain(kt__mcmc_run *r, kt_plan_sim *ps,
                                kt_plan *next, const kt_mcmc_options *o,
                                int64_t budget, double deadline,
                                uint64_t *rng, kt_error *err) {
    const kt_graph *g = r->g;
    double cur = ps->current->step_seconds, chain_best = cur, nt;
    int64_t step, improved_at = 0, least = g->nop + g->ntensor;
    kt_status s;
    for (step = 0;; step++) {
        if ((budget && step >= budget) ||
            (deadline > 0 && kt__now() > deadline) ||
            kt__mcmc_stalled(step, improved_at, least))
            return KT_OK;
        r->tried++;
        if (!kt__mcmc_propose(g, ps->plan, next, rng)) continue;
        if ((s = kt_plan_sim_propose(ps, next, err)) != KT_OK) return s;
        nt = ps->proposed->step_seconds;
        if (!kt__mcmc_accepts(cur, nt, o->beta, rng)) continue;
        kt_plan_sim_accept(ps);
        cur = nt;
        r->accepted++;
        if (cur < chain_best) {
            chain_best = cur;
            improved_at = step + 1;
        }
        if ((s = kt__mcmc_keep(r, ps->plan, cur, err)) != KT_OK) return s;
    }
}

static kt_status kt__plan_mcmc(const kt_graph *g, const kt_factors *f,
                               const kt_topology *t,
                               const kt_mcmc_options *opt, kt_plan *p,
                               kt_mcmc_result *result, kt_error *err) {
    kt_mcmc_options o;
    kt_mcmc_result res;
    kt_machine m;
    kt_plan cur, next;
    kt_plan_sim ps;
    kt__mcmc_run r;
    double start = kt__now();
    uint64_t rng;
    int chain;
    kt_status s = KT_OK;
    memset(&o, 0, sizeof o);
    memset(&next, 0, sizeof next);
    if (opt) o = *opt;
    memset(&res, 0, sizeof res);
    if (!p) return kt__fail(err, KT_ERR_INVALID, 0, "mcmc: no plan (NULL)");
    memset(p, 0, sizeof *p);
    if ((s = kt__graph_check_final(g, err)) != KT_OK) return s;
    if (!t) return kt__fail(err, KT_ERR_INVALID, 0, "mcmc: no topology "
                            "(NULL)");
    /* a NaN passes every "<= 0" test below: as a budget it would end
       only by stalling, as a beta it would accept no slower plan; an
       infinite time budget is no budget either (an infinite beta is a
       greedy chain, and allowed).  Below 0 is a mistake, not "the
       default", which is 0. */
    if (!(o.beta >= 0))
        return kt__fail(err, KT_ERR_INVALID, 0, "mcmc: beta %g; give a "
                        "number >= 0 (0: the default)", o.beta);
    if (!(o.seconds < HUGE_VAL && o.seconds >= 0))
        return kt__fail(err, KT_ERR_INVALID, 0, "mcmc: the seconds budget "
                        "%g is not a finite number >= 0", o.seconds);
    if (o.proposals < 0 || o.restarts < 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "mcmc: %lld proposals and "
                        "%d restarts; neither may be negative (0: the "
                        "default)", (long long)o.proposals, o.restarts);
    if (o.restarts == 0) o.restarts = 2;
    if (o.beta == 0) o.beta = kt__mcmc_default_beta(g);
    if (o.seconds == 0 && o.proposals == 0) o.proposals = 1000;
    rng = o.seed ? o.seed : UINT64_C(0x9e3779b97f4a7c15);
    if ((s = kt_factors_check(f, err)) != KT_OK) return s;
    if (kt_factors_devices(f) != t->ndev)
        return kt__fail(err, KT_ERR_INVALID, 0, "mcmc: the topology has %lld "
                        "devices, the factors %lld", (long long)t->ndev,
                        (long long)kt_factors_devices(f));
    if (g->nop == 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "mcmc: the graph has no ops");
    if ((s = kt__topology_usable(t, err)) != KT_OK) return s;
    m = kt_topology_machine(t);
    r.g = g;
    r.best = p;
    r.best_time = -1;
    r.tried = r.accepted = 0;
    for (chain = 0; chain < o.restarts && s == KT_OK; chain++) {
        /* each chain an equal share of what is left (what a stalled
           chain leaves goes to the chains after it); the first chain
           always runs, so that there is a best plan */
        int left = o.restarts - chain;
        int64_t budget = 0;
        double deadline = 0, now = kt__now();
        if (o.proposals) {
            int64_t rest = o.proposals - r.tried; /* (rounded up without
                                                     overflowing) */
            if (chain > 0 && rest <= 0) break;
            budget = rest / left + (rest % left != 0);
        }
        if (o.seconds > 0) {
            if (chain > 0 && now >= start + o.seconds) break;
            deadline = now + (start + o.seconds - now) / left;
        }
        /* (a later chain starts from a randomised plan: only the first
           chain's start is reported) */
        s = kt__mcmc_start(g, f, &o, &m, chain, &rng, &cur,
                           chain == 0 ? &res.first_start : NULL, err);
        if (s != KT_OK) break;
        /* the chain's task graph, updated by every proposal (delta
           simulation, FlexFlow 5.3) */
        s = kt_plan_sim_init(g, &cur, t, &ps, err);
        kt_plan_free(&cur);
        if (s != KT_OK) break;
        if (!next.tiling) s = kt__plan_copy(&next, ps.plan, g, err);
        if (s == KT_OK)
            s = kt__mcmc_keep(&r, ps.plan, ps.current->step_seconds, err);
        if (s == KT_OK)
            s = kt__mcmc_chain(&r, &ps, &next, &o, budget, deadline, &rng,
                               err);
        kt_plan_sim_free(&ps);
        /* a failed chain ends the search: the next chain's start would
           hide its error */
    }
    kt_plan_free(&next);
    if (s == KT_OK) s = kt_plan_eval(g, p, err);
    if (s != KT_OK) {
        kt_plan_free(p);
        return s;
    }
    p->memory_bytes = kt_plan_memory(g, p);
    /* step_seconds is the modelled step, as kt_plan_search's plans have
       it, so that plans of any search compare in one field; the
       simulated step, what this search minimised, is the result's */
    p->step_seconds = kt_plan_step_seconds(g, p, &m);
    p->search_seconds = kt__now() - start;
    res.step_seconds = r.best_time;
    res.tried = r.tried;
    res.accepted = r.accepted;
    res.chains = chain; /* (the loop breaks before a chain it cannot run) */
    if (result) *result = res;
    kt__ok(err);
    return KT_OK;
}

/* Refining a plan in place (opt->start == p) is allowed: the search
   starts from a copy of the caller's plan, which takes p's place only
   when the search succeeds (p is cleared before anything is read). */
kt_status kt_plan_mcmc(const kt_graph *g, const kt_factors *f,
                       const kt_topology *t, const kt_mcmc_options *opt,
                       kt_plan *p, kt_mcmc_result *result, kt_error *err) {
    kt_mcmc_options o;
    kt_plan start;
    kt_status s;
    if (!p) return kt__fail(err, KT_ERR_INVALID, 0, "mcmc: no plan (NULL)");
    if (!opt || opt->start != p)
        return kt__plan_mcmc(g, f, t, opt, p, result, err);
    o = *opt;
    start = *p; /* its arrays, moved out of p */
    o.start = &start;
    s = kt__plan_mcmc(g, f, t, &o, p, result, err);
    if (s == KT_OK) kt_plan_free(&start);
    else *p = start; /* (the failed search left p freed) */
    return s;
}

/* ---------------------------------------------- gradient synchronisation */

/* Table 3.4's counts are sizes and node counts: anything else has no
   answer, which a double says as NaN. */
static int kt__sync_counts_ok(int64_t m, int64_t n, int64_t k, int64_t p1,
                              int64_t p2) {
    return m >= 0 && n >= 0 && k >= 0 && p1 >= 1 && p2 >= 1;
}

double kt_sync_ps_worker(int64_t m, int64_t n) {
    if (!kt__sync_counts_ok(m, n, 0, 1, 1)) return NAN;
    return 2.0 * (double)m * (double)n;
}

double kt_sync_ps_server(int64_t m, int64_t n, int64_t p1, int64_t p2) {
    if (!kt__sync_counts_ok(m, n, 0, p1, p2)) return NAN;
    return 2.0 * (double)p1 * (double)m * (double)n / (double)p2;
}

double kt_sync_ps_both(int64_t m, int64_t n, int64_t p1, int64_t p2) {
    if (!kt__sync_counts_ok(m, n, 0, p1, p2)) return NAN;
    return 2.0 * (double)m * (double)n * ((double)p1 + (double)p2 - 2) /
           (double)p2; /* (in doubles: int64 sums can overflow) */
}

double kt_sync_sfb(int64_t m, int64_t n, int64_t k, int64_t p1) {
    if (!kt__sync_counts_ok(m, n, k, p1, 1)) return NAN;
    return 2.0 * (double)k * ((double)p1 - 1) * ((double)m + (double)n);
}

double kt_sync_collective(kt_collective c, double bytes, int64_t w,
                          double bandwidth, double phi, double delta) {
    double times;
    /* (written so that NaN arguments fail too) */
    if ((unsigned)c > (unsigned)KT_REDUCE || w < 1 || !(bandwidth > 0) ||
        !(bytes >= 0) || !(phi >= 0) ||
        !(delta >= 0) || isinf(bytes))
        return NAN;
    switch (c) {
    case KT_ALLREDUCE: times = 2.0 * (double)(w - 1) / (double)w; break;
    case KT_REDUCESCATTER:
    case KT_ALLGATHER: times = (double)(w - 1) / (double)w; break;
    default: times = 1; break; /* broadcast, reduce */
    }
    return times * bytes / bandwidth + (double)w * phi + delta;
}

/* ---------------------------------------------- gradient-sync schedules */

/* NaN and the infinities fail: x - x is then NaN, never 0. */
static int kt__sync_finite(double x) { return x - x == 0; }

static int kt__sync_nonneg(double x) { return kt__sync_finite(x) && x >= 0; }

kt_sync_method kt_sync_best_method(int64_t m, int64_t n, int64_t k,
                                   int64_t p1, int64_t p2) {
    /* Zhang thesis Algorithm 2, line 7: the bytes of a node that is both
       a worker and a server shard (Table 3.4) against SFB's */
    if (m <= 0 || n <= 0) return KT_SYNC_PS;
    return kt_sync_sfb(m, n, k, p1) <= kt_sync_ps_both(m, n, p1, p2)
               ? KT_SYNC_SFB
               : KT_SYNC_PS;
}

/* Every number a layer's sync time depends on; the message names the
   layer (0 = the first in backward order) and the field. */
static kt_status kt__sync_check(const kt_sync_layer *l, int i,
                                kt_error *err) {
    int fc = l->m != 0 || l->n != 0;
    if (!kt__sync_nonneg(l->backward_seconds))
        return kt__fail(err, KT_ERR_INVALID, 0, "sync layer %d: backward time "
                        "%g s is not a finite number >= 0", i,
                        l->backward_seconds);
    if (!kt__sync_nonneg(l->bytes))
        return kt__fail(err, KT_ERR_INVALID, 0, "sync layer %d: gradient "
                        "size %g bytes is not a finite number >= 0", i,
                        l->bytes);
    if (l->bytes == 0) return KT_OK; /* it sends nothing: nothing else used */
    if ((int)l->method < KT_SYNC_ALLREDUCE || l->method > KT_SYNC_ADAPTIVE)
        return kt__fail(err, KT_ERR_INVALID, 0, "sync layer %d: unknown sync "
                        "method %d", i, (int)l->method);
    if (l->workers < 1)
        return kt__fail(err, KT_ERR_INVALID, 0, "sync layer %d: %lld workers; "
                        "at least 1 is needed", i, (long long)l->workers);
    if (!kt__sync_finite(l->bandwidth) || l->bandwidth <= 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "sync layer %d: bandwidth %g "
                        "bytes/s is not positive and finite", i, l->bandwidth);
    if (!kt__sync_nonneg(l->phi) || !kt__sync_nonneg(l->delta))
        return kt__fail(err, KT_ERR_INVALID, 0, "sync layer %d: phi %g s and "
                        "delta %g s must be finite numbers >= 0", i, l->phi,
                        l->delta);
    if ((l->method == KT_SYNC_PS || l->method == KT_SYNC_ADAPTIVE) &&
        (l->servers < 1 || l->servers > l->workers))
        return kt__fail(err, KT_ERR_INVALID, 0, "sync layer %d: %lld servers; "
                        "a parameter server needs 1 to %lld (one shard per "
                        "worker node at most)", i, (long long)l->servers,
                        (long long)l->workers);
    if ((l->method == KT_SYNC_SFB || (l->method == KT_SYNC_ADAPTIVE && fc)) &&
        (l->m < 1 || l->n < 1 || l->k < 1))
        return kt__fail(err, KT_ERR_INVALID, 0, "sync layer %d: SFB needs an "
                        "m x n layer and batch k >= 1 (got %lld x %lld, k = "
                        "%lld)", i, (long long)l->m, (long long)l->n,
                        (long long)l->k);
    return KT_OK;
}

static kt_sync_method kt__sync_resolve(const kt_sync_layer *l) {
    if (l->method != KT_SYNC_ADAPTIVE) return l->method;
    return kt_sync_best_method(l->m, l->n, l->k, l->workers, l->servers);
}

/* A layer's sync time as wire time plus overhead.  Table 3.4 counts what a
   node sends plus what it receives, and the two directions of a link run
   at once (Eq. 8.2: pushing gradients and pulling parameters "cost the
   same amount of time"), so the busiest node's wire time is half its
   count's bytes over the bandwidth.  With servers on worker nodes the
   busiest node is one holding a shard ("server & worker").  Overheads:
   Eq. 8.3's w phi + delta for the ring; Eq. 8.2's phi per remote peer
   plus delta for PS, and the same for SFB's peers. */
static void kt__sync_cost(const kt_sync_layer *l, kt_sync_method m,
                          double *wire, double *overhead) {
    double peers = (double)(l->workers - 1);
    if (m == KT_SYNC_ALLREDUCE) {
        *wire = kt_sync_collective(KT_ALLREDUCE, l->bytes, l->workers,
                                   l->bandwidth, 0, 0);
        *overhead = (double)l->workers * l->phi + l->delta;
        return;
    }
    if (m == KT_SYNC_SFB) {
        double elem = l->bytes / ((double)l->m * (double)l->n);
        *wire = 0.5 * kt_sync_sfb(l->m, l->n, l->k, l->workers) * elem /
                l->bandwidth;
    } else { /* the PS count is linear in MN: per gradient byte */
        *wire = 0.5 * kt_sync_ps_both(1, 1, l->workers, l->servers) *
                l->bytes / l->bandwidth;
    }
    *overhead = peers * l->phi + l->delta;
}

/* Finite inputs can still give an infinite time (1e300 bytes at 1 byte
   a second): refused, naming the layer, rather than summed into a
   schedule whose times mean nothing. */
static kt_status kt__sync_time_ok(const kt_sync_layer *l, int i, double wire,
                                  double overhead, kt_error *err) {
    if (kt__sync_finite(wire + overhead)) return KT_OK;
    return kt__fail(err, KT_ERR_INVALID, 0, "sync layer %d: its sync time "
                    "overflows (%g bytes at %g bytes/s, phi %g s)", i,
                    l->bytes, l->bandwidth, l->phi);
}

kt_status kt_sync_layer_seconds(const kt_sync_layer *layer,
                                kt_sync_method *used, double *wire,
                                double *overhead, kt_error *err) {
    kt_sync_method m;
    kt_status s;
    double w = 0, o = 0;
    if (!layer || !wire || !overhead)
        return kt__fail(err, KT_ERR_INVALID, 0, "sync: no layer or no place "
                        "for its times");
    if ((s = kt__sync_check(layer, 0, err)) != KT_OK) return s;
    m = layer->bytes > 0 ? kt__sync_resolve(layer) : layer->method;
    if (layer->bytes > 0) {
        kt__sync_cost(layer, m, &w, &o);
        if ((s = kt__sync_time_ok(layer, 0, w, o, err)) != KT_OK)
            return s; /* (the outputs untouched, as on every error) */
    }
    if (used) *used = m;
    *wire = w;
    *overhead = o;
    kt__ok(err);
    return KT_OK;
}

/* Gradients can share a bucket (one message, one overhead) only when they
   go the same way: one method over the same workers, servers and links
   (AutoSync merges collectives of one group, 7.6.3). */
static int kt__sync_same_channel(const kt_sync_layer *a, kt_sync_method ma,
                                 const kt_sync_layer *b, kt_sync_method mb) {
    return ma == mb && a->workers == b->workers &&
           (ma != KT_SYNC_PS || a->servers == b->servers) &&
           a->bandwidth == b->bandwidth && a->phi == b->phi &&
           a->delta == b->delta;
}

/* The layers that send something, in backward order, with their wire
   time, overhead and bucket. */
typedef struct kt__sync_work {
    int nsend;
    int *layer;
    double *wire, *overhead;
    int *group;
} kt__sync_work;

static void kt__sync_work_free(kt__sync_work *w) {
    KT_FREE(w->layer);
    KT_FREE(w->wire);
    KT_FREE(w->overhead);
    KT_FREE(w->group);
}

void kt_sync_schedule_free(kt_sync_schedule *s) {
    if (!s) return;
    KT_FREE(s->ready);
    KT_FREE(s->start);
    KT_FREE(s->end);
    KT_FREE(s->bucket);
    KT_FREE(s->method);
    memset(s, 0, sizeof *s);
}

/* Checks the layers, allocates the schedule and fills what does not depend
   on the buckets: each layer's method and ready time (the backward is one
   chain, b^L first: 3.2.1's C_t), and the senders. */
static kt_status kt__sync_begin(const kt_sync_layer *layers, int n,
                                kt_sync_schedule *out, kt__sync_work *w,
                                kt_error *err) {
    int i;
    kt_status s = KT_OK;
    double clock = 0;
    memset(w, 0, sizeof *w);
    if (!out) return kt__fail(err, KT_ERR_INVALID, 0, "sync: no schedule");
    memset(out, 0, sizeof *out);
    if (n < 0 || (n > 0 && !layers))
        return kt__fail(err, KT_ERR_INVALID, 0, "sync: %d layers%s", n,
                        n > 0 ? " but no array" : "");
    for (i = 0; i < n; i++)
        if ((s = kt__sync_check(&layers[i], i, err)) != KT_OK) return s;
    out->nlayers = n;
    out->ready = (double *)kt__calloc((size_t)n + 1, sizeof(double));
    out->start = (double *)kt__calloc((size_t)n + 1, sizeof(double));
    out->end = (double *)kt__calloc((size_t)n + 1, sizeof(double));
    out->bucket = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    out->method = (kt_sync_method *)kt__calloc((size_t)n + 1,
                                               sizeof(kt_sync_method));
    w->layer = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    w->wire = (double *)kt__calloc((size_t)n + 1, sizeof(double));
    w->overhead = (double *)kt__calloc((size_t)n + 1, sizeof(double));
    w->group = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    if (!out->ready || !out->start || !out->end || !out->bucket ||
        !out->method || !w->layer || !w->wire || !w->overhead || !w->group) {
        kt_sync_schedule_free(out);
        kt__sync_work_free(w);
        return kt__fail(err, KT_ERR_NOMEM, 0, "sync: out of memory for %d "
                        "layers", n);
    }
    for (i = 0; i < n && s == KT_OK; i++) {
        const kt_sync_layer *l = &layers[i];
        clock += l->backward_seconds;
        out->ready[i] = clock;
        out->method[i] = l->bytes > 0 ? kt__sync_resolve(l) : l->method;
        if (!kt__sync_finite(clock))
            s = kt__fail(err, KT_ERR_INVALID, 0, "sync layer %d: the "
                         "backward pass's time overflows there", i);
        else if (l->bytes > 0) {
            int k = w->nsend++;
            w->layer[k] = i;
            kt__sync_cost(l, out->method[i], &w->wire[k], &w->overhead[k]);
            s = kt__sync_time_ok(l, i, w->wire[k], w->overhead[k], err);
        }
    }
    if (s != KT_OK) {
        kt_sync_schedule_free(out);
        kt__sync_work_free(w);
        return s;
    }
    out->backward_seconds = clock;
    return KT_OK;
}

/* The network sends one bucket at a time, in order (3.2.2: the syncs s^l
   of the layers are serialised).  A bucket starts when its last layer's
   gradient exists -- or, traditionally, when the whole backward is done
   (Figure 3.3 top) -- and the bucket before it is through; it takes its
   layers' wire times plus one overhead. */
static void kt__sync_serialise(const kt__sync_work *w, int after_backward,
                               kt_sync_schedule *out) {
    int i = 0, j, b = 0;
    double network_free = 0;
    for (j = 0; j < out->nlayers; j++) {
        out->start[j] = out->end[j] = out->ready[j];
        out->bucket[j] = -1;
    }
    while (i < w->nsend) {
        int last = i;
        double dur = w->overhead[i], ready, start;
        while (last + 1 < w->nsend && w->group[last + 1] == w->group[i])
            last++;
        for (j = i; j <= last; j++) dur += w->wire[j];
        ready = after_backward ? out->backward_seconds
                               : out->ready[w->layer[last]];
        start = ready > network_free ? ready : network_free;
        network_free = start + dur;
        for (j = i; j <= last; j++) {
            out->start[w->layer[j]] = start;
            out->end[w->layer[j]] = network_free;
            out->bucket[w->layer[j]] = b;
        }
        out->network_seconds += dur;
        b++;
        i = last + 1;
    }
    out->nbuckets = b;
    out->total_seconds = network_free > out->backward_seconds
                             ? network_free
                             : out->backward_seconds;
}

/* Each layer's times are finite, but the network's sum of them can
   still overflow. */
static kt_status kt__sync_total_ok(const kt_sync_schedule *out,
                                   kt_error *err) {
    if (kt__sync_finite(out->total_seconds) &&
        kt__sync_finite(out->network_seconds))
        return KT_OK;
    return kt__fail(err, KT_ERR_INVALID, 0, "sync: the schedule's times "
                    "overflow (network %g s, total %g s)",
                    out->network_seconds, out->total_seconds);
}

/* Fixed-size fusion (Horovod's, AutoSync Table 7.1 and 7.6.3): walking
   the gradients in backward order, a bucket takes the next one while its
   bytes stay within the cap and it goes the same way; a gradient larger
   than the cap is a bucket of its own. */
static void kt__sync_greedy(const kt_sync_layer *layers,
                            const kt_sync_schedule *out, kt__sync_work *w,
                            double cap) {
    int i, g = -1;
    double size = 0;
    for (i = 0; i < w->nsend; i++) {
        int l = w->layer[i];
        if (g < 0 || size + layers[l].bytes > cap ||
            !kt__sync_same_channel(&layers[w->layer[i - 1]],
                                   out->method[w->layer[i - 1]], &layers[l],
                                   out->method[l])) {
            g++;
            size = 0;
        }
        size += layers[l].bytes;
        w->group[i] = g;
    }
}

/* The contiguous partition of least completion time.  AutoSync leaves
   the merge scheme to search (7.6.3: "an NP problem, explored in Chapter
   8"; 8.3.2 samples groups under the adjacent-merging constraint); with
   buckets of adjacent gradients it is a DP, and an exact one:
     done[j] = the earliest the network is through with senders 0..j-1
             = min over the last bucket [i, j) of
               max(ready of sender j-1, done[i]) + sync time of [i, j).
   A bucket never ends earlier when the one before it ends later, so the
   best partition of a prefix is the one that ends it earliest; among
   those, the first found: the smallest last bucket. O(n^2). */
static kt_status kt__sync_optimal(const kt_sync_layer *layers,
                                  const kt_sync_schedule *out,
                                  kt__sync_work *w, kt_error *err) {
    int n = w->nsend, i, j, g, count = 0;
    double *done = (double *)kt__calloc((size_t)n + 1, sizeof(double));
    int *from = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    if (!done || !from) {
        KT_FREE(done);
        KT_FREE(from);
        return kt__fail(err, KT_ERR_NOMEM, 0, "sync: out of memory");
    }
    for (j = 1; j <= n; j++) {
        int last = w->layer[j - 1];
        double wire = 0, ready = out->ready[last];
        from[j] = j - 1;
        done[j] = -1;
        for (i = j - 1; i >= 0; i--) {
            double t;
            /* one channel per bucket: equality of fields, so comparing
               with the last sender is enough */
            if (!kt__sync_same_channel(&layers[w->layer[i]],
                                       out->method[w->layer[i]],
                                       &layers[last], out->method[last]))
                break;
            wire += w->wire[i];
            t = (ready > done[i] ? ready : done[i]) + w->overhead[i] + wire;
            if (done[j] < 0 || t < done[j]) {
                done[j] = t;
                from[j] = i;
            }
        }
    }
    for (j = n; j > 0; j = from[j]) count++;
    for (j = n, g = count - 1; j > 0; j = from[j], g--)
        for (i = from[j]; i < j; i++) w->group[i] = g;
    KT_FREE(done);
    KT_FREE(from);
    return KT_OK;
}

kt_status kt_sync_schedule_run(const kt_sync_layer *layers, int n,
                               kt_sync_mode mode, double bucket_bytes,
                               kt_sync_schedule *out, kt_error *err) {
    kt__sync_work w;
    kt_status s;
    int i;
    if (out) memset(out, 0, sizeof *out);
    if ((int)mode < KT_SYNC_TRADITIONAL || mode > KT_SYNC_BUCKET_OPTIMAL)
        return kt__fail(err, KT_ERR_INVALID, 0, "sync: unknown mode %d",
                        (int)mode);
    if (mode == KT_SYNC_BUCKET && !(bucket_bytes > 0)) /* NaN fails too */
        return kt__fail(err, KT_ERR_INVALID, 0, "sync: bucket size %g bytes "
                        "is not positive", bucket_bytes);
    if ((s = kt__sync_begin(layers, n, out, &w, err)) != KT_OK) return s;
    if (mode == KT_SYNC_BUCKET)
        kt__sync_greedy(layers, out, &w, bucket_bytes);
    else if (mode == KT_SYNC_BUCKET_OPTIMAL)
        s = kt__sync_optimal(layers, out, &w, err);
    else
        for (i = 0; i < w.nsend; i++) w.group[i] = i; /* a sync per layer */
    if (s == KT_OK) {
        kt__sync_serialise(&w, mode == KT_SYNC_TRADITIONAL, out);
        s = kt__sync_total_ok(out, err);
    }
    kt__sync_work_free(&w);
    if (s != KT_OK) {
        kt_sync_schedule_free(out);
        return s;
    }
    kt__ok(err);
    return KT_OK;
}

kt_status kt_sync_schedule_buckets(const kt_sync_layer *layers, int n,
                                   const int *bucket, kt_sync_schedule *out,
                                   kt_error *err) {
    kt__sync_work w;
    kt_status s;
    int i;
    if (out) memset(out, 0, sizeof *out);
    if (n > 0 && !bucket)
        return kt__fail(err, KT_ERR_INVALID, 0, "sync: no bucket array");
    if ((s = kt__sync_begin(layers, n, out, &w, err)) != KT_OK) return s;
    for (i = 0; i < w.nsend && s == KT_OK; i++) {
        int l = w.layer[i], b = bucket[l];
        int prev = i ? bucket[w.layer[i - 1]] : -1;
        w.group[i] = b;
        /* (the first sender's bucket is 0: a -1 there is no "same bucket"
           as a sender before it) */
        if (i == 0 && b != 0)
            s = kt__fail(err, KT_ERR_INVALID, 0, "sync layer %d: the first "
                         "layer that sends is in bucket %d, not 0; buckets "
                         "are contiguous and numbered 0, 1, 2, ... in "
                         "backward order", l, b);
        else if (b != prev && b != prev + 1)
            s = kt__fail(err, KT_ERR_INVALID, 0, "sync layer %d: bucket %d "
                         "after bucket %d; buckets are contiguous and "
                         "numbered 0, 1, 2, ... in backward order", l, b,
                         prev);
        else if (b == prev &&
                 !kt__sync_same_channel(&layers[w.layer[i - 1]],
                                        out->method[w.layer[i - 1]],
                                        &layers[l], out->method[l]))
            s = kt__fail(err, KT_ERR_INVALID, 0, "sync layer %d: its bucket "
                         "%d mixes methods, workers or links", l, b);
    }
    if (s == KT_OK) {
        kt__sync_serialise(&w, 0, out);
        s = kt__sync_total_ok(out, err);
    }
    kt__sync_work_free(&w);
    if (s != KT_OK) {
        kt_sync_schedule_free(out);
        return s;
    }
    kt__ok(err);
    return KT_OK;
}

kt_status kt_sync_best_bucket(const kt_sync_layer *layers, int n,
                              const double *candidates, int ncand,
                              double *best_bytes, kt_sync_schedule *out,
                              kt_error *err) {
    kt_sync_schedule cur;
    int i;
    if (!out) return kt__fail(err, KT_ERR_INVALID, 0, "sync: no schedule");
    memset(out, 0, sizeof *out);
    if (ncand < 1 || !candidates)
        return kt__fail(err, KT_ERR_INVALID, 0, "sync: no bucket sizes to "
                        "try");
    for (i = 0; i < ncand; i++) {
        kt_status s = kt_sync_schedule_run(layers, n, KT_SYNC_BUCKET,
                                           candidates[i], &cur, err);
        if (s != KT_OK) {
            char why[sizeof err->message];
            kt_sync_schedule_free(out);
            if (err) {
                memcpy(why, err->message, sizeof why);
                kt__fail(err, s, 0, "sync: bucket size %d of %d: %.400s",
                         i + 1, ncand, why);
            }
            return s;
        }
        if (i == 0 || cur.total_seconds < out->total_seconds) {
            kt_sync_schedule_free(out);
            *out = cur;
            if (best_bytes) *best_bytes = candidates[i];
        } else {
            kt_sync_schedule_free(&cur);
        }
    }
    kt__ok(err);
    return KT_OK;
}

/* ------------------------------------ gradient sync of a ktile plan */

/* Roofline seconds of op o on the plan's busiest device (its box on each
   device as kt_lower gives it). */
static double kt__sync_op_seconds(const kt_graph *g, const kt_plan *p, int o,
                                  const kt_topology *t) {
    const kt_op *op = &g->op[o];
    int64_t dev, ndev = kt_factors_devices(&p->f);
    double worst = 0;
    for (dev = 0; dev < ndev; dev++) {
        kt_range box[KT_MAX_VARS];
        int coords[KT_MAX_CUTS], i;
        double s;
        kt_op_var_box(op, box);
        kt_device_coords(&p->f, dev, coords);
        for (i = 0; i < p->f.count; i++) {
            int v = p->split[o * KT_MAX_CUTS + i];
            if (v >= 0) box[v] = kt_split_range(box[v], p->f.k[i], coords[i]);
        }
        s = kt__task_seconds(g, op, box, t, dev);
        if (s > worst) worst = s;
    }
    return worst;
}

/* The ring weight tw's gradient is all-reduced over: the devices that
   differ from device 0 only in the cuts where the weight is replicated,
   in device order.  Eq. 8.3 prices a ring by its slowest hop (b_m); its
   per-step latency phi is taken as the largest hop latency. */
static int64_t kt__sync_ring(const kt_plan *p, const kt_tiling *tw,
                             const kt_topology *t, double *bw, double *phi) {
    int64_t d, first = -1, prev = -1, count = 0;
    int64_t ndev = kt_factors_devices(&p->f);
    *bw = 0;
    *phi = 0;
    for (d = 0; d <= ndev; d++) {
        int64_t a, b;
        int lv;
        if (d < ndev) {
            int c[KT_MAX_CUTS], i, member = 1;
            kt_device_coords(&p->f, d, c);
            for (i = 0; i < p->f.count; i++)
                if (tw->cut[i] != KT_CUT_R && c[i] != 0) member = 0;
            if (!member) continue;
            count++;
            if (prev < 0) {
                first = prev = d;
                continue;
            }
            a = prev;
            b = d;
            prev = d;
        } else { /* the hop closing the ring */
            if (count < 2) break;
            a = prev;
            b = first;
        }
        lv = kt_topology_level(t, a, b);
        if (*bw == 0 || t->bandwidth[lv] < *bw) *bw = t->bandwidth[lv];
        if (t->latency[lv] > *phi) *phi = t->latency[lv];
    }
    return count;
}

/* Table 3.4's M x N layer and batch K when W's gradient is one product-sum
   over one reduction variable of a rank-2 weight (dW[j,k] = sum(i)
   x[i,j] dy[i,k]): M x N is W's tile, and K the reduction variable's
   extent shared by the w workers (each contributes the partial gradient
   of its own samples: data parallelism, whatever variable the plan
   splits); otherwise m = n = 0. */
static void kt__sync_fc_shape(const kt_graph *g, const kt_plan *p, int wt,
                              int grad, int64_t w, kt_sync_layer *l) {
    const kt_tensor *x = &g->tensor[wt];
    const kt_op *op = &g->op[g->tensor[grad].producer];
    int v, red = -1, nred = 0;
    kt_box tile;
    int64_t cls;
    l->m = l->n = l->k = 0;
    if (x->rank != 2 || op->reducer != KT_REDUCE_SUM || op->out_rank != 2)
        return;
    for (v = 0; v < op->nvars; v++)
        if (op->var[v].reduction) {
            red = v;
            nred++;
        }
    if (nred != 1) return;
    kt_tiling_device_box(&p->tiling[wt], 2, x->shape, &p->f, 0, &tile, &cls);
    l->m = tile.r[0].hi - tile.r[0].lo;
    l->n = tile.r[1].hi - tile.r[1].lo;
    l->k = (op->var[red].extent + w - 1) / w;
}

/* weight_of[G] = W when G is W's gradient: the last-produced gradient
   tensor of W (after partial gradients comes their sum); else -1. */
static void kt__sync_weight_grads(const kt_graph *g, int *weight_of) {
    int x;
    for (x = 0; x < g->ntensor; x++) weight_of[x] = -1;
    for (x = 0; x < g->ntensor; x++) {
        const kt_tensor *gx = &g->tensor[x];
        int y, latest = 1;
        if (gx->kind != KT_GRADIENT || gx->of < 0 || gx->producer < 0 ||
            g->tensor[gx->of].kind != KT_WEIGHT)
            continue;
        for (y = 0; y < g->ntensor; y++)
            if (y != x && g->tensor[y].kind == KT_GRADIENT &&
                g->tensor[y].of == gx->of &&
                g->tensor[y].producer > gx->producer)
                latest = 0;
        if (latest) weight_of[x] = gx->of;
    }
}

static kt_status kt__sync_plan_check(const kt_graph *g, const kt_plan *p,
                                     const kt_topology *t,
                                     const kt_sync_plan_options *o,
                                     kt_error *err) {
    kt_status s = kt__plan_check(g, p, err);
    if (s != KT_OK || (s = kt__topology_usable(t, err)) != KT_OK) return s;
    if (t->ndev != kt_factors_devices(&p->f))
        return kt__fail(err, KT_ERR_INVALID, 0, "sync: the topology has %lld "
                        "devices, the plan %lld", (long long)t->ndev,
                        (long long)kt_factors_devices(&p->f));
    if (o->method != KT_SYNC_ALLREDUCE && o->method != KT_SYNC_PS &&
        o->method != KT_SYNC_ADAPTIVE)
        return kt__fail(err, KT_ERR_INVALID, 0, "sync: a plan's gradients "
                        "use all-reduce, PS or adaptive (method %d given)",
                        (int)o->method);
    if (!kt__sync_nonneg(o->delta))
        return kt__fail(err, KT_ERR_INVALID, 0, "sync: delta %g s is not a "
                        "finite number >= 0", o->delta);
    return KT_OK;
}

kt_status kt_sync_layers_from_plan(const kt_graph *g, const kt_plan *p,
                                   const kt_topology *t,
                                   const kt_sync_plan_options *opt,
                                   kt_sync_layer **layers, int *n,
                                   kt_error *err) {
    kt_sync_plan_options o;
    int *weight_of, op, count = 0;
    kt_sync_layer *out;
    double compute = 0;
    kt_status s;
    memset(&o, 0, sizeof o);
    if (opt) o = *opt;
    if (!layers || !n)
        return kt__fail(err, KT_ERR_INVALID, 0, "kt_sync_layers_from_plan: "
                        "no %s (NULL)", layers ? "count" : "layers");
    *layers = NULL;
    *n = 0;
    if ((s = kt__sync_plan_check(g, p, t, &o, err)) != KT_OK) return s;
    weight_of = (int *)kt__calloc((size_t)g->ntensor + 1, sizeof(int));
    out = (kt_sync_layer *)kt__calloc((size_t)g->ntensor + 1, sizeof *out);
    if (!weight_of || !out) {
        KT_FREE(weight_of);
        KT_FREE(out);
        return kt__fail(err, KT_ERR_NOMEM, 0, "sync: out of memory");
    }
    kt__sync_weight_grads(g, weight_of);
    /* the backward pass in op order: autodiff's ops, not the in-place
       updates or optimizer state (they follow the sync) */
    for (op = 0; op < g->nop; op++) {
        const kt_op *x = &g->op[op];
        int wt = weight_of[x->output];
        kt_sync_layer *l = &out[count];
        double bw, phi;
        int64_t w;
        if (x->group < 0 || x->in_place ||
            g->tensor[x->output].kind == KT_OPTSTATE)
            continue;
        compute += kt__sync_op_seconds(
            g, p, o.backward_as_forward ? x->group : op, t);
        if (wt < 0) continue;
        w = kt__sync_ring(p, &p->tiling[wt], t, &bw, &phi);
        if (w < 2) continue; /* split at every cut: its own gradient */
        l->backward_seconds = compute;
        l->bytes = (double)kt_plan_tensor_bytes(g, p, wt);
        l->method = o.method;
        l->workers = l->servers = w;
        l->bandwidth = bw;
        l->phi = phi;
        l->delta = o.delta;
        l->tensor = wt;
        if (o.method == KT_SYNC_ADAPTIVE)
            kt__sync_fc_shape(g, p, wt, x->output, w, l);
        compute = 0;
        count++;
    }
    if (compute > 0) { /* backward compute after the last sent gradient */
        out[count].backward_seconds = compute;
        out[count].tensor = -1;
        count++;
    }
    KT_FREE(weight_of);
    *layers = out;
    *n = count;
    kt__ok(err);
    return KT_OK;
}

#endif /* KT_SCHED_IMPLEMENTED */
#endif /* KT_IMPLEMENTATION */
