import CommandLineOptions
import Logging

/// tonearm-engine's command line, one table for both ends: `RemoteEngine` writes it and the
/// engine's `main` reads it with the reader tonearmd reads its own with (`CommandLineOptions`).
public struct EngineOptions: Sendable, Equatable {
    /// The log's level, tonearmd's own (`tonearmd --log-level`).
    public var logLevel: Logger.Level = .info

    public init(logLevel: Logger.Level = .info) {
        self.logLevel = logLevel
    }

    /// The arguments that say these options.
    public var arguments: [String] { ["--log-level", logLevel.rawValue] }

    /// The engine's options, its help and its errors.
    public static let command = CommandDescription<EngineOptions>(
        name: "tonearm-engine", version: "0.1.0",
        abstract: "Tonearm's GStreamer engine: tonearmd starts it when something needs GStreamer and talks to it on its stdin and stdout.",
        discussion: "Not a program to run by hand: each line on stdin is a request of tonearmd's, each line on stdout a report (EngineWire).",
        options: [.logLevel { $0.logLevel = $1 }], items: nil,
        exitStatuses: [ExitStatus(0, "stdin ended: tonearmd is done with it."), ExitStatus(UsageError.exitStatus, "the command line is wrong.")])
}

extension CommandOption {
    /// `--log-level`, tonearmd's and the engine's: one of swift-log's levels, `info` unless given.
    public static func logLevel(set: @escaping @Sendable (inout Values, Logger.Level) -> Void) -> Self {
        .choice("log-level", "log-level", of: Logger.Level.self, help: "trace, debug, info, notice, warning, error or critical.",
                defaultValue: .info, set: set)
    }
}
