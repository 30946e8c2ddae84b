import DBus
import PlayerModel

// MARK: org.mpris.MediaPlayer2.TrackList

extension MPRISService {
    func trackListInterface() -> InterfaceDescription {
        InterfaceDescription(
            name: MPRIS.trackList,
            methods: [
                .typed("GetTracksMetadata", arguments: ["TrackIds"], returning: [TrackMetadata].self) { [unowned self] (paths: ObjectPathList, _) in
                    // what is known now; tags not read yet are read in the background, and
                    // TrackMetadataChanged brings them
                    player.wantMetadata(paths.compactMap(TrackIDs.item)).map { metadata($0) }
                },
                .deferred("AddTrack", arguments: ["Uri", "AfterTrack", "SetAsCurrent"]) { [unowned self]
                    (text: String, afterPath: ObjectPath, setAsCurrent: Bool, reply: Reply<Void>) in
                    let after: ItemID?
                    if afterPath == MPRIS.noTrack {
                        after = nil
                    } else if let id = TrackIDs.item(afterPath), player.item(id) != nil {
                        after = id
                    } else {
                        throw DBusError.invalidArgs("no track \(afterPath) in the track list")
                    }
                    // AfterTrack NoTrack inserts at the start (spec)
                    try queueURIs([text], .insert(after.map { .after($0) } ?? .start, setAsCurrent: setAsCurrent), reply: reply)
                },
                .typed("RemoveTrack", arguments: ["TrackId"]) { [player] (path: ObjectPath, _) in
                    // a track that is not in the list: no effect (spec)
                    if let id = TrackIDs.item(path), player.item(id) != nil { try? player.remove([id]) }
                },
                .typed("GoTo", arguments: ["TrackId"]) { [player] (path: ObjectPath, _) in
                    if let id = TrackIDs.item(path), player.item(id) != nil { try? player.jump(to: id) }
                },
            ],
            properties: [
                // encoded once per change of the list: each Get of 10,000 paths encoded them all again
                // (make bench); every change invalidates it (trackListChanged), which drops the bytes
                .typed("Tracks", emitsChanged: .invalidates, keepsEncodedReply: true, get: { [player] in TrackIDs.paths(player.ids) }),
                .typed("CanEditTracks", get: { true }),
            ],
            signals: [
                .typed("TrackListReplaced", ObjectPathList.self, ObjectPath.self, argumentNames: ["Tracks", "CurrentTrack"]),
                .typed("TrackAdded", TrackMetadata.self, ObjectPath.self, argumentNames: ["Metadata", "AfterTrack"]),
                .typed("TrackRemoved", ObjectPath.self, argumentNames: ["TrackId"]),
                .typed("TrackMetadataChanged", ObjectPath.self, TrackMetadata.self, argumentNames: ["TrackId", "Metadata"]),
            ],
            introspectionXML: MPRIS.trackListXML)
    }

    /// TrackMetadataChanged for a track's new tags or length, only when what MPRIS shows changed:
    /// decoders re-send tags (a VBR bitrate) while playing.
    func trackMetadataMayHaveChanged(_ id: ItemID) {
        guard let item = player.item(id) else { return }
        let shown = metadata(item)
        guard announcedMetadata[id] != shown.hashValue else { return }
        announcedMetadata[id] = shown.hashValue
        emit(MPRIS.trackList, "TrackMetadataChanged", TrackIDs.path(id), shown)
    }

    /// TrackAdded / TrackRemoved for edits, TrackListReplaced when the list was emptied, filled
    /// from empty, or more than `replacingAbove` tracks came or went at once; Tracks is
    /// invalidated, never sent (the spec's EmitsChangedSignal for it). Each change costs what it
    /// changed: nothing here reads or compares the whole list, but a replacement names it.
    func trackListChanged(_ change: QueueChange) {
        let emptyBefore = trackCount == 0
        switch change {
        case .replaced(let ids):
            trackCount = ids.count
            announcedMetadata.removeAll()
            guard !subscribing else { return }  // the list as it is when we start: nothing changed
            replaced(by: ids)
        case .inserted(let ids, let after):
            trackCount += ids.count
            if emptyBefore && ids.count > 1 {
                replaced(by: ids)
            } else if ids.count > Self.replacingAbove {
                replaced(by: player.ids)
            } else {
                var previous = after
                for id in ids {
                    guard let item = player.item(id) else { continue }
                    emit(MPRIS.trackList, "TrackAdded", metadata(item), previous.map(TrackIDs.path) ?? MPRIS.noTrack)
                    previous = id
                }
            }
        case .removed(let ids):
            trackCount -= ids.count
            for id in ids { announcedMetadata[id] = nil }
            if trackCount == 0 {
                replaced(by: [])
            } else if ids.count > Self.replacingAbove {
                replaced(by: player.ids)
            } else {
                for id in ids { emit(MPRIS.trackList, "TrackRemoved", TrackIDs.path(id)) }
            }
        case .moved(let id, let after):
            // MPRIS has no "moved": the track leaves its place and is added at the new one
            emit(MPRIS.trackList, "TrackRemoved", TrackIDs.path(id))
            if let item = player.item(id) {
                emit(MPRIS.trackList, "TrackAdded", metadata(item), after.map(TrackIDs.path) ?? MPRIS.noTrack)
            }
        }
        // Tracks is invalidated, never sent (its EmitsChangedSignal): said at once, without
        // reading and comparing the whole list, which costs O(n) on every change of a long queue
        do {
            try object.emitPropertiesChanged(interface: MPRIS.trackList, changed: [:], invalidated: ["Tracks"])
        } catch {
            logger.error("cannot invalidate TrackList.Tracks: \(error)")
        }
    }

    /// More tracks than this added or removed at once are announced as one TrackListReplaced: a
    /// folder of 10,000 files as 10,000 TrackAdded signals, each with its metadata, kept the
    /// queue that answers D-Bus busy for a while and flooded every client. MPRIS leaves the choice
    /// to the player ("when a change to the track list is invasive enough that this signal should
    /// be emitted instead of a series of TrackAdded and TrackRemoved signals").
    static let replacingAbove = 64

    private func replaced(by ids: [ItemID]) {
        emit(MPRIS.trackList, "TrackListReplaced", TrackIDs.paths(ids), player.currentItem.map { TrackIDs.path($0.id) } ?? MPRIS.noTrack)
    }
}
