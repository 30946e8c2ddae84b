#!/usr/bin/python3
"""Runs a program as on a kernel that takes no seccomp filter (built without
CONFIG_SECCOMP_FILTER): seccomp(2) fails with EINVAL in it and in what it starts. A filter of
its own does that, installed here before the exec. SandboxTests start tonearm-engine with it:
an engine that cannot install its filter must not play.

Usage: without_seccomp.py PROGRAM [ARGUMENT...]
"""
import ctypes
import errno
import os
import platform
import struct
import sys

SECCOMP = {"x86_64": 317, "aarch64": 277}[platform.machine()]  # __NR_seccomp
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
BPF_LD_W_ABS = 0x20
BPF_JMP_JEQ_K = 0x15
BPF_RET_K = 0x06


def instruction(code, jt, jf, k):
    """One struct sock_filter: u16 code, u8 jt, u8 jf, u32 k."""
    return struct.pack("HBBI", code, jt, jf, k)


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    program = b"".join([
        instruction(BPF_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr (the arch is not checked: a test's tool)
        instruction(BPF_JMP_JEQ_K, 0, 1, SECCOMP),
        instruction(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EINVAL),
        instruction(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ])
    fprog = SockFprog(len(program) // 8, program)
    libc = ctypes.CDLL(None, use_errno=True)
    ulong = ctypes.c_ulong
    if libc.prctl(PR_SET_NO_NEW_PRIVS, ulong(1), ulong(0), ulong(0), ulong(0)) != 0:
        sys.exit("without_seccomp: PR_SET_NO_NEW_PRIVS: " + os.strerror(ctypes.get_errno()))
    if libc.prctl(PR_SET_SECCOMP, ulong(SECCOMP_MODE_FILTER), ctypes.byref(fprog)) != 0:
        sys.exit("without_seccomp: PR_SET_SECCOMP: " + os.strerror(ctypes.get_errno()))
    os.execv(sys.argv[1], sys.argv[1:])


main()
