@testable import CommandLineOptions
import Foundation
import XCTest

/// The reader on a small table of its own: the spellings it takes, the errors it gives (each with
/// its message, the option it names and status 64), the built-in options, the help, the completion
/// scripts and the man page's JSON. tonearmd's own table: TonearmServiceTests.TonearmdOptionsTests.
final class CommandDescriptionTests: XCTestCase {
    enum Color: String, CaseIterable, Sendable { case red, green, blue }

    struct Values: Equatable, Sendable {
        var name: String?
        var color: Color = .red
        var count: Int?
        var loud = false
        var items: [String] = []
        var checked = false
    }

    static let command = CommandDescription<Values>(
        name: "sample", version: "1.2.3", abstract: "A sample command.", discussion: "It reads what it is told.",
        options: [
            .value("name", "text", help: "A name.", discussion: "Anything.", environment: "SAMPLE_NAME") { $0.name = $1 },
            .choice("color", "color", of: Color.self, help: "A color.", defaultValue: .red) { $0.color = $1 },
            .value("count", "n", help: "A count from 1 to 9.", completion: .none) { (values: inout Values, text: String) throws(UsageError) in
                guard let count = Int(text), (1...9).contains(count) else { throw UsageError("--count must be from 1 to 9, not '\(text)'") }
                values.count = count
            },
            .value("folder", "directory", help: "A folder.", completion: .directories) { _, _ in },
            .flag("loud", help: "Say it loud.") { $0.loud = true },
        ],
        items: CommandItems("files", help: "Files.") { $0.items.append($1) },
        environment: [EnvironmentVariable("SAMPLE_HOME", note: "its home", help: "Where it lives.")],
        exitStatuses: [ExitStatus(0, "Fine."), ExitStatus(64, "Wrong.")],
        validate: { (values: inout Values) throws(UsageError) in
            if values.name == "forbidden" { throw UsageError("--name cannot be forbidden") }
            values.checked = true
        })

    func run(_ arguments: [String]) throws -> Values {
        guard case .run(let values) = try Self.command.parse(arguments, into: Values()) else {
            throw UsageError("not a run: \(arguments)")
        }
        return values
    }

    func error(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) -> UsageError? {
        do throws(UsageError) {
            let request = try Self.command.parse(arguments, into: Values())
            XCTFail("\(arguments) was read: \(request)", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func testBothSpellingsItemsAndTheLastOfARepeatedOption() throws {
        var expected = Values(name: "a b", color: .blue, count: 3, loud: true, items: ["one", "-", "two"], checked: true)
        XCTAssertEqual(try run(["--name", "a b", "one", "--color=blue", "-", "--count", "3", "--loud", "two"]), expected)
        XCTAssertEqual(try run(["--name=a b", "--color", "blue", "--count=3", "one", "-", "--loud", "two"]), expected)
        expected = Values(checked: true)
        XCTAssertEqual(try run([]), expected, "the defaults")
        XCTAssertEqual(try run(["--name=x", "--name", "y", "--loud", "--loud"]).name, "y", "the last one wins, as with swift-argument-parser")
        XCTAssertEqual(try run(["--name="]).name, "", "an empty value after = is a value")
        XCTAssertEqual(try run(["--name", "-"]).name, "-", "- alone is a value")
        XCTAssertEqual(try run(["--name=-x"]).name, "-x", "after = anything is the value")
        XCTAssertEqual(try run(["--loud", "--", "--name", "-x", "--"]).items, ["--name", "-x", "--"], "after -- everything is an item")
    }

    func testEachErrorNamesTheOptionAndSaysWhatIsWrong() {
        let cases: [([String], String, String?)] = [
            (["--bogus"], "Unknown option '--bogus'", nil),
            (["--bogus=1"], "Unknown option '--bogus'", nil),
            (["-x"], "Unknown option '-x'", nil),
            (["--name"], "Missing value for '--name <text>'", "name"),
            (["--name", "--loud"], "Missing value for '--name <text>'", "name"),
            (["--name", "-x"], "Missing value for '--name <text>'", "name"),
            (["--color", "pink"], "The value 'pink' is invalid for '--color <color>'. Please provide one of 'red', 'green' or 'blue'.", "color"),
            (["--color="], "The value '' is invalid for '--color <color>'. Please provide one of 'red', 'green' or 'blue'.", "color"),
            (["--count", "10"], "--count must be from 1 to 9, not '10'", "count"),
            (["--loud=yes"], "The option '--loud' does not take any value, but 'yes' was specified.", "loud"),
            (["--name", "forbidden"], "--name cannot be forbidden", nil),
            (["--generate-completion-script", "tcsh"],
             "The value 'tcsh' is invalid for '--generate-completion-script <shell>'. Please provide one of 'bash', 'zsh' or 'fish'.", nil),
            (["--generate-completion-script"], "Missing value for '--generate-completion-script <shell>'", nil),
        ]
        for (arguments, message, option) in cases {
            guard let error = error(arguments) else { continue }
            XCTAssertEqual(error.message, message, "\(arguments)")
            XCTAssertEqual(error.option, option, "\(arguments)")
        }
        XCTAssertEqual(UsageError.exitStatus, 64, "EX_USAGE, as before")
    }

    func testAnErrorSaysTheOptionsHelpAndTheUsage() {
        XCTAssertEqual(Self.command.errorText(UsageError("Missing value for '--name <text>'", option: "name")), """
            Error: Missing value for '--name <text>'
            Help:  --name <text>  A name.
            Usage: sample [<options>] [<files> ...]
              See 'sample --help' for more information.

            """)
        XCTAssertEqual(Self.command.errorText(UsageError("Unknown option '--bogus'")), """
            Error: Unknown option '--bogus'
            Usage: sample [<options>] [<files> ...]
              See 'sample --help' for more information.

            """)
    }

    func testBuiltInOptionsWinWhereverTheyAre() throws {
        for arguments in [["--help"], ["-h"], ["-help"], ["--bogus", "--help"], ["--name", "x", "-h", "--count", "99"], ["--version", "--help"]] {
            guard case .help = try Self.command.parse(arguments, into: Values()) else { return XCTFail("\(arguments): not the help") }
        }
        guard case .version = try Self.command.parse(["--count=0", "--version"], into: Values()) else { return XCTFail("--version") }
        guard case .completion(.zsh) = try Self.command.parse(["--generate-completion-script", "zsh"], into: Values()),
              case .completion(.fish) = try Self.command.parse(["--generate-completion-script=fish"], into: Values()),
              case .helpDump = try Self.command.parse(["--experimental-dump-help"], into: Values()) else { return XCTFail("the generators") }
        XCTAssertEqual(try run(["--", "--help", "--version"]).items, ["--help", "--version"], "after --, items")
    }

    func testTheHelpHasEveryOptionItsValuesDefaultAndEnvironment() {
        let help = Self.command.helpText
        XCTAssertTrue(help.hasPrefix("OVERVIEW: A sample command.\n\nIt reads what it is told.\nEnvironment: SAMPLE_NAME, SAMPLE_HOME (its home).\n\nUSAGE: sample [<options>] [<files> ...]\n\n"), help)
        XCTAssertTrue(help.contains("\nARGUMENTS:\n  <files>                 Files.\n"), help)
        XCTAssertTrue(help.contains("\n  --name <text>           A name.\n        Anything.\n"), help)
        XCTAssertTrue(help.contains("\n  --color <color>         A color. (values: red, green, blue; default: red)\n"), help)
        XCTAssertTrue(help.contains("\n  --folder <directory>    A folder.\n"), help)
        XCTAssertTrue(help.hasSuffix("  --loud                  Say it loud.\n  --version               Show the version.\n  -h, --help              Show help information.\n"), help)
        for line in help.split(separator: "\n") { XCTAssertLessThanOrEqual(line.count, 80, String(line)) }
    }

    func testLongTextWrapsInItsColumn() {
        let text = CommandDescription<Values>.entry("--a-long-option-name <value>", String(repeating: "word ", count: 30))
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines[0], "  --a-long-option-name <value>")
        for line in lines.dropFirst() {
            XCTAssertTrue(line.hasPrefix(String(repeating: " ", count: 26) + "word"), String(line))
            XCTAssertLessThanOrEqual(line.count, 80)
        }
    }

    func testCompletionScriptsOfferEveryOptionAndTheValuesTheyTake() throws {
        let bash = Self.command.completionScript(for: .bash)
        XCTAssertTrue(bash.contains("--name --color --count --folder --loud --version -h --help"), bash)
        XCTAssertTrue(bash.contains("--color) COMPREPLY=($(compgen -W 'red green blue' -- \"$cur\")); return ;;"), bash)
        XCTAssertTrue(bash.contains("--folder) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;"), bash)
        XCTAssertTrue(bash.contains("complete -o filenames -F _sample sample"), bash)
        // bash itself reads it, and completes with it
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sample-\(UUID().uuidString).bash")
        defer { try? FileManager.default.removeItem(at: file) }
        try bash.write(to: file, atomically: true, encoding: .utf8)
        let script = """
            source '\(file.path)'
            COMP_WORDS=(sample --color g); COMP_CWORD=2; _sample; echo "${COMPREPLY[*]}"
            COMP_WORDS=(sample --color = b); COMP_CWORD=3; _sample; echo "${COMPREPLY[*]}"
            COMP_WORDS=(sample --lo); COMP_CWORD=1; _sample; echo "${COMPREPLY[*]}"
            COMP_WORDS=(sample --name ''); COMP_CWORD=2; _sample; echo "[${COMPREPLY[*]}]"
            """
        let bashProcess = Process()
        bashProcess.executableURL = URL(fileURLWithPath: "/bin/bash")
        bashProcess.arguments = ["-c", script]
        let pipe = Pipe()
        bashProcess.standardOutput = pipe
        try bashProcess.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        bashProcess.waitUntilExit()
        XCTAssertEqual(bashProcess.terminationStatus, 0)
        XCTAssertEqual(output, "green\nblue\n--loud\n[]\n")

        let zsh = Self.command.completionScript(for: .zsh)
        XCTAssertTrue(zsh.hasPrefix("#compdef sample\n"), zsh)
        XCTAssertTrue(zsh.contains("'--color=[A color.]:color:(red green blue)'"), zsh)
        XCTAssertTrue(zsh.contains("'--folder=[A folder.]:directory:_files -/'"), zsh)
        XCTAssertTrue(zsh.contains("'--loud[Say it loud.]'"), zsh)
        XCTAssertTrue(zsh.contains("'*:files:_files'"), zsh)
        let fish = Self.command.completionScript(for: .fish)
        XCTAssertTrue(fish.contains("complete -c sample -l color -d 'A color.' -r -f -a 'red green blue'"), fish)
        XCTAssertTrue(fish.contains("complete -c sample -l folder -d 'A folder.' -r -f -a '(__fish_complete_directories)'"), fish)
        XCTAssertTrue(fish.contains("complete -c sample -s h -l help -d 'Show help information.'"), fish)
    }

    func testTheDumpIsJSONWithTheOptionsTheEnvironmentAndTheStatuses() throws {
        let dump = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(Self.command.helpDump.utf8)) as? [String: Any])
        let command = try XCTUnwrap(dump["command"] as? [String: Any])
        XCTAssertEqual(command["commandName"] as? String, "sample")
        let arguments = try XCTUnwrap(command["arguments"] as? [[String: Any]])
        XCTAssertEqual(arguments.compactMap { ($0["preferredName"] as? [String: Any])?["name"] as? String },
                       ["name", "color", "count", "folder", "loud", "version", "help"])
        let color = try XCTUnwrap(arguments.first { ($0["preferredName"] as? [String: Any])?["name"] as? String == "color" })
        XCTAssertEqual(color["allValues"] as? [String], ["red", "green", "blue"])
        XCTAssertEqual(color["defaultValue"] as? String, "red")
        XCTAssertEqual(arguments.first { $0["kind"] as? String == "positional" }?["valueName"] as? String, "files")
        XCTAssertEqual((command["environment"] as? [[String: Any]])?.compactMap { $0["name"] as? String }, ["SAMPLE_NAME", "SAMPLE_HOME"])
        XCTAssertEqual((command["exitStatuses"] as? [[String: Any]])?.compactMap { $0["status"] as? Int }, [0, 64])
        XCTAssertEqual(CommandDescription<Values>.json("a\"b\\c\nd\u{1}é"), #""a\"b\\c\nd\u0001é""#)
    }
}
