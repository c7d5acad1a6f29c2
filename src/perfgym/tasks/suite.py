"""`load_suite(spec)`: the one entry to every loader; it sits above the loaders it dispatches to.

`spec` is one of:
  - a built-in name: `perfgym-core`, `enamel`, `humaneval`, `humanevalplus`;
  - a directory of perfgym task directories (each with `task.yaml`), see docs/task-format.md;
  - a `tasks.jsonl` file (one `Task` JSON object per line), or a directory holding only one;
  - a PerfCodeBench `executable_tasks/` directory (recognised by its `*/instance.json`), or the
    repository root above it;
  - a published suite: `mercury`, `effibench`, `effibench-x`, `evalperf` (from the Hugging
    Face hub), or a local file in its schema, `<name>:<path>` or a `.jsonl`/`.json`/`.parquet`
    file recognised by its fields.
Anything else is a `ConfigError` that lists the built-ins.

The `Suite` model lives in `suite_model.py` (loaders import it from there, never this module);
it is re-exported here for callers that import it beside `load_suite`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from perfgym.errors import ConfigError
from perfgym.registry import Kind, get, register
from perfgym.tasks import native, perfcodebench
from perfgym.tasks.suite_model import Suite

#: A registered suite's loader: `file` is a hub suite's local file (None: the hub; built-ins
#: take none).
SuiteLoader = Callable[[Path | None], Suite]

__all__ = [
    "BUILTINS",
    "HUB_SUITES",
    "PUBLISHED",
    "Suite",
    "find_suite_dir",
    "load_perfgym_core",
    "load_suite",
    "perfgym_core_candidates",
    "published_format",
]

#: Built-in suites (`perfgym list suites`): registered below, each loaded only when asked.
BUILTINS: list[str] = []
#: Published suites read from the Hugging Face hub (`datasets`), or from a local file given as
#: "<name>:<path>" (or recognised by its fields; see `published_format`). Kept apart from
#: BUILTINS: loading one by name reaches the network, which the service must not do unasked.
HUB_SUITES: list[str] = []


def _suite(name: str, *, hub: bool = False) -> Callable[[SuiteLoader], SuiteLoader]:
    """Register a suite's loader, `loader(file)`: a hub suite reads `file` (None: the hub)."""
    (HUB_SUITES if hub else BUILTINS).append(name)
    return register(Kind.SUITES, name)


@_suite("perfgym-core")
def _perfgym_core(file: Path | None) -> Suite:
    """perfgym's own suite: program tasks in seven languages, in perfgym's native format."""
    return load_perfgym_core()


@_suite("enamel")
def _enamel(file: Path | None) -> Suite:
    """ENAMEL's 164 HumanEval problems with expert references and level-by-level inputs."""
    from perfgym.tasks.enamel import load_enamel

    return load_enamel()


@_suite("humaneval")
def _humaneval(file: Path | None) -> Suite:
    """The 164 HumanEval problems, judged by their own `check` function."""
    from perfgym.tasks.humaneval import load_humaneval

    return load_humaneval()


@_suite("humanevalplus")
def _humanevalplus(file: Path | None) -> Suite:
    """The 164 HumanEval+ problems with their base and plus inputs."""
    from perfgym.tasks.humaneval import load_humanevalplus

    return load_humanevalplus()


@_suite("mercury", hub=True)
def _mercury(file: Path | None) -> Suite:
    """Mercury, from the Hugging Face hub or a local file in its schema ('mercury:PATH')."""
    from perfgym.tasks.mercury import load_mercury

    return load_mercury(file)


@_suite("effibench", hub=True)
def _effibench(file: Path | None) -> Suite:
    """EffiBench, from the Hugging Face hub or a local file in its schema ('effibench:PATH')."""
    from perfgym.tasks.effibench import load_effibench

    return load_effibench(file)


@_suite("effibench-x", hub=True)
def _effibench_x(file: Path | None) -> Suite:
    """EffiBench-X (Python), from the Hugging Face hub or a local file ('effibench-x:PATH')."""
    from perfgym.tasks.effibench_x import load_effibench_x

    return load_effibench_x(file)


@_suite("evalperf", hub=True)
def _evalperf(file: Path | None) -> Suite:
    """EvalPerf, from the Hugging Face hub or a local file in its schema ('evalperf:PATH')."""
    from perfgym.tasks.evalperf import load_evalperf

    return load_evalperf(file)


#: Published formats that also load from a local file: name -> the fields that identify it.
PUBLISHED: dict[str, tuple[str, ...]] = {
    "mercury": ("slug_name", "test_cases", "convert_offline", "evaluate_offline"),
    "effibench": ("problem_idx", "markdown_description", "canonical_solution", "test_case"),
    "effibench-x": ("title_slug", "generated_tests", "evaluator", "solutions"),
    "evalperf": ("task_id", "reference", "scores", "pe_input"),
}


#: The built-in suite of repository tasks, and a repository task's own file: `perfgym agent`
#: runs those (perfgym.repos), the program-task commands refuse them with this one line.
REPO_SUITE = "perfgym-repos"
REPO_TASK_FILE = "task.toml"


def repository_suite_error(spec: str | Path) -> ConfigError:
    return ConfigError(
        f"{str(spec)!r} holds repository tasks, which `perfgym agent` runs (e.g. `perfgym agent "
        f"{spec} --model scripted`); this command takes program tasks (e.g. perfgym-core)"
    )


def load_suite(
    spec: str | Path, *, external: str | Path | None = None, tasks: Sequence[str] | None = None
) -> Suite:
    """Load a suite from a built-in name or a path (see the module docstring).

    PerfCodeBench only: `external` locates the `external/` library folder (else
    $PERFGYM_PCB_EXTERNAL, else `<root>/external`), and `tasks` names the only task directories
    parsed. Other formats ignore both (callers select tasks after loading).
    """
    if isinstance(spec, str) and (spec in BUILTINS or spec in HUB_SUITES):
        return _loader(spec)(None)
    if isinstance(spec, str) and spec.split(":", 1)[0] in HUB_SUITES and ":" in spec:
        name, file = spec.split(":", 1)
        return _loader(name)(Path(file).expanduser())
    path = Path(spec).expanduser()
    if path.is_file():
        published = published_format(path)
        if published is not None:
            return _loader(published)(path)
        if path.suffix == ".jsonl":
            return native.load_jsonl(path)
        raise ConfigError(
            f"cannot load a suite from file {path}: only a tasks .jsonl file, or a file of a "
            f"published suite ({', '.join(PUBLISHED)}; name it as '<suite>:<path>') is"
        )
    if path.is_dir():
        return _load_directory(path, external, tasks)
    if str(spec) == REPO_SUITE:
        raise repository_suite_error(spec)
    raise ConfigError(
        f"unknown suite {str(spec)!r}: not a built-in ({', '.join(BUILTINS)}), not a published "
        f"suite ({', '.join(HUB_SUITES)}) and no such path"
    )


def published_format(path: Path) -> str | None:
    """The published suite whose fields the file's first record has, if any.

    Read for `.jsonl` (first line), `.json` (a list's first object) and `.parquet` (column
    names); a native tasks.jsonl record (`kind`, `baseline`) is never taken for one.
    """
    keys: set[str] = set()
    try:
        if path.suffix == ".jsonl":
            with path.open(encoding="utf-8") as handle:
                first = next((line for line in handle if line.strip()), "")
            record = json.loads(first) if first else {}
            keys = set(record) if isinstance(record, dict) else set()
        elif path.suffix == ".json":
            value = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(value, list) and value and isinstance(value[0], dict):
                keys = set(value[0])
        elif path.suffix == ".parquet":
            import pyarrow.parquet as pq

            keys = set(pq.read_schema(path).names)
    except (OSError, ValueError, ImportError):
        return None  # not recognisable: the caller's own reader reports the problem
    if {"kind", "baseline"} <= keys:
        return None
    for name, fields in PUBLISHED.items():
        if set(fields) <= keys:
            return name
    return None


def _load_directory(path: Path, external: str | Path | None, tasks: Sequence[str] | None) -> Suite:
    for pcb in (path, path / "executable_tasks"):
        if perfcodebench.is_executable_tasks_dir(pcb):
            return perfcodebench.load_perfcodebench(pcb, external=external, only=tasks)
    task_dirs = native.task_dirs(path)
    if any((d / REPO_TASK_FILE).is_file() for d in [path, *task_dirs]):
        raise repository_suite_error(path)
    if not task_dirs and (path / "tasks.jsonl").is_file():
        return native.load_jsonl(path / "tasks.jsonl")
    return native.load_directory(path)


def _loader(name: str) -> SuiteLoader:
    loader: SuiteLoader = get(Kind.SUITES, name)
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
