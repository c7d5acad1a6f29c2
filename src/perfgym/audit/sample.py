"""A seeded sample of a suite's tasks, stratified by language (for suites too large to audit
whole in the time at hand)."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

from perfgym.tasks.task import Task


def choose_tasks(tasks: Sequence[Task], languages: Sequence[str], sample: int | None,
                 seed: int) -> list[Task]:  # fmt: skip
    """The tasks in (or, for '-L', not in) `languages` (each may list several, comma-separated),
    then a seeded sample of `sample` stratified by language. Raises ConfigError on a language
    no task is in or a sample under 1."""
    from perfgym.errors import ConfigError

    langs = [x.strip() for arg in languages for x in arg.split(",") if x.strip()]
    known = {t.language.value for t in tasks}
    for lang in langs:
        if lang.lstrip("-") not in known:
            raise ConfigError(f"--language {lang}: no task in it (languages here: "
                              f"{', '.join(sorted(known))})")  # fmt: skip
    keep = {x for x in langs if not x.startswith("-")}
    drop = {x[1:] for x in langs if x.startswith("-")}
    chosen = [t for t in tasks if (not keep or t.language.value in keep)
              and t.language.value not in drop]  # fmt: skip
    if sample is None:
        return chosen
    if sample < 1:
        raise ConfigError(f"--sample must be at least 1, got {sample}")
    return stratified_sample(chosen, sample, seed)


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
