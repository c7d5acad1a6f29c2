"""`Optimizer`: every task's search at once, the model's calls bounded by a semaphore, each
round's proposals judged in one batch, every step written to the history as it is produced.

A rerun of the same run (`resume=True`) reads the history first: a stored answer is not asked
for again, a stored verdict and decision are not judged again, so the run continues from where
it stopped and reaches the same state.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from perfgym.errors import ConfigError, PerfgymError
from perfgym.judge.candidate import Candidate
from perfgym.judge.verdict import Verdict
from perfgym.llm.protocol import ChatModel, Completion
from perfgym.optimize.config import OptimizeConfig
from perfgym.optimize.final_check import (
    CONFIRM_SLOT,
    check_step,
    final_check,
    replay_checks,
)
from perfgym.optimize.judging import JudgeQueue
from perfgym.optimize.prompting import Prompt, prompt_for
from perfgym.optimize.search import (
    Decision,
    Request,
    TaskState,
    apply,
    decide,
    fell,
    mark_wrong,
    propose,
    stands,
)
from perfgym.store.optimize_history import OptimizeHistory, Step
from perfgym.tasks.task import Task

#: Slot of the step holding the best program's fresh measurement of a round (not a proposal).
BEST_SLOT = -1

Progress = Callable[[str, int, int], None]  # (task id, rounds done of the task, rounds)


class FatalModelError(PerfgymError):
    """The model cannot be used at all (unreachable, refused key, unknown model): stop the run."""


def is_fatal(exc: BaseException) -> bool:
    """Errors that no retry or next call will fix: the endpoint, the key, the model name, a
    request the server rejects, an empty answer (the client's own rule: it names its option).
    Retries spent on 429/5xx/timeouts are the call's failure only: the step records it."""
    from perfgym.llm import errors

    fatal = (FatalModelError, errors.EndpointUnreachable, errors.AuthError,
             errors.UnknownModel, errors.RequestRejected, errors.EmptyAnswer)  # fmt: skip
    return isinstance(exc, fatal)


@dataclass
class Budget:
    tokens: int = 0
    cost_usd: float = 0.0
    started: float = field(default_factory=time.monotonic)

    def exhausted(self, cfg: OptimizeConfig) -> str:
        if cfg.max_tokens is not None and self.tokens >= cfg.max_tokens:
            return f"token budget ({self.tokens} >= {cfg.max_tokens})"
        if cfg.max_usd is not None and self.cost_usd >= cfg.max_usd:
            return f"dollar budget (${self.cost_usd:.4f} >= ${cfg.max_usd})"
        if cfg.max_wall_s is not None and time.monotonic() - self.started >= cfg.max_wall_s:
            return f"wall-time budget ({cfg.max_wall_s:g} s)"
        return ""


@dataclass
class Optimizer:
    model: ChatModel
    queue: JudgeQueue
    history: OptimizeHistory
    run: str
    config: OptimizeConfig
    suite: str = ""
    progress: Progress | None = None
    overhead_s: float = 0.0  # the loop's own work (prompts, decisions, history writes)
    calls: int = 0  # model calls made (not replayed from the history)
    replayed_rounds: int = 0  # rounds read back from the history (--resume): nothing asked or run
    replayed_steps: int = 0  # their proposals
    budget: Budget = field(default_factory=Budget)
    states: dict[str, TaskState] = field(default_factory=dict)
    _stored: dict[tuple[str, int, int], Step] = field(default_factory=dict)
    _asked: dict[tuple[str, str], int] = field(default_factory=dict)  # (task, prompt) -> samples
    _gate: asyncio.Semaphore | None = None

    async def optimize(self, tasks: list[Task]) -> dict[str, TaskState]:
        """Run every task's rounds; returns each task's final state."""
        self._stored = {(s.task_id, s.iteration, s.slot): s for s in self.history.steps(self.run)}
        for s in self._stored.values():
            self.budget.tokens += s.tokens
            self.budget.cost_usd += s.cost_usd
        self._gate = asyncio.Semaphore(self.config.concurrency)
        self.states = {t.id: TaskState(t, self.config) for t in tasks}
        await asyncio.gather(*(self._task(self.states[t.id]) for t in tasks))
        return self.states

    # -- one task -------------------------------------------------------------------------------
    async def _task(self, state: TaskState) -> None:
        first = 0 if self.config.start == "generate" else 1
        for iteration in range(first, self.config.iterations + 1):
            why = self._stop_reason(state)
            if why:
                state.stopped = why
                break
            await self._round(state, iteration)
            if self.progress is not None:
                self.progress(state.task.id, iteration, self.config.iterations)
        await final_check(self, state)

    def _stop_reason(self, state: TaskState) -> str:
        p = self.config.patience
        if p is not None and state.rounds_without_gain >= p:
            return f"patience: {p} round(s) without a significant gain"
        return self.budget.exhausted(self.config)

    async def _round(self, state: TaskState, iteration: int) -> None:
        t0 = time.perf_counter()
        requests = propose(state, iteration)
        prompts = [self._prompt(state, r) for r in requests]
        key = state.task.id
        stored = [self._stored.get((key, iteration, r.slot)) for r in requests]
        best_stored = self._stored.get((key, iteration, BEST_SLOT))
        self.overhead_s += time.perf_counter() - t0
        if all(s is not None and s.judged for s in stored):
            self._replay(state, iteration, requests, [s for s in stored if s], best_stored)
            replay_checks(self, state, iteration)
            self.replayed_rounds += 1
            self.replayed_steps += len(stored)
            return
        steps = await asyncio.gather(*(self._ask(state, iteration, r, p, s) for r, p, s
                                       in zip(requests, prompts, stored, strict=True)))  # fmt: skip
        t0 = time.perf_counter()
        candidates = [Candidate(state.task, s.answer, model=self.model.name,
                                sample=iteration * self.config.per_round + s.slot, suite=self.suite)
                      for s in steps if s.answer is not None]  # fmt: skip
        # the best is measured again every round, proposals or none: a model that answers
        # nothing (503s) must not spare it its fresh draws (red team helper-80)
        with_best = state.best_role == "candidate" and state.best_source is not None
        if with_best:
            assert state.best_source is not None
            candidates.append(Candidate(state.task, source=state.best_source, model="best",
                                        sample=state.best_iteration, suite=self.suite))  # fmt: skip
        self.overhead_s += time.perf_counter() - t0
        judged = await self.queue.judge_round(candidates)
        t0 = time.perf_counter()
        best_fresh = judged.pop() if with_best else None
        it = iter(judged)
        verdicts: list[Verdict | None] = [next(it) if s.answer is not None else None for s in steps]
        decisions = decide(state, verdicts, best_fresh, [s.model_error for s in steps])
        self.overhead_s += time.perf_counter() - t0
        confirmations = await self._confirmed(state, iteration, verdicts, decisions)
        t0 = time.perf_counter()
        for s, v, d in zip(steps, verdicts, decisions, strict=True):
            _fill(s, v, d)
        out = list(steps) + confirmations
        if best_fresh is not None:
            out.append(Step(key, iteration, BEST_SLOT, "best", verdict=best_fresh.model_dump(
                mode="json"), stage=best_fresh.stage.value, accepted=False, why="re-measured"))  # fmt: skip
        self.history.put(self.run, out)
        apply(state, iteration, requests, verdicts, decisions, best_fresh)
        self.overhead_s += time.perf_counter() - t0

    async def _confirmed(self, state: TaskState, iteration: int, verdicts: list[Verdict | None],
                         decisions: list[Decision]) -> list[Step]:  # fmt: skip
        """Judge the proposal `decide` accepts again on `config.confirm` fresh draws of the
        task's hidden inputs, one judge call each (each call draws its own); the first draw it
        fails turns the decision into a refusal, in place. The confirmations, as steps of
        their own (slots CONFIRM_SLOT, CONFIRM_SLOT - 1, ...). Nothing to confirm where the
        proposal was decided on visible inputs, or the judge's hidden seed is fixed (every
        draw would be the same)."""
        at = next((i for i, d in enumerate(decisions) if d.accepted), None)
        v = verdicts[at] if at is not None else None
        if at is None or v is None or not self._drawn(v):
            return []
        out: list[Step] = []
        for j in range(self.config.confirm):
            got = await self._check(state, v.source, "confirm", j)
            ok = stands(got)
            out.append(check_step(state, iteration, CONFIRM_SLOT - j, "confirm", got, v.source))
            if not ok:
                mark_wrong(state, v.source, iteration, "confirmation" if got is None
                           or not got.correct else f"{fell(got)} in a confirmation")  # fmt: skip
                d = decisions[at]
                seen = "no verdict" if got is None else got.stage.value
                decisions[at] = Decision(False, f"correct on the round's hidden inputs but not on "
                                         f"fresh draw {j + 1} of {self.config.confirm} ({seen})",
                                         d.ratio, d.ci)  # fmt: skip
                break
        return out

    def _drawn(self, v: Verdict | None) -> bool:
        """Whether `v` was decided on hidden inputs that a fresh draw can change (not on visible
        inputs, nor with the judge's hidden seed fixed: every draw would be the same)."""
        judge_config = getattr(getattr(self.queue, "judge", None), "config", None)
        fixed_seed = getattr(judge_config, "hidden_seed", None) is not None
        return v is not None and v.source is not None and v.hidden_workloads > 0 and not fixed_seed

    async def _check(self, state: TaskState, source: str | None, model: str,
                     sample: int) -> Verdict | None:  # fmt: skip
        """`source` judged for correctness alone on a fresh draw (None: no verdict came)."""
        got = await self.queue.check_round([Candidate(state.task, source=source, model=model,
                                                      sample=sample, suite=self.suite)])  # fmt: skip
        return got[0] if got else None

    def _replay(self, state: TaskState, iteration: int, requests: list[Request],
                steps: list[Step], best: Step | None) -> None:  # fmt: skip
        verdicts = [None if s.verdict is None else Verdict.model_validate(s.verdict) for s in steps]
        decisions = [Decision(bool(s.accepted), s.why, s.ratio,
                              None if s.ci_low is None or s.ci_high is None else (s.ci_low, s.ci_high))
                     for s in steps]  # fmt: skip
        fresh = (
            None if best is None or best.verdict is None else Verdict.model_validate(best.verdict)
        )
        apply(state, iteration, requests, verdicts, decisions, fresh)

    def _prompt(self, state: TaskState, r: Request) -> tuple[Prompt, int]:
        """The request's prompt and its sample index: how many times this task already asked
        this very prompt in the run (a round's n samples, or a round repeating an earlier one's
        prompt when nothing changed), so equal prompts are told apart and replay in order."""
        prompt = prompt_for(r.purpose, state.task, self.config.objective, r.source, r.feedback)
        text = json.dumps(prompt.messages, sort_keys=True)
        digest = (state.task.id, hashlib.sha256(text.encode()).hexdigest())
        sample = self._asked.get(digest, 0)
        self._asked[digest] = sample + 1
        return prompt, sample

    async def _ask(self, state: TaskState, iteration: int, r: Request,
                   asked: tuple[Prompt, int], stored: Step | None) -> Step:  # fmt: skip
        """The proposal's answer: stored, or asked of the model now (and written at once)."""
        if stored is not None and (stored.answer is not None or stored.model_error):
            return stored
        t0 = time.perf_counter()
        prompt, sample = asked
        step = Step(state.task.id, iteration, r.slot, r.purpose, parent=r.parent,
                    template_id=prompt.template_id, template_hash=prompt.template_hash,
                    extra={"sample_index": sample})  # fmt: skip
        self.overhead_s += time.perf_counter() - t0
        assert self._gate is not None
        async with self._gate:
            try:
                c: Completion = await self.model.complete(
                    prompt.messages, sample_index=sample, purpose=r.purpose
                )
            except PerfgymError as exc:
                if is_fatal(exc):
                    raise
                step.model_error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                c = None  # type: ignore[assignment]
        t0 = time.perf_counter()
        if c is not None:
            self.calls += 0 if c.replayed else 1
            step.answer, step.call_key = c.text, c.call_key
            step.tokens = c.usage.prompt_tokens + c.usage.completion_tokens
            step.cost_usd = c.cost_usd
            step.extra = {**step.extra, "finish_reason": c.finish_reason, "truncated": c.truncated,
                          "retries": c.retries, "replayed": c.replayed}  # fmt: skip
            self.budget.tokens += step.tokens
            self.budget.cost_usd += step.cost_usd
        self.history.put(self.run, [step])
        self.overhead_s += time.perf_counter() - t0
        return step


def _fill(step: Step, v: Verdict | None, d: Decision) -> None:
    step.verdict = None if v is None else v.model_dump(mode="json")
    step.stage = "" if v is None else v.stage.value
    step.accepted, step.why, step.ratio = d.accepted, d.why, d.ratio
    step.ci_low, step.ci_high = d.ci if d.ci is not None else (None, None)


def check_resumable(history: OptimizeHistory, run: str, config: Mapping[str, object],
                    resume: bool) -> None:  # fmt: skip
    """Refuse to mix runs: a new run whose name is taken, or a resume of a run never started."""
    known = history.run_config(run)
    if known is not None and not resume:
        raise ConfigError(f"run {run} already has a history in {history.path}; add --resume to "
                          "continue it (or --store another file)")  # fmt: skip
    if known is None and resume:
        raise ConfigError(f"--resume: no run {run} in {history.path} (same suite, tasks, model "
                          "and settings as the run to continue?)")  # fmt: skip
