import Foundation

/// A clock that moves only when a test says so: handed to `Player` (and to the scripted engine, so
/// that its position samples are on the same clock), it makes time an input the test controls.
public final class TestClock: @unchecked Sendable {
    // @unchecked: `current` is guarded by `lock`; the player reads it on its queue, the test moves it.
    private let lock = NSLock()
    private var current = ContinuousClock.now

    public init() {}

    public var now: ContinuousClock.Instant { lock.withLock { current } }

    public func advance(by duration: Duration) { lock.withLock { current += duration } }

    /// What `Player(clock:)` and `ScriptedEngine.clock` take.
    public var read: @Sendable () -> ContinuousClock.Instant { { [self] in now } }
}
