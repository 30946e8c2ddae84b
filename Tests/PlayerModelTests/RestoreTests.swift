import Foundation
import PlayerModel
import XCTest

/// Restoring a saved state (issue 14), as the machine sees it: the queue keeps its ids and order,
/// the current item shows paused at the saved position, and loads there when asked to play or seek.
final class RestoreTests: XCTestCase {
    let a = MediaURI(fileURL: URL(fileURLWithPath: "/music/a.flac"))
    let b = MediaURI(fileURL: URL(fileURLWithPath: "/music/b.flac"))
    let c = MediaURI(fileURL: URL(fileURLWithPath: "/music/c.flac"))
    /// The instant the machine tests start at; they move time on from it by hand.
    let t0 = ContinuousClock.now

    func saved(intent: TransportIntent = .playing, missing: Set<UInt64> = []) -> SavedState {
        SavedState(items: [(7, a), (3, b), (9, c)].map { SavedState.Entry(id: ItemID($0.0), uri: $0.1, fileIsMissing: missing.contains($0.0)) },
                   settings: SavedSettings(currentID: ItemID(3), position: .seconds(12), currentDuration: .seconds(30), intent: intent,
                                           volume: 0.4, isMuted: true, loopMode: .queue, isShuffled: false, rate: 1.25),
                   nextID: 20)
    }

    func commands(_ actions: [PlayerAction]) -> [EngineCommand] {
        actions.compactMap { if case .engine(let command) = $0 { command } else { nil } }
    }

    /// Paused there without a pipeline (issue 30: nothing loaded at rest), as an item paused a
    /// while is (PausedRelease): Play loads it and seeks it to the saved position after preroll.
    func testPauseShowsTheCurrentItemPausedWithoutLoadingAndPlayLoadsItThere() throws {
        var machine = PlayerMachine()
        machine.restore(saved(), resume: .pause)
        let actions = commands(machine.takeActions())
        XCTAssertEqual(machine.ids, [ItemID(7), ItemID(3), ItemID(9)])
        XCTAssertEqual(machine.currentItem?.id, ItemID(3))
        XCTAssertEqual(machine.state.intent, .paused)
        XCTAssertEqual(machine.state.timeControlStatus, .paused)
        XCTAssertEqual(machine.state.volume, 0.4)
        XCTAssertTrue(machine.state.isMuted)
        XCTAssertEqual(machine.state.loopMode, .queue)
        XCTAssertEqual(machine.state.rate, 1.25)
        XCTAssertTrue(actions.contains(.setVolume(0.4)) && actions.contains(.setMuted(true)), "\(actions)")
        XCTAssertFalse(actions.contains { if case .load = $0 { true } else { false } }, "nothing loaded: \(actions)")
        XCTAssertEqual(machine.position(at: t0), .seconds(12), "the saved position shows")
        XCTAssertEqual(machine.currentItem?.duration, .seconds(30))

        machine.play()
        let played = commands(machine.takeActions())
        guard case .load(let uri, let generation) = played.last(where: { if case .load = $0 { true } else { false } }) else {
            return XCTFail("Play loads: \(played)")
        }
        XCTAssertEqual(uri, b)
        XCTAssertEqual(machine.position(at: t0), .seconds(12), "the saved position shows while it loads")
        machine.handle(.asyncDone(EngineSnapshot(position: PositionSample(.zero, at: t0), duration: .seconds(30),
                                                 isSeekable: true, loadedRanges: [])), of: generation, at: t0)
        let afterPreroll = commands(machine.takeActions())
        XCTAssertTrue(afterPreroll.contains(.seek(.position(.seconds(12)), .exact, rate: 1.25)), "\(afterPreroll)")
        XCTAssertTrue(afterPreroll.contains(.setPlaying(true)), "playing from there: \(afterPreroll)")
        // new items continue the saved ids
        let new = try machine.enqueue([a], at: .end)
        XCTAssertEqual(new, [ItemID(20)])
    }

    /// A seek before Play loads the item paused at the seek's target, as on a released item.
    func testASeekOfTheRestoredItemLoadsItPausedThere() throws {
        var machine = PlayerMachine()
        machine.restore(saved(), resume: .pause)
        _ = machine.takeActions()
        try machine.seek(to: .seconds(20), now: t0)
        let actions = commands(machine.takeActions())
        guard case .load(_, let generation) = actions.first(where: { if case .load = $0 { true } else { false } }) else {
            return XCTFail("the seek loads: \(actions)")
        }
        XCTAssertEqual(machine.state.intent, .paused)
        XCTAssertEqual(machine.position(at: t0), .seconds(20))
        machine.handle(.asyncDone(EngineSnapshot(position: PositionSample(.zero, at: t0), duration: .seconds(30),
                                                 isSeekable: true, loadedRanges: [])), of: generation, at: t0)
        let afterPreroll = commands(machine.takeActions())
        XCTAssertTrue(afterPreroll.contains(.seek(.position(.seconds(20)), .exact, rate: 1.25)), "\(afterPreroll)")
        XCTAssertTrue(afterPreroll.contains(.setPlaying(false)), "still paused: \(afterPreroll)")
    }

    func testAStoppedStateStaysStoppedAndPlayPlays() {
        var machine = PlayerMachine()
        machine.restore(saved(intent: .stopped), resume: .pause)
        XCTAssertFalse(commands(machine.takeActions()).contains { if case .load = $0 { true } else { false } })
        XCTAssertEqual(machine.state.intent, .stopped)
        XCTAssertEqual(machine.currentItem?.id, ItemID(3))

        var playing = PlayerMachine()
        playing.restore(saved(intent: .stopped), resume: .play)
        XCTAssertEqual(playing.state.intent, .playing)
        XCTAssertTrue(commands(playing.takeActions()).contains { if case .load(let uri, _) = $0 { uri == b } else { false } })
    }

    func testAMissingFileComesBackFailedNotFound() {
        var machine = PlayerMachine()
        machine.restore(saved(missing: [3]), resume: .pause)
        XCTAssertEqual(machine.ids.count, 3, "nothing dropped")
        XCTAssertEqual(machine.currentItem?.error?.kind, .notFound)
        XCTAssertFalse(commands(machine.takeActions()).contains { if case .load = $0 { true } else { false } },
                       "a file that is gone is not loaded")
        machine.play()
        XCTAssertEqual(machine.currentItem?.id, ItemID(9), "Play moves on to the next item")
    }

    func testNoneRestoresNothing() {
        var machine = PlayerMachine()
        machine.restore(saved(), resume: .none)
        XCTAssertEqual(machine.ids, [])
        XCTAssertNil(machine.currentItem)
    }
}

/// The tags and lengths saved with the queue (issue 30) come back on their items, and those items
/// are not read again: a restart shows them with no tag reader (no GStreamer) at work.
final class RestoredMetadataTests: XCTestCase {
    let a = MediaURI(fileURL: URL(fileURLWithPath: "/music/a.flac"))
    let b = MediaURI(fileURL: URL(fileURLWithPath: "/music/b.flac"))
    let c = MediaURI(fileURL: URL(fileURLWithPath: "/music/c.flac"))

    func known(_ title: String, seconds: Int64) -> SavedMetadata {
        var tags = Metadata()
        tags.title = title
        tags.artists = ["Someone"]
        return SavedMetadata(tags: tags, duration: .seconds(seconds))
    }

    func testSavedTagsShowAndAreNotReadAgain() {
        var machine = PlayerMachine(hasMetadataReader: true)
        let saved = SavedState(items: [SavedState.Entry(id: ItemID(1), uri: a, metadata: known("A", seconds: 61)),
                                       SavedState.Entry(id: ItemID(2), uri: b, metadata: known("B", seconds: 62)),
                                       SavedState.Entry(id: ItemID(3), uri: c)],
                               settings: SavedSettings(currentID: ItemID(1), intent: .stopped), nextID: 4)
        machine.restore(saved, resume: .pause)
        let reads = machine.takeActions().compactMap { if case .readMetadata(let id, _) = $0 { id } else { nil } }
        XCTAssertEqual(reads, [ItemID(3)], "only the item never read is read")
        XCTAssertEqual(machine.currentItem?.metadata.title, "A")
        XCTAssertEqual(machine.currentItem?.duration, .seconds(61))
        XCTAssertEqual(machine.item(ItemID(2))?.metadata.artists, ["Someone"])
        XCTAssertEqual(machine.item(ItemID(2))?.duration, .seconds(62))
        machine.wantMetadata([ItemID(1), ItemID(2)])
        XCTAssertFalse(machine.takeActions().contains { if case .readMetadata = $0 { true } else { false } },
                       "a client's GetTracksMetadata reads nothing that was saved")
    }

    func testTagsTheLoadFindsReplaceSavedOnes() {
        var machine = PlayerMachine(hasMetadataReader: true)
        machine.restore(SavedState(items: [SavedState.Entry(id: ItemID(1), uri: a, metadata: known("Old", seconds: 61))],
                                   settings: SavedSettings(currentID: ItemID(1), intent: .paused), nextID: 2), resume: .play)
        let load = machine.takeActions().compactMap { if case .engine(.load(_, let generation)) = $0 { generation } else { nil } }.first
        guard let generation = load else { return XCTFail("--resume play loads at once") }
        var found = Metadata()
        found.title = "New"
        machine.handle(.tags(found), of: generation, at: .now)
        let events = machine.takeActions().compactMap { if case .emit(let event) = $0 { event } else { nil } }
        XCTAssertEqual(machine.currentItem?.metadata.title, "New", "the file changed since: its tags win")
        XCTAssertTrue(events.contains { if case .metadataChanged(ItemID(1), let m) = $0 { m.title == "New" } else { false } }, "\(events)")
    }
}
