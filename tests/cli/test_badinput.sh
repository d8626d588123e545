#!/bin/sh
# test_badinput.sh — product.md §7 ("Bad input and safety") case by case, for
# every command that reads a trace: `inspect TRACE`, `triage TRACE`, and
# `diff BASELINE CANDIDATE` with the bad trace on each side (the other side is
# a good trace). test_cli.sh covers many of these inputs for inspect/triage
# in depth; this file is the per-command matrix.
#
#   fatal      exit 2, one stderr line naming the bad file, no crash or
#              timeout, nothing on stdout, no report file (nor temp file) left
#              in the output directory given to --json/--csv/--markdown
#   event      a malformed event: exit 0 everywhere, inspect counts it under
#              its skip reason (or keeps it when the reference coerces it)
#   works      an odd but valid input: exit 0 everywhere, with the same
#              kernel numbers as the plain version of the same trace
#
# Run by `make check` with KD_BIN (the built binary) and KD_SRCDIR (the
# source tree). Every input is generated here, in a scratch directory removed
# on exit. Prints one line per check ("ok N - ..." / "not ok N - ...: reason"),
# then "N passed, N failed". Exit status: 0 all passed, 1 some failed,
# 77 KD_BIN missing.
set -u

KD_BIN=${KD_BIN:-}
if [ -z "$KD_BIN" ] || [ ! -x "$KD_BIN" ]; then
    echo "SKIP: KD_BIN is not set or not executable ('$KD_BIN')"
    exit 77
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/kd-bad.XXXXXX") || { echo "cannot create a scratch dir"; exit 99; }
trap 'chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP

KD_CLI_DIR=$(dirname "$0")
[ -f "$KD_CLI_DIR/lib.sh" ] || KD_CLI_DIR=${KD_SRCDIR:-.}/tests/cli
# shellcheck source=lib.sh
. "$KD_CLI_DIR/lib.sh"

# ---------------------------------------------------------------------------
# generators

# K1, K2, K3 and EVENTS (lib.sh): the base trace's three kernels
A7='{"stream":7}'

# trace EVENT...: a {"traceEvents": [...]} document of the EVENTs on stdout
trace()
{
    printf '{"traceEvents":['
    tr_sep=""
    for tr_e in "$@"; do
        printf '%s%s' "$tr_sep" "$tr_e"
        tr_sep=","
    done
    printf ']}\n'
}

# kernel NAME TS DUR [ARGS]: one complete kernel event of pid 3, stream 7
kernel()
{
    printf '{"ph":"X","cat":"kernel","name":"%s","pid":3,"tid":7,"ts":%s,"dur":%s,"args":%s}' \
        "$1" "$2" "$3" "${4:-$A7}"
}

# many_kernels N: a trace of N kernels (large enough for a many-block gzip)
many_kernels()
{
    awk -v n="$1" 'BEGIN {
        printf "{\"traceEvents\":[";
        for (i = 0; i < n; i++)
            printf "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kern_%d_%d\",\"pid\":3,\"tid\":7,\"ts\":%d,\"dur\":%d,\"args\":{\"stream\":%d,\"External id\":%d}}",
                (i ? "," : ""), i, (i * 7919) % 1000, i * 10, 1 + i % 9, 7 + i % 3, i;
        printf "]}\n";
    }'
}

# repeat N CHAR: CHAR N times, streamed (never held in a shell variable)
repeat() { head -c "$1" /dev/zero | tr '\000' "$2"; }

# nested N: N levels of [{"a": ... }] around 1 (N even), streamed
nested() { awk -v n="$1" 'BEGIN { for (i = 0; i < n / 2; i++) printf "[{\"a\":"; printf "1"; for (i = 0; i < n / 2; i++) printf "}]"; }'; }

# The good traces. OTHER is the good side of every diff (its own file, so
# that its path never equals a plain trace's path in the comparisons below).
trace "$K1" "$K2" "$K3" >"$T/p_good.json"
cp "$T/p_good.json" "$T/other.json"
OTHER=$T/other.json
REP=$T/rep # the report files of every fatal run go here; it must stay empty
mkdir "$REP"

# ---------------------------------------------------------------------------
# checks

# fatal_check DESC BAD [PATTERN...]: the last run refused BAD (see the top).
# INSPECT_REPORT=1 allows stdout (inspect prints its report of a trace with
# no GPU kernels before the error, by design).
INSPECT_REPORT=0
fatal_check()
{
    fk_desc=$1
    fk_bad=$2
    shift 2
    fk_r=$(one_line_error 2 "$fk_bad" "$@")
    if [ -s "$T/out" ] && [ "$INSPECT_REPORT" != 1 ]; then
        fk_r="$fk_r; stdout not empty ($(head -c 100 "$T/out" | tr '\n' ' '))"
    fi
    fk_left=$(others_than "" "$REP" | tr '\n' ' ')
    if [ -n "$fk_left" ]; then
        fk_r="$fk_r; left behind in the output dir: $fk_left"
        rm -rf "$REP" && mkdir "$REP"
    fi
    check "$fk_desc" "$fk_r"
}

# fatal_case DESC BAD [PATTERN...]: inspect, triage and diff (BAD as the
# baseline, then as the candidate) all refuse BAD; each PATTERN must be on
# the error line ("byte" = a byte offset, as in lib.sh).
fatal_case()
{
    fc_desc=$1
    fc_bad=$2
    shift 2
    run "$KD_BIN" inspect "$fc_bad"
    fatal_check "inspect, $fc_desc: exit 2, one line naming the file" "$fc_bad" "$@"
    INSPECT_REPORT=0
    run "$KD_BIN" triage "$fc_bad" --json "$REP/o.json" --csv "$REP/o.csv" --markdown "$REP/o.md"
    fatal_check "triage, $fc_desc: exit 2, one line naming the file, no report file" "$fc_bad" "$@"
    run "$KD_BIN" diff "$fc_bad" "$OTHER" --json "$REP/o.json" --csv "$REP/o.csv" --markdown "$REP/o.md"
    fatal_check "diff (bad baseline), $fc_desc: exit 2, one line naming the file, no report file" "$fc_bad" "$@"
    run "$KD_BIN" diff "$OTHER" "$fc_bad" --json "$REP/o.json" --csv "$REP/o.csv" --markdown "$REP/o.md"
    fatal_check "diff (bad candidate), $fc_desc: exit 2, one line naming the file, no report file" "$fc_bad" "$@"
}

# skip_case DESC WHY: the four checks of a fatal case, skipped
skip_case()
{
    for sc_cmd in inspect triage "diff (bad baseline)" "diff (bad candidate)"; do
        ok "$sc_cmd, $1 # skip $2"
    done
}

# exit0_check DESC: the last run exited 0 (not a crash, timeout or error);
# true when it did
exit0_check()
{
    if [ "$rc" -eq 0 ]; then
        return 0
    elif [ "$rc" -eq 124 ]; then
        notok "$1" "timed out (60 s)"
    else
        notok "$1" "exit $rc; stderr: $(err_text)"
    fi
    return 1
}

# Python starts slowly, so the JSON checks of a section are queued (one line
# each in $T/queue, fields separated by tabs) and run by one python3 at the
# section's end (json_flush):
#   expr DESC FILE EXPR            EXPR (lib.sh's prelude) holds for FILE
#   cmp DESC KIND A B PATH_A PATH_B
#                                  JSON output A (of a run on PATH_A) has the
#                                  same numbers as B (of PATH_B): each path is
#                                  replaced by <TRACE> in its own document and
#                                  strings over 64 KiB by "<long:LENGTH>";
#                                  KIND inspect compares the kernel numbers
#                                  only (chosen_pid, pids, streams, stages,
#                                  categories, steps), not file or event counts
TAB=$(printf '\t')
: >"$T/queue"
KD_QN=0

# keep_out: copies the last run's stdout to a new file, named in $KD_QF
keep_out()
{
    KD_QN=$((KD_QN + 1))
    KD_QF=$T/q.$KD_QN.json
    cp "$T/out" "$KD_QF"
}

queue() { (IFS=$TAB && printf '%s\n' "$*") >>"$T/queue"; }

KD_FLUSH='
def norm(x, p):
    if isinstance(x, str):
        x = x.replace(p, "<TRACE>")
        return "<long:%d>" % len(x) if len(x) > 65536 else x
    if isinstance(x, list):
        return [norm(v, p) for v in x]
    if isinstance(x, dict):
        return {norm(k, p): norm(v, p) for k, v in x.items()}
    return x
def load(f):
    return json.load(open(f, encoding="utf-8"))
def numbers(kind, f, p):
    d = norm(load(f), p)
    if kind == "inspect":
        d = {k: d.get(k) for k in ("chosen_pid", "pids", "streams", "stages", "categories", "steps")}
    if kind == "triage":
        for k in ("read", "skipped"):
            d.get("accounting", {}).pop(k, None)
    if kind == "diff":
        # whether the sides are the same bytes is about the files, not the numbers
        d.get("inputs", {}).pop("identical", None)
        d["warnings"] = [w for w in d.get("warnings", []) if "are the same bytes" not in w and
                         "malformed kernel events skipped" not in w]
        # the skipped kernels are counted (read includes them): not kernel numbers
        for side in d.get("inputs", {}).get("sides", {}).values():
            for k in ("read", "skipped"):
                side.get("accounting", {}).pop(k, None)
    return d
def first_diff(x, y, at):
    if type(x) != type(y):
        return "%s: %r vs %r" % (at, x, y)
    if isinstance(x, dict):
        for k in list(x) + [k for k in y if k not in x]:
            if k not in x or k not in y:
                return "%s: key %r in one document only" % (at, k)
            r = first_diff(x[k], y[k], "%s.%s" % (at, k))
            if r:
                return r
        return None
    if isinstance(x, list):
        if len(x) != len(y):
            return "%s: %d vs %d entries" % (at, len(x), len(y))
        for i, (u, v) in enumerate(zip(x, y)):
            r = first_diff(u, v, "%s[%d]" % (at, i))
            if r:
                return r
        return None
    return None if x == y else "%s: %r vs %r" % (at, x, y)
for line in open(sys.argv[1], encoding="utf-8"):
    f = line.rstrip("\n").split("\t")
    try:
        if f[0] == "expr":
            d = load(f[2])
            r = None if eval(f[3]) else "%s does not hold: %s" % (f[3], summary(d))
        else:
            r = first_diff(numbers(f[2], f[3], f[5]), numbers(f[2], f[4], f[6]), "$")
    except Exception as e:
        r = "cannot check: %r" % e
    print("%s\t%s" % (f[1], (r or "")[:500].replace("\t", " ").replace("\n", " ")))
'

# json_flush: runs the queued checks, one ok/not ok line each
json_flush()
{
    python3 -c "$KD_PY_PRELUDE$KD_FLUSH" "$T/queue" >"$T/results" 2>"$T/results.err"
    while IFS=$TAB read -r jf_desc jf_reason; do
        check "$jf_desc" "$jf_reason"
    done <"$T/results"
    if [ -s "$T/results.err" ]; then
        notok "the queued JSON checks ran" "$(head -c 400 "$T/results.err" | tr '\n' '|')"
    fi
    : >"$T/queue"
    rm -f "$T"/q.*.json
}

# event_case DESC EVENT EXPECT: the good trace plus one malformed EVENT.
# EXPECT is the skip reason inspect must count it under (bad_ts, bad_dur,
# missing_name, bad_type, bad_args, int_range, not_object), or "kept" when
# the value is one the reference coerces (str(name), float(ts)), so the event
# is a fourth kernel. triage and diff (both sides) must exit 0.
event_case()
{
    ec_f=$T/event.json
    trace "$K1" "$K2" "$K3" "$2" >"$ec_f"
    if [ "$3" = kept ]; then
        ec_expr='nkernels(d) == 4 and nskipped(d) == 0'
    elif [ "$3" = incomplete ]; then
        # reference is_complete_duration_event: an X event without dur is not
        # complete; it is read, not skipped, and is no kernel
        ec_expr="streams(d) == {'7': (2, 30.0), '20': (1, 30.0)} and nskipped(d) == 0"
    else
        ec_expr="streams(d) == {'7': (2, 30.0), '20': (1, 30.0)} and d['skipped']['$3'] == 1 and nskipped(d) == 1"
    fi
    ec_name="inspect, event with $1: exit 0, counted as $3"
    run "$KD_BIN" inspect --format json "$ec_f"
    exit0_check "$ec_name" && keep_out && queue expr "$ec_name" "$KD_QF" "$ec_expr"
    run "$KD_BIN" triage --format json "$ec_f"
    exit0_check "triage, event with $1: exit 0" && ok "triage, event with $1: exit 0"
    run "$KD_BIN" diff "$ec_f" "$OTHER"
    exit0_check "diff (baseline), event with $1: exit 0" && ok "diff (baseline), event with $1: exit 0"
    run "$KD_BIN" diff "$OTHER" "$ec_f"
    exit0_check "diff (candidate), event with $1: exit 0" && ok "diff (candidate), event with $1: exit 0"
}

# works_case DESC FILE PLAIN [EXPR]: FILE is read by every command (exit 0)
# with the same kernel numbers as PLAIN: inspect counts, the triage JSON, and
# the diff JSON against the good trace on each side. EXPR, if given, must
# also hold for FILE's inspect JSON.
works_case()
{
    wc_desc=$1
    wc_f=$2
    wc_p=$3
    for wc_what in inspect triage diff-baseline diff-candidate; do
        wc_name="$wc_what, $wc_desc: exit 0, same kernel numbers as the plain trace"
        for wc_t in "$wc_p" "$wc_f"; do
            case $wc_what in
            inspect) run "$KD_BIN" inspect --format json "$wc_t" ;;
            triage) run "$KD_BIN" triage --format json "$wc_t" ;;
            diff-baseline) run "$KD_BIN" diff --format json "$wc_t" "$OTHER" ;;
            diff-candidate) run "$KD_BIN" diff --format json "$OTHER" "$wc_t" ;;
            esac
            keep_out
            [ "$wc_t" = "$wc_p" ] && wc_ref=$KD_QF
        done
        # (the plain trace is good: a failure there shows in the comparison)
        exit0_check "$wc_name" || continue
        queue cmp "$wc_name" "${wc_what%%-*}" "$KD_QF" "$wc_ref" "$wc_f" "$wc_p"
        if [ "$wc_what" = inspect ] && [ $# -ge 4 ]; then
            queue expr "inspect, $wc_desc: $4" "$KD_QF" "$4"
        fi
    done
}

# ---------------------------------------------------------------------------
section "fatal: exit 2, one line naming the file, no report file"

fatal_case "missing path" "$T/no-such-file.json"

trace "$K1" "$K2" "$K3" >"$T/unreadable.json"
chmod 000 "$T/unreadable.json"
if [ "$(id -u)" -eq 0 ]; then
    skip_case "unreadable path (chmod 000)" "running as root, which can read it"
else
    fatal_case "unreadable path (chmod 000)" "$T/unreadable.json"
fi

: >"$T/empty.json"
fatal_case "empty file" "$T/empty.json"

printf '  \n\t \r\n   \n' >"$T/blank.json"
fatal_case "whitespace-only file" "$T/blank.json"

mkdir "$T/emptydir"
fatal_case "empty directory" "$T/emptydir"

mkdir "$T/notracedir"
printf 'not a trace\n' >"$T/notracedir/README.txt"
printf '{"foo": 1}\n' >"$T/notracedir/notes.json"
fatal_case "directory with no trace (a README, a JSON file without traceEvents)" "$T/notracedir"

printf 'hello\n' >"$T/hello.json"
fatal_case "not JSON" "$T/hello.json" byte

size=$(wc -c <"$T/p_good.json")
head -c $((size / 2)) "$T/p_good.json" >"$T/trunc.json"
fatal_case "truncated JSON" "$T/trunc.json" byte

mkdir "$T/truncdir"
cp "$T/trunc.json" "$T/truncdir/rank0.pt.trace.json"
fatal_case "directory holding a truncated trace" "$T/truncdir" rank0.pt.trace.json byte

many_kernels 4000 | gzip -c >"$T/big.json.gz"
size=$(wc -c <"$T/big.json.gz")
head -c $((size / 2)) "$T/big.json.gz" >"$T/trunc.json.gz"
fatal_case "truncated gzip" "$T/trunc.json.gz"

cp "$T/big.json.gz" "$T/corrupt.json.gz"
flip_bytes "$T/corrupt.json.gz" $((size / 2)) 32
fatal_case "corrupt gzip (32 bytes flipped mid-stream of a multi-block member)" "$T/corrupt.json.gz"

for v in '{}' '{"a": 1}' '42' '"events"' 'null' 'true'; do
    printf '{"traceEvents": %s}\n' "$v" >"$T/events_not_list.json"
    fatal_case "traceEvents not a list ($v)" "$T/events_not_list.json" traceEvents
done

printf '{"traceEvents":[%s],"traceEvents":{}}\n' "$EVENTS" >"$T/twice_obj.json"
fatal_case "traceEvents twice, the last one an object" "$T/twice_obj.json" traceEvents

trace '{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":4242,"tid":1,"ts":1,"dur":5,"args":{"External id":1}}' \
    '{"ph":"X","cat":"python_function","name":"model.py(10): forward","pid":4242,"tid":1,"ts":0,"dur":9}' \
    '{"ph":"X","cat":"python_function","name":"train.py(3): <module>","pid":5151,"tid":2,"ts":0,"dur":20}' \
    >"$T/nokernels.json"
INSPECT_REPORT=1
fatal_case "no GPU kernels (cpu_ops and python frames only)" "$T/nokernels.json" \
    "no GPU kernels" 4242 5151 cpu_op python_function

trace "$(kernel "$(printf 'bad\377\376name')" 100 10)" >"$T/utf8_name.json"
fatal_case "invalid UTF-8 in a kernel name" "$T/utf8_name.json" byte

trace '{"ph":"X","cat":"kernel","na\377me":"k","pid":3,"tid":7,"ts":1,"dur":2,"args":{"stream":7}}' >"$T/utf8_key.json"
fatal_case "invalid UTF-8 in a key" "$T/utf8_key.json" byte

# well-formed lead/continuation bytes that still are not UTF-8 (RFC 3629;
# Python's strict decoder, which the reference reads with, refuses them)
trace "$(kernel "$(printf 'overlong\300\257')" 100 10)" >"$T/utf8_overlong.json"
fatal_case "overlong UTF-8 sequence (C0 AF) in a kernel name" "$T/utf8_overlong.json" byte
trace "$(kernel "$(printf 'surrogate\355\240\200')" 100 10)" >"$T/utf8_surrogate.json"
fatal_case "UTF-8-encoded surrogate (ED A0 80) in a kernel name" "$T/utf8_surrogate.json" byte
trace "$(kernel "$(printf 'beyond\364\220\200\200')" 100 10)" >"$T/utf8_beyond.json"
fatal_case "code point beyond U+10FFFF (F4 90 80 80) in a kernel name" "$T/utf8_beyond.json" byte

# ---------------------------------------------------------------------------
section "malformed events: skipped and counted, exit 0"

# ev TS DUR NAME PID TID ARGS: one kernel event with raw JSON field values
ev() { printf '{"ph":"X","cat":"kernel","name":%s,"pid":%s,"tid":%s,"ts":%s,"dur":%s,"args":%s}' "$3" "$4" "$5" "$1" "$2" "$6"; }

event_case "ts a non-numeric string" "$(ev '"abc"' 5 '"kx"' 3 7 "$A7")" bad_ts
event_case "ts missing" '{"ph":"X","cat":"kernel","name":"kx","pid":3,"tid":7,"dur":5,"args":{"stream":7}}' bad_ts
event_case "ts null" "$(ev null 5 '"kx"' 3 7 "$A7")" bad_ts
event_case "ts a list" "$(ev '[300]' 5 '"kx"' 3 7 "$A7")" bad_ts
event_case "ts an object" "$(ev '{"v":300}' 5 '"kx"' 3 7 "$A7")" bad_ts
event_case "ts 1e400 (overflows to infinity)" "$(ev 1e400 5 '"kx"' 3 7 "$A7")" bad_ts
event_case "ts NaN" "$(ev NaN 5 '"kx"' 3 7 "$A7")" bad_ts
event_case "ts a numeric string (float('300') in the reference)" "$(ev '"300"' 5 '"kx"' 3 7 "$A7")" kept
event_case "dur a non-numeric string" "$(ev 300 '"xyz"' '"kx"' 3 7 "$A7")" bad_dur
event_case "dur an object" "$(ev 300 '{}' '"kx"' 3 7 "$A7")" bad_dur
event_case "dur Infinity" "$(ev 300 Infinity '"kx"' 3 7 "$A7")" bad_dur
event_case "dur missing" '{"ph":"X","cat":"kernel","name":"kx","pid":3,"tid":7,"ts":300,"args":{"stream":7}}' incomplete
event_case "dur null" "$(ev 300 null '"kx"' 3 7 "$A7")" incomplete
event_case "ts + dur == ts (ts 1e17, dur 1e-3)" "$(ev 1e17 1e-3 '"kx"' 3 7 "$A7")" zero_extent
event_case "name missing" '{"ph":"X","cat":"kernel","pid":3,"tid":7,"ts":300,"dur":5,"args":{"stream":7}}' missing_name
event_case "name a list" "$(ev 300 5 '["kx"]' 3 7 "$A7")" bad_type
event_case "name an object" "$(ev 300 5 '{"n":"kx"}' 3 7 "$A7")" bad_type
event_case "name a number (str(42) in the reference)" "$(ev 300 5 42 3 7 "$A7")" kept
event_case "pid an object" "$(ev 300 5 '"kx"' '{"pid":3}' 7 "$A7")" bad_type
event_case "pid a list" "$(ev 300 5 '"kx"' '[3]' 7 "$A7")" bad_type
event_case "tid an object" "$(ev 300 5 '"kx"' 3 '{}' "$A7")" bad_type
event_case "cat a list" '{"ph":"X","cat":["kernel"],"name":"kx","pid":3,"tid":7,"ts":300,"dur":5,"args":{"stream":7}}' bad_type
event_case "args a list" "$(ev 300 5 '"kx"' 3 7 '[1]')" bad_args
event_case "args a string" "$(ev 300 5 '"kx"' 3 7 '"stream 7"')" bad_args
event_case "args a number" "$(ev 300 5 '"kx"' 3 7 7)" bad_args
event_case "External id beyond int64" "$(ev 300 5 '"kx"' 3 7 '{"stream":7,"External id":99999999999999999999}')" int_range
event_case "External id below int64" "$(ev 300 5 '"kx"' 3 7 '{"stream":7,"External id":-99999999999999999999}')" int_range
for v in 1 '"x"' '[]' null true; do
    event_case "a list element $v instead of an event" "$v" not_object
done
json_flush

# ---------------------------------------------------------------------------
section "odd inputs that must work: same kernel numbers as the plain trace"

P=$T/p_good.json

size=$(wc -c <"$P")
head -c $((size / 2)) "$P" | gzip -c >"$T/w_two_members.json.gz"
tail -c +$((size / 2 + 1)) "$P" | gzip -c >>"$T/w_two_members.json.gz"
works_case "JSON split across two concatenated gzip members" "$T/w_two_members.json.gz" "$P"

# traceEvents after a 100 MB string under another key: streamed to disk,
# removed right after the check
{
    printf '{"deviceProperties":[],"huge":"'
    repeat 100000000 a
    printf '",\n"traceEvents":[%s]}\n' "$EVENTS"
} >"$T/w_huge_key.json"
works_case "traceEvents after a 100 MB string under another key" "$T/w_huge_key.json" "$P"
rm -f "$T/w_huge_key.json"

printf '\357\273\277' | cat - "$P" >"$T/w_bom.json"
works_case "UTF-8 BOM at the start" "$T/w_bom.json" "$P"

printf '{"traceEvents": [\n%s,\n%s,\n%s\n]}\n' "$K1" "$K2" "$K3" |
    awk '{ gsub(/,/, ",\r\n"); gsub(/\{/, "{\r\n"); printf "%s\r\n", $0 }' >"$T/w_crlf.json"
works_case "CRLF line endings throughout" "$T/w_crlf.json" "$P"

OLD='{"ph":"X","cat":"kernel","name":"old_kernel","pid":99,"tid":1,"ts":1,"dur":500,"args":{"stream":99}}'
printf '{"traceEvents":[%s,%s],"otherData":{},"traceEvents":[%s]}\n' "$OLD" "$OLD" "$EVENTS" >"$T/w_twice.json"
works_case "traceEvents twice: the second list counts" "$T/w_twice.json" "$P" \
    "d['events']['read'] == 3"
trace "$OLD" "$OLD" >"$T/p_old.json"
printf '{"traceEvents":[%s],"traceEvents":[%s,%s]}\n' "$EVENTS" "$OLD" "$OLD" >"$T/w_twice2.json"
works_case "traceEvents twice: the second list counts (old kernels second)" "$T/w_twice2.json" "$T/p_old.json" \
    "d['chosen_pid'] == '99' and d['events']['read'] == 2"

printf '{"meta":NaN,"peak":-Infinity,"traceEvents":[%s,%s,%s,%s,%s],"end":Infinity}\n' \
    "$K1" \
    '{"ph":"X","cat":"kernel","name":"k2","pid":3,"tid":7,"ts":120,"dur":20,"args":{"stream":7,"External id":2,"correlation":12,"ratio":NaN,"lim":[Infinity,-Infinity]}}' \
    "$K3" "$(kernel nan_ts NaN 5)" "$(kernel inf_dur 200 Infinity)" >"$T/w_nan.json"
works_case "NaN/Infinity literals (the two events with NaN ts / Infinity dur skipped)" "$T/w_nan.json" "$P" \
    "d['skipped']['bad_ts'] == 1 and d['skipped']['bad_dur'] == 1 and nskipped(d) == 2"

printf '{"bigTop":123456789012345678901234567890,"traceEvents":[%s,%s,%s],"neg":-98765432109876543210987654321}\n' \
    "$K1" \
    '{"ph":"X","cat":"kernel","name":"k2","pid":3,"tid":7,"ts":120,"dur":20,"args":{"stream":7,"External id":2,"correlation":12,"bytes":99999999999999999999999,"Sequence number":-99999999999999999999}}' \
    "$K3" >"$T/w_bigint.json"
works_case "integers beyond int64 in fields the loader does not use" "$T/w_bigint.json" "$P" "nskipped(d) == 0"

# a 1 MB kernel name; the plain version names that kernel "<long:1048576>",
# which is what the comparison turns the 1 MB name into
{
    printf '{"traceEvents":[%s,{"ph":"X","cat":"kernel","name":"' "$EVENTS"
    repeat 1048576 n
    printf '","pid":3,"tid":7,"ts":300,"dur":5,"args":{"stream":7}}]}\n'
} >"$T/w_long_name.json"
trace "$K1" "$K2" "$K3" "$(kernel '<long:1048576>' 300 5)" >"$T/p_long_name.json"
works_case "a 1 MB kernel name" "$T/w_long_name.json" "$T/p_long_name.json" "nskipped(d) == 0"

# args nested 10000 levels deep, between two fields the loader reads
{
    printf '{"traceEvents":[%s,{"ph":"X","cat":"kernel","name":"deep","pid":3,"tid":7,"ts":300,"dur":5,"args":{"stream":7,"deep":' "$EVENTS"
    nested 10000
    printf ',"External id":77}}]}\n'
} >"$T/w_deep.json"
trace "$K1" "$K2" "$K3" "$(kernel deep 300 5 '{"stream":7,"deep":1,"External id":77}')" >"$T/p_deep.json"
works_case "args nested 10000 levels deep" "$T/w_deep.json" "$T/p_deep.json" "nskipped(d) == 0"
json_flush

finish
