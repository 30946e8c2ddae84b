#!/usr/bin/env python3
"""PlayPause -> PropertiesChanged(PlaybackStatus) while tonearmd plays an MP3 into a PipeWire (or
PulseAudio) of this script's own, each call after a quiet stretch, as `make bench`'s sound rows
make it (issue 30): several builds in turn, call by call (A B A B ...), so that a drifting load
falls on all of them alike, one playing at a time.

The caller is a blocking connection that sends PlayPause and reads the signal before the reply,
as bench.py's RawClient does (a listening thread in the same process, tried first, made both
slower: the two threads woke together for every signal and took turns at the GIL). Beside them,
Peer.Ping after the same quiet: the round trip through the bus and tonearmd's reading thread with
nothing to do, the floor under the other figures.

  /usr/bin/python3 Benchmarks/playpause.py [--server pipewire|pulseaudio] [--calls 20] [--quiet 1.5]
                                           LABEL=TONEARMD [LABEL=TONEARMD ...]

No system daemon is touched: the sound server (sound.py's, as make bench starts it), its runtime
directory and the session bus are the script's own.
"""
import argparse, importlib.util, os, shutil, signal, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]  # this folder holds queue.py
sys.path.insert(0, os.path.join(HERE, "..", "Tests", "PySupport"))
from tonearm_testkit import OBJ, PEER, PLAYER, PROPS, BUS, RawClient, call_msg, file_uri, percentile  # noqa: E402
from jeepney import new_method_call  # noqa: E402


def sibling(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sound = sibling("sound")


class Tonearmd:
    def __init__(self, label, exe, mp3, server, bus_env, workdir, sink=""):
        self.label = label
        state = tempfile.mkdtemp(prefix=f"{label}-", dir=workdir)
        env = dict(os.environ, **server.env, **bus_env, XDG_STATE_HOME=state, XDG_CACHE_HOME=state, XDG_MUSIC_DIR=state)
        env.pop("TONEARM_AUDIO_SINK", None)
        self.err = open(os.path.join(workdir, f"{label}.err"), "wb")
        extra = ["--audio-sink", sink] if sink else []  # fakesink sync=true: the engine without the sound server
        self.proc = subprocess.Popen([exe, "--instance", label] + extra, env=env, stdout=self.err, stderr=self.err)
        self.dest = f"org.mpris.MediaPlayer2.tonearm.{label}"
        self.raw = RawClient(bus_env["DBUS_SESSION_BUS_ADDRESS"])
        deadline = time.monotonic() + 30
        while True:
            _, reply = self.raw.call(new_method_call(BUS, "NameHasOwner", "s", (self.dest,)))
            if reply.body[0]:
                break
            if time.monotonic() > deadline:
                sys.exit(f"{label} did not take {self.dest}")
            time.sleep(0.05)
        _, reply = self.raw.call(new_method_call(BUS, "GetNameOwner", "s", (self.dest,)))
        self.owner = reply.body[0]
        rule = f"type='signal',sender='{self.owner}',path='{OBJ}',interface='{PROPS}',member='PropertiesChanged'"
        self.raw.call(new_method_call(BUS, "AddMatch", "s", (rule,)))
        self.call("OpenUri", "s", (file_uri(mp3),))
        self.caller = {"Paused": [], "Playing": []}
        self.pings = []

    def call(self, member, sig="", body=(), on_signal=None):
        return self.raw.call(call_msg(self.dest, OBJ, PLAYER, member, sig, body), on_signal=on_signal)

    def status(self):
        _, reply = self.raw.call(call_msg(self.dest, OBJ, PROPS, "Get", "ss", (PLAYER, "PlaybackStatus")))
        return reply.body[0][1]

    def toggle(self, quiet):
        """One PlayPause after QUIET seconds: the seconds until its PlaybackStatus signal."""
        wanted = "Paused" if self.status() == "Playing" else "Playing"
        time.sleep(quiet)
        seen = []
        self.call("PlayPause", on_signal=lambda t, m: seen.append((t, m)))
        sent = self.raw.sent_at
        at = next((t for t, m in seen if m.body and m.body[0] == PLAYER
                   and m.body[1].get("PlaybackStatus", (None, None))[1] == wanted), None)
        if at is not None:
            self.caller[wanted].append(at - sent)

    def ping(self, quiet):
        """Peer.Ping after QUIET seconds, answered by tonearmd's object server on the same thread
        that reads the call: the round trip with no work, the floor under PlayPause's figures."""
        time.sleep(quiet)
        took, _ = self.raw.call(call_msg(self.dest, OBJ, PEER, "Ping", "", ()))
        self.pings.append(took)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def ms(values):
    if not values:
        return "-"
    return f"{statistics.median(values) * 1e3:.2f} ({percentile(values, 95) * 1e3:.2f}) n={len(values)}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builds", nargs="+", help="LABEL=PATH of a tonearmd, or LABEL=PATH=SINK for its --audio-sink")
    ap.add_argument("--server", default="pipewire", choices=["pipewire", "pulseaudio"])
    ap.add_argument("--calls", type=int, default=20, help="PlayPause calls per build")
    ap.add_argument("--quiet", type=float, default=1.5, help="seconds of quiet before each call")
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="tonearm-playpause-")
    mp3 = os.path.join(workdir, "play.mp3")
    seconds = 600  # longer than the calls: the item never ends meanwhile
    subprocess.run(["gst-launch-1.0", "-q", "audiotestsrc", "wave=sine", "freq=440", "volume=0.3",
                    f"num-buffers={seconds * 44100 // 1024}", "samplesperbuffer=1024", "!",
                    "audio/x-raw,rate=44100,channels=2", "!", "lamemp3enc", "!", "filesink", f"location={mp3}"], check=True)
    server = sound.SoundServer(args.server, workdir)
    bus = subprocess.run(["dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1"],
                         capture_output=True, text=True, check=True).stdout.split()
    bus_env = {"DBUS_SESSION_BUS_ADDRESS": bus[0]}
    print(f"# {args.server}, load before: {os.getloadavg()}", flush=True)
    players = []
    try:
        server.start()
        for build in args.builds:
            label, _, exe = build.partition("=")
            exe, _, sink = exe.partition("=")
            players.append(Tonearmd(label, exe, mp3, server, bus_env, workdir, sink))
        for p in players:
            p.call("Pause")
        time.sleep(2)
        # one build plays at a time, as in make bench: playing, PlayPause (-> Paused), PlayPause
        # (-> Playing), then paused again for the next build
        for _ in range(args.calls):
            for p in players:
                p.call("Play")
                until = time.monotonic() + 10
                while p.status() != "Playing" and time.monotonic() < until:
                    time.sleep(0.02)
                p.toggle(args.quiet)
                p.toggle(args.quiet)
                p.ping(args.quiet)
                p.call("Pause")
        print(f"# load after: {os.getloadavg()}")
        print("| build | PlayPause -> Paused, median ms (p95) | -> Playing | Peer.Ping's reply |")
        print("|---|---|---|---|")
        for p in players:
            print(f"| {p.label} | {ms(p.caller['Paused'])} | {ms(p.caller['Playing'])} | {ms(p.pings)} |")
    finally:
        for p in players:
            p.stop()
        server.stop()
        os.kill(int(bus[1]), signal.SIGTERM)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
