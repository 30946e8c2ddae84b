import EngineLink
import PlayerModel
import XCTest

/// The engine link's watchdog as a value (EngineLink/EngineWatch.swift), its time moved by hand:
/// when it wakes, when an engine is late, and when a playing file has stood still.
final class EngineWatchTests: XCTestCase {
    private let bounds = EngineWatch.Bounds(command: .seconds(5), setUp: .seconds(60), probeInterval: .seconds(2))
    private var start: ContinuousClock.Instant!
    private var watch: EngineWatch!

    override func setUp() {
        start = .now
        watch = EngineWatch(bounds: bounds, at: start)
        watch.setUpEnded(at: start)
    }

    private func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int64(seconds * 1000)) }
    private func file() throws -> MediaURI { try MediaURI("/music/tone.ogg") }

    func testNothingAskedAndNothingPlayingNeverWakes() {
        XCTAssertNil(watch.wakeUp, "an idle engine is not looked at: no timer")
        watch.sent(.setVolume(0.5), number: 1, at: at(0))
        XCTAssertEqual(watch.wakeUp, at(5))
        watch.answered(through: 1, at: at(0.01))
        XCTAssertNil(watch.wakeUp)
    }

    func testACommandNotAnsweredWithinTheBoundStalls() throws {
        watch.sent(.load(try file(), Generation(1)), number: 1, at: at(0))
        watch.sent(.setPlaying(true), number: 2, at: at(0.1))
        XCTAssertNil(watch.check(at: at(4.9)))
        XCTAssertEqual(watch.check(at: at(5)), .stalled("no answer to the load of tone.ogg within 5 s"))
    }

    func testTheBoundCountsFromTheLastAnswer() throws {
        watch.sent(.setPlaying(true), number: 1, at: at(0))
        watch.sent(.seek(.position(.seconds(3)), .exact, rate: 1), number: 2, at: at(0))
        watch.answered(through: 1, at: at(4))
        XCTAssertNil(watch.check(at: at(8.9)), "the engine made progress at 4 s")
        XCTAssertEqual(watch.check(at: at(9)), .stalled("no answer to a seek within 5 s"))
    }

    func testAWaitTheEngineAnnouncesMovesTheDeadline() {
        watch.sent(.release, number: 1, at: at(0))
        watch.waiting(bound: .seconds(8), at: at(1))
        XCTAssertNil(watch.check(at: at(8.9)))
        XCTAssertEqual(watch.check(at: at(9)), .stalled("no answer to stop within 8 s"))
    }

    func testTheSetUpHasItsOwnBound() {
        var fresh = EngineWatch(bounds: bounds, at: start)
        fresh.sent(.setVolume(1), number: 1, at: at(0))
        XCTAssertNil(fresh.check(at: at(30)), "the first gst_init may scan every plugin")
        fresh.setUpEnded(at: at(31))
        XCTAssertEqual(fresh.check(at: at(36)), .stalled("no answer to a volume change within 5 s"))
    }

    func testAPlayingItemIsAskedItsPositionAndAPausedOneIsNot() throws {
        watch.sent(.load(try file(), Generation(1)), number: 1, at: at(0))
        watch.answered(through: 1, at: at(0.01))
        XCTAssertEqual(watch.wakeUp, at(2), "a load under way is looked at until it prerolls")
        watch.observed(.asyncDone(EngineSnapshot(position: nil, duration: .seconds(20), isSeekable: true, loadedRanges: [])), at: at(0.05))
        XCTAssertNil(watch.wakeUp, "prerolled and paused: nothing wakes")
        watch.observed(.stateChanged(.playing, pending: nil, position: nil), at: at(0.1))
        XCTAssertEqual(watch.wakeUp, at(2.1))
        XCTAssertEqual(watch.check(at: at(2.1)), .probe)
        watch.sentProbe(number: 2, at: at(2.1))
        XCTAssertEqual(watch.wakeUp, at(7.1), "the probe's answer is awaited as a command's")
        XCTAssertNil(watch.probed(2, position: .seconds(2), at: at(2.11)))
        XCTAssertEqual(watch.wakeUp, at(4.1))
        watch.observed(.stateChanged(.paused, pending: nil, position: nil), at: at(3))
        XCTAssertNil(watch.wakeUp, "paused: no timer")
    }

    func testAPlayingFileWhosePositionStandsStillStalls() throws {
        watch.sent(.load(try file(), Generation(1)), number: 1, at: at(0))
        watch.answered(through: 1, at: at(0))
        watch.observed(.stateChanged(.playing, pending: nil, position: nil), at: at(0))
        XCTAssertNil(watch.probed(2, position: .seconds(2), at: at(2)))
        XCTAssertNil(watch.probed(3, position: .seconds(2), at: at(4)))
        XCTAssertEqual(watch.probed(4, position: .seconds(2), at: at(6)), .stalled("the position stood still at 0:02 for 4 s while playing"))
    }

    func testAMovingPositionBufferingOrAStreamIsNoStall() throws {
        watch.sent(.load(try file(), Generation(1)), number: 1, at: at(0))
        watch.observed(.stateChanged(.playing, pending: nil, position: nil), at: at(0))
        for (index, second) in [2, 4, 6, 8].enumerated() {
            XCTAssertNil(watch.probed(UInt64(2 + index), position: .seconds(second), at: at(Double(second))))
        }
        watch.observed(.buffering(percent: 40, loadedRanges: []), at: at(9))
        for number in UInt64(10)...13 { XCTAssertNil(watch.probed(number, position: .seconds(8), at: at(10))) }

        var stream = EngineWatch(bounds: bounds, at: start)
        stream.setUpEnded(at: start)
        stream.sent(.load(try MediaURI("https://example.org/radio"), Generation(2)), number: 1, at: at(0))
        stream.observed(.stateChanged(.playing, pending: nil, position: nil), at: at(0))
        for number in UInt64(2)...6 { XCTAssertNil(stream.probed(number, position: .seconds(1), at: at(Double(number) * 2))) }
    }
}
