/* fuzz_common.h -- what every libFuzzer harness under test/fuzz/ shares:
   the input as a NUL-terminated string, and the contract of a kt_error
   (README: bad input gets a kt_status error with a message; the library
   never crashes, leaks or exits).  A broken invariant aborts, which
   libFuzzer reports as a crash with the input that caused it.  Included
   after the ktile header(s), by exactly one .c per fuzzer. */
#ifndef KT_FUZZ_COMMON_H
#define KT_FUZZ_COMMON_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_REQUIRE(cond)                                                   \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "fuzz invariant broken at %s:%d: %s\n",          \
                    __FILE__, __LINE__, #cond);                              \
            abort();                                                         \
        }                                                                    \
    } while (0)

/* A copy of data[0..size) with a NUL after it (the caller frees it); the
   string parsers read up to the first NUL, as they would a C string. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size) {
    char *s = (char *)malloc(size + 1);
    FUZZ_REQUIRE(s != NULL);
    if (size) memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* The status and the error agree: KT_OK with an empty message, a failure
   with its own status recorded and a message saying what is wrong. */
static inline void fuzz_check_status(kt_status s, const kt_error *err) {
    if (s == KT_OK) {
        FUZZ_REQUIRE(err->status == KT_OK);
    } else {
        FUZZ_REQUIRE(s > KT_OK && s <= KT_ERR_INTERNAL);
        FUZZ_REQUIRE(s != KT_ERR_INTERNAL); /* bad input is not a bug */
        FUZZ_REQUIRE(err->status == s);
        FUZZ_REQUIRE(err->message[0] != '\0');
        FUZZ_REQUIRE(memchr(err->message, '\0', sizeof err->message));
    }
}

static inline int fuzz_finite_positive(double x) { return x > 0 && isfinite(x); }

/* The DP plan of g on 2 devices, its search kept small; the status and
   the error checked.  KT_OK: the caller frees *p. */
static inline kt_status fuzz_dp_plan_2(const kt_graph *g, kt_plan *p) {
    kt_factors f;
    kt_search_options opt;
    kt_error err;
    kt_status s;
    memset(&f, 0, sizeof f);
    f.count = 1;
    f.k[0] = 2;
    memset(&opt, 0, sizeof opt);
    opt.dp_state_limit = 1 << 16;
    s = kt_plan_search(g, &f, &opt, p, &err);
    fuzz_check_status(s, &err);
    return s;
}

/* The zoo model `spec`, built on the first call and kept for the
   process (a harness checks every input against one graph; one spec per
   harness). */
static inline kt_graph *fuzz_zoo_graph(const char *spec) {
    static kt_graph *g;
    kt_error err;
    if (!g) FUZZ_REQUIRE(kt_zoo_build(spec, &g, &err) == KT_OK);
    return g;
}
#endif
