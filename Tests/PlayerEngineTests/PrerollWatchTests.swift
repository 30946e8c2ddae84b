import Dispatch
import Foundation
@testable import PlayerEngine
import XCTest

/// `PrerollWatch`, the stall timer of a local file's preroll, on a queue of its own with a short
/// limit: it tells a stall once the limit passed, not before; a cancel, or a watch begun in its
/// place, keeps the one before from telling.
final class PrerollWatchTests: XCTestCase {
    let queue = DispatchQueue(label: "test.preroll")

    func testAStallIsToldOnceItsLimitPassedAndTheWatchIsOver() {
        let watch = PrerollWatch(queue: queue, limit: .milliseconds(200))
        let stalled = expectation(description: "stalled")
        let start = ContinuousClock.now
        queue.sync {
            watch.watch { stalled.fulfill() }
            XCTAssertTrue(watch.isWatching)
        }
        wait(for: [stalled], timeout: 10)
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(190), "not before its limit")
        XCTAssertFalse(queue.sync { watch.isWatching })
    }

    func testACancelledWatchTellsNothing() {
        let watch = PrerollWatch(queue: queue, limit: .milliseconds(100))
        let stalled = expectation(description: "stalled")
        stalled.isInverted = true
        queue.sync {
            watch.watch { stalled.fulfill() }
            watch.cancel()
            XCTAssertFalse(watch.isWatching)
        }
        wait(for: [stalled], timeout: 0.5)
    }

    func testAWatchInPlaceOfAnotherIsTheOnlyOneTold() {
        let watch = PrerollWatch(queue: queue, limit: .milliseconds(150))
        let first = expectation(description: "the first stalled")
        first.isInverted = true
        let second = expectation(description: "the second stalled")
        queue.sync {
            watch.watch { first.fulfill() }
            watch.watch { second.fulfill() }  // a retry's load watches its own preroll
        }
        wait(for: [second, first], timeout: 1)
    }
}
