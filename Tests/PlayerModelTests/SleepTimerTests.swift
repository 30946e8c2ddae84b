import PlayerModel
import XCTest

/// Stop after the current track and the sleep timer, on the machine with a hand clock: its timers
/// are actions, and time moves only when the test says.
final class SleepTimerTests: XCTestCase {
    typealias Machine = StreamRulesTests.Machine
    let a = MediaURI(fileURL: URL(fileURLWithPath: "/music/a.flac"))
    let b = MediaURI(fileURL: URL(fileURLWithPath: "/music/b.flac"))
    let c = MediaURI(fileURL: URL(fileURLWithPath: "/music/c.flac"))

    /// The gapless next item `playing` saw armed at the preroll.
    var armed: EngineCommand?

    /// Plays the first of `uris`, prerolled and PLAYING.
    func playing(_ uris: [MediaURI]) throws -> (Machine, [ItemID]) {
        var m = Machine(ReconnectPolicy())
        let ids = try m.machine.enqueue(uris, at: .end)
        m.machine.play()
        _ = m.take()
        m.send(.asyncDone(EngineSnapshot(position: m.sample(.zero), duration: .seconds(60), isSeekable: true, loadedRanges: [])))
        armed = engineCommands(m.actions).first { if case .prepareNext(.some, _) = $0 { true } else { false } }
        m.send(.stateChanged(.playing, pending: nil, position: m.sample(.zero)))
        XCTAssertEqual(m.machine.state.timeControlStatus, .playing)
        return (m, ids)
    }

    func sleepTimers(_ actions: [PlayerAction]) -> [Duration] {
        actions.compactMap { if case .startTimer(.sleep, let after) = $0 { after } else { nil } }
    }

    /// The fades the engine is told: a target and a length each.
    func fades(_ actions: [PlayerAction]) -> [EngineCommand] {
        actions.compactMap { if case .engine(let command) = $0, case .fade = command { command } else { nil } }
    }

    func engineCommands(_ actions: [PlayerAction]) -> [EngineCommand] {
        actions.compactMap { if case .engine(let command) = $0 { command } else { nil } }
    }

    // MARK: The sleep timer

    func testTheTimerWakesWhereTheFadeBeginsAndAtTheDeadlineAndTheEngineFades() throws {
        var (m, _) = try playing([a])
        m.machine.setSleepTimer(after: .seconds(60), now: m.now)
        var actions = m.take()
        XCTAssertEqual(sleepTimers(actions), [.seconds(50)], "one wake-up, where the fade begins 10 s before the end")
        XCTAssertTrue(actions.contains(.emit(.sleepTimerChanged(SleepTimer(length: .seconds(60), from: m.now)))))
        XCTAssertEqual(fades(actions), [], "nothing changes before the fade")

        m.advance(by: .seconds(50))
        actions = m.fire(.sleep)
        XCTAssertEqual(fades(actions), [.fade(to: 0, over: .seconds(10))], "a target and a length: the engine ramps")
        XCTAssertEqual(sleepTimers(actions), [.seconds(10)], "the next wake-up is the deadline, no steps")
        XCTAssertEqual(m.machine.state.volume, 1, "the user's volume stays")

        m.advance(by: .seconds(10))
        actions = m.fire(.sleep)
        XCTAssertEqual(engineCommands(actions), [.setPlaying(false), .fade(to: 1, over: .zero)],
                       "paused first, then the level back at once, so the next Play has the user's volume")
        XCTAssertEqual(m.machine.state.intent, .paused)
        XCTAssertTrue(actions.contains(.emit(.sleepTimerChanged(nil))))
        XCTAssertEqual(sleepTimers(actions), [], "no timer once it ran out")
        XCTAssertNil(m.machine.sleepTimer)
    }

    func testAShortTimerFadesOverItsWholeLength() throws {
        var (m, _) = try playing([a])
        m.machine.setSleepTimer(after: .seconds(3), now: m.now)
        let actions = m.take()
        XCTAssertEqual(fades(actions), [.fade(to: 0, over: .seconds(3))], "the fade starts at once")
        XCTAssertEqual(sleepTimers(actions), [.seconds(3)])
        XCTAssertEqual(m.machine.sleepTimer?.fade, .seconds(3))
        m.advance(by: .seconds(3))
        m.fire(.sleep)
        XCTAssertEqual(m.machine.state.intent, .paused)
    }

    /// A timer set again during its fade starts from the full level again, as a new timer does.
    func testATimerReplacedDuringItsFadeStartsAgainFromTheFullLevel() throws {
        var (m, _) = try playing([a])
        m.machine.setSleepTimer(after: .seconds(5), now: m.now)
        _ = m.take()
        m.advance(by: .seconds(2))
        m.machine.setSleepTimer(after: .seconds(3), now: m.now)
        XCTAssertEqual(fades(m.take()), [.fade(to: 1, over: .zero), .fade(to: 0, over: .seconds(3))])
        m.machine.setSleepTimer(after: .seconds(600), now: m.now)
        XCTAssertEqual(fades(m.take()), [.fade(to: 1, over: .zero)], "back to the full level until the new fade")
    }

    func testCancellingRemovesTheTimerAndTheFade() throws {
        var (m, _) = try playing([a])
        m.machine.setSleepTimer(after: .seconds(20), now: m.now)
        _ = m.take()
        m.advance(by: .seconds(10))
        XCTAssertEqual(fades(m.fire(.sleep)), [.fade(to: 0, over: .seconds(10))])
        m.advance(by: .seconds(5))
        m.machine.cancelSleepTimer()
        let actions = m.take()
        XCTAssertTrue(actions.contains(.cancelTimer(.sleep)))
        XCTAssertEqual(fades(actions), [.fade(to: 1, over: .zero)], "the level comes back at once")
        XCTAssertTrue(actions.contains(.emit(.sleepTimerChanged(nil))))
        m.advance(by: .seconds(5))
        XCTAssertEqual(m.fire(.sleep), [], "a late timer does nothing")
        XCTAssertEqual(m.machine.state.intent, .playing)
        m.machine.cancelSleepTimer()
        XCTAssertEqual(m.take(), [], "cancelling no timer does nothing")
    }

    /// Wall-clock minutes: paused, it counts on; at the deadline there is nothing to pause.
    func testPausedTheTimerCountsOnAndEndsWithoutPlaying() throws {
        var (m, _) = try playing([a])
        m.machine.setSleepTimer(after: .seconds(30), now: m.now)
        m.machine.pause()
        _ = m.take()
        m.advance(by: .seconds(20))
        let actions = m.fire(.sleep)
        XCTAssertEqual(sleepTimers(actions), [.seconds(10)])
        XCTAssertEqual(fades(actions), [.fade(to: 0, over: .seconds(10))], "the fade runs while paused too")
        m.advance(by: .seconds(10))
        let ended = m.fire(.sleep)
        XCTAssertFalse(engineCommands(ended).contains(.setPlaying(true)), "an ended timer never plays")
        XCTAssertEqual(fades(ended), [.fade(to: 1, over: .zero)])
        XCTAssertEqual(m.machine.state.intent, .paused)
        XCTAssertNil(m.machine.sleepTimer)
        m.machine.play()
        XCTAssertEqual(fades(m.take()), [], "the level is 1 again before Play")
    }

    /// A new timer replaces the old one; zero cancels.
    func testSettingAgainReplacesAndZeroCancels() throws {
        var (m, _) = try playing([a])
        m.machine.setSleepTimer(after: .seconds(60), now: m.now)
        _ = m.take()
        m.machine.setSleepTimer(after: .seconds(120), now: m.now)
        XCTAssertEqual(sleepTimers(m.take()), [.seconds(110)])
        m.machine.setSleepTimer(after: .zero, now: m.now)
        XCTAssertTrue(m.take().contains(.cancelTimer(.sleep)))
        XCTAssertNil(m.machine.sleepTimer)
        m.machine.setSleepTimer(after: .seconds(1_000_000), now: m.now)
        XCTAssertEqual(m.machine.sleepTimer?.deadline, m.now + SleepTimer.longest, "a day at most")
    }

    // MARK: Stop after the current item

    /// Nothing is armed for a gapless switch; at the end the next item is current, stopped, not loaded.
    func testStopAfterCurrentStopsAtTheEndOnTheNextItem() throws {
        var (m, ids) = try playing([a, b, c])
        guard case .prepareNext(b, _) = armed else { return XCTFail("b was not armed: \(String(describing: armed))") }
        m.machine.setStopAfterCurrent(true)
        var actions = m.take()
        XCTAssertEqual(engineCommands(actions), [.prepareNext(nil, nil)], "taken back from the engine")
        XCTAssertTrue(actions.contains(.emit(.stopAfterCurrentChanged(true))))
        m.send(.endOfStream)
        actions = m.actions
        XCTAssertTrue(actions.contains(.emit(.playedToEnd(ids[0]))))
        XCTAssertTrue(actions.contains(.emit(.stopAfterCurrentChanged(false))), "one-shot")
        XCTAssertFalse(m.machine.stopsAfterCurrent)
        XCTAssertEqual(m.machine.state.intent, .stopped)
        XCTAssertEqual(m.machine.currentItem?.id, ids[1])
        XCTAssertFalse(engineCommands(actions).contains { if case .load = $0 { true } else { false } }, "b is not loaded")
        XCTAssertTrue(engineCommands(actions).contains(.release))
        m.machine.play()
        XCTAssertTrue(engineCommands(m.take()).contains { if case .load(b, _) = $0 { true } else { false } }, "Play plays b")
    }

    /// Turned on after about-to-finish took the next URI: the engine switches anyway, and the
    /// player stops at that boundary, on the next item.
    func testStopAfterCurrentSetTooLateStopsAtTheGaplessBoundary() throws {
        var (m, ids) = try playing([a, b])
        guard case .prepareNext(b, let next?) = armed else { return XCTFail("b was not armed: \(String(describing: armed))") }
        m.machine.setStopAfterCurrent(true)
        _ = m.take()
        m.machine.handle(.streamStarted(nil), of: next, at: m.now)
        let actions = m.take()
        XCTAssertTrue(actions.contains(.emit(.playedToEnd(ids[0]))))
        XCTAssertEqual(m.machine.currentItem?.id, ids[1])
        XCTAssertEqual(m.machine.state.intent, .stopped)
        XCTAssertTrue(engineCommands(actions).contains(.release))
        XCTAssertFalse(m.machine.stopsAfterCurrent)
    }

    /// Off again before the end: the same item is armed again, under the same generation (the
    /// engine may have taken it already).
    func testTurnedOffAgainTheNextItemIsArmedAgain() throws {
        var (m, _) = try playing([a, b])
        guard case .prepareNext(b, _) = armed else { return XCTFail("b was not armed: \(String(describing: armed))") }
        m.machine.setStopAfterCurrent(true)
        _ = m.take()
        m.machine.setStopAfterCurrent(false)
        XCTAssertEqual(engineCommands(m.take()), [armed!])
    }

    /// Next while it is on: it applies to the item current when one ends.
    func testNextKeepsItForTheNewCurrentItem() throws {
        var (m, ids) = try playing([a, b, c])
        m.machine.setStopAfterCurrent(true)
        try m.machine.next()
        _ = m.take()
        XCTAssertTrue(m.machine.stopsAfterCurrent)
        m.send(.asyncDone(EngineSnapshot(position: m.sample(.zero), duration: .seconds(60), isSeekable: true, loadedRanges: [])))
        XCTAssertFalse(m.actions.contains { if case .engine(.prepareNext(.some, _)) = $0 { true } else { false } }, "c is not armed")
        m.send(.endOfStream)
        XCTAssertEqual(m.machine.currentItem?.id, ids[2])
        XCTAssertEqual(m.machine.state.intent, .stopped)
    }

    /// Looping a track: it stops at the end of the track, which stays current.
    func testLoopingATrackStopsOnTheSameTrack() throws {
        var (m, ids) = try playing([a, b])
        m.machine.setLoopMode(.track)
        m.machine.setStopAfterCurrent(true)
        _ = m.take()
        m.send(.endOfStream)
        XCTAssertEqual(m.machine.currentItem?.id, ids[0])
        XCTAssertEqual(m.machine.state.intent, .stopped)
    }

    /// The last item: stopped there, as at any end of the queue, and off.
    func testAtTheEndOfTheQueueItStopsAndTurnsOff() throws {
        var (m, ids) = try playing([a])
        m.machine.setStopAfterCurrent(true)
        _ = m.take()
        m.send(.endOfStream)
        XCTAssertEqual(m.machine.currentItem?.id, ids[0])
        XCTAssertEqual(m.machine.state.intent, .stopped)
        XCTAssertFalse(m.machine.stopsAfterCurrent)
    }
}
