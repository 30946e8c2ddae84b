import Dispatch
import PlayerModel
import TestSupport
import XCTest

/// What the person does in the video window (`WindowInput.swift`), against a scripted engine: each
/// input comes in as the window's engine event and does what the matching client call does.
final class WindowInputTests: XCTestCase {
    var queue: DispatchQueue!
    var engine: ScriptedEngine!
    var player: Player!
    var events: EventRecorder!
    var clock: TestClock!
    let clip = MediaURI(fileURL: URL(fileURLWithPath: "/videos/clip.mp4"))
    let next = MediaURI(fileURL: URL(fileURLWithPath: "/videos/next.webm"))

    override func setUp() {
        clock = TestClock()
        queue = DispatchQueue(label: "test.player")
        engine = ScriptedEngine(queue: queue)
        engine.clock = clock.read
        player = Player(engine: engine, queue: queue, clock: clock.read)
        events = EventRecorder(player)
    }

    /// The clip (10 s) playing in a window.
    func playInAWindow() throws {
        try player.enqueue([clip, next])
        player.play()
        engine.preroll()
        engine.send(.stateChanged(.playing, pending: nil))
        engine.send(.video(.windowOpened(VideoSize(width: 320, height: 240))))
        engine.clearCalls()
    }

    func press(_ key: String) throws {
        engine.send(.video(.input(try XCTUnwrap(WindowInput(key: key), "a key with an action: \(key)"))))
    }

    func testTheKeysAndTheirActions() {
        let table: [String: WindowInput] = [
            "Space": .playPause, "F": .toggleFullscreen, "Escape": .leaveFullscreen, "Left": .seek(by: .seconds(-5)),
            "Right": .seek(by: .seconds(5)), "Up": .changeVolume(byPercent: 5), "Down": .changeVolume(byPercent: -5),
            "M": .toggleMute, "P": .togglePictureInPicture,
        ]
        for (key, input) in table { XCTAssertEqual(WindowInput(key: key), input, key) }
        for key in ["Q", "Return", "F11", "Tab", "", "space"] { XCTAssertNil(WindowInput(key: key), key) }
        XCTAssertEqual(WindowInput.doubleClick, .toggleFullscreen)
    }

    func testSpacePlaysAndPausesAsPlayPauseDoes() throws {
        try playInAWindow()
        try press("Space")
        XCTAssertEqual(player.transport.intent, .paused)
        try press("Space")
        XCTAssertEqual(player.transport.intent, .playing)
        XCTAssertEqual(engine.calls, [.setPlaying(false), .setPlaying(true)])
    }

    func testFAndADoubleClickToggleFullscreenAndEscapeOnlyLeavesIt() throws {
        try playInAWindow()
        try press("Escape")
        XCTAssertEqual(engine.calls, [], "Esc out of a window that is not fullscreen does nothing")
        try press("F")
        XCTAssertEqual(engine.calls, [.video(.setFullscreen(true))])
        XCTAssertFalse(player.video.isFullscreen, "fullscreen once the window says so, as for MPRIS Fullscreen")
        engine.send(.video(.windowFullscreen(true)))
        engine.send(.video(.input(.doubleClick)))
        engine.send(.video(.windowFullscreen(false)))
        try press("F")
        engine.send(.video(.windowFullscreen(true)))
        try press("Escape")
        XCTAssertEqual(engine.calls, [true, false, true, false].map { .video(.setFullscreen($0)) })
    }

    func testArrowsSeekFiveSecondsFromThePositionWithinTheItem() throws {
        try playInAWindow()
        clock.advance(by: .seconds(2))
        try press("Right")
        XCTAssertEqual(engine.calls, [.seek(.seconds(7), .exact, 1)], "from the position now, exactly, as MPRIS Seek")
        engine.finishSeek()
        try press("Left")
        try press("Left")  // coalesced behind the first (rule 5): the newest runs after it
        engine.finishSeek()
        engine.finishSeek()
        XCTAssertEqual(engine.calls.suffix(2), [.seek(.seconds(2), .exact, 1), .seek(.zero, .exact, 1)])
        XCTAssertEqual(player.position, .zero, "before 0 is 0")
        XCTAssertEqual(events.events.compactMap(\.seekedPosition).last, .zero)
        clock.advance(by: .seconds(6))
        try press("Right")
        XCTAssertEqual(player.currentItem?.uri, next, "past the end is the next item, as MPRIS Seek")
    }

    func testArrowsDoNothingWhereSeekingCannot() throws {
        engine.isSeekable = false
        engine.duration = nil
        try playInAWindow()
        try press("Right")
        try press("Left")
        XCTAssertEqual(engine.calls, [], "CanSeek false: no effect (MPRIS Seek)")
    }

    func testUpAndDownStepTheVolumeInWholePercentWithin0And1() throws {
        try playInAWindow()
        try press("Up")
        XCTAssertEqual(engine.calls, [], "already at 100%")
        try press("Down")
        try press("Down")
        XCTAssertEqual(player.state.volume, 0.9)
        player.setVolume(0.033)
        try press("Up")
        XCTAssertEqual(player.state.volume, 0.08, "3.3% up is 8%")
        for _ in 0..<3 { try press("Down") }
        XCTAssertEqual(player.state.volume, 0)
        XCTAssertEqual(engine.calls, [0.95, 0.9, 0.033, 0.08, 0.03, 0].map(ScriptedEngine.Call.volume))
    }

    func testMTogglesMute() throws {
        try playInAWindow()
        try press("M")
        XCTAssertTrue(player.state.isMuted)
        try press("M")
        XCTAssertFalse(player.state.isMuted)
        XCTAssertEqual(engine.calls, [.muted(true), .muted(false)])
        XCTAssertEqual(player.state.volume, 1, "mute keeps the volume")
    }

    func testPTogglesPictureInPictureAsThePropertyDoes() throws {
        try playInAWindow()
        try press("P")
        XCTAssertTrue(player.video.settings.pictureInPicture)
        try press("P")
        XCTAssertFalse(player.video.settings.pictureInPicture)
        XCTAssertEqual(engine.calls, [true, false].map { .video(.setPictureInPicture($0)) })
    }

    func testADropAsksForItsPathsToBeOpenedInOrder() throws {
        try playInAWindow()
        let dropped = ["/videos/a.mp4", "https://example.org/b.webm", "/videos/folder"]
        engine.send(.video(.input(.drop(dropped))))
        engine.send(.video(.input(.drop([]))))
        XCTAssertEqual(events.events.compactMap { if case .openRequested(let texts) = $0 { texts } else { nil } }, [dropped],
                       "once, for the drop that carried something")
        XCTAssertEqual(engine.calls, [], "the player queues nothing itself: resolving is off its queue")
    }

    func testWindowInputCountsWhateverTheLoad() throws {
        try playInAWindow()
        engine.send(.video(.input(.playPause)), generation: Generation(99))
        XCTAssertEqual(player.transport.intent, .paused)
    }
}
