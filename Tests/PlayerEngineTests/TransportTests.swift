import Foundation
import EngineLink
import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

final class TransportTests: XCTestCase {
    var media: MediaGenerator!

    override func setUpWithError() throws {
        media = try MediaGenerator()
    }

    /// One audio buffer of the test media (441 frames at 44.1 kHz), plus the decoder's own.
    let oneBuffer: Duration = .milliseconds(25)

    func testExactSeekWhilePausedLandsOnTargetAndStaysPaused() throws {
        let file = try media.tone("seek", format: .flac, seconds: 5)
        try onBothPipelines { kind in
            let harness = try Harness(pipeline: kind)
            let id = try harness.enqueue(file)[0]
            harness.player.pause()
            _ = try harness.waitForStatus(id, "readyToPlay")
            let start = harness.recorder.count
            try harness.player.seek(to: .milliseconds(2345))
            let landed = try harness.waitForSeeked(from: start)
            XCTAssertLessThan(abs((landed - .milliseconds(2345)).nanoseconds), oneBuffer.nanoseconds, "on \(kind)")
            XCTAssertLessThan(abs((harness.player.position - .milliseconds(2345)).nanoseconds), oneBuffer.nanoseconds)
            XCTAssertEqual(harness.player.state.intent, .paused)
            XCTAssertEqual(harness.player.state.timeControlStatus, .paused)
            XCTAssertFalse(harness.recorder.events[start...].contains { $0.timeControl == .playing })
        }
    }

    func testSeeksCoalesceOnARealPipeline() throws {
        let file = try media.tone("slider", format: .ogg, seconds: 6)
        try onBothPipelines { kind in
            let harness = try Harness(pipeline: kind)
            let id = try harness.enqueue(file)[0]
            harness.player.play()
            _ = try harness.waitForStatus(id, "readyToPlay")
            let start = harness.recorder.count
            // a slider dragged: twenty seeks in a row, the newest wins
            for step in 1...20 { try harness.player.seek(to: .milliseconds(step * 200)) }
            let landed = try harness.recorder.wait(for: "final seek", from: start) { event -> Duration? in
                guard let position = event.seekedPosition, position >= .milliseconds(3900) else { return nil }
                return position
            }
            XCTAssertLessThan(abs((landed - .milliseconds(4000)).nanoseconds), oneBuffer.nanoseconds, "on \(kind)")
            let seeked = harness.recorder.events[start...].compactMap { $0.seekedPosition }
            XCTAssertLessThanOrEqual(seeked.count, 2, "coalesced seeks report once each: \(seeked)")
            XCTAssertEqual(harness.player.state.intent, .playing)
        }
    }

    func testRelativeSeekAndSeekPastTheEnd() throws {
        let first = try media.tone("first", format: .ogg, seconds: 4)
        let second = try media.tone("second", format: .ogg, seconds: 4)
        let harness = try Harness(pipeline: .playbin3)
        let ids = try harness.enqueue(first, second)
        harness.player.pause()
        _ = try harness.waitForStatus(ids[0], "readyToPlay")
        var start = harness.recorder.count
        try harness.player.seek(by: .seconds(2))
        let landed = try harness.waitForSeeked(from: start)
        XCTAssertLessThan(abs((landed - .seconds(2)).nanoseconds), oneBuffer.nanoseconds)
        start = harness.recorder.count
        try harness.player.seek(by: .seconds(-10))
        XCTAssertEqual(try harness.waitForSeeked(from: start), .zero)
        try harness.player.seek(to: .seconds(60))
        XCTAssertEqual(harness.player.currentItem?.id, ids[1])
        XCTAssertEqual(harness.player.state.intent, .paused)
    }

    func testStopReleasesThePipelineAndTheFile() throws {
        let file = try media.tone("held", format: .flac, seconds: 5)
        try onBothPipelines { kind in
            let harness = try Harness(pipeline: kind)
            let id = try harness.enqueue(file)[0]
            harness.player.play()
            try harness.waitForTimeControl(.playing)
            XCTAssertTrue(try openFiles().contains(file.path), "playing holds the file open")
            harness.player.stop()
            // the release hands the pipeline to a dispose thread that takes it to NULL
            XCTAssertTrue(harness.waitForDisposals())
            XCTAssertFalse(try openFiles().contains(file.path), "stop closes it (pipeline to NULL)")
            XCTAssertEqual(harness.player.position, .zero)
            XCTAssertEqual(harness.player.state.intent, .stopped)
            // play after stop starts the item again
            let start = harness.recorder.count
            harness.player.play()
            _ = try harness.waitForStatus(id, "readyToPlay", from: start)
            try harness.waitForTimeControl(.playing, from: start)
            // and lets go of it again: the next pipeline kind's check of the open files must not
            // see this one's pipeline, still on its dispose thread on a loaded machine
            harness.player.stop()
            XCTAssertTrue(harness.waitForDisposals())
        }
    }

    func testRateChangeKeepsPitch() throws {
        let file = try media.tone("tone", format: .wav, seconds: 2, frequency: 440)
        let capture = media.url("rate-capture.wav")
        try onBothPipelines { kind in
            let harness = try Harness(pipeline: kind, sink: "audioconvert ! audio/x-raw,format=S16LE ! wavenc ! filesink location=\(capture.path)")
            let id = try harness.enqueue(file)[0]
            try harness.player.setRate(2)
            harness.player.play()
            try harness.recorder.wait(for: "rate change") { event -> Void? in
                if case .rateChanged(2, .client) = event { () } else { nil }
            }
            XCTAssertEqual(try harness.recorder.wait(for: "end") { $0.playedToEnd }, id)
            let samples = try WAV.samples(of: capture)
            let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
            let seconds = Double(left.count) / 44100
            XCTAssertEqual(seconds, 1.0, accuracy: 0.1, "twice as fast: half as long on \(kind)")
            XCTAssertEqual(frequency(of: left, rate: 44100), 440, accuracy: 15, "pitch kept on \(kind)")
        }
    }

    func testRateOutOfRangeIsRefusedWithItsReason() throws {
        let harness = try Harness(pipeline: .playbin3)
        XCTAssertThrowsError(try harness.player.setRate(5))
        try harness.recorder.wait(for: "refusal") { event -> Void? in
            if case .rateChanged(1, .refused) = event { () } else { nil }
        }
    }

    func testVolumeAndMuteReachThePipeline() throws {
        let file = try media.tone("loud", format: .wav, seconds: 1)
        let source = try WAV.samples(of: file)
        for kind in EngineConfiguration.PipelineKind.allCases {
            for muted in [false, true] {
                let capture = media.url("volume-capture-\(kind)-\(muted).wav")
                let harness = try Harness(pipeline: kind, sink: "audioconvert ! audio/x-raw,format=S16LE ! wavenc ! filesink location=\(capture.path)")
                try harness.enqueue(file)
                harness.player.setVolume(0.5)
                harness.player.setMuted(muted)
                harness.player.play()
                _ = try harness.recorder.wait(for: "end") { $0.playedToEnd }
                XCTAssertTrue(harness.waitForDisposals())
                let captured = try WAV.samples(of: capture)
                XCTAssertGreaterThan(captured.count, source.count / 2, "\(kind): the capture holds the track")
                XCTAssertEqual(peak(captured) / peak(source), muted ? 0 : 0.5, accuracy: 0.02, "\(kind) muted=\(muted): linear volume")
            }
        }
    }

    /// Counts the file descriptors of this process open on `path`.
    func openFiles() throws -> [String] {
        let fds = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
    }
}

/// The frequency of a tone from its rising zero crossings.
func frequency(of samples: [Int16], rate: Int) -> Double {
    var crossings = 0
    for index in 1..<samples.count where samples[index - 1] < 0 && samples[index] >= 0 { crossings += 1 }
    return Double(crossings) / (Double(samples.count) / Double(rate))
}

func peak(_ samples: [Int16]) -> Double {
    Double(samples.map { abs(Int($0)) }.max() ?? 0)
}

/// Regression: scaletempo 1.22.0 crashed (SIGSEGV in memmove on a streaming thread) when an item
/// played at a rate other than 1 was followed, after a READY cycle of the same pipeline, by one
/// whose scaletempo queue is smaller (lower sample rate, fewer channels, smaller samples) played
/// at a rate other than 1. Each load gets a fresh pipeline, and so a fresh scaletempo.
final class ScaletempoTests: XCTestCase {
    func testRateAcrossItemsOfShrinkingFormatsDoesNotCrash() throws {
        let media = try MediaGenerator()
        let wide = try media.wav("wide", seconds: 8, rate: 48000, channels: 2, sampleFormat: "F32LE")
        let narrow = try media.wav("narrow", seconds: 8, rate: 22050, channels: 1, sampleFormat: "S16LE")
        try onBothPipelines { kind in
            let harness = try Harness(pipeline: kind)
            let ids = try harness.enqueue(wide, narrow, wide, narrow)
            harness.player.play()
            try harness.waitForTimeControl(.playing)
            try harness.player.setRate(2)
            for (index, id) in ids.enumerated() {
                if index > 0 {
                    let start = harness.recorder.count
                    try harness.player.jump(to: id)  // a switch that is not gapless: a new load
                    _ = try harness.waitForStatus(id, "readyToPlay", from: start)
                }
                // a seek at rate 2 pushes audio through scaletempo at that rate
                let start = harness.recorder.count
                try harness.player.seek(to: .milliseconds(500))
                _ = try harness.waitForSeeked(from: start)
            }
            // a short item may end on its own before the next jump: wait for the last one's end
            let last = try XCTUnwrap(ids.last)
            _ = try harness.recorder.wait(for: "the last item played to its end") { $0.playedToEnd == last ? last : nil }
            XCTAssertEqual(harness.player.state.rate, 2)
        }
    }
}
