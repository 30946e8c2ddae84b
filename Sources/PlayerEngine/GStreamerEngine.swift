import Basics
import Dispatch
import EngineLink
import FoundationEssentials
import GStreamer
import Glibc
import Logging
import PlayerModel

/// The engine over `playbin3` (or `playbin`). It performs the player's commands on its own serial
/// queue, the only place that touches the pipeline: a state change there may wait on a streaming
/// thread, and the player's queue, which answers D-Bus, never does (design brief, trap 11). The
/// bus's file descriptor wakes the same queue; nothing here runs on a timer (rule 7).
public final class GStreamerEngine: PlaybackEngine, @unchecked Sendable {
    // @unchecked: every mutable field is confined to `queue` (checked with dispatchPrecondition);
    // `eventHandler` is guarded by `handlerLock`; an EnginePipeline's about-to-finish state by its lock.
    public let configuration: EngineConfiguration
    /// The configuration's pipeline, else the default for the GStreamer this process runs on; an
    /// item may play in the other one (`GStreamerQuirks.pipeline(for:default:configured:)`).
    public let pipelineKind: EngineConfiguration.PipelineKind
    /// How many pipelines the engine has built so far (a load that takes the one kept warm builds
    /// none), for tests.
    public var pipelinesBuilt: Int { isStarted ? queue.sync { pipelines.built } : 0 }
    /// The factories of the elements in the current pipeline's audio filter (`AudioStages`), for
    /// tests: a stage that is off is not among them. Waits for the engine's queue.
    public var audioFilterElements: [String] { isStarted ? queue.sync { pipeline?.stages?.filterElements ?? [] } : [] }

    private let queue: DispatchQueue
    /// Reads of a loaded file's head and of the files beside it (its ID3 chapters, its `.lrc`),
    /// which can block, off `queue`: a serial queue of ours, not a global one, whose first job
    /// starts libdispatch's worker-pool monitor, which then wakes the process every second for good
    /// (IdleTests: a paused engine woke 3 times in 3 s).
    private let fileReads = DispatchQueue(label: "tonearm.engine.file-reads", qos: .utility)
    private let logger: Logger
    /// Where embedded cover images go, and where images beside a file are looked for; nil: none.
    private let covers: CoverCache?
    /// What `setUp` chose, or why it failed; nil until it has run (first on `queue`).
    private var setUpResult: Result<EngineSetUp, GStreamerError>?

    private let handlerLock = Lock()
    private var eventHandler: (@Sendable (Generation, EngineEvent) -> Void)?
    /// Loads handed to `queue` and not run yet, guarded by `handlerLock`.
    private var loadsQueued = 0
    /// Pipelines on their way to NULL, the waits for them, and a kept pipeline's way back
    /// (`PipelineTeardown.swift`).
    private let teardown: PipelineTeardown

    // Guarded by `queue`.
    /// The pipeline of the current load; nil after a release or a failure.
    private var pipeline: EnginePipeline?
    /// Builds pipelines, keeps one warm between a release and the next load, and lets them go
    /// (`PipelineFactory.swift`).
    private lazy var pipelines: PipelineFactory = PipelineFactory(
        configuration: configuration, queue: queue, logger: logger, outputs: outputs, levels: levels, video: video,
        teardown: teardown, owner: self, hasCurrent: { [unowned self] in pipeline != nil },
        drain: { [weak self] pipeline in self?.drainBus(pipeline) },
        seekDone: { [weak self] generation, position, seqnum in
            guard let engine = self else { return }
            engine.deliver(.seekDone(PositionSample(position, at: .now)), generation)
            engine.seekEnded(seqnum)
        })

    /// An exact seek's ASYNC_DONE was taken where it was posted (`seekDone`) and never reaches
    /// the bus: that seek is no longer on its way.
    private func seekEnded(_ seqnum: UInt32) {
        queue.async { [self] in if load?.seekSeqnum == seqnum { load?.seekSeqnum = nil } }
    }
    /// The state of the current item's load (`Load.swift`): made by `load` and a crossfade's start,
    /// derived at a gapless switch or a loop's lap, nil once retired; non-nil exactly while
    /// `pipeline` is.
    private var load: Load?
    /// Volume, mute, the sleep timer's fade and a crossfade's ramps, on every pipeline's gain
    /// stages (`OutputLevels.swift`).
    private lazy var levels = OutputLevels(queue: queue, logger: logger, pipelines: { [unowned self] in
        (pipeline?.gains, crossfade.outgoing?.gains, crossfade.incoming?.pipeline.gains)
    }, sliderMoved: { [unowned self] level, fading in
        deliver(.streamLevels(volume: level.volume, muted: level.muted, fading: fading), load?.generation ?? Generation(0))
    }, crossfadeEnded: { [unowned self] in crossfade.endFadeOut() })
    /// The sink, the output chosen and the devices (`AudioOutputs.swift`).
    private lazy var outputs = AudioOutputs(configuration: configuration, queue: queue, logger: logger, tell: { [unowned self] devices in
        deliver(.outputs(devices), load?.generation ?? Generation(0))
    }, sinks: { [unowned self] in [pipeline?.outputSink, pipelines.warm?.outputSink] })
    /// The stall timer of a local file's preroll under way, if any (`PrerollWatch.swift`).
    private lazy var prerollWatch = PrerollWatch(queue: queue)
    /// The video sinks, the window, the gravity, the on-screen bar and the redraw of a paused frame
    /// (`VideoOutput.swift`), lent the current pipeline and its load.
    private lazy var video = VideoOutput(queue: queue, logger: logger, configuredSink: configuration.videoSink,
                                         helper: configuration.videoHelper ?? VideoWindow.helperPath(), teardown: teardown,
                                         current: { [weak self] body in
        guard let self, let pipeline, load != nil else { return }
        body(pipeline, &load!)
    }, tell: { [weak self] event in
        guard let self else { return }
        deliver(.video(event), load?.generation ?? Generation(0))
    })
    /// The crossfade (`Crossfade.swift`): the next item's pipeline, prepared in READY and silent
    /// with its bus held; once started, the previous item's pipeline fading out beside the current
    /// one (its ramps are `levels`').
    private let crossfade: Crossfade

    /// Returns at once: GStreamer's set-up (`gst_init`, which scans every plugin when there is no
    /// registry cache yet, and the choice of the sink) runs first on the engine's queue, so the
    /// commands performed meanwhile run after it, in order. `whenReady` tells how it went.
    /// `startsAtOnce` false: nothing runs on that queue, the set-up included, until `start()`.
    public init(configuration: EngineConfiguration = .fromEnvironment(), covers: CoverCache? = nil, logger: Logger,
                startsAtOnce: Bool = true) {
        self.configuration = configuration
        pipelineKind = configuration.pipeline ?? .recommended
        self.covers = covers
        self.logger = logger
        teardown = PipelineTeardown(logger: logger)
        crossfade = Crossfade(teardown: teardown)
        queue = DispatchQueue(label: "tonearm.engine", attributes: .initiallyInactive)
        crossfade.use(levels)  // before the queue runs: the first command may fade
        _ = video  // made here: the window's threads and the bus's sync handler reach it from theirs
        queue.async { [self] in setUp() }
        if startsAtOnce { start() }
    }

    /// Lets the set-up, then the commands queued since `init(startsAtOnce: false)`, run. Called
    /// again, nothing happens; a command that needs a pipeline calls it itself, so that an engine
    /// nobody asked to play never initialises GStreamer (issue 30: ~5 MiB of private memory at rest).
    public func start() {
        let first = handlerLock.withLock {
            defer { activated = true }
            return !activated
        }
        if first { queue.activate() }
    }

    /// Whether `start` ran; guarded by `handlerLock`. Before it, no pipeline exists, and nothing
    /// may wait on the queue, which runs nothing yet.
    private var activated = false
    private var isStarted: Bool { handlerLock.withLock { activated } }

    /// Calls `body` on the engine's queue once the set-up has run, with what it chose or why it
    /// failed (an engine that failed ignores its commands).
    public func whenReady(_ body: @escaping @Sendable (Result<EngineSetUp, GStreamerError>) -> Void) {
        queue.async { [self] in body(setUpResult!) }
    }

    /// Runs `body` on the engine's queue after the commands performed before it: the engine's
    /// link acknowledges each command from there, so that a queue stuck on GStreamer for good
    /// leaves it unanswered, which tonearmd's watchdog sees (`EngineWatch`).
    public func afterCommands(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }

    /// The current pipeline's position, asked on the engine's queue after the commands before it
    /// (nil: no pipeline, or it does not say): the watchdog's question while an item plays.
    public func probePosition(_ body: @escaping @Sendable (Duration?) -> Void) {
        queue.async { [self] in body(pipeline?.playbin.queryPosition().map { .nanoseconds($0) }) }
    }

    /// Runs `body` (on the engine's queue) before the queue waits for something that may take a
    /// while, with what and for how long at most: the commands behind it are not late before then.
    public func whenWaiting(_ body: @escaping @Sendable (_ what: String, _ bound: Duration) -> Void) {
        teardown.whenWaiting(body)  // its waits are the only ones (`PipelineTeardown.letGo`)
    }

    /// Waits for the set-up and returns what it chose; throws why it failed. For callers that may
    /// wait (tests, tools), never the queue that answers D-Bus.
    public func waitUntilReady() throws(GStreamerError) -> EngineSetUp {
        start()
        return try queue.sync { setUpResult! }.get()
    }

    private func setUp() {
        dispatchPrecondition(condition: .onQueue(queue))
        Self.prepareRegistry()
        do throws(GStreamerError) {
            let sink = try outputs.setUp()
            pipelines.setUp(exclusiveDevice: sink.exclusive)
            // the pipeline's factory must exist; the pipeline itself is built at the first load, so
            // the set-up does not wait for a playbin that is thrown away
            guard GStreamer.hasElement(pipelineKind.rawValue) else {
                throw GStreamerError(domain: GStreamerError.coreDomain, code: 12,
                                     message: "GStreamer element '\(pipelineKind.rawValue)' is not installed")
            }
            setUpResult = .success(EngineSetUp(audioSinkDescription: sink.shown))
            logger.info("engine ready", metadata: ["pipeline": "\(pipelineKind.rawValue)", "sink": "\(sink.shown)",
                                                   "gstreamer": "\(GStreamer.version)"])
        } catch {
            setUpResult = .failure(error)
        }
    }

    /// `gst_init` and what Tonearm changes in the process's registry (ranks, typefinders), once per
    /// process: the first caller does it on its thread, later ones wait for it to finish. The
    /// engine's set-up, the tag reader and `MediaCapabilities` call it first; none of them runs on
    /// the queue that answers D-Bus (the first `gst_init` with no registry cache takes seconds).
    public static func prepareRegistry() { _ = registryPrepared }

    private static let registryPrepared: Void = {
        GStreamer.initialize()
        // plugins-bad's DirectFB sink (rank marginal) hangs or crashes in libdirectfb when
        // autovideosink probes it on an X11 or Wayland display; a desktop player never wants it
        GStreamer.setRank(ofElement: "dfbvideosink", to: 0)
        preferNativeDecoders()
        keepFFmpegOutOfTypefinding()
    }()

    deinit {
        if let pipeline { PipelineTeardown.dispose(pipeline, wait: nil) }
        crossfade.disposeAll()
    }

    /// Decoders that need no library beyond their own, preferred over gst-libav's, which loads
    /// FFmpeg and the ~150 libraries it links (flite's voices, librsvg, x265, OpenBLAS...):
    /// - MP3: GStreamer 1.22 ranks mpg123audiodec and avdec_mp3 both marginal, and a tie goes by
    ///   name (make bench's "RSS paused" row doubles with avdec_mp3).
    /// - AAC (M4A, HLS): faad (plugins-bad, libfaad2) is ranked secondary under avdec_aac's
    ///   primary (DecoderChoiceTests: FFmpeg stays unloaded).
    /// A rank the user gives in GST_PLUGIN_FEATURE_RANK stands.
    private static let nativeDecoders = ["mpg123audiodec", "faad"]

    private static func preferNativeDecoders() {
        let userRanks = ProcessInfo.processInfo.environment["GST_PLUGIN_FEATURE_RANK"] ?? ""
        for decoder in nativeDecoders where !userRanks.contains(decoder) {
            guard let rank = GStreamer.setRank(ofElement: decoder, to: Registry.Rank.primary + 1),
                  rank > Registry.Rank.primary + 1 else { continue }
            GStreamer.setRank(ofElement: decoder, to: rank)  // ranked higher already: keep it
        }
    }

    /// A file no typefinder recognises (a broken download, a text file named .mp3) is offered to
    /// every typefinder, gst-libav's 25 `avtype_*` ones last; calling any of them loads FFmpeg,
    /// which stays mapped for good with its ~150 libraries (DecoderChoiceTests), for a file that
    /// then fails anyway. Their formats are game and video ones (4xm, Smacker,
    /// Westwood...), except DSF, which Tonearm recognises with a typefinder of its own.
    private static func keepFFmpegOutOfTypefinding() {
        guard !GStreamer.removeTypeFinders(ofPlugin: "libav").isEmpty else { return }
        GStreamer.registerDSFTypeFinder(rank: Registry.Rank.secondary)
    }

    // MARK: PlaybackEngine

    public func setEventHandler(_ handler: @escaping @Sendable (Generation, EngineEvent) -> Void) {
        handlerLock.withLock { eventHandler = handler }
    }

    /// Runs `action` on a teardown thread each time the last retired pipeline has been freed: a
    /// moment when much of the heap was just given back (tonearmd returns the pages to the system).
    public func whenPipelinesReleased(_ action: @escaping @Sendable () -> Void) {
        teardown.whenPipelinesReleased(action)
    }

    /// Runs `action` with the video's size when a sink gets the video window or the video's size is
    /// known (on the thread that asked), and with nil once the window program ended (on its reader
    /// thread): while a video shows.
    public func whileVideoShows(_ action: @escaping @Sendable (VideoSize?) -> Void) {
        video.whileShows(action)
    }

    public func perform(_ command: EngineCommand) {
        if case .load = command { handlerLock.withLock { loadsQueued += 1 } }
        // GStreamer starts with the first command that builds a pipeline; the others before it
        // only set what a pipeline will be built with, and wait on the inactive queue in order
        switch command {
        case .load, .prepareNext(.some, _), .crossfade(.prepare): start()
        default: break
        }
        queue.async { [self] in
            switch command {
            case .load(let uri, let generation):
                // A load with a newer one queued behind it is skipped: the player has moved on to
                // the newer generation and ignores this one's events, so its pipeline would only be
                // built, prerolled and torn down for nothing. A client skipping through tracks
                // (make fuzz: ~90 loads a second) then costs one pipeline, not one per skip.
                let superseded = handlerLock.withLock {
                    loadsQueued -= 1
                    return loadsQueued > 0
                }
                if superseded { retire() } else { self.load(uri, generation: generation) }
            case .prepareNext(let uri, let generation): prepareNext(uri, generation: generation)
            case .setPlaying(let playing): setPlaying(playing)
            case .playAfterPreroll(let play): if let load { self.load?.playsAfterPreroll = play && pipeline != nil && !load.prerolled }
            case .release:
                retire(keepingWarm: true)
                // the load of the next item, if any, was queued with this release and runs first
                queue.async { [self] in if pipeline == nil { video.closeWindow() } }
            case .seek(let target, let mode, let rate): seek(target, mode: mode, rate: rate)
            case .setVolume(let volume): levels.setVolume(volume)
            case .setMuted(let muted): levels.setMuted(muted)
            case .fade(let target, let length): levels.fade(to: target, over: length)
            case .audio(.equalizer(let gains)):
                pipelines.equalizer = gains
                pipeline?.stages?.apply(equalizer: gains)
            case .audio(let command): levels.take(command)
            case .setOutput(let id):
                if outputs.choose(id) { dropPipelinesForOtherSink() }
            case .crossfade(.prepare(let uri, let generation)): prepareCrossfade(uri, generation: generation)
            case .crossfade(.start(let length)): startCrossfade(length: length)
            case .crossfade(.cancel): crossfade.dropIncoming()
            case .video(let command): video.perform(command)
            }
        }
    }

    // MARK: Pipelines (each an `EnginePipeline`: EnginePipeline.swift)

    /// The playbin that plays `uri`: the configured or recommended one, but for what
    /// `GStreamerQuirks.pipeline(for:default:configured:)` says; asked before each item is given to
    /// a pipeline, so the process's network defaults are set by then (`GStreamerQuirks.prepare`).
    private func pipelineKind(for uri: MediaURI) -> EngineConfiguration.PipelineKind {
        GStreamerQuirks.prepare(for: uri)
        return GStreamerQuirks.pipeline(for: uri, default: pipelineKind, configured: configuration.pipeline != nil)
    }

    /// Before the process ends: the output devices' monitor stops, closing its providers'
    /// connections (a sound server's among them) rather than leaving them to exit(). Waits for the
    /// engine's queue: never call it on a queue that must answer.
    public func stopWatchingOutputs() {
        guard isStarted else { return }
        queue.sync { outputs.stopWatching() }  // its source is cancelled, and the cancel handler lets the monitor go
        queue.sync {}  // that handler, queued on this queue, has run: gst_device_provider_stop is done
    }

    /// Waits until every retired pipeline reached NULL and was freed or kept warm (its device and
    /// files released either way), at most `timeout`; false when one has not. For tests and
    /// shutdown; never on a queue that must answer.
    public func waitForDisposals(timeout: TimeInterval) -> Bool {
        guard isStarted else { return true }  // no pipeline was ever built
        queue.sync {}  // the release commands queued so far have run
        return teardown.waitForDisposals(timeout: timeout)
    }

    /// Lets go of the current pipeline and its load: the pipeline goes back to `pipelines`, which
    /// takes it to NULL and, with `keepingWarm` (a release: Stop, the end of the queue), may keep
    /// it for the next load (`PipelineFactory.giveBack`); a load leaves nothing to keep.
    private func retire(keepingWarm: Bool = false) {
        dispatchPrecondition(condition: .onQueue(queue))
        prerollWatch.cancel()
        crossfade.dropIncoming()
        crossfade.endFadeOut()
        if let pipeline { pipelines.giveBack(pipeline, keepingWarm: keepingWarm) }
        pipeline = nil
        load = nil
    }

    /// The output moved between the snapserver and the sound server: a pipeline built for the other
    /// sink is no use (the player loads the current item again; `PlayerMachine.setOutput`).
    private func dropPipelinesForOtherSink() {
        crossfade.dropIncoming()
        pipelines.dropWarm()
    }

    // MARK: Commands, on the engine's queue

    private func load(_ uri: MediaURI, generation: Generation, isRetry: Bool = false) {
        dispatchPrecondition(condition: .onQueue(queue))
        retire()
        if case .failure(let error) = setUpResult {
            deliver(.failed(ItemError(.other, "GStreamer could not start: \(error.message)")), generation)
            return
        }
        if let error = LocalFiles.error(for: uri) {
            deliver(.failed(error), generation)
            return
        }
        let fresh: EnginePipeline
        do {
            fresh = try pipelines.forLoad(pipelineKind(for: uri))
        } catch {
            deliver(.failed(ItemError(.other, "cannot build a pipeline: \(error)")), generation)
            return
        }
        pipeline = fresh
        load = Load(uri, generation)
        readChapters(of: uri, generation)
        readLyricsSidecar(of: uri, generation)
        // per item: a display found now (the user manager's, when tonearmd has none) shows video
        try? video.choose(for: fresh, display: configuration.video ? VideoDisplay.find(for: uri) : nil)
        fresh.playbin.set("uri", uri.string)
        let started = fresh.playbin.setState(.paused)
        // an image beside the file is the cover until (unless) the file's own tags bring one: those
        // come later, from the bus, which this queue reads once the load is done, and replace it.
        // Looked for once the streaming threads are under way: the first item of a folder tries
        // each of its names (a stat each, 32 when there is none).
        if let beside = covers?.beside(uri) {
            var metadata = Metadata()
            metadata.coverURL = beside
            deliver(.tags(metadata), generation)
        }
        if started == .noPreroll {
            load?.prerolled = true  // a live source: the player asks for PLAYING when told
            fresh.gains.opensPlaying = true
            levels.apply(to: fresh.gains)
            deliver(.live, generation)
        } else if uri.isFile {
            prerollWatch.watch { [weak self, weak fresh] in
                guard let self, let fresh, fresh === pipeline, generation == load?.generation else { return }
                prerollStalled(uri, generation, isRetry: isRetry)
            }
        }
        // on .failure the ERROR message on the bus says why
    }

    /// A local file's preroll did not end within `PrerollWatch.limit`: it is loaded once more on a
    /// fresh pipeline, then failed.
    private func prerollStalled(_ uri: MediaURI, _ generation: Generation, isRetry: Bool) {
        let plays = load?.playsAfterPreroll ?? false
        defer { if pipeline != nil { load?.playsAfterPreroll = plays } }  // the load again, as asked
        if isRetry {
            retire()
            deliver(.failed(ItemError(.other, "\(uri.displayPath) did not start: GStreamer never finished opening it")), generation)
        } else {
            logger.warning("the pipeline did not preroll within \(prerollWatch.limit): trying a fresh one", metadata: ["uri": "\(uri)"])
            load(uri, generation: generation, isRetry: true)
        }
    }

    private func prepareNext(_ uri: MediaURI?, generation: Generation?) {
        guard let pipeline else { return }
        // a video followed by itself loops by segment seeks (`SegmentLoop`), once its video
        // reached the window; anything else leaves a loop
        let lap = uri != nil && uri == load?.uri && pipeline.lock.withLock({ pipeline.showedVideo }) ? generation : nil
        if lap != nil { pipeline.lock.withLock { pipeline.nextUp = nil } }
        if pipeline.loop.follow(pipeline.playbin, lap: lap) { return }
        // a next file that is missing is not switched to: the current one ends with EOS, and the
        // player's load of the next one fails with its own error
        var next = uri.flatMap { uri in generation.flatMap { LocalFiles.error(for: uri) == nil ? (uri, $0) : nil } }
        // nor is anything after a video on legacy playbin: its gapless switch from a file with
        // audio and video deadlocks 1.22.0 (see `SegmentLoop`); the next item loads at the EOS
        if pipeline.kind == .playbin, pipeline.lock.withLock({ pipeline.showedVideo }) { next = nil }
        // nor is an item that plays in the other playbin (`GStreamerQuirks.pipeline(for:)`)
        if let uri, pipelineKind(for: uri) != pipeline.kind { next = nil }
        pipeline.lock.withLock { pipeline.nextUp = next }
    }

    private func setPlaying(_ playing: Bool) {
        crossfade.hold(!playing)
        load?.playsAfterPreroll = false
        load?.redrawing = false
        load?.redrawAgain = false
        guard let pipeline, load != nil else { return }
        // the player's own PLAYING after a preroll that `playAfterPreroll` already took there
        if playing, pipeline.playbin.currentState == (.playing, .voidPending) { return }
        if playing, pipeline.toSnapcast, let pausedAt = pipeline.playbin.startTime, pausedAt > 0 {
            // snapserver played the stream's lead out while it was paused: resuming that much later
            // in running time sends a lead again at once (`SnapcastOutput.sinkDescription`); without
            // it every read of snapserver's was late and restarted its timestamps
            pipeline.playbin.startTime = pausedAt + UInt64(SnapcastOutput.lead)
        }
        pipeline.playbin.setState(playing ? .playing : .paused)
    }

    private func seek(_ target: SeekTarget, mode: SeekMode, rate: Double) {
        guard let pipeline, let generation = load?.generation else { return }
        load?.rate = rate
        load?.redrawing = false
        load?.redrawAgain = false
        load?.toldPosition = nil
        // a seek while a video loops keeps the loop's segment mode (`SegmentLoop`)
        var flags: SeekFlags = pipeline.loop.clientSeeks(rate: rate).union(.flush)
        switch mode {
        case .exact:
            flags.insert(.accurate)
        case .fast(let before, let after):
            flags.insert(.keyUnit)
            if before > .zero && after > .zero { flags.insert(.snapNearest) }
            else if before > .zero { flags.insert(.snapBefore) }
            else if after > .zero { flags.insert(.snapAfter) }
        }
        var start: Int64
        switch target {
        case .position(let position): start = max(position, .zero).nanoseconds
        case .current: start = pipeline.playbin.queryPosition() ?? 0
        }
        if load?.reportedLive == true, let window = pipeline.playbin.querySeeking()?.range {
            // a live playlist's window slides as it grows: a seek goes to the nearest time still
            // in it, as read now (hlsdemux 1.22.0 moves one before the window to its start, and
            // refuses one past its end: a client asking past the live edge wants the live edge)
            start = min(max(start, window.lowerBound), window.upperBound)
        }
        // An exact seek to a position lands on it (ACCURATE: the decoders clip to the segment's
        // start), so the player is told at its ASYNC_DONE with that position, with no query and no
        // hop through this queue. Armed before the seek: a flushing seek can preroll before
        // gst_element_seek returns. A rate change (`.current`), a key-unit seek (it lands where the
        // key unit is) and a live window (it slides) go the bus's way, with a snapshot.
        let awaits = if mode == .exact, case .position = target, load?.reportedLive != true { true } else { false }
        let seqnum = pipeline.playbin.numberedSeek(rate: rate, flags: flags, start: start) { seqnum in
            load?.seekSeqnum = seqnum
            if awaits { pipeline.lock.withLock { pipeline.awaitedSeek = (generation, .nanoseconds(start), seqnum) } }
        }
        if seqnum == nil {
            pipeline.lock.withLock { pipeline.awaitedSeek = nil }
            deliver(.seekRefused, generation)
        }
        pipeline.loop.clientSeekSent(seqnum)
    }

    // MARK: Queries, on the engine's queue

    private func positionSample() -> PositionSample? {
        guard let position = pipeline?.playbin.queryPosition() else { return nil }
        load?.toldPosition = position
        return PositionSample(.nanoseconds(position), at: .now)
    }

    private var duration: Duration? { pipeline?.playbin.queryDuration().map { .nanoseconds($0) } }

    private func loadedRanges(duration: Duration?) -> [TimeRange] {
        guard let pipeline, let duration, duration > .zero else { return [] }
        if load?.uri.isFile == true { return [TimeRange(start: .zero, end: duration)] }
        // downloadbuffer names an empty range at the end of a file a demuxer only peeked at (the
        // tail of a WAV file): nothing a client can play
        return (pipeline.playbin.queryBufferedRanges() ?? []).filter { $0.upperBound > $0.lowerBound }.map {
            TimeRange(start: duration * $0.lowerBound, end: duration * $0.upperBound)
        }
    }

    private func snapshot() -> EngineSnapshot {
        let duration = duration
        let seeking = pipeline?.playbin.querySeeking()
        return EngineSnapshot(position: positionSample(), duration: duration,
                              isSeekable: seeking?.seekable ?? false,
                              loadedRanges: loadedRanges(duration: duration),
                              seekableRange: seeking?.range.map { TimeRange(start: .nanoseconds($0.lowerBound), end: .nanoseconds($0.upperBound)) },
                              streamWakesWhilePaused: pipeline?.outputSink != nil && pipeline?.toSnapcast != true,
                              // issue 37: a length by the time it plays, not 0.45 s later at DURATION_CHANGED
                              durationEstimate: duration == nil && load?.uri.isFile == true
                                  ? pipeline?.playbin.audioParserDurationEstimate().map { .nanoseconds($0) } : nil)
    }

    /// A live HLS playlist (no EXT-X-ENDLIST) and internet radio preroll like files: souphttpsrc
    /// and hlsdemux are not live sources, so set_state never answers NO_PREROLL for them (gstplay.c
    /// reads liveness only from that). They are the network streams with no length once prerolled
    /// (gstadaptivedemux.c answers the duration query only when the playlist is not live; hlsdemux2
    /// still says it can seek, within the playlist's window) that are a playlist or an answer with
    /// no Content-Length (Icecast): an MP3 file over HTTP has no length at preroll either, until
    /// mpegaudioparse has seen enough frames.
    private func isLiveStream(_ snapshot: EngineSnapshot) -> Bool {
        guard let load, !load.uri.isFile, snapshot.duration == nil else { return false }
        guard let itemResponse = load.itemResponse else { return true }
        return itemResponse.contentLength == nil || itemResponse.contentType?.lowercased().contains("mpegurl") == true
    }

    // MARK: Bus

    private func drainBus(_ drained: EnginePipeline) {
        dispatchPrecondition(condition: .onQueue(queue))
        if crossfade.drain(drained) { return }
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
        if drained === pipeline, let error = errors.first(where: { $0.domain == GStreamerError.resourceDomain }) ?? errors.first {
            fail(error)
        }
    }

    private func fail(_ error: GStreamerError) {
        guard let pipeline, let load else { return }
        // an error after about-to-finish switched the uri belongs to the next item, unless it is
        // the output's: the sink still plays the current one
        let pending = pipeline.lock.withLock { pipeline.switching }
        let current = (load.uri, load.generation)
        var target = pending ?? current
        let (missingPlugin, failedResponses, itemResponse) = (load.missingPlugin, load.failedResponses, load.itemResponse)
        logger.debug("pipeline error", metadata: ["error": "\(error)", "debug": "\(error.debug ?? "")"])
        // the failed response the source saw, or the status a demuxer put in the error (hlsdemux2
        // downloads without souphttpsrc, so no http-headers message tells it)
        let http = failedResponses.last ?? error.httpStatus.map { ErrorMapping.HTTPFailure(uri: error.httpURI ?? target.0.string, status: $0) }
        var itemError = ErrorMapping.itemError(error, uri: target.0, missingPlugin: missingPlugin, http: http)
        if itemError.kind == .output, pending != nil {
            target = current
            itemError = ErrorMapping.itemError(error, uri: current.0, missingPlugin: missingPlugin, http: nil)
        }
        if itemError.kind == .unsupportedFormat, target.0 == load.uri, let itemResponse {
            // the server answered, with something that is not media: on a network, most often a
            // captive portal's login page or an error page sent with 200
            itemError = ErrorMapping.notMedia(uri: target.0, contentType: itemResponse.contentType)
        }
        if itemError.kind == .output { outputs.failed() }
        retire()
        deliver(.failed(itemError), target.1)
    }

    /// The chapters of the load `generation`, told when they differ from what was told of it.
    private func found(chapters: [Chapter], _ generation: Generation) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard var current = load, current.generation == generation, current.chapters != chapters else { return }
        current.chapters = chapters
        load = current
        deliver(.chapters(chapters), generation)
    }

    /// A local MP3's ID3v2 chapters, which no GStreamer element reads: its head is read beside the
    /// engine's queue (a file read can block), and what it holds told as the load's, if still current.
    private func readChapters(of uri: MediaURI, _ generation: Generation) {
        guard let path = uri.path, path.lowercased().hasSuffix(".mp3") else { return }
        fileReads.async { [weak self] in
            let chapters = ChapterReading.id3Chapters(path: path)
            guard !chapters.isEmpty, let self else { return }
            self.queue.async { self.found(chapters: chapters, generation) }
        }
    }

    /// A local file's `.lrc` beside it, read beside the engine's queue (a file read can block) and
    /// told as the load's tags; a `Metadata` with only `sidecarLyrics` replaces nothing else.
    private func readLyricsSidecar(of uri: MediaURI, _ generation: Generation) {
        guard uri.isFile else { return }
        fileReads.async { [weak self] in
            guard let lyrics = LyricsSidecar.read(besides: uri), let self else { return }
            self.queue.async {
                guard self.load?.generation == generation else { return }
                var metadata = Metadata()
                metadata.sidecarLyrics = lyrics
                self.deliver(.tags(metadata), generation)
            }
        }
    }

    private func deliver(_ event: EngineEvent, _ generation: Generation) {
        let handler = handlerLock.withLock { eventHandler }
        handler?(generation, event)
    }

    private func handle(_ message: Message) {
        guard let pipeline, let generation = load?.generation else { return }
        if video.endsRedraw(message) { return }  // a redraw of the paused frame is the video's own
        switch message.kind {
        case .stateChanged(let old, let new, let pending):
            // only the pipeline's own state changes count (trap 4)
            guard message.isFromPipeline else { return }
            // a crossfade's item played from its set base time: a start time again, so that a pause
            // or a seek moves the base time as GstPipeline does
            if new == .playing, pipeline.playbin.startTime == nil { pipeline.playbin.startTime = 0 }
            // PAUSED to PAUSED is a preroll again (a flushing seek, a redraw of the paused frame),
            // whose position comes with its ASYNC_DONE (a seek's) or is the one told (a redraw's)
            let position = old == new && new == .paused ? nil : positionSample()
            deliver(.stateChanged(Self.state(new) ?? .null, pending: Self.state(pending), position: position), generation)
        case .asyncDone:
            // After the preroll, an ASYNC_DONE is told to the player only as a seek's end: a pause's
            // or a play's, told while the player's next seek was on its way here, was taken for
            // that seek's end (Seeked at the paused position, and the seek's own end then taken
            // for nothing: ChapterTests, GoToChapter right after Pause). The state change tells
            // the player the rest. A seek's end is an ASYNC_DONE made after the seek was sent
            // (one on the bus from before it is older); an exact seek's comes as `.seekDone`.
            let seekEnd: Bool
            if load?.prerolled == true {
                if let sent = load?.seekSeqnum, !Seqnum.isOlder(message.seqnum, than: sent) {
                    load?.seekSeqnum = nil
                    seekEnd = true
                } else {
                    seekEnd = false
                }
            } else {
                seekEnd = true  // the preroll's: the player's load ends with it
            }
            prerollWatch.cancel()
            if load?.prerolled == false {
                load?.prerolled = true
                video.prerolled(pipeline)  // the window closes, or takes the video's size
                levels.streamOpened(pipeline.gains)
                // PLAYING before the snapshot's queries and the hop to the player: the sink renders
                // from the preroll buffer it holds
                if load?.playsAfterPreroll == true { pipeline.playbin.setState(.playing) }
                load?.playsAfterPreroll = false
                if load?.announcesAtPreroll == true {
                    load?.announcesAtPreroll = false
                    return deliver(.streamStarted(snapshot()), generation)
                }
            }
            let snapshot = snapshot()
            if load?.reportedLive == false, isLiveStream(snapshot) {
                load?.reportedLive = true
                deliver(.live, generation)
            }
            if seekEnd { deliver(.asyncDone(snapshot), generation) }
        case .streamStart:
            if load?.announcesAtPreroll == true { return }  // a crossfade's item is announced at its preroll
            // after about-to-finish, STREAM_START is the boundary to the next item (trap 2)
            let next = pipeline.lock.withLock { () -> (uri: MediaURI, generation: Generation)? in
                defer { pipeline.switching = nil }
                return pipeline.switching
            }
            if let next {
                load = load?.switched(to: next.uri, next.generation)
                readChapters(of: next.uri, next.generation)
                deliver(.streamStarted(snapshot()), next.generation)
            } else {
                deliver(.streamStarted(snapshot()), generation)
            }
        case .endOfStream:
            // hlsdemux (1.22.0) gives up on a segment that keeps failing (HTTP 404, 500) with EOS,
            // not an error (gst-launch-1.0 -m playbin on such a stream: four http-headers with the
            // status, then EOS): the stream ended because of it, and the item failed
            if let failure = load?.failedResponses.last, let uri = load?.uri, !uri.isFile {
                logger.info("the stream ended after a failed request", metadata: ["uri": "\(failure.uri)", "status": "\(failure.status)"])
                retire()
                deliver(.failed(ErrorMapping.endedByHTTPFailure(failure, uri: uri)), generation)
                return
            }
            deliver(.endOfStream, generation)
        case .httpResponse(let responseURI, let status, let contentType, let contentLength):
            load?.heard(response: responseURI, status: status, contentType: contentType, contentLength: contentLength)
        case .error(let error):
            fail(error)
        case .warning(let warning):
            logger.debug("pipeline warning", metadata: ["warning": "\(warning)"])
        case .missingPlugin(let description):
            // playbin3 prerolls without the stream it cannot decode and never errors, so a
            // missing decoder fails the item here; playbin errors after this message anyway
            load?.missingPlugin = description
            fail(GStreamerError(domain: GStreamerError.coreDomain, code: 12, message: description, source: message.source))
        case .tags(let tags):
            deliver(.tags(TagMapping.metadata(tags, covers: covers)), generation)
        case .buffering(let percent):
            // below 100% the player pauses, and plays on at 100% (gstplay.c buffering_cb)
            if percent < 100 { load?.playsAfterPreroll = false }
            deliver(.buffering(percent: percent, loadedRanges: loadedRanges(duration: duration)), generation)
        case .downloaded:
            deliver(.loaded(loadedRanges(duration: duration)), generation)
        case .durationChanged:
            deliver(.durationChanged(duration), generation)
        case .requestState(let state):
            if let state = Self.state(state) { deliver(.requestState(state), generation) }
        case .clockLost:
            // a new clock is chosen by going through PAUSED (gst-launch does the same)
            if pipeline.playbin.currentState.current == .playing {
                pipeline.playbin.setState(.paused)
                pipeline.playbin.setState(.playing)
            }
        case .gap(let start, let end):
            logger.warning("a stretch of the stream never came: playing on after it",
                           metadata: ["uri": "\(load?.uri.string ?? "")", "at": "\(Duration.nanoseconds(start))",
                                      "length": "\(Duration.nanoseconds(end - start))"])
            deliver(.gap(at: .nanoseconds(start), length: .nanoseconds(end - start)), generation)
        case .segmentDone(let seqnum):
            pipeline.loop.wrap(pipeline.playbin, done: seqnum)
        case .segmentReached(let seqnum):
            if let lap = pipeline.loop.wrapped(by: seqnum) { lapped(as: lap) }
        case .streamLevelsChanged:
            levels.streamReported(pipeline.gains)
        case .toc(let entries, _):
            found(chapters: ChapterReading.chapters(entries), generation)
        case .latency, .other:
            break
        }
    }

    // MARK: Video loops

    /// A video looping on itself started its next lap (`SegmentLoop.wrapped`): the player hears of
    /// the boundary as of a gapless switch to the same item (a `Seeked` to 0).
    private func lapped(as next: Generation) {
        load = load?.lapped(as: next)
        // the lap's start, not the position query's answer: that is the latest of the sinks', and an
        // audio sink whose lap ends a little later (AAC's last frame) still answers from the lap before
        var lap = snapshot()
        lap.position = PositionSample(.zero, at: .now)
        deliver(.streamStarted(lap), next)
    }

    // MARK: Crossfade

    /// Opens the next item for a crossfade in a pipeline of its own (`Crossfade.prepare`). Two
    /// streams at once need an output that takes two: a sound server does (it mixes them); an ALSA
    /// device opened directly does not, so there the item is armed for a gapless switch instead.
    private func prepareCrossfade(_ uri: MediaURI, generation: Generation) {
        crossfade.dropIncoming()
        guard let current = pipeline, current.gains.front != nil, !pipelines.exclusiveDevice, !current.toSnapcast, LocalFiles.error(for: uri) == nil,
              current.lock.withLock({ current.switching == nil }),  // about-to-finish switched already: gapless
              let fresh = try? pipelines.make(pipelineKind(for: uri)) else { return prepareNext(uri, generation: generation) }
        current.lock.withLock { current.nextUp = nil }  // the item plays in its own pipeline, not after this one
        // as a load does: a display found now shows its video (the window follows at its preroll)
        try? video.choose(for: fresh, display: configuration.video ? VideoDisplay.find(for: uri) : nil)
        crossfade.prepare(fresh, uri, generation)
    }

    /// Starts the prepared item and fades over `length` (`Crossfade.start`): it becomes the current
    /// pipeline, with a fresh load that is announced at its preroll.
    private func startCrossfade(length: Duration) {
        guard let current = pipeline else { return }
        crossfade.start(length: length, from: current) { next in
            prerollWatch.cancel()
            pipeline = next.pipeline
            load = Load(next.uri, next.generation, announcesAtPreroll: true)
            readChapters(of: next.uri, next.generation)
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

extension EngineConfiguration.PipelineKind {
    /// The default for the GStreamer this process runs on. On 1.22.0, taking a playbin3 to
    /// NULL while uridecodebin3 switches items at the end of a track deadlocks: the state
    /// change waits in a pad-removed handler for a lock that a multiqueue thread holds while
    /// it waits, in a pad probe, for the state lock (make fuzz --seed 11: about one pipeline
    /// in a thousand; its threads, buffers and, on ALSA, the sound device are never released).
    /// Legacy playbin never did in the same runs. From 1.24 on, playbin3 is the default (not
    /// tried here: Debian 12 has only 1.22.0).
    public static var recommended: Self {
        let version = GStreamer.versionNumbers
        return (version.major, version.minor) >= (1, 24) ? .playbin3 : .playbin
    }
}
