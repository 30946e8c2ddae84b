#!/usr/bin/python3
"""A folder mounted through FUSE that answers EIO on demand: the flaky USB disk of issue 26.

    eio_fs.py BACKING MOUNTPOINT CONTROL

Every operation passes through to BACKING, except while the file CONTROL exists: then each write,
create, truncate, fsync, rename and unlink fails with EIO, as a disk with bad sectors does, and
reads go on working. The kernel's FUSE driver hands the errors to the process that made the call,
so tonearmd meets a real EIO from a real file system. Runs in the foreground; `fusermount -u` or
`umount` ends it. Debian's python3-fusepy (its module is `fusepy`).
"""
import errno
import os
import sys

import fusepy


class Flaky(fusepy.Operations):
    def __init__(self, backing, control):
        self.backing = os.path.realpath(backing)
        self.control = control

    def _path(self, path):
        return os.path.join(self.backing, path.lstrip("/"))

    def _check(self):
        if os.path.exists(self.control):
            raise fusepy.FuseOSError(errno.EIO)

    # reading: always works
    def getattr(self, path, fh=None):
        info = os.lstat(self._path(path))
        return {key: getattr(info, key) for key in
                ("st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime", "st_nlink", "st_size", "st_uid")}

    def access(self, path, mode):
        if not os.access(self._path(path), mode):
            raise fusepy.FuseOSError(errno.EACCES)

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._path(path))

    def open(self, path, flags):
        return os.open(self._path(path), flags)

    def read(self, path, size, offset, fh):
        os.lseek(fh, offset, os.SEEK_SET)
        return os.read(fh, size)

    def release(self, path, fh):
        return os.close(fh)

    def statfs(self, path):
        info = os.statvfs(self._path(path))
        return {key: getattr(info, key) for key in
                ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag",
                 "f_frsize", "f_namemax")}

    # writing: fails with EIO while the control file exists
    def write(self, path, data, offset, fh):
        self._check()
        os.lseek(fh, offset, os.SEEK_SET)
        return os.write(fh, data)

    def create(self, path, mode, fi=None):
        self._check()
        return os.open(self._path(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)

    def truncate(self, path, length, fh=None):
        self._check()
        with open(self._path(path), "r+b") as file:
            file.truncate(length)

    def fsync(self, path, datasync, fh):
        self._check()
        return os.fsync(fh)

    def flush(self, path, fh):
        return os.fsync(fh) if not os.path.exists(self.control) else None

    def mkdir(self, path, mode):
        self._check()
        return os.mkdir(self._path(path), mode)

    def rmdir(self, path):
        self._check()
        return os.rmdir(self._path(path))

    def unlink(self, path):
        self._check()
        return os.unlink(self._path(path))

    def rename(self, old, new):
        self._check()
        return os.rename(self._path(old), self._path(new))

    def chmod(self, path, mode):
        self._check()
        return os.chmod(self._path(path), mode)

    def chown(self, path, uid, gid):
        self._check()
        return os.chown(self._path(path), uid, gid)

    def utimens(self, path, times=None):
        return os.utime(self._path(path), times)


if __name__ == "__main__":
    backing, mountpoint, control = sys.argv[1:4]
    # nothreads: one request at a time, so an error lands on the call that met it
    fusepy.FUSE(Flaky(backing, control), mountpoint, foreground=True, nothreads=True)
