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
///
/// The link is loud: a line that cannot be written or read, or an engine of another protocol
/// version, ends that engine and fails its item with the reason. And it is watched
/// (`EngineWatch`): every command is answered from the engine's queue, and while an item plays
/// the engine is asked its position now and then; an engine that does not answer within its
/// bound, or whose playing file stands still, is killed, its item fails with `engineStalled`,
/// and the next command starts a new one (a load it never answered is given to the new one, once).
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
    /// The tag reads under way, with the process that reads each (one that ends fails its own).
    private var reads: [UInt64: (process: EngineProcess, completion: ReadCompletion)] = [:]
    /// The commands the running process has not answered yet, numbered, oldest first: what a
    /// stalled engine's load is given again from.
    private var unanswered: [(number: UInt64, command: EngineCommand)] = []
    private var nextCommand: UInt64 = 0
    /// The running process's watchdog, and the timer at its next look (only while it waits for
    /// an answer or an item plays).
    private var watch: EngineWatch?
    private var watchTimer: (any DispatchSourceTimer)?
    private let bounds: EngineWatch.Bounds
    /// Loads given again to a new engine after the one they were sent to stalled: each at most
    /// once (a file that wedges GStreamer every time fails the second time).
    private var replayed: Set<Generation> = []
    /// The running process has not said yet whether GStreamer set itself up (the first gst_init
    /// with no registry cache takes seconds): it is not idle before. Its watch knows.
    private var settingUp: Bool { watch?.settingUp ?? false }
    private var nextRead: UInt64 = 0
    private var idleTimer: (any DispatchSourceTimer)?

    // guarded by lock
    private let lock = Lock()
    private var eventHandler: (@Sendable (Generation, EngineEvent) -> Void)?
    private var readyHandler: ReadyHandler?
    private var endedHandler: (@Sendable (_ watchedOutputs: Bool) -> Void)?

    /// `program`: the engine's program (`tonearm-engine` beside the running one unless named);
    /// `environment`: tonearmd's; the engine gets the part `SpawnEnvironment.forEngine` keeps of it
    /// (DISPLAY, the sound server's address, GStreamer's variables; not the bus's, not the session's
    /// secrets).
    public init(configuration: EngineConfiguration, program: String? = nil, logLevel: Logger.Level = .info,
                environment: [String: String] = Environment.variables(), logger: Logger) {
        self.configuration = configuration
        bounds = EngineWatch.Bounds.fromEnvironment(environment)
        self.program = program ?? environment["TONEARM_ENGINE"].flatMap { $0.isEmpty ? nil : $0 } ?? Path.besideThisProgram("tonearm-engine")
        arguments = EngineOptions(logLevel: logLevel).arguments
        self.environment = SpawnEnvironment.forEngine(environment).map { "\($0.key)=\($0.value)" }
        self.logger = logger
        // said once here rather than by every engine: each reads the setting from the environment
        // it is given (SpawnEnvironment's TONEARM_ prefix) and keeps quiet about it
        if EngineSandbox.inEngine(environment) == .off {
            logger.warning("\(EngineSandbox.variable)=off: the engine runs without its system-call filter and its Landlock rules, for debugging only (docs/sandbox.md)")
        }
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
                if let process { send(command, to: process) }
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
            if loaded || process != nil, let process = running() { send(command, to: process) }
            armIdleTimer()
        }
    }

    /// Writes `command` to `process`, numbered, and watches for its answer.
    private func send(_ command: EngineCommand, to process: EngineProcess) {
        dispatchPrecondition(condition: .onQueue(queue))
        nextCommand &+= 1
        unanswered.append((nextCommand, command))
        watch?.sent(command, number: nextCommand, at: .now)
        process.send(.command(nextCommand, command))
        rearmWatch()
    }

    public func read(_ uri: MediaURI, completion: @escaping ReadCompletion) {
        queue.async { [self] in
            nextRead &+= 1
            let number = nextRead
            guard let process = running() else {
                completion(.failure(ItemError(.other, "cannot read \(uri): the engine did not start")))
                return
            }
            reads[number] = (process, completion)
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
            stopWatching()
            watch = nil
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
            let started = try EngineProcess.start(program, arguments, environment: environment, logger: logger) { [weak self] process, report in
                self?.received(report, from: process)
            } ended: { [weak self] process, status in
                self?.ended(process, status: status)
            }
            started.send(.hello(version: EngineWire.version))
            started.send(.configure(configuration))
            process = started
            unanswered = []
            watch = EngineWatch(bounds: bounds, at: .now)
            for setting in settings { send(setting.command, to: started) }
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
            watch = nil
            stopWatching()
        }
        idleTimer = timer
        timer.activate()
    }

    /// A line of the process, on its reader thread.
    private func received(_ report: EngineReport, from process: EngineProcess) {
        switch report {
        case .hello(let version):
            // the process's first line, checked by `EngineProcess` before any other is taken
            logger.debug("engine link", metadata: ["pid": "\(process.pid)", "version": "\(version)"])
        case .refused(let reason):
            // it exits after this line: its end fails its item with the reason
            logger.error("the engine refused a request: \(reason)")
            process.broke(reason)
        case .done(let number):
            queue.async { [self] in answered(through: number, by: process) }
        case .probed(let number, let position):
            queue.async { [self] in
                guard self.process === process, watch != nil else { return }
                answered(through: number, by: process)
                if case .stalled(let reason)? = watch?.probed(number, position: position, at: .now) { stalled(reason) }
            }
        case .waiting(let what, let bound):
            queue.async { [self] in
                guard self.process === process else { return }
                logger.debug("the engine waits for \(what)", metadata: ["at most": "\(bound)"])
                watch?.waiting(bound: bound, at: .now)
                rearmWatch()
            }
        case .ready(let setUp, let capabilities):
            lock.withLock { readyHandler }?(.success((setUp, capabilities)))
            setUpEnded(by: process)
        case .failedToStart(let message):
            lock.withLock { readyHandler }?(.failure(EngineStartError(message: message)))
            setUpEnded(by: process)
        case .event(let generation, let event):
            process.note(event)
            if case .streamStarted = event { queue.async { [self] in if loaded { current = generation } } }
            if EngineWatch.watches(event) {
                queue.async { [self] in
                    guard self.process === process else { return }
                    watch?.observed(event, at: .now)
                    rearmWatch()
                }
            }
            lock.withLock { eventHandler }?(generation, event)
        case .readDone(let number, let media):
            queue.async { [self] in
                reads.removeValue(forKey: number)?.completion(.success(media))
                armIdleTimer()
            }
        case .readFailed(let number, let error):
            queue.async { [self] in
                reads.removeValue(forKey: number)?.completion(.failure(error))
                armIdleTimer()
            }
        }
    }

    private func setUpEnded(by reporting: EngineProcess) {
        queue.async { [self] in
            guard process === reporting else { return }
            watch?.setUpEnded(at: .now)
            rearmWatch()
            armIdleTimer()
        }
    }

    // MARK: The watchdog

    private func answered(through number: UInt64, by answering: EngineProcess) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard process === answering else { return }
        unanswered.removeAll { $0.number <= number }
        watch?.answered(through: number, at: .now)
        rearmWatch()
    }

    /// The one timer of the watch, at its next look; none when it has nothing to look at.
    private func rearmWatch() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let wakeUp = watch?.wakeUp else { return stopWatching() }
        let timer = watchTimer ?? {
            let made = DispatchSource.makeTimerSource(queue: queue)
            made.setEventHandler { [weak self] in self?.look() }
            made.activate()
            watchTimer = made
            return made
        }()
        let left = max(wakeUp - .now, .zero)
        timer.schedule(deadline: .now() + .nanoseconds(Int(left.nanoseconds)), leeway: .milliseconds(50))
    }

    private func stopWatching() {
        watchTimer?.cancel()
        watchTimer = nil
    }

    private func look() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let process, let action = watch?.check(at: .now) else { return rearmWatch() }
        switch action {
        case .probe:
            nextCommand &+= 1
            watch?.sentProbe(number: nextCommand, at: .now)
            process.send(.probe(nextCommand))
            rearmWatch()
        case .stalled(let reason):
            stalled(reason)
        }
    }

    /// The engine did not answer in time, or its playing file stood still: it is killed (its end,
    /// as asked, fails its reads and closes its window), and its item fails; a load it never
    /// answered goes to a new engine instead, once.
    private func stalled(_ reason: String) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let stalledProcess = process else { return }
        logger.error("the engine stalled: \(reason); ending it", metadata: ["pid": "\(stalledProcess.pid)"])
        process = nil
        watch = nil
        stopWatching()
        stalledProcess.kill()
        let left = unanswered
        unanswered = []
        if let index = left.lastIndex(where: { if case .load = $0.command { true } else { false } }),
           case .load(let uri, let generation) = left[index].command, !replayed.contains(generation) {
            replayed.insert(generation)
            logger.notice("the load of \(uri.displayName) goes to a new engine")
            guard let fresh = running() else { return }
            for command in left[index...].map(\.command) where Self.settingKey(command) == nil { send(command, to: fresh) }
            return
        }
        if loaded, let current {
            let error = ItemError(.engineStalled, "the engine stalled (\(reason)) and was ended; the next item starts a new one")
            lock.withLock { eventHandler }?(current, .failed(error))
        }
        loaded = false
        armIdleTimer()
    }

    /// The process ended, on its reader thread, after its last line. Unasked (it crashed, or was
    /// killed), the item it played fails and its window is gone; its pending reads fail.
    private func ended(_ ended: EngineProcess, status: Int32) {
        let (shown, watched) = ended.noted
        let broken = ended.breakage
        queue.async { [self] in
            let unasked = process === ended
            if unasked {
                process = nil
                    idleTimer?.cancel()
                idleTimer = nil
                watch = nil
                unanswered = []
                stopWatching()
                logger.error("the engine process ended unexpectedly", metadata: ["pid": "\(ended.pid)", "status": "\(Self.describe(status))"])
            }
            if let broken, broken.beforeReady {
                // an engine of another version, or one that cannot say it is set up: as a set-up that failed
                lock.withLock { readyHandler }?(.failure(EngineStartError(message: broken.reason)))
            }
            let failed = reads.filter { $0.value.process === ended }
            for number in failed.keys { reads[number] = nil }
            let error = ItemError(.other, broken.map { "the engine's link broke: \($0.reason)" } ?? "the engine process ended (\(Self.describe(status)))")
            for read in failed.values { read.completion(.failure(error)) }
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
    // @unchecked: `child` and `logger` are immutable; the rest is guarded by `condition`.
    private let child: ChildProcess
    private let logger: Logger
    private let condition = Condition()
    private var inputOpen = true
    private var hasEnded = false
    /// Its stdout ended and it is being reaped: its pid may not be signalled any more.
    private var reaping = false
    /// Its video window is open.
    private var windowShown = false
    /// It reported the output devices: it watches them (a sound server's sink).
    private var watchesOutputs = false
    /// It said whether GStreamer set itself up.
    private var readyHeard = false
    /// Why its link broke, if it did (it is killed then), and whether before it said it was set up.
    var breakage: (reason: String, beforeReady: Bool)? { condition.withLock { broken } }
    private var broken: (reason: String, beforeReady: Bool)?
    var pid: pid_t { child.pid }

    private init(child: ChildProcess, logger: Logger) {
        self.child = child
        self.logger = logger
    }

    static func start(_ program: String, _ arguments: [String], environment: [String], logger: Logger,
                      received: @escaping @Sendable (EngineProcess, EngineReport) -> Void,
                      ended: @escaping @Sendable (EngineProcess, Int32) -> Void) throws(SystemErrno) -> EngineProcess {
        let process = EngineProcess(child: try ChildProcess.spawn(program, arguments, environment: environment), logger: logger)
        detachThread(name: "tonearm.engine-read") {
            var lines = EngineWire.Lines()
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            var greeted = false
            reading: while true {
                let count = Files.read(process.child.output, into: &buffer)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                for line in lines.append(buffer[..<count]) {
                    let report: EngineReport
                    do throws(LinkError) {
                        report = try EngineWire.decode(EngineReport.self, from: line)
                    } catch {
                        // nothing after a line that cannot be read can be trusted: the engine goes
                        process.broke(greeted ? error.message : "\(program) does not speak the engine link (\(error.message))")
                        break reading
                    }
                    if !greeted {
                        guard case .hello(let version) = report, version == EngineWire.version else {
                            let theirs = if case .hello(let version) = report { "version \(version)" } else { "no version" }
                            process.broke("\(program) speaks the engine link's protocol \(theirs), this tonearmd version \(EngineWire.version): install both from one build")
                            break reading
                        }
                        greeted = true
                    }
                    if case .ready = report { process.condition.withLock { process.readyHeard = true } }
                    if case .failedToStart = report { process.condition.withLock { process.readyHeard = true } }
                    received(process, report)
                }
            }
            // a broken link's process was killed; what it still writes is not read
            close(process.child.output)
            process.condition.withLock { process.reaping = true }
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

    /// Writes one request. A closed pipe: the process ended, and its end is reported by the
    /// reader. A request that cannot be written, or a pipe that fails otherwise, breaks the link.
    func send(_ request: EngineRequest) {
        let line: [UInt8]
        do throws(LinkError) {
            line = try EngineWire.line(request)
        } catch {
            return broke(error.message)
        }
        let failure: Int32? = condition.withLock {
            guard inputOpen else { return nil }
            return Files.writeAll(line, to: child.input) ? nil : errno
        }
        if let failure, failure != EPIPE {
            broke("cannot write to the engine: \(String(cString: strerror(failure)))")
        }
    }

    /// The link broke: logged with why, and the process killed; its end fails its item with
    /// `reason` (the first reason stands).
    func broke(_ reason: String) {
        let first = condition.withLock { () -> Bool in
            guard broken == nil else { return false }
            broken = (reason, !readyHeard)
            return true
        }
        guard first else { return }
        logger.error("the engine's link broke: \(reason); ending it", metadata: ["pid": "\(pid)"])
        kill()
    }

    /// SIGKILL, unless it is already being reaped (its pid could be another process's by then).
    /// A stopped process (SIGSTOP, or a debugger) dies of it too.
    func kill() {
        condition.withLock {
            guard !reaping else { return }
            _ = Glibc.kill(child.pid, SIGKILL)
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
