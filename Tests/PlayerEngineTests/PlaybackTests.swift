import Foundation
import Logging
import EngineLink
import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

final class PlaybackTests: XCTestCase {
    var media: MediaGenerator!

    override func setUpWithError() throws {
        media = try MediaGenerator()
    }

    func testPlaysToEndAndReportsEachTransition() throws {
        let file = try media.tone("short", format: .ogg, seconds: 0.5)
        try onBothPipelines { kind in
            let harness = try Harness(pipeline: kind)
            let id = try harness.enqueue(file)[0]
            XCTAssertEqual(harness.player.currentItem?.id, id)
            XCTAssertEqual(harness.player.state.timeControlStatus, .paused)
            let start = harness.recorder.count
            harness.player.play()
            _ = try harness.waitForStatus(id, "readyToPlay", from: start)
            try harness.waitForTimeControl(.playing, from: start)
            let ended = try harness.recorder.wait(for: "played to end", from: start) { $0.playedToEnd }
            XCTAssertEqual(ended, id)
            try harness.recorder.wait(for: "stopped at end of queue", from: start) {
                if case .intentChanged(.stopped) = $0 { () } else { nil }
            }
            XCTAssertEqual(harness.player.state.timeControlStatus, .paused)
            XCTAssertEqual(harness.player.position, .zero)
            // the transitions, in order, as an observer saw them
            let statuses = harness.recorder.events[start...].compactMap { $0.timeControl }
            XCTAssertEqual(statuses, [.waitingToPlay(.evaluatingBuffering), .playing, .paused])
        }
    }
}

final class OutputFallbackTests: XCTestCase {
    func testWithNoSoundDeviceItPlaysSilentlyInRealTime() throws {
        // no sound server and no ALSA device, whatever this machine has
        setenv("PULSE_SERVER", "unix:/nonexistent/tonearm-test", 1)
        setenv("ALSA_CONFIG_PATH", "/nonexistent/tonearm-test.conf", 1)
        setenv("PIPEWIRE_REMOTE", "/nonexistent/tonearm-test", 1)
        defer {
            unsetenv("PULSE_SERVER")
            unsetenv("ALSA_CONFIG_PATH")
            unsetenv("PIPEWIRE_REMOTE")
        }
        let media = try MediaGenerator()
        let file = try media.tone("one-second", format: .ogg, seconds: 1)
        let queue = DispatchQueue(label: "test.fallback")
        let logger = Logger.quiet
        let engine = GStreamerEngine(configuration: EngineConfiguration(pipeline: .playbin3, audioSink: nil, video: false), logger: logger)
        XCTAssertEqual(try engine.waitUntilReady().audioSinkDescription, "fakesink sync=true")
        let player = Player(engine: engine, queue: queue)
        let recorder = EventRecorder(player)
        try player.enqueue([MediaURI(fileURL: file)])
        player.play()
        try recorder.wait(for: "playing") { $0.timeControl == .playing ? () : nil }
        let started = ContinuousClock.now
        _ = try recorder.wait(for: "end") { $0.playedToEnd }
        // a sink that keeps the clock takes the media's own time, not as fast as it can
        XCTAssertGreaterThan(ContinuousClock.now - started, .milliseconds(800))
    }
}

final class StaleMessageTests: XCTestCase {
    func testTagsOfAnItemLeftBehindNeverReachTheNextOne() throws {
        let media = try MediaGenerator()
        let first = try media.tone("first", format: .flac, seconds: 3, tags: .init(title: "First Title", artist: "First Artist"))
        let second = try media.tone("second", format: .wav, seconds: 3)
        try onBothPipelines { kind in
            let harness = try Harness(pipeline: kind)
            let ids = try harness.enqueue(first, second)
            harness.player.play()
            // away before the first item's tags and preroll arrive
            try harness.player.next()
            XCTAssertEqual(harness.player.currentItem?.id, ids[1])
            _ = try harness.waitForStatus(ids[1], "readyToPlay")
            try harness.waitForTimeControl(.playing)
            XCTAssertNil(harness.player.item(ids[1])?.metadata.title, "on \(kind)")
            XCTAssertEqual(harness.player.item(ids[1])?.metadata.artists, [], "on \(kind)")
            XCTAssertFalse(harness.recorder.events.contains { event in
                guard let (id, metadata) = event.metadata else { return false }
                return id == ids[1] && metadata.title == "First Title"
            })
            XCTAssertEqual(harness.player.item(ids[0])?.status, .unknown, "the item left behind never became ready")
        }
    }
}

final class VideoTests: XCTestCase {
    func testWithNoDisplayVideoIsDroppedAndTheSoundPlays() throws {
        let media = try MediaGenerator()
        let file = media.url("clip.webm")
        try media.gstLaunch("videotestsrc num-buffers=30 ! video/x-raw,width=160,height=120,framerate=15/1 ! vp8enc deadline=1"
                            + " ! webmmux name=mux ! filesink location=\(file.path)"
                            + " audiotestsrc num-buffers=100 ! audioconvert ! vorbisenc ! mux.")
        let display = ProcessInfo.processInfo.environment["DISPLAY"], wayland = ProcessInfo.processInfo.environment["WAYLAND_DISPLAY"]
        unsetenv("DISPLAY")
        unsetenv("WAYLAND_DISPLAY")
        defer {
            if let display { setenv("DISPLAY", display, 1) }
            if let wayland { setenv("WAYLAND_DISPLAY", wayland, 1) }
        }
        try onBothPipelines { kind in
            let queue = DispatchQueue(label: "test.video")
            let logger = Logger.quiet
            // video on in the configuration: only the missing display turns it off
            let engine = GStreamerEngine(configuration: EngineConfiguration(pipeline: kind, audioSink: "fakesink sync=true", video: true), logger: logger)
            let player = Player(engine: engine, queue: queue)
            let recorder = EventRecorder(player)
            let id = try player.enqueue([MediaURI(fileURL: file)])[0]
            player.play()
            XCTAssertEqual(try recorder.wait(for: "end") { $0.playedToEnd }, id, "on \(kind)")
            XCTAssertNil(recorder.events.first { $0.failure != nil }, "on \(kind)")
            XCTAssertNotNil(player.item(id)?.metadata.audioCodec, "on \(kind)")
        }
    }
}
