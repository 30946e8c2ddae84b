import Foundation
import PlayerModel

/// Records a player's events and lets a test wait for one: waiting is on a condition that the
/// player's queue signals, never a sleep.
public final class EventRecorder: @unchecked Sendable {
    // @unchecked: `recording` is thread-safe; `subscription` is written once, in init.
    private let recording = Recording<PlayerEvent>()
    private var subscription: Subscription?

    public init(_ player: Player) {
        subscription = player.subscribe { [recording] event in recording.append(event) }
    }

    public var events: [PlayerEvent] { recording.all }

    /// Forgets what was recorded so far.
    public func reset() { recording.removeAll() }

    /// Waits until an event recorded at or after index `from` matches, and returns what `match` made of it.
    @discardableResult
    public func wait<T>(for what: String, from start: Int = 0, timeout: TimeInterval = 20,
                        _ match: (PlayerEvent) -> T?) throws -> T {
        try recording.wait(for: what, from: start, timeout: timeout, match)
    }

    public var count: Int { recording.count }
}

/// Events as they came, in order, from any thread, and a wait for one of them: on a condition the
/// recording thread signals, never a sleep.
public final class Recording<Event>: @unchecked Sendable {
    // @unchecked: `recorded` is guarded by `condition`.
    public struct Timeout: Error, CustomStringConvertible {
        public var what: String
        public var events: [Event]
        public var description: String { "timed out waiting for \(what); events: \(events)" }
    }

    private let condition = NSCondition()
    private var recorded: [Event] = []

    public init() {}

    public func append(_ event: Event) {
        condition.lock()
        recorded.append(event)
        condition.broadcast()
        condition.unlock()
    }

    public var all: [Event] {
        condition.lock()
        defer { condition.unlock() }
        return recorded
    }

    public var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return recorded.count
    }

    public func removeAll() {
        condition.lock()
        recorded.removeAll()
        condition.unlock()
    }

    /// Waits until an event recorded at or after index `from` matches, and returns what `match` made of it.
    public func wait<T>(for what: String, from start: Int = 0, timeout: TimeInterval = 20,
                        _ match: (Event) -> T?) throws -> T {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        var index = start
        while true {
            while index < recorded.count {
                if let value = match(recorded[index]) { return value }
                index += 1
            }
            if !condition.wait(until: deadline) { throw Timeout(what: what, events: recorded) }
        }
    }
}

extension PlayerEvent {
    public var timeControl: TimeControlStatus? {
        if case .timeControlStatusChanged(let status) = self { status } else { nil }
    }
    public var itemStatus: (ItemID, ItemStatus)? {
        if case .itemStatusChanged(let id, let status) = self { (id, status) } else { nil }
    }
    public var seekedPosition: Duration? {
        if case .seeked(let position) = self { position } else { nil }
    }
    public var playedToEnd: ItemID? {
        if case .playedToEnd(let id) = self { id } else { nil }
    }
    public var failure: (ItemID, ItemError)? {
        if case .itemFailed(let id, let error) = self { (id, error) } else { nil }
    }
    public var currentItem: Item?? {
        if case .currentItemChanged(let item) = self { .some(item) } else { nil }
    }
    public var metadata: (ItemID, Metadata)? {
        if case .metadataChanged(let id, let metadata) = self { (id, metadata) } else { nil }
    }
}
