/// How `GetPlaylists` sorts: MPRIS `Playlist_Ordering`, whose values on the wire are the spec's
/// `tp:enumvalue value=` strings (Alphabetical, Created, Modified, Played, User), not the members'
/// names (CreationDate, ModifiedDate, LastPlayDate, UserDefined) that its HTML lists first.
enum PlaylistOrdering: String, CaseIterable, Sendable {
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
    init(_ text: String) {
        switch text {
        case "CreationDate": self = .created
        case "ModifiedDate": self = .modified
        case "LastPlayDate": self = .played
        case "UserDefined": self = .user
        default: self = PlaylistOrdering(rawValue: text) ?? .user
        }
    }
}
