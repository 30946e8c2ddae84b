import Foundation
import TestSupport
import XCTest

/// Stop after the current track and the sleep timer, heard: tonearmd plays into a WAV capture
/// written in real time (`filesink sync=true`, unbuffered), and the test reads what came out.
final class SleepTimerServiceTests: ServiceTestCase {
    typealias H = ServiceHarness
    static let rate = Double(MediaGenerator.sampleRate)

    /// A sink that writes what is heard, as it is heard, to `capture`.
    func captureSink(_ capture: URL) -> String {
        "audioconvert ! audio/x-raw,format=S16LE ! wavenc ! filesink location=\(capture.path) sync=true buffer-mode=unbuffered"
    }

    /// The RMS of interleaved stereo samples from `start` for `length` seconds.
    func level(_ samples: [Int16], from start: Double, for length: Double) -> Double {
        let first = max(0, Int(start * Self.rate) * 2), last = min(samples.count, Int((start + length) * Self.rate) * 2)
        guard last > first else { return 0 }
        let sum = samples[first..<last].reduce(0.0) { $0 + Double($1) * Double($1) }
        return (sum / Double(last - first)).squareRoot()
    }

    /// Zero crossings a second of the left channel over the last `length` seconds before `end`: 2 × the frequency.
    func crossingsPerSecond(_ samples: [Int16], endingAt end: Double, length: Double) -> Double {
        let first = max(0, Int((end - length) * Self.rate)), last = min(samples.count / 2, Int(end * Self.rate))
        var crossings = 0
        for frame in (first + 1)..<last where (samples[2 * frame - 2] < 0) != (samples[2 * frame] < 0) { crossings += 1 }
        return Double(crossings) / length
    }

    func testTheSleepTimerFadesOutAndPausesAtItsDeadlineAndTheVolumeIsBackForPlay() throws {
        let tone = try media.tone("long", format: .wav, seconds: 30)
        let capture = harness.directory.appendingPathComponent("sleep.wav")
        try harness.start([tone.path], sink: captureSink(capture))
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        Thread.sleep(forTimeInterval: 1)  // a second at full level in the capture, before the fade

        let mark = harness.mark()
        let set = Date()
        try harness.call(H.extensionInterface, "SetSleepTimer", "x", ["3000000"])
        let announced = try harness.waitForChange(H.extensionInterface, "SleepTimerDeadline set", from: mark) {
            ($0["SleepTimerDeadline"]?.int64 ?? 0) > 0
        }
        let deadline = announced.changed["SleepTimerDeadline"]!.int64!
        XCTAssertEqual(Double(deadline) / 1e6, set.timeIntervalSince1970 + 3, accuracy: 0.5, "the wall clock's deadline")
        try harness.waitForStatus("Paused", timeout: 6)
        let paused = Date().timeIntervalSince(set)
        XCTAssertEqual(paused, 3, accuracy: 0.5, "paused at the deadline")
        try harness.waitForChange(H.extensionInterface, "SleepTimerDeadline back to 0", from: mark) { $0["SleepTimerDeadline"]?.int64 == 0 }
        XCTAssertEqual(try harness.get(H.player, "Volume").double, 1, "the user's Volume is untouched")

        // the capture ends where it paused: full before the fade, falling over its 3 s, silent at the end
        Thread.sleep(forTimeInterval: 0.3)
        var samples = try WAV.samples(of: capture)
        let end = Double(samples.count / 2) / Self.rate
        let full = level(samples, from: end - 3.9, for: 0.8)
        XCTAssertGreaterThan(full, 8000, "a tone at half scale before the fade (RMS \(full))")
        let steps = [2.75, 2.0, 1.25, 0.5].map { level(samples, from: end - $0 - 0.25, for: 0.5) / full }
        for (earlier, later) in zip(steps, steps.dropFirst()) {
            XCTAssertLessThan(later, earlier, "the level falls through the fade: \(steps)")
        }
        // the square of the time left: 2/3 left -> 0.44, 1/3 -> 0.11 (a window's worth of slack)
        XCTAssertEqual(steps[1], 0.44, accuracy: 0.12, "\(steps)")
        XCTAssertLessThan(level(samples, from: end - 0.15, for: 0.15) / full, 0.03, "silent at the deadline")

        // Play: the next evening's music is at the user's volume
        try harness.call(H.player, "Play")
        try harness.waitForStatus("Playing")
        Thread.sleep(forTimeInterval: 1.5)
        samples = try WAV.samples(of: capture)
        let resumed = level(samples, from: Double(samples.count / 2) / Self.rate - 0.5, for: 0.5)
        XCTAssertEqual(resumed / full, 1, accuracy: 0.05, "full level after Play")
    }

    /// Stop after the current track, turned on while it plays: it plays to its end, the player
    /// stops, the second track is current and nothing of it was heard.
    func testStopAfterCurrentPlaysTheTrackToItsEndAndNothingOfTheNext() throws {
        let first = try media.tone("first", format: .wav, seconds: 3, frequency: 440)
        let second = try media.tone("second", format: .wav, seconds: 3, frequency: 1000)
        let capture = harness.directory.appendingPathComponent("stop-after.wav")
        try harness.start([first.path, second.path], sink: captureSink(capture))
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        let tracks = try harness.tracks
        XCTAssertEqual(tracks.count, 2)
        XCTAssertEqual(try harness.get(H.extensionInterface, "StopAfterCurrent").bool, false)

        let mark = harness.mark()
        try harness.set(H.extensionInterface, "StopAfterCurrent", "b", "true")
        try harness.waitForChange(H.extensionInterface, "StopAfterCurrent true", from: mark) { $0["StopAfterCurrent"]?.bool == true }
        try harness.waitForStatus("Stopped", timeout: 8)
        try harness.waitForSignal(H.extensionInterface, "PlayedToEnd", from: mark) { $0.arguments.first?.string == tracks[0] }
        try harness.waitForChange(H.extensionInterface, "StopAfterCurrent false again", from: mark) { $0["StopAfterCurrent"]?.bool == false }
        try harness.waitForTrack(tracks[1])
        XCTAssertEqual(try harness.position, 0)

        Thread.sleep(forTimeInterval: 1)  // whatever would have come of the second track
        let samples = try WAV.samples(of: capture)
        let length = Double(samples.count / 2) / Self.rate
        XCTAssertEqual(length, 3, accuracy: 0.05, "the first track whole, and nothing after it")
        let tail = crossingsPerSecond(samples, endingAt: length, length: 0.2)
        XCTAssertEqual(tail, 880, accuracy: 40, "the last of the capture is the first track's 440 Hz, not 1000 Hz")
        XCTAssertEqual(try harness.playbackStatus, "Stopped", "and it stays stopped")
    }

    func testBadLengthsAreInvalidArgsAndCancelCancels() throws {
        try harness.start()
        for bad in ["-1", "86400000001", "\(Int64.max)", "\(Int64.min)"] {
            let error = try harness.errorReply(H.extensionInterface, "SetSleepTimer", ["int64:\(bad)"])
            XCTAssertEqual(error?.name, "org.freedesktop.DBus.Error.InvalidArgs", bad)
        }
        XCTAssertEqual(try harness.get(H.extensionInterface, "SleepTimerDeadline").int64, 0, "nothing was set")
        let wrongType = try harness.errorReply(H.properties, "Set",
                                               ["string:\(H.extensionInterface)", "string:StopAfterCurrent", "variant:string:yes"])
        XCTAssertEqual(wrongType?.name, "org.freedesktop.DBus.Error.InvalidArgs")

        try harness.call(H.extensionInterface, "SetSleepTimer", "x", ["86400000000"])
        let deadline = try harness.get(H.extensionInterface, "SleepTimerDeadline").int64 ?? 0
        XCTAssertEqual(Double(deadline) / 1e6, Date().timeIntervalSince1970 + 86400, accuracy: 2, "a day is allowed")
        let mark = harness.mark()
        try harness.call(H.extensionInterface, "CancelSleepTimer")
        try harness.waitForChange(H.extensionInterface, "SleepTimerDeadline 0", from: mark) { $0["SleepTimerDeadline"]?.int64 == 0 }
        try harness.ping()
    }
}
