import Foundation
import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

/// A released legacy playbin is kept in NULL and taken by the next load (`PipelineFactory.giveBack`
/// and `forLoad`): what it plays next must be that item, whole and alone.
final class WarmPipelineTests: XCTestCase {
    var media: MediaGenerator!

    override func setUpWithError() throws {
        media = try MediaGenerator()
    }

    func testAReleasedPipelinePlaysTheNextItemFromItsStartWithThatItemsTagsAndLength() throws {
        let first = try media.tone("warm-first", format: .mp3, seconds: 6, tags: MediaGenerator.Tags(title: "First", artist: "One"))
        let second = try media.tone("warm-second", format: .ogg, seconds: 2, frequency: 660,
                                    tags: MediaGenerator.Tags(title: "Second", artist: "Two"))
        try onBothPipelines { kind in
            let harness = try Harness(pipeline: kind)
            let firstID = try harness.enqueue(first)[0]
            harness.player.play()
            _ = try harness.waitForStatus(firstID, "readyToPlay")
            try harness.waitForTimeControl(.playing)
            try harness.player.seek(to: .seconds(4))
            harness.player.stop()
            XCTAssertTrue(harness.waitForDisposals())
            XCTAssertEqual(harness.engine.pipelinesBuilt, 1)

            let start = harness.recorder.count
            let secondID = try XCTUnwrap(try harness.player.open([MediaURI(fileURL: second)]).first)
            _ = try harness.waitForStatus(secondID, "readyToPlay", from: start)
            try harness.waitForTimeControl(.playing, from: start)
            XCTAssertLessThan(harness.player.position, .seconds(1), "\(kind): from its start, not where the first stopped")
            let metadata = try harness.recorder.wait(for: "the second item's title", from: start) { event -> Metadata? in
                guard let (id, metadata) = event.metadata, id == secondID, metadata.title != nil else { return nil }
                return metadata
            }
            XCTAssertEqual(metadata.title, "Second", "\(kind)")
            XCTAssertEqual(metadata.artists, ["Two"], "\(kind): no tag of the first item is left over")
            let length = try XCTUnwrap(harness.player.item(secondID)?.duration, "\(kind)")
            XCTAssertEqual(Double(length.nanoseconds) / 1e9, 2, accuracy: 0.1, "\(kind): the second item's length")
            XCTAssertEqual(try harness.recorder.wait(for: "the second item's end", from: start) { $0.playedToEnd }, secondID)
            XCTAssertFalse(harness.recorder.events[start...].contains { $0.failure != nil }, "\(kind)")
            // legacy playbin is kept through the release; playbin3 gains nothing from it (see `PipelineFactory.giveBack`)
            XCTAssertEqual(harness.engine.pipelinesBuilt, kind == .playbin ? 1 : 2, "\(kind)")
        }
    }

    func testAPipelineThatFailedIsNotKeptAndTheNextLoadPlays() throws {
        let garbage = try media.garbage("warm-noise.mp3")
        let good = try media.tone("warm-good", format: .flac, seconds: 1)
        let harness = try Harness(pipeline: .playbin)
        let badID = try harness.enqueue(garbage)[0]
        harness.player.play()
        _ = try harness.waitForStatus(badID, "failed")
        harness.player.stop()
        XCTAssertTrue(harness.waitForDisposals())
        let built = harness.engine.pipelinesBuilt
        let start = harness.recorder.count
        let goodID = try XCTUnwrap(try harness.player.open([MediaURI(fileURL: good)]).first)
        XCTAssertEqual(try harness.recorder.wait(for: "the good item's end", from: start) { $0.playedToEnd }, goodID)
        XCTAssertEqual(harness.engine.pipelinesBuilt, built + 1, "the failed item's pipeline was not kept")
        // and the good item's pipeline, released, is
        harness.player.stop()
        XCTAssertTrue(harness.waitForDisposals())
        harness.player.play()
        XCTAssertEqual(try harness.recorder.wait(for: "the end again", from: harness.recorder.count) { $0.playedToEnd }, goodID)
        XCTAssertEqual(harness.engine.pipelinesBuilt, built + 1)
    }

    /// scaletempo 1.22.0 crashes when it is used again after a READY cycle at another rate with a
    /// smaller sample queue (see `PipelineFactory.make`): a kept pipeline gets a fresh filter.
    func testAKeptPipelineTakesAnotherRateAndFewerChannels() throws {
        let stereo = try media.tone("warm-stereo", format: .wav, seconds: 2)
        let mono = try media.wav("warm-mono", seconds: 2, rate: 22050, channels: 1, sampleFormat: "S16LE")
        let harness = try Harness(pipeline: .playbin)
        try harness.player.setRate(1.5)
        let stereoID = try harness.enqueue(stereo)[0]
        harness.player.play()
        XCTAssertEqual(try harness.recorder.wait(for: "stereo's end") { $0.playedToEnd }, stereoID)
        harness.player.stop()
        XCTAssertTrue(harness.waitForDisposals())
        // with an item, a rate set while stopped prerolls it (a rate is a seek): none is left
        harness.player.clear()
        try harness.player.setRate(0.75)
        let start = harness.recorder.count
        let monoID = try XCTUnwrap(try harness.player.open([MediaURI(fileURL: mono)]).first)
        XCTAssertEqual(try harness.recorder.wait(for: "mono's end", from: start, timeout: 30) { $0.playedToEnd }, monoID)
        XCTAssertEqual(harness.player.state.rate, 0.75)
        XCTAssertEqual(harness.engine.pipelinesBuilt, 1)
    }

    func testAVolumeSetWhileStoppedReachesTheKeptPipeline() throws {
        let file = try media.tone("warm-loud", format: .wav, seconds: 1)
        let source = try WAV.samples(of: file)
        let capture = media.url("warm-volume-capture.wav")
        let harness = try Harness(pipeline: .playbin, sink: "audioconvert ! audio/x-raw,format=S16LE ! wavenc ! filesink location=\(capture.path)")
        let id = try harness.enqueue(file)[0]
        harness.player.play()
        XCTAssertEqual(try harness.recorder.wait(for: "the end") { $0.playedToEnd }, id)
        harness.player.stop()
        XCTAssertTrue(harness.waitForDisposals())
        harness.player.setVolume(0.5)
        harness.player.setMuted(false)
        let start = harness.recorder.count
        harness.player.play()
        XCTAssertEqual(try harness.recorder.wait(for: "the end again", from: start) { $0.playedToEnd }, id)
        harness.player.stop()
        XCTAssertTrue(harness.waitForDisposals())
        XCTAssertEqual(harness.engine.pipelinesBuilt, 1)
        let captured = try WAV.samples(of: capture)
        XCTAssertGreaterThan(captured.count, source.count / 2, "the capture holds the track")
        XCTAssertEqual(peak(captured) / peak(source), 0.5, accuracy: 0.02, "the volume set while stopped")
    }
}
