#!/bin/sh
# test_cli_verify.sh -- the `ktile verify` contract of DESIGN.md "The ktile
# command line": {"ok", "max_rel_error", "bytes_moved", "predicted_bytes"}
# (first, in that order) on stdout; exit status 0 when the partitioned step
# equals the serial one and moves the predicted bytes, 1 when it does not,
# 2 for bad input ("ktile: ..." on stderr, nothing on stdout).  The bytes
# are those `ktile plan` prices, for the DP plan and for a plan file; a
# user's model file verifies; --topology runs the program sim simulates;
# --threads N gives the same report for every N, and 8192 devices run;
# --backend cuda is refused (--memory runs are test_cli_verify_memory.sh's).
#
# Needs python3 (json).  Environment: KTILE (default build/ktile), KT_WRAP
# (a command put in front of every ktile run, e.g. valgrind).  Ends with
# "N passed, M failed".

. "$(dirname "$0")/cli_lib.sh"
cli_setup verify
require_ktile
require_python

T=transformer:layers=1,dmodel=64,heads=4,ffn=256,seq=16,batch=4
M=mlp:layers=3,hidden=32,batch=12
if [ -n "${KT_WRAP:-}" ]; then # valgrind: a smaller transformer
    T=transformer:layers=1,dmodel=16,heads=4,ffn=32,seq=4,batch=4
fi

# A result of `verify --json`: the contract's keys first and in order,
# agreement, and the bytes moved equal to the prediction (argv[2]: the
# bytes `plan` printed, or -1).
VERIFY_OK='import json, sys
d = json.load(open(sys.argv[1]))
keys = list(d)
assert keys[:4] == ["ok", "max_rel_error", "bytes_moved",
                    "predicted_bytes"], keys
assert d["ok"] is True and d["values_ok"] is True and d["bytes_ok"] is True, d
assert isinstance(d["max_rel_error"], float), d
assert 0 <= d["max_rel_error"] <= 1e-7, d["max_rel_error"]
assert d["bytes_moved"] == d["predicted_bytes"], d
assert d["compared"] > 0 and d["mismatches"] == 0, d
assert d["first_mismatches"] == [], d
want = int(sys.argv[2])
assert want < 0 or d["predicted_bytes"] == want, (d["predicted_bytes"], want)
assert d["devices"] == int(sys.argv[3]), d["devices"]'

# The issue's acceptance case: the DP plan of a transformer on 4 devices.
expect_json "$dir/t4.json" verify --model "$T" --devices 4 --json &&
    check "verify transformer on 4 devices" "$VERIFY_OK" "$dir/t4.json" -1 4

# The bytes are the plan's: what `plan --json` prices, through --plan too.
if expect_json "$dir/plan.json" plan --model "$M" --devices 6 --json; then
    B=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total_bytes"])' "$dir/plan.json")
    expect_json "$dir/v6.json" verify --model "$M" --devices 6 --json &&
        check "verify DP plan = plan's bytes" "$VERIFY_OK" "$dir/v6.json" "$B" 6
    expect_json "$dir/vp.json" verify --model "$M" --plan "$dir/plan.json" --json &&
        check "verify --plan" "$VERIFY_OK" "$dir/vp.json" "$B" 6
fi
for s in data model greedy spartan; do
    if expect_json "$dir/p_$s.json" plan --model "$M" --devices 4 --strategy $s --json; then
        B=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total_bytes"])' "$dir/p_$s.json")
        expect_json "$dir/v_$s.json" verify --model "$M" --plan "$dir/p_$s.json" --json &&
            check "verify the $s plan" "$VERIFY_OK" "$dir/v_$s.json" "$B" 4
    fi
done

# A user's model file (README.md "Verifying a model file"): padding,
# pooling, broadcasting and a `loss` line, uneven over 3 devices.
cat >"$dir/model.txt" <<'MODEL'
# a small convolutional net
input x[6,2,10,10]
weight f[4,2,3,3]
weight s[4]
weight W[4,5,5,7]
o[n,co,h:10,w:10] = sum(ci,kh,kw) pad(x[n,ci,h+kh-1,w+kw-1]) * f[co,ci,kh,kw]
a[n,c,h,w] = relu(o[n,c,h,w] + s[c])
m[n,c,h,w] = max(dh:2,dw:2) a[n,c,h*2+dh,w*2+dw]
y[n,k] = sum(c,h,w) m[n,c,h,w] * W[c,h,w,k]
loss y
MODEL
expect_json "$dir/vf.json" verify --model-file "$dir/model.txt" --devices 3 --json &&
    check "verify a model file" "$VERIFY_OK" "$dir/vf.json" -1 3
expect_text 'OK' verify --model-file "$dir/model.txt" --factors 2,2
expect_text 'bytes moved' verify --model "$M" --devices 2 --seed 7

# A zoo convolution model at a small size (the zoo's image, width, fc and
# classes parameters); an image too small for it is bad input.
A=alexnet:batch=4,image=39,width=1,fc=8,classes=5
expect_json "$dir/va.json" verify --model "$A" --devices 3 --json &&
    check "verify a small alexnet on 3 devices" "$VERIFY_OK" "$dir/va.json" -1 3
expect_bad_msg 'image 38 is too small' verify --model alexnet:image=38 --devices 2

# Exit status 1 when the check fails: bit-for-bit equality of a plan that
# splits sums (model parallelism reduces partial sums in another order).
if expect_json "$dir/pm.json" plan --model mlp:layers=2,hidden=64,batch=16 \
    --devices 4 --strategy model --json; then
    run verify --model mlp:layers=2,hidden=64,batch=16 --plan "$dir/pm.json" \
        --tol 0 --eps 0 --json
    if [ "$rc" -eq 1 ] && [ ! -s "$err" ] && python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is False and d["values_ok"] is False and d["bytes_ok"] is True, d
assert d["mismatches"] > 0 and len(d["first_mismatches"]) > 0, d
m = d["first_mismatches"][0]
assert set(m) == {"tensor", "device", "index", "got", "want"}, m
assert m["got"] != m["want"], m' "$out"; then ok; else
        echo "expected exit status 1 and ok false"
        bad verify --tol 0 --eps 0
    fi
fi

# --topology: the program sim simulates on that topology (kt_lower_on),
# its bytes sim's; the collectives have a tree level per topology level,
# so one flat level lowers in fewer stages than two node levels.
if expect_json "$dir/st.json" sim --model "$M" --devices 8 \
    --topology nodes:2x4:300G:25G --json; then
    B=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bytes"])' "$dir/st.json")
    expect_json "$dir/vt.json" verify --model "$M" --devices 8 \
        --topology nodes:2x4:300G:25G --json &&
        check "verify --topology: sim's program" "$VERIFY_OK" "$dir/vt.json" "$B" 8
    expect_json "$dir/vflat.json" verify --model "$M" --devices 8 \
        --topology flat:8:100G --json &&
        check "verify --topology: a tree level per topology level" 'import json, sys
n, f = (json.load(open(a)) for a in sys.argv[1:3])
assert n["topology"] == "nodes:2x4:300G:25G", n["topology"]
assert f["ok"] and f["bytes_moved"] == n["bytes_moved"], (f, n)
assert f["stages"] == 2 and n["stages"] > f["stages"], (f["stages"], n["stages"])
assert n["transfers"] > 0 and f["transfers"] > 0, (n, f)' "$dir/vt.json" "$dir/vflat.json"
fi
printf 'level 2 25G\nlevel 4 300G\n' >"$dir/topo.txt"
expect_text 'lowered on   .*topo.txt, the program sim simulates' verify \
    --model "$M" --devices 8 --topology-file "$dir/topo.txt"
expect_text 'lowered on' verify --model "$M" --devices 8 \
    --topology nodes:2x4:300G:25G --memory 8M
expect_bad_msg 'not both' verify --model "$M" --devices 8 \
    --topology nodes:2x4:300G:25G --topology-file "$dir/topo.txt"
expect_bad_msg 'has 8 devices but the plan is for 4' verify --model "$M" \
    --devices 4 --topology nodes:2x4:300G:25G
expect_bad_msg 'nodes:2x4' verify --model "$M" --devices 8 --topology nodes:2x4
expect_bad_msg '--topology goes with --devices N' verify --model "$M" \
    --topology nodes:2x4:300G:25G --memory 8M

# Bad input: status 2, one line on stderr.
expect_bad_msg 'CUDA' verify --model "$M" --devices 2 --backend cuda
# work the CPU backend will not start: exit 2 at once, naming the op and
# line (this model ran for ever)
printf 'input x[4,4]\ny[i] = sum(j:70368744177664,k:70368744177664) x[i,0]\n' \
    >"$dir/hugesum.txt"
expect_bad_msg 'line 2: op y: 1.98e+28 index points' verify \
    --model-file "$dir/hugesum.txt" --devices 2
# worker threads: 1 to 4096; any count gives the same values and bytes
expect_bad_msg "threads '0': expected a whole number from 1 to 4096" verify \
    --model "$M" --devices 2 --threads 0
expect_bad_msg "threads '4097'" verify --model "$M" --devices 2 --threads 4097
expect_bad_msg "threads 'two'" verify --model "$M" --devices 2 --threads two
for n in 1 3 6 4096; do
    expect_json "$dir/th$n.json" verify --model "$M" --devices 6 --threads $n \
        --json
done
check "verify --threads 1, 3, 6, 4096: the same report" 'import json, sys
a, b, c, d = (json.load(open(f)) for f in sys.argv[1:])
assert a["ok"] is True and a == b == c == d, (a, b, c, d)' \
    "$dir/th1.json" "$dir/th3.json" "$dir/th6.json" "$dir/th4096.json"
# more devices than threads (a thread per device stopped at 4096 before)
if [ -z "${KT_WRAP:-}" ]; then
    printf 'input x[8192]\ny[i] = x[i] * x[i]\n' >"$dir/wide.txt"
    expect_json "$dir/wide.json" verify --model-file "$dir/wide.txt" \
        --devices 8192 --json &&
        check "verify on 8192 devices" "$VERIFY_OK" "$dir/wide.json" -1 8192
fi
expect_bad_msg 'memory' verify --model "$M" --devices 2 --memory 0
expect_bad_msg 'tpu' verify --model "$M" --devices 2 --backend tpu
expect_bad_msg 'seed' verify --model "$M" --devices 2 --seed -3
expect_bad_msg 'tol' verify --model "$M" --devices 2 --tol abc
expect_bad_msg 'model' verify --devices 2
expect_bad_msg 'devices' verify --model "$M"
expect_bad_msg 'frob' verify --model frob --devices 2
expect_bad_msg "unknown option '--bogus'" verify --model "$M" --devices 2 --bogus
printf 'input x[4,4]\ny[i] = opaque(cholesky, x[i,:])\n' >"$dir/opaque.txt"
expect_bad_msg 'cholesky' verify --model-file "$dir/opaque.txt" --devices 2
expect_text 'verify' help verify

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
