import Basics
import Dispatch
import EngineLink
import FoundationEssentials
import GStreamer
import PlayerModel

/// Reads tags, duration and seekability of items that have not played, a few at a time, on
/// background threads: with a small pipeline that stops at the tags (`TagReader`, the default),
/// or with GstDiscoverer, which gives the same fields at several times the CPU (kept to compare:
/// `TONEARM_TAG_READER=discoverer`). Nothing runs while no read is pending: no timer, no idle
/// thread, no pipeline or discoverer kept alive.
public final class TagMetadataReader: MetadataReader, @unchecked Sendable {
    // @unchecked: the mutable fields (`pending`, `idleQueues`) are guarded by `lock`; the rest is immutable.
    public typealias Completion = @Sendable (Result<DiscoveredMedia, ItemError>) -> Void

    /// How a file is read.
    public enum Method: String, Sendable, CaseIterable {
        /// `TagReader`: source ! parsebin ! fakesink, prerolled.
        case pipeline
        /// GstDiscoverer (`gst_discoverer_discover_uri`).
        case discoverer
    }

    public let method: Method
    /// How many reads run at once.
    public let maximumConcurrentReads: Int
    /// How long one read may take before it fails (GstDiscoverer takes 1 s at least).
    public let timeout: Duration
    /// Where embedded covers are stored and images beside files looked for; nil: no cover art.
    public let covers: CoverCache?

    /// One serial queue per worker. Not a concurrent queue: on Linux, libdispatch's first
    /// non-overcommit worker arms its thread-pool monitor, a 1 Hz timer that then wakes the
    /// process every second for good (event/workqueue.c); serial queues run on overcommit threads.
    private let queues: [DispatchQueue]
    private let lock = Lock()
    // guarded by lock: reads not started yet, oldest first, and the worker queues not in use
    private var pending: [(uri: MediaURI, completion: Completion)] = []
    private var idleQueues: [Int]

    public init(method: Method = .pipeline, maximumConcurrentReads: Int = 2, timeout: Duration = .seconds(5),
                covers: CoverCache? = nil) {
        precondition(maximumConcurrentReads > 0, "at least one read must be allowed to run")
        self.method = method
        self.maximumConcurrentReads = maximumConcurrentReads
        self.timeout = timeout
        self.covers = covers
        queues = (0..<maximumConcurrentReads).map { DispatchQueue(label: "tonearm.metadata.\($0)", qos: .utility) }
        idleQueues = Array(queues.indices)
    }

    /// `TONEARM_TAG_READER` (`pipeline` or `discoverer`), else the pipeline.
    public static func method(environment: [String: String] = Environment.variables()) -> Method {
        environment["TONEARM_TAG_READER"].flatMap(Method.init(rawValue:)) ?? .pipeline
    }

    /// Queues `uri`; `completion` is called exactly once, on one of the reader's threads.
    public func read(_ uri: MediaURI, completion: @escaping Completion) {
        let worker = lock.withLock { () -> Int? in
            pending.append((uri, completion))
            return idleQueues.popLast()
        }
        if let worker { queues[worker].async { self.drain(worker) } }
    }

    /// One worker: takes reads until none is left, with a reader of its own (a discoverer runs
    /// one URI at a time), which it releases when it stops.
    private func drain(_ worker: Int) {
        var read: ((String) -> DiscovererResult)?
        var creationError: String?
        while let next = takeNext(worker) {
            if read == nil && creationError == nil {
                // the engine may still be setting GStreamer up: its registry changes (no FFmpeg
                // typefinders) hold for tag reads too
                GStreamerEngine.prepareRegistry()
                switch method {
                case .pipeline:
                    let reader = TagReader(timeout: timeout)
                    read = reader.read
                case .discoverer:
                    do {
                        let discoverer = try Discoverer(timeout: timeout)
                        read = discoverer.discover
                    } catch {
                        creationError = (error as? GStreamerError)?.message ?? "\(error)"
                    }
                }
            }
            let result: Result<DiscoveredMedia, ItemError>
            if let read {
                result = Self.read(next.uri, with: read, covers: covers)
            } else {
                result = .failure(ItemError(.other, "cannot read \(next.uri): GstDiscoverer is unavailable (\(creationError ?? "unknown error"))"))
            }
            next.completion(result)
        }
    }

    /// The oldest pending read, or nil after retiring this worker (in the same critical section,
    /// so a read queued meanwhile always finds a worker).
    private func takeNext(_ worker: Int) -> (uri: MediaURI, completion: Completion)? {
        lock.withLock {
            if pending.isEmpty {
                idleQueues.append(worker)
                return nil
            }
            return pending.removeFirst()
        }
    }

    /// Reads `uri` with `read` and maps the outcome onto the model.
    static func read(_ uri: MediaURI, with read: (String) -> DiscovererResult, covers: CoverCache?) -> Result<DiscoveredMedia, ItemError> {
        if let error = LocalFiles.error(for: uri) { return .failure(error) }
        switch read(uri.string) {
        case .success(let info):
            guard info.hasAudio || info.hasVideo else {
                let name = uri.displayPath
                return .failure(ItemError(.unsupportedFormat, "cannot play \(name): it holds no audio or video"))
            }
            var metadata = TagMapping.metadata(info.tags, covers: covers)
            if metadata.coverURL == nil { metadata.coverURL = covers?.beside(uri) }
            metadata.sidecarLyrics = LyricsSidecar.read(besides: uri)
            return .success(DiscoveredMedia(metadata: metadata,
                                            duration: info.duration.map { .nanoseconds($0) },
                                            isSeekable: info.isSeekable, isLive: info.isLive))
        case .failure(let failure):
            let missing = failure.missingPlugins.isEmpty ? nil : failure.missingPlugins.joined(separator: ", ")
            return .failure(ErrorMapping.itemError(failure.error, uri: uri, missingPlugin: missing))
        }
    }
}
