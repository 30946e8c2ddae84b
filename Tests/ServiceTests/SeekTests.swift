import Foundation
import TestSupport
import XCTest

/// Every kind of seek: Seeked carries the new position, and Position reads it once Seeked is out.
final class SeekTests: ServiceTestCase {
    typealias H = ServiceHarness
    /// Exact seeks land on the sample; allow for clock granularity.
    let exact: Int64 = 50_000

    private func long() throws -> URL { try short("twenty", seconds: 20) }

    /// Plays the 20 s file and pauses it, so that positions hold still; returns the track id.
    private func startPaused() throws -> String {
        try harness.startPlaying([try long()])
        try harness.playerctl("pause")
        try harness.waitForStatus("Paused")
        return try XCTUnwrap(try harness.trackID)
    }

    /// After Seeked, Position reads the value it carried (paused: it holds).
    private func assertSeeked(to target: Int64, from mark: Int, tolerance: Int64? = nil,
                              file: StaticString = #filePath, line: UInt = #line) throws {
        let seeked = try harness.waitForSeeked(from: mark)
        XCTAssertEqual(Double(seeked), Double(target), accuracy: Double(tolerance ?? exact), "Seeked position", file: file, line: line)
        let position = try harness.position
        XCTAssertEqual(Double(position), Double(seeked), accuracy: Double(exact),
                       "Position read after Seeked(\(seeked))", file: file, line: line)
        XCTAssertEqual(try harness.playbackStatus, "Paused", "a seek while paused stays paused", file: file, line: line)
    }

    func testPlayerctlAbsolutePosition() throws {
        _ = try startPaused()
        let mark = harness.mark()
        try harness.playerctl("position", "10")
        try assertSeeked(to: 10_000_000, from: mark)
        XCTAssertEqual(try XCTUnwrap(Double(try harness.playerctl("position"))), 10, accuracy: 0.05)
    }

    func testPlayerctlRelativePositionForwardAndBack() throws {
        _ = try startPaused()
        let start = try harness.position
        var mark = harness.mark()
        try harness.playerctl("position", "5+")
        try assertSeeked(to: start + 5_000_000, from: mark)
        mark = harness.mark()
        try harness.playerctl("position", "3-")
        try assertSeeked(to: start + 2_000_000, from: mark)
    }

    func testSetPositionWithTheCurrentTrackID() throws {
        let track = try startPaused()
        let mark = harness.mark()
        try harness.call(H.player, "SetPosition", "ox", [track, "7000000"])
        try assertSeeked(to: 7_000_000, from: mark)
    }

    func testSeekForwardBackAndBeforeTheStart() throws {
        _ = try startPaused()
        let start = try harness.position
        var mark = harness.mark()
        try harness.call(H.player, "Seek", "x", ["2000000"])
        try assertSeeked(to: start + 2_000_000, from: mark)
        mark = harness.mark()
        try harness.call(H.player, "Seek", "x", ["-1000000"])
        try assertSeeked(to: start + 1_000_000, from: mark)
        // MPRIS: seeking back past the start puts the position at 0
        mark = harness.mark()
        try harness.call(H.player, "Seek", "x", ["-100000000"])
        try assertSeeked(to: 0, from: mark)
    }

    func testSeekToExactAndWithTolerance() throws {
        _ = try startPaused()
        var mark = harness.mark()
        try harness.call(H.extensionInterface, "SeekTo", "xxx", ["12000000", "0", "0"])
        try assertSeeked(to: 12_000_000, from: mark)
        mark = harness.mark()
        try harness.call(H.extensionInterface, "SeekTo", "xxx", ["5000000", "2000000", "2000000"])
        try assertSeeked(to: 5_000_000, from: mark, tolerance: 2_000_000)
    }

    func testSeekedWhilePlayingCarriesAPositionThatReadsBack() throws {
        try harness.startPlaying([try long()])
        let track = try XCTUnwrap(try harness.trackID)
        for (name, call) in [
            ("Seek", { try self.harness.call(H.player, "Seek", "x", ["3000000"]) }),
            ("SetPosition", { try self.harness.call(H.player, "SetPosition", "ox", [track, "9000000"]) }),
            ("SeekTo", { try self.harness.call(H.extensionInterface, "SeekTo", "xxx", ["14000000", "0", "0"]) }),
        ] as [(String, () throws -> [Typed])] {
            let before = try harness.position
            let mark = harness.mark()
            _ = try call()
            let seeked = try harness.waitForSeeked(from: mark)
            let position = try harness.position
            // playing: the position read after the signal is the signalled one plus a little play
            XCTAssertGreaterThanOrEqual(position, seeked - exact, "\(name): Position \(position) read after Seeked(\(seeked))")
            XCTAssertLessThan(position, seeked + 1_000_000, "\(name): Position \(position) read after Seeked(\(seeked))")
            if name == "Seek" { XCTAssertEqual(Double(seeked), Double(before + 3_000_000), accuracy: 500_000) }
            if name == "SetPosition" { XCTAssertEqual(Double(seeked), 9_000_000, accuracy: Double(exact)) }
            if name == "SeekTo" { XCTAssertEqual(Double(seeked), 14_000_000, accuracy: Double(exact)) }
            XCTAssertEqual(try harness.playbackStatus, "Playing", "\(name) while playing keeps playing")
        }
    }

    /// MPRIS: SetPosition with a track id that is not the current one is stale and ignored; so is
    /// a position below 0 or past the end.
    func testStaleOrOutOfRangeSetPositionIsIgnored() throws {
        let track = try startPaused()
        let before = try harness.position
        let mark = harness.mark()
        try harness.call(H.player, "SetPosition", "ox", ["/io/github/tonearm/NotATrack", "7000000"])
        try harness.call(H.player, "SetPosition", "ox", [H.noTrack, "7000000"])
        try harness.call(H.player, "SetPosition", "ox", [track, "-5000000"])
        try harness.call(H.player, "SetPosition", "ox", [track, "60000000"])
        XCTAssertEqual(try harness.position, before)
        // the next seek that counts is the first Seeked after the ignored ones
        try harness.call(H.player, "SetPosition", "ox", [track, "3000000"])
        try assertSeeked(to: 3_000_000, from: mark)
    }

    /// MPRIS: a Seek past the end of the track acts like Next.
    func testSeekPastTheEndActsLikeNext() throws {
        let a = try short("a", seconds: 10, frequency: 440), b = try short("b", seconds: 10, frequency: 660)
        try harness.startPlaying([a, b])
        let tracks = try harness.tracks
        try harness.call(H.player, "Seek", "x", ["100000000"])
        try harness.waitForTrack(tracks[1])
        try harness.ping()
    }

    func testSeekToRefusesNegativeArguments() throws {
        _ = try startPaused()
        let before = try harness.position
        for arguments in [["int64:-1", "int64:0", "int64:0"], ["int64:1000000", "int64:-1", "int64:0"],
                          ["int64:1000000", "int64:0", "int64:-1"]] {
            let error = try harness.errorReply(H.extensionInterface, "SeekTo", arguments)
            XCTAssertEqual(error?.name, "org.freedesktop.DBus.Error.InvalidArgs", "SeekTo \(arguments)")
        }
        XCTAssertEqual(try harness.position, before)
    }
}
