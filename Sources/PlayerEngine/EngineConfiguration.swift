import Foundation

/// How the GStreamer engine builds its pipeline.
public struct EngineConfiguration: Sendable {
    public enum PipelineKind: String, Sendable, CaseIterable {
        /// The default: the way to `hlsdemux2`.
        case playbin3
        /// Legacy playbin: Debian's 1.22.0 has playbin3 gapless and stream-selection hangs fixed
        /// only in later releases (design brief, trap 6).
        case playbin
    }

    public var pipeline: PipelineKind = .playbin3
    /// A GStreamer bin description for the audio output (`fakesink sync=true`,
    /// `wavenc ! filesink location=out.wav`); nil: `autoaudiosink`, or a silent real-time sink when
    /// there is no sound device.
    public var audioSink: String?
    /// Show video when the item has some and a display exists.
    public var video = true

    public init(pipeline: PipelineKind = .playbin3, audioSink: String? = nil, video: Bool = true) {
        self.pipeline = pipeline
        self.audioSink = audioSink
        self.video = video
    }

    /// The defaults, overridden by `TONEARM_AUDIO_SINK` and `TONEARM_PIPELINE` (playbin3|playbin).
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> EngineConfiguration {
        var configuration = EngineConfiguration()
        if let sink = environment["TONEARM_AUDIO_SINK"], !sink.trimmingCharacters(in: .whitespaces).isEmpty {
            configuration.audioSink = sink
        }
        if let kind = environment["TONEARM_PIPELINE"].flatMap(PipelineKind.init(rawValue:)) {
            configuration.pipeline = kind
        }
        return configuration
    }
}
