"""The warm launcher: lives inside one bubblewrap and forks a fresh private namespace per run.

Protocol (one SOCK_SEQPACKET socket from the host): each message is a small JSON header with two
file descriptors attached: a memfd holding the run's spec and the write end of the result pipe.
The run's process is forked *before* its request arrives: a spare, already PID 1 of a new PID
namespace with its own mount and IPC namespaces and /proc, reads the request straight from the host's
socket and tells the launcher, which forks its replacement (when the run ends, while others are
in flight; one spare is always ready). Given the exec stub's path (argv[2]), each spare starts
its run's stub before the request too (see `stub.Stub`). The spare mounts a fresh tmpfs work
dir, applies binds and hidden paths, and runs the supervisor, which writes the result to the
host's pipe as an 8-byte length and the JSON (the host need not wait for the run to exit).
"""

from __future__ import annotations

import array
import base64
import json
import os
import select
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import linux  # noqa: E402
import supervisor  # noqa: E402
from stub import Stub, orders  # noqa: E402

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


_NOSUID = linux.MS_NOSUID | linux.MS_NODEV


def _prepare_namespace() -> None:
    """In a spare, before any request: its own mount namespace, a /proc of its PID namespace,
    and an IPC namespace of its own: no SysV segment, queue or semaphore set (nor POSIX message
    queue) of another run is there, and the kernel frees the run's own when its last process
    exits."""
    linux.unshare(linux.CLONE_NEWNS | linux.CLONE_NEWIPC)
    linux.mount("none", "/", None, linux.MS_REC | linux.MS_PRIVATE)
    linux.mount("proc", "/proc", "proc", _NOSUID | linux.MS_NOEXEC)
    for sub in ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"):
        if os.path.exists(sub):
            linux.mount(sub, sub, None, linux.MS_BIND | linux.MS_REC)
            linux.mount("none", sub, None, linux.MS_REMOUNT | linux.MS_BIND | linux.MS_RDONLY)


#: The host's root as the launcher sees it (perfgym.sandbox.view.HOST_MOUNT): bind sources are
#: looked up there, and each spare covers it before its program starts.
HOST_MOUNT = "/run/perfgym/host"


def _host(path: str) -> str:
    """Host `path` (absolute, resolved by the host) under HOST_MOUNT."""
    return HOST_MOUNT + os.path.normpath("/" + path)


def _prepare_view(spec: dict) -> None:
    """Once the request is known: work dir, binds, hidden paths; then the host's root is
    covered, so the program's view is the allow-list alone."""
    view = spec["view"]
    host = os.path.isdir(HOST_MOUNT)
    # Open bind sources first: a source may live under the host's /tmp.
    sources = []
    for src, _d, _w in view["binds"]:
        path = _host(src) if host else src
        sources.append((os.open(path, os.O_PATH), os.path.isdir(path)))
    nosuid = _NOSUID
    for private, size in view["mounts"]:  # the work dir; POSIX shm and semaphores
        linux.mount("tmpfs", private, "tmpfs", nosuid, f"size={int(size)},mode=1777")
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
    if host:
        # Covered, not unmounted: a lazy unmount waits for an RCU grace period (0.1 ms median,
        # 1.6 ms p90 on this VM, on every run's path), a tmpfs on top costs 17 us. What lies
        # beneath cannot be reached: the program has no capability to unmount it, holds no
        # descriptor into it, and in a user namespace of its own the mounts it inherits are
        # locked together (the kernel refuses to unmount the cover, EINVAL).
        linux.mount("tmpfs", HOST_MOUNT, "tmpfs", _NOSUID | linux.MS_NOEXEC | linux.MS_RDONLY,
                    "size=4k,mode=0755")  # fmt: skip
        if os.listdir(HOST_MOUNT):
            raise RuntimeError(f"the host's root is still visible at {HOST_MOUNT}")


def _rehearse() -> None:
    """Walk a run's code paths once on harmless inputs, in a spare that waits for its request.

    A spare is a fresh fork of this launcher: the first time it runs any piece of code, every
    page that code writes (reference counts, allocator state, the interpreter's inline caches)
    is copied, at a page fault each. Rehearsing takes most of them off the run's critical path:
    a /bin/true run took 134 minor faults in its spare, 61 after a rehearsal."""
    spec = {"argv": ["true"], "env": {"PATH": "/bin"}, "stdin": "", "files": {}, "cpu": None,
            "uid": 65534, "limits": {"cpu_s": 1, "file_size_bytes": 1, "open_files": 1,
                                     "max_processes": 1},
            "view": {"mounts": [["/tmp", 4096]], "binds": [], "hide": []}}  # fmt: skip
    spec = json.loads(json.dumps(spec))
    base64.b64decode(base64.b64encode(b"rehearsal"))
    linux.mount("tmpfs", "/tmp", "tmpfs", _NOSUID, "size=4k,mode=1777")
    linux.umount("/tmp")
    tree = supervisor.Tree({})
    tree.held.start()
    now = time.monotonic()
    tree.sample(now)
    tree.close_at(now)
    tree.cpu_ns(supervisor._rusage_ns())
    orders(spec, [])
    r, w = os.pipe()
    poller = select.poll()
    poller.register(r, select.POLLIN | select.POLLHUP)
    os.write(w, b"x")
    for _fd, _ev in poller.poll(0):
        os.read(r, 1)
    poller.unregister(r)
    os.close(r)
    os.close(w)
    json.dumps({"stdout": supervisor._b64(b""), "wall_s": now, "files": {}})


def _early_stub(path: str | None) -> Stub | None:
    """The run's exec stub, started now; None when it cannot be (the supervisor then starts one
    for the run and reports why it fails, instead of this spare dying over and over)."""
    if not path:
        return None
    try:
        return Stub(path)
    except OSError:
        return None


def _spare(host: socket.socket, taken_w: int, token: int, stub_path: str | None) -> None:
    """A forked spare: PID 1 of its own PID namespace, taking the next run straight from the
    host's socket; it tells the launcher (`token` on `taken_w`) so another spare is forked.
    With `stub_path`, the run's exec stub is started before the request (see `stub.Stub`)."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        linux.die_with_parent(signal.SIGKILL)
        _prepare_namespace()
        stub = _early_stub(stub_path)
        try:
            _rehearse()
        except Exception:  # noqa: BLE001 - only a speed-up: the run itself reports real faults
            pass
        while True:
            got = _recv(host)
            if got is None:
                os._exit(0)  # the host closed the socket
            if len(got[1]) in (2, 3):  # spec, result [, stdin]
                break
            for fd in got[1]:  # not a run request: drop it and keep waiting
                os.close(fd)
        os.write(taken_w, token.to_bytes(8, "little"))
    except BaseException:  # noqa: BLE001 - the launcher sees it exit and forks another
        os._exit(1)
    host.close()
    os.close(taken_w)
    spec_fd, result_fd, *stdin_fd = got[1]
    for fd in got[1]:
        os.set_inheritable(fd, False)  # received descriptors must not reach the program
    _run_child(spec_fd, result_fd, stub, stdin_fd[0] if stdin_fd else None)


def _run_child(spec_fd: int, result_fd: int, stub: Stub | None, stdin_fd: int | None) -> None:
    """The spare with its request (`stdin_fd`: the program's stdin, sent as a sealed memfd
    when the host did not inline it in the spec). Never returns."""
    code = 0
    try:
        size = os.fstat(spec_fd).st_size
        spec = json.loads(os.pread(spec_fd, size, 0))
        os.close(spec_fd)
        _prepare_view(spec)
        result = supervisor.supervise(spec, stub, stdin_fd)
    except BaseException as exc:  # noqa: BLE001 - any failure here is the sandbox's
        result = {"sandbox_error": f"{type(exc).__name__}: {exc}"}
        code = 1
    try:
        _answer(result_fd, result)
    finally:
        os._exit(code)


def _answer(result_fd: int, result: dict) -> None:
    """8-byte little-endian length, then the JSON: the host reads exactly that, not to EOF."""
    body = json.dumps(result).encode()
    data = memoryview(len(body).to_bytes(8, "little") + body)
    while data:
        data = data[os.write(result_fd, data) :]
    # Let the host read it now. The woken host thread often lands on this CPU, and without a
    # yield it waited for this process's exit (the namespace's teardown): 1.0 ms median per
    # run on this 2-core VM, 0.15 ms with it.
    os.sched_yield()


class _Spares:
    """Pre-forked spares. Up to `size` wait idle; while runs are in flight the replacement of a
    taken spare waits until its run ends (a fork of this process takes ~1 ms of CPU and holds
    the cgroup lock a starting run needs), but one spare is always kept ready."""

    def __init__(self, host: socket.socket, size: int, stub_path: str | None) -> None:
        self.host = host
        self.size = size
        self.stub_path = stub_path
        self.own_pidns = os.open("/proc/self/ns/pid", os.O_RDONLY)
        self.taken_r, self.taken_w = os.pipe()
        self.idle: dict[int, int] = {}  # token -> pidfd of a spare waiting for a run
        self.busy: dict[int, int] = {}  # token -> pidfd of a spare running one
        self._tokens = 0

    def wanted(self) -> int:
        return max(1, self.size - len(self.busy))

    def fill(self, poller: select.poll) -> None:
        while len(self.idle) < self.wanted():
            self._tokens += 1
            token = self._tokens
            linux.setns(self.own_pidns, linux.CLONE_NEWPID)  # reset, so unshare() makes a new one
            linux.unshare(linux.CLONE_NEWPID)
            pid = os.fork()
            if pid == 0:
                os.close(self.own_pidns)
                os.close(self.taken_r)
                for pidfd in (*self.idle.values(), *self.busy.values()):
                    os.close(pidfd)
                _spare(self.host, self.taken_w, token, self.stub_path)
            pidfd = os.pidfd_open(pid)
            self.idle[token] = pidfd
            poller.register(pidfd, select.POLLIN)

    def taken(self, token: int) -> None:
        pidfd = self.idle.pop(token, None)
        if pidfd is not None:
            self.busy[token] = pidfd

    def exited(self, pidfd: int, poller: select.poll) -> None:
        """A spare's process ended: its run is over, or it died idle."""
        for table in (self.idle, self.busy):
            for token, fd in list(table.items()):
                if fd == pidfd:
                    del table[token]
                    poller.unregister(pidfd)
                    os.close(pidfd)
                    return


def main() -> None:
    host = socket.socket(fileno=int(sys.argv[1]))
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # runs are reaped by the kernel
    linux.harden()  # a program exec'd below can never hold or regain a capability
    os.chdir("/")
    stub_path = sys.argv[2] if len(sys.argv) > 2 and os.access(sys.argv[2], os.X_OK) else None
    spares = _Spares(host, size=max(2, min(4, len(os.sched_getaffinity(0)))), stub_path=stub_path)
    poller = select.poll()
    poller.register(host, 0)  # hang-up only: the spares read the requests themselves
    poller.register(spares.taken_r, select.POLLIN)
    fork_failed = False
    while True:
        try:
            spares.fill(poller)
            fork_failed = False
        except OSError as exc:
            # E.g. the kernel is short of PIDs: answer a waiting request with the reason (the
            # launcher and every other run carry on), and try again shortly.
            fork_failed = True
            if not spares.idle:
                _refuse_waiting(host, f"could not start the run: {exc}")
        for fd, events in poller.poll(50 if fork_failed else None):
            if fd == host.fileno():
                if events & (select.POLLHUP | select.POLLERR):
                    return  # the host closed the socket: the spares see it too and exit
            elif fd == spares.taken_r:
                data = os.read(spares.taken_r, 8 * 64)
                for i in range(0, len(data) - 7, 8):
                    spares.taken(int.from_bytes(data[i : i + 8], "little"))
            else:
                spares.exited(fd, poller)


def _refuse_waiting(host: socket.socket, message: str) -> None:
    """Without any spare, answer one pending request (if any) with `message`."""
    ready = select.select([host], [], [], 0)[0]
    if not ready:
        return
    host.setblocking(False)
    try:
        got = _recv(host)
    except (BlockingIOError, OSError, ValueError):
        return
    finally:
        host.setblocking(True)
    if got is None:
        return
    fds = got[1]
    if len(fds) in (2, 3):
        _report(fds[1], message)
    for fd in fds:
        os.close(fd)


def _report(result_fd: int, message: str) -> None:
    try:
        _answer(result_fd, {"sandbox_error": message})
    except OSError:
        pass


if __name__ == "__main__":
    main()
