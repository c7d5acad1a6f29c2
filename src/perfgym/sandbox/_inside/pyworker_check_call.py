"""Assertion calls of the warm Python worker (mode "check"): the candidate's and the test's
processes, under two uids, forked and waited for by the request process (the questions and
answers between them are `pyworker_check`). Stdlib only; imported by `pyworker_server.py`
inside the worker's sandbox.
"""

from __future__ import annotations

import _signal
import builtins
import json
import os
import select
import sys
import time
import types

import pyworker_check
import pyworker_request
import worker_child
import worker_meter
import worker_results
from pyworker_request import (
    _await_exit,
    _await_turn,
    _close_inherited,
    _compile,
    _finish,
    _flush_stdio,
    _forget,
    _pin,
    _read_checker,
)


def _check_call(req: dict, uid: int) -> dict:
    """An assertion call: the candidate's module in one child (the worker's uid), the task's
    test code in another (a second uid, so the candidate can neither signal, trace nor read
    it), talking over two pipes. Only the test process holds the result channel, and it sees
    the candidate's functions through `pyworker_check.Remote`: plain values in, plain values
    out. The call's wall time and CPU are both processes'."""
    filename = req.get("filename", "solution.py")
    key, code, err = _compile(req["source"], filename, req["limits"])
    if code is None:
        _read_checker()  # dropped unused: this process forks nothing after it
        return {"status": "COMPILE_ERROR", "error": err}
    lim = req["limits"]
    out_fd = os.memfd_create("out", 0)
    ask_r, ask_w = os.pipe()  # test process -> candidate
    ans_r, ans_w = os.pipe()  # candidate -> test process
    vsize, server_rss = worker_meter.statm()
    _flush_stdio()
    _pin(req.get("core"))
    _await_turn()
    start = worker_meter.meter()
    t0 = time.monotonic()
    cand = os.fork()
    if cand == 0:  # before the test code was read here: this child never held any of it
        _candidate_child(req, code, out_fd, ask_r, ans_w, uid, vsize)
    req["checker"] = _read_checker()
    ckey, check_code, cerr = _compile(req["checker"], "<check>", lim)
    res_fd = os.memfd_create("res", 0)
    chk = -1
    if check_code is not None:
        chk = os.fork()
        if chk == 0:
            _check_child(req, check_code, ans_r, ask_w, res_fd, vsize)
    for fd in (ask_r, ask_w, ans_r, ans_w):
        os.close(fd)
    killed = reason = ""
    status = 0
    unconfined = False
    if chk > 0:
        pidfd = os.pidfd_open(chk)
        reason = _await_exit(pidfd, start, t0, lim)
        if reason:
            killed = "TIMEOUT"
            os.kill(chk, _signal.SIGKILL)
        else:
            unconfined = worker_child.killed_before_confined(chk, pyworker_request._check_uid)
        _, status, ru_chk = os.wait4(chk, 0)
        os.close(pidfd)
    if not unconfined and not killed and status != 0:
        # the test failed: if because the candidate's process died, its pipe closed before it
        # was a zombie; give it a moment to be one (a live candidate just costs the wait)
        cand_fd = os.pidfd_open(cand)
        select.select([cand_fd], [], [], 0.05)
        os.close(cand_fd)
        unconfined = worker_child.killed_before_confined(cand, uid)
    try:
        os.kill(cand, _signal.SIGKILL)
    except ProcessLookupError:
        pass
    _, cand_status, ru = os.wait4(cand, 0)
    if unconfined:  # both reaped: nothing of the call is left running
        raise worker_child.KilledBeforeConfined(
            "an assertion call's process was killed before it dropped its privileges, before "
            "any of the program or the test ran: an outside kill, never the program's"
        )
    wall = time.monotonic() - t0
    if os.WIFSIGNALED(cand_status) and os.WTERMSIG(cand_status) == _signal.SIGXCPU:
        status = cand_status  # the candidate ran out of CPU: its timeout, not the test's
    reply: dict = {"wall_s": wall, "exit_status": status, "killed": killed, "reason": reason,
                   "peak_rss_mb": max(0, ru.ru_maxrss * 1024 - server_rss) / 1048576.0}  # fmt: skip
    _finish(reply, start)
    worker_results.read_output(out_fd, int(lim["stdout_bytes"]), reply)
    if check_code is None:
        os.close(res_fd)
        reply.update(status="SANDBOX_ERROR", error=f"the task's test code: {cerr}")
        return reply
    reply["result"] = worker_results.result_of(res_fd)
    return reply


def _candidate_child(req: dict, code: types.CodeType, out_fd: int, ask_r: int, ans_w: int,
                     uid: int, vsize: int) -> None:  # fmt: skip
    """The candidate's process of an assertion call: runs its module, then answers the test
    process's questions about it until the test process is done. Never returns."""
    try:
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        _close_inherited((out_fd, ask_r, ans_w))
        worker_child.fresh_stdio()
        _forget(req)
        worker_child.confine(req["limits"], uid, vsize)
        namespace = {"__name__": req.get("module_name", "solution"), "__builtins__": builtins}
        try:
            exec(code, namespace)  # noqa: S102 - the untrusted program, in its isolated child
        except BaseException as exc:  # noqa: BLE001 - the program's own failure
            pyworker_check.send(ans_w, pyworker_check.failure(exc))
        else:
            pyworker_check.send(ans_w, {"ready": True})
            pyworker_check.serve(namespace, ask_r, ans_w)
    except BaseException:  # noqa: BLE001 - the test process sees the candidate gone
        pass
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001
        pass
    os._exit(0)


def _check_child(req: dict, code: types.CodeType, ans_r: int, ask_w: int, res_fd: int,
                 vsize: int) -> None:  # fmt: skip
    """The test process of an assertion call (the task's code, a uid of its own): calls
    `check(candidate)` against the candidate's process and writes the verdict. Never returns."""
    try:
        _close_inherited((ans_r, ask_w, res_fd))
        _forget(req)
        worker_child.confine(req["limits"], pyworker_request._check_uid, vsize)
        pyworker_check.run_check(code, req.get("entry") or "", ans_r, ask_w)
        result: dict = {"ok": True}
        code_out = 0
    except BaseException as exc:  # noqa: BLE001 - a failed check: the candidate's failure
        result = {"ok": False, "error": pyworker_check.describe(exc)}
        code_out = 1
    try:
        os.write(res_fd, json.dumps(result).encode())
    except BaseException:  # noqa: BLE001
        pass
    os._exit(code_out)
