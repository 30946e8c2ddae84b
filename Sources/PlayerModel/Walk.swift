import Basics
import Synchronization

/// One call's walk of folders, as its owner on the service queue and the walk on its own thread
/// share it: the walk reads whether it was cancelled between directory reads, and tells how far
/// it got.
public final class WalkControl: Sendable {

    /// How many files found between two `progress` reports: a bounded rate, never a timer
    /// (a walk of 100,000 files reports 100 times).
    public static let progressStep = 1_000
    /// And once this long went by with no report, at the next directory (a clock read there, no
    /// timer): a slow disk with few media files still tells a caller the walk is alive, whose
    /// call's limit (libdbus's 25 s in `tonearm add`) runs from the last report.
    public static let progressInterval = Duration.seconds(5)

    /// Told the number of files found so far, every `progressStep` of them (or `progressInterval`),
    /// on the walk's thread.
    public let progress: (@Sendable (_ root: MediaURI, _ files: Int) -> Void)?
    private let cancelled = Mutex<String?>(nil)

    public init(progress: (@Sendable (_ root: MediaURI, _ files: Int) -> Void)? = nil) {
        self.progress = progress
    }

    /// Stops the walk at its next directory; `reason` says who stopped it ("Clear was called").
    public func cancel(_ reason: String) {
        cancelled.withLock { if $0 == nil { $0 = reason } }
    }

    /// Why the walk was cancelled, or nil while it may go on.
    public var cancellation: String? { cancelled.withLock { $0 } }
}

/// Why resolving a URI (a stat, a folder walked) gave no files.
public enum ResolveError: Error, Sendable, Equatable {
    /// The URI cannot be played (missing, unreadable, a FIFO, a folder with nothing playable).
    case item(ItemError)
    /// `WalkControl.cancel` stopped the walk; the reason it was given.
    case cancelled(String)
    /// The walk of `root` found more than `limit` playable files and stopped there.
    case tooManyFiles(root: MediaURI, limit: Int)
}

/// Turns one URI into what is queued for it: itself, or the playable files under a folder, at most
/// `limit` of them. Runs off the service queue.
public typealias URIResolver = @Sendable (_ uri: MediaURI, _ limit: Int, _ control: WalkControl) throws(ResolveError) -> [MediaURI]
