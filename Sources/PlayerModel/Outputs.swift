/// An audio output device the engine found (the pulse device provider, class Audio/Sink).
public struct OutputDevice: Sendable, Hashable, Codable {
    /// What `Output` takes to play there (PulseAudio's sink name).
    public var id: String
    /// What a person reads (the sink's description).
    public var description: String
    /// The provider's kind: `pulse`, `alsa`, `pipewire`; `snapcast` for a snapserver's stream.
    public var kind: String

    /// The kind of the configured snapserver's output (docs/sound.md, "Snapcast").
    public static let snapcastKind = "snapcast"

    public init(id: String, description: String, kind: String) {
        self.id = id
        self.description = description
        self.kind = kind
    }
}

/// Where the sound goes: the output the user chose, remembered by id (a USB DAC unplugged stays
/// chosen, and playback returns to it when it comes back), and the devices there are now.
public struct Outputs: Sendable, Equatable {
    /// `default` (the sound server's default device, following it) or a device's id.
    public var chosen = Outputs.defaultID
    public var devices: [OutputDevice] = []

    public static let defaultID = "default"
    /// The longest id a client may set: device names are short; a client's mistake is refused.
    public static let maximumIDLength = 256

    public init(chosen: String = Outputs.defaultID, devices: [OutputDevice] = []) {
        self.chosen = chosen
        self.devices = devices
    }

    /// Whether `id` can be chosen now: `default`, or a device listed.
    public func canChoose(_ id: String) -> Bool { id == Self.defaultID || devices.contains { $0.id == id } }

    /// Whether `id` is a listed snapserver's output: a sink of its own, not a sound server's
    /// device that a playing stream can be moved to.
    public func isSnapcast(_ id: String) -> Bool { devices.contains { $0.id == id && $0.kind == OutputDevice.snapcastKind } }

    /// An id worth keeping from a saved state: short, printable.
    static func isPlausible(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= maximumIDLength && !id.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}

extension PlayerMachine {
    public var outputs: Outputs { output }

    /// Chooses the output by id (`default` or a listed device; the caller checked it): the engine
    /// moves playback there without stopping, or, to or from a snapserver (another sink than the
    /// pipeline's), the current item is loaded again where it was at `now`. False when it is not
    /// one that can be chosen now.
    @discardableResult
    public mutating func setOutput(_ id: String, now: ContinuousClock.Instant) -> Bool {
        guard output.canChoose(id) else { return false }
        guard id != output.chosen else { return true }
        let otherSink = output.isSnapcast(id) != output.isSnapcast(output.chosen)
        output.chosen = id
        command(.setOutput(id))
        if otherSink { reloadWhereItPlays(now: now) }
        emit(.outputsChanged(output))
        return true
    }

    /// The devices the engine lists now (hot-plug): the chosen one stays chosen when it goes.
    mutating func devicesChanged(_ devices: [OutputDevice]) {
        guard devices != output.devices else { return }
        output.devices = devices
        emit(.outputsChanged(output))
    }

    /// The saved choice, kept even when its device is absent now (it may come back).
    mutating func restoreOutput(_ saved: String) {
        guard Outputs.isPlausible(saved), saved != output.chosen else { return }
        output.chosen = saved
        command(.setOutput(saved))
    }
}
