/* fuzz_zoo.c -- libFuzzer harness for kt_zoo_build and kt_zoo_text (the
   --model SPEC strings, e.g. mlp:layers=4,hidden=1024,batch=64).  Specs
   whose text is over 64 KB are not built: a legal model of up to 1024
   layers takes seconds and hundreds of MB under ASan, which is not what
   the fuzzer looks for (and would stop it as a hang).  On
   KT_OK the graph has ops and is freed whole; the text is what the build
   parses, so it parses on its own exactly when the build gets past it
   (a spec may well give text whose tensors exceed a limit). */
#define KT_IMPLEMENTATION
#include "../../sched.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    kt_graph *g = NULL, *h = NULL;
    kt_error err;
    kt_status s, st, sp;
    char *spec = fuzz_cstr(data, size), *text = NULL;
    int training = -1;
    memset(&err, 0x55, sizeof err);
    st = kt_zoo_text(spec, &text, &training, &err);
    fuzz_check_status(st, &err);
    if (st == KT_OK && strlen(text) > 65536) {
        KT_FREE(text);
        free(spec);
        return 0;
    }
    s = kt_zoo_build(spec, &g, &err);
    fuzz_check_status(s, &err);
    if (s == KT_OK) FUZZ_REQUIRE(g && kt_graph_op_count(g) > 0);
    else FUZZ_REQUIRE(g == NULL);
    /* the build is the text parsed, plus autodiff: it fails no later */
    FUZZ_REQUIRE(s != KT_OK || st == KT_OK);
    if (st == KT_OK) {
        FUZZ_REQUIRE(text && (training == 0 || training == 1));
        FUZZ_REQUIRE(kt_graph_create(&h, &err) == KT_OK);
        sp = kt_graph_parse(h, text, strlen(text), &err);
        fuzz_check_status(sp, &err);
        FUZZ_REQUIRE(sp == KT_OK || s == sp);
        kt_graph_destroy(h);
        KT_FREE(text);
    } else {
        FUZZ_REQUIRE(s == st); /* the same spec error */
    }
    kt_graph_destroy(g);
    free(spec);
    return 0;
}
