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
}
