import ArgumentParser
import CProcessStart
import DBus
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import MPRIS
import PlayerEngine
import PlayerModel
import Playlists
import Store
import TonearmClient

/// tonearmd: the player service. It wires configuration, engine, player and the MPRIS service
/// together and runs until SIGTERM, SIGINT or a client's Quit.
struct Tonearmd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tonearmd",
        abstract: "The Tonearm player service: plays media and publishes itself on the D-Bus session bus as an MPRIS 2.2 player.",
        discussion: """
            Drive it with any MPRIS client, for example `playerctl -p tonearm play`.
            Environment: DBUS_SESSION_BUS_ADDRESS (the bus), TONEARM_AUDIO_SINK, TONEARM_PIPELINE,
            TONEARM_RECONNECT_ATTEMPTS, TONEARM_RECONNECT_DELAY, TONEARM_RECONNECT_MAX_DELAY, TONEARM_NETWORK_TIMEOUT, TONEARM_STALL_TIMEOUT, XDG_STATE_HOME (the saved state, in tonearm/), XDG_MUSIC_DIR (playlists in Playlists/).
            """,
        version: "0.1.0")

    @Option(name: .long, help: ArgumentHelp("A GStreamer bin description for the audio output.",
                                            discussion: "Default: autoaudiosink, or a silent real-time sink when there is no sound device. Also TONEARM_AUDIO_SINK.",
                                            valueName: "description"))
    var audioSink: String?

    @Option(name: .long, help: "playbin or playbin3 (default: playbin before GStreamer 1.24, playbin3 from it). Also TONEARM_PIPELINE.")
    var pipeline: EngineConfiguration.PipelineKind?

    @Option(name: .long, help: ArgumentHelp("Own org.mpris.MediaPlayer2.tonearm.<name> instead of the plain name.", valueName: "name"))
    var instance: String?

    @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    @Option(name: .long, help: ArgumentHelp("Seconds an HTTP connection may stay silent before it counts as lost and is reconnected (1-3600; default 10). Also TONEARM_NETWORK_TIMEOUT.", valueName: "seconds"))
    var networkTimeout: String?

    @Option(name: .long, help: ArgumentHelp("How often a network stream that lost its connection is loaded again before it fails (0: never; default 6). Also TONEARM_RECONNECT_ATTEMPTS.", valueName: "count"))
    var reconnectAttempts: String?

    @Option(name: .long, help: ArgumentHelp("Seconds before the first reconnect; each next one waits twice as long (default 1). Also TONEARM_RECONNECT_DELAY.", valueName: "seconds"))
    var reconnectDelay: String?

    @Option(name: .long, help: ArgumentHelp("The longest wait between reconnects, in seconds (default 16). Also TONEARM_RECONNECT_MAX_DELAY.", valueName: "seconds"))
    var reconnectMaxDelay: String?

    @Option(name: .long, help: ArgumentHelp("Seconds a stream may wait buffering with no progress before it counts as lost and is reconnected (default 30). Also TONEARM_STALL_TIMEOUT.", valueName: "seconds"))
    var stallTimeout: String?

    @Option(name: .long, help: ArgumentHelp("How to continue the saved queue: play, pause (at the saved position) or none (start empty).",
                                            valueName: "mode"))
    var resume: ResumeMode = .pause

    @Option(name: .long, help: ArgumentHelp("A folder of playlist files to offer besides $XDG_MUSIC_DIR/Playlists.", valueName: "directory"))
    var playlists: String?

    @Flag(name: .long, help: "Hand the URIs to a running tonearmd (OpenUri) and exit; start one when none runs.")
    var open = false

    @Argument(help: "Files, directories or URIs to play.")
    var uris: [String] = []

    /// The reconnect policy: the defaults, then the environment, then the options.
    func reconnectPolicy() throws -> ReconnectPolicy {
        do throws(ConfigurationError) {
            var policy = try ReconnectPolicy.fromEnvironment(ProcessInfo.processInfo.environment)
            if let reconnectAttempts { policy.attempts = try ReconnectPolicy.parseAttempts(reconnectAttempts, name: "--reconnect-attempts") }
            if let reconnectDelay { policy.firstDelay = try ReconnectPolicy.parseSeconds(reconnectDelay, name: "--reconnect-delay") }
            if let reconnectMaxDelay { policy.maximumDelay = try ReconnectPolicy.parseSeconds(reconnectMaxDelay, name: "--reconnect-max-delay") }
            if let stallTimeout { policy.stallLimit = try ReconnectPolicy.parseSeconds(stallTimeout, name: "--stall-timeout") }
            return policy
        } catch {
            throw ValidationError(error.description)
        }
    }

    func validate() throws {
        _ = try reconnectPolicy()
        if let networkTimeout, EngineConfiguration.parseTimeout(networkTimeout) == nil {
            throw ValidationError("--network-timeout must be a whole number of seconds from 1 to 3600, not '\(networkTimeout)'")
        }
        if let text = ProcessInfo.processInfo.environment["TONEARM_NETWORK_TIMEOUT"], EngineConfiguration.parseTimeout(text) == nil {
            throw ValidationError("TONEARM_NETWORK_TIMEOUT must be a whole number of seconds from 1 to 3600, not '\(text)'")
        }
        if let instance, instance.isEmpty || !instance.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) || instance.first!.isNumber {
            throw ValidationError("--instance takes letters, digits and '_', not starting with a digit: \(instance)")
        }
    }

    func run() throws {
        // glibc gives each thread that allocates an arena of its own and keeps what it freed; with
        // GStreamer's streaming and teardown threads that is tens of MiB of RssAnon that a service
        // running for weeks never gets back (make fuzz: +45 MiB with the default, +10 MiB with one
        // arena, mallopt(3) M_ARENA_MAX). Two arenas keep the engine and the service apart.
        tuneMalloc()
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "tonearmd")
        if tonearm_allocator_settings_in_place() == 0 {
            logger.notice("running with the allocators' defaults: could not start again with G_SLICE=always-malloc and GLIBC_TUNABLES=glibc.malloc.tcache_count=0 (is /proc mounted?); memory stays higher after bursts of calls")
        }
        guard let address = Connection.sessionBusAddress else {
            logger.critical("no session bus: DBUS_SESSION_BUS_ADDRESS is not set (run inside a desktop session, or start one with dbus-run-session)")
            throw ExitCode(1)
        }
        let queue = DispatchQueue(label: "tonearm.service")
        if open, try handOver(uris, address: address, logger: logger) { return }
        var engineConfiguration = EngineConfiguration.fromEnvironment()
        if let audioSink { engineConfiguration.audioSink = audioSink }
        if let pipeline { engineConfiguration.pipeline = pipeline }
        if let timeout = networkTimeout.flatMap(EngineConfiguration.parseTimeout) { engineConfiguration.networkTimeout = timeout }
        var playerConfiguration = PlayerConfiguration()
        playerConfiguration.reconnect = try reconnectPolicy()
        // a file-size limit (ulimit -f) makes a write fail with EFBIG instead of killing the
        // process with SIGXFSZ (setrlimit(2), RLIMIT_FSIZE): the store says so and goes on
        signal(SIGXFSZ, SIG_IGN)
        // watched before the name is taken: one that comes while the service is built below is
        // handled once it is, as a quit
        let quitSignals = QuitSignals(queue: queue)
        // The name first (issue 11: start -> name owned), then the service, in the same turn of
        // the service queue: libdbus's messages are dispatched on that queue only, so a call that
        // comes once the name is owned waits in the socket until this turn ends, and its answer
        // (the first GetAll) shows the restored queue. GStreamer's set-up (gst_init, seconds at a
        // first start with no registry cache) is not in this turn: it runs on the engine's queue,
        // and the formats it finds are announced when known (Service.engineStarted).
        let service = try queue.sync {
            let connection = try Connection(address: address, queue: queue, logger: logger)
            let name = try MPRISService.takeName(on: connection, instance: instance)
            let store = StateStore(directory: StateStore.defaultDirectory(), instance: instance, logger: logger)
            let service = try Service(connection: connection, name: name, engine: engineConfiguration, player: playerConfiguration,
                                      instance: instance, store: store, resume: resume,
                                      playlists: playlists.map { URL(fileURLWithPath: $0) }, queue: queue, logger: logger)
            try service.start(playing: uris)
            quitSignals.service = service
            return service
        }
        service.startEngine()
        withExtendedLifetime((service, quitSignals)) {
            forgetAbandonedFramesForAddressSanitizer()
            dispatchMain()
        }
    }

    /// With --open: gives the URIs to the tonearmd that owns the name, if one does (TonearmClient,
    /// without D-Bus activation: the activation file would start a second tonearmd, this one).
    private func handOver(_ uris: [String], address: String, logger: Logger) throws -> Bool {
        let name = TonearmClient.baseName + (instance.map { ".\($0)" } ?? "")
        let client: TonearmClient
        do {
            client = try TonearmClient(address: address, service: .name(name), activate: false, logger: logger)
        } catch let error as ClientError where error.code == .noService {
            return false
        }
        defer { client.close() }
        for uri in uris { try client.openURI(MediaLocation.uri(for: uri)) }
        logger.info("handed \(uris.count) item(s) to the running tonearmd")
        return true
    }
}

/// Everything that lives on the service queue. A nonisolated type: handlers created here run on
/// that queue, never on the main actor (design brief, trap 1).
final class Service: @unchecked Sendable {
    // @unchecked: confined to `queue` (main.swift only calls it inside queue.sync, and then
    // startEngine, which reads the immutable `engine`; its handlers run there).
    private let queue: DispatchQueue
    private let logger: Logger
    private let connection: Connection
    private let engine: GStreamerEngine
    private let player: Player
    private let mpris: MPRISService
    private var log: Subscription?
    private var sleepWatch: SleepWatch?
    private let store: StateStore
    private let recorder: StateRecorder
    private let resume: ResumeMode

    init(connection: Connection, name: String, engine configuration: EngineConfiguration, player playerConfiguration: PlayerConfiguration,
         instance: String?, store: StateStore, resume: ResumeMode, playlists: URL?, queue: DispatchQueue, logger: Logger) throws {
        self.queue = queue
        self.logger = logger
        self.store = store
        self.resume = resume
        self.connection = connection
        let covers = CoverCache(directory: CoverCache.defaultDirectory())
        // GStreamer is set up on the engine's queue, not here: this queue answers D-Bus already.
        // It begins once this first turn is done (startEngine).
        engine = GStreamerEngine(configuration: configuration, covers: covers, logger: logger, startsAtOnce: false)
        engine.whenPipelinesReleased(giveBackFreedMemory)
        player = Player(engine: engine, configuration: playerConfiguration, queue: queue, metadataReader: TagMetadataReader(method: TagMetadataReader.method(), covers: covers))
        var options = MPRISService.Options()
        options.instanceName = instance
        options.ownedName = name
        // known once the engine has read GStreamer's registry (engineStarted)
        options.formatsPending = true
        // saved queues live beside the saved state
        // each file keeps the id the saved state gave it, and the active playlist comes back with
        // the queue it filled
        options.playlists = PlaylistCatalog(directories: [PlaylistCatalog.musicPlaylists()] + (playlists.map { [$0] } ?? []),
                                            savedQueues: StateStore.defaultDirectory().appendingPathComponent("queues"),
                                            remembered: store.loadedPlaylists,
                                            onRecord: { [store] in store.record(.playlist($0)) }, logger: logger)
        options.restoredActivePlaylist = resume == .none ? nil : store.loadedActivePlaylist
        options.onActivePlaylistChanged = { [store] in store.record(.activePlaylist($0)) }
        mpris = try MPRISService(player: player, connection: connection, options: options, logger: logger)
        recorder = StateRecorder(player: player, store: store)
    }

    func start(playing uris: [String]) throws {
        connection.onDisconnect = { [weak self] error in
            self?.logger.critical("lost the session bus connection (\(error.message)): tonearmd stops (exit status 69)")
            self?.recorder.finish()
            // EX_UNAVAILABLE (sysexits.h): not a crash; systemd's Restart=on-failure starts it again
            exit(69)
        }
        mpris.onQuit = { [weak self] in self?.quit(reason: "a client asked to quit") }
        // first on the engine's queue after its set-up, before any command this start queues
        engine.whenReady { [weak self, queue] result in
            // the registry walk behind the formats runs here too, off the service queue
            guard let service = self else { return }
            let formats = result.map { _ in MediaCapabilities() }.mapError { $0 as any Error }
            queue.async { service.engineStarted(formats) }
        }
        if let saved = store.loaded, resume != .none {
            player.restore(saved, resume: resume)
            logger.info("restored \(saved.items.count) item(s) from \(store.path)", metadata: ["resume": "\(resume.rawValue)"])
        }
        // engine commands, state writes and log lines wait until the reply and the
        // PropertiesChanged of the call that caused them have left (make bench: PlayPause)
        player.deferUntilAnswered { [connection] body in connection.afterDispatchPass(body) }
        recorder.start(rewrite: store.loaded != nil && resume == .none)
        try mpris.start()
        watchSleep()
        log = player.subscribe { [logger, player] event in
            // a log line is a write to stderr, which may wake its reader (journald): after the answer
            player.whenAnswered { Service.logLine(for: event, logger: logger, player: player) }
        }
        if !uris.isEmpty {
            // a folder is walked off this queue, which answers D-Bus from now on
            do {
                try mpris.open(uris) { [logger] error in
                    guard let error else { return }
                    logger.error("\(error)")
                    exit(2)
                }
            } catch {
                logger.error("\(error)")
                throw ExitCode(2)
            }
        }
    }

    /// Lets the engine set GStreamer up (gst_init, the sink, the formats), then perform the
    /// commands queued meanwhile; called once the first turn of the service queue is done. With
    /// gst_init beside that turn, it and the bus daemon and the first caller shared 2 cores: 20
    /// interleaved starts each, three times, put the first answer 2.5-4.5 ms after the name with
    /// this, 4.7-5.7 ms without.
    func startEngine() {
        engine.start()
    }

    /// The engine's set-up is done: the formats it plays are announced, and the calls that queue
    /// URIs, which waited for them, are answered. When GStreamer could not start (no such pipeline
    /// element, a sink description that does not parse), tonearmd says why and stops with status 1,
    /// leaving the saved state as it was.
    private func engineStarted(_ result: Result<MediaCapabilities, any Error>) {
        switch result {
        case .success(let capabilities):
            mpris.formatsKnown(uriSchemes: capabilities.supportedURISchemes, mimeTypes: capabilities.supportedMIMETypes,
                               resolve: { uri, limit, control throws(ResolveError) in
                                   try LocalFiles.resolve(uri, capabilities: capabilities, limit: limit, control: control)
                               })
        case .failure(let error):
            logger.critical("GStreamer could not start: \(error): tonearmd stops (exit status 1)")
            store.close()
            mpris.shutDown()
            connection.close()
            exit(1)
        }
    }

    /// What the log says of a player event.
    private static func logLine(for event: PlayerModel.PlayerEvent, logger: Logger, player: Player) {
        switch event {
        case .currentItemChanged(let item?):
            logger.info("now: \(item.displayTitle)", metadata: ["uri": "\(item.uri)"])
        case .timeControlStatusChanged(let status):
            logger.info("time control: \(status.name)\(status.waitingReason.map { " (\($0.rawValue))" } ?? "")")
        case .itemFailed(_, let error):
            logger.error("\(error.message)")
        case .outputFailed(let error):
            logger.error("\(error.message): paused (Play tries the output again)")
        case .playedToEnd(let id):
            logger.info("played to end: \(player.item(id)?.displayTitle ?? "\(id)")")
        case .gapSkipped(let id, let at, let length):
            logger.warning("\(player.item(id)?.displayTitle ?? "\(id)"): \(length) of the stream at \(at) never came (not media?); playing on")
        case .queueChanged(.replaced), .queueChanged(.removed):
            // an emptied list (Clear) frees the items' memory at once, with no pipeline to
            // retire after it: give the pages back here too, off the serving queue
            if player.state.count == 0 { trimQueue.async(execute: giveBackFreedMemory) }
        default:
            break
        }
    }

    /// Pauses before the system sleeps and plays again after, when logind is there to say so
    /// (org.freedesktop.login1.Manager PrepareForSleep on the system bus). Without a system bus
    /// (a container, CI) there is nothing to watch. The connection lives on a queue of its own:
    /// connecting and AddMatch wait for the system bus (dbus_bus_register, dbus_bus_add_match
    /// block, 25 s by default), and a system bus that hangs must not hold the queue that answers.
    private func watchSleep() {
        let watch = SleepWatch(logger: logger)
        watch.start(address: SleepWatch.systemBusAddress) { [queue, player] sleeping in
            queue.async {
                if sleeping { player.interrupt(because: .systemSleep) } else { player.resume(because: .systemSleep) }
            }
        }
        sleepWatch = watch
    }

    /// Says Stopped, releases the name, closes the connection, exits 0.
    func quit(reason: String) {
        logger.info("quitting: \(reason)")
        // what the user left it doing, before the shutdown stops the player
        recorder.finish()
        store.close()
        mpris.shutDown()
        connection.close()
        // the system bus connection closes with the process: its queue may still be connecting
        exit(0)
    }
}

/// The system bus connection that hears logind's PrepareForSleep, made and used on a queue of its
/// own. `@unchecked Sendable`: `bus` is set and read only on `queue`.
final class SleepWatch: @unchecked Sendable {
    private let queue = DispatchQueue(label: "tonearm.sleep-watch", qos: .utility)
    private let logger: Logger
    private var bus: Connection?

    init(logger: Logger) { self.logger = logger }

    /// Where libdbus looks for the system bus (dbus_bus_get(DBUS_BUS_SYSTEM) reads
    /// DBUS_SYSTEM_BUS_ADDRESS first: dbus/dbus-bus.c init_connections_unlocked).
    static var systemBusAddress: String {
        getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) } ?? "unix:path=/run/dbus/system_bus_socket"
    }

    /// Connects on `queue` and calls `changed` there with PrepareForSleep's argument (true: about
    /// to sleep; false: woken up).
    func start(address: String, changed: @escaping @Sendable (Bool) -> Void) {
        queue.async { [self] in
            let rule = "type='signal',interface='org.freedesktop.login1.Manager',member='PrepareForSleep'"
            do {
                let bus = try Connection(address: address, queue: queue, logger: logger)
                bus.onDisconnect = { [weak self] _ in self?.bus = nil }
                // the handler first: a signal the rule lets through finds it in place
                _ = bus.onSignal(interface: "org.freedesktop.login1.Manager", member: "PrepareForSleep") { message in
                    guard let sleeping = try? message.arguments().first?.boolValue else { return }
                    changed(sleeping)
                }
                try bus.addMatch(rule)
                self.bus = bus
                logger.debug("watching the system bus for sleep", metadata: ["address": "\(address)"])
            } catch {
                logger.debug("no system bus to watch for sleep: \(error)")
            }
        }
    }
}

/// SIGTERM and SIGINT, each a quit of the service on its queue; set up before the bus name is taken.
final class QuitSignals: @unchecked Sendable {
    // @unchecked: `service` is set and read on the service queue only (the sources' handlers run there).
    private var sources: [DispatchSourceSignal] = []
    var service: Service?

    init(queue: DispatchQueue) {
        for signal in [SIGTERM, SIGINT] {
            Glibc.signal(signal, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signal, queue: queue)
            source.setEventHandler { [unowned self] in self.service?.quit(reason: signal == SIGTERM ? "SIGTERM" : "SIGINT") }
            source.resume()
            sources.append(source)
        }
    }
}

/// glibc's mallopt(3), found with dlsym: Swift's Glibc module does not include <malloc.h>, where
/// M_ARENA_MAX is -8 and M_MMAP_THRESHOLD -3 (glibc malloc/malloc.h). Does nothing on another libc.
/// - Two arenas (see run()).
/// - A fixed mmap threshold of 128 KiB: glibc otherwise raises it after a large block is freed
///   (a client's 1 MiB string), and later large blocks come from a heap that is never given back
///   (fuzz.py --seed 3, 20,000 calls, one arena: +25 MiB RssAnon with the sliding threshold, +10 MiB fixed).
private func tuneMalloc() {
    typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }  // RTLD_DEFAULT
    let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
    // glibc's own MALLOC_ARENA_MAX / MALLOC_MMAP_THRESHOLD_ in the environment stand (mallopt(3))
    let environment = ProcessInfo.processInfo.environment
    if environment["MALLOC_ARENA_MAX"] == nil { _ = mallopt(-8, 2) }  // M_ARENA_MAX
    if environment["MALLOC_MMAP_THRESHOLD_"] == nil { _ = mallopt(-3, 128 * 1024) }  // M_MMAP_THRESHOLD
}

/// glibc's malloc_trim(3), found with dlsym like mallopt: hands the free pages inside the heap
/// back to the system. glibc gives back only the top of a heap by itself, and a pipeline's
/// teardown frees megabytes below blocks still in use: make fuzz --only typed --seed 11, 6,000
/// calls, left the main heap 10 MiB larger than at warm-up, all of it free (malloc_trim took
/// RssAnon from 32.5 to 20.9 MiB). Runs after the last retired pipeline is freed and when the
/// list is emptied, never on a timer.
/// Where `malloc_trim` runs when not on a teardown thread. A serial queue of our own, never a
/// global one: the first job on a global (non-overcommit) queue starts libdispatch's worker-pool
/// monitor, a 1 s timer that then wakes the idle process forever
/// (swift-corelibs-libdispatch src/event/workqueue.c, `_dispatch_workq_init_once`).
private let trimQueue = DispatchQueue(label: "tonearm.malloc-trim", qos: .utility)

@Sendable private func giveBackFreedMemory() {
    typealias MallocTrim = @convention(c) (Int) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }  // RTLD_DEFAULT
    _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
}

/// Under AddressSanitizer (make test-asan) only: dispatchMain ends the main thread with
/// pthread_exit, so the frames above it never return and the redzones ASan put around their
/// stack allocations stay marked. libdispatch's signal thread then runs on that stack (a TSD
/// destructor that waits in sigsuspend), and its SIGTERM handler's sigfillset was reported as a
/// dynamic-stack-buffer-overflow in _dispatch_sigmask, in 1 of 3 stops and 62 reports in a run.
/// `__asan_handle_no_return` clears the marks of the current thread's stack, as the compiler
/// does before calling a function that never returns (compiler-rt asan_rtl.cpp). It exists only
/// in a process that has ASan's runtime.
private func forgetAbandonedFramesForAddressSanitizer() {
    typealias HandleNoReturn = @convention(c) () -> Void
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_handle_no_return") else { return }  // RTLD_DEFAULT
    unsafeBitCast(symbol, to: HandleNoReturn.self)()
}

extension EngineConfiguration.PipelineKind: ExpressibleByArgument {}
extension ResumeMode: ExpressibleByArgument {}
extension Logger.Level: @retroactive ExpressibleByArgument {}

Tonearmd.main()
