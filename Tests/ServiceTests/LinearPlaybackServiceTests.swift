import Foundation
import TestSupport
import XCTest

/// Linear playback (issue 40) against a real tonearmd and engine, with busctl, dbus-send and
/// playerctl as the clients: LinearPlayback and the CanSeek and CanGoNext it turns false are
/// announced; each refused call fails with io.github.tonearm.Error.LinearPlayback and moves
/// nothing; pausing and Previous still work; the setting survives a restart.
final class LinearPlaybackServiceTests: ServiceTestCase {
    typealias H = ServiceHarness
    static let refusal = H.errorPrefix + "LinearPlayback"

    func terminate(_ daemon: Daemon) {
        harness.exitExpected.insert(daemon.pid)
        daemon.process.terminate()
        XCTAssertEqual(daemon.waitForExit(timeout: 10), 0, "tonearmd did not stop cleanly on SIGTERM:\n\(daemon.output)")
    }

    func testRefusalsTheirAnnouncementsAndARestart() throws {
        let a = try short("a", seconds: 10, frequency: 440), b = try short("b", seconds: 10, frequency: 660)
        try harness.startPlaying([a, b])
        let track = try XCTUnwrap(try harness.trackID)
        XCTAssertEqual(try harness.get(H.extensionInterface, "LinearPlayback").bool, false)
        XCTAssertEqual(try harness.get(H.player, "CanSeek").bool, true)
        XCTAssertEqual(try harness.get(H.player, "CanGoNext").bool, true)

        var mark = harness.mark()
        try harness.set(H.extensionInterface, "LinearPlayback", "b", "true")
        try harness.waitForChange(H.extensionInterface, "LinearPlayback true", from: mark) { $0["LinearPlayback"]?.bool == true }
        try harness.waitForChange(H.player, "CanSeek and CanGoNext false", from: mark) {
            $0["CanSeek"]?.bool == false && $0["CanGoNext"]?.bool == false
        }
        XCTAssertEqual(try harness.get(H.extensionInterface, "LinearPlayback").bool, true)

        // pausing still works, and holds the position still for the checks below
        try harness.playerctl("pause")
        try harness.waitForStatus("Paused")
        let position = try harness.position

        mark = harness.mark()
        let refused: [(interface: String, method: String, arguments: [String])] = [
            (H.player, "Seek", ["int64:5000000"]),
            (H.player, "Seek", ["int64:-1000000"]),
            (H.player, "SetPosition", ["objpath:\(track)", "int64:5000000"]),
            (H.extensionInterface, "SeekTo", ["int64:5000000", "int64:0", "int64:0"]),
            (H.player, "Next", []),
            (H.properties, "Set", ["string:\(H.player)", "string:Rate", "variant:double:1.5"]),
            (H.properties, "Set", ["string:\(H.player)", "string:Rate", "variant:double:0.5"]),
        ]
        for call in refused {
            let what = "\(call.method) \(call.arguments.joined(separator: " "))"
            let reply = try XCTUnwrap(try harness.errorReply(call.interface, call.method, call.arguments), "\(what) went through")
            XCTAssertEqual(reply.name, Self.refusal, "\(what): \(reply.message)")
            XCTAssertTrue(reply.message.contains("linear playback is on"), "\(what): \(reply.message)")
        }
        // playerctl, as a person's media keys would, reads CanGoNext and CanSeek false and does not
        // even ask
        for command in [["next"], ["position", "5"], ["position", "5+"]] {
            let output = try harness.playerctlOutput(command)
            XCTAssertEqual(output.status, 1, "playerctl \(command): \(output.stdout) \(output.stderr)")
            XCTAssertTrue(output.stderr.contains("No player could handle this command"), "playerctl \(command): \(output.stderr)")
        }
        // a Rate set to the rate it has is no change, and no error
        try harness.set(H.player, "Rate", "d", "1")

        try harness.ping()
        XCTAssertEqual(try harness.trackID, track, "Next went nowhere")
        XCTAssertEqual(try harness.position, position, "no seek moved it")
        XCTAssertEqual(try harness.get(H.player, "Rate").double, 1)
        let signals = harness.watcher.messages(from: mark).filter { $0.sender == harness.daemon.uniqueName }
        XCTAssertEqual(signals.filter { $0.member == "Seeked" }.count, 0, "\(signals)")
        let rateChanges = signals.filter { $0.member == "RateChanged" }
        XCTAssertEqual(rateChanges.map { $0.arguments.last?.string }, ["refused", "refused"], "each refused rate says so")
        XCTAssertEqual(rateChanges.map { $0.arguments.first?.double }, [1, 1], "at the rate it kept")

        // Previous skips nothing: paused at the first track, it goes back to its start
        mark = harness.mark()
        try harness.call(H.player, "Previous")
        XCTAssertLessThan(try harness.waitForSeeked(from: mark), 100_000)
        XCTAssertEqual(try harness.playbackStatus, "Paused")

        // kept across a restart, and announced as it is to a client that reads it
        terminate(harness.daemon)
        try harness.start()
        XCTAssertEqual(try harness.get(H.extensionInterface, "LinearPlayback").bool, true, "kept across a restart")
        XCTAssertEqual(try harness.get(H.player, "CanSeek").bool, false)
        XCTAssertEqual(try harness.get(H.player, "CanGoNext").bool, false)
        XCTAssertEqual(try harness.errorReply(H.player, "Next")?.name, Self.refusal)

        mark = harness.mark()
        try harness.set(H.extensionInterface, "LinearPlayback", "b", "false")
        try harness.waitForChange(H.extensionInterface, "LinearPlayback false", from: mark) { $0["LinearPlayback"]?.bool == false }
        try harness.waitForChange(H.player, "CanSeek and CanGoNext true", from: mark) {
            $0["CanSeek"]?.bool == true && $0["CanGoNext"]?.bool == true
        }
        try harness.playerctl("next")
        try harness.waitForTrack(try XCTUnwrap(try harness.tracks.last))
    }
}
