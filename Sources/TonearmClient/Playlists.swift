import DBus

/// A playlist as the service lists it (`org.mpris.MediaPlayer2.Playlists`, MPRIS `Playlist`):
/// its object path and its name.
public struct Playlist: Hashable, Sendable {
    public let id: ObjectPath
    public let name: String
    public init(id: ObjectPath, name: String) {
        self.id = id
        self.name = name
    }
}

/// How `GetPlaylists` orders them: MPRIS `Playlist_Ordering` under the names the CLI uses.
public enum PlaylistOrder: String, Sendable, CaseIterable {
    case alpha, modified, created, played, user

    /// The MPRIS value: the spec's `tp:enumvalue value=` (tonearmd also takes the members' names,
    /// CreationDate and the like, which this CLI sent before).
    public var mprisValue: String {
        switch self {
        case .alpha: "Alphabetical"
        case .modified: "Modified"
        case .created: "Created"
        case .played: "Played"
        case .user: "User"
        }
    }
}

extension TonearmClient {
    static let playlistsInterface = "org.mpris.MediaPlayer2.Playlists"

    /// Every playlist in `order` (`GetPlaylists(0, all, order, reverse)`).
    public func playlists(order: PlaylistOrder = .alpha, reverse: Bool = false) throws -> [Playlist] {
        let reply = try call(Self.playlistsInterface, "GetPlaylists",
                             [.uint32(0), .uint32(UInt32.max), .string(order.mprisValue), .bool(reverse)])
        guard let list = reply.first?.arrayValue else { throw ClientError(.unexpectedReply, "GetPlaylists did not return a(oss)") }
        return list.compactMap { value in
            guard let fields = value.structureValue, fields.count == 3, let id = fields[0].objectPathValue,
                  let name = fields[1].stringValue else { return nil }
            return Playlist(id: id, name: name)
        }
    }

    /// `ActivePlaylist`: the playlist whose activation filled the queue, if any.
    public func activePlaylist() throws -> Playlist? {
        guard let fields = try property(Self.playlistsInterface, "ActivePlaylist").structureValue, fields.count == 2,
              let valid = fields[0].boolValue else {
            throw ClientError(.unexpectedReply, "ActivePlaylist is not (b(oss))")
        }
        guard valid, let playlist = fields[1].structureValue, playlist.count == 3, let id = playlist[0].objectPathValue else { return nil }
        return Playlist(id: id, name: playlist[1].stringValue ?? "")
    }

    /// The playlist a person named: a number from 1, as `playlists(order:)` lists them in `order`,
    /// or a name (exactly, else without regard to case when only one matches). `.refused` when
    /// there is none, or more than one of that name.
    public func playlist(named text: String, order: PlaylistOrder = .alpha) throws -> Playlist {
        let list = try playlists(order: order)
        if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(text) {
            guard number >= 1, number <= list.count else {
                throw ClientError(.refused, list.isEmpty ? "no playlist \(number): there are none"
                                                         : "no playlist \(number) (there are \(list.count))")
            }
            return list[number - 1]
        }
        var matches = list.filter { $0.name == text }
        if matches.isEmpty { matches = list.filter { $0.name.lowercased() == text.lowercased() } }
        guard let first = matches.first else { throw ClientError(.refused, "no playlist called \(text)") }
        guard matches.count == 1 else {
            throw ClientError(.refused, "\(matches.count) playlists are called \(text); name it by its number (tonearm playlists)")
        }
        return first
    }

    /// `ActivatePlaylist`: the playlist's entries replace the queue, and the first plays. A file
    /// that cannot be read or parsed is the service's error (`MalformedPlaylist`), and the queue
    /// stays as it was.
    public func activate(_ playlist: Playlist) throws {
        try call(Self.playlistsInterface, "ActivatePlaylist", [.objectPath(playlist.id)])
    }

    /// The extension's `SaveQueue(name)`: the queue as a playlist (an M3U8 file the service writes).
    public func saveQueue(as name: String) throws {
        try call(Self.extensionInterface, "SaveQueue", [.string(name)])
    }
}
