import FoundationEssentials
import PlayerModel

/// An item's tags as one text column of its queue row (schema 7): the fields in a fixed order,
/// separated by the ASCII unit separator, the entries of a list by the record separator, the
/// empty ones at the end left off. A 10,000-item queue is 10,000 short texts read in one pass,
/// with no per-field rows and no JSON to parse (Benchmarks/queue.py, QueueScaleTests).
/// Fields added later go at the end, so that an older text still reads.
enum TagsText {
    private static let field: Character = "\u{1F}"
    private static let entry: Character = "\u{1E}"

    static func text(_ tags: Metadata) -> String? {
        func one(_ value: String?) -> String {
            // tags never hold these control characters; one that does loses it, not the rest
            guard let value else { return "" }
            guard value.contains(where: { $0 == field || $0 == entry }) else { return value }
            return String(value.map { $0 == field || $0 == entry ? " " : $0 })
        }
        func list(_ values: [String]) -> String { values.map(one).joined(separator: String(entry)) }
        let fields = [
            one(tags.title), list(tags.artists), one(tags.album), list(tags.albumArtists),
            tags.trackNumber.map(String.init) ?? "", tags.discNumber.map(String.init) ?? "", list(tags.genres),
            one(tags.date), one(tags.comment), one(tags.audioCodec), one(tags.videoCodec),
            one(tags.coverURL?.absoluteString), one(tags.organization),
        ]
        guard let last = fields.lastIndex(where: { !$0.isEmpty }) else { return nil }
        return fields[...last].joined(separator: String(field))
    }

    /// The tags in `text`; values seen before in `shared` (an album's artist, its cover) are the
    /// same string or URL in memory rather than a copy per entry, and a cover's URL is parsed once.
    static func tags(_ text: String, sharing shared: inout Shared) -> Metadata {
        var tags = Metadata()
        // split on the separators' scalars: no grapheme breaking for a few bytes of ASCII
        for (index, part) in text.unicodeScalars.split(separator: field.unicodeScalars.first!, omittingEmptySubsequences: false)
            .enumerated() where !part.isEmpty {
            let value = Substring(part)
            switch index {
            case 0: tags.title = String(value)
            case 1: tags.artists = list(value, &shared)
            case 2: tags.album = shared.string(value)
            case 3: tags.albumArtists = list(value, &shared)
            case 4: tags.trackNumber = Int(value)
            case 5: tags.discNumber = Int(value)
            case 6: tags.genres = list(value, &shared)
            case 7: tags.date = shared.string(value)
            case 8: tags.comment = String(value)
            case 9: tags.audioCodec = shared.string(value)
            case 10: tags.videoCodec = shared.string(value)
            case 11: tags.coverURL = shared.url(value)
            case 12: tags.organization = shared.string(value)
            default: break
            }
        }
        return tags
    }

    /// The values read so far from one file's texts, for `tags(_:sharing:)`.
    struct Shared {
        private var strings: [Substring: String] = [:]
        private var urls: [Substring: URL?] = [:]

        mutating func string(_ value: Substring) -> String {
            if let known = strings[value] { return known }
            let string = String(value)
            strings[value] = string
            return string
        }

        mutating func url(_ value: Substring) -> URL? {
            if let known = urls[value] { return known }
            let url = URL(string: String(value))
            urls[value] = url
            return url
        }
    }

    private static func list(_ part: Substring, _ shared: inout Shared) -> [String] {
        part.unicodeScalars.split(separator: entry.unicodeScalars.first!).map { shared.string(Substring($0)) }
    }
}
