#!/bin/sh
# test_noise.sh — noise told apart from change: every matched kernel's
# per-launch durations tested between the sides (Mann–Whitney, Hodges–Lehmann
# shift and interval, Benjamini–Hochberg over a stage), rows marked changed /
# noise / n/a, per call vs count, reports that lead with what changed, and a
# gate that with --gate-significance does not fail on noise.
#
# Run by `make check` with KD_BIN, KD_SRCDIR and KD_SHARED (../shared,
# optional: the corpus checks are skipped without it). Prints one line per
# check, then "N passed, N failed". Exit status: 0 all passed, 1 some failed,
# 77 KD_BIN missing.
set -u

KD_CLI_DIR=$(dirname "$0")
[ -f "$KD_CLI_DIR/lib.sh" ] || KD_CLI_DIR=${KD_SRCDIR:-.}/tests/cli
# shellcheck source=lib.sh
. "$KD_CLI_DIR/lib.sh"
kd_test_init kd-noise
KD_SHARED=${KD_SHARED:-}

KD_PY_PRELUDE="$KD_PY_PRELUDE
def rows(d):
    return [r for s in d['stages'] if s['stage'] == 'all' for r in s['rows']]
def row(d, kernel):
    return [r for r in rows(d) if r['kernel'] == kernel][0]
def changed(d):
    return [r['kernel'] for r in rows(d) if r['change'] == 'changed']
"

# gen.py SIDE PATH [EXTRA]: 40 steps of a fixed kernel sequence whose
# durations jitter deterministically (the same law on both sides, another
# phase: noise); the candidate's slow_kernel is 20 % slower per call and its
# twice_kernel launches twice as often. EXTRA=gate makes the collective's
# exposed time per launch jitter widely, its total 6 % higher in the
# candidate: a gate's threshold crossed by noise.
GEN=$T/gen.py
cat >"$GEN" <<'EOF'
import json, math, sys
cand = sys.argv[1] == 'candidate'
gate = len(sys.argv) > 3 and sys.argv[3] == 'gate'
phase = 0.7 if cand else 0.0
ev = []
ts = 1000.0
def jit(k, amp):
    return 1.0 + amp * math.sin(1.7 * k + phase) * math.cos(0.37 * k + 2 * phase)
for k in range(40):
    step_start = ts
    seq = [('void gemm_kernel<float>(int)', 100 * jit(k, 0.05)), ('rmsnorm_kernel', 10 * jit(k + 3, 0.05)),
           ('slow_kernel', 50 * jit(k + 5, 0.02) * (1.2 if cand else 1.0)), ('twice_kernel', 8 * jit(k, 0.02))]
    if cand:
        seq.append(('twice_kernel', 8 * jit(k + 1, 0.02)))
    if gate:
        amp = 0.6
        seq.append(('ncclDevKernel_AllReduce_Sum_bf16', 40 * jit(k + 11, amp) * (1.06 if cand else 1.0)))
    seq.append(('few_kernel' if k < 3 else None, 5))
    for name, dur in seq:
        if name is None:
            continue
        ev.append({'ph': 'X', 'cat': 'kernel', 'name': name, 'pid': 0, 'tid': 7, 'ts': round(ts, 3),
                   'dur': round(dur, 3), 'args': {'stream': 7}})
        ts += dur + 2
    # the step's span on the GPU timeline, as Kineto writes it
    ev.append({'ph': 'X', 'cat': 'gpu_user_annotation', 'name': 'ProfilerStep#%d' % k, 'pid': 0, 'tid': 7,
               'ts': round(step_start, 3), 'dur': round(ts - step_start, 3)})
json.dump({'traceEvents': ev}, open(sys.argv[2], 'w'))
EOF
B=$T/base.json
C=$T/cand.json
python3 "$GEN" baseline "$B" && python3 "$GEN" candidate "$C" &&
    python3 "$GEN" baseline "$T/gb.json" gate && python3 "$GEN" candidate "$T/gc.json" gate ||
    notok "generate the pairs" "python3 failed"

# ---------------------------------------------------------------------------
section "each row says whether it changed"

if diff_json "diff base.json cand.json --format json: exit 0" "$B" "$C"; then
    cp "$T/out" "$T/d.json"
    expect_json "the jittering kernels are noise" \
        "row(d, 'void gemm_kernel<float>')['change'] == 'noise' and row(d, 'rmsnorm_kernel')['change'] == 'noise'" \
        "[(r['kernel'], r['change'], r['p_value']) for r in rows(d)]"
    expect_json "slow_kernel 20 % slower per call: changed, per call, the interval excludes zero" \
        "row(d, 'slow_kernel')['change'] == 'changed' and row(d, 'slow_kernel')['change_kind'] == 'per call' and row(d, 'slow_kernel')['shift_lo_us'] > 0" \
        "row(d, 'slow_kernel')"
    expect_json "twice_kernel launched twice as often: changed, count" \
        "row(d, 'twice_kernel')['change'] == 'changed' and row(d, 'twice_kernel')['change_kind'] == 'count'" \
        "row(d, 'twice_kernel')"
    expect_json "few_kernel (3 launches a side): n/a" \
        "row(d, 'few_kernel')['change'] == 'n/a' and row(d, 'few_kernel')['p_value'] is None" \
        "row(d, 'few_kernel')"
    expect_json "the per-launch distributions on both sides: counts and medians" \
        "row(d, 'slow_kernel')['b_launches'] == 40 and 49 < row(d, 'slow_kernel')['b_dur_median_us'] < 51 and 59 < row(d, 'slow_kernel')['c_dur_median_us'] < 61" \
        "row(d, 'slow_kernel')"
fi
run "$KD_BIN" diff "$B" "$C"
expect_true "text report: what changed comes first, the noise in one line" \
    "[ \"\$rc\" -eq 0 ] && head -n 12 \"\$T/out\" | grep -qi 'changed beyond noise' && grep -qi 'within noise' \"\$T/out\""
run "$KD_BIN" diff "$B" "$C" --fdr 0.5 --min-effect 30%
expect_true "--min-effect 30%: the 20 % per-call change is not a change any more" \
    "[ \"\$rc\" -eq 0 ] && ! grep -q 'slow_kernel.*per call' \"\$T/out\""
run "$KD_BIN" diff "$B" "$C" --fdr 0
expect_usage_error "--fdr 0: usage error naming the range" "fdr"
run "$KD_BIN" diff "$B" "$C" --min-effect abc
expect_usage_error "--min-effect abc: usage error" "min-effect"

# ---------------------------------------------------------------------------
section "the gate with evidence"

run "$KD_BIN" diff "$T/gb.json" "$T/gc.json" --format json
expect_true "40 ProfilerSteps a side: per-step means with intervals in the summary and the gate's per-step difference" \
    "[ \"\$rc\" -eq 0 ] && json_ok \"\$T/out\" 'd[\"stages\"][0][\"summary\"][\"baseline\"][\"steps\"] == 40 and d[\"stages\"][0][\"summary\"][\"candidate\"][\"step_gate_exposed_ci_us\"] > 0 and d[\"stages\"][0][\"gate_evidence\"][\"step_tested\"] and d[\"stages\"][0][\"gate_evidence\"][\"step_lo_us\"] < d[\"stages\"][0][\"gate_evidence\"][\"step_diff_us\"] < d[\"stages\"][0][\"gate_evidence\"][\"step_hi_us\"] and d[\"inputs\"][\"sides\"][\"baseline\"][\"steps_from\"] == \"gpu annotations\"'"
expect_true "each row's exposed time per step on both sides" \
    "json_ok \"\$T/out\" '[r for r in d[\"stages\"][0][\"rows\"] if r[\"kernel\"] == \"slow_kernel\" and r[\"b_step_exposed_mean_us\"] > 0 and r[\"c_step_exposed_ci_us\"] is not None]'"

run "$KD_BIN" diff "$T/gb.json" "$T/gc.json" --fail-on-exposed-comm 3%
expect_true "a 6 % growth made of noise still fails the default gate, with its per-launch interval" \
    "[ \"\$rc\" -eq 1 ] && grep -q 'FAIL' \"\$T/err\" && grep -q 'per step' \"\$T/err\" && grep -q 'per launch' \"\$T/err\" && grep -q '95% CI' \"\$T/err\""
run "$KD_BIN" diff "$T/gb.json" "$T/gc.json" --fail-on-exposed-comm 3% --gate-significance
expect_true "--gate-significance: the same growth within noise warns, exit 0" \
    "[ \"\$rc\" -eq 0 ] && grep -q 'WARN' \"\$T/err\" && grep -q 'within noise' \"\$T/err\""

# ---------------------------------------------------------------------------
section "the corpus pairs"

R1=${KD_SHARED:+$KD_SHARED/corpus/kineto/resnet50_nw0_run1.pt.trace.json.gz}
R2=${KD_SHARED:+$KD_SHARED/corpus/kineto/resnet50_nw0_run2.pt.trace.json.gz}
if [ -n "$KD_SHARED" ] && [ -f "$R1" ] && [ -f "$R2" ]; then
    if diff_json "resnet50 run1 -> run2: exit 0" "$R1" "$R2"; then
        expect_json "resnet50 the same run twice: no row changed" "not changed(d)" "changed(d)"
    fi
    for fmt in text markdown; do
        run "$KD_BIN" diff "$R1" "$R2" --format "$fmt"
        expect_true "resnet50 ($fmt): the first lines say nothing changed beyond noise" \
            "[ \"\$rc\" -eq 0 ] && head -n 25 \"\$T/out\" | grep -qi 'no kernel changed beyond noise'"
    done
else
    echo "SKIP - resnet50 corpus pair (no ${R1:-KD_SHARED/corpus/kineto/resnet50_nw0_run1.pt.trace.json.gz})"
fi

FX=${KD_SHARED:+$KD_SHARED/corpus/tracelens/mi300_flux_aiter.json.gz}
FS=${KD_SHARED:+$KD_SHARED/corpus/tracelens/mi300_flux_aiter_sage.json.gz}
if [ -n "$KD_SHARED" ] && [ -f "$FX" ] && [ -f "$FS" ]; then
    if diff_json "flux aiter -> sage: exit 0" "$FX" "$FS"; then
        expect_json "flux: the attention replacement is changed" \
            "[r for r in rows(d) if r['candidate_name'] == 'sage_fwd' and r['change'] == 'changed']" \
            "[(r['kernel'], r['change']) for r in rows(d) if 'sage' in r['kernel']]"
        expect_json "flux: the native_layer_norm _21/_22 kernels are noise or a few percent" \
            "all(r['change'] == 'noise' or abs(r['pct_total']) < 10 for r in rows(d) if r['candidate_name'] in ('triton_red_fused_add_addmm_mul_native_layer_norm_split_unsqueeze_view_21', 'triton_red_fused_add_addmm_mul_native_layer_norm_split_unsqueeze_view_22'))" \
            "[(r['kernel'], r['change'], r['pct_total']) for r in rows(d) if 'native_layer_norm_split_unsqueeze_view_2' in r['kernel']]"
    fi
else
    echo "SKIP - flux corpus pair (no ${FX:-KD_SHARED/corpus/tracelens/mi300_flux_aiter.json.gz})"
fi

HC=${KD_SHARED:+$KD_SHARED/corpus/hta/trace_diff_control.json.gz}
HT=${KD_SHARED:+$KD_SHARED/corpus/hta/trace_diff_test.json.gz}
if [ -n "$KD_SHARED" ] && [ -f "$HC" ] && [ -f "$HT" ]; then
    if diff_json "HTA control -> test: exit 0" "$HC" "$HT"; then
        expect_json "HTA: the reduce_kernel rows with a large median shift are changed, their intervals exclude zero" \
            "[r for r in rows(d) if 'reduce_kernel' in r['kernel'] and r['change'] == 'changed' and r['shift_lo_us'] is not None and (r['shift_lo_us'] > 0 or r['shift_hi_us'] < 0)]" \
            "[(r['kernel'][:40], r['change'], r['shift_lo_us'], r['shift_hi_us']) for r in rows(d) if 'reduce_kernel' in r['kernel']]"
        expect_json "HTA: vectorized_elementwise_kernel rows changed per call with intervals excluding zero" \
            "len([r for r in rows(d) if 'vectorized_elementwise_kernel' in r['kernel'] and 'per call' in r['change_kind'] and (r['shift_lo_us'] > 0 or r['shift_hi_us'] < 0)]) >= 3" \
            "[(r['kernel'][:40], r['change'], r['change_kind'], r['shift_lo_us'], r['shift_hi_us']) for r in rows(d) if 'vectorized' in r['kernel']][:6]"
    fi
else
    echo "SKIP - HTA corpus pair (no ${HC:-KD_SHARED/corpus/hta/trace_diff_control.json.gz})"
fi

finish
