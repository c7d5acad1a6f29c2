"""The seccomp filter every sandbox starts under: the kernel keyring's system calls, the page
cache's probes and file watches fail, and file locks stay in their run.

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

No run watches files: `inotify_init`, `inotify_init1` and `fanotify_init` fail with ENOSYS. A
watch's events belong to the file, not to a mount or a namespace, and every run can read the
view's files: a run watching a directory of them saw which file a concurrent run opened, 7
bits an open, about 2 Mbit/s without an error (red team helper-77: two copies of one program
split the work and swapped their answers that way, paid 0.59 on average against the honest
twin's 0.15, 18 of 18 verdicts, unflagged). Runtimes start without them (only file-watching
APIs, `fs.watch`, a `WatchService`, use them). Nor does fcntl's older F_NOTIFY (dnotify), which
signals a read in a watched directory: EINVAL.

No process in a sandbox may make a user namespace: `unshare` and `clone` with CLONE_NEWUSER
fail with EPERM, and `clone3`, whose flags the filter cannot read, with ENOSYS (glibc, Go and
Rust fall back to `clone`). In a user namespace of its own a program could mount what it liked:
its own pooled cgroup's hierarchy (red team rt67 read a cgroup's never-reset high-water marks
and fault totals left by earlier runs, past the cover over /sys/fs/cgroup), or an unsized tmpfs
past the disk quota where no cgroup holds memory.

File locks stay in their run (`isolate_locks`, the default): a lock lives on the file, and
runs share the view's read-only files, so two concurrent runs could see each other's locks, an
answer's worth of bits a call (red team helper-73, `LOCK_CALLS`). `flock` and fcntl's
lock-setting commands succeed doing nothing; reading the locks finds none of any such run.

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

#: The system calls refused, by name (with ENOSYS; `unshare` and `clone` making a user
#: namespace with EPERM).
BLOCKED = ("add_key", "request_key", "keyctl", "fadvise64", "fadvise64_64", "readahead",
           "cachestat", "preadv2", "pwritev2", "io_uring_setup", "clone3", "inotify_init",
           "inotify_init1", "fanotify_init")  # fmt: skip

# audit architectures (linux/audit.h)
AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_I386 = 0x40000003
AUDIT_ARCH_AARCH64 = 0xC00000B7
AUDIT_ARCH_ARM = 0x40000028
#: x86-64's x32 ABI: the same audit architecture, numbers with this bit set.
X32_BIT = 0x40000000

#: For each host machine: (audit arch, the blocked numbers) of every ABI its kernel may accept
#: from a process: add_key, request_key, keyctl; then fadvise64 (and fadvise64_64),
#: readahead, cachestat, preadv2, pwritev2, io_uring_setup; then clone3; then inotify_init
#: (none on aarch64), inotify_init1, fanotify_init.
_X86_64 = (248, 249, 250, 221, 187, 451, 327, 328, 425, 435, 253, 294, 300)
_X32 = tuple(X32_BIT | n for n in (248, 249, 250, 221, 187, 451, 546, 547, 425, 435, 253, 294,
                                   300))  # fmt: skip
ARCHES: dict[str, tuple[tuple[int, tuple[int, ...]], ...]] = {
    "x86_64": (
        (AUDIT_ARCH_X86_64, _X86_64 + _X32),
        (
            AUDIT_ARCH_I386,
            (286, 287, 288, 250, 272, 225, 451, 378, 379, 425, 435, 291, 332, 338),
        ),  # fmt: skip
    ),
    "aarch64": (
        (AUDIT_ARCH_AARCH64, (217, 218, 219, 223, 213, 451, 286, 287, 425, 435, 26, 262)),
        (AUDIT_ARCH_ARM, (309, 310, 311, 270, 225, 451, 392, 393, 425, 435, 316, 360, 367)),
    ),
}
#: `unshare`'s and `clone`'s numbers in each audit architecture (x32: its own too): both take
#: their flags as the first argument, checked for CLONE_NEWUSER.
NAMESPACE_CALLS = {
    AUDIT_ARCH_X86_64: (272, 56, X32_BIT | 272, X32_BIT | 56),
    AUDIT_ARCH_I386: (310, 120),
    AUDIT_ARCH_AARCH64: (97, 220),
    AUDIT_ARCH_ARM: (337, 120),
}
CLONE_NEWUSER = 0x10000000
#: `socket`'s numbers in each audit architecture, whose first argument (the domain) a Python
#: worker's filter checks; and i386's `socketcall`, which hides it, refused there outright.
SOCKET_CALLS = {
    AUDIT_ARCH_X86_64: (41, X32_BIT | 41),
    AUDIT_ARCH_I386: (359,),
    AUDIT_ARCH_AARCH64: (198,),
    AUDIT_ARCH_ARM: (281,),
}
SOCKETCALL = {AUDIT_ARCH_I386: (102,)}
#: The one socket domain a run without network may open (AF_UNIX, whose buffers its memory
#: cgroup is charged); any other is refused with EAFNOSUPPORT. AF_INET/AF_INET6 first: a Python
#: worker's calls share its network namespace, in which a TCP socket's TIME_WAIT outlives its
#: call by a minute (a call read an earlier call's message back from /proc/net/tcp, red team
#: rt67), and cgroup v1 charges loopback TCP buffers to no run (red team helper-87, helper-88:
#: 800 MiB held, 40 MB measured). Then every other: a netlink socket sending to itself held
#: 1.8 GiB of kernel memory no cgroup was charged, 10.6 MB measured, OK under a 128 MiB limit
#: (red team helper-89), and AF_VSOCK reaches the machine's host.
UNIX_DOMAIN = 1
#: `ptrace`'s number in each audit architecture (x32: its own), refused in a Python worker.
PTRACE = {AUDIT_ARCH_X86_64: (101, X32_BIT | 521), AUDIT_ARCH_I386: (26,),
          AUDIT_ARCH_AARCH64: (117,), AUDIT_ARCH_ARM: (26,)}  # fmt: skip
#: `flock`'s and `fcntl`'s numbers in each audit architecture (x32: its own; i386 and ARM:
#: `fcntl64` too). A lock lives on the file, not the mount: two runs that can read the same file
#: (the view's read-only libraries, /dev/null) saw each other's locks, and a run could read
#: another's lock's offset and length, 33 bits a call (red team helper-73: two copies of one
#: program split the work and swapped the halves, one run handed its answer to the next run
#: of the same input while it slept, which the CPU clock does not count: accepted as 5-15x
#: faster on the baseline's algorithm). No lock is ever taken in such a sandbox now: `flock`
#: and every command that sets a lock succeed doing nothing (one process's locks never
#: conflict with its own, so a single-process program that locks, SQLite's, works as before).
#: Reading the locks (F_GETLK) stays real: it sees no sandboxed run's lock, so it says what
#: SQLite's WAL mode wants to hear, that nobody else holds one. Programs whose processes
#: exclude each other with file locks lose that exclusion; a repository's sandbox (its tests
#: may need it) keeps real locks.
LOCK_CALLS = {
    AUDIT_ARCH_X86_64: ((73, X32_BIT | 73), (72, X32_BIT | 72)),
    AUDIT_ARCH_I386: ((143,), (55, 221)),
    AUDIT_ARCH_AARCH64: ((32,), (25,)),
    AUDIT_ARCH_ARM: ((143,), (55, 221)),
}
#: fcntl commands that set a lock (F_SETLK, F_SETLKW, their 32-bit ABIs' 64-bit forms, the
#: open file description ones).
SET_LOCK_COMMANDS = (6, 7, 13, 14, 37, 38)
#: fcntl's dnotify command, refused in every sandbox (with EINVAL, as a kernel built without
#: dnotify answers): like an inotify watch, a directory's notification comes from the inode,
#: and a run that asked for it on a directory of the view's files got a signal whenever a
#: concurrent run read one of them, about 100 a second (after helper-77, see the module's
#: docstring).
F_NOTIFY = 1026
ARCHES["amd64"] = ARCHES["x86_64"]
ARCHES["arm64"] = ARCHES["aarch64"]

# classic BPF (linux/filter.h, linux/seccomp.h)
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JSET_K = 0x45
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ENOSYS = 0x00050000 | errno.ENOSYS
_RET_EPERM = 0x00050000 | errno.EPERM
_RET_EINVAL = 0x00050000 | errno.EINVAL
_RET_EAFNOSUPPORT = 0x00050000 | errno.EAFNOSUPPORT
_RET_SUCCESS = 0x00050000  # SECCOMP_RET_ERRNO with errno 0: the call returns 0, doing nothing
_NR_OFFSET = 0  # struct seccomp_data: int nr; __u32 arch; __u64 ip; __u64 args[6]
_ARCH_OFFSET = 4
_ARG0_LOW_OFFSET = 16  # the low half of args[0] (little-endian machines only, as all here)
_ARG1_LOW_OFFSET = 24


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(
    machine: str | None = None,
    refuse_ptrace: bool = False,
    refuse_inet: bool = False,
    isolate_locks: bool = True,
) -> bytes:
    """The filter for `machine` (default: this host's), as bwrap's --seccomp reads it: an
    array of `struct sock_filter`; `ptrace` refused too with `refuse_ptrace`, sockets of
    every domain but AF_UNIX with `refuse_inet` (a run without network, a Python worker's),
    and file locks kept to the run with `isolate_locks` (see `LOCK_CALLS`).
    SandboxUnavailable for a machine not in `ARCHES`."""
    machine = machine or platform.machine()
    abis = ARCHES.get(machine)
    if abis is None:
        raise SandboxUnavailable(
            f"no seccomp filter for this machine ({machine!r}; known: "
            f"{', '.join(sorted(ARCHES))}): refusing to start a sandbox in which the kernel "
            "keyring would outlive a run"
        )
    if refuse_ptrace:
        abis = tuple((arch, nrs + PTRACE[arch]) for arch, nrs in abis)
    if refuse_inet:
        abis = tuple((arch, nrs + SOCKETCALL.get(arch, ())) for arch, nrs in abis)
    # Layout: load arch; one jeq per ABI to its block; unknown arch -> ENOSYS; then each ABI's
    # block (see `_block`), which ends in its own returns.
    blocks = [
        _block(
            nrs,
            NAMESPACE_CALLS[arch],
            SOCKET_CALLS[arch] if refuse_inet else (),
            LOCK_CALLS[arch],
            isolate_locks,
        )
        for arch, nrs in abis
    ]
    out = [_insn(_LD_W_ABS, _ARCH_OFFSET)]
    at = 1 + len(abis) + 1
    for i, (arch, _nrs) in enumerate(abis):
        out.append(_insn(_JEQ_K, arch, jt=at - (1 + i) - 1))
        at += len(blocks[i])
    out.append(_insn(_RET_K, _RET_ENOSYS))
    for block in blocks:
        out.extend(block)
    return b"".join(out)


def _assemble(code: list[tuple[int, int, str | None, str]], labels: dict[str, int]) -> list[bytes]:
    """Instructions (code, k, label jumped to when true or None, label) with their jumps
    resolved to offsets; `labels` maps a label to its instruction's index."""
    out = []
    for pc, (op, k, target, _label) in enumerate(code):
        jt = labels[target] - pc - 1 if target is not None else 0
        out.append(_insn(op, k, jt=jt))
    return out


def _block(
    refused: tuple[int, ...],
    namespace_calls: tuple[int, ...],
    socket_calls: tuple[int, ...],
    lock_calls: tuple[tuple[int, ...], tuple[int, ...]] = ((), ()),
    isolate_locks: bool = True,
) -> list[bytes]:
    """One ABI's instructions: load the number; each refused number jumps to ENOSYS, each
    namespace call to the check of its flags, each socket call to the check of its domain,
    each lock call to its own returns; else allow. The flags check: CLONE_NEWUSER in the first
    argument's low half -> EPERM. The domain check: any but UNIX_DOMAIN -> EAFNOSUPPORT. With
    `isolate_locks`, `flock` -> 0 (success, nothing locked) and `fcntl` with a command setting
    a lock -> 0; `fcntl`'s F_NOTIFY -> EINVAL (as a kernel without dnotify answers); any other
    command allowed."""
    flocks, fcntls = lock_calls
    if not isolate_locks:
        flocks = ()
    code: list[tuple[int, int, str | None, str]] = [(_LD_W_ABS, _NR_OFFSET, None, "")]
    code += [(_JEQ_K, nr, "enosys", "") for nr in refused]
    code += [(_JEQ_K, nr, "flags", "") for nr in namespace_calls]
    code += [(_JEQ_K, nr, "domain", "") for nr in socket_calls]
    code += [(_JEQ_K, nr, "pretend", "") for nr in flocks]
    code += [(_JEQ_K, nr, "fcntl", "") for nr in fcntls]
    code.append((_RET_K, _RET_ALLOW, None, ""))
    code += [(_LD_W_ABS, _ARG0_LOW_OFFSET, None, "flags"), (_JSET_K, CLONE_NEWUSER, "eperm", ""),
             (_RET_K, _RET_ALLOW, None, ""), (_RET_K, _RET_EPERM, None, "eperm")]  # fmt: skip
    if socket_calls:
        code.append((_LD_W_ABS, _ARG0_LOW_OFFSET, None, "domain"))
        code.append((_JEQ_K, UNIX_DOMAIN, "unix", ""))
        code += [(_RET_K, _RET_EAFNOSUPPORT, None, ""), (_RET_K, _RET_ALLOW, None, "unix")]
    if fcntls:
        code.append((_LD_W_ABS, _ARG1_LOW_OFFSET, None, "fcntl"))
        code.append((_JEQ_K, F_NOTIFY, "einval", ""))
        if isolate_locks:
            code += [(_JEQ_K, cmd, "pretend", "") for cmd in SET_LOCK_COMMANDS]
        code += [(_RET_K, _RET_ALLOW, None, ""), (_RET_K, _RET_EINVAL, None, "einval")]
    if isolate_locks and (flocks or fcntls):
        code.append((_RET_K, _RET_SUCCESS, None, "pretend"))
    code.append((_RET_K, _RET_ENOSYS, None, "enosys"))
    labels = {label: pc for pc, (_op, _k, _t, label) in enumerate(code) if label}
    return _assemble(code, labels)


def filter_fd(
    machine: str | None = None,
    refuse_ptrace: bool = False,
    refuse_inet: bool = False,
    isolate_locks: bool = True,
) -> int:
    """A new memfd holding `program(machine, refuse_ptrace, refuse_inet, isolate_locks)`, at
    offset 0, inheritable (to pass to bwrap, which reads it to the end); the caller closes it
    once bwrap has started."""
    data = program(machine, refuse_ptrace, refuse_inet, isolate_locks)
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
