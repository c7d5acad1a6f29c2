"""perfgym's native format (docs/task-format.md): directories and JSONL, and their errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from perfgym.errors import ConfigError, TaskFormatError
from perfgym.tasks import Language, Split, TaskKind, load_suite

TASK_YAML: dict[str, Any] = {
    "id": "py-sum",
    "family": "prefix-sums",
    "language": "python",
    "kind": "stdio",
    "split": "val",
    "title": "Sum the numbers",
    "goal": "Print the sum of the integers on stdin.",
    "interface": "stdin: integers; stdout: their sum",
    "metric": "wall time of the performance workloads",
    "correctness_rule": "output tokens must equal the expected tokens",
    "oracle": {"kind": "tokens"},
    "baseline": "baseline.py",
    "references": ["reference.py", "reference_c.c"],
    "pool": [{"label": "pool-1", "file": "pool_1.py", "quality": 1}],
    "tests": "tests.jsonl",
    "generator": "generator.py",
    "workloads": [{"id": "w1", "size": 1000, "seed": 1}, {"id": "w2", "size": 2000, "seed": 2}],
    "time_limit_s": 5,
    "memory_limit_mb": 256,
}
FILES = {
    "baseline.py": "import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))\n",
    "reference.py": "import sys\nprint(sum(map(int, sys.stdin.buffer.read().split())))\n",
    "reference_c.c": "int main(void) { return 0; }\n",
    "pool_1.py": "import sys\nt = 0\nfor x in sys.stdin.read().split():\n    t += int(x)\nprint(t)\n",
    "tests.jsonl": '{"id": "one", "stdin": "1 2 3\\n", "expected": "6\\n"}\n'
    '{"id": "empty", "stdin": "", "expected": "0\\n"}\n',
    "generator.py": "import random\n\ndef generate(size, seed):\n"
    "    rng = random.Random(seed)\n"
    "    return ' '.join(str(rng.randint(-9, 9)) for _ in range(size)) + '\\n'\n",
}


def write_task(
    root: Path, spec: dict[str, Any] | None = None, files: dict[str, str] | None = None
) -> Path:
    spec = dict(TASK_YAML if spec is None else spec)
    directory = root / spec.get("id", "py-sum")
    directory.mkdir(parents=True)
    (directory / "task.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    for name, text in (FILES if files is None else files).items():
        (directory / name).write_text(text)
    return directory


def test_directory_suite_loads_every_field(tmp_path: Path) -> None:
    write_task(tmp_path)
    (tmp_path / "suite.yaml").write_text(
        "name: tiny\ndescription: one task\nmetadata: {owner: qa}\n"
    )
    suite = load_suite(tmp_path)
    assert (suite.name, suite.source) == ("tiny", str(tmp_path.resolve()))
    assert suite.metadata == {"owner": "qa", "description": "one task"}
    task = suite.get("py-sum")
    assert (task.language, task.kind, task.split) == (Language.PYTHON, TaskKind.STDIO, Split.VAL)
    assert task.baseline.source == FILES["baseline.py"] and task.baseline.language is None
    assert [r.label for r in task.references] == ["reference", "reference-2"]
    assert task.references[1].language is Language.C  # differs from the task: recorded
    assert [(p.label, p.quality) for p in task.pool] == [("pool-1", 1.0)]
    assert [t.id for t in task.tests] == ["one", "empty"] and task.tests[0].expected == "6\n"
    assert [(w.id, w.size, w.seed) for w in task.workloads] == [("w1", 1000, 1), ("w2", 2000, 2)]
    assert task.generator == FILES["generator.py"] and task.root == (tmp_path / "py-sum").resolve()
    assert (task.time_limit_s, task.memory_limit_mb) == (5, 256)


def test_jsonl_round_trip(tmp_path: Path) -> None:
    write_task(tmp_path / "suite")
    task = load_suite(tmp_path / "suite").get("py-sum")
    path = tmp_path / "out" / "tasks.jsonl"
    path.parent.mkdir()
    other = task.model_copy(update={"id": "py-sum-2"})
    path.write_text(task.model_dump_json() + "\n\n" + other.model_dump_json() + "\n")
    suite = load_suite(path)
    assert suite.name == "out" and suite.ids() == ["py-sum", "py-sum-2"]
    assert suite.get("py-sum") == task
    assert load_suite(path.parent).ids() == suite.ids()  # a directory holding only tasks.jsonl


def _error(
    tmp_path: Path, spec: dict[str, Any] | None = None, files: dict[str, str] | None = None
) -> str:
    write_task(tmp_path, spec, files)
    with pytest.raises(TaskFormatError) as info:
        load_suite(tmp_path)
    return str(info.value)


def test_malformed_yaml(tmp_path: Path) -> None:
    directory = write_task(tmp_path)
    (directory / "task.yaml").write_text("id: py-sum\nfamily: [unclosed\n")
    with pytest.raises(TaskFormatError, match=r"task 'py-sum' .*task.yaml\): malformed YAML"):
        load_suite(tmp_path)
    (directory / "task.yaml").write_text("- just\n- a list\n")
    with pytest.raises(TaskFormatError, match="expected a mapping, got list"):
        load_suite(tmp_path)


def test_unknown_and_missing_fields(tmp_path: Path) -> None:
    message = _error(tmp_path / "a", {**TASK_YAML, "difficulty": "easy"})
    assert "task 'py-sum'" in message and "unknown field 'difficulty'" in message
    message = _error(tmp_path / "b", {**TASK_YAML, "oracle": {"kind": "tokens", "atol": 1}})
    assert "unknown field 'oracle.atol'" in message
    spec = {k: v for k, v in TASK_YAML.items() if k != "family"}
    assert "missing field 'family'" in _error(tmp_path / "c", spec)
    message = _error(tmp_path / "d", {**TASK_YAML, "language": "cobol"})
    assert "field 'language'" in message


def test_missing_files(tmp_path: Path) -> None:
    files = {k: v for k, v in FILES.items() if k != "pool_1.py"}
    message = _error(tmp_path / "a", files=files)
    assert message.startswith("task 'py-sum': pool-1: missing file") and "pool_1.py" in message
    message = _error(tmp_path / "b", {**TASK_YAML, "baseline": "../escape.py"})
    assert "outside the task directory" in message
    (tmp_path / "c" / "empty-dir").mkdir(parents=True)
    with pytest.raises(TaskFormatError, match="task 'empty-dir': missing .*task.yaml"):
        load_suite(tmp_path / "c")


def test_bad_test_lines_and_duplicate_case_ids(tmp_path: Path) -> None:
    files = {**FILES, "tests.jsonl": '{"id": "a", "stdin": "1"}\n{"id": "b", "stdn": "2"}\n'}
    message = _error(tmp_path / "a", files=files)
    assert "tests: tests.jsonl line 2" in message and "unknown field 'stdn'" in message
    files = {**FILES, "tests.jsonl": '{"id": "a", "stdin": "1"}\n{"id": \n'}
    assert "tests.jsonl line 2: invalid JSON" in _error(tmp_path / "b", files=files)
    files = {**FILES, "tests.jsonl": '{"id": "a"}\n{"id": "a"}\n'}
    assert "duplicate case id 'a'" in _error(tmp_path / "c", files=files)
    workloads = [{"id": "w", "size": 1, "seed": 1}, {"id": "w", "size": 2, "seed": 2}]
    assert "workloads: duplicate case id 'w'" in _error(
        tmp_path / "d", {**TASK_YAML, "workloads": workloads}
    )


def test_id_must_match_directory_and_be_unique(tmp_path: Path) -> None:
    directory = write_task(tmp_path)
    directory.rename(tmp_path / "other-name")
    with pytest.raises(TaskFormatError, match="id must equal the directory name 'other-name'"):
        load_suite(tmp_path)
    lines = tmp_path / "tasks.jsonl"
    task = load_suite(write_task(tmp_path / "good").parent).tasks[0]
    lines.write_text(task.model_dump_json() + "\n" + task.model_dump_json() + "\n")
    with pytest.raises(TaskFormatError, match="duplicate id, first defined on line 1"):
        load_suite(lines)


def test_semantic_errors_name_the_task(tmp_path: Path) -> None:
    spec = {k: v for k, v in TASK_YAML.items() if k != "generator"}
    assert "names no generator" in _error(tmp_path / "a", spec)
    message = _error(tmp_path / "b", {**TASK_YAML, "kind": "function"})
    assert "task 'py-sum'" in message and "entry_point" in message
    assert "needs a checker file" in _error(
        tmp_path / "c", {**TASK_YAML, "oracle": {"kind": "checker"}}
    )
    harness = {
        "build": {"compiler": "gcc", "sources": ["{task_dir}/main.c", "{variant}/s.c"]},
        "solution_filename": "solution.c",
    }
    message = _error(tmp_path / "d", {**TASK_YAML, "kind": "harness", "harness": harness})
    assert "harness.build.sources: unknown placeholder {variant}" in message
    files = {**FILES, "baseline.txt": "x"}
    message = _error(tmp_path / "e", {**TASK_YAML, "baseline": "baseline.txt"}, files)
    assert "cannot tell the language of 'baseline.txt'" in message


def test_checker_oracle_reads_its_file(tmp_path: Path) -> None:
    files = {**FILES, "check.py": "def check(test_input, expected, output):\n    return True\n"}
    write_task(tmp_path, {**TASK_YAML, "oracle": {"kind": "checker", "checker": "check.py"}}, files)
    assert load_suite(tmp_path).tasks[0].oracle.checker == files["check.py"]


def test_empty_or_unrelated_directories_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no tasks in"):
        load_suite(tmp_path)
    (tmp_path / "tasks.jsonl").write_text("\n")
    with pytest.raises(ConfigError, match="no tasks in"):
        load_suite(tmp_path / "tasks.jsonl")
    (tmp_path / "x.jsonl").write_text(json.dumps({"id": "t"}) + "\n")
    with pytest.raises(
        TaskFormatError, match=r"task 't' \(.*x.jsonl line 1\): missing field 'family'"
    ):
        load_suite(tmp_path / "x.jsonl")
