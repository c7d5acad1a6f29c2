"""A small repository task for the agent tests: `dedup.count_unique` reaches an O(n²) loop
two layers below its API; tests, a visible and a hidden workload; the workload's setup()
does heavy work of its own that the profile must leave out."""

from __future__ import annotations

from pathlib import Path

from perfgym.repos.task import RepoTask, Workload

CORE_SLOW = """\
def dedup(items):
    out = []
    for x in items:
        if x not in out:
            out.append(x)
    return out
"""
LAYER = """\
from dedup import _core


def unique(items):
    return _core.dedup(list(items))
"""
API = '''\
from dedup import _layer


def count_unique(items):
    """How many distinct items, in first-seen order semantics."""
    return len(_layer.unique(items))


def first_unique(items):
    return _layer.unique(items)
'''
OTHER = """\
def double(x):
    return 2 * x
"""
TESTS_DEDUP = """\
from dedup import count_unique, first_unique


def test_count():
    assert count_unique([3, 1, 3, 2, 1]) == 3


def test_order():
    assert first_unique([3, 1, 3, 2, 1]) == [3, 1, 2]


def test_empty():
    assert count_unique([]) == 0
"""
TESTS_OTHER = """\
from dedup.other import double


def test_double():
    assert double(4) == 8
"""
VISIBLE = """\
import dedup


def _heavy_setup_work():
    return sum(i * i for i in range(400_000))


def setup():
    _heavy_setup_work()
    return [i % 700 for i in range(2800)]


def experiment(items):
    return dedup.count_unique(items)
"""
HIDDEN = """\
import dedup


def setup():
    return [(i * 7) % 650 for i in range(2600)]


def experiment(items):
    return dedup.first_unique(items)
"""


def write_repo(root: Path, core: str = CORE_SLOW) -> Path:
    pkg = root / "dedup"
    (root / "tests").mkdir(parents=True, exist_ok=True)
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("from dedup.api import count_unique, first_unique\n")
    (pkg / "_core.py").write_text(core)
    (pkg / "_layer.py").write_text(LAYER)
    (pkg / "api.py").write_text(API)
    (pkg / "other.py").write_text(OTHER)
    (root / "tests" / "test_dedup.py").write_text(TESTS_DEDUP)
    (root / "tests" / "test_other.py").write_text(TESTS_OTHER)
    (root / ".gitignore").write_text("__pycache__/\n*.pyc\n")
    return root


def write_task(folder: Path, **overrides: object) -> RepoTask:
    folder.mkdir(parents=True, exist_ok=True)
    write_repo(folder / "repo")
    (folder / "workloads").mkdir(exist_ok=True)
    (folder / "workloads" / "visible.py").write_text(VISIBLE)
    (folder / "workloads" / "hidden.py").write_text(HIDDEN)
    fields: dict[str, object] = {
        "id": "dedup",
        "repo": "repo",
        "workloads": (
            Workload(name="visible", script="workloads/visible.py"),
            Workload(name="hidden", script="workloads/hidden.py", hidden=True),
        ),
        "description": "Make dedup.count_unique faster.",
        **overrides,
    }
    return RepoTask(**fields).model_copy(update={"folder": folder})  # type: ignore[arg-type]
