import Dispatch
import GStreamer
import Glibc
import Logging
import PlayerModel

/// A level as the sound server keeps a stream's: its linear volume and its mute.
struct StreamLevel: Equatable, Sendable, CustomStringConvertible {
    var volume: Double
    var muted: Bool

    /// Whether the server holds the two as one: it keeps a stream's volume as a cubic step of
    /// 1/65536 (pa_volume_t, pa_sw_volume_from_linear), so a volume given comes back rounded to that.
    func isHeard(as other: StreamLevel) -> Bool { muted == other.muted && Self.sameVolume(volume, other.volume) }

    static func sameVolume(_ a: Double, _ b: Double) -> Bool {
        abs(cbrt(max(a, 0)) - cbrt(max(b, 0))) * 65536 < 1.5
    }

    var description: String { "\(volume)\(muted ? " muted" : "")" }
}

/// What a stream at the sound server was given and what the server told of it, to tell a level it
/// reports for a setting of ours from someone else's (the desktop's slider) by value, not by time.
/// pulsesink sends each setting as a request and does not wait for it; the server tells of its
/// stream (pulsesink notifies `volume`, and reading it asks the server) after each change, late:
/// a report may be of a level we gave before the newest one, or of the level the stream had before
/// our newest request reached it (PipeWire 0.3.65's pulse server answers a query right after a
/// setting with the level from before it, now and then: issue 37, a set undone about 5 ms later).
/// The server applies one connection's requests in order, so what it reports goes forward through
/// what we gave: a report equal to a level given and not yet confirmed is ours, and confirms it
/// and all given before it; equal to the last level confirmed, while more are on their way, it is
/// ours too, told before the server had the newer ones; equal to none, someone else set it. That
/// no-news answer may also be a stale one, of a change of ours the server made and will tell of no
/// more: `OutputLevels` reads the stream again then, a few times (`rereadLater`).
struct StreamEcho: Equatable, Sendable {
    /// What a report of the stream's level was.
    enum Report: Equatable, Sendable {
        /// The first word of a stream that opened: the server's own start level is nobody's choice
        /// (`ours`: it is one we gave).
        case first(ours: Bool)
        /// A level we gave, now confirmed with all given before it.
        case ours
        /// The level last confirmed: no news (ours told before the newer ones reached the server,
        /// or a report of something else about the stream).
        case unchanged
        /// None of ours: someone else set it.
        case slider
    }

    /// The levels given and not confirmed yet, oldest first: one per request (a volume and a mute
    /// are two, and the server may tell of the state between them).
    private(set) var given: [StreamLevel] = []
    /// What the server told last.
    private(set) var heard: StreamLevel?
    /// The server told of this stream once (see `Report.first`).
    private(set) var hasHeard = false
    /// Requests go in order and the server confirms one for many; a stream paused for a long time
    /// gets no report (pulsesink notifies from its streaming thread), so the oldest are let go past
    /// this many: they are behind a newer given one that a report will confirm.
    static let maximumGiven = 64

    /// What the stream has once the server has applied all we gave.
    var expected: StreamLevel? { given.last ?? heard }

    mutating func gave(_ level: StreamLevel) {
        given.append(level)
        if given.count > Self.maximumGiven { given.removeFirst(given.count - Self.maximumGiven) }
    }

    /// Takes what the server told of the stream.
    mutating func hear(_ level: StreamLevel) -> Report {
        let confirmed = given.firstIndex { level.isHeard(as: $0) }
        defer { heard = level }
        if let confirmed { given.removeFirst(confirmed + 1) }
        if !hasHeard {
            hasHeard = true
            if confirmed == nil { given = [] }
            return .first(ours: confirmed != nil)
        }
        if confirmed != nil { return .ours }
        if let heard, level.isHeard(as: heard) { return .unchanged }
        given = []
        return .slider
    }

    /// The server's state is the truth: the levels given that it still does not have after every
    /// re-read are let go (it had them and someone else set the stream after, or it dropped them).
    /// Returns whether any were on their way.
    mutating func yieldToServer() -> Bool {
        defer { given = [] }
        return !given.isEmpty
    }
}

/// ReplayGain as the player last asked: album mode (else track) and the pre-amp for the stream
/// playing now (off: nil), and album mode for the gapless next one (nil: as the current one).
struct ReplayGainSetting: Equatable, Sendable {
    var albumMode: Bool?
    var preamp = 0.0
    var nextAlbumMode: Bool?
}

/// The gain stages of one pipeline, which only `OutputLevels` sets: the stream's own volume and
/// mute at the sound server (pulsesink on the default path), the `volume` element in front of the
/// sink, and the one in the audio filter, which also carries ReplayGain. Confined to the engine's
/// queue.
final class GainStages {
    /// The pulsesink whose stream's volume and mute the server applies at once, whatever the sink
    /// buffers (300 ms there: `AudioOutputs.pulseBufferTime`).
    let stream: Element?
    /// The `volume` element in front of the sink (nil: the sink's description would not take one).
    let front: Element?
    /// The audio filter's `volume` element, replaced with the filter.
    var filter: Element? {
        didSet {
            replayGain = filter.flatMap(ReplayGainProbe.init(on:))
            filterLevel = nil
            replayGainGiven = nil
        }
    }
    /// The filter's element as a gain stage (`ReplayGainProbe`): ReplayGain times its level.
    private(set) var replayGain: ReplayGainProbe?
    /// Its stream opens as it plays (a live source, a crossfade's item started from READY): no
    /// preroll gives it the levels before it is heard, so the element in front carries them until
    /// the server has told of it. Otherwise the stream is given them at its preroll.
    var opensPlaying = false
    /// What the stream was given and what the server told of it.
    fileprivate(set) var echo = StreamEcho()
    /// What the two elements were set to last: each is set only for a change.
    fileprivate var frontLevel: StreamLevel?
    fileprivate var filterLevel: StreamLevel?
    /// The ReplayGain setting the filter's stage was given last.
    fileprivate var replayGainGiven: ReplayGainSetting?
    /// The stream's re-read waited for (`OutputLevels.rereadLater`), and how many of the series the
    /// server's last report started were made.
    fileprivate var reread: (any DispatchSourceTimer)?
    fileprivate var rereads = 0

    init(stream: Element?, front: Element?, filter: Element?) {
        self.stream = stream
        self.front = front
        self.filter = filter
        replayGain = filter.flatMap(ReplayGainProbe.init(on:))
    }

    deinit { reread?.cancel() }

    /// The ReplayGain factor the filter applies now (1: off, or an untagged stream).
    var replayGainFactor: Double { replayGain?.factor ?? 1 }

    /// The pipeline is used again (a release kept it in NULL): its next stream is a new one, which
    /// pulsesink opens with the level last set on it (gst_pulseringbuffer_acquire: else the server's
    /// saved one applies).
    func streamReopens() {
        echo = StreamEcho()
        opensPlaying = false
        stopRereading()
    }

    /// No re-read is waited for any more.
    fileprivate func stopRereading() {
        reread?.cancel()
        reread = nil
        rereads = 0
    }

    /// Whether a re-read of the stream is waited for now, and how many of the series were made, for tests.
    var isWaitingToReread: Bool { reread != nil }
    var rereadsMade: Int { rereads }
}

/// The one owner of the output's levels (design brief, "Levels have one owner"): it holds the
/// volume, the mute, the sleep timer's fade, a crossfade's ramp and ReplayGain, computes from them
/// the one gain each pipeline applies, and sets it once, where it applies: the stream's own volume
/// and mute at the sound server on the default path's pulsesink, else the element in front of the
/// sink, else the filter's (and then no fade). ReplayGain is never the stream's: the stream's
/// volume is what the desktop's slider shows and MPRIS `Volume` reads. It is the filter's stage
/// (`ReplayGainProbe`), whose level is 1 where another stage carries the rest and the volume and
/// mute where none does; the stage's probe reads each stream's tags and changes the factor at the
/// stream's own boundary, in its order (a gapless next track's first buffer already has its own
/// factor, which a setting sent from this queue on the probe's word would reach some buffers late).
/// It gives the stream each level and recognises the server's reports of them (`StreamEcho`), so
/// that only someone else's setting reaches the player. Fades
/// are ramps with a target and a length, stepped by one timer on the engine's queue that exists
/// while one runs. (mpv's `audio_update_volume` computes one gain from volume, mute and
/// ReplayGain and sets it once.)
/// Confined to the engine's queue.
final class OutputLevels {
    /// The engine's pipelines now, each with its part in a crossfade: the current one, the
    /// previous one fading out, the next one prepared and silent.
    typealias Pipelines = (current: GainStages?, outgoing: GainStages?, incoming: GainStages?)

    /// A value going from `from` to `to` over `length`: `elapsed` of it, plus the time since
    /// `since` while it runs (nil: held, as a crossfade while paused).
    struct Ramp: Equatable {
        var from: Double
        var to: Double
        var length: Duration
        var elapsed: Duration = .zero
        var since: ContinuousClock.Instant?
        /// How often the level is set while it runs.
        var step: Duration

        /// A value that stays.
        static func still(_ value: Double) -> Ramp { Ramp(from: value, to: value, length: .zero, since: nil, step: .zero) }

        func progress(at now: ContinuousClock.Instant) -> Double {
            let played = elapsed + (since.map { now - $0 } ?? .zero)
            return length > .zero ? min(max(played / length, 0), 1) : 1
        }

        /// The value at `now`, read half a step ahead while it runs, so that the level leads no
        /// more than it lags.
        func value(at now: ContinuousClock.Instant) -> Double {
            let ahead = since == nil ? now : now + step / 2
            return from + (to - from) * progress(at: ahead)
        }

        func isOver(at now: ContinuousClock.Instant) -> Bool { progress(at: now) >= 1 }
        func runs(at now: ContinuousClock.Instant) -> Bool { since != nil && !isOver(at: now) }

        mutating func hold(at now: ContinuousClock.Instant) {
            guard let since else { return }
            elapsed += now - since
            self.since = nil
        }

        mutating func resume(at now: ContinuousClock.Instant) {
            if since == nil { since = now }
        }
    }

    /// The sleep timer's fade is set this often while it moves (as the player stepped it before).
    static let fadeStep = Duration.milliseconds(50)
    /// A crossfade's ramps are set this often while they move (50 times a second for its length only).
    static let crossfadeStep = Duration.milliseconds(20)
    /// A report that told nothing new while levels of ours are on their way is followed by a read
    /// of the stream this long after it, then as long after that one, and so on; when the last
    /// still reads a level that is not ours, the server's is taken (see `rereadLater`).
    static let rereadDelays: [Duration] = [.milliseconds(30), .milliseconds(100), .milliseconds(300)]

    private let queue: DispatchQueue
    private let logger: Logger
    private let pipelines: () -> Pipelines
    private let sliderMoved: (StreamLevel, _ fading: Bool) -> Void
    private let crossfadeEnded: () -> Void

    /// The player's volume (linear amplitude, as GstStreamVolume's linear format: a cubic UI curve
    /// is the client's business) and mute.
    private(set) var volume = 1.0
    private(set) var muted = false
    /// The sleep timer's fade: its value is the square root of the gain, so that a fade to 0 is
    /// the square of the time left (what `SleepTimer` chose: it falls more evenly in loudness than a
    /// linear amplitude). It runs whether the pipeline plays or not: the timer counts the evening.
    private var fade = Ramp.still(1)
    /// ReplayGain, on the filter's stage of the current and the prepared pipeline (the one fading
    /// out keeps what its item had).
    private(set) var replayGain = ReplayGainSetting()
    /// A crossfade's progress from 0 to 1, held while paused: sin for the item coming in, cos
    /// for the one going out (equal power).
    private var crossfade: Ramp?
    /// Steps the ramps while one runs, every `timerStep`.
    private var timer: (any DispatchSourceTimer)?
    private var timerStep: Duration?

    /// `pipelines` says which pipelines exist now; `sliderMoved` hears a level the server reports
    /// that none of ours set, with whether a fade had the stream below the volume; `crossfadeEnded`
    /// runs when a crossfade's ramp reached its end.
    init(queue: DispatchQueue, logger: Logger, pipelines: @escaping () -> Pipelines,
         sliderMoved: @escaping (StreamLevel, _ fading: Bool) -> Void, crossfadeEnded: @escaping () -> Void) {
        self.queue = queue
        self.logger = logger
        self.pipelines = pipelines
        self.sliderMoved = sliderMoved
        self.crossfadeEnded = crossfadeEnded
    }

    deinit { timer?.cancel() }

    // MARK: What the player sets

    func setVolume(_ volume: Double) {
        self.volume = volume
        applyAll()
    }

    func setMuted(_ muted: Bool) {
        self.muted = muted
        applyAll()
    }

    /// A ReplayGain setting of the player's (`AudioCommand`); false for the equalizer, not a level.
    @discardableResult
    func take(_ command: AudioCommand) -> Bool {
        let before = replayGain
        switch command {
        case .replayGain(let albumMode, let preamp):
            replayGain.albumMode = albumMode
            replayGain.preamp = preamp
        case .replayGainOff: replayGain.albumMode = nil
        case .nextAlbumMode(let albumMode): replayGain.nextAlbumMode = albumMode
        case .equalizer: return false
        }
        if replayGain != before { applyAll() }
        return true
    }

    /// The sleep timer's fade goes from where it is to `target` over `length` (at once when zero).
    func fade(to target: Double, over length: Duration) {
        let now = ContinuousClock.now
        let start = fade.value(at: now)
        let target = min(max(target, 0), 1).squareRoot()
        fade = length > .zero ? Ramp(from: start, to: target, length: length, since: now, step: Self.fadeStep) : .still(target)
        applyAll()
        schedule()
    }

    /// The sleep timer's fade at `now` (1: none).
    func fadeGain(at now: ContinuousClock.Instant = .now) -> Double {
        let root = fade.value(at: now)
        return root * root
    }

    // MARK: The crossfade's ramps

    /// A crossfade's ramps begin: the current pipeline from silence, the outgoing one from full,
    /// over `length`, running now when `playing`.
    func startCrossfade(length: Duration, playing: Bool) {
        crossfade = Ramp(from: 0, to: 1, length: length, since: playing ? .now : nil, step: Self.crossfadeStep)
        step()
    }

    /// The crossfade's ramps hold while its pipelines pause, and go on with them.
    func holdCrossfade(_ paused: Bool) {
        guard crossfade != nil else { return }
        if paused { crossfade?.hold(at: .now) } else { crossfade?.resume(at: .now) }
        step()
    }

    /// The crossfade ends (its ramp's end, the outgoing item's end, a new load): the current
    /// pipeline at its full level.
    func endCrossfade() {
        guard crossfade != nil else { return }
        crossfade = nil
        applyAll()
        schedule()
    }

    /// A pipeline's part in the crossfade: 0 for a prepared one, sin for the item coming in, cos
    /// for the one going out, 1 when none runs.
    private func crossfadeGain(for stages: GainStages, _ pipelines: Pipelines, at now: ContinuousClock.Instant) -> Double {
        if stages === pipelines.incoming { return 0 }
        guard let crossfade, stages === pipelines.current || stages === pipelines.outgoing else { return 1 }
        let progress = crossfade.value(at: now)
        return stages === pipelines.outgoing ? cos(progress * .pi / 2) : sin(progress * .pi / 2)
    }

    /// The one gain of `stages` at `now`: volume times the sleep timer's fade times its part in a
    /// crossfade, and the mute.
    private func level(of stages: GainStages, _ pipelines: Pipelines, at now: ContinuousClock.Instant) -> StreamLevel {
        StreamLevel(volume: volume * fadeGain(at: now) * crossfadeGain(for: stages, pipelines, at: now), muted: muted)
    }

    // MARK: Applying

    /// Sets every pipeline's stages for the levels now, all read at one instant.
    func applyAll() {
        let pipelines = pipelines(), now = ContinuousClock.now
        for each in [pipelines.current, pipelines.outgoing, pipelines.incoming] { if let each { apply(to: each, pipelines, at: now) } }
    }

    /// Sets `stages` for the levels now: the one gain on the one stage where it applies, the
    /// others at 1.
    func apply(to stages: GainStages) { apply(to: stages, pipelines(), at: .now) }

    private func apply(to stages: GainStages, _ pipelines: Pipelines, at now: ContinuousClock.Instant) {
        if let probe = stages.replayGain, stages !== pipelines.outgoing, stages.replayGainGiven != replayGain {
            stages.replayGainGiven = replayGain
            probe.set(replayGain.albumMode.map { ($0, replayGain.preamp) })
            probe.setNext(albumMode: replayGain.nextAlbumMode)
        }
        let level = level(of: stages, pipelines, at: now)
        let unity = StreamLevel(volume: 1, muted: false)
        if stages.stream != nil {
            // PipeWire 0.3.65 opens a stream at its own level, not the one pulsesink gives it
            // (START_MUTED and the volume are lost): the stream is given them again at its preroll
            // (`streamOpened`); one that opens playing has them carried by the element in front
            // until the server has told of it, and its first report gives them again
            let carried = stages.opensPlaying && !stages.echo.hasHeard
            setFront(of: stages, carried ? level : unity)
            setFilter(of: stages, unity)
            give(level, to: stages)
        } else if stages.front != nil {
            setFront(of: stages, level)
            setFilter(of: stages, unity)
        } else {
            // no element in front of the sink: volume and mute in the filter, where playsink's queue
            // after it delays them about a second, too late for a fade's steps
            setFilter(of: stages, StreamLevel(volume: volume, muted: muted))
        }
    }

    private func setFront(of stages: GainStages, _ level: StreamLevel) {
        guard let front = stages.front, stages.frontLevel != level else { return }
        stages.frontLevel = level
        front.set("volume", level.volume)
        front.set("mute", level.muted)
    }

    private func setFilter(of stages: GainStages, _ level: StreamLevel) {
        guard let filter = stages.filter, stages.filterLevel != level else { return }
        stages.filterLevel = level
        if let probe = stages.replayGain { return probe.setLevel(level.volume, muted: level.muted) }
        filter.set("volume", level.volume)
        filter.set("mute", level.muted)
    }

    /// Gives the stream `level` unless it has it already or is to (`force`: both again), one
    /// request per property that changes, each remembered as the level the stream has after it.
    private func give(_ level: StreamLevel, to stages: GainStages, force: Bool = false) {
        guard let stream = stages.stream else { return }
        let known = stages.echo.expected
        if !force, let known, level.isHeard(as: known) { return }
        let volumeChanges = force || known.map { !StreamLevel.sameVolume($0.volume, level.volume) } ?? true
        let muteChanges = force || known.map { $0.muted != level.muted } ?? true
        if volumeChanges {
            stream.set("volume", level.volume)
            // the server may tell of the stream between the two requests
            if muteChanges, let known, known.muted != level.muted {
                stages.echo.gave(StreamLevel(volume: level.volume, muted: known.muted))
            }
        }
        if muteChanges { stream.set("mute", level.muted) }
        stages.echo.gave(level)
    }

    /// The stream exists at the server once its pipeline prerolled, corked: given the levels now,
    /// before PLAYING uncorks it (the requests go in order on pulsesink's one connection), it is
    /// heard at them from its first sample on PipeWire too, which dropped those it was opened with.
    func streamOpened(_ stages: GainStages) {
        guard stages.stream != nil, !stages.opensPlaying else { return }
        give(level(of: stages, pipelines(), at: .now), to: stages, force: true)
    }

    /// The server told of the stream of `stages` (pulsesink notified its `volume`): reading the
    /// sink's properties asks the server, after every setting this queue sent. A level of ours
    /// coming back is no news; any other is someone else's and goes to `sliderMoved`, and the stream
    /// keeps it (the player's volume, set from it, comes back as `setVolume`).
    func streamReported(_ stages: GainStages) { streamReported(stages, reread: nil) }

    /// `reread`: which re-read of the series this is (1 for the first), nil for the server's report.
    private func streamReported(_ stages: GainStages, reread: Int?) {
        guard let stream = stages.stream, stages.echo.expected != nil else { return }
        let report = StreamLevel(volume: stream.double("volume"), muted: stream.bool("mute"))
        let heard = stages.echo.hear(report)
        logger.debug("the stream's levels read", metadata: ["level": "\(report)", "report": "\(heard)", "reread": "\(reread ?? 0)",
                                                           "pending": "\(stages.echo.given)"])
        if heard == .unchanged, !stages.echo.given.isEmpty {
            if let reread, reread >= Self.rereadDelays.count {
                // every re-read read the level from before ours, 430 ms on: that is the server's
                // state, whatever became of ours. In the failure this answers (issue 37, PipeWire
                // 0.3.65) our mute got no report at all, and the desktop's unmute about 100 ms
                // after it got one that read the level from before the mute: by value that is no
                // news, and unheard the player stayed muted while the desktop showed it unmuted
                stages.stopRereading()
                if stages.echo.yieldToServer() {
                    logger.info("the stream kept a level that is not ours: the server's is taken", metadata: ["level": "\(report)"])
                    return heardFromSomeoneElse(report, on: stages)
                }
                return
            }
            rereadLater(stages, afresh: reread == nil)
        } else {
            stages.stopRereading()
        }
        if let reread, heard != .unchanged {
            logger.info("a re-read of the stream found what its report missed", metadata: [
                "level": "\(report)", "report": "\(heard)", "reread": "\(reread)",
                "after": "\(Self.rereadDelays.prefix(reread).reduce(.zero, +))",
            ])
        }
        switch heard {
        case .first(let ours):
            if !ours { logger.info("the sound server opened the stream at its own level: ours again", metadata: ["level": "\(report)"]) }
            apply(to: stages)
        case .ours:
            // the server is at a level of ours, and nothing more is on its way: when that is not
            // the level now (ours reached it after someone else's), it is given again
            apply(to: stages)
        case .unchanged:
            break
        case .slider:
            logger.info("the stream's levels were changed at the sound server", metadata: ["level": "\(report)"])
            heardFromSomeoneElse(report, on: stages)
        }
    }

    /// Someone else set the stream at `report`: the player hears it, with whether a fade had the
    /// stream below the volume.
    private func heardFromSomeoneElse(_ report: StreamLevel, on stages: GainStages) {
        let fading = fadeGain() != 1 || crossfadeGain(for: stages, pipelines(), at: .now) != 1
        sliderMoved(report, fading)
    }

    // MARK: Re-reading the stream

    /// The server's report of the stream told no news while levels of ours are still on their way:
    /// the stream is read again a little later, a few times at most (`rereadDelays`), each re-read
    /// one more report by value. PipeWire 0.3.65's pulse server answers the query made at a change's
    /// event with the stream's state from before the change, now and then (its cached info not yet
    /// updated), and tells of that change no more: our mute was heard as the level before it, and
    /// the desktop's slider unmuting right after looked like no change and went unheard (issue 37).
    /// `afresh`: a report of the server's starts the series again. One timer per stream, on this
    /// queue, existing only while a re-read is waited for; it does nothing when the stream's
    /// pipeline went away or nothing of ours is on its way any more.
    private func rereadLater(_ stages: GainStages, afresh: Bool) {
        dispatchPrecondition(condition: .onQueue(queue))
        if afresh { stages.rereads = 0 }
        guard stages.reread == nil, stages.rereads < Self.rereadDelays.count else { return }
        let delay = Self.rereadDelays[stages.rereads]
        stages.rereads += 1
        let number = stages.rereads
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self, weak stages] in
            guard let stages else { return }
            stages.reread?.cancel()
            stages.reread = nil
            guard let self else { return }
            let pipelines = self.pipelines()
            guard [pipelines.current, pipelines.outgoing, pipelines.incoming].contains(where: { $0 === stages }),
                  !stages.echo.given.isEmpty else { return stages.stopRereading() }
            self.streamReported(stages, reread: number)
        }
        timer.schedule(deadline: .now() + .nanoseconds(Int(delay.nanoseconds)))
        timer.resume()
        stages.reread = timer
    }

    // MARK: The ramps' one timer

    /// Sets the levels for now; a crossfade whose ramp is over ends; the timer runs while a ramp does.
    private func step() {
        let now = ContinuousClock.now
        applyAll()
        if fade.isOver(at: now), fade.length > .zero { fade = .still(fade.to) }
        if let crossfade, crossfade.isOver(at: now) {
            self.crossfade = nil
            crossfadeEnded()
            applyAll()
        }
        schedule()
    }

    /// The timer, every step of the quickest ramp that runs; none while none does.
    private func schedule() {
        dispatchPrecondition(condition: .onQueue(queue))
        let now = ContinuousClock.now
        let steps = [fade, crossfade].compactMap { $0 }.filter { $0.runs(at: now) }.map(\.step)
        guard let wanted = steps.min() else {
            timer?.cancel()
            timer = nil
            timerStep = nil
            return
        }
        guard timer == nil || timerStep != wanted else { return }
        timer?.cancel()
        let made = DispatchSource.makeTimerSource(queue: queue)
        made.setEventHandler { [weak self] in self?.step() }
        let interval = DispatchTimeInterval.nanoseconds(Int(wanted.nanoseconds))
        made.schedule(deadline: .now() + interval, repeating: interval)
        made.resume()
        timer = made
        timerStep = wanted
    }

    /// Whether a ramp's timer exists now, for tests.
    var isStepping: Bool { timer != nil }
}
