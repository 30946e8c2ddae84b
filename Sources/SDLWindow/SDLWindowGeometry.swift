import CSDL2

/// A rectangle of the screen or of a window, in pixels.
public struct SDLRect: Equatable, Sendable {
    public var x, y, width, height: Int
    public init(x: Int, y: Int, width: Int, height: Int) {
        (self.x, self.y, self.width, self.height) = (x, y, width, height)
    }
}

/// The window's geometry (issue 28, slice 2): the child window the sink draws into, the window's
/// place and size, its decoration, staying on top and dragging. Thin: no policy.
extension SDLWindow {
    /// A child X11 window covering this one, for the video sink (`tonearm_sdl_x11_child`); nil
    /// when this is not an X11 window.
    public func makeVideoChild() -> UInt64? {
        let id = tonearm_sdl_x11_child(window)
        return id == 0 ? nil : UInt64(id)
    }

    /// `XMoveResizeWindow` of the child `child` (x and y may be negative: this window clips it).
    public func placeChild(_ child: UInt64, _ frame: SDLRect) {
        tonearm_sdl_x11_place(window, UInt(child), Int32(clamping: frame.x), Int32(clamping: frame.y),
                              Int32(clamping: frame.width), Int32(clamping: frame.height))
    }

    /// Where the window's client area is on the screen and its size (`SDL_GetWindowPosition`,
    /// `SDL_GetWindowSize`).
    public var frame: SDLRect {
        var x: Int32 = 0, y: Int32 = 0, width: Int32 = 0, height: Int32 = 0
        SDL_GetWindowPosition(window, &x, &y)
        SDL_GetWindowSize(window, &width, &height)
        return SDLRect(x: Int(x), y: Int(y), width: Int(width), height: Int(height))
    }

    /// `SDL_SetWindowSize` then `SDL_SetWindowPosition`.
    public func setFrame(_ frame: SDLRect) {
        SDL_SetWindowSize(window, Int32(clamping: max(frame.width, 1)), Int32(clamping: max(frame.height, 1)))
        SDL_SetWindowPosition(window, Int32(clamping: frame.x), Int32(clamping: frame.y))
    }

    /// The usable part of the screen the window is on (`SDL_GetDisplayUsableBounds`: without the
    /// panels the window manager reserves); nil when SDL cannot tell.
    public var usableBounds: SDLRect? {
        var rect = SDL_Rect()
        let index = SDL_GetWindowDisplayIndex(window)
        guard index >= 0, SDL_GetDisplayUsableBounds(index, &rect) == 0 else { return nil }
        return SDLRect(x: Int(rect.x), y: Int(rect.y), width: Int(rect.w), height: Int(rect.h))
    }

    /// `SDL_SetWindowBordered`: the window manager's frame and title bar (X11: _MOTIF_WM_HINTS).
    public func setBordered(_ on: Bool) { SDL_SetWindowBordered(window, on ? SDL_TRUE : SDL_FALSE) }

    /// `SDL_SetWindowAlwaysOnTop` (SDL 2.0.16; X11: _NET_WM_STATE_ABOVE).
    public func setAlwaysOnTop(_ on: Bool) { SDL_SetWindowAlwaysOnTop(window, on ? SDL_TRUE : SDL_FALSE) }

    /// The window manager's frame around the window as SDL last heard of it
    /// (`SDL_GetWindowBordersSize`, from X11's _NET_FRAME_EXTENTS): top, left, bottom, right.
    public var borders: (top: Int, left: Int, bottom: Int, right: Int) {
        var top: Int32 = 0, left: Int32 = 0, bottom: Int32 = 0, right: Int32 = 0
        _ = SDL_GetWindowBordersSize(window, &top, &left, &bottom, &right)
        return (Int(top), Int(left), Int(bottom), Int(right))
    }

    /// `SDL_PumpEvents`: SDL reads what the window system sent (events stay queued for `waitEvent`).
    public static func pumpEvents() { SDL_PumpEvents() }

    /// `SDL_SetWindowHitTest`: true makes every point of the window drag it.
    public func setDraggable(_ on: Bool) { _ = tonearm_sdl_set_draggable(window, on ? 1 : 0) }
}
