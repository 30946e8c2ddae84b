import Basics
import FoundationEssentials

/// How `GetPlaylists` sorts: MPRIS `Playlist_Ordering`, whose values on the wire are the spec's
/// `tp:enumvalue value=` strings (Alphabetical, Created, Modified, Played, User), not the members'
/// names (CreationDate, ModifiedDate, LastPlayDate, UserDefined) that its HTML lists first.
public enum PlaylistOrdering: String, CaseIterable, Sendable {
    /// By name, in natural order.
    case alphabetical = "Alphabetical"
    /// By the file's birth time where the file system keeps one, else when tonearmd first saw it; oldest first.
    case created = "Created"
    /// By the file's modification time, oldest first.
    case modified = "Modified"
    /// By when it was last activated, oldest first; never activated before all.
    case played = "Played"
    /// The order the files were found in.
    case user = "User"

    /// What a client's `Order` argument asks for. The members' names are taken too: our CLI sent
    /// them before, and so do bindings that copied the names from the spec's HTML (a Rust zbus
    /// binding's `PlaylistOrdering` without serde renames). Any other string is served in the
    /// `User` order rather than refused: a client that gets an error shows no playlists at all
    /// (xfce4-pulseaudio-plugin's menu stays empty).
    public init(_ text: String) {
        switch text {
        case "CreationDate": self = .created
        case "ModifiedDate": self = .modified
        case "LastPlayDate": self = .played
        case "UserDefined": self = .user
        default: self = PlaylistOrdering(rawValue: text) ?? .user
        }
    }

    /// `playlists` (in the order the catalog found them) in this order, oldest or first in
    /// natural order first; ties by id, so that paging through them with GetPlaylists is stable.
    public func sorted(_ playlists: [PlaylistEntry]) -> [PlaylistEntry] {
        switch self {
        case .alphabetical:
            playlists.sorted {
                let compared = NaturalOrder.compare($0.name, $1.name)
                return compared == .orderedSame ? $0.id < $1.id : compared == .orderedAscending
            }
        case .modified:
            playlists.sorted { $0.modified == $1.modified ? $0.id < $1.id : $0.modified < $1.modified }
        case .created:
            playlists.sorted { $0.created == $1.created ? $0.id < $1.id : $0.created < $1.created }
        case .played:
            playlists.sorted {
                let (a, b) = ($0.lastPlayed ?? .distantPast, $1.lastPlayed ?? .distantPast)
                return a == b ? $0.id < $1.id : a < b
            }
        case .user:
            playlists
        }
    }
}

extension PlaylistEntry {
    /// A new listing from the catalog, keeping the later of its `lastPlayed` and the one `known`
    /// holds: an activation is marked in `known` at once and in the catalog on its queue, so a
    /// list the catalog sent before it marked one does not take it back.
    public static func relisted(_ list: [PlaylistEntry], keepingLastPlayedOf known: [PlaylistEntry]) -> [PlaylistEntry] {
        let played = Dictionary(known.compactMap { entry in entry.lastPlayed.map { (entry.id, $0) } }) { max($0, $1) }
        return list.map { entry in
            var entry = entry
            if let date = played[entry.id], entry.lastPlayed.map({ $0 < date }) ?? true { entry.lastPlayed = date }
            return entry
        }
    }
}
