"""Workloads for rs-set-intersect: 300 random subsets of a 4096-element universe, `size` queries."""

import itertools
import random

_BITS = bytes.maketrans(b"01", b"\x00\x01")


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    universe, n_sets = 4096, 300
    names = [str(i) for i in range(universe)]
    lines = [f"{universe} {n_sets} {size}"]
    for _ in range(n_sets):
        # AND-ing random masks gives densities 1/2, 1/4 or 1/8: sets of quite different sizes.
        mask = rng.getrandbits(universe)
        for _ in range(rng.randrange(3)):
            mask &= rng.getrandbits(universe)
        selectors = f"{mask:0{universe}b}".encode().translate(_BITS)
        members = list(itertools.compress(names, selectors))
        # Rotated, so the elements are not listed in sorted order.
        cut = rng.randrange(len(members) + 1)
        lines.append(" ".join([str(len(members)), *members[cut:], *members[:cut]]))
    picks = rng.choices(range(n_sets), k=2 * size)
    lines.extend(f"{picks[2 * q]} {picks[2 * q + 1]}" for q in range(size))
    return "\n".join(lines) + "\n"
