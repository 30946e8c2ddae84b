import CSDL2
import Glibc

/// An error SDL reported (`SDL_GetError`), with what was being done.
public struct SDLError: Error, CustomStringConvertible {
    public let description: String
    init(_ doing: String) { description = "\(doing): \(String(cString: SDL_GetError()))" }
}

/// One SDL2 window of Tonearm's own, which a video sink in another process draws into (its X11
/// window id). Thin Swift over SDL2: no policy. Confined to the thread that made it (SDL's video
/// calls belong to the thread that initialized the video subsystem).
public final class SDLWindow {
    // internal: SDLWindowGeometry.swift's extension uses it
    let window: OpaquePointer

    /// `SDL_Init(SDL_INIT_VIDEO)` with SDL's X11 driver, the window class `windowClass` (X11
    /// WM_CLASS, and the Wayland app id should SDL ever use Wayland), and no minimizing of a
    /// fullscreen window when it loses the focus. Once per process.
    public static func initialize(windowClass: String, appName: String) throws(SDLError) {
        setenv("SDL_VIDEO_X11_WMCLASS", windowClass, 1)
        setenv("SDL_VIDEO_WAYLAND_WMCLASS", windowClass, 1)
        SDL_SetHint(SDL_HINT_APP_NAME, appName)
        // the sink draws into an X11 window id: under Wayland this is XWayland's
        SDL_SetHint(SDL_HINT_VIDEODRIVER, "x11")
        SDL_SetHint(SDL_HINT_VIDEO_MINIMIZE_ON_FOCUS_LOSS, "0")
        // closing the window is a request its owner answers, not the end of the process
        SDL_SetHint(SDL_HINT_QUIT_ON_LAST_WINDOW_CLOSE, "0")
        guard SDL_Init(UInt32(SDL_INIT_VIDEO)) == 0 else { throw SDLError("SDL_Init") }
        // X events of windows SDL does not know (the video's child window's exposes) as events
        _ = SDL_EventState(SDL_SYSWMEVENT.rawValue, SDL_ENABLE)
    }

    /// `SDL_CreateWindow`: resizable, centred, shown.
    public init(title: String, width: Int, height: Int) throws(SDLError) {
        let flags = SDL_WINDOW_RESIZABLE.rawValue | SDL_WINDOW_SHOWN.rawValue
        guard let window = SDL_CreateWindow(title, tonearm_sdl_centered(), tonearm_sdl_centered(),
                                            Int32(clamping: max(width, 1)), Int32(clamping: max(height, 1)), flags) else {
            throw SDLError("SDL_CreateWindow")
        }
        self.window = window
    }

    deinit { SDL_DestroyWindow(window) }

    /// The window's X11 id (`SDL_GetWindowWMInfo`); nil when it is not an X11 window.
    public var x11WindowID: UInt64? {
        let id = tonearm_sdl_x11_window(window)
        return id == 0 ? nil : UInt64(id)
    }

    /// SDL's id of the window, which its events carry.
    public var id: UInt32 { SDL_GetWindowID(window) }

    public func setTitle(_ title: String) { SDL_SetWindowTitle(window, title) }

    /// `SDL_SetWindowSize`, the window's centre kept where it was.
    public func setSize(width: Int, height: Int) {
        var x: Int32 = 0, y: Int32 = 0, oldWidth: Int32 = 0, oldHeight: Int32 = 0
        SDL_GetWindowPosition(window, &x, &y)
        SDL_GetWindowSize(window, &oldWidth, &oldHeight)
        let newWidth = Int32(clamping: max(width, 1)), newHeight = Int32(clamping: max(height, 1))
        SDL_SetWindowSize(window, newWidth, newHeight)
        SDL_SetWindowPosition(window, max(0, x + (oldWidth - newWidth) / 2), max(0, y + (oldHeight - newHeight) / 2))
    }

    /// `SDL_SetWindowFullscreen` with the desktop's size (no mode change), or back.
    public func setFullscreen(_ on: Bool) {
        SDL_SetWindowFullscreen(window, on ? SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue : 0)
    }

    public var isFullscreen: Bool { SDL_GetWindowFlags(window) & SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue != 0 }

    /// `SDL_ShowWindow` then `SDL_RaiseWindow` (on X11, _NET_ACTIVE_WINDOW to the window manager).
    public func raise() {
        SDL_ShowWindow(window)
        SDL_RaiseWindow(window)
    }

    public func hide() { SDL_HideWindow(window) }

    /// `SDL_ShowWindow`: mapped again, the focus left where it is.
    public func show() { SDL_ShowWindow(window) }

    /// `SDL_SetWindowIcon` from `size`×`size` pixels, 0xAARRGGBB, row by row.
    public func setIcon(pixels: [UInt32], size: Int) {
        var pixels = pixels
        pixels.withUnsafeMutableBytes { bytes in
            guard let surface = SDL_CreateRGBSurfaceWithFormatFrom(bytes.baseAddress, Int32(size), Int32(size), 32, Int32(size * 4),
                                                                    SDL_PIXELFORMAT_ARGB8888.rawValue) else { return }
            SDL_SetWindowIcon(window, surface)  // SDL copies the pixels
            SDL_FreeSurface(surface)
        }
    }

    /// What `waitEvent` returns: the few events the window's owner acts on.
    public enum Event: Sendable, Equatable {
        /// The window manager's close (the title bar's button, Alt+F4).
        case closeRequested
        /// The window was shown, resized, moved, maximized or restored: its state may have changed.
        case windowChanged
        /// `pushUserEvent` was called.
        case user
        /// The pointer moved over the window.
        case pointerMoved
        case quit
        case other
        /// A key went down (again while held: SDL's key repeat), named as `SDL_GetKeyName` names
        /// its symbol in the keyboard's layout ("Space", "Left", "F"), with the modifiers held.
        case key(name: String, modifiers: KeyModifiers)
        /// A mouse button went down: SDL's button number (1 the left one) and how many clicks in a
        /// row it makes (2 for a double click, within SDL's double-click time and distance).
        case mouseButton(button: Int, clicks: Int)
        /// A file's path (SDL_DROPFILE, from a `text/uri-list`: SDL keeps only its `file:` URIs,
        /// decoded) or a text (SDL_DROPTEXT, from `text/plain`) dropped on the window.
        case dropped(String)
        /// The last of what one drop carried came (SDL_DROPCOMPLETE).
        case dropComplete
        /// An X11 window of this program's own that SDL does not know (the video's child) was
        /// uncovered: what is drawn in it must be drawn again.
        case exposed(windowID: UInt64)
    }

    /// The modifier keys held with a key (SDL_Keymod, left and right alike).
    public struct KeyModifiers: OptionSet, Sendable, Equatable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let shift = KeyModifiers(rawValue: 1 << 0)
        public static let control = KeyModifiers(rawValue: 1 << 1)
        public static let alt = KeyModifiers(rawValue: 1 << 2)
        /// The Super (Windows, Command) key.
        public static let gui = KeyModifiers(rawValue: 1 << 3)

        init(_ mod: UInt16) {
            let pairs: [(SDL_Keymod, KeyModifiers)] = [(KMOD_SHIFT, .shift), (KMOD_CTRL, .control), (KMOD_ALT, .alt), (KMOD_GUI, .gui)]
            self = KeyModifiers(pairs.filter { UInt32(mod) & $0.0.rawValue != 0 }.map(\.1))
        }
    }

    /// Waits in `SDL_WaitEvent` for the next event (no timer: SDL's X11 driver sleeps in poll).
    public static func waitEvent() -> Event {
        var event = SDL_Event()
        guard SDL_WaitEvent(&event) == 1 else { return .quit }
        switch SDL_EventType(event.type) {
        case SDL_QUIT: return .quit
        case SDL_USEREVENT: return .user
        case SDL_MOUSEMOTION: return .pointerMoved
        case SDL_KEYDOWN:
            let name = String(cString: SDL_GetKeyName(event.key.keysym.sym))
            return .key(name: name, modifiers: KeyModifiers(event.key.keysym.mod))
        case SDL_MOUSEBUTTONDOWN: return .mouseButton(button: Int(event.button.button), clicks: Int(event.button.clicks))
        case SDL_DROPFILE, SDL_DROPTEXT:
            // the text is the event's, for the receiver to free (SDL_DropEvent)
            guard let text = event.drop.file else { return .other }
            defer { SDL_free(text) }
            return .dropped(String(cString: text))
        case SDL_DROPCOMPLETE: return .dropComplete
        case SDL_SYSWMEVENT:
            let window = tonearm_sdl_x11_exposed(&event)
            return window == 0 ? .other : .exposed(windowID: UInt64(window))
        case SDL_WINDOWEVENT:
            switch SDL_WindowEventID(UInt32(event.window.event)) {
            case SDL_WINDOWEVENT_CLOSE: return .closeRequested
            case SDL_WINDOWEVENT_SHOWN, SDL_WINDOWEVENT_SIZE_CHANGED, SDL_WINDOWEVENT_RESIZED, SDL_WINDOWEVENT_MAXIMIZED,
                 SDL_WINDOWEVENT_RESTORED: return .windowChanged
            default: return .other
            }
        default: return .other
        }
    }

    /// `SDL_PushEvent` of an SDL_USEREVENT, which wakes `waitEvent`: callable from any thread.
    public static func pushUserEvent() {
        var event = SDL_Event()
        event.type = SDL_USEREVENT.rawValue
        SDL_PushEvent(&event)
    }

    public static func quit() { SDL_Quit() }
}
