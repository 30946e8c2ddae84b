import Basics
import CommandLineOptions
import EngineLink
import FoundationEssentials
import Logging
import PlayerModel

/// tonearmd's command line: the table of its options (`command`) and the values it reads into.
///
/// The environment variables that set the same things are read where they always were
/// (`EngineConfiguration.fromEnvironment`, `ReconnectPolicy.fromEnvironment`) and the options win
/// over them; the table names them for the help and the man page, and `validate` refuses a value of
/// theirs that does not parse, as an option's would be.
public struct TonearmdOptions: Sendable {
    public var audioSink: String?
    public var snapcast: SnapcastOutput?
    public var pipeline: EngineConfiguration.PipelineKind?
    /// The suffix of the bus name: letters, digits and `_`, not starting with a digit.
    public var instance: String?
    public var logLevel: Logger.Level = .info
    public var networkTimeout: Duration?
    public var reconnectAttempts: Int?
    public var reconnectDelay: Duration?
    public var reconnectMaxDelay: Duration?
    public var stallTimeout: Duration?
    public var resume: ResumeMode = .pause
    public var playlists: String?
    /// Hand the items to a running tonearmd and exit (`--open`).
    public var open = false
    public var items: [String] = []
    /// The environment, read once by the caller: each read builds a dictionary of every variable.
    public let environment: [String: String]
    /// The environment's reconnect policy with the options over it; set by `validate`.
    public private(set) var reconnect = ReconnectPolicy()
    /// `TONEARM_RESUME_THRESHOLD` (`KeptPlaces.swift`).
    public private(set) var resumeThreshold = KeptPlaces.defaultThreshold

    public init(environment: [String: String]) {
        self.environment = environment
    }

    /// Reads `arguments` (without the program's name), or answers `--help`, `--version`, a
    /// completion script or a usage error itself and ends the process.
    public static func read(_ arguments: [String], environment: [String: String]) -> TonearmdOptions {
        command.valuesOrExit(arguments, into: TonearmdOptions(environment: environment))
    }

    /// The service's configuration: the defaults, then the environment, then these options.
    public func configuration(busAddress: String) -> ServiceConfiguration {
        var configuration = ServiceConfiguration(busAddress: busAddress, engine: EngineConfiguration.fromEnvironment(environment),
                                                 instance: instance, resume: resume,
                                                 playlists: playlists.map { URL(fileURLWithPath: $0) }, items: items)
        configuration.logLevel = logLevel
        if let audioSink { configuration.engine.audioSink = audioSink }
        if let pipeline { configuration.engine.pipeline = pipeline }
        if let snapcast { configuration.engine.snapcast = snapcast }
        if let networkTimeout { configuration.engine.networkTimeout = networkTimeout }
        configuration.player.reconnect = reconnect
        configuration.player.resumeThreshold = resumeThreshold
        return configuration
    }

    /// tonearmd's options, help, completions and man page. The texts are the ones its
    /// swift-argument-parser command had.
    public static let command = CommandDescription<TonearmdOptions>(
        name: "tonearmd", version: "0.1.0",
        abstract: "The Tonearm player service: plays media and publishes itself on the D-Bus session bus as an MPRIS 2.2 player.",
        discussion: "Drive it with any MPRIS client, for example `playerctl -p tonearm play`.",
        options: [
            .value("audio-sink", "description", help: "A GStreamer bin description for the audio output.",
                   discussion: "Default: autoaudiosink, or a silent real-time sink when there is no sound device. Also TONEARM_AUDIO_SINK.",
                   environment: "TONEARM_AUDIO_SINK") { $0.audioSink = $1 },
            .value("snapcast", "url",
                   help: "A snapserver's TCP source to offer as the output `snapcast`: tcp://HOST:PORT, optionally ?sampleformat=48000:16:2 as in its source line.",
                   discussion: "Also TONEARM_SNAPCAST. Choose it with `tonearm output snapcast`.",
                   environment: "TONEARM_SNAPCAST") { (options: inout TonearmdOptions, text: String) throws(UsageError) in
                options.snapcast = try snapcast(text, from: "--snapcast")
            },
            .choice("pipeline", "pipeline", of: EngineConfiguration.PipelineKind.self,
                    help: "playbin or playbin3 (default: playbin before GStreamer 1.24, playbin3 from it). Also TONEARM_PIPELINE.",
                    environment: "TONEARM_PIPELINE") { $0.pipeline = $1 },
            .value("instance", "name", help: "Own org.mpris.MediaPlayer2.tonearm.<name> instead of the plain name.") {
                (options: inout TonearmdOptions, text: String) throws(UsageError) in
                guard let first = text.first, !first.isNumber, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
                    throw UsageError("--instance takes letters, digits and '_', not starting with a digit: \(text)")
                }
                options.instance = text
            },
            .logLevel { $0.logLevel = $1 },
            .value("network-timeout", "seconds",
                   help: "Seconds an HTTP connection may stay silent before it counts as lost and is reconnected (1-3600; default 10). Also TONEARM_NETWORK_TIMEOUT.",
                   environment: "TONEARM_NETWORK_TIMEOUT") { (options: inout TonearmdOptions, text: String) throws(UsageError) in
                options.networkTimeout = try networkTimeout(text, from: "--network-timeout")
            },
            .value("reconnect-attempts", "count",
                   help: "How often a network stream that lost its connection is loaded again before it fails (0: never; default 6). Also TONEARM_RECONNECT_ATTEMPTS.",
                   environment: "TONEARM_RECONNECT_ATTEMPTS") { (options: inout TonearmdOptions, text: String) throws(UsageError) in
                options.reconnectAttempts = try usage { () throws(ConfigurationError) in try ReconnectPolicy.parseAttempts(text, name: "--reconnect-attempts") }
            },
            .value("reconnect-delay", "seconds",
                   help: "Seconds before the first reconnect; each next one waits twice as long (default 1). Also TONEARM_RECONNECT_DELAY.",
                   environment: "TONEARM_RECONNECT_DELAY") { (options: inout TonearmdOptions, text: String) throws(UsageError) in
                options.reconnectDelay = try usage { () throws(ConfigurationError) in try ReconnectPolicy.parseSeconds(text, name: "--reconnect-delay") }
            },
            .value("reconnect-max-delay", "seconds",
                   help: "The longest wait between reconnects, in seconds (default 16). Also TONEARM_RECONNECT_MAX_DELAY.",
                   environment: "TONEARM_RECONNECT_MAX_DELAY") { (options: inout TonearmdOptions, text: String) throws(UsageError) in
                options.reconnectMaxDelay = try usage { () throws(ConfigurationError) in try ReconnectPolicy.parseSeconds(text, name: "--reconnect-max-delay") }
            },
            .value("stall-timeout", "seconds",
                   help: "Seconds a stream may wait buffering with no progress before it counts as lost and is reconnected (default 30). Also TONEARM_STALL_TIMEOUT.",
                   environment: "TONEARM_STALL_TIMEOUT") { (options: inout TonearmdOptions, text: String) throws(UsageError) in
                options.stallTimeout = try usage { () throws(ConfigurationError) in try ReconnectPolicy.parseSeconds(text, name: "--stall-timeout") }
            },
            .choice("resume", "mode", of: ResumeMode.self,
                    help: "How to continue the saved queue: play, pause (at the saved position) or none (start empty).",
                    defaultValue: .pause) { $0.resume = $1 },
            .value("playlists", "directory", help: "A folder of playlist files to offer besides $XDG_MUSIC_DIR/Playlists.",
                   completion: .directories) { $0.playlists = $1 },
            .flag("open", help: "Hand the URIs to a running tonearmd (OpenUri) and exit, or with none ask it to Raise; start one when none runs.") {
                $0.open = true
            },
        ],
        items: CommandItems("uris", help: "Files, directories or URIs to play.") { $0.items.append($1) },
        environment: [
            EnvironmentVariable("DBUS_SESSION_BUS_ADDRESS", note: "the bus", help: "The session bus to publish the player on."),
            EnvironmentVariable("XDG_STATE_HOME", note: "the saved state, in tonearm/",
                                help: "The saved state (the queue, the position, the settings) is in its tonearm/ folder (default ~/.local/state)."),
            EnvironmentVariable("XDG_MUSIC_DIR", note: "playlists in Playlists/", help: "The playlist files offered are in its Playlists/ folder."),
            EnvironmentVariable("XDG_CACHE_HOME", note: "downloads while they play",
                                help: "HTTP files are downloaded into it while they play, as files with no name (default ~/.cache)."),
            EnvironmentVariable("TONEARM_ENGINE", note: "the engine's program",
                                help: "The program that runs GStreamer for tonearmd (default: tonearm-engine beside tonearmd)."),
            EnvironmentVariable("TONEARM_ENGINE_TIMEOUT", note: "seconds the engine may leave a command unanswered",
                                help: "How long the engine may leave a command unanswered before it is ended and its item fails as EngineStalled: whole seconds, 1-600 (default 5)."),
            EnvironmentVariable("TONEARM_VIDEO_SINK", note: "the video sink",
                                help: "auto (the default), glimagesink, software, or a sink that draws into a window it is given (ximagesink)."),
            EnvironmentVariable("TONEARM_VIDEO_HELPER", note: "the video window's program",
                                help: "The program that shows video in a window (default: tonearm-video beside tonearmd)."),
            EnvironmentVariable("TONEARM_RESUME_THRESHOLD", note: "seconds an item must last to keep its place",
                                help: "Items longer than this many seconds start where they were left (whole seconds, 0-86400; default 1200: 20 minutes; docs/state.md)."),
            EnvironmentVariable("TONEARM_SANDBOX", note: "the engine's system-call filter and write rules",
                                help: "off runs the engine without its system-call filter and its Landlock rules on writes, for debugging (default: on; docs/sandbox.md)."),
        ],
        exitStatuses: [
            ExitStatus(0, "Ended by SIGTERM, SIGINT or a client's Quit; or --open handed the items over."),
            ExitStatus(1, "No session bus (DBUS_SESSION_BUS_ADDRESS unset or unreachable), the service could not start, or GStreamer could not be set up."),
            ExitStatus(2, "An item given on the command line cannot be played."),
            ExitStatus(UsageError.exitStatus, "The command line or one of the environment variables above is wrong (EX_USAGE)."),
            ExitStatus(69, "The session bus went away (EX_UNAVAILABLE); systemd's Restart=on-failure starts it again."),
        ],
        validate: { (options: inout TonearmdOptions) throws(UsageError) in try options.validate() })

    /// The environment's values, which no option's parse has seen, and the reconnect policy they
    /// and the options make.
    mutating func validate() throws(UsageError) {
        var policy = try Self.usage { () throws(ConfigurationError) in try ReconnectPolicy.fromEnvironment(environment) }
        if let reconnectAttempts { policy.attempts = reconnectAttempts }
        if let reconnectDelay { policy.firstDelay = reconnectDelay }
        if let reconnectMaxDelay { policy.maximumDelay = reconnectMaxDelay }
        if let stallTimeout { policy.stallLimit = stallTimeout }
        reconnect = policy
        if let text = environment["TONEARM_NETWORK_TIMEOUT"] { _ = try Self.networkTimeout(text, from: "TONEARM_NETWORK_TIMEOUT") }
        if let text = environment["TONEARM_SNAPCAST"], !text.isEmpty { _ = try Self.snapcast(text, from: "TONEARM_SNAPCAST") }
        if let text = environment["TONEARM_ENGINE_TIMEOUT"], EngineWatch.Bounds.parseTimeout(text) == nil {
            throw UsageError("TONEARM_ENGINE_TIMEOUT must be a whole number of seconds from 1 to 600, not '\(text)'")
        }
        if let text = environment["TONEARM_RESUME_THRESHOLD"] {
            guard let threshold = PlayerConfiguration.parseResumeThreshold(text) else {
                throw UsageError("TONEARM_RESUME_THRESHOLD must be a whole number of seconds from 0 to 86400, not '\(text)'")
            }
            resumeThreshold = threshold
        }
        if EngineSandbox.parse(environment) == nil {
            throw UsageError("\(EngineSandbox.variable) must be on or off, not '\(environment[EngineSandbox.variable] ?? "")'")
        }
    }

    private static func networkTimeout(_ text: String, from source: String) throws(UsageError) -> Duration {
        guard let timeout = EngineConfiguration.parseTimeout(text) else {
            throw UsageError("\(source) must be a whole number of seconds from 1 to 3600, not '\(text)'")
        }
        return timeout
    }

    private static func snapcast(_ text: String, from source: String) throws(UsageError) -> SnapcastOutput {
        try usage { () throws(ConfigurationError) in
            do throws(ConfigurationError) {
                return try SnapcastOutput.parse(text)
            } catch {
                throw ConfigurationError("\(source): \(error.description)")
            }
        }
    }

    /// `body`'s value, its `ConfigurationError` (whose message names the setting) a usage error.
    private static func usage<T>(_ body: () throws(ConfigurationError) -> T) throws(UsageError) -> T {
        do throws(ConfigurationError) {
            return try body()
        } catch {
            throw UsageError(error.description)
        }
    }
}
