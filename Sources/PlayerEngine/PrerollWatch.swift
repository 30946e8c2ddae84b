import Dispatch

/// The stall timer of a local file's preroll, the one owner of it. A local file prerolls in
/// milliseconds; one that has not within `limit` is stuck: playbin3 1.22.0 now and then never
/// finishes a preroll under load (its typefind and multiqueue threads wait for each other; seen in
/// the engine tests on a busy machine, and trap 6 of the design brief). What then is the engine's
/// (`GStreamerEngine.prerollStalled`: the item is loaded once more on a fresh pipeline, then
/// failed). The timer exists only while a preroll is under way: ASYNC_DONE, a retire or a
/// crossfade's start cancels it. Confined to the engine's queue.
final class PrerollWatch {
    static let limit = DispatchTimeInterval.seconds(8)

    let limit: DispatchTimeInterval
    private let queue: DispatchQueue
    // A timer source, not asyncAfter: a cancelled source leaves libdispatch's timer heap at
    // once, while a cancelled asyncAfter work item still wakes the process when it falls due.
    private var timer: (any DispatchSourceTimer)?
    /// Counts the watches begun: a timer that fired as it was replaced is not the current one's.
    private var watches = 0

    /// `limit` is the engine's; tests give a shorter one.
    init(queue: DispatchQueue, limit: DispatchTimeInterval = PrerollWatch.limit) {
        self.queue = queue
        self.limit = limit
    }

    deinit { timer?.cancel() }

    /// A watch is under way.
    var isWatching: Bool { timer != nil }

    /// Watches a preroll that begins now, in place of the one watched before, if any: `stalled`
    /// runs on the queue once `limit` has passed without a `cancel`, and the watch is over then.
    func watch(_ stalled: @escaping () -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        cancel()
        watches += 1
        let watch = watches
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in
            guard let self, watch == watches, self.timer != nil else { return }
            cancel()
            stalled()
        }
        self.timer = timer
        timer.schedule(deadline: .now() + limit)
        timer.resume()
    }

    /// The preroll ended (or its pipeline went): no stall to tell.
    func cancel() {
        timer?.cancel()
        timer = nil
    }
}
