import Basics
import Dispatch
import EngineLink
import Glibc
import Logging
import PlayerEngine
import PlayerModel

// tonearm-engine: tonearmd's GStreamer engine in a process of its own (ARCHITECTURE.md, "How it runs").
// tonearmd starts it when something needs GStreamer and closes its stdin once nothing has been
// loaded for a while; it then releases its pipelines and exits, and GStreamer's memory goes with it.
// A line protocol of JSON objects (Sources/EngineLink/EngineWire.swift, ARCHITECTURE.md "The
// engine's link"):
//   in (stdin): `EngineRequest`, the first one `hello` with the protocol version, then `configure`
//   out (stdout): `EngineReport`, the first one `hello`, then in the order things happened
// A line it cannot read, or a version not its own, is refused (a `refused` line saying why) and the
// process exits with status 3; a report it cannot write ends it with status 4; one that cannot set
// no-new-privileges exits with status 5 before it reads anything; one that cannot install its
// system-call filter says why in a `refused` line and exits with status 6, one that cannot apply
// its Landlock rules with status 7, both before it reads any media (docs/sandbox.md).
// Its log goes to stderr, tonearmd's.
// Usage: tonearm-engine [--log-level LEVEL]

/// The process's one engine and tag reader, made by the first request; confined to the thread
/// that reads stdin, except `report`, which any thread calls.
final class EngineHost: @unchecked Sendable {
    // @unchecked: `engine`, `tags` and `greeted` are set and read on the thread that reads stdin
    // only; the handlers other threads run call `report`, which writes under `output`.
    private let environment: [String: String]
    private let logger: Logger
    /// The reports, one line each, written whole under it: the engine's queue, the tag readers'
    /// threads and the ready handler all write.
    private let output = Lock()
    private var engine: GStreamerEngine?
    private var tags: TagMetadataReader?
    /// tonearmd said which protocol it speaks, and it is ours.
    private var greeted = false

    /// How the process ends when the link breaks.
    static let refusedStatus: Int32 = 3
    static let cannotWriteStatus: Int32 = 4
    /// How it ends when it cannot confine itself: no-new-privileges (before `serve`), the
    /// system-call filter, the Landlock rules on writes.
    static let cannotForbidPrivilegesStatus: Int32 = 5
    static let cannotFilterStatus: Int32 = 6
    static let cannotRestrictWritesStatus: Int32 = 7

    init(environment: [String: String], logger: Logger) {
        self.environment = environment
        self.logger = logger
    }

    /// Says which protocol it speaks, then reads stdin to its end, performing each request in
    /// order; then the pipelines go to NULL before exit runs the libraries' destructors (libX11
    /// frees its lock in one).
    func serve() {
        report(.hello(version: EngineWire.version))
        var input = EngineWire.Lines()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        reading: while true {
            let count = Files.read(0, into: &buffer)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break reading }
            for line in input.append(buffer[..<count]) {
                do throws(LinkError) {
                    perform(try EngineWire.decode(EngineRequest.self, from: line))
                } catch {
                    refuse(error.message)
                }
            }
        }
        if let engine {
            engine.perform(.release)
            _ = engine.waitForDisposals(timeout: 2)
            engine.stopWatchingOutputs()
        }
    }

    /// The link is broken: says why, on stderr and to tonearmd, and ends the process (tonearmd
    /// fails the item it played with this reason).
    private func refuse(_ reason: String) -> Never {
        logger.error("the link to tonearmd is broken: \(reason)")
        report(.refused(reason))
        exit(Self.refusedStatus)
    }

    /// Installs the system-call filter on every thread (`Confinement.refuseSystemCalls`), unless
    /// `TONEARM_SANDBOX=off` (tonearmd said so once at its start). One that cannot be installed
    /// ends the process (status 6) with the reason told to tonearmd: an engine never plays
    /// unconfined unless asked to.
    private func confine() {
        guard EngineSandbox.inEngine(environment) == .on else {
            logger.debug("\(EngineSandbox.variable)=off: no system-call filter")
            return
        }
        do throws(SystemCallFilterError) {
            try Confinement.refuseSystemCalls()
        } catch {
            let reason = "the engine cannot install its system-call filter: \(error.message) (\(EngineSandbox.variable)=off runs it without, for debugging)"
            logger.critical("\(reason)")
            report(.refused(reason))
            exit(Self.cannotFilterStatus)
        }
    }

    /// Applies the Landlock rules (`Confinement.restrictWrites`): from here on the engine and what
    /// it starts change the file system only beneath `EngineSandbox.writableFolders`, unless
    /// `TONEARM_SANDBOX=off`. The cache folder is made first, as GLib would make it, since a rule
    /// needs its folder to exist. A kernel without Landlock is said once and the engine goes on
    /// (its filter still stands); rules that cannot be applied otherwise end the process (status 7).
    private func restrictWrites() {
        guard EngineSandbox.inEngine(environment) == .on else { return }
        let cache = EngineSandbox.cacheFolder(environment)
        Files.makeDirectories(cache)
        let folders = EngineSandbox.writableFolders(environment)
        do throws(WriteRulesError) {
            if let (abi, unbound) = try Confinement.restrictWrites(toBeneath: folders) {
                logger.debug("Landlock rules (ABI \(abi)): writes only beneath \(folders.joined(separator: ", "))")
                if unbound != 0 {
                    // only a sanitizer's or a debugger's thread is expected here: said, not fatal
                    logger.warning("\(unbound < 0 ? "the engine's threads could not be counted" : "\(unbound) thread(s) existed before the Landlock rules"): those are not bound by them")
                }
            } else {
                logger.notice("Landlock is not available on this kernel: writes are not confined")
            }
        } catch {
            let reason = "the engine cannot apply its Landlock rules: \(error.message) (\(EngineSandbox.variable)=off runs it without, for debugging)"
            logger.critical("\(reason)")
            report(.refused(reason))
            exit(Self.cannotRestrictWritesStatus)
        }
    }

    private func report(_ value: EngineReport) {
        let line: [UInt8]
        do throws(LinkError) {
            line = try EngineWire.line(value)
        } catch {
            // what the engine found cannot be said (a number that is not finite): tonearmd would
            // wait for it in vain, so the engine ends and tonearmd fails the item
            logger.error("\(error.message)")
            // a line of text alone always encodes
            if case .refused = value {} else { report(.refused("the engine could not write a report: \(error.message)")) }
            exit(Self.cannotWriteStatus)
        }
        let written = output.withLock { Files.writeAll(line, to: 1) }
        if !written {
            // tonearmd is gone (EPIPE) or its pipe broke: no one hears this engine any more
            logger.error("cannot write to tonearmd (errno \(errno)): ending")
            exit(Self.cannotWriteStatus)
        }
    }

    private func perform(_ request: EngineRequest) {
        if !greeted {
            guard case .hello(let version) = request else { refuse("the first line is not hello: tonearmd speaks another protocol") }
            guard version == EngineWire.version else {
                refuse("tonearmd speaks the engine link's protocol version \(version), this tonearm-engine version \(EngineWire.version): install both from one build")
            }
            greeted = true
            return
        }
        switch request {
        case .hello:
            refuse("hello came twice")
        case .configure(let configuration):
            guard engine == nil else { return }
            // GStreamer's registry, then the Landlock rules and the filter, then the engine:
            // gst_init may run gst-plugin-scanner and write the registry, and loads the system's
            // plugins, which is not media; whatever reads media (a load, a probe, a tag read) comes
            // in a later line, so under both. The process has one thread until the engine starts
            // (the rules bind only the threads made after them: `restrictWrites` checks)
            GStreamerEngine.prepareRegistry()
            restrictWrites()
            confine()
            let covers = CoverCache(directory: CoverCache.defaultDirectory(environment: environment))
            let started = GStreamerEngine(configuration: configuration, covers: covers, logger: logger)
            started.whenPipelinesReleased(Memory.giveBackFreedMemory)
            started.whileVideoShows { size in Memory.videoShows(size.map { ($0.width, $0.height) }) }
            started.setEventHandler { [self] generation, event in report(.event(generation, event)) }
            started.whenWaiting { [self] what, bound in report(.waiting(what: what, bound: bound)) }
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
        case .command(let number, let command):
            guard let engine else { refuse("a command came before configure") }
            engine.perform(command)
            engine.afterCommands { [self] in report(.done(number)) }
        case .probe(let number):
            guard let engine else { refuse("a probe came before configure") }
            engine.probePosition { [self] position in report(.probed(number, position)) }
        case .read(let number, let uri):
            guard let tags else { refuse("a read came before configure") }
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
let logger = Logger(label: "tonearm-engine")
// before anything reads media: nothing a demuxer is made to run gains a privilege at execve
// (docs/sandbox.md); a process that cannot give it up does not play (exit status 5). The
// system-call filter follows at `configure`, once GStreamer's registry is ready (`confine`).
do throws(SystemErrno) {
    try Confinement.forbidNewPrivileges()
} catch {
    logger.critical("cannot set no-new-privileges: \(error.message)")
    exit(EngineHost.cannotForbidPrivilegesStatus)
}
EngineHost(environment: environment, logger: logger).serve()
exit(0)
