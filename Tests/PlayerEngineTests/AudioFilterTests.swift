import Foundation
import EngineLink
import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

/// ReplayGain and the equalizer, measured on what comes out: each file is played into a WAV
/// capture and its level compared with the same tone played without the setting.
final class AudioFilterTests: XCTestCase {
    var media: MediaGenerator!

    override func setUpWithError() throws {
        media = try MediaGenerator()
    }

    /// Plays `file` to its end into a capture (after `configure`) and returns the samples.
    private func capture(_ file: URL, name: String, pipeline: EngineConfiguration.PipelineKind = .playbin3,
                         configure: (Player) -> Void = { _ in }) throws -> [Int16] {
        let output = media.url("\(name)-capture.wav")
        let harness = try Harness(pipeline: pipeline, sink: "audioconvert ! audio/x-raw,format=S16LE ! wavenc ! filesink location=\(output.path)")
        configure(harness.player)
        let id = try harness.enqueue(file)[0]
        harness.player.play()
        XCTAssertEqual(try harness.recorder.wait(for: "\(name) played", timeout: 30) { $0.playedToEnd }, id)
        harness.player.stop()
        XCTAssertTrue(harness.waitForDisposals())
        return try WAV.samples(of: output)
    }

    private func tagged(_ name: String, _ extra: String..., format: MediaGenerator.Format = .flac, frequency: Double = 440) throws -> URL {
        var tags = MediaGenerator.Tags()
        tags.extra = extra
        return try media.tone(name, format: format, seconds: 1.5, frequency: frequency, tags: tags)
    }

    // MARK: ReplayGain

    func testATrackTaggedMinus6dBPlays6dBQuieterThanTheSameFileUntagged() throws {
        let plain = try capture(try tagged("plain"), name: "plain") { $0.setReplayGainMode(.track) }
        for pipeline in EngineConfiguration.PipelineKind.allCases {
            let quiet = try capture(try tagged("quiet-\(pipeline)", "replaygain-track-gain=-6.0"), name: "quiet-\(pipeline)", pipeline: pipeline) {
                $0.setReplayGainMode(.track)
            }
            XCTAssertEqual(decibels(quiet, plain), -6, accuracy: 0.1, "on \(pipeline)")
        }
    }

    /// ReplayGain and the volume are one gain (`OutputLevels`): a track tagged -6 dB played at
    /// volume 0.5 (-6.02 dB), both set before it starts, is heard 12 dB under the same tone at 1.
    func testATaggedTracksGainIsHeardTogetherWithAVolumeSetAtTheSameTime() throws {
        let plain = try capture(try tagged("plain"), name: "plain")
        for pipeline in EngineConfiguration.PipelineKind.allCases {
            let both = try capture(try tagged("both-\(pipeline)", "replaygain-track-gain=-6.0"), name: "both-\(pipeline)", pipeline: pipeline) {
                $0.setReplayGainMode(.track)
                $0.setVolume(0.5)
            }
            XCTAssertEqual(decibels(both, plain), -6 + 20 * log10(0.5), accuracy: 0.1, "on \(pipeline)")
        }
    }

    func testReplayGainOffPlaysTheTaggedFileAsItIs() throws {
        let file = try tagged("off", "replaygain-track-gain=-6.0")
        let plain = try capture(try tagged("plain"), name: "plain")
        let off = try capture(file, name: "off")
        XCTAssertEqual(decibels(off, plain), 0, accuracy: 0.1)
    }

    func testAlbumModeTakesTheAlbumGainAndThePreampAddsToIt() throws {
        let file = try tagged("album", "replaygain-track-gain=-6.0", "replaygain-album-gain=-2.0")
        let plain = try capture(try tagged("plain"), name: "plain")
        let album = try capture(file, name: "album") { $0.setReplayGainMode(.album) }
        XCTAssertEqual(decibels(album, plain), -2, accuracy: 0.1)
        let preamp = try capture(file, name: "preamp") {
            $0.setReplayGainMode(.track)
            $0.setReplayGainPreamp(-3)
        }
        XCTAssertEqual(decibels(preamp, plain), -9, accuracy: 0.1)
    }

    /// The tone peaks at 0.5 of full scale; its peak tag says 0.9, so +6 dB would clip a file that
    /// really peaked there: the gain stops at 1/0.9.
    func testThePeakCapsAPositiveGainSoThatNothingClips() throws {
        let file = try tagged("loud", "replaygain-track-gain=6.0", "replaygain-track-peak=0.9")
        let plain = try capture(try tagged("plain"), name: "plain")
        let loud = try capture(file, name: "loud") { $0.setReplayGainMode(.track) }
        XCTAssertEqual(decibels(loud, plain), 20 * log10(1 / 0.9), accuracy: 0.1)
        XCTAssertLessThan(peak(loud), 32767, "no sample at full scale")
    }

    /// Opus's R128_TRACK_GAIN is Q7.8 dB relative to -23 LUFS: -2816 is -11 dB there, -6 dB at
    /// ReplayGain's -18 LUFS (GStreamer 1.22 leaves the comment to us).
    func testAnOpusR128TrackGainIsApplied() throws {
        let plain = try capture(try tagged("plain-opus", format: .opus), name: "plain-opus") { $0.setReplayGainMode(.track) }
        let quiet = try capture(try tagged("r128", #"extended-comment=(string)\"R128_TRACK_GAIN=-2816\""#, format: .opus), name: "r128") {
            $0.setReplayGainMode(.track)
        }
        XCTAssertEqual(decibels(quiet, plain), -6, accuracy: 0.1)
    }

    func testAnID3TXXXReplayGainTagIsApplied() throws {
        let plainFile = try media.tone("plain-mp3", format: .mp3, seconds: 1.5)
        let taggedFile = try media.tone("txxx", format: .mp3, seconds: 1.5)
        try ID3Writer.prependText([(id: "TXXX", encoding: 0, bytes: Array("REPLAYGAIN_TRACK_GAIN\u{0}-6.00 dB".utf8))], to: taggedFile)
        let plain = try capture(plainFile, name: "plain-mp3") { $0.setReplayGainMode(.track) }
        let quiet = try capture(taggedFile, name: "txxx") { $0.setReplayGainMode(.track) }
        XCTAssertEqual(decibels(quiet, plain), -6, accuracy: 0.1)
    }

    /// A gapless switch to an untagged file forgets the tagged one's gain (rgvolume keeps it until
    /// EOS, which a gapless switch never sends).
    func testAnUntaggedTrackAfterATaggedOneGaplesslyPlaysAsItIs() throws {
        let first = try tagged("first", "replaygain-track-gain=-6.0")
        let second = try tagged("second", frequency: 660)
        let plain = try capture(try tagged("plain-660", frequency: 660), name: "plain-660")
        let output = media.url("gapless-capture.wav")
        let harness = try Harness(pipeline: .playbin, sink: "audioconvert ! audio/x-raw,format=S16LE ! wavenc ! filesink location=\(output.path)")
        harness.player.setReplayGainMode(.track)
        let ids = try harness.enqueue(first, second)
        harness.player.play()
        XCTAssertEqual(try harness.recorder.wait(for: "the second played", timeout: 30) { $0.playedToEnd == ids[1] ? ids[1] : nil }, ids[1])
        harness.player.stop()
        XCTAssertTrue(harness.waitForDisposals())
        let samples = try WAV.samples(of: output)
        XCTAssertEqual(Double(samples.count), Double(2 * plain.count), accuracy: 2 * 2048, "both tracks, gaplessly")
        let tail = Array(samples[(samples.count * 3 / 4)...])
        XCTAssertEqual(decibels(tail, plain), 0, accuracy: 0.1, "the second track at its own level")
        let head = Array(samples[(samples.count / 8)..<(samples.count * 3 / 8)])
        XCTAssertEqual(decibels(head, plain), -6, accuracy: 0.1, "the first track 6 dB down")
        // at the boundary itself: the second track's first 100 ms at its own level, the first's
        // last 100 ms still 6 dB down (the factor changes in the stream's order, not when the engine
        // hears of the switch: a FLAC frame is 93 ms, so a late change would leave this one down)
        let window = 2 * MediaGenerator.sampleRate / 10, boundary = samples.count - plain.count
        let start = Array(samples[boundary..<boundary + window]), plainStart = Array(plain[0..<window])
        XCTAssertEqual(decibels(start, plainStart), 0, accuracy: 0.2, "the second track's first 100 ms")
        let end = Array(samples[boundary - window..<boundary]), plainEnd = Array(plain[plain.count - window..<plain.count])
        XCTAssertEqual(decibels(end, plainEnd), -6, accuracy: 0.2, "the first track's last 100 ms")
    }

    // MARK: Equalizer

    func testASineAtABandsCentreComesOutChangedByThatBandsGain() throws {
        var gains = Equalizer.flat
        gains[4] = 4
        gains[7] = -9
        for (band, frequency) in [(4, 474.0), (7, 3770.0), (1, 59.0)] {
            let file = try media.tone("band\(band)", format: .wav, seconds: 1.5, frequency: frequency)
            let plain = try capture(file, name: "band\(band)-flat")
            let shaped = try capture(file, name: "band\(band)-eq") { $0.setEqualizer(gains) }
            XCTAssertEqual(decibels(shaped, plain), gains[band], accuracy: 0.5, "band \(band), \(frequency) Hz")
        }
    }

    /// Flat keeps the equalizer out of the pipeline; leaving flat while playing puts it in with
    /// nothing lost, and going back to flat takes it out again.
    func testTheEqualizerGoesInAndOutOfAPlayingPipelineWithoutAGap() throws {
        let file = try media.tone("long", format: .wav, seconds: 4, frequency: 474)
        let source = try WAV.samples(of: file)
        let output = media.url("live-capture.wav")
        // synchronised to the clock, so that the change lands in the middle of the track
        let harness = try Harness(pipeline: .playbin3,
                                  sink: "audioconvert ! audio/x-raw,format=S16LE ! wavenc ! filesink sync=true location=\(output.path)")
        let id = try harness.enqueue(file)[0]
        harness.player.play()
        try harness.waitForTimeControl(.playing)
        XCTAssertFalse(harness.engine.audioFilterElements.contains("equalizer-10bands"), "flat: no equalizer")
        XCTAssertTrue(waitUntil { harness.player.position > .milliseconds(500) })
        var gains = Equalizer.flat
        gains[4] = -6
        harness.player.setEqualizer(gains)
        XCTAssertTrue(waitUntil { harness.engine.audioFilterElements.contains("equalizer-10bands") }, "the equalizer is in")
        XCTAssertTrue(waitUntil { harness.player.position > .seconds(2) })
        harness.player.setEqualizer(Equalizer.flat)
        XCTAssertTrue(waitUntil { !harness.engine.audioFilterElements.contains("equalizer-10bands") }, "flat again: out")
        XCTAssertEqual(try harness.recorder.wait(for: "played", timeout: 30) { $0.playedToEnd }, id)
        harness.player.stop()
        XCTAssertTrue(harness.waitForDisposals())
        let samples = try WAV.samples(of: output)
        XCTAssertEqual(samples.count, source.count, "no sample lost or added")
        // the level of each 50 ms against the source's: flat, then one run at -6 dB, then flat
        // again (where the runs fall depends on how far the sink's buffer is behind the filter)
        let window = 2 * MediaGenerator.sampleRate / 20
        let levels = stride(from: 0, to: source.count - window, by: window).map { start in
            decibels(Array(samples[start..<start + window]), Array(source[start..<start + window]))
        }
        let shape = levels.map { abs($0) < 0.1 ? "0" : abs($0 + 6) < 0.5 ? "6" : "~" }.joined()
        XCTAssertNotNil(shape.wholeMatch(of: /0{5,}~?6{10,}~?0{5,}/), "levels by 50 ms: \(shape)")
        XCTAssertEqual(longestSilence(samples), 0, accuracy: 8, "no gap")
    }

    private func waitUntil(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return condition()
    }
}

/// The RMS level of `samples` over that of `reference`, in dB, each over its middle 80% (the
/// start and end of a lossy file fade).
func decibels(_ samples: [Int16], _ reference: [Int16]) -> Double {
    func rms(_ values: [Int16]) -> Double {
        let middle = values[(values.count / 10)..<(values.count * 9 / 10)]
        let sum = middle.reduce(0.0) { $0 + Double($1) * Double($1) }
        return (sum / Double(max(middle.count, 1))).squareRoot()
    }
    return 20 * log10(rms(samples) / rms(reference))
}

/// The longest run of zero samples in the middle of `samples` (a sine crosses zero at single samples).
func longestSilence(_ samples: [Int16]) -> Double {
    var longest = 0, run = 0
    for sample in samples[(samples.count / 20)..<(samples.count * 19 / 20)] {
        run = sample == 0 ? run + 1 : 0
        longest = max(longest, run)
    }
    return Double(longest)
}
