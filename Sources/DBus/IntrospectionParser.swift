/// What an introspection document declares for one interface: enough to hold an `InterfaceDescription`
/// against the XML in `dbus/` (zbus's rule: the table and the published XML must agree).
public struct IntrospectedInterface: Equatable, Sendable {
    public struct Method: Equatable, Sendable {
        public var inSignature: String
        public var outSignature: String
        /// The in arguments' names, in order ("" for one without a name).
        public var inNames: [String] = []
        /// The out arguments' names, in order.
        public var outNames: [String] = []
    }

    public struct Property: Equatable, Sendable {
        public var type: String
        /// `read`, `write` or `readwrite`.
        public var access: String
        /// The `org.freedesktop.DBus.Property.EmitsChangedSignal` value in effect: the property's own
        /// annotation, else the interface's, else `true`.
        public var emitsChanged: String
    }

    public var name: String
    public var methods: [String: Method] = [:]
    public var properties: [String: Property] = [:]
    public var signals: [String: String] = [:]
    /// The `org.gtk.GDBus.DocString` annotations: the interface's under "", a method's, property's or
    /// signal's under its name, an argument's under "Member.argument" (what tonearm-dbus(7) says).
    public var docs: [String: String] = [:]
}

extension Introspection {
    /// Parses the `<interface>` elements of an introspection document (a small reader for this
    /// vocabulary only: tags and attributes, comments and prolog skipped; no DTD, no namespaces).
    /// Throws `InvalidArgs` for a document it cannot read.
    public static func parse(_ xml: String) throws -> [IntrospectedInterface] {
        var interfaces: [IntrospectedInterface] = []
        var current: IntrospectedInterface?
        var interfaceEmits = "true"
        var member: (kind: String, name: String)?
        var methodIn = "", methodOut = "", signalSignature = ""
        var inNames: [String] = [], outNames: [String] = []
        var propertyEmits: String?
        var property: (name: String, type: String, access: String)?
        var argument: String?

        func finishProperty() {
            if let p = property {
                current?.properties[p.name] = .init(type: p.type, access: p.access, emitsChanged: propertyEmits ?? interfaceEmits)
            }
            property = nil
            propertyEmits = nil
        }

        for tag in try tags(of: xml) {
            switch (tag.name, tag.closing) {
            case ("interface", false):
                current = IntrospectedInterface(name: try tag.attribute("name"))
                interfaceEmits = "true"
                if tag.selfClosing, let done = current { interfaces.append(done); current = nil }
            case ("interface", true):
                if let done = current { interfaces.append(done) }
                current = nil
            case ("method", false), ("signal", false):
                member = (tag.name, try tag.attribute("name"))
                methodIn = ""; methodOut = ""; signalSignature = ""; inNames = []; outNames = []
                if tag.selfClosing { finishMember(&current, member, methodIn, methodOut, signalSignature, inNames, outNames); member = nil }
            case ("method", true), ("signal", true):
                finishMember(&current, member, methodIn, methodOut, signalSignature, inNames, outNames)
                member = nil
            case ("arg", true):
                argument = nil
            case ("arg", false):
                let type = try tag.attribute("type")
                if !tag.selfClosing, let name = tag.attributes["name"], let member { argument = "\(member.name).\(name)" }
                if member?.kind == "signal" {
                    signalSignature += type
                } else if tag.attributes["direction"] == "out" {
                    methodOut += type
                    outNames.append(tag.attributes["name"] ?? "")
                } else {
                    methodIn += type
                    inNames.append(tag.attributes["name"] ?? "")
                }
            case ("property", false):
                property = (try tag.attribute("name"), try tag.attribute("type"), try tag.attribute("access"))
                if tag.selfClosing { finishProperty() }
            case ("property", true):
                finishProperty()
            case ("annotation", false):
                if tag.attributes["name"] == "org.gtk.GDBus.DocString" {
                    current?.docs[argument ?? property?.name ?? member?.name ?? ""] = try tag.attribute("value")
                }
                guard tag.attributes["name"] == "org.freedesktop.DBus.Property.EmitsChangedSignal" else { break }
                let value = try tag.attribute("value")
                if property != nil { propertyEmits = value } else if member == nil { interfaceEmits = value }
            default:
                break
            }
        }
        return interfaces
    }

    private static func finishMember(
        _ interface: inout IntrospectedInterface?, _ member: (kind: String, name: String)?, _ ins: String, _ outs: String, _ signal: String,
        _ inNames: [String], _ outNames: [String]
    ) {
        guard let member else { return }
        if member.kind == "method" {
            interface?.methods[member.name] = .init(inSignature: ins, outSignature: outs, inNames: inNames, outNames: outNames)
        } else {
            interface?.signals[member.name] = signal
        }
    }

    private struct Tag {
        var name: String
        var closing: Bool
        var selfClosing: Bool
        var attributes: [String: String]

        func attribute(_ key: String) throws -> String {
            guard let value = attributes[key] else { throw DBusError.invalidArgs("<\(name)> without \(key)=") }
            return value
        }
    }

    private static func tags(of xml: String) throws -> [Tag] {
        var tags: [Tag] = []
        var rest = Substring(xml)
        while let open = rest.firstIndex(of: "<") {
            rest = rest[open...]
            if rest.hasPrefix("<!--") {
                guard let end = rest.firstRange(of: "-->") else { throw DBusError.invalidArgs("unterminated comment") }
                rest = rest[end.upperBound...]
                continue
            }
            // The tag ends at the first '>' outside quotes (DocString annotations may hold '>').
            var quote: Character?
            guard let close = rest.firstIndex(where: { c in
                if let q = quote { if c == q { quote = nil }; return false }
                if c == "\"" || c == "'" { quote = c; return false }
                return c == ">"
            }) else { throw DBusError.invalidArgs("unterminated tag") }
            var body = rest[rest.index(after: open)..<close]
            rest = rest[rest.index(after: close)...]
            if body.hasPrefix("?") || body.hasPrefix("!") { continue }  // prolog, DOCTYPE
            let closing = body.hasPrefix("/")
            if closing { body = body.dropFirst() }
            let selfClosing = body.hasSuffix("/")
            if selfClosing { body = body.dropLast() }
            let name = body.prefix { !$0.isWhitespace }
            tags.append(Tag(name: String(name), closing: closing, selfClosing: selfClosing,
                            attributes: try attributes(of: body.dropFirst(name.count))))
        }
        return tags
    }

    private static func attributes(of text: Substring) throws -> [String: String] {
        var result: [String: String] = [:]
        var rest = text
        while true {
            rest = rest.drop { $0.isWhitespace }
            guard !rest.isEmpty else { return result }
            guard let equals = rest.firstIndex(of: "=") else { throw DBusError.invalidArgs("bad attribute in \(text)") }
            let key = rest[..<equals].trimmingWhitespace
            rest = rest[rest.index(after: equals)...].drop { $0.isWhitespace }
            guard let quote = rest.first, quote == "\"" || quote == "'" else { throw DBusError.invalidArgs("unquoted attribute in \(text)") }
            rest = rest.dropFirst()
            guard let end = rest.firstIndex(of: quote) else { throw DBusError.invalidArgs("unterminated attribute in \(text)") }
            result[key] = unescape(rest[..<end])
            rest = rest[rest.index(after: end)...]
        }
    }

    private static func unescape(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        return String(text).replacing("&quot;", with: "\"").replacing("&apos;", with: "'").replacing("&lt;", with: "<")
            .replacing("&gt;", with: ">").replacing("&amp;", with: "&")
    }
}

private extension Substring {
    var trimmingWhitespace: String { String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed()) }
}

extension InterfaceDescription {
    /// How this table differs from the interface of the same name in `xml` (a `dbus/` file): missing
    /// or extra methods, properties and signals, and differing signatures, access or EmitsChangedSignal.
    /// Empty when they agree. Argument names are compared where the table gives them (a typed
    /// entry names its arguments in its InvalidArgs errors); other annotations are not. With
    /// `requiringTypes`, a method, property or signal not made by `typed` (or `deferred`) is a difference too:
    /// its signature then comes from its Swift types, which are held against the XML this way.
    public func differences(fromXML xml: String, requiringTypes: Bool = false) throws -> [String] {
        guard let declared = try Introspection.parse(xml).first(where: { $0.name == name }) else {
            return ["\(name): not declared in the XML"]
        }
        var differences: [String] = []
        func compare(_ what: String, table: Set<String>, xml: Set<String>) {
            for missing in xml.subtracting(table).sorted() { differences.append("\(name): \(what) \(missing) is in the XML but not in the table") }
            for extra in table.subtracting(xml).sorted() { differences.append("\(name): \(what) \(extra) is in the table but not in the XML") }
        }
        compare("method", table: Set(methods.map(\.name)), xml: Set(declared.methods.keys))
        compare("property", table: Set(properties.map(\.name)), xml: Set(declared.properties.keys))
        compare("signal", table: Set(signals.map(\.name)), xml: Set(declared.signals.keys))
        for method in methods {
            guard let other = declared.methods[method.name] else { continue }
            if other.inSignature != method.inSignature.rawValue || other.outSignature != method.outSignature.rawValue {
                differences.append("\(name).\(method.name): table '\(method.inSignature)' → '\(method.outSignature)', XML '\(other.inSignature)' → '\(other.outSignature)'")
            }
            if !method.inNames.isEmpty, method.inNames != other.inNames {
                differences.append("\(name).\(method.name): arguments \(method.inNames) in the table, \(other.inNames) in the XML")
            }
        }
        for property in properties {
            guard let other = declared.properties[property.name] else { continue }
            if other.type != property.signature.rawValue {
                differences.append("\(name).\(property.name): type '\(property.signature)' in the table, '\(other.type)' in the XML")
            }
            if other.access != property.access.rawValue {
                differences.append("\(name).\(property.name): access \(property.access.rawValue) in the table, \(other.access) in the XML")
            }
            if other.emitsChanged != property.emitsChanged.rawValue {
                differences.append("\(name).\(property.name): EmitsChangedSignal \(property.emitsChanged.rawValue) in the table, \(other.emitsChanged) in the XML")
            }
        }
        if requiringTypes {
            for method in methods where !method.isTyped { differences.append("\(name).\(method.name): method not typed") }
            for property in properties where !property.isTyped { differences.append("\(name).\(property.name): property not typed") }
            for signal in signals where !signal.isTyped { differences.append("\(name).\(signal.name): signal not typed") }
        }
        for signal in signals {
            guard let other = declared.signals[signal.name], other != signal.signature.rawValue else { continue }
            differences.append("\(name).\(signal.name): signal '\(signal.signature)' in the table, '\(other)' in the XML")
        }
        return differences
    }
}
