#ifndef TONEARM_SHIMS_H
#define TONEARM_SHIMS_H
// What Swift's Glibc module cannot import, one function per gap, each with why it exists. No
// behaviour lives here: every function is a call of the system's own, with fixed arguments at most.
#include <spawn.h>
#include <stdint.h>

// Glibc's Swift module leaves out <sys/eventfd.h>: ReadWatcher wakes its poll with an eventfd
// (EFD_CLOEXEC | EFD_NONBLOCK). Returns the descriptor, or -1 with errno set.
int tonearm_eventfd(void);

// pthread_setname_np(3) is declared only under _GNU_SOURCE, which Swift's Glibc module does not
// define. Names the calling thread (the kernel keeps 15 bytes); returns 0 or an error number.
int tonearm_set_thread_name(const char *name);

// statx(2) (glibc 2.28) and struct statx are not in Swift's Glibc module. The birth time of
// `path` in *seconds and *nanoseconds, when the file system keeps one and says so in stx_mask
// (ext4, btrfs, xfs, tmpfs from Linux 6.2); returns 1 then, 0 otherwise.
int tonearm_birth_time(const char *path, int64_t *seconds, uint32_t *nanoseconds);

// statfs(2) (<sys/vfs.h>) is not in Swift's Glibc module. The kind of file system `path` is on
// (f_type, a magic number of linux/magic.h) in *type; returns 1, or 0 with errno set. A folder
// walk asks it so as not to enter /proc, /sys and their like.
int tonearm_file_system_type(const char *path, int64_t *type);

// <malloc.h> is not in Swift's Glibc module: mallopt(3)'s M_ARENA_MAX and M_MMAP_THRESHOLD.
// Sets each that is positive; returns 1 when every mallopt call succeeded.
int tonearm_set_malloc_limits(int arenas, int mmap_threshold);

// mallopt(3)'s M_MMAP_THRESHOLD and M_TRIM_THRESHOLD together; returns 1 when glibc took both.
int tonearm_set_malloc_thresholds(int mmap_threshold, int trim_threshold);

// <malloc.h> is not in Swift's Glibc module: malloc_trim(3) hands the free pages inside the heap
// back to the system (glibc gives back only the top of a heap by itself).
void tonearm_malloc_trim(void);

// AddressSanitizer's __asan_handle_no_return clears the marks on the current thread's stack, as
// the compiler does before a call that never returns; declared weak, so it does nothing in a
// process without ASan's runtime. (dispatchMain ends the main thread with pthread_exit.)
void tonearm_forget_abandoned_stack_frames(void);

// pipe2(2) is a GNU extension Swift's Glibc module leaves out: a pipe whose two ends are
// close-on-exec from the start, so a program spawned meanwhile on another thread inherits neither.
int tonearm_pipe_cloexec(int fds[2]);

// posix_spawn_file_actions_addclosefrom_np(3) (glibc 2.34; Debian 12 has 2.36) is a GNU extension
// Swift's Glibc module leaves out: the child closes every descriptor from `lowest` up, after the
// actions added before it, so it keeps only what those put below `lowest` (ChildProcess: 0, 1, 2).
// Returns 0 or an error number.
int tonearm_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

// prctl(2) is variadic, which Swift cannot call: PR_SET_NO_NEW_PRIVS, for good (the engine sets it
// before it reads media: no execve it makes gains privileges, setuid or file capabilities).
// Returns 0, or -1 with errno set.
int tonearm_forbid_new_privileges(void);

#endif
