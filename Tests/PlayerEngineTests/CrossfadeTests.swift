import Foundation
import EngineLink
import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

/// The crossfade, heard: two tones of different pitch play one after the other into a null sink of
/// a sound server of the test's own, and its monitor is recorded. A crossfade plays two streams at
/// once, which the sound server mixes; what the listener hears is that mix, so it is what is
/// measured: how long both tones sound together, that nothing falls silent, that nothing clips.
/// On each sound server (PipeWire, PulseAudio): PipeWire 0.3.65 links a new stream 60-350 ms after
/// it starts, which the fade's timing must not show.
final class CrossfadeTests: XCTestCase {
    static let low = 300.0, high = 3000.0, third = 1000.0
    /// The null sink of `SoundServer` the tests play into.
    static let sink = "crossfade"

    /// Plays `a` then `b` (and `c`) with a crossfade of `seconds`, recording the monitor until `b`
    /// (or the last) ended; `during` runs once the fade started (the next item is current).
    func record(_ kind: EngineConfiguration.PipelineKind, on serverKind: SoundServer.Kind, seconds: Double, items: [URL],
                during: ((Harness, [ItemID]) throws -> Void)? = nil) throws -> [Double] {
        let server = try SoundServer(serverKind, sinks: [Self.sink])
        let harness = try Harness(pipeline: kind, sink: "pulsesink server=\(server.address) device=\(Self.sink)")
        harness.player.setCrossfade(seconds, albums: false)
        let ids = try harness.player.enqueue(items.map { MediaURI(fileURL: $0) })
        let recording = try server.capture(Self.sink)
        harness.player.play()
        try harness.recorder.wait(for: "the fade starts") { event -> Void? in
            guard case .currentItemChanged(let item?) = event, item.id == ids[1] else { return nil }
            return ()
        }
        try during?(harness, ids)
        try harness.recorder.wait(for: "the last item ends", timeout: 30) { $0.playedToEnd == ids.last ? () : nil }
        Thread.sleep(forTimeInterval: 0.3)  // the sink's buffer reaches the monitor
        // the left channel, as -1...1
        let recorded = recording.stop()
        return stride(from: 0, to: recorded.count - 1, by: SoundServer.channels).map { Double(recorded[$0]) / 32768 }
    }

    /// How long a fade of 2 s is heard with both tones, and within how much: PipeWire links the new
    /// stream 60-100 ms after it plays (up to 125 ms with builds running beside the test), so that
    /// much of the fade's start is not heard. The previous item's last buffered audio used to be
    /// raised back to full gain as the fade ended (a burst at the very end, which made up for it in
    /// this measure); OutputLevels leaves it at the ramp's end, silent (issue 37).
    static func twoSecondOverlap(on server: SoundServer.Kind) -> (seconds: Double, accuracy: Double) {
        server == .pipewire ? (1.95, 0.075) : (2.0, 0.05)
    }

    /// Plays on for `seconds`, then pauses for a second (the recording goes on) and plays again.
    static func pauseForASecond(_ harness: Harness, after seconds: Double) throws {
        Thread.sleep(forTimeInterval: seconds)
        let mark = harness.recorder.count
        harness.player.pause()
        try harness.waitForTimeControl(.paused, from: mark)
        Thread.sleep(forTimeInterval: 1)
        harness.player.play()
    }

    func testTheOverlapLastsWhatWasSetWithNoSilenceAndNoClipping() throws {
        let media = try MediaGenerator()
        let a = try media.tone("a", format: .wav, seconds: 4, frequency: Self.low)
        let b = try media.tone("b", format: .wav, seconds: 4, frequency: Self.high)
        try onBothServersAndPipelines { server, kind in
            let heard = try record(kind, on: server, seconds: 2, items: [a, b])
            let bands = Bands(heard)
            let (overlap, accuracy) = Self.twoSecondOverlap(on: server)
            XCTAssertEqual(bands.overlap(Self.low, Self.high), overlap, accuracy: accuracy,
                           "both tones sound together for 2 s (less PipeWire's link) on \(kind), \(server)")
            XCTAssertGreaterThan(bands.presence(Self.low), 1.8, "the first tone before the fade")
            XCTAssertGreaterThan(bands.presence(Self.high), 3.8, "the second tone, whole")
            XCTAssertLessThanOrEqual(Bands.longestSilence(heard), 0.010, "no silence over 10 ms from the first sound to the last on \(kind), \(server)")
            XCTAssertLessThan(heard.map(abs).max() ?? 1, 0.75, "equal-power ramps of two tones at half scale: far from full scale")
        }
    }

    func testPausingDuringTheFadePausesBothAndTheOverlapStillLastsWhatWasSet() throws {
        let media = try MediaGenerator()
        let a = try media.tone("a", format: .wav, seconds: 4, frequency: Self.low)
        let b = try media.tone("b", format: .wav, seconds: 4, frequency: Self.high)
        try onBothServersAndPipelines { server, kind in
            let heard = try record(kind, on: server, seconds: 2, items: [a, b]) { harness, _ in
                try Self.pauseForASecond(harness, after: 0.7)
            }
            let bands = Bands(heard)
            // the same link's delay; a pause in the middle measures less exactly: 80 ms either way
            XCTAssertEqual(bands.overlap(Self.low, Self.high), Self.twoSecondOverlap(on: server).seconds, accuracy: 0.08,
                           "the fade went on where it paused on \(kind), \(server)")
            XCTAssertGreaterThan(bands.longestGap(of: Self.high), 0.9, "a second of pause, both silent")
            XCTAssertLessThan(heard.map(abs).max() ?? 1, 0.75)
        }
    }

    /// The next track starts from a base time set at the fade; a pause after the fade must move it
    /// as any pause does, or the track resumes that much further on (skipping what it paused over).
    func testPausingAfterTheFadeResumesWhereItPaused() throws {
        let media = try MediaGenerator()
        let a = try media.tone("a", format: .wav, seconds: 3, frequency: Self.low)
        let b = try media.tone("b", format: .wav, seconds: 4, frequency: Self.high)
        try onBothServersAndPipelines { server, kind in
            let heard = try record(kind, on: server, seconds: 1, items: [a, b]) { harness, _ in
                try Self.pauseForASecond(harness, after: 1.5)  // past the fade's end
            }
            let bands = Bands(heard)
            XCTAssertGreaterThan(bands.longestGap(of: Self.high), 0.9, "a second of pause on \(kind), \(server)")
            XCTAssertGreaterThan(bands.presence(Self.high), 3.8, "the second tone, whole, around the pause on \(kind), \(server)")
        }
    }

    func testNextDuringTheFadeGoesToTheItemAfterAndTheFirstStopsAtOnce() throws {
        let media = try MediaGenerator()
        let a = try media.tone("a", format: .wav, seconds: 4, frequency: Self.low)
        let b = try media.tone("b", format: .wav, seconds: 4, frequency: Self.high)
        let c = try media.tone("c", format: .wav, seconds: 2, frequency: Self.third)
        try onBothServersAndPipelines { server, kind in
            var skipped: ItemID?
            let heard = try record(kind, on: server, seconds: 3, items: [a, b, c]) { harness, ids in
                Thread.sleep(forTimeInterval: 0.5)
                try harness.player.next()
                skipped = ids[1]
                try harness.recorder.wait(for: "the third plays") { event -> Void? in
                    guard case .currentItemChanged(let item?) = event, item.id == ids[2] else { return nil }
                    return ()
                }
            }
            XCTAssertNotNil(skipped)
            let bands = Bands(heard)
            let third = try XCTUnwrap(bands.first(Self.third), "the third item is heard on \(kind)")
            XCTAssertLessThanOrEqual(bands.last(Self.low) ?? 0, third + 0.05, "the first item went with the fade")
            XCTAssertLessThanOrEqual(bands.last(Self.high) ?? 0, third + 0.05, "the skipped one stopped")
            XCTAssertGreaterThan(bands.presence(Self.third), 1.9, "the third plays whole")
        }
    }

    /// Two halves of one tone as tracks 1 and 2 of one album (FLAC, lossless), with a crossfade
    /// set: they follow each other gaplessly, sample for sample, as with no crossfade (a live
    /// album, a symphony), captured into a WAV file as GaplessTests does.
    func testTracksOfOneAlbumInOrderStayGaplessToTheSample() throws {
        let media = try MediaGenerator()
        let (first, second, whole) = try media.splitTone(seconds: 8, cutAtSample: 154_357)
        let tracks = try [first, second].enumerated().map { index, part in
            let track = media.url("track\(index + 1).flac")
            try media.gstLaunch("filesrc location=\(part.path) ! wavparse ! audioconvert"
                                + " ! taginject tags=artist=Band,album=Hall,track-number=(uint)\(index + 1) ! flacenc"
                                + " ! filesink location=\(track.path)")
            return track
        }
        try onBothPipelines { kind in
            let capture = media.url("album-\(kind.rawValue).wav")
            let harness = try Harness(pipeline: kind,
                                      sink: "audioconvert dithering=none ! audio/x-raw,format=S16LE,channels=2 ! wavenc ! filesink location=\(capture.path)",
                                      metadataReader: TagMetadataReader())
            harness.player.setCrossfade(3, albums: false)
            let ids = try harness.player.enqueue(tracks.map { MediaURI(fileURL: $0) })
            try harness.recorder.wait(for: "the second track's tags") { event -> Void? in
                guard let (id, metadata) = event.metadata, id == ids[1], metadata.trackNumber == 2 else { return nil }
                return ()
            }
            harness.player.play()
            try harness.recorder.wait(for: "second ends") { $0.playedToEnd == ids[1] ? () : nil }
            let captured = try WAV.samples(of: capture)
            XCTAssertEqual(captured.count, whole.count, "no gap, no overlap on \(kind)")
            let mismatch = zip(captured, whole).enumerated().first { $0.element.0 != $0.element.1 }
            XCTAssertNil(mismatch, "sample \(mismatch?.offset ?? -1) differs on \(kind)")
        }
    }
}

/// `body` on each sound server with each pipeline kind.
func onBothServersAndPipelines(_ body: (SoundServer.Kind, EngineConfiguration.PipelineKind) throws -> Void) throws {
    for server in SoundServer.Kind.allCases {
        try onBothPipelines { kind in try body(server, kind) }
    }
}

/// Where each tone sounds in a recording: a Hann-windowed Goertzel filter over 20 ms windows
/// every 5 ms; a tone sounds where its amplitude is above -60 dBFS (the tones are at -6 dBFS, and
/// the window's leakage between 300, 1000 and 3000 Hz is far below that).
struct Bands {
    static let window = SoundServer.rate / 50, hop = SoundServer.rate / 200
    static let threshold = 0.001
    let samples: [Double]
    var hopSeconds: Double { Double(Self.hop) / Double(SoundServer.rate) }

    init(_ samples: [Double]) { self.samples = samples }

    /// Whether `frequency` sounds in each window, in order: for at least `shortest` windows in a
    /// row (the splatter of a tone's first and last window is broadband, and shorter).
    func present(_ frequency: Double) -> [Bool] {
        var flags = above(frequency)
        var start = 0
        while start < flags.count {
            guard flags[start] else { start += 1; continue }
            var end = start
            while end < flags.count && flags[end] { end += 1 }
            if end - start < Self.shortest { for index in start..<end { flags[index] = false } }
            start = end
        }
        return flags
    }

    static let shortest = 6

    private func above(_ frequency: Double) -> [Bool] {
        let hann = (0..<Self.window).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(Self.window - 1)) }
        let gain = hann.reduce(0, +) / 2
        let coefficient = 2 * cos(2 * Double.pi * frequency / Double(SoundServer.rate))
        return stride(from: 0, to: max(samples.count - Self.window, 0), by: Self.hop).map { start in
            var s1 = 0.0, s2 = 0.0
            for index in 0..<Self.window {
                let s = samples[start + index] * hann[index] + coefficient * s1 - s2
                s2 = s1
                s1 = s
            }
            let power = s1 * s1 + s2 * s2 - coefficient * s1 * s2
            return power.squareRoot() / gain > Self.threshold
        }
    }

    /// How long both tones sound at once, in seconds.
    func overlap(_ one: Double, _ other: Double) -> Double {
        Double(zip(present(one), present(other)).filter { $0 && $1 }.count) * hopSeconds
    }

    func presence(_ frequency: Double) -> Double { Double(present(frequency).filter { $0 }.count) * hopSeconds }
    func first(_ frequency: Double) -> Double? { present(frequency).firstIndex(of: true).map { Double($0) * hopSeconds } }
    func last(_ frequency: Double) -> Double? { present(frequency).lastIndex(of: true).map { Double($0) * hopSeconds } }

    /// The longest stretch without the tone between its first and last sound.
    func longestGap(of frequency: Double) -> Double {
        let flags = present(frequency)
        guard let first = flags.firstIndex(of: true), let last = flags.lastIndex(of: true) else { return 0 }
        var longest = 0, run = 0
        for flag in flags[first...last] {
            run = flag ? 0 : run + 1
            longest = max(longest, run)
        }
        return Double(longest) * hopSeconds
    }

    /// The longest run of samples under -60 dBFS between the first and the last sample above it, in seconds.
    static func longestSilence(_ samples: [Double]) -> Double {
        guard let first = samples.firstIndex(where: { abs($0) > threshold }),
              let last = samples.lastIndex(where: { abs($0) > threshold }) else { return .infinity }
        var longest = 0, run = 0
        for sample in samples[first...last] {
            run = abs(sample) > threshold ? 0 : run + 1
            longest = max(longest, run)
        }
        return Double(longest) / Double(SoundServer.rate)
    }
}
