/// What changed between two snapshots of the player, as `tonearm watch` reports it: one kind per
/// thing a person or a status bar reacts to. Derived from property values, so a signal that repeats
/// a value (or carries only properties nobody shows) yields nothing.
public enum PlayerEventKind: String, Sendable, CaseIterable, Equatable {
    /// `PlaybackStatus` changed (playing, paused, stopped).
    case state
    /// The current track changed (`mpris:trackid`), or its metadata did (tags arriving, a stream title,
    /// its `.lrc`'s `SyncedLyrics`).
    case track
    /// The position jumped (`Seeked`).
    case seeked
    /// Buffering started, progressed or ended (`BufferingPercent`, `WaitingReason`).
    case buffering
    /// The current track failed (`ItemError` became set).
    case error
    /// `Volume` or `Muted` changed.
    case volume
    /// `LoopStatus`, `Shuffle` or `Rate` changed, or stop-after, the sleep timer or linear playback.
    case options
}

/// One event of a watch: what happened, and the player as it is right after it.
public struct PlayerEvent: Sendable {
    public var kind: PlayerEventKind
    public var status: PlayerStatus

    public init(kind: PlayerEventKind, status: PlayerStatus) {
        self.kind = kind
        self.status = status
    }
}

extension PlayerStatus {
    /// The kinds of event that lead from `old` to `self`, in a fixed order (track before state, so
    /// that a reader of "playing" already knows what plays). `Position` is not compared: it moves
    /// by itself, and a jump is a `Seeked` signal, not a property change.
    public func events(since old: PlayerStatus) -> [PlayerEventKind] {
        var kinds: [PlayerEventKind] = []
        if metadata != old.metadata || syncedLyrics != old.syncedLyrics { kinds.append(.track) }
        if playbackStatus != old.playbackStatus { kinds.append(.state) }
        if bufferingPercent != old.bufferingPercent || waitingReason != old.waitingReason { kinds.append(.buffering) }
        if itemError != old.itemError, itemError != nil { kinds.append(.error) }
        if volume != old.volume || muted != old.muted { kinds.append(.volume) }
        if loop != old.loop || shuffle != old.shuffle || rate != old.rate || stopAfterCurrent != old.stopAfterCurrent
            || sleepDeadline != old.sleepDeadline || linearPlayback != old.linearPlayback { kinds.append(.options) }
        return kinds
    }
}
