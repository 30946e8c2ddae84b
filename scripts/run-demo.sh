#!/bin/bash
# Plays the demo through tonearmd on the session bus. Where there is no session bus (a fresh
# machine, a container, ssh), it starts a private one and prints its address so that playerctl
# can be pointed at it. Without a sound device tonearmd says so and plays silently in real time.
set -eu
demo="$1"
bin=$("${SWIFT:-swift}" build --show-bin-path)

bus_reachable() {
    [ -n "${DBUS_SESSION_BUS_ADDRESS:-}" ] &&
        dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetId >/dev/null 2>&1
}

if ! bus_reachable; then
    runtime="${XDG_RUNTIME_DIR:-/tmp}"
    address_file=$(mktemp "$runtime/tonearm-bus.XXXXXX")
    dbus-daemon --session --fork --nopidfile --print-address=3 3>"$address_file"
    DBUS_SESSION_BUS_ADDRESS=$(head -n 1 "$address_file")
    rm -f "$address_file"
    export DBUS_SESSION_BUS_ADDRESS
    echo "tonearm: no session bus here, so a private one runs at:"
    echo "    export DBUS_SESSION_BUS_ADDRESS='$DBUS_SESSION_BUS_ADDRESS'"
    echo "tonearm: then, in another terminal:  playerctl -p tonearm status | pause | play | next | metadata"
fi
exec "$bin/tonearmd" "$demo"
