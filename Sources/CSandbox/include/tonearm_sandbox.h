#ifndef TONEARM_SANDBOX_H
#define TONEARM_SANDBOX_H
// What the engine's process (tonearm-engine) takes away from itself before it reads any media
// (issue 39; docs/sandbox.md): a seccomp filter of its own, as a classic BPF program built here
// (no libseccomp), and Landlock rules that leave it write access only beneath a few folders.
// Policy lives here, unlike CShims: the list of refused calls is the filter, the list of rights
// handled is the rules.

// Installs the filter on every thread of the calling process (SECCOMP_FILTER_FLAG_TSYNC: GStreamer
// and Dispatch have threads by then), for good; every process it starts inherits it. The filter
// - kills the process on a system call of another architecture (i386's int 0x80 on x86_64,
//   AArch32 on arm64), whose numbers the list below would not match;
// - refuses with EPERM: x32 calls (nr & __X32_SYSCALL_BIT); ptrace, process_vm_readv/writev,
//   pidfd_getfd and process_madvise (other processes: tonearmd); the kernel's own (modules, kexec,
//   reboot, swap, acct, setting the clock); mounts and the root (mount, umount2, pivot_root,
//   chroot, the new mount API); files by handle (open_by_handle_at, name_to_handle_at);
//   namespaces (unshare, setns, clone with a CLONE_NEW* flag); bpf, perf_event_open, userfaultfd,
//   the keyring (keyctl, add_key, request_key), io_uring; personality other than the query
//   (0xffffffff) and plain Linux (PER_LINUX, PER_LINUX32, UNAME26);
// - answers clone3 with ENOSYS: its flags are in memory, where a filter cannot read them, and the
//   C library then uses clone (glibc 2.34 and later fall back on ENOSYS), whose flags it can;
// - allows everything else, execve included (the engine starts tonearm-video and busctl).
// The caller must have set no-new-privileges first (tonearm_forbid_new_privileges, CShims) unless
// it has CAP_SYS_ADMIN. Returns 0; -1 with errno set (ENOSYS: no filter is built for this
// architecture; EINVAL: the kernel takes no seccomp filters; EACCES: no-new-privileges not set);
// or, when a thread could not take the filter, that thread's id (> 0), and no thread took it.
long tonearm_install_syscall_filter(void);

// The Landlock ABI of the running kernel (LANDLOCK_CREATE_RULESET_VERSION: 2 on Debian 12's 6.1,
// 6 on Debian 13's 6.12); 0 when the kernel has no Landlock (ENOSYS: not built; EOPNOTSUPP: not
// enabled at boot); -1 with errno set otherwise.
long tonearm_landlock_abi(void);

// Landlock rules on the calling process, for good, inherited by every process it starts: every
// right that changes the file system (writing to a file, making and removing files, folders,
// links, sockets, pipes and devices; from ABI 2 moving or linking a file between folders, REFER;
// from ABI 3 truncating, TRUNCATE) is refused with EACCES (EXDEV for a move), except beneath the
// `count` paths of `writable` (a file rather than a folder keeps writing and truncating only). A
// path that cannot be opened is left out. Reading, running programs and the network are not
// handled: they stay as they were. Descriptors opened before keep what they could do.
// The rules bind the calling thread and the threads and processes made after (no TSYNC before
// ABI 8): `*unbound` is set to how many other threads the process had, which they do not bind
// (-1 when /proc/self/task cannot be read). The caller must have set no-new-privileges first
// (EPERM otherwise, unless it has CAP_SYS_ADMIN).
// Returns the ABI the rules were made for (> 0); 0 when the kernel has no Landlock, and nothing
// is done; -1 with errno set (the error of a Landlock call: nothing is restricted).
long tonearm_restrict_writes(const char *const *writable, unsigned count, long *unbound);

#endif
