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

struct TestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
