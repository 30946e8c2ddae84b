/// A sleep timer: playback pauses at `deadline`, fading out over the `fade` before it. The clock
/// keeps running while paused (as a phone's sleep timer does: it counts the minutes of the
/// evening, not of the music). Nothing of it is saved: a timer set last night means nothing after
/// a restart.
public struct SleepTimer: Sendable, Hashable {
    public var deadline: ContinuousClock.Instant
    /// The last part of the timer, during which the output fades to silence: `longestFade`, or
    /// the whole timer when it is shorter.
    public var fade: Duration

    /// The fade of a timer longer than this lasts this long.
    public static let longestFade = Duration.seconds(10)
    /// The longest timer: a day. A longer one is no sleep timer (a client's mistake, refused).
    public static let longest = Duration.seconds(86_400)

    public init(length: Duration, from now: ContinuousClock.Instant) {
        let length = min(max(length, .zero), Self.longest)
        deadline = now + length
        fade = min(Self.longestFade, length)
    }

    public var fadeStart: ContinuousClock.Instant { deadline - fade }

    /// The output's level at `now`: 1 before the fade, then falling to 0 at the deadline. The
    /// square of the time left: a linear amplitude would stay loud and then drop in its last
    /// second; the square falls more evenly in loudness.
    public func level(at now: ContinuousClock.Instant) -> Double {
        guard now > fadeStart else { return 1 }
        guard deadline > now, fade > .zero else { return 0 }
        let left = (deadline - now) / fade
        return left * left
    }
}

/// What ends the listening: stop after the current item, and the sleep timer. Neither is saved.
struct Bedtime {
    /// Stop when the current item ends (the next one becomes current, stopped), then turn off.
    var stopAfterCurrent = false
    /// The gapless next item's generation taken back from the engine because of
    /// `stopAfterCurrent` (see `withdrawGaplessNext`).
    var withdrawn: Generation?
    var timer: SleepTimer?
    /// The engine was told to fade out (`EngineCommand.fade`), and not yet to come back to 1.
    var fading = false
}

extension PlayerMachine {
    public var stopsAfterCurrent: Bool { bedtime.stopAfterCurrent }
    public var sleepTimer: SleepTimer? { bedtime.timer }

    // MARK: Stop after the current item

    /// On: when the current item ends, whichever it is then (after a Next, a jump, an OpenUri),
    /// playback stops there and the item that would have followed becomes current, stopped at its
    /// start (Rhythmbox's "stop after current", MPD's one-shot `single`); then it turns off by
    /// itself. A Stop or a Pause by the user leaves it on.
    public mutating func setStopAfterCurrent(_ on: Bool) {
        guard on != bedtime.stopAfterCurrent else { return }
        bedtime.stopAfterCurrent = on
        emit(.stopAfterCurrentChanged(on))
        if !on, let next = loadState.ready?.next, bedtime.withdrawn == next.generation, let item = playQueue.item(next.id) {
            // armed again under the generation the engine may be playing already
            command(.prepareNext(item.uri, next.generation))
        }
        if !on { bedtime.withdrawn = nil }
        prepareGaplessNext()
    }

    /// Nothing may follow the current item gaplessly while it is to stop after it. An item
    /// already armed is taken back from the engine but remembered: about-to-finish may have set
    /// its URI already (it runs seconds before the end), and then its STREAM_START is the
    /// boundary, where playback stops (`stopAtGaplessBoundary`).
    mutating func withdrawGaplessNext() {
        guard let next = loadState.ready?.next, bedtime.withdrawn != next.generation else { return }
        bedtime.withdrawn = next.generation
        command(.prepareNext(nil, nil))
    }

    /// The current item played to its end (EOS) while `stopAfterCurrent` was on: stopped, on the
    /// item that would have followed (the same one when looping a track; the current one stays
    /// at the end of the queue).
    mutating func stopAfterCurrentEnded() {
        guard let id = playQueue.currentID else { return }
        let following = settings.loopMode == .track ? id : nextItemID(wrap: settings.loopMode == .queue)
        turnOffStopAfterCurrent()
        release()
        setIntent(.stopped)
        if let following, following != id { makeCurrent(following, load: false) }
    }

    /// The engine had switched to the next item before `stopAfterCurrent` was turned on (its
    /// about-to-finish had run): the next item is current already, and stops at its start.
    mutating func stopAtGaplessBoundary() {
        turnOffStopAfterCurrent()
        release()
        setIntent(.stopped)
    }

    private mutating func turnOffStopAfterCurrent() {
        bedtime.stopAfterCurrent = false
        bedtime.withdrawn = nil
        emit(.stopAfterCurrentChanged(false))
    }

    // MARK: The sleep timer

    /// Pauses `length` from `now`, fading out over the last `SleepTimer.longestFade` (or the whole
    /// timer when shorter). Replaces a timer already set; zero or less cancels it. Its timer wakes
    /// the service where the fade begins and at the deadline; the engine ramps the level between.
    public mutating func setSleepTimer(after length: Duration, now: ContinuousClock.Instant) {
        guard length > .zero else { return cancelSleepTimer() }
        let timer = SleepTimer(length: length, from: now)
        bedtime.timer = timer
        endFade()  // a timer replaced during its fade starts again from the full level
        if now < timer.fadeStart {
            append(.startTimer(.sleep, after: timer.fadeStart - now))
        } else {
            startFade(timer, now: now)
        }
        emit(.sleepTimerChanged(timer))
    }

    public mutating func cancelSleepTimer() {
        guard bedtime.timer != nil else { return }
        bedtime.timer = nil
        append(.cancelTimer(.sleep))
        endFade()
        emit(.sleepTimerChanged(nil))
    }

    /// The sleep timer's timer fired: the fade begins, or the timer is over and playback pauses
    /// (a pause, not a stop: the next evening's Play goes on where it stopped). The level goes
    /// back to 1 after the pause, so the user's volume is what the next Play has.
    mutating func sleepDue(now: ContinuousClock.Instant) {
        guard let timer = bedtime.timer else { return }
        guard now < timer.deadline else {
            bedtime.timer = nil
            if transport.intent == .playing { pause() }
            endFade()
            emit(.sleepTimerChanged(nil))
            return
        }
        if now < timer.fadeStart {
            append(.startTimer(.sleep, after: timer.fadeStart - now))
        } else if !bedtime.fading {
            startFade(timer, now: now)
        } else {
            append(.startTimer(.sleep, after: timer.deadline - now))
        }
    }

    /// The engine fades to silence by the deadline, and the timer wakes there. A target and a
    /// length, not steps: the engine ramps on its own queue by the wall clock (`OutputLevels`),
    /// not with a GstControlSource on the volume element, whose binding is keyed by the buffers'
    /// stream time (GstBaseTransform's gst_object_sync_values), which starts again at each
    /// gapless track boundary and jumps with a seek; the fade goes on over both, and while paused.
    private mutating func startFade(_ timer: SleepTimer, now: ContinuousClock.Instant) {
        bedtime.fading = true
        command(.fade(to: 0, over: timer.deadline - now))
        append(.startTimer(.sleep, after: timer.deadline - now))
    }

    /// The level back to 1 at once, if a fade had it lower.
    private mutating func endFade() {
        guard bedtime.fading else { return }
        bedtime.fading = false
        command(.fade(to: 1, over: .zero))
    }
}
