"""One task's search: what to ask for next (`propose`) and what a judged round changes
(`decide`, `apply`). Pure functions of the state and the verdicts: no model, judge or store,
so a resumed run that replays stored steps reaches the same state.

The strategy (`OptimizeConfig.strategy`, a name on the registry; `optimize/strategies.py`)
decides what a round proposes and what it leaves for the next. greedy (Afterburner's IOF): one
proposal per round revising the best correct program with its measured feedback; after a
failed proposal, one repair of it (the next round goes back to the best). best-of-n: n
independent proposals of the best per round. evolve: n children per round, parents drawn from
a `ProgramDatabase`'s islands.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from perfgym.judge.same_source import normalised
from perfgym.judge.verdict import Stage, Verdict
from perfgym.optimize.config import OptimizeConfig
from perfgym.optimize.database import ProgramDatabase
from perfgym.optimize.feedback import BASELINE, Feedback, of_verdict
from perfgym.optimize.objective import Gain, gain, value_of
from perfgym.optimize.prompting import Purpose
from perfgym.registry import Kind, get
from perfgym.tasks.task import Task
from perfgym.timing.decision import SpeedOutcome

if TYPE_CHECKING:
    from perfgym.optimize.strategies import Strategy


@dataclass(frozen=True)
class Request:
    """One proposal to ask for: `source`/`feedback` are the program revised (None: generate)."""

    slot: int
    purpose: Purpose
    parent: str  # 'baseline', 'best', 'failed', 'island-2', or '' (generate)
    source: str | None
    feedback: Feedback | None
    island: int = 0


@dataclass(frozen=True)
class Decision:
    accepted: bool
    why: str
    ratio: float | None = None
    ci: tuple[float, float] | None = None


@dataclass
class TaskState:
    """Where one task's search stands."""

    task: Task
    config: OptimizeConfig
    best_source: str | None = None
    best_role: str = ""  # 'baseline' | 'candidate' | '' (none yet)
    best_verdict: Verdict | None = None  # its latest measurement
    best_iteration: int = 0
    failed: tuple[str, Feedback] | None = None  # greedy: the last proposal, to be repaired
    rounds_without_gain: int = 0
    stopped: str = ""
    snapshots: dict[int, Verdict | None] = field(default_factory=dict)
    proposals_ok: dict[int, tuple[int, int]] = field(default_factory=dict)
    accepted_at: list[int] = field(default_factory=list)
    #: The bests before the current one, latest last: (source, role, verdict, iteration). A best
    #: found wrong on a later round's fresh hidden inputs is dropped for the one before it.
    earlier: list[tuple[str | None, str, Verdict | None, int]] = field(default_factory=list)
    #: Bests dropped: the round it was found wrong, the round it was accepted, and why.
    dropped: list[dict[str, object]] = field(default_factory=list)
    #: The final check of the best the search ended with (`OptimizeConfig.final_check`): fresh
    #: draws asked for, how many the last best checked passed, and the round it was accepted.
    final_check: dict[str, int] | None = None
    #: Programs (normalised-source keys) found wrong on a fresh draw after passing one: a failed
    #: confirmation, a best re-measured wrong, a failed final check. Never accepted again, so a
    #: best dropped for it cannot come back (a resumed run with more rounds brought a dropped
    #: best back as the result in 3 of 4 runs: red team helper-80). key -> where it was found.
    wrong: dict[str, str] = field(default_factory=dict)
    db: ProgramDatabase | None = None
    strategy: Strategy = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.config.start == "baseline":
            self.best_source, self.best_role = self.task.baseline.source, "baseline"
        self.strategy = get(Kind.STRATEGIES, self.config.strategy)()
        self.strategy.start(self)

    @property
    def best_feedback(self) -> Feedback:
        if self.best_verdict is not None and self.best_verdict.correct:
            return of_verdict(self.best_verdict)
        return BASELINE


def key_of(source: str, task: Task) -> str:
    return hashlib.sha256(normalised(source, task.language).encode()).hexdigest()[:16]


def propose(state: TaskState, iteration: int) -> list[Request]:
    """The round's requests (iteration 0 with start=generate: the first generated program)."""
    return state.strategy.propose(state, iteration)


def _best_timing(state: TaskState, v: Verdict, best_fresh: Verdict | None):  # type: ignore[no-untyped-def]
    if state.best_role == "baseline":
        return v.baseline
    return best_fresh.candidate if best_fresh is not None else None


def decide(state: TaskState, verdicts: list[Verdict | None], best_fresh: Verdict | None,
           errors: list[str]) -> list[Decision]:  # fmt: skip
    """Accept at most one proposal of the round: the first correct program, or the one most
    significantly better than the best on the objective. Never one within noise of it."""
    cfg, obj = state.config, state.config.objective
    if best_fresh is not None and not stands(best_fresh):
        # The best itself was wrong on this round's fresh inputs, or hid time from the clock
        # there: it is dropped (`apply`), and no proposal is measured against it (nor against
        # a best not measured this round).
        why = f"the best {fell(best_fresh)} on this round's inputs and is dropped"
        return [Decision(False, "model error: " + err if err else "no answer") if v is None
                else Decision(False, why if v.correct else _failure(v))
                for v, err in zip(verdicts, errors, strict=True)]  # fmt: skip
    gains: list[Gain | None] = []
    out: list[Decision | None] = []
    best_key = key_of(state.best_source, state.task) if state.best_source else None
    for v, err in zip(verdicts, errors, strict=True):
        if v is None:
            out.append(Decision(False, f"model error: {err}" if err else "no answer"))
            gains.append(None)
            continue
        if not v.correct:
            out.append(Decision(False, _failure(v)))
            gains.append(None)
            continue
        if hid := v.hid_time:
            # Work the clock did not see (in its build, outside its timer, by other processes)
            # is paid like a hider by every reward: never a best (red team helper-98: tables
            # moved into a C++ build's constexpr were accepted at 0.67x of the honest best).
            # Nor later, under any text that normalises alike: proposed again, the same
            # program redrew `build_work`'s noisy bound until it passed (helper-102: refused
            # twice, accepted at 0.56x in round 4).
            out.append(Decision(False, f"time hidden from the clock ({', '.join(hid)})"))
            gains.append(None)
            continue
        if v.source is not None and key_of(v.source, state.task) in state.wrong:
            earlier = state.wrong[key_of(v.source, state.task)]
            out.append(Decision(False, f"refused earlier: it {earlier}" if earlier.startswith(HID)
                                else "found wrong on an earlier fresh draw of the hidden inputs "
                                f"({earlier})"))  # fmt: skip
            gains.append(None)
            continue
        if state.best_source is None:
            out.append(None)  # a first correct program: ranked below
            gains.append(
                Gain(True, SpeedOutcome.FASTER, value_of(v.candidate, obj), None, "first correct")
            )
            continue
        same = v.source is not None and key_of(v.source, state.task) == best_key
        g = gain(v.candidate, _best_timing(state, v, best_fresh), obj, same_source=same,
                 alpha=cfg.alpha)  # fmt: skip
        gains.append(g)
        if not g.better:
            what = "same program as the best" if g.how == "same-source" else (
                f"not significantly better ({g.outcome}, {g.how})")  # fmt: skip
            out.append(Decision(False, what, g.ratio, g.ci))
        else:
            out.append(None)
    winners = [i for i, d in enumerate(out) if d is None]
    pick = min(winners, key=lambda i: _rank(gains[i]), default=None)
    final = []
    for i, d in enumerate(out):
        if d is not None:
            final.append(d)
            continue
        won = gains[i]
        assert won is not None
        g = won
        if i == pick:
            why = "first correct program" if g.how == "first correct" else (
                f"significantly better ({g.how})")  # fmt: skip
            seen = verdicts[i]
            if seen is not None and seen.why_visible:  # hidden inputs asked for, none to draw
                why += f"; decided on visible inputs: {seen.why_visible}"
            ratio = None if g.how == "first correct" else g.ratio
            final.append(Decision(True, why, ratio, g.ci))
        else:
            final.append(Decision(False, "better, but another proposal of the round was best",
                                  g.ratio, g.ci))  # fmt: skip
    return final


def _failure(v: Verdict) -> str:
    return f"{v.stage.value} ({v.detail})" if v.detail else v.stage.value


#: How a verdict that hid time from the clock is described (and recognised in `state.wrong`).
HID = "hid time from the clock"


def stands(v: Verdict | None) -> bool:
    """Whether `v` can stand for a best: correct, and its time its own (`Verdict.hid_time`
    empty). A best re-measured, confirmed or finally checked with time it hid falls as a
    wrong one does (red team helper-101: a best flagged `build_work` in its final measurement
    stayed the best)."""
    return v is not None and v.correct and not v.hid_time


def fell(v: Verdict) -> str:
    """Why `v` cannot stand: 'was wrong (...)' or 'hid time from the clock (...)'."""
    return f"was wrong ({_failure(v)})" if not v.correct else f"{HID} ({', '.join(v.hid_time)})"


def _rank(g: Gain | None) -> float:
    return float("inf") if g is None or g.ratio is None else g.ratio


def apply(state: TaskState, iteration: int, requests: list[Request],
          verdicts: list[Verdict | None], decisions: list[Decision],
          best_fresh: Verdict | None) -> None:  # fmt: skip
    """Move the state past a judged round. A best re-measured wrong (on the round's fresh
    hidden inputs) is dropped for the best before it (in the end the baseline, or none)."""
    if best_fresh is not None and stands(best_fresh):
        state.best_verdict = best_fresh
    elif best_fresh is not None:
        how = "re-measured as the best"
        mark_wrong(state, state.best_source, iteration,
                   how if not best_fresh.correct else f"{fell(best_fresh)} {how}")  # fmt: skip
        drop_best(state, iteration, best_fresh)
    for v in verdicts:  # refused for hidden time: for good (see `decide`)
        if v is not None and v.correct and v.hid_time and v.source is not None:
            state.wrong.setdefault(key_of(v.source, state.task), f"{fell(v)} when proposed")
    accepted = next((i for i, d in enumerate(decisions) if d.accepted), None)
    ok = sum(1 for v in verdicts if v is not None and v.correct)
    state.proposals_ok[iteration] = (ok, len(requests))
    if accepted is not None:
        v = verdicts[accepted]
        assert v is not None and v.source is not None
        state.earlier.append((state.best_source, state.best_role, state.best_verdict,
                              state.best_iteration))  # fmt: skip
        state.best_source, state.best_role, state.best_verdict = v.source, "candidate", v
        state.best_iteration = iteration
        state.accepted_at.append(iteration)
        state.rounds_without_gain = 0
    elif iteration > 0 or state.config.start == "baseline":
        state.rounds_without_gain += 1
    state.strategy.after_round(state, iteration, requests, verdicts)
    state.snapshots[iteration] = snapshot(state, verdicts)


def mark_wrong(state: TaskState, source: str | None, iteration: int, how: str) -> None:
    """`source` was found wrong on a fresh draw (`how`, in round `iteration`): never again."""
    if source is not None:
        state.wrong.setdefault(key_of(source, state.task), f"{how}, round {iteration}")


def drop_best(state: TaskState, iteration: int, wrong: Verdict | None, by: str = "round") -> None:
    """The best was wrong on a fresh draw of the hidden inputs (`by` a round's re-measurement or
    the final check; None: the draw gave no verdict): back to the best before it."""
    state.dropped.append({"iteration": iteration, "accepted_at": state.best_iteration, "by": by,
                          "why": "no verdict" if wrong is None else _failure(wrong)})  # fmt: skip
    if state.earlier:
        src, role, verdict, at = state.earlier.pop()
    else:  # (a best always has the state before it below; kept for a hand-made state)
        src, role, verdict, at = (state.task.baseline.source, "baseline", None, 0)
    state.best_source, state.best_role, state.best_verdict, state.best_iteration = (
        src, role, verdict, at)  # fmt: skip


def snapshot(state: TaskState, verdicts: list[Verdict | None]) -> Verdict | None:
    """The best program's verdict after a round (the baseline's own timing when it is still
    the best), for the per-iteration metrics; None when nothing was measured."""
    if state.best_role == "candidate":
        return state.best_verdict
    measured = next((v for v in verdicts if v is not None and v.baseline is not None), None)
    if state.best_role == "baseline":
        if measured is None:
            return None
        return measured.model_copy(update={
            "stage": Stage.OK, "detail": "", "reason": "", "candidate": measured.baseline,
            "source": state.task.baseline.source, "same_source": ["baseline"], "tests": []})  # fmt: skip
    return next((v for v in verdicts if v is not None), None)
