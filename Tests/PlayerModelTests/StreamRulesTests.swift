import Dispatch
import PlayerModel
import TestSupport
import XCTest

/// The rules for network streams (issue 12) against a scripted engine.
final class StreamRulesTests: XCTestCase {
    var queue: DispatchQueue!
    var engine: ScriptedEngine!
    var player: Player!
    var events: EventRecorder!
    let radio = try! MediaURI("http://radio.example/stream")
    let file = MediaURI(fileURL: URL(fileURLWithPath: "/music/a.flac"))

    override func setUp() {
        queue = DispatchQueue(label: "test.player")
        engine = ScriptedEngine(queue: queue)
        player = Player(engine: engine, queue: queue)
        events = EventRecorder(player)
    }

    /// Plays `uri` as a live stream: no length, no seeking.
    func startLive(_ uri: MediaURI) throws -> ItemID {
        engine.duration = nil
        engine.isSeekable = false
        let id = try player.enqueue([uri])[0]
        player.play()
        engine.send(.live)
        engine.preroll()
        engine.send(.stateChanged(.playing, pending: nil))
        XCTAssertEqual(player.currentItem?.isLive, true)
        XCTAssertEqual(player.currentItem?.status, .readyToPlay)
        return id
    }

    func testALiveStreamRefusesARateOtherThanOne() throws {
        _ = try startLive(radio)
        engine.clearCalls()
        let before = events.count
        XCTAssertThrowsError(try player.setRate(1.5)) { error in
            XCTAssertEqual((error as? PlayerError)?.code, .rateNotSupported)
            XCTAssertTrue((error as? PlayerError)?.message.contains("live stream") == true, "\(error)")
        }
        XCTAssertEqual(player.state.rate, 1)
        XCTAssertEqual(Array(events.events.dropFirst(before)), [.rateChanged(1, .refused)])
        XCTAssertTrue(engine.calls.isEmpty, "nothing was asked of the pipeline: \(engine.calls)")
        // 1.0 itself is no change and no error
        XCTAssertNoThrow(try player.setRate(1))
    }

    func testAStreamThatCannotSeekBecomingCurrentTakesTheRateBackToOne() throws {
        try player.setRate(2)
        XCTAssertEqual(player.state.rate, 2)
        let before = events.count
        _ = try startLive(radio)
        XCTAssertEqual(player.state.rate, 1)
        XCTAssertTrue(events.events.dropFirst(before).contains(.rateChanged(1, .refused)))
        XCTAssertFalse(engine.calls.contains { if case .seek = $0 { true } else { false } },
                       "no rate seek on a stream that cannot seek: \(engine.calls)")
    }

    func testASeekableFileStillTakesARate() throws {
        _ = try player.enqueue([file])
        player.play()
        engine.preroll()
        XCTAssertNoThrow(try player.setRate(1.5))
        XCTAssertEqual(player.state.rate, 1.5)
    }

    // a BUFFERING below 100 can come before the engine knows the stream is live; live streams
    // never buffer-pause, so that pause must not outlive the news
    func testABufferingPauseFromBeforeTheStreamWasKnownLiveEnds() throws {
        engine.duration = nil
        engine.isSeekable = false
        _ = try player.enqueue([radio])
        player.play()
        engine.send(.buffering(percent: 0))
        XCTAssertEqual(player.state.timeControlStatus, .waitingToPlay(.buffering))
        engine.clearCalls()
        engine.send(.live)
        engine.preroll()
        engine.send(.buffering(percent: 100))
        XCTAssertEqual(engine.calls.last { if case .setPlaying = $0 { true } else { false } }, .setPlaying(true))
        engine.send(.stateChanged(.playing, pending: nil))
        XCTAssertEqual(player.state.timeControlStatus, .playing)
    }
}
