import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import PlayerModel

/// Why a playlist file cannot be used, with a message a person can act on.
public struct PlaylistError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// What a playlist file holds: its name and its entries, in order.
public struct PlaylistFile: Sendable, Equatable {
    public var name: String
    public var entries: [MediaURI]

    public enum Format: String, Sendable, CaseIterable {
        case m3u, m3u8, pls, xspf
    }

    /// The format named by a file's extension; nil for a file that is not a playlist.
    public static func format(of path: String) -> Format? {
        Format(rawValue: (path as NSString).pathExtension.lowercased())
    }

    /// The largest file read: a playlist of 100,000 entries of 160-byte paths is 16 MiB.
    public static let maximumSize = 32 * 1024 * 1024

    /// Reads and parses the playlist at `path` (file-system work: never on the queue that answers D-Bus).
    public static func read(_ path: String) throws(PlaylistError) -> PlaylistFile {
        guard let format = format(of: path) else { throw PlaylistError("\(path) is not a playlist (.m3u, .m3u8, .pls or .xspf)") }
        let data: Data
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            if let size = attributes[.size] as? Int, size > maximumSize {
                throw PlaylistError("\(path) is \(size) bytes; playlists of at most \(maximumSize) are read")
            }
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch let error as PlaylistError {
            throw error
        } catch {
            throw PlaylistError("cannot read \(path): \((error as NSError).localizedDescription)")
        }
        return try parse(data, format: format, path: path)
    }

    /// Parses a playlist's bytes; relative entries are taken against the file's directory.
    public static func parse(_ data: Data, format: Format, path: String) throws(PlaylistError) -> PlaylistFile {
        let directory = (path as NSString).deletingLastPathComponent
        let defaultName = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        switch format {
        case .xspf:
            return try parseXSPF(data, directory: directory, path: path, defaultName: defaultName)
        case .m3u, .m3u8, .pls:
            // M3U8 is UTF-8 by definition; plain M3U is in practice too, or Latin-1 (Winamp's)
            guard let text = String(data: data, encoding: .utf8) ?? (format == .m3u ? String(data: data, encoding: .isoLatin1) : nil) else {
                throw PlaylistError("\(path) is not UTF-8 text")
            }
            if data.contains(0) { throw PlaylistError("\(path) is not a text file (it holds NUL bytes)") }
            return format == .pls
                ? try parsePLS(text, directory: directory, path: path, defaultName: defaultName)
                : try parseM3U(text, directory: directory, path: path, defaultName: defaultName)
        }
    }

    /// An entry: a path (absolute, or relative to the playlist's directory) or a URI we play.
    private static func entry(_ text: String, directory: String, path: String, line: Int) throws(PlaylistError) -> MediaURI {
        do {
            return try MediaURI(text, relativeTo: directory)
        } catch {
            throw PlaylistError("\(path), line \(line): \(error.message)")
        }
    }

    // M3U: one entry per line; lines starting with # are directives or comments (#EXTM3U,
    // #EXTINF, #PLAYLIST: the name, in the extended M3U of Winamp and of RFC 8216 section 4.1;
    // the first one counts, as in `title(of:)`).
    private static func parseM3U(_ text: String, directory: String, path: String, defaultName: String) throws(PlaylistError) -> PlaylistFile {
        var name: String?
        var entries: [MediaURI] = []
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\u{FEFF}", with: "")
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                if name == nil, line.hasPrefix("#PLAYLIST:") {
                    let title = line.dropFirst("#PLAYLIST:".count).trimmingCharacters(in: .whitespaces)
                    if !title.isEmpty { name = title }
                }
                continue
            }
            entries.append(try entry(line, directory: directory, path: path, line: index + 1))
        }
        return PlaylistFile(name: name ?? defaultName, entries: entries)
    }

    // PLS: an INI file with a [playlist] section and FileN=, TitleN=, NumberOfEntries=, Version=2.
    private static func parsePLS(_ text: String, directory: String, path: String, defaultName: String) throws(PlaylistError) -> PlaylistFile {
        var inPlaylist = false
        var sawSection = false
        var files: [(Int, MediaURI)] = []
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\u{FEFF}", with: "")
            if line.isEmpty || line.hasPrefix(";") || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                inPlaylist = line.lowercased() == "[playlist]"
                sawSection = sawSection || inPlaylist
                continue
            }
            guard inPlaylist else { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw PlaylistError("\(path), line \(index + 1): not a key=value line: \(line.prefix(80))")
            }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if key.hasPrefix("file"), let number = Int(key.dropFirst(4)) {
                files.append((number, try entry(value, directory: directory, path: path, line: index + 1)))
            }
        }
        guard sawSection else { throw PlaylistError("\(path) has no [playlist] section") }
        return PlaylistFile(name: defaultName, entries: files.sorted { $0.0 < $1.0 }.map(\.1))
    }

    // XSPF (xspf.org/spec): <playlist><title/><trackList><track><location>URI</location>.
    private static func parseXSPF(_ data: Data, directory: String, path: String, defaultName: String) throws(PlaylistError) -> PlaylistFile {
        let reader = XSPFReader()
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        let parsed = parser.parse()
        // swift-corelibs-foundation's XMLParser takes a file that ends inside an element: the
        // elements still open say it did not end
        guard parsed, reader.sawPlaylist, reader.open.isEmpty else {
            let why = parser.parserError.map { "line \(parser.lineNumber): \(($0 as NSError).localizedDescription)" }
                ?? (reader.sawPlaylist ? "it ends inside <\(reader.open.last ?? "")>" : "no <playlist> element")
            throw PlaylistError("\(path) is not a valid XSPF playlist (\(why))")
        }
        var entries: [MediaURI] = []
        for (line, location) in reader.locations {
            // locations are URIs (xspf.org/spec 4.1.1.2.14.1.1.1); a relative one is against the file
            let text = location.contains("://") || location.hasPrefix("/") ? location
                : (location.removingPercentEncoding ?? location)
            entries.append(try entry(text, directory: directory, path: path, line: line))
        }
        let title = reader.title?.trimmingCharacters(in: .whitespacesAndNewlines)
        return PlaylistFile(name: title.flatMap { $0.isEmpty ? nil : $0 } ?? defaultName, entries: entries)
    }
}

extension PlaylistFile {
    /// How much of a file `title(of:)` reads: the title is in its head (before the entries).
    public static let titleScanSize = 64 * 1024

    /// The title a playlist file carries, read from its first `titleScanSize` bytes: the first
    /// `#PLAYLIST:` directive of an extended M3U, the `<title>` of an XSPF `<playlist>` (before its
    /// `<trackList>`); nil when it has none (PLS has no title), or cannot be read.
    public static func title(of path: String) -> String? {
        guard let format = format(of: path), format != .pls, let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: titleScanSize), !head.isEmpty else { return nil }
        let title: String?
        switch format {
        case .m3u, .m3u8:
            title = m3uTitle(head, latin1: format == .m3u)
        case .xspf:
            let reader = XSPFTitleReader()
            let parser = XMLParser(data: head)
            parser.shouldResolveExternalEntities = false
            parser.delegate = reader
            _ = parser.parse()  // a head cut inside the file ends in an error after the title
            title = reader.title
        case .pls:
            title = nil
        }
        return title.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The first #PLAYLIST: line among whole lines of `head` (UTF-8; Latin-1 in a plain M3U that
    /// is not UTF-8, as `parse` takes it).
    private static func m3uTitle(_ head: Data, latin1: Bool) -> String? {
        let prefix = Array("#PLAYLIST:".utf8)
        for line in head.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            var bytes = Array(line)
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }  // a byte order mark
            while let first = bytes.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { bytes.removeFirst() }
            guard bytes.starts(with: prefix) else { continue }
            let value = Data(bytes.dropFirst(prefix.count))
            return String(data: value, encoding: .utf8) ?? (latin1 ? String(data: value, encoding: .isoLatin1) : nil)
        }
        return nil
    }
}

/// Reads an XSPF file up to its title, and stops there (or at its track list).
private final class XSPFTitleReader: NSObject, XMLParserDelegate {
    var title: String?
    private var path: [String] = []
    private var text = ""

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        path.append(name)
        text = ""
        if path == ["playlist", "trackList"] || path.count == 1 && name != "playlist" { parser.abortParsing() }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if path == ["playlist", "title"] {
            title = text
            parser.abortParsing()
        }
        path.removeLast()
        text = ""
    }
}

/// Collects an XSPF file's title and track locations.
private final class XSPFReader: NSObject, XMLParserDelegate {
    var sawPlaylist = false
    var title: String?
    var locations: [(Int, String)] = []
    private var path: [String] = []
    private var text = ""
    /// The elements not closed yet.
    var open: [String] { path }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        if path.isEmpty && name == "playlist" { sawPlaylist = true }
        path.append(name)
        text = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if path == ["playlist", "title"] { title = text }
        if path == ["playlist", "trackList", "track", "location"] {
            locations.append((parser.lineNumber, text.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        path.removeLast()
        text = ""
    }
}
