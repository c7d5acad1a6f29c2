"""EffiBench-X (EffiBench/effibench-x on the Hugging Face hub) as a `Suite`, one language.

Published schema (hub split `test`; fields read by EffiBench-X `evaluate_solution.py` and
`effibench/run_tests.py`): `id`, `title`, `title_slug`, `source`, `description` or
`description_md`, `difficulty`, `type`, `time_limit_nanos`, `memory_limit_bytes`,
`starter_code` and `solutions` (by language key: `python3`, `cpp`, `java`, `javascript`,
`golang`, `ruby`; a solution is `{code, runtime, memory, ...}` as published), `evaluator`
(Python source defining `evaluate(output, expected)` on stripped text), `generated_tests` (a
JSON string: a list of `{"input": stdin, "output": expected stdout}`) and `test_runners` (by
language: the driver EffiBench-X wraps a functional solution in).

Each record becomes a STDIO task of the chosen language (default `python3`; task id
`<source>_<id>_<title_slug>`, as EffiBench-X names its problem files): the tests are the
generated tests, judged by the record's `evaluator` after EffiBench-X's text clean-up, and the
canonical solution of that language is baseline and reference. A problem with a test runner
for the language (LeetCode-style, functional) is loaded but marked not runnable: the runner's
wrapping is EffiBench-X's and is not reproduced. A record without a solution in the language
is skipped and listed in `Suite.metadata["skipped"]`. The published runtimes and memory stay
in metadata (their units and machine are LeetCode's/the publisher's).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from perfgym.errors import ConfigError
from perfgym.tasks.mercury import NOT_RUNNABLE
from perfgym.tasks.published import Record, read_file, read_hub, unique_ids
from perfgym.tasks.suite_model import Suite
from perfgym.tasks.task import Language, Oracle, Solution, Split, Task, TaskKind, TestCase

HUB_NAME = "EffiBench/effibench-x"
HUB_SPLITS = ("test",)

#: EffiBench-X language keys -> perfgym languages (ruby has no perfgym toolchain).
LANGUAGES: dict[str, Language | None] = {
    "python3": Language.PYTHON,
    "cpp": Language.CPP,
    "java": Language.JAVA,
    "javascript": Language.JAVASCRIPT,
    "golang": Language.GO,
    "ruby": None,
}

_CHECK = """\
import re as _re

{evaluator}

_ANSI = _re.compile(r"\\x1B(?:[@-Z\\\\-_]|\\[[0-?]*[ -/]*[@-~])")


def _clean(text):
    text = _ANSI.sub("", str(text))
    return text.replace("\\r\\r\\n", "\\n").replace("\\r\\n", "\\n").strip()


def check(test_input, expected, output):
    return bool(evaluate(_clean(output), _clean(expected)))
"""


def load_effibench_x(path: str | Path | None = None, *, language: str = "python3") -> Suite:
    """EffiBench-X in one language, from a local file in the published schema or the hub."""
    if language not in LANGUAGES:
        raise ConfigError(f"effibench-x: unknown language {language!r} (one of {list(LANGUAGES)})")
    if LANGUAGES[language] is None:
        raise ConfigError(f"effibench-x: language {language!r} has no perfgym toolchain")
    if path is None:
        records, source = read_hub(HUB_NAME, HUB_SPLITS), f"hub:{HUB_NAME}"
    else:
        records, source = read_file(Path(path)), str(Path(path).resolve())
    return effibench_x_suite(records, source, language)


def effibench_x_suite(records: Sequence[Record], source: str, language: str) -> Suite:
    tasks: list[Task] = []
    kept: list[Record] = []
    skipped: list[dict[str, str]] = []
    for record in records:
        task = effibench_x_task(record, language)
        if isinstance(task, str):
            skipped.append({"task": problem_name(record), "language": language, "reason": task})
            continue
        tasks.append(task)
        kept.append(record)
    unique_ids([(t.id, r) for t, r in zip(tasks, kept, strict=True)])
    if not tasks:
        raise ConfigError(f"effibench-x: no problem of {source} has a {language} solution")
    return Suite(
        name=f"effibench-x-{language}",
        tasks=tasks,
        source=source,
        metadata={
            "benchmark": "EffiBench-X",
            "language": language,
            "upstream": f"https://huggingface.co/datasets/{HUB_NAME}",
            "skipped": skipped,
        },
    )


def problem_name(record: Record) -> str:
    """`<source>_<id>_<title_slug>`, EffiBench-X's problem file name."""
    parts = [record.field(k, (str, int)) for k in ("source", "id", "title_slug")]
    name = "_".join(str(p) for p in parts)
    if "/" in name or not name.strip():
        raise record.fail(f"task id {name!r} is not usable")
    return name


def _tests(record: Record) -> list[TestCase]:
    raw = record.json_field("generated_tests")
    if not isinstance(raw, list) or not raw:
        raise record.fail("field 'generated_tests': expected a non-empty list of tests")
    tests = []
    for i, case in enumerate(raw):
        if not isinstance(case, dict):
            raise record.fail(f"generated_tests[{i}]: expected an object")
        stdin, expected = case.get("input"), case.get("output")
        if not isinstance(stdin, str) or not isinstance(expected, str):
            raise record.fail(f"generated_tests[{i}]: 'input' and 'output' must be strings")
        tests.append(TestCase(id=f"test-{i}", stdin=stdin, expected=expected))
    return tests


def effibench_x_task(record: Record, language: str) -> Task | str:
    """One record as a Task of `language`, or why it has none (errors name the record)."""
    name = problem_name(record)
    solutions = record.field("solutions", dict)
    entry: Any = solutions.get(language)
    if entry is None:
        return f"no {language} solution"
    if (
        not isinstance(entry, dict)
        or not isinstance(entry.get("code"), str)
        or not entry["code"].strip()
    ):
        raise record.fail(f"solutions.{language}: expected an object with 'code'")
    evaluator = record.text("evaluator")
    try:
        compile(evaluator, "evaluator", "exec")
    except SyntaxError as exc:
        raise record.fail(f"field 'evaluator': not Python ({exc.msg}, line {exc.lineno})") from None
    if "def evaluate" not in evaluator:
        raise record.fail("field 'evaluator': defines no evaluate(output, expected)")
    statement = record.text("description", optional=True) or record.text("description_md")
    runners = record.field("test_runners", dict, optional=True) or {}
    runner = runners.get(language)
    starter = (record.field("starter_code", dict, optional=True) or {}).get(language) or ""
    limit_ns = record.field("time_limit_nanos", int, optional=True)
    memory = record.field("memory_limit_bytes", int, optional=True)
    canonical = Solution(label="baseline", source=entry["code"])
    published = {k: entry[k] for k in ("runtime", "memory") if entry.get(k) is not None}
    metadata: dict[str, Any] = {
        "effibench_x": {
            "language": language,
            "type": record.data.get("type"),
            "difficulty": record.data.get("difficulty"),
            "published": published,
            "test_runner": runner,
        },
        "source_record": record.where,
    }
    if runner:
        metadata[NOT_RUNNABLE] = "functional problem: EffiBench-X wraps it in its test runner"
    language_enum = LANGUAGES[language]
    assert language_enum is not None
    return Task(
        id=name,
        family=name,
        language=language_enum,
        kind=TaskKind.STDIO,
        title=str(record.data.get("title") or name),
        goal=statement,
        interface=starter,
        metric="execution time, peak memory and memory integral over the tests",
        correctness_rule="evaluate(output, expected) holds on every test",
        baseline=canonical,
        references=[canonical.model_copy(update={"label": "reference"})],
        tests=_tests(record),
        oracle=Oracle(kind="checker", checker=_CHECK.format(evaluator=evaluator)),
        split=Split.TEST,
        time_limit_s=limit_ns / 1e9 if limit_ns else None,
        memory_limit_mb=memory / (1 << 20) if memory else None,
        metadata=metadata,
    )
