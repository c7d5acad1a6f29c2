"""`run_bpf`: what a seccomp filter program returns for one system call (a classic BPF
interpreter of the four instructions perfgym's filter uses), for unit tests of the filter."""

from __future__ import annotations

import struct


def run_bpf(prog: bytes, arch: int, nr: int, arg0: int = 0, arg1: int = 0) -> int:
    """The action `prog` returns for system call `nr` of audit architecture `arch` with these
    first two arguments."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, arg0, arg1, 0, 0, 0, 0)
    insns = [struct.unpack("=HBBI", prog[i : i + 8]) for i in range(0, len(prog), 8)]
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == 0x20:  # ld w abs
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif code == 0x15:  # jeq k
            pc += 1 + (jt if acc == k else jf)
        elif code == 0x45:  # jset k
            pc += 1 + (jt if acc & k else jf)
        elif code == 0x06:  # ret k
            return k
        else:
            raise AssertionError(f"unexpected instruction {code:#x}")
