import Foundation

/// Where the service's executable is, for `tonearm daemon` and anyone else who starts it directly.
public enum ServiceExecutable {
    /// The executable's name.
    public static let name = "tonearmd"

    /// `tonearmd` in `directory` (the one the client itself was run from, so that a build tree or an
    /// unpacked package uses its own service), else the first executable `tonearmd` in the
    /// colon-separated `searchPath` (`PATH`). nil when neither has one.
    public static func find(nextTo directory: String?, searchPath: String?) -> String? {
        let manager = FileManager.default
        var candidates: [String] = []
        if let directory { candidates.append((directory as NSString).appendingPathComponent(name)) }
        for entry in (searchPath ?? "").split(separator: ":", omittingEmptySubsequences: true) {
            candidates.append((String(entry) as NSString).appendingPathComponent(name))
        }
        return candidates.first { path in
            var isDirectory: ObjCBool = false
            return manager.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
                && manager.isExecutableFile(atPath: path)
        }
    }

    /// The directory of the running executable (`/proc/self/exe`, links resolved); nil when unknown.
    public static var ownDirectory: String? {
        guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        return (path as NSString).deletingLastPathComponent
    }
}
