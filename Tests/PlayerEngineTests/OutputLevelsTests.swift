import Dispatch
import Foundation
import GStreamer
import Logging
@testable import PlayerEngine
import XCTest

/// `OutputLevels`, the one owner of the output's levels, on real GStreamer `volume` elements. A
/// `volume` element stands in for pulsesink's stream too: it has the same `volume` and `mute`
/// properties, and what a test sets on it before `streamReported` is what the sound server tells.
final class OutputLevelsTests: XCTestCase {
    /// The engine's three pipelines as `OutputLevels` asks for them; confined to `queue`.
    final class Pipelines: @unchecked Sendable {
        var current: GainStages?
        var outgoing: GainStages?
        var incoming: GainStages?
        var sliderMoves: [(StreamLevel, Bool)] = []
        var crossfadesEnded = 0
    }

    let queue = DispatchQueue(label: "test.levels")
    let pipelines = Pipelines()
    var levels: OutputLevels!

    override func setUpWithError() throws {
        try super.setUpWithError()
        GStreamerEngine.prepareRegistry()
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let pipelines = pipelines
        levels = queue.sync {
            OutputLevels(queue: queue, logger: logger, pipelines: { (pipelines.current, pipelines.outgoing, pipelines.incoming) },
                         sliderMoved: { pipelines.sliderMoves.append(($0, $1)) },
                         crossfadeEnded: {
                             pipelines.crossfadesEnded += 1
                             pipelines.outgoing = nil  // as the engine lets go of the pipeline that faded out
                         })
        }
    }

    override func tearDown() {
        queue.sync { levels = nil }
        super.tearDown()
    }

    func volumeElement() throws -> Element { try Element(factory: "volume") }

    func level(of element: Element) -> StreamLevel {
        queue.sync { StreamLevel(volume: element.double("volume"), muted: element.bool("mute")) }
    }

    /// The server tells of the stream: the stand-in is set to what it says, and read.
    func report(_ level: StreamLevel, of stages: GainStages) {
        queue.sync {
            stages.stream!.set("volume", level.volume)
            stages.stream!.set("mute", level.muted)
            levels.streamReported(stages)
        }
    }

    // MARK: One gain, applied once

    func testTheGainIsVolumeTimesFadeTimesRampOnTheElementInFrontAndTheFilterStaysAtOne() throws {
        let front = try volumeElement(), filter = try volumeElement()
        let stages = GainStages(stream: nil, front: front, filter: filter)
        queue.sync {
            pipelines.current = stages
            levels.setVolume(0.5)
            levels.fade(to: 0.25, over: .zero)
        }
        // GstVolume keeps its factor as a float: 1e-6
        XCTAssertEqual(level(of: front).volume, 0.125, accuracy: 1e-6, "volume 0.5 times the fade's 0.25")
        XCTAssertEqual(level(of: filter), StreamLevel(volume: 1, muted: false), "the filter's stage is left at 1")
        queue.sync { levels.setMuted(true) }
        XCTAssertEqual(level(of: front), StreamLevel(volume: 0.125, muted: true))
        queue.sync { levels.fade(to: 1, over: .zero) }
        XCTAssertEqual(level(of: front).volume, 0.5, accuracy: 1e-6)
    }

    func testAStageIsSetOnlyWhenItsLevelChanges() throws {
        let front = try volumeElement()
        let stages = GainStages(stream: nil, front: front, filter: nil)
        queue.sync {
            pipelines.current = stages
            levels.setVolume(0.5)
            // a sentinel: a stage set again for nothing would overwrite it
            front.set("volume", 0.77)
            levels.setVolume(0.5)
            levels.setMuted(false)
            levels.fade(to: 1, over: .zero)
            levels.applyAll()
        }
        XCTAssertEqual(level(of: front).volume, 0.77, accuracy: 1e-6, "nothing changed, nothing set")
        queue.sync { levels.setVolume(0.6) }
        XCTAssertEqual(level(of: front).volume, 0.6, accuracy: 1e-6)
    }

    func testOnTheStreamTheElementsStayAtOneAndTheStreamCarriesTheGain() throws {
        let stream = try volumeElement(), front = try volumeElement(), filter = try volumeElement()
        let stages = GainStages(stream: stream, front: front, filter: filter)
        queue.sync {
            pipelines.current = stages
            levels.setVolume(0.4)
        }
        XCTAssertEqual(level(of: stream).volume, 0.4, accuracy: 1e-6)
        XCTAssertEqual(level(of: front), StreamLevel(volume: 1, muted: false))
        XCTAssertEqual(level(of: filter), StreamLevel(volume: 1, muted: false))
    }

    func testAStreamThatOpensPlayingHasTheElementInFrontCarryTheGainUntilTheServerToldOfIt() throws {
        let stream = try volumeElement(), front = try volumeElement()
        let stages = GainStages(stream: stream, front: front, filter: nil)
        stages.opensPlaying = true
        queue.sync {
            pipelines.current = stages
            levels.setVolume(0.4)
        }
        XCTAssertEqual(level(of: front).volume, 0.4, accuracy: 1e-6, "carried in front until the server told of the stream")
        // PipeWire opened it at its own level: nobody's choice, so ours is given again
        report(StreamLevel(volume: 1, muted: false), of: stages)
        XCTAssertEqual(level(of: stream).volume, 0.4, accuracy: 1e-6, "given again")
        XCTAssertEqual(level(of: front).volume, 1, "the stream has it now")
        XCTAssertTrue(pipelines.sliderMoves.isEmpty)
    }

    // MARK: ReplayGain, on the filter's stage

    /// A stream tagged -6 dB through the filter's element of the current pipeline's `stages`
    /// (with `stream` and `front`), ReplayGain in track mode and the volume at 0.5 set at once,
    /// prerolled: the probe has read the tags. The caller sets `bin` to NULL.
    func taggedStream(stream: Element? = nil, front: Element? = nil) throws -> (bin: Element, filter: Element, stages: GainStages) {
        let bin = try Element(binDescription: "audiotestsrc num-buffers=20 ! taginject tags=\"replaygain-track-gain=-6.0\" ! volume name=filter ! fakesink sync=false")
        let filter = try XCTUnwrap(bin.child(named: "filter"))
        let stages = GainStages(stream: stream, front: front, filter: filter)
        queue.sync {
            pipelines.current = stages
            levels.take(.replayGain(albumMode: false, preamp: 0))
            levels.setVolume(0.5)
        }
        XCTAssertNotEqual(bin.setState(.paused), .failure)
        XCTAssertEqual(bin.waitForState(timeout: .seconds(10)), .success, "prerolled: the tags went through the element")
        return (bin, filter, stages)
    }

    /// With no stage at the server and none in front of the sink, the filter's element carries the
    /// one gain: ReplayGain times the volume, set at the same time, and the mute; ReplayGain off or
    /// the volume changed, the element follows.
    func testReplayGainAndAVolumeSetTogetherAreOneGainOnTheFilterWhenNoOtherStageIsThere() throws {
        let (bin, filter, stages) = try taggedStream()
        defer { bin.setState(.null) }
        let minus6 = pow(10, -6.0 / 20)
        XCTAssertEqual(queue.sync { stages.replayGainFactor }, minus6, accuracy: 1e-6)
        XCTAssertEqual(level(of: filter).volume, 0.5 * minus6, accuracy: 1e-6, "ReplayGain times the volume")
        queue.sync { levels.setMuted(true) }
        XCTAssertEqual(level(of: filter).muted, true)
        XCTAssertEqual(level(of: filter).volume, 0.5 * minus6, accuracy: 1e-6, "muted apart from the volume")
        queue.sync {
            levels.setMuted(false)
            levels.take(.replayGainOff)
        }
        XCTAssertEqual(level(of: filter), StreamLevel(volume: 0.5, muted: false), "ReplayGain off: the volume alone")
        queue.sync { levels.take(.replayGain(albumMode: true, preamp: -3)) }
        XCTAssertEqual(level(of: filter).volume, 0.5 * pow(10, -9.0 / 20), accuracy: 1e-6, "album mode takes the track gain when there is no album gain; plus the pre-amp")
    }

    /// ReplayGain is never the stream's: the stream's volume is what the desktop's slider shows and
    /// what MPRIS `Volume` reads. With a stage at the server, the stream carries the volume and the
    /// filter's element ReplayGain alone.
    func testReplayGainStaysOffTheStreamAndTheFrontWhenTheStreamCarriesTheVolume() throws {
        let stream = try volumeElement(), front = try volumeElement()
        let (bin, filter, _) = try taggedStream(stream: stream, front: front)
        defer { bin.setState(.null) }
        XCTAssertEqual(level(of: filter).volume, pow(10, -6.0 / 20), accuracy: 1e-6, "ReplayGain alone on the filter")
        XCTAssertEqual(level(of: stream).volume, 0.5, accuracy: 1e-6, "the volume alone on the stream")
        XCTAssertEqual(level(of: front), StreamLevel(volume: 1, muted: false))
    }

    // MARK: The server's reports, told apart by value

    /// The stream at `volume`, confirmed by the server.
    func heardStream(at volume: Double) throws -> GainStages {
        let stages = GainStages(stream: try volumeElement(), front: try volumeElement(), filter: nil)
        queue.sync {
            pipelines.current = stages
            levels.setVolume(volume)
        }
        report(StreamLevel(volume: volume, muted: false), of: stages)
        return stages
    }

    /// issue 37: a Volume set, then the server's report of the level before it (PipeWire answers a
    /// query with the old level now and then): ours told late, not the slider; the set stands.
    func testAReportOfTheLevelBeforeOurNewestIsNotTheSlider() throws {
        let stages = try heardStream(at: 0.9)
        queue.sync { levels.setVolume(0.5) }
        report(StreamLevel(volume: 0.9, muted: false), of: stages)
        XCTAssertTrue(pipelines.sliderMoves.isEmpty, "the old level told late is ours")
        report(StreamLevel(volume: 0.5, muted: false), of: stages)
        XCTAssertTrue(pipelines.sliderMoves.isEmpty)
        // and mute the same way
        queue.sync { levels.setMuted(true) }
        report(StreamLevel(volume: 0.5, muted: false), of: stages)
        XCTAssertTrue(pipelines.sliderMoves.isEmpty, "unmuted, told before the mute reached the server")
        report(StreamLevel(volume: 0.5, muted: true), of: stages)
        XCTAssertTrue(pipelines.sliderMoves.isEmpty)
    }

    /// issue 37: we mute, the server applies it, and its report reads the stream from before the
    /// mute (PipeWire 0.3.65's pulse server, now and then) and no report of the mute follows. A
    /// re-read a little later finds the mute and confirms it, so that the slider's unmute right
    /// after is heard as the slider's, not as the level last confirmed.
    func testAStaleReportOfOurMuteIsReadAgainAndTheSlidersUnmuteAfterItIsHeard() throws {
        let stages = try heardStream(at: 0.5)
        queue.sync { levels.setMuted(true) }
        XCTAssertTrue(level(of: stages.stream!).muted, "given")
        // the server's report reads the state from before the mute; then the server has the mute,
        // with no report of it
        report(StreamLevel(volume: 0.5, muted: false), of: stages)
        XCTAssertTrue(queue.sync { stages.isWaitingToReread }, "no news while our mute is on its way: read again")
        queue.sync { stages.stream!.set("mute", true) }
        try waitOnQueue("the re-read confirming the mute", timeout: 2) { stages.echo.given.isEmpty }
        XCTAssertEqual(queue.sync { stages.echo.heard }, StreamLevel(volume: 0.5, muted: true))
        XCTAssertFalse(queue.sync { stages.isWaitingToReread }, "no timer once nothing is on its way")
        // the desktop's slider unmutes
        report(StreamLevel(volume: 0.5, muted: false), of: stages)
        XCTAssertEqual(pipelines.sliderMoves.count, 1, "the slider's unmute heard")
        XCTAssertEqual(pipelines.sliderMoves.first?.0, StreamLevel(volume: 0.5, muted: false))
    }

    /// The re-reads are few: a stream that keeps answering with the level from before our mute is
    /// read again three times after the report, then no more, and its level is the server's truth:
    /// the desktop unmuted right after our mute, and only that unmute was reported (issue 37, the
    /// failure PipeWire 0.3.65 showed in the hundred cycles of StreamVolumeTests).
    func testAStreamThatKeepsALevelNotOursAfterTheReReadsHasTheServersLevel() throws {
        let stages = try heardStream(at: 0.5)
        queue.sync { levels.setMuted(true) }
        let start = ContinuousClock.now
        report(StreamLevel(volume: 0.5, muted: false), of: stages)  // and the stand-in stays unmuted
        try waitOnQueue("the re-reads over", timeout: 3) { !stages.isWaitingToReread }
        let over = ContinuousClock.now - start
        XCTAssertGreaterThanOrEqual(over, .milliseconds(420), "30, 100 and 300 ms apart (\(over))")
        XCTAssertEqual(queue.sync { stages.echo.given }, [], "ours let go")
        XCTAssertEqual(pipelines.sliderMoves.map(\.0), [StreamLevel(volume: 0.5, muted: false)], "the server's level heard as someone else's")
        // the player takes it: muted no more, and nothing is given again
        queue.sync { levels.setMuted(false) }
        XCTAssertEqual(queue.sync { stages.echo.given }, [])
        XCTAssertEqual(queue.sync { stages.rereadsMade }, 0)
        // the pipeline gone: a re-read waited for does nothing
        queue.sync { levels.setVolume(0.4) }
        report(StreamLevel(volume: 0.5, muted: false), of: stages)
        XCTAssertTrue(queue.sync { stages.isWaitingToReread })
        queue.sync { pipelines.current = nil }
        try waitOnQueue("the timer gone", timeout: 1) { !stages.isWaitingToReread }
        XCTAssertEqual(queue.sync { stages.rereadsMade }, 0)
    }

    /// A fade's steps come faster than the server tells of them: a report of any step given and
    /// not yet confirmed is ours, however late, and the ones before it are confirmed with it.
    func testAReportEqualToAnEarlierGivenLevelIsNotTheSlider() throws {
        let stages = try heardStream(at: 1)
        queue.sync { for volume in [0.8, 0.6, 0.4, 0.2] { levels.setVolume(volume) } }
        report(StreamLevel(volume: 0.6, muted: false), of: stages)
        report(StreamLevel(volume: 0.2, muted: false), of: stages)
        XCTAssertTrue(pipelines.sliderMoves.isEmpty)
        XCTAssertEqual(stages.echo.given, [], "all confirmed")
    }

    func testALevelNoneOfOursGaveIsTheSliderAndTheStreamKeepsIt() throws {
        let stages = try heardStream(at: 0.5)
        report(StreamLevel(volume: 0.3, muted: false), of: stages)
        XCTAssertEqual(pipelines.sliderMoves.count, 1)
        XCTAssertEqual(pipelines.sliderMoves.first?.0.volume ?? 0, 0.3, accuracy: 1e-6)
        XCTAssertEqual(pipelines.sliderMoves.first?.1, false, "not fading")
        XCTAssertEqual(level(of: stages.stream!).volume, 0.3, accuracy: 1e-6, "not set back")
        // the player takes it as Volume and says so: nothing more to give
        queue.sync {
            stages.stream!.set("volume", 0.31)  // a sentinel
            levels.setVolume(0.3)
        }
        XCTAssertEqual(level(of: stages.stream!).volume, 0.31, accuracy: 1e-6, "the stream has it already")
        // muted there too
        report(StreamLevel(volume: 0.3, muted: true), of: stages)
        XCTAssertEqual(pipelines.sliderMoves.count, 2)
        XCTAssertEqual(pipelines.sliderMoves.last?.0.muted, true)
    }

    /// Our setting reached the server after the slider's, and the server tells of it after the
    /// slider's level: what the server has is what the player follows, so the two never part.
    func testOurLevelReachingTheServerAfterTheSlidersIsFollowedAsTheServerHasIt() throws {
        let stages = try heardStream(at: 0.5)
        queue.sync { levels.setVolume(0.7) }
        report(StreamLevel(volume: 0.2, muted: false), of: stages)  // the slider, first
        XCTAssertEqual(pipelines.sliderMoves.count, 1)
        queue.sync { levels.setVolume(0.2) }  // the player took it
        report(StreamLevel(volume: 0.7, muted: false), of: stages)  // ours, after it at the server
        XCTAssertEqual(pipelines.sliderMoves.count, 2, "a level no longer given is followed, as the server has it")
    }

    func testStreamEchoOnItsOwn() {
        var echo = StreamEcho()
        echo.gave(StreamLevel(volume: 0.5, muted: false))
        XCTAssertEqual(echo.hear(StreamLevel(volume: 1, muted: false)), .first(ours: false))
        XCTAssertEqual(echo.expected, StreamLevel(volume: 1, muted: false), "what the server has")
        echo.gave(StreamLevel(volume: 0.5, muted: false))
        echo.gave(StreamLevel(volume: 0.5, muted: true))
        XCTAssertEqual(echo.hear(StreamLevel(volume: 1, muted: false)), .unchanged, "the old level, told late")
        // the server's volume is a cubic step of 1/65536: what comes back is rounded
        XCTAssertEqual(echo.hear(StreamLevel(volume: 0.50001, muted: false)), .ours)
        XCTAssertEqual(echo.given, [StreamLevel(volume: 0.5, muted: true)])
        XCTAssertEqual(echo.hear(StreamLevel(volume: 0.5, muted: true)), .ours)
        XCTAssertEqual(echo.hear(StreamLevel(volume: 0.5, muted: true)), .unchanged)
        XCTAssertEqual(echo.hear(StreamLevel(volume: 0.25, muted: true)), .slider)
        XCTAssertEqual(echo.expected, StreamLevel(volume: 0.25, muted: true))
    }

    // MARK: One ramp mechanism

    /// The sleep timer's fade to 0 over 400 ms: the square of the time left on the way, silence
    /// at its end, and the timer gone once it is over.
    func testTheFadeReachesItsTargetInItsLengthAndItsTimerGoes() throws {
        let front = try volumeElement()
        let stages = GainStages(stream: nil, front: front, filter: nil)
        let start = ContinuousClock.now
        queue.sync {
            pipelines.current = stages
            levels.fade(to: 0, over: .milliseconds(400))
        }
        XCTAssertTrue(queue.sync { levels.isStepping })
        Thread.sleep(forTimeInterval: 0.2)  // half the fade, to read its level on the way
        let (midway, at) = queue.sync { (front.double("volume"), ContinuousClock.now) }
        let left = max(0, 1 - (at - start) / .milliseconds(400))
        print("fade at \(at - start): \(midway), the square of the time left \(left * left)")
        XCTAssertEqual(midway, left * left, accuracy: 0.15, "the square of the time left, within a step or two")
        XCTAssertLessThan(midway, 1)
        try waitOnQueue("the fade's end", timeout: 2) { front.double("volume") == 0 }
        let ended = ContinuousClock.now - start
        XCTAssertLessThan(ended, .milliseconds(800), "silent at the fade's end (\(ended))")
        XCTAssertGreaterThanOrEqual(ended, .milliseconds(350))
        try waitOnQueue("the timer gone", timeout: 1) { !levels.isStepping }
        queue.sync { levels.fade(to: 1, over: .zero) }
        XCTAssertEqual(level(of: front).volume, 1, "back at once")
    }

    /// A crossfade's two equal-power ramps on the same timer: the current pipeline from silence
    /// to full, the outgoing one to silence; held while paused; the end told once.
    func testTheCrossfadesRampsMeetAtEqualPowerHoldWhilePausedAndEnd() throws {
        let coming = try volumeElement(), going = try volumeElement()
        let current = GainStages(stream: nil, front: coming, filter: nil)
        let outgoing = GainStages(stream: nil, front: going, filter: nil)
        queue.sync {
            pipelines.current = current
            pipelines.outgoing = outgoing
            levels.startCrossfade(length: .milliseconds(400), playing: false)
        }
        XCTAssertEqual(level(of: coming).volume, 0, "paused at the start: the new item silent")
        XCTAssertEqual(level(of: going).volume, 1)
        Thread.sleep(forTimeInterval: 0.1)  // paused for a while: the ramps must not move
        XCTAssertEqual(level(of: coming).volume, 0, "held while paused")
        XCTAssertFalse(queue.sync { levels.isStepping }, "no timer while held")
        queue.sync { levels.holdCrossfade(false) }
        Thread.sleep(forTimeInterval: 0.2)  // about half the ramp, to read it on the way
        let (inLevel, outLevel) = queue.sync { (coming.double("volume"), going.double("volume")) }
        // GstVolume keeps its factor as a float
        XCTAssertEqual(inLevel * inLevel + outLevel * outLevel, 1, accuracy: 1e-5, "equal power")
        XCTAssertGreaterThan(inLevel, 0.2)
        XCTAssertGreaterThan(outLevel, 0.2)
        try waitOnQueue("the crossfade's end", timeout: 2) { pipelines.crossfadesEnded == 1 }
        XCTAssertEqual(level(of: coming).volume, 1)
        XCTAssertEqual(level(of: going).volume, 0, accuracy: 1e-6, "the outgoing one left silent")
        try waitOnQueue("the timer gone", timeout: 1) { !levels.isStepping }
    }

    /// Reads on the levels' queue until `condition` holds, every 10 ms, at most `timeout`.
    func waitOnQueue(_ what: String, timeout: TimeInterval, _ condition: () -> Bool) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !queue.sync(execute: condition) {
            guard Date() < deadline else { throw NSError(domain: "timed out waiting for \(what)", code: 1) }
            usleep(10_000)
        }
    }
}
