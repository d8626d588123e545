#!/bin/bash
# kerndiff benchmark (product.md section 6).  See tests/bench/README.md.
#
#   bench.sh BUILD_DIR [--sizes "30 300 1000"] [--runs 3] [--corpus] [--gzip]
#                      [--seed S] [--scratch DIR] [--timeout SEC] [--one-thread]
#                      [--phases]
#
# Generates traces with gentrace into a scratch directory (reused when the
# same arguments produced them before), times bare_yajl and the kerndiff
# commands on each, and prints a Markdown table on stdout.  Progress and
# notes go to stderr.  Exit status: 0, or 1 when a command failed in a way
# other than "not implemented" (which is reported as n/a), 2 on usage.

# `make bench` runs this with $(SHELL), which may be dash: re-exec in bash.
if [ -z "${BASH_VERSION:-}" ]; then
    exec bash "$0" "$@"
fi

set -u

usage() {
    echo "usage: $0 BUILD_DIR [--sizes \"30 300 1000\"] [--runs N] [--corpus] [--gzip]" \
         "[--seed S] [--scratch DIR] [--timeout SEC] [--one-thread] [--phases]" >&2
    exit 2
}

[ $# -ge 1 ] || usage
BUILD_DIR=$1
shift
SIZES="30 300 1000"
RUNS=3
CORPUS=0
GZIP=0
ONE_THREAD=0
PHASES=0
SEED=1
SCRATCH=${TMPDIR:-/tmp}/kerndiff-bench
TIMEOUT=1800
while [ $# -gt 0 ]; do
    case $1 in
        --sizes) [ $# -ge 2 ] || usage; SIZES=$2; shift 2 ;;
        --runs) [ $# -ge 2 ] || usage; RUNS=$2; shift 2 ;;
        --seed) [ $# -ge 2 ] || usage; SEED=$2; shift 2 ;;
        --scratch) [ $# -ge 2 ] || usage; SCRATCH=$2; shift 2 ;;
        --timeout) [ $# -ge 2 ] || usage; TIMEOUT=$2; shift 2 ;;
        --corpus) CORPUS=1; shift ;;
        --gzip) GZIP=1; shift ;;
        --one-thread) ONE_THREAD=1; shift ;;
        --phases) PHASES=1; shift ;;
        -h|--help) usage ;;
        *) echo "bench.sh: unknown option '$1'" >&2; usage ;;
    esac
done
case $RUNS in ''|*[!0-9]*|0) echo "bench.sh: --runs needs a positive integer" >&2; exit 2 ;; esac
for s in $SIZES; do
    case $s in ''|*[!0-9.]*) echo "bench.sh: bad size '$s' in --sizes" >&2; exit 2 ;; esac
done

if [ ! -d "$BUILD_DIR" ]; then
    echo "bench.sh: $BUILD_DIR: not a directory" >&2
    exit 2
fi
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
SRC_DIR=$(cd "$(dirname "$0")/../.." && pwd)
KD=$BUILD_DIR/kerndiff
GEN=$BUILD_DIR/tests/bench/gentrace
BARE=$BUILD_DIR/tests/bench/bare_yajl
REP=$BUILD_DIR/tests/bench/replicate
PHASE_BIN=$BUILD_DIR/tests/bench/phases

for tool in "$GEN" "$BARE"; do
    if [ ! -x "$tool" ]; then
        echo "bench.sh: $tool is missing; run 'make tests/bench/gentrace tests/bench/bare_yajl' in $BUILD_DIR" >&2
        exit 2
    fi
done
mkdir -p "$SCRATCH" || { echo "bench.sh: cannot create $SCRATCH" >&2; exit 2; }
OUT=$SCRATCH/.cmd.out
ERR=$SCRATCH/.cmd.err
TIMEF=$SCRATCH/.cmd.time

TIME_BIN=${KD_BENCH_TIME:-/usr/bin/time}
if [ -x "$TIME_BIN" ]; then
    HAVE_TIME=1
else
    HAVE_TIME=0
    echo "bench.sh: $TIME_BIN not found (Debian package 'time'): peak RSS is reported as n/a" >&2
fi
HAVE_TIMEOUT=0
command -v timeout >/dev/null 2>&1 && HAVE_TIMEOUT=1

FAILED=0
ROWS=()
PHASE_ROWS=()
NOTES=()
declare -A EVENTS   # trace path -> event count
declare -A MBYTES   # trace path -> uncompressed JSON size in MB

log() { echo "bench.sh: $*" >&2; }

now() {
    if [ -n "${EPOCHREALTIME:-}" ]; then echo "$EPOCHREALTIME"; else date +%s.%N; fi
}

median() {
    printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 }
        END { if (NR == 0) print "n/a";
              else if (NR % 2) print a[(NR + 1) / 2];
              else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# RUN_STATUS = ok | na | fail; RUN_WALL seconds; RUN_RSS KB (or empty).
run_once() {
    local start end rc
    local -a wrap=()
    [ $HAVE_TIMEOUT = 1 ] && wrap=(timeout "$TIMEOUT")
    : >"$TIMEF"
    start=$(now)
    if [ $HAVE_TIME = 1 ]; then
        "${wrap[@]}" "$TIME_BIN" -f '%e %M' -o "$TIMEF" "$@" >"$OUT" 2>"$ERR"
        rc=$?
    else
        "${wrap[@]}" "$@" >"$OUT" 2>"$ERR"
        rc=$?
    fi
    end=$(now)
    RUN_WALL=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')
    RUN_RSS=
    [ $HAVE_TIME = 1 ] && RUN_RSS=$(tail -n 1 "$TIMEF" | awk 'NF == 2 { print $2 }')
    RUN_RC=$rc
    if [ $rc = 0 ]; then
        RUN_STATUS=ok
    elif [ $rc = 2 ] || grep -qi 'unknown command' "$ERR"; then
        RUN_STATUS=na
    else
        RUN_STATUS=fail
    fi
}

first_err_line() {
    local l
    l=$(grep -v '^Command exited with non-zero status' "$ERR" | head -n 1)
    [ -n "$l" ] || l="(no message)"
    printf '%s' "$l" | cut -c1-200
}

# ---- interleaved groups ------------------------------------------------
# The host's speed drifts (shared machines: +-15% over a minute), and every
# figure that matters is a ratio to a bare parse, so the commands of one
# trace (or pair) are timed as a group, round-robin: run 1 of each command,
# then run 2 of each, and so on. A bare parse and the commands divided by it
# then see the same conditions.
#
#   group_start
#   group_bare PATH NAME SHOW      bare_yajl PATH (SHOW=0: only a divisor)
#   group_cmd LABEL NAME MB EVENTS REFS NEEDS_OUTPUT CMD...
#                                  REFS: paths whose bare medians in this group
#                                  divide (the largest); NEEDS_OUTPUT=1 reports
#                                  an exit 0 with empty stdout as n/a (a stub)
#   group_run                      times them and appends the table rows
G_LABEL=() G_NAME=() G_MB=() G_EV=() G_REFS=() G_NEEDS=() G_CMD=() G_SHOW=() G_BARE=()

group_start() {
    G_LABEL=() G_NAME=() G_MB=() G_EV=() G_REFS=() G_NEEDS=() G_CMD=() G_SHOW=() G_BARE=()
}

group_cmd() {
    G_LABEL+=("$1") G_NAME+=("$2") G_MB+=("$3") G_EV+=("$4") G_REFS+=("$5") G_NEEDS+=("$6")
    G_SHOW+=(1) G_BARE+=("")
    shift 6
    G_CMD+=("$(printf '%q ' "$@")")
}

# One untimed counting pass fills EVENTS and MBYTES when no sidecar gave them.
group_bare() {
    local f=$1 name=$2 show=$3 n
    if [ -z "${EVENTS[$f]:-}" ] || [ -z "${MBYTES[$f]:-}" ]; then
        n=$("$BARE" --count-events "$f" 2>"$ERR" | awk '{ print $2 }')
        EVENTS[$f]=${n:-?}
        n=$(awk '/bytes parsed/ { for (i = 1; i <= NF; i++) if ($i == "bytes") printf "%.1f", $(i - 1) / 1e6 }' "$ERR")
        MBYTES[$f]=${n:-?}
    fi
    group_cmd "bare_yajl" "$name" "${MBYTES[$f]}" "${EVENTS[$f]}" "" 0 "$BARE" "$f"
    G_SHOW[-1]=$show
    G_BARE[-1]=$f
}

group_run() {
    local n=${#G_CMD[@]} i j
    local -a walls rsss status rc err
    for ((j = 0; j < n; j++)); do
        walls[j]= rsss[j]= status[j]=ok rc[j]=0 err[j]=
    done
    log "${G_NAME[0]}: ${n} commands x $RUNS runs, interleaved"
    for ((i = 0; i < RUNS; i++)); do
        for ((j = 0; j < n; j++)); do
            [ "${status[j]}" = ok ] || continue
            eval "run_once ${G_CMD[j]}"
            if [ $RUN_STATUS = ok ] && [ "${G_NEEDS[j]}" = 1 ] && [ ! -s "$OUT" ]; then
                RUN_STATUS=na
                echo "exit 0 with no output" >"$ERR"
            fi
            if [ $RUN_STATUS != ok ]; then
                status[j]=$RUN_STATUS rc[j]=$RUN_RC err[j]=$(first_err_line)
                continue
            fi
            walls[j]+=" $RUN_WALL"
            [ -n "$RUN_RSS" ] && rsss[j]+=" $RUN_RSS"
        done
    done
    local -A bare_med=()
    local -a med=()
    for ((j = 0; j < n; j++)); do
        med[j]=
        # shellcheck disable=SC2086
        [ "${status[j]}" = ok ] && med[j]=$(median ${walls[j]})
        [ -n "${G_BARE[j]}" ] && [ -n "${med[j]}" ] && bare_med[${G_BARE[j]}]=${med[j]}
    done
    local ref ratio rss p r what
    for ((j = 0; j < n; j++)); do
        [ "${G_SHOW[j]}" = 1 ] || continue
        local row="| ${G_NAME[j]} | ${G_MB[j]} | ${G_EV[j]} | ${G_LABEL[j]} |"
        if [ "${status[j]}" = na ]; then
            ROWS+=("$row n/a | n/a | n/a |")
            NOTES+=("${G_NAME[j]} / ${G_LABEL[j]}: n/a (exit ${rc[j]}): ${err[j]}")
            continue
        fi
        if [ "${status[j]}" = fail ]; then
            what="FAIL (exit ${rc[j]})"
            [ "${rc[j]}" = 124 ] && what="TIMEOUT (${TIMEOUT}s)"
            ROWS+=("$row $what | n/a | n/a |")
            NOTES+=("${G_NAME[j]} / ${G_LABEL[j]}: $what: ${err[j]}")
            FAILED=1
            continue
        fi
        rss=n/a
        # shellcheck disable=SC2086
        [ -n "${rsss[j]}" ] && rss=$(median ${rsss[j]} | awk '{ printf "%.1f", $1 / 1024 }')
        if [ -n "${G_BARE[j]}" ]; then
            ratio=1.00
        else
            ref=
            for p in ${G_REFS[j]}; do
                r=${bare_med[$p]:-}
                [ -n "$r" ] || { ref=; break; }
                ref=$(awk -v x="$r" -v y="${ref:-0}" 'BEGIN { print (x > y ? x : y) }')
            done
            ratio=n/a
            [ -n "$ref" ] && ratio=$(awk -v w="${med[j]}" -v r="$ref" 'BEGIN { if (r > 0) printf "%.2f", w / r; else print "n/a" }')
        fi
        ROWS+=("$row $(printf '%.3f' "${med[j]}") | $rss | $ratio |")
    done
}

kd_available() {
    [ -x "$KD" ]
}

# inspect + triage rows of one trace (added to the current group).
add_single() {
    local f=$1 name=$2
    local mb=${MBYTES[$f]} ev=${EVENTS[$f]}
    if ! kd_available; then
        ROWS+=("| $name | $mb | $ev | kerndiff inspect | n/a | n/a | n/a |")
        ROWS+=("| $name | $mb | $ev | kerndiff triage --format json | n/a | n/a | n/a |")
        return
    fi
    group_cmd "kerndiff inspect" "$name" "$mb" "$ev" "$f" 1 "$KD" inspect "$f"
    group_cmd "kerndiff triage --format json" "$name" "$mb" "$ev" "$f" 1 "$KD" triage "$f" --format json
    if [ "$ONE_THREAD" = 1 ]; then
        group_cmd "kerndiff inspect --threads 1" "$name" "$mb" "$ev" "$f" 1 "$KD" inspect "$f" --threads 1
        group_cmd "kerndiff triage --threads 1 --format json" "$name" "$mb" "$ev" "$f" 1 "$KD" triage "$f" --threads 1 --format json
    fi
}

# Both sides parsed at once, one process each: what the cores give two
# parses, i.e. the floor of a diff that runs its sides in parallel.
BOTH_BARE='"$1" "$2" >/dev/null 2>&1 & p=$!; "$1" "$3" >/dev/null 2>&1; rc=$?; wait $p || rc=1; echo both parsed; exit $rc'

# diff rows of a pair (added to the current group); ratio to the slower side.
add_diff() {
    local a=$1 b=$2 name=$3
    local mb="${MBYTES[$a]:-?}+${MBYTES[$b]:-?}" ev="${EVENTS[$a]:-?}+${EVENTS[$b]:-?}"
    group_cmd "2 x bare_yajl at once" "$name" "$mb" "$ev" "$a $b" 1 bash -c "$BOTH_BARE" both "$BARE" "$a" "$b"
    if ! kd_available; then
        ROWS+=("| $name | $mb | $ev | kerndiff diff --format json | n/a | n/a | n/a |")
        return
    fi
    group_cmd "kerndiff diff --format json" "$name" "$mb" "$ev" "$a $b" 1 "$KD" diff "$a" "$b" --format json
}

# A pair timed as one group: both bare parses, the baseline's single-trace
# commands, the diff; then, with --phases, the baseline's steps.
bench_pair() {
    local a=$1 b=$2 name=$3
    group_start
    group_bare "$a" "$(basename "$a")" 1
    group_bare "$b" "$(basename "$b")" 1
    add_single "$a" "$(basename "$a")"
    add_diff "$a" "$b" "$name"
    group_run
    if [ $PHASES = 1 ]; then
        bench_phases "$a" "$(basename "$a")"
    fi
}

bench_single() {
    local f=$1 name=$2
    group_start
    group_bare "$f" "$name" 1
    add_single "$f" "$name"
    group_run
}

# A diff only (both traces already have their own rows): the bare parses are
# timed again in the group, as divisors.
bench_diff_only() {
    local a=$1 b=$2 name=$3
    group_start
    group_bare "$a" "$(basename "$a")" 0
    group_bare "$b" "$(basename "$b")" 0
    add_diff "$a" "$b" "$name"
    group_run
}

# ---- phases: where a one-thread side's time goes -------------------------
# `phases FILE` (tests/bench/phases.c) times the load, the analysis and the
# JSON report of one triage in its own process, and what first touching the
# load's fresh pages costs on their own; the bare parse's in-process time
# (bare_yajl's own figure) is taken in the same round, so every step is a
# ratio to it. One row per trace: the medians.

# The value after NAME in a "NAME VALUE NAME VALUE ..." line.
field() {
    printf '%s\n' "$1" | awk -v k="$2" '{ for (i = 1; i < NF; i += 2) if ($i == k) print $(i + 1) }'
}

# "0.0123 s (0.15x)" of seconds S against the bare parse B.
secs_ratio() {
    awk -v s="$1" -v b="$2" 'BEGIN { printf "%.4f s (%.2fx)", s, (b > 0 ? s / b : 0) }'
}

bench_phases() {
    local f=$1 name=$2 i line bare row page=4096
    local -a b=() load=() analysis=() output=() faults=() fresh=()
    if [ ! -x "$PHASE_BIN" ]; then
        NOTES+=("--phases: $PHASE_BIN is missing (make tests/bench/phases)")
        return
    fi
    log "$name: phases x $RUNS runs, interleaved with the bare parse"
    for ((i = 0; i < RUNS; i++)); do
        bare=$("$BARE" "$f" 2>&1 >/dev/null | awk '/bytes parsed in/ { for (i = 1; i < NF; i++) if ($i == "in") print $(i + 1) }')
        if ! line=$("$PHASE_BIN" "$f" 2>"$ERR") || [ -z "$bare" ]; then
            NOTES+=("$name / phases: FAIL: $(first_err_line)")
            FAILED=1
            return
        fi
        b+=("$bare")
        load+=("$(field "$line" load)") analysis+=("$(field "$line" analysis)")
        output+=("$(field "$line" output)") faults+=("$(field "$line" load_faults)")
        fresh+=("$(field "$line" fresh_load)") page=$(field "$line" page_bytes)
    done
    local mb ml ma mo mf mfr side mbytes
    mb=$(median "${b[@]}") ml=$(median "${load[@]}") ma=$(median "${analysis[@]}")
    mo=$(median "${output[@]}") mf=$(median "${faults[@]}") mfr=$(median "${fresh[@]}")
    side=$(awk -v a="$ml" -v b="$ma" -v c="$mo" 'BEGIN { printf "%.6f", a + b + c }')
    mbytes=$(awk -v n="$mf" -v p="$page" 'BEGIN { printf "%.1f", n * p / 1e6 }')
    row="| $name | $(printf '%.4f' "$mb") s | $(secs_ratio "$ml" "$mb") | $(secs_ratio "$ma" "$mb")"
    row+=" | $(secs_ratio "$mo" "$mb") | $(secs_ratio "$side" "$mb") | $mbytes | $(secs_ratio "$mfr" "$mb") |"
    PHASE_ROWS+=("$row")
}

# Runs a generator unless FILE and its .info sidecar match ARGS already.
# cached_make FILE CMD... ; the sidecar holds the command and the tool's
# checksum, the tool's report line, and the file size.
cached_make() {
    local f=$1
    shift
    local info=$f.info want have size
    # the tool's checksum is part of the key: a rebuilt generator regenerates
    want="args: $* (tool cksum $(cksum <"$1" | awk '{ print $1 }'))"
    if [ -f "$f" ] && [ -f "$info" ]; then
        have=$(head -n 1 "$info")
        size=$(wc -c <"$f" | tr -d ' ')
        if [ "$have" = "$want" ] && [ "$(sed -n 's/^filesize //p' "$info")" = "$size" ]; then
            log "reusing $f"
            return 0
        fi
    fi
    log "generating $f"
    rm -f "$f" "$info"
    local t0 t1 report
    t0=$(now)
    if ! report=$("$@" 2>&1 >/dev/null); then
        log "generator failed: $report"
        rm -f "$f"
        return 1
    fi
    t1=$(now)
    log "$report ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s)"
    size=$(wc -c <"$f" | tr -d ' ')
    printf '%s\n%s\nfilesize %s\n' "$want" "$report" "$size" >"$info"
}

# Events and bytes from the gentrace sidecar (saves a counting pass).
load_info() {
    local f=$1 line
    line=$(sed -n 2p "$f.info" 2>/dev/null)
    EVENTS[$f]=$(printf '%s' "$line" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^events/) print $(i - 1) }')
    MBYTES[$f]=$(printf '%s' "$line" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^bytes/) printf "%.1f", $(i - 1) / 1e6 }')
    [ -n "${EVENTS[$f]}" ] || unset "EVENTS[$f]"
    [ -n "${MBYTES[$f]}" ] || unset "MBYTES[$f]"
}

gen_trace() {
    local size=$1 variant=$2 ext=$3 f
    f=$SCRATCH/gen-${size}mb-s${SEED}-${variant}.${ext}
    local -a extra=()
    [ "$ext" = json.gz ] && extra=(--gzip)
    cached_make "$f" "$GEN" --size-mb "$size" --seed "$SEED" --variant "$variant" "${extra[@]}" -o "$f" || return 1
    load_info "$f"
    GEN_FILE=$f
}

bench_generated() {
    local size ext base cand
    local -a exts=(json)
    [ $GZIP = 1 ] && exts+=(json.gz)
    for size in $SIZES; do
        for ext in "${exts[@]}"; do
            gen_trace "$size" baseline "$ext" || { FAILED=1; continue; }
            base=$GEN_FILE
            gen_trace "$size" candidate "$ext" || { FAILED=1; continue; }
            cand=$GEN_FILE
            bench_pair "$base" "$cand" "$(basename "$base") vs candidate"
        done
    done
}

find_shared() {
    local d
    for d in "${KD_SHARED:-}" "$BUILD_DIR/../shared" "$SRC_DIR/../shared"; do
        if [ -n "$d" ] && [ -d "$d/corpus" ]; then
            (cd "$d" && pwd)
            return 0
        fi
    done
    return 1
}

# Pairs named in corpus/README.md.
CORPUS_PAIRS=(
    "hta/trace_diff_control.json.gz hta/trace_diff_test.json.gz"
    "tracelens/mi300_flux_aiter.json.gz tracelens/mi300_flux_aiter_sage.json.gz"
    "kineto/resnet50_nw0_run1.pt.trace.json.gz kineto/resnet50_nw0_run2.pt.trace.json.gz"
    "kineto/resnet50_nw0_run1.pt.trace.json.gz kineto/resnet50_nw4.pt.trace.json.gz"
    "tracelens/h100_qwen1.5-0.5b.json.gz tracelens/mi300_qwen1.5-0.5b.json.gz"
)

# The corpus traces replicated 10x along time (product.md section 6: the
# targets hold on them too): both sides of every pair, timed like a
# generated pair. A trace in two pairs is replicated once.
replica_of() {
    local rel=${1%.json.gz}
    rel=${rel%.pt.trace}
    echo "$SCRATCH/$(echo "$rel" | tr '/' '_')_x10.json"
}

bench_replicas() {
    local corpus=$1 pair base cand ra rb
    if [ ! -x "$REP" ]; then
        log "$REP is missing: skipping the 10x replicas (make tests/bench/replicate)"
        NOTES+=("10x replicas skipped: $REP not built")
        return
    fi
    for pair in "${CORPUS_PAIRS[@]}"; do
        read -r base cand <<<"$pair"
        if [ ! -f "$corpus/$base" ] || [ ! -f "$corpus/$cand" ]; then
            log "$base / $cand not found: no replicas"
            continue
        fi
        ra=$(replica_of "$base") rb=$(replica_of "$cand")
        cached_make "$ra" "$REP" "$corpus/$base" --times 10 -o "$ra" || { FAILED=1; return; }
        cached_make "$rb" "$REP" "$corpus/$cand" --times 10 -o "$rb" || { FAILED=1; return; }
        load_info "$ra"
        load_info "$rb"
        bench_pair "$ra" "$rb" "$(basename "$ra" .json) vs $(basename "$rb" .json)"
    done
}

bench_corpus() {
    local shared corpus f rel pair
    if ! shared=$(find_shared); then
        log "no ../shared/corpus found (set KD_SHARED): skipping --corpus"
        NOTES+=("--corpus: no shared corpus found")
        return
    fi
    corpus=$shared/corpus
    log "corpus: $corpus"
    while IFS= read -r f; do
        rel=${f#"$corpus"/}
        bench_single "$f" "$rel"
    done < <(find "$corpus" -name '*.json.gz' -o -name '*.json' | LC_ALL=C sort)
    local base cand
    for pair in "${CORPUS_PAIRS[@]}"; do
        read -r base cand <<<"$pair"
        if [ -f "$corpus/$base" ] && [ -f "$corpus/$cand" ]; then
            bench_diff_only "$corpus/$base" "$corpus/$cand" "$base vs $(basename "$cand")"
        fi
    done
    bench_replicas "$corpus"
}

print_table() {
    echo "## kerndiff benchmark"
    echo
    echo "host: $(uname -srm), $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?') CPUs;" \
         "runs per command: $RUNS (median); scratch: $SCRATCH"
    echo
    echo "| trace | size MB | events | command | median wall s | median peak RSS MB | ratio to bare parse |"
    echo "| --- | ---: | ---: | --- | ---: | ---: | ---: |"
    local r
    for r in "${ROWS[@]}"; do
        echo "$r"
    done
    if [ ${#PHASE_ROWS[@]} -gt 0 ]; then
        echo
        echo "### One triage side on one thread, step by step (phases; in-process times, median)"
        echo
        echo "| trace | bare parse | load | analysis | JSON report | side (sum) | load's fresh pages MB | first-touch of those pages |"
        echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        for r in "${PHASE_ROWS[@]}"; do
            echo "$r"
        done
    fi
    if [ ${#NOTES[@]} -gt 0 ]; then
        echo
        echo "Notes:"
        echo
        for r in "${NOTES[@]}"; do
            echo "- $r"
        done
    fi
}

[ -x "$KD" ] || NOTES+=("$KD not built: every kerndiff command is n/a")
[ -n "$SIZES" ] && bench_generated
[ $CORPUS = 1 ] && bench_corpus
rm -f "$OUT" "$ERR" "$TIMEF"
print_table
exit $FAILED
