import DBus
import PlayerModel

/// Our own D-Bus errors, `io.github.tonearm.Error.*`, each with a message a person can act on.
struct ServiceError: Error, DBusErrorConvertible, CustomStringConvertible {
    var description: String { message }
    var name: String
    var message: String
    var dbusError: DBusError { DBusError(name: "io.github.tonearm.Error." + name, message: message) }

    init(_ name: String, _ message: String) {
        self.name = name
        self.message = message
    }

    init(_ error: ItemError) {
        self.init(Self.name(of: error.kind), error.message)
    }

    init(_ error: PlayerError) {
        switch error.code {
        case .noSuchItem: self.init("NoSuchTrack", error.message)
        case .noCurrentItem: self.init("NoCurrentTrack", error.message)
        case .rateOutOfRange: self.init("RateOutOfRange", error.message)
        case .rateNotSupported: self.init("RateNotSupported", error.message)
        case .retryBudgetExhausted: self.init("RetryBudgetExhausted", error.message)
        case .nothingToRetry: self.init("NothingToRetry", error.message)
        case .queueFull: self.init("QueueFull", error.message)
        }
    }

    /// The error name of an item error's kind (ItemError and the ItemFailed signal use it too).
    static func name(of kind: ItemError.Kind) -> String {
        switch kind {
        case .notFound: "FileNotFound"
        case .permission: "PermissionDenied"
        case .unsupportedFormat: "UnsupportedFormat"
        case .missingDecoder: "MissingDecoder"
        case .decode: "DecodeError"
        case .network: "NetworkError"
        case .output: "OutputError"
        case .invalidURI: "InvalidURI"
        case .unsupportedScheme: "UnsupportedScheme"
        case .other: "Failed"
        case .engineStalled: "EngineStalled"
        }
    }
}
