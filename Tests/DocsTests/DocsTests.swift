import Foundation
import TestSupport
import XCTest

/// The manual against the code, both ways (issue 41): every name README.md and docs/ use (a
/// `tonearm` command, an option of tonearm or tonearmd, an environment variable, a D-Bus member,
/// an error name) exists, and every command, option, D-Bus member and error that exists is
/// described: in the man pages, which are made from the parsers' help and from dbus/surface.json
/// (held to the service's tables by MPRISTests), and, for the commands and tonearmd's options, in
/// README.md or a page of docs/ as well.
final class DocsTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Capitalised words that the pages may put in backticks which are neither D-Bus names nor in
    /// the code (a name found in Sources/, Tests/ or scripts/ exists).
    static let notDBusNames: Set<String> = [
        "PipeWire", "PulseAudio", "WirePlumber", "GStreamer", "KDEConnect", "ReplayGain", "GstWlDisplayHandleContextType",
    ]
    /// The standard interfaces' members (org.freedesktop.DBus.*), which the pages may name.
    static let standardDBusNames: Set<String> = [
        "Get", "GetAll", "Set", "PropertiesChanged", "Introspect", "Ping", "GetMachineId", "NameOwnerChanged",
        "InvalidArgs", "UnknownMethod", "UnknownProperty", "UnknownInterface", "PropertyReadOnly", "NotSupported",
        "ServiceUnknown", "NoReply", "AccessDenied",
    ]

    // MARK: what the code has

    struct Surface {
        /// "interface.Member" → its description, for every method, property and signal.
        var members: [String: String] = [:]
        /// The members' bare names.
        var names: Set<String> = []
        /// Error name → its description.
        var errors: [String: String] = [:]
        var interfaces: [String: String] = [:]
    }

    static func surface() throws -> Surface {
        let data = try Data(contentsOf: root.appendingPathComponent("dbus/surface.json"))
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var surface = Surface()
        for interface in try XCTUnwrap(json["interfaces"] as? [[String: Any]]) {
            let name = try XCTUnwrap(interface["name"] as? String)
            surface.interfaces[name] = interface["doc"] as? String ?? ""
            for kind in ["methods", "properties", "signals"] {
                for member in try XCTUnwrap(interface[kind] as? [[String: Any]]) {
                    let memberName = try XCTUnwrap(member["name"] as? String)
                    surface.members["\(name).\(memberName)"] = member["doc"] as? String ?? ""
                    surface.names.insert(memberName)
                }
            }
        }
        for error in try XCTUnwrap(json["errors"] as? [[String: Any]]) {
            surface.errors[try XCTUnwrap(error["name"] as? String)] = error["doc"] as? String ?? ""
        }
        return surface
    }

    /// One program's commands as its `--experimental-dump-help` describes them: the command's name
    /// ("" for the program itself) → its abstract and its options' long names with their abstracts.
    struct Program {
        var commands: [String: (abstract: String, options: [String: String])] = [:]
        var environment: [String: String] = [:]
        var allOptions: Set<String> { Set(commands.values.flatMap(\.options.keys)) }
    }

    static func program(_ name: String) throws -> Program {
        let process = Process()
        process.executableURL = try BuiltProduct.executable(name)
        process.arguments = ["--experimental-dump-help"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let command = try XCTUnwrap(json["command"] as? [String: Any])
        var program = Program()
        func options(_ command: [String: Any]) -> [String: String] {
            var result: [String: String] = [:]
            for argument in command["arguments"] as? [[String: Any]] ?? [] where argument["shouldDisplay"] as? Bool ?? true {
                for name in argument["names"] as? [[String: Any]] ?? [] where name["kind"] as? String == "long" {
                    result[name["name"] as? String ?? ""] = argument["abstract"] as? String ?? ""
                }
            }
            return result
        }
        program.commands[""] = (command["abstract"] as? String ?? "", options(command))
        for sub in command["subcommands"] as? [[String: Any]] ?? [] where sub["shouldDisplay"] as? Bool ?? true {
            program.commands[sub["commandName"] as? String ?? ""] = (sub["abstract"] as? String ?? "", options(sub))
        }
        for variable in command["environment"] as? [[String: Any]] ?? [] {
            program.environment[variable["name"] as? String ?? ""] = variable["abstract"] as? String ?? ""
        }
        return program
    }

    // MARK: what the manual says

    /// README.md and every page of docs/, by path relative to the repository.
    static func pages() throws -> [(String, String)] {
        let docs = root.appendingPathComponent("docs")
        let names = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }.sorted()
        XCTAssertFalse(names.isEmpty, "docs/ has no pages")
        return try [("README.md", String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8))]
            + names.map { ("docs/\($0)", try String(contentsOf: docs.appendingPathComponent($0), encoding: .utf8)) }
    }

    /// The code spans of a page (`...`) and the lines of its fenced blocks.
    static func spans(_ text: String) -> [String] {
        var spans: [String] = []
        var fenced = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle(); continue }
            if fenced { spans.append(String(line).trimmingCharacters(in: .whitespaces)); continue }
            let parts = line.split(separator: "`", omittingEmptySubsequences: false)
            for (index, part) in parts.enumerated() where index % 2 == 1 { spans.append(String(part)) }
        }
        return spans
    }

    /// Words that look like an identifier (letters and digits, at least two capitalised parts).
    static func isCamelCase(_ word: Substring) -> Bool {
        guard let first = word.first, first.isUppercase, word.allSatisfy({ $0.isLetter || $0.isNumber }) else { return false }
        return word.dropFirst().contains(where: \.isUppercase) && word.contains(where: \.isLowercase)
    }

    /// Every name of the patterns above the pages use that the code does not have, as
    /// "page: name (what it should be)".
    static func unknownNames(pages: [(String, String)], surface: Surface, tonearm: Program, tonearmd: Program, code: String) -> [String] {
        var unknown: [String] = []
        for (page, text) in pages {
            for span in spans(text) {
                var words = span.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
                if words.first == "$" { words.removeFirst() }
                // one command: what follows a pipe or a list operator is another program's
                if let end = words.firstIndex(where: { ["|", ";", "&&", "||", "#"].contains($0) }) { words = Array(words[..<end]) }
                if words.first == "tonearm", words.count > 1 {
                    let command = words[1].hasPrefix("-") ? "" : words[1]
                    guard let known = tonearm.commands[command] else {
                        unknown.append("\(page): tonearm \(command) (a tonearm command)")
                        continue
                    }
                    for option in words.dropFirst().filter({ $0.hasPrefix("--") }) {
                        let name = String(option.dropFirst(2).prefix { $0 != "=" })
                        if known.options[name] == nil, tonearm.commands[""]!.options[name] == nil {
                            unknown.append("\(page): tonearm \(command) --\(name) (an option of it)")
                        }
                    }
                } else if words.first == "tonearmd" {
                    for option in words.filter({ $0.hasPrefix("--") }) {
                        let name = String(option.dropFirst(2).prefix { $0 != "=" })
                        if !tonearmd.allOptions.contains(name) { unknown.append("\(page): tonearmd --\(name) (a tonearmd option)") }
                    }
                } else if words.count == 1, let word = words.first, isCamelCase(Substring(word)),
                          !surface.names.contains(word), surface.errors["io.github.tonearm.Error." + word] == nil,
                          !standardDBusNames.contains(word), !notDBusNames.contains(word), !code.contains(word) {
                    unknown.append("\(page): \(word) (a D-Bus method, property, signal or error, or a name in the code)")
                }
            }
            for name in matches(of: #"io\.github\.tonearm\.Error\.[A-Za-z]+"#, in: text) where surface.errors[name] == nil {
                unknown.append("\(page): \(name) (an error name)")
            }
            for name in matches(of: #"\bTONEARM_[A-Z0-9_]+"#, in: text) where tonearmd.environment[name] == nil && !code.contains(name) {
                unknown.append("\(page): \(name) (an environment variable)")
            }
        }
        return Array(Set(unknown)).sorted()
    }

    static func matches(of pattern: String, in text: String) -> Set<String> {
        let expression = try! NSRegularExpression(pattern: pattern)
        let range = NSRange(text.startIndex..., in: text)
        return Set(expression.matches(in: text, range: range).compactMap { Range($0.range, in: text).map { String(text[$0]) } })
    }

    /// The text of the code that may name an environment variable: Sources/, scripts/, Tests/, the Makefile.
    static func code() throws -> String {
        var text = try String(contentsOf: root.appendingPathComponent("Makefile"), encoding: .utf8)
        for folder in ["Sources", "scripts", "Tests"] {
            let files = FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)!
            for case let file as URL in files where ["swift", "py", "sh", "c", "h"].contains(file.pathExtension) {
                text += try String(contentsOf: file, encoding: .utf8)
            }
        }
        return text
    }

    // MARK: the tests

    func testEveryDBusNameIsDescribed() throws {
        let surface = try Self.surface()
        var undescribed = surface.interfaces.filter { $0.value.isEmpty }.map { "interface \($0.key)" }
        undescribed += surface.members.filter { $0.value.isEmpty }.map { $0.key }
        undescribed += surface.errors.filter { $0.value.isEmpty }.map { $0.key }
        XCTAssertEqual(undescribed.sorted(), [], """
            D-Bus names that tonearm-dbus(7) would list with no description: give each an org.gtk.GDBus.DocString \
            in its dbus/*.xml (an error, a line in ServiceError.documented), then regenerate dbus/surface.json \
            (MPRISTests, TONEARM_UPDATE_SURFACE=1)
            """)
        XCTAssertGreaterThan(surface.members.count, 80, "dbus/surface.json lists too few members to be the whole surface")
    }

    func testEveryCommandAndOptionIsDescribed() throws {
        var undescribed: [String] = []
        for name in ["tonearm", "tonearmd"] {
            let program = try Self.program(name)
            for (command, described) in program.commands {
                let label = command.isEmpty ? name : "\(name) \(command)"
                if described.abstract.isEmpty { undescribed.append(label) }
                for (option, help) in described.options where help.isEmpty { undescribed.append("\(label) --\(option)") }
            }
            for (variable, help) in program.environment where help.isEmpty { undescribed.append("\(name): \(variable)") }
        }
        XCTAssertEqual(undescribed.sorted(), [], "commands, options and variables with no help text for their man page")
    }

    func testEveryNameTheManualUsesExists() throws {
        let unknown = Self.unknownNames(pages: try Self.pages(), surface: try Self.surface(), tonearm: try Self.program("tonearm"),
                                        tonearmd: try Self.program("tonearmd"), code: try Self.code())
        XCTAssertEqual(unknown, [], "names README.md or docs/ use that the code does not have")
    }

    /// Each command of tonearm and each option of tonearmd is in README.md or docs/ (the man pages
    /// describe every one; these say which to reach for).
    func testEveryCommandAndDaemonOptionIsInTheReadmeOrDocs() throws {
        let pages = try Self.pages()
        let spans = pages.flatMap { Self.spans($0.1) }
        let text = pages.map(\.1).joined(separator: "\n")
        var missing: [String] = []
        for command in try Self.program("tonearm").commands.keys where !command.isEmpty && command != "help" {
            let named = spans.contains { span in
                let words = span.split(separator: " ")
                return (words.first == "tonearm" && words.dropFirst().first.map(String.init) == command) || span == command
            }
            if !named { missing.append("tonearm \(command)") }
        }
        for option in try Self.program("tonearmd").allOptions where !["help", "version"].contains(option) {
            if !text.contains("--\(option)") { missing.append("tonearmd --\(option)") }
        }
        XCTAssertEqual(missing.sorted(), [], "in the man pages but in neither README.md nor docs/")
    }

    /// The checker itself: a made-up name of each kind is caught.
    func testTheCheckCatchesNamesThatDoNotExist() throws {
        let page = """
            Run `tonearm frobnicate`, `tonearm play --loudly`, `tonearmd --no-such-option`; read `NoSuchProperty`;
            io.github.tonearm.Error.NoSuchError and TONEARM_NO_SUCH_VARIABLE.
            """
        let unknown = Self.unknownNames(pages: [("planted.md", page)], surface: try Self.surface(), tonearm: try Self.program("tonearm"),
                                        tonearmd: try Self.program("tonearmd"), code: "")
        XCTAssertEqual(unknown.count, 6, "\(unknown)")
    }
}
