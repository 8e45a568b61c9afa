/* test_sched_nomem.c -- sched.h's simulator when memory runs out.

   Every allocation of a run fails in turn (KT_MALLOC / KT_REALLOC below
   return NULL once, at the fail_at-th call after arming): the full
   simulation (kt_sim_run, its workspace, successor lists, wait states,
   queue buckets and the critical path), a delta simulation with its
   checkpoints (kt_sim_delta, kt_sim_timeline), and the incremental task
   graph of MCMC (kt_plan_sim_propose, on a fresh kt_plan_sim and on one
   that has just accepted a proposal unlooked at).  Each failed call must
   say
   KT_ERR_NOMEM with a message, leave kt_sim.start / end NULL after a
   failed kt_sim_run (README: "NULL ... after a failed run"), and leave its
   object usable: the same call again, with memory, gives bit for bit the
   result of a run that never failed.  Leaks show under `make sanitize`
   and `make valgrind`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the library allocates through an allocator the test fails on request */
#include "kt_test_alloc.h"
/* small checkpoint blocks, so that a delta restores from one */
#define KT_SIM_CHECKPOINT 8
#define KT_IMPLEMENTATION
#include "../sched.h"
#include "kt_test.h"

/* Uniform in [lo, hi] (xorshift64). */
static int rnd(uint64_t *s, int lo, int hi) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return lo + (int)(*s % (uint64_t)(hi - lo + 1));
}

static void arm(long k) {
    alloc_count = 0;
    fail_at = k;
}

/* Whether the armed failure happened (and disarms). */
static int disarm(void) {
    int hit = fail_at > 0 && alloc_count >= fail_at;
    fail_at = 0;
    return hit;
}

static int same_doubles(const double *a, const double *b, int n) {
    return a && b && memcmp(a, b, sizeof(double) * (size_t)n) == 0;
}

/* Everything a run publishes, against a run that never failed. */
static int same_run(const kt_sim *s, const kt_sim *ref) {
    return s->ntask == ref->ntask && s->step_seconds == ref->step_seconds &&
           s->tick == ref->tick &&
           same_doubles(s->start, ref->start, ref->ntask) &&
           same_doubles(s->end, ref->end, ref->ntask) &&
           same_doubles(s->busy, ref->busy, ref->ndev) &&
           s->ncritical == ref->ncritical &&
           memcmp(s->critical, ref->critical,
                  sizeof(int) * (size_t)ref->ncritical) == 0;
}

typedef struct fixture {
    kt_graph *g;
    kt_topology t;
    kt_plan p;
    kt_program prog;
} fixture;

static int fixture_init(fixture *fx, const char *model, int ndev,
                        const char *topo) {
    kt_error err;
    kt_factors f;
    kt_search_options so;
    memset(fx, 0, sizeof *fx);
    memset(&so, 0, sizeof so);
    so.strategy = KT_STRATEGY_DP;
    CHECK(kt_zoo_build(model, &fx->g, &err) == KT_OK);
    CHECK(kt_topology_parse(topo, &fx->t, &err) == KT_OK);
    CHECK(kt_factors_default(ndev, &f, &err) == KT_OK);
    CHECK(kt_plan_search(fx->g, &f, &so, &fx->p, &err) == KT_OK);
    CHECK(kt_lower(fx->g, &fx->p, &fx->prog, &err) == KT_OK);
    return kt_test_failed == 0;
}

static void fixture_free(fixture *fx) {
    kt_program_free(&fx->prog);
    kt_plan_free(&fx->p);
    kt_graph_destroy(fx->g);
}

/* Full runs, then a delta and its timeline, each allocation failing in
   turn on a fresh kt_sim; returns how many failures were injected. */
static long full_and_delta_case(const fixture *fx, int op) {
    kt_error err;
    kt_sim ref, s;
    int tasks[64], n = 0, k;
    double secs[64];
    long at, injected = 0;
    CHECK(kt_sim_build(fx->g, &fx->p, &fx->prog, &fx->t, &ref, &err) ==
          KT_OK);
    for (k = 0; k < ref.ntask && n < 64; k++)
        if (ref.task[k].kind == KT_TASK_COMPUTE && ref.task[k].op == op) {
            tasks[n] = k;
            secs[n++] = ref.task[k].seconds * 3.0;
        }
    CHECK(n > 0);
    /* the reference: run, delta, timeline, never failing */
    CHECK(kt_sim_run(&ref, &err) == KT_OK);
    CHECK(kt_sim_delta(&ref, n, tasks, secs, &err) == KT_OK);
    CHECK(kt_sim_timeline(&ref, &err) == KT_OK);
    for (at = 1; at < 100000; at++) {
        kt_status r;
        int phase = 0, hit;
        CHECK(kt_sim_build(fx->g, &fx->p, &fx->prog, &fx->t, &s, &err) ==
              KT_OK);
        arm(at);
        r = kt_sim_run(&s, &err);
        if (r == KT_OK) {
            phase = 1;
            r = kt_sim_delta(&s, n, tasks, secs, &err);
        }
        if (r == KT_OK) {
            phase = 2;
            r = kt_sim_timeline(&s, &err);
        }
        hit = disarm();
        if (!hit) { /* every allocation of the sequence has failed once */
            CHECK(r == KT_OK && same_run(&s, &ref));
            kt_sim_free(&s);
            break;
        }
        injected++;
        /* a failure may be absorbed: without memory for checkpoints a
           delta runs in full (exactly), the next delta tries again */
        CHECKF(r == KT_ERR_NOMEM ? err.message[0] != 0
                                 : r == KT_OK && same_run(&s, &ref),
               "allocation %ld (phase %d): status %d, %s", at, phase, (int)r,
               err.message);
        if (phase == 0)
            CHECKF(s.start == NULL && s.end == NULL,
                   "allocation %ld: start/end after a failed kt_sim_run", at);
        /* the same kt_sim, with memory: the whole sequence again */
        r = kt_sim_run(&s, &err);
        if (r == KT_OK) r = kt_sim_delta(&s, n, tasks, secs, &err);
        if (r == KT_OK) r = kt_sim_timeline(&s, &err);
        CHECKF(r == KT_OK && same_run(&s, &ref),
               "allocation %ld (phase %d): the run after the failure: %s", at,
               phase, err.message);
        kt_sim_free(&s);
        if (kt_test_failed) break;
    }
    kt_sim_free(&ref);
    return injected;
}

/* The plan one random move from p: a random op's random configuration
   and a random tensor's tiling; with its task graph and timeline from
   scratch in *ref. */
static void plan_moved(const fixture *fx, const kt_plan *p, uint64_t *seed,
                       kt_plan *next, kt_sim *ref) {
    kt_error err;
    kt_program prog;
    const kt_graph *g = fx->g;
    CHECK(kt__plan_copy(next, p, g, &err) == KT_OK);
    kt__propose(g, next, rnd(seed, 0, g->nop - 1), seed);
    kt__propose_tensor(g, next, rnd(seed, 0, g->ntensor - 1), seed);
    CHECK(kt_lower(g, next, &prog, &err) == KT_OK);
    CHECK(kt_sim_build(g, next, &prog, &fx->t, ref, &err) == KT_OK);
    CHECK(kt_sim_run(ref, &err) == KT_OK);
    kt_program_free(&prog);
}

static int proposal_is(kt_plan_sim *ps, const kt_sim *ref) {
    kt_plan_sim_timeline(ps); /* start and end, in compact numbering */
    return ps->proposed && ps->proposed->step_seconds == ref->step_seconds &&
           same_doubles(ps->proposed->start, ref->start, ref->ntask) &&
           same_doubles(ps->proposed->end, ref->end, ref->ntask);
}

/* A proposal priced while each of its allocations fails in turn; when
   `after_accept`, on a kt_plan_sim that has just accepted another
   proposal without looking at it (as MCMC does: the current graph's task
   structs are then kept op by op, completed on request).  After a
   failure the current plan is untouched (completed, it is its plan's
   from scratch) and the same proposal again prices exactly as from
   scratch; accepted, it is the current plan. */
static long proposal_case(const fixture *fx, uint64_t seed,
                          int after_accept) {
    kt_error err;
    kt_plan first, next;
    kt_plan_sim ps;
    kt_sim ref_first, ref;
    long at, injected = 0;
    plan_moved(fx, &fx->p, &seed, &first, &ref_first);
    plan_moved(fx, after_accept ? &first : &fx->p, &seed, &next, &ref);
    for (at = 1; at < 100000; at++) {
        kt_status r;
        int hit;
        const kt_sim *before = after_accept ? &ref_first : NULL;
        /* a fresh one each time: a proposal keeps its buffers */
        CHECK(kt_plan_sim_init(fx->g, &fx->p, &fx->t, &ps, &err) == KT_OK);
        if (after_accept) {
            CHECK(kt_plan_sim_propose(&ps, &first, &err) == KT_OK);
            kt_plan_sim_accept(&ps);
        }
        arm(at);
        r = kt_plan_sim_propose(&ps, &next, &err);
        hit = disarm();
        if (hit) {
            injected++;
            CHECKF(r == KT_ERR_NOMEM && err.message[0] && !ps.proposed,
                   "proposal, allocation %ld: status %d, %s", at, (int)r,
                   err.message);
            if (before) {
                kt_plan_sim_timeline(&ps);
                CHECKF(same_run(ps.current, before),
                       "proposal, allocation %ld: the current plan after "
                       "the failure", at);
            }
            r = kt_plan_sim_propose(&ps, &next, &err);
        }
        CHECKF(r == KT_OK && proposal_is(&ps, &ref),
               "proposal, allocation %ld: the proposal after the failure: %s",
               at, err.message);
        kt_plan_sim_accept(&ps);
        kt_plan_sim_timeline(&ps);
        CHECK(same_run(ps.current, &ref));
        kt_plan_sim_free(&ps);
        if (!hit || kt_test_failed) break;
    }
    kt_sim_free(&ref_first);
    kt_sim_free(&ref);
    kt_plan_free(&first);
    kt_plan_free(&next);
    return injected;
}

int main(void) {
    fixture fx;
    long n;
    if (fixture_init(&fx, "mlp:layers=3,hidden=64,batch=16", 4,
                     "nodes:2x2:300G:25G")) {
        n = full_and_delta_case(&fx, 2);
        printf("full run, delta and timeline: %ld allocation failures, each "
               "reported and recovered from\n", n);
        CHECK(n > 10);
        n = proposal_case(&fx, 7, 0);
        printf("incremental proposal: %ld allocation failures, each "
               "reported and recovered from\n", n);
        CHECK(n > 10);
        n = proposal_case(&fx, 11, 1);
        printf("incremental proposal after an accept: %ld allocation "
               "failures, each reported and recovered from\n", n);
        CHECK(n > 10);
        fixture_free(&fx);
    }
    return KT_TEST_SUMMARY();
}
