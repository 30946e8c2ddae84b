/// Where new items go in the queue.
public enum Placement: Hashable, Sendable {
    case start, end
    case after(ItemID)
}

/// The queue: items in order, which one is current, and the order in which to play them (the
/// queue's order, or a shuffled one). A value type; the player owns the only one.
///
/// Every edit and every step costs the same with a whole music folder queued as with ten items:
/// items are found by id in a dictionary, and the order is a list linked through it (each entry
/// knows the ids before and after it), so adding k items costs O(k), and removing one, moving one,
/// finding one or its neighbours O(1). A shuffled play order is a `ShuffleOrder` (O(log n)).
/// Only reading the whole list (`ids`, `items`) walks it.
public struct PlayQueue: Sendable {
    private struct Entry: Sendable {
        var item: Item
        var previous: ItemID?
        var next: ItemID?
    }

    private var entries: [ItemID: Entry] = [:]
    public private(set) var firstID: ItemID?
    public private(set) var lastID: ItemID?
    public private(set) var currentID: ItemID?
    /// The play order while shuffled; nil: the queue's order.
    private var shuffled: ShuffleOrder?
    private var nextRawID: UInt64 = 1

    public init() {}

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }
    public var isShuffled: Bool { shuffled != nil }
    public var current: Item? { currentID.flatMap { item($0) } }
    public func item(_ id: ItemID) -> Item? { entries[id]?.item }
    public func contains(_ id: ItemID) -> Bool { entries[id] != nil }

    /// The id before `id` in the queue's order (not the play order); nil for the first.
    public func id(before id: ItemID) -> ItemID? { entries[id]?.previous }
    /// The id after `id` in the queue's order (not the play order); nil for the last.
    public func id(after id: ItemID) -> ItemID? { entries[id]?.next }

    /// Every id in the queue's order: O(n).
    public var ids: [ItemID] {
        var ids: [ItemID] = []
        ids.reserveCapacity(entries.count)
        var cursor = firstID
        while let id = cursor, let entry = entries[id] {
            ids.append(id)
            cursor = entry.next
        }
        return ids
    }

    /// Every item in the queue's order: O(n).
    public var items: [Item] { ids.map { entries[$0]!.item } }

    mutating func update(_ id: ItemID, _ change: (inout Item) -> Void) {
        guard entries[id] != nil else { return }
        change(&entries[id]!.item)
    }

    /// Adds items at `placement` (after an id that is not here: at the end); returns their new ids.
    mutating func insert(_ uris: [MediaURI], at placement: Placement) -> [ItemID] {
        guard !uris.isEmpty else { return [] }
        var anchor: ItemID? = switch placement {
        case .start: nil
        case .end: lastID
        case .after(let after): contains(after) ? after : lastID
        }
        let following = anchor.flatMap { entries[$0]?.next } ?? (anchor == nil ? firstID : nil)
        var ids: [ItemID] = []
        ids.reserveCapacity(uris.count)
        entries.reserveCapacity(entries.count + uris.count)
        for uri in uris {
            let id = ItemID(nextRawID)
            nextRawID += 1
            entries[id] = Entry(item: Item(id: id, uri: uri), previous: anchor, next: nil)
            if let anchor { entries[anchor]!.next = id } else { firstID = id }
            anchor = id
            ids.append(id)
        }
        entries[anchor!]!.next = following
        if let following { entries[following]!.previous = anchor } else { lastID = anchor }
        // new entries land at random places after the current one in the play order
        for id in ids { shuffled?.insert(id, after: currentID) }
        return ids
    }

    /// Removes an item. Returns false when it is not in the queue. Removing the current item
    /// leaves no current item; the caller picks the next one first.
    @discardableResult
    mutating func remove(_ id: ItemID) -> Bool {
        guard let entry = entries.removeValue(forKey: id) else { return false }
        unlink(entry)
        shuffled?.remove(id)
        if currentID == id { currentID = nil }
        return true
    }

    /// Moves an item to just after `after` (nil: to the front). The play order stays while shuffled.
    mutating func move(_ id: ItemID, after: ItemID?) -> Bool {
        guard let entry = entries[id], after != id else { return false }
        if let after, !contains(after) { return false }
        unlink(entry)
        let following = after.map { entries[$0]!.next } ?? firstID
        entries[id]!.previous = after
        entries[id]!.next = following
        if let after { entries[after]!.next = id } else { firstID = id }
        if let following { entries[following]!.previous = id } else { lastID = id }
        return true
    }

    /// Takes `entry` out of the linked order (its own links are left as they were).
    private mutating func unlink(_ entry: Entry) {
        if let previous = entry.previous { entries[previous]!.next = entry.next } else { firstID = entry.next }
        if let next = entry.next { entries[next]!.previous = entry.previous } else { lastID = entry.previous }
    }

    mutating func removeAll() {
        entries = [:]
        firstID = nil
        lastID = nil
        currentID = nil
        if shuffled != nil { shuffled = ShuffleOrder([], first: nil) }
    }

    mutating func setCurrent(_ id: ItemID?) {
        precondition(id == nil || contains(id!), "current item must be in the queue")
        currentID = id
    }

    mutating func setShuffled(_ shuffled: Bool) {
        // the current item first, the rest in a random order
        self.shuffled = shuffled ? ShuffleOrder(ids, first: currentID) : nil
    }

    /// The item after `id` in play order; with `wrap`, the first after the last. An id that is
    /// nil or not in the queue: the first.
    public func next(after id: ItemID?, wrap: Bool) -> ItemID? {
        let first = shuffled.map(\.first) ?? firstID
        guard let id, contains(id) else { return first }
        if let next = shuffled.map({ $0.next(after: id) }) ?? entries[id]?.next { return next }
        return wrap ? first : nil
    }

    /// The item before `id` in play order; with `wrap`, the last before the first. An id that is
    /// nil or not in the queue: the last.
    public func previous(before id: ItemID?, wrap: Bool) -> ItemID? {
        let last = shuffled.map(\.last) ?? lastID
        guard let id, contains(id) else { return last }
        if let previous = shuffled.map({ $0.previous(before: id) }) ?? entries[id]?.previous { return previous }
        return wrap ? last : nil
    }
}
