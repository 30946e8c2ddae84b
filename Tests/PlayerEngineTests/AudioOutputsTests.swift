import Dispatch
import EngineLink
import Foundation
import GStreamer
import Glibc
import Logging
@testable import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

/// `AudioOutputs`, the one owner of the outputs and routing, on a sound server of the test's own
/// (PipeWire, or PulseAudio in `AudioOutputsPulseAudioTests`) with null sinks for devices: which
/// device the default path's pulsesink is given, what `default` resolves to, the device list the
/// player is told, and a chosen device unplugged and plugged again. The sinks are the ones
/// `makeSink` builds, read in NULL: the device a pulsesink is given is the one its stream opens on
/// (and moves to while it plays: `DefaultOutputTests` hears that end to end).
class AudioOutputsTests: XCTestCase {
    /// What `AudioOutputs` tells and the sink it routes; confined to `queue`.
    final class Seen: @unchecked Sendable {
        var told: [[OutputDevice]] = []
        var sink: Element?
    }

    var kind: SoundServer.Kind { .fromEnvironment }
    let queue = DispatchQueue(label: "test.outputs")
    let seen = Seen()
    var server: SoundServer!
    var outputs: AudioOutputs?
    /// The process's own values of the variables the server's environment sets, put back after.
    private var saved: [String: String?] = [:]

    override func setUpWithError() throws {
        try super.setUpWithError()
        GStreamerEngine.prepareRegistry()
        server = try SoundServer(kind, sinks: ["speakers", "headphones"])
        // libpulse reads these when a context connects: pulsesink's, the device monitor's, DefaultSinkWatch's
        for (name, value) in server.environment {
            saved[name] = ProcessInfo.processInfo.environment[name]
            setenv(name, value, 1)
        }
    }

    override func tearDown() {
        queue.sync {
            outputs?.stopWatching()
            outputs = nil
            seen.sink = nil
        }
        queue.sync {}  // the monitor's cancel handler has run
        if let server, let run = testRun, run.failureCount > 0 { print("--- \(server.kind.rawValue):\n\(server.logText.suffix(3000))") }
        server?.stop()
        server = nil
        for (name, value) in saved {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        super.tearDown()
    }

    /// Makes the outputs for `configuration` and sets them up, as the engine's set-up does; what
    /// they showed as the sink.
    @discardableResult
    func start(_ configuration: EngineConfiguration = EngineConfiguration()) throws -> String {
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let seen = seen
        return try queue.sync {
            let made = AudioOutputs(configuration: configuration, queue: queue, logger: logger,
                                    tell: { seen.told.append($0) }, sinks: { [seen.sink] })
            outputs = made
            return try made.setUp().shown
        }
    }

    /// A new pipeline's pulsesink, made and routed as the engine does, kept as the one playing.
    func newSink() throws -> Element {
        try queue.sync {
            let bin = try XCTUnwrap(outputs).makeSink()
            let sink = try XCTUnwrap(bin.child(named: AudioOutputs.pulseSinkName), "the default path's sink is a named pulsesink")
            outputs?.route(new: sink)
            seen.sink = sink
            return sink
        }
    }

    func device(of sink: Element) -> String? { queue.sync { sink.string("device") } }
    var told: [[OutputDevice]] { queue.sync { seen.told } }
    var lastIDs: [String]? { told.last.map { $0.map(\.id).sorted() } }

    /// Waits (at most 10 s) until `condition`, read on the outputs' queue, holds.
    func wait(_ what: String, _ condition: @escaping () -> Bool) {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if queue.sync(execute: condition) { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
        XCTAssertTrue(queue.sync(execute: condition), what)
    }

    func testTheDevicesAreToldAndDefaultIsTheServersDefaultAndFollowsIt() throws {
        XCTAssertEqual(try start(), "autoaudiosink (pulsesink)")
        wait("both devices told") { self.seen.told.last.map { Set($0.map(\.id)) } == ["speakers", "headphones"] }
        let sink = try newSink()
        XCTAssertEqual(device(of: sink), "speakers", "default: the server's default device, by name")

        try server.setDefaultSink("headphones")
        wait("the sink follows the server's new default") { sink.string("device") == "headphones" }
        try server.setDefaultSink("speakers")
        wait("and back") { sink.string("device") == "speakers" }
        XCTAssertEqual(queue.sync { outputs?.chosen }, Outputs.defaultID)
    }

    func testAChosenDeviceUnpluggedGoesToTheDefaultAndComesBackWhenPluggedAgain() throws {
        try start()
        let sink = try newSink()
        XCTAssertFalse(queue.sync { outputs!.choose("headphones") }, "the same sink: nothing to rebuild")
        XCTAssertEqual(device(of: sink), "headphones", "chosen by name")

        try server.unloadSink("headphones")
        wait("unplugged: the server's default") { sink.string("device") == "speakers" }
        wait("the list without it") { self.seen.told.last.map { $0.map(\.id) } == ["speakers"] }

        try server.loadSink("headphones")
        wait("plugged again: back on the chosen device") { sink.string("device") == "headphones" }
        wait("the list with it") { self.seen.told.last.map { Set($0.map(\.id)) } == ["speakers", "headphones"] }

        XCTAssertFalse(queue.sync { outputs!.choose(Outputs.defaultID) })
        XCTAssertEqual(device(of: sink), "speakers", "default again: the server's default at once")
        // a sink made now, by a later load, opens on the chosen device too
        _ = queue.sync { outputs!.choose("headphones") }
        XCTAssertEqual(device(of: try newSink()), "headphones")
    }

    /// The sound server went away under a playing sink (an output error): the devices go, and the
    /// next pulsesink starts watching them again.
    func testAFailedOutputTellsNoDevicesAndTheNextSinkWatchesThemAgain() throws {
        try start()
        wait("devices told") { self.seen.told.last?.isEmpty == false }
        queue.sync { outputs!.failed() }
        XCTAssertEqual(told.last, [], "no devices while the server is gone")
        try server.setDefaultSink("headphones")
        let sink = try newSink()
        wait("watched again: the devices told") { self.seen.told.last?.count == 2 }
        wait("and the sink on the server's default now") { sink.string("device") == "headphones" }
    }

    /// A configured snapserver is one more output, listed after the server's devices; choosing it
    /// or leaving it changes the sink new pipelines get (the engine drops those built for the other).
    func testTheSnapserverIsListedAndChoosingItChangesTheSink() throws {
        var configuration = EngineConfiguration()
        configuration.snapcast = SnapcastOutput(host: "127.0.0.1")
        try start(configuration)
        wait("the server's devices and the snapserver") { self.seen.told.last.map { Set($0.map(\.id)) } == ["speakers", "headphones", SnapcastOutput.id] }
        XCTAssertEqual(told.last?.last?.id, SnapcastOutput.id, "the snapserver last")

        XCTAssertTrue(queue.sync { outputs!.choose(SnapcastOutput.id) }, "to the snapserver: another sink")
        XCTAssertTrue(queue.sync { outputs!.streamsToSnapcast })
        let snapcast = try queue.sync { try outputs!.makeSink() }
        XCTAssertNotNil(snapcast.child(named: SnapcastOutput.sinkName))
        XCTAssertNil(snapcast.child(named: AudioOutputs.pulseSinkName))

        XCTAssertFalse(queue.sync { outputs!.choose(SnapcastOutput.id) }, "chosen again: nothing changes")
        XCTAssertTrue(queue.sync { outputs!.choose("headphones") }, "back to the sound server")
        XCTAssertEqual(device(of: try newSink()), "headphones")
    }
}

/// `AudioOutputsTests` on PulseAudio, whose stream-restore module remembers a stream's device.
final class AudioOutputsPulseAudioTests: AudioOutputsTests {
    override var kind: SoundServer.Kind { .pulseaudio }

    // declared again: a subclass declaring none is not found by XCTest's discovery on Linux
    override func testTheDevicesAreToldAndDefaultIsTheServersDefaultAndFollowsIt() throws {
        try super.testTheDevicesAreToldAndDefaultIsTheServersDefaultAndFollowsIt()
    }
    override func testAChosenDeviceUnpluggedGoesToTheDefaultAndComesBackWhenPluggedAgain() throws {
        try super.testAChosenDeviceUnpluggedGoesToTheDefaultAndComesBackWhenPluggedAgain()
    }
    override func testAFailedOutputTellsNoDevicesAndTheNextSinkWatchesThemAgain() throws {
        try super.testAFailedOutputTellsNoDevicesAndTheNextSinkWatchesThemAgain()
    }
    override func testTheSnapserverIsListedAndChoosingItChangesTheSink() throws {
        try super.testTheSnapserverIsListedAndChoosingItChangesTheSink()
    }
}
