/// A place kept per item (issue 40, item 4): a long item (an audiobook, a podcast, a film: longer
/// than `PlayerConfiguration.resumeThreshold`, 20 minutes by default) that is left before its end,
/// by Stop, by another item, by a restart or a crash, starts where it was left the next time it
/// loads from its start: opened again (OpenUri, `tonearm play`), gone to (GoTo, Next, Previous,
/// playing on to it), or Play after Stop. Played to its end (EOS, or a gapless switch past it), the
/// place is forgotten, as mpv's watch-later forgets a file played to its end.
///
/// The rules, decided once here (`decision`):
/// - only an item whose length is known and longer than the threshold has a place; a live stream,
///   an item of unknown length or a short one never gets one (nor loses one it has);
/// - a place less than `shortest` (10 s) in, or within `endMargin` (10 s) of the end, is not kept:
///   leaving the item there forgets its place;
/// - "the same item" is the same URI, whatever its queue entry: a file queued again finds its place;
/// - the machine holds at most `capacity` places, the least recently kept going first; the saved
///   state keeps the same number (schema 9).
///
/// The place is kept when the item is left (the position read at that input's instant), and the
/// saved state also writes the current item's place with each write of its position (pause, seek,
/// the checkpoints every 4.5 s while playing, quit), so a crash loses what the position loses.
/// `ResumePlaces` (a setting, on by default, saved) turns it all off: no place is used or kept,
/// and those kept stay for when it is turned on again.
public struct KeptPlaces: Sendable, Equatable {
    /// How many places are kept (issue 40: "at least the last 1,000 items").
    public static let capacity = 1000
    /// Items no longer than this keep no place (issue 40), unless `TONEARM_RESUME_THRESHOLD` says otherwise.
    public static let defaultThreshold: Duration = .seconds(20 * 60)
    /// A place nearer the start than this is not worth keeping.
    public static let shortest: Duration = .seconds(10)
    /// A place this near the end counts as finished.
    public static let endMargin: Duration = .seconds(10)

    /// What leaving an item at a position means for its place.
    public enum Decision: Sendable, Equatable {
        /// Keep this place.
        case keep(Duration)
        /// Forget the place it had: it was left at its start or its end.
        case forget
        /// The item keeps no place (live, short, length unknown): whatever it has stays.
        case none
    }

    /// The rule for an item of `duration` (nil: unknown) left at `position`.
    public static func decision(duration: Duration?, isLive: Bool, position: Duration, threshold: Duration) -> Decision {
        guard !isLive, let duration, duration > threshold else { return .none }
        if position < shortest || position >= duration - endMargin { return .forget }
        return .keep(position)
    }

    private struct Entry: Sendable, Equatable {
        var position: Duration
        /// When it was last kept, by a counter: the smallest goes first past `capacity`.
        var used: UInt64
    }
    private var entries: [MediaURI: Entry] = [:]
    private var counter: UInt64 = 0

    public init() {}

    /// The places in the order they were kept, oldest first.
    public init(_ places: [(MediaURI, Duration)]) {
        for (uri, position) in places { keep(uri, at: position) }
    }

    public subscript(uri: MediaURI) -> Duration? { entries[uri]?.position }
    public var count: Int { entries.count }
    /// Every place, oldest first: O(n log n), for a whole write of the saved state.
    public var all: [(uri: MediaURI, position: Duration)] {
        entries.sorted { $0.value.used < $1.value.used }.map { ($0.key, $0.value.position) }
    }

    public mutating func keep(_ uri: MediaURI, at position: Duration) {
        counter += 1
        entries[uri] = Entry(position: position, used: counter)
        if entries.count > Self.capacity, let oldest = entries.min(by: { $0.value.used < $1.value.used }) {
            entries[oldest.key] = nil  // O(n) once per new place past the capacity
        }
    }

    public mutating func forget(_ uri: MediaURI) { entries[uri] = nil }
}

/// A place kept (`position`) or forgotten (nil) for the item at `uri`: what the saved state writes.
public struct PlaceChange: Sendable, Equatable {
    public var uri: MediaURI
    public var position: Duration?
    public init(_ uri: MediaURI, _ position: Duration?) {
        self.uri = uri
        self.position = position
    }
}

extension PlayerMachine {
    /// `ResumePlaces`: whether long items keep and resume their places.
    public var resumePlaces: Bool { settings.resumePlaces }

    public mutating func setResumePlaces(_ on: Bool) {
        guard on != settings.resumePlaces else { return }
        settings.resumePlaces = on
        emit(.resumePlacesChanged(on))
    }

    /// The places kept, oldest first (for a whole write of the saved state).
    public var keptPlaces: KeptPlaces { places }

    /// Where the current item started because of its kept place: nil when it started from its start
    /// (or was restored where it was: that is the saved position, not a kept place).
    public var resumedFrom: Duration? { resumedAt }

    /// The places saved (oldest first), given once at start, whatever `--resume` says: they are
    /// not the queue.
    public mutating func restorePlaces(_ saved: [(MediaURI, Duration)]) {
        places = KeptPlaces(saved)
    }

    /// What the current item's place would be if it were left now, for the saved state's writes
    /// of its position: nil when there is nothing to say (no current item, stopped, the setting
    /// off, an item that keeps no place).
    public func currentPlace(at now: ContinuousClock.Instant) -> PlaceChange? {
        guard settings.resumePlaces, let item = playQueue.current, item.id != endedID, transport.intent != .stopped else { return nil }
        switch KeptPlaces.decision(duration: item.duration, isLive: item.isLive, position: position(at: now),
                                   threshold: configuration.resumeThreshold) {
        case .keep(let place): return PlaceChange(item.uri, place)
        case .forget: return PlaceChange(item.uri, nil)
        case .none: return nil
        }
    }

    /// The current item is being left (another item, Stop, its removal): its place is kept or
    /// forgotten by where it is now, and observers hear it (`placeKept`).
    mutating func leaveCurrent() {
        guard let now = inputInstant, let left = currentPlace(at: now) else { return }
        // told even when the machine's copy agrees: the saved state's may differ (the checkpoints
        // write the current item's place there only)
        if let place = left.position { places.keep(left.uri, at: place) } else { places.forget(left.uri) }
        emit(.placeKept(left))
    }

    /// `id` played to its end: it keeps no place, and is not left with one afterwards.
    mutating func playedToEnd(_ id: ItemID) {
        endedID = id
        guard let uri = playQueue.item(id)?.uri else { return }
        // forgotten even with the setting off: finishing is what it was kept for
        places.forget(uri)
        emit(.placeKept(PlaceChange(uri, nil)))
    }

    /// The place the item at `uri` starts from when it loads from its start, if it has one.
    func startingPlace(of uri: MediaURI) -> Duration? {
        settings.resumePlaces ? places[uri] : nil
    }
}
