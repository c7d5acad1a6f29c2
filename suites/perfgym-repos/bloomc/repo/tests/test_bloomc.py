import hashlib

import pytest

from bloomc import BloomFilter, optimal_parameters
from bloomc import _core


def test_no_false_negatives():
    bf = BloomFilter.for_capacity(1000, 0.01)
    words = [f"item-{i}" for i in range(1000)]
    bf.update(words)
    assert all(w in bf for w in words)
    assert bf.query(words[:5]) == [True] * 5
    assert len(bf) == 1000


def test_false_positive_rate_near_target():
    bf = BloomFilter.for_capacity(2000, 0.02)
    bf.update(f"in-{i}" for i in range(2000))
    fp = sum(f"out-{i}" in bf for i in range(5000)) / 5000
    assert fp < 0.05


def test_str_and_bytes_are_the_same_item_and_empty_item_works():
    bf = BloomFilter(1024, 3)
    bf.add("é")
    assert "é".encode() in bf
    bf.add("")
    assert b"" in bf


def test_other_types_rejected_everywhere():
    bf = BloomFilter(64, 2)
    with pytest.raises(TypeError):
        bf.add(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        bf.update(["ok", 7])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        bf.query([None])  # type: ignore[list-item]


def test_update_equals_one_by_one_add():
    items = [f"k{i}" for i in range(300)] + [b"\x00\xff", "ünï"]
    a, b = BloomFilter(4099, 5), BloomFilter(4099, 5)
    for it in items:
        a.add(it)
    b.update(items)
    assert a.to_bytes() == b.to_bytes()


def test_bit_layout_is_stable():
    """Filters are stored and exchanged as bytes: the layout must never change."""
    bf = BloomFilter(2048, 4)
    bf.update([f"stable-{i}" for i in range(50)])
    assert hashlib.sha256(bf.to_bytes()).hexdigest()[:16] == "38412507fca8b228"


def test_hash_known_values():
    assert _core.hash64(b"", 0) == _core.hash64(b"", 0)
    assert _core.hash64(b"abc", 0) != _core.hash64(b"abc", 1)
    assert 0 <= _core.hash64(b"abc", 2**64 - 1) < 2**64


def test_bit_bounds():
    buf = bytearray(2)
    _core.set_bit(buf, 15)
    assert buf == bytearray([0, 0x80]) and _core.test_bit(buf, 15)
    with pytest.raises(IndexError):
        _core.set_bit(buf, 16)


def test_union_and_parameters():
    a, b = BloomFilter(512, 3), BloomFilter(512, 3)
    a.add("x")
    b.add("y")
    u = a.union(b)
    assert "x" in u and "y" in u and len(u) == 2
    with pytest.raises(ValueError):
        a.union(BloomFilter(1024, 3))
    assert optimal_parameters(1000, 0.01) == (9586, 7)
    with pytest.raises(ValueError):
        optimal_parameters(0, 0.1)
    with pytest.raises(ValueError):
        BloomFilter(4, 1)


def test_fill_ratio_and_error_estimate():
    bf = BloomFilter(800, 2)
    assert bf.fill_ratio() == 0.0
    bf.update(str(i) for i in range(100))
    assert 0 < bf.fill_ratio() < 0.5
    assert bf.estimated_error() == pytest.approx(bf.fill_ratio() ** 2)
