import CDBus
import Dispatch
import Logging

/// Serves objects on a connection: dispatches incoming method calls to the `InterfaceDescription`
/// tables of the object at the called path, and answers `org.freedesktop.DBus.Properties`,
/// `.Introspectable` and `.Peer` for every object.
///
/// Register objects before requesting the bus name, so that no client sees the name without them.
/// Every call gets exactly one reply (none when it carries NO_REPLY_EXPECTED).
///
/// Threading: use on the connection's queue only (`@unchecked Sendable` for that reason).
///
/// ```swift
/// queue.sync {
///     let connection = try Connection(queue: queue)            // session bus
///     connection.onDisconnect = { error in log.error("\(error)") }
///     let server = ObjectServer(connection: connection)
///     let object = try server.register([playerTable, rootTable], at: "/org/mpris/MediaPlayer2")
///     guard try connection.requestName("org.mpris.MediaPlayer2.tonearm") == .primaryOwner else { ... }
///     // later, whenever the model changes:
///     object.propertiesMayHaveChanged(interface: "org.mpris.MediaPlayer2.Player")
///     try object.emitSignal(interface: "org.mpris.MediaPlayer2.Player", name: "Seeked", arguments: [.int64(us)])
/// }
/// ```
public final class ObjectServer: @unchecked Sendable {
    // @unchecked: confined to the connection's queue (libdbus is only called there).
    public let connection: Connection
    /// Where the objects' diagnostics go (a getter that failed, a PropertiesChanged not sent).
    public let logger: Logger
    private var objects: [ObjectPath: ExportedObject] = [:]
    private var token: Connection.HandlerToken?
    /// `org.freedesktop.DBus.Peer` for paths with no object.
    private let peer = ExportedObject.peerInterface()

    /// Installs the dispatcher as a message handler of `connection`, and takes `org.freedesktop.DBus.Peer`
    /// over from libdbus, which answers `Ping` and `GetMachineId` whatever their arguments
    /// (dbus-connection.c `_dbus_connection_peer_filter_unlocked_no_update` checks no signature), so that
    /// a call with the wrong signature gets `InvalidArgs` here as on every other interface.
    /// Diagnostics go to `logger`, or to the connection's when nil.
    public init(connection: Connection, logger: Logger? = nil) {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        self.connection = connection
        self.logger = logger ?? connection.logger
        token = connection.addHandler { [weak self] message in self?.handle(message) ?? false }
        connection.routesPeerMessages = true
        connection.onPassEnded { [weak self] in self?.passEnded() }
    }

    deinit {
        if let token {
            connection.queue.async { [connection] in
                connection.removeHandler(token)
                connection.routesPeerMessages = false
            }
        }
    }

    /// Exports an object with `interfaces` at `path`. Validates the tables (names, signatures,
    /// duplicates) and reads every announced property once, as the baseline for change detection.
    @discardableResult
    public func register(_ interfaces: [InterfaceDescription], at path: ObjectPath) throws -> ExportedObject {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        guard objects[path] == nil else { throw DBusError.invalidArgs("an object is already registered at \(path)") }
        var names = Set<String>()
        for interface in interfaces {
            try validateName(interface.name, .interface)
            guard !ExportedObject.standardInterfaceNames.contains(interface.name) else {
                throw DBusError.invalidArgs("\(interface.name) is provided by the object server")
            }
            guard names.insert(interface.name).inserted else { throw DBusError.invalidArgs("interface \(interface.name) registered twice") }
            try validateTable(interface)
        }
        let object = ExportedObject(path: path, interfaces: interfaces, server: self)
        objects[path] = object
        return object
    }

    /// Removes the object at `path`; later calls to it get `UnknownObject`.
    public func unregister(_ path: ObjectPath) {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        objects.removeValue(forKey: path)
    }

    /// The object registered at `path`.
    public func object(at path: ObjectPath) -> ExportedObject? { objects[path] }

    /// Emits a signal from `path`. When an object there declares `interface`, the arguments are checked
    /// against the declared signal (see `ExportedObject.emitSignal`).
    public func emitSignal(path: ObjectPath, interface: String, name: String, arguments: [DBusValue] = []) throws {
        if let object = objects[path], object.interfaces.contains(where: { $0.name == interface }) {
            try object.emitSignal(interface: interface, name: name, arguments: arguments)
        } else {
            try connection.send(try Message.signal(path: path, interface: interface, member: name, arguments: arguments))
        }
    }

    /// Emits `PropertiesChanged` for the object at `path`; see `ExportedObject.emitPropertiesChanged`.
    public func emitPropertiesChanged(path: ObjectPath, interface: String, changed: [String: DBusValue], invalidated: [String] = []) throws {
        guard let object = objects[path] else { throw DBusError.unknownObject("no object at \(path)") }
        try object.emitPropertiesChanged(interface: interface, changed: changed, invalidated: invalidated)
    }

    private func validateTable(_ interface: InterfaceDescription) throws {
        func unique(_ names: [String], _ what: String) throws {
            var seen = Set<String>()
            for name in names {
                try validateName(name, .member)
                guard seen.insert(name).inserted else { throw DBusError.invalidArgs("\(interface.name): \(what) \(name) declared twice") }
            }
        }
        try unique(interface.methods.map(\.name), "method")
        try unique(interface.properties.map(\.name), "property")
        try unique(interface.signals.map(\.name), "signal")
        for property in interface.properties where !property.signature.isSingleCompleteType {
            throw DBusError.invalidArgs("\(interface.name).\(property.name): '\(property.signature)' is not a single complete type")
        }
        // a kept reply goes when a change is announced: one that is never announced would stay stale
        for property in interface.properties where property.keepsEncodedReply && property.emitsChanged == .false {
            throw DBusError.invalidArgs("\(interface.name).\(property.name) keeps its encoded reply but announces no change")
        }
    }

    /// Objects whose changes marked during the pass under way are announced when it ends.
    private var flushAtPassEnd: [ExportedObject] = []

    /// Announces what changed during a pass once it ends (`flushAtPassEnd`), on the thread that
    /// read the calls, instead of on the next turn of the queue, which wakes another thread for it
    /// (make bench: PlayPause -> PropertiesChanged).
    func flushWhenPassEnds(_ object: ExportedObject) {
        flushAtPassEnd.append(object)
    }

    private func passEnded() {
        guard !flushAtPassEnd.isEmpty else { return }
        let objects = flushAtPassEnd
        flushAtPassEnd = []
        for object in objects { object.scheduledFlush() }
    }

    /// The first path element of every registered object below `path`, sorted.
    func children(of path: ObjectPath) -> [String] {
        let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
        var names = Set<String>()
        for other in objects.keys where other != path && other.rawValue.hasPrefix(prefix) {
            if let first = other.rawValue.dropFirst(prefix.count).split(separator: "/").first { names.insert(String(first)) }
        }
        return names.sorted()
    }

    /// Called for every incoming message, inside `dbus_connection_dispatch` on the queue.
    private func handle(_ message: Message) -> Bool {
        guard message.kind == .methodCall, let path = message.path, let member = message.member else { return false }
        if let object = objects[path] {
            object.dispatch(message, member: member)
            return true
        }
        let interface = message.interface
        // Peer works on every path, as libdbus answered it before we took it over (see init).
        if interface == ExportedObject.peer {
            ExportedObject.answer(message, interface: peer, member: member, connection: connection, path: path)
            return true
        }
        // No object here: answer Introspect on the way to objects below (clients walk the tree), else UnknownObject.
        let children = children(of: path)
        if !children.isEmpty, member == "Introspect", interface == nil || interface == ExportedObject.introspectable {
            let introspect = InterfaceDescription(name: ExportedObject.introspectable, methods: [
                .init("Introspect", out: "s") { _, _ in [.string(Introspection.document(interfaces: [], children: children))] },
            ])
            ExportedObject.answer(message, interface: introspect, member: member, connection: connection, path: path)
        } else {
            sendReply(call: message, connection: connection, outSignature: "", description: member,
                      result: .failure(.unknownObject("No object at path \(path)")))
        }
        return true
    }
}

/// An object exported by an `ObjectServer`: its interface tables, the values of its properties as last
/// announced, and the batching of `PropertiesChanged`.
///
/// Change announcement: call `propertiesMayHaveChanged(interface:)` whenever state that properties are
/// read from may have changed. Before the reply to a call of the object, else once the dispatch pass
/// or the turn of the queue is over (or at `flushPropertyChanges()`), the object re-reads the getters of the interface's announced properties, compares with the values it last
/// announced, and sends at most one `PropertiesChanged` per interface, with only the properties that
/// really changed: `emitsChanged: .true` with value, `.invalidates` by name; `.const` and `.false` never.
///
/// Threading: use on the connection's queue only.
public final class ExportedObject: @unchecked Sendable {
    // @unchecked: confined to the connection's queue, as its server is.
    /// Where the object is exported, and its tables (the standard interfaces are not listed).
    public let path: ObjectPath
    public let interfaces: [InterfaceDescription]
    /// Weak: the server owns its objects.
    private weak var server: ObjectServer?
    private let connection: Connection
    private let logger: Logger

    /// By interface and property, as indexed in `interfaces` and their tables: the value last
    /// announced (or read at registration); nil when none is known.
    private var announced: [[DBusValue?]] = []
    /// By interface, as indexed in `interfaces`: the properties to re-read, bit n for the
    /// property at index n; `allProperties` for all of them (and for any past the 64th). Indices,
    /// not a set of names per interface: a PlayPause marked three properties, and building and
    /// hashing sets of strings was a tenth of its time on the D-Bus thread (make bench).
    private var pending: [UInt64] = []
    private var hasPending = false
    private static let allProperties = UInt64.max
    /// interface → property → the `Get` reply encoded once, for properties that keep it; dropped
    /// when the property is announced as changed or invalidated.
    private var encodedReplies: [String: [String: Message]] = [:]
    /// interface → `PropertiesChanged` signals encoded before, never sent themselves, by what they
    /// carry: a property that goes back and forth between a few values (PlaybackStatus) is
    /// encoded once per value, and each later signal is a copy of those bytes (make bench:
    /// PlayPause → PropertiesChanged spent a third of its time building and encoding the
    /// signal). Only signals of basic values are kept, at most `keptSignalLimit` per interface.
    private var encodedSignals: [String: [SignalContent: Message]] = [:]
    static let keptSignalLimit = 16
    private var flushScheduled = false

    static let properties = "org.freedesktop.DBus.Properties"
    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let peer = "org.freedesktop.DBus.Peer"
    static let standardInterfaceNames: Set<String> = [properties, introspectable, peer]

    /// The standard interfaces' tables, bound to this object (built once, in `init`).
    private var standard: [InterfaceDescription] = []

    init(path: ObjectPath, interfaces: [InterfaceDescription], server: ObjectServer) {
        self.path = path
        self.interfaces = interfaces
        self.server = server
        self.connection = server.connection
        self.logger = server.logger
        standard = makeStandardInterfaces()
        for interface in interfaces {
            announced.append(interface.properties.map { property in
                property.emitsChanged == .true || property.emitsChanged == .invalidates ? try? read(property, of: interface.name) : nil
            })
        }
        pending = Array(repeating: 0, count: interfaces.count)
    }

    /// The `Introspect` document: the standard interfaces, each interface's XML, the child nodes.
    public var introspectionXML: String {
        Introspection.document(interfaces: interfaces, children: server?.children(of: path) ?? [])
    }

    // MARK: Signals

    /// Emits signal `name` of `interface` from this object. The signal must be declared in the
    /// interface's table and `arguments` must match its signature (else `InvalidArgs`, nothing sent).
    /// Property changes still pending are announced first, so that clients see state before events.
    /// `destination`: the one connection it is for (see `Message.signal`); nil: every subscriber.
    public func emitSignal(interface: String, name: String, arguments: [DBusValue] = [], destination: String? = nil) throws {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        guard let description = interfaces.first(where: { $0.name == interface }) else {
            throw DBusError.unknownInterface("object \(path) does not implement \(interface)")
        }
        guard let signal = description.signal(named: name) else {
            throw DBusError.invalidArgs("\(interface) declares no signal \(name)")
        }
        guard arguments.signature == signal.signature else {
            throw DBusError.invalidArgs("signal \(interface).\(name) has signature '\(signal.signature)', not '\(arguments.signature)'")
        }
        let message = try Message.signal(path: path, interface: interface, member: name, arguments: arguments,
                                         destination: destination)
        flushPropertyChanges()
        try connection.send(message)
    }

    // MARK: Reads that wait

    /// Properties whose values are not known yet, by interface: a `Get` of one, or a `GetAll` of
    /// its interface (or of all), is answered once `releaseReads` says they are known, so that a
    /// client that reads once at start (a `GetAll` cached for good) never sees a placeholder.
    private var heldReads: [String: Set<String>] = [:]
    private var waitingReads: [() -> Void] = []

    /// Runs each time a read is held: what makes the held values known may start only then.
    public var whenReadHeld: (() -> Void)?

    /// Holds the reads of `properties` of `interface` until `releaseReads()`.
    public func holdReads(of interface: String, properties: Set<String>) {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        heldReads[interface, default: []].formUnion(properties)
    }

    /// The held properties are known: the reads that waited are answered, in the order they came.
    public func releaseReads() {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        heldReads = [:]
        let waiting = waitingReads
        waitingReads = []
        // as a pass: what the answers put off waits until they have left, as for a call from the socket
        connection.pass { waiting.forEach { $0() } }
    }

    /// Whether a read of `property` of `interface` (nil: a GetAll of it, or of every interface
    /// when `interface` is empty) waits for `releaseReads`.
    private func readIsHeld(_ interface: String, _ property: String?) -> Bool {
        guard !heldReads.isEmpty else { return false }
        guard let property else { return interface.isEmpty || heldReads[interface] != nil }
        return heldReads[interface]?.contains(property) == true
    }

    /// Defers the reply to the read in `context` until the reads are released, then answers it
    /// with `read`.
    private func deferRead(_ context: MethodContext, _ read: @escaping () throws -> [DBusValue]) -> [DBusValue] {
        whenReadHeld?()
        let reply = context.deferReply()
        waitingReads.append {
            do { reply.succeed(try read()) } catch { reply.fail(error) }
        }
        return []
    }

    // MARK: Property changes

    /// Marks the properties of `interface` (all, or those named) to be re-read and announced if changed,
    /// once, on the next turn of the queue. A name the table does not have is a programmer error and
    /// traps: ignored, a misspelt name left a change unannounced in silence.
    public func propertiesMayHaveChanged(interface: String, properties names: [String]? = nil) {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        guard let index = interfaces.firstIndex(where: { $0.name == interface }) else {
            logger.error("propertiesMayHaveChanged: \(path) does not implement \(interface)")
            return
        }
        if let names {
            let properties = interfaces[index].properties
            for name in names {
                guard let property = properties.firstIndex(where: { $0.name == name }) else {
                    preconditionFailure("propertiesMayHaveChanged: \(interface) has no property \(name)")
                }
                pending[index] |= property < 64 ? 1 << UInt64(property) : Self.allProperties
            }
        } else {
            pending[index] = Self.allProperties
        }
        hasPending = true
        scheduleFlush()
    }

    /// Marks every interface of the object, as `propertiesMayHaveChanged(interface:)` does.
    public func propertiesMayHaveChanged() {
        for interface in interfaces { propertiesMayHaveChanged(interface: interface.name) }
    }

    /// Announces pending changes now, instead of on the next turn of the queue.
    public func flushPropertyChanges() {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        guard hasPending else { return }
        hasPending = false
        for (index, interface) in interfaces.enumerated() {
            // taken before the getters run: one that marks properties again gets them read again
            let marked = pending[index]
            guard marked != 0 else { continue }
            pending[index] = 0
            var changed: [DBusValue.DictionaryEntry] = []
            var invalidated: [String] = []
            for (number, property) in interface.properties.enumerated()
            where marked == Self.allProperties || number < 64 && marked & (1 << UInt64(number)) != 0 {
                guard property.emitsChanged == .true || property.emitsChanged == .invalidates else { continue }
                let value: DBusValue
                do { value = try read(property, of: interface.name) } catch {
                    logger.error("\(interface.name).\(property.name): getter failed: \(error)")
                    continue
                }
                guard announced[index][number] != value else { continue }
                announced[index][number] = value
                if property.keepsEncodedReply { forgetEncodedReply(interface.name, property.name) }
                if property.emitsChanged == .true {
                    changed.append(.init(.string(property.name), .variant(value)))
                } else {
                    invalidated.append(property.name)
                }
            }
            sendPropertiesChanged(interface.name, changed, invalidated)
        }
    }

    /// Emits `PropertiesChanged` for `interface` now, following each property's `emitsChanged`:
    /// `.true` with its value, `.invalidates` in the invalidated list without value, `.const` and
    /// `.false` not at all. Throws (sending nothing) for an unknown property or a value of the wrong type.
    /// Updates the last announced values used by `propertiesMayHaveChanged`.
    public func emitPropertiesChanged(interface: String, changed: [String: DBusValue], invalidated: [String] = []) throws {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        guard let index = interfaces.firstIndex(where: { $0.name == interface }) else {
            throw DBusError.unknownInterface("object \(path) does not implement \(interface)")
        }
        let description = interfaces[index]
        func number(_ name: String) -> Int? { description.properties.firstIndex { $0.name == name } }
        var changedEntries: [DBusValue.DictionaryEntry] = []
        var invalidatedNames: [String] = []
        var newlyAnnounced: [String: DBusValue] = [:]
        for (name, value) in changed.sorted(by: { $0.key < $1.key }) {
            guard let property = description.property(named: name) else {
                throw DBusError.unknownProperty("\(interface) has no property \(name)")
            }
            guard value.signature == property.signature else {
                throw DBusError.invalidArgs("property \(interface).\(name) has type '\(property.signature)', not '\(value.signature)'")
            }
            try value.validate()
            switch property.emitsChanged {
            case .true: changedEntries.append(.init(.string(name), .variant(value))); newlyAnnounced[name] = value
            case .invalidates: invalidatedNames.append(name); newlyAnnounced[name] = value
            case .const, .false: continue
            }
        }
        for name in invalidated {
            guard let property = description.property(named: name) else {
                throw DBusError.unknownProperty("\(interface) has no property \(name)")
            }
            if (property.emitsChanged == .true || property.emitsChanged == .invalidates) && !invalidatedNames.contains(name) {
                invalidatedNames.append(name)
                // Clients will read it again; forget the old value so the next real change is announced.
                if let number = number(name) { announced[index][number] = nil }
            }
        }
        for (name, value) in newlyAnnounced { if let number = number(name) { announced[index][number] = value } }
        for name in changed.keys { forgetEncodedReply(interface, name) }
        for name in invalidated { forgetEncodedReply(interface, name) }
        sendPropertiesChanged(interface, changedEntries, invalidatedNames)
    }

    private func forgetEncodedReply(_ interface: String, _ property: String) {
        if encodedReplies[interface]?[property] != nil { encodedReplies[interface]?[property] = nil }
    }

    /// `Get`'s reply of a property that keeps it: encoded at the first `Get` after a change.
    private func encodedReply(_ property: InterfaceDescription.Property, of interface: String) throws -> Message {
        if let kept = encodedReplies[interface]?[property.name] { return kept }
        let template = try Message.replyTemplate([.variant(try read(property, of: interface))])
        encodedReplies[interface, default: [:]][property.name] = template
        return template
    }

    /// What one `PropertiesChanged` carries, as the key of its kept encoding.
    private struct SignalContent: Hashable {
        var changed: [DBusValue.DictionaryEntry]
        var invalidated: [String]
    }

    /// Sends `PropertiesChanged`; `changed` holds values read through `read` or checked by
    /// `emitPropertiesChanged` (their type is the table's and they are valid), wrapped in variants.
    private func sendPropertiesChanged(_ interface: String, _ changed: [DBusValue.DictionaryEntry], _ invalidated: [String]) {
        guard !changed.isEmpty || !invalidated.isEmpty, connection.isConnected else { return }
        do {
            // a container (Metadata) is rarely sent twice and costs more to compare and to keep
            let keeps = changed.allSatisfy { $0.value.unwrappingOneVariant.basicTypeCode != nil }
            let content = keeps ? SignalContent(changed: changed, invalidated: invalidated) : nil
            if let content, let kept = encodedSignals[interface]?[content] {
                try connection.send(kept.copy())
                return
            }
            let message = Message.propertiesChanged(path: path, interface: interface, changed: changed, invalidated: invalidated)
            if let content {
                if encodedSignals[interface]?.count ?? 0 >= Self.keptSignalLimit { encodedSignals[interface] = nil }
                encodedSignals[interface, default: [:]][content] = message.copy()
            }
            try connection.send(message)
        } catch {
            logger.error("PropertiesChanged for \(interface) not sent: \(error)")
        }
    }

    /// Announces the marked changes once the pass under way ends (see `ObjectServer.passEnded`),
    /// or on the next turn of the queue when no pass is under way (an engine event's changes).
    private func scheduleFlush() {
        guard !flushScheduled else { return }
        flushScheduled = true
        if connection.isInPass, let server {
            server.flushWhenPassEnds(self)
        } else {
            connection.queue.async { [weak self] in self?.scheduledFlush() }
        }
    }

    /// The flush `scheduleFlush` asked for.
    func scheduledFlush() {
        flushScheduled = false
        flushPropertyChanges()
    }

    /// Reads a property through its getter and checks the value's type against the table.
    private func read(_ property: InterfaceDescription.Property, of interface: String) throws -> DBusValue {
        let value = try property.getter()
        guard value.signature == property.signature else {
            throw DBusError.failed("property \(interface).\(property.name) has type '\(property.signature)' but its getter returned '\(value.signature)'")
        }
        try value.validate()
        return value
    }

    // MARK: Dispatch

    /// Resolves the call against the tables, checks its signature, runs the handler, sends one reply.
    /// What the handler changed is announced before that reply, as sd-bus and zbus do: a client that
    /// reads its property cache once the reply is in sees the new values, and the change leaves
    /// without waiting for the rest of the dispatch pass (make bench: PlayPause -> PropertiesChanged).
    func dispatch(_ message: Message, member: String) {
        let resolved: (InterfaceDescription, InterfaceDescription.Method)
        do {
            resolved = try resolve(interface: message.interface, member: member)
        } catch {
            return sendReply(call: message, connection: connection, outSignature: "", description: member, result: .failure(DBusError(error)))
        }
        Self.run(message, interface: resolved.0, method: resolved.1, connection: connection, path: path,
                 beforeReply: { [weak self] in self?.flushPropertyChanges() })
    }

    /// Answers a call of `member` of `interface` (UnknownMethod when it has none), as `dispatch` does.
    static func answer(_ message: Message, interface: InterfaceDescription, member: String, connection: Connection, path: ObjectPath) {
        guard let method = interface.method(named: member) else {
            return sendReply(call: message, connection: connection, outSignature: "", description: member,
                             result: .failure(.unknownMethod("Interface \(interface.name) has no method \(member)")))
        }
        run(message, interface: interface, method: method, connection: connection, path: path)
    }

    /// Checks the call's signature against the method's, runs the handler, sends one reply.
    private static func run(_ message: Message, interface: InterfaceDescription, method: InterfaceDescription.Method,
                            connection: Connection, path: ObjectPath, beforeReply: @escaping () -> Void = {}) {
        // made only when a diagnostic needs it: a string built per call showed in make bench's profile
        func description() -> String { "\(interface.name).\(method.name)" }
        guard message.signature == method.inSignature else {
            return sendReply(call: message, connection: connection, outSignature: method.outSignature, description: description(), result: .failure(
                .invalidArgs("\(description()) expects arguments of signature '\(method.inSignature)' but received '\(message.signature)'")))
        }
        let context = MethodContext(message: message, connection: connection, path: path, interface: interface.name,
                                    member: method.name, outSignature: method.outSignature, beforeReply: beforeReply)
        let result: Result<[DBusValue], DBusError>
        do {
            switch method.body {
            case .values(let handler): result = .success(try handler(try message.arguments(), context))
            case .raw(let handler): result = .success(try handler(context))
            }
        } catch {
            result = .failure(DBusError(error))
        }
        beforeReply()
        if let deferred = context.deferred {
            if case .failure(let error) = result { deferred.fail(error) }
            return
        }
        if context.replied {
            if case .failure(let error) = result { connection.logger.error("\(description()) failed after its reply was sent: \(error)") }
            return
        }
        sendReply(call: message, connection: connection, outSignature: method.outSignature, description: description(), result: result)
    }

    private func resolve(interface name: String?, member: String) throws -> (InterfaceDescription, InterfaceDescription.Method) {
        // ours, then the standard ones, without joining the two arrays for every call
        if let name {
            guard let interface = interfaces.first(where: { $0.name == name }) ?? standard.first(where: { $0.name == name }) else {
                throw DBusError.unknownInterface("Object \(path) does not implement interface \(name)")
            }
            guard let method = interface.method(named: member) else {
                throw DBusError.unknownMethod("Interface \(name) has no method \(member)")
            }
            return (interface, method)
        }
        // No interface field: the first interface (ours, then the standard ones) with a method of that name.
        for interface in interfaces {
            if let method = interface.method(named: member) { return (interface, method) }
        }
        for interface in standard {
            if let method = interface.method(named: member) { return (interface, method) }
        }
        throw DBusError.unknownMethod("Object \(path) has no method \(member)")
    }

    // MARK: Standard interfaces

    private func makeStandardInterfaces() -> [InterfaceDescription] {
        [
            InterfaceDescription(name: Self.properties, methods: [
                .init("Get", in: "ss", out: "v", raw: { [unowned self] context in
                    let (interface, property) = try lookupProperty(try context.message.arguments())
                    if readIsHeld(interface, property.name) {
                        return deferRead(context) { [unowned self] in
                            [.variant(try read(property, of: interface))]
                        }
                    }
                    guard property.keepsEncodedReply else { return [.variant(try read(property, of: interface))] }
                    try context.reply(copying: try encodedReply(property, of: interface))
                    return []
                }),
                .init("GetAll", in: "s", out: "a{sv}") { [unowned self] args, context in
                    let interface = args[0].stringValue ?? ""
                    if readIsHeld(interface, nil) { return deferRead(context) { [unowned self] in [try getAll(interface)] } }
                    return [try getAll(interface)]
                },
                .init("Set", in: "ssv", out: "", raw: { [unowned self] context in
                    try set(context)
                    return []
                }),
            ]),
            InterfaceDescription(name: Self.introspectable, methods: [
                .init("Introspect", out: "s") { [unowned self] _, _ in [.string(introspectionXML)] },
            ]),
            Self.peerInterface(),
        ]
    }

    /// `org.freedesktop.DBus.Peer`: every call of it reaches us (`ObjectServer.init` routes it here,
    /// libdbus no longer answers it), with or without the interface field.
    static func peerInterface() -> InterfaceDescription {
        InterfaceDescription(name: peer, methods: [
            .init("Ping") { _, _ in [] },
            .init("GetMachineId", out: "s") { _, _ in
                let id = try withCError("no machine id") { dbus_try_get_local_machine_id($0) }
                defer { dbus_free(id) }
                return [.string(String(cString: id))]
            },
        ])
    }

    /// Finds the property named by Get/Set arguments `(interface, name)`; an empty interface searches all.
    private func lookupProperty(_ args: [DBusValue]) throws -> (String, InterfaceDescription.Property) {
        let interfaceName = args[0].stringValue ?? ""
        let propertyName = args[1].stringValue ?? ""
        if interfaceName.isEmpty {
            for interface in interfaces {
                if let property = interface.property(named: propertyName) { return (interface.name, property) }
            }
            throw DBusError.unknownProperty("Object \(path) has no property \(propertyName)")
        }
        guard let interface = interfaces.first(where: { $0.name == interfaceName }) else {
            if Self.standardInterfaceNames.contains(interfaceName) {
                throw DBusError.unknownProperty("Interface \(interfaceName) has no property \(propertyName)")
            }
            throw DBusError.unknownInterface("Object \(path) does not implement interface \(interfaceName)")
        }
        guard let property = interface.property(named: propertyName) else {
            throw DBusError.unknownProperty("Interface \(interfaceName) has no property \(propertyName)")
        }
        return (interfaceName, property)
    }

    private func getAll(_ interfaceName: String) throws -> DBusValue {
        if Self.standardInterfaceNames.contains(interfaceName) { return .vardict([:]) }
        let selected = interfaceName.isEmpty ? interfaces : interfaces.filter { $0.name == interfaceName }
        guard !selected.isEmpty else {
            throw DBusError.unknownInterface("Object \(path) does not implement interface \(interfaceName)")
        }
        var entries: [DBusValue.DictionaryEntry] = []
        for interface in selected {
            for property in interface.properties {
                // One failing getter must not hide the others: clients cache GetAll.
                do { entries.append(.init(.string(property.name), .variant(try read(property, of: interface.name)))) } catch {
                    logger.error("GetAll: \(interface.name).\(property.name) left out: \(error)")
                }
            }
        }
        return .dictionary(key: .string, value: .variant, entries)
    }

    /// `Properties.Set`: the variant's type is checked before its value is read (a mismatch read with
    /// the wrong type is how clients crash players: VLC 3.0.24 aborts on one).
    private func set(_ context: MethodContext) throws {
        let (interface, property) = try lookupProperty(try context.message.arguments(prefix: 2))
        guard let setter = property.setter else {
            throw DBusError.propertyReadOnly("Property \(interface).\(property.name) is read-only")
        }
        let given = context.message.variantContentSignature(argument: 2) ?? "?"
        // A property of type `v` takes any value; the setter gets it still wrapped in its variant.
        guard given == property.signature.rawValue || property.signature == .variant else {
            throw DBusError.invalidArgs("Property \(interface).\(property.name) has type '\(property.signature)' but the value given has type '\(given)'")
        }
        guard let wrapped = try context.message.arguments().last else { throw DBusError.invalidArgs("Set needs a value") }
        let value = property.signature == .variant ? wrapped : wrapped.unwrappingOneVariant
        let propertyContext = MethodContext(message: context.message, connection: connection, path: path, interface: interface,
                                            member: property.name, outSignature: "")
        try setter(value, propertyContext)
        forgetEncodedReply(interface, property.name)  // before the flush announces it: a Get may come first
        propertiesMayHaveChanged(interface: interface, properties: [property.name])
    }
}

extension DBusValue {
    var unwrappingOneVariant: DBusValue { if case .variant(let inner) = self { inner } else { self } }
}
