import CDBus

/// An error as D-Bus names it: an error name (`org.freedesktop.DBus.Error.InvalidArgs`) and a message a
/// person can act on. Thrown by every API of this module and sent as the error reply when a method
/// handler throws it.
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The D-Bus error name, for example `org.freedesktop.DBus.Error.UnknownMethod`.
    public var name: String
    /// The human-readable message.
    public var message: String

    /// Creates an error. An invalid `name` is replaced by `org.freedesktop.DBus.Error.Failed` when the
    /// error is sent, because `dbus_message_new_error` aborts on an invalid error name.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name): \(message)" }
}

extension DBusError {
    /// Well-known error names from the D-Bus specification (`dbus-protocol.h` `DBUS_ERROR_*`).
    public enum Name {
        public static let failed = "org.freedesktop.DBus.Error.Failed"
        public static let noMemory = "org.freedesktop.DBus.Error.NoMemory"
        public static let noReply = "org.freedesktop.DBus.Error.NoReply"
        public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
        public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
        public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
        public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
        public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
        public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
        public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
        public static let notSupported = "org.freedesktop.DBus.Error.NotSupported"
        public static let invalidSignature = "org.freedesktop.DBus.Error.InvalidSignature"
        public static let badAddress = "org.freedesktop.DBus.Error.BadAddress"
    }

    /// An error with the standard name of the same spelling and `message`.
    public static func failed(_ message: String) -> DBusError { .init(name: Name.failed, message: message) }
    public static func invalidArgs(_ message: String) -> DBusError { .init(name: Name.invalidArgs, message: message) }
    public static func unknownMethod(_ message: String) -> DBusError { .init(name: Name.unknownMethod, message: message) }
    public static func unknownObject(_ message: String) -> DBusError { .init(name: Name.unknownObject, message: message) }
    public static func unknownInterface(_ message: String) -> DBusError { .init(name: Name.unknownInterface, message: message) }
    public static func unknownProperty(_ message: String) -> DBusError { .init(name: Name.unknownProperty, message: message) }
    public static func propertyReadOnly(_ message: String) -> DBusError { .init(name: Name.propertyReadOnly, message: message) }
    public static func notSupported(_ message: String) -> DBusError { .init(name: Name.notSupported, message: message) }
    public static func disconnected(_ message: String) -> DBusError { .init(name: Name.disconnected, message: message) }
    public static func noReply(_ message: String) -> DBusError { .init(name: Name.noReply, message: message) }
}

/// A Swift error that knows its D-Bus form. Conform your service's error enum to it and throw it from
/// method handlers and property setters; the dispatcher sends `dbusError` as the error reply.
/// Any other error is sent as `org.freedesktop.DBus.Error.Failed` with `String(describing:)` as message.
public protocol DBusErrorConvertible: Error {
    var dbusError: DBusError { get }
}

extension DBusError {
    /// The D-Bus form of any Swift error, as the dispatcher sends it.
    public init(_ error: any Error) {
        switch error {
        case let error as DBusError: self = error
        case let error as any DBusErrorConvertible: self = error.dbusError
        default: self = .failed(String(describing: error))
        }
    }
}

/// The one place where libdbus's C `DBusError` becomes a Swift `DBusError`.
///
/// Calls `body` with an initialised C `DBusError` (`dbus_error_init`), frees it (`dbus_error_free`) in
/// `defer`, and throws when it is set. `body` returns nil or false on failure, as libdbus functions do;
/// a failure without a set error becomes `org.freedesktop.DBus.Error.Failed` with `what` as message.
func withCError<T>(_ what: @autoclosure () -> String, _ body: (UnsafeMutablePointer<CDBus.DBusError>) -> T?) throws -> T {
    var cError = CDBus.DBusError()
    dbus_error_init(&cError)
    defer { dbus_error_free(&cError) }
    let result = body(&cError)
    if dbus_error_is_set(&cError) != 0 {
        throw DBusError(
            name: cError.name.map { String(cString: $0) } ?? DBusError.Name.failed,
            message: cError.message.map { String(cString: $0) } ?? what())
    }
    guard let result else { throw DBusError.failed(what()) }
    return result
}

/// `withCError` for libdbus functions that return `dbus_bool_t`.
func withCErrorBool(_ what: @autoclosure () -> String, _ body: (UnsafeMutablePointer<CDBus.DBusError>) -> dbus_bool_t) throws {
    _ = try withCError(what()) { body($0) != 0 ? () : nil }
}

/// Traps on a `FALSE` that libdbus returns only when memory runs out: libdbus's own policy
/// (`_dbus_warn_check_failed`) and nothing a player can recover from.
@inline(__always)
func checkMemory(_ ok: dbus_bool_t, _ function: StaticString) {
    if ok == 0 { fatalError("libdbus: out of memory in \(function)") }
}
