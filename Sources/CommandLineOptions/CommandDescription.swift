import Basics
import Glibc

/// A command's whole command line as a table: its options, its items, the environment it reads and
/// the statuses it exits with. One parser reads command lines with it (no reflection: each option
/// is a name and a closure, so a start costs a dictionary lookup per option), and the help, the
/// completion scripts and the man page's input are written from it.
///
/// swift-argument-parser did this for tonearmd before, but its parse reflects over the command's
/// properties (`Mirror`), and each of its dynamic casts makes the runtime scan every protocol
/// conformance of the statically linked program: ~5 of the ~9 ms from `exec` to the bus name
/// (perf, issue 30), and ~7 MiB of pages touched at rest.
public struct CommandDescription<Values>: Sendable {
    public let name: String
    public let version: String
    /// One sentence: the help's OVERVIEW and the man page's NAME.
    public let abstract: String
    /// The help's paragraph after the overview, and the man page's DESCRIPTION.
    public let discussion: String
    public let options: [CommandOption<Values>]
    public let items: CommandItems<Values>?
    /// The variables read that no option sets; the options' variables come before them.
    public let environment: [EnvironmentVariable]
    public let exitStatuses: [ExitStatus]
    /// Checks the values as a whole once the line is read (and what the environment says).
    let validate: @Sendable (inout Values) throws(UsageError) -> Void
    private let byName: [String: Int]

    public init(name: String, version: String, abstract: String, discussion: String, options: [CommandOption<Values>],
                items: CommandItems<Values>?, environment: [EnvironmentVariable] = [], exitStatuses: [ExitStatus] = [],
                validate: @escaping @Sendable (inout Values) throws(UsageError) -> Void = { (_: inout Values) throws(UsageError) in }) {
        self.name = name
        self.version = version
        self.abstract = abstract
        self.discussion = discussion
        self.options = options
        self.items = items
        self.environment = environment
        self.exitStatuses = exitStatuses
        self.validate = validate
        var byName: [String: Int] = [:]
        for (index, option) in options.enumerated() {
            precondition(byName[option.name] == nil && !builtInOptions.contains(option.name), "--\(option.name) is declared twice")
            byName[option.name] = index
        }
        self.byName = byName
    }

    /// The option called `name` (without dashes).
    public func option(_ name: String) -> CommandOption<Values>? { byName[name].map { options[$0] } }

    /// Every environment variable the command reads, in order: the options' first.
    public var allEnvironment: [EnvironmentVariable] {
        options.compactMap { option in
            option.environment.map { EnvironmentVariable($0, help: "Sets what \(option.spelling) sets; the option wins over it.") }
        } + environment
    }

    /// What a command line asks for.
    public enum Request {
        /// Run with these values.
        case run(Values)
        /// `--help`, `-h`: print `helpText`.
        case help
        /// `--version`: print `version`.
        case version
        /// `--generate-completion-script SHELL`: print `completionScript(for:)`.
        case completion(Shell)
        /// `--experimental-dump-help`: print `helpDump` (scripts/manpage.py reads it).
        case helpDump
    }

    /// Reads `arguments` (without the program's name) over `initial`.
    ///
    /// `--help`, `-h`, `--version`, `--generate-completion-script` and `--experimental-dump-help`
    /// win wherever they are, before anything else is checked, as with swift-argument-parser. Then,
    /// in order: `--name value` and `--name=value` (an empty value after `=` is a value; the next
    /// argument is not one when it starts with `-`, unless it is `-` alone), a flag, an item; after
    /// `--` everything is an item. An option given twice keeps the last value.
    public func parse(_ arguments: [String], into initial: Values) throws(UsageError) -> Request {
        if let request = try builtInRequest(arguments) { return request }
        var values = initial
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            if argument == "--" {
                for item in rest { try addItem(item, to: &values) }
                break
            }
            guard argument.hasPrefix("-"), argument != "-" else {
                try addItem(argument, to: &values)
                continue
            }
            guard argument.hasPrefix("--") else { throw UsageError("Unknown option '\(argument)'") }
            let (name, attached) = Self.split(argument)
            guard let option = option(name) else { throw UsageError("Unknown option '--\(name)'") }
            var value = attached
            if option.valueName == nil {
                if let attached {
                    throw UsageError("The option '--\(name)' does not take any value, but '\(attached)' was specified.", option: name)
                }
            } else if value == nil {
                guard let next = rest.first, !next.hasPrefix("-") || next == "-" else {
                    throw UsageError("Missing value for '\(option.label)'", option: name)
                }
                value = rest.removeFirst()
            }
            do {
                try option.apply(&values, value)
            } catch {
                throw UsageError(error.message, option: error.option ?? name)
            }
        }
        try validate(&values)
        return .run(values)
    }

    /// Parses and answers the requests that are not a run: the help, the version, a completion
    /// script and the dump on stdout with status 0, a usage error on stderr with status 64.
    /// Returns the values to run with.
    public func valuesOrExit(_ arguments: [String], into initial: Values) -> Values {
        let request: Request
        do throws(UsageError) {
            request = try parse(arguments, into: initial)
        } catch {
            _ = Files.writeAll(Array(errorText(error).utf8), to: 2)
            exit(UsageError.exitStatus)
        }
        switch request {
        case .run(let values): return values
        case .help: print(helpText, terminator: "")
        case .version: print(version)
        case .completion(let shell): print(completionScript(for: shell), terminator: "")
        case .helpDump: print(helpDump)
        }
        exit(0)
    }

    /// The request of a built-in option, when there is one before `--`.
    private func builtInRequest(_ arguments: [String]) throws(UsageError) -> Request? {
        var found: Request?
        var rest = arguments[...]
        while let argument = rest.popFirst(), argument != "--" {
            // -help too: swift-argument-parser took it
            if argument == "--help" || argument == "-h" || argument == "-help" { return .help }
            guard argument.hasPrefix("--") else { continue }
            let (name, attached) = Self.split(argument)
            switch name {
            case "version": found = found ?? .version
            case "experimental-dump-help": found = found ?? .helpDump
            case "generate-completion-script":
                let label = "--generate-completion-script <shell>"
                guard let text = attached ?? rest.first.flatMap({ $0.hasPrefix("-") ? nil : rest.removeFirst() }) else {
                    throw UsageError("Missing value for '\(label)'")
                }
                guard let shell = Shell(rawValue: text) else {
                    throw UsageError("The value '\(text)' is invalid for '\(label)'. Please provide one of \(UsageError.list(Shell.allCases.map(\.rawValue))).")
                }
                found = found ?? .completion(shell)
            default: continue
            }
        }
        return found
    }

    private func addItem(_ item: String, to values: inout Values) throws(UsageError) {
        guard let items else { throw UsageError("Unexpected argument '\(item)'") }
        items.append(&values, item)
    }

    /// `--name=value` as (`name`, `value`), `--name` as (`name`, nil).
    private static func split(_ argument: String) -> (String, String?) {
        let body = argument.dropFirst(2)
        guard let equals = body.firstIndex(of: "=") else { return (String(body), nil) }
        return (String(body[..<equals]), String(body[body.index(after: equals)...]))
    }
}

/// The options every command has, which the table does not declare.
let builtInOptions: Set<String> = ["help", "version", "generate-completion-script", "experimental-dump-help"]

/// The shells whose completion scripts a command writes.
public enum Shell: String, Sendable, CaseIterable {
    case bash, zsh, fish
}
