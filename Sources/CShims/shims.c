// See include/tonearm_shims.h: why each function exists.
#define _GNU_SOURCE
#include "tonearm_shims.h"
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <spawn.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

int tonearm_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

int tonearm_set_thread_name(const char *name) {
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = '\0';
    return pthread_setname_np(pthread_self(), truncated);
}

int tonearm_birth_time(const char *path, int64_t *seconds, uint32_t *nanoseconds) {
    struct statx info;
    if (statx(AT_FDCWD, path, 0, STATX_BTIME, &info) != 0 || !(info.stx_mask & STATX_BTIME)) return 0;
    *seconds = info.stx_btime.tv_sec;
    *nanoseconds = info.stx_btime.tv_nsec;
    return 1;
}

int tonearm_file_system_type(const char *path, int64_t *type) {
    struct statfs info;
    if (statfs(path, &info) != 0) return 0;
    *type = (int64_t) info.f_type;
    return 1;
}

int tonearm_set_malloc_limits(int arenas, int mmap_threshold) {
    int ok = 1;
    if (arenas > 0) ok &= mallopt(M_ARENA_MAX, arenas) == 1;
    if (mmap_threshold > 0) ok &= mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1;
    return ok;
}

int tonearm_set_malloc_thresholds(int mmap_threshold, int trim_threshold) {
    return (mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1) & (mallopt(M_TRIM_THRESHOLD, trim_threshold) == 1);
}

void tonearm_malloc_trim(void) { malloc_trim(0); }

extern void __asan_handle_no_return(void) __attribute__((weak));

void tonearm_forget_abandoned_stack_frames(void) {
    if (__asan_handle_no_return) __asan_handle_no_return();
}

int tonearm_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int tonearm_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}

int tonearm_forbid_new_privileges(void) { return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); }
