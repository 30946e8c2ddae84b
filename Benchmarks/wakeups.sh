#!/bin/bash
# Context switches per second of a running process and its descendants (tonearmd with
# tonearm-engine and tonearm-video while they run) over a window, by thread, counted from
# /proc/PID/task/*/status (Benchmarks/proctree.py, as make bench counts them). An idle, paused or
# stopped tonearmd should show 0: nothing polls (design brief, rule 7).
#   Benchmarks/wakeups.sh PID [SECONDS]
set -eu
exec python3 "$(dirname "$0")/proctree.py" "$@"
