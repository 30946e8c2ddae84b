import Foundation
import TestSupport
import XCTest

/// Lyrics against a real tonearmd and engine (issue 40, item 6): `xesam:asText` from an MP3's
/// ID3 `USLT`, and `SyncedLyrics` from an `.lrc` beside an Ogg file, its offset applied and a
/// malformed line left out, read over D-Bus.
final class LyricsServiceTests: ServiceTestCase {
    typealias H = ServiceHarness

    func testEmbeddedLyricsAreAsText() throws {
        var tags = MediaGenerator.Tags(title: "Sung")
        tags.lyrics = "First verse\nsecond line"
        let file = try media.generator.tone("sung", format: .mp3, seconds: 3, tags: tags)
        try harness.startPlaying([file])
        let deadline = Date().addingTimeInterval(10)
        while try harness.metadata["xesam:asText"] == nil, Date() < deadline { usleep(50_000) }
        XCTAssertEqual(try harness.metadata["xesam:asText"]?.string, "First verse\nsecond line")
        XCTAssertEqual((try harness.get(H.extensionInterface, "SyncedLyrics").data as? [Any])?.count, 0, "no .lrc: none synced")
    }

    func testSidecarGivesSyncedLyricsAndText() throws {
        let file = try media.generator.tone("song", format: .ogg, seconds: 3)
        try "[ar:Someone]\n[offset:+100]\n[00:00.60]one\n[0a:01.00]bad minutes\n[00:01.60][00:02.10]two\n"
            .write(to: media.generator.url("song.lrc"), atomically: true, encoding: .utf8)
        let mark = harness.mark()
        try harness.startPlaying([file])
        try harness.waitForChange(H.extensionInterface, "SyncedLyrics", from: mark) { $0["SyncedLyrics"]?.array?.count == 3 }
        let synced = try harness.get(H.extensionInterface, "SyncedLyrics")
        XCTAssertEqual(synced.type, "a(xs)")
        let rows = try XCTUnwrap(synced.data as? [[Any]], "\(synced)")
        XCTAssertEqual(rows.map { Typed.integer($0[0]) }, [500_000, 1_500_000, 2_000_000])
        XCTAssertEqual(rows.map { $0[1] as? String }, ["one", "two", "two"])
        XCTAssertEqual(try harness.metadata["xesam:asText"]?.string, "one\n[0a:01.00]bad minutes\ntwo",
                       "no lyrics in the file: the sidecar's text")
    }
}
