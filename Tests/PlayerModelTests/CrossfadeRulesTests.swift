import PlayerModel
import XCTest

/// The crossfade's rules on the machine with a hand clock: when it is prepared and started (the
/// model decides from the position and the item's length), which items crossfade, and what the
/// user's actions during it do.
final class CrossfadeRulesTests: XCTestCase {
    typealias Machine = StreamRulesTests.Machine
    let a = MediaURI(fileURL: URL(fileURLWithPath: "/music/a.flac"))
    let b = MediaURI(fileURL: URL(fileURLWithPath: "/music/b.flac"))
    let c = MediaURI(fileURL: URL(fileURLWithPath: "/music/c.flac"))

    /// What the preroll in `playing` asked of the engine.
    var atPreroll: [EngineCommand] = []

    /// Plays `uris` (each 60 s long) from the first, prerolled and PLAYING, with a crossfade of
    /// `seconds` set before.
    func playing(_ uris: [MediaURI], crossfade seconds: Double, albums: Bool = false,
                 tags: [Metadata] = []) throws -> (Machine, [ItemID]) {
        var m = Machine(ReconnectPolicy())
        m.machine.setCrossfade(seconds, albums: albums, now: m.now)
        let ids = try m.machine.enqueue(uris, at: .end)
        for (id, metadata) in zip(ids, tags) {
            m.machine.metadataRead(id, .success(DiscoveredMedia(metadata: metadata, duration: .seconds(60), isSeekable: true, isLive: false)))
        }
        m.machine.play()
        _ = m.take()
        m.send(.asyncDone(EngineSnapshot(position: m.sample(.zero), duration: .seconds(60), isSeekable: true, loadedRanges: [])))
        atPreroll = commands(m.actions)
        m.send(.stateChanged(.playing, pending: nil, position: m.sample(.zero)))
        return (m, ids)
    }

    func commands(_ actions: [PlayerAction]) -> [EngineCommand] {
        actions.compactMap { if case .engine(let command) = $0 { command } else { nil } }
    }

    func timers(_ actions: [PlayerAction]) -> [Duration] {
        actions.compactMap { if case .startTimer(.crossfade, let after) = $0 { after } else { nil } }
    }

    func cancelled(_ actions: [PlayerAction]) -> Bool { actions.contains(.cancelTimer(.crossfade)) }

    func prepared(_ actions: [PlayerAction]) -> Generation? {
        commands(actions).lazy.compactMap { if case .crossfade(.prepare(_, let generation)) = $0 { generation } else { nil } }.first
    }

    func testTheNextItemIsPreparedThenStartedTheCrossfadeBeforeTheEndAndBecomesCurrentAtTheStart() throws {
        var (m, ids) = try playing([a, b], crossfade: 5)
        XCTAssertEqual(timers(m.actions), [.seconds(54)], "one wake-up, 1 s before the fade begins at 55 s")
        m.advance(by: .seconds(54))
        var actions = m.fire(.crossfade)
        let generation = try XCTUnwrap(prepared(actions), "the next item opened beside: \(actions)")
        XCTAssertEqual(commands(actions), [.crossfade(.prepare(b, generation))])
        XCTAssertEqual(timers(actions), [.seconds(1)])
        m.advance(by: .seconds(1))
        actions = m.fire(.crossfade)
        XCTAssertEqual(commands(actions), [.crossfade(.start(length: .seconds(5)))])
        XCTAssertEqual(m.machine.currentItem?.id, ids[0], "current until the engine says the fade started")
        m.machine.handle(.streamStarted(EngineSnapshot(position: m.sample(.zero), duration: .seconds(60), isSeekable: true,
                                                       loadedRanges: [])), of: generation, at: m.now)
        actions = m.take()
        XCTAssertTrue(actions.contains(.emit(.playedToEnd(ids[0]))))
        XCTAssertEqual(m.machine.currentItem?.id, ids[1], "Metadata moves to the next item as the fade starts")
        XCTAssertEqual(m.machine.position(at: m.now), .zero)
    }

    func testWithoutACrossfadeTheNextItemIsArmedGaplesslyAndNoTimerRuns() throws {
        let (m, _) = try playing([a, b], crossfade: 0)
        XCTAssertTrue(atPreroll.contains { if case .prepareNext(b, _) = $0 { true } else { false } }, "\(atPreroll)")
        XCTAssertEqual(timers(m.actions), [])
    }

    func testTracksOfOneAlbumInOrderStayGaplessUnlessAlbumsCrossfadeToo() throws {
        var first = Metadata(), second = Metadata()
        first.album = "Live at the Hall"; first.artists = ["Band"]; first.trackNumber = 1
        second.album = "Live at the Hall"; second.artists = ["Band"]; second.trackNumber = 2
        var (m, _) = try playing([a, b], crossfade: 5, tags: [first, second])
        XCTAssertEqual(timers(m.actions), [], "no crossfade between track 1 and 2 of one album")
        XCTAssertTrue(atPreroll.contains { if case .prepareNext(b, _) = $0 { true } else { false } }, "gapless: \(atPreroll)")
        m.machine.setCrossfade(5, albums: true, now: m.now)
        let actions = m.take()
        XCTAssertTrue(commands(actions).contains(.prepareNext(nil, nil)), "taken back from the gapless switch: \(actions)")
        XCTAssertEqual(timers(actions), [.seconds(54)])
        m.machine.setCrossfade(5, albums: false, now: m.now)
        let back = m.take()
        XCTAssertTrue(cancelled(back))
        XCTAssertTrue(commands(back).contains { if case .prepareNext(b, _) = $0 { true } else { false } }, "gapless again: \(back)")
    }

    func testPausingStopsTheTimerAndPlayingAgainWaitsOnlyWhatIsLeft() throws {
        var (m, _) = try playing([a, b], crossfade: 5)
        m.advance(by: .seconds(20))
        m.machine.pause()
        _ = m.take()
        m.send(.stateChanged(.paused, pending: nil, position: m.sample(.seconds(20))))
        XCTAssertTrue(cancelled(m.actions), "no timer while paused")
        m.advance(by: .seconds(600))
        m.machine.play()
        _ = m.take()
        m.send(.stateChanged(.playing, pending: nil, position: m.sample(.seconds(20))))
        XCTAssertEqual(timers(m.actions), [.seconds(34)])
    }

    func testASeekIntoTheFadeStartsItAtOnceOverWhatIsLeft() throws {
        var (m, _) = try playing([a, b], crossfade: 5)
        try m.machine.seek(to: .seconds(58), now: m.now)
        _ = m.take()
        m.send(.seekDone(m.sample(.seconds(58))))
        let generation = try XCTUnwrap(prepared(m.actions))
        XCTAssertEqual(commands(m.actions), [.crossfade(.prepare(b, generation)), .crossfade(.start(length: .seconds(2)))])
    }

    func testNextDuringThePreparationLoadsTheNextItemAfresh() throws {
        var (m, ids) = try playing([a, b, c], crossfade: 5)
        m.advance(by: .seconds(54))
        m.fire(.crossfade)
        XCTAssertNotNil(prepared(m.actions))
        try m.machine.next()
        let actions = m.take()
        XCTAssertTrue(commands(actions).contains(.release), "the engine drops the prepared pipeline with the rest")
        XCTAssertTrue(commands(actions).contains { if case .load(b, _) = $0 { true } else { false } })
        XCTAssertTrue(cancelled(actions))
        XCTAssertEqual(m.machine.currentItem?.id, ids[1])
    }

    func testTurningTheCrossfadeOffAfterThePreparationCancelsItAndArmsTheGaplessSwitch() throws {
        var (m, _) = try playing([a, b], crossfade: 5)
        m.advance(by: .seconds(54))
        m.fire(.crossfade)
        let generation = try XCTUnwrap(prepared(m.actions))
        m.machine.setCrossfade(0, albums: false, now: m.now)
        let actions = m.take()
        XCTAssertEqual(commands(actions), [.crossfade(.cancel), .prepareNext(b, generation)])
        XCTAssertTrue(cancelled(actions))
    }

    /// Once the fade started, the next item is current in a pipeline of its own: a seek seeks it
    /// (the previous one fades out on its own), and Stop releases both.
    func testASeekOrAStopDuringTheFadeActsOnTheNewItem() throws {
        var (m, ids) = try playing([a, b], crossfade: 5)
        m.advance(by: .seconds(54))
        m.fire(.crossfade)
        let generation = try XCTUnwrap(prepared(m.actions))
        m.advance(by: .seconds(1))
        m.fire(.crossfade)
        m.machine.handle(.streamStarted(EngineSnapshot(position: m.sample(.zero), duration: .seconds(60), isSeekable: true,
                                                       loadedRanges: [])), of: generation, at: m.now)
        _ = m.take()
        XCTAssertEqual(m.machine.currentItem?.id, ids[1])
        m.advance(by: .seconds(1))
        try m.machine.seek(to: .seconds(30), now: m.now)
        XCTAssertEqual(commands(m.take()), [.seek(.position(.seconds(30)), .exact, rate: 1)], "the new item seeks; nothing reloads")
        m.machine.stop()
        XCTAssertTrue(commands(m.take()).contains(.release))
        XCTAssertEqual(m.machine.currentItem?.id, ids[1])
    }

    func testASeekBackFromThePreparationLetsThePreparedPipelineGoAndPreparesAgainLater() throws {
        var (m, _) = try playing([a, b], crossfade: 5)
        m.advance(by: .seconds(54))
        m.fire(.crossfade)
        XCTAssertNotNil(prepared(m.actions))
        try m.machine.seek(to: .seconds(10), now: m.now)
        _ = m.take()
        m.send(.seekDone(m.sample(.seconds(10))))
        XCTAssertEqual(commands(m.actions), [.crossfade(.cancel)])
        XCTAssertEqual(timers(m.actions), [.seconds(44)])
    }

    func testStopAfterTheCurrentItemTakesBackThePreparationAndNoFadeStarts() throws {
        var (m, _) = try playing([a, b], crossfade: 5)
        m.advance(by: .seconds(54))
        m.fire(.crossfade)
        XCTAssertNotNil(prepared(m.actions))
        m.machine.setStopAfterCurrent(true)
        _ = m.take()
        m.advance(by: .seconds(1))
        let actions = m.fire(.crossfade)
        XCTAssertEqual(commands(actions), [.crossfade(.cancel)], "no start: playback stops at the end of this item")
        XCTAssertEqual(timers(actions), [])
    }

    /// An item queued while the last one plays (AddTrack) has no time of its own: the crossfade is
    /// planned by a timer due at once.
    func testAnItemQueuedWhilePlayingIsPlannedAtOnce() throws {
        var (m, _) = try playing([a], crossfade: 5)
        XCTAssertEqual(timers(m.actions), [])
        m.advance(by: .seconds(10))
        _ = try m.machine.enqueue([b], at: .end)
        XCTAssertEqual(timers(m.take()), [.zero])
        XCTAssertEqual(timers(m.fire(.crossfade)), [.seconds(44)])
    }

    func testValuesOutsideTheRangeAreIgnored() throws {
        var m = Machine(ReconnectPolicy())
        for bad in [-1, 12.5, .nan, .infinity] { m.machine.setCrossfade(bad, albums: false, now: m.now) }
        XCTAssertEqual(m.machine.audioSettings.crossfade, .zero)
        m.machine.setCrossfade(12, albums: true, now: m.now)
        XCTAssertEqual(m.machine.audioSettings.crossfade, .seconds(12))
        XCTAssertTrue(m.machine.audioSettings.crossfadeAlbums)
    }
}
