import Glibc
import SDLWindow

/// Picture-in-picture for tonearm-video's window ("pip 0|1" on its stdin): a quarter of the
/// screen's width at the video's aspect, undecorated, always on top, in the screen's bottom-right
/// corner with a small margin, dragged from anywhere; off, the window as large and where it was.
@MainActor struct PictureInPicture {
    let window: SDLWindow
    /// The window's place and size before picture-in-picture; nil while it is off.
    private var normal: SDLRect?
    /// The video's size, from the last "size" line (nil: the window's own aspect).
    private var video: (width: Int, height: Int)?
    private static let margin = 16

    init(window: SDLWindow) { self.window = window }

    mutating func set(_ on: Bool) {
        guard on != (normal != nil) else { return }
        if on {
            if window.isFullscreen { window.setFullscreen(false) }
            normal = window.frame
            window.setBordered(false)
            window.setAlwaysOnTop(true)
            window.setDraggable(true)
            awaitBorders(present: false)
            place()
        } else if let normal {
            self.normal = nil
            window.setDraggable(false)
            window.setAlwaysOnTop(false)
            window.setBordered(true)
            awaitBorders(present: true)
            window.setFrame(normal)
        }
    }

    /// A new video size: true when picture-in-picture took it (the small window gets its aspect,
    /// and the normal window its size, centred where it was).
    mutating func resize(video size: (width: Int, height: Int)) -> Bool {
        video = size
        guard var normal else { return false }
        normal.x += (normal.width - size.width) / 2
        normal.y += (normal.height - size.height) / 2
        normal.width = size.width
        normal.height = size.height
        self.normal = SDLRect(x: max(normal.x, 0), y: max(normal.y, 0), width: normal.width, height: normal.height)
        place()
        return true
    }

    /// SDL places a window's frame from the borders it last heard of (X11_SetWindowPosition
    /// subtracts _NET_FRAME_EXTENTS), which the window manager changes some time after
    /// `setBordered`: waits, at most 250 ms, for them to come or go before the window is placed.
    private func awaitBorders(present: Bool) {
        for _ in 0..<25 {
            SDLWindow.pumpEvents()
            if (window.borders.top > 0) == present { return }
            usleep(10_000)
        }
    }

    private func place() {
        let current = window.frame
        let screen = window.usableBounds ?? SDLRect(x: 0, y: 0, width: max(current.width * 4, 640), height: max(current.height * 4, 480))
        let (videoWidth, videoHeight) = video ?? (current.width, current.height)
        let width = max(screen.width / 4, 64)
        let height = videoWidth > 0 ? max(Int((Double(width) * Double(videoHeight) / Double(videoWidth)).rounded()), 36) : width * 9 / 16
        window.setFrame(SDLRect(x: screen.x + screen.width - width - Self.margin, y: screen.y + screen.height - height - Self.margin,
                                width: width, height: height))
    }
}
