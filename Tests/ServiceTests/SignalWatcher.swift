import Foundation
import TestSupport

/// A value as `dbus-monitor` prints it, with its D-Bus type kept: the monitor is a client that is
/// not our code, so what it prints is what every client receives.
indirect enum MonitorValue: Equatable, CustomStringConvertible {
    /// `type` is dbus-monitor's word for it ("string", "object path", "int64", "boolean", ...);
    /// `text` is the value, unquoted for strings.
    case basic(type: String, text: String)
    case array([MonitorValue])
    case bytes([UInt8])
    case dictEntry(MonitorValue, MonitorValue)
    case structure([MonitorValue])
    case variant(MonitorValue)

    /// The value inside any variants.
    var unwrapped: MonitorValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    var string: String? {
        guard case .basic(let type, let text) = unwrapped,
              ["string", "object path", "signature"].contains(type) else { return nil }
        return text
    }

    var int64: Int64? {
        guard case .basic(let type, let text) = unwrapped, type.hasPrefix("int") || type.hasPrefix("uint") || type == "byte"
        else { return nil }
        return Int64(text)
    }

    var double: Double? {
        guard case .basic("double", let text) = unwrapped else { return nil }
        return Double(text)
    }

    var bool: Bool? {
        guard case .basic("boolean", let text) = unwrapped else { return nil }
        return text == "true"
    }

    var array: [MonitorValue]? {
        guard case .array(let items) = unwrapped else { return nil }
        return items
    }

    var strings: [String]? { array?.compactMap(\.string) }

    /// An `a{s…}` as a dictionary; values are unwrapped from their variants.
    var dictionary: [String: MonitorValue]? {
        guard let items = array else { return nil }
        var result: [String: MonitorValue] = [:]
        for item in items {
            guard case .dictEntry(let key, let value) = item, let name = key.string else { return nil }
            result[name] = value.unwrapped
        }
        return result
    }

    /// The D-Bus signature of this value ("s", "as", "a{sv}", "x", ...). An empty array's element
    /// type is not printed by dbus-monitor: it shows as "a?".
    var signature: String {
        switch self {
        case .basic(let type, _):
            return [
                "string": "s", "object path": "o", "signature": "g", "boolean": "b", "byte": "y",
                "int16": "n", "uint16": "q", "int32": "i", "uint32": "u", "int64": "x", "uint64": "t",
                "double": "d", "file descriptor": "h",
            ][type] ?? "?(\(type))"
        case .array(let items): return "a" + (items.first?.signature ?? "?")
        case .bytes: return "ay"
        case .dictEntry(let key, let value): return "{\(key.signature)\(value.signature)}"
        case .structure(let fields): return "(" + fields.map(\.signature).joined() + ")"
        case .variant: return "v"
        }
    }

    var description: String {
        switch self {
        case .basic(let type, let text):
            return ["string", "object path", "signature"].contains(type) ? "\"\(text)\"" : text
        case .array(let items): return "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .bytes(let bytes): return "bytes\(bytes)"
        case .dictEntry(let key, let value): return "\(key): \(value)"
        case .structure(let fields): return "(" + fields.map(\.description).joined(separator: ", ") + ")"
        case .variant(let inner): return "<\(inner)>"
        }
    }
}

/// One message as dbus-monitor printed it.
struct BusMessage: CustomStringConvertible {
    var index = 0
    var kind: String  // "signal", "method call", "method return", "error"
    var sender: String
    var destination: String
    var path: String
    var interface: String
    var member: String
    var arguments: [MonitorValue]
    var raw: [String]

    var isPropertiesChanged: Bool {
        kind == "signal" && interface == "org.freedesktop.DBus.Properties" && member == "PropertiesChanged"
    }

    /// For PropertiesChanged: the interface whose properties changed.
    var changedInterface: String? { isPropertiesChanged ? arguments.first?.string : nil }
    /// For PropertiesChanged: the changed properties with their values (out of their variants).
    var changed: [String: MonitorValue] { isPropertiesChanged ? (arguments.count > 1 ? arguments[1].dictionary ?? [:] : [:]) : [:] }
    /// For PropertiesChanged: the invalidated property names.
    var invalidated: [String] { isPropertiesChanged ? (arguments.count > 2 ? arguments[2].strings ?? [] : []) : [] }

    var description: String {
        if isPropertiesChanged {
            let changes = changed.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
            return "#\(index) \(sender) PropertiesChanged(\(changedInterface ?? "?"): {\(changes)} invalidated \(invalidated))"
        }
        return "#\(index) \(kind) \(sender) \(interface).\(member)(" + arguments.map(\.description).joined(separator: ", ") + ")"
    }
}

/// Turns dbus-monitor's text, line by line, into messages.
struct MonitorParser {
    /// How many arguments the signals and method calls we watch carry, so that a message is known
    /// complete as soon as its last argument is printed (rather than when the next message starts).
    static let argumentCounts: [String: Int] = [
        "PropertiesChanged": 3, "NameOwnerChanged": 3, "NameAcquired": 1, "NameLost": 1,
        "Seeked": 1, "TrackListReplaced": 2, "TrackAdded": 2, "TrackRemoved": 1, "TrackMetadataChanged": 2,
        "PlaylistChanged": 1, "PlayedToEnd": 1, "ItemFailed": 3, "RateChanged": 2,
        "Raise": 0,
    ]

    private var header: String?
    private var body: [String] = []
    /// How many containers the body's lines opened and have not closed: a top-level value can
    /// only be complete at 0, so the body is parsed then, not at every line (a TrackListReplaced
    /// of 10,000 tracks is 10,000 lines, and parsing at each was quadratic).
    private var depth = 0

    /// Feeds one line; returns the messages it completed (zero, one, or two when a header line
    /// ends an open message whose end was not otherwise known).
    mutating func feed(_ line: String) -> [BusMessage] {
        var done: [BusMessage] = []
        if Self.isHeader(line) {
            if let message = finish() { done.append(message) }
            header = line
            body = []
            if let count = expectedCount, count == 0, let message = finish() { done.append(message) }
            return done
        }
        guard header != nil else { return done }
        body.append(line)
        let text = line.drop { $0 == " " || $0 == "\t" }
        if text == "]" || text == ")" || text == "}" {
            depth -= 1
        } else if text.hasSuffix(" [") || text.hasSuffix("(") || text.hasSuffix(" {") {
            depth += 1
        }
        if depth <= 0, let count = expectedCount, let values = Self.values(body), values.count >= count, let message = finish() {
            done.append(message)
        }
        return done
    }

    /// Ends the open message, if any (at end of output).
    mutating func finish() -> BusMessage? {
        guard let header else { return nil }
        defer { self.header = nil; body = []; depth = 0 }
        return Self.message(header: header, body: body)
    }

    private var expectedCount: Int? {
        guard let header, header.hasPrefix("signal ") || header.hasPrefix("method call ") else { return nil }
        return Self.field("member", in: header).flatMap { Self.argumentCounts[$0] }
    }

    static func isHeader(_ line: String) -> Bool {
        ["signal ", "method call ", "method return ", "error "].contains { line.hasPrefix($0) } && line.contains(" time=")
    }

    static func message(header: String, body: [String]) -> BusMessage {
        let kind = ["method call", "method return", "signal", "error"].first { header.hasPrefix($0) } ?? "?"
        return BusMessage(
            kind: kind, sender: field("sender", in: header) ?? "", destination: field("destination", in: header) ?? "",
            path: field("path", in: header) ?? "", interface: field("interface", in: header) ?? "",
            member: field("member", in: header) ?? "", arguments: values(body) ?? [], raw: [header] + body)
    }

    /// A `key=value` field of a header line; values end at a space or at `;`.
    static func field(_ key: String, in header: String) -> String? {
        guard let range = header.range(of: " \(key)=") else { return nil }
        let rest = header[range.upperBound...]
        if rest.hasPrefix("(null destination)") { return "" }
        let end = rest.firstIndex { $0 == " " || $0 == ";" } ?? rest.endIndex
        return String(rest[..<end])
    }

    /// The complete top-level values printed in `lines`; nil when the last one is still incomplete
    /// and none came before it.
    static func values(_ lines: [String]) -> [MonitorValue]? {
        var values: [MonitorValue] = []
        var index = 0
        while index < lines.count {
            let text = trimmed(lines[index])
            index += 1
            if text.isEmpty { continue }
            guard let value = value(text, lines, &index) else { return values.isEmpty ? nil : values }
            values.append(value)
        }
        return values
    }

    private static func trimmed(_ line: String) -> String {
        String(line.drop { $0 == " " || $0 == "\t" })
    }

    /// Parses the value that starts with `text` (the rest of a line); continues on `lines` from
    /// `index`. nil when the lines end first.
    private static func value(_ text: String, _ lines: [String], _ index: inout Int) -> MonitorValue? {
        func items(until close: String) -> [MonitorValue]? {
            var items: [MonitorValue] = []
            while index < lines.count {
                let line = trimmed(lines[index])
                index += 1
                if line == close { return items }
                if line.isEmpty { continue }
                guard let item = value(line, lines, &index) else { return nil }
                items.append(item)
            }
            return nil
        }
        if text.hasPrefix("variant") {
            let inner = trimmed(String(text.dropFirst("variant".count)))
            return value(inner, lines, &index).map(MonitorValue.variant)
        }
        if text == "array [" { return items(until: "]").map(MonitorValue.array) }
        if text == "dict entry(" {
            guard let pair = items(until: ")") else { return nil }
            return pair.count == 2 ? .dictEntry(pair[0], pair[1]) : .structure(pair)
        }
        if text == "struct {" { return items(until: "}").map(MonitorValue.structure) }
        if text == "array of bytes [" {
            var bytes: [UInt8] = []
            while index < lines.count {
                let line = trimmed(lines[index])
                index += 1
                if line == "]" { return .bytes(bytes) }
                bytes += line.split(separator: " ").compactMap { UInt8($0, radix: 16) }
            }
            return nil
        }
        for kind in ["string", "object path", "signature", "array of bytes"] where text.hasPrefix(kind + " \"") {
            // dbus-monitor prints strings raw between quotes: a newline in a string continues on
            // the next line, so the string ends on the first line that ends with a quote
            var body = String(text.dropFirst(kind.count + 2))
            while !body.hasSuffix("\"") {
                guard index < lines.count else { return nil }
                body += "\n" + lines[index]
                index += 1
            }
            body.removeLast()
            return kind == "array of bytes" ? .bytes(Array(body.utf8)) : .basic(type: kind, text: body)
        }
        guard let space = text.lastIndex(of: " ") else { return .basic(type: text, text: "") }
        return .basic(type: String(text[..<space]), text: String(text[text.index(after: space)...]))
    }
}

/// `dbus-monitor --address A --monitor RULES…` on the private bus, its output parsed message by
/// message, so that a test can wait for a signal that matches a predicate. Started before the
/// service, it sees every signal the service ever sends ("subscribe, then act").
final class SignalWatcher: @unchecked Sendable {
    private let process = Process()
    private let condition = NSCondition()
    private var received: [BusMessage] = []
    private var ended = false
    /// Checked whenever a wait wakes: a non-nil answer (say, "tonearmd exited") ends the wait at
    /// once with that reason instead of running into the timeout.
    var abortReason: (() -> String?)?

    init(address: String, rules: [String]) throws {
        process.executableURL = URL(fileURLWithPath: try Tool.path("dbus-monitor"))
        process.arguments = ["--address", address, "--monitor"] + rules
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let handle = output.fileHandleForReading
        let thread = Thread { [weak self] in
            var parser = MonitorParser()
            var stopped = false
            readLines(handle) { lines in
                let messages = lines.flatMap { parser.feed($0) }
                guard let self else { stopped = true; return false }
                if !messages.isEmpty { self.append(messages) }
                return true
            }
            if stopped { return }
            let last = parser.finish()
            guard let self else { return }
            self.condition.lock()
            if let last { self.received.append(last); self.received[self.received.count - 1].index = self.received.count - 1 }
            self.ended = true
            self.condition.broadcast()
            self.condition.unlock()
        }
        thread.start()
        // the bus sends a new monitor the NameLost of its own unique name once it monitors
        try wait(for: "dbus-monitor to start monitoring", timeout: 10) { $0.member == "NameLost" }
    }

    private func append(_ messages: [BusMessage]) {
        condition.lock()
        for var message in messages {
            message.index = received.count
            received.append(message)
        }
        condition.broadcast()
        condition.unlock()
    }

    /// The number of messages so far: a mark to wait or look "after".
    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return received.count
    }

    /// The messages from index `mark` on.
    func messages(from mark: Int = 0) -> [BusMessage] {
        condition.lock()
        defer { condition.unlock() }
        return Array(received[min(mark, received.count)...])
    }

    /// Wakes waiters so that they check `abortReason` again.
    func poke() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for the first message at index `mark` or later that satisfies `predicate`.
    @discardableResult
    func wait(for what: String, from mark: Int = 0, timeout: TimeInterval = 10,
              where predicate: (BusMessage) -> Bool) throws -> BusMessage {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        var next = mark
        while true {
            while next < received.count {
                if predicate(received[next]) { return received[next] }
                next += 1
            }
            if let reason = abortReason?() {
                throw TestError("while waiting for \(what): \(reason)\nsignals seen:\n\(summary(from: mark))")
            }
            if ended { throw TestError("dbus-monitor ended while waiting for \(what)\nsignals seen:\n\(summary(from: mark))") }
            if !condition.wait(until: deadline) && next >= received.count {
                throw TestError("timed out after \(timeout) s waiting for \(what)\nsignals seen:\n\(summary(from: mark))")
            }
        }
    }

    /// One line per message from `mark`, for failure messages. Call with the lock held.
    private func summary(from mark: Int) -> String {
        let messages = received[min(mark, received.count)...]
        return messages.isEmpty ? "  (none)" : messages.map { "  \($0)" }.joined(separator: "\n")
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}
