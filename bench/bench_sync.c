/* bench_sync.c -- what wait-free backprop and bucket merging buy for data
   parallelism, by sched.h's gradient-sync model (Zhang thesis 3.2, 7.6.3,
   Eq. 8.3).  These are model outputs, not measurements of training.

   For each zoo model, data parallelism (KT_STRATEGY_DATA) on 8 and 64
   devices, on nodes of 4 and 8 GPUs (intra-node links 450 GB/s, 1 us; a
   network of 400 Gb/s or 25 Gb/s per GPU, 5 us), with the default device
   roofline (kt_machine_default) for the backward compute, each backward
   op timed as its forward op (backward_as_forward: the roofline of
   wresnet's transposed strided convolutions counts zero-padded points and
   would make its backward 115x its forward):
     kt_sync_layers_from_plan  the replicated weights' gradients, each a
                               ring all-reduce over all devices (Eq. 8.3,
                               phi = the slowest hop's latency, delta =
                               10 us per collective), in backward order;
     traditional               every all-reduce after the backward;
     WFBP                      each all-reduce when its gradient exists;
     best cap                  the best of buckets capped at 1, 4, 16, 25,
                               64, 256 MB or unbounded (greedy, in backward
                               order);
     DP                        the best contiguous partition (exact).
   Batches grow with the devices (weak scaling): per device 32 samples
   (mlp, alexnet), 8 (vgg16), 2 (wresnet-50, a small batch).  Times are the
   backward + sync of one iteration in ms; the ratios are traditional /
   WFBP, WFBP / best cap and WFBP / DP (> 1: the second is faster).  The
   last column is the CPU time of building the layers and all the
   schedules of the row.

   Exits 1 when the library fails, 0 otherwise. */
#define KT_IMPLEMENTATION
#include "../sched.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

typedef struct model {
    const char *name, *spec; /* spec takes the batch */
    int per_device;
} model;

static const model models[] = {
    {"mlp", "mlp:layers=5,hidden=4096,batch=%d", 32},
    {"alexnet", "alexnet:batch=%d", 32},
    {"vgg16", "vgg16:batch=%d", 8},
    {"wresnet-50", "wresnet:depth=50,widen=4,batch=%d", 2},
};

static const double caps[] = {1e6, 4e6, 16e6, 25e6, 64e6, 256e6, INFINITY};
#define NCAPS ((int)(sizeof caps / sizeof caps[0]))

static double cpu_now(void) { return (double)clock() / CLOCKS_PER_SEC; }

static int row(const model *m, int devices, const char *net) {
    char spec[128], topo[128], capname[32];
    kt_graph *g = NULL;
    kt_plan p;
    kt_factors f;
    kt_topology t;
    kt_search_options so;
    kt_sync_plan_options o;
    kt_sync_layer *ls = NULL;
    kt_sync_schedule trad, wfbp, best, dp;
    kt_error err;
    double cap = 0, bytes = 0, cpu;
    int n = 0, i, sent = 0, gpus = devices == 8 ? 4 : 8;
    snprintf(spec, sizeof spec, m->spec, m->per_device * devices);
    snprintf(topo, sizeof topo, "nodes:%dx%d:450G:%s", devices / gpus, gpus,
             net);
    memset(&so, 0, sizeof so);
    so.strategy = KT_STRATEGY_DATA;
    memset(&o, 0, sizeof o);
    o.method = KT_SYNC_ALLREDUCE;
    o.delta = 10e-6;
    o.backward_as_forward = 1;
    if (kt_zoo_build(spec, &g, &err) != KT_OK ||
        kt_factors_default(devices, &f, &err) != KT_OK ||
        kt_topology_parse(topo, &t, &err) != KT_OK ||
        kt_plan_search(g, &f, &so, &p, &err) != KT_OK) {
        fprintf(stderr, "%s on %d: %s\n", spec, devices, err.message);
        kt_graph_destroy(g);
        return 1;
    }
    cpu = cpu_now();
    if (kt_sync_layers_from_plan(g, &p, &t, &o, &ls, &n, &err) != KT_OK ||
        kt_sync_schedule_run(ls, n, KT_SYNC_TRADITIONAL, 0, &trad, &err) ||
        kt_sync_schedule_run(ls, n, KT_SYNC_WFBP, 0, &wfbp, &err) ||
        kt_sync_best_bucket(ls, n, caps, NCAPS, &cap, &best, &err) ||
        kt_sync_schedule_run(ls, n, KT_SYNC_BUCKET_OPTIMAL, 0, &dp, &err)) {
        fprintf(stderr, "%s on %s: %s\n", spec, topo, err.message);
        kt_plan_free(&p);
        kt_graph_destroy(g);
        KT_FREE(ls);
        return 1;
    }
    cpu = cpu_now() - cpu;
    for (i = 0; i < n; i++)
        if (ls[i].bytes > 0) {
            sent++;
            bytes += ls[i].bytes;
        }
    if (cap == INFINITY) snprintf(capname, sizeof capname, "all");
    else snprintf(capname, sizeof capname, "%.0f MB", cap / 1e6);
    printf("| %-10s | %2d | %-24s | %3d | %7.1f | %7.2f | %8.2f | %8.2f | "
           "%6s %8.2f | %8.2f (%2d) | %5.2f | %5.2f | %5.2f | %6.1f |\n",
           m->name, devices, topo, sent, bytes / 1e6,
           1e3 * wfbp.backward_seconds, 1e3 * trad.total_seconds,
           1e3 * wfbp.total_seconds, capname, 1e3 * best.total_seconds,
           1e3 * dp.total_seconds, dp.nbuckets,
           trad.total_seconds / wfbp.total_seconds,
           wfbp.total_seconds / best.total_seconds,
           wfbp.total_seconds / dp.total_seconds, 1e3 * cpu);
    kt_sync_schedule_free(&trad);
    kt_sync_schedule_free(&wfbp);
    kt_sync_schedule_free(&best);
    kt_sync_schedule_free(&dp);
    KT_FREE(ls);
    kt_plan_free(&p);
    kt_graph_destroy(g);
    return 0;
}

int main(void) {
    const char *nets[2] = {"400Gb", "25Gb"};
    int m, d, k, fail = 0;
    printf("Gradient sync of data parallelism (model outputs; ms per "
           "iteration, backward + sync)\n\n");
    printf("| model | dev | topology | grads | MB | backward | traditional "
           "| WFBP | best cap | DP (buckets) | trad/WFBP | WFBP/cap | "
           "WFBP/DP | CPU ms |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | "
           "--- | --- | --- | --- |\n");
    for (k = 0; k < 2; k++)
        for (m = 0; m < (int)(sizeof models / sizeof models[0]); m++)
            for (d = 8; d <= 64; d *= 8) fail |= row(&models[m], d, nets[k]);
    return fail;
}
