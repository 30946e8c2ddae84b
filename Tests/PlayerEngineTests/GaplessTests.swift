import Foundation
import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

final class GaplessTests: XCTestCase {
    func testTwoHalvesOfOneTonePlayWithNoGapAndNoOverlap() throws {
        let media = try MediaGenerator()
        // cut at a sample that is not a buffer boundary of either file; each part is longer than
        // playbin's queues, so the first prerolls before its source drains
        let (first, second, whole) = try media.splitTone(seconds: 8, cutAtSample: 154_357)
        try onBothPipelines { kind in
            let capture = media.url("gapless-\(kind.rawValue).wav")
            let harness = try Harness(pipeline: kind,
                                      sink: "audioconvert dithering=none ! audio/x-raw,format=S16LE,channels=2 ! wavenc ! filesink location=\(capture.path)")
            let ids = try harness.enqueue(first, second)
            harness.player.play()
            // the current item changes at the real boundary, then the second plays to the end
            let switched = try harness.recorder.wait(for: "switch to the second") { event -> Item? in
                guard case .currentItemChanged(let item?) = event, item.id == ids[1] else { return nil }
                return item
            }
            XCTAssertEqual(switched.status, .readyToPlay)
            let ended = harness.recorder.events.compactMap { $0.playedToEnd }
            XCTAssertEqual(ended.first, ids[0], "the first item played to end at the boundary")
            try harness.recorder.wait(for: "second ends") { $0.playedToEnd == ids[1] ? () : nil }
            let captured = try WAV.samples(of: capture)
            XCTAssertEqual(captured.count, whole.count, "no gap, no overlap: as many samples as the whole tone on \(kind)")
            let mismatch = zip(captured, whole).enumerated().first { $0.element.0 != $0.element.1 }
            XCTAssertNil(mismatch, "sample \(mismatch?.offset ?? -1) differs on \(kind)")
        }
    }
}
