import Foundation
import TestSupport
import XCTest

/// `tonearmd --open`, what the desktop entry runs when a shell launches Tonearm.
final class OpenHandOverTests: ServiceTestCase {
    func testOpenHandsTheFilesToTheRunningService() throws {
        let first = try media.tone("running", seconds: 10)
        let second = try media.tone("handed", seconds: 10, tags: .init(title: "Handed Over"))
        try harness.startPlaying([first])
        XCTAssertEqual(try harness.tracks.count, 1)
        // exits 0 once the running service took the file (a failure throws with tonearmd's output)
        try Processes.run([try ServiceHarness.executable().path, "--open", second.path],
                          environment: ["DBUS_SESSION_BUS_ADDRESS": harness.bus.address])
        XCTAssertEqual(try harness.tracks.count, 2, "the running service got the file; no second service")
        XCTAssertEqual(harness.daemons.count, 1)
        try harness.waitForStatus("Playing")
        XCTAssertEqual(try harness.playerctl("metadata", "xesam:url"), second.absoluteString)
    }

    /// What a launcher runs (the desktop file's `Exec` with no file), and what GNOME Shell's media
    /// card runs when clicked (it activates the desktop file rather than call Raise): the running
    /// service is asked to Raise, and this process ends at once.
    func testOpenWithNothingRaisesTheRunningServiceAndExits() throws {
        try harness.start()
        let calls = try SignalWatcher(address: harness.bus.address,
                                      rules: ["type='method_call',interface='org.mpris.MediaPlayer2',member='Raise'"])
        defer { calls.stop() }
        let started = Date()
        let output = try Processes.run([try ServiceHarness.executable().path, "--open"],
                                       environment: ["DBUS_SESSION_BUS_ADDRESS": harness.bus.address], timeout: 20)
        // ended by itself with status 0 (run throws otherwise); "at once" is one call: seconds would
        // mean it set up GStreamer or waited for something
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, output)
        let raise = try calls.wait(for: "Raise to the running tonearmd") { $0.kind == "method call" && $0.member == "Raise" }
        XCTAssertEqual(raise.destination, ServiceHarness.baseName, "\(raise)")
        XCTAssertTrue(output.contains("asked the running tonearmd to raise"), output)
        XCTAssertEqual(harness.daemons.count, 1)
        XCTAssertEqual(try harness.playbackStatus, "Stopped", "nothing else changed")
        // the service says it came; its line is written after the answer, so it is read once the
        // service has ended
        let daemon = harness.daemon
        harness.exitExpected.insert(daemon.pid)
        daemon.process.terminate()
        XCTAssertEqual(daemon.waitForExit(timeout: 10), 0, daemon.output)
        XCTAssertTrue(daemon.output.contains("asked to raise: no window"), daemon.output)
    }

    /// With no tonearmd running, the launcher's process is the service (as `--open FILE` is): it
    /// owns the name and answers, and it does not end.
    func testOpenWithNothingBecomesTheServiceWhenNoneRuns() throws {
        let daemon = try harness.start(["--open"])
        XCTAssertEqual(daemon.busName, ServiceHarness.baseName)
        XCTAssertEqual(try harness.playbackStatus, "Stopped")
        try harness.ping()
        XCTAssertTrue(daemon.isRunning)
    }
}
