import FoundationEssentials
import PlayerModel
@testable import Playlists
import XCTest

/// The active playlist's rules, and GetPlaylists' orderings, without a bus.
final class ActivePlaylistTrackerTests: XCTestCase {
    func entry(_ id: UInt64, _ name: String, modified: Double = 0, created: Double = 0, played: Double? = nil) -> PlaylistEntry {
        PlaylistEntry(id: id, path: "/p/\(name).m3u", name: name, modified: Date(timeIntervalSince1970: modified),
                      created: Date(timeIntervalSince1970: created), lastPlayed: played.map { Date(timeIntervalSince1970: $0) })
    }

    func ids(_ range: ClosedRange<UInt64>) -> [ItemID] { range.map(ItemID.init) }

    func testActiveUntilTheLastOfItsItemsIsRemoved() {
        var tracker = ActivePlaylistTracker()
        XCTAssertNil(tracker.record)
        tracker.activated(entry(7, "a"), items: ids(10...12))
        XCTAssertEqual(tracker.record, ActivePlaylistRecord(playlist: 7, items: 10...12))
        XCTAssertFalse(tracker.queueChanged(.inserted(ids(13...13), after: nil)))
        XCTAssertFalse(tracker.queueChanged(.removed(ids(13...13))), "an item its activation did not give")
        XCTAssertFalse(tracker.queueChanged(.removed(ids(10...11))))
        XCTAssertFalse(tracker.queueChanged(.moved(ItemID(12), after: nil)))
        XCTAssertEqual(tracker.playlist?.id, 7)
        XCTAssertTrue(tracker.queueChanged(.removed(ids(12...12))), "the last of its items")
        XCTAssertNil(tracker.playlist)
        XCTAssertFalse(tracker.queueChanged(.replaced([])), "none active: nothing ends")
    }

    func testAReplacedQueueOrAGoneFileEndsIt() {
        var tracker = ActivePlaylistTracker()
        tracker.activated(entry(1, "a"), items: ids(1...2))
        XCTAssertTrue(tracker.queueChanged(.replaced(ids(5...6))))
        XCTAssertNil(tracker.record)

        tracker.activated(entry(1, "a"), items: ids(1...2))
        XCTAssertFalse(tracker.listed([entry(1, "renamed"), entry(2, "b")]))
        XCTAssertEqual(tracker.playlist?.name, "renamed", "the listing's entry")
        XCTAssertTrue(tracker.listed([entry(2, "b")]))
        XCTAssertNil(tracker.playlist)

        tracker.activated(entry(1, "a"), items: [])
        XCTAssertNil(tracker.playlist, "an activation that queued nothing")
    }

    func testRestoredOnlyWhileListedAndQueued() {
        let record = ActivePlaylistRecord(playlist: 3, items: 20...29)
        var tracker = ActivePlaylistTracker()
        XCTAssertFalse(tracker.restore(record, queued: ids(1...5), list: [entry(3, "c")]), "none of its items queued")
        XCTAssertFalse(tracker.restore(record, queued: ids(20...21), list: [entry(4, "d")]), "not listed")
        XCTAssertNil(tracker.playlist)
        XCTAssertTrue(tracker.restore(record, queued: ids(1...21), list: [entry(3, "c")]))
        XCTAssertEqual(tracker.record, record)
        XCTAssertFalse(tracker.queueChanged(.removed(ids(20...20))))
        XCTAssertTrue(tracker.queueChanged(.removed(ids(21...21))), "two of its items were left")
    }

    func testOrderings() {
        let list = [entry(1, "b10", modified: 3, created: 1, played: 5), entry(2, "b9", modified: 1, created: 2),
                    entry(3, "a", modified: 2, created: 2, played: 4)]
        XCTAssertEqual(PlaylistOrdering.alphabetical.sorted(list).map(\.id), [3, 2, 1], "natural order")
        XCTAssertEqual(PlaylistOrdering.modified.sorted(list).map(\.id), [2, 3, 1])
        XCTAssertEqual(PlaylistOrdering.created.sorted(list).map(\.id), [1, 2, 3], "ties by id")
        XCTAssertEqual(PlaylistOrdering.played.sorted(list).map(\.id), [2, 3, 1], "never played first")
        XCTAssertEqual(PlaylistOrdering.user.sorted(list).map(\.id), [1, 2, 3])
        XCTAssertEqual(PlaylistOrdering("LastPlayDate"), .played, "the spec's member names are taken too")
        XCTAssertEqual(PlaylistOrdering("Shuffled"), .user)
    }

    func testARelistingKeepsTheLaterLastPlayed() {
        let known = [entry(1, "a", played: 10), entry(2, "b", played: 3)]
        let relisted = PlaylistEntry.relisted([entry(1, "a", played: 5), entry(2, "b", played: 8), entry(3, "c")], keepingLastPlayedOf: known)
        XCTAssertEqual(relisted.map { $0.lastPlayed?.timeIntervalSince1970 }, [10, 8, nil])
    }
}
