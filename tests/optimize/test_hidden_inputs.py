"""Issue 26 ("Loop integrity"), driven through the real optimise loop and the scripted server:
the repair prompt of a proposal that fails only on the timed workloads quotes none of their
inputs or outputs, and the lookup table written from the leaked answers
(`{2000: 573, 3000: 729}.get(n)`, once accepted with ratio 0.085) is not accepted; nor is a
table in front of the baseline (no speed credit); each round draws fresh hidden inputs, and no
seed is kept or shown."""

from __future__ import annotations

import json
import re
from pathlib import Path

from optimize_helpers import client, core_task

from perfgym.judge.hidden import is_hidden
from perfgym.llm.core_script import fenced
from perfgym.llm.script import Script
from perfgym.llm.scripted import ScriptedServer
from perfgym.optimize.config import OptimizeConfig
from perfgym.optimize.session import SEED_KEY, judge_config, run_session
from perfgym.store.calls import CallLog
from perfgym.store.optimize_history import OptimizeHistory

TASK = "py-lis-dp"
LIS = """import sys
from bisect import bisect_left


def lis(a):
    tails = []
    for x in a:
        i = bisect_left(tails, x)
        if i == len(tails):
            tails.append(x)
        else:
            tails[i] = x
    return len(tails)


data = sys.stdin.read().split()
n = int(data[0])
a = list(map(int, data[1 : n + 1]))
"""
#: Correct on the tests (n <= 10), wrong on every timed workload (n >= 2000).
FAILS_ON_WORKLOADS = LIS + "print(lis(a) if n < 1000 else 0)\n"
#: The issue's proposal, written after the repair prompt quoted the workloads' answers.
ISSUE_TABLE = LIS + "t = {2000: 573, 3000: 729}.get(n)\nprint(t if t is not None else lis(a))\n"


def _run(tmp_path: Path, answers: list[str], iterations: int, strategy: str = "greedy",
         **judge: object):  # type: ignore[no-untyped-def]  # fmt: skip
    """One optimize run of TASK: (result, steps, the user prompts the server was sent)."""
    task = core_task(TASK)
    script = Script().add(task.id, *[fenced(a, task.language, "Here:") for a in answers])
    store = tmp_path / "h.sqlite"
    history = OptimizeHistory(store)
    jc = judge_config(3).model_copy(update=judge)
    with ScriptedServer(script) as srv:
        result = run_session(OptimizeConfig(iterations=iterations, strategy=strategy),  # type: ignore[arg-type]
                             "perfgym-core", [task], client(srv.base_url, store), judge=jc,
                             history=history, out=tmp_path / "out", resume=False,
                             report=False)  # fmt: skip
    steps = [s for s in history.steps(result.run) if s.slot >= 0]
    prompts = [(r["purpose"], json.dumps(r["request"])) for r in CallLog(store).rows()]
    return result, steps, prompts


def _failed_cases(step) -> list[dict]:  # type: ignore[no-untyped-def]
    assert step.verdict is not None
    return [t for t in step.verdict["tests"] if not t["passed"]]


def test_repair_prompt_quotes_no_answer_of_a_timed_workload_and_the_table_is_rejected(tmp_path):
    result, steps, prompts = _run(tmp_path, [FAILS_ON_WORKLOADS, ISSUE_TABLE], iterations=2)
    first, second = steps
    assert first.stage == "WO" and not first.accepted
    failed = _failed_cases(first)
    assert failed, first.why
    # the answer the judge compared with: "wrong output: expected '<answer>', got '0\n'"
    message = failed[0]["message"]
    assert "expected" in message
    found = re.search(r"expected '(\d+)", message)
    assert found, message
    answer = found.group(1)
    repairs = [text for purpose, text in prompts if purpose == "repair"]
    assert len(repairs) == 1
    assert not re.search(rf"\b{answer}\b", repairs[0]), "the repair prompt quotes the answer"
    assert failed[0]["id"] not in repairs[0]
    assert "hidden workload" in repairs[0]
    # the table of the declared workloads' answers: wrong on the hidden ones, never accepted
    assert second.purpose == "repair"
    assert second.stage == "WO" and second.accepted is False, second.why
    assert all(is_hidden(t["id"]) for t in _failed_cases(second))
    assert result.states[TASK].best_role == "baseline"


def test_a_table_in_front_of_the_baseline_earns_no_speed_credit(tmp_path):
    """Every declared workload's answer in a table keyed by the whole input, the baseline
    behind it: correct everywhere, but on hidden inputs it is the baseline, so no faster."""
    task = core_task(TASK)
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "security"))
    from lookup_tables import table_program, visible_outputs

    from perfgym.judge.judge import Judge

    with Judge(judge_config(1, hidden=False)) as j:
        table = visible_outputs(j, task)
    program = table_program(task, table, fallback_source=task.baseline.source)
    _result, steps, _prompts = _run(tmp_path, [program], iterations=1)
    (step,) = steps
    assert step.stage == "OK" and step.accepted is False, (step.why, step.ratio)
    assert step.verdict is not None and step.verdict["decided_on"] == "hidden"


def test_every_round_draws_fresh_hidden_inputs_and_no_seed_is_kept(tmp_path):
    """What a program leaks about one round's hidden inputs (a memory figure, a kind of
    failure) is stale by the next round: each round's batch draws its own (red team round 2:
    leaked two bits a round, a table of the hidden answers was accepted). No seed is kept or
    shown anywhere, and a failure on a hidden input says nothing of its kind."""
    result, steps, prompts = _run(tmp_path, [FAILS_ON_WORKLOADS], iterations=2)
    history = OptimizeHistory(tmp_path / "h.sqlite")
    assert SEED_KEY not in (history.run_config(result.run) or {})
    ids = [{t["id"] for t in (s.verdict or {}).get("tests", []) if is_hidden(t["id"])}
           for s in steps]  # fmt: skip
    assert len(ids) == 2 and ids[0] and ids[1] and ids[0].isdisjoint(ids[1]), ids
    repairs = [text for _p, text in prompts if "failed at stage" in text]
    assert repairs and all("stage hidden" in t for t in repairs), repairs
    for kind in ("wrong output", "RUNTIME_ERROR", "TIMEOUT", "did not run"):
        assert not any(kind in t for t in repairs), kind
