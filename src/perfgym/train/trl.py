"""TRL adapter: `reward_funcs(...)` builds reward functions for `trl.GRPOTrainer` over perfgym.

TRL calls each function with keyword arguments only: `prompts`, `completions` (text, or chat
messages `[{"role": "assistant", "content": ...}]`), `completion_ids`, every dataset column but
`prompt` (one value per completion), `trainer_state`, `log_metric` and `log_extra`. It wants one
float or None per completion; None (an infrastructure error here) leaves that completion out.
TRL names each function by its `__name__` in `rewards/<name>/mean`. The functions pickle (TRL's
`AsyncGRPOTrainer` scores in a spawned process). TRL itself is not imported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from perfgym.errors import ConfigError
from perfgym.judge.config import JudgeConfig
from perfgym.rewards import Reward
from perfgym.tasks.suite import Suite
from perfgym.timing.estimators import geometric_mean
from perfgym.train.batch import BatchReward, Completion, Scored, ScoredBatch

__all__ = ["AsyncTrlReward", "RewardFunc", "TrlReward", "log_components", "reward_funcs"]

RewardFunc = Callable[..., Any]

#: Keywords TRL passes that are not dataset columns.
_TRL_KEYWORDS = frozenset(
    {"prompts", "completions", "completion_ids", "trainer_state", "log_metric", "log_extra",
     "environments"}
)  # fmt: skip
_STAGES = ("NX", "NC", "NR", "WO", "OK")


def reward_funcs(
    suite: Suite | str,
    reward: str | Reward = "rlpf",
    *,
    backend: str = "local",
    reward_params: Mapping[str, Any] | None = None,
    judge_config: JudgeConfig | None = None,
    url: str | None = None,
    token: str | None = None,
    address: str | None = None,
    task_id_column: str = "task_id",
    timeout_s: float = 900.0,
    retry_for_s: float = 30.0,
    asynchronous: bool = False,
    name: str | None = None,
    scorer: BatchReward | None = None,
    records: str | Path | None = None,
) -> list[RewardFunc]:
    """One reward function (in a list, as `GRPOTrainer(reward_funcs=...)` takes it) judging each
    batch in one call through `backend` ('local', 'service' at `url`, 'ray' at `address`).

    The dataset needs a `task_id_column` naming each row's task in `suite`. asynchronous: an
    `async def __call__` (GRPOTrainer awaits it on its own loop and waits for it; in
    AsyncGRPOTrainer's rollout worker generation goes on while it is awaited).
    name: TRL's name for it (default 'perfgym_<reward>'). scorer: a ready `BatchReward` to share
    (the others are then ignored). records: a path; every batch is appended there as perfgym's
    reward records (`perfgym.train.diagnostics`), with when it was judged. The function's
    `.scorer` is the `BatchReward`; close it when training is done. The function pickles as its
    recipe (a spawned process builds its own judge), unless `scorer` was given a ready judge.
    """
    if scorer is None:
        scorer = BatchReward(suite, reward, backend=backend, reward_params=reward_params,
                             judge_config=judge_config, url=url, token=token, address=address,
                             timeout_s=timeout_s, retry_for_s=retry_for_s)  # fmt: skip
    label = name or f"perfgym_{scorer.reward.name or 'reward'}"
    kind = AsyncTrlReward if asynchronous else TrlReward
    return [kind(scorer, task_id_column, label, records)]


class _PerfgymReward:
    """What TRL calls, as a class instance so that it pickles (a closure does not): the scorer
    travels as its recipe, the records file is reopened where it is used."""

    def __init__(
        self, scorer: BatchReward, task_id_column: str, label: str, records: str | Path | None
    ) -> None:
        self.scorer = scorer
        self.batch = _Batch(scorer, task_id_column, label)
        self.records = None if records is None else str(records)
        self._log: Any = None  # the open RewardRecords (a lock inside: not sent)
        self.__name__ = self.__qualname__ = label
        self.__doc__ = f"perfgym reward {scorer.reward!r} through the {scorer.backend} backend."

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_log": None}

    def __repr__(self) -> str:
        return f"<perfgym TRL reward {self.__name__}: {self.scorer.backend} backend>"

    def _finish(self, done: ScoredBatch, kwargs: Mapping[str, Any]) -> list[float | None]:
        if self.records is not None:
            from perfgym.train.diagnostics_records import RewardRecords, batch_rows

            if self._log is None:
                self._log = RewardRecords(self.records, reward=self.scorer.reward.name,
                                          suite=self.scorer.suite.name)  # fmt: skip
            self._log.append(batch_rows(done.scored, done.verdicts, done.judged))
        return self.batch.finish(done.scored, kwargs)


class TrlReward(_PerfgymReward):
    """A synchronous TRL reward function (GRPOTrainer calls it in its step)."""

    def __call__(self, **kwargs: Any) -> list[float | None]:
        items, columns = self.batch.inputs(kwargs)
        return self._finish(self.scorer.score_batch(items, columns), kwargs)


class AsyncTrlReward(_PerfgymReward):
    """An asynchronous TRL reward function: the judge runs in a thread, the caller's event loop
    keeps going (AsyncGRPOTrainer's rollout worker keeps generating)."""

    async def __call__(self, **kwargs: Any) -> list[float | None]:
        items, columns = self.batch.inputs(kwargs)
        return self._finish(await self.scorer.ascore_batch(items, columns), kwargs)


class _Batch:
    """Turns TRL's keyword call into the batch core's items and back into floats."""

    def __init__(self, scorer: BatchReward, task_id_column: str, label: str) -> None:
        self.scorer = scorer
        self.column = task_id_column
        self.label = label

    def inputs(
        self, kwargs: Mapping[str, Any]
    ) -> tuple[list[tuple[str, Completion]], dict[str, Sequence[Any]]]:
        completions = kwargs.get("completions")
        if completions is None:
            raise ConfigError("a TRL reward is called with completions=[...] (keyword)")
        ids = kwargs.get(self.column)
        if ids is None:
            have = sorted(k for k in kwargs if k not in _TRL_KEYWORDS)
            raise ConfigError(
                f"the dataset has no {self.column!r} column naming each row's task "
                f"(its columns: {', '.join(have) or 'none'}); add it, or pass task_id_column="
            )
        if len(ids) != len(completions):
            raise ConfigError(
                f"{len(ids)} {self.column!r} values for {len(completions)} completions"
            )
        columns: dict[str, Sequence[Any]] = {
            k: v
            for k, v in kwargs.items()
            if k not in _TRL_KEYWORDS and k != self.column and isinstance(v, list | tuple)
            and len(v) == len(completions)
        }  # fmt: skip
        # the completions are a column too: a reward that reads them (afterburner's format
        # term) gets them, the others ignore them (red team helper-82: afterburner raised
        # "needs the column 'completions'" through this adapter)
        columns["completions"] = list(completions)
        return [(str(t), c) for t, c in zip(ids, completions, strict=True)], columns

    def finish(self, scored: list[Scored], kwargs: Mapping[str, Any]) -> list[float | None]:
        log_components(scored, self.label, kwargs.get("log_metric"), kwargs.get("log_extra"))
        return [s.value for s in scored]


def log_components(
    scored: Sequence[Scored],
    label: str,
    log_metric: Callable[[str, float], None] | None,
    log_extra: Callable[[str, list[Any]], None] | None,
) -> None:
    """Batch means to `log_metric` (`<label>/stage_OK`, `/cgre`, `/speedup_geomean`,
    `/none_frac`, `/timing_ok_frac`) and one value per completion to `log_extra`."""
    n = len(scored)
    if not n:
        return
    if log_metric is not None:
        stages = Counter(s.stage for s in scored)
        for stage in _STAGES:
            log_metric(f"{label}/stage_{stage}", stages.get(stage, 0) / n)
        log_metric(f"{label}/none_frac", sum(s.value is None for s in scored) / n)
        timed = [s for s in scored if s.timing_status is not None]
        if timed:
            from perfgym.judge.verdict import TimingStatus

            ok = sum(s.timing_status == TimingStatus.OK for s in timed) / len(timed)
            log_metric(f"{label}/timing_ok_frac", ok)
        cgres = [c for s in scored if (c := s.cgre) is not None]
        if cgres:
            log_metric(f"{label}/cgre", sum(cgres) / len(cgres))
        speedups = [s.speedup for s in scored if s.speedup is not None and s.speedup > 0]
        if speedups:
            geo = geometric_mean(speedups, "speedup_geomean")
            log_metric(f"{label}/speedup_geomean", geo)
    if log_extra is not None:
        log_extra(f"{label}_stage", [s.stage for s in scored])
        log_extra(f"{label}_speedup", [s.speedup for s in scored])
        log_extra(f"{label}_cgre", [s.cgre for s in scored])
        log_extra(f"{label}_timing", [s.timing_status for s in scored])
        log_extra(f"{label}_reason", [s.reason for s in scored])
