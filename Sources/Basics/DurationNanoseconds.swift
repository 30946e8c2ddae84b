/// Whole units of a Duration, saturating, for the clients' numbers (MPRIS microseconds) and the
/// Dispatch, GStreamer and C calls that take nanoseconds.
extension Duration {
    /// Whole nanoseconds (truncated toward zero); Int64.min or Int64.max when out of that range.
    public var nanoseconds: Int64 { whole(per: 1_000_000_000) }
    /// Whole microseconds (truncated toward zero); Int64.min or Int64.max when out of that range.
    public var microseconds: Int64 { whole(per: 1_000_000) }
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    /// Whole units of 1/`perSecond` s, saturating: `components` itself traps beyond Int64 seconds,
    /// so the bounds are checked on the Duration first.
    private func whole(per perSecond: Int64) -> Int64 {
        let unit = Duration.seconds(1) / Int(perSecond)
        if self >= unit * Int(Int64.max) { return .max }
        if self <= unit * Int(Int64.min) { return .min }
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: perSecond)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, sumOverflow) = scaled.addingReportingOverflow(attoseconds / (1_000_000_000_000_000_000 / perSecond))
        if sumOverflow { return attoseconds < 0 ? .min : .max }
        return sum
    }
}
