import DBus

/// The crossfade (docs/sound.md): the extension's `Crossfade` and `CrossfadeAlbums`.
extension TonearmClient {
    /// `Crossfade` in seconds (0 is off; the service refuses values outside 0...12 with
    /// InvalidArgs) and, when given, `CrossfadeAlbums`.
    public func setCrossfade(seconds: Double?, albums: Bool?) throws {
        if let albums { try setProperty(Self.extensionInterface, "CrossfadeAlbums", .bool(albums)) }
        if let seconds { try setProperty(Self.extensionInterface, "Crossfade", .double(seconds)) }
    }
}

/// The crossfade as `status` shows it.
public struct CrossfadeStatus: Sendable, Equatable {
    /// 0: off (gapless).
    public var seconds: Double
    public var albums: Bool

    init?(_ properties: [String: DBusValue]) {
        guard let seconds = properties["Crossfade"]?.doubleValue, let albums = properties["CrossfadeAlbums"]?.boolValue else { return nil }
        (self.seconds, self.albums) = (seconds, albums)
    }
}
