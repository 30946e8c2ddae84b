import Basics
import FoundationEssentials
import GStreamer

/// How the GStreamer engine builds its pipeline.
public struct EngineConfiguration: Sendable {
    public enum PipelineKind: String, Sendable, CaseIterable {
        /// The way to `hlsdemux2`; the default from GStreamer 1.24 on.
        case playbin3
        /// Legacy playbin, the default before GStreamer 1.24: Debian's 1.22.0 has playbin3 gapless
        /// and stream-selection hangs fixed only in later releases (design brief, trap 6).
        case playbin

        /// The default for the GStreamer this process runs on. On 1.22.0, taking a playbin3 to
        /// NULL while uridecodebin3 switches items at the end of a track deadlocks: the state
        /// change waits in a pad-removed handler for a lock that a multiqueue thread holds while
        /// it waits, in a pad probe, for the state lock (make fuzz --seed 11: about one pipeline
        /// in a thousand; its threads, buffers and, on ALSA, the sound device are never released).
        /// Legacy playbin never did in the same runs. From 1.24 on, playbin3 is the default (not
        /// tried here: Debian 12 has only 1.22.0).
        public static var recommended: PipelineKind {
            let version = GStreamer.versionNumbers
            return (version.major, version.minor) >= (1, 24) ? .playbin3 : .playbin
        }
    }

    public var pipeline: PipelineKind = .recommended
    /// A GStreamer bin description for the audio output (`fakesink sync=true`,
    /// `wavenc ! filesink location=out.wav`); nil: `autoaudiosink`, or a silent real-time sink when
    /// there is no sound device.
    public var audioSink: String?
    /// Show video when the item has some and a display exists.
    public var video = true
    /// The video sink (`TONEARM_VIDEO_SINK`, `VideoSinkChoice`): `auto`, the default, is glimagesink
    /// where OpenGL opens on a GPU, else the software path (videoconvertscale into ximagesink);
    /// `glimagesink` keeps it on a software renderer too; `software` is the software path always;
    /// another value is a factory that draws into a window it is given (GstVideoOverlay), as
    /// ximagesink and xvimagesink do.
    public var videoSink = VideoSinkChoice.automatic
    /// The window program (`TONEARM_VIDEO_HELPER`); nil: `tonearm-video` beside the running program.
    public var videoHelper: String?
    /// How long an HTTP source waits for the server before it gives up on the connection
    /// (souphttpsrc's `timeout`, whole seconds, GStreamer's default 15): a stalled server then
    /// becomes an error that the player reconnects after. 10 s rides out a Wi-Fi hiccup and does
    /// not leave a dead connection silent for long.
    public var networkTimeout: Duration = .seconds(10)
    /// A snapserver's TCP source offered as the output `snapcast` (`TONEARM_SNAPCAST`, README
    /// "Snapcast"); nil: none.
    public var snapcast: SnapcastOutput?

    public init(pipeline: PipelineKind = .recommended, audioSink: String? = nil, video: Bool = true) {
        self.pipeline = pipeline
        self.audioSink = audioSink
        self.video = video
    }

    /// The defaults, overridden by `TONEARM_AUDIO_SINK` and `TONEARM_PIPELINE` (playbin3|playbin).
    public static func fromEnvironment(_ environment: [String: String] = Environment.variables()) -> EngineConfiguration {
        var configuration = EngineConfiguration()
        if let sink = environment["TONEARM_AUDIO_SINK"], !sink.trimmingWhitespace().isEmpty {
            configuration.audioSink = sink
        }
        if let kind = environment["TONEARM_PIPELINE"].flatMap(PipelineKind.init(rawValue:)) {
            configuration.pipeline = kind
        }
        if let sink = environment["TONEARM_VIDEO_SINK"], !sink.trimmingWhitespace().isEmpty {
            configuration.videoSink = sink
        }
        if let helper = environment["TONEARM_VIDEO_HELPER"], !helper.isEmpty {
            configuration.videoHelper = helper
        }
        if let text = environment["TONEARM_NETWORK_TIMEOUT"], let timeout = parseTimeout(text) {
            configuration.networkTimeout = timeout
        }
        if let text = environment["TONEARM_SNAPCAST"], !text.isEmpty, let snapcast = try? SnapcastOutput.parse(text) {
            configuration.snapcast = snapcast
        }
        return configuration
    }

    /// A network timeout in whole seconds, 1 to 3600; nil when `text` is not one.
    public static func parseTimeout(_ text: String) -> Duration? {
        guard let seconds = Int(text.trimmingWhitespace()), (1...3600).contains(seconds) else { return nil }
        return .seconds(seconds)
    }
}

/// What the engine's set-up chose (`GStreamerEngine.whenReady`).
public struct EngineSetUp: Sendable, Equatable {
    /// The sink the engine ended up with, for the log and for tests.
    public var audioSinkDescription: String
    public init(audioSinkDescription: String) {
        self.audioSinkDescription = audioSinkDescription
    }
}
