import Foundation
import TestSupport
import XCTest

/// `tonearm linear` against a real tonearmd: the extension's LinearPlayback set and printed, shown
/// by `status`, kept across a restart; and what seek, next and rate say while it is on (the
/// service's refusal, status 1, and how to turn it off), while prev and pause still work.
final class LinearCommandTests: CLITestCase {
    typealias H = CLIHarness

    func json() throws -> [String: Any] {
        let text = try harness.ok("status", "--json")
        return try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
    }

    func testLinearIsSetShownRefusesSeekNextAndRateAndIsKept() throws {
        let a = try track("a", title: "Tone A"), b = try track("b", title: "Tone B")
        try harness.startService()
        XCTAssertEqual(try harness.ok("linear"), "off\n")
        XCTAssertEqual(try json()["linear"] as? Bool, false)
        XCTAssertFalse(try harness.ok("status").contains("linear"), "shown only when on")
        try harness.ok("play", a.path, b.path)
        try harness.waitForStatus("Playing")
        try harness.waitForReady(title: "Tone A")

        try harness.ok("linear", "on")
        XCTAssertEqual(try harness.property(H.extensionInterface, "LinearPlayback") as? Bool, true)
        XCTAssertEqual(try harness.ok("linear"), "on\n")
        XCTAssertEqual(try json()["linear"] as? Bool, true)
        let (text, lines) = try harness.statusLines()
        XCTAssertTrue(lines.contains(["linear", "on: no seeking, next or rate change"]), text)
        XCTAssertEqual(try harness.ok("status", "--format", "{linear}"), "on\n")

        for refused in [["seek", "+5"], ["seek", "0:10"], ["next"], ["rate", "1.5"]] {
            let output = try harness.tonearm(refused)
            XCTAssertEqual(output.status, 1, "\(refused): \(output.stderr)")
            XCTAssertTrue(output.stderr.contains("linear playback is on"), "\(refused): \(output.stderr)")
            XCTAssertTrue(output.stderr.contains("(io.github.tonearm.Error.LinearPlayback)"), "\(refused): \(output.stderr)")
            XCTAssertTrue(output.stderr.contains("turn it off with `tonearm linear off`"), "\(refused): \(output.stderr)")
        }
        XCTAssertEqual(try harness.playerctl("metadata", "xesam:title"), "Tone A", "next went nowhere")
        XCTAssertEqual(try harness.property(H.player, "Rate") as? Double, 1)
        try harness.ok("pause")
        try harness.waitForStatus("Paused")
        try harness.ok("prev")

        try harness.restartService()
        XCTAssertEqual(try harness.ok("linear"), "on\n", "kept across a restart")
        try harness.ok("linear", "off")
        XCTAssertEqual(try harness.property(H.extensionInterface, "LinearPlayback") as? Bool, false)
        try harness.ok("next")
        try harness.wait(for: "the second track") { try harness.playerctl("metadata", "xesam:title") == "Tone B" }
    }

    func testAnythingButOnOrOffIsAUsageError() throws {
        try harness.startService()
        let output = try harness.tonearm(["linear", "maybe"])
        XCTAssertEqual(output.status, 2, output.stderr)
        XCTAssertTrue(output.stderr.contains("maybe"), output.stderr)
        XCTAssertEqual(try harness.property(H.extensionInterface, "LinearPlayback") as? Bool, false, "nothing reached the service")
    }
}
