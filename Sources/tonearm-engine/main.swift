import Basics
import Dispatch
import EngineLink
import Glibc
import Logging
import PlayerEngine
import PlayerModel

// tonearm-engine: tonearmd's GStreamer engine in a process of its own (README, "How it runs").
// tonearmd starts it when something needs GStreamer and closes its stdin once nothing has been
// loaded for a while; it then releases its pipelines and exits, and GStreamer's memory goes with it.
// A line protocol of JSON objects (Sources/EngineLink/EngineWire.swift):
//   in (stdin): `EngineRequest`, the first one `configure`
//   out (stdout): `EngineReport`, in the order things happened
// Its log goes to stderr, tonearmd's.
// Usage: tonearm-engine [--log-level LEVEL]

/// The process's one engine and tag reader, made by the first request; confined to the thread
/// that reads stdin, except `report`, which any thread calls.
final class EngineHost: @unchecked Sendable {
    // @unchecked: `engine` and `tags` are set and read on the thread that reads stdin only; the
    // handlers other threads run call `report`, which writes under `output`.
    private let environment: [String: String]
    private let logger: Logger
    /// The reports, one line each, written whole under it: the engine's queue, the tag readers'
    /// threads and the ready handler all write.
    private let output = Lock()
    private var engine: GStreamerEngine?
    private var tags: TagMetadataReader?

    init(environment: [String: String], logger: Logger) {
        self.environment = environment
        self.logger = logger
    }

    /// Reads stdin to its end, performing each request in order; then the pipelines go to NULL
    /// before exit runs the libraries' destructors (libX11 frees its lock in one).
    func serve() {
        var input = EngineWire.Lines()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        reading: while true {
            let count = Files.read(0, into: &buffer)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break reading }
            for line in input.append(buffer[..<count]) {
                do {
                    perform(try EngineWire.decode(EngineRequest.self, from: line))
                } catch {
                    logger.error("ignored a request that is not one: \(error)")
                }
            }
        }
        if let engine {
            engine.perform(.release)
            _ = engine.waitForDisposals(timeout: 2)
            engine.stopWatchingOutputs()
        }
    }

    private func report(_ value: EngineReport) {
        guard let line = EngineWire.line(value) else { return }
        output.withLock { _ = Files.writeAll(line, to: 1) }
    }

    private func perform(_ request: EngineRequest) {
        switch request {
        case .configure(let configuration):
            guard engine == nil else { return }
            let covers = CoverCache(directory: CoverCache.defaultDirectory(environment: environment))
            let started = GStreamerEngine(configuration: configuration, covers: covers, logger: logger)
            started.whenPipelinesReleased(Memory.giveBackFreedMemory)
            started.whileVideoShows { size in Memory.videoShows(size.map { ($0.width, $0.height) }) }
            started.setEventHandler { [self] generation, event in report(.event(generation, event)) }
            // on the engine's queue after its set-up, so after the outputs it found: the registry
            // walk behind the formats runs there too
            started.whenReady { [self] result in
                switch result {
                case .success(let setUp): report(.ready(setUp, MediaCapabilities()))
                case .failure(let error): report(.failedToStart("\(error)"))
                }
            }
            engine = started
            tags = TagMetadataReader(method: TagMetadataReader.method(environment: environment), covers: covers)
        case .command(let command):
            engine?.perform(command)
        case .read(let number, let uri):
            guard let tags else {
                return report(.readFailed(number, ItemError(.other, "cannot read \(uri): the engine was not configured")))
            }
            tags.read(uri) { [self] result in
                switch result {
                case .success(let media): report(.readDone(number, media))
                case .failure(let error): report(.readFailed(number, error))
                }
            }
        }
    }
}

let environment = Environment.variables()
Memory.tuneAllocator(environment: environment)
// a write to the window program's stdin after it ended fails with EPIPE instead of ending this
// process (pipe(7)); the end of tonearmd is the end of stdin
signal(SIGPIPE, SIG_IGN)
// the command line RemoteEngine wrote, read with tonearmd's reader (EngineOptions.command)
let level = EngineOptions.command.valuesOrExit(Array(CommandLine.arguments.dropFirst()), into: EngineOptions()).logLevel
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = level
    return handler
}
EngineHost(environment: environment, logger: Logger(label: "tonearm-engine")).serve()
exit(0)
