#!/usr/bin/python3
"""Runs a program with some system calls answered by an error, as a kernel without them would
answer: a seccomp filter of its own, installed here before the exec, in it and in what it
starts. SandboxTests start tonearm-engine with it: with landlock_create_ruleset answered ENOSYS
(a kernel without Landlock) the engine plays and says so; with landlock_restrict_self answered
EINVAL it must not play.
Usage: with_refused_calls.py NUMBER=ERRNO [NUMBER=ERRNO...] -- PROGRAM [ARGUMENT...]
"""

import ctypes
import os
import struct
import sys

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
    if "--" not in sys.argv or sys.argv.index("--") + 1 >= len(sys.argv):
        sys.exit(__doc__)
    split = sys.argv.index("--")
    refused = [tuple(int(part) for part in pair.split("=")) for pair in sys.argv[1:split]]
    # seccomp_data.nr (the arch is not checked: a test's tool), then one test per refused call
    program = [instruction(BPF_LD_W_ABS, 0, 0, 0)]
    for number, error in refused:
        program.append(instruction(BPF_JMP_JEQ_K, 0, 1, number))
        program.append(instruction(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | error))
    program.append(instruction(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    code = b"".join(program)
    fprog = SockFprog(len(program), code)
    libc = ctypes.CDLL(None, use_errno=True)
    ulong = ctypes.c_ulong
    if libc.prctl(PR_SET_NO_NEW_PRIVS, ulong(1), ulong(0), ulong(0), ulong(0)) != 0:
        sys.exit("with_refused_calls: PR_SET_NO_NEW_PRIVS: " + os.strerror(ctypes.get_errno()))
    if libc.prctl(PR_SET_SECCOMP, ulong(SECCOMP_MODE_FILTER), ctypes.byref(fprog)) != 0:
        sys.exit("with_refused_calls: PR_SET_SECCOMP: " + os.strerror(ctypes.get_errno()))
    os.execv(sys.argv[split + 1], sys.argv[split + 1:])


main()
