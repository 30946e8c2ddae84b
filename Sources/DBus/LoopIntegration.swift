import CDBus
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Drives one `DBusConnection` from DispatchSources on one serial queue: no thread, no polling, no timer
/// while idle (libdbus creates timeouts only for pending calls).
///
/// libdbus calls the add/remove/toggle, wakeup and dispatch-status functions synchronously from inside
/// its own functions, sometimes with the connection lock held, so they never call back into libdbus on
/// the connection: they create, suspend, resume or cancel sources, or `queue.async` a dispatch. The
/// sources' handlers run later on the queue and call `dbus_watch_handle` / `dbus_timeout_handle`.
///
/// `@unchecked Sendable`: all state is confined to `queue` (libdbus is only ever called on it).
final class LoopIntegration: @unchecked Sendable {
    let queue: DispatchQueue
    /// The connection to dispatch after I/O. Weak: the connection owns libdbus, which owns us.
    weak var connection: Connection?
    private var watches: [OpaquePointer: WatchSources] = [:]
    private var timeouts: [OpaquePointer: TimeoutSource] = [:]
    private var dispatchScheduled = false
    /// True while a watch's event is handled: the dispatch pass that follows takes what libdbus read,
    /// so a wake-up or "data remains" from inside `dbus_watch_handle` (libdbus calls both for every
    /// message it queues: _dbus_connection_queue_received_message_link) needs no pass of its own:
    /// one queue hop and one thread wake-up less per message.
    private var handlingWatch = false
    /// Entered for every source made, left by its cancel handler: notifies once every source is
    /// cancelled for good (see `whenCancelled`).
    private let liveSources = DispatchGroup()

    init(queue: DispatchQueue) { self.queue = queue }

    /// Installs the callbacks (`dbus_connection_set_watch_functions`, `set_timeout_functions`,
    /// `set_wakeup_main_function`, `set_dispatch_status_function`). libdbus holds one retain of `self`
    /// per installation and releases it through `releaseIntegration` when the functions are replaced.
    func install(on raw: OpaquePointer) {
        checkMemory(dbus_connection_set_watch_functions(
            raw, addWatchCallback, removeWatchCallback, toggleWatchCallback, retained(), releaseIntegration),
            "dbus_connection_set_watch_functions")
        checkMemory(dbus_connection_set_timeout_functions(
            raw, addTimeoutCallback, removeTimeoutCallback, toggleTimeoutCallback, retained(), releaseIntegration),
            "dbus_connection_set_timeout_functions")
        dbus_connection_set_wakeup_main_function(raw, wakeupCallback, retained(), releaseIntegration)
        dbus_connection_set_dispatch_status_function(raw, dispatchStatusCallback, retained(), releaseIntegration)
    }

    /// Removes the callbacks; libdbus calls the remove functions for every live watch and timeout, so
    /// every source is cancelled.
    func uninstall(from raw: OpaquePointer) {
        _ = dbus_connection_set_watch_functions(raw, nil, nil, nil, nil, nil)
        _ = dbus_connection_set_timeout_functions(raw, nil, nil, nil, nil, nil)
        dbus_connection_set_wakeup_main_function(raw, nil, nil, nil)
        dbus_connection_set_dispatch_status_function(raw, nil, nil, nil)
        // Whatever libdbus did not remove (it should have) is cancelled here.
        for sources in watches.values { sources.cancel() }
        for source in timeouts.values { source.cancel() }
        watches = [:]
        timeouts = [:]
    }

    /// Runs `body` on the queue once every source made so far has finished cancelling (its cancel
    /// handler ran): only then may what the sources use (the watches, the connection) be released.
    func whenCancelled(_ body: @escaping @Sendable () -> Void) {
        liveSources.notify(queue: queue, execute: body)
    }

    /// For tests: the enabled timeouts and watches. An idle connection has no timeout and only its read
    /// watch enabled, so it sleeps until a message arrives.
    var enabledTimeoutCount: Int { timeouts.values.filter(\.resumed).count }
    var enabledWatchCount: Int { watches.values.filter(\.enabled).count }

    private func retained() -> UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }

    /// Schedules one dispatch pass on the queue; safe from inside libdbus callbacks.
    func scheduleDispatch() {
        guard !dispatchScheduled else { return }
        dispatchScheduled = true
        queue.async { [weak self] in
            guard let self else { return }
            self.dispatchScheduled = false
            self.connection?.dispatchQueued()
        }
    }

    /// libdbus has messages to dispatch (its wake-up and dispatch-status functions).
    fileprivate func dispatchWanted() {
        if !handlingWatch { scheduleDispatch() }
    }

    // MARK: Watches (called from inside libdbus: no libdbus connection calls here)

    /// False when no descriptor or thread is left (libdbus treats it as out of memory).
    fileprivate func addWatch(_ watch: OpaquePointer) -> Bool {
        let flags = dbus_watch_get_flags(watch)
        var sources: [any WatchSource] = []
        for condition in [DBUS_WATCH_READABLE.rawValue, DBUS_WATCH_WRITABLE.rawValue] where flags & condition != 0 {
            // Each source watches its own duplicate of libdbus's descriptor and closes it when it is
            // done with it: a descriptor must stay open until a dispatch source's cancel handler runs
            // (dispatch_source_cancel(3)), and libdbus closes its own right after removing the watch
            // when the bus goes away. Close-on-exec, as libdbus's own is (dup(2) drops the flag): a
            // program tonearmd starts never holds its authenticated bus socket (issue 39).
            let fd = fcntl(dbus_watch_get_unix_fd(watch), F_DUPFD_CLOEXEC, 0)
            guard fd >= 0 else {
                WatchSources(sources).cancel()
                return false
            }
            liveSources.enter()
            let finished: @Sendable () -> Void = { [liveSources] in
                close(fd)
                liveSources.leave()
            }
            if condition == DBUS_WATCH_READABLE.rawValue {
                // Incoming messages are waited for on a thread of our own (`ReadWatcher`): one
                // thread wake-up per message instead of a dispatch source's two.
                guard let watcher = ReadWatcher(fd: fd, queue: queue, handler: { [weak self] in self?.handle(watch, condition) },
                                                finished: finished) else {
                    finished()
                    WatchSources(sources).cancel()
                    return false
                }
                sources.append(watcher)
            } else {
                let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
                source.setEventHandler { [weak self] in self?.handle(watch, condition) }
                source.setCancelHandler(handler: finished)
                sources.append(DispatchWatchSource(source))
            }
        }
        let entry = WatchSources(sources)
        watches[watch] = entry
        entry.setEnabled(dbus_watch_get_enabled(watch) != 0)
        return true
    }

    fileprivate func removeWatch(_ watch: OpaquePointer) {
        watches.removeValue(forKey: watch)?.cancel()
    }

    fileprivate func toggleWatch(_ watch: OpaquePointer) {
        watches[watch]?.setEnabled(dbus_watch_get_enabled(watch) != 0)
    }

    /// On the queue, outside libdbus: the fd is ready.
    private func handle(_ watch: OpaquePointer, _ condition: UInt32) {
        // The watch may have been removed or disabled after this event was queued.
        guard watches[watch] != nil, dbus_watch_get_enabled(watch) != 0 else { return }
        handlingWatch = true
        // FALSE means out of memory; libdbus retries on the next readiness, as its own main loops do.
        _ = dbus_watch_handle(watch, condition)
        handlingWatch = false
        connection?.dispatchQueued()
    }

    // MARK: Timeouts (called from inside libdbus: no libdbus connection calls here)

    fileprivate func addTimeout(_ timeout: OpaquePointer) {
        // Not polling: a timer exists only while libdbus holds a timeout (a pending call's reply
        // deadline) and goes with it; an idle connection has none (ConnectionTests checks).
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in self?.handle(timeout) }
        liveSources.enter()
        timer.setCancelHandler { [liveSources] in liveSources.leave() }
        let entry = TimeoutSource(timer)
        timeouts[timeout] = entry
        entry.update(enabled: dbus_timeout_get_enabled(timeout) != 0, intervalMilliseconds: Int(dbus_timeout_get_interval(timeout)))
    }

    fileprivate func removeTimeout(_ timeout: OpaquePointer) {
        timeouts.removeValue(forKey: timeout)?.cancel()
    }

    fileprivate func toggleTimeout(_ timeout: OpaquePointer) {
        // Re-enabling restarts the interval, as dbus-mainloop.c does.
        timeouts[timeout]?.update(
            enabled: dbus_timeout_get_enabled(timeout) != 0, intervalMilliseconds: Int(dbus_timeout_get_interval(timeout)))
    }

    private func handle(_ timeout: OpaquePointer) {
        guard timeouts[timeout] != nil, dbus_timeout_get_enabled(timeout) != 0 else { return }
        _ = dbus_timeout_handle(timeout)
        connection?.dispatchQueued()
    }
}

/// One way of waiting for a watch's descriptor: created disabled, enabled and disabled as libdbus
/// toggles the watch, cancelled once.
protocol WatchSource {
    var isEnabled: Bool { get }
    func setEnabled(_ enabled: Bool)
    func cancel()
}

/// The read and/or write source of one `DBusWatch`.
final class WatchSources {
    let sources: [any WatchSource]

    init(_ sources: [any WatchSource]) { self.sources = sources }

    func setEnabled(_ enabled: Bool) { sources.forEach { $0.setEnabled(enabled) } }
    func cancel() { sources.forEach { $0.cancel() } }
    var enabled: Bool { sources.contains { $0.isEnabled } }
}

/// A dispatch source (the write side: needed only while libdbus has more to send than the socket
/// takes). `resumed` tracks whether it runs, because a source must be resumed once before it is released.
final class DispatchWatchSource: WatchSource {
    let source: any DispatchSourceProtocol
    var resumed = false
    var isEnabled: Bool { resumed }

    init(_ source: any DispatchSourceProtocol) { self.source = source }

    func setEnabled(_ enabled: Bool) {
        guard enabled != resumed else { return }
        resumed = enabled
        enabled ? source.resume() : source.suspend()
    }

    func cancel() {
        source.cancel()
        if !resumed { source.resume() }
        resumed = true
    }
}

final class TimeoutSource {
    let timer: any DispatchSourceTimer
    var resumed = false

    init(_ timer: any DispatchSourceTimer) { self.timer = timer }

    func update(enabled: Bool, intervalMilliseconds: Int) {
        if enabled {
            let interval = DispatchTimeInterval.milliseconds(max(intervalMilliseconds, 0))
            timer.schedule(deadline: .now() + interval, repeating: interval)
            if !resumed { timer.resume(); resumed = true }
        } else if resumed {
            timer.suspend()
            resumed = false
        }
    }

    func cancel() {
        timer.cancel()
        if !resumed { timer.resume(); resumed = true }
    }
}

// MARK: - C callbacks (no captures: they find the integration through `data`)

private func integration(_ data: UnsafeMutableRawPointer?) -> LoopIntegration {
    Unmanaged<LoopIntegration>.fromOpaque(data!).takeUnretainedValue()
}

private let releaseIntegration: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
    guard let data else { return }
    Unmanaged<LoopIntegration>.fromOpaque(data).release()
}

private let addWatchCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> dbus_bool_t = { watch, data in
    integration(data).addWatch(watch!) ? 1 : 0
}

private let removeWatchCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { watch, data in
    integration(data).removeWatch(watch!)
}

private let toggleWatchCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { watch, data in
    integration(data).toggleWatch(watch!)
}

private let addTimeoutCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> dbus_bool_t = { timeout, data in
    integration(data).addTimeout(timeout!)
    return 1
}

private let removeTimeoutCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { timeout, data in
    integration(data).removeTimeout(timeout!)
}

private let toggleTimeoutCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { timeout, data in
    integration(data).toggleTimeout(timeout!)
}

private let wakeupCallback: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
    integration(data).dispatchWanted()
}

private let dispatchStatusCallback: @convention(c) (OpaquePointer?, DBusDispatchStatus, UnsafeMutableRawPointer?) -> Void = {
    _, status, data in
    if status == DBUS_DISPATCH_DATA_REMAINS { integration(data).dispatchWanted() }
}
