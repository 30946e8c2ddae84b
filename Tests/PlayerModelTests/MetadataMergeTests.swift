import Foundation
import PlayerModel
import XCTest

/// What is known of an item only grows (issue 37, "Metadata never goes back"): a tag, a length,
/// a cover once known is never dropped by a later event; a later one may refine it. The machine on
/// its own, fed what the engine and the tag reader would send.
final class MetadataMergeTests: XCTestCase {
    let uris = ["/music/a.ogg", "/music/b.mp3", "/music/c.flac"].map { MediaURI(fileURL: URL(fileURLWithPath: $0)) }

    func read(_ title: String, duration: Duration?) -> DiscoveredMedia {
        var metadata = Metadata()
        metadata.title = title
        metadata.artists = ["The Testers"]
        return DiscoveredMedia(metadata: metadata, duration: duration, isSeekable: true, isLive: false)
    }

    func snapshot(duration: Duration?) -> EngineSnapshot {
        EngineSnapshot(position: PositionSample(.zero, at: .now), duration: duration, isSeekable: true,
                       loadedRanges: duration.map { [TimeRange(start: .zero, end: $0)] } ?? [])
    }

    /// The generation of the last load among `actions`.
    func loaded(_ actions: [PlayerAction]) -> Generation? {
        actions.compactMap { if case .engine(.load(_, let generation)) = $0 { generation } else { nil } }.last
    }

    func events(_ actions: [PlayerAction]) -> [PlayerEvent] {
        actions.compactMap { if case .emit(let event) = $0 { event } else { nil } }
    }

    func durationEvents(_ actions: [PlayerAction]) -> [Duration?] {
        events(actions).compactMap { if case .durationChanged(_, let duration) = $0 { duration } else { nil } }
    }

    /// A queue of three, playing the first; the second's tags and length read.
    func playingWithTheNextRead(length: Duration?) throws -> (PlayerMachine, [ItemID]) {
        var machine = PlayerMachine(hasMetadataReader: true)
        let ids = try machine.enqueue(uris, at: .end)
        machine.play()
        let generation = try XCTUnwrap(loaded(machine.takeActions()))
        machine.handle(.asyncDone(snapshot(duration: .seconds(6))), of: generation, at: .now)
        machine.metadataRead(ids[1], .success(read("Song in mp3", duration: length)))
        _ = machine.takeActions()
        XCTAssertEqual(machine.item(ids[1])?.duration, length)
        return (machine, ids)
    }

    /// Next onto an MP3 and Pause: its preroll has no length (mpegaudioparse has no estimate yet),
    /// and the length its tag read found stays, unannounced again.
    func testALengthKnownFromTheTagReadSurvivesAPrerollWithoutOne() throws {
        var (machine, ids) = try playingWithTheNextRead(length: .milliseconds(5625))
        try machine.next()
        machine.pause()
        let generation = try XCTUnwrap(loaded(machine.takeActions()))
        machine.handle(.durationChanged(nil), of: generation, at: .now)
        machine.handle(.stateChanged(.paused, pending: nil, position: nil), of: generation, at: .now)
        machine.handle(.asyncDone(snapshot(duration: nil)), of: generation, at: .now)
        let actions = machine.takeActions()
        XCTAssertEqual(machine.item(ids[1])?.duration, .milliseconds(5625))
        XCTAssertEqual(machine.item(ids[1])?.status, .readyToPlay)
        XCTAssertEqual(durationEvents(actions), [], "nothing new to announce: \(events(actions))")
    }

    /// A length the pipeline measures replaces the estimate the tag read made.
    func testAMoreExactLengthRefinesIt() throws {
        var (machine, ids) = try playingWithTheNextRead(length: .milliseconds(5625))
        try machine.next()
        let generation = try XCTUnwrap(loaded(machine.takeActions()))
        machine.handle(.asyncDone(snapshot(duration: .seconds(6))), of: generation, at: .now)
        XCTAssertEqual(machine.item(ids[1])?.duration, .seconds(6))
        XCTAssertEqual(durationEvents(machine.takeActions()), [.seconds(6)])
        machine.handle(.durationChanged(nil), of: generation, at: .now)
        XCTAssertEqual(machine.item(ids[1])?.duration, .seconds(6))
        XCTAssertEqual(durationEvents(machine.takeActions()), [])
    }

    /// Tags of the pipeline add to those read, and replace the ones they carry; none is dropped.
    func testTagsOfThePipelineAddToTheReadOnes() throws {
        var (machine, ids) = try playingWithTheNextRead(length: .seconds(6))
        try machine.next()
        let generation = try XCTUnwrap(loaded(machine.takeActions()))
        var codec = Metadata()
        codec.audioCodec = "MPEG-1 Layer 3 (MP3)"
        machine.handle(.tags(codec), of: generation, at: .now)
        var retitled = Metadata()
        retitled.title = "Song in MP3"
        machine.handle(.tags(retitled), of: generation, at: .now)
        let item = try XCTUnwrap(machine.item(ids[1]))
        XCTAssertEqual(item.metadata.title, "Song in MP3")
        XCTAssertEqual(item.metadata.artists, ["The Testers"])
        XCTAssertEqual(item.metadata.audioCodec, "MPEG-1 Layer 3 (MP3)")
        _ = machine.takeActions()
        machine.handle(.tags(Metadata()), of: generation, at: .now)
        XCTAssertFalse(events(machine.takeActions()).contains { if case .metadataChanged = $0 { true } else { false } },
                       "tags that bring nothing new are not announced")
    }

    /// Played again later, an item keeps what its first play found.
    func testAnItemPlayedAgainKeepsWhatWasFound() throws {
        var (machine, ids) = try playingWithTheNextRead(length: .milliseconds(5625))
        try machine.next()
        var generation = try XCTUnwrap(loaded(machine.takeActions()))
        machine.handle(.asyncDone(snapshot(duration: nil)), of: generation, at: .now)
        machine.handle(.durationChanged(.milliseconds(5990)), of: generation, at: .now)
        machine.previous(now: .now)
        _ = machine.takeActions()
        try machine.next()
        generation = try XCTUnwrap(loaded(machine.takeActions()))
        machine.handle(.asyncDone(snapshot(duration: nil)), of: generation, at: .now)
        XCTAssertEqual(machine.item(ids[1])?.duration, .milliseconds(5990))
        XCTAssertEqual(machine.item(ids[1])?.metadata.title, "Song in mp3")
    }

    // MARK: A current track's tags on their way

    func reads(_ actions: [PlayerAction]) -> [ItemID] {
        actions.compactMap { if case .readMetadata(let id, _) = $0 { id } else { nil } }
    }

    /// A local file made current with nothing read of it awaits its tags until its preroll; one
    /// read before does not.
    func testAFileMadeCurrentAwaitsItsTagsUntilItPrerolls() throws {
        var machine = PlayerMachine(hasMetadataReader: true)
        let files = (0..<6).map { MediaURI(fileURL: URL(fileURLWithPath: "/music/\($0).ogg")) }
        let ids = try machine.enqueue(files, at: .end)
        XCTAssertFalse(machine.awaitsTags(ids[0]), "a stopped player's item not read yet, nor loaded")
        XCTAssertEqual(reads(machine.takeActions()), [ids[0], ids[1]])
        XCTAssertTrue(machine.awaitsTags(ids[0]), "its read runs")
        machine.play()
        var generation = try XCTUnwrap(loaded(machine.takeActions()))
        machine.metadataRead(ids[1], .success(read("one", duration: .seconds(3))))
        _ = machine.takeActions()
        var title = Metadata()
        title.title = "zero"
        machine.handle(.tags(title), of: generation, at: .now)
        XCTAssertTrue(machine.awaitsTags(ids[0]), "its read has not answered, nor its preroll come")
        machine.handle(.asyncDone(snapshot(duration: .seconds(3))), of: generation, at: .now)
        XCTAssertFalse(machine.awaitsTags(ids[0]))
        XCTAssertTrue(events(machine.takeActions()).contains(.itemStatusChanged(ids[0], .readyToPlay)),
                      "the event that ends the wait")
        try machine.next()
        _ = machine.takeActions()
        XCTAssertFalse(machine.awaitsTags(ids[1]), "read while it was next: announced at once")
        XCTAssertFalse(machine.currentItemAwaitsTags)
        try machine.jump(to: ids[5])
        generation = try XCTUnwrap(loaded(machine.takeActions()))
        XCTAssertTrue(machine.currentItemAwaitsTags, "nothing read of it: its load brings its tags")
        XCTAssertFalse(machine.awaitsTags(ids[4]), "only the current item awaits")
        machine.handle(.failed(ItemError(.decode, "cannot decode 5.ogg")), of: generation, at: .now)
        XCTAssertFalse(machine.awaitsTags(ids[5]), "failed: what is shown is all there is")
    }

    /// A stopped player's current item awaits its read; the read's end is announced even when it
    /// found nothing, so that the adapter announces the item.
    func testTheEndOfAReadIsAnnouncedWhileItsItemAwaitsIt() throws {
        var machine = PlayerMachine(hasMetadataReader: true)
        let ids = try machine.enqueue(uris, at: .end)
        XCTAssertEqual(reads(machine.takeActions()), [ids[0], ids[1]])
        XCTAssertTrue(machine.currentItemAwaitsTags)
        machine.metadataRead(ids[0], .failure(ItemError(.decode, "no tags")))
        XCTAssertFalse(machine.currentItemAwaitsTags)
        XCTAssertTrue(events(machine.takeActions()).contains(.metadataChanged(ids[0], Metadata())))
    }

    /// A stream's tags may take the network's time: its change is announced at once.
    func testAStreamNeverAwaitsItsTags() throws {
        var machine = PlayerMachine(hasMetadataReader: true)
        let ids = try machine.enqueue([try MediaURI("http://127.0.0.1:8000/radio")], at: .end)
        machine.play()
        _ = machine.takeActions()
        XCTAssertFalse(machine.awaitsTags(ids[0]))
    }

    // MARK: An estimated length

    /// The engine's estimate at the preroll (an MP3 without a Xing header) gives an item with no
    /// length one; an item with a length keeps its own.
    func testAnEstimateFillsOnlyAMissingLength() throws {
        var machine = PlayerMachine(hasMetadataReader: true)
        let ids = try machine.enqueue(uris, at: .end)
        machine.play()
        var generation = try XCTUnwrap(loaded(machine.takeActions()))
        var estimated = snapshot(duration: nil)
        estimated.durationEstimate = .milliseconds(4693)
        machine.handle(.asyncDone(estimated), of: generation, at: .now)
        XCTAssertEqual(machine.item(ids[0])?.duration, .milliseconds(4693))
        machine.handle(.durationChanged(.milliseconds(5990)), of: generation, at: .now)
        XCTAssertEqual(machine.item(ids[0])?.duration, .milliseconds(5990), "the parser's own estimate, later")
        machine.metadataRead(ids[1], .success(read("Song in mp3", duration: .milliseconds(5625))))
        try machine.next()
        generation = try XCTUnwrap(loaded(machine.takeActions()))
        machine.handle(.asyncDone(estimated), of: generation, at: .now)
        XCTAssertEqual(machine.item(ids[1])?.duration, .milliseconds(5625), "read from more frames than the preroll's")
    }
}
