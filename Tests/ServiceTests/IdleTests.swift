import Foundation
import TestSupport
import XCTest

/// Nothing polls: a tonearmd that is idle, paused or stopped is woken by nothing but a client or
/// the pipeline (design brief: no timers, state changes are pushed).
final class IdleTests: ServiceTestCase {
    typealias H = ServiceHarness

    /// Context switches of tonearmd's threads over a window, counted from /proc for the threads
    /// alive at both ends (a thread that starts or ends inside it is a one-off, not a tick). One in
    /// `window` seconds is let through for such one-offs; a 1 Hz timer makes three.
    func wakeUps(_ pid: Int32, window: TimeInterval = 3) throws -> (count: Int, threads: [String]) {
        func snapshot() -> [String: (name: String, switches: Int)] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            var result: [String: (String, Int)] = [:]
            for task in tasks {
                guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
                var name = "?"
                var switches = 0
                for line in status.split(separator: "\n") {
                    let fields = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                    guard fields.count == 2 else { continue }
                    if fields[0] == "Name" { name = fields[1] }
                    if fields[0].hasSuffix("_ctxt_switches") { switches += Int(fields[1]) ?? 0 }
                }
                result[task] = (name, switches)
            }
            return result
        }
        let before = snapshot()
        Thread.sleep(forTimeInterval: window)
        let after = snapshot()
        // Under `make test-tsan` the ThreadSanitizer runtime's own thread, started before main()
        // and named like the process, wakes every 100 ms (compiler-rt tsan_rtl.cpp,
        // BackgroundThread): not ours to count. It is the first thread after the main one.
        var runtimeThread: String?
        if ProcessInfo.processInfo.environment["SWIFT_SANITIZE"] == "thread" {
            runtimeThread = before.filter { $0.key != "\(pid)" && $0.value.name == "tonearmd" }
                .keys.min { (Int($0) ?? .max) < (Int($1) ?? .max) }
        }
        var count = 0
        var threads: [String] = []
        for (task, end) in after where task != runtimeThread {
            guard let start = before[task], end.switches > start.switches else { continue }
            count += end.switches - start.switches
            threads.append("\(task) \(end.name) +\(end.switches - start.switches)")
        }
        return (count, threads)
    }

    func assertAsleep(_ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        // what was under way (a teardown, a worker thread's idle exit) settles first
        Thread.sleep(forTimeInterval: 1.5)
        let (count, threads) = try wakeUps(harness.daemon.pid)
        XCTAssertLessThanOrEqual(count, 1, "\(what): tonearmd woke \(count) times in 3 s: \(threads)", file: file, line: line)
    }

    /// Fresh, with an emptied list (Clear gives freed memory back on a queue of ours), paused and
    /// stopped: no wake-ups. A job on a global dispatch queue once started libdispatch's 1 s
    /// worker-pool monitor here, which then woke the process every second for good.
    func testAnIdlePausedOrStoppedServiceDoesNotWakeUp() throws {
        try harness.start()
        try assertAsleep("fresh")
        try harness.call(H.extensionInterface, "Clear")
        try assertAsleep("after Clear")
        let file = try short("ten", seconds: 10)
        try harness.playerctl("open", H.uri(file))
        try harness.waitForStatus("Playing")
        try harness.playerctl("pause")
        try harness.waitForStatus("Paused")
        try assertAsleep("paused")
        try harness.playerctl("stop")
        try harness.waitForStatus("Stopped")
        try assertAsleep("stopped")
    }
}
