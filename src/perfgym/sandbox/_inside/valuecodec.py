"""A tagged JSON encoding of plain Python values, safe to decode from untrusted programs.

Only exact builtin types cross the boundary (no subclasses, so no custom __eq__ can fool a
comparison on the host): None, bool, int, float (incl. nan/inf), str, bytes, list, tuple,
dict, set, frozenset. Finite floats are JSON numbers (exact: json writes the shortest repr
that reads back to the same float); ints beyond 2**53, non-finite floats and the other
containers are tagged. Stdlib only: it runs inside the sandbox too.
"""

from __future__ import annotations

import binascii
import math

TYPE_CHECKING = False  # typing is not imported at run time: the worker forks lean (see server)
if TYPE_CHECKING:
    from typing import Any

_MAX_DEPTH = 200


class UnsupportedValue(TypeError):
    """The value holds a type that cannot cross the sandbox boundary."""


def encode(value: Any, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        raise UnsupportedValue("value nested too deeply")
    t = type(value)
    if value is None or t is bool or t is str:
        return value
    if t is int:
        # Hex, not decimal: CPython limits int<->decimal-string conversion to 4300 digits.
        return value if -(2**53) < value < 2**53 else {"int": format(value, "x")}
    if t is float:
        # A finite float is JSON's own number: json writes its shortest exact repr (always
        # with '.' or 'e', so it reads back as a float, never an int), in C.
        return value if math.isfinite(value) else {"float": repr(value)}
    if t is bytes:
        return {"bytes": binascii.b2a_base64(value, newline=False).decode()}
    if t is list:
        return value if _native(value) else [encode(v, depth + 1) for v in value]
    if t is tuple:
        return {"tuple": list(value) if _native(value) else [encode(v, depth + 1) for v in value]}
    if t is set or t is frozenset:
        return {t.__name__: [encode(v, depth + 1) for v in value]}
    if t is dict:
        return {"dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    raise UnsupportedValue(f"cannot pass a {t.__module__}.{t.__qualname__} across the sandbox")


_NUMBERS = frozenset((int, float, bool))
_TEXT = frozenset((str, type(None)))
#: What `decode` returns as it is (exact types: a subclass is never a scalar here).
_SCALARS = _NUMBERS | _TEXT


def _native(items: list | tuple) -> bool:
    """Whether every item encodes as itself (so the sequence is its own encoding, checked at C
    speed: a large list of numbers or strings is not walked item by item in Python). The same
    bytes either way: this only skips work."""
    kinds = set(map(type, items))
    if kinds <= _TEXT:
        return True
    if not kinds <= _NUMBERS:
        return False
    try:
        if not all(map(math.isfinite, items)):
            return False
    except OverflowError:  # an int too large for a float: tagged
        return False
    return int not in kinds or min(items) > -(2**53) and max(items) < 2**53


def decode(data: Any) -> Any:
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if isinstance(data, list):
        # A list of plain JSON scalars is its own value: copied at C speed, not item by item
        # (a test's answer of 10,000 numbers cost 10,000 Python calls here).
        if set(map(type, data)) <= _SCALARS:
            return list(data)
        return [decode(v) for v in data]
    if isinstance(data, dict) and len(data) == 1:
        ((tag, v),) = data.items()
        if tag == "int":
            return int(v, 16)
        if tag == "float":
            return float(v) if v in ("nan", "inf", "-inf") else float.fromhex(v)
        if tag == "bytes":
            return binascii.a2b_base64(v)
        if tag == "tuple":
            return tuple(decode(x) for x in v)
        if tag == "set":
            return {decode(x) for x in v}
        if tag == "frozenset":
            return frozenset(decode(x) for x in v)
        if tag == "dict":
            return {decode(k): decode(x) for k, x in v}
    raise UnsupportedValue(f"malformed encoded value: {str(data)[:80]}")
