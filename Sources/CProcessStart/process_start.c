/* The allocators' settings that exist only as environment variables read while the process is
 * loaded, before any code of ours runs. When one is missing, tonearmd sets it and executes itself
 * again (same pid, same arguments), from the executable's .preinit_array: after the dynamic loader
 * has mapped and relocated the libraries but before any library's constructor or the Swift runtime
 * run, so that only the load is done twice. That second load costs 5.3 ms of start -> name owned
 * (Benchmarks/starts.py --starts 20: 16.9 ms against 11.6 with the variables already set, as the
 * systemd unit sets them). A value the user set stands; a failed exec goes on with the defaults.
 *
 * - G_SLICE=always-malloc: GLib 2.74's slice allocator keeps per-thread magazines of freed chunks,
 *   and GStreamer's streaming threads come and go with every pipeline. GLib 2.76 dropped the
 *   magazines for malloc itself (gslice.c, "Remove slice allocator"). GLib reads G_SLICE in its
 *   own constructor (g_quark_init makes the first hash table), so a setenv in main is too late:
 *   a test program's slices still came from slab pages after one.
 * - GLIBC_TUNABLES=glibc.malloc.tcache_count=0: glibc keeps up to 7 freed blocks of each size up
 *   to 1 KiB per thread (tcache), and a burst of calls leaves about a dozen libdispatch workers,
 *   each with a full cache until it retires after 5 s idle. glibc reads its tunables as the
 *   program is loaded (elf/dl-tunables.c); mallopt(3) has no tcache setting.
 *
 * make fuzz --seed 7, 100,000 calls, RssAnon from warm-up to the end: +5.1 MiB with neither (18.5
 * MiB at the end), +1.7 with both set outside and +2.3 through this (11.2 and 11.5 MiB at the
 * end), at the same calls/s. */

#include "process_start.h"

#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static const char slice_name[] = "G_SLICE=";
static const char tunables_name[] = "GLIBC_TUNABLES=";
static const char tcache_setting[] = "glibc.malloc.tcache_count=";
static int settings_in_place = 0;

/* The entry of `envp` that starts with `name` ("NAME="), or NULL. */
static char **find(char **envp, const char *name) {
    size_t length = strlen(name);
    for (char **entry = envp; *entry; entry++)
        if (strncmp(*entry, name, length) == 0) return entry;
    return NULL;
}

/* After an exec of /proc/self/exe the process is named "exe": it gets its own name back, the base
 * name of argv[0] (15 bytes at most, as the kernel keeps). */
static void name_after(char **argv) {
    char name[16] = {0};
    if (!argv || !argv[0] || prctl(PR_GET_NAME, name) != 0 || strcmp(name, "exe") != 0) return;
    const char *slash = strrchr(argv[0], '/');
    const char *base = slash ? slash + 1 : argv[0];
    if (*base && strcmp(base, "exe") != 0) prctl(PR_SET_NAME, base);
}

/* Preinit functions run before libc's own constructor has set `environ`, so getenv and setenv
 * cannot be used here: the environment is the `envp` the loader passes, and a new one is given
 * to execve. */
static void apply_allocator_settings(int argc, char **argv, char **envp) {
    (void)argc;
    if (!envp) return;
    static char slice_value[] = "G_SLICE=always-malloc";
    static char tunables_value[4096];
    char **slice = find(envp, slice_name);
    char **tunables = find(envp, tunables_name);
    int tcache_set = tunables && strstr(*tunables + strlen(tunables_name), tcache_setting);
    if (slice && tcache_set) {
        settings_in_place = 1;
        name_after(argv);
        return;
    }
    if (!tcache_set) {
        const char *before = tunables ? *tunables + strlen(tunables_name) : "";
        int length = snprintf(tunables_value, sizeof tunables_value, "%s%s%s%s0", tunables_name, before,
                              *before ? ":" : "", tcache_setting);
        if (length < 0 || (size_t)length >= sizeof tunables_value) return;
    }
    size_t count = 0;
    while (envp[count]) count++;
    char *environment[count + 3];
    size_t n = 0;
    for (size_t i = 0; i < count; i++)
        if (!(tunables == envp + i && !tcache_set)) environment[n++] = envp[i];
    if (!slice) environment[n++] = slice_value;
    if (!tcache_set) environment[n++] = tunables_value;
    environment[n] = NULL;
    /* by its path, so that the process keeps its name (comm: ps, pgrep, the journal), which is
     * the base name of what is executed; /proc/self/exe when that path is gone (replaced by an
     * upgrade while starting) */
    char path[4096];
    ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
    if (length > 0) {
        path[length] = 0;
        execve(path, argv, environment);
    }
    execve("/proc/self/exe", argv, environment);
    /* only when both failed (no /proc): tonearmd goes on with the defaults */
}

/* run by the dynamic loader before the libraries' constructors (executables only: System V ABI,
 * DT_PREINIT_ARRAY) */
__attribute__((section(".preinit_array"), used))
static void (*const apply_allocator_settings_entry)(int, char **, char **) = apply_allocator_settings;

int tonearm_allocator_settings_in_place(void) { return settings_in_place; }
