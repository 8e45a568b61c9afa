/* sched.h -- ktile part 2: from a plan to what each device does.
                                                     MIT licence, see LICENSE.

   WHAT IT IS FOR
     A plan (tiling.h) says how every tensor is tiled and which index
     variable every operator splits at each cut.  sched.h lowers it into the
     per-device program (SOYBEAN 5, Tofu 6): every operator's sub-operator
     on every device with its share of the index space, and every
     conversion as concrete transfers -- a region of a tensor sent from one
     device to another, plain copies or partial sums to be added -- whose
     bytes add up to exactly what the plan's cost predicts.  It also holds
     the gradient-synchronisation cost models of the Zhang thesis (Table
     3.4, Eq. 8.3).

     Done so far (the sched.h issue is open): lowering and the
     per-device-pair byte matrix; hierarchical topologies; the task graph,
     FlexFlow's full simulation and schedules given as an op order; MCMC
     search priced by full simulation; parameter-server, sufficient-factor
     and collective cost models.  Still to come: delta simulation,
     wait-free backprop and bucket merging, profile tables.

   HOW TO USE IT
     #define KT_IMPLEMENTATION in one C file before including it (it
     includes tiling.h itself).  Never put the ktile directory on the
     include path: this header's name would shadow POSIX <sched.h>.

   PUBLIC FUNCTIONS
     lowering    kt_lower kt_program_free
     topology    kt_topology_parse kt_topology_load_file kt_topology_level
                 kt_topology_machine
     simulation  kt_sim_build kt_sim_build_ordered kt_schedule_check
                 kt_sim_run kt_sim_free
     search      kt_plan_mcmc
     sync costs  kt_sync_ps_worker kt_sync_ps_server kt_sync_ps_both
                 kt_sync_sfb kt_sync_collective
*/
#ifndef KT_SCHED_H
#define KT_SCHED_H

#include "tiling.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- lowering */

typedef enum kt_xfer_kind {
    KT_XFER_COPY = 0, /* dst receives the values                        */
    KT_XFER_REDUCE    /* dst adds the partial sums it receives to its own */
} kt_xfer_kind;

/* One transfer: `region` of `tensor` sent from device src to dst, as part
   of converting role `role` of operator `op` (an input index, or the
   op's input count for its output). */
typedef struct kt_transfer {
    int op, role, tensor;
    int64_t src, dst;
    kt_box region;
    int64_t bytes;
    kt_xfer_kind kind;
} kt_transfer;

/* One sub-operator: op run on `device` over its share of the index space
   (box[v] for every index variable v). */
typedef struct kt_task {
    int op;
    int64_t device;
    kt_range box[KT_MAX_VARS];
} kt_task;

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
    int64_t *pair_bytes;   /* ndev * ndev: bytes sent from src to dst,
                              pair_bytes[src * ndev + dst]                */
} kt_program;

/* Lowers plan p of graph g.  Every element a device needs and does not
   hold comes from the holder nearest to it (the one sharing the longest
   prefix of cut coordinates: same node before other nodes, SOYBEAN 5.1);
   partial sums are reduced as DESIGN.md's cost assumes -- each cell's
   elements shared among its roots, each root receiving the other partial
   classes' values and then sending the sum to the rest of the devices
   needing it.  total_bytes equals kt_plan_eval's total. */
kt_status kt_lower(const kt_graph *g, const kt_plan *p, kt_program *out,
                   kt_error *err);
void kt_program_free(kt_program *prog);

/* ------------------------------------------------------------ topology */

/* Devices joined by a hierarchy of interconnect levels, slowest first
   (SOYBEAN 5.1): level l groups devices into fanout[l] groups of the next
   level.  Two devices communicate over the level of the first group they
   do not share, at that level's bandwidth (bytes/s per direction) and
   latency (s).  Specs:
     flat:N:BW                       one level of N devices
     nodes:MxG:INTRA_BW:INTER_BW     M nodes of G devices
   bandwidths in bytes/s with K, M, G, T suffixes (powers of 1000), or
   bits/s with a trailing b (400Gb).  A topology file has lines
     level FANOUT BANDWIDTH [LATENCY]      (slowest level first)
     device flops PEAK_FLOPS | membw BYTES_PER_S
   and `#` comments. */
typedef struct kt_topology {
    int nlevels;
    int64_t fanout[KT_MAX_CUTS];
    double bandwidth[KT_MAX_CUTS];
    double latency[KT_MAX_CUTS];
    int64_t ndev;               /* product of the fanouts */
    double peak_flops, mem_bw;  /* per device, for compute times */
} kt_topology;

kt_status kt_topology_parse(const char *spec, kt_topology *t, kt_error *err);
kt_status kt_topology_load_file(const char *path, kt_topology *t,
                                kt_error *err);
/* The level two devices communicate over (-1 for the same device). */
int kt_topology_level(const kt_topology *t, int64_t a, int64_t b);
/* The same levels as a tiling.h machine, for the time objective. */
kt_machine kt_topology_machine(const kt_topology *t);

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
    double start, end;   /* filled by the simulation                       */
    int npred;           /* predecessors: pred[pred_first .. +npred)       */
    int pred_first;
} kt_sim_task;

typedef struct kt_sim {
    int ntask;
    kt_sim_task *task;
    int *pred;            /* predecessor lists                             */
    int64_t ndev;         /* compute devices                               */
    int64_t nlink;        /* links used: ordered device pairs that talk,
                             numbered in order of first use               */
    double step_seconds;  /* makespan of the last simulation               */
    double *busy;         /* per compute device, seconds busy              */
    int ncritical;        /* the critical path, first task first           */
    int *critical;
} kt_sim;

/* Builds the task graph of a lowered program on a topology: compute times
   from a roofline of the op's tile (or 0 flops ops: memory time), transfer
   times latency + bytes / bandwidth of the devices' level. */
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
/* Full simulation (FlexFlow Algorithm 1): fills start/end, step_seconds,
   busy and the critical path. */
kt_status kt_sim_run(kt_sim *s, kt_error *err);
void kt_sim_free(kt_sim *s);

/* ------------------------------------------------------------ MCMC search */

typedef struct kt_mcmc_options {
    double seconds;        /* CPU time budget; 0: none (use proposals)      */
    int64_t proposals;     /* proposal budget; 0: none (use seconds)        */
    double beta;           /* Metropolis: accept worse with exp(-beta*dt/t) */
    uint64_t seed;         /* same seed and proposal budget, same plan      */
    int restarts;          /* chains: the first from data parallelism (or
                              the DP plan when it does not apply), the rest
                              from random plans; 0: 2                       */
} kt_mcmc_options;

/* FlexFlow 6: a Markov chain over plans.  A proposal picks a random
   operator and gives it a random configuration -- a random variable to
   split at every cut, its output tensor tiled to match (split where the
   op's output is split, replicated where it is reduced or replicated) --
   or, half of the time, gives a random tensor a random tiling (the only
   way weights and inputs move); it prices the plan by full simulation of
   the lowered plan on topology t, and
   accepts it by the Metropolis rule on the relative change of the step
   time.  *p is the best plan seen (initialised by the call); accepted and
   tried count the proposals. */
kt_status kt_plan_mcmc(const kt_graph *g, const kt_factors *f,
                       const kt_topology *t, const kt_mcmc_options *opt,
                       kt_plan *p, double *step_seconds, int64_t *tried,
                       int64_t *accepted, kt_error *err);

/* ---------------------------------------------- gradient synchronisation */

/* Elements one node sends and receives to synchronise an M x N
   fully-connected layer with P1 workers and P2 servers, batch K (Zhang
   thesis Table 3.4): a parameter-server worker 2MN, a server 2 P1 MN / P2,
   a node that is both 2 MN (P1 + P2 - 2) / P2, and sufficient-factor
   broadcasting 2 K (P1 - 1)(M + N). */
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
   per-step latency and delta of fixed cost. */
double kt_sync_collective(kt_collective c, double bytes, int64_t w,
                          double bandwidth, double phi, double delta);

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

/* How many leading cut coordinates two devices share: devices of one
   group of the first cuts sit on the same node (SOYBEAN 5.1), so the
   larger, the nearer. */
static int kt__nearness(const kt_factors *f, int64_t a, int64_t b) {
    int ca[KT_MAX_CUTS], cb[KT_MAX_CUTS], i;
    kt_device_coords(f, a, ca);
    kt_device_coords(f, b, cb);
    for (i = 0; i < f->count && ca[i] == cb[i]; i++) {}
    return i;
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

static int kt__covers(const kt__cover *c, int64_t cell, int64_t dev) {
    int64_t i;
    for (i = c->first[cell]; i < c->first[cell + 1]; i++)
        if (c->dev[i] == dev) return 1;
    return 0;
}

static int64_t kt__box_volume(const kt_box *b, int rank) {
    int64_t v = 1;
    int d;
    for (d = 0; d < rank; d++) v *= b->r[d].hi - b->r[d].lo;
    return v;
}

/* The transfers of one conversion, cell by cell of the compressed grid
   (DESIGN.md "Conversion cost"): without partial sums each device fetches
   what it lacks from its nearest holder; with them every cell's elements
   are shared among its roots (the devices that need and hold it, else
   those that hold it), each root receives the other partial classes'
   values of its share (REDUCE) and sends the sums on (COPY). */
static kt_status kt__lower_conversion(const kt_graph *g, const kt_plan *p,
                                      int op, int role, int tensor,
                                      const kt_placement *from,
                                      const kt_placement *to, kt__xfers *out,
                                      kt_error *err) {
    const kt_tensor *x = &g->tensor[tensor];
    kt__grid grid;
    kt__cover held, need;
    int64_t cell, q = from->partials;
    int64_t *best = NULL, *roots = NULL;
    kt__xfers copies;
    kt_status s;
    kt_transfer t;
    memset(&t, 0, sizeof t);
    memset(&copies, 0, sizeof copies);
    t.op = op;
    t.role = role;
    t.tensor = tensor;
    if ((s = kt__grid_build(&grid, x->rank, x->shape, from, to, err)) != KT_OK)
        return s;
    memset(&held, 0, sizeof held);
    memset(&need, 0, sizeof need);
    best = (int64_t *)kt__calloc((size_t)q + 1, sizeof(int64_t));
    roots = (int64_t *)kt__calloc((size_t)(from->ndev + to->ndev) + 1,
                                  sizeof(int64_t));
    if (!best || !roots || !kt__cover_build(&held, &grid, from) ||
        !kt__cover_build(&need, &grid, to)) {
        s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory lowering %s",
                     x->name);
        goto done;
    }
    for (cell = 0; cell < grid.ncells && s == KT_OK; cell++) {
        int64_t i, j, h0 = held.first[cell], h1 = held.first[cell + 1];
        int64_t n0 = need.first[cell], n1 = need.first[cell + 1];
        kt_box box;
        if (n0 == n1) continue;
        if (h0 == h1) {
            s = kt__fail(err, KT_ERR_INTERNAL, 0, "lowering %s: an element "
                         "is needed but held by no device", x->name);
            break;
        }
        kt__cell_box(&grid, cell, &box);
        if (q == 1) {
            for (i = n0; i < n1; i++) {
                int64_t dst = need.dev[i], src = -1;
                int near = -1;
                if (kt__covers(&held, cell, dst)) continue;
                for (j = h0; j < h1; j++) {
                    int nr = kt__nearness(&p->f, held.dev[j], dst);
                    if (nr > near) {
                        near = nr;
                        src = held.dev[j];
                    }
                }
                t.src = src;
                t.dst = dst;
                t.region = box;
                t.bytes = kt__box_volume(&box, x->rank) * x->elem_bytes;
                t.kind = KT_XFER_COPY;
                kt__xfer_push(out, &t);
            }
        } else {
            int64_t nroots = 0, r;
            int longest = 0, d;
            for (i = n0; i < n1; i++)
                if (kt__covers(&held, cell, need.dev[i]))
                    roots[nroots++] = need.dev[i];
            if (nroots == 0)
                for (i = h0; i < h1; i++) roots[nroots++] = held.dev[i];
            for (d = 1; d < x->rank; d++)
                if (box.r[d].hi - box.r[d].lo >
                    box.r[longest].hi - box.r[longest].lo)
                    longest = d;
            for (r = 0; r < nroots; r++) {
                int64_t root = roots[r], c;
                kt_box part = box;
                part.r[longest] = kt_split_range(box.r[longest], (int)nroots,
                                                 (int)r);
                if (part.r[longest].hi <= part.r[longest].lo) continue;
                t.region = part;
                t.bytes = kt__box_volume(&part, x->rank) * x->elem_bytes;
                /* the nearest holder of every other partial class */
                for (c = 0; c < q; c++) best[c] = -1;
                for (j = h0; j < h1; j++) {
                    int64_t hd = held.dev[j], hc = from->partial_class[hd];
                    if (best[hc] < 0 ||
                        kt__nearness(&p->f, hd, root) >
                            kt__nearness(&p->f, best[hc], root))
                        best[hc] = hd;
                }
                for (c = 0; c < q; c++) {
                    if (c == from->partial_class[root] || best[c] < 0) continue;
                    t.src = best[c];
                    t.dst = root;
                    t.kind = KT_XFER_REDUCE;
                    kt__xfer_push(out, &t);
                }
                for (i = n0; i < n1; i++) {
                    if (need.dev[i] == root) continue;
                    t.src = root;
                    t.dst = need.dev[i];
                    t.kind = KT_XFER_COPY;
                    kt__xfer_push(&copies, &t); /* after all reductions */
                }
            }
        }
    }
    for (cell = 0; s == KT_OK && cell < copies.n; cell++)
        kt__xfer_push(out, &copies.x[cell]);
    if (s == KT_OK && (out->oom || copies.oom))
        s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory for transfers");
done:
    KT_FREE(copies.x);
    KT_FREE(best);
    KT_FREE(roots);
    kt__cover_free(&held);
    kt__cover_free(&need);
    kt__grid_free(&grid);
    return s;
}

void kt_program_free(kt_program *prog) {
    if (!prog) return;
    KT_FREE(prog->task);
    KT_FREE(prog->xfer);
    KT_FREE(prog->xfer_first);
    KT_FREE(prog->pair_bytes);
    memset(prog, 0, sizeof *prog);
}

/* Every op's sub-operator on every device, in op order. */
static kt_status kt__lower_tasks(const kt_graph *g, const kt_plan *p,
                                 kt_program *prog, kt_error *err) {
    int o, i;
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
            int coords[KT_MAX_CUTS];
            kt_task *t = &prog->task[k];
            t->op = o;
            t->device = dev;
            kt_op_var_box(&g->op[o], t->box);
            kt_device_coords(&p->f, dev, coords);
            for (i = 0; i < p->f.count; i++) {
                int v = p->split[o * KT_MAX_CUTS + i];
                if (v >= 0) t->box[v] = kt_split_range(t->box[v], p->f.k[i],
                                                       coords[i]);
            }
        }
    return KT_OK;
}

kt_status kt_lower(const kt_graph *g, const kt_plan *p, kt_program *out,
                   kt_error *err) {
    kt__xfers xs;
    int o, j;
    int64_t i;
    kt_status s;
    memset(out, 0, sizeof *out);
    memset(&xs, 0, sizeof xs);
    if ((s = kt__plan_check(g, p, err)) != KT_OK) return s;
    out->ndev = kt_factors_devices(&p->f);
    out->nops = g->nop;
    out->xfer_first = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    out->pair_bytes = (int64_t *)kt__calloc(
        (size_t)(out->ndev * out->ndev), sizeof(int64_t));
    if (!out->xfer_first || !out->pair_bytes) {
        kt_program_free(out);
        return kt__fail(err, KT_ERR_NOMEM, 0, "out of memory lowering");
    }
    if ((s = kt__lower_tasks(g, p, out, err)) != KT_OK) {
        kt_program_free(out);
        return s;
    }
    for (o = 0; o < g->nop && s == KT_OK; o++) {
        const kt_op *op = &g->op[o];
        kt_placement needed[KT_MAX_VARS], produced, tp;
        out->xfer_first[o] = xs.n;
        if (p->f.count == 0) continue;
        s = kt_op_placements(g, op, &p->f, &p->split[o * KT_MAX_CUTS], needed,
                             &produced, err);
        if (s != KT_OK) break;
        for (j = 0; j <= op->ninputs && s == KT_OK; j++) {
            int x = j < op->ninputs ? op->input[j] : op->output;
            const kt_tensor *tx = &g->tensor[x];
            s = kt_placement_from_tiling(&tp, &p->tiling[x], tx->rank,
                                         tx->shape, &p->f, err);
            if (s != KT_OK) break;
            if (j < op->ninputs)
                s = kt__lower_conversion(g, p, o, j, x, &tp, &needed[j], &xs,
                                         err);
            else
                s = kt__lower_conversion(g, p, o, j, x, &produced, &tp, &xs,
                                         err);
            kt_placement_free(&tp);
        }
        kt__free_op_placements(op, needed, &produced);
    }
    if (s != KT_OK) {
        KT_FREE(xs.x);
        kt_program_free(out);
        return s;
    }
    out->xfer_first[g->nop] = xs.n;
    out->xfer = xs.x;
    out->nxfer = xs.n;
    for (i = 0; i < xs.n; i++) {
        out->total_bytes += xs.x[i].bytes;
        out->pair_bytes[xs.x[i].src * out->ndev + xs.x[i].dst] +=
            xs.x[i].bytes;
    }
    kt__ok(err);
    return KT_OK;
}

/* ------------------------------------------------------------ topology */

static void kt__topology_defaults(kt_topology *t) {
    kt_machine m = kt_machine_default();
    memset(t, 0, sizeof *t);
    t->peak_flops = m.peak_flops;
    t->mem_bw = m.mem_bw;
}

static kt_status kt__topology_finish(kt_topology *t, const char *what,
                                     kt_error *err) {
    int l;
    t->ndev = 1;
    if (!(t->peak_flops > 0) || t->peak_flops > 1e30 || !(t->mem_bw > 0) ||
        t->mem_bw > 1e30)
        return kt__fail(err, KT_ERR_INVALID, 0, "topology %s: device flops "
                        "and memory bandwidth must be positive and finite",
                        what);
    if (t->nlevels < 1)
        return kt__fail(err, KT_ERR_INVALID, 0, "topology %s: no levels",
                        what);
    for (l = 0; l < t->nlevels; l++) {
        if (t->fanout[l] < 1 || !(t->bandwidth[l] > 0) ||
            t->bandwidth[l] > 1e18 || !(t->latency[l] >= 0) ||
            t->latency[l] > 1e6)
            return kt__fail(err, KT_ERR_INVALID, 0, "topology %s: level %d "
                            "needs a fan-out >= 1 and a positive bandwidth",
                            what, l + 1);
        if (t->fanout[l] > KT_MAX_DEVICES / t->ndev)
            return kt__fail(err, KT_ERR_INVALID, 0, "topology %s: more than "
                            "%d devices", what, KT_MAX_DEVICES);
        t->ndev *= t->fanout[l];
        if (t->ndev > KT_MAX_DEVICES)
            return kt__fail(err, KT_ERR_INVALID, 0, "topology %s: more than "
                            "%d devices", what, KT_MAX_DEVICES);
    }
    kt__ok(err);
    return KT_OK;
}

kt_status kt_topology_parse(const char *spec, kt_topology *t, kt_error *err) {
    kt_machine m;
    kt_status s = kt_machine_parse(spec, &m, err);
    int l;
    kt__topology_defaults(t);
    if (s != KT_OK) return s;
    /* the spec forms are tiling.h's machines; latencies are typical values
       of a network hop (5 us) and of a link inside a node (1 us) */
    t->nlevels = m.nlevels;
    for (l = 0; l < m.nlevels; l++) {
        t->fanout[l] = m.level_fanout[l];
        t->bandwidth[l] = m.level_bw[l];
        t->latency[l] = m.nlevels > 1 && l == 0 ? 5e-6 : 1e-6;
    }
    return kt__topology_finish(t, spec, err);
}

kt_status kt_topology_load_file(const char *path, kt_topology *t,
                                kt_error *err) {
    FILE *f = fopen(path, "r");
    char line[512];
    int lineno = 0;
    kt__topology_defaults(t);
    if (!f)
        return kt__fail(err, KT_ERR_IO, 0, "cannot open topology file %s",
                        path);
    while (fgets(line, sizeof line, f)) {
        char word[32], a[64], b[64], c[64], *hash = strchr(line, '#');
        int n;
        lineno++;
        if (hash) *hash = '\0';
        n = sscanf(line, "%31s %63s %63s %63s", word, a, b, c);
        if (n <= 0) continue;
        if (!strcmp(word, "level") && (n == 3 || n == 4)) {
            char *end;
            long fan = strtol(a, &end, 10);
            double lat = 1e-6;
            if (*end || fan < 1 || t->nlevels == KT_MAX_CUTS ||
                !kt__parse_bandwidth(b, strlen(b), &t->bandwidth[t->nlevels]) ||
                (n == 4 && (sscanf(c, "%lf", &lat) != 1 || !(lat >= 0) ||
                            lat > 1e6))) {
                fclose(f);
                return kt__fail(err, KT_ERR_PARSE, lineno, "%s: expected "
                                "`level FANOUT BANDWIDTH [LATENCY]`", path);
            }
            t->fanout[t->nlevels] = fan;
            t->latency[t->nlevels] = lat;
            t->nlevels++;
        } else if (!strcmp(word, "device") && n == 3 &&
                   (!strcmp(a, "flops") || !strcmp(a, "membw"))) {
            double v;
            if (!kt__parse_bandwidth(b, strlen(b), &v)) {
                fclose(f);
                return kt__fail(err, KT_ERR_PARSE, lineno, "%s: bad number "
                                "'%s'", path, b);
            }
            if (!strcmp(a, "flops")) t->peak_flops = v;
            else t->mem_bw = v;
        } else {
            fclose(f);
            return kt__fail(err, KT_ERR_PARSE, lineno, "%s: unknown line "
                            "(level FANOUT BW [LATENCY] | device flops|membw "
                            "VALUE)", path);
        }
    }
    fclose(f);
    return kt__topology_finish(t, path, err);
}

int kt_topology_level(const kt_topology *t, int64_t a, int64_t b) {
    int64_t span = t->ndev;
    int l;
    if (a == b) return -1;
    /* level l splits each group of `span` devices into fanout[l] groups */
    for (l = 0; l < t->nlevels; l++) {
        span /= t->fanout[l];
        if (a / span != b / span) return l;
        a %= span;
        b %= span;
    }
    return t->nlevels - 1;
}

kt_machine kt_topology_machine(const kt_topology *t) {
    kt_machine m;
    int l;
    memset(&m, 0, sizeof m);
    m.nlevels = t->nlevels;
    for (l = 0; l < t->nlevels; l++) {
        m.level_bw[l] = t->bandwidth[l];
        m.level_fanout[l] = t->fanout[l];
    }
    m.peak_flops = t->peak_flops;
    m.mem_bw = t->mem_bw;
    return m;
}

/* -------------------------------------------------- task graph, simulation */

void kt_sim_free(kt_sim *s) {
    if (!s) return;
    KT_FREE(s->task);
    KT_FREE(s->pred);
    KT_FREE(s->busy);
    KT_FREE(s->critical);
    memset(s, 0, sizeof *s);
}

/* Roofline time of one sub-operator on its box. */
static double kt__task_seconds(const kt_graph *g, const kt_op *op,
                               const kt_range *box, const kt_topology *t) {
    double points = 1, bytes = 0, a, b;
    kt_box r;
    int v, j, d, empty;
    for (v = 0; v < op->nvars; v++) points *= (double)(box[v].hi - box[v].lo);
    for (j = 0; j < op->ninputs; j++) {
        double vol = g->tensor[op->input[j]].elem_bytes;
        kt_op_input_box(g, op, j, box, &r, &empty);
        if (empty) continue;
        for (d = 0; d < g->tensor[op->input[j]].rank; d++)
            vol *= (double)(r.r[d].hi - r.r[d].lo);
        bytes += vol;
    }
    kt_op_output_box(op, box, &r);
    {
        double vol = g->tensor[op->output].elem_bytes;
        for (d = 0; d < op->out_rank; d++) vol *= (double)(r.r[d].hi - r.r[d].lo);
        bytes += vol;
    }
    if (op->reducer != KT_REDUCE_NONE) points *= 2; /* multiply and add */
    a = points / t->peak_flops;
    b = bytes / t->mem_bw;
    return a > b ? a : b;
}

/* A growable list of predecessor edges (task, pred). */
typedef struct kt__edges2 {
    int *task, *pred;
    int n, cap;
} kt__edges2;

static int kt__edge2(kt__edges2 *e, int task, int pred) {
    if (pred < 0 || pred == task) return 1;
    if (e->n == e->cap) {
        int nc = e->cap ? 2 * e->cap : 1024;
        int *a = (int *)KT_REALLOC(e->task, sizeof(int) * (size_t)nc);
        int *b;
        if (!a) return 0;
        e->task = a;
        b = (int *)KT_REALLOC(e->pred, sizeof(int) * (size_t)nc);
        if (!b) return 0;
        e->pred = b;
        e->cap = nc;
    }
    e->task[e->n] = task;
    e->pred[e->n] = pred;
    e->n++;
    return 1;
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
                int64_t k = l->key[j] % nc;
                while (nk[k] >= 0) k = (k + 1) % nc;
                nk[k] = l->key[j];
                ni[k] = l->id[j];
            }
        KT_FREE(l->key);
        KT_FREE(l->id);
        l->key = nk;
        l->id = ni;
        l->cap = nc;
    }
    for (i = key % l->cap; l->key[i] >= 0; i = (i + 1) % l->cap)
        if (l->key[i] == key) return l->id[i];
    l->key[i] = key;
    l->id[i] = l->n;
    return l->n++;
}

/* Transfers are aggregated per (op, role, kind, src, dst): one task moves
   all of a conversion's bytes between two devices of one kind.  Sorting
   an op's transfers by that key brings each task's transfers together
   (reductions before copies, as kt_xfer_kind orders them). */
static int kt__cmp_xfer(const void *x, const void *y) {
    const kt_transfer *a = (const kt_transfer *)x, *b = (const kt_transfer *)y;
    if (a->role != b->role) return a->role < b->role ? -1 : 1;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    if (a->src != b->src) return a->src < b->src ? -1 : 1;
    return (a->dst > b->dst) - (a->dst < b->dst);
}

kt_status kt_schedule_check(const kt_graph *g, const int *order, int n,
                            kt_error *err) {
    int *pos = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    int i, j, o2;
    kt_status s = KT_OK;
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

kt_status kt_sim_build(const kt_graph *g, const kt_plan *p,
                       const kt_program *prog, const kt_topology *t,
                       kt_sim *out, kt_error *err) {
    return kt_sim_build_ordered(g, p, prog, t, NULL, out, err);
}

kt_status kt_sim_build_ordered(const kt_graph *g, const kt_plan *p,
                               const kt_program *prog, const kt_topology *t,
                               const int *order, kt_sim *out, kt_error *err) {
    int64_t nd = prog->ndev, d;
    int o, i, n = 0, cap;
    int *role_of = NULL, *kind_of = NULL, *tensor_of = NULL, *first = NULL;
    int *rfirst = NULL, *readers = NULL, *ofirst = NULL, *olist = NULL;
    int *prev = NULL;
    kt_transfer *sorted = NULL;
    kt__links links;
    kt__edges2 e;
    kt_status s = KT_OK;
    (void)p;
    memset(out, 0, sizeof *out);
    memset(&e, 0, sizeof e);
    memset(&links, 0, sizeof links);
    if (order && (s = kt_schedule_check(g, order, g->nop, err)) != KT_OK)
        return s;
    if (t->ndev != nd)
        return kt__fail(err, KT_ERR_INVALID, 0, "the topology has %lld "
                        "devices, the plan %lld", (long long)t->ndev,
                        (long long)nd);
    cap = prog->ntask + prog->nxfer + 1;
    out->task = (kt_sim_task *)kt__calloc((size_t)cap, sizeof(kt_sim_task));
    role_of = (int *)kt__calloc((size_t)cap, sizeof(int));
    kind_of = (int *)kt__calloc((size_t)cap, sizeof(int));
    tensor_of = (int *)kt__calloc((size_t)cap, sizeof(int));
    first = (int *)kt__calloc((size_t)g->nop + 2, sizeof(int));
    prev = (int *)kt__calloc((size_t)g->nop + 1, sizeof(int));
    out->busy = (double *)kt__calloc((size_t)nd, sizeof(double));
    if (!out->task || !role_of || !kind_of || !tensor_of || !first ||
        !prev || !out->busy)
        goto nomem;
    /* prev[o]: the op run just before o on every device */
    for (o = 0; o < g->nop; o++) {
        int here = order ? order[o] : o;
        prev[here] = o == 0 ? -1 : (order ? order[o - 1] : o - 1);
    }
    out->ndev = nd;
    /* compute tasks first: task o * nd + d */
    for (i = 0; i < prog->ntask; i++) {
        const kt_task *tk = &prog->task[i];
        kt_sim_task *st = &out->task[n];
        st->kind = KT_TASK_COMPUTE;
        st->op = tk->op;
        st->device = tk->device;
        st->src = st->dst = tk->device;
        st->seconds = kt__task_seconds(g, &g->op[tk->op], tk->box, t);
        role_of[n] = -1;
        n++;
    }
    /* then transfer tasks, op by op */
    sorted = (kt_transfer *)kt__calloc((size_t)prog->nxfer + 1,
                                       sizeof(kt_transfer));
    if (!sorted) goto nomem;
    if (prog->nxfer)
        memcpy(sorted, prog->xfer, sizeof(kt_transfer) * (size_t)prog->nxfer);
    for (o = 0; o < g->nop; o++) {
        int lo = prog->xfer_first[o], hi = prog->xfer_first[o + 1];
        first[o] = n;
        qsort(sorted + lo, (size_t)(hi - lo), sizeof *sorted, kt__cmp_xfer);
        for (i = lo; i < hi; i++) {
            const kt_transfer *x = &sorted[i];
            int lv = kt_topology_level(t, x->src, x->dst);
            if (i == lo || kt__cmp_xfer(x, &sorted[i - 1]) != 0) {
                kt_sim_task *st = &out->task[n];
                st->kind = KT_TASK_TRANSFER;
                st->op = o;
                st->src = x->src;
                st->dst = x->dst;
                st->device = nd + kt__link_id(&links, x->src * nd + x->dst);
                if (links.oom) goto nomem;
                st->seconds = t->latency[lv];
                role_of[n] = x->role;
                kind_of[n] = (int)x->kind;
                tensor_of[n] = x->tensor;
                n++;
            }
            out->task[n - 1].bytes += x->bytes;
            out->task[n - 1].seconds += (double)x->bytes / t->bandwidth[lv];
        }
    }
    KT_FREE(sorted);
    sorted = NULL;
    out->nlink = links.n;
    first[g->nop] = n;
    out->ntask = n;
    /* (op, dst) -> that op's output transfer tasks into dst (CSR) */
    ofirst = (int *)kt__calloc((size_t)(g->nop * nd) + 2, sizeof(int));
    olist = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    if (!ofirst || !olist) goto nomem;
    for (i = prog->ntask; i < n; i++)
        if (role_of[i] == g->op[out->task[i].op].ninputs)
            ofirst[out->task[i].op * nd + out->task[i].dst + 1]++;
    for (i = 0; i < (int)(g->nop * nd); i++) ofirst[i + 1] += ofirst[i];
    {
        int *fill = (int *)kt__calloc((size_t)(g->nop * nd) + 1, sizeof(int));
        if (!fill) goto nomem;
        for (i = prog->ntask; i < n; i++)
            if (role_of[i] == g->op[out->task[i].op].ninputs) {
                int64_t key = out->task[i].op * nd + out->task[i].dst;
                olist[ofirst[key] + fill[key]++] = i;
            }
        KT_FREE(fill);
    }
    /* Dependencies.  The data of tensor X on device d is ready when X's
       producer has run on d and its output transfers into d are done. */
    for (o = 0; o < g->nop && s == KT_OK; o++) {
        const kt_op *op = &g->op[o];
        for (d = 0; d < nd; d++) {
            int task = (int)(o * nd + d), j;
            /* the device's program order (Tofu 6 control dependencies):
               each op after the one before it in the schedule */
            if (prev[o] >= 0 && !kt__edge2(&e, task, (int)(prev[o] * nd + d)))
                goto nomem;
            for (j = 0; j < op->ninputs; j++) {
                int pr = g->tensor[op->input[j]].producer;
                if (pr < 0) continue;
                if (!kt__edge2(&e, task, (int)(pr * nd + d))) goto nomem;
                for (i = ofirst[pr * nd + d]; i < ofirst[pr * nd + d + 1]; i++)
                    if (!kt__edge2(&e, task, olist[i])) goto nomem;
            }
        }
        for (i = first[o]; i < first[o + 1]; i++) {
            kt_sim_task *st = &out->task[i];
            if (role_of[i] < op->ninputs) {
                /* an input transfer: inputs before the op runs on dst */
                int pr = g->tensor[tensor_of[i]].producer, k;
                if (!kt__edge2(&e, (int)(o * nd + st->dst), i)) goto nomem;
                if (pr >= 0) {
                    int64_t key = pr * nd + st->src;
                    if (!kt__edge2(&e, i, (int)(pr * nd + st->src))) goto nomem;
                    for (k = ofirst[key]; k < ofirst[key + 1]; k++)
                        if (!kt__edge2(&e, i, olist[k])) goto nomem;
                }
            } else {
                /* output: after the op ran on src; copies after the
                   reductions into src */
                int k;
                if (!kt__edge2(&e, i, (int)(o * nd + st->src))) goto nomem;
                if (kind_of[i] == KT_XFER_COPY) {
                    int64_t key = o * nd + st->src;
                    for (k = ofirst[key]; k < ofirst[key + 1]; k++)
                        if (kind_of[olist[k]] == KT_XFER_REDUCE &&
                            !kt__edge2(&e, i, olist[k]))
                            goto nomem;
                }
            }
        }
        /* an in-place update waits for every transfer reading the old
           value out of its device */
        if (op->in_place) {
            if (!readers) {
                /* tensor -> the input transfer tasks reading it (CSR) */
                int *fill, x;
                rfirst = (int *)kt__calloc((size_t)g->ntensor + 2, sizeof(int));
                readers = (int *)kt__calloc((size_t)n + 1, sizeof(int));
                fill = (int *)kt__calloc((size_t)g->ntensor + 1, sizeof(int));
                if (!rfirst || !readers || !fill) {
                    KT_FREE(fill);
                    goto nomem;
                }
                for (i = prog->ntask; i < n; i++)
                    if (role_of[i] < g->op[out->task[i].op].ninputs)
                        rfirst[tensor_of[i] + 1]++;
                for (x = 0; x < g->ntensor; x++) rfirst[x + 1] += rfirst[x];
                for (i = prog->ntask; i < n; i++)
                    if (role_of[i] < g->op[out->task[i].op].ninputs)
                        readers[rfirst[tensor_of[i]] + fill[tensor_of[i]]++] = i;
                KT_FREE(fill);
            }
            /* its own input transfers too: they read the old value */
            for (i = rfirst[op->output]; i < rfirst[op->output + 1]; i++) {
                int k = readers[i];
                if (!kt__edge2(&e, (int)(o * nd + out->task[k].src), k))
                    goto nomem;
            }
        }
    }
    /* edges -> per-task predecessor lists */
    out->pred = (int *)kt__calloc((size_t)e.n + 1, sizeof(int));
    if (!out->pred) goto nomem;
    for (i = 0; i < e.n; i++) out->task[e.task[i]].npred++;
    for (i = 0, n = 0; i < out->ntask; i++) {
        out->task[i].pred_first = n;
        n += out->task[i].npred;
        out->task[i].npred = 0;
    }
    for (i = 0; i < e.n; i++) {
        kt_sim_task *st = &out->task[e.task[i]];
        out->pred[st->pred_first + st->npred++] = e.pred[i];
    }
    goto done;
nomem:
    s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory building the task "
                 "graph");
    kt_sim_free(out);
done:
    KT_FREE(links.key);
    KT_FREE(links.id);
    KT_FREE(prev);
    KT_FREE(ofirst);
    KT_FREE(olist);
    KT_FREE(sorted);
    KT_FREE(rfirst);
    KT_FREE(readers);
    KT_FREE(role_of);
    KT_FREE(kind_of);
    KT_FREE(tensor_of);
    KT_FREE(first);
    KT_FREE(e.task);
    KT_FREE(e.pred);
    if (s == KT_OK) kt__ok(err);
    return s;
}

/* Min-heap of (ready time, task), ties by task index: deterministic. */
static int kt__heap_less(const double *ready, int a, int b) {
    return ready[a] < ready[b] || (ready[a] == ready[b] && a < b);
}

static void kt__heap_push(int *h, int *n, const double *ready, int x) {
    int i = (*n)++;
    h[i] = x;
    while (i > 0 && kt__heap_less(ready, h[i], h[(i - 1) / 2])) {
        int t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static int kt__heap_pop(int *h, int *n, const double *ready) {
    int top = h[0], i = 0;
    h[0] = h[--(*n)];
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i, t;
        if (l < *n && kt__heap_less(ready, h[l], h[m])) m = l;
        if (r < *n && kt__heap_less(ready, h[r], h[m])) m = r;
        if (m == i) break;
        t = h[m];
        h[m] = h[i];
        h[i] = t;
        i = m;
    }
    return top;
}

/* FlexFlow Algorithm 1: tasks become ready when their predecessors end;
   in order of readiness each starts when its device (a compute device or
   a link) is free, so every device runs its tasks in FIFO order. */
kt_status kt_sim_run(kt_sim *s, kt_error *err) {
    int n = s->ntask, i, j, nh = 0, done = 0, last = -1;
    int64_t nres = s->ndev + s->nlink;
    double *ready = (double *)kt__calloc((size_t)n + 1, sizeof(double));
    double *free_at = (double *)kt__calloc((size_t)nres + 1, sizeof(double));
    int *res_last = (int *)kt__calloc((size_t)nres + 1, sizeof(int));
    int *indeg = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    int *blocker = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    int *heap = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    int *sfirst = (int *)kt__calloc((size_t)n + 2, sizeof(int));
    int *succ = NULL;
    kt_status st = KT_OK;
    if (!ready || !free_at || !res_last || !indeg || !blocker || !heap ||
        !sfirst) {
        st = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory simulating");
        goto out;
    }
    for (i = 0; i < n; i++) {
        indeg[i] = s->task[i].npred;
        for (j = 0; j < s->task[i].npred; j++)
            sfirst[s->pred[s->task[i].pred_first + j] + 1]++;
    }
    for (i = 0; i < n; i++) sfirst[i + 1] += sfirst[i];
    succ = (int *)kt__calloc((size_t)sfirst[n] + 1, sizeof(int));
    if (!succ) {
        st = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory simulating");
        goto out;
    }
    {
        int *fill = (int *)kt__calloc((size_t)n + 1, sizeof(int));
        if (!fill) {
            st = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory simulating");
            goto out;
        }
        for (i = 0; i < n; i++)
            for (j = 0; j < s->task[i].npred; j++) {
                int pr = s->pred[s->task[i].pred_first + j];
                succ[sfirst[pr] + fill[pr]++] = i;
            }
        KT_FREE(fill);
    }
    {
        int64_t r;
        for (r = 0; r < nres; r++) res_last[r] = -1;
    }
    for (i = 0; i < n; i++) {
        blocker[i] = -1;
        if (indeg[i] == 0) kt__heap_push(heap, &nh, ready, i);
    }
    s->step_seconds = 0;
    for (i = 0; i < s->ndev; i++) s->busy[i] = 0;
    while (nh > 0) {
        int t = kt__heap_pop(heap, &nh, ready);
        kt_sim_task *k = &s->task[t];
        int64_t r = k->device;
        k->start = ready[t];
        if (free_at[r] > k->start) {
            k->start = free_at[r];
            blocker[t] = res_last[r]; /* waited for its device */
        }
        k->end = k->start + k->seconds;
        free_at[r] = k->end;
        res_last[r] = t;
        if (k->kind == KT_TASK_COMPUTE) s->busy[k->device] += k->seconds;
        if (k->end > s->step_seconds || last < 0) {
            s->step_seconds = k->end;
            last = t;
        }
        done++;
        for (j = sfirst[t]; j < sfirst[t + 1]; j++) {
            int u = succ[j];
            if (k->end >= ready[u]) {
                ready[u] = k->end;
                blocker[u] = t; /* the latest predecessor so far */
            }
            if (--indeg[u] == 0) kt__heap_push(heap, &nh, ready, u);
        }
    }
    if (done < n) {
        st = kt__fail(err, KT_ERR_INTERNAL, 0, "the task graph has a cycle");
        goto out;
    }
    /* the critical path: from the last task back through what it waited
       for */
    KT_FREE(s->critical);
    s->ncritical = 0;
    s->critical = (int *)kt__calloc((size_t)n + 1, sizeof(int));
    if (!s->critical) {
        st = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory simulating");
        goto out;
    }
    for (i = last; i >= 0 && s->ncritical < n; i = blocker[i])
        s->critical[s->ncritical++] = i;
    for (i = 0; i < s->ncritical / 2; i++) {
        int tmp = s->critical[i];
        s->critical[i] = s->critical[s->ncritical - 1 - i];
        s->critical[s->ncritical - 1 - i] = tmp;
    }
    kt__ok(err);
out:
    KT_FREE(ready);
    KT_FREE(free_at);
    KT_FREE(res_last);
    KT_FREE(indeg);
    KT_FREE(blocker);
    KT_FREE(heap);
    KT_FREE(sfirst);
    KT_FREE(succ);
    return st;
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

/* Simulated step time of a plan on t. */
static kt_status kt__plan_time(const kt_graph *g, const kt_plan *p,
                               const kt_topology *t, double *seconds,
                               kt_error *err) {
    kt_program prog;
    kt_sim sim;
    kt_status s = kt_lower(g, p, &prog, err);
    if (s != KT_OK) return s;
    s = kt_sim_build(g, p, &prog, t, &sim, err);
    if (s == KT_OK) s = kt_sim_run(&sim, err);
    if (s == KT_OK) *seconds = sim.step_seconds;
    kt_sim_free(&sim);
    kt_program_free(&prog);
    return s;
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

kt_status kt_plan_mcmc(const kt_graph *g, const kt_factors *f,
                       const kt_topology *t, const kt_mcmc_options *opt,
                       kt_plan *p, double *step_seconds, int64_t *tried,
                       int64_t *accepted, kt_error *err) {
    kt_mcmc_options o;
    kt_search_options so;
    kt_machine m = kt_topology_machine(t);
    kt_plan cur, next;
    double start = kt__now(), cur_time, best_time = -1, next_time;
    uint64_t rng;
    int chain, o_idx;
    kt_status s = KT_OK;
    memset(&o, 0, sizeof o);
    if (opt) o = *opt;
    if (o.restarts <= 0) o.restarts = 2;
    if (o.beta <= 0) o.beta = 20;
    if (o.seconds <= 0 && o.proposals <= 0) o.proposals = 1000;
    rng = o.seed ? o.seed : UINT64_C(0x9e3779b97f4a7c15);
    *tried = *accepted = 0;
    memset(p, 0, sizeof *p);
    if (kt_factors_devices(f) != t->ndev)
        return kt__fail(err, KT_ERR_INVALID, 0, "mcmc: the topology has %lld "
                        "devices, the factors %lld", (long long)t->ndev,
                        (long long)kt_factors_devices(f));
    if (g->nop == 0)
        return kt__fail(err, KT_ERR_INVALID, 0, "mcmc: the graph has no ops");
    memset(&so, 0, sizeof so);
    so.machine = &m;
    for (chain = 0; chain < o.restarts; chain++) {
        int64_t budget = o.proposals ? o.proposals / o.restarts : 0, step;
        /* chain 0 from data parallelism (the DP plan where it does not
           apply), the others from random plans: every op proposed once */
        so.strategy = KT_STRATEGY_DATA;
        s = kt_plan_search(g, f, &so, &cur, err);
        if (s != KT_OK) {
            so.strategy = KT_STRATEGY_DP;
            s = kt_plan_search(g, f, &so, &cur, err);
        }
        if (s != KT_OK) break;
        if (chain > 0)
            for (o_idx = 0; o_idx < g->nop; o_idx++)
                (void)kt__propose(g, &cur, o_idx, &rng);
        if ((s = kt__plan_time(g, &cur, t, &cur_time, err)) != KT_OK) {
            kt_plan_free(&cur);
            break;
        }
        if (best_time < 0 || cur_time < best_time) {
            kt_plan_free(p);
            if ((s = kt__plan_copy(p, &cur, g, err)) != KT_OK) {
                kt_plan_free(&cur);
                break;
            }
            best_time = cur_time;
        }
        for (step = 0; s == KT_OK; step++) {
            int op;
            if (budget && step >= budget) break;
            if (!budget && kt__now() - start >
                                o.seconds * (chain + 1) / o.restarts)
                break;
            if ((s = kt__plan_copy(&next, &cur, g, err)) != KT_OK) break;
            (*tried)++;
            if (kt__rng(&rng) & 1) {
                op = (int)(kt__rng(&rng) % (uint64_t)g->nop);
                if (!kt__propose(g, &next, op, &rng)) op = -1;
            } else {
                op = (int)(kt__rng(&rng) % (uint64_t)g->ntensor);
                kt__propose_tensor(g, &next, op, &rng);
            }
            if (op < 0) {
                kt_plan_free(&next);
                continue;
            }
            s = kt__plan_time(g, &next, t, &next_time, err);
            if (s != KT_OK) {
                kt_plan_free(&next);
                break;
            }
            /* Metropolis on the relative change (FlexFlow 6) */
            if (next_time <= cur_time ||
                kt__rng_unit(&rng) <
                    exp(-o.beta * (next_time - cur_time) / cur_time)) {
                kt_plan_free(&cur);
                cur = next;
                cur_time = next_time;
                (*accepted)++;
                if (cur_time < best_time) {
                    kt_plan_free(p);
                    if ((s = kt__plan_copy(p, &cur, g, err)) != KT_OK) break;
                    best_time = cur_time;
                }
            } else {
                kt_plan_free(&next);
            }
        }
        kt_plan_free(&cur);
    }
    if (s == KT_OK) s = kt_plan_eval(g, p, err);
    if (s != KT_OK) {
        kt_plan_free(p);
        return s;
    }
    p->memory_bytes = kt_plan_memory(g, p);
    p->step_seconds = best_time;
    p->search_seconds = kt__now() - start;
    *step_seconds = best_time;
    kt__ok(err);
    return KT_OK;
}

/* ---------------------------------------------- gradient synchronisation */

double kt_sync_ps_worker(int64_t m, int64_t n) {
    return 2.0 * (double)m * (double)n;
}

double kt_sync_ps_server(int64_t m, int64_t n, int64_t p1, int64_t p2) {
    return 2.0 * (double)p1 * (double)m * (double)n / (double)p2;
}

double kt_sync_ps_both(int64_t m, int64_t n, int64_t p1, int64_t p2) {
    return 2.0 * (double)m * (double)n * (double)(p1 + p2 - 2) / (double)p2;
}

double kt_sync_sfb(int64_t m, int64_t n, int64_t k, int64_t p1) {
    return 2.0 * (double)k * (double)(p1 - 1) * (double)(m + n);
}

double kt_sync_collective(kt_collective c, double bytes, int64_t w,
                          double bandwidth, double phi, double delta) {
    double times;
    switch (c) {
    case KT_ALLREDUCE: times = 2.0 * (double)(w - 1) / (double)w; break;
    case KT_REDUCESCATTER:
    case KT_ALLGATHER: times = (double)(w - 1) / (double)w; break;
    default: times = 1; break; /* broadcast, reduce */
    }
    return times * bytes / bandwidth + (double)w * phi + delta;
}

#endif /* KT_SCHED_IMPLEMENTED */
#endif /* KT_IMPLEMENTATION */
