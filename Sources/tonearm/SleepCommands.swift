import ArgumentParser
import FoundationEssentials
import TonearmClient

struct StopAfter: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop-after",
        abstract: "Stop when the current track ends (on, the default), or not (off).",
        discussion: "The next track becomes current, stopped at its start; then it turns off by itself.")
    @OptionGroup var service: ServiceOptions
    @Argument(help: "on (the default) or off.") var state: Switch = .on

    func run() throws { try service.withClient { try $0.setStopAfterCurrent(state == .on) } }
}

struct Sleep: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Pause after a while, fading out over the last 10 s; `off` cancels.",
        discussion: "90s, 30m, 1h, 1h30m, or a number of minutes; a day at most. It counts on while paused.")
    @OptionGroup var service: ServiceOptions
    @Argument(help: ArgumentHelp("How long from now (90s, 30m, 1h30m, 45), or off.", valueName: "time")) var time: String

    func validate() throws { _ = try length() }

    /// nil: off.
    private func length() throws -> Duration? {
        if time == "off" { return nil }
        do { return try SleepLength.parse(time) } catch { throw ValidationError(error.description) }
    }

    func run() throws {
        let length = try length()
        try service.withClient { client in
            if let length { try client.setSleepTimer(length) } else { try client.cancelSleepTimer() }
        }
    }
}
