#!/bin/bash
# Context switches per second of a running process (tonearmd) over a window, counted from
# /proc/PID/task/*/status for the threads alive at both ends. An idle, paused or stopped tonearmd
# should show 0: nothing polls (design brief, rule 7).
#   Benchmarks/wakeups.sh PID [SECONDS]
set -eu
pid=$1
seconds=${2:-10}
snapshot() {
    for task in /proc/"$pid"/task/*; do
        echo "$(basename "$task") $(grep -E '^(voluntary|nonvoluntary)_ctxt_switches' "$task/status" 2>/dev/null | awk '{s += $2} END {print s + 0}')"
    done | sort
}
before=$(mktemp); after=$(mktemp)
trap 'rm -f "$before" "$after"' EXIT
snapshot >"$before"
sleep "$seconds"
snapshot >"$after"
join "$before" "$after" | awk -v s="$seconds" '{d += $3 - $2; if ($3 > $2) print "  thread " $1 ": +" $3 - $2} END {printf "wake-ups per second: %.1f\n", d / s}'
echo "threads: $(wc -l <"$before") before, $(wc -l <"$after") after"
