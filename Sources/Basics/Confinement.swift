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
