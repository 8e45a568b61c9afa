/* fuzz_profile.c -- libFuzzer harness for kt_profile_parse (measured
   run-time tables, `ktile sim --profile`) against a small training MLP.
   The text is passed with its length, NULs included, as the parser takes
   it.  On KT_OK every entry names an op of the graph with its variable
   count, extents 1 .. the variable's, a positive finite time, a valid
   kind name or none, sorted without duplicates; and every entry is found
   again by kt_profile_lookup_kind. */
#define KT_IMPLEMENTATION
#include "../../sched.h"
#include "fuzz_common.h"

static kt_graph *graph(void) {
    return fuzz_zoo_graph("mlp:layers=2,hidden=64,batch=8");
}

static void check_profile(const kt_graph *g, const kt_profile *p) {
    int i, v;
    FUZZ_REQUIRE(p->n >= 0 && (p->n == 0 || p->entry));
    for (i = 0; i < p->n; i++) {
        const kt_profile_entry *e = &p->entry[i];
        const kt_op *op;
        kt_range box[KT_MAX_VARS];
        FUZZ_REQUIRE(e->op >= 0 && e->op < kt_graph_op_count(g));
        op = kt_graph_op(g, e->op);
        FUZZ_REQUIRE(e->nvars == op->nvars);
        for (v = 0; v < e->nvars; v++) {
            FUZZ_REQUIRE(e->extent[v] >= 1 &&
                         e->extent[v] <= op->var[v].extent);
            box[v].lo = 0;
            box[v].hi = e->extent[v];
        }
        FUZZ_REQUIRE(fuzz_finite_positive(e->seconds));
        FUZZ_REQUIRE(memchr(e->kind, '\0', KT_KIND_NAME_MAX));
        FUZZ_REQUIRE(kt_profile_lookup_kind(p, e->op, box, e->nvars,
                                            e->kind) == e->seconds);
        if (i > 0) FUZZ_REQUIRE(kt__cmp_profile(&p->entry[i - 1], e) < 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const kt_graph *g = graph();
    kt_profile p;
    kt_error err;
    kt_status s;
    char *text = fuzz_cstr(data, size); /* a heap copy: ASan sees overruns */
    memset(&err, 0x55, sizeof err);
    s = kt_profile_parse(g, text, size, &p, &err);
    fuzz_check_status(s, &err);
    if (s == KT_OK) check_profile(g, &p);
    else FUZZ_REQUIRE(p.n == 0 && p.entry == NULL);
    kt_profile_free(&p);
    free(text);
    return 0;
}
