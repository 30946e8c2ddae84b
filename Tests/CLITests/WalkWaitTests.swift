import Basics
import DBus
import Dispatch
import Foundation
import Logging
import Synchronization
import TestSupport
import TonearmClient
import XCTest

/// A client adding a folder waits as long as the service keeps telling it the walk goes on: the call's
/// time limit runs from the last `WalkProgress`, not from the call. The service here is a stand-in on
/// a real private bus, answering `Enqueue` late; the subject is the client's waiting.
final class WalkWaitTests: XCTestCase {
    private var bus: PrivateBus!
    private var walker: SlowWalker!

    override func setUpWithError() throws {
        bus = try PrivateBus()
        walker = try SlowWalker(bus: bus)
    }

    override func tearDown() {
        walker?.close()
        bus?.stop()
    }

    private func client(limit: Duration) throws -> TonearmClient {
        try TonearmClient(address: bus.address, activate: false, timeout: limit, logger: Logger(label: "test"))
    }

    func testAWalkLongerThanTheLimitIsWaitedForWhileProgressComes() throws {
        // 12 signals 100 ms apart, then the reply: 1.2 s, four times the client's limit
        walker.plan = .init(signals: 12, every: .milliseconds(100))
        let heard = Mutex<[Int]>([])
        let ids = try client(limit: .milliseconds(300)).enqueue(["file:///walked"], playNow: false) { _, files in
            heard.withLock { $0.append(files) }
        }
        XCTAssertEqual(ids.map(\.description), ["/io/github/tonearm/Track/1"])
        XCTAssertEqual(heard.withLock { $0 }, (1...12).map { $0 * 1_000 }, "every progress signal reached the caller")
    }

    func testAServiceSilentPastTheLimitIsNoReply() throws {
        // one signal, then 1.5 s of silence before the reply: past the 300 ms limit
        walker.plan = .init(signals: 1, every: .milliseconds(1_500))
        let started = ContinuousClock.now
        XCTAssertThrowsError(try client(limit: .milliseconds(300)).enqueue(["file:///walked"], playNow: false) { _, _ in }) { error in
            XCTAssertEqual((error as? ClientError)?.code, .noReply, "\(error)")
            XCTAssertTrue("\(error)".contains("did not answer"), "\(error)")
        }
        XCTAssertLessThan(started.duration(to: .now), .milliseconds(1_500), "given up before the late reply came")
    }
}

/// Owns the Tonearm name on the bus and answers `Enqueue` after sending its caller `WalkProgress` a
/// number of times, as the service does while walking a folder.
private final class SlowWalker: @unchecked Sendable {
    struct Plan { var signals: Int; var every: Duration }

    let queue = DispatchQueue(label: "test.walker")
    var plan = Plan(signals: 0, every: .zero)
    private var connection: Connection!
    private var server: ObjectServer!
    private var object: ExportedObject!

    init(bus: PrivateBus) throws {
        try queue.sync {
            connection = try Connection(address: bus.address, queue: queue, logger: Logger(label: "test.walker"))
            server = ObjectServer(connection: connection)
            object = try server.register([interface()], at: "/org/mpris/MediaPlayer2")
            let result = try connection.requestName("org.mpris.MediaPlayer2.tonearm")
            guard result == .primaryOwner else { throw TestError("RequestName gave \(result)") }
        }
    }

    func close() { queue.sync { connection.close() } }

    private func interface() -> InterfaceDescription {
        InterfaceDescription(
            name: "io.github.tonearm.Player1",
            methods: [
                .init("Enqueue", in: "asb", out: "ao") { [unowned self] _, context in
                    let reply = context.deferReply()
                    walk(left: plan.signals, sent: 0, to: context.sender, reply: reply)
                    return []
                },
            ],
            signals: [.init("WalkProgress", "su")])
    }

    private func walk(left: Int, sent: Int, to caller: String?, reply: DeferredReply) {
        guard left > 0 else { return reply.succeed([.array(element: "o", [.objectPath("/io/github/tonearm/Track/1")])]) }
        try? object.emitSignal(interface: "io.github.tonearm.Player1", name: "WalkProgress",
                               arguments: [.string("file:///walked"), .uint32(UInt32((sent + 1) * 1_000))], destination: caller)
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(plan.every.nanoseconds))) { [self] in
            walk(left: left - 1, sent: sent + 1, to: caller, reply: reply)
        }
    }
}
