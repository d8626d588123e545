#!/bin/sh
# test_ranks.sh — which file of a directory is read (docs/input.md "Which
# file of a directory is read"; discover.c): the rank from distributedInfo,
# else from the file name, rank 0 chosen whatever the mtimes, and a
# directory of several unranked traces refused with one line listing them.
#
# Run by `make check` with KD_BIN, KD_SRCDIR and KD_SHARED (../shared,
# optional: the corpus checks are skipped without it). Prints one line per
# check, then "N passed, N failed". Exit status: 0 all passed, 1 some
# failed, 77 KD_BIN missing.
set -u

KD_CLI_DIR=$(dirname "$0")
[ -f "$KD_CLI_DIR/lib.sh" ] || KD_CLI_DIR=${KD_SRCDIR:-.}/tests/cli
# shellcheck source=lib.sh
. "$KD_CLI_DIR/lib.sh"
kd_test_init kd-ranks
KD_SHARED=${KD_SHARED:-}

# trace RANK [WORLD]: a trace of the base events whose header declares
# distributedInfo (RANK "-" : none)
trace()
{
    if [ "$1" = - ]; then
        printf '{"schemaVersion":1,"traceEvents":[%s]}\n' "$EVENTS"
    else
        printf '{"schemaVersion":1,"deviceProperties":[{"id":0,"name":"Tesla V100-DGXS-32GB"}],'
        printf '"distributedInfo":{"backend":"nccl","rank":%s,"world_size":%s},' "$1" "${2:-4}"
        printf '"traceEvents":[%s]}\n' "$EVENTS"
    fi
}

# chosen DIR NAME [HOW]: inspect DIR reads exactly DIR/NAME (and its
# resolution mentions HOW)
chosen()
{
    run "$KD_BIN" inspect --format json "$1"
    r=""
    if [ "$rc" -ne 0 ]; then
        r="exit $rc; stderr: $(err_text)"
    elif ! json_ok "$T/out" "[f['path'] for f in d['files']] == [sys.argv[3]]" "$1/$2"; then
        r="read $(json_eval "$T/out" "[f['path'] for f in d['files']]"), not $1/$2"
    elif [ -n "${3:-}" ] && ! json_ok "$T/out" "sys.argv[3] in d['resolution']" "$3"; then
        r="resolution $(json_eval "$T/out" "d['resolution']") lacks '$3'"
    fi
    echo "$r"
}


# ---------------------------------------------------------------------------
section "the rank from distributedInfo"

D=$T/tb
mkdir "$D"
# tensorboard_trace_handler's names: host_pid.ts.pt.trace.json[.gz]
trace 1 | gzip -c >"$D/node_1234.1700000000001.pt.trace.json.gz"
trace 0 | gzip -c >"$D/node_1235.1700000000000.pt.trace.json.gz"
trace 2 | gzip -c >"$D/node_1236.1700000000002.pt.trace.json.gz"
touch -t 202401010000 "$D/node_1235.1700000000000.pt.trace.json.gz" # rank 0 the oldest
check "inspect DIR: rank 0 of three tensorboard_trace_handler files, whatever the mtimes" \
    "$(chosen "$D" node_1235.1700000000000.pt.trace.json.gz "rank 0 of 3 files, from distributedInfo")"

D=$T/beats
mkdir "$D"
trace 1 >"$D/x_rank-0.trace.json"
trace 0 >"$D/x_rank-1.trace.json"
check "inspect DIR: distributedInfo.rank beats the file name" \
    "$(chosen "$D" x_rank-1.trace.json "from distributedInfo")"

# ---------------------------------------------------------------------------
section "the rank from the file name"

for pair in "trace_rank-0.json trace_rank-1.json" "rank_0.json rank_1.json" \
    "run_rank0.trace.json run_rank1.trace.json" "srv-TP-0-x.trace.json srv-TP-1-x.trace.json"; do
    # shellcheck disable=SC2086 # two names, split on purpose
    set -- $pair
    D=$T/names_$1
    mkdir "$D"
    trace - >"$D/$1"
    trace - >"$D/$2"
    touch -t 202401010000 "$D/$1" # rank 1 is newer
    check "inspect DIR: $1 chosen over the newer $2" "$(chosen "$D" "$1" "from the file name")"
done

# ---------------------------------------------------------------------------
section "no way to tell rank 0: exit 2, one line listing the files"

D=$T/ambiguous
mkdir "$D"
trace - | gzip -c >"$D/node_1234.1700000000001.pt.trace.json.gz"
trace - | gzip -c >"$D/node_1235.1700000000000.pt.trace.json.gz"
for cmd in inspect triage; do
    run "$KD_BIN" $cmd "$D"
    r=$(one_line_error 2 "$D" "no way to tell which is rank 0" \
        "2 trace files" \
        "node_1234.1700000000001.pt.trace.json.gz, node_1235.1700000000000.pt.trace.json.gz")
    [ -s "$T/out" ] && r="$r; stdout not empty"
    check "$cmd DIR of two unranked traces: exit 2, one line naming DIR and the files" "$r"
done
run "$KD_BIN" diff "$T/tb" "$D"
check "diff BASE AMBIGUOUS-DIR: exit 2, one line" \
    "$(one_line_error 2 "$D" "no way to tell which is rank 0")"

# one unranked trace per stage is no ambiguity
D=$T/stages
mkdir "$D"
trace - >"$D/x-prefill.trace.json"
trace - >"$D/x-decode.trace.json"
run "$KD_BIN" inspect --format json "$D"
r=""
[ "$rc" -eq 0 ] || r="exit $rc; stderr: $(err_text)"
check "inspect DIR of one unranked trace per stage: exit 0" "$r"

# ---------------------------------------------------------------------------
section "the shared corpus (HTA's rank-0 / rank-1 pair)"

HTA=${KD_SHARED:+$KD_SHARED/corpus/hta}
R0=${HTA:+$HTA/trace_filter_sampled_rank-0.json.gz}
R1=${HTA:+$HTA/trace_filter_sampled_rank-1.json.gz}
if [ -n "$HTA" ] && [ -f "$R0" ] && [ -f "$R1" ]; then
    D=$T/hta_links
    mkdir "$D"
    ln -s "$R0" "$D/trace_filter_sampled_rank-0.json.gz"
    ln -s "$R1" "$D/trace_filter_sampled_rank-1.json.gz"
    touch -h "$D/trace_filter_sampled_rank-1.json.gz" 2>/dev/null
    check "inspect DIR of symlinks to the corpus' rank-0 and rank-1: rank 0" \
        "$(chosen "$D" trace_filter_sampled_rank-0.json.gz "rank 0 of 2 files, from distributedInfo")"
    # the read-only corpus cannot be touched: rank 1 is made newer as a
    # scratch copy (removed on exit), rank 0 stays a link
    D=$T/hta_newer
    mkdir "$D"
    ln -s "$R0" "$D/trace_filter_sampled_rank-0.json.gz"
    cp "$R1" "$D/trace_filter_sampled_rank-1.json.gz"
    touch "$D/trace_filter_sampled_rank-1.json.gz"
    check "inspect DIR: the corpus' rank 0 even when rank 1 is newer" \
        "$(chosen "$D" trace_filter_sampled_rank-0.json.gz "from distributedInfo")"
else
    echo "SKIP - shared corpus checks (no ${R0:-KD_SHARED/corpus/hta/trace_filter_sampled_rank-0.json.gz})"
fi

finish
