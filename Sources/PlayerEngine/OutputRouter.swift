import Dispatch
import GStreamer
import Logging
import PlayerModel
import PulseAudio

/// Which device the sound goes to: the output devices (a `DeviceMonitor` of the pulse provider's
/// Audio/Sink devices: the ones a pulsesink plays on, whose
/// bus's fd wakes the engine's queue as the pipeline's does: no polling), the output the player
/// chose, and the `device` of the pulsesink that plays. Confined to the engine's queue.
///
/// The sink is always given a device by name, the server's default one's for `default`: pulsesink
/// cannot go back to "no device" while it plays (setting NULL posts an ERROR, "pa_context_move_sink_input_by_name((null))
/// failed", gst-plugins-good 1.22 pulsesink.c gst_pulsesink_set_stream_device), and a stream given
/// no device goes where the server remembers it went last (WirePlumber's restore-stream,
/// PulseAudio's module-stream-restore), not to the default, once a device was chosen by name. So
/// following the server's default is done here, by name, on `DefaultSinkWatch`'s word (GStreamer
/// 1.22's devices never change their `is-default`) or the device monitor's (1.24 on).
final class OutputRouter: @unchecked Sendable {
    // @unchecked: every field is confined to `queue`.
    private let queue: DispatchQueue
    private let logger: Logger
    private let monitor: DeviceMonitor
    private let source: DispatchSourceRead
    private var devices: [Device] = []
    /// `default` or a device's id, as the player last chose.
    private var chosen = Outputs.defaultID
    /// Told the devices each time their list (ids, descriptions, kinds) changes.
    private let reportDevices: ([OutputDevice]) -> Void
    /// Asked for the sinks to move when the device to play on changes.
    private let moveSinks: () -> Void
    /// The server's default sink as its own connection tells (nil: not known yet, or no server).
    private var serverDefault: String?
    private var defaults: DefaultSinkWatch?

    /// Watches the Audio/Sink devices; nil when no provider starts (no sound server).
    init?(queue: DispatchQueue, logger: Logger, reportDevices: @escaping ([OutputDevice]) -> Void, moveSinks: @escaping () -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let monitor = DeviceMonitor(provider: "pulsedeviceprovider", deviceClass: "Audio/Sink") else { return nil }
        self.queue = queue
        self.logger = logger
        self.monitor = monitor
        self.reportDevices = reportDevices
        self.moveSinks = moveSinks
        source = DispatchSource.makeReadSource(fileDescriptor: monitor.fileDescriptor, queue: queue)
        source.setEventHandler { [weak self] in self?.devicesMayHaveChanged() }
        // the monitor (and the fd the source watches) lives until the cancellation completed
        source.setCancelHandler { withExtendedLifetime(monitor) {} }
        source.resume()
        devices = monitor.devices
        let watched = WeakRouter(self)
        defaults = DefaultSinkWatch(clientName: "Tonearm") { [queue] name in
            queue.async { watched.router?.serverDefaultChanged(to: name) }
        }
    }

    deinit { source.cancel() }

    /// Tells the devices there are now (the first time, after init).
    func reportNow() { reportDevices(Self.listed(devices)) }

    private static func listed(_ devices: [Device]) -> [OutputDevice] {
        devices.map { OutputDevice(id: $0.id, description: $0.description, kind: $0.kind) }
    }

    private func devicesMayHaveChanged() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard monitor.drain() else { return }
        let before = devices
        devices = monitor.devices
        if Self.listed(before) != Self.listed(devices) { reportNow() }
        if target(in: before) != target(in: devices) {
            logger.info("output device now", metadata: ["device": "\(target(in: devices) ?? "the server's default")", "chosen": "\(chosen)"])
            moveSinks()
        }
    }

    private func serverDefaultChanged(to name: String?) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard name != serverDefault else { return }
        let before = target(in: devices)
        serverDefault = name
        if target(in: devices) != before {
            logger.info("output device now", metadata: ["device": "\(target(in: devices) ?? "the server's default")", "chosen": "\(chosen)",
                                                        "server's default": "\(name ?? "unknown")"])
            moveSinks()
        }
    }

    func choose(_ id: String) {
        dispatchPrecondition(condition: .onQueue(queue))
        chosen = id
        moveSinks()
    }

    /// The device to play on: the chosen one while it is there, else the server's default (as
    /// its connection last said, else as the monitor lists it); nil when no device is known (the
    /// sink keeps its own choice).
    private func target(in devices: [Device]) -> String? {
        if chosen != Outputs.defaultID, devices.contains(where: { $0.id == chosen }) { return chosen }
        return serverDefault ?? devices.first(where: \.isDefault)?.id
    }

    /// Sets `sink`'s device to the target if it plays elsewhere: a playing pulsesink moves its
    /// stream there without stopping (pa_context_move_sink_input_by_name).
    func route(_ sink: Element?) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let sink, let device = target(in: devices), sink.string("device") != device else { return }
        sink.set("device", device)
    }
}

/// The router as libpulse's thread may hold it: weakly, so that the watch it owns does not keep
/// it (an initializer's `[weak self]` is captured as a var, which a sendable closure refuses).
private final class WeakRouter: Sendable {
    weak let router: OutputRouter?
    init(_ router: OutputRouter) { self.router = router }
}
