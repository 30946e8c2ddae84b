import FoundationEssentials

/// What the saved state remembers of one playlist file across restarts: the id it was given (so
/// that it keeps its object path), when it was first seen (its `Created` ordering where the file system
/// keeps no birth time) and when it was last activated (`Played`).
public struct PlaylistRecord: Sendable, Equatable {
    public var id: UInt64
    public var path: String
    public var firstSeen: Date
    public var lastPlayed: Date?

    public init(id: UInt64, path: String, firstSeen: Date, lastPlayed: Date? = nil) {
        self.id = id
        self.path = path
        self.firstSeen = firstSeen
        self.lastPlayed = lastPlayed
    }
}

/// The playlist whose activation filled the queue, and the ids that activation gave its items
/// (ids are handed out in order and never reused, so a range names them). After a restart the
/// playlist is active again only while the queue holds one of them: a queue that was replaced
/// since (a crash between the two writes) is no longer that playlist's.
public struct ActivePlaylistRecord: Sendable, Equatable {
    public var playlist: UInt64
    public var items: ClosedRange<UInt64>

    public init(playlist: UInt64, items: ClosedRange<UInt64>) {
        self.playlist = playlist
        self.items = items
    }
}
