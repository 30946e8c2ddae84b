import DBus
import Dispatch
import Foundation
import Glibc
import Logging
import TestSupport
import XCTest

/// Issue 26, "Nothing lost, nothing skipped": a walk of a big folder holds up no other call, keeps
/// each client's order, ends when Clear, Stop or a newer OpenUri comes, stops at its bound, stays
/// out of /proc, and queues a file whose name is not UTF-8.
final class WalkTests: ServiceTestCase {
    typealias H = ServiceHarness

    /// 100,000 empty `.wav` files in 100 folders of 1,000, made once for the class: the walk only
    /// reads names; what plays is a real file made by GStreamer.
    nonisolated(unsafe) private static var bigTree: URL?

    private func hundredThousandFiles() throws -> URL {
        if let tree = Self.bigTree { return tree }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-walk-\(UUID().uuidString)")
        for folder in 1...100 {
            try FileManager.default.createDirectory(at: root.appendingPathComponent("part \(folder)"), withIntermediateDirectories: true)
        }
        for index in 1...100_000 { try Self.touch(root.appendingPathComponent("part \((index - 1) / 1_000 + 1)/\(index).wav").path) }
        Self.bigTree = root
        return root
    }

    override class func tearDown() {
        if let tree = bigTree { try? FileManager.default.removeItem(at: tree) }
        bigTree = nil
        super.tearDown()
    }

    private static func touch(_ path: String) throws {
        let descriptor = creat(path, 0o644)
        guard descriptor >= 0 else { throw TestError("cannot create \(path): errno \(errno)") }
        close(descriptor)
    }

    /// Walk the big tree from a client of its own; `first` when its first WalkProgress came.
    private func startBigWalk(_ walker: BusClient) throws -> (reply: XCTestExpectation, outcome: Outcome) {
        let tree = try hundredThousandFiles()
        let progressed = expectation(description: "a first WalkProgress")
        progressed.assertForOverFulfill = false
        walker.onWalkProgress { _ in progressed.fulfill() }
        let replied = expectation(description: "the walk's Enqueue answered")
        let outcome = Outcome()
        walker.call(H.extensionInterface, "Enqueue", [.stringArray([H.uri(tree)]), .bool(false)]) { result in
            outcome.set(result)
            replied.fulfill()
        }
        wait(for: [progressed], timeout: 60 * H.slowdown)
        return (replied, outcome)
    }

    /// The bound: a single file from another client is answered within 50 ms while a
    /// tree of 100,000 files is walked (the median of ten AddTracks; each round trip measured from
    /// the call to its reply on our own connection, no process started in between). The OpenUri
    /// that follows ends the walk, which shows it was still running for all of them.
    func testASingleFileIsAnsweredWithin50msWhileAHundredThousandFilesAreWalked() throws {
        let file = try short()
        try harness.start()
        let walker = try BusClient(harness)
        let other = try BusClient(harness)
        let walk = try startBigWalk(walker)

        var addTrack: [Duration] = []
        for _ in 1...10 {
            let started = ContinuousClock.now
            _ = try other.callAndWait(H.trackList, "AddTrack", [.string(H.uri(file)), .objectPath(try ObjectPath(validating: H.noTrack)), .bool(false)])
            addTrack.append(ContinuousClock.now - started)
        }
        let started = ContinuousClock.now
        _ = try other.callAndWait(H.player, "OpenUri", [.string(H.uri(file))])
        let openURI = ContinuousClock.now - started
        wait(for: [walk.reply], timeout: 30 * H.slowdown)

        let median = addTrack.sorted()[addTrack.count / 2]
        print("AddTrack during the walk of 100,000 files: median \(median), max \(addTrack.max()!); OpenUri \(openURI)")
        XCTAssertLessThan(median, .milliseconds(50) * H.slowdown, "AddTrack round trips: \(addTrack)")
        XCTAssertLessThan(openURI, .milliseconds(50) * H.slowdown)
        let error = try XCTUnwrap(walk.outcome.error, "the walk finished before the OpenUri: it did not run during the calls")
        XCTAssertEqual(error.name, H.errorPrefix + "Cancelled")
        XCTAssertTrue(error.message.contains("OpenUri"), error.message)
        XCTAssertEqual(try harness.tracks.count, 11, "ten AddTracks and the OpenUri, none of the walk's files")
        try harness.waitForItemStatus("readyToPlay")
    }

    /// Clear and Stop end a walk under way: its call gets Cancelled and nothing of it is queued.
    func testClearAndStopCancelAWalk() throws {
        try harness.start()
        for method in ["Clear", "Stop"] {
            let walker = try BusClient(harness)
            let walk = try startBigWalk(walker)
            try harness.call(method == "Clear" ? H.extensionInterface : H.player, method)
            wait(for: [walk.reply], timeout: 10 * H.slowdown)
            let error = try XCTUnwrap(walk.outcome.error, "\(method) did not cancel the walk")
            XCTAssertEqual(error.name, H.errorPrefix + "Cancelled", method)
            XCTAssertTrue(error.message.contains("\(method) was called"), error.message)
            XCTAssertEqual(try harness.tracks, [], "nothing of the walk queued after \(method)")
            walker.close()
        }
    }

    /// What one client sends takes effect in its order: a folder's files, then a file sent right
    /// after it (without waiting for the folder's reply), though the file is resolved first.
    func testOneClientsCallsTakeEffectInTheOrderItMadeThem() throws {
        let file = try short()
        let folder = harness.directory.appendingPathComponent("five thousand")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for index in 1...5_000 { try Self.touch(folder.appendingPathComponent("\(index).wav").path) }
        try harness.start()
        let client = try BusClient(harness)
        let replies = Outcome()
        let answered = expectation(description: "both answered")
        answered.expectedFulfillmentCount = 2
        client.call(H.extensionInterface, "Enqueue", [.stringArray([H.uri(folder)]), .bool(false)]) { result in
            replies.append("folder", result)
            answered.fulfill()
        }
        client.call(H.extensionInterface, "Enqueue", [.stringArray([H.uri(file)]), .bool(false)]) { result in
            replies.append("file", result)
            answered.fulfill()
        }
        wait(for: [answered], timeout: 60 * H.slowdown)
        XCTAssertEqual(replies.names, ["folder", "file"])
        let tracks = try harness.tracks
        XCTAssertEqual(tracks.count, 5_001)
        let last = try harness.call(H.trackList, "GetTracksMetadata", "ao", ["2", tracks[4_999], tracks[5_000]])
        let urls = (last.first?.data as? [Any] ?? []).compactMap { Typed(type: "a{sv}", data: $0).dictionary?["xesam:url"]?.string }
        XCTAssertEqual(urls, [H.uri(folder.appendingPathComponent("5000.wav")), H.uri(file)])
    }

    /// A walk's files go where its call asked, after the queue changed meanwhile: after its
    /// anchor with another client's track added after that anchor during the walk, and nowhere,
    /// with NoSuchTrack, when the anchor was removed during the walk. Half the big tree (50
    /// folders of 1,000) is walked, long enough for the other client's call to come first.
    func testTheWalksFilesGoWhereItsCallAskedThoughTheQueueChanged() throws {
        let tree = try hundredThousandFiles()
        let halves = (1...50).map { H.uri(tree.appendingPathComponent("part \($0)")) }
        let x = try short("x", seconds: 3, frequency: 330), y = try short("y", seconds: 3, frequency: 550), z = try short()
        try harness.start()
        for removing in [false, true] {
            try harness.call(H.extensionInterface, "Clear")
            let ids = try harness.call(H.extensionInterface, "Enqueue", "asb", ["2", H.uri(x), H.uri(y), "false"]).first?.strings ?? []
            let walker = try BusClient(harness), other = try BusClient(harness)
            let progressed = expectation(description: "a first WalkProgress")
            progressed.assertForOverFulfill = false
            walker.onWalkProgress { _ in progressed.fulfill() }
            let replies = Outcome()
            let replied = expectation(description: "the Insert answered")
            walker.call(H.extensionInterface, "Insert", [.stringArray(halves), .objectPath(try ObjectPath(validating: ids[0]))]) { result in
                replies.append("Insert", result)
                replied.fulfill()
            }
            wait(for: [progressed], timeout: 60 * H.slowdown)
            if removing {
                _ = try other.callAndWait(H.trackList, "RemoveTrack", [.objectPath(try ObjectPath(validating: ids[0]))])
            } else {
                _ = try other.callAndWait(H.trackList, "AddTrack", [.string(H.uri(z)), .objectPath(try ObjectPath(validating: ids[0])), .bool(false)])
            }
            replies.append("other", .success([]))
            wait(for: [replied], timeout: 60 * H.slowdown)
            XCTAssertEqual(replies.names, ["other", "Insert"], "the walk ended before the other client's call")
            let tracks = try harness.tracks
            if removing {
                XCTAssertEqual(replies.error?.name, H.errorPrefix + "NoSuchTrack")
                XCTAssertEqual(tracks, [ids[1]], "nothing of the walk queued once its anchor left")
            } else {
                XCTAssertNil(replies.error)
                XCTAssertEqual(tracks.count, 50_003)
                XCTAssertEqual(tracks.first, ids[0])
                XCTAssertEqual(tracks.suffix(1), [ids[1]])
                let edges = try harness.call(H.trackList, "GetTracksMetadata", "ao", ["3", tracks[1], tracks[50_000], tracks[50_001]])
                let urls = (edges.first?.data as? [Any] ?? []).compactMap { Typed(type: "a{sv}", data: $0).dictionary?["xesam:url"]?.string }
                XCTAssertEqual(urls, [H.uri(tree.appendingPathComponent("part 1/1.wav")), H.uri(tree.appendingPathComponent("part 50/50000.wav")), H.uri(z)],
                               "the walk's files right after the anchor, in natural order, before the track added meanwhile")
            }
            walker.close()
            other.close()
        }
    }

    /// /proc is refused at once, and a link to it (or to /sys, /dev, /run) inside a folder is not entered.
    func testProcIsNotWalked() throws {
        let file = try short()
        try harness.start()
        let started = ContinuousClock.now
        let error = try XCTUnwrap(try harness.errorReply(H.extensionInterface, "Enqueue", ["array:string:file:///proc", "boolean:false"]))
        XCTAssertEqual(error.name, H.errorPrefix + "UnsupportedFormat")
        XCTAssertTrue(error.message.contains("not walked"), error.message)
        let folder = harness.directory.appendingPathComponent("with links")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.linkItem(at: file, to: folder.appendingPathComponent("a.wav"))
        for target in ["/proc", "/sys", "/dev", "/run"] {
            try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("b\(target.dropFirst())").path,
                                                       withDestinationPath: target)
        }
        let ids = try harness.call(H.extensionInterface, "Enqueue", "asb", ["1", H.uri(folder), "false"]).first?.strings ?? []
        XCTAssertEqual(ids.count, 1, "only the file beside the links")
        let elapsed = ContinuousClock.now - started
        print("/proc refused and a folder linking /proc, /sys, /dev, /run walked in \(elapsed)")
        XCTAssertLessThan(elapsed, .seconds(2) * H.slowdown)
    }

    /// One Enqueue naming a folder 10,000 times is refused as soon as the walk finds more than a
    /// 10,000th of the queue's room in it, with the bound named, and the service's peak memory
    /// hardly moves (it was +211 MiB when the walk's files were all copied first).
    func testAFolderNamedTenThousandTimesIsRefusedAtItsBound() throws {
        let folder = harness.directory.appendingPathComponent("twenty")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for index in 1...20 { try Self.touch(folder.appendingPathComponent("\(index).wav").path) }
        let daemon = try harness.start()
        try harness.ping()
        let before = try Self.peakMemory(of: daemon.pid)
        let client = try BusClient(harness)
        let started = ContinuousClock.now
        let reply = Result { try client.callAndWait(H.extensionInterface, "Enqueue", [.stringArray(Array(repeating: H.uri(folder), count: 10_000)), .bool(false)]) }
        let elapsed = ContinuousClock.now - started
        guard case .failure(let error as DBusError) = reply else { return XCTFail("Enqueue succeeded: \(reply)") }
        XCTAssertEqual(error.name, H.errorPrefix + "QueueFull")
        XCTAssertTrue(error.message.contains("10000 times") && error.message.contains("more than 10 playable files"), error.message)
        let grown = try Self.peakMemory(of: daemon.pid) - before
        print("Enqueue of a folder ×10,000 refused in \(elapsed); peak RSS grew by \(grown / 1024) KiB")
        XCTAssertLessThan(grown, (32 << 20) * ServiceHarness.memoryOverhead, "peak memory grew by \(grown >> 20) MiB")
        XCTAssertEqual(try harness.tracks, [])
    }

    /// Part B: a file whose name is not UTF-8 (Latin-1 "café") is queued with its neighbours, in
    /// natural order, as a URI of the same bytes, plays, and playerctl reads its metadata.
    func testAFileWhoseNameIsNotUTF8IsQueuedAndPlays() throws {
        let tone = try short()
        let folder = harness.directory.appendingPathComponent("latin1")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in ["cafe 2.wav", "cafe 10.wav", "d.wav"] { try FileManager.default.linkItem(at: tone, to: folder.appendingPathComponent(name)) }
        let odd = Array(folder.path.utf8) + Array("/caf".utf8) + [0xE9] + Array(".wav".utf8)
        let linked = (odd + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { link(tone.path, $0.baseAddress!) }
        }
        XCTAssertEqual(linked, 0, "link(2) of the Latin-1 name")
        try harness.start()
        let ids = try harness.call(H.extensionInterface, "Enqueue", "asb", ["1", H.uri(folder), "false"]).first?.strings ?? []
        XCTAssertEqual(ids.count, 4, "every file, the one that is not UTF-8 too")
        let reply = try harness.call(H.trackList, "GetTracksMetadata", "ao", ["\(ids.count)"] + ids)
        let urls = (reply.first?.data as? [Any] ?? []).compactMap { Typed(type: "a{sv}", data: $0).dictionary?["xesam:url"]?.string }
        let base = H.uri(folder) + (H.uri(folder).hasSuffix("/") ? "" : "/")
        XCTAssertEqual(urls, [base + "cafe%202.wav", base + "cafe%2010.wav", base + "caf%E9.wav", base + "d.wav"])
        try harness.call(H.trackList, "GoTo", "o", [ids[2]])
        try harness.call(H.player, "Play")
        try harness.waitForItemStatus("readyToPlay")
        try harness.waitForStatus("Playing")
        XCTAssertEqual(try harness.trackID, ids[2])
        XCTAssertEqual(try harness.playerctl("metadata", "xesam:url"), base + "caf%E9.wav")
        XCTAssertEqual(try harness.playerctl("status"), "Playing")
    }

    /// VmHWM of a process, in bytes.
    private static func peakMemory(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else {
            throw TestError("no VmHWM in /proc/\(pid)/status")
        }
        return kib * 1024
    }
}

/// A client of its own on the private bus: calls that do not wait for each other, and the
/// WalkProgress signals the service sends it.
private final class BusClient: @unchecked Sendable {
    // @unchecked: `connection` is only touched on `queue`.
    private let queue = DispatchQueue(label: "test.walk-client")
    private let connection: Connection
    private let destination: String

    init(_ harness: ServiceHarness) throws {
        let queue = self.queue
        connection = try queue.sync { try Connection(address: harness.bus.address, queue: queue, logger: Logger(label: "WalkTests")) }
        destination = harness.busName
    }

    deinit { close() }

    func close() {
        let connection = self.connection
        queue.sync { connection.close() }
    }

    /// WalkProgress needs no match rule: the service sends it to this connection by name.
    func onWalkProgress(_ handler: @escaping @Sendable (UInt32) -> Void) {
        queue.sync {
            _ = connection.onSignal(interface: ServiceHarness.extensionInterface, member: "WalkProgress") { message in
                if let files = (try? message.arguments())?.last?.uint32Value { handler(files) }
            }
        }
    }

    func call(_ interface: String, _ member: String, _ arguments: [DBusValue],
              completion: @escaping @Sendable (Result<[DBusValue], DBusError>) -> Void) {
        let path = try! ObjectPath(validating: ServiceHarness.path)
        queue.sync {
            connection.call(destination: destination, path: path, interface: interface, member: member, arguments: arguments,
                            timeout: .seconds(Int(120 * ServiceHarness.slowdown)), completion: completion)
        }
    }

    /// Calls and waits for the reply (libdbus's blocking call on the client's queue).
    func callAndWait(_ interface: String, _ member: String, _ arguments: [DBusValue]) throws -> [DBusValue] {
        let message = try Message.methodCall(destination: destination, path: try ObjectPath(validating: ServiceHarness.path),
                                             interface: interface, member: member, arguments: arguments)
        let connection = self.connection
        return try queue.sync { try connection.callBlocking(message, timeout: .seconds(Int(60 * ServiceHarness.slowdown))).arguments() }
    }
}

/// Replies as they came, filled in on a client's queue.
private final class Outcome: @unchecked Sendable {
    private let lock = NSLock()
    private var replies: [(name: String, result: Result<[DBusValue], DBusError>)] = []
    func set(_ result: Result<[DBusValue], DBusError>) { append("", result) }
    func append(_ name: String, _ result: Result<[DBusValue], DBusError>) { lock.withLock { replies.append((name, result)) } }
    var names: [String] { lock.withLock { replies.map(\.name) } }
    /// The first error among the replies.
    var error: DBusError? {
        lock.withLock {
            for reply in replies { if case .failure(let error) = reply.result { return error } }
            return nil
        }
    }
}
