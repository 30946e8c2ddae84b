// See include/tonearm_sandbox.h: what the filter does and why it is built here.
#define _GNU_SOURCE
#include "tonearm_sandbox.h"
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

// The architecture whose numbers the filter checks: the one this program is built for. Both are
// little-endian, so the first 32-bit word of an argument is its low half.
#if defined(__x86_64__)
#define FILTER_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__) && !defined(__AARCH64EB__)
#define FILTER_ARCH AUDIT_ARCH_AARCH64
#endif

#ifdef FILTER_ARCH

// Refused with EPERM whatever their arguments. A player never makes them; each is either a reach
// into another process or the kernel's administration, or a large part of the kernel that an
// exploit of a decoder would use next.
static const unsigned refused[] = {
    // another process: tonearmd's memory, its descriptors (Debian's kernels leave Yama's
    // ptrace_scope at 0, so a process may trace its parent; root may trace anything)
    __NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev, __NR_pidfd_getfd, __NR_process_madvise,
    // the kernel itself: modules, another kernel, reboot, swap, process accounting, the clock
    __NR_init_module, __NR_finit_module, __NR_delete_module, __NR_kexec_load, __NR_kexec_file_load,
    __NR_reboot, __NR_swapon, __NR_swapoff, __NR_acct, __NR_settimeofday, __NR_clock_settime,
    // mounts and the root, by the old calls and by the new mount API (Linux 5.2)
    __NR_mount, __NR_umount2, __NR_pivot_root, __NR_chroot, __NR_fsopen, __NR_fsconfig, __NR_fsmount,
    __NR_fspick, __NR_move_mount, __NR_open_tree, __NR_mount_setattr,
    // files by handle, which bypass the permissions of the path (CAP_DAC_READ_SEARCH's "shocker")
    __NR_open_by_handle_at, __NR_name_to_handle_at,
    // namespaces: a user namespace makes the calls above reachable again, inside it
    __NR_unshare, __NR_setns,
    // eBPF, performance counters, userfaultfd (a favourite of kernel exploits: it stalls a copy
    // from user memory at will), the kernel's keyring, io_uring (its operations pass no filter)
    __NR_bpf, __NR_perf_event_open, __NR_userfaultfd, __NR_keyctl, __NR_add_key, __NR_request_key,
    __NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register,
};

// personality(2) values left alone, as Docker's default profile does: the query, which the C
// library and sanitizers' runtimes make, and the plain Linux personas. The rest change what
// every later execve gets (ADDR_NO_RANDOMIZE turns address randomization off, READ_IMPLIES_EXEC
// makes readable memory executable).
static const unsigned personas[] = {0xffffffffu, 0x0000 /* PER_LINUX */, 0x0008 /* PER_LINUX32 */,
                                    0x20000 /* UNAME26 */, 0x20008 /* PER_LINUX32 | UNAME26 */};

// clone(2) flags that make a namespace. CLONE_NEWTIME (0x80) is left out: in clone's flags that
// bit belongs to the exit signal (CSIGNAL), and only clone3 and unshare take it.
#define NAMESPACE_FLAGS (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))
#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define IF_EQUAL(value, skip_if_true, skip_if_false) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (value), (skip_if_true), (skip_if_false))
#define RETURN(action) BPF_STMT(BPF_RET | BPF_K, (action))
#define ALLOW RETURN(SECCOMP_RET_ALLOW)
#define FAIL_WITH(error) RETURN(SECCOMP_RET_ERRNO | ((error) & SECCOMP_RET_DATA))

#ifdef __X32_SYSCALL_BIT
#define X32_CHECK 2
#else
#define X32_CHECK 0
#endif
// The instructions below: the arch check (3), the number's load (1), the x32 check, two per
// refused call, clone3's two, clone's five, personality's four and one per value, the last allow.
#define LENGTH (3 + 1 + X32_CHECK + 2 * COUNT(refused) + 2 + 5 + 4 + COUNT(personas) + 1)

long tonearm_install_syscall_filter(void) {
    struct sock_filter program[LENGTH];
    unsigned short length = 0;
    // past LENGTH is a mistake in LENGTH, not a reason to write past the array
#define ADD(instruction) (length < LENGTH ? (void)(program[length++] = (struct sock_filter)instruction) : __builtin_trap())

    // a call of another architecture has other numbers: none of this filter's would match
    ADD(LOAD(arch));
    ADD(IF_EQUAL(FILTER_ARCH, 1, 0));
    ADD(RETURN(SECCOMP_RET_KILL_PROCESS));

    // Only the arch and the number are read until clone's and personality's checks, which no other
    // number reaches: the kernel (5.11 and later) then runs the filter once per number, not per
    // call, for every number it allows whatever the arguments (seccomp's action cache).
    ADD(LOAD(nr));
#ifdef __X32_SYSCALL_BIT
    // x86_64's x32 ABI: the same calls, numbered from this bit up, which the list would not match
    ADD(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, __X32_SYSCALL_BIT, 0, 1));
    ADD(FAIL_WITH(EPERM));
#endif
    for (unsigned i = 0; i < COUNT(refused); i++) {
        ADD(IF_EQUAL(refused[i], 0, 1));
        ADD(FAIL_WITH(EPERM));
    }

    ADD(IF_EQUAL(__NR_clone3, 0, 1));
    ADD(FAIL_WITH(ENOSYS));

    ADD(IF_EQUAL(__NR_clone, 0, 4));
    ADD(LOAD(args[0]));
    ADD(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NAMESPACE_FLAGS, 0, 1));
    ADD(FAIL_WITH(EPERM));
    ADD(ALLOW);

    // personality: one comparison per value left alone, each jumping to the allow after the last
    ADD(IF_EQUAL(__NR_personality, 0, 1 + COUNT(personas) + 2));
    ADD(LOAD(args[0]));
    for (unsigned i = 0; i < COUNT(personas); i++) {
        unsigned last = i == COUNT(personas) - 1;
        ADD(IF_EQUAL(personas[i], COUNT(personas) - 1 - i, last ? 1 : 0));
    }
    ADD(ALLOW);
    ADD(FAIL_WITH(EPERM));

    ADD(ALLOW);
#undef ADD

    if (length != LENGTH) __builtin_trap();  // LENGTH says what the code above adds
    struct sock_fprog filter = {.len = length, .filter = program};
    // glibc 2.36 (Debian 12) has no seccomp() wrapper
    return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &filter);
}

#else

long tonearm_install_syscall_filter(void) {
    errno = ENOSYS;
    return -1;
}

#endif
