"""Stands in for the systemd user manager on a session bus run with `dbus-daemon --systemd-activation`,
for deb-test: such a bus does not run a service file's Exec= itself; for a file that names a
SystemdService= it sends org.freedesktop.systemd1.Activator.ActivationRequest(unit) to
org.freedesktop.systemd1 and waits for the name (dbus-daemon's activation.c). This script owns that
name, writes each requested unit's name to UNITS_LOG, and starts the unit's ExecStart= from
UNIT_DIR as systemd would for a Type=dbus service (its output goes to UNITS_LOG.out). It does
nothing else systemd does.

  systemd_activator.py UNIT_DIR UNITS_LOG      prints "ready" once it owns the name
"""
import os
import shlex
import subprocess
import sys

from jeepney import HeaderFields, MessageType, message_bus
from jeepney.io.blocking import open_dbus_connection

unit_dir, units_log = sys.argv[1], sys.argv[2]
conn = open_dbus_connection(bus="SESSION")
if conn.send_and_get_reply(message_bus.RequestName("org.freedesktop.systemd1")).body[0] != 1:
    sys.exit("systemd_activator: org.freedesktop.systemd1 is taken")
print("ready", flush=True)
while True:
    msg = conn.receive()
    fields = msg.header.fields
    if (msg.header.message_type != MessageType.signal
            or fields.get(HeaderFields.interface) != "org.freedesktop.systemd1.Activator"
            or fields.get(HeaderFields.member) != "ActivationRequest"):
        continue
    unit = msg.body[0]
    with open(units_log, "a") as log:
        log.write(unit + "\n")
    try:
        with open(os.path.join(unit_dir, unit)) as f:
            command = next(line.split("=", 1)[1].strip() for line in f if line.startswith("ExecStart="))
    except (OSError, StopIteration) as e:
        print(f"systemd_activator: no ExecStart for {unit}: {e}", file=sys.stderr, flush=True)
        continue
    with open(units_log + ".out", "ab") as out:  # the service's log, as the journal would take it
        subprocess.Popen(shlex.split(command), stdin=subprocess.DEVNULL, stdout=out, stderr=out)
