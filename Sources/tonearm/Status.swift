import ArgumentParser
import FoundationEssentials
import TonearmClient

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print what plays: title, artist, album, state, position, volume, loop, shuffle, linear playback, buffering, error.",
        discussion: """
            --json prints one object (schema in the docs/command-line.md, "tonearm status --json"). --format prints a line \
            with placeholders replaced: \(Format.placeholders.map { "{\($0)}" }.joined(separator: " ")); {{ and }} are \
            braces. An unknown value is empty.
            """)
    @OptionGroup var service: ServiceOptions
    @Flag(name: .long, help: "Print JSON.") var json = false
    @Option(name: .long, help: ArgumentHelp("A line with placeholders such as {title} and {position}.", valueName: "template"))
    var format: String?

    func validate() throws {
        if json && format != nil { throw ValidationError("--json and --format do not go together") }
        if let format {
            do { _ = try Format.Template(format) } catch { throw ValidationError("\(error)") }
        }
    }

    func run() throws {
        let status = try service.withClient { try $0.status() }
        if json {
            print(try Format.json(status))
        } else if let format {
            print(try Format.Template(format).render(status))
        } else {
            print(Format.human(status))
        }
    }
}

/// How a status is printed.
enum Format {
    static func percent(_ volume: Double) -> String { "\(Int((volume * 100).rounded()))%" }

    static func displayTitle(_ metadata: TrackMetadata) -> String {
        let title = metadata.title ?? metadata.url.map { URL(string: $0)?.lastPathComponent ?? $0 } ?? metadata.trackID?.description ?? "?"
        return metadata.artists.isEmpty ? title : "\(title) — \(metadata.artists.joined(separator: ", "))"
    }

    /// `2/5: Title`, or `2/5` when the chapter has no title.
    static func chapterText(_ chapter: ChapterStatus) -> String {
        "\(chapter.number)/\(chapter.count)" + (chapter.title.isEmpty ? "" : ": \(chapter.title)")
    }

    static func human(_ status: PlayerStatus) -> String {
        var lines: [(String, String)] = []
        let metadata = status.metadata
        if metadata.isEmpty {
            lines.append(("track", "(none)"))
        } else {
            lines.append(("title", metadata.title ?? displayTitle(metadata)))
            if !metadata.artists.isEmpty { lines.append(("artist", metadata.artists.joined(separator: ", "))) }
            if let album = metadata.album { lines.append(("album", album)) }
        }
                // the extension says noItem also when stopped with an empty queue: only waiting to play is news
        let waiting = status.playbackStatus == .playing ? status.waitingReason.map { " (waiting: \($0))" } : nil
        lines.append(("status", status.playbackStatus.rawValue + (waiting ?? "")))
        if !metadata.isEmpty {
            if let chapter = status.chapter { lines.append(("chapter", chapterText(chapter))) }
            lines.append(("position", "\(TimeText.format(status.position)) / \(metadata.length.map(TimeText.format) ?? (status.isLive ? "live" : "-:--"))"))
        }
        lines.append(("volume", percent(status.volume) + (status.muted ? " (muted)" : "")))
        lines.append(("loop", status.loop.rawValue))
        lines.append(("shuffle", status.shuffle ? "on" : "off"))
        if status.linearPlayback { lines.append(("linear", "on: no seeking, next or rate change")) }
        if status.rate != 1 { lines.append(("rate", "\(status.rate)")) }
        if status.bufferingPercent < 100 { lines.append(("buffering", "\(status.bufferingPercent)%")) }
        if let size = status.videoSize { lines.append(("video", size.description)) }
        if let audio = status.audio {
            lines.append(("replaygain", replayGain(audio)))
            lines.append(("equalizer", equalizer(audio)))
        }
        // only where there is a choice: a sound server's devices, or one chosen
        if let output = status.output, status.outputDevices > 0 || output != "default" { lines.append(("output", output)) }
        if let crossfade = status.crossfade { lines.append(("crossfade", Format.crossfade(crossfade))) }
        if let error = status.itemError { lines.append(("error", "\(error.message) (\(error.name))")) }
        if status.stopAfterCurrent { lines.append(("stop", "after this track")) }
        if let left = status.sleepLeft(now: wallClock()) { lines.append(("sleep", "in \(TimeText.format(left))")) }
        return lines.map { "\($0.0 + String(repeating: " ", count: max(1, 9 - $0.0.count)))\($0.1)" }.joined(separator: "\n")
    }

    /// `status --json`: the schema in docs/command-line.md, "tonearm status --json". Keys sorted, so the text is
    /// stable too. Add keys, never change or remove one (and bump `version` if that ever must happen).
    struct JSONStatus: Encodable {
        struct Failure: Encodable { var name: String; var message: String }
        struct ReplayGain: Encodable { var mode: String; var preamp: Double }
        struct Equalizer: Encodable { var preset: String; var gains: [Double] }
        struct Crossfade: Encodable { var seconds: Double; var albums: Bool }
        /// The current chapter: its number from 1, how many the track has, its title ("" when none).
        struct Chapter: Encodable { var number: Int; var count: Int; var title: String }
        var version = 1
        var status: String
        var title: String?
        var artist: String?
        var artists: [String]
        var album: String?
        var url: String?
        var trackid: String?
        var position: Double
        var duration: Double?
        var volume: Double
        var muted: Bool
        var loop: String
        var shuffle: Bool
        var rate: Double
        var live: Bool
        var buffering: Int
        var waiting: String?
        var error: Failure?
        var replaygain: ReplayGain?
        var equalizer: Equalizer?
        /// The chosen output: `default` or a device's id.
        var output: String?
        /// Only in `watch`'s lines: what happened.
        var event: String?
        var stopAfter: Bool
        /// Seconds until the sleep timer pauses; nil: none.
        var sleep: Double?
        /// nil from a service without a crossfade; seconds 0: off.
        var crossfade: Crossfade?
        /// The extension's `LinearPlayback`; false from a service without it.
        var linear: Bool
        /// nil when the track has no chapters or the position is before the first.
        var chapter: Chapter?

        enum CodingKeys: String, CodingKey {
            case event, version, status, title, artist, artists, album, url, trackid, position, duration, volume, muted, loop,
                 shuffle, rate, live, buffering, waiting, error, stopAfter, sleep, replaygain, equalizer, output,
                 crossfade, linear, chapter
        }

        // nil is written as null: every key is always there
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(version, forKey: .version)
            try c.encode(status, forKey: .status)
            try c.encode(title, forKey: .title)
            try c.encode(artist, forKey: .artist)
            try c.encode(artists, forKey: .artists)
            try c.encode(album, forKey: .album)
            try c.encode(url, forKey: .url)
            try c.encode(trackid, forKey: .trackid)
            try c.encode(position, forKey: .position)
            try c.encode(duration, forKey: .duration)
            try c.encode(volume, forKey: .volume)
            try c.encode(muted, forKey: .muted)
            try c.encode(loop, forKey: .loop)
            try c.encode(shuffle, forKey: .shuffle)
            try c.encode(rate, forKey: .rate)
            try c.encode(live, forKey: .live)
            try c.encode(buffering, forKey: .buffering)
            try c.encode(waiting, forKey: .waiting)
            try c.encode(error, forKey: .error)
            try c.encode(replaygain, forKey: .replaygain)
            try c.encode(equalizer, forKey: .equalizer)
            try c.encode(output, forKey: .output)
            try c.encodeIfPresent(event, forKey: .event)
            try c.encode(stopAfter, forKey: .stopAfter)
            try c.encode(sleep, forKey: .sleep)
            try c.encode(crossfade, forKey: .crossfade)
            try c.encode(linear, forKey: .linear)
            try c.encode(chapter, forKey: .chapter)
        }
    }

    /// Now on the wall clock, in microseconds since the Unix epoch (what `SleepTimerDeadline` counts in).
    static func wallClock() -> Int64 { Int64((Date().timeIntervalSince1970 * 1e6).rounded()) }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.microsecondsSaturating) / 1_000_000
    }

    /// `status --json`'s object; with `event`, a line of `watch` (the same object and its "event" key).
    static func json(_ status: PlayerStatus, event: String? = nil) throws -> String {
        let metadata = status.metadata
        let value = JSONStatus(
            status: status.playbackStatus.rawValue.lowercased(),
            title: metadata.title, artist: metadata.artists.isEmpty ? nil : metadata.artists.joined(separator: ", "),
            artists: metadata.artists, album: metadata.album, url: metadata.url, trackid: metadata.trackID?.description,
            position: seconds(status.position), duration: metadata.length.map(seconds), volume: status.volume,
            muted: status.muted, loop: status.loop.rawValue, shuffle: status.shuffle, rate: status.rate,
            live: status.isLive, buffering: status.bufferingPercent, waiting: status.waitingReason,
            error: status.itemError.map { JSONStatus.Failure(name: $0.name, message: $0.message) },
            replaygain: status.audio.map { JSONStatus.ReplayGain(mode: $0.replayGain, preamp: $0.preamp) },
            equalizer: status.audio.map { JSONStatus.Equalizer(preset: $0.equalizerPreset, gains: $0.equalizer) },
            output: status.output, event: event,
            stopAfter: status.stopAfterCurrent, sleep: status.sleepLeft(now: wallClock()).map(seconds),
            crossfade: status.crossfade.map { JSONStatus.Crossfade(seconds: $0.seconds, albums: $0.albums) },
            linear: status.linearPlayback,
            chapter: status.chapter.map { JSONStatus.Chapter(number: $0.number, count: $0.count, title: $0.title) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// The placeholders of `--format`.
    static let placeholders = ["title", "artist", "album", "status", "position", "duration", "volume", "muted",
                               "loop", "shuffle", "rate", "url", "trackid", "buffering", "error", "linear", "chapter"]

    static func value(of placeholder: String, in status: PlayerStatus) -> String {
        let metadata = status.metadata
        switch placeholder {
        case "title": return metadata.isEmpty ? "" : metadata.title ?? displayTitle(metadata)
        case "artist": return metadata.artists.joined(separator: ", ")
        case "album": return metadata.album ?? ""
        case "status": return status.playbackStatus.rawValue
        case "position": return metadata.isEmpty ? "" : TimeText.format(status.position)
        case "duration": return metadata.length.map(TimeText.format) ?? ""
        case "volume": return percent(status.volume)
        case "muted": return status.muted ? "muted" : ""
        case "loop": return status.loop.rawValue
        case "shuffle": return status.shuffle ? "on" : "off"
        case "rate": return "\(status.rate)"
        case "url": return metadata.url ?? ""
        case "trackid": return metadata.trackID?.description ?? ""
        case "buffering": return "\(status.bufferingPercent)%"
        case "error": return status.itemError?.message ?? ""
        case "linear": return status.linearPlayback ? "on" : "off"
        case "chapter": return status.chapter.map(chapterText) ?? ""
        default: return ""
        }
    }

    /// A `--format` template, checked when parsed: an unknown placeholder or a lone brace is a usage error.
    struct Template {
        enum Part { case text(String), placeholder(String) }
        let parts: [Part]

        struct Invalid: Error, CustomStringConvertible { var description: String }

        init(_ template: String) throws {
            var parts: [Part] = []
            var text = ""
            var index = template.startIndex
            while index < template.endIndex {
                let character = template[index]
                let next = template.index(after: index)
                if character == "{", next < template.endIndex, template[next] == "{" {
                    text.append("{"); index = template.index(after: next); continue
                }
                if character == "}", next < template.endIndex, template[next] == "}" {
                    text.append("}"); index = template.index(after: next); continue
                }
                if character == "}" { throw Invalid(description: "a lone } in --format (write }} for a brace): \(template)") }
                if character == "{" {
                    guard let close = template[next...].firstIndex(of: "}") else {
                        throw Invalid(description: "a { without } in --format (write {{ for a brace): \(template)")
                    }
                    let name = String(template[next..<close])
                    guard Format.placeholders.contains(name) else {
                        throw Invalid(description: "unknown placeholder {\(name)} in --format; known: \(Format.placeholders.map { "{\($0)}" }.joined(separator: " "))")
                    }
                    if !text.isEmpty { parts.append(.text(text)); text = "" }
                    parts.append(.placeholder(name))
                    index = template.index(after: close)
                    continue
                }
                text.append(character)
                index = next
            }
            if !text.isEmpty { parts.append(.text(text)) }
            self.parts = parts
        }

        func render(_ status: PlayerStatus) -> String {
            parts.map { part in
                switch part {
                case .text(let text): text
                case .placeholder(let name): Format.value(of: name, in: status)
                }
            }.joined()
        }
    }
}
