import Foundation
import Dispatch
import Logging
@testable import TonearmService
import EngineLink
import XCTest

/// The lifecycle's one map from an end to its teardown and exit status, without ending the test
/// process: its `exit` records the status. (The ends themselves, on a real tonearmd: FaultTests
/// for a lost bus, RootInterfaceTests for Quit, FirstStartTests for an engine that cannot start.)
final class LifecycleTests: XCTestCase {
    final class Record: @unchecked Sendable {
        var statuses: [Int32] = []
        var teardowns: [Termination] = []
    }

    func testEachEndHasItsStatus() {
        XCTAssertEqual(Termination.quit(reason: "SIGTERM").status, 0)
        XCTAssertEqual(Termination.busLost(reason: "gone").status, 69, "EX_UNAVAILABLE: systemd's Restart=on-failure starts it again")
        XCTAssertEqual(Termination.engineFailed(reason: "no sink").status, 1)
        XCTAssertEqual(Termination.openFailed(reason: "no such file").status, 2)
    }

    func testStopTearsDownOnceAndExitsWithTheStatus() {
        let record = Record()
        let queue = DispatchQueue(label: "lifecycle-test")
        let lifecycle = Lifecycle(queue: queue, logger: Logger(label: "test")) { record.statuses.append($0) }
        queue.sync {
            lifecycle.whenStopping { record.teardowns.append($0) }
            lifecycle.stop(.busLost(reason: "the bus went away"))
            // a second end (a SIGTERM while the first one tears down) exits, and tears down nothing more
            lifecycle.stop(.quit(reason: "SIGTERM"))
        }
        XCTAssertEqual(record.teardowns, [.busLost(reason: "the bus went away")])
        XCTAssertEqual(record.statuses, [69, 0])
    }

    func testTheAllocatorSettingsAreTakenAndTheUsersStand() {
        XCTAssertEqual(Memory.tuneAllocator(environment: [:]), Self.glibcAllocates, "mallopt took both settings (glibc's malloc: \(Self.glibcAllocates))")
        XCTAssertTrue(Memory.tuneAllocator(environment: ["MALLOC_ARENA_MAX": "4", "MALLOC_MMAP_THRESHOLD_": "65536"]),
                      "glibc's own variables stand: nothing to set")
    }

    /// Under ASan (make test-asan) malloc is ASan's, whose mallopt takes nothing (it answers 0),
    /// and tonearmd says so.
    static let glibcAllocates = ProcessInfo.processInfo.environment["SWIFT_SANITIZE"] != "address"

    func testTheThresholdsOfAVideoAreTakenAndPutBack() {
        XCTAssertEqual(Memory.videoShows((1920, 1080)), Self.glibcAllocates, "mallopt took a 1080p frame's thresholds")
        XCTAssertEqual(Memory.videoShows((Int.max, -5)), Self.glibcAllocates, "a size out of bounds saturates, within glibc's 32 MiB")
        XCTAssertEqual(Memory.videoShows(nil), Self.glibcAllocates, "and 128 KiB again once the window is gone")
    }
}
