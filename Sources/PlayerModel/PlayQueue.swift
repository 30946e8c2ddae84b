/// Where new items go in the queue.
public enum Placement: Hashable, Sendable {
    case start, end
    case after(ItemID)
}

/// The queue: items in order, which one is current, and the order in which to play them (the
/// queue's order, or a shuffled one). A value type; the player owns the only one.
public struct PlayQueue: Sendable {
    public private(set) var items: [Item] = [] { didSet { if itemsReindexed { reindexItems() } } }
    public private(set) var currentID: ItemID?
    /// The play order: equal to `items`' order unless shuffled.
    private var order: [ItemID] = [] { didSet { orderIndex = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) }) } }
    /// Where each id is in `items` and in `order`: lookups stay O(1) with a whole music folder queued.
    private var itemIndex: [ItemID: Int] = [:]
    private var orderIndex: [ItemID: Int] = [:]
    /// False while only an item's fields change (its place does not), so the index is not rebuilt.
    private var itemsReindexed = true
    public private(set) var isShuffled = false
    private var nextRawID: UInt64 = 1

    public init() {}

    public var current: Item? { currentID.flatMap { item($0) } }
    public var ids: [ItemID] { items.map(\.id) }
    public var isEmpty: Bool { items.isEmpty }

    public func item(_ id: ItemID) -> Item? { itemIndex[id].map { items[$0] } }
    public func index(of id: ItemID) -> Int? { itemIndex[id] }

    private mutating func reindexItems() {
        itemIndex = Dictionary(uniqueKeysWithValues: items.enumerated().map { ($1.id, $0) })
    }

    mutating func update(_ id: ItemID, _ change: (inout Item) -> Void) {
        guard let index = index(of: id) else { return }
        itemsReindexed = false
        defer { itemsReindexed = true }
        change(&items[index])
    }

    /// Adds items at `placement`; returns their new ids.
    mutating func insert(_ uris: [MediaURI], at placement: Placement) -> [ItemID] {
        let newItems = uris.map { uri -> Item in
            defer { nextRawID += 1 }
            return Item(id: ItemID(nextRawID), uri: uri)
        }
        let position = switch placement {
        case .start: 0
        case .end: items.count
        case .after(let after): index(of: after).map { $0 + 1 } ?? items.count
        }
        items.insert(contentsOf: newItems, at: position)
        if isShuffled {
            // new entries land at random places after the current one in the play order
            // into a copy, so the order's index is rebuilt once, not once per item
            var shuffled = order
            let start = currentID.flatMap { orderIndex[$0].map { $0 + 1 } } ?? 0
            for item in newItems {
                shuffled.insert(item.id, at: Int.random(in: start...shuffled.count))
            }
            order = shuffled
        } else {
            order = ids
        }
        return newItems.map(\.id)
    }

    /// Removes an item. Returns false when it is not in the queue. Removing the current item
    /// leaves no current item; the caller picks the next one first.
    @discardableResult
    mutating func remove(_ id: ItemID) -> Bool {
        guard let index = index(of: id) else { return false }
        items.remove(at: index)
        order.removeAll { $0 == id }
        if currentID == id { currentID = nil }
        return true
    }

    /// Moves an item to just after `after` (nil: to the front).
    mutating func move(_ id: ItemID, after: ItemID?) -> Bool {
        guard let from = index(of: id), after != id else { return false }
        if let after, index(of: after) == nil { return false }
        let item = items.remove(at: from)
        let to = after.flatMap { index(of: $0).map { $0 + 1 } } ?? 0
        items.insert(item, at: to)
        if !isShuffled { order = ids }
        return true
    }

    mutating func removeAll() {
        items.removeAll()
        order.removeAll()
        currentID = nil
    }

    mutating func setCurrent(_ id: ItemID?) {
        precondition(id == nil || index(of: id!) != nil, "current item must be in the queue")
        currentID = id
    }

    mutating func setShuffled(_ shuffled: Bool) {
        isShuffled = shuffled
        if shuffled {
            // the current item first, the rest in a random order
            var rest = ids.filter { $0 != currentID }
            rest.shuffle()
            order = (currentID.map { [$0] } ?? []) + rest
        } else {
            order = ids
        }
    }

    /// The item after `id` in play order; with `wrap`, the first after the last.
    public func next(after id: ItemID?, wrap: Bool) -> ItemID? {
        guard !order.isEmpty else { return nil }
        guard let id, let position = orderIndex[id] else { return order.first }
        if position + 1 < order.count { return order[position + 1] }
        return wrap ? order.first : nil
    }

    /// The item before `id` in play order; with `wrap`, the last before the first.
    public func previous(before id: ItemID?, wrap: Bool) -> ItemID? {
        guard !order.isEmpty else { return nil }
        guard let id, let position = orderIndex[id] else { return order.last }
        if position > 0 { return order[position - 1] }
        return wrap ? order.last : nil
    }
}
