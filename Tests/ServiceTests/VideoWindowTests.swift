import Foundation
import TestSupport
import XCTest

/// Video, slice 1 (issue 28): a window of Tonearm's own on a real X display (Xvfb with openbox),
/// driven over MPRIS and the extension, with video generated here (videotestsrc's solid patterns).
/// X has no event a test can wait on from outside: window state is read with xdotool, xprop and
/// xwininfo in short bounded loops (`waitForX`).
final class VideoWindowTests: VideoTestCase {
    /// A sound server of the test's own, stopped after tonearmd (a server gone first is an output
    /// failure in tonearmd's log).
    private var soundServer: SoundServer?

    override func tearDown() {
        super.tearDown()
        soundServer?.stop()
        soundServer = nil
    }
    // MARK: Tests

    func testAVideoItemGetsAWindowOfItsOwnThatMPRISRaisesAndMakesFullscreen() throws {
        let x = try startDisplay()
        let file = try mp4("red", title: "Red-Square")
        let daemon = try harness.start(environment: ["DISPLAY": x.name])
        let mark = harness.mark()
        try harness.call(H.player, "OpenUri", "s", [H.uri(file)])
        try harness.waitForChange(H.extensionInterface, "HasVideo true", from: mark) { $0["HasVideo"]?.bool == true }
        try harness.waitForChange(H.root, "CanRaise true", from: mark) { $0["CanRaise"]?.bool == true }
        let window = try x.waitForWindow(classed: "tonearm")
        XCTAssertTrue(try x.run("xprop", ["-id", window, "WM_CLASS"]).contains("\"tonearm\""), "WM_CLASS of \(window)")
        try x.waitForX("the window's title to be the track's") { try x.title(of: window) == "Red-Square" }
        let root = try harness.getAll(H.root)
        XCTAssertEqual(root["CanRaise"]?.bool, true)
        XCTAssertEqual(root["CanSetFullscreen"]?.bool, true)
        XCTAssertEqual(root["Fullscreen"]?.bool, false)
        // the window opens on the first frame, the size comes with the preroll: announced either way
        try harness.waitForChange(H.extensionInterface, "VideoSize 320x240", from: mark) { Self.numbers($0["VideoSize"]) == [320, 240] }
        XCTAssertEqual(try harness.get(H.extensionInterface, "VideoSize").data as? [Int], [320, 240])
        // the window takes the video's size, and the video is in it
        try x.waitForX("the window to be 320x240") { try x.geometry(of: window).size == (320, 240) }
        try x.waitForX("red in the middle of the window") { try x.colour(atMiddleOf: window) == .red }

        // Raise: another window has the focus, then ours
        let other = try x.otherWindow()
        helpers.append(other.process)
        _ = try x.run("xdotool", ["windowactivate", other.id])
        try x.waitForX("the other window to have the focus") { try x.activeWindow() == other.id }
        try harness.call(H.root, "Raise")
        try x.waitForX("Raise to focus Tonearm's window") { try x.activeWindow() == window }
        other.process.stop()
        try x.waitForX("the other window to go") { try x.windows(classed: "tonearm") == [window] }

        // Fullscreen: the screen's size, announced on the root interface
        var fullscreenMark = harness.mark()
        try harness.set(H.root, "Fullscreen", "b", "true")
        try harness.waitForChange(H.root, "Fullscreen true", from: fullscreenMark) { $0["Fullscreen"]?.bool == true }
        try x.waitForX("the window to cover the screen") { try x.geometry(of: window).size == (1024, 768) }
        try x.waitForX("red in the middle of the screen") { try x.colour(atMiddleOf: window) == .red }
        fullscreenMark = harness.mark()
        try harness.set(H.root, "Fullscreen", "b", "false")
        try harness.waitForChange(H.root, "Fullscreen false", from: fullscreenMark) { $0["Fullscreen"]?.bool == false }

        // an audio item after it: the window closes, CanRaise goes false, Raise does nothing
        let closing = harness.mark()
        try harness.call(H.player, "OpenUri", "s", [H.uri(try short())])
        try harness.waitForChange(H.root, "CanRaise false", from: closing) { $0["CanRaise"]?.bool == false }
        try harness.waitForChange(H.extensionInterface, "HasVideo false", from: closing) { $0["HasVideo"]?.bool == false }
        try x.waitForX("Tonearm's window to close") { try x.windows(classed: "tonearm").isEmpty }
        XCTAssertEqual(try harness.get(H.extensionInterface, "VideoSize").data as? [Int], [0, 0])
        XCTAssertEqual(try harness.get(H.root, "CanSetFullscreen").bool, false)
        try harness.call(H.root, "Raise")
        try harness.waitForStatus("Playing")
        XCTAssertTrue(daemon.isRunning)
    }

    func testVP9InWebMAndTheoraInOggShowTheirColours() throws {
        let x = try startDisplay()
        let green = try webm("green"), blue = try ogv("blue")
        try harness.start(environment: ["DISPLAY": x.name])
        for (file, colour) in [(green, Colour.green), (blue, Colour.blue)] {
            let mark = harness.mark()
            try harness.call(H.player, "OpenUri", "s", [H.uri(file)])
            try harness.waitForChange(H.extensionInterface, "VideoSize 320x240 for \(file.lastPathComponent)", from: mark) {
                Self.numbers($0["VideoSize"]) == [320, 240]
            }
            let window = try x.waitForWindow(classed: "tonearm")
            try x.waitForX("\(colour) in the middle of the window for \(file.lastPathComponent)") {
                try x.colour(atMiddleOf: window) == colour
            }
            try x.waitForX("the title to be the file's name") { try x.title(of: window) == file.lastPathComponent }
        }
    }

    func testClosingTheWindowStopsTheItemAndTheServiceGoesOn() throws {
        let x = try startDisplay()
        let daemon = try harness.start(environment: ["DISPLAY": x.name])
        let window = try openRedSquare(on: x)
        // the window manager's close (openbox: Alt+F4 on the focused window)
        _ = try x.run("xdotool", ["windowactivate", window])
        try x.waitForX("Tonearm's window to have the focus") { try x.activeWindow() == window }
        let closing = harness.mark()
        // to the focused window, not --window: with --window, xdotool failed with BadWindow when the
        // window went before it was done (the item stops, the program quits), and the next window
        // closed as soon as it opened, as if Alt+F4 were still held
        _ = try x.run("xdotool", ["key", "alt+F4"])
        try harness.waitForChange(H.player, "PlaybackStatus Stopped", from: closing) { $0["PlaybackStatus"]?.string == "Stopped" }
        try harness.waitForChange(H.root, "CanRaise false", from: closing) { $0["CanRaise"]?.bool == false }
        try x.waitForX("Tonearm's window to go") { try x.windows(classed: "tonearm").isEmpty }
        // the service goes on: the item plays again, in a new window
        let again = harness.mark()
        try harness.call(H.player, "Play")
        try harness.waitForChange(H.root, "CanRaise true again", from: again) { $0["CanRaise"]?.bool == true }
        _ = try x.waitForWindow(classed: "tonearm")
        XCTAssertTrue(daemon.isRunning)
    }

    /// The window program dying under a sink that still draws into its window (a BadWindow X
    /// error, whose default handler ends the process) is survived: tonearmd answers and plays on.
    func testTheWindowProgramKilledWhileDrawingLeavesTheServiceRunning() throws {
        let x = try startDisplay()
        let daemon = try harness.start(environment: ["DISPLAY": x.name])
        let window = try openRedSquare(on: x)
        try x.waitForX("red in the window") { try x.colour(atMiddleOf: window) == .red }
        let helper = try XCTUnwrap(ProcessTree.descendants(of: daemon.pid, named: "tonearm-video").first, "tonearm-video runs")
        kill(helper, SIGKILL)
        try x.waitForX("Tonearm's window to go with its program") { try x.windows(classed: "tonearm").isEmpty }
        try harness.ping()
        XCTAssertTrue(daemon.isRunning, "tonearmd survived its window's program:\n\(daemon.output)")
        XCTAssertEqual(try harness.playerctl("status").isEmpty, false)
    }

    /// A paused video wakes nothing, in tonearmd or in its window program: the no-polling rule holds
    /// with a window open (the sinks' own X event threads, which sleep and look 20 times a second,
    /// are not started: tonearmd tells them of exposes itself).
    func testAPausedVideoWakesNothing() throws {
        try pausedVideoWakesNothing(environment: [:])
    }

    /// The same through glimagesink, which the default leaves on llvmpipe for the software path
    /// (videoconvertscale into ximagesink, which the test above runs through).
    func testAPausedVideoWakesNothingThroughGlimagesink() throws {
        try pausedVideoWakesNothing(environment: ["TONEARM_VIDEO_SINK": "glimagesink"])
    }

    private func pausedVideoWakesNothing(environment: [String: String]) throws {
        let x = try startDisplay()
        let daemon = try harness.start(environment: ["DISPLAY": x.name].merging(environment) { $1 })
        let window = try openRedSquare(on: x)
        try x.waitForX("red in the window") { try x.colour(atMiddleOf: window) == .red }
        try harness.call(H.player, "Pause")
        try harness.waitForStatus("Paused")
        // paused, the demuxer still fills the queues behind the sink (seconds of a small clip, at
        // once), then every streaming thread waits: measured after that
        Thread.sleep(forTimeInterval: 6)
        let program = try XCTUnwrap(ProcessTree.descendants(of: daemon.pid, named: "tonearm-video").first, "tonearm-video runs")
        let (service, serviceThreads) = WakeUps.count(daemon.pid, window: 3, sanitizerThreadName: "tonearmd")
        let (windowProgram, programThreads) = WakeUps.count(program, window: 3, sanitizerThreadName: "tonearm-video")
        XCTAssertLessThanOrEqual(service, 1, "tonearmd woke with a paused video: \(serviceThreads)")
        XCTAssertLessThanOrEqual(windowProgram, 1, "tonearm-video woke with a paused video: \(programThreads)")
        XCTAssertTrue(try x.colour(atMiddleOf: window) == .red, "the paused frame still shows")
        // covered by another window and uncovered, the paused frame is drawn again (the window
        // program tells of the expose; the sinks look for none themselves). No bar: its showing
        // on the pointer's entering would draw the frame anyway
        try harness.set(H.extensionInterface, "ControlsVisible", "b", "false")
        let other = try x.otherWindow()
        helpers.append(other.process)
        _ = try x.run("xdotool", ["windowmove", "--sync", other.id, "0", "0", "windowsize", "--sync", other.id, "2000", "2000"])
        _ = try x.run("xdotool", ["windowactivate", "--sync", other.id])
        try x.waitForX("the other window to cover Tonearm's") { !(try x.colour(atMiddleOf: window) == .red) }
        other.process.stop()
        try x.waitForX("the paused frame drawn again once uncovered") { try x.colour(atMiddleOf: window) == .red }
    }

    /// A video stream over HTTP (HLS of H.264 and AAC, served on 127.0.0.1) shows in the window as
    /// a file does: the choice of a video sink is not the local files' alone.
    func testAnHLSVideoStreamShowsInTheWindow() throws {
        let x = try startDisplay()
        let generator = try media.generator
        _ = try generator.hlsStream("hls-video", seconds: 10, segments: 5, video: true)
        let server = try HTTPServer(directory: generator.directory)
        try harness.start(environment: ["DISPLAY": x.name])
        let mark = harness.mark()
        try harness.call(H.player, "OpenUri", "s", [server.url("hls-video/index.m3u8")])
        try harness.waitForChange(H.extensionInterface, "HasVideo true", from: mark) { $0["HasVideo"]?.bool == true }
        try harness.waitForChange(H.extensionInterface, "VideoSize 320x240", from: mark) { Self.numbers($0["VideoSize"]) == [320, 240] }
        let window = try x.waitForWindow(classed: "tonearm")
        try x.waitForX("the stream's picture in the window") { !(try x.colour(atMiddleOf: window) == .black) }
        try harness.waitForStatus("Playing")
    }

    /// A banner's video: muted, looping, opened with OpenUri. It shows at once and nothing of its
    /// sound is heard (a real PulseAudio's monitor, from before the call), until it is unmuted.
    func testAMutedVideoOpenedShowsAndLoopsWithNoAudibleOutput() throws {
        let x = try startDisplay()
        let file = try mp4("red", title: "Banner")
        let server = try SoundServer(sinks: ["speakers"])
        soundServer = server
        try harness.start(sink: nil, environment: server.environment.merging(["DISPLAY": x.name]) { $1 })
        try harness.set(H.extensionInterface, "Muted", "b", "true")
        try harness.set(H.player, "LoopStatus", "s", "Track")
        let capture = try server.capture("speakers")
        defer { capture.stop() }
        let opened = ContinuousClock.now
        try harness.call(H.player, "OpenUri", "s", [H.uri(file)])
        let window = try x.waitForWindow(classed: "tonearm")
        try x.waitForX("red in the window") { try x.colour(atMiddleOf: window) == .red }
        try harness.waitForStatus("Playing")
        // a second of what it sounds like playing
        try readUntil("a second played", timeout: 10) { (try harness.get(H.player, "Position").int64 ?? 0) >= 1_000_000 }
        try readUntil("the monitor to have recorded since the call", timeout: 5) { capture.samples(after: opened).count > SoundServer.rate }
        let heard = capture.samples(after: opened)
        XCTAssertEqual(Levels.peak(heard), 0, "a muted start is heard as digital silence")
        XCTAssertEqual(try server.streams().count, 1, "its sound goes to the server, muted")
        let unmuted = ContinuousClock.now
        try harness.set(H.extensionInterface, "Muted", "b", "false")
        XCTAssertNotNil(capture.waitForLevel(after: unmuted, timeout: 5) { $0 > -40 }, "unmuted, its sound is heard")
    }

    func testHeadlessTheAudioOfAVideoFilePlaysAndNoWindowIsMade() throws {
        // no DISPLAY of its own, and no user manager on the bus to find one from
        let daemon = try harness.start(environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""])
        try harness.call(H.player, "OpenUri", "s", [H.uri(try ogv("blue"))])
        try harness.waitForItemStatus("readyToPlay")
        try harness.waitForStatus("Playing")
        XCTAssertEqual(try harness.get(H.extensionInterface, "HasVideo").bool, false)
        XCTAssertEqual(try harness.get(H.root, "CanRaise").bool, false)
        XCTAssertEqual(try harness.get(H.root, "CanSetFullscreen").bool, false)
        XCTAssertEqual(ProcessTree.descendants(of: daemon.pid, named: "tonearm-video"), [], "a window program started with no display")
    }

    func testADisplayIsFoundInTheUserManagersEnvironmentWhenTonearmdHasNone() throws {
        let x = try startDisplay()
        // the systemd user manager, as a session started at login has it, on the private bus
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("PySupport/systemd_manager.py")
        let manager = try FollowingProcess("/usr/bin/python3", [script.path, "DISPLAY=\(x.name)", "XDG_SESSION_TYPE=x11"],
                                           environment: harness.clientEnvironment)
        helpers.append(manager)
        try manager.wait(for: "the stand-in user manager") { $0 == "ready" }
        try harness.start(environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""])
        let window = try openRedSquare(on: x)
        try x.waitForX("red in the middle of the window") { try x.colour(atMiddleOf: window) == .red }
    }
}
