import DBus
import FoundationEssentials
import PlayerModel

/// Stop after the current track and the sleep timer on io.github.tonearm.Player1 (docs/dbus.md, "Stop
/// after the current track, and the sleep timer"): `StopAfterCurrent`, `SleepTimerDeadline`, `SetSleepTimer`, `CancelSleepTimer`.
/// Announced by `.stopAfterCurrentChanged` and `.sleepTimerChanged` (the extension's change rules).
extension MPRISService {
    func bedtimeMethods() -> [InterfaceDescription.Method] {
        [
            .typed("SetSleepTimer", arguments: ["length"]) { [player] (length: Int64, _) in
                guard length >= 0, length <= SleepTimer.longest.microseconds else {
                    throw DBusError.invalidArgs("a sleep timer lasts 0 to \(SleepTimer.longest.microseconds) microseconds (a day), not \(length)")
                }
                player.setSleepTimer(after: .microseconds(length))
            },
            .typed("CancelSleepTimer") { [player] _ in player.cancelSleepTimer() },
        ]
    }

    func bedtimeProperties() -> [InterfaceDescription.Property] {
        [
            .typed("StopAfterCurrent", get: { [player] in player.stopsAfterCurrent },
                   set: { [player] (on: Bool) in player.setStopAfterCurrent(on) }),
            // the wall clock's deadline, taken once when the timer changes: a value that stays
            // put while it runs, so it is announced only when it is set, cancelled or runs out
            .typed("SleepTimerDeadline", get: { [unowned self] in sleepTimerDeadline }),
        ]
    }

    /// `SleepTimerDeadline` for `timer`: microseconds since the Unix epoch, 0 for none.
    static func wallClockDeadline(_ timer: SleepTimer?) -> Int64 {
        guard let timer else { return 0 }
        let left = max(timer.deadline - .now, .zero)
        return Int64((Date().timeIntervalSince1970 * 1e6).rounded()) + left.microseconds
    }
}
