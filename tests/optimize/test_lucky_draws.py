"""A proposal is accepted only when it is also correct on fresh draws of the hidden inputs, and a
best found wrong on a later round's draw is dropped (red team helper-78: on py-lis-dp a program
wrong on 58 % of the task's inputs, sent every round, was accepted at ~13x after one lucky draw
in 3 of 3 runs, and kept though later rounds' re-measurements of it failed; a shortcut tuned
on the one-bit "failed on a hidden workload" was accepted in 4 of 4).

The verdicts are real (the real judge on the task's reference and on a program wrong on every
hidden input); a queue hands them to the real loop in a chosen order, as draws would fall."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from optimize_helpers import core_task
from test_hidden_inputs import FAILS_ON_WORKLOADS, TASK

from perfgym.judge.candidate import Candidate
from perfgym.judge.judge import Judge
from perfgym.judge.verdict import Verdict
from perfgym.llm.core_script import fenced
from perfgym.optimize.config import OptimizeConfig
from perfgym.optimize.final_check import CONFIRM_SLOT, FINAL_SLOT, MEASURE_SLOT
from perfgym.optimize.loop import BEST_SLOT, Optimizer
from perfgym.optimize.outputs import task_rows
from perfgym.optimize.session import judge_config
from perfgym.store.optimize_history import OptimizeHistory, Step


@pytest.fixture(scope="module")
def real() -> dict[str, Verdict]:
    """The real judge's verdicts on hidden inputs: the reference (correct, faster than the
    baseline) and a program wrong on every hidden input."""
    task = core_task(TASK)
    with Judge(judge_config(3)) as j:
        ref, wrong = j.judge_many([Candidate(task, source=task.references[0].source),
                                   Candidate(task, source=FAILS_ON_WORKLOADS)])  # fmt: skip
    assert ref.correct and ref.hidden_workloads > 0, ref.detail
    assert not wrong.correct and wrong.hidden_workloads > 0
    return {"ref": ref, "wrong": wrong}


@dataclass
class Draws:
    """A judge queue whose calls return the given verdicts in order (each call: one draw)."""

    answers: list[list[Verdict] | None]
    calls: list[list[Candidate]] = field(default_factory=list)
    judge: object = None

    checks: list[int] = field(default_factory=list)  # indices of calls that were checks

    async def check_round(self, candidates: list[Candidate]) -> list[Verdict]:
        self.checks.append(len(self.calls))
        return await self.judge_round(candidates)

    async def judge_round(self, candidates: list[Candidate]) -> list[Verdict]:
        self.calls.append(list(candidates))
        out = self.answers.pop(0)
        if out is None:  # the judge gave nothing back (an infrastructure failure)
            return []
        assert len(out) == len(candidates), (out, candidates)
        return [v.model_copy(update={"source": c.source or v.source})
                for v, c in zip(out, candidates, strict=True)]  # fmt: skip


class NoModel:
    name = "stored"

    async def complete(self, *a: object, **k: object) -> object:
        raise AssertionError("every answer is stored: no model call")


def _run(tmp_path: Path, iterations: int, draws: list[list[Verdict]], **cfg: object):  # type: ignore[no-untyped-def]
    """The real loop over `iterations` greedy rounds of TASK, each proposing its reference (the
    answers stored in the history beforehand), judged by `draws`."""
    task = core_task(TASK)
    history = OptimizeHistory(tmp_path / "h.sqlite")
    answer = fenced(task.references[0].source, task.language, "Here:")
    history.put(
        "r", [Step(task.id, i, 0, "optimize", answer=answer) for i in range(1, iterations + 1)]
    )
    queue = Draws(draws)
    config = OptimizeConfig(iterations=iterations, **{"final_check": 0, **cfg})  # type: ignore[arg-type]
    opt = Optimizer(NoModel(), queue, history, "r", config)  # type: ignore[arg-type]
    states = asyncio.run(opt.optimize([task]))
    return states[task.id], {(s.iteration, s.slot): s for s in history.steps("r")}, queue


def test_a_proposal_wrong_on_a_fresh_draw_is_not_accepted(tmp_path, real) -> None:
    state, steps, queue = _run(
        tmp_path, 1, [[real["ref"]], [real["ref"]], [real["wrong"]]], confirm=2
    )
    step = steps[(1, 0)]
    assert step.accepted is False and "not on fresh draw 2 of 2" in step.why, step.why
    assert state.best_role == "baseline" and state.accepted_at == []
    assert steps[(1, CONFIRM_SLOT)].why == "correct on a fresh draw of the hidden inputs"
    assert steps[(1, CONFIRM_SLOT - 1)].stage == real["wrong"].stage.value
    assert all(c.source == step.verdict["source"] for call in queue.calls[1:] for c in call)
    assert queue.checks == [1, 2]  # confirmations are correctness checks, not timed rounds


def test_a_proposal_correct_on_every_draw_is_accepted(tmp_path, real) -> None:
    state, steps, _queue = _run(tmp_path, 1, [[real["ref"]]] * 3, confirm=2)
    assert steps[(1, 0)].accepted is True, steps[(1, 0)].why
    assert state.best_role == "candidate" and state.accepted_at == [1]
    assert {(1, CONFIRM_SLOT), (1, CONFIRM_SLOT - 1)} <= set(steps)
    assert not any(s.accepted for s in steps.values() if s.slot < 0)  # never counted as proposals


def test_without_confirmation_one_draw_decides(tmp_path, real) -> None:
    """confirm=0: the round's own draw alone (the behaviour helper-78 bought)."""
    state, steps, queue = _run(tmp_path, 1, [[real["ref"]]], confirm=0)
    assert steps[(1, 0)].accepted is True and len(queue.calls) == 1
    assert state.best_role == "candidate"


def test_a_best_wrong_on_a_later_draw_is_dropped(tmp_path, real) -> None:
    """Round 1 accepts the reference; round 2's fresh draw finds the best wrong: it is dropped
    for the baseline, nothing is accepted against it, and the summary says so."""
    draws = [[real["ref"]], [real["ref"]], [real["ref"]],  # round 1 and its two confirmations
             [real["ref"], real["wrong"]]]  # round 2: the proposal, the best re-measured  # fmt: skip
    state, steps, _queue = _run(tmp_path, 2, draws, confirm=2)
    assert state.accepted_at == [1]
    assert steps[(2, BEST_SLOT)].stage == real["wrong"].stage.value
    assert steps[(2, 0)].accepted is False and "the best was wrong" in steps[(2, 0)].why
    assert state.best_role == "baseline" and state.best_source == core_task(TASK).baseline.source
    (dropped,) = state.dropped
    assert dropped["iteration"] == 2 and dropped["accepted_at"] == 1, dropped
    assert str(dropped["why"]).startswith(real["wrong"].stage.value), dropped
    (row,) = task_rows({TASK: state})
    assert row["best"] == "baseline" and row["dropped"] == state.dropped


def test_the_final_best_passes_every_final_draw_and_is_kept(tmp_path, real) -> None:
    state, steps, queue = _run(tmp_path, 1, [[real["ref"]]] * 5, confirm=1, final_check=2)
    assert state.best_role == "candidate" and state.dropped == []
    assert state.final_check == {"draws": 2, "passed": 2, "iteration": 1}
    finals = [steps[(1, FINAL_SLOT)], steps[(1, FINAL_SLOT - 1)]]
    assert [s.purpose for s in finals] == ["final", "final"] and not any(s.accepted for s in finals)
    assert queue.checks == [1, 2, 3] and len(queue.calls) == 5  # and one timed measurement
    assert steps[(1, MEASURE_SLOT)].purpose == "final-measure"
    assert queue.calls[4][0].model == "final" and 4 not in queue.checks  # timed, not a check
    assert state.best_verdict is not None
    assert steps[(1, MEASURE_SLOT)].verdict == state.best_verdict.model_dump(mode="json")
    (row,) = task_rows({TASK: state})
    assert row["final_check"] == state.final_check and row["best"] == "candidate"


def test_a_best_wrong_on_a_final_draw_is_dropped_and_a_resume_replays_it(tmp_path, real) -> None:
    """helper-78's window shortcut passed a round and its confirmations in 2 of 2 runs: the
    final check's second draw finds it wrong, the baseline is the result, and a resumed run
    reaches the same end from the stored steps without judging anything."""
    draws = [[real["ref"]], [real["ref"]], [real["ref"]], [real["wrong"]]]
    state, steps, _queue = _run(tmp_path, 1, draws, confirm=1, final_check=3)
    assert state.best_role == "baseline" and state.accepted_at == [1]
    assert state.final_check == {"draws": 3, "passed": 1, "iteration": 1}
    (dropped,) = state.dropped
    assert dropped["by"] == "final check" and dropped["accepted_at"] == 1, dropped
    assert steps[(1, FINAL_SLOT - 1)].stage == real["wrong"].stage.value
    assert (1, FINAL_SLOT - 2) not in steps  # the first wrong draw ends the check
    snap = state.snapshots[1]
    assert snap is not None and snap.source == core_task(TASK).baseline.source
    (row,) = task_rows({TASK: state})
    assert row["best"] == "baseline" and row["dropped"] == state.dropped
    assert row["speedup"] == 1.0 and row["ci"] is None  # the baseline is its own speed-up

    again = Optimizer(NoModel(), Draws([]), OptimizeHistory(tmp_path / "h.sqlite"), "r",  # type: ignore[arg-type]
                      OptimizeConfig(iterations=1, confirm=1, final_check=3))  # fmt: skip
    replayed = asyncio.run(again.optimize([core_task(TASK)]))[TASK]
    assert again.queue.calls == [] and replayed.best_role == "baseline"  # type: ignore[attr-defined]
    assert replayed.dropped == state.dropped and replayed.final_check == state.final_check


def test_no_final_check_when_the_baseline_is_the_best(tmp_path, real) -> None:
    state, steps, queue = _run(tmp_path, 1, [[real["wrong"]]], final_check=4)
    assert state.best_role == "baseline" and state.final_check is None
    assert len(queue.calls) == 1 and not [k for k in steps if k[1] <= FINAL_SLOT]


def test_checks_go_through_the_real_queue_on_more_fresh_inputs_and_time_nothing() -> None:
    """The real queue and judge: a check and a round submitted together are judged in calls of
    their own; the check draws CHECK_INPUTS inputs per workload, measures no baseline, and
    finds the program wrong on hidden inputs; the judge's config is the round's again after."""
    from perfgym.optimize.judging import CHECK_INPUTS, JudgeQueue

    task = core_task(TASK)
    ref = task.references[0].source
    with Judge(judge_config(3)) as j:
        queue = JudgeQueue(j)
        config = j.config

        async def both() -> tuple[list[Verdict], list[Verdict]]:
            return await asyncio.gather(
                queue.judge_round([Candidate(task, source=ref)]),
                queue.check_round([Candidate(task, source=ref),
                                   Candidate(task, source=FAILS_ON_WORKLOADS)]))  # fmt: skip

        (round_v,), (ok, wrong) = asyncio.run(both())
        # the verdicts reach the rounds before the judge thread puts the config back
        for _ in range(500):
            if j.config is config:
                break
            time.sleep(0.01)
        assert j.config is config
    assert round_v.correct and round_v.baseline is not None and round_v.hidden_workloads == 2
    assert ok.correct and ok.baseline is None and ok.reference is None
    assert ok.hidden_workloads == CHECK_INPUTS * round_v.hidden_workloads
    assert not wrong.correct and wrong.stage.value == "WO"
    assert set(ok.candidate.per_workload_s).isdisjoint(round_v.candidate.per_workload_s)


def _stored_answers(tmp_path: Path, rounds: list[int]) -> OptimizeHistory:
    task = core_task(TASK)
    history = OptimizeHistory(tmp_path / "h.sqlite")
    answer = fenced(task.references[0].source, task.language, "Here:")
    history.put("r", [Step(task.id, i, 0, "optimize", answer=answer) for i in rounds])
    return history


def test_a_resume_with_more_rounds_keeps_a_best_the_final_check_dropped_out(tmp_path, real) -> None:
    """red team helper-80: resuming with more --iterations replayed the rounds but not the
    final check's drop, so the dropped program was the best again (and kept, wrong on 3.4 % of
    fresh inputs) in 3 of 4 resumes. Now its key is known wrong: the drop is replayed with its
    round, and the program sent again is refused."""
    task = core_task(TASK)
    _stored_answers(tmp_path, [1, 2])
    first = Optimizer(NoModel(), Draws([[real["ref"]], [real["ref"]], [real["ref"]], [real["wrong"]]]),  # type: ignore[arg-type]
                      OptimizeHistory(tmp_path / "h.sqlite"), "r",
                      OptimizeConfig(iterations=1, confirm=1, final_check=3))  # fmt: skip
    assert asyncio.run(first.optimize([task]))[TASK].best_role == "baseline"
    queue = Draws([[real["ref"]]])  # round 2: the same program again
    again = Optimizer(NoModel(), queue, OptimizeHistory(tmp_path / "h.sqlite"), "r",  # type: ignore[arg-type]
                      OptimizeConfig(iterations=2, confirm=1, final_check=3))  # fmt: skip
    state = asyncio.run(again.optimize([task]))[TASK]
    assert state.best_role == "baseline" and state.accepted_at == [1]
    steps = {(s.iteration, s.slot): s for s in OptimizeHistory(tmp_path / "h.sqlite").steps("r")}
    assert steps[(2, 0)].accepted is False
    assert steps[(2, 0)].why.startswith("found wrong on an earlier fresh draw"), steps[(2, 0)].why
    (dropped,) = state.dropped
    assert dropped["by"] == "final check" and dropped["iteration"] == 1
    assert len(queue.calls) == 1 and queue.checks == []  # nothing left to check at the end


class Unavailable:
    """A model that answers nothing (every try a 503: a non-fatal error)."""

    name = "stored"

    async def complete(self, *a: object, **k: object) -> object:
        from perfgym.llm.errors import RetriesExhausted

        raise RetriesExhausted("503 Service Unavailable after 7 tries")


def test_a_round_the_model_answers_nothing_still_measures_the_best(tmp_path, real) -> None:
    """red team helper-80: a policy that answered every request after its acceptance with a
    503 left rounds without candidates, so the best was never measured again on a fresh draw."""
    task = core_task(TASK)
    history = _stored_answers(tmp_path, [1])
    queue = Draws([[real["ref"]], [real["ref"]], [real["wrong"]]])  # round 1, confirm, round 2
    opt = Optimizer(Unavailable(), queue, history, "r",  # type: ignore[arg-type]
                    OptimizeConfig(iterations=2, confirm=1, final_check=0))  # fmt: skip
    state = asyncio.run(opt.optimize([task]))[TASK]
    steps = {(s.iteration, s.slot): s for s in history.steps("r")}
    assert "503" in steps[(2, 0)].model_error and steps[(2, BEST_SLOT)].stage == "WO"
    assert [c.model for c in queue.calls[2]] == ["best"]
    assert state.best_role == "baseline" and state.dropped[0]["iteration"] == 2


def test_a_final_check_without_a_verdict_drops_the_best_and_replays_so(tmp_path, real) -> None:
    """A final draw that gives no verdict fails the check, as a confirmation's does; the
    stored step names the program it checked, so a resume replays the same drop."""
    draws = [[real["ref"]], [real["ref"]], None]  # round 1, its confirmation, no final verdict
    state, steps, _queue = _run(tmp_path, 1, draws, confirm=1, final_check=2)
    assert state.best_role == "baseline" and state.dropped[0]["why"] == "no verdict"
    assert steps[(1, FINAL_SLOT)].verdict is None and steps[(1, FINAL_SLOT)].extra["key"]
    again = Optimizer(NoModel(), Draws([]), OptimizeHistory(tmp_path / "h.sqlite"), "r",  # type: ignore[arg-type]
                      OptimizeConfig(iterations=1, confirm=1, final_check=2))  # fmt: skip
    replayed = asyncio.run(again.optimize([core_task(TASK)]))[TASK]
    assert replayed.best_role == "baseline" and replayed.dropped == state.dropped
    assert again.queue.calls == []  # type: ignore[attr-defined]
