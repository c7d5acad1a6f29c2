"""Service fixtures: one real `perfgym serve` on loopback and one real two-node Ray cluster for the
session (started on first use); helpers importable."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from perfgym.service.config import ServiceConfig  # noqa: E402
from perfgym.service.server.process import ServiceProcess  # noqa: E402

# The slow jobs of these tests are candidates that sleep in their tests: the tests' relative
# time limit (docs/judge.md, "Time limits of the correctness tests") would cut them at 1 s.
FAST_JUDGE = {"repeats": 1, "test_time_factor": None}


@pytest.fixture(scope="session")
def service(tmp_path_factory):
    state = tmp_path_factory.mktemp("service")
    cfg = ServiceConfig(port=0, state_dir=str(state), judge=FAST_JUDGE, max_body_bytes=1 << 20)
    with ServiceProcess(cfg, log=state / "service.log") as svc:
        yield svc


@pytest.fixture(scope="session")
def ray_cluster():
    """Ray's own multi-node test cluster: a head and a worker node, each on its own cores, and
    this process connected to it (every Ray test joins it: one cluster per session)."""
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # loopback only
    ray = pytest.importorskip("ray", reason="the Ray backend needs ray installed")
    from perfgym.sandbox.pool import usable_cores
    from perfgym.service.ray_local import LocalCluster

    if len(usable_cores()) < 2:
        pytest.skip("two Ray nodes on their own cores need two usable cores")
    with LocalCluster(nodes=2) as cluster:
        ray.init(address=cluster.address, log_to_driver=False, configure_logging=False,
                 namespace="perfgym")  # fmt: skip
        try:
            yield cluster
        finally:
            ray.shutdown()
