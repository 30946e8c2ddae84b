import Foundation
import TestSupport
import XCTest

/// A private bus, a `tonearmd` on it (silent real-time sink), and the built `tonearm` run against
/// it. Waits read signals with `gdbus monitor` (subscribe, then read, then wait): no sleeps.
final class CLIHarness: @unchecked Sendable {
    static let name = "org.mpris.MediaPlayer2.tonearm"
    static let path = "/org/mpris/MediaPlayer2"
    static let player = "org.mpris.MediaPlayer2.Player"
    static let extensionInterface = "io.github.tonearm.Player1"

    let bus: PrivateBus
    let directory: URL
    private(set) var daemon: Daemon?
    private var daemonLog: URL { directory.appendingPathComponent("tonearmd.log") }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        bus = try PrivateBus()
    }

    /// A product built next to the test bundle (`tonearm`, `tonearmd`).
    static func executable(_ name: String) throws -> URL { try BuiltProduct.executable(name) }

    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        environment["XDG_CACHE_HOME"] = directory.appendingPathComponent("cache").path
        // a state of its own: no test resumes another's queue
        environment["XDG_STATE_HOME"] = directory.appendingPathComponent("state").path
        environment["XDG_MUSIC_DIR"] = directory.appendingPathComponent("music").path
        environment.removeValue(forKey: "TONEARM_AUDIO_SINK")
        return environment
    }

    /// Starts tonearmd on `files` and waits for it to own its name (`gdbus wait`: the bus says so).
    /// Variables tonearmd gets beyond the harness's (`TONEARM_RESUME_THRESHOLD`), for every start.
    var serviceEnvironment: [String: String] = [:]

    func startService(_ files: [URL] = []) throws {
        daemon = try Daemon.launch(on: bus, arguments: files.map(\.path), cacheHome: directory.appendingPathComponent("cache"),
                                   stateHome: directory.appendingPathComponent("state"),
                                   musicDirectory: directory.appendingPathComponent("music"),
                                   extraEnvironment: serviceEnvironment, log: daemonLog)
        let wait = try Tool.run("gdbus", ["wait", "--address", bus.address, "--timeout", "20", Self.name], timeout: 30)
        guard wait.status == 0 else { throw TestError("tonearmd did not take \(Self.name): \(wait.stderr)\n\(logs)") }
    }

    /// Ends tonearmd with SIGTERM (it saves what it was left doing) and starts it again.
    func restartService(file: StaticString = #filePath, line: UInt = #line) throws {
        let running = try XCTUnwrap(daemon, file: file, line: line)
        kill(running.pid, SIGTERM)
        XCTAssertEqual(running.waitForExit(timeout: 10), 0, "tonearmd's exit status", file: file, line: line)
        try startService()
    }

    /// `tonearm status`'s lines as [label, value] pairs.
    func statusLines() throws -> (text: String, lines: [[String]]) {
        let human = try ok("status")
        return (human, human.split(separator: "\n").map { $0.split(separator: " ", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) } })
    }

    /// What a `tonearm` run printed and its exit status.
    struct Output {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs the built `tonearm` with `arguments` in `directory` (the harness's own when nil).
    func tonearm(_ arguments: [String], in workingDirectory: URL? = nil,
                 environment extra: [String: String] = [:]) throws -> Output {
        let process = Process()
        process.executableURL = try Self.executable("tonearm")
        process.arguments = arguments
        process.environment = environment.merging(extra) { $1 }
        process.currentDirectoryURL = workingDirectory ?? directory
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let pid = process.processIdentifier
        // a hung client fails its test instead of hanging the run
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 30, execute: watchdog)
        final class Box: @unchecked Sendable { var data = Data() }  // written before the semaphore is signalled
        let errBox = Box(), errDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            errBox.data = err.fileHandleForReading.readDataToEndOfFile()
            errDone.signal()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        errDone.wait()
        process.waitUntilExit()
        watchdog.cancel()
        if process.terminationReason == .uncaughtSignal {
            throw TestError("tonearm \(arguments.joined(separator: " ")) died of signal \(process.terminationStatus)")
        }
        return Output(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                           stderr: String(decoding: errBox.data, as: UTF8.self))
    }

    /// `tonearm ARGS` that must succeed: its stdout.
    @discardableResult
    func ok(_ arguments: String..., in workingDirectory: URL? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let output = try tonearm(arguments, in: workingDirectory)
        XCTAssertEqual(output.status, 0, "tonearm \(arguments.joined(separator: " ")): \(output.stderr)", file: file, line: line)
        XCTAssertEqual(output.stderr, "", "tonearm \(arguments.joined(separator: " ")) wrote to stderr", file: file, line: line)
        return output.stdout
    }

    /// `playerctl -p tonearm ARGS`: trimmed stdout.
    func playerctl(_ arguments: String...) throws -> String {
        let output = try Tool.run("playerctl", ["-p", "tonearm"] + arguments, environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address],
                                  timeout: 15)
        guard output.status == 0 else { throw TestError("playerctl \(arguments) failed: \(output.stderr)") }
        return output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `busctl get-property` with its JSON: the `data` of the value.
    func property(_ interface: String, _ name: String) throws -> Any {
        let output = try Tool.busctl(bus, ["--json=short", "get-property", Self.name, Self.path, interface, name])
        guard let object = try Tool.json(output) as? [String: Any], let data = object["data"] else {
            throw TestError("busctl get-property \(name): \(output)")
        }
        return data
    }

    /// Waits until `isTrue()` holds, re-checking it at every signal from the service's object
    /// (`gdbus monitor`, subscribed before the first check).
    /// `signals`: parts of gdbus monitor's line of a signal that may make it true.
    func wait(for what: String, timeout: TimeInterval = 15, signals: [String] = ["PropertiesChanged", ".Seeked"],
              until isTrue: () throws -> Bool) throws {
        let monitor = try FollowingProcess("gdbus", ["monitor", "--address", bus.address, "--dest", Self.name,
                                                     "--object-path", Self.path], environment: [:])
        defer { monitor.stop() }
        // subscribed once gdbus has looked up the owner, after its AddMatch
        var seen = try monitor.wait(for: "gdbus monitor to start", timeout: timeout) { $0.contains("is owned by") }
        let deadline = Date() + timeout
        while try !isTrue() {
            seen = try monitor.wait(for: "\(what)\n\(logs)", from: seen + 1, timeout: max(0, deadline.timeIntervalSinceNow)) { line in
                signals.contains { line.contains($0) }
            }
        }
    }

    func waitForStatus(_ status: String) throws {
        try wait(for: "PlaybackStatus \(status)") { try playerctl("status") == status }
    }

    func waitForReady(title: String? = nil) throws {
        try wait(for: "ItemStatus readyToPlay\(title.map { " and title \($0)" } ?? "")") {
            try property(Self.extensionInterface, "ItemStatus") as? String == "readyToPlay"
                && (title == nil || (try playerctl("metadata", "xesam:title")) == title)
        }
    }

    var logs: String { "--- tonearmd:\n" + ((try? String(contentsOf: daemonLog, encoding: .utf8)) ?? "(no log)") }

    func tearDown() {
        daemon?.stop()
        bus.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// The base of the CLI tests: a fresh harness per test; media made once per class.
class CLITestCase: XCTestCase {
    private(set) var harness: CLIHarness!
    nonisolated(unsafe) private static var generators: [String: MediaGenerator] = [:]
    nonisolated(unsafe) private static var made: [String: URL] = [:]

    override func setUpWithError() throws {
        try super.setUpWithError()
        harness = try CLIHarness()
    }

    override func tearDown() {
        if let harness {
            if let run = testRun, run.failureCount + run.unexpectedExceptionCount > 0 {
                print(harness.logs.split(separator: "\n").suffix(60).joined(separator: "\n"))
            }
            harness.tearDown()
        }
        harness = nil
        super.tearDown()
    }

    /// A tagged Ogg Vorbis tone, made once per class under `name`.
    func track(_ name: String, title: String, artist: String = "Tester", album: String = "Album", seconds: Double = 30) throws -> URL {
        try made(name) { try $0.tone(name, format: .ogg, seconds: seconds, tags: .init(title: title, artist: artist, album: album, trackNumber: 1)) }
    }

    /// A silent WAV whose cue points are its chapters (`MediaGenerator.wavWithCues`), made once per class under `name`.
    func chaptered(_ name: String, seconds: Double, cues: [(seconds: Double, title: String)]) throws -> URL {
        try made(name) { try $0.wavWithCues(name, seconds: seconds, cues: cues) }
    }

    private func made(_ name: String, _ make: (MediaGenerator) throws -> URL) throws -> URL {
        let key = "\(type(of: self)).\(name)"
        if let url = Self.made[key] { return url }
        let classKey = String(describing: type(of: self))
        let generator = try Self.generators[classKey] ?? MediaGenerator()
        Self.generators[classKey] = generator
        let url = try make(generator)
        Self.made[key] = url
        return url
    }
}

/// A long-running command (`tonearm watch`) whose output is read a line at a time, as it comes.
final class Spawned: @unchecked Sendable {
    // @unchecked: `buffer`, `lines` and `ended` are guarded by `lock`
    let process = Process()
    private let output = Pipe(), errors = Pipe(), input = Pipe()
    private var buffer = Data()
    private var lines: [String] = []
    private var ended = false
    private let lock = NSLock()
    private let arrived = DispatchSemaphore(value: 0)
    private let errorText = ErrorText()
    let description: String

    private final class ErrorText: @unchecked Sendable {
        // written once by the reader thread before `done` is signalled
        var data = Data()
        let done = DispatchSemaphore(value: 0)
    }

    init(_ executable: URL, _ arguments: [String], environment: [String: String]) throws {
        description = ([executable.lastPathComponent] + arguments).joined(separator: " ")
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            guard let self else { return }
            self.lock.withLock {
                if chunk.isEmpty {
                    self.ended = true
                    handle.readabilityHandler = nil
                }
                self.buffer.append(chunk)
                while let newline = self.buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    self.lines.append(String(decoding: self.buffer[self.buffer.startIndex..<newline], as: UTF8.self))
                    self.buffer.removeSubrange(self.buffer.startIndex...newline)
                }
            }
            self.arrived.signal()
        }
        let errorText = self.errorText, errors = self.errors
        try process.run()
        DispatchQueue.global().async {
            errorText.data = errors.fileHandleForReading.readDataToEndOfFile()
            errorText.done.signal()
        }
    }

    /// The next line of stdout; nil when the output ended. Throws after `timeout` seconds.
    func nextLine(timeout: TimeInterval = 15, waitingFor what: String) throws -> String? {
        // a sanitized tonearmd (make test-asan, test-tsan) walks and answers several times slower
        let slowdown: Double = switch ProcessInfo.processInfo.environment["SWIFT_SANITIZE"] ?? "" {
        case "": 1
        case "address": 15
        default: 6
        }
        let deadline = Date() + timeout * slowdown
        while true {
            let (line, ended): (String?, Bool) = lock.withLock {
                lines.isEmpty ? (nil, self.ended) : (lines.removeFirst(), false)
            }
            if let line { return line }
            if ended { return nil }
            guard arrived.wait(timeout: .now() + max(0, deadline.timeIntervalSinceNow)) == .success else {
                throw TestError("\(description): timed out waiting for \(what)")
            }
        }
    }

    /// Closes stdin (the pty helper's cue to send Ctrl-C).
    func closeInput() { try? input.fileHandleForWriting.close() }

    /// Waits for the exit (killing it after `timeout` seconds): its status and stderr.
    func finish(timeout: TimeInterval = 15) -> (status: Int32, stderr: String) {
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { Glibc.kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        process.waitUntilExit()
        watchdog.cancel()
        errorText.done.wait()
        let status = process.terminationReason == .uncaughtSignal ? -process.terminationStatus : process.terminationStatus
        return (status, String(decoding: errorText.data, as: UTF8.self))
    }

    func kill() {
        if process.isRunning { process.terminate() }
    }
}

extension CLIHarness {
    /// Starts the built `tonearm` with `arguments`, its stdout a pipe.
    func spawn(_ arguments: [String], environment changes: [String: String?] = [:]) throws -> Spawned {
        var environment = self.environment
        for (name, value) in changes { environment[name] = value }
        return try Spawned(try Self.executable("tonearm"), arguments, environment: environment)
    }

    /// Starts the built `tonearm` with `arguments` on a pseudo-terminal `columns` wide, through
    /// python3's `pty`. Each line of the result is one thing the terminal was sent: `pid N` first
    /// (tonearm's), then every frame the program drew (a JSON string, from its carriage return to
    /// its erase-to-end-of-line), a `rest` JSON string with whatever followed the last frame, and
    /// `exit N` (N negative for a signal). Closing the input sends tonearm SIGINT, as Ctrl-C would.
    func spawnOnTerminal(_ arguments: [String], columns: Int) throws -> Spawned {
        let script = #"""
            import json, os, pty, select, signal, struct, sys, fcntl, termios
            columns, argv = int(sys.argv[1]), sys.argv[2:]
            pid, fd = pty.fork()
            if pid == 0:
                fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
                os.execv(argv[0], argv)
            print("pid %d" % pid, flush=True)
            pending, stdin_open = "", True
            while True:
                ready, _, _ = select.select([fd] + ([0] if stdin_open else []), [], [])
                if 0 in ready and not os.read(0, 1024):
                    stdin_open = False
                    os.kill(pid, signal.SIGINT)
                if fd in ready:
                    try:
                        data = os.read(fd, 4096)
                    except OSError:
                        data = b""
                    if not data:
                        break
                    pending += data.decode("utf-8", "replace")
                    while "\x1b[K" in pending:
                        frame, pending = pending.split("\x1b[K", 1)
                        print(json.dumps(frame), flush=True)
            print("rest " + json.dumps(pending), flush=True)
            _, status = os.waitpid(pid, 0)
            print("exit %d" % (os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)), flush=True)
            """#
        return try Spawned(URL(fileURLWithPath: try Tool.path("python3")),
                           ["-c", script, String(columns), try Self.executable("tonearm").path] + arguments,
                           environment: environment)
    }
}
