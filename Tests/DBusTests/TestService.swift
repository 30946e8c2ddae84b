import DBus
import Dispatch
import Foundation
import Logging
import TestSupport

/// The object the service tests export: one interface table with a method per case and properties of
/// every emitsChanged behaviour. Its state lives on `queue`, like a real adapter's.
final class TestService {
    static let interface = "io.github.tonearm.Test1"
    static let path: ObjectPath = "/io/github/tonearm/Test"
    static let allTypes: Signature = "sobiuxdasaoa{sv}aa{sv}va(xx)(ss)"

    let queue = DispatchQueue(label: "test.service")
    let busName: String
    var connection: Connection!
    var server: ObjectServer!
    var object: ExportedObject!

    // State read by the getters.
    var title = "first"
    var volume = 0.5
    var count: Int32 = 0
    var rating: Int32 = 3
    var secret = "hidden"
    var position: Int64 = 0
    var volumeSetCalls = 0
    var lastEchoArguments: [DBusValue] = []
    var notified: (() -> Void)?
    var anything: DBusValue = .variant(.string("any"))
    var paths: [ObjectPath] = ["/p/1", "/p/2"]
    /// How often the getter of `Paths` (which keeps its encoded reply) ran.
    var pathsReads = 0
    var labels = ["one"]

    init(bus: PrivateBus, name: String) throws {
        busName = name
        try queue.sync {
            connection = try Connection(address: bus.address, queue: queue, logger: .test)
            server = ObjectServer(connection: connection)
            object = try server.register([makeInterface()], at: Self.path)
            let result = try connection.requestName(name)
            guard result == .primaryOwner else { throw TestError("RequestName(\(name)) gave \(result)") }
        }
    }

    func close() {
        queue.sync { connection.close() }
    }

    /// Runs `body` on the service queue.
    func sync<T>(_ body: () throws -> T) rethrows -> T { try queue.sync(execute: body) }

    static let xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
          <interface name="io.github.tonearm.Test1">
            <method name="Echo"><arg name="all" type="s" direction="in"/></method>
            <property name="Title" type="s" access="readwrite"/>
          </interface>
        </node>
        """

    private func makeInterface() -> InterfaceDescription {
        InterfaceDescription(
            name: Self.interface,
            methods: [
                .init("Echo", in: Self.allTypes, out: Self.allTypes) { [unowned self] args, _ in
                    lastEchoArguments = args
                    return args
                },
                .init("Hostile", out: "ss") { _, _ in
                    [.string(repairing: [0x66, 0xFF, 0x00, 0x6F]), .string("a\u{0}b")]
                },
                .init("Fail") { _, _ in throw DBusError(name: "io.github.tonearm.Error.Test", message: "it failed on purpose") },
                .init("FailBadName") { _, _ in throw DBusError(name: "not an error name", message: "oops") },
                .init("BadReturn", out: "s") { _, _ in [.int32(1)] },
                .init("Later", in: "s", out: "s") { [unowned self] args, context in
                    let reply = context.deferReply()
                    queue.async { reply.succeed([.string("later: " + (args[0].stringValue ?? ""))]) }
                    return []
                },
                .init("Dropped", out: "s") { _, context in
                    _ = context.deferReply()  // released unanswered
                    return []
                },
                .init("Notify") { [unowned self] _, _ in
                    notified?()
                    return []
                },
                .init("Sender", out: "s") { _, context in [.string(context.sender ?? "")] },
                .typed("Join", arguments: ["words", "separator"], returning: String.self) { (words: [String], separator: String, _) in
                    words.joined(separator: separator)
                },
                .deferred("Swap", arguments: ["number", "path"], returning: DBusPair<ObjectPath, Int64>.self) { [unowned self]
                    (number: Int64, path: ObjectPath, reply) in
                    queue.async { reply.succeed(DBusPair(path, number)) }
                },
            ],
            properties: [
                .init("Title", "s", get: { [unowned self] in .string(title) }, set: { [unowned self] value, _ in
                    title = value.stringValue!
                }),
                .init("Volume", "d", get: { [unowned self] in .double(volume) }, set: { [unowned self] value, _ in
                    volumeSetCalls += 1
                    guard let v = value.doubleValue, v >= 0 else { throw DBusError.invalidArgs("Volume must be at least 0") }
                    volume = v
                }),
                .init("Count", "i", get: { [unowned self] in .int32(count) }),
                .typed("Rating", get: { [unowned self] in rating }, set: { [unowned self] (value: Int32) in
                    guard value >= 0 else { throw DBusError.invalidArgs("Rating must be at least 0") }
                    rating = value
                }),
                .init("Secret", "s", emitsChanged: .invalidates, get: { [unowned self] in .string(secret) }),
                .init("Position", "x", emitsChanged: .false, get: { [unowned self] in .int64(position) }),
                .init("Identity", "s", emitsChanged: .const, get: { .string("Tonearm test") }),
                .init("Anything", "v", get: { [unowned self] in anything }, set: { [unowned self] value, _ in anything = value }),
                .init("Tags", "as", get: { .stringArray(["x", "y"]) }),
                .init("Metadata", "a{sv}", get: { .vardict(["xesam:title": .string("t"), "mpris:length": .int64(5)]) }),
                .init("Paths", "ao", emitsChanged: .invalidates, keepsEncodedReply: true, get: { [unowned self] in
                    pathsReads += 1
                    return .objectPathArray(paths)
                }),
                .init("Labels", "as", keepsEncodedReply: true, get: { [unowned self] in .stringArray(labels) }),
            ],
            signals: [.init("Marker", "s", argumentNames: ["text"])],
            introspectionXML: Self.xml)
    }
}
