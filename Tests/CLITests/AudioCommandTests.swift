import Foundation
import TestSupport
import XCTest

/// `tonearm replaygain` and `tonearm eq` against a real tonearmd: what the extension then says,
/// what `status` prints, what is refused, and what a restart keeps.
final class AudioCommandTests: CLITestCase {
    typealias H = CLIHarness

    func testReplayGainAndTheEqualizerAreSetShownRefusedAndKept() throws {
        try harness.startService()
        XCTAssertEqual(try harness.ok("replaygain"), "off\n")
        XCTAssertEqual(try harness.ok("eq"), "flat\n")
        try harness.ok("replaygain", "auto", "--preamp", "2.5")
        XCTAssertEqual(try harness.property(H.extensionInterface, "ReplayGainMode") as? String, "auto")
        XCTAssertEqual(try harness.property(H.extensionInterface, "ReplayGainPreamp") as? Double, 2.5)
        XCTAssertEqual(try harness.ok("replaygain"), "auto, pre-amp +2.5 dB\n")

        try harness.ok("eq", "rock")
        XCTAssertEqual(try harness.property(H.extensionInterface, "EqualizerPreset") as? String, "rock")
        XCTAssertEqual(try harness.ok("eq"), "rock: +5 +4 +2 -1 -2 -1 +1 +3 +4 +5\n")
        try harness.ok("eq", "1", "2", "3", "4", "5", "6", "7", "8", "9", "-12")
        XCTAssertEqual(try harness.property(H.extensionInterface, "Equalizer") as? [Double], [1, 2, 3, 4, 5, 6, 7, 8, 9, -12])
        XCTAssertEqual(try harness.property(H.extensionInterface, "EqualizerPreset") as? String, "")
        try harness.ok("eq", "save", "night")
        XCTAssertEqual(try harness.ok("eq", "list").split(separator: "\n").map(String.init),
                       ["  flat", "  rock", "  pop", "  jazz", "  classical", "  bass", "  treble", "  vocal", "* night"])

        // refused: by the CLI (usage, 2) or by the service (InvalidArgs, 1), nothing changed
        for (arguments, status) in [(["replaygain", "loud"], 2), (["replaygain", "--preamp", "16"], 2), (["eq", "1", "2"], 2),
                                    (["eq", "1", "2", "3", "4", "5", "6", "7", "8", "9", "13"], 2), (["eq", "nonesuch"], 1),
                                    (["eq", "save", "rock"], 1), (["eq", "delete", "rock"], 1)] {
            let output = try harness.tonearm(arguments)
            XCTAssertEqual(output.status, Int32(status), "\(arguments): \(output.stderr)")
            XCTAssertFalse(output.stderr.isEmpty, "\(arguments) says why")
        }
        XCTAssertEqual(try harness.property(H.extensionInterface, "EqualizerPreset") as? String, "night")

        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try harness.ok("status", "--json").utf8)) as? [String: Any])
        XCTAssertEqual((json["replaygain"] as? [String: Any])?["mode"] as? String, "auto")
        XCTAssertEqual((json["replaygain"] as? [String: Any])?["preamp"] as? Double, 2.5)
        XCTAssertEqual((json["equalizer"] as? [String: Any])?["preset"] as? String, "night")
        XCTAssertEqual((json["equalizer"] as? [String: Any])?["gains"] as? [Double], [1, 2, 3, 4, 5, 6, 7, 8, 9, -12])
        let (human, lines) = try harness.statusLines()
        XCTAssertTrue(lines.contains(["replaygain", "auto, pre-amp +2.5 dB"]), human)
        XCTAssertTrue(lines.contains(["equalizer", "night: +1 +2 +3 +4 +5 +6 +7 +8 +9 -12"]), human)

        // kept across a restart
        try harness.restartService()
        XCTAssertEqual(try harness.ok("replaygain"), "auto, pre-amp +2.5 dB\n")
        XCTAssertEqual(try harness.ok("eq"), "night: +1 +2 +3 +4 +5 +6 +7 +8 +9 -12\n")
        try harness.ok("eq", "delete", "night")
        try harness.ok("eq", "flat")
        XCTAssertEqual(try harness.ok("eq", "list").split(separator: "\n").last, "  vocal")
        XCTAssertEqual(try harness.ok("eq"), "flat\n")
    }
}
