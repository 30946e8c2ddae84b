/// What of tonearmd's environment a program it starts sees (issue 39; docs/sandbox.md): the
/// variables named here, by name or by prefix, with tonearmd's values; nothing else. The engine
/// decodes whatever a client names, so it gets what GStreamer, the sound servers and the display
/// need, and not the rest of the session: `DBUS_SESSION_BUS_ADDRESS`, `SSH_AUTH_SOCK`, the agents'
/// and keyrings' sockets, tokens and passwords set for other programs. The window program gets
/// less again.
public struct SpawnEnvironment: Sendable {
    /// Variables kept by their whole name.
    public let names: Set<String>
    /// Variables kept because their name begins with one of these.
    public let prefixes: [String]

    init(_ groups: [(names: [String], prefixes: [String])]) {
        names = Set(groups.flatMap(\.names))
        prefixes = groups.flatMap(\.prefixes)
    }

    public func allows(_ name: String) -> Bool {
        names.contains(name) || prefixes.contains { name.hasPrefix($0) }
    }

    /// The variables of `environment` this list lets through.
    public func filter(_ environment: [String: String]) -> [String: String] {
        environment.filter { allows($0.key) }
    }

    /// `tonearm-engine`'s.
    public static let engine = SpawnEnvironment([
        // our own settings the engine reads (TONEARM_TAG_READER, TONEARM_VIDEO_SINK,
        // TONEARM_VIDEO_HELPER, TONEARM_USER_MANAGER_BUS below) and the tests' hooks
        (names: [], prefixes: ["TONEARM_"]),
        // GStreamer (the registry, plugin paths, feature ranks, its debug log, GstGL's window
        // system, the tag charset), ORC's code generation, GLib's allocator and debug switches
        // (G_SLICE is read as GLib loads: design, "Memory"), GIO's modules (TLS for https streams)
        (names: [], prefixes: ["GST_", "ORC_", "G_", "GIO_"]),
        // the loader and the allocator, read before any of our code runs (GLIBC_TUNABLES: see
        // ARCHITECTURE.md), and the sanitizers' options (make test-asan, test-tsan)
        (names: ["GLIBC_TUNABLES", "LD_LIBRARY_PATH", "ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"],
         prefixes: []),
        // where files are: GStreamer's registry and our cover cache (~/.cache), the sound server's
        // cookie and client.conf (~/.config), fontconfig's and GStreamer's data, the sound server's
        // and the display's sockets (XDG_RUNTIME_DIR), playbin's download buffer (TMPDIR)
        (names: ["HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_DATA_DIRS", "XDG_CONFIG_DIRS",
                 "XDG_RUNTIME_DIR", "TMPDIR"], prefixes: []),
        // the locale: the words of GStreamer's and GLib's errors, which reach clients as ItemError,
        // and the charset of file names and of tags in legacy encodings
        (names: ["LANG", "LANGUAGE"], prefixes: ["LC_"]),
        // the sound servers' clients: PULSE_SERVER, PULSE_SINK, PULSE_COOKIE, PULSE_CLIENTCONFIG,
        // PULSE_RUNTIME_PATH; PIPEWIRE_REMOTE, PIPEWIRE_RUNTIME_DIR; ALSA_CONFIG_PATH, ALSA_CARD;
        // JACK_DEFAULT_SERVER
        (names: [], prefixes: ["PULSE_", "PIPEWIRE_", "ALSA_", "JACK_"]),
        // the display the video sinks and the window program draw on, the session's kind (GstGL
        // chooses its window system by it), and the GL and video-decoding drivers' switches
        (names: ["DISPLAY", "XAUTHORITY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "__GLX_VENDOR_LIBRARY_NAME"],
         prefixes: ["LIBGL_", "MESA_", "__EGL_", "LIBVA_", "VDPAU_", "SDL_"]),
        // the network for http(s) items: souphttpsrc and GIO follow the proxies; GnuTLS the
        // certificate store
        (names: ["http_proxy", "https_proxy", "no_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
                 "ALL_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR"], prefixes: []),
    ])

    /// `tonearm-video`'s, the window program the engine starts (from the engine's environment and
    /// the display found for the item).
    public static let videoWindow = SpawnEnvironment([
        // our own (TONEARM_VIDEO_*) and the tests' hooks
        (names: [], prefixes: ["TONEARM_"]),
        // the loader and the allocator, the sanitizers' options
        (names: ["GLIBC_TUNABLES", "LD_LIBRARY_PATH", "ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"],
         prefixes: []),
        // the X display (SDL is told to use X11: XWayland's under Wayland) and its key: Xlib reads
        // ~/.Xauthority when XAUTHORITY is not set; SDL's own switches
        (names: ["DISPLAY", "XAUTHORITY", "HOME"], prefixes: ["SDL_"]),
        // the locale, for the keyboard's input method (Xlib's XIM)
        (names: ["LANG", "LANGUAGE", "XMODIFIERS"], prefixes: ["LC_"]),
        // SDL's D-Bus helpers (input methods, the screensaver) find the session bus here, as
        // libdbus does with no address, instead of autolaunching a bus of their own
        (names: ["XDG_RUNTIME_DIR"], prefixes: []),
    ])

    /// The engine's environment made from tonearmd's `environment`: the list's variables and, when
    /// tonearmd has no display of its own, the session bus's address as `TONEARM_USER_MANAGER_BUS`,
    /// for the one look-up that needs it (the user manager's display: PlayerEngine's
    /// `VideoDisplay`); no library in the engine finds it under that name.
    public static func forEngine(_ environment: [String: String]) -> [String: String] {
        var kept = engine.filter(environment)
        if environment["DISPLAY", default: ""].isEmpty, let bus = environment["DBUS_SESSION_BUS_ADDRESS"], !bus.isEmpty {
            kept[userManagerBus] = bus
        }
        return kept
    }

    /// The window program's environment made from the engine's `environment`: the list's
    /// variables and, when no session bus listens at `$XDG_RUNTIME_DIR/bus` (`busListens` says),
    /// a session bus address that cannot be reached. With none, libdbus (which SDL loads for the
    /// screensaver and input methods) autolaunches a bus of its own through `dbus-launch` where
    /// dbus-x11 is installed (libdbus's `_dbus_lookup_session_address`; seen under strace as
    /// `dbus-launch --autolaunch` from the window program, issue 39).
    public static func forVideoWindow(_ environment: [String: String], busListens: (String) -> Bool) -> [String: String] {
        var kept = videoWindow.filter(environment)
        let runtime = environment["XDG_RUNTIME_DIR", default: ""]
        if runtime.isEmpty || !busListens(runtime + "/bus") { kept["DBUS_SESSION_BUS_ADDRESS"] = unreachableBus }
        return kept
    }

    /// An address no library connects to or starts a bus for: an unknown transport, refused at once.
    public static let unreachableBus = "disabled:"

    /// The session bus's address in the engine, for `busctl --user` alone.
    public static let userManagerBus = "TONEARM_USER_MANAGER_BUS"
}
