import Foundation
import TestSupport
import XCTest

/// org.mpris.MediaPlayer2.TrackList: adding, removing, going to tracks, and the signals that say so.
final class TrackListTests: ServiceTestCase {
    typealias H = ServiceHarness

    private func three() throws -> [URL] {
        [try short("a", seconds: 10, frequency: 440), try short("b", seconds: 10, frequency: 550),
         try short("c", seconds: 10, frequency: 660)]
    }

    /// Tracks is "invalidates": a change is announced by name, never with the value.
    private func assertTracksInvalidated(from mark: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        try harness.waitForChange(H.trackList, "Tracks invalidated", from: mark) { _ in true }
        let changes = harness.propertiesChanged(H.trackList, from: mark)
        XCTAssertTrue(changes.contains { $0.invalidated.contains("Tracks") }, "Tracks not invalidated: \(changes)", file: file, line: line)
        XCTAssertFalse(changes.contains { $0.changed["Tracks"] != nil }, "Tracks sent with its value: \(changes)", file: file, line: line)
    }

    func testTrackIDsAreDistinctObjectPathsOutsideOrgMpris() throws {
        try harness.startPlaying(try three())
        let tracks = try harness.tracks
        XCTAssertEqual(tracks.count, 3)
        XCTAssertEqual(Set(tracks).count, 3)
        for track in tracks {
            XCTAssertFalse(track.hasPrefix("/org/mpris/"), "track id \(track) is in the reserved /org/mpris namespace")
        }
        XCTAssertEqual(try harness.trackID, tracks[0])
    }

    func testAddTrackAfterNoTrackGoesFirst() throws {
        let files = try three()
        try harness.startPlaying([files[0]])
        let current = try XCTUnwrap(try harness.trackID)
        let mark = harness.mark()
        try harness.call(H.trackList, "AddTrack", "sob", [H.uri(files[1]), H.noTrack, "false"])
        let added = try harness.waitForSignal(H.trackList, "TrackAdded", from: mark)
        XCTAssertEqual(added.arguments.last?.string, H.noTrack, "TrackAdded AfterTrack")
        let newID = try XCTUnwrap(added.arguments.first?.dictionary?["mpris:trackid"]?.string, "TrackAdded metadata has mpris:trackid")
        XCTAssertEqual(added.arguments.first?.dictionary?["mpris:trackid"]?.signature, "o")
        XCTAssertEqual(try harness.tracks, [newID, current])
        XCTAssertEqual(try harness.trackID, current, "SetAsCurrent false leaves the current track")
        XCTAssertEqual(try harness.playbackStatus, "Playing")
        try assertTracksInvalidated(from: mark)
    }

    func testAddTrackAfterATrackSetAsCurrent() throws {
        let files = try three()
        try harness.startPlaying([files[0], files[2]])
        let before = try harness.tracks
        let mark = harness.mark()
        try harness.call(H.trackList, "AddTrack", "sob", [H.uri(files[1]), before[0], "true"])
        let added = try harness.waitForSignal(H.trackList, "TrackAdded", from: mark)
        XCTAssertEqual(added.arguments.last?.string, before[0], "TrackAdded AfterTrack")
        let newID = try XCTUnwrap(added.arguments.first?.dictionary?["mpris:trackid"]?.string)
        XCTAssertEqual(try harness.tracks, [before[0], newID, before[1]])
        try harness.waitForTrack(newID)
        XCTAssertEqual(try harness.metadata["xesam:url"]?.string, H.uri(files[1]))
        try assertTracksInvalidated(from: mark)
    }

    /// AddTrack of a file the queue holds already answers without looking at the file again;
    /// once an item of it failed (the file went away), the next AddTrack looks, and says so.
    func testAddTrackOfAQueuedFileChecksItAgainOnceItFailed() throws {
        // a copy that the test can delete (the media are shared between tests)
        let folder = harness.directory.appendingPathComponent("gone")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let files = try three().enumerated().map { index, file in
            let copy = folder.appendingPathComponent("copy \(index).wav")
            try FileManager.default.copyItem(at: file, to: copy)
            return copy
        }
        try harness.startPlaying([files[0], files[1]])
        var tracks = try harness.tracks
        var mark = harness.mark()
        try harness.call(H.trackList, "AddTrack", "sob", [H.uri(files[1]), tracks[1], "false"])
        _ = try harness.waitForSignal(H.trackList, "TrackAdded", from: mark)
        tracks = try harness.tracks
        XCTAssertEqual(tracks.count, 3)

        try FileManager.default.removeItem(at: files[1])
        mark = harness.mark()
        try harness.call(H.trackList, "GoTo", "o", [tracks[1]])
        let failed = try harness.waitForSignal(H.extensionInterface, "ItemFailed", from: mark)
        XCTAssertEqual(failed.arguments.first?.string, tracks[1])
        let error = try XCTUnwrap(try harness.errorReply(H.trackList, "AddTrack", ["string:\(H.uri(files[1]))",
                                                                                 "objpath:\(H.noTrack)", "boolean:false"]),
                                  "AddTrack of a file that is gone was accepted")
        XCTAssertEqual(error.name, H.errorPrefix + "FileNotFound", "\(error)")
        XCTAssertEqual(try harness.tracks, tracks, "nothing added")
    }

    func testRemoveTrack() throws {
        try harness.startPlaying(try three())
        let tracks = try harness.tracks
        let mark = harness.mark()
        try harness.call(H.trackList, "RemoveTrack", "o", [tracks[1]])
        let removed = try harness.waitForSignal(H.trackList, "TrackRemoved", from: mark)
        XCTAssertEqual(removed.arguments.first?.string, tracks[1])
        XCTAssertEqual(try harness.tracks, [tracks[0], tracks[2]])
        XCTAssertEqual(try harness.trackID, tracks[0])
        try assertTracksInvalidated(from: mark)
        // the next track is now the third
        try harness.playerctl("next")
        try harness.waitForTrack(tracks[2])
    }

    func testGoTo() throws {
        let files = try three()
        try harness.startPlaying(files)
        let tracks = try harness.tracks
        let mark = harness.mark()
        try harness.call(H.trackList, "GoTo", "o", [tracks[2]])
        try harness.waitForChange(H.player, "Metadata of the third track", from: mark) {
            $0["Metadata"]?.dictionary?["mpris:trackid"]?.string == tracks[2]
        }
        XCTAssertEqual(try harness.metadata["xesam:url"]?.string, H.uri(files[2]))
        XCTAssertEqual(try harness.tracks, tracks, "GoTo does not change the list")
        // a client that caches GetAll believes only PropertiesChanged (design brief): the jump to
        // the last track is announced with what it changed, and nothing that it did not (CanGoPrevious
        // was true at the first track already: Previous starts it again)
        let announced = harness.propertiesChanged(H.player, from: mark).reduce(into: [String: MonitorValue]()) {
            $0.merge($1.changed) { $1 }
        }
        XCTAssertEqual(announced["CanGoNext"]?.bool, false, "\(announced.keys.sorted())")
        for unchanged in ["LoopStatus", "Rate", "Shuffle", "Volume", "CanGoPrevious"] {
            XCTAssertNil(announced[unchanged], "\(unchanged) announced though GoTo did not change it")
        }
        let player = try harness.getAll(H.player)
        XCTAssertEqual(player["CanGoNext"]?.bool, false)
        XCTAssertEqual(player["CanGoPrevious"]?.bool, true)
    }

    /// Tracks added to a list that has some are announced one by one, each after the one before it.
    func testEnqueueAnnouncesEachAddedTrack() throws {
        let files = try three()
        try harness.start([files[0].path])
        try harness.waitForStatus("Playing")
        let first = try XCTUnwrap(try harness.tracks.first)
        let mark = harness.mark()
        let ids = try harness.call(H.extensionInterface, "Enqueue", "asb", ["3"] + files.map(H.uri) + ["false"]).first?.strings ?? []
        XCTAssertEqual(ids.count, 3)
        XCTAssertEqual(try harness.tracks, [first] + ids)
        for (index, id) in ids.enumerated() {
            let added = try harness.waitForSignal(H.trackList, "TrackAdded", from: mark) {
                $0.arguments.first?.dictionary?["mpris:trackid"]?.string == id
            }
            XCTAssertEqual(added.arguments.last?.string, index == 0 ? first : ids[index - 1], "AfterTrack of \(id)")
            XCTAssertEqual(added.arguments.first?.dictionary?["xesam:url"]?.string, H.uri(files[index]))
        }
        try assertTracksInvalidated(from: mark)
        XCTAssertFalse(harness.watcher.messages(from: mark).contains { $0.member == "TrackListReplaced" },
                       "nothing was replaced: the first track stayed")
        XCTAssertEqual(try harness.trackID, first, "adding does not change the current track")
    }

    /// Tracks added to an empty list replace it: one TrackListReplaced, the first of them current.
    func testEnqueueIntoAnEmptyListReplacesIt() throws {
        let files = try three()
        try harness.start()
        let mark = harness.mark()
        let ids = try harness.call(H.extensionInterface, "Enqueue", "asb", ["3"] + files.map(H.uri) + ["false"]).first?.strings ?? []
        XCTAssertEqual(ids.count, 3)
        let replaced = try harness.waitForSignal(H.trackList, "TrackListReplaced", from: mark)
        XCTAssertEqual(replaced.arguments.first?.strings, ids)
        // (its CurrentTrack says NoTrack today: the player announces the queue before it makes the
        // first item current; clients learn the current track from Metadata, checked below)
        XCTAssertEqual(try harness.tracks, ids)
        XCTAssertEqual(try harness.trackID, ids[0])
        try assertTracksInvalidated(from: mark)
    }
}
