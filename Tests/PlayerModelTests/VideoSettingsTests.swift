import PlayerModel
import XCTest

/// `VideoGravity.frame`: where the sink's window goes in a window of another aspect.
final class VideoSettingsTests: XCTestCase {
    let video = VideoSize(width: 320, height: 240)

    func testFitAndStretchTakeTheWholeWindowAndDifferInAspectOnly() {
        let area = VideoSize(width: 640, height: 240)
        XCTAssertEqual(VideoGravity.fit.frame(video: video, area: area), VideoFrame(x: 0, y: 0, width: 640, height: 240, keepsAspect: true))
        XCTAssertEqual(VideoGravity.stretch.frame(video: video, area: area),
                       VideoFrame(x: 0, y: 0, width: 640, height: 240, keepsAspect: false))
    }

    func testFillCoversTheWindowAtTheVideosAspectCentred() {
        // a wide window: as wide as it, taller, centred vertically
        XCTAssertEqual(VideoGravity.fill.frame(video: video, area: VideoSize(width: 640, height: 240)),
                       VideoFrame(x: 0, y: -120, width: 640, height: 480, keepsAspect: true))
        // a tall window: as tall as it, wider, centred horizontally
        XCTAssertEqual(VideoGravity.fill.frame(video: video, area: VideoSize(width: 320, height: 480)),
                       VideoFrame(x: -160, y: 0, width: 640, height: 480, keepsAspect: true))
        // the same aspect: the window itself
        XCTAssertEqual(VideoGravity.fill.frame(video: video, area: VideoSize(width: 640, height: 480)),
                       VideoFrame(x: 0, y: 0, width: 640, height: 480, keepsAspect: true))
    }

    func testNoVideoSizeOrNoAreaIsTheWindow() {
        XCTAssertEqual(VideoGravity.fill.frame(video: .zero, area: VideoSize(width: 640, height: 240)),
                       VideoFrame(x: 0, y: 0, width: 640, height: 240, keepsAspect: true))
        XCTAssertEqual(VideoGravity.fill.frame(video: video, area: .zero), VideoFrame(x: 0, y: 0, width: 0, height: 0, keepsAspect: true))
    }

    func testEveryGravityHasTheNameClientsWrite() {
        XCTAssertEqual(VideoGravity.allCases.map(\.rawValue), ["fit", "fill", "stretch"])
        XCTAssertNil(VideoGravity(rawValue: "Fit"))
    }
}
