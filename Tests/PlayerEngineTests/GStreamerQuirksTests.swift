import EngineLink
@testable import PlayerEngine
import PlayerModel
import XCTest

/// Which playbin an item plays in (`GStreamerQuirks.pipeline(for:default:configured:)`): every
/// network item, and HLS, in legacy playbin from GStreamer 1.24 on, unless a pipeline was
/// configured; files in the default. No GStreamer here: the version is given.
final class GStreamerQuirksTests: XCTestCase {
    let hls = try! MediaURI("http://127.0.0.1:1/live/Index.M3U8?token=1")
    let httpFile = try! MediaURI("http://127.0.0.1:1/song.mp3")
    let httpsFile = try! MediaURI("https://127.0.0.1:1/song.mp3")
    let unnamedPlaylist = try! MediaURI("http://127.0.0.1:1/live?format=hls")
    let localHLS = try! MediaURI("/music/hls/index.m3u8")
    let localFile = try! MediaURI("/music/song.mp3")
    let v122 = (major: 1, minor: 22, micro: 0), v124 = (major: 1, minor: 24, micro: 0), v126 = (major: 1, minor: 26, micro: 2)

    func testANetworkItemPlaysInLegacyPlaybinFrom124OnUnlessConfigured() {
        for uri in [hls, httpFile, httpsFile, unnamedPlaylist, localHLS] {
            XCTAssertEqual(GStreamerQuirks.pipeline(for: uri, default: .playbin3, configured: false, version: v126), .playbin, "\(uri)")
            XCTAssertEqual(GStreamerQuirks.pipeline(for: uri, default: .playbin3, configured: false, version: v124), .playbin, "\(uri)")
            // asked for: kept
            XCTAssertEqual(GStreamerQuirks.pipeline(for: uri, default: .playbin3, configured: true, version: v126), .playbin3, "\(uri)")
            // 1.22's default is legacy playbin already; asked for playbin3 there, kept
            XCTAssertEqual(GStreamerQuirks.pipeline(for: uri, default: .playbin, configured: false, version: v122), .playbin, "\(uri)")
            XCTAssertEqual(GStreamerQuirks.pipeline(for: uri, default: .playbin3, configured: true, version: v122), .playbin3, "\(uri)")
        }
    }

    func testAFileStaysInTheDefaultPlaybin() {
        XCTAssertEqual(GStreamerQuirks.pipeline(for: localFile, default: .playbin3, configured: false, version: v126), .playbin3)
        XCTAssertEqual(GStreamerQuirks.pipeline(for: localFile, default: .playbin, configured: false, version: v122), .playbin)
        XCTAssertEqual(GStreamerQuirks.pipeline(for: localFile, default: .playbin, configured: true, version: v126), .playbin)
    }
}
