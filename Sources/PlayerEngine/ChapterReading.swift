import Basics
import FoundationEssentials
import GStreamer
import PlayerModel

/// The chapters of an item, from what GStreamer read (a table of contents: Matroska's chapters,
/// a FLAC cue sheet's tracks, a WAV file's cue points) or from what the engine reads itself
/// (MP3's ID3v2 `CHAP` frames, which no GStreamer element reads). No policy beyond the shape:
/// chapters sorted by start, the ones with no start dropped.
enum ChapterReading {
    /// A table of contents as chapters: of several alternatives (Matroska's editions) the first;
    /// of nested chapters the outermost (a chapter's sub-chapters are parts of it, and a list of
    /// every level would show the same moment twice).
    static func chapters(_ entries: [TocEntry]) -> [Chapter] {
        var found: [Chapter] = []
        func walk(_ entries: [TocEntry]) {
            if let edition = entries.first(where: \.isAlternative) {
                return walk(edition.children)
            }
            for entry in entries {
                guard let start = entry.start else {
                    walk(entry.children)  // a sequence without times of its own: its parts are the chapters
                    continue
                }
                found.append(Chapter(start: .nanoseconds(start), end: entry.stop.map { .nanoseconds($0) },
                                     title: entry.title ?? ""))
            }
        }
        walk(entries)
        return sorted(found)
    }

    static func sorted(_ chapters: [Chapter]) -> [Chapter] {
        chapters.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
    }

    /// The most of an ID3v2 tag read for its chapters: a tag is all at the file's head, and one
    /// this long holds cover images before them at most.
    static let longestTag = 16 << 20

    /// The chapters of a local MP3's ID3v2 tag (`CHAP`, in the order and selection of its
    /// top-level `CTOC` when it has one); empty when it has none or the tag does not parse.
    static func id3Chapters(path: String) -> [Chapter] {
        guard let header = Files.readHead(path, count: 10), let size = ID3Chapters.tagSize(header) else { return [] }
        guard let tag = Files.readHead(path, count: 10 + min(size, longestTag)) else { return [] }
        return ID3Chapters.parse(tag)
    }
}

/// A reader of ID3v2.3 and 2.4 chapter frames (ID3v2 Chapter Frame Addendum 1.0): `CHAP` is an
/// element id ending in a zero byte, the start and end in milliseconds and two byte offsets (four
/// bytes each, big-endian), then frames of its own (`TIT2`: the title); `CTOC` an element id, a
/// flags byte (top-level 0x02, ordered 0x01), a count and that many ids, each ending in a zero byte.
enum ID3Chapters {
    /// The size of the tag after its 10-byte header, when `header` starts an ID3v2.3 or 2.4 tag.
    static func tagSize(_ header: [UInt8]) -> Int? {
        guard header.count >= 10, header[0] == 0x49, header[1] == 0x44, header[2] == 0x33,
              header[3] == 3 || header[3] == 4, header[6...9].allSatisfy({ $0 < 0x80 }) else { return nil }
        return synchsafe(header[6...9])
    }

    static func parse(_ tag: [UInt8]) -> [Chapter] {
        guard let size = tagSize(tag) else { return [] }
        let version = tag[3], flags = tag[5]
        var body = Array(tag[10..<min(tag.count, 10 + size)])
        if version == 3, flags & 0x80 != 0 { body = deunsynchronised(body) }  // 2.3: the whole tag
        var offset = 0
        if flags & 0x40 != 0, body.count >= 4 {  // an extended header: skipped
            let length = version == 4 ? synchsafe(body[0..<4]) : bigEndian(body[0..<4]) + 4
            offset = length
        }
        let frames = self.frames(body, from: offset, version: version, unsynchronised: version == 4 && flags & 0x80 != 0)
        var chapters: [String: Chapter] = [:]
        var order: [String]?
        for (id, data) in frames {
            if id == "CHAP", let (element, chapter) = chapter(data, version: version) {
                chapters[element] = chapters[element] ?? chapter
            } else if id == "CTOC", let (isTopLevel, children) = tableOfContents(data), isTopLevel, order == nil {
                order = children
            }
        }
        let chosen = order.map { $0.compactMap { chapters[$0] } }.flatMap { $0.isEmpty ? nil : $0 } ?? Array(chapters.values)
        return ChapterReading.sorted(chosen)
    }

    /// The frames of a tag's body (or of a `CHAP`'s sub-frames), as id and content, up to padding
    /// or the first frame that does not fit.
    static func frames(_ bytes: [UInt8], from start: Int, version: UInt8, unsynchronised: Bool) -> [(String, [UInt8])] {
        var frames: [(String, [UInt8])] = []
        var offset = start
        while offset + 10 <= bytes.count {
            let idBytes = bytes[offset..<offset + 4]
            guard idBytes.allSatisfy({ (0x41...0x5a).contains($0) || (0x30...0x39).contains($0) }) else { break }
            let size = version == 4 ? synchsafe(bytes[offset + 4..<offset + 8]) : bigEndian(bytes[offset + 4..<offset + 8])
            let frameFlags = Int(bytes[offset + 8]) << 8 | Int(bytes[offset + 9])
            let contentStart = offset + 10
            guard size >= 0, size <= bytes.count - contentStart else { break }
            var content = Array(bytes[contentStart..<contentStart + size])
            offset = contentStart + size
            if version == 4 {
                if frameFlags & 0x000c != 0 { continue }  // compressed or encrypted: not read
                if frameFlags & 0x0001 != 0 { content = Array(content.dropFirst(4)) }  // its data length
                if unsynchronised || frameFlags & 0x0002 != 0 { content = deunsynchronised(content) }
            } else if frameFlags & 0x00c0 != 0 {
                continue  // 2.3: compressed or encrypted
            }
            frames.append((String(decoding: idBytes, as: UTF8.self), content))
        }
        return frames
    }

    static func chapter(_ data: [UInt8], version: UInt8) -> (String, Chapter)? {
        guard let zero = data.firstIndex(of: 0), zero + 17 <= data.count else { return nil }
        let element = String(decoding: data[..<zero], as: UTF8.self)
        let startMs = bigEndian(data[zero + 1..<zero + 5]), endMs = bigEndian(data[zero + 5..<zero + 9])
        var title = ""
        for (id, content) in frames(data, from: zero + 17, version: version, unsynchronised: false) where id == "TIT2" {
            title = text(content)
            break
        }
        let end: Duration? = endMs > startMs && endMs != 0xffff_ffff ? .milliseconds(endMs) : nil
        return (element, Chapter(start: .milliseconds(startMs), end: end, title: title))
    }

    /// A `CTOC`'s top-level flag and its children's element ids.
    static func tableOfContents(_ data: [UInt8]) -> (Bool, [String])? {
        guard let zero = data.firstIndex(of: 0), zero + 2 < data.count else { return nil }
        let flags = data[zero + 1], count = Int(data[zero + 2])
        var children: [String] = []
        var offset = zero + 3
        while children.count < count, offset < data.count, let end = data[offset...].firstIndex(of: 0) {
            children.append(String(decoding: data[offset..<end], as: UTF8.self))
            offset = end + 1
        }
        return (flags & 0x02 != 0, children)
    }

    /// A text frame's first string: ISO-8859-1 (0), UTF-16 with a byte order mark (1),
    /// UTF-16BE (2) or UTF-8 (3); invalid bytes repaired.
    static func text(_ content: [UInt8]) -> String {
        guard let encoding = content.first else { return "" }
        let bytes = content.dropFirst()
        switch encoding {
        case 1, 2:
            var units: [UInt16] = []
            var bigEndian = encoding == 2
            var index = bytes.startIndex
            while index + 1 < bytes.endIndex {
                let unit = bigEndian ? UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
                                     : UInt16(bytes[index + 1]) << 8 | UInt16(bytes[index])
                index += 2
                if units.isEmpty, encoding == 1, unit == 0xfffe { bigEndian.toggle(); continue }
                if units.isEmpty, unit == 0xfeff { continue }
                if unit == 0 { break }
                units.append(unit)
            }
            return String(decoding: units, as: UTF16.self)
        case 3:
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        default:
            return String(bytes.prefix { $0 != 0 }.map { Character(Unicode.Scalar($0)) })
        }
    }

    static func synchsafe(_ bytes: ArraySlice<UInt8>) -> Int { bytes.reduce(0) { $0 << 7 | Int($1 & 0x7f) } }
    static func bigEndian(_ bytes: ArraySlice<UInt8>) -> Int { bytes.reduce(0) { $0 << 8 | Int($1) } }

    /// Undoes unsynchronisation: a zero byte after 0xFF was inserted by the writer.
    static func deunsynchronised(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var previous: UInt8 = 0
        for byte in bytes {
            if !(previous == 0xff && byte == 0) { result.append(byte) }
            previous = byte
        }
        return result
    }
}
