import Foundation
import TestSupport
import XCTest

/// Nothing polls: a tonearmd that is idle, paused or stopped is woken by nothing but a client or
/// the pipeline (design brief: no timers, state changes are pushed).
final class IdleTests: ServiceTestCase {
    typealias H = ServiceHarness

    /// `loaded`: an item is loaded (its engine's process stays, and counts); else that process
    /// ends first (ARCHITECTURE.md, "How it runs"), a one-off, as a teardown is.
    func assertAsleep(_ what: String, loaded: Bool = false, file: StaticString = #filePath, line: UInt = #line) throws {
        if !loaded { try waitForNoEngine() }
        // what was under way (a teardown, a worker thread's idle exit) settles first
        Thread.sleep(forTimeInterval: 1.5)
        let (count, threads) = WakeUps.count(harness.daemon.pid, window: 3, sanitizerThreadName: "tonearmd")
        XCTAssertLessThanOrEqual(count, 1, "\(what): tonearmd woke \(count) times in 3 s: \(threads)", file: file, line: line)
    }

    /// Fresh, with an emptied list (Clear gives freed memory back on a queue of ours), paused and
    /// stopped: no wake-ups. A job on a global dispatch queue once started libdispatch's 1 s
    /// worker-pool monitor here, which then woke the process every second for good.
    func testAnIdlePausedOrStoppedServiceDoesNotWakeUp() throws {
        let mark = harness.mark()
        try harness.start()
        // fresh means started: GStreamer's set-up runs after the name is owned and ends with the
        // formats announced (under make test-asan's load it was still running 1.5 s after the name)
        try harness.waitForChange(H.root, "SupportedMimeTypes", from: mark, timeout: 30) { $0["SupportedMimeTypes"] != nil }
        try assertAsleep("fresh")
        try harness.call(H.extensionInterface, "Clear")
        try assertAsleep("after Clear")
        let file = try short("ten", seconds: 10)
        try harness.playerctl("open", H.uri(file))
        try harness.waitForStatus("Playing")
        try harness.playerctl("pause")
        try harness.waitForStatus("Paused")
        try assertAsleep("paused", loaded: true)
        try harness.playerctl("stop")
        try harness.waitForStatus("Stopped")
        try assertAsleep("stopped")
    }
}
