import Foundation
import TestSupport
import XCTest

/// Metadata never goes back (issue 37, item 6): every `PropertiesChanged` of the Player interface
/// that carries `Metadata` is recorded over skips, pauses right after skips, `AddTrack` then `GoTo`,
/// on MP3, Ogg, FLAC and HLS, and no announcement of a track lacks a key an earlier one of the same
/// track had. bluez's mpris-proxy forwards each announcement to a headset as a track change, and a
/// scrobbler or Rygel's renderer reads the length from the one it gets.
final class MetadataMonotonicTests: ServiceTestCase {
    typealias H = ServiceHarness

    private func song(_ format: MediaGenerator.Format, seconds: Double = 6) throws -> URL {
        try media.tone("song-\(format.rawValue)", format: format, seconds: seconds, frequency: 330, tags: MediaGenerator.Tags(
            title: "Song in \(format.rawValue)", artist: "The Testers", album: "Generated", trackNumber: 2))
    }

    /// The Metadata dictionaries announced from `mark`, in order.
    private func announcements(from mark: Int) -> [[String: MonitorValue]] {
        harness.propertiesChanged(H.player, from: mark).compactMap { $0.changed["Metadata"]?.dictionary }
    }

    /// The announcements of `trackID` from `mark`, in order.
    private func announcements(of trackID: String, from mark: Int) -> [[String: MonitorValue]] {
        announcements(from: mark).filter { $0["mpris:trackid"]?.string == trackID }
    }

    /// Fails for every announcement that lacks a key an earlier announcement of the same track had.
    private func assertNoKeyGoesBack(from mark: Int, file: StaticString = #filePath, line: UInt = #line) {
        var known: [String: Set<String>] = [:]
        for (index, metadata) in announcements(from: mark).enumerated() {
            guard let track = metadata["mpris:trackid"]?.string else { continue }  // no current track: empty
            let keys = Set(metadata.keys)
            let dropped = known[track, default: []].subtracting(keys)
            XCTAssertTrue(dropped.isEmpty, "announcement \(index) of \(track) dropped \(dropped.sorted()): \(metadata)",
                          file: file, line: line)
            known[track, default: []].formUnion(keys)
        }
    }

    /// Waits until the extension's ItemStatus is announced as readyToPlay after `mark`.
    private func waitForReady(from mark: Int) throws {
        try harness.waitForChange(H.extensionInterface, "ItemStatus readyToPlay", from: mark) {
            $0["ItemStatus"]?.string == "readyToPlay"
        }
    }

    private func trackIDs() throws -> [String] { try harness.tracks }

    // MARK: The cases of the issue

    /// Next onto an MP3, then Pause at once: the MP3's length, known from its tag read while it
    /// was next, stays in Metadata; the skip is not three announcements with the middle one short.
    func testNextOntoAnMP3ThenAnImmediatePauseKeepsTheLength() throws {
        let files = [try song(.ogg), try song(.mp3)]
        try harness.startPlaying(files)
        let tracks = try trackIDs()
        // the MP3, next in the queue, had its tags read by now: TrackList knows its length
        try waitForKnownLength(of: tracks[1])
        let mark = harness.mark()
        try harness.call(H.player, "Next")
        try harness.call(H.player, "Pause")
        try waitForReady(from: mark)
        try harness.waitForStatus("Paused")
        assertNoKeyGoesBack(from: mark)
        let mp3 = announcements(of: tracks[1], from: mark)
        XCTAssertFalse(mp3.isEmpty, "the MP3 was never announced")
        for (index, metadata) in mp3.enumerated() {
            XCTAssertNotNil(metadata["mpris:length"], "announcement \(index) of the MP3 has no length: \(metadata)")
        }
        let paused = try harness.metadata
        XCTAssertNotNil(paused["mpris:length"], "Metadata after the pause: \(paused)")
        XCTAssertEqual(mp3.first?["xesam:title"]?.string, "Song in mp3", "the first announcement: \(mp3.first ?? [:])")
    }

    /// AddTrack, then GoTo the new track at once: its first announcement has its title.
    func testAddTrackThenGoToAnnouncesTheTitleFirst() throws {
        try harness.startPlaying([try song(.ogg)])
        let added = try song(.flac)
        let current = try XCTUnwrap(try harness.trackID)
        var mark = harness.mark()
        try harness.call(H.trackList, "AddTrack", "sob", [H.uri(added), current, "false"])
        let signal = try harness.waitForSignal(H.trackList, "TrackAdded", from: mark)
        let newID = try XCTUnwrap(signal.arguments.first?.dictionary?["mpris:trackid"]?.string)
        mark = harness.mark()
        try harness.call(H.trackList, "GoTo", "o", [newID])
        try harness.waitForTrack(newID)
        try waitForReady(from: mark)
        assertNoKeyGoesBack(from: mark)
        let first = try XCTUnwrap(announcements(of: newID, from: mark).first)
        XCTAssertEqual(first["xesam:title"]?.string, "Song in flac", "the first announcement: \(first)")
        XCTAssertEqual(first["xesam:artist"]?.strings, ["The Testers"], "the first announcement: \(first)")
    }

    /// AddTrack at the end of a queue, beyond the tracks whose tags are read ahead, then GoTo it:
    /// nothing was read of it, and its first announcement waits the milliseconds its tags take.
    func testGoToATrackAddedFarAheadAnnouncesItOnceWithItsTags() throws {
        let fillers = try (0..<5).map { try short("filler\($0)", seconds: 10, frequency: 300 + 50 * Double($0)) }
        try harness.startPlaying(fillers)
        let tracks = try trackIDs()
        var mark = harness.mark()
        try harness.call(H.trackList, "AddTrack", "sob", [H.uri(try song(.ogg)), tracks[4], "false"])
        let signal = try harness.waitForSignal(H.trackList, "TrackAdded", from: mark)
        let newID = try XCTUnwrap(signal.arguments.first?.dictionary?["mpris:trackid"]?.string)
        mark = harness.mark()
        try harness.call(H.trackList, "GoTo", "o", [newID])
        try waitForReady(from: mark)
        try harness.waitForTrack(newID)
        assertNoKeyGoesBack(from: mark)
        let shown = announcements(of: newID, from: mark)
        XCTAssertEqual(shown.first?["xesam:title"]?.string, "Song in ogg", "the first announcement: \(shown)")
        XCTAssertEqual(shown.first?["xesam:artist"]?.strings, ["The Testers"], "the first announcement: \(shown)")
        XCTAssertNotNil(shown.first?["mpris:length"], "the first announcement: \(shown)")
    }

    /// Skips through MP3, Ogg and FLAC while playing: no key of a track goes back.
    func testSkipsThroughMP3OggAndFLAC() throws {
        let files = [try song(.mp3), try song(.ogg), try song(.flac)]
        let mark = harness.mark()
        try harness.startPlaying(files)
        let tracks = try trackIDs()
        for track in tracks.dropFirst() {
            try waitForKnownLength(of: track)
            let skip = harness.mark()
            try harness.call(H.player, "Next")
            try harness.waitForTrack(track)
            try waitForReady(from: skip)
        }
        assertNoKeyGoesBack(from: mark)
        for track in tracks {
            let shown = announcements(of: track, from: mark)
            XCTAssertNotNil(shown.last?["mpris:length"], "\(track): \(shown)")
        }
    }

    /// A VOD HLS stream served on 127.0.0.1: its length, once known, stays.
    func testAnHLSStreamKeepsItsKeys() throws {
        let generator = try media.generator
        let index = generator.url("hls/index.m3u8")
        if !FileManager.default.fileExists(atPath: index.path) {
            _ = try generator.hlsStream("hls", seconds: 20, segments: 10)
        }
        let server = try HTTPServer(directory: generator.directory)
        let mark = harness.mark()
        try harness.start([server.url("hls/index.m3u8"), try song(.mp3).path])
        try waitForReady(from: mark)
        try harness.waitForStatus("Playing")
        let tracks = try trackIDs()
        let skip = harness.mark()
        try harness.call(H.player, "Next")
        try harness.call(H.player, "Pause")
        try waitForReady(from: skip)
        // loaded again, the stream's preroll and its DURATION_CHANGED come without a length first
        let back = harness.mark()
        try harness.call(H.player, "Previous")
        try harness.waitForTrack(tracks[0])
        try waitForReady(from: back)
        assertNoKeyGoesBack(from: mark)
        XCTAssertNotNil(announcements(of: tracks[0], from: mark).last?["mpris:length"], "\(announcements(from: mark))")
    }

    /// What a client that read `GetAll` before `mark` (no track then) and believes only
    /// `PropertiesChanged` holds as Metadata right after the message at `index`.
    private func cachedMetadata(after index: Int, from mark: Int) -> [String: MonitorValue] {
        harness.propertiesChanged(H.player, from: mark).filter { $0.index <= index }
            .compactMap { $0.changed["Metadata"]?.dictionary }.last ?? [:]
    }

    /// OpenUri of an MP3 with no Xing header on an idle service: its first announcement has its
    /// title, and its length is there by the time it plays (its parser's estimate at the preroll,
    /// not 0.45 s later at DURATION_CHANGED).
    func testAnOpenedMP3IsAnnouncedWithItsTitleAndHasItsLengthWhenItPlays() throws {
        try harness.start()
        let mark = harness.mark()
        try harness.call(H.player, "OpenUri", "s", [H.uri(try song(.mp3))])
        let playing = try harness.waitForChange(H.extensionInterface, "TimeControlStatus playing", from: mark) {
            $0["TimeControlStatus"]?.string == "playing"
        }
        let track = try XCTUnwrap(try harness.trackID)
        let shown = announcements(of: track, from: mark)
        XCTAssertEqual(shown.first?["xesam:title"]?.string, "Song in mp3", "the first announcement: \(shown)")
        let cached = cachedMetadata(after: playing.index, from: mark)
        XCTAssertNotNil(cached["mpris:length"], "Metadata when TimeControlStatus read playing: \(cached)")
        assertNoKeyGoesBack(from: mark)
    }

    /// A track queued on a stopped service (its tags read), then Play: the Metadata a client holds
    /// when PlaybackStatus first reads Playing has the length, and no announcement after drops it.
    func testTheLengthIsThereWhenPlaybackStatusFirstReadsPlaying() throws {
        try harness.start()
        let mark = harness.mark()
        try harness.call(H.trackList, "AddTrack", "sob", [H.uri(try song(.mp3)), H.noTrack, "false"])
        let track = try XCTUnwrap(try harness.trackID)
        try waitForKnownLength(of: track)
        let playMark = harness.mark()
        try harness.call(H.player, "Play")
        let playing = try harness.waitForChange(H.player, "PlaybackStatus Playing", from: playMark) {
            $0["PlaybackStatus"]?.string == "Playing"
        }
        try waitForReady(from: playMark)
        try harness.waitForChange(H.extensionInterface, "TimeControlStatus playing", from: playMark) {
            $0["TimeControlStatus"]?.string == "playing"
        }
        let cached = cachedMetadata(after: playing.index, from: mark)
        XCTAssertNotNil(cached["mpris:length"], "Metadata when PlaybackStatus read Playing: \(cached)")
        XCTAssertEqual(cached["xesam:title"]?.string, "Song in mp3")
        assertNoKeyGoesBack(from: mark)
    }

    /// Waits until TrackList's GetTracksMetadata has `track`'s length: its tags were read.
    private func waitForKnownLength(of track: String) throws {
        let mark = harness.mark()
        if try lengthKnown(track) { return }
        try harness.waitForSignal(H.trackList, "TrackMetadataChanged", from: mark, where: { message in
            message.arguments.first?.string == track && message.arguments.last?.dictionary?["mpris:length"] != nil
        })
    }

    private func lengthKnown(_ track: String) throws -> Bool {
        let output = try harness.busctl(["--json=short", "call", harness.busName, H.path, H.trackList, "GetTracksMetadata", "ao", "1", track])
        return output.contains("mpris:length")
    }
}
