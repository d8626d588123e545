#!/bin/sh
# test_rules.sh — kernel categories as data: --rules default|reference|FILE
# on every command, `kerndiff rules`, a rules file that adds a category or
# makes the gate see a collective, --gate-category, bad rules files (exit 2,
# FILE:LINE), every report naming the rules in force, and conformance through
# the CLI with --rules reference.
#
# Run by `make check` with KD_BIN, KD_SRCDIR and KD_SHARED (../shared,
# optional: the conformance and corpus checks are skipped without it).
# Prints one line per check, then "N passed, N failed". Exit status: 0 all
# passed, 1 some failed, 77 KD_BIN missing.
set -u

KD_CLI_DIR=$(dirname "$0")
[ -f "$KD_CLI_DIR/lib.sh" ] || KD_CLI_DIR=${KD_SRCDIR:-.}/tests/cli
# shellcheck source=lib.sh
. "$KD_CLI_DIR/lib.sh"
kd_test_init kd-rules
KD_SHARED=${KD_SHARED:-}
SRC=${KD_SRCDIR:-.}

KD_PY_PRELUDE="$KD_PY_PRELUDE
def rows(d):
    return [r for s in d['stages'] for r in s['rows']]
def cat_of(d, kernel):
    return [r['category'] for r in rows(d) if r['kernel'] == kernel][0]
"

# A small pair: one stream of work and one of a collective whose name no
# built-in profile knows (hccs_ring_xfer), exposed 20 us more in the candidate.
GEN=$T/gen.py
cat >"$GEN" <<'EOF'
import json, sys
cand = sys.argv[1] == 'candidate'
ev = []
ts = 1000.0
for step in range(4):
    for name, dur, stream in [('void gemm_kernel<float>(int)', 50, 7), ('sage_fwd', 40, 7),
                              ('hccs_ring_xfer', 30 + (20 if cand else 0), 7)]:
        ev.append({'ph': 'X', 'cat': 'kernel', 'name': name, 'pid': 0, 'tid': 7, 'ts': ts, 'dur': dur,
                   'args': {'stream': stream}})
        ts += dur + 1
json.dump({'traceEvents': ev}, open(sys.argv[2], 'w'))
EOF
B=$T/base.json
C=$T/cand.json
python3 "$GEN" baseline "$B" && python3 "$GEN" candidate "$C" || notok "generate the pair" "python3 failed"

# ---------------------------------------------------------------------------
section "kerndiff rules"

run "$KD_BIN" rules --list
expect_true "rules --list: the two built-in profiles" \
    "[ \"\$rc\" -eq 0 ] && grep -q '^default' \"\$T/out\" && grep -q '^reference' \"\$T/out\""
run "$KD_BIN" rules --classify --rules reference 'Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs' ncclDevKernel_Generic
expect_true "rules --classify --rules reference: the reference's answers (a Tensile Bias GEMM is elementwise)" \
    "[ \"\$rc\" -eq 0 ] && grep -q '^elementwise	Cijk_' \"\$T/out\" && grep -q '^communication	ncclDevKernel_Generic' \"\$T/out\""
printf 'ncclDevKernel_AllReduce_Sum_bf16\nMemcpy DtoD (Device -> Device)\n' >"$T/names"
"$KD_BIN" rules --classify - <"$T/names" >"$T/out" 2>"$T/err"
rc=$?
expect_true "rules --classify -: names from standard input, one line each" \
    "[ \"\$rc\" -eq 0 ] && [ \$(wc -l <\"\$T/out\") -eq 2 ] && grep -q '^memory	Memcpy DtoD' \"\$T/out\""
run "$KD_BIN" rules
expect_usage_error "rules without --list, --show or --classify: usage error" "--list"
run "$KD_BIN" rules --classify
expect_usage_error "rules --classify without names: usage error" "--classify"
for p in default reference; do
    run "$KD_BIN" rules --show "$p"
    cp "$T/out" "$T/$p.ini"
    expect_true "rules --show $p: a rules file" "[ \"\$rc\" -eq 0 ] && grep -q '^\\[rules\\]' \"\$T/$p.ini\""
done
# a shown profile, loaded back, classifies as the profile does
python3 - "$T/names.all" <<'EOF'
import sys
names = ['ncclDevKernel_AllReduce_Sum_bf16', 'Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV', 'sage_fwd',
         'aiter::fmha_fwd_hd128_bf16_rtz', '__amd_rocclr_fillBufferAligned',
         'void cub::DeviceReduceByKeyKernel<cub::DispatchReduceByKey<int>>', 'triton_poi_fused_add_0',
         'void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>',
         'Memcpy DtoD (Device -> Device)', 'rmsnorm_kernel', 'moe_dispatch', 'mystery_kernel']
open(sys.argv[1], 'w').write('\n'.join(names) + '\n')
EOF
for p in default reference; do
    "$KD_BIN" rules --classify --rules "$p" - <"$T/names.all" >"$T/$p.want" 2>&1
    "$KD_BIN" rules --classify --rules "$T/$p.ini" - <"$T/names.all" >"$T/$p.got" 2>&1
    if cmp -s "$T/$p.want" "$T/$p.got"; then
        ok "rules --show $p, loaded back: the same categories"
    else
        notok "rules --show $p, loaded back: the same categories" "$(diff "$T/$p.want" "$T/$p.got" | head -5)"
    fi
done

# ---------------------------------------------------------------------------
section "a rules file on every command"

cat >"$T/mine.ini" <<'EOF'
; the site's own collective and attention kernels
[rules]
base = default
name = our-stack
[category communication]
strong = hccs_ring
[category attention]
kind = compute
strong = sage_fwd, fmha
EOF
run "$KD_BIN" diff "$B" "$C" --rules "$T/mine.ini" --format json
expect_true "diff --rules FILE: the added category in rows and summaries, the collective is communication" \
    "[ \"\$rc\" -eq 0 ] && json_ok \"\$T/out\" 'cat_of(d, \"sage_fwd\") == \"attention\" and cat_of(d, \"hccs_ring_xfer\") == \"communication\" and \"attention\" in d[\"stages\"][0][\"summary\"][\"baseline\"][\"categories\"]'"
expect_true "diff --rules FILE: the JSON names the rules (name and file with its hash)" \
    "json_ok \"\$T/out\" 'd[\"inputs\"][\"rules\"][\"name\"] == \"our-stack\" and \"mine.ini\" in d[\"inputs\"][\"rules\"][\"source\"] and \"hash\" in d[\"inputs\"][\"rules\"][\"source\"]'"
run "$KD_BIN" diff "$B" "$C" --rules "$T/mine.ini" --fail-on-exposed-comm 5%
expect_true "the gate sees the collective the rules file names: FAIL, exit 1" \
    "[ \"\$rc\" -eq 1 ] && grep -q 'FAIL: exposed communication grew' \"\$T/err\""
run "$KD_BIN" diff "$B" "$C" --fail-on-exposed-comm 5%
expect_true "with the default profile the unknown collective is not communication: the gate has nothing to measure" \
    "[ \"\$rc\" -eq 2 ] && grep -q 'nothing to measure' \"\$T/err\""
run "$KD_BIN" diff "$B" "$C" --rules "$T/mine.ini" --gate-category attention --warn-on-exposed-comm 5% --format markdown
expect_true "--gate-category attention: the gate watches that category and says so" \
    "[ \"\$rc\" -eq 0 ] && grep -q 'exposed attention' \"\$T/err\" && grep -q 'rules \\*\\*our-stack\\*\\*' \"\$T/out\""
run "$KD_BIN" diff "$B" "$C" --gate-category nosuch --fail-on-exposed-comm 5%
expect_true "--gate-category with no such category: exit 2, one line listing the categories" \
    "[ \"\$rc\" -eq 2 ] && [ \$(wc -l <\"\$T/err\") -eq 1 ] && grep -q 'nosuch' \"\$T/err\" && grep -q 'communication' \"\$T/err\""
run "$KD_BIN" triage "$B" --rules "$T/mine.ini" --format json
expect_true "triage --rules FILE: categories and the rules named" \
    "[ \"\$rc\" -eq 0 ] && json_ok \"\$T/out\" 'd[\"rules\"][\"name\"] == \"our-stack\"'"
run "$KD_BIN" inspect "$B" --rules "$T/mine.ini" --format json
expect_true "inspect --rules FILE: every category of the profile listed, the rules named" \
    "[ \"\$rc\" -eq 0 ] && json_ok \"\$T/out\" '\"attention\" in d[\"categories\"] and d[\"rules\"][\"name\"] == \"our-stack\"'"
for cmd in inspect triage; do
    run "$KD_BIN" "$cmd" "$B"
    expect_true "$cmd (text): names the rules in force" "[ \"\$rc\" -eq 0 ] && grep -qi 'rules: default (built-in)' \"\$T/out\""
done
run "$KD_BIN" diff "$B" "$C"
expect_true "diff (text): names the rules in force" "[ \"\$rc\" -eq 0 ] && grep -q '^rules: default (built-in)' \"\$T/out\""

# ---------------------------------------------------------------------------
section "bad rules files: exit 2, one line naming the file and the line"

bad_file()
{
    bf_desc=$1
    bf_want=$2
    printf '%s\n' "$3" >"$T/bad.ini"
    run "$KD_BIN" diff "$B" "$C" --rules "$T/bad.ini" --json "$T/bad.json"
    if [ "$rc" -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "bad.ini:[0-9]" "$T/err" &&
        grep -qi "$bf_want" "$T/err" && [ ! -e "$T/bad.json" ]; then
        ok "$bf_desc"
    else
        notok "$bf_desc" "exit $rc: $(err_text)"
    fi
}
bad_file "unknown key" "unknown" '[category communication]
strongest = x'
bad_file "unknown section" "section" '[categories]
strong = x'
bad_file "bad regex" "regex" '[category communication]
regex = ([unclosed'
bad_file "missing base value" "base" '[rules]
base ='
bad_file "unknown base" "base" '[rules]
base = nosuch'
bad_file "duplicate section" "duplicate" '[category memory]
strong = a
[category memory]
strong = b'
bad_file "a new category without kind" "kind" '[category attention]
strong = fmha'
bad_file "a bad kind" "kind" '[category attention]
kind = gpu
strong = fmha'
bad_file "an unknown step in [order]" "order\|step" '[order]
steps = memory, nosuch'
run "$KD_BIN" triage "$B" --rules "$T/nonexistent.ini"
expect_true "--rules naming neither a profile nor a readable file: exit 2, one line" \
    "[ \"\$rc\" -eq 2 ] && [ \$(wc -l <\"\$T/err\") -eq 1 ] && grep -q 'nonexistent.ini' \"\$T/err\""

# ---------------------------------------------------------------------------
section "conformance through the CLI: --rules reference"

CASES=${KD_SHARED:+$KD_SHARED/conformance/cases.json}
if [ -n "$KD_SHARED" ] && [ -f "$CASES" ]; then
    python3 - "$CASES" "$SRC/fixtures/conformance" >"$T/cases" <<'EOF'
import json, os, sys
for c in json.load(open(sys.argv[1])):
    if not os.path.exists(os.path.join(sys.argv[2], c['name'] + '.md')):
        continue
    args = [c['formal'][0], '--mapping', c['mapping'][0]]
    if c.get('pid_substring'):
        args += ['--pid', c['pid_substring']]
    if c.get('overlap_table_limit'):
        args += ['--limit', str(c['overlap_table_limit'])]
    if c.get('kernel_map') is False:
        args += ['--no-kernel-map']
    print(c['name'] + '\t' + '\t'.join(args))
EOF
    n=0
    while IFS="$(printf '\t')" read -r name formal mflag mapping rest; do
        n=$((n + 1))
        # shellcheck disable=SC2086
        run "$KD_BIN" triage "$KD_SHARED/$formal" "$mflag" "$KD_SHARED/$mapping" $rest --rules reference \
            --framework sglang --format markdown
        if [ "$rc" -eq 0 ] && cmp -s "$T/out" "$SRC/fixtures/conformance/$name.md"; then
            ok "conformance $name: kerndiff triage --rules reference gives the reference's table"
        else
            notok "conformance $name: kerndiff triage --rules reference gives the reference's table" \
                "exit $rc; $(diff "$SRC/fixtures/conformance/$name.md" "$T/out" | head -3)"
        fi
    done <"$T/cases"
    [ "$n" -gt 0 ] || notok "conformance cases with a golden table" "none found"
else
    echo "SKIP - conformance through the CLI (no ${CASES:-KD_SHARED/conformance/cases.json})"
fi

finish
