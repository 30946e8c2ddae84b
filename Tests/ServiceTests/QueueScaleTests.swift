import DBus
import Dispatch
import Foundation
import Logging
import TestSupport
import XCTest

/// A whole music folder queued: what a user sees of it through D-Bus. No timings are asserted
/// here (Benchmarks/queue.py measures them); these say that a long queue is listed and edited
/// right, that tags are read when asked for, and that the service keeps answering meanwhile.
final class QueueScaleTests: ServiceTestCase {
    typealias H = ServiceHarness

    /// A folder of `count` hard links to `file`, named `name(1)`, `name(2)`, ..., in
    /// `per`-file subfolders when `per` is given (`part 1/`, `part 2/`, ...).
    private func folder(_ folderName: String, of count: Int, linking file: URL, per: Int? = nil,
                        name: (Int) -> String) throws -> URL {
        let root = harness.directory.appendingPathComponent(folderName)
        for index in 1...count {
            var directory = root
            if let per { directory = root.appendingPathComponent("part \((index - 1) / per + 1)") }
            if index == 1 || per.map({ (index - 1) % $0 == 0 }) == true {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            }
            try FileManager.default.linkItem(at: file, to: directory.appendingPathComponent(name(index)))
        }
        return root
    }

    /// `GetTracksMetadata(ids)`: one a{sv} per known id.
    private func tracksMetadata(_ ids: [String]) throws -> [[String: Typed]] {
        let reply = try harness.call(H.trackList, "GetTracksMetadata", "ao", ["\(ids.count)"] + ids)
        let list = try XCTUnwrap(reply.first?.data as? [Any])
        return list.compactMap { Typed(type: "a{sv}", data: $0).dictionary }
    }

    private func enqueue(_ uris: [String], playNow: Bool = false) throws -> [String] {
        try harness.call(H.extensionInterface, "Enqueue", "asb", ["\(uris.count)"] + uris + [playNow ? "true" : "false"])
            .first?.strings ?? []
    }

    func testTenThousandTracksAreListedInOrderAndEditedOneByOne() throws {
        let seed = try media.tone("seed", format: .wav, seconds: 0.3)
        let big = try folder("big", of: 10_000, linking: seed) { "track \($0).wav" }
        try harness.start()
        let mark = harness.mark()
        let ids = try enqueue([H.uri(big)])
        XCTAssertEqual(ids.count, 10_000)
        XCTAssertEqual(Set(ids).count, 10_000, "every track has an id of its own")
        XCTAssertEqual(try harness.tracks, ids)
        let replaced = try harness.waitForSignal(H.trackList, "TrackListReplaced", from: mark)
        XCTAssertEqual(replaced.arguments.first?.strings, ids, "a list filled from empty is announced whole")
        // the files in natural order, each id the track of its file
        let picked = [0, 1, 9, 99, 4_999, 9_999]
        let urls = try tracksMetadata(picked.map { ids[$0] }).map { $0["xesam:url"]?.string }
        XCTAssertEqual(urls, picked.map { H.uri(big.appendingPathComponent("track \($0 + 1).wav")) })

        // edits in the middle of it are announced one by one, each after the right track
        let edits = harness.mark()
        let extra = try media.tone("extra", format: .wav, seconds: 0.3)
        try harness.call(H.trackList, "AddTrack", "sob", [H.uri(extra), ids[4_999], "false"])
        let added = try harness.waitForSignal(H.trackList, "TrackAdded", from: edits)
        XCTAssertEqual(added.arguments.last?.string, ids[4_999], "AfterTrack")
        let newID = try XCTUnwrap(added.arguments.first?.dictionary?["mpris:trackid"]?.string)
        XCTAssertEqual(added.arguments.first?.dictionary?["xesam:url"]?.string, H.uri(extra))
        var expected = ids
        expected.insert(newID, at: 5_000)
        XCTAssertEqual(try harness.tracks, expected)
        try harness.call(H.trackList, "RemoveTrack", "o", [ids[7_000]])
        try harness.waitForSignal(H.trackList, "TrackRemoved", from: edits) { $0.arguments.first?.string == ids[7_000] }
        expected.removeAll { $0 == ids[7_000] }
        XCTAssertEqual(try harness.tracks, expected)
        try harness.call(H.trackList, "GoTo", "o", [ids[9_000]])
        try harness.waitForTrack(ids[9_000])
        XCTAssertEqual(try harness.metadata["xesam:url"]?.string, H.uri(big.appendingPathComponent("track 9001.wav")))
        XCTAssertEqual(try harness.tracks, expected, "GoTo does not change the list")
        XCTAssertFalse(harness.watcher.messages(from: edits).contains { $0.member == "TrackListReplaced" },
                       "single edits are not announced as a new list")
    }

    /// Many tracks added to a list that has some: one TrackListReplaced with the whole list, not
    /// a signal per track.
    func testAManyTrackEnqueueIntoAListIsAnnouncedAsOneReplacement() throws {
        let seed = try media.tone("seed", format: .wav, seconds: 0.3)
        let album = try folder("album", of: 100, linking: seed) { "\($0) song.wav" }
        try harness.start()
        let first = try enqueue([H.uri(seed)])
        // the bus monitor may see the seed's own TrackAdded after busctl has its reply: mark after it
        try harness.waitForSignal(H.trackList, "TrackAdded", from: 0)
        let mark = harness.mark()
        let ids = try enqueue([H.uri(album)])
        XCTAssertEqual(ids.count, 100)
        let replaced = try harness.waitForSignal(H.trackList, "TrackListReplaced", from: mark)
        XCTAssertEqual(replaced.arguments.first?.strings, first + ids)
        XCTAssertEqual(try harness.tracks, first + ids)
        XCTAssertFalse(harness.watcher.messages(from: mark).contains { $0.member == "TrackAdded" })
    }

    /// Tags of tracks that have not played are read when a client asks for them (and for the few
    /// about to play), not for a whole folder at once; TrackMetadataChanged brings them.
    func testTagsOfQueuedTracksAreReadWhenAskedFor() throws {
        let tagged = try tagged("tagged", title: "Lazily Read", artist: "The Readers", album: "Later", seconds: 0.5)
        let shelf = try folder("shelf", of: 200, linking: tagged) { "song \($0).ogg" }
        try harness.start()
        let ids = try enqueue([H.uri(shelf)])
        XCTAssertEqual(ids.count, 200)
        // the first tracks are about to play: their tags are read without asking
        let aboutToPlay = ids[1]
        if try tracksMetadata([aboutToPlay]).first?["xesam:title"]?.string != "Lazily Read" {
            try harness.waitForSignal(H.trackList, "TrackMetadataChanged", from: 0) {
                $0.arguments.first?.string == aboutToPlay && $0.arguments.last?.dictionary?["xesam:title"]?.string == "Lazily Read"
            }
        }
        // one far down the list was not read: the answer has its file name, and its tags follow
        let far = ids[150]
        let mark = harness.mark()
        let before = try XCTUnwrap(try tracksMetadata([far]).first)
        XCTAssertEqual(before["xesam:title"]?.string, "song 151.ogg", "not read before it was asked for")
        XCTAssertNil(before["xesam:artist"])
        let changed = try harness.waitForSignal(H.trackList, "TrackMetadataChanged", from: mark) { $0.arguments.first?.string == far }
        let announced = try XCTUnwrap(changed.arguments.last?.dictionary)
        XCTAssertEqual(announced["xesam:title"]?.string, "Lazily Read")
        XCTAssertEqual(announced["xesam:artist"]?.strings, ["The Readers"])
        XCTAssertEqual(announced["mpris:trackid"]?.string, far)
        let after = try XCTUnwrap(try tracksMetadata([far]).first)
        XCTAssertEqual(after["xesam:title"]?.string, "Lazily Read")
        XCTAssertEqual(after["xesam:album"]?.string, "Later")
        XCTAssertEqual(after["mpris:length"]?.type, "x")
        // and the tracks nobody asked about were left alone
        let untouched = try XCTUnwrap(try tracksMetadata([ids[100]]).first)
        XCTAssertEqual(untouched["xesam:title"]?.string, "song 101.ogg")
        let announcedIDs = Set(harness.watcher.messages().filter { $0.member == "TrackMetadataChanged" }.compactMap { $0.arguments.first?.string })
        XCTAssertLessThan(announcedIDs.count, 20, "a handful read, not the folder: \(announcedIDs.count)")
    }

    /// Expanding a folder runs off the queue that answers D-Bus: a Ping sent right after an
    /// Enqueue of a 10,000-file folder, on the same connection, is answered before the Enqueue.
    /// (busctl makes one call at a time: two outstanding calls need a connection of our own.)
    func testPingIsAnsweredWhileABigFolderIsExpanded() throws {
        let seed = try media.tone("seed", format: .wav, seconds: 0.3)
        let big = try folder("nested", of: 10_000, linking: seed, per: 100) { "\($0).wav" }
        try harness.start()
        let queue = DispatchQueue(label: "test.pipelined")
        let connection = try queue.sync { try Connection(address: harness.bus.address, queue: queue, logger: Logger(label: "ServiceTests")) }
        defer { queue.sync { connection.close() } }
        let order = Replies()
        let done = expectation(description: "Enqueue and Pings answered")
        done.expectedFulfillmentCount = 6
        let path = try ObjectPath(validating: H.path)
        let destination = harness.busName
        queue.sync {
            connection.call(destination: destination, path: path, interface: H.extensionInterface, member: "Enqueue",
                            arguments: [.stringArray([H.uri(big)]), .bool(false)], timeout: .seconds(Int(60 * H.slowdown))) { reply in
                order.add("Enqueue", reply)
                done.fulfill()
            }
            for index in 1...5 {
                connection.call(destination: destination, path: path, interface: "org.freedesktop.DBus.Peer", member: "Ping",
                                timeout: .seconds(10)) { reply in
                    order.add("Ping \(index)", reply)
                    done.fulfill()
                }
            }
        }
        wait(for: [done], timeout: 90 * H.slowdown)
        let replies = order.all
        XCTAssertEqual(replies.first?.name, "Ping 1", "the first Ping waited for the folder: \(replies.map(\.name))")
        XCTAssertTrue(replies.allSatisfy(\.succeeded), "\(replies)")
        let enqueued = try XCTUnwrap(replies.first { $0.name == "Enqueue" }?.values.first?.arrayValue)
        XCTAssertEqual(enqueued.count, 10_000)
        let tracks = try harness.tracks
        XCTAssertEqual(tracks.count, 10_000)
        XCTAssertEqual(tracks, enqueued.compactMap { $0.objectPathValue?.rawValue })
        let last = try XCTUnwrap(try tracksMetadata([tracks[9_999]]).first?["xesam:url"]?.string)
        XCTAssertEqual(last, H.uri(big.appendingPathComponent("part 100/10000.wav")))
    }

    /// A folder given on tonearmd's command line is walked after the name is taken, off the
    /// queue that answers: the service answers at once, and the folder is queued and played.
    func testAFolderOnTheCommandLineIsQueuedWhileTheServiceAnswers() throws {
        let long = try media.tone("long", format: .wav, seconds: 30)
        let big = try folder("argument", of: 5_000, linking: long, per: 500) { "\($0).wav" }
        try harness.start([big.path])
        try harness.ping()
        try harness.waitForStatus("Playing", timeout: 60 * H.slowdown)
        let tracks = try harness.tracks
        XCTAssertEqual(tracks.count, 5_000)
        XCTAssertEqual(try harness.trackID, tracks.first)
    }
}

/// Replies in the order they came, filled in on the connection's queue.
private final class Replies: @unchecked Sendable {
    struct Reply: CustomStringConvertible {
        var name: String
        var succeeded: Bool
        var values: [DBusValue]
        var description: String { "\(name): \(succeeded ? "ok" : "error")" }
    }
    private let lock = NSLock()
    private var replies: [Reply] = []
    func add(_ name: String, _ result: Result<[DBusValue], DBusError>) {
        let reply: Reply = switch result {
        case .success(let values): Reply(name: name, succeeded: true, values: values)
        case .failure: Reply(name: name, succeeded: false, values: [])
        }
        lock.withLock { replies.append(reply) }
    }
    var all: [Reply] { lock.withLock { replies } }
}
