/// One long option of a command: its name, the value it takes, what it means, the environment
/// variable that sets the same thing, and how its value is read into the command's values.
///
/// A table of these is the one description of a command line: `CommandDescription` parses with it
/// and writes the help, the completion scripts and the man page's input from it, so that none of
/// them can say something the parser does not do.
public struct CommandOption<Values>: Sendable {
    /// The long name without its dashes: `audio-sink` for `--audio-sink`.
    public let name: String
    /// What the value is called in the help (`<description>`); nil for a flag, which takes none.
    public let valueName: String?
    /// One sentence or two: the help's text for it.
    public let help: String
    /// More, shown below it in the help and after it in the man page.
    public let discussion: String?
    /// The environment variable that sets the same thing (the option wins over it).
    public let environment: String?
    /// The value used when it is not given, as the help shows it; nil when that is told in `help`.
    public let defaultValue: String?
    /// Every value it accepts, when they are a closed list (offered by the completions).
    public let choices: [String]
    /// What the shells offer for its value.
    public let completion: ValueCompletion
    /// Reads one value (nil for a flag) into the values; throws a message naming what is wrong.
    let apply: @Sendable (inout Values, String?) throws(UsageError) -> Void

    /// `--name`: the long option as the user types it.
    public var spelling: String { "--" + name }

    /// `--name <value>`, as usage and error messages show it.
    public var label: String { valueName.map { "\(spelling) <\($0)>" } ?? spelling }

    /// An option with a value; `set` reads it (`--name value` or `--name=value`, the last one given
    /// wins) and throws a `UsageError` whose message says what a good value is.
    public static func value(_ name: String, _ valueName: String, help: String, discussion: String? = nil,
                             environment: String? = nil, defaultValue: String? = nil, completion: ValueCompletion = .none,
                             set: @escaping @Sendable (inout Values, String) throws(UsageError) -> Void) -> Self {
        Self(name: name, valueName: valueName, help: help, discussion: discussion, environment: environment,
             defaultValue: defaultValue, choices: [], completion: completion) { (values: inout Values, text: String?) throws(UsageError) in
            try set(&values, text ?? "")
        }
    }

    /// An option whose value is one of `Choice`'s raw values.
    public static func choice<Choice: RawRepresentable & CaseIterable & Sendable>(
        _ name: String, _ valueName: String, of type: Choice.Type, help: String, discussion: String? = nil,
        environment: String? = nil, defaultValue: Choice? = nil, set: @escaping @Sendable (inout Values, Choice) -> Void
    ) -> Self where Choice.RawValue == String {
        let choices = Choice.allCases.map(\.rawValue)
        return Self(name: name, valueName: valueName, help: help, discussion: discussion, environment: environment,
                    defaultValue: defaultValue?.rawValue, choices: choices, completion: .choices) { (values: inout Values, text: String?) throws(UsageError) in
            guard let text, let choice = Choice(rawValue: text) else {
                throw UsageError("The value '\(text ?? "")' is invalid for '--\(name) <\(valueName)>'. Please provide one of \(UsageError.list(choices)).")
            }
            set(&values, choice)
        }
    }

    /// A flag: `--name`, no value (`--name=x` is an error); given twice, it is given.
    public static func flag(_ name: String, help: String, discussion: String? = nil,
                            set: @escaping @Sendable (inout Values) -> Void) -> Self {
        Self(name: name, valueName: nil, help: help, discussion: discussion, environment: nil, defaultValue: nil,
             choices: [], completion: .none) { (values: inout Values, _: String?) throws(UsageError) in
            set(&values)
        }
    }
}

/// What a shell offers for a value or an item.
public enum ValueCompletion: Sendable, Equatable {
    /// Nothing: a free text (a pipeline description, a number).
    case none
    /// The option's `choices`.
    case choices
    /// Paths of files and folders.
    case files
    /// Paths of folders.
    case directories
}

/// The arguments that are not options: files, folders, URIs.
public struct CommandItems<Values>: Sendable {
    /// What one is called in the help (`<uris>`).
    public let valueName: String
    public let help: String
    public let completion: ValueCompletion
    let append: @Sendable (inout Values, String) -> Void

    public init(_ valueName: String, help: String, completion: ValueCompletion = .files,
                append: @escaping @Sendable (inout Values, String) -> Void) {
        self.valueName = valueName
        self.help = help
        self.completion = completion
        self.append = append
    }
}

/// An environment variable the command reads that no option sets (the options' own are on them).
public struct EnvironmentVariable: Sendable, Equatable {
    public let name: String
    /// A few words for the help's one line of variables (`the bus`); nil for none.
    public let note: String?
    /// What it does, for the man page.
    public let help: String

    public init(_ name: String, note: String? = nil, help: String) {
        self.name = name
        self.note = note
        self.help = help
    }
}

/// An exit status and when the command ends with it, for the man page.
public struct ExitStatus: Sendable, Equatable {
    public let status: Int32
    public let meaning: String

    public init(_ status: Int32, _ meaning: String) {
        self.status = status
        self.meaning = meaning
    }
}

/// A command line that cannot be run: the message names the option or the variable and says what
/// a good value is. The process ends with `UsageError.exitStatus`.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// The long name of the option it is about, for the `Help:` line that follows the message.
    public var option: String?

    /// EX_USAGE (sysexits.h), the status swift-argument-parser gave tonearmd's usage errors.
    public static let exitStatus: Int32 = 64

    public init(_ message: String, option: String? = nil) {
        self.message = message
        self.option = option
    }

    public var description: String { message }

    /// `'a', 'b' or 'c'`.
    static func list(_ values: [String]) -> String {
        let quoted = values.map { "'\($0)'" }
        guard quoted.count > 1 else { return quoted.first ?? "" }
        return quoted.dropLast().joined(separator: ", ") + " or " + quoted.last!
    }
}
