import ArgumentParser
import Glibc
import Synchronization
import TonearmClient

struct Add: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add files, directories or URIs to the end of the queue, or with --next after the current track.",
        discussion: "A directory adds its playable files in natural order (track 2 before track 10).")
    @OptionGroup var service: ServiceOptions
    @Flag(name: .long, help: "Insert after the current track (at the start when none is current), so that they play next.")
    var next = false
    @Argument(help: ArgumentHelp("Files, directories or URIs.", valueName: "uri-or-path")) var items: [String]

    func validate() throws {
        if items.isEmpty { throw ValidationError("add needs at least one file, directory or URI") }
    }

    func run() throws {
        let uris = try locations(items)
        let progress = WalkProgressLine(named: Dictionary(zip(uris, items)) { first, _ in first })
        defer { progress?.end() }
        try service.withClient { client in
            if next {
                try client.enqueueNext(uris, walkProgress: progress?.show)
            } else {
                try client.enqueue(uris, playNow: false, walkProgress: progress?.show)
            }
        }
    }
}

/// "walking ~/Music: 12,000 files…" on stderr, rewritten in place as the service's WalkProgress
/// comes (every 1,000 files, or every 5 s on a slow disk: the same line is not drawn again), and
/// erased when the call is answered. Only on a terminal: nil when stderr is not one, so that a
/// script's output holds no carriage returns.
final class WalkProgressLine: Sendable {
    private let names: [String: String]
    /// The walk and count on the line; nil before the first.
    private let shown = Mutex<(uri: String, files: Int)?>(nil)

    init?(named names: [String: String]) {
        guard isatty(STDERR_FILENO) == 1 else { return nil }
        self.names = names
    }

    func show(_ uri: String, _ files: Int) {
        let new = shown.withLock { line in
            defer { line = (uri, files) }
            return line.map { $0.uri != uri || $0.files != files } ?? true
        }
        guard new else { return }
        // \r, then erase to the end of the line (ECMA-48 EL) after the text, as `watch` draws
        writeAll("\rwalking \(names[uri] ?? uri): \(Self.grouped(files)) files…\u{1B}[K", to: STDERR_FILENO)
    }

    func end() {
        if shown.withLock({ $0 != nil }) { writeAll("\r\u{1B}[K", to: STDERR_FILENO) }
    }

    /// 12345 as "12,345".
    static func grouped(_ number: Int) -> String {
        var digits = String(number.magnitude)
        var index = digits.endIndex
        while digits.distance(from: digits.startIndex, to: index) > 3 {
            index = digits.index(index, offsetBy: -3)
            digits.insert(",", at: index)
        }
        return number < 0 ? "-" + digits : digits
    }
}

struct Queue: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the queue: number, duration and title; * marks the current track.")
    @OptionGroup var service: ServiceOptions

    func run() throws {
        let entries = try service.withClient { try $0.queue() }
        for entry in entries {
            let marker = entry.isCurrent ? "*" : " "
            let number = String(entry.number).leftPadded(to: String(entries.count).count)
            let duration = (entry.metadata.length.map(TimeText.format) ?? "-:--").leftPadded(to: 5)
            print("\(marker) \(number)  \(duration)  \(Format.displayTitle(entry.metadata))")
        }
    }
}

/// A 1-based queue number from the command line.
struct EntryNumber: ExpressibleByArgument {
    let value: Int
    init?(argument: String) {
        // Int() refuses what overflows instead of trapping; 0 and negatives are not entries
        guard let value = Int(argument), value >= 1 else { return nil }
        self.value = value
    }
}

struct Jump: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Make entry N of the queue current (see `tonearm queue`).")
    @OptionGroup var service: ServiceOptions
    @Argument(help: ArgumentHelp("The entry's number, from 1.", valueName: "N")) var number: EntryNumber
    func run() throws { try service.withClient { try $0.jump(to: number.value) } }
}

struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Remove entries from the queue, by their numbers in `tonearm queue`.")
    @OptionGroup var service: ServiceOptions
    @Argument(help: ArgumentHelp("The entries' numbers, from 1.", valueName: "N")) var numbers: [EntryNumber]

    func validate() throws {
        if numbers.isEmpty { throw ValidationError("remove needs at least one entry number") }
    }

    func run() throws { try service.withClient { try $0.remove(numbers: numbers.map(\.value)) } }
}

struct Move: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Move entry N of the queue so that it becomes entry M (numbers as `tonearm queue` lists them).")
    @OptionGroup var service: ServiceOptions
    @Argument(help: ArgumentHelp("The entry to move, from 1.", valueName: "N")) var number: EntryNumber
    @Argument(help: ArgumentHelp("Its new place, from 1.", valueName: "M")) var position: EntryNumber
    func run() throws { try service.withClient { try $0.move(number: number.value, to: position.value) } }
}

struct Clear: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Empty the queue and stop.")
    @OptionGroup var service: ServiceOptions
    func run() throws { try service.withClient { try $0.clear() } }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
