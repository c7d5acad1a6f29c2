"""`BatchReward`: a trainer's batch of completions judged in one call and scored by a named reward.

A GRPO batch holds G completions per prompt. Judging them all in one `judge_many` call lets
the judge measure each task's baseline and reference once per batch and put every candidate of
a task in the same interleaved rounds, instead of one judge call (and one baseline measurement)
per completion. Infrastructure failures (sandbox unavailable, service down, a judge crash, a
batch over its time limit) become None with a logged warning: a trainer leaves them out,
where a 0.0 would teach the policy that a correct program was bad.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perfgym.errors import ConfigError
from perfgym.judge.backend import JudgeBackend, get_backend
from perfgym.judge.candidate import Candidate
from perfgym.judge.config import JudgeConfig
from perfgym.judge.decided_on import DecidedOn
from perfgym.judge.verdict import Stage, Verdict
from perfgym.registry import Kind, get
from perfgym.rewards import Reward, RewardOutput, get_reward
from perfgym.tasks.suite import Suite, load_suite

__all__ = [
    "BatchReward",
    "Completion",
    "Scored",
    "ScoredBatch",
    "completion_text",
    "training_judge_config",
]

log = logging.getLogger("perfgym.train")

#: A completion as trainers hand it over: text, or chat messages (TRL's conversational form,
#: `[{"role": "assistant", "content": ...}]`).
Completion = str | Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class Scored:
    """One completion's reward and what it was made of. `value` None: leave it out of the
    update (an infrastructure error, or a reward that could not score it; `reason` says)."""

    task_id: str
    value: float | None
    stage: str | None = None
    speedup: float | None = None  # baseline / candidate estimate (None when not both timed)
    timing_status: str | None = None  # the candidate's Timing.status (ok/degraded/unavailable)
    infra_error: bool = False
    reason: str = ""
    components: dict[str, float | bool | None] = field(default_factory=dict)

    @property
    def cgre(self) -> float | None:
        value = self.components.get("cgre")
        return None if value is None else float(value)


@dataclass(frozen=True)
class ScoredBatch:
    """A batch's `Scored`s, its verdicts (one per completion; none after an infrastructure
    failure) and when it was judged (wall clock, `time.time()`: began, ended)."""

    scored: list[Scored]
    verdicts: list[Verdict]
    judged: tuple[float, float] | None


def training_judge_config(**overrides: Any) -> JudgeConfig:
    """RLPF's training measurement: each variant's runtime measured once per batch (repeats=1;
    evaluation takes the median of 3), speed calls decided against the task's noise band, on
    the CPU clock (as perfgym's 'training' protocol: steadier than wall time on a busy box).
    Rewards are decided on hidden workloads (`perfgym.judge.hidden`), drawn fresh for every
    batch; `hidden_seed=N` fixes them (a reproducible run), `hidden_workloads=False` turns them
    off (the declared workloads, which a policy can learn)."""
    return JudgeConfig(**{"repeats": 1, "clock": "cpu", "hidden_workloads": True, **overrides})


def completion_text(completion: Completion) -> str:
    """The text of a completion: itself, or the contents of its assistant messages."""
    if isinstance(completion, str):
        return completion
    parts = []
    for message in completion:
        if not isinstance(message, Mapping) or "content" not in message:
            raise ConfigError(f"a chat completion holds messages with 'content'; got {message!r}")
        if message.get("role", "assistant") == "assistant":
            parts.append(_content_text(message["content"]))
    return "\n".join(parts)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    return "" if content is None else str(content)


class BatchReward:
    """Scores batches of `(task_id, completion)` for one suite with one reward through one
    backend: 'local' (a `Judge` in this process), 'service' (a `perfgym serve` at `url`) or
    'ray' (a cluster at `address`, or a local one). `judge` hands in a ready backend instead.

    timeout_s bounds one batch: past it the batch's rewards are None (the judge keeps going in
    its thread, and the next batch waits for it). The service backend also gives up retrying an
    unreachable service after `retry_for_s`.
    """

    def __init__(
        self,
        suite: Suite | str,
        reward: str | Reward = "rlpf",
        *,
        backend: str = "local",
        reward_params: Mapping[str, Any] | None = None,
        judge_config: JudgeConfig | None = None,
        url: str | None = None,
        token: str | None = None,
        address: str | None = None,
        timeout_s: float = 900.0,
        retry_for_s: float = 30.0,
        judge: JudgeBackend | None = None,
    ) -> None:
        self.suite = load_suite(suite) if isinstance(suite, str) else suite
        self._by_id = {t.id: t for t in self.suite.tasks}
        if isinstance(reward, Reward):
            if reward_params:
                raise ConfigError("reward_params go with a reward name, not a built Reward")
            self.reward = reward
        else:
            self.reward = get_reward(reward, **dict(reward_params or {}))
        if judge is None:
            get(Kind.BACKENDS, backend)  # an unknown name: one line listing the known ones
        self.backend = backend
        self.config = judge_config or training_judge_config()
        self.timeout_s = timeout_s
        self._judge = judge
        self.url, self.address, self.retry_for_s = url, address, retry_for_s
        self._token = token
        if backend == "service" and judge is None and not url:
            raise ConfigError("the service backend needs url='http://host:port'")
        if "pool" in self.reward.requires and (self.config.hidden_workloads or backend != "local"):
            # every correct program would get None: its durations are keyed by hidden inputs
            # drawn this batch, which no stored pool was measured on (red team helper-82)
            raise ConfigError(
                f"reward {self.reward.name!r} ranks each duration against a pool measured on "
                "the same inputs, and with hidden workloads (the training default) no stored "
                "pool is; judge on the declared workloads (judge_config=training_judge_config("
                "hidden_workloads=False), backend='local') or choose a reward without a pool"
            )
        #: What `pickle` sends instead of this object (its judge, threads and sandboxes stay):
        #: None when a ready `judge` was handed in, which cannot travel.
        self._recipe: dict[str, Any] | None = None if judge is not None else {
            "suite": suite, "reward": reward, "backend": backend,
            "reward_params": dict(reward_params) if reward_params else None,
            "judge_config": self.config, "url": url, "token": token, "address": address,
            "timeout_s": timeout_s, "retry_for_s": retry_for_s}  # fmt: skip
        #: The last batch's verdicts (empty after an infrastructure failure), for diagnostics.
        self.last_verdicts: list[Verdict] = []
        #: When the last batch's judging began and ended (wall clock, `time.time()`).
        self.last_judged: tuple[float, float] | None = None
        self._last_error = ""
        #: The service's own configuration judges on hidden workloads: True, False, or None
        #: (not asked yet, or not known: it did not answer the one time it was asked).
        self._service_hides: bool | None = None
        self._service_asked = False
        self._one_at_a_time = threading.Lock()
        self._runner = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="perfgym-batch")

    # -- the backend ----------------------------------------------------------------------------
    @property
    def judge(self) -> JudgeBackend:
        """The backend, built on first use (a service that is down is found at the first batch)."""
        if self._judge is None:
            self._judge = self._make_judge()
        return self._judge

    def _make_judge(self) -> JudgeBackend:
        return get_backend(self.backend, self.config, url=self.url, token=self._token,
                           address=self.address, retry_for_s=self.retry_for_s,
                           deadline_s=self.timeout_s)  # fmt: skip

    def close(self) -> None:
        """Waits for a batch still being judged (one that ran past timeout_s), then closes."""
        self._runner.shutdown(wait=True, cancel_futures=True)
        if self._judge is not None:
            self._judge.close()

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        """Pickled as its recipe, unopened: the process that unpickles it (a spawned rollout
        worker, as TRL's `AsyncGRPOTrainer` starts) builds its own judge on first use."""
        if self._recipe is None:
            raise ConfigError("a BatchReward given a ready judge= backend cannot be sent to "
                              "another process; build it with backend=... instead")  # fmt: skip
        return (_from_recipe, (self._recipe,))

    def __enter__(self) -> BatchReward:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- scoring --------------------------------------------------------------------------------
    def candidates(self, items: Sequence[tuple[str, Completion]]) -> list[Candidate]:
        """The judge's candidates; a task id the suite lacks is a ConfigError naming it."""
        out = []
        for sample, (task_id, completion) in enumerate(items):
            task = self._by_id.get(task_id)
            if task is None:
                known = ", ".join(sorted(self._by_id)[:8])
                raise ConfigError(
                    f"suite {self.suite.name!r} has no task {task_id!r} (it has {known}"
                    f"{', ...' if len(self._by_id) > 8 else ''})"
                )
            out.append(Candidate(task, completion_text(completion), model="policy",
                                 sample=sample, suite=self.suite.name))  # fmt: skip
        return out

    def score(
        self,
        items: Sequence[tuple[str, Completion]],
        columns: Mapping[str, Sequence[Any]] | None = None,
    ) -> list[Scored]:
        """One `Scored` per item, in order; the whole batch is judged in one call, and a
        completion repeated within the batch (same task, same text) is judged once: identical
        programs get identical rewards, not two noisy measurements. `columns`: per-item values
        for rewards that read columns (others ignore them)."""
        return self.score_batch(items, columns).scored

    def score_batch(
        self,
        items: Sequence[tuple[str, Completion]],
        columns: Mapping[str, Sequence[Any]] | None = None,
    ) -> ScoredBatch:
        """`score`, with the batch's verdicts and when it was judged (this call's own, whatever
        other calls run meanwhile)."""
        candidates = self.candidates(items)
        if not candidates:
            return ScoredBatch([], [], None)
        first: dict[tuple[str, str | None], int] = {}
        unique: list[Candidate] = []
        slot = []
        for c in candidates:
            key = (c.task.id, c.completion)
            if key not in first:
                first[key] = len(unique)
                unique.append(c)
            slot.append(first[key])
        self._refuse_a_visible_service()
        start, began = time.perf_counter(), time.time()
        judged = self._verdicts(unique)
        window = (began, time.time())
        if judged is not None and self.config.hidden_workloads:
            self._check_hidden(judged)
        verdicts = None
        if judged is not None:
            pairs = zip(slot, candidates, strict=True)
            verdicts = [judged[k].model_copy(update={"sample": c.sample}) for k, c in pairs]
        self.last_verdicts, self.last_judged = verdicts or [], window
        log.info("perfgym reward: judged %d completions (%d distinct) of %d tasks in %.2f s (%s)",
                 len(candidates), len(unique), len({c.task.id for c in candidates}),
                 time.perf_counter() - start, self.backend)  # fmt: skip
        if verdicts is None:
            return ScoredBatch([Scored(c.task.id, None, infra_error=True, reason=self._last_error)
                                for c in candidates], [], window)  # fmt: skip
        outputs = self.reward.score(verdicts, **{k: list(v) for k, v in (columns or {}).items()})
        scored = [_scored(v, o) for v, o in zip(verdicts, outputs, strict=True)]
        missing = [s for s in scored if s.value is None]
        if missing:
            log.warning("perfgym reward: %d of %d completions got no reward (%s)",
                        len(missing), len(scored), missing[0].reason or "no reason given")  # fmt: skip
        return ScoredBatch(scored, verdicts, window)

    async def ascore(
        self,
        items: Sequence[tuple[str, Completion]],
        columns: Mapping[str, Sequence[Any]] | None = None,
    ) -> list[Scored]:
        """`score` off the event loop (the judge blocks; the loop keeps serving)."""
        return (await self.ascore_batch(items, columns)).scored

    async def ascore_batch(
        self,
        items: Sequence[tuple[str, Completion]],
        columns: Mapping[str, Sequence[Any]] | None = None,
    ) -> ScoredBatch:
        """`score_batch` off the event loop."""
        return await asyncio.to_thread(self.score_batch, items, columns)

    def _check_hidden(self, verdicts: list[Verdict]) -> None:
        """Rewards are decided on hidden workloads: a backend that judged on the declared ones
        when none was asked for (a service started without --hidden) is refused, never scored
        silently on inputs a policy can learn."""
        asked = [v for v in verdicts if not v.infra_error and v.decided_on is DecidedOn.VISIBLE
                 and not v.why_visible]  # fmt: skip
        if asked:
            raise self._visible_error("judged")

    def _refuse_a_visible_service(self) -> None:
        """Before a first batch is sent: a service whose own configuration judges on the
        declared workloads is refused at once, not after judging a batch it cannot be paid on.
        Asked once, without retrying (a service that does not answer then is the batch's
        infrastructure failure to report, after the batch's own retries, not twice as late);
        `_check_hidden` still reads every batch's verdicts (a service restarted with another
        configuration)."""
        if self.backend != "service" or not self.config.hidden_workloads or not self.url:
            return
        if not self._service_asked:
            self._service_asked = True
            from perfgym.service.client import ServiceClient

            try:
                with ServiceClient(self.url, token=self._token, retry_for_s=0.0) as client:
                    self._service_hides = bool(client.config.hidden_workloads)
            except Exception as exc:  # noqa: BLE001 - not answering: the batch reports it
                log.info("perfgym reward: the service's configuration was not read (%s)", exc)
        if self._service_hides is False:
            raise self._visible_error("judges")

    def _visible_error(self, did: str) -> ConfigError:
        where = f" at {self.url}" if self.url else ""
        return ConfigError(
            f"the {self.backend} backend{where} {did} on the tasks' declared (visible) "
            "workloads, which a policy can learn; training rewards are decided on hidden "
            "ones: start the service with `perfgym serve --hidden`, or pass "
            "judge_config=training_judge_config(hidden_workloads=False) to accept that"
        )

    def _verdicts(self, candidates: list[Candidate]) -> list[Verdict] | None:
        """The backend's verdicts, or None after a logged warning when the infrastructure failed
        (an exception from the backend, or no answer within timeout_s)."""
        with self._one_at_a_time:
            future = self._runner.submit(self.judge.judge_many, candidates)
            try:
                verdicts = future.result(timeout=self.timeout_s)
            except concurrent.futures.TimeoutError:
                self._last_error = f"no verdicts within {self.timeout_s:g} s ({self.backend})"
            except Exception as exc:  # any backend failure is the infrastructure's, not the model's
                self._last_error = f"{self.backend} backend failed: {type(exc).__name__}: {exc}"
                if len(candidates) > 1:
                    return self._one_by_one(candidates)
            else:
                if len(verdicts) == len(candidates):
                    return list(verdicts)
                self._last_error = f"{len(verdicts)} verdicts for {len(candidates)} completions"
            log.warning("perfgym reward: %s; the batch's %d rewards are None",
                        self._last_error, len(candidates))  # fmt: skip
            return None

    def _one_by_one(self, candidates: list[Candidate]) -> list[Verdict] | None:
        """After `judge_many` raised: each completion judged alone, so that one completion that
        makes the judge raise loses only its own reward (an infrastructure error, None), never
        its batch's (red team round 4: one program's output dropped every twin's reward).
        None when every one of them fails (the backend itself is down)."""
        verdicts: list[Verdict] = []
        failed = 0
        for c in candidates:
            future = self._runner.submit(self.judge.judge_many, [c])
            try:
                verdicts.append(future.result(timeout=self.timeout_s)[0])
            except Exception as exc:  # noqa: BLE001 - this completion's verdict only
                failed += 1
                verdicts.append(Verdict(
                    task_id=c.task.id, model=c.model, sample=c.sample, stage=Stage.NR,
                    detail="SANDBOX_ERROR", infra_error=True, language=c.task.language.value,
                    reason=f"{self.backend} backend failed on this completion alone: "
                    f"{type(exc).__name__}: {exc}"[:500]))  # fmt: skip
        if failed == len(candidates):
            return None
        log.warning("perfgym reward: the batch's judging raised (%s); judged one by one, %d of "
                    "%d completions failed alone", self._last_error, failed, len(candidates))  # fmt: skip
        return verdicts


def _from_recipe(recipe: dict[str, Any]) -> BatchReward:
    return BatchReward(**recipe)


def _scored(verdict: Verdict, out: RewardOutput) -> Scored:
    cand, base = verdict.candidate, verdict.baseline
    speedup = None
    if (cand is not None and base is not None and cand.estimate_s and base.estimate_s
            and cand.estimate_s > 0):  # fmt: skip
        speedup = base.estimate_s / cand.estimate_s
    reason = out.reason or (verdict.reason if verdict.infra_error else "")
    return Scored(
        task_id=verdict.task_id,
        value=None if verdict.infra_error else out.value,
        stage=(out.stage or verdict.stage).value,
        speedup=speedup,
        timing_status=cand.status.value if cand is not None else None,
        infra_error=verdict.infra_error,
        reason=reason,
        components=dict(out.components),
    )
