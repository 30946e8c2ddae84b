import Basics
import FoundationEssentials
import Glibc

/// What GStreamer played the last time it was asked (`MediaCapabilities`), kept in a file, so that
/// a start can publish `SupportedUriSchemes` and `SupportedMimeTypes` and resolve folders without
/// initialising GStreamer (issue 30: tonearmd at rest with nothing loaded does not load it).
///
/// The file is valid while nothing that decides the lists has changed since it was written: the
/// GStreamer registry files (GStreamer rewrites its registry when a plugin is added, changed or
/// removed), the plugin path variables, and tonearmd itself. A plugin installed since the registry
/// was last written is seen once GStreamer starts: the lists are computed again then, announced
/// with PropertiesChanged when they differ, and the file rewritten.
public struct FormatsCache: Sendable {
    public let file: URL
    private let environment: [String: String]

    public init(directory: URL, environment: [String: String] = Environment.variables()) {
        file = directory.appendingPathComponent("formats")
        self.environment = environment
    }

    /// `$XDG_CACHE_HOME/tonearm` (`~/.cache/tonearm`), beside the covers.
    public static func defaultDirectory(environment: [String: String] = Environment.variables()) -> URL {
        CoverCache.defaultDirectory(environment: environment).deletingLastPathComponent()
    }

    /// The lists the file holds, when it is valid; nil otherwise (absent, unreadable, stale).
    public func load() -> MediaCapabilities? {
        guard let data = try? Data(contentsOf: file) else { return nil }
        // split as an array of bytes: String's split walks Characters and Data's goes through its
        // representation at each byte, 3 and 1 million instructions for the file's 4 kB at every
        // start (callgrind, issue 30); the file is ASCII
        var fields: [String: ArraySlice<UInt8>] = [:]
        for line in [UInt8](data).split(separator: UInt8(ascii: "\n")) {
            guard let tab = line.firstIndex(of: UInt8(ascii: "\t")) else { return nil }
            fields[String(decoding: line[..<tab], as: UTF8.self)] = line[(tab + 1)...]
        }
        guard let stamp = fields["key"], String(decoding: stamp, as: UTF8.self) == key(), let schemes = fields["schemes"],
              let types = fields["types"], let extensions = fields["extensions"] else { return nil }
        func words(_ text: ArraySlice<UInt8>) -> [String] {
            text.split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
        }
        return MediaCapabilities(supportedURISchemes: words(schemes), supportedMIMETypes: words(types),
                                 playableExtensions: Set(words(extensions)))
    }

    /// Writes `capabilities` with what they depend on now (after `gst_init`, which may have
    /// rewritten the registry). Waits on the disk: never on the queue that answers D-Bus.
    public func save(_ capabilities: MediaCapabilities) {
        let text = ["key\t" + key(), "schemes\t" + capabilities.supportedURISchemes.joined(separator: " "),
                    "types\t" + capabilities.supportedMIMETypes.joined(separator: " "),
                    "extensions\t" + capabilities.playableExtensions.sorted().joined(separator: " ")].joined(separator: "\n") + "\n"
        try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? Data(text.utf8).write(to: file, options: .atomic)
    }

    /// What the lists depend on, as one line: each file's modification time and size, and the
    /// variables GStreamer reads its plugins' places from.
    func key() -> String {
        var parts = ["tonearmd " + Self.stamp("/proc/self/exe")]
        for name in Self.variables { parts.append(name + "=" + (environment[name] ?? "")) }
        // gst/gstregistry.c: GST_REGISTRY_1_0, else GST_REGISTRY, else the user's cache directory
        if let registry = environment["GST_REGISTRY_1_0"] ?? environment["GST_REGISTRY"] {
            parts.append(registry + " " + Self.stamp(registry))
        } else {
            let directory = FormatsCache.defaultDirectory(environment: environment).deletingLastPathComponent()
                .appendingPathComponent("gstreamer-1.0").path
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix("registry.") }.sorted()
            for name in names { parts.append(name + " " + Self.stamp(directory + "/" + name)) }
        }
        return parts.joined(separator: "; ")
    }

    /// gst/gstregistry.c and gst/gstpluginloader.c read these.
    private static let variables = ["GST_PLUGIN_PATH", "GST_PLUGIN_PATH_1_0", "GST_PLUGIN_SYSTEM_PATH", "GST_PLUGIN_SYSTEM_PATH_1_0"]

    private static func stamp(_ path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "absent" }
        return "\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(info.st_size)"
    }
}
