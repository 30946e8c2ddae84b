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
}
