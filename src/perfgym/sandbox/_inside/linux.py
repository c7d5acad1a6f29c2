"""Thin ctypes wrappers for the Linux calls the in-sandbox code needs (stdlib only)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2

PR_SET_NO_NEW_PRIVS = 38
PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
PR_SET_SECUREBITS = 28

_LINUX_CAPABILITY_VERSION_3 = 0x20080522
CAP_LAST_CAP_GUESS = 63


def _check(ret: int, what: str) -> int:
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return ret


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def setns(fd: int, nstype: int) -> None:
    _check(_libc.setns(ctypes.c_int(fd), ctypes.c_int(nstype)), "setns")


def mount(
    source: str, target: str, fstype: str | None, flags: int, data: str | None = None
) -> None:
    _check(
        _libc.mount(
            source.encode(),
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {source} -> {target}",
    )


def umount(target: str, flags: int = MNT_DETACH) -> None:
    _check(_libc.umount2(target.encode(), ctypes.c_int(flags)), f"umount {target}")


def prctl(option: int, arg2: int = 0, arg3: int = 0, arg4: int = 0, arg5: int = 0) -> int:
    return _check(
        _libc.prctl(
            ctypes.c_int(option),
            ctypes.c_ulong(arg2),
            ctypes.c_ulong(arg3),
            ctypes.c_ulong(arg4),
            ctypes.c_ulong(arg5),
        ),
        f"prctl({option})",
    )


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def drop_all_capabilities() -> None:
    """Empty the bounding, ambient, effective, permitted and inheritable capability sets."""
    try:
        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    except OSError:
        pass
    for cap in range(CAP_LAST_CAP_GUESS + 1):
        try:
            prctl(PR_CAPBSET_DROP, cap)
        except OSError:
            break  # EINVAL past the last capability; EPERM when already dropped by bwrap
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")


def no_new_privs() -> None:
    prctl(PR_SET_NO_NEW_PRIVS, 1)


#: True once `harden()` ran in this process (inherited by its forks).
HARDENED = False
CAP_SETGID, CAP_SETUID, CAP_SETPCAP = 6, 7, 8
#: What an exec below a hardened process may still hold as root: enough to drop to the run's
#: uid (the exec stub, itself exec'd as root) and then to empty the bounding set.
EXEC_KEEPS = (CAP_SETGID, CAP_SETUID, CAP_SETPCAP)


def drop_bounding(keep: tuple[int, ...] = ()) -> None:
    """Remove every capability but `keep` from the bounding set (needs CAP_SETPCAP)."""
    for cap in range(CAP_LAST_CAP_GUESS + 1):
        if cap in keep:
            continue
        try:
            prctl(PR_CAPBSET_DROP, cap)
        except OSError as exc:
            if exc.errno == 22:  # EINVAL: past the last capability this kernel knows
                break
            raise


def clear_inheritable() -> None:
    """Empty the inheritable and ambient sets, keeping the permitted and effective ones."""
    try:
        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    except OSError:
        pass
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capget(ctypes.byref(header), ctypes.byref(data)), "capget")
    if data[0].inheritable or data[1].inheritable:
        data[0].inheritable = data[1].inheritable = 0
        _check(_libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")


def harden() -> None:
    """no_new_privs, and a bounding set of only `EXEC_KEEPS`, for this process and its forks.

    The process keeps its own effective capabilities (the launcher still mounts and unshares);
    the bounding set only limits what an exec can hold, no_new_privs forbids setuid and file-
    capability gains, and every run drops the last three before its program starts, so a
    program can never hold or regain a capability."""
    global HARDENED
    no_new_privs()
    clear_inheritable()
    drop_bounding(keep=EXEC_KEEPS)
    HARDENED = True


def die_with_parent(sig: int = 9) -> None:
    prctl(PR_SET_PDEATHSIG, sig)
