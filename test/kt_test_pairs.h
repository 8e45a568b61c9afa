/* kt_test_pairs.h -- the CPU backend's executed per-pair counts
   (kt_cpu_devices.pairs, what each receiver copied) against the lowered
   program's (kt_program_count_pairs, from the transfers' own bytes),
   included after "../backend_cpu.h" and "kt_test.h".  A stronger check
   than the totals verify compares: a transfer done twice and another
   skipped can keep the total. */
#ifndef KT_TEST_PAIRS_H
#define KT_TEST_PAIRS_H

/* 1 when dev's pairs are prog's, pair by pair and in order, adding up to
   dev->bytes_moved; else a failed check naming the first difference. */
static int kt_test_pairs_match(const char *what, const kt_cpu_devices *dev,
                               kt_program *prog) {
    kt_error err;
    int64_t i, total = 0;
    if (kt_program_count_pairs(prog, &err) != KT_OK) {
        CHECKF(0, "%s: %s", what, err.message);
        return 0;
    }
    for (i = 0; i < dev->npairs && i < prog->npairs; i++) {
        const kt_pair_bytes *a = &dev->pairs[i], *b = &prog->pairs[i];
        if (a->src != b->src || a->dst != b->dst || a->bytes != b->bytes) {
            CHECKF(0, "%s: pair %lld executed %lld -> %lld, %lld bytes; the "
                   "program has %lld -> %lld, %lld bytes", what, (long long)i,
                   (long long)a->src, (long long)a->dst, (long long)a->bytes,
                   (long long)b->src, (long long)b->dst, (long long)b->bytes);
            return 0;
        }
        if (kt_pair_bytes_lookup(dev->pairs, dev->npairs, a->src, a->dst) !=
            a->bytes) {
            CHECKF(0, "%s: kt_pair_bytes_lookup misses pair %lld", what,
                   (long long)i);
            return 0;
        }
        total += a->bytes;
    }
    CHECKF(dev->npairs == prog->npairs && total == dev->bytes_moved &&
               total == prog->total_bytes,
           "%s: %lld pairs executed (%lld bytes moved), the program has %lld "
           "(%lld bytes)", what, (long long)dev->npairs,
           (long long)dev->bytes_moved, (long long)prog->npairs,
           (long long)prog->total_bytes);
    return dev->npairs == prog->npairs && total == dev->bytes_moved &&
           total == prog->total_bytes;
}

/* 1 when two partitioned runs of one program left the same boxes and
   tiles, bit for bit (the NaN fill included), and received the same bytes
   from the same devices: what any worker-thread count must give. */
static int kt_test_same_devices(const kt_graph *g, const kt_cpu_devices *a,
                                const kt_cpu_devices *b) {
    int64_t i;
    if (a->ndev != b->ndev || a->ntensors != b->ntensors ||
        a->npairs != b->npairs || a->bytes_moved != b->bytes_moved ||
        memcmp(a->pairs, b->pairs, sizeof *a->pairs * (size_t)a->npairs))
        return 0;
    for (i = 0; i < a->ndev * a->ntensors; i++) {
        const kt_tensor *x = kt_graph_tensor(g, (int)(i % a->ntensors));
        int64_t n = kt__box_numel(&a->box[i], x->rank);
        if (memcmp(&a->box[i], &b->box[i], sizeof a->box[i]) ||
            (n > 0 &&
             memcmp(a->tile[i], b->tile[i], sizeof(kt_real) * (size_t)n)))
            return 0;
    }
    return 1;
}

#endif
