import Dispatch
import PlayerModel
import TestSupport
import XCTest

/// The video's state in the model (`VideoState.swift`) against a scripted engine: the window's
/// events come in as engine events, Raise and Fullscreen go out as engine commands.
final class VideoRulesTests: XCTestCase {
    var queue: DispatchQueue!
    var engine: ScriptedEngine!
    var player: Player!
    var events: EventRecorder!
    let clip = MediaURI(fileURL: URL(fileURLWithPath: "/videos/clip.mp4"))
    let song = MediaURI(fileURL: URL(fileURLWithPath: "/music/song.flac"))

    override func setUp() {
        queue = DispatchQueue(label: "test.player")
        engine = ScriptedEngine(queue: queue)
        player = Player(engine: engine, queue: queue)
        events = EventRecorder(player)
    }

    func videoCommands() -> [VideoCommand] {
        engine.calls.compactMap { if case .video(let command) = $0 { command } else { nil } }
    }

    func videoEvents() -> [VideoState] {
        events.events.compactMap { if case .videoChanged(let state) = $0 { state } else { nil } }
    }

    func testTheWindowOpeningGivesTheItemVideoItsSizeAndTitle() throws {
        XCTAssertEqual(videoEvents(), [VideoState()], "a subscriber hears the video state first (rule 1)")
        try player.enqueue([clip])
        player.play()
        engine.preroll()
        engine.send(.video(.windowOpened(.zero)))
        XCTAssertTrue(player.video.hasWindow)
        XCTAssertTrue(player.video.hasVideo)
        XCTAssertEqual(player.video.size, .zero)
        engine.send(.video(.windowOpened(VideoSize(width: 768, height: 576))))
        XCTAssertEqual(player.video.size, VideoSize(width: 768, height: 576))
        XCTAssertEqual(videoCommands(), [.setTitle("clip.mp4")], "titled once, with the file's name")
        var tags = Metadata()
        tags.title = "A Clip"
        engine.send(.tags(tags))
        XCTAssertEqual(videoCommands().last, .setTitle("A Clip"))
        XCTAssertEqual(videoEvents().count, 3, "one announcement per change: \(videoEvents())")
    }

    func testRaiseAndFullscreenNeedAWindow() throws {
        XCTAssertFalse(player.raiseWindow())
        XCTAssertFalse(player.setFullscreen(true))
        XCTAssertEqual(videoCommands(), [])
        try player.enqueue([clip])
        player.play()
        engine.preroll()
        engine.send(.video(.windowOpened(VideoSize(width: 320, height: 240))))
        XCTAssertTrue(player.raiseWindow())
        XCTAssertTrue(player.setFullscreen(true))
        XCTAssertEqual(Array(videoCommands().suffix(2)), [.raise, .setFullscreen(true)])
        XCTAssertFalse(player.video.isFullscreen, "fullscreen once the window says so")
        engine.send(.video(.windowFullscreen(true)))
        XCTAssertTrue(player.video.isFullscreen)
    }

    func testAnAudioItemAfterTheVideoForgetsTheVideoAndTheWindowGoesWhenTheEngineSays() throws {
        try player.enqueue([clip, song])
        player.play()
        engine.preroll()
        engine.send(.video(.windowOpened(VideoSize(width: 320, height: 240))))
        engine.send(.video(.windowFullscreen(true)))
        try player.next()
        XCTAssertFalse(player.video.hasVideo)
        XCTAssertEqual(player.video.size, .zero)
        XCTAssertTrue(player.video.hasWindow, "the window stays until the engine closes it")
        engine.preroll()
        engine.send(.video(.windowGone), generation: Generation(1))  // whatever the load
        XCTAssertEqual(player.video, VideoState())
    }

    func testAWindowOpeningForAStaleLoadIsAWindowButNotTheItemsVideo() throws {
        try player.enqueue([clip, song])
        player.play()
        engine.preroll()
        try player.next()
        engine.send(.video(.windowOpened(VideoSize(width: 320, height: 240))), generation: Generation(1))
        XCTAssertTrue(player.video.hasWindow)
        XCTAssertFalse(player.video.hasVideo)
    }

    func testClosingTheWindowStopsTheItem() throws {
        try player.enqueue([clip])
        player.play()
        engine.preroll()
        engine.send(.stateChanged(.playing, pending: nil))
        engine.send(.video(.windowOpened(VideoSize(width: 320, height: 240))))
        engine.send(.video(.windowClosed))
        XCTAssertEqual(player.state.intent, .stopped)
        XCTAssertNotNil(player.currentItem, "the item stays, stopped")
        XCTAssertFalse(player.video.hasVideo)
    }
}
