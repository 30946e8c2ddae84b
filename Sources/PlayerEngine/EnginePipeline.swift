import Basics
import Dispatch
import EngineLink
import GStreamer
import PlayerModel

/// One playbin with its bus, the fd source that wakes the queue, and what its about-to-finish
/// handler shares with the streaming thread. Every load gets a fresh one (or, after a release,
/// the one kept warm: see `PipelineFactory.giveBack`), and the old one goes to NULL on a thread of
/// its own: that state change waits for streaming threads, and with playbin3 1.22.0 one of
/// them can block in a pad probe on a lock the change holds, forever (seen switching items at
/// the end of a track). A fresh pipeline also keeps playbin3 1.22.0 from aborting
/// (reconfigure_output assertion) when a pipeline that failed is loaded again.
/// Built by `PipelineFactory.make`, which holds it while it is kept warm and hands it to a
/// dispose thread to let it go; the engine holds it as the current, incoming or outgoing pipeline.
final class EnginePipeline: @unchecked Sendable {
    // @unchecked: `nextUp`, `switching` and `awaitedSeek` are guarded by `lock` (streaming
    // threads read them), and so are the video fields grouped with them; the rest is immutable after init or confined to the engine's queue
    // (`gains` is set there; the dispose thread, which holds a retired pipeline, never
    // touches it). Below, the fields in groups by what guards them.

    // MARK: Immutable after init

    let playbin: Element
    /// Which playbin it is: chosen per item (`GStreamerQuirks.pipeline(for:default:configured:)`).
    let kind: EngineConfiguration.PipelineKind
    /// Its volume stages (the stream's, the element in front of the sink, the filter's), which
    /// only `OutputLevels` sets. See `AudioOutputs.makeSink` for why in front of the sink.
    let gains: GainStages
    let bus: Bus
    let busSource: DispatchSourceRead

    // MARK: Guarded by `lock`: streaming threads read or set these

    let lock = Lock()
    /// The item armed for about-to-finish (`prepareNext`), taken by the streaming thread.
    var nextUp: (uri: MediaURI, generation: Generation)?
    /// The item about-to-finish switched the uri to, until its STREAM_START (`handle`).
    var switching: (uri: MediaURI, generation: Generation)?
    /// The exact seek whose ASYNC_DONE is handed straight to the player (see `seek`): the
    /// generation it belongs to, the position it goes to and its event's sequence number. Set
    /// before the seek is sent, taken by the thread that posts the next ASYNC_DONE made after it
    /// (an older one, a pause's that was on its way, is not the seek's).
    var awaitedSeek: (generation: Generation, position: Duration, seqnum: UInt32)?
    /// The display its video goes to (nil: its video is dropped), and whether a sink of it got
    /// the window (such a pipeline is never kept warm: its sink holds the window's id).
    var display: VideoDisplay?
    var showedVideo = false
    /// That sink when it is the software path's (it scales to the window); guarded by `lock`:
    /// the sync handler reads the video's size from it.
    var scaledSink: ScaledVideoSink?

    // MARK: Confined to the engine's queue (a dispose thread touches only the signals, once the
    // queue has let go of the pipeline)

    /// The filter's optional stages (ReplayGain, the equalizer), replaced with the filter.
    var stages: AudioStages?
    /// Its sink streams to the snapserver (`SnapcastOutput`), not to the configured sink.
    var toSnapcast = false
    var aboutToFinish: AboutToFinish?
    var sourceSetup: SourceSetup?
    /// The video sink `chooseVideo` gave it, if any; guarded by the engine's queue.
    var videoSink: Element?
    /// The display the pipeline's flags and video sink were set for; guarded by the engine's queue.
    var videoSetFor: VideoDisplay??
    /// The `textoverlay` that draws the on-screen bar (`makeControls`); guarded by the engine's queue.
    var controls: Element?
    /// A video looping on itself (`SegmentLoop`); guarded by the engine's queue.
    var loop = SegmentLoop()

    // MARK: Derived

    /// The pulsesink, when the output is the default path's (see `OutputRouter`).
    var outputSink: Element? { gains.stream }
    /// The sink that draws into the window (GstVideoOverlay): the scaled sink's ximagesink.
    var overlay: Element? { lock.withLock { scaledSink?.sink } ?? videoSink }
    /// Its video sink is ximagesink or xvimagesink (the software path's included), which open a
    /// display of their own with MIT-SHM.
    var drawsWithXShm: Bool { ["ximagesink", "xvimagesink"].contains(overlay?.factoryName ?? "") }

    init(playbin: Element, kind: EngineConfiguration.PipelineKind, gains: GainStages, bus: Bus, busSource: DispatchSourceRead) {
        self.playbin = playbin
        self.kind = kind
        self.gains = gains
        self.bus = bus
        self.busSource = busSource
    }

    /// Runs on a streaming thread: set the next uri synchronously and nothing else (trap 2).
    func onAboutToFinish() {
        let next: (uri: MediaURI, generation: Generation)? = lock.withLock {
            defer { nextUp = nil }
            if let nextUp { switching = nextUp }
            return nextUp
        }
        if let next { playbin.set("uri", next.uri.string) }
    }
}

/// One strong reference, handed over once.
final class Held: @unchecked Sendable {
    // @unchecked: `value` is guarded by `lock`.
    private let lock = Lock()
    private var value: EnginePipeline?
    init(_ value: EnginePipeline) { self.value = value }
    func take() -> EnginePipeline? { lock.withLock { defer { value = nil }; return value } }
}
