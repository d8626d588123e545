#!/usr/bin/env bash
# run-tests.sh — build kerndiff warning-free and run every test.
#   tests/run-tests.sh              -Werror build in build/, then `make check`
#   tests/run-tests.sh --sanitize   the same in build-asan/ with ASan + UBSan
# Prints the suite's summary line "N passed, N failed, N skipped" last and
# exits non-zero when anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
mode=${1:-}
builddir=build
extra=()
if [ "$mode" = "--sanitize" ]; then
    builddir=build-asan
    extra=(--enable-sanitizers CFLAGS="-O1 -g")
fi
[ -x configure ] || autoreconf -fi
mkdir -p "$builddir"
cd "$builddir"
if [ ! -f Makefile ]; then
    "$top/configure" --enable-werror "${extra[@]}" >configure.out 2>&1 || { cat configure.out; exit 1; }
fi
make -j"$(nproc)" >make.out 2>&1 || { cat make.out; exit 1; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
make -j"$(nproc)" check >check.out 2>&1 || status=$?
grep -E '^(PASS|FAIL|SKIP|XFAIL|ERROR):' check.out || true
if [ "$status" -ne 0 ]; then
    for log in tests/*/*.log; do
        case "$log" in */test-suite.log) continue ;; esac
        if grep -qE '^(FAIL|ERROR)' "${log%.log}.trs" 2>/dev/null; then
            echo "---- $log"
            tail -n 60 "$log"
        fi
    done
fi
"$top/tests/summarize.sh" .
exit "$status"
