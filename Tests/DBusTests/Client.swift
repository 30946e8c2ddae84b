import DBus
import Dispatch
import Foundation
import Logging
import TestSupport
import XCTest

/// A second connection to the private bus, on its own queue, used as an in-process client.
final class Client {
    let queue = DispatchQueue(label: "test.client")
    var connection: Connection!

    init(bus: PrivateBus) throws {
        try queue.sync { connection = try Connection(address: bus.address, queue: queue, logger: .test) }
    }

    func close() { queue.sync { connection.close() } }

    /// Calls a method and waits for the reply.
    func call(
        _ test: XCTestCase, destination: String, path: ObjectPath = TestService.path, interface: String? = TestService.interface,
        _ member: String, _ arguments: [DBusValue] = [], noReply: Bool = false
    ) throws -> Result<[DBusValue], DBusError> {
        let done = test.expectation(description: "reply to \(member)")
        var result: Result<[DBusValue], DBusError>!
        try queue.sync {
            let message = try Message.methodCall(destination: destination, path: path, interface: interface, member: member, arguments: arguments)
            connection.call(message) { reply in
                result = reply
                done.fulfill()
            }
        }
        test.wait(for: [done], timeout: 10)
        return result
    }

    /// Subscribes to signals from `sender`'s objects; `handler` runs on the client queue.
    func subscribe(sender: String, _ handler: @escaping (Message) -> Void) throws {
        try queue.sync {
            try connection.addMatch("type='signal',sender='\(sender)'")
            connection.addHandler { message in
                if message.kind == .signal, message.path != nil, message.interface != "org.freedesktop.DBus" { handler(message) }
                return false
            }
        }
    }
}

extension Result {
    var value: Success? { if case .success(let v) = self { v } else { nil } }
    var failure: Failure? { if case .failure(let e) = self { e } else { nil } }
}

extension Logger {
    /// What the connections under test report (the library takes its logger from its owner).
    static let test = Logger(label: "DBusTests")
}

/// A log handler that keeps what it is given, to check that diagnostics reach the owner's logger.
final class CapturedLog: LogHandler, @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
             file: String, function: String, line: UInt) {
        lock.withLock { lines.append("\(level): \(message)") }
    }

    var messages: [String] { lock.withLock { lines } }
    var logger: Logger { Logger(label: "captured") { _ in self } }
}
