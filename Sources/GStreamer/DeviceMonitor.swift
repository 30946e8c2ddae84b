import CGStreamer
import CGStreamerCallbacks

/// One device a `DeviceMonitor` lists, copied out of its `GstDevice`.
public struct Device: Sendable, Hashable {
    /// What a sink's `device` property takes to play there: PulseAudio's sink name (the pulse
    /// provider's `internal-name`), else the device's display name.
    public var id: String
    /// `gst_device_get_display_name`: what a person reads (PulseAudio's sink description).
    public var description: String
    /// The provider's kind, from the device's type: `pulse` (GstPulseDevice), `alsa`, `pipewire`.
    public var kind: String
    /// The sound server's default device now (the pulse provider's `is-default`).
    public var isDefault: Bool

    public init(id: String, description: String, kind: String, isDefault: Bool) {
        self.id = id
        self.description = description
        self.kind = kind
        self.isDefault = isDefault
    }
}

/// A `GstDeviceMonitor` of one device class (`Audio/Sink`), read without a GLib main loop: its
/// bus's poll file descriptor becomes readable when a device came, went or changed, and `drain`
/// empties it (`gst_device_monitor_get_bus`, `gst_bus_pop`), as `Bus` does for a pipeline.
public final class DeviceMonitor: @unchecked Sendable {
    // @unchecked: only immutable fields; the monitor and its bus take their own locks.
    private let monitor: UnsafeMutablePointer<GstDeviceMonitor>
    private let bus: UnsafeMutablePointer<GstBus>

    /// A monitor of `deviceClass`, started (`gst_device_monitor_start`: the providers probe their
    /// devices and begin watching, the pulse provider on a PulseAudio thread of its own); nil when
    /// no provider starts (no sound server).
    public init?(deviceClass: String) {
        let monitor = gst_device_monitor_new()!
        gst_device_monitor_add_filter(monitor, deviceClass, nil)
        guard gst_device_monitor_start(monitor) != 0 else {
            gst_object_unref(monitor)
            return nil
        }
        self.monitor = monitor
        bus = gst_device_monitor_get_bus(monitor)
    }

    deinit {
        gst_device_monitor_stop(monitor)
        gst_object_unref(bus)
        gst_object_unref(monitor)
    }

    /// Readable while messages are pending (`gst_bus_get_pollfd`).
    public var fileDescriptor: Int32 {
        var pollFD = GPollFD()
        gst_bus_get_pollfd(bus, &pollFD)
        return pollFD.fd
    }

    /// Pops every pending message; true when one of them was a device added, removed or changed.
    public func drain() -> Bool {
        var changed = false
        while let message = gst_bus_pop(bus) {
            switch tonearm_message_type(message) {
            case GST_MESSAGE_DEVICE_ADDED, GST_MESSAGE_DEVICE_REMOVED, GST_MESSAGE_DEVICE_CHANGED: changed = true
            default: break
            }
            tonearm_message_unref(message)
        }
        return changed
    }

    /// The devices now (`gst_device_monitor_get_devices`, whose list and references are freed here).
    public var devices: [Device] {
        var result: [Device] = []
        var node = gst_device_monitor_get_devices(monitor)
        let list = node
        while let current = node {
            if let raw = current.pointee.data {
                let device = raw.assumingMemoryBound(to: GstDevice.self)
                result.append(Self.copy(device))
                gst_object_unref(raw)
            }
            node = current.pointee.next
        }
        g_list_free(list)
        return result
    }

    private static func copy(_ device: UnsafeMutablePointer<GstDevice>) -> Device {
        func take(_ text: UnsafeMutablePointer<gchar>?) -> String? {
            guard let text else { return nil }
            defer { g_free(text) }
            return String(utf8Repairing: text)
        }
        let name = take(gst_device_get_display_name(device)) ?? ""
        let internalName = tonearm_has_property(device, "internal-name") != 0 ? take(tonearm_get_string(device, "internal-name")) : nil
        let isDefault = tonearm_has_property(device, "is-default") != 0 && tonearm_get_bool(device, "is-default") != 0
        // GstPulseDevice -> pulse (G_OBJECT_TYPE_NAME is a macro: the instance's class's type)
        let instance = UnsafeMutableRawPointer(device).assumingMemoryBound(to: GTypeInstance.self)
        var kind = instance.pointee.g_class.map { String(cString: g_type_name($0.pointee.g_type)) } ?? ""
        if kind.hasPrefix("Gst") { kind.removeFirst(3) }
        if kind.hasSuffix("Device") { kind.removeLast(6) }
        return Device(id: internalName ?? name, description: name, kind: kind.lowercased(), isDefault: isDefault)
    }
}
