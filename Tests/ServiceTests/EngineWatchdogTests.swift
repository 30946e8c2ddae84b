import Foundation
import TestSupport
import XCTest

/// An engine that does not answer is ended (issue 37): the engine's process stopped as a
/// deadlocked GStreamer leaves it (SIGSTOP) while it plays, loads or seeks. tonearmd answers every
/// call meanwhile, ends the stopped engine within seconds, fails its item with
/// `io.github.tonearm.Error.EngineStalled`, and the next item plays in a new engine. And the link
/// is loud: an engine of another protocol version, or a line tonearmd cannot read, is said, not
/// dropped in silence.
final class EngineWatchdogTests: ServiceTestCase {
    typealias H = ServiceHarness

    /// Engines a test stopped: killed at its end whatever happened (a stopped process never exits).
    private var stopped: [Int32] = []

    override func tearDown() {
        for pid in stopped { kill(pid, SIGKILL) }
        super.tearDown()
    }

    private func stopEngine() throws -> Int32 {
        let engine = try XCTUnwrap(enginePID, "an item plays in the engine's process")
        stopped.append(engine)
        XCTAssertEqual(kill(engine, SIGSTOP), 0)
        return engine
    }

    /// Calls answer at once while the engine is stopped: the queue that answers D-Bus never waits on it.
    private func callsAnswerAtOnce(_ what: String) throws {
        for _ in 0..<3 {
            let started = Date()
            try harness.ping()
            _ = try harness.playbackStatus
            _ = try harness.get(H.player, "Position")
            XCTAssertLessThan(Date().timeIntervalSince(started), 1.0 * H.slowdown, "calls answer at once \(what)")
        }
    }

    private func waitForStalled(from mark: Int, naming what: String) throws {
        let failed = try harness.waitForSignal(H.extensionInterface, "ItemFailed", from: mark, timeout: 15)
        XCTAssertEqual(failed.arguments.count, 3, "\(failed)")
        XCTAssertEqual(failed.arguments[1].string, "io.github.tonearm.Error.EngineStalled", "\(failed)\n\(harness.logs)")
        let message = failed.arguments[2].string ?? ""
        XCTAssertTrue(message.contains(what), "the error names what was waited for: \(message)")
    }

    private func waitUntilGone(_ pid: Int32) throws {
        let deadline = Date().addingTimeInterval(5)
        while FileManager.default.fileExists(atPath: "/proc/\(pid)/stat") {
            // a zombie not reaped yet counts as gone: its stat says Z
            if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), stat.contains(") Z ") { return }
            guard Date() < deadline else { return XCTFail("the stalled engine (pid \(pid)) was not ended\n\(harness.logs)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// `uri` plays within `seconds` of now: its item ready and its position moving, in an engine
    /// other than `old`.
    private func playsWithin(_ seconds: TimeInterval, after started: Date, oldEngine old: Int32) throws {
        try harness.waitForItemStatus("readyToPlay", timeout: seconds)
        let first = try harness.position
        let deadline = Date().addingTimeInterval(3)
        while try harness.position <= first, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        XCTAssertGreaterThan(try harness.position, first, "it plays")
        XCTAssertEqual(try harness.playbackStatus, "Playing")
        XCTAssertLessThan(Date().timeIntervalSince(started), seconds * H.slowdown, "it played within \(seconds) s")
        XCTAssertNotEqual(try XCTUnwrap(enginePID), old, "a new engine plays it")
    }

    /// tonearmd started, playing a 30 s tone; returns another file to open next.
    private func playAToneWithAnotherAtHand() throws -> URL {
        let tone = try short("tone", seconds: 30)
        let other = try short("other", seconds: 30, frequency: 660)
        try harness.start()
        try harness.call(H.player, "OpenUri", "s", [H.uri(tone)])
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        return other
    }

    func testAnEngineStoppedWhilePlayingIsEndedAndItsItemFailsAsStalled() throws {
        let other = try playAToneWithAnotherAtHand()
        let mark = harness.mark()
        let engine = try stopEngine()
        try callsAnswerAtOnce("while the engine is stopped")
        try waitForStalled(from: mark, naming: "its position")
        try waitUntilGone(engine)
        XCTAssertNotEqual(try harness.playbackStatus, "Playing", "a stalled engine's item does not stay Playing")
        try callsAnswerAtOnce("after the engine was ended")

        let started = Date()
        try harness.call(H.player, "OpenUri", "s", [H.uri(other)])
        try playsWithin(10, after: started, oldEngine: engine)
    }

    /// The load of an OpenUri sent to a stopped engine is never answered: the engine is ended
    /// and the load goes to a new one, which plays it.
    func testAnOpenUriWhileTheEngineIsStoppedPlaysWithinTenSeconds() throws {
        let other = try playAToneWithAnotherAtHand()
        let engine = try stopEngine()
        let started = Date()
        try harness.call(H.player, "OpenUri", "s", [H.uri(other)])
        XCTAssertLessThan(Date().timeIntervalSince(started), 1.0 * H.slowdown, "OpenUri is answered at once")
        try callsAnswerAtOnce("while the load waits for the stopped engine")
        try playsWithin(10, after: started, oldEngine: engine)
        XCTAssertEqual(try harness.metadata["xesam:url"]?.string, H.uri(other), "the item opened last is the one that plays")
        try waitUntilGone(engine)
    }

    /// A seek sent to a stopped engine is never answered: the item fails naming the seek, and
    /// the next OpenUri plays.
    func testASeekWhileTheEngineIsStoppedFailsTheItemNamingTheSeek() throws {
        let other = try playAToneWithAnotherAtHand()
        let track = try XCTUnwrap(try harness.trackID)
        let mark = harness.mark()
        let engine = try stopEngine()
        let asked = Date()
        try harness.call(H.player, "SetPosition", "ox", [track, "10000000"])
        XCTAssertLessThan(Date().timeIntervalSince(asked), 1.0 * H.slowdown, "SetPosition is answered at once")
        try callsAnswerAtOnce("while the seek waits for the stopped engine")
        try waitForStalled(from: mark, naming: "a seek")
        try waitUntilGone(engine)

        let started = Date()
        try harness.call(H.player, "OpenUri", "s", [H.uri(other)])
        try playsWithin(10, after: started, oldEngine: engine)
    }

    /// An engine that speaks another version of the link is refused, naming both versions: as
    /// an engine that cannot set GStreamer up, it ends tonearmd with the reason.
    func testAnEngineOfAnotherProtocolVersionIsRefusedNamingBoth() throws {
        let script = harness.directory.appendingPathComponent("old-engine")
        try "#!/bin/sh\necho '{\"hello\":{\"version\":999}}'\nexec cat >/dev/null\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let daemon = try harness.start(environment: ["TONEARM_ENGINE": script.path])
        harness.exitExpected.insert(daemon.pid)
        let status = daemon.waitForExit(timeout: 15 * H.slowdown)
        XCTAssertEqual(status, 1, "tonearmd ends as when GStreamer cannot start\n\(daemon.output)")
        XCTAssertTrue(daemon.output.contains("protocol version 999, this tonearmd version 1"), daemon.output)
    }

    /// A report tonearmd cannot read ends that engine and fails its item with the line it was;
    /// the next item plays in a new engine.
    func testALineTheEngineSendsThatCannotBeReadFailsTheItemNamingIt() throws {
        let tone = try short("tone", seconds: 30)
        let other = try short("other", seconds: 30, frequency: 660)
        let marker = harness.directory.appendingPathComponent("mangled")
        let wrapper = harness.directory.appendingPathComponent("mangling-engine")
        // the real engine behind a pipe that turns its first preroll's report into a line of no known kind
        try """
        #!/usr/bin/python3
        import os, subprocess, sys
        engine = subprocess.Popen([os.environ["TONEARM_REAL_ENGINE"]] + sys.argv[1:], stdout=subprocess.PIPE)
        for line in engine.stdout:
            if b'"asyncDone"' in line and not os.path.exists(os.environ["TONEARM_MANGLE_MARKER"]):
                open(os.environ["TONEARM_MANGLE_MARKER"], "w").close()
                line = b'{"asyncDun":{"_0":1}}\\n'
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
        """.write(to: wrapper, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: wrapper.path)
        try harness.start(environment: ["TONEARM_ENGINE": wrapper.path,
                                        "TONEARM_REAL_ENGINE": try BuiltProduct.executable("tonearm-engine").path,
                                        "TONEARM_MANGLE_MARKER": marker.path])
        let mark = harness.mark()
        try harness.call(H.player, "OpenUri", "s", [H.uri(tone)])
        let failed = try harness.waitForSignal(H.extensionInterface, "ItemFailed", from: mark, timeout: 15)
        let message = failed.arguments.last?.string ?? ""
        XCTAssertTrue(message.contains("asyncDun"), "the error says what the line was: \(message)")
        XCTAssertTrue(harness.daemon.output.contains("asyncDun"), "the log says what the line was")
        XCTAssertTrue(FileManager.default.fileExists(atPath: marker.path))

        try harness.call(H.player, "OpenUri", "s", [H.uri(other)])
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
    }
}
