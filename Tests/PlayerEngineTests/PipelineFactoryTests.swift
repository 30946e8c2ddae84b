import Basics
import Dispatch
import EngineLink
import Foundation
import GStreamer
import Logging
@testable import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

/// `PipelineFactory`, the one owner of building and keeping pipelines, on real playbins with a
/// silent sink (`fakesink sync=true`, as the engine tests configure) and a real `AudioOutputs`,
/// `OutputLevels`, `VideoOutput` and `PipelineTeardown`: a built pipeline has the stages it should;
/// a legacy playbin given back after its preroll is kept and handed out again for its kind, not
/// for the other; a playbin3, a pipeline that did not preroll, or one given back while the engine
/// has another, is not kept; what is not kept reaches NULL.
final class PipelineFactoryTests: XCTestCase {
    let queue = DispatchQueue(label: "test.pipelines")
    var teardown: PipelineTeardown!
    var factory: PipelineFactory!
    /// What the engine would say of its current pipeline (`hasCurrent`); confined to `queue`.
    var engineHasPipeline = false
    var outputs: AudioOutputs!
    var levels: OutputLevels!
    var video: VideoOutput!
    /// A tone, made once for the class (the generator keeps it while it lives).
    static let tone = Result { () throws -> (media: MediaGenerator, url: URL) in
        let media = try MediaGenerator()
        return (media, try media.tone("factory", format: .wav, seconds: 2))
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        GStreamerEngine.prepareRegistry()
        let logger = Logger.quiet
        let configuration = EngineConfiguration(pipeline: .playbin, audioSink: "fakesink sync=true", video: false)
        teardown = PipelineTeardown(logger: logger)
        try queue.sync {
            outputs = AudioOutputs(configuration: configuration, queue: queue, logger: logger, tell: { _ in }, sinks: { [] })
            let sink = try outputs.setUp()
            levels = OutputLevels(queue: queue, logger: logger, pipelines: { (nil, nil, nil) }, sliderMoved: { _, _ in },
                                  crossfadeEnded: {})
            video = VideoOutput(queue: queue, logger: logger, configuredSink: "ximagesink", helper: "/nonexistent/tonearm-video",
                                teardown: teardown, current: { _ in }, tell: { _ in })
            factory = PipelineFactory(configuration: configuration, queue: queue, logger: logger, outputs: outputs,
                                      levels: levels, video: video, teardown: teardown, owner: self,
                                      hasCurrent: { [unowned self] in engineHasPipeline },
                                      drain: { pipeline in while pipeline.bus.pop() != nil {} }, seekDone: { _, _, _ in })
            factory.setUp(exclusiveDevice: sink.exclusive)
        }
    }

    override func tearDown() {
        queue.sync {
            factory?.dropWarm()
            factory = nil
        }
        XCTAssertTrue(teardown.waitForDisposals(timeout: 10))
        super.tearDown()
    }

    /// A pipeline of `kind` from the factory, prerolled on the tone (bounded), as a load leaves it.
    func prerolled(_ kind: EngineConfiguration.PipelineKind) throws -> EnginePipeline {
        let url = try Self.tone.get().url
        let pipeline = try queue.sync { try factory.forLoad(kind) }
        pipeline.playbin.set("uri", url.absoluteString)
        pipeline.playbin.setState(.paused)
        XCTAssertEqual(pipeline.playbin.waitForState(timeout: .seconds(10)), .success, "\(kind) prerolls")
        XCTAssertEqual(pipeline.playbin.currentState.current, .paused)
        return pipeline
    }

    /// Gives `pipeline` back and waits (bounded) until it reached NULL and was kept or freed;
    /// returns what is kept warm then.
    func giveBack(_ pipeline: EnginePipeline, keepingWarm: Bool) -> EnginePipeline? {
        queue.sync { factory.giveBack(pipeline, keepingWarm: keepingWarm) }
        XCTAssertTrue(teardown.waitForDisposals(timeout: 10), "the teardown finished")
        XCTAssertEqual(pipeline.playbin.currentState.current, .null)
        return queue.sync { factory.warm }  // a kept pipeline's adoption was queued before its teardown ended
    }

    func testABuiltPipelineHasItsSinkFilterAndGainStages() throws {
        let (pipeline, built) = try queue.sync {
            factory.equalizer = [3] + [Double](repeating: 0, count: 9)
            return (try factory.make(.playbin), factory.built)
        }
        XCTAssertEqual(built, 1)
        XCTAssertEqual(pipeline.kind, .playbin)
        XCTAssertEqual(pipeline.playbin.factoryName, "playbin")
        XCTAssertEqual(pipeline.gains.front?.name, "tonearm-fade", "the volume in front of the sink")
        XCTAssertEqual(pipeline.gains.front?.factoryName, "volume")
        XCTAssertNil(pipeline.gains.stream, "no pulsesink on this path")
        XCTAssertEqual(pipeline.gains.filter?.name, "tonearm-volume", "the filter's volume, ReplayGain's stage")
        XCTAssertEqual(pipeline.stages?.filterElements.sorted(), ["equalizer-10bands", "scaletempo", "volume"],
                       "scaletempo, the equalizer as last asked, the volume")
        XCTAssertEqual(pipeline.playbin.flags("flags") & 0x10, 0, "playbin's soft volume is off")
        XCTAssertFalse(pipeline.busSource.isCancelled, "its bus is watched")
        XCTAssertFalse(pipeline.toSnapcast)
        let playbin3 = try queue.sync { try factory.make(.playbin3) }
        XCTAssertEqual(playbin3.playbin.factoryName, "playbin3")
        XCTAssertEqual(playbin3.stages?.filterElements.sorted(), ["equalizer-10bands", "scaletempo", "volume"])
        XCTAssertEqual(queue.sync { factory.built }, 2)
        queue.sync {
            factory.giveBack(pipeline, keepingWarm: false)
            factory.giveBack(playbin3, keepingWarm: false)
        }
    }

    func testAKeptPlaybinIsHandedOutAgainForItsKindWithAFreshFilter() throws {
        let first = try prerolled(.playbin)
        let oldFilter = try XCTUnwrap(first.gains.filter)
        let kept = giveBack(first, keepingWarm: true)
        XCTAssertTrue(kept === first, "a legacy playbin that prerolled is kept")
        XCTAssertFalse(first.busSource.isCancelled, "a kept pipeline's bus stays watched")
        XCTAssertFalse(first.gains.filter === oldFilter, "it got the next load's filter when it was kept")
        let (again, built) = try queue.sync { (try factory.forLoad(.playbin), factory.built) }
        XCTAssertTrue(again === first, "handed out again for its kind")
        XCTAssertEqual(built, 1, "nothing built")
        XCTAssertNil(queue.sync { factory.warm })
        // it plays again: its bus was set flushing for its teardown, and is no longer
        let url = try Self.tone.get().url
        again.playbin.set("uri", url.absoluteString)
        again.playbin.setState(.paused)
        XCTAssertEqual(again.playbin.waitForState(timeout: .seconds(10)), .success)
        XCTAssertNil(giveBack(again, keepingWarm: false), "a load's retire keeps nothing")
    }

    func testAKeptPlaybinIsNotHandedOutForTheOtherKindAndIsLetGo() throws {
        let first = try prerolled(.playbin)
        XCTAssertTrue(giveBack(first, keepingWarm: true) === first)
        let other = try queue.sync { try factory.forLoad(.playbin3) }
        XCTAssertFalse(other === first)
        XCTAssertEqual(other.kind, .playbin3)
        XCTAssertEqual(queue.sync { factory.built }, 2, "a new one built")
        XCTAssertNil(queue.sync { factory.warm }, "the kept one was let go")
        XCTAssertTrue(teardown.waitForDisposals(timeout: 10))
        queue.sync {}  // its bus source's cancel handler has run
        XCTAssertTrue(first.busSource.isCancelled, "freed: its bus no longer watched")
        queue.sync { factory.giveBack(other, keepingWarm: false) }
    }

    func testAPlaybin3IsNeverKept() throws {
        let pipeline = try prerolled(.playbin3)
        XCTAssertNil(giveBack(pipeline, keepingWarm: true))
        XCTAssertTrue(pipeline.busSource.isCancelled)
    }

    func testAPipelineThatDidNotPrerollIsNotKept() throws {
        let pipeline = try queue.sync { try factory.forLoad(.playbin) }
        pipeline.playbin.setState(.ready)
        XCTAssertNil(giveBack(pipeline, keepingWarm: true))
    }

    func testAPipelineBackWhileTheEngineHasAnotherIsFreed() throws {
        let pipeline = try prerolled(.playbin)
        queue.sync { engineHasPipeline = true }  // a load came while it went to NULL
        XCTAssertNil(giveBack(pipeline, keepingWarm: true))
        queue.sync {}
        XCTAssertTrue(pipeline.busSource.isCancelled, "freed")
    }

    func testDropWarmLetsTheKeptOneGo() throws {
        let first = try prerolled(.playbin)
        XCTAssertTrue(giveBack(first, keepingWarm: true) === first)
        queue.sync { factory.dropWarm() }
        XCTAssertNil(queue.sync { factory.warm })
        XCTAssertTrue(teardown.waitForDisposals(timeout: 10))
        queue.sync {}
        XCTAssertTrue(first.busSource.isCancelled)
        XCTAssertEqual(first.playbin.currentState.current, .null)
    }
}
