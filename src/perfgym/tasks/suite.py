"""`load_suite(spec)`: the one entry to every loader; it sits above the loaders it dispatches to.

`spec` is one of:
  - a built-in name: `perfgym-core`, `enamel`, `humaneval`, `humanevalplus`;
  - a directory of perfgym task directories (each with `task.yaml`), see docs/task-format.md;
  - a `tasks.jsonl` file (one `Task` JSON object per line), or a directory holding only one;
  - a PerfCodeBench `executable_tasks/` directory (recognised by its `*/instance.json`), or the
    repository root above it.
Anything else is a `ConfigError` that lists the built-ins.

The `Suite` model lives in `suite_model.py` (loaders import it from there, never this module);
it is re-exported here for callers that import it beside `load_suite`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path

from perfgym.errors import ConfigError
from perfgym.tasks import native, perfcodebench
from perfgym.tasks.suite_model import Suite

__all__ = [
    "BUILTINS",
    "Suite",
    "find_suite_dir",
    "load_perfgym_core",
    "load_suite",
    "perfgym_core_candidates",
]

#: Built-in suites: name -> "module:function" returning a Suite (imported only when asked).
BUILTINS: dict[str, str] = {
    "perfgym-core": "perfgym.tasks.suite:load_perfgym_core",
    "enamel": "perfgym.tasks.enamel:load_enamel",
    "humaneval": "perfgym.tasks.humaneval:load_humaneval",
    "humanevalplus": "perfgym.tasks.humaneval:load_humanevalplus",
}


def load_suite(
    spec: str | Path, *, external: str | Path | None = None, tasks: Sequence[str] | None = None
) -> Suite:
    """Load a suite from a built-in name or a path (see the module docstring).

    PerfCodeBench only: `external` locates the `external/` library folder (else
    $PERFGYM_PCB_EXTERNAL, else `<root>/external`), and `tasks` names the only task directories
    parsed. Other formats ignore both (callers select tasks after loading).
    """
    if isinstance(spec, str) and spec in BUILTINS:
        return _builtin_loader(spec)()
    path = Path(spec).expanduser()
    if path.is_file():
        if path.suffix == ".jsonl":
            return native.load_jsonl(path)
        raise ConfigError(f"cannot load a suite from file {path}: only a tasks .jsonl file is")
    if path.is_dir():
        return _load_directory(path, external, tasks)
    raise ConfigError(
        f"unknown suite {str(spec)!r}: not a built-in ({', '.join(BUILTINS)}) and no such path"
    )


def _load_directory(path: Path, external: str | Path | None, tasks: Sequence[str] | None) -> Suite:
    for pcb in (path, path / "executable_tasks"):
        if perfcodebench.is_executable_tasks_dir(pcb):
            return perfcodebench.load_perfcodebench(pcb, external=external, only=tasks)
    task_dirs = native.task_dirs(path)
    if not task_dirs and (path / "tasks.jsonl").is_file():
        return native.load_jsonl(path / "tasks.jsonl")
    return native.load_directory(path)


def _builtin_loader(name: str) -> Callable[[], Suite]:
    module_name, func_name = BUILTINS[name].split(":")
    loader: Callable[[], Suite] = getattr(importlib.import_module(module_name), func_name)
    return loader


def perfgym_core_candidates() -> list[Path]:
    """Where the `perfgym-core` suite is looked for, in order.

    Inside the installed package (`perfgym/suites/perfgym-core`, where package data would put
    it), then the source checkout's top-level `suites/perfgym-core` (src layout: three levels
    above this file).
    """
    package_dir = Path(__file__).resolve().parents[1]
    return [
        package_dir / "suites" / "perfgym-core",
        package_dir.parents[1] / "suites" / "perfgym-core",
    ]


def find_suite_dir(name: str, candidates: Sequence[Path]) -> Path:
    """The first existing directory among `candidates`; ConfigError naming them all otherwise."""
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    searched = ", ".join(str(c) for c in candidates)
    raise ConfigError(f"built-in suite {name!r} not found; searched: {searched}")


def load_perfgym_core() -> Suite:
    """perfgym's own suite, in perfgym's native format."""
    directory = find_suite_dir("perfgym-core", perfgym_core_candidates())
    suite = native.load_directory(directory, name="perfgym-core")
    return suite.model_copy(update={"source": f"builtin:perfgym-core ({directory})"})
