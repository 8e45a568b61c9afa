/* test_clock.c -- time budgets on a clock the test steps itself.

   KT_CLOCK (tiling.h's configuration) is defined here as a clock that
   advances by TICK seconds at every read, so a budget of S seconds is
   about S / TICK reads of the clock on every machine, and each search's
   use of its time budget becomes exact enough to test:
     1. kt_plan_search's search_seconds is its last read of the clock
        minus its first;
     2. kt_plan_mcmc shares a time budget between its chains (each an
        equal share of what is left, FlexFlow 6): with 4 restarts every
        chain runs, the proposals fill the budget, and a budget of one
        tick runs only the first chain (which always runs, so that there
        is a plan);
     3. kt_swap_search's GA stops at the first generation whose end finds
        the budget spent, and reports the seconds it took on that clock.
   TICK is a power of two, so the differences of the clock's values are
   exact. */
#include <stdint.h>

#define TICK (1.0 / 1024)
static int64_t clock_reads;
static double fake_clock(void) { return (double)++clock_reads * TICK; }
#define KT_CLOCK() fake_clock()

#define KT_IMPLEMENTATION
#include "../swap.h"
#include "kt_test.h"

#include <stdio.h>
#include <string.h>

/* 1: the DP's search_seconds spans its reads of the clock. */
static void test_search_seconds(void) {
    kt_graph *g;
    kt_error err;
    kt_factors f;
    kt_plan p;
    int64_t before;
    CHECK(kt_zoo_build("mlp:layers=3,hidden=64,batch=32", &g, &err) == KT_OK);
    CHECK(kt_factors_default(8, &f, &err) == KT_OK);
    before = clock_reads;
    CHECK(kt_plan_search(g, &f, NULL, &p, &err) == KT_OK);
    CHECKF(clock_reads - before >= 2 &&
               p.search_seconds == (double)(clock_reads - before - 1) * TICK,
           "%lld reads, search_seconds %g", (long long)(clock_reads - before),
           p.search_seconds);
    kt_plan_free(&p);
    kt_graph_destroy(g);
}

/* An MCMC search of g over 4 devices with a time budget, a proposal
   budget (0: none) and `restarts` chains. */
static kt_status mcmc(const kt_graph *g, double seconds, int64_t proposals,
                      int restarts, kt_mcmc_result *res) {
    kt_topology topo;
    kt_factors f;
    kt_mcmc_options mo;
    kt_plan p;
    kt_error err;
    kt_status s;
    if (kt_topology_parse("flat:4:100G", &topo, &err) != KT_OK ||
        kt_factors_default(4, &f, &err) != KT_OK)
        return KT_ERR_INVALID;
    memset(&mo, 0, sizeof mo);
    mo.seconds = seconds;
    mo.proposals = proposals;
    mo.restarts = restarts;
    s = kt_plan_mcmc(g, &f, &topo, &mo, &p, res, &err);
    if (s == KT_OK) kt_plan_free(&p);
    else printf("mcmc: %s\n", err.message);
    return s;
}

/* 2: MCMC's chains share the time budget.  The budget is far below the
   proposals at which a chain can stall (the graph's ops and tensors)
   times the chains, so only the clock ends a chain. */
static void test_mcmc_shares(void) {
    kt_graph *g;
    kt_error err;
    kt_mcmc_result res;
    int64_t before, reads;
    CHECK(kt_zoo_build("mlp:layers=4,hidden=64,batch=32", &g, &err) == KT_OK);
    CHECK(kt_graph_op_count(g) + kt_graph_tensor_count(g) > 40);
    /* 40 ticks over 4 chains: each chain about 10 proposals.  A chain
       given the whole of what is left would spend it all, and the
       chains after it would not run. */
    before = clock_reads;
    CHECK(mcmc(g, 40 * TICK, 0, 4, &res) == KT_OK);
    reads = clock_reads - before;
    CHECKF(res.chains == 4, "%d chains ran", res.chains);
    /* every chain reads the clock once a proposal, and once more when
       it finds its share spent; a handful of reads set up each chain */
    CHECKF(res.tried >= 40 - 4 * 4 && res.tried <= 40, "%lld proposals",
           (long long)res.tried);
    CHECKF(reads <= 40 + 4 * 4, "%lld reads of the clock", (long long)reads);
    /* a budget of one tick: the first chain runs (a plan is needed), its
       share is spent before its first proposal, and no chain follows */
    CHECK(mcmc(g, TICK, 0, 4, &res) == KT_OK);
    CHECKF(res.chains == 1 && res.tried == 0, "%d chains, %lld proposals",
           res.chains, (long long)res.tried);
    /* a proposal budget still ends a search the clock does not: every
       chain runs, with its share of the proposals */
    CHECK(mcmc(g, 0, 12, 3, &res) == KT_OK);
    CHECKF(res.chains == 3 && res.tried == 12, "%d chains, %lld tried",
           res.chains, (long long)res.tried);
    kt_graph_destroy(g);
}

/* 3: the GA's time budget.  Memory for half the step's tensors, so that
   no generation reaches the ideal step and stops the search early. */
static void test_swap_budget(void) {
    kt_graph *g;
    kt_error err;
    kt_swap_model m;
    kt_swap_options o;
    kt_swap_result r;
    int64_t all = 0, before;
    int t, i;
    static const int budget_ticks[2] = {3, 12};
    int generations[2] = {-1, -1};
    CHECK(kt_zoo_build("mlp:layers=4,hidden=256,batch=64", &g, &err) ==
          KT_OK);
    CHECK(kt_swap_model_from_graph(g, NULL, &m, &err) == KT_OK);
    for (t = 0; t < m.ntensors; t++)
        if (m.size_of[t] >= 0) all += m.bytes[t];
    for (i = 0; i < 2; i++) {
        memset(&o, 0, sizeof o);
        o.memory = all / 2;
        o.seconds = budget_ticks[i] * TICK; /* (no generation budget) */
        o.seed = 3;
        before = clock_reads;
        if (kt_swap_search(&m, KT_SWAP_SEARCH_GA, &o, &r, &err) != KT_OK) {
            CHECKF(0, "swap search: %s", err.message);
            continue;
        }
        generations[i] = r.generations;
        /* it stopped when the budget was spent, not before, and not a
           generation later; its seconds are the clock's */
        CHECKF(r.step_seconds > r.ideal_seconds * (1 + 1e-9),
               "the GA reached the ideal step (%g s) with half the memory",
               r.step_seconds);
        CHECKF(r.search_seconds >= o.seconds &&
                   r.search_seconds <= (double)(clock_reads - before) * TICK,
               "%d ticks: search_seconds %g after %lld reads",
               budget_ticks[i], r.search_seconds,
               (long long)(clock_reads - before));
        CHECKF(r.generations >= 1 && r.generations <= budget_ticks[i],
               "%d ticks: %d generations", budget_ticks[i], r.generations);
        kt_swap_result_free(&r);
    }
    /* one read of the clock a generation: four times the budget, more
       generations */
    CHECKF(generations[1] > generations[0], "%d then %d generations",
           generations[0], generations[1]);
    kt_swap_model_free(&m);
    kt_graph_destroy(g);
}

int main(void) {
    test_search_seconds();
    test_mcmc_shares();
    test_swap_budget();
    return KT_TEST_SUMMARY();
}
