import Basics
import Glibc
import SDLWindow
import Synchronization

// tonearm-video: the window tonearmd shows video in, in a process of its own so that tonearmd
// maps no window library while it plays audio (docs/video.md). tonearmd starts it when an item's
// video asks for a window and ends it when the queue moves to an item without video or ends.
//
// A line protocol on stdin/stdout (tonearmd's side: Sources/PlayerEngine/VideoWindow.swift):
//   out: "window <X11 id>" once the window exists; "fullscreen 0|1" when that changes;
//        "motion" when the pointer moves over the window, at most every 250 ms;
//        "closed" when the person closes the window (it is hidden, not destroyed: tonearmd's video
//        sink may still draw into it until tonearmd says "quit");
//        "area <width> <height>": the window's drawing area, at first and whenever it changes;
//        "framed" once a "frame" is applied (the sink may draw its last frame again);
//        "exposed" when the sink's window was uncovered (the sink draws its last frame again)
//   in:  "title <text>", "size <width> <height>", "fullscreen 0|1", "raise", "show" (shown again
//        after a close, without the focus), "quit" (end of input is "quit" too);
//        "frame <x> <y> <width> <height>": where the sink's window goes inside the area (x and y
//        may be negative: "fill" gravity, clipped by the window); "pip 0|1": picture-in-picture
//   out, what the person does (tonearmd's player decides what it means: PlayerModel/WindowInput.swift):
//        "key <name>" for a key pressed without Ctrl, Alt or Super (SDL_GetKeyName: "Space",
//        "Left", "F"; again while held, SDL's key repeat); "double-click" for each second click
//        of the first button in a run; "drop <text>" for each path or text of a drop, then "drop-end"
//        (`%`, line feeds and carriage returns percent-escaped: a file's name may hold them)
// The id said in "window" is a child window of the program's own, which "frame" moves; the sink
// draws into it (see Sources/SDLWindow/SDLWindowGeometry.swift).
// Usage: tonearm-video WIDTH HEIGHT TITLE

/// Commands read from stdin by the reader thread, taken by the window's thread.
final class Mailbox: Sendable {
    private let lines = Mutex<[String]>([])
    func post(_ line: String) {
        lines.withLock { $0.append(line) }
        SDLWindow.pushUserEvent()
    }
    func take() -> [String] { lines.withLock { lines in defer { lines.removeAll() }; return lines } }
}

func say(_ line: String) {
    // one write per line: tonearmd reads whole lines
    let text = line + "\n"
    _ = text.withCString { write(1, $0, strlen($0)) }
}

/// The icon: a record (dark disc, a lighter groove, a red label), drawn here rather than read from
/// packaging/icons/tonearm.svg, which would need librsvg in this process.
func icon(size: Int) -> [UInt32] {
    var pixels = [UInt32](repeating: 0, count: size * size)
    let c = Double(size - 1) / 2
    for y in 0..<size {
        for x in 0..<size {
            let r = ((Double(x) - c) * (Double(x) - c) + (Double(y) - c) * (Double(y) - c)).squareRoot() / c
            pixels[y * size + x] = r > 1 ? 0 : r < 0.3 ? 0xFFD0_3030 : (r > 0.62 && r < 0.68) ? 0xFF60_6060 : 0xFF20_2020
        }
    }
    return pixels
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let width = Int(arguments[1]), let height = Int(arguments[2]) else {
    FileHandleShim.error("usage: tonearm-video WIDTH HEIGHT TITLE")
    exit(2)
}

enum FileHandleShim {
    static func error(_ text: String) { _ = (text + "\n").withCString { write(2, $0, strlen($0)) } }
}

let window: SDLWindow
do {
    try SDLWindow.initialize(windowClass: "tonearm", appName: "Tonearm")
    window = try SDLWindow(title: arguments[3], width: width, height: height)
} catch {
    FileHandleShim.error("tonearm-video: \(error)")
    exit(1)
}
window.setIcon(pixels: icon(size: 48), size: 48)
guard let xid = window.x11WindowID else {
    FileHandleShim.error("tonearm-video: the window is not an X11 window")
    exit(1)
}
// the sink's window, inside ours, where "frame" puts it
guard let child = window.makeVideoChild() else {
    FileHandleShim.error("tonearm-video: no X11 child window for the video (window \(xid))")
    exit(1)
}
say("window \(child)")

let mailbox = Mailbox()
detachThread(name: "tonearm-video.in") {
    // stdin's lines, as they come; its end (tonearmd gone) is a quit. Read with read(2), not
    // readLine: its getline holds stdin's FILE lock while it waits, and from glibc 2.38 on exit()
    // takes every FILE's lock to flush it (libio/genops.c _IO_flush_all; glibc commit af130d2709,
    // "Always do locking when accessing streams"), so on Debian 13 (glibc 2.41) the program hung in
    // exit after "quit" or SIGTERM until tonearmd closed its stdin: the window went, but tonearmd
    // heard of it only then (MPRIS CanRaise stayed true while the next audio item played).
    var pending: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 512)
    while true {
        let count = Files.read(0, into: &buffer)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        pending += buffer.prefix(count)
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            mailbox.post(String(decoding: pending[..<newline], as: UTF8.self))
            pending.removeSubrange(...newline)
        }
    }
    mailbox.post("quit")
}

/// A moving pointer makes a motion event per pixel: tonearmd hears of one every `motionInterval`
/// at most (the bar it shows hides 2 s after the last, so it may hide up to this much early).
let motionInterval = Duration.milliseconds(250)
var lastMotion: ContinuousClock.Instant?
var pictureInPicture = PictureInPicture(window: window)
var area = (width: 0, height: 0)
/// Says "area <width> <height>" when the window's size is not the one said last.
@MainActor func reportArea() {
    let frame = window.frame
    guard (frame.width, frame.height) != area else { return }
    area = (frame.width, frame.height)
    say("area \(frame.width) \(frame.height)")
}
reportArea()

var fullscreen = false
/// Says "fullscreen 0|1" when the window's state is not the one said last.
@MainActor func reportFullscreen() {
    let now = window.isFullscreen
    if now != fullscreen {
        fullscreen = now
        say("fullscreen \(now ? 1 : 0)")
    }
}

loop: while true {
    switch SDLWindow.waitEvent() {
    case .closeRequested:
        window.hide()
        say("closed")
    case .windowChanged:
        reportFullscreen()
        reportArea()
    case .pointerMoved:
        let now = ContinuousClock.now
        if lastMotion.map({ now - $0 >= motionInterval }) ?? true {
            lastMotion = now
            say("motion")
        }
    case .user:
        for line in mailbox.take() {
            let (verb, rest) = line.firstIndex(of: " ").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) } ?? (line, "")
            switch verb {
            case "title": window.setTitle(rest)
            case "fullscreen": window.setFullscreen(rest == "1"); reportFullscreen()
            case "raise": window.raise()
            case "show": window.show()
            case "size":
                let numbers = rest.split(separator: " ").compactMap { Int($0) }
                guard numbers.count == 2 else { break }
                if pictureInPicture.resize(video: (numbers[0], numbers[1])) { break }
                if !window.isFullscreen { window.setSize(width: numbers[0], height: numbers[1]) }
            case "frame":
                let numbers = rest.split(separator: " ").compactMap { Int($0) }
                guard numbers.count == 4 else { break }
                window.placeChild(child, SDLRect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3]))
                say("framed")
            case "pip":
                pictureInPicture.set(rest == "1")
                reportFullscreen()
            case "quit": break loop
            default: FileHandleShim.error("tonearm-video: unknown command: \(line)")
            }
        }
    case .quit:
        break loop  // SIGINT or SIGTERM
    case .key(let name, let modifiers):
        // combinations with Ctrl, Alt or Super belong to the desktop (Alt+F4, Super+arrows)
        if modifiers.isDisjoint(with: [.control, .alt, .gui]) { say("key \(name)") }
    case .mouseButton(let button, let clicks):
        // SDL counts on within its double-click time: every second click of a run is a double
        // click (two quick double clicks are four), the third is none
        if button == 1 && clicks % 2 == 0 { say("double-click") }
    case .dropped(let text):
        say("drop \(text.percentEscapingLineBreaks())")
    case .dropComplete:
        say("drop-end")
    case .exposed(let exposed):
        if exposed == child { say("exposed") }
    case .other:
        break
    }
}
SDLWindow.quit()
