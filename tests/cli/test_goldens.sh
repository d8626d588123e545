#!/bin/sh
# test_goldens.sh — whole outputs of `kerndiff diff` in every format on the
# example pair and the hand-made pairs of fixtures/diff/, against
# fixtures/golden/. `test_goldens.sh --update` rewrites the goldens (only when
# a change of output is meant; say so in the commit).
set -u
: "${KD_BIN:?KD_BIN must name the kerndiff binary}"
: "${KD_SRCDIR:=.}"
[ -x "$KD_BIN" ] || { echo "SKIP: $KD_BIN not built"; exit 77; }
cd "$KD_SRCDIR" || exit 1
update=0
[ "${1:-}" = "--update" ] && update=1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
passed=0 failed=0
# name baseline candidate
pairs="example fixtures/examples/baseline.json.gz fixtures/examples/candidate.json.gz
identical fixtures/examples/baseline.json.gz fixtures/examples/baseline.json.gz
regression fixtures/diff/base.json fixtures/diff/regress.json
improvement fixtures/diff/base.json fixtures/diff/improve.json"
echo "$pairs" | while read -r name base cand; do
    for fmt in text markdown csv json; do
        g="fixtures/golden/$name.$fmt"
        "$KD_BIN" diff "$base" "$cand" --fail-on-exposed-comm 5%,10us --format "$fmt" >"$T/out" 2>"$T/err"
        echo "exit $?" >>"$T/err"
        if [ "$update" = 1 ]; then
            cp "$T/out" "$g"
            cp "$T/err" "$g.stderr"
            continue
        fi
        if cmp -s "$T/out" "$g" && cmp -s "$T/err" "$g.stderr"; then
            echo "ok - diff $name --format $fmt equals $g"
            echo pass >>"$T/results"
        else
            echo "not ok - diff $name --format $fmt differs from $g:"
            diff -u "$g" "$T/out" | head -20
            diff -u "$g.stderr" "$T/err" | head -10
            echo fail >>"$T/results"
        fi
    done
done
[ "$update" = 1 ] && { echo "goldens updated"; exit 0; }
passed=$(grep -c pass "$T/results" 2>/dev/null || true)
failed=$(grep -c fail "$T/results" 2>/dev/null || true)
# the same inputs give the same bytes
"$KD_BIN" diff fixtures/examples/baseline.json.gz fixtures/examples/candidate.json.gz --format json >"$T/a" 2>/dev/null
"$KD_BIN" diff fixtures/examples/baseline.json.gz fixtures/examples/candidate.json.gz --format json >"$T/b" 2>/dev/null
if cmp -s "$T/a" "$T/b"; then echo "ok - two runs give identical bytes"; passed=$((passed + 1)); else echo "not ok - two runs differ"; failed=$((failed + 1)); fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
