/* test_sched_nomem.c -- sched.h's simulator when memory runs out.

   Every allocation of a run fails in turn (KT_MALLOC / KT_REALLOC below
   return NULL once, at the fail_at-th call after arming): the full
   simulation (kt_sim_run, its workspace, successor lists, wait states,
   queue buckets and the critical path), a delta simulation with its
   checkpoints (kt_sim_delta, kt_sim_timeline), and the incremental task
   graph of MCMC (kt_plan_sim_propose, on a fresh kt_plan_sim and on one
   that has just accepted a proposal unlooked at, after random walks --
   one long enough that the proposal repacks the timeline's blocks -- and
   on a chain of ops where the proposal grows a slot past the end of the
   slots or moves successor slots to the end of their arrays or grows the
   table of links, and where
   the scratch graph's re-sync fails part way after a walk of accepts),
   and a whole MCMC search (kt_plan_mcmc).
   Each failed call must
   say KT_ERR_NOMEM with a message, leave kt_sim.start / end NULL after a
   failed kt_sim_run (README: "NULL ... after a failed run"), and leave its
   object usable: the same call again, with memory, gives bit for bit the
   result of a run that never failed; after a failed proposal, the current
   plan, a different proposal and the failed one again each price exactly
   as from scratch, and the failed one accepted is the current plan.
   Leaks show under `make sanitize`
   and `make valgrind`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the library allocates through an allocator the test fails on request */
#include "kt_test_alloc.h"
/* small checkpoint blocks, so that a delta restores from one */
#define KT_SIM_CHECKPOINT 8
/* task slots and list entries a layout may hold: lowered from INT_MAX - 1
   so that a chain of 300 ops reaches it (limit_case); the other cases
   need at most about half of it */
#define KT__PS_MAX 20000
/* the timeline's blocks repacked as soon as there are more than packed
   ones would be (default: twice as many), so that a walk reaches it */
#define KT__TL_REPACK4 4
#define KT__TL_SLACK 0
/* the slots' arrays sized exactly to the slots (default: four times as
   many), so that every slot grown past the end grows them -- and fails
   there in turn */
#define KT__PS_ROOM 1
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
    CHECK(kt_lower_on(fx->g, &fx->p, &fx->t, &fx->prog, &err) == KT_OK);
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

/* p's task graph and timeline from scratch (lowered, built, simulated). */
static void reference(const fixture *fx, const kt_plan *p, kt_sim *ref) {
    kt_error err;
    kt_program prog;
    CHECKF(kt_lower_on(fx->g, p, &fx->t, &prog, &err) == KT_OK, "%s", err.message);
    CHECKF(kt_sim_build(fx->g, p, &prog, &fx->t, ref, &err) == KT_OK, "%s",
           err.message);
    CHECKF(kt_sim_run(ref, &err) == KT_OK, "%s", err.message);
    kt_program_free(&prog);
}

/* The plan one random move from p: a random op's random configuration
   and a random tensor's tiling; with its task graph and timeline from
   scratch in *ref. */
static void plan_moved(const fixture *fx, const kt_plan *p, uint64_t *seed,
                       kt_plan *next, kt_sim *ref) {
    kt_error err;
    const kt_graph *g = fx->g;
    CHECK(kt__plan_copy(next, p, g, &err) == KT_OK);
    kt__propose(g, next, rnd(seed, 0, g->nop - 1), seed);
    kt__propose_tensor(g, next, rnd(seed, 0, g->ntensor - 1), seed);
    reference(fx, next, ref);
}

static int proposal_is(kt_plan_sim *ps, const kt_sim *ref) {
    kt_plan_sim_timeline(ps); /* start and end, in compact numbering */
    return ps->proposed && ps->proposed->step_seconds == ref->step_seconds &&
           same_doubles(ps->proposed->start, ref->start, ref->ntask) &&
           same_doubles(ps->proposed->end, ref->end, ref->ntask);
}

/* The incremental graph's own state after a failure, looked at inside:
   the current task graph keeps its simulator's workspace (it holds the
   timeline the next proposal resumes from), and so does the scratch one
   unless it is marked to be re-synced whole (else the next re-sync fills
   a new workspace only in the dirty ops); every op's predecessor and
   successor slots lie inside their arrays (a slot past the end is
   written by the next re-sync).  Either broken shows only later, as a
   crash, an uninitialised read or an out-of-bounds write. */
static int plan_sim_sound(const kt_plan_sim *ps) {
    const struct kt__plan_sim_work *w = ps->work;
    int x, q;
    for (x = 0; x < 2; x++) {
        const kt__ps_side *sd = &w->side[x];
        if (x != w->cur && w->resync_all) continue; /* rewritten anyway */
        if (!w->tg[x].sim.work) return 0;
        for (q = 0; q < w->c.g->nop; q++)
            if ((size_t)sd->scap[q] > sd->cap_se ||
                (size_t)sd->pcap[q] > w->tg[x].cap_pred)
                return 0;
    }
    return 1;
}

/* The plans of one failing proposal and their timelines from scratch:
   the current plan, the proposal that fails, another one. */
typedef struct trio {
    const kt_plan *cur, *next, *other;
    kt_sim ref_cur, ref_next, ref_other;
} trio;

/* After proposal `at` failed: the current plan kept (its timeline, and
   proposed again it prices as before), a different proposal, then the
   failed one again, each exactly as from scratch; the failed one
   accepted is the current plan. */
static void after_failure(kt_plan_sim *ps, trio *tr, long at) {
    kt_error err;
    kt_status r;
    CHECKF(plan_sim_sound(ps), "allocation %ld: a task graph lost its "
           "workspace or has a slot past its array", at);
    if (kt_test_failed) return; /* the calls below would crash */
    kt_plan_sim_timeline(ps);
    CHECKF(same_run(ps->current, &tr->ref_cur),
           "allocation %ld: the current plan after the failure", at);
    r = kt_plan_sim_propose(ps, tr->cur, &err);
    CHECKF(r == KT_OK && proposal_is(ps, &tr->ref_cur),
           "allocation %ld: the current plan proposed: %s", at, err.message);
    r = kt_plan_sim_propose(ps, tr->other, &err);
    CHECKF(r == KT_OK && proposal_is(ps, &tr->ref_other),
           "allocation %ld: another proposal: %s", at, err.message);
    r = kt_plan_sim_propose(ps, tr->next, &err);
    CHECKF(r == KT_OK && proposal_is(ps, &tr->ref_next),
           "allocation %ld: the failed proposal again: %s", at,
           err.message);
    kt_plan_sim_accept(ps);
    kt_plan_sim_timeline(ps);
    CHECKF(same_run(ps->current, &tr->ref_next),
           "allocation %ld: the failed proposal accepted", at);
}

/* One allocation may fail without failing a proposal: kt__tl_snap's
   snapshots of the resources are a cache, and without one the caller
   scans the timeline's blocks instead.  A proposal that succeeds through
   an injected failure must be exactly right. */

/* Proposal tr->next priced while each of its allocations fails in turn,
   on a fresh kt_plan_sim that has accepted `first` without looking at it
   when first is not NULL (as MCMC does: the current graph's task structs
   are then kept op by op, completed on request); tr->cur is then first.
   Each failure must say KT_ERR_NOMEM with a message and leave the
   kt_plan_sim usable (after_failure).  Returns how many failed. */
static long failing_proposal(const fixture *fx, const kt_plan *first,
                             trio *tr) {
    kt_error err;
    kt_plan_sim ps;
    long at, injected = 0;
    for (at = 1; at < 100000; at++) {
        kt_status r;
        int hit;
        /* a fresh one each time: a proposal keeps its buffers */
        CHECK(kt_plan_sim_init(fx->g, &fx->p, &fx->t, &ps, &err) == KT_OK);
        if (kt_test_failed) break;
        if (first) {
            CHECK(kt_plan_sim_propose(&ps, first, &err) == KT_OK);
            kt_plan_sim_accept(&ps);
        }
        arm(at);
        r = kt_plan_sim_propose(&ps, tr->next, &err);
        hit = disarm();
        if (hit && r == KT_OK) { /* survived (snapshot_cache): right? */
            CHECKF(proposal_is(&ps, &tr->ref_next), "allocation %ld: a "
                   "proposal through a failed snapshot", at);
        } else if (hit) {
            injected++;
            CHECKF(r == KT_ERR_NOMEM && err.message[0] && !ps.proposed,
                   "proposal, allocation %ld: status %d, %s", at, (int)r,
                   err.message);
            after_failure(&ps, tr, at);
        } else {
            CHECKF(r == KT_OK && proposal_is(&ps, &tr->ref_next),
                   "proposal with memory: %s", err.message);
        }
        kt_plan_sim_free(&ps);
        if (!hit || kt_test_failed) break;
    }
    return injected;
}

static void trio_free(trio *tr) {
    kt_sim_free(&tr->ref_cur);
    kt_sim_free(&tr->ref_next);
    kt_sim_free(&tr->ref_other);
}

/* after_failure for the plans cur (current), next (failed) and other,
   their references built here. */
static void after_failure_of(const fixture *fx, kt_plan_sim *ps,
                             const kt_plan *cur, const kt_plan *next,
                             const kt_plan *other, long at) {
    trio tr;
    memset(&tr, 0, sizeof tr);
    tr.cur = cur;
    tr.next = next;
    tr.other = other;
    reference(fx, tr.cur, &tr.ref_cur);
    reference(fx, tr.next, &tr.ref_next);
    reference(fx, tr.other, &tr.ref_other);
    after_failure(ps, &tr, at);
    trio_free(&tr);
}

/* A random proposal (from the fixture's plan, or after accepting another
   random one when `after_accept`), failing in turn; the other proposal
   is a third random one. */
static long proposal_case(const fixture *fx, uint64_t seed,
                          int after_accept) {
    kt_plan first, next, other;
    kt_sim ref_first;
    trio tr;
    long n;
    memset(&tr, 0, sizeof tr);
    plan_moved(fx, &fx->p, &seed, &first, &ref_first);
    tr.cur = after_accept ? &first : &fx->p;
    plan_moved(fx, tr.cur, &seed, &next, &tr.ref_next);
    plan_moved(fx, tr.cur, &seed, &other, &tr.ref_other);
    tr.next = &next;
    tr.other = &other;
    reference(fx, tr.cur, &tr.ref_cur);
    n = failing_proposal(fx, after_accept ? &first : NULL, &tr);
    trio_free(&tr);
    kt_sim_free(&ref_first);
    kt_plan_free(&first);
    kt_plan_free(&next);
    kt_plan_free(&other);
    return n;
}

/* failing_proposal on a fresh kt_plan_sim of the fixture's plan, the
   proposal `next` failing, `other` the different one; references built
   here. */
static long failing_from_plan(const fixture *fx, const kt_plan *next,
                              const kt_plan *other) {
    trio tr;
    long n;
    memset(&tr, 0, sizeof tr);
    tr.cur = &fx->p;
    tr.next = next;
    tr.other = other;
    reference(fx, tr.cur, &tr.ref_cur);
    reference(fx, tr.next, &tr.ref_next);
    reference(fx, tr.other, &tr.ref_other);
    n = failing_proposal(fx, NULL, &tr);
    trio_free(&tr);
    return n;
}

/* A chain of nops elementwise ops (a_k = relu(a_(k-1))), data parallel
   on ndev devices: no op transfers anything, so every block's slot has
   only the room of an empty one, and a tensor tiled by columns instead
   outgrows its consumer's slot. */
static int chain_init(fixture *fx, int nops, int ndev) {
    char text[16384], topo[32];
    size_t n = 0;
    int i;
    kt_error err;
    kt_factors f;
    kt_search_options so;
    memset(fx, 0, sizeof *fx);
    n += (size_t)snprintf(text + n, sizeof text - n, "input a0[64,256]\n");
    for (i = 1; i <= nops; i++)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "a%d[i,j] = relu(a%d[i,j])\n", i, i - 1);
    CHECK(kt_graph_create(&fx->g, &err) == KT_OK);
    CHECK(kt_graph_parse(fx->g, text, n, &err) == KT_OK);
    snprintf(topo, sizeof topo, "flat:%d:100G", ndev);
    CHECK(kt_topology_parse(topo, &fx->t, &err) == KT_OK);
    memset(&f, 0, sizeof f);
    f.count = 1;
    f.k[0] = ndev;
    memset(&so, 0, sizeof so);
    so.strategy = KT_STRATEGY_DATA;
    CHECK(kt_plan_search(fx->g, &f, &so, &fx->p, &err) == KT_OK);
    CHECK(kt_lower_on(fx->g, &fx->p, &fx->t, &fx->prog, &err) == KT_OK);
    return kt_test_failed == 0;
}

/* On the chain: the last tensor tiled by columns, so that the last op's
   block outgrows its slot and, no holes after it, the slots grow at the
   end (`many`: every second tensor, so that many blocks and successor
   lists outgrow their slots, moved to the end of their arrays); the
   other proposal tiles the tensor before the last one by columns. */
static long growth_case(const fixture *fx, int nops, int many) {
    kt_error err;
    kt_plan next, other;
    long n;
    int j;
    CHECK(kt__plan_copy(&next, &fx->p, fx->g, &err) == KT_OK);
    CHECK(kt__plan_copy(&other, &fx->p, fx->g, &err) == KT_OK);
    next.tiling[nops].cut[0] = 1;
    if (many)
        for (j = 2; j <= nops; j += 2) next.tiling[j].cut[0] = 1;
    other.tiling[nops - 1].cut[0] = 1;
    n = failing_from_plan(fx, &next, &other);
    kt_plan_free(&next);
    kt_plan_free(&other);
    return n;
}

/* `to`: `from` moved by one to three random moves (an op's configuration
   or a tensor's tiling). */
static void plan_walk(const kt_graph *g, const kt_plan *from, kt_plan *to,
                      uint64_t *seed) {
    int m, moves = 1 + rnd(seed, 0, 2);
    memcpy(to->tiling, from->tiling, sizeof(kt_tiling) * (size_t)g->ntensor);
    memcpy(to->split, from->split, sizeof(int) * (size_t)g->nop * KT_MAX_CUTS);
    for (m = 0; m < moves; m++) {
        if (rnd(seed, 0, 1)) kt__propose(g, to, rnd(seed, 0, g->nop - 1), seed);
        else kt__propose_tensor(g, to, rnd(seed, 0, g->ntensor - 1), seed);
    }
}

/* After a walk: cur a copy of the current plan, next and other each a
   random move from it. */
static void walk_plans(const kt_graph *g, const kt_plan *current,
                       kt_plan *cur, kt_plan *next, kt_plan *other,
                       uint64_t *seed) {
    plan_walk(g, current, next, seed);
    plan_walk(g, current, other, seed);
    memcpy(cur->tiling, current->tiling,
           sizeof(kt_tiling) * (size_t)g->ntensor);
    memcpy(cur->split, current->split,
           sizeof(int) * (size_t)g->nop * KT_MAX_CUTS);
}

/* A proposal failing in turn after a walk of four random proposals, each
   accepted or not at random (the state MCMC leaves: a current graph
   several accepts away from the first layout, a scratch graph with a
   rejected change in it) -- where a failure in the resumed run can be
   followed by a restore point of the same run.  With `repack`, the walk
   goes on (accepting) until the timeline's blocks are to be repacked by
   the failing proposal (kt__tl_repack), which must happen. */
static int walk_repacks(const kt_plan_sim *ps) {
    const kt__tl *tl = &ps->work->tl;
    return (int64_t)tl->nseq * 4 >
           (int64_t)(tl->n / KT__DBLOCK + 1) * KT__TL_REPACK4 +
               4 * KT__TL_SLACK;
}
static long walk_case(const fixture *fx, uint64_t seed0, int repack) {
    const kt_graph *g = fx->g;
    kt_error err;
    kt_plan cur, next, other;
    long at, injected = 0;
    CHECK(kt__plan_copy(&cur, &fx->p, g, &err) == KT_OK);
    CHECK(kt__plan_copy(&next, &fx->p, g, &err) == KT_OK);
    CHECK(kt__plan_copy(&other, &fx->p, g, &err) == KT_OK);
    for (at = 1; at < 100000 && !kt_test_failed; at++) {
        kt_plan_sim ps;
        uint64_t seed = seed0;
        kt_status r;
        int k, hit;
        CHECK(kt_plan_sim_init(g, &fx->p, &fx->t, &ps, &err) == KT_OK);
        if (kt_test_failed) break;
        for (k = 0; k < 4 || (repack && k < 400 && !walk_repacks(&ps));
             k++) {
            plan_walk(g, ps.plan, &next, &seed);
            CHECK(kt_plan_sim_propose(&ps, &next, &err) == KT_OK);
            if (k >= 4 || rnd(&seed, 0, 1)) kt_plan_sim_accept(&ps);
        }
        CHECKF(!repack || walk_repacks(&ps), "walk: no repack after %d "
               "proposals", k);
        walk_plans(g, ps.plan, &cur, &next, &other, &seed);
        k = ps.work->repacks;
        arm(at);
        r = kt_plan_sim_propose(&ps, &next, &err);
        hit = disarm();
        if (!hit && repack)
            CHECKF(ps.work->repacks == k + 1, "walk: %d repacks",
                   ps.work->repacks - k);
        if (hit) {
            injected++;
            CHECKF(r == KT_ERR_NOMEM && err.message[0] && !ps.proposed,
                   "walk, allocation %ld: status %d, %s", at, (int)r,
                   err.message);
            after_failure_of(fx, &ps, &cur, &next, &other, at);
        }
        kt_plan_sim_free(&ps);
        if (!hit) break;
    }
    kt_plan_free(&cur);
    kt_plan_free(&next);
    kt_plan_free(&other);
    return injected;
}

/* The re-sync of the scratch graph failing part way: after a walk of
   `walk` proposals, all accepted (so that the graph that was current has
   outgrown slots to catch up on), the first `first` allocations of the
   next proposal fail in turn, from seed s0 on for `seeds` seeds.  A
   failure while copying the ops the last proposal touched, after some
   are copied, must keep the ones still to copy listed (w->ndirty) for
   the next proposal, or the scratch graph keeps the old graph's lists
   there (after_failure then finds the proposals wrong).  Returns how
   many failures hit the re-sync of the touched ops (found there with
   ops still listed); the ones elsewhere are checked too. */
static long resync_case(const fixture *fx, uint64_t s0, int seeds, int walk,
                        int first) {
    const kt_graph *g = fx->g;
    kt_error err;
    kt_plan cur, next, other;
    long in_resync = 0;
    uint64_t k0;
    CHECK(kt__plan_copy(&cur, &fx->p, g, &err) == KT_OK);
    CHECK(kt__plan_copy(&next, &fx->p, g, &err) == KT_OK);
    CHECK(kt__plan_copy(&other, &fx->p, g, &err) == KT_OK);
    for (k0 = s0; k0 < s0 + (uint64_t)seeds && !kt_test_failed; k0++) {
        long at;
        for (at = 1; at <= first && !kt_test_failed; at++) {
            kt_plan_sim ps;
            uint64_t seed = k0 * 7919;
            kt_status r;
            int k, hit;
            CHECK(kt_plan_sim_init(g, &fx->p, &fx->t, &ps, &err) == KT_OK);
            if (kt_test_failed) break;
            for (k = 0; k < walk; k++) {
                plan_walk(g, ps.plan, &next, &seed);
                CHECK(kt_plan_sim_propose(&ps, &next, &err) == KT_OK);
                kt_plan_sim_accept(&ps);
            }
            walk_plans(g, ps.plan, &cur, &next, &other, &seed);
            arm(at);
            r = kt_plan_sim_propose(&ps, &next, &err);
            hit = disarm();
            if (hit && r == KT_OK) { /* survived: right? */
                kt_sim ref;
                reference(fx, &next, &ref);
                CHECKF(proposal_is(&ps, &ref), "re-sync, seed %llu, "
                       "allocation %ld: a proposal through a failed "
                       "snapshot", (unsigned long long)k0, at);
                kt_sim_free(&ref);
            } else if (hit) {
                CHECKF(r == KT_ERR_NOMEM && err.message[0] && !ps.proposed,
                       "re-sync, seed %llu, allocation %ld: status %d, %s",
                       (unsigned long long)k0, at, (int)r, err.message);
                in_resync += ps.work->ndirty > 0 && !ps.work->resync_all;
                after_failure_of(fx, &ps, &cur, &next, &other, at);
            }
            kt_plan_sim_free(&ps);
        }
    }
    kt_plan_free(&cur);
    kt_plan_free(&next);
    kt_plan_free(&other);
    return in_resync;
}

/* The link table growing inside a proposal: on the chain over 24
   devices the data-parallel plan uses no link, and the proposal's
   conversion from rows to columns makes every device pair talk (552
   links), so the table (kt__link_id, first 1024 places, kept at most
   half full) is made and then grows once with 512 links in it.  A
   failed growth must leave the table as it was (kt__tg_block retries the
   link later): checked as every failing proposal is, by after_failure.
   Returns how many failures were injected; fails unless the table grew
   in the proposal with memory. */
static long links_case(const fixture *fx, int nops) {
    kt_error err;
    kt_plan_sim ps;
    kt_plan next, other;
    int64_t cap0;
    long n;
    CHECK(kt__plan_copy(&next, &fx->p, fx->g, &err) == KT_OK);
    CHECK(kt__plan_copy(&other, &fx->p, fx->g, &err) == KT_OK);
    next.tiling[nops].cut[0] = 1;         /* rows to columns: all to all */
    other.tiling[nops].cut[0] = KT_CUT_R; /* rows to replicas: all-gather */
    CHECK(kt_plan_sim_init(fx->g, &fx->p, &fx->t, &ps, &err) == KT_OK);
    cap0 = ps.work->c.links.cap;
    CHECK(kt_plan_sim_propose(&ps, &next, &err) == KT_OK);
    CHECKF(cap0 < 1024 && ps.work->c.links.n == 24 * 23 &&
               ps.work->c.links.cap >= 2048,
           "the proposal's links: %lld in a table of %lld places, %lld "
           "before", (long long)ps.work->c.links.n,
           (long long)ps.work->c.links.cap, (long long)cap0);
    kt_plan_sim_free(&ps);
    n = failing_from_plan(fx, &next, &other);
    kt_plan_free(&next);
    kt_plan_free(&other);
    return n;
}

/* A proposal whose layout needs more than KT__PS_MAX task slots or list
   entries (lowered above: a graph whose compact numbering fits in an int
   can need more than INT_MAX once its slots have room): refused with
   KT_ERR_LIMIT naming the limit, before any number overflows, and the
   kt_plan_sim still usable -- the current plan proposed and another
   proposal price exactly as from scratch.  Every `step`-th tensor of the
   chain is retiled: step 1 passes the limit while the slots grow, step 2
   only while a rebuilt list is written after the last entry
   (kt__tg_push; both checked with a counter once). */
static void limit_case(const fixture *fx, int nops, int step) {
    kt_error err;
    kt_plan big, other;
    kt_plan_sim ps;
    kt_sim ref_cur, ref_other;
    kt_status r;
    int j;
    CHECK(kt__plan_copy(&big, &fx->p, fx->g, &err) == KT_OK);
    CHECK(kt__plan_copy(&other, &fx->p, fx->g, &err) == KT_OK);
    for (j = 2; j <= nops; j += step) big.tiling[j].cut[0] = 1;
    other.tiling[nops].cut[0] = 1;
    reference(fx, &fx->p, &ref_cur);
    reference(fx, &other, &ref_other);
    if (kt_plan_sim_init(fx->g, &fx->p, &fx->t, &ps, &err) != KT_OK) {
        CHECKF(0, "the chain's first layout: %s", err.message);
        return;
    }
    r = kt_plan_sim_propose(&ps, &big, &err);
    CHECKF(r == KT_ERR_LIMIT && strstr(err.message, "more than 20000") &&
           !ps.proposed, "a layout past the limit: status %d, %s", (int)r,
           err.message);
    printf("a layout past KT__PS_MAX: %s\n", err.message);
    r = kt_plan_sim_propose(&ps, &fx->p, &err);
    CHECKF(r == KT_OK && proposal_is(&ps, &ref_cur),
           "the current plan after the refusal: %s", err.message);
    r = kt_plan_sim_propose(&ps, &other, &err);
    CHECKF(r == KT_OK && proposal_is(&ps, &ref_other),
           "another proposal after the refusal: %s", err.message);
    kt_plan_sim_accept(&ps);
    kt_plan_sim_timeline(&ps);
    CHECK(same_run(ps.current, &ref_other));
    kt_plan_sim_free(&ps);
    kt_sim_free(&ref_cur);
    kt_sim_free(&ref_other);
    kt_plan_free(&big);
    kt_plan_free(&other);
}

/* kt_plan_mcmc with every allocation failing in turn (the chains'
   starts -- the data-parallel search among them, whose running out of
   memory once read as "does not apply" and started from the DP plan --
   their task graphs, proposals and accepts, and the best plan's copies):
   each failure says KT_ERR_NOMEM with a message and returns no plan, or
   (a cache that could not grow) finds what a run that never armed finds;
   the run that does not fail finds that too.  Returns the failures
   injected. */
static long mcmc_case(const fixture *fx) {
    kt_factors f;
    kt_mcmc_options mo;
    kt_plan ref, p;
    kt_error err;
    kt_mcmc_result rref, res;
    long at, injected = 0, nomem = 0;
    kt_factors_default(fx->t.ndev, &f, &err);
    memset(&mo, 0, sizeof mo);
    mo.proposals = 24;
    mo.restarts = 2;
    mo.seed = 3;
    CHECK(kt_plan_mcmc(fx->g, &f, &fx->t, &mo, &ref, &rref, &err) == KT_OK);
    if (kt_test_failed) return 0;
    /* (valgrind: every fifth allocation, ~800 searches) */
    for (at = 1;; at += getenv("KT_WRAP") ? 5 : 1) {
        kt_status r;
        int hit;
        arm(at);
        r = kt_plan_mcmc(fx->g, &f, &fx->t, &mo, &p, &res, &err);
        hit = disarm();
        if (!hit) {
            CHECKF(r == KT_OK && res.step_seconds == rref.step_seconds &&
                       res.tried == rref.tried &&
                       res.accepted == rref.accepted &&
                       res.first_start == rref.first_start &&
                       p.total_bytes == ref.total_bytes,
                   "mcmc with memory: %s", err.message);
            if (r == KT_OK) kt_plan_free(&p);
            break;
        }
        injected++;
        /* (a memo of the search's prices that cannot grow is only a
           cache: then the same plan, found without it) */
        CHECKF(r == KT_ERR_NOMEM ? err.message[0] && !p.tiling
                                 : r == KT_OK &&
                                       res.step_seconds == rref.step_seconds &&
                                       res.tried == rref.tried,
               "mcmc, allocation %ld: status %d, %s", at, (int)r,
               err.message);
        if (r == KT_OK) kt_plan_free(&p);
        else nomem++;
        if (kt_test_failed) break;
    }
    kt_plan_free(&ref);
    CHECKF(nomem > injected / 2, "%ld of %ld failures reported", nomem,
           injected);
    return injected;
}

/* kt_program_count_pairs failing at each of its allocations: reported,
   nothing left counted, and the count that then succeeds the same as
   one that never failed. */
static long count_pairs_case(fixture *fx) {
    kt_error err;
    kt_pair_bytes *want;
    int64_t nwant;
    long k, failures = 0;
    kt_status s;
    if (kt_program_count_pairs(&fx->prog, &err) != KT_OK) {
        CHECKF(0, "%s", err.message);
        return 0;
    }
    nwant = fx->prog.npairs;
    want = fx->prog.pairs;
    fx->prog.pairs = NULL;
    fx->prog.npairs = 0;
    for (k = 1; k < 100; k++) {
        int hit;
        arm(k);
        s = kt_program_count_pairs(&fx->prog, &err);
        hit = disarm();
        failures += hit;
        if (s == KT_OK) { /* (a failed shrink at the end keeps the room) */
            CHECK(fx->prog.npairs == nwant && nwant > 0 &&
                  memcmp(fx->prog.pairs, want,
                         sizeof *want * (size_t)nwant) == 0);
            if (!hit) break;
            continue;
        }
        CHECKF(hit && s == KT_ERR_NOMEM && err.status == s, "failure %ld: "
               "%d", k, (int)s);
        CHECK(fx->prog.pairs == NULL && fx->prog.npairs == 0);
    }
    CHECK(s == KT_OK);
    KT_FREE(want);
    return failures;
}

int main(void) {
    fixture fx;
    long n;
    if (fixture_init(&fx, "mlp:layers=3,hidden=64,batch=16", 4,
                     "nodes:2x2:300G:25G")) {
        n = count_pairs_case(&fx);
        printf("counting pairs: %ld allocation failures, each reported\n", n);
        CHECK(n >= 3);
        n = full_and_delta_case(&fx, 2);
        printf("full run, delta and timeline: %ld allocation failures, each "
               "reported and recovered from\n", n);
        CHECK(n > 10);
        n = proposal_case(&fx, 7, 0);
        printf("incremental proposal: %ld allocation failures, each "
               "reported and recovered from\n", n);
        CHECK(n > 10);
        n = mcmc_case(&fx);
        printf("mcmc search: %ld allocation failures, each reported\n", n);
        CHECK(n > 10);
        n = proposal_case(&fx, 11, 1);
        printf("incremental proposal after an accept: %ld allocation "
               "failures, each reported and recovered from\n", n);
        CHECK(n > 10);
        /* seed 57 fails the re-sync after ops are copied, as most
           seeds from 50 do (found with a counter; seed 56 did with the
           one-hop collectives before 2026-12-07); fewer seeds under
           valgrind */
        n = getenv("KT_WRAP") ? resync_case(&fx, 57, 1, 5, 2)
                              : resync_case(&fx, 50, 46, 5, 3);
        printf("the re-sync failing part way: %ld of its allocation "
               "failures with ops still to copy, each recovered from\n", n);
        CHECK(n > 0);
        fixture_free(&fx);
    }
    /* (the walk whose failing proposal once lost a failure of its
       resumed run's queue at a later restore point) */
    if (fixture_init(&fx, "transformer:layers=1,dmodel=64,heads=4,ffn=128,"
                     "seq=16,batch=4", 4, "nodes:2x2:300G:25G")) {
        n = walk_case(&fx, 2036, 0);
        printf("a proposal after a random walk: %ld allocation failures, "
               "each reported and recovered from\n", n);
        CHECK(n > 10);
        n = walk_case(&fx, 77, 1);
        printf("a proposal that repacks the timeline's blocks, after a "
               "walk: %ld allocation failures, each reported and recovered "
               "from\n", n);
        CHECK(n > 10);
        fixture_free(&fx);
    }
    if (chain_init(&fx, 30, 4)) {
        n = growth_case(&fx, 30, 0);
        printf("a slot grown at the end: %ld allocation failures, each "
               "reported and recovered from\n", n);
        CHECK(n > 10);
        fixture_free(&fx);
    }
    if (chain_init(&fx, 300, 4)) {
        limit_case(&fx, 300, 1);
        limit_case(&fx, 300, 2);
        fixture_free(&fx);
    }
    if (chain_init(&fx, 3, 24)) {
        n = links_case(&fx, 3);
        printf("the link table grown by a proposal: %ld allocation "
               "failures, each reported and recovered from\n", n);
        CHECK(n > 10);
        fixture_free(&fx);
    }
    if (chain_init(&fx, 20, 4)) {
        n = growth_case(&fx, 20, 1);
        printf("successor slots moved to the end: %ld allocation failures, "
               "each reported and recovered from\n", n);
        CHECK(n > 10);
        fixture_free(&fx);
    }
    return KT_TEST_SUMMARY();
}
