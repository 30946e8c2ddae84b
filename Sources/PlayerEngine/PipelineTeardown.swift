import Basics
import Dispatch
import FoundationEssentials
import GStreamer
import Logging

/// The one owner of the pipelines on their way to NULL: each goes there on a `tonearm.dispose`
/// thread of its own (that state change waits for every streaming thread, which can block for good
/// on 1.22.0: see `EnginePipeline`), at most `maximumTeardowns` at once; a retire waits for a slot
/// (at most `teardownWait`), and a load waits for the previous pipeline to let go of a device only
/// one pipeline can open (at most `deviceWait`), each wait announced first (`whenWaiting`: the
/// engine link's watchdog gives the queue that long). A pipeline kept warm comes back from its
/// thread once in NULL instead of being freed. `letGo` runs on the engine's queue; the rest may be
/// called from any thread.
final class PipelineTeardown: @unchecked Sendable {
    // @unchecked: `disposing`, `whenReleased` and `waitingHandler` are guarded by `teardown`; the
    // rest is immutable.
    /// At most this many retired pipelines go to NULL at once; a retire waits for one of them (on
    /// the engine queue, at most `teardownWait`). A client switching items faster than pipelines
    /// stop then has its loads skipped (see `perform`) instead of piling up pipelines, threads and
    /// buffers (make fuzz's memory check, which skipping through items at full speed exercises).
    static let maximumTeardowns = 4
    static let teardownWait: TimeInterval = 3
    /// How long a load waits for the previous pipeline to reach NULL before it goes on without it,
    /// when the output is an ALSA device that only one pipeline can open; a sound server
    /// (PulseAudio, PipeWire) or a fake sink takes a second stream at once, so nothing waits.
    static let deviceWait = DispatchTimeInterval.seconds(2)
    /// How long a dispose thread waits for a preroll under way before it takes the pipeline to NULL
    /// (see `stop`).
    static let prerollWait = Duration.seconds(3)

    let maximumTeardowns: Int
    let teardownWait: TimeInterval
    let deviceWait: DispatchTimeInterval
    let prerollWait: Duration
    private let logger: Logger
    /// Pipelines on their way to NULL, and what runs when the last of them is freed; guarded by
    /// `teardown`, which a retire waits on while `maximumTeardowns` are under way.
    private let teardown = Condition()
    private var disposing = 0
    private var whenReleased: (@Sendable () -> Void)?
    /// See `whenWaiting`; guarded by `teardown`.
    private var waitingHandler: (@Sendable (String, Duration) -> Void)?

    /// The bounds are the engine's; tests give shorter ones.
    init(logger: Logger, maximumTeardowns: Int = PipelineTeardown.maximumTeardowns,
         teardownWait: TimeInterval = PipelineTeardown.teardownWait, deviceWait: DispatchTimeInterval = PipelineTeardown.deviceWait,
         prerollWait: Duration = PipelineTeardown.prerollWait) {
        self.logger = logger
        self.maximumTeardowns = maximumTeardowns
        self.teardownWait = teardownWait
        self.deviceWait = deviceWait
        self.prerollWait = prerollWait
    }

    /// How many pipelines are on their way to NULL now, for tests.
    var underWay: Int { teardown.withLock { disposing } }

    /// Runs `action` on a teardown thread each time the last retired pipeline has been freed.
    func whenPipelinesReleased(_ action: @escaping @Sendable () -> Void) {
        teardown.withLock { whenReleased = action }
    }

    /// Runs `body` (on the thread of `letGo`, the engine's queue) before it waits for something
    /// that may take a while, with what and for how long at most.
    func whenWaiting(_ body: @escaping @Sendable (_ what: String, _ bound: Duration) -> Void) {
        teardown.withLock { waitingHandler = body }
    }

    private func tellWaiting(_ what: String, _ bound: Duration) {
        teardown.withLock { waitingHandler }?(what, bound)
    }

    /// Waits until every pipeline let go of reached NULL and was freed or kept (its device and
    /// files released either way), at most `timeout`; false when one has not.
    func waitForDisposals(timeout: TimeInterval) -> Bool {
        teardown.withLock {
            let deadline = ContinuousClock.now + .seconds(timeout)
            while disposing > 0 && teardown.wait(until: deadline) {}
            return disposing == 0
        }
    }

    /// Takes `pipeline` to NULL on a thread of its own (see `dispose`), counted among the teardowns
    /// under way: waits for a slot while `maximumTeardowns` are. `exclusiveDevice`: the output is
    /// one only one pipeline can open (an ALSA device), and the caller waits for this one to let
    /// go of it. With `keep`, see `dispose`.
    func letGo(_ pipeline: EnginePipeline, exclusiveDevice: Bool, keep: (@Sendable (EnginePipeline) -> Void)? = nil) {
        if teardown.withLock({ disposing >= maximumTeardowns }) { tellWaiting("a pipeline's teardown", .milliseconds(Int64(teardownWait * 1000))) }
        teardown.withLock {
            let deadline = ContinuousClock.now + .seconds(teardownWait)
            while disposing >= maximumTeardowns && teardown.wait(until: deadline) {}
            disposing += 1
        }
        // snapserver reads one connection of its TCP source at a time (tcp_stream.cpp accepts the
        // next when one ends): the next pipeline's would wait behind this one's. An ximagesink
        // closing its display while the next one opens its own crashed the process in libXext
        // (XextAddDisplay, MIT-SHM's per-display list, on 1 video switch in 15, either sink): the
        // next one opens once this one is in NULL
        let waits = exclusiveDevice || pipeline.toSnapcast || pipeline.drawsWithXShm
        if waits { tellWaiting("the previous pipeline to let its device go", Self.duration(deviceWait)) }
        Self.dispose(pipeline, wait: waits ? deviceWait : nil, prerollWait: prerollWait,
                     logger: logger, keep: keep) { [weak self] in
            guard let self else { return }
            let action = teardown.withLock {
                disposing -= 1
                teardown.broadcast()  // a retire waiting for a slot, or waitForDisposals
                return disposing == 0 ? whenReleased : nil
            }
            action?()
        }
    }

    /// Stops watching `pipeline`'s bus and takes it to NULL on a thread of its own, waiting at
    /// most `wait` for that (nil: not at all). Gives up on a pipeline whose streaming threads never
    /// stop, rather than wedging the engine. With `keep`, the pipeline is handed to it once in
    /// NULL, its bus still watched and its signals connected, instead of being freed; a pipeline
    /// that did not reach NULL is freed. Not counted among the teardowns (the engine's deinit).
    static func dispose(_ pipeline: EnginePipeline, wait: DispatchTimeInterval?, prerollWait: Duration = prerollWait,
                        logger: Logger? = nil, keep: (@Sendable (EnginePipeline) -> Void)? = nil,
                        released: (@Sendable () -> Void)? = nil) {
        pipeline.lock.withLock {
            pipeline.nextUp = nil
            pipeline.switching = nil
            pipeline.awaitedSeek = nil
        }
        // the messages of its way down are of no one's interest: they are dropped as they are
        // posted, rather than wake the engine's queue (a kept pipeline's bus stays watched)
        pipeline.bus.setFlushing(true)
        if keep == nil { pipeline.busSource.cancel() }
        let done = DispatchSemaphore(value: 0)
        // the thread holds the pipeline through a box it empties, so the pipeline is freed before
        // `released` runs (the bus source's cancel handler, on the engine queue, holds the other)
        let held = Held(pipeline)
        detachThread(name: "tonearm.dispose") {
            stop(held, done: done, prerollWait: prerollWait, keep: keep)  // the pipeline's last reference goes when this returns
            released?()
        }
        if let wait, done.wait(timeout: .now() + wait) == .timedOut {
            logger?.warning("the previous pipeline did not stop within \(wait); going on without it")
        }
    }

    private static func stop(_ held: Held, done: DispatchSemaphore, prerollWait: Duration,
                             keep: (@Sendable (EnginePipeline) -> Void)? = nil) {
        guard let pipeline = held.take() else { return }
        // a pipeline still autoplugging deadlocks on its way to NULL with 1.22.0: the
        // typefind thread waits in decodebin for a lock the state change holds, while the
        // change waits for that thread's stream lock (seen by make fuzz on fast item switches).
        // Letting the preroll finish (or fail) first avoids it.
        // The streaming threads are parked first (PAUSED and prerolled: they wait in the sink),
        // so no buffer is in a playbin pad probe when NULL removes the decoder's pads: with both
        // playbins on 1.22.0, the pad-removed handler waits for a lock a buffer probe holds while
        // that probe waits for the lock the state change holds (make fuzz --seed 7, 40,000
        // calls: five dispose threads stuck for good, with their pipelines).
        // Only a pipeline that reached PAUSED is asked for PAUSED: one below it (a preroll under
        // way, or one that an error aborted) is waited for, never asked again. Asking again runs
        // playbin3's READY_TO_PAUSED a second time, whose gst_play_bin3_start zeroes the active
        // stream types while the playsink pad of the first preroll is still held; the next decoded
        // pad then aborts on a multiqueue thread (gstplaybin3.c 1.22.0:2608 reconfigure_output:
        // assertion failed: (combine->sinkpad == NULL); the same abort in
        // strawberrymusicplayer/strawberry#1617). Seen when an HLS segment's 404 failed the item
        // during its preroll: 1 teardown in 6 aborted tonearmd.
        let (current, _) = pipeline.playbin.currentState
        if current == .paused || current == .playing { pipeline.playbin.setState(.paused) }
        pipeline.playbin.waitForState(timeout: prerollWait)
        pipeline.playbin.setState(.null)
        if let keep, pipeline.playbin.currentState.current == .null {
            keep(pipeline)
        } else {
            if keep != nil { pipeline.busSource.cancel() }
            disconnectSignals(of: pipeline)
        }
        done.signal()
    }

    private static func duration(_ interval: DispatchTimeInterval) -> Duration {
        switch interval {
        case .seconds(let seconds): .seconds(seconds)
        case .milliseconds(let milliseconds): .milliseconds(milliseconds)
        case .microseconds(let microseconds): .microseconds(microseconds)
        case .nanoseconds(let nanoseconds): .nanoseconds(nanoseconds)
        default: .seconds(Int64.max / 2)  // .never: no bound
        }
    }

    /// A pipeline handed back to `keep` and not kept after all: its bus is no longer watched and its
    /// signals are disconnected, so that it is freed with its last reference.
    static func free(_ kept: EnginePipeline) {
        kept.busSource.cancel()
        disconnectSignals(of: kept)
    }

    private static func disconnectSignals(of pipeline: EnginePipeline) {
        // in NULL no streaming thread emits about-to-finish any more
        pipeline.aboutToFinish?.disconnect()
        pipeline.sourceSetup?.disconnect()
    }
}
