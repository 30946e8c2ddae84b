import Foundation
import TestSupport
import XCTest

/// Video, slice 2 (issue 28): the window's geometry. `VideoGravity` read from a screenshot of a
/// clip whose edges show (a blue centre in a green border), in a window of another aspect;
/// `PictureInPicture` read from the window manager (size, place, _NET_WM_STATE, frame); both kept
/// across a restart, and settable with no window.
final class VideoGeometryTests: VideoTestCase {
    func testGravityFitsFillsOrStretchesTheVideoInAWindowOfAnotherAspect() throws {
        let x = try startDisplay()
        try harness.start(environment: ["DISPLAY": x.name])
        XCTAssertEqual(try harness.get(H.extensionInterface, "VideoGravity").string, "fit")
        let window = try openFramed(on: x)
        // 640x240 is twice as wide as 4:3 needs
        _ = try x.run("xdotool", ["windowsize", window, "640", "240"])
        try x.waitForX("the window to be 640x240") { try x.geometry(of: window).size == (640, 240) }

        // fit: the whole picture, 320x240 in the middle, black bars left and right
        try waitForColours(x, window, "fit: bars at the sides, the border and the centre in the middle", [
            (60, 120, .black), (580, 120, .black), (170, 120, .green), (470, 120, .green), (320, 10, .green), (320, 230, .green),
            (320, 120, .blue),
        ])

        // fill: 640x480 centred, the top and bottom 120 rows cut away with the border there
        try setGravity("fill")
        try waitForColours(x, window, "fill: no bars, the border only at the sides", [
            (10, 120, .green), (630, 120, .green), (320, 8, .blue), (320, 232, .blue), (60, 8, .blue), (580, 232, .blue),
            (320, 120, .blue),
        ])

        // stretch: 640x240, the border at all four edges
        try setGravity("stretch")
        try waitForColours(x, window, "stretch: the border at every edge", [
            (15, 120, .green), (625, 120, .green), (320, 8, .green), (320, 232, .green), (320, 120, .blue), (100, 120, .blue),
        ])

        // and back
        try setGravity("fit")
        try waitForColours(x, window, "fit again", [(60, 120, .black), (580, 120, .black), (320, 120, .blue)])
    }

    func testGravityApplyingWhilePausedAndAfterAResize() throws {
        let x = try startDisplay()
        try harness.start(environment: ["DISPLAY": x.name])
        let window = try openFramed(on: x)
        try harness.call(H.player, "Pause")
        try harness.waitForStatus("Paused")
        // a paused video draws no new frame: the sink is asked to draw its last one again
        _ = try x.run("xdotool", ["windowsize", window, "320", "480"])
        try x.waitForX("the window to be 320x480") { try x.geometry(of: window).size == (320, 480) }
        try waitForColours(x, window, "fit, paused, in a tall window: bars above and below", [
            (160, 40, .black), (160, 440, .black), (160, 250, .blue),
        ])
        try setGravity("fill")
        try waitForColours(x, window, "fill, paused: the border cut away at the sides", [
            (4, 240, .blue), (316, 240, .blue), (160, 10, .green), (160, 470, .green),
        ])
    }

    func testABadGravityIsInvalidArgsAndChangesNothing() throws {
        try harness.start()
        let error = try XCTUnwrap(try harness.errorReply(H.properties, "Set", [
            "string:\(H.extensionInterface)", "string:VideoGravity", "variant:string:zoom",
        ]), "Set VideoGravity zoom was answered")
        XCTAssertEqual(error.name, "org.freedesktop.DBus.Error.InvalidArgs")
        XCTAssertTrue(error.message.contains("fit, fill or stretch"), error.message)
        XCTAssertEqual(try harness.get(H.extensionInterface, "VideoGravity").string, "fit")
    }

    func testPictureInPictureMakesASmallFramelessWindowOnTopInTheCornerAndBack() throws {
        let x = try startDisplay()
        try harness.start(environment: ["DISPLAY": x.name])
        let window = try openFramed(on: x)
        let before = try x.geometry(of: window)
        XCTAssertFalse(try x.property("_NET_WM_STATE", of: window).contains("_NET_WM_STATE_ABOVE"))

        var mark = harness.mark()
        try harness.set(H.extensionInterface, "PictureInPicture", "b", "true")
        try harness.waitForChange(H.extensionInterface, "PictureInPicture true", from: mark) { $0["PictureInPicture"]?.bool == true }
        try assertPictureInPicture(x, window)

        mark = harness.mark()
        try harness.set(H.extensionInterface, "PictureInPicture", "b", "false")
        try harness.waitForChange(H.extensionInterface, "PictureInPicture false", from: mark) { $0["PictureInPicture"]?.bool == false }
        try x.waitForX("the window back where and as large as it was (\(before))") {
            let now = try x.geometry(of: window)
            return now.x == before.x && now.y == before.y && now.size == before.size
        }
        XCTAssertFalse(try x.property("_NET_WM_STATE", of: window).contains("_NET_WM_STATE_ABOVE"))
        try x.waitForX("the window framed again") { try x.property("_NET_FRAME_EXTENTS", of: window) != "0, 0, 0, 0" }

        // from fullscreen: it leaves fullscreen first
        mark = harness.mark()
        try harness.set(H.root, "Fullscreen", "b", "true")
        try harness.waitForChange(H.root, "Fullscreen true", from: mark) { $0["Fullscreen"]?.bool == true }
        mark = harness.mark()
        try harness.set(H.extensionInterface, "PictureInPicture", "b", "true")
        try harness.waitForChange(H.root, "Fullscreen false", from: mark) { $0["Fullscreen"]?.bool == false }
        try assertPictureInPicture(x, window)
    }

    /// The window is a quarter of Xvfb's 1024 pixels wide at the video's 4:3, in the bottom-right
    /// corner 16 pixels in, always on top, with no frame; the video shows in it.
    func assertPictureInPicture(_ x: XDisplay, _ window: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try x.waitForX("a 256x192 window at 752,560") {
            let now = try x.geometry(of: window)
            return now.size == (256, 192) && now.x == 1024 - 256 - 16 && now.y == 768 - 192 - 16
        }
        try x.waitForX("_NET_WM_STATE_ABOVE") { try x.property("_NET_WM_STATE", of: window).contains("_NET_WM_STATE_ABOVE") }
        try x.waitForX("no frame") { try x.property("_NET_FRAME_EXTENTS", of: window) == "0, 0, 0, 0" }
        try x.waitForX("the video in the small window") { try x.colour(atMiddleOf: window) == .blue }
    }

    func testPictureInPictureDragsFromAnywhereInTheWindow() throws {
        let x = try startDisplay()
        try harness.start(environment: ["DISPLAY": x.name])
        let window = try openFramed(on: x)
        try harness.set(H.extensionInterface, "PictureInPicture", "b", "true")
        try assertPictureInPicture(x, window)
        // press in the video, move the pointer 200 pixels up and left, release
        _ = try x.run("xdotool", ["mousemove", "880", "656", "mousedown", "1"])
        _ = try x.run("xdotool", ["mousemove", "780", "556"])
        _ = try x.run("xdotool", ["mousemove", "680", "456", "mouseup", "1"])
        try x.waitForX("the window dragged 200 pixels up and left") {
            let now = try x.geometry(of: window)
            return now.x == 552 && now.y == 360
        }
    }

    func testSettingsMadeWithNoWindowApplyWhenOneOpensAndSurviveARestart() throws {
        let x = try startDisplay()
        let first = try harness.start(environment: ["DISPLAY": x.name])
        var mark = harness.mark()
        try harness.set(H.extensionInterface, "PictureInPicture", "b", "true")
        try harness.set(H.extensionInterface, "VideoGravity", "s", "stretch")
        try harness.waitForChange(H.extensionInterface, "PictureInPicture true", from: mark) { $0["PictureInPicture"]?.bool == true }
        try harness.waitForChange(H.extensionInterface, "VideoGravity stretch", from: mark) { $0["VideoGravity"]?.string == "stretch" }
        XCTAssertEqual(try harness.get(H.root, "CanRaise").bool, false, "no window yet")

        // stopped and started again: the settings come back before any window
        harness.exitExpected.insert(first.pid)
        kill(first.pid, SIGTERM)
        XCTAssertEqual(first.waitForExit(timeout: 10), 0, "tonearmd's exit status at SIGTERM")
        try harness.start(environment: ["DISPLAY": x.name])
        let restored = try harness.getAll(H.extensionInterface)
        XCTAssertEqual(restored["PictureInPicture"]?.bool, true)
        XCTAssertEqual(restored["VideoGravity"]?.string, "stretch")

        mark = harness.mark()
        try harness.call(H.player, "OpenUri", "s", [H.uri(try framed())])
        try harness.waitForChange(H.extensionInterface, "VideoSize 320x240", from: mark) { Self.numbers($0["VideoSize"]) == [320, 240] }
        let window = try x.waitForWindow(classed: "tonearm")
        try assertPictureInPicture(x, window)
        // stretch in the 4:3 window the video already has: the border at all four edges
        try waitForColours(x, window, "the border at every edge", [(4, 96, .green), (251, 96, .green), (128, 3, .green), (128, 188, .green)])
    }

    /// Where OpenGL does not open (here GstGL is told to make no window: GST_GL_WINDOW=none), the
    /// video shows through the software path (videoconvertscale into ximagesink), even when
    /// glimagesink is named.
    func testWhereOpenGLDoesNotOpenXimagesinkShowsTheVideo() throws {
        let x = try startDisplay()
        let daemon = try harness.start(environment: ["DISPLAY": x.name, "GST_GL_WINDOW": "none", "TONEARM_VIDEO_SINK": "glimagesink"])
        let window = try openFramed(on: x)
        try waitForColours(x, window, "the framed clip through ximagesink", [(5, 120, .green), (160, 5, .green), (160, 120, .blue)])
        XCTAssertTrue(daemon.output.contains("OpenGL does not open on \(x.name)"), daemon.output)
        XCTAssertTrue(daemon.output.contains("video sink on \(x.name): videoconvertscale ! ximagesink"), daemon.output)
    }

    /// The CLI with a window: `fullscreen` toggles, `raise` focuses, `status` shows the video's size.
    func testTheCommandLineDrivesTheWindow() throws {
        let x = try startDisplay()
        try harness.start(environment: ["DISPLAY": x.name])
        let window = try openFramed(on: x)
        let tonearm = try BuiltProduct.executable("tonearm")
        func run(_ arguments: String...) throws -> String {
            let output = try Tool.run(tonearm.path, arguments, environment: harness.clientEnvironment, timeout: 30)
            XCTAssertEqual(output.status, 0, "tonearm \(arguments.joined(separator: " ")): \(output.stderr)")
            return output.stdout
        }
        let status = try run("status")
        XCTAssertTrue(status.contains("video    320x240"), status)
        // `fullscreen` toggles MPRIS Fullscreen, which changes when the window says it did
        // (VideoState.setFullscreen), so each toggle waits for that as well as for the window's
        // size. The window says it once SDL_SetWindowFullscreen returns: SDL 2.26 (Debian 12)
        // returned at the window manager's first change, SDL 2.32 (Debian 13) waits for two moves
        // and a resize, at most 100 ms (SDL_x11window.c X11_SetWindowFullscreenViaWM), and openbox
        // moves it once: the window had the screen's size 125 ms before it said so, and a second
        // toggle read between the two set fullscreen again
        var mark = harness.mark()
        _ = try run("fullscreen")
        try harness.waitForChange(H.root, "Fullscreen true", from: mark) { $0["Fullscreen"]?.bool == true }
        try x.waitForX("fullscreen") { try x.geometry(of: window).size == (1024, 768) }
        mark = harness.mark()
        _ = try run("fullscreen")
        try harness.waitForChange(H.root, "Fullscreen false", from: mark) { $0["Fullscreen"]?.bool == false }
        try x.waitForX("back from fullscreen") { try x.geometry(of: window).size == (320, 240) }
        let other = try x.otherWindow()
        helpers.append(other.process)
        _ = try x.run("xdotool", ["windowactivate", other.id])
        try x.waitForX("the other window to have the focus") { try x.activeWindow() == other.id }
        _ = try run("raise")
        try x.waitForX("tonearm raise to focus Tonearm's window") { try x.activeWindow() == window }
        _ = try run("gravity", "stretch")
        XCTAssertEqual(try harness.get(H.extensionInterface, "VideoGravity").string, "stretch")
    }
}
