#!/bin/sh
# test_usage.sh — the rough edges a new user meets first: a --pid that
# matches nothing, a pid per side, a command given in the wrong place,
# misspelt options, threshold units, repeated options, --match-rule's
# OLD_GLOB=NEW_GLOB, --limit's range,
# standard input as a trace, and the --help texts.
#
# Run by `make check` with KD_BIN and KD_SRCDIR. Prints "ok N - ..." /
# "not ok N - ...", then "N passed, N failed". Exit status: 0, 1 some
# failed, 77 no KD_BIN.
set -u

KD_CLI_DIR=$(dirname "$0")
[ -f "$KD_CLI_DIR/lib.sh" ] || KD_CLI_DIR=${KD_SRCDIR:-.}/tests/cli
# shellcheck source=lib.sh
. "$KD_CLI_DIR/lib.sh"
kd_test_init kd-usage

B="$T/base.json"
printf '{"traceEvents":[%s]}\n' "$EVENTS" >"$B"
# two GPU processes: pid 5 (heavier) and pid 9
P5='{"ph":"X","cat":"kernel","name":"k_heavy","pid":5,"tid":7,"ts":0,"dur":100,"args":{"stream":7}}'
P9='{"ph":"X","cat":"kernel","name":"k_light","pid":9,"tid":7,"ts":0,"dur":10,"args":{"stream":7}}'
TWO="$T/two.json"
printf '{"traceEvents":[%s,%s]}\n' "$P5" "$P9" >"$TWO"

section "--pid that matches no pid"
for cmd in inspect triage; do
    run "$KD_BIN" $cmd "$B" --pid nosuch
    check "$cmd --pid nosuch: says no pid matches and lists the pids" \
        "$(one_line_error 2 "$B" "no pid matches" "nosuch" "pids seen: 3")"
done
run "$KD_BIN" diff "$B" "$B" --pid nosuch
check "diff --pid nosuch: the same message" "$(one_line_error 2 "$B" "no pid matches")"

section "a pid per side"
run "$KD_BIN" diff "$B" "$TWO" --candidate-pid 9 --json - -q
expect_true "diff --candidate-pid 9: candidate pid 9, baseline's heaviest pid 3" \
    "[ \"\$rc\" -eq 0 ] && json_ok \"\$T/out\" 'd[\"inputs\"][\"candidate_pid\"] == \"9\" and d[\"inputs\"][\"baseline_pid\"] == \"3\"'"
run "$KD_BIN" diff "$TWO" "$TWO" --pid 5 --baseline-pid 9 --json - -q
expect_true "diff --pid 5 --baseline-pid 9: the side option wins on its side" \
    "[ \"\$rc\" -eq 0 ] && json_ok \"\$T/out\" 'd[\"inputs\"][\"baseline_pid\"] == \"9\" and d[\"inputs\"][\"candidate_pid\"] == \"5\"'"
run "$KD_BIN" diff "$B" "$TWO" --candidate-pid nosuch
check "diff --candidate-pid nosuch: names the candidate" "$(one_line_error 2 "$TWO" "no pid matches")"

section "commands and options that were not understood"
run "$KD_BIN" "$B" "$B" diff
check "kerndiff A B diff: suggests 'kerndiff diff A B'" \
    "$(one_line_error 2 "$B" "the command comes first: kerndiff diff $B $B")"
run "$KD_BIN" dif "$B" "$B"
check "kerndiff dif: did you mean 'diff'" "$(one_line_error 2 "" "did you mean 'diff'")"
run "$KD_BIN" "$B"
check "kerndiff TRACE: says how to read it" "$(one_line_error 2 "$B" "kerndiff inspect $B")"
run "$KD_BIN" diff "$B" "$B" --fail-on-exposd-comm 5%
expect_usage_error "diff --fail-on-exposd-comm (misspelt): did you mean --fail-on-exposed-comm" \
    "did you mean '--fail-on-exposed-comm'"
run "$KD_BIN" triage "$B" --min-shaer 2
expect_usage_error "triage --min-shaer: did you mean --min-share" "did you mean '--min-share'"
run "$KD_BIN" inspect "$B" --formt json
expect_usage_error "inspect --formt: did you mean --format" "did you mean '--format'"
run "$KD_BIN" triage "$B" --m x
expect_usage_error "triage --m: ambiguous, names the candidates" "ambiguous"
run "$KD_BIN" triage "$B" --json
expect_usage_error "triage --json without a value: says it needs one" "needs a value"
run "$KD_BIN" diff "$B" "$B" --zzzzzz
expect_usage_error "diff --zzzzzz: unknown, no far-fetched suggestion" "unknown option '--zzzzzz'"
grep -q "did you mean" "$T/err" && notok "no suggestion for --zzzzzz" "$(err_text)" || ok "no suggestion for --zzzzzz"

section "gate thresholds: us, ms and s; one threshold per gate"
for spec in "5%,200us:200" "5%,0.2ms:200" "1ms:1000" "0.001s:1000" "2.5s:2500000"; do
    arg=${spec%%:*}
    want=${spec#*:}
    run "$KD_BIN" diff "$B" "$B" --allow-identical --fail-on-exposed-comm "$arg" --json - -q
    expect_true "--fail-on-exposed-comm $arg is $want us" \
        "[ \"\$rc\" -eq 0 ] && json_ok \"\$T/out\" 'abs(d[\"gate\"][\"fail_on\"][\"abs_us\"] - $want) < 1e-6'"
done
run "$KD_BIN" diff "$B" "$B" --fail-on-exposed-comm 5ks
expect_usage_error "--fail-on-exposed-comm 5ks: bad unit" "threshold"
run "$KD_BIN" diff "$B" "$B" --fail-on-exposed-comm 5% --fail-on-exposed-comm 10%
expect_usage_error "--fail-on-exposed-comm twice: an error, not last-wins" "given twice"
run "$KD_BIN" diff "$B" "$B" --warn-on-exposed-comm 5% --warn-on-exposed-comm 10%
expect_usage_error "--warn-on-exposed-comm twice: an error" "given twice"
run "$KD_BIN" diff "$B" "$B" --json "$T/a.json" --json "$T/b.json"
expect_usage_error "--json twice: an error" "given twice"

section "--match-rule OLD_GLOB=NEW_GLOB: parsed, repeatable"
for spec in "abc:no '='" "=sage_fwd:OLD_GLOB is empty" "aiter*=:NEW_GLOB is empty" "a=b=c:more than one '='"; do
    arg=${spec%%:*}
    why=${spec#*:}
    run "$KD_BIN" diff "$B" "$B" --match-rule "$arg"
    r=$(one_line_error 2 "" "--match-rule" "$why")
    [ -s "$T/out" ] && r="$r; stdout not empty"
    check "diff --match-rule '$arg': $why; exit 2, one line naming the option" "$r"
done
run "$KD_BIN" diff "$B" "$B" --match-rule
expect_usage_error "diff --match-rule without a value: says it needs one" "needs a value"
run "$KD_BIN" diff "$B" "$B" --match-rule 'aiter::fmha_fwd*=sage_fwd' --match-rule 'k_*=k_?' --json - -q
expect_true "diff --match-rule given twice: repeatable, exit 0, a JSON report" \
    "[ \"\$rc\" -eq 0 ] && json_ok \"\$T/out\" 'd[\"schema\"] == \"kerndiff.diff/2\"'"
run "$KD_BIN" diff --help
expect_true "diff --help documents --match-rule" \
    "[ \"\$rc\" -eq 0 ] && grep -q -- '--match-rule OLD_GLOB=NEW_GLOB' \"\$T/out\" && grep -q 'before any heuristic' \"\$T/out\""

section "--limit and --min-share say their ranges"
run "$KD_BIN" triage "$B" --limit 99999999999999999999
expect_usage_error "triage --limit over the range: says the range" "0 (no limit) to 1000000"
run "$KD_BIN" triage "$B" --limit 1000001
expect_usage_error "triage --limit 1000001: says the range" "to 1000000"
run "$KD_BIN" triage "$B" --limit 1000000
expect_true "triage --limit 1000000: accepted" "[ \"\$rc\" -eq 0 ]"
run "$KD_BIN" triage "$B" --min-share 101
expect_usage_error "triage --min-share 101: says the range" "0 to 100"

section "--max-string: the longest string a trace may hold"
LONG=$(awk 'BEGIN { while (n++ < 3000) printf "k" }')
printf '{"traceEvents":[%s,{"ph":"X","cat":"kernel","name":"%s","pid":3,"tid":7,"ts":200,"dur":5,"args":{"stream":7}}]}\n' \
    "$EVENTS" "$LONG" >"$T/long.json"
for cmd in inspect triage; do
    run "$KD_BIN" $cmd "$T/long.json" --max-string 2K
    check "$cmd --max-string 2K on a 3000-byte name: exit 2 naming the limit and the byte" \
        "$(one_line_error 2 "$T/long.json" "2048-byte limit" "--max-string" byte)"
    run "$KD_BIN" $cmd "$T/long.json" --max-string 3K
    expect_true "$cmd --max-string 3K: the same trace loads" "[ \"\$rc\" -eq 0 ]"
done
run "$KD_BIN" diff "$B" "$T/long.json" --max-string 1000
check "diff --max-string 1000: names the candidate" "$(one_line_error 2 "$T/long.json" "1000-byte limit")"
run "$KD_BIN" diff "$B" "$T/long.json" --max-string none
expect_true "diff --max-string none: no limit" "[ \"\$rc\" -eq 0 ]"
for bad in 0 abc 5X -1; do
    run "$KD_BIN" triage "$B" --max-string "$bad"
    expect_usage_error "triage --max-string $bad: a usage error" "--max-string"
done

section "'-' reads the trace from standard input"
gzip -c "$B" >"$T/base.json.gz"
"$KD_BIN" triage "$B" --format json >"$T/file.out" 2>/dev/null
"$KD_BIN" triage - --format json <"$B" >"$T/stdin.out" 2>"$T/err"
rc=$?
expect_true "triage - < plain trace: exit 0" "[ \"\$rc\" -eq 0 ] && [ -s \"\$T/stdin.out\" ]"
"$KD_BIN" triage - --format json <"$T/base.json.gz" >"$T/stdin_gz.out" 2>"$T/err"
rc=$?
expect_true "zcat-style: triage - < gzip trace: exit 0, same tables as the plain one" \
    "[ \"\$rc\" -eq 0 ] && python3 -c 'import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:3]); sys.exit(0 if a[\"stages\"]==b[\"stages\"] else 1)' \"\$T/stdin.out\" \"\$T/stdin_gz.out\""
cat "$B" | "$KD_BIN" diff - "$B" --fail-on-exposed-comm 5% --format json >"$T/out" 2>"$T/err"
rc=$?
expect_true "cat TRACE | diff - TRACE: exit 0, a JSON report" \
    "[ \"\$rc\" -eq 0 ] && json_ok \"\$T/out\" 'd[\"gate\"][\"verdict\"] == \"pass\"'"
run "$KD_BIN" diff - -
expect_usage_error "diff - -: standard input can be read once" "only once"
printf 'not json' | "$KD_BIN" inspect - >"$T/out" 2>"$T/err"
rc=$?
check "inspect - < garbage: exit 2, one line" "$(one_line_error 2 "")"

section "--help texts"
run "$KD_BIN" triage --help
expect_true "triage --help explains --min-share and --limit in words, documents prefill" \
    "[ \"\$rc\" -eq 0 ] && grep -q 'percent of the' \"\$T/out\" && grep -q 'first rows of each stage' \"\$T/out\" && grep -q 'prefill' \"\$T/out\""
run "$KD_BIN" diff --help
expect_true "diff --help documents --baseline-pid, --candidate-pid, units, prefill, --max-string" \
    "[ \"\$rc\" -eq 0 ] && grep -q -- '--baseline-pid' \"\$T/out\" && grep -q -- '--candidate-pid' \"\$T/out\" && grep -q 'us, ms or s' \"\$T/out\" && grep -q prefill \"\$T/out\" && grep -q -- '--max-string' \"\$T/out\""
run "$KD_BIN" triage "$B" --stage prefill
expect_true "triage --stage prefill is accepted" "[ \"\$rc\" -eq 0 ]"
if [ -n "${KD_SRCDIR:-}" ] && [ -f "$KD_SRCDIR/docs/kerndiff.1" ]; then
    syn=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$KD_SRCDIR/docs/kerndiff.1")
    # an option set in bold on a line of its own (.B \-\-x) reads as required
    if echo "$syn" | grep -q '^\.B[I]* *\\-'; then
        notok "man page SYNOPSIS shows no option as required" "$(echo "$syn" | tr '\n' ' ' | head -c 300)"
    else
        ok "man page SYNOPSIS shows no option as required"
    fi
fi

finish
