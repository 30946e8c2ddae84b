import Foundation
import TestSupport
import XCTest

/// org.mpris.MediaPlayer2.Playlists (issue 14): playlist files in $XDG_MUSIC_DIR/Playlists and
/// queues saved with SaveQueue, listed, ordered and activated over D-Bus; files that appear or
/// change while the service runs are noticed through inotify.
final class PlaylistsTests: ServiceTestCase {
    typealias H = ServiceHarness

    var folder: URL { harness.musicDirectory.appendingPathComponent("Playlists") }

    func write(_ name: String, _ text: String) throws -> URL {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    /// GetPlaylists as (id, name) pairs.
    func playlists(_ order: String = "Alphabetical", reverse: Bool = false, index: Int = 0, count: Int = 100) throws -> [(String, String)] {
        let reply = try harness.call(H.playlists, "GetPlaylists", "uusb", ["\(index)", "\(count)", order, reverse ? "true" : "false"])
        let list = try XCTUnwrap(reply.first?.data as? [Any])
        return list.compactMap { ($0 as? [Any]).flatMap { fields in
            guard let id = fields[0] as? String, let name = fields[1] as? String else { return nil }
            return (id, name)
        } }
    }

    func testPlaylistFilesOfEveryFormatAreListedOrderedAndActivated() throws {
        let a = try short("pl-a", seconds: 10)
        let b = try short("pl-b", seconds: 10, frequency: 660)
        let c = try short("pl-c", seconds: 10, frequency: 880)
        // a relative entry is taken against the playlist's folder (both are in the temporary directory)
        let relative = "../../../" + a.path.split(separator: "/").suffix(2).joined(separator: "/")
        _ = try write("Morning.m3u8", "#EXTM3U\n#EXTINF:10,A\n\(a.path)\n\(H.uri(b))\n")
        _ = try write("beta.m3u", "\(c.path)\n")
        _ = try write("Classic.pls", "[playlist]\nFile2=\(b.path)\nFile1=\(relative)\nNumberOfEntries=2\nVersion=2\n")
        _ = try write("Zed.xspf", """
            <?xml version="1.0" encoding="UTF-8"?>
            <playlist version="1" xmlns="http://xspf.org/ns/0/">
              <trackList>
                <track><location>\(H.uri(c))</location></track>
                <track><location>\(H.uri(a))</location></track>
              </trackList>
            </playlist>
            """)
        try harness.start()
        // listed before the name was taken
        XCTAssertEqual(try harness.get(H.playlists, "PlaylistCount").int64, 4)
        XCTAssertEqual(try harness.get(H.playlists, "Orderings").strings,
                       ["Alphabetical", "Created", "Modified", "Played", "User"], "the spec's values, not its members' names")
        XCTAssertEqual(try playlists().map(\.1), ["beta", "Classic", "Morning", "Zed"])
        XCTAssertEqual(try playlists(reverse: true).map(\.1), ["Zed", "Morning", "Classic", "beta"])
        XCTAssertEqual(try playlists(index: 1, count: 2).map(\.1), ["Classic", "Morning"])
        XCTAssertEqual(Set(try playlists("User").map(\.1)), ["beta", "Classic", "Morning", "Zed"])
        let active = try harness.get(H.playlists, "ActivePlaylist")
        XCTAssertEqual((active.data as? [Any])?.first as? Bool, false, "\(active)")

        let classic = try XCTUnwrap(try playlists().first { $0.1 == "Classic" }?.0)
        let mark = harness.mark()
        try harness.call(H.playlists, "ActivatePlaylist", "o", [classic])
        let replaced = try harness.waitForSignal(H.trackList, "TrackListReplaced", from: mark)
        let tracks = try XCTUnwrap(replaced.arguments.first?.strings)
        XCTAssertEqual(tracks.count, 2)
        try harness.waitForStatus("Playing")
        XCTAssertEqual(try harness.tracks, tracks)
        XCTAssertEqual(try harness.metadata["xesam:url"]?.string, H.uri(a), "PLS entries in their File number order")
        let now = try harness.get(H.playlists, "ActivePlaylist")
        let fields = try XCTUnwrap(now.data as? [Any])
        XCTAssertEqual(fields.first as? Bool, true)
        XCTAssertEqual((fields.last as? [Any])?.first as? String, classic)

        let zed = try XCTUnwrap(try playlists().first { $0.1 == "Zed" }?.0)
        try harness.call(H.playlists, "ActivatePlaylist", "o", [zed])
        try harness.waitForChange(H.player, "the XSPF's first track", from: mark) {
            $0["Metadata"]?.dictionary?["xesam:url"]?.string == H.uri(c)
        }
        XCTAssertEqual(try harness.tracks.count, 2)
    }

    func testAMalformedPlaylistIsAClearErrorAndChangesNothing() throws {
        let a = try short("pl-a", seconds: 10)
        _ = try write("broken.xspf", "<playlist><trackList><track><location>")
        _ = try write("bad entry.m3u8", "\(a.path)\nftp://example.org/song.mp3\n")
        _ = try write("headless.pls", "File1=\(a.path)\n")
        try harness.startPlaying([a])
        let before = try PlayerSnapshot(harness)
        for (name, expected) in [("broken", "not a valid XSPF playlist"), ("bad entry", "line 2"), ("headless", "no [playlist] section")] {
            let id = try XCTUnwrap(try playlists().first { $0.1 == name }?.0, name)
            let error = try XCTUnwrap(try harness.errorReply(H.playlists, "ActivatePlaylist", ["objpath:\(id)"]), "\(name) was activated")
            XCTAssertEqual(error.name, H.errorPrefix + "MalformedPlaylist", "\(error)")
            XCTAssertTrue(error.message.contains(expected), "\(error)")
            try assertUnchanged(before, "activating \(name)")
        }
        let missing = try XCTUnwrap(try harness.errorReply(H.playlists, "ActivatePlaylist", ["objpath:/io/github/tonearm/Playlist/999"]))
        XCTAssertEqual(missing.name, H.errorPrefix + "NoSuchPlaylist")
        // an ordering we do not know is served (testTheOrderingsClientsSendAreServed); arguments of the wrong type are not
        let order = try XCTUnwrap(try harness.errorReply(H.playlists, "GetPlaylists", ["int32:-1", "uint32:10", "string:Alphabetical", "boolean:false"]))
        XCTAssertEqual(order.name, "org.freedesktop.DBus.Error.InvalidArgs")
        try assertUnchanged(before, "the refused calls")
    }

    func testFilesAddedOrRewrittenWhileRunningAreNoticedAndSavedQueuesListed() throws {
        let a = try short("pl-a", seconds: 10)
        let b = try short("pl-b", seconds: 10, frequency: 660)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try harness.startPlaying([a, b])
        XCTAssertEqual(try harness.get(H.playlists, "PlaylistCount").int64, 0)

        // a new file: PlaylistCount is announced (inotify, no rescan)
        var mark = harness.mark()
        let file = try write("new.m3u", "\(a.path)\n")
        try harness.waitForChange(H.playlists, "PlaylistCount 1", from: mark) { $0["PlaylistCount"]?.int64 == 1 }
        let id = try XCTUnwrap(try playlists().first?.0)
        // rewritten: PlaylistChanged for it
        mark = harness.mark()
        try Data("\(b.path)\n\(a.path)\n".utf8).write(to: file)
        let changed = try harness.waitForSignal(H.playlists, "PlaylistChanged", from: mark)
        guard case .structure(let fields)? = changed.arguments.first?.unwrapped else { return XCTFail("\(changed)") }
        XCTAssertEqual(fields.first?.string, id, "\(changed)")

        // SaveQueue: listed at once, and it holds the queue
        try harness.call(H.extensionInterface, "SaveQueue", "s", ["My Queue"])
        let listed = try playlists()
        let saved = try XCTUnwrap(listed.first { $0.1 == "My Queue" }?.0, "\(listed)")
        XCTAssertEqual(try harness.get(H.playlists, "PlaylistCount").int64, 2)
        let bad = try XCTUnwrap(try harness.errorReply(H.extensionInterface, "SaveQueue", ["string:../escape"]))
        XCTAssertEqual(bad.name, "org.freedesktop.DBus.Error.InvalidArgs")
        let queued = try harness.tracks
        try harness.call(H.extensionInterface, "Clear")
        try harness.call(H.playlists, "ActivatePlaylist", "o", [saved])
        try harness.waitForStatus("Playing")
        XCTAssertEqual(try harness.tracks.count, queued.count)
        XCTAssertEqual(try harness.metadata["xesam:url"]?.string, H.uri(a))

        // deleted: gone from the list
        mark = harness.mark()
        try FileManager.default.removeItem(at: file)
        try harness.waitForChange(H.playlists, "PlaylistCount 1", from: mark) { $0["PlaylistCount"]?.int64 == 1 }
        XCTAssertEqual(try playlists().map(\.1), ["My Queue"])
    }

    /// ActivePlaylist as (valid, id).
    func activePlaylist() throws -> (Bool, String?) {
        let value = try harness.get(H.playlists, "ActivePlaylist")
        let fields = try XCTUnwrap(value.data as? [Any], "\(value)")
        return (fields.first as? Bool ?? false, (fields.last as? [Any])?.first as? String)
    }

    /// Waits until `daemon`'s log has a "saved the state" line past `offset` (bytes): a write of
    /// the saved state finished after that point. While playing, the checkpoint writes every 5 s.
    func waitForSave(of daemon: Daemon, after offset: Int, timeout: TimeInterval = 15) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !String(decoding: daemon.output.utf8.dropFirst(offset), as: UTF8.self).contains("saved the state:") {
            guard Date() < deadline else { throw TestError("no write of the saved state within \(timeout) s: \(daemon.output)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// SIGTERM and the wait for a clean exit.
    func restart(_ arguments: [String] = []) throws {
        let daemon = harness.daemon
        harness.exitExpected.insert(daemon.pid)
        daemon.process.terminate()
        XCTAssertEqual(daemon.waitForExit(timeout: 10), 0, daemon.output)
        try harness.start(arguments)
    }

    func testPlaylistIDsAndTheActivePlaylistAreKeptAcrossRestarts() throws {
        let a = try short("pl-a", seconds: 10)
        let b = try short("pl-b", seconds: 10, frequency: 660)
        _ = try write("b-side.m3u", "\(a.path)\n\(b.path)\n")
        _ = try write("c-side.m3u8", "\(b.path)\n")
        try harness.start()
        let before = Dictionary(uniqueKeysWithValues: try playlists().map { ($0.1, $0.0) })
        let bSide = try XCTUnwrap(before["b-side"])
        try harness.call(H.playlists, "ActivatePlaylist", "o", [bSide])
        try harness.waitForStatus("Playing")
        XCTAssertEqual(try activePlaylist().1, bSide)
        let tracks = try harness.tracks

        // killed; meanwhile a file whose name sorts first appears: the others keep their ids
        let first = harness.daemon
        harness.exitExpected.insert(first.pid)
        // the store writes on its own queue once the answer has left: the activation was recorded
        // before the pipeline played, so a write logged from now on holds it (a fixed 0.5 s was too
        // short under make test-asan's load)
        try waitForSave(of: first, after: first.output.utf8.count)
        kill(first.pid, SIGKILL)
        XCTAssertEqual(first.waitForExit(timeout: 10), SIGKILL)
        _ = try write("a-side.xspf", "<playlist version=\"1\" xmlns=\"http://xspf.org/ns/0/\"><trackList/></playlist>")
        try harness.start()
        let after = Dictionary(uniqueKeysWithValues: try playlists().map { ($0.1, $0.0) })
        XCTAssertEqual(after["b-side"], before["b-side"], "\(before) then \(after)")
        XCTAssertEqual(after["c-side"], before["c-side"], "\(before) then \(after)")
        XCTAssertNotNil(after["a-side"])
        XCTAssertFalse(Set(before.values).contains(after["a-side"] ?? ""), "a new file gets a new id: \(after)")
        XCTAssertEqual(try harness.tracks, tracks)
        let restored = try activePlaylist()
        XCTAssertTrue(restored.0, "ActivePlaylist restored with the queue it filled")
        XCTAssertEqual(restored.1, bSide)

        // an edit keeps it the playlist's queue, across a restart too
        try harness.call(H.extensionInterface, "Enqueue", "asb", ["1", H.uri(a), "false"])
        try restart()
        XCTAssertEqual(try activePlaylist().0, true)
        XCTAssertEqual(try activePlaylist().1, bSide)
        // once the playlist's own items are all gone, the queue is no longer the playlist's
        let now = try harness.tracks
        XCTAssertEqual(now.count, 3)
        var mark = harness.mark()
        for track in now.prefix(2) { try harness.call(H.trackList, "RemoveTrack", "o", [track]) }
        try harness.waitForChange(H.playlists, "ActivePlaylist no longer valid", from: mark) {
            guard case .structure(let fields)? = $0["ActivePlaylist"]?.unwrapped else { return false }
            return fields.first?.bool == false
        }
        try restart()
        XCTAssertEqual(try activePlaylist().0, false, "not restored: the queue is not the one the playlist gave")

        // activated again, then cleared: not active after a restart either
        try harness.call(H.playlists, "ActivatePlaylist", "o", [bSide])
        try harness.waitForStatus("Playing")
        XCTAssertEqual(try activePlaylist().0, true)
        mark = harness.mark()
        try harness.call(H.extensionInterface, "Clear")
        try harness.waitForChange(H.playlists, "ActivePlaylist cleared", from: mark) {
            guard case .structure(let fields)? = $0["ActivePlaylist"]?.unwrapped else { return false }
            return fields.first?.bool == false
        }
        try restart()
        XCTAssertEqual(try activePlaylist().0, false)
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: try playlists().map { ($0.1, $0.0) }), after, "ids kept over every restart")
    }

    /// Waits for PlaylistCount to be announced as `count`.
    func waitForCount(_ count: Int64, from mark: Int, _ what: String) throws {
        try harness.waitForChange(H.playlists, "PlaylistCount \(count): \(what)", from: mark) { $0["PlaylistCount"]?.int64 == count }
        XCTAssertEqual(try harness.get(H.playlists, "PlaylistCount").int64, count, what)
    }

    func testPlaylistFoldersMadeAfterTheStartOrMadeAgainAreWatched() throws {
        let a = try short("pl-a", seconds: 10)
        // neither $XDG_MUSIC_DIR nor the configured folder exists at the start
        let configured = harness.directory.appendingPathComponent("more/lists")
        XCTAssertFalse(FileManager.default.fileExists(atPath: harness.musicDirectory.path))
        try harness.start(["--playlists", configured.path])
        XCTAssertEqual(try harness.get(H.playlists, "PlaylistCount").int64, 0)

        // $XDG_MUSIC_DIR/Playlists made (two levels at once), then a file in it
        var mark = harness.mark()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("\(a.path)\n".utf8).write(to: folder.appendingPathComponent("first.m3u"))
        try waitForCount(1, from: mark, "a file in a folder made after the start")
        XCTAssertEqual(try playlists().map(\.1), ["first"])
        let id = try XCTUnwrap(try playlists().first?.0)

        // the configured folder, made level by level, with a file written before it is watched
        mark = harness.mark()
        try FileManager.default.createDirectory(at: configured.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: configured, withIntermediateDirectories: true)
        try Data("\(a.path)\n".utf8).write(to: configured.appendingPathComponent("second.m3u8"))
        try waitForCount(2, from: mark, "the configured folder made after the start")
        XCTAssertEqual(try playlists().map(\.1), ["first", "second"])

        // removed: its files go; made again: they come back, with their ids
        mark = harness.mark()
        try FileManager.default.removeItem(at: folder)
        try waitForCount(1, from: mark, "the folder removed")
        XCTAssertEqual(try playlists().map(\.1), ["second"])
        mark = harness.mark()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("\(a.path)\n".utf8).write(to: folder.appendingPathComponent("first.m3u"))
        try waitForCount(2, from: mark, "the folder made again")
        XCTAssertEqual(try playlists().first { $0.1 == "first" }?.0, id, "the same file, the same id")
        // and files written in it later are seen as before
        mark = harness.mark()
        try Data("\(a.path)\n".utf8).write(to: folder.appendingPathComponent("third.pls".replacingOccurrences(of: ".pls", with: ".m3u")))
        try waitForCount(3, from: mark, "a file in the folder made again")

        // a folder moved away is gone too, and one moved in is listed
        mark = harness.mark()
        let aside = harness.directory.appendingPathComponent("aside")
        try FileManager.default.moveItem(at: folder, to: aside)
        try waitForCount(1, from: mark, "the folder moved away")
        mark = harness.mark()
        try FileManager.default.moveItem(at: aside, to: folder)
        try waitForCount(3, from: mark, "the folder moved back")
    }

    func testPlaylistsAreCalledByTheTitleTheyCarry() throws {
        let a = try short("pl-a", seconds: 10)
        _ = try write("morning.m3u8", "#EXTM3U\n#PLAYLIST:Good Morning\n\(a.path)\n")
        _ = try write("untitled.m3u", "\(a.path)\n")
        _ = try write("classic.pls", "[playlist]\nFile1=\(a.path)\nTitle1=A track\n")
        _ = try write("night.xspf", """
            <?xml version="1.0" encoding="UTF-8"?>
            <playlist version="1" xmlns="http://xspf.org/ns/0/">
              <title>Evening Jazz</title>
              <trackList><track><location>\(H.uri(a))</location><title>A track</title></track></trackList>
            </playlist>
            """)
        try harness.startPlaying([a])
        XCTAssertEqual(try playlists().map(\.1), ["classic", "Evening Jazz", "Good Morning", "untitled"])
        // a saved queue keeps the name it was given, exactly
        try harness.call(H.extensionInterface, "SaveQueue", "s", ["  Spaced: out  "])
        let names = try playlists().map(\.1)
        XCTAssertTrue(names.contains("  Spaced: out  "), "\(names)")
        // a title rewritten: PlaylistChanged with the new one
        let id = try XCTUnwrap(try playlists().first { $0.1 == "Good Morning" }?.0)
        let mark = harness.mark()
        _ = try write("morning.m3u8", "#EXTM3U\n#PLAYLIST:Good Afternoon\n\(a.path)\n")
        let changed = try harness.waitForSignal(H.playlists, "PlaylistChanged", from: mark)
        guard case .structure(let fields)? = changed.arguments.first?.unwrapped else { return XCTFail("\(changed)") }
        XCTAssertEqual(fields.first?.string, id)
        XCTAssertEqual(fields.dropFirst().first?.string, "Good Afternoon")
        XCTAssertEqual(try playlists().first { $0.0 == id }?.1, "Good Afternoon")
    }

    func testCreatedAndPlayedOrderingsAreKeptAcrossRestarts() throws {
        let a = try short("pl-a", seconds: 10)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try harness.start()
        // the name is taken before the folders are listed (the listing ends the same turn of the
        // service queue, before any call is answered): a file written before that answer could be
        // in the first listing, with no change to announce
        XCTAssertEqual(try harness.get(H.playlists, "PlaylistCount").int64, 0)
        // made in the order b, c, a (not their names'), each seen as it comes
        for (index, name) in ["b", "c", "a"].enumerated() {
            let mark = harness.mark()
            _ = try write("\(name).m3u", "\(a.path)\n")
            try waitForCount(Int64(index + 1), from: mark, "\(name).m3u made")
            Thread.sleep(forTimeInterval: 0.05)
        }
        // b rewritten in place: modified last, still made first
        var mark = harness.mark()
        _ = try write("b.m3u", "\(a.path)\n\(a.path)\n")
        _ = try harness.waitForSignal(H.playlists, "PlaylistChanged", from: mark)
        XCTAssertEqual(try playlists("Alphabetical").map(\.1), ["a", "b", "c"])
        XCTAssertEqual(try playlists("Created").map(\.1), ["b", "c", "a"])
        XCTAssertEqual(try playlists("Modified").map(\.1), ["c", "a", "b"])
        XCTAssertEqual(try playlists("Created", reverse: true).map(\.1), ["a", "c", "b"])
        // never played: all alike, in the order they were found; then a, then c
        XCTAssertEqual(try playlists("Played").map(\.1), ["b", "c", "a"])
        for name in ["a", "c"] {
            let id = try XCTUnwrap(try playlists().first { $0.1 == name }?.0)
            mark = harness.mark()
            try harness.call(H.playlists, "ActivatePlaylist", "o", [id])
            _ = try harness.waitForSignal(H.trackList, "TrackListReplaced", from: mark)
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTAssertEqual(try playlists("Played").map(\.1), ["b", "a", "c"])
        XCTAssertEqual(try playlists("Played", reverse: true).map(\.1), ["c", "a", "b"], "the last played first")

        // both kept across a restart (the activation times and first sightings are in the saved state)
        try restart()
        XCTAssertEqual(try playlists("Played").map(\.1), ["b", "a", "c"])
        XCTAssertEqual(try playlists("Created").map(\.1), ["b", "c", "a"])
    }

    /// What the desktop's clients send, each as its source has it:
    /// - xfce4-pulseaudio-plugin (panel-plugin/pulseaudio-mpris-player.c,
    ///   pulseaudio_mpris_player_playlists_get_playlists): `GetPlaylists(0, 5, "Played", true)` when
    ///   `PlaylistCount` or `ActivePlaylist` changes, its menu the names of the reply (an error: none);
    /// - GNOME Shell (js/ui/mpris.js) and KDE Plasma (libkmpris's PlayerContainer, the mpris2 data
    ///   engine) use the root and Player interfaces only: no `GetPlaylists`, and no ordering;
    /// - bindings that copied the spec's member names (CreationDate, LastPlayDate, ...), as our CLI did;
    /// - and anything else, which is served in the `User` order rather than refused.
    func testTheOrderingsClientsSendAreServed() throws {
        let a = try short("pl-a", seconds: 10)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try harness.start()
        // answered once the folder was listed (testCreatedAndPlayedOrderingsAreKeptAcrossRestarts)
        XCTAssertEqual(try harness.get(H.playlists, "PlaylistCount").int64, 0)
        for (index, name) in ["b", "c", "a", "d", "e", "f"].enumerated() {
            let mark = harness.mark()
            _ = try write("\(name).m3u", "\(a.path)\n")
            try waitForCount(Int64(index + 1), from: mark, "\(name).m3u made")
        }
        // activated f, a, c (each activation at its own millisecond: the saved state keeps milliseconds)
        for name in ["f", "a", "c"] {
            let id = try XCTUnwrap(try playlists().first { $0.1 == name }?.0)
            let mark = harness.mark()
            try harness.call(H.playlists, "ActivatePlaylist", "o", [id])
            _ = try harness.waitForSignal(H.trackList, "TrackListReplaced", from: mark)
            Thread.sleep(forTimeInterval: 0.05)
        }
        let user = try playlists("User").map(\.1)
        XCTAssertEqual(Set(user), ["a", "b", "c", "d", "e", "f"])
        let xfce = { try self.playlists("Played", reverse: true, index: 0, count: 5).map(\.1) }
        XCTAssertEqual(try xfce().prefix(3), ["c", "a", "f"], "XFCE's menu: the most recently played first")
        XCTAssertEqual(try xfce().count, 5)
        XCTAssertEqual(try playlists("LastPlayDate", reverse: true).map(\.1), try playlists("Played", reverse: true).map(\.1))
        XCTAssertEqual(try playlists("CreationDate").map(\.1), try playlists("Created").map(\.1))
        XCTAssertEqual(try playlists("ModifiedDate").map(\.1), try playlists("Modified").map(\.1))
        XCTAssertEqual(try playlists("UserDefined").map(\.1), user)
        for nonsense in ["Shuffled", "", "played", "Alphabetical; DROP", "\u{1F3B5}"] {
            XCTAssertEqual(try playlists(nonsense).map(\.1), user, "'\(nonsense)': served in the User order")
            XCTAssertEqual(try playlists(nonsense, reverse: true, index: 1, count: 2).map(\.1),
                           Array(user.reversed()[1...2]), "'\(nonsense)': reversed and paged like any order")
        }

        // after a restart XFCE's call still follows the activations (they are in the saved state)
        try restart()
        XCTAssertEqual(try xfce().prefix(3), ["c", "a", "f"])
        let id = try XCTUnwrap(try playlists().first { $0.1 == "b" }?.0)
        let mark = harness.mark()
        try harness.call(H.playlists, "ActivatePlaylist", "o", [id])
        _ = try harness.waitForSignal(H.trackList, "TrackListReplaced", from: mark)
        XCTAssertEqual(try xfce().prefix(4), ["b", "c", "a", "f"], "an activation after the restart comes first")
    }
}
