import Foundation

/// What observers of a player hear. States arrive first with their current value when a
/// subscription starts (rule 1); moments (`seeked`, `playedToEnd`, `itemFailed`) only as they happen.
public enum PlayerEvent: Sendable, Equatable {
    case currentItemChanged(Item?)
    /// What changed in the queue: only the items added, removed or moved, so that an edit of a
    /// long queue costs its observers what it changed, not the whole list.
    case queueChanged(QueueChange)
    case itemStatusChanged(ItemID, ItemStatus)
    case timeControlStatusChanged(TimeControlStatus)
    case intentChanged(TransportIntent)
    case bufferingChanged(ItemID, percent: Int, loadedRanges: [TimeRange])
    case metadataChanged(ItemID, Metadata)
    case durationChanged(ItemID, Duration?)
    /// Whether the current item is live or seekable changed.
    case capabilitiesChanged(ItemID, isLive: Bool, isSeekable: Bool)
    case rateChanged(Double, RateChangeReason)
    case volumeChanged(Double, muted: Bool)
    case loopModeChanged(LoopMode)
    case shuffleChanged(Bool)
    /// The position jumped (a seek finished, a track looped), to this position.
    case seeked(Duration)
    case playedToEnd(ItemID)
    case itemFailed(ItemID, ItemError)
    /// The audio output failed while the current item played; the item stays and the player paused.
    case outputFailed(ItemError)
}

/// One change of the queue's order.
public enum QueueChange: Sendable, Equatable {
    /// The whole queue, in order: for a new subscriber (rule 1), and after `clear()` (empty).
    case replaced([ItemID])
    /// New items, in order, right after `after` (nil: at the start).
    case inserted([ItemID], after: ItemID?)
    /// Items taken out of the queue.
    case removed([ItemID])
    /// An item now right after `after` (nil: at the start).
    case moved(ItemID, after: ItemID?)
}

/// Errors a caller of the player gets for a request that cannot be carried out.
public struct PlayerError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case noSuchItem, noCurrentItem, rateOutOfRange, retryBudgetExhausted, nothingToRetry, queueFull
        /// A rate other than 1 on an item that cannot seek (a live stream, internet radio): rate
        /// changes are seeks, so it would be announced and never played.
        case rateNotSupported
    }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { message }
}

/// Keeps a subscription alive; `cancel()` or dropping it ends it.
public final class Subscription: @unchecked Sendable {
    // @unchecked: `onCancel` is guarded by `lock`, so two threads cancelling run it once.
    private let lock = NSLock()
    private var onCancel: (() -> Void)?
    init(_ onCancel: @escaping () -> Void) { self.onCancel = onCancel }
    public func cancel() {
        let body = lock.withLock { () -> (() -> Void)? in
            defer { onCancel = nil }
            return onCancel
        }
        body?()
    }
    deinit { cancel() }
}

/// How the player behaves.
public struct PlayerConfiguration: Sendable {
    /// After a failed item, go on with the next one.
    public var advanceOnFailure = true
    /// How often `retry()` may try one item again.
    public var maximumRetries = 3
    public var minimumRate = 0.25
    public var maximumRate = 4.0
    /// The most items the queue holds: a client that adds more gets an error, not a service that
    /// eats the machine's memory (a 10,000-element Enqueue of a folder is 10,000 folders).
    public var maximumQueueLength = 100_000
    public init() {}
}
