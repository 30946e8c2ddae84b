import ArgumentParser
import Basics
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization
import TonearmClient

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow the player: a progress bar on a terminal, one JSON object per event in a pipe.",
        discussion: """
            On a terminal, one line (state, title, position / duration, a bar, buffering, the error) redrawn in \
            place; the position is read once a second while playing, never while paused or stopped. In a pipe \
            (or with --json), one JSON object per line: the status --json object plus "event" (initial, state, \
            track, seeked, buffering, error, volume, options); schema in the docs/command-line.md, "tonearm watch". Ends on \
            Ctrl-C (status 0) or when the service leaves the bus (status 3).
            """)
    @OptionGroup var service: ServiceOptions
    @Flag(name: .long, help: "Print JSON lines even on a terminal.") var json = false

    func run() throws {
        let bar = !json && isatty(STDOUT_FILENO) == 1
        let printer = WatchPrinter(bar: bar)
        let finished = Finish()
        var signalSources: [any DispatchSourceSignal] = []
        // Ctrl-C, a closed terminal, or kill: end the line and leave with status 0
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { finished.finish(nil) }
            source.resume()
            signalSources.append(source)
        }
        try service.withClient { client in
            let watch = try client.watch(positionInterval: bar ? .seconds(1) : nil) { update in
                switch update {
                case .initial(let status): printer.show(status, event: "initial")
                case .event(let event): printer.show(event.status, event: event.kind.rawValue)
                case .position(let status): printer.show(status, event: nil)
                case .ended(let error): finished.finish(error)
                }
            }
            let error = finished.wait()
            watch.cancel()
            printer.end()
            if let error { throw error }
        }
        withExtendedLifetime(signalSources) {}  // watched until the end
    }
}

/// The first of Ctrl-C and the watch's end, for the main thread to wait on.
private final class Finish: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let result = Mutex<ClientError??>(nil)

    func finish(_ error: ClientError?) {
        let first = result.withLock { result in
            guard result == nil else { return false }
            result = .some(error)
            return true
        }
        if first { done.signal() }
    }

    func wait() -> ClientError? {
        done.wait()
        return result.withLock { $0 ?? nil }
    }
}

/// Writes what `watch` shows, straight to the file descriptor (stdout is block-buffered in a pipe, and
/// a line that waits in a buffer is no use to a status bar).
final class WatchPrinter: Sendable {
    private let bar: Bool
    /// The bar's line last drawn; its lock also keeps two writes from interleaving.
    private let lastLine = Mutex<String?>(nil)

    init(bar: Bool) { self.bar = bar }

    /// `event` nil is a position update: the bar redraws, a pipe gets nothing.
    func show(_ status: PlayerStatus, event: String?) {
        if bar {
            let line = WatchLine.render(status, width: Self.terminalWidth())
            lastLine.withLock { lastLine in
                guard line != lastLine else { return }
                lastLine = line
                write("\r" + line + "\u{1B}[K")
            }
        } else if let event, let text = try? Format.json(status, event: event) {
            lastLine.withLock { _ in write(text + "\n") }
        }
    }

    /// Leaves the cursor on a new line after the bar.
    func end() {
        if bar { lastLine.withLock { if $0 != nil { write("\n") } } }
    }

    private func write(_ text: String) { writeAll(text, to: STDOUT_FILENO) }

    static func terminalWidth() -> Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }
}

/// The progress bar's one line, fitted to `width` columns.
enum WatchLine {
    static func render(_ status: PlayerStatus, width: Int) -> String {
        let metadata = status.metadata
        let state = status.playbackStatus.rawValue.lowercased()
        guard !metadata.isEmpty else { return fit("\(state)  (no track)", width) }
        let position = TimeText.format(status.position)
        let duration = metadata.length.map(TimeText.format) ?? (status.isLive ? "live" : "-:--")
        let times = "  \(position) / \(duration)"
        var extra = ""
        if status.bufferingPercent < 100 { extra += "  buffering \(status.bufferingPercent)%" }
        if let error = status.itemError { extra += "  error: \(error.message)" }
        let head = "\(state)  "
        let title = Format.displayTitle(metadata)
        // the bar gets what is left after state, title, times and buffering, between 10 and 30 cells
        let room = width - head.count - title.count - times.count - extra.count - 5
        var barText = ""
        if let length = metadata.length, length > .zero, room >= 10 {
            let cells = min(room, 30)
            let fraction = min(max(Double(status.position.microsecondsSaturating) / Double(length.microsecondsSaturating), 0), 1)
            let filled = Int((fraction * Double(cells)).rounded(.down))
            barText = "  [" + String(repeating: "#", count: filled) + String(repeating: "-", count: cells - filled) + "]"
        }
        let fixed = head.count + times.count + barText.count + extra.count + 1
        let titleRoom = width - fixed
        let shownTitle = titleRoom >= title.count ? title : titleRoom > 1 ? String(title.prefix(titleRoom - 1)) + "…" : ""
        return fit(head + shownTitle + times + barText + extra, width)
    }

    /// At most `width - 1` characters: writing the last column makes some terminals wrap.
    static func fit(_ line: String, _ width: Int) -> String {
        let limit = max(width - 1, 1)
        return line.count <= limit ? line : String(line.prefix(limit))
    }
}
