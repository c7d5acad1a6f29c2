"""Faults of the scripted server (429, 500, timeouts, dropped connections; malformed JSON, no
code, the wrong language, truncation): every iteration completes, each spoiled answer gets the
verdict it deserves, and the server saw no duplicate call and no lost one."""

from __future__ import annotations

import asyncio

from optimize_helpers import client, core_task

from perfgym.llm.core_script import fenced
from perfgym.llm.script import Script
from perfgym.llm.script_faults import Faults
from perfgym.llm.scripted import ScriptedServer
from perfgym.optimize.config import OptimizeConfig
from perfgym.optimize.feedback import BASELINE
from perfgym.optimize.prompting import prompt_for
from perfgym.optimize.session import judge_config, run_session
from perfgym.store.optimize_history import OptimizeHistory

#: 20 % transport faults, and most answers spoiled.
RATES = {"rate_429": 0.05, "rate_500": 0.05, "rate_timeout": 0.05, "rate_drop": 0.05,
         "malformed_json": 0.2, "no_code": 0.2, "wrong_language": 0.2, "truncated": 0.2}  # fmt: skip
ANSWER_FAULTS = {"malformed_json", "no_code", "wrong_language", "truncated"}
TRANSPORT_FAULTS = ("429", "500", "timeout", "drop")


def _faults(task, script) -> Faults:  # type: ignore[no-untyped-def]
    """Faults whose seeded draws hit every kind in this run. The best stays the baseline (its
    own source is never accepted), so all 8 calls ask the same prompt with sample indices 0-7:
    the server's content keys are known before the run; they are read off a fault-free server
    asked those 8 calls by the same client, and the first seed whose draws spoil answers with
    every answer fault, leave one clean, and meet every transport fault on a first attempt is
    taken."""
    prompt = prompt_for("optimize", task, "time", task.baseline.source, BASELINE)
    with ScriptedServer(script) as srv:
        probe = client(srv.base_url)

        async def ask() -> None:
            for i in range(8):
                await probe.complete(prompt.messages, sample_index=i, purpose="optimize")
            await probe.aclose()

        asyncio.run(ask())
        keys = list(srv.state.memo)
    assert len(keys) == 8
    for seed in range(20000):
        f = Faults(seed=seed, timeout_delay_s=1.5, retry_after_s=0.01, **RATES)
        answers = {f.answer(k, 0) for k in keys}
        first = {f.transport(k, 0) for k in keys}
        if ANSWER_FAULTS | {None} <= answers and set(TRANSPORT_FAULTS) <= first:
            return f
    raise AssertionError("no seed spoils every kind")


def test_every_iteration_completes_with_the_right_verdict(tmp_path):
    task = core_task("c-hash-join")
    script = Script().add(task.id, fenced(task.baseline.source, task.language, "Try this:"))
    history = OptimizeHistory(tmp_path / "h.sqlite")
    config = OptimizeConfig(iterations=2, strategy="best-of-n", n=4)
    with ScriptedServer(script, faults=_faults(task, script)) as srv:
        model = client(srv.base_url, tmp_path / "h.sqlite", timeout_s=0.5, backoff_base_s=0.01,
                       backoff_max_s=0.05, max_retries=6)  # fmt: skip
        result = run_session(config, "perfgym-core", [task], model, judge=judge_config(3),
                             history=history, out=tmp_path / "out", resume=False, report=False)  # fmt: skip
        stats = srv.stats
    steps = [s for s in history.steps(result.run) if s.slot >= 0]
    assert len(steps) == 8 and all(s.judged for s in steps)
    assert all(s.answer is not None and not s.model_error for s in steps)  # every fault retried
    kinds = set()
    for s in steps:
        assert s.answer is not None
        if s.extra["truncated"]:
            kind = "truncated"
        elif "```" not in s.answer and s.answer.lstrip().startswith("{"):
            kind = "malformed_json"
        elif "```" not in s.answer:
            kind = "no_code"
        elif "```python" in s.answer:
            kind = "wrong_language"
        else:
            kind = "clean"
        kinds.add(kind)
        if kind == "clean":  # the baseline's own source: correct, a tie by construction
            assert s.stage == "OK" and s.why == "same program as the best", s.why
        elif kind in ("no_code", "wrong_language"):  # no block of the task's language
            assert s.stage == "NX", (kind, s.stage, s.why)
        elif kind == "malformed_json":  # JSON cut short: no fenced block, and it does not build
            assert s.stage in ("NX", "NC"), (kind, s.stage, s.why)
        else:  # half a program, finish_reason length
            assert s.stage in ("NX", "NC"), (kind, s.stage)
            assert s.extra["finish_reason"] == "length"
        assert not s.accepted
        assert s.verdict is not None and not s.verdict["infra_error"]
    assert ANSWER_FAULTS | {"clean"} <= kinds, kinds
    assert all(stats.faults.get(k, 0) >= 1 for k in TRANSPORT_FAULTS), stats.faults
    assert sum(s.extra["retries"] for s in steps) > 0
    assert stats.duplicates == 0 and stats.unanswered_keys == []
    assert stats.answers_served == 8
    assert result.states[task.id].best_role == "baseline"
