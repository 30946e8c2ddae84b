import Foundation
import TestSupport
import XCTest

/// What clients that cache believe: PropertiesChanged exactly when a value changes, never for
/// Position, and playerctl's --follow output across track changes and the end of the queue.
final class SignalTests: ServiceTestCase {
    typealias H = ServiceHarness

    /// Every Player property that PropertiesChanged announced from `mark`, in order.
    private func playerChanges(from mark: Int, before end: Int = .max) -> [BusMessage] {
        harness.propertiesChanged(H.player, from: mark).filter { $0.index < end }
    }

    /// The Player interface announces a pause once: PlaybackStatus "Paused", and other properties only
    /// if they really changed.
    func testPauseSendsExactlyOnePropertiesChanged() throws {
        try harness.startPlaying([try short("ten", seconds: 10)])
        try harness.waitForChange(H.extensionInterface, "TimeControlStatus playing", from: 0) { $0["TimeControlStatus"]?.string == "playing" }
        let before = try harness.getAll(H.player)
        let mark = harness.mark()
        try harness.call(H.player, "Pause")
        let paused = try harness.waitForChange(H.player, "PlaybackStatus Paused", from: mark) { $0["PlaybackStatus"]?.string == "Paused" }
        // the pipeline has really paused: nothing more can follow from the pause
        try harness.waitForChange(H.extensionInterface, "TimeControlStatus paused", from: mark) { $0["TimeControlStatus"]?.string == "paused" }
        // a later change that the service must send after anything the pause caused
        try harness.set(H.player, "Volume", "d", "0.5")
        let volume = try harness.waitForChange(H.player, "Volume 0.5", from: mark) { $0["Volume"]?.double == 0.5 }
        let changes = playerChanges(from: mark, before: volume.index)
        XCTAssertEqual(changes.count, 1, "Pause sent \(changes.count) PropertiesChanged: \(changes)")
        XCTAssertEqual(changes.first?.index, paused.index)
        for (name, value) in paused.changed where name != "PlaybackStatus" {
            let old = before[name]
            let unchanged = (value.bool != nil && value.bool == old?.bool) || (value.double != nil && value.double == old?.double)
                || (value.string != nil && value.string == old?.string)
                || (value.dictionary != nil && value.dictionary?["mpris:trackid"]?.string == old?.dictionary?["mpris:trackid"]?.string
                    && value.dictionary?.count == old?.dictionary?.count)
            XCTAssertFalse(unchanged, "\(name) announced with the pause but unchanged (\(value))")
        }
        XCTAssertEqual(paused.invalidated, [])
    }

    func testStopSendsOnePlaybackStatusStopped() throws {
        try harness.startPlaying([try short("ten", seconds: 10)])
        let mark = harness.mark()
        try harness.call(H.player, "Stop")
        try harness.waitForChange(H.player, "PlaybackStatus Stopped", from: mark) { $0["PlaybackStatus"]?.string == "Stopped" }
        try harness.set(H.player, "Volume", "d", "0.5")
        let volume = try harness.waitForChange(H.player, "Volume 0.5", from: mark) { $0["Volume"]?.double == 0.5 }
        let statuses = playerChanges(from: mark, before: volume.index).compactMap { $0.changed["PlaybackStatus"]?.string }
        XCTAssertEqual(statuses, ["Stopped"])
    }

    /// Media-key daemons pick the active player from these signals: a steady player is silent.
    func testNothingIsAnnouncedWhileSteadilyPlaying() throws {
        try harness.startPlaying([try short("four", seconds: 4)])
        var mark = harness.mark()
        try harness.call(H.player, "SetPosition", "ox", [try XCTUnwrap(try harness.trackID), "1000000"])
        _ = try harness.waitForSeeked(from: mark)
        // from 1 s to the end at 4 s: three seconds of media time with nothing to announce
        mark = harness.mark()
        let end = try harness.waitForChange(H.player, "PlaybackStatus Stopped at the end", from: mark) {
            $0["PlaybackStatus"]?.string == "Stopped"
        }
        // the end is the first of PlayedToEnd and the Stopped it leads to
        let playedToEnd = harness.watcher.messages(from: mark).first { $0.interface == H.extensionInterface && $0.member == "PlayedToEnd" }
        let changes = playerChanges(from: mark, before: min(end.index, playedToEnd?.index ?? .max))
        XCTAssertEqual(changes.count, 0, "announced while playing steadily: \(changes)")
    }

    /// Setting a property to the value it has is not a change.
    func testPropertiesChangedOnlyWhenTheValueChanges() throws {
        try harness.start()
        let mark = harness.mark()
        try harness.set(H.player, "Volume", "d", "0.5")
        try harness.set(H.player, "Volume", "d", "0.5")
        try harness.set(H.player, "LoopStatus", "s", "None")
        try harness.set(H.player, "Shuffle", "b", "false")
        try harness.set(H.player, "Rate", "d", "1")
        try harness.set(H.extensionInterface, "Muted", "b", "false")
        // a change to end the window
        try harness.set(H.player, "Shuffle", "b", "true")
        let end = try harness.waitForChange(H.player, "Shuffle true", from: mark) { $0["Shuffle"]?.bool == true }
        let changes = playerChanges(from: mark, before: end.index)
        XCTAssertEqual(changes.count, 1, "\(changes)")
        XCTAssertEqual(Array(changes.first?.changed.keys ?? [:].keys), ["Volume"])
        let extensionChanges = harness.propertiesChanged(H.extensionInterface, from: mark).filter { $0.index < end.index }
        XCTAssertEqual(extensionChanges.count, 0, "\(extensionChanges)")
    }

    /// Position and CanControl never change by announcement (EmitsChangedSignal false); Position is still in GetAll.
    func testPositionAndCanControlAreNeverAnnounced() throws {
        let a = try short("a2", seconds: 1.5, frequency: 440), b = try short("b", seconds: 10, frequency: 660)
        try harness.startPlaying([a, b])
        let tracks = try harness.tracks
        try harness.waitForTrack(tracks[1])  // a track change by playing to the end
        var mark = harness.mark()
        try harness.playerctl("position", "4")
        _ = try harness.waitForSeeked(from: mark)
        try harness.playerctl("pause")
        try harness.waitForStatus("Paused")
        try harness.call(H.trackList, "GoTo", "o", [tracks[0]])
        try harness.waitForTrack(tracks[0])
        mark = harness.mark()
        try harness.playerctl("stop")
        try harness.waitForStatus("Stopped")
        try harness.playerctl("volume", "0.2")
        try harness.waitForChange(H.player, "Volume 0.2", from: mark) { $0["Volume"]?.double == 0.2 }
        let all = harness.watcher.messages(from: 0).filter { $0.isPropertiesChanged && $0.sender == harness.daemon.uniqueName }
        XCTAssertFalse(all.isEmpty)
        for message in all {
            for name in ["Position", "CanControl"] {
                XCTAssertNil(message.changed[name], "\(name) in \(message)")
                XCTAssertFalse(message.invalidated.contains(name), "\(name) invalidated in \(message)")
            }
        }
        let player = try harness.getAll(H.player)
        XCTAssertEqual(player["Position"]?.type, "x")
        XCTAssertEqual(player["CanControl"]?.bool, true)
    }

    func testFollowStatusAcrossATrackChangeAndTheEndOfTheQueue() throws {
        let a = try short("a2", seconds: 2, frequency: 440), b = try short("b2", seconds: 2, frequency: 660)
        try harness.startPlaying([a, b])
        let tracks = try harness.tracks
        let follow = try harness.follow("status")
        // subscribe, then act: the first line is the current status
        try follow.wait(for: "the current status") { !$0.isEmpty }
        XCTAssertEqual(follow.lines.first, "Playing")
        let stopped = try follow.wait(for: "Stopped at the end of the queue") { $0 == "Stopped" }
        let seen = Array(follow.lines[..<stopped])
        XCTAssertTrue(seen.allSatisfy { $0 == "Playing" }, "status before the end: \(seen)")
        // and the track did change on the way
        XCTAssertTrue(harness.propertiesChanged(H.player, from: 0).contains {
            $0.changed["Metadata"]?.dictionary?["mpris:trackid"]?.string == tracks[1]
        }, "never announced the second track")
        XCTAssertEqual(try harness.playerctl("status"), "Stopped")
    }

    func testFollowTitleAcrossATrackChange() throws {
        let a = try tagged("first", title: "First Title", seconds: 2)
        let b = try tagged("second", title: "Second Title", seconds: 2)
        try harness.startPlaying([a, b])
        let follow = try harness.follow("metadata", "title")
        try follow.wait(for: "First Title") { $0 == "First Title" }
        try follow.wait(for: "Second Title") { $0 == "Second Title" }
        try harness.waitForStatus("Stopped")
        var titles: [String] = []
        for line in follow.lines where !line.isEmpty && titles.last != line { titles.append(line) }
        XCTAssertEqual(Array(titles.prefix(2)), ["First Title", "Second Title"], "titles followed: \(follow.lines)")
        XCTAssertEqual(titles.filter { $0 != "First Title" && $0 != "Second Title" }, [], "\(follow.lines)")
    }

    /// PlayedToEnd is an event: once per item that ends.
    func testPlayedToEndOncePerItemInOrder() throws {
        let a = try short("a2", seconds: 1.5, frequency: 440), b = try short("b2", seconds: 1.5, frequency: 660)
        try harness.startPlaying([a, b])
        let tracks = try harness.tracks
        try harness.waitForSignal(H.extensionInterface, "PlayedToEnd", from: 0) { $0.arguments.first?.string == tracks[1] }
        try harness.waitForStatus("Stopped")
        let ended = harness.watcher.messages(from: 0)
            .filter { $0.interface == H.extensionInterface && $0.member == "PlayedToEnd" }
            .map { $0.arguments.first?.string ?? "?" }
        XCTAssertEqual(ended, tracks)
    }
}
