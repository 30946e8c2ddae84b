import Foundation
import TestSupport
import XCTest

/// A sound server of the test's own (PipeWire with its Pulse server, or the one
/// `TONEARM_TEST_SOUND_SERVER` names; `kind` overrides it), tonearmd playing into it through the
/// default path, and what its null sinks' monitors hear. No tests of its own: the suites on real
/// servers (`SoundServerTests`, `DefaultOutputTests`) share it without running each other's tests.
class SoundServerTestCase: ServiceTestCase {
    typealias H = ServiceHarness
    /// The tones are made at half scale: a sine's RMS is then -9 dBFS.
    static let toneLevel = 20 * log10(0.5 / 2.0.squareRoot())
    private(set) var server: SoundServer!
    /// The server these tests start.
    var kind: SoundServer.Kind { .fromEnvironment }

    override func tearDown() {
        if let server, let run = testRun, run.failureCount + run.unexpectedExceptionCount > 0 {
            print("--- \(server.kind.rawValue):\n" + server.logText.split(separator: "\n").suffix(30).joined(separator: "\n"))
        }
        server?.stop()
        server = nil
        super.tearDown()
    }

    /// A server with `sinks` (the first the default), and tonearmd playing `files` into it.
    @discardableResult
    func startPlaying(_ files: [URL], sinks: [String] = ["speakers"], arguments: [String] = []) throws -> Daemon {
        try startServer(sinks: sinks)
        let daemon = try harness.start(files.map(\.path) + arguments, sink: nil, environment: server.environment)
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        return daemon
    }

    /// The server of the test, with `sinks` (the first the default).
    func startServer(sinks: [String] = ["speakers"]) throws { server = try SoundServer(kind, sinks: sinks) }

    /// Waits until `capture` hears the tone (within 1 dB of its level) after `instant`; the index
    /// of the first sample of that.
    @discardableResult
    func waitForTone(_ capture: MonitorCapture, after instant: ContinuousClock.Instant = .now, offset: Double = 0,
                     _ what: String, timeout: TimeInterval = 10) throws -> Int {
        guard let index = capture.waitForLevel(after: instant, timeout: timeout, { abs($0 - (Self.toneLevel + offset)) < 1 }) else {
            throw TestError("\(what): the monitor never heard the tone at \(Self.toneLevel + offset) dBFS; last 0.2 s at "
                            + "\(Levels.dBFS(Array(capture.recorded.suffix(SoundServer.rate / 5 * 2)))) dBFS")
        }
        return index
    }

    @discardableResult
    func waitForSilence(_ capture: MonitorCapture, after instant: ContinuousClock.Instant = .now, _ what: String,
                        timeout: TimeInterval = 10) throws -> Int {
        guard let index = capture.waitForLevel(after: instant, timeout: timeout, { $0 < -80 }) else {
            throw TestError("\(what): the monitor never went silent")
        }
        return index
    }
}
