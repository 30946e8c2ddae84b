#!/usr/bin/env python3
"""Runs the XCTest suites with a watchdog, so that no test can hang the run (issue 38).

    scripts/test-runner.py -- swift test --skip-build --disable-swift-testing [OPTIONS]

Every test runs in one `swift test` process, as before, its output passed through. A test that has
not ended TONEARM_TEST_BOUND seconds (default 300; times 6 under the thread sanitizer and 15 under
the address sanitizer, as the tests' own waits scale: ServiceHarness.slowdown) after it started is
ended: the watchdog prints its name, how long it ran, the processes it had started (tonearmd,
a bus, a sound server, a display...) with their command lines, and the last lines it printed, then
kills that process tree, counts the test failed, and starts a new `swift test` process for the
tests that had not run yet. A test process that crashes is treated the same way: the test it was
in fails, the rest run. The last line is XCTest's own summary line, summed over every process
(scripts/test.sh reads it).
"""
import os
import pty
import re
import signal
import subprocess
import sys
import threading
import time

STARTED = re.compile(r"^Test Case '([^']+)' started")
ENDED = re.compile(r"^Test Case '([^']+)' (passed|failed|skipped) \(")
SLOWDOWN = {"": 1, "thread": 6, "address": 15}


def short_name(full):
    """`Module.Suite/test` as XCTest prints it on Linux: `Suite.test`."""
    suite, _, test = full.partition("/")
    return suite.split(".", 1)[-1] + "." + test


def descendants(pid):
    """The processes below `pid` (read from /proc), deepest last, with their command lines."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError):
            continue
    found, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(0), []):
            found.append(child)
            queue.append(child)
    result = []
    for child in found:
        try:
            with open("/proc/%d/cmdline" % child, "rb") as cmdline:
                text = cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            text = "?"
        result.append((child, text))
    return result


def said(tree):
    """What the processes of `tree` wrote to log files of their own (stdout or stderr redirected
    to a file: tonearmd's log in the service tests), the last lines of each."""
    lines, seen = [], set()
    for pid, text in tree:
        for fd in (1, 2):
            try:
                path = os.readlink("/proc/%d/fd/%d" % (pid, fd))
            except OSError:
                continue
            if not path.startswith("/") or path.startswith("/dev/") or path in seen or not os.path.isfile(path):
                continue
            seen.add(path)
            try:
                with open(path, errors="replace") as log:
                    tail = log.read().splitlines()[-15:]
            except OSError:
                continue
            lines += ["=== %s (pid %d) wrote to %s, last lines:" % (text.split(" ")[0].rsplit("/", 1)[-1], pid, path)]
            lines += ["    " + line[:300] for line in tail]
    return lines


def lines_of(fd):
    """The lines read from `fd` (a terminal's master side) until the other side is closed."""
    pending = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: every process holding the terminal ended
            chunk = b""
        if not chunk:
            break
        pending += chunk
        *complete, pending = pending.split(b"\n")
        yield from complete
    if pending:
        yield pending
    os.close(fd)


def run(command, filter_names, bound, log_tail):
    """One `swift test` process over `filter_names` (None: all). Returns (ended tests by short name:
    passed or failed, the test it was in when it was ended or crashed, or None)."""
    arguments = list(command)
    if filter_names is not None:
        arguments += ["--filter", "^(" + "|".join(re.escape(name) for name in filter_names) + ")$"]
    # a terminal, not a pipe: XCTest's stdout is then line-buffered, and each "started" line comes
    # when the test starts, not in a block at the end (the watchdog times tests from those lines)
    master, slave = pty.openpty()
    process = subprocess.Popen(arguments, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    state = {"current": None, "since": None, "hung": None}
    lock = threading.Lock()

    def watch():
        while process.poll() is None:
            time.sleep(1)
            with lock:
                current, since = state["current"], state["since"]
                if current is None or time.monotonic() - since < bound:
                    continue
                state["hung"] = current
            tree = descendants(process.pid)
            lines = ["", "=== watchdog: %s has not ended %d s after it started: ending it (TONEARM_TEST_BOUND)" % (current, bound),
                     "=== what it had started:"]
            lines += ["    %d %s" % (pid, text[:300]) for pid, text in tree] or ["    nothing"]
            lines += said(tree)
            lines += ["=== the last lines it printed:"] + ["    " + line for line in log_tail[-40:]]
            print("\n".join(lines), flush=True)
            for pid, _ in reversed(tree):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass
            return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    ended = {}
    for raw in lines_of(master):
        line = raw.decode(errors="replace").rstrip("\r\n")
        print(line, flush=True)
        log_tail.append(line)
        del log_tail[:-200]
        started = STARTED.match(line)
        finished = ENDED.match(line)
        with lock:
            if started:
                state["current"], state["since"] = started.group(1), time.monotonic()
            elif finished:
                ended[finished.group(1)] = finished.group(2) != "failed"
                state["current"], state["since"] = None, None
    process.wait()
    watcher.join(timeout=5)
    with lock:
        stopped = state["hung"] or state["current"]
    if stopped and stopped not in ended and process.returncode != 0:
        if not state["hung"]:
            print("=== watchdog: the test process ended (status %d) inside %s: counted failed, the rest run"
                  % (process.returncode, stopped), flush=True)
        ended[stopped] = False
        return ended, stopped
    return ended, None


def main():
    if "--" not in sys.argv:
        sys.exit("usage: test-runner.py -- swift test [options]")
    command = sys.argv[sys.argv.index("--") + 1:]
    # a --filter of the caller's chooses the tests (`swift test list` ignores it); a new process
    # after a hang gets the list of those left instead
    filters = [command[i + 1] for i, word in enumerate(command[:-1]) if word == "--filter"]
    base = [word for i, word in enumerate(command) if word != "--filter" and (i == 0 or command[i - 1] != "--filter")]
    bound = float(os.environ.get("TONEARM_TEST_BOUND", "300")) * SLOWDOWN.get(os.environ.get("SWIFT_SANITIZE", ""), 6)
    listing = subprocess.run(base + ["list"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=600)
    names = [line.strip() for line in listing.stdout.decode(errors="replace").splitlines() if "/" in line]
    if filters:
        names = [name for name in names if any(re.search(pattern, name) for pattern in filters)]
    if listing.returncode != 0 or not names:
        sys.exit("test-runner: `%s list` named no tests" % " ".join(command))
    started = time.monotonic()
    results, ended_early, log_tail = {}, [], []
    remaining = None
    while True:
        ended, stopped = run(command if remaining is None else base, remaining, bound, log_tail)
        results.update(ended)
        if stopped is None:
            break
        ended_early.append(stopped)
        remaining = [name for name in names if short_name(name) not in results]
        if not remaining:
            break
        print("=== watchdog: going on with the %d tests that had not run" % len(remaining), flush=True)
    failures = sum(1 for passed in results.values() if not passed)
    if ended_early:
        print("=== watchdog: ended or lost in: %s" % ", ".join(ended_early), flush=True)
    never = [name for name in names if short_name(name) not in results]
    if remaining is not None and never:
        failures += len(never)
        print("=== watchdog: %d tests never ran: %s" % (len(never), ", ".join(never[:20])), flush=True)
    total = len(results) + (len(never) if remaining is not None else 0)
    print("\t Executed %d tests, with %d failures (0 unexpected) in %.3f (%.3f) seconds"
          % (total, failures, time.monotonic() - started, time.monotonic() - started), flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
