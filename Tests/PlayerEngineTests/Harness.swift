import Foundation
import Logging
import EngineLink
import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

/// A real player over a real GStreamer pipeline, on media generated for the test.
final class Harness {
    let player: Player
    let engine: GStreamerEngine
    let recorder: EventRecorder

    init(pipeline: EngineConfiguration.PipelineKind, sink: String = "fakesink sync=true",
         configuration: PlayerConfiguration = PlayerConfiguration(), covers: CoverCache? = nil,
         metadataReader: MetadataReader? = nil) throws {
        let queue = DispatchQueue(label: "test.player")
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        engine = GStreamerEngine(configuration: EngineConfiguration(pipeline: pipeline, audioSink: sink, video: false),
                                 covers: covers, logger: logger)
        _ = try engine.waitUntilReady()
        player = Player(engine: engine, configuration: configuration, queue: queue, metadataReader: metadataReader)
        recorder = EventRecorder(player)
    }

    @discardableResult
    func enqueue(_ urls: URL...) throws -> [ItemID] {
        try player.enqueue(urls.map { MediaURI(fileURL: $0) })
    }

    func waitForStatus(_ id: ItemID, _ name: String, from: Int = 0, timeout: TimeInterval = 20) throws -> ItemStatus {
        try recorder.wait(for: "\(id) \(name)", from: from, timeout: timeout) { event in
            guard let (itemID, status) = event.itemStatus, itemID == id, status.name == name else { return nil }
            return status
        }
    }

    func waitForTimeControl(_ status: TimeControlStatus, from: Int = 0) throws {
        try recorder.wait(for: "time control \(status)", from: from) { $0.timeControl == status ? () : nil }
    }

    /// Waits until every pipeline the engine let go of has reached NULL and been freed. The player
    /// hands the engine its commands on the next turn of its queue, so that turn comes first.
    func waitForDisposals(timeout: TimeInterval = 10) -> Bool {
        player.queue.sync {}
        return engine.waitForDisposals(timeout: timeout)
    }

    func waitForSeeked(from: Int) throws -> Duration {
        try recorder.wait(for: "seeked", from: from) { $0.seekedPosition }
    }
}

/// Runs the same test body on playbin3 and on legacy playbin (trap 6).
func onBothPipelines(_ body: (EngineConfiguration.PipelineKind) throws -> Void) rethrows {
    for kind in EngineConfiguration.PipelineKind.allCases {
        do {
            try body(kind)
        } catch {
            XCTFail("on \(kind.rawValue): \(error)")
            throw error
        }
    }
}

extension XCTestCase {
    /// Waits until `done`, asked on `queue` (where what it reads is confined), at most `timeout`.
    func wait(on queue: DispatchQueue, _ what: String, timeout: Duration = .seconds(5), until done: () -> Bool) {
        let deadline = ContinuousClock.now + timeout
        while !queue.sync(execute: done) {
            guard ContinuousClock.now < deadline else { return XCTFail("timed out waiting for \(what)") }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }
}

extension Logger {
    /// A logger for tests whose subject is not the log: only critical lines.
    static var quiet: Logger {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }
}
