import Basics
import DBus
import FoundationEssentials

/// Stop after the current track and the sleep timer (the extension's `StopAfterCurrent`,
/// `SleepTimerDeadline`, `SetSleepTimer`, `CancelSleepTimer`).
extension TonearmClient {
    public func stopsAfterCurrent() throws -> Bool { try extensionFlag("StopAfterCurrent") }

    public func setStopAfterCurrent(_ on: Bool) throws {
        try setProperty(Self.extensionInterface, "StopAfterCurrent", .bool(on))
    }

    /// Pauses `length` from now, fading out over the last 10 s; replaces a timer already set.
    public func setSleepTimer(_ length: Duration) throws {
        try call(Self.extensionInterface, "SetSleepTimer", [.int64(length.microsecondsSaturating)])
    }

    public func cancelSleepTimer() throws { try call(Self.extensionInterface, "CancelSleepTimer") }
}

/// A sleep timer's length as a person types it: `90s`, `30m`, `1h`, `1h30m`, `45` (minutes, as
/// a sleep timer is mostly set in minutes); a day at most.
public enum SleepLength {
    public static let longest = Duration.seconds(86_400)

    public static func parse(_ text: String) throws(TimeText.ParseError) -> Duration {
        let invalid = TimeText.ParseError(description: "not a sleep time (such as 90s, 30m, 1h or 1h30m): \(text)")
        guard !text.isEmpty else { throw invalid }
        if text.allSatisfy({ $0.isASCII && $0.isNumber }) {
            return try checked(minutes: text, text)
        }
        var total = 0.0
        var number = ""
        var units: Set<Character> = []
        for character in text {
            if character.isASCII && character.isNumber {
                number.append(character)
                continue
            }
            // each unit once and a number before it: "1h30m", not "30mm" nor "h"
            guard let scale = ["h": 3600.0, "m": 60.0, "s": 1.0][character], !number.isEmpty, units.insert(character).inserted,
                  let value = Double(number) else { throw invalid }
            total += value * scale
            number = ""
        }
        guard number.isEmpty else { throw invalid }  // "1h30": a number with no unit after a unit
        return try checked(seconds: total, text)
    }

    private static func checked(minutes text: String, _ whole: String) throws(TimeText.ParseError) -> Duration {
        guard let minutes = Double(text) else { throw TimeText.ParseError(description: "not a sleep time: \(whole)") }
        return try checked(seconds: minutes * 60, whole)
    }

    private static func checked(seconds: Double, _ whole: String) throws(TimeText.ParseError) -> Duration {
        // digits only, so never NaN; a huge number is infinity, refused like any length over a day
        guard seconds > 0 else { throw TimeText.ParseError(description: "a sleep timer must last longer than 0: \(whole)") }
        guard seconds <= Double(longest.components.seconds) else {
            throw TimeText.ParseError(description: "a sleep timer lasts at most a day (24h), not \(whole)")
        }
        return .seconds(seconds)
    }
}
