#!/bin/sh
# test_cli_sim.sh -- the `ktile sim` contract of DESIGN.md "The ktile
# command line": {"step_seconds", "bytes", "devices": [{"busy_seconds",
# "idle_seconds"}]} on stdout, nothing on stderr on success; "ktile: ..."
# on stderr, nothing on stdout and exit status 2 on bad input.  The bytes
# are those the plan prices (lowering moves exactly what the cost model
# predicts), a plan printed by `plan --json` simulates the same through
# --plan, slower links give a longer step, and --timeline draws an SVG.
#
# Needs python3 (json, xml.etree) to read the results.
#
# Environment: KTILE (default build/ktile), KT_WRAP (a command put in front
# of every ktile run, e.g. valgrind).  Ends with "N passed, M failed".

. "$(dirname "$0")/cli_lib.sh"
cli_setup sim
require_ktile
require_python

M=mlp:layers=4,hidden=1024,batch=64
FAST=nodes:2x4:300G:25G
SLOW=nodes:2x4:30G:2.5G

# A result of `sim --json` for NDEV devices: the keys of the contract
# first and in order, a positive step, and busy + idle = step per device.
SIM_OK='import json, sys
d = json.load(open(sys.argv[1]))
ndev = int(sys.argv[2])
keys = list(d)
assert keys[:3] == ["step_seconds", "bytes", "devices"], keys
assert set(keys) <= {"step_seconds", "bytes", "devices",
                     "critical_path_tasks", "critical_path"}, keys
step = d["step_seconds"]
assert isinstance(step, float) and step > 0, step
assert isinstance(d["bytes"], int) and d["bytes"] >= 0, d["bytes"]
assert len(d["devices"]) == ndev, len(d["devices"])
for i, e in enumerate(d["devices"]):
    assert list(e) == ["busy_seconds", "idle_seconds"], (i, list(e))
    b, idle = e["busy_seconds"], e["idle_seconds"]
    assert 0 < b <= step * (1 + 1e-9), (i, b, step)
    assert abs(b + idle - step) <= 1e-9 * step, (i, b, idle, step)
if "critical_path_tasks" in d:
    assert d["critical_path_tasks"] >= 1, d["critical_path_tasks"]
# the critical path, task by task: a chain from 0 to the step, each task
# starting when (or after) the one before ends, on a device or a link
if "critical_path" in d:
    cp = d["critical_path"]
    assert len(cp) == d["critical_path_tasks"], (len(cp), d["critical_path_tasks"])
    assert cp[0]["start_seconds"] == 0 and cp[-1]["end_seconds"] == step, (cp[0], cp[-1], step)
    for a, b in zip(cp, cp[1:]):
        assert b["start_seconds"] >= a["end_seconds"] * (1 - 1e-12), (a, b)
    for t in cp:
        assert t["start_seconds"] <= t["end_seconds"], t
        if t["task"] == "compute":
            assert 0 <= t["device"] < ndev and set(t) == {"op", "task", "device", "start_seconds", "end_seconds"}, t
        else:
            assert t["task"] == "transfer" and 0 <= t["src"] < ndev and 0 <= t["dst"] < ndev and t["src"] != t["dst"] and t["bytes"] > 0, t
            # what it moves: an input or the output of the op, copied or reduced
            assert t["conversion"] in ("input", "output") and t["xfer"] in ("copy", "reduce") and t["tensor"], t
            assert t["xfer"] == "copy" or t["conversion"] == "output", t'

# the same "bytes" as the plan's "total_bytes"
SAME_BYTES='import json, sys
s = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
assert s["bytes"] == p["total_bytes"], (s["bytes"], p["total_bytes"])'

# ------------------------------------------------------------ the contract

expect_json "$dir/plan.json" plan --model "$M" --devices 8 --json
expect_json "$dir/fast.json" sim --model "$M" --devices 8 --topology "$FAST" --json
check "sim --topology $FAST: the JSON contract" "$SIM_OK" "$dir/fast.json" 8
check "sim --topology $FAST: bytes = plan's total_bytes" "$SAME_BYTES" \
    "$dir/fast.json" "$dir/plan.json"
check "an 8-device mlp plan moves bytes" 'import json, sys
assert json.load(open(sys.argv[1]))["total_bytes"] > 0' "$dir/plan.json"

# What each critical transfer moves, where bytes alone are ambiguous
# (the task's rank among its op's tasks between the same devices names
# its group): the RNN's and the transformer's trees on two nodes.  In
# the transformer, o1's two inputs cross 4 -> 0 with 65,536 bytes each;
# the weight Wo1 goes first, at 0, its activation at1 once computed.
R=rnn:layers=2,hidden=256,steps=4,batch=16
TR=transformer:layers=2,dmodel=256,heads=4,ffn=1024,seq=64,batch=8
for m in "$R" "$TR"; do
    expect_json "$dir/cp.json" sim --model "$m" --devices 8 --topology "$FAST" --json &&
        check "sim $m: every critical transfer named" "$SIM_OK" "$dir/cp.json" 8
done
check "o1's two inputs told apart" 'import json, sys
cp = json.load(open(sys.argv[1]))["critical_path"]
o1 = [t for t in cp if t["op"] == "o1" and t["task"] == "transfer" and
      (t["src"], t["dst"]) == (4, 0)]
assert [(t["tensor"], t["bytes"]) for t in o1] == [("Wo1", 65536), ("at1", 65536)], o1
assert o1[0]["start_seconds"] == 0 < o1[1]["start_seconds"], o1' "$dir/cp.json"

# The default topology (flat:8:450G) and --factors.
expect_json "$dir/default.json" sim --model "$M" --devices 8 --json
check "sim (default topology): the JSON contract" "$SIM_OK" "$dir/default.json" 8
check "sim (default topology): bytes = plan's total_bytes" "$SAME_BYTES" \
    "$dir/default.json" "$dir/plan.json"
expect_json "$dir/flat.json" sim --model "$M" --devices 8 --topology flat:8:450G --json
check "no --topology is flat:8:450G" 'import sys
assert open(sys.argv[1]).read() == open(sys.argv[2]).read()' \
    "$dir/default.json" "$dir/flat.json"
expect_json "$dir/plan42.json" plan --model "$M" --factors 4,2 --json
expect_json "$dir/f42.json" sim --model "$M" --factors 4,2 --topology "$FAST" --json
check "sim --factors 4,2: the JSON contract" "$SIM_OK" "$dir/f42.json" 8
check "sim --factors 4,2: bytes = plan's total_bytes" "$SAME_BYTES" \
    "$dir/f42.json" "$dir/plan42.json"

# The simulation is deterministic.
expect_json "$dir/fast2.json" sim --model "$M" --devices 8 --topology "$FAST" --json
check "sim twice: the same output" 'import sys
assert open(sys.argv[1]).read() == open(sys.argv[2]).read()' \
    "$dir/fast.json" "$dir/fast2.json"

# Ten times slower links: a longer step, the same plan and bytes.
expect_json "$dir/slow.json" sim --model "$M" --devices 8 --topology "$SLOW" --json
check "sim --topology $SLOW: the JSON contract" "$SIM_OK" "$dir/slow.json" 8
check "slower links, longer step" 'import json, sys
f = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))
assert s["step_seconds"] > f["step_seconds"], (s["step_seconds"],
                                               f["step_seconds"])
assert s["bytes"] == f["bytes"], (s["bytes"], f["bytes"])' \
    "$dir/fast.json" "$dir/slow.json"

# One device: nothing moves, the device is never idle.
expect_json "$dir/one.json" sim --model "$M" --devices 1 --json
check "sim --devices 1" 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["bytes"] == 0, d["bytes"]
assert len(d["devices"]) == 1
e = d["devices"][0]
assert abs(e["busy_seconds"] - d["step_seconds"]) <= 1e-9 * d["step_seconds"], e
assert abs(e["idle_seconds"]) <= 1e-9 * d["step_seconds"], e' "$dir/one.json"

# --objective time searches for the topology; still the contract.
expect_json "$dir/time.json" sim --model "$M" --devices 8 --topology "$FAST" \
    --objective time --json
check "sim --objective time: the JSON contract" "$SIM_OK" "$dir/time.json" 8

# ------------------------------------------------------------------ --plan

expect_json "$dir/given.json" sim --model "$M" --plan "$dir/plan.json" \
    --topology "$FAST" --json
check "sim --plan: the JSON contract" "$SIM_OK" "$dir/given.json" 8
check "sim --plan: bytes = the plan's total_bytes" "$SAME_BYTES" \
    "$dir/given.json" "$dir/plan.json"
expect_json "$dir/given8.json" sim --model "$M" --plan "$dir/plan.json" \
    --devices 8 --json
check "sim --plan --devices 8: bytes = the plan's total_bytes" "$SAME_BYTES" \
    "$dir/given8.json" "$dir/plan.json"
# A data-parallel plan is another plan: its own bytes.
expect_json "$dir/data.json" plan --model "$M" --devices 8 --strategy data --json
expect_json "$dir/sdata.json" sim --model "$M" --plan "$dir/data.json" --json
check "sim --plan (data parallel): bytes = the plan's total_bytes" \
    "$SAME_BYTES" "$dir/sdata.json" "$dir/data.json"

# ------------------------------------------- default factors on a topology
# Without --factors or --plan, the cuts follow the topology's levels
# (kt_machine_factors): on nodes:2x3 the factors are 2,3, where the device
# count's default, 3,2, puts devices of both nodes in one group of cut 2
# and its bytes cross the network.  The DP plan on 2,3 simulates faster
# (41.1 against 72.3 us when measured); --factors is kept as given; plan
# and sim agree.
N23=nodes:2x3:300G:25G
expect_text 'factors 2,3' sim --model "$M" --devices 6 --topology "$N23"
expect_text 'factors 3,2' sim --model "$M" --factors 3,2 --topology "$N23"
expect_json "$dir/n23.json" sim --model "$M" --devices 6 --topology "$N23" --json
expect_json "$dir/n32.json" sim --model "$M" --factors 3,2 --topology "$N23" --json
check "nodes:2x3: factors 2,3 simulate faster than 3,2" 'import json, sys
a, b = (json.load(open(f))["step_seconds"] for f in sys.argv[1:3])
assert a < b * 0.8, (a, b)' "$dir/n23.json" "$dir/n32.json"
expect_json "$dir/p23.json" plan --model "$M" --devices 6 --topology "$N23" --json
expect_json "$dir/p32.json" plan --model "$M" --factors 3,2 --topology "$N23" --json
expect_json "$dir/p6.json" plan --model "$M" --devices 6 --json
check "plan: factors follow the topology, else the default" 'import json, sys
f = [json.load(open(p))["factors"] for p in sys.argv[1:4]]
assert f == [[2, 3], [3, 2], [3, 2]], f' "$dir/p23.json" "$dir/p32.json" "$dir/p6.json"
# a plan file's factors are kept on the topology (sim and eval), and
# mcmc searches on the topology's factors
expect_text 'factors 3,2' sim --model "$M" --plan "$dir/p32.json" --topology "$N23"
expect_json "$dir/e32.json" eval --model "$M" --plan "$dir/p32.json" --topology "$N23" --json
expect_json "$dir/m23.json" plan --model "$M" --devices 6 --topology "$N23" \
    --strategy mcmc --proposals 20 --json
check "eval keeps the plan's 3,2; mcmc searches 2,3" 'import json, sys
f = [json.load(open(p))["factors"] for p in sys.argv[1:3]]
assert f == [[3, 2], [2, 3]], f' "$dir/e32.json" "$dir/m23.json"

# -------------------------------------------------- model and topology files

run zoo --print "mlp:layers=2,hidden=64,batch=8"
cp "$out" "$dir/model.txt"
expect_json "$dir/mplan.json" plan --model-file "$dir/model.txt" --devices 4 --json
expect_json "$dir/mfile.json" sim --model-file "$dir/model.txt" --devices 4 --json
check "sim --model-file: the JSON contract" "$SIM_OK" "$dir/mfile.json" 4
check "sim --model-file: bytes = plan's total_bytes" "$SAME_BYTES" \
    "$dir/mfile.json" "$dir/mplan.json"

cat >"$dir/topo.txt" <<'EOF'
# two nodes of four devices
level 2 25G 5e-6
level 4 300G 1e-6
device flops 67T
EOF
cat >"$dir/slowtopo.txt" <<'EOF'
level 2 2.5G 5e-6   # ten times slower
level 4 30G 1e-6
device flops 67T
EOF
expect_json "$dir/tfile.json" sim --model "$M" --devices 8 \
    --topology-file "$dir/topo.txt" --json
check "sim --topology-file: the JSON contract" "$SIM_OK" "$dir/tfile.json" 8
check "sim --topology-file: bytes = plan's total_bytes" "$SAME_BYTES" \
    "$dir/tfile.json" "$dir/plan.json"
expect_json "$dir/tslow.json" sim --model "$M" --devices 8 \
    --topology-file "$dir/slowtopo.txt" --json
check "slower links in a topology file, longer step" 'import json, sys
f = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))
assert s["step_seconds"] > f["step_seconds"], (s["step_seconds"],
                                               f["step_seconds"])' \
    "$dir/tfile.json" "$dir/tslow.json"

# -------------------------------------------------------------- --timeline

expect_json "$dir/tl.json" sim --model "$M" --devices 8 --topology "$FAST" \
    --timeline "$dir/tl.svg" --json
check "sim --timeline: the JSON is unchanged" 'import sys
assert open(sys.argv[1]).read() == open(sys.argv[2]).read()' \
    "$dir/fast.json" "$dir/tl.json"
check "sim --timeline: an SVG with a row of tasks per device" '
import re, sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == ns + "svg", root.tag
assert root.get("version") == "1.1", root.get("version")
labels = [t.text for t in root.iter(ns + "text")]
for d in range(8):
    assert "d%d" % d in labels, ("no row label", d)
links = [l for l in labels if l and re.fullmatch(r"d\d+->d\d+", l)]
assert links, "no link rows"
rows = {}
transfers = 0
for r in root.iter(ns + "rect"):
    t = r.find(ns + "title")
    if t is None:
        continue
    m = re.search(r"compute on d(\d+)", t.text)
    if m:
        rows.setdefault(int(m.group(1)), []).append(r)
    elif "transfer" in t.text:
        transfers += 1
    assert float(r.get("width")) > 0, r.attrib
assert sorted(rows) == list(range(8)), sorted(rows)
assert transfers > 0, "no transfers drawn"
outlined = [r for r in root.iter(ns + "rect") if r.get("stroke") == "#000000"]
assert outlined, "no critical path outlined"' "$dir/tl.svg"
# Its layout (write_timeline): a task's box is 12 px high, 2 px below the
# top of its row (96 + 16 r); the row's label sits 12 px below it; time
# runs over 1100 px from x = 120 (20 margin + 100 labels) to the step.
# So every box is in the row labelled with its device or link, the first
# tasks start at x = 120 and the last ends at 1220; the caption counts the
# boxes drawn (all links are, below 200); the critical path's boxes, as
# many as the JSON's critical_path_tasks, are outlined and drawn last.
check "sim --timeline: boxes in their rows, to scale, the critical path" '
import json, re, sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
d = json.load(open(sys.argv[2]))
row_of = {}
for t in root.iter(ns + "text"):
    if t.text and re.fullmatch(r"d\d+(->d\d+)?", t.text):
        row_of[t.text] = (float(t.get("y")) - 96 - 12) / 16
nlinks = sum("->" in k for k in row_of)
boxes = [r for r in root.iter(ns + "rect") if r.find(ns + "title") is not None]
ncomp = nxfer = 0
for r in boxes:
    title = r.find(ns + "title").text
    m = re.search(r"compute on (d\d+)", title)
    if m:
        ncomp += 1
        name = m.group(1)
    else:
        m = re.search(r"transfer (d\d+)->(d\d+)", title)
        nxfer += 1
        name = m.group(1) + "->" + m.group(2)
    row = (float(r.get("y")) - 96 - 2) / 16
    assert row_of.get(name) == row, (title, row, row_of.get(name))
cap = [t.text for t in root.iter(ns + "text") if t.text and "compute tasks" in t.text][0]
m = re.match(r"(\d+) compute tasks, (\d+) transfers on (\d+) links", cap)
assert m and [int(x) for x in m.groups()] == [ncomp, nxfer, nlinks], (cap, ncomp, nxfer, nlinks)
lo = min(float(r.get("x")) for r in boxes)
hi = max(float(r.get("x")) + float(r.get("width")) for r in boxes)
assert abs(lo - 120) < 0.01 and 1219.99 < hi < 1221, (lo, hi)
outlined = [i for i, r in enumerate(boxes) if r.get("stroke") == "#000000"]
assert len(outlined) == d["critical_path_tasks"], (len(outlined), d["critical_path_tasks"])
assert outlined == list(range(len(boxes) - len(outlined), len(boxes))), "critical path not drawn last"
' "$dir/tl.svg" "$dir/tl.json"

# Past 200 links only 200 get a row: every link of the critical path
# first (it was the busiest alone, and a transformer layer on 64 devices
# lost 10 of its 50 critical tasks), so every critical task is outlined.
TF=transformer:layers=1,dmodel=256,heads=8,ffn=1024,seq=64,batch=8
expect_json "$dir/tl64.json" sim --model "$TF" --devices 64 \
    --timeline "$dir/tl64.svg" --json
check "sim --timeline past 200 links: the whole critical path drawn" '
import json, re, sys
svg = open(sys.argv[1]).read()
d = json.load(open(sys.argv[2]))
assert re.search(r"Showing 200 of \d+ links \(every link on the critical path", svg), "no cap"
n = svg.count("; critical path</title>")
assert n == d["critical_path_tasks"] > 0, (n, d["critical_path_tasks"])
' "$dir/tl64.svg" "$dir/tl64.json"

# --order FILE: every device runs the ops in the file's order; the graph's
# own order gives the same step as none, computing every dW after every dx
# another (it was only reachable from the C API)
expect_json "$dir/ord.plan.json" plan --model "$M" --devices 8 --json
python3 -c 'import json, sys
print("\n".join(o["name"] for o in json.load(open(sys.argv[1]))["ops"]))' \
    "$dir/ord.plan.json" >"$dir/order.txt"
expect_json "$dir/ord0.json" sim --model "$M" --devices 8 --topology "$FAST" --json
expect_json "$dir/ord1.json" sim --model "$M" --devices 8 --topology "$FAST" \
    --order "$dir/order.txt" --json
printf '%s\n' "# the weight gradients last" \
    "hx1 x1 hx2 x2 hx3 x3 x4 dx3 dhx3 dx2 dhx2 dx1 dhx1" \
    "dW4 dW3 dW2 dW1 W1.update W2.update W3.update W4.update" \
    >"$dir/order2.txt"
expect_json "$dir/ord2.json" sim --model "$M" --devices 8 --topology "$FAST" \
    --order "$dir/order2.txt" --json
check "sim --order: the graph's order is the default; another moves the step" '
import json, sys
a, b, c = (json.load(open(f))["step_seconds"] for f in sys.argv[1:4])
assert a == b and c != a, (a, b, c)
' "$dir/ord0.json" "$dir/ord1.json" "$dir/ord2.json"
printf 'hx1 bogus\n' >"$dir/order3.txt"
expect_bad_msg 'order3.txt: line 1: the graph has no op bogus' sim \
    --model "$M" --devices 8 --order "$dir/order3.txt"
printf 'W4.update\n' >"$dir/order4.txt"
grep -v "^W4.update$" "$dir/order.txt" >>"$dir/order4.txt"
expect_bad_msg 'order4.txt: schedule: op W4.update runs before dW4' sim \
    --model "$M" --devices 8 --order "$dir/order4.txt"
expect_bad_msg 'cannot open schedule' sim --model "$M" --devices 8 \
    --order "$dir/none.txt"

# `links ports`: a device's sends over a level queue on one port, so the
# data-parallel step (every device sending its gradient shares to several
# others at once) is longer than with a link per pair, and the timeline
# draws a row per port
printf 'level 2 25G\nlevel 4 300G\n' >"$dir/pairs.txt"
printf 'level 2 25G\nlevel 4 300G\nlinks ports\n' >"$dir/ports.txt"
expect_json "$dir/dp.plan.json" plan --model "$M" --devices 8 --strategy data \
    --json
expect_json "$dir/pairs.json" sim --model "$M" --plan "$dir/dp.plan.json" \
    --topology-file "$dir/pairs.txt" --json
expect_json "$dir/ports.json" sim --model "$M" --plan "$dir/dp.plan.json" \
    --topology-file "$dir/ports.txt" --timeline "$dir/ports.svg" --json
check "links ports: a longer step, a timeline row per port" '
import json, re, sys
a, b = (json.load(open(f))["step_seconds"] for f in sys.argv[1:3])
svg = open(sys.argv[3]).read()
assert b > 1.15 * a, (a, b)  # 1.21x on 2026-12-07
ports = set(re.findall(r">d(\d+) port L(\d)<", svg))
assert len(ports) == 16, sorted(ports)
assert not re.search(r">d\d+-&gt;d\d+</text>", svg), "a pair row"
assert re.search(r"transfers on 16 ports", svg), "caption"
' "$dir/pairs.json" "$dir/ports.json" "$dir/ports.svg"
printf 'level 2 25G\nlinks shared\n' >"$dir/badlinks.txt"
expect_bad_msg 'badlinks.txt: line 2: expected `links pairs` or `links ports`' \
    sim --model "$M" --devices 2 --topology-file "$dir/badlinks.txt"

# Text output: the step, the per-device table and the critical path.
expect_text 'step .* simulated' sim --model "$M" --devices 8 --topology "$FAST"
expect_text 'utilisation' sim --model "$M" --devices 8 --topology "$FAST"
expect_text '^d7 ' sim --model "$M" --devices 8 --topology "$FAST"
expect_text 'critical path .* compute' sim --model "$M" --devices 8 --topology "$FAST"
expect_text '--timeline' help sim
expect_text '--timeline' sim --help
expect_text 'sim' help

# -------------------------------------------------------------- bad input

expect_bad_msg 'devices' sim --model "$M" --devices 4 --topology "$FAST" --json
expect_bad_msg 'devices' sim --model "$M" --devices 8 --topology flat:4:450G
expect_bad_msg 'devices' sim --model "$M" --plan "$dir/plan.json" --topology flat:4:450G
expect_bad_msg 'devices' sim --model "$M" --devices 4 --topology-file "$dir/topo.txt"
expect_bad_msg 'nodes:2x4:300G' sim --model "$M" --devices 8 --topology nodes:2x4:300G
expect_bad_msg 'topology' sim --model "$M" --devices 8 --topology flat:8:abc
expect_bad_msg 'topology' sim --model "$M" --devices 8 --topology flat:x:450G
expect_bad_msg 'topology' sim --model "$M" --devices 8 --topology torus:8:450G
expect_bad_msg 'topology' sim --model "$M" --devices 8 --topology flat:8:infG
# below 1 byte/s a step's time would be infinite: refused with the range
expect_bad_msg '1 to 1e18' sim --model "$M" --devices 8 --topology flat:8:1e-320
expect_bad_msg '1 to 1e18' plan --model "$M" --devices 8 --topology flat:8:0.5 --objective time
# above 1e18 bytes/s: refused by plan as by sim (plan used to take 1e30)
expect_bad_msg '1 to 1e18' plan --model "$M" --devices 4 --topology flat:4:1e30 --objective time
expect_bad_msg '1 to 1e18' sim --model "$M" --devices 4 --topology flat:4:1e30
expect_bad_msg '1 to 1e18' plan --model "$M" --devices 8 --topology nodes:2x4:2e18:25G
# device rates go up to 1e30, in a file as through the API; a level's
# bandwidth up to 1e18 there too
printf 'level 4 25G\ndevice flops 1e20\ndevice membw 1e25\n' >"$dir/fastdev.txt"
expect_json "$dir/fastdev.json" sim --model "$M" --devices 4 \
    --topology-file "$dir/fastdev.txt" --json
printf 'level 4 25G\nkind big flops 2000000T membw 1e30\ndevices all big\n' \
    >"$dir/fastkind.txt"
expect_json "$dir/fastkind.json" sim --model "$M" --devices 4 \
    --topology-file "$dir/fastkind.txt" --json
printf 'level 4 25G\ndevice flops 2e30\n' >"$dir/toofast.txt"
expect_bad_msg "bad number '2e30' (1 to 1e30" sim --model "$M" --devices 4 \
    --topology-file "$dir/toofast.txt"
printf 'level 4 2e18\n' >"$dir/toofastlink.txt"
expect_bad_msg "bandwidth '2e18': expected 1 to 1e18" sim --model "$M" --devices 4 \
    --topology-file "$dir/toofastlink.txt"
printf 'level 8 fast\n' >"$dir/badtopo.txt"
expect_bad_msg 'badtopo.txt' sim --model "$M" --devices 8 --topology-file "$dir/badtopo.txt"
printf 'level 8 25G\ndevice membw nan\n' >"$dir/nantopo.txt"
expect_bad_msg 'nantopo.txt' sim --model "$M" --devices 8 --topology-file "$dir/nantopo.txt"
expect_bad_msg 'not both' sim --model "$M" --devices 8 --topology "$FAST" \
    --topology-file "$dir/topo.txt"
expect_bad_msg "unknown option '--bogus'" sim --model "$M" --devices 8 --bogus
expect_bad_msg 'unexpected argument' sim --model "$M" --devices 8 extra
expect_bad_msg 'takes no value' sim --model "$M" --devices 8 --json=yes
expect_bad_msg 'missing.json' sim --model "$M" --devices 8 --plan "$dir/missing.json"
expect_bad_msg 'missing.txt' sim --model "$M" --devices 8 --topology-file "$dir/missing.txt"
expect_bad_msg 'missing-model.txt' sim --model-file "$dir/missing-model.txt" --devices 8
expect_bad_msg 'cannot write' sim --model "$M" --devices 8 --timeline "$dir/no/such/dir/t.svg"
expect_bad_msg 'not 4' sim --model "$M" --plan "$dir/plan.json" --devices 4
expect_bad_msg 'objective' sim --model "$M" --devices 8 --objective speed
# --objective picks the DP plan; with --plan it would be ignored: refused
expect_bad_msg 'with --plan nothing is searched' sim --model "$M" \
    --plan "$dir/plan.json" --objective time
expect_bad_msg 'model' sim --devices 8
expect_bad_msg 'devices' sim --model "$M"
expect_bad_msg 'devices' sim --model "$M" --devices 0
expect_bad_msg 'frob' sim --model frob --devices 8
printf '{"factors": [2, 2, 2], "tensors": [], "ops": []}\n' >"$dir/empty.json"
expect_bad_msg 'missing from the plan' sim --model "$M" --plan "$dir/empty.json"

# Profiles: the written table reads back to the same step; one operator made
# a millisecond slower on every device makes the step about that much longer
P=mlp:layers=2,hidden=64,batch=16
expect_json "$dir/p0.json" sim --model "$P" --devices 4 \
    --write-profile "$dir/prof.txt" --json
if grep -q '^x2 16x64x16 ' "$dir/prof.txt"; then ok; else
    echo "the profile lists x2 with its extents on one device"
    bad sim --write-profile; fi
expect_json "$dir/p1.json" sim --model "$P" --devices 4 --profile "$dir/prof.txt" --json
sed 's/^x2 16x64x16 .*/x2 16x64x16 0.001/' "$dir/prof.txt" >"$dir/slow.txt"
expect_json "$dir/p2.json" sim --model "$P" --devices 4 --profile "$dir/slow.txt" --json
check "profile" '
import json, sys
a, b, c = (json.load(open(f)) for f in sys.argv[1:4])
# %.6g in the table: the same step to 6 digits
assert abs(a["step_seconds"] - b["step_seconds"]) <= 1e-5 * a["step_seconds"]
assert 0.00099 <= c["step_seconds"] - a["step_seconds"] <= 0.00101, c
' "$dir/p0.json" "$dir/p1.json" "$dir/p2.json"
printf 'nosuchop 16x64 0.1\n' >"$dir/bad1.txt"
expect_bad_msg 'no operator nosuchop' sim --model "$P" --devices 4 --profile "$dir/bad1.txt"
printf '# c\n\nx2 16x64 0.1\n' >"$dir/bad2.txt"
# the file first, then the line, then what is wrong
expect_bad_msg 'bad2.txt: line 3: profile: ' sim --model "$P" --devices 4 \
    --profile "$dir/bad2.txt"
printf 'x2 16x64x16 -1\n' >"$dir/bad3.txt"
expect_bad_msg 'positive' sim --model "$P" --devices 4 --profile "$dir/bad3.txt"
printf 'x2 16x64x16 1\nx2 16x64x16 2\n' >"$dir/bad4.txt"
expect_bad_msg 'twice' sim --model "$P" --devices 4 --profile "$dir/bad4.txt"
printf 'x2 16x64x99999 1\n' >"$dir/bad5.txt"
expect_bad_msg 'extent 3' sim --model "$P" --devices 4 --profile "$dir/bad5.txt"
expect_bad_msg 'missing-prof' sim --model "$P" --devices 4 --profile "$dir/missing-prof.txt"
expect_bad_msg 'p.txt: cannot write: No such file' sim --model "$P" --devices 4 --write-profile "$dir/no/such/p.txt"
# opened but not written (a full disk): exit 1, as for --svg, --timeline
# and stdout; a path that cannot be opened is the caller's (2, above)
if [ -w /dev/full ]; then
    for w in "--write-profile" "--timeline"; do
        run sim --model "$P" --devices 4 $w /dev/full
        if [ "$rc" -eq 1 ] && [ ! -s "$out" ] &&
            grep -q "^ktile: $w /dev/full: write failed" "$err"
        then ok; else bad sim $w /dev/full; fi
    done
    run plan --model "$P" --devices 4 --svg /dev/full
    if [ "$rc" -eq 1 ] && grep -q "^ktile: --svg /dev/full: write failed" "$err"
    then ok; else bad plan --svg /dev/full; fi
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
