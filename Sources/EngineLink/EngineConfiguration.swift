import Basics
import FoundationEssentials

/// How the GStreamer engine builds its pipeline. tonearmd hands it to the engine's process as it is
/// (`EngineWire`): what depends on the GStreamer installed (the default pipeline) is decided there.
public struct EngineConfiguration: Sendable, Codable, Equatable {
    public enum PipelineKind: String, Sendable, Codable, CaseIterable {
        /// The way to `hlsdemux2`; the default from GStreamer 1.24 on.
        case playbin3
        /// Legacy playbin, the default before GStreamer 1.24: Debian's 1.22.0 has playbin3 gapless
        /// and stream-selection hangs fixed only in later releases (design brief, trap 6).
        case playbin
    }

    /// nil: the default for the GStreamer the engine runs on (`GStreamerEngine.pipelineKind`).
    public var pipeline: PipelineKind?
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
    public var videoSink = "auto"
    /// The window program (`TONEARM_VIDEO_HELPER`); nil: `tonearm-video` beside the running program.
    public var videoHelper: String?
    /// How long an HTTP source waits for the server before it gives up on the connection
    /// (souphttpsrc's `timeout`, whole seconds, GStreamer's default 15): a stalled server then
    /// becomes an error that the player reconnects after. 10 s rides out a Wi-Fi hiccup and does
    /// not leave a dead connection silent for long.
    public var networkTimeout: Duration = .seconds(10)
    /// A snapserver's TCP source offered as the output `snapcast` (`TONEARM_SNAPCAST`, docs/sound.md
    /// "Snapcast"); nil: none.
    public var snapcast: SnapcastOutput?

    public init(pipeline: PipelineKind? = nil, audioSink: String? = nil, video: Bool = true) {
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
public struct EngineSetUp: Sendable, Equatable, Codable {
    /// The sink the engine ended up with, for the log and for tests.
    public var audioSinkDescription: String
    public init(audioSinkDescription: String) {
        self.audioSinkDescription = audioSinkDescription
    }
}
