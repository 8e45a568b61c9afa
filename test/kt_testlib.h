/* kt_testlib.h -- helpers the C test programs share, included after
   "../tiling.h" (or "../sched.h") and "kt_test.h": a deterministic random
   generator, a text buffer for writing model files, and a parser that
   records a failed check instead of stopping. */
#ifndef KT_TESTLIB_H
#define KT_TESTLIB_H
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static uint64_t xorshift64(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

/* Uniform in [lo, hi]. */
static int rnd(uint64_t *s, int lo, int hi) {
    return lo + (int)(xorshift64(s) % (uint64_t)(hi - lo + 1));
}

typedef struct text {
    char buf[8192];
    size_t n;
} text;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void tx(text *t, const char *fmt, ...) {
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(t->buf + t->n, sizeof t->buf - t->n, fmt, ap);
    va_end(ap);
    if (n > 0) t->n += (size_t)n;
    if (t->n >= sizeof t->buf) t->n = sizeof t->buf - 1;
}

/* Parses model text; NULL (and a failed check) when it does not parse. */
static kt_graph *parse(const char *what, const char *src) {
    kt_graph *g = NULL;
    kt_error err;
    kt_status s;
    memset(&err, 0, sizeof err);
    s = kt_graph_create(&g, &err);
    if (s == KT_OK) s = kt_graph_parse(g, src, strlen(src), &err);
    CHECKF(s == KT_OK, "%s: %s\n%s", what, err.message, src);
    if (s != KT_OK) {
        kt_graph_destroy(g);
        return NULL;
    }
    return g;
}

#endif
