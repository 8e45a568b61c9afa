#!/bin/sh
# test_cli.sh -- the `ktile cost` contract of DESIGN.md "The ktile command
# line": exact JSON on stdout, nothing on stderr on success; "ktile: ..." on
# stderr, nothing on stdout and exit status 2 on bad input.
#
# Environment: KTILE (default build/ktile), KT_WRAP (a command put in front
# of every ktile run, e.g. valgrind).  Ends with "N passed, M failed".

. "$(dirname "$0")/cli_lib.sh"
cli_setup cli

# expect_json (exact; replaces cli_lib.sh's) 'EXACT STDOUT LINE' ARGS...
expect_json() {
    want=$1
    shift
    run "$@"
    if [ "$rc" -eq 0 ] && [ ! -s "$err" ] &&
        printf '%s\n' "$want" | cmp -s - "$out"; then
        ok
    else
        echo "expected exactly: $want"
        bad "$@"
    fi
}

require_ktile

# P -> R of a 4x4 float32 over 2 devices is an all-reduce: 2(k-1)S, S = 64.
expect_json '{"bytes": 128}' cost --shape 4x4 --factors 2 --from P --to R --json
expect_json '{"bytes": 128}' cost --json --to=R --from=P --factors=2 --shape=4x4

# 8x6 float32 on factors 2,2 (device d = (d/2, d%2)), S0.S1 -> R.S0.
# S0.S1: device (a,b) holds rows [4a,4a+4) x cols [3b,3b+3), 12 elements.
# R.S0:  device (a,b) needs rows [4b,4b+4) x all 6 cols, 24 elements.
# Device 0 (0,0) has 12 of its 24 and lacks 12; device 3 (1,1) likewise;
# devices 1 (0,1) and 2 (1,0) hold none of the rows they need: 24 each.
# Total 12+24+24+12 = 72 elements = 288 bytes at 4 bytes each.
expect_json '{"bytes": 288}' cost --shape 8x6 --factors 2,2 --from S0.S1 --to R.S0 --json
expect_json '{"bytes": 576}' cost --shape 8x6 --factors 2,2 --from S0.S1 --to R.S0 --dtype-bytes 8 --json
# --devices 4 without --factors: prime factors 2,2.
expect_json '{"bytes": 288}' cost --shape 8x6 --devices 4 --from S0.S1 --to R.S0 --json
expect_json '{"bytes": 288}' cost --shape 8x6 --devices 4 --factors 2,2 --from S0.S1 --to R.S0 --json
# Back again is not free: R.S0 puts rows [4b,4b+4) on device (a,b), but
# S0.S1 wants rows [4a,4a+4) there, so devices 1 (0,1) and 2 (1,0) each
# lack a 4x3 block: 24 elements, 96 bytes.  R.S0 -> S1.S0 only keeps a
# part of what each device holds (cols [3a,3a+3) of rows [4b,4b+4)): free.
expect_json '{"bytes": 96}' cost --shape 8x6 --factors 2,2 --from R.S0 --to S0.S1 --json
expect_json '{"bytes": 0}' cost --shape 8x6 --factors 2,2 --from R.S0 --to S1.S0 --json
# Same grid, other devices (DESIGN.md "Tilings"): not free.  S0.S1 -> S1.S0
# on 4x4 / 2,2: device (a,b) holds rows 2a.., cols 2b.. and needs rows 2b..,
# cols 2a..: devices 0 and 3 keep theirs, 1 and 2 swap 4 elements: 8 x 4.
expect_json '{"bytes": 32}' cost --shape 4x4 --factors 2,2 --from S0.S1 --to S1.S0 --json
# Uneven: 5 elements over 2 devices, S0 -> R: device 0 holds 2 and lacks
# 3, device 1 holds 3 and lacks 2: 5 elements, 1 byte each.
expect_json '{"bytes": 5}' cost --shape 5 --factors 2 --from S0 --to R --dtype-bytes 1 --json
# Sizes take K/M/G suffixes: 1Kx4 split over 2 -> R moves the whole tensor
# once: 4096 elements of 4 bytes.
expect_json '{"bytes": 16384}' cost --shape 1Kx4 --factors 2 --from S0 --to R --json
# One device has no cuts; "-" is its tiling.
expect_json '{"bytes": 0}' cost --shape 3x3 --devices 1 --from - --to - --json

expect_text '288 bytes' cost --shape 8x6 --factors 2,2 --from S0.S1 --to R.S0
expect_text '(0,1)' cost --shape 8x6 --factors 2,2 --from S0.S1 --to R.S0
expect_text 'cost' help
expect_text 'cost' --help
expect_text '--shape' help cost
expect_text '--shape' cost --help
expect_text '--topology-file' help plan
expect_text '--topology-file' help eval
expect_text '--shape' help --help cost

# help --json: one JSON object like every command's (it used to exit 2)
expect_json '{"commands": [{"name": "cost", "summary": "bytes to convert a tensor between two tilings"}, {"name": "zoo", "summary": "list the built-in models, or print one'"'"'s model file"}, {"name": "plan", "summary": "search a plan for a model on N devices"}, {"name": "eval", "summary": "price a given plan (the JSON plan prints)"}, {"name": "sim", "summary": "simulate one step of a plan on a topology"}, {"name": "swap", "summary": "plan swapping to host memory when a step does not fit"}, {"name": "verify", "summary": "run a plan on the CPU backend and check it against the serial step"}, {"name": "help", "summary": "this text, or the usage of one command"}]}' help --json
run help cost --json
if [ "$rc" -eq 0 ] && [ ! -s "$err" ] && "$KTILE" help cost >"$dir/usage.txt" &&
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert list(d) == ["name", "summary", "usage"], list(d)
assert d["name"] == "cost", d["name"]
assert d["usage"] == open(sys.argv[2]).read(), "usage differs from help cost"
' "$out" "$dir/usage.txt"; then ok; else bad help cost --json; fi
expect_bad_msg "unknown option '--bogus'" help --bogus
# messages in words: one factor is "there is 1 factor"; a factor below 2
# says which one and why
expect_bad_msg 'has 2 cuts but there is 1 factor$' cost --shape 4x4 \
    --factors 2 --from S0.S1 --to R
expect_bad_msg "the factor 1 is below 2" cost --shape 4x4 --factors 2,1 \
    --from S0.S1 --to R
# a file past the 1 GiB any input file may have is bad input (exit 2), not
# an internal failure (an endless text through a FIFO); a file that is not
# text is refused at its first NUL byte, not after reading 1 GiB of it
if [ -r /dev/zero ]; then
    expect_bad_msg 'model file /dev/zero: line 1: NUL byte at offset 0' \
        plan --model-file /dev/zero --devices 2
fi
# (not under valgrind: its memchr takes minutes over 1 GiB)
if [ -z "${KT_WRAP:-}" ] && mkfifo "$dir/endless" 2>/dev/null; then
    yes 'input x[4]' >"$dir/endless" 2>/dev/null &
    expect_bad_msg "model file $dir/endless is larger than 1 GiB" \
        plan --model-file "$dir/endless" --devices 2
    wait
fi
# a factor that is not a whole number is quoted, not read as its digits
expect_bad_msg "factor '1e308' is not a whole number" cost --shape 8x6 \
    --factors 2,1e308 --from S0.S1 --to R.S0
# decimal options are read as the whole-number ones are: no leading blank,
# no hex (strtod alone took ' 4' and 0x10)
expect_bad_msg "beta '0x10'" plan --model mlp:layers=2,hidden=64,batch=8 \
    --devices 4 --strategy mcmc --beta 0x10
expect_bad_msg "seconds ' 1'" plan --model mlp:layers=2,hidden=64,batch=8 \
    --devices 4 --strategy mcmc --seconds ' 1'
# a number clamped on reading is quoted as written, and a size's message
# gives the range
expect_bad_msg "S99999999999999999999 names dimension 99999999999999999999" \
    cost --shape 8x6 --factors 2 --from S99999999999999999999 --to R
expect_bad_msg "'9223372036854775807' is not a size from 1 byte to 2^60" \
    swap --model mlp:layers=2,hidden=64,batch=8 --memory 9223372036854775807
# a file that cannot be opened says why
expect_bad_msg 'cannot open model file /nonexistent/m.txt: No such file' \
    plan --model-file /nonexistent/m.txt --devices 2
# --help with --json, after a command or alone, is help --json: one JSON
# object, not the usage text
for args in "plan --help --json" "cost --json --help" "sim -h --json"; do
    cmd=${args%% *}
    # shellcheck disable=SC2086
    run $args
    "$KTILE" help "$cmd" --json >"$dir/want.json" 2>/dev/null
    if [ "$rc" -eq 0 ] && [ ! -s "$err" ] && cmp -s "$out" "$dir/want.json"
    then ok; else bad "$args: not help $cmd --json"; fi
done
run --help --json
"$KTILE" help --json >"$dir/want.json" 2>/dev/null
if [ "$rc" -eq 0 ] && cmp -s "$out" "$dir/want.json"; then ok
else bad "--help --json: not help --json"; fi
expect_bad_msg 'at most one command name' help plan sim

# Output that cannot be written is a failure (exit 1 and a message), for
# help and --help as for results
if [ -w /dev/full ]; then
    for args in "help" "help plan" "--help" "sim --help" "help --json" \
        "plan --help --json" \
        "cost --shape 4x4 --factors 2 --from P --to R --json"; do
        # shellcheck disable=SC2086
        ${KT_WRAP:-} "$KTILE" $args >/dev/full 2>"$err"
        rc=$?
        if [ "$rc" -eq 1 ] && grep -q '^ktile: cannot write the result' "$err"
        then ok; else bad "$args (into /dev/full)"; fi
    done
fi

# Bad input: exit status 2 and a message.
expect_bad
expect_bad frobnicate
expect_bad help frobnicate
expect_bad cost --shape 4x4 --factors 2 --from P --to R --bogus
expect_bad cost --shape 4x4 --factors 2 --from P --to R extra
expect_bad_msg "devices given twice ('6', then '3')" plan \
    --model mlp:layers=2,hidden=8,batch=12 --devices 6 --devices 3
expect_bad_msg 'shape given twice' cost --shape 4x4 --shape 8x8 --factors 2 \
    --from S0 --to R
expect_json '{"bytes": 64}' cost --shape 4x4 --factors 2 --from S0 \
    --to R --json --json
expect_bad cost --shape 4x4 --factors 2 --from P --to R --json=yes
# --name=value is the same as --name value
expect_json '{"bytes": 64}' cost --shape=4x4 --factors=2 --from=S0 --to R \
    --json
expect_bad_msg 'shape needs a value' cost --shape= --factors 2 --from S0 \
    --to R
expect_bad_msg "devices given twice ('6', then '3')" plan \
    --model=mlp:layers=2,hidden=8,batch=12 --devices=6 --devices 3
expect_bad cost --factors 2 --from P --to R
expect_bad cost --shape 4x4 --factors 2 --from P
expect_bad cost --shape 4x4 --factors 2 --to R
expect_bad cost --shape 4x4 --from P --to R
expect_bad cost --shape --factors 2 --from P --to R
expect_bad cost --shape 4x --factors 2 --from P --to R
expect_bad cost --shape 0x3 --factors 2 --from P --to R
expect_bad cost --shape 4xa --factors 2 --from P --to R
expect_bad cost --shape x4 --factors 2 --from P --to R
expect_bad cost --shape 4X4 --factors 2 --from P --to R
expect_bad cost --shape -4 --factors 2 --from P --to R
expect_bad cost --shape 2x2x2x2x2x2x2x2x2 --factors 2 --from P --to R
expect_bad cost --shape 99999999999999999999 --factors 2 --from P --to R
expect_bad cost --shape 4x4 --factors 1 --from P --to R
expect_bad cost --shape 4x4 --factors 2,1 --from P.R --to R.R
expect_bad cost --shape 4x4 --factors 2,,2 --from P.R --to R.R
expect_bad cost --shape 4x4 --factors 2,2 --from S0 --to R
expect_bad cost --shape 4x4 --factors 2 --from S0.S1 --to R
expect_bad cost --shape 4x4 --factors 2 --from S0 --to R.R
expect_bad cost --shape 4x4 --factors 2 --from S2 --to R
expect_bad cost --shape 4x4 --factors 2 --from S0 --to S2
expect_bad cost --shape 1x4 --factors 2 --from S0 --to R
expect_bad cost --shape 4x4 --factors 2,2 --from S0,S1 --to R.R
expect_bad cost --shape 4x4 --factors 2 --from Q --to R
expect_bad cost --shape 4x4 --factors 2,2 --from S0. --to R.R
expect_bad cost --shape 4x4 --factors 2 --from s0 --to R
expect_bad cost --shape 4x4 --factors 2 --from R --to P
expect_bad cost --shape 4x4 --factors 2,2 --from S0.S1 --to R.P
expect_bad cost --shape 4x4 --devices 6 --factors 2,2 --from S0.S1 --to R.R
expect_bad cost --shape 4x4 --devices 0 --from S0 --to R
expect_bad cost --shape 4x4 --devices x --from S0 --to R
expect_bad cost --shape 4x4 --factors 2 --from P --to R --dtype-bytes 0
expect_bad cost --shape 4x4 --factors 2 --from P --to R --dtype-bytes 9
expect_bad cost --shape 4x4 --factors 2 --from P --to R --dtype-bytes 4K
expect_bad cost --shape 4Gx4Gx4G --factors 2 --from P --to R

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
