/// The pipeline's state as the engine reports it.
public enum PipelineState: String, Sendable {
    case null, ready, paused, playing
}

/// How exactly a seek must land.
public enum SeekMode: Hashable, Sendable {
    /// On the requested position (GStreamer ACCURATE).
    case exact
    /// The fastest position on a key unit within `before`/`after` of the target.
    case fast(before: Duration, after: Duration)
}

/// What the engine tells the player. Every event comes tagged with the generation of the load it
/// belongs to, on the player's queue.
public enum EngineEvent: Sendable {
    /// The top-level pipeline changed state (never a child's state change).
    case stateChanged(PipelineState, pending: PipelineState?)
    /// Preroll or a flushing seek finished (ASYNC_DONE).
    case asyncDone
    /// The stream of this generation started to reach the sinks (STREAM_START): for a gapless
    /// next item, this is the real boundary.
    case streamStarted
    /// A live source: the pipeline does not preroll (set_state returned NO_PREROLL).
    case live
    case endOfStream
    case failed(ItemError)
    /// Tags to merge into the item's metadata.
    case tags(Metadata)
    case buffering(percent: Int)
    case durationChanged(Duration?)
    /// Something outside (the sound server) asks the pipeline to change state (REQUEST_STATE).
    case requestState(PipelineState)
}

/// The narrow interface the player drives. The GStreamer engine implements it; unit tests script it.
/// All calls happen on the player's queue.
public protocol PlaybackEngine: AnyObject {
    /// Set by the player; the engine calls it on the player's queue.
    var eventHandler: ((Generation, EngineEvent) -> Void)? { get set }
    /// A cheap check before loading (the file exists and is readable); nil when the URI may play.
    func check(_ uri: MediaURI) -> ItemError?
    /// Loads `uri` as `generation` (dropping the previous load and its pending messages) and
    /// prerolls it to PAUSED.
    func load(_ uri: MediaURI, generation: Generation)
    /// The URI to continue with gaplessly when the current one is about to finish, or nil.
    func prepareNext(_ uri: MediaURI?, generation: Generation?)
    /// PLAYING (true) or PAUSED (false).
    func setPlaying(_ playing: Bool)
    /// To NULL: releases the device and the file.
    func stop()
    /// A flushing seek; false when the pipeline refused it.
    func seek(to position: Duration, mode: SeekMode, rate: Double) -> Bool
    /// Asked of the pipeline when read (never sampled).
    var position: Duration? { get }
    var duration: Duration? { get }
    var isSeekable: Bool { get }
    /// Loaded ranges, as far as the pipeline knows.
    func loadedRanges(duration: Duration?) -> [TimeRange]
    func setVolume(_ volume: Double)
    func setMuted(_ muted: Bool)
}

/// Reads an item's tags and duration without playing it (GstDiscoverer in the real engine), for
/// items in the queue that have not played yet.
public protocol MetadataReader: AnyObject, Sendable {
    /// Reads `uri` in the background and calls `completion` once, on any thread.
    func read(_ uri: MediaURI, completion: @escaping @Sendable (Result<DiscoveredMedia, ItemError>) -> Void)
}

/// What a metadata reader found.
public struct DiscoveredMedia: Sendable, Equatable {
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
