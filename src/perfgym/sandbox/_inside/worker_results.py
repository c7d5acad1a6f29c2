"""Reading back what a call's child wrote: its result channel and its captured output.

The child runs the candidate, so both were written by code perfgym does not trust."""

from __future__ import annotations

import json
import os
import sys
from types import FrameType

#: The largest result read back.
MAX_RESULT = 64 << 20

#: The deepest nesting of anything a program wrote that the worker parses. Far below the
#: interpreter's recursion limit, so the host (whose stack is deeper, and whose value decoder
#: recurses too) can always decode what the worker accepted: a reply the host could not decode
#: was the infrastructure's failure, a dropped sample (red team round 4).
MAX_DEPTH = 200


def loads_bounded(raw: bytes | str) -> object:
    """`json.loads`, raising RecursionError past `MAX_DEPTH` levels of nesting (the recursion
    limit lowered to this frame's depth plus that, for the parse only)."""
    depth = 0
    frame: FrameType | None = sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + MAX_DEPTH)
    try:
        return json.loads(raw)
    finally:
        sys.setrecursionlimit(old)


def snapshot(res_fd: int) -> bytes:
    """The result channel's bytes now (none when over `MAX_RESULT`: no result)."""
    size = os.fstat(res_fd).st_size
    return b"" if not size or size > MAX_RESULT else os.pread(res_fd, size, 0)


def result_of(res_fd: int, taken: bytes | None = None) -> dict | None:
    """The call's result as its child wrote it (`taken`: as it was when the child said it was
    written), or None when there is none or it is not one.

    A function call's child holds this channel, and so does the candidate it runs: whatever
    it wrote is parsed here defensively (nesting past the recursion limit, a non-object, fields
    of the wrong type) and anything malformed is no result, i.e. the call failed."""
    raw = snapshot(res_fd) if taken is None else taken
    os.close(res_fd)
    if not raw:
        return None
    try:
        res = loads_bounded(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(res, dict) or not isinstance(res.get("ok"), bool):
        return None
    if not isinstance(res.get("error", ""), str):
        return None
    for key in ("reported_call_ns", "reported_call_cpu_ns", "reported_call_own_ns"):
        reported = res.get(key)
        if reported is not None and (type(reported) is not int or reported < 0):
            res[key] = None
    return res


def read_output(out_fd: int, cap: int, reply: dict) -> None:
    out_size = os.fstat(out_fd).st_size
    out = os.pread(out_fd, min(out_size, cap), 0)
    os.close(out_fd)
    reply["stdout"] = out.decode("utf-8", errors="replace")
    reply["stdout_truncated"] = out_size > cap
