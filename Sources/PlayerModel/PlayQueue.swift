/// Where new items go in the queue.
public enum Placement: Hashable, Sendable {
    case start, end
    case after(ItemID)
}

/// The queue: items in order, which one is current, and the order in which to play them (the
/// queue's order, or a shuffled one). A value type; the player owns the only one.
///
/// Every edit and every step costs the same with a whole music folder queued as with ten items:
/// each item lives in a slot of an array, found by id through one dictionary, and the order is a
/// list linked through the slots (each knows the slots before and after it), so adding k items
/// costs O(k), and removing one, moving one, finding one or its neighbours O(1). A shuffled play
/// order is a `ShuffleOrder` (O(log n)). Only reading the whole list (`ids`, `items`) walks it,
/// from slot to slot, hashing nothing and copying no item.
public struct PlayQueue: Sendable {
    /// One place in the queue: its item's id, and the slots before and after it (-1: none).
    private struct Slot: Sendable {
        var id: ItemID
        var previous: Int32
        var next: Int32
    }

    private var slotOf: [ItemID: Int32] = [:]
    private var slots: [Slot] = []
    /// The item in each slot; nil for a free one.
    private var itemInSlot: [Item?] = []
    private var freeSlots: [Int32] = []
    private var first: Int32 = -1
    private var last: Int32 = -1
    public private(set) var currentID: ItemID?
    /// The play order while shuffled; nil: the queue's order.
    private var shuffled: ShuffleOrder?
    private var nextRawID: UInt64 = 1

    public init() {}

    public var count: Int { slotOf.count }
    public var isEmpty: Bool { slotOf.isEmpty }
    public var isShuffled: Bool { shuffled != nil }
    /// While shuffled, the key `id` sorts by in the play order (see `ShuffleOrder`); nil otherwise.
    public func shuffleKey(of id: ItemID) -> UInt64? { shuffled?.key(of: id) }
    /// While shuffled, what the keys of the items there when it was shuffled are derived from.
    public var shuffleSeed: UInt64? { shuffled?.seed }
    public var current: Item? { currentID.flatMap { item($0) } }
    public func item(_ id: ItemID) -> Item? { slotOf[id].flatMap { itemInSlot[Int($0)] } }
    public func contains(_ id: ItemID) -> Bool { slotOf[id] != nil }
    public var firstID: ItemID? { first < 0 ? nil : slots[Int(first)].id }
    public var lastID: ItemID? { last < 0 ? nil : slots[Int(last)].id }

    /// The id before `id` in the queue's order (not the play order); nil for the first.
    public func id(before id: ItemID) -> ItemID? { slotOf[id].flatMap { self.id(at: slots[Int($0)].previous) } }
    /// The id after `id` in the queue's order (not the play order); nil for the last.
    public func id(after id: ItemID) -> ItemID? { slotOf[id].flatMap { self.id(at: slots[Int($0)].next) } }

    private func id(at slot: Int32) -> ItemID? { slot < 0 ? nil : slots[Int(slot)].id }

    /// Every id in the queue's order: O(n).
    public var ids: [ItemID] {
        var ids: [ItemID] = []
        ids.reserveCapacity(slotOf.count)
        var slot = first
        while slot >= 0 {
            ids.append(slots[Int(slot)].id)
            slot = slots[Int(slot)].next
        }
        return ids
    }

    /// Every item in the queue's order: O(n).
    public var items: [Item] {
        var all: [Item] = []
        all.reserveCapacity(slotOf.count)
        var slot = first
        while slot >= 0 {
            all.append(itemInSlot[Int(slot)]!)
            slot = slots[Int(slot)].next
        }
        return all
    }

    mutating func update(_ id: ItemID, _ change: (inout Item) -> Void) {
        guard let slot = slotOf[id] else { return }
        change(&itemInSlot[Int(slot)]!)
    }

    /// Adds items at `placement` (after an id that is not here: at the end); returns their new ids.
    mutating func insert(_ uris: [MediaURI], at placement: Placement) -> [ItemID] {
        guard !uris.isEmpty else { return [] }
        var anchor: Int32 = switch placement {
        case .start: -1
        case .end: last
        case .after(let after): slotOf[after] ?? last
        }
        let following = anchor < 0 ? first : slots[Int(anchor)].next
        var ids: [ItemID] = []
        ids.reserveCapacity(uris.count)
        slotOf.reserveCapacity(slotOf.count + uris.count)
        for uri in uris {
            let id = ItemID(nextRawID)
            nextRawID += 1
            let slot = take(Slot(id: id, previous: anchor, next: -1), Item(id: id, uri: uri))
            if anchor >= 0 { slots[Int(anchor)].next = slot } else { first = slot }
            anchor = slot
            ids.append(id)
        }
        slots[Int(anchor)].next = following
        if following >= 0 { slots[Int(following)].previous = anchor } else { last = anchor }
        // new entries land at random places after the current one in the play order
        for id in ids { shuffled?.insert(id, after: currentID) }
        return ids
    }

    /// Fills an empty queue with saved entries, keeping their ids and order; new ids continue
    /// from `nextID` (or past the largest restored id), so none is reused.
    mutating func restore(_ entries: [(id: ItemID, uri: MediaURI)], nextID: UInt64) {
        precondition(isEmpty, "restoring into a queue that has items")
        var previous: Int32 = -1
        slotOf.reserveCapacity(entries.count)
        for entry in entries where slotOf[entry.id] == nil {
            let slot = take(Slot(id: entry.id, previous: previous, next: -1), Item(id: entry.id, uri: entry.uri))
            if previous >= 0 { slots[Int(previous)].next = slot } else { first = slot }
            previous = slot
            nextRawID = max(nextRawID, entry.id.rawValue &+ 1)
        }
        last = previous
        nextRawID = max(nextRawID, nextID)
    }

    /// A free slot (or a new one) holding `slot` and `item`.
    private mutating func take(_ slot: Slot, _ item: Item) -> Int32 {
        let index: Int32
        if let free = freeSlots.popLast() {
            index = free
            slots[Int(index)] = slot
            itemInSlot[Int(index)] = item
        } else {
            index = Int32(slots.count)
            slots.append(slot)
            itemInSlot.append(item)
        }
        slotOf[slot.id] = index
        return index
    }

    /// Removes an item. Returns false when it is not in the queue. Removing the current item
    /// leaves no current item; the caller picks the next one first.
    @discardableResult
    mutating func remove(_ id: ItemID) -> Bool {
        guard let slot = slotOf.removeValue(forKey: id) else { return false }
        unlink(slot)
        itemInSlot[Int(slot)] = nil
        freeSlots.append(slot)
        shuffled?.remove(id)
        if currentID == id { currentID = nil }
        return true
    }

    /// Moves an item to just after `after` (nil: to the front). The play order stays while shuffled.
    mutating func move(_ id: ItemID, after: ItemID?) -> Bool {
        guard let slot = slotOf[id], after != id else { return false }
        var anchor: Int32 = -1
        if let after {
            guard let found = slotOf[after] else { return false }
            anchor = found
        }
        unlink(slot)
        let following = anchor < 0 ? first : slots[Int(anchor)].next
        slots[Int(slot)].previous = anchor
        slots[Int(slot)].next = following
        if anchor >= 0 { slots[Int(anchor)].next = slot } else { first = slot }
        if following >= 0 { slots[Int(following)].previous = slot } else { last = slot }
        return true
    }

    /// Takes `slot` out of the linked order (its own links are left as they were).
    private mutating func unlink(_ slot: Int32) {
        let previous = slots[Int(slot)].previous, next = slots[Int(slot)].next
        if previous >= 0 { slots[Int(previous)].next = next } else { first = next }
        if next >= 0 { slots[Int(next)].previous = previous } else { last = previous }
    }

    mutating func removeAll() {
        slotOf = [:]
        slots = []
        itemInSlot = []
        freeSlots = []
        first = -1
        last = -1
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

    /// Shuffles with the saved order: each item's saved key, or the one derived from `seed`. With
    /// no seed and items without a key (a state saved before orders were), a new random order,
    /// the current item first.
    mutating func restoreShuffle(seed: UInt64?, keys: [ItemID: UInt64]) {
        guard seed != nil || keys.count >= count else { return setShuffled(true) }
        var entries: [(ItemID, UInt64?)] = []
        entries.reserveCapacity(count)
        var slot = first
        while slot >= 0 {
            let id = slots[Int(slot)].id
            entries.append((id, keys[id]))
            slot = slots[Int(slot)].next
        }
        shuffled = ShuffleOrder(restoring: entries, seed: seed ?? .random(in: 0...UInt64.max))
    }

    /// While shuffled, the keys that are not derived from the seed (the first item's, and those
    /// of the items added since): what must be saved besides the seed. O(n), with no allocation
    /// beyond the answer: run when shuffle is turned on, not at each step.
    public var ownShuffleKeys: [ItemID: UInt64] {
        guard let shuffled else { return [:] }
        var keys: [ItemID: UInt64] = [:]
        var slot = first
        while slot >= 0 {
            let id = slots[Int(slot)].id
            if let key = shuffled.key(of: id), key != ShuffleOrder.derivedKey(seed: shuffled.seed, id: id) { keys[id] = key }
            slot = slots[Int(slot)].next
        }
        return keys
    }

    /// The item after `id` in play order; with `wrap`, the first after the last. An id that is
    /// nil or not in the queue: the first.
    public func next(after id: ItemID?, wrap: Bool) -> ItemID? {
        let first = shuffled.map(\.first) ?? firstID
        guard let id, contains(id) else { return first }
        if let next = shuffled.map({ $0.next(after: id) }) ?? self.id(after: id) { return next }
        return wrap ? first : nil
    }

    /// The item before `id` in play order; with `wrap`, the last before the first. An id that is
    /// nil or not in the queue: the last.
    public func previous(before id: ItemID?, wrap: Bool) -> ItemID? {
        let last = shuffled.map(\.last) ?? lastID
        guard let id, contains(id) else { return last }
        if let previous = shuffled.map({ $0.previous(before: id) }) ?? self.id(before: id) { return previous }
        return wrap ? last : nil
    }
}
