import Foundation
import TestSupport
import XCTest

/// Video, slice 1 (issue 28): a window of Tonearm's own on a real X display (Xvfb with openbox),
/// driven over MPRIS and the extension, with video generated here (videotestsrc's solid patterns).
/// X has no event a test can wait on from outside: window state is read with xdotool, xprop and
/// xwininfo in short bounded loops (`waitForX`).
final class VideoWindowTests: ServiceTestCase {
    typealias H = ServiceHarness

    private var display: XDisplay?
    private var helpers: [FollowingProcess] = []

    override func tearDown() {
        helpers.forEach { $0.stop() }
        helpers = []
        super.tearDown()  // tonearmd (and with it its window program) before the X server
        display?.stop()
        display = nil
    }

    // MARK: Media

    /// 10 s of `pattern` at 320x240, H.264 in MP4 with AAC audio and a title tag.
    func mp4(_ pattern: String, title: String) throws -> URL {
        try video("\(pattern).mp4", [
            "videotestsrc", "pattern=\(pattern)", "num-buffers=300", "!", "video/x-raw,width=320,height=240,framerate=30/1", "!",
            "x264enc", "speed-preset=ultrafast", "!", "mp4mux", "name=m", "!", "filesink", "location=OUT",
            "audiotestsrc", "num-buffers=431", "!", "taginject", "tags=title=\(title)", "!", "avenc_aac", "!", "m.",
        ])
    }

    /// 10 s of `pattern` at 320x240, VP9 in WebM, no audio.
    func webm(_ pattern: String) throws -> URL {
        try video("\(pattern).webm", [
            "videotestsrc", "pattern=\(pattern)", "num-buffers=300", "!", "video/x-raw,width=320,height=240,framerate=30/1", "!",
            "vp9enc", "deadline=1", "!", "webmmux", "!", "filesink", "location=OUT",
        ])
    }

    /// 10 s of `pattern` at 320x240, Theora in Ogg with Vorbis audio.
    func ogv(_ pattern: String) throws -> URL {
        try video("\(pattern).ogv", [
            "videotestsrc", "pattern=\(pattern)", "num-buffers=300", "!", "video/x-raw,width=320,height=240,framerate=30/1", "!",
            "theoraenc", "!", "oggmux", "name=m", "!", "filesink", "location=OUT",
            "audiotestsrc", "num-buffers=431", "!", "vorbisenc", "!", "m.",
        ])
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

    /// Opens the red H.264 clip and returns Tonearm's window once MPRIS says it can raise it.
    func openRedSquare(on x: XDisplay) throws -> String {
        let mark = harness.mark()
        try harness.call(H.player, "OpenUri", "s", [H.uri(try mp4("red", title: "Red-Square"))])
        try harness.waitForChange(H.root, "CanRaise true", from: mark) { $0["CanRaise"]?.bool == true }
        return try x.waitForWindow(classed: "tonearm")
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
        _ = try x.run("xdotool", ["key", "--window", window, "alt+F4"])
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
        let helper = try XCTUnwrap(Self.children(of: daemon.pid, named: "tonearm-video").first, "tonearm-video runs")
        kill(helper, SIGKILL)
        try x.waitForX("Tonearm's window to go with its program") { try x.windows(classed: "tonearm").isEmpty }
        try harness.ping()
        XCTAssertTrue(daemon.isRunning, "tonearmd survived its window's program:\n\(daemon.output)")
        XCTAssertEqual(try harness.playerctl("status").isEmpty, false)
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
        XCTAssertEqual(Self.children(of: daemon.pid, named: "tonearm-video"), [], "a window program started with no display")
    }

    /// The processes whose parent is `parent` and whose name (`/proc/PID/stat`'s comm) is `name`:
    /// read from /proc, which every Linux has (procps' pgrep is not on a minimal Debian).
    static func children(of parent: Int32, named name: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> Int32? in
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { return nil }
            let comm = stat[stat.index(after: open)..<close]
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            // after the comm: state, then the parent's pid (proc(5))
            guard comm == name[...].prefix(15), fields.count > 1, Int32(fields[1]) == parent else { return nil }
            return pid
        }
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

    /// The numbers of a structure in a PropertiesChanged (VideoSize's (ii)).
    static func numbers(_ value: MonitorValue?) -> [Int64]? {
        guard case .structure(let items)? = value?.unwrapped else { return nil }
        return items.compactMap(\.int64)
    }

    private func startDisplay() throws -> XDisplay {
        let x = try XDisplay.start()
        display = x
        return x
    }
}
