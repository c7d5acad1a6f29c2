"""Mercury, EffiBench, EffiBench-X and EvalPerf read from files in their published schemas.

Fixtures (tests/fixtures/published/) are written by hand in exactly the published fields; each
malformed record is one line naming the record and the field; the hub path fails in one line
when it cannot be reached.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from perfgym.errors import ConfigError, TaskFormatError
from perfgym.tasks import load_suite
from perfgym.tasks.mercury import NOT_RUNNABLE, runtime_s
from perfgym.tasks.published import Record
from perfgym.tasks.suite import published_format
from perfgym.tasks.task import Language, TaskKind

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "published"
FILES = {
    "mercury": FIXTURES / "mercury.jsonl",
    "effibench": FIXTURES / "effibench.json",
    "evalperf": FIXTURES / "evalperf.jsonl",
    "effibench-x": FIXTURES / "effibench_x.jsonl",
}
SRC = str(Path(__file__).resolve().parents[2] / "src")


def records(name: str) -> list[dict]:
    path = FILES[name]
    if path.suffix == ".json":
        return json.loads(path.read_text())
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write(tmp_path: Path, name: str, rows: list[dict]) -> Path:
    out = tmp_path / f"{name.replace('-', '_')}.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_published_file_is_recognised_by_its_fields_and_by_its_name(name: str) -> None:
    assert published_format(FILES[name]) == name
    by_path = load_suite(FILES[name])
    by_name = load_suite(f"{name}:{FILES[name]}")
    assert by_path.ids() == by_name.ids() and len(by_path) >= 2


def test_a_native_tasks_jsonl_is_not_taken_for_a_published_one(tmp_path: Path) -> None:
    native = tmp_path / "tasks.jsonl"
    native.write_text(json.dumps({"id": "x", "kind": "stdio", "baseline": {}, "task_id": "a",
                                  "reference": [], "scores": [], "pe_input": "[]"}) + "\n")  # fmt: skip
    assert published_format(native) is None


def test_mercury_maps_statement_tests_and_published_runtimes() -> None:
    suite = load_suite(FILES["mercury"])
    task = suite.get("running-sum-of-1d-array")
    assert task.kind is TaskKind.FUNCTION and task.language is Language.PYTHON
    assert task.goal.startswith("Given an array nums") and "def runningSum" in task.interface
    assert [s.stored.median_s for s in task.pool] == [0.044, 0.06, 0.052]  # "44ms" -> seconds
    assert "accumulate" not in task.baseline.source  # the slowest (60 ms) is the baseline
    assert "accumulate" in task.references[0].source  # the fastest (44 ms) the reference
    assert task.metadata["mercury"]["test_cases"] == 3 and task.metadata["mercury"]["id"] == 1480
    assert task.oracle.kind == "assertion" and NOT_RUNNABLE in task.metadata


@pytest.mark.parametrize("task_id", ["running-sum-of-1d-array", "reverse-linked-list"])
def test_mercury_check_is_mercurys_protocol(task_id: str) -> None:
    """The checker converts each case, calls Solution().<method>, asserts evaluate_offline:
    every published solution passes, a wrong one fails (executed here, plain Python)."""
    task = load_suite(FILES["mercury"]).get(task_id)
    for solution in task.pool:
        namespace: dict = {}
        exec(f"{solution.source}\n{task.oracle.checker}\ncheck(Solution)\n", namespace)
    method = task.metadata["mercury"]["method"]
    wrong = f"class Solution:\n    def {method}(self, x):\n        return x\n"
    with pytest.raises(AssertionError, match="wrong answer"):
        exec(f"{task.pool[0].source.split('class Solution')[0]}{wrong}\n{task.oracle.checker}\n"
             "check(Solution)\n", {})  # fmt: skip


def test_effibench_check_binds_solution_and_runs_the_test_code() -> None:
    suite = load_suite(FILES["effibench"])
    assert suite.ids() == ["EffiBench/1", "EffiBench/9"]
    task = suite.get("EffiBench/9")
    assert task.title == "palindrome-number" and "isPalindrome(121)" in task.goal
    exec(f"{task.baseline.source}\n{task.oracle.checker}\ncheck(Solution)\n", {})
    wrong = "class Solution:\n    def isPalindrome(self, x):\n        return x >= 0\n"
    with pytest.raises(AssertionError):
        exec(f"{wrong}\n{task.oracle.checker}\ncheck(Solution)\n", {})


def test_evalperf_maps_clusters_scores_and_the_performance_input() -> None:
    task = load_suite(FILES["evalperf"]).get("Mbpp/4")
    assert [s.label for s in task.pool] == ["cluster-0", "cluster-1", "cluster-2"]
    assert task.metadata["evalperf"]["scores"] == [12.5, 60.0, 100.0]
    assert task.baseline.source == task.pool[0].source  # slowest cluster
    assert task.references[0].source == task.pool[-1].source  # fastest cluster
    assert task.workloads[0].args == [list(range(3000)), 40] == task.tests[0].args
    assert task.entry_point == "heap_queue_largest" and task.oracle.kind == "checker"


def test_effibench_x_loads_one_language_and_lists_what_it_skips() -> None:
    suite = load_suite(FILES["effibench-x"])
    assert suite.name == "effibench-x-python3"
    io = suite.get("codeforces_1900A_sum-of-pairs")
    assert io.kind is TaskKind.STDIO and [t.stdin for t in io.tests][0] == "2\n1 2\n3 4\n"
    assert io.time_limit_s == 2.0 and io.memory_limit_mb == 256.0
    assert io.metadata["effibench_x"]["published"] == {"runtime": 31, "memory": 9120}
    assert NOT_RUNNABLE not in io.metadata
    functional = suite.get("leetcode_3300_minimum-element-after-replacement-with-digit-sum")
    assert NOT_RUNNABLE in functional.metadata
    assert suite.metadata["skipped"] == [{"task": "atcoder_abc330_a_counting-passes",
                                          "language": "python3",
                                          "reason": "no python3 solution"}]  # fmt: skip
    from perfgym.tasks.effibench_x import load_effibench_x

    cpp = load_effibench_x(FILES["effibench-x"], language="cpp")
    assert cpp.ids() == ["codeforces_1900A_sum-of-pairs", "atcoder_abc330_a_counting-passes"]
    with pytest.raises(ConfigError, match="no perfgym toolchain"):
        load_effibench_x(FILES["effibench-x"], language="ruby")


def test_effibench_x_checker_is_the_records_evaluator_after_clean_up() -> None:
    task = load_suite(FILES["effibench-x"]).get("codeforces_1900A_sum-of-pairs")
    namespace: dict = {}
    exec(task.oracle.checker, namespace)
    assert namespace["check"]("", "3\n7\n", "\x1b[0m3\r\n7\r\n")
    assert not namespace["check"]("", "3\n7\n", "3\n8\n")


@pytest.mark.parametrize("name", sorted(FILES))
def test_parquet_as_published_loads_the_same_tasks(tmp_path: Path, name: str) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = records(name)
    path = tmp_path / f"{name}.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert load_suite(path).ids() == load_suite(FILES[name]).ids()


# Each: (format, record index, field, bad value or None to delete, expected message part).
MALFORMED = [
    ("mercury", 1, "slug_name", None, "missing field 'slug_name'"),
    ("mercury", 1, "slug_name", "../running-sum", "is not a task id"),  # no path in an id
    ("mercury", 1, "test_cases", '[{"input": [1]', "field 'test_cases': invalid JSON"),
    ("mercury", 1, "test_cases", "[]", "expected a non-empty list of test cases"),
    ("mercury", 1, "test_cases", json.dumps([{"input": [1]}]), "test_cases[0]: needs 'input'"),
    ("mercury", 1, "solutions", [{"solution": "x", "runtime": "fast"}], "is not a number"),
    ("mercury", 1, "solutions", [{"solution": "x", "runtime": "-3ms"}], "is not a number"),
    ("mercury", 1, "solutions", [], "field 'solutions' is empty"),
    ("mercury", 1, "entry_point", "reverse list", "is not a method name"),
    ("mercury", 1, "pretty_content", "text", "expected list, got str"),
    ("effibench", 1, "problem_idx", "9", "field 'problem_idx': expected int, got str"),
    ("effibench", 1, "problem_idx", True, "expected int, got bool"),
    ("effibench", 1, "test_case", "assert (", "field 'test_case': not Python"),
    ("effibench", 1, "canonical_solution", "   ", "field 'canonical_solution' is empty"),
    ("evalperf", 1, "scores", [12.5, 60.0], "2 scores for 3 reference solutions"),
    ("evalperf", 1, "scores", [60.0, 12.5, 100.0], "does not increase"),
    ("evalperf", 1, "scores", [12.5, 60.0, 150.0], "is not a percentage"),
    ("evalperf", 1, "pe_input", '{"a": 1}', "expected a JSON list of argument lists"),
    ("evalperf", 1, "reference", [], "field 'reference' is empty"),
    (
        "effibench-x",
        1,
        "generated_tests",
        json.dumps([{"input": 1, "output": "2"}]),
        "generated_tests[0]: 'input' and 'output' must be strings",
    ),
    ("effibench-x", 1, "evaluator", "def judge(a, b): return True", "defines no evaluate"),
    ("effibench-x", 1, "title_slug", "a/../../b", "is not usable"),
    ("effibench-x", 1, "time_limit_nanos", True, "expected int, got bool"),
    ("effibench-x", 1, "solutions", {"python3": {"runtime": 3}}, "solutions.python3: expected"),
]


@pytest.mark.parametrize(("name", "index", "field", "value", "message"), MALFORMED)
def test_a_malformed_record_is_one_line_naming_record_and_field(
    tmp_path: Path, name: str, index: int, field: str, value: object, message: str
) -> None:
    rows = records(name)
    if value is None:
        del rows[index][field]
    else:
        rows[index][field] = value
    path = write(tmp_path, name, rows)
    with pytest.raises(TaskFormatError) as caught:
        load_suite(f"{name}:{path}")
    text = str(caught.value)
    assert "\n" not in text and message in text
    assert f"{path.name} line {index + 1}" in text  # names the record


def test_duplicate_ids_and_non_objects_are_refused(tmp_path: Path) -> None:
    rows = records("mercury")
    path = write(tmp_path, "mercury", [rows[0], rows[0]])
    with pytest.raises(TaskFormatError, match="duplicate task id 'running-sum-of-1d-array'"):
        load_suite(f"mercury:{path}")
    path.write_text(json.dumps(rows[0]) + "\n[1, 2]\n")
    with pytest.raises(TaskFormatError, match="line 2: expected a JSON object, got list"):
        load_suite(f"mercury:{path}")
    path.write_text(json.dumps(rows[0]) + "\n{not json\n")
    with pytest.raises(TaskFormatError, match="line 2: invalid JSON"):
        load_suite(f"mercury:{path}")
    bad = tmp_path / "x.parquet"
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(TaskFormatError, match="not a readable parquet file"):
        load_suite(f"evalperf:{bad}")


def test_runtime_units() -> None:
    record = Record({}, "r")
    assert runtime_s("44ms", record, "w") == 0.044
    assert runtime_s("0.5 s", record, "w") == 0.5
    assert runtime_s(12, record, "w") == 0.012
    for bad in ("", "1e3ms", True, None, "0 ms"):
        with pytest.raises(TaskFormatError):
            runtime_s(bad, record, "w")


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": SRC, **env},
    )  # fmt: skip


_LOAD = (
    "from perfgym.errors import ConfigError\n"
    "from perfgym.tasks import load_suite\n"
    "try:\n    load_suite({name!r})\n"
    "except ConfigError as e:\n    print('CONFIG', e)\n"
)


def test_hub_unreachable_is_one_line() -> None:
    out = _run(_LOAD.format(name="mercury"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               HF_HOME="/nonexistent-perfgym-hf")  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    (line,) = [x for x in out.stdout.splitlines() if x.startswith("CONFIG")]
    assert "cannot load Elfsong/Mercury from the Hugging Face hub" in line
    assert "pass a local file" in line and "Traceback" not in out.stdout


def test_hub_without_datasets_is_one_line() -> None:
    code = "import sys\nsys.modules['datasets'] = None\n" + _LOAD.format(name="evalperf")
    out = _run(code)
    assert "CONFIG loading evalplus/evalperf from the Hugging Face hub needs the `datasets`" in (
        out.stdout
    ), out.stderr[-2000:]


def test_hub_suites_are_not_builtins_the_service_offers_by_default() -> None:
    """Naming a hub suite reaches the network: the service's default list must not offer it."""
    from perfgym.service.config import ServiceConfig
    from perfgym.tasks.suite import BUILTINS, HUB_SUITES

    assert not set(HUB_SUITES) & set(BUILTINS)
    assert not set(HUB_SUITES) & set(ServiceConfig().suites)


def test_unknown_name_lists_the_published_suites() -> None:
    with pytest.raises(ConfigError, match="not a published suite \\(mercury, effibench"):
        load_suite("mercuri")
