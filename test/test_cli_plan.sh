#!/bin/sh
# test_cli_plan.sh -- the `ktile zoo`, `ktile plan` and `ktile eval`
# contract of DESIGN.md "The ktile command line": one JSON object on stdout
# with the keys in order, nothing on stderr on success; "ktile: ..." on
# stderr, nothing on stdout and exit status 2 on bad input.  Plans printed
# by `plan --json` are read back by `eval --plan` and must cost the same.
#
# Needs python3 (json, xml.etree) to read the results.  The zoo tests run
# only when the zoo has models (kt_zoo_name(0) != NULL); until then they
# print "skip: ..." and are not counted.
#
# Environment: KTILE (default build/ktile), KT_WRAP (a command put in front
# of every ktile run, e.g. valgrind).  Ends with "N passed, M failed".

. "$(dirname "$0")/cli_lib.sh"
cli_setup plan
require_ktile
require_python

# ---------------------------------------------------------------- models

# A two-layer perceptron, forward only (no loss line: planned as written).
cat >"$dir/mlp.txt" <<'EOF'
# two-layer perceptron, forward only
input  x[64,32]
weight W1[32,32]
weight W2[32,16]
h[i,k] = sum(j) x[i,j] * W1[j,k]
a[i,k] = relu(h[i,k])
y[i,k] = sum(j) a[i,j] * W2[j,k]
EOF

# A training step written by hand: forward, backward, in-place update.
cat >"$dir/train.txt" <<'EOF'
input  x[64,32]
weight W[32,16]
input  dy[64,16]
y[i,k]  = sum(j) x[i,j] * W[j,k]
dx[i,j] = sum(k) dy[i,k] * W[j,k]
dW[j,k] = sum(i) x[i,j] * dy[i,k]
W[j,k]  = W[j,k] - 0.1 * dW[j,k]
EOF

# Rank 4 with a halo and pooling, for the drawing of folded dimensions.
cat >"$dir/conv.txt" <<'EOF'
input  x[8,4,10,10]
weight f[6,4,3,3]
c[n,co,h,w] = sum(ci,kh,kw) x[n,ci,h+kh,w+kw] * f[co,ci,kh,kw]
r[n,co,h,w] = relu(c[n,co,h,w])
m[n,c,h,w]  = max(dh:2,dw:2) r[n,c,h*2+dh,w*2+dw]
EOF

# The perceptron with a loss line: the backward pass is generated.
cat >"$dir/mlp_loss.txt" <<'EOF'
input  x[64,32]
weight W1[32,32]
weight W2[32,16]
h[i,k] = sum(j) x[i,j] * W1[j,k]
a[i,k] = relu(h[i,k])
y[i,k] = sum(j) a[i,j] * W2[j,k]
loss y
EOF

# The shape of every plan-shaped result (plan and eval): keys in order,
# per-cut bytes add up to the total, one tiling cut per factor.
SHAPE='
import json, sys
d = json.load(open(sys.argv[1]))
timed = len(sys.argv) > 2 and sys.argv[2] in ("time", "mcmc")
mcmc = len(sys.argv) > 2 and sys.argv[2] == "mcmc"
keys = ["devices", "factors", "total_bytes", "cut_bytes", "search_seconds",
        "memory_bytes"] + (["step_seconds"] if timed else []) + \
       (["simulated_step_seconds", "proposals_tried", "proposals_accepted",
         "chains"]
        if mcmc else []) + \
       ["tensors", "ops"]
assert list(d) == keys, "keys %s, expected %s" % (list(d), keys)
n = 1
for k in d["factors"]:
    assert isinstance(k, int) and k >= 2, d["factors"]
    n *= k
assert d["devices"] == n, (d["devices"], d["factors"])
assert len(d["cut_bytes"]) == len(d["factors"])
assert sum(d["cut_bytes"]) == d["total_bytes"], (d["cut_bytes"], d["total_bytes"])
assert d["total_bytes"] >= 0 and d["memory_bytes"] > 0
assert isinstance(d["search_seconds"], (int, float)) and d["search_seconds"] >= 0
if timed:
    assert isinstance(d["step_seconds"], float) and d["step_seconds"] > 0
if mcmc:
    assert isinstance(d["simulated_step_seconds"], float) and \
        d["simulated_step_seconds"] > 0
mem = 0
for t in d["tensors"]:
    assert list(t) == ["name", "shape", "tiling", "bytes_per_device"], list(t)
    assert isinstance(t["name"], str) and t["name"]
    assert all(isinstance(e, int) and e >= 1 for e in t["shape"])
    cuts = t["tiling"].split(".") if d["factors"] else []
    assert len(cuts) == len(d["factors"]) or (not d["factors"] and t["tiling"] == "-"), t
    for c in cuts:
        assert c == "R" or (c[0] == "S" and int(c[1:]) < len(t["shape"])), t
    assert t["bytes_per_device"] > 0
    mem += t["bytes_per_device"]
assert mem == d["memory_bytes"], (mem, d["memory_bytes"])
assert d["ops"], "no ops"
for o in d["ops"]:
    assert list(o) == ["name", "strategy"], list(o)
    s = o["strategy"]
    assert (not d["factors"] and s == "-") or len(s.split(".")) == len(d["factors"]), o
'

# plan and eval report the same plan and the same bytes.
SAME='
import json, sys
p = json.load(open(sys.argv[1]))
e = json.load(open(sys.argv[2]))
for k in ("devices", "factors", "total_bytes", "cut_bytes", "memory_bytes",
          "tensors", "ops"):
    assert p[k] == e[k], "%s: plan %s, eval %s" % (k, p[k], e[k])
assert e["search_seconds"] == 0, e["search_seconds"]
'

# ----------------------------------------------- plan -> eval round trips

# roundtrip NAME MODEL-FILE PLAN-ARGS...: plan --json, then eval of it
roundtrip() {
    name=$1
    model=$2
    shift 2
    if expect_json "$dir/$name.plan.json" plan \
        --model-file "$model" "$@" --json
    then
        check "plan $name: shape of the result" "$SHAPE" "$dir/$name.plan.json"
        if expect_json "$dir/$name.eval.json" eval --model-file "$model" \
            --plan "$dir/$name.plan.json" --json; then
            check "eval $name: shape of the result" "$SHAPE" \
                "$dir/$name.eval.json"
            check "plan $name: eval reports the same total_bytes" "$SAME" \
                "$dir/$name.plan.json" "$dir/$name.eval.json"
        fi
    fi
}

for s in dp data model; do
    roundtrip "mlp-$s" "$dir/mlp.txt" --devices 4 --strategy "$s"
    roundtrip "train-$s" "$dir/train.txt" --devices 8 --strategy "$s"
    roundtrip "train6-$s" "$dir/train.txt" --devices 6 --factors 3,2 \
        --strategy "$s"
    roundtrip "conv-$s" "$dir/conv.txt" --devices 4 --strategy "$s"
done
roundtrip mlp-bf "$dir/mlp.txt" --devices 2 --strategy bruteforce
roundtrip train-bf "$dir/train.txt" --devices 4 --strategy bruteforce
roundtrip mlp-default "$dir/mlp.txt" --devices 8
roundtrip train-factors "$dir/train.txt" --factors 4,2
roundtrip mlp-one "$dir/mlp.txt" --devices 1

check "one device: no cuts, nothing moves" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["devices"] == 1 and d["factors"] == [] and d["cut_bytes"] == []
assert d["total_bytes"] == 0
assert all(t["tiling"] == "-" for t in d["tensors"])
assert all(o["strategy"] == "-" for o in d["ops"])
' "$dir/mlp-one.plan.json"

check "factors: default prime factors, largest first; --factors as given" '
import json, sys
assert json.load(open(sys.argv[1]))["factors"] == [2, 2, 2]
assert json.load(open(sys.argv[2]))["factors"] == [4, 2]
assert json.load(open(sys.argv[3]))["factors"] == [3, 2]
' "$dir/mlp-default.plan.json" "$dir/train-factors.plan.json" \
    "$dir/train6-dp.plan.json"

# The baselines have fixed tilings (SOYBEAN 4.1): data parallelism
# replicates weights and splits the rest on dim 0; model parallelism splits
# weights on dim 0, activations on their last dim, replicates gradients.
check "data and model parallelism tile as SOYBEAN 4.1 says" '
import json, sys
d = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[2]))
t = {x["name"]: x["tiling"] for x in d["tensors"]}
assert t["W1"] == "R.R" and t["W2"] == "R.R", t
assert t["x"] == "S0.S0" and t["h"] == "S0.S0" and t["y"] == "S0.S0", t
t = {x["name"]: x["tiling"] for x in m["tensors"]}
assert t["W1"] == "S0.S0" and t["W2"] == "S0.S0", t
assert t["h"] == "S1.S1" and t["y"] == "S1.S1", t
assert m["total_bytes"] > 0
' "$dir/mlp-data.plan.json" "$dir/mlp-model.plan.json"

# One cut: the DP is exact, so it equals brute force and is no worse than
# either baseline (DESIGN.md "Tests": DP = brute force on small graphs).
for m in mlp train; do
    expect_json "$dir/$m-2dp.json" plan --model-file "$dir/$m.txt" \
        --devices 2 --json
    expect_json "$dir/$m-2bf.json" plan --model-file "$dir/$m.txt" \
        --devices 2 --strategy bruteforce --json
    expect_json "$dir/$m-2data.json" plan --model-file "$dir/$m.txt" \
        --devices 2 --strategy data --json
    expect_json "$dir/$m-2model.json" plan --model-file "$dir/$m.txt" \
        --devices 2 --strategy model --json
    check "$m on 2 devices: dp = bruteforce <= data, model" '
import json, sys
dp, bf, da, mo = (json.load(open(f))["total_bytes"] for f in sys.argv[1:])
assert dp == bf, (dp, bf)
assert dp <= da and dp <= mo, (dp, da, mo)
' "$dir/$m-2dp.json" "$dir/$m-2bf.json" "$dir/$m-2data.json" \
        "$dir/$m-2model.json"
done

check "training step on 8 devices moves bytes (weights and gradients meet)" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["total_bytes"] > 0, d["total_bytes"]
names = [o["name"] for o in d["ops"]]
assert "W.update" in names, names
' "$dir/train-dp.plan.json"

# ------------------------------------------------------ hand-edited plans

# Re-tile one weight (and its op strategies stay): a different, valid plan.
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for t in d["tensors"]:
    if t["name"] == "W1":
        assert t["tiling"] == "R.R", t
        t["tiling"] = "S1.S0"
json.dump(d, open(sys.argv[2], "w"), indent=2)
' "$dir/mlp-dp.plan.json" "$dir/edit1.json"
if expect_json "$dir/edit1.eval.json" eval --model-file "$dir/mlp.txt" \
    --plan "$dir/edit1.json" --json; then
    check "edited plan: shape of the result" "$SHAPE" "$dir/edit1.eval.json"
    check "edited plan: a different cost, the edit kept" '
import json, sys
p = json.load(open(sys.argv[1]))
e = json.load(open(sys.argv[2]))
assert e["total_bytes"] != p["total_bytes"], (e["total_bytes"], p["total_bytes"])
t = {x["name"]: x["tiling"] for x in e["tensors"]}
assert t["W1"] == "S1.S0", t
b = {x["name"]: x["bytes_per_device"] for x in e["tensors"]}
assert b["W1"] == 32 * 32 * 4 // 4, b
' "$dir/mlp-dp.plan.json" "$dir/edit1.eval.json"
fi

# Change an operator's strategy: splitting the reduction variable j makes
# a partial sum that must be reduced: it costs more than the DP's plan.
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for o in d["ops"]:
    if o["name"] == "h":
        o["strategy"] = "j.*"
json.dump(d, open(sys.argv[2], "w"))
' "$dir/mlp-dp.plan.json" "$dir/edit2.json"
if expect_json "$dir/edit2.eval.json" eval --model-file "$dir/mlp.txt" \
    --plan "$dir/edit2.json" --json; then
    check "edited strategy: costs more, reported as written" '
import json, sys
p = json.load(open(sys.argv[1]))
e = json.load(open(sys.argv[2]))
assert e["total_bytes"] > p["total_bytes"], (e["total_bytes"], p["total_bytes"])
assert sum(e["cut_bytes"]) == e["total_bytes"]
s = {o["name"]: o["strategy"] for o in e["ops"]}
assert s["h"] == "j.*", s
' "$dir/mlp-dp.plan.json" "$dir/edit2.eval.json"
fi

# Any valid JSON spelling of the same plan: reordered keys, extra keys,
# whitespace, escapes in names, no "devices", no "shape".
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ts = [{"tiling": t["tiling"], "name": t["name"], "note": [1, {"x": None}]}
      for t in reversed(d["tensors"])]
os_ = [{"strategy": o["strategy"], "name": o["name"]} for o in d["ops"]]
text = json.dumps({"ops": os_, "comment": "hand made \u00e9", "tensors": ts,
                   "factors": d["factors"], "ok": True}, indent=4,
                  ensure_ascii=True)
text = text.replace("\"W\"", "\"\\u0057\"").replace("\"x\"", "\"\\u0078\"")
text = text.replace("\"W.update\"", "\"W\\u002eupdate\"")
assert "\\u0057" in text and "\\u0078" in text and "\\u002e" in text
open(sys.argv[2], "w").write("\n\t " + text + " \r\n")
' "$dir/train-dp.plan.json" "$dir/respelled.json"
if expect_json "$dir/respelled.eval.json" eval --model-file "$dir/train.txt" \
    --plan "$dir/respelled.json" --json --devices 8; then
    check "respelled plan costs the same" "$SAME" "$dir/train-dp.plan.json" \
        "$dir/respelled.eval.json"
fi

# ------------------------------------------------------- objective, time

if expect_json "$dir/time.json" plan --model-file "$dir/train.txt" \
    --devices 8 --objective time --json; then
    check "--objective time: step_seconds" "$SHAPE" "$dir/time.json" time
fi
if expect_json "$dir/topo.json" plan --model-file "$dir/train.txt" \
    --devices 8 --topology nodes:2x4:300G:25G --json; then
    check "--topology: step_seconds" "$SHAPE" "$dir/topo.json" time
fi
if expect_json "$dir/topo-time.json" plan --model-file "$dir/train.txt" \
    --devices 8 --topology nodes:2x4:300G:25G --objective time --json; then
    check "--topology with --objective time" "$SHAPE" "$dir/topo-time.json" \
        time
fi
if expect_json "$dir/flat.json" plan --model-file "$dir/mlp.txt" \
    --devices 4 --topology flat:4:100G --json; then
    check "--topology flat: step_seconds" "$SHAPE" "$dir/flat.json" time
fi
if expect_json "$dir/time-eval.json" eval --model-file "$dir/train.txt" \
    --plan "$dir/topo.json" --topology nodes:2x4:300G:25G --json; then
    check "eval --topology: step_seconds, same bytes" "$SHAPE" \
        "$dir/time-eval.json" time
    check "eval --topology: the same step_seconds as plan" '
import json, sys
p = json.load(open(sys.argv[1]))
e = json.load(open(sys.argv[2]))
assert p["total_bytes"] == e["total_bytes"]
assert abs(p["step_seconds"] - e["step_seconds"]) <= 1e-9 * p["step_seconds"], (p["step_seconds"], e["step_seconds"])
' "$dir/topo.json" "$dir/time-eval.json"
fi
# Slower links, slower step: the same plan on 25 Gb/s between nodes.
if expect_json "$dir/slow.json" eval --model-file "$dir/train.txt" \
    --plan "$dir/topo.json" --topology nodes:2x4:300G:25Gb --json; then
    check "slower inter-node links give a longer step" '
import json, sys
a = json.load(open(sys.argv[1]))["step_seconds"]
b = json.load(open(sys.argv[2]))["step_seconds"]
assert b > a, (a, b)
' "$dir/topo.json" "$dir/slow.json"
fi

# ------------------------------------------------------------- memory cap

if expect_json "$dir/cap-none.json" plan --model-file "$dir/mlp.txt" \
    --devices 4 --json &&
    expect_json "$dir/cap.json" plan --model-file "$dir/mlp.txt" \
        --devices 4 --memory-cap 12K --json; then
    check "--memory-cap 12K: the plan fits and costs no less" '
import json, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
assert a["memory_bytes"] > 12 * 1024, a["memory_bytes"]
assert b["memory_bytes"] <= 12 * 1024, b["memory_bytes"]
assert b["total_bytes"] >= a["total_bytes"]
' "$dir/cap-none.json" "$dir/cap.json"
    expect_json "$dir/cap-big.json" plan --model-file "$dir/mlp.txt" \
        --devices 4 --memory-cap 1G --json
    check "--memory-cap 1G: the uncapped plan" '
import json, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
assert a["total_bytes"] == b["total_bytes"] and a["tensors"] == b["tensors"]
' "$dir/cap-none.json" "$dir/cap-big.json"
fi

# -------------------------------------------------------------------- svg

# tiles_ok PLAN.json FILE.svg: the SVG parses, and has one rect of class
# "tile" per tile of every drawn tensor (all tensors of these models are
# inputs, weights or activations): devices / copies.
TILES='
import json, sys
import xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
root = ET.parse(sys.argv[2]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
assert root.get("version") == "1.1"
assert not list(root.iter(ns + "script"))
rects = list(root.iter(ns + "rect"))
tiles = [r for r in rects if r.get("class") == "tile"]
want = 0
for t in d["tensors"]:
    copies = 1
    if d["factors"]:
        for c, k in zip(t["tiling"].split("."), d["factors"]):
            if c == "R":
                copies *= k
    want += d["devices"] // copies
assert len(tiles) == want, (len(tiles), want)
assert len(rects) >= want + d["devices"], (len(rects), want)
texts = "".join("".join(e.itertext()) for e in root.iter(ns + "text"))
for t in d["tensors"]:
    assert t["name"] in texts, t["name"]
for r in tiles:
    assert float(r.get("width")) > 0 and float(r.get("height")) > 0
    assert r.get("fill").startswith("#")
'
if expect_json "$dir/svg-train.json" plan --model-file "$dir/train.txt" \
    --devices 8 --svg "$dir/train.svg" --json; then
    check "--svg: one rect per tile" "$TILES" "$dir/svg-train.json" \
        "$dir/train.svg"
fi
if expect_json "$dir/svg-conv.json" plan --model-file "$dir/conv.txt" \
    --devices 4 --strategy model --svg "$dir/conv.svg" --json; then
    check "--svg, rank 4: one rect per tile" "$TILES" "$dir/svg-conv.json" \
        "$dir/conv.svg"
fi
if expect_json "$dir/svg-conv8.json" plan --model-file "$dir/conv.txt" \
    --devices 8 --svg "$dir/conv8.svg" --json; then
    check "--svg, rank 4 on 8 devices: one rect per tile" "$TILES" \
        "$dir/svg-conv8.json" "$dir/conv8.svg"
fi
if expect_json "$dir/svg-edit.json" eval --model-file "$dir/mlp.txt" \
    --plan "$dir/edit1.json" --svg "$dir/edit.svg" --json; then
    check "eval --svg: one rect per tile" "$TILES" "$dir/svg-edit.json" \
        "$dir/edit.svg"
fi
expect_ok plan --model-file "$dir/train.txt" --factors 2,2,2,2,2,2 \
    --svg "$dir/train64.svg"
expect_json "$dir/svg64.json" plan --model-file "$dir/train.txt" \
    --factors 2,2,2,2,2,2 --json
check "--svg on 64 devices: one rect per tile" "$TILES" "$dir/svg64.json" \
    "$dir/train64.svg"
# too many devices to draw: refused before the search, which here would
# take a while (a plan's drawing is checked as soon as its devices are
# known), and nothing written
expect_bad_msg 'a drawing shows at most 4096 devices' plan \
    --model-file "$dir/train.txt" --factors 1024,1024 --svg "$dir/big.svg"
if [ ! -e "$dir/big.svg" ]; then ok; else bad "--svg past 4096: file written"; fi

# ---------------------------------------------------------- text and help

expect_text 'total' plan --model-file "$dir/train.txt" --devices 8
expect_text 'W.update' plan --model-file "$dir/train.txt" --devices 8
expect_text 'bytes/device' eval --model-file "$dir/train.txt" \
    --plan "$dir/train-dp.plan.json"
# eval names the plan file it priced (it said "given (eval)")
expect_text "^plan      given ($dir/train-dp.plan.json)\$" eval \
    --model-file "$dir/train.txt" --plan "$dir/train-dp.plan.json"
expect_text 'step' plan --model-file "$dir/train.txt" --devices 8 \
    --objective time
expect_text '--strategy' help plan
expect_text 'mcmc' plan --help
expect_text '--plan' help eval
expect_text '--plan' eval --help
expect_text '--print' help zoo
expect_text 'plan' help
expect_text 'eval' --help

# -------------------------------------------------------------- bad input

M=$dir/mlp.txt
P=$dir/mlp-dp.plan.json
expect_bad_msg 'unknown' plan --model-file "$M" --devices 4 --strategy foo
# 2^20 devices are allowed, but not as 20 cuts: the message says what to do
expect_bad_msg 'give fewer, larger factors with --factors' plan \
    --model-file "$M" --devices 1048576
# ... with factors of the count given (the squarest two)
expect_bad_msg '(e.g. --factors 512,256)' plan --model-file "$M" \
    --devices 131072
expect_bad_msg '(e.g. --factors 768,512)' plan --model-file "$M" \
    --devices 393216
for s in greedy spartan equalchop mcmc; do
    # Refused until tiling.h offers the search; then it must plan.
    run plan --model-file "$M" --devices 4 --strategy "$s" --json
    if [ "$rc" -eq 2 ] && grep -q "strategy $s is not implemented yet" "$err"
    then
        ok
    elif [ "$rc" -eq 0 ] && [ ! -s "$err" ]; then
        cp "$out" "$dir/s.json"
        # mcmc simulates, so it always reports the step time, and its
        # proposal counts
        if [ "$s" = mcmc ]; then
            check "--strategy $s" "$SHAPE" "$dir/s.json" mcmc
        else
            check "--strategy $s" "$SHAPE" "$dir/s.json"
        fi
    else
        echo "expected 'strategy $s is not implemented yet' or a plan"
        bad plan --model-file "$M" --devices 4 --strategy "$s" --json
    fi
done
# MCMC options: the same seed and budget give the same plan, another seed
# may not; options of mcmc are refused for the other searches
expect_json "$dir/mc1.json" plan --model-file "$M" --devices 4 \
    --strategy mcmc --proposals 120 --seed 5 --beta 10 --restarts 3 --json
expect_json "$dir/mc2.json" plan --model-file "$M" --devices 4 \
    --strategy mcmc --proposals 120 --seed 5 --beta 10 --restarts 3 --json
if python3 - "$dir/mc1.json" "$dir/mc2.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["tensors"] == b["tensors"] and a["ops"] == b["ops"]
assert a["step_seconds"] == b["step_seconds"] and a["step_seconds"] > 0
assert a["proposals_tried"] == b["proposals_tried"] <= 120
assert 0 <= a["proposals_accepted"] <= a["proposals_tried"]
assert a["chains"] == b["chains"] == 3  # (120 proposals: 40 a chain)
PY
then ok; else echo "mcmc: same seed, different plans"; bad plan mcmc; fi
# seed 0 is a seed like any other (it was refused here, taken by verify
# and swap): the library takes it as 0x9e3779b97f4a7c15 (a generator
# stuck at 0 would differ), and seeds run to 2^64 - 1 as the library's do
expect_json "$dir/mc0a.json" plan --model-file "$M" --devices 4 \
    --strategy mcmc --proposals 60 --seed 0 --json
expect_json "$dir/mc0b.json" plan --model-file "$M" --devices 4 \
    --strategy mcmc --proposals 60 --seed 11400714819323198485 --json
check "mcmc --seed 0 = --seed 0x9e3779b97f4a7c15" 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
a.pop("search_seconds"); b.pop("search_seconds")
assert a == b' "$dir/mc0a.json" "$dir/mc0b.json"
expect_json "$dir/mcmax.json" plan --model-file "$M" --devices 4 \
    --strategy mcmc --proposals 20 --seed 18446744073709551615 --json
expect_bad_msg "seed '18446744073709551616': expected a whole number from 0 to 18446744073709551615" \
    plan --model-file "$M" --devices 4 --strategy mcmc \
    --seed 18446744073709551616
expect_bad_msg "seed '-1': expected a whole number from 0" plan \
    --model-file "$M" --devices 4 --strategy mcmc --seed -1
expect_bad_msg "seed 'x': expected a whole number from 0" verify \
    --model-file "$M" --devices 4 --seed x
expect_bad_msg "seed '1.5': expected a whole number from 0" swap \
    --model-file "$M" --memory 1G --seed 1.5
# a proposal budget below the chain count ends after that many (shares of
# 0 once meant no limit; --seconds is only a safety net here)
expect_json "$dir/mc4.json" plan --model-file "$M" --devices 4 \
    --strategy mcmc --proposals 1 --restarts 2 --seconds 30 --json
if python3 - "$dir/mc4.json" <<'PY'
import json, sys
assert json.load(open(sys.argv[1]))["proposals_tried"] == 1
PY
then ok; else echo "mcmc: --proposals 1 --restarts 2 tried more"; bad plan mcmc; fi
expect_json "$dir/mc3.json" plan --model-file "$M" --devices 4 \
    --strategy mcmc --seconds 0.2 --json
# --objective bytes without --start dp would be ignored by mcmc (which
# minimises simulated time): refused; with --start dp it picks the start
expect_bad_msg "--objective bytes would be ignored" plan --model-file "$M" \
    --devices 4 --strategy mcmc --proposals 10 --objective bytes
expect_ok plan --model-file "$M" --devices 4 --strategy mcmc --proposals 10 \
    --objective bytes --start dp
expect_ok plan --model-file "$M" --devices 4 --strategy mcmc --proposals 10 \
    --objective time
# the text says which step time it shows: mcmc's is simulated, on the
# topology it used (flat:N:450G by default), and --objective only picks
# the DP plan that --start dp refines; the other searches' is the model's
expect_text 'objective simulated time, from data parallelism' plan \
    --model-file "$M" --devices 4 --strategy mcmc --proposals 20
expect_text 'modelled on flat:4:450G' plan --model-file "$M" --devices 4 \
    --strategy mcmc --proposals 20
expect_text 'simulated there (what mcmc minimised)' plan --model-file "$M" \
    --devices 4 --strategy mcmc --proposals 20
# step_seconds is the model's for every search, so an mcmc plan and its
# eval on the same topology agree (mcmc's used to be the simulated step
# under the same key, which eval could never reproduce); the simulated
# step is ktile sim's for the same plan
MS=mlp:layers=2,hidden=256,batch=32 # (its two figures differ 3-4x)
for topo in "" "nodes:2x2:300G:25G"; do
    topt=""
    [ -n "$topo" ] && topt="--topology $topo"
    # shellcheck disable=SC2086
    expect_json "$dir/mcs.json" plan --model "$MS" --devices 4 \
        --strategy mcmc --proposals 40 $topt --json
    # shellcheck disable=SC2086
    expect_json "$dir/mcs.eval.json" eval --model "$MS" \
        --plan "$dir/mcs.json" --objective time $topt --json
    # shellcheck disable=SC2086
    expect_json "$dir/mcs.sim.json" sim --model "$MS" \
        --plan "$dir/mcs.json" $topt --json
    check "mcmc${topo:+ on $topo}: step_seconds = eval's; simulated = sim's" '
import json, sys
p, e, s = (json.load(open(f)) for f in sys.argv[1:4])
assert p["step_seconds"] == e["step_seconds"], (p["step_seconds"],
                                                e["step_seconds"])
assert p["step_seconds"] < p["simulated_step_seconds"] / 2, p
r = abs(p["simulated_step_seconds"] - s["step_seconds"]) / s["step_seconds"]
assert r < 1e-8, (p["simulated_step_seconds"], s["step_seconds"])  # 9 digits
' "$dir/mcs.json" "$dir/mcs.eval.json" "$dir/mcs.sim.json"
done
expect_text 'from the DP plan by time' plan --model-file "$M" --devices 4 \
    --strategy mcmc --proposals 20 --start dp --objective time
expect_text 'modelled on nodes:2x2:300G:25G' plan --model-file "$M" \
    --devices 4 --topology nodes:2x2:300G:25G
# where data parallelism does not apply (3 rows over 4 devices) the chain
# starts from the DP plan, and says so
printf 'input x[3,64]\nweight W[64,64]\ny[i,k] = sum(j) x[i,j] * W[j,k]\n' \
    >"$dir/rows3.txt"
expect_text 'from the DP plan by bytes (data parallelism does not apply)' \
    plan --model-file "$dir/rows3.txt" --devices 4 --strategy mcmc \
    --proposals 20
# --profile: the chains simulate with measured compute times (here the
# modelled ones times 10), and the plan's simulated step is ktile sim's
# with the same profile
expect_ok sim --model-file "$M" --devices 4 --write-profile "$dir/mprof.txt"
awk '/^#/ { print; next } { $3 = $3 * 10; print }' "$dir/mprof.txt" \
    >"$dir/mprof10.txt"
expect_json "$dir/mcp0.json" plan --model-file "$M" --devices 4 \
    --strategy mcmc --proposals 40 --json
expect_json "$dir/mcp.json" plan --model-file "$M" --devices 4 \
    --strategy mcmc --proposals 40 --profile "$dir/mprof10.txt" --json
expect_json "$dir/mcp.sim.json" sim --model-file "$M" --plan "$dir/mcp.json" \
    --profile "$dir/mprof10.txt" --json
check "mcmc --profile: simulated with the profile's times" '
import json, sys
p0, p, s = (json.load(open(f)) for f in sys.argv[1:4])
assert p["simulated_step_seconds"] > 2 * p0["simulated_step_seconds"], (p, p0)
r = abs(p["simulated_step_seconds"] - s["step_seconds"]) / s["step_seconds"]
assert r < 1e-8, (p["simulated_step_seconds"], s["step_seconds"])
' "$dir/mcp0.json" "$dir/mcp.json" "$dir/mcp.sim.json"
expect_text 'compute times from the profile .*mprof10.txt' plan \
    --model-file "$M" --devices 4 --strategy mcmc --proposals 20 \
    --profile "$dir/mprof10.txt"
expect_bad_msg 'option of --strategy mcmc' plan --model-file "$M" \
    --devices 4 --profile "$dir/mprof10.txt"
expect_bad_msg "$dir/nonexistent.txt" plan --model-file "$M" --devices 4 \
    --strategy mcmc --profile "$dir/nonexistent.txt"
printf 'nosuchop 4x4 1e-3\n' >"$dir/badprof.txt"
expect_bad_msg 'badprof.txt: line 1: .*nosuchop' plan --model-file "$M" --devices 4 \
    --strategy mcmc --profile "$dir/badprof.txt"
printf 'level 4 1G\nkind a flops 1T membw 1T\ndevices all a\n' \
    >"$dir/kinda.txt"
awk '/^#/ { next } { print $1, $2, $3, "b" }' "$dir/mprof.txt" \
    >"$dir/kindb.txt"
expect_bad_msg 'kindb.txt' plan --model-file "$M" --devices 4 \
    --strategy mcmc --topology-file "$dir/kinda.txt" \
    --profile "$dir/kindb.txt"
expect_bad_msg 'option of --strategy mcmc' plan --model-file "$M" \
    --devices 4 --seed 3
expect_bad_msg 'option of --strategy mcmc' plan --model-file "$M" \
    --devices 4 --strategy dp --proposals 10
expect_bad_msg '--seconds' plan --model-file "$M" --devices 4 \
    --strategy mcmc --seconds -1
expect_bad_msg "seconds '2e6': expected a time budget in seconds above 0, at most 1e6" \
    plan --model-file "$M" --devices 4 --strategy mcmc --seconds 2e6
expect_bad_msg "seconds 'nan'" plan --model-file "$M" --devices 4 \
    --strategy mcmc --seconds nan
expect_bad_msg "beta '0': expected a number above 0, at most 1e9" \
    plan --model-file "$M" --devices 4 --strategy mcmc --beta 0
expect_bad_msg "beta 'inf'" plan --model-file "$M" --devices 4 \
    --strategy mcmc --beta inf
expect_bad_msg '--proposals' plan --model-file "$M" --devices 4 \
    --strategy mcmc --proposals 0
expect_bad_msg '--beta' plan --model-file "$M" --devices 4 \
    --strategy mcmc --beta x
expect_bad_msg '--restarts' plan --model-file "$M" --devices 4 \
    --strategy mcmc --restarts 0
expect_bad_msg '6 devices' plan --model-file "$M" --devices 4 --factors 2,3
expect_bad plan --model-file "$M" --devices 0
expect_bad plan --model-file "$M" --devices x
expect_bad plan --model-file "$M" --factors 2,1
expect_bad_msg "missing --devices" plan --model-file "$M"
expect_bad plan --devices 4
expect_bad plan --model-file "$M" --model mlp --devices 4
expect_bad plan --model-file "$dir/nonexistent.txt" --devices 4
printf 'input x[4,4]\ny[i,j] = relu(z[i,j])\n' >"$dir/broken.txt"
expect_bad plan --model-file "$dir/broken.txt" --devices 2
expect_bad plan --model-file "$M" --devices 4 --objective speed
expect_bad plan --model-file "$M" --devices 4 --topology bogus
expect_bad plan --model-file "$M" --devices 4 --topology nodes:2x:300G:25G
expect_bad plan --model-file "$M" --devices 4 --topology flat:4:fast
expect_bad plan --model-file "$M" --devices 4 --topology flat:4:nan
expect_bad plan --model-file "$M" --devices 4 --topology nodes:1x4:inf:300G
expect_bad_msg 'topology' plan --model-file "$M" --devices 4 \
    --topology nodes:2x4:300G:25G
expect_bad_msg 'no plan fits' plan --model-file "$M" \
    --devices 4 --memory-cap 100
expect_bad plan --model-file "$M" --devices 4 --memory-cap 0
expect_bad plan --model-file "$M" --devices 4 --memory-cap 12X
expect_bad plan --model-file "$M" --devices 4 --svg "$dir/no/such/dir/x.svg"
expect_bad plan --model-file "$M" --devices 4 --bogus
expect_bad plan --model-file "$M" --devices 4 extra
expect_bad plan --model-file "$M" --devices 4 --json=yes
# 64 rows cannot be split into 128 parts: the baselines cannot tile it.
expect_bad plan --model-file "$M" --devices 128 --strategy data

expect_bad_msg 'missing --plan' eval --model-file "$M" --devices 4
expect_bad eval --plan "$P" --devices 4
expect_bad eval --model-file "$M" --plan "$dir/nonexistent.json"
expect_bad_msg '8' eval --model-file "$M" --plan "$P" --devices 8
expect_bad_msg 'factors' eval --model-file "$M" --plan "$P" --factors 4
expect_bad eval --model-file "$M" --plan "$P" --topology nodes:2x4:300G:25G

# Malformed JSON: exit 2 with the line and column.
badjson() { # badjson NAME TEXT
    printf '%s' "$2" >"$dir/$1.json"
    expect_bad_msg 'line [0-9]*, column [0-9]*' eval \
        --model-file "$M" --plan "$dir/$1.json"
}
badjson empty ''
badjson truncated '{"devices": 4, "factors": [2, 2], "tensors": ['
badjson comma '{"factors": [2, 2],}'
badjson acomma '{"factors": [2, 2,]}'
badjson quote "{'factors': [2, 2]}"
badjson escape '{"factors": [2, 2], "x": "\q"}'
badjson surrogate '{"factors": [2, 2], "x": "\ud800"}'
badjson lowsurrogate '{"factors": [2, 2], "x": "\udc00"}'
badjson nul '{"factors": [2, 2], "x": "\u0000"}'
badjson hex '{"factors": [2, 2], "x": "\u12"}'
badjson nan '{"factors": [NaN]}'
badjson zero '{"factors": [02]}'
badjson dot '{"factors": [2.]}'
badjson exp '{"factors": [2e]}'
badjson minus '{"factors": [-]}'
badjson dup '{"factors": [2, 2], "factors": [2, 2]}'
# a repeat among many keys (a hash of the keys, not a scan, finds it),
# named at the second occurrence (key 91, k0 again, at column 892)
python3 -c 'import sys; open(sys.argv[1], "w").write("{" + ", ".join(
    "\"k%d\": 0" % (i % 90) for i in range(98)) + "}")' "$dir/dups.json"
expect_bad_msg 'line 1, column 892: key "k0" appears twice' eval \
    --model-file "$M" --plan "$dir/dups.json"
badjson trailing '{"factors": [2, 2]} {}'
badjson literal '{"factors": [2, 2], "x": tru}'
badjson unterminated '{"factors": [2, 2], "x": "abc'
badjson nokey '{2: 3}'
badjson colon '{"factors" [2, 2]}'
printf '{"x": "a\tb"}' >"$dir/ctl.json"
expect_bad_msg 'control character' eval --model-file "$M" \
    --plan "$dir/ctl.json"
python3 -c \
    'import sys; open(sys.argv[1], "w").write("[" * 100000 + "]" * 100000)' \
    "$dir/deep.json"
expect_bad_msg 'deeper' eval --model-file "$M" --plan "$dir/deep.json"
printf '{"a": [1, 2,\n   3 4]}' >"$dir/where.json"
expect_bad_msg 'line 2, column 6' eval --model-file "$M" \
    --plan "$dir/where.json"

# Well-formed JSON that is not a plan for this model.
edit() { # edit NAME 'PYTHON on d'
    python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
$2
json.dump(d, open(sys.argv[2], 'w'))
" "$P" "$dir/$1.json"
}
edit unknown_tensor 'd["tensors"][0]["name"] = "nosuch"'
expect_bad_msg 'nosuch' eval --model-file "$M" \
    --plan "$dir/unknown_tensor.json"
edit missing_tensor 'del d["tensors"][2]'
expect_bad_msg 'W2' eval --model-file "$M" --plan "$dir/missing_tensor.json"
edit twice_tensor 'd["tensors"].append(dict(d["tensors"][0]))'
expect_bad_msg 'more than once' eval --model-file "$M" \
    --plan "$dir/twice_tensor.json"
edit unknown_op 'd["ops"][0]["name"] = "nosuchop"'
expect_bad_msg 'nosuchop' eval --model-file "$M" --plan "$dir/unknown_op.json"
edit missing_op 'del d["ops"][1]'
expect_bad_msg 'missing' eval --model-file "$M" --plan "$dir/missing_op.json"
edit twice_op 'd["ops"].append(dict(d["ops"][1]))'
expect_bad_msg "op listed more than once: $(python3 -c '
import json, sys
print(json.load(open(sys.argv[1]))["ops"][1]["name"])' "$P")" \
    eval --model-file "$M" --plan "$dir/twice_op.json"
# ops are found by name in any order (a sorted index): reversed, the same
edit reversed_ops 'd["ops"].reverse(); d["tensors"].reverse()'
if expect_json "$dir/reversed_ops.eval.json" eval --model-file "$M" \
    --plan "$dir/reversed_ops.json" --json; then
    check "ops and tensors reversed: the same plan" '
import json, sys
p = json.load(open(sys.argv[1]))
e = json.load(open(sys.argv[2]))
assert e["total_bytes"] == p["total_bytes"], (e["total_bytes"], p["total_bytes"])
s = {o["name"]: o["strategy"] for o in e["ops"]}
assert s == {o["name"]: o["strategy"] for o in p["ops"]}, s
' "$P" "$dir/reversed_ops.eval.json"
fi
edit bad_tiling 'd["tensors"][1]["tiling"] = "S7.R"'
expect_bad_msg 'W1' eval --model-file "$M" --plan "$dir/bad_tiling.json"
edit partial_tiling 'd["tensors"][1]["tiling"] = "P.R"'
expect_bad eval --model-file "$M" --plan "$dir/partial_tiling.json"
edit short_tiling 'd["tensors"][1]["tiling"] = "S0"'
expect_bad eval --model-file "$M" --plan "$dir/short_tiling.json"
edit garbage_tiling 'd["tensors"][1]["tiling"] = "S0,S1"'
expect_bad eval --model-file "$M" --plan "$dir/garbage_tiling.json"
edit bad_strategy 'd["ops"][0]["strategy"] = "q.i"'
expect_bad_msg 'q' eval --model-file "$M" --plan "$dir/bad_strategy.json"
edit short_strategy 'd["ops"][0]["strategy"] = "i"'
expect_bad eval --model-file "$M" --plan "$dir/short_strategy.json"
edit shape 'd["tensors"][0]["shape"] = [64, 33]'
expect_bad_msg 'shape' eval --model-file "$M" --plan "$dir/shape.json"
edit devices 'd["devices"] = 8'
expect_bad_msg 'devices' eval --model-file "$M" --plan "$dir/devices.json"
edit factor1 'd["factors"] = [4, 1]'
expect_bad eval --model-file "$M" --plan "$dir/factor1.json"
# JSON does not tell 2 from 2.0 (a Python float prints so): whole values
# are taken however written, a fraction is refused naming the value
edit factorf 'd["factors"] = [2.0, 2]; d["devices"] = 4.0
d["tensors"][0]["shape"] = [float(x) for x in d["tensors"][0]["shape"]]'
if expect_json "$dir/factorf.eval.json" eval --model-file "$M" \
    --plan "$dir/factorf.json" --json; then
    check "factors 2.0, devices 4.0, a shape in floats: the same plan" '
import json, sys
p, e = (json.load(open(f)) for f in sys.argv[1:3])
assert e["total_bytes"] == p["total_bytes"] and e["factors"] == [2, 2]
assert e["devices"] == 4 and isinstance(e["devices"], int)
' "$P" "$dir/factorf.eval.json"
fi
bad_edit() { # bad_edit NAME 'PYTHON on d' 'MESSAGE PATTERN'
    edit "$1" "$2"
    expect_bad_msg "$3" eval --model-file "$M" --plan "$dir/$1.json"
}
bad_edit factorh 'd["factors"] = [2.5, 2]' 'factor 1 is 2.5; a cut factor is a whole number from 2 up'
bad_edit factor1b 'd["factors"] = [4, 1]' 'factor 2 is 1; a cut factor'
bad_edit factorbig 'd["factors"] = [1024, 1024, 2]' 'factors 1..3 make more than 1048576 devices'
bad_edit short_strategy1 'd["ops"][0]["strategy"] = "i"' "strategy 'i' has 1 cut, the plan 2"
bad_edit s8_tiling 'd["tensors"][1]["tiling"] = "S8.R"' "S8 names dimension 8, and no tensor has more than 8"
# a generated op (no line of its own, variable names shared with the
# forward op) is named when its strategy splits a variable too far
printf 'input x[4,3]\nweight W[3,2]\ny[i,k] = sum(j) x[i,j] * W[j,k]\nloss y\n' \
    >"$dir/tiny_loss.txt"
if expect_json "$dir/tiny_loss.json" plan --model-file "$dir/tiny_loss.txt" \
    --devices 4 --json; then
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for o in d["ops"]:
    if o["name"] == "W.update": o["strategy"] = "i1.i1"
json.dump(d, open(sys.argv[2], "w"))' "$dir/tiny_loss.json" "$dir/tiny_upd.json"
    expect_bad_msg 'op W.update: index variable i1 (2) has fewer elements than 4 parts' \
        eval --model-file "$dir/tiny_loss.txt" --plan "$dir/tiny_upd.json"
fi
bad_edit devicesh 'd["devices"] = 4.5' '"devices" is 4.5; it must be 4'
bad_edit devicess 'd["devices"] = "4"' '"devices" is a string'
bad_edit devicese 'd["devices"] = 4e100' '"devices" is 4e+100'
# whole or not is read from the digits, not from a rounded double
raw_devices() { # raw_devices NAME LITERAL: the plan with "devices": LITERAL
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["devices"] = "@@"
open(sys.argv[2], "w").write(json.dumps(d).replace("\"@@\"", sys.argv[3]))
' "$P" "$dir/$1.json" "$2"
}
raw_devices round 3.9999999999999999
expect_bad_msg '"devices" is 3.9999999999999999;' eval --model-file "$M" \
    --plan "$dir/round.json"
raw_devices e40 40e-1
expect_json "$dir/e40.eval.json" eval --model-file "$M" --plan "$dir/e40.json" --json
raw_devices big 9007199254740993.0
expect_bad_msg '"devices" is 9007199254740993.0;' eval --model-file "$M" \
    --plan "$dir/big.json"
edit nofactors 'del d["factors"]'
expect_bad_msg 'factors' eval --model-file "$M" --plan "$dir/nofactors.json"
edit notensors 'del d["tensors"]'
expect_bad_msg 'tensors' eval --model-file "$M" --plan "$dir/notensors.json"
edit tensor_number 'd["tensors"][0] = 3'
expect_bad eval --model-file "$M" --plan "$dir/tensor_number.json"
edit tiling_number 'd["tensors"][0]["tiling"] = 3'
expect_bad eval --model-file "$M" --plan "$dir/tiling_number.json"
edit root_array 'd = [d]'
expect_bad_msg 'object' eval --model-file "$M" --plan "$dir/root_array.json"
# A plan for another model.
expect_bad eval --model-file "$dir/train.txt" --plan "$P"

# ---------------------------------------------------------------- the zoo

# zoo --json always answers; the zoo tests need models in it.
if expect_json "$dir/zoo.json" zoo --json; then
    check "zoo --json: {\"models\": [{\"name\", \"params\", \"about\"}]}" '
import json, sys
d = json.load(open(sys.argv[1]))
assert list(d) == ["models"] and isinstance(d["models"], list)
for m in d["models"]:
    assert list(m) == ["name", "params", "about"], m
    assert all(isinstance(v, str) for v in m.values()), m
    assert m["name"]
' "$dir/zoo.json"
fi
if python3 -c 'import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["models"] else 1)' \
    "$dir/zoo.json" 2>/dev/null; then
    SPEC=mlp:layers=2,hidden=64,batch=32
    check "the zoo has the models DESIGN.md names" '
import json, sys
names = [m["name"] for m in json.load(open(sys.argv[1]))["models"]]
for n in ("mlp", "wresnet", "rnn", "transformer", "alexnet", "vgg16"):
    assert n in names, (n, names)
' "$dir/zoo.json"
    expect_text 'mlp' zoo
    if expect_json "$dir/zoo-plan.json" plan --model "$SPEC" --devices 4 \
        --json; then
        check "plan --model $SPEC" "$SHAPE" "$dir/zoo-plan.json"
        check "plan --model $SPEC: a training graph" '
import json, sys
d = json.load(open(sys.argv[1]))
names = [o["name"] for o in d["ops"]]
assert any(n.endswith(".update") for n in names), names
' "$dir/zoo-plan.json"
        if expect_json "$dir/zoo-eval.json" eval --model "$SPEC" \
            --plan "$dir/zoo-plan.json" --devices 4 --json; then
            check "eval --model $SPEC: same bytes" "$SAME" \
                "$dir/zoo-plan.json" "$dir/zoo-eval.json"
        fi
    fi
    # --print gives a model file that plans like the spec.
    if expect_ok zoo --print "$SPEC"; then
        cp "$out" "$dir/zoo-model.txt"
        if expect_json "$dir/zoo-file-plan.json" plan \
            --model-file "$dir/zoo-model.txt" --devices 4 --json; then
            check "zoo --print text plans like --model" '
import json, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
assert a["total_bytes"] == b["total_bytes"], (a["total_bytes"], b["total_bytes"])
assert [t["name"] for t in a["tensors"]] == [t["name"] for t in b["tensors"]]
' "$dir/zoo-plan.json" "$dir/zoo-file-plan.json"
        fi
    fi
    if expect_json "$dir/zoo-print.json" zoo --print "$SPEC" --json; then
        check "zoo --print --json: {\"spec\", \"training\", \"text\"}" '
import json, sys
d = json.load(open(sys.argv[1]))
assert list(d) == ["spec", "training", "text"], list(d)
assert d["training"] is True and "\n" in d["text"]
assert d["text"] == open(sys.argv[2]).read().rstrip("\n") + "\n" or \
       d["text"] == open(sys.argv[2]).read()
' "$dir/zoo-print.json" "$dir/zoo-model.txt"
    fi
    # A model file with a loss line gets its backward pass generated.
    if expect_json "$dir/loss.json" plan --model-file "$dir/mlp_loss.txt" \
        --devices 4 --json; then
        check "model file with a loss line: gradients and updates" '
import json, sys
d = json.load(open(sys.argv[1]))
names = [t["name"] for t in d["tensors"]]
assert "dW1" in names and "dW2" in names, names
ops = [o["name"] for o in d["ops"]]
assert "W1.update" in ops and "W2.update" in ops, ops
' "$dir/loss.json"
        if expect_json "$dir/loss-eval.json" eval \
            --model-file "$dir/mlp_loss.txt" --plan "$dir/loss.json" --json
        then
            check "loss model: eval reports the same bytes" "$SAME" \
                "$dir/loss.json" "$dir/loss-eval.json"
        fi
    fi
    if expect_json "$dir/zoo-svg.json" plan --model "$SPEC" --devices 4 \
        --svg "$dir/zoo.svg" --json; then
        check "zoo model --svg parses" '
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag.endswith("svg")
assert [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == "tile"]
' "$dir/zoo.svg"
    fi
    expect_bad plan --model nosuchmodel --devices 4
    expect_bad plan --model mlp:layers=x --devices 4
    expect_bad zoo --print nosuchmodel
else
    echo "skip: zoo tests (the zoo has no models yet: kt_zoo_name(0) is NULL)"
fi
expect_bad zoo --bogus
expect_bad zoo extra

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
