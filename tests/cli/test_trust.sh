#!/bin/sh
# test_trust.sh — trustworthy accounting: nothing dropped, passed or picked
# silently. A diff's stages come from the traces' stage annotations unless
# every file of both sides is named for its stage; every single-trace side
# has the whole-trace stage all; every kernel read is accounted for (inspect,
# diff, triage); zero-duration kernels count as launches; a gate with nothing
# to judge (no stage in common, no communication kernel, a trace against
# itself) exits 2 without writing a report, and is a warning without a gate;
# the 2021 categories (Operator, Kernel, Runtime) give steps and CPU ops.
#
# Run by `make check` with KD_BIN, KD_SRCDIR and KD_SHARED (../shared,
# optional: the corpus checks are skipped without it). Every synthetic trace
# is generated here, in a scratch directory. Prints one line per check, then
# "N passed, N failed". Exit status: 0 all passed, 1 some failed, 77 KD_BIN
# missing.
set -u

KD_CLI_DIR=$(dirname "$0")
[ -f "$KD_CLI_DIR/lib.sh" ] || KD_CLI_DIR=${KD_SRCDIR:-.}/tests/cli
# shellcheck source=lib.sh
. "$KD_CLI_DIR/lib.sh"
kd_test_init kd-trust
KD_SHARED=${KD_SHARED:-}

# More Python helpers for the JSON checks (d is the document; KD_PAT, from
# the environment, is the text a warning must contain).
KD_PY_PRELUDE="$KD_PY_PRELUDE
import os
def adds_up(a):
    return a['read'] == (a['analysed'] + a['outside_every_stage'] + a['in_a_stage_already_held']
                         + a['zero_duration'] + sum(a['skipped'].values()))
def side(d, s):
    return d['inputs']['sides'][s]
def acc(d, s):
    return side(d, s)['accounting']
def nskip(a):
    return sum(a['skipped'].values())
def stage(d, name):
    return [s for s in d['stages'] if s['stage'] == name][0]
def names(d):
    return [s['stage'] for s in d['stages']]
def launches(d, name, s):
    return stage(d, name)['summary'][s]['launches']
def zero_deltas(d):
    return all(r['d_total_us'] == 0 and r['d_exposed_us'] == 0 and r['b_launches'] == r['c_launches']
               for s in d['stages'] for r in s['rows']) and \
           all(s['summary']['delta']['launches'] == 0 and
               s['summary']['baseline']['launches'] == s['summary']['candidate']['launches']
               for s in d['stages'])
def row(d, name, kernel):
    return [r for r in stage(d, name)['rows'] if r['kernel'] == kernel][0]
def warned(d):
    return any(os.environ['KD_PAT'] in w for w in d['warnings'])
"

# The generator of the synthetic traces: gen.py KIND PATH [SCALE], SCALE
# multiplying the kernels' durations.
GEN=$T/gen.py
cat >"$GEN" <<'EOF'
import json, sys

kind, path = sys.argv[1], sys.argv[2]
scale = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0

def k(name, ts, dur, stream=7, cat="kernel", pid="0"):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": stream, "ts": ts,
         "args": {"stream": stream}}
    if dur is not None:
        e["dur"] = dur * scale
    return e

def ann(name, ts, dur):
    return {"ph": "X", "cat": "gpu_user_annotation", "name": name, "pid": "0", "tid": 7,
            "ts": ts, "dur": dur}

NCCL = "ncclDevKernel_AllReduce_Sum_bf16"
if kind == "annotated":
    # prefill window [0, 1000): gemm_a, gemm_b, the NCCL kernel and a
    # kernel without dur; decode window [2000, 3000): gemm_a, elementwise_x
    # and a dur-0 kernel; far outside both (over 20 ms away): gemm_a,
    # copy_k and a dur-0 kernel; one kernel with a bad ts (skipped).
    # read 11 = 5 in a stage + 2 outside + 3 zero-duration + 1 skipped
    ev = [ann("prefill", 0, 1000), ann("decode", 2000, 1000),
          k("gemm_a", 100, 50), k("gemm_b", 200, 30), k(NCCL, 150, 100, stream=20),
          k("zero_k", 400, None),
          k("gemm_a", 2100, 20), k("elementwise_x", 2200, 10), k("zero_k", 2300, 0),
          k("gemm_a", 100000, 40), k("copy_k", 100100, 5), k("zero_k", 100200, 0)]
    bad = k("bad_ts_k", 0, 5)
    bad["ts"] = "x"
    ev.append(bad)
elif kind == "plain":
    # no stage annotation at all; one NCCL kernel
    ev = [k("gemm_a", 100, 60), k(NCCL, 150, 100, stream=20), k("copy_k", 300, 5)]
elif kind == "compute":
    # a prefill annotation, compute kernels only
    ev = [ann("prefill", 0, 1000), k("gemm_a", 100, 50), k("gemm_b", 200, 30),
          k("elementwise_x", 300, 4)]
elif kind == "legacy":
    # a 2021 trace: ProfilerStep#1..#3 and aten::mm of category Operator,
    # cudaLaunchKernel of category Runtime, kernels of category Kernel
    ev = []
    for step in (1, 2, 3):
        base = step * 10000
        ev += [{"ph": "X", "cat": "Operator", "name": "ProfilerStep#%d" % step, "pid": 1, "tid": 1,
                "ts": base, "dur": 5000},
               {"ph": "X", "cat": "Operator", "name": "aten::mm", "pid": 1, "tid": 1,
                "ts": base + 10, "dur": 100, "args": {"External id": step}},
               {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                "ts": base + 20, "dur": 5, "args": {"correlation": step, "External id": step}},
               k("volta_sgemm_128x64_nn", base + 50, 200, cat="Kernel", pid=0),
               k("elementwise_kernel", base + 300, 20, cat="Kernel", pid=0)]
        ev[-2]["args"].update({"correlation": step, "External id": step})
else:
    sys.exit("unknown kind " + kind)
json.dump({"schemaVersion": 1, "traceEvents": ev}, open(path, "w"))
EOF

gen()
{
    python3 "$GEN" "$@" || { echo "Bail out! cannot generate $2"; exit 99; }
}

A=$T/run_prefill.json   # annotated, its path naming prefill
O=$T/other.json         # the same bytes, a name without a stage
gen annotated "$A"
cp "$A" "$O"
S=$T/slower.json        # annotated, every duration doubled
gen annotated "$S" 2
P=$T/plain.json
gen plain "$P"
C1=$T/compute1.json
C2=$T/compute2.json
gen compute "$C1"
gen compute "$C2" 1.5


# ---------------------------------------------------------------------------
section "a trace against a renamed copy of itself"

if diff_json "diff run_prefill.json other.json --format json: exit 0" "$A" "$O"; then
    cp "$T/out" "$T/self.json"
    expect_json "every stage has zero deltas and equal launches" 'zero_deltas(d)' \
        '[(s["stage"], s["summary"]["delta"]) for s in d["stages"]]'
    expect_json "both sides' stages from annotations (the one path naming prefill does not decide)" \
        'side(d, "baseline")["stages_from"] == "annotations" and side(d, "candidate")["stages_from"] == "annotations"' \
        '{k: v["stages_from"] for k, v in d["inputs"]["sides"].items()}'
    expect_json "stages extend, decode and the whole-trace stage all, in that order" \
        'names(d) == ["extend", "decode", "all"]' 'names(d)'
    expect_json "stage all: launches == accounting read - skipped (10), on both sides" \
        'all(launches(d, "all", s) == acc(d, s)["read"] - nskip(acc(d, s)) == 10 for s in ("baseline", "candidate"))' \
        '[(launches(d, "all", s), acc(d, s)) for s in ("baseline", "candidate")]'
    expect_json "identical: the same bytes" 'd["inputs"]["identical"] == "the same bytes"' 'd["inputs"]["identical"]'
    KD_PAT="2 of 11 kernels (45.0 us) are outside every stage annotation"
    export KD_PAT
    expect_json "warnings: the 2 kernels outside every stage, per side" \
        'warned(d) and sum(os.environ["KD_PAT"] in w for w in d["warnings"]) == 2' 'd["warnings"]'
    expect_true "stderr: the outside kernels and the same bytes" \
        "grep -q 'warning: baseline: 2 of 11 kernels (45.0 us) are outside every stage annotation' \"\$T/err\" && grep -q 'warning: baseline and candidate are the same bytes' \"\$T/err\""
fi
run "$KD_BIN" diff "$A" "$O"
expect_true "text: 'stages from annotations (extend/prefill, decode, all)' and the kernels line, per side" \
    "[ \"\$rc\" -eq 0 ] && [ \"\$(grep -c '^  stages from annotations (extend/prefill, decode, all); rank -; device -\$' \"\$T/out\")\" -eq 2 ] && [ \"\$(grep -c '^  kernels: 11 read = 5 in a stage + 2 outside every stage + 0 in a stage already held + 3 zero-duration + 1 skipped (bad_ts 1)\$' \"\$T/out\")\" -eq 2 ]"
expect_true "text: the == all section" "grep -q '^== all: ' \"\$T/out\""
run "$KD_BIN" diff "$A" "$O" --format markdown
expect_true "markdown: the stages-from row and the 'Kernels accounted for' table" \
    "[ \"\$rc\" -eq 0 ] && grep -qF '| stages from | annotations: extend/prefill, decode, all | annotations: extend/prefill, decode, all |' \"\$T/out\" && grep -qF '**Kernels accounted for**' \"\$T/out\" && grep -qF '| read (the analysed pid) | 11 | 11 |' \"\$T/out\""
run "$KD_BIN" diff "$A" "$O" --stage all --format json
expect_true "--stage all: the whole traces only, 10 launches a side" \
    "[ \"\$rc\" -eq 0 ] && json_ok \"\$T/out\" 'names(d) == [\"all\"] and launches(d, \"all\", \"baseline\") == 10 == launches(d, \"all\", \"candidate\") and zero_deltas(d)'"

# ---------------------------------------------------------------------------
section "every kernel read is accounted for"

if inspect_json "$O"; then
    expect_json "inspect other.json: read 11 = 5 analysed + 2 outside + 3 zero-duration + 1 bad_ts" \
        'adds_up(d["accounting"]) and (d["accounting"]["read"], d["accounting"]["analysed"], d["accounting"]["outside_every_stage"], d["accounting"]["zero_duration"], d["accounting"]["skipped"]["bad_ts"]) == (11, 5, 2, 3, 1)' \
        'd["accounting"]'
    expect_json "inspect other.json: the outside kernels' time, 45 us" \
        'close(d["accounting"]["outside_every_stage_us"], 45.0)' 'd["accounting"]'
    expect_json "inspect other.json: the streams' kernels == analysed + outside (7)" \
        'nkernels(d) == d["accounting"]["analysed"] + d["accounting"]["outside_every_stage"] == 7' \
        '(d["streams"], d["accounting"])'
    expect_json "inspect other.json: the skipped counts are the accounting's" \
        'd["skipped"] == d["accounting"]["skipped"]' '(d["skipped"], d["accounting"]["skipped"])'
fi
if inspect_json "$A"; then
    # one file named for its stage: the path decides, as the reference does
    expect_json "inspect run_prefill.json (path stage): adds up, 7 analysed, streams cover them" \
        'adds_up(d["accounting"]) and d["accounting"]["analysed"] == 7 and nkernels(d) == 7' \
        '(d["accounting"], d["streams"])'
fi
if diff_json "diff run_prefill.json slower.json --format json: exit 0" "$A" "$S"; then
    expect_json "diff: the accounting adds up on both sides (read 11, outside 2)" \
        'all(adds_up(acc(d, s)) and acc(d, s)["read"] == 11 and acc(d, s)["outside_every_stage"] == 2 for s in ("baseline", "candidate"))' \
        '[acc(d, s) for s in ("baseline", "candidate")]'
    cp "$T/out" "$T/slower_diff.json"
fi

# ---------------------------------------------------------------------------
section "zero-duration kernels are launches with no time"

if [ -f "$T/slower_diff.json" ]; then
    cp "$T/slower_diff.json" "$T/out"
    expect_json "launches equal on both sides: extend 4, decode 3, all 10 (the zero-duration ones included)" \
        'all(launches(d, n, "baseline") == launches(d, n, "candidate") == w for n, w in (("extend", 4), ("decode", 3), ("all", 10)))' \
        '[(n, launches(d, n, "baseline"), launches(d, n, "candidate")) for n in names(d)]'
    expect_json "the zero-duration kernel's row: launches 1, 1 and 3, no time" \
        'all(row(d, n, "zero_k")["b_launches"] == row(d, n, "zero_k")["c_launches"] == w and row(d, n, "zero_k")["b_total_us"] == 0 == row(d, n, "zero_k")["c_total_us"] for n, w in (("extend", 1), ("decode", 1), ("all", 3)))' \
        '[row(d, n, "zero_k") for n in names(d)]'
    expect_json "the times differ (the durations doubled): not zero deltas" \
        'not zero_deltas(d) and stage(d, "all")["summary"]["delta"]["launches"] == 0' \
        'stage(d, "all")["summary"]["delta"]'
fi

# ---------------------------------------------------------------------------
section "a gate with nothing to judge: exit 2, one line, no report written"

# gate_refuses DESC PATTERN PATTERN2 ARGS...: diff ARGS (with a gate) and
# every report file exits 2, stderr one line with PATTERN and PATTERN2
# (may be empty), and writes no file.
gate_refuses()
{
    gr_desc=$1
    gr_pat=$2
    gr_pat2=${3:-kerndiff: ERROR: }
    shift 3
    rm -f "$T/g.json" "$T/g.csv" "$T/g.md"
    run "$KD_BIN" diff "$@" --json "$T/g.json" --csv "$T/g.csv" --markdown "$T/g.md"
    r=$(one_line_error 2 "" "kerndiff: ERROR: " "$gr_pat" "$gr_pat2")
    for f in g.json g.csv g.md; do
        [ -e "$T/$f" ] && r="$r; $f written"
    done
    check "$gr_desc" "$r"
}

for gate in --fail-on-exposed-comm --warn-on-exposed-comm; do
    gate_refuses "$gate, --stage extend where the candidate has none: no stage in common" \
        "kerndiff: ERROR: nothing to compare: no stage in common (baseline: extend/prefill; candidate: none)" \
        "" "$A" "$P" --stage extend $gate 5%
    gate_refuses "$gate, no communication kernel on either side: nothing to measure" \
        "kerndiff: ERROR: the exposed-communication gate has nothing to measure: no communication kernel on either side (kernels seen: baseline compute 2, elementwise 1; candidate compute 2, elementwise 1)" \
        "" "$C1" "$C2" $gate 5%
    gate_refuses "$gate, a trace against itself: the same file, names --allow-identical" \
        "kerndiff: ERROR: baseline and candidate are the same file: " \
        "(--allow-identical to run it anyway)" "$A" "$A" $gate 5%
    gate_refuses "$gate, a trace against a copy: the same bytes, names --allow-identical" \
        "kerndiff: ERROR: baseline and candidate are the same bytes: " \
        "(--allow-identical to run it anyway)" "$O" "$A" $gate 5%
done
ln "$A" "$T/hardlink.json" 2>/dev/null &&
    gate_refuses "--fail-on-exposed-comm, a hard link of the baseline: the same file (inode)" \
        "baseline and candidate are the same file" "" "$A" "$T/hardlink.json" --fail-on-exposed-comm 5%
ln -s "$A" "$T/symlink.json" &&
    gate_refuses "--fail-on-exposed-comm, a symbolic link to the baseline: the same file" \
        "baseline and candidate are the same file" "" "$A" "$T/symlink.json" --fail-on-exposed-comm 5%

section "--allow-identical lets the gate run"
run "$KD_BIN" diff "$O" "$A" --fail-on-exposed-comm 5% --allow-identical --json "$T/g.json" -q
expect_true "the same bytes, --allow-identical: exit 0, a PASS naming all, the report written, the warning kept" \
    "[ \"\$rc\" -eq 0 ] && grep -q '^kerndiff: PASS: .*all 70.0 us (unchanged)' \"\$T/err\" && [ -s \"\$T/g.json\" ] && KD_PAT='the same bytes' json_ok \"\$T/g.json\" 'warned(d)'"
run "$KD_BIN" diff "$A" "$A" --warn-on-exposed-comm 5% --allow-identical -q
expect_true "the same file, --allow-identical: exit 0, PASS" \
    "[ \"\$rc\" -eq 0 ] && grep -q '^kerndiff: PASS: ' \"\$T/err\""

section "a communication kernel on one side only stays loud"
gen plain "$T/a_prefill.json"
gen compute "$T/b_prefill.json"
run "$KD_BIN" diff "$T/a_prefill.json" "$T/b_prefill.json" --fail-on-exposed-comm 5% -q
expect_true "--fail-on-exposed-comm: exit 1, FAIL: one side has no communication kernels" \
    "[ \"\$rc\" -eq 1 ] && grep -q '^kerndiff: FAIL: one side has no communication kernels' \"\$T/err\""
run "$KD_BIN" diff "$T/a_prefill.json" "$T/b_prefill.json" --warn-on-exposed-comm 5% -q
expect_true "--warn-on-exposed-comm: exit 0, WARN: one side has no communication kernels" \
    "[ \"\$rc\" -eq 0 ] && grep -q '^kerndiff: WARN: one side has no communication kernels' \"\$T/err\""

# ---------------------------------------------------------------------------
section "without a gate the same cases are warnings, in every output"

# warned_everywhere DESC PATTERN ARGS...: diff ARGS exits 0 in text,
# markdown and json, PATTERN in a WARNING line, a Markdown warning, the
# JSON warnings and a stderr warning.
warned_everywhere()
{
    we_desc=$1
    KD_PAT=$2
    export KD_PAT
    shift 2
    r=""
    run "$KD_BIN" diff "$@"
    [ "$rc" -eq 0 ] || r="$r; text: exit $rc"
    grep '^WARNING: ' "$T/out" | grep -qF -- "$KD_PAT" || r="$r; no text WARNING line"
    grep '^kerndiff: warning: ' "$T/err" | grep -qF -- "$KD_PAT" || r="$r; no stderr warning"
    run "$KD_BIN" diff "$@" --format markdown
    [ "$rc" -eq 0 ] || r="$r; markdown: exit $rc"
    grep '^> \*\*Warning:\*\* ' "$T/out" | grep -qF -- "$KD_PAT" || r="$r; no Markdown warning"
    run "$KD_BIN" diff "$@" --format json
    [ "$rc" -eq 0 ] || r="$r; json: exit $rc"
    json_ok "$T/out" 'warned(d)' || r="$r; not in the JSON warnings ($(json_eval "$T/out" 'd["warnings"]'))"
    check "$we_desc" "$r"
}

warned_everywhere "--stage extend, no stage in common: a warning, exit 0" \
    "nothing to compare: no stage in common (baseline: extend/prefill; candidate: none)" "$A" "$P" --stage extend
warned_everywhere "no communication kernel on either side: a warning, exit 0" \
    "no communication kernel on either side: exposed communication is not measured (kernels seen: baseline compute 2, elementwise 1; candidate compute 2, elementwise 1)" \
    "$C1" "$C2"
warned_everywhere "a trace against itself: a warning, exit 0" \
    "baseline and candidate are the same file" "$A" "$A"
warned_everywhere "a trace against a copy: a warning, exit 0" \
    "baseline and candidate are the same bytes" "$A" "$O"
if diff_json "diff TRACE TRACE --format json" "$A" "$A"; then
    expect_json "identical: the same file" 'd["inputs"]["identical"] == "the same file"' 'd["inputs"]["identical"]'
fi
if diff_json "diff run_prefill.json slower.json --format json" "$A" "$S"; then
    expect_json "different traces: identical is not set" \
        'd["inputs"]["identical"] is None' 'd["inputs"]["identical"]'
fi

# ---------------------------------------------------------------------------
section "the sides' stages decided differently"

warned_everywhere "annotations vs no annotation at all: a warning in every output" \
    "the sides' stages were decided differently" "$A" "$P"
if diff_json "diff annotated plain --format json" "$A" "$P"; then
    expect_json "stages_from: annotations vs none" \
        'side(d, "baseline")["stages_from"] == "annotations" and side(d, "candidate")["stages_from"] == "none"' \
        '{k: v["stages_from"] for k, v in d["inputs"]["sides"].items()}'
    expect_json "only the stage all is in common: compared, with every kernel (10 vs 3 launches)" \
        'names(d) == ["all"] and launches(d, "all", "baseline") == 10 and launches(d, "all", "candidate") == 3' \
        '[(n, launches(d, n, "baseline"), launches(d, n, "candidate")) for n in names(d)]'
fi
run "$KD_BIN" diff "$A" "$P"
expect_true "text: the candidate's 'stages from none' line" \
    "grep -q '^  stages from none (all); rank -; device -\$' \"\$T/out\""
run "$KD_BIN" diff "$A" "$P" --format markdown
expect_true "markdown: the stages-from row, annotations vs none" \
    "grep -qF '| stages from | annotations: extend/prefill, decode, all | none: all |' \"\$T/out\""

# ---------------------------------------------------------------------------
section "every path names its stage: the paths decide"

gen plain "$T/a_prefill.json"
gen plain "$T/b_prefill.json" 1.5
if diff_json "diff a_prefill.json b_prefill.json --format json" "$T/a_prefill.json" "$T/b_prefill.json"; then
    expect_json "stages_from path on both sides" \
        'side(d, "baseline")["stages_from"] == "path" and side(d, "candidate")["stages_from"] == "path" and all(f["stages_from"] == "path" for s in ("baseline", "candidate") for f in side(d, s)["files"])' \
        '{k: (v["stages_from"], v["files"]) for k, v in d["inputs"]["sides"].items()}'
    expect_json "stages extend and all, every kernel in both" \
        'names(d) == ["extend", "all"] and all(launches(d, n, s) == 3 for n in names(d) for s in ("baseline", "candidate"))' \
        '[(n, launches(d, n, "baseline"), launches(d, n, "candidate")) for n in names(d)]'
    KD_PAT="decided differently"
    export KD_PAT
    expect_json "no 'decided differently' warning" 'not warned(d)' 'd["warnings"]'
fi
if grep -q "decided differently" "$T/err"; then
    notok "stderr: no 'decided differently'" "$(err_text)"
else
    ok "stderr: no 'decided differently'"
fi
# a path naming prefill over an annotated trace: the path wins for both
gen compute "$T/c_prefill.json"
if diff_json "diff a_prefill.json (no annotation) c_prefill.json (annotated)" "$T/a_prefill.json" "$T/c_prefill.json"; then
    KD_PAT="decided differently"
    export KD_PAT
    expect_json "the paths decide both sides, even over the candidate's annotation; no warning" \
        'side(d, "baseline")["stages_from"] == "path" == side(d, "candidate")["stages_from"] and not warned(d)' \
        '({k: v["stages_from"] for k, v in d["inputs"]["sides"].items()}, d["warnings"])'
fi
# prefill/ and decode/ directories on both sides
for s in b c; do
    mkdir -p "$T/dirs_$s/prefill" "$T/dirs_$s/decode"
done
gen plain "$T/dirs_b/prefill/t.json"
gen plain "$T/dirs_b/decode/t.json" 2
gen plain "$T/dirs_c/prefill/t.json" 3
gen plain "$T/dirs_c/decode/t.json" 4
if diff_json "diff of two prefill/ decode/ directory pairs" "$T/dirs_b" "$T/dirs_c"; then
    expect_json "directories: stages_from path, stages extend and decode" \
        'side(d, "baseline")["stages_from"] == "path" == side(d, "candidate")["stages_from"] and names(d)[:2] == ["extend", "decode"]' \
        '({k: v["stages_from"] for k, v in d["inputs"]["sides"].items()}, names(d))'
    expect_json "directories: the accounting adds up on both sides (6 read)" \
        'all(adds_up(acc(d, s)) and acc(d, s)["read"] == 6 for s in ("baseline", "candidate"))' \
        '[acc(d, s) for s in ("baseline", "candidate")]'
fi

# one directory side of a prefill/ file with annotations and a decode/ file
# without: the files' stages were decided two ways
mkdir -p "$T/mixed/prefill" "$T/mixed/decode"
gen compute "$T/mixed/prefill/t.json"
gen plain "$T/mixed/decode/t.json"
run "$KD_BIN" diff "$T/mixed" "$P" --format json
expect_true "a side whose files were decided two ways: stages_from mixed, the 'decided differently' warning" \
    "[ \"\$rc\" -eq 0 ] && KD_PAT='decided differently' json_ok \"\$T/out\" 'side(d, \"baseline\")[\"stages_from\"] == \"mixed\" and side(d, \"candidate\")[\"stages_from\"] == \"none\" and warned(d) and adds_up(acc(d, \"baseline\"))'"

# ---------------------------------------------------------------------------
section "malformed kernels of the chosen pid are in the accounting"

# bad_kernel REASON JSON-OF-THE-BAD-EVENT: a trace of K1 (pid 3) and the bad
# event; inspect counts it as skipped for REASON, read 2.
bad_kernel()
{
    printf '{"traceEvents":[%s,%s]}\n' "$K1" "$2" >"$T/bad_$1.json"
    if inspect_json "$T/bad_$1.json"; then
        expect_json "a kernel skipped as $1: read 2 = 1 analysed + 1 skipped ($1)" \
            "adds_up(d['accounting']) and d['accounting']['read'] == 2 and d['accounting']['analysed'] == 1 and d['accounting']['skipped']['$1'] == 1" \
            'd["accounting"]'
    fi
}
bad_kernel bad_ts '{"ph":"X","cat":"kernel","name":"kb","pid":3,"tid":7,"ts":"x","dur":5,"args":{"stream":7}}'
bad_kernel bad_dur '{"ph":"X","cat":"kernel","name":"kb","pid":3,"tid":7,"ts":200,"dur":"x","args":{"stream":7}}'
bad_kernel zero_extent '{"ph":"X","cat":"kernel","name":"kb","pid":3,"tid":7,"ts":1e20,"dur":1e-10,"args":{"stream":7}}'
bad_kernel missing_name '{"ph":"X","cat":"kernel","pid":3,"tid":7,"ts":200,"dur":5,"args":{"stream":7}}'

# ---------------------------------------------------------------------------
section "a 2021 trace: Kernel, Operator and Runtime categories"

L1=$T/legacy1.json
L2=$T/legacy2.json
gen legacy "$L1"
gen legacy "$L2" 1.5
if inspect_json "$L1"; then
    expect_json "inspect: 3 steps (ProfilerStep#1..#3 of category Operator)" 'd["steps"] == 3' 'd["steps"]'
    expect_json "inspect: cpu_ops and legacy_cpu_ops count the 6 Operator events" \
        'd["events"]["cpu_ops"] == 6 and d["events"]["legacy_cpu_ops"] == 6' 'd["events"]'
    expect_json "inspect: the 6 Kernel events are read and analysed" \
        'adds_up(d["accounting"]) and d["accounting"]["read"] == 6 == d["accounting"]["analysed"] and nkernels(d) == 6' \
        'd["accounting"]'
fi
run "$KD_BIN" diff "$L1" "$L2" --normalize steps --format json
expect_true "diff --normalize steps: exit 0, 3 steps a side" \
    "[ \"\$rc\" -eq 0 ] && json_ok \"\$T/out\" 'd[\"inputs\"][\"normalize\"] == \"steps\" and d[\"inputs\"][\"steps\"] == {\"baseline\": 3, \"candidate\": 3}'"
expect_true "diff --normalize steps: per-step times (sgemm 200 -> 300 us a step)" \
    "json_ok \"\$T/out\" 'close(row(d, \"all\", \"volta_sgemm_128x64_nn\")[\"b_total_us\"], 200) and close(row(d, \"all\", \"volta_sgemm_128x64_nn\")[\"c_total_us\"], 300)'"

# ---------------------------------------------------------------------------
section "triage says which kernels are in no table"

AN=$T/annotated.json
cp "$A" "$AN"
run "$KD_BIN" triage "$AN"
expect_true "triage (text): exit 0, stderr one warning line about the 2 kernels in no table" \
    "[ \"\$rc\" -eq 0 ] && [ \"\$(awk 'END { print NR }' \"\$T/err\")\" -eq 1 ] && grep -q '^kerndiff: warning: .*2 of 11 kernels (45.0 us) are in no table' \"\$T/err\""
expect_true "triage (text): the WARNING line and the kernels line on stdout" \
    "grep -q '^WARNING: 2 of 11 kernels (45.0 us) are in no table' \"\$T/out\" && grep -qF 'kernels: 11 read = 5 in a stage + 2 outside every stage' \"\$T/out\""
run "$KD_BIN" triage "$AN" --format json
if [ "$rc" -eq 0 ] && json_ok "$T/out" 'isinstance(d, dict)'; then
    expect_json "triage --format json: accounting adds up, 2 outside, stages from annotations" \
        'adds_up(d["accounting"]) and d["accounting"]["read"] == 11 and d["accounting"]["outside_every_stage"] == 2 and d["stages_from"] == "annotations"' \
        '(d.get("accounting"), d.get("stages_from"))'
    expect_true "triage --format json: the warning on stderr, one line" \
        "[ \"\$(awk 'END { print NR }' \"\$T/err\")\" -eq 1 ] && grep -q 'in no table' \"\$T/err\""
else
    notok "triage --format json: exit 0 with a JSON document" "exit $rc; stderr: $(err_text)"
fi
run "$KD_BIN" triage "$A" --format json
expect_true "triage run_prefill.json: the path decides, stages_from path, nothing outside" \
    "[ \"\$rc\" -eq 0 ] && json_ok \"\$T/out\" 'd[\"stages_from\"] == \"path\" and adds_up(d[\"accounting\"]) and d[\"accounting\"][\"outside_every_stage\"] == 0' && ! grep -q 'in no table' \"\$T/err\""

# every report names the file, rank, world size and device it read
META=$T/meta.json
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
if isinstance(d, list):
    d = {"traceEvents": d}
d["distributedInfo"] = {"backend": "nccl", "rank": 3, "world_size": 8}
d["deviceProperties"] = [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}, {"id": 1, "name": "other"}]
json.dump(d, open(sys.argv[2], "w"))
' "$AN" "$META"
run "$KD_BIN" triage "$META"
expect_true "triage (text): names the file, its rank, world size and device" \
    "[ \"\$rc\" -eq 0 ] && grep -qF \"read \$META: rank 3 (distributedInfo) of 8, device NVIDIA H100 80GB HBM3\" \"\$T/out\""
run "$KD_BIN" triage "$META" --format json
expect_true "triage --format json: formal_files carry rank, world size and device" \
    "[ \"\$rc\" -eq 0 ] && json_ok \"\$T/out\" 'd[\"formal_files\"] == [{\"path\": sys.argv[3], \"stages_from\": \"annotations\", \"rank\": 3, \"rank_from\": \"distributedInfo\", \"world_size\": 8, \"device\": \"NVIDIA H100 80GB HBM3\"}]' \"\$META\""
run "$KD_BIN" triage "$AN" --format json
expect_true "triage --format json: unknown rank and device are null" \
    "[ \"\$rc\" -eq 0 ] && json_ok \"\$T/out\" 'd[\"formal_files\"][0][\"rank\"] is None and d[\"formal_files\"][0][\"device\"] is None'"
run "$KD_BIN" diff "$AN" "$META" --format json
expect_true "diff --format json: each side's file with its rank and device; a warning-free rank pair" \
    "[ \"\$rc\" -eq 0 ] && json_ok \"\$T/out\" 'd[\"inputs\"][\"sides\"][\"candidate\"][\"files\"][0][\"rank\"] == 3 and d[\"inputs\"][\"sides\"][\"candidate\"][\"files\"][0][\"device\"] == \"NVIDIA H100 80GB HBM3\" and d[\"inputs\"][\"sides\"][\"baseline\"][\"files\"][0][\"rank\"] is None'"
run "$KD_BIN" diff "$AN" "$META" --format markdown
expect_true "diff --format markdown: the rank and device rows" \
    "[ \"\$rc\" -eq 0 ] && grep -qF '| rank | - | 3 of 8 (distributedInfo) |' \"\$T/out\" && grep -qF '| device | - | NVIDIA H100 80GB HBM3 |' \"\$T/out\""

# ---------------------------------------------------------------------------
section "the shared corpus"

CORPUS=${KD_SHARED:+$KD_SHARED/corpus}
SG=${CORPUS:+$CORPUS/tracelens/mi300_sglang_qwen3-8b_prefilldecode.json.gz}
if [ -n "$CORPUS" ] && [ -f "$SG" ]; then
    cp "$SG" "$T/sglang_run.json.gz"
    if diff_json "sglang trace vs a renamed copy: exit 0" "$SG" "$T/sglang_run.json.gz"; then
        expect_json "sglang vs copy: every stage zero deltas, equal launches" 'zero_deltas(d) and "all" in names(d)' \
            '[(s["stage"], s["summary"]["delta"]["launches"]) for s in d["stages"]]'
        expect_json "sglang vs copy: stages from annotations on both sides" \
            'side(d, "baseline")["stages_from"] == "annotations" == side(d, "candidate")["stages_from"]' \
            '{k: v["stages_from"] for k, v in d["inputs"]["sides"].items()}'
        expect_json "sglang vs copy: the accounting adds up; all holds every kernel read" \
            'all(adds_up(acc(d, s)) and launches(d, "all", s) == acc(d, s)["read"] - nskip(acc(d, s)) for s in ("baseline", "candidate"))' \
            '[(launches(d, "all", s), acc(d, s)) for s in ("baseline", "candidate")]'
    fi
else
    echo "SKIP - sglang corpus checks (no ${SG:-KD_SHARED/corpus/tracelens/mi300_sglang_qwen3-8b_prefilldecode.json.gz})"
fi

R0=${CORPUS:+$CORPUS/hta/trace_filter_sampled_rank-0.json.gz}
R1=${CORPUS:+$CORPUS/hta/trace_filter_sampled_rank-1.json.gz}
if [ -n "$CORPUS" ] && [ -f "$R0" ] && [ -f "$R1" ]; then
    if inspect_json "$R0"; then
        expect_json "inspect sampled rank-0: read 1204, adds up, the streams cover analysed + outside" \
            'd["accounting"]["read"] == 1204 and adds_up(d["accounting"]) and nkernels(d) == d["accounting"]["analysed"] + d["accounting"]["outside_every_stage"]' \
            '(d["accounting"], nkernels(d))'
    fi
    if diff_json "diff sampled rank-1 rank-0 --stage all: exit 0" "$R1" "$R0" --stage all; then
        expect_json "--stage all: only all, the candidate's 1204 launches" \
            'names(d) == ["all"] and launches(d, "all", "candidate") == 1204 and launches(d, "all", "baseline") == acc(d, "baseline")["read"] - nskip(acc(d, "baseline"))' \
            '(names(d), [launches(d, n, s) for n in names(d) for s in ("baseline", "candidate")])'
    fi
    for extra in "--stage all" ""; do
        # shellcheck disable=SC2086 # extra is a word list on purpose
        run "$KD_BIN" diff "$R1" "$R0" $extra --fail-on-exposed-comm 5% -q
        expect_true "diff sampled rank-1 rank-0 ${extra:+$extra }--fail-on-exposed-comm 5%: a verdict on all, not on nothing" \
            "{ [ \"\$rc\" -eq 0 ] || [ \"\$rc\" -eq 1 ]; } && grep -q '^kerndiff: \\(FAIL\\|PASS\\): .*all ' \"\$T/err\" && ! grep -q 'no stage to compare' \"\$T/err\""
    done
else
    echo "SKIP - HTA corpus checks (no ${R0:-KD_SHARED/corpus/hta/trace_filter_sampled_rank-0.json.gz})"
fi

RN1=${CORPUS:+$CORPUS/kineto/resnet50_nw0_run1.pt.trace.json.gz}
RN2=${CORPUS:+$CORPUS/kineto/resnet50_nw0_run2.pt.trace.json.gz}
if [ -n "$CORPUS" ] && [ -f "$RN1" ] && [ -f "$RN2" ]; then
    if diff_json "diff resnet50 run1 run2: exit 0" "$RN1" "$RN2"; then
        expect_json "resnet50 run1 vs run2: 9096 == 9096 launches (zero-duration kernels included)" \
            'launches(d, "all", "baseline") == 9096 == launches(d, "all", "candidate")' \
            '[(n, launches(d, n, "baseline"), launches(d, n, "candidate")) for n in names(d)]'
    fi
    if inspect_json "$RN1"; then
        expect_json "inspect resnet50 run1: 636 zero-duration kernels, 6 steps, adds up" \
            'd["accounting"]["zero_duration"] == 636 and d["steps"] == 6 and adds_up(d["accounting"])' \
            '(d["accounting"], d["steps"])'
    fi
    run "$KD_BIN" diff "$RN1" "$RN2" --normalize steps -q
    expect_true "resnet50 --normalize steps: exit 0" "[ \"\$rc\" -eq 0 ]"
    gate_refuses "resnet50 with a gate: exit 2, nothing to measure, no report" \
        "the exposed-communication gate has nothing to measure" "" "$RN1" "$RN2" --fail-on-exposed-comm 5%
else
    echo "SKIP - kineto corpus checks (no ${RN1:-KD_SHARED/corpus/kineto/resnet50_nw0_run1.pt.trace.json.gz})"
fi

finish
