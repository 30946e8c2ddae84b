import Foundation

/// A private `dbus-daemon` in a temporary directory, for one test class. Fails (throws) when
/// `dbus-daemon` is missing: tests never skip. Any user may connect (a session bus takes only its
/// own user's otherwise): VideoWaylandTests run tonearmd as the user of their Wayland session.
public final class PrivateBus: @unchecked Sendable {
    public let address: String
    public let directory: URL
    private let process: Process

    /// `serviceDirectory` holds D-Bus activation files the daemon may start services from.
    public init(serviceDirectory: URL? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-dbus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("session.conf")
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:dir=\(directory.path)</listen>
              <auth>EXTERNAL</auth>\(serviceDirectory.map { "\n  <servicedir>\($0.path)</servicedir>" } ?? "")
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
                <allow user="*"/>
              </policy>
            </busconfig>
            """.write(to: config, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: try Tool.path("dbus-daemon"))
        process.arguments = ["--config-file=\(config.path)", "--nofork", "--print-address=1"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // The daemon prints its address once it listens: wait for that line (no sleep).
        var data = Data()
        while !data.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw TestError("dbus-daemon exited before printing its address") }
            data.append(chunk)
        }
        address = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops the daemon and waits for it to exit.
    public func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}

public struct TestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Runs command-line clients (busctl, dbus-send, gdbus) and returns their whole output.
public enum Tool {
    public struct Output: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    /// The absolute path of `name` on PATH; throws when it is not installed.
    public static func path(_ name: String) throws -> String {
        // a path (a built product) is taken as it is
        if name.contains("/") {
            guard FileManager.default.isExecutableFile(atPath: name) else { throw TestError("\(name) is not an executable") }
            return name
        }
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for directory in directories + ["/usr/bin", "/bin", "/usr/sbin"] {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw TestError("\(name) is not installed: this test needs it")
    }

    /// Runs `name` to its end. `environment` is added to this process's own; after `timeout` the
    /// tool is killed (a hung client fails the test instead of hanging the run) and the output says so.
    public static func run(_ name: String, _ arguments: [String], environment: [String: String]? = nil,
                           timeout: TimeInterval? = nil) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try path(name))
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        final class Flag: @unchecked Sendable { var value = false }  // set before the kill, read after exit
        let timedOut = Flag()
        if let timeout {
            let pid = process.processIdentifier
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak process] in
                guard let process, process.isRunning, process.processIdentifier == pid else { return }
                timedOut.value = true
                kill(pid, SIGKILL)
            }
        }
        // Read stderr on another thread so that neither pipe can fill up and block the tool.
        final class Box: @unchecked Sendable { var data = Data() }  // written before the semaphore is signalled
        let errBox = Box()
        let errDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            errBox.data = err.fileHandleForReading.readDataToEndOfFile()
            errDone.signal()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        errDone.wait()
        let errData = errBox.data
        process.waitUntilExit()
        let stderr = String(decoding: errData, as: UTF8.self)
        return Output(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: timedOut.value ? "\(name) killed after \(timeout ?? 0) s\n" + stderr : stderr)
    }

    /// Runs `busctl --address=<bus> <arguments>` and returns stdout; throws with stderr on failure.
    public static func busctl(_ bus: PrivateBus, _ arguments: [String]) throws -> String {
        let output = try run("busctl", ["--address=\(bus.address)"] + arguments)
        guard output.status == 0 else { throw TestError("busctl \(arguments.joined(separator: " ")) failed (\(output.status)): \(output.stderr)") }
        return output.stdout
    }

    /// Runs `dbus-send --bus=<bus> --print-reply <arguments>` and returns the whole output.
    public static func dbusSend(_ bus: PrivateBus, _ arguments: [String]) throws -> Output {
        try run("dbus-send", ["--bus=\(bus.address)", "--print-reply"] + arguments)
    }

    /// Parses busctl's `--json=short` output.
    public static func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }
}

/// `dbus-monitor` on the private bus, read line by line: an observer that is not our code.
public final class Monitor {
    private let process = Process()
    private let output = Pipe()
    private var buffer = Data()

    /// Starts `dbus-monitor --address <bus> <rules>` and returns once it is monitoring (it has printed
    /// the `NameLost` of its own name, which the bus sends when it becomes a monitor).
    public init(bus: PrivateBus, rules: [String]) throws {
        process.executableURL = URL(fileURLWithPath: try Tool.path("dbus-monitor"))
        process.arguments = ["--address", bus.address] + rules
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        _ = try lines(through: { $0.contains("member=NameLost") })
    }

    /// Reads lines until one satisfies `predicate`; returns all of them, that one included.
    /// dbus-monitor flushes after every message, so this waits for an event, not a time.
    public func lines(through predicate: (String) -> Bool) throws -> [String] {
        var lines: [String] = []
        while true {
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                lines.append(line)
                if predicate(line) { return lines }
            }
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw TestError("dbus-monitor exited; it printed:\n\(lines.joined(separator: "\n"))") }
            buffer.append(chunk)
        }
    }

    public func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}
