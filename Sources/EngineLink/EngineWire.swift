import FoundationEssentials
import PlayerModel

/// What tonearmd asks of its engine process (`tonearm-engine`), one JSON object per line on the
/// process's stdin, performed in order.
public enum EngineRequest: Codable, Sendable, Equatable {
    /// The first line: how pipelines are built. The engine starts GStreamer at once with it.
    case configure(EngineConfiguration)
    case command(EngineCommand)
    /// Reads an item's tags without playing it (`MetadataReader`); answered with `readDone` or
    /// `readFailed` of the same number.
    case read(UInt64, MediaURI)
}

/// What the engine process tells tonearmd, one JSON object per line on its stdout, in the order
/// it happened.
public enum EngineReport: Codable, Sendable, Equatable {
    /// GStreamer is set up: what the set-up chose and the formats it plays; or why it failed.
    case ready(EngineSetUp, MediaCapabilities)
    case failedToStart(String)
    case event(Generation, EngineEvent)
    case readDone(UInt64, DiscoveredMedia)
    case readFailed(UInt64, ItemError)
}

/// The lines both ends write and read.
public enum EngineWire {
    /// `value` as one line of JSON (JSON text escapes every newline inside its strings).
    public static func line(_ value: some Encodable) -> [UInt8]? {
        guard var bytes = try? JSONEncoder().encode(value) else { return nil }
        bytes.append(UInt8(ascii: "\n"))
        return Array(bytes)
    }

    public static func decode<T: Decodable>(_ type: T.Type, from line: ArraySlice<UInt8>) throws -> T {
        try JSONDecoder().decode(type, from: Data(line))
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
