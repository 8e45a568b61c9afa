/* fuzz_plan_json.c -- libFuzzer harness for the --plan PLAN.json reader
   of the ktile tool (examples/ktile.c, included whole with its main
   renamed): json_parse, then, for a JSON object, what `ktile eval` and
   `ktile sim` do with it -- the factors (plan_file_factors) and, on up to
   64 devices, the plan of a training MLP built from its "tensors" and
   "ops" and priced (plan_file_build).  The tool's messages go to
   /dev/null.  On a JSON fault the message is set and the root left
   empty; everything parsed is freed (LeakSanitizer). */
#include <stdio.h>
#include <stdint.h>
static FILE *fuzz_quiet; /* the tool's stderr */
#undef stderr
#define stderr fuzz_quiet
#define main ktile_main
#include "../../examples/ktile.c"
#undef main
#undef stderr
#define stderr stderr
#include "fuzz_common.h"

static kt_graph *graph(void) {
    return fuzz_zoo_graph("mlp:layers=2,hidden=16,batch=8");
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    fuzz_quiet = fopen("/dev/null", "w");
    FUZZ_REQUIRE(fuzz_quiet != NULL);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_cstr(data, size), msg[256];
    jv root;
    kt_factors f;
    kt_plan p;
    msg[0] = '\0';
    if (json_parse(text, size, &root, msg, sizeof msg) != 0) {
        FUZZ_REQUIRE(msg[0] != '\0');
        FUZZ_REQUIRE(root.type == JV_NULL && root.n == 0 && !root.item &&
                     !root.key && !root.text);
        free(text);
        return 0;
    }
    if (root.type == JV_OBJECT && plan_file_factors("f.json", &root, &f) == 0
        && kt_factors_devices(&f) <= 64 &&
        plan_file_build("eval", "f.json", &root, graph(), &f, &p) == 0) {
        FUZZ_REQUIRE(p.total_bytes >= 0);
        kt_plan_free(&p);
    }
    jv_free(&root);
    free(text);
    return 0;
}
