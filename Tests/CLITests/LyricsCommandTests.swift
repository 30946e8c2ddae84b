import Foundation
import TestSupport
import XCTest

/// `tonearm lyrics` against a real tonearmd: the text of an `.lrc` beside an Ogg file, status 1
/// for a track without lyrics, and `--follow` printing synced lines at about their times.
final class LyricsCommandTests: CLITestCase {
    func sung() throws -> URL {
        let file = try track("sung", title: "Sung")
        try "[ti:Sung]\n[00:01.00]one\n[00:02.00]two\n[00:03.00]three\n"
            .write(to: file.deletingPathExtension().appendingPathExtension("lrc"), atomically: true, encoding: .utf8)
        return file
    }

    func testPrintsTheTextAndSaysWhenThereIsNone() throws {
        let plain = try track("plain", title: "Plain")
        try harness.startService()
        try harness.ok("play", try sung().path, plain.path)
        try harness.waitForStatus("Playing")
        try harness.waitForReady(title: "Sung")
        XCTAssertEqual(try harness.ok("lyrics"), "one\ntwo\nthree\n")
        try harness.ok("next")
        try harness.waitForReady(title: "Plain")
        let none = try harness.tonearm(["lyrics"])
        XCTAssertEqual(none.status, 1, none.stderr)
        XCTAssertEqual(none.stdout, "")
        XCTAssertTrue(none.stderr.contains("Plain has no lyrics"), none.stderr)
    }

    func testFollowPrintsEachLineAtItsTime() throws {
        try harness.startService()
        try harness.ok("play", try sung().path)
        try harness.waitForStatus("Playing")
        try harness.waitForReady(title: "Sung")
        try harness.ok("pause")
        try harness.waitForStatus("Paused")
        try harness.ok("seek", "0")
        let follow = try harness.spawn(["lyrics", "--follow"])
        defer { follow.kill() }
        usleep(300_000)  // subscribed and read: paused at 0, before the first line, it prints nothing
        try harness.ok("play")
        let started = Date()
        XCTAssertEqual(try follow.nextLine(timeout: 5, waitingFor: "the first line"), "one")
        let first = Date().timeIntervalSince(started)
        XCTAssertEqual(try follow.nextLine(timeout: 5, waitingFor: "the second line"), "two")
        let second = Date().timeIntervalSince(started)
        XCTAssertEqual(first, 1.0, accuracy: 0.6, "the first line at about 1 s")
        XCTAssertEqual(second - first, 1.0, accuracy: 0.3, "the second a second later, from the position and the rate")
        // a seek back prints the line it lands in, once
        try harness.ok("seek", "1.5")
        XCTAssertEqual(try follow.nextLine(timeout: 5, waitingFor: "the line after the seek"), "one")
        try harness.ok("stop")
        XCTAssertEqual(follow.finish(timeout: 10).status, 0, "stopping ends it")
    }
}
