import Dispatch
import Foundation
import GStreamer
import Logging
import PlayerModel

/// The engine over one `playbin3` (or `playbin`). Its bus's file descriptor wakes the player's
/// queue; nothing here runs on a timer (rule 7).
public final class GStreamerEngine: PlaybackEngine, @unchecked Sendable {
    public var eventHandler: ((Generation, EngineEvent) -> Void)?
    public let configuration: EngineConfiguration
    /// Which sink the engine ended up with, for the log and for tests.
    public let audioSinkDescription: String

    private let queue: DispatchQueue
    private let logger: Logger
    /// The output chosen once at start: a bin description, or nil for `autoaudiosink`.
    private let sinkDescription: String?

    /// One playbin with its bus and the fd source that wakes the queue. After an error the next
    /// load gets a fresh one: playbin3 1.22.0 aborts (reconfigure_output assertion) when a pipeline
    /// that failed is loaded again, and a retry deserves a clean pipeline anyway.
    private final class Pipeline {
        let playbin: Element
        let bus: Bus
        let busSource: DispatchSourceRead
        var aboutToFinish: AboutToFinish?

        init(playbin: Element, bus: Bus, busSource: DispatchSourceRead) {
            self.playbin = playbin
            self.bus = bus
            self.busSource = busSource
        }

        func dispose() {
            busSource.cancel()
            playbin.setState(.null)
        }
    }

    // Guarded by `queue`.
    private var pipeline: Pipeline!
    private var failed = false
    private var generation: Generation?
    private var uri: MediaURI?
    private var missingPlugin: String?
    private var playbin: Element { pipeline.playbin }
    private var bus: Bus { pipeline.bus }

    // Shared with the streaming thread that runs about-to-finish; guarded by `lock`.
    private let lock = NSLock()
    private var nextUp: (uri: MediaURI, generation: Generation)?
    private var switching: (uri: MediaURI, generation: Generation)?

    // GstPlayFlags is not public (gst/playback/gstplay-enum.h): VIDEO 0x1, AUDIO 0x2, TEXT 0x4.
    private static let flagVideo: UInt32 = 0x1, flagText: UInt32 = 0x4

    public init(configuration: EngineConfiguration = .fromEnvironment(), queue: DispatchQueue, logger: Logger) throws {
        GStreamer.initialize()
        // plugins-bad's DirectFB sink (rank marginal) hangs or crashes in libdirectfb when
        // autovideosink probes it on an X11 or Wayland display; a desktop player never wants it
        GStreamer.setRank(ofElement: "dfbvideosink", to: 0)
        self.configuration = configuration
        self.queue = queue
        self.logger = logger
        (sinkDescription, audioSinkDescription) = try Self.chooseAudioSink(configuration, logger: logger)
        pipeline = try makePipeline()
        logger.info("engine ready", metadata: ["pipeline": "\(configuration.pipeline.rawValue)", "sink": "\(audioSinkDescription)",
                                               "gstreamer": "\(GStreamer.version)"])
    }

    deinit {
        pipeline.dispose()
    }

    private func makePipeline() throws -> Pipeline {
        let playbin = try Element(factory: configuration.pipeline.rawValue, name: "tonearm", isPipeline: true)
        guard let bus = playbin.bus else { throw GStreamerError(domain: GStreamerError.coreDomain, code: 0, message: "playbin has no bus") }
        playbin.set("audio-sink", try sinkDescription.map { try Element(binDescription: $0) } ?? Element(factory: "autoaudiosink"))
        // pitch holds across rates: rate changes are seeks and scaletempo stretches time
        if let scaletempo = try? Element(factory: "scaletempo") { playbin.set("audio-filter", scaletempo) }
        let environment = ProcessInfo.processInfo.environment
        let hasDisplay = environment["DISPLAY"].map { !$0.isEmpty } ?? false || environment["WAYLAND_DISPLAY"].map { !$0.isEmpty } ?? false
        if !configuration.video || !hasDisplay {
            playbin.set("flags", flags: playbin.flags("flags") & ~(Self.flagVideo | Self.flagText))
            // legacy playbin still tries real video sinks while autoplugging a video stream, and
            // plugins-bad's dfbvideosink crashes in libdirectfb without a display: name a fakesink
            playbin.set("video-sink", try Element(factory: "fakesink"))
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: bus.fileDescriptor, queue: queue)
        let pipeline = Pipeline(playbin: playbin, bus: bus, busSource: source)
        source.setEventHandler { [weak self, unowned pipeline] in self?.drainBus(pipeline) }
        source.resume()
        pipeline.aboutToFinish = AboutToFinish.connect(playbin) { [weak self] in self?.onAboutToFinish() }
        return pipeline
    }

    /// The configured sink, `autoaudiosink` when it finds a device, else a silent sink that keeps
    /// real time (autoaudiosink would fall back to a fakesink that runs as fast as it can: trap 7).
    private static func chooseAudioSink(_ configuration: EngineConfiguration, logger: Logger) throws -> (String?, String) {
        if let description = configuration.audioSink {
            _ = try Element(binDescription: description)  // a bad description fails here, clearly
            return (description, description)
        }
        let auto = try Element(factory: "autoaudiosink")
        let result = auto.setState(.ready)
        let children = auto.childFactoryNames
        auto.setState(.null)
        if result != .failure, !children.isEmpty, !children.contains(where: { $0.hasPrefix("fake") }) {
            return (nil, "autoaudiosink (\(children.joined(separator: ",")))")
        }
        let silent = "fakesink sync=true"
        logger.notice("no sound device found: playing silently in real time (set TONEARM_AUDIO_SINK to choose a sink)")
        return (silent, silent)
    }

    // MARK: PlaybackEngine

    public func check(_ uri: MediaURI) -> ItemError? { LocalFiles.error(for: uri) }

    public func load(_ uri: MediaURI, generation: Generation) {
        lock.withLock {
            nextUp = nil
            switching = nil
        }
        if failed {
            failed = false
            do {
                let fresh = try makePipeline()
                pipeline.dispose()
                pipeline = fresh
                applyLevels()
            } catch {
                logger.error("cannot build a fresh pipeline: \(error)")
            }
        }
        playbin.setState(.ready)
        // messages of the previous load die with it (trap 4)
        bus.setFlushing(true)
        bus.setFlushing(false)
        self.generation = generation
        self.uri = uri
        missingPlugin = nil
        playbin.set("uri", uri.string)
        switch playbin.setState(.paused) {
        case .noPreroll:
            deliver(.live, generation)
        case .failure:
            // the ERROR message on the bus says why
            break
        default:
            break
        }
    }

    public func prepareNext(_ uri: MediaURI?, generation: Generation?) {
        lock.withLock {
            if let uri, let generation { nextUp = (uri, generation) } else { nextUp = nil }
        }
    }

    public func setPlaying(_ playing: Bool) {
        guard generation != nil else { return }
        playbin.setState(playing ? .playing : .paused)
    }

    public func stop() {
        lock.withLock {
            nextUp = nil
            switching = nil
        }
        playbin.setState(.null)
        bus.setFlushing(true)
        bus.setFlushing(false)
        generation = nil
        uri = nil
    }

    public func seek(to position: Duration, mode: SeekMode, rate: Double) -> Bool {
        var flags: SeekFlags = [.flush]
        switch mode {
        case .exact:
            flags.insert(.accurate)
        case .fast(let before, let after):
            flags.insert(.keyUnit)
            if before > .zero && after > .zero { flags.insert(.snapNearest) }
            else if before > .zero { flags.insert(.snapBefore) }
            else if after > .zero { flags.insert(.snapAfter) }
        }
        return playbin.seek(rate: rate, flags: flags, start: position.nanoseconds)
    }

    public var position: Duration? { generation == nil ? nil : playbin.queryPosition().map { .nanoseconds($0) } }
    public var duration: Duration? { generation == nil ? nil : playbin.queryDuration().map { .nanoseconds($0) } }
    public var isSeekable: Bool { generation == nil ? false : playbin.querySeekable() ?? false }

    public func loadedRanges(duration: Duration?) -> [TimeRange] {
        guard generation != nil, let duration, duration > .zero else { return [] }
        if uri?.isFile == true { return [TimeRange(start: .zero, end: duration)] }
        return (playbin.queryBufferedRanges() ?? []).map {
            TimeRange(start: duration * $0.lowerBound, end: duration * $0.upperBound)
        }
    }

    private var volume = 1.0
    private var muted = false

    public func setVolume(_ volume: Double) {
        // playbin's volume is a linear amplitude factor (GstStreamVolume linear format), so the
        // caller's linear 0...1 goes through unchanged; a cubic UI curve is the client's business.
        self.volume = volume
        playbin.set("volume", volume)
    }

    public func setMuted(_ muted: Bool) {
        self.muted = muted
        playbin.set("mute", muted)
    }

    private func applyLevels() {
        playbin.set("volume", volume)
        playbin.set("mute", muted)
    }

    // MARK: Streaming thread

    /// Runs on a streaming thread: set the next uri synchronously and nothing else (trap 2).
    private func onAboutToFinish() {
        lock.withLock {
            guard let next = nextUp else { return }
            nextUp = nil
            playbin.set("uri", next.uri.string)
            switching = next
        }
    }

    // MARK: Bus

    private func drainBus(_ drained: Pipeline) {
        guard drained === pipeline else { return }
        // one failure sends a burst of errors (the source's, then "internal data stream error"
        // from those downstream); the root cause is reported, once, after the burst
        var errors: [GStreamerError] = []
        while drained === pipeline, let message = drained.bus.pop() {
            if case .error(let error) = message.kind {
                errors.append(error)
            } else {
                handle(message)
            }
        }
        if let error = errors.first(where: { $0.domain == GStreamerError.resourceDomain }) ?? errors.first {
            fail(error)
        }
    }

    private func fail(_ error: GStreamerError) {
        guard let generation else { return }
        // an error after about-to-finish switched the uri belongs to the next item
        let pending = lock.withLock { switching }
        let target = pending ?? (uri.map { ($0, generation) })
        guard let target else { return }
        logger.debug("pipeline error", metadata: ["error": "\(error)", "debug": "\(error.debug ?? "")"])
        let itemError = ErrorMapping.itemError(error, uri: target.0, missingPlugin: missingPlugin)
        playbin.setState(.null)
        failed = true
        deliver(.failed(itemError), target.1)
    }

    private func deliver(_ event: EngineEvent, _ generation: Generation) {
        eventHandler?(generation, event)
    }

    private func handle(_ message: Message) {
        guard let generation else { return }
        switch message.kind {
        case .stateChanged(_, let new, let pending):
            // only the pipeline's own state changes count (trap 4)
            guard message.isFromPipeline else { return }
            deliver(.stateChanged(Self.state(new) ?? .null, pending: Self.state(pending)), generation)
        case .asyncDone:
            deliver(.asyncDone, generation)
        case .streamStart:
            // after about-to-finish, STREAM_START is the boundary to the next item (trap 2)
            let next = lock.withLock { () -> (uri: MediaURI, generation: Generation)? in
                defer { switching = nil }
                return switching
            }
            if let next {
                self.generation = next.generation
                self.uri = next.uri
                missingPlugin = nil
                deliver(.streamStarted, next.generation)
            } else {
                deliver(.streamStarted, generation)
            }
        case .endOfStream:
            deliver(.endOfStream, generation)
        case .error(let error):
            fail(error)
        case .warning(let warning):
            logger.debug("pipeline warning", metadata: ["warning": "\(warning)"])
        case .missingPlugin(let description):
            // playbin3 prerolls without the stream it cannot decode and never errors, so a
            // missing decoder fails the item here; playbin errors after this message anyway
            missingPlugin = description
            fail(GStreamerError(domain: GStreamerError.coreDomain, code: 12, message: description, source: message.source))
        case .tags(let tags):
            deliver(.tags(TagMapping.metadata(tags)), generation)
        case .buffering(let percent):
            deliver(.buffering(percent: percent), generation)
        case .durationChanged:
            deliver(.durationChanged(duration), generation)
        case .requestState(let state):
            if let state = Self.state(state) { deliver(.requestState(state), generation) }
        case .clockLost:
            // a new clock is chosen by going through PAUSED (gst-launch does the same)
            if playbin.currentState.current == .playing {
                playbin.setState(.paused)
                playbin.setState(.playing)
            }
        case .latency, .other:
            break
        }
    }

    private static func state(_ state: ElementState) -> PipelineState? {
        switch state {
        case .null: .null
        case .ready: .ready
        case .paused: .paused
        case .playing: .playing
        case .voidPending: nil
        }
    }
}
