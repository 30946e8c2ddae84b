import PlayerModel

/// A snapserver's TCP source that the player's PCM streams to (docs/sound.md, "Snapcast"): snapserver
/// timestamps what it reads and sends it to every snapclient, which play it in sync. Configured
/// as `tcp://HOST:PORT[?sampleformat=RATE:BITS:CHANNELS]`, the form of snapserver's own `source`
/// line (`source = tcp://127.0.0.1:4953?name=Tonearm`, its default mode `server`: it listens and
/// Tonearm connects).
///
/// TCP, not a pipe source: a FIFO's writer blocks in open(2) until snapserver reads it, which would
/// hold the engine's queue for as long as snapserver is not running; a refused connection is an
/// error at once, and Play tries again.
public struct SnapcastOutput: Sendable, Equatable, Codable {
    public var host: String
    public var port: UInt16
    /// What snapserver reads the stream as: its `sampleformat` (48000:16:2 by default, as
    /// snapserver's `stream.sampleformat`). Raw PCM carries no format, so the two must agree.
    public var rate: Int
    public var bits: Int
    public var channels: Int

    /// snapserver's port for a TCP source that names none (server/streamreader/tcp_stream.cpp).
    public static let defaultPort: UInt16 = 4953
    /// The output's id in `Outputs`.
    public static let id = "snapcast"

    public init(host: String, port: UInt16 = SnapcastOutput.defaultPort, rate: Int = 48000, bits: Int = 16, channels: Int = 2) {
        self.host = host
        self.port = port
        self.rate = rate
        self.bits = bits
        self.channels = channels
    }

    /// Reads `tcp://HOST[:PORT][?sampleformat=RATE:BITS:CHANNELS]`; says what is wrong otherwise.
    public static func parse(_ text: String) throws(ConfigurationError) -> SnapcastOutput {
        let usage = "a snapserver's TCP source is tcp://HOST:PORT (optionally ?sampleformat=48000:16:2), not '\(text.prefix(200))'"
        guard text.hasPrefix("tcp://") else { throw ConfigurationError(usage) }
        let rest = text.dropFirst("tcp://".count)
        let parts = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var address = parts[0]
        if address.hasSuffix("/") { address = address.dropLast() }
        var output: SnapcastOutput
        if address.hasPrefix("[") {  // an IPv6 address: [::1]:4953
            guard let close = address.firstIndex(of: "]") else { throw ConfigurationError(usage) }
            let host = String(address[address.index(after: address.startIndex)..<close])
            let after = address[address.index(after: close)...]
            output = SnapcastOutput(host: host)
            if !after.isEmpty {
                guard after.hasPrefix(":"), let port = UInt16(after.dropFirst()), port > 0 else { throw ConfigurationError(usage) }
                output.port = port
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { throw ConfigurationError(usage) }
        } else {
            let hostAndPort = address.split(separator: ":", omittingEmptySubsequences: false)
            guard (1...2).contains(hostAndPort.count) else { throw ConfigurationError(usage) }
            let host = String(hostAndPort[0])
            // a name or an IPv4 address: nothing that would end the host in the sink's description
            guard !host.isEmpty, host.utf8.count <= 253,
                  host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }) else {
                throw ConfigurationError(usage)
            }
            output = SnapcastOutput(host: host)
            if hostAndPort.count == 2 {
                guard let port = UInt16(hostAndPort[1]), port > 0 else { throw ConfigurationError(usage) }
                output.port = port
            }
        }
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let keyValue = pair.split(separator: "=", maxSplits: 1)
                // snapserver's other keys (name, mode, codec) are its own business
                guard keyValue.count == 2, keyValue[0] == "sampleformat" else { continue }
                let numbers = keyValue[1].split(separator: ":").map { Int($0) }
                guard numbers.count == 3, let rate = numbers[0], let bits = numbers[1], let channels = numbers[2],
                      (8000...384_000).contains(rate), [16, 24, 32].contains(bits), (1...8).contains(channels) else {
                    throw ConfigurationError("the sampleformat of \(text.prefix(200)) is RATE:BITS:CHANNELS with 16, 24 or 32 bits, "
                                             + "as snapserver's (48000:16:2)")
                }
                (output.rate, output.bits, output.channels) = (rate, bits, channels)
            }
        }
        return output
    }

    /// What `Outputs` lists.
    public var device: OutputDevice {
        OutputDevice(id: Self.id, description: "Snapcast: snapserver at \(address)", kind: OutputDevice.snapcastKind)
    }

    /// HOST:PORT, with an IPv6 address in brackets.
    public var address: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The sink bin: the sound converted to the sample format snapserver reads (raw little-endian
    /// PCM; 24 bits come in 4 bytes each: common/sample_format.cpp), sent paced by the pipeline's
    /// clock a little ahead of it. snapserver reads a chunk every 20 ms by its own clock and, when
    /// one is late, starts its timestamps again (a click: server/streamreader/asio_stream.hpp,
    /// "resync"); written exactly on time, some were (17 ms late), 100 ms ahead none were. Not
    /// unpaced: the socket's buffers would hold seconds, and Pause would be heard that late.
    public var sinkDescription: String {
        let format = switch bits {
        case 24: "S24_32LE"
        case 32: "S32LE"
        default: "S16LE"
        }
        return "audioconvert ! audioresample ! audio/x-raw,format=\(format),rate=\(rate),channels=\(channels),layout=interleaved"
            + " ! tcpclientsink name=\(Self.sinkName) host=\"\(host)\" port=\(port) sync=true ts-offset=\(-Self.lead)"
    }

    /// How far ahead of the clock the stream is sent, in ns (see `sinkDescription`).
    public static let lead: Int64 = 100_000_000
    /// The sink's name: an error it posts says "sink", which makes it the output's (`ErrorMapping`).
    public static let sinkName = "tonearm-snapcast-sink"
}
