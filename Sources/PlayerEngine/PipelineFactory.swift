import Basics
import Dispatch
import EngineLink
import FoundationEssentials
import GStreamer
import Logging
import PlayerModel

/// The one owner of building and keeping pipelines: it makes a pipeline of a kind with its sink
/// (`AudioOutputs`), its audio filter (`AudioStages`, with the equalizer as last asked), its gain
/// stages set (`OutputLevels`), its video sink (`VideoOutput`) and its bus watched on the engine's
/// queue; it keeps a released legacy playbin warm for the next load and hands it out when it fits;
/// and it lets a pipeline go through `PipelineTeardown`. `GStreamerEngine` asks it for a pipeline
/// and gives it back; confined to the engine's queue.
final class PipelineFactory: @unchecked Sendable {
    // @unchecked: every mutable field is confined to the engine's queue; a dispose thread only
    // queues a kept pipeline's `adopt` there.
    private let configuration: EngineConfiguration
    private let queue: DispatchQueue
    private let logger: Logger
    private let outputs: AudioOutputs
    private let levels: OutputLevels
    private let video: VideoOutput
    private let teardown: PipelineTeardown
    /// Whether the engine has a current pipeline now: a pipeline back in NULL is kept only while
    /// it has none (see `adopt`).
    private let hasCurrent: () -> Bool
    /// The engine, held while a pipeline back from its teardown is adopted: `levels` and `outputs`
    /// call back into it (a retained engine, as when the engine itself queued the adoption).
    private weak var owner: AnyObject?
    /// Reads a pipeline's bus, on the engine's queue, when its fd wakes it (`GStreamerEngine.drainBus`).
    private let drain: (EnginePipeline) -> Void
    /// Told, on the thread that posts it, the ASYNC_DONE that ends an exact seek: the generation
    /// and position the seek was armed with (`EnginePipeline.awaitedSeek`).
    private let seekDone: @Sendable (Generation, Duration, UInt32) -> Void

    /// The equalizer's gains as the player last asked (`AudioStages.swift`): every new filter gets them.
    var equalizer = Equalizer.flat
    /// The output is an ALSA device that only one pipeline can open: a load waits for the previous
    /// pipeline to let it go (`PipelineTeardown.deviceWait`). Set by `setUp`.
    private(set) var exclusiveDevice = false
    /// Whether HTTP files are downloaded to a temporary file (playbin's download flag), which
    /// needs a cache directory to write to. Set by `setUp`.
    private(set) var downloads = false
    /// A released pipeline back in NULL (device and file let go of), kept for the next load while
    /// no other pipeline exists; see `giveBack(_:keepingWarm:)`.
    private(set) var warm: EnginePipeline?
    /// How many pipelines were built so far (a load that takes the one kept warm builds none).
    private(set) var built = 0

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

    init(configuration: EngineConfiguration, queue: DispatchQueue, logger: Logger, outputs: AudioOutputs, levels: OutputLevels,
         video: VideoOutput, teardown: PipelineTeardown, owner: AnyObject, hasCurrent: @escaping () -> Bool,
         drain: @escaping (EnginePipeline) -> Void, seekDone: @escaping @Sendable (Generation, Duration, UInt32) -> Void) {
        self.configuration = configuration
        self.queue = queue
        self.logger = logger
        self.outputs = outputs
        self.levels = levels
        self.video = video
        self.teardown = teardown
        self.owner = owner
        self.hasCurrent = hasCurrent
        self.drain = drain
        self.seekDone = seekDone
    }

    deinit {
        if let warm { PipelineTeardown.dispose(warm, wait: nil) }
    }

    /// At the engine's set-up, once the sink is chosen: whether it is a device only one pipeline
    /// can open, and whether HTTP files can be downloaded.
    func setUp(exclusiveDevice: Bool) {
        self.exclusiveDevice = exclusiveDevice
        downloads = Self.prepareDownloadDirectory(logger: logger)
    }

    /// A new pipeline of `kind`.
    func make(_ kind: EngineConfiguration.PipelineKind) throws -> EnginePipeline {
        dispatchPrecondition(condition: .onQueue(queue))
        let playbin = try Element(factory: kind.rawValue, name: "tonearm", isPipeline: true)
        built += 1
        if kind == .playbin3 { GStreamerQuirks.configure(playbin3: playbin) }
        guard let bus = playbin.bus else { throw GStreamerError(domain: GStreamerError.coreDomain, code: 0, message: "playbin has no bus") }
        let sink = try outputs.makeSink()
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
        let gains = GainStages(stream: sink.child(named: AudioOutputs.pulseSinkName), front: sink.child(named: "tonearm-fade"),
                               filter: volumeElement)
        let pipeline = EnginePipeline(playbin: playbin, kind: kind, gains: gains, bus: bus, busSource: source)
        pipeline.outputSink?.watchStreamLevels()
        // once the sink is known: the stream gets its levels when it opens (else the server's
        // remembered volume for Tonearm applies, and the levels stay on the element in front)
        levels.apply(to: gains)
        pipeline.toSnapcast = sink.child(named: SnapcastOutput.sinkName) != nil
        outputs.route(new: pipeline.outputSink)
        pipeline.stages = stages
        // the video flags and sink are chosen per load (`VideoOutput.choose`); until then, none
        try video.choose(for: pipeline, display: nil)
        // The ASYNC_DONE that ends an exact seek goes from the thread that posts it to the player,
        // not through the bus's fd and the engine's queue (make bench, SetPosition -> Seeked: two
        // thread wake-ups and the snapshot's queries less); see `GStreamerEngine.seek`. The
        // children's state changes and the stream-status messages, which `handle` never reads, are
        // dropped as they are posted: a load of the bench's MP3 into a kept playbin posts about 100
        // of them (in 7 bursts that each woke the queue while the streaming threads prerolled), and
        // its way to PLAYING 23 more, all read and copied into Swift there before the pipeline's
        // own state change.
        let seekDone = seekDone
        bus.takeAsyncDone(dropping: [.childStateChanges, .streamStatus], windowFor: { [weak video = self.video, weak pipeline] width, height in
            // a streaming thread, in the sync handler: the sink draws into our window (trap 12)
            guard let video, let pipeline else { return nil }
            return video.window(for: pipeline, width: width, height: height)
        }) { [weak pipeline] seqnum in
            guard let pipeline else { return false }
            let awaited: (generation: Generation, position: Duration, seqnum: UInt32)? = pipeline.lock.withLock {
                // an ASYNC_DONE made before the seek (a pause's, posted as the seek was armed) is not its end
                guard let awaited = pipeline.awaitedSeek, !Seqnum.isOlder(seqnum, than: awaited.seqnum) else { return nil }
                pipeline.awaitedSeek = nil
                return awaited
            }
            guard let awaited else { return false }
            seekDone(awaited.generation, awaited.position, awaited.seqnum)
            return true
        }
        let drain = drain
        source.setEventHandler { [weak pipeline] in
            guard let pipeline else { return }
            drain(pipeline)
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

    /// The pipeline for a load: the one kept warm since the last release (see `giveBack`), with a
    /// fresh filter, when it is of `kind`, or a new one.
    func forLoad(_ kind: EngineConfiguration.PipelineKind) throws -> EnginePipeline {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let kept = warm else { return try make(kind) }
        warm = nil
        guard kept.kind == kind else {
            letGo(kept)
            return try make(kind)
        }
        // its fresh filter went in when it was kept (see `adopt`); volume and mute may have changed.
        // Its stream was released in READY, and pulsesink gives the server a volume only for the
        // stream it opens next (gst_pulseringbuffer_acquire: else the server's saved one applies)
        kept.gains.streamReopens()
        levels.apply(to: kept.gains)
        outputs.route(kept.outputSink)
        kept.stages?.apply(equalizer: equalizer)
        // a retired pipeline's bus was set flushing for its teardown (see `PipelineTeardown.dispose`)
        kept.bus.setFlushing(false)
        return kept
    }

    /// Takes back the engine's pipeline, which it no longer holds: to NULL on a thread of its own.
    /// With `keepingWarm` (a release: Stop, the end of the queue), a legacy playbin that prerolled
    /// comes back to `warm` once in NULL, and the next load sets its URI instead of building a
    /// pipeline: its uridecodebin and playsink's chain are kept, which halves the time to the
    /// first buffer (make bench's "OpenUri -> Position" row, against
    /// Benchmarks/floor/firstbuffer.c). playbin3 gained nothing there, and a reused playbin3 that
    /// failed aborts on 1.22.0 (see `EnginePipeline`): it is never kept. A pipeline that failed,
    /// one that showed video (its sink holds the window's id), or one left for the next item (a
    /// load), is never kept either.
    func giveBack(_ pipeline: EnginePipeline, keepingWarm: Bool) {
        dispatchPrecondition(condition: .onQueue(queue))
        let prerolled = [.paused, .playing].contains(pipeline.playbin.currentState.current)
        var keep: (@Sendable (EnginePipeline) -> Void)?
        if keepingWarm && prerolled && pipeline.kind == .playbin && !pipeline.lock.withLock({ pipeline.showedVideo }) {
            let queue = queue
            keep = { [weak self] kept in
                guard let self else { return kept.busSource.cancel() }
                queue.async { self.adopt(kept) }
            }
        }
        letGo(pipeline, keep: keep)
    }

    /// Lets go of the pipeline kept warm, if any: the output moved to another sink, for which it
    /// was not built.
    func dropWarm() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let kept = warm else { return }
        warm = nil
        letGo(kept)
    }

    /// A released pipeline back in NULL: kept warm for the next load while the engine has no
    /// other, else freed (a load came meanwhile and built its own: one pipeline at a time stays).
    /// A kept one gets the next load's fresh filter now, not on that load's way to its first
    /// buffer, where parsing and linking `scaletempo ! volume` showed (make bench's "OpenUri ->
    /// Position" row).
    private func adopt(_ kept: EnginePipeline) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let owner else { return PipelineTeardown.free(kept) }  // the engine went meanwhile
        defer { withExtendedLifetime(owner) {} }
        if !hasCurrent(), warm == nil, kept.toSnapcast == outputs.streamsToSnapcast, let filter = try? installFilter(on: kept.playbin) {
            kept.gains.filter = filter.volume
            kept.stages = filter.stages
            levels.apply(to: kept.gains)
            warm = kept
        } else {
            PipelineTeardown.free(kept)
        }
    }

    /// Takes `pipeline` to NULL on a thread of its own, counted among the teardowns under way
    /// (`PipelineTeardown.letGo`).
    private func letGo(_ pipeline: EnginePipeline, keep: (@Sendable (EnginePipeline) -> Void)? = nil) {
        teardown.letGo(pipeline, exclusiveDevice: exclusiveDevice, keep: keep)
    }

    /// Gives `playbin` a fresh audio filter (scaletempo, the equalizer when it is on, then our volume
    /// element, the gain stage `OutputLevels` sets with ReplayGain) and returns that volume element
    /// and the stages.
    private func installFilter(on playbin: Element) throws -> (volume: Element?, stages: AudioStages?) {
        let filter = try Element(binDescription: "scaletempo name=tonearm-tempo ! volume name=tonearm-volume")
        let stages = AudioStages(filter: filter)
        stages?.apply(equalizer: equalizer)
        let volumeElement = filter.child(named: "tonearm-volume")
        // a stretch that never reaches the filter is reported: legacy hlsdemux and tsdemux skip an
        // HLS segment that is not media without any message (gst-launch-1.0 -m: nothing between
        // the segments, only the next one's timestamps 2 s later)
        filter.watchForGaps(longerThan: Self.gapThreshold)
        playbin.set("audio-filter", filter)
        return (volumeElement, stages)
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
}
