import Foundation

/// A product of this package built next to the tests (`tonearmd`, `tonearm`).
public enum BuiltProduct {
    /// `name` in the tests' bin directory, or the path in the environment variable `override` when set.
    public static func executable(_ name: String, override: String? = nil) throws -> URL {
        if let override, let path = ProcessInfo.processInfo.environment[override] { return URL(fileURLWithPath: path) }
        let binDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var candidates = [binDirectory.appendingPathComponent(name)]
        // `swift test` may name the bundle directory as argument 0 on some platforms
        candidates.append(binDirectory.deletingLastPathComponent().appendingPathComponent(name))
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent(name))
        }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw TestError("\(name) is not built next to the tests (looked at \(candidates.map(\.path))); build with --build-tests")
        }
        return found
    }
}

/// One running `tonearmd`.
public final class Daemon: @unchecked Sendable {
    public let process: Process
    public let log: URL
    /// The well-known name it owns and its unique connection name.
    public var busName = ""
    public var uniqueName = ""
    private let exited = DispatchSemaphore(value: 0)

    /// The name playerctl knows it by (`tonearm`, or `tonearm.instance<pid>`).
    public var playerName: String { String(busName.dropFirst("org.mpris.MediaPlayer2.".count)) }
    public var pid: Int32 { process.processIdentifier }

    public init(executable: URL, arguments: [String], environment: [String: String], log: URL,
         onExit: @escaping @Sendable () -> Void) throws {
        self.log = log
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = handle
        process.standardError = handle
        let exited = self.exited
        process.terminationHandler = { _ in
            exited.signal()
            onExit()
        }
        try process.run()
    }

    public var isRunning: Bool { process.isRunning }

    /// What it logged so far.
    public var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "(no log)" }

    /// Waits for it to exit; nil when it is still running after `timeout`.
    public func waitForExit(timeout: TimeInterval) -> Int32? {
        guard exited.wait(timeout: .now() + timeout) == .success else { return nil }
        exited.signal()  // others may wait too
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// SIGTERM, then SIGKILL when it does not exit within `grace` seconds.
    public func stop(grace: TimeInterval = 5) {
        guard process.isRunning else { return }
        process.terminate()
        if waitForExit(timeout: grace) == nil {
            kill(process.processIdentifier, SIGKILL)
            _ = waitForExit(timeout: grace)
        }
    }

    /// Starts the built `tonearmd` on `bus` with a sink of its own (`sink`: silent and real time by
    /// default; nil: no `--audio-sink`, the default path, `autoaudiosink`, which finds a
    /// `SoundServer` named in `extraEnvironment`), debug logs to `log`, covers under `cacheHome`, its saved state under `stateHome`
    /// and playlists in `musicDirectory`/Playlists (a test's own: no test resumes another's queue),
    /// and `arguments` (files, options). The environment is this process's, less
    /// `TONEARM_AUDIO_SINK`; `TONEARM_TEST_PIPELINE` picks the pipeline, and under `make test-asan`
    /// tonearmd gets `TONEARMD_ASAN_OPTIONS` (scripts/test.sh). `launcher`: a command that runs
    /// tonearmd in its place (exec, so the pid stays), with its arguments:
    /// `["/usr/bin/prlimit", "--fsize=65536", "--"]` starts it with a file-size limit.
    /// `extraEnvironment` is set last (`GST_REGISTRY` of the test's own: a first start).
    public static func launch(on bus: PrivateBus, arguments: [String] = [], sink: String? = "fakesink sync=true",
                              cacheHome: URL, stateHome: URL, musicDirectory: URL, launcher: [String] = [],
                              extraEnvironment: [String: String] = [:], log: URL,
                              onExit: @escaping @Sendable () -> Void = {}) throws -> Daemon {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        environment["XDG_CACHE_HOME"] = cacheHome.path
        environment["XDG_STATE_HOME"] = stateHome.path
        environment["XDG_MUSIC_DIR"] = musicDirectory.path
        environment.removeValue(forKey: "TONEARM_AUDIO_SINK")
        // make test-asan checks tonearmd for leaks at its exit, not this test runner (scripts/test.sh)
        if let options = environment["TONEARMD_ASAN_OPTIONS"] { environment["ASAN_OPTIONS"] = options }
        environment.merge(extraEnvironment) { _, extra in extra }
        var arguments = arguments
        // the same tests run against legacy playbin: TONEARM_TEST_PIPELINE=playbin
        if let pipeline = environment["TONEARM_TEST_PIPELINE"], !pipeline.isEmpty { arguments = ["--pipeline", pipeline] + arguments }
        var executable = try BuiltProduct.executable("tonearmd", override: "TONEARMD")
        arguments = (sink.map { ["--audio-sink", $0] } ?? []) + ["--log-level", "debug"] + arguments
        if let first = launcher.first {
            arguments = Array(launcher.dropFirst()) + [executable.path] + arguments
            executable = URL(fileURLWithPath: first)
        }
        return try Daemon(executable: executable, arguments: arguments, environment: environment, log: log, onExit: onExit)
    }
}
