#!/usr/bin/python3
"""Hostile-client fuzzer for tonearmd's D-Bus surface.

Starts a private dbus-daemon and one tonearmd on it (silent real-time sink), generates media at run
time with gst-launch-1.0, and sends seeded, replayable calls generated from the introspection XML in
dbus/: well-typed calls with generated and extreme values, wrong signatures, Properties.Set with
every wrong variant type, unknown members/interfaces/paths, interleaved with valid transport calls
that make the pipeline churn. It keeps INFLIGHT calls outstanding and checks that the service
survives, does not wedge, answers every call, refuses wrong signatures, stays consistent and does
not grow its private memory. The last line is "fuzz: N passed, M failed".

  fuzz.py [--calls N] [--seed S] [--inflight K] [--pipeline playbin3|playbin] [--tonearmd PATH]
  fuzz.py --replay LOG       re-send exactly the calls of a log, run the same checks
  fuzz.py --minimize LOG     shrink a log that kills or wedges tonearmd (ddmin, bounded time)

Needs python3-jeepney (Debian), dbus-daemon and gst-launch-1.0.
"""

import argparse
import asyncio
import base64
import json
import math
import os
import random
import shutil
import statistics
import sys
import threading
import time
import xml.etree.ElementTree as ET
import zlib

# the private bus, tonearmd, the jeepney client and the media, shared with Tests/Soak/soak.py
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "PySupport"))
from tonearm_testkit import (  # noqa: E402
    EXT, INTRO, MiB, NOTRACK, OBJ, PEER, PLAYER, PROPS, REPLY_TIMEOUT, TRACK, TRACKLIST,
    Client, Service, add_match, call_msg, make_media, print_verdict, reply_kind, tail, wait_for_owner)
from jeepney import HeaderFields, MessageType  # noqa: E402
from jeepney.low_level import Endianness, parse_signature  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
I64_MIN, I64_MAX = -2**63, 2**63 - 1
WEDGE_TIMEOUT = 5.0
HEALTH_EVERY = 500


def log(msg):
    print(f"[fuzz] {msg}", flush=True)


# --------------------------------------------------------------------------------------------
# D-Bus signatures


def split_sig(sig):
    """Split a signature into its complete types."""
    out, i = [], 0
    while i < len(sig):
        j = _end_of_type(sig, i)
        out.append(sig[i:j])
        i = j
    return out


def _end_of_type(sig, i):
    c = sig[i]
    if c == "a":
        return _end_of_type(sig, i + 1)
    if c in "({":
        close = ")" if c == "(" else "}"
        depth, j = 0, i
        while True:
            if sig[j] in "({":
                depth += 1
            elif sig[j] in ")}":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
    return i + 1


BASIC = "ybnqiuxtdsog"
INT_RANGES = {"y": (0, 255), "n": (-2**15, 2**15 - 1), "q": (0, 2**16 - 1), "i": (-2**31, 2**31 - 1),
              "u": (0, 2**32 - 1), "x": (I64_MIN, I64_MAX), "t": (0, 2**64 - 1)}
# Wrong variant types offered to Properties.Set and to wrong-typed arguments.
TYPE_MENU = ["y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g", "v", "as", "ao", "ad",
             "ay", "a{sv}", "(ss)", "(b(oss))", "a(xx)", "aa{sv}", "(xx)", "a{ss}"]


# --------------------------------------------------------------------------------------------
# The interfaces, from dbus/*.xml plus the standard ones


class Spec:
    def __init__(self, xml_dir):
        self.methods = {}   # iface -> {member: in-signature}
        self.props = {}     # iface -> {name: (type, access)}
        for fn in sorted(os.listdir(xml_dir)):
            if not fn.endswith(".xml"):
                continue
            root = ET.parse(os.path.join(xml_dir, fn)).getroot()
            for itf in root.iter("interface"):
                name = itf.get("name")
                self.methods[name] = {
                    m.get("name"): "".join(a.get("type") for a in m.findall("arg")
                                           if a.get("direction", "in") == "in")
                    for m in itf.findall("method")}
                self.props[name] = {p.get("name"): (p.get("type"), p.get("access"))
                                    for p in itf.findall("property")}
        self.mpris_ifaces = sorted(self.props)
        self.methods[PROPS] = {"Get": "ss", "GetAll": "s", "Set": "ssv"}
        self.methods[INTRO] = {"Introspect": ""}
        self.methods[PEER] = {"Ping": "", "GetMachineId": ""}
        self.all_props = [(i, p, t, a) for i in sorted(self.props) for p, (t, a) in sorted(self.props[i].items())]
        self.all_methods = [(i, m, s) for i in sorted(self.methods) for m, s in sorted(self.methods[i].items())]


def short(x, n=160):
    r = repr(x)
    return r if len(r) <= n else r[:n - 20] + f"...<{len(r)} chars>"


def encode_body(sig, body):
    """The body's exact wire bytes (little endian), compressed: replays are byte for byte."""
    if not sig:
        return ""
    raw = parse_signature(list(f"({sig})")).serialise(tuple(body), 0, Endianness.little)
    return base64.b64encode(zlib.compress(raw, 6)).decode()


def decode_body(sig, data):
    if not sig:
        return ()
    raw = zlib.decompress(base64.b64decode(data))
    return parse_signature(list(f"({sig})")).parse_data(raw, 0, Endianness.little)[0]


# --------------------------------------------------------------------------------------------
# Call generation


class Call:
    __slots__ = ("i", "path", "iface", "member", "sig", "body", "cls", "effect", "wrong", "t",
                 "reply", "ms", "size")

    def __init__(self, path, iface, member, sig, body, cls, effect=None, wrong=None):
        self.path, self.iface, self.member, self.sig, self.body = path, iface, member, sig, list(body)
        self.cls, self.effect, self.wrong = cls, effect, wrong
        self.reply = None
        self.ms = None


class Generator:
    """Everything is drawn from one random.Random(seed)."""

    def __init__(self, rng, spec, valid_uris, broken_uris, dir_uris):
        self.rng, self.spec = rng, spec
        self.valid_uris, self.broken_uris, self.dir_uris = valid_uris, broken_uris, dir_uris
        self.only = None
        self.tracks = []           # last Tracks read
        self.current = None        # last mpris:trackid read
        self.max_track = 0
        # Properties.Set with every wrong variant type on every property (and the right type on
        # read-only ones), walked in a shuffled order so a run covers them all.
        self.set_matrix = [(i, p, t, a, w) for i, p, t, a in spec.all_props
                           for w in TYPE_MENU if w != t or a == "read"]
        rng.shuffle(self.set_matrix)
        self.set_next = 0
        self.strings = ["", " ", "None", "Track", "Playlist", "none", "track", "Playing", "a" * 300,
                        "org.mpris.MediaPlayer2.Player", "Volume", "Rate", "\u00e9t\u00e9", "\U0001f3b5",
                        "\u202e", "\ufeff", "%00", "file://", ".", "..", "\t\n\r", "$(reboot)", "%s%n%x",
                        "org.freedesktop.DBus.Error.Failed", "Alphabetical", "User"] + valid_uris + broken_uris

    # values ---------------------------------------------------------------------------------

    def big_string(self):
        r = self.rng
        # never a path that resolves to a real directory outside the media (Enqueue walks directories)
        pat = r.choice(["a", "\u2603", "file:///nonexistent", "x/../", "%FF", "\U0001f3b5x", "\u00e9"])
        s = pat * (MiB // len(pat.encode()))
        return r.choice([s, "file://" + s, s[:65536]])

    def track_path(self, extreme=False):
        r = self.rng
        if self.tracks and not extreme and r.random() < 0.6:
            return r.choice(self.tracks)
        n = r.choice([0, 1, 2, self.max_track, self.max_track + 1, 1000, 2**31, 2**32, 2**63 - 1, 2**64,
                      10**30, r.randint(0, 50)])
        return r.choice([TRACK + str(n), NOTRACK, "/", OBJ, "/io/github/tonearm/Track",
                         "/io/github/tonearm/Track/_1", "/io/github/tonearm/Track/" + "9" * 200,
                         "/org/mpris/MediaPlayer2/TrackList/NoTrack/x", "/" + "/".join(["a"] * 500)])

    def value(self, t, extreme=False, depth=0):
        r = self.rng
        c = t[0]
        if c in INT_RANGES:
            lo, hi = INT_RANGES[c]
            if extreme or r.random() < 0.2:
                return r.choice([lo, hi, 0, 1, max(lo, -1), hi // 2 + 1])
            return r.randint(max(lo, -10**7), min(hi, 10**7))
        if c == "b":
            return r.random() < 0.5
        if c == "d":
            if extreme or r.random() < 0.2:
                return r.choice([math.nan, math.inf, -math.inf, 0.0, -0.0, 1e308, -1e308, 5e-324, -1.0,
                                 0.2499999, 4.0000001, 1.0, 2.0**63, -2.0**63])
            return r.choice([r.uniform(0, 1), r.uniform(-5, 5), r.uniform(0.25, 4)])
        if c == "s":
            if extreme and r.random() < 0.3:
                return self.big_string()
            return r.choice(self.strings)
        if c == "o":
            return self.track_path(extreme)
        if c == "g":
            return r.choice(["", "s", "a{sv}", "v", "aaaaai", "(ii)", "ssv"])
        if c == "v":
            if depth == 0 and extreme and r.random() < 0.3:
                v = ("s", "deep")
                for _ in range(r.choice([2, 10, 30, 55])):
                    v = ("v", v)
                return v
            sig = self.random_type(depth + 1)
            return (sig, self.value(sig, extreme and r.random() < 0.3, depth + 1))
        if c == "a":
            inner = t[1:]
            n = 10000 if extreme and r.random() < 0.3 and depth == 0 else r.choice([0, 0, 1, 2, 3, 5])
            if inner == "y":
                return bytes(r.getrandbits(8) for _ in range(min(n, 64))) * max(1, n // 64)
            if inner[0] == "{":
                kt, vt = split_sig(inner[1:-1])
                return {self.value(kt, False, depth + 1): self.value(vt, False, depth + 1) for _ in range(n)}
            if n > 100:   # a large array of one repeated element: cheap to build, same on the wire
                e = self.value(inner, False, depth + 1)
                return [e] * n
            return [self.value(inner, False, depth + 1) for _ in range(n)]
        if c == "(":
            return tuple(self.value(f, False, depth + 1) for f in split_sig(t[1:-1]))
        raise ValueError(t)

    def random_type(self, depth=0):
        r = self.rng
        if depth >= 3 or r.random() < 0.6:
            return r.choice(BASIC)
        k = r.random()
        if k < 0.35:
            return "a" + self.random_type(depth + 1)
        if k < 0.55:
            return "a{" + r.choice(BASIC) + self.random_type(depth + 1) + "}"
        if k < 0.8:
            return "(" + "".join(self.random_type(depth + 1) for _ in range(r.randint(1, 3))) + ")"
        return "v"

    def values(self, sig, extreme=False):
        return [self.value(t, extreme) for t in split_sig(sig)]

    # calls ----------------------------------------------------------------------------------

    CLASSES = ["transport", "typed", "wrong-signature", "set-wrong", "unknown-property", "unknown-target",
               "harmless"]

    def next(self):
        r = self.rng
        if self.only:   # --only: a subset of the classes, equally likely
            k = r.choice(self.only)
            return {"transport": self.transport, "typed": lambda: self.typed(r.random() < 0.35),
                    "wrong-signature": self.wrong_signature, "set-wrong": self.set_wrong,
                    "unknown-property": self.unknown_property, "unknown-target": self.unknown_target,
                    "harmless": self.harmless}[k]()
        k = r.random()
        if k < 0.40:
            return self.transport()
        if k < 0.58:
            return self.typed(extreme=r.random() < 0.35)
        if k < 0.72:
            return self.wrong_signature()
        if k < 0.83:
            return self.set_wrong()
        if k < 0.89:
            return self.unknown_property()
        if k < 0.95:
            return self.unknown_target()
        return self.harmless()

    def transport(self):
        r = self.rng
        uri = lambda: r.choice(self.valid_uris) if r.random() < 0.65 else r.choice(self.broken_uris + self.dir_uris)
        ops = ["OpenUri", "AddTrack", "GoTo", "Next", "Previous", "Seek", "SetPosition", "Rate", "Volume",
               "PlayPause", "Play", "Pause", "Stop", "Tracks", "Metadata", "SeekTo", "Enqueue", "Loop",
               "Shuffle", "Muted", "Remove", "Retry"]
        weights = [8, 6, 6, 6, 4, 8, 8, 6, 5, 5, 5, 4, 3, 8, 8, 3, 3, 2, 2, 2, 3, 1]
        if len(self.tracks) > 16:
            weights[ops.index("Remove")] = 40
        op = r.choices(ops, weights)[0]
        big = r.random() < 0.03
        pos = lambda: r.choice([I64_MAX, I64_MIN, I64_MAX // 1000]) if big else r.randint(0, 12_000_000)
        if op == "OpenUri":
            return Call(OBJ, PLAYER, "OpenUri", "s", [uri()], "transport")
        if op == "AddTrack":
            after = r.choice(self.tracks) if self.tracks and r.random() < 0.7 else NOTRACK
            return Call(OBJ, TRACKLIST, "AddTrack", "sob", [uri(), after, r.random() < 0.4], "transport")
        if op in ("GoTo", "Remove"):
            if not self.tracks:
                return Call(OBJ, PROPS, "Get", "ss", [TRACKLIST, "Tracks"], "transport")
            member = "GoTo" if op == "GoTo" else "RemoveTrack"
            return Call(OBJ, TRACKLIST, member, "o", [r.choice(self.tracks)], "transport")
        if op in ("Next", "Previous", "PlayPause", "Play", "Pause", "Stop"):
            return Call(OBJ, PLAYER, op, "", [], "transport")
        if op == "Seek":
            off = r.choice([I64_MAX, I64_MIN]) if big else r.randint(-8_000_000, 8_000_000)
            return Call(OBJ, PLAYER, "Seek", "x", [off], "transport")
        if op == "SetPosition":
            tid = self.current or (r.choice(self.tracks) if self.tracks else NOTRACK)
            return Call(OBJ, PLAYER, "SetPosition", "ox", [tid, pos()], "transport")
        if op == "SeekTo":
            return Call(OBJ, EXT, "SeekTo", "xxx", [pos(), r.choice([0, 0, 500_000, I64_MAX if big else 0]),
                                                    r.choice([0, 1_000_000])], "transport")
        if op == "Rate":
            v = r.choice([r.uniform(0.25, 4.0), 1.0, 0.5, 2.0, 4.0, 0.25, 0.0])
            return self.set_call(PLAYER, "Rate", ("d", v), "transport")
        if op == "Volume":
            return self.set_call(PLAYER, "Volume", ("d", r.choice([r.random(), 0.0, 1.0])), "transport")
        if op == "Loop":
            return self.set_call(PLAYER, "LoopStatus", ("s", r.choice(["None", "Track", "Playlist"])), "transport")
        if op == "Shuffle":
            return self.set_call(PLAYER, "Shuffle", ("b", r.random() < 0.5), "transport")
        if op == "Muted":
            return self.set_call(EXT, "Muted", ("b", r.random() < 0.3), "transport")
        if op == "Tracks":
            return Call(OBJ, PROPS, "Get", "ss", [TRACKLIST, "Tracks"], "transport")
        if op == "Metadata":
            return Call(OBJ, PROPS, "Get", "ss", [PLAYER, "Metadata"], "transport")
        if op == "Enqueue":
            uris = [uri() for _ in range(r.randint(1, 3))]
            if r.random() < 0.2:
                uris = [r.choice(self.dir_uris)]
            return Call(OBJ, EXT, "Enqueue", "asb", [uris, r.random() < 0.3], "transport")
        return Call(OBJ, EXT, "Retry", "", [], "transport")

    def set_call(self, iface, prop, variant, cls):
        t, a = self.spec.props[iface][prop]
        effect = [iface, prop, variant[1]] if variant[0] == t and a == "readwrite" else None
        wrong = None if variant[0] == t and a == "readwrite" else (
            "read-only" if a == "read" else f"variant {variant[0]} for {t}")
        return Call(OBJ, PROPS, "Set", "ssv", [iface, prop, variant], cls, effect=effect, wrong=wrong)

    def typed(self, extreme):
        """A call with the right signature and generated (possibly extreme) values."""
        r = self.rng
        if r.random() < 0.35:
            iface, prop, t, a = r.choice(self.spec.all_props)
            k = r.random()
            if k < 0.4:
                return Call(OBJ, PROPS, "Get", "ss", [iface, prop], "typed")
            if k < 0.55:
                return Call(OBJ, PROPS, "GetAll", "s", [iface], "typed")
            return self.set_call(iface, prop, (t, self.value(t, extreme)), "typed")
        iface, member, sig = r.choice(self.spec.all_methods)
        if member == "Quit" or iface == PROPS:
            iface, member, sig = PLAYER, "Seek", "x"
        return Call(OBJ, iface, member, sig, self.values(sig, extreme), "typed-extreme" if extreme else "typed")

    def wrong_signature(self):
        r = self.rng
        iface, member, sig = r.choice(self.spec.all_methods)
        types = split_sig(sig)
        for _ in range(20):
            k = r.random()
            new = list(types)
            if k < 0.3 and new:
                del new[r.randrange(len(new))]                       # a missing argument
            elif k < 0.6:
                new.insert(r.randint(0, len(new)), r.choice(TYPE_MENU))  # an extra argument
            elif k < 0.85 and new:
                new[r.randrange(len(new))] = r.choice(TYPE_MENU)    # a wrong-typed argument
            else:
                new = [self.random_type() for _ in range(r.randint(0, 4))]
            if "".join(new) != sig:
                break
        else:
            new = types + ["s"]
        nsig = "".join(new)
        return Call(OBJ, iface, member, nsig, self.values(nsig, r.random() < 0.1), "wrong-signature",
                    wrong=f"signature '{nsig}' for '{sig}'")

    def set_wrong(self):
        r = self.rng
        iface, prop, t, a, w = self.set_matrix[self.set_next % len(self.set_matrix)]
        self.set_next += 1
        return self.set_call(iface, prop, (w, self.value(w, r.random() < 0.1, depth=1)), "set-wrong")

    def unknown_property(self):
        r = self.rng
        iface = r.choice(self.spec.mpris_ifaces + ["org.example.Nope", "", "org.mpris.MediaPlayer2.player",
                                                  PROPS, PEER, "org.freedesktop.DBus"])
        k = r.random()
        if k < 0.4:
            return Call(OBJ, PROPS, "GetAll", "s", [iface], "unknown-property")
        prop = r.choice(["Nope", "", "volume", "Volume ", "Tracks", "Identity", "x" * 1000, "\u2603"])
        if k < 0.8:
            return Call(OBJ, PROPS, "Get", "ss", [iface, prop], "unknown-property")
        t = self.random_type()
        return Call(OBJ, PROPS, "Set", "ssv", [iface, prop, (t, self.value(t))], "unknown-property")

    def unknown_target(self):
        r = self.rng
        k = r.random()
        iface, member, sig = r.choice(self.spec.all_methods)
        if member == "Quit":
            member = "Raise"
        if k < 0.3:   # unknown member
            member = r.choice(["Nope", "play", "Play2", "QuitX", "Get" + "x" * 200, "_", "Seek0"])
        elif k < 0.55:  # unknown interface
            iface = r.choice(["org.example.Nope", "org.mpris.MediaPlayer2.Nope", "io.github.tonearm.Player2",
                              "org.freedesktop.DBus.Properties2", "a." + "b" * 200])
        elif k < 0.85:  # unknown object path
            path = r.choice(["/", "/org", "/org/mpris", "/org/mpris/MediaPlayer2/TrackList", "/io/github/tonearm",
                             TRACK + "1", NOTRACK, "/org/mpris/MediaPlayer2/" + "x/" * 100 + "y"])
            return Call(path, iface, member, sig, self.values(sig), "unknown-target")
        else:           # no interface field at all: dispatch by member name
            iface = None
            if member in ("Quit",):
                member = "Raise"
        return Call(OBJ, iface, member, sig, self.values(sig), "unknown-target")

    def harmless(self):
        r = self.rng
        return r.choice([Call(OBJ, PEER, "Ping", "", [], "harmless"),
                         Call(OBJ, PEER, "GetMachineId", "", [], "harmless"),
                         Call(OBJ, INTRO, "Introspect", "", [], "harmless"),
                         Call("/", INTRO, "Introspect", "", [], "harmless"),
                         Call(OBJ, PROPS, "GetAll", "s", [r.choice(self.spec.mpris_ifaces)], "harmless")])

    # what the replies teach ---------------------------------------------------------------------

    def learn(self, call, msg):
        if msg.header.message_type != MessageType.method_return:
            return
        if call.member == "Get" and call.iface == PROPS and len(call.body) == 2:
            if call.body == [TRACKLIST, "Tracks"] and msg.body and msg.body[0][0] == "ao":
                self.tracks = list(msg.body[0][1])
                self.note_ids(self.tracks)
            elif call.body == [PLAYER, "Metadata"] and msg.body and msg.body[0][0] == "a{sv}":
                tid = msg.body[0][1].get("mpris:trackid")
                self.current = tid[1] if tid else None
        elif call.member == "Enqueue" and msg.body and isinstance(msg.body[0], list):
            self.tracks += list(msg.body[0])
            self.note_ids(msg.body[0])

    def note_ids(self, ids):
        for p in ids:
            tail_ = p.rsplit("/", 1)[-1]
            if tail_.isdigit():
                self.max_track = max(self.max_track, int(tail_))


class ReplaySource:
    def __init__(self, calls):
        self.calls = calls
        self.k = 0

    def next(self):
        c = self.calls[self.k]
        self.k += 1
        return c

    def learn(self, call, msg):
        pass


def load_log(path):
    header, calls = None, []
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            if d.get("type") == "header":
                header = d
                continue
            if d.get("type") != "call":
                continue
            c = Call(d["path"], d["iface"], d["member"], d["sig"], decode_body(d["sig"], d["body"]), d["cls"],
                     effect=d.get("effect"), wrong=d.get("wrong"))
            c.i = d["i"]
            calls.append(c)
    calls.sort(key=lambda c: c.i)
    if header is None:
        raise SystemExit(f"fuzz: {path} has no header line")
    return header, calls


# --------------------------------------------------------------------------------------------
# The run


class TrackModel:
    """The track list as the service reported it in TrackList signals."""

    def __init__(self):
        self.ids, self.ever, self.signals = [], set(), 0

    def on_signal(self, msg):
        h = msg.header.fields
        if h.get(HeaderFields.interface) != TRACKLIST:
            return
        m, b = h.get(HeaderFields.member), msg.body
        self.signals += 1
        if m == "TrackListReplaced":
            self.ids = list(b[0])
        elif m == "TrackRemoved":
            if b[0] in self.ids:
                self.ids.remove(b[0])
        elif m == "TrackAdded":
            tid = b[0].get("mpris:trackid", ("o", None))[1]
            if tid is None:
                return
            after = b[1]
            if tid in self.ids:
                self.ids.remove(tid)
            if after == NOTRACK or after not in self.ids:
                self.ids.insert(0 if after == NOTRACK else len(self.ids), tid)
            else:
                self.ids.insert(self.ids.index(after) + 1, tid)
        self.ever.update(self.ids)


class Run:
    def __init__(self, args, service, source, total, logf, header):
        self.args, self.svc, self.source, self.total, self.logf = args, service, source, total, logf
        self.header = header
        self.calls = []
        self.kinds = {}
        self.checks = []       # (ok, name, detail)
        self.died = None
        self.wedged = None
        self.tracks = TrackModel()
        self.state = {}        # (iface, prop) -> (index, value) of the last accepted Set
        self.rss_start = self.rss_warm = self.rss_end = self.rss_rest = None
        self.engine_left = False
        self.anon_warm = self.anon_end = None
        self.malloc_warm = self.malloc_end = None
        self.ping_ms = None
        self.t0 = None
        self.last_reply = time.monotonic()
        self.checking = False

    def check(self, ok, name, detail=""):
        self.checks.append((ok, name, detail))
        print(f"{'PASS' if ok else 'FAIL'}: {name}" + (f" -- {detail}" if detail else ""), flush=True)

    async def connect(self):
        self.client = await Client.open(self.svc.address, self.tracks.on_signal)
        self.health = await Client.open(self.svc.address)
        self.dest = await wait_for_owner(self.health, self.svc, "fuzz")
        await add_match(self.client, f"type='signal',sender='{self.dest}',interface='{TRACKLIST}'")
        # before any call: reported beside the warm-up figure, so that what a first use of
        # GStreamer loads for good (plugins, their libraries, type classes) is seen apart
        await self.ping(10)  # answered after tonearmd's start-up turn (saved state, gst_init) ended
        self.rss_start = self.svc.rss_anon_kib()

    async def ping(self, timeout):
        t = time.monotonic()
        r = await asyncio.wait_for(self.health.call(call_msg(self.dest, OBJ, PEER, "Ping", "", []), timeout), timeout)
        if r.header.message_type != MessageType.method_return:
            raise RuntimeError(reply_kind(r))
        return (time.monotonic() - t) * 1000

    async def get(self, iface, prop=None, timeout=10):
        if prop is None:
            m = call_msg(self.dest, OBJ, PROPS, "GetAll", "s", [iface])
        else:
            m = call_msg(self.dest, OBJ, PROPS, "Get", "ss", [iface, prop])
        return await self.health.call(m, timeout)

    async def watch_process(self):
        """Notices a death at once (a thread waits on the process and wakes this task), and a
        wedge at its deadline: no reply for 5 s with calls outstanding -> Ping."""
        loop = asyncio.get_running_loop()
        died = asyncio.Event()
        proc = self.svc.proc
        def wait_then_wake():
            proc.wait()
            try:
                loop.call_soon_threadsafe(died.set)
            except RuntimeError:   # the run ended first and closed the loop: nobody to wake
                pass
        threading.Thread(target=wait_then_wake, daemon=True).start()
        while not died.is_set():
            deadline = self.last_reply + WEDGE_TIMEOUT - time.monotonic()
            try:
                await asyncio.wait_for(died.wait(), deadline if deadline > 0 else WEDGE_TIMEOUT)
                break
            except asyncio.TimeoutError:
                pass
            if (self.client.pending and time.monotonic() - self.last_reply > WEDGE_TIMEOUT
                    and self.wedged is None and not self.checking):
                self.checking = True
                await self.health_check()
                self.checking = False
        if self.died is None:
            self.died = (self.svc.status(), len(self.calls))

    def stopping(self):
        return bool(self.died or self.wedged or not self.svc.alive() or self.client.closed)

    async def health_check(self):
        try:
            await self.ping(WEDGE_TIMEOUT)
            return True
        except (asyncio.TimeoutError, RuntimeError, EOFError) as e:
            if self.svc.alive() and self.wedged is None:
                self.wedged = (len(self.calls), f"no reply to Peer.Ping within {WEDGE_TIMEOUT:.0f} s ({type(e).__name__} {e})")
            return False

    async def one(self, call, fut, sem):
        try:
            t = time.monotonic()
            try:
                msg = await asyncio.wait_for(fut, REPLY_TIMEOUT)
                self.last_reply = time.monotonic()
                call.reply = reply_kind(msg)
                self.source.learn(call, msg)
            except asyncio.TimeoutError:
                call.reply = "timeout"
            except EOFError:
                call.reply = "disconnected"
            call.ms = round((time.monotonic() - t) * 1000, 2)
            self.kinds[call.reply] = self.kinds.get(call.reply, 0) + 1
            if call.reply == "return" and call.effect:
                key = (call.effect[0], call.effect[1])
                if key not in self.state or self.state[key][0] < call.i:
                    self.state[key] = (call.i, call.effect[2])
            self.write(call)
        finally:
            sem.release()

    def write(self, call):
        if not self.logf:
            return
        d = {"type": "call", "i": call.i, "t": call.t, "path": call.path, "iface": call.iface,
             "member": call.member, "sig": call.sig, "args": short(call.body), "cls": call.cls,
             "reply": call.reply, "ms": call.ms, "body": encode_body(call.sig, call.body)}
        if call.effect:
            d["effect"] = call.effect
        if call.wrong:
            d["wrong"] = call.wrong
        self.logf.write(json.dumps(d, ensure_ascii=False) + "\n")

    async def quiesce(self, sem):
        for _ in range(self.args.inflight):
            await sem.acquire()
        for _ in range(self.args.inflight):
            sem.release()

    async def prime(self):
        """Opens each generated file, good and broken, once, before the warm-up measurement: what
        a first use loads for good (GStreamer plugins and the libraries they link: a file no
        typefinder knows makes typefinding load gst-libav for its own typefinders, 7 MiB of
        libraries' written pages) is then in the baseline instead of counted as growth whenever
        the random calls first happen to reach it."""
        uris = getattr(self.source, "valid_uris", []) + getattr(self.source, "broken_uris", [])
        for uri in uris:
            try:
                await self.health.call(call_msg(self.dest, OBJ, PLAYER, "OpenUri", "s", [uri]), 10)
            except Exception:
                pass  # a refusal is an answer too; what is measured is what loading it left
            await asyncio.sleep(0.3)

    def dispatch_workers(self):
        """How many of tonearmd's threads are libdispatch workers (named after their root queue,
        "com.apple.root.default-qos.overcommit", cut to 15 characters); None when it is gone."""
        try:
            tasks = os.listdir(f"/proc/{self.svc.proc.pid}/task")
        except OSError:
            return None
        n = 0
        for t in tasks:
            try:
                with open(f"/proc/{self.svc.proc.pid}/task/{t}/comm") as f:
                    n += f.read().strip().endswith("overcommit")
            except OSError:
                pass
        return n

    async def at_rest(self):
        """The memory of the service at rest, told beside the verdict (which is on the figure right
        after the run): the burst leaves a dozen libdispatch workers until they retire after 5 s
        without work (swift-corelibs-libdispatch src/queue.c, _dispatch_worker_thread), each with
        glibc's cache of freed small blocks when it is on (the systemd unit's environment, with
        which the fuzzer starts tonearmd, turns it off: packaging/tonearmd.service). Waits for that
        (at most 12 s), then empties the queue again, which makes tonearmd give freed pages back,
        and reads RssAnon."""
        deadline = time.monotonic() + 12
        while time.monotonic() < deadline and (self.dispatch_workers() or 0) > 1:
            await asyncio.sleep(0.5)
        self.workers_left = self.dispatch_workers()
        try:
            await self.settle()
        except Exception:
            return
        self.rss_rest = self.svc.rss_anon_kib()

    async def settle(self):
        """Stops and empties the queue (Stop, then our Clear) and lets the retired pipelines reach
        NULL, so that memory is measured on the same empty, stopped service each time: what a
        10,000-item queue holds is not a leak."""
        for iface, member in ((PLAYER, "Stop"), (EXT, "Clear")):
            await self.health.call(call_msg(self.dest, OBJ, iface, member, "", []), 10)
        # with nothing loaded, tonearmd ends its engine's process after 2 s, and the engine takes its
        # pipelines to NULL first (ARCHITECTURE.md, How it runs): wait for that, at most 12 s, or
        # the figure is GStreamer's at the end of its life (CI at cdeaae7 read RssAnon still while
        # the engine idled through its 2 s, and counted its 10 MiB as tonearmd's growth)
        deadline = time.monotonic() + 12
        while time.monotonic() < deadline and len(self.svc.tree()) > 1:
            await asyncio.sleep(0.1)
        self.engine_left = len(self.svc.tree()) > 1
        # then wait until RssAnon holds still (two readings 0.5 s apart within 64 KiB), at most
        # 6 s, so what is measured is the service at rest, not a teardown under way
        await asyncio.sleep(1.5)
        last = self.svc.rss_anon_kib()
        for _ in range(9):
            await asyncio.sleep(0.5)
            now = self.svc.rss_anon_kib()
            if last is None or now is None or abs(now - last) <= 64:
                break
            last = now

    async def main(self):
        await self.connect()
        watcher = asyncio.get_running_loop().create_task(self.watch_process())
        sem = asyncio.Semaphore(self.args.inflight)
        tasks = set()
        warmup = min(1000, max(1, self.total // 5))
        self.t0 = time.monotonic()
        last_report = self.t0
        for i in range(self.total):
            acquired = False
            while not acquired:   # wait for a free slot, but notice a death or a wedge meanwhile
                try:
                    await asyncio.wait_for(sem.acquire(), 0.5)
                    acquired = True
                except asyncio.TimeoutError:
                    if self.stopping():
                        break
            if not acquired:
                break
            if self.stopping():
                sem.release()
                break
            call = self.source.next()
            call.i, call.t = i, round(time.monotonic() - self.t0, 3)
            self.calls.append(call)
            # written here, in order: the service sees the calls in the order of the log
            fut = self.client.send(call_msg(self.dest, call.path, call.iface, call.member, call.sig, call.body))
            task = asyncio.get_running_loop().create_task(self.one(call, fut, sem))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            await self.client.conn.writer.drain()
            n = i + 1
            if n % HEALTH_EVERY == 0:
                if not await self.health_check():
                    break
            if n == warmup:
                await self.quiesce(sem)
                await self.prime()
                await self.settle()
                self.rss_warm = self.svc.rss_anon_kib()
                self.anon_warm = self.svc.anon_breakdown_kib()
                if self.args.malloc_info:
                    self.malloc_warm = self.svc.malloc_info(os.path.join(self.args.out, f"malloc-{self.header['seed']}-warm.xml"))
            if time.monotonic() - last_report > 10:
                last_report = time.monotonic()
                rate = n / (last_report - self.t0)
                log(f"{n}/{self.total} calls, {rate:.0f} calls/s, RssAnon {self.svc.rss_anon_kib()} KiB")
        if tasks:   # a dead or wedged service answers nothing more: do not wait out the timeouts
            await asyncio.wait(tasks, timeout=1.0 if self.stopping() else REPLY_TIMEOUT + 5)
        self.elapsed = time.monotonic() - self.t0
        if not self.died and not self.wedged:
            # a late death needs no wait: the process watcher reports it whenever it comes
            await self.health_check()
        if self.client.closed and self.svc.alive():
            self.check(False, "the fuzzer's connection stays up", "the bus dropped it (an invalid message?)")
        if self.died is None and not self.svc.alive():
            self.died = (self.svc.status(), len(self.calls))
        # calls that never got an answer (the service died or wedged) go to the log too
        for c in self.calls:
            if c.reply is None:
                c.reply = "none"
                self.write(c)
        watcher.cancel()
        if getattr(self.args, "minimizing", False):   # only death or wedge matters there
            return
        await self.final_checks(sem)

    async def final_checks(self, sem):
        a = self.args
        n = len(self.calls)
        if self.died:
            self.check(False, "tonearmd alive", f"{self.died[0]} after call {self.died[1]} of {self.total}")
            self.print_last_calls()
        else:
            self.check(self.svc.alive(), "tonearmd alive", self.svc.status())
        if self.wedged:
            bt = self.svc.backtrace(os.path.join(a.out, f"wedge-backtrace-{self.header['seed']}.txt"))
            self.check(False, "no wedge", f"after call {self.wedged[0]}: {self.wedged[1]}"
                       + (f"; threads' stacks in {bt}" if bt else ""))
            self.print_last_calls()
        elif not self.died:
            self.check(True, "no wedge", f"Peer.Ping answered within {WEDGE_TIMEOUT:.0f} s every {HEALTH_EVERY} calls and at the end")
        alive = self.svc.alive() and not self.wedged
        # Ping latency
        self.ping_ms = None
        if alive:
            lat = []
            try:
                for _ in range(20):
                    lat.append(await self.ping(5))
                self.ping_ms = statistics.median(lat)
                self.check(self.ping_ms < 10, "Ping answers within 10 ms at the end",
                           f"median of 20: {self.ping_ms:.2f} ms, max {max(lat):.2f} ms")
            except Exception as e:
                self.check(False, "Ping answers within 10 ms at the end", repr(e))
        else:
            self.check(False, "Ping answers within 10 ms at the end", "service dead or wedged")
        # GetAll consistency
        if alive:
            await self.consistency()
        else:
            self.check(False, "GetAll answers and is consistent", "service dead or wedged")
        # memory, on an emptied queue as at warm-up
        if alive:
            try:
                await self.settle()
            except Exception as e:
                self.check(False, "Stop and Clear answer before the memory is measured", repr(e))
        if alive:
            self.check(not self.engine_left, "the engine's process ends once nothing is loaded",
                       "still running 12 s after Stop and Clear" if self.engine_left
                       else "gone within 12 s of Stop and Clear, before the memory is measured")
        self.rss_end = self.svc.rss_anon_kib() if alive else None
        self.anon_end = self.svc.anon_breakdown_kib() if alive else None
        if alive and self.args.malloc_info:
            self.malloc_end = self.svc.malloc_info(os.path.join(self.args.out, f"malloc-{self.header['seed']}-end.xml"))
        if alive and not self.args.no_rest:
            await self.at_rest()
        if self.rss_warm is not None and self.rss_end is not None:
            grew = (self.rss_end - self.rss_warm) / 1024
            self.check(grew <= 5, "private memory within 5 MiB of warm-up",
                       f"RssAnon {self.rss_warm} KiB after warm-up, {self.rss_end} KiB at the end ({grew:+.1f} MiB)")
        else:
            self.check(False, "private memory within 5 MiB of warm-up",
                       f"not measured (warm-up {self.rss_warm}, end {self.rss_end})")
        # wrong signatures answered with success
        bad = [c for c in self.calls if c.reply == "return" and c.wrong and c.cls == "wrong-signature"]
        self.check(not bad, "no wrong-signature call answered with a method return",
                   f"{len(bad)} accepted: " + "; ".join(self.describe_group(bad)) if bad else "")
        badset = [c for c in self.calls if c.reply == "return" and c.wrong and c.cls != "wrong-signature"]
        self.check(not badset, "no Properties.Set of a wrong variant type or a read-only property accepted",
                   f"{len(badset)} accepted: " + "; ".join(self.describe_group(badset)) if badset else "")
        # calls cut off by a death are reported with the death; the rest must all be answered
        lost = ("timeout",) if self.died or self.wedged else ("timeout", "none", "disconnected")
        missing = [c for c in self.calls if c.reply in lost]
        self.check(not missing, "every call got a reply",
                   f"{len(missing)} without: " + ", ".join(f"#{c.i} {c.iface}.{c.member}({c.sig}) {c.reply}"
                                                            for c in missing[:8]) if missing else "")

    def describe_group(self, calls):
        groups = {}
        for c in calls:
            groups.setdefault((c.iface, c.member, c.wrong), []).append(c.i)
        return [f"{i}.{m} [{w}] x{len(ix)} (first #{ix[0]})" for (i, m, w), ix in sorted(groups.items(), key=str)][:12]

    async def consistency(self):
        spec = self.header["spec"]
        problems = []
        for iface in sorted(spec):
            r = await self.get(iface)
            if r.header.message_type != MessageType.method_return:
                problems.append(f"GetAll({iface}) -> {reply_kind(r)}")
                continue
            got = r.body[0]
            for prop, t in spec[iface].items():
                if prop not in got:
                    problems.append(f"{iface}.{prop} missing from GetAll")
                elif got[prop][0] != t:
                    problems.append(f"{iface}.{prop} has type {got[prop][0]}, XML says {t}")
            for (i, p), (idx, v) in sorted(self.state.items()):
                if i != iface or p not in got:
                    continue
                now = got[p][1]
                if p == "Volume":
                    # MPRIS allows more than 1.0; below 0 means 0
                    ok = math.isfinite(v) and any(abs(now - e) < 1e-6 for e in (v, min(max(v, 0.0), 1.0)))
                elif p == "Rate" or p == "Fullscreen":
                    continue  # a rate may be refused asynchronously; Fullscreen is not supported
                elif p in ("Equalizer", "EqualizerPreset"):
                    # each sets the other, and SaveEqualizerPreset/DeleteEqualizerPreset change the
                    # preset (docs/dbus.md): held to what they may be, not to the last Set
                    if p == "Equalizer":
                        ok = len(now) == 10 and all(math.isfinite(g) and -12 <= g <= 12 for g in now)
                    else:
                        presets = got.get("EqualizerPresets", (None, []))[1]
                        ok = now == "" or now in presets
                elif p == "Crossfade":
                    ok = abs(now - v) <= 0.0005  # kept to the millisecond (docs/dbus.md)
                elif p == "StopAfterCurrent":
                    ok = now == v or not now  # true clears itself when the current item ends
                else:
                    ok = now == v
                if not ok:
                    problems.append(f"{iface}.{p} is {now!r}, last accepted Set (call #{idx}) was {v!r}")
            if iface == TRACKLIST and "Tracks" in got:
                tracks = list(got["Tracks"][1])
                if tracks != self.tracks.ids:
                    problems.append(f"Tracks {tracks[:6]}{'...' if len(tracks) > 6 else ''} ({len(tracks)}) differs from "
                                    f"the TrackList signals' list {self.tracks.ids[:6]} ({len(self.tracks.ids)})")
        n_state = ", ".join(f"{p}={v!r}" for (i, p), (_, v) in sorted(self.state.items()) if p not in ("Rate",))
        self.check(not problems, "GetAll answers on every interface and is consistent with the accepted calls",
                   "; ".join(problems[:8]) if problems else f"{n_state}; {len(self.tracks.ids)} tracks")

    def print_last_calls(self, n=12):
        print(f"  last {n} calls sent:")
        for c in self.calls[-n:]:
            print(f"    #{c.i} {c.path} {c.iface}.{c.member}({c.sig}) {short(c.body, 100)} -> {c.reply} ({c.ms} ms)")

    def summary(self):
        n = len(self.calls)
        el = getattr(self, "elapsed", 0) or 1e-9
        print(f"calls: {n} in {el:.1f} s ({n / el:.0f} calls/s), {self.args.inflight} in flight, pipeline {self.args.pipeline}")
        print("replies: " + ", ".join(f"{k} {v}" for k, v in sorted(self.kinds.items(), key=lambda kv: -kv[1])))
        cls = {}
        for c in self.calls:
            cls[c.cls] = cls.get(c.cls, 0) + 1
        print("calls by class: " + ", ".join(f"{k} {v}" for k, v in sorted(cls.items())))
        print(f"memory (RssAnon): {self.rss_start} KiB at the start, {self.rss_warm} KiB after warm-up, {self.rss_end} KiB at the end")
        if self.rss_rest is not None and self.rss_warm is not None:
            print(f"  at rest (libdispatch workers retired, {self.workers_left} left; not the verdict): "
                  f"{self.rss_rest} KiB ({(self.rss_rest - self.rss_warm) / 1024:+.1f} MiB from warm-up)")
        if self.anon_warm and self.anon_end:
            print("  by place (KiB, warm-up -> end): " + ", ".join(
                f"{k} {self.anon_warm[k]} -> {self.anon_end[k]}" for k in self.anon_warm))
        if self.malloc_warm and self.malloc_end:
            print("  malloc heaps (KiB held from the system / of it free, warm-up -> end): " + ", ".join(
                f"#{nr} {self.malloc_warm.get(nr, (0, 0))[0]}/{self.malloc_warm.get(nr, (0, 0))[1]} -> {held}/{free}"
                for nr, (held, free) in sorted(self.malloc_end.items())))
        if self.ping_ms is not None:
            print(f"Ping latency at the end: median {self.ping_ms:.2f} ms")
        print(f"TrackList signals: {self.tracks.signals}")


# --------------------------------------------------------------------------------------------


def spec_types(spec):
    return {i: {p: t for p, (t, a) in props.items()} for i, props in spec.props.items()}


def run_once(args, source, total, header, log_path, quiet=False):
    """One service, one run; returns (Run, failed checks)."""
    os.makedirs(args.out, exist_ok=True)
    stderr_path = os.path.join(args.out, f"tonearmd-{header['seed']}{'-replay' if args.replay else ''}.err")
    if os.path.exists(stderr_path):
        os.unlink(stderr_path)
    svc = Service(args.work, args.tonearmd, args.pipeline, stderr_path)
    svc.start_bus()
    svc.start_tonearmd()
    logf = open(log_path, "w") if log_path else None
    if logf:
        logf.write(json.dumps(header) + "\n")
    run = Run(args, svc, source, total, logf, header)
    try:
        asyncio.run(run.main())
    finally:
        if logf:
            logf.close()
        svc.stop()
    failed = sum(not ok for ok, _, _ in run.checks)
    run.summary()
    if log_path:
        print(f"call log: {log_path}")
    print_verdict("fuzz", len(run.checks), failed, stderr_path)
    return run, failed


def setup(args, seed):
    args.work = os.path.join(args.tmp, f"tonearm-fuzz-{seed}")
    os.makedirs(args.work, exist_ok=True)
    media = os.path.join(args.work, "media")
    rng = random.Random(seed)
    t = time.monotonic()
    uris = make_media(rng, media)
    log(f"media generated in {media} in {time.monotonic() - t:.1f} s")
    return rng, uris


def cmd_fuzz(args):
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
    print(f"fuzz: seed {seed} (replay the whole run with --seed {seed}, or the calls with --replay LOG)", flush=True)
    rng, (valid, broken, dirs) = setup(args, seed)
    spec = Spec(args.xml)
    gen = Generator(rng, spec, valid, broken, dirs)
    if args.only:
        gen.only = args.only.split(",")
        bad = set(gen.only) - set(Generator.CLASSES)
        if bad:
            sys.exit(f"fuzz: unknown classes {sorted(bad)}; known: {', '.join(Generator.CLASSES)}")
    header = {"type": "header", "seed": seed, "pipeline": args.pipeline, "media": os.path.join(args.work, "media"),
              "calls": args.calls, "inflight": args.inflight, "spec": spec_types(spec)}
    log_path = args.log or os.path.join(args.out, f"fuzz-{seed}.jsonl")
    run, failed = run_once(args, gen, args.calls, header, log_path)
    if run.died or run.wedged:
        print(f"fuzz: to minimize: {sys.argv[0]} --minimize {log_path}")
    return 1 if failed else 0


def replay_calls(args, header, calls, log_path=None):
    args.replay = True
    for c in calls:
        c.reply = c.ms = None
    return run_once(args, ReplaySource(calls), len(calls), header, log_path)


def prepare_replay(args, path):
    header, calls = load_log(path)
    args.pipeline = args.pipeline_given or header["pipeline"]
    # the calls name media by path: make the same media in the same place
    setup(args, header["seed"])
    if os.path.join(args.work, "media") != header["media"]:
        log(f"warning: the log's media were in {header['media']}, now in {args.work}/media")
    return header, calls


def cmd_replay(args):
    header, calls = prepare_replay(args, args.replay)
    log(f"replaying {len(calls)} calls of {args.replay} (seed {header['seed']}, {args.pipeline})")
    out = os.path.splitext(args.replay)[0] + ".replay.jsonl"
    run, failed = replay_calls(args, header, calls, out)
    return 1 if failed else 0


def cmd_minimize(args):
    """ddmin over the calls of a log whose run killed or wedged tonearmd."""
    header, calls = prepare_replay(args, args.minimize)
    args.minimizing = True
    deadline = time.monotonic() + args.minimize_time
    tests = [0]
    devnull = open(os.devnull, "w")

    def fails(subset):
        tests[0] += 1
        for _ in range(args.minimize_tries):
            real = sys.stdout
            sys.stdout = devnull
            try:
                run, _ = replay_calls(args, header, [clone(c) for c in subset])
            finally:
                sys.stdout = real
            if run.died or run.wedged:
                what = run.died[0] if run.died else "wedged"
                log(f"  test {tests[0]}: {len(subset)} calls -> {what}")
                return what
        log(f"  test {tests[0]}: {len(subset)} calls -> survives")
        return None

    what = fails(calls)
    if not what:
        log("the whole log does not kill or wedge tonearmd on replay: nothing to minimize")
        return 1
    # the cause is usually recent: find the shortest failing suffix first
    cur = calls
    k = 1
    while k < len(cur) and time.monotonic() < deadline:
        if fails(cur[-k:]):
            cur = cur[-k:]
            break
        k *= 2
    # then ddmin
    n = 2
    while len(cur) >= 2 and time.monotonic() < deadline:
        size = math.ceil(len(cur) / n)
        chunks = [cur[j:j + size] for j in range(0, len(cur), size)]
        reduced = False
        for j in range(len(chunks)):
            if time.monotonic() > deadline:
                break
            if fails(chunks[j]):
                cur, n, reduced = chunks[j], 2, True
                break
            comp = [c for m, ch in enumerate(chunks) if m != j for c in ch]
            if len(chunks) > 2 and fails(comp):
                cur, n, reduced = comp, max(n - 1, 2), True
                break
        if not reduced:
            if n >= len(cur):
                break
            n = min(len(cur), n * 2)
    out = os.path.splitext(args.minimize)[0] + ".min.jsonl"
    with open(out, "w") as f:
        f.write(json.dumps(header) + "\n")
        for j, c in enumerate(cur):
            d = {"type": "call", "i": j, "path": c.path, "iface": c.iface, "member": c.member, "sig": c.sig,
                 "args": short(c.body), "cls": c.cls, "body": encode_body(c.sig, c.body)}
            if c.effect:
                d["effect"] = c.effect
            if c.wrong:
                d["wrong"] = c.wrong
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    complete = time.monotonic() < deadline
    print(f"minimized {len(calls)} -> {len(cur)} calls in {tests[0]} tests "
          f"({'1-minimal' if complete else 'time budget spent'}); result: {what}")
    for j, c in enumerate(cur):
        print(f"  {j}: {c.path} {c.iface}.{c.member}({c.sig}) {short(c.body, 200)}")
    print(f"minimized log: {out} (replay it with --replay {out})")
    return 0


def clone(c):
    n = Call(c.path, c.iface, c.member, c.sig, c.body, c.cls, c.effect, c.wrong)
    return n


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=int(os.environ.get("CALLS") or 100000))
    p.add_argument("--seed", type=int, default=int(os.environ["SEED"]) if os.environ.get("SEED") else None)
    p.add_argument("--inflight", type=int, default=int(os.environ.get("INFLIGHT") or 32))
    p.add_argument("--pipeline", dest="pipeline_given", choices=["playbin3", "playbin"],
                   default=os.environ.get("PIPELINE") or None)
    p.add_argument("--tonearmd", default=os.environ.get("TONEARMD") or os.path.join(REPO, ".build/release/tonearmd"))
    p.add_argument("--xml", default=os.path.join(REPO, "dbus"))
    p.add_argument("--out", default=os.path.join(REPO, ".build/fuzz"), help="logs and stderr go here")
    p.add_argument("--tmp", default=os.environ.get("TMPDIR", "/tmp"))
    p.add_argument("--log", help="call log path (default OUT/fuzz-SEED.jsonl)")
    p.add_argument("--replay", metavar="LOG")
    p.add_argument("--minimize", metavar="LOG")
    p.add_argument("--minimize-time", type=float, default=900, help="seconds (default 900)")
    p.add_argument("--minimize-tries", type=int, default=2, help="replays per candidate (default 2)")
    p.add_argument("--only", metavar="CLASSES", help="send only these call classes (comma separated: "
                   + ",".join(Generator.CLASSES) + "), e.g. to look past a crash that hides the rest")
    p.add_argument("--malloc-info", action="store_true", help="also ask glibc (malloc_info, through gdb) at "
                   "warm-up and at the end how much of each malloc heap is free chunks")
    p.add_argument("--no-rest", action="store_true", help="leave out the memory at rest (up to 12 s more "
                   "after the run, waiting for libdispatch's idle workers to retire)")
    p.add_argument("--keep", action="store_true", help="keep the temporary media and bus directory")
    args = p.parse_args()
    args.pipeline = args.pipeline_given or "default"
    args.out = os.path.abspath(args.out)
    args.tonearmd = os.path.abspath(args.tonearmd)   # tonearmd runs in the media directory
    if not os.access(args.tonearmd, os.X_OK):
        sys.exit(f"fuzz: no tonearmd at {args.tonearmd} (build it: swift build -c release --product tonearmd)")
    for tool in ("dbus-daemon", "gst-launch-1.0"):
        if not shutil.which(tool):
            sys.exit(f"fuzz: {tool} is missing")
    args.work = None
    try:
        if args.minimize:
            return cmd_minimize(args)
        if args.replay:
            return cmd_replay(args)
        args.replay = None
        return cmd_fuzz(args)
    finally:
        if args.work and not args.keep:
            shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
