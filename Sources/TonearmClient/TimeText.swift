import Basics

/// Times as a person types and reads them: `75`, `1:15`, `1:02:03`, `+5`, `-0:30`.
public enum TimeText {
    /// `M:SS`, or `H:MM:SS` from an hour on; negative durations get a `-`. Whole seconds, rounded down.
    public static func format(_ duration: Duration) -> String {
        ClockText.format(microseconds: duration.microsecondsSaturating)
    }

    /// A seek target: `SECONDS`, `MM:SS` or `H:MM:SS` is absolute, with a leading `+` or `-`
    /// relative. Seconds may have a fraction. Values saturate at what microseconds in `Int64` hold.
    public enum SeekTarget: Sendable, Equatable {
        case absolute(Duration)
        case relative(Duration)
    }

    /// Why a time did not parse; `description` names the text.
    public struct ParseError: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    public static func parseSeek(_ text: String) throws(ParseError) -> SeekTarget {
        var body = Substring(text)
        var sign: Double? = nil
        if let first = body.first, first == "+" || first == "-" {
            sign = first == "-" ? -1 : 1
            body = body.dropFirst()
        }
        let seconds = try parseTime(body, whole: text)
        guard let duration = Duration.saturatingSeconds(seconds * (sign ?? 1)) else {
            throw ParseError(description: "not a time: \(text)")
        }
        return sign == nil ? .absolute(duration) : .relative(duration)
    }

    /// `SECONDS`, `MM:SS` or `H:MM:SS` without a sign, as seconds. Finite, not negative.
    static func parseTime(_ body: Substring, whole text: String) throws(ParseError) -> Double {
        let fields = body.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(fields.count), fields.allSatisfy({ !$0.isEmpty }) else {
            throw ParseError(description: "not a time (SECONDS, MM:SS or H:MM:SS): \(text)")
        }
        // only digits and one '.': Double() alone would take "nan", "inf", "1e400" and hex
        func number(_ field: Substring, fraction: Bool) throws(ParseError) -> Double {
            let dots = field.filter { $0 == "." }.count
            guard field.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), dots <= (fraction ? 1 : 0),
                  field.contains(where: \.isNumber), let value = Double(field)
            else { throw ParseError(description: "not a time (SECONDS, MM:SS or H:MM:SS): \(text)") }
            // digits only, so never NaN; too many of them are infinity, which saturates like any huge time
            return value.isFinite ? value : .greatestFiniteMagnitude
        }
        if fields.count == 1 { return try number(fields[0], fraction: true) }
        let seconds = try number(fields[fields.count - 1], fraction: true)
        guard seconds < 60 else { throw ParseError(description: "seconds must be below 60 in \(text)") }
        let minutes = try number(fields[fields.count - 2], fraction: false)
        if fields.count == 3 {
            guard minutes < 60 else { throw ParseError(description: "minutes must be below 60 in \(text)") }
            return try number(fields[0], fraction: false) * 3600 + minutes * 60 + seconds
        }
        return minutes * 60 + seconds
    }
}

/// A volume as the CLI takes it: `N%` (or `N`) absolute, `+N%`/`-N%` relative, in percent.
public enum VolumeChange: Sendable, Equatable {
    /// Linear, 0 to 1.
    case absolute(Double)
    /// A change of the linear volume (+0.1 is ten points up).
    case relative(Double)

    public static func parse(_ text: String) throws(TimeText.ParseError) -> VolumeChange {
        var body = Substring(text)
        var sign: Double? = nil
        if let first = body.first, first == "+" || first == "-" {
            sign = first == "-" ? -1 : 1
            body = body.dropFirst()
        }
        if body.hasSuffix("%") { body = body.dropLast() }
        let dots = body.filter { $0 == "." }.count
        guard !body.isEmpty, dots <= 1, body.contains(where: \.isNumber),
              body.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              let parsed = Double(body)
        else { throw TimeText.ParseError(description: "not a volume ([+|-]N%): \(text)") }
        // digits only, so never NaN; too many of them are infinity: saturate
        let percent = parsed.isFinite ? parsed : .greatestFiniteMagnitude
        if let sign { return .relative(sign * min(percent, 100) / 100) }
        guard percent <= 100 else { throw TimeText.ParseError(description: "a volume is 0% to 100%, not \(text)") }
        return .absolute(percent / 100)
    }
}
