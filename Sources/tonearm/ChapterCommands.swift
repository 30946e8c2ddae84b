import ArgumentParser
import TonearmClient

// Chapters are numbered from 1 here, as `queue` numbers tracks; the bus counts from 0
// (`GoToChapter`, `CurrentChapter`), and TonearmClient with it.

struct Chapters: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the current track's chapters: number, start and title; * marks the current one.",
        discussion: "Prints \"no chapters\" (status 0) when the track has none or nothing is current.")
    @OptionGroup var service: ServiceOptions

    func run() throws {
        let (chapters, current) = try service.withClient { client in (try client.chapters(), try client.currentChapter()) }
        guard !chapters.isEmpty else { return print("no chapters") }
        let numberWidth = String(chapters.count).count
        let starts = chapters.map { TimeText.format($0.start) }
        let startWidth = starts.map(\.count).max() ?? 4
        for (chapter, start) in zip(chapters, starts) {
            let marker = chapter.index == current ? "*" : " "
            let line = "\(marker) \(String(chapter.index + 1).leftPadded(to: numberWidth))  \(start.leftPadded(to: startWidth))  \(chapter.title)"
            print(chapter.title.isEmpty ? String(line.dropLast(2)) : line)
        }
    }
}

/// What `tonearm chapter` goes to: `next`, `previous` (or `prev`), or a chapter's number from 1.
enum ChapterTarget: ExpressibleByArgument, Equatable {
    case next, previous, number(Int)

    init?(argument: String) {
        switch argument {
        case "next": self = .next
        case "previous", "prev": self = .previous
        default:
            // Int() refuses what overflows instead of trapping; 0 and negatives are no chapters
            guard let value = Int(argument), value >= 1 else { return nil }
            self = .number(value)
        }
    }
}

struct ChapterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chapter",
        abstract: "Go to the next or previous chapter of the current track, or to chapter N (see `tonearm chapters`).",
        discussion: """
            previous goes back to the start of the current chapter when more than 3 s into it, else to the chapter \
            before, as prev does for tracks. No such chapter (none at all, past the last, before the first) is \
            status 1; so is linear playback.
            """)
    @OptionGroup var service: ServiceOptions
    @Argument(help: ArgumentHelp("next, previous, or the chapter's number from 1.", valueName: "next|previous|N"))
    var target: ChapterTarget

    func run() throws {
        try service.withClient { client in
            switch target {
            case .next: try client.nextChapter()
            case .previous: try client.previousChapter()
            case .number(let number):
                let count = try client.chapters().count
                guard number <= count else {
                    throw ClientError(.refused, count == 0 ? "the current track has no chapters"
                                                           : "no chapter \(number): the current track has \(count)")
                }
                try client.goToChapter(number - 1)
            }
        }
    }
}
