import Foundation
import TestSupport
import XCTest

/// tonearmd on a real sound server of the test's own, through the default path (`autoaudiosink`,
/// which finds `pulsesink`), heard on the null sink's monitor: what a user's speakers would play.
/// Here PipeWire with its Pulse server, as a Debian 12 GNOME desktop runs it (or the server
/// `TONEARM_TEST_SOUND_SERVER` names); `PulseAudioServerTests` runs the same tests on PulseAudio.
class SoundServerTests: SoundServerTestCase {
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
        // the stream is corked at the server, whatever pulsesink buffers: heard silent within
        // what the device itself holds (50 ms: see AudioOutputs.pulseLatencyTime)
        let silence = capture.time(ofSample: silent)! - pause
        print("Pause heard \(silence) after the call")
        XCTAssertLessThan(silence, .milliseconds(300), "Pause heard \(silence) after the call")
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

        // the device monitor follows the new server: a device plugged in now is listed
        let plugged = harness.mark()
        try server.loadSink("dac")
        try waitForOutputs(from: plugged, "the DAC plugged into the restarted server") { $0.contains("dac") }
    }

    // MARK: Outputs

    /// The ids of an `Outputs` value announced in PropertiesChanged.
    static func ids(_ value: MonitorValue?) -> [String]? {
        value?.array?.compactMap { if case .structure(let fields) = $0.unwrapped { fields.first?.string } else { nil } }
    }

    /// `Outputs` as busctl reads it: (id, description, kind) each.
    func outputs() throws -> [[String]] {
        (try harness.get(H.extensionInterface, "Outputs").data as? [[Any]] ?? []).map { $0.compactMap { $0 as? String } }
    }

    @discardableResult
    func waitForOutputs(from mark: Int, _ what: String, _ predicate: @escaping ([String]) -> Bool) throws -> BusMessage {
        try harness.waitForChange(H.extensionInterface, what, from: mark) { changed in
            Self.ids(changed["Outputs"]).map(predicate) ?? false
        }
    }

    /// Outputs lists the server's sinks, follows a device plugged in and pulled out, and refuses
    /// an id it does not list.
    func testOutputsListTheSinksAndFollowHotPlug() throws {
        try startPlaying([try short("long", seconds: 30)], sinks: ["speakers", "headphones"])
        XCTAssertEqual(try outputs().sorted { $0[0] < $1[0] }, [["headphones", "headphones", "pulse"], ["speakers", "speakers", "pulse"]])
        XCTAssertEqual(try harness.get(H.extensionInterface, "Output").string, "default")

        var mark = harness.mark()
        try server.loadSink("dac")
        try waitForOutputs(from: mark, "the DAC plugged in") { $0.contains("dac") }
        XCTAssertEqual(Set(try outputs().map { $0[0] }), ["speakers", "headphones", "dac"])
        mark = harness.mark()
        try server.unloadSink("dac")
        try waitForOutputs(from: mark, "the DAC pulled out") { !$0.contains("dac") && $0.count == 2 }

        for bad in ["dac", "nowhere", "", String(repeating: "x", count: 300)] {
            let error = try harness.errorReply(H.properties, "Set", ["string:\(H.extensionInterface)", "string:Output", "variant:string:\(bad)"])
            XCTAssertEqual(error?.name, "org.freedesktop.DBus.Error.InvalidArgs", bad)
        }
        let wrongType = try harness.errorReply(H.properties, "Set", ["string:\(H.extensionInterface)", "string:Output", "variant:int32:1"])
        XCTAssertEqual(wrongType?.name, "org.freedesktop.DBus.Error.InvalidArgs")
        XCTAssertEqual(try harness.get(H.extensionInterface, "Output").string, "default")
        XCTAssertEqual(try server.streams().map(\.sink), ["speakers"])

        // the CLI: the list, a move, status
        XCTAssertEqual(try tonearm("output", "list").status, 0)
        XCTAssertEqual(try tonearm("output", "list").stdout.split(separator: "\n").sorted(),
                       ["  headphones\tpulse\theadphones", "  speakers\tpulse\tspeakers", "* default\t\tthe sound server's default device"])
        XCTAssertEqual(try tonearm("output", "headphones").status, 0)
        XCTAssertEqual(try tonearm("output").stdout, "headphones\n")
        XCTAssertTrue(try tonearm("output", "list").stdout.contains("* headphones\tpulse"))
        XCTAssertTrue(try tonearm("status").stdout.contains("output   headphones\n"))
        XCTAssertTrue(try tonearm("status", "--json").stdout.contains("\"output\":\"headphones\""))
        let refused = try tonearm("output", "nowhere")
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("InvalidArgs"), refused.stderr)
    }

    /// The devices are watched by the engine's process (ARCHITECTURE.md, "How it runs"): once it ended with
    /// nothing loaded, a device plugged in meanwhile is in the list that the next read of Outputs
    /// starts a new one for, and waits for.
    func testADevicePluggedInWhileNoEngineRunsIsListedAtTheNextRead() throws {
        try startPlaying([try short("long", seconds: 30)], sinks: ["speakers"])
        XCTAssertEqual(try outputs().map { $0[0] }, ["speakers"])
        try harness.call(H.player, "Stop")
        try harness.waitForStatus("Stopped")
        try waitForNoEngine()
        try server.loadSink("dac")
        XCTAssertEqual(Set(try outputs().map { $0[0] }), ["speakers", "dac"])
    }

    /// The built `tonearm` on the test's bus.
    func tonearm(_ arguments: String...) throws -> Tool.Output {
        try Tool.run(try BuiltProduct.executable("tonearm").path, arguments, environment: harness.clientEnvironment, timeout: 15)
    }

    /// Output set while playing moves the sound from one device to the other without stopping:
    /// the second device's monitor hears it less than 100 ms after the first one's went silent.
    func testSettingOutputMovesPlaybackWithoutAGap() throws {
        try startPlaying([try short("long", seconds: 30)], sinks: ["speakers", "headphones"])
        let speakers = try server.capture("speakers"), headphones = try server.capture("headphones")
        defer {
            speakers.stop()
            headphones.stop()
        }
        try waitForTone(speakers, "on the speakers")

        let mark = harness.mark()
        let moved = ContinuousClock.now
        try harness.set(H.extensionInterface, "Output", "s", "headphones")
        try harness.waitForChange(H.extensionInterface, "Output headphones", from: mark) { $0["Output"]?.string == "headphones" }
        let heard = try waitForTone(headphones, after: moved, "on the headphones")
        let ended = try waitForSilence(speakers, after: moved, "the speakers after the move")
        let gap = headphones.time(ofSample: heard)! - speakers.time(ofSample: ended)!
        print("moved to the headphones: a gap of \(gap); heard there \(headphones.time(ofSample: heard)! - moved) after the call")
        XCTAssertLessThan(gap, .milliseconds(100), "the gap between the devices")
        XCTAssertEqual(try server.streams().map(\.sink), ["headphones"])
        XCTAssertEqual(try harness.playbackStatus, "Playing")
    }

    /// The chosen device unplugged: playback goes on on the default; plugged in again, it comes
    /// back there. The choice stays, and is kept across a restart.
    func testTheChosenDeviceUnpluggedPlaysOnTheDefaultAndBackWhenItReturnsAndIsRemembered() throws {
        try startPlaying([try short("long", seconds: 30)], sinks: ["speakers", "dac"])
        try harness.set(H.extensionInterface, "Output", "s", "dac")
        var dac = try server.capture("dac")
        try waitForTone(dac, "on the DAC")
        dac.stop()

        let speakers = try server.capture("speakers")
        defer { speakers.stop() }
        var mark = harness.mark()
        let pulled = ContinuousClock.now
        try server.unloadSink("dac")
        try waitForTone(speakers, after: pulled, "on the speakers once the DAC is gone")
        try waitForOutputs(from: mark, "the DAC gone") { !$0.contains("dac") }
        XCTAssertEqual(try harness.get(H.extensionInterface, "Output").string, "dac", "still chosen")
        XCTAssertEqual(try harness.playbackStatus, "Playing")

        mark = harness.mark()
        try server.loadSink("dac")
        dac = try server.capture("dac")
        let back = ContinuousClock.now
        try waitForOutputs(from: mark, "the DAC back") { $0.contains("dac") }
        try waitForTone(dac, after: back, "on the DAC again")
        try waitForSilence(speakers, after: back, "the speakers once the DAC is back")
        dac.stop()

        // a restart plays on the DAC at once
        let old = harness.daemon
        harness.exitExpected.insert(old.pid)
        old.stop()
        try harness.start([], sink: nil, environment: server.environment)
        XCTAssertEqual(try harness.get(H.extensionInterface, "Output").string, "dac", "remembered")
        dac = try server.capture("dac")
        defer { dac.stop() }
        let play = ContinuousClock.now
        try harness.call(H.player, "Play")
        try waitForTone(dac, after: play, "on the DAC after a restart")
        XCTAssertEqual(try server.streams().map(\.sink), ["dac"])
    }

    /// `default` follows the server's default device (a desktop's sound settings).
    func testDefaultFollowsTheServersDefaultDevice() throws {
        try startPlaying([try short("long", seconds: 30)], sinks: ["speakers", "headphones"])
        let headphones = try server.capture("headphones")
        defer { headphones.stop() }
        let changed = ContinuousClock.now
        try server.setDefaultSink("headphones")
        try waitForTone(headphones, after: changed, "on the new default")
        XCTAssertEqual(try server.streams().map(\.sink), ["headphones"])
        XCTAssertEqual(try harness.get(H.extensionInterface, "Output").string, "default")
    }

    /// Stopped on a real server, with its device monitor watching: nothing polls (rule 7). (Paused,
    /// see `testPausedAWhileOnARealServerNothingWakesAndPlayPlaysOnFromWhereItWas`.)
    func testStoppedOnARealServerWithItsDevicesWatchedNothingWakes() throws {
        try startPlaying([try short("long", seconds: 30)], sinks: ["speakers", "headphones"])
        try harness.call(H.player, "Stop")
        try harness.waitForStatus("Stopped")
        XCTAssertGreaterThan(try outputs().count, 0, "the device monitor runs")
        // nothing loaded, the engine's process ends (with the devices' watch: the next read of
        // Outputs starts another, SoundServerTests.testADevicePluggedInWhileNoEngineRunsIsListedAtTheNextRead)
        try waitForNoEngine()
        Thread.sleep(forTimeInterval: 1.5)  // what was under way settles first (as IdleTests)
        let (count, threads) = WakeUps.count(harness.daemon.pid, window: 3, sanitizerThreadName: "tonearmd")
        XCTAssertLessThanOrEqual(count, 1, "tonearmd woke \(count) times in 3 s: \(threads)")
    }

    /// Paused on a real server, the stream goes after a few seconds (`PausedRelease`: libpulse
    /// asks for a corked stream's timing every 1.5 s, PA_STREAM_AUTO_TIMING_UPDATE, which pulsesink
    /// sets) and then nothing wakes tonearmd (rule 7); the position stays, and Play is heard again
    /// from there.
    func testPausedAWhileOnARealServerNothingWakesAndPlayPlaysOnFromWhereItWas() throws {
        try startPlaying([try short("long", seconds: 30)])
        let capture = try server.capture("speakers")
        defer { capture.stop() }
        try waitForTone(capture, "playing")
        Thread.sleep(forTimeInterval: 1)  // a second into the track
        try harness.call(H.player, "Pause")
        try harness.waitForStatus("Paused")
        let pausedAt = try harness.position
        XCTAssertGreaterThan(pausedAt, 500_000)
        let deadline = Date().addingTimeInterval(15)
        // a bounded wait for the server to see the stream go
        while try !server.streams().isEmpty {
            guard Date() < deadline else { throw TestError("the paused stream was never released: \(try server.streams())") }
            Thread.sleep(forTimeInterval: 0.2)
        }
        // released, nothing is loaded: the engine's process ends too (ARCHITECTURE.md, "How it runs")
        try waitForNoEngine()
        Thread.sleep(forTimeInterval: 1)  // what was under way settles first (as IdleTests)
        let (count, threads) = WakeUps.count(harness.daemon.pid, window: 3, sanitizerThreadName: "tonearmd")
        XCTAssertLessThanOrEqual(count, 1, "paused, tonearmd woke \(count) times in 3 s: \(threads)")
        XCTAssertEqual(try harness.playbackStatus, "Paused")
        XCTAssertEqual(try harness.position, pausedAt, "released, the position holds")

        let play = ContinuousClock.now
        try harness.call(H.player, "Play")
        try harness.waitForStatus("Playing")
        let heard = try waitForTone(capture, after: play, "after Play")
        print("Play after the release heard \(capture.time(ofSample: heard)! - play) after the call")
        XCTAssertGreaterThanOrEqual(try harness.position, pausedAt, "on from where it paused")
        XCTAssertLessThan(try harness.position, pausedAt + 3_000_000, "on from where it paused, not from the start")
        XCTAssertEqual(try server.streams().map(\.sink), ["speakers"])
    }

    // MARK: The desktop's slider (StreamVolumeTests.swift)

    func testTheDesktopsSliderMovesVolumeAndMuteAndOurOwnSettingsAreAnnouncedOnce() throws {
        try checkTheDesktopsSliderMovesVolumeAndMuteAndOurOwnSettingsAreAnnouncedOnce()
    }
    func testTheDesktopsSliderDuringTheSleepFadeDoesNotFightTheFade() throws { try checkTheDesktopsSliderDuringTheSleepFadeDoesNotFightTheFade() }
    func testAStreamOpenedAtHalfVolumeIsHeardAtItFromItsFirstSample() throws {
        try checkAStreamOpenedAtHalfVolumeIsHeardAtItFromItsFirstSample()
    }
    func testReplayGainIsHeardButIsNeverTheStreamsVolume() throws { try checkReplayGainIsHeardButIsNeverTheStreamsVolume() }
    func testAHundredSetsAndSliderMovesAreNeitherUndoneNorMissed() throws {
        try checkAHundredSetsAndSliderMovesAreNeitherUndoneNorMissed()
    }
}
