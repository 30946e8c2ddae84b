import Basics

/// Whether the engine's process confines itself with its system-call filter and its Landlock
/// rules (issue 39; docs/sandbox.md): on, unless `TONEARM_SANDBOX=off` is in tonearmd's environment, which reaches
/// the engine's through `SpawnEnvironment.engine` (its `TONEARM_` prefix). Off is for debugging a
/// call the filter refuses; no-new-privileges stays either way.
public enum EngineSandbox: String, Sendable, CaseIterable {
    case on, off

    public static let variable = "TONEARM_SANDBOX"

    /// The setting in `environment`: `on` when the variable is unset or empty; nil when it is
    /// neither `on` nor `off` (tonearmd refuses to start then, as for its other variables).
    public static func parse(_ environment: [String: String]) -> EngineSandbox? {
        guard let text = environment[variable]?.trimmingWhitespace(), !text.isEmpty else { return .on }
        return EngineSandbox(rawValue: text)
    }

    /// What the engine does: off only when asked for by name, so that a value tonearmd would have
    /// refused never leaves an engine unconfined.
    public static func inEngine(_ environment: [String: String]) -> EngineSandbox {
        parse(environment) == .off ? .off : .on
    }

    /// The folders beneath which the engine (and what it starts: tonearm-video, busctl) may still
    /// change the file system under its Landlock rules, from its own `environment` at run time:
    /// - the user's cache folder, `$XDG_CACHE_HOME` (an absolute one, as the XDG spec asks) else
    ///   `~/.cache`: GStreamer's registry (gstreamer-1.0/), our covers (tonearm/covers/),
    ///   downloadbuffer's files for HTTP items, Mesa's shader cache, fontconfig's;
    /// - the folder of a registry named by `GST_REGISTRY_1_0` or `GST_REGISTRY`;
    /// - the temporary folder, `$TMPDIR` else /tmp (GLib's `g_get_tmp_dir`);
    /// - /dev: ALSA's /dev/snd, GL's /dev/dri, /dev/shm (sound servers' shared memory), /dev/null;
    /// - `$XDG_RUNTIME_DIR`: the sound servers' and the display's sockets (a connect() needs no
    ///   Landlock right, but libpulse makes its folder there when missing).
    public static func writableFolders(_ environment: [String: String]) -> [String] {
        func absolute(_ name: String) -> String? {
            environment[name].flatMap { $0.hasPrefix("/") ? $0 : nil }
        }
        var folders = [cacheFolder(environment)]
        if let registry = absolute("GST_REGISTRY_1_0") ?? absolute("GST_REGISTRY") {
            folders.append(Path.directory(of: registry))
        }
        folders.append(absolute("TMPDIR") ?? "/tmp")
        folders.append("/dev")
        if let runtime = absolute("XDG_RUNTIME_DIR") { folders.append(runtime) }
        return folders
    }

    /// `$XDG_CACHE_HOME` when absolute, else `~/.cache` (`HOME`, else the password database's).
    public static func cacheFolder(_ environment: [String: String]) -> String {
        environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? Path.appending(".cache", to: Path.homeDirectory(environment: environment))
    }
}
