import DBus

/// Why a client call did not do what was asked. One `Code` per way it can go wrong, each with one
/// exit status in the `tonearm` command (docs/command-line.md).
public struct ClientError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure. A struct, so that codes can be added without breaking a `switch`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// No session bus: `DBUS_SESSION_BUS_ADDRESS` unset, or nothing listens there.
        public static let noBus = Code("noBus")
        /// The bus is there, but no Tonearm service owns a name on it (and none can be activated),
        /// or it left while we talked to it.
        public static let noService = Code("noService")
        /// The service answered with a D-Bus error; `dbusErrorName` names it.
        public static let service = Code("service")
        /// The service did not answer within the call's timeout.
        public static let noReply = Code("noReply")
        /// The service answered, but what was asked cannot be done in its current state (no such
        /// queue entry, nothing current to seek in, a position past the end).
        public static let refused = Code("refused")
        /// A reply whose type is not the one the interface declares.
        public static let unexpectedReply = Code("unexpectedReply")
    }

    public var code: Code
    /// What went wrong, naming the thing that is wrong; for `.service` the service's own message.
    public var message: String
    /// The D-Bus error name when the service (or the bus) answered with one.
    public var dbusErrorName: String?

    public init(_ code: Code, _ message: String, dbusErrorName: String? = nil) {
        self.code = code
        self.message = message
        self.dbusErrorName = dbusErrorName
    }

    public var description: String { dbusErrorName.map { "\(message) (\($0))" } ?? message }

    /// The one place a D-Bus error reply becomes a `ClientError`: the bus's "nobody owns that name"
    /// answers are `.noService`, a timeout `.noReply`, anything else the service's own error.
    static func from(_ error: any Error, calling what: String) -> ClientError {
        if let error = error as? ClientError { return error }
        let dbus = DBusError(error)
        switch dbus.name {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
             DBusError.Name.disconnected:
            return ClientError(.noService, "the Tonearm service went away while calling \(what): \(dbus.message)",
                               dbusErrorName: dbus.name)
        case _ where dbus.name.hasPrefix("org.freedesktop.DBus.Error.Spawn."):
            return ClientError(.noService, "the bus could not start the Tonearm service: \(dbus.message)", dbusErrorName: dbus.name)
        case DBusError.Name.noReply, "org.freedesktop.DBus.Error.Timeout":
            return ClientError(.noReply, "the Tonearm service did not answer \(what): \(dbus.message)", dbusErrorName: dbus.name)
        default:
            return ClientError(.service, dbus.message, dbusErrorName: dbus.name)
        }
    }
}
