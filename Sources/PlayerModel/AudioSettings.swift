/// Which ReplayGain gain plays (extension `ReplayGainMode`).
public enum ReplayGainMode: String, Sendable, CaseIterable {
    /// Files play as they are: no ReplayGain stage in the pipeline.
    case off
    /// Each file's track gain.
    case track
    /// The album gain (the track gain for a file with none): an album keeps its own dynamics.
    case album
    /// The album gain while an album plays in its order, else the track gain (see `usesAlbumGain`).
    case auto
}

/// A named set of the equalizer's ten gains.
public struct EqualizerPreset: Hashable, Sendable {
    public var name: String
    public var gains: [Double]
    public init(name: String, gains: [Double]) {
        self.name = name
        self.gains = gains
    }
}

/// The 10-band equalizer (GStreamer's `equalizer-10bands`) and its presets.
public enum Equalizer {
    /// The bands' centres in Hz (equalizer-10bands' band0 ... band9).
    public static let centres: [Double] = [29, 59, 119, 237, 474, 947, 1889, 3770, 7523, 15011]
    public static let bandCount = 10
    /// Each band's gain, in dB.
    public static let range: ClosedRange<Double> = -12...12
    public static let flat = [Double](repeating: 0, count: bandCount)
    /// The most presets a user keeps: a client saving names in a loop fills no memory or disk.
    public static let maximumUserPresets = 100

    /// Tonearm's own presets (values of ours, not taken from another player), by name.
    public static let builtIn: [EqualizerPreset] = [
        EqualizerPreset(name: "flat", gains: flat),
        EqualizerPreset(name: "rock", gains: [5, 4, 2, -1, -2, -1, 1, 3, 4, 5]),
        EqualizerPreset(name: "pop", gains: [-1, 1, 3, 4, 3, 1, -1, -1, 0, 1]),
        EqualizerPreset(name: "jazz", gains: [3, 2, 1, 2, -1, -1, 0, 1, 2, 3]),
        EqualizerPreset(name: "classical", gains: [4, 3, 2, 1, -1, -1, 0, 2, 3, 4]),
        EqualizerPreset(name: "bass", gains: [7, 6, 5, 3, 1, 0, 0, 0, 0, 0]),
        EqualizerPreset(name: "treble", gains: [0, 0, 0, 0, 0, 1, 3, 5, 6, 7]),
        EqualizerPreset(name: "vocal", gains: [-3, -2, -1, 1, 3, 4, 3, 1, -1, -2]),
    ]

    /// Ten finite gains, each within `range`.
    public static func isValid(_ gains: [Double]) -> Bool {
        gains.count == bandCount && gains.allSatisfy { $0.isFinite && range.contains($0) }
    }

    /// A name a user preset may have: 1 to 64 characters, not a built-in one's, no control characters.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && !builtIn.contains { $0.name == name }
            && !name.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}

/// What the user set for the sound (extension `ReplayGainMode`, `ReplayGainPreamp`, `Equalizer`,
/// `EqualizerPreset`, `EqualizerPresets`): the player's settings, saved with the queue.
public struct AudioSettings: Hashable, Sendable {
    public var replayGain: ReplayGainMode
    /// Added to the ReplayGain gain of tagged files, in dB (`preampRange`).
    public var preamp: Double
    public var equalizer: [Double]
    /// The preset `equalizer` was set from; "" when the gains were set one by one.
    public var equalizerPreset: String
    /// The user's own presets, in the order they were first saved.
    public var userPresets: [EqualizerPreset]
    /// How long the end of an item and the start of the next overlap (`Crossfade.swift`); zero:
    /// gapless, sample-exact.
    public var crossfade: Duration = .zero
    /// Whether tracks of one album that play in order crossfade too (else they stay gapless).
    public var crossfadeAlbums = false

    public static let preampRange: ClosedRange<Double> = -15...15

    public init(replayGain: ReplayGainMode = .off, preamp: Double = 0, equalizer: [Double] = Equalizer.flat,
                equalizerPreset: String = "flat", userPresets: [EqualizerPreset] = []) {
        self.replayGain = replayGain
        self.preamp = preamp
        self.equalizer = equalizer
        self.equalizerPreset = equalizerPreset
        self.userPresets = userPresets
    }

    public var isEqualizerFlat: Bool { equalizer.allSatisfy { $0 == 0 } }

    /// Every preset's name: the built-in ones, then the user's.
    public var presetNames: [String] { Equalizer.builtIn.map(\.name) + userPresets.map(\.name) }

    public func preset(named name: String) -> EqualizerPreset? {
        Equalizer.builtIn.first { $0.name == name } ?? userPresets.first { $0.name == name }
    }
}

/// What the engine does with the audio settings; ignored by an engine without a filter.
public enum AudioCommand: Hashable, Sendable, Codable {
    /// ReplayGain for the stream playing now: nil takes its stage out of the pipeline; otherwise
    /// album mode (else track) and the pre-amp in dB.
    case replayGain(albumMode: Bool, preamp: Double)
    case replayGainOff
    /// Album mode for the gapless next stream, from its first sample (nil: as the current one).
    case nextAlbumMode(Bool?)
    /// The equalizer's gains in dB; all zero takes its stage out of the pipeline.
    case equalizer([Double])
}

/// What the machine last told the engine of the audio settings.
struct AudioState: Sendable {
    var settings = AudioSettings()
    /// The ReplayGain told for the current stream (nil: off), and the album mode armed for the next.
    var told: (albumMode: Bool, preamp: Double)?
    var toldOff = true
    var toldNext: Bool??
}

extension PlayerMachine {
    public var audioSettings: AudioSettings { audio.settings }

    /// `ReplayGainMode`: the stage goes in or out of the running pipeline without a gap.
    public mutating func setReplayGainMode(_ mode: ReplayGainMode) {
        guard mode != audio.settings.replayGain else { return }
        audio.settings.replayGain = mode
        emit(.audioChanged(audio.settings))
    }

    /// `ReplayGainPreamp`, in dB; the caller checked `AudioSettings.preampRange`.
    public mutating func setReplayGainPreamp(_ preamp: Double) {
        guard preamp != audio.settings.preamp, AudioSettings.preampRange.contains(preamp) else { return }
        audio.settings.preamp = preamp
        emit(.audioChanged(audio.settings))
    }

    /// `Equalizer`: ten gains in dB (the caller checked `Equalizer.isValid`); the preset becomes
    /// the one with exactly these gains, if any, else "".
    public mutating func setEqualizer(_ gains: [Double]) {
        guard Equalizer.isValid(gains) else { return }
        let name = (Equalizer.builtIn + audio.settings.userPresets).first { $0.gains == gains }?.name ?? ""
        applyEqualizer(gains, preset: name)
    }

    /// `EqualizerPreset`: false for a name no preset has.
    @discardableResult
    public mutating func selectEqualizerPreset(_ name: String) -> Bool {
        guard let preset = audio.settings.preset(named: name) else { return false }
        applyEqualizer(preset.gains, preset: name)
        return true
    }

    /// `SaveEqualizerPreset`: the current gains under `name` (the caller checked
    /// `Equalizer.isValidName`), replacing a user preset of that name; it becomes the preset shown.
    /// False when the user has `Equalizer.maximumUserPresets` others already.
    @discardableResult
    public mutating func saveEqualizerPreset(_ name: String) -> Bool {
        guard Equalizer.isValidName(name) else { return false }
        let preset = EqualizerPreset(name: name, gains: audio.settings.equalizer)
        if let index = audio.settings.userPresets.firstIndex(where: { $0.name == name }) {
            audio.settings.userPresets[index] = preset
        } else {
            guard audio.settings.userPresets.count < Equalizer.maximumUserPresets else { return false }
            audio.settings.userPresets.append(preset)
        }
        audio.settings.equalizerPreset = name
        emit(.audioChanged(audio.settings))
        return true
    }

    /// `DeleteEqualizerPreset`: false when the user has no preset of that name. The gains stay.
    @discardableResult
    public mutating func deleteEqualizerPreset(_ name: String) -> Bool {
        guard let index = audio.settings.userPresets.firstIndex(where: { $0.name == name }) else { return false }
        audio.settings.userPresets.remove(at: index)
        if audio.settings.equalizerPreset == name { audio.settings.equalizerPreset = "" }
        emit(.audioChanged(audio.settings))
        return true
    }

    private mutating func applyEqualizer(_ gains: [Double], preset: String) {
        guard gains != audio.settings.equalizer || preset != audio.settings.equalizerPreset else { return }
        if gains != audio.settings.equalizer { command(.audio(.equalizer(gains))) }
        audio.settings.equalizer = gains
        audio.settings.equalizerPreset = preset
        emit(.audioChanged(audio.settings))
    }

    /// At a restore: the saved settings, and the engine told those that are not its defaults.
    mutating func restoreAudio(_ saved: AudioSettings) {
        audio.settings.userPresets = Array(saved.userPresets.filter { Equalizer.isValidName($0.name) && Equalizer.isValid($0.gains) }
            .prefix(Equalizer.maximumUserPresets))
        if AudioSettings.preampRange.contains(saved.preamp) { audio.settings.preamp = saved.preamp }
        audio.settings.replayGain = saved.replayGain
        if Equalizer.isValid(saved.equalizer) {
            applyEqualizer(saved.equalizer, preset: audio.settings.preset(named: saved.equalizerPreset)?.gains == saved.equalizer
                           ? saved.equalizerPreset : "")
        }
    }

    /// Whether `id` plays with its album gain in `auto` mode: while the queue plays in its own
    /// order (not shuffled), an item whose neighbour before or after it in the queue is of the same
    /// album (album title, and album artists or else artists) is part of an album played through.
    func usesAlbumGain(_ id: ItemID, in queue: PlayQueue) -> Bool {
        switch audio.settings.replayGain {
        case .off, .track: return false
        case .album: return true
        case .auto:
            guard !queue.isShuffled, let item = queue.item(id), let album = Self.albumKey(item.metadata) else { return false }
            return [queue.id(before: id), queue.id(after: id)].contains { neighbour in
                neighbour.flatMap { queue.item($0) }.flatMap { Self.albumKey($0.metadata) } == album
            }
        }
    }

    private static func albumKey(_ metadata: Metadata) -> [String]? {
        guard let album = metadata.album, !album.isEmpty else { return nil }
        return [album] + (metadata.albumArtists.isEmpty ? metadata.artists : metadata.albumArtists)
    }

    /// Keeps the engine's ReplayGain in step with the settings, the current item and the gapless
    /// next one (their album mode in `auto` depends on the queue and the tags, which any input may
    /// change). Checked after every input, like `askPlayAfterPreroll`.
    mutating func syncReplayGain(current: ItemID?, next: ItemID?, queue: PlayQueue) {
        guard audio.settings.replayGain != .off else {
            if !audio.toldOff {
                audio.toldOff = true
                audio.told = nil
                audio.toldNext = nil
                command(.audio(.replayGainOff))
            }
            return
        }
        let wanted = (albumMode: current.map { usesAlbumGain($0, in: queue) } ?? false, preamp: audio.settings.preamp)
        if audio.toldOff || audio.told?.albumMode != wanted.albumMode || audio.told?.preamp != wanted.preamp {
            audio.toldOff = false
            audio.told = wanted
            command(.audio(.replayGain(albumMode: wanted.albumMode, preamp: wanted.preamp)))
        }
        let nextMode = next.map { usesAlbumGain($0, in: queue) }
        if audio.toldNext != .some(nextMode) {
            audio.toldNext = .some(nextMode)
            command(.audio(.nextAlbumMode(nextMode)))
        }
    }
}
