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
            XCTAssertEqual(try harness.recorder.wait(for: "end") { $0.playedToEnd }, ids[0])
        }
    }

    func testPlaysAnHLSStream() throws {
        let media = try MediaGenerator()
        let hls = media.url("hls")
        try FileManager.default.createDirectory(at: hls, withIntermediateDirectories: true)
        try media.gstLaunch("audiotestsrc num-buffers=300 samplesperbuffer=441 ! audio/x-raw,rate=44100,channels=2"
                            + " ! avenc_aac ! aacparse ! hlssink2 playlist-location=\(hls.path)/index.m3u8"
                            + " location=\(hls.path)/segment%05d.ts target-duration=1 playlist-length=0 max-files=0")
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
