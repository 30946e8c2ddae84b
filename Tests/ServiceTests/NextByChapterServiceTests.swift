import Foundation
import TestSupport
import XCTest

/// NextByChapter against a real tonearmd and engine, with playerctl as the media keys: inside a WAV
/// whose cue points are its chapters, next and previous move by chapter (exact seeks, Seeked at the
/// chapter's start, the same track and title); at its edges they move by track; CanGoNext follows.
final class NextByChapterServiceTests: ServiceTestCase {
    typealias H = ServiceHarness

    func testNextAndPreviousMoveByChapterInsideATrackThatHasThem() throws {
        let first = try tagged("first", title: "First", seconds: 30)
        let book = try media.generator.wavWithCues("book", seconds: 60, cues: [(0, "One"), (20, "Two"), (40, "Three")])
        let last = try tagged("last", title: "Last", seconds: 30)
        try harness.startPlaying([first, book, last])
        let tracks = try harness.tracks
        XCTAssertEqual(tracks.count, 3)
        XCTAssertEqual(try harness.get(H.extensionInterface, "NextByChapter").bool, false, "off by default")
        var mark = harness.mark()
        try harness.set(H.extensionInterface, "NextByChapter", "b", "true")
        try harness.waitForChange(H.extensionInterface, "NextByChapter", from: mark) { $0["NextByChapter"]?.bool == true }

        try harness.playerctl("next")  // First has no chapters: the next track
        try harness.waitForTrack(tracks[1])
        try harness.waitForItemStatus("readyToPlay")
        try harness.playerctl("pause")
        try harness.waitForStatus("Paused")
        try harness.waitForChange(H.extensionInterface, "Chapters", from: mark) { $0["Chapters"]?.array?.count == 3 }
        let title = try harness.playerctl("metadata", "xesam:title")

        mark = harness.mark()
        try harness.playerctl("next")
        XCTAssertEqual(try harness.waitForSeeked(from: mark), 20_000_000, "the next chapter's start")
        XCTAssertEqual(try harness.trackID, tracks[1], "the same track")
        XCTAssertEqual(try harness.playerctl("metadata", "xesam:title"), title, "xesam:title stays the track's")
        try harness.waitForChange(H.extensionInterface, "CurrentChapter 1", from: mark) { $0["CurrentChapter"]?.int64 == 1 }
        mark = harness.mark()
        try harness.playerctl("next")
        XCTAssertEqual(try harness.waitForSeeked(from: mark), 40_000_000)
        XCTAssertEqual(try harness.get(H.player, "CanGoNext").bool, true, "the last chapter: the next track is there")
        try harness.playerctl("next")
        try harness.waitForTrack(tracks[2])
        XCTAssertEqual(try harness.playbackStatus, "Paused", "paused as it was")

        try harness.playerctl("previous")  // Last, within 3 s: the track before, at its start
        try harness.waitForTrack(tracks[1])
        try harness.waitForItemStatus("readyToPlay")
        mark = harness.mark()
        try harness.playerctl("position", "25")
        XCTAssertEqual(try harness.waitForSeeked(from: mark), 25_000_000)
        mark = harness.mark()
        try harness.playerctl("previous")
        XCTAssertEqual(try harness.waitForSeeked(from: mark), 20_000_000, "more than 3 s in: the chapter's start")
        mark = harness.mark()
        try harness.playerctl("previous")
        XCTAssertEqual(try harness.waitForSeeked(from: mark), 0, "within 3 s: the chapter before")
        XCTAssertEqual(try harness.trackID, tracks[1])
        try harness.playerctl("previous")
        try harness.waitForTrack(tracks[0])  // the first chapter within 3 s: the track before

        mark = harness.mark()
        try harness.set(H.extensionInterface, "NextByChapter", "b", "false")
        try harness.waitForChange(H.extensionInterface, "NextByChapter off", from: mark) { $0["NextByChapter"]?.bool == false }
    }
}
