import TonearmClient
import XCTest

/// What the CLI takes from a person, parsed by TonearmClient: times, volumes, paths. No service.
final class ParsingTests: XCTestCase {
    func testSeekTargets() throws {
        XCTAssertEqual(try TimeText.parseSeek("75"), .absolute(.seconds(75)))
        XCTAssertEqual(try TimeText.parseSeek("1:15"), .absolute(.seconds(75)))
        XCTAssertEqual(try TimeText.parseSeek("1:02:03"), .absolute(.seconds(3723)))
        XCTAssertEqual(try TimeText.parseSeek("+10"), .relative(.seconds(10)))
        XCTAssertEqual(try TimeText.parseSeek("-0:05"), .relative(.seconds(-5)))
        XCTAssertEqual(try TimeText.parseSeek("2.5"), .absolute(.milliseconds(2500)))
    }

    func testSeekTargetsThatAreNotTimes() {
        for text in ["", "+", "nan", "inf", "-inf", "1e3", "0x10", "1:60", "1:2:3:4", ":30", "1:", "1.2.3", "abc", "1:30.5.1", "1:75"] {
            XCTAssertThrowsError(try TimeText.parseSeek(text), "\(text) parsed")
        }
    }

    func testHugeTimesSaturateInsteadOfTrapping() throws {
        let huge = String(repeating: "9", count: 400)
        XCTAssertEqual(try TimeText.parseSeek(huge), .absolute(.microseconds(Int64.max)))
        XCTAssertEqual(try TimeText.parseSeek("-" + huge), .relative(.microseconds(Int64.min)))
        XCTAssertEqual(Duration.seconds(Int64.max).microsecondsSaturating, Int64.max)
        XCTAssertEqual(Duration.seconds(Int64.min).microsecondsSaturating, Int64.min)
        XCTAssertNil(Duration.saturatingSeconds(.nan))
        XCTAssertNil(Duration.saturatingSeconds(.infinity))
    }

    func testVolumes() throws {
        XCTAssertEqual(try VolumeChange.parse("50%"), .absolute(0.5))
        XCTAssertEqual(try VolumeChange.parse("50"), .absolute(0.5))
        XCTAssertEqual(try VolumeChange.parse("+10%"), .relative(0.1))
        XCTAssertEqual(try VolumeChange.parse("-5%"), .relative(-0.05))
        XCTAssertEqual(try VolumeChange.parse("+1000%"), .relative(1), "a relative change saturates")
        XCTAssertEqual(try VolumeChange.parse("-" + String(repeating: "9", count: 400) + "%"), .relative(-1))
        for text in ["", "%", "101%", "nan%", "inf", "-", "1e2", "ten%", "5%%"] {
            XCTAssertThrowsError(try VolumeChange.parse(text), "\(text) parsed")
        }
    }

    func testTimesAsText() {
        XCTAssertEqual(TimeText.format(.seconds(0)), "0:00")
        XCTAssertEqual(TimeText.format(.milliseconds(75_900)), "1:15")
        XCTAssertEqual(TimeText.format(.seconds(3723)), "1:02:03")
        XCTAssertEqual(TimeText.format(.seconds(-5)), "-0:05")
        XCTAssertEqual(TimeText.format(.microseconds(Int64.min)), "-2562047788:00:54")
    }

    func testPathsBecomeAbsoluteFileURIsAndURIsStay() {
        XCTAssertEqual(MediaLocation.uri(for: "a b.ogg", relativeTo: "/music"), "file:///music/a%20b.ogg")
        XCTAssertEqual(MediaLocation.uri(for: "../x/./y.ogg", relativeTo: "/music/in"), "file:///music/x/y.ogg")
        XCTAssertEqual(MediaLocation.uri(for: "/abs.ogg", relativeTo: "/music"), "file:///abs.ogg")
        XCTAssertEqual(MediaLocation.uri(for: "https://example.com/s.mp3"), "https://example.com/s.mp3")
        XCTAssertFalse(MediaLocation.isURI("a:b.mp3"))
        XCTAssertFalse(MediaLocation.isURI("1http://x"))
        XCTAssertEqual(MediaLocation.missingFiles(["/nonexistent/x.ogg", "/", "http://example.com/x"]), ["/nonexistent/x.ogg"])
    }

    /// `tonearm daemon` runs the tonearmd next to it before one on PATH, and only an executable file.
    func testServiceExecutableIsFoundNextToTheClientFirst() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-exe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let own = root.appendingPathComponent("own"), onPath = root.appendingPathComponent("path"),
            notExecutable = root.appendingPathComponent("plain"), asDirectory = root.appendingPathComponent("dir")
        for directory in [own, onPath, notExecutable, asDirectory] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        try FileManager.default.createDirectory(at: asDirectory.appendingPathComponent("tonearmd"), withIntermediateDirectories: true)
        for (directory, mode) in [(own, 0o755), (onPath, 0o755), (notExecutable, 0o644)] {
            let file = directory.appendingPathComponent("tonearmd").path
            XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: mode]))
        }
        let path = [notExecutable.path, asDirectory.path, onPath.path].joined(separator: ":")
        XCTAssertEqual(ServiceExecutable.find(nextTo: own.path, searchPath: path), own.appendingPathComponent("tonearmd").path)
        XCTAssertEqual(ServiceExecutable.find(nextTo: root.path, searchPath: path), onPath.appendingPathComponent("tonearmd").path,
                       "past a file that is not executable and a directory of that name")
        XCTAssertNil(ServiceExecutable.find(nextTo: root.path, searchPath: notExecutable.path))
        XCTAssertNil(ServiceExecutable.find(nextTo: nil, searchPath: nil))
    }
}
