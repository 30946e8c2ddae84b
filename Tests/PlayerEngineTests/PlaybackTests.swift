import Foundation
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
