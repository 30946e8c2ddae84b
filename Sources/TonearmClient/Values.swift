import DBus

/// MPRIS `PlaybackStatus`.
public enum PlaybackStatus: String, Sendable, CaseIterable {
    case playing = "Playing", paused = "Paused", stopped = "Stopped"
}

/// What plays again when the end is reached: MPRIS `LoopStatus` under the names the CLI uses
/// (`queue` is MPRIS `Playlist`).
public enum LoopMode: String, Sendable, CaseIterable {
    case none, track, queue

    /// The MPRIS `LoopStatus` value.
    public var mprisValue: String {
        switch self {
        case .none: "None"
        case .track: "Track"
        case .queue: "Playlist"
        }
    }

    public init?(mprisValue: String) {
        guard let mode = LoopMode.allCases.first(where: { $0.mprisValue == mprisValue }) else { return nil }
        self = mode
    }
}

/// A queue entry's id: the object path MPRIS calls `mpris:trackid` (`/io/github/tonearm/Track/N`).
public struct TrackID: Hashable, Sendable, CustomStringConvertible {
    public let path: ObjectPath
    public init(_ path: ObjectPath) { self.path = path }
    public var description: String { path.rawValue }
}

/// The part of an MPRIS `Metadata` dictionary a client shows. Unknown or mistyped entries are
/// left out, never trusted.
public struct TrackMetadata: Sendable, Equatable {
    public var trackID: TrackID?
    public var url: String?
    public var title: String?
    public var artists: [String] = []
    public var album: String?
    public var albumArtists: [String] = []
    public var trackNumber: Int?
    /// `mpris:length`; nil when not known yet (or for a live stream).
    public var length: Duration?
    public var artURL: String?
    /// `xesam:asText`: the lyrics as plain text.
    public var lyrics: String?

    public init() {}

    /// From an `a{sv}` as the service sends it.
    public init(_ dictionary: [String: DBusValue]) {
        trackID = dictionary["mpris:trackid"]?.objectPathValue.map(TrackID.init)
        url = dictionary["xesam:url"]?.stringValue
        title = dictionary["xesam:title"]?.stringValue
        artists = dictionary["xesam:artist"]?.stringArrayValue ?? []
        album = dictionary["xesam:album"]?.stringValue
        albumArtists = dictionary["xesam:albumArtist"]?.stringArrayValue ?? []
        trackNumber = dictionary["xesam:trackNumber"]?.int32Value.map(Int.init)
        length = dictionary["mpris:length"]?.int64Value.map { .microseconds($0) }
        artURL = dictionary["mpris:artUrl"]?.stringValue
        lyrics = dictionary["xesam:asText"]?.stringValue
    }

    /// True for MPRIS's empty `Metadata` (no current track).
    public var isEmpty: Bool { trackID == nil && url == nil && title == nil }
}

/// The current item's failure, from the extension's `ItemError`.
public struct ItemFailure: Sendable, Equatable {
    /// A D-Bus style error name (`io.github.tonearm.Error.FileNotFound`).
    public var name: String
    public var message: String
}

/// Everything `tonearm status` shows, read in two `GetAll` calls (the MPRIS player and the
/// extension), so the values belong together.
public struct PlayerStatus: Sendable, Equatable {
    public var playbackStatus: PlaybackStatus
    /// Empty when there is no current track.
    public var metadata: TrackMetadata
    public var position: Duration
    /// Linear, 0 to 1.
    public var volume: Double
    public var muted: Bool
    public var loop: LoopMode
    public var shuffle: Bool
    public var rate: Double
    public var canSeek: Bool
    /// The extension's `ItemStatus`: `unknown`, `readyToPlay`, `failed`.
    public var itemStatus: String
    public var itemError: ItemFailure?
    /// The extension's `TimeControlStatus`: `paused`, `waitingToPlay`, `playing`.
    public var timeControlStatus: String
    /// The extension's `WaitingReason`; nil when not waiting.
    public var waitingReason: String?
    public var bufferingPercent: Int
    public var isLive: Bool
    /// The current item's video size (the extension's `VideoSize`) while `HasVideo`; nil without video.
    public var videoSize: VideoSize? = nil
    /// The extension's `StopAfterCurrent`.
    public var stopAfterCurrent = false
    /// The extension's `LinearPlayback` (false from a service without it).
    public var linearPlayback = false
    /// When the sleep timer pauses, in microseconds since the Unix epoch (`SleepTimerDeadline`); nil: none.
    public var sleepDeadline: Int64? = nil
    /// The extension's `SyncedLyrics`, sorted by time (empty from a service without it).
    public var syncedLyrics: [SyncedLine] = []

    /// The sleep timer's time left at `now` (microseconds since the Unix epoch); nil: none.
    public func sleepLeft(now: Int64) -> Duration? {
        sleepDeadline.map { .microseconds(max($0 - now, 0)) }
    }

    /// ReplayGain and the equalizer; nil from a service without them.
    public var audio: AudioStatus? = nil
    /// The chosen output (`default` or a device's id); nil from a service without outputs.
    public var output: String? = nil
    /// How many output devices the service lists (none: no sound server's device monitor).
    public var outputDevices = 0
    /// The crossfade; nil from a service without it.
    public var crossfade: CrossfadeStatus? = nil
    /// The chapter the position is in; nil when the track has none, or before the first.
    public var chapter: ChapterStatus? = nil
}

/// A video's size in pixels, pixel aspect applied.
public struct VideoSize: Sendable, Equatable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public var description: String { "\(width)x\(height)" }
}

/// One entry of the queue as `tonearm queue` lists it.
public struct QueueEntry: Sendable {
    /// 1-based, as the CLI numbers it.
    public var number: Int
    public var id: TrackID
    public var metadata: TrackMetadata
    public var isCurrent: Bool
}

extension Duration {
    /// Whole microseconds, saturating at `Int64.min`/`Int64.max` instead of overflowing (design
    /// trap 11: client numbers turned into other units overflow).
    public var microsecondsSaturating: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflowSum) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000)
        if overflowSum { return seconds < 0 ? .min : .max }
        return sum
    }

    /// `seconds` as a duration, with microsecond precision, saturating at what `Int64` microseconds
    /// hold. nil for NaN and infinities.
    public static func saturatingSeconds(_ seconds: Double) -> Duration? {
        guard seconds.isFinite else { return nil }
        let microseconds = (seconds * 1_000_000).rounded()
        // Double(Int64.max) rounds up to 2^63, which Int64 cannot hold: compare with >=
        if microseconds >= Double(Int64.max) { return .microseconds(Int64.max) }
        if microseconds <= Double(Int64.min) { return .microseconds(Int64.min) }
        return .microseconds(Int64(microseconds))
    }
}

/// One line of the extension's `SyncedLyrics`: when it starts and its text.
public struct SyncedLine: Sendable, Equatable {
    public var time: Duration
    public var text: String
    public init(time: Duration, text: String) {
        self.time = time
        self.text = text
    }

    /// From the `a(xs)` as the service sends it; a mistyped entry is left out.
    static func lines(_ value: DBusValue?) -> [SyncedLine] {
        (value?.arrayValue ?? []).compactMap { entry in
            guard let fields = entry.structureValue, fields.count == 2, let time = fields[0].int64Value,
                  let text = fields[1].stringValue else { return nil }
            return SyncedLine(time: .microseconds(time), text: text)
        }
    }
}
