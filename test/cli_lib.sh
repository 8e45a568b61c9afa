# cli_lib.sh -- what the command-line tests share (sourced, not run):
# running ktile, counting passes and failures, and the common expectations.
#
#   . "$(dirname "$0")/cli_lib.sh"
#   cli_setup NAME          temp dir, $out and $err; removed on exit
#   require_ktile           fail (and exit) unless $KTILE is built
#   require_python          fail (and exit) unless python3 is there
#
# Environment: KTILE (default build/ktile), KT_WRAP (a command put in front
# of every ktile run, e.g. valgrind).  Scripts end by printing
# "$pass passed, $fail failed".

KTILE=${KTILE:-build/ktile}
pass=0
fail=0

cli_setup() {
    dir=$(mktemp -d "${TMPDIR:-/tmp}/ktile-$1.XXXXXX") || exit 1
    trap 'rm -rf "$dir"' EXIT
    out=$dir/out
    err=$dir/err
}

run() {
    # KT_WRAP is a command line: split it into words on purpose.
    # shellcheck disable=SC2086
    ${KT_WRAP:-} "$KTILE" "$@" >"$out" 2>"$err"
    rc=$?
}

ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL: ktile $*"
    echo "  exit status $rc; stdout:"
    head -c 2000 "$out" | sed 's/^/    /'
    echo
    echo "  stderr:"
    sed 's/^/    /' "$err"
}

# expect_ok ARGS...: exit 0, empty stderr; stdout kept in $out
expect_ok() {
    run "$@"
    if [ "$rc" -eq 0 ] && [ ! -s "$err" ]; then
        ok
        return 0
    fi
    echo "expected exit status 0 and nothing on stderr"
    bad "$@"
    return 1
}

# expect_json FILE ARGS...: like expect_ok, stdout is one JSON object on
# one line, saved to FILE (emptied on failure)
expect_json() {
    file=$1
    shift
    run "$@"
    if [ "$rc" -eq 0 ] && [ ! -s "$err" ] && [ "$(wc -l <"$out")" -eq 1 ] &&
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
assert isinstance(d, dict)' "$out" 2>/dev/null; then
        cp "$out" "$file"
        ok
        return 0
    fi
    echo "expected exit status 0 and one JSON object on one line"
    bad "$@"
    : >"$file"
    return 1
}

# expect_text 'GREP PATTERN' ARGS...: exit 0, stdout matches, stderr empty
expect_text() {
    pattern=$1
    shift
    run "$@"
    if [ "$rc" -eq 0 ] && [ ! -s "$err" ] && grep -q -- "$pattern" "$out"; then
        ok
    else
        echo "expected output matching: $pattern"
        bad "$@"
    fi
}

# expect_bad ARGS...: exit 2, one "ktile: " line on stderr, empty stdout
expect_bad() {
    run "$@"
    if [ "$rc" -eq 2 ] && [ ! -s "$out" ] &&
        [ "$(wc -l <"$err")" -eq 1 ] && grep -q '^ktile: ..*' "$err"; then
        ok
    else
        echo "expected exit status 2 and one 'ktile: ...' line on stderr"
        bad "$@"
    fi
}

# expect_bad_msg 'GREP PATTERN' ARGS...: expect_bad, and the message matches
expect_bad_msg() {
    pattern=$1
    shift
    run "$@"
    if [ "$rc" -eq 2 ] && [ ! -s "$out" ] &&
        [ "$(wc -l <"$err")" -eq 1 ] && grep -q "^ktile: .*$pattern" "$err"
    then
        ok
    else
        echo "expected exit status 2 and one 'ktile: ...$pattern...' line"
        bad "$@"
    fi
}

# check 'WHAT' 'PYTHON CODE' ARGS...: the code (sys.argv[1:] = ARGS) must
# exit 0; an AssertionError's message is shown
check() {
    what=$1
    code=$2
    shift 2
    if python3 -c "$code" "$@" >"$dir/py" 2>&1; then
        ok
    else
        fail=$((fail + 1))
        echo "FAIL: $what"
        sed 's/^/    /' "$dir/py"
    fi
}

require_ktile() {
    if [ ! -x "$KTILE" ]; then
        echo "FAIL: $KTILE is not built"
        echo "0 passed, 1 failed"
        exit 1
    fi
}

require_python() {
    if ! command -v python3 >/dev/null 2>&1; then
        echo "FAIL: python3 is needed to read ktile's JSON and SVG"
        echo "0 passed, 1 failed"
        exit 1
    fi
}
