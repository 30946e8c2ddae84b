import Dispatch
import EngineLink
import GStreamer
import Logging
import PlayerModel

/// The outputs and routing, one owner (design brief, "The engine's own shape"): the sink chosen
/// once at set-up, the output the player chose (a device of the sound server's, its `default`, or
/// the configured snapserver), the sink each new pipeline gets for it, the device list the player
/// hears, and the device monitor (`OutputRouter`) that moves the sinks as the chosen device or the
/// server's default comes and goes. `GStreamerEngine` holds it and calls it; confined to the
/// engine's queue.
final class AudioOutputs {
    private let configuration: EngineConfiguration
    private let queue: DispatchQueue
    private let logger: Logger
    /// Told the device list: the sound server's devices, and the snapserver's if one is configured.
    private let tell: ([OutputDevice]) -> Void
    /// The pulsesinks playing now (the current pipeline's, the one kept warm), to move.
    private let sinks: () -> [Element?]

    /// The output chosen at set-up: a bin description, or nil for `autoaudiosink`.
    private var sinkDescription: String?
    /// The output devices and the one chosen (`OutputRouter.swift`); nil unless the sink is the
    /// default path's pulsesink.
    private var router: OutputRouter?
    /// The device monitor went with the sound server (see `failed`): the next pulsesink pipeline
    /// starts a new one.
    private var routerLost = false
    /// The output the player chose, for a router made after the choice.
    private(set) var chosen = Outputs.defaultID

    init(configuration: EngineConfiguration, queue: DispatchQueue, logger: Logger,
         tell: @escaping ([OutputDevice]) -> Void, sinks: @escaping () -> [Element?]) {
        self.configuration = configuration
        self.queue = queue
        self.logger = logger
        self.tell = tell
        self.sinks = sinks
    }

    /// What autoaudiosink chose when it found a PulseAudio (or pipewire-pulse) server: the same
    /// sink, named, for `OutputRouter`.
    static let pulseSinkName = "tonearm-sink"
    private static let pulseSink = "pulsesink name=\(pulseSinkName)"
    /// pulsesink's `latency-time` and `buffer-time` in µs. pulsesink asks the server for a buffer
    /// of `buffer-time` (tlength) refilled in requests of `latency-time` (minreq), and the server,
    /// asked to adjust the latency, gives the device (tlength - 2 minreq) / 2 of it
    /// (PulseAudio 16 protocol-native.c fix_playback_buffer_attr): 100/300 ms wake the player
    /// and the server about 10 times a second for the stream (pulsesink's default 10/200 ms: 100
    /// times), and leave the device 50 ms, which is what a move between devices and a pause on a
    /// sink that cannot rewind take to be heard. Volume and mute are the stream's (`OutputLevels`),
    /// applied by the server whatever the buffer; a pause corks the stream, a seek flushes it.
    private static let pulseLatencyTime: UInt64 = 100_000
    private static let pulseBufferTime: UInt64 = 300_000

    /// Chooses the sink (at set-up, once) and, on the default path's pulsesink, starts watching
    /// the devices; returns the sink as shown to the user, and whether it is an ALSA device that
    /// only one pipeline can open at a time.
    func setUp() throws(GStreamerError) -> (shown: String, exclusive: Bool) {
        dispatchPrecondition(condition: .onQueue(queue))
        let sink = try Self.chooseAudioSink(configuration, logger: logger)
        sinkDescription = sink.description
        if sink.description == Self.pulseSink { watch() }
        if router == nil, configuration.snapcast != nil { report([]) }
        return (sink.shown, sink.shown.contains("alsasink"))
    }

    /// The configured sink, `autoaudiosink` when it finds a device, else a silent sink that keeps
    /// real time (autoaudiosink would fall back to a fakesink that runs as fast as it can: trap 7).
    private static func chooseAudioSink(_ configuration: EngineConfiguration, logger: Logger) throws(GStreamerError)
        -> (description: String?, shown: String) {
        if let description = configuration.audioSink {
            _ = try Element(binDescription: description)  // a bad description fails here, clearly
            return (description, description)
        }
        let auto = try Element(factory: "autoaudiosink")
        let result = auto.setState(.ready)
        let children = auto.childFactoryNames
        auto.setState(.null)
        if result != .failure, !children.isEmpty, !children.contains(where: { $0.hasPrefix("fake") }) {
            // named, so that the output can be moved from device to device (`OutputRouter`)
            if children == ["pulsesink"] { return (pulseSink, "autoaudiosink (pulsesink)") }
            return (nil, "autoaudiosink (\(children.joined(separator: ",")))")
        }
        let silent = "fakesink sync=true"
        logger.notice("no sound device found: playing silently in real time (set TONEARM_AUDIO_SINK to choose a sink)")
        return (silent, silent)
    }

    /// The chosen output is the configured snapserver: pipelines are built with its sink.
    var streamsToSnapcast: Bool { chosen == SnapcastOutput.id && configuration.snapcast != nil }

    /// The audio sink for a new pipeline, with a volume element in front of it for volume, mute and
    /// the sleep timer's fade. Not in the audio filter: playsink queues about a second after its
    /// filter, so a fade there was heard a second late and cut off at ~15% by the pause
    /// (SleepTimerServiceTests, through a WAV capture), and a Volume or mute there was heard 1.2 s
    /// after the call on a real PulseAudio (SoundServerTests); in front of the sink only the sink's
    /// own buffer is left.
    func makeSink() throws -> Element {
        if streamsToSnapcast, let snapcast = configuration.snapcast {
            return try Element(binDescription: "volume name=tonearm-fade ! \(snapcast.sinkDescription)")
        }
        let description = sinkDescription ?? "autoaudiosink"
        if let sink = try? Element(binDescription: "volume name=tonearm-fade ! \(description)") { return sink }
        logger.warning("the audio sink takes no volume element in front of it: the sleep timer will pause without fading",
                       metadata: ["sink": "\(description)"])
        return try sinkDescription.map { try Element(binDescription: $0) } ?? Element(factory: "autoaudiosink")
    }

    /// A new pipeline's sink, made by `makeSink`: the pulsesink (nil on another path) gets its
    /// buffer and the device to play on, and a device monitor lost with the server starts again.
    func route(new sink: Element?) {
        sink?.set("latency-time", Self.pulseLatencyTime)
        sink?.set("buffer-time", Self.pulseBufferTime)
        if routerLost, sink != nil { watch() }
        route(sink)
    }

    /// Sets a pulsesink's device to the one to play on, if it plays elsewhere.
    func route(_ sink: Element?) { router?.route(sink) }

    /// The player chose an output; true when pipelines are now built for the other sink (the
    /// snapserver's or the sound server's), and those built before are no use.
    func choose(_ id: String) -> Bool {
        let wasSnapcast = streamsToSnapcast
        chosen = id
        router?.choose(id)
        return streamsToSnapcast != wasSnapcast
    }

    /// The output failed, most often because the sound server went away: the device monitor's
    /// connection went with it, and the pulse provider neither reconnects nor says so (GStreamer
    /// 1.22 pulsedeviceprovider.c), so it would stop following hot-plug. It goes now, the devices
    /// with it, and the next pulsesink pipeline (Play once the server is back) starts a new one.
    func failed() {
        guard router != nil else { return }
        router = nil
        routerLost = true
        tell([])
    }

    /// Before the process ends: the device monitor stops (its source is cancelled, and the cancel
    /// handler, queued on this queue, lets the monitor go, closing its providers' connections).
    func stopWatching() { router = nil }

    /// Tells the player the output devices: the sound server's, and the snapserver's if one is
    /// configured.
    private func report(_ devices: [OutputDevice]) {
        tell(devices + (configuration.snapcast.map { [$0.device] } ?? []))
    }

    /// Starts watching the output devices; the player hears of them, and the sinks move as the
    /// chosen device or the server's default comes and goes.
    private func watch() {
        router = OutputRouter(queue: queue, logger: logger, reportDevices: { [weak self] devices in
            self?.report(devices)
        }, moveSinks: { [weak self] in
            guard let self else { return }
            for sink in sinks() { router?.route(sink) }
        })
        routerLost = router == nil
        guard let router else {
            logger.notice("no output devices listed: the sound server's device monitor did not start")
            return
        }
        router.choose(chosen)
        router.reportNow()
    }
}
