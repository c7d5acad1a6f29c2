"""GSO and SWE-fficiency instances from a local JSONL, mapped to perfgym repository tasks
where they can run without their Docker images, reported unsupported (with the reason) where not.

The field mapping (docs/repos.md has the table):

    GSO                             perfgym RepoTask
    instance_id                  -> id
    repo ("owner/name")          -> repo (https://github.com/owner/name.git, or `local_repos`)
    base_commit                  -> commit
    install_commands             -> setup (joined by newlines; `setup` overrides)
    prob_script                  -> workload "prob_script" (visible)
    tests[i]                     -> workload "test_<i>" (hidden)
    gt_diff                      -> expert_patch (expert.diff)
    api, hints_text              -> description
    (correctness)                -> the workloads' outputs against the original's; test_command
                                    "true" unless given (GSO has no unit-test command)

    SWE-fficiency                   perfgym RepoTask
    instance_id, repo, base_commit -> id, repo, commit (as GSO)
    workload                     -> workload "workload" (visible), through a wrapper: the script
                                    runs with a stand-in `timeit` so its own timing loop does
                                    nothing; setup() then runs untimed and workload() is timed
    patch                        -> expert_patch
    covering_tests (or PASS_TO_PASS) -> test_command: pytest on those tests
    speedup                      -> recorded in the description only (measured on other hardware)
    problem_statement            -> description

An instance is unsupported when a workload fetches data over the network (runs have none),
when its setup needs the network (pip/uv/conda installs, downloads, clones) or builds a
compiled project from source at an old commit, and, for SWE-fficiency, whenever no `setup`
is given (its build environment lives only in its Docker image).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from perfgym.errors import TaskFormatError
from perfgym.repos.task import RepoTask

Kind = Literal["gso", "swefficiency"]
GSO_FIELDS = ("instance_id", "repo", "base_commit", "prob_script", "gt_diff")
SWEFFICIENCY_FIELDS = ("instance_id", "repo", "base_commit", "workload", "patch")

_NETWORK_CODE = re.compile(
    r"\b(requests\.(get|post)|urllib\.request|urlopen|urlretrieve|wget|curl|hf_hub_download|"
    r"load_dataset|socket\.create_connection)\b|https?://"
)
_NETWORK_SETUP = re.compile(
    r"\b(pip3?\s+install|uv\s+(pip|venv|sync|add)|conda\s|mamba\s|apt(-get)?\s|curl|wget|"
    r"git\s+(clone|fetch|submodule)|rustup)\b"
)
_SOURCE_BUILD = re.compile(
    r"(setup\.py\s+(build|develop|install)|build_ext|meson|cmake|\bmake\b|cargo\s|maturin|"
    r"python3?\s+-m\s+build|install\s+-e|--no-build-isolation)"
)

_SWEF_WRAPPER = '''"""perfgym wrapper of a SWE-fficiency workload: its own timeit loop is stood in for, then
setup() runs untimed and workload() is the timed experiment."""

import sys
import timeit as _timeit
import types

SOURCE = {source!r}
_ns = {{"__name__": "swefficiency_workload"}}


def setup():
    stand_in = types.ModuleType("timeit")
    stand_in.repeat = lambda *a, **k: [0.0, 0.0]
    stand_in.timeit = lambda *a, **k: 0.0
    stand_in.default_timer = _timeit.default_timer
    saved = sys.modules.get("timeit")
    sys.modules["timeit"] = stand_in
    try:
        exec(compile(SOURCE, "swefficiency_workload.py", "exec"), _ns)
    finally:
        sys.modules["timeit"] = saved
    if callable(_ns.get("setup")):
        _ns["setup"]()
    return None


def experiment(_state):
    return _ns["workload"]()
'''


@dataclass(frozen=True)
class BenchmarkInstance:
    """One published instance: the task it maps to, or why it cannot run here."""

    instance_id: str
    kind: Kind
    task: RepoTask | None
    unsupported: str = ""

    @property
    def supported(self) -> bool:
        return self.task is not None


def _kind_of(row: Mapping[str, Any]) -> Kind:
    if "prob_script" in row or "gt_diff" in row:
        return "gso"
    if "workload" in row and "patch" in row:
        return "swefficiency"
    raise TaskFormatError("neither a GSO (prob_script, gt_diff) nor a SWE-fficiency "
                          "(workload, patch) instance")  # fmt: skip


def _unsupported(kind: Kind, scripts: list[str], setup: str, row: Mapping[str, Any],
                 setup_given: bool) -> str:  # fmt: skip
    for script in scripts:
        m = _NETWORK_CODE.search(script)
        if m:
            return f"a workload fetches data over the network ({m.group(0)!r}); runs have none"
    if kind == "swefficiency" and not setup_given:
        image = f"ghcr.io/swefficiency/swefficiency-images:{row['instance_id']}"
        return f"its build environment exists only in its Docker image {image}; pass setup="
    for line in setup.splitlines():
        if _NETWORK_SETUP.search(line):
            return f"setup needs the network: `{line.strip()[:120]}`"
        if _SOURCE_BUILD.search(line):
            return (
                f"setup builds the project from source (its Docker image): `{line.strip()[:120]}`"
            )
    return ""


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    return json.dumps(v)  # JSON strings are TOML basic strings


def write_task_folder(folder: Path, fields: Mapping[str, Any], workloads: list[tuple[str, str, bool]],
                      expert: str) -> None:  # fmt: skip
    """task.toml, workloads/*.py and expert.diff of one mapped instance."""
    (folder / "workloads").mkdir(parents=True, exist_ok=True)
    lines = [f"{k} = {_toml_value(v)}" for k, v in fields.items() if v is not None]
    lines.append('expert_patch = "expert.diff"')
    for name, source, hidden in workloads:
        (folder / "workloads" / f"{name}.py").write_text(source)
        lines += ["", "[[workloads]]", f'name = "{name}"', f'script = "workloads/{name}.py"']
        lines += ["hidden = true"] if hidden else []
    (folder / "expert.diff").write_text(expert)
    (folder / "task.toml").write_text("\n".join(lines) + "\n")


def _map_row(row: Mapping[str, Any], kind: Kind, out_dir: Path, local_repos: Mapping[str, Path],
             setup: str | None, test_command: str | None) -> BenchmarkInstance:  # fmt: skip
    iid = str(row["instance_id"])
    repo_name = str(row["repo"])
    repo = f"file://{Path(local_repos[repo_name]).resolve()}" if repo_name in local_repos else (
        repo_name if "://" in repo_name else f"https://github.com/{repo_name}.git")  # fmt: skip
    if kind == "gso":
        workloads = [("prob_script", str(row["prob_script"]), False)]
        workloads += [(f"test_{i}", str(t), True) for i, t in enumerate(row.get("tests") or [])]
        own_setup = "\n".join(str(c) for c in row.get("install_commands") or [])
        tests = test_command or "true"
        description = (
            f"GSO {iid}: speed up {row.get('api', 'the workload')}. {row.get('hints_text', '')}"
        )
        expert = str(row["gt_diff"])
    else:
        workloads = [("workload", _SWEF_WRAPPER.format(source=str(row["workload"])), False)]
        own_setup = ""
        covering = list(row.get("covering_tests") or row.get("PASS_TO_PASS") or [])
        tests = test_command or (
            "python3 -m pytest --no-header -rA --tb=no -p no:cacheprovider " + " ".join(covering)
            if covering else "true")  # fmt: skip
        description = (
            f"SWE-fficiency {iid} (published expert speedup {row.get('speedup')}): "
            + str(row.get("problem_statement", ""))[:2000]
        )
        expert = str(row["patch"])
    chosen_setup = setup if setup is not None else own_setup
    scripts = [w[1] if kind == "gso" else str(row["workload"]) for w in workloads]
    why = _unsupported(kind, scripts, chosen_setup, row, setup is not None)
    if why:
        return BenchmarkInstance(iid, kind, None, why)
    folder = out_dir / re.sub(r"[^A-Za-z0-9_.-]", "_", iid)
    fields = {"id": iid, "repo": repo, "commit": str(row["base_commit"]),
              "setup": chosen_setup or None, "test_command": tests,
              "description": description.strip()}  # fmt: skip
    write_task_folder(folder, fields, workloads, expert)
    from perfgym.repos.loading import load_repo_task

    return BenchmarkInstance(iid, kind, load_repo_task(folder))


def load_benchmark_jsonl(
    path: str | Path,
    out_dir: str | Path,
    *,
    kind: Kind | None = None,
    local_repos: Mapping[str, str | Path] | None = None,
    setup: str | None = None,
    test_command: str | None = None,
) -> list[BenchmarkInstance]:
    """Every instance of a GSO or SWE-fficiency JSONL (`kind` None: told by its fields); the
    supported ones are written as task folders under `out_dir`. `local_repos` maps "owner/name"
    to a local git repository used instead of GitHub; `setup` replaces the instances' own
    install commands (the caller vouches that the host has their dependencies)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise TaskFormatError(f"{path}: unreadable: {exc.strerror}") from exc
    out: list[BenchmarkInstance] = []
    repos = {k: Path(v) for k, v in (local_repos or {}).items()}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise TaskFormatError("not a JSON object")
            row_kind = kind or _kind_of(row)
            need = GSO_FIELDS if row_kind == "gso" else SWEFFICIENCY_FIELDS
            missing = [f for f in need if f not in row]
            if missing:
                raise TaskFormatError(f"missing field(s) {', '.join(missing)}")
            out.append(_map_row(row, row_kind, Path(out_dir), repos, setup, test_command))
        except (json.JSONDecodeError, TaskFormatError) as exc:
            raise TaskFormatError(f"{path}:{number}: {exc}") from exc
    return out
