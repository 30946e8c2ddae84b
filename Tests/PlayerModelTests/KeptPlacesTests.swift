import Foundation
import PlayerModel
import TestSupport
import XCTest

/// A place kept per item (issue 40, item 4): a long item left before its end starts where it was
/// left when it loads from its start again; played to its end, the place goes. The machine on its
/// own, the time an input (`inputInstant`, as `Player` sets it).
final class KeptPlacesTests: XCTestCase {
    let book = MediaURI(fileURL: URL(fileURLWithPath: "/books/long.opus"))
    let song = MediaURI(fileURL: URL(fileURLWithPath: "/music/song.flac"))
    let radio = try! MediaURI("http://radio.example/stream")
    let t0 = ContinuousClock.now
    let hour: Duration = .seconds(3600)

    func events(_ actions: [PlayerAction]) -> [PlayerEvent] {
        actions.compactMap { if case .emit(let event) = $0 { event } else { nil } }
    }

    func commands(_ actions: [PlayerAction]) -> [EngineCommand] {
        actions.compactMap { if case .engine(let command) = $0 { command } else { nil } }
    }

    func loaded(_ actions: [PlayerAction]) -> (MediaURI, Generation)? {
        commands(actions).compactMap { if case .load(let uri, let generation) = $0 { (uri, generation) } else { nil } }.last
    }

    func kept(_ actions: [PlayerAction]) -> [PlaceChange] {
        events(actions).compactMap { if case .placeKept(let change) = $0 { change } else { nil } }
    }

    /// Prerolls the load of `generation` at `now` with `duration`, playing from `position`.
    func preroll(_ machine: inout PlayerMachine, _ generation: Generation, duration: Duration?, at now: ContinuousClock.Instant,
                 position: Duration = .zero) -> [PlayerAction] {
        machine.inputInstant = now
        machine.handle(.stateChanged(.paused, pending: nil, position: nil), of: generation, at: now)
        machine.handle(.asyncDone(EngineSnapshot(position: PositionSample(position, at: now), duration: duration,
                                                 isSeekable: duration != nil, loadedRanges: [])), of: generation, at: now)
        machine.handle(.stateChanged(.playing, pending: nil, position: PositionSample(position, at: now)), of: generation, at: now)
        return machine.takeActions()
    }

    /// The book (an hour long) and a song queued, the book playing from 0 at t0.
    func playingBook() throws -> (PlayerMachine, [ItemID], Generation) {
        var machine = PlayerMachine()
        machine.inputInstant = t0
        let ids = try machine.enqueue([book, song], at: .end)
        machine.play()
        let (uri, generation) = try XCTUnwrap(loaded(machine.takeActions()))
        XCTAssertEqual(uri, book)
        _ = preroll(&machine, generation, duration: hour, at: t0)
        return (machine, ids, generation)
    }

    func testTheRule() {
        let threshold = KeptPlaces.defaultThreshold
        XCTAssertEqual(threshold, .seconds(1200))
        XCTAssertEqual(KeptPlaces.decision(duration: hour, isLive: false, position: .seconds(40), threshold: threshold), .keep(.seconds(40)))
        XCTAssertEqual(KeptPlaces.decision(duration: hour, isLive: false, position: .seconds(9), threshold: threshold), .forget,
                       "under 10 s in is the start")
        XCTAssertEqual(KeptPlaces.decision(duration: hour, isLive: false, position: hour - .seconds(5), threshold: threshold), .forget,
                       "the last 10 s are the end")
        XCTAssertEqual(KeptPlaces.decision(duration: .seconds(1200), isLive: false, position: .seconds(600), threshold: threshold), .none,
                       "20 minutes is not longer than 20 minutes")
        XCTAssertEqual(KeptPlaces.decision(duration: nil, isLive: false, position: .seconds(600), threshold: threshold), .none,
                       "a length not known keeps nothing")
        XCTAssertEqual(KeptPlaces.decision(duration: hour, isLive: true, position: .seconds(600), threshold: threshold), .none,
                       "a live stream keeps nothing")
    }

    func testAtMostTheCapacityTheLeastRecentlyKeptGoFirst() {
        var places = KeptPlaces()
        for index in 0..<KeptPlaces.capacity {
            places.keep(MediaURI(fileURL: URL(fileURLWithPath: "/books/\(index).opus")), at: .seconds(100 + index))
        }
        let first = MediaURI(fileURL: URL(fileURLWithPath: "/books/0.opus"))
        let second = MediaURI(fileURL: URL(fileURLWithPath: "/books/1.opus"))
        places.keep(first, at: .seconds(50))  // used again: now the most recent
        places.keep(book, at: .seconds(60))
        XCTAssertEqual(places.count, KeptPlaces.capacity)
        XCTAssertNil(places[second], "the least recently kept went")
        XCTAssertEqual(places[first], .seconds(50))
        XCTAssertEqual(places.all.last?.uri, book)
    }

    /// Left for another item 40 s in, opened again: loaded paused, seeked exactly to 40 s, then played
    /// (no blip of its start), `resumedFrom` says so, and Seeked follows as for a restored position.
    func testAnItemLeftForAnotherResumesWhenOpenedAgain() throws {
        var (machine, ids, _) = try playingBook()
        let left = t0 + .seconds(40)
        machine.inputInstant = left
        try machine.jump(to: ids[1])
        var actions = machine.takeActions()
        XCTAssertEqual(kept(actions), [PlaceChange(book, .seconds(40))])
        XCTAssertNil(machine.resumedFrom, "the song starts at its start")
        let (_, songGeneration) = try XCTUnwrap(loaded(actions))
        _ = preroll(&machine, songGeneration, duration: .seconds(200), at: left)

        // opened again, as a new queue entry: the same URI
        machine.inputInstant = left + .seconds(5)
        _ = try machine.open([book])
        actions = machine.takeActions()
        XCTAssertEqual(kept(actions), [], "the song is short: it keeps no place")
        let (uri, generation) = try XCTUnwrap(loaded(actions))
        XCTAssertEqual(uri, book)
        XCTAssertEqual(machine.resumedFrom, .seconds(40))
        XCTAssertFalse(commands(actions).contains(.playAfterPreroll(true)), "not played before the seek: \(commands(actions))")
        actions = preroll(&machine, generation, duration: hour, at: left + .seconds(6))
        let afterPreroll = commands(actions)
        let seek = try XCTUnwrap(afterPreroll.firstIndex(of: .seek(.position(.seconds(40)), .exact, rate: 1)), "\(afterPreroll)")
        let play = try XCTUnwrap(afterPreroll.firstIndex(of: .setPlaying(true)), "\(afterPreroll)")
        XCTAssertLessThan(seek, play, "seeked before it plays")
        XCTAssertEqual(machine.position(at: left + .seconds(6)), .seconds(40), "shown there while it seeks")
        XCTAssertEqual(machine.currentPlace(at: left + .seconds(6)), PlaceChange(book, .seconds(40)), "what the saved state writes meanwhile")
        machine.handle(.seekDone(PositionSample(.seconds(40), at: left + .seconds(7))), of: generation, at: left + .seconds(7))
        XCTAssertTrue(events(machine.takeActions()).contains(.seeked(.seconds(40))))
    }

    /// Stop keeps the place (the position goes to 0, rule 6); Play loads it there again.
    func testStopKeepsThePlaceAndPlayResumesThere() throws {
        var (machine, _, _) = try playingBook()
        machine.inputInstant = t0 + .seconds(125)
        machine.stop()
        XCTAssertEqual(kept(machine.takeActions()), [PlaceChange(book, .seconds(125))])
        XCTAssertNil(machine.currentPlace(at: t0 + .seconds(126)), "stopped: nothing to write over it")
        machine.inputInstant = t0 + .seconds(130)
        machine.play()
        let actions = machine.takeActions()
        XCTAssertEqual(loaded(actions)?.0, book)
        XCTAssertEqual(machine.resumedFrom, .seconds(125))
    }

    /// Played to its end, the place goes (EOS), and leaving it afterwards keeps none.
    func testPlayingToTheEndForgetsThePlace() throws {
        var (machine, ids, generation) = try playingBook()
        machine.inputInstant = t0 + .seconds(40)
        try machine.jump(to: ids[1])
        _ = machine.takeActions()
        machine.inputInstant = t0 + .seconds(41)
        try machine.jump(to: ids[0])
        var actions = machine.takeActions()
        XCTAssertEqual(machine.resumedFrom, .seconds(40))
        generation = try XCTUnwrap(loaded(actions)).1
        _ = preroll(&machine, generation, duration: hour, at: t0 + .seconds(42), position: .seconds(40))
        machine.inputInstant = t0 + hour
        machine.handle(.endOfStream, of: generation, at: t0 + hour)
        actions = machine.takeActions()
        XCTAssertEqual(kept(actions), [PlaceChange(book, nil)], "forgotten once, and not kept again as it is left")
        XCTAssertEqual(machine.currentItem?.id, ids[1])
        XCTAssertNil(machine.keptPlaces[book])
        machine.inputInstant = t0 + hour + .seconds(1)
        try machine.jump(to: ids[0])
        XCTAssertNil(machine.resumedFrom, "from its start")
    }

    /// The setting off: nothing is kept, nothing resumes; what was kept stays for when it is on.
    func testTheSettingOffKeepsAndUsesNothing() throws {
        var (machine, ids, _) = try playingBook()
        machine.inputInstant = t0 + .seconds(40)
        try machine.jump(to: ids[1])
        _ = machine.takeActions()
        machine.setResumePlaces(false)
        XCTAssertEqual(events(machine.takeActions()), [.resumePlacesChanged(false)])
        machine.inputInstant = t0 + .seconds(50)
        try machine.jump(to: ids[0])
        let actions = machine.takeActions()
        XCTAssertNil(machine.resumedFrom)
        XCTAssertFalse(commands(actions).contains { if case .seek = $0 { true } else { false } })
        machine.inputInstant = t0 + .seconds(70)
        try machine.jump(to: ids[1])
        XCTAssertEqual(kept(machine.takeActions()), [], "nothing kept while off")
        XCTAssertEqual(machine.keptPlaces[book], .seconds(40), "the place kept before stays")
        XCTAssertTrue(PlayerMachine().currentValues.contains(.resumePlacesChanged(true)), "on by default")
    }

    /// Short items, live streams and places under 10 s keep nothing; a long item left at its
    /// start forgets the place it had.
    func testShortLiveAndEarlyPlaces() throws {
        var (machine, ids, _) = try playingBook()
        machine.inputInstant = t0 + .seconds(5)
        try machine.jump(to: ids[1])
        XCTAssertEqual(kept(machine.takeActions()), [PlaceChange(book, nil)], "5 s in: its start")
        var configured = PlayerConfiguration()
        configured.resumeThreshold = .seconds(30)
        var radioMachine = PlayerMachine(configuration: configured)
        radioMachine.inputInstant = t0
        let radioIDs = try radioMachine.enqueue([radio, song], at: .end)
        radioMachine.play()
        let generation = try XCTUnwrap(loaded(radioMachine.takeActions())).1
        radioMachine.handle(.live, of: generation, at: t0)
        _ = preroll(&radioMachine, generation, duration: nil, at: t0)
        radioMachine.inputInstant = t0 + .seconds(600)
        try radioMachine.jump(to: radioIDs[1])
        XCTAssertEqual(kept(radioMachine.takeActions()), [], "a live stream keeps no place")
    }

    /// The places given at start are used; a restored current item resumes at its saved position,
    /// and says nothing of a kept place.
    func testRestoredPlacesAreUsed() throws {
        var machine = PlayerMachine()
        machine.inputInstant = t0
        machine.restorePlaces([(book, .seconds(300))])
        _ = try machine.open([song, book])
        var actions = machine.takeActions()
        XCTAssertEqual(loaded(actions)?.0, song)
        try machine.next()
        actions = machine.takeActions()
        XCTAssertEqual(loaded(actions)?.0, book)
        XCTAssertEqual(machine.resumedFrom, .seconds(300), "Next into it resumes")
    }

    /// A next item with a kept place is not armed for a gapless switch (it would start at 0): it
    /// loads afresh at the end, at its place.
    func testANextItemWithAPlaceIsNotArmedGapless() throws {
        var machine = PlayerMachine()
        machine.inputInstant = t0
        machine.restorePlaces([(book, .seconds(300))])
        _ = try machine.open([song, book])
        let generation = try XCTUnwrap(loaded(machine.takeActions())).1
        let actions = preroll(&machine, generation, duration: .seconds(200), at: t0)
        XCTAssertFalse(commands(actions).contains { if case .prepareNext(.some, _) = $0 { true } else { false } }, "\(commands(actions))")
        machine.handle(.endOfStream, of: generation, at: t0 + .seconds(200))
        let next = machine.takeActions()
        XCTAssertEqual(loaded(next)?.0, book)
        XCTAssertEqual(machine.resumedFrom, .seconds(300))
    }
}
