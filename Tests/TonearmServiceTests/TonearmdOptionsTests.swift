import CommandLineOptions
import EngineLink
import Foundation
import Logging
import PlayerModel
@testable import TonearmService
import XCTest

/// tonearmd's table: every option in both spellings and what it sets in the configuration, each
/// error with its message (status 64, `UsageError.exitStatus`), the environment's values checked as
/// the options' are, and the help, completions and man page input naming every option. The built
/// tonearmd with such command lines: CLITests' DaemonCommandLineTests, OpenHandOverTests.
final class TonearmdOptionsTests: XCTestCase {
    typealias Options = TonearmdOptions

    func read(_ arguments: [String], environment: [String: String] = [:]) throws -> Options {
        guard case .run(let options) = try Options.command.parse(arguments, into: Options(environment: environment)) else {
            throw UsageError("not a run: \(arguments)")
        }
        return options
    }

    func message(_ arguments: [String], environment: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) -> String? {
        do throws(UsageError) {
            _ = try Options.command.parse(arguments, into: Options(environment: environment))
            XCTFail("\(arguments) was read", file: file, line: line)
            return nil
        } catch {
            return error.message
        }
    }

    /// The command line of each spelling: `--name value` and `--name=value`.
    static let everyOption: [(String, String)] = [
        ("audio-sink", "fakesink sync=true"), ("snapcast", "tcp://127.0.0.1:4953?sampleformat=48000:16:2"), ("pipeline", "playbin"),
        ("instance", "second_1"), ("log-level", "debug"), ("network-timeout", "5"), ("reconnect-attempts", "2"),
        ("reconnect-delay", "0.5"), ("reconnect-max-delay", "8"), ("stall-timeout", "12"), ("resume", "none"),
        ("playlists", "/tmp/lists"),
    ]

    func testEveryOptionInBothSpellingsSetsTheConfiguration() throws {
        let separate = Self.everyOption.flatMap { ["--\($0.0)", $0.1] } + ["a.ogg", "--open", "b/"]
        let joined = Self.everyOption.map { "--\($0.0)=\($0.1)" } + ["a.ogg", "--open", "b/"]
        for arguments in [separate, joined] {
            let options = try read(arguments)
            XCTAssertTrue(options.open)
            XCTAssertEqual(options.items, ["a.ogg", "b/"])
            XCTAssertEqual(options.logLevel, .debug)
            let configuration = options.configuration(busAddress: "unix:path=/bus")
            XCTAssertEqual(configuration.busAddress, "unix:path=/bus")
            XCTAssertEqual(configuration.engine.audioSink, "fakesink sync=true")
            XCTAssertEqual(configuration.engine.snapcast, try SnapcastOutput.parse("tcp://127.0.0.1:4953?sampleformat=48000:16:2"))
            XCTAssertEqual(configuration.engine.pipeline, .playbin)
            XCTAssertEqual(configuration.instance, "second_1")
            XCTAssertEqual(configuration.logLevel, .debug)
            XCTAssertEqual(configuration.engine.networkTimeout, .seconds(5))
            XCTAssertEqual(configuration.player.reconnect.attempts, 2)
            XCTAssertEqual(configuration.player.reconnect.firstDelay, .milliseconds(500))
            XCTAssertEqual(configuration.player.reconnect.maximumDelay, .seconds(8))
            XCTAssertEqual(configuration.player.reconnect.stallLimit, .seconds(12))
            XCTAssertEqual(configuration.resume, ResumeMode.none)
            XCTAssertEqual(configuration.playlists?.path, "/tmp/lists")
            XCTAssertEqual(configuration.items, ["a.ogg", "b/"])
        }
        XCTAssertEqual(Set(Self.everyOption.map(\.0) + ["open"]), Set(Options.command.options.map(\.name)), "every option of the table is tried")
    }

    func testTheDefaultsThenTheEnvironmentThenTheOptions() throws {
        let plain = try read([]).configuration(busAddress: "b")
        XCTAssertEqual(plain.resume, .pause)
        XCTAssertEqual(plain.logLevel, .info)
        XCTAssertNil(plain.instance)
        XCTAssertEqual(plain.player.reconnect, ReconnectPolicy())
        XCTAssertEqual(plain.engine, EngineConfiguration.fromEnvironment([:]))
        let environment = ["TONEARM_AUDIO_SINK": "fakesink", "TONEARM_PIPELINE": "playbin3", "TONEARM_NETWORK_TIMEOUT": "20",
                           "TONEARM_RECONNECT_ATTEMPTS": "3", "TONEARM_STALL_TIMEOUT": "7"]
        let fromEnvironment = try read([], environment: environment).configuration(busAddress: "b")
        XCTAssertEqual(fromEnvironment.engine.audioSink, "fakesink")
        XCTAssertEqual(fromEnvironment.engine.pipeline, .playbin3)
        XCTAssertEqual(fromEnvironment.engine.networkTimeout, .seconds(20))
        XCTAssertEqual(fromEnvironment.player.reconnect.attempts, 3)
        XCTAssertEqual(fromEnvironment.player.reconnect.stallLimit, .seconds(7))
        let both = try read(["--audio-sink", "wavenc ! fakesink", "--pipeline", "playbin", "--network-timeout", "2", "--reconnect-attempts", "0"],
                            environment: environment).configuration(busAddress: "b")
        XCTAssertEqual(both.engine.audioSink, "wavenc ! fakesink")
        XCTAssertEqual(both.engine.pipeline, .playbin)
        XCTAssertEqual(both.engine.networkTimeout, .seconds(2))
        XCTAssertEqual(both.player.reconnect.attempts, 0)
        XCTAssertEqual(both.player.reconnect.stallLimit, .seconds(7), "what no option says stays the environment's")
    }

    func testEachBadValueIsNamedWithWhatAGoodOneIs() {
        let cases: [([String], String)] = [
            (["--bogus"], "Unknown option '--bogus'"),
            (["-x"], "Unknown option '-x'"),
            (["--audio-sink"], "Missing value for '--audio-sink <description>'"),
            (["--stall-timeout", "-1"], "Missing value for '--stall-timeout <seconds>'"),
            (["--resume", "bad"], "The value 'bad' is invalid for '--resume <mode>'. Please provide one of 'play', 'pause' or 'none'."),
            (["--pipeline", "playbin4"], "The value 'playbin4' is invalid for '--pipeline <pipeline>'. Please provide one of 'playbin3' or 'playbin'."),
            (["--log-level", "loud"],
             "The value 'loud' is invalid for '--log-level <log-level>'. Please provide one of 'trace', 'debug', 'info', 'notice', 'warning', 'error' or 'critical'."),
            (["--network-timeout", "0"], "--network-timeout must be a whole number of seconds from 1 to 3600, not '0'"),
            (["--network-timeout=3601"], "--network-timeout must be a whole number of seconds from 1 to 3600, not '3601'"),
            (["--instance", "9x"], "--instance takes letters, digits and '_', not starting with a digit: 9x"),
            (["--instance=a-b"], "--instance takes letters, digits and '_', not starting with a digit: a-b"),
            (["--instance="], "--instance takes letters, digits and '_', not starting with a digit: "),
            (["--reconnect-attempts", "x"], "--reconnect-attempts must be a whole number from 0 to 1000, not 'x'"),
            (["--reconnect-delay", "4000"], "--reconnect-delay must be a number of seconds from 0 to 3600, not '4000'"),
            (["--reconnect-max-delay", "x"], "--reconnect-max-delay must be a number of seconds from 0 to 3600, not 'x'"),
            (["--stall-timeout", "nan"], "--stall-timeout must be a number of seconds from 0 to 3600, not 'nan'"),
            (["--snapcast", "http://x"], "--snapcast: a snapserver's TCP source is tcp://HOST:PORT (optionally ?sampleformat=48000:16:2), not 'http://x'"),
            (["--open=1"], "The option '--open' does not take any value, but '1' was specified."),
        ]
        for (arguments, expected) in cases {
            XCTAssertEqual(message(arguments), expected, "\(arguments)")
        }
    }

    func testTheEnvironmentsValuesAreCheckedAsTheOptionsAre() {
        XCTAssertEqual(message([], environment: ["TONEARM_NETWORK_TIMEOUT": "0"]),
                       "TONEARM_NETWORK_TIMEOUT must be a whole number of seconds from 1 to 3600, not '0'")
        XCTAssertEqual(message([], environment: ["TONEARM_RECONNECT_DELAY": "x"]),
                       "TONEARM_RECONNECT_DELAY must be a number of seconds from 0 to 3600, not 'x'")
        XCTAssertEqual(message([], environment: ["TONEARM_SNAPCAST": "tcp://"]).map { $0.hasPrefix("TONEARM_SNAPCAST: ") }, true)
        // as before: an environment value that does not parse is refused even when the option is given
        XCTAssertNotNil(message(["--network-timeout", "5"], environment: ["TONEARM_NETWORK_TIMEOUT": "x"]))
        XCTAssertNoThrow(try read([], environment: ["TONEARM_SNAPCAST": ""]), "an empty one is none")
        XCTAssertEqual(message([], environment: ["TONEARM_SANDBOX": "no"]), "TONEARM_SANDBOX must be on or off, not 'no'")
        for value in ["on", "off", ""] { XCTAssertNoThrow(try read([], environment: ["TONEARM_SANDBOX": value]), value) }
    }

    func testTheHelpCompletionsAndManPageNameEveryOptionAndVariable() throws {
        let command = Options.command
        let help = command.helpText
        for option in command.options {
            XCTAssertTrue(help.contains("  \(option.label)"), "the help lacks \(option.label)")
            XCTAssertTrue(help.contains(option.help.split(separator: " ").prefix(4).joined(separator: " ")), "the help lacks \(option.name)'s text")
        }
        for variable in ["DBUS_SESSION_BUS_ADDRESS", "TONEARM_AUDIO_SINK", "TONEARM_PIPELINE", "TONEARM_RECONNECT_ATTEMPTS",
                         "TONEARM_RECONNECT_DELAY", "TONEARM_RECONNECT_MAX_DELAY", "TONEARM_NETWORK_TIMEOUT", "TONEARM_STALL_TIMEOUT",
                         "TONEARM_SNAPCAST", "TONEARM_SANDBOX", "XDG_STATE_HOME", "XDG_MUSIC_DIR"] {
            XCTAssertTrue(help.contains(variable), "the help lacks \(variable)")
        }
        XCTAssertTrue(help.contains("USAGE: tonearmd [<options>] [<uris> ...]"), help)
        // the help's lines are wrapped: its words are compared
        let words = help.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
        XCTAssertTrue(words.contains("(values: trace, debug, info, notice, warning, error, critical; default: info)"), help)
        XCTAssertTrue(words.contains("(values: play, pause, none; default: pause)"), help)
        for shell in Shell.allCases {
            let script = command.completionScript(for: shell)
            for option in command.options { XCTAssertTrue(script.contains(option.name), "\(shell) lacks --\(option.name)") }
            XCTAssertTrue(script.contains("play pause none"), "\(shell): --resume's values")
        }
        let dump = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(command.helpDump.utf8)) as? [String: Any])
        let statuses = try XCTUnwrap((dump["command"] as? [String: Any])?["exitStatuses"] as? [[String: Any]])
        XCTAssertEqual(statuses.compactMap { $0["status"] as? Int }, [0, 1, 2, 64, 69])
        XCTAssertEqual(Termination.busLost(reason: "").status, 69, "the page's 69 is the lifecycle's")
        XCTAssertEqual(Termination.engineFailed(reason: "").status, 1)
        XCTAssertEqual(Termination.openFailed(reason: "").status, 2)
    }

    func testTheEnginesCommandLineIsReadBackAsWritten() throws {
        for level in Logger.Level.allCases {
            guard case .run(let options) = try EngineOptions.command.parse(EngineOptions(logLevel: level).arguments, into: EngineOptions()) else {
                return XCTFail("\(level)")
            }
            XCTAssertEqual(options.logLevel, level)
        }
        guard case .run(let none) = try EngineOptions.command.parse([], into: EngineOptions()) else { return XCTFail("no options") }
        XCTAssertEqual(none.logLevel, .info)
        XCTAssertThrowsError(try EngineOptions.command.parse(["--log-level", "loud"], into: EngineOptions()))
        XCTAssertThrowsError(try EngineOptions.command.parse(["item"], into: EngineOptions()), "the engine takes no items")
    }
}
