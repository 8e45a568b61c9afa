/* fuzz_eval.c -- differential libFuzzer harness for the CPU backend's
   evaluator: a model file (with its backward pass when it has a `loss`
   line) small enough to run is executed serially twice from the same
   inputs, with the fast paths (matrix products, narrowed sums by buffer
   offsets, element-wise spans, runs of back-to-back rows) and with the
   reference evaluator point by point (kt_cpu_options.reference_only).
   Every element the reference computes finite must agree within a
   tolerance scaled to its tensor: the fast paths may add in another
   order (matrix products), and skip products whose padded factor is out
   of its tensor (0 * x taken as 0), so where the reference meets an
   infinity or a NaN nothing is asked.  Then the DP plan on 2 devices is
   verified: the partitioned run must move the predicted bytes and, when
   every value is finite and of moderate size, agree with the serial
   one. */
#define KT_IMPLEMENTATION
#include "../../backend_cpu.h"
#include "fuzz_common.h"

enum { FUZZ_MAX_ELEMENTS = 50000, FUZZ_MAX_OPS = 64 };
#define FUZZ_MAX_POINTS 2e6 /* index points of one op */

/* Whether a run of g takes at most a few milliseconds. */
static int small_enough(const kt_graph *g) {
    int64_t elements = 0;
    int t, o, v;
    if (kt_graph_op_count(g) > FUZZ_MAX_OPS) return 0;
    for (t = 0; t < kt_graph_tensor_count(g); t++) {
        const kt_tensor *x = kt_graph_tensor(g, t);
        int64_t n = 1;
        for (v = 0; v < x->rank; v++) n *= x->shape[v];
        elements += n;
        if (elements > FUZZ_MAX_ELEMENTS) return 0;
    }
    for (o = 0; o < kt_graph_op_count(g); o++) {
        const kt_op *op = kt_graph_op(g, o);
        double points = 1;
        for (v = 0; v < op->nvars; v++) points *= (double)op->var[v].extent;
        if (points > FUZZ_MAX_POINTS) return 0;
    }
    return 1;
}

/* 1 when every value of s is finite and at most `limit` in size. */
static int tame(const kt_cpu_state *s, double limit) {
    int t;
    int64_t i;
    for (t = 0; t < s->ntensors; t++)
        for (i = 0; i < s->numel[t]; i++)
            if (!(fabs((double)s->val[t][i]) <= limit)) return 0;
    return 1;
}

/* The fast run against the reference run, tensor by tensor. */
static void compare_runs(const kt_cpu_state *fast, const kt_cpu_state *ref) {
    int t;
    int64_t i;
    for (t = 0; t < ref->ntensors; t++) {
        double scale = 0;
        for (i = 0; i < ref->numel[t]; i++) {
            double r = fabs((double)ref->val[t][i]);
            if (isfinite(r) && r > scale) scale = r;
        }
        for (i = 0; i < ref->numel[t]; i++) {
            double r = (double)ref->val[t][i], f = (double)fast->val[t][i];
            if (!isfinite(r)) continue;
            FUZZ_REQUIRE(fabs(f - r) <= 1e-9 * (fabs(r) + scale) + 1e-12);
        }
    }
}

static void run_serial_both(const kt_graph *g) {
    kt_cpu_state fast, ref;
    kt_cpu_options ro;
    kt_error err;
    kt_status s1, s2;
    FUZZ_REQUIRE(kt_cpu_state_init(&fast, g, &err) == KT_OK);
    FUZZ_REQUIRE(kt_cpu_state_init(&ref, g, &err) == KT_OK);
    kt_cpu_fill_inputs(g, &fast, 3);
    kt_cpu_fill_inputs(g, &ref, 3);
    memset(&ro, 0, sizeof ro);
    ro.reference_only = 1;
    s1 = kt_cpu_run_serial(g, &fast, NULL, &err);
    fuzz_check_status(s1, &err);
    s2 = kt_cpu_run_serial(g, &ref, &ro, &err);
    fuzz_check_status(s2, &err);
    FUZZ_REQUIRE(s1 == s2);
    if (s1 == KT_OK) compare_runs(&fast, &ref);
    kt_cpu_state_free(&fast);
    kt_cpu_state_free(&ref);
}

/* The DP plan on 2 devices, verified: bytes always, values when the
   serial step stays finite and below 1e6 (beyond, the tolerance's
   absolute part would have to grow with the values). */
static void verify_plan(const kt_graph *g) {
    kt_cpu_verify_options vo;
    kt_cpu_report rep;
    kt_cpu_state st;
    kt_plan p;
    kt_error err;
    kt_status s;
    int moderate;
    if (fuzz_dp_plan_2(g, &p) != KT_OK) return;
    FUZZ_REQUIRE(kt_cpu_state_init(&st, g, &err) == KT_OK);
    kt_cpu_fill_inputs(g, &st, 1);
    moderate = kt_cpu_run_serial(g, &st, NULL, &err) == KT_OK && tame(&st, 1e6);
    kt_cpu_state_free(&st);
    kt_cpu_verify_defaults(&vo);
    vo.tol = 1e-7;
    vo.run.threads = 2;
    s = kt_cpu_verify(g, &p, &vo, &rep, &err);
    fuzz_check_status(s, &err);
    if (s == KT_OK) {
        FUZZ_REQUIRE(rep.bytes_ok);
        if (moderate) FUZZ_REQUIRE(rep.values_ok);
    }
    kt_plan_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    kt_graph *g = NULL;
    kt_error err;
    kt_status s;
    char *text = fuzz_cstr(data, size);
    FUZZ_REQUIRE(kt_graph_create(&g, &err) == KT_OK);
    s = kt_graph_parse(g, text, size, &err);
    if (s == KT_OK && kt_graph_loss(g) >= 0)
        s = kt_graph_autodiff(g, NULL, &err);
    if (s == KT_OK && small_enough(g) && kt_cpu_check_graph(g, &err) == KT_OK) {
        run_serial_both(g);
        verify_plan(g);
    }
    kt_graph_destroy(g);
    free(text);
    return 0;
}
