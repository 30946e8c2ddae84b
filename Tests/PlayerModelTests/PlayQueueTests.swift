import Foundation
@testable import PlayerModel
import XCTest

/// The queue against the plainest model of it (an array of ids), edit by edit, and the changes the
/// machine announces against the same model: what a client rebuilding the list from the
/// TrackList signals would see.
final class PlayQueueTests: XCTestCase {
    func uris(_ count: Int, from start: Int = 0) -> [MediaURI] {
        (start..<start + count).map { MediaURI(fileURL: URL(fileURLWithPath: "/music/\($0).flac")) }
    }

    /// A seeded generator, so that a failure can be run again.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Applies a change the machine announced to a list of ids, as a TrackList client would.
    func apply(_ change: QueueChange, to list: inout [ItemID]) {
        switch change {
        case .replaced(let ids):
            list = ids
        case .inserted(let ids, let after):
            let at = after.map { list.firstIndex(of: $0)! + 1 } ?? 0
            list.insert(contentsOf: ids, at: at)
        case .removed(let ids):
            list.removeAll { ids.contains($0) }
        case .moved(let id, let after):
            list.removeAll { $0 == id }
            let at = after.map { list.firstIndex(of: $0)! + 1 } ?? 0
            list.insert(id, at: at)
        }
    }

    func testEditsKeepTheOrderAndAnnounceExactlyWhatChanged() throws {
        var random = SplitMix(state: 11)
        var machine = PlayerMachine()
        var model: [ItemID] = []
        var announced: [ItemID] = []
        var nextURI = 0
        for step in 0..<3000 {
            let choice = model.isEmpty ? 0 : Int.random(in: 0..<10, using: &random)
            switch choice {
            case 0...3:
                let count = Int.random(in: 1...4, using: &random)
                let placement: Placement
                let at: Int
                switch Int.random(in: 0..<3, using: &random) {
                case 0: placement = .start; at = 0
                case 1: placement = .end; at = model.count
                default:
                    if let after = model.randomElement(using: &random) {
                        placement = .after(after); at = model.firstIndex(of: after)! + 1
                    } else {
                        placement = .end; at = 0
                    }
                }
                let ids = try machine.enqueue(uris(count, from: nextURI), at: placement)
                nextURI += count
                model.insert(contentsOf: ids, at: at)
            case 4...6:
                let id = model.randomElement(using: &random)!
                try machine.remove([id])
                model.removeAll { $0 == id }
            case 7, 8:
                let id = model.randomElement(using: &random)!
                let after = Bool.random(using: &random) ? nil : model.randomElement(using: &random)
                guard after != id else { continue }
                try machine.move(id, after: after)
                model.removeAll { $0 == id }
                model.insert(id, at: after.map { model.firstIndex(of: $0)! + 1 } ?? 0)
            default:
                try machine.jump(to: model.randomElement(using: &random)!)
            }
            for case .emit(.queueChanged(let change)) in machine.takeActions() { apply(change, to: &announced) }
            XCTAssertEqual(machine.ids, model, "step \(step)")
            XCTAssertEqual(announced, model, "the announced changes at step \(step)")
            XCTAssertEqual(machine.state.count, model.count)
            if let current = machine.currentItem?.id { XCTAssertTrue(model.contains(current)) }
        }
    }

    func testPlayOrderStepsThroughTheQueueBothWays() throws {
        var queue = PlayQueue()
        let ids = queue.insert(uris(50), at: .end)
        var forward: [ItemID] = []
        var cursor = queue.next(after: nil, wrap: false)
        while let id = cursor { forward.append(id); cursor = queue.next(after: id, wrap: false) }
        XCTAssertEqual(forward, ids)
        XCTAssertEqual(queue.next(after: ids.last, wrap: true), ids.first)
        XCTAssertEqual(queue.previous(before: ids.first, wrap: true), ids.last)
        XCTAssertNil(queue.previous(before: ids.first, wrap: false))
        XCTAssertEqual(queue.previous(before: ids[10], wrap: false), ids[9])
        XCTAssertEqual(queue.id(before: ids[10]), ids[9])
        XCTAssertEqual(queue.id(after: ids[10]), ids[11])
    }

    /// The shuffled order holds every item once, whatever is added and removed meanwhile, and what
    /// is added lands after the current item.
    func testShuffledOrderHoldsEveryItemOnceThroughEdits() throws {
        var random = SplitMix(state: 5)
        var queue = PlayQueue()
        var ids = queue.insert(uris(200), at: .end)
        queue.setCurrent(ids[7])
        queue.setShuffled(true)
        XCTAssertEqual(queue.next(after: nil, wrap: false), ids[7], "the current item comes first")
        var nextURI = 200
        for round in 0..<200 {
            if Bool.random(using: &random), let gone = ids.filter({ $0 != queue.currentID }).randomElement(using: &random) {
                queue.remove(gone)
                ids.removeAll { $0 == gone }
            } else {
                let added = queue.insert(uris(1, from: nextURI), at: .after(ids.randomElement(using: &random)!))
                nextURI += 1
                ids += added
                let order = playOrder(queue)
                XCTAssertGreaterThan(order.firstIndex(of: added[0])!, order.firstIndex(of: queue.currentID!)!,
                                     "round \(round): a new item plays after the current one")
            }
            if round % 20 == 0 { queue.setCurrent(ids.randomElement(using: &random)) }
            let order = playOrder(queue)
            XCTAssertEqual(order.count, ids.count, "round \(round)")
            XCTAssertEqual(Set(order), Set(ids), "round \(round)")
            var backward: [ItemID] = []
            var cursor = queue.previous(before: nil, wrap: false)
            while let id = cursor { backward.append(id); cursor = queue.previous(before: id, wrap: false) }
            XCTAssertEqual(backward, order.reversed(), "round \(round)")
        }
        queue.setShuffled(false)
        XCTAssertEqual(playOrder(queue), queue.ids, "unshuffled, the play order is the queue's")
    }

    /// What is saved of a shuffled order (the seed, and the keys that do not derive from it) makes
    /// the same order again in a queue restored from it, the items added while shuffled included.
    func testAShuffledOrderComesBackFromItsSeedAndOwnKeys() throws {
        var queue = PlayQueue()
        let ids = queue.insert(uris(50), at: .end)
        queue.setCurrent(ids[10])
        queue.setShuffled(true)
        let added = queue.insert(uris(5, from: 50), at: .after(ids[3]))
        queue.remove(ids[20])
        let own = queue.ownShuffleKeys
        XCTAssertEqual(Set(own.keys), Set([ids[10]] + added), "only the first item's key and the added ones' are their own")
        let seed = try XCTUnwrap(queue.shuffleSeed)
        var restored = PlayQueue()
        restored.restore(queue.ids.map { ($0, queue.item($0)!.uri) }, nextID: 100)
        restored.setCurrent(ids[10])
        restored.restoreShuffle(seed: seed, keys: own)
        XCTAssertEqual(playOrder(restored), playOrder(queue))
        // no seed (a state saved before orders were): a new order, the current item first
        var fresh = PlayQueue()
        fresh.restore(queue.ids.map { ($0, queue.item($0)!.uri) }, nextID: 100)
        fresh.setCurrent(ids[10])
        fresh.restoreShuffle(seed: nil, keys: [:])
        XCTAssertEqual(playOrder(fresh).first, ids[10])
        XCTAssertEqual(Set(playOrder(fresh)), Set(queue.ids))
    }

    func changes(_ actions: [PlayerAction]) -> [QueueChange] {
        actions.compactMap { action -> QueueChange? in
            if case .emit(.queueChanged(let change)) = action { change } else { nil }
        }
    }

    func playOrder(_ queue: PlayQueue) -> [ItemID] {
        var order: [ItemID] = []
        var cursor = queue.next(after: nil, wrap: false)
        while let id = cursor, order.count <= queue.count {
            order.append(id)
            cursor = queue.next(after: id, wrap: false)
        }
        return order
    }

    /// A whole music folder, edited in its middle: each edit announces only itself.
    func testTenThousandItemsEditedInTheMiddle() throws {
        var machine = PlayerMachine()
        let ids = try machine.enqueue(uris(10_000), at: .end)
        _ = machine.takeActions()
        let added = try machine.enqueue(uris(1, from: 10_000), at: .after(ids[0]))
        XCTAssertEqual(changes(machine.takeActions()), [.inserted(added, after: ids[0])])
        try machine.remove([ids[5000]])
        XCTAssertEqual(changes(machine.takeActions()), [.removed([ids[5000]])])
        var expected = ids
        expected.insert(added[0], at: 1)
        expected.removeAll { $0 == ids[5000] }
        XCTAssertEqual(machine.ids, expected)
        XCTAssertEqual(machine.state.count, 10_000)
    }
}
