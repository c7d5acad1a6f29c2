"""Task folders, the built-in suite, and the one-line errors of malformed task files."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfgym.errors import TaskFormatError
from perfgym.repos.loading import load_repo_suite, load_repo_task


def _task(folder: Path, toml: str) -> Path:
    (folder / "repo").mkdir(parents=True)
    (folder / "w.py").write_text("def setup():\n    return 1\n\ndef experiment(s):\n    return s\n")
    (folder / "task.toml").write_text(toml)
    return folder


def test_builtin_suite_has_three_tasks_with_hidden_workloads() -> None:
    tasks = load_repo_suite("perfgym-repos")
    assert [t.id for t in tasks] == ["bloomc", "peakscan", "textindex"]
    for t in tasks:
        assert t.visible_workloads and t.hidden_workloads
        assert t.expert_patch and t.expert_speedup and t.expert_speedup > 1
        assert t.folder is not None and (t.folder / "repo").is_dir()
    assert next(t for t in tasks if t.id == "bloomc").setup


def test_yaml_and_defaults(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    (folder / "repo").mkdir(parents=True)
    (folder / "w.py").write_text("")
    (folder / "task.yaml").write_text("repo: repo\nworkloads:\n  - {name: a, script: w.py}\n")
    task = load_repo_task(folder)
    assert task.id == "t" and task.workloads[0].name == "a" and not task.hidden_workloads


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('repo = "repo"\n', "no workloads"),
        ('repo = "repo"\n[[workloads]]\nname = "a"\nscript = "missing.py"\n', "no file missing.py"),
        ('repo = "repo"\nwrkloads = 1\n', "unknown field(s) wrkloads"),
        ('repo = "repo"\n[[workloads]]\nname = "a"\n', "workloads.0.script"),
        ('repo = "nowhere"\n[[workloads]]\nname = "a"\nscript = "w.py"\n', "neither a folder"),
        ('repo = "repo"\n[limits]\nmemory_mb = "lots"\n', "limits.memory_mb"),
        ("repo = [unclosed\n", "unreadable"),
        (
            'repo = "repo"\nexpert_patch = "x.diff"\n[[workloads]]\nname = "a"\nscript = "w.py"\n',
            "expert_patch x.diff does not exist",
        ),
    ],
)
def test_malformed_task_is_one_line(tmp_path: Path, toml: str, message: str) -> None:
    folder = _task(tmp_path / "bad", toml)
    with pytest.raises(TaskFormatError) as err:
        load_repo_task(folder)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_missing_task_file_and_empty_suite(tmp_path: Path) -> None:
    with pytest.raises(TaskFormatError, match="no task.toml"):
        load_repo_task(tmp_path)
    with pytest.raises(TaskFormatError, match="no task folders"):
        load_repo_suite(tmp_path)
    with pytest.raises(TaskFormatError, match="no repository suite"):
        load_repo_suite(tmp_path / "absent")
