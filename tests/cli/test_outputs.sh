#!/bin/sh
# test_outputs.sh — where reports are written (docs/diff.md "Outputs"): an
# output never replaces an input, a directory, a device or a symlink; a
# failed or interrupted run leaves nothing; every output commits together;
# modes follow the umask; long legal names work; one report on stdout.
#
# Run by `make check` with KD_BIN and KD_SRCDIR. Device nodes are made with
# mknod inside the scratch directory (never the machine's /dev); without
# root those checks skip with a reason. Prints "ok N - ..." / "not ok N -
# ...", then "N passed, N failed". Exit status: 0, 1 some failed, 77 no KD_BIN.
set -u

KD_CLI_DIR=$(dirname "$0")
[ -f "$KD_CLI_DIR/lib.sh" ] || KD_CLI_DIR=${KD_SRCDIR:-.}/tests/cli
# shellcheck source=lib.sh
. "$KD_CLI_DIR/lib.sh"
kd_test_init kd-out

# no_temp DIR: true when DIR holds no temp file of kerndiff's
no_temp() { ! ls -a "$1" | grep -q -e '\.tmp' -e '^\.kdtmp'; }

B="$T/base.json"
C="$T/cand.json"
printf '{"traceEvents":[%s]}\n' "$EVENTS" >"$B"
printf '{"traceEvents":[%s]}\n' "$K1,$K3" >"$C"
sum_c=$(cksum <"$C")
W="$T/w"
mkdir "$W"

# ---------------------------------------------------------------------------
section "an output that names an input is refused before any work"
for form in "$C" "$T/./cand.json"; do
    run "$KD_BIN" diff "$B" "$C" --markdown "$form"
    r=$(one_line_error 2 "$form" "input trace")
    [ "$(cksum <"$C")" = "$sum_c" ] || r="$r; the candidate changed"
    check "diff --markdown $form (the candidate): exit 2, candidate intact" "$r"
done
ln -s "$C" "$T/link.json"
ln "$C" "$T/hard.json"
for form in "$T/link.json" "$T/hard.json"; do
    run "$KD_BIN" diff "$B" "$C" --json "$form" -q
    r=$(one_line_error 2 "$form" "input trace")
    [ "$(cksum <"$C")" = "$sum_c" ] || r="$r; the candidate changed"
    check "diff --json $(basename "$form") (symlink / hard link to the candidate): refused" "$r"
done
run "$KD_BIN" triage "$C" --csv "$C"
check "triage --csv TRACE: refused" "$(one_line_error 2 "$C" "input trace")"
run "$KD_BIN" triage "$B" --mapping "$C" --json "$C"
check "triage --json MAPPING: refused" "$(one_line_error 2 "$C" "input trace")"
mkdir "$T/dir"
cp "$C" "$T/dir/rank0.json"
run "$KD_BIN" diff "$B" "$T/dir" --json "$T/dir/rank0.json"
check "diff --json naming a trace inside an input directory: refused" \
    "$(one_line_error 2 "$T/dir/rank0.json" "input trace")"

section "two outputs naming the same file"
run "$KD_BIN" diff "$B" "$C" --json "$W/a.out" --csv "$W/./a.out"
r=$(one_line_error 2 "a.out" "same file")
[ -e "$W/a.out" ] && r="$r; a.out was written"
check "diff --json F --csv ./F: exit 2, nothing written" "$r"
: >"$W/exists.out"
ln "$W/exists.out" "$W/exists2.out"
run "$KD_BIN" diff "$B" "$C" --json "$W/exists.out" --markdown "$W/exists2.out"
check "diff --json F --markdown (hard link to F): refused" "$(one_line_error 2 "exists" "same file")"
rm -f "$W"/*

section "a failed run leaves no output behind"
mkdir "$W/adir"
run "$KD_BIN" diff "$B" "$C" --markdown "$W/ok.md" --csv "$W/adir"
r=$(one_line_error 2 "$W/adir" "directory")
[ -e "$W/ok.md" ] && r="$r; ok.md was written"
no_temp "$W" || r="$r; a temp file is left"
check "diff --markdown ok.md --csv DIR: exit 2, ok.md not written" "$r"
rmdir "$W/adir"
"$KD_BIN" diff "$B" "$C" --csv "$W/co.csv" >&- 2>"$T/err"
rc=$?
r=$(one_line_error 2 "" "standard output")
[ -e "$W/co.csv" ] && r="$r; co.csv was written"
check "diff --csv co.csv with stdout closed: exit 2, co.csv not written" "$r"
"$KD_BIN" diff "$B" "$C" --csv "$W/co.csv" -q >&- 2>"$T/err"
rc=$?
expect_true "the same with -q (nothing for stdout): exit 0, co.csv written" \
    "[ \"\$rc\" -eq 0 ] && [ -s \"\$W/co.csv\" ]"
rm -f "$W/co.csv"
run "$KD_BIN" diff "$B" "$T/missing.json" --json "$W/x.json" --markdown "$W/x.md"
r=$(one_line_error 2 "$T/missing.json")
[ -n "$(ls -A "$W")" ] && r="$r; left in the output dir: $(ls -A "$W" | tr '\n' ' ')"
check "diff with a missing input: nothing written, no temp file" "$r"

section "a broken pipe on standard output (docs/diff.md: a write error, no file)"
awk 'BEGIN {
    printf "{\"traceEvents\":[";
    for (i = 0; i < 3000; i++)
        printf "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kernel_number_%d_with_a_long_name\",\"pid\":1,\"tid\":7,\"ts\":%d,\"dur\":5,\"args\":{\"stream\":7}}", (i ? "," : ""), i, i * 10;
    printf "]}\n";
}' >"$T/many.json"
# the CSV is far larger than a pipe's buffer, so the reader's exit is seen
( "$KD_BIN" diff "$T/many.json" "$C" --format csv --csv "$W/p.csv" 2>"$T/err"; echo $? >"$T/prc" ) | head -n 1 >/dev/null
rc=$(cat "$T/prc")
r=""
[ "$rc" -eq 2 ] || r="exit $rc, not 2"
grep -q "standard output" "$T/err" || r="$r; stderr: $(err_text)"
[ -e "$W/p.csv" ] && r="$r; p.csv was written"
no_temp "$W" || r="$r; a temp file is left"
check "diff --format csv | head -1: exit 2, no signal death, p.csv not written" "$r"

section "exactly one report on standard output"
run "$KD_BIN" diff "$B" "$C" --json -
expect_usage_error "diff --json - with the text report on stdout" "standard output"
run "$KD_BIN" triage "$B" --markdown - --format markdown
expect_usage_error "triage --markdown - --format markdown" "standard output"
run "$KD_BIN" diff "$B" "$C" --json - -q
expect_true "diff --json - -q: one valid JSON document on stdout" \
    "[ \"\$rc\" -eq 0 ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' \"\$T/out\""
run "$KD_BIN" triage "$B" --markdown - --csv - -q
expect_usage_error "triage --markdown - --csv - -q: names both" "the markdown report (--markdown -) and --csv -"

section "the verdict line once in a merged log"
"$KD_BIN" diff "$B" "$C" --fail-on-exposed-comm 5% >"$T/log" 2>&1
n=$(grep -cE '^kerndiff: (PASS|FAIL|WARN)' "$T/log")
check "diff >log 2>&1: the verdict line appears once ($n)" "$([ "$n" -eq 1 ] || echo "$n times")"
"$KD_BIN" diff "$B" "$C" --fail-on-exposed-comm 5% --format markdown 2>&1 | cat >"$T/log"
n=$(grep -cE '^kerndiff: (PASS|FAIL|WARN)' "$T/log")
check "diff --format markdown 2>&1 | cat: the verdict line appears once ($n)" "$([ "$n" -eq 1 ] || echo "$n times")"
run "$KD_BIN" diff "$B" "$C" --fail-on-exposed-comm 5%
check "diff >out 2>err: the verdict on both (the report's head and stderr)" \
    "$(grep -qE '^kerndiff: (PASS|FAIL|WARN)' "$T/out" && grep -qE '^kerndiff: (PASS|FAIL|WARN)' "$T/err" || echo "missing: $(err_text)")"
run "$KD_BIN" diff "$B" "$C" --fail-on-exposed-comm 5% --format json
check "diff --format json 2>&1: stderr keeps the verdict (JSON is not read as a log)" \
    "$(grep -qE '^kerndiff: (PASS|FAIL|WARN)' "$T/err" || echo "missing")"

section "symlinks are written through, atomically at their target"
: >"$W/target.json"
ln -s target.json "$W/link.json"
run "$KD_BIN" diff "$B" "$C" --json "$W/link.json" -q
expect_true "diff --json SYMLINK: the link stays a link, its target holds the report" \
    "[ \"\$rc\" -eq 0 ] && [ -L \"\$W/link.json\" ] && [ -s \"\$W/target.json\" ] && no_temp \"\$W\""
ln -s "$W/sub/new.json" "$W/dangling.json"
mkdir "$W/sub"
run "$KD_BIN" diff "$B" "$C" --csv "$W/dangling.json" -q
expect_true "diff --csv DANGLING-SYMLINK: the report is created at the link's target" \
    "[ \"\$rc\" -eq 0 ] && [ -L \"\$W/dangling.json\" ] && [ -s \"\$W/sub/new.json\" ]"
ln -s loop1 "$W/loop2"
ln -s loop2 "$W/loop1"
run "$KD_BIN" diff "$B" "$C" --csv "$W/loop1" -q
check "diff --csv SYMLINK-LOOP: exit 2, one line" "$(one_line_error 2 "$W/loop1")"
rm -rf "$W"/* "$W"/.[!.]* 2>/dev/null

section "FIFOs and devices are written in place, never replaced"
mkfifo "$W/fifo"
cat "$W/fifo" >"$T/fifo.out" &
reader=$!
run "$KD_BIN" diff "$B" "$C" --json "$W/fifo" -q
wait "$reader"
expect_true "diff --json FIFO: the FIFO stays a FIFO, the reader gets the JSON" \
    "[ \"\$rc\" -eq 0 ] && [ -p \"\$W/fifo\" ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' \"\$T/fifo.out\""
if mknod "$W/null" c 1 3 2>/dev/null && mknod "$W/full" c 1 7 2>/dev/null; then
    run "$KD_BIN" diff "$B" "$C" --json "$W/null" -q
    expect_true "diff --json NULL-DEVICE: exit 0, still a character device" \
        "[ \"\$rc\" -eq 0 ] && [ -c \"\$W/null\" ] && no_temp \"\$W\""
    ln -s null "$W/stdout-like"
    run "$KD_BIN" diff "$B" "$C" --csv "$W/stdout-like" -q
    expect_true "diff --csv SYMLINK-TO-DEVICE: the link and the device stay" \
        "[ \"\$rc\" -eq 0 ] && [ -L \"\$W/stdout-like\" ] && [ -c \"\$W/null\" ]"
    run "$KD_BIN" diff "$B" "$C" --csv "$W/full" --markdown "$W/ok.md" -q
    r=$(one_line_error 2 "$W/full")
    [ -c "$W/full" ] || r="$r; the device was replaced"
    [ -e "$W/ok.md" ] && r="$r; ok.md was written"
    check "diff --csv FULL-DEVICE --markdown ok.md: exit 2 (no space), nothing committed" "$r"
else
    echo "SKIP - device-node checks (mknod needs root)"
fi

section "modes follow the umask; an existing file keeps its mode"
rm -rf "$W"/*
(umask 022 && "$KD_BIN" diff "$B" "$C" --json "$W/m022.json" -q 2>/dev/null)
(umask 077 && "$KD_BIN" diff "$B" "$C" --json "$W/m077.json" -q 2>/dev/null)
: >"$W/kept.json"
chmod 640 "$W/kept.json"
(umask 077 && "$KD_BIN" diff "$B" "$C" --json "$W/kept.json" -q 2>/dev/null)
m1=$(stat -c %a "$W/m022.json" 2>/dev/null)
m2=$(stat -c %a "$W/m077.json" 2>/dev/null)
m3=$(stat -c %a "$W/kept.json" 2>/dev/null)
check "new report under umask 022 is 644 ($m1), under 077 is 600 ($m2), an existing 640 stays 640 ($m3)" \
    "$([ "$m1" = 644 ] && [ "$m2" = 600 ] && [ "$m3" = 640 ] || echo "modes $m1 $m2 $m3")"

section "long legal names; a name too long fails before the work"
name250=$(awk 'BEGIN { while (n++ < 250) printf "n" }')
name256=$(awk 'BEGIN { while (n++ < 256) printf "n" }')
run "$KD_BIN" diff "$B" "$C" --json "$W/$name250" -q
expect_true "diff --json with a 250-byte name: exit 0, written" \
    "[ \"\$rc\" -eq 0 ] && [ -s \"\$W/\$name250\" ] && no_temp \"\$W\""
run "$KD_BIN" diff "$B" "$C" --json "$W/$name256" -q
check "diff --json with a 256-byte name: exit 2, one line" "$(one_line_error 2 "" "too long")"

section "SIGINT / SIGTERM while a run holds its temp files"
for sig in TERM INT; do
    rm -rf "$W"/*
    mkfifo "$T/slow.fifo"
    # kerndiff reads the trace from a FIFO kept open and half written, so it
    # is still loading (its temp file created) when the signal comes
    ( exec "$KD_BIN" triage - --json "$W/out.json" -q <"$T/slow.fifo" 2>/dev/null ) &
    kpid=$!
    exec 3>"$T/slow.fifo"
    printf '{"traceEvents":[%s,' "$K1" >&3
    n=0
    while no_temp "$W" && [ "$n" -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
    had_temp=no
    no_temp "$W" || had_temp=yes
    kill -s "$sig" "$kpid" 2>/dev/null
    wait "$kpid"
    krc=$?
    exec 3>&-
    rm -f "$T/slow.fifo"
    r=""
    [ "$had_temp" = yes ] || r="no temp file seen while loading"
    no_temp "$W" || r="$r; temp file left: $(ls -a "$W" | tr '\n' ' ')"
    [ -e "$W/out.json" ] && r="$r; out.json written"
    [ "$krc" -ge 128 ] || r="$r; exit $krc, not death by signal"
    check "SIG$sig during the load: temp file removed, no report, killed by the signal" "$r"
done

finish
