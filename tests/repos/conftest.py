"""Shared fixtures of the repository-task tests: one cache folder and sandbox per session."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def repo_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Copies and clones live outside /tmp (the sandbox replaces /tmp in every run)."""
    root = Path("/var/tmp/perfgym-test-repos") / f"s{os.getpid()}"
    root.mkdir(parents=True, exist_ok=True)
    os.environ["PERFGYM_REPO_CACHE"] = str(root)
    yield root
    import shutil

    shutil.rmtree(root, ignore_errors=True)


def _tree_hash(root: Path) -> str:
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
def tree_hash():  # type: ignore[no-untyped-def]
    """The tree digest as a fixture (test modules cannot import conftest in importlib mode)."""
    return _tree_hash
