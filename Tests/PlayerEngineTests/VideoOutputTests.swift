import Basics
import Dispatch
import Foundation
import GStreamer
import Logging
@testable import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

/// `VideoOutput`, the one owner of the video's sinks, gravity, on-screen bar and paused-frame
/// redraw, on real `playbin`s. Its sinks are ximagesink (named, as `TONEARM_VIDEO_SINK` names it)
/// for a display that is only named: nothing here goes to READY with them, so no X server is
/// needed (VideoWindowTests, VideoControlsTests and VideoGeometryTests show them on one). The
/// redraw runs on a pipeline whose video goes through the bar's `textoverlay` into a fakesink.
final class VideoOutputTests: XCTestCase {
    let queue = DispatchQueue(label: "test.video")
    var video: VideoOutput!
    var teardown: PipelineTeardown!
    /// The engine's current pipeline and load, as `current` lends them; confined to `queue`.
    var current: EnginePipeline?
    var load: Load?
    /// The state changes and ASYNC_DONEs of the current pipeline the player would hear (not the
    /// redraw's own), and the ASYNC_DONEs that ended a redraw; confined to `queue`.
    var heard: [Message.Kind] = []
    var redrawsDone = 0
    let display = VideoDisplay.from(["DISPLAY": ":97"])!
    /// 2 s of video, Theora in Ogg, made once for the class.
    static let media = Result { () throws -> (MediaGenerator, URL) in
        let media = try MediaGenerator()
        let url = media.url("clip.ogv")
        try media.gstLaunch("videotestsrc num-buffers=60 ! video/x-raw,width=160,height=120,framerate=30/1 ! theoraenc ! oggmux ! "
            + "filesink location=\(url.path)")
        return (media, url)
    }

    override func setUp() {
        super.setUp()
        GStreamerEngine.prepareRegistry()
        let logger = Logger.quiet
        teardown = PipelineTeardown(logger: logger)
        video = VideoOutput(queue: queue, logger: logger, configuredSink: "ximagesink", helper: "/nonexistent/tonearm-video",
                            teardown: teardown, current: { [unowned self] body in
            guard let current, load != nil else { return }
            body(current, &load!)
        }, tell: { _ in })
    }

    override func tearDown() {
        queue.sync {
            if let current { teardown.letGo(current, exclusiveDevice: false) }
            current = nil
            load = nil
        }
        XCTAssertTrue(teardown.waitForDisposals(timeout: 10))
        super.tearDown()
    }

    /// A playbin in NULL, its bus read on `queue` as the engine reads it: a redraw's messages are
    /// the video's, the rest the player's (and the first ASYNC_DONE ends the load's preroll).
    func pipeline() throws -> EnginePipeline {
        let playbin = try Element(factory: "playbin", name: "test", isPipeline: true)
        playbin.set("audio-sink", try Element(factory: "fakesink"))
        let bus = try XCTUnwrap(playbin.bus)
        let source = DispatchSource.makeReadSource(fileDescriptor: bus.fileDescriptor, queue: queue)
        let pipeline = EnginePipeline(playbin: playbin, kind: .playbin, gains: GainStages(stream: nil, front: nil, filter: nil), bus: bus, busSource: source)
        source.setEventHandler { [weak self, weak pipeline] in
            guard let self, let pipeline else { return }
            while let message = pipeline.bus.pop() {
                guard pipeline === current else { continue }
                if video.endsRedraw(message) {
                    if case .asyncDone = message.kind { redrawsDone += 1 }
                    continue
                }
                switch message.kind {
                case .asyncDone:
                    load?.prerolled = true
                    heard.append(message.kind)
                case .stateChanged where message.isFromPipeline: heard.append(message.kind)
                default: break  // nothing the engine tells the player (`GStreamerEngine.handle`)
                }
            }
        }
        source.setCancelHandler { withExtendedLifetime(pipeline) {} }
        source.resume()
        return pipeline
    }

    func isOn(_ flag: UInt32, _ pipeline: EnginePipeline) -> Bool { pipeline.playbin.flags("flags") & flag != 0 }

    func testADisplayGetsItsSinkTheBarAndTheVideoFlagsAndNoDisplayDropsThem() throws {
        let pipeline = try pipeline()
        try queue.sync { try video.choose(for: pipeline, display: display) }
        XCTAssertEqual(pipeline.videoSink?.factoryName, "ximagesink", "the sink TONEARM_VIDEO_SINK names")
        XCTAssertEqual(pipeline.videoSink?.string("display"), ":97")
        XCTAssertEqual(pipeline.controls?.factoryName, "textoverlay")
        XCTAssertEqual(pipeline.controls?.bool("silent"), true, "the bar is hidden until shown")
        XCTAssertTrue(isOn(0x1, pipeline) && isOn(0x4, pipeline), "video and text flags on")
        XCTAssertTrue(pipeline.lock.withLock { pipeline.display == display })
        // the same display again: nothing is made anew
        let sink = pipeline.videoSink
        try queue.sync { try video.choose(for: pipeline, display: display) }
        XCTAssertTrue(pipeline.videoSink === sink)
        // an item without a display (an audio file, or video turned off): no video at all
        try queue.sync { try video.choose(for: pipeline, display: nil) }
        XCTAssertNil(pipeline.videoSink)
        XCTAssertFalse(isOn(0x1, pipeline) || isOn(0x4, pipeline) || isOn(0x40, pipeline), "video, text and native video off")
        XCTAssertTrue(pipeline.lock.withLock { pipeline.display == nil })
        XCTAssertNil(video.window(for: pipeline, width: 320, height: 240), "no window without a display")
        XCTAssertFalse(pipeline.lock.withLock { pipeline.showedVideo })
    }

    func testGravityStretchesTheCurrentSinkAndTheNextOne() throws {
        let first = try pipeline()
        try queue.sync {
            try video.choose(for: first, display: display)
            current = first
            load = Load(try MediaURI(try Self.media.get().1.absoluteString), Generation(1))
        }
        XCTAssertEqual(first.videoSink?.bool("force-aspect-ratio"), true, "fit keeps the picture's aspect")
        queue.sync { video.perform(.setGravity(.stretch)) }
        XCTAssertEqual(first.videoSink?.bool("force-aspect-ratio"), false, "the picture fills the window")
        let next = try pipeline()
        try queue.sync { try video.choose(for: next, display: display) }
        XCTAssertEqual(next.videoSink?.bool("force-aspect-ratio"), false, "the next video's sink stretches too")
        queue.sync { video.perform(.setGravity(.fill)) }
        XCTAssertEqual(first.videoSink?.bool("force-aspect-ratio"), true)
        teardown.letGo(next, exclusiveDevice: false)
    }

    func testTheBarShowsAndHidesAndAPipelineBuiltWhileItShowsHasIt() throws {
        let first = try pipeline()
        try queue.sync {
            try video.choose(for: first, display: display)
            current = first
            load = Load(try MediaURI(try Self.media.get().1.absoluteString), Generation(1))
            video.perform(.controls("0:01 / 0:02"))
        }
        XCTAssertEqual(first.controls?.string("text"), "0:01 / 0:02")
        XCTAssertEqual(first.controls?.bool("silent"), false)
        let next = try pipeline()
        try queue.sync { try video.choose(for: next, display: display) }
        XCTAssertEqual(next.controls?.string("text"), "0:01 / 0:02", "the next video shows the bar too")
        XCTAssertEqual(next.controls?.bool("silent"), false)
        queue.sync { video.perform(.controls(nil)) }
        XCTAssertEqual(first.controls?.bool("silent"), true, "hidden")
        teardown.letGo(next, exclusiveDevice: false)
    }

    /// The clip, current, its video chosen for the display but drawn into a fakesink (the bar's
    /// overlay stays; no X server is needed), taken to `state` and prerolled.
    func prerolledClip(_ state: ElementState) throws -> EnginePipeline {
        let pipeline = try pipeline()
        let uri = try Self.media.get().1
        try queue.sync {
            try video.choose(for: pipeline, display: display)
            pipeline.playbin.set("video-sink", try Element(binDescription: "fakesink sync=true"))
            current = pipeline
            load = Load(try MediaURI(uri.absoluteString), Generation(1))
            pipeline.playbin.set("uri", uri.absoluteString)
            pipeline.playbin.setState(state)
        }
        wait(on: queue, "the preroll") { load?.prerolled == true }
        return pipeline
    }

    /// A paused video redraws its frame through the bar when the bar changes: a flushing seek to
    /// where it is, whose state changes and ASYNC_DONE the player never hears (no flicker of
    /// `PlaybackStatus`, no `Seeked`); one asked during a redraw runs once that one ends.
    func testAPausedFrameIsDrawnAgainUnheardAndOnceMoreWhenAskedMeanwhile() throws {
        let pipeline = try prerolledClip(.paused)
        let position = try XCTUnwrap(pipeline.playbin.queryPosition())
        let heardBefore = queue.sync { heard.count }
        queue.sync {
            load?.toldPosition = position
            video.perform(.controls("paused"))
            XCTAssertEqual(load?.redrawing, true, "the frame is prerolled again through the bar")
            video.perform(.controls("paused, 0:00"))
            XCTAssertEqual(load?.redrawAgain, true, "asked during the redraw: runs after it")
        }
        wait(on: queue, "both redraws") { redrawsDone == 2 && load?.redrawing == false }
        queue.sync {
            XCTAssertEqual(load?.redrawAgain, false)
            XCTAssertEqual(heard.count, heardBefore, "the player hears nothing of a redraw: \(heard[heardBefore...])")
        }
        XCTAssertEqual(pipeline.playbin.currentState.current, .paused, "still paused")
        XCTAssertEqual(pipeline.playbin.queryPosition(), position, "on the same frame")
        XCTAssertEqual(pipeline.controls?.string("text"), "paused, 0:00")
    }

    func testAPlayingVideoIsNotRedrawn() throws {
        let pipeline = try prerolledClip(.playing)
        XCTAssertEqual(pipeline.playbin.waitForState(timeout: .seconds(5)), .success)
        queue.sync {
            video.perform(.controls("playing"))
            XCTAssertEqual(load?.redrawing, false, "its next frame shows the bar")
        }
        XCTAssertEqual(pipeline.controls?.bool("silent"), false)
    }
}
