import CDBus
#if canImport(Glibc)
import Glibc
#endif

// D-Bus type codes. dbus-protocol.h defines them as `((int) 's')`, a cast that Swift does not import;
// the values are fixed by the D-Bus specification, so they are spelled here rather than shimmed.
enum TypeCode {
    static let invalid: Int32 = 0
    static let byte = code("y"), bool = code("b"), int16 = code("n"), uint16 = code("q")
    static let int32 = code("i"), uint32 = code("u"), int64 = code("x"), uint64 = code("t")
    static let double = code("d"), string = code("s"), objectPath = code("o"), signature = code("g")
    static let unixFD = code("h"), array = code("a"), variant = code("v"), structure = code("r")
    static let dictEntry = code("e")

    private static func code(_ c: Unicode.Scalar) -> Int32 { Int32(c.value) }
}

// MARK: - Encoding

/// Appends `values` to `message` (`dbus_message_iter_init_append`, `dbus_message_iter_append_basic`,
/// `dbus_message_iter_open_container` / `close_container`). Values are validated first, so libdbus
/// never sees a type mismatch; nothing is appended when validation throws.
func encode(_ values: [DBusValue], into message: OpaquePointer) throws {
    try values.validateAsArguments()
    encodeValidated(values, into: message)
}

/// Appends `values` that the caller has validated already (each value, and their signature as a
/// whole): `encode` without checking them again.
func encodeValidated(_ values: [DBusValue], into message: OpaquePointer) {
    var iter = DBusMessageIter()
    dbus_message_iter_init_append(message, &iter)
    for value in values { append(value, to: &iter) }
}

private func appendBasic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ type: Int32, _ value: T) {
    var value = value
    checkMemory(dbus_message_iter_append_basic(&iter, type, &value), "dbus_message_iter_append_basic")
}

private func appendString(_ iter: inout DBusMessageIter, _ type: Int32, _ string: String) {
    string.withCString { cString in
        var pointer: UnsafePointer<CChar>? = cString
        checkMemory(dbus_message_iter_append_basic(&iter, type, &pointer), "dbus_message_iter_append_basic")
    }
}

/// A string as `dbusSanitized` sends it, without a copy when it holds no NUL (the common case:
/// strlen then reaches its end), where `dbusSanitized` scanned it in Swift first.
private func appendText(_ iter: inout DBusMessageIter, _ string: String) {
    string.withCString { cString in
        guard strlen(cString) == string.utf8.count else {
            return appendString(&iter, TypeCode.string, string.dbusSanitized)
        }
        var pointer: UnsafePointer<CChar>? = cString
        checkMemory(dbus_message_iter_append_basic(&iter, TypeCode.string, &pointer), "dbus_message_iter_append_basic")
    }
}

private func withContainer(
    _ iter: inout DBusMessageIter, _ type: Int32, _ contained: String?, _ body: (inout DBusMessageIter) -> Void
) {
    var sub = DBusMessageIter()
    let opened: dbus_bool_t
    if let contained {
        opened = contained.withCString { dbus_message_iter_open_container(&iter, type, $0, &sub) }
    } else {
        opened = dbus_message_iter_open_container(&iter, type, nil, &sub)
    }
    checkMemory(opened, "dbus_message_iter_open_container")
    body(&sub)
    checkMemory(dbus_message_iter_close_container(&iter, &sub), "dbus_message_iter_close_container")
}

private func append(_ value: DBusValue, to iter: inout DBusMessageIter) {
    switch value {
    case .byte(let v): appendBasic(&iter, TypeCode.byte, v)
    case .bool(let v): appendBasic(&iter, TypeCode.bool, dbus_bool_t(v ? 1 : 0))
    case .int16(let v): appendBasic(&iter, TypeCode.int16, v)
    case .uint16(let v): appendBasic(&iter, TypeCode.uint16, v)
    case .int32(let v): appendBasic(&iter, TypeCode.int32, v)
    case .uint32(let v): appendBasic(&iter, TypeCode.uint32, v)
    case .int64(let v): appendBasic(&iter, TypeCode.int64, v)
    case .uint64(let v): appendBasic(&iter, TypeCode.uint64, v)
    case .double(let v): appendBasic(&iter, TypeCode.double, v)
    case .string(let v): appendText(&iter, v)
    case .objectPath(let v): appendString(&iter, TypeCode.objectPath, v.rawValue)
    case .signature(let v): appendString(&iter, TypeCode.signature, v.rawValue)
    case .array(let element, let items):
        withContainer(&iter, TypeCode.array, element.rawValue) { sub in
            for item in items { append(item, to: &sub) }
        }
    case .dictionary(let key, let valueType, let entries):
        withContainer(&iter, TypeCode.array, "{" + key.rawValue + valueType.rawValue + "}") { sub in
            for entry in entries {
                withContainer(&sub, TypeCode.dictEntry, nil) { entryIter in
                    append(entry.key, to: &entryIter)
                    append(entry.value, to: &entryIter)
                }
            }
        }
    case .objectPaths(let paths):
        withContainer(&iter, TypeCode.array, "o") { sub in
            paths.forEachCString { cString in
                var pointer: UnsafePointer<CChar>? = cString
                checkMemory(dbus_message_iter_append_basic(&sub, TypeCode.objectPath, &pointer), "dbus_message_iter_append_basic")
            }
        }
    case .structure(let fields):
        withContainer(&iter, TypeCode.structure, nil) { sub in
            for field in fields { append(field, to: &sub) }
        }
    case .variant(let inner):
        withContainer(&iter, TypeCode.variant, inner.signatureText) { sub in append(inner, to: &sub) }
    }
}

// MARK: - Decoding

/// Decodes the arguments of `message`, at most `limit` of them. libdbus validated the message when it
/// arrived, and each value is read with the type the iterator reports, so reading cannot mismatch.
func decodeArguments(of message: OpaquePointer, limit: Int = .max) throws -> [DBusValue] {
    var iter = DBusMessageIter()
    guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
    var values: [DBusValue] = []
    while values.count < limit, dbus_message_iter_get_arg_type(&iter) != TypeCode.invalid {
        values.append(try decodeValue(&iter))
        dbus_message_iter_next(&iter)
    }
    return values
}

/// The signature of the value inside the variant at argument `index`, read without reading the value
/// (`dbus_message_iter_recurse`, `dbus_message_iter_get_signature`); nil when that argument is not a
/// variant. Used to refuse a `Properties.Set` of the wrong type before its value is touched.
func variantContentSignature(of message: OpaquePointer, argument index: Int) -> String? {
    var iter = DBusMessageIter()
    guard dbus_message_iter_init(message, &iter) != 0 else { return nil }
    for _ in 0..<index { guard dbus_message_iter_next(&iter) != 0 else { return nil } }
    guard dbus_message_iter_get_arg_type(&iter) == TypeCode.variant else { return nil }
    var sub = DBusMessageIter()
    dbus_message_iter_recurse(&iter, &sub)
    return iteratorSignature(&sub)
}

/// `dbus_message_iter_get_signature`: the caller owns the returned C string and frees it with `dbus_free`.
private func iteratorSignature(_ iter: inout DBusMessageIter) -> String {
    guard let cSignature = dbus_message_iter_get_signature(&iter) else { fatalError("libdbus: out of memory") }
    defer { dbus_free(cSignature) }
    return String(cString: cSignature)
}

private func readBasic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ initial: T) -> T {
    var value = initial
    dbus_message_iter_get_basic(&iter, &value)
    return value
}

private func readString(_ iter: inout DBusMessageIter) -> String {
    var pointer: UnsafePointer<CChar>? = nil
    dbus_message_iter_get_basic(&iter, &pointer)
    // The pointer is owned by the message; copy at once.
    return pointer.map { String(cString: $0) } ?? ""
}

private func decodeValue(_ iter: inout DBusMessageIter) throws -> DBusValue {
    let type = dbus_message_iter_get_arg_type(&iter)
    switch type {
    case TypeCode.byte: return .byte(readBasic(&iter, UInt8(0)))
    case TypeCode.bool: return .bool(readBasic(&iter, dbus_bool_t(0)) != 0)
    case TypeCode.int16: return .int16(readBasic(&iter, Int16(0)))
    case TypeCode.uint16: return .uint16(readBasic(&iter, UInt16(0)))
    case TypeCode.int32: return .int32(readBasic(&iter, Int32(0)))
    case TypeCode.uint32: return .uint32(readBasic(&iter, UInt32(0)))
    case TypeCode.int64: return .int64(readBasic(&iter, Int64(0)))
    case TypeCode.uint64: return .uint64(readBasic(&iter, UInt64(0)))
    case TypeCode.double: return .double(readBasic(&iter, Double(0)))
    case TypeCode.string: return .string(readString(&iter))
    case TypeCode.objectPath: return .objectPath(ObjectPath(unchecked: readString(&iter)))
    case TypeCode.signature: return .signature(Signature(unchecked: readString(&iter)))
    case TypeCode.array:
        let arraySignature = iteratorSignature(&iter)  // "a…"
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        if dbus_message_iter_get_element_type(&iter) == TypeCode.dictEntry {
            // "a{kv…}": the key is one basic type code, the value the rest.
            let inner = arraySignature.dropFirst(2).dropLast()
            let key = Signature(unchecked: String(inner.prefix(1)))
            let value = Signature(unchecked: String(inner.dropFirst()))
            var entries: [DBusValue.DictionaryEntry] = []
            while dbus_message_iter_get_arg_type(&sub) == TypeCode.dictEntry {
                var entryIter = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &entryIter)
                let k = try decodeValue(&entryIter)
                dbus_message_iter_next(&entryIter)
                let v = try decodeValue(&entryIter)
                entries.append(.init(k, v))
                dbus_message_iter_next(&sub)
            }
            return .dictionary(key: key, value: value, entries)
        }
        if dbus_message_iter_get_element_type(&iter) == TypeCode.objectPath {
            // `ao` always comes out as .objectPaths, as DBusValue.objectPathArray makes it
            var paths: [ObjectPath] = []
            while dbus_message_iter_get_arg_type(&sub) == TypeCode.objectPath {
                paths.append(ObjectPath(unchecked: readString(&sub)))
                dbus_message_iter_next(&sub)
            }
            return .objectPaths(ObjectPathList(paths))
        }
        var items: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&sub) != TypeCode.invalid {
            items.append(try decodeValue(&sub))
            dbus_message_iter_next(&sub)
        }
        return .array(element: Signature(unchecked: String(arraySignature.dropFirst())), items)
    case TypeCode.structure:
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        var fields: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&sub) != TypeCode.invalid {
            fields.append(try decodeValue(&sub))
            dbus_message_iter_next(&sub)
        }
        return .structure(fields)
    case TypeCode.variant:
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        return .variant(try decodeValue(&sub))
    default:
        // Unix fds are never negotiated on our connections; anything else is unknown to this library.
        throw DBusError.notSupported("cannot decode a D-Bus value of type '\(Unicode.Scalar(UInt8(truncatingIfNeeded: type)))'")
    }
}
