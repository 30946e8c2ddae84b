#!/bin/bash
# `make run`: plays the demo through tonearmd and follows it with `tonearm watch`, so that a
# newcomer sees it play. Where there is no session bus (a fresh machine, a container, ssh), it
# starts a private one and prints its address so that playerctl and tonearm can be pointed at it.
# Without a sound device tonearmd says so and plays silently in real time. Ctrl-C ends the watch,
# then tonearmd, then the private bus, if this script started one.
#   scripts/run-demo.sh DEMO-FILE
set -eu
demo="$1"
bin=$("${SWIFT:-swift}" build --show-bin-path)
instance="demo$$"
name="org.mpris.MediaPlayer2.tonearm.$instance"
daemon_pid=""
bus_pid=""
# the demo's saved state (resume, issue 14) lives and dies with it: the user's own state is not
# touched, and no state file of a one-off instance is left behind
state_home=$(mktemp -d "${TMPDIR:-/tmp}/tonearm-demo-state.XXXXXX")

cleanup() {
    trap - EXIT INT TERM
    if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
        kill -TERM "$daemon_pid" 2>/dev/null || true
        wait "$daemon_pid" 2>/dev/null || true
    fi
    if [ -n "$bus_pid" ]; then
        kill -TERM "$bus_pid" 2>/dev/null || true
    fi
    rm -rf "$state_home"
}
# Ctrl-C reaches the watch (in the foreground) and this script: the watch ends on its own, then
# this trap stops the rest, in reverse order of starting
trap cleanup EXIT
trap 'cleanup; exit 0' INT TERM

bus_reachable() {
    [ -n "${DBUS_SESSION_BUS_ADDRESS:-}" ] &&
        dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetId >/dev/null 2>&1
}

if ! bus_reachable; then
    runtime="${XDG_RUNTIME_DIR:-/tmp}"
    address_file=$(mktemp "$runtime/tonearm-bus.XXXXXX")
    pid_file=$(mktemp "$runtime/tonearm-bus-pid.XXXXXX")
    dbus-daemon --session --fork --nopidfile --print-address=3 --print-pid=4 3>"$address_file" 4>"$pid_file"
    DBUS_SESSION_BUS_ADDRESS=$(head -n 1 "$address_file")
    bus_pid=$(head -n 1 "$pid_file")
    rm -f "$address_file" "$pid_file"
    export DBUS_SESSION_BUS_ADDRESS
    echo "tonearm: no session bus here, so a private one runs until Ctrl-C, at:"
    echo "    export DBUS_SESSION_BUS_ADDRESS='$DBUS_SESSION_BUS_ADDRESS'"
fi
echo "tonearm: in another terminal (with that address):  $bin/tonearm pause | play | seek +10 | status | queue"
echo "tonearm: Ctrl-C stops it all"

# tonearmd logs to a file, so that the watch's line stays clean; the file is shown if it fails
log=$(mktemp "${TMPDIR:-/tmp}/tonearmd-demo.XXXXXX")
# through `tonearm daemon`, which starts tonearmd as the systemd unit does (its allocator settings)
XDG_STATE_HOME="$state_home" "$bin/tonearm" daemon --instance "$instance" "$demo" 2>"$log" &
daemon_pid=$!
if ! gdbus wait --session --timeout 30 "$name" || ! kill -0 "$daemon_pid" 2>/dev/null; then
    echo "tonearm: tonearmd did not come up; its log ($log):" >&2
    cat "$log" >&2
    exit 1
fi
echo "tonearm: tonearmd's log: $log"
status=0
"$bin/tonearm" watch --instance "$instance" || status=$?
exit "$status"
