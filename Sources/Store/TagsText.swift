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

    static func tags(_ text: String) -> Metadata {
        var tags = Metadata()
        for (index, part) in text.split(separator: field, omittingEmptySubsequences: false).enumerated() where !part.isEmpty {
            let value = String(part)
            switch index {
            case 0: tags.title = value
            case 1: tags.artists = list(part)
            case 2: tags.album = value
            case 3: tags.albumArtists = list(part)
            case 4: tags.trackNumber = Int(value)
            case 5: tags.discNumber = Int(value)
            case 6: tags.genres = list(part)
            case 7: tags.date = value
            case 8: tags.comment = value
            case 9: tags.audioCodec = value
            case 10: tags.videoCodec = value
            case 11: tags.coverURL = URL(string: value)
            case 12: tags.organization = value
            default: break
            }
        }
        return tags
    }

    private static func list(_ part: Substring) -> [String] {
        part.split(separator: entry).map(String.init)
    }
}
