/// Where new items go in the queue.
public enum Placement: Hashable, Sendable {
    case start, end
    case after(ItemID)
}

/// The queue: items in order, which one is current, and the order in which to play them (the
/// queue's order, or a shuffled one). A value type; the player owns the only one.
///
/// Every edit and every step costs the same with a whole music folder queued as with ten items:
/// items are found by id in a dictionary, and the order is a list linked through a second one
/// (each id's neighbours), so adding k items costs O(k), and removing one, moving one, finding one
/// or its neighbours O(1). A shuffled play order is a `ShuffleOrder` (O(log n)). Only reading the
/// whole list (`ids`, `items`) walks it, and walking it reads the links alone, never copies an item.
public struct PlayQueue: Sendable {
    /// The ids before and after one in the queue's order; 0 stands for none (ids start at 1), so
    /// that a link is two words.
    private struct Link: Sendable {
        var previousRaw: UInt64
        var nextRaw: UInt64
        var previous: ItemID? {
            get { previousRaw == 0 ? nil : ItemID(previousRaw) }
            set { previousRaw = newValue?.rawValue ?? 0 }
        }
        var next: ItemID? {
            get { nextRaw == 0 ? nil : ItemID(nextRaw) }
            set { nextRaw = newValue?.rawValue ?? 0 }
        }
        init(previous: ItemID?, next: ItemID?) {
            previousRaw = previous?.rawValue ?? 0
            nextRaw = next?.rawValue ?? 0
        }
    }

    private var entries: [ItemID: Item] = [:]
    private var links: [ItemID: Link] = [:]
    public private(set) var firstID: ItemID?
    public private(set) var lastID: ItemID?
    public private(set) var currentID: ItemID?
    /// The play order while shuffled; nil: the queue's order.
    private var shuffled: ShuffleOrder?
    private var nextRawID: UInt64 = 1

    public init() {}

    public var count: Int { links.count }
    public var isEmpty: Bool { links.isEmpty }
    public var isShuffled: Bool { shuffled != nil }
    public var current: Item? { currentID.flatMap { item($0) } }
    public func item(_ id: ItemID) -> Item? { entries[id] }
    public func contains(_ id: ItemID) -> Bool { links[id] != nil }

    /// The id before `id` in the queue's order (not the play order); nil for the first.
    public func id(before id: ItemID) -> ItemID? { links[id]?.previous }
    /// The id after `id` in the queue's order (not the play order); nil for the last.
    public func id(after id: ItemID) -> ItemID? { links[id]?.next }

    /// Every id in the queue's order: O(n).
    public var ids: [ItemID] {
        var ids: [ItemID] = []
        ids.reserveCapacity(links.count)
        var cursor = firstID
        while let id = cursor, let link = links[id] {
            ids.append(id)
            cursor = link.next
        }
        return ids
    }

    /// Every item in the queue's order: O(n).
    public var items: [Item] { ids.map { entries[$0]! } }

    mutating func update(_ id: ItemID, _ change: (inout Item) -> Void) {
        guard entries[id] != nil else { return }
        change(&entries[id]!)
    }

    /// Adds items at `placement` (after an id that is not here: at the end); returns their new ids.
    mutating func insert(_ uris: [MediaURI], at placement: Placement) -> [ItemID] {
        guard !uris.isEmpty else { return [] }
        var anchor: ItemID? = switch placement {
        case .start: nil
        case .end: lastID
        case .after(let after): contains(after) ? after : lastID
        }
        let following = anchor.flatMap { links[$0]?.next } ?? (anchor == nil ? firstID : nil)
        var ids: [ItemID] = []
        ids.reserveCapacity(uris.count)
        entries.reserveCapacity(entries.count + uris.count)
        links.reserveCapacity(links.count + uris.count)
        for uri in uris {
            let id = ItemID(nextRawID)
            nextRawID += 1
            entries[id] = Item(id: id, uri: uri)
            links[id] = Link(previous: anchor, next: nil)
            if let anchor { links[anchor]!.next = id } else { firstID = id }
            anchor = id
            ids.append(id)
        }
        links[anchor!]!.next = following
        if let following { links[following]!.previous = anchor } else { lastID = anchor }
        // new entries land at random places after the current one in the play order
        for id in ids { shuffled?.insert(id, after: currentID) }
        return ids
    }

    /// Removes an item. Returns false when it is not in the queue. Removing the current item
    /// leaves no current item; the caller picks the next one first.
    @discardableResult
    mutating func remove(_ id: ItemID) -> Bool {
        guard let link = links.removeValue(forKey: id) else { return false }
        entries[id] = nil
        unlink(link)
        shuffled?.remove(id)
        if currentID == id { currentID = nil }
        return true
    }

    /// Moves an item to just after `after` (nil: to the front). The play order stays while shuffled.
    mutating func move(_ id: ItemID, after: ItemID?) -> Bool {
        guard let link = links[id], after != id else { return false }
        if let after, !contains(after) { return false }
        unlink(link)
        let following = after.map { links[$0]!.next } ?? firstID
        links[id] = Link(previous: after, next: following)
        if let after { links[after]!.next = id } else { firstID = id }
        if let following { links[following]!.previous = id } else { lastID = id }
        return true
    }

    /// Takes the item with `link` out of the linked order (its own link is left as it was).
    private mutating func unlink(_ link: Link) {
        if let previous = link.previous { links[previous]!.next = link.next } else { firstID = link.next }
        if let next = link.next { links[next]!.previous = link.previous } else { lastID = link.previous }
    }

    mutating func removeAll() {
        entries = [:]
        links = [:]
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
        if let next = shuffled.map({ $0.next(after: id) }) ?? links[id]?.next { return next }
        return wrap ? first : nil
    }

    /// The item before `id` in play order; with `wrap`, the last before the first. An id that is
    /// nil or not in the queue: the last.
    public func previous(before id: ItemID?, wrap: Bool) -> ItemID? {
        let last = shuffled.map(\.last) ?? lastID
        guard let id, contains(id) else { return last }
        if let previous = shuffled.map({ $0.previous(before: id) }) ?? links[id]?.previous { return previous }
        return wrap ? last : nil
    }
}
