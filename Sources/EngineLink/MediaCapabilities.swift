import Basics
import FoundationEssentials
import Glibc
import PlayerModel

/// What the installed GStreamer can play: URI schemes (MPRIS `SupportedUriSchemes`), media types
/// (MPRIS `SupportedMimeTypes`) and file extensions, derived from the plugin registry; and which
/// files of a directory are playable, in natural order (`playableFiles(under:)`, DirectoryWalk.swift).
public struct MediaCapabilities: Sendable, Equatable, Codable {
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

    // MARK: Policy

    /// Types that name media a demuxer or decoder takes: encoded audio and video, and the few
    /// containers and tag wrappers outside `audio/` and `video/` (raw data is not a file type).
    public static func isMediaType(_ name: String) -> Bool {
        if name.hasSuffix("/x-raw") { return false }
        if name.hasPrefix("audio/") || name.hasPrefix("video/") { return true }
        return ["application/ogg", "application/x-id3", "application/x-apetag", "application/x-hls",
                "application/dash+xml", "application/x-ogm"].contains(name)
    }

    /// The names desktop files and MPRIS clients use (shared-mime-info) for types GStreamer names
    /// otherwise (`audio/x-flac` is `audio/flac` to a file manager), each with the GStreamer types
    /// that must all be playable for it.
    public static let aliases: [(alias: String, requires: [String])] = [
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
    public static let commonExtensions: [(String, String)] = [
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
    public static let ambiguousExtensions: Set<String> = ["dat"]
}
