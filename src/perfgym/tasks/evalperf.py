"""EvalPerf (Liu et al., COLM 2024; evalplus/evalperf on the Hugging Face hub) as a `Suite`.

Published schema (hub split `test`; written by evalplus `tools/evalperf/hf_upload.py` from
`evalplus/perf/select_pe_tasks.py`, read by `evalplus/evalperf.py`): `task_id`
(`HumanEval/N` or `Mbpp/N`), `entry_point`, `prompt`, `reference` (one solution per
performance cluster, slowest cluster first), `scores` (the clusters' cumulative percentages,
ascending, the fastest reaching 100) and `pe_input` (a JSON string holding a list of
performance inputs, each an argument list; EvalPerf times the first).

Each record becomes a FUNCTION task timed on that input: the cluster representatives are the
pool (`cluster-j`, `quality` = its score), the slowest cluster is the baseline and the fastest
the reference, and `metadata["evalperf"]["scores"]` keeps the scores for DPS
(`perfgym.metrics.evalperf`). The input is also the correctness test, its expected output
being the reference's, compared the EvalPlus way. Mbpp inputs that EvalPlus deserialises
specially (`mbpp_deserialize_inputs`) are read as plain JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from perfgym.tasks._prompt import signature_of
from perfgym.tasks.humaneval import evalplus_checker_source
from perfgym.tasks.published import Record, read_file, read_hub, unique_ids
from perfgym.tasks.suite_model import Suite
from perfgym.tasks.task import Language, Oracle, Solution, Split, Task, TaskKind, TestCase

HUB_NAME = "evalplus/evalperf"
HUB_SPLITS = ("test",)


def load_evalperf(path: str | Path | None = None) -> Suite:
    """EvalPerf from a local file in the published schema, else from the hub."""
    if path is None:
        records, source = read_hub(HUB_NAME, HUB_SPLITS), f"hub:{HUB_NAME}"
    else:
        records, source = read_file(Path(path)), str(Path(path).resolve())
    return evalperf_suite(records, source)


def evalperf_suite(records: Sequence[Record], source: str) -> Suite:
    tasks = [evalperf_task(r) for r in records]
    unique_ids([(t.id, r) for t, r in zip(tasks, records, strict=True)])
    return Suite(
        name="evalperf",
        tasks=tasks,
        source=source,
        metadata={
            "benchmark": "EvalPerf",
            "upstream": f"https://huggingface.co/datasets/{HUB_NAME}",
            "metric": "dps / dps_norm (differential performance score)",
        },
    )


def _scores(record: Record, n: int) -> list[float]:
    raw = record.field("scores", list)
    if len(raw) != n:
        raise record.fail(f"field 'scores': {len(raw)} scores for {n} reference solutions")
    scores: list[float] = []
    for i, s in enumerate(raw):
        if isinstance(s, bool) or not isinstance(s, int | float) or not 0 < s <= 100:
            raise record.fail(f"scores[{i}]: {s!r} is not a percentage in (0, 100]")
        if scores and s <= scores[-1]:
            raise record.fail(f"scores[{i}]: {s!r} does not increase (clusters slow to fast)")
        scores.append(float(s))
    return scores


def evalperf_task(record: Record) -> Task:
    """One EvalPerf record as a Task (errors name the record and the field)."""
    task_id = record.text("task_id")
    entry = record.text("entry_point")
    if not entry.isidentifier():
        raise record.fail(f"field 'entry_point': {entry!r} is not a function name")
    prompt = record.text("prompt")
    refs = record.field("reference", list)
    if not refs:
        raise record.fail("field 'reference' is empty")
    for i, r in enumerate(refs):
        if not isinstance(r, str) or not r.strip():
            raise record.fail(f"reference[{i}]: expected solution source")
    scores = _scores(record, len(refs))
    inputs = record.json_field("pe_input")
    if not isinstance(inputs, list) or not inputs or not isinstance(inputs[0], list):
        raise record.fail("field 'pe_input': expected a JSON list of argument lists")
    pool = [
        Solution(label=f"cluster-{j}", source=src, quality=scores[j]) for j, src in enumerate(refs)
    ]
    case = TestCase(id="pe-0", args=list(inputs[0]))
    return Task(
        id=task_id,
        family=task_id,
        language=Language.PYTHON,
        kind=TaskKind.FUNCTION,
        title=entry,
        goal=prompt,
        interface=signature_of(prompt, entry),
        metric="time of the performance input (EvalPerf counts CPU instructions)",
        correctness_rule="the output on the performance input equals the reference's",
        baseline=pool[0].model_copy(update={"label": "baseline"}),
        references=[pool[-1].model_copy(update={"label": "reference"})],
        pool=pool,
        tests=[case],
        workloads=[case],
        oracle=Oracle(kind="checker", checker=evalplus_checker_source(0.0, entry)),
        entry_point=entry,
        split=Split.TEST,
        metadata={
            "evalperf": {"scores": scores, "pe_inputs": len(inputs)},
            "source_record": record.where,
        },
    )
