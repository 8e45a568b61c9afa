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
     per-device-pair byte matrix; parameter-server, sufficient-factor and
     collective cost models.  Still to come: topologies with latency, the
     task graph and FlexFlow's full and delta simulation, schedules, MCMC,
     `ktile sim`.

   HOW TO USE IT
     #define KT_IMPLEMENTATION in one C file before including it (it
     includes tiling.h itself).  Never put the ktile directory on the
     include path: this header's name would shadow POSIX <sched.h>.

   PUBLIC FUNCTIONS
     lowering    kt_lower kt_program_free
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
    int64_t *best = NULL;
    kt_status s;
    kt_transfer t;
    memset(&t, 0, sizeof t);
    t.op = op;
    t.role = role;
    t.tensor = tensor;
    if ((s = kt__grid_build(&grid, x->rank, x->shape, from, to, err)) != KT_OK)
        return s;
    memset(&held, 0, sizeof held);
    memset(&need, 0, sizeof need);
    best = (int64_t *)kt__calloc((size_t)q + 1, sizeof(int64_t));
    if (!best || !kt__cover_build(&held, &grid, from) ||
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
            int64_t roots[1024], nroots = 0, r;
            int longest = 0, d;
            for (i = n0; i < n1 && nroots < 1024; i++)
                if (kt__covers(&held, cell, need.dev[i]))
                    roots[nroots++] = need.dev[i];
            if (nroots == 0)
                for (i = h0; i < h1 && nroots < 1024; i++)
                    roots[nroots++] = held.dev[i];
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
                    kt__xfer_push(out, &t);
                }
            }
        }
    }
    if (s == KT_OK && out->oom)
        s = kt__fail(err, KT_ERR_NOMEM, 0, "out of memory for transfers");
done:
    KT_FREE(best);
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
