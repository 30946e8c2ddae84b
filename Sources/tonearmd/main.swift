import ArgumentParser
import Dispatch
import Foundation
import Logging
import PlayerEngine
import PlayerModel

/// tonearmd: for now, plays the URIs it is given through the engine and logs what the player
/// model reports. The MPRIS service comes next (issue 3).
struct Tonearmd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tonearmd", abstract: "The Tonearm player service.", version: "0.1.0")

    @Option(name: .long, help: "A GStreamer bin description for the audio output (default: autoaudiosink; also TONEARM_AUDIO_SINK).")
    var audioSink: String?

    @Option(name: .long, help: "playbin3 (default) or playbin (also TONEARM_PIPELINE).")
    var pipeline: EngineConfiguration.PipelineKind?

    @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    @Argument(help: "Files or URIs to play.")
    var uris: [String] = []

    func run() throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "tonearmd")
        var engineConfiguration = EngineConfiguration.fromEnvironment()
        if let audioSink { engineConfiguration.audioSink = audioSink }
        if let pipeline { engineConfiguration.pipeline = pipeline }

        let queue = DispatchQueue(label: "tonearm.player")
        let engine = try GStreamerEngine(configuration: engineConfiguration, queue: queue, logger: logger)
        let player = Player(engine: engine, queue: queue)
        let subscription = player.subscribe { event in
            switch event {
            case .currentItemChanged(let item?):
                logger.info("now: \(item.displayTitle)", metadata: ["uri": "\(item.uri)"])
            case .metadataChanged(_, let metadata):
                if let title = metadata.title { logger.info("title: \(title)") }
            case .timeControlStatusChanged(let status):
                logger.info("time control: \(status.name)\(status.waitingReason.map { " (\($0.rawValue))" } ?? "")")
            case .itemFailed(_, let error):
                logger.error("\(error.message)")
            case .intentChanged(.stopped) where player.state.items.isEmpty == false:
                logger.info("stopped")
            default:
                break
            }
        }
        var parsed: [MediaURI] = []
        for text in uris {
            do { parsed.append(try MediaURI(text)) } catch { throw ValidationError(error.message) }
        }
        try player.enqueue(parsed)
        player.play()
        withExtendedLifetime(subscription) { dispatchMain() }
    }
}

extension EngineConfiguration.PipelineKind: ExpressibleByArgument {}
extension Logger.Level: @retroactive ExpressibleByArgument {}

Tonearmd.main()
