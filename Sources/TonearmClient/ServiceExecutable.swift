import Basics
import FoundationEssentials

/// Where the service's executable is, for `tonearm daemon` and anyone else who starts it directly.
public enum ServiceExecutable {
    /// The executable's name.
    public static let name = "tonearmd"

    /// The allocator settings tonearmd is started with, which exist only as environment variables
    /// read while a program is loaded, so only whoever starts it can set them: GLib's slice
    /// allocator off (its magazines keep freed blocks per thread) and glibc's per-thread cache of
    /// freed blocks off (a dozen libdispatch workers each kept a full one). The systemd unit
    /// (packaging/tonearmd.service, `Environment=`) sets the same; a test holds the two together.
    /// A value the user set stands.
    public static let allocatorEnvironment: KeyValuePairs<String, String> = [
        "G_SLICE": "always-malloc",
        "GLIBC_TUNABLES": "glibc.malloc.tcache_count=0",
    ]

    /// `tonearmd` in `directory` (the one the client itself was run from, so that a build tree or an
    /// unpacked package uses its own service), else the first executable `tonearmd` in the
    /// colon-separated `searchPath` (`PATH`). nil when neither has one.
    public static func find(nextTo directory: String?, searchPath: String?) -> String? {
        let manager = FileManager.default
        var candidates: [String] = []
        if let directory { candidates.append(Path.appending(name, to: directory)) }
        for entry in (searchPath ?? "").split(separator: ":", omittingEmptySubsequences: true) {
            candidates.append(Path.appending(name, to: String(entry)))
        }
        return candidates.first { path in
            var isDirectory = false
            return manager.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory
                && manager.isExecutableFile(atPath: path)
        }
    }

    /// The directory of the running executable (`/proc/self/exe`, links resolved); nil when unknown.
    public static var ownDirectory: String? { Path.programDirectory }
}
