import Basics
import DBus
import Dispatch
import EngineLink
import FoundationEssentials
import Glibc
import Logging
import MPRIS
import PlayerModel
import Playlists
import Store

/// What a tonearmd is started with: everything its command line and environment decide.
public struct ServiceConfiguration: Sendable {
    /// The session bus (`DBUS_SESSION_BUS_ADDRESS`).
    public var busAddress: String
    public var engine: EngineConfiguration
    public var player: PlayerConfiguration
    /// A suffix for the bus name and the saved state's file (`--instance`).
    public var instance: String?
    public var resume: ResumeMode
    /// A folder of playlist files besides `$XDG_MUSIC_DIR/Playlists`.
    public var playlists: URL?
    /// Files, folders or URIs to play at start.
    public var items: [String]
    /// The log's level, the engine's process's too.
    public var logLevel: Logger.Level = .info

    public init(busAddress: String, engine: EngineConfiguration = EngineConfiguration(), player: PlayerConfiguration = PlayerConfiguration(),
                instance: String? = nil, resume: ResumeMode = .pause, playlists: URL? = nil, items: [String] = []) {
        self.busAddress = busAddress
        self.engine = engine
        self.player = player
        self.instance = instance
        self.resume = resume
        self.playlists = playlists
        self.items = items
    }
}

/// The player service: the engine, the player, the saved state and the MPRIS object on one
/// serial queue, which also answers D-Bus. A nonisolated type: handlers created here run on that
/// queue, never on the main actor (design brief, trap 1).
public final class TonearmService: @unchecked Sendable {
    // @unchecked: confined to `queue` (`start` builds it there; `startEngine` reads the immutable
    // `engine`; its handlers run there).
    private let queue: DispatchQueue
    private let logger: Logger
    private let lifecycle: Lifecycle
    private let connection: Connection
    private let engine: RemoteEngine
    private let player: Player
    private let mpris: MPRISService
    private var log: Subscription?
    private var sleepWatch: SleepWatch?
    private let store: StateStore
    private let recorder: StateRecorder
    private let resume: ResumeMode
    /// The formats GStreamer played when last asked, if nothing has changed since (issue 30).
    private let formats: FormatsCache
    private let cachedFormats: MediaCapabilities?

    /// Connects to the bus, takes the name, restores the saved state and publishes the player,
    /// all in one turn of `lifecycle.queue`, then lets GStreamer set itself up beside it.
    ///
    /// The name first (issue 11: start -> name owned), then the service, in the same turn of the
    /// service queue: libdbus's messages are dispatched on that queue only, so a call that comes
    /// once the name is owned waits in the socket until this turn ends, and its answer (the first
    /// GetAll) shows the restored queue. GStreamer's set-up (gst_init, seconds at a first start
    /// with no registry cache) is not in this turn: it runs on the engine's queue, and the formats
    /// it finds are announced when known (`engineStarted`).
    public static func start(_ configuration: ServiceConfiguration, lifecycle: Lifecycle, logger: Logger) throws -> TonearmService {
        let queue = lifecycle.queue
        let service = try queue.sync {
            let connection = try Connection(address: configuration.busAddress, queue: queue, logger: logger)
            let name = try MPRISService.takeName(on: connection, instance: configuration.instance)
            let store = StateStore(directory: StateStore.defaultDirectory(), instance: configuration.instance, logger: logger)
            let service = try TonearmService(connection: connection, name: name, configuration: configuration, store: store,
                                             lifecycle: lifecycle, logger: logger)
            try service.start(playing: configuration.items)
            return service
        }
        // With gst_init beside that turn, it, the bus daemon and the first caller shared 2 cores,
        // and the first answer came later (Benchmarks/starts.py, interleaved starts). With the
        // formats known from the cache, the engine's process starts only when something needs it:
        // a load (the restore's included), a tag read, a read of Outputs.
        if service.cachedFormats == nil { service.engine.start() }
        return service
    }

    private init(connection: Connection, name: String, configuration: ServiceConfiguration, store: StateStore,
                 lifecycle: Lifecycle, logger: Logger) throws {
        queue = lifecycle.queue
        self.lifecycle = lifecycle
        self.logger = logger
        self.store = store
        resume = configuration.resume
        self.connection = connection
        // read once for all that follows: each read builds a dictionary of every variable
        let environment = Environment.variables()
        formats = FormatsCache(directory: FormatsCache.defaultDirectory(environment: environment), environment: environment)
        cachedFormats = formats.load()
        // GStreamer runs in the engine's process, started when something needs it (RemoteEngine)
        engine = RemoteEngine(configuration: configuration.engine, logLevel: configuration.logLevel, environment: environment, logger: logger)
        player = Player(engine: engine, configuration: configuration.player, queue: queue, metadataReader: engine)
        var options = MPRISService.Options()
        options.instanceName = configuration.instance
        options.ownedName = name
        // known once the engine has read GStreamer's registry (engineStarted), unless cached
        options.formatsPending = cachedFormats == nil
        options.outputsPending = true
        options.onOutputsWanted = { [engine] in engine.start() }
        // saved queues live beside the saved state; each file keeps the id the saved state gave
        // it, and the active playlist comes back with the queue it filled
        options.playlists = PlaylistCatalog(directories: [PlaylistCatalog.musicPlaylists(environment: environment)] + (configuration.playlists.map { [$0] } ?? []),
                                            savedQueues: StateStore.defaultDirectory(environment: environment).appendingPathComponent("queues"),
                                            remembered: store.loadedPlaylists,
                                            onRecord: { [store] in store.record(.playlist($0)) }, logger: logger)
        options.restoredActivePlaylist = configuration.resume == .none ? nil : store.loadedActivePlaylist
        options.onActivePlaylistChanged = { [store] in store.record(.activePlaylist($0)) }
        mpris = try MPRISService(player: player, connection: connection, options: options, logger: logger)
        recorder = StateRecorder(player: player, store: store)
    }

    private func start(playing items: [String]) throws {
        lifecycle.whenStopping { [weak self] termination in self?.tearDown(for: termination) }
        connection.onDisconnect = { [lifecycle] error in lifecycle.stop(.busLost(reason: error.message)) }
        mpris.onQuit = { [lifecycle] in lifecycle.stop(.quit(reason: "a client asked to quit")) }
        // each engine process, once its set-up ran, on its reader thread (off the service queue)
        engine.whenReady { [weak self, queue] result in
            guard let service = self else { return }
            let formats = result.map { $0.1 }.mapError { $0 as any Error }
            if case .success(let capabilities) = formats, capabilities != service.cachedFormats {
                service.formats.save(capabilities)
            }
            queue.async { service.engineStarted(formats) }
        }
        // the outputs are watched by the engine's process: once it ended, a read of Outputs
        // starts one again and waits for its list
        engine.whenEnded { [mpris, queue] watchedOutputs in
            if watchedOutputs { queue.async { mpris.outputsNeedEngine() } }
        }
        if let saved = store.loaded, resume != .none {
            player.restore(saved, resume: resume)
            logger.info("restored \(saved.items.count) item(s) from \(store.path)", metadata: ["resume": "\(resume.rawValue)"])
        }
        // the places of long items are not the queue: kept whatever --resume says
        if !store.loadedPlaces.isEmpty { player.restorePlaces(store.loadedPlaces) }
        // engine commands, timers, state writes and log lines wait until the reply and the
        // PropertiesChanged of the call that caused them have left (make bench: PlayPause)
        let afterAnswer = AfterAnswer(connection: connection)
        player.deferUntilAnswered(with: afterAnswer.putOff)
        recorder.start(rewrite: store.loaded != nil && resume == .none)
        // the cached lists are the ones registered: nothing to announce
        if let cachedFormats { engineStarted(.success(cachedFormats)) }
        try mpris.start()
        watchSleep()
        log = player.subscribe { [logger, player] event in
            // a log line is a write to stderr, which may wake its reader (journald): after the answer
            player.whenAnswered { EventLog.line(for: event, logger: logger, player: player) }
        }
        if !items.isEmpty {
            // a folder is walked off this queue, which answers D-Bus from now on
            do {
                try mpris.open(items) { [lifecycle] error in
                    guard let error else { return }
                    lifecycle.stop(.openFailed(reason: "\(error)"))
                }
            } catch {
                lifecycle.stop(.openFailed(reason: "\(error)"))
            }
        }
    }

    /// The engine's set-up is done: the formats it plays are announced, and the calls that queue
    /// URIs, which waited for them, are answered. When GStreamer could not start, tonearmd says
    /// why and stops, leaving the saved state as it was.
    private func engineStarted(_ result: Result<MediaCapabilities, any Error>) {
        switch result {
        case .success(let capabilities):
            mpris.formatsKnown(uriSchemes: capabilities.supportedURISchemes, mimeTypes: capabilities.supportedMIMETypes,
                               resolve: { uri, limit, control throws(ResolveError) in
                                   try LocalFiles.resolve(uri, capabilities: capabilities, limit: limit, control: control)
                               })
        case .failure(let error):
            lifecycle.stop(.engineFailed(reason: "\(error)"))
        }
    }

    /// Pauses before the system sleeps and plays again after, when logind is there to say so
    /// (org.freedesktop.login1.Manager PrepareForSleep on the system bus).
    private func watchSleep() {
        let watch = SleepWatch(logger: logger)
        watch.start(address: SleepWatch.systemBusAddress) { [queue, player] sleeping in
            queue.async {
                if sleeping { player.interrupt(because: .systemSleep) } else { player.resume(because: .systemSleep) }
            }
        }
        sleepWatch = watch
    }

    /// What each end leaves behind: a quit saves what the user left it doing (before the
    /// shutdown's `Stopped`), says Stopped and releases the name; a lost bus saves it and can say
    /// nothing more; an engine that never started leaves the saved state as it was; an item on the
    /// command line that cannot play ends the start as a usage error does, touching nothing.
    private func tearDown(for termination: Termination) {
        switch termination {
        case .openFailed:
            break
        case .quit:
            recorder.finish()
            store.close()
            mpris.shutDown()
            connection.close()
        case .busLost:
            recorder.finish()
        case .engineFailed:
            store.close()
            mpris.shutDown()
            connection.close()
        }
        // the system bus connection closes with the process: its queue may still be connecting.
        // The engine's process takes its pipelines to NULL and exits before tonearmd does (the
        // player's stop above released them; a bus lost or failed engine stopped nothing).
        if case .openFailed = termination {} else {
            engine.finish(timeout: Self.exitWait)
        }
    }

    /// How long an ending tonearmd waits for the engine's process to take its pipelines to NULL
    /// and exit (a few ms as a rule).
    private static let exitWait: Duration = .seconds(2)
}

/// The service's scheduling around an answer: what a client's call causes that wakes another
/// thread (an engine command, a timer armed or cancelled, a state write, a log line) is put off
/// until the answer to that call has left, and then run on the thread that answered it. The
/// connection only says when a dispatch pass ends (`Connection.onPassEnded`); the list and the
/// yield are this policy's, not the D-Bus wrapper's (issue 37).
///
/// `@unchecked Sendable`: confined to the connection's queue (`putOff` and the hook run there).
final class AfterAnswer: @unchecked Sendable {
    // @unchecked: `work` is read and written on the connection's queue only.
    private let connection: Connection
    /// Work put off during the pass under way, oldest first.
    private var work: [() -> Void] = []

    /// Call on the connection's queue, after the object server is made: the `PropertiesChanged`
    /// of what a pass changed goes out at its end before this work runs (the object server's hook
    /// was added first).
    init(connection: Connection) {
        self.connection = connection
        connection.onPassEnded { [weak self] in self?.passEnded() }
    }

    /// Keeps `body` until the pass under way ends, and returns true; false (and `body` not kept)
    /// when no pass is under way: no call is being answered, so nothing needs to wait.
    /// (`Player.deferUntilAnswered`'s deferral.)
    func putOff(_ body: @escaping () -> Void) -> Bool {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        guard connection.isInPass else { return false }
        work.append(body)
        return true
    }

    /// Runs what the pass put off. The bus daemon, woken by the pass's writes with the kernel's
    /// sync hint for a Unix socket, waits on this core for this thread to sleep rather than taking
    /// the other: a yield lets it route the reply and signal first, not after the put-off work
    /// (perf sched, make bench: PlayPause -> PropertiesChanged waited 0.25-0.3 ms for it; e4da363).
    private func passEnded() {
        guard !work.isEmpty else { return }
        let due = work
        work = []
        sched_yield()
        due.forEach { $0() }
    }
}
