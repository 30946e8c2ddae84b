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
    public var pipelinesBuilt: Int { handlerLock.withLock { built } }
    /// The factories of the elements in the current pipeline's audio filter (`AudioStages`), for
    /// tests: a stage that is off is not among them. Waits for the engine's queue.
    public var audioFilterElements: [String] { isStarted ? queue.sync { pipeline?.stages?.filterElements ?? [] } : [] }

    private let queue: DispatchQueue
    private let logger: Logger
    /// Where embedded cover images go, and where images beside a file are looked for; nil: none.
    private let covers: CoverCache?
    /// What `setUp` chose, or why it failed; nil until it has run (first on `queue`).
    private var setUpResult: Result<EngineSetUp, GStreamerError>?
    /// The output chosen once at start: a bin description, or nil for `autoaudiosink`.
    private var sinkDescription: String?

    private let handlerLock = Lock()
    private var eventHandler: (@Sendable (Generation, EngineEvent) -> Void)?
    /// Loads handed to `queue` and not run yet, guarded by `handlerLock`.
    private var loadsQueued = 0
    /// See `pipelinesBuilt`; guarded by `handlerLock`.
    private var built = 0
    /// Pipelines on their way to NULL, the waits for them, and a kept pipeline's way back
    /// (`PipelineTeardown.swift`).
    private let teardown: PipelineTeardown

    // Guarded by `queue`.
    /// The pipeline of the current load; nil after a release or a failure.
    private var pipeline: EnginePipeline?
    /// A released pipeline back in NULL (device and file let go of), kept for the next load while
    /// no other pipeline exists; see `retire(keepingWarm:)`.
    private var warm: EnginePipeline?
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
    /// ReplayGain and the equalizer as the player last asked (`AudioStages.swift`).
    private var audio = EngineAudio()
    /// The output devices and the one chosen (`OutputRouter.swift`); nil unless the sink is the
    /// default path's pulsesink.
    private var outputs: OutputRouter?
    /// The device monitor went with the sound server (see `outputFailed`): the next pulsesink
    /// pipeline starts a new one.
    private var outputsLost = false
    /// The output the player chose, for a router made after the choice.
    private var chosenOutput = Outputs.defaultID
    /// The stall timer of the preroll under way, if any (see `watchPreroll`).
    private var prerollWatch: (any DispatchSourceTimer)?
    private static let prerollLimit = DispatchTimeInterval.seconds(8)
    /// A jump in the stream's timestamps longer than this is a gap worth telling (AAC and MP3
    /// frames are 20-30 ms; a segment is seconds).
    private static let gapThreshold = Duration.milliseconds(500)

    // GstPlayFlags is not public (gst/playback/gstplay-enum.h): SOFT_VOLUME 0x10 (the video's are
    // `VideoOutput`'s).
    private static let flagSoftVolume: UInt32 = 0x10
    private static let flagDownload: UInt32 = 0x80
    /// An HTTP file's `LoadedRanges` are told each time its download passes another twentieth of
    /// it (and at its end): as coarse as `BufferingPercent`'s steps of 5.
    private static let downloadSteps: UInt32 = 20
    /// Whether HTTP files are downloaded to a temporary file (playbin's download flag), which
    /// needs a cache directory to write to.
    private var downloads = false
    /// The output is an ALSA device that only one pipeline can open: a load waits for the previous
    /// pipeline to let it go (`PipelineTeardown.deviceWait`).
    private var waitsForDisposal = false
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
            let sink = try Self.chooseAudioSink(configuration, logger: logger)
            sinkDescription = sink.description
            waitsForDisposal = sink.shown.contains("alsasink")
            downloads = Self.prepareDownloadDirectory(logger: logger)
            // the pipeline's factory must exist; the pipeline itself is built at the first load, so
            // the set-up does not wait for a playbin that is thrown away
            guard GStreamer.hasElement(pipelineKind.rawValue) else {
                throw GStreamerError(domain: GStreamerError.coreDomain, code: 12,
                                     message: "GStreamer element '\(pipelineKind.rawValue)' is not installed")
            }
            setUpResult = .success(EngineSetUp(audioSinkDescription: sink.shown))
            if sink.description == Self.pulseSink { watchOutputs() }
            if outputs == nil, configuration.snapcast != nil { reportDevices([]) }
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
        if let warm { PipelineTeardown.dispose(warm, wait: nil) }
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
            case .audio(let command):
                audio.take(command)
                pipeline?.stages?.apply(audio)
            case .setOutput(let id):
                let wasSnapcast = streamsToSnapcast
                chosenOutput = id
                outputs?.choose(id)
                if streamsToSnapcast != wasSnapcast { dropPipelinesForOtherSink() }
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

    private func makePipeline(_ kind: EngineConfiguration.PipelineKind) throws -> EnginePipeline {
        let playbin = try Element(factory: kind.rawValue, name: "tonearm", isPipeline: true)
        handlerLock.withLock { built += 1 }
        if kind == .playbin3 { GStreamerQuirks.configure(playbin3: playbin) }
        guard let bus = playbin.bus else { throw GStreamerError(domain: GStreamerError.coreDomain, code: 0, message: "playbin has no bus") }
        let sink = try makeSink()
        playbin.set("audio-sink", sink)
        // pitch holds across rates: rate changes are seeks and scaletempo stretches time. Each
        // pipeline has a scaletempo of its own, never reused across a READY cycle: its stop()
        // frees the sample queue but keeps the count of bytes queued, and the next buffer at a
        // rate other than 1 with a smaller queue (a lower rate, fewer channels) memmoves from the
        // freed NULL queue: SIGSEGV on a streaming thread (gstscaletempo.c 1.22.0 reinit_buffers,
        // line 396; since c985ea31 "Free the various buffers in stop()", not fixed upstream as
        // of 1.28; bugzilla 775898 fixed only the rebuild flag).
        // Volume and mute live in a `volume` element of our own after scaletempo, and playbin's
        // soft-volume flag is off: with it on, playsink 1.22.0 never finalizes the volume element it
        // links for soft volume, so every pipeline leaks that element and its two pads (valgrind:
        // one GstVolume and its pads "still reachable" per load).
        let (volumeElement, stages) = try installFilter(on: playbin)
        var flags = playbin.flags("flags") & ~Self.flagSoftVolume
        // An HTTP file of a known size is downloaded whole into a temporary file, nameless from
        // the moment it is made so that it goes with the pipeline, in GLib's user cache directory
        // (gsturidecodebin.c 1.22.0 type_found, gsturisourcebin.c setup_downloadbuffer): its
        // buffering query then names the ranges downloaded, which queue2's memory queue never
        // does. HLS and radio (no Content-Length) keep the memory queue.
        if downloads {
            flags |= Self.flagDownload
            playbin.unlinkTemporaryFiles()
        }
        playbin.set("flags", flags: flags)
        let source = DispatchSource.makeReadSource(fileDescriptor: bus.fileDescriptor, queue: queue)
        let gains = GainStages(stream: sink.child(named: Self.pulseSinkName), front: sink.child(named: "tonearm-fade"),
                               filter: volumeElement)
        let pipeline = EnginePipeline(playbin: playbin, kind: kind, gains: gains, bus: bus, busSource: source)
        pipeline.outputSink?.watchStreamLevels()
        // once the sink is known: the stream gets its levels when it opens (else the server's
        // remembered volume for Tonearm applies, and the levels stay on the element in front)
        levels.apply(to: gains)
        pipeline.toSnapcast = sink.child(named: SnapcastOutput.sinkName) != nil
        pipeline.outputSink?.set("latency-time", Self.pulseLatencyTime)
        pipeline.outputSink?.set("buffer-time", Self.pulseBufferTime)
        if outputsLost, pipeline.outputSink != nil { watchOutputs() }
        outputs?.route(pipeline.outputSink)
        pipeline.stages = stages
        // the video flags and sink are chosen per load (`VideoOutput.choose`); until then, none
        try video.choose(for: pipeline, display: nil)
        // The ASYNC_DONE that ends an exact seek goes from the thread that posts it to the player,
        // not through the bus's fd and this queue (make bench, SetPosition -> Seeked: two thread
        // wake-ups and the snapshot's queries less); see `seek`. The children's state changes and
        // the stream-status messages, which `handle` never reads, are dropped as they are posted:
        // a load of the bench's MP3 into a kept playbin posts about 100 of them (in 7 bursts that
        // each woke this queue while the streaming threads prerolled), and its way to PLAYING 23
        // more, all read and copied into Swift here before the pipeline's own state change.
        bus.takeAsyncDone(dropping: [.childStateChanges, .streamStatus], windowFor: { [weak self, weak pipeline] width, height in
            // a streaming thread, in the sync handler: the sink draws into our window (trap 12)
            guard let self, let pipeline else { return nil }
            return video.window(for: pipeline, width: width, height: height)
        }) { [weak self, weak pipeline] in
            guard let self, let pipeline else { return false }
            let awaited: (generation: Generation, position: Duration)? = pipeline.lock.withLock {
                defer { pipeline.awaitedSeek = nil }
                return pipeline.awaitedSeek
            }
            guard let awaited else { return false }
            deliver(.seekDone(PositionSample(awaited.position, at: .now)), awaited.generation)
            return true
        }
        source.setEventHandler { [weak self, weak pipeline] in
            guard let self, let pipeline else { return }
            self.drainBus(pipeline)
        }
        // the bus (and with it the fd the source watches) lives until the cancellation completed:
        // libdispatch must not watch a closed fd (dispatch_source_cancel(3))
        source.setCancelHandler { withExtendedLifetime(pipeline) {} }
        source.resume()
        pipeline.aboutToFinish = AboutToFinish.connect(playbin) { [weak pipeline] in pipeline?.onAboutToFinish() }
        // downloadbuffer posts BUFFERING only until its read-ahead is full, and nothing as the
        // rest of the file arrives (gstdownloadbuffer.c 1.22.0 update_buffering: it posts only
        // while is_buffering): the source's own bytes tell when more was downloaded
        pipeline.sourceSetup = SourceSetup.connect(playbin, unsignedProperties: [
            ("timeout", UInt32(clamping: configuration.networkTimeout.components.seconds)),
        ], signedProperties: GStreamerQuirks.sourceSignedProperties, downloadSteps: downloads ? Self.downloadSteps : 0)
        return pipeline
    }

    /// The audio sink, with a volume element in front of it for volume, mute and the sleep timer's
    /// fade. Not in the audio filter: playsink queues about a second after its filter, so a fade
    /// there was heard a second late and cut off at ~15% by the pause (SleepTimerServiceTests,
    /// through a WAV capture), and a Volume or mute there was heard 1.2 s after the call on a real
    /// PulseAudio (SoundServerTests); in front of the sink only the sink's own buffer is left.
    private func makeSink() throws -> Element {
        if streamsToSnapcast, let snapcast = configuration.snapcast {
            return try Element(binDescription: "volume name=tonearm-fade ! \(snapcast.sinkDescription)")
        }
        let description = sinkDescription ?? "autoaudiosink"
        if let sink = try? Element(binDescription: "volume name=tonearm-fade ! \(description)") { return sink }
        logger.warning("the audio sink takes no volume element in front of it: the sleep timer will pause without fading",
                       metadata: ["sink": "\(description)"])
        return try sinkDescription.map { try Element(binDescription: $0) } ?? Element(factory: "autoaudiosink")
    }

    /// Gives `playbin` a fresh audio filter (scaletempo, the stages turned on, then our volume
    /// element, at 1 until `OutputLevels` sets it) and returns that volume element and the stages.
    private func installFilter(on playbin: Element) throws -> (volume: Element?, stages: AudioStages?) {
        let filter = try Element(binDescription: "scaletempo name=tonearm-tempo ! volume name=tonearm-volume")
        let stages = AudioStages(filter: filter)
        stages?.apply(audio)
        let volumeElement = filter.child(named: "tonearm-volume")
        // a stretch that never reaches the filter is reported: legacy hlsdemux and tsdemux skip an
        // HLS segment that is not media without any message (gst-launch-1.0 -m: nothing between
        // the segments, only the next one's timestamps 2 s later)
        filter.watchForGaps(longerThan: Self.gapThreshold)
        playbin.set("audio-filter", filter)
        return (volumeElement, stages)
    }

    /// The pipeline for a load: the one kept warm since the last release (see `retire`), with a
    /// fresh filter, when it is of `kind`, or a new one.
    private func pipelineForLoad(_ kind: EngineConfiguration.PipelineKind) throws -> EnginePipeline {
        guard let kept = warm else { return try makePipeline(kind) }
        warm = nil
        guard kept.kind == kind else {
            letGo(kept)
            return try makePipeline(kind)
        }
        // its fresh filter went in when it was kept (see `adopt`); volume and mute may have changed.
        // Its stream was released in READY, and pulsesink gives the server a volume only for the
        // stream it opens next (gst_pulseringbuffer_acquire: else the server's saved one applies)
        kept.gains.streamReopens()
        levels.apply(to: kept.gains)
        outputs?.route(kept.outputSink)
        kept.stages?.apply(audio)
        // a retired pipeline's bus was set flushing for its teardown (see `PipelineTeardown.dispose`)
        kept.bus.setFlushing(false)
        return kept
    }

    /// Before the process ends: the output devices' monitor stops, closing its providers'
    /// connections (a sound server's among them) rather than leaving them to exit(). Waits for the
    /// engine's queue: never call it on a queue that must answer.
    public func stopWatchingOutputs() {
        guard isStarted else { return }
        queue.sync { outputs = nil }  // its source is cancelled, and the cancel handler lets the monitor go
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

    /// A released pipeline back in NULL: kept warm for the next load while the engine has no
    /// other, else freed (a load came meanwhile and built its own: one pipeline at a time stays).
    /// A kept one gets the next load's fresh filter now, not on that load's way to its first
    /// buffer, where parsing and linking `scaletempo ! volume` showed (make bench's "OpenUri ->
    /// Position" row).
    private func adopt(_ kept: EnginePipeline) {
        dispatchPrecondition(condition: .onQueue(queue))
        if pipeline == nil, warm == nil, kept.toSnapcast == streamsToSnapcast, let filter = try? installFilter(on: kept.playbin) {
            kept.gains.filter = filter.volume
            kept.stages = filter.stages
            levels.apply(to: kept.gains)
            warm = kept
        } else {
            PipelineTeardown.free(kept)
        }
    }

    /// Lets go of the current pipeline: to NULL on a thread of its own. With `keepingWarm` (a
    /// release: Stop, the end of the queue), a legacy playbin that prerolled comes back to `warm`
    /// once in NULL, and the next load sets its URI instead of building a pipeline: its
    /// uridecodebin and playsink's chain are kept, which halves the time to the first buffer
    /// (make bench's "OpenUri -> Position" row, against Benchmarks/floor/firstbuffer.c). playbin3
    /// gained nothing there, and a reused playbin3 that failed aborts on 1.22.0 (see
    /// `EnginePipeline`): it is never kept. A pipeline that failed, or one
    /// left for the next item (a load), is never kept either.
    private func retire(keepingWarm: Bool = false) {
        dispatchPrecondition(condition: .onQueue(queue))
        prerollWatch?.cancel()
        prerollWatch = nil
        crossfade.dropIncoming()
        crossfade.endFadeOut()
        if let pipeline {
            let prerolled = [.paused, .playing].contains(pipeline.playbin.currentState.current)
            var keep: (@Sendable (EnginePipeline) -> Void)?
            if keepingWarm && prerolled && pipeline.kind == .playbin && !pipeline.lock.withLock({ pipeline.showedVideo }) {
                keep = { [weak self] kept in
                    guard let self else { return kept.busSource.cancel() }
                    queue.async { self.adopt(kept) }
                }
            }
            letGo(pipeline, keep: keep)
        }
        pipeline = nil
        load = nil
    }

    /// Takes `pipeline` to NULL on a thread of its own, counted among the teardowns under way
    /// (`PipelineTeardown.letGo`).
    private func letGo(_ pipeline: EnginePipeline, keep: (@Sendable (EnginePipeline) -> Void)? = nil) {
        teardown.letGo(pipeline, exclusiveDevice: waitsForDisposal, keep: keep)
    }

    /// Makes GLib's user cache directory (`$XDG_CACHE_HOME`, else `~/.cache`: where downloadbuffer
    /// puts its temporary files) if it is missing; false when it cannot be written to, and HTTP
    /// files are then buffered in memory as before (their `LoadedRanges` stay empty).
    private static func prepareDownloadDirectory(logger: Logger) -> Bool {
        let environment = ProcessInfo.processInfo.environment
        let directory = environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? environment["HOME"].map { $0 + "/.cache" }
        guard let directory else { return false }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard FileManager.default.isWritableFile(atPath: directory) else {
            logger.notice("cannot write to \(directory): HTTP files are buffered in memory, with no loaded ranges")
            return false
        }
        return true
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

    /// What autoaudiosink chose when it found a PulseAudio (or pipewire-pulse) server: the same
    /// sink, named, for `OutputRouter`.
    private static let pulseSinkName = "tonearm-sink"
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

    /// Tells the player the output devices: the sound server's, and the snapserver's if one is
    /// configured.
    private func reportDevices(_ devices: [OutputDevice]) {
        deliver(.outputs(devices + (configuration.snapcast.map { [$0.device] } ?? [])), load?.generation ?? Generation(0))
    }

    /// The chosen output is the configured snapserver: pipelines are built with its sink.
    private var streamsToSnapcast: Bool { chosenOutput == SnapcastOutput.id && configuration.snapcast != nil }

    /// The output moved between the snapserver and the sound server: a pipeline built for the other
    /// sink is no use (the player loads the current item again; `PlayerMachine.setOutput`).
    private func dropPipelinesForOtherSink() {
        crossfade.dropIncoming()
        if let kept = warm {
            warm = nil
            letGo(kept)
        }
    }

    /// Starts watching the output devices; the player hears of them, and the sinks move as the
    /// chosen device or the server's default comes and goes.
    private func watchOutputs() {
        outputs = OutputRouter(queue: queue, logger: logger, reportDevices: { [weak self] devices in
            self?.reportDevices(devices)
        }, moveSinks: { [weak self] in
            guard let self else { return }
            outputs?.route(pipeline?.outputSink)
            outputs?.route(warm?.outputSink)
        })
        outputsLost = outputs == nil
        guard let outputs else {
            logger.notice("no output devices listed: the sound server's device monitor did not start")
            return
        }
        outputs.choose(chosenOutput)
        outputs.reportNow()
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
            fresh = try pipelineForLoad(pipelineKind(for: uri))
        } catch {
            deliver(.failed(ItemError(.other, "cannot build a pipeline: \(error)")), generation)
            return
        }
        pipeline = fresh
        load = Load(uri, generation)
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
            watchPreroll(of: fresh, uri, generation, isRetry: isRetry)
        }
        // on .failure the ERROR message on the bus says why
    }

    /// A local file prerolls in milliseconds; one that has not within `prerollLimit` is stuck:
    /// playbin3 1.22.0 now and then never finishes a preroll under load (its typefind and
    /// multiqueue threads wait for each other; seen in the engine tests on a busy machine, and
    /// trap 6 of the design brief). It is loaded once more on a fresh pipeline, then failed.
    /// The timer exists only while a preroll is under way; ASYNC_DONE or a retire cancels it.
    private func watchPreroll(of watched: EnginePipeline, _ uri: MediaURI, _ generation: Generation, isRetry: Bool) {
        // A timer source, not asyncAfter: a cancelled source leaves libdispatch's timer heap at
        // once, while a cancelled asyncAfter work item still wakes the process when it falls due.
        let watch = DispatchSource.makeTimerSource(queue: queue)
        watch.setEventHandler { [weak self, weak watched] in
            guard let self, let watched, watched === self.pipeline, generation == self.load?.generation else { return }
            self.prerollWatch?.cancel()
            self.prerollWatch = nil
            let plays = load?.playsAfterPreroll ?? false
            defer { if pipeline != nil { load?.playsAfterPreroll = plays } }  // the load again, as asked
            if isRetry {
                retire()
                deliver(.failed(ItemError(.other, "\(uri.displayPath) did not start: GStreamer never finished opening it")), generation)
            } else {
                logger.warning("the pipeline did not preroll within \(Self.prerollLimit): trying a fresh one",
                               metadata: ["uri": "\(uri)"])
                load(uri, generation: generation, isRetry: true)
            }
        }
        prerollWatch?.cancel()
        prerollWatch = watch
        watch.schedule(deadline: .now() + Self.prerollLimit)
        watch.resume()
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
        if mode == .exact, case .position = target, load?.reportedLive != true {
            pipeline.lock.withLock { pipeline.awaitedSeek = (generation, .nanoseconds(start)) }
        }
        let seqnum = pipeline.playbin.numberedSeek(rate: rate, flags: flags, start: start)
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
        if itemError.kind == .output { outputFailed() }
        retire()
        deliver(.failed(itemError), target.1)
    }

    /// The output failed, most often because the sound server went away: the device monitor's
    /// connection went with it, and the pulse provider neither reconnects nor says so (GStreamer
    /// 1.22 pulsedeviceprovider.c), so `Outputs` would stop following hot-plug. It goes now, the
    /// devices with it, and the next pulsesink pipeline (Play once the server is back) starts a
    /// new one.
    private func outputFailed() {
        guard outputs != nil else { return }
        outputs = nil
        outputsLost = true
        deliver(.outputs([]), load?.generation ?? Generation(0))
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
            prerollWatch?.cancel()
            prerollWatch = nil
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
            deliver(.asyncDone(snapshot), generation)
        case .streamStart:
            if load?.announcesAtPreroll == true { return }  // a crossfade's item is announced at its preroll
            // after about-to-finish, STREAM_START is the boundary to the next item (trap 2)
            let next = pipeline.lock.withLock { () -> (uri: MediaURI, generation: Generation)? in
                defer { pipeline.switching = nil }
                return pipeline.switching
            }
            if let next {
                load = load?.switched(to: next.uri, next.generation)
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
        guard let current = pipeline, current.gains.front != nil, !waitsForDisposal, !current.toSnapcast, LocalFiles.error(for: uri) == nil,
              current.lock.withLock({ current.switching == nil }),  // about-to-finish switched already: gapless
              let fresh = try? makePipeline(pipelineKind(for: uri)) else { return prepareNext(uri, generation: generation) }
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
            prerollWatch?.cancel()
            prerollWatch = nil
            pipeline = next.pipeline
            load = Load(next.uri, next.generation, announcesAtPreroll: true)
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
