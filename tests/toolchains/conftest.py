"""Toolchain fixtures: one build cache and one sandbox that hides it, per test session."""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.sandbox.warm import WarmSandbox
from perfgym.tasks.task import Language
from perfgym.toolchains import Build, BuildCache, toolchain

from .programs import PROGRAMS


@pytest.fixture(scope="session")
def cache_root() -> Iterator[Path]:
    # Under /var/tmp, like the default root, so that hiding it from runs is exercised for real
    # (a root under the host's /tmp would be invisible to runs anyway).
    root = Path(tempfile.mkdtemp(prefix="perfgym-toolchains-test-", dir="/var/tmp"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def cache(cache_root: Path) -> BuildCache:
    return BuildCache.at(cache_root / "shared")


@pytest.fixture(scope="session")
def sandbox(cache_root: Path) -> Iterator[WarmSandbox]:
    # Hides the whole session root, so per-test caches under it are hidden too.
    sb = WarmSandbox(BuildCache.at(cache_root).hiding())
    yield sb
    sb.close()


@pytest.fixture(scope="session")
def workers(sandbox: WarmSandbox) -> Iterator[PythonWorkerPool]:
    """Warm Python workers hiding what the sandbox hides (the judge shares its config alike)."""
    pool = PythonWorkerPool(size=1, config=sandbox.config)
    yield pool
    pool.close()


@pytest.fixture
def fresh_cache(cache_root: Path, tmp_path: Path) -> BuildCache:
    """An empty cache of this test's own (under the hidden session root)."""
    return BuildCache.at(cache_root / tmp_path.name)


@pytest.fixture(scope="session")
def built(sandbox: WarmSandbox, cache: BuildCache):
    """build(language) -> Build of that language's test program, built once per session
    (Go, Rust and Java builds take a second or more each)."""
    done: dict[Language, Build] = {}
    lock = threading.Lock()

    def get(language: Language) -> Build:
        with lock:
            if language not in done:
                tc = toolchain(language)
                if (why := tc.missing()) is not None:
                    pytest.skip(why)
                done[language] = tc.build(sandbox, PROGRAMS[language], cache)
            return done[language]

    return get
