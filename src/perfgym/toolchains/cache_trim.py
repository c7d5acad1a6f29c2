"""Holding a build cache to a size: the least recently used entries go first.

A `BuildCache` keeps every distinct program's build (red team helper-79 grew a service's
`/run_code` cache by about 10 MiB/s with 5 Go programs a second: 36 GiB an hour). `trim`
removes whole entries, oldest use first, until the cache holds at most `max_bytes`. An entry's
use is its manifest's modification time, which `BuildCache.lookup` refreshes on every hit; an
entry used within the last `keep_s` is never removed (a run may be about to bind its artifact),
so a cache whose recent entries alone exceed the bound stays above it until they age.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from perfgym.toolchains.cache import MANIFEST


@dataclass(frozen=True)
class Trimmed:
    removed: int  # entries removed
    freed: int  # their bytes
    held: int  # bytes the cache holds after


def _size(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def _entries(root: Path) -> list[tuple[float, int, Path]]:
    """(last use, bytes, path) of every published entry under `root` (`<xx>/<key>/`)."""
    out = []
    for shard in root.iterdir() if root.is_dir() else ():
        if len(shard.name) != 2 or not shard.is_dir():
            continue  # .staging, .compiler-cache
        for entry in shard.iterdir():
            try:
                used = (entry / MANIFEST).stat().st_mtime
            except OSError:
                used = 0.0  # no manifest: a broken entry, first to go
            out.append((used, _size(entry), entry))
    return out


def trim(root: Path, max_bytes: int, keep_s: float = 600.0, now: float | None = None) -> Trimmed:
    """Remove the least recently used entries of the build cache at `root` until it holds at
    most `max_bytes`, never one used within the last `keep_s` seconds."""
    now = time.time() if now is None else now
    entries = sorted(_entries(root))
    held = sum(size for _used, size, _path in entries)
    removed = freed = 0
    for used, size, path in entries:
        if held <= max_bytes or now - used < keep_s:
            break  # sorted by use: every later entry is more recent
        shutil.rmtree(path, ignore_errors=True)
        held -= size
        freed += size
        removed += 1
    return Trimmed(removed, freed, held)
