/* test_include.c -- DESIGN.md "Include hazard": a program that includes
   <pthread.h> (which includes the POSIX <sched.h>) and then every ktile
   header the documented way, by relative path, builds and runs.  Were the
   repository root on the include path, ktile's sched.h would be taken for
   the system one and this file would not compile (sched_yield below).

   It also runs the library from several threads at once: there are no
   hidden globals, so every thread must get the same answers. */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#define KT_IMPLEMENTATION
/* Every ktile header, in dependency order; add each new one here. */
#include "../tiling.h"
#include "../sched.h"
#include "../swap.h"
#include "../backend_cpu.h"

#include "kt_test.h"

#define NTHREADS 4

typedef struct result {
    kt_status st_factors, st_parse, st_cost, st_partial, st_bad;
    kt_factors f12;
    int64_t cost_split, cost_partial;
    int64_t received[4];
    char bad_message[512];
} result;

static void *work(void *arg) {
    result *r = (result *)arg;
    kt_error err;
    kt_factors f;
    kt_tiling from, to, bad;
    int64_t shape[2] = {8, 6}, square[2] = {4, 4};
    int i;

    memset(r, 0, sizeof *r);
    r->st_factors = kt_factors_default(12, &r->f12, &err);
    r->st_parse = kt_factors_parse("2,2", &f, &err);
    if (r->st_parse == KT_OK) r->st_parse = kt_tiling_parse("S0.S1", &from, &err);
    if (r->st_parse == KT_OK) r->st_parse = kt_tiling_parse("R.S0", &to, &err);
    sched_yield(); /* the POSIX one: proves <sched.h> was not shadowed */
    for (i = 0; i < 50 && r->st_parse == KT_OK; i++)
        r->st_cost = kt_tiling_conversion_cost(2, shape, 4, &f, &from, &to,
                                               &r->cost_split, r->received,
                                               &err);
    {   /* P -> R over 2 devices: an all-reduce, 2(k-1)S */
        kt_factors two;
        kt_tiling p, rep;
        kt_factors_parse("2", &two, &err);
        kt_tiling_parse("P", &p, &err);
        kt_tiling_parse("R", &rep, &err);
        r->st_partial = kt_tiling_conversion_cost(2, square, 4, &two, &p, &rep,
                                                  &r->cost_partial, NULL, &err);
    }
    r->st_bad = kt_tiling_parse("S0,S1", &bad, &err);
    memcpy(r->bad_message, err.message, sizeof r->bad_message);
    return NULL;
}

int main(void) {
    pthread_t th[NTHREADS];
    result res[NTHREADS];
    int i, started[NTHREADS];

    for (i = 0; i < NTHREADS; i++) {
        started[i] = pthread_create(&th[i], NULL, work, &res[i]) == 0;
        CHECK(started[i]);
    }
    for (i = 0; i < NTHREADS; i++)
        if (started[i]) pthread_join(th[i], NULL);

    for (i = 0; i < NTHREADS; i++) {
        if (!started[i]) continue;
        CHECK(res[i].st_factors == KT_OK);
        /* Prime factors, largest first (Tofu 5.2). */
        CHECK_EQ_I64(res[i].f12.count, 3);
        CHECK_EQ_I64(res[i].f12.k[0], 3);
        CHECK_EQ_I64(res[i].f12.k[1], 2);
        CHECK_EQ_I64(res[i].f12.k[2], 2);
        CHECK(res[i].st_parse == KT_OK);
        CHECK(res[i].st_cost == KT_OK);
        /* 8x6 float32, S0.S1 -> R.S0 on 2x2 devices: devices 0 and 3 lack
           12 elements each, devices 1 and 2 all 24 of their rows: 72
           elements, 288 bytes. */
        CHECK_EQ_I64(res[i].cost_split, 288);
        CHECK_EQ_I64(res[i].received[0], 48);
        CHECK_EQ_I64(res[i].received[1], 96);
        CHECK_EQ_I64(res[i].received[2], 96);
        CHECK_EQ_I64(res[i].received[3], 48);
        CHECK(res[i].st_partial == KT_OK);
        CHECK_EQ_I64(res[i].cost_partial, 128);
        CHECK(res[i].st_bad == KT_ERR_INVALID);
        CHECKF(strstr(res[i].bad_message, "S0,S1") != NULL, "message '%s'",
               res[i].bad_message);
    }
    /* sched.h links too: Zhang thesis Table 3.4's parameter-server figure */
    CHECK(kt_sync_ps_worker(4096, 4096) == 33554432.0);
    {   /* swap.h links too: thesis 4.4.3's CLS repair */
        int cls[3] = {0, 2, 0};
        kt_swap_cls_repair(cls, 3);
        CHECK(cls[1] == 1 && cls[2] == 1);
    }
    {   /* backend_cpu.h links too: [1 2; 3 4] * [5 6; 7 8] */
        kt_acc a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4] = {0, 0, 0, 0};
        kt_cpu_gemm(2, 2, 2, a, b, c);
        CHECK(c[0] == 19 && c[1] == 22 && c[2] == 43 && c[3] == 50);
    }
    return KT_TEST_SUMMARY();
}
