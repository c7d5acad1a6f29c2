"""The host's request frames (`perfgym.sandbox.pyworker.framing`): written by pydantic-core's
encoder where it can, by json where it cannot; the worker reads the same values either way."""

from __future__ import annotations

import json
import math
import struct

import pytest

from perfgym.sandbox._inside import valuecodec
from perfgym.sandbox.pyworker.framing import _one_frame, frame

VALUES = [0, -1, 2**53 - 1, 2**80, 0.1, 1e300, -0.0, 5e-324, float("nan"), float("inf"), "é", "\u2028",
          "a\x00b", [], {}, [1, "2", [3.5, None, True]], {"k": {"nested": [False]}},
          valuecodec.encode((1, {2, 3}, frozenset(), b"\xff", {"a": (1.5, float("-inf"))}))]  # fmt: skip


def _read(data: bytes) -> object:
    (n,) = struct.unpack(">I", data[:4])
    assert len(data) == 4 + n
    return json.loads(data[4:])


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_a_frame_reads_back_as_json_wrote_it(value: object) -> None:
    obj = {"mode": "batch", "v": value}
    assert _same(_read(_one_frame(obj)), json.loads(json.dumps(obj)))


def test_a_lone_surrogate_goes_through_json() -> None:
    obj = {"source": "x = '\ud800'"}
    assert _read(_one_frame(obj)) == obj


def test_a_call_s_arguments_are_their_own_frame() -> None:
    data = frame({"source": "def f(a): return a", "entry": "f", "args": [1, [2]]})
    (n,) = struct.unpack(">I", data[:4])
    head, rest = json.loads(data[4 : 4 + n]), data[4 + n :]
    assert "args" not in head and _read(rest) == {"args": [1, [2]]}
