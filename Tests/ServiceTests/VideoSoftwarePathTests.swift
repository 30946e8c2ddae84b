import Foundation
import TestSupport
import XCTest

/// Issue 30's video target: where OpenGL is a software renderer (Xvfb's Mesa llvmpipe here), the
/// video goes through the CPU (videoconvertscale into ximagesink), scaled to its window, as mpv
/// does; `TONEARM_VIDEO_SINK=glimagesink` keeps OpenGL. Read from a screenshot of a clip whose
/// edges show (a blue centre in a green border, 320x240) and from the X window tree: glimagesink
/// draws into a window of GstGL's own inside the one it is given, ximagesink into that one itself.
final class VideoSoftwarePathTests: VideoTestCase {
    func resize(_ x: XDisplay, _ window: String, to width: Int, _ height: Int) throws {
        _ = try x.run("xdotool", ["windowsize", window, String(width), String(height)])
        try x.waitForX("the window to be \(width)x\(height)") { try x.geometry(of: window).size == (width, height) }
    }

    /// The windows inside the sink's window (the one child of Tonearm's window: tonearm-video's
    /// protocol, "window <id>"): GstGL's own window with glimagesink, none with ximagesink.
    func windowsInsideTheSinks(_ x: XDisplay, _ window: String) throws -> [String] {
        let sinks = try x.children(of: window)
        guard sinks.count == 1 else { throw TestError("Tonearm's window \(window) has \(sinks.count) child windows, not the sink's one") }
        return try x.children(of: sinks[0])
    }

    func testOnLlvmpipeTheVideoIsScaledOnTheCPUToAWindowLargerThanItInEachGravity() throws {
        let x = try startDisplay()
        let daemon = try harness.start(environment: ["DISPLAY": x.name])
        let window = try openFramed(on: x)
        XCTAssertTrue(daemon.output.contains("OpenGL on \(x.name): llvmpipe"), daemon.output)
        XCTAssertTrue(daemon.output.contains("video sink on \(x.name): videoconvertscale ! ximagesink"), daemon.output)
        XCTAssertEqual(try windowsInsideTheSinks(x, window), [], "ximagesink draws into the window it is given")

        // three times as wide and 1.5 times as tall as the video: not scaled, 320x240 would sit in
        // the middle (320..640, 60..300) with black all around
        try resize(x, window, to: 960, 360)
        // fit: 480x360 in the middle (240..720), the border 30 pixels wide, black bars at the sides
        try waitForColours(x, window, "fit: the picture as tall as the window, bars at the sides", [
            (120, 180, .black), (840, 180, .black), (250, 180, .green), (710, 180, .green), (480, 10, .green), (480, 350, .green),
            (480, 180, .blue), (300, 60, .blue),
        ])
        // stretch: the whole window, the border 60 pixels at the sides and 30 above and below
        try setGravity("stretch")
        try waitForColours(x, window, "stretch: the border at every edge of the window", [
            (10, 180, .green), (950, 180, .green), (480, 10, .green), (480, 350, .green), (100, 180, .blue), (860, 180, .blue),
            (480, 180, .blue),
        ])
        // fill: 960x720 centred, the top and bottom 180 rows cut away: the border at the sides only
        try setGravity("fill")
        try waitForColours(x, window, "fill: no bars, the border only at the sides", [
            (10, 180, .green), (950, 180, .green), (480, 5, .blue), (480, 355, .blue), (100, 10, .blue), (860, 350, .blue),
        ])
        // and smaller than the video: fit in 160x240, 160x120 in the middle
        try setGravity("fit")
        try resize(x, window, to: 160, 240)
        try waitForColours(x, window, "fit, smaller than the video: the whole picture, halved", [
            (80, 30, .black), (80, 210, .black), (4, 120, .green), (156, 120, .green), (80, 64, .green), (80, 176, .green),
            (80, 120, .blue),
        ])
    }

    func testAPausedVideoResizedIsDrawnAgainAtTheNewSize() throws {
        let x = try startDisplay()
        try harness.start(environment: ["DISPLAY": x.name])
        // no bar: the pointer over the growing window would show it, and its redraw would scale too
        try harness.set(H.extensionInterface, "ControlsVisible", "b", "false")
        let window = try openFramed(on: x)
        try harness.call(H.player, "Pause")
        try harness.waitForStatus("Paused")
        let paused = try harness.get(H.player, "Position").int64
        // 2.5 times as large: the old 320x240 image drawn again would sit in the middle, black around it
        try resize(x, window, to: 800, 600)
        try waitForColours(x, window, "paused, 800x600: the picture scaled to the whole window", [
            (10, 300, .green), (790, 300, .green), (400, 10, .green), (400, 590, .green), (100, 300, .blue), (400, 100, .blue),
        ])
        try resize(x, window, to: 200, 150)
        try waitForColours(x, window, "paused, 200x150: the whole picture, smaller", [
            (3, 75, .green), (196, 75, .green), (100, 3, .green), (100, 146, .green), (100, 75, .blue), (30, 75, .blue),
        ])
        // the redraw is the engine's own: still paused where it was
        XCTAssertEqual(try harness.get(H.player, "PlaybackStatus").string, "Paused")
        XCTAssertEqual(try harness.get(H.player, "Position").int64, paused)
    }

    func testGlimagesinkNamedKeepsOpenGLOnLlvmpipe() throws {
        let x = try startDisplay()
        let daemon = try harness.start(environment: ["DISPLAY": x.name, "TONEARM_VIDEO_SINK": "glimagesink"])
        let window = try openFramed(on: x)
        XCTAssertTrue(daemon.output.contains("OpenGL on \(x.name): llvmpipe"), daemon.output)
        XCTAssertTrue(daemon.output.contains("video sink on \(x.name): glimagesink"), daemon.output)
        try x.waitForX("GstGL's window inside the sink's") { try windowsInsideTheSinks(x, window).count == 1 }
        try resize(x, window, to: 960, 360)
        try waitForColours(x, window, "fit through glimagesink", [(120, 180, .black), (250, 180, .green), (480, 180, .blue)])
    }
}
