import EngineLink
import PlayerEngine
import PlayerModel
import XCTest

/// Which sink shows video (`VideoSinkChoice`) and the sizes the software path scales to
/// (`ScaledVideoSink`): the rules, without a display (VideoSoftwarePathTests shows them on one).
final class VideoSinkChoiceTests: XCTestCase {
    func testSoftwareRenderersAreMesasCPUOnesAndAnUnreadOne() {
        for renderer in ["llvmpipe (LLVM 15.0.6, 256 bits)", "softpipe", "Software Rasterizer", "Mesa DRI swrast", nil, ""] {
            XCTAssertTrue(VideoSinkChoice.isSoftwareRenderer(renderer), "\(renderer ?? "nil")")
        }
        for renderer in ["Mesa Intel(R) UHD Graphics 620 (KBL GT2)", "AMD Radeon RX 6600 (navi23, LLVM 15.0.6, DRM 3.49, 6.1.0-13-amd64)",
                         "NVIDIA GeForce GTX 1060 6GB/PCIe/SSE2"] {
            XCTAssertFalse(VideoSinkChoice.isSoftwareRenderer(renderer), renderer)
        }
    }

    func testAutoTakesOpenGLOnlyOnAGPUAndGlimagesinkNamedKeepsItOnLlvmpipe() {
        let llvmpipe = "llvmpipe (LLVM 15.0.6, 256 bits)", gpu = "Mesa Intel(R) UHD Graphics 620 (KBL GT2)"
        XCTAssertEqual(VideoSinkChoice.choose("auto", opens: true, renderer: gpu), .openGL)
        XCTAssertEqual(VideoSinkChoice.choose("auto", opens: true, renderer: llvmpipe), .scaled)
        XCTAssertEqual(VideoSinkChoice.choose("auto", opens: false, renderer: nil), .scaled)
        XCTAssertEqual(VideoSinkChoice.choose("glimagesink", opens: true, renderer: llvmpipe), .openGL)
        XCTAssertEqual(VideoSinkChoice.choose("glimagesink", opens: false, renderer: nil), .scaled)
        XCTAssertEqual(VideoSinkChoice.choose("software", opens: true, renderer: gpu), .scaled)
        XCTAssertEqual(VideoSinkChoice.choose("ximagesink", opens: true, renderer: gpu), .factory("ximagesink"))
        XCTAssertTrue(VideoSinkChoice.probesOpenGL("auto"))
        XCTAssertTrue(VideoSinkChoice.probesOpenGL("glimagesink"))
        XCTAssertFalse(VideoSinkChoice.probesOpenGL("software"), "the software path named makes no GL context")
        XCTAssertFalse(VideoSinkChoice.probesOpenGL("xvimagesink"))
        XCTAssertEqual(EngineConfiguration.fromEnvironment([:]).videoSink, "auto")
        XCTAssertEqual(EngineConfiguration.fromEnvironment(["TONEARM_VIDEO_SINK": "glimagesink"]).videoSink, "glimagesink")
    }

    func testFitScalesThePictureInsideTheFrameStretchAndFillTakeTheFrame() {
        let video = VideoSize(width: 320, height: 240)
        let wide = VideoSize(width: 960, height: 360)
        func size(_ gravity: VideoGravity, _ area: VideoSize) -> VideoSize? {
            ScaledVideoSink.pictureSize(in: gravity.frame(video: video, area: area), video: video)
        }
        XCTAssertEqual(size(.fit, wide), VideoSize(width: 480, height: 360))
        XCTAssertEqual(size(.stretch, wide), VideoSize(width: 960, height: 360))
        XCTAssertEqual(size(.fill, wide), VideoSize(width: 960, height: 720))
        XCTAssertEqual(size(.fit, VideoSize(width: 320, height: 480)), VideoSize(width: 320, height: 240))
        XCTAssertNil(ScaledVideoSink.pictureSize(in: nil, video: video), "no frame yet: the video's own size")
        XCTAssertEqual(ScaledVideoSink.caps(for: nil), "video/x-raw,pixel-aspect-ratio=1/1")
        XCTAssertEqual(ScaledVideoSink.caps(for: VideoSize(width: 480, height: 360)), "video/x-raw,width=480,height=360,pixel-aspect-ratio=1/1")
    }

    func testSizesFromATinyOrHostileWindowAreClampedAndNeverTrap() {
        let video = VideoSize(width: 320, height: 240)
        let frames = [
            VideoFrame(x: 0, y: 0, width: 0, height: 0, keepsAspect: true),
            VideoFrame(x: 0, y: 0, width: 1, height: 1, keepsAspect: false),
            VideoFrame(x: 0, y: 0, width: -5, height: 7, keepsAspect: true),
            VideoFrame(x: 0, y: 0, width: Int.max, height: Int.max, keepsAspect: true),
            VideoFrame(x: Int.min, y: Int.min, width: Int.max, height: 2, keepsAspect: false),
        ]
        for frame in frames {
            for video in [video, .zero, VideoSize(width: Int.max, height: 1)] {
                let size = ScaledVideoSink.pictureSize(in: frame, video: video)
                XCTAssertTrue(size.map { ScaledVideoSink.sizes.contains($0.width) && ScaledVideoSink.sizes.contains($0.height) } ?? false,
                              "\(frame) for \(video): \(String(describing: size))")
            }
        }
        // fill of a very tall video in a wide window: a frame past any screen, clamped
        let tall = VideoGravity.fill.frame(video: VideoSize(width: 10, height: 1000), area: VideoSize(width: 2560, height: 1440))
        XCTAssertEqual(ScaledVideoSink.pictureSize(in: tall, video: VideoSize(width: 10, height: 1000))?.height, 8192)
    }
}
