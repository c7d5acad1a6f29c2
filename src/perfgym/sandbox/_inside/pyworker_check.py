"""Assertion calls of the warm Python worker (HumanEval's `check(candidate)`), in two processes.

The candidate's module runs in one process; the task's test code in another, under another
uid. The test code's globals are its own names, then the builtins, then the names the
candidate's module defines: a function of the candidate is a `Remote`, called over a pipe,
its arguments and its result crossing as plain values (`valuecodec`: exact builtin types, so
no object with a custom `__eq__` reaches an assertion); a stdlib module the candidate imported
is imported here afresh; a plain value is copied. Whatever the candidate's process does (write
anything, exit early, patch its own builtins, trace its own frames), it can only answer these
questions, and the verdict is written by the test process alone.

Stdlib only; imported by `pyworker_server.py` inside the worker's sandbox.
"""

from __future__ import annotations

import builtins
import json
import os
import sys
import types

import valuecodec

TYPE_CHECKING = False  # typing is not imported at run time: the worker forks lean (see server)
if TYPE_CHECKING:
    from typing import Any

#: Largest message either side reads (a larger one is the candidate's failure).
MAX_MESSAGE = 64 << 20


def send(fd: int, obj: dict) -> None:
    data = json.dumps(obj).encode()
    view = memoryview(len(data).to_bytes(4, "big") + data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exact(fd: int, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(fd, min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)


def recv(fd: int) -> dict:
    n = int.from_bytes(_read_exact(fd, 4), "big")
    if n > MAX_MESSAGE:
        raise ValueError(f"message of {n} bytes")
    obj = json.loads(_read_exact(fd, n))
    if type(obj) is not dict:
        raise ValueError("malformed message")
    return obj


def describe(exc: BaseException) -> str:
    try:
        return f"{type(exc).__name__}: {exc}"[:2000]
    except BaseException:  # noqa: BLE001 - a hostile __str__
        return "an exception that cannot be printed"


def failure(exc: BaseException) -> dict:
    """The candidate's exception as a message: its type's name and its text."""
    name = type(exc).__name__
    try:
        text = str(exc)[:2000]
    except BaseException:  # noqa: BLE001 - a hostile __str__
        text = "an exception that cannot be printed"
    return {"error_type": name if type(name) is str else "Exception", "error": text}


# -- the candidate's side -------------------------------------------------------------------------
def serve(namespace: dict, ask_r: int, ans_w: int) -> None:
    """Answer the test process until it is done: what a name of the module is, and calls."""
    while True:
        try:
            msg = recv(ask_r)
        except (EOFError, OSError, ValueError):
            return
        try:
            reply = _answer(namespace, msg)
        except BaseException as exc:  # noqa: BLE001 - the candidate's failure, passed on
            reply = failure(exc)
        try:
            sys.stdout.flush()
        except BaseException:  # noqa: BLE001
            pass
        send(ans_w, reply)


def _answer(namespace: dict, msg: dict) -> dict:
    name = str(msg.get("name"))
    if msg.get("op") == "get":
        if name not in namespace:
            return {"kind": "missing"}
        value = namespace[name]
        if type(value) is types.ModuleType:
            return {"kind": "module", "module": str(value.__name__)}
        if callable(value):
            return {"kind": "callable"}
        try:
            return {"kind": "value", "value": valuecodec.encode(value)}
        except valuecodec.UnsupportedValue:
            return {"kind": "opaque"}
    fn = namespace[name]
    args = valuecodec.decode(msg.get("args", []))
    kwargs = valuecodec.decode(msg.get("kwargs", {"dict": []}))
    return {"value": valuecodec.encode(fn(*args, **kwargs))}


# -- the test process's side ----------------------------------------------------------------------
class Link:
    """The test process's end of the two pipes to the candidate's process."""

    def __init__(self, ans_r: int, ask_w: int) -> None:
        self.ans_r, self.ask_w = ans_r, ask_w

    def ask(self, msg: dict) -> dict:
        try:
            send(self.ask_w, msg)
            return recv(self.ans_r)
        except (EOFError, OSError) as exc:
            raise RuntimeError("the candidate's process ended during the check") from exc


class Remote:
    """A callable of the candidate's module, as the test code sees it."""

    __slots__ = ("_link", "_name")

    def __init__(self, link: Link, name: str) -> None:
        self._link, self._name = link, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        reply = self._link.ask({"op": "call", "name": self._name,
                                "args": valuecodec.encode(list(args)),
                                "kwargs": valuecodec.encode(dict(kwargs))})  # fmt: skip
        if "error" in reply:
            raise _exception(str(reply.get("error_type")), str(reply["error"]))
        return valuecodec.decode(reply.get("value"))

    def __repr__(self) -> str:
        return f"<candidate function {self._name}>"


def _exception(type_name: str, message: str) -> BaseException:
    """The candidate's exception as the test code can catch it: a builtin Exception type of
    the same name (never SystemExit and the like), else RuntimeError."""
    cls = getattr(builtins, type_name, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(message)
        except BaseException:  # noqa: BLE001 - e.g. UnicodeDecodeError wants five arguments
            pass
    return RuntimeError(message)


class Namespace(dict):
    """The test code's globals: its own names, the builtins, then the candidate's (asked once
    per name). The builtins come before the candidate's names: a candidate cannot replace
    `abs` or `isinstance` for the test code."""

    def __init__(self, link: Link) -> None:
        super().__init__(__name__="__check__", __builtins__=builtins)
        self.link = link

    def __missing__(self, name: str) -> Any:
        if hasattr(builtins, name):
            raise KeyError(name)  # the interpreter then looks it up in the builtins
        reply = self.link.ask({"op": "get", "name": name})
        kind = reply.get("kind")
        value: Any
        if kind == "callable":
            value = Remote(self.link, name)
        elif kind == "value":
            value = valuecodec.decode(reply.get("value"))
        elif kind == "module":
            value = _stdlib_module(str(reply.get("module")))
        elif kind == "opaque":
            raise TypeError(f"the candidate's {name!r} cannot cross into the test code")
        else:
            raise KeyError(name)
        self[name] = value
        return value


def _stdlib_module(name: str) -> types.ModuleType:
    if name.partition(".")[0] not in getattr(sys, "stdlib_module_names", ()):
        raise ImportError(f"the test code cannot use the candidate's module {name!r}")
    __import__(name)
    return sys.modules[name]


def run_check(code: types.CodeType, entry: str, ans_r: int, ask_w: int) -> None:
    """Wait for the candidate's module to load, run the test code, call `check(entry)`;
    raises when the check fails (or the candidate's module did)."""
    link = Link(ans_r, ask_w)
    try:
        hello = recv(ans_r)
    except EOFError as exc:
        raise RuntimeError("the candidate's process ended before its module loaded") from exc
    if "error" in hello:  # the module raised as it loaded
        raise _exception(str(hello.get("error_type")), str(hello["error"]))
    namespace = Namespace(link)
    exec(code, namespace)  # noqa: S102 - the task's test code, in its own confined process
    check = dict.get(namespace, "check")
    if not callable(check):
        raise NameError("the task's test code defines no check()")
    if not entry:
        raise NameError("an assertion call needs the task's entry point")
    check(namespace[entry])
