/* bench_sched.c -- how fast are the lowering, the task-graph build and the
   simulations of sched.h?

   For wresnet:depth=152,widen=10,batch=8 (training) planned by the level DP
   on 64 devices (and on 8), over nodes:8x8:450G:400Gb (flat:8:450G for 8):
     lower        kt_lower_on of the plan (collectives for the topology)
     build        kt_sim_build of the lowered program
     full sim     kt_sim_run (FlexFlow Algorithm 1), best and median of runs
     full sim with checkpoints
                  the same once a kt_sim_delta has turned checkpoints on
     delta sim    kt_sim_delta after a single-operator change (a random op's
                  compute tasks get new run times, as a new configuration of
                  that op would give them), median over random changes, and
                  the ratio of the full simulation's median to it; then
                  kt_sim_timeline, bringing every task's start and end
                  (sim.start, sim.end) and the critical path up to date
                  (O(tasks)); the final step time is
                  checked against a full run
   Target (the sched.h issue): full simulation under 20 ms on 64 devices,
   delta at least 10x faster than full.

   Then MCMC proposals priced from scratch (kt_lower + kt_sim_build +
   kt_sim_run) and by the incremental task graph (kt_plan_sim_propose) on
   the same plans, same run: ms per proposal, ratio, proposals/s, and the
   share of the previous timeline the delta simulations kept.  (An
   accepted proposal's time includes kt_plan_sim_accept; a third are
   accepted, at random.)  Then one MCMC chain as kt_plan_mcmc runs it
   (Metropolis acceptance with the default beta): ms per proposal,
   propose and accept, without the chain's start -- the rate of the
   MCMC target.

   Then MCMC (FlexFlow 6) against the level DP on zoo models, every plan
   simulated on the same topology: the DP plan for bytes and for the time
   objective, data parallelism, and the MCMC plan after a fixed number of
   proposals (seed 1) -- from data parallelism, and from the DP plan
   (MCMC refining it) -- with MCMC's proposal rate (target: 10,000 per
   second on wresnet-152 on 64 devices).  All times are CPU seconds of one
   thread (clock()).  A missed target is reported, not fatal.

   Usage: bench_sched [--quick]     --quick: 8 devices only */
#define KT_IMPLEMENTATION
#include "../sched.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void) { return (double)clock() / CLOCKS_PER_SEC; }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int die(const char *what, const kt_error *err) {
    fprintf(stderr, "bench_sched: %s: %s\n", what, err->message);
    return 1;
}

/* The single-operator changes of bench_one: op `op`'s compute tasks get
   run times `scale` times their current ones (as a new configuration of
   the op would give them).  Returns how many. */
static int op_change(const kt_sim *sim, int op, double scale, int *tasks,
                     double *secs) {
    int k, n = 0;
    for (k = 0; k < sim->ntask; k++)
        if (sim->task[k].kind == KT_TASK_COMPUTE && sim->task[k].op == op) {
            tasks[n] = k;
            secs[n++] = sim->task[k].seconds * scale;
        }
    return n;
}

/* Best and median CPU time of 21 full simulations of sim; 1 on error. */
static int time_full_runs(kt_sim *sim, double *best, double *med) {
    double runs[21], t0;
    kt_error err;
    int i;
    *best = 1e30;
    for (i = 0; i < 21; i++) {
        t0 = cpu_now();
        if (kt_sim_run(sim, &err) != KT_OK) return die("sim", &err);
        runs[i] = cpu_now() - t0;
        if (runs[i] < *best) *best = runs[i];
    }
    *med = median(runs, 21);
    return 0;
}

static int bench_one(const char *model, int ndev, const char *topo) {
    kt_graph *g = NULL;
    kt_error err;
    kt_factors f;
    kt_plan p;
    kt_program prog;
    kt_sim sim, ref;
    kt_topology t;
    kt_search_options so;
    double t0, t_lower, t_build, full_best, full_med, ck_best, ck_med;
    double deltas[200], timelines[200], delta_med, tl_med;
    int i, nd = 200, *changed, n;
    double *secs;
    uint64_t rng = 12345;
    memset(&err, 0, sizeof err);
    memset(&so, 0, sizeof so);
    if (kt_zoo_build(model, &g, &err) != KT_OK) return die(model, &err);
    if (kt_factors_default(ndev, &f, &err) != KT_OK) return die("factors", &err);
    if (kt_topology_parse(topo, &t, &err) != KT_OK) return die(topo, &err);
    so.strategy = KT_STRATEGY_DP;
    if (kt_plan_search(g, &f, &so, &p, &err) != KT_OK) return die("plan", &err);
    t0 = cpu_now();
    if (kt_lower_on(g, &p, &t, &prog, &err) != KT_OK) return die("lower", &err);
    t_lower = cpu_now() - t0;
    t0 = cpu_now();
    if (kt_sim_build(g, &p, &prog, &t, &sim, &err) != KT_OK)
        return die("build", &err);
    t_build = cpu_now() - t0;
    if (kt_sim_build(g, &p, &prog, &t, &ref, &err) != KT_OK)
        return die("build", &err);
    if (time_full_runs(&sim, &full_best, &full_med)) return 1;
    changed = (int *)malloc(sizeof(int) * (size_t)sim.ntask);
    secs = (double *)malloc(sizeof(double) * (size_t)sim.ntask);
    if (!changed || !secs) {
        fprintf(stderr, "bench_sched: out of memory\n");
        return 1;
    }
    /* the first delta turns checkpoints on: full runs take them from then
       on, which is what a search that mixes both pays */
    changed[0] = 0;
    secs[0] = sim.task[0].seconds;
    if (kt_sim_delta(&sim, 1, changed, secs, &err) != KT_OK)
        return die("delta", &err);
    if (time_full_runs(&sim, &ck_best, &ck_med)) return 1;
    /* single-operator changes: a random op's compute tasks 0.5x .. 2x,
       each priced by kt_sim_delta (step time and busy times), then its
       timeline and critical path written out by kt_sim_timeline */
    for (i = 0; i < nd; i++) {
        int op = (int)(kt__rng(&rng) % (uint64_t)g->nop);
        double scale = 0.5 + 1.5 * (double)(kt__rng(&rng) % 1000) / 1000;
        n = op_change(&sim, op, scale, changed, secs);
        t0 = cpu_now();
        if (kt_sim_delta(&sim, n, changed, secs, &err) != KT_OK)
            return die("delta", &err);
        deltas[i] = cpu_now() - t0;
        t0 = cpu_now();
        if (kt_sim_timeline(&sim, &err) != KT_OK) return die("timeline", &err);
        timelines[i] = cpu_now() - t0;
        for (n--; n >= 0; n--) ref.task[changed[n]].seconds = secs[n];
    }
    /* the end state against a full run of the same run times */
    if (kt_sim_run(&ref, &err) != KT_OK) return die("sim", &err);
    if (ref.step_seconds != sim.step_seconds) {
        fprintf(stderr, "bench_sched: delta step %.17g, full %.17g\n",
                sim.step_seconds, ref.step_seconds);
        return 1;
    }
    delta_med = median(deltas, nd);
    tl_med = median(timelines, nd);
    printf("| %s | %d | %d | %.3f | %.3f | %.2f / %.2f | %.2f / %.2f | "
           "%.3f | %.1fx | %.3f | %s | %s |\n",
           model, ndev, sim.ntask, t_lower, t_build, full_best * 1e3,
           full_med * 1e3, ck_best * 1e3, ck_med * 1e3, delta_med * 1e3,
           delta_med > 0 ? full_med / delta_med : 0.0, tl_med * 1e3,
           ndev == 64 ? (full_med < 0.020 ? "met" : "**missed**") : "-",
           ndev == 64 ? (full_med >= 10 * delta_med ? "met" : "**missed**")
                      : "-");
    free(changed);
    free(secs);
    kt_sim_free(&sim);
    kt_sim_free(&ref);
    kt_program_free(&prog);
    kt_plan_free(&p);
    kt_graph_destroy(g);
    return 0;
}

/* MCMC proposals (FlexFlow 6) priced two ways on the same plans: lowered,
   built and simulated from scratch (what kt_plan_mcmc did before), and
   by the incremental task graph with delta simulation (kt_plan_sim, what
   it does now; an accepted proposal's time includes kt_plan_sim_accept,
   which copies in the per-op task structs of the ops it rebuilt).  A proposal gives a
   random op a random configuration or a random tensor a random tiling, as
   kt_plan_mcmc's do; a third are accepted.  Both must give the same step
   time (checked). */
static int bench_proposals(const char *model, int ndev, const char *topo,
                           int scratch_runs, int inc_runs) {
    kt_graph *g = NULL;
    kt_error err;
    kt_factors f;
    kt_plan p, next;
    kt_topology t;
    kt_search_options so;
    kt_plan_sim ps;
    double t0, t_init, scratch[8], inc[400], kept = 0, ntask = 0;
    int ntask0;
    int i, n = scratch_runs > inc_runs ? scratch_runs : inc_runs;
    uint64_t rng = 99;
    memset(&so, 0, sizeof so);
    if (scratch_runs > 8) scratch_runs = 8;
    if (n > 400) n = inc_runs = 400;
    if (kt_zoo_build(model, &g, &err) != KT_OK) return die(model, &err);
    if (kt_factors_default(ndev, &f, &err) != KT_OK) return die("factors", &err);
    if (kt_topology_parse(topo, &t, &err) != KT_OK) return die(topo, &err);
    so.strategy = KT_STRATEGY_DP;
    if (kt_plan_search(g, &f, &so, &p, &err) != KT_OK) return die("plan", &err);
    t0 = cpu_now();
    if (kt_plan_sim_init(g, &p, &t, &ps, &err) != KT_OK)
        return die("plan sim", &err);
    t_init = cpu_now() - t0;
    ntask0 = ps.current->ntask;
    if (kt__plan_copy(&next, &p, g, &err) != KT_OK) return die("copy", &err);
    for (i = 0; i < n;) { /* i: proposals priced so far */
        if (!kt__mcmc_propose(g, ps.plan, &next, &rng)) continue;
        t0 = cpu_now();
        if (kt_plan_sim_propose(&ps, &next, &err) != KT_OK)
            return die("propose", &err);
        if (i < inc_runs) inc[i] = cpu_now() - t0;
        kept += ps.kept;
        ntask += ps.proposed->ntask;
        if (i < scratch_runs) {
            kt_program prog;
            kt_sim sim;
            t0 = cpu_now();
            if (kt_lower_on(g, &next, &t, &prog, &err) != KT_OK ||
                kt_sim_build(g, &next, &prog, &t, &sim, &err) != KT_OK ||
                kt_sim_run(&sim, &err) != KT_OK)
                return die("from scratch", &err);
            scratch[i] = cpu_now() - t0;
            if (sim.step_seconds != ps.proposed->step_seconds) {
                fprintf(stderr, "bench_sched: proposal %d: incremental %.17g "
                        "s, from scratch %.17g s\n", i,
                        ps.proposed->step_seconds, sim.step_seconds);
                return 1;
            }
            kt_sim_free(&sim);
            kt_program_free(&prog);
        }
        if (kt__rng(&rng) % 3 == 0) {
            /* accepting writes the timeline into the task structs (a pass
               kt_plan_sim_propose leaves out): counted with the proposal */
            t0 = cpu_now();
            kt_plan_sim_accept(&ps);
            if (i < inc_runs) inc[i] += cpu_now() - t0;
        }
        i++;
    }
    {
        double ms = median(scratch, scratch_runs), mi = median(inc, inc_runs);
        printf("| %s | %d | %d | %.3f | %.1f (%d) | %.2f (%d) | %.1fx | %.1f "
               "| %.1f%% |\n", model, ndev, ntask0, t_init,
               ms * 1e3, scratch_runs, mi * 1e3, inc_runs, ms / mi, 1.0 / mi,
               100.0 * kept / ntask);
    }
    kt_plan_sim_free(&ps);
    kt_plan_free(&next);
    kt_plan_free(&p);
    kt_graph_destroy(g);
    return 0;
}

/* One MCMC chain as kt_plan_mcmc runs it (from data parallelism, the DP
   plan where it does not apply; its proposals and its Metropolis rule
   with the default beta, kt__mcmc_default_beta), timing only what each
   proposal costs the chain -- kt_plan_sim_propose, and
   kt_plan_sim_accept when accepted -- not the chain's start: the rate
   the MCMC target is about.  Accepts cost time too: on wresnet-152 (beta
   41,240) a move 0.0025% slower is taken one time in e. */
static int bench_chain(const char *model, int ndev, const char *topo,
                       int proposals) {
    kt_graph *g = NULL;
    kt_error err;
    kt_factors f;
    kt_plan p, next;
    kt_topology t;
    kt_search_options so;
    kt_plan_sim ps;
    double t0, spent = 0, cur;
    int i, accepted = 0;
    uint64_t rng = 1;
    memset(&so, 0, sizeof so);
    if (kt_zoo_build(model, &g, &err) != KT_OK) return die(model, &err);
    if (kt_factors_default(ndev, &f, &err) != KT_OK) return die("factors", &err);
    if (kt_topology_parse(topo, &t, &err) != KT_OK) return die(topo, &err);
    so.strategy = KT_STRATEGY_DATA;
    if (kt_plan_search(g, &f, &so, &p, &err) != KT_OK) {
        so.strategy = KT_STRATEGY_DP;
        if (kt_plan_search(g, &f, &so, &p, &err) != KT_OK)
            return die("plan", &err);
    }
    if (kt_plan_sim_init(g, &p, &t, &ps, &err) != KT_OK)
        return die("plan sim", &err);
    if (kt__plan_copy(&next, &p, g, &err) != KT_OK) return die("copy", &err);
    cur = ps.current->step_seconds;
    for (i = 0; i < proposals;) {
        double nt;
        if (!kt__mcmc_propose(g, ps.plan, &next, &rng)) continue;
        t0 = cpu_now();
        if (kt_plan_sim_propose(&ps, &next, &err) != KT_OK)
            return die("propose", &err);
        nt = ps.proposed->step_seconds;
        if (kt__mcmc_accepts(cur, nt, kt__mcmc_default_beta(g), &rng)) {
            kt_plan_sim_accept(&ps);
            cur = nt;
            accepted++;
        }
        spent += cpu_now() - t0;
        i++;
    }
    printf("| %s | %d | %d | %.1f%% | %.2f | %.1f |\n", model, ndev,
           proposals, 100.0 * accepted / proposals, spent / proposals * 1e3,
           spent > 0 ? proposals / spent : 0.0);
    kt_plan_sim_free(&ps);
    kt_plan_free(&next);
    kt_plan_free(&p);
    kt_graph_destroy(g);
    return 0;
}

/* Simulated step time of plan p on t. */
static int sim_time(const kt_graph *g, const kt_plan *p, const kt_topology *t,
                    double *seconds) {
    kt_program prog;
    kt_sim sim;
    kt_error err;
    if (kt_lower_on(g, p, t, &prog, &err) != KT_OK) return die("lower", &err);
    if (kt_sim_build(g, p, &prog, t, &sim, &err) != KT_OK ||
        kt_sim_run(&sim, &err) != KT_OK) {
        kt_program_free(&prog);
        return die("sim", &err);
    }
    *seconds = sim.step_seconds;
    kt_sim_free(&sim);
    kt_program_free(&prog);
    return 0;
}

/* MCMC (FlexFlow 6) against the level DP under the simulator: both plans
   simulated on the same topology; MCMC's budget in proposals (so the
   table is the same on every machine), its rate measured. */
static int compare_mcmc(const char *model, int ndev, const char *topo,
                        int64_t proposals) {
    kt_graph *g = NULL;
    kt_error err;
    kt_factors f;
    kt_topology t;
    kt_machine m;
    kt_plan dp, dpt, data, mc, mc2;
    kt_search_options so;
    kt_mcmc_options mo;
    kt_mcmc_result r_mc, r_mc2;
    double t_dp, t_dpt, t_data, t0, secs;
    memset(&so, 0, sizeof so);
    memset(&mo, 0, sizeof mo);
    if (kt_zoo_build(model, &g, &err) != KT_OK) return die(model, &err);
    if (kt_factors_default(ndev, &f, &err) != KT_OK) return die("factors", &err);
    if (kt_topology_parse(topo, &t, &err) != KT_OK) return die(topo, &err);
    m = kt_topology_machine(&t);
    so.machine = &m;
    so.strategy = KT_STRATEGY_DP;
    if (kt_plan_search(g, &f, &so, &dp, &err) != KT_OK) return die("dp", &err);
    so.objective = KT_OBJECTIVE_TIME;
    if (kt_plan_search(g, &f, &so, &dpt, &err) != KT_OK)
        return die("dp time", &err);
    so.objective = KT_OBJECTIVE_BYTES;
    so.strategy = KT_STRATEGY_DATA;
    if (kt_plan_search(g, &f, &so, &data, &err) != KT_OK) data.tiling = NULL;
    mo.proposals = proposals;
    mo.seed = 1;
    t0 = cpu_now();
    if (kt_plan_mcmc(g, &f, &t, &mo, &mc, &r_mc, &err) != KT_OK)
        return die("mcmc", &err);
    secs = cpu_now() - t0;
    mo.start = &dp;
    if (kt_plan_mcmc(g, &f, &t, &mo, &mc2, &r_mc2, &err) != KT_OK)
        return die("mcmc from dp", &err);
    if (sim_time(g, &dp, &t, &t_dp) || sim_time(g, &dpt, &t, &t_dpt) ||
        (data.tiling && sim_time(g, &data, &t, &t_data)))
        return 1;
    printf("| %s | %d | %.3g | %.3g | ", model, ndev, t_dp * 1e3,
           t_dpt * 1e3);
    if (data.tiling) printf("%.3g | ", t_data * 1e3);
    else printf("n/a | ");
    /* the proposals and rate are the first search's (from data
       parallelism), the one timed */
    printf("%.3g | %.2f | %.3g | %.3f | %lld | %.3g |\n",
           r_mc.step_seconds * 1e3, r_mc.step_seconds / t_dp,
           r_mc2.step_seconds * 1e3, r_mc2.step_seconds / t_dp,
           (long long)r_mc.tried,
           secs > 0 ? (double)r_mc.tried / secs : 0.0);
    kt_plan_free(&dp);
    kt_plan_free(&dpt);
    if (data.tiling) kt_plan_free(&data);
    kt_plan_free(&mc);
    kt_plan_free(&mc2);
    kt_graph_destroy(g);
    return 0;
}

int main(int argc, char **argv) {
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    const char *m = "wresnet:depth=152,widen=10,batch=8";
    printf("| model | devices | tasks | lower s | build s | full sim ms "
           "(best / median) | full sim with checkpoints ms (best / median) "
           "| delta sim ms (median) | full / delta | then kt_sim_timeline ms "
           "(median) | full < 20 ms | delta >= 10x |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    if (bench_one(m, 8, "flat:8:450G")) return 1;
    if (!quick && bench_one(m, 64, "nodes:8x8:450G:400Gb")) return 1;
    printf("\n| model | devices | tasks | init s | from scratch: ms per "
           "proposal (n) | incremental: ms per proposal (n) | ratio | "
           "proposals/s | timeline kept |\n|---|---|---|---|---|---|---|---|---|\n");
    if (bench_proposals("mlp:layers=4,hidden=1024,batch=64", 8,
                        "nodes:2x4:300G:25G", 8, 400) ||
        bench_proposals("rnn:layers=2,hidden=512,steps=4,batch=32", 8,
                        "nodes:2x4:300G:25G", 8, 400) ||
        bench_proposals(m, 8, "flat:8:450G", 8, 200))
        return 1;
    if (!quick && bench_proposals(m, 64, "nodes:8x8:450G:400Gb", 4, 40))
        return 1;
    printf("\n| MCMC chain (from data parallelism, default beta) | devices | "
           "proposals | accepted | ms per proposal (propose + accept) | "
           "proposals/s |\n|---|---|---|---|---|---|\n");
    if (bench_chain(m, 8, "flat:8:450G", 400) ||
        (!quick && bench_chain(m, 64, "nodes:8x8:450G:400Gb", 60)))
        return 1;
    printf("\n| model | devices | DP bytes: step ms | DP time: step ms | "
           "data: step ms | MCMC: step ms | MCMC / DP | MCMC from DP: step ms "
           "| ratio to DP | proposals | proposals/s |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|\n");
    if (compare_mcmc("mlp:layers=4,hidden=1024,batch=64", 8,
                     "nodes:2x4:300G:25G", 2000) ||
        compare_mcmc("transformer:layers=1,dmodel=256,heads=8,ffn=1024,"
                     "seq=64,batch=8", 8, "nodes:2x4:300G:25G", 1000) ||
        compare_mcmc("rnn:layers=2,hidden=512,steps=4,batch=32", 8,
                     "nodes:2x4:300G:25G", 500) ||
        compare_mcmc("alexnet:batch=32", 8, "nodes:2x4:300G:25G", 300) ||
        compare_mcmc("wresnet:depth=50,widen=2,batch=32", 8,
                     "nodes:2x4:300G:25G", 2000) ||
        compare_mcmc(m, quick ? 8 : 64, quick ? "flat:8:450G"
                                            : "nodes:8x8:450G:400Gb", 4))
        return 1;
    return 0;
}
