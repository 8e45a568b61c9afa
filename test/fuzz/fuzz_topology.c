/* fuzz_topology.c -- libFuzzer harness for kt_topology_parse (specs such
   as flat:8:450G) and kt_topology_parse_text (topology files): the first
   input byte picks the parser, the rest is the text.  On KT_OK the
   topology is usable: levels and devices in range, the fan-outs' product
   is ndev, finite positive bandwidths and rooflines, and the kind map
   covers devices 0 .. ndev-1 exactly once, in order. */
#define KT_IMPLEMENTATION
#include "../../sched.h"
#include "fuzz_common.h"

static void check_topology(const kt_topology *t) {
    int64_t n = 1, next = 0;
    int l, r;
    kt_machine m;
    FUZZ_REQUIRE(t->nlevels >= 1 && t->nlevels <= KT_MAX_CUTS);
    for (l = 0; l < t->nlevels; l++) {
        FUZZ_REQUIRE(t->fanout[l] >= 1);
        FUZZ_REQUIRE(fuzz_finite_positive(t->bandwidth[l]));
        FUZZ_REQUIRE(t->latency[l] >= 0 && isfinite(t->latency[l]));
        n *= t->fanout[l];
        FUZZ_REQUIRE(n <= KT_MAX_DEVICES);
    }
    FUZZ_REQUIRE(t->ndev == n && t->ndev > 0);
    FUZZ_REQUIRE(t->nkinds >= 1 && t->nkinds <= KT_MAX_DEVICE_KINDS);
    for (r = 0; r < t->nkinds; r++) {
        FUZZ_REQUIRE(fuzz_finite_positive(t->kind[r].peak_flops));
        FUZZ_REQUIRE(fuzz_finite_positive(t->kind[r].mem_bw));
        FUZZ_REQUIRE(memchr(t->kind[r].name, '\0', KT_KIND_NAME_MAX));
        FUZZ_REQUIRE(kt_topology_find_kind(t, t->kind[r].name) == r);
    }
    FUZZ_REQUIRE(t->nkind_ranges >= 1 &&
                 t->nkind_ranges <= KT_MAX_KIND_RANGES);
    for (r = 0; r < t->nkind_ranges; r++) {
        const kt_kind_range *k = &t->kind_range[r];
        FUZZ_REQUIRE(k->devices.lo == next && k->devices.hi > k->devices.lo);
        FUZZ_REQUIRE(k->kind >= 0 && k->kind < t->nkinds);
        next = k->devices.hi;
    }
    FUZZ_REQUIRE(next == t->ndev);
    FUZZ_REQUIRE(kt_topology_device_kind(t, 0) >= 0);
    FUZZ_REQUIRE(kt_topology_device_kind(t, t->ndev - 1) < t->nkinds);
    FUZZ_REQUIRE(kt_topology_level(t, 0, t->ndev - 1) < t->nlevels);
    m = kt_topology_machine(t);
    FUZZ_REQUIRE(m.nlevels == t->nlevels);
    FUZZ_REQUIRE(fuzz_finite_positive(m.peak_flops));
    FUZZ_REQUIRE(fuzz_finite_positive(m.mem_bw));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    kt_topology t;
    kt_error err;
    kt_status s;
    char *text;
    if (size < 1) return 0;
    text = fuzz_cstr(data + 1, size - 1);
    memset(&err, 0x55, sizeof err); /* no stale message passes for one */
    if (data[0] & 1) s = kt_topology_parse_text(text, "fuzz.topo", &t, &err);
    else s = kt_topology_parse(text, &t, &err);
    fuzz_check_status(s, &err);
    if (s == KT_OK) check_topology(&t);
    free(text);
    return 0;
}
