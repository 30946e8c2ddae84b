import DBus

/// One audio output device as the extension's `Outputs` lists it.
public struct OutputInfo: Sendable, Equatable {
    public var id: String
    public var description: String
    public var kind: String
}

/// The outputs (docs/sound.md, "Outputs"): the extension's `Outputs` and `Output`.
extension TonearmClient {
    /// The devices there are now.
    public func outputs() throws -> [OutputInfo] {
        try property(Self.extensionInterface, "Outputs").arrayValue?.compactMap { value in
            guard let fields = value.structureValue, fields.count == 3, let id = fields[0].stringValue,
                  let description = fields[1].stringValue, let kind = fields[2].stringValue else { return nil }
            return OutputInfo(id: id, description: description, kind: kind)
        } ?? []
    }

    /// The chosen output: `default` or a device's id.
    public func output() throws -> String {
        try property(Self.extensionInterface, "Output").stringValue ?? "default"
    }

    /// Moves playback to the device `id` (one of `outputs()`), or to the server's default (`default`).
    public func setOutput(_ id: String) throws {
        try setProperty(Self.extensionInterface, "Output", .string(id))
    }
}
