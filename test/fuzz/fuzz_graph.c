/* fuzz_graph.c -- libFuzzer harness for kt_graph_parse (the model file
   text behind --model-file), then what the CLI does next with a parsed
   file: the backward pass when it has a `loss` line, and, for graphs
   small enough, a DP plan on 2 devices and its exact price.  On KT_OK
   every op's output and inputs are tensors of the graph and every tensor
   a non-negative shape; kt_graph_destroy frees everything (LeakSanitizer
   sees the rest). */
#define KT_IMPLEMENTATION
#include "../../sched.h"
#include "fuzz_common.h"

static void check_graph(const kt_graph *g) {
    int nt = kt_graph_tensor_count(g), no = kt_graph_op_count(g), i, j;
    for (i = 0; i < nt; i++) {
        const kt_tensor *t = kt_graph_tensor(g, i);
        FUZZ_REQUIRE(t->rank >= 0 && t->rank <= KT_MAX_DIMS);
        for (j = 0; j < t->rank; j++) FUZZ_REQUIRE(t->shape[j] >= 1);
        FUZZ_REQUIRE(kt_graph_find_tensor(g, t->name) == i);
    }
    for (i = 0; i < no; i++) {
        const kt_op *op = kt_graph_op(g, i);
        FUZZ_REQUIRE(op->output >= 0 && op->output < nt);
        FUZZ_REQUIRE(op->nvars >= 0 && op->nvars <= KT_MAX_VARS);
        for (j = 0; j < op->ninputs; j++)
            FUZZ_REQUIRE(op->input[j] >= 0 && op->input[j] < nt);
    }
}

/* A DP plan on 2 devices, priced exactly: it must cost what the search
   says it does. */
static void plan_graph(const kt_graph *g) {
    kt_plan p;
    kt_error err;
    kt_status s;
    int64_t searched;
    if (fuzz_dp_plan_2(g, &p) != KT_OK) return;
    searched = p.total_bytes;
    s = kt_plan_eval(g, &p, &err);
    fuzz_check_status(s, &err);
    FUZZ_REQUIRE(s != KT_OK || p.total_bytes == searched);
    kt_plan_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    kt_graph *g = NULL;
    kt_error err;
    kt_status s;
    char *text = fuzz_cstr(data, size);
    FUZZ_REQUIRE(kt_graph_create(&g, &err) == KT_OK);
    memset(&err, 0x55, sizeof err);
    s = kt_graph_parse(g, text, size, &err);
    fuzz_check_status(s, &err);
    if (s == KT_OK) {
        check_graph(g);
        if (kt_graph_loss(g) >= 0) {
            s = kt_graph_autodiff(g, NULL, &err);
            fuzz_check_status(s, &err);
            if (s == KT_OK) check_graph(g);
        }
        if (s == KT_OK && kt_graph_op_count(g) <= 32) plan_graph(g);
    }
    kt_graph_destroy(g);
    free(text);
    return 0;
}
