import PlayerModel

/// Which playlist's activation filled the queue (MPRIS `ActivePlaylist`), and when it stops being
/// so: once the queue is replaced or cleared, once none of the items its activation gave is left,
/// or once its file is gone. Pure: its owner feeds it the queue's changes and the catalog's lists,
/// and saves and announces what it says changed.
public struct ActivePlaylistTracker: Sendable {
    /// The active playlist; nil when none is.
    public private(set) var playlist: PlaylistEntry?
    /// The ids its activation gave, and how many of them are still queued.
    private var items: ClosedRange<UInt64> = 0...0
    private var remaining = 0

    public init() {}

    /// What the saved state keeps of it: the playlist and the ids its activation gave; nil when none is active.
    public var record: ActivePlaylistRecord? { playlist.map { ActivePlaylistRecord(playlist: $0.id, items: items) } }

    /// `entry` was activated and the queue replaced by its entries, given `ids`; with no ids, none is active.
    public mutating func activated(_ entry: PlaylistEntry, items ids: [ItemID]) {
        guard let first = ids.first, let last = ids.last else { return deactivate() }
        playlist = entry
        items = first.rawValue...last.rawValue
        remaining = ids.count
    }

    /// Follows an edit of the queue; true when it ended the active playlist: the queue replaced (a
    /// Clear, or another playlist, which is made active once its queue is in), or the last of its items removed.
    public mutating func queueChanged(_ change: QueueChange) -> Bool {
        guard playlist != nil else { return false }
        switch change {
        case .replaced:
            deactivate()
            return true
        case .removed(let ids):
            remaining -= ids.reduce(0) { $0 + (items.contains($1.rawValue) ? 1 : 0) }
            guard remaining <= 0 else { return false }
            deactivate()
            return true
        case .inserted, .moved:
            return false
        }
    }

    /// Follows a new listing of the catalog; true when it ended the active playlist (its file is
    /// gone). Otherwise the active entry is the listing's (a renamed title, a new date).
    public mutating func listed(_ list: [PlaylistEntry]) -> Bool {
        guard let active = playlist else { return false }
        guard let entry = list.first(where: { $0.id == active.id }) else {
            deactivate()
            return true
        }
        playlist = entry
        return false
    }

    /// At start: the saved active playlist is active again when `list` (the catalog's) still has it
    /// and the restored queue, `queued`, holds items its activation gave (one walk of the queue).
    /// False when it is not, and the saved state should forget it.
    public mutating func restore(_ record: ActivePlaylistRecord, queued: [ItemID], list: [PlaylistEntry]) -> Bool {
        let left = queued.reduce(0) { $0 + (record.items.contains($1.rawValue) ? 1 : 0) }
        guard left > 0, let entry = list.first(where: { $0.id == record.playlist }) else { return false }
        playlist = entry
        items = record.items
        remaining = left
        return true
    }

    private mutating func deactivate() {
        playlist = nil
        remaining = 0
    }
}
