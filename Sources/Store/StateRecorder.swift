import Dispatch
import PlayerModel

/// Turns the player's events into changes of the saved state: every queue change, transport
/// change, seek and track change; while playing, a checkpoint of the position every
/// `checkpointInterval` (a timer that runs only while playing, so an idle, paused or stopped
/// service sleeps). Lives on the player's queue; the writes are the store's, on its own queue.
public final class StateRecorder: @unchecked Sendable {
    // @unchecked: every field is confined to the player's queue (its events and the timer run there).
    private let player: Player
    private let store: StateStore
    private let checkpointInterval: DispatchTimeInterval
    private var subscription: Subscription?
    private var subscribing = false
    private var checkpoint: DispatchSourceTimer?
    /// Changes read from the player's events and not yet handed to the store: handed over once
    /// the answer to the call that caused them has left (`Player.whenAnswered`), because the store
    /// wakes a thread of its own for them; in order, and before anything `finish` writes.
    private var unsent: [Unsent] = []
    /// What `unsent` holds: a change, or the settings row, read from the player only when handed
    /// over: reading it (the whole state, the outputs, the audio settings) took a fifth of a
    /// PlayPause's time before its PropertiesChanged left (perf record, make bench).
    private enum Unsent {
        case change(StateChange)
        case settings
    }
    /// The video settings in the last settings row recorded: the window's other changes write nothing.
    private var recordedVideo = VideoSettings()
    /// The output choice last recorded: the devices' comings and goings are not written.
    private var recordedOutput = Outputs.defaultID
    /// The metadata last recorded, and whose: a playing item's tags that change only in what is
    /// not saved (its bitrate) write nothing.
    private var recordedMetadata: (id: ItemID, metadata: SavedMetadata)?

    /// Every 4.5 s, 0.5 s of leeway: a checkpoint is never more than 5 s old (issue 14).
    public init(player: Player, store: StateStore, checkpointInterval: DispatchTimeInterval = .milliseconds(4500)) {
        self.player = player
        self.store = store
        self.checkpointInterval = checkpointInterval
    }

    /// Starts recording. The player's queue (what was just restored, or nothing) is what the file
    /// holds already, unless `rewrite` says the file holds something else (`--resume=none`); the
    /// settings row is written at once either way.
    public func start(rewrite: Bool = false) {
        store.onNeedsFullState = { [weak self, player] in
            player.queue.async { [weak self] in self?.recordWhole(withPlaces: true) }
        }
        subscribing = true
        subscription = player.subscribe { [weak self] event in self?.handle(event) }
        subscribing = false
        if rewrite {
            recordWhole(withPlaces: true)
        } else {
            if let seed = player.shuffleSeed, seed != store.loaded?.settings.shuffleSeed {
                // a shuffled state saved without its order (by an older tonearmd) got a new one
                store.record(.reshuffled(seed: seed, keys: player.ownShuffleKeys))
            }
            store.record(.settings(settings()))
        }
    }

    /// Writes the state as it is now and waits for it, then stops recording: at quit, before the
    /// service stops the player (which is not what the user left it doing).
    public func finish() {
        dispatchPrecondition(condition: .onQueue(player.queue))
        guard subscription != nil else { return }
        handOver()
        if store.needsWholeState {
            // writes failed, or the file was replaced: what the player holds goes in whole
            store.record(.replaced(wholeQueue(), settings()))
            store.record(.places(wholePlaces()))
        } else {
            store.record(.settings(settings()))
        }
        subscription = nil
        stopCheckpoints()
        store.flush()
    }

    /// Keeps `change` for the store, which gets it once the call being answered has its answer.
    private func record(_ change: StateChange) { keep(.change(change)) }

    /// Keeps the settings row for the store, read as the player is once the answer has left:
    /// a row is the whole of the settings, so only the newest one of a batch is written.
    private func recordSettings() {
        if case .settings = unsent.last { return }
        keep(.settings)
    }

    private func keep(_ change: Unsent) {
        unsent.append(change)
        if unsent.count == 1 { player.whenAnswered { [weak self] in self?.handOver() } }
    }

    private func handOver() {
        let changes = unsent
        unsent = []
        // one row, as the player is now, after every change it may name (an item inserted)
        let last = changes.lastIndex { if case .settings = $0 { true } else { false } }
        for (index, change) in changes.enumerated() {
            switch change {
            case .change(let change): store.record(change)
            case .settings where index == last: store.record(.settings(settings()))
            case .settings: break
            }
        }
    }

    private func handle(_ event: PlayerEvent) {
        guard !subscribing else {
            if case .timeControlStatusChanged(let status) = event, status == .playing { startCheckpoints() }
            return
        }
        switch event {
        case .queueChanged(let change):
            switch change {
            case .inserted(let ids, let after):
                // while shuffled, each new item's place in the play order (its own random key)
                record(.inserted(ids.compactMap { id in
                    player.item(id).map { QueueEntry(id: id, uri: $0.uri, shuffleKey: player.shuffleKey(of: id)) }
                }, after: after))
            case .removed(let ids):
                record(.removed(ids))
            case .moved(let id, let after):
                record(.moved(id, after: after))
            case .replaced:
                recordWhole()
            }
        case .timeControlStatusChanged(let status):
            // a timer source's change wakes libdispatch's manager thread: after the answer too
            player.whenAnswered { [weak self] in
                guard let self, subscription != nil else { return }
                if status == .playing { startCheckpoints() } else { stopCheckpoints() }
            }
            recordSettings()
        case .shuffleChanged(let shuffled):
            // a new play order: its seed and the first item's key, not a row per item; turned
            // off, the keys stay in the file unused until the next order replaces them
            if shuffled, let seed = player.shuffleSeed { record(.reshuffled(seed: seed, keys: player.ownShuffleKeys)) }
            recordSettings()
        case .currentItemChanged, .intentChanged, .seeked, .volumeChanged, .loopModeChanged, .linearPlaybackChanged,
             .resumePlacesChanged, .nextByChapterChanged:
            recordSettings()
        case .placeKept(let change):
            // an item left or played to its end; the current one's goes with each settings row
            record(.place(change))
        case .videoChanged(let video) where video.settings != recordedVideo:
            recordSettings()
        case .audioChanged(let audio):
            record(.audio(audio))
        case .outputsChanged(let outputs) where outputs.chosen != recordedOutput:
            // devices coming and going are not saved: only the choice
            recordedOutput = outputs.chosen
            record(.output(outputs.chosen))
        case .rateChanged(_, let reason) where reason != .refused && reason != .initial:
            recordSettings()
        case .durationChanged(let id, _):
            if id == player.currentItem?.id { recordSettings() }
            recordMetadata(of: id)
        case .metadataChanged(let id, _):
            recordMetadata(of: id)
        default:
            break
        }
    }

    /// An item's tags or length became known or changed: its row keeps them for the next start.
    private func recordMetadata(of id: ItemID) {
        guard let item = player.item(id), let metadata = SavedMetadata(item) else { return }
        if let recorded = recordedMetadata, recorded.id == id, recorded.metadata == metadata { return }
        recordedMetadata = (id, metadata)
        record(.metadata(id, metadata))
    }

    /// The whole queue and settings; with the places too when the file lacks them (it was
    /// replaced, writes failed, or it holds another state).
    private func recordWhole(withPlaces: Bool = false) {
        record(.replaced(wholeQueue(), settings()))
        if withPlaces { record(.places(wholePlaces())) }
    }

    /// The places the player keeps, with the current item's as it is now (the player's own copy
    /// of it is taken only when the item is left).
    private func wholePlaces() -> KeptPlaces {
        var places = player.keptPlaces
        if let current = player.currentPlace {
            if let position = current.position { places.keep(current.uri, at: position) } else { places.forget(current.uri) }
        }
        return places
    }

    private func wholeQueue() -> [QueueEntry] {
        player.items.map { QueueEntry(id: $0.id, uri: $0.uri, shuffleKey: player.shuffleKey(of: $0.id), metadata: SavedMetadata($0)) }
    }

    private func settings() -> SavedSettings {
        let state = player.state
        var saved = SavedSettings(currentID: state.current?.id, position: player.position, currentDuration: state.current?.duration,
                                  intent: state.intent, volume: state.volume, isMuted: state.isMuted, loopMode: state.loopMode,
                                  isShuffled: state.isShuffled, rate: state.rate, shuffleSeed: player.shuffleSeed)
        saved.video = player.video.settings
        saved.audio = player.audio
        saved.output = player.outputs.chosen
        saved.linearPlayback = player.linearPlayback
        saved.resumePlaces = player.resumePlaces
        saved.nextByChapter = player.nextByChapter
        saved.currentPlace = player.currentPlace
        recordedVideo = saved.video
        recordedOutput = saved.output
        return saved
    }

    /// A repeating timer on the player's queue, only while playing.
    private func startCheckpoints() {
        guard checkpoint == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: player.queue)
        timer.schedule(deadline: .now() + checkpointInterval, repeating: checkpointInterval, leeway: .milliseconds(500))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            self.store.record(.settings(self.settings()))
        }
        timer.resume()
        checkpoint = timer
    }

    private func stopCheckpoints() {
        checkpoint?.cancel()
        checkpoint = nil
    }
}
