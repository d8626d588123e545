#!/bin/sh
# test_install.sh — `make install` of the build that runs it: the binary, the
# man page (found by man), the bash and zsh completion files; `make
# uninstall` removes them all, with a prefix and with DESTDIR.
#
# The completions are exercised, not only found: bash's function is called
# with COMP_WORDS / COMP_CWORD as bash would and its COMPREPLY checked
# (commands, options, option values, trace files and directories); zsh's is
# syntax-checked and its specs read with _arguments stubbed. Every long
# option that `kerndiff COMMAND --help` prints must be completed by both
# files for that COMMAND, so a new option cannot be forgotten there.
#
# Run by `make check` with KD_BIN (the built binary), KD_BUILDDIR (its build
# directory, where `make install` runs) and KD_SRCDIR. Prints "ok N - ..." /
# "not ok N - ...: reason" per check, then "N passed, N failed". Exit status:
# 0 all passed, 1 some failed, 77 skipped (the reason on a "SKIP:" line).
set -u

KD_BIN=${KD_BIN:-}
KD_BUILDDIR=${KD_BUILDDIR:-}
if [ -z "$KD_BIN" ] || [ ! -x "$KD_BIN" ]; then
    echo "SKIP: KD_BIN is not set or not executable ('$KD_BIN')"
    exit 77
fi
if [ -z "$KD_BUILDDIR" ] || [ ! -f "$KD_BUILDDIR/Makefile" ]; then
    echo "SKIP: KD_BUILDDIR is not a configured build directory ('$KD_BUILDDIR'; make check sets it)"
    exit 77
fi
if ! command -v bash >/dev/null 2>&1; then
    echo "SKIP: bash is not installed (the bash completion cannot be exercised)"
    exit 77
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/kd-install.XXXXXX") || { echo "cannot create a scratch dir"; exit 99; }
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP

KD_CLI_DIR=$(dirname "$0")
[ -f "$KD_CLI_DIR/lib.sh" ] || KD_CLI_DIR=${KD_SRCDIR:-.}/tests/cli
# shellcheck source=lib.sh
. "$KD_CLI_DIR/lib.sh"

COMMANDS="inspect diff triage"

# ---------------------------------------------------------------------------
# helpers

# kd_make TARGET VAR=VALUE...: make in the build directory, output in
# $T/make.out. The flags of the `make check` running this test are dropped:
# its jobserver is not passed to a test, and its -j would only warn.
kd_make()
{
    MAKEFLAGS='' MFLAGS='' MAKELEVEL='' ${MAKE:-make} -C "$KD_BUILDDIR" "$@" >"$T/make.out" 2>&1
}

# long_options CMD: the long options `kerndiff CMD --help` prints, one a line.
long_options()
{
    "$KD_BIN" "$1" --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

# help_commands: the commands `kerndiff --help` lists under "Commands:".
help_commands()
{
    "$KD_BIN" --help 2>&1 | sed -n '/^Commands:/,/^$/p' | sed -nE 's/^  ([a-z][a-z-]*) .*/\1/p'
}

# bash_complete WORD...: what the installed bash completion offers for the
# command line "kerndiff WORD..." (the last WORD being completed), one a
# line, run in $T/files.
bash_complete()
{
    (cd "$T/files" && bash --norc --noprofile -c '
        . "$1" || exit 1
        shift
        COMP_WORDS=(kerndiff "$@")
        COMP_CWORD=$#
        COMP_LINE="${COMP_WORDS[*]}"
        COMP_POINT=${#COMP_LINE}
        _kerndiff kerndiff "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf "%s\n" "${COMPREPLY[@]}"' bash "$BASH_COMP" "$@")
}

# missing_words WANT OFFERED: the words of WANT not among the lines of
# OFFERED (empty when all are there).
missing_words()
{
    for w in $1; do
        printf '%s\n' "$2" | grep -qxF -- "$w" || printf ' %s' "$w"
    done
}

# unwanted_words REFUSE OFFERED: the words of REFUSE that are among OFFERED.
unwanted_words()
{
    for w in $1; do
        printf '%s\n' "$2" | grep -qxF -- "$w" && printf ' %s' "$w"
    done
}

# expect_bash WANT REFUSE WORD...: completing "kerndiff WORD..." (the last
# WORD being completed, "" for a new word) offers every word of WANT and none
# of REFUSE.
expect_bash()
{
    want=$1 refuse=$2
    shift 2
    offered=$(bash_complete "$@" 2>&1)
    miss=$(missing_words "$want" "$offered")
    extra=$(unwanted_words "$refuse" "$offered")
    why=""
    [ -z "$miss" ] || why="missing:$miss"
    [ -z "$extra" ] || why="$why; unexpected:$extra"
    [ -z "$why" ] || why="$why; offered: $(printf '%s' "$offered" | tr '\n' ' ')"
    check "bash: kerndiff $*<TAB>" "$why"
}

# zsh_specs STATE WORD...: the _kerndiff function of the installed zsh file
# run with zsh's completion helpers stubbed (they only work inside a
# completion widget): _arguments -C (the top level) sets the state STATE,
# any other _arguments prints its specs one a line, _describe the names of
# its candidates; words=(WORD...) as zsh sets them below the top level (the
# command first).
zsh_specs()
{
    zsh -f -c '
        _arguments() { [[ $1 == -C ]] && { state=$KD_ZSTATE; return 0; }; print -rl -- "$@"; }
        _describe() { print -rl -- ${${(P)4}%%:*}; }
        _files() { :; }
        _message() { :; }
        KD_ZSTATE=""
        source "$1" || exit 1
        KD_ZSTATE=$2
        words=("${@[3,-1]}")
        _kerndiff' zsh "$ZSH_COMP" "$@"
}

# zsh_has_option SPECS OPTION: SPECS has a spec for OPTION (after its
# optional exclusion list: "(-q --quiet)--quiet[...]", "--pid=[...]:...").
zsh_has_option()
{
    printf '%s\n' "$1" | sed -E 's/^\([^)]*\)//' | grep -qE -- "^$2(=|\[|:|\$)"
}

# ---------------------------------------------------------------------------
section "make install (prefix)"

P=$T/prefix
if kd_make install prefix="$P"; then
    ok "make install prefix=\$T/prefix"
else
    # every later check needs the installed files
    notok "make install prefix=\$T/prefix" "$(tail -n 20 "$T/make.out")"
    finish
fi

why=""
[ -x "$P/bin/kerndiff" ] || why="no executable $P/bin/kerndiff"
[ -n "$why" ] || "$P/bin/kerndiff" --version >"$T/out" 2>&1 || why="--version failed: $(cat "$T/out")"
check "the binary is installed and runs" "$why"

MAN=$P/share/man/man1/kerndiff.1
why=""
[ -f "$MAN" ] || why="no $MAN"
check "the man page is installed" "$why"
if command -v man >/dev/null 2>&1; then
    found=$(MANPATH=$P/share/man man -w kerndiff 2>&1)
    why=""
    [ "$found" = "$MAN" ] || why="man -w kerndiff with MANPATH=\$T/prefix/share/man: '$found'"
    check "man finds the installed page (man -w kerndiff)" "$why"
    MANWIDTH=80 MANPAGER=cat PAGER=cat MANPATH=$P/share/man man kerndiff >"$T/man.out" 2>"$T/man.err"
    why=""
    grep -q 'SYNOPSIS' "$T/man.out" || why="no SYNOPSIS in the rendered page: $(head -c 300 "$T/man.err")"
    check "man kerndiff renders the page" "$why"
else
    echo "SKIP - man lookup (man is not installed: apt-get install man-db)"
fi

BASH_COMP=$P/share/bash-completion/completions/kerndiff
ZSH_COMP=$P/share/zsh/site-functions/_kerndiff
why=""
[ -f "$BASH_COMP" ] || why="no $BASH_COMP"
check "the bash completion is installed" "$why"
why=""
[ -f "$ZSH_COMP" ] || why="no $ZSH_COMP"
check "the zsh completion is installed" "$why"

# ---------------------------------------------------------------------------
section "bash completion"

mkdir -p "$T/files/traces.d" "$T/files/out.d"
for f in a.json b.json.gz c.gz d.zst e.xz notes.txt report.md; do
    : >"$T/files/$f"
done

why=""
bash -n "$BASH_COMP" 2>"$T/err" || why=$(cat "$T/err")
check "bash -n the bash completion" "$why"

expect_bash "$COMMANDS" "" ""
expect_bash "triage" "diff inspect" tr
expect_bash "--help --version" "" -
expect_bash "--baseline-mapping --baseline-pid" "--candidate-pid --pid" diff --ba
expect_bash "text json" "markdown csv" inspect --format ""
expect_bash "text markdown csv json" "" diff --format ""
expect_bash "markdown" "text json" triage --format = m # "--format=m", split at "="
expect_bash "--format=csv" "" triage --format=c         # COMP_WORDBREAKS without "="
expect_bash "extend decode all prefill" "" triage --stage ""
expect_bash "auto sglang vllm trtllm tokenspeed" "" diff --framework ""
expect_bash "none steps" "" diff --normalize ""
expect_bash "1 2" "" inspect --threads ""
expect_bash "" "a.json traces.d" diff --pid "" # a free value: nothing to offer
expect_bash "a.json b.json.gz c.gz d.zst e.xz traces.d out.d" "notes.txt report.md" diff ""
expect_bash "a.json traces.d" "notes.txt" triage --quiet ""
expect_bash "b.json.gz traces.d" "notes.txt" triage a.json --mapping ""
expect_bash "report.md notes.txt out.d" "" triage a.json --markdown ""

# bash-completion itself loads the file by the command's name from
# XDG_DATA_DIRS/bash-completion/completions: the installed place is right.
BC_MAIN=/usr/share/bash-completion/bash_completion
if [ -f "$BC_MAIN" ]; then
    got=$(XDG_DATA_DIRS=$P/share bash --norc --noprofile -c '
        . "$1" >/dev/null 2>&1
        _comp_load kerndiff >/dev/null 2>&1 || __load_completion kerndiff >/dev/null 2>&1 ||
            _completion_loader kerndiff >/dev/null 2>&1
        complete -p kerndiff' bash "$BC_MAIN" 2>&1)
    why=""
    case $got in *"-F _kerndiff"*) ;; *) why="complete -p kerndiff after loading: '$got'" ;; esac
    check "bash-completion loads it from \$prefix/share" "$why"
else
    echo "SKIP - bash-completion's loader ($BC_MAIN absent: apt-get install bash-completion)"
fi

# ---------------------------------------------------------------------------
section "zsh completion"

if command -v zsh >/dev/null 2>&1; then
    why=""
    zsh -n "$ZSH_COMP" 2>"$T/err" || why=$(cat "$T/err")
    check "zsh -n the zsh completion" "$why"
    why=""
    head -n 1 "$ZSH_COMP" | grep -qx '#compdef kerndiff' || why="first line is not '#compdef kerndiff'"
    check "zsh: #compdef kerndiff" "$why"
    offered=$(zsh_specs command)
    miss=$(missing_words "$COMMANDS" "$offered")
    check "zsh: commands" "${miss:+missing:$miss}"
    specs=$(zsh_specs argument inspect)
    why=""
    printf '%s\n' "$specs" | grep -q -- '^--format=.*(text json)$' || why="inspect --format is not (text json): $specs"
    check "zsh: inspect --format values" "$why"
    specs=$(zsh_specs argument diff)
    why=""
    for v in '(text markdown csv json)' '(extend decode all prefill)' '(auto sglang vllm trtllm tokenspeed)' \
        '(none steps)' '(1 2)'; do
        printf '%s\n' "$specs" | grep -qF -- "$v" || why="$why no $v;"
    done
    check "zsh: diff option values" "$why"
else
    echo "SKIP - zsh checks (zsh is not installed: apt-get install zsh)"
fi

# ---------------------------------------------------------------------------
section "every option of --help is completed"

[ -n "$(help_commands)" ] || notok "kerndiff --help lists commands" "none found under 'Commands:'"
for cmd in $(help_commands); do
    offered=$(bash_complete "")
    check "bash completes command $cmd (kerndiff --help)" \
        "$(printf '%s\n' "$offered" | grep -qxF "$cmd" || echo "not offered")"
    if command -v zsh >/dev/null 2>&1; then
        offered=$(zsh_specs command)
        check "zsh completes command $cmd (kerndiff --help)" \
            "$(printf '%s\n' "$offered" | grep -qxF "$cmd" || echo "not offered")"
    fi
done
for cmd in $COMMANDS; do
    opts=$(long_options "$cmd")
    [ -n "$opts" ] || notok "kerndiff $cmd --help lists options" "none found"
    offered=$(bash_complete "$cmd" --)
    miss=$(missing_words "$opts" "$offered")
    check "bash completes every option of kerndiff $cmd --help" "${miss:+missing in completion/bash/kerndiff:$miss}"
    if command -v zsh >/dev/null 2>&1; then
        specs=$(zsh_specs argument "$cmd")
        miss=""
        for o in $opts; do
            zsh_has_option "$specs" "$o" || miss="$miss $o"
        done
        check "zsh completes every option of kerndiff $cmd --help" "${miss:+missing in completion/zsh/_kerndiff:$miss}"
    fi
done

# ---------------------------------------------------------------------------
section "make uninstall; DESTDIR"

if kd_make uninstall prefix="$P"; then
    left=$(find "$P" -type f 2>/dev/null)
    check "make uninstall removes every installed file" "${left:+left: $left}"
else
    notok "make uninstall prefix=\$T/prefix" "$(tail -n 20 "$T/make.out")"
fi

D=$T/stage
if kd_make install DESTDIR="$D" prefix=/opt/kerndiff; then
    why=""
    for f in bin/kerndiff share/man/man1/kerndiff.1 share/bash-completion/completions/kerndiff \
        share/zsh/site-functions/_kerndiff; do
        [ -f "$D/opt/kerndiff/$f" ] || why="$why no \$DESTDIR/opt/kerndiff/$f;"
    done
    check "make install DESTDIR=\$T/stage prefix=/opt/kerndiff" "$why"
    kd_make uninstall DESTDIR="$D" prefix=/opt/kerndiff
    left=$(find "$D" -type f 2>/dev/null)
    check "make uninstall DESTDIR=... removes them" "${left:+left: $left}"
else
    notok "make install DESTDIR=\$T/stage" "$(tail -n 20 "$T/make.out")"
fi

finish
