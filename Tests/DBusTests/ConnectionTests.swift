@testable import DBus
import Dispatch
import Foundation
import Logging
import TestSupport
import XCTest

/// The connection's life: connecting, idling, timeouts, losing the bus, closing.
final class ConnectionTests: XCTestCase {
    func testConnectsRegistersAndIdlesWithoutTimers() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let queue = DispatchQueue(label: "test.idle")
        try queue.sync {
            let connection = try Connection(address: bus.address, queue: queue, logger: .test)
            XCTAssertTrue(connection.uniqueName.hasPrefix(":"), connection.uniqueName)
            XCTAssertTrue(connection.isConnected)
            connection.close()
            XCTAssertFalse(connection.isConnected)
            connection.close()  // idempotent
        }
        let connection = try queue.sync { try Connection(address: bus.address, queue: queue, logger: .test) }
        // After a round trip completes, nothing is armed but the read watch: the connection sleeps.
        let done = expectation(description: "GetId")
        queue.sync {
            connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                            member: "GetId") { result in
                XCTAssertNotNil(result.value?.first?.stringValue)
                done.fulfill()
            }
            XCTAssertEqual(connection.integration.enabledTimeoutCount, 1, "the pending call's timeout")
        }
        wait(for: [done], timeout: 10)
        queue.sync {
            XCTAssertEqual(connection.integration.enabledTimeoutCount, 0)
            XCTAssertEqual(connection.integration.enabledWatchCount, 1, "only the read watch")
            connection.close()
        }
    }

    /// The sources watch duplicates of libdbus's descriptors and close them in their cancel handlers;
    /// the connection itself is closed once they all ran. Afterwards nothing of it stays open.
    func testClosingReleasesEveryDescriptorOnceItsSourcesAreCancelled() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let queue = DispatchQueue(label: "test.descriptors")
        let before = Self.openDescriptors()
        let connection = try queue.sync { try Connection(address: bus.address, queue: queue, logger: .test) }
        XCTAssertGreaterThanOrEqual(Self.openDescriptors().count, before.count + 2, "the socket and its read source's duplicate")
        let released = expectation(description: "every source cancelled")
        queue.sync {
            connection.close()
            connection.integration.whenCancelled { released.fulfill() }
        }
        wait(for: [released], timeout: 10)
        queue.sync {}  // the teardown that waited for the same cancellations has run too
        XCTAssertEqual(Self.openDescriptors(), before)
    }

    private static func openDescriptors() -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [])
    }

    /// What a client never sees (a getter that failed, left out of GetAll) reaches the logger given.
    func testDiagnosticsGoToTheLoggerGiven() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let log = CapturedLog()
        let queue = DispatchQueue(label: "test.log")
        let (connection, server) = try queue.sync {
            let connection = try Connection(address: bus.address, queue: queue, logger: log.logger)
            let server = ObjectServer(connection: connection)
            _ = try server.register([InterfaceDescription(name: "io.x.Broken", properties: [
                .init("Fine", "i") { .int32(1) },
                .init("Broken", "i") { throw DBusError.failed("the getter broke") },
            ])], at: "/broken")
            return (connection, server)
        }
        defer { queue.sync { withExtendedLifetime(server) { connection.close() } } }
        let output = try Tool.run("busctl", ["--address=\(bus.address)", "call", connection.uniqueName, "/broken",
                                             "org.freedesktop.DBus.Properties", "GetAll", "s", "io.x.Broken"])
        XCTAssertEqual(output.status, 0, output.stderr)
        XCTAssertTrue(log.messages.contains { $0.contains("io.x.Broken.Broken left out") && $0.contains("the getter broke") },
                      "\(log.messages)")
    }

    func testMissingAddressThrows() throws {
        let queue = DispatchQueue(label: "test.address")
        try queue.sync {
            XCTAssertThrowsError(try Connection(address: "unix:path=/nonexistent/bus", queue: queue, logger: .test))
            XCTAssertThrowsError(try Connection(address: "not an address", queue: queue, logger: .test))
        }
    }

    func testCallTimeoutIsNoReply() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let service = try TestService(bus: bus, name: "io.github.tonearm.Timeout")
        defer { service.close() }
        let client = try Client(bus: bus)
        defer { client.close() }
        var kept: DeferredReply?
        service.sync {
            // An extra method whose reply never comes; registered at another path.
            _ = try? service.server.register([InterfaceDescription(name: "io.x.Slow", methods: [
                .init("Never") { _, context in
                    kept = context.deferReply()
                    return []
                },
            ])], at: "/slow")
        }
        let done = expectation(description: "timeout")
        try client.queue.sync {
            let message = try Message.methodCall(destination: "io.github.tonearm.Timeout", path: "/slow", interface: "io.x.Slow", member: "Never")
            client.connection.call(message, timeout: .milliseconds(50)) { result in
                XCTAssertEqual(result.failure?.name, DBusError.Name.noReply)
                done.fulfill()
            }
        }
        wait(for: [done], timeout: 10)
        service.sync {
            XCTAssertNotNil(kept)
            kept?.succeed()  // too late: the bus drops it; must not crash
            kept = nil
        }
    }

    /// Calls whose replies are deferred do not keep their bodies: libdbus stops reading a connection
    /// once the received messages still alive pass its max_received_size (tonearmd sets 2 MiB), so
    /// four unanswered calls of 1 MiB each would leave every later call unread. They are answered
    /// later, to the right caller, all the same.
    func testDeferredRepliesDoNotStopTheConnectionReading() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let service = try TestService(bus: bus, name: "io.github.tonearm.Held")
        defer { service.close() }
        var kept: [DeferredReply] = []
        service.sync {
            _ = try? service.server.register([InterfaceDescription(name: "io.x.Hold", methods: [
                .init("Hold", in: "s", out: "u") { _, context in
                    kept.append(context.deferReply())
                    return []
                },
            ])], at: "/hold")
        }
        defer { service.sync { kept.removeAll() } }
        let client = try Client(bus: bus)
        defer { client.close() }
        let held = (0..<4).map { expectation(description: "held call \($0) answered") }
        let answered = expectation(description: "a later call answered")
        let big = String(repeating: "x", count: 1 << 20)
        try client.queue.sync {
            for (index, done) in held.enumerated() {
                let message = try Message.methodCall(destination: "io.github.tonearm.Held", path: "/hold", interface: "io.x.Hold",
                                                     member: "Hold", arguments: [.string(big)])
                client.connection.call(message, timeout: .seconds(20)) { result in
                    XCTAssertEqual(try? result.get().first, .uint32(UInt32(index)), "reply to held call \(index)")
                    done.fulfill()
                }
            }
            let later = try Message.methodCall(destination: "io.github.tonearm.Held", path: TestService.path,
                                               interface: TestService.interface, member: "Sender")
            client.connection.call(later, timeout: .seconds(5)) { result in
                XCTAssertNil(result.failure, "the call after four held ones: \(String(describing: result.failure))")
                answered.fulfill()
            }
        }
        wait(for: [answered], timeout: 10)
        service.sync {
            XCTAssertEqual(kept.count, 4)
            for (index, reply) in kept.enumerated() { reply.succeed([.uint32(UInt32(index))]) }
        }
        wait(for: held, timeout: 10)
    }

    func testClosingFailsCallsInFlight() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let service = try TestService(bus: bus, name: "io.github.tonearm.Close")
        defer { service.close() }
        var kept: DeferredReply?  // on the service queue: keeps the call unanswered
        service.sync {
            _ = try? service.server.register([InterfaceDescription(name: "io.x.Slow", methods: [
                .init("Never") { _, context in
                    kept = context.deferReply()
                    return []
                },
            ])], at: "/slow")
        }
        defer { service.sync { kept = nil } }
        let client = try Client(bus: bus)
        let failed = expectation(description: "call failed")
        let called = expectation(description: "service got the call")
        service.sync { service.notified = { called.fulfill() } }
        try client.queue.sync {
            // Notify first: once it ran, Never (sent before it on the same connection) has arrived too.
            let never = try Message.methodCall(destination: "io.github.tonearm.Close", path: "/slow", interface: "io.x.Slow", member: "Never")
            client.connection.call(never) { result in
                XCTAssertEqual(result.failure?.name, DBusError.Name.disconnected)
                failed.fulfill()
            }
            try client.connection.send(try Message.methodCall(destination: "io.github.tonearm.Close", path: TestService.path,
                                                              interface: TestService.interface, member: "Notify", noReplyExpected: true))
        }
        wait(for: [called], timeout: 10)
        client.close()
        wait(for: [failed], timeout: 10)
    }

    func testLosingTheBusIsReported() throws {
        let bus = try PrivateBus()
        let queue = DispatchQueue(label: "test.disconnect")
        let lost = expectation(description: "onDisconnect")
        let failedCall = expectation(description: "pending call failed")
        let connection = try queue.sync { try Connection(address: bus.address, queue: queue, logger: .test) }
        queue.sync {
            connection.onDisconnect = { error in
                XCTAssertEqual(error.name, DBusError.Name.disconnected)
                XCTAssertTrue(error.message.contains("org.freedesktop.DBus.Local.Disconnected"), error.message)
                lost.fulfill()
            }
            // A call to a name that will never answer, in flight when the bus goes away.
            let server = ObjectServer(connection: connection)
            _ = try? server.register([InterfaceDescription(name: "io.x.Slow", methods: [
                .init("Never") { _, context in _ = context.deferReply(); return [] },
            ])], at: "/slow")
            connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                            member: "GetId") { _ in }
        }
        bus.stop()
        wait(for: [lost], timeout: 10)
        try queue.sync {
            XCTAssertFalse(connection.isConnected)
            XCTAssertThrowsError(try connection.send(try Message.signal(path: "/a", interface: "io.x.Y", member: "Z")))
            connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                            member: "GetId") { result in
                XCTAssertEqual(result.failure?.name, DBusError.Name.disconnected)
                failedCall.fulfill()
            }
        }
        wait(for: [failedCall], timeout: 10)
        queue.sync { connection.close() }
    }

    /// The connection says when a pass ends and holds nothing else of it (issue 37): a block
    /// given to `pass`, and the dispatch of what comes from the socket, each end by calling the
    /// hooks in the order they were added, with `isInPass` false again; a pass inside a pass is
    /// part of it.
    func testAPassEndsByCallingItsHooksInOrder() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let queue = DispatchQueue(label: "test.pass")
        let connection = try queue.sync { try Connection(address: bus.address, queue: queue, logger: .test) }
        let sender = try queue.sync { try Connection(address: bus.address, queue: queue, logger: .test) }
        defer { queue.sync { connection.close(); sender.close() } }
        var log: [String] = []
        let dispatched = expectation(description: "the signal's pass ended")
        dispatched.assertForOverFulfill = false
        queue.sync {
            connection.onPassEnded { log.append("first, in a pass: \(connection.isInPass)") }
            connection.onPassEnded { log.append("second") }
            XCTAssertFalse(connection.isInPass)
            connection.pass {
                XCTAssertTrue(connection.isInPass)
                connection.pass { log.append("inner") }
                log.append("outer")
            }
            XCTAssertFalse(connection.isInPass)
            XCTAssertEqual(log, ["inner", "outer", "first, in a pass: false", "second"])
            log = []
            connection.addHandler { message in
                guard message.isSignal(interface: "test.Pass", member: "Ping") else { return false }
                log.append("handled, in a pass: \(connection.isInPass)")
                return true
            }
            connection.onPassEnded { if log.contains(where: { $0.hasPrefix("handled") }) { dispatched.fulfill() } }
            do {
                try sender.send(try Message.signal(path: "/test", interface: "test.Pass", member: "Ping", destination: connection.uniqueName))
            } catch {
                XCTFail("\(error)")
            }
        }
        wait(for: [dispatched], timeout: 10)
        queue.sync {
            XCTAssertEqual(log.filter { !$0.hasPrefix("first") && $0 != "second" }, ["handled, in a pass: true"])
            XCTAssertEqual(Array(log.suffix(2)), ["first, in a pass: false", "second"], "the hooks run once the pass that dispatched it ended")
        }
    }
}
