"""The warm worker's rehearsal: the zygote walks a call's pure code paths on made-up inputs.

Every request process is a fresh fork of the zygote, and everything it runs for the first time
is work redone on every call: CPython 3.11 quickens a function's bytecode only after it ran a
few times (so a request process ran every function of the request path unspecialised), and the
interpreter's type-attribute cache misses on every lookup the zygote never made, writing a
cache entry (a copy-on-write fault when the page was the zygote's). Walking those paths here,
a few times, before the first fork, leaves the zygote with quickened code and a warm cache that
every request process inherits.

Only made-up values are used (no request, no program), nothing is signalled, forked, killed or
removed, and no descriptor outlives a rehearsal: the zygote stays what it was, plus warm code.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import types

import pyworker_call
import pyworker_request
import valuecodec
import worker_cleanup
import worker_framing
import worker_meter
import worker_results

#: Runs of each path: CPython 3.11 quickens a code object after 8 calls, and specialises an
#: instruction at its next execution or two.
ROUNDS = 12

_SOURCE = "def add(a, b):\n    return a + b\n"
_LIMITS = {"wall_s": 10.0, "cpu_s": 10.0, "memory_mb": 512.0, "stdout_bytes": 1 << 20,
           "file_size_bytes": 1 << 20, "max_processes": 1}  # fmt: skip
_ARGS = [1, 2.5, "a", [1, 2], (3,), {"k": 1}, None, True, b"x", {4}]


def rehearse(rounds: int = ROUNDS) -> None:
    """Walk the request path's pure parts `rounds` times (failures ignored: only a speed-up),
    then look up once every module attribute the request path's code names."""
    for _ in range(rounds):
        try:
            _once()
        except Exception:  # noqa: BLE001, S110 - a rehearsal that fails costs speed, nothing else
            pass
    _module_lookups()


def _module_lookups() -> None:
    """`module.name` for every name the code of this directory's modules uses and a module it
    imports defines: the code a request process runs once, unquickened, looks each up through
    the type cache, whose entry (written on a miss) is now the zygote's."""
    names: set[str] = set()
    owners = {id(m): m for m in sys.modules.values() if type(m) is types.ModuleType}
    here = os.path.dirname(os.path.abspath(__file__))
    for mod in list(sys.modules.values()):
        if os.path.dirname(os.path.abspath(getattr(mod, "__file__", None) or "/")) != here:
            continue
        todo = [v.__code__ for v in vars(mod).values() if isinstance(v, types.FunctionType)]
        while todo:
            code = todo.pop()
            names.update(code.co_names)
            todo += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    for mod in owners.values():
        space = vars(mod)
        for name in names:
            if name in space:
                getattr(mod, name)


def _once() -> None:
    request = {"source": _SOURCE, "filename": "solution.py", "entry": "add", "limits": _LIMITS,
               "core": 0}  # fmt: skip
    _framed(request)
    _framed({"args": valuecodec.encode(_ARGS)})
    pyworker_request._compile(_SOURCE, "solution.py", _LIMITS)
    pyworker_call._pickled_args(valuecodec.encode(_ARGS))
    start = (worker_meter.cgroup_ns(), worker_meter.self_cpu(), worker_meter.children_cpu(), -1)
    pyworker_request._over_limit(start, time.monotonic(), _LIMITS)
    pyworker_request._cpu_used_s(start)
    reply: dict = {"wall_s": 0.001, "exit_status": 0, "killed": "", "reason": "",
                   "peak_rss_mb": 0.0, "outlived": False}  # fmt: skip
    worker_meter.metered(start, reply)
    worker_meter.call_window(0.0, 0.0, 0.0, reply)
    _read_back(reply)
    for root in worker_cleanup.CLEAN_ROOTS:
        if os.path.isdir(root) and not os.listdir(root):
            worker_cleanup.empty(root)  # an empty directory: a listing, nothing removed
    _framed(reply)
    pyworker_call._own_time_ns(lambda: None)
    r, w = os.pipe()
    try:
        worker_meter.send_stamp(w)  # closes `w`
        worker_meter.program_figures(
            r, time.monotonic_ns(), resource.getrusage(resource.RUSAGE_SELF), {}
        )  # closes `r`
    except OSError:
        for fd in (r, w):
            try:
                os.close(fd)
            except OSError:
                pass


def _framed(obj: dict) -> None:
    """A frame sent and read back through a pipe of this process's own."""
    r, w = os.pipe()
    try:
        worker_framing.send(w, obj)
        worker_framing.recv(r)
    finally:
        os.close(r)
        os.close(w)


def _read_back(reply: dict) -> None:
    """A made-up child's result and output read back as a call's are."""
    result = {"ok": True, "value": valuecodec.encode(_ARGS), "reported_call_ns": 1,
              "reported_call_cpu_ns": 1, "reported_call_own_ns": 1}  # fmt: skip
    res_fd = os.memfd_create("rehearsal-res", 0)
    out_fd = os.memfd_create("rehearsal-out", 0)
    os.write(res_fd, json.dumps(result).encode())
    os.write(out_fd, b"output\n")
    worker_results.read_output(out_fd, 1 << 20, reply)
    taken = worker_results.snapshot(res_fd)
    reply["result"] = worker_results.result_of(res_fd, taken)
    valuecodec.decode(reply["result"]["value"])
