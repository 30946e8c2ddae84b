import Foundation
import PlayerModel
import XCTest

final class MediaURITests: XCTestCase {
    /// Relative paths are made absolute by their text alone: no symlink is resolved (that would be
    /// a readlink per component on the queue that answers D-Bus).
    func testRelativePathsAreNormalizedByTextAlone() throws {
        XCTAssertEqual(try MediaURI("a/./b/../c.flac", relativeTo: "/music").path, "/music/a/c.flac")
        XCTAssertEqual(try MediaURI("../../../x.ogg", relativeTo: "/music").path, "/x.ogg")
        XCTAssertEqual(try MediaURI("//music///a.flac").path, "/music/a.flac")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-link-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let link = directory.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/usr/share")
        XCTAssertEqual(try MediaURI("link/a.flac", relativeTo: directory.path).path, link.path + "/a.flac",
                       "the link stays a link")
    }

    /// A URI or path past `maximumLength` is refused before it is parsed, with its size in the
    /// message; one at the limit is parsed as usual.
    func testATooLongURIIsRefusedUnparsed() throws {
        let atLimit = "http://example.org/" + String(repeating: "a", count: MediaURI.maximumLength - 19)
        XCTAssertEqual(try MediaURI(atLimit).string, atLimit)
        for long in ["http://example.org/" + String(repeating: "a", count: MediaURI.maximumLength),
                     "/" + String(repeating: "b", count: 1 << 20)] {
            XCTAssertThrowsError(try MediaURI(long)) { error in
                let error = error as? ItemError
                XCTAssertEqual(error?.kind, .invalidURI)
                XCTAssertEqual(error?.message.hasPrefix("URI too long: \(long.utf8.count) bytes (at most 16384)"), true,
                               error?.message ?? "")
            }
        }
    }

    /// A title for an untagged item: the last component of the path, its escapes decoded as bytes.
    func testTheDisplayNameIsTheLastComponentDecoded() throws {
        XCTAssertEqual(try MediaURI("/music/Les Étés/01 — Intro.flac").displayName, "01 — Intro.flac")
        XCTAssertEqual(try MediaURI("file:///music/a%20b/c%23d%3F.ogg").displayName, "c#d?.ogg")
        XCTAssertEqual(try MediaURI("file://localhost/music/x.mp3").displayName, "x.mp3")
        XCTAssertEqual(try MediaURI("file:///music/%FF%FEname.wav").displayName, "\u{FFFD}\u{FFFD}name.wav",
                       "bytes that are not UTF-8 become U+FFFD")
        XCTAssertEqual(try MediaURI("file:///music/100%25.flac").displayName, "100%.flac")
        XCTAssertEqual(try MediaURI("file:///music/album/").displayName, "album")
        XCTAssertEqual(try MediaURI("http://example.org/radio/stream.mp3?session=1").displayName, "stream.mp3")
    }
}
