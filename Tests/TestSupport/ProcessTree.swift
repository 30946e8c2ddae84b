import Foundation

/// A process and those it started, read from /proc (procps' pgrep is not on a minimal Debian):
/// tonearmd starts its engine's process (`tonearm-engine`), which starts the video window's.
public enum ProcessTree {
    /// `pid`'s name (`/proc/PID/stat`'s comm, at most 15 bytes) and its parent's pid.
    public static func entry(_ pid: Int32) -> (name: String, parent: Int32)? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // after the comm: state, then the parent's pid (proc(5))
        guard fields.count > 1, let parent = Int32(fields[1]) else { return nil }
        return (String(stat[stat.index(after: open)..<close]), parent)
    }

    /// The processes below `pid` (children, their children...), by pid.
    public static func descendants(of pid: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        var parents: [Int32: Int32] = [:]
        for name in entries {
            guard let child = Int32(name), let entry = entry(child) else { continue }
            parents[child] = entry.parent
        }
        return parents.keys.filter { child in
            var next = parents[child]
            while let ancestor = next, ancestor > 1 {
                if ancestor == pid { return true }
                next = parents[ancestor]
            }
            return false
        }.sorted()
    }

    /// The processes below `pid` named `name` (its first 15 bytes, as the kernel keeps it).
    public static func descendants(of pid: Int32, named name: String) -> [Int32] {
        descendants(of: pid).filter { entry($0)?.name == String(name.utf8.prefix(15))! }
    }
    /// Its environment, /proc/PID/environ: the first of a repeated name.
    public static func environment(of pid: Int32) throws -> [String: String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
        var variables: [String: String] = [:]
        for entry in data.split(separator: 0) {
            let text = String(decoding: entry, as: UTF8.self)
            guard let equals = text.firstIndex(of: "=") else { continue }
            let name = String(text[..<equals])
            if variables[name] == nil { variables[name] = String(text[text.index(after: equals)...]) }
        }
        return variables
    }

    /// Its open descriptors: fd number -> readlink of /proc/PID/fd/N ("socket:[123]", "pipe:[456]",
    /// "anon_inode:[eventfd]", a path).
    public static func descriptors(of pid: Int32) throws -> [Int: String] {
        let folder = "/proc/\(pid)/fd"
        var result: [Int: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            guard let number = Int(name), let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(name)")
            else { continue }  // closed meanwhile
            result[number] = target
        }
        return result
    }

    /// A field of /proc/PID/status ("NoNewPrivs" -> "1").
    public static func status(of pid: Int32, _ field: String) throws -> String? {
        let text = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        return text.split(separator: "\n").first { $0.hasPrefix("\(field):") }
            .map { $0.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces) }
    }
}
