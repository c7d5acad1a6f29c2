"""The warm worker's messages to and from the host: a 4-byte big-endian length, then JSON."""

from __future__ import annotations

import binascii
import json
import os


def send(fd: int, obj: dict) -> None:
    data = json.dumps(obj).encode()
    view = memoryview(len(data).to_bytes(4, "big") + data)
    while view:
        view = view[os.write(fd, view) :]


def recv_exact(fd: int, n: int) -> bytes:
    # Into one buffer of the frame's size, not a read (an allocation) of what is missing per
    # chunk.
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = os.readv(fd, [view[got:]])
        if not k:
            raise EOFError
        got += k
    return bytes(buf)


def recv_raw(fd: int) -> bytes:
    """One frame's JSON, unparsed."""
    return recv_exact(fd, int.from_bytes(recv_exact(fd, 4), "big"))


def recv(fd: int) -> dict:
    return json.loads(recv_raw(fd))


def b64(data: bytes) -> str:
    return binascii.b2a_base64(data, newline=False).decode()
