import Dispatch
import Foundation
import GStreamer
import PlayerModel

/// Reads tags, duration and seekability of queued items with GstDiscoverer, a few at a time, on
/// background threads. Nothing runs while no read is pending: no timer, no idle thread, no
/// discoverer kept alive.
public final class DiscovererMetadataReader: MetadataReader, @unchecked Sendable {
    // @unchecked: the mutable fields (`pending`, `idleQueues`) are guarded by `lock`; the rest is immutable.
    public typealias Completion = @Sendable (Result<DiscoveredMedia, ItemError>) -> Void

    /// How many discoveries run at once.
    public let maximumConcurrentReads: Int
    /// How long one discovery may take before it fails (GstDiscoverer takes 1 s at least).
    public let timeout: Duration

    /// One serial queue per worker. Not a concurrent queue: on Linux, libdispatch's first
    /// non-overcommit worker arms its thread-pool monitor, a 1 Hz timer that then wakes the
    /// process every second for good (event/workqueue.c); serial queues run on overcommit threads.
    private let queues: [DispatchQueue]
    private let lock = NSLock()
    // guarded by lock: reads not started yet, oldest first, and the worker queues not in use
    private var pending: [(uri: MediaURI, completion: Completion)] = []
    private var idleQueues: [Int]

    /// Where embedded covers are stored and images beside files looked for; nil: no cover art.
    public let covers: CoverCache?

    public init(maximumConcurrentReads: Int = 2, timeout: Duration = .seconds(5), covers: CoverCache? = nil) {
        precondition(maximumConcurrentReads > 0, "at least one read must be allowed to run")
        self.maximumConcurrentReads = maximumConcurrentReads
        self.timeout = timeout
        self.covers = covers
        queues = (0..<maximumConcurrentReads).map { DispatchQueue(label: "tonearm.metadata.\($0)", qos: .utility) }
        idleQueues = Array(queues.indices)
    }

    /// Queues `uri`; `completion` is called exactly once, on one of the reader's threads.
    public func read(_ uri: MediaURI, completion: @escaping Completion) {
        let worker = lock.withLock { () -> Int? in
            pending.append((uri, completion))
            return idleQueues.popLast()
        }
        if let worker { queues[worker].async { self.drain(worker) } }
    }

    /// One worker: takes reads until none is left, with one discoverer of its own (a discoverer
    /// runs one URI at a time), which it releases when it stops.
    private func drain(_ worker: Int) {
        var discoverer: Discoverer?
        var creationError: GStreamerError?
        while let next = takeNext(worker) {
            if discoverer == nil && creationError == nil {
                do { discoverer = try Discoverer(timeout: timeout) } catch let error as GStreamerError {
                    creationError = error
                } catch {
                    creationError = GStreamerError(domain: GStreamerError.coreDomain, code: 0, message: "\(error)")
                }
            }
            let result: Result<DiscoveredMedia, ItemError>
            if let discoverer {
                result = Self.read(next.uri, with: discoverer, covers: covers)
            } else {
                result = .failure(ItemError(.other, "cannot read \(next.uri): GstDiscoverer is unavailable (\(creationError?.message ?? "unknown error"))"))
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

    /// Discovers `uri` and maps the outcome onto the model.
    static func read(_ uri: MediaURI, with discoverer: Discoverer, covers: CoverCache?) -> Result<DiscoveredMedia, ItemError> {
        if let error = LocalFiles.error(for: uri) { return .failure(error) }
        switch discoverer.discover(uri.string) {
        case .success(let info):
            guard info.hasAudio || info.hasVideo else {
                let name = uri.displayPath
                return .failure(ItemError(.unsupportedFormat, "cannot play \(name): it holds no audio or video"))
            }
            var metadata = TagMapping.metadata(info.tags, covers: covers)
            if metadata.coverURL == nil { metadata.coverURL = covers?.beside(uri) }
            return .success(DiscoveredMedia(metadata: metadata,
                                            duration: info.duration.map { .nanoseconds($0) },
                                            isSeekable: info.isSeekable, isLive: info.isLive))
        case .failure(let failure):
            let missing = failure.missingPlugins.isEmpty ? nil : failure.missingPlugins.joined(separator: ", ")
            return .failure(ErrorMapping.itemError(failure.error, uri: uri, missingPlugin: missing))
        }
    }


}
