import Foundation

/// A long-running client (`playerctl --follow …`) whose output lines a test waits for.
public final class FollowingProcess: @unchecked Sendable {
    private let process = Process()
    private let condition = NSCondition()
    private var collected: [String] = []
    private var ended = false
    public let command: String

    /// Its stdin, when `holdsInput`: open until it is stopped.
    private var input: Pipe?

    /// `holdsInput`: its stdin is a pipe held open until `stop` (a program that ends at the end
    /// of its input), instead of the runner's.
    public init(_ tool: String, _ arguments: [String], environment: [String: String], holdsInput: Bool = false) throws {
        command = ([tool] + arguments).joined(separator: " ")
        process.executableURL = URL(fileURLWithPath: try Tool.path(tool))
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        if holdsInput {
            input = Pipe()
            process.standardInput = input
        }
        try process.run()
        let handle = output.fileHandleForReading
        let thread = Thread { [weak self] in
            var stopped = false
            readLines(handle) { lines in
                guard let self else { stopped = true; return false }
                self.condition.lock()
                self.collected += lines
                self.condition.broadcast()
                self.condition.unlock()
                return true
            }
            if stopped { return }
            guard let self else { return }
            self.condition.lock()
            self.ended = true
            self.condition.broadcast()
            self.condition.unlock()
        }
        thread.start()
    }

    public var lines: [String] {
        condition.lock()
        defer { condition.unlock() }
        return collected
    }

    /// Waits for the first line at index `mark` or later that satisfies `predicate`; returns its index.
    @discardableResult
    public func wait(for what: String, from mark: Int = 0, timeout: TimeInterval = 10,
              where predicate: (String) -> Bool) throws -> Int {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        var next = mark
        while true {
            while next < collected.count {
                if predicate(collected[next]) { return next }
                next += 1
            }
            if ended { throw TestError("`\(command)` ended while waiting for \(what); it printed \(collected)") }
            if !condition.wait(until: deadline) && next >= collected.count {
                throw TestError("timed out after \(timeout) s waiting for \(what) from `\(command)`; it printed \(collected)")
            }
        }
    }

    public func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}

/// Reads `handle` to its end, handing each batch of complete lines to `body` as it arrives;
/// `body` returns false to stop reading.
public func readLines(_ handle: FileHandle, _ body: ([String]) -> Bool) {
    var buffer = Data()
    while true {
        let chunk = handle.availableData
        if chunk.isEmpty { return }
        buffer.append(chunk)
        var lines: [String] = []
        var start = buffer.startIndex
        while let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: buffer[start..<newline], as: UTF8.self))
            start = newline + 1
        }
        // what was read is dropped once per chunk, not once per line (quadratic for a big signal)
        buffer.removeSubrange(buffer.startIndex..<start)
        if !body(lines) { return }
    }
}
