"""The local multi-node cluster starts Ray's workers at nice 0, and perfgym's node judge runs
at nice 0 whatever the cluster (Ray's default is 15: a judge beside busy processes starved)."""

from __future__ import annotations

import pytest

# Not `alone`: nice values, not timings (and `alone` made the session's Ray cluster start
# with the other worker idle, as the first test of its group).

pytest.importorskip("ray", reason="the Ray backend needs ray installed")


def test_workers_of_the_local_cluster_and_the_node_judge_run_at_nice_0(ray_cluster):
    import os

    import ray

    from perfgym.service.ray_backend import NodeJudge

    @ray.remote(num_cpus=0)
    def priority() -> int:
        return os.getpriority(os.PRIO_PROCESS, 0)

    assert ray.get(priority.remote()) == 0
    assert "RAY_worker_niceness" not in os.environ  # set only while the nodes started

    @ray.remote(num_cpus=0)
    def judge_priority() -> tuple[int, str | None]:
        os.setpriority(os.PRIO_PROCESS, 0, 15)  # as a cluster started with Ray's default
        node = NodeJudge()
        return os.getpriority(os.PRIO_PROCESS, 0), node.niceness_note

    assert ray.get(judge_priority.remote()) == (0, None)
