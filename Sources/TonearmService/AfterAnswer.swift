import DBus
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

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
