import Foundation
import Logging
import PlayerModel
import Playlists
import SQLite
@testable import Store
import XCTest

/// The store against a real SQLite file in a temporary directory: what is written comes back in
/// order, edits touch only their rows, and a bad file never stops it.
final class StateStoreTests: XCTestCase {
    var directory: URL!
    let logger = Logger(label: "test")

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-store-\(UUID().uuidString)")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    func entry(_ id: UInt64, _ name: String) throws -> QueueEntry {
        QueueEntry(id: ItemID(id), uri: try MediaURI("/music/\(name).flac"))
    }

    func reopen() -> StateStore { StateStore(directory: directory, logger: logger) }

    func testEditsComeBackInOrderWithTheirIDs() throws {
        var store: StateStore? = reopen()
        XCTAssertNil(store?.loaded, "a new file holds nothing")
        store?.record(.inserted([try entry(1, "a"), try entry(2, "b"), try entry(3, "c")], after: nil))
        store?.record(.inserted([try entry(4, "d")], after: ItemID(1)))       // a d b c
        store?.record(.inserted([try entry(5, "e")], after: nil))             // e a d b c
        store?.record(.removed([ItemID(2)]))                                  // e a d c
        store?.record(.moved(ItemID(5), after: ItemID(3)))                    // a d c e
        store?.record(.moved(ItemID(3), after: nil))                          // c a d e
        let settings = SavedSettings(currentID: ItemID(4), position: .milliseconds(12_345), currentDuration: .seconds(30),
                                     intent: .playing, volume: 0.25, isMuted: true, loopMode: .queue, isShuffled: true, rate: 1.5)
        store?.record(.settings(settings))
        store?.flush()
        store?.close()
        store = nil
        let loaded = try XCTUnwrap(reopen().loaded)
        XCTAssertEqual(loaded.items.map(\.id.rawValue), [3, 1, 4, 5])
        XCTAssertEqual(loaded.items.map(\.uri.displayName), ["c.flac", "a.flac", "d.flac", "e.flac"])
        XCTAssertTrue(loaded.items.allSatisfy(\.fileIsMissing), "none of /music/* exists")
        XCTAssertEqual(loaded.settings, SavedSettings(currentID: ItemID(4), position: .milliseconds(12_345), currentDuration: .seconds(30),
                                                      intent: .playing, volume: 0.25, isMuted: true, loopMode: .queue,
                                                      isShuffled: true, rate: 1.5))
        XCTAssertEqual(loaded.nextID, 6, "ids are never reused: the next one follows the largest ever saved")
    }

    func testAReplacedQueueAndAnEmptyOne() throws {
        var store: StateStore? = reopen()
        store?.record(.inserted([try entry(1, "a"), try entry(2, "b")], after: nil))
        store?.record(.replaced([], SavedSettings()))
        store?.record(.inserted([try entry(3, "c")], after: nil))
        store?.flush()
        store?.close()
        store = nil
        XCTAssertEqual(try XCTUnwrap(reopen().loaded).items.map(\.id.rawValue), [3])
    }

    /// A queue change costs the rows it changes: with 10,000 entries saved, adding, removing
    /// or moving one writes a handful of rows, not the queue.
    func testAnEditOfALongQueueWritesOnlyItsRows() throws {
        let store = reopen()
        let entries = try (1...10_000).map { try entry(UInt64($0), "track \($0)") }
        store.record(.inserted(entries, after: nil))
        store.flush()
        XCTAssertGreaterThanOrEqual(store.rowsWrittenByLastWrite, 10_000)
        store.record(.inserted([try entry(10_001, "new")], after: ItemID(5_000)))
        store.flush()
        // the new row, its predecessor's link, next_id
        XCTAssertLessThanOrEqual(store.rowsWrittenByLastWrite, 3)
        store.record(.removed([ItemID(7_000)]))
        store.flush()
        // the predecessor's link, the row (the head is untouched)
        XCTAssertLessThanOrEqual(store.rowsWrittenByLastWrite, 3)
        store.record(.moved(ItemID(9_999), after: nil))
        store.flush()
        XCTAssertLessThanOrEqual(store.rowsWrittenByLastWrite, 4)
        store.record(.settings(SavedSettings(currentID: ItemID(3), position: .seconds(4))))
        store.flush()
        XCTAssertEqual(store.rowsWrittenByLastWrite, 1)
        store.close()
        let loaded = try XCTUnwrap(reopen().loaded)
        var expected = Array(1...10_000).map(UInt64.init)
        expected.insert(10_001, at: 5_000)
        expected.removeAll { $0 == 7_000 || $0 == 9_999 }
        expected.insert(9_999, at: 0)
        XCTAssertEqual(loaded.items.map(\.id.rawValue), expected)
    }

    /// A shuffled order is saved as a seed and the few keys that do not derive from it: turning
    /// shuffle on with 10,000 entries writes a handful of rows, and stepping through it (Next: the
    /// settings row) writes one; each entry comes back with its own key, the others with none.
    func testAShuffledOrderOfALongQueueIsSavedInAFewRows() throws {
        let store = reopen()
        store.record(.inserted(try (1...10_000).map { try entry(UInt64($0), "track \($0)") }, after: nil))
        store.flush()
        let seed: UInt64 = 0xDEAD_BEEF_0123_4567
        store.record(.reshuffled(seed: seed, keys: [ItemID(42): 0]))
        store.flush()
        XCTAssertLessThanOrEqual(store.rowsWrittenByLastWrite, 2, "the seed and the first item's key")
        var settings = SavedSettings(currentID: ItemID(42), isShuffled: true, shuffleSeed: seed)
        store.record(.settings(settings))
        store.flush()
        XCTAssertEqual(store.rowsWrittenByLastWrite, 1)
        settings.currentID = ItemID(7)
        store.record(.settings(settings))
        store.flush()
        XCTAssertEqual(store.rowsWrittenByLastWrite, 1, "Next writes the player's row, nothing of the order")
        let added = QueueEntry(id: ItemID(10_001), uri: try MediaURI("/music/new.flac"), shuffleKey: UInt64.max - 5)
        store.record(.inserted([added], after: ItemID(9)))
        store.flush()
        // a new order: the keys of the old one go (one row had one), the new first item's comes
        store.record(.reshuffled(seed: seed &+ 1, keys: [ItemID(7): 0]))
        store.flush()
        XCTAssertLessThanOrEqual(store.rowsWrittenByLastWrite, 4)
        store.record(.reshuffled(seed: seed, keys: [ItemID(42): 0]))
        store.record(.inserted([added].map { var e = $0; e.id = ItemID(10_002); return e }, after: nil))
        store.flush()
        store.close()
        let loaded = try XCTUnwrap(reopen().loaded)
        XCTAssertEqual(loaded.settings.shuffleSeed, seed)
        XCTAssertTrue(loaded.settings.isShuffled)
        let keyed = loaded.items.filter { $0.shuffleKey != nil }
        XCTAssertEqual(keyed.map(\.id.rawValue), [10_002, 42])
        XCTAssertEqual(keyed.map(\.shuffleKey), [UInt64.max - 5, 0], "64-bit keys come back whole")
    }

    /// A file of schema 1 (before the shuffled order and the playlists were saved) is taken up:
    /// its queue comes back, and it is migrated so that the new rows can be written.
    func testAFileOfSchemaOneIsMigrated() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("state.sqlite").path
        let old = try Database(path: path)
        // schema 1 as the store itself writes it before its migrations, then a queue of two
        try old.execute(StateStore.schema)
        try old.execute("""
            UPDATE player SET head = 2, next_id = 3, current = 1, position_us = 5000000, intent = 'paused',
                volume = 0.5, shuffle = 1;
            INSERT INTO item VALUES (2, 'file:///music/b.flac', 1), (1, 'file:///music/a.flac', NULL);
            """)
        XCTAssertEqual(try old.userVersion, 1)
        old.close()
        let store = reopen()
        let loaded = try XCTUnwrap(store.loaded)
        XCTAssertEqual(loaded.items.map(\.id.rawValue), [2, 1])
        XCTAssertTrue(loaded.settings.isShuffled)
        XCTAssertNil(loaded.settings.shuffleSeed, "no order was saved: the player makes a new one")
        XCTAssertTrue(loaded.settings.video.controlsVisible, "a file from before ControlsVisible shows the bar")
        XCTAssertEqual(loaded.settings.audio, AudioSettings(), "a file from before the audio settings: the defaults")
        XCTAssertFalse(loaded.settings.linearPlayback, "a file from before linear playback plays freely")
        store.record(.reshuffled(seed: 9, keys: [ItemID(1): 0]))
        store.record(.playlist(PlaylistRecord(id: 3, path: "/music/Playlists/x.m3u", firstSeen: Date(timeIntervalSince1970: 1_000))))
        store.flush()
        store.close()
        let again = reopen()
        XCTAssertEqual(again.loaded?.items.map(\.shuffleKey), [nil, 0])
        XCTAssertEqual(again.loadedPlaylists.map(\.id), [3])
    }

    /// `ControlsVisible` (schema 3) comes back as it was saved.
    func testControlsVisibleIsSaved() throws {
        let store = reopen()
        var settings = SavedSettings()
        settings.video.controlsVisible = false
        store.record(.settings(settings))
        store.flush()
        store.close()
        XCTAssertEqual(try XCTUnwrap(reopen().loaded).settings.video.controlsVisible, false)
    }

    /// ReplayGain, the equalizer and the user's presets (schema 4) come back as they were saved;
    /// a file from before them (the schema 1 test above) loads the defaults.
    func testTheAudioSettingsAreSaved() throws {
        let store = reopen()
        let audio = AudioSettings(replayGain: .auto, preamp: -4.5, equalizer: [1, -2, 3.5, 0, 0, 0, 0, 0, 0, 12],
                                  equalizerPreset: "night", userPresets: [EqualizerPreset(name: "night", gains: [1, -2, 3.5, 0, 0, 0, 0, 0, 0, 12]),
                                                                           EqualizerPreset(name: "day", gains: Equalizer.flat)])
        store.record(.audio(audio))
        store.record(.settings(SavedSettings()))
        store.flush()
        store.close()
        XCTAssertEqual(try XCTUnwrap(reopen().loaded).settings.audio, audio)
    }

    /// The crossfade (schema 6) comes back as it was saved, to the millisecond.
    func testTheCrossfadeIsSaved() throws {
        let store = reopen()
        var audio = AudioSettings()
        audio.crossfade = .milliseconds(2500)
        audio.crossfadeAlbums = true
        store.record(.audio(audio))
        store.record(.settings(SavedSettings()))
        store.flush()
        store.close()
        XCTAssertEqual(try XCTUnwrap(reopen().loaded).settings.audio, audio)
    }

    /// Linear playback (schema 8) comes back as it was saved; a file from before it plays freely.
    func testLinearPlaybackIsSaved() throws {
        let store = reopen()
        XCTAssertEqual(store.loaded?.settings.linearPlayback ?? false, false)
        var settings = SavedSettings()
        settings.linearPlayback = true
        store.record(.settings(settings))
        store.flush()
        store.close()
        let again = reopen()
        XCTAssertEqual(try XCTUnwrap(again.loaded).settings.linearPlayback, true)
        settings.linearPlayback = false
        again.record(.settings(settings))
        again.flush()
        again.close()
        XCTAssertEqual(try XCTUnwrap(reopen().loaded).settings.linearPlayback, false)
    }

    /// A change the file cannot apply (an edit of an entry it lacks) rolls its batch back and
    /// asks for the whole state, which then replaces what the file held.
    func testAChangeTheFileCannotApplyAsksForTheWholeState() throws {
        let store = reopen()
        let asked = expectation(description: "the whole state asked for")
        store.onNeedsFullState = { asked.fulfill() }
        store.record(.inserted([try entry(1, "a"), try entry(2, "b")], after: nil))
        store.flush()
        store.record(.moved(ItemID(99), after: nil))
        store.record(.removed([ItemID(1)]))  // in the same batch: rolled back with it
        store.flush()
        wait(for: [asked], timeout: 5)
        store.record(.removed([ItemID(2)]))  // before the whole state: dropped
        store.record(.replaced([try entry(2, "b"), try entry(3, "c")], SavedSettings(currentID: ItemID(3))))
        store.flush()
        store.close()
        let loaded = try XCTUnwrap(reopen().loaded)
        XCTAssertEqual(loaded.items.map(\.id.rawValue), [2, 3])
        XCTAssertEqual(loaded.settings.currentID, ItemID(3))
    }

    func testACorruptFileIsMovedAsideAndAFreshOneStarted() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("state.sqlite")
        try Data(repeating: 0x5a, count: 8192).write(to: path)
        let store = reopen()
        XCTAssertNil(store.loaded)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        XCTAssertTrue(names.contains { $0.hasPrefix("state.sqlite.corrupt-") }, "\(names)")
        store.record(.inserted([try entry(1, "a")], after: nil))
        store.flush()
        store.close()
        XCTAssertEqual(try XCTUnwrap(reopen().loaded).items.map(\.id.rawValue), [1], "the fresh file saves")
    }

    func testASecondStoreOnTheSameFileSavesNothing() throws {
        let first = reopen()
        first.record(.inserted([try entry(1, "a")], after: nil))
        first.flush()
        let second = reopen()
        XCTAssertNil(second.loaded, "the file is in use")
        second.record(.inserted([try entry(7, "z")], after: nil))
        second.flush()
        first.close()
        XCTAssertEqual(try XCTUnwrap(reopen().loaded).items.map(\.id.rawValue), [1])
    }

    /// The path in an SQLite `file:` URI is escaped as Foundation's urlPathAllowed without `?#%` did.
    func testURIEscapedAsFoundationEscaped() {
        var allowed = CharacterSet.urlPathAllowed
        allowed.subtract(CharacterSet(charactersIn: "?#%"))
        for path in ["/home/a b/state.sqlite", "/x/?#%/é ü/★", "/plain/path-1_2.~", "/a;b=c&d@e+f$g,h'(i)*!:j"] {
            XCTAssertEqual(StateStore.uriEscaped(path), path.addingPercentEncoding(withAllowedCharacters: allowed), path)
        }
    }

    // MARK: Places kept per long item (schema 9)

    func book(_ name: String) throws -> MediaURI { try MediaURI("/books/\(name).opus") }

    func placeNames(_ store: StateStore) -> [String] { store.loadedPlaces.map(\.0.displayName) }

    /// Places come back oldest first with their positions; a forgotten one does not; the current
    /// item's place goes with the settings row; ResumePlaces is saved.
    func testPlacesComeBackInTheOrderTheyWereKept() throws {
        let store = reopen()
        store.record(.place(PlaceChange(try book("a"), .seconds(40))))
        store.record(.place(PlaceChange(try book("b"), .seconds(50))))
        store.record(.place(PlaceChange(try book("c"), .seconds(60))))
        store.record(.place(PlaceChange(try book("a"), .seconds(45))))  // kept again: the newest
        store.record(.place(PlaceChange(try book("b"), nil)))            // played to its end
        var settings = SavedSettings()
        settings.resumePlaces = false
        settings.currentPlace = PlaceChange(try book("d"), .milliseconds(70_500))
        store.record(.settings(settings))
        store.flush()
        store.close()
        let again = reopen()
        XCTAssertEqual(placeNames(again), ["c.opus", "a.opus", "d.opus"])
        XCTAssertEqual(again.loadedPlaces.map(\.1), [.seconds(60), .seconds(45), .milliseconds(70_500)])
        XCTAssertEqual(again.loaded?.settings.resumePlaces, false)
        XCTAssertNil(again.loaded?.settings.currentPlace, "never loaded: the places are apart")
    }

    /// Past the capacity, the least recently kept go, in the file as in the player.
    func testPlacesPastTheCapacityLoseTheLeastRecentlyKept() throws {
        let store = reopen()
        for index in 0...KeptPlaces.capacity {  // one more than the capacity
            store.record(.place(PlaceChange(try book("\(index)"), .seconds(100 + index))))
            if index == 0 { store.record(.place(PlaceChange(try book("x"), .seconds(11)))) }
        }
        store.record(.place(PlaceChange(try book("x"), .seconds(12))))  // used again: kept
        store.flush()
        store.close()
        let again = reopen()
        XCTAssertEqual(again.loadedPlaces.count, KeptPlaces.capacity)
        XCTAssertFalse(placeNames(again).contains("0.opus"), "the oldest went")
        XCTAssertFalse(placeNames(again).contains("1.opus"), "and the next oldest, for x")
        XCTAssertEqual(placeNames(again).last, "x.opus")
        XCTAssertEqual(again.loadedPlaces.last?.1, .seconds(12))
    }

    /// A file of schema 8 (linear playback, no places) is migrated: no places, ResumePlaces on, and
    /// places are written after it.
    func testAFileOfSchemaEightIsMigrated() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("state.sqlite").path
        let old = try Database(path: path)
        try old.execute(StateStore.schema)
        for migration in StateStore.migrations.prefix(7) { try old.execute(migration) }
        try old.execute("""
            UPDATE player SET head = 1, next_id = 2, current = 1, position_us = 5000000, intent = 'paused', linear_playback = 1;
            INSERT INTO item (id, uri, next) VALUES (1, 'file:///books/a.opus', NULL);
            """)
        XCTAssertEqual(try old.userVersion, 8)
        old.close()
        let store = reopen()
        let loaded = try XCTUnwrap(store.loaded)
        XCTAssertEqual(loaded.items.map(\.id.rawValue), [1])
        XCTAssertTrue(loaded.settings.linearPlayback)
        XCTAssertTrue(loaded.settings.resumePlaces, "a file from before places keeps them")
        XCTAssertEqual(store.loadedPlaces.count, 0)
        store.record(.place(PlaceChange(try book("a"), .seconds(40))))
        store.flush()
        store.close()
        XCTAssertEqual(placeNames(reopen()), ["a.opus"])
    }

    /// A file of schema 9 (places, no NextByChapter) is migrated: its settings and places stay,
    /// NextByChapter is off, and is saved after it.
    func testAFileOfSchemaNineIsMigrated() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("state.sqlite").path
        let old = try Database(path: path)
        try old.execute(StateStore.schema)
        for migration in StateStore.migrations.prefix(8) { try old.execute(migration) }
        try old.execute("""
            UPDATE player SET head = 1, next_id = 2, current = 1, position_us = 5000000, intent = 'paused', resume_places = 0;
            INSERT INTO item (id, uri, next) VALUES (1, 'file:///books/a.opus', NULL);
            INSERT INTO place (uri, position_us, used) VALUES ('file:///books/a.opus', 40000000, 1);
            """)
        XCTAssertEqual(try old.userVersion, 9)
        old.close()
        let store = reopen()
        let loaded = try XCTUnwrap(store.loaded)
        XCTAssertEqual(loaded.items.map(\.id.rawValue), [1])
        XCTAssertFalse(loaded.settings.resumePlaces)
        XCTAssertFalse(loaded.settings.nextByChapter, "off in a file from before it")
        XCTAssertEqual(placeNames(store), ["a.opus"])
        var settings = loaded.settings
        settings.nextByChapter = true
        store.record(.settings(settings))
        store.flush()
        store.close()
        let again = reopen()
        XCTAssertEqual(again.loaded?.settings.nextByChapter, true, "saved")
        XCTAssertEqual(again.loaded?.settings.resumePlaces, false)
    }

    /// When the file needs the whole state (it disagreed, was replaced or could not be written),
    /// the places written before it are dropped with the rest, and the whole set written after it
    /// replaces them: what the recorder sends (`.replaced`, then `.places`).
    func testThePlacesAreWrittenWholeWithTheWholeState() throws {
        let store = reopen()
        let asked = expectation(description: "the whole state asked for")
        store.onNeedsFullState = { asked.fulfill() }
        store.record(.place(PlaceChange(try book("old"), .seconds(40))))
        store.flush()
        store.record(.moved(ItemID(99), after: nil))
        store.flush()
        wait(for: [asked], timeout: 5)
        store.record(.place(PlaceChange(try book("dropped"), .seconds(40))))  // before the whole state: dropped
        store.record(.replaced([], SavedSettings()))
        store.record(.places(KeptPlaces([(try book("a"), .seconds(41)), (try book("b"), .seconds(42))])))
        store.flush()
        store.close()
        XCTAssertEqual(placeNames(reopen()), ["a.opus", "b.opus"])
    }

    /// A corrupt file is moved aside (as ever), and the fresh one keeps places.
    func testACorruptFileStartsWithNoPlacesAndKeepsNewOnes() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(repeating: 0x5a, count: 8192).write(to: directory.appendingPathComponent("state.sqlite"))
        let store = reopen()
        XCTAssertEqual(store.loadedPlaces.count, 0)
        store.record(.place(PlaceChange(try book("a"), .seconds(40))))
        store.flush()
        store.close()
        XCTAssertEqual(placeNames(reopen()), ["a.opus"])
    }
}
