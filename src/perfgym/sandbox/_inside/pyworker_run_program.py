"""Program runs of the warm Python worker (mode "program"): a whole stdio program as
`python3 prog.py` would run, its output captured under caps (the child's setup is
`pyworker_program`). Stdlib only; imported by `pyworker_server.py` inside the worker's sandbox.
"""

from __future__ import annotations

import _signal
import binascii
import os
import select
import time
import types

import pyworker_program
import worker_child
import worker_cleanup
import worker_framing
import worker_meter
from pyworker_request import (
    CPU_POLL_S,
    _await_turn,
    _close_inherited,
    _compile,
    _flush_stdio,
    _forget,
    _over_limit,
)


def _program_child(
    req: dict, code: types.CodeType, fds: dict[str, int], uid: int, vsize: int
) -> None:
    """The per-run child of program mode. Never returns; its exit status is the program's."""
    try:
        for target, name in ((0, "in"), (1, "out_w"), (2, "err_w")):
            os.dup2(fds[name], target)
        _close_inherited((fds["res"], fds["setup"]))
        _forget(req)
        pyworker_program.place_script(req["argv"][0], req["source"])
        worker_child.confine(req["limits"], uid, vsize)
        main = pyworker_program.become_main(req)
        os.write(fds["setup"], b"ok")
        os.close(fds["setup"])  # nothing the program writes can pass for the worker's report
    except BaseException as exc:  # noqa: BLE001 - the worker's own failure, not the program's
        os.write(fds["setup"], f"{type(exc).__name__}: {exc}".encode()[:2000])
        os._exit(70)
    os._exit(pyworker_program.run_main(code, main, fds["res"]))


def _run_program(req: dict, uid: int) -> dict:
    """Fork a program-mode child, feed its stdin, capture stdout/stderr under the caps (as the
    sandbox's supervisor: cut and stop at a cap), enforce the wall limit, then clean up."""
    key, code, err = _compile(req["source"], req["argv"][0], req["limits"])
    if code is None:
        return {"status": "COMPILE_ERROR", "error": err}
    lim = req["limits"]
    fds = {"in": os.memfd_create("stdin", 0), "res": os.memfd_create("res", 0)}
    os.write(fds["in"], binascii.a2b_base64(req.get("stdin", "")))
    os.lseek(fds["in"], 0, os.SEEK_SET)
    out_r, fds["out_w"] = os.pipe()
    err_r, fds["err_w"] = os.pipe()
    vsize, server_rss = worker_meter.statm()
    setup_r, fds["setup"] = os.pipe()
    _flush_stdio()
    _await_turn()
    start = worker_meter.meter()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _program_child(req, code, fds, uid, vsize)
    for name in ("in", "out_w", "err_w", "setup"):
        os.close(fds[name])
    caps = {out_r: int(lim["stdout_bytes"]), err_r: int(lim["stderr_bytes"])}
    bufs: dict[int, bytearray] = {out_r: bytearray(), err_r: bytearray()}
    cut: dict[int, bool] = {out_r: False, err_r: False}
    killed, reason = "", ""

    def kill(status: str, why: str) -> None:
        nonlocal killed, reason
        if not killed:
            killed, reason = status, why
        try:
            os.kill(-1, _signal.SIGKILL)  # every process but this one (PID 1)
        except ProcessLookupError:
            pass

    def read(fd: int) -> bool:
        data = os.read(fd, 65536)
        if not data:
            poller.unregister(fd)
            return False
        room = caps[fd] - len(bufs[fd])
        bufs[fd] += data[: max(room, 0)]
        if len(data) > room:
            cut[fd] = True
            if lim.get("kill_on_output_limit", True):
                which = "stdout" if fd == out_r else "stderr"
                kill("OUTPUT_LIMIT", f"{which} exceeded {caps[fd]} bytes")
        return True

    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    for fd in (out_r, err_r):
        poller.register(fd, select.POLLIN | select.POLLHUP)
    poller.register(pidfd, select.POLLIN)
    exited = False
    while not exited:
        left, why = _over_limit(start, t0, lim)
        if why and not killed:
            kill("TIMEOUT", why)
        for fd, _ev in poller.poll(min(max(left, 0.05), CPU_POLL_S) * 1000):
            if fd == pidfd:
                exited = True
            else:
                read(fd)
    if not killed:
        worker_child.raise_if_killed_before_confined(pid, uid)
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    os.close(pidfd)
    left_over, cleanup_failed = worker_cleanup.clean()  # nothing the run started may outlive it
    for fd in (out_r, err_r):
        os.set_blocking(fd, False)
        try:
            while read(fd):
                pass
        except (BlockingIOError, KeyError):
            pass
        os.close(fd)
    marker = os.pread(fds["res"], 1, 0)
    os.close(fds["res"])
    setup = b""
    while chunk := os.read(setup_r, 4096):  # its write end closed before the program ran
        setup += chunk
    os.close(setup_r)
    reply = {
        "exit_status": status,
        "killed": killed,
        "reason": reason,
        "memory_error": marker == b"M",
        "setup_error": "" if setup == b"ok" else setup.decode(errors="replace") or "no report",
        "wall_s": wall,
        "peak_rss_mb": max(0, ru.ru_maxrss * 1024 - server_rss) / 1048576.0,
        "stdout": worker_framing.b64(bytes(bufs[out_r])),
        "stderr": worker_framing.b64(bytes(bufs[err_r])),
        "stdout_truncated": cut[out_r],
        "stderr_truncated": cut[err_r],
        "outlived": left_over,
    }
    if cleanup_failed:
        reply["cleanup_failed"] = cleanup_failed
    return worker_meter.metered(start, reply)  # every descendant, reaped above
