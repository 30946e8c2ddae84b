import Basics
import PlayerModel

/// The watchdog of the engine's link, as a value (design brief, "An engine that does not answer is
/// ended"): what was asked of the engine's queue and not answered yet, whether an item plays, and
/// the positions the engine gave while it plays. Time is an input: `RemoteEngine` owns it on its
/// queue, keeps one timer at `wakeUp` (none while nothing is asked and nothing plays: an idle or
/// paused service is not woken), and ends the engine at a `.stalled` verdict.
///
/// A deadlocked GStreamer shows in one of two ways: the engine's queue waits in a GStreamer call
/// for good (a state change waiting for a streaming thread), and no command is answered; or the
/// queue answers but the streaming threads stand still, and the position of a playing file stops
/// moving. The first is caught by the answers' bound, the second by the position.
public struct EngineWatch: Sendable {
    /// How long the engine may take at most to answer, past which it is ended.
    public struct Bounds: Sendable, Equatable {
        /// For each command, once GStreamer is set up, unless the engine said it waits for longer
        /// (`waiting`): its own longest waits are 3 s (a slot among the pipelines going to NULL)
        /// and 2 s (a device let go of), and the user manager's display is asked with a 2 s timeout.
        public var command: Duration
        /// For the set-up: the first gst_init with no registry cache scans every plugin.
        public var setUp: Duration
        /// While an item plays and nothing else is asked, the engine is asked its position this often.
        public var probeInterval: Duration

        public static let standard = Bounds(command: .seconds(5), setUp: .seconds(60), probeInterval: .seconds(2))

        public init(command: Duration, setUp: Duration, probeInterval: Duration) {
            self.command = command
            self.setUp = setUp
            self.probeInterval = probeInterval
        }

        /// The standard bounds, with the command's from `TONEARM_ENGINE_TIMEOUT` (whole seconds,
        /// 1 to 600) when it is set: a slow machine, or a build under a sanitizer.
        public static func fromEnvironment(_ environment: [String: String]) -> Bounds {
            var bounds = Bounds.standard
            if let text = environment["TONEARM_ENGINE_TIMEOUT"], let timeout = parseTimeout(text) {
                bounds.command = timeout
                bounds.setUp = max(bounds.setUp, timeout)
            }
            return bounds
        }

        /// `TONEARM_ENGINE_TIMEOUT`'s value: whole seconds, 1 to 600; nil when `text` is not one.
        public static func parseTimeout(_ text: String) -> Duration? {
            guard let seconds = Int(text.trimmingWhitespace()), (1...600).contains(seconds) else { return nil }
            return .seconds(seconds)
        }
    }

    /// A local file whose position stands still for this many probes in a row while it plays, with
    /// no buffering (a file has no network to wait for), has stalled.
    static let frozenProbes = 2

    public enum Action: Equatable, Sendable {
        /// Ask the engine's position (`EngineRequest.probe`).
        case probe
        /// The engine stalled: why, for the log and the item's error.
        case stalled(String)
    }

    public let bounds: Bounds
    /// What was asked and not answered, oldest first (commands and probes share the numbers).
    private var unanswered: [(number: UInt64, what: String)] = []
    /// The engine's last sign of progress: an answer, a wait announced, the set-up's end, or the
    /// first question after a quiet time.
    private var since: ContinuousClock.Instant
    /// A wait the engine announced, counted from `since` instead of the bound.
    private var announced: Duration?
    /// GStreamer's set-up has not ended yet (its bound applies).
    public private(set) var settingUp = true
    /// The pipeline said it plays (and nothing since said otherwise), since when.
    private var playingSince: ContinuousClock.Instant?
    /// A load was sent and has not prerolled (nor failed) yet, since when: an engine stopped in
    /// the middle of it would otherwise never be asked anything again.
    private var loadingSince: ContinuousClock.Instant?
    /// The current load is a local file: its position must move while it plays.
    private var watchesPosition = false
    private var buffering = false
    private var lastPosition: Duration?
    private var frozen = 0
    private var lastProbe: ContinuousClock.Instant?

    public init(bounds: Bounds = .standard, at now: ContinuousClock.Instant) {
        self.bounds = bounds
        since = now
    }

    // MARK: Inputs

    /// A command went to the engine with `number`.
    public mutating func sent(_ command: EngineCommand, number: UInt64, at now: ContinuousClock.Instant) {
        asked(number, Self.describe(command), at: now)
        switch command {
        case .load(let uri, _):
            watchesPosition = uri.isFile
            stopped()
            loadingSince = now
        case .release:
            stopped()
            loadingSince = nil
        case .setPlaying(false):
            stopped()
        case .seek:
            restartPositions()
        default:
            break
        }
    }

    /// A probe went to the engine with `number`.
    public mutating func sentProbe(number: UInt64, at now: ContinuousClock.Instant) {
        asked(number, "a question of its position", at: now)
        lastProbe = now
    }

    private mutating func asked(_ number: UInt64, _ what: String, at now: ContinuousClock.Instant) {
        if unanswered.isEmpty {
            since = now
            announced = nil
        }
        unanswered.append((number, what))
    }

    /// The engine's queue performed everything up to `number`.
    public mutating func answered(through number: UInt64, at now: ContinuousClock.Instant) {
        unanswered.removeAll { $0.number <= number }
        since = now
        announced = nil
    }

    /// The answer to a probe: the position then. A verdict when a playing file has stood still.
    public mutating func probed(_ number: UInt64, position: Duration?, at now: ContinuousClock.Instant) -> Action? {
        answered(through: number, at: now)
        guard playingSince != nil, watchesPosition, !buffering, let position else {
            restartPositions()
            return nil
        }
        frozen = lastPosition == position ? frozen + 1 : 0
        lastPosition = position
        guard frozen >= Self.frozenProbes else { return nil }
        let seconds = Double((bounds.probeInterval * frozen).nanoseconds) / 1e9
        return .stalled("the position stood still at \(ClockText.format(microseconds: position.microseconds)) for \(Self.text(seconds)) s while playing")
    }

    /// The engine waits for `what`, at most `bound`.
    public mutating func waiting(bound: Duration, at now: ContinuousClock.Instant) {
        since = now
        announced = bound
    }

    /// GStreamer's set-up ended (well or not): the command bound applies from now.
    public mutating func setUpEnded(at now: ContinuousClock.Instant) {
        settingUp = false
        since = now
        announced = nil
    }

    /// An event of the engine: whether its pipeline plays, buffers, or jumped.
    public mutating func observed(_ event: EngineEvent, at now: ContinuousClock.Instant) {
        switch event {
        case .stateChanged(let state, let pending, _):
            if state == .playing && (pending == nil || pending == .playing) {
                if playingSince == nil { playingSince = now }
            } else {
                stopped()
            }
        case .buffering(let percent, _):
            buffering = percent < 100
            restartPositions()
        case .endOfStream, .failed:
            stopped()
            loadingSince = nil
        case .streamStarted, .asyncDone, .live:
            loadingSince = nil
            restartPositions()
        case .seekDone, .gap:
            restartPositions()
        default:
            break
        }
    }

    /// Whether `event` tells the watch anything (the others need not reach its queue).
    public static func watches(_ event: EngineEvent) -> Bool {
        switch event {
        case .stateChanged, .buffering, .endOfStream, .failed, .streamStarted, .asyncDone, .live, .seekDone, .gap: true
        default: false
        }
    }

    private mutating func stopped() {
        playingSince = nil
        restartPositions()
    }

    private mutating func restartPositions() {
        lastPosition = nil
        frozen = 0
    }

    // MARK: Time

    /// The bound that applies to the oldest question now.
    private var bound: Duration { announced ?? (settingUp ? bounds.setUp : bounds.command) }

    /// When the oldest question is late.
    private var deadline: ContinuousClock.Instant? { unanswered.isEmpty ? nil : since + bound }

    /// When to ask the position next: while a load is under way or an item plays, with nothing
    /// else asked. Paused or stopped, never: nothing wakes.
    private var nextProbe: ContinuousClock.Instant? {
        guard unanswered.isEmpty, let active = [playingSince, loadingSince].compactMap({ $0 }).min() else { return nil }
        return max(lastProbe ?? active, active) + bounds.probeInterval
    }

    /// When the watch must look again; nil: not until something changes (no timer).
    public var wakeUp: ContinuousClock.Instant? {
        switch (deadline, nextProbe) {
        case (let a?, let b?): min(a, b)
        case (let a?, nil): a
        case (nil, let b?): b
        case (nil, nil): nil
        }
    }

    /// What to do at `now`: nothing, ask the position, or end the engine.
    public func check(at now: ContinuousClock.Instant) -> Action? {
        if let deadline, now >= deadline, let oldest = unanswered.first {
            let seconds = Double(bound.nanoseconds) / 1e9
            return .stalled("no answer to \(oldest.what) within \(Self.text(seconds)) s")
        }
        if let nextProbe, now >= nextProbe { return .probe }
        return nil
    }

    // MARK: Words

    /// What a command asks, for a person reading why the engine was ended.
    static func describe(_ command: EngineCommand) -> String {
        switch command {
        case .load(let uri, _): "the load of \(uri.displayName)"
        case .prepareNext: "the next item's preparation"
        case .setPlaying(true), .playAfterPreroll(true): "play"
        case .setPlaying(false), .playAfterPreroll(false): "pause"
        case .release: "stop"
        case .seek(.current, _, _): "a rate change"
        case .seek: "a seek"
        case .setVolume: "a volume change"
        case .setMuted: "a mute change"
        case .fade: "the sleep timer's fade"
        case .video: "a video window request"
        case .audio: "an audio setting"
        case .setOutput: "an output change"
        case .crossfade: "a crossfade"
        }
    }

    private static func text(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? Digits.fixed(seconds, fractionDigits: 0) : Digits.fixed(seconds, fractionDigits: 1)
    }
}
