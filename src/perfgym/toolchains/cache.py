"""`BuildCache`: finished builds on disk, keyed by the content hash of what produced them.

Layout under the root (created 0700: runs execute as uid nobody and cannot traverse it):

    <root>/<key[:2]>/<key>/build.json        the Build record (OK and compiler-refused builds)
    <root>/<key[:2]>/<key>/artifact/         the artifact (OK builds only), root-owned, read-only
    <root>/.staging/<key>-<random>/          one builder's work in progress
    <root>/.compiler-cache/<name>/           persistent compiler caches (Go's GOCACHE)

A builder works in its own staging directory and publishes with one rename(2) of a finished
directory, so concurrent builders of the same key never see a half-written entry; the loser of
a race discards its copy and uses the winner's.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from perfgym.sandbox.base import WORK_DIR, SandboxConfig
from perfgym.toolchains.build import Build
from perfgym.toolchains.recipe import Recipe

#: Not under /root or /home: runs cannot see those, and builds and runs bind from here.
DEFAULT_ROOT = "/var/tmp/perfgym/builds"
#: Bumped when the layout or the key's ingredients change, so old entries are never misread.
CACHE_FORMAT = 1
MANIFEST = "build.json"
ARTIFACT_DIR = "artifact"


class BuildCacheConfig(BaseModel):
    """Where builds are cached and whether compilers may keep their own caches there."""

    model_config = ConfigDict(extra="forbid")

    root: str = Field(default=DEFAULT_ROOT, description="Cache directory on the host (absolute).")
    compiler_caches: bool = Field(
        default=False,
        description="Mount a persistent writable compiler cache into builds whose recipe has "
        "one (Go's GOCACHE), shared by every build: only for sources you trust. Anything that "
        "runs during one build can read what others compiled (a task's reference) and leave "
        "code for later ones; off, each build gets a fresh cache.",
    )


class Staging:
    """One builder's private directories: `work` (bound writable into the build, the build's
    working directory) and `final` (what will be published: manifest and artifact)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.work = path / "work"
        self.final = path / "final"
        self.artifact = self.final / ARTIFACT_DIR


class BuildCache:
    """Build outcomes on disk, keyed by content hash; safe for concurrent builders."""

    def __init__(self, config: BuildCacheConfig | None = None) -> None:
        self.config = config or BuildCacheConfig()
        root = Path(self.config.root)
        if not root.is_absolute():
            raise ValueError(f"build cache root must be absolute: {root}")
        self.root = Path(os.path.realpath(root))
        for d in (self.root, self.root / ".staging", self.root / ".compiler-cache"):
            d.mkdir(parents=True, exist_ok=True)
            if d.stat().st_uid == os.geteuid():
                d.chmod(0o700)

    @classmethod
    def at(cls, root: str | os.PathLike[str], *, compiler_caches: bool = False) -> BuildCache:
        return cls(BuildCacheConfig(root=os.fspath(root), compiler_caches=compiler_caches))

    # -- keys ---------------------------------------------------------------------------------
    @staticmethod
    def key(recipe: Recipe, compiler_version: str, source: bytes) -> str:
        """sha256 of the cache format, the recipe's build identity, the compiler's full version
        output and the source bytes."""
        head = json.dumps(
            {"format": CACHE_FORMAT, "recipe": recipe.identity(), "compiler": compiler_version},
            sort_keys=True,
        ).encode()
        h = hashlib.sha256()
        h.update(len(head).to_bytes(8, "big"))  # length-prefixed: no ambiguity with the source
        h.update(head)
        h.update(source)
        return h.hexdigest()

    def entry(self, key: str) -> Path:
        return self.root / key[:2] / key

    # -- reading --------------------------------------------------------------------------------
    def lookup(self, key: str) -> Build | None:
        """The published build of `key`, marked cached; None when absent or unreadable."""
        entry = self.entry(key)
        try:
            build = Build.model_validate_json((entry / MANIFEST).read_bytes())
        except (OSError, ValidationError):
            return None
        if build.key != key:
            return None
        artifact = entry / ARTIFACT_DIR
        if build.ok and not artifact.is_dir():
            return None
        with contextlib.suppress(OSError):  # its last use, for `cache_trim` (oldest go first)
            os.utime(entry / MANIFEST)
        return build.model_copy(
            update={"cached": True, "artifact_dir": str(artifact) if build.ok else None}
        )

    # -- writing --------------------------------------------------------------------------------
    @contextlib.contextmanager
    def stage(self, key: str) -> Iterator[Staging]:
        """A fresh staging directory, removed when the block ends (published or not)."""
        path = Path(tempfile.mkdtemp(prefix=f"{key[:16]}-", dir=self.root / ".staging"))
        staging = Staging(path)
        try:
            staging.work.mkdir()
            # The compiler runs as uid nobody and writes its outputs here.
            staging.work.chmod(0o777)
            staging.artifact.mkdir(parents=True)
            yield staging
        finally:
            shutil.rmtree(path, ignore_errors=True)

    def publish(self, staging: Staging, build: Build) -> Build:
        """Atomically publish `build` (and its artifact when OK); returns it as it now lives.

        When another builder published the same key first, its entry is kept and returned.
        """
        entry = self.entry(build.key)
        record = build.model_copy(update={"artifact_dir": None, "cached": False})
        (staging.final / MANIFEST).write_text(record.model_dump_json(indent=1))
        if not build.ok:
            shutil.rmtree(staging.artifact)
        _seal(staging.final)
        entry.parent.mkdir(exist_ok=True)
        for _attempt in range(2):
            try:
                os.rename(staging.final, entry)
                break
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
            theirs = self.lookup(build.key)
            if theirs is not None:
                # Lost the race: same key, same inputs, so the winner's artifact is as good.
                return build.model_copy(update={"artifact_dir": theirs.artifact_dir})
            # An unreadable entry (a crash mid-write, another layout): move it aside.
            shutil.move(str(entry), str(staging.path / "corrupt"))
        artifact = entry / ARTIFACT_DIR
        return build.model_copy(update={"artifact_dir": str(artifact) if build.ok else None})

    def compiler_cache_dir(self, name: str) -> Path:
        """A persistent directory the named compiler may write its own cache to."""
        path = self.root / ".compiler-cache" / name
        path.mkdir(exist_ok=True)
        path.chmod(0o777)  # written by the build's uid (nobody); the parent is 0700
        return path

    # -- hiding the cache from runs -----------------------------------------------------------
    def hidden_in(self, config: SandboxConfig) -> bool:
        """Whether runs of a sandbox with `config` see an empty directory at the cache root.

        A root under the host's /tmp is hidden by construction: every run gets a fresh /tmp.
        (A root outside the runs' allow-list view, as the default /var/tmp/perfgym/builds is,
        is not in any run's view either; the hide path is still asked for, so that a cache put
        in a directory the view shows is covered too.)
        """
        root = str(self.root)
        if _under(root, WORK_DIR):
            return True
        return any(_under(root, os.path.realpath(p)) for p in config.hide_paths)

    def hiding(self, config: SandboxConfig | None = None) -> SandboxConfig:
        """`config` (default: a default SandboxConfig) with the cache root added to hide_paths."""
        # model_validate rather than SandboxConfig(): mypy without the pydantic plugin does not
        # see that every field has a default.
        config = config or SandboxConfig.model_validate({})
        if self.hidden_in(config):
            return config.model_copy()
        return config.model_copy(update={"hide_paths": [*config.hide_paths, str(self.root)]})


def _under(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _seal(top: Path) -> None:
    """Make a finished entry read-only for everyone, keeping it readable by runs (uid nobody)."""
    for dirpath, _dirs, files in os.walk(top):
        os.chmod(dirpath, 0o755)  # the owner may still delete it; runs (nobody) may not
        for name in files:
            p = os.path.join(dirpath, name)
            os.chmod(p, 0o555 if os.stat(p).st_mode & 0o111 else 0o444)
