"""A build cache held to a size (`perfgym.toolchains.cache_trim`): real C builds, the least
recently used out first, a recent one never, a hit counting as a use (red team helper-79 grew
a service's /run_code cache by 36 GiB an hour with distinct Go programs)."""

from __future__ import annotations

import os

from perfgym.tasks.task import Language
from perfgym.toolchains import toolchain
from perfgym.toolchains.cache import MANIFEST
from perfgym.toolchains.cache_trim import _size, trim

from .programs import PROGRAMS


def _builds(sandbox, cache, n: int):  # type: ignore[no-untyped-def]
    """n distinct real C builds (the program with a comment of its own each)."""
    tc = toolchain(Language.C)
    out = [
        tc.build(sandbox, PROGRAMS[Language.C] + f"\n/* build {k} */\n", cache) for k in range(n)
    ]
    assert all(b.ok and not b.cached for b in out)
    return out


def _age(cache, build, seconds_ago: float, now: float) -> None:  # type: ignore[no-untyped-def]
    t = now - seconds_ago
    os.utime(cache.entry(build.key) / MANIFEST, (t, t))


def test_the_least_recently_used_go_first_down_to_the_bound(sandbox, fresh_cache) -> None:  # type: ignore[no-untyped-def]
    builds = _builds(sandbox, fresh_cache, 4)
    now = 1_000_000_000.0 + 10_000
    for k, b in enumerate(builds):
        _age(fresh_cache, b, 4000 - 1000 * k, now)  # builds[0] the oldest
    one = _size(fresh_cache.entry(builds[0].key))
    assert one > 0
    got = trim(fresh_cache.root, max_bytes=2 * one + one // 2, keep_s=600, now=now)
    assert got.removed == 2 and got.held <= 2 * one + one // 2
    assert [fresh_cache.lookup(b.key) is None for b in builds] == [True, True, False, False]


def test_a_recent_build_is_never_trimmed_and_a_hit_is_a_use(sandbox, fresh_cache) -> None:  # type: ignore[no-untyped-def]
    import time

    old, used, recent = _builds(sandbox, fresh_cache, 3)
    now = time.time()
    for b in (old, used, recent):
        _age(fresh_cache, b, 5000, now)
    _age(fresh_cache, recent, 10, now)
    assert fresh_cache.lookup(used.key) is not None  # a hit: its use is now
    got = trim(fresh_cache.root, max_bytes=0, keep_s=600)
    assert got.removed == 1 and fresh_cache.lookup(old.key) is None
    assert fresh_cache.lookup(used.key) is not None and fresh_cache.lookup(recent.key) is not None
    rebuilt = toolchain(Language.C).build(sandbox, PROGRAMS[Language.C] + "\n/* build 0 */\n",
                                          fresh_cache)  # fmt: skip
    assert rebuilt.ok and not rebuilt.cached  # a trimmed program is simply built again
    assert os.listdir(fresh_cache.root / ".staging") == []
