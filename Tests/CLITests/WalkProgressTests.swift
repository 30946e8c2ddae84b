import Foundation
import Glibc
import TestSupport
import XCTest

/// `tonearm add` (and `play`) of a big folder shows the walk's progress on a terminal, in place, and nothing
/// when stderr is not one.
final class WalkProgressTests: CLITestCase {
    func testAddShowsTheWalkOnATerminalOnly() throws {
        let folder = harness.directory.appendingPathComponent("five thousand")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for index in 1...5_000 {
            let descriptor = creat(folder.appendingPathComponent("\(index).wav").path, 0o644)
            XCTAssertGreaterThanOrEqual(descriptor, 0)
            close(descriptor)
        }
        try harness.startService()

        for command in ["add", "play"] {
            let run = try harness.spawnOnTerminal([command, folder.path], columns: 80)
            defer { run.kill() }
            var lines: [String] = []
            while let line = try run.nextLine(waitingFor: "the end of `tonearm \(command)` after \(lines)\n\(harness.logs)") { lines.append(line) }
            XCTAssertEqual(lines.last, "exit 0", "\(command): \(lines)")
            let frames = lines.dropFirst().dropLast(2).compactMap { line in
                try? JSONSerialization.jsonObject(with: Data(line.utf8), options: .fragmentsAllowed) as? String
            }
            XCTAssertEqual(frames, ["1,000", "2,000", "3,000", "4,000", "5,000"].map { "\rwalking \(folder.path): \($0) files…" } + ["\r"],
                           "\(command): one line rewritten every 1,000 files, erased at the end: \(lines)")
        }

        let piped = try harness.tonearm(["add", folder.path])
        XCTAssertEqual(piped.status, 0, piped.stderr)
        XCTAssertEqual(piped.stderr, "", "no progress when stderr is not a terminal")
        XCTAssertEqual(try harness.ok("queue").split(separator: "\n").count, 15_000)
    }
}
