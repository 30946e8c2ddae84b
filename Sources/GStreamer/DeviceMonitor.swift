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
    /// The sound server's default device (the pulse provider's `is-default`): now from GStreamer
    /// 1.24 on; on 1.22, when the provider listed the device (`DefaultSinkWatch` follows it there).
    public var isDefault: Bool

    public init(id: String, description: String, kind: String, isDefault: Bool) {
        self.id = id
        self.description = description
        self.kind = kind
        self.isDefault = isDefault
    }
}

/// One device provider's devices of one class (`Audio/Sink` of `pulsedeviceprovider`), read
/// without a GLib main loop: the provider's bus's poll file descriptor becomes readable when a
/// device came, went or changed, and `drain` empties it (`gst_device_provider_get_bus`,
/// `gst_bus_pop`), as `Bus` does for a pipeline.
///
/// One provider, not a `GstDeviceMonitor` of every provider: on PipeWire (a GNOME desktop) the
/// monitor also starts `pipewiredeviceprovider`, which lists each device a second time under the
/// same name (kind `pipewire`), a device no `pulsesink` plays on, and keeps a connection and a
/// thread of its own to the PipeWire daemon.
public final class DeviceMonitor: @unchecked Sendable {
    // @unchecked: only immutable fields; the provider and its bus take their own locks.
    private let provider: UnsafeMutablePointer<GstDeviceProvider>
    private let bus: UnsafeMutablePointer<GstBus>
    private let deviceClass: String

    /// The devices of `deviceClass` from the provider made by the factory `provider`, started
    /// (`gst_device_provider_start`: it probes its devices and begins watching, the pulse provider
    /// on a PulseAudio thread of its own); nil when there is no such provider or it does not
    /// start (no sound server).
    public init?(provider name: String, deviceClass: String) {
        guard let provider = gst_device_provider_factory_get_by_name(name) else { return nil }
        guard gst_device_provider_start(provider) != 0 else {
            gst_object_unref(provider)
            return nil
        }
        self.provider = provider
        self.deviceClass = deviceClass
        bus = gst_device_provider_get_bus(provider)
    }

    deinit {
        gst_device_provider_stop(provider)
        gst_object_unref(bus)
        gst_object_unref(provider)
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

    /// The devices now (`gst_device_provider_get_devices`, whose list and references are freed here).
    public var devices: [Device] {
        var result: [Device] = []
        var node = gst_device_provider_get_devices(provider)
        let list = node
        while let current = node {
            if let raw = current.pointee.data {
                let device = raw.assumingMemoryBound(to: GstDevice.self)
                // the pulse provider lists sources (each sink's monitor among them) beside sinks
                if gst_device_has_classes(device, deviceClass) != 0 { result.append(Self.copy(device)) }
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
        // a property from GStreamer 1.24 on; 1.22's pulse device has it only in its properties,
        // as it was when the device was listed (pulsedeviceprovider.c 1.22.0 gst_pulse_device_new)
        var isDefault = tonearm_has_property(device, "is-default") != 0 && tonearm_get_bool(device, "is-default") != 0
        if tonearm_has_property(device, "is-default") == 0, let properties = gst_device_get_properties(device) {
            var listed: gboolean = 0
            if gst_structure_get_boolean(properties, "is-default", &listed) != 0 { isDefault = listed != 0 }
            gst_structure_free(properties)
        }
        // GstPulseDevice -> pulse (G_OBJECT_TYPE_NAME is a macro: the instance's class's type)
        let instance = UnsafeMutableRawPointer(device).assumingMemoryBound(to: GTypeInstance.self)
        var kind = instance.pointee.g_class.map { String(cString: g_type_name($0.pointee.g_type)) } ?? ""
        if kind.hasPrefix("Gst") { kind.removeFirst(3) }
        if kind.hasSuffix("Device") { kind.removeLast(6) }
        return Device(id: internalName ?? name, description: name, kind: kind.lowercased(), isDefault: isDefault)
    }
}
