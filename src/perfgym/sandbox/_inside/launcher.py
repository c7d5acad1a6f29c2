"""The warm launcher: lives inside one bubblewrap and forks a fresh private namespace per run.

Protocol (one SOCK_SEQPACKET socket from the host): each message is a small JSON header naming
the file descriptors attached, in order, and holding the run's spec ('spec') unless a memfd
does (a large one). The descriptors: the write end of the result pipe ('result'), and optionally
the spec's memfd ('spec'), the program's stdin as a sealed memfd ('stdin') and the run's cgroup
counter files, open ('cpu', 'usage', 'peak': see `process_tree.Tree`).

argv: the socket's fd, the private mounts most runs ask for (JSON [[path, size], ...]), and
optionally the exec stub's path.

The run's process is forked *before* its request arrives: a spare, already PID 1 of a new PID
namespace with its own mount and IPC namespaces and /proc, its work dir mounted and the host's
root covered, reads the request straight from the host's socket. Given the exec stub's path,
each spare starts its run's stub before the request too (see `stub.Stub`). With its request,
the spare resizes its work dir if the run asks for another size, applies binds and hidden paths,
and runs the supervisor, which writes the result to the host's pipe as an 8-byte length and the
JSON (the host need not wait for the run to exit). A spare tells the launcher as soon as it
has its request, and the launcher forks its replacement (when the run ends, while others are in
flight; one spare is always ready). The launcher is SCHED_BATCH, so that wake-up preempts no
run's set-up; a spare goes back to the launcher's own policy for its set-up and steps aside
only to let its program go (which gets that policy too).
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
import spare_view  # noqa: E402
import supervisor  # noqa: E402
from stub import Stub, orders  # noqa: E402

#: The descriptors a request may carry, by name ('result' it must).
_NAMES = ("spec", "result", "stdin", "cpu", "usage", "peak", "tcp_usage", "tcp_peak", "join0",
          "join1", "join2", "join3")  # fmt: skip
_MAX_FDS = len(_NAMES) + 2
#: The largest message a spare reads (the host inlines specs well under it).
_MAX_MESSAGE = 65536
_ANCILLARY = socket.CMSG_SPACE(_MAX_FDS * array.array("i").itemsize)
#: Plain ints: `socket`'s flags are an `enum.IntFlag`, whose `|` and `&` run Python code of
#: the enum module, cold in a fresh spare: 0.13 ms and 21 copy-on-write faults of every run.
_TRUNCATED = int(socket.MSG_TRUNC | socket.MSG_CTRUNC)
_CMSG_CLOEXEC = int(socket.MSG_CMSG_CLOEXEC)


def _recv(sock: socket.socket) -> tuple[dict[str, int], dict | None] | None:
    """The next request (see `_parse`); None when the host closed the socket."""
    msg, ancdata, flags, _addr = sock.recvmsg(_MAX_MESSAGE, _ANCILLARY, _CMSG_CLOEXEC)
    # (close-on-exec as they arrive: no received descriptor may reach the program)
    if not msg:
        return None
    return _parse(msg, ancdata, flags)


def _parse(msg: bytes, ancdata: list, flags: int) -> tuple[dict[str, int], dict | None]:
    """A request's descriptors by name and its spec when inline (else it is in the 'spec'
    memfd). A message that is not a well-formed request gets its descriptors closed and comes
    back as ({}, None)."""
    fds = array.array("i")
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    try:
        header = json.loads(msg)
        names, spec = header["fds"], header.get("spec")
        ok = (
            not flags & _TRUNCATED
            and isinstance(names, list)
            and len(names) == len(fds)
            and len(set(names)) == len(names)
            and all(n in _NAMES for n in names)
            and "result" in names
            and (isinstance(spec, dict) != ("spec" in names))  # inline, or a memfd: one of them
        )
    except (ValueError, KeyError, TypeError, RecursionError):  # nested past the limit: helper-68
        ok = False
    if not ok:
        for fd in fds:
            os.close(fd)
        return {}, None
    return dict(zip(names, fds, strict=True)), spec


_REHEARSAL = json.dumps({"fds": ["result"], "spec": {
    "argv": ["true", "-S", "-c", "pass"], "stdin": "", "files": {}, "collect": [],
    "env": {"PATH": "/bin:/usr/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "X": "/x", "Y": "/y"},
    "limits": {"wall_s": 1.0, "cpu_s": 1.0, "memory_mb": 64.0, "max_processes": 1,
               "stdout_bytes": 1, "stderr_bytes": 1, "file_size_bytes": 1, "disk_bytes": 4096,
               "open_files": 1, "network": False, "kill_on_output_limit": True},
    "cpu": None, "uid": 65534, "gid": 65534, "sample_rate_hz": 500.0,
    "cgroups": {"memory": "/nonexistent/m", "pids": "/nonexistent/p", "cpuacct": "/nonexistent/c"},
    "exec_stub": "/nonexistent/stub", "view": {"mounts": [["/tmp", 4096]], "binds": [], "hide": []},
}}).encode()  # fmt: skip


def _rehearse() -> None:
    """Walk a run's code paths once on harmless inputs, in a spare that waits for its request.

    A spare is a fresh fork of this launcher: the first time it runs any piece of code, every
    page that code writes (reference counts, allocator state, the interpreter's inline caches)
    is copied, at a page fault each. Rehearsing takes most of them off the run's critical path:
    a /bin/true run took 134 minor faults in its spare, 61 after a rehearsal."""
    r, w = os.pipe()
    # A request shaped as the host's are (about as many keys and strings), through the same
    # parse: its allocations take the pages the real one's will reuse.
    got, spec = _parse(_REHEARSAL, [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                     array.array("i", [w]).tobytes())], 0)  # fmt: skip
    os.close(got["result"])
    os.close(r)
    assert spec is not None
    base64.b64decode(base64.b64encode(b"rehearsal"))
    linux.mount("tmpfs", "/tmp", "tmpfs", spare_view.NOSUID, "size=4k,mode=1777")
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


def _early_stub(path: str | None, back: supervisor.Sched) -> Stub | None:
    """The run's exec stub, started now with the scheduling policy `back`; None when it
    cannot be (the supervisor then starts one for the run and reports why it fails, instead of
    this spare dying over and over)."""
    if not path:
        return None
    try:
        return Stub(path, back)
    except OSError:
        return None


def _spare(
    host: socket.socket,
    taken_w: int,
    token: int,
    stub_path: str | None,
    mounts: list,
    back: supervisor.Sched,
) -> None:
    """A forked spare: PID 1 of its own PID namespace, taking the next run straight from the
    host's socket; it tells the launcher (`token` on `taken_w`) so another spare is forked.
    With `stub_path`, the run's exec stub is started before the request (see `stub.Stub`)."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        linux.die_with_parent(signal.SIGKILL)
        spare_view.prepare_namespace()
        supervisor.step_back(back)  # SCHED_OTHER until its program is let go
        stub = _early_stub(stub_path, back)
        try:
            _rehearse()
        except Exception:  # noqa: BLE001 - only a speed-up: the run itself reports real faults
            pass
        ready = spare_view.Ready.build(mounts)
        while True:
            got = _recv(host)
            if got is None:
                os._exit(0)  # the host closed the socket
            if got[0]:
                break  # else not a run request: dropped; keep waiting
        # Taken: the launcher forks a replacement now (were it told only once the program
        # runs, requests with a slow set-up, thousands of files, would starve every other
        # run: red team rt66). It is SCHED_BATCH, so its wake-up does not preempt this run.
        os.write(taken_w, token.to_bytes(8, "little"))
    except BaseException:  # noqa: BLE001 - the launcher sees it exit and forks another
        os._exit(1)
    host.close()
    os.close(taken_w)
    _run_child(*got, ready, stub, back)


def _run_child(
    fds: dict[str, int],
    spec: dict | None,
    ready: spare_view.Ready,
    stub: Stub | None,
    back: supervisor.Sched,
) -> None:
    """The spare with its request (see `_recv`; 'stdin': the program's stdin, sent as a
    sealed memfd when the host did not inline it in the spec). Never returns."""
    code = 0
    try:
        if spec is None:
            spec_fd = fds["spec"]
            size = os.fstat(spec_fd).st_size
            spec = json.loads(os.pread(spec_fd, size, 0))
            os.close(spec_fd)
        spare_view.prepare_view(spec, ready)
        spare_view.show_own_counter(spec, ready)
        wanted = ("cpu", "usage", "peak", "tcp_usage", "tcp_peak")
        counters = {k: fds[k] for k in wanted if k in fds}
        joins = [fds[k] for k in sorted(fds) if k.startswith("join")]
        result = supervisor.supervise(spec, stub, fds.get("stdin"), aside=(back,),
                                      counters=counters, joins=joins)  # fmt: skip
    except BaseException as exc:  # noqa: BLE001 - any failure here is the sandbox's
        result = {"sandbox_error": f"{type(exc).__name__}: {exc}"}
        code = 1
    try:
        _answer(fds["result"], result)
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

    def __init__(
        self,
        host: socket.socket,
        size: int,
        stub_path: str | None,
        mounts: list,
        back: supervisor.Sched,
    ) -> None:
        self.host = host
        self.size = size
        self.stub_path = stub_path
        self.mounts = mounts
        self.back = back
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
                _spare(self.host, self.taken_w, token, self.stub_path, self.mounts, self.back)
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
    host.set_inheritable(False)  # forked spares keep it; no stub they spawn starts with it
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # runs are reaped by the kernel
    linux.harden()  # a program exec'd below can never hold or regain a capability
    os.chdir("/")
    mounts = [(str(p), int(n)) for p, n in json.loads(sys.argv[2])]
    stub_path = sys.argv[3] if len(sys.argv) > 3 and os.access(sys.argv[3], os.X_OK) else None
    size = max(2, min(4, len(os.sched_getaffinity(0))))
    # SCHED_BATCH (see supervisor.step_aside): a spare's token wakes this process while the
    # spare sets its run up, and the wake-up must not preempt it. Each spare steps back to
    # the policy the launcher started with (supervisor.step_back), its program gets it too.
    back = supervisor.step_aside()
    spares = _Spares(host, size=size, stub_path=stub_path, mounts=mounts, back=back)
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
    if not got or not got[0]:
        return
    _report(got[0]["result"], message)
    for fd in got[0].values():
        os.close(fd)


def _report(result_fd: int, message: str) -> None:
    try:
        _answer(result_fd, {"sandbox_error": message})
    except OSError:
        pass


if __name__ == "__main__":
    main()
