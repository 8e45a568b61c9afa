/* fuzz_schedule.c -- libFuzzer harness for kt_schedule_check (an op order
   given as input): the first byte picks a graph (a training MLP, with
   in-place weight updates, or a small RNN), the rest are the order as
   little-endian 32-bit ints, any value.  The check must accept exactly
   the permutations that respect every dependence: on KT_OK the harness
   checks that itself, so a wrong acceptance is a failure too. */
#define KT_IMPLEMENTATION
#include "../../sched.h"
#include "fuzz_common.h"

static kt_graph *graph(int which) {
    static kt_graph *g[2];
    static const char *const spec[2] = {
        "mlp:layers=2,hidden=16,batch=4",
        "rnn:layers=1,hidden=8,steps=2,batch=2"};
    kt_error err;
    if (!g[which])
        FUZZ_REQUIRE(kt_zoo_build(spec[which], &g[which], &err) == KT_OK);
    return g[which];
}

/* order is a permutation in which every op runs after the producers of
   its inputs and an in-place update after every other reader. */
static void check_order(const kt_graph *g, const int *order, int n) {
    int pos[4096], i, j, o2;
    FUZZ_REQUIRE(n == kt_graph_op_count(g) && n <= 4096);
    for (i = 0; i < n; i++) pos[i] = -1;
    for (i = 0; i < n; i++) {
        FUZZ_REQUIRE(order[i] >= 0 && order[i] < n && pos[order[i]] < 0);
        pos[order[i]] = i;
    }
    for (i = 0; i < n; i++) {
        const kt_op *op = kt_graph_op(g, i);
        for (j = 0; j < op->ninputs; j++) {
            int pr = kt_graph_tensor(g, op->input[j])->producer;
            FUZZ_REQUIRE(pr < 0 || pr == i || pos[pr] < pos[i]);
        }
        if (op->in_place)
            for (o2 = 0; o2 < n; o2++)
                for (j = 0; j < kt_graph_op(g, o2)->ninputs; j++)
                    if (o2 != i && kt_graph_op(g, o2)->input[j] == op->output)
                        FUZZ_REQUIRE(pos[o2] < pos[i]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const kt_graph *g;
    int *order, n, i;
    kt_error err;
    kt_status s;
    if (size < 1) return 0;
    g = graph(data[0] & 1);
    n = (int)((size - 1) / 4);
    order = (int *)malloc((size_t)n * sizeof *order + 1);
    FUZZ_REQUIRE(order != NULL);
    for (i = 0; i < n; i++) {
        const uint8_t *b = data + 1 + 4 * i;
        order[i] = (int)((uint32_t)b[0] | (uint32_t)b[1] << 8 |
                         (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
    }
    memset(&err, 0x55, sizeof err);
    s = kt_schedule_check(g, order, n, &err);
    fuzz_check_status(s, &err);
    if (s == KT_OK) check_order(g, order, n);
    free(order);
    return 0;
}
