/// A Swift type that stands for one D-Bus type: what a typed table entry (`Method.typed`,
/// `Property.typed`) decodes its arguments into and encodes its results from, so that a handler
/// never reads a `[DBusValue]` by index.
///
/// `init?(dbusValue:)` receives a value whose signature was already checked against
/// `dbusSignature` (the dispatcher does it before any handler runs); it returns nil only for a
/// value that type cannot hold, which the table answers with `InvalidArgs` naming the argument.
public protocol DBusRepresentable: SendableMetatype {
    /// One complete type.
    static var dbusSignature: Signature { get }
    init?(dbusValue: DBusValue)
    var dbusValue: DBusValue { get }
}

extension String: DBusRepresentable {
    public static var dbusSignature: Signature { .string }
    public init?(dbusValue: DBusValue) { guard let value = dbusValue.stringValue else { return nil }; self = value }
    public var dbusValue: DBusValue { .string(self) }
}

extension Bool: DBusRepresentable {
    public static var dbusSignature: Signature { .bool }
    public init?(dbusValue: DBusValue) { guard let value = dbusValue.boolValue else { return nil }; self = value }
    public var dbusValue: DBusValue { .bool(self) }
}

extension Int32: DBusRepresentable {
    public static var dbusSignature: Signature { .int32 }
    public init?(dbusValue: DBusValue) { guard let value = dbusValue.int32Value else { return nil }; self = value }
    public var dbusValue: DBusValue { .int32(self) }
}

extension Int64: DBusRepresentable {
    public static var dbusSignature: Signature { .int64 }
    public init?(dbusValue: DBusValue) { guard let value = dbusValue.int64Value else { return nil }; self = value }
    public var dbusValue: DBusValue { .int64(self) }
}

extension UInt32: DBusRepresentable {
    public static var dbusSignature: Signature { .uint32 }
    public init?(dbusValue: DBusValue) { guard let value = dbusValue.uint32Value else { return nil }; self = value }
    public var dbusValue: DBusValue { .uint32(self) }
}

extension Double: DBusRepresentable {
    public static var dbusSignature: Signature { .double }
    public init?(dbusValue: DBusValue) { guard let value = dbusValue.doubleValue else { return nil }; self = value }
    public var dbusValue: DBusValue { .double(self) }
}

extension ObjectPath: DBusRepresentable {
    public static var dbusSignature: Signature { .objectPath }
    public init?(dbusValue: DBusValue) { guard let value = dbusValue.objectPathValue else { return nil }; self = value }
    public var dbusValue: DBusValue { .objectPath(self) }
}

/// `ao` held as a list: no value per path (see `DBusValue.objectPaths`).
extension ObjectPathList: DBusRepresentable {
    public static var dbusSignature: Signature { "ao" }
    public init?(dbusValue: DBusValue) {
        switch dbusValue.unwrappingVariant {
        case .objectPaths(let paths): self = paths
        case .array(element: "o", let values):
            let paths = values.compactMap(\.objectPathValue)
            guard paths.count == values.count else { return nil }
            self.init(paths)
        default: return nil
        }
    }
    public var dbusValue: DBusValue { .objectPaths(self) }
}

/// `a<element>`; an `[ObjectPath]` is encoded as `DBusValue.objectPaths`, as `ao` is decoded.
extension Array: DBusRepresentable where Element: DBusRepresentable {
    public static var dbusSignature: Signature { Signature(unchecked: "a" + Element.dbusSignature.rawValue) }
    public init?(dbusValue: DBusValue) {
        guard let values = dbusValue.arrayValue else { return nil }
        var elements: [Element] = []
        elements.reserveCapacity(values.count)
        for value in values {
            guard let element = Element(dbusValue: value) else { return nil }
            elements.append(element)
        }
        self = elements
    }
    public var dbusValue: DBusValue {
        // by element type, not `self as? [ObjectPath]`: an empty array casts to any element type
        if Element.self == ObjectPath.self, let paths = self as? [ObjectPath] { return .objectPaths(ObjectPathList(paths)) }
        return .array(element: Element.dbusSignature, map(\.dbusValue))
    }
}

/// `a{sv}`: values are given without their variant wrapper, and wrapped when encoded (`vardict`).
extension Dictionary: DBusRepresentable where Key == String, Value == DBusValue {
    public static var dbusSignature: Signature { .vardict }
    public init?(dbusValue: DBusValue) {
        guard case .dictionary(key: .string, value: .variant, _) = dbusValue.unwrappingVariant,
              let entries = dbusValue.stringKeyedDictionary else { return nil }
        self = entries.mapValues(\.unwrappingOneVariant)
    }
    public var dbusValue: DBusValue { .vardict(self) }
}

/// A struct of two fields, `(AB)`.
public struct DBusPair<A: DBusRepresentable, B: DBusRepresentable>: DBusRepresentable {
    public var first: A
    public var second: B
    public init(_ first: A, _ second: B) {
        self.first = first
        self.second = second
    }
    public static var dbusSignature: Signature { Signature(unchecked: "(\(A.dbusSignature.rawValue)\(B.dbusSignature.rawValue))") }
    public init?(dbusValue: DBusValue) {
        guard let fields = dbusValue.structureValue, fields.count == 2,
              let first = A(dbusValue: fields[0]), let second = B(dbusValue: fields[1]) else { return nil }
        self.init(first, second)
    }
    public var dbusValue: DBusValue { .structure([first.dbusValue, second.dbusValue]) }
}

/// A struct of three fields, `(ABC)`.
public struct DBusTriple<A: DBusRepresentable, B: DBusRepresentable, C: DBusRepresentable>: DBusRepresentable {
    public var first: A
    public var second: B
    public var third: C
    public init(_ first: A, _ second: B, _ third: C) {
        self.first = first
        self.second = second
        self.third = third
    }
    public static var dbusSignature: Signature {
        Signature(unchecked: "(\(A.dbusSignature.rawValue)\(B.dbusSignature.rawValue)\(C.dbusSignature.rawValue))")
    }
    public init?(dbusValue: DBusValue) {
        guard let fields = dbusValue.structureValue, fields.count == 3, let first = A(dbusValue: fields[0]),
              let second = B(dbusValue: fields[1]), let third = C(dbusValue: fields[2]) else { return nil }
        self.init(first, second, third)
    }
    public var dbusValue: DBusValue { .structure([first.dbusValue, second.dbusValue, third.dbusValue]) }
}

extension DBusPair: Equatable where A: Equatable, B: Equatable {}
extension DBusPair: Sendable where A: Sendable, B: Sendable {}
extension DBusTriple: Equatable where A: Equatable, B: Equatable, C: Equatable {}
extension DBusTriple: Sendable where A: Sendable, B: Sendable, C: Sendable {}
