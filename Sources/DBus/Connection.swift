import CDBus
import Dispatch
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// A private connection to a message bus, driven by DispatchSources on one serial queue.
///
/// Wraps a `DBusConnection *` from `dbus_connection_open_private` and owns it: `close()` (or `deinit`)
/// calls `dbus_connection_close` then `dbus_connection_unref`. `exit_on_disconnect` is off, so a lost
/// bus is reported to `onDisconnect`, never a silent `_exit`.
///
/// Threading: every method must be called on `queue`, and every handler is called on it. libdbus is only
/// ever called on `queue`. `@unchecked Sendable` so that it can be captured by blocks sent to `queue`.
/// Handlers must not be `@MainActor` closures (for example written in top-level `main.swift` code):
/// called on `queue`, they trap (design trap 1). Create them in nonisolated types.
public final class Connection: @unchecked Sendable {
    /// The serial queue that owns this connection.
    public let queue: DispatchQueue

    /// The unique name the bus gave us (`dbus_bus_get_unique_name`), for example `:1.42`.
    public let uniqueName: String

    /// The bus address connected to.
    public let address: String

    /// Called once, on the queue, when the bus connection is lost
    /// (`org.freedesktop.DBus.Local.Disconnected`); not called after `close()`.
    public var onDisconnect: ((DBusError) -> Void)?

    /// Where diagnostics go: a message that could not be sent, a getter that failed, a handler that
    /// replied twice, the lost bus. The owner's logger, given to `init`.
    public let logger: Logger

    /// Whether `org.freedesktop.DBus.Peer` calls addressed to us reach the handlers instead of being
    /// answered by libdbus, which ignores their arguments (`dbus_connection_set_route_peer_messages`).
    /// Off by default; `ObjectServer` turns it on and answers Peer itself.
    public var routesPeerMessages = false {
        didSet {
            dispatchPrecondition(condition: .onQueue(queue))
            if let raw { dbus_connection_set_route_peer_messages(raw, routesPeerMessages ? 1 : 0) }
        }
    }

    /// False once disconnected or closed.
    public private(set) var isConnected = true

    /// `DBusConnection *`; nil after `close()`.
    private var raw: OpaquePointer?
    let integration: LoopIntegration
    private var handlers: [(id: Int, handler: (Message) -> Bool)] = []
    private var nextHandlerID = 0
    private var isDispatching = false
    /// Called, in the order added, each time a pass ends (`onPassEnded`).
    private var passEndedHooks: [() -> Void] = []
    /// Completions of calls in flight, failed by `close()` (libdbus would drop them silently).
    private var pendingCalls: [ObjectIdentifier: PendingBox] = [:]

    /// Connects to the bus at `address`, or to the session bus (`DBUS_SESSION_BUS_ADDRESS`) when nil
    /// (`dbus_connection_open_private`, `dbus_bus_register`). Blocks until registered: call at startup,
    /// on `queue`. Diagnostics go to `logger`.
    public init(address: String? = nil, queue: DispatchQueue, logger: Logger) throws {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let address = address ?? Connection.sessionBusAddress else {
            throw DBusError(name: DBusError.Name.badAddress, message: "DBUS_SESSION_BUS_ADDRESS is not set and no bus address was given")
        }
        let raw = try address.dbusSanitized.withCString { cAddress in
            try withCError("cannot connect to \(address)") { dbus_connection_open_private(cAddress, $0) }
        }
        // A lost bus must not _exit(1) the player (dbus_bus_get turns exit-on-disconnect on; say it explicitly).
        dbus_connection_set_exit_on_disconnect(raw, 0)
        // At most 2 MiB of received messages alive at once (libdbus's default is 63 MiB): past it
        // libdbus stops reading and the bus daemon holds the rest. A client sending many calls of
        // 1 MiB at once otherwise peaks the heap, which keeps its holes afterwards (heaptrack
        // under make fuzz; its memory check). Deferred replies keep a body-less copy of their call
        // (Message.replyHandle) so that they never hold this budget.
        dbus_connection_set_max_received_size(raw, 2 << 20)
        do {
            try withCErrorBool("cannot register with the bus at \(address)") { dbus_bus_register(raw, $0) }
        } catch {
            dbus_connection_close(raw)
            dbus_connection_unref(raw)
            throw error
        }
        self.queue = queue
        self.logger = logger
        self.address = address
        self.raw = raw
        self.uniqueName = dbus_bus_get_unique_name(raw).map { String(cString: $0) } ?? ""
        self.integration = LoopIntegration(queue: queue)
        integration.connection = self
        checkMemory(dbus_connection_add_filter(raw, filterCallback, Unmanaged.passRetained(FilterBox(self)).toOpaque(), releaseFilterBox),
                    "dbus_connection_add_filter")
        integration.install(on: raw)
        // Messages may already be queued (read while registering).
        integration.scheduleDispatch()
    }

    /// `DBUS_SESSION_BUS_ADDRESS` from the environment.
    public static var sessionBusAddress: String? {
        getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) }
    }

    deinit {
        // Normally closed by the owner; this is the safety net, still on the queue (libdbus is only
        // called there). `raw` is an OpaquePointer, `integration` the loop: neither refers to `self`.
        if let raw {
            let box = UnsafeSendable((raw, integration))
            queue.async { Connection.teardown(box.value.0, box.value.1) }
        }
    }

    /// Flushes what is queued for sending (blocking, `dbus_connection_flush`), then closes
    /// (`dbus_connection_close`) and releases (`dbus_connection_unref`) the connection. Idempotent.
    public func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let raw else { return }
        if isConnected { dbus_connection_flush(raw) }
        self.raw = nil
        isConnected = false
        handlers = []
        let unanswered = pendingCalls.values
        pendingCalls = [:]
        for box in unanswered { box.fail(.disconnected("the connection was closed before the reply came")) }
        if isDispatching {
            // Inside a handler, dbus_connection_dispatch is still running on this connection: tear down after it.
            let box = UnsafeSendable((raw, integration))
            queue.async { Connection.teardown(box.value.0, box.value.1) }
        } else {
            Connection.teardown(raw, integration)
        }
    }

    /// Cancels every source, and closes and releases the connection only once their cancel handlers
    /// have run: until then a source may still hold a watch of this connection.
    private static func teardown(_ raw: OpaquePointer, _ integration: LoopIntegration) {
        integration.uninstall(from: raw)
        let box = UnsafeSendable(raw)
        integration.whenCancelled {
            dbus_connection_close(box.value)
            dbus_connection_unref(box.value)
        }
    }

    // MARK: Sending

    /// Queues `message` for sending (`dbus_connection_send`) and returns its serial. The write watch
    /// sends it when the socket is writable.
    @discardableResult
    public func send(_ message: Message) throws -> UInt32 {
        let raw = try connected()
        var serial: UInt32 = 0
        checkMemory(dbus_connection_send(raw, message.raw, &serial), "dbus_connection_send")
        message.isLocked = true
        return serial
    }

    /// Sends a method call and waits for its reply (`dbus_connection_send_with_reply_and_block`).
    /// Blocks the queue: for startup only. An error reply is thrown as `DBusError`.
    public func callBlocking(_ message: Message, timeout: Duration? = nil) throws -> Message {
        let raw = try connected()
        let reply = try withCError("no reply to \(message)") {
            dbus_connection_send_with_reply_and_block(raw, message.raw, Connection.milliseconds(timeout), $0)
        }
        message.isLocked = true
        return Message(adopting: reply, locked: true)
    }

    /// Sends a method call; `completion` runs later on the queue, exactly once, with the reply's
    /// arguments or the error (an error reply, a timeout as `NoReply`, a lost or closed connection as
    /// `Disconnected`).
    /// Wraps `dbus_connection_send_with_reply` and `dbus_pending_call_set_notify`.
    public func call(_ message: Message, timeout: Duration? = nil, completion: @escaping (Result<[DBusValue], DBusError>) -> Void) {
        let raw: OpaquePointer
        do { raw = try connected() } catch {
            queue.asyncConfined { completion(.failure(DBusError(error))) }
            return
        }
        var pending: OpaquePointer? = nil
        checkMemory(dbus_connection_send_with_reply(raw, message.raw, &pending, Connection.milliseconds(timeout)),
                    "dbus_connection_send_with_reply")
        message.isLocked = true
        guard let pending else {
            // libdbus returns no pending call when the connection is already disconnected.
            queue.asyncConfined { completion(.failure(.disconnected("not connected to the bus"))) }
            return
        }
        let box = PendingBox(queue: queue, completion: completion)
        let id = ObjectIdentifier(box)
        pendingCalls[id] = box
        box.onFinish = { [weak self] in self?.pendingCalls[id] = nil }
        checkMemory(dbus_pending_call_set_notify(pending, pendingNotifyCallback, Unmanaged.passRetained(box).toOpaque(), releasePendingBox),
                    "dbus_pending_call_set_notify")
        // Nothing can complete it between send and set_notify (both run on the queue), but be sure.
        if dbus_pending_call_get_completed(pending) != 0 { box.complete(pending) }
        // The connection keeps its own reference until the call completes.
        dbus_pending_call_unref(pending)
    }

    /// Convenience: builds the method call and calls `call(_:timeout:completion:)`.
    public func call(
        destination: String, path: ObjectPath, interface: String, member: String, arguments: [DBusValue] = [],
        timeout: Duration? = nil, completion: @escaping (Result<[DBusValue], DBusError>) -> Void
    ) {
        do {
            let message = try Message.methodCall(destination: destination, path: path, interface: interface, member: member, arguments: arguments)
            call(message, timeout: timeout, completion: completion)
        } catch {
            queue.asyncConfined { completion(.failure(DBusError(error))) }
        }
    }

    // MARK: The bus

    /// Flags of `RequestName` (`DBUS_NAME_FLAG_*`).
    public struct RequestNameFlags: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let allowReplacement = RequestNameFlags(rawValue: UInt32(DBUS_NAME_FLAG_ALLOW_REPLACEMENT))
        public static let replaceExisting = RequestNameFlags(rawValue: UInt32(DBUS_NAME_FLAG_REPLACE_EXISTING))
        public static let doNotQueue = RequestNameFlags(rawValue: UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE))
    }

    /// The result of `RequestName` (`DBUS_REQUEST_NAME_REPLY_*`).
    public enum RequestNameResult: Int32, Sendable {
        case primaryOwner = 1, inQueue = 2, exists = 3, alreadyOwner = 4
    }

    /// The result of `ReleaseName` (`DBUS_RELEASE_NAME_REPLY_*`).
    public enum ReleaseNameResult: Int32, Sendable {
        case released = 1, nonExistent = 2, notOwner = 3
    }

    /// Asks the bus for `name` (`dbus_bus_request_name`, blocking: at startup, after registering objects).
    /// With `.doNotQueue` (the default) the result is `.primaryOwner`, `.alreadyOwner` or `.exists`.
    public func requestName(_ name: String, flags: RequestNameFlags = .doNotQueue) throws -> RequestNameResult {
        let raw = try connected()
        try validateName(name, .busName)
        let code = try withCError("RequestName(\(name)) failed") { error -> Int32? in
            let code = dbus_bus_request_name(raw, name, flags.rawValue, error)
            return code < 0 ? nil : code
        }
        guard let result = RequestNameResult(rawValue: code) else { throw DBusError.failed("RequestName(\(name)) returned \(code)") }
        return result
    }

    /// Gives `name` back (`dbus_bus_release_name`, blocking).
    @discardableResult
    public func releaseName(_ name: String) throws -> ReleaseNameResult {
        let raw = try connected()
        try validateName(name, .busName)
        let code = try withCError("ReleaseName(\(name)) failed") { error -> Int32? in
            let code = dbus_bus_release_name(raw, name, error)
            return code < 0 ? nil : code
        }
        guard let result = ReleaseNameResult(rawValue: code) else { throw DBusError.failed("ReleaseName(\(name)) returned \(code)") }
        return result
    }

    /// Adds a match rule so that the bus routes matching signals to us (`dbus_bus_add_match`, blocking),
    /// for example `type='signal',interface='org.freedesktop.DBus.Properties'`.
    public func addMatch(_ rule: String) throws {
        let raw = try connected()
        try rule.dbusSanitized.withCString { cRule in
            _ = try withCError("AddMatch(\(rule)) failed") { error -> Bool? in
                dbus_bus_add_match(raw, cRule, error)
                return true
            }
        }
    }

    /// Removes a match rule (`dbus_bus_remove_match`, blocking).
    public func removeMatch(_ rule: String) throws {
        let raw = try connected()
        try rule.dbusSanitized.withCString { cRule in
            _ = try withCError("RemoveMatch(\(rule)) failed") { error -> Bool? in
                dbus_bus_remove_match(raw, cRule, error)
                return true
            }
        }
    }

    // MARK: Receiving

    /// A registered message handler, to remove it with `removeHandler`.
    public struct HandlerToken: Hashable, Sendable { let id: Int }

    /// Adds a handler that sees every incoming message (method calls, signals), in order of addition,
    /// on the queue. Returning true marks the message handled: later handlers do not see it.
    /// A method call that no handler takes gets `UnknownMethod` from libdbus.
    @discardableResult
    public func addHandler(_ handler: @escaping (Message) -> Bool) -> HandlerToken {
        dispatchPrecondition(condition: .onQueue(queue))
        nextHandlerID += 1
        handlers.append((nextHandlerID, handler))
        return HandlerToken(id: nextHandlerID)
    }

    /// Removes a handler added with `addHandler` or `onSignal`.
    public func removeHandler(_ token: HandlerToken) {
        dispatchPrecondition(condition: .onQueue(queue))
        handlers.removeAll { $0.id == token.id }
    }

    /// Convenience: a handler for signals of `interface` (and `member`, `path` when given).
    /// Add a match rule with `addMatch` too, or the bus does not send them.
    @discardableResult
    public func onSignal(
        interface: String, member: String? = nil, path: ObjectPath? = nil, _ handler: @escaping (Message) -> Void
    ) -> HandlerToken {
        addHandler { message in
            guard message.kind == .signal, message.interface == interface,
                  member == nil || message.member == member, path == nil || message.path == path else { return false }
            handler(message)
            return false
        }
    }

    /// Called by the filter (inside `dbus_connection_dispatch`, on the queue).
    fileprivate func handle(_ message: Message) -> Bool {
        if message.kind == .signal, message.path?.rawValue == DBUS_PATH_LOCAL,
           message.isSignal(interface: DBUS_INTERFACE_LOCAL, member: "Disconnected") {
            reportDisconnect()
            return true
        }
        for (_, handler) in handlers where handler(message) { return true }
        return false
    }

    private func reportDisconnect() {
        guard isConnected else { return }
        isConnected = false
        let error = DBusError.disconnected(
            "the connection to the bus at \(address) was lost (org.freedesktop.DBus.Local.Disconnected): the bus closed it or exited")
        logger.notice("\(error.message)")
        onDisconnect?(error)
    }

    /// True while a dispatch pass runs: `dispatchQueued` handing libdbus's queued messages to the
    /// handlers, or a block given to `pass`. What a handler does during one is part of answering
    /// the calls of that pass. Read on the queue.
    public private(set) var isInPass = false

    /// Adds `hook`, called on the queue each time a pass ends: outside libdbus, with `isInPass`
    /// false again, before the queue takes anything else. Hooks run in the order they were added.
    /// The connection only says that a pass ended; what to do then (announce what the pass
    /// changed, run work it put off) is the hook owner's.
    public func onPassEnded(_ hook: @escaping () -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        passEndedHooks.append(hook)
    }

    /// Runs `body` now, on the queue, as a dispatch pass: `isInPass` is true while it runs, and the
    /// `onPassEnded` hooks run once it returns. For a block that sends a deferred reply outside a
    /// pass (a call answered after its URIs were resolved on another queue), so that it is answered
    /// as a call dispatched from the socket is. Inside a pass, `body` just runs.
    public func pass(_ body: () -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !isInPass else { return body() }
        isInPass = true
        body()
        isInPass = false
        passEnded()
    }

    private func passEnded() {
        for hook in passEndedHooks { hook() }
    }

    /// Dispatches queued incoming messages (`dbus_connection_dispatch`). Called on the queue after I/O,
    /// never from inside libdbus. Yields after a batch so that one busy client cannot starve the queue.
    func dispatchQueued() {
        guard let raw, !isDispatching else { return }
        // inside a `pass` (a handler's block): its end runs the hooks
        let startsPass = !isInPass
        isDispatching = true
        isInPass = true
        defer {
            isDispatching = false
            if startsPass {
                isInPass = false
                passEnded()
            }
        }
        var budget = 64
        while dbus_connection_get_dispatch_status(raw) == DBUS_DISPATCH_DATA_REMAINS {
            guard budget > 0 else { integration.scheduleDispatch(); return }
            budget -= 1
            _ = dbus_connection_dispatch(raw)
            if self.raw == nil { return }  // closed by a handler
        }
    }

    private func connected() throws -> OpaquePointer {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let raw else { throw DBusError.disconnected("the connection is closed") }
        guard isConnected else { throw DBusError.disconnected("the connection to \(address) was lost") }
        return raw
    }

    /// A call's timeout that libdbus never reaches: milliseconds clamp to Int32.max, which is
    /// DBUS_TIMEOUT_INFINITE (dbus-protocol.h). For a caller that keeps a limit of its own.
    public static let unbounded = Duration.seconds(Int64(Int32.max))

    private static func milliseconds(_ timeout: Duration?) -> Int32 {
        guard let timeout else { return DBUS_TIMEOUT_USE_DEFAULT }
        let (seconds, attoseconds) = timeout.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}

// MARK: - C callbacks

/// What libdbus holds for the filter: a weak reference, so that libdbus does not keep the connection alive.
private final class FilterBox {
    weak var connection: Connection?
    init(_ connection: Connection) { self.connection = connection }
}

private let filterCallback: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> DBusHandlerResult = {
    _, rawMessage, data in
    let box = Unmanaged<FilterBox>.fromOpaque(data!).takeUnretainedValue()
    guard let connection = box.connection, let rawMessage else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    return connection.handle(Message(retaining: rawMessage)) ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
}

private let releaseFilterBox: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
    guard let data else { return }
    Unmanaged<FilterBox>.fromOpaque(data).release()
}

/// The completion of one pending call, owned by libdbus (released through `releasePendingBox`).
private final class PendingBox {
    let queue: DispatchQueue
    var completion: ((Result<[DBusValue], DBusError>) -> Void)?
    /// Called on the queue when the completion has been scheduled, to forget the call.
    var onFinish: (() -> Void)?

    init(queue: DispatchQueue, completion: @escaping (Result<[DBusValue], DBusError>) -> Void) {
        self.queue = queue
        self.completion = completion
    }

    /// Steals the reply (`dbus_pending_call_steal_reply`: we own it) and runs the completion later on
    /// the queue, outside libdbus.
    func complete(_ pending: OpaquePointer) {
        guard let completion, let rawReply = dbus_pending_call_steal_reply(pending) else { return }
        self.completion = nil
        onFinish?()
        onFinish = nil
        let reply = Message(adopting: rawReply, locked: true)
        let result: Result<[DBusValue], DBusError>
        if let error = reply.error {
            result = .failure(error)
        } else {
            do { result = .success(try reply.arguments()) } catch { result = .failure(DBusError(error)) }
        }
        queue.asyncConfined { completion(result) }
    }

    /// Fails the call without a reply (the connection closed).
    func fail(_ error: DBusError) {
        guard let completion else { return }
        self.completion = nil
        onFinish = nil
        queue.asyncConfined { completion(.failure(error)) }
    }
}

private let pendingNotifyCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { pending, data in
    guard let pending, let data else { return }
    Unmanaged<PendingBox>.fromOpaque(data).takeUnretainedValue().complete(pending)
}

private let releasePendingBox: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
    guard let data else { return }
    Unmanaged<PendingBox>.fromOpaque(data).release()
}

/// Carries a non-Sendable value (an `OpaquePointer`) to the connection's queue, where it is used alone.
struct UnsafeSendable<T>: @unchecked Sendable {
    // @unchecked: the value crosses to the queue once and is used only there.
    let value: T
    init(_ value: T) { self.value = value }
}

extension DispatchQueue {
    /// `async` for a block that captures queue-confined, non-Sendable state (a completion, a message):
    /// it is created on this queue's side and runs on this queue, nowhere else.
    func asyncConfined(_ body: @escaping () -> Void) {
        let box = UnsafeSendable(body)
        async { box.value() }
    }
}
