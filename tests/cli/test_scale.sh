#!/bin/sh
# test_scale.sh — many distinct kernel names (Reliability items 9 and 10):
# `triage` and `diff` of traces with 20,000 distinct names each, none equal
# across the two sides, finish, and the diff's matching is right. The relaxed
# lookup once scanned every baseline key for every unmatched candidate (56 s
# here) and the id hash collided on packed keys; both are now near-linear.
# No timing is asserted (product.md §6: figures come from the benchmark,
# docs/performance.md); the timeout only turns a hang into a failure.
#
# The traces come from tests/bench/gentrace --distinct-names (its comment
# describes the names): a quarter long cutlass/flash names, matched by long
# common prefix (or claimed first by an alias match); one in sixteen triggers
# the alias groups; the rest have no counterpart (removed / added). The
# matching is the reference's exactly (tests/unit/test_lookup.c checks the
# index against the reference's scan); this checks it end to end at scale.
#
# Run by `make check` with KD_BIN and KD_BUILDDIR (gentrace is
# tests/bench/gentrace of the build tree; KD_GENTRACE overrides it, and
# KD_SCALE_NAMES the 20000). Exit status: 0 all passed,
# 1 some failed, 77 KD_BIN or gentrace missing.
set -u

KD_BIN=${KD_BIN:-}
if [ -z "$KD_BIN" ] || [ ! -x "$KD_BIN" ]; then
    echo "SKIP: KD_BIN is not set or not executable ('$KD_BIN')"
    exit 77
fi
KD_BUILDDIR=${KD_BUILDDIR:-$(dirname "$KD_BIN")}
GENTRACE=${KD_GENTRACE:-$KD_BUILDDIR/tests/bench/gentrace}
if [ ! -x "$GENTRACE" ]; then
    echo "SKIP: gentrace not built ('$GENTRACE')"
    exit 77
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/kd-scale.XXXXXX") || { echo "cannot create a scratch dir"; exit 99; }
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP

KD_CLI_DIR=$(dirname "$0")
[ -f "$KD_CLI_DIR/lib.sh" ] || KD_CLI_DIR=${KD_SRCDIR:-.}/tests/cli
# shellcheck source=lib.sh
. "$KD_CLI_DIR/lib.sh"
# generous: about a second each on a 2-core machine, minutes under valgrind
KD_TIMEOUT=${KD_TIMEOUT:+timeout ${KD_SCALE_TIMEOUT_SECS:-600}}

N=${KD_SCALE_NAMES:-20000}

# status_reason: what is wrong with the last run's exit (nothing when 0)
status_reason()
{
    if [ "$rc" -eq 124 ]; then
        echo "timed out; $(err_text)"
    elif [ "$rc" -ne 0 ]; then
        echo "exit $rc; $(err_text)"
    fi
}

# count_match KIND: diff CSV rows of that match kind
count_match()
{
    grep -c "^\"all\",\"[^\"]*\",\"[^\"]*\",\"$1\"," "$T/diff.csv"
}

section "generate $N distinct names per side"
"$GENTRACE" --distinct-names "$N" -o "$T/base.json" 2>"$T/gen.err" &&
    "$GENTRACE" --distinct-names "$N" --variant candidate -o "$T/cand.json" 2>>"$T/gen.err"
gen_rc=$?
check "gentrace --distinct-names $N" "$( [ "$gen_rc" -eq 0 ] || head -c 300 "$T/gen.err")"

section "triage"
run "$KD_BIN" triage "$T/base.json" --format json
r=$(status_reason)
aggs=$(grep -o '"category":"[a-z]*","count":' "$T/out" | wc -l | tr -d ' ') # aggregates only
[ -n "$r" ] || [ "$aggs" -eq "$N" ] || r="$aggs aggregates, not $N"
check "triage of $N distinct names: one aggregate each" "$r"

section "diff"
run "$KD_BIN" diff "$T/base.json" "$T/cand.json" --format csv
r=$(status_reason)
cp "$T/out" "$T/diff.csv"
exact=$(count_match exact)
prefix=$(count_match prefix)
substring=$(count_match substring)
longp=$(count_match long-prefix)
alias=$(count_match alias)
added=$(count_match added)
removed=$(count_match removed)
# the matcher's own kinds: no generated names, templates or architectures
# here; the kernels left between matched neighbours may be replaced ones
rule=$(count_match rule)
renumbered=$(count_match renumbered)
template=$(count_match template)
retargeted=$(count_match retargeted)
replaced=$(count_match replaced)
matched=$((exact + prefix + substring + longp + alias + rule + renumbered + template + retargeted + replaced))
[ -n "$r" ] || [ $((matched + removed)) -eq "$N" ] || r="$matched matched + $removed removed != $N baseline kernels"
[ -n "$r" ] || [ $((matched + added)) -eq "$N" ] || r="$matched matched + $added added != $N candidate kernels"
check "diff completes; every kernel of each side in exactly one row" "$r"

# the salts differ, so no name equals, prefixes or contains another
check "no exact, prefix or substring matches" \
    "$( [ "$exact$prefix$substring" = 000 ] || echo "exact $exact, prefix $prefix, substring $substring")"

check "no rule, renumbered, template or retargeted matches" \
    "$( [ "$rule$renumbered$template$retargeted" = 0000 ] || echo "rule $rule, renumbered $renumbered, template $template, retargeted $retargeted")"

# a replaced pair: launches within 1.5x of each other, with its evidence
bad_replaced=$(python3 -c '
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["match"] == "replaced"]
bad = [r for r in rows if not r["evidence"].startswith("the same place in the launch order")
       or max(int(r["b_launches"]), int(r["c_launches"])) > 1.5 * min(int(r["b_launches"]), int(r["c_launches"]))]
print(len(bad))' "$T/diff.csv" 2>&1)
check "replaced pairs have comparable launches and say where they sit" \
    "$( [ "$bad_replaced" = 0 ] || echo "$bad_replaced replaced pairs without comparable launches or evidence")"

# long names match long names only, and every long baseline is taken: by a
# long candidate (of its own shape while one is left: the 40% rule), or first
# by an alias match (alias candidates hit the FlashAttnFwdSm90 token that
# only the long names carry)
n_long=$((N / 4)) # names 3, 7, 11, ...
long_pairs=$(grep -cE '^"all","[^"]*","[^"]*","long-prefix","[^"]*","[^"]*, tile_[0-9]{7}_v1, [^"]*","[^"]*, tile_[0-9]{7}_v2, ' "$T/diff.csv")
r=""
[ "$longp" -gt 0 ] || r="no long-prefix matches"
[ -n "$r" ] || [ "$long_pairs" -eq "$longp" ] || r="$long_pairs of $longp long-prefix matches pair two long names"
[ -n "$r" ] || [ $((longp + alias)) -eq "$n_long" ] || r="long-prefix $longp + alias $alias != $n_long long baselines"
check "long-prefix matches pair long names; every long baseline is matched" "$r"

# alias matches are exactly the flash_attn_fwd_combine candidates, each
# claiming a distinct baseline (the rows are one per baseline)
alias_ok=$(grep -cE '^"all","[^"]*","[^"]*","alias","[^"]*","[^"]*","void flash::flash_attn_fwd_combine_' "$T/diff.csv")
r=""
[ "$alias" -gt 0 ] || r="no alias matches"
[ -n "$r" ] || [ "$alias_ok" -eq "$alias" ] || r="$alias_ok of $alias alias matches are flash_attn_fwd_combine candidates"
check "alias matches come from the alias-group names" "$r"

finish
