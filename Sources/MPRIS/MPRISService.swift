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
/// Each interface's table, and which of its properties each player event changes, is in a file of
/// its own (`RootInterface.swift`, `PlayerInterface.swift`, `TrackListInterface.swift`,
/// `PlaylistsInterface.swift`, `TonearmInterface.swift`); this file keeps what they share, the
/// event handling, start and shutdown, and the calls that queue URIs from their table entry to
/// their answer (`queueURIs`). The active playlist's rules are `ActivePlaylistTracker`'s.
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
        /// The output devices are listed once the engine has started (it starts GStreamer only
        /// when something needs it): reads of `Outputs` wait for `formatsKnown` as the formats
        /// do, and the first such read runs `onOutputsWanted`.
        public var outputsPending = false
        public var onOutputsWanted: (@Sendable () -> Void)?
        /// The playlist files behind org.mpris.MediaPlayer2.Playlists and SaveQueue; nil: none.
        public var playlists: PlaylistCatalog?
        /// The active playlist of the saved state: active again at start when the catalog still
        /// lists it and the restored queue holds items its activation gave.
        public var restoredActivePlaylist: ActivePlaylistRecord?
        /// Told (on the service queue) when the active playlist changes, to save it.
        public var onActivePlaylistChanged: (@Sendable (ActivePlaylistRecord?) -> Void)?
        public init() {}
    }

    let player: Player
    let connection: Connection
    private let server: ObjectServer
    var options: Options
    let logger: Logger
    /// The calls that queue URIs and are not answered yet, per sender (its unique name; "" for the
    /// command line), oldest first: a call takes effect, and is answered, only after those its
    /// sender made before it, whichever was resolved first.
    private var pendingCalls: [String: [QueueingCall]] = [:]
    /// Resolves asked for while `options.formatsPending`, oldest first.
    private var waitingForFormats: [() -> Void] = []
    var object: ExportedObject!
    private var subscription: Subscription?
    /// How many tracks the list has, as the queue's changes said.
    var trackCount = 0
    /// True while `subscribe` hands over the current values: they describe no change.
    var subscribing = false
    /// A hash of the metadata last announced per track, so TrackMetadataChanged goes out only for
    /// a change: a word per track a client asked about, not a copy of its dictionary. (Two
    /// different dictionaries with the same hash, a chance of 2^-64, would hide one change.)
    var announcedMetadata: [ItemID: Int] = [:]
    /// The playlists as the catalog last listed them, in the order it found them.
    var playlists: [PlaylistEntry] = []
    /// The playlist whose activation filled the queue, and when it stops being so.
    var activePlaylist = ActivePlaylistTracker()
    /// The Player interface's properties but Metadata: what an event that re-reads them all
    /// marks while the current track's Metadata waits for its tags (see `markChanges`).
    private var playerPropertiesButMetadata: [String] = []
    /// The current track's Metadata was not marked because its tags were on their way: the first
    /// event after they came marks it.
    private var metadataHeld = false
    /// `SleepTimerDeadline`: set when the timer changes (`wallClockDeadline`).
    var sleepTimerDeadline: Int64 = 0
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
            if let restored = options.restoredActivePlaylist,
               !activePlaylist.restore(restored, queued: player.ids, list: playlists) {
                options.onActivePlaylistChanged?(nil)
            }
        }
        let tables = interfaces()
        // a misspelt name in a change rule is a programmer error (MPRISTests finds it first)
        let misspelt = Self.changeRules.flatMap { $0.unknownNames(in: tables) }
        precondition(misspelt.isEmpty, "change rules name properties their tables lack: \(misspelt)")
        playerPropertiesButMetadata = tables.first { $0.name == MPRIS.player }?.properties.map(\.name)
            .filter { $0 != "Metadata" } ?? []
        object = try server.register(tables, at: MPRIS.path)
        if options.formatsPending {
            // a client reading GetAll once at start caches what it gets: it waits for the real lists
            object.holdReads(of: MPRIS.root, properties: Set(Self.formatProperties))
        }
        if options.outputsPending {
            object.holdReads(of: MPRIS.tonearm, properties: ["Outputs"])
            object.whenReadHeld = options.onOutputsWanted
        }
        subscribing = true
        subscription = player.subscribe { [weak self] event in self?.handle(event) }
        subscribing = false
        let name = try options.ownedName ?? Self.takeName(on: connection, instance: options.instanceName)
        busName = name
        logger.info("on the session bus", metadata: ["name": "\(name)", "address": "\(connection.address)"])
        return name
    }

    /// The five interfaces' tables, each in its own file.
    func interfaces() -> [InterfaceDescription] {
        [rootInterface(), playerInterface(), trackListInterface(), playlistsInterface(), tonearmInterface()]
    }

    /// How each interface table differs from its XML in dbus/ (compiled in), an entry that is not
    /// typed, and a change rule's name that its table lacks; empty when they agree.
    public func tableDifferences() throws -> [String] {
        let tables = interfaces()
        return try tables.flatMap { try $0.differences(fromXML: $0.introspectionXML ?? "", requiringTypes: true) }
            + Self.changeRules.flatMap { $0.unknownNames(in: tables) }
    }

    /// The engine's process that watched the outputs ended (on the connection's queue): a read of
    /// `Outputs` starts another (`onOutputsWanted`) and waits for the list it finds, which a device
    /// plugged in meanwhile may have changed.
    public func outputsNeedEngine() {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        guard let object, !options.outputsPending, let wanted = options.onOutputsWanted else { return }
        options.outputsPending = true
        object.holdReads(of: MPRIS.tonearm, properties: ["Outputs"])
        object.whenReadHeld = wanted
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
        if let object {
            // the engine has started (formats from a cache come before the object exists): its
            // outputs are listed by now
            options.outputsPending = false
            object.whenReadHeld = nil
        }
        object?.propertiesMayHaveChanged(interface: MPRIS.root, properties: Self.formatProperties)
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
        try queueURIs(texts, .open, from: "") { applied in
            switch applied {
            case .success: completion(nil)
            case .failure(let error): completion(error)
            }
        }
    }

    // MARK: Player events to properties and signals

    private func handle(_ event: PlayerEvent) {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        guard let object else { return }
        let kind = PlayerEventKind(event)
        switch event {
        case .seeked(let position):
            emit(MPRIS.player, "Seeked", clientPosition(position))
        case .playedToEnd(let id):
            emit(MPRIS.tonearm, "PlayedToEnd", TrackIDs.path(id))
        case .gapSkipped(let id, let at, let length):
            emit(MPRIS.tonearm, "GapSkipped", TrackIDs.path(id), clientPosition(at), max(length, .zero).microseconds)
        case .itemFailed(let id, let error):
            emit(MPRIS.tonearm, "ItemFailed", TrackIDs.path(id), errorName(error), error.message)
        case .rateChanged(let rate, let reason):
            // the new Rate goes out before RateChanged: state before events (ExportedObject.emitSignal)
            markChanges(of: kind, on: object)
            if reason != .initial { emit(MPRIS.tonearm, "RateChanged", rate, reason.rawValue) }
            return
        case .queueChanged(let change):
            // subscribing: the queue as it is, no change
            if !subscribing, activePlaylist.queueChanged(change) { activePlaylistChanged() }
            trackListChanged(change)
        case .metadataChanged(let id, _), .durationChanged(let id, _):
            trackMetadataMayHaveChanged(id)
        case .sleepTimerChanged(let timer):
            sleepTimerDeadline = Self.wallClockDeadline(timer)
        case .openRequested(let texts):
            openDropped(texts)
        default:
            break
        }
        markChanges(of: kind, on: object)
    }

    /// Every interface's change rules (beside its table).
    static let changeRules = [rootChanges, playerChanges, tonearmChanges]

    /// Marks what the rules say an event of `kind` may change. While the current track's tags
    /// are on their way (`Player.currentItemAwaitsTags`: a local file's read or preroll, a few
    /// milliseconds), its Metadata is left unmarked, and marked by the first event after they
    /// came: a track made current is announced once with its tags, not first with its file name
    /// as its title (issue 37: each announcement is a track change to bluez's mpris-proxy, and
    /// KDE Plasma 6 showed the file name). `Get` reads it as it is meanwhile.
    private func markChanges(of kind: PlayerEventKind, on object: ExportedObject) {
        let holding = player.currentItemAwaitsTags
        for rules in Self.changeRules {
            switch rules.changes[kind] {
            case nil: break
            case .all where holding && rules.interface == MPRIS.player:
                metadataHeld = true
                object.propertiesMayHaveChanged(interface: rules.interface, properties: playerPropertiesButMetadata)
            case .only(let names) where holding && rules.interface == MPRIS.player && names.contains("Metadata"):
                metadataHeld = true
                object.propertiesMayHaveChanged(interface: rules.interface, properties: names.filter { $0 != "Metadata" })
            case .all: object.propertiesMayHaveChanged(interface: rules.interface)
            case .only(let names): object.propertiesMayHaveChanged(interface: rules.interface, properties: names)
            }
        }
        if metadataHeld && !holding {
            metadataHeld = false
            object.propertiesMayHaveChanged(interface: MPRIS.player, properties: ["Metadata"])
        }
    }

    func emit<each T: DBusRepresentable>(_ interface: String, _ name: String, _ values: repeat each T) {
        do {
            try object.emitSignal(interface: interface, name: name, repeat each values)
        } catch {
            logger.error("cannot emit \(interface).\(name): \(error)")
        }
    }

    func metadata(_ item: Item) -> TrackMetadata {
        TrackMetadata(MetadataMap.value(item))
    }

    func errorName(_ error: ItemError) -> String { "io.github.tonearm.Error." + ServiceError.name(of: error.kind) }

    // MARK: Reading the player

    /// A position as clients see it, in microseconds: between 0 and the current track's length
    /// (MPRIS Position and Seeked), so that a seek a client asked past the end never shows.
    func clientPosition(_ position: Duration) -> Int64 {
        var position = max(position, .zero)
        if let length = player.currentItem?.duration { position = min(position, length) }
        return position.microseconds
    }

    /// MPRIS CanSeek: the current item can seek and linear playback is off (the video window's
    /// keys keep the same rule).
    var canSeek: Bool { player.canSeek }

    /// Whether a call that would move the position goes to the player: while CanSeek is false it
    /// has no effect (MPRIS Player.Seek, SetPosition), except while linear playback is what makes
    /// it false, when the player refuses it and the client hears why (`LinearPlayback`).
    var seekGoesToThePlayer: Bool { canSeek || player.linearPlayback }


    /// Parses URIs (no file-system access): InvalidArgs for a malformed one, a tonearm error for a
    /// scheme we do not play.
    static func parse(_ texts: [String]) throws -> [MediaURI] {
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

    /// What a call that queues URIs does with them once they are resolved.
    enum QueueingRequest: Sendable {
        /// OpenUri, the command line, a drop on the video window: after the current item, and the
        /// first of them plays (`Player.open`).
        case open
        /// Enqueue: at the end, or opened as `open` when `playNow`.
        case enqueue(playNow: Bool)
        /// Insert and AddTrack: at `placement` (its anchor checked again: the queue may have
        /// changed during the walk); AddTrack's SetAsCurrent makes the first of them current.
        case insert(Placement, setAsCurrent: Bool)
    }

    /// A call that queues URIs, answered with `reply` once they are in the queue (or with why
    /// not). This file owns the whole of it (issue 37: OpenUri went back and forth between the
    /// interface's table and here): the URIs are parsed here (InvalidArgs for a malformed one),
    /// the walks of older calls stopped when `cancellingOthers` says why, the URIs resolved on the
    /// resolve queue (a missing file, a directory to walk) after `sender`'s earlier calls, and
    /// applied to the player back on the service queue.
    func queueURIs(_ texts: [String], _ request: QueueingRequest, reply: Reply<Void>, cancellingOthers reason: String? = nil) throws {
        try queueURIs(texts, request, from: reply.sender ?? "", cancellingOthers: reason) { applied in
            switch applied {
            case .success: reply.succeed()
            case .failure(let error): reply.fail(error)
            }
        }
    }

    /// As `queueURIs(_:_:reply:cancellingOthers:)`, answered with the new tracks' ids.
    func queueURIs(_ texts: [String], _ request: QueueingRequest, reply: Reply<ObjectPathList>) throws {
        try queueURIs(texts, request, from: reply.sender ?? "") { applied in
            switch applied {
            case .success(let ids): reply.succeed(TrackIDs.paths(ids))
            case .failure(let error): reply.fail(error)
            }
        }
    }

    private func queueURIs(_ texts: [String], _ request: QueueingRequest, from sender: String, cancellingOthers reason: String? = nil,
                           _ answer: @escaping (Result<[ItemID], any Error>) -> Void) throws {
        let uris = try Self.parse(texts)
        // a newer OpenUri is what the user wants now: walks still under way are not
        if let reason { cancelQueueing(because: reason) }
        resolving(uris, from: sender) { [player] resolved in
            answer(Result { try Self.apply(request, try resolved.get(), to: player) })
        }
    }

    /// Puts resolved URIs in the queue as `request` says; the new items' ids, or a ServiceError.
    private static func apply(_ request: QueueingRequest, _ uris: [MediaURI], to player: Player) throws -> [ItemID] {
        do {
            switch request {
            case .open:
                return try player.open(uris)
            case .enqueue(let playNow):
                return playNow ? try player.open(uris) : try player.enqueue(uris)
            case .insert(let placement, let setAsCurrent):
                let ids = try player.enqueue(uris, at: placement)
                if setAsCurrent, let first = ids.first { try player.jump(to: first) }
                return ids
            }
        } catch {
            throw ServiceError(error)
        }
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
                connection.pass {
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
    func cancelQueueing(because reason: String) {
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
            try object.emitSignal(interface: MPRIS.tonearm, name: "WalkProgress", root.string, UInt32(clamping: files), destination: sender)
        } catch {
            logger.error("cannot send WalkProgress to \(sender): \(error)")
        }
    }

    /// " by :1.42": who made a call, for messages.
    static func by(_ sender: String?) -> String { sender.map { " by \($0)" } ?? "" }

    /// An `afterTrack` argument: NoTrack is the start, any other path a track of the queue.
    func placement(after path: ObjectPath) throws -> Placement {
        if path == MPRIS.noTrack { return .start }
        guard let id = TrackIDs.item(path), player.item(id) != nil else {
            throw ServiceError(PlayerError(.noSuchItem, "no track \(path.rawValue) in the queue"))
        }
        return .after(id)
    }
}

extension Error {
    var message: String { (self as? PlayerError)?.message ?? "\(self)" }
}

extension ServiceError {
    init(_ error: any Error) {
        if let error = error as? PlayerError { self.init(error) }
        else if let error = error as? ItemError { self.init(error) }
        else if let error = error as? ServiceError { self = error }
        else { self.init("Failed", "\(error)") }
    }
}
