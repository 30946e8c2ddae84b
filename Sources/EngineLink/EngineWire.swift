import FoundationEssentials
import PlayerModel

/// What tonearmd asks of its engine process (`tonearm-engine`), one JSON object per line on the
/// process's stdin, performed in order. The format is written down in ARCHITECTURE.md ("The
/// engine's link") and held by `Tests/PlayerEngineTests/EngineWire.golden`: a case renamed or a
/// field changed fails that test, and changing the format means raising `EngineWire.version`.
public enum EngineRequest: Codable, Sendable, Equatable {
    /// The first line: the link's protocol version tonearmd speaks (`EngineWire.version`). An
    /// engine of another version refuses it and exits.
    case hello(version: Int)
    /// The second line: how pipelines are built. The engine starts GStreamer at once with it.
    case configure(EngineConfiguration)
    /// A command, numbered: the engine answers `done` with the number once its queue performed it.
    case command(UInt64, EngineCommand)
    /// Reads an item's tags without playing it (`MetadataReader`); answered with `readDone` or
    /// `readFailed` of the same number (not `done`: a read runs beside the engine's queue).
    case read(UInt64, MediaURI)
    /// Asks the engine's queue where the pipeline is, numbered as commands are: answered with
    /// `probed` (the watchdog's question while an item plays, `EngineWatch`).
    case probe(UInt64)
}

/// What the engine process tells tonearmd, one JSON object per line on its stdout, in the order
/// it happened.
public enum EngineReport: Codable, Sendable, Equatable {
    /// The first line: the link's protocol version the engine speaks. tonearmd ends an engine of
    /// another version.
    case hello(version: Int)
    /// GStreamer is set up: what the set-up chose and the formats it plays; or why it failed.
    case ready(EngineSetUp, MediaCapabilities)
    case failedToStart(String)
    /// The engine's queue performed every command up to this number.
    case done(UInt64)
    /// The engine's queue waits for `what` (a pipeline's teardown, a device let go of), at most
    /// `bound`: the commands behind it are not late before then.
    case waiting(what: String, bound: Duration)
    /// The answer to `probe`: the pipeline's position then (nil: none, or not known). It also
    /// acknowledges every command before it, as `done` does.
    case probed(UInt64, Duration?)
    case event(Generation, EngineEvent)
    case readDone(UInt64, DiscoveredMedia)
    case readFailed(UInt64, ItemError)
    /// The engine could not take a request (a line it cannot read, another protocol version):
    /// why. It exits after this line.
    case refused(String)
}

/// The lines both ends write and read.
public enum EngineWire {
    /// The protocol version of the lines below. Raise it with any change to what a line of
    /// `EngineRequest` or `EngineReport` holds (the golden test says when one changed); both ends
    /// then refuse the other's old version instead of misreading it (ARCHITECTURE.md, "How it runs").
    public static let version = 1

    /// `value` as one line of JSON, its keys sorted (JSON text escapes every newline inside its
    /// strings). Throws what cannot be written (a number that is not finite).
    public static func line(_ value: some Encodable) throws(LinkError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            var bytes = try encoder.encode(value)
            bytes.append(UInt8(ascii: "\n"))
            return Array(bytes)
        } catch {
            throw LinkError("cannot write \(String(describing: value).prefix(200)): \(error)")
        }
    }

    public static func decode<T: Decodable>(_ type: T.Type, from line: ArraySlice<UInt8>) throws(LinkError) -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(line))
        } catch {
            throw LinkError("cannot read the line \(excerpt(line)): \(error)")
        }
    }

    /// The start of a line as text, for a log and an error: what it was, not all of it.
    public static func excerpt(_ line: ArraySlice<UInt8>, limit: Int = 160) -> String {
        let text = String(decoding: line.prefix(limit), as: UTF8.self)
        return "'" + text + (line.count > limit ? "…'" : "'")
    }

    /// Splits what a pipe gives into lines: `append` returns the lines completed by `bytes`
    /// (without their newline) and keeps the rest for the next call.
    public struct Lines {
        private var pending: [UInt8] = []
        public init() {}

        public mutating func append(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
            pending += bytes
            var lines: [ArraySlice<UInt8>] = []
            var start = pending.startIndex
            while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(pending[start..<newline])
                start = newline + 1
            }
            if start > pending.startIndex {
                let rest = Array(pending[start...])
                lines = lines.map { Array($0)[...] }
                pending = rest
            }
            return lines
        }
    }
}

/// A line of the engine's link that could not be written or read: the link is broken, and the
/// engine at its other end is ended.
public struct LinkError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
