import Dispatch

/// The player: owns a `PlayerMachine` (the rules) on one serial queue and performs what it asks:
/// events to observers, commands to the engine, tag reads. Nothing here waits on the engine: its
/// commands are queued, its events come back to this queue.
///
/// Public methods may be called from any thread: on the queue they run inline, elsewhere they run
/// synchronously on it. Observers are called on the queue.
public final class Player: @unchecked Sendable {
    // @unchecked: every mutable field is confined to `queue` (checked by `onQueue`'s dispatchPrecondition).
    public let queue: DispatchQueue
    private let engine: PlaybackEngine
    private let metadataReader: MetadataReader?
    /// Tells the instant that goes with each input to the machine, which never reads a clock
    /// itself (a test drives its own).
    private let clock: @Sendable () -> ContinuousClock.Instant
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    // Guarded by `queue`.
    private var machine: PlayerMachine
    private var observers: [UInt64: (PlayerEvent) -> Void] = [:]
    /// The observers' ids in the order they subscribed, which is the order they hear each event:
    /// kept, not sorted again for every event (make bench: PlayPause emits two).
    private var observerOrder: [UInt64] = []
    private var nextObserverID: UInt64 = 0
    /// The machine's timers, each only while what it waits for is pending (nothing ticks otherwise: rule 7).
    private var timers: [PlayerTimer: any DispatchSourceTimer] = [:]
    /// Changes to `timers` put off until the answer has left, oldest first (`changeTimers`).
    private var timerChanges: [() -> Void] = []
    /// Puts work off until the answer to the client's call being handled has left; false when no
    /// call is being handled (see `deferUntilAnswered`).
    private var answerDeferral: ((@escaping () -> Void) -> Bool)?
    /// Batches of engine commands put off (see `perform`) and not sent yet: a later batch that
    /// would go at once waits behind them instead, so that commands keep their order.
    private var heldBatches = 0

    public var configuration: PlayerConfiguration { machine.configuration }

    deinit { timers.values.forEach { $0.cancel() } }

    public init(engine: PlaybackEngine, configuration: PlayerConfiguration = PlayerConfiguration(),
                queue: DispatchQueue = DispatchQueue(label: "tonearm.player"), metadataReader: MetadataReader? = nil,
                clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.engine = engine
        self.clock = clock
        self.metadataReader = metadataReader
        self.queue = queue
        machine = PlayerMachine(configuration: configuration, hasMetadataReader: metadataReader != nil)
        queue.setSpecific(key: Player.queueKey, value: ObjectIdentifier(queue))
        engine.setEventHandler { [weak self] generation, event in
            guard let self else { return }
            self.queue.async { self.update { $0.handle(event, of: generation, at: self.clock()) } }
        }
    }

    private var isOnQueue: Bool { DispatchQueue.getSpecific(key: Player.queueKey) == ObjectIdentifier(queue) }

    private func onQueue<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if isOnQueue { return try body() }
        let result: Result<T, E> = queue.sync {
            do throws(E) { return .success(try body()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Gives the machine an input, then performs the actions it left (also when the input threw:
    /// a refused rate is announced).
    private func update<T, E: Error>(_ input: (inout PlayerMachine) throws(E) -> T) throws(E) -> T {
        try onQueue { () throws(E) -> T in
            let result: Result<T, E>
            machine.inputInstant = clock()  // where an item left is (KeptPlaces)
            do throws(E) { result = .success(try input(&machine)) } catch { result = .failure(error) }
            perform(machine.takeActions())
            return try result.get()
        }
    }

    private func perform(_ actions: [PlayerAction]) {
        dispatchPrecondition(condition: .onQueue(queue))
        // The engine gets an input's commands once the answer to the call that caused them has
        // left (the reply and its PropertiesChanged), else on the next turn of the queue, so the
        // engine's thread, woken by a command, does not compete with them for a core (make bench:
        // PlayPause -> PropertiesChanged). Commands keep their order.
        var commands: [EngineCommand] = []
        defer {
            if !commands.isEmpty {
                if heldBatches == 0, commands.contains(where: \.isSeek) {
                    // a seek goes at once: what the client waits for is its Seeked, which comes
                    // after the pipeline's preroll at the target, not the reply; the seek starting
                    // before the reply is written shortens it (make bench: SetPosition -> Seeked)
                    commands.forEach(engine.perform)
                } else {
                    heldBatches += 1
                    let send: @Sendable () -> Void = { [weak self, engine, commands] in
                        self?.heldBatches -= 1
                        commands.forEach(engine.perform)
                    }
                    if answerDeferral?(send) != true { queue.async(execute: send) }
                }
            }
        }
        for action in actions {
            switch action {
            case .emit(let event):
                for id in observerOrder { observers[id]?(event) }
            case .engine(let command):
                commands.append(command)
            case .startTimer(let kind, let delay):
                // its deadline is taken now, not when the change is made
                let deadline = DispatchTime.now() + .nanoseconds(Int(delay.nanoseconds))
                changeTimers { [weak self] in self?.startTimer(kind, deadline: deadline) }
            case .cancelTimer(let kind):
                changeTimers { [weak self] in self?.timers.removeValue(forKey: kind)?.cancel() }
            case .readMetadata(let id, let uri):
                guard let metadataReader else { continue }
                metadataReader.read(uri) { [weak self] result in
                    guard let self else { return }
                    self.queue.async { self.update { $0.metadataRead(id, result) } }
                }
            }
        }
    }

    /// Makes a change to the timers once the answer to the call being handled has left, else
    /// now; in order. Arming or cancelling a timer source wakes libdispatch's manager thread
    /// (an eventfd write), which runs at a higher priority than the thread answering and took
    /// its core before the PropertiesChanged of a PlayPause that cancelled the paused item's
    /// release left (perf sched, make bench: PlayPause -> PropertiesChanged).
    private func changeTimers(_ change: @escaping () -> Void) {
        timerChanges.append(change)
        guard timerChanges.count == 1 else { return }  // the first one's turn runs them all
        let run: () -> Void = { [weak self] in
            guard let self else { return }
            while !self.timerChanges.isEmpty { self.timerChanges.removeFirst()() }
        }
        if answerDeferral?(run) != true { run() }
    }

    private func startTimer(_ kind: PlayerTimer, deadline: DispatchTime) {
        timers[kind]?.cancel()
        // a timer source, not asyncAfter: cancelled, it leaves libdispatch's timer heap at once
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            self.timers.removeValue(forKey: kind)?.cancel()
            self.update { $0.timerFired(kind, now: self.clock()) }
        }
        timer.schedule(deadline: deadline)
        timer.resume()
        timers[kind] = timer
    }

    // MARK: Observing

    /// Says how to put work off until the answer to the client's call being handled has left:
    /// `deferral` keeps the body and returns true while a call is being handled, false otherwise.
    /// Engine commands and `whenAnswered` bodies go through it. Set once, on the queue, before use.
    public func deferUntilAnswered(with deferral: @escaping (@escaping () -> Void) -> Bool) {
        dispatchPrecondition(condition: .onQueue(queue))
        answerDeferral = deferral
    }

    /// Runs `body` on the queue once the answer to the client's call being handled has left, or now
    /// when none is: for an observer's work that wakes another thread (a write handed to a queue
    /// of its own, a log line), which would otherwise run before the reply is sent and could take
    /// the core that sends it.
    public func whenAnswered(_ body: @escaping () -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        if answerDeferral?(body) != true { body() }
    }

    /// Calls `handler` on the player's queue with the current value of every state, then with
    /// every event as it happens, until the subscription is cancelled.
    public func subscribe(_ handler: @escaping (PlayerEvent) -> Void) -> Subscription {
        let id: UInt64 = onQueue {
            nextObserverID += 1
            observers[nextObserverID] = handler
            observerOrder.append(nextObserverID)
            for event in machine.currentValues { handler(event) }
            return nextObserverID
        }
        return Subscription { [weak self] in
            guard let self else { return }
            self.onQueue {
                self.observers.removeValue(forKey: id)
                self.observerOrder.removeAll { $0 == id }
            }
        }
    }

    // MARK: Reading

    /// A snapshot of the player's state.
    public struct State: Sendable {
        /// How many items are queued.
        public var count: Int
        public var current: Item?
        public var intent: TransportIntent
        public var timeControlStatus: TimeControlStatus
        public var rate: Double
        public var volume: Double
        public var isMuted: Bool
        public var loopMode: LoopMode
        public var isShuffled: Bool
        public var canGoNext: Bool
        public var canGoPrevious: Bool
    }

    public var state: State { onQueue { machine.state } }
    /// `state.canGoNext` without the rest of `state` (its current item copied, CanGoPrevious
    /// computed): what an edit of the queue re-reads.
    public var canGoNext: Bool { onQueue { machine.canGoNext } }
    /// `state.canGoPrevious` without the rest of `state`.
    public var canGoPrevious: Bool { onQueue { machine.canGoPrevious } }
    /// Whether a seek has an effect (MPRIS CanSeek): the current item can seek, and linear
    /// playback is off.
    public var canSeek: Bool { onQueue { machine.canSeek } }
    /// The intent, the time control status and whether there is a current item: what a change
    /// of the transport changes, read without building the whole `state`.
    public var transport: (intent: TransportIntent, timeControlStatus: TimeControlStatus, hasCurrentItem: Bool) {
        onQueue { machine.transport }
    }
    public var currentItem: Item? { onQueue { machine.currentItem } }
    /// Whether the current item's tags are on their way (see `PlayerMachine.awaitsTags`).
    public var currentItemAwaitsTags: Bool {
        onQueue { machine.currentItemAwaitsTags }
    }
    /// Every item in the queue's order: O(n).
    public var items: [Item] { onQueue { machine.items } }
    /// Every id in the queue's order: O(n), without copying the items.
    public var ids: [ItemID] { onQueue { machine.ids } }
    public func item(_ id: ItemID) -> Item? { onQueue { machine.item(id) } }
    /// While shuffled, `id`'s key in the play order; nil otherwise (see `ShuffleOrder`).
    public func shuffleKey(of id: ItemID) -> UInt64? { onQueue { machine.shuffleKey(of: id) } }
    /// While shuffled, what the keys of the items there when it was shuffled are derived from.
    public var shuffleSeed: UInt64? { onQueue { machine.shuffleSeed } }
    /// While shuffled, the play order's keys that do not derive from the seed (see `ShuffleOrder`): O(n).
    public var ownShuffleKeys: [ItemID: UInt64] { onQueue { machine.ownShuffleKeys } }

    /// The position of the current item now, from the pipeline's last report and the time since
    /// (rule 7: computed when read; never waits on the pipeline).
    public var position: Duration { onQueue { machine.position(at: clock()) } }

    // MARK: The queue

    /// Adds URIs after `after` (nil: at the end). The first item added to an empty player becomes
    /// current. Returns the new items' ids.
    @discardableResult
    public func enqueue(_ uris: [MediaURI], after: ItemID? = nil) throws(PlayerError) -> [ItemID] {
        try enqueue(uris, at: after.map { .after($0) } ?? .end)
    }

    /// Adds URIs at the start, the end, or after an item; returns the new items' ids.
    @discardableResult
    public func enqueue(_ uris: [MediaURI], at placement: Placement) throws(PlayerError) -> [ItemID] {
        try update { m throws(PlayerError) in try m.enqueue(uris, at: placement) }
    }

    public func remove(_ ids: [ItemID]) throws(PlayerError) { try update { m throws(PlayerError) in try m.remove(ids) } }
    public func move(_ id: ItemID, after: ItemID?) throws(PlayerError) {
        try update { m throws(PlayerError) in try m.move(id, after: after) }
    }
    public func clear() { update { $0.clear() } }
    /// Replaces the whole queue with `uris` and plays the first (a playlist activated).
    @discardableResult
    public func replace(with uris: [MediaURI]) throws(PlayerError) -> [ItemID] {
        try update { m throws(PlayerError) in try m.replace(with: uris) }
    }
    /// Asks for the tags of items that have not played (a client shows them): read in the
    /// background, each once; `metadataChanged` follows for those that have tags. Returns the
    /// items of `ids` that are queued, as they are now, in `ids`' order, found in the same call
    /// (GetTracksMetadata asked `item(_:)` for each of its 100 tracks first, each a check of the
    /// queue and a closure of its own).
    @discardableResult
    public func wantMetadata(_ ids: [ItemID]) -> [Item] {
        update { machine in
            let items = ids.compactMap { machine.item($0) }
            machine.wantMetadata(items.map(\.id))
            return items
        }
    }
    /// Makes `id` current, keeping the transport's intent (playing plays it, paused loads it paused).
    public func jump(to id: ItemID) throws(PlayerError) { try update { m throws(PlayerError) in try m.jump(to: id) } }

    /// Restores a saved state into an empty player; see `PlayerMachine.restore(_:resume:)`.
    public func restore(_ saved: SavedState, resume: ResumeMode) { update { $0.restore(saved, resume: resume) } }

    // MARK: Transport

    public func play() { update { $0.play() } }
    public func pause() { update { $0.pause() } }
    public func togglePlayPause() { update { $0.togglePlayPause() } }
    /// To NULL (rule 6): the device and file are released; the position is 0.
    public func stop() { update { $0.stop() } }
    /// Refused while linear playback is on.
    public func next() throws(PlayerError) { try update { m throws(PlayerError) in try m.next(now: clock()) } }
    /// Back to the current item's start, or to the item before (see `PlayerMachine.previous(now:)`).
    public func previous() { update { $0.previous(now: clock()) } }
    /// Pauses because something outside asked (the sound server, the system going to sleep).
    public func interrupt(because reason: RateChangeReason) { update { $0.interrupt(because: reason) } }
    /// Plays again after `interrupt(because:)`, unless the user changed the transport meanwhile.
    public func resume(because reason: RateChangeReason) { update { $0.resume(because: reason) } }

    /// Seeks the current item; see `PlayerMachine.seek(to:toleranceBefore:toleranceAfter:)`.
    /// Refused while linear playback is on.
    public func seek(to position: Duration, toleranceBefore: Duration = .zero, toleranceAfter: Duration = .zero) throws(PlayerError) {
        try update { m throws(PlayerError) in
            try m.seek(to: position, toleranceBefore: toleranceBefore, toleranceAfter: toleranceAfter, now: clock())
        }
    }

    /// Seeks by `offset` from the current position. Refused while linear playback is on.
    public func seek(by offset: Duration) throws(PlayerError) { try update { m throws(PlayerError) in try m.seek(by: offset, now: clock()) } }

    /// The current item's chapters, and the index of the one the position is in now (`Chapters.swift`).
    public var chapters: [Chapter] { onQueue { machine.chapters } }
    public var currentChapter: Int? { onQueue { machine.currentChapter(at: clock()) } }
    /// Seeks exactly to the start of the current item's chapter `index`; `noSuchChapter` when it
    /// has none of that number.
    public func goToChapter(_ index: Int) throws(PlayerError) {
        try update { m throws(PlayerError) in try m.goToChapter(index, now: clock()) }
    }

    /// Sets the rate (pitch kept). Out of range, the rate stays and observers hear `refused`.
    public func setRate(_ rate: Double, reason: RateChangeReason = .client) throws(PlayerError) {
        try update { m throws(PlayerError) in try m.setRate(rate, reason: reason, now: clock()) }
    }

    /// Linear volume 0...1 (values outside are clamped).
    public func setVolume(_ volume: Double) { update { $0.setVolume(volume) } }
    public func setMuted(_ muted: Bool) { update { $0.setMuted(muted) } }
    public func setLoopMode(_ mode: LoopMode) { update { $0.setLoopMode(mode) } }
    public func setShuffle(_ shuffled: Bool) { update { $0.setShuffle(shuffled) } }
    /// `LinearPlayback.swift`.
    public var linearPlayback: Bool { onQueue { machine.linearPlayback } }
    public func setLinearPlayback(_ on: Bool) { update { $0.setLinearPlayback(on) } }
    /// `KeptPlaces.swift`.
    public var resumePlaces: Bool { onQueue { machine.resumePlaces } }
    public func setResumePlaces(_ on: Bool) { update { $0.setResumePlaces(on) } }
    /// Next and Previous by chapter (`Chapters.swift`).
    public var nextByChapter: Bool { onQueue { machine.nextByChapter } }
    public func setNextByChapter(_ on: Bool) { update { $0.setNextByChapter(on) } }
    /// Where the current item started from its kept place (nil: its start, or a restored position).
    public var resumedFrom: Duration? { onQueue { machine.resumedFrom } }
    /// Every place kept, oldest first.
    public var keptPlaces: KeptPlaces { onQueue { machine.keptPlaces } }
    /// The places saved, given at start whatever `--resume` says (they are not the queue).
    public func restorePlaces(_ saved: [(MediaURI, Duration)]) { update { $0.restorePlaces(saved) } }
    /// The current item's place if it were left now, for the saved state (`PlayerMachine.currentPlace(at:)`).
    public var currentPlace: PlaceChange? { onQueue { machine.currentPlace(at: clock()) } }
    /// The video and its window (`VideoState.swift`).
    public var video: VideoState { onQueue { machine.video } }
    /// MPRIS `Fullscreen`; false without a window.
    @discardableResult public func setFullscreen(_ on: Bool) -> Bool { update { $0.setFullscreen(on) } }
    /// MPRIS `Raise`; false without a window.
    @discardableResult public func raiseWindow() -> Bool { update { $0.raiseWindow() } }
    /// `ControlsVisible`: whether the video window's bar shows when the pointer moves.
    public func setControlsVisible(_ on: Bool) { update { $0.setControlsVisible(on) } }

    /// ReplayGain and the equalizer (`AudioSettings.swift`).
    public var audio: AudioSettings { onQueue { machine.audioSettings } }
    public func setReplayGainMode(_ mode: ReplayGainMode) { update { $0.setReplayGainMode(mode) } }
    public func setReplayGainPreamp(_ preamp: Double) { update { $0.setReplayGainPreamp(preamp) } }
    public func setEqualizer(_ gains: [Double]) { update { $0.setEqualizer(gains) } }
    /// `Crossfade` (seconds, 0...12) and `CrossfadeAlbums` (`Crossfade.swift`).
    public func setCrossfade(_ seconds: Double, albums: Bool) { update { $0.setCrossfade(seconds, albums: albums, now: clock()) } }
    @discardableResult public func selectEqualizerPreset(_ name: String) -> Bool { update { $0.selectEqualizerPreset(name) } }
    @discardableResult public func saveEqualizerPreset(_ name: String) -> Bool { update { $0.saveEqualizerPreset(name) } }
    @discardableResult public func deleteEqualizerPreset(_ name: String) -> Bool { update { $0.deleteEqualizerPreset(name) } }
    /// The chosen output and the devices (`Outputs.swift`).
    public var outputs: Outputs { onQueue { machine.outputs } }
    @discardableResult public func setOutput(_ id: String) -> Bool { update { $0.setOutput(id, now: clock()) } }
    /// The extension's `VideoGravity` and `PictureInPicture` (`VideoSettings.swift`).
    public func setVideoGravity(_ gravity: VideoGravity) { update { $0.setVideoGravity(gravity) } }
    public func setPictureInPicture(_ on: Bool) { update { $0.setPictureInPicture(on) } }

    /// Stop when the current item ends (`SleepTimer.swift`).
    public var stopsAfterCurrent: Bool { onQueue { machine.stopsAfterCurrent } }
    public func setStopAfterCurrent(_ on: Bool) { update { $0.setStopAfterCurrent(on) } }
    /// The sleep timer, if set: pauses `length` from now, fading out over its last 10 s.
    public var sleepTimer: SleepTimer? { onQueue { machine.sleepTimer } }
    public func setSleepTimer(after length: Duration) { update { $0.setSleepTimer(after: length, now: clock()) } }
    public func cancelSleepTimer() { update { $0.cancelSleepTimer() } }

    /// Tries the failed item again, within the retry budget. It plays.
    public func retry() throws(PlayerError) { try update { m throws(PlayerError) in try m.retry() } }

    /// Adds `uris` after the current item (or at the end) and plays the first of them.
    @discardableResult
    public func open(_ uris: [MediaURI]) throws(PlayerError) -> [ItemID] {
        try update { m throws(PlayerError) in try m.open(uris) }
    }
}
