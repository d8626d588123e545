#!/bin/sh
# run-fuzz.sh BUILD_DIR SECONDS [libFuzzer flags...]
#
# Runs each libFuzzer target of BUILD_DIR/tests/fuzz for SECONDS on a scratch
# copy of the seed corpus (tests/fuzz/corpus; fuzz_triage's seeds get an
# options byte in front, see fuzz_triage.c; fuzz_load_oom's three: the
# failing-allocator mode, split, codec, side, and which allocation fails, see
# fuzz_load_oom.c). Fails (exit 1) on any finding:
# the crash input is kept in BUILD_DIR/tests/fuzz/findings/. Prints each
# target's execution count and coverage line.
set -u
[ $# -ge 2 ] || { echo "usage: $0 BUILD_DIR SECONDS [flags...]" >&2; exit 2; }
B=$1
SECS=$2
shift 2
SRC=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/kerndiff-fuzz.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT
FINDINGS=$B/tests/fuzz/findings
mkdir -p "$FINDINGS" "$W/load" "$W/triage" "$W/load_oom"
cp "$SRC"/corpus/* "$W/load/"
for f in "$SRC"/corpus/*; do
    for opt in 00 01 02 1d 3c; do
        { printf "\\$(printf %o 0x$opt)"; cat "$f"; } >"$W/triage/$opt-$(basename "$f")"
    done
done
# fuzz_load_oom: option byte (fail one / from; serial / split; plain, gzip,
# zstd, xz; side) and the allocation that fails (two bytes, little-endian)
for f in "$SRC"/corpus/*; do
    for opt in 00:05 01:00 01:0c 03:14 05:09 09:11 0d:07 11:30 13:1a; do
        o=${opt%:*}
        a=${opt#*:}
        { printf "\\$(printf %o 0x$o)\\$(printf %o 0x$a)\\000"; cat "$f"; } >"$W/load_oom/$o$a-$(basename "$f")"
    done
done
status=0
for t in load triage load_oom; do
    bin=$B/tests/fuzz/fuzz_$t
    [ -x "$bin" ] || { echo "run-fuzz.sh: $bin missing (configure CC=clang --enable-fuzzing; make)" >&2; exit 2; }
    echo "== fuzz_$t: $SECS s"
    if ASAN_OPTIONS=detect_leaks=1 "$bin" -max_total_time="$SECS" -max_len=65536 -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$FINDINGS/$t-" "$@" \
        "$W/$t" >"$W/$t.log" 2>&1; then
        grep -E '^#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb' "$W/$t.log" | tail -3
    else
        status=1
        echo "fuzz_$t: FINDING (input kept under $FINDINGS)" >&2
        tail -40 "$W/$t.log" >&2
    fi
done
exit $status
