import Foundation
import PlayerModel
import TestSupport
import XCTest

/// Previous as people expect it (issue 40): more than 3 s into an item, back to its start; within
/// them, to the item before; and CanGoPrevious true whenever Previous does something. The machine
/// on its own, the time an input.
final class PreviousRulesTests: XCTestCase {
    let a = MediaURI(fileURL: URL(fileURLWithPath: "/music/a.flac"))
    let b = MediaURI(fileURL: URL(fileURLWithPath: "/music/b.flac"))
    let radio = try! MediaURI("http://radio.example/stream")
    let t0 = ContinuousClock.now

    func events(_ actions: [PlayerAction]) -> [PlayerEvent] {
        actions.compactMap { if case .emit(let event) = $0 { event } else { nil } }
    }

    func commands(_ actions: [PlayerAction]) -> [EngineCommand] {
        actions.compactMap { if case .engine(let command) = $0 { command } else { nil } }
    }

    func loadedGeneration(_ actions: [PlayerAction]) -> Generation? {
        commands(actions).compactMap { if case .load(_, let generation) = $0 { generation } else { nil } }.last
    }

    func seeked(_ actions: [PlayerAction]) -> [Duration] {
        events(actions).compactMap { if case .seeked(let position) = $0 { position } else { nil } }
    }

    func snapshot(seekable: Bool = true, at instant: ContinuousClock.Instant) -> EngineSnapshot {
        EngineSnapshot(position: PositionSample(.zero, at: instant), duration: seekable ? .seconds(60) : nil,
                       isSeekable: seekable, loadedRanges: [])
    }

    /// `uris` queued and the item `index` playing from 0 at `t0`; returns the machine, the ids and
    /// the current load's generation.
    func playing(_ uris: [MediaURI], at index: Int = 0, seekable: Bool = true) throws -> (PlayerMachine, [ItemID], Generation) {
        var machine = PlayerMachine()
        let ids = try machine.enqueue(uris, at: .end)
        try machine.jump(to: ids[index])
        machine.play()
        let generation = try XCTUnwrap(loadedGeneration(machine.takeActions()))
        if !seekable { machine.handle(.live, of: generation, at: t0) }
        machine.handle(.stateChanged(.paused, pending: nil, position: nil), of: generation, at: t0)
        machine.handle(.asyncDone(snapshot(seekable: seekable, at: t0)), of: generation, at: t0)
        machine.handle(.stateChanged(.playing, pending: nil, position: PositionSample(.zero, at: t0)), of: generation, at: t0)
        _ = machine.takeActions()
        XCTAssertEqual(machine.state.timeControlStatus, .playing)
        return (machine, ids, generation)
    }

    func testMoreThanThreeSecondsInPreviousStartsTheItemAgainAndSaysSeeked() throws {
        var (machine, ids, generation) = try playing([a, b], at: 1)
        let now = t0 + .milliseconds(3001)
        machine.previous(now: now)
        var actions = machine.takeActions()
        XCTAssertEqual(commands(actions), [.seek(.position(.zero), .exact, rate: 1)], "a seek, not a reload")
        XCTAssertEqual(machine.currentItem?.id, ids[1])
        XCTAssertEqual(machine.position(at: now), .zero)
        XCTAssertEqual(seeked(actions), [], "Seeked once the pipeline is there, not before")
        machine.handle(.seekDone(PositionSample(.zero, at: now)), of: generation, at: now)
        actions = machine.takeActions()
        XCTAssertEqual(seeked(actions), [.zero])
        XCTAssertEqual(machine.state.intent, .playing)
        XCTAssertFalse(events(actions).contains { if case .currentItemChanged = $0 { true } else { false } })
    }

    func testWithinThreeSecondsPreviousGoesToTheItemBefore() throws {
        var (machine, ids, _) = try playing([a, b], at: 1)
        machine.previous(now: t0 + .seconds(3))
        let actions = machine.takeActions()
        XCTAssertEqual(machine.currentItem?.id, ids[0], "3 s is not more than 3 s")
        XCTAssertTrue(commands(actions).contains { if case .load(a, _) = $0 { true } else { false } })
        XCTAssertEqual(seeked(actions), [])
        XCTAssertEqual(machine.state.intent, .playing)
    }

    /// A seek asked is where the position is: 10 s in after a seek there, whatever the pipeline
    /// said before it.
    func testThePositionPreviousGoesByIsWhereASeekWent() throws {
        var (machine, ids, _) = try playing([a, b], at: 1)
        try machine.seek(to: .seconds(10), now: t0 + .seconds(1))
        _ = machine.takeActions()
        machine.previous(now: t0 + .seconds(1))
        XCTAssertEqual(machine.currentItem?.id, ids[1])
        XCTAssertEqual(machine.position(at: t0 + .seconds(1)), .zero, "the restart is the newest seek")
    }

    func testAtTheFirstItemPreviousStartsItAgainWhereverItIs() throws {
        var (machine, ids, generation) = try playing([a, b])
        XCTAssertTrue(machine.canGoPrevious, "Previous would start it again")
        machine.previous(now: t0 + .seconds(1))
        XCTAssertEqual(commands(machine.takeActions()), [.seek(.position(.zero), .exact, rate: 1)])
        machine.handle(.seekDone(PositionSample(.zero, at: t0 + .seconds(1))), of: generation, at: t0 + .seconds(1))
        XCTAssertEqual(seeked(machine.takeActions()), [.zero])
        XCTAssertEqual(machine.currentItem?.id, ids[0])
    }

    func testAPausedItemStartsAgainPaused() throws {
        var (machine, _, generation) = try playing([a])
        machine.pause()
        machine.handle(.stateChanged(.paused, pending: nil, position: PositionSample(.seconds(20), at: t0 + .seconds(20))),
                       of: generation, at: t0 + .seconds(20))
        _ = machine.takeActions()
        machine.previous(now: t0 + .seconds(60))
        let actions = machine.takeActions()
        XCTAssertEqual(commands(actions), [.seek(.position(.zero), .exact, rate: 1)])
        XCTAssertFalse(commands(actions).contains(.setPlaying(true)), "a seek while paused stays paused (rule 5)")
        XCTAssertEqual(machine.state.intent, .paused)
    }

    func testLoopingTheQueueTheFirstItemGoesToTheLast() throws {
        var (machine, ids, _) = try playing([a, b])
        machine.setLoopMode(.queue)
        machine.previous(now: t0 + .seconds(1))
        XCTAssertEqual(machine.currentItem?.id, ids[1])
    }

    func testStoppedPreviousGoesToTheItemBeforeOrDoesNothing() throws {
        var machine = PlayerMachine()
        let ids = try machine.enqueue([a, b], at: .end)
        try machine.jump(to: ids[1])
        _ = machine.takeActions()
        machine.previous(now: t0 + .seconds(30))
        XCTAssertEqual(machine.currentItem?.id, ids[0])
        XCTAssertEqual(machine.state.intent, .stopped, "a stopped player stays stopped")
        _ = machine.takeActions()
        machine.previous(now: t0 + .seconds(60))
        XCTAssertEqual(commands(machine.takeActions()), [], "stopped at the first item's start: nothing to do")
        XCTAssertEqual(machine.state.intent, .stopped)
    }

    func testALiveStreamThatCannotSeekOnlyGoesToTheItemBefore() throws {
        var (machine, ids, _) = try playing([radio, a, radio], at: 2, seekable: false)
        XCTAssertEqual(machine.currentItem?.canSeek, false)
        machine.previous(now: t0 + .seconds(60))
        XCTAssertEqual(machine.currentItem?.id, ids[1], "no restart of a stream that cannot seek")

        (machine, _, _) = try playing([radio, a], seekable: false)
        XCTAssertFalse(machine.canGoPrevious, "nothing before, and no start to go back to")
        machine.previous(now: t0 + .seconds(60))
        XCTAssertEqual(commands(machine.takeActions()), [])
    }

    func testCanGoPreviousIsTrueWheneverPreviousDoesSomething() throws {
        var configuration = PlayerConfiguration()
        configuration.advanceOnFailure = false
        var machine = PlayerMachine(configuration: configuration)
        XCTAssertFalse(machine.canGoPrevious, "no current item")
        let ids = try machine.enqueue([a, b], at: .end)
        XCTAssertTrue(machine.canGoPrevious, "a file can seek before it loads: its start is somewhere to go back to")
        XCTAssertTrue(machine.state.canGoPrevious)
        machine.play()
        let generation = try XCTUnwrap(loadedGeneration(machine.takeActions()))
        machine.handle(.failed(ItemError(.decode, "cannot decode a.flac")), of: generation, at: t0)
        XCTAssertEqual(machine.currentItem?.id, ids[0])
        XCTAssertFalse(machine.canGoPrevious, "a failed first item: nothing before it, no start to go back to")
        try machine.jump(to: ids[1])
        XCTAssertTrue(machine.canGoPrevious)
    }
}
