#!/bin/sh
# kerndiff-valgrind.sh — runs the kerndiff binary named by KD_REAL_BIN under
# valgrind memcheck (--leak-check=full). Used as KD_BIN by
# `make check-valgrind`, so the end-to-end scripts run unchanged. A memcheck
# error or a definite/indirect leak makes the run exit 97 (not 1: kerndiff's
# own exit 1 means "gate failed") and leaves a log in KD_VG_LOGS, which
# run-valgrind.sh checks after the scripts.
exec valgrind -q --error-exitcode=97 --leak-check=full \
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
    --log-file="${KD_VG_LOGS:-/tmp}/vg.%p.log" "$KD_REAL_BIN" "$@"
