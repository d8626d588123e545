#!/usr/bin/env bash
# summarize.sh BUILDDIR... — one "N passed, N failed, N skipped" line over the
# individual checks of every suite: Check runners ("Checks: N, Failures: F,
# Errors: E"), the CLI scripts ("N passed, N failed") and skipped suites.
# Before it, one "SKIP: suite: reason" line per skipped suite, the reason
# taken from the suite's "SKIP: reason" log line, so a skip is never silent.
# The count line stays last and exactly so: CI parses it.
set -u
passed=0 failed=0 skipped=0
skip_lines=""
declare -A seen_skip=()

# skip_reason LOG SUITE: the reason of the suite's last "SKIP: ..." log line,
# without a leading "SUITE: " the suite may have written itself.
skip_reason()
{
    local reason
    reason=$(grep -E '^SKIP:' "$1" 2>/dev/null | tail -n 1 | sed -E 's/^SKIP:[[:space:]]*//')
    reason=${reason#"$2: "}
    echo "${reason:-no reason given (no 'SKIP: reason' line in $1)}"
}

# note_skip LOG: remember the SKIP line of LOG's suite, once over all the
# build dirs (CI passes two with the same suites).
note_skip()
{
    local suite line
    suite=$(basename "${1%.log}")
    suite=${suite#check_}
    suite=${suite#test_}
    line="SKIP: $suite: $(skip_reason "$1" "$suite")"
    [ -z "${seen_skip[$line]:-}" ] || return 0
    seen_skip[$line]=1
    skip_lines+="$line"$'\n'
}

for dir in "$@"; do
    for log in "$dir"/tests/*/*.log; do
        [ -f "$log" ] || continue
        case "$log" in */test-suite.log) continue ;; esac
        trs=${log%.log}.trs
        if grep -q '^:test-result: SKIP' "$trs" 2>/dev/null; then
            skipped=$((skipped + 1))
            note_skip "$log"
            continue
        fi
        line=$(grep -E 'Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" | tail -n 1)
        if [ -n "$line" ]; then
            n=$(echo "$line" | sed -E 's/.*Checks: ([0-9]+).*/\1/')
            f=$(echo "$line" | sed -E 's/.*Failures: ([0-9]+).*/\1/')
            e=$(echo "$line" | sed -E 's/.*Errors: ([0-9]+).*/\1/')
            passed=$((passed + n - f - e))
            failed=$((failed + f + e))
            continue
        fi
        line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
        if [ -n "$line" ]; then
            p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
            f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
            passed=$((passed + p))
            failed=$((failed + f))
            continue
        fi
        # a suite that crashed before printing its count
        if grep -q '^:test-result: PASS' "$trs" 2>/dev/null; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
        fi
    done
done
printf '%s' "$skip_lines"
echo "$passed passed, $failed failed, $skipped skipped"
