import Foundation
import Logging
import EngineLink
import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

/// `EngineCommand.playAfterPreroll`: a load the player wants playing goes on to PLAYING at its
/// preroll on the engine's own thread; the player hears the preroll, then PLAYING, as when it
/// asked for PLAYING itself.
final class PlayAfterPrerollTests: XCTestCase {
    func testALoadAskedToPlayAfterPrerollPlaysWithNoFurtherCommand() throws {
        let media = try MediaGenerator()  // its folder goes with it
        let file = try media.tone("after-preroll", format: .mp3, seconds: 2)
        try onBothPipelines { kind in
            let (engine, events) = makeEngine(kind)
            let generation = Generation(1)
            engine.perform(.load(MediaURI(fileURL: file), generation))
            engine.perform(.playAfterPreroll(true))
            try events.wait(for: "PLAYING") { if case .stateChanged(.playing, nil, _) = $0 { true } else { false } }
            let seen = events.events
            let prerolled = try XCTUnwrap(seen.firstIndex { if case .asyncDone = $0 { true } else { false } }, "\(kind)")
            let playing = try XCTUnwrap(seen.firstIndex { if case .stateChanged(.playing, _, _) = $0 { true } else { false } })
            XCTAssertLessThan(prerolled, playing, "\(kind): the preroll is told first")
            XCTAssertFalse(seen.contains { if case .failed = $0 { true } else { false } }, "\(kind)")
            engine.perform(.release)
            XCTAssertTrue(engine.waitForDisposals(timeout: 10))
        }
    }

    func testASetPlayingAfterItCancelsIt() throws {
        let media = try MediaGenerator()
        let file = try media.tone("cancelled", format: .ogg, seconds: 2)
        try onBothPipelines { kind in
            let (engine, events) = makeEngine(kind)
            engine.perform(.load(MediaURI(fileURL: file), Generation(1)))
            engine.perform(.playAfterPreroll(true))
            engine.perform(.setPlaying(false))
            try events.wait(for: "the preroll") { if case .asyncDone = $0 { true } else { false } }
            // the engine went to PLAYING, if at all, in the pass that told the preroll: it is over
            // once a block queued after it has run
            let passed = DispatchSemaphore(value: 0)
            engine.whenReady { _ in passed.signal() }
            passed.wait()
            XCTAssertFalse(events.events.contains { if case .stateChanged(.playing, _, _) = $0 { true } else { false } }, "\(kind)")
            engine.perform(.release)
            XCTAssertTrue(engine.waitForDisposals(timeout: 10))
        }
    }

    private func makeEngine(_ kind: EngineConfiguration.PipelineKind) -> (GStreamerEngine, EngineEvents) {
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let engine = GStreamerEngine(configuration: EngineConfiguration(pipeline: kind, audioSink: "fakesink sync=true", video: false),
                                     logger: logger)
        let events = EngineEvents()
        engine.setEventHandler { _, event in events.append(event) }
        return (engine, events)
    }
}

private struct Missing: Error, CustomStringConvertible {
    var description: String
}

/// The engine's events as they come, and a wait for one.
private final class EngineEvents: @unchecked Sendable {
    // @unchecked: `seen` is guarded by `condition`.
    private let condition = NSCondition()
    private var seen: [EngineEvent] = []

    var events: [EngineEvent] { condition.withLock { seen } }

    func append(_ event: EngineEvent) {
        condition.withLock {
            seen.append(event)
            condition.broadcast()
        }
    }

    func wait(for what: String, timeout: TimeInterval = 20, _ matches: (EngineEvent) -> Bool) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        try condition.withLock {
            while !seen.contains(where: matches) {
                guard condition.wait(until: deadline) else { throw Missing(description: "no \(what) within \(timeout) s: \(seen)") }
            }
        }
    }
}
