#!/bin/sh
# test_bench.sh — the benchmark harness works end to end (tests/bench/README.md):
# bench.sh on a small generated pair prints both tables with a figure in every
# cell, and the phases tool reports its steps, refuses bad input and bad usage.
# Timings are never asserted (DEVELOPERS.md): only that they are numbers.
#
# Run by `make check` with KD_BIN (the built kerndiff, whose directory holds
# tests/bench/) and KD_SRCDIR. Prints "ok N - ..." / "not ok N - ...: reason"
# per check, then "N passed, N failed". Exit status: 0 all passed, 1 some
# failed, 77 when a tool is missing.
set -u

KD_BIN=${KD_BIN:-}
KD_SRCDIR=${KD_SRCDIR:-.}
BUILD=$(dirname "${KD_BIN:-.}")
TOOLS=$BUILD/tests/bench
for tool in "$KD_BIN" "$TOOLS/bare_yajl" "$TOOLS/gentrace" "$TOOLS/replicate" "$TOOLS/phases"; do
    if [ -z "$tool" ] || [ ! -x "$tool" ]; then
        echo "SKIP: '$tool' is not built"
        exit 77
    fi
done

T=$(mktemp -d "${TMPDIR:-/tmp}/kd-bench.XXXXXX") || { echo "cannot create a scratch dir"; exit 99; }
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP

pass=0
fail=0
n=0
ok() {
    n=$((n + 1))
    pass=$((pass + 1))
    echo "ok $n - $1"
}
not_ok() {
    n=$((n + 1))
    fail=$((fail + 1))
    echo "not ok $n - $1: $2"
}

NUM='[0-9][0-9]*\.[0-9][0-9]*'

# ---- bench.sh on a 1 MB pair, every option that adds rows -------------------
bash "$KD_SRCDIR/tests/bench/bench.sh" "$BUILD" --sizes 1 --runs 1 --one-thread --phases \
    --scratch "$T/scratch" >"$T/table.md" 2>"$T/bench.err"
rc=$?
if [ $rc = 0 ]; then
    ok "bench.sh --sizes 1 --one-thread --phases exits 0"
else
    not_ok "bench.sh --sizes 1 --one-thread --phases exits 0" "exit $rc: $(tail -n 3 "$T/bench.err")"
fi

# one row per command, each with a wall time, an RSS (or n/a without GNU
# time) and a ratio
for cmd in 'bare_yajl' 'kerndiff inspect' 'kerndiff triage --format json' \
    'kerndiff inspect --threads 1' 'kerndiff triage --threads 1 --format json' \
    '2 x bare_yajl at once' 'kerndiff diff --format json'; do
    if grep -F "| $cmd |" "$T/table.md" | grep -Eq "\| $cmd \| $NUM \| ($NUM|n/a) \| $NUM \|\$"; then
        ok "table row for '$cmd' has its figures"
    else
        not_ok "table row for '$cmd' has its figures" "$(grep -F "| $cmd |" "$T/table.md" | head -n 2)"
    fi
done
if grep -Eq 'FAIL|TIMEOUT|n/a \| n/a \| n/a' "$T/table.md"; then
    not_ok "no failed or missing command in the table" "$(grep -E 'FAIL|TIMEOUT|n/a \| n/a' "$T/table.md")"
else
    ok "no failed or missing command in the table"
fi

# the phases table: a heading and one row of eight figures for the baseline
row=$(grep -F '| gen-1mb-s1-baseline.json | ' "$T/table.md" | grep -F ' s (' | head -n 1)
cell="$NUM s \\($NUM""x\\)"
if grep -q '^### One triage side on one thread, step by step' "$T/table.md" &&
    printf '%s\n' "$row" | grep -Eq "^\| gen-1mb-s1-baseline.json \| $NUM s \| $cell \| $cell \| $cell \| $cell \| $NUM \| $cell \|\$"; then
    ok "phases table row: bare parse, load, analysis, report, side, fresh MB, first-touch"
else
    not_ok "phases table row: bare parse, load, analysis, report, side, fresh MB, first-touch" "'$row'"
fi

# ---- phases on its own ---------------------------------------------------------
gz=$KD_SRCDIR/fixtures/examples/baseline.json.gz
out=$("$TOOLS/phases" "$gz" 2>"$T/phases.err")
rc=$?
want="^load $NUM analysis $NUM output $NUM load_faults [0-9]+ analysis_faults [0-9]+ output_faults [0-9]+ fresh_load $NUM page_bytes [0-9]+\$"
if [ $rc = 0 ] && printf '%s\n' "$out" | grep -Eq "$want"; then
    ok "phases on the example baseline prints every step"
else
    not_ok "phases on the example baseline prints every step" "exit $rc: '$out' $(cat "$T/phases.err")"
fi
out=$("$TOOLS/phases" --threads 2 "$gz" 2>/dev/null)
if printf '%s\n' "$out" | grep -Eq "$want"; then
    ok "phases --threads 2"
else
    not_ok "phases --threads 2" "'$out'"
fi

printf '{"traceEvents": [' >"$T/truncated.json"
"$TOOLS/phases" "$T/truncated.json" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc = 1 ] && [ ! -s "$T/out" ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
    grep -q "truncated.json: truncated JSON" "$T/err"; then
    ok "phases on a truncated trace: exit 1, the loader's one-line message"
else
    not_ok "phases on a truncated trace: exit 1, the loader's one-line message" "exit $rc: $(cat "$T/err")"
fi

for args in "" "--threads 3 $gz" "--bogus $gz" "$gz $gz"; do
    # shellcheck disable=SC2086
    "$TOOLS/phases" $args >"$T/out" 2>"$T/err"
    rc=$?
    if [ $rc = 2 ] && [ ! -s "$T/out" ] && grep -q '^usage: phases' "$T/err"; then
        ok "phases $args: usage, exit 2"
    else
        not_ok "phases $args: usage, exit 2" "exit $rc: $(cat "$T/err")"
    fi
done

echo "$pass passed, $fail failed"
[ $fail = 0 ]
