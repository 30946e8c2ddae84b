import CDBus

/// A D-Bus message: method call, method return, error or signal.
///
/// Wraps a `DBusMessage *` and owns one reference to it (`dbus_message_unref` in `deinit`). Header
/// fields are read on demand; `arguments()` decodes the body. Messages are not shared across threads.
public final class Message {
    /// The four message types (`DBUS_MESSAGE_TYPE_*`).
    public enum Kind: Int32, Sendable {
        case methodCall = 1, methodReturn = 2, error = 3, signal = 4
    }

    /// The wrapped `DBusMessage *`; this object owns one reference.
    let raw: OpaquePointer

    /// True once the message was sent or when it was received: libdbus has locked it, and appending
    /// to it or changing its header would abort (dbus-message.c `_dbus_message_iter_append_check`).
    public internal(set) var isLocked: Bool

    /// Adopts a reference the caller owns: from `dbus_message_new_*` (unlocked), or a received reply
    /// from `dbus_pending_call_steal_reply` / `send_with_reply_and_block` (locked).
    init(adopting raw: OpaquePointer, locked: Bool = false) {
        self.raw = raw
        self.isLocked = locked
    }

    /// Takes a new reference (`dbus_message_ref`) to a received message libdbus lends us (filter functions).
    init(retaining raw: OpaquePointer) {
        self.raw = dbus_message_ref(raw)
        self.isLocked = true
    }

    deinit { dbus_message_unref(raw) }

    // MARK: Creating

    /// A method call (`dbus_message_new_method_call`). Names are validated first: libdbus aborts on
    /// invalid ones. `destination` nil sends to no particular name (peer-to-peer).
    public static func methodCall(
        destination: String?, path: ObjectPath, interface: String?, member: String, arguments: [DBusValue] = [],
        noReplyExpected: Bool = false
    ) throws -> Message {
        if let destination { try validateName(destination, .busName) }
        if let interface { try validateName(interface, .interface) }
        try validateName(member, .member)
        guard let raw = dbus_message_new_method_call(destination, path.rawValue, interface, member) else {
            fatalError("libdbus: out of memory in dbus_message_new_method_call")
        }
        let message = Message(adopting: raw)
        if noReplyExpected { dbus_message_set_no_reply(raw, 1) }
        try message.append(arguments)
        return message
    }

    /// A signal (`dbus_message_new_signal`), names validated first. With a `destination` (a unique
    /// name) the bus delivers it to that connection only (`dbus_message_set_destination`).
    public static func signal(path: ObjectPath, interface: String, member: String, arguments: [DBusValue] = [],
                              destination: String? = nil) throws -> Message {
        try validateName(interface, .interface)
        try validateName(member, .member)
        if let destination { try validateName(destination, .busName) }
        guard let raw = dbus_message_new_signal(path.rawValue, interface, member) else {
            fatalError("libdbus: out of memory in dbus_message_new_signal")
        }
        let message = Message(adopting: raw)
        if let destination { checkMemory(dbus_message_set_destination(raw, destination), "dbus_message_set_destination") }
        try message.append(arguments)
        return message
    }

    /// `org.freedesktop.DBus.Properties.PropertiesChanged` from `path` for `interface`, whose name
    /// was validated when its table was registered, with `changed` and `invalidated` each checked
    /// against the table already (`ExportedObject`): nothing is validated again.
    static func propertiesChanged(path: ObjectPath, interface: String, changed: [DBusValue.DictionaryEntry],
                                  invalidated: [String]) -> Message {
        guard let raw = dbus_message_new_signal(path.rawValue, "org.freedesktop.DBus.Properties", "PropertiesChanged") else {
            fatalError("libdbus: out of memory in dbus_message_new_signal")
        }
        encodeValidated([.string(interface), .dictionary(key: .string, value: .variant, changed), .stringArray(invalidated)], into: raw)
        return Message(adopting: raw)
    }

    /// An unlocked copy with serial 0 of a message that was never sent (`dbus_message_copy`:
    /// header and body bytes copied as they are, nothing encoded again); `Connection.send` gives
    /// it a serial of its own.
    func copy() -> Message {
        guard let raw = dbus_message_copy(raw) else { fatalError("libdbus: out of memory in dbus_message_copy") }
        return Message(adopting: raw)
    }

    /// The method return for this call (`dbus_message_new_method_return`), with `arguments`.
    /// Throws for a message that is not a received method call.
    public func methodReturn(_ arguments: [DBusValue] = []) throws -> Message {
        try checkRepliable()
        guard let raw = dbus_message_new_method_return(raw) else {
            fatalError("libdbus: out of memory in dbus_message_new_method_return")
        }
        let reply = Message(adopting: raw)
        try reply.append(arguments)
        return reply
    }

    /// A method-return body to be sent many times (`dbus_message_new` of a method return, with
    /// `arguments` appended): `methodReturn(copying:)` copies its bytes into each reply, so the
    /// arguments are encoded and validated once. Never sent itself.
    static func replyTemplate(_ arguments: [DBusValue]) throws -> Message {
        guard let raw = dbus_message_new(Kind.methodReturn.rawValue) else {
            fatalError("libdbus: out of memory in dbus_message_new")
        }
        let template = Message(adopting: raw)
        try template.append(arguments)
        return template
    }

    /// The method return for this call with the body of `template`: `dbus_message_copy` copies
    /// the header and body bytes as they are (nothing is encoded again), then the reply serial,
    /// the destination and NO_REPLY_EXPECTED are set as `dbus_message_new_method_return` sets them
    /// (dbus-message.c 1.14). Throws for a message that is not a received method call.
    func methodReturn(copying template: Message) throws -> Message {
        try checkRepliable()
        guard let copy = dbus_message_copy(template.raw) else { fatalError("libdbus: out of memory in dbus_message_copy") }
        let reply = Message(adopting: copy)
        checkMemory(dbus_message_set_reply_serial(copy, serial), "dbus_message_set_reply_serial")
        if let sender = dbus_message_get_sender(raw) {
            checkMemory(dbus_message_set_destination(copy, sender), "dbus_message_set_destination")
        }
        dbus_message_set_no_reply(copy, 1)
        return reply
    }

    /// The error reply for this call (`dbus_message_new_error`). An invalid error name becomes
    /// `org.freedesktop.DBus.Error.Failed` (libdbus aborts on it) with the name kept in the message.
    /// Throws for a message that is not a received method call.
    public func errorReply(_ error: DBusError) throws -> Message {
        try checkRepliable()
        var name = error.name
        var text = error.message.dbusSanitized
        if !isValidName(name, .errorName) {
            text = "\(name.dbusSanitized): \(text)"
            name = DBusError.Name.failed
        }
        guard let raw = dbus_message_new_error(raw, name, text) else {
            fatalError("libdbus: out of memory in dbus_message_new_error")
        }
        return Message(adopting: raw)
    }

    /// A body-less copy of a received method call that is replied to like the call itself (same
    /// sender, serial and no-reply flag). A deferred reply keeps this, not the call: libdbus counts a
    /// received message against the connection's max_received_size until it is freed, so holding a
    /// 1 MiB call would stop the connection reading (dbus-connection.c, dbus_connection_set_max_received_size).
    func replyHandle() -> Message {
        // a received call always has a path and a member (the bus refuses it otherwise)
        guard kind == .methodCall, serial != 0, let path = dbus_message_get_path(raw), let member = dbus_message_get_member(raw),
              let raw = dbus_message_new_method_call(nil, path, nil, member)
        else { return self }
        let handle = Message(adopting: raw)
        if let sender = dbus_message_get_sender(self.raw) { dbus_message_set_sender(raw, sender) }
        dbus_message_set_serial(raw, serial)
        dbus_message_set_no_reply(raw, noReplyExpected ? 1 : 0)
        return handle
    }

    // A reply to a message without a serial (never sent or received) aborts in
    // dbus_message_set_reply_serial ("reply_serial != 0"): dbus-message.c.
    private func checkRepliable() throws {
        guard kind == .methodCall, serial != 0 else {
            throw DBusError.invalidArgs("only a received method call can be replied to (this is a \(kind) with serial \(serial))")
        }
    }

    /// Appends arguments to the body; validated first, so on a throw nothing was appended.
    public func append(_ arguments: [DBusValue]) throws {
        guard !arguments.isEmpty else { return }
        guard !isLocked else { throw DBusError.invalidArgs("cannot append to a message that was sent or received") }
        try encode(arguments, into: raw)
    }

    // MARK: Reading

    /// The body decoded as values (`dbus_message_iter_*`).
    public func arguments() throws -> [DBusValue] { try decodeArguments(of: raw) }

    /// The first `count` arguments decoded; the rest are not read.
    func arguments(prefix count: Int) throws -> [DBusValue] { try decodeArguments(of: raw, limit: count) }

    /// The signature of the variant's content at argument `index`, read without reading the value.
    func variantContentSignature(argument index: Int) -> String? {
        DBus.variantContentSignature(of: raw, argument: index)
    }

    /// The message type (`dbus_message_get_type`).
    public var kind: Kind { Kind(rawValue: dbus_message_get_type(raw)) ?? .error }
    /// The unique name of the sender (`dbus_message_get_sender`).
    public var sender: String? { dbus_message_get_sender(raw).map { String(cString: $0) } }
    /// Header fields (`dbus_message_get_destination`, `_path`, `_interface`, `_member`); strings are copied.
    public var destination: String? { dbus_message_get_destination(raw).map { String(cString: $0) } }
    public var path: ObjectPath? { dbus_message_get_path(raw).map { ObjectPath(unchecked: String(cString: $0)) } }
    public var interface: String? { dbus_message_get_interface(raw).map { String(cString: $0) } }
    public var member: String? { dbus_message_get_member(raw).map { String(cString: $0) } }
    /// The error name of an error message (`dbus_message_get_error_name`).
    public var errorName: String? { dbus_message_get_error_name(raw).map { String(cString: $0) } }
    /// The body's signature (`dbus_message_get_signature`); empty when there are no arguments.
    public var signature: Signature { Signature(unchecked: dbus_message_get_signature(raw).map { String(cString: $0) } ?? "") }
    /// The serial (`dbus_message_get_serial`); 0 until sent.
    public var serial: UInt32 { dbus_message_get_serial(raw) }
    /// The serial of the call this replies to (`dbus_message_get_reply_serial`).
    public var replySerial: UInt32 { dbus_message_get_reply_serial(raw) }
    /// True when the caller asked for no reply (`dbus_message_get_no_reply`).
    public var noReplyExpected: Bool { dbus_message_get_no_reply(raw) != 0 }

    /// For an error message, the error it carries (name, and the first argument as message).
    public var error: DBusError? {
        guard kind == .error else { return nil }
        let text = (try? arguments(prefix: 1))?.first?.stringValue ?? ""
        return DBusError(name: errorName ?? DBusError.Name.failed, message: text)
    }

    /// True for a signal with this interface and member.
    public func isSignal(interface: String, member: String) -> Bool {
        kind == .signal && self.interface == interface && self.member == member
    }
}

extension Message: CustomStringConvertible {
    public var description: String {
        "\(kind) \(interface ?? "-").\(member ?? errorName ?? "-") path=\(path?.rawValue ?? "-") sig=\(signature) serial=\(serial)"
    }
}
