/* kt_test_staged.h -- the hand-staged program test_cpu.c and
   test_swap_exec.c both run: a relayed fetch, a two-level reduction tree
   and a relayed broadcast (stages 0 to 3), built by hand so that it does
   not depend on kt_lower's trees.  Included after the ktile headers and
   "kt_test.h". */
#ifndef KT_TEST_STAGED_H
#define KT_TEST_STAGED_H

/* x . W on 4 devices, 2 nodes of 2 (factors 2,2), data parallel (both
   cuts on i): W split by rows between the nodes (S0.R), so every device
   fetches the other node's half; then s, summed over the batch: a
   partial sum on every device, wanted whole by every device (R.R). */
static const char staged_src[] = "input x[8,6]\nweight W[6,8]\n"
                                 "h[i,k] = sum(j) x[i,j] * W[j,k]\n"
                                 "s[k] = sum(i) h[i,k]\n";

static int staged_plan(const kt_graph *g, kt_plan *p) {
    static const char *const tiling[4][2] = {
        {"x", "S0.S0"}, {"W", "S0.R"}, {"h", "S0.S0"}, {"s", "R.R"}};
    kt_factors f;
    kt_error err;
    int k, o, v;
    if (kt_factors_parse("2,2", &f, &err) != KT_OK ||
        kt_plan_init(p, g, &f, &err) != KT_OK) {
        CHECKF(0, "staged plan: %s", err.message);
        return 0;
    }
    for (k = 0; k < 4; k++)
        CHECK(kt_tiling_parse(tiling[k][1],
                              &p->tiling[kt_graph_find_tensor(g, tiling[k][0])],
                              &err) == KT_OK);
    for (o = 0; o < kt_graph_op_count(g); o++) {
        const kt_op *op = kt_graph_op(g, o);
        for (v = 0; v < op->nvars && strcmp(op->var[v].name, "i"); v++) {}
        p->split[o * KT_MAX_CUTS] = p->split[o * KT_MAX_CUTS + 1] = v;
    }
    return 1;
}

/* Appends a transfer of tensor t for op o: rows [lo, hi) of t (all of
   its other dimensions). */
static void staged_add(const kt_graph *g, kt_program *c, int o, int t,
                       int64_t src, int64_t dst, int64_t lo, int64_t hi,
                       kt_xfer_kind kind, int stage, int relay) {
    const kt_op *op = kt_graph_op(g, o);
    const kt_tensor *x = kt_graph_tensor(g, t);
    kt_transfer *y = &c->xfer[c->nxfer++];
    int d, j;
    int64_t n = 1;
    for (j = 0; j < op->ninputs && op->input[j] != t; j++) {}
    memset(y, 0, sizeof *y);
    y->op = o;
    y->role = j;
    y->tensor = t;
    y->src = src;
    y->dst = dst;
    for (d = 0; d < x->rank; d++) {
        y->region.r[d].lo = d ? 0 : lo;
        y->region.r[d].hi = d ? x->shape[d] : hi;
        n *= y->region.r[d].hi - y->region.r[d].lo;
    }
    y->bytes = n * x->elem_bytes;
    y->kind = kind;
    y->stage = stage;
    y->relay = relay;
    c->total_bytes += y->bytes;
}

/* The program of staged_plan as kt_lower stages collectives (sched.h),
   by hand on kt_lower's tasks: in each node the first device fetches the
   other node's half of W (stage 0) and relays it to the second (stage
   1).  s's part r (elements 2r, 2r + 1) has its root on device r and is
   reduced by a tree -- r's node-mate into r and the other node's second
   device into its first (stage 0), that one into r (stage 1) -- and sent
   down one: from r to its mate and to the other node's first device
   (stage 2), which relays the sum it stored to its mate (stage 3).  As
   many transfers, of the same sizes, as the flat lowering: the same
   bytes.  Its arrays are malloc'd (kt_program_free frees them). */
static int staged_program(const kt_graph *g, const kt_plan *p,
                          kt_program *c) {
    int W = kt_graph_find_tensor(g, "W"), S = kt_graph_find_tensor(g, "s");
    kt_program flat;
    kt_error err;
    int x, node, r;
    memset(c, 0, sizeof *c);
    if (kt_lower(g, p, &flat, &err) != KT_OK) {
        CHECKF(0, "staged: %s", err.message);
        return 0;
    }
    /* kt_lower converts W (op h, 0) and s (op s, 1) alone: these replace
       all its transfers */
    for (x = 0; x < flat.nxfer; x++)
        CHECK(flat.xfer[x].tensor == W || flat.xfer[x].tensor == S);
    c->ndev = flat.ndev;
    c->nops = flat.nops;
    c->ntask = flat.ntask;
    c->task = (kt_task *)malloc(sizeof *c->task * (size_t)flat.ntask);
    c->xfer = (kt_transfer *)malloc(sizeof *c->xfer * 28);
    c->xfer_first = (int *)calloc((size_t)flat.nops + 1, sizeof(int));
    if (c->task)
        memcpy(c->task, flat.task, sizeof *c->task * (size_t)flat.ntask);
    kt_program_free(&flat);
    if (!c->task || !c->xfer || !c->xfer_first || c->ndev != 4 ||
        c->nops != 2) {
        CHECK(0);
        kt_program_free(c);
        return 0;
    }
    for (node = 0; node < 2; node++) {
        int64_t lo = 3 * (1 - node); /* the other node's rows of W */
        staged_add(g, c, 0, W, 2 * (1 - node), 2 * node, lo, lo + 3,
                   KT_XFER_COPY, 0, 0);
        staged_add(g, c, 0, W, 2 * node, 2 * node + 1, lo, lo + 3,
                   KT_XFER_COPY, 1, 1);
    }
    c->xfer_first[1] = c->nxfer;
    for (r = 0; r < 4; r++) { /* part r: s[2r .. 2r + 2) */
        staged_add(g, c, 1, S, r ^ 1, r, 2 * r, 2 * r + 2, KT_XFER_REDUCE,
                   0, 0);
        staged_add(g, c, 1, S, r ^ 3, r ^ 2, 2 * r, 2 * r + 2, KT_XFER_REDUCE,
                   0, 0);
        staged_add(g, c, 1, S, r ^ 2, r, 2 * r, 2 * r + 2, KT_XFER_REDUCE,
                   1, 0);
    }
    for (r = 0; r < 4; r++) {
        staged_add(g, c, 1, S, r, r ^ 1, 2 * r, 2 * r + 2, KT_XFER_COPY, 2, 0);
        staged_add(g, c, 1, S, r, r ^ 2, 2 * r, 2 * r + 2, KT_XFER_COPY, 2, 0);
        staged_add(g, c, 1, S, r ^ 2, r ^ 3, 2 * r, 2 * r + 2, KT_XFER_COPY,
                   3, 1);
    }
    c->xfer_first[2] = c->nxfer;
    return 1;
}

#endif
