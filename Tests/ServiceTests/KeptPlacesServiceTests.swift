import Foundation
import TestSupport
import XCTest

/// A place kept per long item (issue 40, item 4) against a real tonearmd and engine: a long track
/// left for another starts where it was left when opened again, also after tonearmd was killed;
/// ResumePlaces false starts it at 0. "Long" is 30 s here (TONEARM_RESUME_THRESHOLD), the track
/// 60 s, so the test does not encode 20 minutes of media. Finishing forgets the place.
final class KeptPlacesServiceTests: ServiceTestCase {
    typealias H = ServiceHarness
    let environment = ["TONEARM_RESUME_THRESHOLD": "30"]

    func resumedFrom() throws -> Int64 { try XCTUnwrap(harness.get(H.extensionInterface, "ResumedFrom").int64) }

    /// Opens `file` and, when it resumes, waits for its Seeked; returns ResumedFrom.
    func open(_ file: URL) throws -> Int64 {
        let mark = harness.mark()
        try harness.call(H.player, "OpenUri", "s", [file.absoluteString])
        let resumed = try resumedFrom()
        if resumed > 0 { _ = try harness.waitForSeeked(from: mark) }
        try harness.waitForStatus("Playing")
        return resumed
    }

    func testALongTrackResumesWhenOpenedAgainAlsoAfterAKillNotWithTheSettingOffNorOnceFinished() throws {
        let long = try short("kept-long", seconds: 60, frequency: 330)
        let other = try short("kept-other", seconds: 30, frequency: 550)
        let first = try harness.start([long.path], environment: environment)
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        XCTAssertEqual(try harness.get(H.extensionInterface, "ResumePlaces").data as? Bool, true)
        XCTAssertEqual(try resumedFrom(), 0, "a first play starts at its start")
        let track = try XCTUnwrap(harness.trackID)
        var mark = harness.mark()
        try harness.call(H.player, "SetPosition", "ox", [track, "40000000"])
        _ = try harness.waitForSeeked(from: mark)

        // left for another track, opened again: at 40 s (and a little more, as it played on)
        XCTAssertEqual(try open(other), 0)
        let resumed = try open(long)
        XCTAssertGreaterThanOrEqual(resumed, 40_000_000)
        XCTAssertLessThan(resumed, 45_000_000)
        XCTAssertGreaterThanOrEqual(try harness.position, 40_000_000, "the position is there")

        // SIGKILL while it plays, after a checkpoint; started again, the other track opened, then it
        try harness.call(H.player, "Pause")
        try harness.waitForStatus("Paused")
        let pausedAt = try harness.position
        harness.exitExpected.insert(first.pid)
        Foundation.kill(first.pid, SIGKILL)
        XCTAssertEqual(first.waitForExit(timeout: 10), SIGKILL)
        _ = try harness.start(environment: environment)
        XCTAssertEqual(try open(other), 0)
        let again = try open(long)
        XCTAssertGreaterThanOrEqual(again, pausedAt - 1_000_000, "where it was paused (\(pausedAt) µs) before the kill")
        XCTAssertLessThanOrEqual(again, pausedAt + 1_000_000)

        // the setting off: from its start
        try harness.set(H.extensionInterface, "ResumePlaces", "b", "false")
        XCTAssertEqual(try open(other), 0)
        XCTAssertEqual(try open(long), 0, "ResumePlaces false starts it at 0")
        XCTAssertLessThan(try harness.position, 10_000_000)

        // on again (while the other plays: turned on at the long one's start, that start would be
        // its place, which forgets it): the place kept before is there; played to its end, forgotten
        XCTAssertEqual(try open(other), 0)
        try harness.set(H.extensionInterface, "ResumePlaces", "b", "true")
        XCTAssertGreaterThan(try open(long), 0, "the place kept before it was off stays")
        let current = try XCTUnwrap(harness.trackID)
        mark = harness.mark()
        try harness.call(H.player, "SetPosition", "ox", [current, "57000000"])
        _ = try harness.waitForSignal(H.extensionInterface, "PlayedToEnd", from: mark, timeout: 15)
        XCTAssertEqual(try open(long), 0, "finished: from its start")
    }
}
