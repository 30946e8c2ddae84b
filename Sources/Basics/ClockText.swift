/// A time as a clock shows it, for the CLI's lines and the video window's bar alike.
public enum ClockText {
    /// `M:SS`, or `H:MM:SS` from an hour on; negative times get a `-`. Whole seconds, rounded down.
    public static func format(microseconds micro: Int64) -> String {
        let sign = micro < 0 ? "-" : ""
        let total = micro.magnitude / 1_000_000
        let hours = total / 3600, minutes = total / 60 % 60, seconds = total % 60
        func two(_ value: UInt64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(sign)\(hours):\(two(minutes)):\(two(seconds))" : "\(sign)\(minutes):\(two(seconds))"
    }
}
