import Foundation
import GStreamer
import EngineLink
import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

/// The tag readers (the tag-only pipeline and GstDiscoverer) through their wrappers and through
/// the metadata reader, on media made for the test: both give the same fields.
final class TagReadingTests: XCTestCase {
    var media: MediaGenerator!

    override func setUpWithError() throws {
        media = try MediaGenerator()
    }

    let tags = MediaGenerator.Tags(title: "Sine Song", artist: "The Oscillators", album: "Test Tones",
                                   trackNumber: 7, genre: "Electronic")

    /// Reads every URI with `reader` and returns the results in the same order, each completion
    /// having been called exactly once.
    func read(_ uris: [MediaURI], with reader: TagMetadataReader,
              timeout: TimeInterval = 30) -> [Result<DiscoveredMedia, ItemError>] {
        let results = Results(count: uris.count)
        let done = expectation(description: "\(uris.count) reads complete")
        done.expectedFulfillmentCount = uris.count
        done.assertForOverFulfill = true
        for (index, uri) in uris.enumerated() {
            reader.read(uri) { result in
                results.set(index, result)
                done.fulfill()
            }
        }
        wait(for: [done], timeout: timeout)
        return results.values.map { $0 ?? .failure(ItemError(.other, "never completed")) }
    }

    func readOne(_ uri: MediaURI, with reader: TagMetadataReader) -> Result<DiscoveredMedia, ItemError> {
        read([uri], with: reader)[0]
    }

    /// Runs `body` with a reader of each method, the method named in failures.
    func withEachReader(covers: CoverCache? = nil, timeout: Duration = .seconds(5),
                        _ body: (TagMetadataReader, String) throws -> Void) rethrows {
        for method in TagMetadataReader.Method.allCases {
            try body(TagMetadataReader(method: method, timeout: timeout, covers: covers), method.rawValue)
        }
    }

    func testTaggedFilesGiveTagsDurationAndCover() throws {
        let cover = try media.coverImage()
        try withEachReader(covers: CoverCache(directory: media.url("covers"))) { reader, method in
        for format in [MediaGenerator.Format.mp3, .flac, .ogg, .opus, .wav] {
            let seconds = 2.5
            let file = try media.tone("tagged-\(format)", format: format, seconds: seconds, tags: tags, cover: format == .mp3 || format == .flac)
            let format = "\(format) by \(method)"
            let discovered = try readOne(MediaURI(fileURL: file), with: reader).get()
            XCTAssertEqual(discovered.metadata.title, "Sine Song", "\(format)")
            XCTAssertEqual(discovered.metadata.artists, ["The Oscillators"], "\(format)")
            XCTAssertEqual(discovered.metadata.album, "Test Tones", "\(format)")
            if !format.hasPrefix("wav") {  // RIFF INFO has no track number
                XCTAssertEqual(discovered.metadata.trackNumber, 7, "\(format)")
            }
            XCTAssertEqual(discovered.metadata.genres, ["Electronic"], "\(format)")
            XCTAssertNotNil(discovered.metadata.audioCodec, "\(format)")
            let duration = try XCTUnwrap(discovered.duration, "\(format)")
            XCTAssertLessThanOrEqual(gap(duration, .seconds(seconds)), .milliseconds(50), "\(format): \(duration)")
            XCTAssertTrue(discovered.isSeekable, "\(format)")
            XCTAssertFalse(discovered.isLive, "\(format)")
            if format.hasPrefix("mp3") || format.hasPrefix("flac") {  // the generator embeds covers in MP3 (APIC) and FLAC (PICTURE)
                let url = try XCTUnwrap(discovered.metadata.coverURL, "\(format)")
                XCTAssertEqual(url.pathExtension, "png", "\(format)")
                let image = try Data(contentsOf: url)
                XCTAssertEqual(image.count, cover.count, "\(format)")
                XCTAssertEqual(image.prefix(8), Data([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), "\(format)")
            } else {
                XCTAssertNil(discovered.metadata.coverURL, "no cover embedded, none beside")
            }
        }
        }
    }

    func testWrappersCopyStreamsAndTags() throws {
        let file = try media.tone("covered", format: .flac, seconds: 1, tags: tags, cover: true)
        let uri = MediaURI(fileURL: file).string
        for (name, info) in [("discoverer", try Discoverer().discover(uri).get()), ("pipeline", try TagReader().read(uri).get())] {
            XCTAssertTrue(info.hasAudio, name)
            XCTAssertFalse(info.hasVideo, "\(name): a cover picture is not a video stream")
            XCTAssertFalse(info.isLive, name)
            XCTAssertTrue(info.isSeekable, name)
            XCTAssertEqual(info.tags.string("title"), "Sine Song", name)
            XCTAssertEqual(info.tags.samples("image").first?.mediaType, "image/png", name)
            XCTAssertNotNil(info.tags.string("audio-codec"), name)
            let duration = try XCTUnwrap(info.duration, name)
            XCTAssertLessThanOrEqual(abs(duration - 1_000_000_000), 50_000_000, name)
        }
    }

    /// One reader keeps its pipeline between reads: each file still gives its own tags, streams
    /// and length, whatever was read before it, a failure included.
    func testAKeptPipelineReadsEachFileAsItIs() throws {
        let first = try media.tone("first", format: .ogg, seconds: 2, tags: MediaGenerator.Tags(title: "First", artist: "One"))
        let second = try media.tone("second", format: .flac, seconds: 1, tags: MediaGenerator.Tags(title: "Second"), cover: true)
        let third = try media.tone("third", format: .mp3, seconds: 3, tags: MediaGenerator.Tags(title: "Third"))
        let garbage = try media.garbage("noise.ogg")
        let reader = TagReader()
        let expected: [(URL, String?, Double)] = [(first, "First", 2), (first, "First", 2), (second, "Second", 1),
                                                  (garbage, nil, 0), (first, "First", 2), (third, "Third", 3), (second, "Second", 1)]
        for (index, (file, title, seconds)) in expected.enumerated() {
            let result = reader.read(MediaURI(fileURL: file).string)
            guard let title else {
                if case .success = result { XCTFail("read \(index): garbage was read") }
                continue
            }
            let info = try result.get()
            XCTAssertEqual(info.tags.string("title"), title, "read \(index)")
            XCTAssertEqual(info.tags.strings("artist"), title == "First" ? ["One"] : [], "read \(index): no tag of another file")
            XCTAssertEqual(info.tags.samples("image").isEmpty, title != "Second", "read \(index): a cover only where there is one")
            XCTAssertTrue(info.hasAudio, "read \(index)")
            let duration = try XCTUnwrap(info.duration, "read \(index)")
            XCTAssertEqual(Double(duration) / 1e9, seconds, accuracy: 0.3, "read \(index)")
        }
    }

    /// An MP3 without a Xing header has no length in its header: its parser estimates one once
    /// some frames went by, and the tag-only pipeline lets them.
    func testAnMP3WithoutAXingHeaderGetsAnEstimatedLength() throws {
        let file = try media.tone("plain", format: .mp3, seconds: 4, tags: tags)
        let info = try TagReader().read(MediaURI(fileURL: file).string).get()
        let duration = try XCTUnwrap(info.duration)
        XCTAssertLessThanOrEqual(abs(duration - 4_000_000_000), 500_000_000, "\(duration) ns")
        XCTAssertEqual(info.tags.string("title"), "Sine Song")
    }

    func testMissingFileIsNotFound() throws {
        let missing = MediaURI(fileURL: media.url("nowhere.mp3"))
        withEachReader { reader, method in
            guard case .failure(let error) = readOne(missing, with: reader) else { return XCTFail("\(method): a missing file was read") }
            XCTAssertEqual(error.kind, .notFound, method)
            XCTAssertTrue(error.message.contains("nowhere.mp3"), error.message)
        }

        // the wrappers alone, without the reader's file check, report GStreamer's resource error
        for (name, result) in [("discoverer", try Discoverer().discover(missing.string)), ("pipeline", TagReader().read(missing.string))] {
            guard case .failure(let failure) = result else { return XCTFail("\(name) read a missing file") }
            XCTAssertEqual(failure.error.domain, GStreamerError.resourceDomain, name)
        }
    }

    func testGarbageIsUnsupportedFormat() throws {
        let garbage = try media.garbage("noise.mp3")
        withEachReader { reader, method in
            guard case .failure(let error) = readOne(MediaURI(fileURL: garbage), with: reader) else { return XCTFail("\(method): garbage was read") }
            XCTAssertEqual(error.kind, .unsupportedFormat, "\(method): \(error.message)")
        }
    }

    func testDirectoryIsUnsupportedFormat() throws {
        withEachReader { reader, method in
            guard case .failure(let error) = readOne(MediaURI(fileURL: media.directory), with: reader) else {
                return XCTFail("\(method): a directory was read")
            }
            XCTAssertEqual(error.kind, .unsupportedFormat, error.message)
        }
    }

    func testConcurrentReadsAllCompleteOnce() throws {
        let formats: [MediaGenerator.Format] = [.mp3, .flac, .ogg, .wav, .opus]
        var uris: [MediaURI] = []
        for (index, format) in formats.enumerated() {
            let file = try media.tone("song\(index)", format: format, seconds: 1,
                                      tags: MediaGenerator.Tags(title: "Song \(index)"))
            uris.append(MediaURI(fileURL: file))
        }
        uris.append(MediaURI(fileURL: media.url("missing.ogg")))
        uris.append(MediaURI(fileURL: try media.garbage("garbage.flac")))
        // twice over, so more reads wait than run
        let all = uris + uris
        for method in TagMetadataReader.Method.allCases {
            let reader = TagMetadataReader(method: method, maximumConcurrentReads: 2)
            let results = read(all, with: reader)
            XCTAssertEqual(results.count, all.count)
            for (index, result) in results.enumerated() {
                let position = index % uris.count
                switch position {
                case 0..<formats.count:
                    XCTAssertEqual(try? result.get().metadata.title, "Song \(position)", "\(all[index]) by \(method)")
                case formats.count:
                    XCTAssertEqual(result.error?.kind, .notFound, method.rawValue)
                default:
                    XCTAssertEqual(result.error?.kind, .unsupportedFormat, method.rawValue)
                }
            }
            // the reader is reusable after it went idle
            XCTAssertEqual(try readOne(uris[0], with: reader).get().metadata.title, "Song 0", method.rawValue)
        }
    }

    func testOverHTTP() throws {
        // FLAC: its header has the exact length (an MP3 without a Xing header over HTTP is estimated)
        _ = try media.tone("remote", format: .flac, seconds: 1.5, tags: tags)
        let server = try HTTPServer(directory: media.directory)
        try withEachReader { reader, method in
            let discovered = try readOne(MediaURI(server.url("remote.flac")), with: reader).get()
            XCTAssertEqual(discovered.metadata.title, "Sine Song", method)
            let duration = try XCTUnwrap(discovered.duration, method)
            XCTAssertLessThanOrEqual(gap(duration, .milliseconds(1500)), .milliseconds(50), "\(method): \(duration)")
        }
    }

    func testServerThatNeverAnswersTimesOutAsNetworkError() throws {
        // a socket that listens but never accepts: the connection opens, no response ever comes
        let silent = try SilentServer()
        try withEachReader(timeout: .seconds(1)) { reader, method in
            let started = ContinuousClock.now
            let result = readOne(try MediaURI("http://127.0.0.1:\(silent.port)/stalled.mp3"), with: reader)
            XCTAssertEqual(result.error?.kind, .network, "\(method): \(result)")
            XCTAssertLessThan(ContinuousClock.now - started, .seconds(10), method)
        }
    }
}

/// Results filled in from the reader's threads.
private final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Result<DiscoveredMedia, ItemError>?]
    init(count: Int) { storage = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ result: Result<DiscoveredMedia, ItemError>) {
        lock.withLock {
            XCTAssertNil(storage[index], "completion \(index) called twice")
            storage[index] = result
        }
    }
    var values: [Result<DiscoveredMedia, ItemError>?] { lock.withLock { storage } }
}

/// How far apart two durations are.
private func gap(_ a: Duration, _ b: Duration) -> Duration { a > b ? a - b : b - a }

extension Result {
    fileprivate var error: Failure? { if case .failure(let error) = self { error } else { nil } }
}

/// A TCP socket on 127.0.0.1 that listens and never accepts.
private final class SilentServer {
    let port: Int
    private let socketFD: Int32

    struct Failure: Error { var step: String; var code: Int32 }

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(step: "socket", code: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { close(fd); throw Failure(step: "bind", code: errno) }
        guard listen(fd, 8) == 0 else { throw Failure(step: "listen", code: errno) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw Failure(step: "getsockname", code: errno) }
        socketFD = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(socketFD) }
}
