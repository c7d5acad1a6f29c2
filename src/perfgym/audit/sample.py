"""A seeded sample of a suite's tasks, stratified by language (for suites too large to audit
whole in the time at hand)."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

from perfgym.tasks.task import Task


def stratified_sample(tasks: Sequence[Task], n: int, seed: int) -> list[Task]:
    """`n` tasks drawn with `seed`, each language's share as in `tasks` (largest remainders),
    and at least one of every language present when `n` allows; in the suite's order, so the
    same arguments always give the same tasks."""
    if n >= len(tasks):
        return list(tasks)
    by_lang: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(tasks):
        by_lang[t.language.value].append(i)
    quota = {lang: n * len(ix) / len(tasks) for lang, ix in by_lang.items()}
    take = {lang: int(q) for lang, q in quota.items()}
    if n >= len(by_lang):  # one of each: taken from the languages with the most
        for lang in by_lang:
            take[lang] = max(take[lang], 1)
        while sum(take.values()) > n:
            most = min(take, key=lambda lang: (-take[lang], quota[lang] - take[lang], lang))
            take[most] -= 1
    rest = sorted(quota, key=lambda lang: (-(quota[lang] - take[lang]), lang))
    for lang in rest[: n - sum(take.values())]:
        take[lang] += 1
    rng = random.Random(seed)
    chosen: list[int] = []
    for lang in sorted(by_lang):
        chosen += rng.sample(by_lang[lang], take[lang])
    return [tasks[i] for i in sorted(chosen)]
