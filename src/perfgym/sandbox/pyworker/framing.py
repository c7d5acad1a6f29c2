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
