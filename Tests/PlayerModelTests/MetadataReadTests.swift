import Foundation
import PlayerModel
import XCTest

/// Tags of items that have not played are read lazily: the items about to play and those a
/// client asks about, each once, two at a time. The machine on its own: reads are actions.
final class MetadataReadTests: XCTestCase {
    func uris(_ count: Int) -> [MediaURI] {
        (0..<count).map { MediaURI(fileURL: URL(fileURLWithPath: "/music/\($0).flac")) }
    }

    func reads(_ actions: [PlayerAction]) -> [ItemID] {
        actions.compactMap { if case .readMetadata(let id, _) = $0 { id } else { nil } }
    }

    func tags(_ title: String) -> DiscoveredMedia {
        var metadata = Metadata()
        metadata.title = title
        return DiscoveredMedia(metadata: metadata, duration: .seconds(3), isSeekable: true, isLive: false)
    }

    /// Finishes every read as it is asked for, until none is; returns the ids read, in order.
    func readAll(_ machine: inout PlayerMachine, starting actions: [PlayerAction]) -> [ItemID] {
        readAll(&machine, started: reads(actions))
    }

    func readAll(_ machine: inout PlayerMachine, started: [ItemID]) -> [ItemID] {
        var pending = started
        var done: [ItemID] = []
        while !pending.isEmpty {
            let id = pending.removeFirst()
            done.append(id)
            machine.metadataRead(id, .success(tags("song \(id.rawValue)")))
            pending += reads(machine.takeActions())
        }
        return done
    }

    func testAFolderOfTenThousandReadsOnlyTheItemsAboutToPlay() throws {
        var machine = PlayerMachine(hasMetadataReader: true)
        let ids = try machine.enqueue(uris(10_000), at: .end)
        let first = machine.takeActions()
        XCTAssertEqual(reads(first), [ids[0], ids[1]], "two at a time, the current item first")
        XCTAssertEqual(readAll(&machine, starting: first), Array(ids[0...3]), "the current item and the next three")
        XCTAssertEqual(machine.item(ids[2])?.metadata.title, "song \(ids[2].rawValue)")
        XCTAssertNil(machine.item(ids[4])?.metadata.title, "not asked for: not read")
    }

    func testWhatAClientAsksForIsReadOnceAndAnnounced() throws {
        var machine = PlayerMachine(hasMetadataReader: true)
        let ids = try machine.enqueue(uris(1000), at: .end)
        _ = readAll(&machine, starting: machine.takeActions())
        machine.wantMetadata([ids[500], ids[2], ids[501], ids[500]])
        let actions = machine.takeActions()
        XCTAssertEqual(reads(actions), [ids[500], ids[501]], "items read already are not read again")
        machine.metadataRead(ids[500], .success(tags("five hundred")))
        XCTAssertTrue(machine.takeActions().contains(.emit(.metadataChanged(ids[500], tags("five hundred").metadata))))
        machine.metadataRead(ids[501], .failure(ItemError(.decode, "cannot read it")))
        XCTAssertTrue(reads(machine.takeActions()).isEmpty)
        machine.wantMetadata([ids[500], ids[501]])
        XCTAssertTrue(reads(machine.takeActions()).isEmpty, "each item is read once, whatever came of it")
    }

    func testTheNextItemsAreReadWhenTheCurrentOneMoves() throws {
        var machine = PlayerMachine(hasMetadataReader: true)
        let ids = try machine.enqueue(uris(100), at: .end)
        _ = readAll(&machine, starting: machine.takeActions())
        try machine.jump(to: ids[50])
        XCTAssertEqual(readAll(&machine, starting: machine.takeActions()), Array(ids[50...53]))
        try machine.next()
        XCTAssertEqual(readAll(&machine, starting: machine.takeActions()), [ids[54]])
    }

    func testRemovedItemsAreNotRead() throws {
        var machine = PlayerMachine(hasMetadataReader: true)
        let ids = try machine.enqueue(uris(100), at: .end)
        _ = readAll(&machine, starting: machine.takeActions())
        machine.wantMetadata(Array(ids[10...19]))
        let started = reads(machine.takeActions())
        XCTAssertEqual(started, [ids[10], ids[11]])
        try machine.remove(Array(ids[12...18]))
        let rest = readAll(&machine, started: started + reads(machine.takeActions()))
        XCTAssertEqual(rest, [ids[10], ids[11], ids[19]])
    }
}
