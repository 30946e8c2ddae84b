/// The help and the usage errors, laid out as swift-argument-parser laid out tonearmd's: 80
/// columns, labels in a column of 26, more text under an option indented by 8.
extension CommandDescription {
    static var width: Int { 80 }
    static var column: Int { 26 }

    /// `tonearmd [<options>] [<uris> ...]`
    public var usage: String {
        name + (options.isEmpty ? "" : " [<options>]") + (items.map { " [<\($0.valueName)> ...]" } ?? "")
    }

    /// The help's one line of environment variables: each name, with its note in parentheses.
    var environmentLine: String {
        "Environment: " + allEnvironment.map { variable in variable.note.map { "\(variable.name) (\($0))" } ?? variable.name }
            .joined(separator: ", ") + "."
    }

    /// What `--help` prints.
    public var helpText: String {
        var text = Self.wrap("OVERVIEW: " + abstract, indent: 0) + "\n\n"
        let about = [discussion, allEnvironment.isEmpty ? "" : environmentLine].filter { !$0.isEmpty }
        for paragraph in about { text += paragraph.split(separator: "\n", omittingEmptySubsequences: false).map { Self.wrap(String($0), indent: 0) }.joined(separator: "\n") + "\n" }
        if !about.isEmpty { text += "\n" }
        text += "USAGE: \(usage)\n\n"
        if let items {
            text += "ARGUMENTS:\n" + Self.entry("<\(items.valueName)>", items.help) + "\n"
        }
        text += "OPTIONS:\n"
        for option in options {
            text += Self.entry(option.label, option.help + Self.suffix(choices: option.choices, defaultValue: option.defaultValue))
            if let discussion = option.discussion { text += Self.wrap(discussion, indent: 8, first: 8) + "\n" }
        }
        text += Self.entry("--version", "Show the version.")
        text += Self.entry("-h, --help", "Show help information.")
        return text
    }

    /// The message, the option's help, the usage and a pointer to `--help`, as stderr shows them.
    public func errorText(_ error: UsageError) -> String {
        var text = "Error: \(error.message)\n"
        if let name = error.option, let option = option(name) {
            text += "Help:  \(option.label)  \(option.help)\n"
        }
        return text + "Usage: \(usage)\n  See '\(name) --help' for more information.\n"
    }

    /// ` (values: a, b; default: a)`, or what of it there is.
    static func suffix(choices: [String], defaultValue: String?) -> String {
        let parts = (choices.isEmpty ? [] : ["values: " + choices.joined(separator: ", ")]) + (defaultValue.map { ["default: \($0)"] } ?? [])
        return parts.isEmpty ? "" : " (" + parts.joined(separator: "; ") + ")"
    }

    /// `  label   help…`: the help in the column, on the label's line when it fits.
    static func entry(_ label: String, _ help: String) -> String {
        let lead = "  " + label
        let body = wrap(help, indent: column, first: column)
        guard lead.count + 1 <= column else { return lead + "\n" + body + "\n" }
        return lead + String(repeating: " ", count: column - lead.count) + body.dropFirst(column) + "\n"
    }

    /// `text` in lines shorter than `width` columns (a longer word has one of its own), the first
    /// indented by `first`, the others by `indent`.
    static func wrap(_ text: String, indent: Int, first: Int = 0) -> String {
        var lines: [String] = []
        var line = String(repeating: " ", count: first)
        var empty = true
        for word in text.split(separator: " ") {
            // swift-argument-parser's lines end before the 80th column
            if !empty && line.count + 1 + word.count >= width {
                lines.append(line)
                line = String(repeating: " ", count: indent)
                empty = true
            }
            line += (empty ? "" : " ") + word
            empty = false
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}
