import ArgumentParser
import TonearmClient

/// The extension's `ReplayGainMode`.
enum ReplayGainName: String, ExpressibleByArgument, CaseIterable {
    case off, track, album, auto
}

struct ReplayGain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replaygain",
        abstract: "ReplayGain: off, track, album, or auto (album gain while an album plays in order), and a pre-amp in dB.",
        discussion: "With no argument, prints the mode and the pre-amp. Kept across restarts.")
    @OptionGroup var service: ServiceOptions
    @Argument(help: "off, track, album or auto.") var mode: ReplayGainName?
    @Option(name: .long, help: ArgumentHelp("Added to tagged files' gain, -15 to 15 dB.", valueName: "dB")) var preamp: Double?

    func validate() throws {
        if let preamp, !(preamp.isFinite && (-15...15).contains(preamp)) {
            throw ValidationError("--preamp is from -15 to 15 dB")
        }
    }

    func run() throws {
        try service.withClient { client in
            if mode == nil && preamp == nil {
                guard let audio = try client.status().audio else { throw ClientError(.unexpectedReply, "this tonearmd has no ReplayGain") }
                print(Format.replayGain(audio))
            } else {
                try client.setReplayGain(mode: mode?.rawValue, preamp: preamp)
            }
        }
    }
}

struct EQ: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eq",
        abstract: "The 10-band equalizer: a preset, ten gains in dB, or flat (off).",
        discussion: """
            tonearm eq                 prints the preset and the gains
            tonearm eq list            prints the presets (* marks the one in use)
            tonearm eq PRESET          uses a preset: flat, rock, pop, jazz, classical, bass, treble, vocal, or one saved
            tonearm eq G1 ... G10      sets the gains (-12 to 12 dB) of the bands at 29, 59, 119, 237, 474, 947 Hz, \
            1.9, 3.8, 7.5 and 15 kHz
            tonearm eq save NAME       saves the gains as a preset of your own
            tonearm eq delete NAME     deletes a preset of your own
            Kept across restarts.
            """)
    @OptionGroup var service: ServiceOptions
    // a gain of -3 is no option: every word the options do not take is one of these
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("list, PRESET, ten gains, save NAME or delete NAME.", valueName: "words"))
    var words: [String] = []

    enum Action {
        case show, list, preset(String), gains([Double]), save(String), delete(String)
    }

    func action() throws -> Action {
        switch words.count {
        case 0: return .show
        case 1 where words[0] == "list": return .list
        case 1 where Double(words[0]) == nil: return .preset(words[0])
        case 2 where words[0] == "save": return .save(words[1])
        case 2 where words[0] == "delete": return .delete(words[1])
        case 10:
            let gains = words.compactMap { Double($0) }
            guard gains.count == 10, gains.allSatisfy({ $0.isFinite && (-12...12).contains($0) }) else {
                throw ValidationError("the ten gains are numbers from -12 to 12 (dB)")
            }
            return .gains(gains)
        default:
            throw ValidationError("give list, a preset's name, ten gains, save NAME or delete NAME")
        }
    }

    func validate() throws { _ = try action() }

    func run() throws {
        let action = try action()
        try service.withClient { client in
            switch action {
            case .show:
                guard let audio = try client.status().audio else { throw ClientError(.unexpectedReply, "this tonearmd has no equalizer") }
                print(Format.equalizer(audio))
            case .list:
                let current = try client.status().audio?.equalizerPreset
                for name in try client.equalizerPresets() { print(name == current ? "* \(name)" : "  \(name)") }
            case .preset(let name): try client.selectEqualizerPreset(name)
            case .gains(let gains): try client.setEqualizer(gains)
            case .save(let name): try client.saveEqualizerPreset(name)
            case .delete(let name): try client.deleteEqualizerPreset(name)
            }
        }
    }
}

extension Format {
    /// "track, pre-amp +2 dB"; "off".
    static func replayGain(_ audio: AudioStatus) -> String {
        audio.replayGain == "off" ? "off" : "\(audio.replayGain), pre-amp \(decibels(audio.preamp))"
    }

    /// "rock: +5 +4 +2 -1 ..." ("custom" for gains of no preset); "flat".
    static func equalizer(_ audio: AudioStatus) -> String {
        let name = audio.equalizerPreset.isEmpty ? "custom" : audio.equalizerPreset
        guard audio.equalizer.contains(where: { $0 != 0 }) else { return name }
        return "\(name): " + audio.equalizer.map { decibels($0, unit: false) }.joined(separator: " ")
    }

    static func decibels(_ value: Double, unit: Bool = true) -> String {
        let rounded = (value * 10).rounded() / 10
        let text = rounded == rounded.rounded() ? "\(Int(rounded))" : "\(rounded)"
        return (rounded > 0 ? "+" : "") + text + (unit ? " dB" : "")
    }
}
