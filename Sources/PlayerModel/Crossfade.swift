/// What the engine does for a crossfade. The model decides when (it knows the position and the
/// item's length); the engine plays the next item in a second pipeline beside the current one,
/// each on an equal-power ramp, and says `.streamStarted` for the next item's generation when it
/// starts, the moment the player makes it current (MPRIS Metadata changes as the fade begins).
public enum CrossfadeCommand: Hashable, Sendable, Codable {
    /// Build the pipeline of `uri` (the next item, as `generation`), silent, ready to start: asked
    /// `CrossfadeState.preparation` before the fade, so that building it is not heard as a delay.
    /// An engine that cannot play two streams at once arms it as the gapless next item instead.
    case prepare(MediaURI, Generation)
    /// Start the prepared item now and fade over `length` (what is left of the current item).
    case start(length: Duration)
    /// The prepared item is not wanted any more (the crossfade was turned off, the queue changed).
    case cancel
}

/// The machine's side of a crossfade into the next item.
struct CrossfadeState: Sendable {
    /// The generation of the next item held back from the engine's gapless switch because it is to
    /// crossfade (`prepareGaplessNext`).
    var held: Generation?
    /// `held` was handed to the engine with `.prepare`.
    var prepared = false
    /// The generation whose crossfade was started: it switches at the engine's `.streamStarted`.
    var started: Generation?
    /// The position of the current item at which the crossfade timer is due, while it runs.
    var timerDue: Duration?
    /// An input with no time (a queue edit, a tag read) held the next item for a crossfade: it is
    /// planned at once, by a timer due now (`askCrossfadePlan`).
    var planWanted = false
    static let planNow = Duration.seconds(-1)

    /// How long before the fade the next item's pipeline is built and opened (to READY: it prerolls
    /// as it starts).
    static let preparation = Duration.seconds(1)
    /// A fade shorter than this is not worth a second stream: the items follow gaplessly.
    static let shortest = Duration.milliseconds(100)
    /// Where the longest crossfade ends (extension `Crossfade`).
    public static let longest = Duration.seconds(12)
}

extension AudioSettings {
    /// The crossfade's range in seconds (extension `Crossfade`); 0 is off.
    public static let crossfadeRange: ClosedRange<Double> = 0...12

    /// `crossfade` in seconds, as clients read and set it.
    public var crossfadeSeconds: Double {
        Double(crossfade.components.seconds) + Double(crossfade.components.attoseconds) / 1e18
    }
}

extension PlayerMachine {
    /// `Crossfade` in seconds (the caller checked `AudioSettings.crossfadeRange`) and
    /// `CrossfadeAlbums`. Takes effect at the current item's end if there is still time for it.
    public mutating func setCrossfade(_ seconds: Double, albums: Bool, now: ContinuousClock.Instant) {
        guard seconds.isFinite, AudioSettings.crossfadeRange.contains(seconds) else { return }
        let length = Duration.milliseconds(Int64((seconds * 1000).rounded()))
        guard length != audio.settings.crossfade || albums != audio.settings.crossfadeAlbums else { return }
        audio.settings.crossfade = length
        audio.settings.crossfadeAlbums = albums
        emit(.audioChanged(audio.settings))
        prepareGaplessNext()
        planCrossfade(now: now)
    }

    /// At a restore: the saved crossfade, when it is one this player takes.
    mutating func restoreCrossfade(_ saved: AudioSettings) {
        if AudioSettings.crossfadeRange.contains(saved.crossfadeSeconds) { audio.settings.crossfade = saved.crossfade }
        audio.settings.crossfadeAlbums = saved.crossfadeAlbums
    }

    /// Whether the current item ends in a crossfade into `nextID`: a crossfade is set, the next
    /// item is another one (a looping track stays gapless), and the two are not consecutive tracks
    /// of one album played in order (a live album, a symphony), unless `crossfadeAlbums`. Nothing
    /// live crossfades: a stream has no end to fade from.
    func crossfades(into nextID: ItemID) -> Bool {
        guard audio.settings.crossfade >= CrossfadeState.shortest, let current = playQueue.current, current.id != nextID,
              let next = playQueue.item(nextID), !current.isLive, !next.isLive, !video.hasVideo else { return false }
        return audio.settings.crossfadeAlbums || !Self.albumContinues(from: current, to: next, shuffled: playQueue.isShuffled)
    }

    /// `next` is the track after `current` on the same album (the same album title and album
    /// artists, or else artists; the next track number, or the first track of the next disc),
    /// played in the queue's order.
    static func albumContinues(from current: Item, to next: Item, shuffled: Bool) -> Bool {
        guard !shuffled, let album = current.metadata.album, !album.isEmpty, next.metadata.album == album else { return false }
        func artists(_ metadata: Metadata) -> [String] { metadata.albumArtists.isEmpty ? metadata.artists : metadata.albumArtists }
        guard artists(current.metadata) == artists(next.metadata) else { return false }
        guard let track = current.metadata.trackNumber, let following = next.metadata.trackNumber else { return true }
        let disc = current.metadata.discNumber ?? 1, nextDisc = next.metadata.discNumber ?? 1
        return (nextDisc == disc && following == track + 1) || (nextDisc == disc + 1 && following == 1)
    }

    /// The armed next item `armed` held back for a crossfade, or handed to the engine for a
    /// gapless switch, as the settings and tags say now (they may have changed since it was armed).
    mutating func holdForCrossfade(_ armed: (id: ItemID, generation: Generation), uri: MediaURI) {
        guard fade.started != armed.generation else { return }
        let wanted = crossfades(into: armed.id)
        guard wanted != (fade.held == armed.generation) else { return }
        if wanted {
            command(.prepareNext(nil, nil))
            fade.held = armed.generation
            fade.planWanted = true
        } else {
            if fade.prepared { command(.crossfade(.cancel)) }
            forgetCrossfade()
            command(.prepareNext(uri, armed.generation))
        }
    }

    /// Nothing of a crossfade remains (the load was released, or the next item switched).
    mutating func forgetCrossfade() {
        if fade.timerDue != nil { append(.cancelTimer(.crossfade)) }
        fade = CrossfadeState()
    }

    /// Asks for the crossfade's steps as the position reaches them, while playing towards the end
    /// of an item held for a crossfade: the preparation `CrossfadeState.preparation` before the
    /// fade, then its start `crossfade` before the end. One timer, due at the next step's position;
    /// none while paused, seeking or loading (the position does not move then). Checked after each
    /// engine event, timer and setting that can change it.
    mutating func planCrossfade(now: ContinuousClock.Instant, fired: Bool = false) {
        if fired { fade.timerDue = nil }
        fade.planWanted = false
        if fade.prepared, bedtime.stopAfterCurrent { cancelPreparation() }  // playback stops at this item's end
        guard !bedtime.stopAfterCurrent, let ready = loadState.ready, let next = ready.next, fade.held == next.generation,
              let item = playQueue.current, let duration = item.duration, let nextItem = playQueue.item(next.id),
              transport.intent == .playing, ready.pipeline.state == .playing, ready.pipeline.pending == nil,
              ready.seek == nil, ready.pipeline.buffering.pause == nil, settings.rate == 1
        else { return stopCrossfadeTimer() }
        let length = min(audio.settings.crossfade, duration)
        let start = duration - length
        let position = position(at: now)
        if fade.prepared, position < start - CrossfadeState.preparation * 2 {
            cancelPreparation()  // sought back from the end: the next item's pipeline is not held meanwhile
        }
        if !fade.prepared {
            guard position >= start - CrossfadeState.preparation else { return dueAt(start - CrossfadeState.preparation, position) }
            fade.prepared = true
            command(.crossfade(.prepare(nextItem.uri, next.generation)))
        }
        guard position >= start else { return dueAt(start, position) }
        stopCrossfadeTimer()
        let left = duration - position
        // the engine's `.streamStarted` of the next generation makes it current (`handlePrepared`)
        fade.held = nil
        fade.prepared = false
        fade.started = next.generation
        command(.crossfade(.start(length: max(left, CrossfadeState.shortest))))
    }

    /// After an input with no time that wants a plan (see `CrossfadeState.planWanted`).
    mutating func askCrossfadePlan() {
        guard fade.planWanted else { return }
        fade.planWanted = false
        fade.timerDue = CrossfadeState.planNow
        append(.startTimer(.crossfade, after: .zero))
    }

    private mutating func cancelPreparation() {
        fade.prepared = false
        command(.crossfade(.cancel))
    }

    private mutating func dueAt(_ target: Duration, _ position: Duration) {
        guard fade.timerDue != target else { return }
        fade.timerDue = target
        append(.startTimer(.crossfade, after: target - position))
    }

    private mutating func stopCrossfadeTimer() {
        guard fade.timerDue != nil else { return }
        fade.timerDue = nil
        append(.cancelTimer(.crossfade))
    }
}
