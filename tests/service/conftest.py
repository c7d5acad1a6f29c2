"""Service fixtures: one real `perfgym serve` on loopback for the session; helpers importable."""

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
