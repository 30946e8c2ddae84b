/// The video window (docs/video.md): fullscreen, raise, picture-in-picture and gravity. Each
/// reads the window's state first, so that asking for a window that is not there is `.refused`
/// with words a person can act on, rather than the service's silence (MPRIS lets `Raise` do nothing).
extension TonearmClient {
    /// Turns fullscreen on, off, or the other way (nil); returns whether it is now asked on.
    @discardableResult
    public func setFullscreen(_ on: Bool?) throws -> Bool {
        let root = try properties(Self.rootInterface)
        guard root["CanSetFullscreen"]?.boolValue == true else { throw Self.noWindow("make fullscreen") }
        let wanted = on ?? !(root["Fullscreen"]?.boolValue ?? false)
        try setProperty(Self.rootInterface, "Fullscreen", .bool(wanted))
        return wanted
    }

    /// `Raise`, refused when there is no window (`CanRaise` false).
    public func raiseWindow() throws {
        guard try property(Self.rootInterface, "CanRaise").boolValue == true else { throw Self.noWindow("raise") }
        try raise()
    }

    /// The extension's `PictureInPicture` on, off, or the other way (nil); settable with no window
    /// (it applies when one opens). Returns the new value.
    @discardableResult
    public func setPictureInPicture(_ on: Bool?) throws -> Bool {
        let wanted = try on ?? !(property(Self.extensionInterface, "PictureInPicture").boolValue ?? false)
        try setProperty(Self.extensionInterface, "PictureInPicture", .bool(wanted))
        return wanted
    }

    /// The extension's `VideoGravity`: `fit`, `fill` or `stretch` (the service refuses others).
    public func setVideoGravity(_ gravity: String) throws {
        try setProperty(Self.extensionInterface, "VideoGravity", .string(gravity))
    }

    private static func noWindow(_ what: String) -> ClientError {
        ClientError(.refused, "there is no video window to \(what): nothing with video is playing")
    }
}
