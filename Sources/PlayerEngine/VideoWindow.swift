import Basics
import Dispatch
import EngineLink
import FoundationEssentials
import Glibc
import Logging
import PlayerModel

/// Tonearm's video window, seen from tonearmd: the `tonearm-video` program (SDL2), started when a
/// video sink first asks for a window and ended when the queue moves to an item without video or
/// ends, so that tonearmd maps no window library of its own. It talks a line protocol on the
/// program's stdin and stdout (see Sources/tonearm-video/main.swift); its lines are read on a
/// thread of their own, asleep in read(2), which exists only while the program runs (nothing polls).
///
/// `window(for:)` runs on a streaming thread, in the bus's sync handler (trap 12); the other
/// methods on the engine's queue. Never on the queue that answers D-Bus.
final class VideoWindow: @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `condition`'s lock.
    private let helper: String
    private let logger: Logger
    /// Where the window's events go; set once by the engine before its first load.
    private var handler: (@Sendable (VideoEvent) -> Void)?
    private let condition = Condition()
    private var child: ChildProcess?
    /// The window's X11 id once the program said it.
    private var xid: UInt64?
    /// The program ended (its stdout closed), or failed to start.
    private var ended = true
    /// The program was told to quit: its window is going, and a sink that asks now gets a new one
    /// (it got the dying window's id, and played on without a window, when the sink of a video
    /// after a video asked just after the quit: VideoInputTests, a drop while a video played).
    private var quitting = false
    /// Counts the windows handed to sinks: a close asked before the latest one does not happen.
    private(set) var uses = 0
    private var title = "Tonearm"
    /// Kept for the window to come (`VideoCommand`): how the video fills it, and picture-in-picture.
    private var gravity = VideoGravity.fit
    private var pictureInPicture = false
    /// The video's size (at the preroll), the window's drawing area (its "area" line) and where
    /// the sink's window was last put in it ("frame"): `VideoGravity.frame` of the first two.
    private var videoSize = VideoSize.zero
    private var area = VideoSize.zero
    private var frame: VideoFrame?
    /// Called on the window's queue once the sink's window moved ("framed") or its gravity changed, so
    /// that the engine has the sink draw its last frame again (a paused video draws no other).
    private var exposeHandler: (@Sendable () -> Void)?
    /// Called holding the lock with `frame` and the video's size each time either may have changed
    /// (nil: the window is gone), so that a sink that scales to it (the software path) follows; it
    /// must only hand them on.
    private var frameHandler: (@Sendable (VideoFrame?, VideoSize) -> Void)?
    /// How long a sink waits for the window program's first line.
    private static let startLimit: Duration = .seconds(5)

    init(helper: String, logger: Logger) {
        self.helper = helper
        self.logger = logger
    }

    func setEventHandler(_ handler: @escaping @Sendable (VideoEvent) -> Void) {
        condition.withLock { self.handler = handler }
    }

    func setExposeHandler(_ handler: @escaping @Sendable () -> Void) {
        condition.withLock { exposeHandler = handler }
    }

    func setFrameHandler(_ handler: @escaping @Sendable (VideoFrame?, VideoSize) -> Void) {
        condition.withLock { frameHandler = handler }
    }

    private func events(_ event: VideoEvent) {
        condition.withLock { handler }?(event)
    }

    /// The path of `tonearm-video`: `TONEARM_VIDEO_HELPER`, else beside the running program.
    static func helperPath(environment: [String: String] = Environment.variables()) -> String {
        if let path = environment["TONEARM_VIDEO_HELPER"], !path.isEmpty { return path }
        return Path.besideThisProgram("tonearm-video")
    }

    var isOpen: Bool { condition.withLock { child != nil && !ended } }

    /// The window for a sink showing video at `size` on `display`: the one open, or a new one
    /// (waits, at most `startLimit`, for the program to say its id). Nil: no window could be made,
    /// and the sink's message goes on to its own window... which this engine never lets happen
    /// for long: the load goes on without a window of ours.
    func window(for size: VideoSize, display: VideoDisplay) -> UInt64? {
        let opened: UInt64? = condition.withLock {
            let reused = child != nil && !ended && !quitting
            if !reused { start(size: size, display: display) }
            let deadline = ContinuousClock.now + Self.startLimit
            while xid == nil && !ended && condition.wait(until: deadline) {}
            guard let xid else { return nil }
            uses += 1
            // a window the person closed is hidden, not gone, until its close is carried out: a
            // sink that gets it before then shows it again
            if reused, let child { Files.writeAll(Array("show\n".utf8), to: child.input) }
            return xid
        }
        if opened != nil { events(.windowOpened(size)) }
        return opened
    }

    /// Starts the program; holding the lock.
    private func start(size: VideoSize, display: VideoDisplay) {
        var environment = Environment.variables()
        environment.merge(display.environment) { $1 }
        environment = SpawnEnvironment.forVideoWindow(environment) { path in
            var status = stat()
            return lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFSOCK
        }
        let started: ChildProcess
        do {
            // the sink may ask before its caps are set: a 16:9 window until `resize`
            let width = size.width > 0 ? size.width : 640, height = size.height > 0 ? size.height : 360
            started = try ChildProcess.spawn(helper, [String(width), String(height), title],
                                             environment: environment.map { "\($0.key)=\($0.value)" })
        } catch {
            logger.error("cannot start the video window (\(helper)): \(error.message)")
            return
        }
        child = started
        xid = nil
        ended = false
        quitting = false
        area = .zero
        frame = nil
        if size != .zero { videoSize = size }
        // the settings asked before this window existed (or while none was open)
        if pictureInPicture { Files.writeAll(Array("pip 1\n".utf8), to: started.input) }
        logger.info("video window started", metadata: ["pid": "\(started.pid)", "display": "\(display.name)"])
        // a blocking read on a thread of the program's own, not a dispatch read source: one
        // cancelled at the pipe's end now and then crashed libdispatch's manager thread in
        // _dispatch_event_loop_drain (a freed epoll muxnote: swift-corelibs-libdispatch issue 949)
        detachThread(name: "tonearm.video-window") { [weak self] in
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 512)
            var dropping: [String] = []
            while true {
                let count = Files.read(started.output, into: &buffer)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                pending += buffer.prefix(count)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    self?.heard(line, dropping: &dropping)
                }
            }
            Glibc.close(started.output)
            let status = started.wait()
            self?.programEnded(started, status: status)
        }
    }

    /// A line of the program, on its reader thread; `dropping` is what the drop under way carried so far.
    private func heard(_ line: String, dropping: inout [String]) {
        let words = line.split(separator: " ", maxSplits: 1).map(String.init)
        switch words.first {
        case "window":
            condition.withLock {
                xid = words.count == 2 ? UInt64(words[1]) : nil
                condition.broadcast()
            }
        case "area":
            // held to X's window sizes (16 bits), so that the frame's arithmetic never traps on a bad line
            let numbers = words.count == 2 ? words[1].split(separator: " ").compactMap { Int($0).map { min(max($0, 0), 65535) } } : []
            guard numbers.count == 2 else { return }
            let moved = condition.withLock {
                area = VideoSize(width: numbers[0], height: numbers[1])
                return placeSink()
            }
            if !moved { condition.withLock { exposeHandler }?() }
        case "framed", "exposed":
            // the sink's window is where "frame" put it, or was uncovered: its last frame is drawn
            // there again
            condition.withLock { exposeHandler }?()
        case "fullscreen": events(.windowFullscreen(words.last == "1"))
        case "closed": events(.windowClosed)
        case "motion": events(.pointerMoved)
        case "key":
            // keys without an action are no error: the program reports every key
            if words.count == 2, let input = WindowInput(key: words[1]) { events(.input(input)) }
        case "double-click": events(.input(.doubleClick))
        case "drop":
            if words.count == 2, let text = words[1].removingPercentEscapes() {
                dropping.append(text)
            } else {
                logger.warning("the video window said a drop that is not one: \(line)")
            }
        case "drop-end":
            let texts = dropping
            dropping = []
            events(.input(.drop(texts)))
        default: logger.warning("the video window said something unknown: \(line)")
        }
    }

    /// On the program's reader thread, once its stdout closed and it was reaped.
    private func programEnded(_ ended: ChildProcess, status: Int32) {
        let hadWindow: Bool = condition.withLock {
            Glibc.close(ended.input)
            guard child?.pid == ended.pid else { return false }
            let had = xid != nil
            child = nil
            xid = nil
            self.ended = true
            frameHandler?(nil, .zero)
            condition.broadcast()
            return had
        }
        logger.info("video window ended", metadata: ["pid": "\(ended.pid)", "status": "\(status)"])
        if hadWindow { events(.windowGone) }
    }

    /// Sends `command` to the window, if there is one.
    func perform(_ command: VideoCommand) {
        switch command {
        case .setTitle(let text):
            // a title is one line of the protocol
            let line = String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
            condition.withLock { title = line }
            send("title \(line)")
        case .setFullscreen(let on): send("fullscreen \(on ? 1 : 0)")
        case .raise: send("raise")
        case .controls: break  // drawn in the pipeline (GStreamerEngine.showControls), not by the program
        case .setGravity(let new):
            let moved = condition.withLock {
                gravity = new
                return placeSink()
            }
            // fit and stretch share a frame: the sink's aspect changed, and it draws again now
            if !moved { condition.withLock { exposeHandler }?() }
        case .setPictureInPicture(let on):
            condition.withLock { pictureInPicture = on }
            send("pip \(on ? 1 : 0)")
        }
    }

    /// The video's size is known (at the preroll): the window takes it, and the player hears it.
    func resize(to size: VideoSize) {
        // the program may have ended since the sink got its window: then there is none to size
        guard condition.withLock({ child != nil && !ended && !quitting }) else { return }
        send("size \(size.width) \(size.height)")
        condition.withLock {
            videoSize = size
            placeSink()
        }
        events(.windowOpened(size))
    }

    /// Ends the program (its window closes) unless a sink got the window since `uses` was read.
    func close(unlessUsedSince seen: Int) {
        condition.withLock {
            guard uses == seen, let child, !ended else { return }
            Files.writeAll(Array("quit\n".utf8), to: child.input)
            quitting = true
        }
    }

    /// Tells the program where the sink's window goes (`VideoGravity.frame`) when that changed
    /// (true: it says "framed" once it moved it); holding the lock. Nothing until the program said
    /// its area.
    @discardableResult
    private func placeSink() -> Bool {
        guard let child, !ended, area != .zero else { return false }
        let placed = gravity.frame(video: videoSize, area: area)
        frameHandler?(placed, videoSize)
        guard placed != frame else { return false }
        frame = placed
        Files.writeAll(Array("frame \(placed.x) \(placed.y) \(placed.width) \(placed.height)\n".utf8), to: child.input)
        return true
    }

    private func send(_ line: String) {
        condition.withLock {
            guard let child, !ended else { return }
            Files.writeAll(Array((line + "\n").utf8), to: child.input)
        }
    }
}
