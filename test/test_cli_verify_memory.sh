#!/bin/sh
# test_cli_verify_memory.sh -- `ktile verify --memory SIZE`: the step is
# swap-planned (swap.h) and run by backend_cpu.h with every device's memory
# one arena of SIZE bytes.  Checked: the contract's keys first, then the
# swap figures; values agree with the serial run; the bytes swapped are the
# plan's (on every device, and alone exactly plan_swapped_bytes); the
# objects in use never exceed SIZE and their peak is the plan's; at the
# smallest memory that works something is swapped; a memory below it is
# bad input (exit 2) naming that smallest memory, and the named size runs;
# alone and on 2 and 4 devices, GA and no search, steady and cold.
#
# Needs python3 (json).  Environment: KTILE (default build/ktile), KT_WRAP
# (a command put in front of every ktile run, e.g. valgrind).  Ends with
# "N passed, M failed".

. "$(dirname "$0")/cli_lib.sh"
cli_setup verify_memory
require_ktile
require_python

M=mlp:layers=3,hidden=32,batch=12
T=transformer:layers=1,dmodel=16,heads=2,ffn=32,seq=4,batch=4
R=rnn:layers=2,hidden=8,steps=3,batch=8

# A result of `verify --memory --json` (argv[2]: the capacity, argv[3]:
# the devices, argv[4]: 1 when something must be swapped).
SWAP_OK='import json, sys
d = json.load(open(sys.argv[1]))
cap, ndev, must_swap = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
keys = list(d)
assert keys[:4] == ["ok", "max_rel_error", "bytes_moved",
                    "predicted_bytes"], keys
for k in ("capacity", "pool_bytes", "search", "swap_ok", "swapped_in_bytes",
          "swapped_out_bytes", "planned_in_bytes", "planned_out_bytes",
          "plan_swapped_bytes", "peak_arena_bytes", "plan_peak_bytes",
          "step_seconds", "swap_devices"):
    assert k in d, k
assert d["ok"] is True and d["values_ok"] is True and d["swap_ok"] is True, d
assert d["bytes_moved"] == d["predicted_bytes"], d
assert d["devices"] == ndev and len(d["swap_devices"]) == ndev, d
assert d["capacity"] == cap, d
assert d["pool_bytes"] <= cap, d
assert d["peak_arena_bytes"] == d["plan_peak_bytes"] <= cap, d
assert d["swapped_in_bytes"] == d["planned_in_bytes"], d
assert d["swapped_out_bytes"] == d["planned_out_bytes"], d
for x in d["swap_devices"]:
    assert x["in_bytes"] == x["planned_in_bytes"], x
    assert x["out_bytes"] == x["planned_out_bytes"], x
    assert x["peak_bytes"] <= cap and x["high_water"] <= cap, x
    assert x["in_bytes"] + x["out_bytes"] <= d["plan_swapped_bytes"], x
if ndev == 1:
    assert (d["swapped_in_bytes"] + d["swapped_out_bytes"] ==
            d["plan_swapped_bytes"]), d
if must_swap:
    assert d["swapped_in_bytes"] > 0, d
assert d["compared"] > 0 and d["mismatches"] == 0, d'

# The smallest memory that works, from the message of a run below it.
smallest() {
    sed -n 's/.*the smallest memory that runs it is \([0-9][0-9]*\) bytes.*/\1/p' "$err"
}

# --memory 1K is too small for all of them: exit 2, the message names the
# smallest memory; at that memory the step runs and swaps.
for spec in "$M" "$T" "$R"; do
    for n in 1 2 4; do
        if [ -n "${KT_WRAP:-}" ] && [ "$spec" != "$M" ] && [ "$n" -ne 2 ]; then
            continue # valgrind: fewer runs
        fi
        expect_bad_msg 'the smallest memory that runs it is' \
            verify --model "$spec" --devices $n --memory 1K
        least=$(smallest)
        if [ -z "$least" ]; then
            fail=$((fail + 1))
            echo "FAIL: no smallest memory named for $spec on $n devices"
            continue
        fi
        expect_json "$dir/v.json" verify --model "$spec" --devices $n \
            --memory "$least" --generations 2 --json &&
            check "$spec on $n devices at the smallest memory $least" \
                "$SWAP_OK" "$dir/v.json" "$least" $n 1
        # a little more memory, no search, cold
        more=$((least + least / 8))
        expect_json "$dir/w.json" verify --model "$spec" --devices $n \
            --memory "$more" --search none --cold --json &&
            check "$spec on $n devices, $more bytes, cold, no search" \
                "$SWAP_OK" "$dir/w.json" "$more" $n 0
    done
done

# Alone is the default with --memory; everything fits in a large memory
# and nothing is swapped then.
expect_json "$dir/a.json" verify --model "$M" --memory 1M --json &&
    check "alone by default, 1M: nothing swapped" "$SWAP_OK
assert d['swapped_in_bytes'] == 0 and d['plan_swapped_bytes'] == 0, d" \
        "$dir/a.json" 1048576 1 0

# A GPU-sized memory costs no more host memory than the pool: 80G (more
# than this machine has) runs, nothing swapped.
expect_json "$dir/g.json" verify --model "$M" --devices 2 --memory 80G \
    --search none --json &&
    check "80G per device: runs, nothing swapped" "$SWAP_OK
assert d['swapped_in_bytes'] == 0 and d['plan_swapped_bytes'] == 0, d" \
        "$dir/g.json" 85899345920 2 0

# A plan file (the model-parallel plan) runs under a cap too.
if expect_json "$dir/pm.json" plan --model "$M" --devices 4 --strategy model \
    --json; then
    expect_json "$dir/vpm.json" verify --model "$M" --plan "$dir/pm.json" \
        --memory 16K --search none --json &&
        check "--plan with --memory 16K" "$SWAP_OK" "$dir/vpm.json" 16384 4 0
fi

# The text report names the arena and the swaps.
expect_text 'one arena of 32.0 KiB per device' verify --model "$M" \
    --devices 2 --memory 32K --search none

# Bit-for-bit: exit 1 with ok false when sums land in another order,
# exit 0 with no error at all otherwise.
run verify --model "$T" --devices 4 --memory 64K --search none --tol 0 \
    --eps 0 --json
if [ "$rc" -eq 1 ]; then
    check "bit-for-bit mismatch reported" 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is False and d["mismatches"] > 0, d' "$out"
elif [ "$rc" -eq 0 ]; then
    check "bit-for-bit agreement" 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is True and d["max_rel_error"] == 0, d' "$out"
else
    bad verify --tol 0 --eps 0
fi

# Bad input.
expect_bad_msg "memory 'abc'" verify --model "$M" --memory abc
expect_bad_msg "memory '0'" verify --model "$M" --memory 0
expect_bad_msg 'pool plans' verify --model "$M" --memory 1M --search odswap
expect_bad_msg 'generations' verify --model "$M" --memory 1M --generations 0
expect_bad_msg 'verify: --generations goes with --search ga, not none' \
    verify --model "$M" --memory 1M --search none --generations 3
expect_bad_msg 'go with --memory' verify --model "$M" --devices 2 --cold
expect_text 'ONE arena' help verify

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
