import CShims
import Glibc

/// A program started with `posix_spawn`, its stdin and stdout on pipes of ours (close-on-exec on
/// our side), its stderr ours, and no other descriptor: whatever else is open in this process
/// (a bus socket, a database, another child's pipe), close-on-exec or not, stays here. Nothing
/// here waits but `wait()`.
public struct ChildProcess: Sendable {
    public let pid: pid_t
    /// Our end of its stdin (write) and of its stdout (read); -1 when not asked for.
    public let input: Int32
    public let output: Int32

    /// Starts `path` with `arguments` (argv[1...]) and `environment` ("NAME=value" each); with
    /// `pipes`, its stdin and stdout are pipes to us, else /dev/null and ours. The child keeps 0, 1
    /// and 2 only; `environment` is the whole of its environment (nothing of ours is added).
    public static func spawn(_ path: String, _ arguments: [String], environment: [String], pipes: Bool = true) throws(SystemErrno) -> ChildProcess {
        var toChild: [Int32] = [-1, -1], fromChild: [Int32] = [-1, -1]
        if pipes {
            guard tonearm_pipe_cloexec(&toChild) == 0 else { throw SystemErrno(errno) }
            guard tonearm_pipe_cloexec(&fromChild) == 0 else {
                let error = errno
                close(toChild[0]); close(toChild[1])
                throw SystemErrno(error)
            }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if pipes {
            // dup2 clears close-on-exec on the copies the child keeps
            posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
            posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        // after the dup2s: a descriptor opened without O_CLOEXEC anywhere in the process (a library's,
        // or one opened on another thread) does not reach the child (issue 39)
        let closing = tonearm_spawn_close_from(&actions, 3)
        guard closing == 0 else {
            if pipes { [toChild[0], toChild[1], fromChild[0], fromChild[1]].forEach { close($0) } }
            throw SystemErrno(closing)
        }
        var pid: pid_t = 0
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        let result = posix_spawn(&pid, path, &actions, nil, argv, envp)
        if pipes {
            close(toChild[0])
            close(fromChild[1])
        }
        guard result == 0 else {
            if pipes { close(toChild[1]); close(fromChild[0]) }
            throw SystemErrno(result)
        }
        return ChildProcess(pid: pid, input: pipes ? toChild[1] : -1, output: pipes ? fromChild[0] : -1)
    }

    /// `waitpid` until it ended; its exit status, or 128 + the signal that ended it.
    @discardableResult
    public func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    public func terminate() { kill(pid, SIGTERM) }

    /// Runs `path` to its end and returns its stdout, or nil when it could not start or failed.
    /// `limit` bytes at most are kept. For callers that may wait, never the queue that answers D-Bus.
    public static func output(of path: String, _ arguments: [String], environment: [String], limit: Int = 1 << 20) -> [UInt8]? {
        guard let child = try? spawn(path, arguments, environment: environment) else { return nil }
        close(child.input)
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = Files.read(child.output, into: &buffer)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            if output.count < limit { output += buffer.prefix(count) }
        }
        close(child.output)
        return child.wait() == 0 ? output : nil
    }
}
