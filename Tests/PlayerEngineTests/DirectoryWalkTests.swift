import Foundation
import Glibc
import EngineLink
import PlayerEngine
import PlayerModel
import XCTest

/// The walk of a folder (`MediaCapabilities.playableFiles(under:)`): names as bytes, its bound,
/// its cancellation, and what it does not enter.
final class DirectoryWalkTests: XCTestCase {
    private let capabilities = MediaCapabilities(supportedURISchemes: ["file"], supportedMIMETypes: [],
                                                 playableExtensions: ["ogg", "wav", "mp3"])
    private var root: URL!

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-walk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: root)
    }

    /// Makes an empty file at `root` + `name`, the name given as bytes (not necessarily UTF-8).
    private func touch(_ name: [UInt8]) throws {
        let path = Array(root.path.utf8) + [UInt8(ascii: "/")] + name
        let descriptor = (path + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { creat($0.baseAddress!, 0o644) }
        }
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        close(descriptor)
    }

    /// `count` empty `.wav` files in `folders` subfolders.
    private func tree(_ count: Int, in folders: Int) throws {
        for folder in 1...folders {
            try FileManager.default.createDirectory(at: root.appendingPathComponent("\(folder)"), withIntermediateDirectories: true)
        }
        for index in 0..<count { try touch(Array("\(index % folders + 1)/\(index).wav".utf8)) }
    }

    private func walk(limit: Int = .max, control: WalkControl = WalkControl()) throws(ResolveError) -> [MediaURI] {
        try capabilities.playableFiles(under: MediaURI(fileURL: root), limit: limit, control: control)
    }

    func testANameThatIsNotUTF8IsFoundInNaturalOrderAndItsURIMapsBackToItsBytes() throws {
        let latin1: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".ogg".utf8)  // "café.ogg" in Latin-1
        for name in [Array("cafe 10.ogg".utf8), Array("cafe 2.ogg".utf8), latin1, Array("d.ogg".utf8)] { try touch(name) }
        let found = try walk()
        let names = found.map { Array($0.pathBytes!.split(separator: UInt8(ascii: "/")).last!) }
        XCTAssertEqual(names, [Array("cafe 2.ogg".utf8), Array("cafe 10.ogg".utf8), latin1, Array("d.ogg".utf8)],
                       "every file, in natural order (the odd byte as U+FFFD sorts after the letters)")
        let odd = found[2]
        XCTAssertTrue(odd.string.hasSuffix("/caf%E9.ogg"), odd.string)
        XCTAssertEqual(try MediaURI(odd.string).pathBytes, odd.pathBytes, "the URI, parsed again, names the same bytes")
        XCTAssertEqual(found[0].string, MediaURI(fileURL: root.appendingPathComponent("cafe 2.ogg")).string,
                       "a UTF-8 name is the URI it always was")
    }

    func testTheWalkStopsPastItsLimit() throws {
        try tree(25, in: 5)
        XCTAssertEqual(try walk(limit: 25).count, 25)
        XCTAssertThrowsError(try walk(limit: 10)) { error in
            XCTAssertEqual(error as? ResolveError, .tooManyFiles(root: MediaURI(fileURL: root), limit: 10))
        }
    }

    /// Cancelled from its own progress report (the 1,000th file): it stops before the next directory.
    func testACancelledWalkStopsAtTheNextDirectory() throws {
        try tree(3_000, in: 3)
        let reports = Reports()
        let control = WalkControl { _, files in reports.add(files) }
        XCTAssertEqual(try walk(control: control).count, 3_000)
        XCTAssertEqual(reports.all, [1_000, 2_000, 3_000], "a report every 1,000 files")

        let cancelling = CancelOnFirstReport()
        XCTAssertThrowsError(try walk(control: cancelling.control)) { error in
            XCTAssertEqual(error as? ResolveError, .cancelled("cancelled by the test"))
        }
        let before = WalkControl()
        before.cancel("at once")
        XCTAssertThrowsError(try walk(control: before)) { XCTAssertEqual($0 as? ResolveError, .cancelled("at once")) }
    }

    /// Links into /proc and /sys (and a bind of them would be the same mount) are not entered, and
    /// /proc itself is refused: a walk there reads the kernel, not media.
    func testKernelFileSystemsAreNotWalked() throws {
        try touch(Array("a.ogg".utf8))
        for target in ["/proc", "/sys", "/dev", "/run"] {
            try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("link\(target.replacingOccurrences(of: "/", with: "-"))").path,
                                                       withDestinationPath: target)
        }
        XCTAssertEqual(try walk().map(\.displayName), ["a.ogg"])
        for folder in ["/proc", "/sys", "/dev", "/run", "/proc/self"] {
            XCTAssertThrowsError(try capabilities.playableFiles(under: MediaURI(folder))) { error in
                guard case .item(let error) = error as? ResolveError else { return XCTFail("\(folder): \(error)") }
                XCTAssertEqual(error.kind, .unsupportedFormat, folder)
                XCTAssertTrue(error.message.contains("not walked"), error.message)
            }
        }
    }
}

private final class Reports: @unchecked Sendable {
    private let lock = NSLock()
    private var reports: [Int] = []
    func add(_ files: Int) { lock.withLock { reports.append(files) } }
    var all: [Int] { lock.withLock { reports } }
}

private final class CancelOnFirstReport: Sendable {
    let control: WalkControl
    init() {
        let box = WeakControl()
        control = WalkControl { _, _ in box.control?.cancel("cancelled by the test") }
        box.control = control
    }
}

private final class WeakControl: @unchecked Sendable {
    weak var control: WalkControl?
}
