import Foundation
import TestSupport
import XCTest

/// `tonearm chapters` and `tonearm chapter` against a real tonearmd, on a WAV whose cue points are
/// its chapters: the list (numbered from 1, the current one marked), `status` in its three forms,
/// next, previous (to the chapter's start past 3 s, else the one before) and N, and what is refused.
final class ChapterCommandTests: CLITestCase {
    typealias H = CLIHarness

    func integer(_ interface: String, _ name: String) throws -> Int {
        try XCTUnwrap((try harness.property(interface, name) as? NSNumber)?.intValue, name)
    }

    func currentChapter() throws -> Int { try integer(H.extensionInterface, "CurrentChapter") }

    func waitForChapter(_ index: Int) throws {
        try harness.wait(for: "CurrentChapter \(index)") { try currentChapter() == index }
    }

    func testChaptersAreListedShownAndGoneTo() throws {
        let book = try chaptered("book", seconds: 60, cues: [(0, "Prologue"), (20, "Middle"), (40, "")])
        try harness.startService()
        XCTAssertEqual(try harness.ok("chapters"), "no chapters\n", "nothing current: nothing to show, status 0")
        try harness.ok("play", book.path)
        try harness.waitForReady()
        try harness.ok("pause")
        try harness.waitForStatus("Paused")
        try harness.wait(for: "Chapters") { (try harness.property(H.extensionInterface, "Chapters") as? [Any])?.count == 3 }
        try harness.ok("seek", "0")
        try waitForChapter(0)

        XCTAssertEqual(try harness.ok("chapters"), "* 1  0:00  Prologue\n  2  0:20  Middle\n  3  0:40\n")
        let (text, lines) = try harness.statusLines()
        XCTAssertTrue(lines.contains(["chapter", "1/3: Prologue"]), text)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try harness.ok("status", "--json").utf8)) as? [String: Any])
        let chapter = try XCTUnwrap(json["chapter"] as? [String: Any], "\(json)")
        XCTAssertEqual(chapter["number"] as? Int, 1)
        XCTAssertEqual(chapter["count"] as? Int, 3)
        XCTAssertEqual(chapter["title"] as? String, "Prologue")
        XCTAssertEqual(try harness.ok("status", "--format", "[{chapter}]"), "[1/3: Prologue]\n")

        try harness.ok("chapter", "next")
        try waitForChapter(1)
        XCTAssertEqual(try harness.ok("chapters"), "  1  0:00  Prologue\n* 2  0:20  Middle\n  3  0:40\n")
        try harness.ok("chapter", "3")
        try waitForChapter(2)
        XCTAssertEqual(try harness.ok("status", "--format", "{chapter}"), "3/3\n", "no title: the number only")
        let last = try harness.tonearm(["chapter", "next"])
        XCTAssertEqual(last.status, 1, last.stderr)
        XCTAssertEqual(last.stderr, "tonearm: this is the last chapter (3)\n")

        // within 3 s of the chapter's start: the chapter before
        try harness.ok("chapter", "previous")
        try waitForChapter(1)
        XCTAssertEqual(try integer(H.player, "Position"), 20_000_000)
        // more than 3 s into it: its start
        try harness.ok("seek", "0:25")
        try harness.wait(for: "position 25 s") { try integer(H.player, "Position") == 25_000_000 }
        try harness.ok("chapter", "prev")
        try harness.wait(for: "back to 20 s") { try integer(H.player, "Position") == 20_000_000 }
        XCTAssertEqual(try currentChapter(), 1)
        XCTAssertEqual(try harness.playerctl("status"), "Paused", "going to a chapter while paused stays paused")

        let past = try harness.tonearm(["chapter", "4"])
        XCTAssertEqual(past.status, 1, past.stderr)
        XCTAssertEqual(past.stderr, "tonearm: no chapter 4: the current track has 3\n")
        for bad in ["0", "-1", "soon", "99999999999999999999"] {
            let output = try harness.tonearm(["chapter", bad])
            XCTAssertEqual(output.status, 2, "\(bad): \(output.stderr)")
        }

        try harness.ok("linear", "on")
        let linear = try harness.tonearm(["chapter", "1"])
        XCTAssertEqual(linear.status, 1, linear.stderr)
        XCTAssertTrue(linear.stderr.contains("(io.github.tonearm.Error.LinearPlayback)"), linear.stderr)
        XCTAssertTrue(linear.stderr.contains("turn it off with `tonearm linear off`"), linear.stderr)
        XCTAssertEqual(try currentChapter(), 1, "nothing moved")
    }

    func testNextByChapterIsSetPrintedAndMovesNextByChapter() throws {
        let book = try chaptered("book", seconds: 60, cues: [(0, "Prologue"), (20, "Middle"), (40, "")])
        try harness.startService()
        XCTAssertEqual(try harness.ok("next-by-chapter"), "off\n")
        try harness.ok("next-by-chapter", "on")
        XCTAssertEqual(try harness.property(H.extensionInterface, "NextByChapter") as? Bool, true)
        XCTAssertEqual(try harness.ok("next-by-chapter"), "on\n")
        try harness.ok("play", book.path)
        try harness.waitForReady()
        try harness.ok("pause")
        try harness.waitForStatus("Paused")
        try harness.wait(for: "Chapters") { (try harness.property(H.extensionInterface, "Chapters") as? [Any])?.count == 3 }
        try harness.ok("seek", "0")
        try waitForChapter(0)
        try harness.ok("next")
        try waitForChapter(1)
        try harness.ok("prev")
        try waitForChapter(0)
        XCTAssertEqual(try harness.tonearm(["next-by-chapter", "maybe"]).status, 2)
    }

    func testATrackWithoutChaptersHasNone() throws {
        let tone = try track("a", title: "Tone A")
        try harness.startService()
        try harness.ok("play", tone.path)
        try harness.waitForReady(title: "Tone A")
        XCTAssertEqual(try harness.ok("chapters"), "no chapters\n")
        XCTAssertFalse(try harness.ok("status").contains("chapter"))
        XCTAssertEqual(try harness.ok("status", "--format", "[{chapter}]"), "[]\n")
        for target in ["next", "previous", "1"] {
            let output = try harness.tonearm(["chapter", target])
            XCTAssertEqual(output.status, 1, "\(target): \(output.stderr)")
            XCTAssertEqual(output.stderr, "tonearm: the current track has no chapters\n", target)
        }
    }
}
