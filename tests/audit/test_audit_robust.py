"""A malformed task is one task's error, never the end of an audit; a resumed audit reuses a
result only for the same task content (red team round 3, findings 6-9)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from audit_tasks import sum_task
from pydantic import ValidationError

from perfgym.audit.content import content_key
from perfgym.audit.history import AuditHistory
from perfgym.audit.registry import select_probes
from perfgym.audit.results import Outcome, ProbeKind, ProbeResult, Severity, TaskAudit
from perfgym.audit.resume import AuditFile
from perfgym.audit.run import audit_tasks
from perfgym.audit.summary import gate, summarise
from perfgym.cli.audit_cmd import stored_audit
from perfgym.judge import Judge, JudgeConfig
from perfgym.judge.plan import task_key
from perfgym.tasks.suite import load_suite
from perfgym.tasks.task import Task

_BAD_LIMITS = [
    {"memory_limit_mb": 1}, {"memory_limit_mb": 0}, {"memory_limit_mb": math.nan},
    {"memory_limit_mb": 2.0**40}, {"time_limit_s": 0}, {"time_limit_s": -1},
    {"time_limit_s": math.nan}, {"time_limit_s": math.inf},
    {"time_limit_s": 100000.0},  # over a day: Limits' ceiling, --time-limit's too
]  # fmt: skip


@pytest.mark.parametrize(
    "bad", _BAD_LIMITS, ids=lambda b: ",".join(f"{k}={v}" for k, v in b.items())
)
def test_a_task_whose_limits_no_run_can_have_is_refused_on_load(bad):
    doc = {**json.loads(sum_task(hidden=True, size=50).model_dump_json()), **bad}
    with pytest.raises(ValidationError, match=next(iter(bad))) as caught:
        Task.model_validate(doc)
    assert caught.value.error_count() == 1


def test_a_long_but_possible_limit_loads():
    doc = json.loads(sum_task(hidden=True, size=50).model_dump_json())
    task = Task.model_validate({**doc, "time_limit_s": 9000.0, "memory_limit_mb": 4})
    assert (task.time_limit_s, task.memory_limit_mb) == (9000.0, 4)


def test_a_task_id_no_file_can_hold_is_refused_on_load_and_a_detail_is_kept_as_escapes():
    """A lone surrogate (JSON "\\udc80") in a task id made every results line unwritable (a
    serialisation traceback after the task was judged); in a detail quoting a program's bytes,
    it is kept as an escape."""
    doc = {**json.loads(sum_task(hidden=True, size=50).model_dump_json()), "id": "sum\udc80"}
    with pytest.raises(ValidationError, match="lone surrogate"):
        Task.model_validate(doc)
    r = ProbeResult(probe="constant", kind=ProbeKind.GAMEABILITY, outcome=Outcome.SCORES,
                    severity=Severity.HIGH, detail="printed b'\udc80'")  # fmt: skip
    line = TaskAudit(task_id="t", language="python", kind="stdio", results=[r]).model_dump_json()
    assert TaskAudit.model_validate_json(line).results[0].detail == "printed b'\\udc80'"


@pytest.fixture(scope="module")
def judge():
    with Judge(JudgeConfig(repeats=1, noise_rounds=0, hidden_workloads=True)) as j:
        yield j


@pytest.fixture(scope="module")
def audited(judge):
    """Two tasks audited together: one the judge refuses (a limit Limits refuses, set past the
    model's check: any task whose judge call raises), and one whose expected output holds a
    lone surrogate (no program prints it; its other probes are judged as usual)."""
    good = sum_task(hidden=True, size=200)
    refused = good.model_copy(update={"id": "refused", "memory_limit_mb": 1})
    doc = json.loads(good.model_dump_json())
    doc["id"], doc["tests"][0]["expected"] = "surrogate", "\ud800x\n"
    surrogate = Task.model_validate(doc)
    probes = select_probes(["constant,lookup-table"])
    seen: list[str] = []
    out = audit_tasks(judge, [refused, surrogate], probes, suite="robust",
                      done=lambda a: seen.append(a.task_id))  # fmt: skip
    return out, seen


def test_a_task_the_judge_refuses_is_its_error_and_the_others_are_audited(audited):
    out, seen = audited
    assert [a.task_id for a in out] == ["refused", "surrogate"]
    assert sorted(seen) == sorted(a.task_id for a in out)  # each written as it finished
    refused, other = out
    assert {r.outcome for r in refused.results} == {Outcome.INFRA_ERROR}
    assert all("memory" in r.detail and "\n" not in r.detail for r in refused.results)
    assert all(r.outcome is not Outcome.INFRA_ERROR for r in other.results)
    assert refused.error and "memory" in refused.error and other.error is None
    # a suite that makes the audit fail does not pass the CI gate, whatever its threshold
    assert gate(out, Severity.HIGH) == [f"refused: not audited ({refused.error})"]
    summary = summarise(out, ["constant", "lookup-table"])
    assert any(line.startswith("errors: 1 task(s)") and "refused" in line for line in summary.lines)


def test_a_lone_surrogate_makes_the_lookup_table_not_applicable_not_a_crash(audited):
    surrogate = audited[0][1]
    table = surrogate.result("lookup-table")
    assert table.outcome is Outcome.NOT_APPLICABLE and "surrogate" in table.detail
    assert surrogate.result("constant").outcome is Outcome.DOES_NOT_SCORE


def test_a_harness_edited_on_disk_is_another_task_to_a_resumed_audit(tmp_path):
    """A PerfCodeBench task's harness is files in its directory, not in the task's JSON: the
    audit's key and the judge's task_key both change when the harness is loosened."""
    fixture = Path(__file__).parents[1] / "fixtures" / "perfcodebench" / "executable_tasks"
    shutil.copytree(fixture / "py_range_sums", tmp_path / "tasks" / "py_range_sums")

    def load() -> Task:
        (task,) = load_suite(str(tmp_path / "tasks")).tasks
        return task

    before = load()
    keys = task_key(before), content_key(before)
    assert content_key(load()) == keys[1]  # stable while nothing changes
    bench = tmp_path / "tasks" / "py_range_sums" / "harness" / "bench.py"
    bench.write_text(bench.read_text() + "\n# the self-check now accepts anything\n")
    after = load()
    assert task_key(after) != keys[0]  # the task's JSON did not change; its folder did
    assert content_key(after) != keys[1]
    plain = sum_task(hidden=True, size=50)
    assert content_key(plain) == task_key(plain)


def test_a_result_that_cannot_be_written_ends_the_run_not_the_task(judge, audited):
    """Only the task's own failures become its error result: when writing a result fails
    (a full disk, a locked store), the audit stops with that error, no task is re-judged
    and no result is lost quietly."""
    task = sum_task(hidden=True, size=200)

    def full_disk(audit: TaskAudit) -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        audit_tasks(judge, [task], select_probes(["constant"]), suite="robust", done=full_disk)


def _audit(task_id: str, key: str, outcome: Outcome = Outcome.SOUND) -> TaskAudit:
    r = ProbeResult(probe="mde", kind=ProbeKind.MEASURABILITY, outcome=outcome,
                    severity=Severity.NONE)  # fmt: skip
    return TaskAudit(task_id=task_id, task_key=key, language="python", kind="stdio", results=[r])


def test_a_resumed_audit_reuses_only_same_content_results_without_infra_errors(tmp_path):
    """A stale result (the task changed since: another key), a result from before keys were
    recorded, an infra error, a task whose audit raised, and a line cut inside a UTF-8
    character are all audited again, from the results file and from the store alike; only
    the unchanged task is reused."""
    path, header = tmp_path / "a.jsonl", {"suite": "s", "probes": ["mde"], "machine": "m"}
    store = tmp_path / "store.sqlite"
    audits = [_audit("same", "same@1"), _audit("changed", "changed@old"), _audit("old", ""),
              _audit("failed", "failed@1", Outcome.INFRA_ERROR),
              _audit("errored", "errored@1").model_copy(update={"error": "boom"})]  # fmt: skip
    f = AuditFile(path, header, resume=False)
    history = AuditHistory(store)
    run = history.start(header)
    for a in audits:
        f.add(a)
        history.put(run, a)
    f.close()
    history.close()
    with path.open("ab") as raw:
        raw.write(b'{"task_id": "cut", "task_key": "cut@1", "detail": "1.2\xc3')
    keys = {"same": "same@1", "changed": "changed@new", "old": "old@1", "failed": "failed@1",
            "cut": "cut@1", "errored": "errored@1"}  # fmt: skip
    f = AuditFile(path, header, resume=True, keys=keys)
    assert set(f.done) == {"same"}
    f.close()
    assert [json.loads(x).get("task_id") for x in path.read_text().splitlines()[1:]] == ["same"]
    f = AuditFile(tmp_path / "b.jsonl", header, resume=True, keys=keys)
    kept = stored_audit(store, header, True, f, keys)
    assert kept is not None and set(f.done) == {"same"}
    kept.close()
    f.close()
