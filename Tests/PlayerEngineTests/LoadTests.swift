@testable import PlayerEngine
import PlayerModel
import XCTest

/// `Load`, the state of one load: what a fresh one holds, what a gapless switch keeps (the
/// pipeline's) and drops (the item's), what a video loop's lap keeps, and the HTTP answers it
/// remembers. A value: no GStreamer here.
final class LoadTests: XCTestCase {
    let first = try! MediaURI("http://127.0.0.1:1/first.mp3")
    let second = try! MediaURI("http://127.0.0.1:1/second.mp3")

    /// A load that has been through everything: prerolled, live, a redraw under way, responses heard.
    func busyLoad() -> Load {
        var load = Load(first, Generation(1))
        load.missingPlugin = "MPEG-1 Layer 3 (MP3) decoder"
        load.reportedLive = true
        load.prerolled = true
        load.playsAfterPreroll = true
        load.heard(response: first.string, status: 200, contentType: "audio/mpeg", contentLength: 1000)
        load.heard(response: "http://127.0.0.1:1/cover.jpg", status: 404, contentType: nil, contentLength: nil)
        load.rate = 1.5
        load.redrawing = true
        load.redrawAgain = true
        load.toldPosition = 42
        return load
    }

    func testAFreshLoadHoldsOnlyItsItem() {
        let load = Load(first, Generation(3))
        XCTAssertEqual(load.generation, Generation(3))
        XCTAssertEqual(load.uri, first)
        XCTAssertNil(load.missingPlugin)
        XCTAssertFalse(load.reportedLive)
        XCTAssertFalse(load.prerolled)
        XCTAssertFalse(load.playsAfterPreroll)
        XCTAssertNil(load.itemResponse)
        XCTAssertEqual(load.failedResponses, [])
        XCTAssertFalse(load.announcesAtPreroll)
        XCTAssertEqual(load.rate, 1)
        XCTAssertFalse(load.redrawing)
        XCTAssertFalse(load.redrawAgain)
        XCTAssertNil(load.toldPosition)
        XCTAssertTrue(Load(first, Generation(3), announcesAtPreroll: true).announcesAtPreroll)
    }

    func testAGaplessSwitchDropsTheItemsAndKeepsThePipelines() {
        let next = busyLoad().switched(to: second, Generation(2))
        // the next item's
        XCTAssertEqual(next.generation, Generation(2))
        XCTAssertEqual(next.uri, second)
        // the previous item's, dropped
        XCTAssertNil(next.missingPlugin)
        XCTAssertFalse(next.reportedLive)
        XCTAssertNil(next.itemResponse)
        XCTAssertEqual(next.failedResponses, [])
        XCTAssertFalse(next.announcesAtPreroll)
        // the pipeline's, kept
        XCTAssertTrue(next.prerolled)
        XCTAssertTrue(next.playsAfterPreroll)
        XCTAssertEqual(next.rate, 1.5)
        XCTAssertTrue(next.redrawing)
        XCTAssertTrue(next.redrawAgain)
        XCTAssertEqual(next.toldPosition, 42)
    }

    func testALoopsLapKeepsAllButTheGeneration() {
        var load = busyLoad()
        load.announcesAtPreroll = true
        let lap = load.lapped(as: Generation(7))
        XCTAssertEqual(lap.generation, Generation(7))
        XCTAssertEqual(lap.uri, first)
        XCTAssertEqual(lap.missingPlugin, load.missingPlugin)
        XCTAssertTrue(lap.reportedLive)
        XCTAssertEqual(lap.itemResponse?.contentType, "audio/mpeg")
        XCTAssertEqual(lap.failedResponses, load.failedResponses)
        XCTAssertTrue(lap.prerolled)
        XCTAssertEqual(lap.rate, 1.5)
        XCTAssertFalse(lap.announcesAtPreroll)  // the crossfade's announcement was for the first lap
    }

    func testTheItemsOwnAnswerIsKeptOnlyWhenItSucceeded() {
        var load = Load(first, Generation(1))
        load.heard(response: first.string, status: 302, contentType: "text/html", contentLength: 10)
        XCTAssertNil(load.itemResponse)
        load.heard(response: "http://127.0.0.1:1/other", status: 200, contentType: "text/html", contentLength: 10)
        XCTAssertNil(load.itemResponse)
        load.heard(response: first.string, status: 200, contentType: "audio/mpeg", contentLength: nil)
        XCTAssertEqual(load.itemResponse?.contentType, "audio/mpeg")
        XCTAssertNil(load.itemResponse?.contentLength)
    }

    func testAFailureIsForgottenWhenItsURIIsAnsweredAgainAndTheOldestGoPastTheLimit() {
        var load = Load(first, Generation(1))
        load.heard(response: "http://127.0.0.1:1/a", status: 404, contentType: nil, contentLength: nil)
        load.heard(response: "http://127.0.0.1:1/b", status: 500, contentType: nil, contentLength: nil)
        load.heard(response: "http://127.0.0.1:1/a", status: 503, contentType: nil, contentLength: nil)
        XCTAssertEqual(load.failedResponses.map(\.uri), ["http://127.0.0.1:1/b", "http://127.0.0.1:1/a"])
        XCTAssertEqual(load.failedResponses.last?.status, 503)
        load.heard(response: "http://127.0.0.1:1/b", status: 206, contentType: nil, contentLength: nil)
        XCTAssertEqual(load.failedResponses.map(\.uri), ["http://127.0.0.1:1/a"])
        for index in 0..<(Load.maximumFailedResponses + 2) {
            load.heard(response: "http://127.0.0.1:1/\(index)", status: 404, contentType: nil, contentLength: nil)
        }
        XCTAssertEqual(load.failedResponses.count, Load.maximumFailedResponses)
        XCTAssertEqual(load.failedResponses.first?.uri, "http://127.0.0.1:1/2")
        XCTAssertEqual(load.failedResponses.last?.uri, "http://127.0.0.1:1/\(Load.maximumFailedResponses + 1)")
    }
}
