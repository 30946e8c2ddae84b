import Foundation
import TestSupport
import XCTest

/// org.mpris.MediaPlayer2 and the life of the process: identity, the bus name, the published
/// interfaces, Quit and signals.
final class RootInterfaceTests: ServiceTestCase {
    typealias H = ServiceHarness

    func testIdentityDesktopEntryAndSchemesAsClientsReadThem() throws {
        let mark = harness.mark()
        try harness.start()
        // tonearmd answers before it has read GStreamer's registry (FirstStartTests), and
        // announces the formats once it has: read them after that
        try harness.waitForChange(H.root, "SupportedMimeTypes", from: mark) { $0["SupportedMimeTypes"] != nil }
        let root = try harness.getAll(H.root)
        // KDE ignores a player without Identity; the desktop file's basename is DesktopEntry
        XCTAssertEqual(root["Identity"]?.type, "s")
        XCTAssertEqual(root["Identity"]?.string, "Tonearm")
        XCTAssertEqual(root["DesktopEntry"]?.string, "tonearm")
        XCTAssertEqual(root["SupportedUriSchemes"]?.type, "as")
        let schemes = root["SupportedUriSchemes"]?.strings ?? []
        for scheme in ["file", "http", "https"] {
            XCTAssertTrue(schemes.contains(scheme), "SupportedUriSchemes \(schemes) lacks \(scheme)")
        }
        XCTAssertEqual(root["SupportedMimeTypes"]?.type, "as")
        XCTAssertTrue(root["SupportedMimeTypes"]?.strings?.contains("audio/mpeg") == true,
                      "SupportedMimeTypes: \(root["SupportedMimeTypes"]?.description ?? "missing")")
        XCTAssertEqual(root["CanQuit"]?.bool, true)
        XCTAssertEqual(root["CanRaise"]?.bool, false, "a service without a window cannot raise")
        XCTAssertEqual(root["HasTrackList"]?.bool, true)
        for optional in ["Fullscreen", "CanSetFullscreen"] where root[optional] != nil {
            XCTAssertEqual(root[optional]?.type, "b")
            XCTAssertEqual(root[optional]?.bool, false)
        }
        // playerctl sees it under the short name
        let players = try Tool.run("playerctl", ["-l"], environment: harness.clientEnvironment, timeout: 15)
        XCTAssertEqual(players.stdout.split(separator: "\n").map(String.init), ["tonearm"], players.stderr)
        XCTAssertEqual(try harness.playerctl("status"), "Stopped")
    }

    func testPlayerPropertiesWithNoItemArePresentWithTheirTypes() throws {
        try harness.start()
        let player = try harness.getAll(H.player)
        let expected: [String: String] = [
            "PlaybackStatus": "s", "LoopStatus": "s", "Rate": "d", "Shuffle": "b", "Metadata": "a{sv}",
            "Volume": "d", "Position": "x", "MinimumRate": "d", "MaximumRate": "d", "CanGoNext": "b",
            "CanGoPrevious": "b", "CanPlay": "b", "CanPause": "b", "CanSeek": "b", "CanControl": "b",
        ]
        for (name, type) in expected.sorted(by: { $0.key < $1.key }) {
            XCTAssertEqual(player[name]?.type, type, "GetAll(Player)[\(name)]")
        }
        XCTAssertEqual(Set(player.keys), Set(expected.keys), "GetAll(Player) has exactly the properties of the XML")
        XCTAssertEqual(player["PlaybackStatus"]?.string, "Stopped")
        XCTAssertEqual(player["Metadata"]?.dictionary?.count, 0, "no item: Metadata is an empty a{sv}")
        XCTAssertEqual(player["Position"]?.int64, 0)
        XCTAssertEqual(player["LoopStatus"]?.string, "None")
        XCTAssertEqual(player["Shuffle"]?.bool, false)
        XCTAssertEqual(player["Rate"]?.double, 1)
        XCTAssertEqual(player["CanControl"]?.bool, true)
        XCTAssertEqual(player["CanPlay"]?.bool, false, "nothing to play")
        XCTAssertEqual(player["CanGoNext"]?.bool, false)
        XCTAssertEqual(player["CanGoPrevious"]?.bool, false)
        let minimum = try XCTUnwrap(player["MinimumRate"]?.double), maximum = try XCTUnwrap(player["MaximumRate"]?.double)
        XCTAssertLessThanOrEqual(minimum, 1)
        XCTAssertGreaterThanOrEqual(maximum, 1)
        XCTAssertGreaterThan(minimum, 0, "Rate 0 means pause, so it is not a rate")
        let volume = try XCTUnwrap(player["Volume"]?.double)
        XCTAssertTrue((0...1).contains(volume), "Volume \(volume)")
        // Get agrees with GetAll, and Metadata alone is the empty dictionary too
        let metadata = try harness.get(H.player, "Metadata")
        XCTAssertEqual(metadata.type, "a{sv}")
        XCTAssertEqual(metadata.dictionary?.count, 0)
    }

    func testTrackListPlaylistsAndExtensionPropertiesWithNoItem() throws {
        try harness.start()
        let trackList = try harness.getAll(H.trackList)
        XCTAssertEqual(trackList["Tracks"]?.type, "ao")
        XCTAssertEqual(trackList["Tracks"]?.strings, [])
        XCTAssertEqual(trackList["CanEditTracks"]?.bool, true)

        let playlists = try harness.getAll(H.playlists)
        XCTAssertEqual(playlists["PlaylistCount"]?.type, "u")
        XCTAssertEqual(playlists["Orderings"]?.type, "as")
        XCTAssertEqual(playlists["ActivePlaylist"]?.type, "(b(oss))")

        let ext = try harness.getAll(H.extensionInterface)
        let types = ["ItemStatus": "s", "ItemError": "(ss)", "TimeControlStatus": "s", "WaitingReason": "s",
                     "BufferingPercent": "i", "LoadedRanges": "a(xx)", "IsLive": "b", "Muted": "b"]
        for (name, type) in types.sorted(by: { $0.key < $1.key }) {
            XCTAssertEqual(ext[name]?.type, type, "GetAll(\(H.extensionInterface))[\(name)]")
        }
        XCTAssertEqual(ext["ItemStatus"]?.string, "unknown")
        XCTAssertEqual(ext["ItemError"]?.data as? [String], ["", ""])
        XCTAssertEqual(ext["TimeControlStatus"]?.string, "paused")
        XCTAssertEqual(ext["WaitingReason"]?.string, "")
        XCTAssertEqual(ext["BufferingPercent"]?.int64, 100)
        XCTAssertEqual((ext["LoadedRanges"]?.data as? [Any])?.count, 0)
        XCTAssertEqual(ext["IsLive"]?.bool, false)
        XCTAssertEqual(ext["Muted"]?.bool, false)
    }

    /// The service answers Introspect with the XML of dbus/: every interface and member is there.
    func testIntrospectionPublishesEveryInterfaceAndMemberOfTheXML() throws {
        try harness.start()
        let xml = try harness.busctl(["introspect", "--xml-interface", harness.busName, H.path])
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("dbus")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".xml") }
        XCTAssertEqual(files.count, 5, "dbus/ holds \(files)")
        for file in files {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            let interface = try XCTUnwrap(Self.matches(#"<interface name="([^"]+)""#, in: text).first)
            guard let start = xml.range(of: "<interface name=\"\(interface)\"") else {
                XCTFail("Introspect lacks \(interface)")
                continue
            }
            let block = String(xml[start.lowerBound...]).components(separatedBy: "</interface>")[0]
            for kind in ["method", "property", "signal"] {
                for member in Self.matches("<\(kind) name=\"([^\"]+)\"", in: text) {
                    XCTAssertTrue(block.contains("<\(kind) name=\"\(member)\""), "Introspect: \(interface) lacks \(kind) \(member)")
                }
            }
        }
        for standard in ["org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer"] {
            XCTAssertTrue(xml.contains("<interface name=\"\(standard)\""), "Introspect lacks \(standard)")
        }
        try harness.ping()
    }

    func testASecondServiceTakesTheInstanceName() throws {
        let first = try harness.start()
        XCTAssertEqual(first.busName, H.baseName)
        let second = try harness.start()
        XCTAssertEqual(second.busName, "\(H.baseName).instance\(second.pid)")
        XCTAssertTrue(first.isRunning && second.isRunning)
        let players = try Tool.run("playerctl", ["-l"], environment: harness.clientEnvironment, timeout: 15)
        XCTAssertEqual(Set(players.stdout.split(separator: "\n").map(String.init)),
                       ["tonearm", "tonearm.instance\(second.pid)"], players.stderr)
        XCTAssertEqual(try harness.playerctl("status", player: second.playerName), "Stopped")
        XCTAssertEqual(try harness.get(H.root, "Identity", destination: second.busName).string, "Tonearm")
    }

    func testQuitSendsStoppedBeforeTheNameGoesAndExitsZero() throws {
        let daemon = try harness.startPlaying([try short(seconds: 10)])
        let mark = harness.mark()
        harness.exitExpected.insert(daemon.pid)
        // the call gets its reply before the service goes
        try harness.call(H.root, "Quit")
        let nameLost = try harness.watcher.wait(for: "\(daemon.busName) to be released", from: mark) {
            $0.member == "NameOwnerChanged" && $0.arguments.first?.string == daemon.busName && $0.arguments.last?.string == ""
        }
        let stopped = harness.propertiesChanged(H.player, from: mark).first { $0.changed["PlaybackStatus"]?.string == "Stopped" }
        XCTAssertNotNil(stopped, "no PlaybackStatus Stopped before the name went; signals: \(harness.watcher.messages(from: mark))")
        if let stopped { XCTAssertLessThan(stopped.index, nameLost.index) }
        XCTAssertEqual(daemon.waitForExit(timeout: 10), 0, "tonearmd exit status after Quit")
    }

    func testSIGTERMReleasesTheNameAndExitsZero() throws {
        let daemon = try harness.startPlaying([try short(seconds: 10)])
        let mark = harness.mark()
        harness.exitExpected.insert(daemon.pid)
        kill(daemon.pid, SIGTERM)
        try harness.watcher.wait(for: "\(daemon.busName) to be released", from: mark) {
            $0.member == "NameOwnerChanged" && $0.arguments.first?.string == daemon.busName && $0.arguments.last?.string == ""
        }
        XCTAssertEqual(daemon.waitForExit(timeout: 10), 0, "tonearmd exit status after SIGTERM")
    }

    func testSIGINTExitsZero() throws {
        let daemon = try harness.start()
        harness.exitExpected.insert(daemon.pid)
        kill(daemon.pid, SIGINT)
        XCTAssertEqual(daemon.waitForExit(timeout: 10), 0, "tonearmd exit status after SIGINT")
    }

    static func matches(_ pattern: String, in text: String) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: 1), in: text).map { String(text[$0]) }
        }
    }
}
