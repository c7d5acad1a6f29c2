"""The Ray backend on the session's real two-node Ray cluster (loopback): verdicts identical to the
local judge, the sandbox conformance suite, and a killed node actor retried."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

# Before ray is imported: keep the cluster on loopback (Ray otherwise binds the host's address).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
ray = pytest.importorskip("ray", reason="the Ray backend needs ray installed")

from service_helpers import sleeper  # noqa: E402
from small_tasks import SLOW_SUM, SUM, sum_task  # noqa: E402

from perfgym.judge import Candidate, Judge, JudgeConfig  # noqa: E402
from perfgym.sandbox.conformance import check_sandbox  # noqa: E402
from perfgym.service.judge_conformance import check_judge, essence  # noqa: E402
from perfgym.service.ray_backend import RayJudge, RaySandbox, describe  # noqa: E402

pytestmark = pytest.mark.slow
CONFIG = JudgeConfig(repeats=1, test_time_factor=None)  # a sleeping candidate is the slow job


@pytest.fixture(scope="module")
def ray_judge(ray_cluster):
    judge = RayJudge(CONFIG)
    assert judge.cluster.started_here is False  # the session's cluster, joined
    yield judge
    judge.close()


def _essence(v):
    return essence(v)


def test_ray_verdicts_are_identical_to_the_local_judge(ray_judge):
    task = sum_task()
    cands = [
        Candidate(task, completion=f"```python\n{SUM}```", model="a", sample=0),
        Candidate(task, source=SLOW_SUM, model="a", sample=1),
        Candidate(task, source="print(42)\n", model="b", sample=0),
        Candidate(task, source="raise SystemExit(3)\n", model="b", sample=1),
        Candidate(task, source="def broken(:\n", model="c", sample=0),
        Candidate(task, completion="no code", model="c", sample=1),
    ]
    with Judge(CONFIG) as local:
        expected = local.judge_many(cands)
    seen = []
    got = ray_judge.judge_many(cands, progress=lambda d, n: seen.append((d, n)))
    assert [_essence(v) for v in got] == [_essence(v) for v in expected]
    assert [v.stage.value for v in got] == ["OK", "OK", "WO", "NR", "NC", "NX"]
    assert got[0].candidate is not None and got[0].candidate.estimate_s > 0
    assert seen[-1] == (6, 6)
    with Judge(CONFIG) as local:
        here = check_judge(local)
    assert [essence(v) for v in check_judge(ray_judge)] == [essence(v) for v in here]
    info = describe(ray_judge)
    assert len(info["nodes"]) == 2 and all(n["cores"] for n in info["nodes"])


def test_ray_sandbox_passes_the_conformance_suite(ray_judge):
    sb = RaySandbox()
    assert sb.cluster.started_here is False  # it joined the judge's cluster
    assert len(check_sandbox(sb)) >= 16


def test_killed_node_actor_is_retried(ray_judge):
    task = sum_task("sum-r")
    pid = describe(ray_judge)["nodes"][0]["pid"]

    def kill_soon() -> None:
        time.sleep(1.0)
        os.kill(pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_soon)
    killer.start()
    (v,) = ray_judge.judge_many([Candidate(task, source=sleeper(3), model="m")])
    killer.join()
    assert v.stage.value == "OK" and not v.infra_error, v.reason
    assert ray_judge.retried >= 1
    assert pid not in [n["pid"] for n in describe(ray_judge)["nodes"]]


def test_batch_reward_through_ray_scores_as_the_local_backend(ray_judge, caplog):
    """`BatchReward(backend="ray")` joins the running cluster and scores a batch as the local
    backend does; a batch past its timeout is None (an infrastructure failure), never 0.0."""
    import logging

    from perfgym.tasks.suite_model import Suite
    from perfgym.train.batch import BatchReward

    suite = Suite(name="ray-sum", tasks=[sum_task("sum-batch")], source="test")
    items = [("sum-batch", f"```python\n{SUM}```"), ("sum-batch", f"```python\n{SLOW_SUM}```"),
             ("sum-batch", "```python\nprint(42)\n```"), ("sum-batch", "no program here")]  # fmt: skip
    with BatchReward(suite, "rlpf", backend="ray", judge_config=CONFIG) as remote:
        got = remote.score(items)
        assert remote.judge.cluster.started_here is False  # the module's cluster, joined
    with BatchReward(suite, "rlpf", backend="local", judge_config=CONFIG) as local:
        want = local.score(items)
    assert [s.stage for s in got] == [s.stage for s in want] == ["OK", "OK", "WO", "NX"]
    assert all(s.value is not None and not s.infra_error for s in got)
    assert [s.value for s in got[2:]] == [s.value for s in want[2:]]  # the failures' stages
    assert got[0].value >= got[2].value and got[1].value >= got[2].value
    slow = BatchReward(suite, "rlpf", backend="ray", judge_config=CONFIG, timeout_s=0.5)
    with slow, caplog.at_level(logging.WARNING, logger="perfgym.train"):
        (late,) = slow.score([("sum-batch", f"```python\n{sleeper(3)}```")])
    assert late.value is None and late.infra_error and "within 0.5 s" in late.reason
