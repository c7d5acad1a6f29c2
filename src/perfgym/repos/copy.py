"""`make_copy`: a private, writable copy of a task's repository (local folder or git URL + commit).

A local folder is copied without its `.git` and committed afresh as the copy's original
commit; a git URL is cloned once into a cache (`cache_dir`, default `repo_cache_dir()`) and
each copy is a full clone of that cache (no hard links, so nothing a run does to a copy
reaches the cache) checked out at the task's commit. Copies are owned by the sandbox's run
user so a sandboxed command can write them; the host never runs git in a copy again after
creating it (a program could plant hooks or config there): `shell.take_patch` and
`shell.apply_patch` run git inside the sandbox.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from perfgym.errors import ConfigError
from perfgym.sandbox.request import RUN_UID

#: Paths never copied from a local folder (git metadata, caches, build outputs of the host).
SKIP_NAMES = frozenset({".git", "__pycache__", ".pytest_cache", ".testmondata", ".mypy_cache"})
_GIT_TIMEOUT_S = 300.0


class RepoFetchError(ConfigError):
    """A task's repository cannot be obtained (no such folder, an unfetchable URL or commit)."""


@dataclass(frozen=True)
class RepoCopy:
    """A private copy: `path` (bound writable into runs) and the commit it started from."""

    path: Path
    base_commit: str
    #: What the patch applied to it wrote, as a diff read from the files (`shell.apply_patch`):
    #: what the static checks read, never the patch's own text.
    applied: str = ""
    #: Code its build step wrote or changed (`checks.build_copy`): Python modules, start-up
    #: hooks and compiled modules, by path.
    built_code: tuple[str, ...] = ()
    #: Every file its build step wrote or changed, code or not (`checks.build_copy`), by path.
    built_files: tuple[str, ...] = ()

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        base_file(self.path).unlink(missing_ok=True)


def is_git_url(repo: str) -> bool:
    return repo.startswith(("http://", "https://", "git://", "ssh://", "file://", "git@"))


def repo_cache_dir() -> Path:
    """Where clones of git URLs and the copies live: $PERFGYM_REPO_CACHE or /var/tmp/perfgym/repos
    (outside /tmp, which every run replaces by its own)."""
    return Path(os.environ.get("PERFGYM_REPO_CACHE", "/var/tmp/perfgym/repos"))


def base_file(copy_dir: Path) -> Path:
    """The side file holding a copy's original commit (beside the copy, outside every run)."""
    return copy_dir.parent / f"{copy_dir.name}.base"


def read_base_commit(copy_dir: Path) -> str:
    try:
        return base_file(copy_dir).read_text().strip()
    except OSError as exc:
        raise ConfigError(f"{copy_dir} is not a perfgym repository copy (no base commit)") from exc


def _git_env() -> dict[str, str]:
    """git on the host sees no user or system configuration (no hooks, no credential helpers)."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        HOME=tempfile.gettempdir(),
        GIT_TERMINAL_PROMPT="0",
        GIT_AUTHOR_NAME="perfgym",
        GIT_AUTHOR_EMAIL="perfgym@localhost",
        GIT_COMMITTER_NAME="perfgym",
        GIT_COMMITTER_EMAIL="perfgym@localhost",
        GIT_AUTHOR_DATE="2000-01-01T00:00:00Z",
        GIT_COMMITTER_DATE="2000-01-01T00:00:00Z",
    )
    return env


def git(args: list[str], cwd: Path | None = None, what: str = "git") -> str:
    """Run host git (only on trees perfgym made or caches); RepoFetchError with git's last line."""
    try:
        proc = subprocess.run(
            ["git", "-c", "core.hooksPath=/dev/null", *args],
            cwd=cwd,
            env=_git_env(),
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RepoFetchError(f"{what}: {exc}") from exc
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        fatal = [ln for ln in lines if ln.startswith(("fatal:", "error:"))] or lines
        raise RepoFetchError(f"{what}: {fatal[0] if fatal else f'git exited {proc.returncode}'}")
    return proc.stdout.strip()


def cached_clone(url: str, cache_dir: Path | None = None) -> Path:
    """A bare clone of `url` in the cache, made once (concurrent callers: first one wins)."""
    root = (cache_dir or repo_cache_dir()) / "clones"
    root.mkdir(parents=True, exist_ok=True)
    dest = root / (hashlib.sha256(url.encode()).hexdigest()[:16] + ".git")
    if dest.is_dir():
        return dest
    tmp = root / f".{dest.name}.{uuid.uuid4().hex[:8]}"
    try:
        git(["clone", "--bare", "--quiet", url, str(tmp)], what=f"cannot fetch {url}")
        try:
            tmp.rename(dest)
        except OSError:  # another caller made it meanwhile
            pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _own_for_runs(path: Path) -> None:
    """Give the copy to the sandbox's run user (as root) so sandboxed commands can write it."""
    if os.geteuid() != 0:
        return
    for dirpath, dirnames, filenames in os.walk(path):
        os.lchown(dirpath, RUN_UID, RUN_UID)
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), RUN_UID, RUN_UID)


def _ignore(_dir: str, names: list[str]) -> set[str]:
    return {n for n in names if n in SKIP_NAMES or n.endswith((".pyc", ".so", ".egg-info"))}


def resolve_source(repo: str, folder: Path | None) -> str | Path:
    """A git URL as given, or the local folder (relative to the task folder) that must exist."""
    if is_git_url(repo):
        return repo
    path = Path(repo)
    if not path.is_absolute() and folder is not None:
        path = folder / path
    if not path.is_dir():
        raise RepoFetchError(f"repository folder {path} does not exist")
    return path.resolve()


def make_copy(
    repo: str | Path,
    commit: str | None = None,
    *,
    folder: Path | None = None,
    dest_root: Path | None = None,
    cache_dir: Path | None = None,
) -> RepoCopy:
    """A fresh private copy of `repo` (a local folder, relative to `folder`, or a git URL at
    `commit`, default HEAD) under `dest_root` (default: the cache's `copies/`)."""
    source = resolve_source(str(repo), folder)
    root = dest_root or (cache_dir or repo_cache_dir()) / "copies"
    root.mkdir(parents=True, exist_ok=True)
    dest = root / f"copy-{uuid.uuid4().hex[:12]}"
    try:
        if isinstance(source, Path):
            shutil.copytree(source, dest, symlinks=True, ignore=_ignore)
            git(["init", "--quiet", "-b", "main", str(dest)], what="git init")
            git(["add", "-A"], cwd=dest, what="git add")
            git(["commit", "--quiet", "--allow-empty", "-m", "original"], cwd=dest, what="commit")
        else:
            clone = cached_clone(source, cache_dir)
            git(["clone", "--quiet", "--no-hardlinks", "--no-checkout", str(clone), str(dest)],
                what=f"cannot copy {source}")  # fmt: skip
            git(["checkout", "--quiet", "--detach", commit or "HEAD"], cwd=dest,
                what=f"cannot check out {commit or 'HEAD'} of {source}")  # fmt: skip
        base = git(["rev-parse", "HEAD"], cwd=dest, what="git rev-parse")
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    _own_for_runs(dest)
    base_file(dest).write_text(base + "\n")
    return RepoCopy(path=dest, base_commit=base)
