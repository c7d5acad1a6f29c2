"""A seeded sample of a suite's tasks, stratified by language (for suites too large to audit
whole in the time at hand)."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

from perfgym.tasks.task import Task


def stratified_sample(tasks: Sequence[Task], n: int, seed: int) -> list[Task]:
    """`n` tasks drawn with `seed`, each language's share as in `tasks` (largest remainders);
    in the suite's order, so the same arguments always give the same tasks."""
    if n >= len(tasks):
        return list(tasks)
    by_lang: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(tasks):
        by_lang[t.language.value].append(i)
    quota = {lang: n * len(ix) / len(tasks) for lang, ix in by_lang.items()}
    take = {lang: int(q) for lang, q in quota.items()}
    rest = sorted(quota, key=lambda lang: (-(quota[lang] - take[lang]), lang))
    for lang in rest[: n - sum(take.values())]:
        take[lang] += 1
    rng = random.Random(seed)
    chosen: list[int] = []
    for lang in sorted(by_lang):
        chosen += rng.sample(by_lang[lang], take[lang])
    return [tasks[i] for i in sorted(chosen)]
