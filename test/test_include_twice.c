/* test_include_twice.c -- the stb pattern of including a header twice:
   first for its declarations (as a user's other files do), then once more
   with KT_IMPLEMENTATION defined.  Only the top headers are named the
   second time, so their implementation sections must pull in those of the
   headers they build on (tiling.h, sched.h); without that this program
   would not link. */
#include "../backend_cpu.h"
#include "../swap.h"

/* A user's file without KT_IMPLEMENTATION frees what a call allocated for
   it with kt_free: the KT_FREE macro exists only in the implementation. */
static int zoo_text_freed(void) {
    kt_error err;
    char *text = NULL;
    if (kt_zoo_text("mlp", &text, NULL, &err) != KT_OK || !text) return 0;
    kt_free(text);
    return 1;
}

#define KT_IMPLEMENTATION
#include "../backend_cpu.h"
#include "../swap.h"

#include "kt_test.h"

int main(void) {
    kt_error err;
    kt_factors f;
    kt_topology topo;
    kt_cpu_verify_options o;
    /* one call into each header's implementation */
    CHECK(kt_factors_default(6, &f, &err) == KT_OK);
    CHECK(kt_topology_parse("flat:4:100G", &topo, &err) == KT_OK);
    CHECK_EQ_I64(topo.ndev, 4);
    CHECK(kt_topology_parse("flat:0:100G", &topo, &err) != KT_OK);
    CHECK(zoo_text_freed());
    kt_cpu_verify_defaults(&o);
    CHECK(o.seed == 1 && o.tol > 0 && o.eps > 0);
    {
        kt_swap_model m;
        CHECK(kt_swap_model_init(&m, &err) == KT_OK);
        kt_swap_model_free(&m);
    }
    return KT_TEST_SUMMARY();
}
