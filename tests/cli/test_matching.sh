#!/bin/sh
# test_matching.sh — kernels paired as a reviewer would pair them: generated
# Triton names renumbered (paired by launches and order, never by the
# number), template variants, the same library kernel for another
# architecture, a kernel replaced by another in the same place, a user's
# --match-rule; every pair with its kind and evidence.
#
# Run by `make check` with KD_BIN, KD_SRCDIR and KD_SHARED (../shared,
# optional: the corpus checks are skipped without it). The synthetic pair is
# generated here. Prints one line per check, then "N passed, N failed".
# Exit status: 0 all passed, 1 some failed, 77 KD_BIN missing.
set -u

KD_CLI_DIR=$(dirname "$0")
[ -f "$KD_CLI_DIR/lib.sh" ] || KD_CLI_DIR=${KD_SRCDIR:-.}/tests/cli
# shellcheck source=lib.sh
. "$KD_CLI_DIR/lib.sh"
kd_test_init kd-matching
KD_SHARED=${KD_SHARED:-}

KD_PY_PRELUDE="$KD_PY_PRELUDE
def rows(d):
    return [r for s in d['stages'] if s['stage'] == 'all' for r in s['rows']]
def pair(d, b, c):
    return [r for r in rows(d) if r['baseline_name'] == b and r['candidate_name'] == c]
def kind(d, b, c):
    p = pair(d, b, c)
    return p[0]['match'] if len(p) == 1 else None
def evidence(d, b, c):
    return pair(d, b, c)[0]['evidence']
def rel(d, b, c):
    r = pair(d, b, c)[0]
    return abs(r['c_total_us'] - r['b_total_us']) / r['b_total_us']
def one_to_one(d):
    bs = [r['baseline_name'] for r in rows(d) if r['baseline_name']]
    cs = [r['candidate_name'] for r in rows(d) if r['candidate_name']]
    return len(bs) == len(set(bs)) and len(cs) == len(set(cs))
"

# gen.py SIDE PATH: one pid, one stream, 8 steps of the kernel sequence
# below; names and launch counts differ between the sides as a rebuild
# would change them.
GEN=$T/gen.py
cat >"$GEN" <<'EOF'
import json, sys
side, path = sys.argv[1], sys.argv[2]
base = side == 'baseline'
seq = [  # (name, dur us, launches per step)
    ('void gemm_kernel<float>(int)', 50, 1),
    # generated kernels that swap their numbers: each keeps its duration
    ('triton_poi_fused_add_mul_21' if base else 'triton_poi_fused_add_mul_22', 10, 2),
    ('triton_poi_fused_add_mul_22' if base else 'triton_poi_fused_add_mul_21', 30, 1),
    ('void split_embedding_kernel<float, float, %s>(int, float*)' % ('2ul' if base else '5ul'), 20, 1),
    ('ampere_sgemm_128x128_tn' if base else 'volta_sgemm_128x128_tn', 40, 1),
    ('aiter::fmha_fwd_hd128_bf16_rtz' if base else 'sage_fwd', 100, 1),
]
if not base:
    seq.append(('sage_quant_kernel', 8, 1))
seq += [
    ('ncclDevKernel_AllReduce_Sum_bf16', 25, 1),
    ('old_kernel_x' if base else 'new_kernel_y', 5, 1 if base else 4),
]
events = [{'ph': 'M', 'name': 'thread_name', 'pid': 0, 'tid': 7, 'args': {'name': 'stream 7'}}]
ts = 1000.0
for step in range(8):
    for name, dur, n in seq:
        for _ in range(n):
            events.append({'ph': 'X', 'cat': 'kernel', 'name': name, 'pid': 0, 'tid': 7,
                           'ts': ts, 'dur': dur, 'args': {'stream': 7}})
            ts += dur + 2
json.dump({'traceEvents': events}, open(path, 'w'))
EOF
B=$T/base.json
C=$T/cand.json
python3 "$GEN" baseline "$B" && python3 "$GEN" candidate "$C" || {
    notok "generate the synthetic pair" "python3 failed"
    finish
}

# ---------------------------------------------------------------------------
section "each kind on a synthetic pair"

if diff_json "diff base.json cand.json: exit 0" "$B" "$C"; then
    cp "$T/out" "$T/d.json"
    expect_json "generated names that swapped their numbers: paired by launches and order, not by name" \
        "kind(d, 'triton_poi_fused_add_mul_21', 'triton_poi_fused_add_mul_22') == 'renumbered' and kind(d, 'triton_poi_fused_add_mul_22', 'triton_poi_fused_add_mul_21') == 'renumbered'" \
        "[(r['baseline_name'], r['candidate_name'], r['match']) for r in rows(d) if 'triton' in r['kernel']]"
    expect_json "each renumbered kernel within 10% of its own baseline" \
        "rel(d, 'triton_poi_fused_add_mul_21', 'triton_poi_fused_add_mul_22') < 0.1 and rel(d, 'triton_poi_fused_add_mul_22', 'triton_poi_fused_add_mul_21') < 0.1" \
        "[(r['kernel'], r['b_total_us'], r['c_total_us']) for r in rows(d) if 'triton' in r['kernel']]"
    expect_json "renumbered evidence names the numbers and the launches" \
        "'_21 -> _22' in evidence(d, 'triton_poi_fused_add_mul_21', 'triton_poi_fused_add_mul_22') and 'launches 16 = 16' in evidence(d, 'triton_poi_fused_add_mul_21', 'triton_poi_fused_add_mul_22')" \
        "evidence(d, 'triton_poi_fused_add_mul_21', 'triton_poi_fused_add_mul_22')"
    expect_json "template arguments 2ul / 5ul: template" \
        "kind(d, 'void split_embedding_kernel<float, float, 2ul>', 'void split_embedding_kernel<float, float, 5ul>') == 'template'" \
        "[(r['baseline_name'], r['candidate_name'], r['match']) for r in rows(d) if 'split' in r['kernel']]"
    expect_json "ampere_sgemm -> volta_sgemm: retargeted, evidence ampere -> volta" \
        "kind(d, 'ampere_sgemm_128x128_tn', 'volta_sgemm_128x128_tn') == 'retargeted' and 'ampere -> volta' in evidence(d, 'ampere_sgemm_128x128_tn', 'volta_sgemm_128x128_tn')" \
        "[(r['baseline_name'], r['candidate_name'], r['match'], r['evidence']) for r in rows(d) if 'sgemm' in r['kernel']]"
    expect_json "aiter::fmha_fwd -> sage_fwd: replaced, with the neighbours as evidence" \
        "kind(d, 'aiter::fmha_fwd_hd128_bf16_rtz', 'sage_fwd') == 'replaced' and 'same place in the launch order' in evidence(d, 'aiter::fmha_fwd_hd128_bf16_rtz', 'sage_fwd')" \
        "[(r['baseline_name'], r['candidate_name'], r['match'], r['evidence']) for r in rows(d) if r['match'] not in ('exact',)]"
    expect_json "sage_quant_kernel: added; old_kernel_x (8 launches) / new_kernel_y (32): not paired without a rule" \
        "pair(d, None, 'sage_quant_kernel')[0]['match'] == 'added' and pair(d, 'old_kernel_x', None)[0]['match'] == 'removed' and pair(d, None, 'new_kernel_y')[0]['match'] == 'added'" \
        "[(r['baseline_name'], r['candidate_name'], r['match']) for r in rows(d) if r['match'] in ('added', 'removed')]"
    expect_json "exact rows have no evidence; every other pair has some; one-to-one" \
        "all((r['evidence'] == '') == (r['match'] in ('exact', 'added', 'removed')) for r in rows(d)) and one_to_one(d)" \
        "[(r['kernel'], r['match'], r['evidence']) for r in rows(d)]"
fi

if diff_json "diff --match-rule 'old_kernel_*=new_kernel_*': exit 0" "$B" "$C" --match-rule 'old_kernel_*=new_kernel_*'; then
    expect_json "--match-rule pairs what no heuristic would, kind rule, the rule in the evidence" \
        "kind(d, 'old_kernel_x', 'new_kernel_y') == 'rule' and \"--match-rule 'old_kernel_*=new_kernel_*'\" in evidence(d, 'old_kernel_x', 'new_kernel_y')" \
        "[(r['baseline_name'], r['candidate_name'], r['match'], r['evidence']) for r in rows(d) if 'kernel_' in r['kernel']]"
fi

# the same pair with the sides' event order reversed in the file: the same pairs
python3 -c '
import json, sys
for p in sys.argv[1:]:
    d = json.load(open(p))
    d["traceEvents"].reverse()
    json.dump(d, open(p + ".rev", "w"))
' "$B" "$C"
if diff_json "diff of the reversed files: exit 0" "$B.rev" "$C.rev"; then
    expect_true "the pairs and kinds do not depend on the order of events in the files" \
        "python3 -c 'import json,sys
def key(p):
    d = json.load(open(p))
    return sorted((r[\"baseline_name\"] or \"\", r[\"candidate_name\"] or \"\", r[\"match\"], r[\"evidence\"]) for s in d[\"stages\"] for r in s[\"rows\"])
sys.exit(0 if key(sys.argv[1]) == key(sys.argv[2]) else 1)' \"\$T/d.json\" \"\$T/out\""
fi

run "$KD_BIN" diff "$B" "$C"
expect_true "text report: the replacement told as one line" \
    "[ \"\$rc\" -eq 0 ] && grep -q '^  aiter::fmha_fwd_hd128_bf16_rtz -> sage_fwd' \"\$T/out\""

# ---------------------------------------------------------------------------
section "the corpus pairs"

FX=${KD_SHARED:+$KD_SHARED/corpus/tracelens/mi300_flux_aiter.json.gz}
FS=${KD_SHARED:+$KD_SHARED/corpus/tracelens/mi300_flux_aiter_sage.json.gz}
if [ -n "$KD_SHARED" ] && [ -f "$FX" ] && [ -f "$FS" ]; then
    if diff_json "flux aiter -> sage: exit 0" "$FX" "$FS"; then
        expect_json "flux: no added kernel differs from a removed one only by its generated number" \
            "not [a for a in rows(d) if a['match'] == 'added' and a['candidate_name'].startswith('triton_') and any(r['match'] == 'removed' and r['baseline_name'].rstrip('0123456789') == a['candidate_name'].rstrip('0123456789') for r in rows(d))]" \
            "[(r['match'], r['kernel']) for r in rows(d) if r['match'] in ('added', 'removed')]"
        expect_json "flux: the native_layer_norm _21/_22 kernels each within 10% of their own baseline" \
            "all(abs(r['c_total_us'] - r['b_total_us']) <= 0.1 * r['b_total_us'] for r in rows(d) if r['candidate_name'] in ('triton_red_fused_add_addmm_mul_native_layer_norm_split_unsqueeze_view_21', 'triton_red_fused_add_addmm_mul_native_layer_norm_split_unsqueeze_view_22')) and len([r for r in rows(d) if r['candidate_name'] in ('triton_red_fused_add_addmm_mul_native_layer_norm_split_unsqueeze_view_21', 'triton_red_fused_add_addmm_mul_native_layer_norm_split_unsqueeze_view_22') and r['baseline_name']]) == 2" \
            "[(r['baseline_name'], r['candidate_name'], r['b_total_us'], r['c_total_us']) for r in rows(d) if 'native_layer_norm_split_unsqueeze_view_2' in r['kernel']]"
        expect_json "flux: aiter::fmha_fwd_hd128_bf16_rtz -> sage_fwd reported replaced" \
            "kind(d, 'aiter::fmha_fwd_hd128_bf16_rtz', 'sage_fwd') == 'replaced'" \
            "[(r['baseline_name'], r['candidate_name'], r['match']) for r in rows(d) if 'fmha' in r['kernel'] or 'sage' in r['kernel']]"
        expect_json "flux: at least 8 renumbered pairs, one-to-one" \
            "len([r for r in rows(d) if r['match'] == 'renumbered']) >= 8 and one_to_one(d)" \
            "[r['match'] for r in rows(d)]"
    fi
else
    echo "SKIP - flux corpus pair (no ${FX:-KD_SHARED/corpus/tracelens/mi300_flux_aiter.json.gz})"
fi

HC=${KD_SHARED:+$KD_SHARED/corpus/hta/trace_diff_control.json.gz}
HT=${KD_SHARED:+$KD_SHARED/corpus/hta/trace_diff_test.json.gz}
if [ -n "$KD_SHARED" ] && [ -f "$HC" ] && [ -f "$HT" ]; then
    if diff_json "HTA control -> test: exit 0" "$HC" "$HT"; then
        expect_json "HTA: ampere_sgemm_128x128_tn <-> volta_sgemm_128x128_tn retargeted" \
            "kind(d, 'ampere_sgemm_128x128_tn', 'volta_sgemm_128x128_tn') == 'retargeted'" \
            "[(r['baseline_name'], r['candidate_name'], r['match']) for r in rows(d) if 'sgemm_128x128' in r['kernel']]"
        expect_json "HTA: the split_embedding template variants paired as template" \
            "[r for r in rows(d) if r['kernel'].startswith('void split_embedding') and r['match'] == 'template'] and not [r for r in rows(d) if r['kernel'].startswith('void split_embedding') and r['match'] in ('added', 'removed')]" \
            "[(r['baseline_name'], r['candidate_name'], r['match']) for r in rows(d) if 'split_embedding' in r['kernel']]"
    fi
else
    echo "SKIP - HTA corpus pair (no ${HC:-KD_SHARED/corpus/hta/trace_diff_control.json.gz})"
fi

finish
