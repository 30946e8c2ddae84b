#!/usr/bin/python3
"""What /proc says about a player: its whole process tree, the process the bench started and every
descendant of it alive when read (tonearmd with tonearm-engine and tonearm-video while they run;
the floors, MPD, VLC, mpv and the echo service alike, each with whatever it starts).

  cpu_seconds   utime + stime + cutime + cstime summed over the tree: a window's CPU is the
                difference of two readings, which counts a descendant born meanwhile from zero and
                one that ended meanwhile up to its end (its reaper's cutime/cstime took its time
                over, and its reaper is in the tree: tonearmd reaps tonearm-engine)
  run_ns        schedstat's run time of each thread of the tree
  switches      voluntary + nonvoluntary context switches of each thread of the tree
  thread_names  a thread's name, its process's before it when that is a descendant
                ("tonearm-engine/gst-bus")
  memory_kib    VmRSS, RssAnon, RssFile and Threads summed over the tree, and its Processes

A descendant orphaned out of the tree (its parent ended first and init took it) is no longer the
player's, and its CPU is nobody's here.

  Benchmarks/proctree.py PID [SECONDS]   # wake-ups/s of PID's tree over SECONDS (10), by thread
"""

import os
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")


def stat(pid):
    """(comm, the fields of /proc/PID/stat after it: field 3, the state, is [0]), or None once gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    head, _, rest = text.rpartition(")")  # comm may hold spaces and parentheses: it ends at the last ')'
    return head[head.index("(") + 1:], rest.split()


def identity(pid):
    """(comm, start time: /proc/PID/stat field 22) of a process that has not ended, which tells it
    from a later one given the same pid; None once it ended (a zombie too)."""
    s = stat(pid)
    return (s[0], s[1][19]) if s and s[1][0] != "Z" else None


def tree(pid):
    """PID and its descendants alive now, each after its parent, from the parent pids of
    /proc/*/stat (/proc/PID/task/TID/children needs CONFIG_PROC_CHILDREN, which not every kernel
    has). Raises ProcessLookupError when PID itself is gone: a player that is not there has no
    figures, not zeros."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            s = stat(entry)
            if s:
                children.setdefault(int(s[1][1]), []).append(int(entry))
    if stat(pid) is None:
        raise ProcessLookupError(f"no process {pid}")
    out = [int(pid)]
    for p in out:  # grows while it is walked: breadth first
        out.extend(sorted(children.get(p, ())))
    return out


def named(pid, name):
    """The descendants of PID whose comm is NAME (the kernel keeps 15 bytes of it)."""
    return [p for p in tree(pid)[1:] if (stat(p) or ("",))[0] == name[:15]]


def cpu_seconds(pid):
    """CPU seconds of the tree of PID: over its processes, utime + stime (threads that ended count)
    + cutime + cstime (children that ended and were reaped, whatever they had reaped in turn).
    Only the difference of two readings means anything (the module's docstring)."""
    ticks = 0
    for p in tree(pid):
        s = stat(p)
        if s:
            ticks += sum(int(v) for v in s[1][11:15])  # fields 14-17: utime, stime, cutime, cstime
    return ticks / TICKS


def threads(pid):
    """(process, thread id) of each thread of the tree of PID alive now."""
    for p in tree(pid):
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue  # ended meanwhile
        for tid in tids:
            yield p, tid


def run_ns(pid):
    """Nanoseconds each thread of the tree has run (/proc/PID/task/TID/schedstat, first field):
    {tid: ns}. Finer than utime + stime (clock ticks of 10 ms), but only for threads alive when read."""
    out = {}
    for p, tid in threads(pid):
        try:
            with open(f"/proc/{p}/task/{tid}/schedstat") as f:
                out[tid] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return out


def switches(pid):
    """Voluntary + nonvoluntary context switches of each thread of the tree: {tid: count}."""
    out = {}
    for p, tid in threads(pid):
        try:
            with open(f"/proc/{p}/task/{tid}/status") as f:
                out[tid] = sum(int(line.split()[1]) for line in f
                               if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
        except OSError:
            pass  # the thread ended meanwhile
    return out


def switches_between(before, after):
    """Switches made between two snapshots by the threads alive at the second (a thread born
    meanwhile counts whole); {tid: count} of the threads that switched."""
    return {tid: n - before.get(tid, 0) for tid, n in after.items() if n - before.get(tid, 0) > 0}


def thread_names(pid, tids):
    """{tid: name} of threads of the tree of PID: a thread of PID by its own comm, one of a
    descendant by its process's comm and its own ("tonearm-engine/gst-bus"); "?" once it ended.
    /proc/TID answers for any thread id, though only processes are listed in /proc."""
    names = {}
    for tid in tids:
        try:
            with open(f"/proc/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{tid}/status") as f:
                process = next(int(line.split()[1]) for line in f if line.startswith("Tgid:"))
            if process != int(pid):
                name = f"{(stat(process) or ('?',))[0]}/{name}"
            names[tid] = name
        except (OSError, StopIteration, ValueError):
            names[tid] = "?"
    return names


MEMORY_FIELDS = ("VmRSS", "RssAnon", "RssFile", "Threads")


def memory_kib(pid):
    """VmRSS, RssAnon and RssFile (KiB) and Threads of /proc/PID/status, each summed over the
    tree of PID, and Processes, how many it has. A library two processes map counts in both RSS."""
    out = dict.fromkeys(MEMORY_FIELDS, 0)
    out["Processes"] = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    key, _, rest = line.partition(":")
                    if key in MEMORY_FIELDS:
                        out[key] += int(rest.split()[0])
        except OSError:
            continue  # ended meanwhile
        out["Processes"] += 1
    return out


def main():
    """Benchmarks/wakeups.sh: context switches per second of a running tree (tonearmd) over a
    window, by thread. An idle, paused or stopped tonearmd should show 0: nothing polls."""
    if len(sys.argv) not in (2, 3):
        sys.exit(f"usage: {sys.argv[0]} PID [SECONDS]")
    pid, seconds = int(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) == 3 else 10.0
    before = switches(pid)
    time.sleep(seconds)  # the window is what is measured
    after = switches(pid)
    moved = switches_between(before, after)
    names = thread_names(pid, moved)
    for tid, n in sorted(moved.items(), key=lambda kv: -kv[1]):
        print(f"  thread {names[tid]} ({tid}): +{n}")
    print(f"wake-ups per second: {sum(moved.values()) / seconds:.1f}")
    print(f"threads: {len(before)} before, {len(after)} after; processes now: {len(tree(pid))}")


if __name__ == "__main__":
    main()
