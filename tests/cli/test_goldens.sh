#!/bin/sh
# test_goldens.sh — whole outputs of kerndiff against fixtures/golden/, case
# by case as listed in tests/cli/goldens.test (NAME | ARGUMENTS). With
# --update it rewrites the expected files instead (only when a change of
# output is meant; say which and why in the commit).
set -u
: "${KD_BIN:?KD_BIN must name the kerndiff binary}"
: "${KD_SRCDIR:=.}"
[ -x "$KD_BIN" ] || { echo "SKIP: $KD_BIN not built"; exit 77; }
cd "$KD_SRCDIR" || exit 1
cases=tests/cli/goldens.test
[ -f "$cases" ] || { echo "not ok - $cases not found"; echo "0 passed, 1 failed"; exit 1; }
update=0
[ "${1:-}" = "--update" ] && update=1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
passed=0 failed=0

# run_case NAME ARGS...: the outputs of one case into $T/out and $T/err
run_case()
{
    name=$1
    shift
    "$KD_BIN" "$@" >"$T/out" 2>"$T/err"
    echo "exit $?" >>"$T/err"
}

# blank lines and comments are skipped; "NAME | ARGS" otherwise
while IFS= read -r line; do
    case "$line" in '' | '#'*) continue ;; esac
    name=$(echo "${line%%|*}" | tr -d ' \t')
    args=${line#*|}
    g="fixtures/golden/$name"
    # shellcheck disable=SC2086 # the arguments are split on blanks on purpose
    run_case "$name" $args
    if [ "$update" = 1 ]; then
        cp "$T/out" "$g"
        cp "$T/err" "$g.stderr"
    elif cmp -s "$T/out" "$g" && cmp -s "$T/err" "$g.stderr"; then
        echo "ok - $name:$args"
        passed=$((passed + 1))
    else
        echo "not ok - $name:$args differs from $g:"
        diff -u "$g" "$T/out" | head -20
        diff -u "$g.stderr" "$T/err" | head -10
        failed=$((failed + 1))
    fi
done <"$cases"
[ "$update" = 1 ] && { echo "goldens updated"; exit 0; }

# the same inputs give the same bytes
"$KD_BIN" diff fixtures/examples/baseline.json.gz fixtures/examples/candidate.json.gz --format json >"$T/a" 2>/dev/null
"$KD_BIN" diff fixtures/examples/baseline.json.gz fixtures/examples/candidate.json.gz --format json >"$T/b" 2>/dev/null
if cmp -s "$T/a" "$T/b"; then
    echo "ok - two runs give identical bytes"
    passed=$((passed + 1))
else
    echo "not ok - two runs differ"
    failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
