import DBus
import Dispatch
import FoundationEssentials
import Playlists

// MARK: org.mpris.MediaPlayer2.Playlists

/// MPRIS `Playlist`: its id (an object path), its name and its icon (none).
typealias PlaylistValue = DBusTriple<ObjectPath, String, String>
/// MPRIS `Maybe_Playlist`: whether one is active, and which (any playlist when none is).
typealias MaybePlaylist = DBusPair<Bool, PlaylistValue>

extension MPRISService {
    func playlistsInterface() -> InterfaceDescription {
        InterfaceDescription(
            name: MPRIS.playlists,
            methods: [
                .deferred("ActivatePlaylist", arguments: ["PlaylistId"]) { [unowned self] (path: ObjectPath, reply: Reply<Void>) in
                    guard let entry = playlist(path), let catalog = options.playlists else {
                        throw ServiceError("NoSuchPlaylist", "no playlist \(path.rawValue)")
                    }
                    // the file is read and parsed on the catalog's queue; the queue is replaced
                    // here, only once it parsed: a malformed file changes nothing
                    let queue = connection.queue
                    catalog.async {
                        let parsed = Result { () throws(PlaylistError) in try PlaylistFile.read(entry.path) }
                        queue.async { [weak self] in
                            guard let self else { return }
                            do {
                                let file = try parsed.get()
                                guard !file.entries.isEmpty else { throw PlaylistError("\(entry.path) has no entries") }
                                let ids = try player.replace(with: file.entries)
                                let now = Date()
                                if let index = playlists.firstIndex(where: { $0.id == entry.id }) { playlists[index].lastPlayed = now }
                                catalog.markPlayed(entry.id, at: now)
                                activePlaylist.activated(playlists.first { $0.id == entry.id } ?? entry, items: ids)
                                activePlaylistChanged()
                                reply.succeed()
                            } catch let error as PlaylistError {
                                reply.fail(ServiceError("MalformedPlaylist", error.message))
                            } catch {
                                reply.fail(ServiceError(error))
                            }
                        }
                    }
                },
                .typed("GetPlaylists", arguments: ["Index", "MaxCount", "Order", "ReverseOrder"], returning: [PlaylistValue].self) {
                    [unowned self] (index: UInt32, count: UInt32, order: String, reverse: Bool, _) in
                    var sorted = PlaylistOrdering(order).sorted(playlists)
                    if reverse { sorted.reverse() }
                    let start = min(Int(index), sorted.count)
                    return sorted[start..<min(start + Int(count), sorted.count)].map(playlistValue)
                },
            ],
            properties: [
                .typed("PlaylistCount", get: { [unowned self] in UInt32(clamping: playlists.count) }),
                .typed("Orderings", get: { Self.orderings }),
                .typed("ActivePlaylist", get: { [unowned self] in
                    // MPRIS Maybe_Playlist: false and any playlist when none is active
                    activePlaylist.playlist.map { MaybePlaylist(true, playlistValue($0)) } ?? MaybePlaylist(false, PlaylistValue("/", "", ""))
                }),
            ],
            signals: [.typed("PlaylistChanged", PlaylistValue.self, argumentNames: ["Playlist"])],
            introspectionXML: MPRIS.playlistsXML)
    }

    /// The orderings GetPlaylists sorts by (`Orderings`): the spec's values, in its order.
    static let orderings = PlaylistOrdering.allCases.map(\.rawValue)

    func playlistsChanged(_ list: [PlaylistEntry], rewritten: [PlaylistEntry]) {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        playlists = PlaylistEntry.relisted(list, keepingLastPlayedOf: playlists)
        if activePlaylist.listed(list) { activePlaylistChanged() }
        object?.propertiesMayHaveChanged(interface: MPRIS.playlists)
        // MPRIS PlaylistChanged: a playlist's data changed; here, its file was rewritten
        for entry in rewritten { emit(MPRIS.playlists, "PlaylistChanged", playlistValue(entry)) }
    }

    /// The active playlist changed: said to clients and to the saved state.
    func activePlaylistChanged() {
        options.onActivePlaylistChanged?(activePlaylist.record)
        object?.propertiesMayHaveChanged(interface: MPRIS.playlists)
    }

    private static let playlistBase: ObjectPath = "/io/github/tonearm/Playlist"

    private func playlistValue(_ entry: PlaylistEntry) -> PlaylistValue {
        PlaylistValue(Self.playlistBase.appending(number: entry.id), entry.name, "")
    }

    private func playlist(_ path: ObjectPath) -> PlaylistEntry? {
        guard path.rawValue.hasPrefix(Self.playlistBase.rawValue + "/"),
              let id = UInt64(path.rawValue.dropFirst(Self.playlistBase.rawValue.count + 1)) else { return nil }
        return playlists.first { $0.id == id }
    }
}
