/// Linear playback (issue 40, "What a film and an audiobook need"): while it is on, the current
/// item plays through as it is. Nothing may move playback on but playing: a seek (MPRIS Seek and
/// SetPosition, the extension's SeekTo, the video window's arrow keys), Next and a change of the
/// rate are refused (`PlayerError.Code.linearPlayback`, the window's keys do nothing), and CanSeek
/// and CanGoNext read false. AVKit's `AVPlayerViewController.requiresLinearPlayback` is the model:
/// it keeps a person from fast-forwarding, scrubbing or skipping ahead ("to prevent the user from
/// skipping content"). So what only goes back is allowed: Previous replays, it skips nothing.
/// Choosing another track from the list (GoTo, OpenUri, a playlist) picks what plays rather than
/// skipping within it, and is allowed too; so are Pause (and Rate 0, which is Pause), Stop and the
/// volume. Turning it on keeps the rate as it is: a client's setting is never undone. Saved with
/// the queue.
extension PlayerMachine {
    public var linearPlayback: Bool { settings.linearPlayback }

    public mutating func setLinearPlayback(_ on: Bool) {
        guard on != settings.linearPlayback else { return }
        settings.linearPlayback = on
        emit(.linearPlaybackChanged(on))
    }

    /// Throws `.linearPlayback` while linear playback is on; `what` is the request refused, as a
    /// person would name it ("seeking").
    func refuseWhileLinear(_ what: String) throws(PlayerError) {
        guard settings.linearPlayback else { return }
        throw PlayerError(.linearPlayback, "linear playback is on: \(what) is refused until LinearPlayback is turned off")
    }
}
