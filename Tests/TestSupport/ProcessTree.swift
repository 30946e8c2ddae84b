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
}
