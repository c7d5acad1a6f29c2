"""Random-input helpers that ENAMEL's input generators call (`rand_parens`, primes, primality).

ENAMEL's generators (the `input_generator` column of `enamel.csv`) call a few helpers that
ENAMEL defines in its own package. These are perfgym's implementations, written from what the
helpers mean. They draw from the module-level `random` generator, which the caller seeds, and
they draw in the same order and the same number of times as ENAMEL's, so that a seeded
generator yields the very inputs ENAMEL's published evaluation used (tests/tasks check this for
every problem and level).
"""

from __future__ import annotations

import random

__all__ = ["miller_rabin", "rand_parens", "rand_primality", "rand_probably_prime"]


def rand_parens(
    size: int, valid: bool = True, par: str = "()", sep: str | None = ""
) -> str | list[str]:
    """A random parenthesis string of about `size` characters.

    valid=True: a balanced sequence of even length (size rounded up), built as a random walk
    that never goes below depth 0 and returns to 0 at the end. Each time the walk is back at
    depth 0 a new top-level group starts; the groups are joined with `sep`, or returned as a
    list when `sep` is None.
    valid=False: an unbalanced string: two balanced halves with a closing-then-opening pair
    between them, so the depth goes negative in the middle.
    """
    opener, closer = par[0], par[1]
    if not valid:
        if sep != "":
            raise ValueError("an unbalanced sequence has no groups to separate (sep must be '')")
        half = (size + 1) // 2 - 1
        left = rand_parens(half, valid=True, par=par)
        right = rand_parens(half, valid=True, par=par)
        assert isinstance(left, str) and isinstance(right, str)
        return left + closer + opener + right

    length = size + size % 2
    groups: list[list[str]] = []
    depth = 0
    for pos in range(length):
        remaining = length - pos
        if depth == 0:
            # Back at the top level: a new group must open; no coin is tossed.
            groups.append([opener])
            depth += 1
        elif depth < remaining and random.randint(0, 1):
            groups[-1].append(opener)
            depth += 1
        else:
            # Either the coin said close, or every remaining position is needed to close.
            groups[-1].append(closer)
            depth -= 1
    texts = ["".join(group) for group in groups]
    return texts if sep is None else sep.join(texts)


def miller_rabin(n: int, k: int = 5) -> bool:
    """Probabilistic primality test with `k` random witnesses (drawn from `random`)."""
    if n in (2, 3):
        return True
    if n < 2 or n % 2 == 0:
        return False
    # n - 1 = d * 2^r with d odd.
    r, d = 0, n - 1
    while d % 2 == 0:
        r += 1
        d //= 2
    for _ in range(k):
        a = random.randint(2, n - 2)
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def rand_probably_prime(lb: int, ub: int | None = None) -> int:
    """A random (probable) prime.

    With one argument: a prime in [lb // 2, lb] (lb at least 3), which exists by Bertrand's
    postulate. With two: a prime in [lb, max(2 * lb, ub, 3)], lb clamped to 0.
    """
    if ub is None:
        high = max(lb, 3)
        low = high // 2
    else:
        low = max(lb, 0)
        high = max(low * 2, ub, 3)
    while True:
        p = random.randint(low, high)
        if miller_rabin(p):
            return p


def rand_primality(size: int, lid: int, cid: int) -> int:
    """A number for a primality-test problem, of magnitude about `size`.

    The first four tests of level 0 are fixed edge cases: 30031 = 59 * 509 (a product of small
    primes plus one, which is composite), 561 (a Carmichael number), 2 and 125. Otherwise the
    test index picks the kind: a prime, the square of a prime, or a product of two primes of
    about sqrt(size).
    """
    size = max(size, 4)
    if lid == 0 and cid < 4:
        return (2 * 3 * 5 * 7 * 11 * 13 + 1, 561, 2, 125)[cid]
    kind = cid % 3
    if kind == 0:
        return rand_probably_prime(size)
    root = int(size**0.5 + 1)
    if kind == 1:
        return rand_probably_prime(root) ** 2
    return rand_probably_prime(root) * rand_probably_prime(root)
