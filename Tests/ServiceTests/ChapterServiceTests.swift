import Foundation
import TestSupport
import XCTest

/// Chapters against a real tonearmd and engine (issue 40, item 3): a WAV whose cue points are its
/// chapters, read over D-Bus with busctl and dbus-send: Chapters and CurrentChapter announced while
/// it plays, CurrentChapter announced as playback crosses a boundary, GoToChapter an exact seek
/// (Seeked at the chapter's start), and NoSuchChapter for indexes it does not have.
final class ChapterServiceTests: ServiceTestCase {
    typealias H = ServiceHarness

    func testChaptersAnnouncedCrossedAndGoneTo() throws {
        let file = try media.generator.wavWithCues("book", seconds: 6, cues: [(0, "Prologue"), (1.5, "Middle"), (4, "Epilogue")])
        var mark = harness.mark()
        try harness.startPlaying([file])
        try harness.waitForChange(H.extensionInterface, "Chapters", from: mark) { $0["Chapters"]?.array?.count == 3 }
        try harness.waitForChange(H.extensionInterface, "CurrentChapter 1 as playback crosses 1.5 s", from: mark) {
            $0["CurrentChapter"]?.int64 == 1
        }
        let chapters = try harness.get(H.extensionInterface, "Chapters")
        XCTAssertEqual(chapters.type, "a(xxs)")
        let rows = try XCTUnwrap(chapters.data as? [[Any]], "\(chapters)")
        XCTAssertEqual(rows.map { $0.count == 3 ? ($0[2] as? String) ?? "?" : "?" }, ["Prologue", "Middle", "Epilogue"])
        XCTAssertEqual(rows.map { Typed.integer($0[0]) }, [0, 1_500_000, 4_000_000])
        XCTAssertEqual(rows.map { Typed.integer($0[1]) }, [1_500_000, 4_000_000, 6_000_000], "ends: the next start, then the length")
        let crossings = harness.propertiesChanged(H.extensionInterface, from: mark).compactMap { $0.changed["CurrentChapter"]?.int64 }
        XCTAssertEqual(crossings, [0, 1], "each chapter announced once")

        try harness.playerctl("pause")
        try harness.waitForStatus("Paused")
        mark = harness.mark()
        try harness.call(H.extensionInterface, "GoToChapter", "i", ["2"])
        XCTAssertEqual(try harness.waitForSeeked(from: mark), 4_000_000, "an exact seek to the chapter's start")
        try harness.waitForChange(H.extensionInterface, "CurrentChapter 2", from: mark) { $0["CurrentChapter"]?.int64 == 2 }
        XCTAssertEqual(try harness.get(H.extensionInterface, "CurrentChapter").int64, 2)
        XCTAssertEqual(try harness.playbackStatus, "Paused", "a seek while paused stays paused")

        for bad in ["3", "-1", "2147483647", "-2147483648"] {
            let reply = try XCTUnwrap(try harness.errorReply(H.extensionInterface, "GoToChapter", ["int32:\(bad)"]), "GoToChapter(\(bad))")
            XCTAssertEqual(reply.name, H.errorPrefix + "NoSuchChapter", "\(bad): \(reply.message)")
            XCTAssertTrue(reply.message.contains("chapters 0 to 2"), reply.message)
        }
        try harness.ping()
        XCTAssertEqual(try harness.position, 4_000_000, "nothing moved")
    }

    func testATrackWithoutChaptersHasNone() throws {
        try harness.startPlaying([try short()])
        XCTAssertEqual(try harness.get(H.extensionInterface, "CurrentChapter").int64, -1)
        XCTAssertEqual((try harness.get(H.extensionInterface, "Chapters").data as? [Any])?.count, 0)
        let reply = try XCTUnwrap(try harness.errorReply(H.extensionInterface, "GoToChapter", ["int32:0"]))
        XCTAssertEqual(reply.name, H.errorPrefix + "NoSuchChapter")
        XCTAssertTrue(reply.message.contains("no chapters"), reply.message)
    }
}
