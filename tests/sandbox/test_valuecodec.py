"""valuecodec: exact round trips, and one encoding per value whichever path encodes it."""

from __future__ import annotations

import json
import math

import pytest

from perfgym.sandbox._inside import valuecodec

VALUES = [None, True, 0, -(2**53) + 1, 2**53, -(2**70), 10**400, 1.0, -0.0, 5e-324, 1e308,
          math.inf, -math.inf, "", "é", b"\x00\xff", [1, 2.0, True, None],
          [1.5] * 2000, list(range(3000)), [2**60, 1.0], [1e300, 3], ["a", None, "b"],
          ["a", 1], (1.0, 2), (), {"k": [1.0, (2, 3)]}, {1, 2}, frozenset({"x"}),
          [[1.0, 2.0], [3, 4]]]  # fmt: skip


def roundtrip(value):
    return valuecodec.decode(json.loads(json.dumps(valuecodec.encode(value))))


@pytest.mark.parametrize("value", VALUES, ids=lambda v: repr(v)[:30])
def test_every_plain_value_crosses_exactly(value) -> None:
    back = roundtrip(value)
    assert back == value and type(back) is type(value)
    if isinstance(value, list):
        assert [type(x) for x in back] == [type(x) for x in value]
    if value == 0.0 and isinstance(value, float):
        assert math.copysign(1, back) == math.copysign(1, value)


def test_nan_crosses_as_nan() -> None:
    assert math.isnan(roundtrip(math.nan)) and math.isnan(roundtrip([math.nan, 1.0])[0])


@pytest.mark.parametrize("items", [[1, 2.0, True], [2**60, 1.0], [1e300, 3], ["a", 1],
                                   [1.0, math.nan], [10**400], [1.5] * 2000])  # fmt: skip
def test_the_same_value_has_one_encoding_whichever_path_takes_it(items) -> None:
    """A list encoded whole (the C-speed path) and item by item gives the same bytes, so
    digests of equal answers are equal."""
    whole = json.dumps(valuecodec.encode(items))
    by_item = json.dumps([valuecodec.encode(x) for x in items])
    assert whole == by_item


def test_subclasses_and_other_types_do_not_cross() -> None:
    class Sneaky(float):
        def __eq__(self, other):  # pragma: no cover - never reached
            return True

    for bad in (Sneaky(1.0), [Sneaky(1.0)], object(), [1, object()]):
        with pytest.raises(valuecodec.UnsupportedValue):
            valuecodec.encode(bad)


def test_a_list_of_scalars_decodes_to_a_copy_and_tags_inside_a_list_still_decode() -> None:
    """The C-speed path for a list of plain scalars (issue 31) gives what the item-by-item
    path gave: a new list of the same items; one tagged item sends the list down that path."""
    data = json.loads(json.dumps([1, 2.5, "a", None, True]))
    back = valuecodec.decode(data)
    assert back == data and back is not data
    assert [type(x) for x in back] == [int, float, str, type(None), bool]
    assert valuecodec.decode([1, {"int": "ff"}, {"tuple": [1]}]) == [1, 255, (1,)]
