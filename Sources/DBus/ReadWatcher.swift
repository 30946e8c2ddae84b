import Basics
import CDBus
import CShims
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Waits for the connection's descriptor to become readable on a thread of its own, blocked in
/// poll(2), and runs `handler` with `queue.sync`. On an idle serial queue dispatch_sync runs the
/// block on the calling thread, so a message costs one thread wake-up; a dispatch read source costs
/// two (libdispatch's event thread wakes, then wakes a worker for the queue), which made the round
/// trip of a Get about twice the libdbus echo floor's (make bench). Still no timeout and no polling:
/// the thread sleeps in poll until a message or a change of its own state comes.
///
/// `@unchecked Sendable`: `enabled` and `cancelled` are written on the queue and read by the thread,
/// both under `lock`; `handler` runs only on the queue.
final class ReadWatcher: WatchSource, @unchecked Sendable {
    private let fd: Int32
    /// An eventfd that wakes the thread from poll when `enabled` or `cancelled` changes.
    private let wake: Int32
    private let queue: DispatchQueue
    private let handler: () -> Void
    private let finished: @Sendable () -> Void
    private let lock = Lock()
    private var enabled = false
    private var cancelled = false

    /// Starts the thread, disabled; nil when no eventfd can be made. `finished` runs on the thread
    /// once it has stopped looking at `fd` (after `cancel`).
    init?(fd: Int32, queue: DispatchQueue, handler: @escaping () -> Void, finished: @escaping @Sendable () -> Void) {
        wake = tonearm_eventfd()
        guard wake >= 0 else { return nil }
        self.fd = fd
        self.queue = queue
        self.handler = handler
        self.finished = finished
        detachThread(name: "tonearm.dbus-read") { [self] in run() }
    }

    var isEnabled: Bool { locked { enabled } }

    func setEnabled(_ enabled: Bool) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard locked({ () -> Bool in
            defer { self.enabled = enabled }
            return self.enabled != enabled
        }) else { return }
        poke()
    }

    func cancel() {
        dispatchPrecondition(condition: .onQueue(queue))
        locked { cancelled = true }
        poke()
    }

    private func locked<T>(_ body: () -> T) -> T { lock.withLock(body) }

    private func poke() {
        var one: UInt64 = 1
        _ = write(wake, &one, MemoryLayout<UInt64>.size)
    }

    private func run() {
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        while true {
            let (enabled, cancelled) = locked { (self.enabled, self.cancelled) }
            if cancelled { break }
            fds[0].fd = enabled ? fd : -1  // poll(2) ignores a negative descriptor
            fds[0].revents = 0
            fds[1].revents = 0
            guard poll(&fds, 2, -1) >= 0 else {
                if errno == EINTR { continue }
                break  // EFAULT or EINVAL: nothing to wait for any more
            }
            if fds[1].revents != 0 {
                var count: UInt64 = 0
                _ = read(wake, &count, MemoryLayout<UInt64>.size)
            }
            // readable, or hung up / in error: libdbus reads and finds out which
            if enabled, fds[0].revents != 0 {
                queue.sync { handler() }
            }
        }
        close(wake)
        finished()
    }
}
