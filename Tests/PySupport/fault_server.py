"""An HTTP server on 127.0.0.1 for the network tests (Tests/TestSupport/HTTPServer.swift starts it).

It serves a directory (with byte ranges, as souphttpsrc asks for them when it resumes), and what the
test tells it on stdin, one JSON object a line, each answered with "ok" on stdout:

  {"op": "fault", "path": P, "steps": [{"status": 500, "stall": 3.0, "drop_after": N,
   "rate": BYTES_PER_S, "garbage": true, "times": K, "stall_after": N}, ...]}
                                       ("stall" waits before answering, or after N bytes of the
                                       body with "stall_after")
                                       faults for requests of P, in order: each step for K
                                       requests (or every one from then on); then none
  {"op": "clear"}                      no more faults; a stall under way ends now
  {"op": "live", "path": P, "segments": [names], "duration": S, "window": W}
                                       P is a live HLS playlist: no EXT-X-ENDLIST, a window of W
                                       segments that slides by one every S seconds from the first
                                       request for it (it stops growing at the last segment)
  {"op": "icy", "path": P, "file": F, "metaint": N, "name": STATION, "titles": [T...],
   "every": S, "rate": BYTES_PER_S}    P is an Icecast/Shoutcast stream of F (looped, at RATE),
                                       with ICY metadata every N bytes; the title moves on every S s

Each request it answers is logged on stdout as "request PATH STATUS"; a connection it drops on
purpose as "dropped PATH AFTER_BYTES". The server never reads a clock except to pace and to slide a
live window, and keeps nothing running between requests.
"""

import json
import os
import random
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
out_lock = threading.Lock()
faults = {}
lives = {}
icys = {}
root = "."
# a stall is the fault itself (a server silent for N s), not the test waiting: it ends early when
# the test clears the faults ({"op": "clear"} sets this and puts a fresh one in its place)
cleared = threading.Event()


def stall(seconds):
    with lock:
        event = cleared
    event.wait(seconds)


def say(line):
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle(self):
        # a client that hangs up (a pipeline torn down mid-request) is no error of the test
        try:
            super().handle()
        except (ConnectionResetError, BrokenPipeError):
            pass

    def do_HEAD(self):
        self.answer(head=True)

    def do_GET(self):
        self.answer(head=False)

    def take_fault(self, path):
        with lock:
            for fault in faults.get(path, []):
                if fault.get("times") is None:
                    return dict(fault)
                if fault["times"] > 0:
                    fault["times"] -= 1
                    return dict(fault)
            return None

    def answer(self, head):
        path = self.path.split("?", 1)[0].lstrip("/")
        fault = self.take_fault(path)
        if fault and fault.get("stall") and fault.get("stall_after") is None:
            stall(fault["stall"])
        if fault and fault.get("status"):
            status = fault["status"]
            body = ("error %d for %s\n" % (status, path)).encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)
            say("request %s %d" % (path, status))
            return
        with lock:
            live = lives.get(path)
            icy = icys.get(path)
        if live is not None:
            return self.live_playlist(path, live, head)
        if icy is not None:
            return self.icy_stream(path, icy, head)
        self.file(path, fault or {}, head)

    def file(self, path, fault, head):
        full = os.path.realpath(os.path.join(root, path))
        if not full.startswith(os.path.realpath(root) + os.sep) or not os.path.isfile(full):
            self.send_error(404)
            say("request %s 404" % path)
            return
        if fault.get("garbage"):
            # the same bytes each time, which no typefinder claims: unseeded, one run's bytes came out
            # as H.263 to GStreamer's typefinders and played (NetworkServiceTests' garbage test)
            noise = random.Random(7)
            data = bytes(noise.getrandbits(8) for _ in range(65536))
        else:
            with open(full, "rb") as f:
                data = f.read()
        start, end, status = 0, len(data), 200
        ranged = self.headers.get("Range")
        if ranged and ranged.startswith("bytes="):
            first, _, last = ranged[6:].partition("-")
            start = int(first) if first else 0
            end = int(last) + 1 if last else len(data)
            status = 206
        self.send_response(status)
        content = "application/vnd.apple.mpegurl" if path.endswith(".m3u8") else \
            "video/mp2t" if path.endswith(".ts") else "application/octet-stream"
        self.send_header("Content-Type", content)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(end - start))
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end - 1, len(data)))
        self.end_headers()
        say("request %s %d" % (path, status))
        if head:
            return
        self.send_body(path, data[start:end], fault)

    def send_body(self, path, body, fault):
        drop = fault.get("drop_after")
        rate = fault.get("rate")
        stall_after = fault.get("stall_after")
        sent = 0
        chunk = 4096
        began = time.monotonic()
        try:
            while sent < len(body):
                if drop is not None and sent >= drop:
                    say("dropped %s %d" % (path, sent))
                    self.close_now()
                    return
                if stall_after is not None and sent >= stall_after:
                    say("stalled %s %d" % (path, sent))
                    stall(fault.get("stall", 0))
                    stall_after = None
                    began = time.monotonic() - sent / rate if rate else began
                size = chunk if drop is None else min(chunk, drop - sent)
                if stall_after is not None:
                    size = min(size, stall_after - sent)
                self.wfile.write(body[sent:sent + size])
                sent += size
                if rate:
                    # the throttle is the fault modelled (a link of `rate` bytes/s): the server
                    # paces its own writes; no test waits on a clock, they wait on its log
                    ahead = sent / rate - (time.monotonic() - began)
                    if ahead > 0:
                        time.sleep(ahead)
            if drop is not None and sent >= drop:
                say("dropped %s %d" % (path, sent))
                self.close_now()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def close_now(self):
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(2)
        except OSError:
            pass

    def live_playlist(self, path, live, head):
        with lock:
            if live.get("started") is None:
                live["started"] = time.monotonic()
            elapsed = time.monotonic() - live["started"]
        segments = live["segments"]
        window = live["window"]
        last = min(len(segments), window + int(elapsed / live["duration"]))
        first = max(0, last - window)
        lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:%d" % int(live["duration"] + 0.999),
                 "#EXT-X-MEDIA-SEQUENCE:%d" % first]
        for name in segments[first:last]:
            lines += ["#EXTINF:%.3f," % live["duration"], name]
        body = ("\n".join(lines) + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.apple.mpegurl")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if not head:
            self.wfile.write(body)
        say("request %s 200" % path)

    def icy_stream(self, path, icy, head):
        with open(os.path.join(root, icy["file"]), "rb") as f:
            audio = f.read()
        wants_metadata = self.headers.get("Icy-MetaData") == "1"
        self.send_response(200)
        self.send_header("Content-Type", "audio/mpeg")
        self.send_header("icy-name", icy["name"])
        if wants_metadata:
            self.send_header("icy-metaint", str(icy["metaint"]))
        self.close_connection = True
        self.end_headers()
        say("request %s 200" % path)
        if head:
            return
        metaint, rate = icy["metaint"], icy["rate"]
        began = time.monotonic()
        offset = 0  # into the looped file
        sent = 0  # audio bytes
        last_title = None
        try:
            while True:
                piece = bytearray()
                while len(piece) < metaint:
                    take = audio[offset:offset + metaint - len(piece)]
                    piece += take
                    offset = (offset + len(take)) % len(audio)
                self.wfile.write(piece)
                sent += len(piece)
                if wants_metadata:
                    titles = icy["titles"]
                    title = titles[min(int((time.monotonic() - began) / icy["every"]), len(titles) - 1)]
                    if title != last_title:
                        text = ("StreamTitle='%s';" % title).encode()
                        blocks = (len(text) + 15) // 16
                        self.wfile.write(bytes([blocks]) + text.ljust(blocks * 16, b"\0"))
                        last_title = title
                    else:
                        self.wfile.write(b"\0")
                self.wfile.flush()
                ahead = sent / rate - (time.monotonic() - began)
                if ahead > 0:
                    time.sleep(ahead)
        except (BrokenPipeError, ConnectionResetError):
            pass


def control():
    global cleared
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        command = json.loads(line)
        op = command.pop("op")
        path = command.pop("path", "").lstrip("/")
        with lock:
            if op == "fault":
                faults[path] = command["steps"]
            elif op == "clear":
                faults.clear()
                cleared.set()
                cleared = threading.Event()
            elif op == "live":
                lives[path] = command
            elif op == "icy":
                icys[path] = command
        say("ok")
    # stdin closed: the test process is gone
    os._exit(0)


def main():
    global root
    root = sys.argv[1]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=control, daemon=True).start()
    say("listening %d" % server.server_address[1])
    server.serve_forever()


main()
