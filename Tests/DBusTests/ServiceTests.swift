import DBus
import Dispatch
import Foundation
import TestSupport
import XCTest

/// The object server driven by real clients (busctl, dbus-send) and by a second connection, on a
/// private dbus-daemon started once for the class.
final class ServiceTests: XCTestCase {
    nonisolated(unsafe) static var bus: PrivateBus!
    nonisolated(unsafe) static var counter = 0

    var bus: PrivateBus { Self.bus }
    var service: TestService!
    var client: Client!
    var busName: String { service.busName }
    let iface = TestService.interface
    let path = TestService.path.rawValue

    override class func setUp() {
        super.setUp()
        do { bus = try PrivateBus() } catch { XCTFail("cannot start dbus-daemon: \(error)") }
    }

    override class func tearDown() {
        bus?.stop()
        bus = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        guard Self.bus != nil else { throw TestError("no private bus") }
        Self.counter += 1
        // A fresh name per test: the bus may see the previous test's disconnect after our RequestName.
        service = try TestService(bus: bus, name: "io.github.tonearm.Test.T\(Self.counter)")
        client = try Client(bus: bus)
    }

    override func tearDownWithError() throws {
        client?.close()
        service?.close()
    }

    func call(_ member: String, _ arguments: [DBusValue] = [], interface: String? = TestService.interface,
              path: ObjectPath = TestService.path) throws -> Result<[DBusValue], DBusError> {
        try client.call(self, destination: busName, path: path, interface: interface, member, arguments)
    }

    static let allValues: [DBusValue] = [
        .string("hello"), .objectPath("/a/b"), .bool(true), .int32(-5), .uint32(7), .int64(-9), .double(1.5),
        .stringArray(["a", "b"]), .objectPathArray(["/x"]),
        .vardict(["k": .string("v"), "n": .int64(42)]),
        .vardictArray([["k": .int32(3)], [:]]),
        .variant(.string("inner")),
        .array(element: "(xx)", [.structure([.int64(1), .int64(2)]), .structure([.int64(3), .int64(4)])]),
        .structure([.string("a"), .string("b")]),
    ]

    // MARK: Methods

    func testEchoRoundTripsEveryTypeWithBusctl() throws {
        let out = try Tool.busctl(bus, [
            "--json=short", "--", "call", busName, path, iface, "Echo", TestService.allTypes.rawValue,
            "hello", "/a/b", "true", "-5", "7", "-9", "1.5",
            "2", "a", "b", "1", "/x",
            "2", "k", "s", "v", "n", "x", "42",
            "2", "1", "k", "i", "3", "0",
            "s", "inner",
            "2", "1", "2", "3", "4",
            "a", "b",
        ])
        // What the handler decoded.
        XCTAssertEqual(service.sync { service.lastEchoArguments }, Self.allValues)
        // What busctl decoded from our encoding.
        let json = try XCTUnwrap(try Tool.json(out) as? [String: Any])
        XCTAssertEqual(json["type"] as? String, TestService.allTypes.rawValue)
        let data = try XCTUnwrap(json["data"] as? [Any])
        XCTAssertEqual(data.count, 14)
        XCTAssertEqual(data[0] as? String, "hello")
        XCTAssertEqual(data[1] as? String, "/a/b")
        XCTAssertEqual(data[2] as? Bool, true)
        XCTAssertEqual(data[3] as? Int, -5)
        XCTAssertEqual(data[4] as? Int, 7)
        XCTAssertEqual(data[5] as? Int, -9)
        XCTAssertEqual(data[6] as? Double, 1.5)
        XCTAssertEqual(data[7] as? [String], ["a", "b"])
        XCTAssertEqual(data[8] as? [String], ["/x"])
        let dict = try XCTUnwrap(data[9] as? [String: [String: Any]])
        XCTAssertEqual(dict["k"]?["type"] as? String, "s")
        XCTAssertEqual(dict["k"]?["data"] as? String, "v")
        XCTAssertEqual(dict["n"]?["type"] as? String, "x")
        XCTAssertEqual(dict["n"]?["data"] as? Int, 42)
        let dicts = try XCTUnwrap(data[10] as? [[String: [String: Any]]])
        XCTAssertEqual(dicts.count, 2)
        XCTAssertEqual(dicts[0]["k"]?["data"] as? Int, 3)
        XCTAssertEqual(dicts[1].count, 0)
        let variant = try XCTUnwrap(data[11] as? [String: Any])
        XCTAssertEqual(variant["type"] as? String, "s")
        XCTAssertEqual(variant["data"] as? String, "inner")
        XCTAssertEqual(data[12] as? [[Int]], [[1, 2], [3, 4]])
        XCTAssertEqual(data[13] as? [String], ["a", "b"])
    }

    func testEchoRoundTripsEveryTypeWithConnectionCall() throws {
        let reply = try call("Echo", Self.allValues)
        XCTAssertEqual(reply.value, Self.allValues)
    }

    func testCallWithoutInterfaceIsResolvedByMember() throws {
        XCTAssertEqual(try call("Echo", Self.allValues, interface: nil).value, Self.allValues)
        // A standard interface's member, too.
        XCTAssertNotNil(try call("Introspect", interface: nil).value?.first?.stringValue)
    }

    func testSignatureMismatchIsInvalidArgsNamingBothSignatures() throws {
        let error = try XCTUnwrap(try call("Echo", [.string("only one")]).failure)
        XCTAssertEqual(error.name, DBusError.Name.invalidArgs)
        XCTAssertTrue(error.message.contains("'\(TestService.allTypes)'"), error.message)
        XCTAssertTrue(error.message.contains("'s'"), error.message)
        XCTAssertEqual(service.sync { service.lastEchoArguments }, [], "the handler must not run")

        let sent = try Tool.dbusSend(bus, ["--dest=\(busName)", path, "\(iface).Later", "int32:5"])
        XCTAssertNotEqual(sent.status, 0)
        XCTAssertTrue(sent.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs"), sent.stderr)
        XCTAssertTrue(sent.stderr.contains("expects arguments of signature 's' but received 'i'"), sent.stderr)
    }

    func testUnknownMethodInterfaceAndObject() throws {
        XCTAssertEqual(try call("Nope").failure?.name, DBusError.Name.unknownMethod)
        XCTAssertEqual(try call("Nope", interface: nil).failure?.name, DBusError.Name.unknownMethod)
        XCTAssertEqual(try call("Echo", interface: "io.github.tonearm.Missing").failure?.name, DBusError.Name.unknownInterface)
        XCTAssertEqual(try call("Echo", path: "/nowhere").failure?.name, DBusError.Name.unknownObject)

        let sent = try Tool.dbusSend(bus, ["--dest=\(busName)", path, "\(iface).Nope"])
        XCTAssertTrue(sent.stderr.contains("org.freedesktop.DBus.Error.UnknownMethod"), sent.stderr)
    }

    func testHandlerErrorsBecomeErrorReplies() throws {
        XCTAssertEqual(try call("Fail").failure, DBusError(name: "io.github.tonearm.Error.Test", message: "it failed on purpose"))
        let bad = try XCTUnwrap(try call("FailBadName").failure)
        XCTAssertEqual(bad.name, DBusError.Name.failed)
        XCTAssertTrue(bad.message.contains("oops"))
        let badReturn = try XCTUnwrap(try call("BadReturn").failure)
        XCTAssertEqual(badReturn.name, DBusError.Name.failed)
        XCTAssertTrue(badReturn.message.contains("'i' instead of 's'"), badReturn.message)
    }

    func testDeferredReplies() throws {
        XCTAssertEqual(try call("Later", [.string("x")]).value, [.string("later: x")])
        let dropped = try XCTUnwrap(try call("Dropped").failure)
        XCTAssertEqual(dropped.name, DBusError.Name.failed)
        XCTAssertTrue(dropped.message.contains("without a reply"), dropped.message)
    }

    func testTypedEntriesDecodeTheirArgumentsAndEncodeTheirResults() throws {
        XCTAssertEqual(try call("Join", [.stringArray(["a", "b"]), .string("-")]).value, [.string("a-b")])
        XCTAssertEqual(try call("Swap", [.int64(7), .objectPath("/x")]).value, [.structure([.objectPath("/x"), .int64(7)])])
        // a typed entry's signature is its Swift types': a wrong one never reaches the handler
        let wrong = try XCTUnwrap(try call("Join", [.string("a"), .string("-")]).failure)
        XCTAssertEqual(wrong.name, DBusError.Name.invalidArgs)
        XCTAssertTrue(wrong.message.contains("expects arguments of signature 'ass'"), wrong.message)

        XCTAssertEqual(try call("Get", [.string(iface), .string("Rating")], interface: "org.freedesktop.DBus.Properties").value,
                       [.variant(.int32(3))])
        XCTAssertNotNil(try call("Set", [.string(iface), .string("Rating"), .variant(.int32(5))], interface: "org.freedesktop.DBus.Properties").value)
        XCTAssertEqual(service.sync { service.rating }, 5)
        let refused = try XCTUnwrap(try call("Set", [.string(iface), .string("Rating"), .variant(.string("5"))],
                                             interface: "org.freedesktop.DBus.Properties").failure)
        XCTAssertEqual(refused.name, DBusError.Name.invalidArgs)
    }

    func testContextKnowsTheSender() throws {
        let unique = client.queue.sync { client.connection.uniqueName }
        XCTAssertEqual(try call("Sender").value, [.string(unique)])
    }

    func testNoReplyExpectedCallRunsWithoutReply() throws {
        let ran = expectation(description: "Notify ran")
        service.sync { service.notified = { ran.fulfill() } }
        let sent = try Tool.run("dbus-send", ["--bus=\(bus.address)", "--type=method_call", "--dest=\(busName)", path, "\(iface).Notify"])
        XCTAssertEqual(sent.status, 0, sent.stderr)
        wait(for: [ran], timeout: 10)

        let ranAgain = expectation(description: "Notify ran again")
        service.sync { service.notified = { ranAgain.fulfill() } }
        try client.queue.sync {
            let message = try Message.methodCall(destination: busName, path: TestService.path, interface: iface, member: "Notify",
                                                 noReplyExpected: true)
            try client.connection.send(message)
            XCTAssertTrue(message.isLocked)
        }
        wait(for: [ranAgain], timeout: 10)
    }

    // MARK: Hostile strings

    func testHostileStringsGoOutRepaired() throws {
        let out = try Tool.busctl(bus, ["--json=short", "call", busName, path, iface, "Hostile"])
        let json = try XCTUnwrap(try Tool.json(out) as? [String: Any])
        XCTAssertEqual(json["data"] as? [String], ["f\u{FFFD}o", "ab"])
        XCTAssertEqual(try call("Hostile").value, [.string("f\u{FFFD}o"), .string("ab")])
    }

    // MARK: Properties

    func testGetAndGetAll() throws {
        XCTAssertEqual(try Tool.busctl(bus, ["get-property", busName, path, iface, "Title"]), "s \"first\"\n")
        let out = try Tool.busctl(bus, ["--json=short", "call", busName, path, "org.freedesktop.DBus.Properties", "GetAll", "s", iface])
        let json = try XCTUnwrap(try Tool.json(out) as? [String: Any])
        let all = try XCTUnwrap((json["data"] as? [Any])?.first as? [String: [String: Any]])
        XCTAssertEqual(Set(all.keys), ["Title", "Volume", "Count", "Rating", "Secret", "Position", "Identity", "Anything", "Tags", "Metadata", "Paths", "Labels"])
        XCTAssertEqual(all["Title"]?["type"] as? String, "s")
        XCTAssertEqual(all["Volume"]?["data"] as? Double, 0.5)
        XCTAssertEqual(all["Position"]?["type"] as? String, "x")
        XCTAssertEqual(all["Tags"]?["data"] as? [String], ["x", "y"])
        XCTAssertEqual(all["Metadata"]?["type"] as? String, "a{sv}")

        let viaClient = try XCTUnwrap(try call("GetAll", [.string(iface)], interface: "org.freedesktop.DBus.Properties").value?.first)
        XCTAssertEqual(viaClient.stringKeyedDictionary?["Count"], .variant(.int32(0)))
        XCTAssertEqual(try call("GetAll", [.string("org.freedesktop.DBus.Peer")], interface: "org.freedesktop.DBus.Properties").value,
                       [.vardict([:])])
    }

    /// A property that keeps its encoded reply: its getter runs once per announced change, and
    /// every client gets the value of the last change announced, each in a reply to its own call.
    func testAKeptReplyIsEncodedOncePerChangeAndGoesWithEachAnnouncedChange() throws {
        let props = "org.freedesktop.DBus.Properties"
        func paths() throws -> [DBusValue]? { try call("Get", [.string(iface), .string("Paths")], interface: props).value }
        service.sync { service.pathsReads = 0 }
        XCTAssertEqual(try paths(), [.variant(.objectPathArray(["/p/1", "/p/2"]))])
        XCTAssertEqual(try Tool.busctl(bus, ["get-property", busName, path, iface, "Paths"]), "ao 2 \"/p/1\" \"/p/2\"\n")
        XCTAssertEqual(try paths(), [.variant(.objectPathArray(["/p/1", "/p/2"]))])
        XCTAssertEqual(service.sync { service.pathsReads }, 1, "three Gets with no change between them read the value once")

        // invalidated (as a track list is on every edit): the next Get reads the new value
        try service.sync {
            service.paths = ["/p/3"]
            try service.object.emitPropertiesChanged(interface: iface, changed: [:], invalidated: ["Paths"])
        }
        XCTAssertEqual(try paths(), [.variant(.objectPathArray(["/p/3"]))])
        XCTAssertEqual(try Tool.busctl(bus, ["get-property", busName, path, iface, "Paths"]), "ao 1 \"/p/3\"\n")
        XCTAssertEqual(service.sync { service.pathsReads }, 2)

        // a change found by propertiesMayHaveChanged drops the kept reply too
        func labels() throws -> [DBusValue]? { try call("Get", [.string(iface), .string("Labels")], interface: props).value }
        XCTAssertEqual(try labels(), [.variant(.stringArray(["one"]))])
        service.sync {
            service.labels = ["two"]
            service.object.propertiesMayHaveChanged(interface: iface)
        }
        service.sync { service.object.flushPropertyChanges() }
        XCTAssertEqual(try labels(), [.variant(.stringArray(["two"]))])
        // not announced yet: what clients were last told
        service.sync { service.labels = ["three"] }
        XCTAssertEqual(try labels(), [.variant(.stringArray(["two"]))])
    }

    func testAKeptReplyOfAPropertyWhoseChangesAreNotAnnouncedIsRefused() throws {
        let table = InterfaceDescription(name: "io.github.tonearm.Kept1", properties: [
            .init("Silent", "as", emitsChanged: .false, keepsEncodedReply: true, get: { .stringArray([]) }),
        ])
        try service.sync {
            XCTAssertThrowsError(try service.server.register([table], at: "/io/github/tonearm/Kept")) { error in
                XCTAssertEqual((error as? DBusError)?.name, DBusError.Name.invalidArgs)
            }
        }
    }

    func testUnknownPropertyAndInterface() throws {
        let props = "org.freedesktop.DBus.Properties"
        XCTAssertEqual(try call("Get", [.string(iface), .string("Nope")], interface: props).failure?.name, DBusError.Name.unknownProperty)
        XCTAssertEqual(try call("Get", [.string("io.x.Missing"), .string("Title")], interface: props).failure?.name, DBusError.Name.unknownInterface)
        XCTAssertEqual(try call("GetAll", [.string("io.x.Missing")], interface: props).failure?.name, DBusError.Name.unknownInterface)
        XCTAssertEqual(try call("Set", [.string(iface), .string("Nope"), .variant(.int32(1))], interface: props).failure?.name,
                       DBusError.Name.unknownProperty)
    }

    func testSetReadOnlyIsPropertyReadOnly() throws {
        let sent = try Tool.dbusSend(bus, ["--dest=\(busName)", path, "org.freedesktop.DBus.Properties.Set",
                                            "string:\(iface)", "string:Count", "variant:int32:5"])
        XCTAssertNotEqual(sent.status, 0)
        XCTAssertTrue(sent.stderr.contains("org.freedesktop.DBus.Error.PropertyReadOnly"), sent.stderr)
        XCTAssertEqual(service.sync { service.count }, 0)
    }

    func testSetWithWrongVariantTypeIsRefusedBeforeTheSetterRuns() throws {
        let sent = try Tool.dbusSend(bus, ["--dest=\(busName)", path, "org.freedesktop.DBus.Properties.Set",
                                            "string:\(iface)", "string:Volume", "variant:string:loud"])
        XCTAssertNotEqual(sent.status, 0)
        XCTAssertTrue(sent.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs"), sent.stderr)
        XCTAssertTrue(sent.stderr.contains("type 'd' but the value given has type 's'"), sent.stderr)
        XCTAssertEqual(service.sync { service.volumeSetCalls }, 0)
        XCTAssertEqual(try Tool.busctl(bus, ["get-property", busName, path, iface, "Volume"]), "d 0.5\n")
    }

    func testSetThroughBusctlAndSetterRefusal() throws {
        _ = try Tool.busctl(bus, ["set-property", busName, path, iface, "Volume", "d", "0.25"])
        XCTAssertEqual(service.sync { service.volume }, 0.25)
        let refused = try Tool.dbusSend(bus, ["--dest=\(busName)", path, "org.freedesktop.DBus.Properties.Set",
                                               "string:\(iface)", "string:Volume", "variant:double:-1"])
        XCTAssertTrue(refused.stderr.contains("Volume must be at least 0"), refused.stderr)
        XCTAssertEqual(service.sync { service.volume }, 0.25)
    }

    func testVariantTypedPropertyTakesAnyValue() throws {
        let props = "org.freedesktop.DBus.Properties"
        XCTAssertEqual(try call("Set", [.string(iface), .string("Anything"), .variant(.int32(3))], interface: props).value, [])
        XCTAssertEqual(service.sync { service.anything }, .variant(.int32(3)))
    }

    // MARK: PropertiesChanged

    /// Collects signals from the service; `next()` waits for the next one.
    final class SignalLog {
        private var signals: [Message] = []
        private var waiting: XCTestExpectation?
        let lock = NSLock()

        func append(_ message: Message) {
            lock.lock()
            signals.append(message)
            let expectation = waiting
            waiting = nil
            lock.unlock()
            expectation?.fulfill()
        }

        func next(_ test: XCTestCase) -> Message? {
            lock.lock()
            if !signals.isEmpty {
                defer { lock.unlock() }
                return signals.removeFirst()
            }
            let expectation = test.expectation(description: "signal")
            waiting = expectation
            lock.unlock()
            test.wait(for: [expectation], timeout: 10)
            lock.lock()
            defer { lock.unlock() }
            return signals.isEmpty ? nil : signals.removeFirst()
        }
    }

    func subscribe() throws -> SignalLog {
        let log = SignalLog()
        try client.subscribe(sender: busName) { log.append($0) }
        return log
    }

    func emitMarker(_ text: String) throws {
        try service.sync { try service.object.emitSignal(interface: iface, name: "Marker", arguments: [.string(text)]) }
    }

    func testPropertiesChangedIsBatchedDiffedAndFollowsEmitsChanged() throws {
        let log = try subscribe()
        service.sync {
            // Several changes and several notifications in one turn of the queue: one signal.
            service.title = "second"
            service.object.propertiesMayHaveChanged(interface: iface)
            service.count = 1
            service.count = 2
            service.secret = "revealed"
            service.position = 99  // emitsChanged false: never announced
            service.object.propertiesMayHaveChanged(interface: iface)
            service.object.propertiesMayHaveChanged()
        }
        let signal = try XCTUnwrap(log.next(self))
        XCTAssertEqual(signal.interface, "org.freedesktop.DBus.Properties")
        XCTAssertEqual(signal.member, "PropertiesChanged")
        XCTAssertEqual(signal.path, TestService.path)
        XCTAssertEqual(try signal.arguments(), [
            .string(iface),
            .dictionary(key: .string, value: .variant, [.init(.string("Title"), .variant(.string("second"))),
                                                        .init(.string("Count"), .variant(.int32(2)))]),
            .stringArray(["Secret"]),
        ])

        // Nothing changed since: no signal. The marker, sent after, must be the next signal.
        service.sync {
            service.object.propertiesMayHaveChanged(interface: iface)
            service.position = 100
            service.object.propertiesMayHaveChanged(interface: iface)
        }
        service.sync { service.object.flushPropertyChanges() }
        try emitMarker("after no change")
        let marker = try XCTUnwrap(log.next(self))
        XCTAssertEqual(marker.member, "Marker")
        XCTAssertEqual(try marker.arguments(), [.string("after no change")])

        // A restricted notification reads only the properties named.
        service.sync {
            service.title = "third"
            service.count = 3
            service.object.propertiesMayHaveChanged(interface: iface, properties: ["Count"])
        }
        let onlyCount = try XCTUnwrap(log.next(self))
        XCTAssertEqual(try onlyCount.arguments()[1], .vardict(["Count": .int32(3)]))
    }

    func testValuesThatComeBackAreAnnouncedEachTimeWithTheirOwnSerial() throws {
        // a signal kept encoded (a basic value seen before) is sent as a copy: each copy must carry
        // what changed this time, and a serial of its own; past the limit, older ones are dropped
        let log = try subscribe()
        // more distinct titles than the 16 kept per interface in between
        let titles = ["a", "b", "a", "b", "a"] + (0..<20).map { "n\($0)" } + ["a", "b", "a"]
        var serials = Set<UInt32>()
        for title in titles {
            service.sync {
                service.title = title
                service.object.propertiesMayHaveChanged(interface: iface, properties: ["Title"])
                service.object.flushPropertyChanges()
            }
            let signal = try XCTUnwrap(log.next(self))
            XCTAssertEqual(signal.member, "PropertiesChanged")
            XCTAssertEqual(try signal.arguments(), [.string(iface), .vardict(["Title": .string(title)]), .stringArray([])])
            XCTAssertTrue(serials.insert(signal.serial).inserted, "serial \(signal.serial) sent twice")
        }
    }

    func testPropertiesChangedSeenByDbusMonitor() throws {
        let monitor = try Monitor(bus: bus, rules: ["type='signal',path='\(path)'"])
        defer { monitor.stop() }
        service.sync {
            service.title = "monitored"
            service.secret = "new secret"
            service.position = 42
            service.object.propertiesMayHaveChanged(interface: iface)
            service.object.propertiesMayHaveChanged(interface: iface)
        }
        try emitMarker("end")
        let lines = try monitor.lines(through: { $0.contains("member=Marker") })
        let text = lines.joined(separator: "\n")
        XCTAssertEqual(lines.filter { $0.contains("member=PropertiesChanged") }.count, 1, text)
        let body = lines.drop(while: { !$0.contains("member=PropertiesChanged") }).map { $0.trimmingCharacters(in: .whitespaces) }
        XCTAssertEqual(Array(body.prefix(12)), [
            body.first ?? "",
            "string \"io.github.tonearm.Test1\"",
            "array [",
            "dict entry(",
            "string \"Title\"",
            "variant             string \"monitored\"",
            ")",
            "]",
            "array [",
            "string \"Secret\"",
            "]",
            body.count > 11 ? body[11] : "",
        ], text)
        XCTAssertFalse(text.contains("Position"), text)
    }

    func testSignalFlushesPendingPropertyChangesFirst() throws {
        let log = try subscribe()
        service.sync { service.title = "before the event"; service.object.propertiesMayHaveChanged(interface: iface) }
        try emitMarker("event")
        XCTAssertEqual(log.next(self)?.member, "PropertiesChanged")
        XCTAssertEqual(log.next(self)?.member, "Marker")
    }

    func testWhatACallChangedIsAnnouncedBeforeItsReply() throws {
        // the bus keeps one sender's messages in order: what dbus-monitor prints is what every
        // client receives, so one that reads its property cache on the reply sees the new title
        let unique = service.sync { service.connection.uniqueName }
        let monitor = try Monitor(bus: bus, rules: ["type='signal',path='\(path)'", "type='method_return',sender='\(unique)'"])
        defer { monitor.stop() }
        service.sync {
            service.notified = { [weak service] in
                service?.title = "changed by the call"
                service?.object.propertiesMayHaveChanged(interface: TestService.interface)
            }
        }
        _ = try Tool.busctl(bus, ["call", busName, path, iface, "Notify"])
        let lines = try monitor.lines(through: { $0.hasPrefix("method return") && $0.contains("sender=\(unique)") })
        let text = lines.joined(separator: "\n")
        let signal = try XCTUnwrap(lines.firstIndex { $0.contains("member=PropertiesChanged") }, text)
        XCTAssertTrue(lines[signal...].contains { $0.contains("\"changed by the call\"") }, text)
        XCTAssertLessThan(signal, lines.count - 1, text)
    }

    func testSetAnnouncesTheChange() throws {
        let log = try subscribe()
        _ = try Tool.busctl(bus, ["set-property", busName, path, iface, "Title", "s", "from busctl"])
        let signal = try XCTUnwrap(log.next(self))
        XCTAssertEqual(try signal.arguments()[1], .vardict(["Title": .string("from busctl")]))
    }

    func testExplicitPropertiesChangedFollowsEmitsChanged() throws {
        let log = try subscribe()
        try service.sync {
            try service.object.emitPropertiesChanged(
                interface: iface, changed: ["Title": .string("x"), "Secret": .string("y"), "Position": .int64(5), "Identity": .string("z")])
        }
        let signal = try XCTUnwrap(log.next(self))
        XCTAssertEqual(try signal.arguments(), [.string(iface), .vardict(["Title": .string("x")]), .stringArray(["Secret"])])
        try service.sync {
            XCTAssertThrowsError(try service.object.emitPropertiesChanged(interface: iface, changed: ["Title": .int32(1)]))
            XCTAssertThrowsError(try service.object.emitPropertiesChanged(interface: iface, changed: ["Nope": .int32(1)]))
            XCTAssertThrowsError(try service.object.emitSignal(interface: iface, name: "Marker", arguments: [.int32(1)]))
            XCTAssertThrowsError(try service.object.emitSignal(interface: iface, name: "Undeclared"))
        }
    }

    // MARK: Introspection, Peer

    func testIntrospectReturnsTheGivenXMLAndTheStandardInterfaces() throws {
        let xml = try XCTUnwrap(try call("Introspect", interface: "org.freedesktop.DBus.Introspectable").value?.first?.stringValue)
        XCTAssertTrue(xml.hasPrefix("<!DOCTYPE node PUBLIC"), xml)
        XCTAssertTrue(xml.contains(Introspection.interfaceElements(of: TestService.xml)!), xml)
        for standard in ["org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer"] {
            XCTAssertTrue(xml.contains("<interface name=\"\(standard)\">"), standard)
        }
        XCTAssertEqual(xml.components(separatedBy: "<?xml").count, 1, "the fragment's prolog must not be copied")

        // busctl parses it.
        let table = try Tool.busctl(bus, ["introspect", busName, path])
        XCTAssertTrue(table.contains("io.github.tonearm.Test1"), table)
        XCTAssertTrue(table.contains(".Echo"), table)

        // Parents of the object list their child node, so clients can walk the tree.
        let root = try Tool.busctl(bus, ["introspect", "--xml-interface", busName, "/"])
        XCTAssertTrue(root.contains("<node name=\"io\"/>"), root)
        let tree = try Tool.busctl(bus, ["tree", "--list", busName])
        XCTAssertTrue(tree.contains(path), tree)

        // gdbus parses it too.
        let gdbus = try Tool.run("gdbus", ["introspect", "--address", bus.address, "--dest", busName, "--object-path", path])
        XCTAssertEqual(gdbus.status, 0, gdbus.stderr)
        XCTAssertTrue(gdbus.stdout.contains("interface io.github.tonearm.Test1"), gdbus.stdout)
    }

    func testGeneratedIntrospectionXML() {
        var interface = InterfaceDescription(
            name: "io.x.Generated",
            methods: [.init("Seek", in: "x", inNames: ["Offset"]) { _, _ in [] }, .init("Stop") { _, _ in [] }],
            properties: [.init("Position", "x", emitsChanged: .false, get: { .int64(0) })],
            signals: [.init("Seeked", "x", argumentNames: ["Position"])])
        let xml = Introspection.generatedXML(for: interface)
        XCTAssertEqual(xml, """
            <interface name="io.x.Generated">
                <method name="Seek">
                  <arg name="Offset" type="x" direction="in"/>
                </method>
                <method name="Stop"/>
                <signal name="Seeked">
                  <arg name="Position" type="x"/>
                </signal>
                <property name="Position" type="x" access="read">
                  <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="false"/>
                </property>
              </interface>
            """)
        interface.introspectionXML = "no interface element here"
        XCTAssertTrue(Introspection.document(interfaces: [interface], children: []).contains(xml))
    }

    func testPeerPingAndMachineId() throws {
        _ = try Tool.busctl(bus, ["call", busName, path, "org.freedesktop.DBus.Peer", "Ping"])
        XCTAssertEqual(try call("Ping", interface: "org.freedesktop.DBus.Peer").value, [])
        XCTAssertEqual(try call("Ping", interface: nil).value, [])
        XCTAssertEqual(try call("GetMachineId", interface: "org.freedesktop.DBus.Peer").value?.first?.stringValue?.count, 32)
    }

    /// libdbus answers Peer calls that name the interface whatever their arguments; the object server
    /// takes Peer over so that a wrong signature is InvalidArgs there as on every other interface.
    func testPeerAndIntrospectableWithArgumentsAreInvalidArgs() throws {
        let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
        for interface in ["org.freedesktop.DBus.Peer", nil] {
            XCTAssertEqual(try call("Ping", [.string("x")], interface: interface).failure?.name, invalidArgs, "\(interface ?? "no interface")")
            XCTAssertEqual(try call("GetMachineId", [.int32(1)], interface: interface).failure?.name, invalidArgs)
        }
        XCTAssertEqual(try call("Introspect", [.string("x")], interface: "org.freedesktop.DBus.Introspectable").failure?.name, invalidArgs)
        XCTAssertEqual(try call("Frobnicate", interface: "org.freedesktop.DBus.Peer").failure?.name,
                       "org.freedesktop.DBus.Error.UnknownMethod")
        // on a path with no object, Peer still answers (as libdbus did), and checks its arguments too
        XCTAssertEqual(try call("Ping", interface: "org.freedesktop.DBus.Peer", path: "/").value, [])
        XCTAssertEqual(try call("Ping", [.string("x")], interface: "org.freedesktop.DBus.Peer", path: "/").failure?.name, invalidArgs)
        XCTAssertEqual(try call("Introspect", [.string("x")], interface: nil, path: "/").failure?.name, invalidArgs)
        // a real client: busctl
        let output = try Tool.run("busctl", ["--address=\(bus.address)", "call", busName, path, "org.freedesktop.DBus.Peer", "Ping", "s", "x"])
        XCTAssertNotEqual(output.status, 0)
        XCTAssertTrue(output.stderr.contains("expects arguments of signature ''"), output.stderr)
    }

    // MARK: Names

    func testRequestNameDoNotQueueWhenTaken() throws {
        try client.queue.sync {
            XCTAssertEqual(try client.connection.requestName(busName), .exists)
            XCTAssertEqual(try client.connection.requestName("io.github.tonearm.Free\(Self.counter)"), .primaryOwner)
            XCTAssertEqual(try client.connection.releaseName("io.github.tonearm.Free\(Self.counter)"), .released)
            XCTAssertEqual(try client.connection.releaseName(busName), .notOwner)
            XCTAssertThrowsError(try client.connection.requestName("not a bus name"))
        }
        try service.sync { XCTAssertEqual(try service.connection.requestName(busName), .alreadyOwner) }
    }

    func testBlockingCallToTheBus() throws {
        try client.queue.sync {
            let message = try Message.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                 interface: "org.freedesktop.DBus", member: "GetNameOwner", arguments: [.string(busName)])
            let reply = try client.connection.callBlocking(message)
            XCTAssertEqual(try reply.arguments(), [.string(service.sync { service.connection.uniqueName })])
            let missing = try Message.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                 interface: "org.freedesktop.DBus", member: "GetNameOwner", arguments: [.string("io.x.Nobody")])
            XCTAssertThrowsError(try client.connection.callBlocking(missing)) { error in
                XCTAssertEqual((error as? DBusError)?.name, "org.freedesktop.DBus.Error.NameHasNoOwner")
            }
        }
    }
}
