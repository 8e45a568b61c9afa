/* fuzz_program.c -- libFuzzer harness for the CPU executor given a
   program it did not lower (kt_cpu_run_partitioned): a kt_program is the
   executor's input as much as a model file is the parser's, and
   backend_cpu.h promises to check it whole before any worker starts, so
   that the workers never read or write out of bounds and never race
   whatever they are given.  The program is kt_lower's for a
   model-parallel MLP on 4 devices as 2 x 2 (collectives over two levels:
   relays and reduction trees), edited by the input: 6 bytes an edit --
   which transfer (or task, or xfer_first entry), which field, and a
   value (small, negative, or just past a limit).  On KT_OK the bytes the
   workers moved are counted; on an error the status and message agree.
   `make race` replays the seeds (test/fuzz/fuzz_replay.c) under
   ThreadSanitizer, which looks for races between the workers (one per
   device here, the most that run at once): seed widened_region made two
   of them read and write one buffer before the executor refused such
   programs. */
#define KT_IMPLEMENTATION
#include "../../backend_cpu.h"
#include "fuzz_common.h"

struct base {
    kt_graph *g;
    kt_plan p;
    kt_program prog;
    kt_cpu_state leaves;
};

static struct base *base(void) {
    static struct base b;
    static int made;
    kt_error err;
    kt_factors f;
    kt_search_options so;
    if (made) return &b;
    b.g = fuzz_zoo_graph("mlp:layers=2,hidden=8,batch=8");
    memset(&so, 0, sizeof so);
    so.strategy = KT_STRATEGY_MODEL; /* partial sums and copies */
    FUZZ_REQUIRE(kt_factors_parse("2,2", &f, &err) == KT_OK);
    FUZZ_REQUIRE(kt_plan_search(b.g, &f, &so, &b.p, &err) == KT_OK);
    FUZZ_REQUIRE(kt_lower(b.g, &b.p, &b.prog, &err) == KT_OK);
    FUZZ_REQUIRE(kt_cpu_state_init(&b.leaves, b.g, &err) == KT_OK);
    kt_cpu_fill_inputs(b.g, &b.leaves, 1);
    made = 1;
    return &b;
}

/* A value from 3 bytes: mostly small (-8 .. 23, what indices and stages
   are), sometimes a whole int, sometimes near a limit. */
static int64_t edit_value(const uint8_t *v) {
    int64_t raw = (int64_t)v[1] << 8 | v[2];
    switch (v[0] % 4) {
    case 0:
    case 1: return (int64_t)(v[2] % 32) - 8;
    case 2: return raw - 32768;
    default: return (v[2] & 1 ? INT64_MAX - raw : INT64_MIN + raw);
    }
}

/* One edit: which (2 bytes), field (1 byte), value (3 bytes). */
static void apply(kt_program *c, const uint8_t *e) {
    int which = e[0] << 8 | e[1], field = e[2] % 24, d = field % 4;
    int64_t v = edit_value(e + 3);
    kt_transfer *t = &c->xfer[which % c->nxfer];
    kt_task *k = &c->task[which % c->ntask];
    switch (field / 4) {
    case 0: /* the transfer's devices, stage and flags */
        if (d == 0) t->src = v;
        if (d == 1) t->dst = v;
        if (d == 2) t->stage = (int)v;
        if (d == 3) t->relay = (int)v;
        break;
    case 1: /* what it belongs to */
        if (d == 0) t->op = (int)v;
        if (d == 1) t->role = (int)v;
        if (d == 2) t->tensor = (int)v;
        if (d == 3) t->kind = (kt_xfer_kind)v;
        break;
    case 2: t->region.r[d].lo = v; break;
    case 3: t->region.r[d].hi = v; break;
    case 4: /* a task's box, device or op */
        if (d < 2) k->box[which % 3].lo = v;
        if (d == 2) k->box[which % 3].hi = v;
        if (d == 3) k->device = v;
        break;
    default: /* the program's shape */
        if (d == 0) c->xfer_first[which % (c->nops + 1)] = (int)v;
        if (d == 1) t->bytes = v;
        if (d == 2) *t = c->xfer[(which >> 4) % c->nxfer]; /* a copy */
        if (d == 3) c->ndev = v;
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct base *b = base();
    kt_program c = b->prog;
    kt_cpu_devices dev;
    kt_cpu_options opt;
    kt_error err;
    kt_status s;
    size_t i;
    memset(&opt, 0, sizeof opt);
    opt.threads = (int)b->prog.ndev;
    c.task = (kt_task *)malloc(sizeof *c.task * (size_t)c.ntask);
    c.xfer = (kt_transfer *)malloc(sizeof *c.xfer * (size_t)c.nxfer);
    c.xfer_first = (int *)malloc(sizeof(int) * (size_t)(c.nops + 1));
    FUZZ_REQUIRE(c.task && c.xfer && c.xfer_first);
    memcpy(c.task, b->prog.task, sizeof *c.task * (size_t)c.ntask);
    memcpy(c.xfer, b->prog.xfer, sizeof *c.xfer * (size_t)c.nxfer);
    memcpy(c.xfer_first, b->prog.xfer_first, sizeof(int) * (size_t)(c.nops + 1));
    c.pairs = NULL;
    c.npairs = 0;
    for (i = 0; i + 6 <= size && i < 6 * 16; i += 6) apply(&c, data + i);
    memset(&err, 0x55, sizeof err);
    memset(&dev, 0, sizeof dev);
    s = kt_cpu_run_partitioned(b->g, &b->p, &c, &b->leaves, &opt, &dev, &err);
    if (s == KT_OK) {
        FUZZ_REQUIRE(dev.bytes_moved >= 0);
        kt_cpu_devices_free(&dev);
    } else { /* a lowering bug (KT_ERR_INTERNAL) is what this input is */
        FUZZ_REQUIRE(s > KT_OK && s <= KT_ERR_INTERNAL);
        FUZZ_REQUIRE(err.status == s);
        FUZZ_REQUIRE(err.message[0] != '\0');
        FUZZ_REQUIRE(memchr(err.message, '\0', sizeof err.message));
    }
    free(c.task);
    free(c.xfer);
    free(c.xfer_first);
    return 0;
}
