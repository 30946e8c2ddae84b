import Foundation
import TestSupport
import XCTest

/// A value as `busctl --json=short` prints it: the D-Bus signature and the JSON of the data.
struct Typed: CustomStringConvertible {
    let type: String
    let data: Any

    init(type: String, data: Any) {
        self.type = type
        self.data = data
    }

    /// From busctl's `{"type": …, "data": …}`.
    init(json: Any) throws {
        guard let object = json as? [String: Any], let type = object["type"] as? String, let data = object["data"]
        else { throw TestError("not a busctl typed value: \(json)") }
        self.init(type: type, data: data)
    }

    var string: String? { data as? String }
    var bool: Bool? { data as? Bool }
    var int64: Int64? { Typed.integer(data) }
    var double: Double? {
        if let value = data as? Double { return value }
        return Typed.integer(data).map(Double.init)
    }
    var strings: [String]? { data as? [String] }

    /// An `a{sv}` as its entries, each with its own type.
    var dictionary: [String: Typed]? {
        guard type.hasPrefix("a{s"), let object = data as? [String: Any] else { return nil }
        var result: [String: Typed] = [:]
        for (key, value) in object {
            if type == "a{sv}" {
                guard let typed = try? Typed(json: value) else { return nil }
                result[key] = typed
            } else {
                result[key] = Typed(type: String(type.dropFirst(3).dropLast()), data: value)
            }
        }
        return result
    }

    static func integer(_ value: Any) -> Int64? {
        if let value = value as? Int { return Int64(value) }
        if let value = value as? Int64 { return value }
        if let value = value as? UInt64 { return Int64(exactly: value) }
        if let value = value as? Double, value == value.rounded() { return Int64(value) }
        if let value = value as? NSNumber { return value.int64Value }
        return nil
    }

    var description: String { "\(type) \(data)" }
}

/// A D-Bus error reply as dbus-send prints it.
struct ErrorReply: CustomStringConvertible {
    let name: String
    let message: String
    var description: String { "\(name): \(message)" }
}

/// A private session bus with a signal watcher on it, `tonearmd` on that bus, and the real clients
/// (playerctl, busctl, dbus-send, gdbus) pointed at it. One per test; `tearDown` ends every process.
final class ServiceHarness: @unchecked Sendable {
    static let baseName = "org.mpris.MediaPlayer2.tonearm"
    static let path = "/org/mpris/MediaPlayer2"
    static let root = "org.mpris.MediaPlayer2"
    static let player = "org.mpris.MediaPlayer2.Player"
    static let trackList = "org.mpris.MediaPlayer2.TrackList"
    static let playlists = "org.mpris.MediaPlayer2.Playlists"
    static let extensionInterface = "io.github.tonearm.Player1"
    static let properties = "org.freedesktop.DBus.Properties"
    static let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"
    static let errorPrefix = "io.github.tonearm.Error."

    let bus: PrivateBus
    let watcher: SignalWatcher
    let directory: URL
    /// XDG_CACHE_HOME of the service: cover art goes under `tonearm/` in it.
    let cacheHome: URL
    /// XDG_STATE_HOME of the service: its saved state goes under `tonearm/` in it. One per
    /// harness, so that no test resumes another's queue; the daemons of one test share it.
    let stateHome: URL
    /// XDG_MUSIC_DIR of the service: playlist files go in its `Playlists/`.
    var musicDirectory: URL { directory.appendingPathComponent("music") }
    private(set) var daemons: [Daemon] = []
    private var followers: [FollowingProcess] = []

    /// The first tonearmd started that still runs (after a restart, the new one); the last one
    /// started when none runs.
    var daemon: Daemon {
        guard let last = daemons.last else { fatalError("no tonearmd started") }
        return daemons.first { $0.isRunning } ?? last
    }

    var busName: String { daemon.busName }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-svc-\(UUID().uuidString)")
        cacheHome = directory.appendingPathComponent("cache")
        stateHome = directory.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: cacheHome, withIntermediateDirectories: true)
        bus = try PrivateBus()
        // everything on the MPRIS object, and the bus's own name changes (names appearing and going)
        watcher = try SignalWatcher(address: bus.address, rules: [
            "type='signal',path='\(Self.path)'",
            "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged'",
        ])
        watcher.abortReason = { [weak self] in
            guard let self else { return nil }
            for daemon in self.daemons where !daemon.isRunning && !self.exitExpected.contains(daemon.pid) {
                return "tonearmd (pid \(daemon.pid)) exited with status \(daemon.process.terminationStatus); its log:\n\(daemon.output)"
            }
            return nil
        }
    }

    /// Pids whose exit a test caused on purpose (Quit, SIGTERM).
    var exitExpected: Set<Int32> = []

    /// The built `tonearmd`: next to the test bundle (same bin directory), or `$TONEARMD`.
    static func executable() throws -> URL { try BuiltProduct.executable("tonearmd", override: "TONEARMD") }

    /// Starts tonearmd with `arguments` (files or URIs, options) on the private bus with a silent
    /// real-time sink (`sink` nil: the default path, for a `SoundServer` in `environment`) (through `launcher` when given: see `Daemon.launch`), and waits for it to
    /// own its name. `environment`: variables set for it besides the harness's.
    @discardableResult
    func start(_ arguments: [String] = [], sink: String? = "fakesink sync=true", timeout: TimeInterval = 20,
               launcher: [String] = [], environment: [String: String] = [:]) throws -> Daemon {
        let mark = watcher.count
        let log = directory.appendingPathComponent("tonearmd-\(daemons.count).log")
        let watcher = self.watcher
        let daemon = try Daemon.launch(on: bus, arguments: arguments, sink: sink, cacheHome: cacheHome, stateHome: stateHome,
                                       musicDirectory: musicDirectory, launcher: launcher,
                                       extraEnvironment: environment, log: log,
                                       onExit: { watcher.poke() })
        daemons.append(daemon)
        let pid = daemon.pid
        let acquired = try watcher.wait(for: "tonearmd (pid \(pid)) to own \(Self.baseName) or \(Self.baseName).instance\(pid)",
                                        from: mark, timeout: timeout) { message in
            guard message.member == "NameOwnerChanged", message.arguments.count == 3,
                  let name = message.arguments[0].string, let owner = message.arguments[2].string, !owner.isEmpty
            else { return false }
            return name == Self.baseName || name == "\(Self.baseName).instance\(pid)"
        }
        daemon.busName = acquired.arguments[0].string ?? ""
        daemon.uniqueName = acquired.arguments[2].string ?? ""
        return daemon
    }

    /// Ends every process this harness started: followers, daemons, the watcher, the bus.
    func tearDown() {
        followers.forEach { $0.stop() }
        for daemon in daemons {
            exitExpected.insert(daemon.pid)
            daemon.stop()
        }
        watcher.stop()
        bus.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The logs of every daemon, for failure messages.
    var logs: String {
        daemons.map { "--- tonearmd pid \($0.pid) (\($0.busName)):\n\($0.output)" }.joined(separator: "\n")
    }

    // MARK: - Clients

    var clientEnvironment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": bus.address] }

    /// `playerctl -p <player> ARGS`: its trimmed stdout; throws when it fails.
    @discardableResult
    func playerctl(_ arguments: String..., player: String? = nil) throws -> String {
        let output = try playerctlOutput(arguments, player: player)
        guard output.status == 0 else {
            throw TestError("playerctl \(arguments.joined(separator: " ")) failed (\(output.status)): \(output.stderr)\(output.stdout)")
        }
        return output.stdout.trimmingCharacters(in: .newlines)
    }

    func playerctlOutput(_ arguments: [String], player: String? = nil) throws -> Tool.Output {
        try Tool.run("playerctl", ["-p", player ?? daemon.playerName] + arguments, environment: clientEnvironment, timeout: 15)
    }

    /// `playerctl -p <player> --follow ARGS`, stopped in tearDown.
    func follow(_ arguments: String...) throws -> FollowingProcess {
        let process = try FollowingProcess("playerctl", ["-p", daemon.playerName, "--follow"] + arguments,
                                           environment: clientEnvironment)
        followers.append(process)
        return process
    }

    /// How much more memory a sanitized build holds (its allocator keeps freed blocks in
    /// quarantine and shadows every byte): bounds meant for the build users run are scaled by it.
    static let memoryOverhead: Int = (ProcessInfo.processInfo.environment["SWIFT_SANITIZE"] ?? "").isEmpty ? 1 : 3

    /// How many times slower the service runs in a sanitized build (`make test-asan|test-tsan`):
    /// the waits for calls that do real work scale by it. An Enqueue of 10,000 files takes 0.1 s in
    /// release and 60 to 90 s under ASan, whose slow unwinder runs on every malloc (scripts/test.sh
    /// says why it is the slow one), more when the machine is busy. 1 otherwise.
    static let slowdown: Double = switch ProcessInfo.processInfo.environment["SWIFT_SANITIZE"] ?? "" {
    case "": 1
    case "address": 15
    default: 6
    }

    /// `busctl --address=A ARGS`: stdout; throws with stderr when it fails.
    @discardableResult
    func busctl(_ arguments: [String]) throws -> String {
        let output = try Tool.run("busctl", ["--address=\(bus.address)", "--timeout=\(Int(25 * Self.slowdown))"] + arguments,
                                  timeout: 15 * Self.slowdown)
        guard output.status == 0 else {
            throw TestError("busctl \(arguments.joined(separator: " ")) failed (\(output.status)): \(output.stderr)")
        }
        return output.stdout
    }

    /// A property, with its exact type.
    func get(_ interface: String, _ property: String, destination: String? = nil) throws -> Typed {
        let out = try busctl(["--json=short", "get-property", destination ?? busName, Self.path, interface, property])
        return try Typed(json: try Tool.json(out))
    }

    /// `Properties.GetAll(interface)`, each property with its exact type.
    func getAll(_ interface: String) throws -> [String: Typed] {
        let reply = try call(Self.properties, "GetAll", "s", [interface])
        guard let all = reply.first?.dictionary else { throw TestError("GetAll(\(interface)) replied \(reply)") }
        return all
    }

    /// Calls a method with busctl; returns its out arguments, each with its type.
    @discardableResult
    func call(_ interface: String, _ method: String, _ signature: String = "", _ arguments: [String] = [],
              destination: String? = nil) throws -> [Typed] {
        // "--": a negative number among the arguments is not an option
        var command = ["--json=short", "call", "--", destination ?? busName, Self.path, interface, method]
        if !signature.isEmpty { command += [signature] + arguments }
        let out = try busctl(command).trimmingCharacters(in: .whitespacesAndNewlines)
        if out.isEmpty { return [] }
        let reply = try Typed(json: try Tool.json(out))
        guard let values = reply.data as? [Any] else { return [] }
        let types = Self.splitSignature(reply.type)
        guard types.count == values.count else { throw TestError("reply \(out): cannot split signature") }
        return zip(types, values).map { Typed(type: $0, data: $1) }
    }

    /// Sets a property with busctl.
    func set(_ interface: String, _ property: String, _ signature: String, _ value: String) throws {
        try busctl(["set-property", "--", busName, Self.path, interface, property, signature, value])
    }

    /// Sends a method call with `dbus-send --print-reply` and returns the error it got, or nil
    /// when it succeeded. `arguments` are dbus-send's (`string:x`, `int64:5`, `variant:double:1`).
    func errorReply(_ interface: String, _ method: String, _ arguments: [String] = []) throws -> ErrorReply? {
        let output = try Tool.run("dbus-send", ["--bus=\(bus.address)", "--print-reply", "--reply-timeout=10000",
                                               "--dest=\(busName)", Self.path, "\(interface).\(method)"] + arguments,
                                  timeout: 15)
        if output.status == 0 { return nil }
        // "Error org.freedesktop.DBus.Error.InvalidArgs: message"
        let text = output.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("Error ") else { return ErrorReply(name: "(dbus-send: \(text))", message: "") }
        let rest = text.dropFirst("Error ".count)
        let colon = rest.firstIndex(of: ":") ?? rest.endIndex
        let message = rest[colon...].dropFirst().trimmingCharacters(in: .whitespaces)
        return ErrorReply(name: String(rest[..<colon]), message: message)
    }

    /// `org.freedesktop.DBus.Peer.Ping`: the service still answers.
    func ping() throws {
        try busctl(["call", busName, Self.path, "org.freedesktop.DBus.Peer", "Ping"])
    }

    // MARK: - Reading the player

    var playbackStatus: String {
        get throws { try get(Self.player, "PlaybackStatus").string ?? "?" }
    }

    /// Position in microseconds.
    var position: Int64 {
        get throws { try get(Self.player, "Position").int64 ?? -1 }
    }

    var metadata: [String: Typed] {
        get throws { try get(Self.player, "Metadata").dictionary ?? [:] }
    }

    var trackID: String? {
        get throws { try metadata["mpris:trackid"]?.string }
    }

    var tracks: [String] {
        get throws { try get(Self.trackList, "Tracks").strings ?? [] }
    }

    // MARK: - Waiting

    /// A mark in the watcher's messages: wait or look "from" here.
    func mark() -> Int { watcher.count }

    /// The PropertiesChanged signals of our service for `interface` from `mark`.
    func propertiesChanged(_ interface: String, from mark: Int, daemon: Daemon? = nil) -> [BusMessage] {
        let sender = (daemon ?? self.daemon).uniqueName
        return watcher.messages(from: mark).filter { $0.sender == sender && $0.changedInterface == interface }
    }

    /// Waits for a PropertiesChanged of `interface` from our service whose changed properties satisfy `predicate`.
    @discardableResult
    func waitForChange(_ interface: String, _ what: String, from mark: Int, timeout: TimeInterval = 10,
                       daemon: Daemon? = nil, where predicate: ([String: MonitorValue]) -> Bool) throws -> BusMessage {
        let sender = (daemon ?? self.daemon).uniqueName
        return try watcher.wait(for: what, from: mark, timeout: timeout) {
            $0.sender == sender && $0.changedInterface == interface && predicate($0.changed)
        }
    }

    /// Waits for a signal `interface.member` from our service that satisfies `predicate`.
    @discardableResult
    func waitForSignal(_ interface: String, _ member: String, from mark: Int, timeout: TimeInterval = 10,
                       daemon: Daemon? = nil, where predicate: (BusMessage) -> Bool = { _ in true }) throws -> BusMessage {
        let sender = (daemon ?? self.daemon).uniqueName
        return try watcher.wait(for: "\(interface).\(member)", from: mark, timeout: timeout) {
            $0.sender == sender && $0.interface == interface && $0.member == member && predicate($0)
        }
    }

    /// Waits until PlaybackStatus is `status`: reads it after taking a mark, and if it is not
    /// that yet, waits for its PropertiesChanged (subscribe, then act).
    func waitForStatus(_ status: String, timeout: TimeInterval = 10) throws {
        let mark = self.mark()
        if try playbackStatus == status { return }
        try waitForChange(Self.player, "PlaybackStatus \(status)", from: mark, timeout: timeout) {
            $0["PlaybackStatus"]?.string == status
        }
    }

    /// Waits until the current track is `trackID` (read, then PropertiesChanged of Metadata).
    func waitForTrack(_ trackID: String, timeout: TimeInterval = 10) throws {
        let mark = self.mark()
        if try self.trackID == trackID { return }
        try waitForChange(Self.player, "Metadata with mpris:trackid \(trackID)", from: mark, timeout: timeout) {
            $0["Metadata"]?.dictionary?["mpris:trackid"]?.string == trackID
        }
    }

    /// Waits until ItemStatus of the extension is `status`.
    func waitForItemStatus(_ status: String, timeout: TimeInterval = 10) throws {
        let mark = self.mark()
        if try get(Self.extensionInterface, "ItemStatus").string == status { return }
        try waitForChange(Self.extensionInterface, "ItemStatus \(status)", from: mark, timeout: timeout) {
            $0["ItemStatus"]?.string == status
        }
    }

    /// Starts tonearmd on `files` and waits until it plays the first one with its item ready
    /// (prerolled: duration and seekability known).
    @discardableResult
    func startPlaying(_ files: [URL], arguments: [String] = []) throws -> Daemon {
        let daemon = try start(arguments + files.map(\.path))
        try waitForStatus("Playing")
        try waitForItemStatus("readyToPlay")
        return daemon
    }

    /// Waits for `Seeked` after `mark`; returns its position in microseconds.
    func waitForSeeked(from mark: Int, timeout: TimeInterval = 10) throws -> Int64 {
        let message = try waitForSignal(Self.player, "Seeked", from: mark, timeout: timeout)
        guard let position = message.arguments.first?.int64 else { throw TestError("Seeked without an int64: \(message)") }
        return position
    }

    // MARK: - Helpers

    /// Splits a signature into its complete types ("sa{sv}as" → ["s", "a{sv}", "as"]).
    static func splitSignature(_ signature: String) -> [String] {
        var types: [String] = []
        var current = ""
        var depth = 0
        for character in signature {
            current.append(character)
            switch character {
            case "(", "{": depth += 1
            case ")", "}": depth -= 1
            case "a": continue
            default: break
            }
            if depth == 0 && character != "a" {
                types.append(current)
                current = ""
            }
        }
        return types
    }

    /// A file's URI, as the service reports it in xesam:url.
    static func uri(_ file: URL) -> String { file.absoluteURL.standardizedFileURL.absoluteString }
}

/// Media made once per test class (encoding takes time), shared by its tests.
final class SharedMedia: @unchecked Sendable {
    let generator: MediaGenerator
    private var made: [String: URL] = [:]
    private let lock = NSLock()

    init() throws { generator = try MediaGenerator() }

    /// A tone made once under `name`.
    func tone(_ name: String, format: MediaGenerator.Format = .wav, seconds: Double, frequency: Double = 440,
              tags: MediaGenerator.Tags = MediaGenerator.Tags(), cover: Bool = false) throws -> URL {
        lock.lock()
        defer { lock.unlock() }
        if let url = made[name] { return url }
        let url = try generator.tone(name, format: format, seconds: seconds, frequency: frequency, tags: tags, cover: cover)
        made[name] = url
        return url
    }
}

/// The base of every service test class: a fresh harness per test, torn down after it; media per class.
class ServiceTestCase: XCTestCase {
    private(set) var harness: ServiceHarness!
    nonisolated(unsafe) private static var mediaByClass: [String: SharedMedia] = [:]

    /// Media shared by the tests of this class.
    var media: SharedMedia {
        get throws {
            let key = String(describing: type(of: self))
            if let media = Self.mediaByClass[key] { return media }
            let media = try SharedMedia()
            Self.mediaByClass[key] = media
            return media
        }
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        harness = try ServiceHarness()
    }

    override func tearDown() {
        if let harness {
            // when a test failed, the service's own account of it helps
            if let run = testRun, run.failureCount + run.unexpectedExceptionCount > 0 {
                print(harness.logs.split(separator: "\n").suffix(80).joined(separator: "\n"))
                print("--- signals on the bus:\n" + harness.watcher.messages().suffix(60).map { "  \($0)" }.joined(separator: "\n"))
            }
            harness.tearDown()
        }
        harness = nil
        super.tearDown()
    }

    // MARK: - Common media

    /// A 3 s untagged WAV.
    func short(_ name: String = "short", seconds: Double = 3, frequency: Double = 440) throws -> URL {
        try media.tone(name, format: .wav, seconds: seconds, frequency: frequency)
    }

    /// A tagged tone (OGG Vorbis: tags through taginject).
    func tagged(_ name: String, title: String, artist: String = "Tester", album: String = "Album",
                seconds: Double = 3, format: MediaGenerator.Format = .ogg) throws -> URL {
        try media.tone(name, format: format, seconds: seconds,
                       tags: MediaGenerator.Tags(title: title, artist: artist, album: album, trackNumber: 1))
    }

    /// Asserts the service still answers and reports the same state as `before`.
    func assertUnchanged(_ before: PlayerSnapshot, _ context: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try harness.ping()
        let after = try PlayerSnapshot(harness)
        XCTAssertEqual(after, before, "state changed after \(context)", file: file, line: line)
    }
}

/// What a user would notice changing: the transport's state, the current track, the queue, the settings.
struct PlayerSnapshot: Equatable, CustomStringConvertible {
    var status: String
    var trackID: String?
    var tracks: [String]
    var volume: Double?
    var loop: String?
    var shuffle: Bool?
    var rate: Double?

    init(_ harness: ServiceHarness) throws {
        let player = try harness.getAll(ServiceHarness.player)
        status = player["PlaybackStatus"]?.string ?? "?"
        trackID = player["Metadata"]?.dictionary?["mpris:trackid"]?.string
        volume = player["Volume"]?.double
        loop = player["LoopStatus"]?.string
        shuffle = player["Shuffle"]?.bool
        rate = player["Rate"]?.double
        tracks = try harness.tracks
    }

    var description: String {
        "status \(status), track \(trackID ?? "none"), tracks \(tracks), volume \(volume ?? -1), loop \(loop ?? "?"), shuffle \(shuffle.map(String.init) ?? "?"), rate \(rate ?? -1)"
    }
}
