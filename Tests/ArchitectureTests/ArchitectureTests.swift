import Foundation
import XCTest

/// The shape of the code, held against the table in ARCHITECTURE.md (issue 27): each target's
/// imports are the ones its row allows, every target has a row, and pointers and dlsym stay in the
/// wrapper targets. The table is the one place to change when a dependency is meant.
final class ArchitectureTests: XCTestCase {
    struct Row {
        let kind: String
        let imports: Set<String>
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The rows of ARCHITECTURE.md's table, by target.
    static func table() throws -> [String: Row] {
        let text = try String(contentsOf: root.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        guard let start = text.range(of: "<!-- architecture table"), let end = text.range(of: "<!-- end of the architecture table -->") else {
            throw TestError("ARCHITECTURE.md has no architecture table between its two comments")
        }
        var rows: [String: Row] = [:]
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 3, cells[0] != "target", !cells[0].hasPrefix("---") else { continue }
            let imports = cells[1] == "C" ? [] : Set(cells[2].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            rows[cells[0]] = Row(kind: cells[1], imports: imports)
        }
        return rows
    }

    /// The Swift files of each target under Sources/.
    static func targets() throws -> [String: [URL]] {
        let sources = root.appendingPathComponent("Sources")
        var targets: [String: [URL]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: sources.path) {
            let directory = sources.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            var files: [URL] = []
            let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
            while let file = walker?.nextObject() as? URL {
                if file.pathExtension == "swift" { files.append(file) }
            }
            targets[name] = files
        }
        return targets
    }

    /// The modules a Swift file imports (`import X`, `@testable import X`, `@preconcurrency import X`).
    static func imports(of file: URL) throws -> [String] {
        try String(contentsOf: file, encoding: .utf8).split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ").filter { !$0.hasPrefix("@") }
            guard words.count >= 2, words[0] == "import" else { return nil }
            return String(words[1].split(separator: ".")[0])
        }
    }

    func testEveryTargetImportsOnlyWhatItsRowAllows() throws {
        let table = try Self.table()
        let targets = try Self.targets()
        XCTAssertFalse(targets.isEmpty)
        for (target, files) in targets.sorted(by: { $0.key < $1.key }) {
            guard let row = table[target] else {
                XCTFail("Sources/\(target) has no row in ARCHITECTURE.md's table")
                continue
            }
            if row.kind == "C" {
                XCTAssertTrue(files.isEmpty, "\(target) is a C target but has Swift files")
                continue
            }
            for file in files {
                for module in try Self.imports(of: file) where !row.imports.contains(module) {
                    XCTFail("Sources/\(target)/\(file.lastPathComponent) imports \(module), which its row in ARCHITECTURE.md does not allow (\(row.imports.sorted().joined(separator: ", ")))")
                }
            }
        }
        for target in table.keys where targets[target] == nil {
            XCTFail("ARCHITECTURE.md's table names \(target), which is not under Sources/")
        }
    }

    func testTheModelKnowsNoCNoBusAndNoPipeline() throws {
        let model = try XCTUnwrap(try Self.table()["PlayerModel"])
        for forbidden in ["Glibc", "CShims", "CGStreamer", "CDBus", "CSQLite", "GStreamer", "DBus", "SQLite", "Logging"] {
            XCTAssertFalse(model.imports.contains(forbidden), "the model may not import \(forbidden)")
        }
    }

    /// Each `@unchecked Sendable` is a promise the compiler cannot check: it says, beside it, what
    /// keeps it true (a `// @unchecked:` comment), so that a reader can hold the code to it. State
    /// guarded by a lock and nothing else is a `Mutex` (checked), not a promise.
    func testEveryUncheckedSendableSaysWhatMakesItSafe() throws {
        for (target, files) in try Self.targets() {
            for file in files {
                let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                for (number, line) in lines.enumerated() where line.contains("@unchecked Sendable") {
                    guard !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") else { continue }
                    let around = lines[max(0, number - 3)..<min(lines.count, number + 3)]
                    XCTAssertTrue(around.contains { $0.contains("// @unchecked") || $0.contains("/// `@unchecked") || $0.contains("`@unchecked Sendable`") },
                                  "Sources/\(target)/\(file.lastPathComponent):\(number + 1) is @unchecked Sendable without a comment saying what keeps it safe")
                }
            }
        }
    }

    /// Pointers and dlsym only where C is wrapped: everywhere else, typed Swift values.
    func testPointersAndDlsymStayInTheWrapperTargets() throws {
        let table = try Self.table()
        let pattern = try NSRegularExpression(pattern: #"\b(Unsafe[A-Za-z]*Pointer|OpaquePointer|withUnsafe[A-Za-z]*|dlsym)\b"#)
        for (target, files) in try Self.targets() where table[target]?.kind != "wrapper" {
            for file in files {
                let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                for (number, line) in lines.enumerated() {
                    let code = line.components(separatedBy: "//").first ?? ""
                    let range = NSRange(code.startIndex..., in: code)
                    if let match = pattern.firstMatch(in: code, range: range), let found = Range(match.range, in: code) {
                        XCTFail("Sources/\(target)/\(file.lastPathComponent):\(number + 1) uses \(code[found]) outside the wrapper targets")
                    }
                }
            }
        }
        for (target, files) in try Self.targets() {
            for file in files where try String(contentsOf: file, encoding: .utf8).contains("dlsym(") {
                XCTFail("Sources/\(target)/\(file.lastPathComponent) calls dlsym: give the gap a function of CShims")
            }
        }
    }
}

/// ARCHITECTURE.md's "One call" route, held to the code (issue 37: it named files the call does
/// not go through and missed two it does): every `Path/File.swift` it names, followed by
/// backticked function names, is a file under Sources/ that declares each of them; the route's
/// rows never name one file twice in a row (a row is a hop into another file); and the count it
/// states is the table's.
final class RouteTests: XCTestCase {
    /// A file named in the section and the names that follow it, as written.
    struct Named: CustomStringConvertible {
        let file: String
        let names: [String]
        var description: String { "`\(file)` \(names.map { "`\($0)`" }.joined(separator: ", "))" }
    }

    static func architecture() throws -> String {
        try String(contentsOf: ArchitectureTests.root.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
    }

    /// The text of the section that begins with `heading`, up to the next `## ` heading.
    static func section(_ heading: String, of text: String) throws -> Substring {
        guard let start = text.range(of: heading) else { throw TestError("ARCHITECTURE.md has no section \(heading)") }
        let rest = text[start.upperBound...]
        return rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)]
    }

    /// The rows of the table between `<!-- NAME: ...` and `<!-- end of the NAME -->`, as cells.
    static func rows(_ name: String, in text: Substring) throws -> [[String]] {
        guard let start = text.range(of: "<!-- \(name):"), let end = text.range(of: "<!-- end of the \(name) -->") else {
            throw TestError("ARCHITECTURE.md has no table between <!-- \(name): and <!-- end of the \(name) -->")
        }
        return text[start.upperBound..<end.lowerBound].split(separator: "\n").filter { $0.hasPrefix("| ") }.map { line in
            line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast().map { $0.trimmingCharacters(in: .whitespaces) }
        }.filter { $0.first.map { Int($0) != nil } ?? false }
    }

    /// Every `Path/File.swift` in `text` with the backticked names right after it (separated by
    /// commas or spaces only).
    static func named(in text: some StringProtocol) throws -> [Named] {
        let pattern = try NSRegularExpression(pattern: #"`([A-Za-z0-9_+/-]+\.swift)`((?:[ ,]*`[A-Za-z_][A-Za-z0-9_.]*`)*)"#)
        let names = try NSRegularExpression(pattern: #"`([A-Za-z_][A-Za-z0-9_.]*)`"#)
        let string = String(text)
        return pattern.matches(in: string, range: NSRange(string.startIndex..., in: string)).map { match in
            let file = String(string[Range(match.range(at: 1), in: string)!])
            let tail = String(string[Range(match.range(at: 2), in: string)!])
            let found = names.matches(in: tail, range: NSRange(tail.startIndex..., in: tail)).map { String(tail[Range($0.range(at: 1), in: tail)!]) }
            return Named(file: file, names: found)
        }
    }

    /// Whether `source` declares `name`: a function, an initializer, a type, or a D-Bus method
    /// of a table (`"OpenUri"`). `Type.name` also needs `Type` declared or extended.
    static func declares(_ source: String, _ name: String) -> Bool {
        let parts = name.split(separator: ".").map(String.init)
        if parts.count == 2 {
            return declares(source, parts[0]) && (parts[1] == "init" ? source.contains("init(") || source.contains("init?(") : declares(source, parts[1]))
        }
        let escaped = NSRegularExpression.escapedPattern(for: name)
        let patterns = [#"\bfunc\s+"# + escaped + #"\s*[(<]"#, #"\b(class|struct|enum|protocol|extension|actor)\s+"# + escaped + #"\b"#,
                        #"\(""# + escaped + #"""#]
        if name == "init" { return source.contains("init(") || source.contains("init?(") }
        return patterns.contains { source.range(of: $0, options: .regularExpression) != nil }
    }

    static let heading = "## One call, from the bus to the pipeline: `OpenUri`"

    /// What the section names: in a table's row, the file of its second cell with the functions
    /// of its third, and the pairs in its other cells; outside the tables, the pairs in the text.
    static func everythingNamed(in section: Substring) throws -> [Named] {
        var named: [Named] = []
        for table in ["OpenUri route", "OpenUri way back"] {
            let rows = try rows(table, in: section)
            XCTAssertFalse(rows.isEmpty, "ARCHITECTURE.md's \(table) has no rows")
            for row in rows {
                guard row.count == 5, let file = try Self.named(in: row[1]).first?.file else {
                    XCTFail("\(table), row \(row.first ?? "?"): five cells, the second a `Path/File.swift`")
                    continue
                }
                let functions = try Self.named(in: "`\(file)` " + row[2]).first?.names ?? []
                XCTAssertFalse(functions.isEmpty, "\(table), row \(row[0]): its third cell names the functions of \(file)")
                named.append(Named(file: file, names: functions))
                named += try Self.named(in: row[3]) + Self.named(in: row[4])
            }
        }
        let prose = section.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("| ") }.joined(separator: "\n")
        return named + (try Self.named(in: prose))
    }

    func testEveryFileAndFunctionTheRouteNamesIsThere() throws {
        let section = try Self.section(Self.heading, of: try Self.architecture())
        let named = try Self.everythingNamed(in: section)
        XCTAssertGreaterThan(named.count, 30, "the route names its files and functions as `Path/File.swift` `function`")
        for entry in named {
            let url = ArchitectureTests.root.appendingPathComponent("Sources").appendingPathComponent(entry.file)
            guard let source = try? String(contentsOf: url, encoding: .utf8) else {
                XCTFail("ARCHITECTURE.md's route names \(entry.file), which is not under Sources/")
                continue
            }
            for name in entry.names where !Self.declares(source, name) {
                XCTFail("ARCHITECTURE.md's route names \(name) in \(entry.file), which declares no such function (\(entry))")
            }
        }
    }

    func testTheHopCountIsTheTables() throws {
        let section = try Self.section(Self.heading, of: try Self.architecture())
        let rows = try Self.rows("OpenUri route", in: section)
        let files = rows.map { $0.count > 1 ? $0[1] : "" }
        XCTAssertEqual(rows.map { Int($0[0]) }, Array(0..<rows.count).map { Optional($0) }, "the route's hops are numbered from 0")
        for (previous, next) in zip(files, files.dropFirst()) where previous == next {
            XCTFail("the route names \(next) twice in a row: one row, not a hop")
        }
        let claim = "**\(rows.count - 1) hops through \(Set(files).count) files**"
        XCTAssertTrue(section.contains(claim), "ARCHITECTURE.md's route should say \(claim)")
    }
}

struct TestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
