"""The helpers ENAMEL's generators call: what each returns means what its name says."""

from __future__ import annotations

import random

import pytest

from perfgym.tasks.enamel_random import (
    miller_rabin,
    rand_parens,
    rand_primality,
    rand_probably_prime,
)


def _is_prime(n: int) -> bool:
    return n >= 2 and all(n % d for d in range(2, int(n**0.5) + 1))


def _depths(text: str, par: str = "()") -> list[int]:
    depth, out = 0, []
    for ch in text:
        depth += 1 if ch == par[0] else -1
        out.append(depth)
    return out


@pytest.mark.parametrize("size", [0, 1, 2, 7, 50, 301])
def test_valid_parens_are_balanced_groups(size: int) -> None:
    random.seed(size)
    text = rand_parens(size)
    assert isinstance(text, str)
    assert len(text) == size + size % 2
    depths = _depths(text)
    assert all(d >= 0 for d in depths) and (not depths or depths[-1] == 0)
    random.seed(size)
    groups = rand_parens(size, sep=None)
    assert isinstance(groups, list) and "".join(groups) == text
    for group in groups:  # each group returns to depth 0 only at its end
        assert 0 not in _depths(group)[:-1] and _depths(group)[-1] == 0
    random.seed(size)
    spaced = rand_parens(size, sep=" ", par="[]")
    assert spaced == " ".join(g.replace("(", "[").replace(")", "]") for g in groups)


@pytest.mark.parametrize("size", [3, 10, 99])
def test_invalid_parens_go_below_zero(size: int) -> None:
    random.seed(size)
    text = rand_parens(size, valid=False)
    assert isinstance(text, str) and min(_depths(text)) < 0
    with pytest.raises(ValueError):
        rand_parens(size, valid=False, sep=None)


def test_miller_rabin_agrees_with_trial_division() -> None:
    random.seed(7)
    for n in range(0, 5000):
        assert miller_rabin(n) == _is_prime(n), n
    for carmichael in (561, 1105, 1729, 2465, 2821, 6601, 8911, 41041, 825265):
        assert not miller_rabin(carmichael)
    assert miller_rabin(998244353) and miller_rabin(2**61 - 1)


def test_rand_probably_prime_ranges() -> None:
    random.seed(11)
    for bound in (3, 10, 1000, 10**9):
        p = rand_probably_prime(bound)
        assert max(bound, 3) // 2 <= p <= max(bound, 3)
        assert _is_prime(p)
    for low, high in ((0, 2), (10, 12), (100, 50)):
        p = rand_probably_prime(low, high)
        assert max(low, 0) <= p <= max(2 * low, high, 3) and _is_prime(p)


def test_rand_primality_fixed_cases_and_kinds() -> None:
    assert [rand_primality(100, 0, cid) for cid in range(4)] == [30031, 561, 2, 125]
    assert 30031 == 59 * 509
    random.seed(3)
    prime = rand_primality(10_000, 1, 0)
    square = rand_primality(10_000, 1, 1)
    product = rand_primality(10_000, 1, 2)
    assert _is_prime(prime) and 5_000 <= prime <= 10_000
    root = round(square**0.5)
    assert root * root == square and _is_prime(root)
    assert not _is_prime(product) and product > 1


def test_helpers_draw_only_from_the_seeded_stream() -> None:
    random.seed(42)
    first = (rand_parens(40), rand_probably_prime(10**6), rand_primality(10**8, 2, 5))
    random.seed(42)
    again = (rand_parens(40), rand_probably_prime(10**6), rand_primality(10**8, 2, 5))
    assert first == again
