import Basics
import FoundationEssentials
import Glibc
import PlayerModel

/// Where cover art is kept for clients: an embedded image is written once to a content-addressed
/// file under `$XDG_CACHE_HOME/tonearm/covers/` (default `~/.cache`), and an image beside a local
/// file (`cover.jpg`, `folder.png`, ...) is used as it is. Items hold the file's URL, never the
/// image's bytes, and clients get a `file://` URL (KDE Connect forwards only file://; data: URLs
/// break some shells).
///
/// The directory holds at most `maximumBytes` (64 MiB by default): past that, the covers used
/// least recently (by modification time; a cover stored again is touched) are deleted, oldest
/// first. An item whose cover was evicted shows its URL until it plays again, when the pipeline's
/// tags store it anew.
///
/// Used from the engine's queue and the tag readers' threads, never from the queue that answers
/// D-Bus: every method may touch the file system.
public final class CoverCache: @unchecked Sendable {
    // @unchecked: the mutable fields are guarded by `lock`.
    public let directory: URL
    public let maximumBytes: Int
    public static let defaultMaximumBytes = 64 << 20

    private struct File {
        var size: Int
        var used: Date
    }

    private let lock = Lock()
    /// What the directory holds, read from it at the first store; nil before.
    private var files: [String: File]?
    private var totalBytes = 0
    /// The cover found beside the files of a folder (nil: none), so a whole album costs one look.
    /// Bounded; a cover added later is seen once the cache was emptied.
    private var besideByFolder: [String: URL?] = [:]
    private static let besideCacheLimit = 512
    private static let besideNames = ["cover", "folder", "front", "album", "Cover", "Folder", "Front", "Album"]
    private static let besideExtensions = ["jpg", "jpeg", "png", "webp"]

    public init(directory: URL, maximumBytes: Int = CoverCache.defaultMaximumBytes) {
        self.directory = directory
        self.maximumBytes = maximumBytes
    }

    /// `$XDG_CACHE_HOME/tonearm/covers` (an absolute XDG_CACHE_HOME only, as the XDG base
    /// directory spec asks), else `$HOME/.cache/tonearm/covers`.
    public static func defaultDirectory(environment: [String: String] = Environment.variables()) -> URL {
        let cache = environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? Path.appending(".cache", to: environment["HOME"] ?? "/tmp")
        return URL(fileURLWithPath: cache).appendingPathComponent("tonearm/covers")
    }

    // MARK: Embedded images

    /// The file holding `data`, written now unless it is there already; nil when it cannot be
    /// written, or is larger than the whole cache may be.
    public func store(_ data: Data, mediaType: String) -> URL? {
        guard !data.isEmpty, data.count <= maximumBytes else { return nil }
        let ext = switch mediaType {
        case "image/png": "png"
        case "image/gif": "gif"
        case "image/webp": "webp"
        default: "jpg"
        }
        let name = "\(Self.digest(data)).\(ext)"
        let file = directory.appendingPathComponent(name)
        return lock.withLock {
            loadIndex()
            let now = Date()
            if files?[name] != nil {
                // used again: it is the newest now (and still there, unless another tonearmd evicted it)
                if (try? FileManager.default.setAttributes([.modificationDate: now], ofItemAtPath: file.path)) != nil {
                    files?[name]?.used = now
                    return file
                }
                forget(name)
            }
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                // written under a temporary name and renamed, so a reader never sees half a file
                let temporary = directory.appendingPathComponent(".\(UUID().uuidString)")
                try data.write(to: temporary)
                if rename(temporary.path, file.path) != 0 {
                    try? FileManager.default.removeItem(at: temporary)
                    return nil
                }
            } catch {
                return nil
            }
            files?[name] = File(size: data.count, used: now)
            totalBytes += data.count
            evict(keeping: name)
            return file
        }
    }

    /// How many bytes of covers the directory holds, as this cache knows it.
    public var size: Int { lock.withLock { loadIndex(); return totalBytes } }

    /// Reads the directory once: the files another run left count against the bound too.
    private func loadIndex() {
        guard files == nil else { return }
        var found: [String: File] = [:]
        let listed = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in listed where !name.hasPrefix(".") {
            var status = stat()
            guard stat(directory.appendingPathComponent(name).path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { continue }
            let modified = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
            found[name] = File(size: Int(status.st_size), used: Date(timeIntervalSince1970: modified))
        }
        files = found
        totalBytes = found.values.reduce(0) { $0 + $1.size }
    }

    private func forget(_ name: String) {
        if let gone = files?.removeValue(forKey: name) { totalBytes -= gone.size }
    }

    /// Deletes the least recently used covers until the directory is within its bound, never
    /// `kept` (the one just stored).
    private func evict(keeping kept: String) {
        guard totalBytes > maximumBytes, let files else { return }
        let oldestFirst = files.filter { $0.key != kept }.sorted { $0.value.used < $1.value.used }
        for (name, _) in oldestFirst where totalBytes > maximumBytes {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            forget(name)
        }
    }

    /// A content address of `data` (`ContentDigest`): the same image is one file however often seen.
    static func digest(_ data: Data) -> String { ContentDigest.of(data) }

    // MARK: Images beside the files

    /// A `cover.jpg`, `folder.png`, ... in the folder of a local file, or nil; one look per folder.
    public func beside(_ uri: MediaURI) -> URL? {
        guard let path = uri.path else { return nil }
        let folder = Path.directory(of: path)
        if let known = lock.withLock({ besideByFolder[folder] }) { return known }
        let found = Self.besideNames.lazy.flatMap { name in Self.besideExtensions.lazy.map { (name, $0) } }
            .map { URL(fileURLWithPath: folder).appendingPathComponent("\($0.0).\($0.1)") }
            .first { FileManager.default.fileExists(atPath: $0.path) }
        lock.withLock {
            if besideByFolder.count >= Self.besideCacheLimit { besideByFolder.removeAll(keepingCapacity: true) }
            besideByFolder[folder] = .some(found)
        }
        return found
    }
}
