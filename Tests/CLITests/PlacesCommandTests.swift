import Foundation
import TestSupport
import XCTest

/// `tonearm places` and the line `play` prints when a long track starts where it was left, against a
/// real tonearmd and engine (issue 40, "a place kept per item"). The threshold is 30 s here
/// (`TONEARM_RESUME_THRESHOLD`, docs/state.md) so that a 60 s file counts as long.
final class PlacesCommandTests: CLITestCase {
    typealias H = CLIHarness

    func testPlayResumesALongTrackWhereItWasLeftAndSaysWhereAndPlacesOffStartsItAtItsStart() throws {
        harness.serviceEnvironment = ["TONEARM_RESUME_THRESHOLD": "30"]
        let long = try track("long", title: "Long", seconds: 60), short = try track("short", title: "Short", seconds: 5)
        try harness.startService()
        XCTAssertEqual(try harness.ok("places"), "on\n", "on by default")

        let first = try harness.ok("play", long.path)
        XCTAssertFalse(first.contains("resuming"), "a first play starts at its start: \(first)")
        try harness.waitForStatus("Playing")
        try harness.waitForReady(title: "Long")
        try harness.ok("seek", "0:40")
        try harness.wait(for: "the position past 40 s") { (try harness.property(H.player, "Position") as? Int ?? 0) >= 40_000_000 }
        // another track: the long one is left at about 40 s
        try harness.ok("play", short.path)
        try harness.wait(for: "the short track") { try harness.playerctl("metadata", "xesam:title") == "Short" }

        let again = try harness.ok("play", long.path)
        XCTAssertTrue(again.hasPrefix("resuming at 0:00:4"), "the place it was left at, about 0:00:40: \(again)")
        try harness.wait(for: "the long track at its place") {
            try harness.playerctl("metadata", "xesam:title") == "Long"
                && (try harness.property(H.player, "Position") as? Int ?? 0) >= 40_000_000
        }

        try harness.ok("places", "off")
        XCTAssertEqual(try harness.property(H.extensionInterface, "ResumePlaces") as? Bool, false)
        XCTAssertEqual(try harness.ok("places"), "off\n")
        try harness.ok("play", short.path)
        try harness.wait(for: "the short track") { try harness.playerctl("metadata", "xesam:title") == "Short" }
        let off = try harness.ok("play", long.path)
        XCTAssertFalse(off.contains("resuming"), "places off: from its start: \(off)")
        try harness.wait(for: "the long track") { try harness.playerctl("metadata", "xesam:title") == "Long" }
        XCTAssertLessThan(try harness.property(H.player, "Position") as? Int ?? .max, 10_000_000, "from its start")

        try harness.restartService()
        XCTAssertEqual(try harness.ok("places"), "off\n", "kept across a restart")
    }

    func testAnythingButOnOrOffIsAUsageError() throws {
        try harness.startService()
        let output = try harness.tonearm(["places", "sometimes"])
        XCTAssertEqual(output.status, 2, output.stderr)
        XCTAssertTrue(output.stderr.contains("sometimes"), output.stderr)
        XCTAssertEqual(try harness.property(H.extensionInterface, "ResumePlaces") as? Bool, true, "nothing reached the service")
    }
}
