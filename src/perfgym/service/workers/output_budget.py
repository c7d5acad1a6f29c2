"""A job's output budget: the bytes of results one job may keep, and a run's output cut to fit.

A raw run's streams and collected files are stored with its job until the job expires (red
team helper-79: a 476-byte request of 4 runs kept 171-214 MiB for a day, and every GET of it
rendered that much JSON). Each job may store `ServiceConfig.max_job_output_bytes` of results:
a finished run whose result would pass what is left keeps the start of its stdout, then of its
stderr, then the collected files that still fit, whole, and says so in its `reason`; the
flags `stdout_truncated`/`stderr_truncated` are set as for a run's own caps. A verdict is never
cut (the judge bounds its size)."""

from __future__ import annotations

import base64
import json
from typing import Any

#: Room kept for the reason the cut adds to a result.
_NOTE_ROOM = 256


def result_size(result: dict[str, Any]) -> int:
    """The bytes a result takes in the queue (its JSON text)."""
    return len(json.dumps(result))


def cut_to_fit(result: dict[str, Any], room: int, budget: int) -> dict[str, Any]:
    """`result`, with its run's output cut so that it takes at most `room` bytes (at least its
    skeleton: a result with no room keeps its status, times and flags and no output). A result
    that fits, or holds no run, is returned as it is."""
    ex = result.get("execution")
    if not isinstance(ex, dict) or result_size(result) <= room:
        return result
    cut = dict(ex)
    files = cut.get("files") or {}
    skeleton = {**result, "execution": {**cut, "stdout": "", "stderr": "", "files": {}}}
    left = max(0, room - result_size(skeleton) - _NOTE_ROOM)
    for stream in ("stdout", "stderr"):
        raw = base64.urlsafe_b64decode(cut.get(stream) or "")  # pydantic's JSON bytes
        keep = raw[: left // 4 * 3]
        cut[stream] = base64.urlsafe_b64encode(keep).decode()
        if len(keep) < len(raw):
            cut[f"{stream}_truncated"] = True
        left -= len(cut[stream])
    kept, dropped = {}, []
    for name, data in files.items():
        size = len(json.dumps({name: data})) + 2
        if size <= left:
            kept[name] = data
            left -= size
        else:
            dropped.append(name)
    cut["files"] = kept
    note = f"the job's output budget of {budget} bytes is spent: output cut"
    if dropped:
        note += f", {len(dropped)} collected file(s) left out"
    reason = str(result.get("reason") or "")
    return {**result, "execution": cut, "reason": f"{reason}; {note}" if reason else note}
