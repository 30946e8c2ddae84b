import Foundation
import TestSupport
import XCTest

/// A restored queue at rest (issue 30): after a restart, before anything plays, a client sees the
/// current track paused where it was with its tags and length, and every queued track's tags,
/// from what was saved, with GStreamer not initialised; Play then loads the track and plays on
/// from there.
final class RestoredAtRestTests: ServiceTestCase {
    typealias H = ServiceHarness

    /// Each key's value as text, to compare two a{sv} read at different times.
    private func text(_ metadata: [String: Typed]) -> [String: String] { metadata.mapValues(\.description) }

    private func tracksMetadata(_ ids: [String]) throws -> [[String: String]] {
        let reply = try harness.call(H.trackList, "GetTracksMetadata", "ao", ["\(ids.count)"] + ids)
        let list = try XCTUnwrap(reply.first?.data as? [Any])
        return list.compactMap { Typed(type: "a{sv}", data: $0).dictionary.map(text) }
    }

    /// Asks for every track's metadata and waits until each has its title and length: the tags
    /// of tracks that have not played are read in the background (TrackMetadataChanged).
    private func readAll(_ tracks: [String]) throws -> [[String: String]] {
        let mark = harness.mark()
        var all = try tracksMetadata(tracks)
        for (index, id) in tracks.enumerated() where all[index]["xesam:title"] == nil || all[index]["mpris:length"] == nil {
            try harness.waitForSignal(H.trackList, "TrackMetadataChanged", from: mark) {
                guard $0.arguments.first?.string == id, let metadata = $0.arguments.last?.dictionary else { return false }
                return metadata["xesam:title"] != nil && metadata["mpris:length"] != nil
            }
        }
        all = try tracksMetadata(tracks)
        return all
    }

    private func quit() throws {
        let quitting = harness.daemon
        harness.exitExpected.insert(quitting.pid)
        try harness.call(H.root, "Quit")
        XCTAssertEqual(quitting.waitForExit(timeout: 10), 0, quitting.output)
    }

    /// Four tagged 20 s tones; the second paused at 6 s.
    private func pausedOnTheSecond() throws -> (tracks: [String], titles: [String]) {
        let titles = (1...4).map { "Resting \($0)" }
        let files = try titles.enumerated().map { index, title in
            try tagged("rest-\(index)", title: title, artist: "The Sleepers", album: "Saved", seconds: 20)
        }
        try harness.startPlaying(files)
        let tracks = try harness.tracks
        try harness.call(H.trackList, "GoTo", "o", [tracks[1]])
        try harness.waitForTrack(tracks[1])
        try harness.playerctl("pause")
        try harness.waitForStatus("Paused")
        let mark = harness.mark()
        try harness.call(H.player, "SetPosition", "ox", [tracks[1], "6000000"])
        _ = try harness.waitForSeeked(from: mark)
        return (tracks, titles)
    }

    func testARestoredPausedTrackShowsItsSavedMetadataWithoutGStreamerAndPlaysFromThere() throws {
        let (tracks, titles) = try pausedOnTheSecond()
        let saved = try readAll(tracks)
        XCTAssertEqual(saved.map { $0["xesam:title"] }, titles.map { "s \($0)" })
        let current = text(try harness.metadata)
        XCTAssertEqual(current["xesam:title"], "s Resting 2")
        XCTAssertNotNil(current["mpris:length"])
        try quit()

        // the first start wrote the formats cache: this one needs GStreamer for nothing
        try harness.start()
        let player = try harness.getAll(H.player)
        XCTAssertEqual(player["PlaybackStatus"]?.string, "Paused")
        XCTAssertEqual(player["Metadata"]?.dictionary.map(text), current, "the current track's tags and length, as saved")
        XCTAssertEqual(player["Position"]?.int64, 6_000_000, "where it was paused")
        XCTAssertEqual(player["CanSeek"]?.bool, true)
        XCTAssertEqual(try harness.tracks, tracks)
        XCTAssertEqual(try tracksMetadata(tracks), saved, "every queued track's tags, as saved")
        XCTAssertFalse(try pluginsMapped(), "GStreamer was initialised to show a paused, saved track")
        XCTAssertEqual(try harness.get(H.extensionInterface, "ItemStatus").string, "unknown", "not loaded")

        // Play loads it and plays on from the saved position
        try harness.playerctl("play")
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        XCTAssertGreaterThanOrEqual(try harness.position, 6_000_000)
        XCTAssertLessThan(try harness.position, 9_000_000, "from the saved position, not the start or the end")
        XCTAssertEqual(try harness.trackID, tracks[1])
        XCTAssertTrue(try pluginsMapped())
        XCTAssertEqual(text(try harness.metadata)["xesam:title"], "s Resting 2", "the file's tags are the saved ones")
    }

    /// Stopped, the restored queue shows its saved tags as well, with nothing read again.
    func testARestoredStoppedQueueShowsItsSavedMetadataWithoutGStreamer() throws {
        let (tracks, _) = try pausedOnTheSecond()
        let saved = try readAll(tracks)
        try harness.playerctl("stop")
        try harness.waitForStatus("Stopped")
        try quit()
        try harness.start()
        XCTAssertEqual(try harness.playbackStatus, "Stopped")
        XCTAssertEqual(try harness.metadata["xesam:title"]?.string, "Resting 2")
        XCTAssertEqual(try tracksMetadata(tracks), saved)
        XCTAssertFalse(try pluginsMapped(), "GStreamer was initialised to show a stopped, saved queue")
    }

    /// A seek before Play loads the track paused at the seek's target.
    func testASeekOfTheRestoredTrackLoadsItPausedThere() throws {
        let (tracks, _) = try pausedOnTheSecond()
        _ = try readAll(tracks)
        try quit()
        try harness.start()
        XCTAssertFalse(try pluginsMapped())
        let mark = harness.mark()
        try harness.call(H.player, "SetPosition", "ox", [tracks[1], "12000000"])
        XCTAssertEqual(Double(try harness.waitForSeeked(from: mark)), 12_000_000, accuracy: 100_000)
        try harness.waitForItemStatus("readyToPlay")
        XCTAssertEqual(try harness.playbackStatus, "Paused")
        XCTAssertEqual(Double(try harness.position), 12_000_000, accuracy: 100_000)
    }

    /// The file changed while tonearmd was away: loaded, its new tags replace the saved ones.
    func testNewTagsOfAChangedFileReplaceTheSavedOnes() throws {
        let file = try tagged("changing", title: "Before", artist: "Old", album: "Saved", seconds: 20)
        try harness.startPlaying([file])
        try harness.playerctl("pause")
        try harness.waitForStatus("Paused")
        XCTAssertEqual(try harness.metadata["xesam:title"]?.string, "Before")
        try quit()
        let newer = try tagged("changed", title: "After", artist: "New", album: "Saved", seconds: 20)
        try FileManager.default.removeItem(at: file)
        try FileManager.default.copyItem(at: newer, to: file)

        try harness.start()
        XCTAssertEqual(try harness.metadata["xesam:title"]?.string, "Before", "what was saved, until it loads")
        let mark = harness.mark()
        try harness.playerctl("play")
        try harness.waitForChange(H.player, "the new title", from: mark) {
            $0["Metadata"]?.dictionary?["xesam:title"]?.string == "After"
        }
        XCTAssertEqual(try harness.metadata["xesam:artist"]?.strings, ["New"])
    }
}
