import CDBus
#if canImport(Glibc)
import Glibc
#endif

// libdbus aborts the process (`_dbus_warn_check_failed` is fatal by default) when an invalid object path,
// signature, interface, member, bus or error name, or invalid UTF-8 reaches it: dbus-message.c checks
// them with `_dbus_return_val_if_fail`. Every such string goes through one of these checks first, using
// the non-aborting `dbus_validate_*` functions.

/// A validated D-Bus object path (`/org/mpris/MediaPlayer2`).
public struct ObjectPath: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The path text; always valid.
    public let rawValue: String

    /// Validates `string` with `dbus_validate_path`; nil when it is not a valid object path.
    public init?(_ string: String) {
        guard (try? Self.validate(string)) != nil else { return nil }
        rawValue = string
    }

    /// Validates `string` with `dbus_validate_path`; throws `InvalidArgs` naming the problem.
    public init(validating string: String) throws {
        try Self.validate(string)
        rawValue = string
    }

    /// A literal path; an invalid literal is a programmer error and traps.
    public init(stringLiteral value: String) {
        guard let path = ObjectPath(value) else { preconditionFailure("invalid D-Bus object path literal \"\(value)\"") }
        self = path
    }

    init(unchecked: String) { rawValue = unchecked }

    /// `/`, the root path.
    public static let root = ObjectPath(unchecked: "/")

    public var description: String { rawValue }
    public static func < (a: ObjectPath, b: ObjectPath) -> Bool { a.rawValue < b.rawValue }

    /// Appends one element (`[A-Za-z0-9_]+`); nil when `element` is not a valid path element.
    public func appending(_ element: String) -> ObjectPath? {
        guard !element.isEmpty, element.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0)
            || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else { return nil }
        return ObjectPath(rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    /// Appends one element made of `number`'s decimal digits. Always a valid path (digits are
    /// valid element characters: D-Bus specification, "Valid Object Paths"), so it is built
    /// without asking libdbus: a queue of 10,000 tracks has 10,000 such ids to list.
    public func appending(number: UInt64) -> ObjectPath {
        // written into one new string: this runs once per track when a long queue is listed
        let base = rawValue.utf8
        let separator = base.count == 1 ? 0 : 1  // "/" is the only valid path of one byte
        var digitCount = 1
        var scale: UInt64 = 1
        while number / scale >= 10 {
            scale *= 10
            digitCount += 1
        }
        let text = String(unsafeUninitializedCapacity: base.count + separator + digitCount) { buffer in
            var index = buffer.initialize(fromContentsOf: base)
            if separator == 1 {
                buffer[index] = UInt8(ascii: "/")
                index += 1
            }
            while scale > 0 {
                buffer[index] = UInt8(ascii: "0") + UInt8(number / scale % 10)
                index += 1
                scale /= 10
            }
            return index
        }
        return ObjectPath(unchecked: text)
    }

    private static func validate(_ string: String) throws {
        try validateCString(string, kind: "object path") { dbus_validate_path($0, $1) }
    }
}

/// A validated D-Bus type signature (`a{sv}`); may be empty or hold several complete types.
public struct Signature: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The signature text; always valid (`dbus_signature_validate`).
    public let rawValue: String

    /// Validates with `dbus_signature_validate`; nil when invalid.
    public init?(_ string: String) {
        guard (try? Self.validate(string)) != nil else { return nil }
        rawValue = string
    }

    /// Validates with `dbus_signature_validate`; throws `InvalidArgs` (or libdbus's `InvalidSignature`).
    public init(validating string: String) throws {
        try Self.validate(string)
        rawValue = string
    }

    /// A literal signature; an invalid literal is a programmer error and traps.
    public init(stringLiteral value: String) {
        guard let signature = Signature(value) else { preconditionFailure("invalid D-Bus signature literal \"\(value)\"") }
        self = signature
    }

    init(unchecked: String) { rawValue = unchecked }

    public var description: String { rawValue }
    public var isEmpty: Bool { rawValue.isEmpty }

    /// The key and value signatures of a dictionary type `a{kv}`, as text; nil for any other.
    var dictionaryParts: (key: Substring, value: Substring)? {
        guard rawValue.hasPrefix("a{"), rawValue.hasSuffix("}"), rawValue.utf8.count > 4 else { return nil }
        let inner = rawValue.dropFirst(2).dropLast()
        return (inner.prefix(1), inner.dropFirst())
    }

    /// True when the signature is exactly one complete type (`dbus_signature_validate_single`), as an
    /// array element, a variant's content or a property's type must be.
    public var isSingleCompleteType: Bool {
        guard !rawValue.isEmpty else { return false }
        return rawValue.withCString { dbus_signature_validate_single($0, nil) } != 0
    }

    /// True for the basic (non-container) types that may be dictionary keys (`dbus_type_is_basic`).
    public var isBasicType: Bool {
        guard rawValue.utf8.count == 1, let code = rawValue.utf8.first else { return false }
        return dbus_type_is_basic(Int32(code)) != 0
    }

    /// The complete types this signature is made of, in order (`DBusSignatureIter`): `"sa{sv}as"` gives
    /// `["s", "a{sv}", "as"]`.
    public var completeTypes: [Signature] {
        guard !rawValue.isEmpty else { return [] }
        return rawValue.withCString { cString in
            var iter = DBusSignatureIter()
            dbus_signature_iter_init(&iter, cString)
            var types: [Signature] = []
            repeat {
                // dbus_signature_iter_get_signature returns a copy owned by the caller: free with dbus_free.
                guard let part = dbus_signature_iter_get_signature(&iter) else { fatalError("libdbus: out of memory") }
                types.append(Signature(unchecked: String(cString: part)))
                dbus_free(part)
            } while dbus_signature_iter_next(&iter) != 0
            return types
        }
    }

    private static func validate(_ string: String) throws {
        try validateCString(string, kind: "signature") { dbus_signature_validate($0, $1) }
    }
}

extension Signature {
    /// The signature of each basic type, and of `v`.
    public static let byte: Signature = "y"
    public static let bool: Signature = "b"
    public static let int16: Signature = "n"
    public static let uint16: Signature = "q"
    public static let int32: Signature = "i"
    public static let uint32: Signature = "u"
    public static let int64: Signature = "x"
    public static let uint64: Signature = "t"
    public static let double: Signature = "d"
    public static let string: Signature = "s"
    public static let objectPath: Signature = "o"
    public static let signature: Signature = "g"
    public static let variant: Signature = "v"
    /// `a{sv}`, the vardict of MPRIS metadata and of `Properties.GetAll`.
    public static let vardict: Signature = "a{sv}"
}

extension String {
    /// Makes bytes from the outside world (tags, file names) safe for D-Bus: invalid UTF-8 becomes U+FFFD
    /// and NUL bytes are dropped. libdbus aborts on invalid UTF-8 (dbus-message.c
    /// `_dbus_check_is_valid_utf8`) and a NUL would cut a C string short.
    public init<Bytes: Sequence>(dbusRepairing bytes: Bytes) where Bytes.Element == UInt8 {
        self = String(decoding: bytes.lazy.filter { $0 != 0 }, as: UTF8.self)
    }

    /// `init(dbusRepairing:)` for a NUL-terminated C string (for example a GStreamer tag value).
    public init(dbusRepairingCString cString: UnsafePointer<CChar>) {
        self.init(dbusRepairing: UnsafeRawBufferPointer(start: cString, count: strlen(cString)))
    }

    /// This string with NUL characters removed, as it is sent (a Swift `String` is always valid UTF-8,
    /// so NUL is the only character libdbus cannot carry).
    public var dbusSanitized: String {
        utf8.contains(0) ? String(decoding: utf8.lazy.filter { $0 != 0 }, as: UTF8.self) : self
    }
}

// MARK: - Name checks (internal)

enum NameKind: String {
    case busName = "bus name", interface = "interface name", member = "member name", errorName = "error name"
}

/// Throws `InvalidArgs` unless `name` is a valid name of `kind` (`dbus_validate_bus_name`,
/// `dbus_validate_interface`, `dbus_validate_member`, `dbus_validate_error_name`).
func validateName(_ name: String, _ kind: NameKind) throws {
    try validateCString(name, kind: kind.rawValue) { cName, error in
        switch kind {
        case .busName: dbus_validate_bus_name(cName, error)
        case .interface: dbus_validate_interface(cName, error)
        case .member: dbus_validate_member(cName, error)
        case .errorName: dbus_validate_error_name(cName, error)
        }
    }
}

func isValidName(_ name: String, _ kind: NameKind) -> Bool { (try? validateName(name, kind)) != nil }

private func validateCString(
    _ string: String, kind: String,
    _ check: (UnsafePointer<CChar>, UnsafeMutablePointer<CDBus.DBusError>) -> dbus_bool_t
) throws {
    guard !string.utf8.contains(0) else { throw DBusError.invalidArgs("invalid \(kind) \"\(string.dbusSanitized)\": contains NUL") }
    do {
        try string.withCString { cString in try withCErrorBool("invalid \(kind)") { check(cString, $0) } }
    } catch let error as DBusError {
        throw DBusError.invalidArgs("invalid \(kind) \"\(string)\": \(error.message)")
    }
}
