import Foundation

/// Makes test media at test time with GStreamer's own encoders (`gst-launch-1.0`), in a fresh
/// temporary directory. No media is committed.
public final class MediaGenerator: @unchecked Sendable {
    public enum Format: String, CaseIterable, Sendable {
        case mp3, ogg, opus, flac, wav

        var encoder: String {
            switch self {
            case .mp3: "lamemp3enc"
            case .ogg: "vorbisenc ! oggmux"
            case .opus: "audioresample ! audio/x-raw,rate=48000 ! opusenc ! oggmux"
            case .flac: "flacenc"
            case .wav: "wavenc"
            }
        }
    }

    public struct Tags: Sendable {
        public var title: String?
        public var artist: String?
        public var album: String?
        public var albumArtist: String?
        public var trackNumber: Int?
        public var discNumber: Int?
        public var genre: String?
        public var date: String?
        public var comment: String?
        /// Lyrics: an ID3 `USLT` frame in an MP3 (UTF-8, may hold newlines), a Vorbis comment
        /// `LYRICS` in Ogg, Opus and FLAC (one line: taginject's syntax has no newline).
        public var lyrics: String?
        /// More taginject fields as written there (`replaygain-track-gain=-6.0`), for all but MP3.
        public var extra: [String] = []
        public init(title: String? = nil, artist: String? = nil, album: String? = nil, albumArtist: String? = nil,
                    trackNumber: Int? = nil, discNumber: Int? = nil, genre: String? = nil, date: String? = nil,
                    comment: String? = nil) {
            self.title = title
            self.artist = artist
            self.album = album
            self.albumArtist = albumArtist
            self.trackNumber = trackNumber
            self.discNumber = discNumber
            self.genre = genre
            self.date = date
            self.comment = comment
        }

        /// A `taginject` tag string (gst_tag_list_new_from_string syntax).
        var injection: String {
            func quoted(_ value: String) -> String {
                "(string)\\\"" + value.replacingOccurrences(of: "\"", with: "'") + "\\\""
            }
            var parts: [String] = []
            if let title { parts.append("title=\(quoted(title))") }
            if let artist { parts.append("artist=\(quoted(artist))") }
            if let album { parts.append("album=\(quoted(album))") }
            if let albumArtist { parts.append("album-artist=\(quoted(albumArtist))") }
            if let trackNumber { parts.append("track-number=(uint)\(trackNumber)") }
            if let discNumber { parts.append("album-disc-number=(uint)\(discNumber)") }
            if let genre { parts.append("genre=\(quoted(genre))") }
            if let date { parts.append("datetime=(GstDateTime)\(date)") }
            if let comment { parts.append("comment=\(quoted(comment))") }
            // GStreamer 1.22 writes no lyrics tag to Vorbis comments: a raw comment instead
            if let lyrics { parts.append("extended-comment=\(quoted("LYRICS=" + lyrics))") }
            parts += extra
            return parts.joined(separator: ",")
        }
    }

    public static let sampleRate = 44100
    public let directory: URL

    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-media-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    public func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// A sine tone (44.1 kHz stereo) encoded as `format`, with tags and, for MP3 and FLAC, an
    /// embedded PNG cover.
    public func tone(_ name: String, format: Format, seconds: Double, frequency: Double = 440,
                     tags: Tags = Tags(), cover: Bool = false) throws -> URL {
        let output = url("\(name).\(format.rawValue)")
        let samples = Int(seconds * Double(Self.sampleRate))
        let source = "audiotestsrc num-buffers=\(max(1, samples / 441)) samplesperbuffer=441 freq=\(frequency) volume=0.5"
            + " ! audio/x-raw,rate=\(Self.sampleRate),channels=2"
        // MP3 gets its ID3v2 tag (text and cover) from our own writer; the rest from taginject
        let tagging = tags.injection.isEmpty || format == .mp3 ? "" : " ! taginject @TAGS@"
        try gstLaunch("\(source)\(tagging) ! \(format.encoder) ! filesink location=\(output.path)",
                      tags: "tags=\"\(tags.injection)\"")
        let png = cover ? try coverImage() : nil
        switch format {
        case .mp3:
            try ID3Writer.prepend(tags: tags, cover: png.map { ($0, "image/png") }, to: output)
        case .flac:
            if let png { try FLACWriter.insertPicture(png, mediaType: "image/png", into: output) }
        default:
            break
        }
        return output
    }

    /// An untagged WAV tone of a given sample rate, channel count and sample format (`S16LE`,
    /// `F32LE`, ...): for tests where the audio's shape matters.
    public func wav(_ name: String, seconds: Double, rate: Int, channels: Int, sampleFormat: String) throws -> URL {
        let output = url("\(name).wav")
        let perBuffer = max(1, rate / 100)
        try gstLaunch("audiotestsrc num-buffers=\(max(1, Int(seconds * 100))) samplesperbuffer=\(perBuffer) volume=0.5"
                      + " ! audio/x-raw,format=\(sampleFormat),rate=\(rate),channels=\(channels),layout=interleaved"
                      + " ! wavenc ! filesink location=\(output.path)")
        return output
    }

    /// A small PNG (gst-launch's videotestsrc through pngenc).
    public func coverImage() throws -> Data {
        let output = url("cover-\(UUID().uuidString).png")
        try gstLaunch("videotestsrc num-buffers=1 pattern=smpte ! video/x-raw,width=64,height=64 ! pngenc ! filesink location=\(output.path)")
        defer { try? FileManager.default.removeItem(at: output) }
        return try Data(contentsOf: output)
    }

    /// A VOD HLS stream in `directory/name/`: AAC in MPEG-TS cut into `segments` files at PAT packets
    /// (each segment starts with the tables a demuxer needs), and its `index.m3u8`. Made without
    /// hlssink2, whose EOS hangs gst-launch about one run in three on GStreamer 1.22.0.
    /// With `video`, the segments carry H.264 video too (320x240 at 25 fps, a key frame each second).
    /// `audioBitrate` is avenc_aac's `bitrate` (its default: 128 kbit/s).
    public func hlsStream(_ name: String, seconds: Double, segments: Int, video: Bool = false,
                          audioBitrate: Int? = nil) throws -> URL {
        let folder = url(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let whole = folder.appendingPathComponent("whole.ts")
        let pictures = video
            ? " videotestsrc num-buffers=\(Int(seconds * 25)) ! video/x-raw,width=320,height=240,framerate=25/1"
                + " ! x264enc key-int-max=25 speed-preset=ultrafast ! h264parse ! mux."
            : ""
        try gstLaunch("audiotestsrc num-buffers=\(Int(seconds * 100)) samplesperbuffer=441 ! audio/x-raw,rate=44100,channels=2"
                      + " ! avenc_aac\(audioBitrate.map { " bitrate=\($0)" } ?? "") ! aacparse ! mpegtsmux name=mux"
                      + " ! filesink location=\(whole.path)" + pictures)
        let data = try Data(contentsOf: whole)
        try FileManager.default.removeItem(at: whole)
        let packet = 188
        // offsets of packets that start a PAT (PID 0 with payload_unit_start_indicator)
        let pats = stride(from: 0, to: data.count - packet + 1, by: packet).filter {
            data[$0] == 0x47 && data[$0 + 1] & 0x5F == 0x40 && data[$0 + 2] == 0
        }
        var cuts = [0]
        for index in 1..<segments {
            let target = data.count * index / segments
            if let cut = pats.first(where: { $0 >= target }), cut > cuts.last! { cuts.append(cut) }
        }
        cuts.append(data.count)
        var playlist = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n"
        playlist += "#EXT-X-TARGETDURATION:\(Int((seconds / Double(cuts.count - 1)).rounded(.up)))\n"
        for index in 0..<(cuts.count - 1) {
            let segment = "segment\(index).ts"
            try data[cuts[index]..<cuts[index + 1]].write(to: folder.appendingPathComponent(segment))
            let share = Double(cuts[index + 1] - cuts[index]) / Double(data.count) * seconds
            playlist += "#EXTINF:\(String(format: "%.3f", share)),\n\(segment)\n"
        }
        playlist += "#EXT-X-ENDLIST\n"
        let index = folder.appendingPathComponent("index.m3u8")
        try playlist.write(to: index, atomically: true, encoding: .utf8)
        return index
    }

    /// A VOD HLS stream of fragmented MP4 (AAC) in `directory/name/`: mp4mux's fragments of 2 s
    /// become the segments (`segmentN.m4s`, each a moof and its mdat), its ftyp and moov the
    /// `EXT-X-MAP` init segment, and `index.m3u8` lists them.
    public func hlsFragmentedMP4(_ name: String, seconds: Double) throws -> URL {
        let folder = url(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let whole = folder.appendingPathComponent("whole.mp4")
        try gstLaunch("audiotestsrc num-buffers=\(Int(seconds * 100)) samplesperbuffer=441 ! audio/x-raw,rate=44100,channels=2"
                      + " ! avenc_aac ! aacparse ! mp4mux fragment-duration=2000 streamable=true ! filesink location=\(whole.path)")
        let data = try Data(contentsOf: whole)
        try FileManager.default.removeItem(at: whole)
        // top-level boxes: a 32-bit size (1: a 64-bit one follows the type) and a four-letter type
        var boxes: [(type: String, range: Range<Int>)] = []
        var offset = 0
        while offset + 8 <= data.count {
            func be(_ at: Int, _ count: Int) -> Int { data[at..<at + count].reduce(0) { $0 << 8 | Int($1) } }
            var size = be(offset, 4)
            if size == 1 { size = be(offset + 8, 8) } else if size == 0 { size = data.count - offset }
            guard size >= 8, offset + size <= data.count else { break }
            boxes.append((String(decoding: data[offset + 4..<offset + 8], as: UTF8.self), offset..<offset + size))
            offset += size
        }
        guard let moov = boxes.first(where: { $0.type == "moov" }) else { throw TestError("mp4mux wrote no moov") }
        try data[0..<moov.range.upperBound].write(to: folder.appendingPathComponent("init.mp4"))
        let fragments = boxes.indices.filter { boxes[$0].type == "moof" && $0 + 1 < boxes.count && boxes[$0 + 1].type == "mdat" }
        var playlist = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-MAP:URI=\"init.mp4\"\n"
        for (number, index) in fragments.enumerated() {
            let segment = "segment\(number).m4s"
            try data[boxes[index].range.lowerBound..<boxes[index + 1].range.upperBound].write(to: folder.appendingPathComponent(segment))
            let length = min(2, seconds - 2 * Double(number))
            playlist += "#EXTINF:\(String(format: "%.3f", max(length, 0.001))),\n\(segment)\n"
        }
        playlist += "#EXT-X-ENDLIST\n"
        let index = folder.appendingPathComponent("index.m3u8")
        try playlist.write(to: index, atomically: true, encoding: .utf8)
        return index
    }

    /// A master playlist `name` in the directory offering `variants` (paths of media playlists
    /// relative to it) at the given bandwidths, all AAC audio.
    public func hlsVariants(_ name: String, _ variants: [(playlist: String, bandwidth: Int)]) throws -> URL {
        var master = "#EXTM3U\n"
        for variant in variants {
            master += "#EXT-X-STREAM-INF:BANDWIDTH=\(variant.bandwidth),CODECS=\"mp4a.40.2\"\n\(variant.playlist)\n"
        }
        let index = url(name)
        try master.write(to: index, atomically: true, encoding: .utf8)
        return index
    }

    /// Bytes no demuxer recognises.
    public func garbage(_ name: String) throws -> URL {
        let output = url(name)
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<65536).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try Data(bytes).write(to: output)
        return output
    }

    /// The first `fraction` of a file.
    public func truncated(_ source: URL, fraction: Double, name: String) throws -> URL {
        let data = try Data(contentsOf: source)
        let output = url(name)
        try data.prefix(Int(Double(data.count) * fraction)).write(to: output)
        return output
    }

    /// A copy of a file with the bytes in `range` set to 0xFF.
    public func corrupted(_ source: URL, range: Range<Int>, name: String) throws -> URL {
        var data = try Data(contentsOf: source)
        for index in range where index < data.count { data[index] = 0xFF }
        let output = url(name)
        try data.write(to: output)
        return output
    }

    /// A continuous sine cut into two WAV files at sample `cut`; returns them and the whole tone's
    /// interleaved 16-bit samples for comparison.
    public func splitTone(seconds: Double, cutAtSample cut: Int, frequency: Double = 440)
        throws -> (first: URL, second: URL, samples: [Int16]) {
        let whole = url("whole.wav")
        let frames = Int(seconds * Double(Self.sampleRate))
        try gstLaunch("audiotestsrc num-buffers=\(frames / 441) samplesperbuffer=441 freq=\(frequency) volume=0.5"
                      + " ! audio/x-raw,format=S16LE,rate=\(Self.sampleRate),channels=2 ! wavenc ! filesink location=\(whole.path)")
        let samples = try WAV.samples(of: whole)
        let first = url("part1.wav"), second = url("part2.wav")
        try WAV.write(Array(samples[..<(cut * 2)]), channels: 2, rate: Self.sampleRate, to: first)
        try WAV.write(Array(samples[(cut * 2)...]), channels: 2, rate: Self.sampleRate, to: second)
        return (first, second, samples)
    }

    /// A chapter of `matroskaWithChapters`, in seconds; `children` are nested chapters.
    public struct MatroskaChapter: Sendable {
        public var start: Double
        public var end: Double?
        public var title: String
        public var children: [MatroskaChapter]
        public init(_ start: Double, _ end: Double? = nil, _ title: String, children: [MatroskaChapter] = []) {
            (self.start, self.end, self.title, self.children) = (start, end, title, children)
        }
    }

    /// A silent Matroska audio file (PCM) of `seconds` whose `Chapters` element holds `editions`,
    /// each a list of chapters, nested as given. matroskamux writes a Chapters element from
    /// wavparse's table of contents (a WAV with cues, remuxed by gst-launch-1.0), but only a flat
    /// one in one edition; that element is then overwritten in place by ours, the same size (an
    /// EBML Void fills what ours leaves), so that the SeekHead's offsets still hold.
    public func matroskaWithChapters(_ name: String, seconds: Double, editions: [[MatroskaChapter]]) throws -> URL {
        func count(_ chapters: [MatroskaChapter]) -> Int { chapters.reduce(0) { $0 + 1 + count($1.children) } }
        let atoms = editions.reduce(0) { $0 + count($1) } + editions.count
        // room: one long-titled cue per atom and edition, more than ours take
        let cues = (0..<(atoms + 2)).map { (seconds * Double($0) / Double(atoms + 2), String(repeating: "x", count: 60)) }
        let wav = try wavWithCues("\(name)-source", seconds: seconds, cues: cues)
        let output = url("\(name).mka")
        try gstLaunch("filesrc location=\(wav.path) ! wavparse ! matroskamux ! filesink location=\(output.path)")
        var data = [UInt8](try Data(contentsOf: output))

        // EBML: an id as written, a size as 8 bytes (0x01 and 7), unsigned integers big-endian
        func element(_ id: [UInt8], _ body: [UInt8]) -> [UInt8] {
            id + [0x01] + (0..<7).reversed().map { UInt8(body.count >> ($0 * 8) & 0xff) } + body
        }
        func uint(_ id: [UInt8], _ value: UInt64, width: Int = 8) -> [UInt8] {
            element(id, (0..<width).reversed().map { UInt8(value >> UInt64($0 * 8) & 0xff) })
        }
        var uid: UInt64 = 0x7A_0000
        func atom(_ chapter: MatroskaChapter) -> [UInt8] {
            uid += 1
            var body = uint([0x73, 0xC4], uid) + uint([0x91], UInt64(chapter.start * 1e9))
            if let end = chapter.end { body += uint([0x92], UInt64(end * 1e9)) }
            body += element([0x80], element([0x85], Array(chapter.title.utf8)) + element([0x43, 0x7C], Array("eng".utf8)))
            for child in chapter.children { body += atom(child) }
            return element([0xB6], body)
        }
        let chaptersID: [UInt8] = [0x10, 0x43, 0xA7, 0x70]
        // the element itself, not the SeekHead's mention of it: its body starts with an EditionEntry
        guard let at = (0..<(data.count - 14)).first(where: { i in
            Array(data[i..<i + 4]) == chaptersID && data[i + 4] == 0x01 && data[i + 12] == 0x45 && data[i + 13] == 0xB9
        }) else { throw TestError("matroskamux wrote no Chapters element in \(output.path)") }
        let size = data[at + 5..<at + 12].reduce(0) { $0 << 8 | Int($1) }
        for width in [8, 7] {  // a Void takes 2 bytes at least: one spare byte is taken by a wider uid
            var body: [UInt8] = []
            for edition in editions {
                uid += 1
                body += element([0x45, 0xB9], uint([0x45, 0xBC], uid, width: width) + edition.flatMap(atom))
            }
            let spare = size - body.count
            guard spare >= 0 else { throw TestError("the chapters take \(body.count) bytes, matroskamux left \(size)") }
            if spare == 1 { continue }
            if spare >= 9 {
                body += [0xEC] + element([], [UInt8](repeating: 0, count: spare - 9))
            } else if spare >= 2 {
                body += [0xEC, 0x80 | UInt8(spare - 2)] + [UInt8](repeating: 0, count: spare - 2)
            }
            data.replaceSubrange(at + 12..<at + 12 + size, with: body)
            try Data(data).write(to: output)
            return output
        }
        throw TestError("no way to fill the Chapters element of \(output.path)")
    }

    /// Runs `gst-launch-1.0` on a description; `@TAGS@` stands for one argument that holds spaces.
    public func gstLaunch(_ pipeline: String, tags: String = "") throws {
        // gst-launch-1.0 escapes each argument's spaces, so every token is its own argument
        let tokens = pipeline.split(separator: " ").map { $0 == "@TAGS@" ? tags : String($0) }
        try Processes.run(["gst-launch-1.0", "-q"] + tokens)
    }

    /// A silent mono 16-bit WAV of `seconds` with a cue point at each of `cues` (seconds) labelled
    /// with its title (`cue ` and `LIST`/`adtl`/`labl` chunks before the data): wavparse reads
    /// them as a table of contents.
    public func wavWithCues(_ name: String, seconds: Double, cues: [(seconds: Double, title: String)]) throws -> URL {
        let rate = 8000
        var data = Data()
        func u32(_ v: Int, _ into: inout Data) { withUnsafeBytes(of: UInt32(v).littleEndian) { into.append(contentsOf: $0) } }
        func u16(_ v: Int, _ into: inout Data) { withUnsafeBytes(of: UInt16(v).littleEndian) { into.append(contentsOf: $0) } }
        func chunk(_ id: String, _ body: Data, _ into: inout Data) {
            into.append(contentsOf: Array(id.utf8)); u32(body.count, &into); into.append(body)
            if body.count % 2 == 1 { into.append(0) }
        }
        var body = Data(Array("WAVE".utf8))
        var format = Data()
        u16(1, &format); u16(1, &format); u32(rate, &format); u32(rate * 2, &format); u16(2, &format); u16(16, &format)
        chunk("fmt ", format, &body)
        var cue = Data()
        u32(cues.count, &cue)
        for (index, point) in cues.enumerated() {
            // dwPosition and dwSampleOffset both the sample (wavparse takes the first)
            let sample = Int(point.seconds * Double(rate))
            u32(index + 1, &cue); u32(sample, &cue); cue.append(contentsOf: Array("data".utf8))
            u32(0, &cue); u32(0, &cue); u32(sample, &cue)
        }
        chunk("cue ", cue, &body)
        var list = Data(Array("adtl".utf8))
        for (index, point) in cues.enumerated() {
            var label = Data()
            u32(index + 1, &label); label.append(contentsOf: Array(point.title.utf8) + [0])
            chunk("labl", label, &list)
        }
        chunk("LIST", list, &body)
        chunk("data", Data(count: Int(seconds * Double(rate)) * 2), &body)
        chunk("RIFF", body, &data)
        let output = url("\(name).wav")
        try data.write(to: output)
        return output
    }
}

/// Minimal RIFF/WAVE reading and writing of 16-bit PCM, for comparing captured output.
public enum WAV {
    public struct Malformed: Error {}

    /// Interleaved 16-bit samples of a PCM WAV (the `data` chunk).
    public static func samples(of url: URL) throws -> [Int16] {
        let data = try Data(contentsOf: url)
        var offset = 12
        while offset + 8 <= data.count {
            let id = String(decoding: data[offset..<offset + 4], as: UTF8.self)
            var size = Int(data[offset + 4]) | Int(data[offset + 5]) << 8 | Int(data[offset + 6]) << 16 | Int(data[offset + 7]) << 24
            if id == "data" {
                if size == 0 || offset + 8 + size > data.count { size = data.count - offset - 8 }  // streaming writer
                let body = data[(offset + 8)..<(offset + 8 + size)]
                return stride(from: body.startIndex, to: body.endIndex - 1, by: 2).map {
                    Int16(bitPattern: UInt16(body[$0]) | UInt16(body[$0 + 1]) << 8)
                }
            }
            offset += 8 + size + (size & 1)
        }
        throw Malformed()
    }

    public static func write(_ samples: [Int16], channels: Int, rate: Int, to url: URL) throws {
        var data = Data()
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { data.append(contentsOf: $0) } }
        func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("RIFF".utf8)); u32(36 + samples.count * 2)
        data.append(contentsOf: Array("WAVEfmt ".utf8)); u32(16); u16(1); u16(channels); u32(rate)
        u32(rate * channels * 2); u16(channels * 2); u16(16)
        data.append(contentsOf: Array("data".utf8)); u32(samples.count * 2)
        for sample in samples { withUnsafeBytes(of: sample.littleEndian) { data.append(contentsOf: $0) } }
        try data.write(to: url)
    }
}

/// Writes an ID3v2.4 tag with one APIC frame in front of a file (which may have its own tag after).
public enum ID3Writer {
    /// An ID3v2.4 tag with the text frames of `tags` and an APIC front cover.
    public static func prepend(tags: MediaGenerator.Tags, cover: (Data, String)?, to url: URL) throws {
        var frames: [(String, Data)] = []
        func text(_ id: String, _ value: String?) {
            if let value { frames.append((id, Data([3] + Array(value.utf8)))) }
        }
        text("TIT2", tags.title)
        text("TPE1", tags.artist)
        text("TALB", tags.album)
        text("TPE2", tags.albumArtist)
        text("TRCK", tags.trackNumber.map(String.init))
        text("TPOS", tags.discNumber.map(String.init))
        text("TCON", tags.genre)
        text("TDRC", tags.date)
        if let lyrics = tags.lyrics {
            frames.append(("USLT", Data([3] + Array("eng".utf8) + [0] + Array(lyrics.utf8))))
        }
        if let comment = tags.comment {
            frames.append(("COMM", Data([3] + Array("eng".utf8) + [0] + Array(comment.utf8))))
        }
        if let (image, mediaType) = cover {
            var body = Data([3])  // UTF-8 description
            body.append(contentsOf: Array(mediaType.utf8)); body.append(0)
            body.append(3)  // front cover
            body.append(0)  // empty description
            body.append(image)
            frames.append(("APIC", body))
        }
        if !frames.isEmpty { try prepend(frames: frames, to: url) }
    }

    /// Text frames whose bytes are written as given under the declared encoding (0 Latin-1,
    /// 3 UTF-8): hostile tags for tests.
    public static func prependText(_ frames: [(id: String, encoding: UInt8, bytes: [UInt8])], to url: URL) throws {
        try prepend(frames: frames.map { ($0.id, Data([$0.encoding] + $0.bytes)) }, to: url)
    }

    /// ID3v2.4 chapter frames (`CHAP`, each with a `TIT2` title; a top-level `CTOC` naming them
    /// in order unless `tableOfContents` is false) in front of a file: an audiobook's MP3.
    public static func prependChapters(_ chapters: [(startMs: Int, endMs: Int, title: String)],
                                       tableOfContents: Bool = true, to url: URL) throws {
        func be32(_ value: Int) -> [UInt8] { [UInt8(value >> 24 & 0xff), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)] }
        func frame(_ id: String, _ body: [UInt8]) -> [UInt8] {
            let size = body.count
            return Array(id.utf8) + [UInt8((size >> 21) & 0x7f), UInt8((size >> 14) & 0x7f), UInt8((size >> 7) & 0x7f), UInt8(size & 0x7f)]
                + [0, 0] + body
        }
        var frames: [(String, Data)] = []
        let ids = chapters.indices.map { "chp\($0)" }
        if tableOfContents {
            var body = Array("toc".utf8) + [0, 0x03, UInt8(chapters.count)]
            for id in ids { body += Array(id.utf8) + [0] }
            frames.append(("CTOC", Data(body)))
        }
        // written last first: the order of the frames is not the chapters' order
        for (id, chapter) in zip(ids, chapters).reversed() {
            let body = Array(id.utf8) + [0] + be32(chapter.startMs) + be32(chapter.endMs) + be32(-1 & 0xffff_ffff) + be32(-1 & 0xffff_ffff)
                + frame("TIT2", [3] + Array(chapter.title.utf8))
            frames.append(("CHAP", Data(body)))
        }
        try prepend(frames: frames, to: url)
    }

    static func prepend(frames: [(String, Data)], to url: URL) throws {
        func synchsafe(_ value: Int) -> [UInt8] {
            [UInt8((value >> 21) & 0x7f), UInt8((value >> 14) & 0x7f), UInt8((value >> 7) & 0x7f), UInt8(value & 0x7f)]
        }
        var tagBody = Data()
        for (id, body) in frames {
            tagBody.append(contentsOf: Array(id.utf8))
            tagBody.append(contentsOf: synchsafe(body.count))
            tagBody.append(contentsOf: [0, 0])
            tagBody.append(body)
        }
        var tag = Data(Array("ID3".utf8) + [4, 0, 0])
        tag.append(contentsOf: synchsafe(tagBody.count))
        tag.append(tagBody)
        let original = try Data(contentsOf: url)
        try (tag + original).write(to: url)
    }
}

/// Inserts a PICTURE metadata block after a FLAC file's STREAMINFO.
public enum FLACWriter {
    public struct NotFLAC: Error {}

    public static func insertPicture(_ image: Data, mediaType: String, into url: URL) throws {
        var data = try Data(contentsOf: url)
        guard data.prefix(4) == Data(Array("fLaC".utf8)) else { throw NotFLAC() }
        func u32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)] }
        var picture = Data(u32(3))  // front cover
        picture.append(contentsOf: u32(mediaType.utf8.count) + Array(mediaType.utf8))
        picture.append(contentsOf: u32(0))  // description
        picture.append(contentsOf: u32(64) + u32(64) + u32(24) + u32(0))
        picture.append(contentsOf: u32(image.count))
        picture.append(image)
        // STREAMINFO is 4 + 34 bytes; if it was the last block, it no longer is
        let streamInfoHeader = 4
        let wasLast = data[streamInfoHeader] & 0x80 != 0
        data[streamInfoHeader] &= 0x7f
        var block = Data([UInt8(6) | (wasLast ? 0x80 : 0)])
        block.append(contentsOf: u32(picture.count).suffix(3))
        block.append(picture)
        data.insert(contentsOf: block, at: 4 + 4 + 34)
        try data.write(to: url)
    }
}
