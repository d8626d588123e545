#!/bin/sh
# run-valgrind.sh BUILD_DIR SRC_DIR [SCRIPT...]: runs the end-to-end test
# scripts (default: tests/cli/test_cli.sh and tests/cli/test_goldens.sh)
# with every kerndiff run under valgrind memcheck, then fails when any run
# reported an error or a leak. `make check-valgrind` calls it.
set -u
[ $# -ge 2 ] || { echo "usage: $0 BUILD_DIR SRC_DIR [SCRIPT...]" >&2; exit 2; }
B=$(cd "$1" && pwd)
S=$(cd "$2" && pwd)
shift 2
command -v valgrind >/dev/null 2>&1 || { echo "run-valgrind.sh: valgrind is not installed" >&2; exit 2; }
[ $# -gt 0 ] || set -- "$S/tests/cli/test_cli.sh" "$S/tests/cli/test_goldens.sh"
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/kerndiff-vg.XXXXXX") || exit 2
trap 'rm -rf "$LOGS"' EXIT
status=0
for script in "$@"; do
    echo "== $(basename "$script") under valgrind"
    KD_BIN=$S/tests/valgrind/kerndiff-valgrind.sh KD_REAL_BIN=$B/kerndiff KD_VG_LOGS=$LOGS \
        KD_SRCDIR=$S KD_SHARED=${KD_SHARED:-$S/../shared} KD_TIMEOUT_SECS=600 \
        sh "$script" >"$LOGS/script.out" 2>&1 || status=1
    grep -E '^not ok|passed' "$LOGS/script.out"
done
runs=$(ls "$LOGS" | grep -c '^vg\.')
bad=$(grep -l . "$LOGS"/vg.*.log 2>/dev/null)
if [ -n "$bad" ]; then
    status=1
    for f in $bad; do
        echo "valgrind reported (log $f):"
        head -40 "$f"
    done
fi
echo "valgrind: $runs kerndiff runs, $(echo "$bad" | grep -c .) with errors or leaks"
exit $status
