import FoundationEssentials
import Glibc

/// File paths as text, the way NSString's path methods took them apart (those are Foundation
/// proper): by their slashes alone, with no look at the file system.
public enum Path {
    /// The directory of the running program (`/proc/self/exe`, links resolved); nil when unknown.
    public static var programDirectory: String? {
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        return directory(of: exe)
    }

    /// The program `name` in the running one's directory (else argv[0]'s): the programs tonearmd
    /// and its engine start (`tonearm-engine`, `tonearm-video`) are installed beside them.
    public static func besideThisProgram(_ name: String) -> String {
        appending(name, to: programDirectory ?? directory(of: CommandLine.arguments[0]))
    }

    /// `name` below `directory`, with one slash between them.
    public static func appending(_ name: String, to directory: String) -> String {
        if directory.isEmpty { return name }
        if name.isEmpty { return directory }
        return String(directory.reversed().drop { $0 == "/" }.reversed()) + "/" + String(name.drop { $0 == "/" })
    }

    /// The path without its last component: `/a/b` is `/a`, `/a` and `/` are `/`, `a` is empty.
    public static func directory(of path: String) -> String {
        let trimmed = withoutTrailingSlashes(path)
        guard let slash = trimmed.lastIndex(of: "/") else { return trimmed.isEmpty && !path.isEmpty ? "/" : "" }
        let parent = withoutTrailingSlashes(trimmed[..<slash])
        return parent.isEmpty ? "/" : String(parent)
    }

    /// The last component: `/a/b/` is `b`, `/` is `/`.
    public static func lastComponent(_ path: String) -> String {
        let trimmed = withoutTrailingSlashes(path)
        if trimmed.isEmpty { return path.isEmpty ? "" : "/" }
        return String(trimmed[(trimmed.lastIndex(of: "/").map(trimmed.index(after:)) ?? trimmed.startIndex)...])
    }

    /// The last component's extension without its dot: `a.tar.gz` is `gz`; `.hidden` and `a` have none.
    public static func `extension`(of path: String) -> String {
        let name = lastComponent(path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }

    /// The last component without its extension: `a.tar.gz` is `a.tar`, `.hidden` stays.
    public static func nameWithoutExtension(_ path: String) -> String {
        let name = lastComponent(path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    /// `~` and `~/...` with the home directory put in (`HOME`, else the password database);
    /// `~user/...` with that user's. Anything else as it is.
    public static func expandingTilde(_ path: String, home: String? = nil) -> String {
        guard path.hasPrefix("~") else { return path }
        let end = path.firstIndex(of: "/") ?? path.endIndex
        let user = path[path.index(after: path.startIndex)..<end]
        let directory: String?
        if user.isEmpty {
            directory = home ?? homeDirectory()
        } else {
            directory = getpwnam(String(user)).flatMap { $0.pointee.pw_dir.map { String(cString: $0) } }
        }
        guard let directory else { return path }
        return end == path.endIndex ? directory : appending(String(path[end...]), to: directory)
    }

    /// The current user's home: `HOME` when set and not empty, else the password database's entry.
    public static func homeDirectory(environment: [String: String]? = nil) -> String {
        let home = environment.map { $0["HOME"] } ?? getenv("HOME").map { String(cString: $0) }
        if let home, !home.isEmpty { return home }
        return getpwuid(getuid()).flatMap { $0.pointee.pw_dir.map { String(cString: $0) } } ?? "/"
    }

    private static func withoutTrailingSlashes<S: StringProtocol>(_ path: S) -> S.SubSequence {
        var end = path.endIndex
        while end > path.startIndex, path[path.index(before: end)] == "/" { end = path.index(before: end) }
        return path[..<end]
    }
}
