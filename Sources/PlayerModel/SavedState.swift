/// What the player was doing when its state was last saved, to be restored when the service
/// starts again (issue 14): the queue with its ids and order, the current item, the position and
/// the settings. Saving and loading it is the store's business; restoring it is the machine's.
public struct SavedState: Sendable, Equatable {
    /// One queue entry as saved: its stable id and URI, and whether its file was gone when the
    /// state was loaded (then it comes back failed with `notFound`, not dropped).
    public struct Entry: Sendable, Equatable {
        public var id: ItemID
        public var uri: MediaURI
        public var fileIsMissing: Bool
        /// Its key in the shuffled play order, when it has one of its own (see `SavedSettings.shuffleSeed`).
        public var shuffleKey: UInt64?
        /// Its tags and length as last known (schema 7); nil when none were read.
        public var metadata: SavedMetadata?
        public init(id: ItemID, uri: MediaURI, fileIsMissing: Bool = false, shuffleKey: UInt64? = nil, metadata: SavedMetadata? = nil) {
            self.id = id
            self.uri = uri
            self.fileIsMissing = fileIsMissing
            self.shuffleKey = shuffleKey
            self.metadata = metadata
        }
    }

    /// The queue, in order.
    public var items: [Entry]
    public var settings: SavedSettings
    /// The id the next new item gets: ids are never reused across restarts.
    public var nextID: UInt64

    public init(items: [Entry], settings: SavedSettings, nextID: UInt64) {
        self.items = items
        self.settings = settings
        self.nextID = nextID
    }
}

/// The player's state apart from the queue's entries: one row, written whole at every change.
public struct SavedSettings: Sendable, Equatable {
    public var currentID: ItemID?
    public var position: Duration
    /// The current item's length when known, so that the restored item shows it at once.
    public var currentDuration: Duration?
    public var intent: TransportIntent
    public var volume: Double
    public var isMuted: Bool
    public var loopMode: LoopMode
    public var isShuffled: Bool
    public var rate: Double
    /// While shuffled, what the play order's keys are derived from for the items without a key of
    /// their own (those that were there when shuffle was turned on); nil when none was saved.
    public var shuffleSeed: UInt64?
    /// The video window's gravity and picture-in-picture (schema 3).
    public var video = VideoSettings()
    /// ReplayGain, the equalizer and the user's presets (schema 4).
    public var audio = AudioSettings()
    /// The chosen output's id, or `default` (schema 5).
    public var output = Outputs.defaultID
    /// Linear playback (schema 8; `LinearPlayback.swift`).
    public var linearPlayback = false
    /// Whether long items keep their places (schema 9; `KeptPlaces.swift`).
    public var resumePlaces = true
    /// Whether Next and Previous move by chapter (schema 10; `Chapters.swift`).
    public var nextByChapter = false
    /// The current item's place, written with its position (`KeptPlaces.swift`); nil: nothing to
    /// write (not a long item, stopped, the setting off). Never loaded: the places are apart.
    public var currentPlace: PlaceChange?

    public init(currentID: ItemID? = nil, position: Duration = .zero, currentDuration: Duration? = nil,
                intent: TransportIntent = .stopped, volume: Double = 1, isMuted: Bool = false,
                loopMode: LoopMode = .none, isShuffled: Bool = false, rate: Double = 1, shuffleSeed: UInt64? = nil) {
        self.shuffleSeed = shuffleSeed
        self.currentID = currentID
        self.position = position
        self.currentDuration = currentDuration
        self.intent = intent
        self.volume = volume
        self.isMuted = isMuted
        self.loopMode = loopMode
        self.isShuffled = isShuffled
        self.rate = rate
    }
}

/// How a restored state continues (`tonearmd --resume`).
public enum ResumeMode: String, Sendable, CaseIterable {
    /// Plays the restored item from the saved position.
    case play
    /// Loads the restored item paused at the saved position (stopped stays stopped).
    case pause
    /// Restores nothing: the service starts empty.
    case none
}
