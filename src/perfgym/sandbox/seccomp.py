"""The seccomp filter every sandbox starts under: the kernel keyring's system calls and the
page cache's probes fail.

Keyrings belong to a user (uid 65534's user keyring, say), not to any namespace a sandbox
makes, so a key a run adds outlives the run, the sandbox and the judge: a later program (a new
judge, an agent's shell command) could read it back. Every bubblewrap perfgym starts (the warm
launcher, a cold run, a Python worker) therefore gets this classic-BPF program with
`--seccomp FD`: `add_key`, `request_key` and `keyctl` return ENOSYS in it and in every process
it forks, under each ABI the host's kernel accepts (x86-64 also answers x32 numbers and i386's
`int 0x80`; aarch64 also 32-bit ARM). A call from any other architecture fails with ENOSYS
whatever it is, and a host whose architecture is not known here refuses to start a sandbox
(`SandboxUnavailable`): never a sandbox that runs unfiltered.

The page cache is the host's, shared by every run: red team helper-64 kept a key and an answer
between runs in which pages of a read-only stdlib file were cached, set by one-byte reads,
cleared with `posix_fadvise(FADV_DONTNEED)` and read back with `preadv2(RWF_NOWAIT)`, which
fails on a page not cached (the task's baseline code then scored its reference's reward).
So `fadvise64` (i386's and ARM's `fadvise64_64` too), `readahead`, `cachestat`,
`preadv2`/`pwritev2` (glibc falls back to `preadv` for flags 0 on ENOSYS) and
`io_uring_setup` (its reads take RWF_NOWAIT too; libuv falls back) fail with ENOSYS as well.
`mincore` is left: the kernel already reports a file it cannot write as all cached. What
remains is slower: timing a read (docs/security.md).

A warm Python worker's filter refuses `ptrace` too (`refuse_ptrace`): a call's process that
made itself dumpable again and had a child attach to it could not be reaped by its parent
until that tracer went, and the tracer was killed only by the cleanup that waited for the
reap: the worker hung past every wall limit (red team rt65). Other sandboxes keep it: the
repository agent's profiler (py-spy) suspends the program it samples with it.
"""

from __future__ import annotations

import errno
import os
import platform
import struct

from perfgym.errors import SandboxUnavailable

__all__ = ["BLOCKED", "bwrap_args", "filter_fd", "program"]

#: The system calls refused, by name.
BLOCKED = ("add_key", "request_key", "keyctl", "fadvise64", "fadvise64_64", "readahead",
           "cachestat", "preadv2", "pwritev2", "io_uring_setup")  # fmt: skip

# audit architectures (linux/audit.h)
AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_I386 = 0x40000003
AUDIT_ARCH_AARCH64 = 0xC00000B7
AUDIT_ARCH_ARM = 0x40000028
#: x86-64's x32 ABI: the same audit architecture, numbers with this bit set.
X32_BIT = 0x40000000

#: For each host machine: (audit arch, the blocked numbers) of every ABI its kernel may accept
#: from a process: add_key, request_key, keyctl; then fadvise64 (and fadvise64_64),
#: readahead, cachestat, preadv2, pwritev2, io_uring_setup.
_X86_64 = (248, 249, 250, 221, 187, 451, 327, 328, 425)
_X32 = tuple(X32_BIT | n for n in (248, 249, 250, 221, 187, 451, 546, 547, 425))
ARCHES: dict[str, tuple[tuple[int, tuple[int, ...]], ...]] = {
    "x86_64": (
        (AUDIT_ARCH_X86_64, _X86_64 + _X32),
        (AUDIT_ARCH_I386, (286, 287, 288, 250, 272, 225, 451, 378, 379, 425)),
    ),
    "aarch64": (
        (AUDIT_ARCH_AARCH64, (217, 218, 219, 223, 213, 451, 286, 287, 425)),
        (AUDIT_ARCH_ARM, (309, 310, 311, 270, 225, 451, 392, 393, 425)),
    ),
}
#: `ptrace`'s number in each audit architecture (x32: its own), refused in a Python worker.
PTRACE = {AUDIT_ARCH_X86_64: (101, X32_BIT | 521), AUDIT_ARCH_I386: (26,),
          AUDIT_ARCH_AARCH64: (117,), AUDIT_ARCH_ARM: (26,)}  # fmt: skip
ARCHES["amd64"] = ARCHES["x86_64"]
ARCHES["arm64"] = ARCHES["aarch64"]

# classic BPF (linux/filter.h, linux/seccomp.h)
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ENOSYS = 0x00050000 | errno.ENOSYS
_NR_OFFSET = 0  # struct seccomp_data: int nr; __u32 arch; ...
_ARCH_OFFSET = 4


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None, refuse_ptrace: bool = False) -> bytes:
    """The filter for `machine` (default: this host's), as bwrap's --seccomp reads it: an
    array of `struct sock_filter`; `ptrace` refused too with `refuse_ptrace`.
    SandboxUnavailable for a machine not in `ARCHES`."""
    machine = machine or platform.machine()
    abis = ARCHES.get(machine)
    if abis is None:
        raise SandboxUnavailable(
            f"no seccomp filter for this machine ({machine!r}; known: "
            f"{', '.join(sorted(ARCHES))}): refusing to start a sandbox in which the kernel "
            "keyring would outlive a run"
        )
    if abis is not None and refuse_ptrace:
        abis = tuple((arch, nrs + PTRACE[arch]) for arch, nrs in abis)
    # Layout: load arch; one jeq per ABI to its block; unknown arch -> ENOSYS; each block:
    # load nr, one jeq per blocked number to the final ENOSYS, else allow; the final ENOSYS.
    blocks_at = []
    at = 1 + len(abis) + 1
    for _arch, nrs in abis:
        blocks_at.append(at)
        at += 1 + len(nrs) + 1
    deny_at = at
    out = [_insn(_LD_W_ABS, _ARCH_OFFSET)]
    for i, (arch, _nrs) in enumerate(abis):
        here = 1 + i
        out.append(_insn(_JEQ_K, arch, jt=blocks_at[i] - here - 1))
    out.append(_insn(_RET_K, _RET_ENOSYS))
    for i, (_arch, nrs) in enumerate(abis):
        here = blocks_at[i]
        out.append(_insn(_LD_W_ABS, _NR_OFFSET))
        for j, nr in enumerate(nrs):
            pos = here + 1 + j
            out.append(_insn(_JEQ_K, nr, jt=deny_at - pos - 1))
        out.append(_insn(_RET_K, _RET_ALLOW))
    out.append(_insn(_RET_K, _RET_ENOSYS))
    assert len(out) == deny_at + 1
    return b"".join(out)


def filter_fd(machine: str | None = None, refuse_ptrace: bool = False) -> int:
    """A new memfd holding `program(machine, refuse_ptrace)`, at offset 0, inheritable (to pass
    to bwrap, which reads it to the end); the caller closes it once bwrap has started."""
    data = program(machine, refuse_ptrace)
    fd = os.memfd_create("perfgym-seccomp", 0)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def bwrap_args(fd: int) -> list[str]:
    """bubblewrap's arguments loading the filter from `fd` (see `filter_fd`)."""
    return ["--seccomp", str(fd)]
