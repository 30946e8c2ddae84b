import ArgumentParser
import Basics
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization
import TonearmClient

struct LyricsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lyrics",
        abstract: "Print the current track's lyrics; with --follow, each synced line as playback reaches it.",
        discussion: """
            Prints MPRIS xesam:asText: the file's own lyrics, else the text of the .lrc beside it. With --follow \
            and synced lyrics (an .lrc with time tags: the extension's SyncedLyrics), prints the line playback \
            is in, then each line as the position reaches it, computed from Position and Rate and set again at \
            each seek, pause and rate change; it ends when the track changes or playback stops (status 0), on \
            Ctrl-C (status 0), or when the service leaves the bus (status 3). A track without lyrics (or, \
            with --follow, without synced lyrics: its plain lyrics are printed instead) says so on stderr, \
            status 1; so does no current track.
            """)
    @OptionGroup var service: ServiceOptions
    @Flag(name: .long, help: "Follow playback: print each synced line when the position reaches it.") var follow = false

    func run() throws {
        try service.withClient { client in
            let status = try client.status()
            guard !status.metadata.isEmpty else {
                Output.error("no current track")
                throw ExitCode(ExitStatus.serviceError)
            }
            let name = status.metadata.title ?? status.metadata.url ?? "the current track"
            if follow && !status.syncedLyrics.isEmpty {
                try LyricsFollower.follow(client)
                return
            }
            guard let text = status.metadata.lyrics, !text.isEmpty else {
                Output.error("\(name) has no lyrics")
                throw ExitCode(ExitStatus.serviceError)
            }
            writeAll(text.hasSuffix("\n") ? text : text + "\n", to: STDOUT_FILENO)
            if follow {
                Output.error("\(name) has no synced lyrics to follow")
                throw ExitCode(ExitStatus.serviceError)
            }
        }
    }
}

/// Prints synced lines as playback reaches them. Woken by the service's signals (through a
/// `PlayerWatch`, which reads no position on its own) and by one timer, due at the next line, that
/// exists only while playing.
final class LyricsFollower: @unchecked Sendable {
    // @unchecked: every field below is only touched on `queue`.
    private let queue = DispatchQueue(label: "tonearm.lyrics")
    private var track: TrackID?
    private var lines: [SyncedLine] = []
    /// The index of the line printed last; nil before any.
    private var printed: Int?
    /// The position read at `readAt`, and how it moves since.
    private var position = Duration.zero
    private var readAt = ContinuousClock.now
    private var rate = 1.0
    private var playing = false
    private var timer: DispatchSourceTimer?
    private let finished = DispatchSemaphore(value: 0)
    private let outcome = Mutex<ClientError??>(nil)

    static func follow(_ client: TonearmClient) throws {
        let follower = LyricsFollower()
        var signalSources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { follower.finish(nil) }
            source.resume()
            signalSources.append(source)
        }
        let watch = try client.watch(positionInterval: nil) { update in
            follower.queue.async { follower.take(update) }
        }
        let error = follower.wait()
        watch.cancel()
        follower.queue.sync { follower.timer?.cancel() }
        withExtendedLifetime(signalSources) {}
        if let error { throw error }
    }

    private func finish(_ error: ClientError?) {
        let first = outcome.withLock { outcome in
            guard outcome == nil else { return false }
            outcome = .some(error)
            return true
        }
        if first { finished.signal() }
    }

    private func wait() -> ClientError? {
        finished.wait()
        return outcome.withLock { $0 ?? nil }
    }

    private func take(_ update: WatchUpdate) {
        let status: PlayerStatus
        switch update {
        case .initial(let initial):
            track = initial.metadata.trackID
            status = initial
        case .event(let event):
            status = event.status
            guard status.metadata.trackID == track, status.playbackStatus != .stopped else { return finish(nil) }
        case .position(let sample):
            status = sample
        case .ended(let error):
            return finish(error)
        }
        lines = status.syncedLyrics
        position = status.position
        readAt = .now
        rate = status.rate
        playing = status.playbackStatus == .playing && status.timeControlStatus == "playing"
        catchUp(jumped: true)
    }

    /// The position now, as `Position` and `Rate` say it moves.
    private var now: Duration {
        guard playing, rate > 0 else { return position }
        return position + (ContinuousClock.now - readAt) * rate
    }

    /// Prints the line the position is in, if not printed last, and sets the timer for the next.
    /// `jumped`: woken by the service (a first read, a seek, a pause), not by the timer; only the
    /// line it is in is printed, not those between.
    private func catchUp(jumped: Bool) {
        let at = now
        // the last line whose time is reached (a small tolerance: the timer may wake a hair early)
        let current = lines.lastIndex { $0.time <= at + .milliseconds(5) }
        if let current, current != printed {
            // lines the timer passed over (a late wake), in order; after the service spoke, only
            // the line it is in
            let from = jumped ? current : printed.map { $0 + 1 } ?? current
            let passed = from <= current ? from...current : current...current
            for index in passed { writeAll(lines[index].text + "\n", to: STDOUT_FILENO) }
            printed = current
        } else if current == nil {
            printed = nil
        }
        timer?.cancel()
        timer = nil
        let next = (current.map { $0 + 1 } ?? 0)
        guard playing, rate > 0, next < lines.count else { return }
        let wait = (lines[next].time - at) / rate
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .nanoseconds(Int(max(wait, .zero).nanoseconds)), leeway: .milliseconds(5))
        timer.setEventHandler { [weak self] in self?.catchUp(jumped: false) }
        timer.resume()
        self.timer = timer
    }
}
