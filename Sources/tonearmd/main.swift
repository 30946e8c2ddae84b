import ArgumentParser
import Basics
import DBus
import Dispatch
import EngineLink
import FoundationEssentials
import Logging
import PlayerModel
import TonearmClient
import TonearmService

/// tonearmd: the player service. It wires configuration, engine, player and the MPRIS service
/// together and runs until SIGTERM, SIGINT or a client's Quit.
struct Tonearmd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tonearmd",
        abstract: "The Tonearm player service: plays media and publishes itself on the D-Bus session bus as an MPRIS 2.2 player.",
        discussion: """
            Drive it with any MPRIS client, for example `playerctl -p tonearm play`.
            Environment: DBUS_SESSION_BUS_ADDRESS (the bus), TONEARM_AUDIO_SINK, TONEARM_PIPELINE,
            TONEARM_RECONNECT_ATTEMPTS, TONEARM_RECONNECT_DELAY, TONEARM_RECONNECT_MAX_DELAY, TONEARM_NETWORK_TIMEOUT, TONEARM_STALL_TIMEOUT, TONEARM_SNAPCAST, XDG_STATE_HOME (the saved state, in tonearm/), XDG_MUSIC_DIR (playlists in Playlists/).
            """,
        version: "0.1.0")

    @Option(name: .long, help: ArgumentHelp("A GStreamer bin description for the audio output.",
                                            discussion: "Default: autoaudiosink, or a silent real-time sink when there is no sound device. Also TONEARM_AUDIO_SINK.",
                                            valueName: "description"))
    var audioSink: String?

    @Option(name: .long, help: ArgumentHelp("A snapserver's TCP source to offer as the output `snapcast`: tcp://HOST:PORT, optionally ?sampleformat=48000:16:2 as in its source line.",
                                            discussion: "Also TONEARM_SNAPCAST. Choose it with `tonearm output snapcast`.",
                                            valueName: "url"))
    var snapcast: String?

    @Option(name: .long, help: "playbin or playbin3 (default: playbin before GStreamer 1.24, playbin3 from it). Also TONEARM_PIPELINE.")
    var pipeline: EngineConfiguration.PipelineKind?

    @Option(name: .long, help: ArgumentHelp("Own org.mpris.MediaPlayer2.tonearm.<name> instead of the plain name.", valueName: "name"))
    var instance: String?

    @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    @Option(name: .long, help: ArgumentHelp("Seconds an HTTP connection may stay silent before it counts as lost and is reconnected (1-3600; default 10). Also TONEARM_NETWORK_TIMEOUT.", valueName: "seconds"))
    var networkTimeout: String?

    @Option(name: .long, help: ArgumentHelp("How often a network stream that lost its connection is loaded again before it fails (0: never; default 6). Also TONEARM_RECONNECT_ATTEMPTS.", valueName: "count"))
    var reconnectAttempts: String?

    @Option(name: .long, help: ArgumentHelp("Seconds before the first reconnect; each next one waits twice as long (default 1). Also TONEARM_RECONNECT_DELAY.", valueName: "seconds"))
    var reconnectDelay: String?

    @Option(name: .long, help: ArgumentHelp("The longest wait between reconnects, in seconds (default 16). Also TONEARM_RECONNECT_MAX_DELAY.", valueName: "seconds"))
    var reconnectMaxDelay: String?

    @Option(name: .long, help: ArgumentHelp("Seconds a stream may wait buffering with no progress before it counts as lost and is reconnected (default 30). Also TONEARM_STALL_TIMEOUT.", valueName: "seconds"))
    var stallTimeout: String?

    @Option(name: .long, help: ArgumentHelp("How to continue the saved queue: play, pause (at the saved position) or none (start empty).",
                                            valueName: "mode"))
    var resume: ResumeMode = .pause

    @Option(name: .long, help: ArgumentHelp("A folder of playlist files to offer besides $XDG_MUSIC_DIR/Playlists.", valueName: "directory"))
    var playlists: String?

    @Flag(name: .long, help: "Hand the URIs to a running tonearmd (OpenUri) and exit, or with none ask it to Raise; start one when none runs.")
    var open = false

    @Argument(help: "Files, directories or URIs to play.")
    var uris: [String] = []

    /// The reconnect policy: the defaults, then the environment, then the options.
    func reconnectPolicy() throws -> ReconnectPolicy {
        do throws(ConfigurationError) {
            var policy = try ReconnectPolicy.fromEnvironment(Self.environment)
            if let reconnectAttempts { policy.attempts = try ReconnectPolicy.parseAttempts(reconnectAttempts, name: "--reconnect-attempts") }
            if let reconnectDelay { policy.firstDelay = try ReconnectPolicy.parseSeconds(reconnectDelay, name: "--reconnect-delay") }
            if let reconnectMaxDelay { policy.maximumDelay = try ReconnectPolicy.parseSeconds(reconnectMaxDelay, name: "--reconnect-max-delay") }
            if let stallTimeout { policy.stallLimit = try ReconnectPolicy.parseSeconds(stallTimeout, name: "--stall-timeout") }
            return policy
        } catch {
            throw ValidationError(error.description)
        }
    }

    func validate() throws {
        _ = try reconnectPolicy()
        if let networkTimeout, EngineConfiguration.parseTimeout(networkTimeout) == nil {
            throw ValidationError("--network-timeout must be a whole number of seconds from 1 to 3600, not '\(networkTimeout)'")
        }
        if let text = Self.environment["TONEARM_NETWORK_TIMEOUT"], EngineConfiguration.parseTimeout(text) == nil {
            throw ValidationError("TONEARM_NETWORK_TIMEOUT must be a whole number of seconds from 1 to 3600, not '\(text)'")
        }
        do throws(ConfigurationError) {
            if let snapcast { _ = try SnapcastOutput.parse(snapcast) }
            if let text = Self.environment["TONEARM_SNAPCAST"], !text.isEmpty {
                _ = try SnapcastOutput.parse(text)
            }
        } catch {
            throw ValidationError("--snapcast or TONEARM_SNAPCAST: \(error.description)")
        }
        if let instance, instance.isEmpty || !instance.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) || instance.first!.isNumber {
            throw ValidationError("--instance takes letters, digits and '_', not starting with a digit: \(instance)")
        }
    }

    func run() throws {
        Memory.tuneAllocator(environment: Self.environment)
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "tonearmd")
        guard let address = Connection.sessionBusAddress else {
            logger.critical("no session bus: DBUS_SESSION_BUS_ADDRESS is not set (run inside a desktop session, or start one with dbus-run-session)")
            throw ExitCode(1)
        }
        let name = TonearmClient.baseName + (instance.map { ".\($0)" } ?? "")
        if open, try TonearmClient.handOver(uris, to: name, address: address, logger: logger) { return }
        var configuration = ServiceConfiguration(busAddress: address, engine: EngineConfiguration.fromEnvironment(Self.environment),
                                                 instance: instance, resume: resume,
                                                 playlists: playlists.map { URL(fileURLWithPath: $0) }, items: uris)
        configuration.logLevel = level
        if let audioSink { configuration.engine.audioSink = audioSink }
        if let pipeline { configuration.engine.pipeline = pipeline }
        if let snapcast { configuration.engine.snapcast = try? SnapcastOutput.parse(snapcast) }
        if let timeout = networkTimeout.flatMap(EngineConfiguration.parseTimeout) { configuration.engine.networkTimeout = timeout }
        configuration.player.reconnect = try reconnectPolicy()
        let lifecycle = Lifecycle(queue: DispatchQueue(label: "tonearm.service"), logger: logger)
        lifecycle.watchSignals()
        let service = try TonearmService.start(configuration, lifecycle: lifecycle, logger: logger)
        withExtendedLifetime(service) { lifecycle.run() }
    }
}

extension Tonearmd {
    /// The environment, read once: tonearmd sets no variable of its own, and each read builds a
    /// dictionary of all of them (some 100,000 instructions; tonearmd read it 6 times before the service).
    static let environment = Environment.variables()
}

extension EngineConfiguration.PipelineKind: ExpressibleByArgument {}
extension ResumeMode: ExpressibleByArgument {}
extension Logger.Level: @retroactive ExpressibleByArgument {}

Tonearmd.start()
