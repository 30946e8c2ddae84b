#!/usr/bin/python3
"""The queue at scale: what TrackList calls cost with 10 and with 10,000 items queued, what a
queued item costs in memory, and the CPU a 10,000-file Enqueue costs until tonearmd is idle again.

Starts a private dbus-daemon and one tonearmd on it (silent real-time sink, nothing playing: the
player stays stopped, so only the queue is measured), generates one tiny tagged FLAC file with
gst-launch-1.0, embeds a 32 KiB cover in it, and hard-links it under N names in one folder. Then,
in this order:

  1. Enqueue(folder, false) of the N files into the empty queue; Peer.Ping is sent again and
     again on a second connection until the Enqueue reply comes (the serving queue must keep
     answering while the folder is walked); then the CPU tonearmd used from the Enqueue until
     it is idle again (less than 1% of a core over 3 s), and the wall time that took;
  2. the tags of --reads items: GetTracksMetadata of their ids (100 a call), then the CPU
     tonearmd used until idle again, per item read;
  3. at N items: Get(Tracks), GetTracksMetadata of 100 ids (a different window of those read in
     step 2 each call, so that no tag read runs meanwhile), then in turn AddTrack (after the
     middle track), RemoveTrack (of the track just added, its id from TrackAdded), GoTo and Ping
     (the floor of these three, taken in the same conditions);
  4. RssAnon per queued item: (RssAnon at N items - RssAnon after Clear) / N, both once
     tonearmd is idle;
  5. Clear, Enqueue of 10 files, and AddTrack, RemoveTrack, GoTo, Ping again at 10 items.

With --compare-readers, step 2 runs again on a fresh tonearmd that reads tags with GstDiscoverer
(TONEARM_TAG_READER=discoverer), the reader tonearmd used before the tag-only pipeline.

Every latency is one call's round trip on a connection of its own: from writing the call until
the last byte of its reply has arrived, before this client parses it (jeepney, in Python, takes
tens of milliseconds to parse 10,000 object paths that a libdbus client reads in well under one).
Ping on the same connection is printed as the floor the others stand on. tonearmd's CPU and
RssAnon are its whole process tree's (Benchmarks/proctree.py: tonearm-engine's count too). The
last lines are a table; --json writes the figures too.

  Benchmarks/queue.py [--tonearmd .build/release/tonearmd] [--items 10000] [--calls 300] [--reads 1000]
                      [--compare-readers] [--json FILE] [--echo Benchmarks/floor/echo built]

With --echo, Get(Tracks) is also asked, call by call beside tonearmd's, of a minimal libdbus
service that answers it with as many paths from memory (Benchmarks/floor/echo.c): the floor of
that figure on the same bus.

Needs python3-jeepney (Debian), dbus-daemon and gst-launch-1.0. Build first:
  swift build -c release --product tonearmd
"""

import os
import sys

# this file is named queue.py, and the script's folder comes first on sys.path: without this,
# the standard library's `queue` (which concurrent.futures imports) would be this file
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]
sys.path.append(HERE)  # last, after the standard library's: for proctree.py, never in place of `queue`

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import struct  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "Tests", "PySupport"))
from tonearm_testkit import (  # noqa: E402
    EXT, OBJ, PEER, PROPS, TRACKLIST, Client, RawClient, Service, add_match, call_msg, file_uri, render_tones,
    reply_kind, tail, wait_for_owner, percentile)
from jeepney import HeaderFields  # noqa: E402
from proctree import cpu_seconds, memory_kib  # noqa: E402

REPO = os.path.normpath(os.path.join(HERE, ".."))
ECHO_NAME = "io.github.tonearm.BenchEcho"


def log(msg):
    print(f"[queue] {msg}", flush=True)



def summary(samples):
    """Milliseconds: median and p95 of seconds."""
    return {"median_ms": statistics.median(samples) * 1e3, "p95_ms": percentile(samples, 95) * 1e3,
            "calls": len(samples)}


def insert_flac_picture(path, image, media_type="image/png"):
    """Puts IMAGE in a PICTURE block (type 3, front cover) after the STREAMINFO of the FLAC file
    at PATH (FLAC format specification, METADATA_BLOCK_PICTURE)."""
    with open(path, "rb") as f:
        data = bytearray(f.read())
    if data[:4] != b"fLaC":
        raise SystemExit(f"queue: {path} is not FLAC")
    mime = media_type.encode()
    picture = (struct.pack(">II", 3, len(mime)) + mime + struct.pack(">I", 0)
               + struct.pack(">IIIII", 64, 64, 24, 0, len(image)) + image)
    was_last = data[4] & 0x80
    data[4] &= 0x7F
    block = bytes([6 | was_last]) + len(picture).to_bytes(3, "big") + picture
    data[4 + 4 + 34:4 + 4 + 34] = block
    with open(path, "wb") as f:
        f.write(data)


def make_folder(workdir, count, cover_bytes):
    """COUNT hard links of one tiny tagged FLAC file with an embedded cover of COVER_BYTES in
    WORKDIR/media/big, named so that natural order is numeric order; returns the folder and the
    names in that order."""
    media = os.path.join(workdir, "media")
    big = os.path.join(media, "big")
    if os.path.isdir(media):
        shutil.rmtree(media)
    os.makedirs(big)
    os.makedirs(os.path.join(media, "album"))  # tonearmd's working directory (tonearm_testkit.Service)
    seed = os.path.join(media, "seed.flac")
    render_tones([dict(path=seed, enc="flacenc", rate=22050, ch=1, secs=0.2, freq=440,
                       tags='title=(string)\\"Benchmark tone\\",artist=(string)Tonearm,album=(string)Queue')],
                 tag="queue")
    if cover_bytes:
        # a PNG signature and then any bytes: GStreamer takes it for image/png by its signature
        image = b"\x89PNG\r\n\x1a\n" + bytes((i * 7919) & 0xFF for i in range(cover_bytes - 8))
        insert_flac_picture(seed, image)
    names = [f"track {i:05d}.flac" for i in range(1, count + 1)]
    for name in names:
        os.link(seed, os.path.join(big, name))
    return big, names


class Bench:
    def __init__(self, args, svc, folder, names):
        self.args, self.svc, self.folder, self.names = args, svc, folder, names
        self.uris = [file_uri(os.path.join(folder, n)) for n in names]
        self.figures = {}

    async def call(self, iface, member, sig="", body=(), client=None, timeout=120):
        msg = call_msg(self.dest, OBJ, iface, member, sig, body)
        reply = await (client or self.client).call(msg, timeout)
        if reply_kind(reply) != "return":
            raise SystemExit(f"queue: {iface}.{member} failed: {reply_kind(reply)} {reply.body}\n" + tail(self.svc.stderr_path))
        return reply.body

    async def timed(self, iface, member, sig="", body=()):
        seconds, reply = self.raw.call(call_msg(self.dest, OBJ, iface, member, sig, body))
        if reply_kind(reply) != "return":
            raise SystemExit(f"queue: {iface}.{member} failed: {reply_kind(reply)} {reply.body}\n" + tail(self.svc.stderr_path))
        return seconds, reply.body

    async def tracks(self):
        return (await self.call(PROPS, "Get", "ss", (TRACKLIST, "Tracks")))[0][1]

    async def wait_idle(self, since_cpu, limit):
        """Waits until tonearmd uses less than 1% of a core over 3 s; returns CPU seconds used since
        SINCE_CPU and whether it settled within LIMIT seconds."""
        pid = self.svc.proc.pid
        deadline = time.monotonic() + limit
        samples = [(time.monotonic(), cpu_seconds(pid))]
        while time.monotonic() < deadline:
            await asyncio.sleep(0.25)
            now, cpu = time.monotonic(), cpu_seconds(pid)
            samples.append((now, cpu))
            older = [s for s in samples if s[0] <= now - 3.0]
            if older and cpu - older[-1][1] < 0.03:
                return cpu - since_cpu, True
            samples = older[-1:] + [s for s in samples if s[0] > now - 3.0]
        return cpu_seconds(pid) - since_cpu, False

    async def edits(self, size):
        """AddTrack in the middle, RemoveTrack of what it added (its id from the TrackAdded signal,
        as a client learns it), GoTo, and Ping (the floor, in the same conditions), CALLS times
        each at SIZE items. The middle is past the
        current track's next three, whose tags tonearmd reads as they are about to play: no tag
        read runs meanwhile (step 2 measures them)."""
        add, remove, goto, ping = [], [], [], []
        tracks = await self.tracks()
        assert len(tracks) == size, f"{len(tracks)} tracks, expected {size}"
        middle = len(tracks) // 2
        targets = [tracks[len(tracks) // 3], tracks[2 * len(tracks) // 3], tracks[-1], tracks[0]]
        for i in range(self.args.calls):
            uri = self.uris[i % len(self.uris)]
            seconds, _ = await self.timed(TRACKLIST, "AddTrack", "sob", (uri, tracks[middle], False))
            add.append(seconds)
            metadata, after = await asyncio.wait_for(self.added.get(), 10)
            assert after == tracks[middle], f"TrackAdded after {after}, not {tracks[middle]}"
            seconds, _ = await self.timed(TRACKLIST, "RemoveTrack", "o", (metadata["mpris:trackid"][1],))
            remove.append(seconds)
            seconds, _ = await self.timed(TRACKLIST, "GoTo", "o", (targets[i % len(targets)],))
            goto.append(seconds)
            seconds, _ = await self.timed(PEER, "Ping")
            ping.append(seconds)
        return {"AddTrack": summary(add), "RemoveTrack": summary(remove), "GoTo": summary(goto), "Ping": summary(ping)}

    async def read_tags(self, ids):
        """CPU milliseconds per item to read the tags of the --reads items after the first 10
        (which were read as they were about to play), asked for with GetTracksMetadata."""
        wanted = ids[10:10 + self.args.reads]
        await self.wait_idle(0, self.args.settle_limit)
        log(f"reading the tags of {len(wanted)} items ({os.environ.get('TONEARM_TAG_READER', 'pipeline')})")
        cpu0 = cpu_seconds(self.svc.proc.pid)
        for first in range(0, len(wanted), 100):
            await self.call(TRACKLIST, "GetTracksMetadata", "ao", (wanted[first:first + 100],))
        cpu, _ = await self.wait_idle(cpu0, self.args.settle_limit)
        body = await self.call(TRACKLIST, "GetTracksMetadata", "ao", (wanted[-1:],))
        title = body[0][0].get("xesam:title", ("s", ""))[1]
        assert title == "Benchmark tone", f"the last item read has the title {title!r}"
        return cpu * 1e3 / len(wanted)

    async def ping_floor(self):
        samples = []
        for _ in range(self.args.calls):
            seconds, _ = await self.timed(PEER, "Ping")
            samples.append(seconds)
        return summary(samples)

    async def main(self):
        svc = self.svc
        svc.start_bus()
        svc.start_tonearmd()
        self.echo = None
        if self.args.echo:
            self.echo = subprocess.Popen([self.args.echo, ECHO_NAME, str(len(self.names))], stdin=subprocess.DEVNULL,
                                         env=dict(os.environ, DBUS_SESSION_BUS_ADDRESS=svc.address))
        self.added = asyncio.Queue()

        def on_signal(msg):
            if msg.header.fields.get(HeaderFields.member) == "TrackAdded":
                self.added.put_nowait(msg.body)
        self.client = await Client.open(svc.address, on_signal)
        pinger = await Client.open(svc.address)
        self.dest = await wait_for_owner(self.client, svc, "queue")
        await add_match(self.client, f"type='signal',interface='{TRACKLIST}',member='TrackAdded'")
        self.raw = RawClient(svc.address)
        n = len(self.names)
        f = self.figures
        f["items"] = n
        f["ping_floor"] = await self.ping_floor()
        # warm up what a queue needs once (plugins, the discoverer), then measure from idle
        await self.call(EXT, "Enqueue", "asb", (self.uris[:3], False))
        await self.call(EXT, "Clear")
        await self.wait_idle(0, 60)

        # 1. Enqueue of the whole folder, with Pings meanwhile
        log(f"Enqueue of a folder of {n} files")
        cpu0 = cpu_seconds(svc.proc.pid)
        start = time.perf_counter()
        enqueue = asyncio.ensure_future(self.call(EXT, "Enqueue", "asb", ([file_uri(self.folder)], False)))
        pings = []
        while not enqueue.done():
            t = time.perf_counter()
            await self.call(PEER, "Ping", client=pinger)
            pings.append(time.perf_counter() - t)
        ids = (await enqueue)[0]
        f["enqueue_reply_s"] = time.perf_counter() - start
        f["ping_during_enqueue"] = summary(pings) | {"max_ms": max(pings) * 1e3}
        assert len(ids) == n, f"Enqueue returned {len(ids)} ids"
        cpu, settled = await self.wait_idle(cpu0, self.args.settle_limit)
        f["enqueue_cpu_s"] = cpu
        f["enqueue_settled"] = settled
        f["enqueue_settle_wall_s"] = time.perf_counter() - start
        log(f"settled: {settled}, {cpu:.2f} s of CPU in {f['enqueue_settle_wall_s']:.1f} s")

        # 2. reading tags (before the reads of step 3, which ask for tags already read)
        f["tag_read_cpu_ms"] = await self.read_tags(ids)

        # 3. reads and edits at N
        log(f"reads at {n} items")
        samples, floor = [], []
        for _ in range(self.args.calls):
            seconds, body = await self.timed(PROPS, "Get", "ss", (TRACKLIST, "Tracks"))
            samples.append(seconds)
            if self.echo:  # the floor, call by call beside ours
                seconds, reply = self.raw.call(call_msg(ECHO_NAME, OBJ, PROPS, "Get", "ss", (TRACKLIST, "Tracks")))
                assert reply_kind(reply) == "return" and len(reply.body[0][1]) == n, "the echo floor's Tracks"
                floor.append(seconds)
        assert body[0][1] == ids, "Tracks differs from the ids Enqueue returned"
        f["get_tracks"] = summary(samples)
        if floor:
            f["get_tracks_echo"] = summary(floor)
        samples = []
        for i in range(self.args.calls):
            first = 10 + (i * 100) % max(min(self.args.reads, n - 10) - 100, 1)
            seconds, body = await self.timed(TRACKLIST, "GetTracksMetadata", "ao", (ids[first:first + 100],))
            samples.append(seconds)
            assert len(body[0]) == min(100, n), f"GetTracksMetadata gave {len(body[0])} entries"
        f["get_tracks_metadata_100"] = summary(samples)
        log(f"edits at {n} items")
        f[f"edits_{n}"] = await self.edits(n)

        # 4. memory per item
        await self.wait_idle(0, self.args.settle_limit)
        rss_full = memory_kib(svc.proc.pid)["RssAnon"]
        await self.call(EXT, "Clear")
        await self.wait_idle(0, 60)
        rss_empty = memory_kib(svc.proc.pid)["RssAnon"]
        f["rss_anon_full_kib"], f["rss_anon_empty_kib"] = rss_full, rss_empty
        f["rss_anon_per_item_bytes"] = (rss_full - rss_empty) * 1024 / n

        # 5. edits at 10
        small = self.args.small
        await self.call(EXT, "Enqueue", "asb", (self.uris[:small], False))
        await self.wait_idle(0, 60)
        log(f"edits at {small} items")
        f[f"edits_{small}"] = await self.edits(small)

        await self.client.close()
        await pinger.close()
        self.raw.close()
        if self.echo:
            self.echo.terminate()
            self.echo.wait()
        return f

    async def readers_only(self):
        """A fresh tonearmd: the folder queued, then only the tag reads of step 2."""
        svc = self.svc
        svc.start_bus()
        svc.start_tonearmd()
        self.client = await Client.open(svc.address)
        self.dest = await wait_for_owner(self.client, svc, "queue")
        ids = (await self.call(EXT, "Enqueue", "asb", ([file_uri(self.folder)], False)))[0]
        result = await self.read_tags(ids)
        await self.client.close()
        return result


def table(f, small):
    n = f["items"]
    rows = [("Ping, empty queue (the floor)", f["ping_floor"])]
    for member in ("Ping", "AddTrack", "RemoveTrack", "GoTo"):
        rows.append((f"{member} at {small}", f[f"edits_{small}"][member]))
        rows.append((f"{member} at {n}", f[f"edits_{n}"][member]))
    rows.append((f"GetTracksMetadata(100) at {n}", f["get_tracks_metadata_100"]))
    rows.append((f"Get(Tracks) at {n}", f["get_tracks"]))
    if "get_tracks_echo" in f:
        rows.append((f"Get(Tracks) at {n}, libdbus echo floor", f["get_tracks_echo"]))
    rows.append((f"Ping during Enqueue of {n}", f["ping_during_enqueue"]))
    lines = [f"{'call':<34} {'median ms':>10} {'p95 ms':>10}"]
    for name, s in rows:
        extra = f"   max {s['max_ms']:.2f} ms over {s['calls']} pings" if "max_ms" in s else ""
        lines.append(f"{name:<34} {s['median_ms']:>10.3f} {s['p95_ms']:>10.3f}{extra}")
    lines.append(f"Enqueue of a {n}-file folder: reply after {f['enqueue_reply_s']:.2f} s; "
                 f"{f['enqueue_cpu_s']:.2f} s of CPU until idle ({f['enqueue_settle_wall_s']:.1f} s wall"
                 f"{'' if f['enqueue_settled'] else ', NOT idle at the limit'})")
    lines.append(f"tags read: {f['tag_read_cpu_ms']:.2f} ms of CPU per item (tag-only pipeline)"
                 + (f", {f['tag_read_cpu_ms_discoverer']:.2f} ms with GstDiscoverer"
                    if "tag_read_cpu_ms_discoverer" in f else ""))
    lines.append(f"RssAnon per queued item: {f['rss_anon_per_item_bytes']:.0f} bytes "
                 f"({f['rss_anon_full_kib']} KiB at {n} items, {f['rss_anon_empty_kib']} KiB after Clear)")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tonearmd", default=os.path.join(REPO, ".build", "release", "tonearmd"))
    p.add_argument("--items", type=int, default=10000, help="the large queue (default 10000)")
    p.add_argument("--small", type=int, default=10, help="the small queue (default 10)")
    p.add_argument("--calls", type=int, default=300, help="timed calls per figure (default 300)")
    p.add_argument("--cover-bytes", type=int, default=32768, help="size of the cover the files embed (default 32768)")
    p.add_argument("--reads", type=int, default=1000, help="items whose tags are read in step 3 (default 1000)")
    p.add_argument("--compare-readers", action="store_true", help="also read them with GstDiscoverer")
    p.add_argument("--settle-limit", type=float, default=900, help="seconds to wait for tonearmd to be idle")
    p.add_argument("--pipeline", default="default")
    p.add_argument("--workdir", default=os.path.join(REPO, ".build", "bench-queue"))
    p.add_argument("--json", help="also write the figures here")
    p.add_argument("--echo", help="Benchmarks/floor/echo.c built: Get(Tracks) of as many paths from it, call by call "
                                  "beside tonearmd's, is the floor of that figure (bench.py passes it)")
    args = p.parse_args()
    if not os.access(args.tonearmd, os.X_OK):
        sys.exit(f"queue: no tonearmd at {args.tonearmd} (swift build -c release --product tonearmd)")
    os.makedirs(args.workdir, exist_ok=True)
    log(f"making {args.items} files")
    folder, names = make_folder(args.workdir, args.items, args.cover_bytes)
    svc = Service(args.workdir, args.tonearmd, args.pipeline, os.path.join(args.workdir, "tonearmd.err"), tag="queue")
    try:
        figures = asyncio.run(Bench(args, svc, folder, names).main())
    finally:
        svc.stop()
    if args.compare_readers:
        os.environ["TONEARM_TAG_READER"] = "discoverer"  # tonearmd inherits the environment
        svc = Service(args.workdir, args.tonearmd, args.pipeline, os.path.join(args.workdir, "tonearmd-discoverer.err"),
                      tag="queue")
        try:
            figures["tag_read_cpu_ms_discoverer"] = asyncio.run(Bench(args, svc, folder, names).readers_only())
        finally:
            svc.stop()
            del os.environ["TONEARM_TAG_READER"]
    figures["tonearmd"] = os.path.abspath(args.tonearmd)
    print(table(figures, args.small))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()
