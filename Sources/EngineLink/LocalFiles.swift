import Basics
import FoundationEssentials
import PlayerModel
#if canImport(Glibc)
import Glibc
#endif

/// Checks on local files before GStreamer sees them. Paths are taken as the bytes the URI names
/// (`fileSystemRepresentation`), so a file name that is not UTF-8 is found, not repaired away.
public enum LocalFiles {
    private enum Kind { case missing, directory, special, file(readable: Bool) }

    private static func kind(of uri: MediaURI) -> Kind? {
        guard let bytes = uri.pathBytes else { return nil }
        guard case .success(let status) = Files.status(bytes) else { return .missing }
        switch status.kind {
        case .directory: return .directory
        // a FIFO with no writer blocks open(2) for good, and with it the thread that changes
        // the pipeline's state (or reads its tags); devices and sockets are no media files
        case .other: return .special
        case .regular: return .file(readable: Files.isReadable(bytes))
        }
    }

    /// Why a local file cannot be played before trying (missing, a directory, a FIFO or device,
    /// unreadable); nil
    /// for a readable file or a URI that is not local.
    public static func error(for uri: MediaURI) -> ItemError? {
        error(for: uri, kind(of: uri))
    }

    private static func error(for uri: MediaURI, _ kind: Kind?) -> ItemError? {
        let name = uri.displayPath
        switch kind {
        case nil, .file(readable: true): return nil
        case .missing: return ItemError(.notFound, "no such file: \(name)")
        case .directory: return ItemError(.unsupportedFormat, "cannot play \(name): it is a directory")
        case .special: return ItemError(.unsupportedFormat, "cannot play \(name): it is not a regular file")
        case .file(readable: false): return ItemError(.permission, "permission denied: \(name)")
        }
    }

    /// A URI as it is queued: a directory becomes its playable files in natural order, at most
    /// `limit` of them, walked until `control` is cancelled; a file that cannot be read fails here.
    public static func resolve(_ uri: MediaURI, capabilities: MediaCapabilities, limit: Int,
                               control: WalkControl) throws(ResolveError) -> [MediaURI] {
        let kind = kind(of: uri)  // one stat(2) and access(2) per URI queued
        guard case .directory = kind else {
            if let error = error(for: uri, kind) { throw .item(error) }
            return [uri]
        }
        let files = try capabilities.playableFiles(under: uri, limit: limit, control: control)
        guard !files.isEmpty else { throw .item(ItemError(.unsupportedFormat, "no playable files under \(uri.displayPath)")) }
        return files
    }
}
