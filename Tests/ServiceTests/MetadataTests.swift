import Foundation
import TestSupport
import XCTest

/// Metadata as playerctl prints it and with the exact D-Bus types bluez's mpris-proxy insists on.
final class MetadataTests: ServiceTestCase {
    typealias H = ServiceHarness
    static let format = "{{xesam:title}}|{{xesam:artist}}|{{xesam:album}}|{{mpris:length}}|{{mpris:trackid}}|{{mpris:artUrl}}|{{xesam:url}}"

    private func file(_ format: MediaGenerator.Format, cover: Bool) throws -> URL {
        try media.tone("song-\(format.rawValue)", format: format, seconds: 3, tags: MediaGenerator.Tags(
            title: "Song in \(format.rawValue)", artist: "The Testers", album: "Generated", albumArtist: "Various",
            trackNumber: 3, discNumber: 1, genre: "Test", date: "2021-05-06"), cover: cover)
    }

    /// Waits until the current Metadata has `key`: tags, the cover and an MP3's duration (its
    /// parser estimates it once enough frames went by) may each arrive after playback starts, each
    /// announced with PropertiesChanged.
    private func waitForMetadata(_ key: String) throws {
        let mark = harness.mark()
        if try harness.metadata[key] != nil { return }
        try harness.waitForChange(H.player, "Metadata with \(key)", from: mark) {
            $0["Metadata"]?.dictionary?[key] != nil
        }
    }

    private func waitForTitle() throws { try waitForMetadata("xesam:title") }

    /// Waits until the current Metadata's length is within `tolerance` of `length`: an MP3 without
    /// a Xing header (as lamemp3enc writes them) has its parser's estimate from the first frames
    /// at its preroll, which the parser refines once it has seen more (DURATION_CHANGED).
    private func waitForLength(near length: Int64, within tolerance: Int64) throws {
        func near(_ value: Int64?) -> Bool { value.map { abs($0 - length) <= tolerance } ?? false }
        let mark = harness.mark()
        if near(try harness.metadata["mpris:length"]?.int64) { return }
        try harness.waitForChange(H.player, "Metadata with mpris:length near \(length)", from: mark) {
            near($0["Metadata"]?.dictionary?["mpris:length"]?.int64)
        }
    }

    private func assertPlayerctlMetadata(_ format: MediaGenerator.Format, cover: Bool,
                                         file: StaticString = #filePath, line: UInt = #line) throws {
        let media = try self.file(format, cover: cover)
        try harness.startPlaying([media])
        try waitForTitle()
        try waitForLength(near: 3_000_000, within: 150_000)
        if cover { try waitForMetadata("mpris:artUrl") }
        let fields = try harness.playerctl("metadata", "--format", Self.format).components(separatedBy: "|")
        XCTAssertEqual(fields.count, 7, "playerctl printed \(fields)", file: file, line: line)
        guard fields.count == 7 else { return }
        XCTAssertEqual(fields[0], "Song in \(format.rawValue)", "xesam:title", file: file, line: line)
        XCTAssertEqual(fields[1], "The Testers", "xesam:artist", file: file, line: line)
        XCTAssertEqual(fields[2], "Generated", "xesam:album", file: file, line: line)
        let length = try XCTUnwrap(Int64(fields[3]), "mpris:length \(fields[3])", file: file, line: line)
        XCTAssertEqual(Double(length), 3_000_000, accuracy: 150_000, "mpris:length", file: file, line: line)
        // playerctl prints an object path quoted ('/x'); a plain string would print bare
        XCTAssertEqual(fields[4], "'\(try harness.trackID ?? "")'", "mpris:trackid", file: file, line: line)
        XCTAssertFalse(fields[4].hasPrefix("/org/mpris/"), "mpris:trackid \(fields[4]) is in /org/mpris", file: file, line: line)
        if cover {
            XCTAssertTrue(fields[5].hasPrefix("file://"), "mpris:artUrl \(fields[5])", file: file, line: line)
            let art = try XCTUnwrap(URL(string: fields[5]), file: file, line: line)
            XCTAssertTrue(FileManager.default.fileExists(atPath: art.path), "artUrl \(art.path) does not exist", file: file, line: line)
            let cache = harness.cacheHome.appendingPathComponent("tonearm").resolvingSymlinksInPath().path
            XCTAssertTrue(art.resolvingSymlinksInPath().path.hasPrefix(cache + "/"),
                          "artUrl \(art.path) is not under \(cache)", file: file, line: line)
            XCTAssertGreaterThan((try? Data(contentsOf: art))?.count ?? 0, 0, file: file, line: line)
        }
        XCTAssertEqual(fields[6], H.uri(media), "xesam:url", file: file, line: line)
    }

    func testPlayerctlMetadataOfAnMP3WithCover() throws { try assertPlayerctlMetadata(.mp3, cover: true) }
    func testPlayerctlMetadataOfAFLACWithCover() throws { try assertPlayerctlMetadata(.flac, cover: true) }
    func testPlayerctlMetadataOfAnOggVorbis() throws { try assertPlayerctlMetadata(.ogg, cover: false) }
    func testPlayerctlMetadataOfAnOpus() throws { try assertPlayerctlMetadata(.opus, cover: false) }

    func testPlayerctlShortcutsForTitleArtistAlbum() throws {
        try harness.startPlaying([try file(.ogg, cover: false)])
        try waitForTitle()
        XCTAssertEqual(try harness.playerctl("metadata", "title"), "Song in ogg")
        XCTAssertEqual(try harness.playerctl("metadata", "artist"), "The Testers")
        XCTAssertEqual(try harness.playerctl("metadata", "album"), "Generated")
    }

    /// One wrong type makes bluez's mpris-proxy drop all the metadata.
    func testMetadataHasTheExactTypesInGetAndInPropertiesChanged() throws {
        try harness.startPlaying([try file(.mp3, cover: true)])
        for key in ["xesam:title", "mpris:length", "mpris:artUrl"] { try waitForMetadata(key) }
        let metadata = try harness.metadata
        let expected: [String: String] = [
            "mpris:trackid": "o", "mpris:length": "x", "mpris:artUrl": "s", "xesam:url": "s", "xesam:title": "s",
            "xesam:artist": "as", "xesam:album": "s", "xesam:albumArtist": "as", "xesam:genre": "as",
            "xesam:trackNumber": "i", "xesam:discNumber": "i",
        ]
        for (key, type) in expected.sorted(by: { $0.key < $1.key }) {
            XCTAssertEqual(metadata[key]?.type, type, "Metadata[\(key)] = \(metadata[key]?.description ?? "missing")")
        }
        let knownTypes: [String: String] = ["xesam:contentCreated": "s", "xesam:comment": "as", "xesam:composer": "as",
                                            "xesam:lyricist": "as", "xesam:useCount": "i", "xesam:userRating": "d",
                                            "xesam:autoRating": "d", "xesam:audioBPM": "i", "xesam:asText": "s"]
        for (key, value) in metadata {
            if let type = knownTypes[key] { XCTAssertEqual(value.type, type, "Metadata[\(key)]") }
        }
        XCTAssertEqual(metadata["xesam:artist"]?.strings, ["The Testers"])
        XCTAssertEqual(metadata["xesam:trackNumber"]?.int64, 3)
        let track = try XCTUnwrap(metadata["mpris:trackid"]?.string)
        XCTAssertFalse(track.hasPrefix("/org/mpris/"), "mpris:trackid \(track) is in /org/mpris")
        // the same types reach clients that only believe PropertiesChanged
        let announced = harness.propertiesChanged(H.player, from: 0).compactMap { $0.changed["Metadata"]?.dictionary }
        XCTAssertFalse(announced.isEmpty, "Metadata was never announced")
        for dictionary in announced {
            for (key, value) in dictionary {
                if let type = expected[key] ?? knownTypes[key], !(value.signature == "a?" && type.hasPrefix("a")) {
                    XCTAssertEqual(value.signature, type, "PropertiesChanged Metadata[\(key)] = \(value)")
                }
            }
        }
    }

    func testNoItemMeansAnEmptyMetadataDictionary() throws {
        try harness.start()
        let metadata = try harness.get(H.player, "Metadata")
        XCTAssertEqual(metadata.type, "a{sv}")
        XCTAssertEqual(metadata.dictionary?.count, 0)
        XCTAssertEqual(try harness.playerctl("status"), "Stopped")
    }

    /// libdbus aborts on invalid UTF-8: tags are not UTF-8-clean, so the service must repair them.
    func testInvalidUTF8InID3TagsDoesNotCrashAndArrivesAsValidUTF8() throws {
        let hostile = try media.generator.tone("hostile", format: .mp3, seconds: 3)
        try ID3Writer.prependText([
            (id: "TIT2", encoding: 3, bytes: Array("Bad".utf8) + [0xFF, 0xFE, 0x20, 0xC3, 0x28] + Array("Title".utf8)),
            (id: "TPE1", encoding: 3, bytes: [0xED, 0xA0, 0x80] + Array("Artist".utf8)),  // a UTF-16 surrogate
            (id: "TALB", encoding: 0, bytes: [0x80, 0x9F, 0xE9] + Array("Album".utf8)),  // Latin-1 high bytes
        ], to: hostile)
        try harness.startPlaying([hostile])
        // the valid Latin-1 album shows that the tag was read
        let mark = harness.mark()
        if try harness.metadata["xesam:album"] == nil {
            try harness.waitForChange(H.player, "Metadata with xesam:album", from: mark) {
                $0["Metadata"]?.dictionary?["xesam:album"] != nil
            }
        }
        let metadata = try harness.metadata  // busctl's JSON would not parse invalid UTF-8
        let album = metadata["xesam:album"]?.string ?? ""
        XCTAssertTrue(album.hasSuffix("éAlbum"), "Latin-1 is decoded as Latin-1: album \(album.unicodeScalars.map { $0.value })")
        // what could not be decoded is repaired, or left out (the file name then stands for the title)
        let title = metadata["xesam:title"]?.string ?? ""
        XCTAssertTrue(title.hasPrefix("Bad") && title.hasSuffix("Title") || title == "hostile.mp3", "title \(title)")
        for artist in metadata["xesam:artist"]?.strings ?? [] {
            XCTAssertTrue(artist.hasSuffix("Artist"), "artist \(artist.unicodeScalars.map { $0.value })")
        }
        XCTAssertEqual(try harness.playerctl("metadata", "title"), title)
        XCTAssertTrue(harness.daemon.isRunning)
        try harness.ping()
    }

    /// File names are bytes, not UTF-8: the title that stands in and xesam:url must still be valid strings.
    func testAFileNameThatIsNotUTF8() throws {
        let source = try short("ten", seconds: 10)
        let name: [UInt8] = Array("bad".utf8) + [0xFF, 0xFE] + Array("name.wav".utf8)
        let raw = Array(harness.directory.path.utf8) + [UInt8(ascii: "/")] + name + [0]
        let linked = raw.map { CChar(bitPattern: $0) }.withUnsafeBufferPointer { symlink(source.path, $0.baseAddress!) }
        XCTAssertEqual(linked, 0, "symlink to a name with bytes that are not UTF-8")
        try harness.start()
        let uri = "file://" + harness.directory.path + "/bad%FF%FEname.wav"
        try harness.call(H.extensionInterface, "Enqueue", "asb", ["1", uri, "true"])
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        let metadata = try harness.metadata
        let url = try XCTUnwrap(metadata["xesam:url"]?.string)
        XCTAssertEqual(url.uppercased(), uri.uppercased(), "xesam:url keeps the bytes percent-encoded")
        let title = metadata["xesam:title"]?.string ?? ""
        XCTAssertTrue(title.hasPrefix("bad") && title.hasSuffix("name.wav"), "title \(title.unicodeScalars.map { $0.value })")
        _ = try harness.playerctl("metadata", "--format", Self.format)
        try harness.ping()
    }

    /// Tags of queued items are discovered in the background and announced with TrackMetadataChanged.
    func testGetTracksMetadataOfQueuedTracksHasTheirTags() throws {
        let first = try short("ten", seconds: 10)
        let second = try tagged("second", title: "Second Song", artist: "Queue Tester", album: "Later")
        let third = try tagged("third", title: "Third Song", artist: "Queue Tester", album: "Later")
        try harness.startPlaying([first, second, third])
        let tracks = try harness.tracks
        XCTAssertEqual(tracks.count, 3)
        for (index, title) in [(1, "Second Song"), (2, "Third Song")] {
            let id = tracks[index]
            var entry = try tracksMetadata([id]).first
            if entry?["xesam:title"] == nil {
                try harness.waitForSignal(H.trackList, "TrackMetadataChanged", from: 0) {
                    $0.arguments.first?.string == id && $0.arguments.last?.dictionary?["xesam:title"] != nil
                }
                entry = try tracksMetadata([id]).first
            }
            let metadata = try XCTUnwrap(entry)
            XCTAssertEqual(metadata["mpris:trackid"]?.string, id)
            XCTAssertEqual(metadata["mpris:trackid"]?.type, "o")
            XCTAssertEqual(metadata["xesam:title"]?.string, title)
            XCTAssertEqual(metadata["xesam:artist"]?.type, "as")
            XCTAssertEqual(metadata["xesam:artist"]?.strings, ["Queue Tester"])
            XCTAssertEqual(metadata["xesam:url"]?.string, H.uri(index == 1 ? second : third))
            if let length = metadata["mpris:length"] {
                XCTAssertEqual(length.type, "x")
                XCTAssertEqual(Double(length.int64 ?? 0), 3_000_000, accuracy: 150_000)
            }
        }
        // several at once, in the order asked
        let both = try tracksMetadata([tracks[2], tracks[0]])
        XCTAssertEqual(both.map { $0["mpris:trackid"]?.string }, [tracks[2], tracks[0]])
    }

    /// `GetTracksMetadata(ids)`: one a{sv} per known id.
    func tracksMetadata(_ ids: [String]) throws -> [[String: Typed]] {
        let reply = try harness.call(H.trackList, "GetTracksMetadata", "ao", ["\(ids.count)"] + ids)
        let first = try XCTUnwrap(reply.first)
        XCTAssertEqual(first.type, "aa{sv}")
        let list = try XCTUnwrap(first.data as? [Any])
        return list.compactMap { Typed(type: "a{sv}", data: $0).dictionary }
    }

    // MARK: Names that are not UTF-8, tags in Latin-1 (issue 26)

    /// `file` copied to `directory` under a name of raw bytes; returns its percent-encoded URI.
    private func copy(_ file: URL, named name: [UInt8], into directory: URL, prefix: [UInt8] = [], suffix: [UInt8] = []) throws -> String {
        let source = try Data(contentsOf: file)
        let path = Array(directory.path.utf8) + [UInt8(ascii: "/")] + name
        let written = (path + [0]).withUnsafeBufferPointer { buffer -> Bool in
            buffer.withMemoryRebound(to: CChar.self) { name in
                guard let stream = fopen(name.baseAddress!, "wb") else { return false }
                defer { fclose(stream) }
                let bytes = prefix + Array(source) + suffix
                return fwrite(bytes, 1, bytes.count, stream) == bytes.count
            }
        }
        XCTAssertTrue(written, "wrote the file with a non-UTF-8 name")
        let escaped = name.map { byte -> String in
            let plain = (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == UInt8(ascii: ".")
            return plain ? String(UnicodeScalar(byte)) : "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
        }.joined()
        return H.uri(directory) + (H.uri(directory).hasSuffix("/") ? "" : "/") + escaped
    }

    func testAFileWhoseNameIsNotUTF8PlaysWithItsLatin1TagsAndAReadableTitle() throws {
        let folder = harness.directory.appendingPathComponent("latin1")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let mp3 = try media.tone("plain-mp3", format: .mp3, seconds: 3)
        // "café ÿ.mp3" in Latin-1, with an ID3v2.3 TIT2 of encoding 0 and an ID3v1 tag (no
        // declared encoding: Latin-1 is what taggers wrote), both in Latin-1 bytes
        let title = Array("Caf".utf8) + [0xE9] + Array(" au lait".utf8)
        let frameBody: [UInt8] = [0] + title
        let frame = Array("TIT2".utf8) + [0, 0, 0, UInt8(frameBody.count), 0, 0] + frameBody
        let id3v2 = Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, UInt8(frame.count)] + frame
        func field(_ bytes: [UInt8]) -> [UInt8] { Array((bytes + [UInt8](repeating: 0, count: 30)).prefix(30)) }
        let id3v1 = Array("TAG".utf8) + field(Array("Caf".utf8) + [0xE9]) + field(Array("Mot".utf8) + [0xF6] + Array("rhead".utf8))
            + field([0xC9, 0x74, 0xE9]) + Array("2001".utf8) + field([]) + [255]
        let tagged = try copy(mp3, named: Array("caf".utf8) + [0xE9, 0x20, 0xFF] + Array(".mp3".utf8), into: folder, prefix: id3v2, suffix: id3v1)
        let untagged = try copy(try short("plain-wav"), named: Array("caf".utf8) + [0xE9] + Array(".wav".utf8), into: folder)
        XCTAssertTrue(tagged.hasSuffix("/caf%E9%20%FF.mp3"), tagged)

        try harness.start([tagged, untagged])
        try harness.waitForStatus("Playing")
        try waitForMetadata("xesam:artist")
        let fields = try harness.playerctl("metadata", "--format", "{{xesam:title}}|{{xesam:artist}}|{{xesam:album}}|{{xesam:url}}")
            .components(separatedBy: "|")
        XCTAssertEqual(fields, ["Café au lait", "Motörhead", "Été", tagged], "Latin-1 tags read right; the URL as given")

        // the next one has no tags: its title is its name, the byte that is not UTF-8 shown as U+FFFD
        try harness.playerctl("next")
        let tracks = try harness.tracks
        try harness.waitForTrack(tracks[1])
        XCTAssertEqual(try harness.playerctl("metadata", "xesam:title"), "caf\u{FFFD}.wav")
        XCTAssertEqual(try harness.playerctl("metadata", "xesam:url"), untagged, "the URL maps back to the same bytes")
        try harness.waitForItemStatus("readyToPlay")
        XCTAssertEqual(try harness.playbackStatus, "Playing")
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
