import ArgumentParser
import FoundationEssentials
import Glibc
import TonearmClient

struct Daemon: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the service (tonearmd) in the foreground, with these options.",
        discussion: """
            Replaces itself with the tonearmd next to tonearm, or else the first on PATH, with the allocator \
            settings of the systemd unit (G_SLICE=always-malloc, GLIBC_TUNABLES=glibc.malloc.tcache_count=0) \
            unless set already; its exit status is tonearmd's (0 on Ctrl-C or SIGTERM). 3 when there is no tonearmd.
            """)
    @Option(name: .long, help: ArgumentHelp("A GStreamer bin description for the audio output (tonearmd --audio-sink).",
                                            valueName: "description"))
    var audioSink: String?
    @Option(name: .long, help: "playbin or playbin3 (tonearmd --pipeline).") var pipeline: PipelineName?
    @Option(name: .long, help: ArgumentHelp("Own org.mpris.MediaPlayer2.tonearm.<name> (tonearmd --instance); `tonearm --instance <name>` talks to it.",
                                            valueName: "name"))
    var instance: String?
    @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical (tonearmd --log-level).")
    var logLevel: LogLevel?
    @Argument(help: ArgumentHelp("Files, directories or URIs to play.", valueName: "uri-or-path")) var items: [String] = []

    enum PipelineName: String, ExpressibleByArgument, CaseIterable { case playbin, playbin3 }
    enum LogLevel: String, ExpressibleByArgument, CaseIterable { case trace, debug, info, notice, warning, error, critical }

    /// tonearmd's command line for these options.
    var arguments: [String] {
        var arguments: [String] = []
        if let audioSink { arguments += ["--audio-sink", audioSink] }
        if let pipeline { arguments += ["--pipeline", pipeline.rawValue] }
        if let instance { arguments += ["--instance", instance] }
        if let logLevel { arguments += ["--log-level", logLevel.rawValue] }
        // after --, an item that starts with a dash stays an item
        return arguments + (items.isEmpty ? [] : ["--"] + items)
    }

    func validate() throws { try ServiceOptions.validate(instance: instance) }

    func run() throws {
        _ = try locations(items)  // a missing file is named here, before the service starts
        guard let executable = ServiceExecutable.find(nextTo: ServiceExecutable.ownDirectory,
                                                      searchPath: ProcessInfo.processInfo.environment["PATH"]) else {
            Output.error("no \(ServiceExecutable.name) next to tonearm (\(ServiceExecutable.ownDirectory ?? "?")) or on PATH; install Tonearm's package or build it with `swift build`")
            throw ExitCode(ExitStatus.noService)
        }
        // set where the process starts, as the systemd unit does: tonearmd does not restart itself for them
        for (name, value) in ServiceExecutable.allocatorEnvironment { setenv(name, value, 0) }
        let argv = [executable] + arguments
        var cArguments = argv.map { strdup($0) } + [nil]
        execv(executable, &cArguments)
        Output.error("cannot run \(executable): \(String(cString: strerror(errno)))")
        throw ExitCode(ExitStatus.noService)
    }
}
