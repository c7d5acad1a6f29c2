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
# noise_rounds 0: no A/A band, so no speed is decided (these tests read stages and the service's
# mechanics; the band's runs and a batch's twin of the baseline were most of their judges' work).
FAST_JUDGE = {"repeats": 1, "noise_rounds": 0, "test_time_factor": None}


@pytest.fixture(scope="session")
def service(tmp_path_factory):
    state = tmp_path_factory.mktemp("service")
    cfg = ServiceConfig(port=0, state_dir=str(state), judge=FAST_JUDGE, max_body_bytes=1 << 20)
    with ServiceProcess(cfg, log=state / "service.log") as svc:
        yield svc


class _SharedRay:
    """The session's cluster while its tests run: started on first use, stopped after the last
    test on this worker that uses it (an idle cluster costs ~0.12 of a core)."""

    def __init__(self) -> None:
        self.cluster = None
        self.users: set[str] | None = None  # node ids of every collected test using it
        self.ran: set[str] = set()

    def start(self):
        import ray

        from perfgym.service.ray_local import LocalCluster

        cluster = LocalCluster(nodes=2).__enter__()
        try:
            ray.init(address=cluster.address, log_to_driver=False, configure_logging=False,
                     namespace="perfgym")  # fmt: skip
        except BaseException:
            cluster.__exit__(None, None, None)
            raise
        self.cluster = cluster
        return cluster

    def stop(self) -> None:
        cluster, self.cluster = self.cluster, None
        if cluster is None:
            return
        import ray

        try:
            ray.shutdown()
        finally:
            cluster.__exit__(None, None, None)

    def after(self, item: pytest.Item) -> None:
        """Stop the cluster once every collected test that uses it has run here (all of them run
        on one worker: tests/conftest.py groups them); else it lives to the session's end."""
        if self.cluster is None:
            return
        if self.users is None:
            self.users = {i.nodeid for i in item.session.items if "ray_cluster" in i.fixturenames}
        if "ray_cluster" in item.fixturenames:
            self.ran.add(item.nodeid)
        if self.users <= self.ran:
            self.stop()


_RAY = _SharedRay()


@pytest.fixture(scope="session")
def ray_cluster():
    """Ray's own multi-node test cluster: a head and a worker node, each on its own cores, and
    this process connected to it (every Ray test joins it: one cluster per session)."""
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # loopback only
    pytest.importorskip("ray", reason="the Ray backend needs ray installed")
    from perfgym.sandbox.pool import usable_cores

    if len(usable_cores()) < 2:
        pytest.skip("two Ray nodes on their own cores need two usable cores")
    try:
        yield _RAY.start()
    finally:
        _RAY.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):  # noqa: ARG001
    yield  # the test's own fixtures (a module's Ray judge) are torn down first
    _RAY.after(item)
