import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real snapserver (Debian 12's `snapserver` 0.26) of the test's own, on 127.0.0.1 with ports the
/// system picked, a TCP source named Tonearm that a player connects to (`tcpURL`), and no control
/// or HTTP ports; and snapclients that play its stream with the file player to their standard
/// output, recorded as a `MonitorCapture`: what a room's speakers would play, in real time. No
/// system service and no user configuration is touched (HOME is the server's own directory).
public final class SnapServer: @unchecked Sendable {
    // @unchecked: `process` is replaced only by the test's thread (start, kill).
    public let directory: URL
    /// The TCP source's port, where the player sends its PCM.
    public let sourcePort: Int
    /// The port snapclients connect to.
    public let streamPort: Int
    public let log: URL
    private var process: Process?

    /// What `tonearmd --snapcast` takes.
    public var tcpURL: String { "tcp://127.0.0.1:\(sourcePort)" }
    /// snapserver's default sample format, which its clients write.
    public static let rate = 48000

    /// Starts a server and waits until its ports listen.
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-snapcast-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        log = directory.appendingPathComponent("snapserver.log")
        sourcePort = try Self.freePort()
        streamPort = try Self.freePort()
        try start()
    }

    deinit { stop() }

    /// Starts the server (again, after `kill`, on the same ports) and waits until it listens.
    public func start(timeout: TimeInterval = 10) throws {
        let config = directory.appendingPathComponent("snapserver.conf")
        // the source line a user writes (docs/sound.md, "Snapcast"); the rest keeps it to 127.0.0.1 and to
        // the ports of this test
        try """
            [stream]
            source = tcp://127.0.0.1:\(sourcePort)?name=Tonearm&mode=server
            bind_to_address = 127.0.0.1
            port = \(streamPort)
            [tcp]
            enabled = false
            [http]
            enabled = false
            [server]
            datadir = \(directory.path)
            [logging]
            sink = stderr
            """.write(to: config, atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        handle.seekToEndOfFile()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/snapserver")
        process.arguments = ["-c", config.path]
        process.environment = ProcessInfo.processInfo.environment.merging(["HOME": directory.path]) { $1 }
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(timeout)
        // a bounded wait: snapserver has no signal for "ready" but its log
        while !logText.contains("Creating stream acceptor") || !Self.listens(on: streamPort) {
            guard process.isRunning, Date() < deadline else {
                throw TestError("snapserver did not start within \(timeout) s; its log:\n\(logText)")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    public var isRunning: Bool { process?.isRunning ?? false }

    /// SIGKILL, as a crashed server or a machine gone: the player's connection drops.
    public func kill() {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Ends the server and removes its directory (the end of a test).
    public func stop() {
        if let process, process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    public var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "(no log)" }

    /// A snapclient of this server with the file player writing to its standard output (raw
    /// S16LE at 48 kHz, two channels: the stream's format; 50 ms every 50 ms, silence when the
    /// stream has none), recorded until `stop()`. Its log goes to `name`.log in the server's
    /// directory.
    public func client(_ name: String = "room") throws -> MonitorCapture {
        let logURL = directory.appendingPathComponent("\(name).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        return try MonitorCapture(program: "/usr/bin/snapclient",
                                  ["--host", "127.0.0.1", "--port", String(streamPort), "--hostID", name,
                                   "--player", "file:filename=stdout", "--logsink", "stderr"],
                                  environment: ["HOME": directory.path], log: try FileHandle(forWritingTo: logURL))
    }

    /// A port on 127.0.0.1 that nothing listens on now (the system's pick for port 0).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestError("socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw TestError("bind to 127.0.0.1:0: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts connections on 127.0.0.1:`port`.
    static func listens(on port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
