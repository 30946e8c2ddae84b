import Basics
import Dispatch
import GStreamer
import Logging
import PlayerModel

/// The video output, the one owner of: which video sink a pipeline gets (`choose`), the window it
/// draws into (`VideoWindow`, whose program runs only while video shows), the gravity, the
/// on-screen bar (a `textoverlay` in the pipeline), and the redraw of a paused frame that shows a
/// change of either. The current pipeline and its load are the engine's: `current` lends them, on
/// the engine's queue. Confined to that queue, except where a method says otherwise (the window's
/// program and the bus's sync handler call in from threads of their own).
final class VideoOutput: @unchecked Sendable {
    // @unchecked: `videoShows` is guarded by `lock`; `windows` is thread-safe (its own lock); the
    // rest is confined to `queue`.

    // GstPlayFlags is not public (gst/playback/gstplay-enum.h): VIDEO 0x1, TEXT 0x4.
    private static let flagVideo: UInt32 = 0x1, flagText: UInt32 = 0x4
    /// NATIVE_VIDEO 0x40: playsink puts no converter or scaler of its own in front of the video sink.
    private static let flagNativeVideo: UInt32 = 0x40

    private let queue: DispatchQueue
    private let logger: Logger
    /// The factory `TONEARM_VIDEO_SINK` names, or "auto" (`VideoSinkChoice`).
    private let configuredSink: String
    private let teardown: PipelineTeardown
    /// Runs `body` with the engine's current pipeline and its load, if there is one; on `queue`.
    private let current: (_ body: (EnginePipeline, inout Load) -> Void) -> Void
    /// Tells the player an event of the window; on `queue`.
    private let tell: (VideoEvent) -> Void

    /// The video window (`VideoWindow.swift`); the program behind it runs only while video shows.
    private let windows: VideoWindow
    private let lock = Lock()
    /// See `whileShows`; guarded by `lock`.
    private var videoShows: (@Sendable (VideoSize?) -> Void)?
    /// The on-screen bar's text (nil: hidden), drawn by the `textoverlay` of the pipeline's video
    /// (see "Controls" below); kept for a pipeline built while it shows.
    private(set) var controlsText: String?
    /// How the video fills the window: glimagesink keeps the aspect unless it is `stretch`.
    private(set) var gravity = VideoGravity.fit
    /// The sink chosen for each display name (`VideoSinkChoice`: OpenGL probed once, at its first
    /// video sink there).
    private var videoSinks: [String: VideoSinkChoice] = [:]
    /// Where the sink's window is in the video window (`VideoWindow`'s last "frame"; nil: not
    /// placed yet, or no window), and the video's size then: the software path scales to them.
    private var sinkFrame: (frame: VideoFrame?, video: VideoSize) = (nil, .zero)

    init(queue: DispatchQueue, logger: Logger, configuredSink: String, helper: String, teardown: PipelineTeardown,
         current: @escaping (_ body: (EnginePipeline, inout Load) -> Void) -> Void, tell: @escaping (VideoEvent) -> Void) {
        self.queue = queue
        self.logger = logger
        self.configuredSink = configuredSink
        self.teardown = teardown
        self.current = current
        self.tell = tell
        windows = VideoWindow(helper: helper, logger: logger)
        windows.setEventHandler { [weak self] event in self?.heard(event) }
        windows.setExposeHandler { [weak self] in self?.exposeVideo() }
        windows.setFrameHandler { [weak self] frame, video in self?.sinkPlaced(frame, video: video) }
    }

    /// Runs `action` with the video's size when a sink gets the video window or the video's size is
    /// known (on the thread that asked), and with nil once the window program ended (on its reader
    /// thread): while a video shows.
    func whileShows(_ action: @escaping @Sendable (VideoSize?) -> Void) {
        lock.withLock { videoShows = action }
    }

    /// An event of the window (on its reader thread): to `whileShows`' action at once, and to the
    /// player from the queue, as the load that asked for it (`windowOpened`), the others whatever
    /// the load (the player takes them whatever the generation).
    private func heard(_ event: VideoEvent) {
        switch event {
        case .windowOpened(let size): lock.withLock { videoShows }?(size)
        case .windowGone: lock.withLock { videoShows }?(nil)
        default: break
        }
        queue.async { [self] in tell(event) }
    }

    /// A command of the player's for the video: the bar is drawn in the pipeline, the rest is the
    /// window's (the gravity both).
    func perform(_ command: VideoCommand) {
        switch command {
        case .controls(let text): showControls(text)
        case .setGravity(let gravity):
            setGravity(gravity)
            windows.perform(command)
        default: windows.perform(command)
        }
    }

    // MARK: Sinks

    /// Sets `pipeline`'s video flags and sink for `display` (nil: no video), if they are not set
    /// for it already. In NULL only (a fresh or released pipeline).
    func choose(for pipeline: EnginePipeline, display: VideoDisplay?) throws {
        pipeline.lock.withLock { pipeline.display = display }
        guard pipeline.videoSetFor != .some(display) else { return }
        var flags = pipeline.playbin.flags("flags")
        if let display {
            flags |= Self.flagVideo | Self.flagText
            // glimagesink scales on a GPU, the software path on the CPU, ximagesink renders
            // anywhere X does, where xvimagesink finds no Xv port; each draws into the window it is
            // given (GstVideoOverlay); named, so autovideosink never tries kmssink (trap 12)
            let (sink, scaled) = try makeSink(for: display)
            // when a loop's wrap reaches the window (`SegmentLoop`): the sink that draws it
            (scaled?.sink ?? sink).watchForSegments()
            pipeline.playbin.set("video-sink", sink)
            pipeline.videoSink = sink
            pipeline.lock.withLock { pipeline.scaledSink = scaled }
            // the software path scales itself: playsink's own videoscale, in front of it, would
            // otherwise do it (a basetransform offers the caps downstream wants first, so the first
            // scaler upstream takes the frame's size), always with borders, stretch or not
            if scaled != nil { flags |= Self.flagNativeVideo } else { flags &= ~Self.flagNativeVideo }
            pipeline.controls = makeControls()
            if let controls = pipeline.controls { pipeline.playbin.set("video-filter", controls) }
        } else {
            flags &= ~(Self.flagVideo | Self.flagText | Self.flagNativeVideo)
            // legacy playbin still tries real video sinks while autoplugging a video stream, and
            // plugins-bad's dfbvideosink crashes in libdirectfb without a display: name a fakesink
            pipeline.playbin.set("video-sink", try Element(factory: "fakesink"))
            pipeline.videoSink = nil
            pipeline.lock.withLock { pipeline.scaledSink = nil }
        }
        pipeline.playbin.set("flags", flags: flags)
        pipeline.videoSetFor = .some(display)
    }

    /// The sink for a video on `display` (`VideoSinkChoice`): glimagesink where OpenGL opens on a
    /// GPU, else the software path, which scales on the CPU (`ScaledVideoSink`, with it); a factory
    /// `TONEARM_VIDEO_SINK` names as it is. Its events are left to our window, whose program takes
    /// the pointer.
    private func makeSink(for display: VideoDisplay) throws -> (Element, ScaledVideoSink?) {
        let configured = configuredSink
        var choice = videoSinks[display.name] ?? VideoSinkChoice.choose(configured, opens: false, renderer: nil)
        if VideoSinkChoice.probesOpenGL(configured), videoSinks[display.name] != .scaled {
            // made first: its plugin loads libgstgl, where the probe finds GstGL (dlsym)
            if let sink = try? Element(factory: "glimagesink") {
                let probing = videoSinks[display.name] == nil
                let (opens, renderer) = sink.useGLDisplay(display.name, probe: probing)
                if probing {
                    choice = VideoSinkChoice.choose(configured, opens: opens, renderer: renderer)
                    if opens {
                        let kind = VideoSinkChoice.isSoftwareRenderer(renderer) ? "software" : "hardware"
                        logger.info("OpenGL on \(display.name): \(renderer ?? "renderer unknown") (\(kind))")
                    } else {
                        logger.warning("OpenGL does not open on \(display.name)")
                    }
                }
                if choice == .openGL && opens {
                    if probing { tellChoice(choice, display) }
                    configure(sink)
                    return (sink, nil)
                }
            }
            choice = .scaled
        }
        if videoSinks[display.name] == nil { tellChoice(choice, display) }
        guard case .factory(let factory) = choice else {
            // the software path (glimagesink, when chosen, was returned above)
            let scaled = try ScaledVideoSink(display: display.name)
            scaled.scale(to: sinkFrame.frame, video: sinkFrame.video)
            return (scaled.bin, scaled)
        }
        let sink = try Element(factory: factory)
        sink.set("display", display.name)
        configure(sink)
        // with neither events nor exposes to handle, ximagesink starts no event thread, which
        // would look for them 20 times a second (ximagesink.c, gst_ximagesink_event_thread): the
        // window program tells of exposes ("exposed"), and the sink is asked to draw again
        if factory == "ximagesink" || factory == "xvimagesink" { sink.set("handle-expose", false) }
        return (sink, nil)
    }

    /// Remembers the sink chosen for `display` and logs it, once per display.
    private func tellChoice(_ choice: VideoSinkChoice, _ display: VideoDisplay) {
        videoSinks[display.name] = choice
        logger.info("video sink on \(display.name): \(choice.description)")
    }

    /// A sink's gravity, and its events: a sink that takes the pointer's buttons on its window
    /// (handle-events) keeps them from our window program (picture-in-picture's drag).
    private func configure(_ sink: Element) {
        sink.set("force-aspect-ratio", gravity != .stretch)
        sink.set("handle-events", false)
    }

    private func setGravity(_ gravity: VideoGravity) {
        self.gravity = gravity
        current { pipeline, _ in
            // the software path's gravity is its frame's (`sinkPlaced`)
            guard pipeline.lock.withLock({ pipeline.scaledSink == nil }) else { return }
            pipeline.videoSink?.setForceAspectRatio(gravity != .stretch)
        }
    }

    // MARK: Window

    /// The window for `pipeline`'s sink, which asked for one (prepare-window-handle) with the video
    /// at `width` x `height`; nil when the pipeline shows no video. On a streaming thread, in the
    /// bus's sync handler: the sink draws into our window (trap 12).
    func window(for pipeline: EnginePipeline, width: Int, height: Int) -> UInt64? {
        guard let (display, scaled) = pipeline.lock.withLock({ pipeline.display.map { ($0, pipeline.scaledSink) } })
        else { return nil }
        // the software path's ximagesink sees the scaled size: the video's is what enters its bin
        let size = scaled?.bin.sinkVideoSize ?? (width, height)
        let window = windows.window(for: VideoSize(width: size.width, height: size.height), display: display)
        if window != nil { pipeline.lock.withLock { pipeline.showedVideo = true } }
        return window
    }

    /// `pipeline`'s load prerolled: an item without video after one with it closes the window; one
    /// with video has its size now (the sink asked for the window before its caps were set).
    func prerolled(_ pipeline: EnginePipeline) {
        if !pipeline.lock.withLock({ pipeline.showedVideo }) {
            closeWindow()
        } else if let size = pipeline.playbin.playbinVideoSize {
            windows.resize(to: VideoSize(width: size.width, height: size.height))
            pipeline.videoSink?.reconfigureSink()
        }
    }

    /// The window was resized or the sink's area moved: the sink draws its last frame again,
    /// which a paused video needs (glimagesink takes its window's new size when it draws;
    /// ximagesink reads its window's size at an expose: ximagesink.c gst_ximagesink_expose).
    private func exposeVideo() {
        queue.async { [self] in current { pipeline, _ in pipeline.overlay?.exposeVideo() } }
    }

    /// The video window placed the sink's window at `frame` (nil: the window is gone): the software
    /// path scales to it from the next frame, and a paused video is drawn again at the new size
    /// (an expose alone would draw the old image again, which ximagesink centres in its window,
    /// cut at its edges: gst_ximagesink_ximage_put, gst_video_center_rect).
    private func sinkPlaced(_ frame: VideoFrame?, video: VideoSize) {
        queue.async { [self] in
            guard frame != sinkFrame.frame || video != sinkFrame.video else { return }
            sinkFrame = (frame, video)
            current { pipeline, load in
                guard let scaled = pipeline.lock.withLock({ pipeline.scaledSink }) else { return }
                scaled.scale(to: frame, video: video)
                if frame != nil { redrawPausedFrame(pipeline, &load) }
            }
        }
    }

    /// Ends the window program once the pipelines that drew into it are in NULL (a sink drawing
    /// into a destroyed window is an X error, fatal to the process), unless a sink got the window
    /// again meanwhile. Waits on a thread of its own, never this queue.
    func closeWindow() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard windows.isOpen else { return }
        let seen = windows.uses
        detachThread(name: "tonearm.video-close") { [weak self] in
            guard let self else { return }
            queue.sync {}  // the release commands queued so far have run
            _ = teardown.waitForDisposals(timeout: PipelineTeardown.teardownWait)
            queue.async { [self] in
                // an item loaded meanwhile decides at its preroll: its sink takes the window, or one
                // without video closes it then. Closing now, before its sink asked, closed and opened
                // the window again between two videos (fullscreen and place lost; VideoLoopTests)
                var decidesAtPreroll = false
                current { pipeline, load in decidesAtPreroll = !load.prerolled || pipeline.lock.withLock { pipeline.showedVideo } }
                if !decidesAtPreroll { windows.close(unlessUsedSince: seen) }
            }
        }
    }

    // MARK: Controls

    /// The on-screen bar of the video window: a `textoverlay` as playbin's video filter, before
    /// whichever sink draws (ximagesink blends it into the frame, glimagesink gets it as an
    /// overlay composition), silent while the bar is hidden. Nil when the pango plugin is missing:
    /// the video plays with no bar.
    private func makeControls() -> Element? {
        guard let overlay = try? Element(factory: "textoverlay") else {
            logger.warning("no textoverlay (gstreamer1.0-x's pango plugin): the video window shows no bar")
            return nil
        }
        // GstBaseTextOverlayVAlign bottom = 1, GstBaseTextOverlayHAlign left = 0 (gst-inspect-1.0 textoverlay)
        overlay.set("valignment", Int32(1))
        overlay.set("halignment", Int32(0))
        overlay.set("shaded-background", true)
        overlay.set("font-desc", "Sans Bold 18")
        apply(controlsText, to: overlay)
        return overlay
    }

    private func apply(_ text: String?, to overlay: Element) {
        if let text { overlay.set("text", text) }
        overlay.set("silent", text == nil)
    }

    /// Shows the bar with `text`, or hides it (nil). A playing video shows the change with its
    /// next frame; a paused one shows the frame it drew before, so that frame is drawn again.
    private func showControls(_ text: String?) {
        controlsText = text
        current { pipeline, load in
            guard let overlay = pipeline.controls else { return }
            apply(text, to: overlay)
            redrawPausedFrame(pipeline, &load)
        }
    }

    // MARK: Redraw of a paused frame

    /// A paused pipeline's sink holds the frame the overlay drew into before (ximagesink keeps the
    /// blended image, and a paused pipeline pushes no other): a flushing seek to where it is
    /// prerolls that frame again through the overlay. The player never hears of it (`endsRedraw`).
    private func redrawPausedFrame(_ pipeline: EnginePipeline, _ load: inout Load) {
        if load.redrawing {
            load.redrawAgain = true
            return
        }
        guard load.prerolled, pipeline.playbin.currentState == (.paused, .voidPending),
              let position = load.toldPosition ?? pipeline.playbin.queryPosition() else { return }
        load.redrawing = true
        if !pipeline.playbin.seek(rate: load.rate, flags: [.flush, .accurate], start: position) { load.redrawing = false }
    }

    /// A message of the current pipeline: true when it is a redraw's own (its state changes,
    /// through PAUSED again, and its ASYNC_DONE, which ends it, and then runs the redraw asked for
    /// meanwhile), which the player never hears of.
    func endsRedraw(_ message: Message) -> Bool {
        var own = false
        current { pipeline, load in
            guard load.redrawing else { return }
            switch message.kind {
            case .stateChanged: own = message.isFromPipeline
            case .asyncDone:
                load.redrawing = false
                own = true
                if load.redrawAgain {
                    load.redrawAgain = false
                    redrawPausedFrame(pipeline, &load)
                }
            default: break
            }
        }
        return own
    }
}
