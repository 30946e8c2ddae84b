import DBus
import Foundation
@testable import MPRIS
@testable import PlayerModel
import XCTest

/// An item's metadata as clients get it: every field in its exact type, the entries in the order
/// of their keys (the order `DBusValue.vardict` gives, so equal metadata encodes alike).
final class MetadataMapTests: XCTestCase {
    func testEveryFieldHasItsTypeAndTheEntriesComeInTheOrderOfTheirKeys() throws {
        var item = Item(id: ItemID(7), uri: try MediaURI("file:///music/a%20song.flac"))
        var metadata = Metadata()
        metadata.title = "Song"
        metadata.artists = ["Artist"]
        metadata.album = "Album"
        metadata.albumArtists = ["Band"]
        metadata.trackNumber = 3
        metadata.discNumber = 1
        metadata.genres = ["Jazz"]
        metadata.date = "2024"
        metadata.comment = "Remark"
        metadata.coverURL = URL(string: "file:///covers/1.png")
        item.metadata = metadata
        item.duration = .seconds(3)
        let value = MetadataMap.value(item)
        XCTAssertEqual(value.signature, "a{sv}")
        let expected: [String: DBusValue] = [
            "mpris:artUrl": .string("file:///covers/1.png"), "mpris:length": .int64(3_000_000),
            "mpris:trackid": .objectPath("/io/github/tonearm/Track/7"), "xesam:album": .string("Album"),
            "xesam:albumArtist": .stringArray(["Band"]), "xesam:artist": .stringArray(["Artist"]),
            "xesam:comment": .stringArray(["Remark"]), "xesam:contentCreated": .string("2024"),
            "xesam:discNumber": .int32(1), "xesam:genre": .stringArray(["Jazz"]), "xesam:title": .string("Song"),
            "xesam:trackNumber": .int32(3), "xesam:url": .string("file:///music/a%20song.flac"),
        ]
        XCTAssertEqual(value, .vardict(expected))
    }

    func testAnItemWithNoTagsHasItsIdUrlAndATitleFromItsName() throws {
        let item = Item(id: ItemID(8), uri: try MediaURI("file:///music/b.wav"))
        guard case .dictionary(_, _, let entries) = MetadataMap.value(item) else { return XCTFail("not a dictionary") }
        XCTAssertEqual(entries.map(\.key), [.string("mpris:trackid"), .string("xesam:title"), .string("xesam:url")])
        XCTAssertEqual(entries[1].value, .variant(.string("b.wav")))
    }
}
