import CSandbox
import CShims
import Glibc

/// What a process gives up of its own rights, for good (issue 39; docs/sandbox.md).
public enum Confinement {
    /// `prctl(PR_SET_NO_NEW_PRIVS, 1)`: no program this process or its children run gains
    /// privileges at `execve` (setuid, setgid, file capabilities); inherited by every child and
    /// never undone. The kernel asks it of an unprivileged process before it takes a seccomp filter.
    public static func forbidNewPrivileges() throws(SystemErrno) {
        guard tonearm_forbid_new_privileges() == 0 else { throw SystemErrno(errno) }
    }

    /// The engine's seccomp filter (`tonearm_install_syscall_filter`, CSandbox, which lists what it
    /// refuses and why) on every thread of this process, inherited by every process it starts,
    /// never undone. Call `forbidNewPrivileges` first.
    public static func refuseSystemCalls() throws(SystemCallFilterError) {
        let result = tonearm_install_syscall_filter()
        if result == 0 { return }
        if result > 0 { throw SystemCallFilterError(thread: Int32(truncatingIfNeeded: result)) }
        throw SystemCallFilterError(errno: SystemErrno(errno))
    }

    /// The running kernel's Landlock ABI (`tonearm_landlock_abi`), 0 when it has no Landlock, nil
    /// when the kernel would not say.
    public static func landlockABI() -> Int? {
        let abi = tonearm_landlock_abi()
        return abi >= 0 ? abi : nil
    }

    /// Landlock rules (`tonearm_restrict_writes`, CSandbox, which lists the rights they handle):
    /// this process and every process it starts may change the file system only beneath
    /// `writable` (folders; a path that is not there is left out), for good. Reads are not
    /// touched. Call it while the process has one thread, after `forbidNewPrivileges`: threads
    /// that exist already are not bound.
    /// Returns the kernel's Landlock ABI the rules were made for and how many threads other than
    /// the caller existed (-1: unknown), or nil when the kernel has no Landlock and nothing was done.
    public static func restrictWrites(toBeneath writable: [String]) throws(WriteRulesError) -> (abi: Int, unbound: Int)? {
        var copies = writable.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        var unbound = 0
        let result = copies.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) {
                tonearm_restrict_writes($0, UInt32(buffer.count), &unbound)
            }
        }
        if result > 0 { return (result, unbound) }
        if result == 0 { return nil }
        throw WriteRulesError(errno: SystemErrno(errno))
    }
}

/// Why the Landlock rules could not be made or applied: nothing was restricted.
public struct WriteRulesError: Error, Sendable {
    /// The error of a Landlock call.
    public let errno: SystemErrno

    public var message: String {
        switch errno.rawValue {
        case EPERM: "no-new-privileges is not set (\(errno.message))"
        default: errno.message
        }
    }
}

/// Why the system-call filter could not be installed: no thread of the process took it.
public struct SystemCallFilterError: Error, Sendable {
    /// The error of `seccomp(2)`, or nil when a thread could not take the filter.
    public let errno: SystemErrno?
    /// The thread that could not take the filter (it has one of its own that this one does not
    /// extend), or nil.
    public let thread: Int32?

    init(errno: SystemErrno) {
        self.errno = errno
        thread = nil
    }

    init(thread: Int32) {
        errno = nil
        self.thread = thread
    }

    public var message: String {
        if let thread { return "thread \(thread) could not take the filter (it has a filter of its own)" }
        let error = errno ?? SystemErrno(0)
        return switch error.rawValue {
        case ENOSYS: "no filter is built for this processor architecture"
        case EINVAL: "the kernel takes no seccomp filters (CONFIG_SECCOMP_FILTER) or refused this one (\(error.message))"
        case EACCES: "no-new-privileges is not set (\(error.message))"
        default: error.message
        }
    }
}
