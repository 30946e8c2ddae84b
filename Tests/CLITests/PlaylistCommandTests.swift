import Foundation
import TestSupport
import XCTest

/// `tonearm playlists`, `tonearm playlist N|NAME` and `tonearm save NAME` against a tonearmd
/// whose $XDG_MUSIC_DIR/Playlists holds files made here: output, exit statuses and errors.
final class PlaylistCommandTests: CLITestCase {
    var folder: URL { harness.directory.appendingPathComponent("music/Playlists") }

    func write(_ name: String, _ text: String) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: folder.appendingPathComponent(name))
    }

    /// `tonearm playlists ARGS` as (marked active, name) lines, checking the numbers.
    func listed(_ arguments: String...) throws -> [String] {
        let output = try harness.tonearm(["playlists"] + arguments)
        XCTAssertEqual(output.status, 0, "tonearm playlists \(arguments): \(output.stderr)")
        XCTAssertEqual(output.stderr, "")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        return try lines.enumerated().map { index, line in
            // "* 1  Name" or "  1  Name"
            let marker = line.prefix(1)
            let rest = line.dropFirst(2)
            guard let gap = rest.range(of: "  ") else { throw TestError("not a playlists line: \(line)") }
            XCTAssertEqual(rest[..<gap.lowerBound].trimmingCharacters(in: .whitespaces), String(index + 1), line)
            return (marker == "*" ? "*" : "") + rest[gap.upperBound...]
        }
    }

    func testPlaylistsListActivateAndSave() throws {
        let a = try track("a", title: "Tone A"), b = try track("b", title: "Tone B")
        try write("morning.m3u8", "#EXTM3U\n#PLAYLIST:Good Morning\n\(a.path)\n\(b.path)\n")
        try write("zed.m3u", "\(b.path)\n")
        try write("Classic.pls", "[playlist]\nFile1=\(a.path)\n")
        try write("broken.xspf", "<playlist><trackList><track><location>")
        try harness.startService()

        XCTAssertEqual(try listed(), ["broken", "Classic", "Good Morning", "zed"])
        XCTAssertEqual(try listed("--order", "user").sorted(), ["Classic", "Good Morning", "broken", "zed"])
        XCTAssertEqual(try listed("--order", "played"), try listed("--order", "user"), "none played: in the order found")

        // by number, then by name (any case)
        XCTAssertEqual(try harness.ok("playlist", "3"), "")
        try harness.waitForStatus("Playing")
        try harness.waitForReady(title: "Tone A")
        XCTAssertEqual(try listed(), ["broken", "Classic", "*Good Morning", "zed"])
        XCTAssertEqual(try harness.ok("playlist", "ZED"), "")
        try harness.waitForReady(title: "Tone B")
        XCTAssertEqual(try listed(), ["broken", "Classic", "Good Morning", "*zed"])
        XCTAssertEqual(try listed("--order", "played").last, "*zed", "the last played last")

        // JSON: every key, the active one named
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try harness.ok("playlists", "--json").utf8)) as? [String: Any])
        XCTAssertEqual(json["version"] as? Int, 1)
        XCTAssertEqual(json["order"] as? String, "alpha")
        let entries = try XCTUnwrap(json["playlists"] as? [[String: Any]])
        XCTAssertEqual(entries.map { $0["name"] as? String }, ["broken", "Classic", "Good Morning", "zed"])
        XCTAssertEqual(entries.map { $0["number"] as? Int }, [1, 2, 3, 4])
        XCTAssertEqual(entries.map { $0["active"] as? Bool }, [false, false, false, true])
        XCTAssertEqual(json["active"] as? String, entries[3]["id"] as? String)
        XCTAssertTrue((entries[0]["id"] as? String ?? "").hasPrefix("/io/github/tonearm/Playlist/"), "\(entries[0])")

        // save: listed under its name, and it plays back what was queued
        XCTAssertEqual(try harness.ok("save", "My Queue"), "")
        XCTAssertEqual(try listed(), ["broken", "Classic", "Good Morning", "My Queue", "*zed"])

        // errors: exit 1 with the service's or the client's message, and nothing changes
        let before = try harness.ok("queue")
        for (arguments, message) in [(["playlist", "9"], "no playlist 9 (there are 5)"),
                                     (["playlist", "nosuch"], "no playlist called nosuch"),
                                     (["playlist", "broken"], "not a valid XSPF playlist"),
                                     (["save", "../escape"], "without '/'")] {
            let output = try harness.tonearm(arguments)
            XCTAssertEqual(output.status, 1, "\(arguments): \(output.stderr)")
            XCTAssertEqual(output.stdout, "", "\(arguments)")
            XCTAssertTrue(output.stderr.contains(message), "\(arguments): \(output.stderr)")
        }
        let malformed = try harness.tonearm(["playlist", "1"])
        XCTAssertTrue(malformed.stderr.contains("io.github.tonearm.Error.MalformedPlaylist"), malformed.stderr)
        XCTAssertEqual(try harness.ok("queue"), before, "a refused call changes nothing")
        XCTAssertEqual(try listed().last, "*zed")

        // usage: exit 2
        for arguments in [["playlists", "--order", "random"], ["playlist"], ["save"], ["playlist", "--order", "x", "1"]] {
            let output = try harness.tonearm(arguments)
            XCTAssertEqual(output.status, 2, "\(arguments): \(output.stderr)")
        }
    }

    func testNoServiceExitsThree() throws {
        for command in [["playlists"], ["playlist", "1"], ["save", "x"]] {
            let output = try harness.tonearm(command)
            XCTAssertEqual(output.status, 3, "\(command): \(output.stderr)")
            XCTAssertTrue(output.stderr.contains("no Tonearm service on the session bus"), output.stderr)
        }
    }
}
