/// The pipeline's state as the engine reports it.
public enum PipelineState: String, Sendable, Codable {
    case null, ready, paused, playing
}

/// How exactly a seek must land.
public enum SeekMode: Hashable, Sendable, Codable {
    /// On the requested position (GStreamer ACCURATE).
    case exact
    /// The fastest position on a key unit within `before`/`after` of the target.
    case fast(before: Duration, after: Duration)
}

/// Where a seek goes.
public enum SeekTarget: Hashable, Sendable, Codable {
    case position(Duration)
    /// Wherever the pipeline is when the seek runs: a rate change.
    case current
}

/// A position read from the pipeline, and when: while playing, the position at a later instant is
/// this one plus the time since, times the rate. The player reads positions from these samples, so
/// a client reading `Position` never waits on the pipeline. The engine reads the instant from the
/// clock the player is given (the real one outside tests); the player's machine never reads one.
public struct PositionSample: Hashable, Sendable, Codable {
    public var position: Duration
    public var instant: ContinuousClock.Instant
    public init(_ position: Duration, at instant: ContinuousClock.Instant) {
        self.position = position
        self.instant = instant
    }
}

/// What the engine found out about the current stream at a moment (preroll, a finished seek, the
/// start of a gapless next item), asked of the pipeline on the engine's executor.
public struct EngineSnapshot: Hashable, Sendable, Codable {
    public var position: PositionSample?
    public var duration: Duration?
    /// With no `duration`, a length estimated from the stream's size and its bitrate so far (an
    /// MP3 without a Xing or VBRI header at its preroll): an item that has no length yet takes it,
    /// one that has (its tag read's, made from more frames) keeps its own.
    public var durationEstimate: Duration?
    public var isSeekable: Bool
    public var loadedRanges: [TimeRange]
    /// Where a seek can go now, in the position's timeline, when the pipeline names it (the
    /// SEEKING query's range): for a live HLS playlist, its window.
    public var seekableRange: TimeRange?
    /// The output is a sound server's stream, which wakes the player while it is paused (libpulse
    /// times a corked stream every 1.5 s): released after a while paused (`PausedRelease`). A
    /// fake, ALSA or file sink wakes nothing paused, and is kept.
    public var streamWakesWhilePaused: Bool
    public init(position: PositionSample?, duration: Duration?, isSeekable: Bool, loadedRanges: [TimeRange],
                seekableRange: TimeRange? = nil, streamWakesWhilePaused: Bool = false, durationEstimate: Duration? = nil) {
        self.position = position
        self.duration = duration
        self.durationEstimate = durationEstimate
        self.isSeekable = isSeekable
        self.loadedRanges = loadedRanges
        self.seekableRange = seekableRange
        self.streamWakesWhilePaused = streamWakesWhilePaused
    }
}

/// What the player asks of the engine. The engine performs commands in order on its own executor;
/// the caller never waits (a state change can wait on a streaming thread: design brief, trap 11).
public enum EngineCommand: Hashable, Sendable, Codable {
    /// Drops the previous load and its pending messages, checks `uri` (a missing file fails as
    /// `generation` with `.failed`), and prerolls it to PAUSED.
    case load(MediaURI, Generation)
    /// The URI to continue with gaplessly when the current one is about to finish, or nil.
    case prepareNext(MediaURI?, Generation?)
    /// PLAYING (true) or PAUSED (false). Also cancels a `playAfterPreroll`.
    case setPlaying(Bool)
    /// Whether the load under way goes on to PLAYING by itself at the end of its preroll (its
    /// first ASYNC_DONE), before the player hears of it: what the player asks then anyway when
    /// it wants to play, without the round trip through it. Stays PAUSED below 100% buffering.
    /// Ignored once the load prerolled; a new load or a `setPlaying` cancels it.
    case playAfterPreroll(Bool)
    /// To NULL: releases the device and the file.
    case release
    /// A flushing seek; `.asyncDone` or `.seekDone` says it finished, `.seekRefused` that it never ran.
    case seek(SeekTarget, SeekMode, rate: Double)
    case setVolume(Double)
    case setMuted(Bool)
    /// The sleep timer's fade: the output's level on top of the volume goes from where it is to
    /// `to` (0...1; 1: none) over `over`, at once when that is zero. The engine ramps it (the
    /// square of the time left, on a fade to 0), whether it plays or not.
    case fade(to: Double, over: Duration)
    /// Asks the video window something (`VideoState.swift`).
    case video(VideoCommand)
    /// ReplayGain and the equalizer (`AudioSettings.swift`).
    case audio(AudioCommand)
    /// Plays on the output with this id, or the sound server's default (`default`), moving the
    /// stream without stopping; the engine falls back to the default while that device is absent.
    case setOutput(String)
    /// The crossfade into the next item (`Crossfade.swift`).
    case crossfade(CrossfadeCommand)

    var isSeek: Bool { if case .seek = self { true } else { false } }
}

/// What the engine tells the player, tagged with the generation of the load it belongs to.
public enum EngineEvent: Sendable, Equatable, Codable {
    /// The top-level pipeline changed state (never a child's state change), with the position then.
    case stateChanged(PipelineState, pending: PipelineState?, position: PositionSample?)
    /// Preroll or a flushing seek finished (ASYNC_DONE).
    case asyncDone(EngineSnapshot)
    /// The stream of this generation started to reach the sinks (STREAM_START): for a gapless
    /// next item, this is the real boundary. The snapshot is of the new stream.
    case streamStarted(EngineSnapshot?)
    /// A live source: the pipeline does not preroll (set_state returned NO_PREROLL).
    case live
    case endOfStream
    case failed(ItemError)
    /// Tags to merge into the item's metadata.
    case tags(Metadata)
    case buffering(percent: Int, loadedRanges: [TimeRange])
    /// More of the item was downloaded: what is loaded now (a download goes on after buffering
    /// reached 100%, when no buffering message comes).
    case loaded([TimeRange])
    case durationChanged(Duration?)
    /// Something outside (the sound server) asks the pipeline to change state (REQUEST_STATE).
    case requestState(PipelineState)
    /// The pipeline refused a seek: no ASYNC_DONE will come for it.
    case seekRefused
    /// An exact seek to a position finished: the ASYNC_DONE that ended it, handed over by the
    /// thread that posted it, in place of `.asyncDone`; the position is the seek's target, where
    /// an exact seek lands. It may overtake the engine's earlier events.
    case seekDone(PositionSample)
    /// A stretch of the stream never came (a segment that could not be decoded): playback jumped
    /// from `at` over `length`.
    case gap(at: Duration, length: Duration)
    /// The video and its window (`VideoState.swift`).
    case video(VideoEvent)
    /// The output devices now (hot-plug), whatever the load.
    case outputs([OutputDevice])
    /// The sound server's volume and mute of the current stream are not what the engine last
    /// gave it: someone changed them there (a desktop's per-application slider), whatever the
    /// load. `fading`: the engine was giving the stream less than `Volume` (the sleep timer's fade,
    /// a crossfade's ramp), so `volume` is not the user's level.
    case streamLevels(volume: Double, muted: Bool, fading: Bool)
    /// The item's chapters, sorted by start (a table of contents GStreamer read, or the engine's own
    /// reader's: MP3's ID3 CHAP frames), each time they differ from the ones told before.
    case chapters([Chapter])
}

/// The narrow interface the player drives. The GStreamer engine implements it; unit tests script it.
public protocol PlaybackEngine: AnyObject, Sendable {
    /// Set once by the player before its first command. The engine calls it from its own executor,
    /// in the order things happened; the player hops to its queue.
    func setEventHandler(_ handler: @escaping @Sendable (Generation, EngineEvent) -> Void)
    /// Queues `command`; returns at once.
    func perform(_ command: EngineCommand)
}

/// Reads an item's tags and duration without playing it (GstDiscoverer in the real engine), for
/// items in the queue that have not played yet.
public protocol MetadataReader: AnyObject, Sendable {
    /// Reads `uri` in the background and calls `completion` once, on any thread.
    func read(_ uri: MediaURI, completion: @escaping @Sendable (Result<DiscoveredMedia, ItemError>) -> Void)
}

/// What a metadata reader found.
public struct DiscoveredMedia: Sendable, Equatable, Codable {
    public var metadata: Metadata
    public var duration: Duration?
    public var isSeekable: Bool
    public var isLive: Bool
    public init(metadata: Metadata, duration: Duration?, isSeekable: Bool, isLive: Bool) {
        self.metadata = metadata
        self.duration = duration
        self.isSeekable = isSeekable
        self.isLive = isLive
    }
}
