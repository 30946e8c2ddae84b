/// The command as JSON in the shape of swift-argument-parser's `--experimental-dump-help`, which
/// `scripts/manpage.py` turns into the man page, with two keys of our own beside `arguments`:
/// `environment` (name, abstract) and `exitStatuses` (status, abstract), for its ENVIRONMENT and
/// EXIT STATUS sections.
extension CommandDescription {
    public var helpDump: String {
        var arguments = options.map { option -> String in
            var fields = [
                ("kind", Self.json(option.valueName == nil ? "flag" : "option")),
                ("names", "[\(Self.longName(option.name))]"),
                ("preferredName", Self.longName(option.name)),
                ("abstract", Self.json(option.help)),
                ("isOptional", "true"),
                ("isRepeating", "false"),
                ("shouldDisplay", "true"),
            ]
            if let valueName = option.valueName { fields.append(("valueName", Self.json(valueName))) }
            if let discussion = option.discussion { fields.append(("discussion", Self.json(discussion))) }
            if !option.choices.isEmpty { fields.append(("allValues", "[" + option.choices.map(Self.json).joined(separator: ",") + "]")) }
            if let value = option.defaultValue { fields.append(("defaultValue", Self.json(value))) }
            if let variable = option.environment { fields.append(("environment", Self.json(variable))) }
            return Self.object(fields)
        }
        if let items {
            arguments.append(Self.object([
                ("kind", Self.json("positional")), ("valueName", Self.json(items.valueName)), ("abstract", Self.json(items.help)),
                ("isOptional", "true"), ("isRepeating", "true"), ("shouldDisplay", "true"),
            ]))
        }
        arguments.append(Self.object([
            ("kind", Self.json("flag")), ("names", "[\(Self.longName("version"))]"), ("preferredName", Self.longName("version")),
            ("abstract", Self.json("Show the version.")), ("isOptional", "true"), ("isRepeating", "false"), ("shouldDisplay", "true"),
        ]))
        arguments.append(Self.object([
            ("kind", Self.json("flag")), ("names", "[" + Self.object([("kind", Self.json("short")), ("name", Self.json("h"))]) + "," + Self.longName("help") + "]"),
            ("preferredName", Self.longName("help")), ("abstract", Self.json("Show help information.")),
            ("isOptional", "true"), ("isRepeating", "false"), ("shouldDisplay", "true"),
        ]))
        let environment = allEnvironment.map { Self.object([("name", Self.json($0.name)), ("abstract", Self.json($0.help))]) }
        let statuses = exitStatuses.map { Self.object([("status", String($0.status)), ("abstract", Self.json($0.meaning))]) }
        let command = Self.object([
            ("commandName", Self.json(name)), ("abstract", Self.json(abstract)), ("discussion", Self.json(discussion)),
            ("shouldDisplay", "true"), ("arguments", "[" + arguments.joined(separator: ",") + "]"),
            ("environment", "[" + environment.joined(separator: ",") + "]"), ("exitStatuses", "[" + statuses.joined(separator: ",") + "]"),
        ])
        return Self.object([("serializationVersion", "0"), ("command", command)])
    }

    private static func longName(_ name: String) -> String { object([("kind", json("long")), ("name", json(name))]) }

    private static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { json($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// `text` as a JSON string (RFC 8259, section 7).
    static func json(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
