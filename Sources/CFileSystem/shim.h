#ifndef TONEARM_CFILESYSTEM_SHIM_H
#define TONEARM_CFILESYSTEM_SHIM_H
/* statfs(2), which Swift's Glibc module does not bring: the walk of a folder asks it which kind of
 * file system a mount point holds, so as not to enter /proc, /sys and their like. */
#include <sys/vfs.h>
#endif
