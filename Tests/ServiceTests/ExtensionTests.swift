import Foundation
import TestSupport
import XCTest

/// io.github.tonearm.Player1: the item's and the transport's real state, Enqueue, Retry, and the
/// one-off events.
final class ExtensionTests: ServiceTestCase {
    typealias H = ServiceHarness
    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"

    func testStatesWhilePlayingALocalFile() throws {
        try harness.startPlaying([try short("ten", seconds: 10)])
        let mark = harness.mark()
        if try harness.get(H.extensionInterface, "TimeControlStatus").string != "playing" {
            try harness.waitForChange(H.extensionInterface, "TimeControlStatus playing", from: mark) {
                $0["TimeControlStatus"]?.string == "playing"
            }
        }
        let ext = try harness.getAll(H.extensionInterface)
        XCTAssertEqual(ext["ItemStatus"]?.string, "readyToPlay")
        XCTAssertEqual(ext["ItemError"]?.data as? [String], ["", ""])
        XCTAssertEqual(ext["TimeControlStatus"]?.string, "playing")
        XCTAssertEqual(ext["WaitingReason"]?.string, "")
        XCTAssertEqual(ext["BufferingPercent"]?.int64, 100, "a local file is not buffered")
        XCTAssertEqual(ext["IsLive"]?.bool, false)
        XCTAssertEqual(ext["Muted"]?.bool, false)
        XCTAssertEqual(ext["LoadedRanges"]?.type, "a(xx)")
        // ItemStatus readyToPlay was announced, not only readable
        XCTAssertTrue(harness.propertiesChanged(H.extensionInterface, from: 0).contains { $0.changed["ItemStatus"]?.string == "readyToPlay" })
    }

    func testTimeControlStatusFollowsPauseAndPlay() throws {
        try harness.startPlaying([try short("ten", seconds: 10)])
        var mark = harness.mark()
        try harness.playerctl("pause")
        try harness.waitForChange(H.extensionInterface, "TimeControlStatus paused", from: mark) { $0["TimeControlStatus"]?.string == "paused" }
        mark = harness.mark()
        try harness.playerctl("play")
        try harness.waitForChange(H.extensionInterface, "TimeControlStatus playing", from: mark) { $0["TimeControlStatus"]?.string == "playing" }
    }

    func testMutedIsWritableAndKeepsTheVolume() throws {
        try harness.startPlaying([try short("ten", seconds: 10)])
        var mark = harness.mark()
        try harness.set(H.player, "Volume", "d", "0.6")
        try harness.waitForChange(H.player, "Volume 0.6", from: mark) { $0["Volume"]?.double == 0.6 }
        mark = harness.mark()
        try harness.set(H.extensionInterface, "Muted", "b", "true")
        try harness.waitForChange(H.extensionInterface, "Muted true", from: mark) { $0["Muted"]?.bool == true }
        XCTAssertEqual(try harness.get(H.extensionInterface, "Muted").bool, true)
        XCTAssertEqual(try harness.get(H.player, "Volume").double, 0.6, "muting keeps the volume")
        mark = harness.mark()
        try harness.set(H.extensionInterface, "Muted", "b", "false")
        try harness.waitForChange(H.extensionInterface, "Muted false", from: mark) { $0["Muted"]?.bool == false }
        XCTAssertEqual(try harness.get(H.player, "Volume").double, 0.6)
        XCTAssertTrue(harness.propertiesChanged(H.player, from: mark).allSatisfy { $0.changed["Volume"] == nil })
    }

    func testEnqueueReturnsTrackIDsAndPlayNowPlaysTheFirst() throws {
        let a = try short("a", seconds: 10, frequency: 440), b = try short("b", seconds: 10, frequency: 660)
        try harness.start()
        let reply = try harness.call(H.extensionInterface, "Enqueue", "asb", ["2", H.uri(a), H.uri(b), "true"])
        XCTAssertEqual(reply.first?.type, "ao")
        let ids = reply.first?.strings ?? []
        XCTAssertEqual(ids.count, 2)
        XCTAssertEqual(try harness.tracks, ids)
        try harness.waitForStatus("Playing")
        try harness.waitForTrack(ids[0])
        XCTAssertEqual(try harness.metadata["xesam:url"]?.string, H.uri(a))
        // appending more does not disturb what plays
        let more = try harness.call(H.extensionInterface, "Enqueue", "asb", ["1", H.uri(a), "false"]).first?.strings ?? []
        XCTAssertEqual(more.count, 1)
        XCTAssertFalse(ids.contains(more[0]), "a track id is never reused")
        XCTAssertEqual(try harness.tracks, ids + more)
        XCTAssertEqual(try harness.trackID, ids[0])
    }

    func testEnqueueOfADirectoryAddsItsFilesInNaturalOrder() throws {
        let directory = harness.directory.appendingPathComponent("album")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let source = try short("one", seconds: 1)
        for name in ["track 10.wav", "track 2.wav", "track 1.wav"] {
            try FileManager.default.copyItem(at: source, to: directory.appendingPathComponent(name))
        }
        try Data("not media".utf8).write(to: directory.appendingPathComponent("notes.txt"))
        try harness.start()
        let uri = URL(fileURLWithPath: directory.path, isDirectory: true).absoluteString
        let ids = try harness.call(H.extensionInterface, "Enqueue", "asb", ["1", uri, "false"]).first?.strings ?? []
        XCTAssertEqual(ids.count, 3, "the three audio files, not notes.txt: \(ids)")
        let reply = try harness.call(H.trackList, "GetTracksMetadata", "ao", ["\(ids.count)"] + ids)
        let list = (reply.first?.data as? [Any] ?? []).compactMap { Typed(type: "a{sv}", data: $0).dictionary }
        let names = list.compactMap { $0["xesam:url"]?.string.flatMap(URL.init(string:))?.lastPathComponent }
        XCTAssertEqual(names, ["track 1.wav", "track 2.wav", "track 10.wav"])
    }

    /// On failure nothing is added: not the good URIs before the bad one either.
    func testEnqueueFailuresAddNothing() throws {
        let good = try short("ten", seconds: 10)
        let missing = harness.directory.appendingPathComponent("missing.ogg")
        try harness.start()
        for (uris, expected) in [
            (["ftp://example.com/a.mp3"], H.errorPrefix),
            ([H.uri(missing)], H.errorPrefix),
            ([H.uri(good), H.uri(missing)], H.errorPrefix),
            (["ht tp://not a uri"], Self.invalidArgs),
        ] {
            let error = try harness.errorReply(H.extensionInterface, "Enqueue", ["array:string:" + uris.joined(separator: ","), "boolean:true"])
            XCTAssertTrue(error?.name.hasPrefix(expected) == true, "Enqueue \(uris): \(error?.description ?? "succeeded")")
            XCTAssertFalse(error?.message.isEmpty ?? true, "an error says why")
            XCTAssertEqual(try harness.tracks, [], "Enqueue \(uris) added tracks")
            XCTAssertEqual(try harness.playbackStatus, "Stopped")
        }
    }

    func testAFileThatIsNotMediaFailsWithItemFailedAndRetryFailsAgain() throws {
        let garbage = try media.generator.garbage("noise.mp3")
        try harness.start([garbage.path])
        let failed = try harness.waitForSignal(H.extensionInterface, "ItemFailed", from: 0)
        XCTAssertEqual(failed.arguments.map(\.signature), ["o", "s", "s"])
        let track = try XCTUnwrap(failed.arguments.first?.string)
        let name = failed.arguments[1].string ?? "", message = failed.arguments[2].string ?? ""
        XCTAssertTrue(name.hasPrefix(H.errorPrefix), "ItemFailed error name \(name)")
        XCTAssertFalse(message.isEmpty)
        XCTAssertEqual(try harness.tracks.first, track)
        try harness.waitForItemStatus("failed")
        XCTAssertEqual(try harness.get(H.extensionInterface, "ItemError").data as? [String], [name, message])
        // the service lives on; a retry of a file that is still broken fails again (or the budget is spent)
        let mark = harness.mark()
        if let error = try harness.errorReply(H.extensionInterface, "Retry") {
            XCTAssertTrue(error.name.hasPrefix(H.errorPrefix), "Retry: \(error)")
        } else {
            let again = try harness.waitForSignal(H.extensionInterface, "ItemFailed", from: mark)
            XCTAssertEqual(again.arguments.first?.string, track)
        }
        try harness.ping()
        XCTAssertEqual(try harness.get(H.extensionInterface, "ItemStatus").string, "failed")
    }

    func testRetryWithoutAFailureDoesNothing() throws {
        try harness.startPlaying([try short("ten", seconds: 10)])
        let track = try harness.trackID
        XCTAssertNil(try harness.errorReply(H.extensionInterface, "Retry"))
        XCTAssertEqual(try harness.playbackStatus, "Playing")
        XCTAssertEqual(try harness.trackID, track)
        XCTAssertEqual(try harness.get(H.extensionInterface, "ItemStatus").string, "readyToPlay")
    }

    func testRateChangedSaysWhy() throws {
        try harness.startPlaying([try short("ten", seconds: 10)])
        var mark = harness.mark()
        try harness.set(H.player, "Rate", "d", "1.25")
        let changed = try harness.waitForSignal(H.extensionInterface, "RateChanged", from: mark)
        XCTAssertEqual(changed.arguments.map(\.signature), ["d", "s"])
        XCTAssertEqual(changed.arguments.first?.double, 1.25)
        XCTAssertEqual(changed.arguments.last?.string, "client")
        // a rate beyond MaximumRate is refused: the Set fails saying why, Rate stays, and the signal says so
        let maximum = try XCTUnwrap(harness.get(H.player, "MaximumRate").double)
        mark = harness.mark()
        let error = try harness.errorReply(H.properties, "Set",
                                           ["string:\(H.player)", "string:Rate", "variant:double:\(maximum * 10)"])
        XCTAssertEqual(error?.name, "org.freedesktop.DBus.Error.InvalidArgs")
        XCTAssertTrue(error?.message.contains("\(maximum)") == true, "the error names the range: \(error?.message ?? "no error")")
        let refused = try harness.waitForSignal(H.extensionInterface, "RateChanged", from: mark)
        XCTAssertEqual(refused.arguments.first?.double, 1.25)
        XCTAssertEqual(refused.arguments.last?.string, "refused")
        XCTAssertEqual(try harness.get(H.player, "Rate").double, 1.25)
        XCTAssertEqual(try harness.playbackStatus, "Playing")
    }
}
