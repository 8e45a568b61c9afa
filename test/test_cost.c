/* test_cost.c -- the tiling algebra and the conversion cost of tiling.h.

   Known answers (SOYBEAN, Tofu, the collectives' volumes) and a randomised
   comparison against a naive element-by-element reference written here from
   the definitions of ../shared/DESIGN.md ("Tilings", "Conversion cost"),
   using none of tiling.h's internals: device boxes are computed by this file
   (mixed-radix devices, cut 1 most significant; balanced block splits; a
   later cut on a dimension splits the earlier block; R and P leave the box
   whole) and every element of the tensor is visited. */
#define KT_IMPLEMENTATION
#include "../tiling.h"
#include "kt_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXDEV 64

/* ------------------------------------------------------------ utilities */

static const uint64_t SEED = UINT64_C(0x9e3779b97f4a7c15);
static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);

/* xorshift64: deterministic, no library randomness. */
static uint64_t rng_next(void) {
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    rng_state = x;
    return x;
}

/* Uniform in [lo, hi] (inclusive). */
static int64_t rng_range(int64_t lo, int64_t hi) {
    return lo + (int64_t)(rng_next() % (uint64_t)(hi - lo + 1));
}

static const char *tstr(const kt_tiling *t, char *buf, size_t cap) {
    kt_tiling_format(t, buf, cap);
    return buf;
}

static const char *shape_str(int rank, const int64_t *shape, char *buf,
                             size_t cap) {
    size_t n = 0;
    int d;
    buf[0] = '\0';
    for (d = 0; d < rank && n < cap; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? "x" : "",
                              (long long)shape[d]);
    return buf;
}

static const char *factors_str(const kt_factors *f, char *buf, size_t cap) {
    size_t n = 0;
    int i;
    buf[0] = '\0';
    if (f->count == 0) snprintf(buf, cap, "(none)");
    for (i = 0; i < f->count && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%d", i ? "," : "", f->k[i]);
    return buf;
}

static kt_factors mkfactors(int count, const int *k) {
    kt_factors f;
    int i;
    memset(&f, 0, sizeof f);
    f.count = count;
    for (i = 0; i < count; i++) f.k[i] = k[i];
    return f;
}

static kt_tiling parse_ok(const char *text) {
    kt_tiling t;
    kt_error err;
    kt_status s = kt_tiling_parse(text, &t, &err);
    CHECKF(s == KT_OK, "kt_tiling_parse(\"%s\") failed: %s", text,
           err.message);
    return t;
}

/* ------------------------------------------------------ naive reference */

/* A box as this file computes it, unclipped: [lo, hi) per dimension. */
typedef struct nbox {
    int64_t lo[KT_MAX_DIMS], hi[KT_MAX_DIMS];
} nbox;

static int64_t my_devices(const kt_factors *f) {
    int64_t n = 1;
    int i;
    for (i = 0; i < f->count; i++) n *= f->k[i];
    return n;
}

/* DESIGN.md: mixed radix over the cuts, cut 1 most significant. */
static void my_coords(const kt_factors *f, int64_t dev, int *c) {
    int64_t place = my_devices(f);
    int i;
    for (i = 0; i < f->count; i++) {
        place /= f->k[i];
        c[i] = (int)(dev / place);
        dev %= place;
    }
}

/* Part p of [lo, lo+n) in k: [lo + floor(p*n/k), lo + floor((p+1)*n/k)). */
static void my_split(int64_t lo, int64_t hi, int k, int p, int64_t *olo,
                     int64_t *ohi) {
    int64_t n = hi - lo;
    *olo = lo + (p * n) / k;
    *ohi = lo + ((p + 1) * n) / k;
}

static void my_box(const kt_tiling *t, int rank, const int64_t *shape,
                   const kt_factors *f, int64_t dev, nbox *b) {
    int c[KT_MAX_CUTS];
    int d, i;
    my_coords(f, dev, c);
    for (d = 0; d < rank; d++) {
        b->lo[d] = 0;
        b->hi[d] = shape[d];
    }
    for (i = 0; i < t->ncuts; i++) {
        int cut = t->cut[i];
        if (cut >= 0) {
            int64_t lo, hi;
            my_split(b->lo[cut], b->hi[cut], f->k[i], c[i], &lo, &hi);
            b->lo[cut] = lo;
            b->hi[cut] = hi;
        }
    }
}

static int64_t my_partials(const kt_tiling *t, const kt_factors *f) {
    int64_t q = 1;
    int i;
    for (i = 0; i < t->ncuts; i++)
        if (t->cut[i] == KT_CUT_P) q *= f->k[i];
    return q;
}

/* 1 when no dimension is split into more parts than it has elements (and
   every split dimension exists). */
static int my_fits(const kt_tiling *t, int rank, const int64_t *shape,
                   const kt_factors *f) {
    int64_t parts[KT_MAX_DIMS];
    int d, i;
    for (d = 0; d < rank; d++) parts[d] = 1;
    for (i = 0; i < t->ncuts; i++) {
        int c = t->cut[i];
        if (c >= rank) return 0;
        if (c >= 0) {
            parts[c] *= f->k[i];
            if (parts[c] > shape[c]) return 0;
        }
    }
    return 1;
}

static int nbox_contains(const nbox *b, int rank, const int64_t *x) {
    int d;
    for (d = 0; d < rank; d++)
        if (x[d] < b->lo[d] || x[d] >= b->hi[d]) return 0;
    return 1;
}

/* The DESIGN.md rule, element by element.  Returns bytes.  need_not_held
   (may be NULL) gets, per device, the elements it needs and does not hold
   times eb.  *orphans (may be NULL) counts elements needed by somebody but
   held by nobody. */
static int64_t naive_cost(int rank, const int64_t *shape, int eb,
                          int64_t ndev, const nbox *src, int64_t q,
                          const nbox *tgt, int64_t *need_not_held,
                          int64_t *orphans) {
    int64_t x[KT_MAX_DIMS];
    int64_t total = 0, norph = 0, dev;
    int d;
    for (d = 0; d < rank; d++) {
        x[d] = 0;
        if (shape[d] < 1) return 0;
    }
    if (need_not_held)
        for (dev = 0; dev < ndev; dev++) need_not_held[dev] = 0;
    for (;;) {
        int64_t nh = 0, nt = 0, nth = 0, per;
        for (dev = 0; dev < ndev; dev++) {
            int h = nbox_contains(&src[dev], rank, x);
            int t = nbox_contains(&tgt[dev], rank, x);
            nh += h;
            nt += t;
            nth += h && t;
            if (need_not_held && t && !h) need_not_held[dev] += eb;
        }
        if (q == 1) per = nt - nth;
        else if (nt == 0) per = 0;
        else per = (q - 1) + nt - (nth > 0 ? 1 : 0);
        if (nt > 0 && nh == 0) norph++;
        total += per;
        for (d = rank - 1; d >= 0; d--) {
            if (++x[d] < shape[d]) break;
            x[d] = 0;
        }
        if (d < 0) break;
    }
    if (orphans) *orphans = norph;
    return total * eb;
}

/* Naive cost between two tilings (boxes computed by this file). */
static int64_t naive_tiling_cost(int rank, const int64_t *shape, int eb,
                                 const kt_factors *f, const kt_tiling *a,
                                 const kt_tiling *b, int64_t *need_not_held) {
    nbox src[MAXDEV], tgt[MAXDEV];
    int64_t dev, ndev = my_devices(f);
    if (ndev > MAXDEV) return -1;
    for (dev = 0; dev < ndev; dev++) {
        my_box(a, rank, shape, f, dev, &src[dev]);
        my_box(b, rank, shape, f, dev, &tgt[dev]);
    }
    return naive_cost(rank, shape, eb, ndev, src, my_partials(a, f), tgt,
                      need_not_held, NULL);
}

/* Compares kt_tiling_conversion_cost with the naive reference, the
   received array with the total, and (q == 1) each device's received bytes
   with what it needs and lacks.  Returns 1 when everything matched. */
static int compare_tilings(const char *what, int rank, const int64_t *shape,
                           int eb, const kt_factors *f, const kt_tiling *a,
                           const kt_tiling *b) {
    int64_t bytes = -1, received[MAXDEV], nnh[MAXDEV], want, sum = 0, dev;
    int64_t ndev = my_devices(f);
    kt_error err;
    kt_status s;
    char sa[160], sb[160], ss[80], sf[80];
    int ok = 1;
    for (dev = 0; dev < MAXDEV; dev++) received[dev] = -7;
    tstr(a, sa, sizeof sa);
    tstr(b, sb, sizeof sb);
    shape_str(rank, shape, ss, sizeof ss);
    factors_str(f, sf, sizeof sf);
    s = kt_tiling_conversion_cost(rank, shape, eb, f, a, b, &bytes, received,
                                  &err);
    CHECKF(s == KT_OK, "%s: cost %s -> %s on %s factors %s failed: %s", what,
           sa, sb, ss, sf, err.message);
    if (s != KT_OK) return 0;
    want = naive_tiling_cost(rank, shape, eb, f, a, b, nnh);
    if (bytes != want) ok = 0;
    {
        /* the total alone takes other paths (per-device volumes, union of
           grid tiles): it must agree */
        int64_t alone = -1;
        s = kt_tiling_conversion_cost(rank, shape, eb, f, a, b, &alone, NULL,
                                      &err);
        CHECKF(s == KT_OK && alone == want,
               "%s: total alone %s -> %s on %s factors %s: %lld, naive %lld",
               what, sa, sb, ss, sf, (long long)alone, (long long)want);
    }
    CHECKF(bytes == want,
           "%s: cost %s -> %s on %s factors %s elem %d: library %lld, naive "
           "%lld", what, sa, sb, ss, sf, eb, (long long)bytes,
           (long long)want);
    for (dev = 0; dev < ndev; dev++) sum += received[dev];
    if (sum != bytes) ok = 0;
    CHECKF(sum == bytes,
           "%s: received sums to %lld, total %lld (%s -> %s on %s factors "
           "%s elem %d)", what, (long long)sum, (long long)bytes, sa, sb, ss,
           sf, eb);
    if (my_partials(a, f) == 1) {
        int per_ok = 1;
        for (dev = 0; dev < ndev; dev++)
            if (received[dev] != nnh[dev]) {
                per_ok = 0;
                break;
            }
        if (!per_ok) ok = 0;
        CHECKF(per_ok,
               "%s: device %lld receives %lld bytes, needs-and-lacks %lld "
               "(%s -> %s on %s factors %s elem %d)", what, (long long)dev,
               (long long)(dev < ndev ? received[dev] : -1),
               (long long)(dev < ndev ? nnh[dev] : -1), sa, sb, ss, sf, eb);
    }
    return ok;
}

/* -------------------------------------------------- 1. parse and format */

static void test_parse_format(void) {
    static const char *good[] = {"S0.S1", "R.S0", "P.S1", "P", "S3.R.P.S0",
                                 "S7", "R.R.R"};
    static const char *bad[] = {"",    "S",    "Q",   "S0..S1", "S0.",
                                "s0",  "S0S1", "S99", ".S0",    "S0.Q",
                                "R.",  "S-1",  "r"};
    size_t i;
    for (i = 0; i < sizeof good / sizeof *good; i++) {
        kt_tiling t;
        kt_error err;
        char buf[128];
        int n;
        kt_status s = kt_tiling_parse(good[i], &t, &err);
        CHECKF(s == KT_OK, "parse \"%s\": %s", good[i], err.message);
        if (s != KT_OK) continue;
        n = kt_tiling_format(&t, buf, sizeof buf);
        CHECKF(strcmp(buf, good[i]) == 0, "format(parse(\"%s\")) = \"%s\"",
               good[i], buf);
        CHECKF(n == (int)strlen(good[i]), "format \"%s\" returned %d",
               good[i], n);
    }
    /* Cut codes as documented. */
    {
        kt_tiling t = parse_ok("S3.R.P.S0");
        CHECK_EQ_I64(t.ncuts, 4);
        CHECK_EQ_I64(t.cut[0], 3);
        CHECK_EQ_I64(t.cut[1], KT_CUT_R);
        CHECK_EQ_I64(t.cut[2], KT_CUT_P);
        CHECK_EQ_I64(t.cut[3], 0);
    }
    /* snprintf rule: truncates, returns the full length. */
    {
        kt_tiling t = parse_ok("S3.R.P.S0");
        char small[4];
        int n = kt_tiling_format(&t, small, sizeof small);
        CHECK_EQ_I64(n, 9);
        CHECKF(strcmp(small, "S3.") == 0, "truncated format gives \"%s\"",
               small);
    }
    for (i = 0; i < sizeof bad / sizeof *bad; i++) {
        kt_tiling t;
        kt_error err;
        kt_status s;
        memset(&err, 0, sizeof err);
        s = kt_tiling_parse(bad[i], &t, &err);
        CHECKF(s != KT_OK, "parse accepted malformed \"%s\"", bad[i]);
        CHECKF(s == KT_OK || err.message[0] != '\0',
               "parse of \"%s\" failed without a message", bad[i]);
        CHECKF(s == KT_OK || err.status == s,
               "parse of \"%s\": err.status %d, returned %d", bad[i],
               (int)err.status, (int)s);
    }
    /* Factors. */
    {
        kt_factors f;
        kt_error err;
        static const char *fbad[] = {"1", "2,1", "", "2,,2", "a", "0", "2,",
                                     ",2", "2;2", "-2"};
        CHECK(kt_factors_parse("2,2", &f, &err) == KT_OK);
        CHECK(f.count == 2 && f.k[0] == 2 && f.k[1] == 2);
        CHECK_EQ_I64(kt_factors_devices(&f), 4);
        CHECK(kt_factors_parse("3", &f, &err) == KT_OK);
        CHECK(f.count == 1 && f.k[0] == 3);
        CHECK(kt_factors_parse("4,3,2", &f, &err) == KT_OK);
        CHECK(f.count == 3 && f.k[0] == 4 && f.k[1] == 3 && f.k[2] == 2);
        CHECK_EQ_I64(kt_factors_devices(&f), 24);
        { /* a factor that is not a whole number is quoted whole (strtol
             read 1e308 as 1 and 0x10 as 0, and the message said so) */
            static const char *const nonint[] = {"2,1e308", "2,1.5",
                                                 "0x10,2", "2,3x"};
            static const char *const item[] = {"'1e308'", "'1.5'", "'0x10'",
                                               "'3x'"};
            for (i = 0; i < 4; i++)
                CHECKF(kt_factors_parse(nonint[i], &f, &err) ==
                               KT_ERR_INVALID &&
                           strstr(err.message, item[i]) &&
                           strstr(err.message, "not a whole number"),
                       "%s: %s", nonint[i], err.message);
        }
        for (i = 0; i < sizeof fbad / sizeof *fbad; i++) {
            kt_status s;
            memset(&err, 0, sizeof err);
            s = kt_factors_parse(fbad[i], &f, &err);
            CHECKF(s != KT_OK, "kt_factors_parse accepted \"%s\"", fbad[i]);
            CHECKF(s == KT_OK || err.message[0] != '\0',
                   "kt_factors_parse(\"%s\") failed without a message",
                   fbad[i]);
        }
    }
    /* Default factors: primes, largest first. */
    {
        struct {
            int64_t n;
            int count;
            int k[12];
        } cases[] = {{8, 3, {2, 2, 2}},
                     {12, 3, {3, 2, 2}},
                     {6, 2, {3, 2}},
                     {7, 1, {7}},
                     {1, 0, {0}},
                     {1024, 10, {2, 2, 2, 2, 2, 2, 2, 2, 2, 2}},
                     {30, 3, {5, 3, 2}},
                     {49, 2, {7, 7}}};
        for (i = 0; i < sizeof cases / sizeof *cases; i++) {
            kt_factors f;
            kt_error err;
            kt_status s = kt_factors_default(cases[i].n, &f, &err);
            int same = s == KT_OK && f.count == cases[i].count;
            int j;
            char got[80];
            for (j = 0; same && j < f.count; j++)
                same = f.k[j] == cases[i].k[j];
            CHECKF(same, "kt_factors_default(%lld) = %s (status %d)",
                   (long long)cases[i].n, factors_str(&f, got, sizeof got),
                   (int)s);
            CHECK_EQ_I64(kt_factors_devices(&f), cases[i].n);
        }
        {
            kt_factors f;
            kt_error err;
            CHECK(kt_factors_default(0, &f, &err) != KT_OK);
            CHECK(kt_factors_default(-3, &f, &err) != KT_OK);
        }
    }
}

/* ---------------------------------------------------- 2. tiling_check */

static void expect_check_error(const kt_tiling *t, const char *name, int rank,
                               const int64_t *shape, const kt_factors *f,
                               int allow_partial, const char *must1,
                               const char *must2) {
    kt_error err;
    kt_status s;
    char st[128];
    memset(&err, 0, sizeof err);
    s = kt_tiling_check(t, name, rank, shape, f, allow_partial, &err);
    tstr(t, st, sizeof st);
    CHECKF(s != KT_OK, "kt_tiling_check accepted %s", st);
    if (s == KT_OK) return;
    CHECKF(err.message[0] != '\0', "check of %s: empty message", st);
    CHECKF(err.status == s, "check of %s: err.status %d returned %d", st,
           (int)err.status, (int)s);
    if (must1)
        CHECKF(strstr(err.message, must1) != NULL,
               "check of %s: message \"%s\" lacks \"%s\"", st, err.message,
               must1);
    if (must2)
        CHECKF(strstr(err.message, must2) != NULL,
               "check of %s: message \"%s\" lacks \"%s\"", st, err.message,
               must2);
}

static void test_tiling_check(void) {
    int64_t shape2[2] = {8, 6}, shape3[1] = {3};
    int k22[2] = {2, 2}, k2[1] = {2};
    kt_factors f22 = mkfactors(2, k22), f2 = mkfactors(1, k2);
    kt_tiling t;
    kt_error err;
    /* Fine ones. */
    t = parse_ok("S0.S1");
    CHECK(kt_tiling_check(&t, "W1", 2, shape2, &f22, 0, &err) == KT_OK);
    t = parse_ok("P.S1");
    CHECK(kt_tiling_check(&t, "W1", 2, shape2, &f22, 1, &err) == KT_OK);
    t = parse_ok("S0.S0");
    CHECK(kt_tiling_check(&t, "W1", 2, shape2, &f22, 0, &err) == KT_OK);
    CHECK(kt_tiling_check(&t, NULL, 2, NULL, &f22, 0, &err) == KT_OK);
    /* Splitting a dimension the tensor lacks. */
    t = parse_ok("S2.S0");
    expect_check_error(&t, "W1", 2, shape2, &f22, 0, "W1", "dim 2");
    t = parse_ok("S0.S5");
    expect_check_error(&t, "W1", 2, shape2, &f22, 1, "W1", "dim 5");
    /* Cut count not matching factors. */
    t = parse_ok("S0");
    expect_check_error(&t, "W1", 2, shape2, &f22, 0, "W1", NULL);
    t = parse_ok("S0.S1.R");
    expect_check_error(&t, "W1", 2, shape2, &f22, 0, "W1", NULL);
    /* P where no partial is allowed. */
    t = parse_ok("P.S1");
    expect_check_error(&t, "W1", 2, shape2, &f22, 0, "W1", NULL);
    t = parse_ok("P");
    expect_check_error(&t, "grad", 2, shape2, &f2, 0, "grad", NULL);
    /* A dim with fewer elements than parts. */
    t = parse_ok("S0.S0");
    expect_check_error(&t, "W1", 1, shape3, &f22, 0, "W1", "dim 0");
    {
        int64_t s2[2] = {8, 1};
        t = parse_ok("S1");
        expect_check_error(&t, "bias", 2, s2, &f2, 0, "bias", "dim 1");
        t = parse_ok("R.S1");
        expect_check_error(&t, "bias", 2, s2, &f22, 0, "bias", "dim 1");
    }
    /* NULL name still gives a message. */
    t = parse_ok("S0.S0");
    expect_check_error(&t, NULL, 1, shape3, &f22, 0, "dim 0", NULL);
}

/* ------------------------------------------------- 3. device coordinates */

static void test_device_coords(void) {
    static const int lists[][4] = {{2, 3, 0, 0}, {3, 2, 2, 0}, {5, 0, 0, 0},
                                   {2, 2, 2, 2}, {4, 3, 0, 0}, {7, 2, 3, 0}};
    static const int counts[] = {2, 3, 1, 4, 2, 3};
    size_t li;
    {
        int k[2] = {2, 3};
        kt_factors f = mkfactors(2, k);
        int64_t d;
        for (d = 0; d < 6; d++) {
            int c[KT_MAX_CUTS];
            kt_device_coords(&f, d, c);
            CHECKF(c[0] == d / 3 && c[1] == d % 3,
                   "factors 2,3: device %lld -> (%d,%d), want (%lld,%lld)",
                   (long long)d, c[0], c[1], (long long)(d / 3),
                   (long long)(d % 3));
        }
    }
    for (li = 0; li < sizeof counts / sizeof *counts; li++) {
        kt_factors f = mkfactors(counts[li], lists[li]);
        int64_t d, n = kt_factors_devices(&f);
        int all_ok = 1, mine_ok = 1;
        char sf[40];
        CHECK_EQ_I64(n, my_devices(&f));
        for (d = 0; d < n; d++) {
            int c[KT_MAX_CUTS], m[KT_MAX_CUTS], i;
            kt_device_coords(&f, d, c);
            my_coords(&f, d, m);
            for (i = 0; i < f.count; i++) {
                if (c[i] != m[i]) mine_ok = 0;
                if (c[i] < 0 || c[i] >= f.k[i]) all_ok = 0;
            }
            if (kt_device_index(&f, c) != d) all_ok = 0;
        }
        CHECKF(all_ok, "kt_device_index does not invert kt_device_coords for "
                       "factors %s", factors_str(&f, sf, sizeof sf));
        CHECKF(mine_ok, "kt_device_coords is not mixed radix (cut 1 most "
                        "significant) for factors %s",
               factors_str(&f, sf, sizeof sf));
    }
}

/* ------------------------------------------------------ 4. split ranges */

static void test_split_range(void) {
    static const int64_t los[] = {0, 5, -4};
    size_t li;
    int64_t n;
    int k, p, bad = 0;
    for (li = 0; li < sizeof los / sizeof *los; li++)
        for (n = 0; n <= 13; n++)
            for (k = 1; k <= 7; k++) {
                kt_range r, prev;
                int64_t lo = los[li];
                r.lo = lo;
                r.hi = lo + n;
                prev.hi = lo;
                for (p = 0; p < k; p++) {
                    kt_range q = kt_split_range(r, k, p);
                    int64_t elo = lo + (p * n) / k, ehi = lo + ((p + 1) * n) / k;
                    if (q.lo != elo || q.hi != ehi || q.lo != prev.hi ||
                        q.hi < q.lo) {
                        if (bad++ < 5)
                            printf("  split [%lld,%lld) k=%d p=%d -> "
                                   "[%lld,%lld), want [%lld,%lld)\n",
                                   (long long)r.lo, (long long)r.hi, k, p,
                                   (long long)q.lo, (long long)q.hi,
                                   (long long)elo, (long long)ehi);
                    }
                    prev = q;
                }
                if (prev.hi != lo + n) bad++;
            }
    CHECKF(bad == 0, "%d split_range mismatches", bad);
    /* Concrete uneven one: 7 into 3 at 10 -> [10,12) [12,14) [14,17). */
    {
        kt_range r, a, b, c;
        r.lo = 10;
        r.hi = 17;
        a = kt_split_range(r, 3, 0);
        b = kt_split_range(r, 3, 1);
        c = kt_split_range(r, 3, 2);
        CHECK(a.lo == 10 && a.hi == 12);
        CHECK(b.lo == 12 && b.hi == 14);
        CHECK(c.lo == 14 && c.hi == 17);
    }
}

/* ------------------------------------------------------- 5. enumeration */

static void enum_list(int rank, const int64_t *shape, const kt_factors *f,
                      unsigned flags, kt_tiling *out, size_t cap,
                      size_t *count) {
    kt_error err;
    kt_status s = kt_tiling_enumerate(rank, shape, f, flags, out, cap, count,
                                      &err);
    CHECKF(s == KT_OK, "enumerate rank %d flags %u: %s", rank, flags,
           err.message);
}

/* Counts with this file's own brute force: every sequence of choices,
   filtered by my_fits, deduplicated by grid when distinct. */
static size_t my_enum_count(int rank, const int64_t *shape,
                            const kt_factors *f, unsigned flags) {
    signed char choice[KT_MAX_DIMS + 2];
    int nchoice = 0, d, digit[KT_MAX_CUTS], i;
    static int64_t grids[4096][KT_MAX_DIMS + 2];
    size_t ngrids = 0, found = 0;
    for (d = 0; d < rank; d++) choice[nchoice++] = (signed char)d;
    if (flags & KT_ENUM_REPLICATE) choice[nchoice++] = KT_CUT_R;
    if (flags & KT_ENUM_PARTIAL) choice[nchoice++] = KT_CUT_P;
    memset(digit, 0, sizeof digit);
    for (;;) {
        kt_tiling t;
        int keep;
        t.ncuts = f->count;
        for (i = 0; i < f->count; i++) t.cut[i] = choice[digit[i]];
        keep = shape ? my_fits(&t, rank, shape, f) : 1;
        if (keep && (flags & KT_ENUM_DISTINCT)) {
            int64_t g[KT_MAX_DIMS + 2];
            size_t j;
            for (d = 0; d < rank + 2; d++) g[d] = 1;
            for (i = 0; i < f->count; i++) {
                int c = t.cut[i];
                g[c >= 0 ? c : (c == KT_CUT_R ? rank : rank + 1)] *= f->k[i];
            }
            for (j = 0; j < ngrids && keep; j++)
                if (memcmp(grids[j], g, sizeof(int64_t) * (size_t)(rank + 2))
                    == 0)
                    keep = 0;
            if (keep && ngrids < 4096)
                memcpy(grids[ngrids++], g, sizeof(int64_t) * (size_t)(rank + 2));
        }
        if (keep) found++;
        for (i = f->count - 1; i >= 0; i--) {
            if (++digit[i] < nchoice) break;
            digit[i] = 0;
        }
        if (i < 0) break;
    }
    return found;
}

static void test_enumerate(void) {
    int k22[2] = {2, 2}, k222[3] = {2, 2, 2}, k32[2] = {3, 2};
    kt_factors f22 = mkfactors(2, k22), f222 = mkfactors(3, k222),
               f32 = mkfactors(2, k32);
    kt_tiling list[256];
    size_t n, n2;
    char buf[64];
    /* 2-D over (2,2) with R: 9 sequences, 6 distinct grids. */
    enum_list(2, NULL, &f22, KT_ENUM_REPLICATE, list, 256, &n);
    CHECK_EQ_I64(n, 9);
    enum_list(2, NULL, &f22, KT_ENUM_REPLICATE | KT_ENUM_DISTINCT, list, 256,
              &n);
    CHECK_EQ_I64(n, 6);
    if (n == 6) {
        static const char *want[6] = {"S0.S0", "S0.S1", "S0.R",
                                      "S1.S1", "S1.R",  "R.R"};
        size_t i;
        for (i = 0; i < 6; i++)
            CHECKF(strcmp(tstr(&list[i], buf, sizeof buf), want[i]) == 0,
                   "distinct tiling %d is %s, want %s (first of its grid, "
                   "lexicographic order)", (int)i, buf, want[i]);
    }
    /* Without R: 4 sequences. */
    enum_list(2, NULL, &f22, 0, list, 256, &n);
    CHECK_EQ_I64(n, 4);
    if (n == 4) {
        CHECK(strcmp(tstr(&list[0], buf, sizeof buf), "S0.S0") == 0);
        CHECK(strcmp(tstr(&list[1], buf, sizeof buf), "S0.S1") == 0);
        CHECK(strcmp(tstr(&list[2], buf, sizeof buf), "S1.S0") == 0);
        CHECK(strcmp(tstr(&list[3], buf, sizeof buf), "S1.S1") == 0);
    }
    /* With R and P: 16 sequences, multisets of size 2 over 4 -> 10. */
    enum_list(2, NULL, &f22, KT_ENUM_REPLICATE | KT_ENUM_PARTIAL, list, 256,
              &n);
    CHECK_EQ_I64(n, 16);
    if (n == 16)
        CHECKF(strcmp(tstr(&list[15], buf, sizeof buf), "P.P") == 0,
               "last sequence is %s, want P.P", buf);
    enum_list(2, NULL, &f22,
              KT_ENUM_REPLICATE | KT_ENUM_PARTIAL | KT_ENUM_DISTINCT, list,
              256, &n);
    CHECK_EQ_I64(n, 10);
    /* Tofu 5.2: a 4-D tensor over (2,2,2) without replication: 20. */
    enum_list(4, NULL, &f222, KT_ENUM_DISTINCT, list, 256, &n);
    CHECK_EQ_I64(n, 20);
    enum_list(4, NULL, &f222, 0, list, 256, &n);
    CHECK_EQ_I64(n, 64);
    /* out == NULL: the count only. */
    enum_list(4, NULL, &f222, KT_ENUM_DISTINCT, NULL, 0, &n);
    CHECK_EQ_I64(n, 20);
    enum_list(2, NULL, &f22, KT_ENUM_REPLICATE, NULL, 0, &n);
    CHECK_EQ_I64(n, 9);
    /* A short buffer: the full count, cap entries written, nothing past. */
    {
        kt_tiling few[4];
        kt_tiling sentinel;
        memset(few, 0x55, sizeof few);
        memset(&sentinel, 0x55, sizeof sentinel);
        enum_list(2, NULL, &f22, KT_ENUM_REPLICATE, few, 3, &n);
        CHECK_EQ_I64(n, 9);
        CHECK(strcmp(tstr(&few[0], buf, sizeof buf), "S0.S0") == 0);
        CHECK(strcmp(tstr(&few[2], buf, sizeof buf), "S0.R") == 0);
        CHECK(memcmp(&few[3], &sentinel, sizeof sentinel) == 0);
    }
    /* Shape filtering. */
    {
        int64_t s38[2] = {3, 8}, s18[2] = {1, 8}, s11[2] = {1, 1};
        int64_t s4d[4] = {2, 4, 1, 8};
        size_t i;
        int all_fit = 1;
        enum_list(2, s38, &f22, KT_ENUM_REPLICATE, list, 256, &n);
        CHECK_EQ_I64(n, 8); /* S0.S0 needs 4 rows */
        for (i = 0; i < n && i < 256; i++)
            if (!my_fits(&list[i], 2, s38, &f22)) all_fit = 0;
        CHECK(all_fit);
        enum_list(2, s18, &f22, KT_ENUM_REPLICATE, list, 256, &n);
        CHECK_EQ_I64(n, 4); /* no S0 at all */
        enum_list(2, s11, &f22, KT_ENUM_REPLICATE, list, 256, &n);
        CHECK_EQ_I64(n, 1); /* R.R */
        enum_list(2, s11, &f22, 0, list, 256, &n);
        CHECK_EQ_I64(n, 0);
        enum_list(4, s4d, &f222,
                  KT_ENUM_REPLICATE | KT_ENUM_PARTIAL, list, 256, &n);
        CHECK_EQ_I64(n, my_enum_count(4, s4d, &f222,
                                      KT_ENUM_REPLICATE | KT_ENUM_PARTIAL));
        all_fit = 1;
        for (i = 0; i < n && i < 256; i++)
            if (!my_fits(&list[i], 4, s4d, &f222)) all_fit = 0;
        CHECK(all_fit);
        enum_list(4, s4d, &f222, KT_ENUM_DISTINCT, NULL, 0, &n);
        CHECK_EQ_I64(n, my_enum_count(4, s4d, &f222, KT_ENUM_DISTINCT));
    }
    /* Every flag combination agrees with the brute force, with and without
       a shape, for a few factor lists. */
    {
        int64_t s75[2] = {7, 5}, s3[3] = {3, 2, 6};
        unsigned flags;
        for (flags = 0; flags < 8; flags++) {
            enum_list(2, s75, &f32, flags, NULL, 0, &n);
            n2 = my_enum_count(2, s75, &f32, flags);
            CHECKF(n == n2, "enumerate 7x5 over 3,2 flags %u: %d, want %d",
                   flags, (int)n, (int)n2);
            enum_list(3, s3, &f222, flags, NULL, 0, &n);
            n2 = my_enum_count(3, s3, &f222, flags);
            CHECKF(n == n2, "enumerate 3x2x6 over 2,2,2 flags %u: %d, want %d",
                   flags, (int)n, (int)n2);
            enum_list(3, NULL, &f222, flags, NULL, 0, &n);
            n2 = my_enum_count(3, NULL, &f222, flags);
            CHECKF(n == n2, "enumerate rank 3 over 2,2,2 flags %u: %d, want %d",
                   flags, (int)n, (int)n2);
        }
    }
    /* A bad rank is an error, not a crash. */
    {
        kt_error err;
        memset(&err, 0, sizeof err);
        CHECK(kt_tiling_enumerate(0, NULL, &f22, 0, NULL, 0, &n, &err) !=
              KT_OK);
        CHECK(err.message[0] != '\0');
    }
}

/* -------------------------------------------------------- 6. flattening */

static void test_flatten(void) {
    int k22[2] = {2, 2}, k32[2] = {3, 2}, k222[3] = {2, 2, 2};
    kt_factors f22 = mkfactors(2, k22), f32 = mkfactors(2, k32),
               f222 = mkfactors(3, k222);
    int64_t shape[2] = {4, 4};
    kt_tiling a = parse_ok("S0.S1"), b = parse_ok("S1.S0");
    int64_t dev;
    int differ = 0;
    CHECK(kt_tiling_same_grid(&a, &b, 2, &f22));
    for (dev = 0; dev < 4; dev++) {
        kt_box ba, bb;
        kt_tiling_device_box(&a, 2, shape, &f22, dev, &ba, NULL);
        kt_tiling_device_box(&b, 2, shape, &f22, dev, &bb, NULL);
        if (ba.r[0].lo != bb.r[0].lo || ba.r[0].hi != bb.r[0].hi ||
            ba.r[1].lo != bb.r[1].lo || ba.r[1].hi != bb.r[1].hi)
            differ = 1;
    }
    CHECKF(differ, "S0.S1 and S1.S0 put the same tile on every device");
    {
        int64_t bytes = -1;
        kt_error err;
        CHECK(kt_tiling_conversion_cost(2, shape, 4, &f22, &a, &b, &bytes,
                                        NULL, &err) == KT_OK);
        CHECKF(bytes > 0, "S0.S1 -> S1.S0 on 4x4 costs %lld", (long long)bytes);
        /* Devices 1 and 2 swap their 4-element tiles: 8 elements. */
        CHECK_EQ_I64(bytes, 8 * 4);
        compare_tilings("flatten", 2, shape, 4, &f22, &a, &b);
    }
    /* Device boxes against this file's own computation (f22, 4x4). */
    {
        static const char *ts[] = {"S0.S1", "S1.S0", "S0.S0", "R.S1", "P.S0",
                                   "S1.P", "R.R", "P.P"};
        size_t i;
        int64_t uneven[2] = {7, 5};
        for (i = 0; i < sizeof ts / sizeof *ts; i++) {
            kt_tiling t = parse_ok(ts[i]);
            int ok = 1;
            for (dev = 0; dev < 4; dev++) {
                kt_box kb;
                nbox nb;
                int64_t pc = -1;
                int d;
                kt_tiling_device_box(&t, 2, uneven, &f22, dev, &kb, &pc);
                my_box(&t, 2, uneven, &f22, dev, &nb);
                for (d = 0; d < 2; d++)
                    if (kb.r[d].lo != nb.lo[d] || kb.r[d].hi != nb.hi[d])
                        ok = 0;
                if (pc < 0 || pc >= my_partials(&t, &f22)) ok = 0;
            }
            CHECKF(ok, "device boxes of %s on 7x5 over 2,2 disagree with "
                       "the DESIGN.md definition", ts[i]);
        }
    }
    /* Partial classes: devices that differ only in the P cut coordinate are
       in different classes; P.S0 over 2,2: devices 0,1 class 0, 2,3 class 1. */
    {
        kt_tiling t = parse_ok("P.S0");
        int64_t pc[4];
        kt_box kb;
        for (dev = 0; dev < 4; dev++)
            kt_tiling_device_box(&t, 2, shape, &f22, dev, &kb, &pc[dev]);
        CHECK(pc[0] == pc[1] && pc[2] == pc[3] && pc[0] != pc[2]);
        t = parse_ok("S0.P");
        for (dev = 0; dev < 4; dev++)
            kt_tiling_device_box(&t, 2, shape, &f22, dev, &kb, &pc[dev]);
        CHECK(pc[0] == pc[2] && pc[1] == pc[3] && pc[0] != pc[1]);
    }
    /* Flattened parts / replicas / partials. */
    {
        struct {
            const char *t;
            int which; /* 0: f22, 1: f32, 2: f222 */
            int rank;
            int64_t p0, p1, p2, rep, par;
        } cases[] = {
            {"S0.S1", 0, 2, 2, 2, 1, 1, 1}, {"S1.S0", 0, 2, 2, 2, 1, 1, 1},
            {"S0.S0", 0, 2, 4, 1, 1, 1, 1}, {"R.S1", 0, 2, 1, 2, 1, 2, 1},
            {"P.S1", 0, 2, 1, 2, 1, 1, 2},  {"P.R", 0, 2, 1, 1, 1, 2, 2},
            {"P.P", 0, 2, 1, 1, 1, 1, 4},   {"R.R", 0, 2, 1, 1, 1, 4, 1},
            {"S0.R", 1, 2, 3, 1, 1, 2, 1},  {"R.S0", 1, 2, 2, 1, 1, 3, 1},
            {"P.S0", 1, 2, 2, 1, 1, 1, 3},  {"S1.P", 1, 2, 1, 3, 1, 1, 2},
            {"S1.S1", 1, 2, 1, 6, 1, 1, 1}, {"S2.P.R", 2, 3, 1, 1, 2, 2, 2},
            {"S0.S2.S0", 2, 3, 4, 1, 2, 1, 1}};
        size_t i;
        for (i = 0; i < sizeof cases / sizeof *cases; i++) {
            kt_tiling t = parse_ok(cases[i].t);
            const kt_factors *f =
                cases[i].which == 0 ? &f22 : cases[i].which == 1 ? &f32 : &f222;
            kt_flat fl = kt_tiling_flatten(&t, cases[i].rank, f);
            int ok = fl.parts[0] == cases[i].p0 && fl.parts[1] == cases[i].p1 &&
                     (cases[i].rank < 3 || fl.parts[2] == cases[i].p2) &&
                     fl.replicas == cases[i].rep && fl.partials == cases[i].par;
            char sf[32];
            CHECKF(ok, "flatten %s over %s: parts %lld,%lld,%lld replicas %lld "
                       "partials %lld; want %lld,%lld,%lld %lld %lld",
                   cases[i].t, factors_str(f, sf, sizeof sf),
                   (long long)fl.parts[0], (long long)fl.parts[1],
                   (long long)(cases[i].rank > 2 ? fl.parts[2] : 1),
                   (long long)fl.replicas, (long long)fl.partials,
                   (long long)cases[i].p0, (long long)cases[i].p1,
                   (long long)cases[i].p2, (long long)cases[i].rep,
                   (long long)cases[i].par);
        }
    }
    /* same_grid: yes and no answers. */
    {
        kt_tiling x, y;
        x = parse_ok("R.S0");
        y = parse_ok("S0.R");
        CHECK(kt_tiling_same_grid(&x, &y, 2, &f22));
        CHECK(!kt_tiling_same_grid(&x, &y, 2, &f32)); /* 2 parts vs 3 */
        x = parse_ok("P.S0");
        y = parse_ok("R.S0");
        CHECK(!kt_tiling_same_grid(&x, &y, 2, &f22));
        x = parse_ok("S0.S0");
        y = parse_ok("S0.S1");
        CHECK(!kt_tiling_same_grid(&x, &y, 2, &f22));
        x = parse_ok("S0.S1.S2");
        y = parse_ok("S2.S0.S1");
        CHECK(kt_tiling_same_grid(&x, &y, 3, &f222));
    }
}

/* ------------------------------------------------ 7. one-cut known answers */

static int64_t tcost(int rank, const int64_t *shape, int eb,
                     const kt_factors *f, const char *from, const char *to) {
    kt_tiling a = parse_ok(from), b = parse_ok(to);
    int64_t bytes = -1;
    kt_error err;
    kt_status s = kt_tiling_conversion_cost(rank, shape, eb, f, &a, &b, &bytes,
                                            NULL, &err);
    CHECKF(s == KT_OK, "cost %s -> %s: %s", from, to, err.message);
    compare_tilings("known", rank, shape, eb, f, &a, &b);
    return bytes;
}

static void test_known_answers(void) {
    int k2[1] = {2};
    kt_factors f2 = mkfactors(1, k2);
    int64_t shape[2] = {6, 4};
    const int64_t S = 24, eb = 4;
    int k;
    CHECK_EQ_I64(tcost(2, shape, 4, &f2, "S0", "S1"), S / 2 * eb);
    CHECK_EQ_I64(tcost(2, shape, 4, &f2, "S0", "R"), S * eb);
    CHECK_EQ_I64(tcost(2, shape, 4, &f2, "R", "S0"), 0);
    CHECK_EQ_I64(tcost(2, shape, 4, &f2, "R", "R"), 0);
    CHECK_EQ_I64(tcost(2, shape, 4, &f2, "P", "S0"), S * eb);
    CHECK_EQ_I64(tcost(2, shape, 4, &f2, "P", "S1"), S * eb);
    CHECK_EQ_I64(tcost(2, shape, 4, &f2, "P", "R"), 2 * S * eb);
    for (k = 2; k <= 8; k++) {
        kt_factors fk = mkfactors(1, &k);
        int64_t sh[2];
        int64_t Sk;
        sh[0] = (int64_t)k * 6;
        sh[1] = (int64_t)k * 5;
        Sk = sh[0] * sh[1];
        CHECKF(tcost(2, sh, 4, &fk, "S0", "R") == (k - 1) * Sk * 4,
               "all-gather k=%d: want %lld", k, (long long)((k - 1) * Sk * 4));
        CHECKF(tcost(2, sh, 4, &fk, "P", "S0") == (k - 1) * Sk * 4,
               "reduce-scatter k=%d: want %lld", k,
               (long long)((k - 1) * Sk * 4));
        CHECKF(tcost(2, sh, 4, &fk, "P", "R") == 2 * (k - 1) * Sk * 4,
               "all-reduce k=%d: want %lld", k,
               (long long)(2 * (k - 1) * Sk * 4));
        CHECKF(tcost(2, sh, 4, &fk, "S0", "S1") == Sk * (k - 1) / k * 4,
               "all-to-all k=%d: want %lld", k,
               (long long)(Sk * (k - 1) / k * 4));
        CHECK_EQ_I64(tcost(2, sh, 4, &fk, "R", "S1"), 0);
    }
    /* ktile cost --shape 4x4 --factors 2 --from P --to R  ->  128 bytes. */
    {
        int64_t s44[2] = {4, 4};
        CHECK_EQ_I64(tcost(2, s44, 4, &f2, "P", "R"), 128);
    }
    /* A two-cut plan: all-reduce over 4 devices of a P.P tensor, 2*(4-1)S. */
    {
        int k22[2] = {2, 2};
        kt_factors f22 = mkfactors(2, k22);
        int64_t s[2] = {8, 6};
        CHECK_EQ_I64(tcost(2, s, 4, &f22, "P.P", "R.R"), 2 * 3 * 48 * 4);
        CHECK_EQ_I64(tcost(2, s, 4, &f22, "S0.S1", "R.R"), 3 * 48 * 4);
        CHECK_EQ_I64(tcost(2, s, 2, &f22, "R.R", "S0.S1"), 0);
    }
}

/* ---------------------------------------------------- 8. uneven shapes */

static void all_pairs(const char *what, int rank, const int64_t *shape,
                      const kt_factors *f, int eb) {
    kt_tiling src[512], tgt[512];
    size_t ns, nt, i, j;
    int bad = 0;
    char ss[64], sf[64];
    enum_list(rank, shape, f, KT_ENUM_REPLICATE | KT_ENUM_PARTIAL, src, 512,
              &ns);
    enum_list(rank, shape, f, KT_ENUM_REPLICATE, tgt, 512, &nt);
    CHECKF(ns > 0 && ns <= 512 && nt > 0 && nt <= 512,
           "%s: %d sources, %d targets", what, (int)ns, (int)nt);
    if (ns > 512) ns = 512;
    if (nt > 512) nt = 512;
    for (i = 0; i < ns; i++)
        for (j = 0; j < nt; j++)
            if (!compare_tilings(what, rank, shape, eb, f, &src[i], &tgt[j]))
                bad++;
    CHECKF(bad == 0, "%s on %s over %s: %d of %d pairs disagree", what,
           shape_str(rank, shape, ss, sizeof ss),
           factors_str(f, sf, sizeof sf), bad, (int)(ns * nt));
}

static void test_uneven(void) {
    int k3[1] = {3}, k32[2] = {3, 2}, k23[2] = {2, 3}, k222[3] = {2, 2, 2};
    kt_factors f3 = mkfactors(1, k3), f32 = mkfactors(2, k32),
               f23 = mkfactors(2, k23), f222 = mkfactors(3, k222);
    int64_t s75[2] = {7, 5}, s1311[2] = {13, 11}, s3d[3] = {5, 3, 7};
    all_pairs("uneven 7x5/3", 2, s75, &f3, 4);
    all_pairs("uneven 13x11/3,2", 2, s1311, &f32, 4);
    all_pairs("uneven 13x11/2,3", 2, s1311, &f23, 2);
    all_pairs("uneven 5x3x7/2,2,2", 3, s3d, &f222, 8);
}

/* -------------------------------------------------- 9. cost(A -> A) = 0 */

static void self_zero(int rank, const int64_t *shape, const kt_factors *f) {
    kt_tiling list[1024];
    size_t n, i;
    int bad = 0;
    char ss[64], sf[64], st[64];
    enum_list(rank, shape, f, KT_ENUM_REPLICATE, list, 1024, &n);
    CHECK(n > 0 && n <= 1024);
    for (i = 0; i < n && i < 1024; i++) {
        int64_t bytes = -1, received[MAXDEV], dev, nd = my_devices(f), sum = 0;
        kt_error err;
        kt_status s = kt_tiling_conversion_cost(rank, shape, 4, f, &list[i],
                                                &list[i], &bytes, received,
                                                &err);
        for (dev = 0; dev < nd; dev++) sum += received[dev];
        if (s != KT_OK || bytes != 0 || sum != 0) {
            if (bad++ < 5)
                printf("  cost(%s -> itself) on %s over %s = %lld (%s)\n",
                       tstr(&list[i], st, sizeof st),
                       shape_str(rank, shape, ss, sizeof ss),
                       factors_str(f, sf, sizeof sf), (long long)bytes,
                       err.message);
        }
    }
    CHECKF(bad == 0, "%d tilings of %s over %s with nonzero cost to "
                     "themselves", bad, shape_str(rank, shape, ss, sizeof ss),
           factors_str(f, sf, sizeof sf));
}

static void test_self_zero(void) {
    int k222[3] = {2, 2, 2}, k32[2] = {3, 2}, k5[1] = {5}, k322[3] = {3, 2, 2};
    int k44[2] = {4, 4};
    kt_factors f222 = mkfactors(3, k222), f32 = mkfactors(2, k32),
               f5 = mkfactors(1, k5), f322 = mkfactors(3, k322),
               f44 = mkfactors(2, k44);
    int64_t s4d[4] = {4, 4, 4, 4}, s4u[4] = {3, 5, 2, 7}, s2[2] = {13, 11},
            s1[1] = {17}, s3[3] = {6, 7, 5}, s2b[2] = {16, 9};
    self_zero(4, s4d, &f222);
    self_zero(4, s4u, &f222);
    self_zero(2, s2, &f32);
    self_zero(1, s1, &f5);
    self_zero(2, s2, &f5);
    self_zero(3, s3, &f322);
    self_zero(2, s2b, &f44);
}

/* ------------------------------------------- 11a. random tiling pairs */

static void random_factors(kt_factors *f) {
    for (;;) {
        int i;
        int64_t prod = 1;
        memset(f, 0, sizeof *f);
        f->count = (int)rng_range(1, 3);
        for (i = 0; i < f->count; i++) {
            f->k[i] = (int)rng_range(2, 4);
            prod *= f->k[i];
        }
        if (prod <= 24) return;
    }
}

static void random_shape(int *rank, int64_t *shape, int64_t max_elems) {
    for (;;) {
        int64_t total = 1;
        int d;
        *rank = (int)rng_range(1, 4);
        for (d = 0; d < *rank; d++) {
            shape[d] = rng_range(1, 9);
            total *= shape[d];
        }
        if (total <= max_elems) return;
    }
}

static int random_elem_bytes(void) {
    static const int sizes[4] = {1, 2, 4, 8};
    return sizes[rng_next() % 4];
}

static void random_tiling(kt_tiling *t, int rank, const kt_factors *f,
                          int allow_partial) {
    int i;
    memset(t, 0, sizeof *t);
    t->ncuts = f->count;
    for (i = 0; i < f->count; i++) {
        int64_t r = rng_range(0, rank + (allow_partial ? 1 : 0));
        if (r < rank) t->cut[i] = (signed char)r;
        else if (r == rank) t->cut[i] = KT_CUT_R;
        else t->cut[i] = KT_CUT_P;
    }
}

static void test_random_tilings(int cases) {
    int c, done = 0, skipped = 0, bad = 0;
    for (c = 0; c < cases; c++) {
        kt_factors f;
        kt_tiling a, b;
        int64_t shape[KT_MAX_DIMS];
        int rank, eb, fits_a, fits_b, tries = 0;
        kt_error err;
        random_factors(&f);
        random_shape(&rank, shape, 1200);
        eb = random_elem_bytes();
        do {
            random_tiling(&a, rank, &f, 1);
            random_tiling(&b, rank, &f, 0);
            fits_a = my_fits(&a, rank, shape, &f);
            fits_b = my_fits(&b, rank, shape, &f);
            /* kt_tiling_check must agree with the definition. */
            CHECKF((kt_tiling_check(&a, "x", rank, shape, &f, 1, &err) ==
                    KT_OK) == fits_a,
                   "seed %llx case %d: kt_tiling_check disagrees on fit",
                   (unsigned long long)SEED, c);
        } while ((!fits_a || !fits_b) && ++tries < 20);
        if (!fits_a || !fits_b) {
            skipped++;
            continue;
        }
        done++;
        if (!compare_tilings("random tilings", rank, shape, eb, &f, &a, &b)) {
            char sa[64], sb[64], ss[64], sf[64];
            if (bad++ < 10)
                printf("  seed %llx case %d: %s -> %s on %s over %s elem %d\n",
                       (unsigned long long)SEED, c, tstr(&a, sa, sizeof sa),
                       tstr(&b, sb, sizeof sb),
                       shape_str(rank, shape, ss, sizeof ss),
                       factors_str(&f, sf, sizeof sf), eb);
        }
    }
    CHECKF(done > cases / 2, "only %d of %d random tiling cases ran", done,
           cases);
    CHECKF(bad == 0, "seed %llx: %d of %d random tiling cases disagree",
           (unsigned long long)SEED, bad, done);
    (void)skipped;
}

/* ------------------------------------------- 11b. random placements */

static void random_box(kt_box *b, int rank, const int64_t *shape) {
    int d;
    int64_t mode = rng_range(0, 9);
    memset(b, 0, sizeof *b);
    for (d = 0; d < rank; d++) {
        int64_t ext = shape[d], lo, hi;
        if (mode == 0) { /* empty or inverted somewhere */
            lo = rng_range(-2, ext + 2);
            hi = lo - rng_range(0, 2);
        } else if (mode == 1) { /* beyond the tensor on both sides */
            lo = -rng_range(1, 5);
            hi = ext + rng_range(1, 5);
        } else if (mode == 2) { /* exactly the tensor */
            lo = 0;
            hi = ext;
        } else {
            lo = rng_range(-2, ext + 1);
            hi = lo + rng_range(0, ext + 2);
        }
        b->r[d].lo = lo;
        b->r[d].hi = hi;
    }
}

static void dump_placement(const char *role, const kt_placement *p) {
    int64_t dev;
    int d;
    printf("    %s: %lld devices, partials %lld\n", role, (long long)p->ndev,
           (long long)p->partials);
    for (dev = 0; dev < p->ndev; dev++) {
        printf("      dev %lld class %lld:", (long long)dev,
               (long long)p->partial_class[dev]);
        for (d = 0; d < p->rank; d++)
            printf(" [%lld,%lld)", (long long)p->box[dev].r[d].lo,
                   (long long)p->box[dev].r[d].hi);
        printf("\n");
    }
}

static void test_random_placements(int cases) {
    int c, bad_total = 0, bad_sum = 0, bad_dev = 0, sum_cases_orphans = 0;
    int orphan_cases = 0, dumped = 0;
    for (c = 0; c < cases; c++) {
        kt_placement a, b;
        kt_error err;
        int64_t shape[KT_MAX_DIMS], ndev, q = 1, dev, bytes = -1, want;
        int64_t received[MAXDEV], nnh[MAXDEV], sum = 0, orphans = 0;
        nbox src[MAXDEV], tgt[MAXDEV];
        int rank, eb, d, total_ok, sum_ok, dev_ok = 1;
        kt_status s;
        char ss[64];
        random_shape(&rank, shape, 1500);
        eb = random_elem_bytes();
        ndev = rng_range(1, 8);
        s = kt_placement_init(&a, rank, ndev, &err);
        CHECKF(s == KT_OK, "placement init: %s", err.message);
        if (s != KT_OK) continue;
        s = kt_placement_init(&b, rank, ndev, &err);
        CHECKF(s == KT_OK, "placement init: %s", err.message);
        if (s != KT_OK) {
            kt_placement_free(&a);
            continue;
        }
        CHECK(a.partials == 1 && b.partials == 1);
        for (dev = 0; dev < ndev; dev++) {
            random_box(&a.box[dev], rank, shape);
            random_box(&b.box[dev], rank, shape);
        }
        if (ndev >= 2 && rng_range(0, 1)) {
            int64_t maxq = ndev < 4 ? ndev : 4, perm[MAXDEV], i;
            q = rng_range(2, maxq);
            a.partials = q;
            /* Each class appears: a random permutation of devices, the
               first q of them get classes 0..q-1. */
            for (i = 0; i < ndev; i++) perm[i] = i;
            for (i = ndev - 1; i > 0; i--) {
                int64_t j = rng_range(0, i), t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
            }
            for (i = 0; i < ndev; i++)
                a.partial_class[perm[i]] = i < q ? i : rng_range(0, q - 1);
            /* Half the time every class has a device holding everything,
               so every needed element has holders. */
            if (rng_range(0, 1))
                for (i = 0; i < q; i++)
                    for (d = 0; d < rank; d++) {
                        a.box[perm[i]].r[d].lo = -rng_range(0, 2);
                        a.box[perm[i]].r[d].hi = shape[d] + rng_range(0, 2);
                    }
        }
        for (dev = 0; dev < ndev; dev++) {
            for (d = 0; d < rank; d++) {
                src[dev].lo[d] = a.box[dev].r[d].lo;
                src[dev].hi[d] = a.box[dev].r[d].hi;
                tgt[dev].lo[d] = b.box[dev].r[d].lo;
                tgt[dev].hi[d] = b.box[dev].r[d].hi;
            }
        }
        for (dev = 0; dev < MAXDEV; dev++) received[dev] = -7;
        s = kt_conversion_cost(rank, shape, eb, &a, &b, &bytes, received,
                               &err);
        CHECKF(s == KT_OK, "seed %llx placement case %d: %s",
               (unsigned long long)SEED, c, err.message);
        want = naive_cost(rank, shape, eb, ndev, src, q, tgt, nnh, &orphans);
        if (q >= 2 && orphans > 0) orphan_cases++;
        {
            /* total alone: per-device volumes or union volumes of
               arbitrary (overlapping) boxes */
            int64_t alone = -1;
            kt_status s2 = kt_conversion_cost(rank, shape, eb, &a, &b, &alone,
                                              NULL, &err);
            CHECKF(s2 == KT_OK && alone == want,
                   "seed %llx placement case %d: total alone %lld, naive "
                   "%lld", (unsigned long long)SEED, c, (long long)alone,
                   (long long)want);
        }
        for (dev = 0; dev < ndev; dev++) sum += received[dev];
        total_ok = s == KT_OK && bytes == want;
        sum_ok = s == KT_OK && sum == bytes;
        if (q == 1)
            for (dev = 0; dev < ndev; dev++)
                if (received[dev] != nnh[dev]) dev_ok = 0;
        for (dev = 0; dev < ndev; dev++)
            if (received[dev] < 0) dev_ok = 0;
        CHECKF(total_ok,
               "seed %llx placement case %d: shape %s, %lld devices, q %lld, "
               "elem %d: library %lld, naive %lld", (unsigned long long)SEED,
               c, shape_str(rank, shape, ss, sizeof ss), (long long)ndev,
               (long long)q, eb, (long long)bytes, (long long)want);
        CHECKF(sum_ok,
               "seed %llx placement case %d: shape %s, %lld devices, q %lld, "
               "elem %d: received sums to %lld, total %lld (%lld elements "
               "needed but held by no device; (q-1)*that*elem = %lld)",
               (unsigned long long)SEED, c,
               shape_str(rank, shape, ss, sizeof ss), (long long)ndev,
               (long long)q, eb, (long long)sum, (long long)bytes,
               (long long)orphans, (long long)((q - 1) * orphans * eb));
        CHECKF(dev_ok,
               "seed %llx placement case %d: per-device received bytes wrong "
               "(q %lld)", (unsigned long long)SEED, c, (long long)q);
        if (!total_ok) bad_total++;
        if (!sum_ok) {
            bad_sum++;
            if (orphans > 0) sum_cases_orphans++;
        }
        if (!dev_ok) bad_dev++;
        if ((!total_ok || !sum_ok || !dev_ok) && dumped < 3) {
            dumped++;
            printf("    shape %s, elem %d, bytes %lld, naive %lld\n",
                   shape_str(rank, shape, ss, sizeof ss), eb,
                   (long long)bytes, (long long)want);
            dump_placement("source", &a);
            dump_placement("target", &b);
            printf("      received:");
            for (dev = 0; dev < ndev; dev++)
                printf(" %lld", (long long)received[dev]);
            printf("\n");
        }
        kt_placement_free(&a);
        kt_placement_free(&b);
    }
    printf("random placements: %d cases, %d with partial sums and elements "
           "held by nobody; mismatches: total %d, received-sum %d (%d of "
           "them with such elements), per-device %d\n",
           cases, orphan_cases, bad_total, bad_sum, sum_cases_orphans,
           bad_dev);
}

/* -------------------------------- placements from tilings match my_box */

static void test_placement_from_tiling(void) {
    int k32[2] = {3, 2};
    kt_factors f = mkfactors(2, k32);
    int64_t shape[2] = {13, 11};
    static const char *ts[] = {"S0.S1", "P.S0", "S1.P", "R.S0", "S0.S0",
                               "P.P"};
    size_t i;
    for (i = 0; i < sizeof ts / sizeof *ts; i++) {
        kt_tiling t = parse_ok(ts[i]);
        kt_placement p;
        kt_error err;
        int64_t dev;
        int ok = 1, classes_ok = 1;
        int seen[6] = {0, 0, 0, 0, 0, 0};
        kt_status s = kt_placement_from_tiling(&p, &t, 2, shape, &f, &err);
        CHECKF(s == KT_OK, "placement from %s: %s", ts[i], err.message);
        if (s != KT_OK) continue;
        CHECK_EQ_I64(p.ndev, 6);
        CHECK_EQ_I64(p.partials, my_partials(&t, &f));
        for (dev = 0; dev < 6; dev++) {
            nbox nb;
            int d;
            my_box(&t, 2, shape, &f, dev, &nb);
            for (d = 0; d < 2; d++)
                if (p.box[dev].r[d].lo != nb.lo[d] ||
                    p.box[dev].r[d].hi != nb.hi[d])
                    ok = 0;
            if (p.partial_class[dev] < 0 || p.partial_class[dev] >= p.partials)
                classes_ok = 0;
            else seen[p.partial_class[dev]] = 1;
        }
        for (dev = 0; dev < p.partials && dev < 6; dev++)
            if (!seen[dev]) classes_ok = 0;
        CHECKF(ok, "placement from %s: boxes differ from DESIGN.md", ts[i]);
        CHECKF(classes_ok, "placement from %s: partial classes wrong", ts[i]);
        kt_placement_free(&p);
    }
    /* A tiling that does not fit is an error. */
    {
        kt_tiling t = parse_ok("S1.S1");
        int64_t thin[2] = {13, 5};
        kt_placement p;
        kt_error err;
        memset(&err, 0, sizeof err);
        CHECK(kt_placement_from_tiling(&p, &t, 2, thin, &f, &err) != KT_OK);
        CHECK(err.message[0] != '\0');
    }
}

/* The smallest case of the random-placement finding: partial sums
   (q = 2), one element needed by device 0 and held by no device.  The rule
   gives (q-1) + |T| = 2 elements; the received array must add up to it. */
static void test_orphan_partials(void) {
    int64_t shape[1] = {1}, bytes = -1, received[2] = {-7, -7};
    kt_placement a, b;
    kt_error err;
    CHECK(kt_placement_init(&a, 1, 2, &err) == KT_OK);
    CHECK(kt_placement_init(&b, 1, 2, &err) == KT_OK);
    a.partials = 2;
    a.partial_class[0] = 0;
    a.partial_class[1] = 1; /* both source boxes stay empty: [0,0) */
    b.box[0].r[0].lo = 0;
    b.box[0].r[0].hi = 1; /* device 0 needs the element */
    CHECK(kt_conversion_cost(1, shape, 4, &a, &b, &bytes, received, &err) ==
          KT_OK);
    CHECK_EQ_I64(bytes, 2 * 4);
    CHECKF(received[0] + received[1] == bytes,
           "orphan partials: received %lld + %lld, total %lld",
           (long long)received[0], (long long)received[1], (long long)bytes);
    kt_placement_free(&a);
    kt_placement_free(&b);
}

/* -------------------------------------------------- 12. error paths */

static void expect_cost_error(const char *what, int rank,
                              const int64_t *shape, int eb,
                              const kt_placement *a, const kt_placement *b) {
    kt_error err;
    int64_t bytes = 12345, received[MAXDEV];
    kt_status s;
    memset(&err, 0, sizeof err);
    s = kt_conversion_cost(rank, shape, eb, a, b, &bytes, received, &err);
    CHECKF(s != KT_OK, "%s: accepted (bytes %lld)", what, (long long)bytes);
    CHECKF(s == KT_OK || err.message[0] != '\0', "%s: no message", what);
    CHECKF(s == KT_OK || err.status == s, "%s: err.status %d, returned %d",
           what, (int)err.status, (int)s);
}

static void test_cost_errors(void) {
    int64_t shape[2] = {6, 4};
    kt_placement a, b, c;
    kt_error err;
    int64_t dev;
    CHECK(kt_placement_init(&a, 2, 2, &err) == KT_OK);
    CHECK(kt_placement_init(&b, 2, 2, &err) == KT_OK);
    CHECK(kt_placement_init(&c, 2, 3, &err) == KT_OK);
    for (dev = 0; dev < 2; dev++) {
        a.box[dev].r[0].lo = 0;
        a.box[dev].r[0].hi = 6;
        a.box[dev].r[1].lo = 0;
        a.box[dev].r[1].hi = 4;
        b.box[dev] = a.box[dev];
    }
    /* Sanity: the good pair works. */
    {
        int64_t bytes = -1;
        CHECK(kt_conversion_cost(2, shape, 4, &a, &b, &bytes, NULL, &err) ==
              KT_OK);
        CHECK_EQ_I64(bytes, 0);
    }
    expect_cost_error("mismatched device counts", 2, shape, 4, &a, &c);
    expect_cost_error("mismatched device counts (reversed)", 2, shape, 4, &c,
                      &a);
    b.partials = 2;
    b.partial_class[1] = 1;
    expect_cost_error("target with partials 2", 2, shape, 4, &a, &b);
    b.partials = 1;
    b.partial_class[1] = 0;
    expect_cost_error("elem_bytes 0", 2, shape, 0, &a, &b);
    expect_cost_error("elem_bytes -4", 2, shape, -4, &a, &b);
    a.partials = 0;
    expect_cost_error("source with 0 partial classes", 2, shape, 4, &a, &b);
    a.partials = 1;
    expect_cost_error("rank mismatch", 3, shape, 4, &a, &b);
    {
        int64_t zero[2] = {6, 0};
        expect_cost_error("zero extent", 2, zero, 4, &a, &b);
    }
    kt_placement_free(&a);
    kt_placement_free(&b);
    kt_placement_free(&c);
    /* Placement init rejects nonsense. */
    {
        kt_placement p;
        memset(&err, 0, sizeof err);
        CHECK(kt_placement_init(&p, 2, 0, &err) != KT_OK);
        CHECK(err.message[0] != '\0');
        kt_placement_free(&p);
        CHECK(kt_placement_init(&p, KT_MAX_DIMS + 1, 2, &err) != KT_OK);
        kt_placement_free(&p);
    }
    /* Tiling costs: P target, bad fit, wrong cut count. */
    {
        int k2[1] = {2};
        kt_factors f2 = mkfactors(1, k2);
        kt_tiling x = parse_ok("S0"), p = parse_ok("P"), s1 = parse_ok("S1");
        kt_tiling two = parse_ok("S0.S1");
        int64_t thin[2] = {6, 1}, bytes = 99;
        memset(&err, 0, sizeof err);
        CHECK(kt_tiling_conversion_cost(2, shape, 4, &f2, &x, &p, &bytes, NULL,
                                        &err) != KT_OK);
        CHECK(err.message[0] != '\0');
        memset(&err, 0, sizeof err);
        CHECK(kt_tiling_conversion_cost(2, thin, 4, &f2, &x, &s1, &bytes, NULL,
                                        &err) != KT_OK);
        CHECK(strstr(err.message, "dim 1") != NULL);
        memset(&err, 0, sizeof err);
        CHECK(kt_tiling_conversion_cost(2, shape, 4, &f2, &two, &x, &bytes,
                                        NULL, &err) != KT_OK);
        CHECK(err.message[0] != '\0');
        memset(&err, 0, sizeof err);
        CHECK(kt_tiling_conversion_cost(2, shape, 0, &f2, &x, &s1, &bytes,
                                        NULL, &err) != KT_OK);
        CHECK(err.message[0] != '\0');
    }
}

/* ------------------------- found by a mutation-testing pass (each of these
   once let a wrong tiling rule through) */

/* S<d> is canonical (no leading zeros: the format prints S1, not S01) and
   bounded by KT_MAX_DIMS (8) */
static void test_tiling_text_bounds(void) {
    kt_tiling t;
    kt_error err;
    CHECK(kt_tiling_parse("S7", &t, &err) == KT_OK && t.cut[0] == 7);
    CHECKF(kt_tiling_parse("S8", &t, &err) == KT_ERR_INVALID,
           "S8 (= KT_MAX_DIMS) accepted");
    CHECKF(kt_tiling_parse("S01", &t, &err) != KT_OK,
           "S01 accepted: format would print S1");
    CHECKF(kt_tiling_parse("R.S00", &t, &err) != KT_OK, "S00 accepted");
}

/* kt_tiling_device_box numbers partial classes mixed-radix in cut order
   (like devices, DESIGN.md "Tilings"): with P.P on factors 2,2, device d
   has coordinates (d/2, d%2) and partial class (d/2)*2 + d%2 = d; with
   S0.P.P on 3,2,2 device d is in class d % 4; agrees with
   kt_placement_from_tiling. */
static void test_partial_class_numbering(void) {
    const int64_t shape[2] = {6, 4};
    kt_factors f22, f322;
    kt_tiling t;
    kt_error err;
    kt_placement pl;
    kt_box b;
    int64_t d, pc;
    f22.count = 2; f22.k[0] = 2; f22.k[1] = 2;
    f322.count = 3; f322.k[0] = 3; f322.k[1] = 2; f322.k[2] = 2;
    kt_tiling_parse("P.P", &t, &err);
    for (d = 0; d < 4; d++) {
        kt_tiling_device_box(&t, 2, shape, &f22, d, &b, &pc);
        CHECKF(pc == d, "P.P on 2,2: device %lld in class %lld", (long long)d,
               (long long)pc);
    }
    kt_tiling_parse("S0.P.P", &t, &err);
    if (kt_placement_from_tiling(&pl, &t, 2, shape, &f322, &err) != KT_OK) {
        CHECK(0);
        return;
    }
    for (d = 0; d < 12; d++) {
        kt_tiling_device_box(&t, 2, shape, &f322, d, &b, &pc);
        CHECKF(pc == d % 4 && pc == pl.partial_class[d],
               "S0.P.P on 3,2,2: device %lld class %lld (placement %lld)",
               (long long)d, (long long)pc, (long long)pl.partial_class[d]);
    }
    kt_placement_free(&pl);
}

/* S<rank> names no
   dimension of a rank-`rank` tensor (dims are 0..rank-1). */
static void test_tiling_rank_check(void) {
    const int64_t shape[3] = {4, 4, 4}; /* one spare extent: no overread */
    kt_factors f2;
    kt_tiling t;
    kt_error err;
    f2.count = 1;
    f2.k[0] = 2;
    kt_tiling_parse("S2", &t, &err);
    CHECKF(kt_tiling_check(&t, "x", 2, shape, &f2, 0, &err) == KT_ERR_INVALID,
           "S2 accepted on a rank-2 tensor");
    kt_tiling_parse("S1", &t, &err);
    CHECK(kt_tiling_check(&t, "x", 2, shape, &f2, 0, &err) == KT_OK);
}

/* ------------------------- found by a third mutation-testing pass (the
   conversion cost's shortcuts on hand-made placements) */

/* A target that is a grid (its boxes equal or disjoint) does not make the
   intersections with an overlapping source a grid.  x[4], q = 2 (device d
   in class d), device 0 holds [0,3), device 1 holds [1,4), both need all
   of x.  Every element has T = {0,1} meeting H, so by the DESIGN.md rule
   each costs (q-1) + |T| - 1 = 2: 8 elements, 32 bytes of f32, with the
   per-device figures or without them. */
static void test_grid_target_overlapping_source(void) {
    kt_placement a, b;
    kt_error err;
    int64_t shape[1] = {4}, bytes = -1, alone = -1, received[2] = {-1, -1};
    int dev;
    CHECK(kt_placement_init(&a, 1, 2, &err) == KT_OK);
    CHECK(kt_placement_init(&b, 1, 2, &err) == KT_OK);
    a.box[0].r[0].lo = 0;
    a.box[0].r[0].hi = 3;
    a.box[1].r[0].lo = 1;
    a.box[1].r[0].hi = 4;
    for (dev = 0; dev < 2; dev++) {
        b.box[dev].r[0].lo = 0;
        b.box[dev].r[0].hi = 4;
    }
    a.partials = 2;
    a.partial_class[1] = 1;
    b.grid = 1; /* both boxes equal: a grid */
    CHECK(kt_conversion_cost(1, shape, 4, &a, &b, &alone, NULL, &err) ==
          KT_OK);
    CHECK_EQ_I64(alone, 32);
    CHECK(kt_conversion_cost(1, shape, 4, &a, &b, &bytes, received, &err) ==
          KT_OK);
    CHECK_EQ_I64(bytes, 32);
    CHECK_EQ_I64(received[0] + received[1], 32);
    kt_placement_free(&a);
    kt_placement_free(&b);
}

/* Every device holds one partial class, so a source has at most as many
   classes as devices, each device's in [0, q).  A hand-made placement
   with more (2^20 classes on one device, 2^44 elements: each would cost
   2^20 - 1 bytes, past int64) or a class out of range is refused as
   invalid, naming the placement. */
static void test_partial_classes_refused(void) {
    kt_placement a, b;
    kt_error err;
    int64_t shape[2] = {INT64_C(1) << 22, INT64_C(1) << 22}, bytes = -1;
    int d;
    kt_status s;
    CHECK(kt_placement_init(&a, 2, 1, &err) == KT_OK);
    CHECK(kt_placement_init(&b, 2, 1, &err) == KT_OK);
    for (d = 0; d < 2; d++) {
        a.box[0].r[d].lo = b.box[0].r[d].lo = 0;
        a.box[0].r[d].hi = b.box[0].r[d].hi = shape[d];
    }
    a.partials = INT64_C(1) << 20;
    s = kt_conversion_cost(2, shape, 1, &a, &b, &bytes, NULL, &err);
    CHECKF(s == KT_ERR_INVALID && strstr(err.message, "source placement") &&
               strstr(err.message, "1048576 partial classes on 1 device "),
           "2^20 classes on one device: status %d, bytes %lld, '%s'", (int)s,
           (long long)bytes, s == KT_OK ? "" : err.message);
    kt_placement_free(&a);
    kt_placement_free(&b);
    /* two devices, two classes, device 1 put in class 2 */
    CHECK(kt_placement_init(&a, 1, 2, &err) == KT_OK);
    CHECK(kt_placement_init(&b, 1, 2, &err) == KT_OK);
    for (d = 0; d < 2; d++) {
        a.box[d].r[0].lo = b.box[d].r[0].lo = 0;
        a.box[d].r[0].hi = b.box[d].r[0].hi = 4;
    }
    a.partials = 2;
    a.partial_class[1] = 2;
    s = kt_conversion_cost(1, shape, 4, &a, &b, &bytes, NULL, &err);
    CHECKF(s == KT_ERR_INVALID &&
               strstr(err.message, "device 1 in partial class 2 of 2"),
           "class 2 of 2: status %d, '%s'", (int)s,
           s == KT_OK ? "" : err.message);
    a.partial_class[1] = 1; /* then it is a placement: 2 devices reduce */
    CHECK(kt_conversion_cost(1, shape, 4, &a, &b, &bytes, NULL, &err) ==
          KT_OK);
    kt_placement_free(&a);
    kt_placement_free(&b);
}

/* ------------------------------------------------------------------ main */

/* Arguments outside the algebra: no crash.  A split into k < 1 parts or
   a part outside [0, k) is the empty range at r.lo (k = 0 divided by
   zero); no place for the byte count is an error. */
static void test_bad_arguments(void) {
    kt_range r = {3, 10}, e;
    kt_factors f;
    kt_tiling a, b;
    kt_error err;
    int64_t shape[1] = {8};
    e = kt_split_range(r, 0, 0);
    CHECK(e.lo == 3 && e.hi == 3);
    e = kt_split_range(r, -2, 1);
    CHECK(e.lo == 3 && e.hi == 3);
    e = kt_split_range(r, 2, 2);
    CHECK(e.lo == 3 && e.hi == 3);
    e = kt_split_range(r, 2, -1);
    CHECK(e.lo == 3 && e.hi == 3);
    e = kt_split_range(r, 2, 1);
    CHECK(e.lo == 6 && e.hi == 10);
    kt_factors_parse("2", &f, &err);
    kt_tiling_parse("S0", &a, &err);
    kt_tiling_parse("R", &b, &err);
    CHECK(kt_tiling_conversion_cost(1, shape, 4, &f, &a, &b, NULL, NULL,
                                    &err) == KT_ERR_INVALID &&
          strstr(err.message, "no bytes"));
}

int main(void) {
    test_bad_arguments();
    test_tiling_text_bounds();
    test_partial_class_numbering();
    test_tiling_rank_check();
    test_grid_target_overlapping_source();
    test_partial_classes_refused();
    {
        /* review findings: a rank beyond KT_MAX_DIMS is an error, not an
           overrun; byte counts that could pass int64 are refused */
        kt_factors f2;
        kt_tiling a, b;
        kt_error err;
        int64_t shape[12] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, bytes;
        int64_t huge[2] = {INT64_C(1) << 20, INT64_C(1) << 26};
        kt_factors_parse("2", &f2, &err);
        kt_tiling_parse("S0", &a, &err);
        kt_tiling_parse("R", &b, &err);
        CHECK(kt_tiling_conversion_cost(12, shape, 4, &f2, &a, &b, &bytes,
                                        NULL, &err) == KT_ERR_INVALID &&
              strstr(err.message, "rank"));
        kt_factors_parse("128,128", &f2, &err);
        kt_tiling_parse("S0.S1", &a, &err);
        kt_tiling_parse("R.R", &b, &err);
        CHECK(kt_tiling_conversion_cost(2, huge, 8, &f2, &a, &b, &bytes, NULL,
                                        &err) == KT_ERR_LIMIT);
    }

    clock_t t0 = clock();
    printf("test_cost: seed %llx\n", (unsigned long long)SEED);
    rng_state = SEED;
    test_parse_format();
    test_tiling_check();
    test_device_coords();
    test_split_range();
    test_enumerate();
    test_flatten();
    test_known_answers();
    test_uneven();
    test_self_zero();
    test_placement_from_tiling();
    test_random_tilings(1000);
    test_random_placements(1000);
    test_orphan_partials();
    test_cost_errors();
    printf("test_cost: %.2f s cpu\n", (double)(clock() - t0) / CLOCKS_PER_SEC);
    return KT_TEST_SUMMARY();
}
