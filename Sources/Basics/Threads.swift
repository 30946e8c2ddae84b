import CShims
import Glibc

// What NSLock, NSCondition and Thread gave us, over pthreads: they are Foundation proper, which
// brings FoundationInternationalization and ICU's data with it (37 of the 61 MB of a statically
// linked tonearmd, swift 6.3.1).

/// A mutual-exclusion lock. Not recursive: taking it twice on one thread deadlocks.
public final class Lock: @unchecked Sendable {
    // @unchecked: the mutex is the synchronisation itself; it is never moved (allocated once).
    fileprivate let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` holding the lock.
    public func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A lock with a condition variable: `wait(until:)` while some state guarded by it is not yet as
/// wanted, `broadcast()` after changing that state.
public final class Condition: @unchecked Sendable {
    // @unchecked: the mutex and the condition are the synchronisation; allocated once, never moved.
    private let lock = Lock()
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        // the monotonic clock: a deadline stays a deadline when the wall clock is set
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
    }

    /// Runs `body` holding the lock; `wait(until:)` and `broadcast()` are called inside it.
    public func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try lock.withLock(body)
    }

    /// Releases the lock until `broadcast()` or `deadline`, then holds it again. False when the
    /// deadline passed. Call it holding the lock, in a loop that checks the state it waits for
    /// (a wake-up may come without a broadcast).
    public func wait(until deadline: ContinuousClock.Instant) -> Bool {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return false }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let (seconds, attoseconds) = left.components
        var nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
        var end = timespec(tv_sec: now.tv_sec + Int(seconds) + nanoseconds / 1_000_000_000, tv_nsec: 0)
        nanoseconds %= 1_000_000_000
        end.tv_nsec = nanoseconds
        return pthread_cond_timedwait(condition, lock.mutex, &end) == 0
    }

    /// Wakes every thread waiting in `wait(until:)`. Call it holding the lock.
    public func broadcast() { pthread_cond_broadcast(condition) }
}

/// Runs `body` on a new thread of its own named `name` (at most 15 bytes of it show),
/// detached: nothing waits for it to end.
public func detachThread(name: String, _ body: @escaping @Sendable () -> Void) {
    let start = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
    var thread = pthread_t()
    let started = pthread_create(&thread, nil, { argument in
        let start = Unmanaged<ThreadStart>.fromOpaque(argument!).takeRetainedValue()
        setThreadName(start.name)
        start.body()
        return nil
    }, start)
    // without a thread the work cannot run at all: as Thread.start() does, stop here
    precondition(started == 0, "pthread_create failed: \(started)")
    pthread_detach(thread)
}

/// What a new thread runs, handed to it through pthread_create's one pointer.
private final class ThreadStart {
    let name: String
    let body: @Sendable () -> Void
    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}

/// Names the calling thread (`tonearm_set_thread_name`: pthread_setname_np is hidden from Swift);
/// the kernel keeps 15 bytes of a name.
private func setThreadName(_ name: String) {
    _ = tonearm_set_thread_name(name)
}
