import GStreamer
import XCTest

final class StringRepairTests: XCTestCase {
    func testInvalidUTF8FromCIsRepairedAtTheBoundary() {
        let bytes: [UInt8] = Array("ok ".utf8) + [0x80, 0xC0, 0xAF, 0x20, 0xE2, 0x82] + [0]
        let repaired = bytes.withUnsafeBufferPointer {
            $0.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) { String(utf8Repairing: $0) }
        }
        XCTAssertTrue(repaired.hasPrefix("ok "))
        XCTAssertTrue(repaired.contains("\u{FFFD}"))
        XCTAssertEqual(String(decoding: Array(repaired.utf8), as: UTF8.self), repaired)
    }
}
