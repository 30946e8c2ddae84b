import DBus
import Dispatch
import Foundation
import Logging
import MPRIS
import PlayerModel
import TestSupport
import XCTest

/// The dispatcher's tables against the XML in dbus/, and that XML against what is compiled in.
final class InterfaceTableTests: XCTestCase {
    /// The repository's dbus/ directory, found from this file.
    let dbusDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("dbus")

    func testCompiledInXMLIsExactlyTheFilesInDBusDirectory() throws {
        for (interface, xml) in InterfaceFiles.all {
            let file = dbusDirectory.appendingPathComponent("\(interface).xml")
            XCTAssertEqual(xml, try String(contentsOf: file, encoding: .utf8), interface)
        }
        XCTAssertEqual(InterfaceFiles.all.count, 5)
    }

    func testEveryTableAgreesWithItsXML() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let queue = DispatchQueue(label: "test.mpris")
        let differences = try queue.sync { () throws -> [String] in
            let engine = ScriptedEngine(queue: queue)
            let player = Player(engine: engine, queue: queue)
            let connection = try Connection(address: bus.address, queue: queue, logger: Logger(label: "MPRISTests"))
            defer { connection.close() }
            let service = try MPRISService(player: player, connection: connection, options: .init(), logger: Logger(label: "test"))
            return try service.tableDifferences()
        }
        XCTAssertEqual(differences, [])
    }

    /// dbus/surface.json, from which `make generated` writes tonearm-dbus(7), is exactly what the
    /// tables serve: run with TONEARM_UPDATE_SURFACE=1 to write it again after changing a table or
    /// the XML, and commit it.
    func testSurfaceFileIsWhatTheTablesServe() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let queue = DispatchQueue(label: "test.mpris")
        let json = try queue.sync { () throws -> String in
            let player = Player(engine: ScriptedEngine(queue: queue), queue: queue)
            let connection = try Connection(address: bus.address, queue: queue, logger: Logger(label: "MPRISTests"))
            defer { connection.close() }
            return try MPRISService(player: player, connection: connection, options: .init(), logger: Logger(label: "test")).surfaceJSON()
        }
        let file = dbusDirectory.appendingPathComponent("surface.json")
        if ProcessInfo.processInfo.environment["TONEARM_UPDATE_SURFACE"] == "1" {
            try json.write(to: file, atomically: true, encoding: .utf8)
        }
        let committed = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        if committed != json {
            let old = committed.split(separator: "\n", omittingEmptySubsequences: false)
            let new = json.split(separator: "\n", omittingEmptySubsequences: false)
            let first = Array(zip(old, new)).firstIndex { $0 != $1 } ?? min(old.count, new.count)
            XCTFail("""
                dbus/surface.json is not what the tables serve (first difference at line \(first + 1): \
                committed \(first < old.count ? String(old[first]) : "<end>"), tables \(first < new.count ? String(new[first]) : "<end>")); \
                run this test with TONEARM_UPDATE_SURFACE=1 and commit the file
                """)
        }
    }

    /// Every error name the code can answer with is in ServiceError's table of names and meanings
    /// (which tonearm-dbus(7) prints), and every name there can be made: from an item's error kind, a
    /// player's error code, or spelt out as `ServiceError("Name", ...)` in Sources/.
    func testEveryErrorNameIsDocumentedAndEveryDocumentedOneIsMade() throws {
        let sources = dbusDirectory.deletingLastPathComponent().appendingPathComponent("Sources")
        var spelledOut: Set<String> = []
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
        for case let file as URL in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            var rest = Substring(text)
            while let range = rest.range(of: "ServiceError(\"") {
                rest = rest[range.upperBound...]
                spelledOut.insert(String(rest.prefix { $0.isLetter || $0.isNumber }))
            }
        }
        XCTAssertTrue(spelledOut.contains("NameTaken"), "the sources' ServiceError names were not found: \(spelledOut)")
        let (undocumented, unknown) = MPRISService.undocumentedErrorNames(spelledOut: spelledOut)
        XCTAssertEqual(undocumented, [], "error names the code makes that ServiceError.documented does not describe")
        XCTAssertEqual(unknown, [], "error names ServiceError.documented describes that the code never makes")
    }
}
