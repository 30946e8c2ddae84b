import Basics
import FoundationEssentials
import Synchronization

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
    /// Part of a playing item never came (an HLS segment that was not media): it played on from
    /// `at + length`, with that much missing.
    case gapSkipped(ItemID, at: Duration, length: Duration)
    /// The audio output failed while the current item played; the item stays and the player paused.
    case outputFailed(ItemError)
    /// The video or its window changed (`VideoState.swift`).
    case videoChanged(VideoState)
    /// Whether playback stops when the current item ends (`SleepTimer.swift`).
    case stopAfterCurrentChanged(Bool)
    /// The sleep timer was set, cancelled or ran out (nil: none).
    case sleepTimerChanged(SleepTimer?)
    /// ReplayGain, the equalizer or its presets changed (`AudioSettings.swift`).
    case audioChanged(AudioSettings)
    /// The chosen output or the devices listed changed (`Outputs.swift`).
    case outputsChanged(Outputs)
    /// Linear playback was turned on or off (`LinearPlayback.swift`).
    case linearPlaybackChanged(Bool)
    /// `ResumePlaces` was turned on or off (`KeptPlaces.swift`).
    case resumePlacesChanged(Bool)
    /// `NextByChapter` was turned on or off (`Chapters.swift`).
    case nextByChapterChanged(Bool)
    /// A moment: the place kept for an item became this (nil: forgotten), as it was
    /// left or played to its end (`KeptPlaces.swift`).
    case placeKept(PlaceChange)
    /// The engine read an item's chapters (`Chapters.swift`).
    case chaptersChanged(ItemID, [Chapter])
    /// The current item's current chapter changed (nil: none): as playback crossed a boundary, a
    /// seek, another item.
    case currentChapterChanged(Int?)
    /// The person dropped these (paths or URIs, in order) on the video window: whoever resolves
    /// URIs opens them as OpenUri would, the first playing now and the rest after it.
    case openRequested([String])
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
    public enum Code: String, Sendable, CaseIterable {
        case noSuchItem, noCurrentItem, rateOutOfRange, retryBudgetExhausted, nothingToRetry, queueFull
        /// A rate other than 1 on an item that cannot seek (a live stream, internet radio): rate
        /// changes are seeks, so it would be announced and never played.
        case rateNotSupported
        /// A seek, Next or a change of the rate while linear playback is on (`LinearPlayback.swift`).
        case linearPlayback
        /// GoToChapter with no chapters, or an index that is not one of them.
        case noSuchChapter
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
public final class Subscription: Sendable {
    /// Taken by the first `cancel`, so two threads cancelling run it once.
    private let onCancel: Mutex<(@Sendable () -> Void)?>
    init(_ onCancel: @escaping @Sendable () -> Void) { self.onCancel = Mutex(onCancel) }
    public func cancel() {
        let body = onCancel.withLock { onCancel in
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
    /// How a network item that played and then lost its connection is tried again.
    public var reconnect = ReconnectPolicy()
    /// Items longer than this keep their place when left (`KeptPlaces.swift`); 20 minutes,
    /// `TONEARM_RESUME_THRESHOLD` (seconds) for tests and for people who want another.
    public var resumeThreshold = KeptPlaces.defaultThreshold
    public init() {}

    /// `TONEARM_RESUME_THRESHOLD`: whole seconds, 0 to 86400; nil when it does not parse.
    public static func parseResumeThreshold(_ text: String) -> Duration? {
        guard let seconds = Int(text), (0...86_400).contains(seconds) else { return nil }
        return .seconds(seconds)
    }
}

/// A setting that does not parse, with a message naming it.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Reconnecting after a network item that had played failed with an error that can go away (a
/// dropped connection, a timeout, HTTP 5xx): the item is loaded again after a delay that doubles
/// from `firstDelay` up to `maximumDelay`, at most `attempts` times in a row, resuming where it was
/// when it can seek. A reconnect that then plays for `steadyAfter` starts the count again, so a
/// flaky network costs nothing while a dead one fails the item in bounded time (the defaults: 1,
/// 2, 4, 8, 16 and 16 s, about 47 s of trying).
public struct ReconnectPolicy: Sendable, Equatable {
    public var attempts = 6
    public var firstDelay: Duration = .seconds(1)
    public var maximumDelay: Duration = .seconds(16)
    public var steadyAfter: Duration = .seconds(60)
    /// A buffering pause whose percent does not move for this long counts as a lost connection.
    public var stallLimit: Duration = .seconds(30)
    public init(attempts: Int = 6, firstDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(16)) {
        self.attempts = attempts
        self.firstDelay = firstDelay
        self.maximumDelay = maximumDelay
    }

    /// The defaults, overridden by `TONEARM_RECONNECT_ATTEMPTS` (0 turns reconnecting off),
    /// `TONEARM_RECONNECT_DELAY`, `TONEARM_RECONNECT_MAX_DELAY` and `TONEARM_STALL_TIMEOUT`
    /// (seconds, fractions allowed).
    /// Throws a message naming the variable for a value that is not a number in range.
    public static func fromEnvironment(_ environment: [String: String]) throws(ConfigurationError) -> ReconnectPolicy {
        var policy = ReconnectPolicy()
        if let text = environment["TONEARM_RECONNECT_ATTEMPTS"] {
            policy.attempts = try parseAttempts(text, name: "TONEARM_RECONNECT_ATTEMPTS")
        }
        if let text = environment["TONEARM_RECONNECT_DELAY"] {
            policy.firstDelay = try parseSeconds(text, name: "TONEARM_RECONNECT_DELAY")
        }
        if let text = environment["TONEARM_RECONNECT_MAX_DELAY"] {
            policy.maximumDelay = try parseSeconds(text, name: "TONEARM_RECONNECT_MAX_DELAY")
        }
        if let text = environment["TONEARM_STALL_TIMEOUT"] {
            policy.stallLimit = try parseSeconds(text, name: "TONEARM_STALL_TIMEOUT")
        }
        return policy
    }

    /// A count of attempts, 0 to 1000.
    public static func parseAttempts(_ text: String, name: String) throws(ConfigurationError) -> Int {
        guard let value = Int(text.trimmingWhitespace()), (0...1000).contains(value) else {
            throw ConfigurationError("\(name) must be a whole number from 0 to 1000, not '\(text)'")
        }
        return value
    }

    /// Seconds, 0 to 3600, fractions allowed.
    public static func parseSeconds(_ text: String, name: String) throws(ConfigurationError) -> Duration {
        guard let value = Double(text.trimmingWhitespace()), value.isFinite, (0...3600).contains(value) else {
            throw ConfigurationError("\(name) must be a number of seconds from 0 to 3600, not '\(text)'")
        }
        return .milliseconds(Int64((value * 1000).rounded()))
    }

    /// The wait before attempt `attempt` (1, 2, ...).
    public func delay(before attempt: Int) -> Duration {
        var delay = max(firstDelay, .zero)
        for _ in 1..<max(attempt, 1) where delay < maximumDelay { delay = delay * 2 }
        return min(delay, max(maximumDelay, firstDelay))
    }
}
