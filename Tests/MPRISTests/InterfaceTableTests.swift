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
}
