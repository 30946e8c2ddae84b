// Only cases whose payload is more than one word are `indirect` (boxed), never the whole enum: with
// every case boxed, or with payloads of several words, Swift keeps the case tag in spare bits of a
// pointer, which LeakSanitizer cannot read as a pointer, so every such value held long (the announced
// properties) was reported as leaked (llvm/llvm-project#56751). With one-word payloads, the 64-bit
// number cases leave no spare bits, so the tag gets a byte of its own and every pointer stays plain
// (MemoryLayout<DBusValue>.size is 9; ValueTests checks the layout).

/// A D-Bus value with its type: what goes into a message and what comes out of one.
///
/// Containers carry the signature of their elements, so that an empty array still has a type.
/// `signature` is computed; `validate()` checks what libdbus would abort on (an array element of
/// another type than declared, a dictionary key that is not basic, nesting too deep) before encoding.
public enum DBusValue: Hashable, Sendable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    /// A string; NUL characters are dropped when it is sent (see `String.dbusSanitized`).
    indirect case string(String)
    indirect case objectPath(ObjectPath)
    indirect case signature(Signature)
    /// `a<element>`: every value must have the signature `element`.
    indirect case array(element: Signature, [DBusValue])
    /// `a{<key><value>}`: keys must be of a basic type. Entries keep their order.
    indirect case dictionary(key: Signature, value: Signature, [DictionaryEntry])
    /// `(...)`: one or more fields.
    case structure([DBusValue])
    /// `ao` held as the paths themselves (or as numbers under one prefix), with no value per
    /// element: what a track list of 10,000 ids is built and encoded as. `objectPathArray` makes
    /// one and decoding an `ao` gives one, so values compare equal whichever side made them;
    /// `arrayValue` reads it as values.
    case objectPaths(ObjectPathList)
    /// `v`: any single value with its type.
    indirect case variant(DBusValue)

    /// One entry of a `dictionary`.
    public struct DictionaryEntry: Hashable, Sendable {
        public var key: DBusValue
        public var value: DBusValue
        public init(_ key: DBusValue, _ value: DBusValue) {
            self.key = key
            self.value = value
        }
    }

    /// The type code of a basic value (`s` for a string), nil for a container or a variant.
    var basicTypeCode: UInt8? {
        switch self {
        case .byte: UInt8(ascii: "y")
        case .bool: UInt8(ascii: "b")
        case .int16: UInt8(ascii: "n")
        case .uint16: UInt8(ascii: "q")
        case .int32: UInt8(ascii: "i")
        case .uint32: UInt8(ascii: "u")
        case .int64: UInt8(ascii: "x")
        case .uint64: UInt8(ascii: "t")
        case .double: UInt8(ascii: "d")
        case .string: UInt8(ascii: "s")
        case .objectPath: UInt8(ascii: "o")
        case .signature: UInt8(ascii: "g")
        case .array, .dictionary, .structure, .variant, .objectPaths: nil
        }
    }

    /// The value's D-Bus type signature (one complete type).
    public var signature: Signature { Signature(unchecked: signatureText) }

    var signatureText: String {
        if let code = basicTypeCode { return String(UnicodeScalar(code)) }
        switch self {
        case .byte, .bool, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .string, .objectPath, .signature:
            return ""  // basic: answered above from basicTypeCode
        case .array(let element, _): return "a" + element.rawValue
        case .objectPaths: return "ao"
        case .dictionary(let key, let value, _): return "a{" + key.rawValue + value.rawValue + "}"
        case .structure(let fields): return "(" + fields.map(\.signatureText).joined() + ")"
        case .variant: return "v"
        }
    }
}

// MARK: - Convenience constructors

extension DBusValue {
    /// A string made from bytes that may not be UTF-8 (tags): see `String(dbusRepairing:)`.
    public static func string<Bytes: Sequence>(repairing bytes: Bytes) -> DBusValue where Bytes.Element == UInt8 {
        .string(String(dbusRepairing: bytes))
    }

    /// `as`
    public static func stringArray(_ strings: [String]) -> DBusValue { .array(element: .string, strings.map { .string($0) }) }

    /// `ao`
    public static func objectPathArray(_ paths: [ObjectPath]) -> DBusValue { .objectPaths(ObjectPathList(paths)) }

    /// `ao` of `prefix/n` for each number `n`, written out only when encoded (see `ObjectPathList`).
    public static func objectPathArray(numbered numbers: [UInt64], under prefix: ObjectPath) -> DBusValue {
        .objectPaths(ObjectPathList(numbered: numbers, under: prefix))
    }

    /// `a{sv}` with entries sorted by key, so that equal dictionaries encode and compare equal.
    /// Values are wrapped in `.variant` unless they already are one.
    public static func vardict(_ entries: [String: DBusValue]) -> DBusValue {
        .dictionary(key: .string, value: .variant, entries.sorted { $0.key < $1.key }.map { key, value in
            DictionaryEntry(.string(key), value.isVariant ? value : .variant(value))
        })
    }

    /// `aa{sv}`
    public static func vardictArray(_ dictionaries: [[String: DBusValue]]) -> DBusValue {
        .array(element: .init(unchecked: "a{sv}"), dictionaries.map { vardict($0) })
    }

    var isVariant: Bool { if case .variant = self { true } else { false } }
}

// MARK: - Accessors

extension DBusValue {
    /// The content of a variant, recursively; any other value is returned as it is.
    public var unwrappingVariant: DBusValue {
        if case .variant(let inner) = self { inner.unwrappingVariant } else { self }
    }

    /// The payload when the value, after unwrapping variants, has that type; nil otherwise.
    public var stringValue: String? { if case .string(let v) = unwrappingVariant { v } else { nil } }
    public var boolValue: Bool? { if case .bool(let v) = unwrappingVariant { v } else { nil } }
    public var int32Value: Int32? { if case .int32(let v) = unwrappingVariant { v } else { nil } }
    public var uint32Value: UInt32? { if case .uint32(let v) = unwrappingVariant { v } else { nil } }
    public var int64Value: Int64? { if case .int64(let v) = unwrappingVariant { v } else { nil } }
    public var uint64Value: UInt64? { if case .uint64(let v) = unwrappingVariant { v } else { nil } }
    public var doubleValue: Double? { if case .double(let v) = unwrappingVariant { v } else { nil } }
    public var objectPathValue: ObjectPath? { if case .objectPath(let v) = unwrappingVariant { v } else { nil } }

    /// The elements of an array (not of a dictionary).
    public var arrayValue: [DBusValue]? {
        switch unwrappingVariant {
        case .array(_, let values): values
        case .objectPaths(let paths): paths.map { .objectPath($0) }
        default: nil
        }
    }

    /// The fields of a struct.
    public var structureValue: [DBusValue]? { if case .structure(let v) = unwrappingVariant { v } else { nil } }

    /// An `as` as strings.
    public var stringArrayValue: [String]? { arrayValue.flatMap { items in
        let strings = items.compactMap(\.stringValue)
        return strings.count == items.count ? strings : nil
    } }

    /// A dictionary with string keys (`a{s*}`, typically `a{sv}`), keyed by string; values as they are
    /// (still wrapped in `.variant` for `a{sv}`).
    public var stringKeyedDictionary: [String: DBusValue]? {
        guard case .dictionary(_, _, let entries) = unwrappingVariant else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard let key = entry.key.stringValue else { return nil }
            result[key] = entry.value
        }
        return result
    }
}

// MARK: - Validation

extension DBusValue {
    /// Checks everything libdbus would abort on if this value were appended to a message.
    public func validate() throws {
        switch self {
        case .byte, .bool, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .string, .objectPath, .signature,
             .objectPaths:
            return  // an ObjectPath is valid by construction
        case .array(let element, let items):
            guard element.isSingleCompleteType else {
                throw DBusError.invalidArgs("array element signature '\(element)' is not a single complete type")
            }
            // an array of a basic type (10,000 track ids) is checked by case, without building a
            // signature string per element; a basic value is valid as it is
            if let code = element.rawValue.utf8.first, element.rawValue.utf8.count == 1, code != UInt8(ascii: "v") {
                for item in items where item.basicTypeCode != code {
                    throw DBusError.invalidArgs("array of '\(element)' holds a value of type '\(item.signatureText)'")
                }
                return
            }
            // an array of dictionaries (GetTracksMetadata's aa{sv}) compares each one's key and
            // value signatures with the element's, without building a signature string per item
            let dictionary = element.dictionaryParts
            for item in items {
                if let dictionary, case .dictionary(let key, let value, _) = item,
                   key.rawValue == dictionary.key, value.rawValue == dictionary.value {
                    try item.validate()
                    continue
                }
                guard item.signatureText == element.rawValue else {
                    throw DBusError.invalidArgs("array of '\(element)' holds a value of type '\(item.signatureText)'")
                }
                try item.validate()
            }
        case .dictionary(let key, let value, let entries):
            guard key.isBasicType else { throw DBusError.invalidArgs("dictionary key type '\(key)' is not a basic type") }
            guard value.isSingleCompleteType else {
                throw DBusError.invalidArgs("dictionary value signature '\(value)' is not a single complete type")
            }
            // a{sv} (metadata, GetAll) is checked by case, without a signature string per entry
            if let keyCode = key.rawValue.utf8.first, value == .variant {
                for entry in entries {
                    guard entry.key.basicTypeCode == keyCode, case .variant(let inner) = entry.value else {
                        throw DBusError.invalidArgs(
                            "dictionary a{\(key)v} holds an entry of types '\(entry.key.signatureText)' → '\(entry.value.signatureText)'")
                    }
                    try inner.validateInVariant()
                }
                return
            }
            for entry in entries {
                guard entry.key.signatureText == key.rawValue, entry.value.signatureText == value.rawValue else {
                    throw DBusError.invalidArgs(
                        "dictionary a{\(key)\(value)} holds an entry of types '\(entry.key.signatureText)' → '\(entry.value.signatureText)'")
                }
                try entry.value.validate()
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw DBusError.invalidArgs("a struct needs at least one field") }
            for field in fields { try field.validate() }
        case .variant(let inner):
            try inner.validateInVariant()
        }
    }

    /// Validates a variant's content: the value, and its signature on its own (nesting depth,
    /// length), which a basic value's one letter always passes.
    func validateInVariant() throws {
        try validate()
        guard basicTypeCode == nil else { return }
        // an array of a basic type (`as`, xesam:artist) is two letters: always a valid signature
        if case .array(let element, _) = self, element.rawValue.utf8.count == 1 { return }
        _ = try Signature(validating: signatureText)
    }
}

extension Array where Element == DBusValue {
    /// The signature of these values as message arguments, concatenated.
    public var signature: Signature { Signature(unchecked: map(\.signatureText).joined()) }

    /// Validates each value and the whole signature (at most 255 bytes, nesting at most 32 deep:
    /// `dbus_signature_validate`).
    func validateAsArguments() throws {
        for value in self { try value.validate() }
        _ = try Signature(validating: map(\.signatureText).joined())
    }
}
