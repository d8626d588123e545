# lib.sh — helpers of test_cli.sh (POSIX sh; sourced, not run).
#
# Expects: KD_BIN (the binary) and T (the scratch directory). Every command
# runs under `timeout 60` with stdout in $T/out, stderr in $T/err and the exit
# status in $rc.

rc=0

# kd_test_init NAME: the start of a CLI script: skips (exit 77) without a
# built binary, makes the scratch directory $T (prefix NAME), removed on exit.
kd_test_init()
{
    if [ -z "${KD_BIN:-}" ] || [ ! -x "$KD_BIN" ]; then
        echo "SKIP: KD_BIN is not set or not executable ('${KD_BIN:-}')"
        exit 77
    fi
    T=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || { echo "cannot create a scratch dir"; exit 99; }
    trap 'rm -rf "$T"' EXIT
    trap 'exit 130' INT TERM HUP
}

# expect_true DESC SHELL-CONDITION: ok when the condition holds.
expect_true()
{
    if eval "$2"; then ok "$1"; else notok "$1" "rc=$rc, stderr: $(err_text)"; fi
}

# The base trace of the CLI scripts: three kernels on two streams of pid 3,
# stream 7 busy 30 us (k1 10 + k2 20), stream 20 busy 30 us (one nccl
# kernel); 60 us of kernel time in all.
K1='{"ph":"X","cat":"kernel","name":"k1","pid":3,"tid":7,"ts":100,"dur":10,"args":{"stream":7,"External id":1,"correlation":11}}'
K2='{"ph":"X","cat":"kernel","name":"k2","pid":3,"tid":7,"ts":120,"dur":20,"args":{"stream":7,"External id":2,"correlation":12}}'
K3='{"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce","pid":3,"tid":20,"ts":105,"dur":30,"args":{"stream":20,"External id":3,"correlation":13}}'
EVENTS="$K1,$K2,$K3"

KD_PASS=0
KD_FAIL=0
KD_N=0

if command -v timeout >/dev/null 2>&1; then
    KD_TIMEOUT="timeout ${KD_TIMEOUT_SECS:-60}" # run-valgrind.sh raises it
else
    KD_TIMEOUT=""
fi

section() { echo "# $1"; }

ok()
{
    KD_N=$((KD_N + 1))
    KD_PASS=$((KD_PASS + 1))
    echo "ok $KD_N - $1"
}

# notok DESC REASON
notok()
{
    KD_N=$((KD_N + 1))
    KD_FAIL=$((KD_FAIL + 1))
    echo "not ok $KD_N - $1: $2" | tr '\n' ' ' | head -c 2000
    echo
}

# check DESC REASON: ok when REASON is empty.
check()
{
    if [ -z "$2" ]; then
        ok "$1"
    else
        notok "$1" "${2#; }"
    fi
}

finish()
{
    echo "$KD_PASS passed, $KD_FAIL failed"
    [ "$KD_FAIL" -eq 0 ] || exit 1
    exit 0
}

# run CMD ARGS...
run()
{
    # shellcheck disable=SC2086 # KD_TIMEOUT is a word list on purpose
    $KD_TIMEOUT "$@" >"$T/out" 2>"$T/err" </dev/null
    rc=$?
}

# The stderr of the last run, shortened, for reasons.
err_text() { head -c 400 "$T/err" | tr '\n' '|'; }

# one_line_error RC PATH [PATTERN...]: prints what is wrong with the last run
# as an error exit (nothing when right): exit status RC, not a crash or a
# timeout, stderr exactly one line containing PATH and each PATTERN. The
# pattern "byte" means "byte" followed by a number (a parse-error offset).
one_line_error()
{
    want=$1
    path=$2
    shift 2
    r=""
    if [ "$rc" -eq 124 ]; then
        r="$r; timed out (60 s)"
    elif [ "$rc" -ge 128 ]; then
        r="$r; crashed (exit $rc)"
    elif [ "$rc" -ne "$want" ]; then
        r="$r; exit $rc, not $want"
    fi
    lines=$(awk 'END { print NR }' "$T/err")
    if [ "$lines" -ne 1 ]; then
        r="$r; stderr has $lines lines, not 1"
    fi
    if [ -n "$path" ] && ! grep -qF -- "$path" "$T/err"; then
        r="$r; stderr does not name $path"
    fi
    for pat in "$@"; do
        if [ "$pat" = byte ]; then
            # the offset, not a digit of the (random) scratch path
            if ! sed "s|$path||g" "$T/err" | grep -q 'byte[^0-9]*[0-9]'; then
                r="$r; no 'byte N' offset"
            fi
        elif ! grep -qF -- "$pat" "$T/err"; then
            r="$r; stderr lacks '$pat'"
        fi
    done
    if [ -n "$r" ]; then
        echo "$r; stderr: $(err_text)"
    fi
}

# expect_usage_error DESC PATTERN: the last run was a usage error.
expect_usage_error()
{
    r=$(one_line_error 2 "" ${2:+"$2"})
    [ -s "$T/out" ] && r="$r; stdout not empty"
    check "$1: exit 2, one line" "$r"
}

# bad_input DESC PATH [PATTERN...]: inspect and triage both refuse PATH.
bad_input()
{
    desc=$1
    bpath=$2
    shift 2
    run "$KD_BIN" inspect "$bpath"
    check "inspect, $desc: exit 2, one line naming the file" \
        "$(one_line_error 2 "$bpath" "$@")"
    run "$KD_BIN" triage --format json "$bpath"
    r=$(one_line_error 2 "$bpath" "$@")
    [ -s "$T/out" ] && r="$r; stdout not empty ($(head -c 100 "$T/out"))"
    check "triage, $desc: exit 2, one line naming the file, empty stdout" "$r"
}

# Python helpers for the JSON checks: d is the document.
KD_PY_PRELUDE='
import json, sys, math
def streams(d):
    return {s["stream"]: (s["kernels"], round(s["busy_us"], 6)) for s in d["streams"]}
def nkernels(d):
    return sum(s["kernels"] for s in d["streams"])
def nskipped(d):
    return sum(d["skipped"].values())
def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
def summary(d):
    try:
        return "chosen_pid=%r streams=%r skipped=%r read=%r" % (
            d.get("chosen_pid"), streams(d),
            {k: v for k, v in d.get("skipped", {}).items() if v},
            d.get("events", {}).get("read"))
    except Exception as e:
        return "unexpected document (%s): %s" % (e, json.dumps(d)[:300])
'

# json_ok FILE EXPR [ARG]: true when the Python EXPR holds for the document
# (ARG is sys.argv[3]).
json_ok()
{
    python3 -c "$KD_PY_PRELUDE
try:
    d = json.load(open(sys.argv[1], encoding='utf-8'))
    sys.exit(0 if eval(sys.argv[2]) else 1)
except SystemExit:
    raise
except Exception:
    sys.exit(1)
" "$1" "$2" "${3:-}" 2>/dev/null
}

# json_eval FILE EXPR: prints the Python EXPR's value (or the error).
json_eval()
{
    python3 -c "$KD_PY_PRELUDE
try:
    d = json.load(open(sys.argv[1], encoding='utf-8'))
    print(repr(eval(sys.argv[2]))[:600])
except Exception as e:
    print('cannot evaluate: %s' % e)
" "$1" "$2" 2>&1
}

# diff_json DESC ARGS...: runs diff ARGS --format json; true when it exits 0
# with a JSON document (else reports DESC as a failed check).
diff_json()
{
    dj_desc=$1
    shift
    run "$KD_BIN" diff "$@" --format json
    if [ "$rc" -ne 0 ] || ! json_ok "$T/out" 'isinstance(d, dict)'; then
        notok "$dj_desc" "exit $rc; stderr: $(err_text); stdout: $(head -c 200 "$T/out")"
        return 1
    fi
    return 0
}

# expect_json DESC EXPR SHOWN: the last JSON on stdout satisfies EXPR (else
# the failure shows the Python expression SHOWN).
expect_json()
{
    if json_ok "$T/out" "$2"; then
        ok "$1"
    else
        notok "$1" "got $(json_eval "$T/out" "$3")"
    fi
}

# inspect_json PATH [DESC]: runs inspect --format json; true when it exits 0
# with a JSON document on stdout (else reports DESC as a failed check).
inspect_json()
{
    ij_desc=${2:-inspect --format json $(basename "$1")}
    run "$KD_BIN" inspect --format json "$1"
    if [ "$rc" -ne 0 ]; then
        notok "$ij_desc" "exit $rc; stderr: $(err_text)"
        return 1
    fi
    if ! json_ok "$T/out" 'isinstance(d, dict)'; then
        notok "$ij_desc" "stdout is not a JSON object: $(head -c 200 "$T/out")"
        return 1
    fi
    return 0
}

# good_input DESC PATH EXPR: inspect accepts PATH and its JSON satisfies EXPR;
# triage accepts it too.
good_input()
{
    if inspect_json "$2" "inspect, $1"; then
        if json_ok "$T/out" "$3"; then
            ok "inspect, $1"
        else
            notok "inspect, $1" "$(json_eval "$T/out" 'summary(d)')"
        fi
    fi
    run "$KD_BIN" triage --format json "$2"
    if [ "$rc" -eq 0 ] && json_ok "$T/out" 'isinstance(d, dict) and "stages" in d'; then
        ok "triage, $1: exit 0 with a JSON document"
    else
        notok "triage, $1: exit 0 with a JSON document" "exit $rc; stderr: $(err_text)"
    fi
}

# others_than NAME DIR: the entries of DIR other than NAME, one a line.
others_than()
{
    for e in "$2"/* "$2"/.[!.]*; do
        [ -e "$e" ] || continue
        [ "$(basename "$e")" = "$1" ] || basename "$e"
    done
}

# flip_bytes FILE OFFSET COUNT: inverts COUNT bytes of FILE at OFFSET.
flip_bytes()
{
    esc=""
    for b in $(od -An -tu1 -j "$2" -N "$3" "$1"); do
        esc="$esc\\$(printf '%03o' $((b ^ 255)))"
    done
    # shellcheck disable=SC2059 # esc is a format of octal escapes on purpose
    printf "$esc" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
