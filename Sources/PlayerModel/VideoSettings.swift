/// How the video fills its window (the extension's `VideoGravity`), named as clients write it.
public enum VideoGravity: String, Sendable, Codable, CaseIterable {
    /// The whole picture, aspect kept: black bars on the sides or above and below (letterbox,
    /// pillarbox). The default.
    case fit
    /// The whole window, aspect kept: the picture is cropped on the axis where it is too long.
    case fill
    /// The whole window and the whole picture: the aspect follows the window's.
    case stretch

    /// Where the sink's drawing area goes inside a window of `area` (x, y, width, height; x and y
    /// may be negative: the window clips what lies outside) for a video of `video`, and whether
    /// the sink must keep the aspect inside that area. `fill` is an area of the video's aspect
    /// that covers the window, centred; the others are the window itself. A zero size on either
    /// side gives the window.
    public func frame(video: VideoSize, area: VideoSize) -> VideoFrame {
        let whole = VideoFrame(x: 0, y: 0, width: area.width, height: area.height, keepsAspect: self != .stretch)
        guard self == .fill, video.width > 0, video.height > 0, area.width > 0, area.height > 0 else { return whole }
        // the wider of the two ratios wins: scale the video until both of its sides cover the area
        // (products in Double: sizes from the window and the video never trap)
        let videoAspect = Double(video.width) / Double(video.height)
        let areaAspect = Double(area.width) / Double(area.height)
        var width = area.width, height = area.height
        if videoAspect > areaAspect {
            width = Int((Double(area.height) * videoAspect).rounded())
        } else {
            height = Int((Double(area.width) / videoAspect).rounded())
        }
        return VideoFrame(x: (area.width - width) / 2, y: (area.height - height) / 2, width: width, height: height, keepsAspect: true)
    }
}

/// The drawing area of a video sink inside its window (see `VideoGravity.frame`).
public struct VideoFrame: Hashable, Sendable, CustomStringConvertible {
    public var x, y, width, height: Int
    public var keepsAspect: Bool
    public init(x: Int, y: Int, width: Int, height: Int, keepsAspect: Bool) {
        (self.x, self.y, self.width, self.height, self.keepsAspect) = (x, y, width, height, keepsAspect)
    }
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// The window's settings a client sets (extension `VideoGravity`, `PictureInPicture`,
/// `ControlsVisible`): the player's, not the window's, so they can be set with no window, apply
/// when one opens, and are saved with the queue.
public struct VideoSettings: Hashable, Sendable {
    public var gravity: VideoGravity
    /// A small undecorated window, always on top, in the screen's bottom-right corner.
    public var pictureInPicture: Bool
    /// Whether the on-screen bar shows when the pointer moves (`ControlsBar`).
    public var controlsVisible: Bool
    public init(gravity: VideoGravity = .fit, pictureInPicture: Bool = false, controlsVisible: Bool = true) {
        self.gravity = gravity
        self.pictureInPicture = pictureInPicture
        self.controlsVisible = controlsVisible
    }
}

extension PlayerMachine {
    /// `VideoGravity`: told to the engine at once (it keeps it for a window to come).
    public mutating func setVideoGravity(_ gravity: VideoGravity) {
        change(\.gravity, to: gravity, telling: .setGravity(gravity))
    }

    /// `PictureInPicture`: told to the engine at once (it keeps it for a window to come). Turning
    /// it on leaves fullscreen, which the window says (`windowFullscreen(false)`).
    public mutating func setPictureInPicture(_ on: Bool) {
        change(\.pictureInPicture, to: on, telling: .setPictureInPicture(on))
    }

    /// A setting changed: the engine is told at once (it keeps it for a window to come), and the
    /// video state announces it; nothing when it is what it was.
    private mutating func change<Value: Equatable>(_ setting: WritableKeyPath<VideoSettings, Value>, to value: Value,
                                                   telling engine: VideoCommand) {
        guard video.settings[keyPath: setting] != value else { return }
        var next = video
        next.settings[keyPath: setting] = value
        command(.video(engine))
        setVideo(next)
    }

    /// At a restore: the saved settings, and the engine told those that are not its defaults.
    mutating func restoreVideoSettings(_ saved: VideoSettings) {
        setVideoGravity(saved.gravity)
        setPictureInPicture(saved.pictureInPicture)
        setControlsVisible(saved.controlsVisible)
    }
}
