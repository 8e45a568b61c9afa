#!/bin/sh
# test_cli_kinds.sh -- `ktile sim` on topologies with device kinds (issue 4):
# `kind NAME flops F membw B` and `devices LIST NAME` lines in a
# --topology-file.  Checked: every device's "kind" in the JSON; a device of a
# kind twice as slow in both roofs is busy exactly twice as long for the same
# tiles; a mixed machine's step lies between the all-fast and the all-slow
# machine's; a one-kind file simulates exactly as the same roofline given by
# `device` lines; the timeline labels each device row with its kind; the
# profile --write-profile writes has a kind column, reads back to the same
# step, and a time given for one kind applies to that kind's devices only;
# bad files and profiles fail naming the line and the problem.
#
# Needs python3.  Environment: KTILE, KT_WRAP as for the other CLI tests.
# Ends with "N passed, M failed".

. "$(dirname "$0")/cli_lib.sh"
cli_setup kinds
require_ktile
require_python

M=mlp:layers=4,hidden=1024,batch=64

levels='level 2 25G 5e-6
level 4 300G 1e-6'
printf '%s\nkind h200 flops 989T membw 4.8T\nkind half flops 494.5T membw 2.4T\ndevices 0-3 h200\ndevices 4-7 half\n' \
    "$levels" >"$dir/mixed.txt"
printf '%s\nkind h200 flops 989T membw 4.8T\ndevices all h200\n' "$levels" \
    >"$dir/fast.txt"
printf '%s\nkind half flops 494.5T membw 2.4T\ndevices all half\n' "$levels" \
    >"$dir/slow.txt"
printf '%s\ndevice flops 989T\ndevice membw 4.8T\n' "$levels" >"$dir/old.txt"

expect_json "$dir/mixed.json" sim --model "$M" --devices 8 \
    --topology-file "$dir/mixed.txt" --json
expect_json "$dir/fast.json" sim --model "$M" --devices 8 \
    --topology-file "$dir/fast.txt" --json
expect_json "$dir/slow.json" sim --model "$M" --devices 8 \
    --topology-file "$dir/slow.txt" --json
expect_json "$dir/old.json" sim --model "$M" --devices 8 \
    --topology-file "$dir/old.txt" --json

check "sim --json: a kind per device" 'import json, sys
d = json.load(open(sys.argv[1]))
kinds = [e["kind"] for e in d["devices"]]
assert kinds == ["h200"] * 4 + ["half"] * 4, kinds
for e in d["devices"]:
    assert list(e) == ["busy_seconds", "idle_seconds", "kind"], list(e)' \
    "$dir/mixed.json"
check "the half-speed kind is busy exactly twice as long" 'import json, sys
d = json.load(open(sys.argv[1]))["devices"]
for i in range(4):
    f, s = d[i]["busy_seconds"], d[i + 4]["busy_seconds"]
    assert abs(s - 2 * f) <= 1e-9 * s, (i, f, s)' "$dir/mixed.json"
check "all fast <= mixed <= all slow" 'import json, sys
f, m, s = (json.load(open(x))["step_seconds"] for x in sys.argv[1:4])
assert f <= m <= s and f < s, (f, m, s)' \
    "$dir/fast.json" "$dir/mixed.json" "$dir/slow.json"
check "one kind for all = the same roofline on device lines" 'import json, sys
a, b = (json.load(open(x)) for x in sys.argv[1:3])
assert a["step_seconds"] == b["step_seconds"], (a, b)
assert [e["busy_seconds"] for e in a["devices"]] == \
       [e["busy_seconds"] for e in b["devices"]]
assert all("kind" not in e for e in b["devices"])' \
    "$dir/fast.json" "$dir/old.json"

# text output: the kinds in the topology line and the device table
expect_text 'kinds h200 x4' sim --model "$M" --devices 8 --topology-file "$dir/mixed.txt"
expect_text '^d5 .*half$' sim --model "$M" --devices 8 --topology-file "$dir/mixed.txt"

# the timeline: each device row labelled with its kind
expect_json "$dir/tl.json" sim --model "$M" --devices 8 \
    --topology-file "$dir/mixed.txt" --timeline "$dir/tl.svg" --json
check "sim --timeline: device rows labelled with their kinds" '
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
rows = {}
for t in root.iter(ns + "text"):
    if t.text and t.text.startswith("d") and t.text[1:].isdigit():
        rows[int(t.text[1:])] = "".join(s.text or "" for s in t.iter(ns + "tspan"))
assert rows == {d: "h200" if d < 4 else "half" for d in range(8)}, rows' \
    "$dir/tl.svg"

# profiles with kinds
P=mlp:layers=2,hidden=64,batch=16
expect_json "$dir/p0.json" sim --model "$P" --devices 8 \
    --topology-file "$dir/mixed.txt" --write-profile "$dir/prof.txt" --json
check "--write-profile: every line ends with its kind, both kinds there" '
import sys
kinds = set()
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    w = line.split()
    assert len(w) == 4, line
    kinds.add(w[3])
assert kinds == {"h200", "half"}, kinds' "$dir/prof.txt"
expect_json "$dir/p1.json" sim --model "$P" --devices 8 \
    --topology-file "$dir/mixed.txt" --profile "$dir/prof.txt" --json
check "the written profile reads back to the same step" 'import json, sys
a, b = (json.load(open(x)) for x in sys.argv[1:3])
assert a["step_seconds"] == b["step_seconds"], (a["step_seconds"],
                                                b["step_seconds"])' \
    "$dir/p0.json" "$dir/p1.json"
# one op made a second slower on the half kind only: those devices busy a
# second longer per x2 tile, the h200s unchanged (up to the simulator's
# tick, which follows the longest run time)
sed 's/^\(x2 [0-9x]*\) [^ ]* half$/\1 1 half/' "$dir/prof.txt" >"$dir/slowx2.txt"
expect_json "$dir/p2.json" sim --model "$P" --devices 8 \
    --topology-file "$dir/mixed.txt" --profile "$dir/slowx2.txt" --json
check "a time for one kind holds on that kind's devices only" 'import json, sys
a, b = (json.load(open(x))["devices"] for x in sys.argv[1:3])
for i in range(8):
    d = b[i]["busy_seconds"] - a[i]["busy_seconds"]
    if i < 4:
        assert abs(d) <= 1e-11, (i, d) # ticks of 2^-41 s with a 1 s task
    else:
        assert 0.99 < d < 1.0001, (i, d)' "$dir/p0.json" "$dir/p2.json"
printf '# measured\nx2 8x32x16 0.001 h100\n' >"$dir/badkind.txt"
expect_bad_msg 'line 2: .*kind h100 is not a kind of the topology (h200, half)' \
    sim --model "$P" --devices 8 --topology-file "$dir/mixed.txt" \
    --profile "$dir/badkind.txt"
expect_bad_msg 'names no kinds' sim --model "$P" --devices 8 \
    --topology-file "$dir/old.txt" --profile "$dir/badkind.txt"

# --topology FILE (a value without ':') reads the file, as --topology-file
expect_json "$dir/bytopo.json" sim --model "$M" --devices 8 \
    --topology "$dir/mixed.txt" --json
check "sim --topology FILE = --topology-file FILE" 'import sys
assert open(sys.argv[1]).read() == open(sys.argv[2]).read()' \
    "$dir/mixed.json" "$dir/bytopo.json"
# plan's time objective on a mixed machine is the slowest kind's: the same
# plan and step as on the all-slow machine
expect_json "$dir/plan-mixed.json" plan --model "$M" --devices 8 \
    --objective time --topology "$dir/mixed.txt" --json
expect_json "$dir/plan-slow.json" plan --model "$M" --devices 8 \
    --objective time --topology "$dir/slow.txt" --json
expect_json "$dir/plan-fast.json" plan --model "$M" --devices 8 \
    --objective time --topology "$dir/fast.txt" --json
check "plan --objective time: a mixed machine plans as its slowest kind" '
import json, sys
a, b, c = (json.load(open(x)) for x in sys.argv[1:4])
for k in ("tensors", "ops", "total_bytes", "step_seconds"):
    assert a[k] == b[k], k
assert c["step_seconds"] < b["step_seconds"], (c["step_seconds"],
                                               b["step_seconds"])' \
    "$dir/plan-mixed.json" "$dir/plan-slow.json" "$dir/plan-fast.json"
expect_json "$dir/mcmc.json" plan --model "$P" --devices 8 --strategy mcmc \
    --proposals 20 --topology "$dir/mixed.txt" --json
expect_bad_msg 'cannot open topology file .*nosuch' plan --model "$M" \
    --devices 8 --objective time --topology "$dir/nosuch"
expect_bad_msg 'has 8 devices but the plan is for 4' plan --model "$M" \
    --devices 4 --objective time --topology "$dir/mixed.txt"
expect_bad_msg 'cannot open topology file .*nosuch' sim --model "$M" \
    --devices 8 --topology "$dir/nosuch"

# --topology-file on plan and eval as on sim: the same results as
# --topology FILE, and a path with a ':' (which --topology reads as a
# spec) can be named
cp "$dir/mixed.txt" "$dir/mixed:copy.txt"
expect_json "$dir/plan-mixed-file.json" plan --model "$M" --devices 8 \
    --objective time --topology-file "$dir/mixed:copy.txt" --json
check "plan --topology-file (a path with ':') = --topology FILE" '
import json, sys
a, b = (json.load(open(x)) for x in sys.argv[1:3])
a.pop("search_seconds"); b.pop("search_seconds")
assert a == b, (a, b)' "$dir/plan-mixed.json" "$dir/plan-mixed-file.json"
expect_json "$dir/eval-file.json" eval --model "$M" \
    --plan "$dir/plan-mixed.json" --topology-file "$dir/mixed:copy.txt" --json
expect_json "$dir/eval-spec.json" eval --model "$M" \
    --plan "$dir/plan-mixed.json" --topology "$dir/mixed.txt" --json
check "eval --topology-file = eval --topology FILE; the plan's step" '
import json, sys
p, a, b = (json.load(open(x)) for x in sys.argv[1:4])
assert a["step_seconds"] == b["step_seconds"] == p["step_seconds"], (
    a["step_seconds"], b["step_seconds"], p["step_seconds"])' \
    "$dir/plan-mixed.json" "$dir/eval-file.json" "$dir/eval-spec.json"
expect_json "$dir/mcmc-file.json" plan --model "$P" --devices 8 \
    --strategy mcmc --proposals 20 --topology-file "$dir/mixed:copy.txt" --json
check "plan --strategy mcmc --topology-file = --topology FILE" '
import json, sys
a, b = (json.load(open(x)) for x in sys.argv[1:3])
assert a["step_seconds"] == b["step_seconds"] and a["ops"] == b["ops"]' \
    "$dir/mcmc.json" "$dir/mcmc-file.json"
expect_json "$dir/sim-colon.json" sim --model "$M" --devices 8 \
    --topology-file "$dir/mixed:copy.txt" --json
expect_bad_msg 'mixed:copy.txt' plan --model "$M" --devices 8 \
    --objective time --topology "$dir/mixed:copy.txt"
for c in plan eval sim; do
    planopt="--plan $dir/plan-mixed.json"
    [ $c = plan ] && planopt="--objective time" # (plan takes no --plan)
    expect_bad_msg "$c: give --topology or --topology-file, not both" $c \
        --model "$M" --devices 8 $planopt \
        --topology flat:8:1G --topology-file "$dir/mixed.txt"
done
expect_bad_msg 'topology-file .*mixed.txt has 8 devices but the plan is for 4' \
    plan --model "$M" --devices 4 --topology-file "$dir/mixed.txt"
expect_bad_msg 'cannot open topology file .*nosuch' eval --model "$M" \
    --plan "$dir/plan-mixed.json" --topology-file "$dir/nosuch"

# bad topology files: the line and the problem
bad_topo() {
    pattern=$1
    printf '%s\n%s\n' "$levels" "$2" >"$dir/bad.txt"
    expect_bad_msg "$pattern" sim --model "$M" --devices 8 \
        --topology-file "$dir/bad.txt"
}
# the file first, then the line, as model files and profiles have it
bad_topo "bad.txt: line 4: unknown kind 'a100' (declared so far: h200)" \
    'kind h200 flops 989T membw 4.8T
devices 0-7 a100'
bad_topo 'bad.txt: line 4: device 8 is out of range: the levels give 8 devices' \
    'kind h200 flops 989T membw 4.8T
devices 0-8 h200'
bad_topo 'bad.txt: line 6: device 3 is given two kinds: h200 (line 5) and a100 (line 6)' \
    'kind h200 flops 989T membw 4.8T
kind a100 flops 312T membw 2T
devices 0-3 h200
devices 3-7 a100'
bad_topo 'bad.txt: device 4 has no kind' \
    'kind h200 flops 989T membw 4.8T
devices 0-3 h200'
bad_topo 'bad.txt: line 4: a file with kind lines (line 3) has no `device` lines' \
    'kind h200 flops 989T membw 4.8T
device flops 1T'
bad_topo 'bad.txt: line 3: expected `kind NAME flops' 'kind h200 flops 989T'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
