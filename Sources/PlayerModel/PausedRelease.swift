/// Paused for `after`, the current item's pipeline is released (the sound server's stream and the
/// device with it) and the item stays current where it was: Play, or a seek, loads it again there.
/// A paused stream is not asleep: libpulse asks the server for its timing every 1.5 s while it is
/// corked (PA_STREAM_AUTO_TIMING_UPDATE, which pulsesink sets), so a paused player woke 1-2 times a
/// second for as long as it stayed paused (rule 7). The timer exists only between the pause and
/// the release. A video stays (its window shows the paused frame), and so does an item that cannot
/// seek back to where it was. Only an output that wakes while paused is released: a fake, ALSA or
/// file sink wakes nothing, and its pipeline is kept (no release, no teardown at 5 s).
struct PausedRelease {
    /// The timer runs: paused, prerolled, not released yet.
    var waiting = false
    /// Released while paused (or restored paused, never loaded): a seek prerolls at its target
    /// (as on a stopped player).
    var released = false

    /// Long enough that a pause to answer the door resumes on the kept stream at once.
    static let after = Duration.seconds(5)
}

extension PlayerMachine {
    /// Starts the release's timer when the player has just come to rest paused, and cancels it
    /// when that no longer holds (played, stopped, another item, a seek under way).
    mutating func updatePausedRelease() {
        if loadState.pipeline != nil { pausedRelease.released = false }
        let wanted = mayReleaseWhilePaused
        guard wanted != pausedRelease.waiting else { return }
        pausedRelease.waiting = wanted
        append(wanted ? .startTimer(.pausedRelease, after: PausedRelease.after) : .cancelTimer(.pausedRelease))
    }

    private var mayReleaseWhilePaused: Bool {
        guard transport.intent == .paused, let ready = loadState.ready, ready.seek == nil, ready.pipeline.streamWakesWhilePaused,
              ready.pipeline.state == .paused, ready.pipeline.pending == nil, let item = playQueue.current else { return false }
        return item.isSeekable && !item.isLive && !video.hasVideo
    }

    /// The timer fired: the pipeline goes, the item stays paused where it was.
    mutating func pausedReleaseDue(now: ContinuousClock.Instant) {
        pausedRelease.waiting = false
        guard mayReleaseWhilePaused else { return }
        let resumeAt = position(at: now)
        release()
        loadState = .idle(start: SeekRequest(target: .position(resumeAt), mode: .exact))
        pausedRelease.released = true  // still paused: the status does not change
    }
}
