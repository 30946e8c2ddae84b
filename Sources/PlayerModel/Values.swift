import Basics
import FoundationEssentials

/// A stable identifier of one queue entry. Two entries of the same URI have different ids.
public struct ItemID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (a: ItemID, b: ItemID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "item\(rawValue)" }
}

/// What one load of an item is called; bus messages of an older load never touch a newer one
/// (rule 3 in the design brief).
public struct Generation: Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "gen\(rawValue)" }
}

/// A media URI the player accepts: `file://`, `http://`, `https://` (HLS is an `.m3u8` over HTTP).
public struct MediaURI: Hashable, Sendable, CustomStringConvertible {
    public let url: URL
    public static let supportedSchemes = ["file", "http", "https"]
    /// The longest URI or path taken, in UTF-8 bytes: a path has at most PATH_MAX (4,096) bytes,
    /// three times that when every byte is percent-escaped, and web servers refuse request lines
    /// past 8 KiB. A longer text is refused before it is parsed (make fuzz sends 1 MiB strings).
    public static let maximumLength = 16_384

    /// Accepts an absolute or relative path, or a URI with a supported scheme. A relative path is
    /// taken from `directory`, by default the working directory (read only then: getcwd(3) per
    /// AddTrack was a system call on the queue that answers D-Bus).
    public init(_ text: String, relativeTo directory: String? = nil) throws(ItemError) {
        guard text.utf8.count <= Self.maximumLength else {
            throw ItemError(.invalidURI, "URI too long: \(text.utf8.count) bytes (at most \(Self.maximumLength)): \(text.prefix(64))…")
        }
        // the text of an ASCII URI read as bytes: trimming by Character and the generic String
        // searches were a third of AddTrack's time on the queue that answers D-Bus (perf, make
        // bench). Other text is read by Character, as before (":" with a combining mark after it
        // is no colon there).
        let trimmed = Self.hasNoSpaceAtEnds(text) ? text : text.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw ItemError(.invalidURI, "empty URI") }
        let ascii = trimmed.utf8.allSatisfy { $0 < 0x80 }
        let first = trimmed.utf8.first
        let looksLikePath = ascii
            ? first == UInt8(ascii: "/") || first == UInt8(ascii: "~") || first == UInt8(ascii: ".") || !trimmed.utf8.contains(UInt8(ascii: ":"))
            : trimmed.hasPrefix("/") || trimmed.hasPrefix("~") || trimmed.hasPrefix(".") || !trimmed.contains(":")
        if looksLikePath {
            let expanded = Path.expandingTilde(trimmed)
            let absolute = expanded.hasPrefix("/")
                ? expanded : Path.appending(expanded, to: directory ?? FileManager.default.currentDirectoryPath)
            url = URL(fileURLWithPath: Self.lexicallyNormalized(absolute))
            return
        }
        guard let parsed = URL(string: trimmed), let scheme = parsed.scheme?.lowercased() else {
            throw ItemError(.invalidURI, "not a valid URI: \(trimmed)")
        }
        guard MediaURI.supportedSchemes.contains(scheme) else {
            throw ItemError(.unsupportedScheme, "Tonearm does not play \(scheme): URIs (it plays file, http and https): \(trimmed)")
        }
        if scheme == "file" {
            guard parsed.host == nil || parsed.host == "" || parsed.host == "localhost" else {
                throw ItemError(.invalidURI, "file URI names a remote host: \(trimmed)")
            }
            guard MediaURI(fileURL: parsed).firstPathByte == UInt8(ascii: "/") else {
                throw ItemError(.invalidURI, "file URI without an absolute path: \(trimmed)")
            }
            guard !(ascii ? Self.containsEscapedNUL(trimmed.utf8) : trimmed.contains("%00")) else {
                throw ItemError(.invalidURI, "file URI with a NUL byte in its path: \(trimmed)")
            }
        } else if parsed.host == nil || parsed.host == "" {
            throw ItemError(.invalidURI, "\(scheme) URI has no host: \(trimmed)")
        }
        url = parsed
    }

    public init(fileURL: URL) { url = fileURL }

    /// The file (not a directory) at an absolute path given as its bytes, as a directory lists
    /// them. A UTF-8 path is the URI `URL(fileURLWithPath:)` makes; any other (`caf\xE9.ogg`, Latin-1) is percent-escaped
    /// byte by byte, so that `pathBytes` gives the same bytes back: a String would have repaired it
    /// into another name, or dropped it (FileManager's listing did).
    public init(filePath bytes: [UInt8]) {
        if let path = String(validating: bytes, as: UTF8.self) {
            // .notDirectory: the walk knows; .checkFileSystem would stat(2) every file it found again
            url = URL(filePath: path, directoryHint: .notDirectory)
            return
        }
        var text = "file://"
        text.unicodeScalars.reserveCapacity(7 + bytes.count * 3)
        for byte in bytes {
            if Self.isUnreservedInPath(byte) {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                text += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        // every byte outside [A-Za-z0-9-._~/] escaped: RFC 3986 accepts the text
        url = URL(string: text)!
    }

    private static func isUnreservedInPath(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"): true
        default: false
        }
    }

    /// True when `text` is ASCII from 0x21 to 0x7E at both ends: no white space to trim (a
    /// Character that begins or ends with such a byte is never white space).
    private static func hasNoSpaceAtEnds(_ text: String) -> Bool {
        guard let first = text.utf8.first, let last = text.utf8.last else { return false }
        return (0x21...0x7E).contains(first) && (0x21...0x7E).contains(last)
    }

    /// Whether ASCII URI text holds `%00`.
    private static func containsEscapedNUL(_ text: String.UTF8View) -> Bool {
        var previous: (UInt8, UInt8) = (0, 0)
        for byte in text {
            if previous == (UInt8(ascii: "%"), UInt8(ascii: "0")), byte == UInt8(ascii: "0") { return true }
            previous = (previous.1, byte)
        }
        return false
    }

    /// `.` and `..` and repeated slashes taken out of an absolute path by its text alone.
    /// NSString.standardizingPath would also resolve symlinks: a readlink per component, file-system
    /// work on the queue that answers D-Bus (make fuzz: 10,000 deep relative paths stalled it).
    static func lexicallyNormalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".": continue
            case "..": _ = parts.popLast()
            default: parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }

    public var string: String { url.absoluteString }
    public var isFile: Bool { url.isFileURL }
    public var path: String? { url.isFileURL ? url.path : nil }
    /// The bytes of a file's path, percent-escapes decoded as bytes: a name that is not UTF-8
    /// (`%FF%FE`) stays itself, where `path` would have to repair it.
    public var pathBytes: [UInt8]? {
        guard url.isFileURL, let path = Self.escapedPath(ofFileURI: url.absoluteString) else { return nil }
        return Self.percentDecoded(path)
    }

    /// The first byte of `pathBytes`, without decoding the rest: what the parser checks.
    var firstPathByte: UInt8? {
        guard url.isFileURL, let path = Self.escapedPath(ofFileURI: url.absoluteString) else { return nil }
        return Self.percentDecoded(path.prefix(3)).first
    }

    /// The path part of a file URI's text, still escaped: after the scheme and any authority
    /// ("localhost"), before a query or a fragment; nil when there is no path after an authority.
    static func escapedPath(ofFileURI text: String) -> Substring.UTF8View? {
        var rest = Substring(text).utf8
        guard let colon = rest.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        rest = rest[rest.index(after: colon)...]
        if rest.starts(with: "//".utf8) {
            rest = rest.dropFirst(2)
            guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { return nil }
            rest = rest[slash...]
        }
        if let end = rest.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) { rest = rest[..<end] }
        return rest
    }

    /// The bytes of URI text with its `%XX` escapes decoded; a `%` not followed by two hex digits
    /// stays itself.
    static func percentDecoded(_ text: Substring.UTF8View) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var rest = text
        while let byte = rest.popFirst() {
            if byte == UInt8(ascii: "%"), let high = rest.first.flatMap(hexValue),
               let low = rest.dropFirst().first.flatMap(hexValue) {
                bytes.append(high << 4 | low)
                rest = rest.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return bytes
    }

    /// The path of a file (the URI when the path's bytes are not text), or the URI: for messages.
    public var displayPath: String {
        guard let path, !path.isEmpty else { return url.isFileURL ? (url.absoluteString.removingPercentEscapes() ?? string) : string }
        return path
    }
    /// The last path component, decoded, for a title when there is no title tag.
    /// Only that component is decoded, not the whole path: GetTracksMetadata of 100 items not read
    /// yet spent a fifth of its time decoding their paths whole (perf, 300 queued files).
    public var displayName: String {
        if url.isFileURL, let name = Self.lastComponent(ofFileURI: url.absoluteString) { return name }
        let name = url.lastPathComponent
        return name.isEmpty || name == "/" ? string : name
    }

    /// The last non-empty path component of a file URI's text, percent-escapes decoded as bytes
    /// (bytes that are not UTF-8 become U+FFFD); nil when the path has none.
    static func lastComponent(ofFileURI text: String) -> String? {
        guard var utf8 = escapedPath(ofFileURI: text) else { return nil }
        while utf8.last == UInt8(ascii: "/") { utf8 = utf8.dropLast() }
        if let slash = utf8.lastIndex(of: UInt8(ascii: "/")) { utf8 = utf8[utf8.index(after: slash)...] }
        guard !utf8.isEmpty else { return nil }
        return String(decoding: percentDecoded(utf8), as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
    public var description: String { string }
}

/// A URI crosses to the engine's process as its text: it was checked when it was made, and
/// `URL(string:)` of an `absoluteString` is the same URL (a file name's odd bytes stay escaped).
extension MediaURI: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let url = URL(string: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a URI: \(text.prefix(64))"))
        }
        self.url = url
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(string)
    }
}

/// Why an item cannot play, with a message a person can act on.
public struct ItemError: Error, Hashable, Sendable, Codable, CustomStringConvertible {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case notFound, permission, unsupportedFormat, missingDecoder, decode, network, output
        case invalidURI, unsupportedScheme, other
        /// The engine's process stopped answering (a command or a position check went without an
        /// answer past its bound, or the position stood still while playing): it was ended.
        case engineStalled
    }
    public var kind: Kind
    public var message: String
    /// A network error that may go away by itself (a dropped connection, a timeout, a server
    /// error 5xx), where trying again later can succeed; not a 404 or a refused connection.
    public var isTransient: Bool
    public init(_ kind: Kind, _ message: String, isTransient: Bool = false) {
        self.kind = kind
        self.message = message
        self.isTransient = isTransient
    }
    public var description: String { "\(kind.rawValue): \(message)" }
}

/// Can this item play? `unknown` until the pipeline prerolled it.
public enum ItemStatus: Hashable, Sendable {
    case unknown, readyToPlay, failed(ItemError)
    public var name: String {
        switch self {
        case .unknown: "unknown"
        case .readyToPlay: "readyToPlay"
        case .failed: "failed"
        }
    }
}

/// Why playback that was asked for is not advancing.
public enum WaitingReason: String, Hashable, Sendable {
    case buffering, evaluatingBuffering, noItem
    /// A network item lost its connection and is being loaded again (`ReconnectPolicy`).
    case reconnecting
}

/// What the transport does right now, apart from what was asked (rule 4).
public enum TimeControlStatus: Hashable, Sendable {
    case paused, waitingToPlay(WaitingReason), playing
    public var name: String {
        switch self {
        case .paused: "paused"
        case .waitingToPlay: "waitingToPlay"
        case .playing: "playing"
        }
    }
    public var waitingReason: WaitingReason? {
        if case .waitingToPlay(let reason) = self { reason } else { nil }
    }
}

/// What the user asked the transport to do.
public enum TransportIntent: String, Hashable, Sendable {
    case stopped, paused, playing
}

public enum LoopMode: String, Hashable, Sendable, CaseIterable {
    case none, track, queue
}

/// Why the rate changed.
public enum RateChangeReason: String, Hashable, Sendable {
    /// The value when a subscription starts.
    case initial
    /// A client asked for it.
    case client
    /// A client asked for a rate out of range, or other than 1.0 on an item that cannot seek (a
    /// live stream): the rate is unchanged; or an item that cannot seek became current while the
    /// rate was not 1.0: the rate is back at 1.0.
    case refused
    /// The sound server paused or resumed the stream (REQUEST_STATE from the sink).
    case soundServer
    /// The system is going to sleep.
    case systemSleep
    /// The audio output failed (the device went away, the sound server died): the player paused
    /// where it was, and Play opens the output again.
    case output
}

/// A loaded range of media time.
public struct TimeRange: Hashable, Sendable, Codable {
    public var start: Duration
    public var end: Duration
    public init(start: Duration, end: Duration) {
        self.start = start
        self.end = end
    }
}

/// Tags of an item. Every string is valid UTF-8 (repaired at the engine boundary).
public struct Metadata: Hashable, Sendable, Codable {
    public var title: String?
    public var artists: [String] = []
    public var album: String?
    public var albumArtists: [String] = []
    public var trackNumber: Int?
    public var discNumber: Int?
    public var genres: [String] = []
    /// ISO 8601, as precise as the tag is (`2024`, `2024-05-17`).
    public var date: String?
    public var comment: String?
    public var audioCodec: String?
    public var videoCodec: String?
    /// Bits per second.
    public var bitrate: Int?
    /// A `file://` URL of the cover art: an embedded image kept once in the cover cache, or an
    /// image beside the file. Never the image's bytes: a queue of 10,000 items holds 10,000 URLs.
    public var coverURL: URL?
    /// The title a radio station sends for what it plays now.
    public var streamTitle: String?
    /// A radio station's name.
    public var organization: String?
    /// The lyrics the file holds (ID3 `USLT`, a Vorbis comment `LYRICS`, MP4 `©lyr`), plain text,
    /// at most `Lyrics.maximumBytes`.
    public var lyrics: String?
    /// The lyrics of a `.lrc` file beside a local file: its text, and its synced lines.
    public var sidecarLyrics: Lyrics?

    public init() {}

    /// Fills what we lack from `other`, keeping what we have.
    public mutating func fillMissing(from other: Metadata) {
        var filled = other
        filled.merge(self)
        self = filled
    }

    public var isEmpty: Bool { self == Metadata() }

    /// The title to show for the item at `uri` with these tags: the title tag, a radio stream
    /// title, else the file name.
    public func displayTitle(of uri: MediaURI) -> String { title ?? streamTitle ?? uri.displayName }

    /// Values of `newer` replace ours where `newer` has them.
    public mutating func merge(_ newer: Metadata) {
        if let v = newer.title { title = v }
        if !newer.artists.isEmpty { artists = newer.artists }
        if let v = newer.album { album = v }
        if !newer.albumArtists.isEmpty { albumArtists = newer.albumArtists }
        if let v = newer.trackNumber { trackNumber = v }
        if let v = newer.discNumber { discNumber = v }
        if !newer.genres.isEmpty { genres = newer.genres }
        if let v = newer.date { date = v }
        if let v = newer.comment { comment = v }
        if let v = newer.audioCodec { audioCodec = v }
        if let v = newer.videoCodec { videoCodec = v }
        if let v = newer.bitrate { bitrate = v }
        if let v = newer.coverURL { coverURL = v }
        if let v = newer.streamTitle { streamTitle = v }
        if let v = newer.organization { organization = v }
        if let v = newer.lyrics { lyrics = v }
        if let v = newer.sidecarLyrics { sidecarLyrics = v }
    }

    /// The plain lyrics clients read (`xesam:asText`): the file's own, else the sidecar's text.
    /// The file's win: they are what its tagger (often the user) put in it, and a sidecar's text is
    /// still there, synced, as `SyncedLyrics`.
    public var lyricsText: String? {
        lyrics ?? sidecarLyrics.flatMap { $0.text.isEmpty ? nil : $0.text }
    }
}

/// One piece of media and its dynamic state.
public struct Item: Hashable, Sendable, Identifiable {
    public let id: ItemID
    public let uri: MediaURI
    public internal(set) var status: ItemStatus = .unknown
    public internal(set) var duration: Duration?
    public internal(set) var isLive = false
    /// The pipeline can seek it; a live item only inside a window of at least
    /// `PlayerMachine.minimumLiveWindow`.
    public internal(set) var isSeekable = false
    public internal(set) var bufferingPercent = 100
    public internal(set) var loadedRanges: [TimeRange] = []
    /// The item's chapters, sorted by start, once the engine read them (`Chapters.swift`).
    public internal(set) var chapters: [Chapter] = []
    /// The item's tags, behind one reference and nil while there are none: most items of a long
    /// queue have had none read, and inline the tags made an item 304 bytes instead of 96.
    private var tags: Tags?

    public init(id: ItemID, uri: MediaURI) {
        self.id = id
        self.uri = uri
    }

    public internal(set) var metadata: Metadata {
        get { tags?.value ?? Metadata() }
        set { tags = newValue.isEmpty ? nil : Tags(newValue) }
    }

    /// Runs `body` with the item's tags, taken out of where they are kept once: each read of
    /// `metadata` is a copy (a retain and a release of each of its strings and arrays), and a
    /// track's MPRIS metadata read them three times (perf of GetTracksMetadata: swift_retain and
    /// swift_release of those copies led the serving thread's profile; Benchmarks/queue.py).
    public func withMetadata<R>(_ body: (Metadata) throws -> R) rethrows -> R {
        if let tags { return try body(tags.value) }
        return try body(Metadata())
    }

    /// Immutable, so that items stay values: a change stores a new one.
    private final class Tags: Hashable, Sendable {
        let value: Metadata
        init(_ value: Metadata) { self.value = value }
        static func == (a: Tags, b: Tags) -> Bool { a === b || a.value == b.value }
        func hash(into hasher: inout Hasher) { hasher.combine(value) }
    }

    public var error: ItemError? {
        if case .failed(let error) = status { error } else { nil }
    }
    /// The buffer ran dry: asked to play, nothing to play.
    public var isBufferEmpty: Bool { bufferingPercent == 0 }
    /// Whether a seek of it has an effect (MPRIS CanSeek): a file may seek before it loaded (the
    /// seek runs after preroll); a stream only once the pipeline said it can, a live one only
    /// inside a window wide enough (`isSeekable`); a failed item never.
    public var canSeek: Bool { error == nil && (isSeekable || status == .unknown && uri.isFile) }
    /// The title to show: the title tag, a radio stream title, else the file name.
    public var displayTitle: String {
        withMetadata { $0.displayTitle(of: uri) }
    }
}

extension Duration {
    /// The longest durations a signed 64-bit count of nanoseconds holds (about 292 years each way):
    /// GStreamer's clock times and the Int64 conversions (Basics: `nanoseconds`, `microseconds`) stay inside them.
    public static let maximumNanosecondClock = Duration.nanoseconds(Int64.max)
    public static let minimumNanosecondClock = Duration.nanoseconds(Int64.min)

    /// A duration of `microseconds` from a client (MPRIS positions, offsets, tolerances), clamped to
    /// what a nanosecond clock holds, so that conversions and sums of it never trap
    /// (design brief, trap 11).
    public static func saturating(microseconds: Int64) -> Duration {
        min(max(.microseconds(microseconds), minimumNanosecondClock), maximumNanosecondClock)
    }
}
