import Basics
import Dispatch
import Foundation
import GStreamer
import Logging
@testable import PlayerEngine
import XCTest

/// `PipelineTeardown`, the one owner of the pipelines on their way to NULL, on real `playbin`s: a
/// pipeline let go reaches NULL and is freed; at most `maximumTeardowns` go at once and the next
/// waits for a slot, at most its bound, saying so first; a kept pipeline comes back in NULL with its
/// bus still watched; `waitForDisposals` keeps its bound. A `playbin` whose URI is `appsrc://` and
/// that is asked for PAUSED never prerolls (nothing is pushed): its teardown takes the preroll wait.
final class PipelineTeardownTests: XCTestCase {
    let queue = DispatchQueue(label: "test.teardown")
    var logger: Logger {
        let logger = Logger.quiet
        return logger
    }

    /// What the teardown announced before its waits; guarded by `lock`.
    final class Announcements: @unchecked Sendable {
        let lock = Lock()
        var told: [(String, Duration)] = []
        var all: [(String, Duration)] { lock.withLock { told } }
    }

    override func setUp() {
        super.setUp()
        GStreamerEngine.prepareRegistry()
    }

    /// A playbin with a silent sink and its bus watched on `queue`, as the engine builds one;
    /// `stuck`: asked for PAUSED on a source that never sends anything, so its preroll never ends.
    func pipeline(stuck: Bool) throws -> EnginePipeline {
        let playbin = try Element(factory: "playbin", name: "test", isPipeline: true)
        playbin.set("audio-sink", try Element(factory: "fakesink"))
        playbin.set("video-sink", try Element(factory: "fakesink"))
        let bus = try XCTUnwrap(playbin.bus)
        let source = DispatchSource.makeReadSource(fileDescriptor: bus.fileDescriptor, queue: queue)
        let pipeline = EnginePipeline(playbin: playbin, kind: .playbin, gains: GainStages(stream: nil, front: nil, filter: nil),
                                      bus: bus, busSource: source)
        source.setEventHandler { [weak pipeline] in while pipeline?.bus.pop() != nil {} }
        source.setCancelHandler { withExtendedLifetime(pipeline) {} }
        source.resume()
        playbin.set("uri", "appsrc://")
        playbin.setState(stuck ? .paused : .ready)
        return pipeline
    }

    func teardown(maximum: Int = PipelineTeardown.maximumTeardowns, slotWait: TimeInterval = PipelineTeardown.teardownWait,
                  deviceWait: DispatchTimeInterval = PipelineTeardown.deviceWait,
                  prerollWait: Duration = PipelineTeardown.prerollWait) -> (PipelineTeardown, Announcements) {
        let teardown = PipelineTeardown(logger: logger, maximumTeardowns: maximum, teardownWait: slotWait,
                                        deviceWait: deviceWait, prerollWait: prerollWait)
        let announcements = Announcements()
        teardown.whenWaiting { what, bound in announcements.lock.withLock { announcements.told.append((what, bound)) } }
        return (teardown, announcements)
    }

    func testAPipelineLetGoReachesNullAndIsFreed() throws {
        let (teardown, announcements) = teardown()
        let released = expectation(description: "the last pipeline freed")
        teardown.whenPipelinesReleased { released.fulfill() }
        var pipeline: EnginePipeline? = try self.pipeline(stuck: false)
        weak let freed = pipeline
        let playbin = pipeline!.playbin
        queue.sync { teardown.letGo(pipeline!, exclusiveDevice: false) }
        pipeline = nil
        wait(for: [released], timeout: 10)
        XCTAssertTrue(teardown.waitForDisposals(timeout: 0))
        XCTAssertEqual(teardown.underWay, 0)
        XCTAssertEqual(playbin.currentState.current, .null)
        queue.sync {}  // the bus source's cancel handler, which held the other reference, has run
        XCTAssertNil(freed)
        XCTAssertTrue(announcements.all.isEmpty, "nothing to wait for: \(announcements.all)")
    }

    func testAtMostMaximumAtOnceAndTheNextWaitsItsBound() throws {
        let (teardown, announcements) = teardown(maximum: 2, slotWait: 0.5, prerollWait: .seconds(3))
        let stuck = try (0..<3).map { _ in try pipeline(stuck: true) }
        let start = ContinuousClock.now
        queue.sync {
            teardown.letGo(stuck[0], exclusiveDevice: false)
            teardown.letGo(stuck[1], exclusiveDevice: false)
        }
        XCTAssertLessThan(ContinuousClock.now - start, .milliseconds(400), "two slots: no wait")
        XCTAssertTrue(announcements.all.isEmpty)
        queue.sync { teardown.letGo(stuck[2], exclusiveDevice: false) }
        let waited = ContinuousClock.now - start
        XCTAssertGreaterThanOrEqual(waited, .milliseconds(480), "the third waits for a slot")
        XCTAssertLessThan(waited, .milliseconds(2500), "at most its bound: the first two still wait for their preroll")
        XCTAssertEqual(announcements.all.map(\.0), ["a pipeline's teardown"])
        XCTAssertEqual(announcements.all.first?.1, .milliseconds(500))
        XCTAssertEqual(teardown.underWay, 3, "past its bound, it goes on anyway")
        XCTAssertTrue(teardown.waitForDisposals(timeout: 15))
        for pipeline in stuck { XCTAssertEqual(pipeline.playbin.currentState.current, .null) }
    }

    func testTheNextTakesTheFirstSlotThatFrees() throws {
        let (teardown, announcements) = teardown(maximum: 1, slotWait: 10, prerollWait: .milliseconds(500))
        let first = try pipeline(stuck: true), second = try pipeline(stuck: false)
        let start = ContinuousClock.now
        queue.sync { teardown.letGo(first, exclusiveDevice: false) }
        queue.sync { teardown.letGo(second, exclusiveDevice: false) }
        let waited = ContinuousClock.now - start
        XCTAssertGreaterThanOrEqual(waited, .milliseconds(450), "the first's preroll wait")
        XCTAssertLessThan(waited, .seconds(5), "not its whole bound: the slot freed")
        XCTAssertEqual(announcements.all.map(\.0), ["a pipeline's teardown"])
        XCTAssertTrue(teardown.waitForDisposals(timeout: 10))
    }

    func testAKeptPipelineComesBackInNullWithItsBusWatched() throws {
        let (teardown, _) = teardown()
        let pipeline = try pipeline(stuck: false)
        let back = expectation(description: "handed back")
        let kept = Announcements()  // what was handed back, as a list of one
        queue.sync {
            teardown.letGo(pipeline, exclusiveDevice: false) { returned in
                XCTAssertTrue(returned === pipeline)
                XCTAssertEqual(returned.playbin.currentState.current, .null)
                XCTAssertFalse(returned.busSource.isCancelled, "a kept pipeline's bus stays watched")
                kept.lock.withLock { kept.told.append(("kept", .zero)) }
                back.fulfill()
            }
        }
        wait(for: [back], timeout: 10)
        XCTAssertTrue(teardown.waitForDisposals(timeout: 10))
        XCTAssertEqual(kept.all.count, 1)
        PipelineTeardown.free(pipeline)
        XCTAssertTrue(pipeline.busSource.isCancelled)
    }

    func testWaitForDisposalsKeepsItsBound() throws {
        let (teardown, _) = teardown(prerollWait: .seconds(3))
        let stuck = try pipeline(stuck: true)
        queue.sync { teardown.letGo(stuck, exclusiveDevice: false) }
        let start = ContinuousClock.now
        XCTAssertFalse(teardown.waitForDisposals(timeout: 0.3), "its preroll wait is not over")
        let waited = ContinuousClock.now - start
        XCTAssertGreaterThanOrEqual(waited, .milliseconds(280))
        XCTAssertLessThan(waited, .milliseconds(2000))
        XCTAssertTrue(teardown.waitForDisposals(timeout: 10))
        XCTAssertEqual(stuck.playbin.currentState.current, .null)
    }

    func testAnExclusiveDeviceIsWaitedForAtMostItsBoundAndSaidFirst() throws {
        let (teardown, announcements) = teardown(deviceWait: .milliseconds(300), prerollWait: .seconds(3))
        let stuck = try pipeline(stuck: true)
        let start = ContinuousClock.now
        queue.sync { teardown.letGo(stuck, exclusiveDevice: true) }
        let waited = ContinuousClock.now - start
        XCTAssertGreaterThanOrEqual(waited, .milliseconds(280), "the load waits for the device")
        XCTAssertLessThan(waited, .milliseconds(2000), "at most its bound, then goes on without it")
        XCTAssertEqual(announcements.all.map(\.0), ["the previous pipeline to let its device go"])
        XCTAssertEqual(announcements.all.first?.1, .milliseconds(300))
        XCTAssertTrue(teardown.waitForDisposals(timeout: 10))
    }
}
