import PlayerModel
import XCTest

/// Paused a while, the pipeline is released and the item stays where it was (`PausedRelease`), on
/// the machine with a hand clock.
final class PausedReleaseTests: XCTestCase {
    typealias Machine = StreamRulesTests.Machine
    let a = MediaURI(fileURL: URL(fileURLWithPath: "/music/a.flac"))

    /// Whether the engine reports an output that wakes while paused (a sound server's stream).
    var wakes = true

    /// Plays `a` and pauses it at `position`, the pipeline PAUSED.
    func paused(at position: Duration) throws -> Machine {
        var m = Machine(ReconnectPolicy())
        _ = try m.machine.enqueue([a], at: .end)
        m.machine.play()
        _ = m.take()
        m.send(.asyncDone(EngineSnapshot(position: m.sample(.zero), duration: .seconds(60), isSeekable: true, loadedRanges: [], streamWakesWhilePaused: wakes)))
        m.send(.stateChanged(.playing, pending: nil, position: m.sample(.zero)))
        m.advance(by: position)
        m.machine.pause()
        XCTAssertEqual(releaseTimers(m.take()), [], "no timer before the pipeline is paused")
        m.send(.stateChanged(.paused, pending: nil, position: m.sample(position)))
        return m
    }

    func releaseTimers(_ actions: [PlayerAction]) -> [Duration] {
        actions.compactMap { if case .startTimer(.pausedRelease, let after) = $0 { after } else { nil } }
    }

    func engineCommands(_ actions: [PlayerAction]) -> [EngineCommand] {
        actions.compactMap { if case .engine(let command) = $0 { command } else { nil } }
    }

    func testPausedFiveSecondsTheItemIsReleasedAndPlayLoadsItAgainWhereItWas() throws {
        var m = try paused(at: .seconds(12))
        XCTAssertEqual(releaseTimers(m.actions), [.seconds(5)], "one timer, from the moment it is paused")
        m.advance(by: .seconds(5))
        let released = m.fire(.pausedRelease)
        XCTAssertEqual(engineCommands(released), [.release])
        XCTAssertFalse(released.contains { if case .emit = $0 { true } else { false } }, "nothing a client sees changes: \(released)")
        XCTAssertEqual(m.machine.state.intent, .paused)
        XCTAssertEqual(m.machine.state.timeControlStatus, .paused)
        XCTAssertEqual(m.machine.position(at: m.now), .seconds(12), "where it paused")
        m.advance(by: .seconds(600))
        XCTAssertEqual(m.machine.position(at: m.now), .seconds(12), "released, the position holds")

        m.machine.play()
        let played = m.take()
        XCTAssertTrue(engineCommands(played).contains { if case .load(let uri, _) = $0 { uri == a } else { false } }, "\(played)")
        XCTAssertEqual(m.machine.state.intent, .playing)
        m.send(.asyncDone(EngineSnapshot(position: m.sample(.zero), duration: .seconds(60), isSeekable: true, loadedRanges: [], streamWakesWhilePaused: wakes)))
        XCTAssertTrue(engineCommands(m.actions).contains(.seek(.position(.seconds(12)), .exact, rate: 1)), "\(m.actions)")
    }

    func testPlayBeforeTheTimerKeepsThePipelineAndEndsTheTimer() throws {
        var m = try paused(at: .seconds(3))
        m.advance(by: .seconds(2))
        m.machine.play()
        let actions = m.take()
        XCTAssertTrue(actions.contains(.cancelTimer(.pausedRelease)))
        XCTAssertEqual(engineCommands(actions), [.setPlaying(true)])
        m.send(.stateChanged(.playing, pending: nil, position: m.sample(.seconds(3))))
        XCTAssertEqual(engineCommands(m.fire(.pausedRelease)), [], "a late timer does nothing")
    }

    /// A fake, ALSA or file sink wakes nothing paused: its pipeline is kept, with no timer (and so
    /// no teardown that would wake the service 5 s into a pause).
    func testAnOutputThatSleepsWhilePausedIsKept() throws {
        wakes = false
        var m = try paused(at: .seconds(12))
        XCTAssertEqual(releaseTimers(m.actions), [], "no timer")
        m.advance(by: .seconds(600))
        XCTAssertEqual(engineCommands(m.take()), [])
        m.machine.play()
        XCTAssertEqual(engineCommands(m.take()), [.setPlaying(true)], "the kept pipeline plays on")
    }

    func testStoppedNoTimerRuns() throws {
        var m = try paused(at: .seconds(3))
        m.machine.stop()
        XCTAssertTrue(m.take().contains(.cancelTimer(.pausedRelease)))
    }

    /// A seek on the released item prerolls it, paused, at the target (as on a stopped player), and
    /// the timer starts again once it is paused there.
    func testASeekWhileReleasedPrerollsPausedAtItsTarget() throws {
        var m = try paused(at: .seconds(12))
        m.advance(by: .seconds(5))
        m.fire(.pausedRelease)
        try m.machine.seek(to: .seconds(40), now: m.now)
        XCTAssertTrue(engineCommands(m.take()).contains { if case .load(let uri, _) = $0 { uri == a } else { false } })
        XCTAssertEqual(m.machine.state.intent, .paused)
        XCTAssertEqual(m.machine.position(at: m.now), .seconds(40))
        m.send(.asyncDone(EngineSnapshot(position: m.sample(.zero), duration: .seconds(60), isSeekable: true, loadedRanges: [], streamWakesWhilePaused: wakes)))
        XCTAssertTrue(engineCommands(m.actions).contains(.seek(.position(.seconds(40)), .exact, rate: 1)), "\(m.actions)")
        m.send(.seekDone(m.sample(.seconds(40))))
        m.send(.stateChanged(.paused, pending: nil, position: m.sample(.seconds(40))))
        XCTAssertEqual(releaseTimers(m.actions), [.seconds(5)], "paused again at the target: released again in 5 s")
    }
}
