#!/bin/sh
# test_hostile.sh — the hostile inputs of the "Reliability" issue (items 7,
# 8, 11, 12) and traces on standard input, end to end:
#
#   7   a memory cap (prlimit --as=256M) under a trace with a 200 MB kernel
#       name: exit 2 with one "out of memory" line, never a signal
#   8   strings much longer than a read block: a 200 MB one loads (linear
#       time; the quadratic loader took seconds per 100 MB and never ended at
#       1.5 GB), one over the --max-string limit (256 MiB by default) stops
#       the load with its byte offset, also when it never ends (1.5 GB
#       streamed), and a 1 MB kernel name keeps working
#   11  a gzip member ending one byte before a 1 MiB read block, then a second
#       member; zero padding after the last member (gzip -t accepts both)
#   12  zstd and xz traces read as gzip ones (several frames / streams too);
#       bzip2 refused with a message naming it
#   -   "-" reads the trace from standard input (plain, gzip, zstd, xz)
#
# Every input is generated here, in a scratch directory removed on exit (the
# big ones are removed right after their check). Needs python3 (for an exact
# gzip member size); zstd, xz, bzip2 and prlimit checks are skipped, with the
# reason, where the tool is missing; the memory-cap checks are skipped under
# ASan (it reserves terabytes of address space). Prints one line per check,
# then "N passed, N failed". Exit status: 0 all passed, 1 some failed, 77
# KD_BIN missing.
set -u

KD_CLI_DIR=$(dirname "$0")
[ -f "$KD_CLI_DIR/lib.sh" ] || KD_CLI_DIR=${KD_SRCDIR:-.}/tests/cli
# shellcheck source=lib.sh
. "$KD_CLI_DIR/lib.sh"
kd_test_init kd-hostile

# repeat N CHAR: CHAR N times, streamed
repeat() { head -c "$1" /dev/zero | tr '\000' "$2"; }

# name_trace N: the base trace plus a kernel whose name is N bytes of 'n'
name_trace()
{
    printf '{"traceEvents":[%s,{"ph":"X","cat":"kernel","name":"' "$EVENTS"
    repeat "$1" n
    printf '","pid":3,"tid":7,"ts":300,"dur":5,"args":{"stream":7}}]}\n'
}

# key_trace N: a string of N bytes under a key before traceEvents
key_trace()
{
    printf '{"deviceProperties":[],"huge":"'
    repeat "$1" a
    printf '",\n"traceEvents":[%s]}\n' "$EVENTS"
}

# same_inspect DESC FILE [REF]: inspect --format json of FILE exits 0 with
# the kernel numbers of REF (default: the plain base trace)
P=$T/plain.json
printf '{"traceEvents":[%s]}\n' "$EVENTS" >"$P"
run "$KD_BIN" inspect --format json "$P"
cp "$T/out" "$T/plain.inspect.json"
# the kernel numbers of an inspect document (not the file names or sizes)
NUMBERS='
import json, sys
def n(f):
    d = json.load(open(f, encoding="utf-8"))
    r = {k: d.get(k) for k in ("chosen_pid", "pids", "streams", "stages", "categories", "steps")}
    for s in r["stages"] or []:
        s.pop("trace", None)
    return r
sys.exit(0 if n(sys.argv[1]) == n(sys.argv[2]) else 1)'
same_inspect()
{
    si_ref=$T/plain.inspect.json
    if [ $# -ge 3 ]; then
        run "$KD_BIN" inspect --format json "$3"
        cp "$T/out" "$T/ref.inspect.json"
        si_ref=$T/ref.inspect.json
    fi
    run "$KD_BIN" inspect --format json "$2"
    if [ "$rc" -ne 0 ]; then
        notok "$1" "exit $rc; stderr: $(err_text)"
    elif python3 -c "$NUMBERS" "$T/out" "$si_ref" 2>/dev/null; then
        ok "$1"
    else
        notok "$1" "kernel numbers differ from the plain trace's"
    fi
}

# fatal DESC PATH [PATTERN...]: inspect refuses PATH (exit 2, one line
# naming it, each PATTERN on it, nothing on stdout)
fatal()
{
    f_desc=$1
    f_path=$2
    shift 2
    run "$KD_BIN" inspect "$f_path"
    f_r=$(one_line_error 2 "$f_path" "$@")
    [ -s "$T/out" ] && f_r="$f_r; stdout not empty"
    check "$f_desc" "$f_r"
}

have() { command -v "$1" >/dev/null 2>&1; }

ASAN=0
if have ldd && ldd "$KD_BIN" 2>/dev/null | grep -q 'libasan'; then
    ASAN=1
elif grep -q '__asan_init' "$KD_BIN" 2>/dev/null; then
    ASAN=1
fi

# ---------------------------------------------------------------------------
section "item 8: strings longer than a read block, and than --max-string"

key_trace 200000000 >"$T/key200.json"
same_inspect "a 200 MB string under a skipped key loads (linear time, within the 60 s timeout)" "$T/key200.json"
rm -f "$T/key200.json"

key_trace 300000000 >"$T/key300.json"
fatal "a 300 MB string (over the 256 MiB default --max-string): exit 2 naming the limit and the offset" \
    "$T/key300.json" "--max-string" "268435456" byte
rm -f "$T/key300.json"

# 1.5 GB that never ends in the file: stopped at the limit, not read to the end
{
    printf '{"traceEvents":[%s],"huge":"' "$EVENTS"
    repeat 1500000000 a 2>/dev/null
} | $KD_TIMEOUT "$KD_BIN" inspect - >"$T/out" 2>"$T/err"
rc=$?
r=$(one_line_error 2 "standard input" "--max-string" byte)
check "a 1.5 GB string on standard input: stopped at the limit, exit 2 with its offset" "$r"

name_trace 1048576 >"$T/name1m.json"
run "$KD_BIN" inspect --format json "$T/name1m.json"
if [ "$rc" -eq 0 ] && python3 -c "
import json, sys
d = json.load(open(sys.argv[1], encoding='utf-8'))
sys.exit(0 if d['streams'][0]['kernels'] == 3 else 1)" "$T/out" 2>/dev/null; then
    ok "a 1 MB kernel name keeps working (inspect)"
else
    notok "a 1 MB kernel name keeps working (inspect)" "exit $rc; stderr: $(err_text)"
fi
run "$KD_BIN" triage --format json "$T/name1m.json"
check "a 1 MB kernel name keeps working (triage)" "$([ "$rc" -eq 0 ] || echo "exit $rc; stderr: $(err_text)")"

# ---------------------------------------------------------------------------
section "item 7: out of memory under a memory cap"

if [ "$ASAN" = 1 ]; then
    ok "prlimit --as=256M, a 200 MB kernel name # skip ASan build (it reserves terabytes of address space)"
    ok "prlimit --as=256M, the base trace # skip ASan build"
elif ! have prlimit; then
    ok "prlimit --as=256M, a 200 MB kernel name # skip no prlimit (util-linux)"
    ok "prlimit --as=256M, the base trace # skip no prlimit"
else
    run prlimit --as=268435456 "$KD_BIN" inspect "$P"
    check "prlimit --as=256M, the base trace: exit 0" "$([ "$rc" -eq 0 ] || echo "exit $rc; stderr: $(err_text)")"
    name_trace 200000000 >"$T/name200.json"
    run prlimit --as=268435456 "$KD_BIN" inspect "$T/name200.json"
    r=$(one_line_error 2 "$T/name200.json" "out of memory")
    check "prlimit --as=256M, a 200 MB kernel name: exit 2, one 'out of memory' line, no signal" "$r"
    run prlimit --as=268435456 "$KD_BIN" triage --format json "$T/name200.json"
    r=$(one_line_error 2 "$T/name200.json" "out of memory")
    check "prlimit --as=256M, triage of a 200 MB kernel name: exit 2, 'out of memory'" "$r"
    rm -f "$T/name200.json"
fi

# ---------------------------------------------------------------------------
section "item 11: gzip members next to a read-block boundary, zero padding"

# first member: exactly 1 MiB + DELTA bytes (stored, so its size follows
# the padding), holding {"pad":"xxx…", ; second: the rest of the document.
# DELTA runs over -4..4: the member ends on each side of the read block's
# end (which lies a few bytes past 1 MiB: the magic bytes are sniffed first)
bad=""
for delta in -4 -3 -2 -1 0 1 2 3 4; do
    if ! python3 - "$T/m1.gz" "$T/m2.gz" "$EVENTS" "$delta" <<'EOF'
import sys, zlib
def member(data, level):
    c = zlib.compressobj(level, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()
target = (1 << 20) + int(sys.argv[4])
pad = target - 64
while True:
    m = member(b'{"pad":"' + b'x' * pad + b'",', 0)
    if len(m) == target:
        break
    if len(m) < target or pad < target - 8192:
        sys.exit(1)
    pad -= 1
open(sys.argv[1], "wb").write(m)
open(sys.argv[2], "wb").write(member(('"traceEvents":[%s]}\n' % sys.argv[3]).encode(), 6))
EOF
    then
        bad="$bad; python3 could not build a member of 1 MiB + $delta bytes"
        continue
    fi
    cat "$T/m1.gz" "$T/m2.gz" >"$T/boundary.json.gz"
    gzip -dc "$T/boundary.json.gz" >/dev/null 2>&1 || bad="$bad; gzip -dc refuses the $delta file"
    for th in 1 2; do
        run "$KD_BIN" inspect --threads $th "$T/boundary.json.gz"
        [ "$rc" -eq 0 ] || bad="$bad; member of 1 MiB + $delta bytes, --threads $th: exit $rc: $(err_text)"
    done
done
check "a gzip member ending next to a 1 MiB read block (-4..4 bytes), then another: read as zcat reads it" "$bad"

gzip -c "$P" >"$T/padded.json.gz"
head -c 4096 /dev/zero >>"$T/padded.json.gz"
if gzip -t "$T/padded.json.gz" 2>/dev/null; then
    same_inspect "zero padding after the last gzip member (gzip -t accepts it)" "$T/padded.json.gz"
else
    ok "zero padding after the last gzip member # skip this gzip -t refuses it"
fi
printf 'x' >>"$T/padded.json.gz"
fatal "zero padding, then a byte that is not: trailing garbage" "$T/padded.json.gz" "trailing garbage"

# ---------------------------------------------------------------------------
section "item 12: zstd and xz read, bzip2 named"

if have zstd; then
    zstd -q -c "$P" >"$T/trace.json.zst"
    same_inspect "zstd trace" "$T/trace.json.zst"
    head -c 40 "$P" | zstd -q -c >"$T/frames.zst"
    tail -c +41 "$P" | zstd -q -c >>"$T/frames.zst"
    same_inspect "zstd trace in two frames" "$T/frames.zst"
    size=$(wc -c <"$T/trace.json.zst")
    head -c $((size - 3)) "$T/trace.json.zst" >"$T/trunc.zst"
    fatal "truncated zstd" "$T/trunc.zst" "zstd"
else
    for d in "zstd trace" "zstd trace in two frames" "truncated zstd"; do ok "$d # skip no zstd tool"; done
fi
if have xz; then
    xz -c "$P" >"$T/trace.json.xz"
    same_inspect "xz trace" "$T/trace.json.xz"
    head -c 40 "$P" | xz -c >"$T/streams.xz"
    tail -c +41 "$P" | xz -c >>"$T/streams.xz"
    same_inspect "xz trace in two streams" "$T/streams.xz"
    size=$(wc -c <"$T/trace.json.xz")
    head -c $((size - 3)) "$T/trace.json.xz" >"$T/trunc.xz"
    fatal "truncated xz" "$T/trunc.xz" "xz"
else
    for d in "xz trace" "xz trace in two streams" "truncated xz"; do ok "$d # skip no xz tool"; done
fi
if have bzip2; then
    bzip2 -c "$P" >"$T/trace.json.bz2"
    fatal "bzip2 trace: named, not 'invalid JSON'" "$T/trace.json.bz2" "bzip2" "decompress it first"
    grep -q "invalid JSON" "$T/err" && notok "bzip2 message" "says invalid JSON: $(err_text)"
else
    ok "bzip2 trace # skip no bzip2 tool"
fi

# ---------------------------------------------------------------------------
section "standard input: '-' as the trace path"

# stdin_same DESC CMD...: `CMD | kerndiff inspect --format json -` gives the
# plain trace's kernel numbers
stdin_same()
{
    sd_desc=$1
    shift
    "$@" | $KD_TIMEOUT "$KD_BIN" inspect --format json - >"$T/out" 2>"$T/err"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        notok "$sd_desc" "exit $rc; stderr: $(err_text)"
    elif python3 -c "$NUMBERS" "$T/out" "$T/plain.inspect.json" 2>/dev/null; then
        ok "$sd_desc"
    else
        notok "$sd_desc" "kernel numbers differ from the plain trace's"
    fi
}
stdin_same "plain JSON on standard input" cat "$P"
stdin_same "gzip on standard input (zcat-style)" gzip -c "$P"
if have zstd; then stdin_same "zstd on standard input" zstd -q -c "$P"; else ok "zstd on standard input # skip no zstd tool"; fi
if have xz; then stdin_same "xz on standard input" xz -c "$P"; else ok "xz on standard input # skip no xz tool"; fi
printf '{"traceEvents":[' | $KD_TIMEOUT "$KD_BIN" inspect - >"$T/out" 2>"$T/err"
rc=$?
check "truncated JSON on standard input: exit 2, named 'standard input'" "$(one_line_error 2 "standard input" byte)"

finish
