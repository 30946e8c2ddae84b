import DBus
import Dispatch
import Foundation
import Logging
import TestSupport
import XCTest

/// Numbers a hostile or careless client sends (the extremes of Int64, NaN, infinities) and calls
/// with arguments a method does not take: each gets an answer a person can act on, the service
/// keeps answering, and what a user sees stays sane.
final class ClientNumberTests: ServiceTestCase {
    typealias H = ServiceHarness
    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    static let extremes = [Int64.max, Int64.min]

    /// The service still answers Ping, and Position lies between 0 and the current track's length.
    private func assertSane(_ context: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try harness.ping()
        XCTAssertTrue(harness.daemon.isRunning, "tonearmd died after \(context)", file: file, line: line)
        let position = try harness.position
        XCTAssertGreaterThanOrEqual(position, 0, "Position after \(context)", file: file, line: line)
        if let length = try harness.metadata["mpris:length"]?.int64 {
            XCTAssertLessThanOrEqual(position, length, "Position after \(context)", file: file, line: line)
        }
    }

    /// The calls that carry a client's position, offset or tolerance, for the current track `track`.
    private func seeks(_ value: Int64, track: String) -> [(String, String, String, [String])] {
        [
            (H.player, "Seek", "x", ["\(value)"]),
            (H.player, "SetPosition", "ox", [track, "\(value)"]),
            (H.extensionInterface, "SeekTo", "xxx", ["\(value)", "0", "0"]),
            (H.extensionInterface, "SeekTo", "xxx", ["\(value)", "\(Int64.max)", "\(Int64.max)"]),
        ]
    }

    /// Seek(Int64.max) before an item prerolled trapped tonearmd (SIGILL) as soon as Position was
    /// read or the seek ran: the pending seek overflowed when turned into nanoseconds. A stream whose
    /// server never answers stays unloaded for as long as the test needs.
    func testExtremePositionsBeforeTheItemLoaded() throws {
        let server = try StallingServer()
        defer { server.stop() }
        try harness.start()
        try assertExtremeSeeksAnsweredSanely("before the stream loaded") {
            let ids = try self.harness.call(H.extensionInterface, "Enqueue", "asb", ["1", server.url("stalled.ogg"), "true"]).first?.strings ?? []
            return try XCTUnwrap(ids.first)
        }
        XCTAssertEqual(try harness.get(H.player, "CanSeek").bool, false, "a stream that has not loaded cannot seek")
        XCTAssertNotEqual(try harness.get(H.extensionInterface, "ItemStatus").string, "readyToPlay", "the stream never loaded")
    }

    /// A file seeks before it prerolled (CanSeek is true): the seek waits for the preroll.
    func testExtremePositionsRightAfterAFileWasOpened() throws {
        let ten = try short("ten", seconds: 10)
        try harness.start()
        try assertExtremeSeeksAnsweredSanely("right after the file was opened") {
            // a fresh item each time, opened and played now: the seek comes before or just after its preroll
            let ids = try self.harness.call(H.extensionInterface, "Enqueue", "asb", ["1", H.uri(ten), "true"]).first?.strings ?? []
            return try XCTUnwrap(ids.first)
        }
    }

    /// Every extreme seek, each on the track `prepare` makes current; negative SeekTo is InvalidArgs.
    private func assertExtremeSeeksAnsweredSanely(_ when: String, prepare: () throws -> String) throws {
        for value in Self.extremes {
            for index in 0..<4 {
                let track = try prepare()
                let (interface, method, signature, arguments) = seeks(value, track: track)[index]
                let context = "\(method)(\(arguments.joined(separator: ", "))) \(when)"
                if value < 0 && method == "SeekTo" {
                    let error = try harness.errorReply(interface, method, ["int64:\(value)", "int64:0", "int64:0"])
                    XCTAssertEqual(error?.name, Self.invalidArgs, context)
                } else {
                    try harness.call(interface, method, signature, arguments)
                }
                try assertSane(context)
            }
        }
        try assertSane("the extreme seeks \(when)")
    }

    func testExtremePositionsWhilePlaying() throws {
        try harness.startPlaying([try short("a", seconds: 10), try short("b", seconds: 10, frequency: 660)])
        // Seek(Int64.min) is before the start: it clamps to 0, and Seeked says so
        let mark = harness.mark()
        try harness.call(H.player, "Seek", "x", ["\(Int64.min)"])
        let seeked = try harness.waitForSeeked(from: mark)
        XCTAssertGreaterThanOrEqual(seeked, 0)
        XCTAssertLessThan(seeked, 1_000_000, "Seek(Int64.min) goes to the start")
        try assertSane("Seek(Int64.min) while playing")
        try assertExtremeSeeksAnsweredSanely("while playing") {
            try self.harness.waitForItemStatus("readyToPlay")
            return try XCTUnwrap(try self.harness.trackID)
        }
    }

    /// Rate and Volume refuse what is not a finite number, saying so, and keep their value.
    func testRateAndVolumeRefuseNaNAndInfinity() throws {
        try harness.startPlaying([try short("ten", seconds: 10)])
        var mark = harness.mark()
        try harness.set(H.player, "Rate", "d", "1.25")
        try harness.waitForChange(H.player, "Rate 1.25", from: mark) { $0["Rate"]?.double == 1.25 }
        mark = harness.mark()
        try harness.set(H.player, "Volume", "d", "0.7")
        try harness.waitForChange(H.player, "Volume 0.7", from: mark) { $0["Volume"]?.double == 0.7 }
        for property in ["Rate", "Volume"] {
            for value in ["nan", "inf", "-inf"] {
                // busctl, as a user would type it
                XCTAssertThrowsError(try harness.set(H.player, property, "d", value), "\(property) = \(value)") { error in
                    XCTAssertTrue("\(error)".contains("must be a finite number"), "\(error)")
                }
                // dbus-send, to see the error's name
                let error = try harness.errorReply(H.properties, "Set", ["string:\(H.player)", "string:\(property)", "variant:double:\(value)"])
                XCTAssertEqual(error?.name, Self.invalidArgs, "\(property) = \(value)")
                XCTAssertTrue(error?.message.contains("not \(value)") == true, "\(property) = \(value): \(error?.message ?? "no error")")
                try harness.ping()
            }
        }
        XCTAssertEqual(try harness.get(H.player, "Rate").double, 1.25)
        XCTAssertEqual(try harness.get(H.player, "Volume").double, 0.7)
        XCTAssertEqual(try harness.playbackStatus, "Playing")
    }

    /// Every standard interface checks its arguments: libdbus used to answer Peer itself, whatever
    /// they were.
    func testStandardInterfacesWithExtraArgumentsAreInvalidArgs() throws {
        try harness.start()
        let peer = "org.freedesktop.DBus.Peer"
        for (interface, method, arguments) in [
            (peer, "Ping", ["string:x"]),
            (peer, "GetMachineId", ["int32:1"]),
            ("org.freedesktop.DBus.Introspectable", "Introspect", ["string:x"]),
            (H.properties, "Get", ["string:\(H.player)", "string:Volume", "string:x"]),
            (H.properties, "GetAll", ["string:\(H.player)", "string:x"]),
        ] {
            let error = try harness.errorReply(interface, method, arguments)
            XCTAssertEqual(error?.name, Self.invalidArgs, "\(interface).\(method)(\(arguments))")
            XCTAssertTrue(error?.message.contains("expects arguments of signature") == true, "\(error?.message ?? "no error")")
        }
        // busctl and gdbus see the same
        let busctl = try Tool.run("busctl", ["--address=\(harness.bus.address)", "call", harness.busName, H.path, peer, "Ping", "s", "x"], timeout: 15)
        XCTAssertNotEqual(busctl.status, 0)
        XCTAssertTrue(busctl.stderr.contains("expects arguments of signature ''"), busctl.stderr)
        let gdbus = try Tool.run("gdbus", ["call", "--address", harness.bus.address, "--dest", harness.busName, "--object-path", "/",
                                           "--method", "\(peer).GetMachineId", "1"], timeout: 15)
        XCTAssertNotEqual(gdbus.status, 0)
        XCTAssertTrue(gdbus.stderr.contains(Self.invalidArgs), gdbus.stderr)
        // without the interface field (no command-line client can send that): our libdbus wrapper
        XCTAssertEqual(try callWithoutInterface("Ping", [.string("x")]).failure?.name, Self.invalidArgs)
        XCTAssertEqual(try callWithoutInterface("GetMachineId", [.int32(1)]).failure?.name, Self.invalidArgs)
        XCTAssertNil(try callWithoutInterface("Ping").failure)
        // right calls still work, on the object and on any other path
        try harness.ping()
        let id = try harness.call(peer, "GetMachineId").first?.string ?? ""
        XCTAssertEqual(id.count, 32, id)
        try harness.busctl(["call", harness.busName, "/", peer, "Ping"])
        XCTAssertTrue(harness.daemon.isRunning)
    }

    /// Calls `member` on the MPRIS object with no interface field, from a connection of our own.
    private func callWithoutInterface(_ member: String, _ arguments: [DBusValue] = []) throws -> Result<[DBusValue], DBusError> {
        let queue = DispatchQueue(label: "test.no-interface")
        let connection = try queue.sync { try Connection(address: harness.bus.address, queue: queue, logger: Logger(label: "ServiceTests")) }
        defer { queue.sync { connection.close() } }
        let replied = expectation(description: "reply to \(member)")
        nonisolated(unsafe) var result: Result<[DBusValue], DBusError>?
        try queue.sync {
            let message = try Message.methodCall(destination: harness.busName, path: try ObjectPath(validating: H.path), interface: nil,
                                                 member: member, arguments: arguments)
            connection.call(message, timeout: .seconds(10)) { reply in
                result = reply
                replied.fulfill()
            }
        }
        wait(for: [replied], timeout: 15)
        return try XCTUnwrap(result)
    }
}

extension Result where Failure == DBusError {
    fileprivate var failure: DBusError? { if case .failure(let error) = self { error } else { nil } }
}

/// A TCP server on 127.0.0.1 that accepts connections and never answers: an HTTP stream that never loads.
final class StallingServer: @unchecked Sendable {
    let port: Int
    private let process = Process()

    init() throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", "-c", """
            import socket
            s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
            print(s.getsockname()[1], flush=True)
            held = []
            while True:
                held.append(s.accept())
            """]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let line = String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self)
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw TestError("the stalling server did not start: \(line)")
        }
        self.port = port
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}
