#!/bin/sh
# autogen.sh — generate configure and the Makefile.in files (autoreconf -fi),
# as a fresh clone needs before configuring. Quiet on success: autoreconf's
# "installing build-aux/..." lines say nothing a user can act on. On failure
# its whole output is printed, since the cause is somewhere in it.
set -u
cd "$(dirname "$0")" || exit 1

if ! command -v autoreconf >/dev/null 2>&1; then
    echo "autogen.sh: autoreconf not found (apt-get install autoconf automake libtool pkg-config)" >&2
    exit 1
fi

log=$(mktemp "${TMPDIR:-/tmp}/kd-autogen.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT

if ! autoreconf -fi >"$log" 2>&1; then
    cat "$log" >&2
    echo "autogen.sh: autoreconf -fi failed (output above)" >&2
    exit 1
fi
