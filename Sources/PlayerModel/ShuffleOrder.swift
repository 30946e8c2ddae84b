/// A shuffled play order: each item has a random key, and the order is the items sorted by key.
/// A new item added after item X gets a key drawn uniformly between X's key and the largest key,
/// which puts it at a random place among the items after X (a uniform one while those keys are
/// the uniform draws of the shuffle itself), without counting them. Kept in a treap (a binary search tree on the keys, a heap on random
/// priorities: Seidel and Aragon, "Randomized search trees", Algorithmica 16, 1996), so that
/// adding, removing and stepping to the next or previous item take O(log n) expected time with a
/// whole music folder queued. Nodes live in one array (a value type, like the queue that holds it).
///
/// The keys are what is saved to come back in the same order after a restart (issue 14). The items
/// there when the order is made take their keys from `seed` and their ids (`derivedKey`), so that
/// making a shuffled order of 10,000 items saves one number, not 10,000 rows; the first item (key
/// 0) and every item added later (a random key) are saved with their own key. Stepping through the
/// order changes no key, and so saves nothing of the order.
struct ShuffleOrder: Sendable {
    /// Where an item sorts: by its key, and two equal keys (about n / 2^64 of a chance) by id,
    /// which is larger for a newer item, so that a new item with its anchor's key still follows it.
    private struct Rank: Comparable, Sendable {
        var key: UInt64
        var id: UInt64
        static func < (a: Rank, b: Rank) -> Bool { (a.key, a.id) < (b.key, b.id) }
    }

    private struct Node: Sendable {
        var rank: Rank
        var priority: UInt64
        var id: ItemID { ItemID(rank.id) }
        var left = Int32(-1)
        var right = Int32(-1)
    }

    private var nodes: [Node] = []
    private var free: [Int32] = []
    private var root = Int32(-1)
    private var nodeOf: [ItemID: Int32] = [:]
    /// What the keys of the items there at the start are drawn from (`derivedKey`).
    let seed: UInt64

    var count: Int { nodeOf.count }
    func contains(_ id: ItemID) -> Bool { nodeOf[id] != nil }

    /// `ids` in a random order, `first` (if given, key 0) before all of them: each of the others
    /// gets the key `derivedKey(seed, id)`.
    init<S: Sequence>(_ ids: S, first: ItemID?, seed: UInt64 = .random(in: 0...UInt64.max)) where S.Element == ItemID {
        self.seed = seed
        if let first { insert(first, key: 0) }
        for id in ids where id != first { insert(id, key: Self.derivedKey(seed: seed, id: id)) }
    }

    /// An order restored from saved keys: each entry's own key, or when it has none the one
    /// derived from `seed` (as `init(_:first:seed:)` gave it).
    init<S: Sequence>(restoring entries: S, seed: UInt64) where S.Element == (ItemID, UInt64?) {
        self.seed = seed
        for (id, key) in entries where nodeOf[id] == nil {
            insert(id, key: key ?? Self.derivedKey(seed: seed, id: id))
        }
    }

    /// The key of an item that was there when the order was made: splitmix64 (Steele, Lea and
    /// Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014) of the seed and the
    /// id, a bijection of its input whose outputs pass BigCrush, so that the keys of ids 1, 2, 3...
    /// are as good as independent uniform draws. Never 0, the first item's key.
    static func derivedKey(seed: UInt64, id: ItemID) -> UInt64 {
        var z = seed &+ id.rawValue &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return max(z ^ (z >> 31), 1)
    }

    /// The key `id` sorts by; nil when it is not here.
    func key(of id: ItemID) -> UInt64? { nodeOf[id].map { nodes[Int($0)].rank.key } }

    /// Adds `id` at a random place after `anchor` (anywhere when `anchor` is nil or not here).
    mutating func insert(_ id: ItemID, after anchor: ItemID?) {
        let low = anchor.flatMap { nodeOf[$0] }.map { nodes[Int($0)].rank.key } ?? 0
        insert(id, key: UInt64.random(in: low...UInt64.max))
    }

    mutating func remove(_ id: ItemID) {
        guard let index = nodeOf.removeValue(forKey: id) else { return }
        root = remove(nodes[Int(index)].rank, from: root)
        free.append(index)
    }

    var first: ItemID? { extreme(left: true) }
    var last: ItemID? { extreme(left: false) }

    /// The item after `id` in the order, or nil when it is the last (or not here).
    func next(after id: ItemID) -> ItemID? { neighbour(of: id, after: true) }
    /// The item before `id` in the order, or nil when it is the first (or not here).
    func previous(before id: ItemID) -> ItemID? { neighbour(of: id, after: false) }

    // MARK: The tree

    private mutating func insert(_ id: ItemID, key: UInt64) {
        let node = Node(rank: Rank(key: key, id: id.rawValue), priority: UInt64.random(in: 0...UInt64.max))
        let index: Int32
        if let reused = free.popLast() {
            nodes[Int(reused)] = node
            index = reused
        } else {
            nodes.append(node)
            index = Int32(nodes.count - 1)
        }
        nodeOf[id] = index
        root = insert(index, into: root)
    }

    /// Inserts node `index` into the subtree at `tree`; returns the subtree's new root.
    private mutating func insert(_ index: Int32, into tree: Int32) -> Int32 {
        guard tree >= 0 else { return index }
        let t = Int(tree)
        if nodes[Int(index)].rank < nodes[t].rank {
            nodes[t].left = insert(index, into: nodes[t].left)
            if nodes[Int(nodes[t].left)].priority > nodes[t].priority { return rotateRight(tree) }
        } else {
            nodes[t].right = insert(index, into: nodes[t].right)
            if nodes[Int(nodes[t].right)].priority > nodes[t].priority { return rotateLeft(tree) }
        }
        return tree
    }

    /// Removes the node ranked `rank` from the subtree at `tree`; returns the subtree's new root.
    private mutating func remove(_ rank: Rank, from tree: Int32) -> Int32 {
        guard tree >= 0 else { return tree }
        let t = Int(tree)
        if rank < nodes[t].rank {
            nodes[t].left = remove(rank, from: nodes[t].left)
            return tree
        }
        if nodes[t].rank < rank {
            nodes[t].right = remove(rank, from: nodes[t].right)
            return tree
        }
        // found: rotate it down below the child of higher priority until it is a leaf
        let left = nodes[t].left, right = nodes[t].right
        if left < 0 { return right }
        if right < 0 { return left }
        if nodes[Int(left)].priority > nodes[Int(right)].priority {
            let top = rotateRight(tree)
            nodes[Int(top)].right = remove(rank, from: tree)
            return top
        } else {
            let top = rotateLeft(tree)
            nodes[Int(top)].left = remove(rank, from: tree)
            return top
        }
    }

    private mutating func rotateRight(_ tree: Int32) -> Int32 {
        let top = nodes[Int(tree)].left
        nodes[Int(tree)].left = nodes[Int(top)].right
        nodes[Int(top)].right = tree
        return top
    }

    private mutating func rotateLeft(_ tree: Int32) -> Int32 {
        let top = nodes[Int(tree)].right
        nodes[Int(tree)].right = nodes[Int(top)].left
        nodes[Int(top)].left = tree
        return top
    }

    private func extreme(left: Bool) -> ItemID? {
        var tree = root
        guard tree >= 0 else { return nil }
        while true {
            let child = left ? nodes[Int(tree)].left : nodes[Int(tree)].right
            if child < 0 { return nodes[Int(tree)].id }
            tree = child
        }
    }

    /// The node ranked next above (or below) `id`: the last node where the search for `id`'s
    /// rank turned the other way.
    private func neighbour(of id: ItemID, after: Bool) -> ItemID? {
        guard let index = nodeOf[id] else { return nil }
        let rank = nodes[Int(index)].rank
        var tree = root
        var found: Int32 = -1
        while tree >= 0 {
            let node = nodes[Int(tree)]
            if after {
                if rank < node.rank { found = tree; tree = node.left } else { tree = node.right }
            } else {
                if node.rank < rank { found = tree; tree = node.right } else { tree = node.left }
            }
        }
        return found >= 0 ? nodes[Int(found)].id : nil
    }
}
