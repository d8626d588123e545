#!/usr/bin/env bash
# run-tests.sh — build kerndiff warning-free and run every test.
#   tests/run-tests.sh              -Werror build in build/, then `make check`
#   tests/run-tests.sh --sanitize   the same in build-asan/ with ASan + UBSan
# build/ is also the build directory of the README's first command, which
# configures it with the same options (--enable-werror): the two commands,
# in either order and as often as wanted, share one build and recompile only
# what changed.
# Prints a "SKIP: suite: reason" line per skipped suite, then the summary
# line "N passed, N failed, N skipped" last; exits non-zero when anything
# failed.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)

die()
{
    echo "tests/run-tests.sh: $*" >&2
    exit 2
}

# An in-tree ./configure (what the README once said) makes autoconf refuse
# every out-of-tree build ("source directory already configured"), and its
# config.h would shadow the build's own. Say how to remove it rather than
# deleting someone's build unasked.
refuse_in_tree_build()
{
    [ -f "$top/config.status" ] || return 0
    local how="cd '$top' && make distclean"
    [ -f "$top/Makefile" ] || how="rm -f '$top/config.status' '$top/config.h'"
    die "this source tree was configured in place (./config.status exists,
e.g. from an older README's './configure && make'). Builds now live in
build/; remove the in-tree one, then run this again:
    $how"
}

# is_configured DIR ARG...: DIR has a config.status whose configure options
# include every ARG (other options, e.g. a CC=... from the environment, may
# be there too).
is_configured()
{
    local dir=$1 have arg
    shift
    [ -x "$dir/config.status" ] || return 1
    have=$(cd "$dir" && ./config.status --config) || return 1
    for arg in "$@"; do
        case " $have " in *"$arg"*) ;; *) return 1 ;; esac
    done
}

# configure_build DIR ARG...: configure DIR with ARG... unless it already is.
# A DIR configured with other options is reconfigured and cleaned, since
# make does not recompile objects when only the flags changed.
configure_build()
{
    local dir=$1
    shift
    is_configured "$dir" "$@" && return 0
    local stale=no
    if [ -f "$dir/config.status" ]; then
        stale=yes
        echo "$dir/ was configured without '$*': reconfiguring and rebuilding"
    fi
    mkdir -p "$dir"
    # ../configure, as the README's command writes it: the same srcdir
    # spelling keeps one build's Makefile identical whichever command ran last.
    (cd "$dir" && ../configure "$@" >configure.out 2>&1) || { cat "$dir/configure.out"; exit 1; }
    if [ "$stale" = yes ]; then
        make -C "$dir" clean >/dev/null
    fi
}

# show_failed_logs: the tail of the log of each failed test; when make check
# failed before running the tests (a test program that does not compile),
# the tail of its output instead, since no test log tells why.
show_failed_logs()
{
    local log
    if ! grep -q '^# TOTAL:' check.out; then
        echo "---- make check failed before running the tests (check.out):"
        tail -n 40 check.out
        return
    fi
    for log in tests/*/*.log; do
        case "$log" in */test-suite.log) continue ;; esac
        if grep -qE '^:test-result: (FAIL|ERROR)' "${log%.log}.trs" 2>/dev/null; then
            echo "---- $log"
            tail -n 60 "$log"
        fi
    done
}

builddir=build
args=(--enable-werror)
case "${1:-}" in
    "") ;;
    --sanitize)
        builddir=build-asan
        args+=(--enable-sanitizers "CFLAGS=-O1 -g")
        ;;
    *) die "unknown option '$1' (usage: tests/run-tests.sh [--sanitize])" ;;
esac

refuse_in_tree_build
[ -x configure ] || ./autogen.sh
configure_build "$builddir" "${args[@]}"
cd "$builddir"
make -j"$(nproc)" >make.out 2>&1 || { cat make.out; exit 1; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The summary reads the test logs: none may be left from an earlier run when
# this one stops before its tests (a test program that does not compile).
rm -f tests/*/*.log tests/*/*.trs
status=0
make -j"$(nproc)" check >check.out 2>&1 || status=$?
grep -E '^(PASS|FAIL|SKIP|XFAIL|ERROR):' check.out || true
[ "$status" -eq 0 ] || show_failed_logs
"$top/tests/summarize.sh" .
exit "$status"
