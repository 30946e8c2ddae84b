import DBus
import FoundationEssentials
import PlayerModel

/// An item as MPRIS metadata (`a{sv}`), with the exact types clients require: `xesam:artist` is
/// `as`, `mpris:length` is `x`, `mpris:trackid` is `o` (one wrong type and bluez's mpris-proxy
/// drops all of it). Reads the item only: the cover art's file was found or written by whoever
/// read the tags, so building this touches no file (it runs on the queue that answers D-Bus).
enum MetadataMap {
    static func dictionary(_ item: Item) -> [String: DBusValue] {
        let metadata = item.metadata
        var map: [String: DBusValue] = [
            "mpris:trackid": .objectPath(TrackIDs.path(item.id)),
            "xesam:url": .string(item.uri.string),
            "xesam:title": .string(item.isLive ? (metadata.streamTitle ?? metadata.title ?? item.uri.displayName) : item.displayTitle),
        ]
        if let duration = item.duration, !item.isLive { map["mpris:length"] = .int64(duration.microseconds) }
        if let artURL = metadata.coverURL { map["mpris:artUrl"] = .string(artURL.absoluteString) }
        if !metadata.artists.isEmpty { map["xesam:artist"] = .stringArray(metadata.artists) }
        if !metadata.albumArtists.isEmpty { map["xesam:albumArtist"] = .stringArray(metadata.albumArtists) }
        if !metadata.genres.isEmpty { map["xesam:genre"] = .stringArray(metadata.genres) }
        if let comment = metadata.comment { map["xesam:comment"] = .stringArray([comment]) }
        if let album = metadata.album ?? (item.isLive ? metadata.organization : nil) { map["xesam:album"] = .string(album) }
        if let number = metadata.trackNumber { map["xesam:trackNumber"] = .int32(Int32(clamping: number)) }
        if let number = metadata.discNumber { map["xesam:discNumber"] = .int32(Int32(clamping: number)) }
        if let date = metadata.date { map["xesam:contentCreated"] = .string(date) }
        return map
    }
}
