#!/bin/sh
# run.sh -- the test runner of `make test`, `make sanitize`, `make valgrind`.
#
#   sh test/run.sh TEST...
#
# Runs every TEST (a compiled program, or a shell script when it ends in .sh),
# shows its output, and adds up the last "N passed, M failed" line each one
# prints.  A test that crashes, exits non-zero without reporting a failure,
# or prints no such line counts as one failure, named at the end.  The last
# line is the total, exactly "N passed, M failed"; the exit status is 1 when
# anything failed.
#
# Environment:
#   KT_WRAP          command put in front of compiled tests (make valgrind)
#   KT_TEST_TIMEOUT  seconds one test may run (default 1800) when
#                    timeout(1) exists
# Scripts also read KTILE (the ktile binary), KT_CC, KT_CXX and KT_MAKE.

passed=0
failed=0
broken=""
limit=${KT_TEST_TIMEOUT:-1800}
tmo=""
if command -v timeout >/dev/null 2>&1; then tmo="timeout $limit"; fi

log=$(mktemp "${TMPDIR:-/tmp}/ktile-test.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
trap 'exit 130' INT TERM

for t in "$@"; do
    echo "== $t"
    case $t in
    *.sh)
        $tmo sh "$t" >"$log" 2>&1
        rc=$? ;;
    *)
        if [ -x "$t" ] && [ -f "$t" ]; then
            # KT_WRAP is a command line: split it into words on purpose.
            # shellcheck disable=SC2086
            $tmo ${KT_WRAP:-} "$t" >"$log" 2>&1
            rc=$?
        else
            echo "not an executable file: $t" >"$log"
            rc=127
        fi ;;
    esac
    cat "$log"
    summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
    why=""
    if [ -z "$summary" ]; then
        why="no 'N passed, M failed' line"
        failed=$((failed + 1))
    else
        p=${summary%% passed*}
        f=${summary#*passed, }
        f=${f%% failed}
        passed=$((passed + p))
        failed=$((failed + f))
        if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
            failed=$((failed + 1))
        fi
    fi
    if [ "$rc" -ne 0 ]; then
        if [ -n "$tmo" ] && [ "$rc" -eq 124 ]; then
            why="${why:+$why, }timed out after ${limit}s"
        elif [ "$rc" -gt 128 ]; then
            why="${why:+$why, }killed by signal $((rc - 128))"
        else
            why="${why:+$why, }exit status $rc"
        fi
    fi
    if [ -n "$why" ]; then
        echo "-- FAILED: $t ($why)"
        broken="$broken
  $t ($why)"
    fi
done

if [ -n "$broken" ]; then
    echo "failing tests:$broken"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
