/* test_sync.c -- sched.h: gradient-synchronisation schedules (Zhang thesis
   3.2 wait-free backprop, 3.3 Algorithm 2, 7.6.3 merging, Eq. 8.2/8.3).

   What is checked:
     1. Known answers, computed by hand in the comments: a 3-layer ring
        all-reduce chain in every mode (traditional, WFBP, buckets of 5 and
        of unbounded bytes, the DP partition, the best of three caps), and
        a 4-layer chain mixing PS, SFB and Poseidon's adaptive choice
        (Table 3.4 counts, Algorithm 2's choice both ways), and the wire
        times of Section 3.3's VGG19 fc layer (3.7M floats by SFB, 58.7M
        by PS).
     2. Properties on random chains (fresh per seed; one or two channels,
        layers that send nothing mixed in): WFBP never ends later than
        traditional; a sync never starts before its gradient exists and
        the network carries one bucket at a time; buckets below the
        smallest gradient are exactly WFBP; one unbounded bucket is the
        traditional schedule minus the overheads it saves; with no
        overhead (phi = delta = 0) merging never helps, an unbounded
        bucket equals traditional and the DP equals WFBP; the DP's
        completion time equals brute force over every contiguous partition
        (priced by this file's own evaluator, which also agrees with
        kt_sync_schedule_buckets on every partition), and no cap beats it.
     3. Bad input: negative sizes and times, NaN, infinities, zero workers,
        zero bandwidth, servers outside 1..workers, SFB without a shape,
        bad bucket caps, non-contiguous or mixed buckets, empty candidate
        lists, finite figures whose times overflow (one layer's, the
        backward's sum, the network's sum) -- each a non-zero status and
        a message naming the layer where there is one.
     4. Plans: the layers of a data-parallel MLP (one per weight, in
        backward order, whole weights over all devices, backward compute
        equal to the simulator's compute tasks of the backward ops, or of
        their forward ops with backward_as_forward), of a hybrid plan on two
        nodes (a weight replicated only across nodes syncs half of itself
        over the slow level; a weight split at every cut does not sync),
        the adaptive method's M, N, K, and the errors. */
#define KT_IMPLEMENTATION
#include "../sched.h"
#include "kt_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int near(double a, double b) {
    return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b)) + 1e-15;
}

static kt_sync_layer ring_layer(double b, double bytes, int64_t w, double bw,
                                double phi, double delta) {
    kt_sync_layer l;
    memset(&l, 0, sizeof l);
    l.backward_seconds = b;
    l.bytes = bytes;
    l.method = KT_SYNC_ALLREDUCE;
    l.workers = w;
    l.servers = w;
    l.bandwidth = bw;
    l.phi = phi;
    l.delta = delta;
    l.tensor = -1;
    return l;
}

static double run_total(const kt_sync_layer *ls, int n, kt_sync_mode mode,
                        double cap, kt_sync_schedule *out) {
    kt_error err;
    kt_status s = kt_sync_schedule_run(ls, n, mode, cap, out, &err);
    CHECKF(s == KT_OK, "mode %d: %s", (int)mode, err.message);
    return s == KT_OK ? out->total_seconds : -1;
}

/* ------------------------------------------------ 1. known answers */

/* Three layers, ring all-reduce over w = 2 at 1 byte/s, phi = 1 s,
   delta = 2 s: wire = 2(w-1)/w * bytes = bytes, overhead = w phi + delta
   = 4, so each sync takes bytes + 4.
     b = 1, 2, 3 -> gradients exist at 1, 3, 6;  bytes 4, 1, 2.
   traditional: from 6, syncs of 8, 5, 6 -> [6,14) [14,19) [19,25): 25.
   WFBP:        [1,9) [9,14) [14,20): 20.
   cap 5:       {0,1} (5 bytes) ready 3, 5 + 4 -> [3,12); {2} ready 6,
                waits to 12, 6 -> [12,18): 18.
   cap inf:     {0,1,2} ready 6, 7 + 4 -> [6,17): 17.
   DP:          {0} [1,9), {1,2} ready 6, waits to 9, 3 + 4 -> 16; the
                other partitions give 17, 18, 20: 16.
   best of caps 1, 5, 100: 20, 18, 17 -> 100. */
static void test_known_ring(void) {
    kt_sync_layer ls[3];
    kt_sync_schedule s;
    kt_error err;
    double best = 0;
    ls[0] = ring_layer(1, 4, 2, 1, 1, 2);
    ls[1] = ring_layer(2, 1, 2, 1, 1, 2);
    ls[2] = ring_layer(3, 2, 2, 1, 1, 2);

    CHECK(near(run_total(ls, 3, KT_SYNC_TRADITIONAL, 0, &s), 25));
    CHECK(near(s.backward_seconds, 6) && s.nbuckets == 3);
    CHECK(near(s.start[0], 6) && near(s.end[0], 14) && near(s.start[1], 14) &&
          near(s.end[1], 19) && near(s.start[2], 19) && near(s.end[2], 25));
    CHECK(near(s.ready[0], 1) && near(s.ready[1], 3) && near(s.ready[2], 6));
    kt_sync_schedule_free(&s);

    CHECK(near(run_total(ls, 3, KT_SYNC_WFBP, 0, &s), 20));
    CHECK(near(s.start[0], 1) && near(s.end[0], 9) && near(s.start[1], 9) &&
          near(s.end[1], 14) && near(s.start[2], 14) && near(s.end[2], 20));
    CHECK(near(s.network_seconds, 19) && s.nbuckets == 3);
    kt_sync_schedule_free(&s);

    CHECK(near(run_total(ls, 3, KT_SYNC_BUCKET, 5, &s), 18));
    CHECK(s.nbuckets == 2 && s.bucket[0] == 0 && s.bucket[1] == 0 &&
          s.bucket[2] == 1);
    CHECK(near(s.start[0], 3) && near(s.end[1], 12) && near(s.start[2], 12));
    kt_sync_schedule_free(&s);

    CHECK(near(run_total(ls, 3, KT_SYNC_BUCKET, INFINITY, &s), 17));
    CHECK(s.nbuckets == 1 && near(s.start[0], 6) && near(s.network_seconds, 11));
    kt_sync_schedule_free(&s);

    CHECK(near(run_total(ls, 3, KT_SYNC_BUCKET_OPTIMAL, 0, &s), 16));
    CHECK(s.nbuckets == 2 && s.bucket[0] == 0 && s.bucket[1] == 1 &&
          s.bucket[2] == 1);
    CHECK(near(s.start[1], 9) && near(s.end[2], 16));
    kt_sync_schedule_free(&s);

    {
        double caps[3] = {1, 5, 100};
        kt_status st = kt_sync_best_bucket(ls, 3, caps, 3, &best, &s, &err);
        CHECKF(st == KT_OK, "%s", err.message);
        CHECK(best == 100 && near(s.total_seconds, 17));
        kt_sync_schedule_free(&s);
    }
}

static kt_sync_layer table34_layer(double b, kt_sync_method m, int64_t mm,
                                   int64_t nn, int64_t k, double bytes) {
    kt_sync_layer l = ring_layer(b, bytes, 4, 8, 0.5, 1);
    l.method = m;
    l.servers = 4;
    l.m = mm;
    l.n = nn;
    l.k = k;
    return l;
}

/* P1 = P2 = 4 nodes at 8 bytes/s, phi = 0.5 s, delta = 1 s; a node's wire
   time is half its Table 3.4 count (send + receive at once); overhead
   (P1 - 1) phi + delta = 2.5.
     A  PS, 2x2 floats (16 B): both-count 2MN(P1+P2-2)/P2 = 3 MN, i.e. 3
        bytes per gradient byte: 0.5 * 3 * 16 / 8 = 3, + 2.5 = 5.5.
     B  SFB, 2x2, K = 1: 2K(P1-1)(M+N) = 24 floats = 96 B: 0.5*96/8 = 6,
        + 2.5 = 8.5.
     C  adaptive 64x64, K = 1: SFB 768 floats <= PS 12288 (Algorithm 2):
        SFB, 0.5 * 768 * 4 / 8 = 192, + 2.5 = 194.5.
     D  adaptive, not fully connected, 64 B: PS, 0.5*3*64/8 = 12, + 2.5.
   b = 10, 1, 1, 1 -> gradients at 10, 11, 12, 13.
   WFBP: A [10,15.5), B [15.5,24), C [24,218.5), D [218.5,233): 233.
   traditional: 13 + 5.5 + 8.5 + 194.5 + 14.5 = 236.
   cap inf: A alone (PS), {B,C} (both SFB on one channel) ready 12, from
   15.5 for 6 + 192 + 2.5 -> 216, D (PS again, a new bucket) -> 230.5. */
static void test_known_methods(void) {
    kt_sync_layer ls[4];
    kt_sync_schedule s;
    kt_sync_method used;
    kt_error err;
    double wire, over;
    ls[0] = table34_layer(10, KT_SYNC_PS, 2, 2, 1, 16);
    ls[1] = table34_layer(1, KT_SYNC_SFB, 2, 2, 1, 16);
    ls[2] = table34_layer(1, KT_SYNC_ADAPTIVE, 64, 64, 1, 64 * 64 * 4);
    ls[3] = table34_layer(1, KT_SYNC_ADAPTIVE, 0, 0, 0, 64);

    CHECK(kt_sync_layer_seconds(&ls[0], &used, &wire, &over, &err) == KT_OK);
    CHECK(used == KT_SYNC_PS && near(wire, 3) && near(over, 2.5));
    CHECK(kt_sync_layer_seconds(&ls[1], &used, &wire, &over, &err) == KT_OK);
    CHECK(used == KT_SYNC_SFB && near(wire, 6) && near(over, 2.5));
    CHECK(kt_sync_layer_seconds(&ls[2], &used, &wire, &over, &err) == KT_OK);
    CHECK(used == KT_SYNC_SFB && near(wire, 192));
    CHECK(kt_sync_layer_seconds(&ls[3], &used, &wire, &over, &err) == KT_OK);
    CHECK(used == KT_SYNC_PS && near(wire, 12));

    /* Algorithm 2 both ways, and Section 3.3's VGG19 fc layer (M = N =
       4096, K = 32, P1 = P2 = 8: SFB 3.7M floats against PS 58.7M) */
    CHECK(kt_sync_best_method(2, 2, 1, 4, 4) == KT_SYNC_PS);    /* 24 > 12 */
    CHECK(kt_sync_best_method(64, 64, 1, 4, 4) == KT_SYNC_SFB);
    CHECK(kt_sync_best_method(4096, 4096, 32, 8, 8) == KT_SYNC_SFB);
    CHECK(kt_sync_best_method(4096, 4096, 4096, 8, 8) == KT_SYNC_PS);
    CHECK(kt_sync_best_method(0, 0, 32, 8, 8) == KT_SYNC_PS);
    /* the tie goes to SFB ("<=" in line 7): 2K(P1-1)(M+N) = 2MN(P1+P2-2)/P2
       for M = N = 2, K = 1, P1 = 2, P2 = 1: 8 = 8 */
    CHECK(kt_sync_best_method(2, 2, 1, 2, 1) == KT_SYNC_SFB);

    /* Section 3.3's VGG19 fc layer (4096 x 4096 floats, K = 32, P1 = P2 =
       8) on 10 GbE (1.25e9 B/s): SFB moves 3,670,016 floats per node, PS
       58,720,256; half of each on the wire at once */
    {
        kt_sync_layer fc = table34_layer(0, KT_SYNC_ADAPTIVE, 4096, 4096, 32,
                                         4096.0 * 4096 * 4);
        fc.workers = fc.servers = 8;
        fc.bandwidth = 1.25e9;
        fc.phi = fc.delta = 0;
        CHECK(kt_sync_layer_seconds(&fc, &used, &wire, &over, &err) == KT_OK);
        CHECKF(used == KT_SYNC_SFB && near(wire, 0.5 * 3670016 * 4 / 1.25e9) &&
                   over == 0,
               "%.17g", wire);
        fc.method = KT_SYNC_PS;
        CHECK(kt_sync_layer_seconds(&fc, &used, &wire, &over, &err) == KT_OK);
        CHECKF(near(wire, 0.5 * 58720256.0 * 4 / 1.25e9), "%.17g", wire);
    }

    CHECK(near(run_total(ls, 4, KT_SYNC_WFBP, 0, &s), 233));
    CHECK(near(s.end[0], 15.5) && near(s.end[1], 24) && near(s.end[2], 218.5));
    CHECK(s.method[2] == KT_SYNC_SFB && s.method[3] == KT_SYNC_PS);
    kt_sync_schedule_free(&s);
    CHECK(near(run_total(ls, 4, KT_SYNC_TRADITIONAL, 0, &s), 236));
    kt_sync_schedule_free(&s);
    CHECK(near(run_total(ls, 4, KT_SYNC_BUCKET, INFINITY, &s), 230.5));
    CHECK(s.nbuckets == 3 && s.bucket[1] == 1 && s.bucket[2] == 1 &&
          s.bucket[3] == 2 && near(s.end[2], 216));
    kt_sync_schedule_free(&s);
}

/* --------------------------------------------------- 2. properties */

static uint64_t xorshift64(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int rnd(uint64_t *s, int lo, int hi) { /* uniform in [lo, hi] */
    return lo + (int)(xorshift64(s) % (uint64_t)(hi - lo + 1));
}

static double urand(uint64_t *r) {
    return (double)(xorshift64(r) >> 11) / 9007199254740992.0;
}

/* A random chain: 1 or 2 channels (all-reduce rings differing in workers),
   about one layer in six sending nothing. */
static int random_chain(uint64_t *r, kt_sync_layer *ls, int n, int overhead) {
    int i, channels = rnd(r, 1, 2);
    double bw = 1e9 * (1 + 9 * urand(r));
    double phi = overhead ? 1e-6 * (1 + 20 * urand(r)) : 0;
    double delta = overhead ? 1e-5 * (1 + 20 * urand(r)) : 0;
    for (i = 0; i < n; i++) {
        int64_t w = channels == 2 && rnd(r, 0, 1) ? 8 : 4;
        double bytes = rnd(r, 0, 5) == 0 ? 0 : (double)rnd(r, 1, 1 << 22);
        ls[i] = ring_layer(1e-4 * urand(r), bytes, w, bw, phi, delta);
    }
    return channels;
}

/* The completion time of a partition, by this file's own reading of the
   model: buckets in order, each from max(its last layer's gradient, the
   previous bucket's end) for the sum of its wire times plus one overhead.
   groups[i] is the bucket of sender i (senders: layers with bytes). */
static double eval_partition(const kt_sync_layer *ls, int n,
                             const int *groups) {
    double clock = 0, net = 0, ready[16], wire[16], over[16];
    int sender[16], ns = 0, i, j;
    for (i = 0; i < n; i++) {
        clock += ls[i].backward_seconds;
        if (ls[i].bytes <= 0) continue;
        ready[ns] = clock;
        wire[ns] = 2.0 * (double)(ls[i].workers - 1) / (double)ls[i].workers *
                   ls[i].bytes / ls[i].bandwidth;
        over[ns] = (double)ls[i].workers * ls[i].phi + ls[i].delta;
        sender[ns++] = i;
    }
    (void)sender;
    for (i = 0; i < ns;) {
        double dur = over[i];
        for (j = i; j < ns && groups[j] == groups[i]; j++) dur += wire[j];
        net = (ready[j - 1] > net ? ready[j - 1] : net) + dur;
        i = j;
    }
    return net > clock ? net : clock;
}

/* The minimum over every contiguous partition of the senders whose
   buckets keep to one ring; each partition also goes through
   kt_sync_schedule_buckets, which must agree with eval_partition. */
static double brute_force(const kt_sync_layer *ls, int n) {
    int sender[16], ns = 0, i, mask, groups[16], bucket[16];
    double best = -1;
    memset(groups, 0, sizeof groups);
    for (i = 0; i < n; i++)
        if (ls[i].bytes > 0) sender[ns++] = i;
    if (ns == 0) return eval_partition(ls, n, groups);
    for (mask = 0; mask < 1 << (ns - 1); mask++) {
        int ok = 1, g = 0;
        double t;
        kt_sync_schedule s;
        kt_error err;
        for (i = 0; i < ns; i++) {
            if (i > 0 && (mask >> (i - 1) & 1)) g++; /* a cut before i */
            else if (i > 0 && ls[sender[i]].workers != ls[sender[i - 1]].workers)
                ok = 0;
            groups[i] = g;
        }
        if (!ok) continue;
        for (i = 0; i < n; i++) bucket[i] = 99; /* ignored: sends nothing */
        for (i = 0; i < ns; i++) bucket[sender[i]] = groups[i];
        t = eval_partition(ls, n, groups);
        if (kt_sync_schedule_buckets(ls, n, bucket, &s, &err) == KT_OK) {
            CHECKF(near(s.total_seconds, t), "partition %d: %.17g vs %.17g",
                   mask, s.total_seconds, t);
            kt_sync_schedule_free(&s);
        } else {
            CHECKF(0, "partition %d: %s", mask, err.message);
        }
        if (best < 0 || t < best) best = t;
    }
    return best;
}

/* A sync never starts before its gradient exists; the network carries one
   bucket at a time in order; the total is the later of the two ends. */
static void check_well_formed(const kt_sync_layer *ls, int n,
                              const kt_sync_schedule *s, const char *what) {
    int i, prev = -1, ok = 1;
    double last_end = 0, net = 0;
    for (i = 0; i < n; i++) {
        if (ls[i].bytes <= 0) {
            ok &= s->bucket[i] == -1;
            continue;
        }
        ok &= s->start[i] >= s->ready[i] && s->end[i] >= s->start[i];
        if (s->bucket[i] != prev) {
            ok &= s->bucket[i] == prev + 1 && s->start[i] >= last_end;
            net += s->end[i] - s->start[i];
            prev = s->bucket[i];
        }
        last_end = s->end[i];
    }
    ok &= s->nbuckets == prev + 1 && near(net + 1, s->network_seconds + 1);
    ok &= near(s->total_seconds,
               last_end > s->backward_seconds ? last_end : s->backward_seconds);
    CHECKF(ok, "%s: schedule not well formed", what);
}

static void test_properties(void) {
    uint64_t r = 0x5eed5eedULL;
    int round, rounds = 400;
    for (round = 0; round < rounds; round++) {
        kt_sync_layer ls[12];
        kt_sync_schedule trad, wfbp, tiny, inf, opt, b;
        int n = rnd(&r, 1, 10), i, overhead = round % 3 != 0, nsend = 0;
        int channels = random_chain(&r, ls, n, overhead);
        double over = 0, cap = (double)rnd(&r, 1, 1 << 23), brute;
        for (i = 0; i < n; i++)
            if (ls[i].bytes > 0) {
                nsend++;
                over = (double)ls[i].workers * ls[i].phi + ls[i].delta;
            }
        run_total(ls, n, KT_SYNC_TRADITIONAL, 0, &trad);
        run_total(ls, n, KT_SYNC_WFBP, 0, &wfbp);
        run_total(ls, n, KT_SYNC_BUCKET, 0.5, &tiny);
        run_total(ls, n, KT_SYNC_BUCKET, INFINITY, &inf);
        run_total(ls, n, KT_SYNC_BUCKET_OPTIMAL, 0, &opt);
        run_total(ls, n, KT_SYNC_BUCKET, cap, &b);
        check_well_formed(ls, n, &trad, "traditional");
        check_well_formed(ls, n, &wfbp, "wfbp");
        check_well_formed(ls, n, &inf, "unbounded bucket");
        check_well_formed(ls, n, &opt, "dp");
        check_well_formed(ls, n, &b, "bucket");

        CHECKF(wfbp.total_seconds <= trad.total_seconds * (1 + 1e-12),
               "round %d: WFBP %.17g later than traditional %.17g", round,
               wfbp.total_seconds, trad.total_seconds);
        /* caps below every gradient: a bucket per layer, WFBP exactly */
        CHECK(tiny.total_seconds == wfbp.total_seconds &&
              tiny.nbuckets == wfbp.nbuckets);
        for (i = 0; i < n; i++)
            CHECK(tiny.start[i] == wfbp.start[i] && tiny.end[i] == wfbp.end[i]);
        /* the DP is the best contiguous partition: brute force, and no cap
           or per-layer sync beats it */
        brute = brute_force(ls, n);
        CHECKF(near(opt.total_seconds, brute), "round %d (n %d): DP %.17g, "
               "brute force %.17g", round, n, opt.total_seconds, brute);
        CHECK(opt.total_seconds <= b.total_seconds * (1 + 1e-12));
        CHECK(opt.total_seconds <= wfbp.total_seconds * (1 + 1e-12));
        if (channels == 1 && nsend > 0) {
            /* one unbounded bucket: all wire time after the last gradient
               (the backward's end when the last layer sends), with one
               overhead instead of nsend */
            double saved = trad.total_seconds - (nsend - 1) * over;
            CHECK(inf.nbuckets == 1);
            if (ls[n - 1].bytes > 0)
                CHECKF(near(inf.total_seconds, saved), "round %d: %.17g vs "
                       "%.17g", round, inf.total_seconds, saved);
            else
                CHECK(inf.total_seconds <= saved * (1 + 1e-12));
        }
        if (!overhead) {
            /* no per-sync cost: merging only delays gradients */
            CHECK(b.total_seconds >= wfbp.total_seconds * (1 - 1e-12));
            CHECK(inf.total_seconds >= wfbp.total_seconds * (1 - 1e-12));
            CHECK(near(opt.total_seconds, wfbp.total_seconds));
            if (channels == 1 && ls[n - 1].bytes > 0)
                CHECK(near(inf.total_seconds, trad.total_seconds));
        }
        kt_sync_schedule_free(&trad);
        kt_sync_schedule_free(&wfbp);
        kt_sync_schedule_free(&tiny);
        kt_sync_schedule_free(&inf);
        kt_sync_schedule_free(&opt);
        kt_sync_schedule_free(&b);
    }
}

/* ------------------------------------------------------ 3. bad input */

static void expect_fail(const kt_sync_layer *ls, int n, kt_sync_mode mode,
                        double cap, const char *needle) {
    kt_sync_schedule s;
    kt_error err;
    kt_status st = kt_sync_schedule_run(ls, n, mode, cap, &s, &err);
    CHECKF(st == KT_ERR_INVALID && err.status == st &&
               strstr(err.message, needle) != NULL,
           "want an error with '%s', got status %d: %s", needle, (int)st,
           st == KT_OK ? "(ok)" : err.message);
    CHECK(s.ready == NULL && s.start == NULL && s.nlayers == 0);
    if (st == KT_OK) kt_sync_schedule_free(&s);
}

static void test_bad_input(void) {
    kt_sync_layer ok[2], ls[2];
    kt_sync_schedule s;
    kt_error err;
    double caps[2] = {1e6, NAN};
    int bucket[2];
    ok[0] = ring_layer(1e-3, 1e6, 4, 1e9, 1e-6, 1e-5);
    ok[1] = ring_layer(1e-3, 2e6, 4, 1e9, 1e-6, 1e-5);

#define BAD(field, value, needle)                                            \
    do {                                                                     \
        memcpy(ls, ok, sizeof ls);                                           \
        ls[1].field = value;                                                 \
        expect_fail(ls, 2, KT_SYNC_WFBP, 0, needle);                         \
    } while (0)
    BAD(bytes, -1, "sync layer 1: gradient size -1");
    BAD(bytes, NAN, "sync layer 1: gradient size");
    BAD(bytes, INFINITY, "sync layer 1: gradient size");
    BAD(backward_seconds, -1e-3, "sync layer 1: backward time");
    BAD(backward_seconds, NAN, "backward time");
    BAD(workers, 0, "sync layer 1: 0 workers");
    BAD(bandwidth, 0, "sync layer 1: bandwidth 0");
    BAD(bandwidth, NAN, "bandwidth");
    BAD(bandwidth, -5, "bandwidth");
    BAD(phi, -1, "phi");
    BAD(delta, NAN, "delta");
    BAD(method, (kt_sync_method)7, "unknown sync method 7");
    memcpy(ls, ok, sizeof ls);
    ls[0].method = KT_SYNC_PS;
    ls[0].servers = 5;
    expect_fail(ls, 2, KT_SYNC_WFBP, 0, "sync layer 0: 5 servers");
    ls[0].servers = 0;
    expect_fail(ls, 2, KT_SYNC_WFBP, 0, "0 servers");
    ls[0].method = KT_SYNC_SFB;
    ls[0].servers = 4;
    expect_fail(ls, 2, KT_SYNC_WFBP, 0, "SFB needs an m x n layer");
    ls[0].method = KT_SYNC_ADAPTIVE;
    ls[0].m = 4; /* n still 0: half a shape */
    expect_fail(ls, 2, KT_SYNC_WFBP, 0, "SFB needs an m x n layer");
    /* a layer that sends nothing needs no channel */
    memcpy(ls, ok, sizeof ls);
    ls[1].bytes = 0;
    ls[1].workers = 0;
    ls[1].bandwidth = 0;
    CHECK(kt_sync_schedule_run(ls, 2, KT_SYNC_WFBP, 0, &s, &err) == KT_OK);
    CHECK(s.nbuckets == 1 && s.bucket[1] == -1);
    kt_sync_schedule_free(&s);

    expect_fail(ok, 2, KT_SYNC_BUCKET, 0, "bucket size 0");
    expect_fail(ok, 2, KT_SYNC_BUCKET, NAN, "bucket size");
    expect_fail(ok, 2, KT_SYNC_BUCKET, -4, "bucket size -4");
    expect_fail(ok, 2, (kt_sync_mode)9, 0, "unknown mode 9");
    expect_fail(ok, -1, KT_SYNC_WFBP, 0, "-1 layers");
    expect_fail(NULL, 2, KT_SYNC_WFBP, 0, "but no array");
    /* no layers: an empty schedule */
    CHECK(kt_sync_schedule_run(NULL, 0, KT_SYNC_BUCKET_OPTIMAL, 0, &s, &err) ==
              KT_OK &&
          s.total_seconds == 0 && s.nbuckets == 0);
    kt_sync_schedule_free(&s);

    CHECK(kt_sync_best_bucket(ok, 2, caps, 2, NULL, &s, &err) ==
              KT_ERR_INVALID &&
          strstr(err.message, "bucket size 2 of 2") != NULL);
    CHECK(s.ready == NULL);
    CHECK(kt_sync_best_bucket(ok, 2, caps, 0, NULL, &s, &err) ==
          KT_ERR_INVALID);

    bucket[0] = 1;
    bucket[1] = 1;
    CHECK(kt_sync_schedule_buckets(ok, 2, bucket, &s, &err) ==
              KT_ERR_INVALID &&
          strstr(err.message, "contiguous") != NULL);
    bucket[0] = 0;
    bucket[1] = 2;
    CHECK(kt_sync_schedule_buckets(ok, 2, bucket, &s, &err) == KT_ERR_INVALID);
    /* the first sender in bucket -1: refused, not read as "the same
       bucket as the sender before it" (there is none) */
    bucket[0] = -1;
    bucket[1] = -1;
    CHECK(kt_sync_schedule_buckets(ok, 2, bucket, &s, &err) ==
              KT_ERR_INVALID &&
          strstr(err.message, "contiguous") != NULL);
    /* the message says what is wrong: the first sender's bucket is not
       0 (it said "bucket 1 after bucket -1", a bucket that is not there) */
    bucket[0] = 1;
    bucket[1] = 2;
    CHECKF(kt_sync_schedule_buckets(ok, 2, bucket, &s, &err) ==
               KT_ERR_INVALID &&
               strstr(err.message, "first layer that sends is in bucket 1, "
                                   "not 0") != NULL &&
               strstr(err.message, "-1") == NULL,
           "%s", err.message);
    bucket[0] = 0;
    memcpy(ls, ok, sizeof ls);
    ls[1].workers = 8;
    bucket[1] = 0;
    CHECK(kt_sync_schedule_buckets(ls, 2, bucket, &s, &err) ==
              KT_ERR_INVALID &&
          strstr(err.message, "mixes") != NULL);
    CHECK(kt_sync_schedule_buckets(ls, 2, NULL, &s, &err) == KT_ERR_INVALID);
    {
        kt_sync_method used;
        double wire, over;
        memcpy(ls, ok, sizeof ls);
        ls[0].bandwidth = INFINITY;
        CHECK(kt_sync_layer_seconds(&ls[0], &used, &wire, &over, &err) ==
              KT_ERR_INVALID);
        CHECK(kt_sync_layer_seconds(NULL, &used, &wire, &over, &err) ==
              KT_ERR_INVALID);
        CHECK(kt_sync_layer_seconds(&ok[0], &used, NULL, &over, &err) ==
              KT_ERR_INVALID);
        /* finite fields whose time is not: refused, not KT_OK with inf */
        ls[0] = ring_layer(1, 1e300, 4, 1e-10, 0, 0);
        used = KT_SYNC_SFB;
        wire = over = -7;
        CHECK(kt_sync_layer_seconds(&ls[0], &used, &wire, &over, &err) ==
                  KT_ERR_INVALID &&
              strstr(err.message, "sync layer 0: its sync time overflows") !=
                  NULL);
        /* outputs untouched on an error */
        CHECK(used == KT_SYNC_SFB && wire == -7 && over == -7);
    }
    /* overflow: of one layer's sync time, of the backward pass's sum, of
       the network's sum -- every mode, naming the layer where it can */
    {
        int mode;
        for (mode = KT_SYNC_TRADITIONAL; mode <= KT_SYNC_BUCKET_OPTIMAL;
             mode++) {
            memcpy(ls, ok, sizeof ls);
            ls[1].bytes = 1e300;
            ls[1].bandwidth = 1e-10;
            expect_fail(ls, 2, (kt_sync_mode)mode, 1e6,
                        "sync layer 1: its sync time overflows");
            memcpy(ls, ok, sizeof ls);
            ls[0].backward_seconds = ls[1].backward_seconds = 1e308;
            expect_fail(ls, 2, (kt_sync_mode)mode, 1e6,
                        "sync layer 1: the backward pass's time overflows");
            memcpy(ls, ok, sizeof ls); /* 1e308 s each: the sum is inf */
            ls[0].bytes = ls[1].bytes = 1e308;
            ls[0].bandwidth = ls[1].bandwidth = 1;
            ls[0].workers = ls[1].workers = 2;
            expect_fail(ls, 2, (kt_sync_mode)mode, 1e6,
                        "sync: the schedule's times overflow");
        }
        bucket[0] = 0;
        bucket[1] = 1;
        CHECK(kt_sync_schedule_buckets(ls, 2, bucket, &s, &err) ==
                  KT_ERR_INVALID &&
              strstr(err.message, "overflow") != NULL && s.ready == NULL);
    }
#undef BAD
}

/* ------------------------------------------------------------ 4. plans */

static void plan_of(kt_graph *g, const char *factors, kt_strategy st,
                    kt_plan *p) {
    kt_factors f;
    kt_search_options o;
    kt_error err;
    memset(&o, 0, sizeof o);
    o.strategy = st;
    CHECK(kt_factors_parse(factors, &f, &err) == KT_OK);
    CHECKF(kt_plan_search(g, &f, &o, p, &err) == KT_OK, "%s", err.message);
}

/* The simulator's compute tasks of the backward ops (autodiff's, not the
   updates), the slowest device per op: an independent route to the sum
   of the layers' backward times. */
static double sim_backward_seconds(const kt_graph *g, const kt_plan *p,
                                   const kt_topology *t, int as_forward) {
    kt_program prog;
    kt_sim sim;
    kt_error err;
    double total = 0, *worst;
    int i, nop = kt_graph_op_count(g);
    worst = (double *)calloc((size_t)nop, sizeof(double));
    CHECK(kt_lower(g, p, &prog, &err) == KT_OK);
    CHECK(kt_sim_build(g, p, &prog, t, &sim, &err) == KT_OK);
    for (i = 0; i < sim.ntask; i++) {
        const kt_sim_task *k = &sim.task[i];
        if (k->kind == KT_TASK_COMPUTE && k->seconds > worst[k->op])
            worst[k->op] = k->seconds;
    }
    for (i = 0; i < nop; i++) {
        const kt_op *op = kt_graph_op(g, i);
        if (op->group >= 0 && !op->in_place)
            total += worst[as_forward ? op->group : i];
    }
    free(worst);
    kt_sim_free(&sim);
    kt_program_free(&prog);
    return total;
}

static void test_plans(void) {
    kt_graph *g = NULL;
    kt_plan p;
    kt_topology t;
    kt_error err;
    kt_sync_layer *ls = NULL;
    kt_sync_plan_options o;
    kt_sync_schedule s, wf;
    int n = 0, i, w1, w2, w3;
    double sum = 0;
    memset(&o, 0, sizeof o);
    o.delta = 1e-5;
    CHECK(kt_zoo_build("mlp:layers=3,hidden=64,batch=32", &g, &err) == KT_OK);
    if (!g) return;
    w1 = kt_graph_find_tensor(g, "W1");
    w2 = kt_graph_find_tensor(g, "W2");
    w3 = kt_graph_find_tensor(g, "W3");

    /* data parallelism on 4 devices: every weight all-reduced whole */
    plan_of(g, "4", KT_STRATEGY_DATA, &p);
    CHECK(kt_topology_parse("flat:4:100G", &t, &err) == KT_OK);
    CHECKF(kt_sync_layers_from_plan(g, &p, &t, &o, &ls, &n, &err) == KT_OK,
           "%s", err.message);
    CHECK_EQ_I64(n, 3);
    if (n == 3) {
        CHECK(ls[0].tensor == w3 && ls[1].tensor == w2 && ls[2].tensor == w1);
        for (i = 0; i < 3; i++) {
            const kt_tensor *x = kt_graph_tensor(g, ls[i].tensor);
            CHECK(ls[i].bytes == (double)(x->shape[0] * x->shape[1] * 4));
            CHECK(ls[i].workers == 4 && ls[i].bandwidth == 100e9 &&
                  ls[i].phi == 1e-6 && ls[i].delta == 1e-5 &&
                  ls[i].method == KT_SYNC_ALLREDUCE);
            CHECK(ls[i].backward_seconds > 0);
            sum += ls[i].backward_seconds;
        }
        CHECKF(near(sum, sim_backward_seconds(g, &p, &t, 0)),
               "%.17g vs %.17g", sum, sim_backward_seconds(g, &p, &t, 0));
        CHECK(kt_sync_schedule_run(ls, n, KT_SYNC_TRADITIONAL, 0, &s, &err) ==
              KT_OK);
        CHECK(kt_sync_schedule_run(ls, n, KT_SYNC_WFBP, 0, &wf, &err) == KT_OK);
        CHECK(wf.total_seconds <= s.total_seconds &&
              wf.total_seconds > wf.backward_seconds);
        kt_sync_schedule_free(&s);
        kt_sync_schedule_free(&wf);
    }
    KT_FREE(ls);
    /* the same with each backward op timed as its forward op */
    o.backward_as_forward = 1;
    CHECK(kt_sync_layers_from_plan(g, &p, &t, &o, &ls, &n, &err) == KT_OK);
    for (i = 0, sum = 0; i < n; i++) sum += ls[i].backward_seconds;
    CHECKF(n == 3 && near(sum, sim_backward_seconds(g, &p, &t, 1)),
           "%.17g vs %.17g", sum, sim_backward_seconds(g, &p, &t, 1));
    o.backward_as_forward = 0;
    KT_FREE(ls);

    /* adaptive: every MLP weight is fully connected, M x N its shape, K
       the 8 samples of one device */
    o.method = KT_SYNC_ADAPTIVE;
    CHECK(kt_sync_layers_from_plan(g, &p, &t, &o, &ls, &n, &err) == KT_OK);
    for (i = 0; i < n; i++) {
        const kt_tensor *x = kt_graph_tensor(g, ls[i].tensor);
        CHECKF(ls[i].m == x->shape[0] && ls[i].n == x->shape[1] &&
               ls[i].k == 8 && ls[i].servers == 4, "%s: %lld x %lld, k %lld",
               x->name, (long long)ls[i].m, (long long)ls[i].n,
               (long long)ls[i].k);
    }
    KT_FREE(ls);
    o.method = KT_SYNC_SFB;
    CHECK(kt_sync_layers_from_plan(g, &p, &t, &o, &ls, &n, &err) ==
              KT_ERR_INVALID &&
          ls == NULL && n == 0);
    o.method = KT_SYNC_ALLREDUCE;
    o.delta = -1;
    CHECK(kt_sync_layers_from_plan(g, &p, &t, &o, &ls, &n, &err) ==
          KT_ERR_INVALID);
    o.delta = 1e-5;
    CHECK(kt_topology_parse("flat:8:100G", &t, &err) == KT_OK);
    CHECK(kt_sync_layers_from_plan(g, &p, &t, &o, &ls, &n, &err) ==
              KT_ERR_INVALID &&
          strstr(err.message, "8 devices") != NULL);
    kt_plan_free(&p);

    /* hybrid on 2 nodes of 2: W2 replicated across nodes only (cut 1), W1
       split at both cuts, W3 replicated everywhere */
    plan_of(g, "2,2", KT_STRATEGY_DATA, &p);
    CHECK(kt_tiling_parse("R.S1", &p.tiling[w2], &err) == KT_OK);
    CHECK(kt_tiling_parse("S0.S1", &p.tiling[w1], &err) == KT_OK);
    CHECK(kt_topology_parse("nodes:2x2:100G:10G", &t, &err) == KT_OK);
    CHECK(kt_sync_layers_from_plan(g, &p, &t, &o, &ls, &n, &err) == KT_OK);
    /* W3, W2, and the compute after W2's gradient (W1's, unsynchronised) */
    CHECK_EQ_I64(n, 3);
    if (n == 3) {
        const kt_tensor *x2 = kt_graph_tensor(g, w2);
        CHECK(ls[0].tensor == w3 && ls[0].workers == 4 &&
              ls[0].bandwidth == 10e9 && ls[0].phi == 5e-6);
        CHECK(ls[1].tensor == w2 && ls[1].workers == 2 &&
              ls[1].bandwidth == 10e9 &&
              ls[1].bytes == (double)(x2->shape[0] * x2->shape[1] * 4 / 2));
        CHECK(ls[2].tensor == -1 && ls[2].bytes == 0 &&
              ls[2].backward_seconds > 0);
    }
    KT_FREE(ls);
    /* W2 replicated inside the nodes only: the fast level */
    CHECK(kt_tiling_parse("S1.R", &p.tiling[w2], &err) == KT_OK);
    CHECK(kt_sync_layers_from_plan(g, &p, &t, &o, &ls, &n, &err) == KT_OK);
    CHECK(n == 3 && ls[1].tensor == w2 && ls[1].workers == 2 &&
          ls[1].bandwidth == 100e9 && ls[1].phi == 1e-6);
    KT_FREE(ls);
    kt_plan_free(&p);
    kt_graph_destroy(g);
}

/* ------------- uneven servers, channels, ties, adaptive K (each once let
   a wrong cost or choice through: a mutation-testing pass) */

/* PS with fewer servers than workers (Table 3.4, P1 = 4, P2 = 2): the node
   that is worker and shard moves 2MN(P1+P2-2)/P2 = 4 MN, i.e. 4 bytes per
   gradient byte: 16 B at 8 B/s -> 0.5 * 4 * 16 / 8 = 4 s on the wire, plus
   (P1-1) phi + delta = 2.5.  A second PS layer with 4 servers (wire 3)
   is another channel: cap inf gives A [10,15.5), B ready 11, [15.5,22):
   22 (merging them would give 20.5); a given bucket {0,0} is refused. */
static void test_uneven_servers(void) {
    kt_sync_layer ls[2];
    kt_sync_schedule s;
    kt_sync_method used;
    kt_error err;
    double wire, over;
    int bucket[2] = {0, 0};
    ls[0] = table34_layer(10, KT_SYNC_PS, 2, 2, 1, 16);
    ls[1] = table34_layer(1, KT_SYNC_PS, 2, 2, 1, 16);
    ls[1].servers = 2;
    CHECK(kt_sync_layer_seconds(&ls[1], &used, &wire, &over, &err) == KT_OK);
    CHECKF(used == KT_SYNC_PS && near(wire, 4) && near(over, 2.5), "%.17g",
           wire);
    CHECK(near(run_total(ls, 2, KT_SYNC_BUCKET, INFINITY, &s), 22));
    CHECK(s.nbuckets == 2 && s.bucket[0] == 0 && s.bucket[1] == 1);
    kt_sync_schedule_free(&s);
    CHECK(kt_sync_schedule_buckets(ls, 2, bucket, &s, &err) ==
              KT_ERR_INVALID && strstr(err.message, "mixes") != NULL);
}

/* Two ring layers differing only in phi (1 s and 3 s; w = 2, 1 B/s,
   delta 2): another channel each.  A: 4 B, b = 1 -> [1, 9); B: 1 B, b = 2,
   overhead 2*3 + 2 = 8 -> [9, 18): 18 with cap inf and with the DP
   (one merged bucket would be [3, 12): 12). */
static void test_channel_phi(void) {
    kt_sync_layer ls[2];
    kt_sync_schedule s;
    kt_error err;
    int bucket[2] = {0, 0};
    ls[0] = ring_layer(1, 4, 2, 1, 1, 2);
    ls[1] = ring_layer(2, 1, 2, 1, 3, 2);
    CHECK(near(run_total(ls, 2, KT_SYNC_BUCKET, INFINITY, &s), 18));
    CHECK(s.nbuckets == 2 && near(s.start[1], 9));
    kt_sync_schedule_free(&s);
    CHECK(near(run_total(ls, 2, KT_SYNC_BUCKET_OPTIMAL, 0, &s), 18));
    kt_sync_schedule_free(&s);
    CHECK(kt_sync_schedule_buckets(ls, 2, bucket, &s, &err) ==
              KT_ERR_INVALID && strstr(err.message, "mixes") != NULL);
}

/* kt_sync_best_bucket: "the first of equals".  test_known_ring's chain
   with caps 100 and 200: both one bucket, 17 s -> 100. */
static void test_best_bucket_tie(void) {
    kt_sync_layer ls[3];
    kt_sync_schedule s;
    kt_error err;
    double caps[2] = {100, 200}, best = 0;
    ls[0] = ring_layer(1, 4, 2, 1, 1, 2);
    ls[1] = ring_layer(2, 1, 2, 1, 1, 2);
    ls[2] = ring_layer(3, 2, 2, 1, 1, 2);
    CHECK(kt_sync_best_bucket(ls, 3, caps, 2, &best, &s, &err) == KT_OK);
    CHECKF(best == 100 && near(s.total_seconds, 17), "best %g", best);
    kt_sync_schedule_free(&s);
}

/* DP ties (the rule sched.h documents: among partitions of equal
   completion, each prefix's smallest last bucket): 3 ring layers of 1 B, w = 2, 1 B/s, no overhead, all ready at
   0: every partition ends at 3; the DP keeps one layer per bucket. */
static void test_optimal_tie(void) {
    kt_sync_layer ls[3];
    kt_sync_schedule s;
    int i;
    for (i = 0; i < 3; i++) ls[i] = ring_layer(0, 1, 2, 1, 0, 0);
    CHECK(near(run_total(ls, 3, KT_SYNC_BUCKET_OPTIMAL, 0, &s), 3));
    CHECK_EQ_I64(s.nbuckets, 3);
    kt_sync_schedule_free(&s);
}

/* Adaptive K is the busiest worker's samples, ceil(batch / w): batch 30
   over 4 devices -> 8 (not 7). */
static void test_adaptive_k_uneven(void) {
    kt_graph *g = NULL;
    kt_plan p;
    kt_topology t;
    kt_error err;
    kt_sync_layer *ls = NULL;
    kt_sync_plan_options o;
    int n = 0, i;
    memset(&o, 0, sizeof o);
    o.method = KT_SYNC_ADAPTIVE;
    CHECK(kt_zoo_build("mlp:layers=3,hidden=64,batch=30", &g, &err) == KT_OK);
    if (!g) return;
    plan_of(g, "4", KT_STRATEGY_DATA, &p);
    CHECK(kt_topology_parse("flat:4:100G", &t, &err) == KT_OK);
    CHECKF(kt_sync_layers_from_plan(g, &p, &t, &o, &ls, &n, &err) == KT_OK,
           "%s", err.message);
    CHECK_EQ_I64(n, 3);
    for (i = 0; i < n; i++) CHECK_EQ_I64(ls[i].k, 8);
    KT_FREE(ls);
    kt_plan_free(&p);
    kt_graph_destroy(g);
}

/* A collective outside the enum has no cost: NaN, as for the other
   arguments outside the model (it was priced as a broadcast). */
static void test_unknown_collective(void) {
    double t = kt_sync_collective((kt_collective)99, 1e6, 4, 1e9, 0, 0);
    CHECK(t != t);
    t = kt_sync_collective((kt_collective)-1, 1e6, 4, 1e9, 0, 0);
    CHECK(t != t);
    CHECK(kt_sync_collective(KT_REDUCE, 1e6, 4, 1e9, 0, 0) == 1e-3);
}

int main(void) {
    test_unknown_collective();
    test_known_ring();
    test_known_methods();
    test_properties();
    test_bad_input();
    test_plans();
    test_uneven_servers();
    test_channel_phi();
    test_best_bucket_tie();
    test_optimal_tie();
    test_adaptive_k_uneven();
    return KT_TEST_SUMMARY();
}
