import DBus
import PlayerModel

/// Track ids: one object path per queue entry, outside /org/mpris (the spec reserves it).
enum TrackIDs {
    static let prefix = "/io/github/tonearm/Track/"
    private static let base: ObjectPath = "/io/github/tonearm/Track"

    static func path(_ id: ItemID) -> ObjectPath { base.appending(number: id.rawValue) }

    /// The ids as an `ao`, each path written only when the message is encoded: a list of
    /// 10,000 costs no string per id.
    static func paths(_ ids: [ItemID]) -> ObjectPathList { ObjectPathList(numbered: ids.map(\.rawValue), under: base) }

    static func item(_ path: ObjectPath) -> ItemID? {
        guard path.rawValue.hasPrefix(prefix), let raw = UInt64(path.rawValue.dropFirst(prefix.count)) else { return nil }
        return ItemID(raw)
    }
}
