import Foundation
import TestSupport
import XCTest

/// Video under Wayland (issue 28): a headless sway session of an unprivileged user, with XWayland,
/// and tonearmd run as that user with the session's environment, as a service started in the
/// user's session is. Tonearm's window is an X11 window (docs/video.md), so under sway it is an
/// XWayland view; sway's tree (`swaymsg -t get_tree`) says what the compositor shows: the view's
/// class, whether it is fullscreen and its rectangle. sway has no event a test can wait on from
/// outside without subscribing first, so the tree is read in short bounded loops, as X state is.
final class VideoWaylandTests: VideoTestCase {

    private var session: SwaySession?

    override func tearDown() {
        super.tearDown()  // tonearmd (and with it its window program) before the compositor
        session?.stop()
        session = nil
    }

    func testAVideoIsAnXWaylandViewOfClassTonearmThatGoesFullscreenAndClosesForAudio() throws {
        let sway = try SwaySession.start()
        session = sway
        let file = try video("red-wayland.mp4", [
            "videotestsrc", "pattern=red", "num-buffers=300", "!", "video/x-raw,width=320,height=240,framerate=30/1", "!",
            "x264enc", "speed-preset=ultrafast", "!", "mp4mux", "!", "filesink", "location=OUT",
        ])
        let audio = try short()
        // the user's own service: its state, cache (and GStreamer's registry in it) are the user's
        try sway.giveToUser(harness.directory)
        try sway.letUserWriteSanitizerReports()
        let daemon = try harness.start(launcher: sway.launcher, environment: sway.environment)
        let status = try String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)
        XCTAssertTrue(status.split(separator: "\n").contains { $0.hasPrefix("Uid:\t\(sway.uid)\t") }, "tonearmd runs as the session's user")

        let mark = harness.mark()
        try harness.call(H.player, "OpenUri", "s", [H.uri(file)])
        // the first load of this user's tonearmd builds GStreamer's registry for it
        try harness.waitForChange(H.root, "CanRaise true", from: mark, timeout: 30) { $0["CanRaise"]?.bool == true }
        var view: [String: Any] = [:]
        try sway.waitForTree("an XWayland view of class tonearm") {
            guard let found = try sway.views().first(where: { SwaySession.windowClass(of: $0) == "tonearm" }) else { return false }
            view = found
            return true
        }
        XCTAssertEqual(view["shell"] as? String, "xwayland", "\(view)")
        XCTAssertEqual(view["fullscreen_mode"] as? Int, 0)

        // MPRIS Fullscreen: the view covers the output
        let fullscreen = harness.mark()
        try harness.set(H.root, "Fullscreen", "b", "true")
        try harness.waitForChange(H.root, "Fullscreen true", from: fullscreen) { $0["Fullscreen"]?.bool == true }
        let output = try sway.outputSize()
        try sway.waitForTree("the tonearm view to be fullscreen at the output's \(output)") {
            guard let view = try sway.views().first(where: { SwaySession.windowClass(of: $0) == "tonearm" }) else { return false }
            guard let size = SwaySession.size(of: view) else { return false }
            return view["fullscreen_mode"] as? Int == 1 && size == output
        }

        // an audio item next: the view is gone
        let closing = harness.mark()
        try harness.call(H.player, "OpenUri", "s", [H.uri(audio)])
        try harness.waitForChange(H.root, "CanRaise false", from: closing) { $0["CanRaise"]?.bool == false }
        try sway.waitForTree("the tonearm view to go") {
            try sway.views().allSatisfy { SwaySession.windowClass(of: $0) != "tonearm" }
        }
        try harness.waitForStatus("Playing")
    }
}

/// A headless sway session (wlroots' headless backend, pixman rendering: no GPU needed; XWayland
/// on) of an unprivileged user: sway refuses to run as root (design brief, trap 12). As root, the
/// user is `nobody`; otherwise the user running the tests.
final class SwaySession {
    let uid: uid_t
    let gid: gid_t
    /// The session's variables, as a program started in it has them.
    let environment: [String: String]
    /// Runs a program as the session's user, in place (exec, so the pid stays).
    let launcher: [String]
    private let socket: String
    private let directory: URL
    private let process: FollowingProcess

    private init(uid: uid_t, gid: gid_t, environment: [String: String], launcher: [String], socket: String,
                 directory: URL, process: FollowingProcess) {
        self.uid = uid
        self.gid = gid
        self.environment = environment
        self.launcher = launcher
        self.socket = socket
        self.directory = directory
        self.process = process
    }

    /// Starts sway with a configuration of the test's own (one 1024x768 output, XWayland, no bar),
    /// whose `exec` prints the session's DISPLAY, WAYLAND_DISPLAY and SWAYSOCK once it runs.
    static func start() throws -> SwaySession {
        let (uid, gid): (uid_t, gid_t)
        var launcher: [String] = []
        if getuid() == 0 {
            guard let nobody = getpwnam("nobody") else { throw TestError("no user nobody to run sway as") }
            (uid, gid) = (nobody.pointee.pw_uid, nobody.pointee.pw_gid)
            launcher = [try Tool.path("setpriv"), "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--"]
        } else {
            (uid, gid) = (getuid(), getgid())
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-sway-\(UUID().uuidString)")
        let runtime = directory.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("config")
        try """
            xwayland enable
            output * resolution 1024x768
            exec echo sway-ready $DISPLAY $WAYLAND_DISPLAY $SWAYSOCK
            """.write(to: config, atomically: true, encoding: .utf8)
        // XDG_RUNTIME_DIR is the user's alone (0700), as logind makes it
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: runtime.path)
        try give(directory, to: uid, gid)
        let variables = [
            "PATH=/usr/bin:/bin", "HOME=\(directory.path)", "XDG_RUNTIME_DIR=\(runtime.path)",
            // no GPU and no input devices in a test; XWayland is started on the first X client
            "WLR_BACKENDS=headless", "WLR_LIBINPUT_NO_DEVICES=1", "WLR_RENDERER=pixman",
        ]
        let env = try Tool.path("env")
        let command = launcher + [env, "-i"] + variables + [try Tool.path("sway"), "-c", config.path]
        let process = try FollowingProcess(command[0], Array(command.dropFirst()), environment: [:])
        let index: Int
        do {
            index = try process.wait(for: "sway to run its configuration", timeout: 20) { $0.hasPrefix("sway-ready ") }
        } catch {
            process.stop()
            throw TestError("\(error); sway said:\n\(process.lines.suffix(20).joined(separator: "\n"))")
        }
        let fields = process.lines[index].split(separator: " ").map(String.init)
        guard fields.count == 4 else { throw TestError("sway's session has no DISPLAY (XWayland off?): \(process.lines[index])") }
        return SwaySession(uid: uid, gid: gid, environment: [
            "DISPLAY": fields[1], "WAYLAND_DISPLAY": fields[2], "XDG_RUNTIME_DIR": runtime.path, "HOME": directory.path,
            "XDG_SESSION_TYPE": "wayland",
        ], launcher: launcher, socket: fields[3], directory: directory, process: process)
    }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Makes `directory` and everything in it the session user's.
    func giveToUser(_ directory: URL) throws {
        try Self.give(directory, to: uid, gid)
    }

    private static func give(_ directory: URL, to uid: uid_t, _ gid: gid_t) throws {
        var paths = [directory.path]
        if let walk = FileManager.default.enumerator(atPath: directory.path) {
            paths += walk.compactMap { $0 as? String }.map { directory.path + "/" + $0 }
        }
        for path in paths where lchown(path, uid, gid) != 0 {
            throw TestError("cannot give \(path) to uid \(uid): errno \(errno)")
        }
    }

    /// Under `make test-asan|test-tsan` (scripts/test.sh), the folder of the sanitizers' reports
    /// (their options' `log_path`) is the root's: the session's user may write there too (sticky,
    /// as /tmp), so that a report of its tonearmd fails the run as any other does.
    func letUserWriteSanitizerReports() throws {
        let environment = ProcessInfo.processInfo.environment
        for name in ["TONEARMD_ASAN_OPTIONS", "TSAN_OPTIONS"] {
            guard let options = environment[name],
                  let path = options.split(separator: ":").first(where: { $0.hasPrefix("log_path=") })?.dropFirst("log_path=".count)
            else { continue }
            let folder = URL(fileURLWithPath: String(path)).deletingLastPathComponent()
            try FileManager.default.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: folder.path)
        }
    }

    /// sway's tree (`swaymsg -t get_tree`, as JSON).
    func tree() throws -> [String: Any] {
        let output = try Tool.run("swaymsg", ["-s", socket, "-r", "-t", "get_tree"], timeout: 15)
        guard output.status == 0, let tree = try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any] else {
            throw TestError("swaymsg -t get_tree failed (\(output.status)): \(output.stderr)")
        }
        return tree
    }

    /// The views (windows) in the tree, tiled and floating.
    func views() throws -> [[String: Any]] {
        var found: [[String: Any]] = []
        func walk(_ node: [String: Any]) {
            let children = (node["nodes"] as? [[String: Any]] ?? []) + (node["floating_nodes"] as? [[String: Any]] ?? [])
            if children.isEmpty, node["pid"] != nil { found.append(node) }
            children.forEach(walk)
        }
        walk(try tree())
        return found
    }

    /// The size of the first output.
    func outputSize() throws -> (Int, Int) {
        let outputs = (try tree()["nodes"] as? [[String: Any]] ?? []).filter { $0["type"] as? String == "output" && $0["name"] as? String != "__i3" }
        guard let output = outputs.first, let size = Self.size(of: output) else { throw TestError("sway has no output") }
        return size
    }

    static func windowClass(of view: [String: Any]) -> String? {
        (view["window_properties"] as? [String: Any])?["class"] as? String
    }

    static func size(of node: [String: Any]) -> (Int, Int)? {
        guard let rect = node["rect"] as? [String: Any], let width = rect["width"] as? Int, let height = rect["height"] as? Int else { return nil }
        return (width, height)
    }

    /// Reads the tree until `condition` holds: every 50 ms, at most `timeout`.
    func waitForTree(_ what: String, timeout: TimeInterval = 10, _ condition: () throws -> Bool) throws {
        do {
            try readUntil(what, timeout: timeout, condition)
        } catch {
            throw TestError("\(error); the views: \((try? views()) ?? [])")
        }
    }
}
