import Foundation
import TestSupport
import XCTest

/// GStreamer runs in a process of tonearmd's own, `tonearm-engine` (ARCHITECTURE.md, "How it runs"): started
/// when something needs it, ended a few seconds after nothing is loaded, started again for the next
/// item with the settings the last one had; and when it dies, the item fails and tonearmd goes on.
final class EngineProcessTests: ServiceTestCase {
    typealias H = ServiceHarness

    func testTheEngineEndsAfterStopAndStartsAgainForTheNextItem() throws {
        let tone = try short("tone", seconds: 20)
        try harness.start()
        try harness.call(H.player, "OpenUri", "s", [H.uri(tone)])
        try harness.waitForStatus("Playing")
        let first = try XCTUnwrap(enginePID, "an item plays in the engine's process")
        XCTAssertTrue(try pluginsMapped())
        try harness.call(H.player, "Stop")
        try harness.waitForStatus("Stopped")
        // RemoteEngine.idleLimit (2 s) after the release, then its pipelines' NULL and exit
        try waitForNoEngine()
        XCTAssertFalse(try pluginsMapped(), "GStreamer went with the engine's process")
        XCTAssertEqual(try harness.playbackStatus, "Stopped")

        try harness.call(H.player, "Play")
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        let second = try XCTUnwrap(enginePID, "the item plays again in a new engine process")
        XCTAssertNotEqual(first, second)
        let position = try XCTUnwrap(try harness.get(H.player, "Position").int64)
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertGreaterThan(try XCTUnwrap(try harness.get(H.player, "Position").int64), position, "it plays on")
    }

    /// Paused, the item keeps its pipeline, and the process stays: Play goes on from there.
    func testAPausedItemKeepsItsEngine() throws {
        let tone = try short("tone", seconds: 20)
        try harness.start()
        try harness.call(H.player, "OpenUri", "s", [H.uri(tone)])
        try harness.waitForStatus("Playing")
        let engine = try XCTUnwrap(enginePID)
        try harness.call(H.player, "Pause")
        try harness.waitForStatus("Paused")
        Thread.sleep(forTimeInterval: 4)  // twice the idle limit: what is checked is that nothing ended
        XCTAssertEqual(enginePID, engine)
        try harness.call(H.player, "Play")
        try harness.waitForStatus("Playing")
        XCTAssertEqual(enginePID, engine)
    }

    /// The volume set before the engine's process ended is the next one's: what reaches the
    /// sink is as quiet after the restart as before it.
    func testTheVolumeOutlivesTheEngineProcess() throws {
        let tone = try short("loud", seconds: 2)
        let capture = harness.directory.appendingPathComponent("capture.raw")
        try harness.start(sink: "audioconvert ! audio/x-raw,format=S16LE,channels=1 ! filesink location=\(capture.path)")
        func playToTheEnd() throws -> Double {
            let mark = harness.mark()
            try harness.call(H.player, "OpenUri", "s", [H.uri(tone)])
            try harness.waitForChange(H.player, "PlaybackStatus Stopped at the end", from: mark, timeout: 15) {
                $0["PlaybackStatus"]?.string == "Stopped"
            }
            try waitForNoEngine()  // its pipeline's NULL closed the file
            let data = try Data(contentsOf: capture)
            let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
            XCTAssertGreaterThan(samples.count, 44_100, "a second of sound or more was written")
            return Double(samples.map { Int(abs(Int32($0))) }.max() ?? 0)
        }
        let loud = try playToTheEnd()
        XCTAssertGreaterThan(loud, 10_000)
        try harness.set(H.player, "Volume", "d", "0.25")
        let quiet = try playToTheEnd()
        XCTAssertLessThan(quiet, loud * 0.5, "the new engine process plays at the volume set before it started")
        XCTAssertGreaterThan(quiet, 0)
    }

    /// A crash inside GStreamer (here: the process killed) fails the item it played; tonearmd
    /// answers, and the next item plays in a new process.
    func testAKilledEngineFailsTheItemAndTheServiceGoesOn() throws {
        let tone = try short("tone", seconds: 20)
        let other = try short("other", seconds: 20, frequency: 660)
        try harness.start()
        try harness.call(H.player, "OpenUri", "s", [H.uri(tone)])
        try harness.waitForStatus("Playing")
        let engine = try XCTUnwrap(enginePID)
        let mark = harness.mark()
        kill(engine, SIGKILL)
        let failed = try harness.waitForSignal(H.extensionInterface, "ItemFailed", from: mark)
        XCTAssertTrue(failed.arguments.last?.string?.contains("engine process ended") == true, "\(failed)")
        try harness.ping()
        XCTAssertTrue(harness.daemon.isRunning, harness.logs)
        try harness.call(H.player, "OpenUri", "s", [H.uri(other)])
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        XCTAssertNotEqual(try XCTUnwrap(enginePID), engine)
    }
}
