#!/bin/sh
# test_cli.sh — end-to-end tests of the kerndiff command line (product.md §2,
# §7; divergences D2, D4, D5).
#
# Run by `make check` with KD_BIN (the built binary), KD_SRCDIR (source tree)
# and KD_SHARED (../shared, optional). Every input is generated here, in a
# scratch directory removed on exit. Prints one line per check
# ("ok N - ..." / "not ok N - ...: reason"), then "N passed, N failed".
# Exit status: 0 all passed, 1 some failed, 77 KD_BIN missing.
set -u

KD_BIN=${KD_BIN:-}
KD_SHARED=${KD_SHARED:-}
if [ -z "$KD_BIN" ] || [ ! -x "$KD_BIN" ]; then
    echo "SKIP: KD_BIN is not set or not executable ('$KD_BIN')"
    exit 77
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/kd-cli.XXXXXX") || { echo "cannot create a scratch dir"; exit 99; }
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP

KD_CLI_DIR=$(dirname "$0")
[ -f "$KD_CLI_DIR/lib.sh" ] || KD_CLI_DIR=${KD_SRCDIR:-.}/tests/cli
# shellcheck source=lib.sh
. "$KD_CLI_DIR/lib.sh"

# ---------------------------------------------------------------------------
# inputs

# K1, K2, K3 and EVENTS (lib.sh): the base trace's three kernels

printf '{"traceEvents":[%s]}\n' "$EVENTS" >"$T/good.json"
printf '[%s]\n' "$EVENTS" >"$T/good_list.json"
gzip -c <"$T/good.json" >"$T/good.json.gz"

# a larger (many-block) trace for the corrupt-gzip case
awk 'BEGIN {
    printf "{\"traceEvents\":[";
    for (i = 0; i < 4000; i++)
        printf "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kern_%d_%d\",\"pid\":3,\"tid\":7,\"ts\":%d,\"dur\":%d,\"args\":{\"stream\":%d,\"External id\":%d}}",
            (i ? "," : ""), i, (i * 7919) % 1000, i * 10, 1 + i % 9, 7 + i % 3, i;
    printf "]}\n";
}' >"$T/big.json"
gzip -c <"$T/big.json" >"$T/big.json.gz"

# a plain trace above the split-load size (16 MiB): kernels on two streams,
# their launches and cpu_ops, Python frames, a string full of "}, {"
awk 'BEGIN {
    printf "{\"schemaVersion\":1,\"traceEvents\":[";
    for (i = 0; i < 45000; i++) {
        t = i * 20;
        printf "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kern_%d\",\"pid\":3,\"tid\":%d,\"ts\":%d,\"dur\":%d,\"args\":{\"stream\":%d,\"correlation\":%d,\"External id\":%d}}",
            (i ? "," : ""), i % 97, 7 + i % 2, t, 5 + i % 13, 7 + i % 2, i, i;
        printf ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":2,\"ts\":%d,\"dur\":2,\"args\":{\"correlation\":%d}}", t - 3, i;
        printf ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::op_%d\",\"pid\":1,\"tid\":2,\"ts\":%d,\"dur\":4,\"args\":{\"External id\":%d,\"note\":\"}, {\"}}", i % 31, t - 5, i;
        printf ",{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"model.py(%d): layer_%d\",\"pid\":1,\"tid\":2,\"ts\":%d,\"dur\":9}", i % 50, i % 7, t - 6;
    }
    printf "],\"displayTimeUnit\":\"ms\"}\n";
}' >"$T/large.json"

# ---------------------------------------------------------------------------
section "usage"

run "$KD_BIN" --help
if [ "$rc" -eq 0 ] && [ -s "$T/out" ] && grep -q inspect "$T/out"; then
    ok "kerndiff --help exits 0 and lists the commands"
else
    notok "kerndiff --help exits 0 and lists the commands" "rc=$rc, stdout: $(head -c 200 "$T/out")"
fi

run "$KD_BIN" --version
if [ "$rc" -eq 0 ] && grep -q '^kerndiff [0-9]' "$T/out"; then
    ok "kerndiff --version prints 'kerndiff VERSION' and exits 0"
else
    notok "kerndiff --version prints 'kerndiff VERSION' and exits 0" "rc=$rc, stdout: $(head -c 200 "$T/out")"
fi

run "$KD_BIN" nosuchcmd
expect_usage_error "kerndiff nosuchcmd" "nosuchcmd"

run "$KD_BIN" inspect --bogus x
expect_usage_error "kerndiff inspect --bogus x" "--bogus"

run "$KD_BIN" inspect "$T/good.json" --bogus x
expect_usage_error "kerndiff inspect TRACE --bogus x" ""

run "$KD_BIN" triage --format yaml "$T/good.json"
expect_usage_error "kerndiff triage --format yaml TRACE" "yaml"

run "$KD_BIN" triage --limit -3 "$T/good.json"
expect_usage_error "kerndiff triage --limit -3" "--limit"

run "$KD_BIN" triage --min-share abc "$T/good.json"
expect_usage_error "kerndiff triage --min-share abc" "--min-share"

# kerndiff diff: usage errors (exit 2, one line, no output file)
run "$KD_BIN" diff "$T/good.json" "$T/good.json" --bogus
expect_usage_error "kerndiff diff --bogus" "--bogus"
run "$KD_BIN" diff "$T/good.json" "$T/good.json" --fail-on-exposed-comm 5
expect_usage_error "kerndiff diff --fail-on-exposed-comm 5 (bad threshold)" "threshold"
run "$KD_BIN" diff "$T/good.json" "$T/good.json" --warn-on-exposed-comm 5%,x
expect_usage_error "kerndiff diff --warn-on-exposed-comm 5%,x" "threshold"
run "$KD_BIN" diff "$T/good.json"
expect_usage_error "kerndiff diff with one path" ""
run "$KD_BIN" diff "$T/good.json" "$T/nonexistent.json" --csv "$T/d.csv"
reason=$(one_line_error 2 "$T/nonexistent.json")
[ -e "$T/d.csv" ] && reason="$reason; $T/d.csv was created"
check "kerndiff diff with a missing candidate: exit 2, one line naming it, no CSV" "$reason"
run "$KD_BIN" diff "$T/good.json" "$T/good.json" --markdown "$T/d.md" --json /nonexistent-dir/d.json
expect_true "kerndiff diff with an unwritable output: exit 2, no file created" \
    "[ \"\$rc\" -eq 2 ] && [ ! -e \"\$T/d.md\" ]"
run "$KD_BIN" diff "$T/good.json" "$T/good.json" --fail-on-exposed-comm 5%,200us --json "$T/d.json" --csv "$T/d.csv" --markdown "$T/d.md"
expect_true "kerndiff diff of a trace against itself with a gate: exit 2, one line naming the reason, no file" \
    "[ \"\$rc\" -eq 2 ] && [ \$(wc -l <\"\$T/err\") -eq 1 ] && grep -q 'ERROR: baseline and candidate are the same file' \"\$T/err\" && grep -q -- '--allow-identical' \"\$T/err\" && [ ! -e \"\$T/d.json\" ] && [ ! -e \"\$T/d.csv\" ] && [ ! -e \"\$T/d.md\" ]"
run "$KD_BIN" diff "$T/good.json" "$T/good.json" --allow-identical --fail-on-exposed-comm 5%,200us --json "$T/d.json" --csv "$T/d.csv" --markdown "$T/d.md"
expect_true "kerndiff diff of identical traces with --allow-identical: exit 0, PASS verdict on stderr, three files" \
    "[ \"\$rc\" -eq 0 ] && grep -q 'PASS' \"\$T/err\" && [ -s \"\$T/d.json\" ] && [ -s \"\$T/d.csv\" ] && [ -s \"\$T/d.md\" ]"

# the triage report formats
run "$KD_BIN" triage "$T/good.json" --format markdown
expect_true "triage --format markdown prints the Overlap Opportunity Table" \
    "[ \"\$rc\" -eq 0 ] && head -n 1 \"\$T/out\" | grep -qx 'Overlap Opportunity Table' && grep -q '^| Priority | Verdict | Kernel |' \"\$T/out\""
run "$KD_BIN" triage "$T/good.json" --format csv
expect_true "triage --format csv: header row and rows a CSV reader accepts" \
    "[ \"\$rc\" -eq 0 ] && head -n 1 \"\$T/out\" | grep -q '^stage,priority,verdict,kernel,' && python3 -c 'import csv,sys; rows=list(csv.reader(open(sys.argv[1]))); assert all(len(r)==len(rows[0]) for r in rows)' \"\$T/out\""
run "$KD_BIN" triage "$T/good.json"
expect_true "triage default text output names the stage and the columns" \
    "[ \"\$rc\" -eq 0 ] && grep -q '^== all' \"\$T/out\" && grep -q 'EXPOSED_US' \"\$T/out\""
run "$KD_BIN" triage "$T/good.json" -q --markdown "$T/r.md" --csv "$T/r.csv" --json "$T/r.json"
expect_true "triage -q --markdown/--csv/--json write three files and nothing on stdout" \
    "[ \"\$rc\" -eq 0 ] && [ ! -s \"\$T/out\" ] && [ -s \"\$T/r.md\" ] && [ -s \"\$T/r.csv\" ] && [ -s \"\$T/r.json\" ] && ! ls \"\$T\"/r.*.tmp* >/dev/null 2>&1"
run "$KD_BIN" triage "$T/good.json" --markdown "$T/r2.md" --json /nonexistent-dir/x.json
expect_true "triage with one unwritable output creates no file at all" \
    "[ \"\$rc\" -eq 2 ] && [ ! -e \"\$T/r2.md\" ]"

run "$KD_BIN" inspect --format yaml "$T/good.json"
expect_usage_error "kerndiff inspect --format yaml TRACE" "yaml"

run "$KD_BIN" inspect
expect_usage_error "kerndiff inspect without TRACE" ""

run "$KD_BIN" inspect "$T/good.json" "$T/good.json"
expect_usage_error "kerndiff inspect with two TRACEs" ""

# options after TRACE, as the usage lines show them
run "$KD_BIN" inspect "$T/good.json" --format json
if [ "$rc" -eq 0 ] && json_ok "$T/out" 'd["chosen_pid"] == "3"'; then
    ok "kerndiff inspect TRACE --format json (option after TRACE, as in --help) works"
else
    notok "kerndiff inspect TRACE --format json (option after TRACE, as in --help) works" \
        "rc=$rc, stderr: $(head -c 300 "$T/err")"
fi
run "$KD_BIN" triage "$T/good.json" --format json
if [ "$rc" -eq 0 ] && json_ok "$T/out" '"stages" in d'; then
    ok "kerndiff triage TRACE --format json (option after TRACE, as in --help) works"
else
    notok "kerndiff triage TRACE --format json (option after TRACE, as in --help) works" \
        "rc=$rc, stderr: $(head -c 300 "$T/err")"
fi

# --json FILE
mkdir "$T/outdir"
run "$KD_BIN" triage --format json --json "$T/outdir/r.json" "$T/good.json"
cp "$T/out" "$T/triage_stdout.json"
if [ "$rc" -ne 0 ]; then
    notok "triage --json FILE exits 0" "rc=$rc, stderr: $(head -c 300 "$T/err")"
elif [ ! -f "$T/outdir/r.json" ]; then
    notok "triage --json FILE writes FILE" "no $T/outdir/r.json"
elif ! cmp -s "$T/outdir/r.json" "$T/triage_stdout.json"; then
    notok "triage --json FILE writes the same JSON as stdout" "files differ"
else
    ok "triage --json FILE writes the same JSON as stdout"
fi
leftover=$(others_than r.json "$T/outdir")
if [ -z "$leftover" ]; then
    ok "triage --json FILE leaves no temp file behind"
else
    notok "triage --json FILE leaves no temp file behind" "found: $leftover"
fi
if json_ok "$T/triage_stdout.json" 'd["schema"].startswith("kerndiff.triage/") and d["stages"]["all"]["formal_pid"] == "3"'; then
    ok "triage JSON has a schema and the chosen pid"
else
    notok "triage JSON has a schema and the chosen pid" "$(head -c 300 "$T/triage_stdout.json")"
fi

run "$KD_BIN" triage --format json --json /nonexistent-dir-kd/out.json "$T/good.json"
reason=$(one_line_error 2 /nonexistent-dir-kd/out.json)
[ -e /nonexistent-dir-kd/out.json ] && reason="$reason; the file was created"
[ -s "$T/out" ] && reason="$reason; stdout not empty"
check "triage --json /nonexistent-dir/out.json: exit 2, one line, no file" "$reason"

# a failed run leaves no file behind (bad input with --json)
: >"$T/empty.json"
run "$KD_BIN" triage --format json --json "$T/outdir/bad.json" "$T/empty.json"
reason=$(one_line_error 2 "$T/empty.json")
[ -e "$T/outdir/bad.json" ] && reason="$reason; $T/outdir/bad.json was created"
leftover=$(others_than r.json "$T/outdir")
[ -n "$leftover" ] && reason="$reason; left behind: $leftover"
check "triage --json FILE on bad input: exit 2, no FILE, no temp file" "$reason"

# ---------------------------------------------------------------------------
section "bad input: exit 2, one line naming the file"

# missing path
bad_input "missing path" "$T/no-such-file.json"

# a directory with no traces
mkdir "$T/emptydir"
printf 'not a trace\n' >"$T/emptydir/README.txt"
bad_input "directory with no traces" "$T/emptydir"

bad_input "empty file" "$T/empty.json"

printf '  \n\t \r\n   \n' >"$T/blank.json"
bad_input "whitespace-only file" "$T/blank.json"

printf 'hello\n' >"$T/hello.json"
bad_input "not JSON (hello)" "$T/hello.json" byte

size=$(wc -c <"$T/good.json")
head -c $((size / 2)) "$T/good.json" >"$T/trunc.json"
bad_input "truncated JSON" "$T/trunc.json" byte

size=$(wc -c <"$T/big.json.gz")
head -c $((size / 2)) "$T/big.json.gz" >"$T/trunc.json.gz"
bad_input "truncated gzip" "$T/trunc.json.gz"

cp "$T/big.json.gz" "$T/corrupt.json.gz"
flip_bytes "$T/corrupt.json.gz" $((size / 2)) 32
bad_input "corrupt gzip (bytes flipped mid-member)" "$T/corrupt.json.gz"

printf '' | gzip -c >"$T/empty.json.gz"
bad_input "gzip of an empty file" "$T/empty.json.gz"

printf 'this is some garbage text, not JSON at all\n' | gzip -c >"$T/garbage.json.gz"
bad_input "gzip of garbage text" "$T/garbage.json.gz" byte

printf '{"traceEvents": {}}\n' >"$T/events_obj.json"
bad_input "traceEvents not a list" "$T/events_obj.json" traceEvents

printf '{"foo": 1}\n' >"$T/no_events.json"
bad_input "no traceEvents" "$T/no_events.json" traceEvents

printf '42\n' >"$T/number.json"
bad_input "top-level number 42" "$T/number.json"

printf '"just a string"\n' >"$T/string.json"
bad_input "top-level string" "$T/string.json"

printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"bad\377\376name","pid":3,"tid":7,"ts":1,"dur":2,"args":{"stream":7}}]}\n' \
    >"$T/bad_utf8.json"
bad_input "invalid UTF-8 inside a string" "$T/bad_utf8.json" byte

printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":3,"tid":7,"ts":1,"dur":2,"args":{"stream":7}}]} trailing\n' \
    >"$T/trailing.json"
bad_input "trailing garbage after the document" "$T/trailing.json" byte

cat "$T/good.json.gz" >"$T/gz_trailing.json.gz"
printf 'GARBAGE' >>"$T/gz_trailing.json.gz"
bad_input "garbage after a gzip member" "$T/gz_trailing.json.gz"

# no GPU kernels: only cpu_ops and python frames
printf '{"traceEvents":[%s,%s,%s]}\n' \
    '{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":4242,"tid":1,"ts":1,"dur":5,"args":{"External id":1}}' \
    '{"ph":"X","cat":"python_function","name":"model.py(10): forward","pid":4242,"tid":1,"ts":0,"dur":9}' \
    '{"ph":"X","cat":"python_function","name":"train.py(3): <module>","pid":5151,"tid":2,"ts":0,"dur":20}' \
    >"$T/nokernels.json"
bad_input "no GPU kernels (cpu_ops and python frames only)" "$T/nokernels.json" \
    4242 5151 cpu_op python_function

# ---------------------------------------------------------------------------
section "inputs that must work"

# base trace: the numbers of every derived case are compared to these
BASE0='d["chosen_pid"] == "3" and streams(d) == {"7": (2, 30.0), "20": (1, 30.0)} and nkernels(d) == 3 and d["categories"]["communication"]["launches"] == 1 and close(d["categories"]["communication"]["total_us"], 30.0) and d["categories"]["other"]["launches"] == 2 and close(d["categories"]["other"]["total_us"], 30.0)'
BASE="$BASE0 and nskipped(d) == 0"

good_input "minimal trace: 3 kernels on 2 streams" "$T/good.json" "$BASE"

if inspect_json "$T/good.json"; then
    for key in chosen_pid pids streams stages categories steps skipped; do
        if json_ok "$T/out" "'$key' in d"; then
            ok "inspect --format json has key '$key'"
        else
            notok "inspect --format json has key '$key'" "keys: $(json_eval "$T/out" 'sorted(d)')"
        fi
    done
    if json_ok "$T/out" 'all(set(s) >= {"stream", "kernels", "busy_us"} for s in d["streams"]) and len(d["streams"]) > 0'; then
        ok "inspect streams entries have stream, kernels, busy_us"
    else
        notok "inspect streams entries have stream, kernels, busy_us" "$(json_eval "$T/out" 'd.get("streams")')"
    fi
    if json_ok "$T/out" 'all(set(v) >= {"launches", "total_us"} for v in d["categories"].values()) and len(d["categories"]) > 0'; then
        ok "inspect categories entries have launches, total_us"
    else
        notok "inspect categories entries have launches, total_us" "$(json_eval "$T/out" 'd.get("categories")')"
    fi
    if json_ok "$T/out" 'set(d["skipped"]) == {"bad_ts", "bad_dur", "zero_extent", "missing_name", "bad_type", "bad_args", "int_range", "not_object"}'; then
        ok "inspect skipped has one counter per skip reason"
    else
        notok "inspect skipped has one counter per skip reason" "$(json_eval "$T/out" 'd.get("skipped")')"
    fi
    if json_ok "$T/out" 'd["steps"] == 0 and [p["pid"] for p in d["pids"]] == ["3"] and [s["stage"] for s in d["stages"]] == ["all"]'; then
        ok "inspect minimal trace: pids ['3'], stage all, 0 steps"
    else
        notok "inspect minimal trace: pids ['3'], stage all, 0 steps" "$(json_eval "$T/out" '(d.get("pids"), d.get("stages"), d.get("steps"))')"
    fi
fi

run "$KD_BIN" inspect "$T/good.json"
if [ "$rc" -eq 0 ] && [ -s "$T/out" ] && [ ! -s "$T/err" ]; then
    ok "inspect (text) exits 0 with a report and a quiet stderr"
else
    notok "inspect (text) exits 0 with a report and a quiet stderr" "rc=$rc, stderr: $(head -c 300 "$T/err")"
fi

good_input "bare top-level list (D2)" "$T/good_list.json" "$BASE"
good_input "gzip-compressed" "$T/good.json.gz" "$BASE"

# gzip detected by content: a .json name holding gzip bytes
cp "$T/good.json.gz" "$T/gz_named_plain.json"
good_input "gzip content under a .json name" "$T/gz_named_plain.json" "$BASE"

# the JSON text split across two concatenated gzip members
size=$(wc -c <"$T/good.json")
head -c $((size / 2)) "$T/good.json" | gzip -c >"$T/part1.gz"
tail -c +$((size / 2 + 1)) "$T/good.json" | gzip -c >"$T/part2.gz"
cat "$T/part1.gz" "$T/part2.gz" >"$T/two_members.json.gz"
good_input "two gzip members with the JSON split across them" "$T/two_members.json.gz" "$BASE"

printf '\357\273\277' >"$T/bom.json"
cat "$T/good.json" >>"$T/bom.json"
good_input "UTF-8 BOM at the start" "$T/bom.json" "$BASE"

printf '\357\273\277' | cat - "$T/good.json" | gzip -c >"$T/bom.json.gz"
good_input "UTF-8 BOM inside gzip" "$T/bom.json.gz" "$BASE"

printf '{"traceEvents": [\r\n%s,\r\n%s,\r\n%s\r\n]}\r\n' "$K1" "$K2" "$K3" >"$T/crlf.json"
good_input "CRLF line endings" "$T/crlf.json" "$BASE"

OLD='{"ph":"X","cat":"kernel","name":"old_kernel","pid":99,"tid":1,"ts":1,"dur":500,"args":{"stream":99}}'
printf '{"traceEvents":[%s,%s],"otherData":{},"traceEvents":[%s]}\n' "$OLD" "$OLD" "$EVENTS" >"$T/twice.json"
good_input "traceEvents twice: the last list wins" "$T/twice.json" \
    "$BASE and d['events']['read'] == 3 and [p['pid'] for p in d['pids']] == ['3']"

printf '{"traceEvents":[%s],"traceEvents":[%s,%s]}\n' "$EVENTS" "$OLD" "$OLD" >"$T/twice2.json"
good_input "traceEvents twice: the last list wins (old kernels last)" "$T/twice2.json" \
    "d['chosen_pid'] == '99' and nkernels(d) == 2 and streams(d) == {'99': (2, 500.0)}"

printf '{"traceEvents":[%s],"traceEvents":{}}\n' "$EVENTS" >"$T/twice_obj.json"
bad_input "traceEvents twice, the last one not a list" "$T/twice_obj.json" traceEvents

# directories: a *.json file is a trace when it has the shape (reference §3.2)
mkdir "$T/dir_plain" "$T/dir_nan" "$T/dir_bom"
cp "$T/good.json" "$T/dir_plain/capture.json"
good_input "a directory holding one trace (*.json)" "$T/dir_plain" "$BASE"
printf '{"meta":NaN,"traceEvents":[%s]}\n' "$EVENTS" >"$T/dir_nan/capture.json"
good_input "a directory whose *.json trace has NaN before traceEvents (D5)" "$T/dir_nan" "$BASE"
cp "$T/bom.json" "$T/dir_bom/capture.json"
good_input "a directory whose *.json trace starts with a BOM" "$T/dir_bom" "$BASE"

# a 20 MB string value under another top-level key, before traceEvents
{
    printf '{"deviceProperties":[],"huge":"'
    head -c 20000000 /dev/zero | tr '\000' 'a'
    printf '",\n"traceEvents":[%s]}\n' "$EVENTS"
} >"$T/huge_key.json"
good_input "a 20 MB string under another top-level key first" "$T/huge_key.json" "$BASE"
rm -f "$T/huge_key.json"

# D5: NaN / Infinity literals
printf '{"traceEvents":[%s,%s,%s,%s,%s,%s],"meta":NaN}\n' \
    "$K1" \
    '{"ph":"X","cat":"kernel","name":"nan_ts","pid":3,"tid":7,"ts":NaN,"dur":5,"args":{"stream":7}}' \
    '{"ph":"X","cat":"kernel","name":"inf_dur","pid":3,"tid":7,"ts":200,"dur":Infinity,"args":{"stream":7}}' \
    '{"ph":"X","cat":"kernel","name":"minus_inf_ts","pid":3,"tid":7,"ts":-Infinity,"dur":5,"args":{"stream":7}}' \
    '{"ph":"X","cat":"kernel","name":"k2","pid":3,"tid":7,"ts":120,"dur":20,"args":{"stream":7,"ratio":NaN,"note":"NaN Infinity"}}' \
    "$K3" >"$T/nan.json"
good_input "NaN/Infinity literals: bad events skipped and counted, others kept (D5)" "$T/nan.json" \
    "streams(d) == {'7': (2, 30.0), '20': (1, 30.0)} and d['skipped']['bad_ts'] == 2 and d['skipped']['bad_dur'] == 1 and nskipped(d) == 3"

printf '{"traceEvents":[%s,%s,%s]}\n' "$EVENTS" \
    '{"ph":"X","cat":"kernel","name":"abc_ts","pid":3,"tid":7,"ts":"abc","dur":5,"args":{"stream":7}}' \
    '{"ph":"X","cat":"kernel","name":"no_ts","pid":3,"tid":7,"dur":5,"args":{"stream":7}}' \
    >"$T/bad_ts.json"
good_input "non-numeric / missing ts: skipped as bad_ts (D5)" "$T/bad_ts.json" \
    "$BASE0 and d['skipped']['bad_ts'] == 2 and nskipped(d) == 2"

printf '{"traceEvents":[%s,%s]}\n' "$EVENTS" \
    '{"ph":"X","cat":"kernel","name":"bad_dur","pid":3,"tid":7,"ts":300,"dur":"xyz","args":{"stream":7}}' \
    >"$T/bad_dur.json"
good_input "non-numeric dur: skipped as bad_dur (D5)" "$T/bad_dur.json" \
    "streams(d) == {'7': (2, 30.0), '20': (1, 30.0)} and d['skipped']['bad_dur'] == 1 and nskipped(d) == 1"

printf '{"traceEvents":[%s,%s]}\n' "$EVENTS" \
    '{"ph":"X","cat":"kernel","name":"forever","pid":3,"tid":7,"ts":1e17,"dur":1e-3,"args":{"stream":7}}' \
    >"$T/zero_extent.json"
good_input "ts + dur == ts (ts 1e17, dur 1e-3): skipped as zero_extent (D4)" "$T/zero_extent.json" \
    "streams(d) == {'7': (2, 30.0), '20': (1, 30.0)} and d['skipped']['zero_extent'] == 1 and nskipped(d) == 1"

# a kernel named with a 1 MB string
{
    printf '{"traceEvents":[%s,{"ph":"X","cat":"kernel","name":"' "$EVENTS"
    head -c 1048576 /dev/zero | tr '\000' 'n'
    printf '","pid":3,"tid":7,"ts":300,"dur":5,"args":{"stream":7}}]}\n'
} >"$T/long_name.json"
good_input "a kernel with a 1 MB name" "$T/long_name.json" \
    "streams(d) == {'7': (3, 35.0), '20': (1, 30.0)} and nskipped(d) == 0"
run "$KD_BIN" triage --format json --dump-internals "$T/long_name.json"
if [ "$rc" -eq 0 ] && json_ok "$T/out" 'any(len(e["name"]) == 1048576 for e in d["stages"]["all"]["events"])'; then
    ok "triage keeps the 1 MB kernel name whole"
else
    notok "triage keeps the 1 MB kernel name whole" "rc=$rc, stderr: $(head -c 300 "$T/err")"
fi

# args nested 10000 levels deep, between two fields the loader reads
{
    printf '{"traceEvents":[%s,{"ph":"X","cat":"kernel","name":"deep","pid":3,"tid":7,"ts":300,"dur":5,"args":{"stream":7,"deep":' "$EVENTS"
    awk 'BEGIN { for (i = 0; i < 5000; i++) printf "[{\"a\":"; printf "1"; for (i = 0; i < 5000; i++) printf "}]"; }'
    printf ',"External id":77}}]}\n'
} >"$T/deep.json"
good_input "args nested 10000 levels deep" "$T/deep.json" \
    "streams(d) == {'7': (3, 35.0), '20': (1, 30.0)} and nskipped(d) == 0"
run "$KD_BIN" triage --format json --dump-internals "$T/deep.json"
if [ "$rc" -eq 0 ] && json_ok "$T/out" '[e.get("external_id") for e in d["stages"]["all"]["events"] if e["name"] == "deep"] == [77]'; then
    ok "the field after the deep args is still read (External id 77)"
else
    notok "the field after the deep args is still read (External id 77)" "rc=$rc, stderr: $(head -c 300 "$T/err")"
fi

# a deeply nested unrelated top-level value before traceEvents
{
    printf '{"junk":'
    awk 'BEGIN { for (i = 0; i < 10000; i++) printf "["; for (i = 0; i < 10000; i++) printf "]"; }'
    printf ',"traceEvents":[%s]}\n' "$EVENTS"
} >"$T/deep_top.json"
good_input "a 10000-deep unrelated top-level value" "$T/deep_top.json" "$BASE"

# integers beyond int64
printf '{"traceEvents":[%s,%s],"bigTop":123456789012345678901234567890}\n' "$EVENTS" \
    '{"ph":"X","cat":"kernel","name":"big_ext","pid":3,"tid":7,"ts":300,"dur":5,"args":{"stream":7,"External id":99999999999999999999}}' \
    >"$T/int_ext.json"
good_input "External id beyond int64: skipped as int_range" "$T/int_ext.json" \
    "streams(d) == {'7': (2, 30.0), '20': (1, 30.0)} and d['skipped']['int_range'] == 1 and nskipped(d) == 1"

printf '{"traceEvents":[%s,%s]}\n' "$EVENTS" \
    '{"ph":"X","cat":"kernel","name":"big_other","pid":3,"tid":7,"ts":300,"dur":5,"args":{"stream":7,"bytes":99999999999999999999999,"Sequence number":-99999999999999999999}}' \
    >"$T/int_other.json"
good_input "an integer beyond int64 in an unrelated field is ignored" "$T/int_other.json" \
    "streams(d) == {'7': (3, 35.0), '20': (1, 30.0)} and nskipped(d) == 0"

# events of the wrong shape are skipped and counted
printf '{"traceEvents":[%s,1,"x",[],null,{"ph":"X","cat":"kernel","name":"badargs","pid":3,"tid":7,"ts":1,"dur":2,"args":[1]}]}\n' \
    "$EVENTS" >"$T/odd_events.json"
good_input "non-object elements and non-object args are skipped and counted" "$T/odd_events.json" \
    "streams(d) == {'7': (2, 30.0), '20': (1, 30.0)} and d['skipped']['not_object'] == 4 and d['skipped']['bad_args'] == 1"

# ---------------------------------------------------------------------------
section "shared corpus"

CORPUS_FILE=${KD_SHARED:+$KD_SHARED/corpus/hta/trace_diff_control.json.gz}
if [ -n "$KD_SHARED" ] && [ -d "$KD_SHARED" ] && [ -f "$CORPUS_FILE" ]; then
    if inspect_json "$CORPUS_FILE"; then
        if json_ok "$T/out" 'd["chosen_pid"] == "3"'; then
            ok "corpus trace_diff_control: chosen pid 3"
        else
            notok "corpus trace_diff_control: chosen pid 3" "chosen_pid=$(json_eval "$T/out" 'd.get("chosen_pid")')"
        fi
        if json_ok "$T/out" '{"7", "20", "21"} <= {s["stream"] for s in d["streams"]}'; then
            ok "corpus trace_diff_control: streams 7, 20, 21 present"
        else
            notok "corpus trace_diff_control: streams 7, 20, 21 present" "streams=$(json_eval "$T/out" '[s["stream"] for s in d["streams"]]')"
        fi
    fi
    run "$KD_BIN" triage --format json --dump-internals "$CORPUS_FILE"
    if [ "$rc" -ne 0 ]; then
        notok "corpus trace_diff_control: 60 nccl kernels" "triage rc=$rc, stderr: $(head -c 300 "$T/err")"
    elif json_ok "$T/out" 'sum(1 for st in d["stages"].values() for e in st.get("events", []) if "nccl" in e["name"]) == 60'; then
        ok "corpus trace_diff_control: 60 nccl kernels"
    else
        notok "corpus trace_diff_control: 60 nccl kernels" \
            "counted $(json_eval "$T/out" 'sum(1 for st in d["stages"].values() for e in st.get("events", []) if "nccl" in e["name"])')"
    fi
    # the corpus diff pair: all three reports, readable by standard readers
    TEST_FILE=$KD_SHARED/corpus/hta/trace_diff_test.json.gz
    run "$KD_BIN" diff "$CORPUS_FILE" "$TEST_FILE" --csv "$T/c1.csv" --markdown "$T/c1.md" --json "$T/c1.json" -q
    rc1=$rc
    run "$KD_BIN" diff "$CORPUS_FILE" "$TEST_FILE" --csv "$T/c2.csv" --markdown "$T/c2.md" --json "$T/c2.json" -q
    if [ "$rc1" -eq 0 ] && [ "$rc" -eq 0 ] &&
        python3 -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1]))); assert len(r) > 1 and all(len(x)==len(r[0]) for x in r)' "$T/c1.csv" &&
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"]=="kerndiff.diff/2"' "$T/c1.json" &&
        [ "$(wc -m <"$T/c1.md")" -lt 60000 ]; then
        ok "corpus diff control -> test: CSV parses, JSON parses, Markdown under 60,000 characters"
    else
        notok "corpus diff control -> test: CSV parses, JSON parses, Markdown under 60,000 characters" "rc=$rc1/$rc, stderr: $(err_text)"
    fi
    if cmp -s "$T/c1.csv" "$T/c2.csv" && cmp -s "$T/c1.md" "$T/c2.md" && cmp -s "$T/c1.json" "$T/c2.json"; then
        ok "corpus diff twice: identical bytes"
    else
        notok "corpus diff twice: identical bytes" "outputs differ"
    fi
else
    echo "SKIP - shared corpus checks (no ${CORPUS_FILE:-KD_SHARED/corpus/hta/trace_diff_control.json.gz})"
fi

# ---------------------------------------------------------------------------
section "--threads (split load of a large plain or gzip trace)"

for cmd in inspect triage; do
    run "$KD_BIN" $cmd --threads 3 "$T/good.json"
    expect_usage_error "kerndiff $cmd --threads 3" "--threads"
done
run "$KD_BIN" diff --threads 0 "$T/good.json" "$T/good.json"
expect_usage_error "kerndiff diff --threads 0" "--threads"

if [ "$(wc -c <"$T/large.json")" -gt 16777216 ]; then
    ok "the large trace is above the 16 MiB split size"
else
    notok "the large trace is above the 16 MiB split size" "$(wc -c <"$T/large.json") bytes"
fi
# same_bytes_both_threads FILE WHAT: inspect and triage --format json print
# the same bytes with --threads 1 and --threads 2 (the last in $T/t1.json).
same_bytes_both_threads() {
    local cmd rc1 rc2
    for cmd in inspect triage; do
        "$KD_BIN" $cmd --threads 1 --format json "$1" >"$T/t1.json" 2>"$T/err"
        rc1=$?
        "$KD_BIN" $cmd --threads 2 --format json "$1" >"$T/t2.json" 2>"$T/err"
        rc2=$?
        if [ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] && [ -s "$T/t1.json" ] && cmp -s "$T/t1.json" "$T/t2.json"; then
            ok "$cmd --threads 2 gives the bytes of --threads 1 on $2"
        else
            notok "$cmd --threads 2 gives the bytes of --threads 1 on $2" "rc=$rc1/$rc2, stderr: $(err_text)"
        fi
    done
}
same_bytes_both_threads "$T/large.json" "a 17 MB plain trace"
if json_ok "$T/t1.json" 'd["stages"]["all"] is not None'; then
    ok "the large trace's triage has an all stage"
else
    notok "the large trace's triage has an all stage" "$(head -c 200 "$T/t1.json")"
fi

# gzip of 1-64 MiB uncompressed: inflated by the second thread as the first
# parses, then cut (load.c "gzip split"); same bytes out, same errors.
gzip -1 -c "$T/large.json" >"$T/large.json.gz"
same_bytes_both_threads "$T/large.json.gz" "the gzip of the 17 MB trace"
if json_ok "$T/t1.json" 'd["stages"]["all"] is not None' &&
    "$KD_BIN" inspect --threads 2 --format json "$T/large.json.gz" >"$T/gi.json" 2>"$T/err" &&
    json_ok "$T/gi.json" 'd["files"][0]["gzip"] is True and d["files"][0]["json_bytes"] == '"$(wc -c <"$T/large.json")"; then
    ok "the gzip trace loaded on two threads is reported as gzip with its JSON size"
else
    notok "the gzip trace loaded on two threads is reported as gzip with its JSON size" "$(head -c 300 "$T/gi.json")"
fi
head -c $(($(wc -c <"$T/large.json.gz") * 3 / 4)) "$T/large.json.gz" >"$T/cut.json.gz"
"$KD_BIN" inspect --threads 1 "$T/cut.json.gz" >/dev/null 2>"$T/e1"
rc1=$?
"$KD_BIN" inspect --threads 2 "$T/cut.json.gz" >/dev/null 2>"$T/e2"
rc2=$?
if [ "$rc1" -eq 2 ] && [ "$rc2" -eq 2 ] && [ "$(wc -l <"$T/e2")" -eq 1 ] && cmp -s "$T/e1" "$T/e2" &&
    grep -q "cut.json.gz" "$T/e2"; then
    ok "a truncated gzip trace: the same one-line error with one and two threads"
else
    notok "a truncated gzip trace: the same one-line error with one and two threads" "rc=$rc1/$rc2: $(cat "$T/e1") | $(cat "$T/e2")"
fi

finish
