import Foundation
import PlayerEngine
import PlayerModel
import TestSupport
import XCTest

final class NetworkTests: XCTestCase {
    func testPlaysAFileOverHTTP() throws {
        let media = try MediaGenerator()
        _ = try media.tone("remote", format: .mp3, seconds: 1, tags: .init(title: "Over HTTP"))
        let server = try HTTPServer(directory: media.directory)
        try onBothPipelines { kind in
            let harness = try Harness(pipeline: kind)
            let ids = try harness.player.enqueue([MediaURI(server.url("remote.mp3"))])
            harness.player.play()
            try harness.waitForTimeControl(.playing)
            let metadata = try harness.recorder.wait(for: "title") { $0.metadata?.1.title != nil ? $0.metadata?.1 : nil }
            XCTAssertEqual(metadata.title, "Over HTTP")
            // a file over HTTP has no length at preroll (mpegaudioparse needs frames), and is not live
            XCTAssertEqual(harness.player.currentItem?.isLive, false)
            XCTAssertEqual(try harness.recorder.wait(for: "end") { $0.playedToEnd }, ids[0])
        }
    }

    func testPlaysAnHLSStream() throws {
        let media = try MediaGenerator()
        let playlist = try media.hlsStream("hls", seconds: 3, segments: 3)
        XCTAssertEqual(try String(contentsOf: playlist, encoding: .utf8).components(separatedBy: "#EXTINF").count, 4)
        let server = try HTTPServer(directory: media.directory)
        try onBothPipelines { kind in
            let harness = try Harness(pipeline: kind)
            let ids = try harness.player.enqueue([MediaURI(server.url("hls/index.m3u8"))])
            harness.player.play()
            _ = try harness.waitForStatus(ids[0], "readyToPlay")
            try harness.waitForTimeControl(.playing)
            XCTAssertEqual(try harness.recorder.wait(for: "end") { $0.playedToEnd }, ids[0])
        }
    }
}
