"""The end of a task's search: its best checked on fresh draws of the hidden inputs and
measured once more, so the program a run reports is right beyond the draws it was chosen on,
and its speed-up is not the one it was chosen for.

`final_check`: the best is judged for correctness on `OptimizeConfig.final_check` fresh draws
(`JudgeQueue.check_round`); the first it fails marks it wrong and drops it for the best before
it, which is checked in turn. The best that passes is measured once more, timed beside the
baseline (`judge_round`): its reported speed-up is that measurement's, made after it was chosen
(the round that accepted it is the best of several noisy ones). Every step is stored with the
task's last round; `replay_checks` applies a replayed round's stored checks, so a resumed run
with more rounds keeps a best the final check dropped out of it (red team helper-80).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from perfgym.judge.candidate import Candidate
from perfgym.judge.verdict import Verdict
from perfgym.optimize.search import (
    TaskState,
    drop_best,
    fell,
    key_of,
    mark_wrong,
    snapshot,
    stands,
)
from perfgym.store.optimize_history import Step

if TYPE_CHECKING:
    from perfgym.optimize.loop import Optimizer

#: Slots of the steps confirming an accepted proposal on fresh hidden inputs (the first; the
#: next ones count down from it).
CONFIRM_SLOT = -2
#: Slots of the final check's steps, stored with the task's last round (counting down; a best
#: dropped there is followed by the checks of the best before it).
FINAL_SLOT = -100
#: Slots of the final measurements (counting down, one per best that passed its check).
MEASURE_SLOT = -10_000


def check_step(state: TaskState, iteration: int, slot: int, purpose: str, got: Verdict | None,
               source: str | None) -> Step:  # fmt: skip
    """A check's step; `extra['key']` names the program checked, also when no verdict came."""
    ok = stands(got)
    key = key_of(source, state.task) if source is not None else ""
    return Step(state.task.id, iteration, slot, purpose,
                verdict=None if got is None else got.model_dump(mode="json"),
                stage="" if got is None else got.stage.value, accepted=False,
                why="correct on a fresh draw of the hidden inputs" if ok else
                f"{fell(got)} on a fresh draw of the hidden inputs" if got is not None
                and got.correct else "wrong on a fresh draw of the hidden inputs",
                extra={"key": key})  # fmt: skip


def _verdict(step: Step | None) -> Verdict | None:
    return None if step is None or step.verdict is None else Verdict.model_validate(step.verdict)


def _key(state: TaskState, step: Step) -> str:
    """The program a stored check step checked: its own record, else its verdict's source."""
    key = str(step.extra.get("key") or "")
    v = _verdict(step)
    if not key and v is not None and v.source is not None:
        key = key_of(v.source, state.task)
    return key


def _same(state: TaskState, step: Step) -> bool:
    """Whether a stored check step is of the current best (else it was of a best dropped
    before, whose checks `replay_checks` applied with their round)."""
    key = _key(state, step)
    if not key or state.best_source is None:
        return True  # an older step that names no program: taken as it stands
    return key == key_of(state.best_source, state.task)


def replay_checks(opt: Optimizer, state: TaskState, iteration: int) -> None:
    """A replayed round's stored confirmations, final checks and final measurements: each
    program they found wrong is marked so, and while the best is one the final check found
    wrong, it is dropped again."""
    tid = state.task.id
    found: dict[str, Verdict | None] = {}
    passed: dict[str, int] = {}  # final checks each program passed
    for (t, it, slot), step in opt._stored.items():
        if t != tid or it != iteration or slot > CONFIRM_SLOT:
            continue
        v, key, final = _verdict(step), _key(state, step), slot <= FINAL_SLOT
        if not key:
            continue
        if stands(v):
            passed[key] = passed.get(key, 0) + (MEASURE_SLOT < slot <= FINAL_SLOT)
            continue
        # wrong, hid time, or no verdict came (as the live loop treats it: a failed check)
        what = "final check" if final else "confirmation"
        hid = v is not None and v.correct
        state.wrong.setdefault(
            key,
            f"{fell(v)} in a {what}, round {iteration}" if hid else f"{what}, round {iteration}",
        )
        if final:
            found[key] = v
    while state.best_role == "candidate" and state.best_source is not None:
        key = key_of(state.best_source, state.task)
        if key not in found:
            break
        state.final_check = {"draws": opt.config.final_check, "passed": passed.get(key, 0),
                             "iteration": state.best_iteration}  # fmt: skip
        drop_best(state, iteration, found[key], "final check")
    _snap(state, iteration)


def _snap(state: TaskState, iteration: int) -> None:
    state.snapshots[iteration] = snapshot(state, [x for x in [state.snapshots.get(iteration)] if x])


async def final_check(opt: Optimizer, state: TaskState) -> None:
    """Check the task's best, and measure the one that passes (see the module's text)."""
    if not state.snapshots or opt.config.final_check == 0:
        return
    last, tid, n = max(state.snapshots), state.task.id, opt.config.final_check
    slot, measure = FINAL_SLOT, MEASURE_SLOT
    while state.best_role == "candidate" and opt._drawn(state.best_verdict):
        passed, got = 0, None
        while passed < n:
            stored = opt._stored.get((tid, last, slot))
            if stored is not None and stored.judged and not _same(state, stored):
                slot -= 1  # a check of a best already dropped with its round
                continue
            if stored is not None and stored.judged:
                got = _verdict(stored)
            else:
                got = await opt._check(state, state.best_source, "final", passed)
                step = check_step(state, last, slot, "final", got, state.best_source)
                opt.history.put(opt.run, [step])
            slot -= 1
            if not stands(got):
                break
            passed += 1
        state.final_check = {"draws": n, "passed": passed, "iteration": state.best_iteration}
        if passed == n:
            got = await _measured(opt, state, last, measure)
            measure -= 1
            if stands(got):
                state.best_verdict = got
                _snap(state, last)
                return
        mark_wrong(state, state.best_source, last, "final check")
        drop_best(state, last, got, "final check")
        _snap(state, last)


async def _measured(opt: Optimizer, state: TaskState, last: int, slot: int) -> Verdict | None:
    """The best timed once more beside the baseline, on a fresh draw (stored, or judged now)."""
    stored = opt._stored.get((state.task.id, last, slot))
    if stored is not None and stored.judged and _same(state, stored):
        return _verdict(stored)
    got = await opt.queue.judge_round([Candidate(state.task, source=state.best_source,
                                                 model="final", sample=0, suite=opt.suite)])  # fmt: skip
    v = got[0] if got else None
    step = check_step(state, last, slot, "final-measure", v, state.best_source)
    opt.history.put(opt.run, [step])
    return v
