import ArgumentParser
import TonearmClient

struct Play: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play; with files, directories or URIs, add them to the end of the queue and play the first.")
    @OptionGroup var service: ServiceOptions
    @Argument(help: ArgumentHelp("Files, directories or URIs.", valueName: "uri-or-path")) var items: [String] = []

    func run() throws {
        let uris = try locations(items)
        let progress = uris.isEmpty ? nil : WalkProgressLine(named: Dictionary(zip(uris, items)) { first, _ in first })
        defer { progress?.end() }
        try service.withClient { client in
            if uris.isEmpty {
                // only a track loaded again (it was stopped) starts anew: say where, as for items
                let loads = try client.status().playbackStatus == .stopped
                try client.play()
                if loads { try sayWhereItResumes(client) }
            } else {
                try client.enqueue(uris, playNow: true, walkProgress: progress?.show)
                try sayWhereItResumes(client)
            }
        }
    }
}

/// "resuming at 1:02:13" when the track just made current starts where it was left (its place
/// kept: docs/state.md), read once the call that loaded it was answered.
func sayWhereItResumes(_ client: TonearmClient) throws {
    guard let place = try client.resumedFrom() else { return }
    let total = Int(place.components.seconds)
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    print("resuming at \(total / 3600):\(two(total / 60 % 60)):\(two(total % 60))")
}

struct Pause: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Pause.")
    @OptionGroup var service: ServiceOptions
    func run() throws { try service.withClient { try $0.pause() } }
}

struct Toggle: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Play when paused or stopped, pause when playing.")
    @OptionGroup var service: ServiceOptions
    func run() throws { try service.withClient { try $0.toggle() } }
}

struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Stop: release the output, position back to 0.")
    @OptionGroup var service: ServiceOptions
    func run() throws { try service.withClient { try $0.stop() } }
}

struct Next: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Go to the next track.")
    @OptionGroup var service: ServiceOptions
    func run() throws { try service.withClient { try $0.next() } }
}

struct Prev: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Back to the start of the track (more than 3 s in), else to the previous track.")
    @OptionGroup var service: ServiceOptions
    func run() throws { try service.withClient { try $0.previous() } }
}

struct Seek: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Seek to a position, or by an offset with + or -.",
        discussion: "SECONDS, MM:SS or H:MM:SS (seconds may have a fraction): `seek 1:30`, `seek +10`, `seek -0:05`.")
    @OptionGroup var service: ServiceOptions
    // unrecognized: "-5" would otherwise be taken for an option
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("[+|-]SECONDS, [+|-]MM:SS or [+|-]H:MM:SS.", valueName: "time"))
    var time: [String] = []

    /// What was typed, without the `--` that `seek -- -5` may put first.
    private var values: [String] { time.first == "--" ? Array(time.dropFirst()) : time }

    func validate() throws {
        guard values.count == 1 else {
            throw ValidationError(values.isEmpty ? "seek needs a time" : "seek takes one time, not \(values.joined(separator: " "))")
        }
        _ = try target()
    }

    private func target() throws -> TimeText.SeekTarget {
        do { return try TimeText.parseSeek(values[0]) } catch { throw ValidationError(error.description) }
    }

    func run() throws {
        let target = try target()
        try service.withClient { client in
            switch target {
            case .absolute(let position): try client.setPosition(position)
            case .relative(let offset): try client.seek(by: offset)
            }
        }
    }
}

struct Volume: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the volume, set it (N%), or change it (+N% or -N%).")
    @OptionGroup var service: ServiceOptions
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("N%, +N% or -N% (0% to 100%).", valueName: "volume"))
    var volume: [String] = []

    /// What was typed, without the `--` that `volume -- -5%` may put first.
    private var values: [String] { volume.first == "--" ? Array(volume.dropFirst()) : volume }

    func validate() throws {
        guard values.count <= 1 else { throw ValidationError("volume takes one value, not \(values.joined(separator: " "))") }
        _ = try change()
    }

    private func change() throws -> VolumeChange? {
        guard let text = values.first else { return nil }
        do { return try VolumeChange.parse(text) } catch { throw ValidationError(error.description) }
    }

    func run() throws {
        let change = try change()
        try service.withClient { client in
            switch change {
            case nil: print(Format.percent(try client.volume()))
            case .absolute(let volume): try client.setVolume(volume)
            case .relative(let delta): try client.adjustVolume(by: delta)
            }
        }
    }
}

struct Mute: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mute, keeping the volume.")
    @OptionGroup var service: ServiceOptions
    func run() throws { try service.withClient { try $0.setMuted(true) } }
}

struct Unmute: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Unmute: the volume is what it was.")
    @OptionGroup var service: ServiceOptions
    func run() throws { try service.withClient { try $0.setMuted(false) } }
}

extension LoopMode: ExpressibleByArgument {}

struct Loop: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Loop nothing, the track, or the whole queue.")
    @OptionGroup var service: ServiceOptions
    @Argument(help: "none, track or queue.") var mode: LoopMode
    func run() throws { try service.withClient { try $0.setLoop(mode) } }
}

enum Switch: String, ExpressibleByArgument, CaseIterable {
    case on, off
}

struct Shuffle: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Shuffle on or off.")
    @OptionGroup var service: ServiceOptions
    @Argument(help: "on or off.") var state: Switch
    func run() throws { try service.withClient { try $0.setShuffle(state == .on) } }
}

struct Rate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Set the playback rate (pitch is kept): 0.25 to 4, 0 pauses.")
    @OptionGroup var service: ServiceOptions
    @Argument(help: ArgumentHelp("The rate, for example 1.5.", valueName: "rate")) var text: String

    func validate() throws { _ = try rate() }

    private func rate() throws -> Double {
        // Double() alone takes "nan", "inf" and hex
        guard text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), text.filter({ $0 == "." }).count <= 1,
              let rate = Double(text), rate.isFinite
        else { throw ValidationError("not a rate (a number such as 1.5): \(text)") }
        return rate
    }

    func run() throws {
        let rate = try rate()
        try service.withClient { try $0.setRate(rate) }
    }
}

struct Retry: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Load the failed track again.")
    @OptionGroup var service: ServiceOptions
    func run() throws { try service.withClient { try $0.retry() } }
}
