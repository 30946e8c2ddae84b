import Basics
import DBus
import Dispatch

/// What a watch reports, in order, on the client's queue.
public enum WatchUpdate: Sendable {
    /// The player when the watch began (subscribed first, then read: no change is missed in between).
    case initial(PlayerStatus)
    /// Something changed; `status` is the player right after it, its position read when the event came.
    case event(PlayerEvent)
    /// The position read while playing, at most once per `positionInterval`; never while paused or stopped.
    case position(PlayerStatus)
    /// The watch is over: the service left the bus, or the bus went away. Nothing follows.
    case ended(ClientError)
}

/// A subscription to one service's changes: `PropertiesChanged` of the MPRIS player and of the
/// extension, `Seeked`, and the service's name leaving the bus. Made by `TonearmClient.watch`.
///
/// Nothing polls: it wakes for the service's signals, and, only while playing and only when a
/// position interval was asked for, once per interval to read `Position`.
public final class PlayerWatch: @unchecked Sendable {
    // @unchecked: every field below is only touched on `queue` (the client's call queue).
    private let connection: Connection
    private let queue: DispatchQueue
    private let busName: String
    private let timeout: Duration?
    private let positionInterval: Duration?
    private let handler: @Sendable (WatchUpdate) -> Void

    private var owner = ""
    private var player: [String: DBusValue] = [:]
    private var extensionProperties: [String: DBusValue] = [:]
    private var current: PlayerStatus?
    private var token: Connection.HandlerToken?
    private var rules: [String] = []
    private var timer: DispatchSourceTimer?
    private var tickInFlight = false
    private var ended = false

    /// Events waiting for their position to be read, delivered in the order they happened.
    private final class Pending {
        var kinds: [PlayerEventKind]
        var status: PlayerStatus
        var ready: Bool
        init(_ kinds: [PlayerEventKind], _ status: PlayerStatus, ready: Bool) {
            self.kinds = kinds
            self.status = status
            self.ready = ready
        }
    }
    private var outbox: [Pending] = []

    init(client: TonearmClient, positionInterval: Duration?, handler: @escaping @Sendable (WatchUpdate) -> Void) {
        connection = client.connection
        queue = client.callQueue
        busName = client.busName
        timeout = client.timeout
        self.positionInterval = positionInterval
        self.handler = handler
    }

    private var objectPath: ObjectPath { TonearmClient.objectPath }

    /// On the queue: subscribe, then read, then report the initial state. Signals that arrive during
    /// the reads wait in libdbus's queue and are dispatched after this returns, against the state read.
    func start() throws {
        dispatchPrecondition(condition: .onQueue(queue))
        token = connection.addHandler { [weak self] message in
            self?.handle(message)
            return false
        }
        let path = objectPath.rawValue
        rules = [
            "type='signal',sender='\(busName)',path='\(path)',interface='\(TonearmClient.propertiesInterface)',member='PropertiesChanged'",
            "type='signal',sender='\(busName)',path='\(path)',interface='\(TonearmClient.playerInterface)',member='Seeked'",
            "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(busName)'",
        ]
        do {
            for rule in rules { try connection.addMatch(rule) }
            // GetAll first: it starts an activatable service, which then has an owner to ask for
            player = try getAll(TonearmClient.playerInterface)
            extensionProperties = try getAll(TonearmClient.extensionInterface)
            owner = try busCall("GetNameOwner", [.string(busName)]).first?.stringValue ?? ""
            let status = try PlayerStatus(player: player, extension: extensionProperties)
            current = status
            connection.onDisconnect = { [weak self] error in
                self?.end(ClientError(.noBus, "the session bus went away: \(error.message)"))
            }
            handler(.initial(status))
            updateTimer()
        } catch {
            stop()
            throw ClientError.from(error, calling: "GetAll")
        }
    }

    private func getAll(_ interface: String) throws -> [String: DBusValue] {
        let message = try Message.methodCall(destination: busName, path: objectPath, interface: TonearmClient.propertiesInterface,
                                             member: "GetAll", arguments: [.string(interface)])
        guard let all = try connection.callBlocking(message, timeout: timeout).arguments().first?.stringKeyedDictionary else {
            throw ClientError(.unexpectedReply, "GetAll(\(interface)) did not return a{sv}")
        }
        return all.mapValues(\.unwrappingVariant)
    }

    private func busCall(_ member: String, _ arguments: [DBusValue]) throws -> [DBusValue] {
        let message = try Message.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                             interface: "org.freedesktop.DBus", member: member, arguments: arguments)
        return try connection.callBlocking(message, timeout: timeout).arguments()
    }

    /// Ends the watch: no update follows, not even `.ended`. Safe to call more than once, from any
    /// thread but the queue.
    public func cancel() {
        dispatchPrecondition(condition: .notOnQueue(queue))
        queue.sync {
            ended = true
            stop()
        }
    }

    private func stop() {
        timer?.cancel()
        timer = nil
        if let token { connection.removeHandler(token) }
        token = nil
        connection.onDisconnect = nil
        if connection.isConnected { for rule in rules { try? connection.removeMatch(rule) } }
        rules = []
    }

    private func end(_ error: ClientError) {
        guard !ended else { return }
        ended = true
        stop()
        handler(.ended(error))
    }

    // MARK: Signals

    private func handle(_ message: Message) {
        guard !ended, message.kind == .signal, let current else { return }
        if message.isSignal(interface: "org.freedesktop.DBus", member: "NameOwnerChanged") {
            let arguments = (try? message.arguments()) ?? []
            guard arguments.count == 3, arguments[0].stringValue == busName else { return }
            end(ClientError(.noService, "the Tonearm service (\(busName)) left the bus"))
            return
        }
        guard message.sender == owner, message.path == objectPath else { return }
        if message.isSignal(interface: TonearmClient.playerInterface, member: "Seeked") {
            guard let microseconds = (try? message.arguments())?.first?.int64Value else { return }
            var status = current
            status.position = .microseconds(microseconds)
            self.current = status
            enqueue(Pending([.seeked], status, ready: true))
            return
        }
        guard message.isSignal(interface: TonearmClient.propertiesInterface, member: "PropertiesChanged"),
              let arguments = try? message.arguments(), arguments.count >= 2,
              let interface = arguments[0].stringValue, let changed = arguments[1].stringKeyedDictionary
        else { return }
        switch interface {
        case TonearmClient.playerInterface: player.merge(changed.mapValues(\.unwrappingVariant)) { $1 }
        case TonearmClient.extensionInterface: extensionProperties.merge(changed.mapValues(\.unwrappingVariant)) { $1 }
        default: return
        }
        guard var status = try? PlayerStatus(player: player, extension: extensionProperties) else { return }
        status.position = current.position
        let kinds = status.events(since: current)
        self.current = status
        updateTimer()
        guard !kinds.isEmpty else { return }
        let pending = Pending(kinds, status, ready: false)
        enqueue(pending)
        // the position belongs with the event (a new track starts at 0, a pause holds where it stopped):
        // read once per event, not on a clock
        readPosition { [weak self] position in
            guard let self else { return }
            if let position {
                pending.status.position = position
                if self.outbox.last === pending { self.current?.position = position }
            }
            pending.ready = true
            self.flush()
        }
    }

    private func enqueue(_ pending: Pending) {
        outbox.append(pending)
        flush()
    }

    /// Delivers the events whose position is known, oldest first; replies come in the order asked
    /// (one connection, one serial service), so the head is the first to become ready.
    private func flush() {
        while let head = outbox.first, head.ready, !ended {
            outbox.removeFirst()
            for kind in head.kinds { handler(.event(PlayerEvent(kind: kind, status: head.status))) }
        }
    }

    private func readPosition(_ completion: @escaping (Duration?) -> Void) {
        connection.call(destination: busName, path: objectPath, interface: TonearmClient.propertiesInterface, member: "Get",
                        arguments: [.string(TonearmClient.playerInterface), .string("Position")], timeout: timeout) { result in
            completion((try? result.get())?.first?.int64Value.map { .microseconds($0) })
        }
    }

    // MARK: The position clock

    /// A timer only while playing and only when asked for: paused or stopped, nothing wakes.
    private func updateTimer() {
        let playing = current?.playbackStatus == .playing && !ended
        guard let interval = positionInterval, playing else {
            timer?.cancel()
            timer = nil
            return
        }
        guard timer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let nanoseconds = Int(interval.nanoseconds)
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds),
                       leeway: .milliseconds(max(1, nanoseconds / 10_000_000)))
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
        self.timer = timer
    }

    private func tick() {
        // an event waiting for its position reads it anyway
        guard !tickInFlight, outbox.isEmpty, current?.playbackStatus == .playing else { return }
        tickInFlight = true
        readPosition { [weak self] position in
            guard let self else { return }
            self.tickInFlight = false
            guard !self.ended, let position, var status = self.current, status.playbackStatus == .playing else { return }
            status.position = position
            self.current = status
            self.handler(.position(status))
        }
    }
}

extension TonearmClient {
    /// Watches the service: `handler` gets `.initial` first, then every `.event`, on the client's
    /// queue (do not call the client from it). With `positionInterval`, while playing, it also gets
    /// `.position` that often (the only clock; none runs while paused or stopped). It ends with
    /// `.ended` when the service or the bus goes, or silently at `cancel()`.
    public func watch(positionInterval: Duration? = nil,
                      _ handler: @escaping @Sendable (WatchUpdate) -> Void) throws -> PlayerWatch {
        let watch = PlayerWatch(client: self, positionInterval: positionInterval, handler: handler)
        try onQueue { try watch.start() }
        return watch
    }
}
