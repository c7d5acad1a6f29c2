"""Shared fixtures of the agent tests: a copy cache outside /tmp, one warm sandbox, a small
repository task written here (a quadratic hotspot two layers below its API)."""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from agent_repo import write_task  # noqa: E402


@pytest.fixture(scope="session")
def agent_cache() -> Path:
    """Copies live outside /tmp (the sandbox gives every run its own /tmp)."""
    root = Path("/var/tmp/perfgym-test-agent") / f"s{os.getpid()}"
    root.mkdir(parents=True, exist_ok=True)
    old = os.environ.get("PERFGYM_REPO_CACHE")
    os.environ["PERFGYM_REPO_CACHE"] = str(root)
    yield root
    if old is None:
        os.environ.pop("PERFGYM_REPO_CACHE", None)
    else:
        os.environ["PERFGYM_REPO_CACHE"] = old
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def sandbox(agent_cache):  # type: ignore[no-untyped-def]
    from perfgym.sandbox import make_sandbox

    sb = make_sandbox("warm")
    yield sb
    sb.close()


@pytest.fixture(scope="session")
def dedup_task(tmp_path_factory: pytest.TempPathFactory, agent_cache: Path):  # type: ignore[no-untyped-def]
    return write_task(agent_cache / "tasks" / "dedup")


def tree_hash(root: Path) -> str:
    """A digest of every path, mode and file content under `root`."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath) / name
            st = p.lstat()
            h.update(f"{p.relative_to(root)}\0{st.st_mode}\0".encode())
            h.update(os.readlink(p).encode() if p.is_symlink() else p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="session")
def digest():  # type: ignore[no-untyped-def]
    return tree_hash
