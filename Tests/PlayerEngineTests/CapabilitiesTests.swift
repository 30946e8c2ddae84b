import Foundation
import GStreamer
import Logging
import EngineLink
import PlayerEngine
import PlayerModel
import XCTest

/// What the installed GStreamer can play, and the playable files of a directory.
final class CapabilitiesTests: XCTestCase {
    static let capabilities = MediaCapabilities()
    var capabilities: MediaCapabilities { Self.capabilities }

    func testSchemesHaveSources() {
        XCTAssertEqual(capabilities.supportedURISchemes, ["file", "http", "https"])
        XCTAssertFalse(Registry.hasSource(forScheme: "tonearm-no-such-scheme"))
    }

    func testMIMETypesComeFromInstalledDecodersAndDemuxers() {
        let types = capabilities.supportedMIMETypes
        XCTAssertEqual(types, Array(Set(types)).sorted(), "sorted, without duplicates")
        for expected in ["audio/mpeg", "audio/x-wav", "application/x-id3"] {
            XCTAssertTrue(types.contains(expected), "\(expected) missing from \(types)")
        }
        XCTAssertTrue(types.contains("audio/x-flac") || types.contains("audio/flac"), "\(types)")
        XCTAssertTrue(types.contains("audio/x-vorbis") || types.contains("application/ogg"), "\(types)")
        // hlsdemux is installed here (gst-plugins-bad), so HLS playlists are playable
        XCTAssertTrue(GStreamer.hasElement("hlsdemux"))
        XCTAssertTrue(types.contains("application/x-hls"), "\(types)")
        XCTAssertTrue(types.contains("application/vnd.apple.mpegurl"), "\(types)")
        for type in types {
            XCTAssertTrue(type.hasPrefix("audio/") || type.hasPrefix("video/") || type.hasPrefix("application/"), type)
            XCTAssertFalse(type.hasSuffix("/x-raw"), type)
        }
    }

    func testRegistryListsFactoriesWithSinkTypes() {
        let decoders = Registry.elementFactories(.decoder)
        let flac = decoders.first { $0.name == "flacdec" }
        XCTAssertEqual(flac?.sinkMediaTypes, ["audio/x-flac"])
        XCTAssertTrue(flac?.klass.contains("Decoder") ?? false)
        XCTAssertTrue(decoders.allSatisfy { $0.rank >= Registry.Rank.marginal })
        let demuxers = Registry.elementFactories(.demuxer)
        XCTAssertTrue(demuxers.contains { $0.name == "oggdemux" && $0.sinkMediaTypes.contains("application/ogg") })
        let finders = Registry.typeFinders()
        XCTAssertTrue(finders.contains { $0.mediaTypes.contains("audio/x-flac") && $0.extensions.contains("flac") })
    }

    func testPlayableExtensions() {
        let extensions = capabilities.playableExtensions
        for expected in ["mp3", "flac", "ogg", "oga", "opus", "wav", "m4a"] {
            XCTAssertTrue(extensions.contains(expected), "\(expected) missing from \(extensions.sorted())")
        }
        for unexpected in ["txt", "png", "jpg", "srt", "m3u", "pdf", "dat"] {
            XCTAssertFalse(extensions.contains(unexpected), unexpected)
        }
        XCTAssertTrue(extensions.allSatisfy { $0 == $0.lowercased() && !$0.hasPrefix(".") })
    }

    func testPlayableFilesInNaturalOrder() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-dir-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let files = ["10.mp3", "2.mp3", "1.mp3", "b/3.ogg", "a/1.flac", "notes.txt", ".hidden.mp3",
                     ".hidden/secret.mp3", "c/10 - a.mp3", "c/2 - b.mp3", "d/B.wav", "d/a.OPUS",
                     "a/cover.jpg", "e/nested/deeper/Track 02.m4a", "e/nested/deeper/track 1.m4a"]
        for file in files {
            let url = root.appendingPathComponent(file)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data().write(to: url)
        }
        // a link back up (a loop) and a second link to a directory already listed
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("a/loop").path, withDestinationPath: "..")
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("z-alias").path, withDestinationPath: "b")
        // a broken link
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("gone.mp3").path, withDestinationPath: "nowhere.mp3")

        let found = try capabilities.playableFiles(under: MediaURI(fileURL: root))
        let relative = found.map { String($0.url.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1)) }
        XCTAssertEqual(relative, ["1.mp3", "2.mp3", "10.mp3", "a/1.flac", "b/3.ogg", "c/2 - b.mp3", "c/10 - a.mp3",
                                  "d/a.OPUS", "d/B.wav", "e/nested/deeper/track 1.m4a", "e/nested/deeper/Track 02.m4a"])
    }

    func testPlayableFilesThrowsForMissingDirectoryOrFile() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-none-\(UUID().uuidString)")
        XCTAssertThrowsError(try capabilities.playableFiles(under: MediaURI(fileURL: missing))) { error in
            guard case .item(let error) = error as? ResolveError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.kind, .notFound)
            XCTAssertTrue("\(error)".contains(missing.lastPathComponent), "\(error)")
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-file-\(UUID().uuidString).mp3")
        try Data().write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        XCTAssertThrowsError(try capabilities.playableFiles(under: MediaURI(fileURL: file))) { error in
            XCTAssertTrue("\(error)".contains("not a directory"), "\(error)")
        }
    }

    /// An MP3 is decoded by mpg123, not by gst-libav's avdec_mp3, which GStreamer 1.22 ranks the
    /// same and which loads FFmpeg's ~150 libraries (40 MiB of RSS): the first decoder playbin
    /// picks, by rank and then by name, is mpg123audiodec once an engine exists.
    func testTheEnginePrefersMpg123ForMP3() throws {
        // plugins-good is a dependency (packaging/install-build-deps.sh): without it this fails
        XCTAssertTrue(GStreamer.hasElement("mpg123audiodec"), "no mpg123audiodec (gstreamer1.0-plugins-good)")
        let logger = Logger.quiet
        _ = try GStreamerEngine(configuration: EngineConfiguration(pipeline: .playbin, audioSink: "fakesink sync=true", video: false),
                                logger: logger).waitUntilReady()
        let accepting = Set(GStreamer.decoders(accepting: "audio/mpeg, mpegversion=(int)1, layer=(int)3"))
        let ranked = Registry.elementFactories(.decoder).filter { accepting.contains($0.name) }
            .sorted { $0.rank != $1.rank ? $0.rank > $1.rank : $0.name < $1.name }
        XCTAssertEqual(ranked.first?.name, "mpg123audiodec", "\(ranked.map { "\($0.name) \($0.rank)" })")
    }
}
