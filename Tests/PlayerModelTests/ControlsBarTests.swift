import Foundation
import PlayerModel
import XCTest

/// The video window's bar (`ControlsBar.swift`) on a clock that moves only when the test says so:
/// when it shows and hides, what it says, and that its timer exists only while it shows.
final class ControlsBarTests: XCTestCase {
    let start = ContinuousClock.now

    func testTheBarShowsTwoSecondsAfterTheLastMoveAndRefreshesEachSecondMeanwhile() {
        var bar = ControlsBar()
        XCTAssertFalse(bar.isShown)
        XCTAssertEqual(bar.pointerMoved(at: start), .seconds(1), "hidden: a timer starts")
        XCTAssertEqual(bar.tick(at: start + .seconds(1)), .refresh(next: .seconds(1)))
        XCTAssertNil(bar.pointerMoved(at: start + .milliseconds(1500)), "shown: its timer already runs")
        XCTAssertEqual(bar.tick(at: start + .seconds(2)), .refresh(next: .seconds(1)))
        XCTAssertEqual(bar.tick(at: start + .seconds(3)), .refresh(next: .milliseconds(500)), "up to its end, not past it")
        XCTAssertTrue(bar.isShown)
        XCTAssertEqual(bar.tick(at: start + .milliseconds(3500)), .hide)
        XCTAssertFalse(bar.isShown)
        // a timer a hair early (dispatch's clock is not this one) hides it rather than wake once more
        XCTAssertEqual(bar.pointerMoved(at: start + .seconds(10)), .seconds(1))
        XCTAssertEqual(bar.tick(at: start + .seconds(12) - .milliseconds(5)), .hide)
    }

    // MARK: In the machine

    struct Machine {
        var machine = PlayerMachine()
        var generation = Generation(0)
        var actions: [PlayerAction] = []
        var now = ContinuousClock.now

        mutating func take() {
            actions = machine.takeActions()
            for case .engine(.load(_, let loaded)) in actions { generation = loaded }
        }

        mutating func send(_ event: EngineEvent) {
            machine.handle(event, of: generation, at: now)
            take()
        }

        mutating func fire(_ timer: PlayerTimer) {
            machine.timerFired(timer, now: now)
            take()
        }

        /// What the window was asked to show, in order (nil: hide).
        var shown: [String?] { actions.compactMap { if case .engine(.video(.controls(let text))) = $0 { text } else { nil } } }
        var timers: [Duration] { actions.compactMap { if case .startTimer(.controls, let after) = $0 { after } else { nil } } }
        var cancelsTimer: Bool { actions.contains(.cancelTimer(.controls)) }
    }

    /// A one-minute clip playing 3 s in, in its window.
    func playingClip() throws -> Machine {
        var m = Machine()
        _ = try m.machine.enqueue([MediaURI(fileURL: URL(fileURLWithPath: "/videos/clip.mp4"))], at: .end)
        m.machine.play()
        m.take()
        let sample = PositionSample(.seconds(3), at: m.now)
        m.send(.asyncDone(EngineSnapshot(position: sample, duration: .seconds(60), isSeekable: true, loadedRanges: [])))
        m.send(.stateChanged(.playing, pending: nil, position: sample))
        m.send(.video(.windowOpened(VideoSize(width: 320, height: 240))))
        return m
    }

    func testAMoveShowsTheTitlePositionAndStateWhichFollowThePlayerUntilItHides() throws {
        var m = try playingClip()
        m.send(.video(.pointerMoved))
        XCTAssertEqual(m.shown, ["▶  clip.mp4  0:03 / 1:00"])
        XCTAssertEqual(m.timers, [.seconds(1)])
        m.now += .seconds(1)
        m.fire(.controls)
        XCTAssertEqual(m.shown, ["▶  clip.mp4  0:04 / 1:00"])
        XCTAssertEqual(m.timers, [.seconds(1)])
        // paused while it shows: it says so, and still hides 2 s after the move
        m.machine.pause()
        m.send(.stateChanged(.paused, pending: nil, position: PositionSample(.milliseconds(4200), at: m.now)))
        m.now += .milliseconds(500)
        m.machine.timerFired(.controls, now: m.now)
        m.take()
        XCTAssertEqual(m.shown, ["❚❚  clip.mp4  0:04 / 1:00"])
        XCTAssertEqual(m.timers, [.milliseconds(500)])
        m.now += .milliseconds(500)
        m.fire(.controls)
        XCTAssertEqual(m.shown, [nil], "hidden")
        XCTAssertEqual(m.timers, [], "a hidden bar leaves no timer")
        // an unchanged text is not sent again (a paused frame is redrawn for each)
        m.send(.video(.pointerMoved))
        XCTAssertEqual(m.shown, ["❚❚  clip.mp4  0:04 / 1:00"])
        m.now += .seconds(1)
        m.fire(.controls)
        XCTAssertEqual(m.shown, [], "the same text: nothing asked of the window")
        XCTAssertEqual(m.timers, [.seconds(1)])
    }

    func testControlsVisibleFalseHidesTheBarAndIgnoresMovesAndWorksWithNoWindow() throws {
        var m = Machine()
        m.machine.setControlsVisible(false)
        m.take()
        XCTAssertEqual(m.actions, [.emit(.videoChanged({ var v = VideoState(); v.controlsVisible = false; return v }()))],
                       "set with no window: announced, nothing asked of the window")
        m.machine.setControlsVisible(false)
        m.take()
        XCTAssertEqual(m.actions, [], "no change, no announcement")

        m = try playingClip()
        m.send(.video(.pointerMoved))
        XCTAssertEqual(m.shown.count, 1)
        m.machine.setControlsVisible(false)
        m.take()
        XCTAssertEqual(m.shown, [nil], "hidden at once")
        XCTAssertTrue(m.cancelsTimer, "and its timer with it")
        XCTAssertFalse(m.machine.video.controlsVisible)
        m.send(.video(.pointerMoved))
        XCTAssertEqual(m.actions, [], "moves are ignored")
    }

    func testNoBarWithoutTheItemsVideoAndTheBarGoesWithTheItem() throws {
        var m = Machine()
        m.send(.video(.pointerMoved))
        XCTAssertEqual(m.actions, [], "no window, no bar")
        m = try playingClip()
        m.send(.video(.pointerMoved))
        m.machine.stop()
        m.take()
        XCTAssertEqual(m.shown, [nil])
        XCTAssertTrue(m.cancelsTimer)
    }

    func testControlsVisibleIsRestored() {
        var m = Machine()
        var settings = SavedSettings()
        settings.video.controlsVisible = false
        m.machine.restore(SavedState(items: [], settings: settings, nextID: 1), resume: .pause)
        XCTAssertFalse(m.machine.video.controlsVisible)
    }
}
