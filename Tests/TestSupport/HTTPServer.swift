import Foundation

/// An HTTP server on 127.0.0.1, on a port the OS picks, serving a directory (with byte ranges) and
/// the faults, live HLS playlists and ICY radio streams a test asks for
/// (`Tests/PySupport/fault_server.py`). Commands go to its stdin and are acknowledged before the
/// call returns; every request it answers is logged, and tests wait on that log (no polling).
public final class HTTPServer: @unchecked Sendable {
    // @unchecked: `lines` and `acks` are guarded by `condition`; the rest is immutable after init.
    public let port: Int
    private let process: Process
    private let input: FileHandle
    private let condition = NSCondition()
    private var lines: [String] = []
    private var acks = 0
    private var closed = false

    public struct StartFailure: Error, CustomStringConvertible {
        public var output: String
        public var description: String { "the test HTTP server did not start: \(output)" }
    }

    /// The script next to this file's target: Tests/PySupport/fault_server.py.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("PySupport/fault_server.py")

    public init(directory: URL) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", Self.script.path, directory.path]
        let output = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        self.input = input.fileHandleForWriting
        try process.run()
        let reader = output.fileHandleForReading
        // the first line says where it listens; the rest is read on a thread of its own
        var first = Data()
        while !first.contains(UInt8(ascii: "\n")) {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            first += chunk
        }
        let text = String(decoding: first, as: UTF8.self)
        guard let line = text.split(separator: "\n").first, line.hasPrefix("listening "),
              let found = Int(line.dropFirst("listening ".count)) else {
            process.terminate()
            throw StartFailure(output: text)
        }
        port = found
        let rest = String(text.drop(while: { $0 != "\n" }).dropFirst())
        let thread = Thread { [weak self] in
            var pending = rest
            while true {
                while let newline = pending.firstIndex(of: "\n") {
                    self?.received(String(pending[..<newline]))
                    pending = String(pending[pending.index(after: newline)...])
                }
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                pending += String(decoding: chunk, as: UTF8.self)
            }
            self?.condition.withLock {
                self?.closed = true
                self?.condition.broadcast()
            }
        }
        thread.name = "HTTPServer.output"
        thread.start()
    }

    private func received(_ line: String) {
        condition.withLock {
            if line == "ok" { acks += 1 } else { lines.append(line) }
            condition.broadcast()
        }
    }

    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    // MARK: What the server does

    /// A fault for requests of `path` (relative, as in `url(_:)`).
    public struct Fault: Sendable {
        /// Answer this HTTP status instead of the file.
        public var status: Int?
        /// Wait this long before answering, or with `stallAfter` after that many bytes of the body.
        public var stall: Double?
        public var stallAfter: Int?
        /// Send the headers and this many bytes of the body, then close the connection.
        public var dropAfter: Int?
        /// Send the body at this many bytes a second.
        public var bytesPerSecond: Int?
        /// Send 64 KiB of random bytes instead of the file.
        public var garbage = false
        /// Only for this many requests; nil: for every one.
        public var times: Int?

        public init(status: Int? = nil, stall: Double? = nil, stallAfter: Int? = nil, dropAfter: Int? = nil,
                    bytesPerSecond: Int? = nil, garbage: Bool = false, times: Int? = nil) {
            self.status = status
            self.stall = stall
            self.stallAfter = stallAfter
            self.dropAfter = dropAfter
            self.bytesPerSecond = bytesPerSecond
            self.garbage = garbage
            self.times = times
        }
    }

    public func fault(_ path: String, _ fault: Fault) throws { try self.fault(path, [fault]) }

    /// Faults for requests of `path` in turn: each for its `times` requests (nil: every one from
    /// then on); after the last, none.
    public func fault(_ path: String, _ steps: [Fault]) throws {
        let encoded: [[String: Any]] = steps.map { fault in
            var step: [String: Any] = ["garbage": fault.garbage]
            if let status = fault.status { step["status"] = status }
            if let stall = fault.stall { step["stall"] = stall }
            if let stallAfter = fault.stallAfter { step["stall_after"] = stallAfter }
            if let dropAfter = fault.dropAfter { step["drop_after"] = dropAfter }
            if let rate = fault.bytesPerSecond { step["rate"] = rate }
            if let times = fault.times { step["times"] = times }
            return step
        }
        try send(["op": "fault", "path": path, "steps": encoded])
    }

    public func clearFaults() throws { try send(["op": "clear"]) }

    /// Serves `path` as a live HLS playlist over `segments` (paths relative to the playlist): a
    /// window of `window` segments of `segmentSeconds` each, sliding on by one every
    /// `segmentSeconds` from the first request, with no EXT-X-ENDLIST.
    public func liveHLS(at path: String, segments: [String], segmentSeconds: Double, window: Int = 3) throws {
        try send(["op": "live", "path": path, "segments": segments, "duration": segmentSeconds, "window": window])
    }

    /// Serves `path` as internet radio: `file` (an MP3 in the directory) looped at `bytesPerSecond`,
    /// with `icy-name: station` and, when the client asks (`Icy-MetaData: 1`), a StreamTitle every
    /// `metaint` bytes that moves through `titles`, one every `secondsPerTitle`.
    public func icyRadio(at path: String, file: String, station: String, titles: [String], secondsPerTitle: Double,
                         bytesPerSecond: Int, metaint: Int = 8192) throws {
        try send(["op": "icy", "path": path, "file": file, "name": station, "titles": titles, "every": secondsPerTitle,
                  "rate": bytesPerSecond, "metaint": metaint])
    }

    private func send(_ command: [String: Any]) throws {
        var data = try JSONSerialization.data(withJSONObject: command)
        data.append(UInt8(ascii: "\n"))
        let target = condition.withLock { acks } + 1
        try input.write(contentsOf: data)
        condition.withLock {
            let deadline = Date(timeIntervalSinceNow: 10)
            while acks < target && !closed && condition.wait(until: deadline) {}
        }
    }

    // MARK: What the server saw

    /// Every request answered so far, as (path, status), in order.
    public var requests: [(path: String, status: Int)] {
        condition.withLock {
            lines.compactMap { line in
                let parts = line.split(separator: " ")
                guard parts.count == 3, parts[0] == "request", let status = Int(parts[2]) else { return nil }
                return (String(parts[1]), status)
            }
        }
    }

    /// Waits until `count` requests of `path` were answered (with `status` if given); false after `timeout`.
    @discardableResult
    public func waitForRequests(_ path: String, count: Int = 1, status: Int? = nil, timeout: TimeInterval = 10) -> Bool {
        waitForRequests(count: count, status: status, timeout: timeout) { $0 == path }
    }

    /// Waits until `count` requests of paths that `matching` accepts were answered (with `status`
    /// if given); false after `timeout`.
    @discardableResult
    public func waitForRequests(count: Int = 1, status: Int? = nil, timeout: TimeInterval = 10,
                                matching: (String) -> Bool) -> Bool {
        condition.withLock {
            let deadline = Date(timeIntervalSinceNow: timeout)
            func seen() -> Int {
                lines.reduce(0) { total, line in
                    let parts = line.split(separator: " ")
                    let matches = parts.count == 3 && parts[0] == "request" && matching(String(parts[1]))
                        && (status == nil || Int(parts[2]) == status)
                    return total + (matches ? 1 : 0)
                }
            }
            while seen() < count {
                if closed || !condition.wait(until: deadline) { return seen() >= count }
            }
            return true
        }
    }

    /// When the server began to stall an answer for `path` (waiting for it at most `timeout`).
    public func waitForStall(_ path: String, timeout: TimeInterval = 10) -> Date? {
        condition.withLock {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while !lines.contains(where: { $0.hasPrefix("stalled \(path) ") }) {
                if closed || !condition.wait(until: deadline) { return nil }
            }
            return Date()
        }
    }

    /// Waits until the server dropped a connection of `path` on purpose.
    @discardableResult
    public func waitForDrop(_ path: String, timeout: TimeInterval = 10) -> Bool {
        condition.withLock {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while !lines.contains(where: { $0.hasPrefix("dropped \(path) ") }) {
                if closed || !condition.wait(until: deadline) { return false }
            }
            return true
        }
    }

    deinit {
        try? input.close()
        process.terminate()
        process.waitUntilExit()
    }
}
