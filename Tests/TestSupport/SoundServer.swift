import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real sound server of the test's own, with null sinks the test names, in a runtime directory
/// of its own: no system or user daemon is touched. Two kinds (`Kind`): Debian 12's PipeWire
/// 0.3.65 as a GNOME desktop runs it (`pipewire`, `wireplumber`, `pipewire-pulse`, and a
/// dbus-daemon for wireplumber), or PulseAudio (`pulseaudio -n` with a four-line script). Programs
/// reach it through `environment` (PULSE_SERVER, XDG_RUNTIME_DIR and a client.conf that never
/// autospawns a server of its own when this one is killed), over the Pulse protocol either way.
/// What a sink plays is heard on its monitor (`capture(_:)`), as a desktop's sound settings would
/// show it. Null sinks load and unload with `pactl` on either, as a USB DAC comes and goes.
public final class SoundServer: @unchecked Sendable {
    // @unchecked: the fields that change (`process`, `modules`, `sinks`) are guarded by `lock`.
    /// Which server: `TONEARM_TEST_SOUND_SERVER` (`pipewire` or `pulseaudio`) picks the default.
    public enum Kind: String, CaseIterable, Sendable {
        case pipewire, pulseaudio

        /// `TONEARM_TEST_SOUND_SERVER`, else PipeWire: what a Debian 12 GNOME desktop runs.
        public static var fromEnvironment: Kind {
            ProcessInfo.processInfo.environment["TONEARM_TEST_SOUND_SERVER"].flatMap { Kind(rawValue: $0) } ?? .pipewire
        }
    }

    public let kind: Kind
    /// Everything of this server: its runtime directory, config, log, captures.
    public let directory: URL
    public let runtimeDirectory: URL
    /// The Pulse protocol's socket (pipewire-pulse makes it in `pulse/` of the runtime directory).
    public var socketPath: String { pulseRuntimeDirectory.appendingPathComponent("native").path }
    private var pulseRuntimeDirectory: URL {
        kind == .pipewire ? runtimeDirectory.appendingPathComponent("pulse") : runtimeDirectory
    }
    /// What PULSE_SERVER names.
    public var address: String { "unix:\(socketPath)" }
    public let log: URL
    private let clientConfig: URL
    private let lock = NSLock()
    /// The shell that waits for the server (see `start`), and the pids of the server's processes
    /// by name (`pulseaudio`; or `dbus-daemon`, `pipewire`, `wireplumber`, `pipewire-pulse`).
    private var process: Process?
    private var serverPIDs: [String: Int32] = [:]
    /// The null sinks loaded now, in order, and the index of the module of each.
    private var sinks: [String] = []
    private var modules: [String: Int] = [:]
    private var defaultSink: String?

    /// The sample format of every null sink and of captures: what a player's stream is converted to.
    public static let rate = 48000
    public static let channels = 2

    /// Starts a server with null sinks named `sinks` (the first is the default), and waits until
    /// it answers.
    public init(_ kind: Kind = .fromEnvironment, sinks: [String] = ["speakers"]) throws {
        self.kind = kind
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-sound-\(UUID().uuidString)")
        runtimeDirectory = directory.appendingPathComponent("runtime")
        log = directory.appendingPathComponent("\(kind.rawValue).log")
        clientConfig = directory.appendingPathComponent("client.conf")
        try FileManager.default.createDirectory(at: runtimeDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        // a client whose server went away must not start one of its own (libpulse autospawn)
        try "autospawn = no\n".write(to: clientConfig, atomically: true, encoding: .utf8)
        self.sinks = sinks
        defaultSink = sinks.first
        try start()
    }

    deinit { stop() }

    /// The variables a client (tonearmd, pactl, parec, gst-launch) needs to reach this server only.
    public var environment: [String: String] {
        ["PULSE_SERVER": address, "XDG_RUNTIME_DIR": runtimeDirectory.path, "PULSE_RUNTIME_PATH": pulseRuntimeDirectory.path,
         "PULSE_CLIENTCONFIG": clientConfig.path, "PULSE_COOKIE": directory.appendingPathComponent("cookie").path]
    }

    public var isRunning: Bool { lock.withLock { process?.isRunning ?? false } }
    /// The server's own pid (not the shell's that waits for it): pulseaudio's, or pipewire-pulse's.
    public var pid: Int32? { lock.withLock { serverPIDs[kind == .pipewire ? "pipewire-pulse" : "pulseaudio"] } }

    /// Starts the server (again, after `kill`), with the sinks loaded at that moment and the
    /// default sink as it was, and waits until it answers (at most `timeout`).
    public func start(timeout: TimeInterval = 20) throws {
        let (sinks, defaultSink) = lock.withLock { (self.sinks, self.defaultSink) }
        try FileManager.default.createDirectory(at: pulseRuntimeDirectory, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: socketPath)
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        handle.seekToEndOfFile()
        let pidFile = directory.appendingPathComponent("pids")
        try? FileManager.default.removeItem(at: pidFile)
        let process = Process()
        // pulseaudio closes every inherited fd as it starts (pa_close_all), among them the one
        // Foundation watches for a child's exit: Foundation then blocks its monitor thread in
        // wait4 on the server, and no later Process in this runner is ever seen to exit. A shell
        // that waits for the server is the child instead, and it exits when the server does.
        // PipeWire's three run under one such shell too, which writes each one's pid.
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        switch kind {
        case .pulseaudio: process.arguments = try pulseAudioScript(sinks: sinks, defaultSink: defaultSink, pidFile: pidFile)
        case .pipewire: process.arguments = pipeWireScript(pidFile: pidFile)
        }
        var environment = ProcessInfo.processInfo.environment.merging(self.environment) { $1 }
        // its state, config and cookie files, not the user's (wireplumber keeps the default sink
        // and streams' volumes in XDG_STATE_HOME)
        environment["HOME"] = directory.path
        environment["XDG_CONFIG_HOME"] = directory.appendingPathComponent("config").path
        environment["XDG_STATE_HOME"] = directory.appendingPathComponent("state").path
        for name in ["PULSE_SERVER", "PULSE_RUNTIME_PATH", "DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY"] {
            environment.removeValue(forKey: name)
        }
        process.environment = environment
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        lock.withLock {
            self.process = process
            serverPIDs = [:]
        }
        let deadline = Date().addingTimeInterval(timeout)
        // a bounded wait: the server has no signal for "ready" that a test can wait on
        func waitUntil(_ what: String, _ done: () -> Bool) throws {
            while !done() {
                guard process.isRunning, Date() < deadline else {
                    throw TestError("\(kind.rawValue): \(what) within \(timeout) s; its log:\n\(logText)")
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        try waitUntil("the Pulse server did not answer") { (try? pactl(["info"])) != nil }
        if kind == .pipewire {
            // pipewire-pulse's null sinks are its own modules: loaded again on every start
            for sink in sinks { try loadModule(sink) }
            // the default is wireplumber's to keep: until it is up, pipewire-pulse answers "Not
            // supported", and it applies the default a moment later; so again until it says it
            if let defaultSink {
                try waitUntil("\(defaultSink) did not become the default sink") {
                    (try? pactl(["set-default-sink", defaultSink])) != nil
                        && (try? pactl(["get-default-sink"]))?.trimmingCharacters(in: .whitespacesAndNewlines) == defaultSink
                }
            }
        }
        let indexes = try moduleIndexes()
        let pids = ((try? String(contentsOf: pidFile, encoding: .utf8)) ?? "").split(separator: "\n").reduce(into: [String: Int32]()) {
            let fields = $1.split(separator: " ")
            if fields.count == 2, let pid = Int32(fields[1]) { $0[String(fields[0])] = pid }
        }
        let expected = kind == .pipewire ? ["dbus-daemon", "pipewire", "wireplumber", "pipewire-pulse"] : ["pulseaudio"]
        guard Set(pids.keys) == Set(expected) else { throw TestError("the pids of \(expected) are not all in \(pidFile.path): \(pids)") }
        lock.withLock {
            modules = indexes
            serverPIDs = pids
        }
    }

    /// The shell's arguments that start pulseaudio with `sinks`.
    private func pulseAudioScript(sinks: [String], defaultSink: String?, pidFile: URL) throws -> [String] {
        var script = ["load-module module-native-protocol-unix socket=\(socketPath) auth-anonymous=1"]
        script += sinks.map { "load-module module-null-sink \(Self.nullSinkArguments($0))" }
        if let defaultSink { script.append("set-default-sink \(defaultSink)") }
        let config = directory.appendingPathComponent("server.pa")
        try (script.joined(separator: "\n") + "\n").write(to: config, atomically: true, encoding: .utf8)
        // -n: no default.pa (no ALSA, no udev, no D-Bus modules); no pid file of its own, so a
        // killed server's file never stops the next start; as root it warns and runs
        return ["-c", "/usr/bin/pulseaudio \"$@\" & echo pulseaudio $! > \(pidFile.path); wait $!", "sh",
                "--daemonize=no", "--exit-idle-time=-1", "-n", "-F", config.path, "--use-pid-file=no",
                "--disallow-exit=no", "--log-target=stderr", "--log-level=info", "--system=no"]
    }

    /// The shell's arguments that start PipeWire as a desktop's user units do: a session bus
    /// (wireplumber 0.4.13 quits "disconnected from pipewire" after "Cannot autolaunch D-Bus"
    /// without one), the daemon, its session manager once the daemon's socket is there, and the
    /// Pulse server; the shell waits for all of them.
    private func pipeWireScript(pidFile: URL) -> [String] {
        let runtime = runtimeDirectory.path
        let script = """
            rm -f "\(runtime)/bus" "\(runtime)/pipewire-0" "\(runtime)/pipewire-0.lock" "\(runtime)/pipewire-0-manager" "\(runtime)/pipewire-0-manager.lock"
            export DBUS_SESSION_BUS_ADDRESS="unix:path=\(runtime)/bus"
            dbus-daemon --session --nofork --nopidfile --address="$DBUS_SESSION_BUS_ADDRESS" & echo dbus-daemon $! >> "\(pidFile.path)"
            pipewire & echo pipewire $! >> "\(pidFile.path)"
            i=0
            while { [ ! -S "\(runtime)/pipewire-0" ] || [ ! -S "\(runtime)/bus" ]; } && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
            wireplumber & echo wireplumber $! >> "\(pidFile.path)"
            pipewire-pulse & echo pipewire-pulse $! >> "\(pidFile.path)"
            wait
            """
        return ["-c", script]
    }

    /// SIGKILL, as a crashed server: its clients see their connection drop. (PipeWire's daemon,
    /// session manager and Pulse server all at once, as when its user units are killed.)
    public func kill() { end(signal: SIGKILL) }

    private func end(signal: Int32) {
        guard let (process, pids) = lock.withLock({ self.process.map { ($0, serverPIDs) } }), process.isRunning else { return }
        for name in ["pipewire-pulse", "wireplumber", "pipewire", "pulseaudio"] {
            if let pid = pids[name] { Glibc.kill(pid, signal) }
        }
        // the session bus goes with its desktop session: ended, whatever the signal
        if let pid = pids["dbus-daemon"] { Glibc.kill(pid, SIGTERM) }
        process.waitUntilExit()
    }

    /// Ends the server and removes its directory (the end of a test).
    public func stop() {
        end(signal: SIGTERM)
        try? FileManager.default.removeItem(at: directory)
    }

    public var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "(no log)" }

    // MARK: Sinks

    /// No rewinds: a stream that joins makes a null sink rewind and mix again what it rendered
    /// ahead, and its monitor then loses that stretch (a crossfade's two streams recorded seconds
    /// short of the wall time); without, a stream joins after what the sink buffered.
    private static func nullSinkArguments(_ name: String) -> String {
        "sink_name=\(name) rate=\(rate) channels=\(channels) format=s16le norewinds=1 sink_properties=device.description=\(name)"
    }

    /// Loads a null sink named `name` (a device plugged in): its description is its name.
    public func loadSink(_ name: String) throws {
        let index = try loadModule(name)
        lock.withLock {
            sinks.append(name)
            modules[name] = index
        }
    }

    /// Loads the null sink `name`'s module; its index.
    @discardableResult
    private func loadModule(_ name: String) throws -> Int {
        let output = try pactl(["load-module", "module-null-sink"] + Self.nullSinkArguments(name).split(separator: " ").map(String.init))
        guard let index = Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestError("pactl load-module printed no index: \(output)")
        }
        return index
    }

    /// Unloads the null sink `name` (a device unplugged).
    public func unloadSink(_ name: String) throws {
        guard let index = lock.withLock({ modules[name] }) else { throw TestError("no sink \(name) on this server") }
        try pactl(["unload-module", String(index)])
        lock.withLock {
            sinks.removeAll { $0 == name }
            modules[name] = nil
        }
    }

    /// Makes `name` the server's default sink (what a desktop's sound settings do).
    public func setDefaultSink(_ name: String) throws {
        try pactl(["set-default-sink", name])
        lock.withLock { defaultSink = name }
    }

    /// The sink each client's stream plays on now, by the stream's application name.
    public func streams() throws -> [(application: String, sink: String)] {
        let sinkNames = Dictionary(uniqueKeysWithValues: try pactl(["list", "short", "sinks"]).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t")
            return fields.count > 1 ? (String(fields[0]), String(fields[1])) : nil
        })
        var result: [(String, String)] = []
        var sink: String?
        for line in try pactl(["list", "sink-inputs"]).split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("Sink: ") { sink = sinkNames[String(text.dropFirst(6))] }
            if text.hasPrefix("application.name = "), let current = sink {
                result.append((String(text.dropFirst("application.name = ".count)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")), current))
            }
        }
        return result
    }

    /// The index of each client's stream (sink input), as `pactl set-sink-input-volume` takes it.
    public func streamIndexes() throws -> [Int] {
        try pactl(["list", "short", "sink-inputs"]).split(separator: "\n").compactMap { $0.split(separator: "\t").first.flatMap { Int($0) } }
    }

    private func moduleIndexes() throws -> [String: Int] {
        var result: [String: Int] = [:]
        for line in try pactl(["list", "short", "modules"]).split(separator: "\n") {
            let fields = line.split(separator: "\t")
            guard fields.count > 2, fields[1] == "module-null-sink", let index = Int(fields[0]),
                  let name = fields[2].split(separator: " ").first(where: { $0.hasPrefix("sink_name=") })
            else { continue }
            result[String(name.dropFirst("sink_name=".count))] = index
        }
        return result
    }

    /// `pactl ARGS` on this server; its output, or a throw with it.
    @discardableResult
    public func pactl(_ arguments: [String]) throws -> String {
        try Processes.run(["pactl"] + arguments, environment: environment, timeout: 10)
    }

    // MARK: Hearing

    /// Starts recording what `sink` plays (its monitor), until `stop()`.
    public func capture(_ sink: String) throws -> MonitorCapture {
        try MonitorCapture(source: "\(sink).monitor", environment: environment)
    }

    /// What `sink` plays for the next `seconds`.
    public func record(_ sink: String, seconds: Double) throws -> [Int16] {
        let capture = try capture(sink)
        Thread.sleep(forTimeInterval: seconds)  // a window of time to record, not a wait for an event
        return capture.stop()
    }
}

/// A recording of a monitor source (`parec`), or of any program that writes interleaved 16-bit
/// samples at `SoundServer.rate` to its standard output (a snapclient's file player), each block
/// stamped with the time it arrived, so a test can say when a change was heard.
public final class MonitorCapture: @unchecked Sendable {
    // @unchecked: `samples` and `arrivals` are guarded by `lock`; the reader thread appends.
    private let process = Process()
    private let lock = NSCondition()
    private var samples: [Int16] = []
    /// (when it arrived, how many samples there were with it), one per block read.
    private var arrivals: [(at: ContinuousClock.Instant, count: Int)] = []
    private var ended = false
    public let started = ContinuousClock.now
    private var frameLength: Int { SoundServer.channels }

    convenience init(source: String, environment: [String: String]) throws {
        // blocks of 10 ms: the arrival times say when a change was heard within that
        try self.init(program: "/usr/bin/parec", ["--device=\(source)", "--raw", "--format=s16le", "--rate=\(SoundServer.rate)",
                                                  "--channels=\(SoundServer.channels)", "--latency-msec=10"],
                      environment: environment)
    }

    /// Records what `program` writes to its standard output until `stop()`; what it says on
    /// standard error goes to `log` (nil: nowhere).
    public init(program: String, _ arguments: [String], environment: [String: String], log: FileHandle? = nil) throws {
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = log ?? FileHandle.nullDevice
        try process.run()
        let reading = pipe.fileHandleForReading
        let thread = Thread { [self] in
            var pending = Data()
            while true {
                let data = reading.availableData
                if data.isEmpty { break }
                pending.append(data)
                let usable = pending.count & ~1
                let block = pending.prefix(usable)
                pending.removeFirst(usable)
                let values = block.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }.map { Int16(littleEndian: $0) }
                lock.withLock {
                    samples.append(contentsOf: values)
                    arrivals.append((.now, samples.count))
                    lock.broadcast()
                }
            }
            lock.withLock {
                ended = true
                lock.broadcast()
            }
        }
        thread.start()
    }

    deinit { _ = stop() }

    /// Ends the recording and returns all of it.
    @discardableResult
    public func stop() -> [Int16] {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        return lock.withLock {
            let deadline = Date().addingTimeInterval(2)
            while !ended && lock.wait(until: deadline) {}
            return samples
        }
    }

    /// Everything recorded so far.
    public var recorded: [Int16] { lock.withLock { samples } }

    /// The samples that arrived after `instant` (those of the first block after it on).
    public func samples(after instant: ContinuousClock.Instant) -> [Int16] {
        lock.withLock {
            let start = arrivals.last(where: { $0.at <= instant })?.count ?? 0
            return Array(samples[start...])
        }
    }

    /// When the sample at `index` was heard: the arrival of its block, less the samples after it
    /// in that block.
    public func time(ofSample index: Int) -> ContinuousClock.Instant? {
        lock.withLock {
            guard let block = arrivals.first(where: { $0.count > index }) else { return nil }
            let framesAfter = (block.count - index) / frameLength
            return block.at - .microseconds(framesAfter * 1_000_000 / SoundServer.rate)
        }
    }

    /// Waits until a window of `window` seconds after `instant` satisfies `condition` (its level
    /// in dBFS), at most `timeout`; returns the index of the first sample of that window, or nil.
    /// The windows step by 10 ms.
    public func waitForLevel(after instant: ContinuousClock.Instant = .now, window: Double = 0.05,
                             timeout: TimeInterval = 10, _ condition: (Double) -> Bool) -> Int? {
        waitForWindow(after: instant, window: window, timeout: timeout) { condition(Levels.dBFS($0)) }
    }

    /// Waits until a window of `window` seconds after `instant` satisfies `condition` (given its
    /// samples), at most `timeout`; returns the index of the first sample of that window, or nil.
    /// The windows step by 10 ms.
    public func waitForWindow(after instant: ContinuousClock.Instant = .now, window: Double = 0.05,
                              timeout: TimeInterval = 10, _ condition: ([Int16]) -> Bool) -> Int? {
        let length = Int(window * Double(SoundServer.rate)) * frameLength
        let step = SoundServer.rate / 100 * frameLength
        let deadline = Date().addingTimeInterval(timeout)
        var start: Int? = nil
        return lock.withLock {
            while true {
                if start == nil { start = arrivals.last(where: { $0.at <= instant })?.count ?? 0 }
                while var first = start, first + length <= samples.count {
                    first -= first % frameLength
                    if condition(Array(samples[first..<first + length])) { return first }
                    start = first + step
                }
                if ended || !lock.wait(until: deadline) { return nil }
            }
        }
    }
}

/// Levels of interleaved 16-bit samples.
public enum Levels {
    public static func rms(_ samples: [Int16]) -> Double {
        guard !samples.isEmpty else { return 0 }
        return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }

    public static func peak(_ samples: [Int16]) -> Int {
        samples.reduce(0) { max($0, abs(Int($1))) }
    }

    /// RMS in dB relative to full scale; -120 for digital silence.
    public static func dBFS(_ samples: [Int16]) -> Double {
        let value = rms(samples)
        return value > 0 ? max(20 * log10(value / 32768), -120) : -120
    }

    /// The frequency of a pure tone in interleaved samples of `channels` at `rate`, from the
    /// zero crossings of its first channel (0 for silence).
    public static func frequency(_ samples: [Int16], channels: Int = SoundServer.channels, rate: Int = SoundServer.rate) -> Double {
        let first = stride(from: 0, to: samples.count, by: channels).map { samples[$0] }
        guard first.count > 1 else { return 0 }
        let crossings = zip(first, first.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        return Double(crossings) / 2 / (Double(first.count) / Double(rate))
    }

    /// How much louder `samples` are than `reference`, in dB of RMS.
    public static func decibels(_ samples: [Int16], relativeTo reference: [Int16]) -> Double {
        dBFS(samples) - dBFS(reference)
    }
}
