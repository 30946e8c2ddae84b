import Basics
import Dispatch
import Foundation
import GStreamer
import Logging
@testable import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

/// `Crossfade`, the owner of a crossfade's pipelines, on real `playbin`s playing tones into a
/// `volume ! fakesink sync=true` (the volume standing in for the stage in front of the sink that
/// the ramps set), with a real `OutputLevels` and `PipelineTeardown`: a prepared item waits in
/// READY, silent, on the system clock; a start makes it current and fades the previous one out
/// until the ramp's end lets it go; the fade's pipelines pause together; the previous item's end
/// ends the fade early; a dropped item goes to NULL. What is heard is `CrossfadeTests`'.
final class CrossfadePipelinesTests: XCTestCase {
    let queue = DispatchQueue(label: "test.crossfade")
    var teardown: PipelineTeardown!
    var crossfade: Crossfade!
    var levels: OutputLevels!
    /// The engine's current pipeline, as `start` hands it over; confined to `queue`.
    var current: EnginePipeline?
    /// Runs on `queue` when the fade ends, once the crossfade let the previous pipeline go.
    var fadeEnded: (() -> Void)?
    /// The tones, made once for the class (the generator keeps them while it lives).
    static let tones = Result { () throws -> (media: MediaGenerator, long: URL, short: URL) in
        let media = try MediaGenerator()
        return (media, try media.tone("long", format: .wav, seconds: 10), try media.tone("short", format: .wav, seconds: 0.5))
    }
    var long: URL { get throws { try Self.tones.get().long } }
    var short: URL { get throws { try Self.tones.get().short } }

    override func setUp() {
        super.setUp()
        GStreamerEngine.prepareRegistry()
        let logger = Logger.quiet
        teardown = PipelineTeardown(logger: logger)
        crossfade = Crossfade(teardown: teardown)
        levels = queue.sync {
            OutputLevels(queue: queue, logger: logger, pipelines: { [unowned self] in
                (current?.gains, crossfade.outgoing?.gains, crossfade.incoming?.pipeline.gains)
            }, sliderMoved: { _, _ in }, crossfadeEnded: { [unowned self] in
                crossfade.endFadeOut()  // as the engine does
                fadeEnded?()
            })
        }
        crossfade.use(levels)
    }

    override func tearDown() {
        queue.sync {
            crossfade.dropIncoming()
            crossfade.endFadeOut()
            if let current { teardown.letGo(current, exclusiveDevice: false) }
            current = nil
        }
        XCTAssertTrue(teardown.waitForDisposals(timeout: 10))
        super.tearDown()
    }

    /// A playbin of `uri` into `volume ! fakesink sync=true`, its bus read on `queue` as the engine
    /// reads it (the fading-out pipeline's by the crossfade).
    func pipeline(_ uri: URL) throws -> EnginePipeline {
        let playbin = try Element(factory: "playbin", name: "test", isPipeline: true)
        let sink = try Element(binDescription: "volume name=tonearm-fade ! fakesink sync=true")
        playbin.set("audio-sink", sink)
        playbin.set("video-sink", try Element(factory: "fakesink"))
        let bus = try XCTUnwrap(playbin.bus)
        let source = DispatchSource.makeReadSource(fileDescriptor: bus.fileDescriptor, queue: queue)
        let pipeline = EnginePipeline(playbin: playbin, kind: .playbin, gains: GainStages(stream: nil, front: sink.child(named: "tonearm-fade"), filter: nil),
                                      bus: bus, busSource: source)
        source.setEventHandler { [weak self, weak pipeline] in
            guard let self, let pipeline, !crossfade.drain(pipeline) else { return }
            while pipeline.bus.pop() != nil {}
        }
        source.setCancelHandler { withExtendedLifetime(pipeline) {} }
        source.resume()
        playbin.set("uri", uri.absoluteString)
        return pipeline
    }

    /// A current pipeline playing `uri`.
    func playing(_ uri: URL) throws -> EnginePipeline {
        let pipeline = try pipeline(uri)
        queue.sync {
            levels.apply(to: pipeline.gains)
            current = pipeline
        }
        pipeline.playbin.setState(.playing)
        XCTAssertEqual(pipeline.playbin.waitForState(timeout: .seconds(5)), .success)
        return pipeline
    }

    func prepared(_ uri: URL, _ generation: Generation) throws -> EnginePipeline {
        let next = try pipeline(uri)
        queue.sync { crossfade.prepare(next, try! MediaURI(uri.absoluteString), generation) }
        return next
    }

    func fade(of pipeline: EnginePipeline) -> Double { queue.sync { pipeline.gains.front!.double("volume") } }

    func testAPreparedItemWaitsInReadySilentOnTheSystemClock() throws {
        _ = try playing(try long)
        let next = try prepared(try short, Generation(2))
        XCTAssertEqual(next.playbin.currentState.current, .ready)
        XCTAssertEqual(fade(of: next), 0, "silent until it starts")
        queue.sync {
            XCTAssertTrue(crossfade.incoming?.pipeline === next)
            XCTAssertEqual(crossfade.incoming?.generation, Generation(2))
            XCTAssertNil(crossfade.outgoing)
        }
    }

    func testAStartMakesItCurrentAndTheRampsEndLetsThePreviousGo() throws {
        let previous = try playing(try long)
        let next = try prepared(try long, Generation(2))
        let ended = expectation(description: "the fade ends")
        fadeEnded = { ended.fulfill() }
        var madeCurrent: [Generation] = []
        queue.sync {
            crossfade.start(length: .milliseconds(500), from: previous) { incoming in
                madeCurrent.append(incoming.generation)
                current = incoming.pipeline
            }
            XCTAssertNil(crossfade.incoming)
            XCTAssertTrue(crossfade.outgoing === previous, "the previous item fades out beside it")
        }
        XCTAssertEqual(madeCurrent, [Generation(2)])
        XCTAssertEqual(next.playbin.waitForState(timeout: .seconds(5)), .success)
        XCTAssertEqual(next.playbin.currentState.current, .playing, "the previous one played: so does the next")
        wait(for: [ended], timeout: 5)
        queue.sync { XCTAssertNil(crossfade.outgoing) }
        XCTAssertEqual(fade(of: next), 1, accuracy: 0.001, "the current item at its full level")
        XCTAssertTrue(teardown.waitForDisposals(timeout: 10))
        XCTAssertEqual(previous.playbin.currentState.current, .null)
    }

    func testTheFadesPipelinesPauseTogether() throws {
        let previous = try playing(try long)
        _ = try prepared(try long, Generation(2))
        queue.sync { crossfade.start(length: .seconds(8), from: previous) { current = $0.pipeline } }
        queue.sync { crossfade.hold(true) }
        XCTAssertEqual(previous.playbin.waitForState(timeout: .seconds(5)), .success)
        XCTAssertEqual(previous.playbin.currentState.current, .paused)
        let held = fade(of: previous)
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(fade(of: previous), held, "the ramp holds while paused")
        queue.sync { crossfade.hold(false) }
        XCTAssertEqual(previous.playbin.waitForState(timeout: .seconds(5)), .success)
        XCTAssertEqual(previous.playbin.currentState.current, .playing)
    }

    func testThePreviousItemsEndEndsTheFadeEarly() throws {
        let previous = try playing(try short)
        _ = try prepared(try long, Generation(2))
        let ended = expectation(description: "the fade ends")
        fadeEnded = { ended.fulfill() }  // not by the ramp: 10 s
        queue.sync { crossfade.start(length: .seconds(10), from: previous) { current = $0.pipeline } }
        let gone = expectation(description: "the previous pipeline let go")
        teardown.whenPipelinesReleased { gone.fulfill() }
        wait(for: [gone], timeout: 5)
        queue.sync { XCTAssertNil(crossfade.outgoing) }
        XCTAssertEqual(previous.playbin.currentState.current, .null)
        ended.isInverted = true
        wait(for: [ended], timeout: 0.1)
    }

    func testADroppedItemGoesToNull() throws {
        _ = try playing(try long)
        let next = try prepared(try short, Generation(2))
        queue.sync { crossfade.dropIncoming() }
        queue.sync { XCTAssertNil(crossfade.incoming) }
        XCTAssertTrue(teardown.waitForDisposals(timeout: 10))
        XCTAssertEqual(next.playbin.currentState.current, .null)
        XCTAssertTrue(next.busSource.isCancelled, "its held bus was resumed, then cancelled")
    }

    func testAStartWithNothingPreparedDoesNothing() throws {
        let previous = try playing(try long)
        var called = false
        queue.sync {
            crossfade.start(length: .seconds(1), from: previous) { _ in called = true }
            XCTAssertNil(crossfade.outgoing)
        }
        XCTAssertFalse(called)
        XCTAssertEqual(previous.playbin.currentState.current, .playing)
    }
}
