import Foundation
import TestSupport
import TonearmClient
import XCTest

/// `stop-after` and `sleep` against a real tonearmd: what the extension holds afterwards, what
/// `status` and `status --json` show, and the usage errors (status 2, the value named).
final class SleepCommandTests: CLITestCase {
    typealias H = CLIHarness

    func json() throws -> [String: Any] {
        let text = try harness.ok("status", "--json")
        return try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
    }

    func testStopAfterAndSleepAreSetShownAndCancelled() throws {
        try harness.startService()
        var status = try json()
        XCTAssertEqual(status["stopAfter"] as? Bool, false)
        XCTAssertTrue(status["sleep"] is NSNull, "no timer: null, and the key is there")
        XCTAssertFalse(try harness.ok("status").contains("sleep"))

        try harness.ok("stop-after")
        XCTAssertEqual(try harness.property(H.extensionInterface, "StopAfterCurrent") as? Bool, true, "on by default")
        try harness.ok("sleep", "30m")
        status = try json()
        XCTAssertEqual(status["stopAfter"] as? Bool, true)
        XCTAssertEqual(status["sleep"] as? Double ?? 0, 1800, accuracy: 2)
        let text = try harness.ok("status")
        XCTAssertTrue(text.contains("stop     after this track"), text)
        XCTAssertTrue(text.contains("sleep    in 29:5") || text.contains("sleep    in 30:00"), text)

        try harness.ok("sleep", "1h30m")
        XCTAssertEqual(try json()["sleep"] as? Double ?? 0, 5400, accuracy: 2, "a new timer replaces the old")
        try harness.ok("sleep", "off")
        try harness.ok("stop-after", "off")
        status = try json()
        XCTAssertTrue(status["sleep"] is NSNull)
        XCTAssertEqual(status["stopAfter"] as? Bool, false)
        XCTAssertEqual((try harness.property(H.extensionInterface, "SleepTimerDeadline") as? NSNumber)?.int64Value, 0)
    }

    func testBadSleepTimesAreUsageErrors() throws {
        try harness.startService()
        for bad in ["soon", "0", "0m", "25h", "1h30", "30mm", "m", "1e9", "99999999999999999999999", "1.5m"] {
            let output = try harness.tonearm(["sleep", bad])
            XCTAssertEqual(output.status, 2, "\(bad): \(output.stderr)")
            XCTAssertTrue(output.stderr.contains(bad), "names \(bad): \(output.stderr)")
        }
        // an empty time, and a negative one (which the parser takes for an option), are usage errors too
        for bad in [[""], ["-5m"], []] {
            XCTAssertEqual(try harness.tonearm(["sleep"] + bad).status, 2, "\(bad)")
        }
        let output = try harness.tonearm(["stop-after", "maybe"])
        XCTAssertEqual(output.status, 2, output.stderr)
        XCTAssertEqual((try harness.property(H.extensionInterface, "SleepTimerDeadline") as? NSNumber)?.int64Value, 0, "nothing reached the service")
    }

    func testSleepLengthsParse() throws {
        XCTAssertEqual(try SleepLength.parse("90s"), .seconds(90))
        XCTAssertEqual(try SleepLength.parse("30m"), .seconds(1800))
        XCTAssertEqual(try SleepLength.parse("1h"), .seconds(3600))
        XCTAssertEqual(try SleepLength.parse("1h30m"), .seconds(5400))
        XCTAssertEqual(try SleepLength.parse("45"), .seconds(2700), "a bare number is minutes")
        XCTAssertEqual(try SleepLength.parse("24h"), .seconds(86_400), "a day is the longest")
    }
}
