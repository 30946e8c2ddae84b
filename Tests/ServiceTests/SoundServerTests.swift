import Foundation
import TestSupport
import XCTest

/// tonearmd on a real PulseAudio of the test's own, through the default path (`autoaudiosink`,
/// which finds `pulsesink`), heard on the null sink's monitor: what a user's speakers would play.
final class SoundServerTests: ServiceTestCase {
    typealias H = ServiceHarness
    /// The tones are made at half scale: a sine's RMS is then -9 dBFS.
    static let toneLevel = 20 * log10(0.5 / 2.0.squareRoot())
    private var server: SoundServer!

    override func tearDown() {
        if let server, let run = testRun, run.failureCount + run.unexpectedExceptionCount > 0 {
            print("--- pulseaudio:\n" + server.logText.split(separator: "\n").suffix(30).joined(separator: "\n"))
        }
        server?.stop()
        server = nil
        super.tearDown()
    }

    /// A server with `sinks` (the first the default), and tonearmd playing `files` into it.
    @discardableResult
    func startPlaying(_ files: [URL], sinks: [String] = ["speakers"], arguments: [String] = []) throws -> Daemon {
        server = try SoundServer(sinks: sinks)
        let daemon = try harness.start(files.map(\.path) + arguments, sink: nil, environment: server.environment)
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        return daemon
    }

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

    func testTheMonitorHearsPlayingAndSilenceWhenPaused() throws {
        try startPlaying([try short("long", seconds: 30)])
        XCTAssertEqual(try server.streams().map(\.sink), ["speakers"], "one stream, on the default sink")
        let capture = try server.capture("speakers")
        defer { capture.stop() }
        try waitForTone(capture, "playing")

        let pause = ContinuousClock.now
        try harness.call(H.player, "Pause")
        try harness.waitForStatus("Paused")
        let silent = try waitForSilence(capture, after: pause, "paused")
        // heard silent within the sink's buffer (pulsesink's 200 ms) of the call
        XCTAssertLessThan(capture.time(ofSample: silent)! - pause, .milliseconds(400))
        let quietFrom = ContinuousClock.now
        Thread.sleep(forTimeInterval: 0.5)  // half a second of what paused sounds like
        let quiet = capture.samples(after: quietFrom)
        XCTAssertGreaterThan(quiet.count, SoundServer.rate / 2, "the monitor went on recording")
        XCTAssertEqual(Levels.peak(quiet), 0, "digital silence while paused")

        let play = ContinuousClock.now
        try harness.call(H.player, "Play")
        try waitForTone(capture, after: play, "playing again")
    }

    /// Volume 0.5 is heard 6 dB down, Muted silences, and each is heard within 300 ms of its call
    /// (a change made ahead of playsink's queue was heard about a second late).
    func testVolumeAndMuteActOnWhatIsHeardWithin300Milliseconds() throws {
        try startPlaying([try short("long", seconds: 30)])
        let capture = try server.capture("speakers")
        defer { capture.stop() }
        try waitForTone(capture, "full volume")

        let half = ContinuousClock.now
        try harness.set(H.player, "Volume", "d", "0.5")
        let quieter = try waitForTone(capture, after: half, offset: -6.02, "Volume 0.5")
        let latency = capture.time(ofSample: quieter)! - half
        print("Volume 0.5 heard \(latency) after the call")
        XCTAssertLessThan(latency, .milliseconds(300), "Volume 0.5 heard \(latency) after the call")
        // the level itself, over a steady half second after the change
        Thread.sleep(forTimeInterval: 0.6)  // a window of steady sound to measure
        let steady = capture.samples(after: .now - .milliseconds(500))
        XCTAssertEqual(Levels.dBFS(steady) - Self.toneLevel, -6.02, accuracy: 0.5, "Volume 0.5 is 6 dB down")

        let mute = ContinuousClock.now
        try harness.set(H.extensionInterface, "Muted", "b", "true")
        let silent = try waitForSilence(capture, after: mute, "muted")
        let muteLatency = capture.time(ofSample: silent)! - mute
        print("Muted heard \(muteLatency) after the call")
        XCTAssertLessThan(muteLatency, .milliseconds(300), "Muted heard \(muteLatency) after the call")
        XCTAssertEqual(try harness.playbackStatus, "Playing", "muted, not paused")

        let unmute = ContinuousClock.now
        try harness.set(H.extensionInterface, "Muted", "b", "false")
        try waitForTone(capture, after: unmute, offset: -6.02, "unmuted, at Volume 0.5 again")
        let full = ContinuousClock.now
        try harness.set(H.player, "Volume", "d", "1.0")
        let louder = try waitForTone(capture, after: full, "Volume 1")
        XCTAssertLessThan(capture.time(ofSample: louder)! - full, .milliseconds(300))
    }

    /// The sound server killed mid-play (issue 10): tonearmd pauses where it was and says why
    /// (RateChanged 0 "output"), the track stays current and not failed; once the server is back,
    /// Play plays it again from about where it was, heard on the new server's monitor.
    func testTheServerKilledMidPlayPausesWithAReasonAndPlayPlaysOnceItIsBack() throws {
        let long = try short("long", seconds: 30)
        try startPlaying([long])
        let tracks = try harness.tracks
        var capture = try server.capture("speakers")
        try waitForTone(capture, "before the kill")
        capture.stop()
        Thread.sleep(forTimeInterval: 1)  // a second into the track

        let mark = harness.mark()
        server.kill()
        try harness.waitForSignal(H.extensionInterface, "RateChanged", from: mark) {
            $0.arguments.first?.double == 0 && $0.arguments.dropFirst().first?.string == "output"
        }
        try harness.waitForStatus("Paused")
        XCTAssertEqual(try harness.tracks, tracks, "the queue is kept")
        XCTAssertNotEqual(try harness.get(H.extensionInterface, "ItemStatus").string, "failed", "the track is not to blame")
        let pausedAt = try harness.position
        XCTAssertGreaterThan(pausedAt, 500_000, "paused where it was (\(pausedAt) µs)")
        XCTAssertTrue(harness.daemon.isRunning)

        try server.start()
        capture = try server.capture("speakers")
        defer { capture.stop() }
        let play = ContinuousClock.now
        try harness.call(H.player, "Play")
        try harness.waitForStatus("Playing")
        try waitForTone(capture, after: play, "after Play on the restarted server")
        XCTAssertEqual(try server.streams().map(\.sink), ["speakers"])
        XCTAssertGreaterThanOrEqual(try harness.position, pausedAt - 500_000, "from about where it paused")
    }
}
