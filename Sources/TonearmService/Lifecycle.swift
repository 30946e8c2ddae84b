import Basics
import Dispatch
import Glibc
import Logging

/// Why tonearmd ends, and the exit status each end has: the one place that maps them.
public enum Termination: Sendable, Equatable {
    /// SIGTERM, SIGINT or a client's `Quit`: what the user left is saved, `Stopped` is said, the
    /// name is released. Status 0.
    case quit(reason: String)
    /// The session bus connection went away. Status 69 (EX_UNAVAILABLE, sysexits.h): not a crash,
    /// and systemd's `Restart=on-failure` starts tonearmd again.
    case busLost(reason: String)
    /// GStreamer could not be set up (a pipeline element missing, a sink description that does not
    /// parse). Status 1; the saved state is left as it was.
    case engineFailed(reason: String)
    /// An item given on the command line cannot be played. Status 2, as a usage error.
    case openFailed(reason: String)

    public var status: Int32 {
        switch self {
        case .quit: 0
        case .busLost: 69
        case .engineFailed: 1
        case .openFailed: 2
        }
    }
}

/// tonearmd's life after its start: SIGTERM and SIGINT watched (from before the bus name is
/// taken), one `stop` that tears the service down for the reason given and ends the process with
/// that reason's status, and `run`, which gives the main thread to Dispatch.
///
/// swift-service-lifecycle's `ServiceGroup` is not used: it drives services from Swift
/// concurrency's cooperative pool, while everything here runs on one serial DispatchQueue woken by
/// the bus's and libdbus's file descriptors (design brief, "one serial executor"); the pool would
/// add its threads and their start for the same three ends this type handles.
public final class Lifecycle: @unchecked Sendable {
    // @unchecked: `teardown` and `stopping` are used on `queue` only (the signal sources' handlers
    // run there, and `stop` checks it).
    public let queue: DispatchQueue
    private let logger: Logger
    private let exit: @Sendable (Int32) -> Void
    private var sources: [any DispatchSourceSignal] = []
    private var teardown: ((Termination) -> Void)?
    private var stopping = false

    /// `exit` ends the process (tests pass one that records the status instead).
    public init(queue: DispatchQueue, logger: Logger, exit: @escaping @Sendable (Int32) -> Void = { Glibc.exit($0) }) {
        self.queue = queue
        self.logger = logger
        self.exit = exit
    }

    /// Turns SIGTERM and SIGINT into a `stop(.quit)` on the queue. Call before the bus name is
    /// taken: a signal that comes while the service is built is handled once it is.
    public func watchSignals() {
        for signal in [SIGTERM, SIGINT] {
            Glibc.signal(signal, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signal, queue: queue)
            source.setEventHandler { [unowned self] in
                stop(.quit(reason: signal == SIGTERM ? "SIGTERM" : "SIGINT"))
            }
            source.resume()
            sources.append(source)
        }
        // a file-size limit (ulimit -f) makes a write fail with EFBIG instead of killing the
        // process with SIGXFSZ (setrlimit(2), RLIMIT_FSIZE): the store says so and goes on
        Glibc.signal(SIGXFSZ, SIG_IGN)
        // a write to the pipe of a program that ended (the engine's process, killed or crashed)
        // fails with EPIPE instead of ending tonearmd with SIGPIPE (pipe(7)); libdbus's own writes
        // to the bus pass MSG_NOSIGNAL
        Glibc.signal(SIGPIPE, SIG_IGN)
    }

    /// What `stop` runs before the process ends: the service's teardown for that reason.
    public func whenStopping(_ teardown: @escaping (Termination) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        self.teardown = teardown
    }

    /// Ends tonearmd for `termination`: logs it, runs the teardown once, exits with its status
    /// (does not return, but for a test's `exit`).
    public func stop(_ termination: Termination) {
        dispatchPrecondition(condition: .onQueue(queue))
        switch termination {
        case .quit(let reason): logger.info("quitting: \(reason)")
        case .busLost(let reason): logger.critical("lost the session bus connection (\(reason)): tonearmd stops (exit status 69)")
        case .engineFailed(let reason): logger.critical("GStreamer could not start: \(reason): tonearmd stops (exit status 1)")
        case .openFailed(let reason): logger.error("\(reason)")
        }
        if !stopping {
            stopping = true
            teardown?(termination)
        }
        exit(termination.status)
    }

    /// Gives the main thread to Dispatch for good; the queue's work runs from here on.
    public func run() -> Never {
        // Under AddressSanitizer (make test-asan) only: dispatchMain ends the main thread with
        // pthread_exit, so its frames' redzones stay marked, and libdispatch's signal thread,
        // which then runs on that stack, had its SIGTERM handler reported as a
        // dynamic-stack-buffer-overflow in _dispatch_sigmask (62 reports in a run)
        ProcessStack.forgetAbandonedFrames()
        dispatchMain()
    }
}
