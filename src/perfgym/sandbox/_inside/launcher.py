"""The warm launcher: lives inside one bubblewrap and forks a fresh private namespace per run.

Protocol (one SOCK_SEQPACKET socket from the host): each message is a small JSON header with two
file descriptors attached: a memfd holding the run's spec and the write end of the result pipe.
The launcher forks; the child becomes PID 1 of a new PID namespace, unshares its mount namespace,
mounts a fresh tmpfs work dir and /proc, applies binds and hidden paths, and runs the supervisor,
which writes the result JSON straight to the host's pipe.
"""

from __future__ import annotations

import array
import json
import os
import signal
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import linux  # noqa: E402
import supervisor  # noqa: E402

_MAX_FDS = 4


def _recv(sock: socket.socket) -> tuple[dict, list[int]] | None:
    fds = array.array("i")
    msg, ancdata, _flags, _addr = sock.recvmsg(65536, socket.CMSG_SPACE(_MAX_FDS * fds.itemsize))
    if not msg:
        return None
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    return json.loads(msg), list(fds)


def _prepare_view(spec: dict) -> None:
    """Inside the run's fresh mount namespace: work dir, /proc, binds, hidden paths."""
    linux.unshare(linux.CLONE_NEWNS)
    linux.mount("none", "/", None, linux.MS_REC | linux.MS_PRIVATE)
    view = spec["view"]
    # Open bind sources before /tmp is covered: a source may live under the host's /tmp.
    sources = [(os.open(src, os.O_PATH), os.path.isdir(src)) for src, _d, _w in view["binds"]]
    nosuid = linux.MS_NOSUID | linux.MS_NODEV
    linux.mount("tmpfs", "/tmp", "tmpfs", nosuid, f"size={int(view['disk_bytes'])},mode=1777")
    linux.mount("proc", "/proc", "proc", nosuid | linux.MS_NOEXEC)
    for sub in ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"):
        if os.path.exists(sub):
            linux.mount(sub, sub, None, linux.MS_BIND | linux.MS_REC)
            linux.mount("none", sub, None, linux.MS_REMOUNT | linux.MS_BIND | linux.MS_RDONLY)
    for (_src, dst, writable), (fd, is_dir) in zip(view["binds"], sources, strict=True):
        if is_dir:
            os.makedirs(dst, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            open(dst, "ab").close()
        linux.mount(f"/proc/self/fd/{fd}", dst, None, linux.MS_BIND | linux.MS_REC)
        os.close(fd)
        flags = linux.MS_REMOUNT | linux.MS_BIND | linux.MS_NOSUID
        if not writable:
            flags |= linux.MS_RDONLY
        linux.mount("none", dst, None, flags)
    for path in view["hide"]:
        linux.mount("tmpfs", path, "tmpfs", nosuid, "size=4k,mode=0755")


def _run_child(spec_fd: int, result_fd: int) -> None:
    """The forked child: PID 1 of its own namespace. Never returns."""
    code = 0
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        linux.die_with_parent(signal.SIGKILL)
        size = os.fstat(spec_fd).st_size
        spec = json.loads(os.pread(spec_fd, size, 0))
        os.close(spec_fd)
        _prepare_view(spec)
        result = supervisor.supervise(spec)
    except BaseException as exc:  # noqa: BLE001 - any failure here is the sandbox's
        result = {"sandbox_error": f"{type(exc).__name__}: {exc}"}
        code = 1
    try:
        data = memoryview(json.dumps(result).encode())
        while data:
            data = data[os.write(result_fd, data) :]
    finally:
        os._exit(code)


def main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # runs are reaped by the kernel
    own_pidns = os.open("/proc/self/ns/pid", os.O_RDONLY)
    os.chdir("/")
    while True:
        got = _recv(sock)
        if got is None:
            return  # host closed the socket
        _header, fds = got
        if len(fds) != 2:
            for fd in fds:
                os.close(fd)
            continue
        spec_fd, result_fd = fds
        try:
            linux.setns(own_pidns, linux.CLONE_NEWPID)  # reset so unshare() may make a new one
            linux.unshare(linux.CLONE_NEWPID)
            pid = os.fork()
        except OSError as exc:
            # One run could not be started (e.g. the kernel is short of PIDs or namespaces):
            # say so to that run only; the launcher and every other run carry on.
            _report(result_fd, f"could not start the run: {exc}")
            os.close(spec_fd)
            os.close(result_fd)
            continue
        if pid == 0:
            sock.close()
            os.close(own_pidns)
            _run_child(spec_fd, result_fd)
        os.close(spec_fd)
        os.close(result_fd)


def _report(result_fd: int, message: str) -> None:
    try:
        os.write(result_fd, json.dumps({"sandbox_error": message}).encode())
    except OSError:
        pass


if __name__ == "__main__":
    main()
