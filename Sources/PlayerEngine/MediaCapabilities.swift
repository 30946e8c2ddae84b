import Basics
import FoundationEssentials
import Glibc
import GStreamer
import PlayerModel

/// What the installed GStreamer can play: URI schemes (MPRIS `SupportedUriSchemes`), media types
/// (MPRIS `SupportedMimeTypes`) and file extensions, derived from the plugin registry; and which
/// files of a directory are playable, in natural order.
public struct MediaCapabilities: Sendable, Equatable {
    /// Of the schemes Tonearm accepts (`MediaURI.supportedSchemes`), those with a GStreamer source.
    public var supportedURISchemes: [String]
    /// Media types some installed decoder or demuxer takes, sorted, without duplicates.
    public var supportedMIMETypes: [String]
    /// Lowercase file extensions (no dot) of those types.
    public var playableExtensions: Set<String>

    public init(supportedURISchemes: [String], supportedMIMETypes: [String], playableExtensions: Set<String>) {
        self.supportedURISchemes = supportedURISchemes
        self.supportedMIMETypes = supportedMIMETypes
        self.playableExtensions = playableExtensions
    }

    /// Asks the GStreamer registry (a walk over its factories: cheap, but not free; keep the value),
    /// as the engine leaves it (`GStreamerEngine.prepareRegistry`, which may wait for `gst_init`).
    public init() {
        GStreamerEngine.prepareRegistry()
        supportedURISchemes = MediaURI.supportedSchemes.filter { Registry.hasSource(forScheme: $0) }
        let registryTypes = Set(Registry.elementFactories([.decoder, .demuxer]).flatMap(\.sinkMediaTypes))
        let playable = registryTypes.filter(Self.isMediaType)
        var types = playable
        for (alias, requirements) in Self.aliases where requirements.allSatisfy(playable.contains) {
            types.insert(alias)
        }
        supportedMIMETypes = types.sorted()
        var extensions: Set<String> = []
        for finder in Registry.typeFinders() where finder.mediaTypes.contains(where: playable.contains) {
            extensions.formUnion(finder.extensions.map { $0.lowercased() })
        }
        for (fileExtension, mediaType) in Self.commonExtensions where playable.contains(mediaType) {
            extensions.insert(fileExtension)
        }
        playableExtensions = extensions.subtracting(Self.ambiguousExtensions)
    }

    // MARK: Policy

    /// Types that name media a demuxer or decoder takes: encoded audio and video, and the few
    /// containers and tag wrappers outside `audio/` and `video/` (raw data is not a file type).
    static func isMediaType(_ name: String) -> Bool {
        if name.hasSuffix("/x-raw") { return false }
        if name.hasPrefix("audio/") || name.hasPrefix("video/") { return true }
        return ["application/ogg", "application/x-id3", "application/x-apetag", "application/x-hls",
                "application/dash+xml", "application/x-ogm"].contains(name)
    }

    /// The names desktop files and MPRIS clients use (shared-mime-info) for types GStreamer names
    /// otherwise (`audio/x-flac` is `audio/flac` to a file manager), each with the GStreamer types
    /// that must all be playable for it.
    static let aliases: [(alias: String, requires: [String])] = [
        ("audio/flac", ["audio/x-flac"]),
        ("audio/wav", ["audio/x-wav"]), ("audio/vnd.wave", ["audio/x-wav"]),
        ("audio/ogg", ["application/ogg"]), ("video/ogg", ["application/ogg"]),
        ("audio/x-vorbis+ogg", ["application/ogg", "audio/x-vorbis"]),
        ("audio/opus", ["audio/x-opus"]), ("audio/x-opus+ogg", ["application/ogg", "audio/x-opus"]),
        ("application/vnd.apple.mpegurl", ["application/x-hls"]), ("audio/mpegurl", ["application/x-hls"]),
        ("audio/mp4", ["video/quicktime"]), ("video/mp4", ["video/quicktime"]),
        ("audio/x-matroska", ["video/x-matroska"]),
    ]

    /// Extensions every audio user expects, each with the GStreamer type that must be playable for
    /// it: typefinders do not list all of them (`opus` and `oga` files are `application/ogg`).
    static let commonExtensions: [(String, String)] = [
        ("mp3", "audio/mpeg"), ("mp2", "audio/mpeg"), ("aac", "audio/mpeg"),
        ("ogg", "application/ogg"), ("oga", "application/ogg"), ("opus", "application/ogg"),
        ("spx", "application/ogg"), ("flac", "audio/x-flac"), ("wav", "audio/x-wav"),
        ("m4a", "video/quicktime"), ("m4b", "video/quicktime"), ("mka", "video/x-matroska"),
        ("webm", "video/x-matroska"), ("wv", "audio/x-wavpack"), ("aiff", "audio/x-aiff"),
        ("aif", "audio/x-aiff"), ("wma", "video/x-ms-asf"), ("ape", "application/x-apetag"),
        ("mpc", "audio/x-musepack"),
    ]

    /// Extensions a typefinder claims that name other things far more often (`dat` is VCD video to
    /// the cdxa typefinder, and any program's data file elsewhere).
    static let ambiguousExtensions: Set<String> = ["dat"]

    // MARK: Directories

    /// The playable regular files under `directory`, recursively, in natural order of their paths
    /// below it (component by component: `2 - b.mp3` before `10 - a.mp3`, `a/` before `b/`).
    /// Hidden files and directories are skipped; symbolic links are followed, each directory read
    /// once, so a link loop ends. Unreadable subdirectories are skipped.
    /// - Throws: `ItemError` (`.notFound`, `.permission`) when `directory` itself cannot be listed.
    public func playableFiles(in directory: URL) throws -> [URL] {
        let root = directory.standardizedFileURL
        var status = stat()
        guard stat(root.path, &status) == 0 else {
            let reason = errno
            if reason == EACCES { throw ItemError(.permission, "permission denied: \(root.path)") }
            throw ItemError(.notFound, "no such directory: \(root.path)")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw ItemError(.notFound, "not a directory: \(root.path)")
        }
        guard access(root.path, R_OK | X_OK) == 0 else {
            throw ItemError(.permission, "permission denied: cannot list \(root.path)")
        }
        var visited: Set<FileIdentity> = [FileIdentity(status)]
        var found: [URL] = []
        guard collect(root, visited: &visited, into: &found) else {
            throw ItemError(.permission, "permission denied: cannot list \(root.path)")
        }
        return found
    }

    private struct FileIdentity: Hashable {
        let device: UInt64, inode: UInt64
        init(_ status: stat) {
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }
    }

    /// Adds the playable files below `directory` depth first, each directory's entries in natural
    /// order (which puts the whole list in natural order of paths, and makes which of two links to
    /// one directory is read deterministic); false when it cannot be listed.
    private func collect(_ directory: URL, visited: inout Set<FileIdentity>, into found: inout [URL]) -> Bool {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return false }
        for name in NaturalOrder.sorted(names.filter { !$0.hasPrefix(".") }) {
            let url = directory.appendingPathComponent(name)
            var status = stat()
            // stat, not lstat: a link counts as what it points to; a broken link is skipped
            guard stat(url.path, &status) == 0 else { continue }
            switch status.st_mode & S_IFMT {
            case S_IFDIR:
                guard visited.insert(FileIdentity(status)).inserted else { continue }  // a loop, or seen already
                _ = collect(url, visited: &visited, into: &found)
            case S_IFREG:
                if playableExtensions.contains(url.pathExtension.lowercased()) {
                    found.append(url)
                }
            default:
                continue
            }
        }
        return true
    }
}
