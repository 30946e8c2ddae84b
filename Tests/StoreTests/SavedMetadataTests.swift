import Foundation
import PlayerModel
@testable import Store
import XCTest

/// Each entry's tags and length are saved on its own row (schema 7, issue 30): written one row at
/// a time as they become known, kept through a whole-queue rewrite, and read back with the queue,
/// 10,000 of them quickly.
extension StateStoreTests {
    func entry(_ id: UInt64, metadata: SavedMetadata? = nil) throws -> QueueEntry {
        QueueEntry(id: ItemID(id), uri: try MediaURI("/music/\(id).flac"), metadata: metadata)
    }

    /// Every saved field set, lists of two.
    func full(_ number: Int) -> SavedMetadata {
        var tags = Metadata()
        tags.title = "Title \(number), the long one"
        tags.artists = ["Ann", "Bob"]
        tags.album = "Album"
        tags.albumArtists = ["Various"]
        tags.trackNumber = number
        tags.discNumber = 2
        tags.genres = ["Jazz", "Blues"]
        tags.date = "2024-05-17"
        tags.comment = "ünïcode ✓"
        tags.audioCodec = "FLAC"
        tags.videoCodec = "H.264"
        tags.coverURL = URL(string: "file:///home/me/.cache/tonearm/covers/ab%20cd.jpg")
        tags.organization = "Label"
        return SavedMetadata(tags: tags, duration: .milliseconds(183_456))
    }

    func testTagsAndLengthComeBackWithTheirEntries() throws {
        var store: StateStore? = reopen()
        var titleOnly = Metadata()
        titleOnly.title = "Only a title"
        store?.record(.inserted([try entry(1), try entry(2), try entry(3)], after: nil))
        var separated = full(7)
        separated.tags.artists = ["Ann", "Bob \u{1E}x"]  // a tag with one of the separators in it
        store?.record(.metadata(ItemID(2), separated))
        store?.record(.metadata(ItemID(3), SavedMetadata(tags: titleOnly, duration: nil)))
        store?.record(.metadata(ItemID(1), SavedMetadata(tags: Metadata(), duration: .seconds(3))))
        store?.flush()
        store?.record(.metadata(ItemID(3), SavedMetadata(tags: titleOnly, duration: .seconds(9))))
        store?.flush()
        XCTAssertEqual(store?.rowsWrittenByLastWrite, 1, "what became known of one entry writes its row only")
        store?.record(.metadata(ItemID(99), full(1)))  // removed before its tags were read: nothing to write
        store?.flush()
        XCTAssertEqual(store?.rowsWrittenByLastWrite, 0)
        store?.close()
        store = nil

        let loaded = try XCTUnwrap(reopen().loaded)
        var expected = full(7)
        expected.tags.artists = ["Ann", "Bob  x"]  // the separator became a space, nothing else was lost
        XCTAssertEqual(loaded.items.map(\.metadata), [SavedMetadata(tags: Metadata(), duration: .seconds(3)), expected,
                                                      SavedMetadata(tags: titleOnly, duration: .seconds(9))])
    }

    func testAWholeRewriteKeepsThem() throws {
        var store: StateStore? = reopen()
        store?.record(.replaced([try entry(5, metadata: full(1)), try entry(6)], SavedSettings(currentID: ItemID(5))))
        store?.flush()
        store?.close()
        store = nil
        let loaded = try XCTUnwrap(reopen().loaded)
        XCTAssertEqual(loaded.items.map(\.metadata), [full(1), nil])
    }

    /// 10,000 entries with their tags: one write, one read, each well under the time a person
    /// notices at start (the figures themselves are Benchmarks/queue.py's).
    func testTenThousandEntriesWithTagsSaveAndLoadWhole() throws {
        let store = reopen()
        let entries = try (1...10_000).map { try entry(UInt64($0), metadata: full($0)) }
        store.record(.inserted(entries, after: nil))
        store.flush()
        store.close()
        let loaded = try XCTUnwrap(reopen().loaded)
        XCTAssertEqual(loaded.items.count, 10_000)
        XCTAssertEqual(loaded.items[4_999].metadata?.tags.title, "Title 5000, the long one")
        XCTAssertEqual(loaded.items[4_999].metadata?.tags.trackNumber, 5_000)
        XCTAssertEqual(loaded.items.last?.metadata?.duration, .milliseconds(183_456))
    }
}
