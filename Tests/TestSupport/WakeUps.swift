import Foundation

/// How often a process wakes: nothing may poll (design brief, rule 7), neither tonearmd nor
/// `tonearm watch` while paused.
public enum WakeUps {
    /// Context switches of the threads of `pid` and of the processes it started (tonearmd's engine
    /// and window programs) over `window` seconds, counted from /proc for the threads alive at both
    /// ends (a thread that starts or ends inside it is a one-off, not a tick). A 1 Hz timer makes
    /// `window` of them. `sanitizerThreadName`: the process's name as its threads show it, so that
    /// under `make test-tsan` the ThreadSanitizer runtime's own thread, started before main() and
    /// named like the process, which wakes every 100 ms (compiler-rt tsan_rtl.cpp,
    /// BackgroundThread), is not counted. It is the first thread after the main one (in a started
    /// process, the one named as that process).
    public static func count(_ pid: Int32, window: TimeInterval, sanitizerThreadName: String)
        -> (count: Int, threads: [String]) {
        func snapshot() -> [String: (name: String, switches: Int)] {
            var result: [String: (String, Int)] = [:]
            for process in [pid] + ProcessTree.descendants(of: pid) {
                result.merge(threads(of: process)) { first, _ in first }
            }
            return result
        }
        func threads(of pid: Int32) -> [String: (name: String, switches: Int)] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            var result: [String: (String, Int)] = [:]
            for task in tasks {
                guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
                var name = "?"
                var switches = 0
                for line in status.split(separator: "\n") {
                    let fields = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                    guard fields.count == 2 else { continue }
                    if fields[0] == "Name" { name = fields[1] }
                    if fields[0].hasSuffix("_ctxt_switches") { switches += Int(fields[1]) ?? 0 }
                }
                result["\(pid)/\(task)"] = (name, switches)
            }
            return result
        }
        let started = ProcessTree.descendants(of: pid).compactMap { child in ProcessTree.entry(child).map { (child, $0.name) } }
        let before = snapshot()
        // a window of time is what is measured here: an absence of wake-ups cannot be waited for
        Thread.sleep(forTimeInterval: window)
        let after = snapshot()
        var runtimeThreads: Set<String> = []
        if ProcessInfo.processInfo.environment["SWIFT_SANITIZE"] == "thread" {
            for (process, name) in [(pid, sanitizerThreadName)] + started {
                let prefix = "\(process)/"
                let first = before.filter { $0.key.hasPrefix(prefix) && $0.key != "\(process)/\(process)" && $0.value.name == name }
                    .keys.min { (Int($0.dropFirst(prefix.count)) ?? .max) < (Int($1.dropFirst(prefix.count)) ?? .max) }
                if let first { runtimeThreads.insert(first) }
            }
        }
        var count = 0
        var threads: [String] = []
        for (task, end) in after where !runtimeThreads.contains(task) {
            guard let start = before[task], end.switches > start.switches else { continue }
            count += end.switches - start.switches
            threads.append("\(task) \(end.name) +\(end.switches - start.switches)")
        }
        return (count, threads)
    }
}
