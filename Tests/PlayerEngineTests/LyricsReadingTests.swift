import Foundation
import EngineLink
@testable import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

/// Lyrics read by the tag reader from files made for the test (issue 40, item 6): an MP3's ID3
/// `USLT`, an Ogg Vorbis comment `LYRICS` (GStreamer 1.22 hands both over unmapped), and an
/// `.lrc` beside a file; each reader method gives the same.
final class LyricsReadingTests: XCTestCase {
    var media: MediaGenerator!

    override func setUpWithError() throws {
        media = try MediaGenerator()
    }

    func read(_ file: URL, method: TagMetadataReader.Method) throws -> Metadata {
        let reader = TagMetadataReader(method: method, timeout: .seconds(10))
        let done = expectation(description: "read")
        let box = Box()
        reader.read(MediaURI(fileURL: file)) { result in
            box.set(result)
            done.fulfill()
        }
        wait(for: [done], timeout: 30)
        return try XCTUnwrap(box.value).get().metadata
    }

    func testEmbeddedLyricsOfMP3AndOgg() throws {
        var tags = MediaGenerator.Tags(title: "Sung")
        tags.lyrics = "Hello, world\nsecond line é"
        let mp3 = try media.tone("sung", format: .mp3, seconds: 1, tags: tags)
        tags.lyrics = "Ogg lyrics é"
        let ogg = try media.tone("sung", format: .ogg, seconds: 1, tags: tags)
        for method in TagMetadataReader.Method.allCases {
            XCTAssertEqual(try read(mp3, method: method).lyrics, "Hello, world\nsecond line é", "MP3 by \(method)")
            let oggTags = try read(ogg, method: method)
            XCTAssertEqual(oggTags.lyrics, "Ogg lyrics é", "Ogg by \(method)")
            XCTAssertNil(oggTags.sidecarLyrics)
        }
    }

    func testSidecarBesideTheFile() throws {
        let file = try media.tone("song", format: .ogg, seconds: 1)
        let lrc = "[ti:Song]\n[00:00.50]one\nbroken]line\n[00:01.25][00:02.00]two\n"
        try Data([0xEF, 0xBB, 0xBF] + Array(lrc.utf8)).write(to: media.url("song.lrc"))
        let metadata = try read(file, method: .pipeline)
        XCTAssertNil(metadata.lyrics)
        let lyrics = try XCTUnwrap(metadata.sidecarLyrics)
        XCTAssertEqual(lyrics.lines, [LyricLine(time: .milliseconds(500), text: "one"), LyricLine(time: .milliseconds(1250), text: "two"),
                                      LyricLine(time: .seconds(2), text: "two")])
        XCTAssertEqual(metadata.lyricsText, "one\nbroken]line\ntwo")
    }

    func testSidecarEncodingsAndNames() {
        XCTAssertEqual(LyricsSidecar.path(besides: "/a/b.c/song.mp3"), "/a/b.c/song.lrc")
        XCTAssertNil(LyricsSidecar.path(besides: "/a/b.c/noextension"))
        XCTAssertNil(LyricsSidecar.path(besides: "/a/.hidden"))
        XCTAssertNil(LyricsSidecar.path(besides: "/a/song.lrc"))
        XCTAssertEqual(LyricsSidecar.decode([0x63, 0x61, 0x66, 0xE9]), "café", "not UTF-8: Latin-1")
        XCTAssertEqual(LyricsSidecar.decode([0x63, 0x61, 0x66, 0xC3, 0xA9]), "café")
        XCTAssertEqual(LyricsSidecar.decode([0xFF, 0xFE, 0x61, 0x00, 0xE9, 0x00]), "aé", "UTF-16 with its mark")
    }

    func testUSLTFramesOfEachEncoding() {
        func frame(_ encoding: UInt8, _ body: [UInt8], flags: UInt8 = 0) -> Data {
            Data(Array("USLT".utf8) + [0, 0, 0, 0, 0, flags] + [encoding] + Array("eng".utf8) + body)
        }
        XCTAssertEqual(TagMapping.usltText(frame(0, [0x64, 0x00, 0x63, 0x61, 0x66, 0xE9])), "café", "Latin-1 after a description")
        XCTAssertEqual(TagMapping.usltText(frame(1, [0xFF, 0xFE, 0, 0, 0xFF, 0xFE, 0x61, 0, 0xE9, 0])), "aé", "UTF-16 with marks")
        XCTAssertEqual(TagMapping.usltText(frame(2, [0, 0, 0, 0x61])), "a", "UTF-16BE")
        XCTAssertNil(TagMapping.usltText(frame(3, [0x61, 0, 0x62], flags: 0x08)), "compressed: passed over")
        XCTAssertNil(TagMapping.usltText(frame(3, [0x61])), "no end of the description")
        XCTAssertNil(TagMapping.usltText(Data(Array("COMM".utf8) + [0, 0, 0, 0, 0, 0, 3] + Array("eng".utf8) + [0, 0x61])))
        XCTAssertNil(TagMapping.usltText(Data([0x55])))
    }
}

private final class Box: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Result<DiscoveredMedia, ItemError>?
    var value: Result<DiscoveredMedia, ItemError>? { lock.withLock { stored } }
    func set(_ value: Result<DiscoveredMedia, ItemError>) { lock.withLock { stored = value } }
}
