import Foundation
import TestSupport
import XCTest

/// `tonearm crossfade` against a real tonearmd: what the extension then says, what `status`
/// prints, what is refused (by the CLI and by the service), and what a restart keeps.
final class CrossfadeCommandTests: CLITestCase {
    typealias H = CLIHarness

    func testTheCrossfadeIsSetShownRefusedAndKept() throws {
        try harness.startService()
        XCTAssertEqual(try harness.ok("crossfade"), "off\n")
        try harness.ok("crossfade", "2.5", "--albums")
        XCTAssertEqual(try harness.property(H.extensionInterface, "Crossfade") as? Double, 2.5)
        XCTAssertEqual(try harness.property(H.extensionInterface, "CrossfadeAlbums") as? Bool, true)
        XCTAssertEqual(try harness.ok("crossfade"), "2.5 s, albums too\n")
        try harness.ok("crossfade", "--no-albums")
        XCTAssertEqual(try harness.ok("crossfade"), "2.5 s\n")

        for arguments in [["crossfade", "13"], ["crossfade", "-1"], ["crossfade", "nan"], ["crossfade", "long"]] {
            let output = try harness.tonearm(arguments)
            XCTAssertEqual(output.status, 2, "\(arguments): \(output.stderr)")
            XCTAssertFalse(output.stderr.isEmpty, "\(arguments) says why")
        }
        // the service refuses what the CLI would not send: InvalidArgs, nothing changed
        for bad in ["12.5", "-0.5", "nan", "inf"] {
            let output = try Tool.run("busctl", ["--address=\(harness.bus.address)", "set-property", "--", H.name, H.path,
                                                 H.extensionInterface, "Crossfade", "d", bad])
            XCTAssertNotEqual(output.status, 0, "Crossfade = \(bad) is refused")
            XCTAssertTrue(output.stderr.contains("Crossfade is from 0"), output.stderr)
        }
        XCTAssertEqual(try harness.property(H.extensionInterface, "Crossfade") as? Double, 2.5)

        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try harness.ok("status", "--json").utf8)) as? [String: Any])
        XCTAssertEqual((json["crossfade"] as? [String: Any])?["seconds"] as? Double, 2.5)
        XCTAssertEqual((json["crossfade"] as? [String: Any])?["albums"] as? Bool, false)
        let (human, lines) = try harness.statusLines()
        XCTAssertTrue(lines.contains(["crossfade", "2.5 s"]), human)

        // kept across a restart
        try harness.restartService()
        XCTAssertEqual(try harness.ok("crossfade"), "2.5 s\n")
        try harness.ok("crossfade", "off")
        XCTAssertEqual(try harness.property(H.extensionInterface, "Crossfade") as? Double, 0)
    }
}
