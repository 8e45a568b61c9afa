/* test_include_cpp.cpp -- the headers compile as C++ (DESIGN.md
   "Conventions"), implementation included, next to <pthread.h>; and the
   C++ build computes the same costs as the C one. */
#include <pthread.h>

#define KT_IMPLEMENTATION
/* Every ktile header, in dependency order; add each new one here. */
#include "../tiling.h"
#include "../sched.h"
#include "../swap.h"
#include "../backend_cpu.h"

#include "kt_test.h"

#include <cstring>

struct job {
    kt_status status;
    int64_t bytes;
};

extern "C" void *cost_in_thread(void *arg) {
    job *j = static_cast<job *>(arg);
    kt_error err;
    kt_factors f;
    kt_tiling from, to;
    const int64_t shape[2] = {8, 6};
    j->status = kt_factors_parse("2,2", &f, &err);
    if (j->status == KT_OK) j->status = kt_tiling_parse("S0.S1", &from, &err);
    if (j->status == KT_OK) j->status = kt_tiling_parse("R.S0", &to, &err);
    if (j->status == KT_OK)
        j->status = kt_tiling_conversion_cost(2, shape, 4, &f, &from, &to,
                                              &j->bytes, NULL, &err);
    return NULL;
}

int main() {
    kt_error err;
    kt_factors f;
    kt_tiling p, r;
    const int64_t shape[2] = {4, 4};
    int64_t bytes = -1;
    job j = {KT_ERR_INTERNAL, -1};
    pthread_t th;

    CHECK(kt_factors_parse("2", &f, &err) == KT_OK);
    CHECK(kt_tiling_parse("P", &p, &err) == KT_OK);
    CHECK(kt_tiling_parse("R", &r, &err) == KT_OK);
    CHECK(kt_tiling_conversion_cost(2, shape, 4, &f, &p, &r, &bytes, NULL,
                                    &err) == KT_OK);
    CHECK_EQ_I64(bytes, 128); /* all-reduce: 2(k-1)S, S = 64 bytes */

    /* P is never a target: the error names it. */
    CHECK(kt_tiling_conversion_cost(2, shape, 4, &f, &r, &p, &bytes, NULL,
                                    &err) == KT_ERR_INVALID);
    CHECK(std::strstr(err.message, "P") != NULL);

    if (pthread_create(&th, NULL, cost_in_thread, &j) == 0) {
        pthread_join(th, NULL);
        CHECK(j.status == KT_OK);
        CHECK_EQ_I64(j.bytes, 288);
    } else {
        CHECKF(0, "pthread_create failed");
    }
    CHECK(kt_sync_sfb(4096, 4096, 32, 8) == 3670016.0);
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
