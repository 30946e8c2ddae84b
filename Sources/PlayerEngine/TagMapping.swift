import EngineLink
import FoundationEssentials
import GStreamer
import PlayerModel

/// Tag names from gst/gsttaglist.h, mapped onto the model's metadata.
enum TagMapping {
    /// The tags as the model's metadata; an embedded image is stored in `covers` and only its
    /// file's URL is kept (none without a cache).
    static func metadata(_ tags: TagList, covers: CoverCache?) -> Metadata {
        var metadata = Metadata()
        metadata.title = tags.string("title")
        metadata.artists = tags.strings("artist")
        metadata.album = tags.string("album")
        metadata.albumArtists = tags.strings("album-artist")
        metadata.trackNumber = tags.unsigned("track-number").map { Int($0) }
        metadata.discNumber = tags.unsigned("album-disc-number").map { Int($0) }
        metadata.genres = tags.strings("genre")
        metadata.date = tags.date("datetime") ?? tags.date("date")
        metadata.comment = tags.string("comment") ?? tags.string("description")
        metadata.audioCodec = tags.string("audio-codec")
        metadata.videoCodec = tags.string("video-codec")
        metadata.bitrate = (tags.unsigned("bitrate") ?? tags.unsigned("nominal-bitrate")).map { Int($0) }
        metadata.organization = tags.string("organization")
        metadata.lyrics = lyrics(tags)
        if let covers, let image = tags.samples("image").first ?? tags.samples("preview-image").first {
            metadata.coverURL = covers.store(image.data, mediaType: image.mediaType)
        }
        return metadata
    }

    /// The file's lyrics, at most `Lyrics.maximumBytes`. GStreamer 1.22 gives the `lyrics` tag only
    /// for MP4's `©lyr`; a Vorbis comment `LYRICS` (or `UNSYNCEDLYRICS`, as foobar2000 and Picard
    /// write it) comes as an `extended-comment` `KEY=value`, and ID3's `USLT` as the frame itself
    /// (`private-id3v2-frame`), which `usltText` reads (checked with gst-discoverer-1.0 1.22.0).
    static func lyrics(_ tags: TagList) -> String? {
        if let text = tags.string("lyrics").flatMap(Lyrics.capped) { return text }
        for comment in tags.strings("extended-comment") {
            guard let equals = comment.firstIndex(of: "=") else { continue }
            let key = comment[..<equals].uppercased()
            if key == "LYRICS" || key == "UNSYNCEDLYRICS",
               let text = Lyrics.capped(String(comment[comment.index(after: equals)...])) {
                return text
            }
        }
        for frame in tags.samples("private-id3v2-frame") {
            if let text = usltText(frame.data).flatMap(Lyrics.capped) { return text }
        }
        return nil
    }

    /// The text of an ID3v2.3 or 2.4 `USLT` frame as GStreamer hands it over (header included):
    /// encoding, language, a description ended by a NUL (two in UTF-16), then the lyrics. A frame
    /// compressed, encrypted or unsynchronised is passed over; v2.4's data length indicator skipped.
    static func usltText(_ frame: Data) -> String? {
        let bytes = [UInt8](frame.prefix(4 * Lyrics.maximumBytes + 64))
        guard bytes.count > 14, bytes[0..<4] == [0x55, 0x53, 0x4C, 0x54] else { return nil }  // "USLT"
        var start = 10
        switch bytes[9] {
        case 0: break
        case 0x01: start += 4  // v2.4: data length indicator
        default: return nil
        }
        guard start + 4 <= bytes.count else { return nil }
        let encoding = bytes[start]
        let body = Array(bytes[(start + 4)...])  // after the encoding and the language
        let wide = encoding == 1 || encoding == 2
        // the description's end
        var textStart: Int?
        var index = 0
        while index < body.count {
            if wide {
                if index + 1 < body.count, body[index] == 0, body[index + 1] == 0 { textStart = index + 2; break }
                index += 2
            } else {
                if body[index] == 0 { textStart = index + 1; break }
                index += 1
            }
        }
        guard let textStart, textStart <= body.count else { return nil }
        let text = Array(body[textStart...])
        switch encoding {
        case 0: return String(text.map { Character(Unicode.Scalar($0)) }.filter { $0 != "\0" })
        case 3: return String(decoding: text.prefix { $0 != 0 }, as: UTF8.self)
        case 1, 2:
            var units: [UInt16] = []
            var bigEndian = encoding == 2
            var offset = 0
            if encoding == 1, text.count >= 2 {
                if text[0] == 0xFE && text[1] == 0xFF { bigEndian = true; offset = 2 }
                else if text[0] == 0xFF && text[1] == 0xFE { offset = 2 }
            }
            while offset + 1 < text.count {
                let unit = bigEndian ? UInt16(text[offset]) << 8 | UInt16(text[offset + 1])
                                     : UInt16(text[offset + 1]) << 8 | UInt16(text[offset])
                if unit == 0 { break }
                units.append(unit)
                offset += 2
            }
            return String(decoding: units, as: UTF16.self)
        default: return nil
        }
    }
}
