@testable import DBus
import XCTest

/// Typed values, validation and message encoding, without a bus.
final class ValueTests: XCTestCase {
    /// One word of payload and a tag byte of its own: no pointer in a value carries the case tag in
    /// its spare bits, where LeakSanitizer cannot see it (make test-asan reported every announced
    /// property as leaked while DBusValue was an `indirect enum`, whose size is 8).
    func testValuesKeepTheirPointersPlain() {
        XCTAssertEqual(MemoryLayout<DBusValue>.size, 9)
    }

    func testObjectPathValidation() throws {
        for good in ["/", "/org/mpris/MediaPlayer2", "/_1/a_b"] { XCTAssertNotNil(ObjectPath(good), good) }
        for bad in ["", "relative", "/trailing/", "/double//slash", "/dash-ed", "/nul\u{0}", "/é"] {
            XCTAssertNil(ObjectPath(bad), bad)
            XCTAssertThrowsError(try ObjectPath(validating: bad)) { error in
                XCTAssertEqual((error as? DBusError)?.name, DBusError.Name.invalidArgs)
            }
        }
        XCTAssertEqual(ObjectPath.root.appending("org")?.rawValue, "/org")
        // A literal is checked when written (it traps if invalid); a run-time string goes through init?(_:).
        let org: ObjectPath = "/org"
        XCTAssertEqual(org.appending("mpris")?.rawValue, "/org/mpris")
        XCTAssertNil(org.appending("a/b"))
        // a number is always a valid element: what libdbus says of the paths built without it
        for number: UInt64 in [0, 7, 10_000, .max] {
            for base in [ObjectPath.root, org] {
                let path = base.appending(number: number)
                XCTAssertEqual(ObjectPath(path.rawValue), path, path.rawValue)
            }
        }
        XCTAssertEqual(org.appending(number: 42).rawValue, "/org/42")
        XCTAssertEqual(ObjectPath.root.appending(number: 42).rawValue, "/42")
    }

    func testSignatureValidationAndSplitting() throws {
        let empty = "", vardict = "a{sv}"
        XCTAssertNotNil(Signature(empty))
        XCTAssertNotNil(Signature(vardict))
        for bad in ["a", "a{vs}", "(", "{sv}", "z", String(repeating: "a", count: 40) + "s"] {
            XCTAssertNil(Signature(bad), bad)
        }
        XCTAssertEqual(Signature("sa{sv}as").completeTypes, ["s", "a{sv}", "as"])
        XCTAssertTrue(Signature("a(xx)").isSingleCompleteType)
        XCTAssertFalse(Signature("ss").isSingleCompleteType)
        XCTAssertTrue(Signature("s").isBasicType)
        XCTAssertFalse(Signature("v").isBasicType)
    }

    func testSignaturesOfValues() {
        XCTAssertEqual(DBusValue.vardict([:]).signature, "a{sv}")
        XCTAssertEqual(DBusValue.vardictArray([]).signature, "aa{sv}")
        XCTAssertEqual(DBusValue.array(element: "(xx)", []).signature, "a(xx)")
        XCTAssertEqual(DBusValue.structure([.string("a"), .string("b")]).signature, "(ss)")
        XCTAssertEqual(DBusValue.variant(.int64(1)).signature, "v")
        XCTAssertEqual([DBusValue.string("a"), .objectPath("/x")].signature, "so")
    }

    func testSwiftTypesStandForTheirDBusTypes() {
        XCTAssertEqual([DBusTriple<ObjectPath, String, String>].dbusSignature, "a(oss)")
        XCTAssertEqual(DBusPair<Bool, DBusTriple<ObjectPath, String, String>>.dbusSignature, "(b(oss))")
        XCTAssertEqual([String: DBusValue].dbusSignature, "a{sv}")
        XCTAssertEqual([DBusPair<Int64, Int64>].dbusSignature, "a(xx)")
        // each encodes to a value of its declared signature, and decodes back
        let triple = DBusTriple<ObjectPath, String, String>("/p", "name", "")
        XCTAssertEqual(triple.dbusValue.signature, DBusTriple<ObjectPath, String, String>.dbusSignature)
        XCTAssertEqual(DBusTriple<ObjectPath, String, String>(dbusValue: triple.dbusValue), triple)
        XCTAssertEqual((["/a"] as [ObjectPath]).dbusValue, .objectPathArray(["/a"]), "an [ObjectPath] is held as a list")
        XCTAssertEqual([ObjectPath](dbusValue: .objectPathArray(["/a", "/b"])), ["/a", "/b"])
        XCTAssertEqual([DBusPair<Int64, Int64>]().dbusValue.signature, "a(xx)", "an empty array keeps its element type")
        XCTAssertEqual([String](dbusValue: .stringArray(["x"])), ["x"])
        XCTAssertEqual([String: DBusValue](dbusValue: .vardict(["n": .int64(1)])), ["n": .int64(1)], "values lose their variant")
        XCTAssertEqual([String: DBusValue].init(dbusValue: .vardict([:]))?.isEmpty, true)
        // a value of another type is refused, never read as a default
        XCTAssertNil(Int64(dbusValue: .int32(1)))
        XCTAssertNil(DBusPair<String, String>(dbusValue: .structure([.string("a")])))
    }

    func testAnArgumentItsTypeRefusesIsInvalidArgsNamingIt() throws {
        let arguments = TypedArguments(values: [.int64(5), .int32(1)], names: ["Offset", "Count"], method: "Seek")
        XCTAssertEqual(try arguments.decode(0) as Int64, 5)
        XCTAssertThrowsError(try arguments.decode(1) as Int64) { error in
            XCTAssertEqual(error as? DBusError, .invalidArgs("Seek: argument 2 (Count) is not a valid 'x'"))
        }
        XCTAssertThrowsError(try arguments.decode(2) as String) { error in
            XCTAssertEqual(error as? DBusError, .invalidArgs("Seek: argument 3 is not a valid 's'"))
        }
    }

    func testValidationRefusesWhatLibdbusWouldAbortOn() {
        XCTAssertThrowsError(try DBusValue.array(element: .string, [.int32(1)]).validate())
        XCTAssertThrowsError(try DBusValue.array(element: "ss", []).validate())
        XCTAssertThrowsError(try DBusValue.dictionary(key: .variant, value: .string, []).validate())
        XCTAssertThrowsError(try DBusValue.dictionary(key: .string, value: .variant, [.init(.string("k"), .string("not a variant"))]).validate())
        XCTAssertThrowsError(try DBusValue.structure([]).validate())
        // aa{sv} (GetTracksMetadata) holding a dictionary of other types, or one whose variant is bad
        let metadata = DBusValue.dictionary(key: .string, value: .variant, [.init(.string("xesam:artist"), .variant(.stringArray(["A"])))])
        XCTAssertNoThrow(try DBusValue.array(element: "a{sv}", [metadata, metadata]).validate())
        XCTAssertThrowsError(try DBusValue.array(element: "a{sv}", [metadata, .dictionary(key: .string, value: .string, [])]).validate())
        XCTAssertThrowsError(try DBusValue.array(element: "a{sv}", [metadata, .dictionary(key: .objectPath, value: .variant, [])]).validate())
        XCTAssertThrowsError(try DBusValue.array(element: "a{sv}", [.dictionary(key: .string, value: .variant,
                                                                               [.init(.string("k"), .variant(.array(element: .string, [.int32(1)])))])]).validate())
        var deep = DBusValue.int32(1)
        for _ in 0..<40 { deep = .array(element: deep.signature, [deep]) }
        XCTAssertThrowsError(try Message.signal(path: "/a", interface: "io.x.Y", member: "Z", arguments: [deep]))
    }

    func testInvalidNamesThrowInsteadOfAborting() {
        XCTAssertThrowsError(try Message.signal(path: "/a", interface: "no_dots", member: "Z"))
        XCTAssertThrowsError(try Message.signal(path: "/a", interface: "io.x.Y", member: "bad.member"))
        XCTAssertThrowsError(try Message.methodCall(destination: "bad name", path: "/a", interface: nil, member: "M"))
        XCTAssertThrowsError(try Message.methodCall(destination: nil, path: "/a", interface: "io.x\u{0}.Y", member: "M"))
    }

    func testReplyingToAMessageThatWasNeverReceivedThrows() throws {
        // libdbus would abort in dbus_message_set_reply_serial (serial 0).
        let call = try Message.methodCall(destination: "io.x.Y", path: "/a", interface: "io.x.Y", member: "M")
        XCTAssertThrowsError(try call.errorReply(.invalidArgs("bad")))
        XCTAssertThrowsError(try call.methodReturn([.int32(1)]))
        let signal = try Message.signal(path: "/a", interface: "io.x.Y", member: "Z")
        XCTAssertThrowsError(try signal.methodReturn())
        // A sent message is locked: appending to it would abort in _dbus_message_iter_append_check.
        signal.isLocked = true
        XCTAssertThrowsError(try signal.append([.int32(1)]))
    }

    /// A numbered `ao` (track ids) is written out only when encoded; it equals, hashes and decodes
    /// as the same paths held one by one.
    func testNumberedObjectPathsAreThePathsTheyName() throws {
        let numbers: [UInt64] = [1, 9, 10, 12_345, 0, .max]
        for prefix: ObjectPath in ["/io/github/tonearm/Track", .root] {
            let numbered = DBusValue.objectPathArray(numbered: numbers, under: prefix)
            let paths = DBusValue.objectPathArray(numbers.map { prefix.appending(number: $0) })
            XCTAssertEqual(numbered, paths)
            XCTAssertEqual(numbered.hashValue, paths.hashValue)
            XCTAssertEqual(numbered.signature, "ao")
            XCTAssertEqual(numbered.arrayValue, paths.arrayValue)
            let message = try Message.signal(path: "/a", interface: "io.x.Y", member: "Z", arguments: [numbered, .variant(numbered)])
            XCTAssertEqual(try message.arguments(), [paths, .variant(paths)])
        }
        XCTAssertNotEqual(DBusValue.objectPathArray(numbered: [1, 2], under: "/a"), .objectPathArray(numbered: [1, 2], under: "/b"))
        XCTAssertNotEqual(DBusValue.objectPathArray(numbered: [1, 2], under: "/a"), .objectPathArray(["/a/1"]))
        XCTAssertEqual(DBusValue.objectPathArray(numbered: [], under: "/a"), .objectPathArray([]))
    }

    func testEveryTypeRoundTripsThroughAMessage() throws {
        let values: [DBusValue] = ServiceTests.allValues + [
            .byte(255), .int16(-2), .uint16(3), .uint64(.max), .signature("a{sv}"),
            .array(element: "v", [.variant(.variant(.bool(false)))]),
            .dictionary(key: .uint32, value: "as", [.init(.uint32(1), .stringArray(["z"]))]),
            .structure([.structure([.objectPath("/n")]), .vardict(["deep": .vardictArray([["x": .double(2)]])])]),
        ]
        let message = try Message.signal(path: "/a", interface: "io.x.Y", member: "Z", arguments: values)
        XCTAssertEqual(message.signature, values.signature)
        XCTAssertEqual(try message.arguments(), values)
    }

    func testHostileStringsAreRepaired() throws {
        XCTAssertEqual(String(dbusRepairing: [0x66, 0xFF, 0x00, 0x6F]), "f\u{FFFD}o")
        XCTAssertEqual(String(dbusRepairing: [0xC3]), "\u{FFFD}")  // truncated sequence
        XCTAssertEqual(String(dbusRepairing: [0xED, 0xA0, 0x80]), "\u{FFFD}\u{FFFD}\u{FFFD}")  // encoded surrogate
        let bytes: [CChar] = [0x41, CChar(bitPattern: 0xFE), 0x42, 0]
        XCTAssertEqual(bytes.withUnsafeBufferPointer { String(dbusRepairingCString: $0.baseAddress!) }, "A\u{FFFD}B")
        XCTAssertEqual(DBusValue.string(repairing: [0x80]), .string("\u{FFFD}"))

        // Embedded NUL in a Swift string: sent without it, also inside containers.
        let message = try Message.signal(path: "/a", interface: "io.x.Y", member: "Z", arguments: [
            .string("a\u{0}b"), .vardict(["k\u{0}": .string("\u{0}v")]),
        ])
        XCTAssertEqual(try message.arguments(), [.string("ab"), .vardict(["k": .string("v")])])
        // Noncharacters are valid for libdbus 1.14 (dbus_validate_utf8), and pass unchanged.
        let noncharacters = String(decoding: [0xEF, 0xBF, 0xBE, 0xEF, 0xB7, 0x90] as [UInt8], as: UTF8.self)  // U+FFFE U+FDD0
        XCTAssertEqual(noncharacters.unicodeScalars.map(\.value), [0xFFFE, 0xFDD0])
        let odd = try Message.signal(path: "/a", interface: "io.x.Y", member: "Z", arguments: [.string(noncharacters)])
        XCTAssertEqual(try odd.arguments(), [.string(noncharacters)])
    }

    func testAccessors() {
        let metadata = DBusValue.vardict(["xesam:artist": .stringArray(["A", "B"]), "mpris:length": .int64(7)])
        let dict = metadata.stringKeyedDictionary
        XCTAssertEqual(dict?["xesam:artist"]?.stringArrayValue, ["A", "B"])
        XCTAssertEqual(dict?["mpris:length"]?.int64Value, 7)
        XCTAssertEqual(DBusValue.variant(.variant(.double(1))).doubleValue, 1)
        XCTAssertNil(DBusValue.int32(1).stringValue)
    }

    func testErrorConversion() {
        struct Custom: DBusErrorConvertible { var dbusError: DBusError { DBusError(name: "io.github.tonearm.Error.X", message: "x") } }
        struct Plain: Error {}
        XCTAssertEqual(DBusError(Custom()).name, "io.github.tonearm.Error.X")
        XCTAssertEqual(DBusError(Plain()).name, DBusError.Name.failed)
        XCTAssertEqual(DBusError(DBusError.unknownMethod("m")), .unknownMethod("m"))
    }
}

/// The introspection reader and the table-against-XML check, on the repository's `dbus/` files.
final class IntrospectionTests: XCTestCase {
    static let dbusDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("dbus")

    func testParsesTheRepositoryXML() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.dbusDirectory.path).filter { $0.hasSuffix(".xml") }
        XCTAssertFalse(files.isEmpty, "no XML in \(Self.dbusDirectory.path)")
        for file in files {
            let xml = try String(contentsOf: Self.dbusDirectory.appendingPathComponent(file), encoding: .utf8)
            let interfaces = try Introspection.parse(xml)
            XCTAssertEqual(interfaces.map(\.name), [String(file.dropLast(4))], file)
            XCTAssertNotNil(Introspection.interfaceElements(of: xml), file)
        }
        let player = try XCTUnwrap(try Introspection.parse(
            String(contentsOf: Self.dbusDirectory.appendingPathComponent("org.mpris.MediaPlayer2.Player.xml"), encoding: .utf8)).first)
        XCTAssertEqual(player.properties["Position"], .init(type: "x", access: "read", emitsChanged: "false"))
        XCTAssertEqual(player.methods["SetPosition"], .init(inSignature: "ox", outSignature: "", inNames: ["TrackId", "Position"]))
        XCTAssertEqual(player.signals["Seeked"], "x")
    }

    func testTableAgainstXML() throws {
        let table = InterfaceDescription(
            name: "io.x.T",
            methods: [.init("Seek", in: "x") { _, _ in [] }, .init("Get", in: "s", out: "a{sv}") { _, _ in [] }],
            properties: [
                .init("Position", "x", emitsChanged: .false, get: { .int64(0) }),
                .init("Volume", "d", get: { .double(1) }, set: { _, _ in }),
            ],
            signals: [.init("Seeked", "x")])
        XCTAssertEqual(try table.differences(fromXML: Introspection.document(interfaces: [table], children: [])), [])
        let xml = """
            <node><!-- a comment with <interface name="fake"> inside -->
              <interface name="io.x.T">
                <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="invalidates"/>
                <method name="Seek"><arg type="i" direction="in"/></method>
                <method name="Get"><annotation name="org.gtk.GDBus.DocString" value="a > b"/>
                  <arg type="s"/><arg type="a{sv}" direction="out"/></method>
                <method name="Extra"/>
                <property name="Position" type="x" access="read"/>
                <property name="Volume" type="d" access="read"/>
                <signal name="Seeked"><arg type="x"/></signal>
              </interface>
            </node>
            """
        XCTAssertEqual(try table.differences(fromXML: xml), [
            "io.x.T: method Extra is in the XML but not in the table",
            "io.x.T.Seek: table 'x' → '', XML 'i' → ''",
            "io.x.T.Position: EmitsChangedSignal false in the table, invalidates in the XML",
            "io.x.T.Volume: access readwrite in the table, read in the XML",
            "io.x.T.Volume: EmitsChangedSignal true in the table, invalidates in the XML",
        ])
        XCTAssertEqual(try table.differences(fromXML: "<node/>"), ["io.x.T: not declared in the XML"])
    }

    func testTypedTableAgainstXML() throws {
        let table = InterfaceDescription(
            name: "io.x.T",
            methods: [.typed("Seek", arguments: ["Offset"]) { (_: Int64, _) in }, .init("Get", in: "s", out: "a{sv}") { _, _ in [] }],
            properties: [.typed("Volume", get: { 1.0 })],
            signals: [.typed("Seeked", Int64.self), .init("Moved", "o")])
        XCTAssertEqual(table.signal(named: "Seeked")?.signature, "x")
        let xml = """
            <node><interface name="io.x.T">
              <method name="Seek"><arg type="x" name="offset" direction="in"/></method>
              <method name="Get"><arg type="s"/><arg type="a{sv}" direction="out"/></method>
              <property name="Volume" type="d" access="read"/>
              <signal name="Seeked"><arg type="x"/></signal>
              <signal name="Moved"><arg type="o"/></signal>
            </interface></node>
            """
        XCTAssertEqual(try table.differences(fromXML: xml), ["io.x.T.Seek: arguments [\"Offset\"] in the table, [\"offset\"] in the XML"])
        XCTAssertEqual(try table.differences(fromXML: xml, requiringTypes: true), [
            "io.x.T.Seek: arguments [\"Offset\"] in the table, [\"offset\"] in the XML",
            "io.x.T.Get: method not typed",
            "io.x.T.Moved: signal not typed",
        ])
    }
}
