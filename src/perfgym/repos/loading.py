"""`load_repo_task(folder)` and `load_repo_suite(path)`: repository tasks from task.toml/yaml.

A task folder holds `task.toml` (or `task.yaml`) with the `RepoTask` fields, the workload
scripts and the expert patch it names (paths relative to the folder), and usually the
repository itself (`repo = "repo"`). A suite is a folder of task folders, or the built-in
`perfgym-repos` (the three example repositories shipped in `suites/perfgym-repos`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from perfgym.errors import TaskFormatError
from perfgym.repos.copy import is_git_url
from perfgym.repos.task import RepoTask

TASK_FILES = ("task.toml", "task.yaml", "task.yml")
BUILTIN_SUITE = "perfgym-repos"


def _read(path: Path) -> dict[str, Any]:
    try:
        if path.suffix == ".toml":
            return tomllib.loads(path.read_text())
        data = yaml.safe_load(path.read_text())
    except (OSError, tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TaskFormatError(f"{path}: unreadable: {first}") from exc
    if not isinstance(data, dict):
        raise TaskFormatError(f"{path}: expected a mapping of task fields")
    return data


def task_file(folder: Path) -> Path | None:
    return next((folder / n for n in TASK_FILES if (folder / n).is_file()), None)


def holds_repo_task(folder: Path) -> bool:
    """Whether `folder`'s task file describes a repository task (it names a `repo`): a program
    task's `task.yaml` does not (red team helper-99: `perfgym audit suites/perfgym-core` was
    read as a repository suite). A file that cannot be read counts as one when it is TOML,
    which only repository tasks use, so its error comes from the loader that reads it."""
    path = task_file(folder)
    if path is None:
        return False
    try:
        return "repo" in _read(path)
    except TaskFormatError:
        return path.suffix == ".toml"


def _one_line(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(x) for x in err["loc"]) or "task"
    return f"{where}: {err['msg']}" + (
        f" ({len(exc.errors())} errors)" if exc.error_count() > 1 else ""
    )


def load_repo_task(folder: str | Path) -> RepoTask:
    """The task described by `folder`'s task.toml/yaml; TaskFormatError (one line) when the
    file is missing or malformed or names files that do not exist."""
    folder = Path(folder).resolve()
    path = task_file(folder)
    if path is None:
        raise TaskFormatError(f"{folder}: no {' or '.join(TASK_FILES)}")
    data = _read(path)
    data.setdefault("id", folder.name)
    unknown = sorted(set(data) - set(RepoTask.model_fields) - {"folder"})
    if unknown:
        hint = ("; a program task (perfgym generate, eval and optimize run those)"
                if "baseline" in unknown else "")  # fmt: skip
        raise TaskFormatError(f"{path}: unknown field(s) {', '.join(unknown)}{hint}")
    try:
        task = RepoTask.model_validate(data).model_copy(update={"folder": folder})
    except ValidationError as exc:
        raise TaskFormatError(f"{path}: {_one_line(exc)}") from exc
    if not task.workloads:
        raise TaskFormatError(f"{path}: no workloads")
    names = [w.name for w in task.workloads]
    if len(set(names)) != len(names):
        raise TaskFormatError(f"{path}: workload names repeat: {names}")
    for w in task.workloads:
        if not (folder / w.script).is_file():
            raise TaskFormatError(f"{path}: workload {w.name!r}: no file {w.script}")
    if task.expert_patch and not (folder / task.expert_patch).is_file():
        raise TaskFormatError(f"{path}: expert_patch {task.expert_patch} does not exist")
    if not is_git_url(task.repo) and not (folder / task.repo).is_dir():
        raise TaskFormatError(f"{path}: repo {task.repo} is neither a folder nor a git URL")
    return task


def builtin_suite_dir() -> Path:
    """`suites/perfgym-repos`: in the installed package's data, else the source checkout."""
    package_dir = Path(__file__).resolve().parents[1]
    for candidate in (
        package_dir / "suites" / BUILTIN_SUITE,
        package_dir.parents[1] / "suites" / BUILTIN_SUITE,
    ):
        if candidate.is_dir():
            return candidate
    raise TaskFormatError(f"built-in suite {BUILTIN_SUITE!r} not found beside {package_dir}")


def load_repo_suite(path: str | Path) -> list[RepoTask]:
    """Every task folder under `path` (or the built-in `perfgym-repos`), sorted by id; a
    single task folder is a suite of one."""
    root = builtin_suite_dir() if str(path) == BUILTIN_SUITE else Path(path)
    if not root.is_dir():
        raise TaskFormatError(f"no repository suite at {path}")
    if task_file(root) is not None:
        return [load_repo_task(root)]
    tasks = [load_repo_task(d) for d in sorted(root.iterdir()) if d.is_dir() and task_file(d)]
    if not tasks:
        raise TaskFormatError(f"{root}: no task folders (each needs a {TASK_FILES[0]})")
    return sorted(tasks, key=lambda t: t.id)


def expert_patch_text(task: RepoTask) -> str | None:
    if not task.expert_patch:
        return None
    base = task.folder or Path.cwd()
    return (base / task.expert_patch).read_text()
