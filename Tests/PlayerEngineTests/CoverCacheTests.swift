import Foundation
import EngineLink
import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

/// The cover cache as a user sees it: the files in `~/.cache/tonearm/covers`.
final class CoverCacheTests: XCTestCase {
    var media: MediaGenerator!

    override func setUpWithError() throws {
        media = try MediaGenerator()
    }

    /// A distinct image of `size` bytes (a PNG signature, then bytes that differ per `seed`).
    func image(_ seed: Int, size: Int = 10_000) -> Data {
        var data = Data([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
        var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 | 1
        while data.count < size {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            data.append(UInt8(truncatingIfNeeded: state))
        }
        return data
    }

    /// The bytes of the files in `directory`, as `du` would count them (names starting with a dot too).
    func bytesOnDisk(_ directory: URL) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).reduce(0) { sum, name in
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)
            return sum + ((attributes[.size] as? NSNumber)?.intValue ?? 0)
        }
    }

    func testTheDirectoryStaysWithinItsBoundAndKeepsTheNewest() throws {
        let directory = media.url("covers")
        let cache = CoverCache(directory: directory, maximumBytes: 50_000)
        var urls: [URL] = []
        for seed in 0..<40 {
            let url = try XCTUnwrap(cache.store(image(seed), mediaType: "image/png"))
            urls.append(url)
            XCTAssertLessThanOrEqual(try bytesOnDisk(directory), 50_000, "after \(seed + 1) covers")
            XCTAssertTrue(FileManager.default.fileExists(atPath: url.path), "the cover just stored is there")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).count, 5)
        XCTAssertEqual(cache.size, try bytesOnDisk(directory))
        for url in urls.suffix(5) { XCTAssertTrue(FileManager.default.fileExists(atPath: url.path), "a newest one: \(url)") }
        XCTAssertFalse(FileManager.default.fileExists(atPath: urls[0].path), "the oldest went")
    }

    func testACoverUsedAgainIsKeptOverOlderOnes() throws {
        let directory = media.url("covers")
        let cache = CoverCache(directory: directory, maximumBytes: 40_000)
        let first = try XCTUnwrap(cache.store(image(1), mediaType: "image/png"))
        let second = try XCTUnwrap(cache.store(image(2), mediaType: "image/png"))
        _ = cache.store(image(3), mediaType: "image/png")
        _ = cache.store(image(4), mediaType: "image/png")
        // the same image again: the same file, touched, and nothing new written
        XCTAssertEqual(cache.store(image(1), mediaType: "image/png"), first)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).count, 4)
        _ = cache.store(image(5), mediaType: "image/png")
        XCTAssertTrue(FileManager.default.fileExists(atPath: first.path), "used again, so not the oldest")
        XCTAssertFalse(FileManager.default.fileExists(atPath: second.path), "the least recently used went")
    }

    /// A later run counts what an earlier one left.
    func testTheBoundHoldsAcrossRuns() throws {
        let directory = media.url("covers")
        let earlier = CoverCache(directory: directory, maximumBytes: 1_000_000)
        for seed in 0..<8 { _ = earlier.store(image(seed), mediaType: "image/jpeg") }
        XCTAssertEqual(try bytesOnDisk(directory), 80_000)
        let later = CoverCache(directory: directory, maximumBytes: 30_000)
        XCTAssertNotNil(later.store(image(100), mediaType: "image/jpeg"))
        XCTAssertLessThanOrEqual(try bytesOnDisk(directory), 30_000)
    }

    func testAnImageLargerThanTheWholeCacheIsNotKept() throws {
        let directory = media.url("covers")
        let cache = CoverCache(directory: directory, maximumBytes: 5_000)
        XCTAssertNil(cache.store(image(1, size: 6_000), mediaType: "image/png"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path), "nothing written")
    }

    func testAnImageBesideTheFileIsLookedForOncePerFolder() throws {
        let folder = media.url("album")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let cache = CoverCache(directory: media.url("covers"))
        let track = MediaURI(fileURL: folder.appendingPathComponent("01.flac"))
        XCTAssertNil(cache.beside(track))
        let front = folder.appendingPathComponent("Folder.png")
        try image(7).write(to: front)
        XCTAssertNil(cache.beside(MediaURI(fileURL: folder.appendingPathComponent("02.flac"))),
                     "the folder was looked at once: a cover added later is not seen by this run")
        let other = media.url("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try image(8).write(to: other.appendingPathComponent("cover.jpg"))
        XCTAssertEqual(cache.beside(MediaURI(fileURL: other.appendingPathComponent("a.mp3")))?.lastPathComponent, "cover.jpg")
        XCTAssertNil(cache.beside(try MediaURI("http://example.org/a.mp3")), "only local files have folders")
    }
}
