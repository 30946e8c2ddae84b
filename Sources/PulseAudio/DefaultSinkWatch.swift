import CPulse

/// The sound server's default sink (a PulseAudio server, or PipeWire's pipewire-pulse), watched
/// over a Pulse connection of its own: `pa_context_get_server_info`'s `default_sink_name` once the
/// connection is ready, and again after each change of the server (`PA_SUBSCRIPTION_MASK_SERVER`:
/// a desktop's sound settings choosing another default). Told to `changed` on libpulse's thread,
/// nil once the connection is lost. libpulse's thread sleeps in poll(2) on the server's socket
/// between events: nothing wakes while nothing changes.
///
/// It exists because GStreamer 1.22's pulse device provider never follows the default: its devices'
/// `is-default` is set when they are listed and never again (pulsedeviceprovider.c 1.22.0 subscribes
/// to no server event), so "the default device" read from it is the one at the provider's start.
public final class DefaultSinkWatch: @unchecked Sendable {
    // @unchecked: `mainloop` and `context` are immutable and used under libpulse's own lock (the
    // threaded mainloop's, held in its callbacks and taken around every call from other threads).
    private let mainloop: OpaquePointer
    private let context: OpaquePointer
    private let changed: @Sendable (String?) -> Void

    /// Connects to the server libpulse finds (`PULSE_SERVER`, the runtime directory's socket) as
    /// `clientName`, without starting one; nil when libpulse is not installed (it is opened here,
    /// not linked: `tonearm_pulse.h`) or cannot even start (no connection is tried then). A server
    /// that is not there calls `changed(nil)` once.
    public init?(clientName: String, changed: @escaping @Sendable (String?) -> Void) {
        guard tonearm_pulse_open() == 1, let mainloop = tonearm_pa_threaded_mainloop_new() else { return nil }
        guard let context = tonearm_pa_context_new(tonearm_pa_threaded_mainloop_get_api(mainloop), clientName) else {
            tonearm_pa_threaded_mainloop_free(mainloop)
            return nil
        }
        self.mainloop = mainloop
        self.context = context
        self.changed = changed
        let me = Unmanaged.passUnretained(self).toOpaque()
        tonearm_pa_context_set_state_callback(context, { context, me in
            guard let context, let me else { return }
            Unmanaged<DefaultSinkWatch>.fromOpaque(me).takeUnretainedValue().stateChanged(context)
        }, me)
        tonearm_pa_context_set_subscribe_callback(context, { context, event, _, me in
            guard let context, let me else { return }
            // only the server's own changes: the default sink is one of them
            guard event.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue == PA_SUBSCRIPTION_EVENT_SERVER.rawValue else { return }
            Unmanaged<DefaultSinkWatch>.fromOpaque(me).takeUnretainedValue().askServer(context)
        }, me)
        guard tonearm_pa_context_connect(context, nil, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0, tonearm_pa_threaded_mainloop_start(mainloop) >= 0 else {
            tonearm_pa_context_unref(context)
            tonearm_pa_threaded_mainloop_free(mainloop)
            return nil
        }
    }

    deinit {
        // stopping joins libpulse's thread: no callback runs after it
        tonearm_pa_threaded_mainloop_stop(mainloop)
        tonearm_pa_context_set_state_callback(context, nil, nil)
        tonearm_pa_context_set_subscribe_callback(context, nil, nil)
        tonearm_pa_context_disconnect(context)
        tonearm_pa_context_unref(context)
        tonearm_pa_threaded_mainloop_free(mainloop)
    }

    /// On libpulse's thread, its lock held.
    private func stateChanged(_ context: OpaquePointer) {
        switch tonearm_pa_context_get_state(context) {
        case PA_CONTEXT_READY:
            if let operation = tonearm_pa_context_subscribe(context, PA_SUBSCRIPTION_MASK_SERVER, nil, nil) { tonearm_pa_operation_unref(operation) }
            askServer(context)
        case PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED:
            changed(nil)
        default:
            break
        }
    }

    /// On libpulse's thread, its lock held.
    private func askServer(_ context: OpaquePointer) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let operation = tonearm_pa_context_get_server_info(context, { _, info, me in
            guard let me else { return }
            // sink names are the server's identifiers; a name that is not UTF-8 is repaired, and
            // then names no device (the sink keeps its own choice)
            let name = info?.pointee.default_sink_name.map { String(cString: $0) }
            Unmanaged<DefaultSinkWatch>.fromOpaque(me).takeUnretainedValue().changed(name)
        }, me)
        if let operation { tonearm_pa_operation_unref(operation) }
    }
}
