"""GSO / SWE-fficiency JSONL instances: mapped where they run without Docker, else the reason."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from perfgym.errors import TaskFormatError
from perfgym.repos.benchmarks import load_benchmark_jsonl
from perfgym.repos.checks import build_copy
from perfgym.repos.loading import builtin_suite_dir
from perfgym.repos.runner import run_workload

SUITE = builtin_suite_dir() / "textindex"
SWEF_WORKLOAD = """import statistics
import timeit

from textindex import Index

docs = None


def setup():
    global docs
    docs = [f"w{i % 7} w{i % 11} w{i % 13}" for i in range(300)]


def workload():
    Index.from_documents(docs)


runtimes = timeit.repeat(workload, number=1, repeat=5, setup=setup)
print("Mean:", statistics.mean(runtimes))
print("Std Dev:", statistics.stdev(runtimes))
"""


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A local git repository standing in for github.com/perfgym/textindex."""
    repo = tmp_path_factory.mktemp("mirror") / "textindex"
    shutil.copytree(SUITE / "repo", repo)
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=repo, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, text=True,
                          capture_output=True).stdout.strip()  # fmt: skip
    return repo, head


def _rows(head: str) -> list[dict[str, object]]:
    gso = {
        "instance_id": "perfgym__textindex-1", "repo": "perfgym/textindex", "base_commit": head,
        "opt_commit": "x", "api": "Index.from_documents",
        "prob_script": (SUITE / "workloads" / "visible.py").read_text(),
        "tests": [(SUITE / "workloads" / "hidden.py").read_text()],
        "gt_diff": (SUITE / "expert.diff").read_text(), "install_commands": [],
        "setup_commands": [], "hints_text": "", "arch": "x86_64", "instance_image_tag": "t",
    }  # fmt: skip
    return [
        gso,
        {**gso, "instance_id": "numpy__numpy-1",
         "install_commands": ["uv venv --python 3.11", "uv pip install -e ."]},
        {**gso, "instance_id": "numpy__numpy-2",
         "prob_script": "import requests\ndef setup():\n    return requests.get('https://x.org/a.txt')\n"},
        {**gso, "instance_id": "pandas__pandas-3",
         "install_commands": ["python setup.py build_ext --inplace -j 4"]},
        {"instance_id": "perfgym__textindex-swef", "repo": "perfgym/textindex",
         "base_commit": head, "workload": SWEF_WORKLOAD, "patch": gso["gt_diff"],
         "speedup": 4.2, "covering_tests": ["tests/test_textindex.py"]},
    ]  # fmt: skip


def _write(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "instances.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_mapping_and_reasons(tmp_path: Path, mirror: tuple[Path, str], repo_cache: Path) -> None:
    repo, head = mirror
    path = _write(tmp_path, _rows(head))
    got = load_benchmark_jsonl(path, tmp_path / "tasks", local_repos={"perfgym/textindex": repo})
    by_id = {i.instance_id: i for i in got}
    gso = by_id["perfgym__textindex-1"]
    assert gso.supported and gso.kind == "gso" and gso.task is not None
    assert gso.task.commit == head and gso.task.repo == f"file://{repo.resolve()}"
    assert [w.name for w in gso.task.visible_workloads] == ["prob_script"]
    assert [w.name for w in gso.task.hidden_workloads] == ["test_0"]
    assert "setup needs the network: `uv venv" in by_id["numpy__numpy-1"].unsupported
    assert "over the network" in by_id["numpy__numpy-2"].unsupported
    assert "builds the project from source" in by_id["pandas__pandas-3"].unsupported
    swef = by_id["perfgym__textindex-swef"]
    assert not swef.supported and "swefficiency-images:perfgym__textindex-swef" in swef.unsupported
    # the mapped GSO task runs: fetched from its (local) URL at the commit, workload timed
    copy = build_copy(gso.task)
    run = run_workload(gso.task, copy, gso.task.workloads[0])
    assert run.ok and run.first_s > 0, run.error
    copy.remove()


def test_swefficiency_workload_wrapper_runs(tmp_path: Path, mirror: tuple[Path, str],
                                            repo_cache: Path) -> None:  # fmt: skip
    repo, head = mirror
    path = _write(tmp_path, _rows(head)[-1:])
    (inst,) = load_benchmark_jsonl(path, tmp_path / "t", local_repos={"perfgym/textindex": repo},
                                   setup="true")  # fmt: skip
    assert inst.task is not None and "tests/test_textindex.py" in inst.task.test_command
    copy = build_copy(inst.task)
    run = run_workload(inst.task, copy, inst.task.workloads[0], repeats=1)
    assert run.ok, run.error
    copy.remove()


def test_malformed_lines_name_their_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"instance_id": "a"}\n')
    with pytest.raises(TaskFormatError, match=r"bad.jsonl:1: neither a GSO"):
        load_benchmark_jsonl(path, tmp_path)
    path.write_text('\n{"instance_id": "a", "prob_script": "", "gt_diff": ""}\n')
    with pytest.raises(TaskFormatError, match=r"bad.jsonl:2: missing field\(s\) repo, base_commit"):
        load_benchmark_jsonl(path, tmp_path)
    path.write_text("{not json\n")
    with pytest.raises(TaskFormatError, match=r"bad.jsonl:1: Expecting"):
        load_benchmark_jsonl(path, tmp_path)
