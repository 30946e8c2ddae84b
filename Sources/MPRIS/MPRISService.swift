import Basics
import DBus
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import PlayerModel
import Playlists

/// The player on D-Bus: `org.mpris.MediaPlayer2`, `.Player`, `.TrackList`, `.Playlists` and our
/// extension `io.github.tonearm.Player1` on `/org/mpris/MediaPlayer2`. It only adapts: every
/// decision is the player's; this turns its events into properties and signals.
///
/// Lives on the player's queue, which is also the connection's.
public final class MPRISService: @unchecked Sendable {
    // @unchecked: confined to the connection's queue (the player's too): its handlers run there,
    // and `handle` checks it with dispatchPrecondition.
    public struct Options: Sendable {
        public var identity = "Tonearm"
        public var desktopEntry = "tonearm"
        public var supportedURISchemes = ["file", "http", "https"]
        public var supportedMIMETypes: [String] = []
        /// A suffix for the bus name (`org.mpris.MediaPlayer2.tonearm.NAME`), or nil.
        public var instanceName: String?
        /// The name `takeName` owns already on the connection; nil: `start()` takes it.
        public var ownedName: String?
        /// Checks a URI before it is queued: a missing file fails here, a directory becomes its
        /// playable files in order. Nil: every URI is queued as it is.
        public var resolve: URIResolver?
        /// True when the engine does not know yet what it plays (it reads GStreamer's registry off
        /// the service queue): reads of `SupportedUriSchemes` and `SupportedMimeTypes` and the calls
        /// that queue URIs are answered, in order, once `formatsKnown` brings the three above.
        public var formatsPending = false
        /// The playlist files behind org.mpris.MediaPlayer2.Playlists and SaveQueue; nil: none.
        public var playlists: PlaylistCatalog?
        /// The active playlist of the saved state: active again at start when the catalog still
        /// lists it and the restored queue holds items its activation gave.
        public var restoredActivePlaylist: ActivePlaylistRecord?
        /// Told (on the service queue) when the active playlist changes, to save it.
        public var onActivePlaylistChanged: (@Sendable (ActivePlaylistRecord?) -> Void)?
        public init() {}
    }

    private let player: Player
    private let connection: Connection
    private let server: ObjectServer
    private var options: Options
    private let logger: Logger
    /// The calls that queue URIs and are not answered yet, per sender (its unique name; "" for the
    /// command line), oldest first: a call takes effect, and is answered, only after those its
    /// sender made before it, whichever was resolved first.
    private var pendingCalls: [String: [QueueingCall]] = [:]
    /// Resolves asked for while `options.formatsPending`, oldest first.
    private var waitingForFormats: [() -> Void] = []
    private var object: ExportedObject!
    private var subscription: Subscription?
    /// How many tracks the list has, as the queue's changes said.
    private var trackCount = 0
    /// True while `subscribe` hands over the current values: they describe no change.
    private var subscribing = false
    /// A hash of the metadata last announced per track, so TrackMetadataChanged goes out only for
    /// a change: a word per track a client asked about, not a copy of its dictionary. (Two
    /// different dictionaries with the same hash, a chance of 2^-64, would hide one change.)
    private var announcedMetadata: [ItemID: Int] = [:]
    /// The playlists as the catalog last listed them, in the order it found them.
    private var playlists: [PlaylistEntry] = []
    /// The playlist whose activation filled the queue; nil once the queue is replaced or cleared,
    /// once none of the items its activation gave is left, or once its file is gone.
    private var activePlaylist: PlaylistEntry?
    /// The ids its activation gave, and how many of them are still queued.
    private var activeItems: ClosedRange<UInt64> = 0...0
    private var activeRemaining = 0
    /// Called when a client asks the service to quit.
    public var onQuit: (() -> Void)?
    public private(set) var busName: String?

    /// Builds the object; call on the connection's queue.
    public init(player: Player, connection: Connection, options: Options, logger: Logger) throws {
        self.player = player
        self.connection = connection
        self.options = options
        self.logger = logger
        server = ObjectServer(connection: connection, logger: logger)
    }

    /// Asks for `org.mpris.MediaPlayer2.tonearm` (with `instance`'s suffix) with DO_NOT_QUEUE,
    /// falling back to `.instance<pid>` when it is taken. Returns the name owned. Called before the
    /// service is built, on the connection's queue and in the same turn of it as `start()`, a
    /// client's call waits in the socket until the service can answer it: nothing is dispatched
    /// before that turn ends.
    public static func takeName(on connection: Connection, instance: String?) throws -> String {
        var name = MPRIS.busName + (instance.map { ".\($0)" } ?? "")
        if try connection.requestName(name) != .primaryOwner {
            name = MPRIS.busName + ".instance\(getpid())"
            guard try connection.requestName(name) == .primaryOwner else {
                throw ServiceError("NameTaken", "cannot own \(MPRIS.busName) nor \(name) on the session bus")
            }
        }
        return name
    }

    /// Registers the object, then asks for the name unless `options.ownedName` has it already.
    /// Returns the name owned.
    @discardableResult
    public func start() throws -> String {
        if let catalog = options.playlists {
            let queue = connection.queue
            // listed now, before the object is registered (which takes its properties' values as
            // the ones announced) and the name taken; later changes come from inotify on its queue
            playlists = catalog.start { [weak self] list, rewritten in
                queue.async { [weak self] in self?.playlistsChanged(list, rewritten: rewritten) }
            }
            if let restored = options.restoredActivePlaylist {
                restoreActivePlaylist(restored)
            }
        }
        object = try server.register([rootInterface(), playerInterface(), trackListInterface(), playlistsInterface(),
                                      tonearmInterface()], at: MPRIS.path)
        if options.formatsPending {
            // a client reading GetAll once at start caches what it gets: it waits for the real lists
            object.holdReads(of: MPRIS.root, properties: ["SupportedUriSchemes", "SupportedMimeTypes"])
        }
        subscribing = true
        subscription = player.subscribe { [weak self] event in self?.handle(event) }
        subscribing = false
        let name = try options.ownedName ?? Self.takeName(on: connection, instance: options.instanceName)
        busName = name
        logger.info("on the session bus", metadata: ["name": "\(name)", "address": "\(connection.address)"])
        return name
    }

    /// How each interface table differs from its XML in dbus/ (compiled in); empty when they agree.
    public func tableDifferences() throws -> [String] {
        let tables = [rootInterface(), playerInterface(), trackListInterface(), playlistsInterface(), tonearmInterface()]
        return try tables.flatMap { try $0.differences(fromXML: $0.introspectionXML ?? "") }
    }

    /// What the engine plays, once it knows (on the connection's queue): announces
    /// `SupportedUriSchemes` and `SupportedMimeTypes`, then resolves the URIs of the calls that
    /// waited for it, in the order they came.
    public func formatsKnown(uriSchemes: [String], mimeTypes: [String], resolve: URIResolver?) {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        options.supportedURISchemes = uriSchemes
        options.supportedMIMETypes = mimeTypes
        options.resolve = resolve
        options.formatsPending = false
        object?.propertiesMayHaveChanged(interface: MPRIS.root, properties: ["SupportedUriSchemes", "SupportedMimeTypes"])
        object?.releaseReads()
        let waiting = waitingForFormats
        waitingForFormats = []
        for resolve in waiting { resolve() }
    }

    /// Says Stopped, then gives the name back.
    public func shutDown() {
        player.stop()
        object?.flushPropertyChanges()
        if let busName { _ = try? connection.releaseName(busName) }
        busName = nil
        subscription = nil
    }

    /// Opens files, directories or URIs given on the command line, as `Enqueue(uris, true)`. A
    /// malformed URI throws at once; the rest is resolved (a folder walked) on the resolve queue,
    /// never on the queue that answers D-Bus, and queued back on it; `completion` then runs there
    /// with the error of the first that cannot be played (nothing is queued then), or nil.
    public func open(_ texts: [String], completion: @escaping @Sendable ((any Error)?) -> Void) throws {
        let uris = try Self.parse(texts)
        resolving(uris, from: "") { [player] resolved in
            do {
                try player.open(try resolved.get())
                completion(nil)
            } catch {
                completion(ServiceError(error))
            }
        }
    }

    // MARK: Player events to properties and signals

    private func handle(_ event: PlayerEvent) {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        guard let object else { return }
        switch event {
        case .seeked(let position):
            emit(MPRIS.player, "Seeked", [.int64(clientPosition(position))])
        case .playedToEnd(let id):
            emit(MPRIS.tonearm, "PlayedToEnd", [.objectPath(TrackIDs.path(id))])
        case .gapSkipped(let id, let at, let length):
            emit(MPRIS.tonearm, "GapSkipped", [.objectPath(TrackIDs.path(id)), .int64(clientPosition(at)), .int64(max(length, .zero).microseconds)])
        case .itemFailed(let id, let error):
            emit(MPRIS.tonearm, "ItemFailed", [.objectPath(TrackIDs.path(id)), .string(errorName(error)), .string(error.message)])
            object.propertiesMayHaveChanged(interface: MPRIS.tonearm)
        case .rateChanged(let rate, let reason):
            object.propertiesMayHaveChanged(interface: MPRIS.player)
            if reason != .initial { emit(MPRIS.tonearm, "RateChanged", [.double(rate), .string(reason.rawValue)]) }
        case .queueChanged(let change):
            if activePlaylist != nil, !subscribing {  // subscribing: the queue as it is, no change
                switch change {
                case .replaced:
                    // Clear, or another playlist (which is made active once its queue is in)
                    setActivePlaylist(nil)
                case .removed(let ids):
                    // the last of the playlist's items gone: the queue is no longer the playlist's
                    activeRemaining -= ids.reduce(0) { $0 + (activeItems.contains($1.rawValue) ? 1 : 0) }
                    if activeRemaining <= 0 { setActivePlaylist(nil) }
                default:
                    break
                }
            }
            trackListChanged(change)
            // what an edit can change of Player: whether there is a next or previous track. The
            // current track changing comes as its own event (currentItemChanged), which re-reads
            // all; re-reading every property here built the Metadata dictionary once per edit
            object.propertiesMayHaveChanged(interface: MPRIS.player, properties: ["CanGoNext", "CanGoPrevious"])
        case .metadataChanged(let id, _), .durationChanged(let id, _):
            // only when what MPRIS shows changed: decoders re-send tags (a VBR bitrate) while playing
            if let item = player.item(id) {
                let shown = metadata(item)
                if announcedMetadata[id] != shown.hashValue {
                    announcedMetadata[id] = shown.hashValue
                    emit(MPRIS.trackList, "TrackMetadataChanged", [.objectPath(TrackIDs.path(id)), shown])
                }
            }
            object.propertiesMayHaveChanged(interface: MPRIS.player)
        case .currentItemChanged:
            // what the current track shows (GoTo, Next, a track ending): re-reading every property
            // of both interfaces also read LoopStatus, Rate, Shuffle, Volume and Muted, which a new
            // current track leaves as they are (each has an event of its own that re-reads it)
            object.propertiesMayHaveChanged(interface: MPRIS.player, properties: Self.currentTrackProperties)
            object.propertiesMayHaveChanged(interface: MPRIS.tonearm, properties: Self.currentTrackExtensionProperties)
        case .intentChanged, .timeControlStatusChanged:
            // a media key's whole announcement: re-reading every property of both interfaces (the
            // Metadata dictionary among them) cost more than the rest of a PlayPause (make bench)
            object.propertiesMayHaveChanged(interface: MPRIS.player, properties: ["PlaybackStatus"])
            object.propertiesMayHaveChanged(interface: MPRIS.tonearm, properties: ["TimeControlStatus", "WaitingReason"])
        case .videoChanged:
            object.propertiesMayHaveChanged(interface: MPRIS.root, properties: Self.videoRootProperties)
            object.propertiesMayHaveChanged(interface: MPRIS.tonearm, properties: Self.videoExtensionProperties)
        default:
            object.propertiesMayHaveChanged(interface: MPRIS.player)
            object.propertiesMayHaveChanged(interface: MPRIS.tonearm)
        }
    }

    /// The Player properties whose value follows the current track: PlaybackStatus is Stopped
    /// without one, CanPlay and CanPause are true with one (GNOME Shell hides the player otherwise).
    static let currentTrackProperties = ["PlaybackStatus", "Metadata", "CanGoNext", "CanGoPrevious", "CanPlay", "CanPause", "CanSeek"]
    /// The extension's properties that follow the current track: all of them but Muted.
    static let currentTrackExtensionProperties = ["ItemStatus", "ItemError", "TimeControlStatus", "WaitingReason", "BufferingPercent",
                                                  "LoadedRanges", "IsLive"]

    private func emit(_ interface: String, _ name: String, _ arguments: [DBusValue]) {
        do {
            try object.emitSignal(interface: interface, name: name, arguments: arguments)
        } catch {
            logger.error("cannot emit \(interface).\(name): \(error)")
        }
    }

    /// TrackAdded / TrackRemoved for edits, TrackListReplaced when the list was emptied, filled
    /// from empty, or more than `replacingAbove` tracks came or went at once; Tracks is
    /// invalidated, never sent (the spec's EmitsChangedSignal for it). Each change costs what it
    /// changed: nothing here reads or compares the whole list, but a replacement names it.
    private func trackListChanged(_ change: QueueChange) {
        let emptyBefore = trackCount == 0
        switch change {
        case .replaced(let ids):
            trackCount = ids.count
            announcedMetadata.removeAll()
            guard !subscribing else { return }  // the list as it is when we start: nothing changed
            replaced(by: ids)
        case .inserted(let ids, let after):
            trackCount += ids.count
            if emptyBefore && ids.count > 1 {
                replaced(by: ids)
            } else if ids.count > Self.replacingAbove {
                replaced(by: player.ids)
            } else {
                var previous = after
                for id in ids {
                    guard let item = player.item(id) else { continue }
                    emit(MPRIS.trackList, "TrackAdded", [metadata(item), .objectPath(previous.map(TrackIDs.path) ?? MPRIS.noTrack)])
                    previous = id
                }
            }
        case .removed(let ids):
            trackCount -= ids.count
            for id in ids { announcedMetadata[id] = nil }
            if trackCount == 0 {
                replaced(by: [])
            } else if ids.count > Self.replacingAbove {
                replaced(by: player.ids)
            } else {
                for id in ids { emit(MPRIS.trackList, "TrackRemoved", [.objectPath(TrackIDs.path(id))]) }
            }
        case .moved(let id, let after):
            // MPRIS has no "moved": the track leaves its place and is added at the new one
            emit(MPRIS.trackList, "TrackRemoved", [.objectPath(TrackIDs.path(id))])
            if let item = player.item(id) {
                emit(MPRIS.trackList, "TrackAdded", [metadata(item), .objectPath(after.map(TrackIDs.path) ?? MPRIS.noTrack)])
            }
        }
        // Tracks is invalidated, never sent (its EmitsChangedSignal): said at once, without
        // reading and comparing the whole list, which costs O(n) on every change of a long queue
        do {
            try object.emitPropertiesChanged(interface: MPRIS.trackList, changed: [:], invalidated: ["Tracks"])
        } catch {
            logger.error("cannot invalidate TrackList.Tracks: \(error)")
        }
    }

    /// More tracks than this added or removed at once are announced as one TrackListReplaced: a
    /// folder of 10,000 files as 10,000 TrackAdded signals, each with its metadata, kept the
    /// queue that answers D-Bus busy for a while and flooded every client. MPRIS leaves the choice
    /// to the player ("when a change to the track list is invasive enough that this signal should
    /// be emitted instead of a series of TrackAdded and TrackRemoved signals").
    static let replacingAbove = 64

    private func replaced(by ids: [ItemID]) {
        emit(MPRIS.trackList, "TrackListReplaced", [TrackIDs.paths(ids),
                                                    .objectPath(player.currentItem.map { TrackIDs.path($0.id) } ?? MPRIS.noTrack)])
    }

    private func metadata(_ item: Item) -> DBusValue {
        MetadataMap.value(item)
    }

    private func errorName(_ error: ItemError) -> String { "io.github.tonearm.Error." + ServiceError.name(of: error.kind) }

    // MARK: Reading the player

    private var playbackStatus: String {
        let transport = player.transport
        guard transport.hasCurrentItem else { return "Stopped" }
        switch transport.intent {
        case .stopped: return "Stopped"
        case .paused: return "Paused"
        // Playing also while waiting to play (design brief: PlaybackStatus)
        case .playing: return "Playing"
        }
    }

    /// A position as clients see it, in microseconds: between 0 and the current track's length
    /// (MPRIS Position and Seeked), so that a seek a client asked past the end never shows.
    private func clientPosition(_ position: Duration) -> Int64 {
        var position = max(position, .zero)
        if let length = player.currentItem?.duration { position = min(position, length) }
        return position.microseconds
    }

    /// MPRIS CanSeek: a file may seek before it loaded (the seek runs after preroll); a stream only
    /// once the pipeline said it can, a live one only inside a window wide enough (the player's
    /// `isSeekable`).
    private var canSeek: Bool {
        guard let item = player.currentItem, item.error == nil else { return false }
        return item.isSeekable || item.status == .unknown && item.uri.isFile
    }

    private var currentTrack: ObjectPath? { player.currentItem.map { TrackIDs.path($0.id) } }

    /// Parses URIs (no file-system access): InvalidArgs for a malformed one, a tonearm error for a
    /// scheme we do not play.
    private static func parse(_ texts: [String]) throws -> [MediaURI] {
        try texts.map { text in
            do throws(ItemError) {
                return try MediaURI(text)
            } catch where error.kind == .invalidURI {
                throw DBusError.invalidArgs(error.message)
            } catch {
                throw ServiceError(error)
            }
        }
    }

    /// What `uris` become in the queue, resolved by `resolve` (nil: themselves), at most `room`
    /// of them; throws a ServiceError.
    private static func resolve(_ uris: [MediaURI], _ resolve: URIResolver?, room: Int, control: WalkControl) throws -> [MediaURI] {
        let maximum = "the queue has room for \(room) more items"
        // refused before any file is looked at
        guard uris.count <= room else { throw ServiceError(PlayerError(.queueFull, "\(maximum); \(uris.count) were asked for")) }
        guard let resolve else { return uris }
        // each distinct URI once: a hostile list of 10,000 copies of one folder walks it once, and
        // as every copy counts against the room, the walk stops past a 10,000th of it
        var copies: [MediaURI: Int] = [:]
        for uri in uris { copies[uri, default: 0] += 1 }
        var resolved: [MediaURI: [MediaURI]] = [:]
        var total = 0
        for uri in uris where resolved[uri] == nil {
            let count = copies[uri] ?? 1
            do throws(ResolveError) {
                let found = try resolve(uri, max(room - total, 0) / count, control)
                total += found.count * count
                resolved[uri] = found
            } catch {
                switch error {
                case .item(let error): throw ServiceError(error)
                case .cancelled(let reason): throw ServiceError("Cancelled", "\(uri.displayPath) was not queued: \(reason)")
                case .tooManyFiles(let root, let limit):
                    let named = count > 1 ? " (named \(count) times)" : ""
                    throw ServiceError(PlayerError(.queueFull, "\(maximum): \(root.displayPath)\(named) holds more than \(limit) playable files; nothing was queued"))
                }
            }
        }
        guard total <= room else { throw ServiceError(PlayerError(.queueFull, "\(maximum); \(total) were asked for")) }
        return uris.flatMap { resolved[$0] ?? [] }
    }

    /// Answers a call that queues URIs (parsed already): resolves them on the resolve queue
    /// (a missing file, a directory to walk), then runs `body` with them back on the service
    /// queue and sends its reply (or its error).
    private func queueing(_ uris: [MediaURI], _ context: MethodContext,
                          _ body: @escaping @Sendable ([MediaURI]) throws -> [DBusValue]) -> [DBusValue] {
        let reply = context.deferReply()
        resolving(uris, from: context.sender ?? "") { resolved in
            do { reply.succeed(try body(try resolved.get())) } catch { reply.fail(error) }
        }
        return []
    }

    /// A call that queues URIs, from when it came until it is answered.
    private final class QueueingCall: @unchecked Sendable {
        // @unchecked: confined to the service queue; the resolve queue only passes it back there
        // and reads `control`, which is Sendable.
        let uris: [MediaURI]
        let control: WalkControl
        let apply: (Result<[MediaURI], any Error>) -> Void
        /// What it is about, for its Cancelled error.
        let what: String
        /// True once it was handed to the resolve queue.
        var started = false
        /// Set once: resolved, failed, or cancelled; then it waits only for its sender's older calls.
        var outcome: Result<[MediaURI], any Error>?
        init(uris: [MediaURI], control: WalkControl, apply: @escaping (Result<[MediaURI], any Error>) -> Void) {
            self.uris = uris
            self.control = control
            self.what = uris.count == 1 ? uris[0].displayPath : "\(uris.count) URIs"
            self.apply = apply
        }
    }

    /// Resolves `uris` on the resolve queue (a stat per file, a walk per folder), then runs
    /// `body` with the outcome back on the service queue, after the calls `sender` made before:
    /// the file system is never touched here.
    private func resolving(_ uris: [MediaURI], from sender: String, _ body: @escaping (Result<[MediaURI], any Error>) -> Void) {
        let queue = connection.queue
        var progress: (@Sendable (MediaURI, Int) -> Void)?
        if !sender.isEmpty {
            progress = { [weak self] root, files in
                // at most one per WalkControl.progressStep files: a bounded rate, never a timer
                queue.async { [weak self] in self?.walkProgress(root, files, to: sender) }
            }
        }
        pendingCalls[sender, default: []].append(QueueingCall(uris: uris, control: WalkControl(progress: progress), apply: body))
        resolveNext(of: sender)
    }

    /// Hands `sender`'s oldest call to the resolve queue unless it is there already: one call per
    /// client at a time, as they take effect one after another anyway, so a client that sends
    /// walk after walk holds one walk's files at a time, and each finds the room its elders left.
    private func resolveNext(of sender: String) {
        guard let call = pendingCalls[sender]?.first, !call.started, call.outcome == nil else { return }
        guard !options.formatsPending else {
            waitingForFormats.append { [weak self] in self?.resolveNext(of: sender) }
            return
        }
        call.started = true
        let room = player.configuration.maximumQueueLength - player.state.count
        let (uris, control, resolve) = (call.uris, call.control, options.resolve)
        let queue = connection.queue
        let connection = connection
        // URIs are resolved (a stat per file, a walk per directory) never on the service queue,
        // which answers D-Bus, and on a serial queue of the call's own, so that a call naming one
        // file is not held behind another client's walk of a big tree (issue 26). Not a concurrent
        // queue: a job on libdispatch's global pool starts its worker monitor, which then wakes
        // the process every second for good (IdleTests).
        DispatchQueue(label: "tonearm.resolve").async { [weak self] in
            let resolved = Result { try Self.resolve(uris, resolve, room: room, control: control) }
            // sync, not async: on an idle service queue dispatch_sync runs the block on this
            // thread, where async woke another thread first (ReadWatcher does the same). No
            // deadlock: the service queue never waits on the resolve queue, it only queues to it.
            // As a dispatch pass: what the call caused that wakes a thread waits for its reply.
            queue.sync {
                connection.answering {
                    guard let self, call.outcome == nil else { return }  // cancelled: answered already
                    call.outcome = resolved
                    self.answerInOrder(sender)
                }
            }
        }
    }

    /// Applies and answers `sender`'s calls that have their outcome, oldest first, up to the first
    /// that is still being resolved, and starts the next.
    private func answerInOrder(_ sender: String) {
        while let call = pendingCalls[sender]?.first, let outcome = call.outcome {
            pendingCalls[sender]?.removeFirst()
            call.apply(outcome)
        }
        if pendingCalls[sender]?.isEmpty == true { pendingCalls[sender] = nil } else { resolveNext(of: sender) }
    }

    /// Clear, Stop or a newer OpenUri: every call that queues URIs and is not answered yet stops
    /// (a walk at its next directory) and gets `Cancelled`; nothing it found is queued.
    private func cancelQueueing(because reason: String) {
        guard !pendingCalls.isEmpty else { return }
        for sender in Array(pendingCalls.keys) {
            for call in pendingCalls[sender] ?? [] where call.outcome == nil {
                call.control.cancel(reason)
                call.outcome = .failure(ServiceError("Cancelled", "\(call.what) was not queued: \(reason)"))
            }
            answerInOrder(sender)
        }
    }

    /// WalkProgress to the client whose call walks `root`, unless that call was answered.
    private func walkProgress(_ root: MediaURI, _ files: Int, to sender: String) {
        guard let object, pendingCalls[sender]?.contains(where: { $0.outcome == nil }) == true else { return }
        do {
            try object.emitSignal(interface: MPRIS.tonearm, name: "WalkProgress", arguments: [.string(root.string), .uint32(UInt32(clamping: files))],
                                  destination: sender)
        } catch {
            logger.error("cannot send WalkProgress to \(sender): \(error)")
        }
    }

    /// " by :1.42": who made a call, for messages.
    private static func by(_ context: MethodContext) -> String { context.sender.map { " by \($0)" } ?? "" }

    /// An `afterTrack` argument: NoTrack is the start, any other path a track of the queue.
    private func placement(after value: DBusValue) throws -> Placement {
        guard let path = value.objectPathValue else { throw DBusError.invalidArgs("afterTrack is not an object path") }
        if path == MPRIS.noTrack { return .start }
        guard let id = TrackIDs.item(path), player.item(id) != nil else {
            throw ServiceError(PlayerError(.noSuchItem, "no track \(path.rawValue) in the queue"))
        }
        return .after(id)
    }

    private func item(_ value: DBusValue) -> ItemID? {
        value.objectPathValue.flatMap(TrackIDs.item)
    }

    // MARK: org.mpris.MediaPlayer2

    private func rootInterface() -> InterfaceDescription {
        InterfaceDescription(
            name: MPRIS.root,
            methods: [
                .init("Raise") { [logger, player] _, _ in
                    Self.raise(player, logger: logger)  // VideoProperties.swift
                    return []
                },
                .init("Quit") { [weak self] _, _ in
                    guard let self else { return [] }
                    // reply first, then go: the caller gets its answer before the name is released
                    self.connection.queue.async { self.onQuit?() }
                    return []
                },
            ],
            properties: [
                .init("CanQuit", "b") { .bool(true) },
                .init("HasTrackList", "b") { .bool(true) },
                .init("Identity", "s") { [options] in .string(options.identity) },
                .init("DesktopEntry", "s") { [options] in .string(options.desktopEntry) },
                // empty until the engine knows them, then announced (formatsKnown)
                .init("SupportedUriSchemes", "as") { [unowned self] in .stringArray(options.formatsPending ? [] : options.supportedURISchemes) },
                .init("SupportedMimeTypes", "as") { [unowned self] in .stringArray(options.formatsPending ? [] : options.supportedMIMETypes) },
            ] + Self.rootVideoProperties(player),
            introspectionXML: MPRIS.rootXML)
    }

    // MARK: org.mpris.MediaPlayer2.Player

    private func playerInterface() -> InterfaceDescription {
        InterfaceDescription(
            name: MPRIS.player,
            methods: [
                .init("Next") { [player] _, _ in player.next(); return [] },
                .init("Previous") { [player] _, _ in player.previous(); return [] },
                .init("Pause") { [player] _, _ in player.pause(); return [] },
                .init("PlayPause") { [player] _, _ in player.togglePlayPause(); return [] },
                .init("Stop") { [unowned self] _, context in
                    cancelQueueing(because: "Stop was called\(Self.by(context))")
                    player.stop()
                    return []
                },
                .init("Play") { [player] _, _ in player.play(); return [] },
                .init("Seek", in: "x") { [unowned self] arguments, _ in
                    // MPRIS Player.Seek: "If the CanSeek property is false, this has no effect."
                    guard canSeek, let offset = arguments[0].int64Value else { return [] }
                    // relative to the position; any Int64 a client sends saturates instead of trapping
                    player.seek(to: .saturating(microseconds: Self.saturatingSum(player.position.microseconds, offset)))
                    return []
                },
                .init("SetPosition", in: "ox") { [unowned self] arguments, _ in
                    // a trackid that is not current, a negative position or one past the end, or CanSeek
                    // false: ignored (MPRIS Player.SetPosition)
                    guard canSeek, let current = player.currentItem, let position = arguments[1].int64Value, position >= 0,
                          arguments[0].objectPathValue == TrackIDs.path(current.id) else { return [] }
                    if let duration = current.duration, Duration.microseconds(position) > duration { return [] }
                    player.seek(to: .saturating(microseconds: position))
                    return []
                },
                .init("OpenUri", in: "s") { [unowned self] arguments, context in
                    guard let text = arguments[0].stringValue else { return [] }
                    // a newer OpenUri is what the user wants now: walks still under way are not
                    let uris = try Self.parse([text])
                    cancelQueueing(because: "OpenUri was called\(Self.by(context))")
                    return queueing(uris, context) { [player] uris in
                        do { try player.open(uris) } catch { throw ServiceError(error) }
                        return []
                    }
                },
            ],
            properties: [
                .init("PlaybackStatus", "s") { [unowned self] in .string(playbackStatus) },
                .init("LoopStatus", "s", get: { [player] in
                    switch player.state.loopMode {
                    case .none: .string("None")
                    case .track: .string("Track")
                    case .queue: .string("Playlist")
                    }
                }, set: { [player] value, _ in
                    switch value.stringValue {
                    case "None": player.setLoopMode(.none)
                    case "Track": player.setLoopMode(.track)
                    case "Playlist": player.setLoopMode(.queue)
                    default: throw DBusError.invalidArgs("LoopStatus is None, Track or Playlist, not \(value.stringValue ?? "?")")
                    }
                }),
                .init("Rate", "d", get: { [player] in .double(player.state.rate) }, set: { [player] value, _ in
                    guard let rate = value.doubleValue, rate.isFinite else {
                        throw DBusError.invalidArgs("Rate must be a finite number from \(player.configuration.minimumRate) to \(player.configuration.maximumRate) (or 0 to pause), not \(value.doubleValue.map { "\($0)" } ?? "?")")
                    }
                    // Rate 0 pauses (MPRIS: "a value of 0.0 ... should act as though Pause was called")
                    if rate == 0 { player.pause(); return }
                    do throws(PlayerError) { try player.setRate(rate) } catch {
                        // out of range is a wrong argument; a live stream's refusal is ours
                        if error.code == .rateOutOfRange { throw DBusError.invalidArgs(error.message) }
                        throw ServiceError(error)
                    }
                }),
                .init("Shuffle", "b", get: { [player] in .bool(player.state.isShuffled) }, set: { [player] value, _ in
                    player.setShuffle(value.boolValue ?? false)
                }),
                .init("Metadata", "a{sv}") { [unowned self] in
                    player.currentItem.map { metadata($0) } ?? .vardict([:])
                },
                .init("Volume", "d", get: { [player] in .double(player.state.volume) }, set: { [player] value, _ in
                    guard let volume = value.doubleValue, volume.isFinite else {
                        throw DBusError.invalidArgs("Volume must be a finite number from 0 to 1, not \(value.doubleValue.map { "\($0)" } ?? "?")")
                    }
                    // MPRIS Player.Volume: "if a negative value is passed, the volume should be set to 0.0"; the
                    // spec allows more than 1.0 but asks clients not to: the model keeps 0...1 (README)
                    player.setVolume(max(volume, 0))
                }),
                .init("Position", "x", emitsChanged: .false) { [unowned self] in .int64(clientPosition(player.position)) },
                .init("MinimumRate", "d") { [player] in .double(player.configuration.minimumRate) },
                .init("MaximumRate", "d") { [player] in .double(player.configuration.maximumRate) },
                .init("CanGoNext", "b") { [player] in .bool(player.canGoNext) },
                .init("CanGoPrevious", "b") { [player] in .bool(player.canGoPrevious) },
                // GNOME Shell hides a player whose CanPlay is false while it has an item
                .init("CanPlay", "b") { [player] in .bool(player.currentItem != nil) },
                .init("CanPause", "b") { [player] in .bool(player.currentItem != nil) },
                .init("CanSeek", "b") { [unowned self] in .bool(canSeek) },
                .init("CanControl", "b", emitsChanged: .false) { .bool(true) },
            ],
            signals: [.init("Seeked", "x", argumentNames: ["Position"])],
            introspectionXML: MPRIS.playerXML)
    }

    // MARK: org.mpris.MediaPlayer2.TrackList

    private func trackListInterface() -> InterfaceDescription {
        InterfaceDescription(
            name: MPRIS.trackList,
            methods: [
                .init("GetTracksMetadata", in: "ao", out: "aa{sv}") { [unowned self] arguments, _ in
                    // the paths as decoded (an `ao` decodes as .objectPaths), not a value per path
                    guard case .objectPaths(let paths) = arguments[0] else { return [.array(element: .vardict, [])] }
                    // what is known now; tags not read yet are read in the background, and
                    // TrackMetadataChanged brings them
                    let items = player.wantMetadata(paths.compactMap(TrackIDs.item))
                    return [.array(element: .vardict, items.map { metadata($0) })]
                },
                .init("AddTrack", in: "sob") { [unowned self] arguments, context in
                    guard let text = arguments[0].stringValue, let afterPath = arguments[1].objectPathValue else { return [] }
                    let after: ItemID?
                    if afterPath == MPRIS.noTrack {
                        after = nil
                    } else if let id = TrackIDs.item(afterPath), player.item(id) != nil {
                        after = id
                    } else {
                        throw DBusError.invalidArgs("no track \(afterPath) in the track list")
                    }
                    let setAsCurrent = arguments[2].boolValue == true
                    return queueing(try Self.parse([text]), context) { [player] uris in
                        do {
                            // AfterTrack NoTrack inserts at the start (spec)
                            let ids = try player.enqueue(uris, at: after.map { .after($0) } ?? .start)
                            if setAsCurrent, let first = ids.first { try player.jump(to: first) }
                        } catch {
                            throw ServiceError(error)
                        }
                        return []
                    }
                },
                .init("RemoveTrack", in: "o") { [unowned self] arguments, _ in
                    // a track that is not in the list: no effect (spec)
                    if let id = item(arguments[0]), player.item(id) != nil { try? player.remove([id]) }
                    return []
                },
                .init("GoTo", in: "o") { [unowned self] arguments, _ in
                    if let id = item(arguments[0]), player.item(id) != nil { try? player.jump(to: id) }
                    return []
                },
            ],
            properties: [
                // encoded once per change of the list: each Get of 10,000 paths encoded them all again
                // (make bench); every change invalidates it (trackListChanged), which drops the bytes
                .init("Tracks", "ao", emitsChanged: .invalidates, keepsEncodedReply: true) { [player] in
                    TrackIDs.paths(player.ids)
                },
                .init("CanEditTracks", "b") { .bool(true) },
            ],
            signals: [
                .init("TrackListReplaced", "aoo", argumentNames: ["Tracks", "CurrentTrack"]),
                .init("TrackAdded", "a{sv}o", argumentNames: ["Metadata", "AfterTrack"]),
                .init("TrackRemoved", "o", argumentNames: ["TrackId"]),
                .init("TrackMetadataChanged", "oa{sv}", argumentNames: ["TrackId", "Metadata"]),
            ],
            introspectionXML: MPRIS.trackListXML)
    }

    // MARK: org.mpris.MediaPlayer2.Playlists

    /// The orderings GetPlaylists sorts by (`Orderings`): the spec's values, in its order.
    static let orderings = PlaylistOrdering.allCases.map(\.rawValue)

    private func playlistsChanged(_ list: [PlaylistEntry], rewritten: [PlaylistEntry]) {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        // an activation is marked here at once and in the catalog on its queue: a list it sent
        // before it marked it does not take it back
        let played = Dictionary(playlists.compactMap { entry in entry.lastPlayed.map { (entry.id, $0) } }) { max($0, $1) }
        playlists = list.map { entry in
            var entry = entry
            if let date = played[entry.id], entry.lastPlayed.map({ $0 < date }) ?? true { entry.lastPlayed = date }
            return entry
        }
        if let active = activePlaylist {
            if let entry = list.first(where: { $0.id == active.id }) { activePlaylist = entry } else { setActivePlaylist(nil) }
        }
        object?.propertiesMayHaveChanged(interface: MPRIS.playlists)
        // MPRIS PlaylistChanged: a playlist's data changed; here, its file was rewritten
        for entry in rewritten { emit(MPRIS.playlists, "PlaylistChanged", [playlistValue(entry)]) }
    }

    private static let playlistBase: ObjectPath = "/io/github/tonearm/Playlist"

    /// Makes `entry` the active playlist, its activation having given the items `ids` (nil: none
    /// is active), and says so to clients and to the saved state.
    private func setActivePlaylist(_ entry: PlaylistEntry?, items ids: [ItemID] = []) {
        let changed = entry != nil || activePlaylist != nil
        activePlaylist = entry
        if let entry, let first = ids.first, let last = ids.last {
            activeItems = first.rawValue...last.rawValue
            activeRemaining = ids.count
            options.onActivePlaylistChanged?(ActivePlaylistRecord(playlist: entry.id, items: activeItems))
        } else {
            activePlaylist = nil
            activeRemaining = 0
            options.onActivePlaylistChanged?(nil)
        }
        if changed { object?.propertiesMayHaveChanged(interface: MPRIS.playlists) }
    }

    /// At start: the saved active playlist is active again when the catalog still lists it and the
    /// restored queue holds items its activation gave (one walk of the queue, once).
    private func restoreActivePlaylist(_ restored: ActivePlaylistRecord) {
        let remaining = player.ids.reduce(0) { $0 + (restored.items.contains($1.rawValue) ? 1 : 0) }
        guard remaining > 0, let entry = playlists.first(where: { $0.id == restored.playlist }) else {
            options.onActivePlaylistChanged?(nil)
            return
        }
        activePlaylist = entry
        activeItems = restored.items
        activeRemaining = remaining
    }

    private func playlistValue(_ entry: PlaylistEntry) -> DBusValue {
        .structure([.objectPath(Self.playlistBase.appending(number: entry.id)), .string(entry.name), .string("")])
    }

    private func playlist(_ value: DBusValue) -> PlaylistEntry? {
        guard let path = value.objectPathValue?.rawValue, path.hasPrefix(Self.playlistBase.rawValue + "/"),
              let id = UInt64(path.dropFirst(Self.playlistBase.rawValue.count + 1)) else { return nil }
        return playlists.first { $0.id == id }
    }

    private func playlistsInterface() -> InterfaceDescription {
        InterfaceDescription(
            name: MPRIS.playlists,
            methods: [
                .init("ActivatePlaylist", in: "o") { [unowned self] arguments, context in
                    guard let entry = playlist(arguments[0]), let catalog = options.playlists else {
                        throw ServiceError("NoSuchPlaylist", "no playlist \(arguments[0].objectPathValue?.rawValue ?? "")")
                    }
                    // the file is read and parsed on the catalog's queue; the queue is replaced
                    // here, only once it parsed: a malformed file changes nothing
                    let reply = context.deferReply()
                    let queue = connection.queue
                    catalog.async {
                        let parsed = Result { () throws(PlaylistError) in try PlaylistFile.read(entry.path) }
                        queue.async { [weak self] in
                            guard let self else { return }
                            do {
                                let file = try parsed.get()
                                guard !file.entries.isEmpty else { throw PlaylistError("\(entry.path) has no entries") }
                                let ids = try player.replace(with: file.entries)
                                let now = Date()
                                if let index = playlists.firstIndex(where: { $0.id == entry.id }) { playlists[index].lastPlayed = now }
                                catalog.markPlayed(entry.id, at: now)
                                setActivePlaylist(playlists.first { $0.id == entry.id } ?? entry, items: ids)
                                reply.succeed([])
                            } catch let error as PlaylistError {
                                reply.fail(ServiceError("MalformedPlaylist", error.message))
                            } catch {
                                reply.fail(ServiceError(error))
                            }
                        }
                    }
                    return []
                },
                .init("GetPlaylists", in: "uusb", out: "a(oss)") { [unowned self] arguments, _ in
                    guard let index = arguments[0].uint32Value, let count = arguments[1].uint32Value,
                          let order = arguments[2].stringValue, let reverse = arguments[3].boolValue else { return [] }
                    var sorted: [PlaylistEntry]
                    switch PlaylistOrdering(order) {
                    case .alphabetical:
                        sorted = playlists.sorted {
                            let compared = NaturalOrder.compare($0.name, $1.name)
                            return compared == .orderedSame ? $0.id < $1.id : compared == .orderedAscending
                        }
                    case .modified:
                        sorted = playlists.sorted { $0.modified == $1.modified ? $0.id < $1.id : $0.modified < $1.modified }
                    case .created:
                        sorted = playlists.sorted { $0.created == $1.created ? $0.id < $1.id : $0.created < $1.created }
                    case .played:
                        sorted = playlists.sorted {
                            let (a, b) = ($0.lastPlayed ?? .distantPast, $1.lastPlayed ?? .distantPast)
                            return a == b ? $0.id < $1.id : a < b
                        }
                    case .user:
                        sorted = playlists
                    }
                    if reverse { sorted.reverse() }
                    let start = min(Int(index), sorted.count)
                    let page = sorted[start..<min(start + Int(count), sorted.count)]
                    return [.array(element: "(oss)", page.map(playlistValue))]
                },
            ],
            properties: [
                .init("PlaylistCount", "u") { [unowned self] in .uint32(UInt32(clamping: playlists.count)) },
                .init("Orderings", "as") { .stringArray(Self.orderings) },
                .init("ActivePlaylist", "(b(oss))") { [unowned self] in
                    // MPRIS Maybe_Playlist: false and any playlist when none is active
                    guard let active = activePlaylist else {
                        return .structure([.bool(false), .structure([.objectPath("/"), .string(""), .string("")])])
                    }
                    return .structure([.bool(true), playlistValue(active)])
                },
            ],
            signals: [.init("PlaylistChanged", "(oss)", argumentNames: ["Playlist"])],
            introspectionXML: MPRIS.playlistsXML)
    }

    // MARK: io.github.tonearm.Player1

    private func tonearmInterface() -> InterfaceDescription {
        InterfaceDescription(
            name: MPRIS.tonearm,
            methods: [
                .init("SeekTo", in: "xxx") { [unowned self] arguments, _ in
                    guard let position = arguments[0].int64Value, let before = arguments[1].int64Value,
                          let after = arguments[2].int64Value else { return [] }
                    guard position >= 0, before >= 0, after >= 0 else {
                        throw DBusError.invalidArgs("position and tolerances must not be negative (microseconds)")
                    }
                    guard player.currentItem != nil else { throw ServiceError(PlayerError(.noCurrentItem, "nothing to seek: no current track")) }
                    // as MPRIS Seek: no effect while CanSeek is false (a stream not loaded yet, a live one
                    // with no window to seek in)
                    guard canSeek else { return [] }
                    player.seek(to: .saturating(microseconds: position), toleranceBefore: .saturating(microseconds: before),
                                toleranceAfter: .saturating(microseconds: after))
                    return []
                },
                .init("Retry") { [player] _, _ in
                    do {
                        try player.retry()
                    } catch let error as PlayerError where error.code == .nothingToRetry {
                        // nothing has failed: nothing to do (dbus/io.github.tonearm.Player1.xml)
                    } catch {
                        throw ServiceError(error)
                    }
                    return []
                },
                .init("Clear") { [unowned self] _, context in
                    cancelQueueing(because: "Clear was called\(Self.by(context))")
                    player.clear()
                    return []
                },
                .init("SaveQueue", in: "s") { [unowned self] arguments, context in
                    guard let name = arguments[0].stringValue else { return [] }
                    // a file name in the saved-queues folder: no path, nothing hidden, no control characters
                    guard !name.isEmpty, name.utf8.count <= 200, !name.hasPrefix("."), !name.contains("/"),
                          !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                        throw DBusError.invalidArgs("a saved queue's name is 1 to 200 bytes, without '/', control characters or a leading '.': \(name.prefix(64))")
                    }
                    guard let catalog = options.playlists else { throw ServiceError("Failed", "this tonearmd keeps no playlists") }
                    let uris = player.items.map(\.uri)
                    let reply = context.deferReply()
                    let queue = connection.queue
                    catalog.async {
                        let saved = Result { () throws(PlaylistError) in try catalog.save(name: name, entries: uris) }
                        queue.async {
                            switch saved {
                            case .success: reply.succeed([])
                            case .failure(let error): reply.fail(ServiceError("Failed", error.message))
                            }
                        }
                    }
                    return []
                },
                .init("Enqueue", in: "asb", out: "ao") { [unowned self] arguments, context in
                    let playNow = arguments[1].boolValue == true
                    return queueing(try Self.parse(arguments[0].stringArrayValue ?? []), context) { [player] uris in
                        do {
                            let ids = playNow ? try player.open(uris) : try player.enqueue(uris)
                            return [TrackIDs.paths(ids)]
                        } catch {
                            throw ServiceError(error)
                        }
                    }
                },
                .init("Insert", in: "aso", out: "ao") { [unowned self] arguments, context in
                    let after = try placement(after: arguments[1])
                    return queueing(try Self.parse(arguments[0].stringArrayValue ?? []), context) { [player] uris in
                        do {
                            // the anchor is checked again here: the queue may have changed during the walk
                            return [.objectPathArray(try player.enqueue(uris, at: after).map(TrackIDs.path))]
                        } catch {
                            throw ServiceError(error)
                        }
                    }
                },
                .init("Move", in: "oo") { [unowned self] arguments, _ in
                    guard let id = item(arguments[0]) else {
                        throw ServiceError(PlayerError(.noSuchItem, "no track \(arguments[0].objectPathValue?.rawValue ?? "?") in the queue"))
                    }
                    let placement = try placement(after: arguments[1])
                    do {
                        if case .after(let anchor) = placement { try player.move(id, after: anchor) } else { try player.move(id, after: nil) }
                    } catch {
                        throw ServiceError(error)
                    }
                    return []
                },
            ],
            properties: [
                .init("ItemStatus", "s") { [player] in .string(player.currentItem?.status.name ?? "unknown") },
                .init("ItemError", "(ss)") { [unowned self] in
                    guard let error = player.currentItem?.error else { return .structure([.string(""), .string("")]) }
                    return .structure([.string(errorName(error)), .string(error.message)])
                },
                .init("TimeControlStatus", "s") { [player] in .string(player.transport.timeControlStatus.name) },
                .init("WaitingReason", "s") { [player] in .string(player.transport.timeControlStatus.waitingReason?.rawValue ?? "") },
                .init("BufferingPercent", "i") { [player] in .int32(Int32(player.currentItem?.bufferingPercent ?? 100)) },
                .init("LoadedRanges", "a(xx)") { [player] in
                    .array(element: "(xx)", (player.currentItem?.loadedRanges ?? []).map {
                        .structure([.int64($0.start.microseconds), .int64($0.end.microseconds)])
                    })
                },
                .init("IsLive", "b") { [player] in .bool(player.currentItem?.isLive ?? false) },
                .init("Muted", "b", get: { [player] in .bool(player.state.isMuted) }, set: { [player] value, _ in
                    player.setMuted(value.boolValue ?? false)
                }),
            ] + Self.extensionVideoProperties(player),
            signals: [
                .init("PlayedToEnd", "o", argumentNames: ["trackid"]),
                .init("ItemFailed", "oss", argumentNames: ["trackid", "errorName", "message"]),
                .init("RateChanged", "ds", argumentNames: ["rate", "reason"]),
                .init("GapSkipped", "oxx", argumentNames: ["trackid", "position", "length"]),
                .init("WalkProgress", "su", argumentNames: ["uri", "files"]),
            ],
            introspectionXML: MPRIS.tonearmXML)
    }
}

extension MPRISService {
    /// `a + b`, Int64.min or Int64.max where it overflows (client offsets are any Int64).
    static func saturatingSum(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b < 0 ? .min : .max) : sum
    }
}

extension Error {
    fileprivate var message: String { (self as? PlayerError)?.message ?? "\(self)" }
}

extension ServiceError {
    init(_ error: any Error) {
        if let error = error as? PlayerError { self.init(error) }
        else if let error = error as? ItemError { self.init(error) }
        else if let error = error as? ServiceError { self = error }
        else { self.init("Failed", "\(error)") }
    }
}
