import Foundation
import PlayerModel
import TestSupport
import XCTest

/// Linear playback (issue 40): while it is on, seeks, Next and rate changes are refused with
/// `.linearPlayback`, the window's arrow keys do nothing, CanSeek and CanGoNext read false; what
/// goes back, pausing and playing to the end are left alone. The machine on its own.
final class LinearPlaybackTests: XCTestCase {
    let a = MediaURI(fileURL: URL(fileURLWithPath: "/music/a.flac"))
    let b = MediaURI(fileURL: URL(fileURLWithPath: "/music/b.flac"))
    let t0 = ContinuousClock.now

    func events(_ actions: [PlayerAction]) -> [PlayerEvent] {
        actions.compactMap { if case .emit(let event) = $0 { event } else { nil } }
    }

    func commands(_ actions: [PlayerAction]) -> [EngineCommand] {
        actions.compactMap { if case .engine(let command) = $0 { command } else { nil } }
    }

    func seeks(_ actions: [PlayerAction]) -> [EngineCommand] {
        commands(actions).filter { if case .seek = $0 { true } else { false } }
    }

    /// `a` playing from 0 at `t0` with `b` after it, linear playback on; returns the machine, the
    /// ids and the load's generation.
    func playingLinearly() throws -> (PlayerMachine, [ItemID], Generation) {
        var machine = PlayerMachine()
        let ids = try machine.enqueue([a, b], at: .end)
        machine.play()
        let generation = try XCTUnwrap(commands(machine.takeActions()).compactMap {
            if case .load(_, let generation) = $0 { generation } else { nil }
        }.first)
        machine.handle(.stateChanged(.paused, pending: nil, position: nil), of: generation, at: t0)
        machine.handle(.asyncDone(EngineSnapshot(position: PositionSample(.zero, at: t0), duration: .seconds(60), isSeekable: true,
                                                 loadedRanges: [])), of: generation, at: t0)
        machine.handle(.stateChanged(.playing, pending: nil, position: PositionSample(.zero, at: t0)), of: generation, at: t0)
        XCTAssertTrue(machine.canSeek)
        XCTAssertTrue(machine.canGoNext)
        _ = machine.takeActions()
        machine.setLinearPlayback(true)
        XCTAssertEqual(events(machine.takeActions()), [.linearPlaybackChanged(true)])
        return (machine, ids, generation)
    }

    func assertRefused(_ body: () throws(PlayerError) -> Void, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        do throws(PlayerError) {
            try body()
            XCTFail("\(what) went through while linear playback is on", file: file, line: line)
        } catch {
            XCTAssertEqual(error.code, .linearPlayback, what, file: file, line: line)
            XCTAssertTrue(error.message.contains("linear playback is on"), error.message, file: file, line: line)
        }
    }

    func testWhileOnSeeksNextAndRateChangesAreRefusedAndNothingHappens() throws {
        var (machine, ids, _) = try playingLinearly()
        XCTAssertFalse(machine.canSeek, "MPRIS CanSeek")
        XCTAssertFalse(machine.canGoNext, "MPRIS CanGoNext")
        XCTAssertEqual(machine.currentItem?.canSeek, true, "the item itself still can")
        let now = t0 + .seconds(10)
        assertRefused({ () throws(PlayerError) in try machine.seek(to: .seconds(30), now: now) }, "a seek")
        assertRefused({ () throws(PlayerError) in try machine.seek(by: .seconds(-5), now: now) }, "a seek back")
        assertRefused({ () throws(PlayerError) in try machine.next() }, "Next")
        assertRefused({ () throws(PlayerError) in try machine.setRate(2, now: now) }, "a rate")
        assertRefused({ () throws(PlayerError) in try machine.setRate(0.5, now: now) }, "a slower rate")
        let actions = machine.takeActions()
        XCTAssertEqual(commands(actions), [], "nothing reached the engine")
        XCTAssertEqual(events(actions), [.rateChanged(1, .refused), .rateChanged(1, .refused)],
                       "each refused rate is announced with its reason, as a rate out of range is")
        XCTAssertEqual(machine.currentItem?.id, ids[0])
        XCTAssertEqual(machine.position(at: now), .seconds(10))
        XCTAssertEqual(machine.state.rate, 1)
    }

    /// A wrong argument is a wrong argument first; the rate it already has is no change.
    func testARateOutOfRangeIsOutOfRangeAndTheSameRateIsNoChange() throws {
        var (machine, _, _) = try playingLinearly()
        XCTAssertThrowsError(try machine.setRate(10, now: t0)) { XCTAssertEqual(($0 as? PlayerError)?.code, .rateOutOfRange) }
        XCTAssertNoThrow(try machine.setRate(1, now: t0))
    }

    func testPausePlayStopAndPreviousStillWork() throws {
        var (machine, _, _) = try playingLinearly()
        machine.pause()
        XCTAssertEqual(commands(machine.takeActions()), [.setPlaying(false)])
        machine.play()
        XCTAssertEqual(commands(machine.takeActions()), [.setPlaying(true)])
        // going back skips nothing: 10 s in, Previous starts the item again
        machine.previous(now: t0 + .seconds(10))
        XCTAssertEqual(seeks(machine.takeActions()), [.seek(.position(.zero), .exact, rate: 1)])
        machine.stop()
        XCTAssertEqual(machine.state.intent, .stopped)
    }

    func testPlayedToItsEndTheNextItemPlays() throws {
        var (machine, ids, generation) = try playingLinearly()
        machine.handle(.endOfStream, of: generation, at: t0 + .seconds(60))
        XCTAssertEqual(machine.currentItem?.id, ids[1], "linear playback plays through, the queue too")
    }

    func testTheWindowsArrowKeysDoNotSeek() throws {
        var (machine, _, generation) = try playingLinearly()
        let right = try XCTUnwrap(WindowInput(key: "Right"))
        machine.handle(.video(.input(right)), of: generation, at: t0 + .seconds(10))
        machine.handle(.video(.input(.seek(by: .seconds(-5)))), of: generation, at: t0 + .seconds(10))
        XCTAssertEqual(seeks(machine.takeActions()), [])
        machine.handle(.video(.input(.playPause)), of: generation, at: t0 + .seconds(10))
        XCTAssertEqual(machine.state.intent, .paused, "Space still pauses")

        machine.setLinearPlayback(false)
        machine.handle(.video(.input(right)), of: generation, at: t0 + .seconds(10))
        XCTAssertEqual(seeks(machine.takeActions()), [.seek(.position(.seconds(15)), .exact, rate: 1)], "turned off, they seek again")
    }

    func testTurnedOffEverythingGoesThroughAgain() throws {
        var (machine, ids, _) = try playingLinearly()
        machine.setLinearPlayback(false)
        XCTAssertEqual(events(machine.takeActions()), [.linearPlaybackChanged(false)])
        XCTAssertTrue(machine.canSeek)
        XCTAssertTrue(machine.canGoNext)
        try machine.setRate(1.5, now: t0)
        try machine.next()
        XCTAssertEqual(machine.currentItem?.id, ids[1])
        machine.setLinearPlayback(false)
        XCTAssertEqual(events(machine.takeActions()).filter { $0 == .linearPlaybackChanged(false) }, [], "no change, no event")
    }

    /// Turning it on keeps the rate: a client's setting is never undone.
    func testTurningItOnKeepsTheRate() throws {
        var machine = PlayerMachine()
        _ = try machine.enqueue([a], at: .end)
        try machine.setRate(1.5, now: t0)
        _ = machine.takeActions()
        machine.setLinearPlayback(true)
        XCTAssertEqual(events(machine.takeActions()), [.linearPlaybackChanged(true)])
        XCTAssertEqual(machine.state.rate, 1.5)
    }

    func testASubscriberHearsItFirstAndARestoreBringsItBack() throws {
        var machine = PlayerMachine()
        XCTAssertTrue(machine.currentValues.contains(.linearPlaybackChanged(false)))
        var settings = SavedSettings(currentID: ItemID(1), intent: .paused)
        settings.linearPlayback = true
        machine.restore(SavedState(items: [SavedState.Entry(id: ItemID(1), uri: a), SavedState.Entry(id: ItemID(2), uri: b)],
                                   settings: settings, nextID: 3), resume: .pause)
        XCTAssertTrue(machine.linearPlayback)
        XCTAssertTrue(events(machine.takeActions()).contains(.linearPlaybackChanged(true)), "announced with the restored state")
        XCTAssertFalse(machine.canGoNext)
        XCTAssertFalse(machine.canSeek)
    }
}
