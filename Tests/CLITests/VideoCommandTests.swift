import Foundation
import TestSupport
import XCTest

/// `fullscreen`, `raise`, `pip` and `gravity` with no window (VideoGeometryTests run them with one,
/// on an X display): what needs a window is refused with status 1; the settings are kept for one.
final class VideoCommandTests: CLITestCase {
    typealias H = CLIHarness

    func testWithNoWindowFullscreenAndRaiseAreRefusedWhilePipAndGravityAreKept() throws {
        try harness.startService()
        for command in [["fullscreen"], ["fullscreen", "on"], ["fullscreen", "off"], ["raise"]] {
            let output = try harness.tonearm(command)
            XCTAssertEqual(output.status, 1, "\(command): \(output.stderr)")
            XCTAssertTrue(output.stderr.contains("there is no video window"), "\(command): \(output.stderr)")
        }
        try harness.ok("pip", "on")
        XCTAssertEqual(try harness.property(H.extensionInterface, "PictureInPicture") as? Bool, true)
        try harness.ok("pip")
        XCTAssertEqual(try harness.property(H.extensionInterface, "PictureInPicture") as? Bool, false, "toggled off")
        try harness.ok("pip", "toggle")
        XCTAssertEqual(try harness.property(H.extensionInterface, "PictureInPicture") as? Bool, true, "toggled on")
        try harness.ok("gravity", "fill")
        XCTAssertEqual(try harness.property(H.extensionInterface, "VideoGravity") as? String, "fill")

        for (arguments, named) in [(["gravity", "zoom"], "zoom"), (["gravity"], "gravity"), (["pip", "maybe"], "maybe"),
                                   (["fullscreen", "sideways"], "sideways")] {
            let output = try harness.tonearm(arguments)
            XCTAssertEqual(output.status, 2, "\(arguments): \(output.stderr)")
            XCTAssertTrue(output.stderr.contains(named), "\(arguments) names \(named): \(output.stderr)")
        }
        XCTAssertEqual(try harness.property(H.extensionInterface, "VideoGravity") as? String, "fill", "a bad value changed nothing")
        XCTAssertFalse(try harness.ok("status").contains("video"), "no video line without video")
    }
}
