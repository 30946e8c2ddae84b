import Foundation
import EngineLink
import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

final class MetadataTests: XCTestCase {
    var media: MediaGenerator!

    override func setUpWithError() throws {
        media = try MediaGenerator()
    }

    let tags = MediaGenerator.Tags(title: "Sine Song", artist: "The Oscillators", album: "Test Tones",
                                   albumArtist: "Various", trackNumber: 7, discNumber: 2, genre: "Electronic",
                                   date: "2024-05-17", comment: "generated")

    /// Plays `file` paused to readiness and returns its metadata once `done` holds.
    func metadata(of file: URL, pipeline: EngineConfiguration.PipelineKind, covers: CoverCache? = nil,
                  until done: @escaping (Metadata) -> Bool) throws -> Metadata {
        let harness = try Harness(pipeline: pipeline, covers: covers)
        let id = try harness.enqueue(file)[0]
        harness.player.pause()
        return try harness.recorder.wait(for: "metadata of \(file.lastPathComponent)") { event in
            guard let (itemID, metadata) = event.metadata, itemID == id, done(metadata) else { return nil }
            return metadata
        }
    }

    func testTagsOfEveryFormat() throws {
        for format in MediaGenerator.Format.allCases {
            let file = try media.tone("tagged", format: format, seconds: 1, tags: tags)
            try onBothPipelines { kind in
                let metadata = try self.metadata(of: file, pipeline: kind) {
                    $0.title != nil && $0.audioCodec != nil && (format == .wav || $0.genres.count > 0)
                }
                XCTAssertEqual(metadata.title, "Sine Song", "\(format) on \(kind)")
                XCTAssertEqual(metadata.artists, ["The Oscillators"], "\(format) on \(kind)")
                XCTAssertEqual(metadata.album, "Test Tones", "\(format) on \(kind)")
                XCTAssertNotNil(metadata.audioCodec, "\(format) on \(kind)")
                if format != .wav {  // RIFF INFO has no album artist, track, disc or date fields of these kinds
                    XCTAssertEqual(metadata.albumArtists, ["Various"], "\(format) on \(kind)")
                    XCTAssertEqual(metadata.trackNumber, 7, "\(format) on \(kind)")
                    XCTAssertEqual(metadata.discNumber, 2, "\(format) on \(kind)")
                    XCTAssertEqual(metadata.date, "2024-05-17", "\(format) on \(kind)")
                    XCTAssertEqual(metadata.comment, "generated", "\(format) on \(kind)")
                }
                XCTAssertEqual(metadata.genres, ["Electronic"], "\(format) on \(kind)")
            }
        }
    }

    /// An embedded cover is written once to the cover cache; the item holds the file's URL.
    func testEmbeddedCoverImageIsAFileInTheCoverCache() throws {
        let cover = try media.coverImage()
        let covers = CoverCache(directory: media.url("covers"))
        for format in [MediaGenerator.Format.mp3, .flac] {
            let file = try media.tone("covered", format: format, seconds: 1, tags: tags, cover: true)
            try onBothPipelines { kind in
                let metadata = try self.metadata(of: file, pipeline: kind, covers: covers) { $0.coverURL != nil }
                let url = try XCTUnwrap(metadata.coverURL)
                XCTAssertTrue(url.isFileURL)
                XCTAssertEqual(url.deletingLastPathComponent().path, covers.directory.path, "in the cover cache")
                XCTAssertEqual(url.pathExtension, "png", "\(format) on \(kind)")
                let data = try Data(contentsOf: url)
                XCTAssertEqual(data.count, cover.count, "\(format) on \(kind)")
                XCTAssertEqual(data.prefix(8), Data([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
            }
        }
        let kept = try FileManager.default.contentsOfDirectory(atPath: covers.directory.path)
        XCTAssertEqual(kept.count, 1, "one file for one image, however often it was seen: \(kept)")
    }

    /// A `cover.jpg` beside a file that embeds none is its cover.
    func testACoverBesideTheFile() throws {
        let folder = media.url("album")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = try media.tone("plain", format: .ogg, seconds: 1, tags: tags)
        let moved = folder.appendingPathComponent("plain.ogg")
        try FileManager.default.moveItem(at: file, to: moved)
        let image = folder.appendingPathComponent("cover.jpg")
        try media.coverImage().write(to: image)
        let covers = CoverCache(directory: media.url("covers"))
        let metadata = try self.metadata(of: moved, pipeline: .playbin, covers: covers) { $0.coverURL != nil && $0.title != nil }
        XCTAssertEqual(metadata.coverURL?.standardizedFileURL, image.standardizedFileURL)
        XCTAssertEqual(metadata.title, "Sine Song", "the file's tags still come")
    }

    func testHostileTagsArriveAsValidUTF8() throws {
        let file = try media.tone("hostile", format: .mp3, seconds: 1)
        // text declared UTF-8 that is not (a lone continuation byte, an overlong form, a cut
        // sequence), and Latin-1 bytes declared Latin-1
        try ID3Writer.prependText([("TIT2", 3, Array("Bad ".utf8) + [0x80, 0xC0, 0xAF] + Array(" Title".utf8) + [0xE2, 0x82]),
                                   ("TPE1", 0, [0x4D, 0x6F, 0x74, 0xF6, 0x72, 0x68, 0x65, 0x61, 0x64]),
                                   ("TALB", 3, [0xFF, 0xFE, 0x41, 0x00, 0x42])], to: file)
        try onBothPipelines { kind in
            let harness = try Harness(pipeline: kind)
            let id = try harness.enqueue(file)[0]
            harness.player.pause()
            _ = try harness.waitForStatus(id, "readyToPlay")
            let metadata = try harness.recorder.wait(for: "artist") { event -> Metadata? in
                guard let (itemID, metadata) = event.metadata, itemID == id, !metadata.artists.isEmpty else { return nil }
                return metadata
            }
            XCTAssertEqual(metadata.artists, ["Motörhead"], "Latin-1 converted on \(kind)")
            // GStreamer drops or converts the invalid strings; whatever reaches us is valid UTF-8
            for text in [metadata.title, metadata.album].compactMap({ $0 }) {
                XCTAssertEqual(String(decoding: Array(text.utf8), as: UTF8.self), text)
                XCTAssertFalse(text.utf8.contains(0))
            }
        }
    }

    func testTitleFallsBackToTheFileName() throws {
        let file = try media.tone("untagged", format: .ogg, seconds: 0.5)
        let harness = try Harness(pipeline: .playbin3)
        let id = try harness.enqueue(file)[0]
        XCTAssertEqual(harness.player.item(id)?.displayTitle, "untagged.ogg")
    }
}
