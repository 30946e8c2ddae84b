import DBus
import PlayerModel

/// Track ids: one object path per queue entry, outside /org/mpris (the spec reserves it).
enum TrackIDs {
    static let prefix = "/io/github/tonearm/Track/"
    private static let base: ObjectPath = "/io/github/tonearm/Track"

    static func path(_ id: ItemID) -> ObjectPath { base.appending(number: id.rawValue) }

    static func item(_ path: ObjectPath) -> ItemID? {
        guard path.rawValue.hasPrefix(prefix), let raw = UInt64(path.rawValue.dropFirst(prefix.count)) else { return nil }
        return ItemID(raw)
    }
}
