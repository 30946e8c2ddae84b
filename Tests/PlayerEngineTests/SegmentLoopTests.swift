import Dispatch
import Foundation
import GStreamer
@testable import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

/// `SegmentLoop`, the owner of a looping item's segment seeks, on a real `playbin` playing a short
/// H.264 clip in MP4 into `fakesink sync=true` (what a window shows of a loop is VideoLoopTests'):
/// an item followed by itself plays lap after lap, each
/// told once its segment reaches the sink, with no end of stream until the loop is left; a
/// client's seek keeps the loop.
final class SegmentLoopTests: XCTestCase {
    let queue = DispatchQueue(label: "test.loop")
    /// Confined to `queue`, as the engine's pipelines' loops are.
    var loop = SegmentLoop()
    var laps: [Generation] = []
    var ended = false
    var playbin: Element!
    var busSource: DispatchSourceRead?
    /// 0.6 s of video, made once for the class.
    static let clip = Result { () throws -> (MediaGenerator, URL) in
        let media = try MediaGenerator()
        let url = media.url("lap.mp4")
        try media.gstLaunch("videotestsrc num-buffers=18 ! video/x-raw,width=160,height=120,framerate=30/1 ! "
            + "x264enc speed-preset=ultrafast ! mp4mux ! filesink location=\(url.path)")
        return (media, url)
    }

    override func setUp() {
        super.setUp()
        GStreamerEngine.prepareRegistry()
    }

    override func tearDown() {
        busSource?.cancel()
        playbin?.setState(.null)
        super.tearDown()
    }

    /// The clip playing, its bus read on `queue` as the engine reads it.
    func play() throws {
        playbin = try Element(factory: "playbin", name: "test", isPipeline: true)
        let sink = try Element(binDescription: "fakesink sync=true")
        sink.watchForSegments()  // as the video output does on the sink that draws
        playbin.set("video-sink", sink)
        playbin.set("audio-sink", try Element(factory: "fakesink"))
        playbin.set("uri", try Self.clip.get().1.absoluteString)
        let bus = try XCTUnwrap(playbin.bus)
        let source = DispatchSource.makeReadSource(fileDescriptor: bus.fileDescriptor, queue: queue)
        source.setEventHandler { [unowned self] in
            while let message = bus.pop() {
                switch message.kind {
                case .segmentDone(let seqnum): loop.wrap(playbin, done: seqnum)
                case .segmentReached(let seqnum): if let lap = loop.wrapped(by: seqnum) { laps.append(lap) }
                case .endOfStream: ended = true
                default: break
                }
            }
        }
        source.resume()
        busSource = source
        playbin.setState(.playing)
        XCTAssertEqual(playbin.waitForState(timeout: .seconds(5)), .success)
    }

    func testAnItemFollowedByItselfPlaysLapAfterLapWithNoEnd() throws {
        try play()
        queue.sync { XCTAssertTrue(loop.follow(playbin, lap: Generation(2))) }
        wait(on: queue, "the first lap") { laps == [Generation(2)] }
        // the player's next command after a lap: the same item again
        queue.sync { XCTAssertTrue(loop.follow(playbin, lap: Generation(3))) }
        wait(on: queue, "the second lap") { laps == [Generation(2), Generation(3)] }
        queue.sync { XCTAssertFalse(ended, "a loop has no end of stream") }
        XCTAssertLessThan(try XCTUnwrap(playbin.queryPosition()), 600_000_000, "the position reads within the lap")
    }

    func testALeftLoopEndsWithEndOfStream() throws {
        try play()
        queue.sync { XCTAssertTrue(loop.follow(playbin, lap: Generation(2))) }
        wait(on: queue, "the first lap") { laps == [Generation(2)] }
        queue.sync { XCTAssertFalse(loop.follow(playbin, lap: nil), "another item next: no loop") }
        wait(on: queue, "the end of stream") { ended }
        queue.sync { XCTAssertEqual(laps, [Generation(2)], "no lap after the loop was left") }
    }

    func testAClientsSeekKeepsTheLoop() throws {
        try play()
        queue.sync {
            XCTAssertEqual(loop.clientSeeks(rate: 1), [], "no loop: a plain flushing seek")
            XCTAssertTrue(loop.follow(playbin, lap: Generation(2)))
            let flags = loop.clientSeeks(rate: 1)
            XCTAssertEqual(flags, [.segment], "looping: the seek keeps segment mode")
            loop.clientSeekSent(playbin.numberedSeek(rate: 1, flags: flags.union([.flush, .accurate]), start: 300_000_000))
        }
        wait(on: queue, "the lap after the seek") { laps == [Generation(2)] }
        queue.sync { XCTAssertFalse(ended) }
    }
}
