#!/usr/bin/python3
"""Start -> name owned and start -> first Get answered, for several tonearmd builds interleaved.

Starts a private dbus-daemon and, on it, each build in turn (ABC, then CBA, ...) --starts times,
after one first start each with no GStreamer registry cache (GST_REGISTRY in a work directory of
its own per build, absent at first). Each start has a fresh saved state (XDG_STATE_HOME) and a
silent real-time sink. Timed from just before the fork to the NameOwnerChanged that gives
org.mpris.MediaPlayer2.tonearm an owner (subscribed first), then to the reply of a
Properties.Get(PlaybackStatus) sent at once. Then SIGTERM, and 0.15 s before the next start.

bench.py measures the same two figures for one build and its baseline one after the other; with
a colleague's build on 2 cores the load drifts between the two, and interleaving keeps it alike
for every build.

With --floor, the libdbus echo floor (Benchmarks/floor/echo.c, compiled into the work directory)
is started in the same rounds under the same name, as one more build labelled "echo".

Usage: Benchmarks/starts.py [--starts 20] [--floor] LABEL=TONEARMD [LABEL=TONEARMD ...]
Needs Debian's python3 with python3-jeepney, and dbus-daemon.
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import time

from jeepney import DBusAddress, MatchRule, message_bus, new_method_call
from jeepney.io.blocking import open_dbus_connection

NAME = "org.mpris.MediaPlayer2.tonearm"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--starts", type=int, default=20)
    p.add_argument("--floor", action="store_true", help="the libdbus echo floor beside the builds")
    p.add_argument("builds", nargs="+", metavar="LABEL=TONEARMD")
    args = p.parse_args()
    builds = [b.split("=", 1) for b in args.builds]
    work = tempfile.mkdtemp(prefix="tonearm-starts-")
    if args.floor:
        echo = os.path.join(work, "echo")
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "dbus-1"], capture_output=True, text=True, check=True).stdout.split()
        subprocess.run(["cc", "-O2", "-o", echo, os.path.join(os.path.dirname(os.path.abspath(__file__)), "floor", "echo.c")] + flags, check=True)
        builds.append(["echo", echo])
    daemon = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = daemon.stdout.readline().strip()
        conn = open_dbus_connection(bus=address)
        rule = MatchRule(type="signal", sender="org.freedesktop.DBus", interface="org.freedesktop.DBus",
                         member="NameOwnerChanged", path="/org/freedesktop/DBus")
        rule.add_arg_condition(0, NAME)
        conn.send_and_get_reply(message_bus.AddMatch(rule))
        get = new_method_call(DBusAddress("/org/mpris/MediaPlayer2", bus_name=NAME, interface="org.freedesktop.DBus.Properties"),
                              "Get", "ss", ("org.mpris.MediaPlayer2.Player", "PlaybackStatus"))

        def start(label, binary):
            env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address, GST_REGISTRY=os.path.join(work, f"registry-{label}.bin"),
                       XDG_STATE_HOME=tempfile.mkdtemp(dir=work), XDG_MUSIC_DIR=os.path.join(work, "music"),
                       XDG_CACHE_HOME=os.path.join(work, "cache"))
            with conn.filter(rule) as owners:
                began = time.perf_counter()
                argv = [binary, NAME] if label == "echo" and args.floor else [binary, "--audio-sink", "fakesink sync=true"]
                process = subprocess.Popen(argv, env=env,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                while not conn.recv_until_filtered(owners, timeout=60).body[2]:
                    pass
                named = time.perf_counter() - began
            conn.send_and_get_reply(get, timeout=60)
            answered = time.perf_counter() - began
            process.send_signal(signal.SIGTERM)
            process.wait(10)
            time.sleep(0.15)
            return named * 1000, answered * 1000

        first = {label: start(label, binary) for label, binary in builds}
        named = {label: [] for label, _ in builds}
        answered = {label: [] for label, _ in builds}
        for i in range(args.starts):
            for label, binary in (builds if i % 2 == 0 else list(reversed(builds))):
                n, a = start(label, binary)
                named[label].append(n)
                answered[label].append(a)
        print(f"{args.starts} starts each, interleaved, after a first start with no registry cache; load {os.getloadavg()[0]:.1f}")
        for label, _ in builds:
            gap = statistics.median(a - n for n, a in zip(named[label], answered[label]))
            print(f"{label}: name owned median {statistics.median(named[label]):.1f} ms (first start {first[label][0]:.1f}); "
                  f"first Get answered median {statistics.median(answered[label]):.1f} ms (first start {first[label][1]:.1f}); "
                  f"answer after the name, median {gap:.1f} ms")
    finally:
        daemon.terminate()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
