"""`VerlScorer`: judges a batch of verl samples (task ids and completions) and scores it with a
perfgym reward, one fixed-key dict per sample (verl reads the keys off the first sample)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from perfgym.errors import ConfigError

if TYPE_CHECKING:
    from perfgym.judge.backend import JudgeBackend
    from perfgym.judge.candidate import Candidate
    from perfgym.judge.verdict import Verdict

#: Every sample's dict has exactly these keys, in this order (verl takes them off the first).
SCORE_KEYS = ("score", "stage", "correct", "speedup", "cgre", "timing_ok", "infra_error",
              "batch_size")  # fmt: skip

_STAGE_RANK = {"NX": 0.0, "NC": 1.0, "NR": 2.0, "WO": 3.0, "OK": 4.0}


@dataclass(frozen=True)
class Sample:
    """One verl sample as perfgym needs it."""

    task_id: str
    completion: str


@dataclass(frozen=True)
class ScorerConfig:
    """What `reward_kwargs` (or the environment) choose: the suite, the reward and its params,
    the judge backend, and the micro-batch window."""

    suite: str
    reward: str = "rlpf"
    backend: str = "local"
    url: str | None = None
    token: str | None = None
    #: backend 'ray': the cluster's address (None: the cluster this process is connected to,
    #: as inside verl's own Ray workers, or a local one)
    address: str | None = None
    repeats: int = 1
    retry_for_s: float = 30.0
    window_s: float = 0.05
    max_batch: int = 256
    infra_score: float = 0.0
    records: str | None = None
    reward_params: tuple[tuple[str, Any], ...] = field(default_factory=tuple)
    #: the secret seed of the hidden workloads rewards are decided on; None: fresh per batch
    hidden_seed: int | None = None
    #: one micro-batch's bound: past it the batch's samples are infrastructure errors
    timeout_s: float = 900.0

    @staticmethod
    def from_kwargs(kwargs: Mapping[str, Any], default_suite: str | None) -> ScorerConfig:
        known = {"suite", "reward", "backend", "url", "token", "address", "repeats", "retry_for_s",
                 "window_s", "max_batch", "infra_score", "records", "reward_params",
                 "hidden_seed", "timeout_s"}  # fmt: skip
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise ConfigError(f"perfgym verl reward: unknown reward_kwargs {', '.join(unknown)}; "
                              f"known: {', '.join(sorted(known))}")  # fmt: skip
        suite = kwargs.get("suite") or default_suite
        if not suite:
            raise ConfigError("perfgym verl reward: no suite: pass reward_kwargs.suite or give "
                              "each sample a data_source naming the suite")  # fmt: skip
        params = kwargs.get("reward_params") or {}
        args = {k: kwargs[k] for k in known - {"suite", "reward_params"} if k in kwargs}
        return ScorerConfig(suite=str(suite), reward_params=tuple(sorted(dict(params).items())),
                            **args)  # fmt: skip


def _nan(x: float | None) -> float:
    return math.nan if x is None else float(x)


def infra_result(config: ScorerConfig, batch_size: int) -> dict[str, float]:
    """No reward (an infrastructure failure, or a verdict the reward cannot score): verl needs a
    number, so it is `infra_score` (0.0 unless set), flagged infra_error=1 to mask or drop."""
    return {"score": config.infra_score, "stage": math.nan, "correct": math.nan,
            "speedup": math.nan, "cgre": math.nan, "timing_ok": math.nan, "infra_error": 1.0,
            "batch_size": float(batch_size)}  # fmt: skip


class _Keeping:
    """A judge backend that keeps its last verdicts (their timing CIs go to the records)."""

    def __init__(self, inner: JudgeBackend) -> None:
        self.inner = inner
        self.last: list[Verdict] = []

    def judge_many(self, candidates: Sequence[Candidate], progress: Any = None) -> list[Verdict]:
        self.last = []
        self.last = list(self.inner.judge_many(candidates, progress))
        return self.last

    def close(self) -> None:
        self.inner.close()


def _backend(config: ScorerConfig) -> JudgeBackend:
    from perfgym.judge.backend import get_backend
    from perfgym.train.batch import training_judge_config

    # a service that is down answers within retry_for_s (infra_error), never a hang
    return get_backend(config.backend, training_judge_config(repeats=config.repeats,
                                                             hidden_seed=config.hidden_seed),
                       url=config.url, token=config.token, address=config.address,
                       retry_for_s=config.retry_for_s)  # fmt: skip


class VerlScorer:
    """A `BatchReward` (suite, reward, backend) opened once and reused for every batch; with
    `records`, every batch is appended to perfgym's reward records (for diagnostics)."""

    def __init__(self, config: ScorerConfig) -> None:
        from perfgym.niceness import undo_ray_niceness
        from perfgym.train.batch import BatchReward
        from perfgym.train.diagnostics_records import RewardRecords

        # verl's reward workers are Ray actors, started at nice 15 unless Ray was told otherwise
        self.niceness_note = undo_ray_niceness()
        self.config = config
        self.judge = _Keeping(_backend(config))
        self.batch = BatchReward(config.suite, config.reward, backend=config.backend,
                                 reward_params=dict(config.reward_params), judge=self.judge,
                                 timeout_s=config.timeout_s)  # fmt: skip
        self.suite = self.batch.suite
        self.records = RewardRecords(config.records, reward=config.reward,
                                     suite=config.suite) if config.records else None  # fmt: skip

    def close(self) -> None:
        self.batch.close()

    def check(self, sample: Sample) -> None:
        """A task id the suite lacks is a ConfigError naming it (before it joins a batch)."""
        self.batch.candidates([(sample.task_id, sample.completion)])

    def score(self, samples: Sequence[Sample]) -> list[dict[str, float]]:
        """One fixed-key dict per sample, the batch judged in one call."""
        from perfgym.judge.verdict import Stage, TimingStatus

        n = len(samples)
        items = [(s.task_id, s.completion) for s in samples]
        scored = self.batch.score(items, {"completions": [s.completion for s in samples]})
        results = []
        for one in scored:
            if one.value is None:
                results.append(infra_result(self.config, n))
                continue
            results.append({
                "score": float(one.value),
                "stage": _STAGE_RANK.get(one.stage or "", math.nan),
                "correct": 1.0 if one.stage == Stage.OK else 0.0,
                "speedup": _nan(one.speedup),
                "cgre": _nan(one.cgre),
                "timing_ok": 1.0 if one.timing_status == TimingStatus.OK else 0.0,
                "infra_error": 0.0,
                "batch_size": float(n),
            })  # fmt: skip
        if self.records is not None:
            self._record(scored)
        return results

    def _record(self, scored: Sequence[Any]) -> None:
        from perfgym.train.diagnostics_records import batch_rows

        # the batch's verdicts one per completion (a repeated completion is judged once and
        # its verdict shared), not the judge's distinct ones
        assert self.records is not None
        self.records.append(batch_rows(scored, self.batch.last_verdicts, self.batch.last_judged))
