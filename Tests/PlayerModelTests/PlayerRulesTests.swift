import Dispatch
import PlayerModel
import TestSupport
import XCTest

/// The player's rules (design brief, rules 1-7) against a scripted engine.
final class PlayerRulesTests: XCTestCase {
    var queue: DispatchQueue!
    var engine: ScriptedEngine!
    var player: Player!
    var events: EventRecorder!
    let a = MediaURI(fileURL: URL(fileURLWithPath: "/music/a.flac"))
    let b = MediaURI(fileURL: URL(fileURLWithPath: "/music/b.flac"))
    let c = MediaURI(fileURL: URL(fileURLWithPath: "/music/c.flac"))

    override func setUp() {
        makePlayer(PlayerConfiguration())
    }

    func makePlayer(_ configuration: PlayerConfiguration) {
        queue = DispatchQueue(label: "test.player")
        engine = ScriptedEngine(queue: queue)
        player = Player(engine: engine, configuration: configuration, queue: queue)
        events = EventRecorder(player)
    }

    /// Plays the first of `uris` up to PLAYING; returns the ids.
    @discardableResult
    func startPlaying(_ uris: [MediaURI]) throws -> [ItemID] {
        let ids = try player.enqueue(uris)
        player.play()
        engine.preroll()
        engine.send(.stateChanged(.playing, pending: nil))
        XCTAssertEqual(player.state.timeControlStatus, .playing)
        return ids
    }

    func loads() -> [MediaURI] {
        engine.calls.compactMap { if case .load(let uri, _) = $0 { uri } else { nil } }
    }

    func seeks() -> [Duration] {
        engine.calls.compactMap { if case .seek(let position, _, _) = $0 { position } else { nil } }
    }

    // Rule 1: subscribe, then act.
    /// The player reads the time from the clock it is given: with a test's, the position moves
    /// exactly as far as the test moves the clock, and only while the pipeline plays.
    func testThePositionFollowsTheClockThePlayerIsGiven() throws {
        let clock = TestClock()
        queue = DispatchQueue(label: "test.player")
        engine = ScriptedEngine(queue: queue)
        engine.clock = clock.read
        player = Player(engine: engine, queue: queue, clock: clock.read)
        events = EventRecorder(player)
        try startPlaying([a])
        XCTAssertEqual(player.position, .zero)
        clock.advance(by: .milliseconds(1500))
        XCTAssertEqual(player.position, .milliseconds(1500))
        player.pause()
        engine.position = .milliseconds(1500)
        engine.send(.stateChanged(.paused, pending: nil))
        clock.advance(by: .seconds(60))
        XCTAssertEqual(player.position, .milliseconds(1500), "paused, the position holds")
    }

    func testSubscriptionStartsWithCurrentValues() throws {
        let ids = try player.enqueue([a, b])
        let late = EventRecorder(player)
        let first = late.events
        XCTAssertTrue(first.contains(.queueChanged(.replaced(ids))))
        XCTAssertTrue(first.contains { $0.currentItem??.id == ids[0] })
        XCTAssertTrue(first.contains(.timeControlStatusChanged(.paused)))
        XCTAssertTrue(first.contains(.intentChanged(.stopped)))
        XCTAssertTrue(first.contains(.itemStatusChanged(ids[0], .unknown)))
        XCTAssertTrue(first.contains(.rateChanged(1, .initial)))
    }

    func testTransportReadsWhatStateSays() throws {
        // MPRIS reads PlaybackStatus and TimeControlStatus from `transport`, not from `state`
        func check(_ line: UInt = #line) {
            let (state, transport) = (player.state, player.transport)
            XCTAssertEqual(transport.intent, state.intent, line: line)
            XCTAssertEqual(transport.timeControlStatus, state.timeControlStatus, line: line)
            XCTAssertEqual(transport.hasCurrentItem, state.current != nil, line: line)
        }
        check()
        try startPlaying([a, b])
        check()
        player.togglePlayPause()
        check()
        XCTAssertEqual(player.transport.intent, .paused)
        player.togglePlayPause()
        check()
        player.stop()
        check()
        player.clear()
        check()
        XCTAssertFalse(player.transport.hasCurrentItem)
    }

    func testObserversHearEventsInTheOrderTheySubscribedAndNotOnceGone() throws {
        var heard: [String] = []
        let first = player.subscribe { _ in heard.append("first") }
        let second = player.subscribe { _ in heard.append("second") }
        let third = player.subscribe { _ in heard.append("third") }
        heard = []
        try player.enqueue([a])
        XCTAssertEqual(Array(heard.prefix(3)), ["first", "second", "third"])
        second.cancel()
        heard = []
        player.play()
        XCTAssertFalse(heard.isEmpty)
        XCTAssertFalse(heard.contains("second"))
        XCTAssertEqual(Array(heard.prefix(2)), ["first", "third"])
        _ = (first, second, third)
    }

    // MPRIS Play: "If there is no track to play, this has no effect."
    func testPlayWithNoItemHasNoEffect() throws {
        player.play()
        XCTAssertEqual(player.state.timeControlStatus, .paused)
        XCTAssertEqual(player.state.intent, .stopped)
        try player.enqueue([a])
        XCTAssertTrue(loads().isEmpty, "a later AddTrack does not start playing")
        XCTAssertEqual(player.state.intent, .stopped)
    }

    func testRemovingTheLastItemWhilePlayingWaitsForOne() throws {
        let id = try startPlaying([a])[0]
        try player.remove([id])
        XCTAssertEqual(player.state.timeControlStatus, .waitingToPlay(.noItem))
        try player.enqueue([b])
        XCTAssertEqual(loads(), [a, b])
    }

    func testStatusTransitionsThroughPrerollToPlaying() throws {
        let id = try player.enqueue([a])[0]
        XCTAssertTrue(loads().isEmpty, "enqueueing on a stopped player loads nothing")
        player.play()
        XCTAssertEqual(loads(), [a])
        XCTAssertEqual(player.state.timeControlStatus, .waitingToPlay(.evaluatingBuffering))
        engine.preroll()
        XCTAssertEqual(player.currentItem?.status, .readyToPlay)
        XCTAssertEqual(engine.calls.last, .setPlaying(true))
        engine.send(.stateChanged(.playing, pending: nil))
        XCTAssertEqual(player.state.timeControlStatus, .playing)
        player.pause()
        XCTAssertEqual(engine.calls.last, .setPlaying(false))
        XCTAssertEqual(player.state.timeControlStatus, .paused)
        XCTAssertEqual(player.state.intent, .paused)
        XCTAssertEqual(events.events.compactMap { $0.itemStatus?.1 }, [.unknown, .readyToPlay])
        XCTAssertEqual(player.currentItem?.id, id)
    }

    /// A load that is to play asks the engine to go on to PLAYING at its preroll; what must come
    /// before playing (a seek asked meanwhile, a pause, a rate, a next item to arm for a gapless
    /// switch) takes that back, and the player asks for PLAYING itself once prerolled, as before.
    func testALoadThatIsToPlayAsksTheEngineToPlayAfterItsPreroll() throws {
        func asked() -> [Bool] { engine.calls.compactMap { if case .playAfterPreroll(let play) = $0 { play } else { nil } } }
        try player.enqueue([a])
        player.play()
        XCTAssertEqual(asked(), [true])
        engine.preroll()
        XCTAssertEqual(engine.calls.last, .setPlaying(true))
        XCTAssertEqual(asked(), [true], "a preroll ends it: nothing to take back")

        // a seek asked before the preroll runs first: no PLAYING before it
        try player.enqueue([b])
        try player.next()
        XCTAssertEqual(loads(), [a, b])
        XCTAssertEqual(asked(), [true, true])
        try player.seek(to: .seconds(3))
        XCTAssertEqual(asked(), [true, true, false])
        engine.preroll()
        XCTAssertEqual(seeks(), [.seconds(3)])
        XCTAssertEqual(engine.calls.last, .setPlaying(true))

        // a pause while loading says PAUSED, which ends it in the engine too
        engine.clearCalls()
        player.stop()
        player.play()
        player.pause()
        XCTAssertEqual(engine.calls.filter { if case .load = $0 { false } else { true } }.suffix(2),
                       [.playAfterPreroll(true), .setPlaying(false)])
        engine.preroll()
        XCTAssertFalse(engine.calls.contains(.setPlaying(true)))

        // an item after the current one is armed for a gapless switch only once the current one
        // prerolled (prepareNext): playing before then could reach about-to-finish unarmed
        engine.clearCalls()
        player.play()
        player.previous()
        XCTAssertEqual(loads(), [a])
        XCTAssertEqual(asked(), [])
        engine.preroll()
        XCTAssertTrue(engine.calls.contains(.setPlaying(true)))

        // loaded paused from a stop: nothing asked
        player.stop()
        engine.clearCalls()
        player.pause()
        XCTAssertEqual(loads(), [a])
        XCTAssertEqual(asked(), [])
    }

    // Rule 3: stale messages die.
    func testMessagesOfAPreviousLoadAreIgnored() throws {
        let ids = try startPlaying([a, b])
        let old = engine.generation!
        try player.jump(to: ids[1])
        XCTAssertEqual(loads(), [a, b])
        var tags = Metadata()
        tags.title = "Title of A"
        engine.send(.tags(tags), generation: old)
        engine.send(.endOfStream, generation: old)
        engine.send(.failed(ItemError(.decode, "late error of A")), generation: old)
        XCTAssertNil(player.currentItem?.metadata.title)
        XCTAssertEqual(player.currentItem?.id, ids[1])
        XCTAssertEqual(player.currentItem?.status, .unknown)
        XCTAssertNil(events.events.first { $0.playedToEnd != nil || $0.failure != nil })
    }

    // Rule 4: intent apart from the pipeline.
    func testBufferingPausesAndResumesOnlyWhenPlayingIsWanted() throws {
        let id = try startPlaying([a])[0]
        engine.clearCalls()
        engine.send(.buffering(percent: 40))
        XCTAssertEqual(engine.calls, [.setPlaying(false)])
        XCTAssertEqual(player.state.timeControlStatus, .waitingToPlay(.buffering))
        XCTAssertEqual(player.state.intent, .playing)
        XCTAssertEqual(player.currentItem?.bufferingPercent, 40)
        engine.send(.stateChanged(.paused, pending: nil))
        engine.send(.buffering(percent: 100))
        XCTAssertEqual(engine.calls.last, .setPlaying(true))
        engine.send(.stateChanged(.playing, pending: nil))
        XCTAssertEqual(player.state.timeControlStatus, .playing)
        // paused by the user: reaching 100% does not resume
        player.pause()
        engine.clearCalls()
        engine.send(.buffering(percent: 10))
        engine.send(.buffering(percent: 100))
        XCTAssertFalse(engine.calls.contains(.setPlaying(true)))
        XCTAssertTrue(events.events.contains(.bufferingChanged(id, percent: 40, loadedRanges: [TimeRange(start: .zero, end: .seconds(10))])))
    }

    func testLiveStreamsNeverBufferPause() throws {
        try player.enqueue([a])
        player.play()
        engine.send(.live)
        engine.send(.streamStarted)
        engine.send(.stateChanged(.playing, pending: nil))
        XCTAssertEqual(player.currentItem?.isLive, true)
        XCTAssertEqual(player.currentItem?.status, .readyToPlay)
        engine.clearCalls()
        engine.send(.buffering(percent: 20))
        XCTAssertFalse(engine.calls.contains(.setPlaying(false)))
        XCTAssertEqual(player.state.timeControlStatus, .playing)
    }

    // Rule 5: seeks coalesce; a seek while paused stays paused.
    func testSeeksCoalesceToTheNewest() throws {
        try startPlaying([a])
        engine.clearCalls()
        try player.seek(to: .seconds(1))
        try player.seek(to: .seconds(2))
        try player.seek(to: .seconds(3))
        try player.seek(to: .seconds(4))
        XCTAssertEqual(seeks(), [.seconds(1)])
        let before = events.count
        engine.position = .seconds(1)
        engine.send(.asyncDone)
        XCTAssertEqual(seeks(), [.seconds(1), .seconds(4)], "only the newest pending seek runs")
        engine.position = .seconds(4)
        engine.send(.asyncDone)
        XCTAssertEqual(seeks(), [.seconds(1), .seconds(4)])
        XCTAssertEqual(events.events[before...].compactMap { $0.seekedPosition }, [.seconds(4)])
    }

    func testASeekDoneHandedOverEndsTheSeekInFlightOnly() throws {
        try startPlaying([a])
        engine.clearCalls()
        try player.seek(to: .seconds(1))
        try player.seek(to: .seconds(4))
        engine.send(.stateChanged(.paused, pending: .paused))  // the flushing seek's lost state
        let before = events.count
        engine.send(.seekDone(.seconds(1)))
        XCTAssertEqual(seeks(), [.seconds(1), .seconds(4)], "the pending seek runs once the first is done")
        engine.send(.seekDone(.seconds(4)))
        XCTAssertEqual(player.position, .seconds(4), "paused in the seek's preroll: the position is its target")
        // an ASYNC_DONE that came first through the bus already ended the seek: the handed-over one
        // that follows changes nothing
        engine.position = .seconds(4)
        engine.send(.asyncDone)
        engine.send(.seekDone(.seconds(4)))
        XCTAssertEqual(seeks(), [.seconds(1), .seconds(4)])
        XCTAssertEqual(events.events[before...].compactMap { $0.seekedPosition }, [.seconds(4)])
    }

    func testAFileSeekWhilePlayingStaysPlayingAndAStreamSeekWaits() throws {
        try startPlaying([a])
        var before = events.count
        try player.seek(to: .seconds(3))
        engine.send(.stateChanged(.paused, pending: .paused))  // the flushing seek's lost state
        engine.send(.seekDone(.seconds(3)))
        engine.send(.stateChanged(.paused, pending: .playing))
        engine.send(.stateChanged(.playing, pending: nil))
        XCTAssertEqual(events.events[before...].compactMap { $0.timeControl }, [], "a local file's seek is no wait")
        XCTAssertEqual(player.state.timeControlStatus, .playing)

        makePlayer(PlayerConfiguration())
        try startPlaying([try MediaURI("http://example.org/song.mp3")])
        before = events.count
        try player.seek(to: .seconds(3))
        engine.send(.stateChanged(.paused, pending: .paused))
        XCTAssertEqual(player.state.timeControlStatus, .waitingToPlay(.evaluatingBuffering), "a stream's seek waits for the network")
        engine.send(.seekDone(.seconds(3)))
        engine.send(.stateChanged(.paused, pending: .playing))
        XCTAssertEqual(events.events[before...].compactMap { $0.timeControl }, [.waitingToPlay(.evaluatingBuffering), .playing])
    }

    func testSeekBeforePrerollRunsAfterIt() throws {
        try player.enqueue([a])
        player.play()
        try player.seek(to: .seconds(5))
        XCTAssertTrue(seeks().isEmpty)
        XCTAssertEqual(player.position, .zero, "before the length is known, a pending seek does not show")
        engine.preroll()
        XCTAssertEqual(seeks(), [.seconds(5)])
    }

    func testSeekWhilePausedStaysPaused() throws {
        try startPlaying([a])
        player.pause()
        engine.clearCalls()
        try player.seek(to: .seconds(2))
        engine.send(.asyncDone)
        XCTAssertFalse(engine.calls.contains(.setPlaying(true)))
        XCTAssertEqual(player.state.intent, .paused)
        XCTAssertEqual(player.state.timeControlStatus, .paused)
    }

    func testExactAndToleratedSeekModes() throws {
        try startPlaying([a])
        engine.clearCalls()
        try player.seek(to: .seconds(2))
        engine.send(.asyncDone)
        try player.seek(to: .seconds(3), toleranceBefore: .seconds(1), toleranceAfter: .zero)
        let modes = engine.calls.compactMap { if case .seek(_, let mode, _) = $0 { mode } else { nil } }
        XCTAssertEqual(modes, [.exact, .fast(before: .seconds(1), after: .zero)])
    }

    func testSeekPastTheEndGoesToTheNextItemAndBeforeZeroClamps() throws {
        let ids = try startPlaying([a, b])
        try player.seek(to: .seconds(-5))
        XCTAssertEqual(seeks(), [.zero])
        engine.send(.asyncDone)
        try player.seek(to: .seconds(11))
        XCTAssertEqual(player.currentItem?.id, ids[1])
        XCTAssertEqual(loads(), [a, b])
    }

    // Rule 6: stop releases.
    func testStopReleasesAndPlayRestarts() throws {
        try startPlaying([a])
        engine.position = .seconds(4)
        player.stop()
        XCTAssertEqual(engine.calls.last, .stop)
        XCTAssertEqual(player.position, .zero)
        XCTAssertEqual(player.state.intent, .stopped)
        XCTAssertEqual(player.state.timeControlStatus, .paused)
        player.play()
        XCTAssertEqual(loads(), [a, a])
    }

    func testEndOfStreamMovesOnAndStopsAtTheEndOfTheQueue() throws {
        let ids = try startPlaying([a, b])
        engine.send(.endOfStream)
        XCTAssertEqual(events.events.compactMap { $0.playedToEnd }, [ids[0]])
        XCTAssertEqual(player.currentItem?.id, ids[1])
        engine.preroll()
        engine.send(.stateChanged(.playing, pending: nil))
        engine.send(.endOfStream)
        XCTAssertEqual(events.events.compactMap { $0.playedToEnd }, [ids[0], ids[1]])
        XCTAssertEqual(player.state.intent, .stopped)
        XCTAssertEqual(player.currentItem?.id, ids[1])
        XCTAssertEqual(engine.calls.last, .stop)
    }

    func testGaplessSwitchHappensAtStreamStart() throws {
        let ids = try startPlaying([a, b, c])
        guard case .prepareNext(b, let next?) = engine.calls.last(where: { if case .prepareNext = $0 { true } else { false } }) else {
            return XCTFail("b was not prepared: \(engine.calls)")
        }
        // tags before the boundary belong to the old item (mopidy 1305)
        var tags = Metadata()
        tags.title = "late A tag"
        engine.send(.tags(tags))
        XCTAssertEqual(player.currentItem?.id, ids[0])
        engine.send(.streamStarted, generation: next)
        XCTAssertEqual(player.currentItem?.id, ids[1])
        XCTAssertEqual(player.currentItem?.status, .readyToPlay)
        XCTAssertNil(player.currentItem?.metadata.title)
        XCTAssertEqual(events.events.compactMap { $0.playedToEnd }, [ids[0]])
        XCTAssertEqual(loads(), [a], "no reload at a gapless boundary")
        XCTAssertEqual(engine.calls.last, .prepareNext(c, engine.nextGeneration))
        tags.title = "B"
        engine.send(.tags(tags), generation: next)
        XCTAssertEqual(player.currentItem?.metadata.title, "B")
    }

    func testLoopTrackReplaysAndReportsTheJump() throws {
        let ids = try startPlaying([a, b])
        player.setLoopMode(.track)
        XCTAssertEqual(engine.calls.last, .prepareNext(a, engine.nextGeneration))
        engine.send(.streamStarted, generation: engine.nextGeneration)
        XCTAssertEqual(player.currentItem?.id, ids[0])
        XCTAssertEqual(events.events.compactMap { $0.seekedPosition }, [.zero])
    }

    func testLoopQueueWraps() throws {
        let ids = try startPlaying([a, b])
        player.setLoopMode(.queue)
        try player.next()
        XCTAssertEqual(player.currentItem?.id, ids[1])
        try player.next()
        XCTAssertEqual(player.currentItem?.id, ids[0])
        XCTAssertTrue(player.state.canGoNext)
        XCTAssertTrue(player.state.canGoPrevious)
    }

    func testNextAndPreviousKeepAStoppedOrPausedState() throws {
        let ids = try player.enqueue([a, b])
        try player.next()
        XCTAssertEqual(player.currentItem?.id, ids[1])
        XCTAssertTrue(loads().isEmpty, "a stopped player stays stopped")
        player.pause()
        XCTAssertEqual(loads(), [b])
        player.previous()
        XCTAssertEqual(player.currentItem?.id, ids[0])
        XCTAssertEqual(loads(), [b, a])
        XCTAssertEqual(player.state.intent, .paused)
        // at the first item, Previous starts it again: paused, its seek to 0 runs after the preroll
        engine.position = .seconds(5)
        player.previous()
        XCTAssertEqual(player.currentItem?.id, ids[0])
        XCTAssertEqual(loads(), [b, a])
        XCTAssertTrue(seeks().isEmpty)
        engine.preroll()
        XCTAssertEqual(seeks(), [.zero])
        XCTAssertEqual(player.state.intent, .paused)
    }

    func testFailureMovesOnUnlessConfiguredNotTo() throws {
        let ids = try startPlaying([a, b])
        engine.send(.failed(ItemError(.decode, "cannot decode a.flac")))
        XCTAssertEqual(events.events.compactMap { $0.failure?.0 }, [ids[0]])
        XCTAssertEqual(player.item(ids[0])?.error?.kind, .decode)
        XCTAssertEqual(player.currentItem?.id, ids[1])
        XCTAssertEqual(loads(), [a, b])

        var configuration = PlayerConfiguration()
        configuration.advanceOnFailure = false
        makePlayer(configuration)
        let again = try startPlaying([a, b])
        engine.send(.failed(ItemError(.decode, "cannot decode a.flac")))
        XCTAssertEqual(player.currentItem?.id, again[0])
        XCTAssertEqual(loads(), [a])
        XCTAssertEqual(player.state.timeControlStatus, .waitingToPlay(.evaluatingBuffering))
    }

    func testCheckFailureFailsWithoutLoading() throws {
        engine.failingChecks[a] = ItemError(.notFound, "no such file: /music/a.flac")
        let ids = try player.enqueue([a, b])
        player.play()
        engine.settle()
        XCTAssertEqual(player.item(ids[0])?.error, ItemError(.notFound, "no such file: /music/a.flac"))
        XCTAssertEqual(loads(), [b])
    }

    func testRetryHasABudget() throws {
        var configuration = PlayerConfiguration()
        configuration.maximumRetries = 2
        configuration.advanceOnFailure = false
        makePlayer(configuration)
        let id = try startPlaying([a])[0]
        XCTAssertThrowsError(try player.retry()) { XCTAssertEqual(($0 as? PlayerError)?.code, .nothingToRetry) }
        for _ in 0..<2 {
            engine.send(.failed(ItemError(.network, "host unreachable")))
            try player.retry()
            XCTAssertEqual(player.item(id)?.status, .unknown)
        }
        engine.send(.failed(ItemError(.network, "host unreachable")))
        XCTAssertThrowsError(try player.retry()) { XCTAssertEqual(($0 as? PlayerError)?.code, .retryBudgetExhausted) }
        XCTAssertEqual(loads(), [a, a, a])
    }

    func testRateIsRangedAndReportsItsReason() throws {
        try startPlaying([a])
        engine.clearCalls()
        try player.setRate(2)
        XCTAssertEqual(engine.calls.compactMap { if case .seek(_, _, let rate) = $0 { rate } else { nil } }, [2])
        XCTAssertThrowsError(try player.setRate(8))
        XCTAssertThrowsError(try player.setRate(0))
        let rates = events.events.compactMap { if case .rateChanged(let rate, let reason) = $0 { "\(rate) \(reason)" } else { nil } }
        XCTAssertEqual(rates, ["1.0 initial", "2.0 client", "2.0 refused", "2.0 refused"])
        XCTAssertEqual(player.state.rate, 2)
    }

    func testQueueEditingKeepsIdsStable() throws {
        let ids = try startPlaying([a, b])
        let inserted = try player.enqueue([c], after: ids[0])
        XCTAssertEqual(player.items.map(\.id), [ids[0], inserted[0], ids[1]])
        try player.move(ids[1], after: nil)
        XCTAssertEqual(player.items.map(\.id), [ids[1], ids[0], inserted[0]])
        try player.remove([ids[0]])
        XCTAssertEqual(player.currentItem?.id, inserted[0], "removing the current item moves on")
        XCTAssertEqual(loads(), [a, c])
        XCTAssertThrowsError(try player.remove([ids[0]])) { XCTAssertEqual(($0 as? PlayerError)?.code, .noSuchItem) }
        XCTAssertThrowsError(try player.jump(to: ItemID(999)))
        player.clear()
        XCTAssertNil(player.currentItem)
        XCTAssertTrue(player.items.isEmpty)
        XCTAssertEqual(engine.calls.last, .stop)
    }

    func testShuffleKeepsEveryItemOnce() throws {
        let uris = (0..<20).map { MediaURI(fileURL: URL(fileURLWithPath: "/music/\($0).flac")) }
        let ids = try player.enqueue(uris)
        player.setShuffle(true)
        var seen = [player.currentItem!.id]
        for _ in 1..<20 {
            try player.next()
            seen.append(player.currentItem!.id)
        }
        XCTAssertEqual(Set(seen), Set(ids))
        XCTAssertEqual(seen.count, 20)
        XCTAssertFalse(player.state.canGoNext)
    }

    func testVolumeIsClampedAndMuteIsApart() throws {
        player.setVolume(1.5)
        XCTAssertEqual(player.state.volume, 1)
        player.setVolume(0.25)
        player.setMuted(true)
        XCTAssertEqual(player.state.volume, 0.25)
        XCTAssertTrue(player.state.isMuted)
        XCTAssertEqual(engine.calls, [.volume(0.25), .muted(true)])
    }

    func testInvalidURIsAreRefusedWithASpecificError() {
        XCTAssertThrowsError(try MediaURI("ftp://example.org/a.mp3")) { XCTAssertEqual(($0 as? ItemError)?.kind, .unsupportedScheme) }
        XCTAssertThrowsError(try MediaURI("http:///nohost")) { XCTAssertEqual(($0 as? ItemError)?.kind, .invalidURI) }
        XCTAssertThrowsError(try MediaURI("  ")) { XCTAssertEqual(($0 as? ItemError)?.kind, .invalidURI) }
        XCTAssertThrowsError(try MediaURI("file:relative.ogg")) { XCTAssertEqual(($0 as? ItemError)?.kind, .invalidURI) }
        XCTAssertThrowsError(try MediaURI("file:///tmp/%00.ogg")) { XCTAssertEqual(($0 as? ItemError)?.kind, .invalidURI) }
        XCTAssertEqual(try MediaURI("file:///a/b%FF%FEc.wav").pathBytes, Array("/a/b".utf8) + [0xFF, 0xFE] + Array("c.wav".utf8))
        XCTAssertEqual(try MediaURI("file://localhost/a%20b").pathBytes, Array("/a b".utf8))
        XCTAssertEqual(try MediaURI("/a b/c.mp3").string, "file:///a%20b/c.mp3")
        XCTAssertEqual(try MediaURI("x.mp3", relativeTo: "/music").string, "file:///music/x.mp3")
        XCTAssertEqual(try MediaURI("https://example.org/live.m3u8").string, "https://example.org/live.m3u8")
    }

    func testInterruptionsPauseWithTheirReasonAndResumeOnlyThemselves() throws {
        try startPlaying([a])
        engine.send(.requestState(.paused))
        XCTAssertEqual(player.state.intent, .paused)
        engine.send(.requestState(.playing))
        XCTAssertEqual(player.state.intent, .playing)
        player.interrupt(because: .systemSleep)
        player.pause()  // the user paused meanwhile: waking up does not play
        player.resume(because: .systemSleep)
        XCTAssertEqual(player.state.intent, .paused)
        let reasons = events.events.compactMap { if case .rateChanged(let rate, let reason) = $0 { "\(rate) \(reason)" } else { nil } }
        XCTAssertEqual(reasons, ["1.0 initial", "0.0 soundServer", "1.0 soundServer", "0.0 systemSleep"])
    }
}
