"""`load_suite` resolution, built-in names, and the `Suite` model."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfgym.errors import ConfigError
from perfgym.tasks import BUILTINS, Solution, Split, Suite, Task, TaskKind, TestCase, load_suite
from perfgym.tasks.suite import find_suite_dir, perfgym_core_candidates


def _task(task_id: str, split: Split) -> Task:
    return Task(
        id=task_id,
        family=task_id,
        language="python",
        kind=TaskKind.STDIO,
        baseline=Solution(label="baseline", source="print(1)\n"),
        tests=[TestCase(id="t", stdin="", expected="1\n")],
        split=split,
    )


def test_suite_get_split_and_unique_ids() -> None:
    suite = Suite(
        name="s",
        tasks=[_task("a", Split.TRAIN), _task("b", Split.TEST), _task("c", Split.TEST)],
        source="memory",
    )
    assert len(suite) == 3 and suite.get("b").id == "b"
    with pytest.raises(KeyError, match="suite 's' has no task 'z'"):
        suite.get("z")
    test = suite.split("test")
    assert (test.name, test.ids()) == ("s:test", ["b", "c"]) and test.get("c").id == "c"
    assert suite.split(Split.VAL).ids() == []
    with pytest.raises(ConfigError, match="unknown split 'dev'"):
        suite.split("dev")
    with pytest.raises(ValueError, match="duplicate task id 'a'"):
        Suite(name="d", tasks=[_task("a", Split.TRAIN), _task("a", Split.TEST)], source="memory")


def test_unknown_names_list_the_builtins(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_suite("enamel-plus")
    message = str(info.value)
    assert "'enamel-plus'" in message and all(name in message for name in BUILTINS)
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ConfigError, match="only a tasks .jsonl file"):
        load_suite(tmp_path / "notes.txt")


@pytest.mark.parametrize(
    ("name", "count"), [("enamel", 164), ("humaneval", 164), ("humanevalplus", 164)]
)
def test_builtin_names_load(name: str, count: int, request: pytest.FixtureRequest) -> None:
    suite: Suite = request.getfixturevalue(name)  # session fixtures: each loads once
    assert (suite.name, suite.source, len(suite)) == (name, f"builtin:{name}", count)


def test_perfgym_core_is_searched_in_package_then_checkout(tmp_path: Path) -> None:
    package_dir, checkout_dir = perfgym_core_candidates()
    assert package_dir.parts[-3:] == ("perfgym", "suites", "perfgym-core")
    assert checkout_dir.parts[-2:] == ("suites", "perfgym-core")
    assert (checkout_dir.parent.parent / "src" / "perfgym").is_dir()  # the source checkout
    missing = [tmp_path / "a", tmp_path / "b"]
    with pytest.raises(ConfigError) as info:
        find_suite_dir("perfgym-core", missing)
    assert "searched:" in str(info.value) and all(str(p) in str(info.value) for p in missing)
    (tmp_path / "b").mkdir()
    assert find_suite_dir("perfgym-core", missing) == tmp_path / "b"


def test_perfgym_core_loads_from_the_checkout() -> None:
    if not any(p.is_dir() for p in perfgym_core_candidates()):
        pytest.skip("suites/perfgym-core is not present in this checkout")
    suite = load_suite("perfgym-core")
    assert suite.name == "perfgym-core" and suite.source.startswith("builtin:perfgym-core")
    assert len(suite) > 0 and all(task.root is not None for task in suite.tasks)
