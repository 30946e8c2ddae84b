// See include/tonearm_sandbox.h: which writes the engine keeps, and why the rules are made here.
#define _GNU_SOURCE
#include "tonearm_sandbox.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

// Debian 12's linux-libc-dev (6.1) has ABI 1 and 2's rights and the calls' numbers; TRUNCATE is
// ABI 3's (Linux 6.2). The numbers are the same on every architecture (the generic table's).
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

// Only the first field: the kernel takes a shorter structure than its own (ABI 4 added
// handled_access_net, ABI 6 scoped), and nothing here handles the network or scopes yet.
struct ruleset_attr {
    uint64_t handled_access_fs;
};

// Every right that changes the file system rather than reads it, in ABI 1.
#define WRITES_ABI_1 (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
                      LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |         \
                      LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |     \
                      LANDLOCK_ACCESS_FS_MAKE_SYM)
// The rights a rule on a file that is not a directory may hold (the kernel refuses the others).
#define FILE_WRITES (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)

long tonearm_landlock_abi(void) {
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi >= 0) return abi;
    // ENOSYS: built without CONFIG_SECURITY_LANDLOCK; EOPNOTSUPP: built in, not enabled (lsm=)
    if (errno == ENOSYS || errno == EOPNOTSUPP) return 0;
    return -1;
}

// The calling process's threads, from /proc/self/task; -1 when it cannot be read.
static long thread_count(void) {
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) return -1;
    long count = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks))) {
        if (entry->d_name[0] != '.') count++;
    }
    closedir(tasks);
    return count;
}

long tonearm_restrict_writes(const char *const *writable, unsigned count, long *unbound) {
    long abi = tonearm_landlock_abi();
    if (abi <= 0) return abi;
    // landlock_restrict_self binds the calling thread and those it makes later, not the others
    // (no LANDLOCK_RESTRICT_SELF_TSYNC before ABI 8): threads that exist now are told, not refused
    // (a sanitizer's or a debugger's own thread; the engine's streaming threads come later)
    long threads = thread_count();
    *unbound = threads < 0 ? -1 : threads - 1;
    uint64_t handled = WRITES_ABI_1;
    if (abi >= 2) handled |= LANDLOCK_ACCESS_FS_REFER;     // moving and linking between folders
    if (abi >= 3) handled |= LANDLOCK_ACCESS_FS_TRUNCATE;  // truncate(2), O_TRUNC, ftruncate

    struct ruleset_attr attr = {.handled_access_fs = handled};
    int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
    if (ruleset < 0) return -1;
    for (unsigned i = 0; i < count; i++) {
        int parent = open(writable[i], O_PATH | O_CLOEXEC);
        // a place that is not there holds nothing to write: the rules are only narrower without it
        if (parent < 0) continue;
        struct stat status;
        struct landlock_path_beneath_attr rule = {.allowed_access = handled, .parent_fd = parent};
        if (fstat(parent, &status) == 0 && !S_ISDIR(status.st_mode)) rule.allowed_access &= FILE_WRITES;
        long added = syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
        int error = errno;
        close(parent);
        if (added < 0) {
            close(ruleset);
            errno = error;
            return -1;
        }
    }
    long restricted = syscall(__NR_landlock_restrict_self, ruleset, 0);
    int error = errno;
    close(ruleset);
    if (restricted < 0) {
        errno = error;
        return -1;
    }
    return abi;
}
