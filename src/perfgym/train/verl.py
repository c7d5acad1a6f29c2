"""verl reward adapter: `compute_score` (async, as verl 0.9.1's reward loop awaits it),
`compute_score_sync` and `compute_score_batch` (the legacy batch reward manager). Concurrent
calls are micro-batched into one judge call. Imports neither verl nor torch."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from perfgym.errors import ConfigError
from perfgym.train.verl_batcher import MicroBatcher
from perfgym.train.verl_score import SCORE_KEYS, Sample, ScorerConfig, VerlScorer

__all__ = ["SCORE_KEYS", "compute_score", "compute_score_batch", "compute_score_sync",
           "reset"]  # fmt: skip

_lock = threading.Lock()
_scorers: dict[ScorerConfig, tuple[VerlScorer, MicroBatcher[Sample, dict[str, float]]]] = {}


def _task_id(ground_truth: Any, extra_info: Mapping[str, Any] | None) -> str:
    """The task a sample is for: extra_info['task_id'], else the ground truth (a task id, or a
    dict holding one) as `perfgym dataset grpo` writes both."""
    if extra_info and extra_info.get("task_id"):
        return str(extra_info["task_id"])
    if isinstance(ground_truth, Mapping) and ground_truth.get("task_id"):
        return str(ground_truth["task_id"])
    if isinstance(ground_truth, str) and ground_truth:
        return ground_truth
    raise ConfigError("perfgym verl reward: the sample names no task: give extra_info.task_id "
                      "or a ground_truth holding the task id (see `perfgym dataset grpo`)")  # fmt: skip


def _suite_of(data_source: Any) -> str | None:
    return str(data_source) if data_source else None


def _scorer(config: ScorerConfig) -> tuple[VerlScorer, MicroBatcher[Sample, dict[str, float]]]:
    with _lock:
        found = _scorers.get(config)
        if found is None:
            scorer = VerlScorer(config)
            batcher = MicroBatcher(scorer.score, window_s=config.window_s,
                                   max_batch=config.max_batch)  # fmt: skip
            found = _scorers[config] = (scorer, batcher)
        return found


def _prepare(data_source: Any, ground_truth: Any, extra_info: Mapping[str, Any] | None,
             kwargs: Mapping[str, Any]) -> ScorerConfig:  # fmt: skip
    return ScorerConfig.from_kwargs(kwargs, _suite_of(data_source))


async def compute_score(data_source: Any, solution_str: str, ground_truth: Any,
                        extra_info: Mapping[str, Any] | None = None,
                        **reward_kwargs: Any) -> dict[str, float]:  # fmt: skip
    """verl's per-sample call (`reward.custom_reward_function.name: compute_score`): a dict
    with `score` and the components in `SCORE_KEYS`, the same keys for every sample."""
    config = _prepare(data_source, ground_truth, extra_info, reward_kwargs)
    sample = Sample(_task_id(ground_truth, extra_info), solution_str)
    scorer, batcher = _scorer(config)
    scorer.check(sample)
    return await batcher.submit_async(sample)


def compute_score_sync(data_source: Any, solution_str: str, ground_truth: Any,
                       extra_info: Mapping[str, Any] | None = None,
                       **reward_kwargs: Any) -> dict[str, float]:  # fmt: skip
    """`compute_score` for callers that run a sync scorer in threads (verl's `remote` manager,
    which refuses async scorers); concurrent threads are micro-batched the same way."""
    config = _prepare(data_source, ground_truth, extra_info, reward_kwargs)
    sample = Sample(_task_id(ground_truth, extra_info), solution_str)
    scorer, batcher = _scorer(config)
    scorer.check(sample)
    return batcher.submit(sample).result()


def compute_score_batch(data_sources: Sequence[Any], solution_strs: Sequence[str],
                        ground_truths: Sequence[Any],
                        extra_infos: Sequence[Mapping[str, Any] | None],
                        **reward_kwargs: Any) -> list[dict[str, float]]:  # fmt: skip
    """verl's legacy `batch` reward manager call: the whole batch judged in one call, grouped
    by suite (a batch may mix data sources)."""
    n = len(solution_strs)
    if not (len(data_sources) == len(ground_truths) == len(extra_infos) == n):
        raise ConfigError(f"compute_score_batch: {len(data_sources)} data_sources, {n} "
                          f"solution_strs, {len(ground_truths)} ground_truths and "
                          f"{len(extra_infos)} extra_infos; they must be equally long")  # fmt: skip
    by_config: dict[ScorerConfig, list[int]] = {}
    for i in range(n):
        config = _prepare(data_sources[i], ground_truths[i], extra_infos[i], reward_kwargs)
        by_config.setdefault(config, []).append(i)
    out: list[dict[str, float] | None] = [None] * n
    for config, indices in by_config.items():
        scorer, _ = _scorer(config)
        samples = [Sample(_task_id(ground_truths[i], extra_infos[i]), solution_strs[i])
                   for i in indices]  # fmt: skip
        for i, result in zip(indices, scorer.score(samples), strict=True):
            out[i] = result
    return [r for r in out if r is not None]


def reset() -> None:
    """Close every scorer this process opened (tests; a trainer exits instead)."""
    with _lock:
        for scorer, _ in _scorers.values():
            scorer.close()
        _scorers.clear()
