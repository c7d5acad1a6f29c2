"""An IPC namespace of a call's own: SysV shared memory, queues and semaphore sets (and POSIX
message queues) a call makes are in no other call's, and the kernel frees them with its last
process."""

from __future__ import annotations

import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)
#: Looked up once, in the zygote: a call's child that looked it up itself would build the
#: function pointer (and write into the library object's dict) on pages it then copies.
_unshare = _libc.unshare
_CLONE_NEWIPC = 0x08000000
_CAP_SYS_ADMIN = 21
_PR_CAPBSET_DROP = 24


def own(drop_admin: bool = False) -> str:
    """Move this process (and so what it forks next) into a new IPC namespace; with
    `drop_admin`, then drop CAP_SYS_ADMIN, which it needed only for that (a call's child needs
    not: its drop to the calls' uid clears every capability). '' or why it failed."""
    if _unshare(_CLONE_NEWIPC) != 0:
        return f"unshare(CLONE_NEWIPC): {os.strerror(ctypes.get_errno())}"
    if not drop_admin:
        return ""
    _libc.prctl(_PR_CAPBSET_DROP, _CAP_SYS_ADMIN, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable; for caps 0-31, 32-63
    if _libc.capget(header, data) != 0:
        return f"capget: {os.strerror(ctypes.get_errno())}"
    for i in (0, 1, 2):
        data[i] &= ~(1 << _CAP_SYS_ADMIN)
    if _libc.capset(header, data) != 0:
        return f"capset: {os.strerror(ctypes.get_errno())}"
    return ""
