"""The bench's sound server (issue 30): every player plays into a real PipeWire (or PulseAudio)
of the bench's own, through its ordinary audio output, and the server's own CPU and wake-ups are
measured beside the player's.

Loaded by bench.py (not a module of its own: this folder is kept off sys.path, see bench.py).

  SoundServer  PipeWire 0.3.65 (pipewire, wireplumber, pipewire-pulse, and a dbus-daemon for
               wireplumber) or PulseAudio, in a runtime directory under the bench's work directory,
               with one null sink, `bench`, the default; no system or user server is touched
  Monitor      parec on bench.monitor in 10 ms blocks, each stamped with its arrival time: when
               the sound stopped after a PlayPause
  Mpd          MPD 0.23 with its `pulse` output, its config, database, state and socket in the work
               directory, driven over its own protocol
"""

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

SINK_NAME = "bench"
RATE, CHANNELS = 48000, 2
# a frame is sound when a channel's sample is above this (about -50 dBFS; the bench's tones are at
# 0.3 of full scale, -10 dBFS, and a null sink's silence is exact zeros)
SOUND_LEVEL = 100
# what each server needs, installed by the driver when missing (not by install-build-deps: only the
# bench uses them); pactl and parec (pulseaudio-utils) talk to either server
SOUND_PACKAGES = {
    "pipewire": ["pipewire", "pipewire-pulse", "wireplumber", "pulseaudio-utils"],
    "pulseaudio": ["pulseaudio", "pulseaudio-utils"],
}


def log(msg):
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def wait_until(check, limit, what):
    """A bounded wait for a server that has no "ready" signal of its own to wait on."""
    deadline = time.monotonic() + limit
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} within {limit} s")
        time.sleep(0.05)


class SoundServer:
    """A sound server of the bench's own, as Tests/TestSupport/SoundServer.swift starts PulseAudio
    for the tests: its own runtime directory, HOME and config, a client.conf that never autospawns
    another, one null sink made the default."""

    def __init__(self, kind, workdir):
        self.kind = kind
        self.dir = os.path.join(workdir, f"sound-{kind}")
        shutil.rmtree(self.dir, ignore_errors=True)
        self.runtime = os.path.join(self.dir, "runtime")
        os.makedirs(self.runtime, mode=0o700)
        self.client_conf = os.path.join(self.dir, "client.conf")
        with open(self.client_conf, "w") as f:
            f.write("autospawn = no\n")  # a client whose server went away must not start its own
        self.procs = {}  # name -> Popen, in start order

    @property
    def socket(self):
        return os.path.join(self.runtime, "pulse", "native") if self.kind == "pipewire" else os.path.join(self.runtime, "native")

    @property
    def env(self):
        """What a client (player, pactl, parec) needs to reach this server and only it."""
        return {"PULSE_SERVER": f"unix:{self.socket}", "PULSE_CLIENTCONFIG": self.client_conf,
                "PULSE_COOKIE": os.path.join(self.dir, "cookie"), "XDG_RUNTIME_DIR": self.runtime}

    def server_pids(self):
        """The processes whose CPU and wake-ups are the server's: PipeWire's daemon, its Pulse
        server and its session manager; or pulseaudio."""
        return {name: p.pid for name, p in self.procs.items() if name != "dbus-daemon"}

    def _spawn(self, name, argv, env):
        err = open(os.path.join(self.dir, f"{name}.log"), "ab")
        self.procs[name] = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=err, stderr=err)
        err.close()

    def _alive(self):
        for name, p in self.procs.items():
            if p.poll() is not None:
                raise RuntimeError(f"{name} of the bench's sound server exited ({p.returncode}); see {self.dir}/{name}.log")

    def start(self):
        base = {k: v for k, v in os.environ.items()
                if k not in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "PULSE_SERVER")}
        # its state and config files, not the user's
        base.update(HOME=self.dir, XDG_CONFIG_HOME=os.path.join(self.dir, "config"), XDG_STATE_HOME=os.path.join(self.dir, "state"),
                    XDG_RUNTIME_DIR=self.runtime, PULSE_CLIENTCONFIG=self.client_conf)
        if self.kind == "pipewire":
            self._start_pipewire(base)
        else:
            self._start_pulseaudio(base)
        wait_until(lambda: self._alive() or self.pactl("info", check=False) is not None, 20,
                   f"{self.kind}'s Pulse server did not answer")
        if self.kind == "pipewire":
            self.pactl("load-module", "module-null-sink", f"sink_name={SINK_NAME}", f"rate={RATE}", f"channels={CHANNELS}",
                       f"sink_properties=device.description={SINK_NAME}")
        # the default is wireplumber's to keep: until it is up, pipewire-pulse answers "Not
        # supported", and it applies the default a moment later; so again until the server says it
        wait_until(lambda: self._alive() or ((self.kind == "pulseaudio" or self.pactl("set-default-sink", SINK_NAME, check=False) is not None)
                                             and (self.pactl("get-default-sink", check=False) or "").strip() == SINK_NAME), 20,
                   f"{SINK_NAME} did not become {self.kind}'s default sink")
        # VLC refuses to run as root, so the bench starts it as nobody: let it reach the socket
        for path in (self.runtime, os.path.dirname(self.socket)):
            os.chmod(path, 0o755)
        os.chmod(self.socket, 0o777)
        info = self.pactl("info")
        self.version = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("Server Name")), self.kind)
        log(f"sound server: {self.version}, null sink {SINK_NAME}, in {self.runtime}")

    def _start_pipewire(self, env):
        # wireplumber does not start without a session bus (it quits "disconnected from pipewire"
        # after "Cannot autolaunch D-Bus", wireplumber 0.4.13): one of its own, as a desktop has
        bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address",
                                f"--address=unix:path={os.path.join(self.runtime, 'bus')}"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.procs["dbus-daemon"] = bus
        address = bus.stdout.readline().decode().strip()
        if not address:
            raise RuntimeError("the sound server's dbus-daemon did not start")
        env = dict(env, DBUS_SESSION_BUS_ADDRESS=address)
        # the daemon, then its session manager once the daemon's socket is there, then the Pulse
        # server: the order a desktop's user units start them in
        self._spawn("pipewire", ["pipewire"], env)
        wait_until(lambda: self._alive() or os.path.exists(os.path.join(self.runtime, "pipewire-0")), 20,
                   "pipewire made no socket")
        self._spawn("wireplumber", ["wireplumber"], env)
        self._spawn("pipewire-pulse", ["pipewire-pulse"], env)

    def _start_pulseaudio(self, env):
        script = os.path.join(self.dir, "server.pa")
        with open(script, "w") as f:
            f.write(f"load-module module-native-protocol-unix socket={self.socket} auth-anonymous=1\n"
                    f"load-module module-null-sink sink_name={SINK_NAME} rate={RATE} channels={CHANNELS} "
                    f"sink_properties=device.description={SINK_NAME}\n"
                    f"set-default-sink {SINK_NAME}\n")
        # -n: no default.pa (no ALSA, udev or D-Bus modules); as root it warns and runs
        self._spawn("pulseaudio", ["pulseaudio", "--daemonize=no", "--exit-idle-time=-1", "-n", "-F", script,
                                   "--use-pid-file=no", "--disallow-exit=no", "--log-target=stderr", "--system=no"], env)

    def pactl(self, *args, check=True):
        done = subprocess.run(["pactl", *args], env=dict(os.environ, **self.env), capture_output=True, text=True, timeout=10)
        if done.returncode != 0:
            if check:
                raise RuntimeError(f"pactl {' '.join(args)}: {done.stderr.strip()}")
            return None
        return done.stdout

    def streams(self):
        """The sink inputs playing now (one line each)."""
        return [line for line in (self.pactl("list", "short", "sink-inputs") or "").splitlines() if line.strip()]

    def stop(self):
        for name, p in reversed(list(self.procs.items())):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = {}


class Monitor:
    """What the null sink plays, from its monitor (parec, 10 ms blocks), each block stamped with
    the perf_counter time it arrived, so that when a change was heard can be said."""

    def __init__(self, server):
        self.proc = subprocess.Popen(["parec", f"--device={SINK_NAME}.monitor", "--raw", "--format=s16le", f"--rate={RATE}",
                                      f"--channels={CHANNELS}", "--latency-msec=10"], env=dict(os.environ, **server.env),
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.lock = threading.Lock()
        self.data = bytearray()
        self.arrivals = []  # (perf_counter, frames recorded until then)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        fd, frame = self.proc.stdout.fileno(), 2 * CHANNELS
        while True:
            chunk = os.read(fd, 65536)
            now = time.perf_counter()
            if not chunk:
                return
            with self.lock:
                self.data += chunk
                self.arrivals.append((now, len(self.data) // frame))

    def snapshot(self):
        import numpy as np
        with self.lock:
            frames = len(self.data) // (2 * CHANNELS)
            samples = np.frombuffer(bytes(self.data[:frames * 2 * CHANNELS]), dtype="<i2").reshape(-1, CHANNELS)
            return samples, list(self.arrivals)

    def sounding_since(self, seconds):
        """Whether every 10 ms of the last SECONDS recorded has sound in it."""
        import numpy as np
        samples, _ = self.snapshot()
        n = int(seconds * RATE)
        if len(samples) < n:
            return False
        peaks = np.abs(samples[-n:].astype(np.int32)).max(axis=1).reshape(-1, RATE // 100).max(axis=1)
        return bool((peaks > SOUND_LEVEL).all())

    def stop_after(self, called, quiet=0.3):
        """When the sound stopped after a call sent at CALLED (perf_counter): (the arrival of the
        block that held the last sound, in s after the call; the same from the sample clock: the
        block least delayed of those near the call dates its samples, and the last sound's frame
        is dated from it). None when the sound had not stopped for QUIET s at the end, or had
        already stopped before the call."""
        import numpy as np
        samples, arrivals = self.snapshot()
        sound = np.nonzero(np.abs(samples.astype(np.int32)).max(axis=1) > SOUND_LEVEL)[0]
        if not len(sound):
            return None
        last = int(sound[-1])
        if len(samples) - 1 - last < quiet * RATE:
            return None  # still sounding (or not silent long enough to say it stopped)
        block = next(t for t, frames in arrivals if frames > last)
        near = [(t, frames) for t, frames in arrivals if called - 2 <= t]
        offset = min(t - frames / RATE for t, frames in near)  # the time frame 0 would have arrived
        frame_time = offset + (last + 1) / RATE
        if block < called - 0.05:
            return None  # nothing sounded at the call
        return block - called, frame_time - called

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()
        self.thread.join(2)


class Mpd:
    """MPD 0.23 with its `pulse` output into the bench's server: a config of the bench's own (music
    directory, database, state, pid file and a Unix socket in the work directory), driven over its
    own protocol (the line protocol mpc speaks)."""

    def __init__(self, workdir, music_file, env):
        self.dir = os.path.join(workdir, "mpd")
        shutil.rmtree(self.dir, ignore_errors=True)
        music = os.path.join(self.dir, "music")
        os.makedirs(music)
        self.song = os.path.basename(music_file)
        os.symlink(music_file, os.path.join(music, self.song))
        self.socket_path = os.path.join(self.dir, "socket")
        self.config = os.path.join(self.dir, "mpd.conf")
        with open(self.config, "w") as f:
            f.write(f'music_directory "{music}"\ndb_file "{self.dir}/db"\nstate_file "{self.dir}/state"\n'
                    f'pid_file "{self.dir}/pid"\nlog_file "{self.dir}/log"\nbind_to_address "{self.socket_path}"\n'
                    'zeroconf_enabled "no"\n'
                    'audio_output {\n  type "pulse"\n  name "bench"\n}\n')
        self.env = env
        self.proc = None
        self.name = "mpd"

    def start(self):
        err = open(os.path.join(self.dir, "mpd.err"), "ab")
        self.proc = subprocess.Popen(["mpd", "--no-daemon", self.config], env=self.env, stdin=subprocess.DEVNULL,
                                     stdout=err, stderr=err)
        err.close()
        wait_until(lambda: self.proc.poll() is not None or os.path.exists(self.socket_path), 30, "MPD made no socket")
        if self.proc.poll() is not None:
            raise RuntimeError(f"mpd exited ({self.proc.returncode}); see {self.dir}/mpd.err and log")
        self.connect()
        # a new database is made at start: wait until it has the song
        wait_until(lambda: "updating_db" not in self.status() and self.command(f'add "{self.song}"', check=False) is not None,
                   30, "MPD's database did not get the MP3")
        self.command("clear")

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(self.socket_path)
        self.stream = self.sock.makefile("rwb")
        if not self.stream.readline().startswith(b"OK MPD"):
            raise RuntimeError("MPD did not greet")

    def command(self, line, check=True):
        """Sends LINE; its key: value pairs, or None (with check=False) for an ACK."""
        for attempt in (1, 2):
            try:
                self.stream.write((line + "\n").encode())
                self.sent_at = time.perf_counter()
                self.stream.flush()
                reply = self.stream.readline().decode()
            except OSError:
                reply = ""
            if reply or attempt == 2:
                break
            # MPD closes a client connection idle for connection_timeout (60 s): a new one
            self.sock.close()
            self.connect()
        out = {}
        while True:
            reply = reply.rstrip("\n")
            if reply == "OK":
                return out
            if reply.startswith("ACK") or not reply:
                if check:
                    raise RuntimeError(f"MPD: {line}: {reply or 'connection closed'}")
                return None
            key, _, value = reply.partition(": ")
            out[key] = value
            reply = self.stream.readline().decode()

    def status(self):
        return self.command("status")

    async def play(self):
        self.command("clear")
        self.command(f'add "{self.song}"')
        self.command("play")
        deadline = time.monotonic() + 10
        while not (self.status().get("state") == "play" and float(self.status().get("elapsed", 0)) > 0):
            if time.monotonic() > deadline:
                raise RuntimeError("MPD did not start playing")
            await asyncio.sleep(0.02)

    def stop_playing(self):
        self.command("stop")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.sock.close()
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
