import Foundation
import EngineLink
@testable import PlayerEngine
import GStreamer
import PlayerModel
import TestSupport
import XCTest

/// Chapters read from real files by the real engine: a WAV's cue points through GStreamer's table
/// of contents, an MP3's ID3v2 CHAP frames through the engine's own reader; and the current
/// chapter announced as playback crosses a boundary, once, by the player's one timer.
final class ChapterTests: XCTestCase {
    var media: MediaGenerator!

    override func setUpWithError() throws {
        media = try MediaGenerator()
    }

    func chapters(of file: URL, pipeline: EngineConfiguration.PipelineKind) throws -> [Chapter] {
        let harness = try Harness(pipeline: pipeline)
        let id = try harness.enqueue(file)[0]
        harness.player.pause()
        return try harness.recorder.wait(for: "the chapters of \(file.lastPathComponent)") { event in
            guard case .chaptersChanged(id, let chapters) = event, !chapters.isEmpty else { return nil }
            return chapters
        }
    }

    func testAWAVFilesCuePointsAreItsChapters() throws {
        let file = try media.wavWithCues("cues", seconds: 3, cues: [(0, "Intro"), (1, "Middle"), (2, "Ende ü")])
        try onBothPipelines { kind in
            let chapters = try self.chapters(of: file, pipeline: kind)
            XCTAssertEqual(chapters.map(\.title), ["Intro", "Middle", "Ende ü"], "\(kind)")
            XCTAssertEqual(chapters.map(\.start), [.zero, .seconds(1), .seconds(2)], "\(kind)")
        }
    }

    func testAnMP3sID3ChaptersAreReadInStartOrder() throws {
        let file = try media.tone("book", format: .mp3, seconds: 2)
        try ID3Writer.prependChapters([(0, 700, "One"), (700, 1400, "Two"), (1400, 2000, "Three")], to: file)
        try onBothPipelines { kind in
            let chapters = try self.chapters(of: file, pipeline: kind)
            XCTAssertEqual(chapters, [Chapter(start: .zero, end: .milliseconds(700), title: "One"),
                                      Chapter(start: .milliseconds(700), end: .milliseconds(1400), title: "Two"),
                                      Chapter(start: .milliseconds(1400), end: .milliseconds(2000), title: "Three")], "\(kind)")
        }
    }

    /// A real Matroska file with two editions and a nested chapter: the first edition's outermost
    /// chapters, as matroskademux's table of contents gives them (edition → chapter → chapter).
    func testAMatroskaFilesFirstEditionsOutermostChaptersAreItsChapters() throws {
        typealias C = MediaGenerator.MatroskaChapter
        let file = try media.matroskaWithChapters("book", seconds: 4, editions: [
            [C(0, 2, "One", children: [C(0.5, 1, "Inner")]), C(2, 3.5, "Two ü"), C(3.5, nil, "")],
            [C(0, nil, "Other edition")],
        ])
        try onBothPipelines { kind in
            let chapters = try self.chapters(of: file, pipeline: kind)
            XCTAssertEqual(chapters.map(\.title), ["One", "Two ü", ""], "\(kind)")
            XCTAssertEqual(chapters.map(\.start), [.zero, .seconds(2), .seconds(3.5)], "\(kind)")
            XCTAssertEqual(chapters.prefix(2).map(\.end), [.seconds(2), .seconds(3.5)], "\(kind)")
        }
    }

    /// Playing across a boundary announces the next chapter once; GoToChapter seeks exactly to a
    /// chapter's start (Seeked there) and announces it; a bad index is refused and nothing moves.
    func testTheCurrentChapterFollowsPlaybackAndGoToChapterSeeks() throws {
        let file = try media.wavWithCues("cues", seconds: 4, cues: [(0, "A"), (1, "B"), (3, "C")])
        let harness = try Harness(pipeline: .playbin3)
        let id = try harness.enqueue(file)[0]
        harness.player.play()
        _ = try harness.recorder.wait(for: "the chapters") { event -> Void? in
            if case .chaptersChanged(id, let chapters) = event, chapters.count == 3 { () } else { nil }
        }
        let crossed = try harness.recorder.wait(for: "chapter 1 as playback crosses 1 s", timeout: 10) { event -> Int? in
            if case .currentChapterChanged(1) = event { 1 } else { nil }
        }
        XCTAssertEqual(crossed, 1)
        XCTAssertEqual(harness.player.currentChapter, 1)
        let changes = harness.recorder.events.compactMap { if case .currentChapterChanged(let index) = $0 { index } else { nil } }
        XCTAssertEqual(changes, [0, 1], "each chapter announced once, in order")

        harness.player.pause()
        let from = harness.recorder.count
        try harness.player.goToChapter(2)
        let seeked = try harness.recorder.wait(for: "Seeked at chapter 2", from: from) { event in
            event.seekedPosition.flatMap { $0 >= .seconds(3) ? $0 : nil }
        }
        XCTAssertEqual(seeked, .seconds(3), "an exact seek to the chapter's start")
        XCTAssertEqual(harness.player.currentChapter, 2)
        XCTAssertTrue(harness.recorder.events[from...].contains(.currentChapterChanged(2)))

        XCTAssertThrowsError(try harness.player.goToChapter(3)) { error in
            XCTAssertEqual((error as? PlayerError)?.code, .noSuchChapter)
        }
        XCTAssertThrowsError(try harness.player.goToChapter(-1)) { error in
            XCTAssertEqual((error as? PlayerError)?.code, .noSuchChapter)
        }
    }

    // MARK: The readers alone

    func testATableOfContentsTakesTheFirstEditionsOutermostChapters() {
        let toc = [
            TocEntry(isAlternative: true, start: nil, stop: nil, title: "Edition 1", children: [
                TocEntry(start: 5_000_000_000, stop: 9_000_000_000, title: "Second", children: [
                    TocEntry(start: 6_000_000_000, stop: 7_000_000_000, title: "Inner"),
                ]),
                TocEntry(start: 0, stop: 5_000_000_000, title: nil),
            ]),
            TocEntry(isAlternative: true, start: nil, stop: nil, title: "Edition 2", children: [
                TocEntry(start: 0, stop: nil, title: "Other"),
            ]),
        ]
        XCTAssertEqual(ChapterReading.chapters(toc), [Chapter(start: .zero, end: .seconds(5), title: ""),
                                                      Chapter(start: .seconds(5), end: .seconds(9), title: "Second")])
    }

    func testID3ChaptersWithoutATableOfContentsAndHostileTags() throws {
        let file = try media.garbage("plain")
        try ID3Writer.prependChapters([(2000, 0, "Later"), (0, 2000, "First")], tableOfContents: false, to: file)
        XCTAssertEqual(ChapterReading.id3Chapters(path: file.path),
                       [Chapter(start: .zero, end: .seconds(2), title: "First"), Chapter(start: .seconds(2), end: nil, title: "Later")],
                       "sorted by start; an end before the start is none")
        // a CHAP whose size runs past the tag, a truncated tag, no tag: no chapters, no trap
        var tag: [UInt8] = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 30] + Array("CHAP".utf8) + [0, 0, 0x7f, 0x7f, 0, 0] + [0x61, 0]
        tag += [UInt8](repeating: 0xff, count: 10)
        XCTAssertEqual(ID3Chapters.parse(tag), [])
        XCTAssertEqual(ID3Chapters.parse(Array(tag.prefix(12))), [])
        XCTAssertEqual(ID3Chapters.parse(Array("RIFF....".utf8)), [])
        XCTAssertEqual(ID3Chapters.text([1, 0xff, 0xfe, 0x41, 0, 0x42, 0]), "AB", "UTF-16 with its byte order mark")
        XCTAssertEqual(ID3Chapters.text([0, 0xe9]), "é", "Latin-1")
        XCTAssertEqual(ID3Chapters.text([3, 0xff, 0x41]), "\u{FFFD}A", "bad UTF-8 repaired")
    }
}
