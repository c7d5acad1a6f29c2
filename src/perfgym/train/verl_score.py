"""`VerlScorer`: judges a batch of verl samples (task ids and completions) and scores it with a
perfgym reward, one fixed-key dict per sample (verl reads the keys off the first sample)."""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perfgym.errors import ConfigError

log = logging.getLogger("perfgym.train.verl")

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
    repeats: int = 1
    retry_for_s: float = 30.0
    window_s: float = 0.05
    max_batch: int = 256
    infra_score: float = 0.0
    reward_params: tuple[tuple[str, Any], ...] = field(default_factory=tuple)

    @staticmethod
    def from_kwargs(kwargs: Mapping[str, Any], default_suite: str | None) -> ScorerConfig:
        known = {"suite", "reward", "backend", "url", "token", "repeats", "retry_for_s", "window_s",
                 "max_batch", "infra_score", "reward_params"}  # fmt: skip
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
    """An infrastructure failure: flagged (infra_error=1), scored `infra_score`, never judged."""
    return {"score": config.infra_score, "stage": math.nan, "correct": math.nan,
            "speedup": math.nan, "cgre": math.nan, "timing_ok": math.nan, "infra_error": 1.0,
            "batch_size": float(batch_size)}  # fmt: skip


class VerlScorer:
    """A suite, a reward and a judge backend, opened once and reused for every batch."""

    def __init__(self, config: ScorerConfig) -> None:
        from perfgym.judge.backend import JudgeBackend
        from perfgym.judge.config import JudgeConfig
        from perfgym.rewards import get_reward
        from perfgym.service.backend import make_backend
        from perfgym.service.client import ServiceClient
        from perfgym.tasks.suite import load_suite

        self.config = config
        self.suite = load_suite(config.suite)
        self.reward = get_reward(config.reward, **dict(config.reward_params))
        self.backend: JudgeBackend
        if config.backend == "service" and config.url:
            # a service that is down answers within retry_for_s (infra_error), never a hang
            self.backend = ServiceClient(config.url, token=config.token,
                                         retry_for_s=config.retry_for_s)  # fmt: skip
        else:
            self.backend = make_backend(config.backend, JudgeConfig(repeats=config.repeats),
                                        url=config.url, token=config.token)  # fmt: skip
        self._lock = threading.Lock()

    def close(self) -> None:
        self.backend.close()

    def score(self, samples: Sequence[Sample]) -> list[dict[str, float]]:
        """One dict per sample; a task id the suite lacks is a ConfigError naming it."""
        from perfgym.judge.candidate import Candidate

        missing = sorted({s.task_id for s in samples} - set(self.suite.ids()))
        if missing:
            raise ConfigError(f"suite {self.suite.name!r} has no task {', '.join(map(repr, missing))}"
                              " (the sample's extra_info.task_id / ground_truth)")  # fmt: skip
        candidates = [Candidate(self.suite.get(s.task_id), completion=s.completion, sample=i,
                                suite=self.suite.name) for i, s in enumerate(samples)]  # fmt: skip
        n = len(samples)
        try:
            with self._lock:  # one judge call at a time: the batch is the unit of measurement
                verdicts = self.backend.judge_many(candidates)
        except Exception as exc:  # noqa: BLE001 - a backend failure is infrastructure, not 0
            log.warning("perfgym verl reward: the judge failed (%s); %d samples flagged "
                        "infra_error", exc, n)  # fmt: skip
            return [infra_result(self.config, n) for _ in samples]
        outputs = self.reward.score(verdicts, completions=[s.completion for s in samples])
        results = []
        for verdict, out in zip(verdicts, outputs, strict=True):
            if verdict.infra_error or out.value is None:
                results.append(infra_result(self.config, n))
                continue
            c, b = verdict.candidate, verdict.baseline
            speedup = None
            if c and b and c.ok and b.ok and c.estimate_s and b.estimate_s:
                speedup = b.estimate_s / c.estimate_s
            cgre = out.components.get("cgre")
            results.append({
                "score": float(out.value),
                "stage": _STAGE_RANK[verdict.stage.value],
                "correct": 1.0 if verdict.correct else 0.0,
                "speedup": _nan(speedup),
                "cgre": _nan(cgre if isinstance(cgre, int | float) else None),
                "timing_ok": 1.0 if (c is not None and c.ok) else 0.0,
                "infra_error": 0.0,
                "batch_size": float(n),
            })  # fmt: skip
        return results
