import Foundation
import TestSupport
import XCTest

/// Play, pause, stop, next, previous, rate, volume, loop and shuffle, as playerctl and busctl see them.
final class TransportTests: ServiceTestCase {
    typealias H = ServiceHarness

    func testPlayPausePlayPauseAndStopWithPlayerctl() throws {
        try harness.startPlaying([try short("ten", seconds: 10)])
        XCTAssertEqual(try harness.playerctl("status"), "Playing")
        try harness.playerctl("pause")
        try harness.waitForStatus("Paused")
        XCTAssertEqual(try harness.playerctl("status"), "Paused")
        try harness.playerctl("play")
        try harness.waitForStatus("Playing")
        XCTAssertEqual(try harness.playerctl("status"), "Playing")
        try harness.playerctl("play-pause")
        try harness.waitForStatus("Paused")
        try harness.playerctl("play-pause")
        try harness.waitForStatus("Playing")
        try harness.playerctl("stop")
        try harness.waitForStatus("Stopped")
        XCTAssertEqual(try harness.playerctl("status"), "Stopped")
        XCTAssertEqual(try harness.position, 0, "Stop puts the position at 0")
    }

    func testPlayAfterStopRestartsTheItem() throws {
        try harness.startPlaying([try short("ten", seconds: 10)])
        let track = try harness.trackID
        let mark = harness.mark()
        try harness.call(H.player, "SetPosition", "ox", [try XCTUnwrap(track), "6000000"])
        _ = try harness.waitForSeeked(from: mark)
        try harness.playerctl("stop")
        try harness.waitForStatus("Stopped")
        XCTAssertEqual(try harness.position, 0)
        try harness.playerctl("play")
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        XCTAssertEqual(try harness.trackID, track, "Play after Stop plays the same item")
        let position = try harness.position
        XCTAssertLessThan(position, 3_000_000, "Play after Stop starts the item again, not at 6 s")
    }

    /// OpenUri after Stop: the released pipeline is kept and plays the new file (GStreamerEngine
    /// keeps a released playbin warm); what clients see must be that file's alone, and a broken
    /// file opened the same way fails with its own error without spoiling the next one.
    func testOpenUriAfterStopPlaysTheNewFileFromItsStartWithItsOwnMetadataAndLength() throws {
        let first = try media.tone("open-first", format: .mp3, seconds: 8, tags: MediaGenerator.Tags(title: "First", artist: "One"))
        let second = try tagged("open-second", title: "Second", artist: "Two", seconds: 4)
        let noise = try media.generator.garbage("open-noise.mp3")
        try harness.startPlaying([first])
        let track = try XCTUnwrap(try harness.trackID)
        var mark = harness.mark()
        try harness.call(H.player, "SetPosition", "ox", [track, "5000000"])
        _ = try harness.waitForSeeked(from: mark)
        try harness.playerctl("stop")
        try harness.waitForStatus("Stopped")

        try harness.call(H.player, "OpenUri", "s", [H.uri(second)])
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        XCTAssertNotEqual(try harness.trackID, track)
        XCTAssertLessThan(try harness.position, 3_000_000, "the new file from its start, not where the first stopped")
        let metadata = try harness.metadata
        XCTAssertEqual(metadata["xesam:title"]?.string, "Second")
        XCTAssertEqual(metadata["xesam:artist"]?.strings, ["Two"], "no tag of the first file is left over")
        let length = try XCTUnwrap(metadata["mpris:length"]?.int64)
        XCTAssertEqual(Double(length) / 1e6, 4, accuracy: 0.2, "the new file's length")

        try harness.playerctl("stop")
        try harness.waitForStatus("Stopped")
        mark = harness.mark()
        try harness.call(H.player, "OpenUri", "s", [H.uri(noise)])
        let failed = try harness.waitForSignal(H.extensionInterface, "ItemFailed", from: mark)
        XCTAssertTrue((failed.arguments[1].string ?? "").hasPrefix(H.errorPrefix), "\(failed)")
        try harness.call(H.player, "OpenUri", "s", [H.uri(second)])
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        XCTAssertEqual(try harness.metadata["xesam:title"]?.string, "Second")
        XCTAssertLessThan(try harness.position, 3_000_000)
    }

    func testPositionHoldsWhilePausedAndAdvancesWhilePlaying() throws {
        try harness.startPlaying([try short("ten", seconds: 10)])
        let first = try harness.position, second = try harness.position
        XCTAssertGreaterThan(second, first, "two reads while playing")
        let printed = try XCTUnwrap(Double(try harness.playerctl("position")), "playerctl position prints seconds")
        XCTAssertTrue((0...10).contains(printed))
        try harness.playerctl("pause")
        try harness.waitForStatus("Paused")
        let paused = try harness.position
        XCTAssertEqual(try harness.position, paused, "position moves while paused")
        XCTAssertEqual(try harness.position, paused, "position moves while paused")
    }

    func testNextAndPreviousChangeTrackAndKeepPlaying() throws {
        let a = try short("a", seconds: 10, frequency: 440), b = try short("b", seconds: 10, frequency: 660)
        try harness.startPlaying([a, b])
        let tracks = try harness.tracks
        XCTAssertEqual(tracks.count, 2)
        XCTAssertEqual(try harness.trackID, tracks.first)
        XCTAssertEqual(try harness.get(H.player, "CanGoNext").bool, true)
        XCTAssertEqual(try harness.get(H.player, "CanGoPrevious").bool, true, "first track, no loop: Previous starts it again")
        try harness.playerctl("next")
        try harness.waitForTrack(tracks[1])
        XCTAssertEqual(try harness.metadata["xesam:url"]?.string, H.uri(b))
        try harness.waitForStatus("Playing")
        XCTAssertEqual(try harness.get(H.player, "CanGoNext").bool, false, "last track, no loop")
        XCTAssertEqual(try harness.get(H.player, "CanGoPrevious").bool, true)
        try harness.playerctl("previous")
        try harness.waitForTrack(tracks[0])
        try harness.waitForStatus("Playing")
    }

    func testNextAndPreviousKeepAPausedPlayerPaused() throws {
        let a = try short("a", seconds: 10, frequency: 440), b = try short("b", seconds: 10, frequency: 660)
        try harness.startPlaying([a, b])
        let tracks = try harness.tracks
        try harness.playerctl("pause")
        try harness.waitForStatus("Paused")
        let mark = harness.mark()
        try harness.playerctl("next")
        try harness.waitForTrack(tracks[1])
        XCTAssertEqual(try harness.playbackStatus, "Paused")
        try harness.playerctl("previous")
        try harness.waitForTrack(tracks[0])
        XCTAssertEqual(try harness.playbackStatus, "Paused")
        let statuses = harness.propertiesChanged(H.player, from: mark).compactMap { $0.changed["PlaybackStatus"]?.string }
        XCTAssertEqual(statuses, [], "PlaybackStatus announced while skipping paused: \(statuses)")
    }

    /// Previous as people expect it (issue 40): 5 s into a track, back to its start, paused as it
    /// was, with Seeked and no track change; again within 3 s of the start, the track before, from
    /// its start; at the first track, 5 s in and playing, its start, playing. CanGoPrevious is
    /// true throughout.
    func testPreviousStartsTheTrackAgainAfterThreeSecondsAndGoesBackWithinThem() throws {
        let a = try short("a", seconds: 10, frequency: 440), b = try short("b", seconds: 10, frequency: 660)
        try harness.startPlaying([a, b])
        let tracks = try harness.tracks
        try harness.playerctl("next")
        try harness.waitForTrack(tracks[1])
        try harness.waitForItemStatus("readyToPlay")
        try harness.playerctl("pause")
        try harness.waitForStatus("Paused")
        var mark = harness.mark()
        try harness.playerctl("position", "5")
        _ = try harness.waitForSeeked(from: mark)

        mark = harness.mark()
        try harness.call(H.player, "Previous")
        XCTAssertLessThan(try harness.waitForSeeked(from: mark), 100_000, "Seeked to the start")
        XCTAssertEqual(try harness.trackID, tracks[1], "the same track")
        XCTAssertLessThan(try harness.position, 1_000_000)
        XCTAssertEqual(try harness.playbackStatus, "Paused")
        XCTAssertEqual(try harness.get(H.player, "CanGoPrevious").bool, true)
        let changed = harness.propertiesChanged(H.player, from: mark).flatMap { $0.changed.keys }
        XCTAssertFalse(changed.contains("Metadata"), "no track change: \(changed)")

        mark = harness.mark()
        try harness.playerctl("previous")
        try harness.waitForChange(H.player, "Metadata of the first track", from: mark) {
            $0["Metadata"]?.dictionary?["mpris:trackid"]?.string == tracks[0]
        }
        XCTAssertEqual(try harness.playerctl("metadata", "xesam:url"), H.uri(a))
        XCTAssertLessThan(try harness.position, 1_000_000, "the previous track starts from its beginning")
        XCTAssertEqual(try harness.playbackStatus, "Paused")

        try harness.playerctl("play")
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        mark = harness.mark()
        try harness.playerctl("position", "5")
        _ = try harness.waitForSeeked(from: mark)
        XCTAssertEqual(try harness.get(H.player, "CanGoPrevious").bool, true, "the first track, which can start again")
        mark = harness.mark()
        try harness.call(H.player, "Previous")
        XCTAssertLessThan(try harness.waitForSeeked(from: mark), 100_000)
        XCTAssertEqual(try harness.trackID, tracks[0])
        XCTAssertLessThan(try harness.position, 3_000_000)
        XCTAssertEqual(try harness.playbackStatus, "Playing")
    }

    func testRateZeroPausesAndOtherRatesAreAnnounced() throws {
        try harness.startPlaying([try short("ten", seconds: 10)])
        var mark = harness.mark()
        try harness.set(H.player, "Rate", "d", "1.5")
        try harness.waitForChange(H.player, "Rate 1.5", from: mark) { $0["Rate"]?.double == 1.5 }
        let changed = try harness.waitForSignal(H.extensionInterface, "RateChanged", from: mark)
        XCTAssertEqual(changed.arguments.first?.double, 1.5)
        XCTAssertEqual(changed.arguments.last?.string, "client")
        XCTAssertEqual(try harness.get(H.player, "Rate").double, 1.5)
        XCTAssertEqual(try harness.playbackStatus, "Playing")
        mark = harness.mark()
        try harness.set(H.player, "Rate", "d", "0")
        try harness.waitForStatus("Paused")
        XCTAssertNotEqual(try harness.get(H.player, "Rate").double, 0, "Rate 0 pauses; it is not a rate")
    }

    func testVolumeWithPlayerctlAndClampedAtZero() throws {
        try harness.start()
        var mark = harness.mark()
        try harness.playerctl("volume", "0.3")
        try harness.waitForChange(H.player, "Volume 0.3", from: mark) { abs(($0["Volume"]?.double ?? -1) - 0.3) < 1e-6 }
        XCTAssertEqual(try XCTUnwrap(Double(try harness.playerctl("volume"))), 0.3, accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(harness.get(H.player, "Volume").double), 0.3, accuracy: 1e-6)
        mark = harness.mark()
        try harness.playerctl("volume", "0.1+")
        try harness.waitForChange(H.player, "Volume 0.4", from: mark) { abs(($0["Volume"]?.double ?? -1) - 0.4) < 1e-6 }
        // MPRIS: a negative volume is set as 0.0
        mark = harness.mark()
        try harness.set(H.player, "Volume", "d", "-0.5")
        try harness.waitForChange(H.player, "Volume 0", from: mark) { $0["Volume"]?.double == 0 }
        XCTAssertEqual(try harness.get(H.player, "Volume").double, 0)
    }

    func testLoopStatusWithPlayerctl() throws {
        try harness.start()
        XCTAssertEqual(try harness.playerctl("loop"), "None")
        for status in ["Track", "Playlist", "None"] {
            let mark = harness.mark()
            try harness.playerctl("loop", status)
            try harness.waitForChange(H.player, "LoopStatus \(status)", from: mark) { $0["LoopStatus"]?.string == status }
            XCTAssertEqual(try harness.playerctl("loop"), status)
        }
    }

    func testShuffleWithPlayerctl() throws {
        try harness.start()
        XCTAssertEqual(try harness.playerctl("shuffle"), "Off")
        var mark = harness.mark()
        try harness.playerctl("shuffle", "On")
        try harness.waitForChange(H.player, "Shuffle true", from: mark) { $0["Shuffle"]?.bool == true }
        XCTAssertEqual(try harness.playerctl("shuffle"), "On")
        mark = harness.mark()
        try harness.playerctl("shuffle", "Toggle")
        try harness.waitForChange(H.player, "Shuffle false", from: mark) { $0["Shuffle"]?.bool == false }
        XCTAssertEqual(try harness.playerctl("shuffle"), "Off")
    }

    func testLoopTrackPlaysTheSameTrackAgain() throws {
        let a = try short("a2", seconds: 1.5, frequency: 440), b = try short("b2", seconds: 1.5, frequency: 660)
        try harness.start()
        try harness.playerctl("loop", "Track")
        let mark = harness.mark()
        let ids = try harness.call(H.extensionInterface, "Enqueue", "asb", ["2", H.uri(a), H.uri(b), "true"]).first?.strings ?? []
        XCTAssertEqual(ids.count, 2)
        let first = try XCTUnwrap(ids.first)
        let ended = try harness.waitForSignal(H.extensionInterface, "PlayedToEnd", from: mark) { $0.arguments.first?.string == first }
        try harness.waitForSignal(H.extensionInterface, "PlayedToEnd", from: ended.index + 1) { $0.arguments.first?.string == first }
        XCTAssertEqual(try harness.trackID, first, "loop Track stays on the track")
        XCTAssertEqual(try harness.playbackStatus, "Playing")
        let others = harness.propertiesChanged(H.player, from: mark).filter {
            $0.changed["Metadata"]?.dictionary?["mpris:trackid"]?.string == ids.last
        }
        XCTAssertEqual(others.count, 0, "loop Track went to the next track: \(others)")
    }

    func testLoopPlaylistWrapsToTheFirstTrack() throws {
        let a = try short("a2", seconds: 1.5, frequency: 440), b = try short("b2", seconds: 1.5, frequency: 660)
        try harness.startPlaying([a, b])
        let tracks = try harness.tracks
        try harness.playerctl("loop", "Playlist")
        try harness.waitForTrack(tracks[1])
        XCTAssertEqual(try harness.get(H.player, "CanGoNext").bool, true, "with loop Playlist the last track has a next")
        let mark = harness.mark()
        try harness.waitForSignal(H.extensionInterface, "PlayedToEnd", from: mark) { $0.arguments.first?.string == tracks[1] }
        try harness.waitForTrack(tracks[0])
        XCTAssertEqual(try harness.playbackStatus, "Playing")
    }

    func testOpenUriAddsAndPlaysTheFile() throws {
        let file = try short("ten", seconds: 10)
        try harness.start()
        let mark = harness.mark()
        try harness.call(H.player, "OpenUri", "s", [H.uri(file)])
        try harness.waitForStatus("Playing")
        XCTAssertEqual(try harness.metadata["xesam:url"]?.string, H.uri(file))
        let tracks = try harness.tracks
        XCTAssertEqual(tracks.count, 1)
        XCTAssertEqual(try harness.trackID, tracks.first)
        // MPRIS: the opened track becomes part of the tracklist, with TrackAdded or TrackListReplaced
        try harness.watcher.wait(for: "TrackAdded or TrackListReplaced", from: mark) {
            $0.interface == H.trackList && ($0.member == "TrackAdded" || $0.member == "TrackListReplaced")
        }
        try harness.waitForChange(H.trackList, "Tracks invalidated", from: mark) { _ in true }
    }

    func testPlayerctlOpenOfAPath() throws {
        let file = try short("ten", seconds: 10)
        try harness.start()
        try harness.playerctl("open", file.path)
        try harness.waitForStatus("Playing")
        XCTAssertEqual(try harness.metadata["xesam:url"]?.string, H.uri(file))
        XCTAssertEqual(try harness.playerctl("metadata", "xesam:url"), H.uri(file))
    }

    /// GNOME Shell lists a player only once CanPlay is announced; widgets grey out Next until CanGoNext is.
    func testCanPlayCanPauseAndCanGoNextAreAnnouncedWhenTheQueueGrows() throws {
        let a = try short("a", seconds: 10, frequency: 440), b = try short("b", seconds: 10, frequency: 660)
        try harness.start()
        XCTAssertEqual(try harness.get(H.player, "CanPlay").bool, false)
        var mark = harness.mark()
        try harness.call(H.trackList, "AddTrack", "sob", [H.uri(a), H.noTrack, "false"])
        try harness.waitForChange(H.player, "CanPlay true", from: mark) { $0["CanPlay"]?.bool == true }
        try harness.waitForChange(H.player, "CanPause true", from: mark) { $0["CanPause"]?.bool == true }
        XCTAssertEqual(try harness.get(H.player, "CanPlay").bool, true)
        XCTAssertEqual(try harness.get(H.player, "CanGoNext").bool, false)
        let first = try XCTUnwrap(try harness.tracks.first)
        mark = harness.mark()
        try harness.call(H.trackList, "AddTrack", "sob", [H.uri(b), first, "false"])
        try harness.waitForChange(H.player, "CanGoNext true", from: mark) { $0["CanGoNext"]?.bool == true }
        XCTAssertEqual(try harness.get(H.player, "CanGoNext").bool, true)
    }

    func testPlayingToTheEndOfTheQueueStops() throws {
        let a = try short("a2", seconds: 1.5, frequency: 440)
        try harness.startPlaying([a])
        let mark = harness.mark()
        try harness.waitForChange(H.player, "PlaybackStatus Stopped at the end", from: mark) {
            $0["PlaybackStatus"]?.string == "Stopped"
        }
        XCTAssertEqual(try harness.playerctl("status"), "Stopped")
        XCTAssertEqual(try harness.position, 0)
        try harness.ping()
    }

    /// MPRIS Play: "If there is no track to play, this has no effect": a later AddTrack does not
    /// start playing either.
    func testPlayWithAnEmptyTrackListHasNoEffect() throws {
        try harness.start()
        try harness.call(H.player, "Play")
        XCTAssertEqual(try harness.playbackStatus, "Stopped")
        let mark = harness.mark()
        try harness.call(H.trackList, "AddTrack", "sob", [H.uri(try short("later")), H.noTrack, "false"])
        try harness.waitForSignal(H.trackList, "TrackAdded", from: mark)
        try harness.ping()
        XCTAssertEqual(try harness.playbackStatus, "Stopped")
        XCTAssertFalse(harness.propertiesChanged(H.player, from: mark).contains { $0.changed["PlaybackStatus"]?.string == "Playing" })
    }

    /// Next on the only track of a looping list lands on the same track: it starts over, and the
    /// jump to 0 is announced with Seeked (MPRIS: Seeked after every jump of the position).
    func testNextOnTheOnlyTrackOfALoopingListSaysSeeked() throws {
        try harness.startPlaying([try short("only", seconds: 10)])
        try harness.set(H.player, "LoopStatus", "s", "Playlist")
        let track = try XCTUnwrap(try harness.trackID)
        let moved = harness.mark()
        try harness.call(H.player, "SetPosition", "ox", [track, "5000000"])
        XCTAssertGreaterThan(try harness.waitForSeeked(from: moved), 4_000_000)
        let mark = harness.mark()
        try harness.playerctl("next")
        XCTAssertEqual(try harness.waitForSeeked(from: mark), 0)
        XCTAssertEqual(try harness.trackID, track)
        XCTAssertLessThan(try harness.position, 4_000_000, "the track started over")
    }
}
