import DBus
import FoundationEssentials
import PlayerModel

/// An item as MPRIS metadata (`a{sv}`), with the exact types clients require: `xesam:artist` is
/// `as`, `mpris:length` is `x`, `mpris:trackid` is `o` (one wrong type and bluez's mpris-proxy
/// drops all of it). Reads the item only: the cover art's file was found or written by whoever
/// read the tags, so building this touches no file (it runs on the queue that answers D-Bus).
enum MetadataMap {
    /// The `a{sv}`, its entries in the order of their keys (as `DBusValue.vardict` sorts them), so
    /// that equal metadata encodes and compares equal. Built as one array of entries in that
    /// order: a dictionary that `vardict` then sorted cost a hash table and a sort per item, a
    /// third of `GetTracksMetadata`'s 100 items (make bench).
    static func value(_ item: Item) -> DBusValue {
        item.withMetadata { value(item, $0) }
    }

    private static func value(_ item: Item, _ metadata: Metadata) -> DBusValue {
        var entries: [DBusValue.DictionaryEntry] = []
        entries.reserveCapacity(14)
        func add(_ key: String, _ value: DBusValue?) {
            if let value { entries.append(.init(.string(key), .variant(value))) }
        }
        // keys in ascending order (byte order, as String's < compares them)
        add("mpris:artUrl", metadata.coverURL.map { .string($0.absoluteString) })
        add("mpris:length", item.isLive ? nil : item.duration.map { .int64($0.microseconds) })
        add("mpris:trackid", .objectPath(TrackIDs.path(item.id)))
        add("xesam:album", (metadata.album ?? (item.isLive ? metadata.organization : nil)).map { .string($0) })
        add("xesam:albumArtist", metadata.albumArtists.isEmpty ? nil : .stringArray(metadata.albumArtists))
        add("xesam:artist", metadata.artists.isEmpty ? nil : .stringArray(metadata.artists))
        add("xesam:asText", metadata.lyricsText.map { .string($0) })
        add("xesam:comment", metadata.comment.map { .stringArray([$0]) })
        add("xesam:contentCreated", metadata.date.map { .string($0) })
        add("xesam:discNumber", metadata.discNumber.map { .int32(Int32(clamping: $0)) })
        add("xesam:genre", metadata.genres.isEmpty ? nil : .stringArray(metadata.genres))
        add("xesam:title", .string(item.isLive ? (metadata.streamTitle ?? metadata.title ?? item.uri.displayName) : metadata.displayTitle(of: item.uri)))
        add("xesam:trackNumber", metadata.trackNumber.map { .int32(Int32(clamping: $0)) })
        add("xesam:url", .string(item.uri.string))
        return .dictionary(key: .string, value: .variant, entries)
    }
}

/// One track's MPRIS metadata: the `a{sv}` that `MetadataMap` builds, as a typed table's value.
struct TrackMetadata: DBusRepresentable, Hashable, Sendable {
    static var dbusSignature: Signature { .vardict }
    let dbusValue: DBusValue
    /// With no current track, Metadata is an empty dictionary (design brief).
    static let none = TrackMetadata(.vardict([:]))

    init(_ value: DBusValue) { dbusValue = value }

    init?(dbusValue: DBusValue) {
        guard dbusValue.signature == .vardict else { return nil }
        self.dbusValue = dbusValue
    }
}
