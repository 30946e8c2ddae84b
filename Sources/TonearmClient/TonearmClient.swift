import Basics
import DBus
import Dispatch
import Logging
import Synchronization

/// A client of one running Tonearm service (`tonearmd`): typed calls and properties of MPRIS
/// (`org.mpris.MediaPlayer2.Player`, `.TrackList`) and of our extension `io.github.tonearm.Player1`.
///
/// Every call blocks until the service answers (libdbus's `dbus_connection_send_with_reply_and_block`
/// through `Connection.callBlocking`), on a serial queue of the client's own that owns the connection;
/// call it from any thread but that queue. Errors are `ClientError`s.
public final class TonearmClient: @unchecked Sendable {
    // @unchecked: `connection` is only touched on `callQueue` (every use goes through `onQueue`).

    /// The name every Tonearm service owns, or this name with `.instance<pid>` or `.<name>` appended.
    public static let baseName = "org.mpris.MediaPlayer2.tonearm"
    static let objectPath: ObjectPath = "/org/mpris/MediaPlayer2"
    static let rootInterface = "org.mpris.MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"
    static let trackListInterface = "org.mpris.MediaPlayer2.TrackList"
    static let extensionInterface = "io.github.tonearm.Player1"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    /// MPRIS's "no track" object path: as an `afterTrack`, the start of the queue.
    static let noTrack: ObjectPath = "/org/mpris/MediaPlayer2/TrackList/NoTrack"

    /// Which service to talk to.
    public enum Selection: Sendable, Equatable {
        /// `org.mpris.MediaPlayer2.tonearm` when it is owned, else the first owned
        /// `org.mpris.MediaPlayer2.tonearm.*` in name order.
        case any
        /// Exactly this bus name.
        case name(String)

        /// `org.mpris.MediaPlayer2.tonearm.<instance>`, as `tonearmd --instance` owns it.
        public static func instance(_ instance: String) -> Selection { .name("\(TonearmClient.baseName).\(instance)") }
    }

    /// The bus name of the service this client talks to.
    public let busName: String
    let callQueue: DispatchQueue
    let connection: Connection
    let timeout: Duration?

    /// Connects to the bus at `address` (nil: the session bus) and finds the service.
    ///
    /// When no service owns the name and `activate` is true, a name the bus can activate (a D-Bus
    /// activation file, `dbus/org.mpris.MediaPlayer2.tonearm.service`) is used: the first call starts
    /// the service. Throws `.noBus` when there is no bus, `.noService` when there is no service.
    /// `logger` receives the connection's diagnostics; `timeout` bounds every call (libdbus's 25 s when nil).
    public init(address: String? = nil, service: Selection = .any, activate: Bool = true,
                timeout: Duration? = nil, logger: Logger) throws {
        let queue = DispatchQueue(label: "tonearm.client")
        self.callQueue = queue
        guard let address = address ?? Connection.sessionBusAddress else {
            throw ClientError(.noBus, "no session bus: DBUS_SESSION_BUS_ADDRESS is not set")
        }
        do {
            connection = try queue.sync { try Connection(address: address, queue: queue, logger: logger) }
        } catch {
            throw ClientError(.noBus, "cannot connect to the session bus at \(address): \(DBusError(error).message)")
        }
        self.timeout = timeout
        let connection = self.connection
        do {
            busName = try Self.find(service, activate: activate, on: connection, queue: queue, timeout: timeout)
        } catch {
            queue.sync { connection.close() }
            throw error
        }
    }

    deinit {
        let connection = self.connection
        callQueue.async { connection.close() }
    }

    /// Closes the connection now; later calls fail with `.noService`.
    public func close() {
        onQueue { connection.close() }
    }

    private static func find(_ selection: Selection, activate: Bool, on connection: Connection, queue: DispatchQueue,
                             timeout: Duration?) throws -> String {
        func busCall(_ member: String, _ arguments: [DBusValue] = []) throws -> [DBusValue] {
            do {
                let message = try Message.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                     interface: "org.freedesktop.DBus", member: member, arguments: arguments)
                return try queue.sync { try connection.callBlocking(message, timeout: timeout).arguments() }
            } catch {
                throw ClientError(.noBus, "the session bus did not answer \(member): \(DBusError(error).message)")
            }
        }
        let wanted: String
        switch selection {
        case .any:
            let owned = try busCall("ListNames").first?.stringArrayValue ?? []
            if owned.contains(baseName) { return baseName }
            if let instance = owned.filter({ $0.hasPrefix(baseName + ".") }).sorted().first { return instance }
            wanted = baseName
        case .name(let name):
            // building a message checks the name as libdbus would (Message validates names): the bus
            // would answer a malformed one with InvalidArgs, which says less
            guard (try? Message.methodCall(destination: name, path: objectPath, interface: nil, member: "Ping")) != nil else {
                throw ClientError(.noService, "not a D-Bus name: \(name)")
            }
            if try busCall("NameHasOwner", [.string(name)]).first?.boolValue == true { return name }
            wanted = name
        }
        if activate, (try busCall("ListActivatableNames").first?.stringArrayValue ?? []).contains(wanted) {
            return wanted
        }
        throw ClientError(.noService, "no Tonearm service on the session bus (\(selection == .any ? baseName + "[.*]" : wanted) has no owner)")
    }

    // MARK: - Calls

    func onQueue<T>(_ body: () throws -> T) rethrows -> T {
        dispatchPrecondition(condition: .notOnQueue(callQueue))
        return try callQueue.sync(execute: body)
    }

    /// Calls `interface.member` on the service and returns the reply's arguments.
    @discardableResult
    func call(_ interface: String, _ member: String, _ arguments: [DBusValue] = []) throws -> [DBusValue] {
        do {
            let message = try Message.methodCall(destination: busName, path: Self.objectPath, interface: interface,
                                                 member: member, arguments: arguments)
            return try onQueue { try connection.callBlocking(message, timeout: timeout).arguments() }
        } catch {
            throw ClientError.from(error, calling: member)
        }
    }

    /// Calls as `call` does, and tells `walkProgress` (on the client's queue) of each
    /// `WalkProgress` the service sends this connection until the reply comes: the service sends it
    /// to the caller only, so no match rule is needed. libdbus's blocking call would hold the
    /// signals back until the reply, so this sends the call and waits for its completion.
    /// The call's time limit runs from the last sign of life, not from the call: a walk of a large
    /// tree answers once it is done, and goes on sending progress meanwhile (a 5,000-file walk
    /// under AddressSanitizer took longer than libdbus's 25 s and the command said "did not answer").
    func call(_ interface: String, _ member: String, _ arguments: [DBusValue],
              walkProgress: WalkProgressHandler?) throws -> [DBusValue] {
        guard let walkProgress else { return try call(interface, member, arguments) }
        let message: Message
        do {
            message = try Message.methodCall(destination: busName, path: Self.objectPath, interface: interface,
                                             member: member, arguments: arguments)
        } catch {
            throw ClientError.from(error, calling: member)
        }
        let reply = PendingReply()
        onQueue {
            let token = connection.onSignal(interface: Self.extensionInterface, member: "WalkProgress", path: Self.objectPath) { signal in
                guard let values = try? signal.arguments(), values.count == 2, let uri = values[0].stringValue,
                      let files = values[1].uint32Value else { return }
                reply.heardFrom()
                walkProgress(uri, Int(files))
            }
            connection.call(message, timeout: Connection.unbounded) { [connection] result in
                connection.removeHandler(token)
                reply.finish(result)
            }
        }
        let limit = timeout ?? Self.replyLimit
        do {
            guard let result = reply.wait(quietFor: limit) else {
                throw DBusError.noReply("no reply and no WalkProgress for \(limit)")
            }
            return try result.get()
        } catch {
            throw ClientError.from(error, calling: member)
        }
    }

    /// libdbus's own limit for a call with none given (DBUS_DEFAULT_TIMEOUT, dbus-connection.c).
    static let replyLimit = Duration.seconds(25)

    func property(_ interface: String, _ name: String) throws -> DBusValue {
        guard let value = try call(Self.propertiesInterface, "Get", [.string(interface), .string(name)]).first else {
            throw ClientError(.unexpectedReply, "Get(\(name)) returned nothing")
        }
        return value.unwrappingVariant
    }

    func properties(_ interface: String) throws -> [String: DBusValue] {
        guard let all = try call(Self.propertiesInterface, "GetAll", [.string(interface)]).first?.stringKeyedDictionary else {
            throw ClientError(.unexpectedReply, "GetAll(\(interface)) did not return a{sv}")
        }
        return all.mapValues(\.unwrappingVariant)
    }

    func setProperty(_ interface: String, _ name: String, _ value: DBusValue) throws {
        try call(Self.propertiesInterface, "Set", [.string(interface), .string(name), .variant(value)])
    }

    // MARK: - The player itself (org.mpris.MediaPlayer2)

    /// `Raise`: brings the player's window to the front, when it has one (`CanRaise`).
    public func raise() throws { try call(Self.rootInterface, "Raise") }

    // MARK: - Transport (org.mpris.MediaPlayer2.Player)

    public func play() throws { try call(Self.playerInterface, "Play") }
    public func pause() throws { try call(Self.playerInterface, "Pause") }
    /// `PlayPause`.
    public func toggle() throws { try call(Self.playerInterface, "PlayPause") }
    public func stop() throws { try call(Self.playerInterface, "Stop") }
    public func next() throws { try call(Self.playerInterface, "Next") }
    public func previous() throws { try call(Self.playerInterface, "Previous") }

    /// `Seek(offset)`: relative to the current position; before 0 the service clamps to 0, past the
    /// end it goes to the next track.
    /// The service ignores a seek with no current track (MPRIS), so that is checked here first:
    /// `.refused` with no current track and on a track that cannot seek. While linear playback is
    /// on, the service refuses it with `io.github.tonearm.Error.LinearPlayback` (`.service`).
    public func seek(by offset: Duration) throws {
        let player = try properties(Self.playerInterface)
        try checkSeekable(player)
        try call(Self.playerInterface, "Seek", [.int64(offset.microsecondsSaturating)])
    }

    /// The current track from `player` (`GetAll` of the MPRIS player), when there is one that can
    /// seek, or one that cannot only because linear playback is on: then the call is made, and the
    /// service's refusal says why (one message, the service's).
    @discardableResult
    private func checkSeekable(_ player: [String: DBusValue]) throws -> (TrackID, TrackMetadata) {
        let metadata = TrackMetadata(player["Metadata"]?.stringKeyedDictionary ?? [:])
        guard let track = metadata.trackID else { throw ClientError(.refused, "no current track to seek in") }
        // GetAll, not Get: a service from before LinearPlayback lacks it, and the track cannot seek
        guard try player["CanSeek"]?.boolValue == true || properties(Self.extensionInterface)["LinearPlayback"]?.boolValue == true else {
            throw ClientError(.refused, "the current track cannot seek (\(metadata.title ?? track.description))")
        }
        return (track, metadata)
    }

    /// `SetPosition(current track, position)`. The service ignores a position it cannot go to, so it
    /// is checked here first: `.refused` with no current track, on a track that cannot seek, and
    /// past the track's end; refused by the service while linear playback is on.
    public func setPosition(_ position: Duration) throws {
        let (track, metadata) = try checkSeekable(try properties(Self.playerInterface))
        guard position >= .zero else { throw ClientError(.refused, "a position cannot be negative") }
        if let length = metadata.length, position > length {
            throw ClientError(.refused, "position \(TimeText.format(position)) is past the end of the track (\(TimeText.format(length)))")
        }
        try call(Self.playerInterface, "SetPosition", [.objectPath(track.path), .int64(position.microsecondsSaturating)])
    }

    /// `OpenUri`: adds after the current track and plays it.
    public func openURI(_ uri: String) throws { try call(Self.playerInterface, "OpenUri", [.string(uri)]) }

    /// `Volume`, linear 0 to 1.
    public func volume() throws -> Double {
        guard let volume = try property(Self.playerInterface, "Volume").doubleValue else {
            throw ClientError(.unexpectedReply, "Volume is not a double")
        }
        return volume
    }

    /// Sets `Volume`, clamped to 0...1 (a NaN is refused, it would be refused by the service too).
    public func setVolume(_ volume: Double) throws {
        guard !volume.isNaN else { throw ClientError(.refused, "a volume must be a number") }
        try setProperty(Self.playerInterface, "Volume", .double(min(max(volume, 0), 1)))
    }

    /// Changes `Volume` by `delta` (0.1 is ten points), within 0...1; returns the new volume.
    @discardableResult
    public func adjustVolume(by delta: Double) throws -> Double {
        // to a millionth: 0.4 - 0.05 would otherwise be set and shown as 0.35000000000000003
        let volume = (min(max(try self.volume() + delta, 0), 1) * 1_000_000).rounded() / 1_000_000
        try setVolume(volume)
        return volume
    }

    /// The extension's `Muted`, apart from `Volume`.
    public func setMuted(_ muted: Bool) throws {
        try setProperty(Self.extensionInterface, "Muted", .bool(muted))
    }

    public func setLoop(_ loop: LoopMode) throws {
        try setProperty(Self.playerInterface, "LoopStatus", .string(loop.mprisValue))
    }

    public func setShuffle(_ shuffle: Bool) throws {
        try setProperty(Self.playerInterface, "Shuffle", .bool(shuffle))
    }

    /// `ControlsVisible`: whether the video window shows its bar when the pointer moves.
    public func controlsVisible() throws -> Bool { try extensionFlag("ControlsVisible") }

    /// A boolean property of the extension; a reply of another type is `unexpectedReply`.
    func extensionFlag(_ name: String) throws -> Bool {
        guard let on = try property(Self.extensionInterface, name).boolValue else {
            throw ClientError(.unexpectedReply, "\(name) is not a boolean")
        }
        return on
    }

    public func setControlsVisible(_ on: Bool) throws {
        try setProperty(Self.extensionInterface, "ControlsVisible", .bool(on))
    }

    /// The extension's `LinearPlayback`: while on, the service refuses seeks, Next and rate changes
    /// with `io.github.tonearm.Error.LinearPlayback`.
    public func linearPlayback() throws -> Bool { try extensionFlag("LinearPlayback") }

    public func setLinearPlayback(_ on: Bool) throws {
        try setProperty(Self.extensionInterface, "LinearPlayback", .bool(on))
    }

    /// The extension's `ResumePlaces`: whether long tracks start where they were left.
    public func resumePlaces() throws -> Bool { try extensionFlag("ResumePlaces") }

    public func setResumePlaces(_ on: Bool) throws {
        try setProperty(Self.extensionInterface, "ResumePlaces", .bool(on))
    }

    /// The extension's `ResumedFrom`: where the current track started because its place was kept;
    /// nil when it started from its start, or the service does not say (one from before it).
    public func resumedFrom() throws -> Duration? {
        // GetAll, not Get: a service from before ResumedFrom lacks it
        guard let micro = try properties(Self.extensionInterface)["ResumedFrom"]?.int64Value, micro > 0 else { return nil }
        return .microseconds(micro)
    }

    /// `Rate`; the service refuses (InvalidArgs) what is outside `MinimumRate...MaximumRate` (0 pauses).
    public func setRate(_ rate: Double) throws {
        try setProperty(Self.playerInterface, "Rate", .double(rate))
    }

    // MARK: - The queue (TrackList and the extension)

    /// `Enqueue(uris, playNow)`: appends, a directory as its playable files in natural order; returns
    /// the new tracks' ids. On failure nothing is added.
    /// `walkProgress` hears how far the walk of a folder among them got (see `WalkProgressHandler`).
    @discardableResult
    public func enqueue(_ uris: [String], playNow: Bool, walkProgress: WalkProgressHandler? = nil) throws -> [TrackID] {
        let reply = try call(Self.extensionInterface, "Enqueue", [.stringArray(uris), .bool(playNow)], walkProgress: walkProgress)
        return (reply.first?.arrayValue ?? []).compactMap(\.objectPathValue).map(TrackID.init)
    }

    /// The extension's `Insert(uris, afterTrack)` after the current track (at the start when there is
    /// none), so that they play next, directories as in `enqueue`; returns the new tracks' ids. On
    /// failure nothing is added.
    @discardableResult
    public func enqueueNext(_ uris: [String], walkProgress: WalkProgressHandler? = nil) throws -> [TrackID] {
        let current = TrackMetadata(try property(Self.playerInterface, "Metadata").stringKeyedDictionary ?? [:]).trackID
        let reply = try call(Self.extensionInterface, "Insert", [.stringArray(uris), .objectPath(current?.path ?? Self.noTrack)],
                             walkProgress: walkProgress)
        return (reply.first?.arrayValue ?? []).compactMap(\.objectPathValue).map(TrackID.init)
    }

    /// The extension's `Move`: entry `number` of the queue becomes entry `position` (both 1-based, as
    /// listed before the call); the others keep their order. Both are checked first.
    public func move(number: Int, to position: Int) throws {
        let ids = try trackIDs()
        let moving = try trackID(number: number, in: ids)
        _ = try trackID(number: position, in: ids)
        guard number != position else { return }
        let others = ids.filter { $0 != moving }
        let after = position == 1 ? nil : others[position - 2]
        try call(Self.extensionInterface, "Move", [.objectPath(moving.path), .objectPath(after?.path ?? Self.noTrack)])
    }

    /// The extension's `Retry()`: loads the failed track again.
    public func retry() throws { try call(Self.extensionInterface, "Retry") }

    /// The extension's `Clear()`: empties the queue and stops.
    public func clear() throws { try call(Self.extensionInterface, "Clear") }

    /// The queue in order, with each track's metadata (`Tracks`, then `GetTracksMetadata`).
    public func queue() throws -> [QueueEntry] {
        let ids = try trackIDs()
        let current = TrackMetadata(try property(Self.playerInterface, "Metadata").stringKeyedDictionary ?? [:]).trackID
        if ids.isEmpty { return [] }
        let reply = try call(Self.trackListInterface, "GetTracksMetadata", [.objectPathArray(ids.map(\.path))])
        var byID: [TrackID: TrackMetadata] = [:]
        for dictionary in reply.first?.arrayValue ?? [] {
            let metadata = TrackMetadata(dictionary.stringKeyedDictionary?.mapValues(\.unwrappingVariant) ?? [:])
            if let id = metadata.trackID { byID[id] = metadata }
        }
        return ids.enumerated().map { index, id in
            QueueEntry(number: index + 1, id: id, metadata: byID[id] ?? TrackMetadata(), isCurrent: id == current)
        }
    }

    private func trackIDs() throws -> [TrackID] {
        guard let paths = try property(Self.trackListInterface, "Tracks").arrayValue else {
            throw ClientError(.unexpectedReply, "Tracks is not an array")
        }
        return paths.compactMap(\.objectPathValue).map(TrackID.init)
    }

    private func trackID(number: Int, in ids: [TrackID]) throws -> TrackID {
        guard number >= 1, number <= ids.count else {
            throw ClientError(.refused, ids.isEmpty ? "no item \(number): the queue is empty"
                                                    : "no item \(number) in the queue (it has \(ids.count))")
        }
        return ids[number - 1]
    }

    /// `GoTo` the queue's entry `number` (1-based).
    public func jump(to number: Int) throws {
        let id = try trackID(number: number, in: try trackIDs())
        try call(Self.trackListInterface, "GoTo", [.objectPath(id.path)])
    }

    /// `RemoveTrack` of the entries `numbers` (1-based, as listed before the call). All numbers are
    /// checked before anything is removed.
    public func remove(numbers: [Int]) throws {
        let ids = try trackIDs()
        let doomed = try numbers.map { try trackID(number: $0, in: ids) }
        for id in Set(doomed).sorted(by: { $0.path < $1.path }) {
            try call(Self.trackListInterface, "RemoveTrack", [.objectPath(id.path)])
        }
    }

    // MARK: - Status

    /// A snapshot of the player: `GetAll` of the MPRIS player and of the extension.
    public func status() throws -> PlayerStatus {
        try PlayerStatus(player: try properties(Self.playerInterface), extension: try properties(Self.extensionInterface))
    }
}

extension PlayerStatus {
    /// From the values of `GetAll` (or of `PropertiesChanged`, merged) of the MPRIS player and of the
    /// extension. Throws `.unexpectedReply` when a property every service has is missing or mistyped.
    public init(player: [String: DBusValue], extension extensionProperties: [String: DBusValue]) throws {
        func required<T>(_ value: T?, _ name: String) throws -> T {
            guard let value else { throw ClientError(.unexpectedReply, "\(name) is missing or of the wrong type") }
            return value
        }
        let errorFields = extensionProperties["ItemError"]?.structureValue ?? []
        let itemError: ItemFailure? = errorFields.count == 2
            ? errorFields[0].stringValue.flatMap { name in
                name.isEmpty ? nil : ItemFailure(name: name, message: errorFields[1].stringValue ?? "")
            }
            : nil
        let waiting = extensionProperties["WaitingReason"]?.stringValue ?? ""
        self.init(
            playbackStatus: try required(player["PlaybackStatus"]?.stringValue.flatMap(PlaybackStatus.init(rawValue:)), "PlaybackStatus"),
            metadata: TrackMetadata(player["Metadata"]?.stringKeyedDictionary?.mapValues(\.unwrappingVariant) ?? [:]),
            position: .microseconds(try required(player["Position"]?.int64Value, "Position")),
            volume: try required(player["Volume"]?.doubleValue, "Volume"),
            muted: try required(extensionProperties["Muted"]?.boolValue, "Muted"),
            loop: try required(player["LoopStatus"]?.stringValue.flatMap(LoopMode.init(mprisValue:)), "LoopStatus"),
            shuffle: try required(player["Shuffle"]?.boolValue, "Shuffle"),
            rate: try required(player["Rate"]?.doubleValue, "Rate"),
            canSeek: player["CanSeek"]?.boolValue ?? false,
            itemStatus: extensionProperties["ItemStatus"]?.stringValue ?? "unknown",
            itemError: itemError,
            timeControlStatus: extensionProperties["TimeControlStatus"]?.stringValue ?? "paused",
            waitingReason: waiting.isEmpty ? nil : waiting,
            bufferingPercent: Int(extensionProperties["BufferingPercent"]?.int32Value ?? 100),
            isLive: extensionProperties["IsLive"]?.boolValue ?? false)
        if extensionProperties["HasVideo"]?.boolValue == true, let size = extensionProperties["VideoSize"]?.structureValue,
           size.count == 2, let width = size[0].int32Value, let height = size[1].int32Value {
            videoSize = VideoSize(width: Int(width), height: Int(height))
        }
        stopAfterCurrent = extensionProperties["StopAfterCurrent"]?.boolValue ?? false
        linearPlayback = extensionProperties["LinearPlayback"]?.boolValue ?? false
        if let deadline = extensionProperties["SleepTimerDeadline"]?.int64Value, deadline > 0 { sleepDeadline = deadline }
        audio = AudioStatus(extensionProperties)
        output = extensionProperties["Output"]?.stringValue
        outputDevices = extensionProperties["Outputs"]?.arrayValue?.count ?? 0
        crossfade = CrossfadeStatus(extensionProperties)
        chapter = ChapterStatus(extensionProperties)
        syncedLyrics = SyncedLine.lines(extensionProperties["SyncedLyrics"])
    }
}

/// Told, on the client's queue, how many playable files the walk of the folder `uri` (as the call
/// named it) has found so far: the extension's `WalkProgress`, once per 1,000 files.
public typealias WalkProgressHandler = @Sendable (_ uri: String, _ files: Int) -> Void

/// The outcome of a call sent without blocking the client's queue, waited for on the caller's thread.
private final class PendingReply: Sendable {
    private let done = DispatchSemaphore(value: 0)
    /// Written once before `done` is signalled, read after waiting for it.
    private let result = Mutex<Result<[DBusValue], DBusError>?>(nil)
    /// When the service last showed it is at work on the call (a progress signal).
    private let lastHeard = Mutex(ContinuousClock.now)

    func finish(_ outcome: Result<[DBusValue], DBusError>) {
        result.withLock { $0 = outcome }
        done.signal()
    }

    func heardFrom() { lastHeard.withLock { $0 = .now } }

    /// The outcome, or nil once `quiet` passed with neither it nor a sign of life.
    func wait(quietFor quiet: Duration) -> Result<[DBusValue], DBusError>? {
        while true {
            let deadline = lastHeard.withLock { $0 } + quiet
            let left = max(ContinuousClock.now.duration(to: deadline), .zero)
            if done.wait(timeout: .now() + .nanoseconds(Int(left.nanoseconds))) == .success {
                return result.withLock { $0! }
            }
            if lastHeard.withLock({ $0 }) + quiet <= .now { return nil }
        }
    }
}

extension TonearmClient {
    /// `tonearmd --open`: gives `items` to the tonearmd that owns `name` on the bus at `address`,
    /// if one does (without D-Bus activation: the activation file would start a second tonearmd,
    /// the caller). With no items it asks that tonearmd to Raise: a launcher or GNOME Shell's media
    /// card runs `tonearmd --open` with none (Shell activates the desktop file rather than calling
    /// Raise, js/ui/mpris.js). True once the call was answered; false when no tonearmd runs, and the
    /// caller becomes the service.
    public static func handOver(_ items: [String], to name: String, address: String, logger: Logger) throws -> Bool {
        let client: TonearmClient
        do {
            client = try TonearmClient(address: address, service: .name(name), activate: false, logger: logger)
        } catch let error as ClientError where error.code == .noService {
            return false
        }
        defer { client.close() }
        if items.isEmpty {
            try client.raise()
            logger.info("asked the running tonearmd to raise")
            return true
        }
        for item in items { try client.openURI(MediaLocation.uri(for: item)) }
        logger.info("handed \(items.count) item(s) to the running tonearmd")
        return true
    }
}
