"""Length-prefixed JSON messages over a stream socket (service <-> worker processes)."""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

_HEADER = struct.Struct("!I")
MAX_MESSAGE = 1 << 30


def send(sock: socket.socket, obj: dict[str, Any]) -> None:
    data = json.dumps(obj, separators=(",", ":")).encode()
    sock.sendall(_HEADER.pack(len(data)) + data)


def recv(sock: socket.socket) -> dict[str, Any]:
    """One whole message; EOFError when the peer is gone."""
    (n,) = _HEADER.unpack(_exact(sock, _HEADER.size))
    if n > MAX_MESSAGE:
        raise EOFError(f"message of {n} bytes: the peer is broken")
    obj = json.loads(_exact(sock, n))
    if not isinstance(obj, dict):
        raise EOFError("malformed message")
    return obj


def _exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError("peer closed the connection")
        buf += chunk
    return bytes(buf)
