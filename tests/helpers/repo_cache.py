"""`repo_cache_dir`: a folder for repository copies outside /tmp (the sandbox gives every run its
own /tmp), made PERFGYM_REPO_CACHE while in use and removed after."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def repo_cache_dir(tag: str, base: str = "/var/tmp/perfgym-test-repos") -> Iterator[Path]:
    root = Path(base) / f"{tag}{os.getpid()}"
    root.mkdir(parents=True, exist_ok=True)
    before = os.environ.get("PERFGYM_REPO_CACHE")
    os.environ["PERFGYM_REPO_CACHE"] = str(root)
    try:
        yield root
    finally:
        if before is None:
            os.environ.pop("PERFGYM_REPO_CACHE", None)
        else:
            os.environ["PERFGYM_REPO_CACHE"] = before
        shutil.rmtree(root, ignore_errors=True)
