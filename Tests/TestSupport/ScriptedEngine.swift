import Dispatch
import Foundation
import PlayerModel

/// An engine the test drives by hand: it records what the player asked and sends the events the
/// test scripts, filled in from the pipeline it pretends to have (`position`, `duration`,
/// `isSeekable`). For unit tests of the player's rules only.
public final class ScriptedEngine: PlaybackEngine, @unchecked Sendable {
    // @unchecked: `calls` and the generations are written by `perform`, which the player calls on
    // its queue, and read by the test after `send` or a player call synchronized with that queue.
    public enum Call: Equatable, Sendable {
        case load(MediaURI, Generation)
        case prepareNext(MediaURI?, Generation?)
        case setPlaying(Bool)
        case stop
        case seek(Duration, SeekMode, Double)
        case volume(Double)
        case muted(Bool)
    }

    /// The events a test sends; the engine adds what a real one would have asked of the pipeline.
    public enum Scripted: Sendable {
        case stateChanged(PipelineState, pending: PipelineState?)
        case asyncDone
        case streamStarted
        case live
        case endOfStream
        case failed(ItemError)
        case tags(Metadata)
        case buffering(percent: Int)
        case durationChanged(Duration?)
        case requestState(PipelineState)
        case seekRefused
        case gap(at: Duration, length: Duration)
        case loaded([TimeRange])
    }

    private var eventHandler: (@Sendable (Generation, EngineEvent) -> Void)?
    public private(set) var calls: [Call] = []
    /// Loads of these URIs fail at once with the error, as the real engine's check of a missing file.
    public var failingChecks: [MediaURI: ItemError] = [:]
    public var position: Duration? = .zero
    public var duration: Duration? = .seconds(10)
    public var isSeekable = true
    /// The SEEKING query's range in the snapshots (a live playlist's window).
    public var seekableRange: TimeRange?
    public var acceptsSeeks = true
    public private(set) var generation: Generation?
    public private(set) var nextGeneration: Generation?

    /// The player's queue: `send` waits until the player handled the event.
    public let queue: DispatchQueue

    public init(queue: DispatchQueue) { self.queue = queue }

    public func setEventHandler(_ handler: @escaping @Sendable (Generation, EngineEvent) -> Void) {
        eventHandler = handler
    }

    public func perform(_ command: EngineCommand) {
        switch command {
        case .load(let uri, let generation):
            self.generation = generation
            if let error = failingChecks[uri] {
                eventHandler?(generation, .failed(error))
            } else {
                calls.append(.load(uri, generation))
            }
        case .prepareNext(let uri, let generation):
            nextGeneration = generation
            calls.append(.prepareNext(uri, generation))
        case .setPlaying(let playing):
            calls.append(.setPlaying(playing))
        case .release:
            generation = nil
            calls.append(.stop)
        case .seek(let target, let mode, let rate):
            let position: Duration = switch target {
            case .position(let position): position
            case .current: self.position ?? .zero
            }
            calls.append(.seek(position, mode, rate))
            if !acceptsSeeks, let generation { eventHandler?(generation, .seekRefused) }
        case .setVolume(let volume):
            calls.append(.volume(volume))
        case .setMuted(let muted):
            calls.append(.muted(muted))
        }
    }

    private var snapshot: EngineSnapshot {
        EngineSnapshot(position: position.map { PositionSample($0) }, duration: duration, isSeekable: isSeekable,
                       loadedRanges: duration.map { [TimeRange(start: .zero, end: $0)] } ?? [], seekableRange: seekableRange)
    }

    /// Sends an event as the current load (or an explicit generation) and waits until the player
    /// handled it.
    public func send(_ scripted: Scripted, generation: Generation? = nil) {
        let event: EngineEvent = switch scripted {
        case .stateChanged(let state, let pending): .stateChanged(state, pending: pending, position: position.map { PositionSample($0) })
        case .asyncDone: .asyncDone(snapshot)
        case .streamStarted: .streamStarted(snapshot)
        case .live: .live
        case .endOfStream: .endOfStream
        case .failed(let error): .failed(error)
        case .tags(let metadata): .tags(metadata)
        case .buffering(let percent): .buffering(percent: percent, loadedRanges: snapshot.loadedRanges)
        case .durationChanged(let duration): .durationChanged(duration)
        case .requestState(let state): .requestState(state)
        case .seekRefused: .seekRefused
        case .gap(let at, let length): .gap(at: at, length: length)
        case .loaded(let ranges): .loaded(ranges)
        }
        let target = queue.sync { generation ?? self.generation ?? Generation(0) }
        eventHandler?(target, event)
        queue.sync {}
    }

    /// Preroll: the stream reaches the sinks, PAUSED, ASYNC_DONE.
    public func preroll() {
        send(.streamStarted)
        send(.stateChanged(.paused, pending: nil))
        send(.asyncDone)
    }

    public func clearCalls() { queue.sync { calls.removeAll() } }
}
