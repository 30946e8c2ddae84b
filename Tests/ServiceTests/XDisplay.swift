import Foundation
import TestSupport
import XCTest

// What the video tests share (VideoWindowTests, VideoLoopTests): media made with gst-launch-1.0,
// and an X display of the test's own with the X clients that read it.

extension ServiceTestCase {
    /// The file `name` made by the gst-launch-1.0 `pipeline` (its `location=OUT` names the file),
    /// once per test class.
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
    case red, green, blue, other(Int, Int, Int)

    init(_ r: Int, _ g: Int, _ b: Int) {
        switch (r, g, b) {
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
        let server = try FollowingProcess("Xvfb", ["-displayfd", "1", "-screen", "0", "1024x768x24", "-nolisten", "tcp"], environment: [:])
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

    /// One pixel of the screen as RGB, through a file (the grab's bytes are not text).
    private func pixel(_ x: Int, _ y: Int) throws -> Colour {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-pixel-\(UUID().uuidString).rgb")
        defer { try? FileManager.default.removeItem(at: file) }
        let output = try Tool.run("gst-launch-1.0", [
            "-q", "ximagesrc", "display-name=\(name)", "startx=\(x)", "starty=\(y)", "endx=\(x)", "endy=\(y)", "num-buffers=1",
            "use-damage=false", "!", "videoconvert", "!", "video/x-raw,format=RGB,width=1,height=1", "!", "filesink", "location=\(file.path)",
        ], timeout: 15)
        guard output.status == 0 else { throw TestError("ximagesrc could not grab \(x),\(y): \(output.stderr)") }
        let data = try Data(contentsOf: file)
        guard data.count >= 3 else { throw TestError("the grab of \(x),\(y) has \(data.count) bytes") }
        return Colour(Int(data[0]), Int(data[1]), Int(data[2]))
    }

    /// A window of another program, which openbox gives the focus to: a second tonearm-video.
    func otherWindow() throws -> (id: String, process: FollowingProcess) {
        let program = try BuiltProduct.executable("tonearm-video", override: nil)
        // its stdin held open: its end is the program's "quit"
        let process = try FollowingProcess(program.path, ["200", "150", "Other"], environment: ["DISPLAY": name], holdsInput: true)
        let index = try process.wait(for: "the other window's id") { $0.hasPrefix("window ") }
        let id = String(process.lines[index].dropFirst("window ".count))
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
