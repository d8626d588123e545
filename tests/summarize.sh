#!/usr/bin/env bash
# summarize.sh BUILDDIR... — one "N passed, N failed, N skipped" line over the
# individual checks of every suite: Check runners ("Checks: N, Failures: F,
# Errors: E"), the CLI scripts ("N passed, N failed") and skipped suites.
set -u
passed=0 failed=0 skipped=0
for dir in "$@"; do
    for log in "$dir"/tests/*/*.log; do
        [ -f "$log" ] || continue
        case "$log" in */test-suite.log) continue ;; esac
        trs=${log%.log}.trs
        if grep -q '^:test-result: SKIP' "$trs" 2>/dev/null; then
            skipped=$((skipped + 1))
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
echo "$passed passed, $failed failed, $skipped skipped"
