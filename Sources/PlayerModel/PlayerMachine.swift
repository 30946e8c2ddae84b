import Basics

/// What the player's owner must do after the machine took an input: tell observers, command the
/// engine, read an unplayed item's tags.
public enum PlayerAction: Sendable, Equatable {
    case emit(PlayerEvent)
    case engine(EngineCommand)
    case readMetadata(ItemID, MediaURI)
    /// Call `timerFired(timer)` after this long (one timer of each kind: a new one replaces the old).
    case startTimer(PlayerTimer, after: Duration)
    /// That timer is not wanted any more.
    case cancelTimer(PlayerTimer)
}

/// The timers the player asks its owner for. Each exists only while what it waits for is pending
/// (rule 7: an idle or playing service never ticks).
public enum PlayerTimer: Hashable, Sendable, CaseIterable {
    /// The wait before a reconnect (`ReconnectPolicy`).
    case reconnect
    /// A buffering pause that makes no progress for `ReconnectPolicy.stallLimit`.
    case bufferingStall
    /// The video window's bar: its next refresh or its end, only while it shows (`ControlsBar`).
    case controls
    /// The sleep timer: the start of its fade, each step of the fade, its end (`SleepTimer.swift`).
    case sleep
    /// The crossfade's preparation and its start (`Crossfade.swift`), only while playing towards it.
    case crossfade
    /// Paused a while: the pipeline is released (`PausedRelease.swift`), only until then.
    case pausedRelease
    /// The next chapter boundary of the current item (`Chapters.swift`), only while playing.
    case chapter
}

/// The player's rules (design brief, rules 1-7) as a state machine: each input (a client's request,
/// an engine event, a finished tag read) changes the state and leaves actions for the owner to
/// perform. It never waits and never calls out, so the queue that owns it answers at once and the
/// rules are tested on their own (swift-nio's state machines have the same shape).
public struct PlayerMachine: Sendable {
    public let configuration: PlayerConfiguration
    public let hasMetadataReader: Bool

    var playQueue = PlayQueue()
    /// What the user asked of the transport, and what it does.
    private var transportState = TransportState()
    /// What clients set that outlives an item (saved with the queue).
    var settings = Settings()
    private var failures = Failures()

    private var generationCounter: UInt64 = 0
    /// The current item's load, and what the engine said of it (see `LoadState`).
    var loadState: LoadState = .idle(start: nil)
    /// The current item's video and the window (`VideoState.swift`).
    public internal(set) var video = VideoState()
    /// When the video window's bar shows (`ControlsBar.swift`).
    var controlsBar = ControlsBar()
    /// Stop after the current item, and the sleep timer (`SleepTimer.swift`).
    var bedtime = Bedtime()
    /// ReplayGain and the equalizer (`AudioSettings.swift`).
    var audio = AudioState()
    /// The chosen output and the devices (`Outputs.swift`).
    var output = Outputs()
    /// The crossfade into the next item under way, if any (`Crossfade.swift`).
    var fade = CrossfadeState()
    /// The release of a pipeline paused a while (`PausedRelease.swift`).
    var pausedRelease = PausedRelease()
    /// The places long items were left at (`KeptPlaces.swift`).
    var places = KeptPlaces()
    /// The current chapter announced, and its timer (`Chapters.swift`).
    var chapterState = ChapterState()
    /// Where the current item's load started from its kept place; nil otherwise.
    var resumedAt: Duration?
    /// The item that just played to its end: leaving it keeps no place.
    var endedID: ItemID?
    /// The instant of the input being taken, set by the owner before each one (`Player.update`):
    /// what the position of an item being left is read at (`leaveCurrent`). Inputs that carry an
    /// instant of their own set it too; nil (a test of the machine alone), no place is kept on leaving.
    public var inputInstant: ContinuousClock.Instant?

    /// Tag reads of items that have not played (see `MetadataReads`).
    private var reads = MetadataReads()
    private static let upcomingReads = 3
    /// The smallest change of the buffering percent that is announced (see `buffering`).
    private static let bufferingStep = 5

    private var actions: [PlayerAction] = []

    public init(configuration: PlayerConfiguration = PlayerConfiguration(), hasMetadataReader: Bool = false) {
        self.configuration = configuration
        self.hasMetadataReader = hasMetadataReader
    }

    /// The actions left by the inputs since the last call, in order. Whatever the inputs changed,
    /// the items about to play have their tags asked for first (see `readMetadata`).
    public mutating func takeActions() -> [PlayerAction] {
        askPlayAfterPreroll()
        syncReplayGain(current: playQueue.currentID, next: loadState.ready?.next?.id, queue: playQueue)
        askCrossfadePlan()
        settleChapters()
        readMetadata()
        defer { actions.removeAll(keepingCapacity: true) }
        return actions
    }

    mutating func emit(_ event: PlayerEvent) { actions.append(.emit(event)) }
    mutating func append(_ action: PlayerAction) { actions.append(action) }
    mutating func command(_ command: EngineCommand) {
        if case .setPlaying = command { loadState.loading?.playsAfterPreroll = false }  // the engine drops it too
        actions.append(.engine(command))
    }

    /// Keeps the engine's `playAfterPreroll` in step with what `becameReady` will ask once the
    /// load under way prerolls: PLAYING when playing is wanted and nothing comes first (a seek
    /// that waits for the preroll, a rate that is a seek, a buffering pause). The pipeline then
    /// plays from its preroll on the engine's thread, without the ASYNC_DONE's hop here and the
    /// command's hop back (make bench, OpenUri -> Position > 0). Checked after every input.
    private mutating func askPlayAfterPreroll() {
        // nor when an item follows for a gapless switch: its uri is armed only once this load
        // prerolled (prepareGaplessNext), and playing before then let a short or fast-draining
        // item reach about-to-finish with nothing armed (make test-tsan, GaplessTests: the
        // second half loaded afresh, the first missing from the capture)
        guard let loading = loadState.loading else { return }  // once prerolled, the engine ignores it
        let wanted = transportState.intent == .playing && loading.pipeline.buffering.pause == nil && loading.start == nil
            && settings.rate == 1 && gaplessNext() == nil
        guard wanted != loading.playsAfterPreroll else { return }
        loadState.loading?.playsAfterPreroll = wanted
        command(.playAfterPreroll(wanted))
    }

    // MARK: Reading

    /// The current value of every state, for a new subscriber (rule 1).
    public var currentValues: [PlayerEvent] {
        var events: [PlayerEvent] = [
            .queueChanged(.replaced(playQueue.ids)),
            .currentItemChanged(playQueue.current),
            .intentChanged(transportState.intent),
            .timeControlStatusChanged(transportState.timeControl),
            .rateChanged(settings.rate, .initial),
            .volumeChanged(settings.volume, muted: settings.muted),
            .loopModeChanged(settings.loopMode),
            .shuffleChanged(playQueue.isShuffled),
            .videoChanged(video),
            .stopAfterCurrentChanged(bedtime.stopAfterCurrent),
            .sleepTimerChanged(bedtime.timer),
            .audioChanged(audio.settings),
            .outputsChanged(output),
            .linearPlaybackChanged(settings.linearPlayback),
            .resumePlacesChanged(settings.resumePlaces),
            .nextByChapterChanged(settings.nextByChapter),
        ]
        if let item = playQueue.current {
            events += [
                .itemStatusChanged(item.id, item.status),
                .metadataChanged(item.id, item.metadata),
                .durationChanged(item.id, item.duration),
                .capabilitiesChanged(item.id, isLive: item.isLive, isSeekable: item.isSeekable),
                .bufferingChanged(item.id, percent: item.bufferingPercent, loadedRanges: item.loadedRanges),
                .chaptersChanged(item.id, item.chapters),
            ]
        }
        return events
    }

    public var state: Player.State {
        Player.State(count: playQueue.count, current: playQueue.current, intent: transportState.intent,
                     timeControlStatus: transportState.timeControl, rate: settings.rate, volume: settings.volume,
                     isMuted: settings.muted, loopMode: settings.loopMode, isShuffled: playQueue.isShuffled,
                     canGoNext: canGoNext, canGoPrevious: canGoPrevious)
    }

    /// Whether Next would move (MPRIS CanGoNext), without building the whole `state`: never while
    /// linear playback is on (`LinearPlayback.swift`).
    public var canGoNext: Bool {
        !settings.linearPlayback && playQueue.currentID != nil
            && (nextItemID(wrap: settings.loopMode != .none) != nil || hasNextChapter)
    }
    /// Whether a seek of the current item has an effect (MPRIS CanSeek): its `canSeek`, and never
    /// while linear playback is on.
    public var canSeek: Bool { !settings.linearPlayback && playQueue.current?.canSeek == true }
    /// Whether Previous would do something (MPRIS CanGoPrevious), without building the whole
    /// `state`: go to the item before, or start the current one again (`previous(now:)`). Not
    /// whether it would do so at this instant: that turns on the position, which moves by itself,
    /// and a property that changed 3 s into every item would need a timer (rule 7).
    public var canGoPrevious: Bool {
        guard let current = playQueue.current else { return false }
        // MPRIS Player.Previous: "If CanGoPrevious is false, attempting to call this method should have no effect"; a restart is an effect
        return current.canSeek || playQueue.previous(before: current.id, wrap: settings.loopMode != .none) != nil
    }

    public var currentItem: Item? { playQueue.current }
    /// `state`'s intent, time control and whether there is a current item, without the rest of it
    /// (its canGoNext and canGoPrevious walk the queue, its current item is copied).
    public var transport: (intent: TransportIntent, timeControlStatus: TimeControlStatus, hasCurrentItem: Bool) {
        (transportState.intent, transportState.timeControl, playQueue.currentID != nil)
    }
    /// Every item in order: O(n).
    public var items: [Item] { playQueue.items }
    /// Every id in order: O(n).
    public var ids: [ItemID] { playQueue.ids }
    public func item(_ id: ItemID) -> Item? { playQueue.item(id) }
    /// While shuffled, `id`'s key in the play order (what is saved to keep the order); nil otherwise.
    public func shuffleKey(of id: ItemID) -> UInt64? { playQueue.shuffleKey(of: id) }
    /// While shuffled, what the keys of the items there when it was shuffled are derived from.
    public var shuffleSeed: UInt64? { playQueue.shuffleSeed }
    /// While shuffled, the play order's keys that do not derive from the seed: O(n).
    public var ownShuffleKeys: [ItemID: UInt64] { playQueue.ownShuffleKeys }

    /// The position of the current item at `now`: the last sample read from the pipeline, moved on
    /// by the time since while the pipeline plays (rule 7: computed when read, never sampled on a timer).
    public func position(at now: ContinuousClock.Instant) -> Duration {
        guard let item = playQueue.current, transportState.intent != .stopped else { return .zero }
        // a seek not done yet is where the position is, within the length once that is known;
        // before, a target past the end (Seek(Int64.max) on a loading file) would show as is
        if let seek = loadState.newestSeek, case .position(let target) = seek.target {
            guard let duration = item.duration else { return loadState.pipeline == nil ? target : .zero }
            return min(target, duration)
        }
        guard let pipeline = loadState.pipeline, let sample = pipeline.position else { return .zero }
        var position = sample.position
        if pipeline.state == .playing && pipeline.pending == nil && now > sample.instant {
            // client numbers are at most Int64.max µs (about 3e5 years): Duration's 128 bits hold any sum
            position = position + (now - sample.instant) * settings.rate
        }
        if let duration = item.duration { position = min(position, duration) }
        return max(position, .zero)
    }

    // MARK: The queue

    /// Adds URIs at the start, the end, or after an item; returns the new items' ids. The first
    /// item added to an empty player becomes current.
    public mutating func enqueue(_ uris: [MediaURI], at placement: Placement) throws(PlayerError) -> [ItemID] {
        if case .after(let after) = placement, playQueue.item(after) == nil {
            throw PlayerError(.noSuchItem, "no item \(after) in the queue")
        }
        guard uris.count <= configuration.maximumQueueLength - playQueue.count else {
            throw PlayerError(.queueFull, "the queue holds at most \(configuration.maximumQueueLength) items; "
                              + "it has \(playQueue.count) and \(uris.count) more were asked for")
        }
        let ids = playQueue.insert(uris, at: placement)
        guard let first = ids.first else { return ids }
        emit(.queueChanged(.inserted(ids, after: playQueue.id(before: first))))
        if playQueue.currentID == nil {
            makeCurrent(first, load: transportState.intent != .stopped)
        } else {
            prepareGaplessNext()
        }
        return ids
    }

    public mutating func remove(_ ids: [ItemID]) throws(PlayerError) {
        for id in ids where !playQueue.contains(id) { throw PlayerError(.noSuchItem, "no item \(id) in the queue") }
        var removing = Set<ItemID>()
        let ids = ids.filter { removing.insert($0).inserted }
        guard !ids.isEmpty else { return }
        for id in ids {
            if id == playQueue.currentID {
                let successor = playQueue.next(after: id, wrap: false) ?? playQueue.previous(before: id, wrap: false)
                let replacement = successor.flatMap { removing.contains($0) ? nil : $0 }
                playQueue.remove(id)
                if let replacement {
                    makeCurrent(replacement, load: transportState.intent != .stopped)
                } else {
                    unloadCurrent()
                }
            } else {
                playQueue.remove(id)
            }
            failures.retries[id] = nil
            reads.forget(id)
        }
        emit(.queueChanged(.removed(ids)))
        prepareGaplessNext()
    }

    public mutating func move(_ id: ItemID, after: ItemID?) throws(PlayerError) {
        guard playQueue.move(id, after: after) else {
            throw PlayerError(.noSuchItem, "cannot move \(id) after \(after.map(String.init(describing:)) ?? "the start")")
        }
        emit(.queueChanged(.moved(id, after: after)))
        prepareGaplessNext()
    }

    public mutating func clear() {
        empty()
        emit(.queueChanged(.replaced([])))
    }

    /// No current item and no queue, and nothing remembered about the items that were in it.
    private mutating func empty() {
        unloadCurrent()
        playQueue.removeAll()
        failures.retries.removeAll()
        reads = MetadataReads()
    }

    /// Replaces the whole queue with `uris` (a playlist activated) and plays the first: one
    /// `.replaced` for observers, not an emptied list and then a filled one.
    public mutating func replace(with uris: [MediaURI]) throws(PlayerError) -> [ItemID] {
        guard uris.count <= configuration.maximumQueueLength else {
            throw PlayerError(.queueFull, "the queue holds at most \(configuration.maximumQueueLength) items; \(uris.count) were asked for")
        }
        empty()
        let ids = playQueue.insert(uris, at: .end)
        emit(.queueChanged(.replaced(ids)))
        if let first = ids.first {
            setIntent(.playing)
            makeCurrent(first, load: true)
        }
        return ids
    }

    /// Makes `id` current, keeping the transport's intent (playing plays it, paused loads it paused).
    public mutating func jump(to id: ItemID) throws(PlayerError) {
        guard playQueue.item(id) != nil else { throw PlayerError(.noSuchItem, "no item \(id) in the queue") }
        go(to: id)
    }

    /// Restores a saved state into an empty player (at start, before anyone is told anything):
    /// the queue with its ids and order, the current item, the settings; items whose files are
    /// gone come back failed with `notFound`, every item with the tags and length saved of it.
    /// `.pause` shows the current item paused at the saved position without loading it (Play or a
    /// seek loads it there; a stopped player stays stopped), `.play` plays it from there, `.none`
    /// does nothing.
    public mutating func restore(_ saved: SavedState, resume: ResumeMode) {
        guard resume != .none, playQueue.isEmpty else { return }
        playQueue.restore(saved.items.map { ($0.id, $0.uri) }, nextID: saved.nextID)
        for entry in saved.items where entry.fileIsMissing && playQueue.contains(entry.id) {
            // the same words as a file that is missing when it is queued (LocalFiles)
            playQueue.update(entry.id) { $0.status = .failed(ItemError(.notFound, "no such file: \(entry.uri.displayPath)")) }
            failures.lastFailed = entry.id
        }
        for entry in saved.items {
            guard let known = entry.metadata, playQueue.contains(entry.id) else { continue }
            // read once already: shown as saved, and not read again (loaded, its tags replace these)
            playQueue.update(entry.id) {
                $0.metadata = known.tags
                if $0.error == nil { $0.duration = known.duration }
            }
            _ = reads.ask(entry.id)
            reads.settle(entry.id)
        }
        let restored = saved.settings
        if restored.volume.isFinite, restored.volume != settings.volume { setVolume(restored.volume) }
        if restored.isMuted != settings.muted { setMuted(restored.isMuted) }
        settings.loopMode = restored.loopMode
        settings.linearPlayback = restored.linearPlayback
        settings.resumePlaces = restored.resumePlaces
        settings.nextByChapter = restored.nextByChapter
        if restored.rate.isFinite, (configuration.minimumRate...configuration.maximumRate).contains(restored.rate) {
            settings.rate = restored.rate
        }
        if let id = restored.currentID, let item = playQueue.item(id) {
            playQueue.setCurrent(id)
            if item.error == nil, let duration = restored.currentDuration, duration > .zero {
                playQueue.update(id) { $0.duration = duration }
            }
        }
        if restored.isShuffled {
            // the same play order as before: Next walks on where it would have
            var keys: [ItemID: UInt64] = [:]
            for entry in saved.items { if let key = entry.shuffleKey { keys[entry.id] = key } }
            playQueue.restoreShuffle(seed: restored.shuffleSeed, keys: keys)
        }
        restoreVideoSettings(restored.video)
        restoreAudio(restored.audio)
        restoreOutput(restored.output)
        restoreCrossfade(restored.audio)
        for event in currentValues { emit(event) }
        guard let item = playQueue.current else { return }
        let wanted: TransportIntent = resume == .play ? .playing : restored.intent == .stopped ? .stopped : .paused
        guard wanted != .stopped else { return }
        if item.error != nil {
            // a current item whose file is gone does not load; Play moves on from it
            setIntent(.paused)
            if wanted == .playing { play() }
            return
        }
        if restored.position > .zero {
            loadState = .idle(start: SeekRequest(target: .position(restored.position), mode: .exact))
        }
        setIntent(wanted)
        guard wanted == .playing else {
            // paused where it was with what was saved of it, and loaded there at Play or a seek,
            // as an item paused a while is (PausedRelease): GStreamer waits for that (issue 30)
            pausedRelease.released = true
            return
        }
        load(item.id)
    }

    // MARK: Transport

    /// Plays the current item. With no item there is nothing to play: no effect (MPRIS Play).
    public mutating func play() {
        guard let current = playQueue.current else { return }
        if case .failed = current.status, loadState.pipeline == nil {
            // a failed item does not play; the next one does
            setIntent(.playing)
            advanceAfterFailure()
            return
        }
        setIntent(.playing)
        if loadState.pipeline == nil { load(current.id) } else { applyTargetState() }
    }

    public mutating func pause() {
        guard playQueue.current != nil else { return }
        if transportState.intent == .stopped {
            // pausing a stopped player prerolls its item at the start
            setIntent(.paused)
            if loadState.pipeline == nil, let id = playQueue.currentID { load(id) }
            return
        }
        setIntent(.paused)
        applyTargetState()
    }

    /// Pauses because something outside asked (the sound server, the system going to sleep):
    /// observers hear the rate fall to 0 with the reason; `resume(because:)` undoes it.
    public mutating func interrupt(because reason: RateChangeReason) {
        guard transportState.intent == .playing else { return }
        pause()
        transportState.interruptedBy = reason
        emit(.rateChanged(0, reason))
    }

    /// Plays again after `interrupt(because:)`, unless the user changed the transport meanwhile.
    public mutating func resume(because reason: RateChangeReason) {
        guard transportState.interruptedBy == reason, transportState.intent == .paused else { return }
        transportState.interruptedBy = nil
        play()
        emit(.rateChanged(settings.rate, reason))
    }

    public mutating func togglePlayPause() {
        if transportState.intent == .playing { pause() } else { play() }
    }

    /// To NULL (rule 6): the device and file are released; the position is 0.
    public mutating func stop() {
        leaveCurrent()
        release()
        setIntent(.stopped)
    }

    /// Next at `now`: with `NextByChapter` on, the start of the current item's next chapter when
    /// there is one after the position (`nextChapter(now:)`), else the next item. Refused while
    /// linear playback is on.
    public mutating func next(now: ContinuousClock.Instant) throws(PlayerError) {
        try refuseWhileLinear("skipping to the next track")
        if try nextChapter(now: now) { return }
        try next()
    }

    /// The next item in play order (wrapping when looping the queue), keeping the intent, whatever
    /// `NextByChapter` says. Refused while linear playback is on.
    public mutating func next() throws(PlayerError) {
        try refuseWhileLinear("skipping to the next track")
        guard let next = nextItemID(wrap: settings.loopMode != .none) else { return }
        go(to: next)
    }

    /// How far into an item Previous starts it again instead of going to the item before.
    public static let restartsAfter: Duration = .seconds(3)

    /// Previous as people expect it of a back button, at `now`: more than `restartsAfter` into an
    /// item that can seek, back to its start, exactly, playing or paused as it was (observers hear
    /// `seeked` once the pipeline is there: MPRIS Seeked); within them, the item before in play
    /// order (wrapping when looping), keeping the intent; with none before, the current item's
    /// start. An item that cannot seek (a live stream) only goes to the item before. Stopped, the
    /// position is 0 already: only an item before is gone to. Linear playback allows it: going back
    /// skips nothing (`LinearPlayback.swift`).
    public mutating func previous(now: ContinuousClock.Instant) {
        guard let current = playQueue.current else { return }
        let before = playQueue.previous(before: current.id, wrap: settings.loopMode != .none)
        if previousChapter(hasItemBefore: before != nil, now: now) { return }
        if current.canSeek, transportState.intent != .stopped, before == nil || position(at: now) > Self.restartsAfter {
            // a seek, not a reload: the pipeline, its device and the gapless next item stay
            request(SeekRequest(target: .position(.zero), mode: .exact), now: now)
        } else if let before {
            go(to: before)
        }
    }

    /// Seeks the current item. Zero tolerances seek exactly; otherwise the fastest key-unit seek
    /// within them. Past the end goes to the next item; before 0 clamps to 0. Seeks coalesce:
    /// while one runs, only the newest pending one runs after it (rule 5). Refused while linear
    /// playback is on.
    public mutating func seek(to position: Duration, toleranceBefore: Duration = .zero, toleranceAfter: Duration = .zero,
                              now: ContinuousClock.Instant) throws(PlayerError) {
        try refuseWhileLinear("seeking")
        seekItem(to: position, toleranceBefore: toleranceBefore, toleranceAfter: toleranceAfter, now: now)
    }

    /// Seeks by `offset` from the position at `now`. Refused while linear playback is on.
    public mutating func seek(by offset: Duration, now: ContinuousClock.Instant) throws(PlayerError) {
        try seek(to: position(at: now) + offset, now: now)
    }

    /// `seek(to:)` once allowed.
    mutating func seekItem(to position: Duration, toleranceBefore: Duration = .zero, toleranceAfter: Duration = .zero,
                           now: ContinuousClock.Instant) {
        guard let item = playQueue.current else { return }
        let target = max(position, .zero)
        if let duration = item.duration, target >= duration {
            nextAfterEnd()
            return
        }
        let mode: SeekMode = toleranceBefore <= .zero && toleranceAfter <= .zero
            ? .exact : .fast(before: max(toleranceBefore, .zero), after: max(toleranceAfter, .zero))
        request(SeekRequest(target: .position(target), mode: mode), now: now)
    }

    /// Sets the rate (pitch kept) at `now`. Out of range, or while linear playback is on, the rate
    /// stays and observers hear `refused`.
    public mutating func setRate(_ newRate: Double, reason: RateChangeReason = .client,
                                 now: ContinuousClock.Instant) throws(PlayerError) {
        guard newRate.isFinite, (configuration.minimumRate...configuration.maximumRate).contains(newRate) else {
            emit(.rateChanged(settings.rate, .refused))
            throw PlayerError(.rateOutOfRange,
                              "rate \(newRate) is outside \(configuration.minimumRate)...\(configuration.maximumRate)")
        }
        guard newRate != settings.rate else { return }
        do throws(PlayerError) { try refuseWhileLinear("changing the rate") } catch {
            emit(.rateChanged(settings.rate, .refused))
            throw error
        }
        if newRate != 1, let item = playQueue.current, item.status == .readyToPlay, !Self.canChangeRate(item) {
            emit(.rateChanged(settings.rate, .refused))
            throw PlayerError(.rateNotSupported, "\(item.displayTitle) \(item.isLive ? "is a live stream" : "cannot seek"): "
                              + "it plays only at rate 1.0")
        }
        settings.rate = newRate
        if let item = playQueue.current, item.status == .readyToPlay, item.isSeekable {
            request(SeekRequest(target: .current, mode: .exact), now: now)
        }
        emit(.rateChanged(settings.rate, reason))
    }

    /// Linear volume 0...1 (values outside are clamped; NaN is ignored).
    public mutating func setVolume(_ newVolume: Double) {
        let clamped = newVolume.isFinite ? min(max(newVolume, 0), 1) : settings.volume
        guard clamped != settings.volume else { return }
        settings.volume = clamped
        command(.setVolume(clamped))
        emit(.volumeChanged(settings.volume, muted: settings.muted))
    }

    public mutating func setMuted(_ newMuted: Bool) {
        guard newMuted != settings.muted else { return }
        settings.muted = newMuted
        command(.setMuted(newMuted))
        emit(.volumeChanged(settings.volume, muted: settings.muted))
    }

    public mutating func setLoopMode(_ mode: LoopMode) {
        guard mode != settings.loopMode else { return }
        settings.loopMode = mode
        emit(.loopModeChanged(mode))
        prepareGaplessNext()
    }

    public mutating func setShuffle(_ shuffled: Bool) {
        guard shuffled != playQueue.isShuffled else { return }
        playQueue.setShuffled(shuffled)
        emit(.shuffleChanged(shuffled))
        prepareGaplessNext()
    }

    /// Tries the failed item again (the current one if it failed, else the last that failed), at
    /// most `maximumRetries` times each. It plays.
    public mutating func retry() throws(PlayerError) {
        let candidate: ItemID? = {
            if let current = playQueue.current, current.error != nil { return current.id }
            return failures.lastFailed.flatMap { playQueue.item($0)?.error != nil ? $0 : nil }
        }()
        guard let id = candidate else { throw PlayerError(.nothingToRetry, "no failed item to retry") }
        let count = failures.retries[id, default: 0]
        guard count < configuration.maximumRetries else {
            throw PlayerError(.retryBudgetExhausted,
                              "\(playQueue.item(id)!.displayTitle) was already retried \(count) times")
        }
        failures.retries[id] = count + 1
        setIntent(.playing)
        makeCurrent(id, load: true, force: true)
    }

    /// Adds `uris` after the current item (or at the end) and plays the first of them.
    public mutating func open(_ uris: [MediaURI]) throws(PlayerError) -> [ItemID] {
        let ids = try enqueue(uris, at: playQueue.currentID.map { .after($0) } ?? .end)
        guard let first = ids.first else { return ids }
        setIntent(.playing)
        if playQueue.currentID == first, loadState.pipeline != nil {
            applyTargetState()
        } else {
            makeCurrent(first, load: true, force: playQueue.currentID == first)
        }
        return ids
    }

    // MARK: Metadata of items that have not played

    /// Asks for the tags of `ids` (a client wants to show them), unless they were asked for
    /// already; they are read after those asked before them.
    public mutating func wantMetadata(_ ids: [ItemID]) {
        guard hasMetadataReader else { return }
        for id in ids where playQueue.contains(id) { reads.want(id) }
        readMetadata()
    }

    /// Whether the tags of the current item `id` are on their way and what is known of it is not
    /// yet all there is: a local file whose tags are being read, or whose load has not prerolled,
    /// with nothing read of it before. The MPRIS adapter announces such an item's Metadata once
    /// they came (every input that ends the wait emits an event), not first with its file name
    /// for a title and again 25 ms later (issue 37: KDE Plasma 6 showed the file name, and bluez's
    /// mpris-proxy told a headset of two track changes). A local file's wait is a tag read's or a
    /// preroll's milliseconds; a stream's could be the network's, and is not waited for.
    public func awaitsTags(_ id: ItemID) -> Bool {
        guard id == playQueue.currentID, let item = playQueue.item(id), item.uri.isFile, !reads.known.contains(id) else {
            return false
        }
        return reads.reading.contains(id) || loadState.loading != nil
    }

    /// `awaitsTags` of the current item, false with none.
    public var currentItemAwaitsTags: Bool { playQueue.currentID.map(awaitsTags) ?? false }

    /// What is known of `id`'s tags is all there is (see `awaitsTags`).
    private mutating func settleTags(_ id: ItemID) { reads.settle(id) }

    /// Starts tag reads while fewer than `MetadataReads.maximumInFlight` run: first for the items
    /// about to play, then for those clients asked about. Nothing runs when nothing is wanted.
    private mutating func readMetadata() {
        guard hasMetadataReader, reads.canStart else { return }
        var cursor = playQueue.currentID
        for _ in 0...Self.upcomingReads {
            guard reads.canStart, let id = cursor else { break }
            if reads.ask(id) { startRead(id) }
            cursor = playQueue.next(after: id, wrap: settings.loopMode == .queue)
        }
        while reads.canStart, let id = reads.nextWanted() { startRead(id) }
        reads.compact()
    }

    /// Reads the tags of `id` unless it is gone, has tags already, or is loaded (the pipeline
    /// reports its tags).
    private mutating func startRead(_ id: ItemID) {
        guard let item = playQueue.item(id), item.metadata.isEmpty, loadState.pipeline == nil || id != playQueue.currentID
        else { return }
        reads.started(id)
        actions.append(.readMetadata(id, item.uri))
    }

    /// A tag read asked for by `.readMetadata` finished.
    public mutating func metadataRead(_ id: ItemID, _ result: Result<DiscoveredMedia, ItemError>) {
        let awaited = awaitsTags(id)
        reads.finished(id)
        defer { readMetadata() }
        guard playQueue.contains(id) else { return }
        settleTags(id)
        guard case .success(let found) = result, let item = playQueue.item(id) else {
            // what was shown is all there is: the wait for it ends (see `awaitsTags`)
            if awaited { emit(.metadataChanged(id, playQueue.item(id)!.metadata)) }
            return
        }
        var metadata = item.metadata
        metadata.fillMissing(from: found.metadata)
        if metadata != item.metadata || awaited {
            playQueue.update(id) { $0.metadata = metadata }
            emit(.metadataChanged(id, metadata))
        }
        if item.duration == nil, let duration = found.duration, !found.isLive {
            setDuration(id, duration)
        }
        if item.status == .unknown, loadState.pipeline == nil || id != playQueue.currentID, found.isSeekable != item.isSeekable {
            playQueue.update(id) { $0.isSeekable = found.isSeekable }
            emitCapabilities(id)
        }
        // the next item's album decides whether it crossfades or follows gaplessly
        if id == loadState.ready?.next?.id { prepareGaplessNext() }
    }

    // MARK: Rules

    /// The item a gapless switch goes on to when the current one is about to finish: the same
    /// one looping a track, else the next (wrapping when looping the queue), unless it failed.
    private func gaplessNext() -> (ItemID, Item)? {
        guard !bedtime.stopAfterCurrent, let current = playQueue.currentID else { return nil }
        let nextID: ItemID? = settings.loopMode == .track ? current : nextItemID(wrap: settings.loopMode == .queue)
        guard let nextID, let next = playQueue.item(nextID), next.error == nil else { return nil }
        // an item with a kept place starts there: loaded afresh at the end, not switched to at its start
        guard nextID == current || startingPlace(of: next.uri) == nil else { return nil }
        return (nextID, next)
    }

    func nextItemID(wrap: Bool) -> ItemID? {
        playQueue.next(after: playQueue.currentID, wrap: wrap)
    }

    mutating func setIntent(_ newIntent: TransportIntent) {
        transportState.interruptedBy = nil
        if newIntent != transportState.intent {
            transportState.intent = newIntent
            emit(.intentChanged(newIntent))
        }
        updateTimeControl()
    }

    /// Goes to `id` keeping the intent. Landing on the current item again (Next with one item and
    /// a looping queue) starts it over, and the jump to 0 is a `seeked` (MPRIS Seeked).
    private mutating func go(to id: ItemID) {
        if id == playQueue.currentID {
            makeCurrent(id, load: transportState.intent != .stopped, force: true)
            emit(.seeked(.zero))
        } else {
            makeCurrent(id, load: transportState.intent != .stopped)
        }
    }

    /// Makes `id` current. With `load`, loads it (prerolled; playing if that is the intent).
    mutating func makeCurrent(_ id: ItemID, load shouldLoad: Bool, force: Bool = false) {
        let changed = playQueue.currentID != id
        if changed { leaveCurrent() }
        if changed || force {
            release()
            playQueue.setCurrent(id)
            if force { playQueue.update(id) { $0.status = .unknown } }
            if changed { emit(.currentItemChanged(playQueue.current)) }
        }
        // the same item started over (a looping queue of one, a retry) starts from its start
        if shouldLoad { load(id, resuming: changed) } else { prepareGaplessNext() }
        updateTimeControl()
    }

    private mutating func unloadCurrent() {
        leaveCurrent()
        release()
        let hadCurrent = playQueue.currentID != nil
        playQueue.setCurrent(nil)
        if hadCurrent { emit(.currentItemChanged(nil)) }
        if transportState.intent == .paused { setIntent(.stopped) } else { updateTimeControl() }
    }

    /// Takes the pipeline to NULL (device and file released) and forgets the current load: its
    /// generation, the prepared next item, what the pipeline reported, its seeks, a reconnect, and
    /// the position (rule 6).
    mutating func release() {
        if loadState.pipeline != nil { command(.release) }
        forgetCrossfade()  // the engine's release drops a prepared one with the rest
        forgetItemVideo()
        if case .awaitingReconnect = loadState { actions.append(.cancelTimer(.reconnect)) }
        stopStallWatch()
        loadState = .idle(start: nil)
    }

    private mutating func newGeneration() -> Generation {
        generationCounter += 1
        return Generation(generationCounter)
    }

    /// Loads `id`, as an attempt of `reconnect` when it is one.
    private mutating func load(_ id: ItemID, reconnect: Reconnect? = nil, resuming: Bool = true) {
        guard let item = playQueue.item(id) else { return }
        let generation = newGeneration()
        // a seek asked while nothing was loaded runs after this preroll; a switch to another item
        // released first, which dropped it
        var start = loadState.pendingSeek
        endedID = nil
        resumedAt = nil
        if start == nil, resuming, reconnect == nil, !pausedRelease.released, case .idle = loadState, let place = startingPlace(of: item.uri) {
            // from its start: where it was left instead, exactly, before it plays (as a restored position)
            start = SeekRequest(target: .position(place), mode: .exact)
            resumedAt = place
        }
        var reconnect = reconnect
        if case .awaitingReconnect(let waiting, _) = loadState {
            // Play while the reconnect waits: this load is its attempt, and its timer is not wanted
            actions.append(.cancelTimer(.reconnect))
            reconnect = waiting
        }
        stopStallWatch()
        // the engine forgets a playAfterPreroll with the load it was for
        loadState = .loading(Loading(pipeline: LoadedPipeline(generation: generation), start: start, reconnect: reconnect))
        playQueue.update(id) {
            $0.status = .unknown
            $0.bufferingPercent = 100
        }
        // a missing file comes back as this generation's failure: a run of them is a chain of
        // events, never a recursion on this queue
        command(.load(item.uri, generation))
        emit(.itemStatusChanged(id, .unknown))
        prepareGaplessNext()
        updateTimeControl()
    }

    /// Tells the engine what follows the current item, for a gapless switch on about-to-finish.
    mutating func prepareGaplessNext() {
        // only once the current item prerolled: an item that never produces a buffer must end in
        // its own error, not in a switch that would call it played; and playbin3 1.22.0 aborts
        // (reconfigure_output assertion) when about-to-finish switches away from such a stream.
        // An item shorter than the pipeline's queues may drain before preroll and end with EOS.
        guard let ready = loadState.ready else { return }  // nothing is armed before
        if bedtime.stopAfterCurrent { return withdrawGaplessNext() }
        guard playQueue.current?.status == .readyToPlay, let (nextID, next) = gaplessNext() else {
            if ready.next != nil { command(.prepareNext(nil, nil)) }
            loadState.ready?.next = nil
            return
        }
        if let armed = ready.next, armed.id == nextID {
            holdForCrossfade(armed, uri: next.uri)
            return
        }
        let generation = newGeneration()
        loadState.ready?.next = (nextID, generation)
        if crossfades(into: nextID) {
            fade.held = generation  // the engine hears of it when the crossfade is prepared
            fade.planWanted = true
        } else {
            command(.prepareNext(next.uri, generation))
        }
    }

    private mutating func applyTargetState() {
        guard let pipeline = loadState.pipeline else { return }
        // a buffering pause holds until 100% (gstplay.c buffering_cb)
        command(.setPlaying(transportState.intent == .playing && pipeline.buffering.pause == nil && loadState.ready != nil))
        updateTimeControl()
    }

    private mutating func request(_ seek: SeekRequest, now: ContinuousClock.Instant) {
        guard let item = playQueue.current else { return }
        if let ready = loadState.ready, ready.seek == nil {
            guard item.isSeekable else { return }
            run(seek, now: now)
            return
        }
        // seeks asked before preroll run after it; while one runs, the newest waits (rule 5)
        if loadState.pipeline == nil, transportState.intent == .stopped || pausedRelease.released {
            // a seek on a stopped player (or one paused and released) prerolls paused at the target
            if transportState.intent == .stopped { setIntent(.paused) }
            load(item.id)
        }
        loadState.pendingSeek = seek
    }

    private mutating func run(_ seek: SeekRequest, now: ContinuousClock.Instant) {
        command(.seek(seek.target, seek.mode, rate: settings.rate))
        loadState.ready?.seek = SeekState(running: seek)
        if case .position(let position) = seek.target { loadState.pipeline?.position = PositionSample(position, at: now) }
    }

    private mutating func nextAfterEnd() {
        if let next = nextItemID(wrap: settings.loopMode != .none) {
            go(to: next)
        } else {
            endOfQueue()
        }
    }

    private mutating func endOfQueue() {
        release()
        setIntent(.stopped)
    }

    /// The item's status becomes failed; observers hear the state and the moment.
    private mutating func markFailed(_ id: ItemID, _ error: ItemError) {
        playQueue.update(id) { $0.status = .failed(error) }
        settleTags(id)
        failures.lastFailed = id
        emit(.itemStatusChanged(id, .failed(error)))
        emit(.itemFailed(id, error))
    }

    private mutating func fail(_ id: ItemID, now: ContinuousClock.Instant, _ error: ItemError) {
        // an output that cannot open or fails is never the item's fault: failing every item in
        // turn would wipe out a queue while the sound server restarts
        if error.kind == .output, id == playQueue.currentID {
            outputFailed(error, now: now)
            return
        }
        if id == playQueue.currentID, tryReconnect(id, after: error, now: now) { return }
        markFailed(id, error)
        if id == playQueue.currentID {
            release()
            if configuration.advanceOnFailure && transportState.intent == .playing {
                advanceAfterFailure()
            } else {
                updateTimeControl()
            }
        }
    }

    /// The output failed under a playing item: the item is not to blame. It stays current, the
    /// player pauses where it was and says why; Play loads it again and seeks back there.
    private mutating func outputFailed(_ error: ItemError, now: ContinuousClock.Instant) {
        let resumeAt = position(at: now)
        release()
        if playQueue.current?.status != .readyToPlay, let id = playQueue.currentID {
            playQueue.update(id) { $0.status = .unknown }
        }
        loadState = .idle(start: SeekRequest(target: .position(resumeAt), mode: .exact))
        if transportState.intent == .playing { setIntent(.paused) } else { updateTimeControl() }
        emit(.rateChanged(0, .output))
        emit(.outputFailed(error))
    }

    /// The output moved to another sink than the loaded pipeline's (`setOutput`): the current item
    /// is loaded again, there, where it was at `now` (a live stream where it is), playing or paused
    /// as before.
    mutating func reloadWhereItPlays(now: ContinuousClock.Instant) {
        guard loadState.pipeline != nil, let item = playQueue.current else { return }
        let resumeAt = item.isSeekable && !item.isLive ? position(at: now) : nil
        release()
        loadState = .idle(start: resumeAt.map { SeekRequest(target: .position($0), mode: .exact) })
        load(item.id)
    }

    /// Moves on from a failed current item to the next one that has not failed.
    private mutating func advanceAfterFailure() {
        var candidate = nextItemID(wrap: settings.loopMode == .queue)
        var seen = Set<ItemID>()
        while let id = candidate, !seen.contains(id) {
            seen.insert(id)
            if playQueue.item(id)?.error == nil {
                makeCurrent(id, load: true)
                return
            }
            candidate = playQueue.next(after: id, wrap: settings.loopMode == .queue)
        }
        endOfQueue()
    }

    private mutating func updateTimeControl() {
        let status: TimeControlStatus
        if transportState.intent != .playing {
            status = .paused
        } else if loadState.isReconnecting {
            status = .waitingToPlay(.reconnecting)
        } else if let item = playQueue.current, let pipeline = loadState.pipeline {
            let target = pipeline.pending ?? pipeline.state
            if pipeline.buffering.pause != nil && !item.isLive {
                status = .waitingToPlay(.buffering)
            } else if item.status == .readyToPlay && (pipeline.state == .playing || target == .playing) {
                status = .playing
            } else if item.status == .readyToPlay && item.uri.isFile && transportState.timeControl == .playing
                        && pipeline.state == .paused && pipeline.pending == .paused {
                // a flushing seek takes the pipeline back to PAUSED until it prerolls at the target
                // (its lost state: PAUSED, pending PAUSED, until ASYNC_DONE and the way back to
                // PLAYING); a local file's is a millisecond of decoding, not a wait, and playing
                // goes on through it, as GstPlay's state does (gstplay.c state_changed_cb acts only
                // on PAUSED with nothing pending). A stream's seek waits for the network, and says so.
                status = .playing
            } else {
                status = .waitingToPlay(.evaluatingBuffering)
            }
        } else if playQueue.current == nil {
            status = .waitingToPlay(.noItem)
        } else {
            status = .waitingToPlay(.evaluatingBuffering)
        }
        if status != transportState.timeControl {
            transportState.timeControl = status
            emit(.timeControlStatusChanged(status))
        }
        updatePausedRelease()
    }

    // MARK: Reconnecting

    /// Starts or continues a reconnect of the current item after `error`, if the policy allows:
    /// a network error that can go away, on an item that had played (or is being reconnected), with
    /// attempts left. Paused, the item is only released, to load again at Play where it was.
    private mutating func tryReconnect(_ id: ItemID, after error: ItemError, now: ContinuousClock.Instant) -> Bool {
        guard error.kind == .network, transportState.intent != .stopped, let item = playQueue.item(id) else { return false }
        var attempts = 0
        let reconnect = loadState.reconnect
        if let reconnect {
            // a reconnect that has played steadily since is a new outage, not the same one
            let steady = reconnect.playingSince.map { now - $0 >= configuration.reconnect.steadyAfter } ?? false
            attempts = steady ? 0 : reconnect.attempt.attempts
        } else {
            // a first failure: only an item that played, and only what can go away (not a 404)
            guard item.status == .readyToPlay, error.isTransient else { return false }
        }
        guard attempts < configuration.reconnect.attempts else { return false }
        let resumeAt: Duration? = item.isSeekable && !item.isLive
            ? (reconnect?.playingSince == nil ? reconnect?.attempt.resumeAt : nil) ?? position(at: now) : nil
        release()
        playQueue.update(id) { $0.status = .unknown }
        emit(.itemStatusChanged(id, .unknown))
        // the load that follows (this reconnect's, or Play's) seeks back there after its preroll
        let start = resumeAt.map { SeekRequest(target: .position($0), mode: .exact) }
        if transportState.intent == .paused {
            // nothing plays: Play loads it again
            loadState = .idle(start: start)
            updateTimeControl()
            return true
        }
        loadState = .awaitingReconnect(Reconnect(attempts: attempts + 1, resumeAt: resumeAt), start: start)
        actions.append(.startTimer(.reconnect, after: configuration.reconnect.delay(before: attempts + 1)))
        updateTimeControl()
        return true
    }

    /// A timer asked for with `.startTimer` fired at `now`.
    public mutating func timerFired(_ timer: PlayerTimer, now: ContinuousClock.Instant) {
        switch timer {
        case .reconnect: reconnectDue()
        case .bufferingStall: bufferingStallDue(now: now)
        case .controls: controlsDue(now: now)
        case .sleep: sleepDue(now: now)
        case .crossfade: planCrossfade(now: now, fired: true)
        case .pausedRelease: pausedReleaseDue(now: now)
        case .chapter: planChapters(now: now, fired: true)
        }
    }

    /// The reconnect timer fired: the current item is loaded again, and seeks back where it was.
    private mutating func reconnectDue() {
        guard case .awaitingReconnect(let reconnect, let start) = loadState, let id = playQueue.currentID,
              transportState.intent == .playing else { return }
        loadState = .idle(start: start)  // the timer that fired needs no cancelling
        load(id, reconnect: reconnect)
    }

    // MARK: Buffering that makes no progress

    /// While playing waits on a buffering pause, a timer runs; each move of the percent counts as
    /// progress. hlsdemux2 (1.22.0) keeps retrying a segment that answers 500 for minutes, buffering
    /// at 0% meanwhile (NetworkServiceTests on playbin3: three minutes before its error); a server
    /// can also send nothing at all while its connection stays open.
    private mutating func watchStall(moved: Bool, now: ContinuousClock.Instant) {
        guard let pause = loadState.pipeline?.buffering.pause, transportState.intent == .playing else {
            stopStallWatch()
            return
        }
        if pause.progressSince == nil {
            actions.append(.startTimer(.bufferingStall, after: configuration.reconnect.stallLimit))
        }
        if moved || pause.progressSince == nil { loadState.pipeline?.buffering.pause?.progressSince = now }
    }

    private mutating func stopStallWatch() {
        guard loadState.pipeline?.buffering.pause?.progressSince != nil else { return }
        actions.append(.cancelTimer(.bufferingStall))
        loadState.pipeline?.buffering.pause?.progressSince = nil
    }

    /// The buffering pause ends (100%, or the stream turned out live), and its stall timer with it.
    private mutating func endBufferingPause() {
        stopStallWatch()
        loadState.pipeline?.buffering.pause = nil
    }

    /// The stall timer fired: with no progress for the limit, the item failed as a network error
    /// that may go away (so it reconnects, where that can succeed); with some, it waits on.
    private mutating func bufferingStallDue(now: ContinuousClock.Instant) {
        guard let since = loadState.pipeline?.buffering.pause?.progressSince else { return }
        loadState.pipeline?.buffering.pause?.progressSince = nil  // the timer is spent
        guard transportState.intent == .playing, let item = playQueue.current else { return }
        let limit = configuration.reconnect.stallLimit
        if now - since < limit {
            loadState.pipeline?.buffering.pause?.progressSince = since
            actions.append(.startTimer(.bufferingStall, after: limit - (now - since)))
            return
        }
        // failing releases the pipeline that waits (or reconnects with a fresh one)
        fail(item.id, now: now, ItemError(.network, "network error: no data from \(item.uri.displayPath) for \(Self.seconds(limit)) "
                                + "while buffering", isTransient: true))
    }

    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return attoseconds == 0 ? "\(seconds) s" : Digits.fixed(Double(seconds) + Double(attoseconds) / 1e18, fractionDigits: 1) + " s"
    }

    // MARK: Engine events

    /// An event of the engine, for the load `generation`, handed to the machine at `now`.
    public mutating func handle(_ event: EngineEvent, of generation: Generation, at now: ContinuousClock.Instant) {
        defer {
            planCrossfade(now: now)
            planChapters(now: now)
        }
        if case .video(.pointerMoved) = event { return pointerMoved(now: now) }
        // the devices of the machine, not of a load: whatever the generation
        if case .outputs(let devices) = event { return devicesChanged(devices) }
        // the listener's, at the sound server: whatever the generation
        if case .streamLevels(let volume, let muted, let fading) = event {
            return streamLevelsChanged(volume: volume, muted: muted, fading: fading)
        }
        // the person's, not a load's: whatever the generation
        if case .video(.input(let input)) = event {
            handleWindowInput(input, now: now)
            return
        }
        if handleVideo(event, of: generation, current: loadState.pipeline?.generation) { return }
        if let next = loadState.ready?.next, generation == next.generation {
            handlePrepared(event, id: next.id, now: now)
            return
        }
        // stale messages die (rule 3)
        guard generation == loadState.pipeline?.generation, let id = playQueue.currentID else { return }
        switch event {
        case .stateChanged(let state, let pending, let sample):
            loadState.pipeline?.state = state
            loadState.pipeline?.pending = pending
            if let sample, loadState.ready?.seek == nil { loadState.pipeline?.position = sample }
            updateTimeControl()
        case .asyncDone(let snapshot):
            asyncDone(id, snapshot, now: now)
        case .live:
            playQueue.update(id) { $0.isLive = true }
            emitCapabilities(id)
            // live streams never buffer-pause (gstplay.c buffering_cb): a pause that BUFFERING
            // messages started before the stream was known to be live ends here
            endBufferingPause()
            if transportState.intent == .playing { command(.setPlaying(true)) }
            updateTimeControl()
        case .streamStarted(let snapshot):
            if playQueue.item(id)?.isLive == true, loadState.loading != nil {
                becameReady(id, snapshot, now: now)
            }
        case .endOfStream:
            emit(.playedToEnd(id))
            playedToEnd(id)
            if bedtime.stopAfterCurrent { return stopAfterCurrentEnded() }
            if settings.loopMode == .track {
                go(to: id)
            } else {
                nextAfterEnd()
            }
        case .failed(let error):
            fail(id, now: now, error)
        case .tags(let metadata):
            var merged = playQueue.item(id)!.metadata
            merged.merge(metadata)
            if playQueue.item(id)!.isLive, let title = metadata.title {
                merged.streamTitle = title  // a radio station's title tag is what it plays now
            }
            guard merged != playQueue.item(id)!.metadata else { return }
            playQueue.update(id) { $0.metadata = merged }
            emit(.metadataChanged(id, merged))
            retitleWindow()
        case .buffering(let percent, let ranges):
            buffering(id, percent, ranges, now: now)
        case .loaded(let ranges):
            setLoadedRanges(id, ranges)
        case .durationChanged(let duration):
            setDuration(id, duration)
        case .requestState(let state):
            // the sound server corks or uncorks us (pulsesink REQUEST_STATE)
            if state == .paused { interrupt(because: .soundServer) } else if state == .playing { resume(because: .soundServer) }
        case .chapters(let chapters):
            chaptersRead(id, chapters)
        case .gap(let at, let length):
            // it plays on (as mpv does over a bad segment); clients hear what was missed
            emit(.gapSkipped(id, at: at, length: length))
        case .seekDone(let sample):
            // none in flight: an ASYNC_DONE that came first through the bus already finished it
            if loadState.ready?.seek != nil { finishSeek(at: sample, now: now) }
        case .seekRefused:
            let next = loadState.ready?.seek?.next
            loadState.ready?.seek = nil
            if let next {
                run(next, now: now)
            } else {
                updateTimeControl()
            }
        case .video:
            break  // taken by handleVideo above
        case .outputs, .streamLevels:
            break  // taken above
        }
    }

    /// Events of the gapless next item before or at its boundary.
    private mutating func handlePrepared(_ event: EngineEvent, id nextID: ItemID, now: ContinuousClock.Instant) {
        guard let previous = playQueue.currentID, let generation = loadState.ready?.next?.generation else { return }
        switch event {
        case .streamStarted(let snapshot):
            // the real boundary: the previous item played to its end
            if playQueue.item(previous)?.status == .readyToPlay {
                emit(.playedToEnd(previous))
                playedToEnd(previous)
            } else {
                // it never prerolled: the next item's data did (no buffer of its own came out)
                let name = playQueue.item(previous)!.uri.displayPath
                markFailed(previous, ItemError(.decode, "cannot decode \(name): it holds no playable audio"))
            }
            // the same pipeline plays on: its state, buffering and seeks carry over to the new load
            loadState.ready?.pipeline.generation = generation
            loadState.ready?.next = nil
            loadState.ready?.pipeline.position = snapshot?.position ?? PositionSample(.zero, at: now)
            if nextID == previous {
                playQueue.update(nextID) { $0.status = .readyToPlay }
                emit(.seeked(.zero))  // a looping track jumps back to 0 (MPRIS Seeked)
            } else {
                loadState.ready?.reconnected = nil  // it was of the item before
                playQueue.setCurrent(nextID)
                playQueue.update(nextID) { $0.status = .readyToPlay }
                settleTags(nextID)
                emit(.currentItemChanged(playQueue.current))
                emit(.itemStatusChanged(nextID, .readyToPlay))
                if let snapshot { refreshCapabilities(nextID, snapshot) }
            }
            prepareGaplessNext()
            updateTimeControl()
            if bedtime.stopAfterCurrent { stopAtGaplessBoundary() }
        case .failed(let error):
            // the engine already switched to the next item when it failed (after about-to-finish):
            // the previous one played to its end, the failed one becomes current and is moved on
            // from like any failed item
            loadState.ready?.next = nil
            emit(.playedToEnd(previous))
            playedToEnd(previous)
            loadState.ready?.pipeline.generation = generation
            if nextID != previous {
                loadState.ready?.reconnected = nil
                playQueue.setCurrent(nextID)
                emit(.currentItemChanged(playQueue.current))
            }
            fail(nextID, now: now, error)
        default:
            break
        }
    }

    private mutating func asyncDone(_ id: ItemID, _ snapshot: EngineSnapshot, now: ContinuousClock.Instant) {
        guard playQueue.item(id) != nil else { return }
        if loadState.loading != nil {
            becameReady(id, snapshot, now: now)
            return
        }
        if loadState.ready?.seek != nil {
            finishSeek(at: snapshot.position, now: now)
        } else if let sample = snapshot.position {
            loadState.pipeline?.position = sample
        }
    }

    /// The seek in flight finished with the position at `sample` (nil: unknown): the newest
    /// pending one runs now (rule 5), else a seek to a position is announced.
    private mutating func finishSeek(at sample: PositionSample?, now: ContinuousClock.Instant) {
        guard let finished = loadState.ready?.seek else { return }
        loadState.ready?.seek = nil
        if let sample { loadState.pipeline?.position = sample }
        if let next = finished.next {
            run(next, now: now)
            return
        }
        if case .position(let target) = finished.running.target {
            emit(.seeked(sample?.position ?? target))
        }
        updateTimeControl()
    }

    private mutating func becameReady(_ id: ItemID, _ snapshot: EngineSnapshot?, now: ContinuousClock.Instant) {
        guard let loading = loadState.loading else { return }
        // its playAfterPreroll is done (or dropped) by the engine at this preroll
        loadState = .ready(Ready(pipeline: loading.pipeline, reconnected: loading.reconnect.map { ($0, since: now) }))
        // the pipeline posts a file's tags before its preroll is done
        settleTags(id)
        playQueue.update(id) { $0.status = .readyToPlay }
        emit(.itemStatusChanged(id, .readyToPlay))
        if let snapshot {
            if let sample = snapshot.position { loadState.pipeline?.position = sample }
            refreshCapabilities(id, snapshot)
        }
        prepareGaplessNext()
        if let seek = loading.start {
            if case .position(let target) = seek.target, let duration = playQueue.item(id)!.duration, target >= duration {
                // a seek past the end asked before the length was known goes on, as it would have
                nextAfterEnd()
                return
            }
            if playQueue.item(id)!.isSeekable { run(seek, now: now) }
        } else if settings.rate != 1, Self.canChangeRate(playQueue.item(id)!) {
            run(SeekRequest(target: .current, mode: .exact), now: now)
        } else if settings.rate != 1 {
            // a rate is a seek: one that cannot seek plays at 1.0, and says so rather than show a
            // rate it does not play
            settings.rate = 1
            emit(.rateChanged(1, .refused))
        }
        applyTargetState()
    }

    /// Rate changes are flushing seeks with a new rate (design brief, trap 5): an item that cannot
    /// seek, or a live one, plays at 1.0 only.
    private static func canChangeRate(_ item: Item) -> Bool { item.isSeekable && !item.isLive }

    /// A live stream can seek when its window is at least this wide: video.js shows its live seek
    /// bar from a window (seekable end minus start) of 20 s (live-tracker.js, `trackingThreshold`,
    /// lowered from 30 in videojs/video.js#7502 for windows that hover around 30 s). Every live
    /// HLS playlist names some window (hlsdemux ends it three target durations before the live
    /// edge, as RFC 8216 6.3.3 asks of clients, and a playlist holds at least three: 6.2.2); a few
    /// seconds of it are no DVR a person can use.
    public static let minimumLiveWindow = Duration.seconds(20)

    private mutating func refreshCapabilities(_ id: ItemID, _ snapshot: EngineSnapshot) {
        loadState.pipeline?.streamWakesWhilePaused = snapshot.streamWakesWhilePaused
        setDuration(id, snapshot.duration)
        if playQueue.item(id)?.duration == nil { setDuration(id, snapshot.durationEstimate) }
        var seekable = snapshot.isSeekable
        if playQueue.item(id)?.isLive == true {
            let window = snapshot.seekableRange.map { $0.end - $0.start } ?? .zero
            seekable = seekable && window >= Self.minimumLiveWindow
        }
        if playQueue.item(id)?.isSeekable != seekable {
            playQueue.update(id) { $0.isSeekable = seekable }
            emitCapabilities(id)
        }
        setLoadedRanges(id, snapshot.loadedRanges)
    }

    private mutating func setLoadedRanges(_ id: ItemID, _ ranges: [TimeRange]) {
        guard let item = playQueue.item(id), item.loadedRanges != ranges else { return }
        playQueue.update(id) { $0.loadedRanges = ranges }
        emit(.bufferingChanged(id, percent: item.bufferingPercent, loadedRanges: ranges))
    }

    private mutating func emitCapabilities(_ id: ItemID) {
        guard let item = playQueue.item(id) else { return }
        emit(.capabilitiesChanged(id, isLive: item.isLive, isSeekable: item.isSeekable))
    }

    /// A length once known for an item is never dropped, only replaced by another (issue 37,
    /// "Metadata never goes back"): a duration query that finds none says nothing new. An MP3
    /// without a Xing or VBRI header has none at its preroll, nor at the DURATION_CHANGED that
    /// its parser posts while it prerolls, until it has seen seconds of frames (mpegaudioparse's
    /// estimate, gst_base_parse_update_duration), and a length its tag read found was dropped
    /// there: a skip announced Metadata without it, until Play.
    private mutating func setDuration(_ id: ItemID, _ duration: Duration?) {
        guard let duration, let item = playQueue.item(id), item.duration != duration, !(item.isLive && duration <= .zero)
        else { return }
        playQueue.update(id) { $0.duration = duration }
        emit(.durationChanged(id, duration))
    }

    private mutating func buffering(_ id: ItemID, _ percent: Int, _ ranges: [TimeRange], now: ContinuousClock.Instant) {
        guard let item = playQueue.item(id) else { return }
        let percent = min(max(percent, 0), 100)
        // live streams never buffer-pause; nor below PAUSED (gstplay.c buffering_cb)
        if !item.isLive && transportState.intent != .stopped {
            if percent < 100 && loadState.pipeline?.buffering.pause == nil {
                loadState.pipeline?.buffering.pause = BufferingPause()
                if transportState.intent == .playing { command(.setPlaying(false)) }
            } else if percent == 100 && loadState.pipeline?.buffering.pause != nil {
                endBufferingPause()
                applyTargetState()
            }
        }
        watchStall(moved: percent != loadState.pipeline?.buffering.lastPercent, now: now)
        loadState.pipeline?.buffering.lastPercent = percent
        // Clients hear steps of at least `bufferingStep` points, and 100 always: queue2 (1.22.0)
        // posts BUFFERING at every point and flaps between 0 and 1 while wavparse reads a header
        // over HTTP (50 messages in a second, gst-launch-1.0 -m playbin on a WAV served at
        // 120 kB/s), which would be as many PropertiesChanged.
        let announced = item.bufferingPercent
        if percent == 100 && announced != 100 || abs(percent - announced) >= Self.bufferingStep {
            playQueue.update(id) {
                $0.bufferingPercent = percent
                $0.loadedRanges = ranges
            }
            emit(.bufferingChanged(id, percent: percent, loadedRanges: ranges))
        }
        updateTimeControl()
    }
}

// MARK: The rest of the state, by concern

extension PlayerMachine {
    /// What the user asked of the transport (rule 4: kept apart from what the pipeline does), and
    /// what it does.
    struct TransportState {
        var intent: TransportIntent = .stopped
        var timeControl: TimeControlStatus = .paused
        /// Paused by the sound server or by sleep, not by the user.
        var interruptedBy: RateChangeReason?
    }

    /// What clients set that holds for every item, saved with the queue.
    struct Settings {
        var rate = 1.0
        var volume = 1.0
        var muted = false
        var loopMode: LoopMode = .none
        /// `LinearPlayback.swift`.
        var linearPlayback = false
        /// `KeptPlaces.swift`.
        var resumePlaces = true
        /// Next and Previous move by chapter inside an item that has chapters (`Chapters.swift`).
        var nextByChapter = false
    }

    /// What `retry` needs: how often each item was retried, and the last that failed.
    struct Failures {
        var retries: [ItemID: Int] = [:]
        var lastFailed: ItemID?
    }

    /// Tags of items that have not played are read lazily: for the items about to play (the
    /// current one and the next `upcomingReads` in play order) and for those a client asks about
    /// (`wantMetadata`), each item once, at most `maximumInFlight` at a time. Queueing a folder of
    /// 10,000 files reads a handful, not 10,000 (issue 11: minutes of a whole core).
    struct MetadataReads {
        static let maximumInFlight = 2
        /// A FIFO of the ids clients asked about, from `wantedStart`.
        private var wanted: [ItemID] = []
        private var wantedStart = 0
        /// Every id asked for (read, being read or waiting), so that none is read twice.
        private var asked: Set<ItemID> = []
        var inFlight = 0
        /// The ids whose read runs now.
        private(set) var reading: Set<ItemID> = []
        /// The ids whose tags are all there is to know: read (whatever came of it), prerolled,
        /// failed, or restored with what was saved of them (see `awaitsTags`).
        private(set) var known: Set<ItemID> = []

        var canStart: Bool { inFlight < Self.maximumInFlight }

        /// Marks `id` asked for; false when it was already.
        mutating func ask(_ id: ItemID) -> Bool { asked.insert(id).inserted }

        /// A client asked about `id`: it is read after those asked before, unless it was asked for already.
        mutating func want(_ id: ItemID) {
            if ask(id) { wanted.append(id) }
        }

        mutating func nextWanted() -> ItemID? {
            guard wantedStart < wanted.count else { return nil }
            defer { wantedStart += 1 }
            return wanted[wantedStart]
        }

        /// `id` left the queue: asked for again, it is read again.
        mutating func forget(_ id: ItemID) {
            asked.remove(id)
            reading.remove(id)
            known.remove(id)
        }

        mutating func started(_ id: ItemID) {
            inFlight += 1
            reading.insert(id)
        }

        /// `id`'s read finished (or never will: it failed).
        mutating func finished(_ id: ItemID) {
            inFlight = max(inFlight - 1, 0)
            reading.remove(id)
        }

        mutating func settle(_ id: ItemID) { known.insert(id) }

        /// The FIFO's read part is dropped once it is most of it: amortised O(1) per id.
        mutating func compact() {
            if wantedStart == wanted.count {
                wanted.removeAll(keepingCapacity: wanted.count <= 1024)
                wantedStart = 0
            } else if wantedStart > 1024 && wantedStart * 2 > wanted.count {
                wanted.removeFirst(wantedStart)
                wantedStart = 0
            }
        }
    }
}

// MARK: The load's state

extension PlayerMachine {
    /// A seek a client (or a restore, a reconnect) asked for.
    struct SeekRequest {
        var target: SeekTarget
        var mode: SeekMode
    }

    /// The current item's load, from nothing loaded to prerolled. Each case holds what exists in it
    /// and nothing else: a pipeline only once a load was asked for; a seek runs, and a gapless next
    /// item is armed, only once it prerolled (trap 5; `prepareGaplessNext`); the engine is asked to
    /// play by itself only before (`askPlayAfterPreroll`). While loaded, the current item's status
    /// is `.unknown` when `loading` and `.readyToPlay` when `ready`; a failure releases the load.
    enum LoadState {
        /// Nothing loaded: the pipeline is at NULL (rule 6). `start` is the seek the next load runs
        /// once it prerolled: a restored position, a seek asked meanwhile, where a failed output or
        /// a reconnect paused by the user left off.
        case idle(start: SeekRequest?)
        /// Nothing loaded while the reconnect timer runs (`ReconnectPolicy`); its load follows.
        case awaitingReconnect(Reconnect, start: SeekRequest?)
        /// The engine prerolls the load.
        case loading(Loading)
        /// The load prerolled: the item is ready to play.
        case ready(Ready)
    }

    struct Loading {
        var pipeline: LoadedPipeline
        /// The seek to run once prerolled (rule 5: seeks asked before preroll are applied after it).
        var start: SeekRequest?
        /// The engine was asked to play once prerolled (see `askPlayAfterPreroll`).
        var playsAfterPreroll = false
        /// The reconnect this load is an attempt of.
        var reconnect: Reconnect?
    }

    struct Ready {
        var pipeline: LoadedPipeline
        /// The flushing seek in flight, and the newest asked after it (rule 5); nil: none runs.
        var seek: SeekState?
        /// The item the engine continues with gaplessly, and the generation of its load.
        var next: (id: ItemID, generation: Generation)?
        /// This load is a reconnect that prerolled at `since`: a failure soon after is the same
        /// outage; one after `ReconnectPolicy.steadyAfter` starts the count again.
        var reconnected: (attempt: Reconnect, since: ContinuousClock.Instant)?
    }

    struct SeekState {
        var running: SeekRequest
        var next: SeekRequest?
    }

    /// What the engine reported of the load's pipeline.
    struct LoadedPipeline {
        /// Bus messages of other generations are stale (rule 3).
        var generation: Generation
        var state: PipelineState = .null
        var pending: PipelineState?
        var buffering = Buffering()
        /// The last position read from the pipeline (or put there by a seek); nil is 0.
        var position: PositionSample?
        /// Its output wakes the player while paused (see `EngineSnapshot.streamWakesWhilePaused`).
        var streamWakesWhilePaused = false
    }

    struct Buffering {
        /// The last percent BUFFERING said, announced or not.
        var lastPercent = 100
        /// A buffering pause in force: BUFFERING < 100 on a stream that is not live (gstplay.c buffering_cb).
        var pause: BufferingPause?
    }

    struct BufferingPause {
        /// While playing waits on this pause: when its percent last moved. Set exactly while the
        /// stall timer runs (`watchStall`).
        var progressSince: ContinuousClock.Instant?
    }

    /// A reconnect of the current item (see `ReconnectPolicy`), kept with the load it concerns
    /// until another item becomes current, the player stops, or the attempts run out.
    struct Reconnect {
        /// Attempts made in a row.
        var attempts: Int
        /// Where to resume; nil: from the start (a live stream).
        var resumeAt: Duration?
    }
}

extension PlayerMachine.LoadState {
    typealias LoadedPipeline = PlayerMachine.LoadedPipeline

    /// The pipeline of the load under way or prerolled; nil when nothing is loaded.
    var pipeline: LoadedPipeline? {
        get {
            switch self {
            case .idle, .awaitingReconnect: nil
            case .loading(let loading): loading.pipeline
            case .ready(let ready): ready.pipeline
            }
        }
        set {
            // `loadState.pipeline?.x = y` writes nil back when there is none: nothing changes
            guard let newValue else { return }
            switch self {
            case .idle, .awaitingReconnect: preconditionFailure("no load to update")
            case .loading(var loading):
                loading.pipeline = newValue
                self = .loading(loading)
            case .ready(var ready):
                ready.pipeline = newValue
                self = .ready(ready)
            }
        }
    }

    var loading: PlayerMachine.Loading? {
        get { if case .loading(let loading) = self { loading } else { nil } }
        set {
            guard let newValue else { return }
            guard case .loading = self else { preconditionFailure("not loading") }
            self = .loading(newValue)
        }
    }

    var ready: PlayerMachine.Ready? {
        get { if case .ready(let ready) = self { ready } else { nil } }
        set {
            guard let newValue else { return }
            guard case .ready = self else { preconditionFailure("not prerolled") }
            self = .ready(newValue)
        }
    }

    /// The seek not handed to the engine yet: it runs after the preroll, or after the seek in flight.
    /// Set only where it cannot run at once (not prerolled, or a seek in flight).
    var pendingSeek: PlayerMachine.SeekRequest? {
        get {
            switch self {
            case .idle(let start), .awaitingReconnect(_, let start): start
            case .loading(let loading): loading.start
            case .ready(let ready): ready.seek?.next
            }
        }
        set {
            switch self {
            case .idle: self = .idle(start: newValue)
            case .awaitingReconnect(let reconnect, _): self = .awaitingReconnect(reconnect, start: newValue)
            case .loading(var loading):
                loading.start = newValue
                self = .loading(loading)
            case .ready(var ready):
                guard ready.seek != nil else { preconditionFailure("with no seek in flight a seek runs at once") }
                ready.seek?.next = newValue
                self = .ready(ready)
            }
        }
    }

    /// Where the position goes: the newest seek asked and not finished.
    var newestSeek: PlayerMachine.SeekRequest? { pendingSeek ?? ready?.seek?.running }

    /// The reconnect this load belongs to, and when it prerolled (nil: not yet).
    var reconnect: (attempt: PlayerMachine.Reconnect, playingSince: ContinuousClock.Instant?)? {
        switch self {
        case .idle: nil
        case .awaitingReconnect(let reconnect, _): (reconnect, nil)
        case .loading(let loading): loading.reconnect.map { ($0, nil) }
        case .ready(let ready): ready.reconnected.map { ($0.attempt, $0.since) }
        }
    }

    /// Playing waits on a reconnect: its timer runs, or its load has not prerolled.
    var isReconnecting: Bool { reconnect.map { $0.playingSince == nil } ?? false }
}
