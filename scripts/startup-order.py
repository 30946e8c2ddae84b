#!/usr/bin/env python3
"""Writes the functions a release tonearmd runs from exec to its first answer, one symbol a line.

    scripts/startup-order.py [--tonearmd .build/install/release/tonearmd] > packaging/startup-order.txt

`make release` hands the list to lld (--symbol-ordering-file), which places those functions side by
side at the start of the text. At rest tonearmd runs nothing, so what it keeps resident of its own
code is what its start touched, and the kernel maps a file's page cache in folios of 64 kB or more:
the ~800 kB of functions a start runs, spread over 11 MB of text, kept ~7 MB of it resident (issue
30; /proc/PID/smaps). A stale list costs nothing but that: names no longer there are skipped.

Two starts are traced with valgrind's callgrind on a private bus, each until a Properties.Get is
answered: one with no saved state (the file is made) and one with the state the first left. A start
before them, not traced, writes the formats cache (else the traced ones would initialise GStreamer,
which a start with a valid cache does not). Needs valgrind, dbus-daemon and dbus-send.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

NAME = "org.mpris.MediaPlayer2.tonearm"


def answered(env):
    """True once tonearmd answers Get(PlaybackStatus)."""
    get = ["dbus-send", "--session", "--print-reply", f"--dest={NAME}", "/org/mpris/MediaPlayer2",
           "org.freedesktop.DBus.Properties.Get", "string:org.mpris.MediaPlayer2.Player", "string:PlaybackStatus"]
    return subprocess.run(get, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def start(binary, env, trace=None):
    """Starts BINARY (under callgrind, writing TRACE, when given), waits for its first answer, stops it."""
    argv = [binary, "--audio-sink", "fakesink sync=true"]
    if trace:
        # --demangle=no: the list names symbols as the linker sees them
        argv = ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={trace}"] + argv
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not answered(env):
        if process.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"startup-order: {binary} did not answer (exit status {process.poll()})")
        time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    process.wait(300)


def functions(trace, binary):
    """The functions of BINARY that ran in a callgrind TRACE (names compressed as `fn=(id) name`)."""
    names, ids, current = set(), {}, None
    for line in open(trace, errors="replace"):
        match = re.match(r"^(c?)(ob|fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if not match:
            continue
        called, kind, number, name = match.groups()
        if name:
            ids[kind, number] = name
        if kind == "ob" and not called:
            current = ids.get(("ob", number))
        elif kind == "fn" and not called and current == binary:
            names.add(ids["fn", number])
    return names


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tonearmd", default=".build/install/release/tonearmd")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="tonearm-startup-order-")
    daemon = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        # valgrind cannot read the DWARF of a Swift binary ("possibly corrupted debuginfo"): a copy
        # without it has the same symbols
        binary = os.path.join(work, "tonearmd")
        subprocess.run(["strip", "--strip-debug", "-o", binary, args.tonearmd], check=True)
        env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=daemon.stdout.readline().strip(),
                   XDG_CACHE_HOME=os.path.join(work, "cache"), XDG_STATE_HOME=os.path.join(work, "state"),
                   XDG_MUSIC_DIR=os.path.join(work, "music"),
                   # the warm-up's formats come from the engine's process, beside the original
                   TONEARM_ENGINE=os.path.join(os.path.dirname(os.path.abspath(args.tonearmd)), "tonearm-engine"))
        start(binary, dict(env, XDG_STATE_HOME=os.path.join(work, "warm-up")))
        names = set()
        for round in ("fresh", "saved"):
            trace = os.path.join(work, f"callgrind.{round}")
            start(binary, env, trace)
            names |= functions(trace, binary)
        symbols = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
        defined = {fields[2] for fields in (line.split() for line in symbols.splitlines()) if len(fields) == 3 and fields[1] in "tTwW"}
        print(f"startup-order: {len(names & defined)} functions", file=sys.stderr)
        sys.stdout.write("".join(name + "\n" for name in sorted(names & defined)))
    finally:
        daemon.terminate()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
