import DBus
import PlayerModel

extension MPRISService {
    /// Files or URIs dropped on the video window (the player's `openRequested`): opened as OpenUri
    /// opens one, and by the same path as the command line's (`open`): parsed here, resolved off
    /// this queue (a folder walked for what GStreamer plays), then the first plays and the rest
    /// follow it. Walks of older calls still under way stop, as a newer OpenUri stops them: the
    /// drop is what the person wants now. What cannot be played is logged with the error a
    /// client's OpenUri would get; nothing of that drop is queued then.
    func openDropped(_ texts: [String]) {
        cancelQueueing(because: "something was dropped on the video window")
        let logger = logger
        let failed: @Sendable (any Error) -> Void = { error in
            logger.error("not queued from the video window: \(DBusError(error))")
        }
        do {
            try open(texts) { error in error.map(failed) }
        } catch {
            failed(error)
        }
    }
}
