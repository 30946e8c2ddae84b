import Basics

/// Lyrics from a sidecar `.lrc` file beside a local file (issue 40, item 6): its text without the
/// time tags, for `xesam:asText` when the file has no lyrics of its own, and its synced lines, for
/// the extension's `SyncedLyrics`. Embedded lyrics are `Metadata.lyrics`, plain text only.
public struct Lyrics: Hashable, Sendable, Codable {
    /// The lyric lines in the file's order, without time or ID tags, joined by newlines.
    public var text: String
    /// The lines with a time, sorted by time (a line with several time tags is here once per tag);
    /// empty for an `.lrc` without time tags.
    public var lines: [LyricLine]

    public init(text: String, lines: [LyricLine]) {
        self.text = text
        self.lines = lines
    }

    /// How much text is kept, in UTF-8 bytes: embedded lyrics, a sidecar's text, and a sidecar's
    /// synced lines each (a song's lyrics are a few KiB; a tag or a file that holds more is cut at
    /// a line's end, so that a D-Bus message, a wire line and an item stay small).
    public static let maximumBytes = 64 * 1024
    /// At most this many synced lines are kept.
    public static let maximumLines = 4096
    /// A time tag beyond this (100 hours) is ignored as malformed.
    public static let maximumTime = Duration.seconds(100 * 3600)

    /// `text` cut to `maximumBytes` at the end of its last whole line (or character, for a single
    /// long line); nil for text that is empty or only white space.
    public static func capped(_ text: String) -> String? {
        let trimmed = text.trimmingWhitespace()
        guard !trimmed.isEmpty else { return nil }
        guard trimmed.utf8.count > maximumBytes else { return trimmed }
        var bytes = 0
        var end = trimmed.startIndex
        var lastLineEnd: String.Index?
        for index in trimmed.indices {
            bytes += trimmed[index].utf8.count
            if bytes > maximumBytes { break }
            end = trimmed.index(after: index)
            if trimmed[index] == "\n" { lastLineEnd = index }
        }
        return String(trimmed[..<(lastLineEnd ?? end)])
    }

    /// Parses LRC: `[mm:ss.xx]text` lines, several time tags on a line, `[offset:+/-ms]` (positive
    /// shows lines sooner, as the format's authors meant), ID tags (`[ar:…]`, `[ti:…]`, …) ignored,
    /// and lines without time tags kept as text; a leading byte order mark is dropped. A time tag that does not parse makes its line plain
    /// text; nothing in the input can trap. Nil when nothing is left.
    public static func parseLRC(_ content: String) -> Lyrics? {
        var textLines: [String] = []
        var timed: [(time: Duration, order: Int, text: String)] = []
        var offset = Duration.zero
        var textBytes = 0
        var timedBytes = 0
        let content = content.first == "\u{FEFF}" ? content.dropFirst() : Substring(content)  // a byte order mark
        for rawLine in content.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) {
            var rest = Substring(rawLine)
            var times: [Duration] = []
            var isTagLine = false
            // leading tags: `[...]` groups
            while rest.first == "[", let close = rest.firstIndex(of: "]") {
                let inside = rest[rest.index(after: rest.startIndex)..<close]
                if let time = parseTime(inside) {
                    times.append(time)
                } else if let colon = inside.firstIndex(of: ":"),
                          inside[inside.startIndex..<colon].allSatisfy({ $0.isLetter }),
                          !inside[inside.startIndex..<colon].isEmpty {
                    isTagLine = true
                    let name = inside[inside.startIndex..<colon].lowercased()
                    if name == "offset",
                       let milliseconds = Int64(inside[inside.index(after: colon)...].trimmingWhitespace().replacingPlus),
                       abs(milliseconds) <= 3_600_000 {
                        offset = .milliseconds(milliseconds)
                    }
                } else {
                    break  // not a tag: the rest is text
                }
                rest = rest[rest.index(after: close)...]
            }
            let text = String(rest).trimmingWhitespace()
            if times.isEmpty {
                if isTagLine && text.isEmpty { continue }
                if text.isEmpty && textLines.last?.isEmpty != false { continue }  // no runs of blank lines
                guard textBytes + text.utf8.count + 1 <= maximumBytes else { continue }
                textBytes += text.utf8.count + 1
                textLines.append(text)
            } else {
                guard textBytes + text.utf8.count + 1 <= maximumBytes else { continue }
                textBytes += text.utf8.count + 1
                textLines.append(text)
                for time in times where timed.count < maximumLines && timedBytes + text.utf8.count <= maximumBytes {
                    timedBytes += text.utf8.count
                    timed.append((time, timed.count, text))
                }
            }
        }
        while textLines.last?.isEmpty == true { textLines.removeLast() }
        let lines = timed.sorted { ($0.time, $0.order) < ($1.time, $1.order) }.map {
            LyricLine(time: max(.zero, $0.time - offset), text: $0.text)
        }
        let text = textLines.joined(separator: "\n")
        guard !text.trimmingWhitespace().isEmpty || !lines.isEmpty else { return nil }
        return Lyrics(text: text, lines: lines)
    }

    /// `mm:ss`, `mm:ss.x`, `mm:ss.xx`, `mm:ss.xxx` (or `:` before the fraction, as some writers
    /// do), minutes of any number of digits up to `maximumTime`; nil otherwise.
    static func parseTime(_ tag: Substring) -> Duration? {
        let parts = tag.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3 else { return nil }
        let minutesText = parts[0]
        var secondsText = parts[1]
        var fractionText: Substring = ""
        if parts.count == 3 {
            fractionText = parts[2]
        } else if let dot = secondsText.firstIndex(of: ".") {
            fractionText = secondsText[secondsText.index(after: dot)...]
            secondsText = secondsText[secondsText.startIndex..<dot]
        }
        func digits(_ text: Substring, _ count: ClosedRange<Int>) -> Int64? {
            guard count.contains(text.count), text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int64(text)
        }
        guard let minutes = digits(minutesText, 1...4), let seconds = digits(secondsText, 1...2), seconds < 60 else { return nil }
        var milliseconds: Int64 = 0
        if parts.count == 3 || tag.contains(".") {
            guard let fraction = digits(fractionText, 1...3) else { return nil }
            milliseconds = fraction * [100, 10, 1][fractionText.count - 1]
        }
        let time = Duration.milliseconds((minutes * 60 + seconds) * 1000 + milliseconds)
        return time <= maximumTime ? time : nil
    }
}

/// One synced line: when it starts (from the track's start) and its text (empty for a pause).
public struct LyricLine: Hashable, Sendable, Codable {
    public var time: Duration
    public var text: String

    public init(time: Duration, text: String) {
        self.time = time
        self.text = text
    }
}

extension StringProtocol {
    fileprivate var replacingPlus: String { first == "+" ? String(dropFirst()) : String(self) }
}
