import DBus
import FoundationEssentials
import PlayerModel

/// The whole D-Bus surface as the service serves it, as JSON: each interface's table (names and
/// signatures from the Swift types, access, EmitsChangedSignal), the descriptions of dbus/'s XML
/// beside each entry, the events that announce each property (the change rules), and the error
/// names with what they mean. MPRISTests holds `dbus/surface.json` to it, and
/// `scripts/dbus-manpage.py` turns that file into tonearm-dbus(7), so the page says what the tables
/// serve.
extension MPRISService {
    struct Surface: Codable, Equatable {
        struct Argument: Codable, Equatable {
            var name: String
            var type: String
            var doc: String
        }
        struct Method: Codable, Equatable {
            var name: String
            var doc: String
            var arguments: [Argument]
            var returns: [Argument]
        }
        struct Property: Codable, Equatable {
            var name: String
            var type: String
            var access: String
            var emitsChanged: String
            var doc: String
            /// What makes the service re-read and announce it (empty: none of the player's events;
            /// the interface announces it itself, or it never changes).
            var announcedWhen: [String]
        }
        struct Signal: Codable, Equatable {
            var name: String
            var doc: String
            var arguments: [Argument]
        }
        struct Interface: Codable, Equatable {
            var name: String
            var doc: String
            var methods: [Method]
            var properties: [Property]
            var signals: [Signal]
        }
        struct ErrorName: Codable, Equatable {
            var name: String
            var doc: String
        }
        var interfaces: [Interface]
        var errors: [ErrorName]
    }

    /// The surface as `dbus/surface.json` holds it (pretty, keys sorted, a newline at the end).
    public func surfaceJSON() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(try surface()), as: UTF8.self) + "\n"
    }

    func surface() throws -> Surface {
        let described = try interfaces().map { table -> Surface.Interface in
            let xml = try Introspection.parse(table.introspectionXML ?? "").first { $0.name == table.name }
            let docs = xml?.docs ?? [:]
            func arguments(_ member: String, _ signature: Signature, _ names: [String]) -> [Surface.Argument] {
                signature.completeTypes.enumerated().map { index, type in
                    let name = index < names.count ? names[index] : ""
                    return .init(name: name, type: type.rawValue, doc: docs["\(member).\(name)"] ?? "")
                }
            }
            let rules = Self.changeRules.first { $0.interface == table.name }
            return Surface.Interface(
                name: table.name, doc: docs[""] ?? "",
                methods: table.methods.map { method in
                    let outNames = method.outNames.isEmpty ? xml?.methods[method.name]?.outNames ?? [] : method.outNames
                    return .init(name: method.name, doc: docs[method.name] ?? "",
                                 arguments: arguments(method.name, method.inSignature, method.inNames),
                                 returns: arguments(method.name, method.outSignature, outNames))
                },
                properties: table.properties.map { property in
                    let when = PlayerEventKind.allCases.filter { kind in
                        switch rules?.changes[kind] {
                        case .all: true
                        case .only(let names): names.contains(property.name)
                        case nil: false
                        }
                    }
                    return .init(name: property.name, type: property.signature.rawValue, access: property.access.rawValue,
                                 emitsChanged: property.emitsChanged.rawValue, doc: docs[property.name] ?? "",
                                 announcedWhen: property.emitsChanged == .false ? [] : when.map(\.meaning))
                },
                signals: table.signals.map { signal in
                    .init(name: signal.name, doc: docs[signal.name] ?? "",
                          arguments: arguments(signal.name, signal.signature, signal.argumentNames))
                })
        }
        let errors = ServiceError.documented.map { Surface.ErrorName(name: "io.github.tonearm.Error." + $0.key, doc: $0.value) }
        return Surface(interfaces: described, errors: errors)
    }

    /// The error names the code makes from kinds and codes that `ServiceError.documented` lacks, and
    /// the names it documents that are not among `made` (the kinds' names and those the code spells
    /// out, which MPRISTests finds in the sources).
    public static func undocumentedErrorNames(spelledOut: Set<String>) -> (undocumented: [String], unknown: [String]) {
        let documented = Set(ServiceError.documented.map(\.key))
        let made = Set(ServiceError.namesFromKinds).union(spelledOut)
        return (made.subtracting(documented).sorted(), documented.subtracting(made).sorted())
    }
}
