/* kt_test.h -- the smallest test harness that serves: CHECK records a pass
   or a failure (with file, line and the failed expression or a message),
   and KT_TEST_SUMMARY prints "N passed, M failed" and returns the exit code
   the runner (test/run.sh) adds up. */
#ifndef KT_TEST_H
#define KT_TEST_H
#include <stdio.h>

static int kt_test_passed = 0, kt_test_failed = 0;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (cond) kt_test_passed++;                                          \
        else {                                                               \
            kt_test_failed++;                                                \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);          \
        }                                                                    \
    } while (0)

/* CHECK with a printf-style explanation shown on failure. */
#define CHECKF(cond, ...)                                                    \
    do {                                                                     \
        if (cond) kt_test_passed++;                                          \
        else {                                                               \
            kt_test_failed++;                                                \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);          \
            printf(__VA_ARGS__);                                             \
            printf("\n");                                                    \
        }                                                                    \
    } while (0)

#define CHECK_EQ_I64(a, b)                                                   \
    CHECKF((long long)(a) == (long long)(b), "%lld != %lld", (long long)(a), \
           (long long)(b))

#define KT_TEST_SUMMARY()                                                    \
    (printf("%d passed, %d failed\n", kt_test_passed, kt_test_failed),       \
     kt_test_failed ? 1 : 0)

#endif
