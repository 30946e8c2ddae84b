import Foundation
import PlayerModel
import Playlists
import XCTest

/// The four playlist formats parsed from text made here: entries in order, relative ones taken
/// against the file's folder, names, and a specific message for each malformed file.
final class PlaylistFileTests: XCTestCase {
    let path = "/music/Playlists/list"

    func parse(_ text: String, _ format: PlaylistFile.Format) throws -> PlaylistFile {
        try PlaylistFile.parse(Data(text.utf8), format: format, path: path + "." + format.rawValue)
    }

    func paths(_ file: PlaylistFile) -> [String] { file.entries.map { $0.path ?? $0.string } }

    func testM3UWithDirectivesRelativeEntriesAndURIs() throws {
        let file = try parse("\u{FEFF}#EXTM3U\n#PLAYLIST:Road trip\n#EXTINF:123,Artist - Title\n../a.flac\r\n\n/abs/b.ogg\nhttp://radio.example/stream\nfile:///c%20d.wav\n", .m3u8)
        XCTAssertEqual(file.name, "Road trip")
        XCTAssertEqual(paths(file), ["/music/a.flac", "/abs/b.ogg", "http://radio.example/stream", "/c d.wav"])
        XCTAssertEqual(try parse("a.mp3\n", .m3u).name, "list", "no #PLAYLIST: the file's name")
    }

    func testPLSInFileNumberOrder() throws {
        let file = try parse("[playlist]\nTitle1=x\nFile3=c.flac\nFile1=a.flac\nFile2=/b.flac\nNumberOfEntries=3\nVersion=2\n", .pls)
        XCTAssertEqual(paths(file), ["/music/Playlists/a.flac", "/b.flac", "/music/Playlists/c.flac"])
    }

    func testXSPFWithTitleAndLocations() throws {
        let file = try parse("""
            <?xml version="1.0"?>
            <playlist version="1" xmlns="http://xspf.org/ns/0/"><title>Mix</title>
            <trackList><track><location>file:///x/a.flac</location><title>ignored</title></track>
            <track><location>b%20c.ogg</location></track></trackList></playlist>
            """, .xspf)
        XCTAssertEqual(file.name, "Mix")
        XCTAssertEqual(paths(file), ["/x/a.flac", "/music/Playlists/b c.ogg"])
    }

    func testMalformedFilesSayWhatIsWrong() {
        let cases: [(String, PlaylistFile.Format, String)] = [
            ("<playlist><trackList>", .xspf, "not a valid XSPF playlist"),
            ("<html></html>", .xspf, "no <playlist> element"),
            ("File1=a.flac\n", .pls, "no [playlist] section"),
            ("[playlist]\nthis is not a key\n", .pls, "line 2: not a key=value line"),
            ("a.flac\nftp://host/b.mp3\n", .m3u8, "line 2"),
        ]
        for (text, format, expected) in cases {
            XCTAssertThrowsError(try parse(text, format), text) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(error) lacks \(expected)")
            }
        }
        XCTAssertThrowsError(try PlaylistFile.parse(Data([0x61, 0x00, 0x62]), format: .m3u8, path: "/x.m3u8"))
        XCTAssertThrowsError(try PlaylistFile.parse(Data([0xff, 0xfe, 0x0a]), format: .m3u8, path: "/x.m3u8"), "M3U8 is UTF-8")
    }

    /// The title a file carries, read from its head without parsing its entries.
    func testTitlesAreReadFromTheHeadOfTheFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-titles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func title(_ name: String, _ bytes: Data) throws -> String? {
            let url = folder.appendingPathComponent(name)
            try bytes.write(to: url)
            return PlaylistFile.title(of: url.path)
        }
        XCTAssertEqual(try title("a.m3u8", Data("\u{FEFF}#EXTM3U\n#PLAYLIST: Road trip \r\n/a.flac\n#PLAYLIST:Later\n".utf8)), "Road trip")
        XCTAssertEqual(try title("b.m3u", Data("#EXTM3U\n#PLAYLIST:Caf".utf8) + Data([0xE9, 0x0A]) + Data("/a.mp3\n".utf8)), "Café",
                       "a plain M3U in Latin-1")
        XCTAssertNil(try title("c.m3u", Data("#EXTM3U\n/a.mp3\n".utf8)))
        XCTAssertNil(try title("d.m3u", Data("#EXTM3U\n#PLAYLIST:   \n".utf8)), "an empty title is none")
        XCTAssertNil(try title("e.pls", Data("[playlist]\nFile1=/a.mp3\nTitle1=Not the playlist's\n".utf8)))
        let tracks = String(repeating: "<track><location>file:///music/a%20long%20name.flac</location></track>\n", count: 2_000)
        XCTAssertEqual(try title("f.xspf", Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <playlist version="1" xmlns="http://xspf.org/ns/0/"><title>Evening &amp; night</title>
            <trackList>\(tracks)</trackList></playlist>
            """.utf8)), "Evening & night", "a file longer than what is read")
        XCTAssertNil(try title("g.xspf", Data("<playlist><trackList><track><title>A track</title></track></trackList><title>late</title></playlist>".utf8)),
                     "a track's title is not the playlist's, nor is one after the track list")
        XCTAssertNil(try title("h.xspf", Data("not xml".utf8)))
        XCTAssertNil(PlaylistFile.title(of: folder.appendingPathComponent("missing.m3u").path))
    }
}
