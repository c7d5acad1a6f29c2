"""check_task: each kind of unusable task is one line, found before any model call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfgym.repos.checks import TaskCheckError, check_task
from perfgym.repos.loading import load_repo_task

GOOD_WORKLOAD = (
    "import pkg\n\ndef setup():\n    return 3\n\ndef experiment(n):\n    return pkg.f(n)\n"
)


def _task(tmp_path: Path, *, setup: str = "", tests: str = "python3 -c 'import pkg'",
          workload: str = GOOD_WORKLOAD, repo: str = "repo") -> Path:  # fmt: skip
    folder = tmp_path / "task"
    (folder / "repo" / "pkg").mkdir(parents=True)
    (folder / "repo" / "pkg" / "__init__.py").write_text("def f(x):\n    return x * 2\n")
    (folder / "w.py").write_text(workload)
    lines = [f"repo = {json.dumps(repo)}", f"test_command = {json.dumps(tests)}"]
    if setup:
        lines.append(f"setup = {json.dumps(setup)}")
    lines += ["[[workloads]]", 'name = "w"', 'script = "w.py"', "[limits]", "workload_s = 20"]
    (folder / "task.toml").write_text("\n".join(lines) + "\n")
    return folder


def _problem(folder: Path) -> str:
    with pytest.raises(TaskCheckError) as err:
        check_task(load_repo_task(folder))
    assert "\n" not in str(err.value)
    return str(err.value)


def test_good_task_passes_and_keeps_its_original(tmp_path: Path, repo_cache: Path) -> None:
    checked = check_task(load_repo_task(_task(tmp_path)))
    assert checked.tests.ok and checked.workloads["w"].ok
    assert (checked.original.path / "pkg" / "__init__.py").is_file()
    checked.remove()


def test_repository_that_does_not_build(tmp_path: Path, repo_cache: Path) -> None:
    folder = _task(tmp_path, setup="echo 'int main( {' > x.c && gcc -c x.c -o x.o")
    assert "setup" in _problem(folder) and "failed" in _problem(folder)


def test_tests_failing_on_the_original(tmp_path: Path, repo_cache: Path) -> None:
    folder = _task(tmp_path, tests="python3 -c 'import pkg; assert pkg.f(1) == 3, \"f is wrong\"'")
    msg = _problem(folder)
    assert "test command fails on the original" in msg and "f is wrong" in msg


def test_workload_that_crashes(tmp_path: Path, repo_cache: Path) -> None:
    folder = _task(
        tmp_path, workload="def setup():\n    return 0\n\ndef experiment(s):\n    return 1 / s\n"
    )
    msg = _problem(folder)
    assert "workload 'w'" in msg and "ZeroDivisionError" in msg


def test_nondeterministic_workload(tmp_path: Path, repo_cache: Path) -> None:
    folder = _task(tmp_path, workload="import os\n\ndef setup():\n    return 0\n\n"
                   "def experiment(s):\n    return os.urandom(8)\n")  # fmt: skip
    assert "different result on a second call" in _problem(folder)


def test_git_url_that_cannot_be_fetched(tmp_path: Path, repo_cache: Path) -> None:
    folder = _task(tmp_path, repo="https://perfgym-no-such-host.invalid/lib.git")
    msg = _problem(folder)
    assert "cannot fetch https://perfgym-no-such-host.invalid/lib.git" in msg
