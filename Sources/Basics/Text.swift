extension StringProtocol {
    /// Without the white space and line breaks at either end (what `trimmingCharacters(in:
    /// .whitespacesAndNewlines)` did: Unicode's White_Space, which `Character.isWhitespace` is).
    public func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }) else { return "" }
        let last = lastIndex(where: { !$0.isWhitespace })!
        return String(self[first...last])
    }

    /// Percent-escapes (`%20`) decoded; nil when an escape is malformed or the bytes are not
    /// UTF-8, as `removingPercentEncoding` answered.
    public func removingPercentEscapes() -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var rest = utf8[...]
        while let byte = rest.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = rest.popFirst().flatMap(hexValue), let low = rest.popFirst().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

extension String {
    /// One line of a line protocol: `%`, line feeds and carriage returns percent-escaped, which
    /// `removingPercentEscapes()` undoes (a file's name may hold a line break).
    public func percentEscapingLineBreaks() -> String {
        var escaped = ""
        escaped.reserveCapacity(utf8.count)
        for character in unicodeScalars {
            switch character {
            case "%": escaped += "%25"
            case "\n": escaped += "%0A"
            case "\r": escaped += "%0D"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

/// Numbers as text with a fixed number of digits, where `String(format:)` (Foundation proper) was.
public enum Digits {
    /// `value` in `radix` with zeros after its sign up to `width` characters (`%04d`, `%016llx`).
    public static func padded<Value: BinaryInteger>(_ value: Value, width: Int, radix: Int = 10) -> String {
        let sign = value < 0 ? "-" : ""
        let digits = String(value.magnitude, radix: radix)
        return sign + String(repeating: "0", count: max(0, width - sign.count - digits.count)) + digits
    }

    /// `value` rounded to `fractionDigits` digits after the point (`%.1f`), a tie to the even
    /// digit. A value that is not exact in binary (29.95) can round up where printf, which rounds the
    /// exact binary value, rounds down.
    public static func fixed(_ value: Double, fractionDigits: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale: Double = 1
        for _ in 0..<fractionDigits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded(.toNearestOrEven)
        guard scaled < 9.0e18 else { return "\(value)" }
        let units = UInt64(scaled), whole = units / UInt64(scale), fraction = units % UInt64(scale)
        let sign = value < 0 && units != 0 ? "-" : ""
        return fractionDigits == 0 ? sign + "\(whole)" : sign + "\(whole)." + padded(fraction, width: fractionDigits)
    }
}
