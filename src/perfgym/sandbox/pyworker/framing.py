"""The host side of the worker socket: length-prefixed JSON frames, a call's arguments apart."""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

#: Bytes of requests a pipelined worker may have unanswered (see `PythonWorker.stream`).
PIPELINE_BYTES = 64 << 10


def frame(obj: dict[str, Any]) -> bytes:
    """A request's bytes: an assertion call's test code, and a function call's arguments, as a
    second frame, which the worker reads only after the program's process was forked (that
    process never holds it; a function call's child gets its arguments after its module ran)."""
    if obj.get("mode") == "check" and "checker" in obj:
        head = {k: v for k, v in obj.items() if k != "checker"}
        return _one_frame(head) + _one_frame({"checker": obj["checker"]})
    if obj.get("mode") is None:
        head = {k: v for k, v in obj.items() if k != "args"}
        return _one_frame(head) + _one_frame({"args": obj.get("args", [])})
    return _one_frame(obj)


def _one_frame(obj: dict[str, Any]) -> bytes:
    try:
        # pydantic-core's encoder (Rust): 2.7x json's on a HumanEval+ batch of arguments, the
        # same values read back (UTF-8 text, shortest exact floats, NaN as json writes it).
        # What it cannot write (a lone surrogate) goes through json as before.
        data = to_json(obj)
    except PydanticSerializationError:
        data = json.dumps(obj).encode()
    return struct.pack(">I", len(data)) + data


def send(sock: socket.socket, obj: dict[str, Any]) -> None:
    sock.sendall(frame(obj))


#: Seconds a worker may take to reply beyond twice its request's wall limits (the cleanup's
#: 5 s reap, emptying 200,000 files, a loaded machine): past it the worker is stopped and the
#: request is the worker's failure. Only a worker that hung reaches it (a traced zombie once
#: held a reap past every wall limit: red team rt65); the host never waits forever.
REPLY_GRACE_S = 120.0


def reply_backstop_s(req: dict[str, Any]) -> float:
    """The longest wait for `req`'s reply: `REPLY_GRACE_S` plus twice its wall limits (a
    batch's module load and every test's)."""
    walls = [(req.get("limits") or {}).get("wall_s"), req.get("load_wall_s")]
    walls += [t.get("wall_s") for t in req.get("tests") or () if isinstance(t, dict)]
    total = 0.0
    for wall in walls:
        if isinstance(wall, (int, float)) and wall > 0:
            total += float(wall)
    return REPLY_GRACE_S + 2 * total


def recv(sock: socket.socket) -> dict[str, Any]:
    head = _recv_exact(sock, 4)
    (n,) = struct.unpack(">I", head)
    data = _recv_exact(sock, n)
    try:
        return json.loads(data)
    except RecursionError:
        # A whole frame the worker wrote, too deep here only because the program's value is:
        # the program's failure, never the worker's (the worker caps what it parses; this is
        # the host's own guard, red team round 4).
        return {"undecodable": "the call's result is nested too deeply to decode"}


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    # Into one buffer of the frame's size: a recv(n - got) per chunk allocated (and shrank)
    # what was still missing every time, megabytes for each chunk of a large reply.
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = sock.recv_into(view[got:])
        if not k:
            raise EOFError("worker closed the connection")
        got += k
    return bytes(buf)
