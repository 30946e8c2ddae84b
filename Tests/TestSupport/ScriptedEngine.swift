import Dispatch
import Foundation
import PlayerModel

/// An engine the test drives by hand: it records what the player asked and sends the events the
/// test scripts, filled in from the pipeline it pretends to have (`position`, `duration`,
/// `isSeekable`). For unit tests of the player's rules only.
public final class ScriptedEngine: PlaybackEngine, @unchecked Sendable {
    // @unchecked: `recorded` and the generations are written by `perform`, which the player calls on
    // its queue, and read by the test through that queue.
    public enum Call: Equatable, Sendable {
        case load(MediaURI, Generation)
        case prepareNext(MediaURI?, Generation?)
        case setPlaying(Bool)
        case playAfterPreroll(Bool)
        case stop
        case seek(Duration, SeekMode, Double)
        case volume(Double)
        case muted(Bool)
        case video(VideoCommand)
        case fade(Double, over: Duration)
        case audio(AudioCommand)
        case output(String)
        case crossfade(CrossfadeCommand)
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
        /// The window's events (`EngineEvent.video`).
        case video(VideoEvent)
        /// The ASYNC_DONE of an exact seek, handed over at `position` (`EngineEvent.seekDone`).
        case seekDone(Duration)
        case gap(at: Duration, length: Duration)
        case loaded([TimeRange])
    }

    private var eventHandler: (@Sendable (Generation, EngineEvent) -> Void)?
    private var recorded: [Call] = []
    /// What the player asked so far. The player hands the engine an input's commands on the next
    /// turn of its queue, so this reads after that turn (off the queue only).
    public var calls: [Call] { queue.sync { recorded } }
    /// Loads of these URIs fail at once with the error, as the real engine's check of a missing file.
    public var failingChecks: [MediaURI: ItemError] = [:]
    public var position: Duration? = .zero
    public var duration: Duration? = .seconds(10)
    public var isSeekable = true
    /// The SEEKING query's range in the snapshots (a live playlist's window).
    public var seekableRange: TimeRange?
    public var acceptsSeeks = true
    /// When its position samples are taken: the player's clock (`TestClock.read` when a test moves it).
    public var clock: @Sendable () -> ContinuousClock.Instant = { .now }
    private var loaded: Generation?
    private var preparedNext: Generation?
    /// The current load's and the prepared next item's generations, read like `calls`.
    public var generation: Generation? { queue.sync { loaded } }
    public var nextGeneration: Generation? { queue.sync { preparedNext } }

    /// The player's queue: `send` waits until the player handled the event.
    public let queue: DispatchQueue

    public init(queue: DispatchQueue) { self.queue = queue }

    public func setEventHandler(_ handler: @escaping @Sendable (Generation, EngineEvent) -> Void) {
        eventHandler = handler
    }

    public func perform(_ command: EngineCommand) {
        switch command {
        case .load(let uri, let generation):
            loaded = generation
            if let error = failingChecks[uri] {
                eventHandler?(generation, .failed(error))
            } else {
                recorded.append(.load(uri, generation))
            }
        case .prepareNext(let uri, let generation):
            preparedNext = generation
            recorded.append(.prepareNext(uri, generation))
        case .setPlaying(let playing):
            recorded.append(.setPlaying(playing))
        case .playAfterPreroll(let play):
            recorded.append(.playAfterPreroll(play))
        case .release:
            loaded = nil
            recorded.append(.stop)
        case .seek(let target, let mode, let rate):
            let position: Duration = switch target {
            case .position(let position): position
            case .current: self.position ?? .zero
            }
            recorded.append(.seek(position, mode, rate))
            if !acceptsSeeks, let loaded {
                eventHandler?(loaded, .seekRefused)
            } else if self.position != nil {
                // the pipeline is where it went: what it reports next is from there (EngineContractTests)
                self.position = position
            }
        case .setVolume(let volume):
            recorded.append(.volume(volume))
        case .setMuted(let muted):
            recorded.append(.muted(muted))
        case .fade(let target, let length):
            recorded.append(.fade(target, over: length))
        case .video(let command):
            recorded.append(.video(command))
        case .audio(let command):
            recorded.append(.audio(command))
        case .setOutput(let id):
            recorded.append(.output(id))
        case .crossfade(let command):
            recorded.append(.crossfade(command))
        }
    }

    private var snapshot: EngineSnapshot {
        EngineSnapshot(position: position.map { PositionSample($0, at: clock()) }, duration: duration, isSeekable: isSeekable,
                       loadedRanges: duration.map { [TimeRange(start: .zero, end: $0)] } ?? [], seekableRange: seekableRange)
    }

    /// Sends an event as the current load (or an explicit generation) and waits until the player
    /// handled it.
    public func send(_ scripted: Scripted, generation: Generation? = nil) {
        let event: EngineEvent = switch scripted {
        case .stateChanged(let state, let pending): .stateChanged(state, pending: pending, position: position.map { PositionSample($0, at: clock()) })
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
        case .video(let event): .video(event)
        case .seekDone(let position): .seekDone(PositionSample(position, at: clock()))
        case .gap(let at, let length): .gap(at: at, length: length)
        case .loaded(let ranges): .loaded(ranges)
        }
        let target = queue.sync { generation ?? loaded ?? Generation(0) }
        eventHandler?(target, event)
        queue.sync {}
    }

    /// The seek in flight lands: the ASYNC_DONE of an exact seek, handed over at its target.
    public func finishSeek() {
        send(.seekDone(queue.sync { position ?? .zero }))
    }

    /// Preroll: the stream reaches the sinks, PAUSED, ASYNC_DONE.
    public func preroll() {
        send(.streamStarted)
        send(.stateChanged(.paused, pending: nil))
        send(.asyncDone)
    }

    /// Waits out the queue turns a failed check takes: the turn that hands the player's commands to
    /// this engine (the check fails there and the failure is queued), the failure's own turn (the
    /// player moves on and queues its next commands), and the turn that hands those over.
    public func settle() {
        for _ in 0..<3 { queue.sync {} }
    }

    public func clearCalls() { queue.sync { recorded.removeAll() } }
}
