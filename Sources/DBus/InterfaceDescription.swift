import Dispatch

/// One D-Bus interface as a declarative table (the zbus model): its methods, properties and signals,
/// each with its signature, and the handlers that implement them. An `ObjectServer` dispatches calls
/// against it, checking every signature before a handler runs. Entries made with `typed` (and
/// `deferred`, see TypedInterface.swift) take their signatures from Swift types and decode and
/// encode for their handlers; the plain initializers hand `[DBusValue]` over as it is.
///
/// Handlers run on the connection's queue; they are not `@Sendable` because they never leave it.
public struct InterfaceDescription {
    /// The interface name, for example `org.mpris.MediaPlayer2.Player`.
    public var name: String
    public var methods: [Method]
    public var properties: [Property]
    public var signals: [Signal]
    /// Introspection XML for this interface: an `<interface>` element, or a whole `<node>` document
    /// (a file from `dbus/`) whose `<interface>` elements are taken. Nil: generated from the table.
    public var introspectionXML: String?

    public init(name: String, methods: [Method] = [], properties: [Property] = [], signals: [Signal] = [],
                introspectionXML: String? = nil) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
        self.introspectionXML = introspectionXML
    }

    /// Table lookups by member name.
    public func method(named name: String) -> Method? { methods.first { $0.name == name } }
    public func property(named name: String) -> Property? { properties.first { $0.name == name } }
    public func signal(named name: String) -> Signal? { signals.first { $0.name == name } }
}

extension InterfaceDescription {
    /// What a method handler receives besides its arguments.
    public typealias MethodHandler = (_ arguments: [DBusValue], _ context: MethodContext) throws -> [DBusValue]

    /// A method: the handler runs only when the call's signature equals `inSignature`, and what it
    /// returns must match `outSignature`. A thrown error becomes the error reply (see `DBusErrorConvertible`).
    /// To answer later, call `context.deferReply()` and return anything (`[]`): the return value is ignored.
    public struct Method {
        public var name: String
        public var inSignature: Signature
        public var outSignature: Signature
        /// Argument names for generated introspection XML (optional).
        public var inNames: [String]
        public var outNames: [String]
        /// True when made by `typed` or `deferred`: its signatures come from Swift types.
        public internal(set) var isTyped = false
        let body: Body

        enum Body {
            case values(MethodHandler)
            /// Reads the message itself (Properties.Set must look at a variant's type before its value).
            case raw((MethodContext) throws -> [DBusValue])
        }

        public init(_ name: String, in inSignature: Signature = "", out outSignature: Signature = "",
                    inNames: [String] = [], outNames: [String] = [], handler: @escaping MethodHandler) {
            self.name = name
            self.inSignature = inSignature
            self.outSignature = outSignature
            self.inNames = inNames
            self.outNames = outNames
            self.body = .values(handler)
        }

        init(_ name: String, in inSignature: Signature, out outSignature: Signature, raw: @escaping (MethodContext) throws -> [DBusValue]) {
            self.name = name
            self.inSignature = inSignature
            self.outSignature = outSignature
            self.inNames = []
            self.outNames = []
            self.body = .raw(raw)
        }
    }

    /// How a property announces changes: the `org.freedesktop.DBus.Property.EmitsChangedSignal` annotation.
    public enum EmitsChanged: String, Sendable {
        /// `PropertiesChanged` carries the new value (the D-Bus default).
        case `true` = "true"
        /// `PropertiesChanged` names the property in its invalidated list, without value.
        case invalidates = "invalidates"
        /// Never changes; never announced.
        case const = "const"
        /// Changes are not announced (MPRIS `Position`).
        case `false` = "false"
    }

    /// Read or read-write.
    public enum Access: String, Sendable {
        case read = "read"
        case readWrite = "readwrite"
    }

    /// A property: the getter returns a value of `signature` (checked); the setter, present for
    /// read-write properties, receives a value already checked against `signature` (never a variant
    /// wrapper, unless `signature` is `v`) and throws to refuse it.
    ///
    /// With `keepsEncodedReply`, the object encodes `Get`'s reply of it once and sends copies of
    /// those bytes until the property is announced as changed or invalidated (`PropertiesChanged`,
    /// a `Set`): for a large value read far more often than it changes (a track list of 10,000
    /// paths). Its changes must then be announced: `emitsChanged` may not be `.false`.
    public struct Property {
        public var name: String
        public var signature: Signature
        public var emitsChanged: EmitsChanged
        public var keepsEncodedReply: Bool
        public var getter: () throws -> DBusValue
        public var setter: ((DBusValue, MethodContext) throws -> Void)?
        /// True when made by `typed`: its signature comes from a Swift type.
        public internal(set) var isTyped = false
        public var access: Access { setter == nil ? .read : .readWrite }

        public init(_ name: String, _ signature: Signature, emitsChanged: EmitsChanged = .true, keepsEncodedReply: Bool = false,
                    get: @escaping () throws -> DBusValue,
                    set: ((DBusValue, MethodContext) throws -> Void)? = nil) {
            self.name = name
            self.signature = signature
            self.emitsChanged = emitsChanged
            self.keepsEncodedReply = keepsEncodedReply
            self.getter = get
            self.setter = set
        }
    }

    /// A signal this interface may emit; `emitSignal` checks arguments against `signature`.
    public struct Signal {
        public var name: String
        public var signature: Signature
        public var argumentNames: [String]
        /// True when made by `typed`: its signature comes from Swift types.
        public internal(set) var isTyped = false

        public init(_ name: String, _ signature: Signature = "", argumentNames: [String] = []) {
            self.name = name
            self.signature = signature
            self.argumentNames = argumentNames
        }
    }
}

/// The call a method handler is answering, and how to answer it later.
///
/// Lives on the connection's queue, like the handler.
public final class MethodContext {
    /// The incoming call.
    public let message: Message
    public let connection: Connection
    /// The object path called.
    public let path: ObjectPath
    /// The interface resolved for the call (filled in when the call named none).
    public let interface: String
    public let member: String
    /// The unique name of the caller.
    public var sender: String? { message.sender }

    let outSignature: Signature
    private(set) var deferred: DeferredReply?
    /// True once `reply(copying:)` sent the reply: the handler's return value is ignored.
    private(set) var replied = false

    /// Announces what the call changed; a deferred reply runs it before it is sent, as `run` does
    /// before an immediate one.
    let beforeReply: () -> Void

    init(message: Message, connection: Connection, path: ObjectPath, interface: String, member: String, outSignature: Signature,
         beforeReply: @escaping () -> Void = {}) {
        self.message = message
        self.connection = connection
        self.path = path
        self.interface = interface
        self.member = member
        self.outSignature = outSignature
        self.beforeReply = beforeReply
    }

    /// Takes over the reply: the handler's return value is ignored and the caller gets the reply when
    /// `DeferredReply.succeed` or `fail` is called, once. A `DeferredReply` released unanswered sends
    /// `org.freedesktop.DBus.Error.Failed`, so every call gets exactly one reply.
    public func deferReply() -> DeferredReply {
        if let deferred { return deferred }
        let reply = DeferredReply(call: message, connection: connection, outSignature: outSignature,
                                  description: "\(interface).\(member)", beforeReply: beforeReply)
        deferred = reply
        return reply
    }

    /// Answers now with a copy of `template`'s body (see `Message.replyTemplate`); the handler's
    /// return value is then ignored. Nothing is sent when the caller asked for no reply.
    func reply(copying template: Message) throws {
        replied = true
        guard !message.noReplyExpected, connection.isConnected else { return }
        try connection.send(try message.methodReturn(copying: template))
    }
}

/// A reply to be sent later; see `MethodContext.deferReply()`. Use it on the connection's queue.
/// `@unchecked Sendable` so that it can travel to the queue in a block; it is used only there.
public final class DeferredReply: @unchecked Sendable {
    private let call: Message
    private let connection: Connection
    private let outSignature: Signature
    private let description: String
    private let beforeReply: () -> Void
    private var answered = false

    init(call: Message, connection: Connection, outSignature: Signature, description: String, beforeReply: @escaping () -> Void) {
        self.call = call.replyHandle()
        self.connection = connection
        self.outSignature = outSignature
        self.description = description
        self.beforeReply = beforeReply
    }

    /// Sends the method return with `values`, which must match the method's out signature (else the
    /// caller gets `Failed` naming both signatures).
    public func succeed(_ values: [DBusValue] = []) {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        guard claim() else { return }
        // what the call changed (CanGoNext when a track was added) before its reply, as for an
        // immediate reply; it otherwise went out after it, on a turn of the queue of its own
        beforeReply()
        sendReply(call: call, connection: connection, outSignature: outSignature, description: description, result: .success(values))
    }

    /// Sends `error` as the error reply.
    public func fail(_ error: any Error) {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        guard claim() else { return }
        beforeReply()
        sendReply(call: call, connection: connection, outSignature: outSignature, description: description, result: .failure(DBusError(error)))
    }

    private func claim() -> Bool {
        guard !answered else {
            connection.logger.warning("\(description): a second reply was dropped (every call gets exactly one)")
            return false
        }
        answered = true
        return true
    }

    deinit {
        guard !answered else { return }
        let call = self.call, connection = self.connection, outSignature = self.outSignature, description = self.description
        connection.queue.asyncConfined {
            sendReply(call: call, connection: connection, outSignature: outSignature, description: description,
                      result: .failure(.failed("\(description) was dropped without a reply")))
        }
    }
}

/// Sends the one reply to `call` (unless it asked for none). Return values that do not match the
/// out signature become `Failed`: libdbus would accept them, but the caller would get the wrong types.
/// `description` (the method, for diagnostics) is made only when one is written.
func sendReply(call: Message, connection: Connection, outSignature: Signature, description: @autoclosure () -> String,
               result: Result<[DBusValue], DBusError>) {
    guard !call.noReplyExpected, connection.isConnected else { return }
    do {
        let reply: Message
        switch result {
        case .success(let values):
            if values.signature != outSignature {
                connection.logger.error("\(description()) returned '\(values.signature)' but declares '\(outSignature)'")
                reply = try call.errorReply(.failed("\(description()) produced a reply of signature '\(values.signature)' instead of '\(outSignature)'"))
            } else {
                do {
                    reply = try call.methodReturn(values)
                } catch {
                    connection.logger.error("\(description()): invalid reply values: \(error)")
                    reply = try call.errorReply(.failed("\(description()) produced an invalid reply: \(DBusError(error).message)"))
                }
            }
        case .failure(let error):
            reply = try call.errorReply(error)
        }
        try connection.send(reply)
    } catch {
        connection.logger.error("\(description()): reply not sent: \(error)")
    }
}
