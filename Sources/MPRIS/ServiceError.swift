import DBus
import PlayerModel

/// Our own D-Bus errors, `io.github.tonearm.Error.*`, each with a message a person can act on.
struct ServiceError: Error, DBusErrorConvertible, CustomStringConvertible {
    var description: String { message }
    var name: String
    var message: String
    var dbusError: DBusError { DBusError(name: "io.github.tonearm.Error." + name, message: message) }

    init(_ name: String, _ message: String) {
        self.name = name
        self.message = message
    }

    init(_ error: ItemError) {
        self.init(Self.name(of: error.kind), error.message)
    }

    init(_ error: PlayerError) {
        switch error.code {
        case .noSuchItem: self.init("NoSuchTrack", error.message)
        case .noCurrentItem: self.init("NoCurrentTrack", error.message)
        case .rateOutOfRange: self.init("RateOutOfRange", error.message)
        case .rateNotSupported: self.init("RateNotSupported", error.message)
        case .retryBudgetExhausted: self.init("RetryBudgetExhausted", error.message)
        case .nothingToRetry: self.init("NothingToRetry", error.message)
        case .queueFull: self.init("QueueFull", error.message)
        case .linearPlayback: self.init("LinearPlayback", error.message)
        case .noSuchChapter: self.init("NoSuchChapter", error.message)
        }
    }

    /// The error name of an item error's kind (ItemError and the ItemFailed signal use it too).
    static func name(of kind: ItemError.Kind) -> String {
        switch kind {
        case .notFound: "FileNotFound"
        case .permission: "PermissionDenied"
        case .unsupportedFormat: "UnsupportedFormat"
        case .missingDecoder: "MissingDecoder"
        case .decode: "DecodeError"
        case .network: "NetworkError"
        case .output: "OutputError"
        case .invalidURI: "InvalidURI"
        case .unsupportedScheme: "UnsupportedScheme"
        case .other: "Failed"
        case .engineStalled: "EngineStalled"
        }
    }

    /// Every name this service answers with or reports (ItemError, ItemFailed) after
    /// `io.github.tonearm.Error.`, with what it means: tonearm-dbus(7) prints this table
    /// (dbus/surface.json). MPRISTests holds it to the names the code can make.
    static let documented: KeyValuePairs<String, String> = [
        "FileNotFound": "A file:// URI names a file or folder that does not exist.",
        "PermissionDenied": "The file or folder exists but this user may not read it.",
        "UnsupportedFormat": "The file is not a format GStreamer can demultiplex or play.",
        "MissingDecoder": "A GStreamer plugin the item needs is not installed (the message names it: install its gstreamer1.0-plugins-* package).",
        "DecodeError": "The item's data is damaged or cannot be decoded.",
        "NetworkError": "A stream could not be reached or broke off (DNS, refused connection, HTTP error, timeout).",
        "OutputError": "The sound output could not be opened or was lost (the sound server, the device).",
        "InvalidURI": "The URI cannot be parsed.",
        "UnsupportedScheme": "The URI's scheme is not one the service plays (SupportedUriSchemes lists those it does).",
        "Failed": "Anything else; the message says what (a preset or saved queue that could not be written, a failed item with no finer name).",
        "EngineStalled": "The engine's process stopped answering and was ended; the item failed, and the next call starts a new engine.",
        "NoSuchTrack": "The track id is not in the queue (any more).",
        "NoCurrentTrack": "The call needs a current track and there is none.",
        "RateOutOfRange": "The rate is outside MinimumRate to MaximumRate.",
        "RateNotSupported": "A rate other than 1 on an item that cannot seek (a live stream).",
        "RetryBudgetExhausted": "Retry was called more often than the retry budget allows for this item.",
        "NothingToRetry": "No item has failed (Retry itself does nothing then; the name is kept for clients).",
        "QueueFull": "The URIs would not fit in the queue (it holds a bounded number of tracks; the message says how many).",
        "LinearPlayback": "LinearPlayback is on: Seek, SetPosition, SeekTo, Next and a change of Rate are refused until it is turned off.",
        "NoSuchChapter": "GoToChapter asked for a chapter the current track does not have: it has no chapters, or none of that index (Chapters lists them, from 0).",
        "NoSuchPlaylist": "The playlist id is not one GetPlaylists lists.",
        "MalformedPlaylist": "The playlist file could not be read as M3U, M3U8, PLS or XSPF.",
        "Cancelled": "A call that queues URIs was overtaken, before its answer, by Clear, Stop or a newer OpenUri.",
        "NameTaken": "Neither org.mpris.MediaPlayer2.tonearm nor its .instance<pid> name could be owned (tonearmd's start, not a call).",
    ]

    /// Every name the code makes from an item's error kind or a player's error code.
    static var namesFromKinds: [String] {
        ItemError.Kind.allCases.map(name(of:))
            + PlayerError.Code.allCases.map { ServiceError(PlayerError($0, "")).name }
    }
}
