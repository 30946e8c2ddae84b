import Foundation
import TestSupport
import XCTest

/// The built tonearmd and tonearm-engine read their command lines with one reader
/// (Sources/CommandLineOptions): what each answers to `--help`, `--version` and a wrong line, with
/// its exit status. Nothing here starts a service: every line is answered before the bus is looked
/// for. The table's every option and message: TonearmServiceTests.TonearmdOptionsTests.
final class DaemonCommandLineTests: XCTestCase {
    func tonearmd(_ arguments: [String], environment: [String: String]? = nil) throws -> Tool.Output {
        try Tool.run(try BuiltProduct.executable("tonearmd").path, arguments, environment: environment, timeout: 30)
    }

    func testHelpAndVersionAnswerWithStatusZero() throws {
        for spelling in ["--help", "-h"] {
            let help = try tonearmd([spelling, "--bogus"])
            XCTAssertEqual(help.status, 0, help.stderr)
            XCTAssertTrue(help.stdout.hasPrefix("OVERVIEW: The Tonearm player service"), help.stdout)
            for text in ["USAGE: tonearmd [<options>] [<uris> ...]", "--audio-sink <description>", "--open", "TONEARM_PIPELINE",
                         "DBUS_SESSION_BUS_ADDRESS", "-h, --help"] {
                XCTAssertTrue(help.stdout.contains(text), "the help lacks \(text)")
            }
        }
        let version = try tonearmd(["--version"])
        XCTAssertEqual(version.status, 0, version.stderr)
        XCTAssertEqual(version.stdout, "0.1.0\n")
    }

    /// Each wrong line: status 64 (EX_USAGE), as with swift-argument-parser, the message naming the
    /// option, the usage, nothing on stdout.
    func testAWrongLineIsNamedWithStatus64() throws {
        let cases: [([String], String)] = [
            (["--bogus"], "Error: Unknown option '--bogus'\n"),
            (["--audio-sink"], "Error: Missing value for '--audio-sink <description>'\nHelp:  --audio-sink <description>  "),
            (["--resume", "bad"], "Error: The value 'bad' is invalid for '--resume <mode>'. Please provide one of 'play', 'pause' or 'none'.\n"),
            (["--pipeline=playbin4"], "Error: The value 'playbin4' is invalid for '--pipeline <pipeline>'."),
            (["--log-level", "loud"], "Error: The value 'loud' is invalid for '--log-level <log-level>'."),
            (["--network-timeout", "0"], "Error: --network-timeout must be a whole number of seconds from 1 to 3600, not '0'\n"),
            (["--instance", "9x"], "Error: --instance takes letters, digits and '_', not starting with a digit: 9x\n"),
            (["--open=yes"], "Error: The option '--open' does not take any value, but 'yes' was specified.\n"),
        ]
        for (arguments, expected) in cases {
            let result = try tonearmd(arguments)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix(expected), "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasSuffix("Usage: tonearmd [<options>] [<uris> ...]\n  See 'tonearmd --help' for more information.\n"), result.stderr)
            XCTAssertEqual(result.stdout, "", "\(arguments)")
        }
        let environment = try tonearmd([], environment: ["TONEARM_RECONNECT_DELAY": "soon"])
        XCTAssertEqual(environment.status, 64, environment.stderr)
        XCTAssertTrue(environment.stderr.hasPrefix("Error: TONEARM_RECONNECT_DELAY must be a number of seconds from 0 to 3600, not 'soon'\n"),
                      environment.stderr)
    }

    /// The same reader answers for the engine's program, which tonearmd starts with `--log-level`.
    func testTheEngineReadsItsLogLevelWithTheSameReader() throws {
        let engine = try BuiltProduct.executable("tonearm-engine").path
        let help = try Tool.run(engine, ["--help"], timeout: 30)
        XCTAssertEqual(help.status, 0, help.stderr)
        XCTAssertTrue(help.stdout.contains("--log-level <log-level>"), help.stdout)
        let wrong = try Tool.run(engine, ["--log-level", "loud"], timeout: 30)
        XCTAssertEqual(wrong.status, 64, wrong.stderr)
        XCTAssertTrue(wrong.stderr.hasPrefix("Error: The value 'loud' is invalid for '--log-level <log-level>'."), wrong.stderr)
    }

    /// The completion scripts `make install` installs: bash reads tonearmd's and completes with it.
    func testBashCompletesTonearmdsOptionsAndValues() throws {
        let script = try tonearmd(["--generate-completion-script", "bash"])
        XCTAssertEqual(script.status, 0, script.stderr)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tonearmd-completion-\(UUID().uuidString).bash")
        defer { try? FileManager.default.removeItem(at: file) }
        try script.stdout.write(to: file, atomically: true, encoding: .utf8)
        let check = try Tool.run("bash", ["-c", """
            source '\(file.path)' && complete -p tonearmd >/dev/null
            COMP_WORDS=(tonearmd --pipe); COMP_CWORD=1; _tonearmd; echo "${COMPREPLY[*]}"
            COMP_WORDS=(tonearmd --pipeline ''); COMP_CWORD=2; _tonearmd; echo "${COMPREPLY[*]}"
            COMP_WORDS=(tonearmd --resume = p); COMP_CWORD=3; _tonearmd; echo "${COMPREPLY[*]}"
            """], timeout: 30)
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertEqual(check.stdout, "--pipeline\nplaybin3 playbin\nplay pause\n")
        for shell in ["zsh", "fish"] {
            let other = try tonearmd(["--generate-completion-script", shell])
            XCTAssertEqual(other.status, 0, other.stderr)
            XCTAssertTrue(other.stdout.contains("audio-sink") && other.stdout.contains("playbin3 playbin"), other.stdout)
        }
    }
}
