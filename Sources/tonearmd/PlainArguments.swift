import ArgumentParser
import EngineLink
import Logging
import PlayerModel

/// A command line of plain long options and items, read without ArgumentParser's parse.
///
/// That parse reflects over the command's properties (`Mirror`), and each of its dynamic casts
/// makes the Swift runtime scan every protocol conformance of this statically linked program:
/// perf put it at ~5 of the ~9 ms from `exec` to the bus name, and ~7 MiB of the program's pages
/// touched at rest (issue 30). Every ordinary start (D-Bus activation, the systemd unit, a launcher,
/// `tonearmd FILE`) is such a command line. Anything else (`--help`, `--version`, completions, a
/// short or unknown option, a repeated one, a value that does not parse, `--`, an argument that
/// starts with `-`) returns nil, and ArgumentParser parses it and says what is wrong, as before.
extension Tonearmd {
    static func plain(_ arguments: [String]) -> Tonearmd? {
        var values: [String: String] = [:]
        var open = false
        var items: [String] = []
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            guard argument.hasPrefix("-") else {
                items.append(argument)
                continue
            }
            guard argument.hasPrefix("--") else { return nil }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if name == "open", value == nil, !open {
                open = true
                continue
            }
            guard valueOptions.contains(name), values[name] == nil else { return nil }
            if value == nil { value = rest.popFirst() }
            guard let value, !value.hasPrefix("-") else { return nil }
            values[name] = value
        }
        // every property is set: one left as ArgumentParser declared it traps when read
        var command = Tonearmd()
        command.audioSink = values["audio-sink"]
        command.snapcast = values["snapcast"]
        command.instance = values["instance"]
        command.networkTimeout = values["network-timeout"]
        command.reconnectAttempts = values["reconnect-attempts"]
        command.reconnectDelay = values["reconnect-delay"]
        command.reconnectMaxDelay = values["reconnect-max-delay"]
        command.stallTimeout = values["stall-timeout"]
        command.playlists = values["playlists"]
        command.open = open
        command.uris = items
        command.pipeline = nil
        if let text = values["pipeline"] {
            guard let pipeline = EngineConfiguration.PipelineKind(argument: text) else { return nil }
            command.pipeline = pipeline
        }
        guard let resume = parse(values["resume"], or: ResumeMode.pause),
              let logLevel = parse(values["log-level"], or: Logger.Level.info) else { return nil }
        command.resume = resume
        command.logLevel = logLevel
        return command
    }

    /// The long options that take a value, by the names ArgumentParser gives them.
    private static let valueOptions: Set<String> = [
        "audio-sink", "snapcast", "pipeline", "instance", "log-level", "network-timeout", "reconnect-attempts", "reconnect-delay",
        "reconnect-max-delay", "stall-timeout", "resume", "playlists",
    ]

    /// `text` as ArgumentParser would read it, `fallback` when absent; nil when it does not parse.
    private static func parse<Value: ExpressibleByArgument>(_ text: String?, or fallback: Value) -> Value? {
        guard let text else { return fallback }
        return Value(argument: text)
    }

    /// Runs a plain command line as ArgumentParser's `main()` would, or hands it to `main()`.
    static func start() {
        guard let command = plain(Array(CommandLine.arguments.dropFirst())), (try? command.validate()) != nil else {
            // ArgumentParser parses it again and reports what `validate` found
            main()
            return
        }
        do {
            try command.run()
        } catch {
            exit(withError: error)
        }
    }
}
