/* kt_test_alloc.h -- an allocator that fails on request, for the tests of
   out-of-memory paths.  Include it before the ktile headers: the library
   allocates through KT_MALLOC / KT_REALLOC, which pass through to the C
   library until a test arms `fail_at`; then the fail_at-th allocation from
   then on returns NULL (once). */
#ifndef KT_TEST_ALLOC_H
#define KT_TEST_ALLOC_H
#include <stdlib.h>

static long alloc_count = 0, fail_at = 0;
static void *test_malloc(size_t n) {
    if (fail_at > 0 && ++alloc_count == fail_at) return NULL;
    return malloc(n);
}
static void *test_realloc(void *p, size_t n) {
    if (fail_at > 0 && ++alloc_count == fail_at) return NULL;
    return realloc(p, n);
}
#define KT_MALLOC(n) test_malloc(n)
#define KT_REALLOC(p, n) test_realloc(p, n)
#define KT_FREE(p) free(p)

#endif
