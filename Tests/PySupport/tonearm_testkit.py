"""What the Python drivers of tonearmd share (Tests/Fuzz/fuzz.py, Tests/Soak/soak.py).

- a private dbus-daemon and one tonearmd on it with a silent real-time sink (Service), and what
  /proc says about that tonearmd (memory, threads, open file descriptors);
- an asyncio D-Bus client over Debian's python3-jeepney with many calls in flight, replies matched
  by serial (Client), and small helpers to build calls and name replies;
- media generated at run time with gst-launch-1.0 (render_tones, make_media).

Needs python3-jeepney (Debian), dbus-daemon and gst-launch-1.0. Import it with
    sys.path.insert(0, os.path.join(REPO, "Tests", "PySupport"))
"""

import asyncio
import concurrent.futures
import importlib.util
import math
import os
import re
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from urllib.parse import quote

try:
    from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
    from jeepney.io.asyncio import open_dbus_connection
    from jeepney.io.blocking import open_dbus_connection as open_blocking_connection
    from jeepney.low_level import Parser
except ImportError:  # pragma: no cover
    sys.exit(f"{os.path.basename(sys.argv[0])}: python3-jeepney is missing (apt-get install python3-jeepney; "
             "run with /usr/bin/python3 if another python3 comes first on PATH)")

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def _load_proctree():
    """Benchmarks/proctree.py, by its path (that folder's queue.py would shadow the standard
    library's on sys.path): a player's whole process tree, as the bench reads it."""
    spec = importlib.util.spec_from_file_location("proctree", os.path.join(REPO, "Benchmarks", "proctree.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


proctree = _load_proctree()
OBJ = "/org/mpris/MediaPlayer2"
NAME = "org.mpris.MediaPlayer2.tonearm"
PROPS = "org.freedesktop.DBus.Properties"
PEER = "org.freedesktop.DBus.Peer"
INTRO = "org.freedesktop.DBus.Introspectable"
ROOT = "org.mpris.MediaPlayer2"
PLAYER = "org.mpris.MediaPlayer2.Player"
TRACKLIST = "org.mpris.MediaPlayer2.TrackList"
EXT = "io.github.tonearm.Player1"
NOTRACK = "/org/mpris/MediaPlayer2/TrackList/NoTrack"
TRACK = "/io/github/tonearm/Track/"
BUS = DBusAddress("/org/freedesktop/DBus", "org.freedesktop.DBus", "org.freedesktop.DBus")
REPLY_TIMEOUT = 25.0
MiB = 1 << 20


def unit_environment():
    """The variables packaging/tonearmd.service sets (its Environment= lines), as systemd and D-Bus
    activation start tonearmd with them."""
    unit = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "packaging", "tonearmd.service")
    variables = {}
    with open(unit) as f:
        for line in f:
            if line.startswith("Environment="):
                for word in shlex.split(line[len("Environment="):]):
                    name, _, value = word.partition("=")
                    variables[name] = value
    return variables


def file_uri(path):
    """A file URI of a path (str or bytes: a name that is not UTF-8 is percent-encoded byte by byte)."""
    return "file://" + quote(path)


def id3v1(title, artist, album):
    """A 128-byte ID3v1 tag (appended to an MP3) of byte strings as given: ID3v1 declares no
    encoding, and Latin-1 is what taggers wrote."""
    def field(value, size):
        return value[:size].ljust(size, b"\0")
    return b"TAG" + field(title, 30) + field(artist, 30) + field(album, 30) + b"2001" + field(b"", 30) + bytes([255])


def id3v2_latin1_title(title):
    """An ID3v2.3 tag (prepended to an MP3) with one TIT2 frame of encoding 0 (ISO-8859-1)."""
    body = b"\x00" + title
    frame = b"TIT2" + len(body).to_bytes(4, "big") + b"\x00\x00" + body
    size = len(frame)
    synchsafe = bytes([(size >> 21) & 0x7f, (size >> 14) & 0x7f, (size >> 7) & 0x7f, size & 0x7f])
    return b"ID3\x03\x00\x00" + synchsafe + frame


# --------------------------------------------------------------------------------------------
# Media, generated at run time


def render_tones(jobs, tag="tonearm", parallel=2):
    """Encodes sine tones with gst-launch-1.0, PARALLEL at a time. A job is a dict: path, enc (an
    encoder description, e.g. "vorbisenc ! oggmux"), rate, ch, secs, freq, and optional tags (a
    taginject string whose quotes are escaped: title=(string)\\"A B\\",artist=(string)C)."""
    def render(j):
        spb = 1024
        inject = f"! taginject 'tags=\"{j['tags']}\"' " if j.get("tags") else ""
        cmd = (f"gst-launch-1.0 -q audiotestsrc num-buffers={math.ceil(j['secs'] * j['rate'] / spb)} "
               f"samplesperbuffer={spb} freq={j['freq']} volume=0.3 ! audio/x-raw,rate={j['rate']},channels={j['ch']} "
               f"! audioconvert {inject}! {j['enc']} ! filesink location=\"{j['path']}\"")
        done = subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        return done, j["path"], cmd
    # a pool of PARALLEL workers, each waiting on its own gst-launch: no polling loop
    with concurrent.futures.ThreadPoolExecutor(max_workers=parallel) as pool:
        results = list(pool.map(render, jobs))
    for done, path, cmd in results:
        if done.returncode != 0 or not os.path.getsize(path):
            raise SystemExit(f"{tag}: cannot generate {path}: {cmd}\n{done.stderr.decode(errors='replace')}")

MEDIA_VALID = [  # name, encoder, rate, channels
    ("tone-44k-stereo.flac", "flacenc", 44100, 2),
    ("tone-96k-mono.flac", "flacenc", 96000, 1),
    ("tone-48k-stereo.wav", "wavenc", 48000, 2),
    ("tone-8k-mono.wav", "wavenc", 8000, 1),
    ("tone-22k-stereo.ogg", "vorbisenc ! oggmux", 22050, 2),
    ("tone-48k-6ch.ogg", "vorbisenc ! oggmux", 48000, 6),
    ("tone-44k-stereo.mp3", "lamemp3enc", 44100, 2),
    ("tone-16k-mono.mp3", "lamemp3enc", 16000, 1),
    ("odd name ☃ #1 ?.flac", "flacenc", 32000, 2),
]


def make_media(rng, media_dir, tag="fuzz"):
    """The fuzzer's media: valid files of 2-10 s and broken ones; returns (valid URIs, broken URIs,
    directory URIs). The same rng state gives the same files (replays depend on it)."""
    if os.path.isdir(media_dir):
        shutil.rmtree(media_dir)
    os.makedirs(media_dir)
    jobs, valid = [], []
    for name, enc, rate, ch in MEDIA_VALID:
        secs = rng.randint(2, 10)
        freq = rng.choice([220, 330, 440, 660, 880])
        path = os.path.join(media_dir, name)
        jobs.append(dict(path=path, enc=enc, rate=rate, ch=ch, secs=secs, freq=freq))
        valid.append(path)
    render_tones(jobs, tag)
    with open(valid[0], "rb") as f:
        data = f.read()
    broken = {}
    for name, content in [("truncated.flac", data[:len(data) * 2 // 5]),
                          ("header-only.flac", data[:64]),
                          ("random.mp3", rng.randbytes(64 * 1024)),
                          ("random.ogg", rng.randbytes(4096)),
                          ("empty.ogg", b"")]:
        path = os.path.join(media_dir, name)
        with open(path, "wb") as f:
            f.write(content)
        broken[name] = path
    # names that are not UTF-8 (a Latin-1 CD rip, an old Windows zip) with Latin-1 tags (issue 26):
    # an ID3v1 tag, whose text has no declared encoding, and an ID3v2 frame of encoding 0
    latin1 = os.path.join(os.fsencode(media_dir), b"caf\xe9 \xff.mp3")
    with open(valid[6], "rb") as f:
        mp3 = f.read()
    with open(latin1, "wb") as f:
        f.write(id3v2_latin1_title(b"Caf\xe9 au lait") + mp3 + id3v1(b"Caf\xe9", b"Mot\xf6rhead", b"\xc9t\xe9"))
    valid.append(latin1)
    album = os.path.join(media_dir, "album")
    os.makedirs(album)
    shutil.copy(valid[4], os.path.join(album, "track 10.ogg"))
    shutil.copy(valid[3], os.path.join(album, "track 2.wav"))
    shutil.copy(valid[3], os.path.join(os.fsencode(album), b"track 3 \xe9t\xe9.wav"))
    with open(os.path.join(album, "notes.txt"), "w") as f:
        f.write("not media\n")
    os.makedirs(os.path.join(media_dir, "empty-dir"))
    unreadable = os.path.join(media_dir, "unreadable.flac")
    shutil.copy(valid[0], unreadable)
    os.chmod(unreadable, 0)
    uri = file_uri
    valid_uris = [uri(p) for p in valid]
    broken_uris = [uri(p) for p in broken.values()] + [
        uri(os.path.join(media_dir, "empty-dir")), uri(unreadable),
        uri(os.path.join(media_dir, "missing.flac")),
        os.path.join(media_dir, "missing.ogg"),                       # a plain path
        "file://" + quote(media_dir) + "/%00nul.flac",                 # odd bytes
        "file://" + quote(media_dir) + "/%FF%FE%80.mp3",               # not UTF-8 once decoded
        "file://" + quote(media_dir) + "/..%2F..%2F..%2Fetc%2Fpasswd",
        "file://" + quote(media_dir) + "/tone-44k-stereo.flac#frag?q=1",
        "file:///dev/zero", "file:///proc/self/mem", "file://host.invalid/x.flac",
        "http://127.0.0.1:1/nothing.mp3", "https://127.0.0.1:1/nothing.ogg", "ftp://127.0.0.1/x.mp3",
        "data:audio/wav;base64,UklGRg==", "file:", "file://", "", " ", "\u202e3pm.flac",
    ]
    dir_uris = [uri(album), uri(os.path.join(media_dir, "empty-dir"))]
    return valid_uris, broken_uris, dir_uris


# --------------------------------------------------------------------------------------------
# Processes: a private bus and tonearmd


class Service:
    """A private dbus-daemon in WORKDIR and one tonearmd on it (`fakesink sync=true`). tonearmd
    inherits the environment (so e.g. MALLOC_ARENA_MAX reaches it only when the caller sets it)
    and runs in CWD (default WORKDIR/media/album) so that relative paths stay in the media."""

    def __init__(self, workdir, tonearmd, pipeline, stderr_path, tag="fuzz", cwd=None):
        self.workdir, self.tonearmd, self.pipeline, self.stderr_path = workdir, tonearmd, pipeline, stderr_path
        self.tag = tag
        self.cwd = cwd or os.path.join(workdir, "media", "album")
        self.bus = self.proc = None
        self.address = None

    def start_bus(self):
        sock = os.path.join(self.workdir, "bus")
        if os.path.exists(sock):
            os.unlink(sock)
        self.bus = subprocess.Popen(["dbus-daemon", "--session", "--print-address", "--nofork",
                                     f"--address=unix:path={sock}"],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.address = self.bus.stdout.readline().decode().strip()
        if not self.address:
            raise SystemExit(f"{self.tag}: dbus-daemon did not start")

    def start_tonearmd(self):
        # a fresh saved state for every start: a replay never resumes the run before it
        env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=self.address,
                   XDG_CACHE_HOME=os.path.join(self.workdir, "cache"),
                   XDG_STATE_HOME=tempfile.mkdtemp(prefix="state-", dir=self.workdir),
                   XDG_MUSIC_DIR=os.path.join(self.workdir, "music"))
        env.pop("TONEARM_PIPELINE", None)
        if self.pipeline != "default":  # else tonearmd's own choice for this GStreamer
            env["TONEARM_PIPELINE"] = self.pipeline
        # the crashed thread's whole stack, in the stderr file
        env.setdefault("SWIFT_BACKTRACE", "enable=yes,preset=full,threads=crashed,sanitize=no,limit=80,top=0")
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
        # started as users start it: with the systemd unit's environment (its allocator settings)
        for name, value in unit_environment().items():
            env.setdefault(name, value)
        self.err = open(self.stderr_path, "ab")
        self.proc = subprocess.Popen([self.tonearmd, "--audio-sink", "fakesink sync=true"], cwd=self.cwd,
                                     env=env, stdout=self.err, stderr=self.err, stdin=subprocess.DEVNULL)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def status(self):
        rc = self.proc.poll()
        if rc is None:
            return "running"
        if rc < 0:
            return f"killed by signal {signal.Signals(-rc).name} ({-rc})"
        return f"exited with status {rc}"

    def tree(self):
        """tonearmd's pid and those of the processes it started (its engine's, the video window's,
        which the engine's starts), alive now; [] once tonearmd is gone."""
        try:
            return proctree.tree(self.proc.pid)
        except ProcessLookupError:
            return []

    def proc_status(self):
        """The /proc/PID/status fields that measure memory (KiB) and the thread count of tonearmd
        and the processes it started (summed: its engine's runs GStreamer), plus their number of
        open file descriptors: {'VmRSS':, 'RssAnon':, 'RssFile':, 'Threads':, 'fds':} or None when
        tonearmd is gone."""
        out = {}
        pids = self.tree()
        if not pids:
            return None
        for n, pid in enumerate(pids):
            try:
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        key, _, rest = line.partition(":")
                        if key in ("VmRSS", "RssAnon", "RssFile", "RssShmem", "VmHWM", "Threads"):
                            out[key] = out.get(key, 0) + int(rest.split()[0])
                out["fds"] = out.get("fds", 0) + len(os.listdir(f"/proc/{pid}/fd"))
            except (OSError, ValueError, IndexError):
                if n == 0:
                    return None  # tonearmd is gone; a started process that just ended counts nothing
        return out

    def rss_anon_kib(self):
        st = self.proc_status()
        return st.get("RssAnon") if st else None

    def anon_breakdown_kib(self):
        """Where tonearmd's private memory lives, from /proc/PID/smaps: resident anonymous KiB of
        the main heap, of thread stacks (glibc keeps a dead thread's stack, touched pages and all,
        for the next thread: nptl's stack cache), of the malloc arena other threads use, of the
        pages written in mapped libraries (relocations, .data), and of the rest; a dict by those
        names, or None when tonearmd is gone. The processes it started count with it."""
        out = {"heap": 0, "stacks": 0, "arenas": 0, "libraries": 0, "other": 0}
        text = ""
        pids = self.tree()
        if not pids:
            return None
        for n, pid in enumerate(pids):
            try:
                with open(f"/proc/{pid}/smaps") as f:
                    text += f.read()
            except OSError:
                if n == 0:
                    return None
        # each mapping: a header line, then "Key: value kB" lines
        for block in re.split(r"\n(?=[0-9a-f]+-[0-9a-f]+ )", text):
            head, _, body = block.partition("\n")
            fields = head.split()
            if len(fields) < 5:
                continue
            name = fields[5] if len(fields) > 5 else ""
            m = re.search(r"^Anonymous:\s+(\d+) kB", body, re.M)
            anon = int(m.group(1)) if m else 0
            if name.startswith("/"):
                out["libraries"] += anon  # written pages of a file mapping: relocations, .data, .bss
                continue
            if name and name not in ("[heap]", "[stack]"):
                out["other"] += anon
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            size_kib = (end - start) // 1024
            if name == "[heap]":
                out["heap"] += anon
            elif name == "[stack]" or 8000 <= size_kib <= 8200:
                out["stacks"] += anon     # 8 MiB: the default thread stack size (ulimit -s)
            elif start % (64 << 20) == 0:
                out["arenas"] += anon     # a non-main arena's heap: aligned to glibc's HEAP_MAX_SIZE
            else:
                out["other"] += anon
        return out

    def malloc_info(self, path):
        """glibc's own account of tonearmd's malloc heaps (malloc_info(3), XML, written to `path`
        through gdb), summarised per heap as {nr: (system KiB, free KiB)}: memory malloc holds from
        the system and how much of it sits in free chunks. Free chunks that stay after malloc_trim
        are fragmentation; the rest is live. None without gdb or when tonearmd is gone."""
        if not shutil.which("gdb") or not self.alive():
            return None
        # libc has no debug info here: gdb wants each call cast to its return type
        commands = [f'set $f = (void *) fopen("{path}", "w")', "call (int) malloc_info(0, $f)", "call (int) fclose($f)"]
        try:
            subprocess.run(["gdb", "-p", str(self.proc.pid), "-batch", "-nx"] + sum((["-ex", c] for c in commands), []),
                           capture_output=True, timeout=120)
            with open(path) as f:
                text = f.read()
        except (OSError, subprocess.TimeoutExpired):
            return None
        out = {}
        for nr, body in re.findall(r'<heap nr="(\d+)">(.*?)</heap>', text, re.S):
            free = sum(int(x) for x in re.findall(r'<total type="(?:fast|rest)" count="\d+" size="(\d+)"', body))
            system = re.search(r'<system type="current" size="(\d+)"', body)
            out[int(nr)] = (int(system.group(1)) // 1024 if system else 0, free // 1024)
        return out

    def stop_tonearmd(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.err.close()

    def stop(self):
        self.stop_tonearmd()
        if self.bus and self.bus.poll() is None:
            self.bus.terminate()
            self.bus.wait()

    def backtrace(self, path):
        """All threads' stacks of a wedged tonearmd, with gdb when installed."""
        if not shutil.which("gdb") or not self.alive():
            return None
        try:
            out = subprocess.run(["gdb", "-p", str(self.proc.pid), "-batch", "-ex", "thread apply all bt 60"],
                                 capture_output=True, timeout=120).stdout
        except subprocess.TimeoutExpired:
            return None
        with open(path, "wb") as f:
            f.write(out)
        return path


def tail(path, n=40):
    try:
        with open(path, "rb") as f:
            lines = f.read().decode(errors="replace").splitlines()
        return "\n".join(lines[-n:])
    except OSError:
        return "(no stderr file)"


# --------------------------------------------------------------------------------------------
# A D-Bus client over jeepney: many calls in flight, replies matched by serial


class Client:
    def __init__(self, conn, on_signal=None):
        self.conn = conn
        self.pending = {}
        self.on_signal = on_signal
        self.closed = False
        self.task = asyncio.get_running_loop().create_task(self._receive())

    @classmethod
    async def open(cls, address, on_signal=None):
        conn = await asyncio.wait_for(open_dbus_connection(address), 10)
        return cls(conn, on_signal)

    @property
    def unique_name(self):
        return self.conn.unique_name

    def send(self, msg):
        """Write the call now (so calls leave in order) and return a future for its reply."""
        serial = next(self.conn.outgoing_serial)
        fut = asyncio.get_running_loop().create_future()
        if self.closed:
            fut.set_exception(EOFError("connection closed"))
            return fut
        self.pending[serial] = fut
        self.conn.writer.write(msg.serialise(serial))
        return fut

    async def call(self, msg, timeout=REPLY_TIMEOUT):
        fut = self.send(msg)
        await self.conn.writer.drain()
        return await asyncio.wait_for(fut, timeout)

    async def _receive(self):
        parser = self.conn.parser
        try:
            while True:
                msg = parser.get_next_message()
                if msg is None:
                    b = await self.conn.reader.read(256 * 1024)
                    if not b:
                        break
                    parser.add_data(b)
                    continue
                h = msg.header
                rs = h.fields.get(HeaderFields.reply_serial)
                if rs is not None and rs in self.pending:
                    fut = self.pending.pop(rs)
                    if not fut.done():
                        fut.set_result(msg)
                elif h.message_type == MessageType.signal and self.on_signal:
                    self.on_signal(msg)
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            self.closed = True
            for fut in self.pending.values():
                if not fut.done():
                    fut.set_exception(EOFError("connection closed"))
            self.pending.clear()

    async def close(self):
        self.task.cancel()
        self.conn.writer.close()


class RawClient:
    """A blocking connection that times a call until its reply's last byte arrived, then parses it."""

    def __init__(self, address):
        self.conn = open_blocking_connection(address)
        self.sock = self.conn.sock
        self.buffer = b""
        self.serial = 1 << 20
        self.sent_at = None  # perf_counter time the last call was sent

    def call(self, msg, on_signal=None, timeout=60):
        """Sends MSG and returns (seconds until its reply's last byte, the reply). A signal read
        meanwhile goes to ON_SIGNAL(perf_counter time of its arrival, message) when given, else
        is skipped (such as NameAcquired), and so is a late reply to an earlier call. Raises
        TimeoutError when no reply came within TIMEOUT seconds (a peer that took its name and
        never answered a Get held make bench for good)."""
        self.serial += 1
        serial = self.serial
        data = msg.serialise(serial)
        start = self.sent_at = time.perf_counter()
        self.sock.sendall(data)
        self.sock.settimeout(timeout)
        try:
            while True:
                try:
                    raw = self._next_raw()
                except socket.timeout:
                    raise TimeoutError(f"no reply within {timeout} s") from None
                if raw[1] in (2, 3):  # METHOD_RETURN, ERROR
                    elapsed = time.perf_counter() - start
                    reply = self._parse(raw)
                    if reply.header.fields.get(HeaderFields.reply_serial) != serial:
                        continue
                    return elapsed, reply
                if raw[1] == 4 and on_signal is not None:
                    on_signal(time.perf_counter(), self._parse(raw))
        finally:
            self.sock.settimeout(None)

    def next_signal(self, predicate, timeout):
        """(perf_counter time of arrival, message) of the next signal PREDICATE accepts; other
        messages are skipped. Raises TimeoutError after TIMEOUT seconds."""
        deadline = time.monotonic() + timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("no matching signal")
                self.sock.settimeout(left)
                try:
                    raw = self._next_raw()
                except socket.timeout:
                    raise TimeoutError("no matching signal") from None
                if raw[1] == 4:
                    arrived, msg = time.perf_counter(), self._parse(raw)
                    if predicate(msg):
                        return arrived, msg
        finally:
            self.sock.settimeout(None)

    @staticmethod
    def _parse(raw):
        parser = Parser()
        parser.add_data(raw)
        return parser.get_next_message()

    def _next_raw(self):
        """The bytes of the next whole message: its length is in the fixed 16-byte header (body
        length at 4, header-field array length at 12, fields padded to 8: D-Bus specification,
        "Message Format")."""
        while True:
            if len(self.buffer) >= 16:
                order = "<" if self.buffer[:1] == b"l" else ">"
                body, _, fields = struct.unpack(order + "III", self.buffer[4:16])
                total = 16 + fields + (-fields % 8) + body
                if len(self.buffer) >= total:
                    raw, self.buffer = self.buffer[:total], self.buffer[total:]
                    return raw
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError("tonearmd closed the connection")
            self.buffer += chunk

    def close(self):
        self.conn.close()



async def wait_for_owner(client, svc, tag="fuzz", timeout=15):
    """The unique name that owns org.mpris.MediaPlayer2.tonearm, once tonearmd has taken it: it
    subscribes to NameOwnerChanged first, then asks, so the moment cannot slip between the two
    (subscribe, then act), and waits for the signal, not on a timer."""
    owned = asyncio.get_running_loop().create_future()

    def on_signal(msg):
        if (msg.header.fields.get(HeaderFields.member) == "NameOwnerChanged" and len(msg.body) == 3
                and msg.body[0] == NAME and msg.body[2] and not owned.done()):
            owned.set_result(msg.body[2])

    watcher = await Client.open(svc.address, on_signal)
    try:
        await add_match(watcher, f"type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='{NAME}'")
        r = await client.call(new_method_call(BUS, "GetNameOwner", "s", (NAME,)), 5)
        if r.header.message_type == MessageType.method_return:
            return r.body[0]
        try:
            return await asyncio.wait_for(owned, timeout)
        except asyncio.TimeoutError:
            raise SystemExit(f"{tag}: tonearmd did not take {NAME}: {svc.status()}\n" + tail(svc.stderr_path))
    finally:
        await watcher.close()


async def add_match(client, rule):
    await client.call(new_method_call(BUS, "AddMatch", "s", (rule,)), 5)


def reply_kind(msg):
    if msg.header.message_type == MessageType.method_return:
        return "return"
    if msg.header.message_type == MessageType.error:
        return msg.header.fields.get(HeaderFields.error_name, "error")
    return str(msg.header.message_type)


def call_msg(dest, path, iface, member, sig, body):
    addr = DBusAddress(path, bus_name=dest, interface=iface)
    return new_method_call(addr, member, sig or None, tuple(body))


def print_verdict(tag, total, failed, stderr_path, tail_lines=30):
    """The closing lines of a run: where tonearmd's stderr is, its tail when a check failed, and
    the plain summary line `TAG: N passed, M failed`."""
    print(f"tonearmd stderr: {stderr_path}")
    if failed:
        print("tonearmd stderr (tail):")
        print("  " + tail(stderr_path, tail_lines).replace("\n", "\n  "))
    print(f"{tag}: {total - failed} passed, {failed} failed", flush=True)


def percentile(values, p):
    """The p-th percentile of values, interpolated between the two nearest ranks; NaN for none."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)
