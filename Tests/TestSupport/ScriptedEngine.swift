import Dispatch
import PlayerModel

/// An engine the test drives by hand: it records what the player asked and sends the events the
/// test scripts. For unit tests of the player's rules only.
public final class ScriptedEngine: PlaybackEngine, @unchecked Sendable {
    public enum Call: Equatable, Sendable {
        case load(MediaURI, Generation)
        case prepareNext(MediaURI?, Generation?)
        case setPlaying(Bool)
        case stop
        case seek(Duration, SeekMode, Double)
        case volume(Double)
        case muted(Bool)
    }

    public var eventHandler: ((Generation, EngineEvent) -> Void)?
    public private(set) var calls: [Call] = []
    public var failingChecks: [MediaURI: ItemError] = [:]
    public var position: Duration? = .zero
    public var duration: Duration? = .seconds(10)
    public var isSeekable = true
    public var acceptsSeeks = true
    public private(set) var generation: Generation?
    public private(set) var nextGeneration: Generation?

    /// The player's queue: scripted events are delivered on it, as the real engine's are.
    public let queue: DispatchQueue

    public init(queue: DispatchQueue) { self.queue = queue }

    public func check(_ uri: MediaURI) -> ItemError? { failingChecks[uri] }
    public func load(_ uri: MediaURI, generation: Generation) {
        self.generation = generation
        calls.append(.load(uri, generation))
    }
    public func prepareNext(_ uri: MediaURI?, generation: Generation?) {
        nextGeneration = generation
        calls.append(.prepareNext(uri, generation))
    }
    public func setPlaying(_ playing: Bool) { calls.append(.setPlaying(playing)) }
    public func stop() {
        generation = nil
        calls.append(.stop)
    }
    public func seek(to position: Duration, mode: SeekMode, rate: Double) -> Bool {
        calls.append(.seek(position, mode, rate))
        return acceptsSeeks
    }
    public func loadedRanges(duration: Duration?) -> [TimeRange] {
        duration.map { [TimeRange(start: .zero, end: $0)] } ?? []
    }
    public func setVolume(_ volume: Double) { calls.append(.volume(volume)) }
    public func setMuted(_ muted: Bool) { calls.append(.muted(muted)) }

    /// Sends an event as the current load (or an explicit generation).
    public func send(_ event: EngineEvent, generation: Generation? = nil) {
        queue.sync { eventHandler?(generation ?? self.generation ?? Generation(0), event) }
    }

    /// Preroll: the stream reaches the sinks, PAUSED, ASYNC_DONE.
    public func preroll() {
        send(.streamStarted)
        send(.stateChanged(.paused, pending: nil))
        send(.asyncDone)
    }

    public func clearCalls() { calls.removeAll() }
}
