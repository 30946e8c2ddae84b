import ArgumentParser
import Basics
import FoundationEssentials
import Glibc
import Logging
import TonearmClient

/// `tonearm`: the command-line client of a running tonearmd. Each verb is one small command that
/// parses its arguments, makes TonearmClient calls and prints; exit statuses are `ExitStatus`'s.
struct Tonearm: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tonearm",
        abstract: "Control the Tonearm player service (tonearmd) from the command line.",
        discussion: """
            Talks to the tonearmd on the D-Bus session bus (org.mpris.MediaPlayer2.tonearm, or the first \
            org.mpris.MediaPlayer2.tonearm.* instance). Exit status: 0 done, 1 the service answered with an \
            error or refused, 2 wrong usage (or a file that does not exist), 3 no service reachable.
            """,
        version: "0.1.0",
        subcommands: [
            Play.self, Pause.self, Toggle.self, Stop.self, Next.self, Prev.self, Seek.self,
            Volume.self, Mute.self, Unmute.self, Loop.self, Shuffle.self, Rate.self, Retry.self,
            Add.self, Queue.self, Jump.self, Remove.self, Move.self, Clear.self, Playlists.self, PlaylistCommand.self, Save.self,
            Status.self, Watch.self, LyricsCommand.self, Daemon.self,
            Controls.self, Linear.self, Places.self,
            Fullscreen.self, Raise.self, PictureInPicture.self, Gravity.self,
            StopAfter.self, Sleep.self,
            ReplayGain.self, EQ.self,
            OutputCommand.self,
            Crossfade.self,
            Chapters.self, ChapterCommand.self, NextByChapter.self,
        ])
}

/// Exit statuses, one per kind of failure (docs/command-line.md).
enum ExitStatus {
    static let serviceError: Int32 = 1
    static let usage: Int32 = 2
    static let noService: Int32 = 3
}

/// Options every command that talks to the service takes.
struct ServiceOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Talk to org.mpris.MediaPlayer2.tonearm.<name> (tonearmd --instance).",
                                            valueName: "name"))
    var instance: String?

    func validate() throws { try Self.validate(instance: instance) }

    /// An instance name is the last element of a bus name.
    static func validate(instance: String?) throws {
        if let instance, instance.isEmpty || instance.first!.isNumber
            || !instance.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) {
            throw ValidationError("--instance takes letters, digits and '_', not starting with a digit: \(instance)")
        }
    }

    /// The service's refusal of a seek, Next or a rate while linear playback is on.
    static let linearPlaybackError = "io.github.tonearm.Error.LinearPlayback"

    /// Connects, runs `body` with the client, and turns a `ClientError` into its message on stderr
    /// and its exit status.
    @discardableResult
    func withClient<T>(_ body: (TonearmClient) throws -> T) throws -> T {
        do {
            let client = try TonearmClient(service: instance.map { .instance($0) } ?? .any, logger: Output.logger)
            defer { client.close() }
            return try body(client)
        } catch let error as ClientError {
            switch error.code {
            case .noBus:
                Output.error("\(error.message)\nrun it inside a desktop session, or start a bus and tonearmd with `dbus-run-session -- sh -c 'tonearmd & exec $SHELL'`")
                throw ExitCode(ExitStatus.noService)
            case .noService:
                Output.error("\(error.message)\nstart one with `tonearmd &` (or `systemctl --user start tonearmd`)")
                throw ExitCode(ExitStatus.noService)
            case _ where error.dbusErrorName == ServiceOptions.linearPlaybackError:
                Output.error("\(error.description)\nturn it off with `tonearm linear off`")
                throw ExitCode(ExitStatus.serviceError)
            default:
                Output.error(error.description)
                throw ExitCode(ExitStatus.serviceError)
            }
        }
    }
}

/// Files, directories and URIs from the command line as URIs; a path that names nothing is
/// reported here (`no such file: PATH`, exit status 2) before the service is asked.
func locations(_ texts: [String]) throws -> [String] {
    let missing = MediaLocation.missingFiles(texts)
    if !missing.isEmpty {
        for path in missing { Output.error("no such file: \(path)") }
        throw ExitCode(ExitStatus.usage)
    }
    return texts.map { MediaLocation.uri(for: $0) }
}

enum Output {
    /// Libraries get a logger, never make one: this is the CLI's, on stderr, quiet unless something is wrong.
    static let logger: Logger = {
        var logger = Logger(label: "tonearm") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        return logger
    }()

    static func error(_ message: String) {
        writeAll("tonearm: \(message)\n", to: STDERR_FILENO)
    }
}

/// Writes all of `text` to the file descriptor `fd`, straight (no buffer to flush); gives up on an
/// error other than EINTR (a closed pipe).
func writeAll(_ text: String, to fd: Int32) {
    Files.writeAll(Array(text.utf8), to: fd)
}
