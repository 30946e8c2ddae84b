import DBus
import Dispatch
import Glibc
import Logging

/// The system bus connection that hears logind's PrepareForSleep, made and used on a queue of its
/// own. `@unchecked Sendable`: `bus` is set and read only on `queue`.
public final class SleepWatch: @unchecked Sendable {
    private let queue = DispatchQueue(label: "tonearm.sleep-watch", qos: .utility)
    private let logger: Logger
    private var bus: Connection?

    public init(logger: Logger) { self.logger = logger }

    /// Where libdbus looks for the system bus (dbus_bus_get(DBUS_BUS_SYSTEM) reads
    /// DBUS_SYSTEM_BUS_ADDRESS first: dbus/dbus-bus.c init_connections_unlocked).
    public static var systemBusAddress: String {
        getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) } ?? "unix:path=/run/dbus/system_bus_socket"
    }

    /// Connects on `queue` and calls `changed` there with PrepareForSleep's argument (true: about
    /// to sleep; false: woken up).
    public func start(address: String, changed: @escaping @Sendable (Bool) -> Void) {
        queue.async { [self] in
            let rule = "type='signal',interface='org.freedesktop.login1.Manager',member='PrepareForSleep'"
            do {
                let bus = try Connection(address: address, queue: queue, logger: logger)
                bus.onDisconnect = { [weak self] _ in self?.bus = nil }
                // the handler first: a signal the rule lets through finds it in place
                _ = bus.onSignal(interface: "org.freedesktop.login1.Manager", member: "PrepareForSleep") { message in
                    guard let sleeping = try? message.arguments().first?.boolValue else { return }
                    changed(sleeping)
                }
                try bus.addMatch(rule)
                self.bus = bus
                logger.debug("watching the system bus for sleep", metadata: ["address": "\(address)"])
            } catch {
                logger.debug("no system bus to watch for sleep: \(error)")
            }
        }
    }
}

