import Dispatch

/// The player: the queue, the transport and the rules of the design brief, over an engine.
///
/// One serial queue owns all of its state. Public methods may be called from any thread: on the
/// queue they run inline, elsewhere they run synchronously on it. Observers are called on the queue.
public final class Player: @unchecked Sendable {
    public let queue: DispatchQueue
    private let engine: PlaybackEngine
    public let configuration: PlayerConfiguration
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    // Everything below is guarded by `queue`.
    private var playQueue = PlayQueue()
    private var intent: TransportIntent = .stopped
    private var timeControl: TimeControlStatus = .paused
    private var rate = 1.0
    private var volume = 1.0
    private var muted = false
    private var loopMode: LoopMode = .none
    private var observers: [UInt64: (PlayerEvent) -> Void] = [:]
    private var nextObserverID: UInt64 = 0
    private var retries: [ItemID: Int] = [:]
    private var lastFailed: ItemID?
    /// Paused by the sound server or by sleep, not by the user.
    private var interruptedBy: RateChangeReason?

    // The pipeline, as the engine reports it for the current load.
    private var generationCounter: UInt64 = 0
    private var loaded: Generation?
    private var prepared: (id: ItemID, generation: Generation)?
    private var pipelineState: PipelineState = .null
    private var pipelinePending: PipelineState?
    /// A buffering pause is in force (BUFFERING < 100 while playing was wanted).
    private var bufferingPaused = false
    private var seekInFlight: SeekRequest?
    private var pendingSeek: SeekRequest?
    /// The last position a seek or stop put the item at, for reads when the pipeline cannot answer.
    private var lastKnownPosition: Duration = .zero

    private struct SeekRequest {
        var position: Duration
        var mode: SeekMode
        /// Only a rate change: the position is wherever the pipeline is when it runs.
        var keepPosition = false
    }

    private let metadataReader: MetadataReader?
    /// Items waiting for the metadata reader, and how many reads are under way.
    private var unread: [ItemID] = []
    private var readsInFlight = 0
    private static let maximumReadsInFlight = 2

    public init(engine: PlaybackEngine, configuration: PlayerConfiguration = PlayerConfiguration(),
                queue: DispatchQueue = DispatchQueue(label: "tonearm.player"), metadataReader: MetadataReader? = nil) {
        self.engine = engine
        self.metadataReader = metadataReader
        self.configuration = configuration
        self.queue = queue
        queue.setSpecific(key: Player.queueKey, value: ObjectIdentifier(queue))
        engine.eventHandler = { [weak self] generation, event in
            self?.handle(event, of: generation)
        }
    }

    private func onQueue<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if DispatchQueue.getSpecific(key: Player.queueKey) == ObjectIdentifier(queue) { return try body() }
        let result: Result<T, E> = queue.sync {
            do throws(E) { return .success(try body()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    // MARK: Observing

    /// Calls `handler` on the player's queue with the current value of every state, then with
    /// every event as it happens, until the subscription is cancelled.
    public func subscribe(_ handler: @escaping (PlayerEvent) -> Void) -> Subscription {
        let id: UInt64 = onQueue {
            nextObserverID += 1
            observers[nextObserverID] = handler
            for event in currentValues() { handler(event) }
            return nextObserverID
        }
        return Subscription { [weak self] in
            guard let self else { return }
            self.onQueue { _ = self.observers.removeValue(forKey: id) }
        }
    }

    private func currentValues() -> [PlayerEvent] {
        var events: [PlayerEvent] = [
            .queueChanged(playQueue.ids),
            .currentItemChanged(playQueue.current),
            .intentChanged(intent),
            .timeControlStatusChanged(timeControl),
            .rateChanged(rate, .initial),
            .volumeChanged(volume, muted: muted),
            .loopModeChanged(loopMode),
            .shuffleChanged(playQueue.isShuffled),
        ]
        if let item = playQueue.current {
            events += [
                .itemStatusChanged(item.id, item.status),
                .metadataChanged(item.id, item.metadata),
                .durationChanged(item.id, item.duration),
                .capabilitiesChanged(item.id, isLive: item.isLive, isSeekable: item.isSeekable),
                .bufferingChanged(item.id, percent: item.bufferingPercent, loadedRanges: item.loadedRanges),
            ]
        }
        return events
    }

    private func emit(_ event: PlayerEvent) {
        for id in observers.keys.sorted() { observers[id]?(event) }
    }

    // MARK: Reading

    /// A snapshot of the player's state.
    public struct State: Sendable {
        public var items: [Item]
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

    public var state: State {
        onQueue {
            State(items: playQueue.items, current: playQueue.current, intent: intent, timeControlStatus: timeControl,
                  rate: rate, volume: volume, isMuted: muted, loopMode: loopMode, isShuffled: playQueue.isShuffled,
                  canGoNext: playQueue.currentID != nil && nextItemID(wrap: loopMode != .none) != nil,
                  canGoPrevious: playQueue.currentID != nil
                      && playQueue.previous(before: playQueue.currentID, wrap: loopMode != .none) != nil)
        }
    }

    public var currentItem: Item? { onQueue { playQueue.current } }
    public var items: [Item] { onQueue { playQueue.items } }
    public func item(_ id: ItemID) -> Item? { onQueue { playQueue.item(id) } }

    /// The position of the current item, asked of the pipeline now (rule 7: never sampled).
    public var position: Duration {
        onQueue {
            guard let item = playQueue.current, loaded != nil, intent != .stopped else { return .zero }
            if seekInFlight != nil || pendingSeek != nil { return pendingSeek?.position ?? seekInFlight!.position }
            var position = engine.position ?? lastKnownPosition
            if let duration = item.duration { position = min(position, duration) }
            return max(position, .zero)
        }
    }

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
        try onQueue { () throws(PlayerError) -> [ItemID] in
            if case .after(let after) = placement, playQueue.item(after) == nil {
                throw PlayerError(.noSuchItem, "no item \(after) in the queue")
            }
            let ids = playQueue.insert(uris, at: placement)
            emit(.queueChanged(playQueue.ids))
            unread += ids
            readMetadata()
            if playQueue.currentID == nil, let first = ids.first {
                makeCurrent(first, load: intent != .stopped)
            } else {
                prepareGaplessNext()
            }
            return ids
        }
    }

    public func remove(_ ids: [ItemID]) throws(PlayerError) {
        try onQueue { () throws(PlayerError) in
            for id in ids where playQueue.item(id) == nil { throw PlayerError(.noSuchItem, "no item \(id) in the queue") }
            for id in ids {
                if id == playQueue.currentID {
                    let successor = playQueue.next(after: id, wrap: false) ?? playQueue.previous(before: id, wrap: false)
                    let replacement = successor.flatMap { ids.contains($0) ? nil : $0 }
                    playQueue.remove(id)
                    if let replacement {
                        makeCurrent(replacement, load: intent != .stopped)
                    } else {
                        unloadCurrent()
                    }
                } else {
                    playQueue.remove(id)
                }
                retries[id] = nil
            }
            emit(.queueChanged(playQueue.ids))
            prepareGaplessNext()
        }
    }

    public func move(_ id: ItemID, after: ItemID?) throws(PlayerError) {
        try onQueue { () throws(PlayerError) in
            guard playQueue.move(id, after: after) else {
                throw PlayerError(.noSuchItem, "cannot move \(id) after \(after.map(String.init(describing:)) ?? "the start")")
            }
            emit(.queueChanged(playQueue.ids))
            prepareGaplessNext()
        }
    }

    public func clear() {
        onQueue {
            unloadCurrent()
            playQueue.removeAll()
            retries.removeAll()
            emit(.queueChanged([]))
        }
    }

    /// Makes `id` current, keeping the transport's intent (playing plays it, paused loads it paused).
    public func jump(to id: ItemID) throws(PlayerError) {
        try onQueue { () throws(PlayerError) in
            guard playQueue.item(id) != nil else { throw PlayerError(.noSuchItem, "no item \(id) in the queue") }
            makeCurrent(id, load: intent != .stopped)
        }
    }

    // MARK: Transport

    public func play() {
        onQueue {
            guard let current = playQueue.current else {
                setIntent(.playing)
                return
            }
            if case .failed = current.status, loaded == nil {
                // a failed item does not play; the next one does
                setIntent(.playing)
                advanceAfterFailure()
                return
            }
            setIntent(.playing)
            if loaded == nil { load(current.id) } else { applyTargetState() }
        }
    }

    public func pause() {
        onQueue {
            guard playQueue.current != nil else { return }
            if intent == .stopped {
                // pausing a stopped player prerolls its item at the start
                setIntent(.paused)
                if loaded == nil, let id = playQueue.currentID { load(id) }
                return
            }
            setIntent(.paused)
            applyTargetState()
        }
    }

    /// Pauses because something outside asked (the sound server, the system going to sleep):
    /// observers hear the rate fall to 0 with the reason; `resume(because:)` undoes it.
    public func interrupt(because reason: RateChangeReason) {
        onQueue {
            guard intent == .playing else { return }
            pause()
            interruptedBy = reason
            emit(.rateChanged(0, reason))
        }
    }

    /// Plays again after `interrupt(because:)`, unless the user changed the transport meanwhile.
    public func resume(because reason: RateChangeReason) {
        onQueue {
            guard interruptedBy == reason, intent == .paused else { return }
            interruptedBy = nil
            play()
            emit(.rateChanged(rate, reason))
        }
    }

    public func togglePlayPause() {
        onQueue { intent == .playing ? pause() : play() }
    }

    /// To NULL (rule 6): the device and file are released; the position is 0.
    public func stop() {
        onQueue {
            release()
            setIntent(.stopped)
        }
    }

    /// The next item in play order (wrapping when looping the queue), keeping the intent.
    public func next() {
        onQueue {
            guard let next = nextItemID(wrap: loopMode != .none) else { return }
            makeCurrent(next, load: intent != .stopped)
        }
    }

    /// The previous item in play order (wrapping when looping), keeping the intent. At the first
    /// item there is nothing to go back to: no effect (MPRIS: CanGoPrevious false, Previous does
    /// nothing), and never a silent restart, which clients could not tell from a skip.
    public func previous() {
        onQueue {
            guard let current = playQueue.currentID,
                  let previous = playQueue.previous(before: current, wrap: loopMode != .none) else { return }
            makeCurrent(previous, load: intent != .stopped)
        }
    }

    /// Seeks the current item. Zero tolerances seek exactly; otherwise the fastest key-unit seek
    /// within them. Past the end goes to the next item; before 0 clamps to 0. Seeks coalesce:
    /// while one runs, only the newest pending one runs after it (rule 5).
    public func seek(to position: Duration, toleranceBefore: Duration = .zero, toleranceAfter: Duration = .zero) {
        onQueue {
            guard let item = playQueue.current else { return }
            let target = max(position, .zero)
            if let duration = item.duration, target >= duration {
                nextAfterEnd()
                return
            }
            let mode: SeekMode = toleranceBefore == .zero && toleranceAfter == .zero
                ? .exact : .fast(before: max(toleranceBefore, .zero), after: max(toleranceAfter, .zero))
            request(SeekRequest(position: target, mode: mode))
        }
    }

    /// Seeks by `offset` from the current position.
    public func seek(by offset: Duration) {
        onQueue { seek(to: position + offset) }
    }

    /// Sets the rate (pitch kept). Out of range, the rate stays and observers hear `refused`.
    public func setRate(_ newRate: Double, reason: RateChangeReason = .client) throws(PlayerError) {
        try onQueue { () throws(PlayerError) in
            guard newRate.isFinite, (configuration.minimumRate...configuration.maximumRate).contains(newRate) else {
                emit(.rateChanged(rate, .refused))
                throw PlayerError(.rateOutOfRange,
                                  "rate \(newRate) is outside \(configuration.minimumRate)...\(configuration.maximumRate)")
            }
            guard newRate != rate else { return }
            rate = newRate
            if let item = playQueue.current, item.status == .readyToPlay, item.isSeekable {
                request(SeekRequest(position: position, mode: .exact, keepPosition: true))
            }
            emit(.rateChanged(rate, reason))
        }
    }

    /// Linear volume 0...1 (values outside are clamped).
    public func setVolume(_ newVolume: Double) {
        onQueue {
            let clamped = newVolume.isFinite ? min(max(newVolume, 0), 1) : volume
            guard clamped != volume else { return }
            volume = clamped
            engine.setVolume(clamped)
            emit(.volumeChanged(volume, muted: muted))
        }
    }

    public func setMuted(_ newMuted: Bool) {
        onQueue {
            guard newMuted != muted else { return }
            muted = newMuted
            engine.setMuted(newMuted)
            emit(.volumeChanged(volume, muted: muted))
        }
    }

    public func setLoopMode(_ mode: LoopMode) {
        onQueue {
            guard mode != loopMode else { return }
            loopMode = mode
            emit(.loopModeChanged(mode))
            prepareGaplessNext()
        }
    }

    public func setShuffle(_ shuffled: Bool) {
        onQueue {
            guard shuffled != playQueue.isShuffled else { return }
            playQueue.setShuffled(shuffled)
            emit(.shuffleChanged(shuffled))
            prepareGaplessNext()
        }
    }

    /// Tries the failed item again (the current one if it failed, else the last that failed), at
    /// most `maximumRetries` times each. It plays.
    public func retry() throws(PlayerError) {
        try onQueue { () throws(PlayerError) in
            let candidate: ItemID? = {
                if let current = playQueue.current, current.error != nil { return current.id }
                return lastFailed.flatMap { playQueue.item($0)?.error != nil ? $0 : nil }
            }()
            guard let id = candidate else { throw PlayerError(.nothingToRetry, "no failed item to retry") }
            let count = retries[id, default: 0]
            guard count < configuration.maximumRetries else {
                throw PlayerError(.retryBudgetExhausted,
                                  "\(playQueue.item(id)!.displayTitle) was already retried \(count) times")
            }
            retries[id] = count + 1
            setIntent(.playing)
            makeCurrent(id, load: true, force: true)
        }
    }

    /// Adds `uris` after the current item (or at the end) and plays the first of them.
    @discardableResult
    public func open(_ uris: [MediaURI]) throws(PlayerError) -> [ItemID] {
        try onQueue { () throws(PlayerError) -> [ItemID] in
            let ids = try enqueue(uris, after: playQueue.currentID)
            guard let first = ids.first else { return ids }
            setIntent(.playing)
            if playQueue.currentID == first, loaded != nil { applyTargetState() } else { makeCurrent(first, load: true, force: playQueue.currentID == first) }
            return ids
        }
    }

    // MARK: Metadata of items that have not played

    /// Reads the tags of queued items in the background, a few at a time; nothing runs when all
    /// are read.
    private func readMetadata() {
        guard let reader = metadataReader else { return }
        while readsInFlight < Self.maximumReadsInFlight, !unread.isEmpty {
            let id = unread.removeFirst()
            guard let item = playQueue.item(id), item.metadata.isEmpty, loaded == nil || id != playQueue.currentID else { continue }
            readsInFlight += 1
            reader.read(item.uri) { [weak self] result in
                guard let self else { return }
                self.queue.async { self.metadataRead(id, result) }
            }
        }
    }

    private func metadataRead(_ id: ItemID, _ result: Result<DiscoveredMedia, ItemError>) {
        readsInFlight -= 1
        defer { readMetadata() }
        guard case .success(let found) = result, let item = playQueue.item(id) else { return }
        var metadata = item.metadata
        metadata.fillMissing(from: found.metadata)
        if metadata != item.metadata {
            playQueue.update(id) { $0.metadata = metadata }
            emit(.metadataChanged(id, metadata))
        }
        if item.duration == nil, let duration = found.duration, !found.isLive {
            setDuration(id, duration)
        }
        if item.status == .unknown, loaded == nil || id != playQueue.currentID, found.isSeekable != item.isSeekable {
            playQueue.update(id) { $0.isSeekable = found.isSeekable }
            emitCapabilities(id)
        }
    }

    // MARK: Rules

    private func nextItemID(wrap: Bool) -> ItemID? {
        playQueue.next(after: playQueue.currentID, wrap: wrap)
    }

    private func setIntent(_ newIntent: TransportIntent) {
        interruptedBy = nil
        if newIntent != intent {
            intent = newIntent
            emit(.intentChanged(newIntent))
        }
        updateTimeControl()
    }

    /// Makes `id` current. With `load`, loads it (prerolled; playing if that is the intent).
    private func makeCurrent(_ id: ItemID, load shouldLoad: Bool, force: Bool = false) {
        let changed = playQueue.currentID != id
        if changed || force {
            release()
            playQueue.setCurrent(id)
            if force { playQueue.update(id) { $0.status = .unknown } }
            if changed { emit(.currentItemChanged(playQueue.current)) }
        }
        if shouldLoad { load(id) } else { prepareGaplessNext() }
        updateTimeControl()
    }

    private func unloadCurrent() {
        release()
        let hadCurrent = playQueue.currentID != nil
        playQueue.setCurrent(nil)
        if hadCurrent { emit(.currentItemChanged(nil)) }
        if intent == .paused { setIntent(.stopped) } else { updateTimeControl() }
    }

    /// Takes the pipeline to NULL (device and file released) and forgets the current load: its
    /// generation, the prepared next item, what the pipeline reported, and the position (rule 6).
    private func release() {
        if loaded != nil { engine.stop() }
        loaded = nil
        prepared = nil
        resetPipelineTracking()
        lastKnownPosition = .zero
    }

    private func resetPipelineTracking() {
        pipelineState = .null
        pipelinePending = nil
        bufferingPaused = false
        seekInFlight = nil
        pendingSeek = nil
    }

    private func newGeneration() -> Generation {
        generationCounter += 1
        return Generation(generationCounter)
    }

    private func load(_ id: ItemID) {
        guard let item = playQueue.item(id) else { return }
        let generation = newGeneration()
        resetPipelineTracking()
        playQueue.update(id) {
            $0.status = .unknown
            $0.bufferingPercent = 100
        }
        if let error = engine.check(item.uri) {
            loaded = nil
            fail(id, error)
            return
        }
        loaded = generation
        prepared = nil
        engine.load(item.uri, generation: generation)
        engine.setVolume(volume)
        engine.setMuted(muted)
        emit(.itemStatusChanged(id, .unknown))
        prepareGaplessNext()
        updateTimeControl()
    }

    /// Tells the engine what follows the current item, for a gapless switch on about-to-finish.
    private func prepareGaplessNext() {
        // only once the current item prerolled: an item that never produces a buffer must end in
        // its own error, not in a switch that would call it played; and playbin3 1.22.0 aborts
        // (reconfigure_output assertion) when about-to-finish switches away from such a stream.
        // An item shorter than the pipeline's queues may drain before preroll and end with EOS.
        guard loaded != nil, let current = playQueue.currentID, playQueue.current?.status == .readyToPlay else {
            if prepared != nil { engine.prepareNext(nil, generation: nil) }
            prepared = nil
            return
        }
        let nextID: ItemID? = loopMode == .track ? current : nextItemID(wrap: loopMode == .queue)
        guard let nextID, let next = playQueue.item(nextID), engine.check(next.uri) == nil else {
            prepared = nil
            engine.prepareNext(nil, generation: nil)
            return
        }
        if let prepared, prepared.id == nextID { return }
        let generation = newGeneration()
        prepared = (nextID, generation)
        engine.prepareNext(next.uri, generation: generation)
    }

    private func applyTargetState() {
        guard loaded != nil else { return }
        // a buffering pause holds until 100% (gstplay.c buffering_cb)
        engine.setPlaying(intent == .playing && !bufferingPaused && playQueue.current?.status == .readyToPlay)
        updateTimeControl()
    }

    private func request(_ seek: SeekRequest) {
        guard let item = playQueue.current else { return }
        // seeks asked before preroll run after it; while one runs, the newest waits (rule 5)
        if item.status != .readyToPlay || seekInFlight != nil || loaded == nil {
            pendingSeek = seek
            if loaded == nil, intent == .stopped {
                // a seek on a stopped player prerolls paused at the target
                setIntent(.paused)
                load(item.id)
                pendingSeek = seek
            }
            return
        }
        guard item.isSeekable else { return }
        run(seek)
    }

    private func run(_ seek: SeekRequest) {
        var seek = seek
        if seek.keepPosition { seek.position = engine.position ?? lastKnownPosition }
        if engine.seek(to: seek.position, mode: seek.mode, rate: rate) {
            seekInFlight = seek
            lastKnownPosition = seek.position
        }
    }

    private func nextAfterEnd() {
        if let next = nextItemID(wrap: loopMode != .none) {
            makeCurrent(next, load: intent != .stopped)
        } else {
            endOfQueue()
        }
    }

    private func endOfQueue() {
        release()
        setIntent(.stopped)
    }

    /// The item's status becomes failed; observers hear the state and the moment.
    private func markFailed(_ id: ItemID, _ error: ItemError) {
        playQueue.update(id) { $0.status = .failed(error) }
        lastFailed = id
        emit(.itemStatusChanged(id, .failed(error)))
        emit(.itemFailed(id, error))
    }

    private func fail(_ id: ItemID, _ error: ItemError) {
        markFailed(id, error)
        if id == playQueue.currentID {
            release()
            if configuration.advanceOnFailure && intent == .playing {
                advanceAfterFailure()
            } else {
                updateTimeControl()
            }
        }
    }

    /// Moves on from a failed current item to the next one that has not failed.
    private func advanceAfterFailure() {
        var candidate = nextItemID(wrap: loopMode == .queue)
        var seen = Set<ItemID>()
        while let id = candidate, !seen.contains(id) {
            seen.insert(id)
            if playQueue.item(id)?.error == nil {
                makeCurrent(id, load: true)
                return
            }
            candidate = playQueue.next(after: id, wrap: loopMode == .queue)
        }
        endOfQueue()
    }

    private func updateTimeControl() {
        let status: TimeControlStatus
        if intent != .playing {
            status = .paused
        } else if let item = playQueue.current, loaded != nil {
            let target = pipelinePending ?? pipelineState
            if bufferingPaused && !item.isLive {
                status = .waitingToPlay(.buffering)
            } else if item.status == .readyToPlay && (pipelineState == .playing || target == .playing) {
                status = .playing
            } else {
                status = .waitingToPlay(.evaluatingBuffering)
            }
        } else if playQueue.current == nil {
            status = .waitingToPlay(.noItem)
        } else {
            status = .waitingToPlay(.evaluatingBuffering)
        }
        if status != timeControl {
            timeControl = status
            emit(.timeControlStatusChanged(status))
        }
    }

    // MARK: Engine events

    private func handle(_ event: EngineEvent, of generation: Generation) {
        if let prepared, generation == prepared.generation {
            handlePrepared(event, id: prepared.id)
            return
        }
        // stale messages die (rule 3)
        guard generation == loaded, let id = playQueue.currentID else { return }
        switch event {
        case .stateChanged(let state, let pending):
            pipelineState = state
            pipelinePending = pending
            updateTimeControl()
        case .asyncDone:
            asyncDone(id)
        case .live:
            playQueue.update(id) { $0.isLive = true }
            emitCapabilities(id)
            if intent == .playing { engine.setPlaying(true) }
        case .streamStarted:
            if playQueue.item(id)?.isLive == true, playQueue.item(id)?.status == .unknown {
                becameReady(id)
            }
        case .endOfStream:
            emit(.playedToEnd(id))
            if loopMode == .track {
                makeCurrent(id, load: intent != .stopped, force: true)
                emit(.seeked(.zero))
            } else {
                nextAfterEnd()
            }
        case .failed(let error):
            fail(id, error)
        case .tags(let metadata):
            var merged = playQueue.item(id)!.metadata
            merged.merge(metadata)
            if playQueue.item(id)!.isLive, let title = metadata.title {
                merged.streamTitle = title  // a radio station's title tag is what it plays now
            }
            guard merged != playQueue.item(id)!.metadata else { return }
            playQueue.update(id) { $0.metadata = merged }
            emit(.metadataChanged(id, merged))
        case .buffering(let percent):
            buffering(id, percent)
        case .durationChanged(let duration):
            setDuration(id, duration)
        case .requestState(let state):
            // the sound server corks or uncorks us (pulsesink REQUEST_STATE)
            if state == .paused { interrupt(because: .soundServer) } else if state == .playing { resume(because: .soundServer) }
        }
    }

    /// Events of the gapless next item before or at its boundary.
    private func handlePrepared(_ event: EngineEvent, id nextID: ItemID) {
        switch event {
        case .streamStarted:
            // the real boundary: the previous item played to its end
            guard let previous = playQueue.currentID, let generation = prepared?.generation else { return }
            if playQueue.item(previous)?.status == .readyToPlay {
                emit(.playedToEnd(previous))
            } else {
                // it never prerolled: the next item's data did (no buffer of its own came out)
                let name = playQueue.item(previous)!.uri.displayPath
                markFailed(previous, ItemError(.decode, "cannot decode \(name): it holds no playable audio"))
            }
            loaded = generation
            prepared = nil
            if nextID == previous {
                playQueue.update(nextID) { $0.status = .readyToPlay }
                lastKnownPosition = .zero
                emit(.seeked(.zero))  // a looping track jumps back to 0 (MPRIS Seeked)
            } else {
                playQueue.setCurrent(nextID)
                playQueue.update(nextID) { $0.status = .readyToPlay }
                emit(.currentItemChanged(playQueue.current))
                emit(.itemStatusChanged(nextID, .readyToPlay))
                refreshCapabilities(nextID)
            }
            prepareGaplessNext()
            updateTimeControl()
        case .failed(let error):
            prepared = nil
            fail(nextID, error)
        default:
            break
        }
    }

    private func asyncDone(_ id: ItemID) {
        guard let item = playQueue.item(id) else { return }
        if item.status == .unknown {
            becameReady(id)
            return
        }
        if let finished = seekInFlight {
            seekInFlight = nil
            if let next = pendingSeek {
                pendingSeek = nil
                run(next)
                return
            }
            if !finished.keepPosition {
                emit(.seeked(engine.position ?? finished.position))
            }
            updateTimeControl()
        }
    }

    private func becameReady(_ id: ItemID) {
        playQueue.update(id) { $0.status = .readyToPlay }
        emit(.itemStatusChanged(id, .readyToPlay))
        refreshCapabilities(id)
        prepareGaplessNext()
        if var seek = pendingSeek {
            pendingSeek = nil
            if rate != 1 { seek.keepPosition = false }
            if playQueue.item(id)!.isSeekable { run(seek) }
        } else if rate != 1, playQueue.item(id)!.isSeekable {
            run(SeekRequest(position: .zero, mode: .exact, keepPosition: true))
        }
        applyTargetState()
    }

    private func refreshCapabilities(_ id: ItemID) {
        setDuration(id, engine.duration)
        let seekable = engine.isSeekable
        if playQueue.item(id)?.isSeekable != seekable {
            playQueue.update(id) { $0.isSeekable = seekable }
            emitCapabilities(id)
        }
        let ranges = engine.loadedRanges(duration: playQueue.item(id)?.duration)
        if playQueue.item(id)?.loadedRanges != ranges {
            playQueue.update(id) { $0.loadedRanges = ranges }
            emit(.bufferingChanged(id, percent: playQueue.item(id)!.bufferingPercent, loadedRanges: ranges))
        }
    }

    private func emitCapabilities(_ id: ItemID) {
        guard let item = playQueue.item(id) else { return }
        emit(.capabilitiesChanged(id, isLive: item.isLive, isSeekable: item.isSeekable))
    }

    private func setDuration(_ id: ItemID, _ duration: Duration?) {
        guard let item = playQueue.item(id), item.duration != duration, !(item.isLive && duration != nil && duration! <= .zero)
        else { return }
        playQueue.update(id) { $0.duration = duration }
        emit(.durationChanged(id, duration))
    }

    private func buffering(_ id: ItemID, _ percent: Int) {
        guard let item = playQueue.item(id) else { return }
        let percent = min(max(percent, 0), 100)
        // live streams never buffer-pause; nor below PAUSED (gstplay.c buffering_cb)
        if !item.isLive && intent != .stopped {
            if percent < 100 && !bufferingPaused {
                bufferingPaused = true
                if intent == .playing { engine.setPlaying(false) }
            } else if percent == 100 && bufferingPaused {
                bufferingPaused = false
                applyTargetState()
            }
        }
        let ranges = engine.loadedRanges(duration: item.duration)
        if percent != item.bufferingPercent || ranges != item.loadedRanges {
            playQueue.update(id) {
                $0.bufferingPercent = percent
                $0.loadedRanges = ranges
            }
            emit(.bufferingChanged(id, percent: percent, loadedRanges: ranges))
        }
        updateTimeControl()
    }
}
