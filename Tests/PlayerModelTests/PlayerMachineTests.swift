import Foundation
import PlayerModel
import TestSupport
import XCTest

/// The rules as a state machine, on their own: inputs in, actions out, nothing performed.
final class PlayerMachineTests: XCTestCase {
    let a = MediaURI(fileURL: URL(fileURLWithPath: "/music/a.flac"))
    let b = MediaURI(fileURL: URL(fileURLWithPath: "/music/b.flac"))
    let c = MediaURI(fileURL: URL(fileURLWithPath: "/music/c.flac"))
    /// The instant the tests' inputs happen at, unless a test moves time on from it by hand.
    let t0 = ContinuousClock.now

    func loads(_ actions: [PlayerAction]) -> [(MediaURI, Generation)] {
        actions.compactMap { if case .engine(.load(let uri, let generation)) = $0 { (uri, generation) } else { nil } }
    }

    func events(_ actions: [PlayerAction]) -> [PlayerEvent] {
        actions.compactMap { if case .emit(let event) = $0 { event } else { nil } }
    }

    func snapshot(at position: Duration, _ instant: ContinuousClock.Instant) -> EngineSnapshot {
        EngineSnapshot(position: PositionSample(position, at: instant), duration: .seconds(60), isSeekable: true,
                       loadedRanges: [])
    }

    /// Plays `uris` up to PLAYING with the first current; returns the machine, the ids and the generation.
    func playing(_ uris: [MediaURI]) throws -> (PlayerMachine, [ItemID], Generation) {
        var machine = PlayerMachine()
        let ids = try machine.enqueue(uris, at: .end)
        machine.play()
        let generation = try XCTUnwrap(loads(machine.takeActions()).first?.1)
        machine.handle(.stateChanged(.paused, pending: nil, position: nil), of: generation, at: t0)
        machine.handle(.asyncDone(snapshot(at: .zero, t0)), of: generation, at: t0)
        machine.handle(.stateChanged(.playing, pending: nil, position: PositionSample(.zero, at: t0)), of: generation, at: t0)
        _ = machine.takeActions()
        return (machine, ids, generation)
    }

    func testPositionMovesOnFromTheLastSampleOnlyWhilePlaying() throws {
        var (machine, _, generation) = try playing([a])
        let start = t0
        machine.handle(.stateChanged(.playing, pending: nil, position: PositionSample(.seconds(2), at: start)), of: generation, at: start)
        XCTAssertEqual(machine.position(at: start + .milliseconds(1500)), .milliseconds(3500))
        try machine.setRate(2, now: start + .seconds(2))
        machine.handle(.asyncDone(snapshot(at: .seconds(4), start + .seconds(2))), of: generation, at: start + .seconds(2))
        XCTAssertEqual(machine.position(at: start + .seconds(3)), .seconds(6), "at rate 2 a second is two")
        machine.pause()
        machine.handle(.stateChanged(.paused, pending: nil, position: PositionSample(.seconds(5), at: start + .seconds(3))), of: generation,
                       at: start + .seconds(3))
        XCTAssertEqual(machine.position(at: start + .seconds(30)), .seconds(5), "paused, the position holds")
        XCTAssertEqual(machine.position(at: start + .seconds(3000)), .seconds(5))
    }

    func testPositionNeverPassesTheDuration() throws {
        var (machine, _, generation) = try playing([a])
        let start = t0
        machine.handle(.stateChanged(.playing, pending: nil, position: PositionSample(.seconds(59), at: start)), of: generation, at: t0)
        XCTAssertEqual(machine.position(at: start + .seconds(10)), .seconds(60))
    }

    func testHugeSeeksAreCarriedWithoutTrapping() throws {
        var machine = PlayerMachine()
        _ = try machine.enqueue([a], at: .end)
        machine.play()
        // before preroll the seek waits; the engine gets it after
        try machine.seek(to: .microseconds(Int64.max), now: t0)
        try machine.seek(by: .microseconds(Int64.max), now: t0)
        try machine.seek(by: .microseconds(Int64.min), now: t0)
        XCTAssertEqual(machine.position(at: t0), .zero, "a pending seek past a length not known yet does not show")
        try machine.seek(by: .microseconds(Int64.min), now: t0)
        XCTAssertEqual(machine.position(at: t0), .zero, "before 0 clamps to 0")
        // a pending seek past the end, once the length is known, goes on to what follows
        try machine.seek(to: .microseconds(Int64.max), now: t0)
        let generation = try XCTUnwrap(loads(machine.takeActions()).first?.1)
        machine.handle(.asyncDone(snapshot(at: .zero, t0)), of: generation, at: t0)
        XCTAssertEqual(machine.state.intent, .stopped, "the only item: past its end the queue ends")
        XCTAssertFalse(machine.takeActions().contains { if case .engine(.seek) = $0 { true } else { false } })
    }

    func testNextOnTheOnlyItemOfALoopingQueueStartsItOverAndSaysSeeked() throws {
        var (machine, ids, generation) = try playing([a])
        machine.setLoopMode(.queue)
        _ = machine.takeActions()
        try machine.next()
        let actions = machine.takeActions()
        XCTAssertEqual(loads(actions).map(\.0), [a], "the track loads again")
        XCTAssertNotEqual(loads(actions).first?.1, generation)
        XCTAssertTrue(events(actions).contains(.seeked(.zero)))
        XCTAssertEqual(machine.currentItem?.id, ids[0])
        XCTAssertEqual(machine.position(at: t0), .zero)
    }

    func testEndOfTheOnlyItemOfALoopingQueueSaysSeeked() throws {
        var (machine, _, generation) = try playing([a])
        machine.setLoopMode(.queue)
        _ = machine.takeActions()
        machine.handle(.endOfStream, of: generation, at: t0)
        let actions = machine.takeActions()
        XCTAssertEqual(loads(actions).map(\.0), [a])
        XCTAssertTrue(events(actions).contains(.seeked(.zero)))
    }

    func testAGaplessNextItemThatFailsBecomesCurrentAndIsMovedOnFrom() throws {
        var machine = PlayerMachine()
        let ids = try machine.enqueue([a, b, c], at: .end)
        machine.play()
        let generation = try XCTUnwrap(loads(machine.takeActions()).first?.1)
        machine.handle(.asyncDone(snapshot(at: .zero, t0)), of: generation, at: t0)
        // once a prerolled, the player prepares b for about-to-finish
        let prepared = machine.takeActions().compactMap { action -> Generation? in
            if case .engine(.prepareNext(b, let next?)) = action { next } else { nil }
        }
        let next = try XCTUnwrap(prepared.first)
        // the engine switched to b, and b fails
        machine.handle(.failed(ItemError(.decode, "cannot decode b.flac")), of: next, at: t0)
        let actions = machine.takeActions()
        XCTAssertTrue(events(actions).contains(.playedToEnd(ids[0])))
        XCTAssertTrue(events(actions).contains(.itemFailed(ids[1], ItemError(.decode, "cannot decode b.flac"))))
        XCTAssertEqual(machine.item(ids[1])?.error?.kind, .decode)
        XCTAssertEqual(machine.currentItem?.id, ids[2], "the player moves on past the failed item")
        XCTAssertEqual(loads(actions).map(\.0), [c])
        XCTAssertEqual(machine.state.intent, .playing)
    }

    func testARunOfMissingFilesIsAChainOfEventsNotARecursion() throws {
        let queue = DispatchQueue(label: "test.missing")
        let engine = ScriptedEngine(queue: queue)
        let missing = (0..<10_000).map { MediaURI(fileURL: URL(fileURLWithPath: "/unmounted/\($0).flac")) }
        for uri in missing { engine.failingChecks[uri] = ItemError(.notFound, "no such file: \(uri.displayPath)") }
        let player = Player(engine: engine, queue: queue)
        let reached = DispatchSemaphore(value: 0)
        let subscription = player.subscribe { event in
            if case .currentItemChanged(let item?) = event, item.uri == self.a { reached.signal() }
        }
        let ids = try player.enqueue(missing + [a])
        player.play()
        XCTAssertEqual(reached.wait(timeout: .now() + 60), .success, "the player never reached the file that exists")
        subscription.cancel()
        XCTAssertEqual(player.currentItem?.id, ids.last)
        XCTAssertEqual(player.items.filter { $0.error?.kind == .notFound }.count, 10_000)
        XCTAssertEqual(engine.calls.compactMap { if case .load(let uri, _) = $0 { uri } else { nil } }, [a])
    }
}
