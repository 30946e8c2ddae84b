import Foundation
import GStreamer
import EngineLink
import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

final class FailureTests: XCTestCase {
    var media: MediaGenerator!

    override func setUpWithError() throws {
        media = try MediaGenerator()
    }

    /// Plays `bad` then a good file; `bad` must fail with `kind`, and the good one must play.
    func assertFails(_ bad: MediaURI, with kind: ItemError.Kind, messageContains text: String,
                     pipeline: EngineConfiguration.PipelineKind, file: StaticString = #filePath, line: UInt = #line) throws {
        let good = try media.tone("good", format: .ogg, seconds: 0.3)
        let harness = try Harness(pipeline: pipeline)
        let ids = try harness.player.enqueue([bad, MediaURI(fileURL: good)])
        harness.player.play()
        let (failedID, error) = try harness.recorder.wait(for: "failure of \(bad)") { $0.failure }
        XCTAssertEqual(failedID, ids[0], file: file, line: line)
        XCTAssertEqual(error.kind, kind, "\(error) on \(pipeline)", file: file, line: line)
        XCTAssertTrue(error.message.contains(text), "\(error.message) should name \(text)", file: file, line: line)
        XCTAssertEqual(harness.player.item(ids[0])?.status, .failed(error), file: file, line: line)
        // the player stays healthy and moves on
        let ended = try harness.recorder.wait(for: "the good file played to its end") { $0.playedToEnd }
        XCTAssertEqual(ended, ids[1], file: file, line: line)
    }

    func testMissingFile() throws {
        let missing = media.url("not-there.mp3")
        try onBothPipelines { kind in
            try assertFails(MediaURI(fileURL: missing), with: .notFound, messageContains: missing.path, pipeline: kind)
        }
    }

    func testUnsupportedFormat() throws {
        let garbage = try media.garbage("noise.mp3")
        try onBothPipelines { kind in
            try assertFails(MediaURI(fileURL: garbage), with: .unsupportedFormat, messageContains: "noise.mp3", pipeline: kind)
        }
    }

    func testCorruptData() throws {
        // a FLAC whose STREAMINFO block is garbage: recognised as FLAC, not decodable
        let flac = try media.tone("whole", format: .flac, seconds: 2)
        let corrupt = try media.corrupted(flac, range: 8..<42, name: "corrupt.flac")
        try onBothPipelines { kind in
            try assertFails(MediaURI(fileURL: corrupt), with: .decode, messageContains: "corrupt.flac", pipeline: kind)
        }
    }

    func testMissingDecoder() throws {
        // decodebin caches its factory list per process, so the Opus decoders are hidden from a
        // fresh test process (GST_PLUGIN_FEATURE_RANK at gst_init), as on a machine without them
        guard ProcessInfo.processInfo.environment["TONEARM_TEST_NO_OPUS"] != nil else {
            let ranks = GStreamer.decoders(accepting: "audio/x-opus").map { "\($0):0" }
            XCTAssertFalse(ranks.isEmpty, "an Opus decoder is installed to hide")
            let output = try Processes.run([CommandLine.arguments[0], "PlayerEngineTests.FailureTests/testMissingDecoder"],
                                           environment: ["TONEARM_TEST_NO_OPUS": "1",
                                                         "GST_PLUGIN_FEATURE_RANK": ranks.joined(separator: ",")])
            XCTAssertTrue(output.contains("Executed 1 test, with 0 failures"), output)
            return
        }
        let opus = try media.tone("speech", format: .opus, seconds: 1)
        try onBothPipelines { kind in
            try assertFails(MediaURI(fileURL: opus), with: .missingDecoder, messageContains: "speech.opus", pipeline: kind)
        }
    }

    func testUnreachableHost() throws {
        // nothing listens on port 9 of the loopback (discard); the connection is refused at once
        try onBothPipelines { kind in
            try assertFails(MediaURI("http://127.0.0.1:9/stream.mp3"), with: .network, messageContains: "127.0.0.1", pipeline: kind)
        }
    }

    func testTruncatedFilePlaysWhatIsThereAndEnds() throws {
        let mp3 = try media.tone("long", format: .mp3, seconds: 3)
        let cut = try media.truncated(mp3, fraction: 0.5, name: "cut.mp3")
        try onBothPipelines { kind in
            let harness = try Harness(pipeline: kind)
            let id = try harness.enqueue(cut)[0]
            harness.player.play()
            let ended = try harness.recorder.wait(for: "end") { $0.playedToEnd }
            XCTAssertEqual(ended, id)
            XCTAssertEqual(harness.player.item(id)?.status, .readyToPlay)
        }
    }

    func testAdvanceOnFailureCanBeTurnedOff() throws {
        var configuration = PlayerConfiguration()
        configuration.advanceOnFailure = false
        let good = try media.tone("good", format: .ogg, seconds: 0.3)
        let harness = try Harness(pipeline: .playbin3, configuration: configuration)
        let ids = try harness.enqueue(media.url("missing.ogg"), good)
        harness.player.play()
        _ = try harness.recorder.wait(for: "failure") { $0.failure }
        XCTAssertEqual(harness.player.currentItem?.id, ids[0])
        XCTAssertEqual(harness.player.state.intent, .playing)
        XCTAssertEqual(harness.player.state.timeControlStatus, .waitingToPlay(.evaluatingBuffering))
        // the file appears; retry plays it
        try FileManager.default.copyItem(at: good, to: media.url("missing.ogg"))
        let start = harness.recorder.count
        try harness.player.retry()
        let ended = try harness.recorder.wait(for: "retried item played", from: start) { $0.playedToEnd }
        XCTAssertEqual(ended, ids[0])
    }

    /// The output fails while playing (a sink whose device fills up: filesink on /dev/full that
    /// flushes after 256 KiB, about 1.5 s of CD audio): the item is not to blame. It stays current
    /// and not failed, the player pauses where it was with the reason `output`, and Play tries again.
    func testOutputThatFailsWhilePlayingPausesAndPlayTriesAgain() throws {
        let file = try media.tone("long", format: .flac, seconds: 20)
        let sink = "filesink location=/dev/full sync=true buffer-mode=full buffer-size=262144"
        try onBothPipelines { kind in
            let harness = try Harness(pipeline: kind, sink: sink)
            let ids = try harness.enqueue(file, file)
            harness.player.play()
            try harness.waitForTimeControl(.playing)
            let error = try harness.recorder.wait(for: "the output failed") { event -> ItemError? in
                if case .outputFailed(let error) = event { error } else { nil }
            }
            XCTAssertEqual(error.kind, .output, "on \(kind)")
            XCTAssertTrue(harness.recorder.events.contains(.rateChanged(0, .output)), "on \(kind)")
            XCTAssertNil(harness.recorder.events.first { $0.failure != nil }, "no item failed on \(kind)")
            XCTAssertEqual(harness.player.currentItem?.id, ids[0], "the item stays on \(kind)")
            XCTAssertEqual(harness.player.state.intent, .paused)
            XCTAssertEqual(harness.player.state.timeControlStatus, .paused)
            let stoppedAt = harness.player.position
            XCTAssertGreaterThan(stoppedAt, .milliseconds(500), "paused where it was on \(kind)")
            // Play opens the output again (and it fails again: /dev/full stays full)
            let start = harness.recorder.count
            harness.player.play()
            _ = try harness.waitForStatus(ids[0], "readyToPlay", from: start)
            _ = try harness.recorder.wait(for: "the output failed again", from: start) { event -> ItemError? in
                if case .outputFailed(let error) = event { error } else { nil }
            }
            XCTAssertEqual(harness.player.currentItem?.id, ids[0])
        }
    }
}
