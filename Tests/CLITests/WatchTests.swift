import Foundation
import TestSupport
import XCTest

/// `tonearm watch` against a real tonearmd: JSON lines in a pipe, the progress bar on a pseudo-terminal.
final class WatchTests: CLITestCase {
    static let statusKeys: Set<String> = ["version", "status", "title", "artist", "artists", "album", "url", "trackid", "position",
                                          "duration", "volume", "muted", "loop", "shuffle", "rate", "live", "buffering",
                                          "waiting", "error", "stopAfter", "sleep", "replaygain", "equalizer", "output", "crossfade",
                                          "linear", "chapter"]

    func a() throws -> URL { try track("a", title: "Tone A", artist: "Tester", album: "Album A") }
    func b() throws -> URL { try track("b", title: "Tone B", artist: "Other", album: "Album B") }

    func startPlayingAB() throws {
        let a = try a(), b = try b()
        try harness.startService()
        try harness.ok("play", a.path, b.path)
        try harness.waitForStatus("Playing")
        try harness.waitForReady(title: "Tone A")
    }

    /// Reads JSON lines until one has `event` (and satisfies `also`); returns every line read.
    func lines(_ watch: Spawned, until event: String, where also: ([String: Any]) -> Bool = { _ in true },
               file: StaticString = #filePath, line: UInt = #line) throws -> [[String: Any]] {
        var read: [[String: Any]] = []
        // each line read so far, told by its event, status and buffering
        func seen() -> [String] { read.map { "\($0["event"] ?? "?") \($0["status"] ?? "?") \($0["buffering"] ?? "?")" } }
        while let text = try watch.nextLine(waitingFor: "a \(event) event after \(seen())\n\(harness.logs)") {
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text,
                                       file: file, line: line)
            XCTAssertEqual(Set(object.keys), Self.statusKeys.union(["event"]), "every line is status --json plus event: \(text)",
                           file: file, line: line)
            read.append(object)
            if object["event"] as? String == event, also(object) { return read }
        }
        XCTFail("watch ended before a \(event) event; it printed \(read)", file: file, line: line)
        return read
    }

    func testInAPipeEachChangeIsOneJSONLine() throws {
        try startPlayingAB()
        // bytes no demuxer recognises, named like a track
        let broken = harness.directory.appendingPathComponent("broken.ogg")
        try Data((0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 7919 ^ $0 >> 3) }).write(to: broken)
        try harness.ok("add", broken.path)
        let watch = try harness.spawn(["watch"])
        defer { watch.kill() }
        var all: [[String: Any]] = []

        // subscribe, then read: the first line is the state as it is
        let first = try lines(watch, until: "initial")
        XCTAssertEqual(first.count, 1)
        XCTAssertEqual(first[0]["status"] as? String, "playing")
        XCTAssertEqual(first[0]["title"] as? String, "Tone A")
        XCTAssertEqual(first[0]["duration"] as? Double ?? 0, 30, accuracy: 0.5)
        all += first

        try harness.ok("pause")
        let paused = try lines(watch, until: "state")
        XCTAssertEqual(paused.last?["status"] as? String, "paused")
        all += paused

        try harness.ok("seek", "0:10")
        let seeked = try lines(watch, until: "seeked")
        XCTAssertEqual(seeked.last?["position"] as? Double ?? 0, 10, accuracy: 0.5, "the position the seek went to")
        XCTAssertEqual(seeked.last?["status"] as? String, "paused", "a seek while paused stays paused")
        all += seeked

        try harness.ok("play")
        let playing = try lines(watch, until: "state")
        XCTAssertEqual(playing.last?["status"] as? String, "playing")
        XCTAssertGreaterThanOrEqual(playing.last?["position"] as? Double ?? 0, 9.5, "the position is read with the event")
        all += playing

        try harness.ok("next")
        let next = try lines(watch, until: "track", where: { $0["title"] as? String == "Tone B" })
        XCTAssertEqual(next.last?["artist"] as? String, "Other")
        XCTAssertEqual(next.last?["position"] as? Double ?? 99, 0, accuracy: 2, "a new track starts near 0")
        all += next

        try harness.ok("volume", "40%")
        let volume = try lines(watch, until: "volume")
        XCTAssertEqual(volume.last?["volume"] as? Double ?? 0, 0.4, accuracy: 0.001)
        all += volume

        try harness.ok("stop")
        let stopped = try lines(watch, until: "state")
        XCTAssertEqual(stopped.last?["status"] as? String, "stopped")
        all += stopped

        // one state line per change of PlaybackStatus, none for the seek, the track change or the volume
        XCTAssertEqual(all.filter { $0["event"] as? String == "state" }.compactMap { $0["status"] as? String },
                       ["paused", "playing", "stopped"], "\(all.map { "\($0["event"] ?? "?")" })")
        XCTAssertEqual(all.filter { $0["event"] as? String == "seeked" }.count, 1)

        // a track that cannot play: its error is an event of its own
        try harness.ok("jump", "3")
        try harness.ok("play")
        let failed = try lines(watch, until: "error")
        let error = try XCTUnwrap(failed.last?["error"] as? [String: Any], "\(failed)")
        XCTAssertTrue((error["name"] as? String ?? "").hasPrefix("io.github.tonearm.Error."), "\(error)")
        XCTAssertTrue((failed.last?["url"] as? String ?? "").hasSuffix("broken.ogg"))

        // the service leaves: the watch ends, status 3, and says why
        harness.daemon?.process.terminate()
        while let text = try watch.nextLine(waitingFor: "the end of the output after tonearmd left") { _ = text }
        let end = watch.finish()
        XCTAssertEqual(end.status, 3, end.stderr)
        XCTAssertTrue(end.stderr.contains("left the bus"), end.stderr)
    }

    func testAStreamOverHTTPShowsItsBuffering() throws {
        let a = try a()
        let server = try HTTPServer(directory: a.deletingLastPathComponent())
        // a slow server, so the buffer is seen filling: from one on 127.0.0.1 at full speed, a
        // downloaded file (playbin's download flag) may well be whole before the first message
        try server.fault(a.lastPathComponent, .init(bytesPerSecond: 100_000))
        try harness.startService()
        let watch = try harness.spawn(["watch"])
        defer { watch.kill() }
        _ = try lines(watch, until: "initial")
        try harness.ok("play", server.url(a.lastPathComponent))
        // the stream's buffer fills from empty: buffering below 100% is an event, and so is its end
        let filling = try lines(watch, until: "buffering", where: { ($0["buffering"] as? Int ?? 100) < 100 })
        XCTAssertEqual(filling.last?["url"] as? String, server.url(a.lastPathComponent), "\(filling)")
        let full = try lines(watch, until: "buffering", where: { $0["buffering"] as? Int == 100 })
        // MPRIS says Playing from the call on, also while waiting for the buffer
        XCTAssertEqual(full.last?["status"] as? String, "playing", "\(full)")
        XCTAssertEqual((filling + full).filter { $0["event"] as? String == "state" }.count, 1, "one state change, to playing")
        withExtendedLifetime(server) {}
    }

    func testOnATerminalOneLineIsRedrawnInPlace() throws {
        try startPlayingAB()
        let columns = 72
        let watch = try harness.spawnOnTerminal(["watch"], columns: columns)
        defer { watch.kill() }
        let pidLine = try XCTUnwrap(try watch.nextLine(waitingFor: "the helper's pid line"))
        let pid = try XCTUnwrap(Int32(pidLine.dropFirst(4)), pidLine)
        var frames: [String] = []

        /// Frames until one satisfies `predicate`.
        func frame(_ what: String, _ predicate: (String) -> Bool) throws -> String {
            while let line = try watch.nextLine(waitingFor: "a frame with \(what) after \(frames.suffix(3))\n\(harness.logs)") {
                guard let data = line.data(using: .utf8), let text = try JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed) as? String
                else { XCTFail("not a frame: \(line)"); continue }
                frames.append(text)
                if predicate(text) { return text }
            }
            throw TestError("the terminal closed before a frame with \(what); frames: \(frames)")
        }

        let first = try frame("the first frame") { _ in true }
        XCTAssertTrue(first.hasPrefix("\r"), "drawn from the start of the line: \(first.debugDescription)")
        XCTAssertTrue(first.contains("playing"), first)
        XCTAssertTrue(first.contains("Tone A — Tester"), first)
        XCTAssertTrue(first.contains("/ 0:30"), first)
        XCTAssertTrue(first.contains("["), "a bar: \(first)")
        // the bar moves while playing: a later frame shows a later position, redrawn on the same line
        func position(_ frame: String) -> String? {
            frame.firstRange(of: " / ").map { String(frame[..<$0.lowerBound].split(separator: " ").last ?? "") }
        }
        let start = try XCTUnwrap(position(first), first)
        let moved = try frame("a position after \(start)") { position($0).map { $0 != start } ?? false }
        XCTAssertTrue(moved.contains("#"), "the bar has filled a little: \(moved)")

        try harness.ok("pause")
        let paused = try frame("paused") { $0.contains("paused") }
        XCTAssertTrue(paused.contains("Tone A"), paused)
        // paused, nothing wakes the watch: no clock, no reads
        let (wakeUps, threads) = WakeUps.count(pid, window: 3, sanitizerThreadName: "tonearm")
        XCTAssertLessThanOrEqual(wakeUps, 1, "tonearm watch woke \(wakeUps) times in 3 s while paused: \(threads)")

        try harness.ok("next")
        let next = try frame("Tone B") { $0.contains("Tone B") }
        XCTAssertTrue(next.contains("— Other"), next)

        watch.closeInput()  // Ctrl-C
        var rest: String?
        var exit: String?
        while let line = try watch.nextLine(waitingFor: "the end after Ctrl-C") {
            if line.hasPrefix("rest ") { rest = line } else if line.hasPrefix("exit ") { exit = line } else { frames.append(line) }
        }
        XCTAssertEqual(exit, "exit 0", "Ctrl-C ends the watch with status 0")
        XCTAssertEqual(rest, #"rest "\r\n""#, "it leaves the cursor on a fresh line")
        for frame in frames {
            XCTAssertFalse(frame.dropFirst().contains("\r") || frame.contains("\n"), "one line, redrawn in place: \(frame.debugDescription)")
            XCTAssertLessThan(frame.dropFirst().count, columns, "fits the terminal: \(frame)")
        }
    }
}
