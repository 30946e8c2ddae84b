import Foundation
import Logging
import EngineLink
import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

/// What the player relies on from any `PlaybackEngine` (design brief: "the same tests also run
/// against the real engine"), written once and run against GStreamer and against the scripted
/// engine, so that what the rule tests script stays what the real pipeline does. Each subclass
/// makes its subject and forwards every case to a `check` here: Linux's test discovery runs only
/// the test methods a class declares itself, not inherited ones.
class EngineContractTests: XCTestCase {
    var media: MediaGenerator!
    /// One second of sound, and half a second.
    var second: MediaURI!
    var halfSecond: MediaURI!
    var missing: MediaURI!

    override func setUpWithError() throws {
        media = try MediaGenerator()
        second = MediaURI(fileURL: try media.tone("second", format: .ogg, seconds: 1))
        halfSecond = MediaURI(fileURL: try media.tone("half", format: .ogg, seconds: 0.5))
        missing = MediaURI(fileURL: media.url("missing.ogg"))
    }

    /// The engine under the contract; a subclass says which.
    func makeSubject() throws -> ContractSubject {
        preconditionFailure("\(Self.self) must make its subject")
    }

    /// A read that carries a time is within this of what the media says (a 44.1 kHz Vorbis file
    /// ends on a whole block, not on the sample).
    let tolerance = Duration.milliseconds(60)

    func assertNear(_ value: Duration?, _ expected: Duration, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        guard let value else { return XCTFail("no \(what)", file: file, line: line) }
        let off = value > expected ? value - expected : expected - value
        XCTAssertLessThanOrEqual(off, tolerance, "\(what): \(value), not \(expected)", file: file, line: line)
    }

    /// Loads `uri` as `generation` and waits for its preroll; returns its snapshot.
    @discardableResult
    func prerolled(_ subject: ContractSubject, _ uri: MediaURI, _ generation: Generation) throws -> EngineSnapshot {
        let from = subject.events.count
        subject.perform(.load(uri, generation))
        subject.pipelinePrerolls()
        return try subject.events.wait(for: "the preroll of \(generation)", from: from) { event in
            if event.0 == generation, case .asyncDone(let snapshot) = event.1 { snapshot } else { nil }
        }
    }

    /// Asks for PLAYING and lets the pipeline get there.
    func play(_ subject: ContractSubject) {
        subject.perform(.setPlaying(true))
        subject.pipelinePlays()
    }

    /// A new subject that loaded `uri` as generation 1, prerolled it and was asked to play it;
    /// with the count of its events before that ask.
    func playing(_ uri: MediaURI) throws -> (subject: ContractSubject, from: Int) {
        let subject = try makeSubject()
        try prerolled(subject, uri, Generation(1))
        let from = subject.events.count
        play(subject)
        return (subject, from)
    }

    // MARK: The cases

    func checkALoadPrerollsPausedWithItsDuration() throws {
        let subject = try makeSubject()
        let generation = Generation(1)
        let snapshot = try prerolled(subject, second, generation)
        assertNear(snapshot.duration, .seconds(1), "the duration")
        XCTAssertTrue(snapshot.isSeekable)
        assertNear(snapshot.position?.position, .zero, "the position")
        let events = subject.events.all
        XCTAssertTrue(events.contains { $0.0 == generation && $0.1.isState(.paused, pending: nil) }, "\(events)")
        XCTAssertFalse(events.contains { if case .failed = $0.1 { true } else { false } }, "\(events)")
        XCTAssertFalse(events.contains { $0.1.isState(.playing) }, "a load prerolls paused: \(events)")
    }

    func checkPlayReachesPlaying() throws {
        let (subject, from) = try playing(second)
        try subject.events.wait(for: "PLAYING", from: from) { $0.0 == Generation(1) && $0.1.isState(.playing, pending: nil) ? () : nil }
    }

    func checkASeekWhilePausedStaysPausedAndReportsTheTarget() throws {
        let subject = try makeSubject()
        let generation = Generation(1)
        try prerolled(subject, second, generation)
        let from = subject.events.count
        let target = Duration.milliseconds(500)
        subject.perform(.seek(.position(target), .exact, rate: 1))
        subject.pipelineFinishesSeek()
        // an exact seek to a position is told as `.seekDone`, or as an ASYNC_DONE with a snapshot
        let landed = try subject.events.wait(for: "the seek's end", from: from) { event -> Duration? in
            guard event.0 == generation else { return nil }
            switch event.1 {
            case .seekDone(let sample): return sample.position
            case .asyncDone(let snapshot): return snapshot.position?.position
            default: return nil
            }
        }
        assertNear(landed, target, "where the seek landed")
        let after = Array(subject.events.all[from...])
        XCTAssertFalse(after.contains { $0.1.isState(.playing) }, "a seek while paused stays paused: \(after)")
        // what the pipeline reports next is from where the seek went
        let playing = subject.events.count
        play(subject)
        let reported = try subject.events.wait(for: "PLAYING", from: playing) { event -> Duration? in
            guard event.0 == generation, case .stateChanged(.playing, nil, let sample) = event.1 else { return nil }
            return sample?.position ?? .zero
        }
        XCTAssertGreaterThanOrEqual(reported, target - tolerance, "PLAYING reports the position past the seek")
    }

    func checkAMissingFileFailsNotFoundAndNothingElse() throws {
        let subject = try makeSubject()
        subject.perform(.load(missing, Generation(1)))
        let error = try subject.events.wait(for: "the failure") { event in
            if event.0 == Generation(1), case .failed(let error) = event.1 { error } else { nil }
        }
        XCTAssertEqual(error.kind, .notFound, "\(error)")
        // the next load's preroll comes after anything the missing one could have said
        try prerolled(subject, second, Generation(2))
        let first = subject.events.all.filter { $0.0 == Generation(1) }
        XCTAssertEqual(first.count, 1, "only the failure: \(first)")
    }

    func checkThePlayedEndIsAnEndOfStream() throws {
        let (subject, from) = try playing(halfSecond)
        subject.pipelinePlaysToEnd()
        try subject.events.wait(for: "the end of stream", from: from) { event in
            if event.0 == Generation(1), case .endOfStream = event.1 { () } else { nil }
        }
        let after = subject.events.all[from...]
        XCTAssertFalse(after.contains { if case .failed = $0.1 { true } else { false } }, "\(Array(after))")
    }

    func checkALoadLeftBehindSaysNothingMore() throws {
        let subject = try makeSubject()
        try prerolled(subject, second, Generation(1))
        play(subject)
        // a new load replaces the playing one
        try prerolled(subject, halfSecond, Generation(2))
        play(subject)
        subject.pipelinePlaysToEnd()
        try subject.events.wait(for: "the end of the second load") { event in
            if event.0 == Generation(2), case .endOfStream = event.1 { () } else { nil }
        }
        let events = subject.events.all
        let firstOfSecond = try XCTUnwrap(events.firstIndex { $0.0 == Generation(2) })
        let stale = events[firstOfSecond...].filter { $0.0 != Generation(2) }
        XCTAssertTrue(stale.isEmpty, "events of the load left behind: \(stale)")
    }
}

/// An engine under the contract, and what stands for its pipeline acting by itself: GStreamer's
/// does, so its hooks do nothing; the scripted engine's is what rule tests script, so its hooks
/// send those scripts.
protocol ContractSubject {
    var events: EngineEventRecorder { get }
    /// Hands the engine a command the way the player does.
    func perform(_ command: EngineCommand)
    /// After a load of a file that exists.
    func pipelinePrerolls()
    /// After `setPlaying(true)`.
    func pipelinePlays()
    /// After an exact seek to a position.
    func pipelineFinishesSeek()
    /// While playing, until the media ends.
    func pipelinePlaysToEnd()
}

/// An engine's events, tagged with their generation, as they came.
typealias EngineEventRecorder = Recording<(Generation, EngineEvent)>

extension Recording<(Generation, EngineEvent)> {
    /// Records what `engine` tells from now on.
    convenience init(_ engine: PlaybackEngine) {
        self.init()
        engine.setEventHandler { [weak self] generation, event in self?.append((generation, event)) }
    }
}

extension EngineEvent {
    func isState(_ state: PipelineState) -> Bool {
        if case .stateChanged(state, _, _) = self { true } else { false }
    }

    func isState(_ state: PipelineState, pending: PipelineState?) -> Bool {
        if case .stateChanged(state, pending, _) = self { true } else { false }
    }
}

// MARK: The subjects

/// The real engine, on playbin3 (`GStreamerPlaybinContractTests`: legacy playbin, trap 6).
class GStreamerContractTests: EngineContractTests {
    var pipeline: EngineConfiguration.PipelineKind { .playbin3 }

    override func makeSubject() throws -> ContractSubject {
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let engine = GStreamerEngine(configuration: EngineConfiguration(pipeline: pipeline, audioSink: "fakesink sync=true", video: false),
                                     logger: logger)
        _ = try engine.waitUntilReady()
        return GStreamerSubject(engine: engine, events: EngineEventRecorder(engine))
    }

    struct GStreamerSubject: ContractSubject {
        let engine: GStreamerEngine
        let events: EngineEventRecorder
        func perform(_ command: EngineCommand) { engine.perform(command) }
        func pipelinePrerolls() {}
        func pipelinePlays() {}
        func pipelineFinishesSeek() {}
        func pipelinePlaysToEnd() {}
    }

    func testALoadPrerollsPausedWithItsDuration() throws { try checkALoadPrerollsPausedWithItsDuration() }
    func testPlayReachesPlaying() throws { try checkPlayReachesPlaying() }
    func testASeekWhilePausedStaysPausedAndReportsTheTarget() throws { try checkASeekWhilePausedStaysPausedAndReportsTheTarget() }
    func testAMissingFileFailsNotFoundAndNothingElse() throws { try checkAMissingFileFailsNotFoundAndNothingElse() }
    func testThePlayedEndIsAnEndOfStream() throws { try checkThePlayedEndIsAnEndOfStream() }
    func testALoadLeftBehindSaysNothingMore() throws { try checkALoadLeftBehindSaysNothingMore() }
}

final class GStreamerPlaybinContractTests: GStreamerContractTests {
    override var pipeline: EngineConfiguration.PipelineKind { .playbin }

    // declared again: the inherited ones would not run here on Linux
    override func testALoadPrerollsPausedWithItsDuration() throws { try checkALoadPrerollsPausedWithItsDuration() }
    override func testPlayReachesPlaying() throws { try checkPlayReachesPlaying() }
    override func testASeekWhilePausedStaysPausedAndReportsTheTarget() throws { try checkASeekWhilePausedStaysPausedAndReportsTheTarget() }
    override func testAMissingFileFailsNotFoundAndNothingElse() throws { try checkAMissingFileFailsNotFoundAndNothingElse() }
    override func testThePlayedEndIsAnEndOfStream() throws { try checkThePlayedEndIsAnEndOfStream() }
    override func testALoadLeftBehindSaysNothingMore() throws { try checkALoadLeftBehindSaysNothingMore() }
}

/// The scripted engine the rule tests use, set up as the media is (their lengths, the missing file).
final class ScriptedEngineContractTests: EngineContractTests {
    override func makeSubject() throws -> ContractSubject {
        let engine = ScriptedEngine(queue: DispatchQueue(label: "test.scripted"))
        engine.failingChecks[missing] = ItemError(.notFound, "no such file: missing.ogg")
        return ScriptedSubject(engine: engine, events: EngineEventRecorder(engine),
                               lengths: [second: .seconds(1), halfSecond: .milliseconds(500)])
    }

    struct ScriptedSubject: ContractSubject {
        let engine: ScriptedEngine
        let events: EngineEventRecorder
        let lengths: [MediaURI: Duration]

        func perform(_ command: EngineCommand) {
            engine.queue.sync {
                if case .load(let uri, _) = command { engine.duration = lengths[uri] }
                engine.perform(command)
            }
        }
        func pipelinePrerolls() { engine.preroll() }
        func pipelinePlays() { engine.send(.stateChanged(.playing, pending: nil)) }
        func pipelineFinishesSeek() { engine.finishSeek() }
        func pipelinePlaysToEnd() { engine.send(.endOfStream) }
    }

    func testALoadPrerollsPausedWithItsDuration() throws { try checkALoadPrerollsPausedWithItsDuration() }
    func testPlayReachesPlaying() throws { try checkPlayReachesPlaying() }
    func testASeekWhilePausedStaysPausedAndReportsTheTarget() throws { try checkASeekWhilePausedStaysPausedAndReportsTheTarget() }
    func testAMissingFileFailsNotFoundAndNothingElse() throws { try checkAMissingFileFailsNotFoundAndNothingElse() }
    func testThePlayedEndIsAnEndOfStream() throws { try checkThePlayedEndIsAnEndOfStream() }
    func testALoadLeftBehindSaysNothingMore() throws { try checkALoadLeftBehindSaysNothingMore() }
}
