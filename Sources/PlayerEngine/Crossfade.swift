import Dispatch
import GStreamer
import PlayerModel

/// The crossfade's pipelines: the next item's, prepared in READY and silent with its bus held; once
/// started, the previous item's, fading out beside the current one until the ramp ends, its end of
/// stream or error, or a new load. The ramps themselves are `OutputLevels`'; the current pipeline
/// and its load are the engine's, which `start` hands the prepared item to. Confined to the engine's
/// queue, as its pipelines are.
final class Crossfade {
    /// A prepared item: its pipeline, its URI and the load the player calls it.
    typealias Incoming = (pipeline: EnginePipeline, uri: MediaURI, generation: Generation)

    /// The next item's pipeline, prepared (`prepare`) and not started yet.
    private(set) var incoming: Incoming?
    /// The previous item's pipeline, fading out (`start`) beside the current one.
    private(set) var outgoing: EnginePipeline?
    private let teardown: PipelineTeardown
    /// The output's levels, which ramp the fade; given once by the engine's init, before its queue
    /// runs anything (they ask for this crossfade's pipelines, so neither is made with the other).
    private var levels: OutputLevels!

    init(teardown: PipelineTeardown) {
        self.teardown = teardown
    }

    func use(_ levels: OutputLevels) { self.levels = levels }

    /// Opens the next item for a crossfade in `fresh`, a pipeline of its own (its video chosen), in
    /// READY and silent, its bus held until it starts (its messages then tell the player about it as
    /// the current item). Not prerolled: a pulsesink prerolled in PAUSED and played a second later
    /// was heard as much later as it had waited, and without its start when the pipeline ran on the
    /// system clock: the stream's time read as it uncorks is the time it stood corked, and
    /// audiobasesink anchors its calibration there (GStreamer 1.22, PulseAudio 16 and PipeWire
    /// 0.3.65: CrossfadeTests, and GST_DEBUG=audioclock:6 shows the jump). It runs on the system
    /// clock (`start`).
    func prepare(_ fresh: EnginePipeline, _ uri: MediaURI, _ generation: Generation) {
        dropIncoming()  // one prepared at a time (the engine drops it first anyway)
        fresh.busSource.suspend()
        fresh.playbin.set("uri", uri.string)
        // pulsesink's clock comes from its stream, which on PipeWire 0.3.65 starts 60-350 ms after the
        // pipeline plays (the new node is linked late): the system clock runs from the fade's start
        fresh.playbin.useSystemClock()
        fresh.playbin.setState(.ready)
        incoming = (fresh, uri, generation)
        fresh.gains.opensPlaying = true
        levels.apply(to: fresh.gains)  // silent until it starts
    }

    /// Starts the prepared item and fades over `length`: `makeCurrent` makes it the engine's current
    /// pipeline and load (the player hears `.streamStarted` for it at its preroll and makes its item
    /// current; an error fails it as the next item that followed), and `current` plays on beside
    /// it, fading out, until the ramp ends. Nothing prepared: nothing happens.
    func start(length: Duration, from current: EnginePipeline, makeCurrent: (Incoming) -> Void) {
        guard let next = incoming else { return }
        incoming = nil
        endFadeOut()
        outgoing = current
        makeCurrent(next)
        let (state, pending) = current.playbin.currentState
        let playing = (pending == .voidPending ? state : pending) == .playing
        levels.startCrossfade(length: length, playing: playing)
        if playing {
            // running time 0 is now, kept through the preroll (no start time: GstPipeline then keeps
            // the base time at PAUSED->PLAYING); given back once it plays (`handle`, .stateChanged)
            next.pipeline.playbin.startTime = nil
            next.pipeline.playbin.baseTime = Element.systemClockTime
        }
        next.pipeline.playbin.setState(playing ? .playing : .paused)
        _ = Self.resumed(next.pipeline)  // what it said while prepared is read now, as the current load's
    }

    /// The fade's pipelines pause and play together, and the ramps with them (the engine sets the
    /// current one's state).
    func hold(_ paused: Bool) {
        guard let outgoing else { return }
        outgoing.playbin.setState(paused ? .paused : .playing)
        levels.holdCrossfade(paused)
    }

    /// The previous item's pipeline goes (the ramp's end, its end of stream or error, a new load),
    /// at the level the ramp left it: the ramp ends once it is no longer one of the pipelines.
    func endFadeOut() {
        let leaving = outgoing
        outgoing = nil
        levels.endCrossfade()
        if let leaving { letGo(leaving) }
    }

    /// The prepared item is not played after all (a cancel, a new load, another output).
    func dropIncoming() {
        guard let next = incoming else { return }
        incoming = nil
        letGo(Self.resumed(next.pipeline))
    }

    /// Reads `drained`'s bus when it is the fading-out pipeline (true), whose messages are nothing
    /// for the player (its item is not current); its end, or an error, ends the fade early.
    func drain(_ drained: EnginePipeline) -> Bool {
        guard drained === outgoing else { return false }
        while drained === outgoing, let message = drained.bus.pop() {
            switch message.kind {
            case .endOfStream, .error: endFadeOut()
            default: break
            }
        }
        return true
    }

    /// The engine goes: its crossfade's pipelines go to NULL on threads of their own, waited for by
    /// no one.
    func disposeAll() {
        if let outgoing { PipelineTeardown.dispose(outgoing, wait: nil) }
        if let incoming { PipelineTeardown.dispose(Self.resumed(incoming.pipeline), wait: nil) }
    }

    /// A crossfade is prepared only where the output takes a second stream (the engine arms a
    /// gapless switch instead on a device only one pipeline can open), so none of its pipelines
    /// holds such a device for the next one.
    private func letGo(_ pipeline: EnginePipeline) {
        teardown.letGo(pipeline, exclusiveDevice: false)
    }

    /// A suspended bus source resumed (a source must be resumed before it is cancelled, or its
    /// cancel handler never runs: dispatch_source_cancel(3)).
    private static func resumed(_ held: EnginePipeline) -> EnginePipeline {
        held.busSource.resume()
        return held
    }
}
