import Basics

/// When the video window's on-screen bar shows (docs/video.md): from a movement of the pointer
/// over the window until `shownFor` after the last one, its text refreshed every `refreshEvery`
/// meanwhile. Only the timing, with the time as an input: the machine asks for a timer while the
/// bar shows and for none while it is hidden (rule 7).
public struct ControlsBar: Sendable, Equatable {
    public static let shownFor: Duration = .seconds(2)
    public static let refreshEvery: Duration = .seconds(1)
    /// A timer that fires this close before the bar's end hides it rather than ask for one more
    /// wake-up that short (dispatch timers run on a clock of their own, a hair off this one).
    static let slack: Duration = .milliseconds(20)

    /// When the bar hides; nil while it is hidden.
    public private(set) var hidesAt: ContinuousClock.Instant?
    /// The text the window shows, so that an unchanged one is not sent again: each one sent to a
    /// paused video redraws its frame.
    var shownText: String?

    public init() {}

    public var isShown: Bool { hidesAt != nil }

    /// The pointer moved at `now`: the bar shows until `shownFor` after it. Returns the delay of
    /// the timer to start when the bar was hidden; nil when its timer already runs.
    public mutating func pointerMoved(at now: ContinuousClock.Instant) -> Duration? {
        let wasShown = isShown
        hidesAt = now + Self.shownFor
        return wasShown ? nil : min(Self.refreshEvery, Self.shownFor)
    }

    public enum Tick: Sendable, Equatable {
        /// The bar stays: its text is refreshed, and the timer fires again after this long.
        case refresh(next: Duration)
        case hide
    }

    /// The bar's timer fired at `now`.
    public mutating func tick(at now: ContinuousClock.Instant) -> Tick {
        guard let hidesAt, now + Self.slack < hidesAt else {
            hide()
            return .hide
        }
        return .refresh(next: min(Self.refreshEvery, hidesAt - now))
    }

    public mutating func hide() {
        hidesAt = nil
        shownText = nil
    }
}

extension PlayerMachine {
    /// `ControlsVisible`: false hides the bar and keeps it hidden whatever the pointer does.
    /// Settable with no window; saved with the queue.
    public mutating func setControlsVisible(_ on: Bool) {
        guard on != video.controlsVisible else { return }
        if !on { hideControls() }
        var next = video
        next.controlsVisible = on
        setVideo(next)
    }

    /// The pointer moved over the window at `now`.
    mutating func pointerMoved(now: ContinuousClock.Instant) {
        guard video.controlsVisible, video.hasWindow, video.hasVideo else { return }
        guard let first = controlsBar.pointerMoved(at: now) else { return }
        append(.startTimer(.controls, after: first))
        refreshControls(now: now)
    }

    /// The bar's timer fired at `now`: its text follows the position, or it hides.
    mutating func controlsDue(now: ContinuousClock.Instant) {
        switch controlsBar.tick(at: now) {
        case .hide:
            command(.video(.controls(nil)))
        case .refresh(let next):
            refreshControls(now: now)
            append(.startTimer(.controls, after: next))
        }
    }

    /// Hides the bar now (its timer with it), if it shows.
    mutating func hideControls() {
        guard controlsBar.isShown else { return }
        controlsBar.hide()
        append(.cancelTimer(.controls))
        command(.video(.controls(nil)))
    }

    private mutating func refreshControls(now: ContinuousClock.Instant) {
        guard let text = controlsText(at: now), text != controlsBar.shownText else { return }
        controlsBar.shownText = text
        command(.video(.controls(text)))
    }

    /// What the bar says: the play state, the title, the position and the length when known
    /// ("▶  Title  1:23 / 4:56"; "❚❚" while not playing).
    func controlsText(at now: ContinuousClock.Instant) -> String? {
        guard let item = currentItem else { return nil }
        let position = ClockText.format(microseconds: position(at: now).microseconds)
        let time = item.duration.map { "\(position) / \(ClockText.format(microseconds: $0.microseconds))" } ?? position
        let state = transport.intent == .playing ? "▶" : "❚❚"
        return "\(state)  \(Self.windowTitle(item))  \(time)"
    }
}
