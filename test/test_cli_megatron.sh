#!/bin/sh
# test_cli_megatron.sh -- the Megatron comparison of test/test_zoo.c (f)
# through the command line.
#
# `ktile eval` prices a plan exactly as written: every tensor's tiling and
# every operator's strategy (the variable it splits) come from the plan
# file; eval does not choose operator strategies.  A Megatron plan needs
# both, and the strategies only make sense chosen for the Megatron tilings
# (the DP plan's strategies would price a mixture).  So the plan is built
# once, in C, by the test program itself (`test_zoo --megatron-json FILE`:
# Megatron's tilings by tensor name, each operator's cheapest strategy
# given them, priced by kt_plan_eval), and this script checks that
#   - `ktile eval` reads that JSON and prices it exactly as kt_plan_eval
#     did (total_bytes and cut_bytes, the tilings kept as written),
#   - the DP plan of `ktile plan` is no worse than it, nor than data
#     parallelism (`--strategy data`): on one cut the DP is exact,
# and prints the three totals.
#
# Environment: KTILE (default build/ktile), KT_TEST_ZOO (default: test_zoo
# next to KTILE's build: build/test/test_zoo, or build/sanitize/test_zoo
# for build/sanitize/ktile), KT_WRAP (a command put in front of every
# program run, e.g. valgrind).  Needs python3.  Ends with
# "N passed, M failed".

KTILE=${KTILE:-build/ktile}
bindir=$(dirname "$KTILE")
if [ -n "${KT_TEST_ZOO:-}" ]; then
    ZOO=$KT_TEST_ZOO
elif [ -x "$bindir/test/test_zoo" ]; then
    ZOO=$bindir/test/test_zoo
else
    ZOO=$bindir/test_zoo
fi
pass=0
fail=0
dir=$(mktemp -d "${TMPDIR:-/tmp}/ktile-megatron.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
out=$dir/out
err=$dir/err

ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL: $*"
    echo "  exit status $rc; stdout:"
    head -c 2000 "$out" | sed 's/^/    /'
    echo
    echo "  stderr:"
    sed 's/^/    /' "$err"
}

# run_json FILE PROGRAM ARGS...: exit 0, nothing on stderr, stdout saved
run_json() {
    file=$1
    shift
    # KT_WRAP is a command line: split it into words on purpose.
    # shellcheck disable=SC2086
    ${KT_WRAP:-} "$@" >"$out" 2>"$err"
    rc=$?
    if [ "$rc" -eq 0 ] && [ ! -s "$err" ]; then
        cp "$out" "$file"
        ok
        return 0
    fi
    bad "$@"
    return 1
}

# check 'WHAT' 'PYTHON CODE' ARGS...: the code (sys.argv[1:] = ARGS) must
# exit 0; what it prints is shown
check() {
    what=$1
    code=$2
    shift 2
    if python3 -c "$code" "$@" >"$dir/py" 2>&1; then
        ok
        cat "$dir/py"
    else
        fail=$((fail + 1))
        echo "FAIL: $what"
        sed 's/^/    /' "$dir/py"
    fi
}

for prog in "$KTILE" "$ZOO"; do
    if [ ! -x "$prog" ]; then
        echo "FAIL: $prog is not built"
        echo "0 passed, 1 failed"
        exit 1
    fi
done
if ! command -v python3 >/dev/null 2>&1; then
    echo "FAIL: python3 is needed to read ktile's JSON"
    echo "0 passed, 1 failed"
    exit 1
fi

# The plan file written by C; ZOO's own stdout stays empty.
if run_json "$dir/zoo.out" "$ZOO" --megatron-json "$dir/megatron.json"; then
    spec=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["spec"])' \
        "$dir/megatron.json")
else
    echo "$fail failed before any comparison"
    echo "$pass passed, $fail failed"
    exit 1
fi

run_json "$dir/eval.json" "$KTILE" eval --model "$spec" \
    --plan "$dir/megatron.json" --json &&
    check "ktile eval prices the Megatron plan as kt_plan_eval does" '
import json, sys
c = json.load(open(sys.argv[1]))
e = json.load(open(sys.argv[2]))
assert e["factors"] == c["factors"] == [2], (e["factors"], c["factors"])
assert e["total_bytes"] == c["total_bytes"], (e["total_bytes"], c["total_bytes"])
assert e["cut_bytes"] == c["cut_bytes"], (e["cut_bytes"], c["cut_bytes"])
want = {t["name"]: t["tiling"] for t in c["tensors"]}
got = {t["name"]: t["tiling"] for t in e["tensors"]}
assert got == want, sorted(set(got.items()) ^ set(want.items()))
ws = {o["name"]: o["strategy"] for o in c["ops"]}
gs = {o["name"]: o["strategy"] for o in e["ops"]}
assert gs == ws, sorted(set(gs.items()) ^ set(ws.items()))
# the Megatron layout itself: heads, columns, rows
assert got["Wq1"] == "S1" and got["Wo1"] == "S0", got
assert got["W1_1"] == "S1" and got["W2_1"] == "S0", got
assert got["dWq1"] == "S1" and got["q1"] == "S2" and got["r1"] == "R", got
' "$dir/megatron.json" "$dir/eval.json"

run_json "$dir/dp.json" "$KTILE" plan --model "$spec" --devices 2 --json
run_json "$dir/data.json" "$KTILE" plan --model "$spec" --devices 2 \
    --strategy data --json

if [ -s "$dir/eval.json" ] && [ -s "$dir/dp.json" ] && [ -s "$dir/data.json" ]
then
    check "dp <= megatron and dp <= data on 2 devices" '
import json, sys
m, dp, data = (json.load(open(f))["total_bytes"] for f in sys.argv[2:])
print("%s on 2 devices: dp %d, megatron %d, data %d bytes"
      % (sys.argv[1], dp, m, data))
assert dp <= m, (dp, m)
assert dp <= data, (dp, data)
assert m < data, (m, data)
' "$spec" "$dir/eval.json" "$dir/dp.json" "$dir/data.json"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
