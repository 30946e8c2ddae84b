/// A video's natural size in pixels, pixel aspect applied (a 720x576 PAL frame with a 16:15 pixel
/// aspect is 768x576); zero when there is no video.
public struct VideoSize: Hashable, Sendable, Codable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
    public static let zero = VideoSize(width: 0, height: 0)
    public var description: String { "\(width)x\(height)" }
}

/// What a client can read of the video (design brief, "Video is engine-side, state is
/// model-side"): whether the current item has video and its size, which belong to the item, and
/// whether there is a window and whether it is fullscreen, which belong to the player. Later
/// slices add gravity, picture-in-picture and the controls here.
public struct VideoState: Hashable, Sendable {
    /// The current item's video reached a window (its first frame is about to show).
    public var hasVideo = false
    public var size = VideoSize.zero
    /// Tonearm's window exists: what MPRIS `CanRaise` and `CanSetFullscreen` say.
    public var hasWindow = false
    /// The window covers the screen (MPRIS `Fullscreen`); false without a window.
    public var isFullscreen = false
    /// Gravity and picture-in-picture (`VideoSettings.swift`): the player's, kept with no window.
    public var settings = VideoSettings()
    /// `ControlsVisible` (`ControlsBar`), one of the settings.
    public var controlsVisible: Bool {
        get { settings.controlsVisible }
        set { settings.controlsVisible = newValue }
    }
    public init() {}
}

/// What the engine tells of the video and of the window it shows it in. The window is the
/// engine's one window, not a load's: `windowFullscreen`, `windowClosed` and `windowGone` are
/// taken whatever the generation (the window outlives the load that opened it: it closes after a
/// stop, whose load is stale by then); `windowOpened` sets the item's video only for the
/// current load.
public enum VideoEvent: Sendable, Equatable, Codable {
    /// The load's video got the window, at this size (zero: not known yet): its first frame is
    /// about to show. Again with the size once it is known.
    case windowOpened(VideoSize)
    /// The window went fullscreen (true) or back (false), asked or by the window manager.
    case windowFullscreen(Bool)
    /// The person closed the window (the window manager's close): the current item stops.
    case windowClosed
    /// The window is gone: the queue moved to an item without video, or it ended.
    case windowGone
    /// The pointer moved over the window (the program says so at most every 250 ms).
    case pointerMoved
    /// The person pressed a key, double-clicked or dropped something in the window (`WindowInput`).
    case input(WindowInput)
}

/// What the player asks of the window; ignored by an engine without one.
public enum VideoCommand: Hashable, Sendable, Codable {
    case setTitle(String)
    case setFullscreen(Bool)
    /// Show it and give it the focus (MPRIS `Raise`).
    case raise
    /// The on-screen bar's text, or nil: the bar hides (`ControlsBar`).
    case controls(String?)
    /// How the video fills the window (kept by the engine for a window to come).
    case setGravity(VideoGravity)
    /// Picture-in-picture on or off (kept by the engine for a window to come).
    case setPictureInPicture(Bool)
}

extension PlayerMachine {
    /// The window's title for `item`: its title tag, else its file or stream name.
    static func windowTitle(_ item: Item) -> String {
        item.metadata.title ?? item.uri.displayName
    }

    /// A video event of the engine (see `VideoEvent` for which generations count); true when it
    /// was one.
    mutating func handleVideo(_ event: EngineEvent, of generation: Generation, current: Generation?) -> Bool {
        guard case .video(let videoEvent) = event else { return false }
        var next = video
        switch videoEvent {
        case .windowOpened(let size):
            next.hasWindow = true
            if generation == current, let item = currentItem {
                if !next.hasVideo { command(.video(.setTitle(Self.windowTitle(item)))) }
                next.hasVideo = true
                if size != .zero { next.size = size }
            }
        case .windowFullscreen(let on):
            next.isFullscreen = on && next.hasWindow
        case .windowClosed:
            // closing the window stops the item it showed (which forgets its video); the service goes on
            if currentItem != nil { stop() }
            return true
        case .windowGone:
            next.hasWindow = false
            next.isFullscreen = false
            hideControls()
        case .pointerMoved:
            return true  // taken by `handle` with its instant
        case .input:
            return true  // taken first by handle(_:of:at:), which has the instant
        }
        setVideo(next)
        return true
    }

    /// The current item's metadata changed: the window's title follows it.
    mutating func retitleWindow() {
        if video.hasWindow, video.hasVideo, let item = currentItem { command(.video(.setTitle(Self.windowTitle(item)))) }
    }

    /// The item's video is forgotten when its load is released (the window stays until the engine
    /// says it is gone: a video item after a video item keeps it).
    mutating func forgetItemVideo() {
        hideControls()
        var next = video
        next.hasVideo = false
        next.size = .zero
        setVideo(next)
    }

    mutating func setVideo(_ next: VideoState) {
        guard next != video else { return }
        video = next
        emit(.videoChanged(next))
    }

    /// MPRIS `Fullscreen`: asked of the window, the property changes when the window says it did;
    /// false (nothing done) without a window.
    @discardableResult
    public mutating func setFullscreen(_ on: Bool) -> Bool {
        guard video.hasWindow else { return false }
        // a fullscreen window is no picture-in-picture
        if on { setPictureInPicture(false) }
        command(.video(.setFullscreen(on)))
        return true
    }

    /// MPRIS `Raise`: false (nothing done) without a window.
    @discardableResult
    public mutating func raiseWindow() -> Bool {
        guard video.hasWindow else { return false }
        command(.video(.raise))
        return true
    }
}
