import Foundation
import TestSupport
import XCTest

// What the video tests share (VideoWindowTests, VideoGeometryTests, VideoSoftwarePathTests, VideoControlsTests): their media, made at test time
// with gst-launch-1.0, and an X display of their own with the clients that read it.

/// A service test on an X display of its own (`startDisplay`), with helper programs it stops at
/// the end; tonearmd (and with it its window program) stops before the X server.
class VideoTestCase: ServiceTestCase {
    typealias H = ServiceHarness

    private var display: XDisplay?
    var helpers: [FollowingProcess] = []

    override func tearDown() {
        helpers.forEach { $0.stop() }
        helpers = []
        super.tearDown()
        display?.stop()
        display = nil
    }

    func startDisplay() throws -> XDisplay {
        let x = try XDisplay.start()
        display = x
        return x
    }

    /// The numbers of a structure in a PropertiesChanged (VideoSize's (ii)).
    static func numbers(_ value: MonitorValue?) -> [Int64]? {
        guard case .structure(let items)? = value?.unwrapped else { return nil }
        return items.compactMap(\.int64)
    }
}

extension VideoTestCase {
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

    /// Opens the red H.264 clip and returns Tonearm's window once MPRIS says it can raise it.
    func openRedSquare(on x: XDisplay) throws -> String {
        typealias H = ServiceHarness
        let mark = harness.mark()
        try harness.call(H.player, "OpenUri", "s", [H.uri(try mp4("red", title: "Red-Square"))])
        try harness.waitForChange(H.root, "CanRaise true", from: mark) { $0["CanRaise"]?.bool == true }
        return try x.waitForWindow(classed: "tonearm")
    }

    /// 60 s at 320x240 (a test takes longer than 10 s): blue, in a 20-pixel green border (H.264 in
    /// MP4, no audio).
    func framed() throws -> URL {
        try video("framed.mp4", [
            "videotestsrc", "pattern=blue", "num-buffers=1800", "!", "video/x-raw,width=280,height=200,framerate=30/1", "!",
            "videobox", "top=-20", "bottom=-20", "left=-20", "right=-20", "fill=green", "!", "videoconvert", "!",
            "video/x-raw,format=I420,width=320,height=240", "!", "x264enc", "speed-preset=ultrafast", "!", "mp4mux", "!",
            "filesink", "location=OUT",
        ])
    }

    /// Opens the framed clip and returns its window once its video size is announced.
    func openFramed(on x: XDisplay) throws -> String {
        let mark = harness.mark()
        try harness.call(H.player, "OpenUri", "s", [H.uri(try framed())])
        try harness.waitForChange(H.extensionInterface, "VideoSize 320x240", from: mark) { Self.numbers($0["VideoSize"]) == [320, 240] }
        let window = try x.waitForWindow(classed: "tonearm")
        try x.waitForX("the window to take the video's size") { try x.geometry(of: window).size == (320, 240) }
        return window
    }

    func setGravity(_ gravity: String) throws {
        let mark = harness.mark()
        try harness.set(H.extensionInterface, "VideoGravity", "s", gravity)
        try harness.waitForChange(H.extensionInterface, "VideoGravity \(gravity)", from: mark) { $0["VideoGravity"]?.string == gravity }
    }

    /// Waits until each of `points` (x, y in the window) shows its colour.
    func waitForColours(_ x: XDisplay, _ window: String, _ what: String, _ points: [(Int, Int, Colour)]) throws {
        var seen: [String] = []
        do {
            try x.waitForX(what) {
                let shot = try x.screenshot(of: window)
                seen = points.map { "\($0.0),\($0.1): \(shot.colour($0.0, $0.1))" }
                return points.allSatisfy { shot.colour($0.0, $0.1) == $0.2 }
            }
        } catch {
            throw TestError("\(error); last seen: \(seen.joined(separator: ", "))")
        }
    }

    func video(_ name: String, _ pipeline: [String]) throws -> URL {
        let url = try media.generator.url(name)
        if FileManager.default.fileExists(atPath: url.path) { return url }
        let output = try Tool.run("gst-launch-1.0", ["-q"] + pipeline.map { $0 == "location=OUT" ? "location=\(url.path)" : $0 }, timeout: 60)
        guard output.status == 0 else { throw TestError("gst-launch-1.0 could not make \(name): \(output.stderr)") }
        return url
    }
}

/// The colours of videotestsrc's solid patterns, as a screenshot's pixel shows them.
enum Colour: CustomStringConvertible {
    case red, green, blue, black, other(Int, Int, Int)

    init(_ r: Int, _ g: Int, _ b: Int) {
        switch (r, g, b) {
        case (..<40, ..<40, ..<40): self = .black
        case (200..., ..<60, ..<60): self = .red
        case (..<60, 200..., ..<60): self = .green
        case (..<60, ..<60, 200...): self = .blue
        default: self = .other(r, g, b)
        }
    }

    var description: String {
        switch self {
        case .red: "red"
        case .green: "green"
        case .blue: "blue"
        case .black: "black"
        case .other(let r, let g, let b): "rgb(\(r),\(g),\(b))"
        }
    }

    static func == (a: Colour, b: Colour) -> Bool { a.description == b.description }
}

/// An X server of the test's own (Xvfb, 1024x768, on the display number it picks) with openbox as
/// its window manager, and the X clients that read it.
final class XDisplay {
    let name: String
    private let server: FollowingProcess
    private let windowManager: FollowingProcess

    private init(name: String, server: FollowingProcess, windowManager: FollowingProcess) {
        self.name = name
        self.server = server
        self.windowManager = windowManager
    }

    /// Starts Xvfb, which prints its display number once it accepts clients (-displayfd), then
    /// openbox, which runs its --startup command once it manages the screen.
    static func start() throws -> XDisplay {
        let server = try FollowingProcess("Xvfb", ["-displayfd", "1", "-screen", "0", "1024x768x24", "-nolisten", "tcp", "-bs"], environment: [:])
        let index = try server.wait(for: "Xvfb's display number", timeout: 20) { Int($0) != nil }
        let name = ":" + server.lines[index]
        let windowManager = try FollowingProcess("openbox", ["--startup", "echo openbox-ready"], environment: ["DISPLAY": name])
        try windowManager.wait(for: "openbox to manage the screen", timeout: 20) { $0 == "openbox-ready" }
        return XDisplay(name: name, server: server, windowManager: windowManager)
    }

    func stop() {
        windowManager.stop()
        server.stop()
    }

    /// `tool arguments` on this display: its stdout, trimmed; throws when it fails.
    func run(_ tool: String, _ arguments: [String]) throws -> String {
        let output = try Tool.run(tool, arguments, environment: ["DISPLAY": name], timeout: 15)
        guard output.status == 0 else { throw TestError("\(tool) \(arguments.joined(separator: " ")) failed (\(output.status)): \(output.stderr)") }
        return output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The mapped windows whose WM_CLASS is `windowClass` (xdotool search; an empty list is no error).
    func windows(classed windowClass: String) throws -> [String] {
        let output = try Tool.run("xdotool", ["search", "--onlyvisible", "--classname", windowClass], environment: ["DISPLAY": name], timeout: 15)
        return output.stdout.split(separator: "\n").map(String.init)
    }

    func waitForWindow(classed windowClass: String) throws -> String {
        var found: [String] = []
        try waitForX("a window of class \(windowClass)") {
            found = try windows(classed: windowClass)
            return !found.isEmpty
        }
        return found[0]
    }

    func title(of window: String) throws -> String {
        try run("xdotool", ["getwindowname", window])
    }

    func activeWindow() throws -> String {
        try run("xdotool", ["getactivewindow"])
    }

    /// Where the window is on the screen and its size (xwininfo's absolute corner).
    func geometry(of window: String) throws -> (x: Int, y: Int, size: (Int, Int)) {
        let info = try run("xwininfo", ["-id", window])
        func value(_ label: String) throws -> Int {
            guard let line = info.split(separator: "\n").first(where: { $0.contains(label) }),
                  let number = Int(line.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) else {
                throw TestError("xwininfo -id \(window) has no \(label): \(info)")
            }
            return number
        }
        return (try value("Absolute upper-left X"), try value("Absolute upper-left Y"), (try value("Width"), try value("Height")))
    }

    /// The colour of the screen's pixel in the middle of `window`: one pixel grabbed with ximagesrc.
    func colour(atMiddleOf window: String) throws -> Colour {
        let (x, y, (width, height)) = try geometry(of: window)
        return try pixel(x + width / 2, y + height / 2)
    }

    /// One pixel of the screen.
    private func pixel(_ x: Int, _ y: Int) throws -> Colour {
        try screenshot(x: x, y: y, width: 1, height: 1).colour(0, 0)
    }

    /// What the screen shows of `window` (its client area, where xwininfo puts it).
    func screenshot(of window: String) throws -> Screenshot {
        let (x, y, (width, height)) = try geometry(of: window)
        return try screenshot(x: x, y: y, width: width, height: height)
    }

    /// The bottom `rows` rows of `window` as the screen shows them.
    func bottom(_ rows: Int, of window: String) throws -> Screenshot {
        let (x, y, (width, height)) = try geometry(of: window)
        return try screenshot(x: x, y: y + height - rows, width: width, height: rows)
    }

    /// A rectangle of the screen as RGB, grabbed with ximagesrc through a file (its bytes are not text).
    func screenshot(x: Int, y: Int, width: Int, height: Int) throws -> Screenshot {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-grab-\(UUID().uuidString).rgb")
        defer { try? FileManager.default.removeItem(at: file) }
        let output = try Tool.run("gst-launch-1.0", [
            "-q", "ximagesrc", "display-name=\(name)", "startx=\(x)", "starty=\(y)", "endx=\(x + width - 1)", "endy=\(y + height - 1)",
            "num-buffers=1", "use-damage=false", "!", "videoconvert", "!", "video/x-raw,format=RGB,width=\(width),height=\(height)", "!",
            "filesink", "location=\(file.path)",
        ], timeout: 15)
        guard output.status == 0 else { throw TestError("ximagesrc could not grab \(width)x\(height)+\(x)+\(y): \(output.stderr)") }
        let shot = Screenshot(width: width, height: height, bytes: [UInt8](try Data(contentsOf: file)))
        guard shot.bytes.count >= shot.stride * height else {
            throw TestError("the grab of \(width)x\(height)+\(x)+\(y) has \(shot.bytes.count) bytes")
        }
        return shot
    }

    /// `xprop -id window property`'s value (after the `=` or `:`), or "" when it has none.
    func property(_ property: String, of window: String) throws -> String {
        let line = try run("xprop", ["-id", window, property])
        guard let cut = line.firstIndex(where: { $0 == "=" || $0 == ":" }) else { return "" }
        return line[line.index(after: cut)...].trimmingCharacters(in: .whitespaces)
    }

    /// The window `window` is a child of (xwininfo -tree), in decimal as xdotool says ids.
    func parent(of window: String) throws -> String {
        let info = try run("xwininfo", ["-id", window, "-tree"])
        guard let line = info.split(separator: "\n").first(where: { $0.contains("Parent window id:") }),
              let hex = line.split(separator: ":")[1].split(separator: " ").first,
              let id = UInt64(hex.dropFirst(2), radix: 16) else { throw TestError("xwininfo -tree of \(window) names no parent: \(info)") }
        return String(id)
    }

    /// The windows whose parent is `window` (xwininfo -children), in decimal as xdotool says ids.
    func children(of window: String) throws -> [String] {
        let info = try run("xwininfo", ["-id", window, "-children"])
        return info.split(separator: "\n").compactMap { line in
            let text = line.trimmingCharacters(in: .whitespaces)
            guard text.hasPrefix("0x"), let hex = text.split(separator: " ").first else { return nil }
            return UInt64(hex.dropFirst(2), radix: 16).map(String.init)
        }
    }

    /// A window of another program, which openbox gives the focus to: a second tonearm-video.
    func otherWindow() throws -> (id: String, process: FollowingProcess) {
        let program = try BuiltProduct.executable("tonearm-video", override: nil)
        // its stdin held open: its end is the program's "quit"
        let process = try FollowingProcess(program.path, ["200", "150", "Other"], environment: ["DISPLAY": name], holdsInput: true)
        let index = try process.wait(for: "the other window's id") { $0.hasPrefix("window ") }
        // the program says the child window its sink would draw into; its window is the parent
        let id = try parent(of: String(process.lines[index].dropFirst("window ".count)))
        try waitForX("the other window to be mapped") { try windows(classed: "tonearm").contains(id) }
        return (id, process)
    }

    /// Reads X state until `condition` holds: every 50 ms, at most `timeout` (there is no X event
    /// a test can wait on from outside).
    func waitForX(_ what: String, timeout: TimeInterval = 10, _ condition: () throws -> Bool) throws {
        try readUntil(what, timeout: timeout, condition)
    }
}

/// Reads a display's state until `condition` holds: every 50 ms, at most `timeout` (scaled for
/// sanitized builds). For state that has no event a test can wait on from outside (X, sway's tree).
func readUntil(_ what: String, timeout: TimeInterval, _ condition: () throws -> Bool) throws {
    let deadline = Date(timeIntervalSinceNow: timeout * ServiceHarness.slowdown)
    var lastError: (any Error)?
    while Date() < deadline {
        do {
            if try condition() { return }
        } catch {
            lastError = error
        }
        usleep(50_000)
    }
    throw TestError("timed out after \(timeout) s waiting for \(what)\(lastError.map { " (last: \($0))" } ?? "")")
}

/// A rectangle of the screen as RGB rows (GStreamer pads each row to a multiple of 4 bytes).
struct Screenshot {
    let width: Int
    let height: Int
    let bytes: [UInt8]
    var stride: Int { (width * 3 + 3) / 4 * 4 }

    func colour(_ x: Int, _ y: Int) -> Colour {
        let at = y * stride + x * 3
        return Colour(Int(bytes[at]), Int(bytes[at + 1]), Int(bytes[at + 2]))
    }
}
