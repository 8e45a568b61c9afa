#!/bin/sh
# test_install.sh -- `make install` into build/install-test, then build a
# program the way a user does: -I$PREFIX/include, <pthread.h> first, then
# <ktile/...> (DESIGN.md "Include hazard").  Run from the repository root.
#
# Environment: KT_MAKE, KT_CC, KT_CXX (default make, cc, c++), KT_WRAP.
# Ends with "N passed, M failed".

MAKE_PROG=${KT_MAKE:-make}
CC_PROG=${KT_CC:-cc}
CXX_PROG=${KT_CXX:-c++}
root=$(pwd)
prefix=$root/build/install-test
pass=0
fail=0

check() { # check DESCRIPTION COMMAND...
    what=$1
    shift
    if "$@"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $what"
    fi
}

rm -rf "$prefix"
mkdir -p "$prefix" || exit 1
# Run make afresh: the jobserver of the make running this test is not ours.
if env -u MAKEFLAGS -u MFLAGS "$MAKE_PROG" --no-print-directory install \
    PREFIX="$prefix" CC="$CC_PROG" >"$prefix/install.log" 2>&1; then
    pass=$((pass + 1))
else
    fail=$((fail + 1))
    echo "FAIL: make install PREFIX=$prefix"
    cat "$prefix/install.log"
fi

includes=""
for h in tiling.h sched.h swap.h backend_cpu.h backend_cuda.h; do
    [ -f "$root/$h" ] || continue
    check "$h installed with mode 644" \
        test "$(stat -c %a "$prefix/include/ktile/$h" 2>/dev/null)" = 644
    check "$h installed unchanged" cmp -s "$root/$h" "$prefix/include/ktile/$h"
    includes="$includes
#include <ktile/$h>"
done
check "bin/ktile installed" test -x "$prefix/bin/ktile"

cat >"$prefix/user.c" <<EOF
/* A user's program: the documented way to include ktile. */
#include <pthread.h>
#define KT_IMPLEMENTATION$includes
#include <stdio.h>

static void *run(void *arg) {
    kt_factors f;
    kt_tiling p, r;
    kt_error err;
    int64_t shape[2] = {4, 4};
    int64_t *bytes = (int64_t *)arg;
    if (kt_factors_parse("2", &f, &err) != KT_OK ||
        kt_tiling_parse("P", &p, &err) != KT_OK ||
        kt_tiling_parse("R", &r, &err) != KT_OK ||
        kt_tiling_conversion_cost(2, shape, 4, &f, &p, &r, bytes, NULL,
                                  &err) != KT_OK)
        *bytes = -1;
    return NULL;
}

int main(void) {
    pthread_t t;
    int64_t bytes = 0;
    if (pthread_create(&t, NULL, run, &bytes) != 0) return 1;
    pthread_join(t, NULL);
    printf("%lld\n", (long long)bytes);
    return bytes == 128 ? 0 : 1;
}
EOF
cp "$prefix/user.c" "$prefix/user_cpp.cpp"

# Compile away from the repository, so only -I$prefix/include can find ktile.
cd "$prefix" || exit 1
check "user program compiles as C99 against the installed headers" \
    "$CC_PROG" -std=c99 -Wall -Wextra -Wpedantic -Werror \
    -I"$prefix/include" -o user user.c -lm -lpthread
# KT_WRAP is a command line: split it into words on purpose.
# shellcheck disable=SC2086
check "user program prints 128" \
    test "$(${KT_WRAP:-} ./user 2>&1)" = 128
check "user program compiles as C++11 against the installed headers" \
    "$CXX_PROG" -std=c++11 -Wall -Wextra -Wpedantic -Werror \
    -I"$prefix/include" -o user_cpp user_cpp.cpp -lm -lpthread
# shellcheck disable=SC2086
check "C++ user program prints 128" \
    test "$(${KT_WRAP:-} ./user_cpp 2>&1)" = 128
# shellcheck disable=SC2086
check "installed ktile prints {\"bytes\": 128}" \
    test "$(${KT_WRAP:-} "$prefix/bin/ktile" cost --shape 4x4 --factors 2 \
        --from P --to R --json 2>&1)" = '{"bytes": 128}'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
