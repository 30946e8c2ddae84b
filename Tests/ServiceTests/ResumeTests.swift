import Foundation
import TestSupport
import XCTest

/// Nothing forgotten (issue 14): a tonearmd that is killed or quits comes back with the same
/// queue, the same current track and the same position, as a client sees them over D-Bus.
final class ResumeTests: ServiceTestCase {
    typealias H = ServiceHarness

    /// Five 30 s tones of different pitches.
    func five() throws -> [URL] {
        try (1...5).map { try short("resume-\($0)", seconds: 30, frequency: 220 + 110 * Double($0)) }
    }

    /// Makes `track` current and seeks it to `seconds`; returns when Seeked says it is there.
    func go(to track: String, at seconds: Int) throws {
        try harness.call(H.trackList, "GoTo", "o", [track])
        try harness.waitForTrack(track)
        let mark = harness.mark()
        try harness.call(H.player, "SetPosition", "ox", [track, "\(seconds * 1_000_000)"])
        _ = try harness.waitForSeeked(from: mark)
    }

    /// SIGKILL, and the wait for the exit.
    func kill(_ daemon: Daemon) {
        harness.exitExpected.insert(daemon.pid)
        Foundation.kill(daemon.pid, SIGKILL)
        XCTAssertEqual(daemon.waitForExit(timeout: 10), SIGKILL, "tonearmd did not die of SIGKILL")
    }

    /// SIGTERM (a normal stop), and the wait for exit status 0.
    func terminate(_ daemon: Daemon) {
        harness.exitExpected.insert(daemon.pid)
        daemon.process.terminate()
        XCTAssertEqual(daemon.waitForExit(timeout: 10), 0, "tonearmd did not stop cleanly on SIGTERM:\n\(daemon.output)")
    }

    func testAServiceKilledWhilePlayingItemThreeOfFiveComesBackPausedThere() throws {
        let first = try harness.startPlaying(try five())
        let tracks = try harness.tracks
        XCTAssertEqual(tracks.count, 5)
        try go(to: tracks[2], at: 10)
        try harness.waitForStatus("Playing")
        // let it play past a checkpoint: the position saved at the seek alone would be 10 s
        Thread.sleep(forTimeInterval: 7)
        let killedAt = try harness.position
        XCTAssertGreaterThan(killedAt, 16_000_000, "it played on from 10 s")
        kill(first)

        // restored before the name is taken: the first reads already show it
        let second = try harness.start()
        XCTAssertNotEqual(second.pid, first.pid)
        let player = try harness.getAll(H.player)
        XCTAssertEqual(player["PlaybackStatus"]?.string, "Paused")
        XCTAssertEqual(player["Metadata"]?.dictionary?["mpris:trackid"]?.string, tracks[2], "the same current track")
        let position = try XCTUnwrap(player["Position"]?.int64)
        XCTAssertLessThanOrEqual(position, killedAt, "not past where it was killed")
        XCTAssertGreaterThanOrEqual(position, killedAt - 5_000_000, "within 5 s of where it was killed (killed at \(killedAt) µs)")
        XCTAssertEqual(try harness.tracks, tracks, "the same track ids in the same order")
        XCTAssertTrue(second.output.contains("restored 5 item(s)"), second.output)

        // it stays there paused, loaded only once asked to play (RestoredAtRestTests)
        XCTAssertEqual(try harness.playbackStatus, "Paused")
        XCTAssertEqual(try harness.position, position)
        // and plays on from there when asked
        try harness.playerctl("play")
        try harness.waitForStatus("Playing")
        XCTAssertGreaterThanOrEqual(try harness.position, position)
        XCTAssertEqual(try harness.trackID, tracks[2])
    }

    func testSettingsAndAQuitAreSavedAndResumeModesAreKept() throws {
        let files = Array(try five().prefix(3))
        try harness.startPlaying(files)
        let tracks = try harness.tracks
        try go(to: tracks[1], at: 4)
        try harness.playerctl("pause")
        try harness.waitForStatus("Paused")
        try harness.set(H.player, "Volume", "d", "0.3")
        try harness.set(H.player, "LoopStatus", "s", "Playlist")
        try harness.set(H.player, "Rate", "d", "1.5")
        try harness.set(H.extensionInterface, "Muted", "b", "true")
        try harness.call(H.trackList, "RemoveTrack", "o", [tracks[2]])
        let quitting = harness.daemon
        harness.exitExpected.insert(quitting.pid)
        try harness.call(H.root, "Quit")
        XCTAssertEqual(quitting.waitForExit(timeout: 10), 0)

        // --resume=play: playing where it was, with every setting
        try harness.start(["--resume=play"])
        try harness.waitForStatus("Playing")
        let player = try harness.getAll(H.player)
        XCTAssertEqual(player["Metadata"]?.dictionary?["mpris:trackid"]?.string, tracks[1])
        XCTAssertEqual(player["Volume"]?.double, 0.3)
        XCTAssertEqual(player["LoopStatus"]?.string, "Playlist")
        XCTAssertEqual(player["Rate"]?.double, 1.5)
        XCTAssertEqual(try harness.get(H.extensionInterface, "Muted").bool, true)
        XCTAssertEqual(try harness.tracks, Array(tracks.prefix(2)), "the removed track stays removed")
        XCTAssertGreaterThanOrEqual(try harness.position, 3_900_000, "from the saved position (4 s)")
        terminate(harness.daemon)

        // --resume=none: empty, and the saved state is replaced by that empty one
        try harness.start(["--resume=none"])
        XCTAssertEqual(try harness.tracks, [])
        XCTAssertEqual(try harness.playbackStatus, "Stopped")
        terminate(harness.daemon)
        try harness.start()
        XCTAssertEqual(try harness.tracks, [], "the empty state of the --resume=none run was saved")
    }

    /// Next `count` times, each waiting for the track it goes to; returns the tracks gone to.
    func walk(_ count: Int) throws -> [String] {
        var seen: [String] = []
        for _ in 0..<count {
            let before = try harness.trackID
            let mark = harness.mark()
            try harness.call(H.player, "Next")
            try harness.waitForChange(H.player, "Next from \(before ?? "nothing")", from: mark) {
                guard let id = $0["Metadata"]?.dictionary?["mpris:trackid"]?.string else { return false }
                return id != before
            }
            seen.append(try XCTUnwrap(try harness.trackID))
        }
        return seen
    }

    func testTheShuffledOrderIsKeptAcrossAKill() throws {
        // eight tracks shuffled, two more added while shuffled (each with a place of its own in
        // the order), and the whole cycle walked once with LoopStatus Playlist
        let files = try (1...10).map { try short("shuffle-\($0)", seconds: 30, frequency: 200 + 50 * Double($0)) }
        try harness.startPlaying(Array(files.prefix(8)))
        try harness.playerctl("pause")
        try harness.waitForStatus("Paused")
        try harness.set(H.player, "LoopStatus", "s", "Playlist")
        try harness.set(H.player, "Shuffle", "b", "true")
        try harness.call(H.extensionInterface, "Enqueue", "asb", ["2", H.uri(files[8]), H.uri(files[9]), "false"])
        XCTAssertEqual(try harness.tracks.count, 10)
        let start = try XCTUnwrap(try harness.trackID)
        let cycle = try walk(10)
        XCTAssertEqual(cycle.last, start, "Next walks every track once and wraps: \(cycle)")
        XCTAssertEqual(Set(cycle).count, 10, "\(cycle)")
        // three steps into the cycle, then killed
        let before = try walk(3)
        XCTAssertEqual(before, Array(cycle.prefix(3)), "the same order on the second lap")
        // the store writes on its own queue right after the change: let that write land
        Thread.sleep(forTimeInterval: 0.5)
        kill(harness.daemon)

        try harness.start()
        XCTAssertEqual(try harness.get(H.player, "Shuffle").bool, true)
        XCTAssertEqual(try harness.trackID, cycle[2])
        let after = try walk(10)
        let expected = Array(cycle[3...] + cycle[..<3])
        XCTAssertEqual(after, expected, "after the restart Next walks on in the order it had")
    }

    func testItemsWhoseFilesAreGoneComeBackFailedNotDropped() throws {
        // copies that the test can delete
        let folder = harness.directory.appendingPathComponent("gone")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let files = try Array(five().prefix(3)).enumerated().map { index, file in
            let copy = folder.appendingPathComponent("copy \(index).wav")
            try FileManager.default.copyItem(at: file, to: copy)
            return copy
        }
        try harness.startPlaying(files)
        let tracks = try harness.tracks
        try go(to: tracks[1], at: 2)
        terminate(harness.daemon)
        try FileManager.default.removeItem(at: files[1])

        try harness.start()
        XCTAssertEqual(try harness.tracks, tracks, "nothing dropped")
        XCTAssertEqual(try harness.trackID, tracks[1])
        XCTAssertEqual(try harness.get(H.extensionInterface, "ItemStatus").string, "failed")
        let error = try harness.get(H.extensionInterface, "ItemError")
        let fields = try XCTUnwrap(error.data as? [Any])
        XCTAssertEqual(fields.first as? String, H.errorPrefix + "FileNotFound", "\(error)")
        XCTAssertTrue((fields.last as? String ?? "").contains(files[1].path), "\(error)")
        // Play moves on to the next track, whose file is there
        try harness.playerctl("play")
        try harness.waitForTrack(tracks[2])
        try harness.waitForStatus("Playing")
    }
}
