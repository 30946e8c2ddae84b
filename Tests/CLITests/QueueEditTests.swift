import Foundation
import TestSupport
import XCTest

/// `add --next`, `move`, a relative seek with nothing to seek in, and `daemon`.
final class QueueEditTests: CLITestCase {
    func tone(_ letter: String, _ artist: String) throws -> URL {
        try track(letter.lowercased(), title: "Tone \(letter)", artist: artist)
    }

    /// The titles of `tonearm queue`, `*` before the current one.
    func titles() throws -> [String] {
        try harness.ok("queue").split(separator: "\n").map { line in
            let title = line.components(separatedBy: "  ").last.map { String($0.split(separator: " — ").first ?? "") } ?? ""
            return (line.hasPrefix("*") ? "*" : "") + title
        }
    }

    func waitForTitles(_ expected: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        // tags of tracks that never played arrive in the background: wait for them, not for a time
        var last: [String] = []
        do {
            try harness.wait(for: "queue \(expected)", signals: ["PropertiesChanged", ".TrackList."]) {
                last = try titles()
                return last == expected
            }
        } catch {
            throw TestError("\(error)\nthe queue was \(last)")
        }
        XCTAssertEqual(try titles(), expected, file: file, line: line)
    }

    func testAddNextInsertsAfterTheCurrentTrack() throws {
        let a = try tone("A", "Tester"), b = try tone("B", "Other"), c = try tone("C", "Third"), d = try tone("D", "Fourth")
        try harness.startService()
        // nothing current: --next puts them first (and the first track of an empty queue becomes current)
        try harness.ok("add", "--next", c.path)
        try harness.ok("add", a.path, b.path)
        try waitForTitles(["*Tone C", "Tone A", "Tone B"])
        try harness.ok("jump", "2")
        try harness.ok("play")
        try harness.waitForReady(title: "Tone A")
        // a directory and a file, in order, right after the current track
        let folder = harness.directory.appendingPathComponent("folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: d, to: folder.appendingPathComponent("1 d.ogg"))
        try harness.ok("add", "--next", folder.path, c.path)
        try waitForTitles(["Tone C", "*Tone A", "Tone D", "Tone C", "Tone B"])
        XCTAssertEqual(try harness.playerctl("metadata", "xesam:title"), "Tone A", "the current track plays on")
        try harness.ok("next")
        try harness.wait(for: "Tone D next") { try harness.playerctl("metadata", "xesam:title") == "Tone D" }

        let missing = try harness.tonearm(["add", "--next", "nowhere.ogg"])
        XCTAssertEqual(missing.status, 2, missing.stderr)
        XCTAssertEqual(missing.stderr, "tonearm: no such file: nowhere.ogg\n")
    }

    func testMoveReordersTheQueue() throws {
        let a = try tone("A", "Tester"), b = try tone("B", "Other"), c = try tone("C", "Third")
        try harness.startService()
        try harness.ok("play", a.path, b.path, c.path)
        try harness.waitForReady(title: "Tone A")
        try waitForTitles(["*Tone A", "Tone B", "Tone C"])
        try harness.ok("move", "3", "1")
        try waitForTitles(["Tone C", "*Tone A", "Tone B"])
        try harness.ok("move", "1", "3")
        try waitForTitles(["*Tone A", "Tone B", "Tone C"])
        try harness.ok("move", "1", "2")  // the current track moves and keeps playing
        try waitForTitles(["Tone B", "*Tone A", "Tone C"])
        XCTAssertEqual(try harness.playerctl("status"), "Playing")
        try harness.ok("move", "2", "2")
        try waitForTitles(["Tone B", "*Tone A", "Tone C"])

        let tooFar = try harness.tonearm(["move", "1", "4"])
        XCTAssertEqual(tooFar.status, 1, tooFar.stderr)
        XCTAssertEqual(tooFar.stderr, "tonearm: no item 4 in the queue (it has 3)\n")
        let zero = try harness.tonearm(["move", "0", "1"])
        XCTAssertEqual(zero.status, 2, zero.stderr)
        XCTAssertTrue(zero.stderr.contains("0"), zero.stderr)
        let one = try harness.tonearm(["move", "1"])
        XCTAssertEqual(one.status, 2, one.stderr)
        XCTAssertEqual(try titles(), ["Tone B", "*Tone A", "Tone C"], "nothing moved by a refused move")
    }

    func testRelativeSeekWithNoTrackIsRefused() throws {
        try harness.startService()
        for offset in ["+10", "-5", "0:03"] {
            let output = try harness.tonearm(["seek", offset])
            XCTAssertEqual(output.status, 1, "seek \(offset): \(output.stderr)")
            XCTAssertEqual(output.stderr, "tonearm: no current track to seek in\n", "seek \(offset)")
        }
    }

    func testDaemonRunsTonearmdInTheForeground() throws {
        let a = try tone("A", "Tester")
        let name = "org.mpris.MediaPlayer2.tonearm.fore"
        let daemon = try harness.spawn(["daemon", "--audio-sink", "fakesink sync=true", "--instance", "fore",
                                        "--log-level", "debug", a.path])
        defer { daemon.kill() }
        let wait = try Tool.run("gdbus", ["wait", "--address", harness.bus.address, "--timeout", "20", name], timeout: 30)
        XCTAssertEqual(wait.status, 0, "tonearm daemon took \(name): \(wait.stderr)")
        // the same process: tonearm replaced itself with tonearmd
        let owner = try Tool.busctl(harness.bus, ["--json=short", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                  "org.freedesktop.DBus", "GetConnectionUnixProcessID", "s", name])
        let pid = try XCTUnwrap(((try Tool.json(owner) as? [String: Any])?["data"] as? [Any])?.first as? Int, owner)
        XCTAssertEqual(Int32(pid), daemon.process.processIdentifier)
        XCTAssertEqual(try String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8), "tonearmd\n")
        // followed with tonearm's own watch: the daemon is a service like any other
        let watch = try harness.spawn(["watch", "--instance", "fore"])
        defer { watch.kill() }
        while let line = try watch.nextLine(waitingFor: "Tone A playing on the instance") {
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            if object["status"] as? String == "playing", object["title"] as? String == "Tone A" { break }
        }
        XCTAssertEqual(try harness.tonearm(["status", "--instance", "fore", "--format", "{status} {title}"]).stdout, "Playing Tone A\n")
        daemon.process.terminate()
        let end = daemon.finish()
        XCTAssertEqual(end.status, 0, "SIGTERM ends it cleanly: \(end.stderr)")

        let missing = try harness.tonearm(["daemon", "gone.ogg"])
        XCTAssertEqual(missing.status, 2, missing.stderr)
        XCTAssertEqual(missing.stderr, "tonearm: no such file: gone.ogg\n")
        let badInstance = try harness.tonearm(["daemon", "--instance", "9x"])
        XCTAssertEqual(badInstance.status, 2, badInstance.stderr)
        XCTAssertTrue(badInstance.stderr.contains("9x"), badInstance.stderr)
        let badPipeline = try harness.tonearm(["daemon", "--pipeline", "playbin4"])
        XCTAssertEqual(badPipeline.status, 2, badPipeline.stderr)
        XCTAssertTrue(badPipeline.stderr.contains("playbin4"), badPipeline.stderr)
    }
}
