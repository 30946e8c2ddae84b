#!/usr/bin/env python3
"""How often a player and its sound server wake, and what they cost, while a 30 s MP3 plays
through a PulseAudio (or PipeWire's pipewire-pulse) of this script's own, and while it is paused.

Each player plays into one null sink through its ordinary Pulse output; the script samples
/proc (context switches of every thread, voluntary + involuntary; utime + stime) of the player's
process tree (tonearmd with tonearm-engine while it runs: Benchmarks/proctree.py) and of the server
over a window. Players: tonearmd (release build, the default path: autoaudiosink
finds pulsesink), gst-launch-1.0 playbin (the floor), mpv --ao=pulse. Rounds interleave players.

  python3 Benchmarks/pulse_path.py [--server pulseaudio|pipewire] [--rounds 3] [--window 15]
                                   [--players tonearmd,playbin,mpv] [--paused]

No system daemon is touched: the server, its runtime directory and the session bus are the
script's own. This is not `make bench` (Benchmarks/bench.py); it measures the sound-server path
only, as the README's "### Outputs" reports it.
"""
import argparse, os, shutil, signal, subprocess, sys, tempfile, time

import proctree  # Benchmarks/proctree.py, beside this file

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def proc_sample(pid):
    """(context switches of each thread, cpu seconds) of the process tree of pid (proctree.py: a
    player's children count as the player's), or None once it is gone."""
    try:
        return proctree.switches(pid), proctree.cpu_seconds(pid)
    except ProcessLookupError:
        return None


def measure(pids, window):
    before = {name: proc_sample(pid) for name, pid in pids.items()}
    time.sleep(window)  # a window of time is what is measured
    after = {name: proc_sample(pid) for name, pid in pids.items()}
    out = {}
    for name in pids:
        b, a = before[name], after[name]
        if b is None or a is None:
            out[name] = (float("nan"), float("nan"))
        else:
            switched = sum(proctree.switches_between(b[0], a[0]).values())
            out[name] = (switched / window, 100 * (a[1] - b[1]) / window)
    return out


class Server:
    def __init__(self, kind, workdir, rewinds):
        self.kind, self.dir = kind, os.path.join(workdir, kind)
        self.runtime = os.path.join(self.dir, "runtime")
        os.makedirs(self.runtime, mode=0o700)
        conf = os.path.join(self.dir, "client.conf")
        with open(conf, "w") as f:
            f.write("autospawn = no\n")
        self.env = dict(os.environ, XDG_RUNTIME_DIR=self.runtime, PULSE_RUNTIME_PATH=self.runtime,
                        PULSE_CLIENTCONFIG=conf, PULSE_SERVER=f"unix:{self.runtime}/native" if kind == "pulseaudio"
                        else f"unix:{self.runtime}/pulse/native",
                        PULSE_COOKIE=os.path.join(self.dir, "cookie"), HOME=self.dir)
        self.env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        self.procs = []
        self.log = open(os.path.join(self.dir, "server.log"), "w")
        sink_args = f"sink_name=speakers rate=48000 channels=2 format=s16le{'' if rewinds else ' norewinds=1'}"
        if kind == "pulseaudio":
            pa = os.path.join(self.dir, "server.pa")
            with open(pa, "w") as f:
                f.write(f"load-module module-native-protocol-unix socket={self.runtime}/native auth-anonymous=1\n"
                        f"load-module module-null-sink {sink_args}\nset-default-sink speakers\n")
            env = dict(self.env)
            env.pop("PULSE_SERVER")
            self.procs.append(subprocess.Popen(
                ["pulseaudio", "--daemonize=no", "--exit-idle-time=-1", "-n", "-F", pa, "--use-pid-file=no",
                 "--log-target=stderr", "--system=no"], env=env, stdout=self.log, stderr=self.log))
            self.pid = self.procs[0].pid
        else:
            # pipewire, its pulse server and a session manager, each with the runtime dir of its own
            env = dict(self.env)
            env.pop("PULSE_SERVER")
            bus = subprocess.run(["dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1"],
                                 capture_output=True, text=True, check=True, env=env).stdout.split()
            env["DBUS_SESSION_BUS_ADDRESS"] = bus[0]
            self.bus_pid = int(bus[1])
            for argv in (["pipewire"], ["wireplumber"], ["pipewire-pulse"]):
                self.procs.append(subprocess.Popen(argv, env=env, stdout=self.log, stderr=self.log))
                time.sleep(0.5)
            self.pid = self.procs[0].pid
            self.pulse_pid = self.procs[2].pid
        deadline = time.time() + 15
        while subprocess.run(["pactl", "info"], env=self.env, capture_output=True).returncode != 0:
            if time.time() > deadline:
                sys.exit(f"{kind} did not start: see {self.dir}/server.log")
            time.sleep(0.1)
        if kind == "pipewire":
            self.pactl("load-module", "module-null-sink", *sink_args.split())
            time.sleep(1)
            self.pactl("set-default-sink", "speakers")

    def pids(self):
        if self.kind == "pulseaudio":
            return {"server": self.pid}
        return {"pipewire": self.pid, "pipewire-pulse": self.pulse_pid, "wireplumber": self.procs[1].pid}

    def pactl(self, *args):
        return subprocess.run(["pactl", *args], env=self.env, capture_output=True, text=True).stdout

    def stop(self):
        for p in reversed(self.procs):
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
        if self.kind == "pipewire":
            os.kill(self.bus_pid, signal.SIGTERM)


def make_mp3(path):
    if not os.path.exists(path):
        subprocess.run(["gst-launch-1.0", "-q", "audiotestsrc", "wave=sine", "freq=440", "volume=0.5",
                        f"num-buffers={30 * 44100 // 1024}", "samplesperbuffer=1024", "!",
                        "audio/x-raw,rate=44100,channels=2", "!", "lamemp3enc", "!", "filesink", f"location={path}"],
                       check=True)


def dbus(bus_env, dest, method, *args):
    return subprocess.run(["dbus-send", "--session", "--print-reply", f"--dest={dest}", "/org/mpris/MediaPlayer2",
                           method, *args], env=bus_env, capture_output=True, text=True)


def start_player(name, mp3, server, workdir, bus_env):
    env = dict(server.env, **bus_env)
    if name.startswith("tonearmd"):
        # tonearmd:PATH measures another build beside this one
        exe = name.partition(":")[2] or os.environ.get("TONEARMD", os.path.join(ROOT, ".build/release/tonearmd"))
        state = tempfile.mkdtemp(dir=workdir)
        env.update(XDG_STATE_HOME=state, XDG_CACHE_HOME=state, XDG_MUSIC_DIR=state)
        env.pop("TONEARM_AUDIO_SINK", None)
        argv = [exe, mp3]
    elif name.startswith("playbin"):
        # playbin:SINK tries an audio sink description ("playbin:pulsesink latency-time=100000")
        sink = name.partition(":")[2]
        argv = ["gst-launch-1.0", "-q", "playbin", f"uri=file://{mp3}"] + ([f"audio-sink={sink}"] if sink else [])
    elif name == "mpv":
        argv = ["mpv", "--no-config", "--no-video", "--ao=pulse", "--really-quiet", "--no-terminal", mp3]
    else:
        sys.exit(f"unknown player {name}")
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 15
    while not server.pactl("list", "short", "sink-inputs").strip():
        if time.time() > deadline or proc.poll() is not None:
            sys.exit(f"{name} never played into the server")
        time.sleep(0.1)
    return proc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", default="pulseaudio", choices=["pulseaudio", "pipewire"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--window", type=float, default=15)
    ap.add_argument("--players", default="tonearmd,playbin,mpv", help="comma-separated; playbin:SINK tries a sink")
    ap.add_argument("--paused", action="store_true", help="tonearmd only: wake-ups while paused, over time")
    ap.add_argument("--rewinds", action="store_true", help="a null sink that rewinds (as ALSA sinks do)")
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="tonearm-pulse-")
    mp3 = os.path.join(workdir, "play.mp3")
    make_mp3(mp3)
    server = Server(args.server, workdir, args.rewinds)
    bus = subprocess.run(["dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1"],
                         capture_output=True, text=True, check=True).stdout.split()
    bus_env = {"DBUS_SESSION_BUS_ADDRESS": bus[0]}
    print(f"# {args.server}, load before: {os.getloadavg()}", flush=True)
    try:
        if args.paused:
            proc = start_player("tonearmd", mp3, server, workdir, bus_env)
            time.sleep(2)
            dbus(bus_env, "org.mpris.MediaPlayer2.tonearm", "org.mpris.MediaPlayer2.Player.Pause")
            for second in range(0, 20, 2):
                r = measure({"tonearmd": proc.pid, **server.pids()}, 2)
                print(f"paused {second:2d}-{second + 2:2d} s: " + "  ".join(f"{n} {c:6.1f}/s" for n, (c, _) in r.items()), flush=True)
            proc.terminate()
            proc.wait()
            return
        rows = {}
        for rnd in range(args.rounds):
            for name in args.players.split(","):
                proc = start_player(name, mp3, server, workdir, bus_env)
                time.sleep(3)  # past the start and preroll
                r = measure({name: proc.pid, **server.pids()}, args.window)
                proc.terminate()
                proc.wait()
                time.sleep(1)
                line = "  ".join(f"{n}: {c:6.1f} cs/s {u:5.2f}% cpu" for n, (c, u) in r.items())
                print(f"round {rnd} {name:9s} {line}", flush=True)
                rows.setdefault(name, []).append(r)
        print(f"# load after: {os.getloadavg()}")
        print("| player | player cs/s | player CPU % | server cs/s | server CPU % |")
        print("|---|---|---|---|---|")
        for name, rs in rows.items():
            def med(key, i):
                vals = sorted(r[key][i] for r in rs)
                return vals[len(vals) // 2]
            srv = [k for k in rs[0] if k != name]
            print(f"| {name} | {med(name, 0):.1f} | {med(name, 1):.2f} | "
                  f"{sum(med(k, 0) for k in srv):.1f} | {sum(med(k, 1) for k in srv):.2f} |")
    finally:
        server.stop()
        os.kill(int(bus[1]), signal.SIGTERM)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
