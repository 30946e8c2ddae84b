import Foundation
import TestSupport
import XCTest

/// The built `tonearm` against a real tonearmd: output and exit status of each command, and what
/// playerctl and busctl see afterwards.
final class CommandTests: CLITestCase {
    typealias H = CLIHarness

    func a() throws -> URL { try track("a", title: "Tone A", artist: "Tester", album: "Album A") }
    func b() throws -> URL { try track("b", title: "Tone B", artist: "Other", album: "Album B") }

    /// Starts tonearmd with nothing, then `tonearm play` on relative paths from the media's directory.
    func startPlayingAB() throws {
        let a = try a(), b = try b()
        try harness.startService()
        try harness.ok("play", a.lastPathComponent, b.lastPathComponent, in: a.deletingLastPathComponent())
        try harness.waitForStatus("Playing")
        try harness.waitForReady(title: "Tone A")
    }

    func testNoServiceExitsThreeWithAHint() throws {
        for command in [["status"], ["pause"], ["queue"], ["volume", "50%"], ["watch"], ["move", "1", "2"], ["add", "--next", "."]] {
            let output = try harness.tonearm(command)
            XCTAssertEqual(output.status, 3, "\(command): \(output.stderr)")
            XCTAssertEqual(output.stdout, "")
            XCTAssertTrue(output.stderr.contains("no Tonearm service on the session bus"), output.stderr)
            XCTAssertTrue(output.stderr.contains("tonearmd &"), "a hint how to start one: \(output.stderr)")
        }
        let noBus = try harness.tonearm(["status"], environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(harness.directory.path)/no-bus"])
        XCTAssertEqual(noBus.status, 3, noBus.stderr)
        XCTAssertTrue(noBus.stderr.contains("no-bus"), "names the address: \(noBus.stderr)")
    }

    func testUsageErrorsExitTwoAndNameTheValue() throws {
        try harness.startService()
        let cases: [([String], String)] = [
            (["seek", "abc"], "abc"), (["seek", "1:75"], "1:75"), (["seek", "nan"], "nan"), (["seek", "--", "-inf"], "-inf"),
            (["seek", "+1e999"], "+1e999"), (["seek"], "seek needs a time"), (["volume", "200%"], "200%"),
            (["volume", "nan%"], "nan%"), (["rate", "nan"], "nan"), (["rate", "inf"], "inf"), (["loop", "forever"], "forever"),
            (["shuffle", "maybe"], "maybe"), (["jump", "0"], "0"), (["jump", "99999999999999999999999"], "99999999999999999999999"),
            (["remove", "x"], "x"), (["status", "--format", "{nope}"], "{nope}"), (["status", "--format", "{title"], "{title"),
            (["status", "--json", "--format", "{title}"], "--json"), (["frobnicate"], "frobnicate"), (["add"], "add"),
            (["controls", "maybe"], "maybe"),
        ]
        for (arguments, named) in cases {
            let output = try harness.tonearm(arguments)
            XCTAssertEqual(output.status, 2, "\(arguments): \(output.stderr)")
            XCTAssertTrue(output.stderr.contains(named), "\(arguments) names \(named): \(output.stderr)")
        }
        XCTAssertEqual(try harness.property(H.player, "PlaybackStatus") as? String, "Stopped", "nothing reached the service")
    }

    func testAMissingFileIsNamedBeforeTheServiceIsAsked() throws {
        let a = try a()
        try harness.startService()
        let output = try harness.tonearm(["play", a.lastPathComponent, "missing.ogg"], in: a.deletingLastPathComponent())
        XCTAssertEqual(output.status, 2, output.stderr)
        XCTAssertEqual(output.stderr, "tonearm: no such file: missing.ogg\n")
        XCTAssertEqual(try harness.ok("queue"), "", "nothing was added: the existing file neither")
        // a URI is the service's to check: its error, exit status 1
        let uri = try harness.tonearm(["add", "file:///nonexistent/gone.ogg"])
        XCTAssertEqual(uri.status, 1, uri.stderr)
        XCTAssertTrue(uri.stderr.contains("gone.ogg"), uri.stderr)
        XCTAssertTrue(uri.stderr.contains("io.github.tonearm.Error."), uri.stderr)
    }

    func testStatusJSONAgreesWithPlayerctlAndBusctl() throws {
        try startPlayingAB()
        let text = try harness.ok("status", "--json")
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
        XCTAssertEqual(Set(json.keys), ["version", "status", "title", "artist", "artists", "album", "url", "trackid", "position",
                                        "duration", "volume", "muted", "loop", "shuffle", "rate", "live", "buffering", "waiting",
                                        "error", "stopAfter", "sleep", "replaygain", "equalizer", "output", "crossfade", "linear",
                                        "chapter"],
                       "the documented schema, every key present")
        XCTAssertEqual(json["version"] as? Int, 1)
        XCTAssertEqual(json["status"] as? String, try harness.playerctl("status").lowercased())
        XCTAssertEqual(json["title"] as? String, try harness.playerctl("metadata", "xesam:title"))
        XCTAssertEqual(json["artist"] as? String, try harness.playerctl("metadata", "xesam:artist"))
        XCTAssertEqual(json["artists"] as? [String], ["Tester"])
        XCTAssertEqual(json["album"] as? String, try harness.playerctl("metadata", "xesam:album"))
        XCTAssertEqual(json["url"] as? String, try harness.playerctl("metadata", "xesam:url"))
        XCTAssertEqual(json["url"] as? String, try a().absoluteString, "the relative path was made absolute")
        // playerctl quotes object paths: '/io/github/tonearm/Track/1'
        XCTAssertEqual(json["trackid"] as? String,
                       try harness.playerctl("metadata", "mpris:trackid").trimmingCharacters(in: CharacterSet(charactersIn: "'")))
        let length = try XCTUnwrap(Double(try harness.playerctl("metadata", "mpris:length")))
        let duration = try XCTUnwrap(json["duration"] as? Double)
        XCTAssertEqual(duration, length / 1_000_000, accuracy: 0.000001)
        let position = try XCTUnwrap(json["position"] as? Double)
        XCTAssertTrue((0...duration).contains(position), "position \(position)")
        XCTAssertEqual(json["volume"] as? Double, try harness.property(H.player, "Volume") as? Double)
        XCTAssertEqual(json["muted"] as? Bool, try harness.property(H.extensionInterface, "Muted") as? Bool)
        XCTAssertEqual(json["loop"] as? String, "none")
        XCTAssertEqual(try harness.playerctl("loop"), "None")
        XCTAssertEqual(json["shuffle"] as? Bool, false)
        XCTAssertEqual(json["rate"] as? Double, 1)
        XCTAssertEqual(json["live"] as? Bool, false)
        XCTAssertEqual(json["buffering"] as? Int, try harness.property(H.extensionInterface, "BufferingPercent") as? Int)
        XCTAssertTrue(json["error"] is NSNull)
    }

    func testHumanStatusAndFormat() throws {
        try startPlayingAB()
        let lines = try harness.ok("status").split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "title    Tone A")
        XCTAssertTrue(lines.contains("artist   Tester"), "\(lines)")
        XCTAssertTrue(lines.contains("album    Album A"), "\(lines)")
        XCTAssertTrue(lines.contains("status   Playing"), "\(lines)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("position ") && $0.hasSuffix(" / 0:30") }, "\(lines)")
        XCTAssertTrue(lines.contains("volume   100%"), "\(lines)")
        XCTAssertTrue(lines.contains("loop     none"), "\(lines)")
        XCTAssertTrue(lines.contains("shuffle  off"), "\(lines)")
        XCTAssertEqual(try harness.ok("status", "--format", "{status}|{title}|{artist}|{album}|{duration}|{volume}|{loop}|{{x}}"),
                       "Playing|Tone A|Tester|Album A|0:30|100%|none|{x}\n")
        let position = try harness.ok("status", "--format", "{position}").trimmingCharacters(in: .newlines)
        XCTAssertNotNil(position.range(of: #"^\d+:\d\d$"#, options: .regularExpression), position)
    }

    func testTransport() throws {
        try startPlayingAB()
        try harness.ok("pause")
        try harness.waitForStatus("Paused")
        try harness.ok("toggle")
        try harness.waitForStatus("Playing")
        try harness.ok("toggle")
        try harness.waitForStatus("Paused")
        try harness.ok("play")
        try harness.waitForStatus("Playing")
        try harness.ok("next")
        try harness.wait(for: "Tone B current") { try harness.playerctl("metadata", "xesam:title") == "Tone B" }
        try harness.ok("prev")
        try harness.wait(for: "Tone A current") { try harness.playerctl("metadata", "xesam:title") == "Tone A" }
        try harness.ok("stop")
        try harness.waitForStatus("Stopped")
        XCTAssertEqual(try harness.ok("status", "--format", "{status}"), "Stopped\n")
    }

    func testSeekAbsoluteRelativeAndPastTheEnd() throws {
        try startPlayingAB()
        // paused, so that the position holds still between the seek and the read
        try harness.ok("pause")
        try harness.waitForStatus("Paused")
        func position() throws -> Double { Double(try harness.property(H.player, "Position") as? Int ?? -1) / 1_000_000 }
        func seek(_ argument: String, to expected: Double) throws {
            try harness.ok("seek", argument)
            try harness.wait(for: "position \(expected) after seek \(argument)") { abs(try position() - expected) < 0.25 }
        }
        try seek("0:05", to: 5)
        try seek("12.5", to: 12.5)
        try seek("+2", to: 14.5)
        try seek("-4", to: 10.5)  // allUnrecognized: "-4" is not an option
        try seek("0:00:03", to: 3)
        XCTAssertEqual(try harness.playerctl("status"), "Paused", "a seek while paused stays paused")
        let past = try harness.tonearm(["seek", "1:00"])
        XCTAssertEqual(past.status, 1, past.stderr)
        XCTAssertEqual(past.stderr, "tonearm: position 1:00 is past the end of the track (0:30)\n")
        XCTAssertEqual(try position(), 3, accuracy: 0.25, "unchanged")
    }

    func testVolumeMuteLoopShuffleRate() throws {
        try startPlayingAB()
        func volume() throws -> Double { try XCTUnwrap(Double(try harness.playerctl("volume"))) }
        try harness.ok("volume", "40%")
        XCTAssertEqual(try volume(), 0.4, accuracy: 0.0001)
        try harness.ok("volume", "+15%")
        XCTAssertEqual(try volume(), 0.55, accuracy: 0.0001)
        try harness.ok("volume", "-25%")
        XCTAssertEqual(try volume(), 0.3, accuracy: 0.0001)
        try harness.ok("volume", "-90%")
        XCTAssertEqual(try volume(), 0, "a relative change stops at 0%")
        try harness.ok("volume", "30")
        XCTAssertEqual(try harness.ok("volume"), "30%\n")
        try harness.ok("mute")
        XCTAssertEqual(try harness.property(H.extensionInterface, "Muted") as? Bool, true)
        XCTAssertEqual(try harness.ok("status", "--format", "{volume} {muted}"), "30% muted\n")
        try harness.ok("unmute")
        XCTAssertEqual(try harness.property(H.extensionInterface, "Muted") as? Bool, false)
        XCTAssertEqual(try volume(), 0.3, accuracy: 0.0001, "unmuting keeps the volume")
        for (mode, mpris) in [("track", "Track"), ("queue", "Playlist"), ("none", "None")] {
            try harness.ok("loop", mode)
            XCTAssertEqual(try harness.playerctl("loop"), mpris)
        }
        try harness.ok("shuffle", "on")
        XCTAssertEqual(try harness.playerctl("shuffle"), "On")
        try harness.ok("shuffle", "off")
        XCTAssertEqual(try harness.playerctl("shuffle"), "Off")
        try harness.ok("rate", "1.5")
        XCTAssertEqual(try harness.property(H.player, "Rate") as? Double, 1.5)
        let refused = try harness.tonearm(["rate", "10"])
        XCTAssertEqual(refused.status, 1, "the service refuses it: \(refused.stderr)")
        XCTAssertTrue(refused.stderr.hasPrefix("tonearm: "), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("10"), "names the rate: \(refused.stderr)")
        XCTAssertTrue(refused.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs"), refused.stderr)
        XCTAssertEqual(try harness.property(H.player, "Rate") as? Double, 1.5, "unchanged")
    }

    /// `tonearm controls`: ControlsVisible, with no video playing (it is settable with no window).
    func testControlsOnAndOff() throws {
        try harness.startService()
        XCTAssertEqual(try harness.ok("controls"), "on\n")
        try harness.ok("controls", "off")
        XCTAssertEqual(try harness.property(H.extensionInterface, "ControlsVisible") as? Bool, false)
        XCTAssertEqual(try harness.ok("controls"), "off\n")
        try harness.ok("controls", "on")
        XCTAssertEqual(try harness.property(H.extensionInterface, "ControlsVisible") as? Bool, true)
    }

    func testQueueJumpRemoveAddClear() throws {
        try startPlayingAB()
        let c = try track("c", title: "Tone C", artist: "Third")
        XCTAssertEqual(try harness.ok("queue"), """
            * 1   0:30  Tone A — Tester
              2   0:30  Tone B — Other

            """)
        try harness.ok("add", c.path)
        try harness.wait(for: "Tone C's tags") { try harness.ok("queue").contains("Tone C — Third") }
        try harness.ok("jump", "2")
        try harness.wait(for: "Tone B current") { try harness.playerctl("metadata", "xesam:title") == "Tone B" }
        XCTAssertEqual(try harness.ok("queue"), """
              1   0:30  Tone A — Tester
            * 2   0:30  Tone B — Other
              3   0:30  Tone C — Third

            """)
        let tooFar = try harness.tonearm(["remove", "1", "4"])
        XCTAssertEqual(tooFar.status, 1, tooFar.stderr)
        XCTAssertEqual(tooFar.stderr, "tonearm: no item 4 in the queue (it has 3)\n")
        XCTAssertEqual(try harness.ok("queue").split(separator: "\n").count, 3, "nothing removed when one number is wrong")
        try harness.ok("remove", "1", "3")
        XCTAssertEqual(try harness.ok("queue"), "* 1   0:30  Tone B — Other\n")
        try harness.ok("clear")
        XCTAssertEqual(try harness.ok("queue"), "")
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try harness.ok("status", "--json").utf8)) as? [String: Any])
        XCTAssertEqual(json["status"] as? String, "stopped")
        XCTAssertTrue(json["title"] is NSNull)
        XCTAssertTrue(json["duration"] is NSNull)
        let jump = try harness.tonearm(["jump", "1"])
        XCTAssertEqual(jump.status, 1)
        XCTAssertEqual(jump.stderr, "tonearm: no item 1: the queue is empty\n")
        let seek = try harness.tonearm(["seek", "5"])
        XCTAssertEqual(seek.status, 1)
        XCTAssertEqual(seek.stderr, "tonearm: no current track to seek in\n")
    }
}
