import Basics
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import PlayerModel

/// The player's engine in a process of its own, `tonearm-engine`, started when something needs
/// GStreamer (a load, a tag read, the formats or the outputs) and ended once nothing has been
/// loaded for `idleLimit`: tonearmd itself never loads GStreamer, so at rest and a few seconds
/// after Stop it is as small as it was before playing (issue 30), and a crash inside GStreamer
/// (a hostile file, a broken plugin) fails the item instead of ending the service.
///
/// Commands and reads are written to the process's stdin on `queue` (never the caller's thread:
/// the service queue answers D-Bus and must not wait on a full pipe); what it reports is read on a
/// thread of the process's own, asleep in read(2), which exists only while the process runs
/// (nothing polls), and handed to the handlers from there, in order. The settings that outlive a
/// pipeline (volume, ReplayGain, the equalizer, the output, the video's gravity...) are given
/// again to each new process before anything else.
public final class RemoteEngine: PlaybackEngine, MetadataReader, @unchecked Sendable {
    // @unchecked: the mutable state below is confined to `queue`, except what `lock` guards.
    public typealias ReadCompletion = @Sendable (Result<DiscoveredMedia, ItemError>) -> Void
    public typealias ReadyHandler = @Sendable (Result<(EngineSetUp, MediaCapabilities), EngineStartError>) -> Void

    /// How long the process stays once nothing is loaded and no read is pending.
    public static let idleLimit: Duration = .seconds(2)

    private let configuration: EngineConfiguration
    private let program: String
    private let arguments: [String]
    private let environment: [String]
    private let logger: Logger
    private let queue = DispatchQueue(label: "tonearm.engine-link")

    // confined to queue
    private var process: EngineProcess?
    /// The last setting of each kind, in the order they were last given (replayed to a new process).
    private var settings: [(key: String, command: EngineCommand)] = []
    /// A pipeline was asked for since the last release: the process must stay.
    private var loaded = false
    /// The generation the pipeline plays: the last load's, or the gapless next one's once it
    /// started. A process that ended unasked fails it.
    private var current: Generation?
    private var reads: [UInt64: ReadCompletion] = [:]
    /// The running process has not said yet whether GStreamer set itself up (the first gst_init
    /// with no registry cache takes seconds): it is not idle before.
    private var settingUp = false
    private var nextRead: UInt64 = 0
    private var idleTimer: (any DispatchSourceTimer)?

    // guarded by lock
    private let lock = Lock()
    private var eventHandler: (@Sendable (Generation, EngineEvent) -> Void)?
    private var readyHandler: ReadyHandler?
    private var endedHandler: (@Sendable (_ watchedOutputs: Bool) -> Void)?

    /// `program`: the engine's program (`tonearm-engine` beside the running one unless named);
    /// `environment`: the process's, as "NAME=value" (tonearmd's own: DISPLAY, the sound server's
    /// address, GStreamer's variables).
    public init(configuration: EngineConfiguration, program: String? = nil, logLevel: Logger.Level = .info,
                environment: [String: String] = Environment.variables(), logger: Logger) {
        self.configuration = configuration
        self.program = program ?? environment["TONEARM_ENGINE"].flatMap { $0.isEmpty ? nil : $0 } ?? Path.besideThisProgram("tonearm-engine")
        arguments = ["--log-level", logLevel.rawValue]
        self.environment = environment.map { "\($0.key)=\($0.value)" }
        self.logger = logger
    }

    // MARK: Handlers

    public func setEventHandler(_ handler: @escaping @Sendable (Generation, EngineEvent) -> Void) {
        lock.withLock { eventHandler = handler }
    }

    /// Runs `handler` each time an engine process has set GStreamer up (or failed to), on its
    /// reader thread: the formats it found can change between two processes (a plugin installed).
    public func whenReady(_ handler: @escaping ReadyHandler) {
        lock.withLock { readyHandler = handler }
    }

    /// Runs `handler` each time a process ended, whether asked to or not, with whether it watched
    /// the output devices (their list is not kept up to date until another one starts).
    public func whenEnded(_ handler: @escaping @Sendable (_ watchedOutputs: Bool) -> Void) {
        lock.withLock { endedHandler = handler }
    }

    // MARK: Commands

    /// Starts the process if it is not running (GStreamer's set-up: the formats, the outputs).
    public func start() {
        queue.async { [self] in
            _ = running()
            armIdleTimer()
        }
    }

    public func perform(_ command: EngineCommand) {
        queue.async { [self] in
            if let key = Self.settingKey(command) {
                settings.removeAll { $0.key == key }
                settings.append((key, command))
                process?.send(.command(command))
                return
            }
            switch command {
            case .load(_, let generation):
                loaded = true
                current = generation
            case .prepareNext(.some, _), .crossfade(.prepare):
                loaded = true
            case .release:
                loaded = false
            default:
                break
            }
            // without a pipeline the engine ignores the rest: no process is started for them
            if loaded || process != nil { running()?.send(.command(command)) }
            armIdleTimer()
        }
    }

    public func read(_ uri: MediaURI, completion: @escaping ReadCompletion) {
        queue.async { [self] in
            nextRead &+= 1
            let number = nextRead
            guard let process = running() else {
                completion(.failure(ItemError(.other, "cannot read \(uri): the engine did not start")))
                return
            }
            reads[number] = completion
            process.send(.read(number, uri))
            armIdleTimer()
        }
    }

    /// Ends the process and waits, at most `timeout`, for it to release its pipelines and exit.
    /// For tonearmd's exit only (it waits).
    @discardableResult
    public func finish(timeout: Duration) -> Bool {
        let ending = queue.sync { () -> EngineProcess? in
            idleTimer?.cancel()
            idleTimer = nil
            defer { process = nil }
            process?.closeInput()
            return process
        }
        return ending?.waitForEnd(timeout: timeout) ?? true
    }

    /// The settings a new process is given again: what the engine keeps from one pipeline to the
    /// next. nil: a command about the pipeline of the moment.
    static func settingKey(_ command: EngineCommand) -> String? {
        switch command {
        case .setVolume: "volume"
        case .setMuted: "muted"
        case .fade: "fade"
        case .setOutput: "output"
        case .audio(.replayGain), .audio(.replayGainOff): "replayGain"
        case .audio(.nextAlbumMode): "nextAlbumMode"
        case .audio(.equalizer): "equalizer"
        case .video(.setGravity): "gravity"
        case .video(.setPictureInPicture): "pictureInPicture"
        case .video(.setFullscreen): "fullscreen"
        default: nil
        }
    }

    // MARK: The process

    /// The running process, started (and given the configuration and the settings) if none runs;
    /// nil when it cannot start.
    private func running() -> EngineProcess? {
        dispatchPrecondition(condition: .onQueue(queue))
        if let process { return process }
        do {
            let started = try EngineProcess.start(program, arguments, environment: environment) { [weak self] process, report in
                self?.received(report, from: process)
            } ended: { [weak self] process, status in
                self?.ended(process, status: status)
            }
            started.send(.configure(configuration))
            settingUp = true
            for setting in settings { started.send(.command(setting.command)) }
            process = started
            logger.debug("engine process started", metadata: ["pid": "\(started.pid)"])
            return started
        } catch {
            logger.error("cannot start the engine's program \(program): \(error)")
            lock.withLock { readyHandler }?(.failure(EngineStartError(message: "cannot start \(program): \(error)")))
            return nil
        }
    }

    /// While nothing is loaded and no read is pending, the process ends `idleLimit` after the last
    /// command: a timer that exists only then.
    private func armIdleTimer() {
        dispatchPrecondition(condition: .onQueue(queue))
        idleTimer?.cancel()
        idleTimer = nil
        guard process != nil, !loaded, reads.isEmpty, !settingUp else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .nanoseconds(Int(Self.idleLimit.nanoseconds)), leeway: .milliseconds(100))
        timer.setEventHandler { [weak self] in
            guard let self, !loaded, reads.isEmpty, !settingUp, let process else { return }
            idleTimer?.cancel()
            idleTimer = nil
            logger.debug("engine process idle: ending it", metadata: ["pid": "\(process.pid)"])
            process.closeInput()  // it releases what it holds and exits; its end is reported as asked
            self.process = nil
        }
        idleTimer = timer
        timer.activate()
    }

    /// A line of the process, on its reader thread.
    private func received(_ report: EngineReport, from process: EngineProcess) {
        switch report {
        case .ready(let setUp, let capabilities):
            lock.withLock { readyHandler }?(.success((setUp, capabilities)))
            setUpEnded(by: process)
        case .failedToStart(let message):
            lock.withLock { readyHandler }?(.failure(EngineStartError(message: message)))
            setUpEnded(by: process)
        case .event(let generation, let event):
            process.note(event)
            if case .streamStarted = event { queue.async { [self] in if loaded { current = generation } } }
            lock.withLock { eventHandler }?(generation, event)
        case .readDone(let number, let media):
            queue.async { [self] in
                reads.removeValue(forKey: number)?(.success(media))
                armIdleTimer()
            }
        case .readFailed(let number, let error):
            queue.async { [self] in
                reads.removeValue(forKey: number)?(.failure(error))
                armIdleTimer()
            }
        }
    }

    private func setUpEnded(by reporting: EngineProcess) {
        queue.async { [self] in
            guard process === reporting else { return }
            settingUp = false
            armIdleTimer()
        }
    }

    /// The process ended, on its reader thread, after its last line. Unasked (it crashed, or was
    /// killed), the item it played fails and its window is gone; its pending reads fail.
    private func ended(_ ended: EngineProcess, status: Int32) {
        let (shown, watched) = ended.noted
        queue.async { [self] in
            let unasked = process === ended
            if unasked {
                process = nil
                settingUp = false
                idleTimer?.cancel()
                idleTimer = nil
                logger.error("the engine process ended unexpectedly", metadata: ["pid": "\(ended.pid)", "status": "\(Self.describe(status))"])
            }
            let failed = reads
            reads = [:]
            let error = ItemError(.other, "the engine process ended (\(Self.describe(status)))")
            for completion in failed.values { completion(.failure(error)) }
            let handler = lock.withLock { eventHandler }
            // the window program ends with the process that started it (its stdin closes)
            if shown { handler?(current ?? Generation(0), .video(.windowGone)) }
            if unasked, loaded, let current { handler?(current, .failed(error)) }
            if unasked { loaded = false }
            lock.withLock { endedHandler }?(watched)
        }
    }

    private static func describe(_ status: Int32) -> String {
        status > 128 ? "signal \(status - 128)" : "exit status \(status)"
    }
}

/// Why the engine could not set GStreamer up (or could not start at all).
public struct EngineStartError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

/// One run of the engine's program: its stdin written, its stdout read on a thread of its own.
final class EngineProcess: @unchecked Sendable {
    // @unchecked: `child` is immutable; the rest is guarded by `condition`.
    private let child: ChildProcess
    private let condition = Condition()
    private var inputOpen = true
    private var hasEnded = false
    /// Its video window is open.
    private var windowShown = false
    /// It reported the output devices: it watches them (a sound server's sink).
    private var watchesOutputs = false
    var pid: pid_t { child.pid }

    private init(child: ChildProcess) {
        self.child = child
    }

    static func start(_ program: String, _ arguments: [String], environment: [String],
                      received: @escaping @Sendable (EngineProcess, EngineReport) -> Void,
                      ended: @escaping @Sendable (EngineProcess, Int32) -> Void) throws(SystemErrno) -> EngineProcess {
        let process = EngineProcess(child: try ChildProcess.spawn(program, arguments, environment: environment))
        detachThread(name: "tonearm.engine-read") {
            var lines = EngineWire.Lines()
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = Files.read(process.child.output, into: &buffer)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                for line in lines.append(buffer[..<count]) {
                    if let report = try? EngineWire.decode(EngineReport.self, from: line) { received(process, report) }
                }
            }
            close(process.child.output)
            let status = process.child.wait()
            process.condition.withLock {
                process.hasEnded = true
                if process.inputOpen { close(process.child.input) }
                process.inputOpen = false
                process.condition.broadcast()
            }
            ended(process, status)
        }
        return process
    }

    /// Keeps what a new process must be told about this one once it ended.
    func note(_ event: EngineEvent) {
        condition.withLock {
            switch event {
            case .outputs: watchesOutputs = true
            case .video(.windowOpened): windowShown = true
            case .video(.windowGone): windowShown = false
            default: break
            }
        }
    }

    var noted: (windowShown: Bool, watchesOutputs: Bool) { condition.withLock { (windowShown, watchesOutputs) } }

    /// Writes one request (a closed pipe: the process ended, and its end is reported by the reader).
    func send(_ request: EngineRequest) {
        guard let line = EngineWire.line(request) else { return }
        condition.withLock {
            guard inputOpen else { return }
            Files.writeAll(line, to: child.input)
        }
    }

    /// The process's stdin ends: it releases its pipelines and exits.
    func closeInput() {
        condition.withLock {
            guard inputOpen else { return }
            inputOpen = false
            close(child.input)
        }
    }

    func waitForEnd(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        return condition.withLock {
            while !hasEnded {
                if !condition.wait(until: deadline) { return hasEnded }
            }
            return true
        }
    }
}
