/// Typed table entries: each declares the Swift types of its arguments and result, its signature
/// is made from them, and the table decodes the arguments and encodes the result, so that a handler
/// never reads a `[DBusValue]` by index. The dispatcher checks the call's signature before any
/// of this runs; a value the Swift type still refuses is `InvalidArgs` naming the argument.
///
/// Arity 0 to 4. `typed` answers with the handler's return value; `deferred` hands the handler a
/// `Reply` to answer with later (the reply is taken before the handler runs, so an error it throws
/// is the caller's answer as for any method).
extension InterfaceDescription.Method {
    public static func typed(_ name: String, _ body: @escaping (MethodContext) throws -> Void) -> Self {
        make(name, [], in: [], out: "") { _, context in try body(context); return [] }
    }

    public static func typed<A: DBusRepresentable>(_ name: String, arguments names: [String] = [],
                                                   _ body: @escaping (A, MethodContext) throws -> Void) -> Self {
        make(name, names, in: [A.dbusSignature], out: "") { a, context in try body(a.decode(0), context); return [] }
    }

    public static func typed<A: DBusRepresentable, B: DBusRepresentable>(
        _ name: String, arguments names: [String] = [], _ body: @escaping (A, B, MethodContext) throws -> Void) -> Self {
        make(name, names, in: [A.dbusSignature, B.dbusSignature], out: "") { a, context in
            try body(a.decode(0), a.decode(1), context)
            return []
        }
    }

    public static func typed<A: DBusRepresentable, B: DBusRepresentable, C: DBusRepresentable>(
        _ name: String, arguments names: [String] = [], _ body: @escaping (A, B, C, MethodContext) throws -> Void) -> Self {
        make(name, names, in: [A.dbusSignature, B.dbusSignature, C.dbusSignature], out: "") { a, context in
            try body(a.decode(0), a.decode(1), a.decode(2), context)
            return []
        }
    }

    public static func typed<A: DBusRepresentable, B: DBusRepresentable, C: DBusRepresentable, D: DBusRepresentable>(
        _ name: String, arguments names: [String] = [], _ body: @escaping (A, B, C, D, MethodContext) throws -> Void) -> Self {
        make(name, names, in: [A.dbusSignature, B.dbusSignature, C.dbusSignature, D.dbusSignature], out: "") { a, context in
            try body(a.decode(0), a.decode(1), a.decode(2), a.decode(3), context)
            return []
        }
    }

    public static func typed<R: DBusRepresentable>(_ name: String, returning: R.Type,
                                                   _ body: @escaping (MethodContext) throws -> R) -> Self {
        make(name, [], in: [], out: R.dbusSignature) { _, context in [try body(context).dbusValue] }
    }

    public static func typed<A: DBusRepresentable, R: DBusRepresentable>(
        _ name: String, arguments names: [String] = [], returning: R.Type, _ body: @escaping (A, MethodContext) throws -> R) -> Self {
        make(name, names, in: [A.dbusSignature], out: R.dbusSignature) { a, context in [try body(a.decode(0), context).dbusValue] }
    }

    public static func typed<A: DBusRepresentable, B: DBusRepresentable, R: DBusRepresentable>(
        _ name: String, arguments names: [String] = [], returning: R.Type, _ body: @escaping (A, B, MethodContext) throws -> R) -> Self {
        make(name, names, in: [A.dbusSignature, B.dbusSignature], out: R.dbusSignature) { a, context in
            [try body(a.decode(0), a.decode(1), context).dbusValue]
        }
    }

    public static func typed<A: DBusRepresentable, B: DBusRepresentable, C: DBusRepresentable, R: DBusRepresentable>(
        _ name: String, arguments names: [String] = [], returning: R.Type,
        _ body: @escaping (A, B, C, MethodContext) throws -> R) -> Self {
        make(name, names, in: [A.dbusSignature, B.dbusSignature, C.dbusSignature], out: R.dbusSignature) { a, context in
            [try body(a.decode(0), a.decode(1), a.decode(2), context).dbusValue]
        }
    }

    public static func typed<A: DBusRepresentable, B: DBusRepresentable, C: DBusRepresentable, D: DBusRepresentable,
                             R: DBusRepresentable>(
        _ name: String, arguments names: [String] = [], returning: R.Type,
        _ body: @escaping (A, B, C, D, MethodContext) throws -> R) -> Self {
        make(name, names, in: [A.dbusSignature, B.dbusSignature, C.dbusSignature, D.dbusSignature], out: R.dbusSignature) { a, context in
            [try body(a.decode(0), a.decode(1), a.decode(2), a.decode(3), context).dbusValue]
        }
    }

    public static func deferred<A: DBusRepresentable>(_ name: String, arguments names: [String] = [],
                                                      _ body: @escaping (A, Reply<Void>) throws -> Void) -> Self {
        make(name, names, in: [A.dbusSignature], out: "") { a, context in
            try body(a.decode(0), Reply(context) { _ in [] })
            return []
        }
    }

    public static func deferred<A: DBusRepresentable, B: DBusRepresentable, C: DBusRepresentable>(
        _ name: String, arguments names: [String] = [], _ body: @escaping (A, B, C, Reply<Void>) throws -> Void) -> Self {
        make(name, names, in: [A.dbusSignature, B.dbusSignature, C.dbusSignature], out: "") { a, context in
            try body(a.decode(0), a.decode(1), a.decode(2), Reply(context) { _ in [] })
            return []
        }
    }

    public static func deferred<A: DBusRepresentable, B: DBusRepresentable, R: DBusRepresentable>(
        _ name: String, arguments names: [String] = [], returning: R.Type, _ body: @escaping (A, B, Reply<R>) throws -> Void) -> Self {
        make(name, names, in: [A.dbusSignature, B.dbusSignature], out: R.dbusSignature) { a, context in
            try body(a.decode(0), a.decode(1), Reply(context) { [$0.dbusValue] })
            return []
        }
    }

    private static func make(_ name: String, _ names: [String], in types: [Signature], out: Signature,
                             _ body: @escaping (TypedArguments, MethodContext) throws -> [DBusValue]) -> Self {
        var method = Self(name, in: Signature(unchecked: types.map(\.rawValue).joined()), out: out, inNames: names) { values, context in
            try body(TypedArguments(values: values, names: names, method: name), context)
        }
        method.isTyped = true
        return method
    }
}

/// A call's arguments as a typed entry reads them: by position, into the Swift type its handler takes.
struct TypedArguments {
    let values: [DBusValue]
    let names: [String]
    let method: String

    func decode<T: DBusRepresentable>(_ index: Int) throws -> T {
        guard index < values.count, let value = T(dbusValue: values[index]) else {
            let name = index < names.count ? " (\(names[index]))" : ""
            throw DBusError.invalidArgs("\(method): argument \(index + 1)\(name) is not a valid '\(T.dbusSignature)'")
        }
        return value
    }
}

/// The answer of a `Method.deferred` call, given once with `succeed` or `fail` (see `DeferredReply`,
/// which it types). Use it on the connection's queue; it may travel there in a block.
public struct Reply<Value>: Sendable {
    /// The unique name of the caller.
    public let sender: String?
    private let reply: DeferredReply
    private let encode: @Sendable (Value) -> [DBusValue]

    init(_ context: MethodContext, encode: @escaping @Sendable (Value) -> [DBusValue]) {
        sender = context.sender
        reply = context.deferReply()
        self.encode = encode
    }

    public func succeed(_ value: Value) { reply.succeed(encode(value)) }
    public func fail(_ error: any Error) { reply.fail(error) }
}

extension Reply where Value == Void {
    public func succeed() { succeed(()) }
}

extension InterfaceDescription.Property {
    /// A property of the Swift type `T`: its signature is `T`'s, the getter's value is encoded by the
    /// table and a `Set`'s value decoded (one `T` refuses is `InvalidArgs` naming the property).
    public static func typed<T: DBusRepresentable>(_ name: String, emitsChanged: InterfaceDescription.EmitsChanged = .true,
                                                   keepsEncodedReply: Bool = false, get: @escaping () throws -> T,
                                                   set: ((T) throws -> Void)? = nil) -> Self {
        var property = Self(name, T.dbusSignature, emitsChanged: emitsChanged, keepsEncodedReply: keepsEncodedReply,
                            get: { try get().dbusValue }, set: set.map { set in { value, _ in
            guard let typed = T(dbusValue: value) else { throw DBusError.invalidArgs("property \(name) takes a valid '\(T.dbusSignature)'") }
            try set(typed)
        } })
        property.isTyped = true
        return property
    }
}

extension InterfaceDescription.Signal {
    /// A signal whose arguments are of the Swift types `types`: its signature is theirs.
    public static func typed<each T: DBusRepresentable>(_ name: String, _ types: repeat (each T).Type, argumentNames: [String] = []) -> Self {
        var signature = ""
        for type in repeat each types { signature += type.dbusSignature.rawValue }
        var signal = Self(name, Signature(unchecked: signature), argumentNames: argumentNames)
        signal.isTyped = true
        return signal
    }
}

extension ExportedObject {
    /// Emits signal `name` of `interface` with `values` encoded, as `emitSignal(interface:name:arguments:destination:)`.
    public func emitSignal<each T: DBusRepresentable>(interface: String, name: String, _ values: repeat each T,
                                                      destination: String? = nil) throws {
        var arguments: [DBusValue] = []
        for value in repeat each values { arguments.append(value.dbusValue) }
        try emitSignal(interface: interface, name: name, arguments: arguments, destination: destination)
    }
}
