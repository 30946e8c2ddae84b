import DBus

/// ReplayGain and the equalizer (docs/sound.md): the extension's properties and methods.
extension TonearmClient {
    /// The extension's `ReplayGainMode` (`off`, `track`, `album`, `auto`) and, when given,
    /// `ReplayGainPreamp` in dB (the service refuses other values with InvalidArgs).
    public func setReplayGain(mode: String?, preamp: Double?) throws {
        if let preamp { try setProperty(Self.extensionInterface, "ReplayGainPreamp", .double(preamp)) }
        if let mode { try setProperty(Self.extensionInterface, "ReplayGainMode", .string(mode)) }
    }

    /// The extension's `Equalizer`: ten gains in dB, -12 to 12.
    public func setEqualizer(_ gains: [Double]) throws {
        try setProperty(Self.extensionInterface, "Equalizer", gains.dbusValue)
    }

    /// The extension's `EqualizerPreset`: one of `equalizerPresets()`.
    public func selectEqualizerPreset(_ name: String) throws {
        try setProperty(Self.extensionInterface, "EqualizerPreset", .string(name))
    }

    public func saveEqualizerPreset(_ name: String) throws {
        _ = try call(Self.extensionInterface, "SaveEqualizerPreset", [.string(name)])
    }

    public func deleteEqualizerPreset(_ name: String) throws {
        _ = try call(Self.extensionInterface, "DeleteEqualizerPreset", [.string(name)])
    }

    /// The extension's `EqualizerPresets`: the built-in presets, then the user's.
    public func equalizerPresets() throws -> [String] {
        try property(Self.extensionInterface, "EqualizerPresets").arrayValue?.compactMap(\.stringValue) ?? []
    }
}

/// ReplayGain and the equalizer as `status` shows them.
public struct AudioStatus: Sendable, Equatable {
    public var replayGain: String
    public var preamp: Double
    public var equalizer: [Double]
    /// "" when the gains are no preset's.
    public var equalizerPreset: String

    init?(_ properties: [String: DBusValue]) {
        guard let mode = properties["ReplayGainMode"]?.stringValue, let preamp = properties["ReplayGainPreamp"]?.doubleValue,
              let gains = properties["Equalizer"]?.arrayValue?.compactMap(\.doubleValue),
              let preset = properties["EqualizerPreset"]?.stringValue else { return nil }
        (replayGain, self.preamp, equalizer, equalizerPreset) = (mode, preamp, gains, preset)
    }
}
