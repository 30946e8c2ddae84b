import DBus
import PlayerModel

/// ReplayGain and the equalizer on io.github.tonearm.Player1 (docs/sound.md): the player's
/// `AudioSettings`, announced by `.audioChanged` (the extension's change rules). A bad value is
/// refused with InvalidArgs before the player sees it.
extension MPRISService {
    static func audioProperties(_ player: Player) -> [InterfaceDescription.Property] {
        [
            .typed("ReplayGainMode", get: { player.audio.replayGain.rawValue }, set: { (value: String) in
                guard let mode = ReplayGainMode(rawValue: value) else {
                    throw DBusError.invalidArgs("ReplayGainMode is off, track, album or auto, not \(value.prefix(64).debugDescription)")
                }
                player.setReplayGainMode(mode)
            }),
            .typed("ReplayGainPreamp", get: { player.audio.preamp }, set: { (preamp: Double) in
                guard preamp.isFinite, AudioSettings.preampRange.contains(preamp) else {
                    throw DBusError.invalidArgs("ReplayGainPreamp is from -15 to 15 dB, not \(preamp)")
                }
                player.setReplayGainPreamp(preamp)
            }),
            .typed("Equalizer", get: { player.audio.equalizer }, set: { (gains: [Double]) in
                guard Equalizer.isValid(gains) else {
                    throw DBusError.invalidArgs("Equalizer takes 10 gains from -12 to 12 dB, not \(gains.prefix(16))")
                }
                player.setEqualizer(gains)
            }),
            .typed("EqualizerPreset", get: { player.audio.equalizerPreset }, set: { (name: String) in
                guard player.selectEqualizerPreset(name) else {
                    throw DBusError.invalidArgs("no equalizer preset \(name.prefix(64).debugDescription): EqualizerPresets lists them")
                }
            }),
            .typed("EqualizerPresets", get: { player.audio.presetNames }),
        ]
    }

    static func audioMethods(_ player: Player) -> [InterfaceDescription.Method] {
        [
            .typed("SaveEqualizerPreset", arguments: ["name"]) { (name: String, _) in
                guard Equalizer.isValidName(name) else {
                    throw DBusError.invalidArgs("a preset's name is 1 to 64 characters, no control characters, and not a built-in preset's: \(name.prefix(64).debugDescription)")
                }
                guard player.saveEqualizerPreset(name) else {
                    throw ServiceError("Failed", "at most \(Equalizer.maximumUserPresets) presets of your own: delete one first")
                }
            },
            .typed("DeleteEqualizerPreset", arguments: ["name"]) { (name: String, _) in
                guard player.deleteEqualizerPreset(name) else {
                    throw DBusError.invalidArgs("no preset of the user's is called \(name.prefix(64).debugDescription)")
                }
            },
        ]
    }

    static let audioPropertyNames = ["ReplayGainMode", "ReplayGainPreamp", "Equalizer", "EqualizerPreset", "EqualizerPresets"]
}
