import Basics
import Glibc
import SDLWindow

// tonearm-video: the window tonearmd shows video in, in a process of its own so that tonearmd
// maps no window library while it plays audio (README, "Video"). tonearmd starts it when an item's
// video asks for a window and ends it when the queue moves to an item without video or ends.
//
// A line protocol on stdin/stdout (tonearmd's side: Sources/PlayerEngine/VideoWindow.swift):
//   out: "window <X11 id>" once the window exists; "fullscreen 0|1" when that changes;
//        "closed" when the person closes the window (it is hidden, not destroyed: tonearmd's video
//        sink may still draw into it until tonearmd says "quit")
//   in:  "title <text>", "size <width> <height>", "fullscreen 0|1", "raise", "quit" (end of input
//        is "quit" too)
//   out, what the person does (tonearmd's player decides what it means: PlayerModel/WindowInput.swift):
//        "key <name>" for a key pressed without Ctrl, Alt or Super (SDL_GetKeyName: "Space",
//        "Left", "F"; again while held, SDL's key repeat); "double-click" for each second click
//        of the first button in a run; "drop <text>" for each path or text of a drop, then "drop-end"
//        (`%`, line feeds and carriage returns percent-escaped: a file's name may hold them)
// Usage: tonearm-video WIDTH HEIGHT TITLE

/// Commands read from stdin by the reader thread, taken by the window's thread; guarded by `lock`.
final class Mailbox: @unchecked Sendable {
    private let lock = Lock()
    private var lines: [String] = []
    func post(_ line: String) {
        lock.withLock { lines.append(line) }
        SDLWindow.pushUserEvent()
    }
    func take() -> [String] { lock.withLock { defer { lines.removeAll() }; return lines } }
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
say("window \(xid)")

let mailbox = Mailbox()
detachThread(name: "tonearm-video.in") {
    // stdin's lines, as they come; its end (tonearmd gone) is a quit
    while let line = readLine(strippingNewline: true) { mailbox.post(line) }
    mailbox.post("quit")
}

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
    case .user:
        for line in mailbox.take() {
            let (verb, rest) = line.firstIndex(of: " ").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) } ?? (line, "")
            switch verb {
            case "title": window.setTitle(rest)
            case "fullscreen": window.setFullscreen(rest == "1"); reportFullscreen()
            case "raise": window.raise()
            case "size":
                let numbers = rest.split(separator: " ").compactMap { Int($0) }
                if numbers.count == 2, !window.isFullscreen { window.setSize(width: numbers[0], height: numbers[1]) }
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
    case .other:
        break
    }
}
SDLWindow.quit()
