import Foundation
import TestSupport
import XCTest

/// The completions and man pages that `make install` and the Debian package ship are made from the
/// parsers: every command the parser has is in them.
final class DocumentationTests: XCTestCase {
    static let commands = ["play", "pause", "toggle", "stop", "next", "prev", "seek", "volume", "mute", "unmute", "loop",
                           "shuffle", "rate", "retry", "add", "queue", "jump", "remove", "move", "clear", "playlists", "playlist",
                           "save", "status", "watch", "lyrics", "daemon", "fullscreen", "raise", "pip", "gravity", "linear", "places",
                           "chapters", "chapter"]

    func run(_ executable: URL, _ arguments: [String]) throws -> String {
        let output = try Tool.run(executable.path, arguments, timeout: 30)
        guard output.status == 0 else { throw TestError("\(executable.lastPathComponent) \(arguments): \(output.stderr)") }
        return output.stdout
    }

    func testCompletionsOfferEveryCommand() throws {
        let tonearm = try BuiltProduct.executable("tonearm")
        for shell in ["bash", "zsh", "fish"] {
            let script = try run(tonearm, ["--generate-completion-script", shell])
            for command in Self.commands {
                XCTAssertTrue(script.contains(command), "\(shell) completion lacks \(command)")
            }
            XCTAssertTrue(script.contains("--next"), "\(shell): add --next")
        }
        let daemon = try run(try BuiltProduct.executable("tonearmd"), ["--generate-completion-script", "bash"])
        XCTAssertTrue(daemon.contains("--audio-sink"), daemon)
        // a completion script that bash cannot parse breaks every completion of the shell
        let bash = try run(tonearm, ["--generate-completion-script", "bash"])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-completion-\(UUID().uuidString).bash")
        defer { try? FileManager.default.removeItem(at: file) }
        try bash.write(to: file, atomically: true, encoding: .utf8)
        let check = try Tool.run("bash", ["-c", "source \(file.path) && complete -p tonearm"], timeout: 30)
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(check.stdout.contains("tonearm"), check.stdout)
    }

    func testManPagesDescribeEveryCommandAndOption() throws {
        // scripts/manpage.py, found from this file: Tests/CLITests/ → the package root
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let script = root.appendingPathComponent("scripts/manpage.py").path
        let tonearm = try Tool.run("python3", [script, try BuiltProduct.executable("tonearm").path, "--date", "2026-01-02"], timeout: 60)
        XCTAssertEqual(tonearm.status, 0, tonearm.stderr)
        let page = tonearm.stdout
        XCTAssertTrue(page.hasPrefix(#".TH "TONEARM" "1" "2026-01-02" "Tonearm" "User Commands""#), String(page.prefix(200)))
        for command in Self.commands {
            XCTAssertTrue(page.contains("\n.SS \(command)"), "tonearm.1 has no section for \(command)")
        }
        XCTAssertTrue(page.contains(#".SS add [\-\-instance <name>] [\-\-next] <uri\-or\-path>..."#), "add's synopsis")
        XCTAssertTrue(page.contains(#"\fB\-\-json\fR"#), "watch's and status's --json")
        let tonearmd = try Tool.run("python3", [script, try BuiltProduct.executable("tonearmd").path], timeout: 60)
        XCTAssertEqual(tonearmd.status, 0, tonearmd.stderr)
        for option in ["audio", "pipeline", "instance", "log", "open"] {
            XCTAssertTrue(tonearmd.stdout.contains(#"\fB\-\-\#(option)"#), "tonearmd.1 lacks --\(option)")
        }
        // tonearmd's reader also says the variables it reads and the statuses it ends with
        XCTAssertTrue(tonearmd.stdout.contains("\n.SH ENVIRONMENT\n"), "tonearmd.1 has no ENVIRONMENT")
        XCTAssertTrue(tonearmd.stdout.contains(#"\fBTONEARM_AUDIO_SINK\fR"#), "tonearmd.1 lacks TONEARM_AUDIO_SINK")
        XCTAssertTrue(tonearmd.stdout.contains("\n.SH EXIT STATUS\n"), "tonearmd.1 has no EXIT STATUS")
        for status in [0, 1, 2, 64, 69] {
            XCTAssertTrue(tonearmd.stdout.contains(#"\fB\#(status)\fR"#), "tonearmd.1 lacks the status \(status)")
        }
        // man itself renders it (groff reads what we wrote)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-\(UUID().uuidString).1")
        defer { try? FileManager.default.removeItem(at: file) }
        try page.write(to: file, atomically: true, encoding: .utf8)
        let rendered = try Tool.run("man", ["-l", file.path], environment: ["MANWIDTH": "100", "MANPAGER": "cat", "PAGER": "cat"], timeout: 60)
        XCTAssertEqual(rendered.status, 0, rendered.stderr)
        XCTAssertTrue(rendered.stdout.contains("tonearm - Control the Tonearm player service"), String(rendered.stdout.prefix(300)))
        XCTAssertTrue(rendered.stdout.contains("move [--instance <name>] <N> <M>"), rendered.stdout)
        XCTAssertTrue(rendered.stdout.contains("playlist [--instance <name>] [--order <order>] <N|NAME>"), rendered.stdout)
    }
}
