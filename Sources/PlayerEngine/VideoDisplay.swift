import Basics
import EngineLink
import FoundationEssentials
import PlayerModel

/// Where video can be shown, found when an item that may have video is loaded (docs/video.md).
/// tonearmd's own environment first; a service started by systemd at login has no `DISPLAY` of
/// its own (trap 12), so then the user manager's: `org.freedesktop.systemd1.Manager`'s
/// `Environment` on the session bus, read with `busctl --user` on the engine's queue, never the
/// one that answers D-Bus. The video window is an X11 window (XWayland's under Wayland): a
/// display is a `DISPLAY`.
public struct VideoDisplay: Sendable, Equatable {
    /// The variables the window program and the video sink need: DISPLAY, and XAUTHORITY when set.
    public var environment: [String: String]
    public var name: String { environment["DISPLAY"] ?? "" }

    static let variables = ["DISPLAY", "XAUTHORITY"]

    /// From `environment` when it has a `DISPLAY`.
    public static func from(_ environment: [String: String]) -> VideoDisplay? {
        guard let display = environment["DISPLAY"], !display.isEmpty else { return nil }
        return VideoDisplay(environment: environment.filter { variables.contains($0.key) && !$0.value.isEmpty })
    }

    /// File extensions of containers that hold video: only their loads get a video sink, and only
    /// they ask the user manager. An audio file then maps no window library (ximagesink links
    /// libX11), spawns nothing on a headless machine, and never shows its cover art in a window
    /// (playbin shows an MP3's picture as a video stream); a URI without one of these (an audio
    /// file, a radio stream) plays its audio only. HLS and DASH playlists are counted in: most
    /// carry video, and an audio-only one gets a sink that no stream reaches (no window opens).
    static let videoExtensions: Set<String> = ["mp4", "m4v", "mkv", "webm", "ogv", "mov", "avi", "mpg", "mpeg", "ts", "m2ts",
                                               "wmv", "flv", "3gp", "ogg", "ogm", "m3u8", "mpd"]

    public static func mayHaveVideo(_ uri: MediaURI) -> Bool {
        let name = uri.displayName.lowercased()
        guard let dot = name.lastIndex(of: ".") else { return false }
        return videoExtensions.contains(String(name[name.index(after: dot)...]))
    }

    /// The display for a load of `uri`, when it may hold video: tonearmd's own, else the user
    /// manager's; nil: no video (an audio file, or headless: the video is dropped). May run
    /// `busctl`: call off the service queue.
    public static func find(for uri: MediaURI, own: [String: String] = ProcessInfo.processInfo.environment) -> VideoDisplay? {
        guard mayHaveVideo(uri) else { return nil }
        return from(own) ?? userManager(environment: own)
    }

    /// `Environment` of the systemd user manager on the session bus (`busctl --user --json=short
    /// get-property`), as a display; nil when it has none or cannot be asked.
    public static func userManager(environment: [String: String]) -> VideoDisplay? {
        let busctl = ["/usr/bin/busctl", "/bin/busctl"].first { Files.isReadable(Array($0.utf8)) } ?? "/usr/bin/busctl"
        guard let output = ChildProcess.output(of: busctl, ["--user", "--json=short", "--timeout=2", "get-property",
                                                            "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                                            "org.freedesktop.systemd1.Manager", "Environment"],
                                               environment: busctlEnvironment(environment).map { "\($0.key)=\($0.value)" }),
              let reply = try? JSONDecoder().decode(Reply.self, from: Data(output)) else { return nil }
        var found: [String: String] = [:]
        for entry in reply.data {
            guard let equals = entry.firstIndex(of: "=") else { continue }
            found[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
        }
        return from(found)
    }

    /// The engine has no DBUS_SESSION_BUS_ADDRESS (issue 39): busctl alone gets the one tonearmd
    /// handed over for it; without one, `--user` finds the bus in XDG_RUNTIME_DIR.
    static func busctlEnvironment(_ environment: [String: String]) -> [String: String] {
        var result = environment
        if let bus = environment[SpawnEnvironment.userManagerBus] { result["DBUS_SESSION_BUS_ADDRESS"] = bus }
        return result
    }

    /// busctl's JSON for a property of type `as`: {"type":"as","data":["NAME=value",...]}.
    private struct Reply: Decodable {
        var data: [String]
    }
}
