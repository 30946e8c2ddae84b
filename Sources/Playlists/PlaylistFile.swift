import Basics
import FoundationEssentials
import Glibc
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
        Format(rawValue: Path.extension(of: path).lowercased())
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
            throw PlaylistError("cannot read \(path): \(SystemError.reason(error))")
        }
        return try parse(data, format: format, path: path)
    }

    /// Parses a playlist's bytes; relative entries are taken against the file's directory.
    public static func parse(_ data: Data, format: Format, path: String) throws(PlaylistError) -> PlaylistFile {
        let directory = Path.directory(of: path)
        let defaultName = Path.nameWithoutExtension(path)
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
            let line = raw.trimmingWhitespace().replacing("\u{FEFF}", with: "")
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                if name == nil, line.hasPrefix("#PLAYLIST:") {
                    let title = line.dropFirst("#PLAYLIST:".count).trimmingWhitespace()
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
            let line = raw.trimmingWhitespace().replacing("\u{FEFF}", with: "")
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
            let key = line[..<equals].trimmingWhitespace().lowercased()
            let value = line[line.index(after: equals)...].trimmingWhitespace()
            if key.hasPrefix("file"), let number = Int(key.dropFirst(4)) {
                files.append((number, try entry(value, directory: directory, path: path, line: index + 1)))
            }
        }
        guard sawSection else { throw PlaylistError("\(path) has no [playlist] section") }
        return PlaylistFile(name: defaultName, entries: files.sorted { $0.0 < $1.0 }.map(\.1))
    }

    // XSPF (xspf.org/spec): <playlist><title/><trackList><track><location>URI</location>.
    private static func parseXSPF(_ data: Data, directory: String, path: String, defaultName: String) throws(PlaylistError) -> PlaylistFile {
        // XML is UTF-8 unless its declaration says otherwise; Latin-1 is the other one met in practice
        guard let text = String(validating: data, as: UTF8.self)
            ?? (String(decoding: data.prefix(100), as: UTF8.self).lowercased().contains("iso-8859-1")
                ? String(data: data, encoding: .isoLatin1) : nil)
        else {
            throw PlaylistError("\(path) is not a valid XSPF playlist (not UTF-8 text)")
        }
        var reader = XMLReader(text)
        var sawPlaylist = false
        var title: String?
        var locations: [(line: Int, text: String)] = []
        var elementText = ""
        do throws(XMLReader.Failure) {
            while let event = try reader.next() {
                switch event {
                case .start:
                    if reader.openElements == ["playlist"] { sawPlaylist = true }
                    elementText = ""
                case .text(let text):
                    elementText += text
                case .end(let name):
                    switch reader.openElements + [name] {
                    case ["playlist", "title"]: title = elementText
                    case ["playlist", "trackList", "track", "location"]: locations.append((reader.line, elementText.trimmingWhitespace()))
                    default: break
                    }
                    elementText = ""
                }
            }
        } catch {
            throw PlaylistError("\(path) is not a valid XSPF playlist (line \(error.line): \(error.message))")
        }
        guard sawPlaylist, reader.openElements.isEmpty else {
            let why = sawPlaylist ? "it ends inside <\(reader.openElements.last ?? "")>" : "no <playlist> element"
            throw PlaylistError("\(path) is not a valid XSPF playlist (\(why))")
        }
        var entries: [MediaURI] = []
        for (line, location) in locations {
            // locations are URIs (xspf.org/spec 4.1.1.2.14.1.1.1); a relative one is against the file
            let text = location.contains("://") || location.hasPrefix("/") ? location
                : (location.removingPercentEscapes() ?? location)
            entries.append(try entry(text, directory: directory, path: path, line: line))
        }
        let name = title?.trimmingWhitespace()
        return PlaylistFile(name: name.flatMap { $0.isEmpty ? nil : $0 } ?? defaultName, entries: entries)
    }
}

extension PlaylistFile {
    /// How much of a file `title(of:)` reads: the title is in its head (before the entries).
    public static let titleScanSize = 64 * 1024

    /// The title a playlist file carries, read from its first `titleScanSize` bytes: the first
    /// `#PLAYLIST:` directive of an extended M3U, the `<title>` of an XSPF `<playlist>` (before its
    /// `<trackList>`); nil when it has none (PLS has no title), or cannot be read.
    public static func title(of path: String) -> String? {
        guard let format = format(of: path), format != .pls, let head = Files.readHead(path, count: titleScanSize), !head.isEmpty
        else { return nil }
        let title: String? = switch format {
        case .m3u, .m3u8: m3uTitle(head, latin1: format == .m3u)
        case .xspf: xspfTitle(head)
        case .pls: nil
        }
        return title.map { $0.trimmingWhitespace() }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The first #PLAYLIST: line among whole lines of `head` (UTF-8; Latin-1 in a plain M3U that
    /// is not UTF-8, as `parse` takes it).
    private static func m3uTitle(_ head: [UInt8], latin1: Bool) -> String? {
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

    /// The text of `<playlist><title>` in the head of an XSPF file, read up to it and no further:
    /// a `<trackList>` first, another root or a head cut before the title give nil.
    private static func xspfTitle(_ head: [UInt8]) -> String? {
        // a cut in the middle of a UTF-8 sequence: the valid prefix is what counts
        var text = String(decoding: head, as: UTF8.self)
        if String(validating: head, as: UTF8.self) == nil,
           String(decoding: head.prefix(100), as: UTF8.self).lowercased().contains("iso-8859-1") {
            text = String(data: Data(head), encoding: .isoLatin1) ?? text
        }
        var reader = XMLReader(text)
        var elementText = ""
        while let event = try? reader.next() {
            switch event {
            case .start(let name):
                let open = reader.openElements
                if open == ["playlist", "trackList"] || (open.count == 1 && name != "playlist") { return nil }
                elementText = ""
            case .text(let text):
                elementText += text
            case .end(let name):
                if reader.openElements + [name] == ["playlist", "title"] { return elementText }
                elementText = ""
            }
        }
        return nil
    }
}
