"""A batch over the session's two Ray nodes (Ray's own multi-node test cluster, each node on its
own cores): every task judged wholly on one node, and a node lost mid-batch (then one that joins)
leaves every candidate exactly one verdict, with nothing measured on the lost node used."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

ray = pytest.importorskip("ray", reason="the Ray backend needs ray installed")

from service_helpers import descendants, sleeper  # noqa: E402
from small_tasks import SLOW_SUM, SUM, sum_task  # noqa: E402

from perfgym.judge import Candidate, JudgeConfig  # noqa: E402
from perfgym.service.ray_backend import RayJudge, describe  # noqa: E402

pytestmark = pytest.mark.slow
CONFIG = JudgeConfig(repeats=1, test_time_factor=None)


def _batch(tasks: int, per_task: int, source: str) -> list[Candidate]:
    made = [sum_task(f"sum-{k}") for k in range(tasks)]
    return [Candidate(t, source=source, model="m", sample=s) for t in made for s in range(per_task)]


def _labels(verdicts) -> list[tuple[str, int]]:
    return [(v.task_id, v.sample) for v in verdicts]


def test_a_batch_spreads_over_both_nodes_and_never_compares_across_them(ray_cluster):
    """Chunks of one candidate each: the old scheduler sent a task's chunks to whichever node was
    least busy, so one task's candidates (and their speedups) came from two machines."""
    cands = _batch(3, 2, SUM) + [Candidate(sum_task("sum-slow"), source=SLOW_SUM, model="s")]
    with RayJudge(CONFIG, chunk_size=1) as judge:
        got = judge.judge_many(cands)
        nodes = describe(judge)["nodes"]
    assert _labels(got) == [(c.task.id, c.sample) for c in cands]
    assert all(v.stage.value == "OK" and not v.infra_error for v in got), [v.reason for v in got]
    by_task: dict[str, set[str]] = {}
    for v in got:
        by_task.setdefault(v.task_id, set()).add(v.machine)
        assert v.candidate is not None and v.baseline is not None  # measured beside each other
    assert all(len(m) == 1 for m in by_task.values()), by_task  # one node per task
    used = set().union(*by_task.values())
    assert len(used) == 2 and all("#ray:" in m for m in used), used  # both nodes judged
    assert {n["machine"] for n in nodes} == used
    cores = [set(n["cores"]) for n in nodes]
    assert cores[0] and cores[1] and not cores[0] & cores[1]  # each node on its own cores
    for n in nodes:  # each node's warm pool lives under its own actor
        assert descendants(n["pid"]), n


def test_a_node_lost_mid_batch_loses_and_duplicates_nothing(ray_cluster):
    """The worker node is killed while it holds tasks, and a new node joins: every candidate has
    one verdict, none measured on the lost node, and the lost tasks were judged again whole."""
    cands = _batch(3, 2, sleeper(1))
    result: dict[str, object] = {}
    judge = RayJudge(CONFIG)
    victim = ray_cluster.workers[0]

    def run() -> None:
        try:
            result["verdicts"] = judge.judge_many(cands)
        except BaseException as exc:  # shown by the assertion below
            result["error"] = exc

    batch = threading.Thread(target=run)
    batch.start()
    try:
        end = time.monotonic() + 120
        while victim.node_id not in judge.cluster._actors and time.monotonic() < end:
            time.sleep(0.1)
        lost = ray.get(judge.cluster._actors[victim.node_id].info.remote())["machine"]
        ray_cluster.remove_node(victim)
        ray_cluster.add_node(1)  # one comes back, on the lost node's cores
    finally:
        batch.join(timeout=300)
    assert "error" not in result, result.get("error")
    got = result["verdicts"]
    assert _labels(got) == [(c.task.id, c.sample) for c in cands]  # one each, in order
    assert all(v.stage.value == "OK" and not v.infra_error for v in got), [v.reason for v in got]
    assert lost not in {v.machine for v in got}  # nothing measured on the lost node is used
    assert judge.retried >= 1
    assert len(judge.cluster.nodes()) == 2  # the one that came back is alive
    by_task: dict[str, set[str]] = {}
    for v in got:
        by_task.setdefault(v.task_id, set()).add(v.machine)
    assert all(len(m) == 1 for m in by_task.values()), by_task
    judge.close()


def test_a_task_whose_node_fails_on_every_try_is_an_infra_failure_never_zero(ray_cluster):
    """With one try allowed, a killed node actor leaves its task's candidates infrastructure
    failures (reward None); the other task of the batch is scored normally."""
    from perfgym.tasks.suite_model import Suite
    from perfgym.train.batch import BatchReward

    doomed, fine = sum_task("sum-doomed"), sum_task("sum-fine")
    suite = Suite(name="ray-fail", tasks=[doomed, fine], source="test")
    judge = RayJudge(CONFIG, max_attempts=1)
    first = judge.cluster.nodes()[0]  # the doomed task, first in the batch, goes here
    pid = ray.get(judge.cluster.actor(first).info.remote())["pid"]
    killer = threading.Timer(0.5, os.kill, (pid, signal.SIGKILL))
    killer.start()
    items = [("sum-doomed", f"```python\n{sleeper(2)}```"),
             ("sum-doomed", f"```python\n{sleeper(2)}\n```"), ("sum-fine", f"```python\n{SUM}```")]  # fmt: skip
    with BatchReward(suite, "rlpf", judge=judge, judge_config=CONFIG) as br:
        scores = br.score(items)
    killer.join()
    assert [s.value for s in scores[:2]] == [None, None], scores
    assert all(s.infra_error for s in scores[:2])
    assert scores[2].value is not None and not scores[2].infra_error and scores[2].stage == "OK"
    assert all("failed on all 1 tries" in v.reason for v in br.last_verdicts[:2])


def test_the_verl_adapter_judges_on_the_cluster_it_is_given(ray_cluster):
    """reward_kwargs.address reaches the Ray backend: the verl scorer's judge is the session's
    two-node cluster, joined (an unknown kwarg is still refused)."""
    from perfgym.train.verl_score import ScorerConfig, _backend

    config = ScorerConfig.from_kwargs({"backend": "ray", "address": ray_cluster.address}, "s")
    judge = _backend(config)
    assert isinstance(judge, RayJudge) and judge.cluster.started_here is False
    assert len(judge.cluster.nodes()) >= 1
    judge.close()
