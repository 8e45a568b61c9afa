#!/bin/sh
# test_cli_swap.sh -- the `ktile swap` contract of DESIGN.md "The ktile
# command line": {"step_seconds", "ideal_seconds", "swapped_bytes",
# "peak_bytes", ...} on stdout, nothing on stderr on success; "ktile: ..."
# on stderr, nothing on stdout and exit status 2 on bad input.  With memory
# for everything every search equals the ideal and swaps nothing; with
# less, the step is never below the ideal, the peak stays within the
# memory, the same seed and generation budget print the same result, the
# GA is never worse than no search, a table of sizes prints null where
# nothing fits, and --devices swaps one device's share of a partitioned
# step.
#
# Environment: KTILE (default build/ktile), KT_WRAP (a command put in front
# of every ktile run, e.g. valgrind).  Ends with "N passed, M failed".

. "$(dirname "$0")/cli_lib.sh"
cli_setup swap
require_ktile
require_python

M=mlp:layers=4,hidden=512,batch=64
R=rnn:layers=2,hidden=256,steps=4,batch=8

KEYS_OK='import json, sys
d = json.load(open(sys.argv[1]))
keys = list(d)
assert keys[:4] == ["step_seconds", "ideal_seconds", "swapped_bytes",
                    "peak_bytes"], keys
assert d["step_seconds"] >= d["ideal_seconds"] * (1 - 1e-12), d
assert d["peak_bytes"] <= d["memory"], d
assert d["pool_bytes"] <= d["memory"], d'

IDEAL='import json, sys
d = json.load(open(sys.argv[1]))
assert abs(d["step_seconds"] - d["ideal_seconds"]) <= 1e-9 * d["ideal_seconds"], d
assert d["swapped_bytes"] == 0, d'

# enough memory: every search is the ideal
# (--generations only for the GA: the other searches refuse GA options)
for s in ga none odswap geeps; do
    gens=; [ $s = ga ] && gens="--generations 2"
    # shellcheck disable=SC2086
    expect_json "$dir/big-$s" swap --model "$M" --memory 1G --search $s \
        $gens --json
    check "$s with 1G: keys" "$KEYS_OK" "$dir/big-$s"
    check "$s with 1G: ideal, nothing swapped" "$IDEAL" "$dir/big-$s"
done

# too little for everything: a third of it
for s in ga none odswap geeps; do
    gens=; [ $s = ga ] && gens="--generations 3"
    # shellcheck disable=SC2086
    expect_json "$dir/small-$s" swap --model "$R" --memory 12M --search $s \
        $gens --json
    check "$s with 12M: keys" "$KEYS_OK" "$dir/small-$s"
done
check "the GA is never worse than no search" 'import json, sys
ga, none = (json.load(open(f)) for f in sys.argv[1:3])
assert ga["step_seconds"] <= none["step_seconds"] * (1 + 1e-12), (ga, none)
assert none["swapped_bytes"] > 0, none' "$dir/small-ga" "$dir/small-none"

# deterministic per seed and generation budget
expect_json "$dir/seed-a" swap --model "$R" --memory 12M --generations 3 \
    --seed 5 --json
expect_json "$dir/seed-b" swap --model "$R" --memory 12M --generations 3 \
    --seed 5 --json
if cmp -s "$dir/seed-a" "$dir/seed-b"; then ok; else
    fail=$((fail + 1)); echo "FAIL: the same seed printed different plans"; fi

# a table: null where nothing fits, steps fall as memory grows (no search)
expect_json "$dir/table" swap --model "$R" --memory 1K,12M,1G --search none \
    --json
check "table rows" 'import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert [r["memory"] for r in rows] == [1024, 12 << 20, 1 << 30], rows
assert rows[0]["step_seconds"] is None, rows[0]
# no plan, no figures: null, not 0
for k in ("swapped_bytes", "peak_bytes", "pool_bytes", "evaluations"):
    assert rows[0][k] is None, (k, rows[0])
    assert rows[2][k] is not None, (k, rows[2])
assert rows[1]["step_seconds"] >= rows[2]["step_seconds"], rows
assert rows[2]["swapped_bytes"] == 0, rows[2]' "$dir/table"
expect_text 'N/A' swap --model "$R" --memory 1K,1G --search none

# cold: one step from an empty device copies every parameter in
expect_json "$dir/cold" swap --model "$M" --memory 1G --search none --cold \
    --json
check "cold start swaps the parameters in" 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["swapped_bytes"] >= 4 * (512 * 512 * 3 + 512 * 10), d' "$dir/cold"

# partitioned first: one device's share is smaller, the step shorter
expect_json "$dir/one" swap --model "$M" --memory 1G --search none --json
expect_json "$dir/four" swap --model "$M" --devices 4 --memory 1G \
    --search none --json
check "--devices 4 swaps a quarter-size share" 'import json, sys
one, four = (json.load(open(f)) for f in sys.argv[1:3])
assert four["devices"] == 4 and one["devices"] == 1
assert four["ideal_seconds"] < one["ideal_seconds"], (one, four)
assert four["peak_bytes"] < one["peak_bytes"], (one, four)' \
    "$dir/one" "$dir/four"
expect_text 'step' swap --model "$M" --devices 2 --memory 2M --search ga \
    --generations 2

# bad input
expect_bad_msg 'missing --memory' swap --model "$M"
expect_bad_msg "nothing fits" swap --model "$M" --memory 1K --search none
expect_bad_msg "'12Q' is not a" swap --model "$M" --memory 12Q
expect_bad_msg "expected ga, none" swap --model "$M" --memory 1G --search x
expect_bad_msg "not both" swap --model "$M" --memory 1G --seconds 1 \
    --generations 2
expect_bad_msg "host-bw" swap --model "$M" --memory 1G --host-bw -3
# --host-bw reads bandwidths as topology specs do: 400Gb is 50G, and so
# are 400gbps and 50GB/s
expect_json "$dir/hb_bits.json" swap --model "$M" --memory 3M --search none \
    --host-bw 400Gb --json
expect_json "$dir/hb_bytes.json" swap --model "$M" --memory 3M --search none \
    --host-bw 50G --json
expect_json "$dir/hb_slow.json" swap --model "$M" --memory 3M --search none \
    --host-bw 5G --json
check "--host-bw 400Gb is 50G (and 5G is slower)" 'import json, sys
a, b, c = (open(p).read() for p in sys.argv[1:4])
assert a == b, (a, b)
assert json.loads(c)["step_seconds"] > json.loads(a)["step_seconds"], (a, c)' \
    "$dir/hb_bits.json" "$dir/hb_bytes.json" "$dir/hb_slow.json"
expect_json "$dir/hb_bits2.json" swap --model "$M" --memory 3M --search none \
    --host-bw 400gbps --json
expect_json "$dir/hb_bytes2.json" swap --model "$M" --memory 3M --search none \
    --host-bw 50GB/s --json
check "--host-bw 400gbps and 50GB/s are 50G" 'import sys
a, b, c = (open(p).read() for p in sys.argv[1:4])
assert a == b == c, (a, b, c)' \
    "$dir/hb_bytes.json" "$dir/hb_bits2.json" "$dir/hb_bytes2.json"
expect_bad_msg "host-bw '25q'" swap --model "$M" --memory 1G --host-bw 25q
# --recent: the planner's threshold on recent use (thesis 4.3.2), for the
# pool searches only; 0 is the default
expect_json "$dir/recent0.json" swap --model "$M" --memory 3M --search none \
    --recent 0 --json
check "--recent 0 is the default" 'import sys
a, b = (open(p).read() for p in sys.argv[1:3])
assert a == b, (a, b)' "$dir/hb_bytes.json" "$dir/recent0.json"
# ... and reaches the planner: on this RNN at 60K it changes the plan
RNN=rnn:layers=2,hidden=32,steps=3,batch=4
expect_json "$dir/recent_r0.json" swap --model "$RNN" --memory 60K \
    --search none --json
expect_json "$dir/recent_r3.json" swap --model "$RNN" --memory 60K \
    --search none --recent 3 --json
check "--recent 3 changes the RNN's plan" 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["swapped_bytes"] != b["swapped_bytes"], (a, b)' \
    "$dir/recent_r0.json" "$dir/recent_r3.json"
expect_bad_msg "--recent goes with --search ga or none, not odswap" swap \
    --model "$M" --memory 3M --search odswap --recent 1
expect_bad_msg "--recent '-1'" swap --model "$M" --memory 3M --recent -1
# below 1 byte/s the simulation's times overflow: refused as the option it
# is, not reported as the memory's fault
expect_bad_msg "host-bw '0.5'" swap --model "$M" --memory 64K --host-bw 0.5 \
    --generations 2
# too little memory names the least that runs the step
expect_bad_msg "least memory that runs this step is" swap --model "$M" \
    --memory 1K --search geeps
# a table where GeePS (double buffers) needs more than the least pool:
# null rows, exit 0 (a size between the two was once taken for an error)
if expect_json "$dir/geeps-table.json" swap \
    --model mlp:layers=5,hidden=300,batch=400 --search geeps \
    --memory 1M,2M,3M --json; then
    check "geeps table: null below its double buffer, a row above" '
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert [r["step_seconds"] is None for r in rows] == [True, True, False], rows
' "$dir/geeps-table.json"
fi
expect_bad_msg "devices" swap --model "$M" --memory 1G --devices 0
expect_bad_msg "missing --model" swap --memory 1G

# The GA's knobs.  A generation of N individuals prices N plans, each
# later one 2N children (crossover gives four per pair): population 4 over
# 3 generations prices 4 + 3 * 8 plans, when the GA does not reach the
# ideal first (12M is a third of the RNN's footprint).
expect_json "$dir/pop4" swap --model "$R" --memory 12M --generations 3 \
    --population 4 --json
check "--population 4: 28 plans priced" 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["step_seconds"] > d["ideal_seconds"], ("reached the ideal", d)
assert d["evaluations"] == 4 + 3 * 8, d' "$dir/pop4"
# the default pressure and mutation are 100 and 0.1: given, they change
# nothing; another pressure changes the search's course
expect_json "$dir/p-default" swap --model "$R" --memory 12M \
    --generations 6 --seed 3 --json
expect_json "$dir/p-100" swap --model "$R" --memory 12M --generations 6 \
    --seed 3 --pressure 100 --mutation 0.1 --json
expect_json "$dir/p-1" swap --model "$R" --memory 12M --generations 6 \
    --seed 3 --pressure 1 --json
if cmp -s "$dir/p-default" "$dir/p-100"; then ok
else bad "--pressure 100 --mutation 0.1 differ from the defaults"; fi
# (the averages per generation show the selection's course; the CPU
# seconds at the end of each line are cut off)
for pr in 100 1; do
    ${KT_WRAP:-} "$KTILE" swap --model "$R" --memory 12M --generations 6 \
        --seed 3 --pressure $pr --progress 2>&1 >/dev/null |
        sed 's/ ([0-9]* plans, .*//' >"$dir/curve-$pr"
done
if [ "$(grep -c '^generation [0-6]: best' "$dir/curve-1")" -eq 7 ] &&
    ! cmp -s "$dir/curve-100" "$dir/curve-1"; then ok
else bad "--pressure 1 selects as 100 does (or no progress lines)"; fi
expect_bad_msg "population '1': expected a whole number from 2 to 4096" \
    swap --model "$M" --memory 1G --population 1
expect_bad_msg "population '5000'" swap --model "$M" --memory 1G \
    --population 5000
expect_bad_msg "mutation '0': expected a probability above 0, at most 1" \
    swap --model "$M" --memory 1G --mutation 0
expect_bad_msg "mutation '1.5'" swap --model "$M" --memory 1G --mutation 1.5
expect_bad_msg "mutation 'nan'" swap --model "$M" --memory 1G --mutation nan
expect_bad_msg "pressure '2e6': expected a number above 0, at most 1e6" \
    swap --model "$M" --memory 1G --pressure 2e6
expect_bad_msg "pressure 'inf'" swap --model "$M" --memory 1G --pressure inf
expect_bad_msg "seconds '0': expected a number of seconds above 0, at most 1e6" \
    swap --model "$M" --memory 1G --seconds 0
expect_bad_msg "swap: --seconds needs a value" swap --model "$M" --memory 1G \
    --seconds ''
expect_bad_msg "seconds '1e7'" swap --model "$M" --memory 1G --seconds 1e7
expect_bad_msg "pressure '-1'" swap --model "$M" --memory 1G --pressure -1
# the other searches are rules with none of the GA's options
for opt in "--seconds 1" "--generations 2" "--seed 4" "--population 8" \
    "--mutation 0.5" "--pressure 5" "--progress"; do
    # shellcheck disable=SC2086
    expect_bad_msg "swap: ${opt%% *} goes with --search ga, not odswap" \
        swap --model "$M" --memory 1G --search odswap $opt
done
expect_bad_msg "goes with --search ga, not none" swap --model "$M" \
    --memory 1G --search none --seed 2

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
