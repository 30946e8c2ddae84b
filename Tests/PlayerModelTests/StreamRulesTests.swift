import Dispatch
import PlayerModel
import TestSupport
import XCTest

/// The rules for network streams (issue 12) against a scripted engine.
final class StreamRulesTests: XCTestCase {
    var queue: DispatchQueue!
    var engine: ScriptedEngine!
    var player: Player!
    var events: EventRecorder!
    let radio = try! MediaURI("http://radio.example/stream")
    let file = MediaURI(fileURL: URL(fileURLWithPath: "/music/a.flac"))

    override func setUp() {
        queue = DispatchQueue(label: "test.player")
        engine = ScriptedEngine(queue: queue)
        player = Player(engine: engine, queue: queue)
        events = EventRecorder(player)
    }

    /// Plays `uri` as a live stream: no length, no seeking.
    func startLive(_ uri: MediaURI) throws -> ItemID {
        engine.duration = nil
        engine.isSeekable = false
        let id = try player.enqueue([uri])[0]
        player.play()
        engine.send(.live)
        engine.preroll()
        engine.send(.stateChanged(.playing, pending: nil))
        XCTAssertEqual(player.currentItem?.isLive, true)
        XCTAssertEqual(player.currentItem?.status, .readyToPlay)
        return id
    }

    /// A stretch of the stream that never came is told as a moment of the playing item, which
    /// plays on: no failure, no change of status or of what the pipeline is asked.
    func testAGapIsToldAndTheItemPlaysOn() throws {
        let id = try startLive(radio)
        engine.clearCalls()
        let before = events.count
        engine.send(.gap(at: .seconds(6), length: .seconds(2)))
        XCTAssertEqual(Array(events.events.dropFirst(before)), [.gapSkipped(id, at: .seconds(6), length: .seconds(2))])
        XCTAssertEqual(player.currentItem?.status, .readyToPlay)
        XCTAssertTrue(engine.calls.isEmpty, "\(engine.calls)")
    }

    func testALiveStreamRefusesARateOtherThanOne() throws {
        _ = try startLive(radio)
        engine.clearCalls()
        let before = events.count
        XCTAssertThrowsError(try player.setRate(1.5)) { error in
            XCTAssertEqual((error as? PlayerError)?.code, .rateNotSupported)
            XCTAssertTrue((error as? PlayerError)?.message.contains("live stream") == true, "\(error)")
        }
        XCTAssertEqual(player.state.rate, 1)
        XCTAssertEqual(Array(events.events.dropFirst(before)), [.rateChanged(1, .refused)])
        XCTAssertTrue(engine.calls.isEmpty, "nothing was asked of the pipeline: \(engine.calls)")
        // 1.0 itself is no change and no error
        XCTAssertNoThrow(try player.setRate(1))
    }

    func testAStreamThatCannotSeekBecomingCurrentTakesTheRateBackToOne() throws {
        try player.setRate(2)
        XCTAssertEqual(player.state.rate, 2)
        let before = events.count
        _ = try startLive(radio)
        XCTAssertEqual(player.state.rate, 1)
        XCTAssertTrue(events.events.dropFirst(before).contains(.rateChanged(1, .refused)))
        XCTAssertFalse(engine.calls.contains { if case .seek = $0 { true } else { false } },
                       "no rate seek on a stream that cannot seek: \(engine.calls)")
    }

    func testASeekableFileStillTakesARate() throws {
        _ = try player.enqueue([file])
        player.play()
        engine.preroll()
        XCTAssertNoThrow(try player.setRate(1.5))
        XCTAssertEqual(player.state.rate, 1.5)
    }

    /// A live playlist can seek only inside a window of at least the minimum; rate stays 1.0 on it.
    func testALiveStreamSeeksOnlyInAWideEnoughWindow() throws {
        engine.duration = nil
        engine.isSeekable = true  // hlsdemux says so for every live playlist
        for (window, seekable) in [(Duration.seconds(4), false), (PlayerMachine.minimumLiveWindow, true)] {
            engine.seekableRange = TimeRange(start: .seconds(30), end: .seconds(30) + window)
            player.clear()
            let id = try player.enqueue([radio])[0]
            player.play()
            engine.send(.live)
            engine.preroll()
            XCTAssertEqual(player.currentItem?.id, id)
            XCTAssertEqual(player.currentItem?.isLive, true)
            XCTAssertEqual(player.currentItem?.isSeekable, seekable, "a window of \(window)")
            engine.clearCalls()
            try player.seek(to: .seconds(35))
            XCTAssertEqual(engine.calls.contains { if case .seek = $0 { true } else { false } }, seekable, "\(engine.calls)")
            XCTAssertThrowsError(try player.setRate(1.5))
        }
    }

    /// A download that goes on after buffering reached 100% is told as it grows, once per change,
    /// with the buffering percent as it was; nothing is asked of the pipeline.
    func testMoreDownloadedIsAnnouncedOnceAndLeavesTheTransportAlone() throws {
        let http = try MediaURI("http://files.example/a.wav")
        engine.duration = .seconds(10)
        let id = try player.enqueue([http])[0]
        player.play()
        engine.preroll()
        engine.send(.stateChanged(.playing, pending: nil))
        engine.clearCalls()
        let before = events.count
        let half = [TimeRange(start: .zero, end: .seconds(5))]
        engine.send(.loaded(half))
        engine.send(.loaded(half))
        XCTAssertEqual(Array(events.events.dropFirst(before)), [.bufferingChanged(id, percent: 100, loadedRanges: half)])
        XCTAssertEqual(player.currentItem?.loadedRanges, half)
        XCTAssertEqual(player.state.timeControlStatus, .playing)
        XCTAssertTrue(engine.calls.isEmpty, "\(engine.calls)")
    }

    // a BUFFERING below 100 can come before the engine knows the stream is live; live streams
    // never buffer-pause, so that pause must not outlive the news
    func testABufferingPauseFromBeforeTheStreamWasKnownLiveEnds() throws {
        engine.duration = nil
        engine.isSeekable = false
        _ = try player.enqueue([radio])
        player.play()
        engine.send(.buffering(percent: 0))
        XCTAssertEqual(player.state.timeControlStatus, .waitingToPlay(.buffering))
        engine.clearCalls()
        engine.send(.live)
        engine.preroll()
        engine.send(.buffering(percent: 100))
        XCTAssertEqual(engine.calls.last { if case .setPlaying = $0 { true } else { false } }, .setPlaying(true))
        engine.send(.stateChanged(.playing, pending: nil))
        XCTAssertEqual(player.state.timeControlStatus, .playing)
    }

    // MARK: Reconnecting, on the machine itself (its timer is an action)

    /// The machine with a clock that moves only when the test says so.
    struct Machine {
        var machine: PlayerMachine
        var generation = Generation(0)
        var actions: [PlayerAction] = []
        /// The instant of the next input.
        var now = ContinuousClock.now

        init(_ policy: ReconnectPolicy) {
            var configuration = PlayerConfiguration()
            configuration.reconnect = policy
            machine = PlayerMachine(configuration: configuration)
        }

        /// Takes the actions, remembering the generation of the last load among them.
        mutating func take() -> [PlayerAction] {
            actions = machine.takeActions()
            for case .engine(.load(_, let loaded)) in actions { generation = loaded }
            return actions
        }

        mutating func send(_ event: EngineEvent) {
            machine.handle(event, of: generation, at: now)
            _ = take()
        }

        mutating func advance(by duration: Duration) { now += duration }

        /// `timer` fires now; returns the actions it left.
        @discardableResult
        mutating func fire(_ timer: PlayerTimer) -> [PlayerAction] {
            machine.timerFired(timer, now: now)
            return take()
        }

        /// A position sample taken now.
        func sample(_ position: Duration) -> PositionSample { PositionSample(position, at: now) }

        var failures: [ItemError] { actions.compactMap { if case .emit(.itemFailed(_, let error)) = $0 { error } else { nil } } }
        var delays: [Duration] { actions.compactMap { if case .startTimer(.reconnect, let delay) = $0 { delay } else { nil } } }
    }

    func playing(_ policy: ReconnectPolicy) throws -> Machine {
        var m = Machine(policy)
        _ = try m.machine.enqueue([radio], at: .end)
        m.machine.play()
        _ = m.take()
        m.send(.asyncDone(EngineSnapshot(position: m.sample(.seconds(3)), duration: .seconds(60), isSeekable: true, loadedRanges: [])))
        m.send(.stateChanged(.playing, pending: nil, position: m.sample(.seconds(3))))
        XCTAssertEqual(m.machine.state.timeControlStatus, .playing)
        return m
    }

    let dropped = ItemError(.network, "connection lost", isTransient: true)

    func testReconnectsWithADoublingBoundedDelayThenFails() throws {
        var m = try playing(ReconnectPolicy(attempts: 3, firstDelay: .seconds(1), maximumDelay: .seconds(3)))
        m.send(.failed(dropped))
        XCTAssertEqual(m.delays, [.seconds(1)])
        XCTAssertTrue(m.failures.isEmpty)
        XCTAssertEqual(m.machine.state.timeControlStatus, .waitingToPlay(.reconnecting))
        XCTAssertEqual(m.machine.state.intent, .playing)
        var expected: [Duration] = [.seconds(2), .seconds(3)]
        for _ in 0..<2 {
            XCTAssertTrue(m.fire(.reconnect).contains { if case .engine(.load) = $0 { true } else { false } })
            // while the server is down, even a refused connection is part of the same outage
            m.send(.failed(ItemError(.network, "connection refused")))
            XCTAssertEqual(m.delays, [expected.removeFirst()])
        }
        m.fire(.reconnect)
        m.send(.failed(dropped))
        XCTAssertEqual(m.failures, [dropped], "after the attempts the item fails")
        XCTAssertTrue(m.delays.isEmpty)
    }

    func testAReconnectResumesWhereItWas() throws {
        var m = try playing(ReconnectPolicy(attempts: 3))
        m.send(.failed(dropped))
        m.fire(.reconnect)
        m.send(.asyncDone(EngineSnapshot(position: m.sample(.zero), duration: .seconds(60), isSeekable: true, loadedRanges: [])))
        let seeks = m.actions.compactMap { if case .engine(.seek(.position(let at), _, _)) = $0 { at } else { nil } }
        XCTAssertEqual(seeks.count, 1)
        XCTAssertGreaterThanOrEqual(seeks.first ?? .zero, .seconds(3))
    }

    func testAnErrorThatWillNotGoAwayFailsAtOnce() throws {
        var m = try playing(ReconnectPolicy())
        let notFound = ItemError(.network, "HTTP 404 (Not Found)")
        m.send(.failed(notFound))
        XCTAssertEqual(m.failures, [notFound])
        XCTAssertTrue(m.delays.isEmpty)
    }

    func testStopCancelsTheReconnectTimer() throws {
        var m = try playing(ReconnectPolicy())
        m.send(.failed(dropped))
        XCTAssertEqual(m.delays.count, 1)
        m.machine.stop()
        XCTAssertTrue(m.take().contains(.cancelTimer(.reconnect)))
        XCTAssertEqual(m.machine.state.timeControlStatus, .paused)
        XCTAssertFalse(m.fire(.reconnect).contains { if case .engine(.load) = $0 { true } else { false } }, "a late timer loads nothing")
    }

    func testPolicyFromTheEnvironment() throws {
        let policy = try ReconnectPolicy.fromEnvironment(["TONEARM_RECONNECT_ATTEMPTS": "2", "TONEARM_RECONNECT_DELAY": "0.25",
                                                          "TONEARM_RECONNECT_MAX_DELAY": "4"])
        XCTAssertEqual(policy.attempts, 2)
        XCTAssertEqual(policy.delay(before: 1), .milliseconds(250))
        XCTAssertEqual(policy.delay(before: 5), .seconds(4))
        XCTAssertThrowsError(try ReconnectPolicy.fromEnvironment(["TONEARM_RECONNECT_DELAY": "soon"])) { error in
            XCTAssertTrue("\(error)".contains("TONEARM_RECONNECT_DELAY"), "\(error)")
        }
    }

    func testBufferingThatMakesNoProgressCountsAsALostConnection() throws {
        var policy = ReconnectPolicy(attempts: 2)
        policy.stallLimit = .seconds(30)
        var m = try playing(policy)
        m.send(.buffering(percent: 10, loadedRanges: []))
        XCTAssertTrue(m.actions.contains(.startTimer(.bufferingStall, after: .seconds(30))), "\(m.actions)")
        // progress since the timer started: it waits on for what is left of the limit
        m.send(.buffering(percent: 20, loadedRanges: []))
        XCTAssertFalse(m.actions.contains { if case .startTimer(.bufferingStall, _) = $0 { true } else { false } }, "one timer, not one per message")
        m.advance(by: .seconds(20))
        let rearmed = m.fire(.bufferingStall).compactMap { if case .startTimer(.bufferingStall, let after) = $0 { after } else { nil } }
        XCTAssertEqual(rearmed.count, 1)
        XCTAssertEqual(rearmed, [.seconds(10)], "what is left of the limit since the progress")
        // no progress for the whole limit: a lost connection, which reconnects
        m.advance(by: .seconds(10))
        m.fire(.bufferingStall)
        XCTAssertEqual(m.machine.state.timeControlStatus, .waitingToPlay(.reconnecting))
        XCTAssertTrue(m.failures.isEmpty)
    }

    /// Fails `m`'s playing item with a dropped connection, lets the reconnect delay pass, and
    /// prerolls the attempt; returns the delay it waited.
    func reconnectAfterADrop(_ m: inout Machine) throws -> Duration {
        m.send(.failed(dropped))
        let delay = try XCTUnwrap(m.delays.first, "no reconnect after \(m.actions)")
        m.advance(by: delay)
        XCTAssertTrue(m.fire(.reconnect).contains { if case .engine(.load) = $0 { true } else { false } })
        m.send(.asyncDone(EngineSnapshot(position: m.sample(.seconds(3)), duration: .seconds(60), isSeekable: true, loadedRanges: [])))
        m.send(.stateChanged(.playing, pending: nil, position: m.sample(.seconds(3))))
        XCTAssertEqual(m.machine.state.timeControlStatus, .playing)
        return delay
    }

    /// A drop soon after a reconnect played is the same outage and spends the same budget; one
    /// after `steadyAfter` of playing is a new outage, with the whole budget and the first delay.
    func testAReconnectThatPlaysAMinuteStartsTheCountAgain() throws {
        let policy = ReconnectPolicy(attempts: 2, firstDelay: .seconds(1), maximumDelay: .seconds(8))
        for (played, budgetLeft) in [(policy.steadyAfter - .seconds(1), false), (policy.steadyAfter, true)] {
            var m = try playing(policy)
            XCTAssertEqual(try reconnectAfterADrop(&m), .seconds(1))
            XCTAssertEqual(try reconnectAfterADrop(&m), .seconds(2), "the same outage: the delay doubles")
            m.advance(by: played)
            m.send(.failed(dropped))
            if budgetLeft {
                XCTAssertEqual(m.delays, [.seconds(1)], "after \(played) of playing: a new outage")
                XCTAssertTrue(m.failures.isEmpty)
            } else {
                XCTAssertEqual(m.failures, [dropped], "after \(played): the same outage, out of attempts")
                XCTAssertTrue(m.delays.isEmpty)
            }
        }
    }

    /// The stall limit counts from the last move of the percent: a pause that keeps moving waits
    /// on, each timer asking for what is left; the same percent again is no progress.
    func testTheStallLimitCountsFromTheLastProgress() throws {
        var policy = ReconnectPolicy(attempts: 2)
        policy.stallLimit = .seconds(30)
        var m = try playing(policy)
        func rearmed(_ actions: [PlayerAction]) -> [Duration] {
            actions.compactMap { if case .startTimer(.bufferingStall, let after) = $0 { after } else { nil } }
        }
        m.send(.buffering(percent: 10, loadedRanges: []))
        XCTAssertEqual(rearmed(m.actions), [.seconds(30)])
        m.advance(by: .seconds(25))
        m.send(.buffering(percent: 12, loadedRanges: []))
        m.advance(by: .seconds(5))
        XCTAssertEqual(rearmed(m.fire(.bufferingStall)), [.seconds(25)], "30 s from the move at 25 s")
        m.advance(by: .seconds(20))
        m.send(.buffering(percent: 12, loadedRanges: []))  // the same percent: no progress
        m.advance(by: .seconds(5))
        XCTAssertEqual(m.fire(.bufferingStall).filter { if case .emit(.itemFailed) = $0 { true } else { false } }, [])
        XCTAssertEqual(m.machine.state.timeControlStatus, .waitingToPlay(.reconnecting), "30 s without progress: a lost connection")
        XCTAssertEqual(m.delays, [.seconds(1)])
    }

    /// A buffering pause while the user paused is not a stall: its timer, when it fires, does nothing.
    func testAStallTimerFiringWhilePausedDoesNothing() throws {
        var m = try playing(ReconnectPolicy())
        m.send(.buffering(percent: 10, loadedRanges: []))
        m.machine.pause()
        _ = m.take()
        m.advance(by: .seconds(60))
        XCTAssertEqual(m.fire(.bufferingStall), [])
        XCTAssertEqual(m.machine.state.timeControlStatus, .paused)
    }

    /// Play while a reconnect waits for its timer (the user paused meanwhile) loads at once, as
    /// that reconnect's attempt: its timer is cancelled, and the wait still says reconnecting.
    func testPlayDuringAReconnectWaitLoadsAtOnce() throws {
        var m = try playing(ReconnectPolicy())
        m.send(.failed(dropped))
        m.machine.pause()
        _ = m.take()
        m.machine.play()
        let actions = m.take()
        XCTAssertTrue(actions.contains(.cancelTimer(.reconnect)), "\(actions)")
        XCTAssertTrue(actions.contains { if case .engine(.load) = $0 { true } else { false } }, "\(actions)")
        XCTAssertEqual(m.machine.state.timeControlStatus, .waitingToPlay(.reconnecting))
        XCTAssertEqual(m.fire(.reconnect).filter { if case .engine(.load) = $0 { true } else { false } }, [],
                       "a late timer loads nothing more")
    }

    func testBufferingThatReachesAHundredStopsTheStallTimer() throws {
        var m = try playing(ReconnectPolicy())
        m.send(.buffering(percent: 10, loadedRanges: []))
        m.send(.buffering(percent: 100, loadedRanges: []))
        XCTAssertTrue(m.actions.contains(.cancelTimer(.bufferingStall)), "\(m.actions)")
    }
}
