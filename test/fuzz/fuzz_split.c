/* fuzz_split.c -- libFuzzer harness for kt_plan_parse_split (an op's
   strategy in a --plan file, "i.j", "*" for a replicated cut).  Byte 0
   picks the cut count (0 to 3), byte 1 the op of a training MLP, the rest
   is the text.  On KT_OK every cut's variable is an index variable of the
   op or KT_SPLIT_REPLICATE, and kt_plan_format_split writes back text
   that parses to the same strategy. */
#define KT_IMPLEMENTATION
#include "../../sched.h"
#include "fuzz_common.h"

static kt_graph *graph(void) {
    return fuzz_zoo_graph("mlp:layers=2,hidden=64,batch=8");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const kt_graph *g = graph();
    kt_factors f;
    kt_plan p, q;
    kt_error err;
    kt_status s;
    char *text, back[KT_MAX_CUTS * (KT_NAME_MAX + 1) + 2];
    int op, i;
    if (size < 2) return 0;
    memset(&f, 0, sizeof f);
    f.count = data[0] % 4;
    for (i = 0; i < f.count; i++) f.k[i] = 2;
    op = data[1] % kt_graph_op_count(g);
    text = fuzz_cstr(data + 2, size - 2);
    FUZZ_REQUIRE(kt_plan_init(&p, g, &f, &err) == KT_OK);
    FUZZ_REQUIRE(kt_plan_init(&q, g, &f, &err) == KT_OK);
    memset(&err, 0x55, sizeof err);
    s = kt_plan_parse_split(g, &p, op, text, &err);
    fuzz_check_status(s, &err);
    if (s == KT_OK) {
        const kt_op *o = kt_graph_op(g, op);
        for (i = 0; i < f.count; i++) {
            int v = p.split[op * KT_MAX_CUTS + i];
            FUZZ_REQUIRE(v == KT_SPLIT_REPLICATE || (v >= 0 && v < o->nvars));
        }
        FUZZ_REQUIRE(kt_plan_format_split(g, &p, op, back, sizeof back) <
                     (int)sizeof back);
        FUZZ_REQUIRE(kt_plan_parse_split(g, &q, op, back, &err) == KT_OK);
        FUZZ_REQUIRE(memcmp(&p.split[op * KT_MAX_CUTS],
                            &q.split[op * KT_MAX_CUTS],
                            (size_t)f.count * sizeof(int)) == 0);
    }
    kt_plan_free(&p);
    kt_plan_free(&q);
    free(text);
    return 0;
}
