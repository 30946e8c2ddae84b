#!/usr/bin/python3
"""Soak test for tonearmd: hours of ordinary use, watching that it neither grows nor wedges.

Starts a private dbus-daemon and one tonearmd on it (`fakesink sync=true`: silent, real time),
generates short tracks in several formats with gst-launch-1.0, and runs for DURATION a scripted mix of
concurrent clients that behave like people and widgets do:

  player   plays through a queue and lets the tracks end (gapless switches), refills the queue,
           presses Play again a few seconds after someone paused or stopped
  seeker   jumps (Seek), sets the position (SetPosition), drags a slider (a burst of SetPosition),
           SeekTo with a tolerance
  editor   AddTrack / RemoveTrack / Enqueue of a directory / GoTo, keeping the queue bounded
  keys     PlayPause, Next, Previous, Stop; Volume, Rate, LoopStatus, Shuffle; half of them the way
           `playerctl` does it, on a fresh connection per key press
  widget   GetAll once, then follows PropertiesChanged, reads Position every second and Metadata on
           a track change, re-reads GetAll now and then

Meanwhile it pings tonearmd (Peer.Ping, every second, on a connection of its own) and samples its
VmRSS, RssAnon, threads and open file descriptors from /proc. At the end it writes a plot (PNG) and
the samples (JSON) under .build/soak/, prints one PASS/FAIL line per check, a summary, and last
"soak: N passed, M failed"; the exit status is 1 on any failure.

  soak.py [--duration 1h] [--seed S] [--pipeline playbin3|playbin] [--tonearmd PATH]

Needs python3-jeepney, python3-matplotlib (Debian), dbus-daemon and gst-launch-1.0.
"""

import argparse
import asyncio
import json
import math
import os
import random
import re
import shutil
import statistics
import sys
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "PySupport"))
from tonearm_testkit import (  # noqa: E402  (the private bus, tonearmd, the client, the media)
    EXT, NOTRACK, OBJ, PEER, PLAYER, PROPS, REPLY_TIMEOUT, REPO, ROOT, TRACKLIST,
    Client, Service, add_match, call_msg, file_uri, print_verdict, percentile, render_tones, reply_kind, tail, wait_for_owner)
from jeepney import HeaderFields, MessageType  # noqa: E402

KiB_PER_MiB = 1024
PING_EVERY = 1.0        # s between two Pings
PING_LIMIT = 1.0        # s: a Ping slower than this is a failure ("answers within a second")
# Replies that are not the service's: the bus answers them when tonearmd did not (died, wedged).
NO_REPLY = {"timeout", "disconnected", "org.freedesktop.DBus.Error.NoReply",
            "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
            "org.freedesktop.DBus.Error.Disconnected"}


def log(msg):
    print(f"[soak] {msg}", flush=True)


def parse_duration(text):
    """'90', '90s', '2m', '1h', '1h30m' -> seconds."""
    t = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", t):
        return float(t)
    parts = re.findall(r"(\d+(?:\.\d+)?)([smh])", t)
    if not parts or "".join(n + u for n, u in parts) != t:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (use e.g. 90s, 2m, 1h, 1h30m)")
    return sum(float(n) * {"s": 1, "m": 60, "h": 3600}[u] for n, u in parts)


def fmt_duration(s):
    s = int(round(s))
    h, m, sec = s // 3600, s % 3600 // 60, s % 60
    return (f"{h}h" if h else "") + (f"{m}m" if m else "") + (f"{sec}s" if sec or s == 0 else "")


def lsq(xs, ys):
    """Least-squares line: (slope, intercept, standard error of the slope)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if n < 3 or sxx == 0:
        return 0.0, my, float("inf")
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    icpt = my - slope * mx
    res = sum((y - (icpt + slope * x)) ** 2 for x, y in zip(xs, ys))
    se = math.sqrt(res / (n - 2) / sxx)
    return slope, icpt, se



# --------------------------------------------------------------------------------------------
# Media: short tracks, several formats, tagged, so that track changes happen every few seconds


FORMATS = [  # extension, encoder (tags go through the muxer or the encoder's tag setter), rate, channels
    ("flac", "flacenc", 44100, 2),
    ("flac", "flacenc", 96000, 1),
    ("wav", "wavenc", 48000, 2),
    ("wav", "wavenc", 22050, 1),
    ("ogg", "vorbisenc ! oggmux", 44100, 2),
    ("ogg", "vorbisenc ! oggmux", 48000, 6),
    ("mp3", "lamemp3enc ! id3v2mux", 44100, 2),
    ("mp3", "lamemp3enc ! id3v2mux", 22050, 1),
    ("opus", "opusenc ! oggmux", 48000, 2),
    ("m4a", "avenc_aac ! mp4mux", 44100, 2),
]


def make_soak_media(rng, media_dir):
    """Loose tracks of 1.5-4 s in every format, and an album directory of six more for Enqueue.
    Returns (track URIs, album directory URI)."""
    if os.path.isdir(media_dir):
        shutil.rmtree(media_dir)
    album = os.path.join(media_dir, "album")
    os.makedirs(album)
    jobs, tracks = [], []

    def job(path, fmt, title, album_name, n):
        ext, enc, rate, ch = fmt
        tags = (f"title=(string)\\\"{title}\\\",artist=(string)\\\"Soak Tester\\\","
                f"album=(string)\\\"{album_name}\\\",track-number=(uint){n}")
        jobs.append(dict(path=path, enc=enc, rate=rate, ch=ch, secs=round(rng.uniform(1.5, 4.0), 2),
                         freq=rng.choice([220, 330, 440, 550, 660, 880]), tags=tags))

    for k, fmt in enumerate(FORMATS * 2):
        path = os.path.join(media_dir, f"tone {k + 1:02d}.{fmt[0]}")
        job(path, fmt, f"Tone {k + 1}", "Loose Tones", k + 1)
        tracks.append(path)
    for k in range(6):
        fmt = FORMATS[(k * 3) % len(FORMATS)]
        job(os.path.join(album, f"{k + 1:02d} side {k + 1}.{fmt[0]}"), fmt, f"Side {k + 1}", "Soak Album", k + 1)
    with open(os.path.join(album, "cover.txt"), "w") as f:
        f.write("not media\n")
    render_tones(jobs, "soak")
    return [file_uri(p) for p in tracks], file_uri(album)


# --------------------------------------------------------------------------------------------
# The run


def emitting_props(xml_dir):
    """(iface, property) pairs whose changes come as values in PropertiesChanged."""
    out = set()
    for fn in sorted(os.listdir(xml_dir)):
        if not fn.endswith(".xml"):
            continue
        for itf in ET.parse(os.path.join(xml_dir, fn)).getroot().iter("interface"):
            default = "true"
            for a in itf.findall("annotation"):
                if a.get("name") == "org.freedesktop.DBus.Property.EmitsChangedSignal":
                    default = a.get("value")
            for p in itf.findall("property"):
                mode = default
                for a in p.findall("annotation"):
                    if a.get("name") == "org.freedesktop.DBus.Property.EmitsChangedSignal":
                        mode = a.get("value")
                if mode == "true":
                    out.add((itf.get("name"), p.get("name")))
    return out


class Soak:
    def __init__(self, args, svc, tracks, album):
        self.args, self.svc = args, svc
        self.track_uris, self.album_uri = tracks, album
        self.stop = asyncio.Event()
        self.dead = None              # (t, status) when tonearmd died
        self.calls = 0
        self.by_client = {}
        self.kinds = {}
        self.errors = {}              # error name -> (count, first example)
        self.missing = []             # calls without a reply: (t, who, member, kind)
        self.latency = []             # ms of every call answered
        self.slowest = None           # (ms, who, what) of the slowest call answered
        self.pings = []               # (t, ms or None)
        self.slow_pings = []          # (t, ms or None)
        self.samples = []
        self.played_to_end = []       # t of each PlayedToEnd
        self.track_changes = []       # t of each change of mpris:trackid seen by the widget
        self.queue_len = 0
        self.position_in_signal = 0
        self.props_changed = 0
        self.widget_cache = {}
        self.notes = []
        self.final = {}
        self.elapsed = 0.0
        self.widget_client = None

    def now(self):
        return time.monotonic() - self.t0

    async def sleep(self, secs):
        """Sleeps, but returns at once (True) when the run is over."""
        try:
            await asyncio.wait_for(self.stop.wait(), secs)
        except asyncio.TimeoutError:
            pass
        return self.stop.is_set()

    async def call(self, who, client, iface, member, sig="", body=(), path=OBJ):
        """One call to tonearmd, counted; returns the reply (None if there was none)."""
        self.calls += 1
        self.by_client[who] = self.by_client.get(who, 0) + 1
        t = time.monotonic()
        msg = None
        try:
            msg = await client.call(call_msg(self.dest, path, iface, member, sig, body), REPLY_TIMEOUT)
            kind = reply_kind(msg)
        except asyncio.TimeoutError:
            kind = "timeout"
        except EOFError:
            kind = "disconnected"
        ms = (time.monotonic() - t) * 1000
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if kind in NO_REPLY:
            self.missing.append((round(self.now(), 1), who, f"{iface.rsplit('.', 1)[-1]}.{member}", kind))
            return None
        self.latency.append(ms)
        if self.slowest is None or ms > self.slowest[0]:
            self.slowest = (ms, who, f"{iface.rsplit('.', 1)[-1]}.{member}{tuple(body)!r:.60} at {self.now():.1f} s")
        if kind != "return":
            n, ex = self.errors.get(kind, (0, None))
            detail = msg.body[0] if msg.body and isinstance(msg.body[0], str) else ""
            self.errors[kind] = (n + 1, ex or f"{who}: {member}{tuple(body)!r:.80} -> {detail[:100]}")
        return msg

    async def get(self, who, client, iface, prop):
        r = await self.call(who, client, PROPS, "Get", "ss", (iface, prop))
        if r is None or r.header.message_type != MessageType.method_return:
            return None
        return r.body[0][1]

    async def set(self, who, client, iface, prop, sig, value):
        return await self.call(who, client, PROPS, "Set", "ssv", (iface, prop, (sig, value)))

    async def tracks(self, who, client):
        t = await self.get(who, client, TRACKLIST, "Tracks")
        if t is not None:
            self.queue_len = len(t)
        return t or []

    async def current(self, who, client):
        """(trackid, length in µs) of the current track, or (None, 0)."""
        md = await self.get(who, client, PLAYER, "Metadata")
        if not md or "mpris:trackid" not in md:
            return None, 0
        return md["mpris:trackid"][1], md.get("mpris:length", ("x", 0))[1]

    async def open_client(self, on_signal=None, rules=()):
        c = await Client.open(self.svc.address, on_signal)
        for rule in rules:
            await add_match(c, rule)
        return c

    def rule(self, iface, member=None):
        return (f"type='signal',sender='{self.dest}',path='{OBJ}',interface='{iface}'"
                + (f",member='{member}'" if member else ""))

    # the clients ----------------------------------------------------------------------------

    async def player(self, rng):
        """Plays through the queue and lets tracks end; refills it; presses Play again after a pause."""
        status = {"s": None, "since": time.monotonic()}

        def on_signal(msg):
            h = msg.header.fields
            if h.get(HeaderFields.member) == "PlayedToEnd":
                self.played_to_end.append(self.now())
            elif h.get(HeaderFields.member) == "PropertiesChanged" and msg.body[0] == PLAYER:
                if "PlaybackStatus" in msg.body[1]:
                    status["s"] = msg.body[1]["PlaybackStatus"][1]
                    status["since"] = time.monotonic()

        c = await self.open_client(on_signal, [self.rule(EXT, "PlayedToEnd"), self.rule(PROPS, "PropertiesChanged")])
        me = "player"
        await self.call(me, c, EXT, "Enqueue", "asb", ([self.album_uri] + rng.sample(self.track_uris, 6), True))
        status["s"] = await self.get(me, c, PLAYER, "PlaybackStatus")
        while not await self.sleep(1.0):
            tracks = await self.tracks(me, c)
            tid, _ = await self.current(me, c)
            left = len(tracks) - 1 - tracks.index(tid) if tid in tracks else 0
            if left < 4 and len(tracks) < self.args.max_queue - 10:
                await self.call(me, c, EXT, "Enqueue", "asb",
                                (rng.sample(self.track_uris, rng.randint(3, 8)), not tracks))
            if status["s"] != "Playing" and time.monotonic() - status["since"] > rng.uniform(3, 6):
                await self.call(me, c, PLAYER, "Play")
                status["since"] = time.monotonic()
        await c.close()

    async def seeker(self, rng):
        """Jumps, sets the position, drags a slider, SeekTo with a tolerance."""
        c = await self.open_client()
        me = "seeker"
        while not await self.sleep(rng.uniform(2, 6)):
            tid, length = await self.current(me, c)
            k = rng.random()
            if k < 0.3:
                await self.call(me, c, PLAYER, "Seek", "x", (rng.choice([-10, -5, 5, 10]) * 100_000,))
            elif k < 0.6 and tid:
                await self.call(me, c, PLAYER, "SetPosition", "ox", (tid, int(length * rng.uniform(0, 0.9))))
            elif k < 0.85 and tid:   # a slider dragged: many positions, 50 ms apart, only the last matters
                start = rng.uniform(0, 0.5)
                for j in range(rng.randint(4, 12)):
                    await self.call(me, c, PLAYER, "SetPosition", "ox", (tid, int(length * min(0.95, start + j * 0.04))))
                    await asyncio.sleep(0.05)
            elif tid:
                await self.call(me, c, EXT, "SeekTo", "xxx",
                                (int(length * rng.uniform(0, 0.8)), rng.choice([0, 200_000]), rng.choice([0, 500_000])))
        await c.close()

    async def editor(self, rng):
        """AddTrack, RemoveTrack, Enqueue of a directory, GoTo; the queue stays bounded."""
        c = await self.open_client()
        me = "editor"
        target = self.args.queue_target
        while not await self.sleep(rng.uniform(1.0, 3.0)):
            tracks = await self.tracks(me, c)
            tid, _ = await self.current(me, c)
            others = [t for t in tracks if t != tid]
            n = len(tracks)
            if n > self.args.max_queue:      # the hard bound: clean up what has played
                played = tracks[:tracks.index(tid)] if tid in tracks else others
                for t in (played or others)[: n - target]:
                    await self.call(me, c, TRACKLIST, "RemoveTrack", "o", (t,))
                continue
            if self.now() < self.args.warmup * 0.7 and n < target:
                # fill the queue during the warm-up, so that a queue still growing (its items'
                # metadata) does not look like a leak in the judged part of the run
                await self.call(me, c, EXT, "Enqueue", "asb",
                                ([self.album_uri] + rng.sample(self.track_uris, 3), False))
                continue
            played = tracks[:tracks.index(tid)] if tid in tracks else []
            k = rng.random()
            # near the target the steps balance (+1, +6, -1.5 on average, weighted to about 0);
            # below it the editor adds, above it removes; the player's refills come on top
            if n < target * 0.8:
                weights = (0.6, 0.3, 0.0)
            elif n > target * 1.2:
                weights = (0.05, 0.0, 0.85)
            else:
                weights = (0.30, 0.08, 0.52)
            if k < weights[0]:
                after = rng.choice(tracks) if tracks and rng.random() < 0.7 else NOTRACK
                await self.call(me, c, TRACKLIST, "AddTrack", "sob",
                                (rng.choice(self.track_uris), after, rng.random() < 0.03))
            elif k < weights[0] + weights[1]:
                await self.call(me, c, EXT, "Enqueue", "asb", ([self.album_uri], False))
            elif k < weights[0] + weights[1] + weights[2] and others:
                # mostly what has already played, sometimes anything
                pool = played if played and rng.random() < 0.7 else others
                for t in rng.sample(pool, min(len(pool), rng.randint(1, 2 if n <= target * 1.2 else 4))):
                    await self.call(me, c, TRACKLIST, "RemoveTrack", "o", (t,))
            elif tracks:
                await self.call(me, c, TRACKLIST, "GoTo", "o", (rng.choice(tracks),))
        await c.close()

    async def keys(self, rng):
        """Media keys and a settings panel; half the presses on a fresh connection, as playerctl does."""
        c = await self.open_client()
        me = "keys"
        loop_reset = None
        while not await self.sleep(rng.uniform(1.5, 5.0)):
            fresh = rng.random() < 0.5
            cc = await self.open_client() if fresh else c
            k = rng.random()
            if k < 0.22:
                await self.call(me, cc, PLAYER, "PlayPause")
            elif k < 0.42:
                await self.call(me, cc, PLAYER, "Next")
            elif k < 0.52:
                await self.call(me, cc, PLAYER, "Previous")
            elif k < 0.55:
                await self.call(me, cc, PLAYER, "Stop")
            elif k < 0.57:
                await self.call(me, cc, PLAYER, "Pause")
            elif k < 0.72:
                await self.set(me, cc, PLAYER, "Volume", "d", round(rng.uniform(0.1, 1.0), 2))
            elif k < 0.82:
                await self.set(me, cc, PLAYER, "Rate", "d", rng.choice([1.0, 1.0, 1.0, 0.75, 1.25, 1.5, 2.0, 0.5]))
            elif k < 0.90:
                v = rng.choice(["None", "Playlist", "Playlist", "Track"])
                await self.set(me, cc, PLAYER, "LoopStatus", "s", v)
                loop_reset = time.monotonic() + rng.uniform(5, 15) if v == "Track" else None
            else:
                await self.set(me, cc, PLAYER, "Shuffle", "b", rng.random() < 0.5)
            if loop_reset and time.monotonic() > loop_reset:   # a looping track is left again
                await self.set(me, cc, PLAYER, "LoopStatus", "s", "Playlist")
                loop_reset = None
            if fresh:
                await cc.close()
        await c.close()

    async def widget(self, rng):
        """A shell widget: GetAll, then believes PropertiesChanged; Position every second."""
        cache = self.widget_cache
        changed_track = asyncio.Event()

        def on_signal(msg):
            h = msg.header.fields
            if h.get(HeaderFields.member) != "PropertiesChanged":
                return
            iface, changed, invalidated = msg.body
            self.props_changed += 1
            if iface == PLAYER and "Position" in changed:
                self.position_in_signal += 1
            for p, (sig, v) in changed.items():
                if iface == PLAYER and p == "Metadata":
                    old = cache.get((PLAYER, "Metadata"), {}).get("mpris:trackid")
                    new = v.get("mpris:trackid")
                    if new and new != old:
                        self.track_changes.append(self.now())
                        changed_track.set()
                cache[(iface, p)] = v
            for p in invalidated:
                cache.pop((iface, p), None)

        c = await self.open_client(on_signal, [self.rule(PROPS, "PropertiesChanged")])
        me = "widget"

        async def get_all():
            for iface in (ROOT, PLAYER, EXT):
                r = await self.call(me, c, PROPS, "GetAll", "s", (iface,))
                if r is not None and r.header.message_type == MessageType.method_return:
                    for p, (sig, v) in r.body[0].items():
                        cache[(iface, p)] = v

        await get_all()
        last_all = time.monotonic()
        while not await self.sleep(1.0):
            await self.get(me, c, PLAYER, "Position")
            if changed_track.is_set():     # a new track: the widget shows its metadata and cover
                changed_track.clear()
                await self.get(me, c, PLAYER, "Metadata")
            if time.monotonic() - last_all > rng.uniform(8, 15):
                await self.call(me, c, PROPS, "GetAll", "s", (PLAYER,))
                last_all = time.monotonic()
        self.widget_client = c    # kept open: the final check compares its cache with GetAll

    # watching ---------------------------------------------------------------------------------

    async def pinger(self):
        c = await self.open_client()
        while not self.stop.is_set():
            t = time.monotonic()
            fut = c.send(call_msg(self.dest, OBJ, PEER, "Ping", "", ()))
            try:
                msg = await asyncio.wait_for(fut, REPLY_TIMEOUT)
                ms = (time.monotonic() - t) * 1000 if reply_kind(msg) == "return" else None
            except (asyncio.TimeoutError, EOFError):
                ms = None
            self.pings.append((round(self.now(), 2), ms))
            if ms is None or ms > PING_LIMIT * 1000:
                self.slow_pings.append((round(self.now(), 1), ms))
                log(f"Ping {'unanswered' if ms is None else f'took {ms:.0f} ms'} at {self.now():.0f} s")
            await self.sleep(max(0.0, PING_EVERY - (time.monotonic() - t)))
        await c.close()

    def sample(self):
        st = self.svc.proc_status()
        if st is None:
            return None
        s = dict(t=round(self.now(), 2), **st, queue=self.queue_len, calls=self.calls,
                 tracks_played=len(self.played_to_end))
        self.samples.append(s)
        return s

    async def sampler(self):
        last_log = 0
        while not self.stop.is_set():
            if not self.svc.alive():
                self.dead = (round(self.now(), 1), self.svc.status())
                log(f"tonearmd {self.dead[1]} at {self.dead[0]} s")
                self.stop.set()
                break
            s = self.sample()
            if s and time.monotonic() - last_log >= max(30, self.args.duration / 40):
                last_log = time.monotonic()
                log(f"{fmt_duration(s['t'])}/{fmt_duration(self.args.duration)}: RSS {s['VmRSS'] / 1024:.1f} MiB, "
                    f"RssAnon {s['RssAnon'] / 1024:.1f} MiB, {s['fds']} fds, {s['Threads']} threads, "
                    f"queue {s['queue']}, {s['tracks_played']} tracks played, {self.calls} calls")
            await self.sleep(self.args.interval)

    async def deadline(self):
        await self.sleep(self.args.duration)
        self.stop.set()

    async def watch_death(self):
        while not self.stop.is_set():
            if not self.svc.alive():
                self.dead = self.dead or (round(self.now(), 1), self.svc.status())
                self.stop.set()
            await self.sleep(0.1)

    async def main(self):
        boot = await Client.open(self.svc.address)
        self.dest = await wait_for_owner(boot, self.svc, "soak")
        await boot.close()
        self.t0 = time.monotonic()
        seed = self.args.seed
        users = {"player": self.player, "seeker": self.seeker, "editor": self.editor,
                 "keys": self.keys, "widget": self.widget}
        tasks = {name: asyncio.create_task(fn(random.Random(f"{seed}-{name}"))) for name, fn in users.items()}
        watch = [asyncio.create_task(x()) for x in (self.pinger, self.sampler, self.deadline, self.watch_death)]
        # the clients end their current step once the run is over (their calls still get answers)
        done, pending = await asyncio.wait(list(tasks.values()), timeout=self.args.duration + 2 * REPLY_TIMEOUT + 30)
        self.stop.set()
        for name, t in tasks.items():
            if t in pending:
                self.notes.append(f"client {name} did not finish its last step")
                t.cancel()
            elif t.exception() is not None and not self.dead:
                e = t.exception()
                self.notes.append(f"client {name} failed: {type(e).__name__}: {e}")
        await asyncio.gather(*watch, return_exceptions=True)
        self.elapsed = self.now()
        if self.svc.alive():
            self.sample()                 # the last sample, after the last call
        else:
            self.dead = self.dead or (round(self.now(), 1), self.svc.status())
        await self.final_checks()

    async def final_checks(self):
        if not self.svc.alive() or self.widget_client is None:
            return
        w = self.widget_client
        await asyncio.sleep(1.0)          # the last PropertiesChanged reach the widget
        stale = []
        checked = 0
        for iface in (ROOT, PLAYER, EXT):
            r = await self.call("final", w, PROPS, "GetAll", "s", (iface,))
            if r is None or r.header.message_type != MessageType.method_return:
                stale.append(f"GetAll({iface}) unanswered")
                continue
            for p, (sig, v) in r.body[0].items():
                if (iface, p) not in self.args.emitting:
                    continue
                checked += 1
                if self.widget_cache.get((iface, p)) != v:
                    stale.append(f"{iface.rsplit('.', 1)[-1]}.{p}: widget has {short(self.widget_cache.get((iface, p)))}, "
                                 f"GetAll says {short(v)}")
        self.final["stale"] = stale
        self.final["checked"] = checked
        await w.close()


def short(v, n=60):
    r = repr(v)
    return r if len(r) <= n else r[:n - 3] + "..."


# --------------------------------------------------------------------------------------------
# Verdict, plot, report


def analyse(soak, args):
    checks = []

    def check(ok, name, detail=""):
        checks.append((ok, name, detail))
        print(f"{'PASS' if ok else 'FAIL'}: {name}" + (f" -- {detail}" if detail else ""), flush=True)

    dur = args.duration
    warm = args.warmup
    samples = soak.samples
    after = [s for s in samples if s["t"] >= warm]
    res = {"warmup_s": warm}

    # alive, answering
    check(soak.dead is None and soak.svc.alive(), "tonearmd alive throughout",
          f"{soak.dead[1]} at {soak.dead[0]} s" if soak.dead else f"{soak.svc.status()} after {fmt_duration(soak.elapsed)}")
    answered = [ms for _, ms in soak.pings if ms is not None]
    worst = max(answered) if answered else float("nan")
    check(bool(soak.pings) and not soak.slow_pings, f"Peer.Ping answered within {PING_LIMIT:.0f} s throughout",
          f"{len(soak.pings)} Pings, 1 a second, slowest {worst:.1f} ms" if not soak.slow_pings else
          f"{len(soak.slow_pings)} of {len(soak.pings)} late or unanswered, first at {soak.slow_pings[0][0]} s "
          f"({'no answer' if soak.slow_pings[0][1] is None else f'{soak.slow_pings[0][1]:.0f} ms'})")
    check(not soak.missing and soak.calls > 0, "every call got a reply",
          f"{soak.calls} calls" if not soak.missing else
          f"{len(soak.missing)} of {soak.calls} without: " + ", ".join(f"{m[1]} {m[2]} at {m[0]} s ({m[3]})"
                                                                       for m in soak.missing[:6]))
    for note in soak.notes:
        check(False, "the clients ran to the end", note)

    # memory
    enough = len(after) >= 10
    if enough:
        xs = [s["t"] for s in after]
        slope, icpt, se = lsq(xs, [s["RssAnon"] for s in after])   # KiB per s
        growth_mib = slope * dur / KiB_PER_MiB
        res.update(rss_anon_slope_kib_min=slope * 60, rss_anon_slope_se_kib_min=se * 60, rss_anon_fit=[icpt, slope],
                   rss_anon_growth_mib=growth_mib)
        rslope, ricpt, _ = lsq(xs, [s["VmRSS"] for s in after])
        res.update(rss_slope_kib_min=rslope * 60, rss_fit=[ricpt, rslope])
        check(growth_mib <= args.max_growth,
              f"RssAnon does not grow: fitted growth over the run <= {args.max_growth:g} MiB",
              f"slope {slope * 60:+.1f} ± {se * 60:.1f} KiB/min over {fmt_duration(xs[-1] - xs[0])} after a "
              f"{fmt_duration(warm)} warm-up = {growth_mib:+.2f} MiB over {fmt_duration(dur)}"
              f" (VmRSS {rslope * 60:+.1f} KiB/min)")
        fslope, ficpt, fse = lsq(xs, [s["fds"] for s in after])
        fgrowth = fslope * dur
        res.update(fds_slope_per_min=fslope * 60, fds_fit=[ficpt, fslope], fds_growth=fgrowth)
        third = max(1, len(after) // 3)
        early, late = max(s["fds"] for s in after[:third]), max(s["fds"] for s in after[-third:])
        check(fgrowth <= args.max_fd_growth and late <= early + args.max_fd_growth,
              f"open fds do not trend upward: fitted growth over the run <= {args.max_fd_growth:g}, "
              f"and the last third's peak at most {args.max_fd_growth:g} above the first third's",
              f"slope {fslope * 60:+.3f} fds/min = {fgrowth:+.1f} over {fmt_duration(dur)}; peak {early} "
              f"in the first third after warm-up, {late} in the last")
    else:
        check(False, "RssAnon does not grow", f"only {len(after)} samples after the warm-up: too few to judge")
        check(False, "open fds do not trend upward", f"only {len(after)} samples after the warm-up")

    # the mix did what it is for
    minutes = max(soak.elapsed, 1) / 60
    played = len(soak.played_to_end)
    need = max(1, int(minutes))
    check(played >= need, "playback kept going: at least one track played to its end per minute",
          f"{played} tracks played to the end, {len(soak.track_changes)} track changes in {minutes:.1f} min")
    check(soak.position_in_signal == 0, "PropertiesChanged never carries Position",
          f"{soak.props_changed} PropertiesChanged received" if not soak.position_in_signal
          else f"{soak.position_in_signal} of {soak.props_changed} did")
    if soak.final.get("checked") is not None:
        stale = soak.final["stale"]
        check(not stale, "a widget that believes PropertiesChanged agrees with GetAll at the end",
              f"{soak.final['checked']} properties compared" if not stale else "; ".join(stale[:5]))
    return checks, res


def plot(soak, args, res, checks, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    S = soak.samples
    if not S:
        return None
    tm = [s["t"] / 60 for s in S]
    fig, axes = plt.subplots(4, 1, figsize=(12, 12), sharex=True,
                             gridspec_kw={"height_ratios": [3, 2, 1.6, 1.6]})
    failed = sum(not ok for ok, _, _ in checks)
    verdict = "PASS" if not failed else f"FAIL ({failed} check{'s' if failed > 1 else ''})"
    arena = os.environ.get("MALLOC_ARENA_MAX")
    fig.suptitle(f"tonearmd soak: {fmt_duration(soak.elapsed)}, {args.pipeline}, seed {args.seed}"
                 f"{f', MALLOC_ARENA_MAX={arena}' if arena else ''} — {verdict}", fontsize=14, fontweight="bold")
    wm = args.warmup / 60
    for ax in axes:
        ax.axvspan(0, wm, color="0.85", zorder=0)
        ax.grid(True, alpha=0.3)

    ax = axes[0]
    ax.plot(tm, [s["VmRSS"] / 1024 for s in S], color="tab:blue", lw=1.6, label="RSS (VmRSS)")
    ax.plot(tm, [s["RssAnon"] / 1024 for s in S], color="tab:red", lw=1.6, label="RssAnon (private heap)")
    if "rss_anon_fit" in res:
        i, sl = res["rss_anon_fit"]
        x0, x1 = args.warmup, soak.elapsed
        ax.plot([x0 / 60, x1 / 60], [(i + sl * x0) / 1024, (i + sl * x1) / 1024], "k--", lw=1.3,
                label=f"RssAnon fit: {res['rss_anon_slope_kib_min']:+.1f} KiB/min "
                      f"({res['rss_anon_growth_mib']:+.2f} MiB over the run; limit {args.max_growth:g})")
    ax.set_ylabel("MiB")
    ax.set_ylim(bottom=0)
    ax.legend(loc="lower right", fontsize=9)
    ax.set_title("memory", loc="left", fontsize=10)
    ax.text(wm / 2, 0.02, "warm-up\n(not judged)", transform=ax.get_xaxis_transform(), ha="center",
            va="bottom", fontsize=8, color="0.35")

    ax = axes[1]
    ax.plot(tm, [s["fds"] for s in S], color="tab:green", lw=1.4, label="open fds")
    if "fds_fit" in res:
        i, sl = res["fds_fit"]
        x0, x1 = args.warmup, soak.elapsed
        ax.plot([x0 / 60, x1 / 60], [i + sl * x0, i + sl * x1], "--", color="darkgreen", lw=1.2,
                label=f"fds fit: {res['fds_slope_per_min']:+.3f}/min")
    ax.set_ylabel("open fds", color="tab:green")
    ax.set_ylim(bottom=0)
    ax2 = ax.twinx()
    ax2.plot(tm, [s["Threads"] for s in S], color="tab:purple", lw=1.0, alpha=0.8, label="threads")
    ax2.set_ylabel("threads", color="tab:purple")
    ax2.set_ylim(bottom=0)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="lower right", fontsize=9)
    ax.set_title("file descriptors and threads", loc="left", fontsize=10)

    ax = axes[2]
    ax.plot(tm, [s["queue"] for s in S], color="tab:orange", lw=1.2, label="queue length")
    ax.set_ylabel("queue items", color="tab:orange")
    ax.set_ylim(bottom=0)
    ax3 = ax.twinx()
    ax3.plot(tm, [s["tracks_played"] for s in S], color="tab:brown", lw=1.2, label="tracks played to end (total)")
    ax3.set_ylabel("tracks played", color="tab:brown")
    ax3.set_ylim(bottom=0)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax3.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="upper left", fontsize=9)
    ax.set_title("what the clients did", loc="left", fontsize=10)

    ax = axes[3]
    pt = [t / 60 for t, ms in soak.pings if ms is not None]
    pm = [ms for _, ms in soak.pings if ms is not None]
    ax.scatter(pt, pm, s=4, color="tab:cyan", label="Peer.Ping round trip")
    lost = [t / 60 for t, ms in soak.pings if ms is None]
    if lost:
        ax.scatter(lost, [PING_LIMIT * 1000] * len(lost), marker="x", color="red", label="unanswered")
    ax.axhline(PING_LIMIT * 1000, color="red", lw=1, ls=":", label=f"limit {PING_LIMIT * 1000:.0f} ms")
    ax.set_yscale("log")
    # room below the fastest Pings for the legend, so that it hides none of them
    ax.set_ylim(min(0.05, min(pm, default=1) / 2) / 20, max(PING_LIMIT * 1000 * 3, max(pm, default=1) * 2))
    ax.set_ylabel("ms (log)")
    ax.set_xlabel("minutes since start")
    ax.legend(loc="lower right", fontsize=9, ncol=3)
    ax.set_title("responsiveness", loc="left", fontsize=10)
    ax.set_xlim(0, max(tm[-1], soak.elapsed / 60))

    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def summary(soak, args, res):
    el = max(soak.elapsed, 1e-9)
    S = soak.samples
    print(f"run: {fmt_duration(el)} on {args.pipeline}, seed {args.seed}, samples every {args.interval:g} s "
          f"({len(S)}), warm-up {fmt_duration(args.warmup)}, MALLOC_ARENA_MAX "
          f"{os.environ.get('MALLOC_ARENA_MAX', 'unset')}")
    print(f"calls: {soak.calls} ({soak.calls / el:.1f} calls/s): "
          + ", ".join(f"{k} {v}" for k, v in sorted(soak.by_client.items())))
    print("replies: " + ", ".join(f"{k} {v}" for k, v in sorted(soak.kinds.items(), key=lambda kv: -kv[1])))
    for name, (n, ex) in sorted(soak.errors.items(), key=lambda kv: -kv[1][0]):
        print(f"  {name} x{n}, e.g. {ex}")
    if soak.latency:
        print(f"call latency: p50 {percentile(soak.latency, 50):.2f} ms, p99 {percentile(soak.latency, 99):.2f} ms, "
              f"max {max(soak.latency):.1f} ms ({soak.slowest[1]}: {soak.slowest[2]})")
    at_end = sum(1 for t in soak.track_changes if any(0 <= t - p <= 1.0 for p in soak.played_to_end))
    print(f"tracks: {len(soak.played_to_end)} played to the end, {len(soak.track_changes)} track changes "
          f"({at_end} of them at the end of a track), {soak.props_changed} PropertiesChanged")
    if S:
        a = [s for s in S if s["t"] >= args.warmup] or S
        print(f"memory: RSS {S[0]['VmRSS'] / 1024:.1f} -> {S[-1]['VmRSS'] / 1024:.1f} MiB, RssAnon "
              f"{S[0]['RssAnon'] / 1024:.1f} -> {a[0]['RssAnon'] / 1024:.1f} (after warm-up) -> "
              f"{S[-1]['RssAnon'] / 1024:.1f} MiB (peak {max(s['RssAnon'] for s in S) / 1024:.1f})")
        if "rss_anon_slope_kib_min" in res:
            print(f"RssAnon slope after warm-up: {res['rss_anon_slope_kib_min']:+.1f} ± "
                  f"{res['rss_anon_slope_se_kib_min']:.1f} KiB/min (VmRSS {res['rss_slope_kib_min']:+.1f} KiB/min)")
        print(f"fds: {S[0]['fds']} -> {a[0]['fds']} (after warm-up) -> {S[-1]['fds']} (max {max(s['fds'] for s in S)}); "
              f"threads {S[0]['Threads']} -> {S[-1]['Threads']} (max {max(s['Threads'] for s in S)})")
    pm = [ms for _, ms in soak.pings if ms is not None]
    if pm:
        print(f"Ping latency: p50 {percentile(pm, 50):.2f} ms, p99 {percentile(pm, 99):.2f} ms, "
              f"max {max(pm):.1f} ms ({len(soak.pings)} Pings)")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=parse_duration, default=parse_duration(os.environ.get("DURATION") or "1h"),
                   help="how long to run: 90s, 2m, 1h, 1h30m (default 1h)")
    p.add_argument("--seed", type=int, default=int(os.environ["SEED"]) if os.environ.get("SEED") else None)
    p.add_argument("--pipeline", choices=["playbin3", "playbin"], default=os.environ.get("PIPELINE") or "default")
    p.add_argument("--tonearmd", default=os.environ.get("TONEARMD") or os.path.join(REPO, ".build/release/tonearmd"))
    p.add_argument("--interval", type=float, help="seconds between samples (default 5, less for short runs: "
                   "at least 40 samples)")
    p.add_argument("--max-growth", type=float, default=4.0,
                   help="MiB: the most RssAnon may grow over the run by its fitted slope (default 4)")
    p.add_argument("--max-fd-growth", type=float, default=3.0, help="fds: the same for open fds (default 3)")
    p.add_argument("--max-queue", type=int, default=200, help="the queue's hard bound (default 200)")
    p.add_argument("--queue-target", type=int, default=60, help="the length the editor keeps near (default 60)")
    p.add_argument("--xml", default=os.path.join(REPO, "dbus"))
    p.add_argument("--out", default=os.path.join(REPO, ".build/soak"), help="plot, samples and stderr go here")
    p.add_argument("--tmp", default=os.environ.get("TMPDIR", "/tmp"))
    p.add_argument("--keep", action="store_true", help="keep the temporary media and bus directory")
    args = p.parse_args()
    if args.duration < 30:
        sys.exit("soak: --duration must be at least 30s")
    args.seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
    args.interval = args.interval or min(5.0, max(0.5, args.duration / 40))
    args.warmup = max(30.0, 0.2 * args.duration)
    args.out = os.path.abspath(args.out)
    args.tonearmd = os.path.abspath(args.tonearmd)
    args.emitting = emitting_props(args.xml)
    if not os.access(args.tonearmd, os.X_OK):
        sys.exit(f"soak: no tonearmd at {args.tonearmd} (build it: swift build -c release --product tonearmd)")
    for tool in ("dbus-daemon", "gst-launch-1.0"):
        if not shutil.which(tool):
            sys.exit(f"soak: {tool} is missing")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        sys.exit("soak: python3-matplotlib is missing (apt-get install python3-matplotlib)")

    stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"   # two runs at once keep their files apart
    os.makedirs(args.out, exist_ok=True)
    work = os.path.join(args.tmp, f"tonearm-soak-{args.seed}-{os.getpid()}")
    os.makedirs(work, exist_ok=True)
    arena = os.environ.get("MALLOC_ARENA_MAX")
    print(f"soak: {fmt_duration(args.duration)} on {args.pipeline}, seed {args.seed}, a sample every "
          f"{args.interval:g} s, warm-up {fmt_duration(args.warmup)}; MALLOC_ARENA_MAX "
          f"{arena if arena else 'unset'}", flush=True)
    stderr_path = os.path.join(args.out, f"tonearmd-{stamp}.err")
    svc = Service(work, args.tonearmd, args.pipeline, stderr_path, tag="soak", cwd=work)
    try:
        t = time.monotonic()
        tracks, album = make_soak_media(random.Random(args.seed), os.path.join(work, "media"))
        log(f"{len(tracks) + 6} tracks generated in {time.monotonic() - t:.1f} s")
        svc.start_bus()
        svc.start_tonearmd()
        soak = Soak(args, svc, tracks, album)
        asyncio.run(soak.main())
        checks, res = analyse(soak, args)
        if soak.slow_pings and svc.alive():   # late Pings: where were its threads?
            bt = svc.backtrace(os.path.join(args.out, f"backtrace-{stamp}.txt"))
            if bt:
                print(f"tonearmd's threads (gdb): {bt}")
        if svc.alive():        # (a death is already the first failure)
            svc.stop_tonearmd()
            rc = svc.proc.returncode
            ok = rc == 0
            checks.append((ok, "tonearmd quits on SIGTERM with status 0", f"exit status {rc}"))
            print(f"{'PASS' if ok else 'FAIL'}: tonearmd quits on SIGTERM with status 0 -- exit status {rc}", flush=True)
    finally:
        svc.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    summary(soak, args, res)
    failed = sum(not ok for ok, _, _ in checks)
    data = {"seed": args.seed, "pipeline": args.pipeline, "duration_s": args.duration, "elapsed_s": soak.elapsed,
            "interval_s": args.interval, "warmup_s": args.warmup, "MALLOC_ARENA_MAX": arena,
            "thresholds": {"rss_anon_growth_mib": args.max_growth, "fd_growth": args.max_fd_growth,
                           "ping_s": PING_LIMIT},
            "calls": soak.calls, "calls_by_client": soak.by_client, "replies": soak.kinds,
            "missing_replies": soak.missing, "tracks_played": len(soak.played_to_end),
            "track_changes": len(soak.track_changes), "analysis": res,
            "checks": [{"ok": ok, "name": n, "detail": d} for ok, n, d in checks],
            "samples": soak.samples, "pings": soak.pings}
    json_path = os.path.join(args.out, f"soak-{stamp}.json")
    with open(json_path, "w") as f:
        json.dump(data, f, indent=1)
    png = plot(soak, args, res, checks, os.path.join(args.out, f"soak-{stamp}.png"))
    print(f"samples: {json_path}")
    print(f"plot: {png}")
    print_verdict("soak", len(checks), failed, stderr_path, tail_lines=20)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
