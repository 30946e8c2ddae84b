import Foundation
import TestSupport
import XCTest

/// The crossfade as MPRIS clients see it: the track changes as the fade begins, the crossfade's
/// length before the first track's end, as a track change (Metadata, PlayedToEnd), not a seek.
final class CrossfadeServiceTests: ServiceTestCase {
    typealias H = ServiceHarness

    func testMetadataMovesToTheNextTrackAsTheFadeBeginsWithNoSeeked() throws {
        let first = try media.tone("first", format: .wav, seconds: 4, frequency: 300)
        let second = try media.tone("second", format: .wav, seconds: 4, frequency: 3000)
        try harness.start()
        try harness.set(H.extensionInterface, "Crossfade", "d", "1.5")
        let mark = harness.mark()
        try harness.call(H.player, "OpenUri", "s", [first.absoluteString])
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        let playing = Date()
        let tracks = try harness.tracks
        try harness.call(H.trackList, "AddTrack", "sob", [second.absoluteString, tracks[0], "false"])
        let secondID = try XCTUnwrap(try harness.tracks.last)
        let changed = try harness.waitForChange(H.player, "Metadata of the second track", from: mark, timeout: 10) {
            $0["Metadata"]?.dictionary?["mpris:trackid"]?.string == secondID
        }
        let switched = Date().timeIntervalSince(playing)
        XCTAssertEqual(switched, 4 - 1.5, accuracy: 0.4, "the track changes as the fade begins, 1.5 s before the first ends")
        XCTAssertLessThan(try harness.position, 500_000, "the new track's position starts at 0")
        let ended = try harness.waitForSignal(H.extensionInterface, "PlayedToEnd", from: mark, timeout: 1) {
            $0.arguments.first?.string == tracks[0]
        }
        XCTAssertLessThan(ended.index, changed.index, "the first track played to its end, then the second is current")
        XCTAssertFalse(harness.watcher.messages(from: mark).contains { $0.member == "Seeked" }, "a track change, not a seek")
        try harness.waitForSignal(H.extensionInterface, "PlayedToEnd", from: mark, timeout: 10) { $0.arguments.first?.string == secondID }
        XCTAssertEqual(try harness.playbackStatus, "Stopped", "the queue played to its end")
    }
}
