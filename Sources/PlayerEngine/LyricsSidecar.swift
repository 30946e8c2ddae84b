import Basics
import PlayerModel

/// The `.lrc` file beside a local file: `song.lrc` for `song.mp3`, the plain name only (not
/// `song.en.lrc`). Read where the item's tags are read, off the queue that answers D-Bus: by the
/// tag reader for a queued file, beside the engine's queue for the one it loads.
enum LyricsSidecar {
    /// A larger file is no lyrics file and is not read.
    static let maximumFileBytes = 1024 * 1024

    /// The path of the sidecar of a file at `path`: its extension replaced by `lrc`.
    static func path(besides path: String) -> String? {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let name = path[slash...]
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        guard name[name.index(after: dot)...].lowercased() != "lrc" else { return nil }
        return String(path[..<dot]) + ".lrc"
    }

    /// The sidecar's lyrics, or nil when there is none, it cannot be read, is too large or holds no
    /// lyrics.
    static func read(besides uri: MediaURI) -> Lyrics? {
        guard let file = uri.path, let sidecar = path(besides: file),
              let bytes = Files.readHead(sidecar, count: maximumFileBytes + 1),
              bytes.count <= maximumFileBytes else { return nil }
        return Lyrics.parseLRC(decode(bytes))
    }

    /// UTF-8, with or without its byte order mark; UTF-16 with one; anything else that is not
    /// valid UTF-8 read as Latin-1 (ISO-8859-1), the usual encoding of older `.lrc` files in
    /// western languages (a Windows-1252 file's curly quotes come out as control characters; no
    /// guess is made among other encodings).
    static func decode(_ bytes: [UInt8]) -> String {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return String(decoding: bytes.dropFirst(3), as: UTF8.self) }
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            let big = bytes[0] == 0xFE
            var units: [UInt16] = []
            var index = 2
            while index + 1 < bytes.count {
                let high = UInt16(bytes[big ? index : index + 1])
                let low = UInt16(bytes[big ? index + 1 : index])
                units.append(high << 8 | low)
                index += 2
            }
            return String(decoding: units, as: UTF16.self)
        }
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
}
