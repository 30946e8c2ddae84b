import Foundation
import PlayerModel
import XCTest

/// The LRC parser (issue 40, item 6): time tags, several on a line, `[offset:]`, ID tags, plain
/// lines, and hostile input that must neither trap nor be taken for times.
final class LyricsParserTests: XCTestCase {
    func testTimesSeveralTagsOffsetAndIDTags() throws {
        let lyrics = try XCTUnwrap(Lyrics.parseLRC("""
            \u{FEFF}[ar:The Testers]
            [ti:Sine Song]
            [offset:+500]
            [00:01.00]First line
            [00:02.5][01:00.250]Chorus
            [00:03]
            [00:04:20]Colon fraction
            """))
        XCTAssertEqual(lyrics.lines.map(\.text), ["First line", "Chorus", "", "Colon fraction", "Chorus"])
        XCTAssertEqual(lyrics.lines.map(\.time), [.milliseconds(500), .milliseconds(2000), .milliseconds(2500),
                                                  .milliseconds(3700), .milliseconds(59_750)],
                       "sorted by time, a positive offset brings lines sooner")
        XCTAssertEqual(lyrics.text, "First line\nChorus\n\nColon fraction", "the file's order, no tags")
    }

    func testNegativeOffsetAndPlainText() throws {
        let synced = try XCTUnwrap(Lyrics.parseLRC("[offset:-250]\n[00:00.00]a"))
        XCTAssertEqual(synced.lines, [LyricLine(time: .milliseconds(250), text: "a")])
        let plain = try XCTUnwrap(Lyrics.parseLRC("[ar:x]\r\nno times here\r\n\r\n\r\nsecond verse\n"))
        XCTAssertEqual(plain.lines, [])
        XCTAssertEqual(plain.text, "no times here\n\nsecond verse")
        XCTAssertNil(Lyrics.parseLRC("[ar:x]\n[ti:y]\n\n"), "only ID tags: no lyrics")
        XCTAssertNil(Lyrics.parseLRC(""))
    }

    func testHostileInputNeitherTrapsNorPassesForTimes() throws {
        let hostile = """
            [99999999999999999999:00.00]huge minutes
            [9999:59.999]beyond 100 hours
            [00:61.00]sixty-one seconds
            [-1:00.00]negative
            [00:01.0000]four fraction digits
            00:05.00]missing open
            [00:06.00 missing close
            [offset:99999999999999999999999]
            [offset:abc]
            []
            [:]
            [00:07.00]kept
            """
        let lyrics = try XCTUnwrap(Lyrics.parseLRC(hostile))
        XCTAssertEqual(lyrics.lines, [LyricLine(time: .seconds(7), text: "kept")], "only the good time tag")
        XCTAssertTrue(lyrics.text.contains("[00:61.00]sixty-one seconds"), "a bad tag leaves its line as text: \(lyrics.text)")
        XCTAssertTrue(lyrics.text.contains("[00:06.00 missing close"))
        XCTAssertFalse(lyrics.text.contains("offset"), "an unreadable offset is still an ID tag")
        // a long run of brackets and a huge file are bounded
        _ = Lyrics.parseLRC(String(repeating: "[", count: 100_000))
        _ = Lyrics.parseLRC(String(repeating: "[00:00.00]", count: 50_000) + "x")
        let many = (0..<10_000).map { "[00:\(String(format: "%02d", $0 % 60)).00]line \($0)" }.joined(separator: "\n")
        let capped = try XCTUnwrap(Lyrics.parseLRC(many))
        XCTAssertEqual(capped.lines.count, Lyrics.maximumLines)
        XCTAssertLessThanOrEqual(capped.text.utf8.count, Lyrics.maximumBytes)
    }

    func testCappedCutsAtALineEnd() throws {
        let line = String(repeating: "x", count: 1000)
        let text = Array(repeating: line, count: 100).joined(separator: "\n")
        let capped = try XCTUnwrap(Lyrics.capped(text))
        XCTAssertLessThanOrEqual(capped.utf8.count, Lyrics.maximumBytes)
        XCTAssertEqual(capped.split(separator: "\n").last.map(String.init), line, "whole lines only")
        XCTAssertNil(Lyrics.capped(" \n\t "))
        let long = try XCTUnwrap(Lyrics.capped(String(repeating: "é", count: 40_000)))
        XCTAssertLessThanOrEqual(long.utf8.count, Lyrics.maximumBytes, "one long line: cut at a character")
    }

    /// Metadata never goes back: a later tag event without lyrics (a bitrate, a stream's title) keeps
    /// them; the file's own lyrics are xesam:asText before a sidecar's text, whichever came first.
    func testAMergeWithoutLyricsKeepsThemAndTheFilesOwnWin() throws {
        var metadata = Metadata()
        var sidecar = Metadata()
        sidecar.sidecarLyrics = try XCTUnwrap(Lyrics.parseLRC("[00:01.00]from the lrc"))
        metadata.merge(sidecar)
        XCTAssertEqual(metadata.lyricsText, "from the lrc")
        var embedded = Metadata()
        embedded.lyrics = "from the file"
        metadata.merge(embedded)
        var later = Metadata()
        later.bitrate = 128_000
        metadata.merge(later)
        XCTAssertEqual(metadata.lyricsText, "from the file")
        XCTAssertEqual(metadata.sidecarLyrics?.lines.map(\.text), ["from the lrc"], "still synced")
        metadata.merge(sidecar)
        XCTAssertEqual(metadata.lyricsText, "from the file", "a sidecar read later does not displace them")
    }
}
