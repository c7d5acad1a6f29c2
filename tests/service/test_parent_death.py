"""A service started as a child (`ServiceProcess`) ends with the process that started it, however
that one ends: SIGTERM (which skips `__exit__`), SIGINT, SIGKILL. It outlived its parent under
PID 1 before, with its workers and their sandboxes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from tests.service.service_helpers import descendants

PARENT = """
import sys, time
from perfgym.service.config import ServiceConfig
from perfgym.service.server.process import ServiceProcess
svc = ServiceProcess(ServiceConfig(port=0, state_dir=sys.argv[1], workers=1)).start(timeout=120)
print(svc.pid(), flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL],
                         ids=["SIGTERM", "SIGINT", "SIGKILL"])  # fmt: skip
def test_the_service_and_its_workers_end_with_their_parent(tmp_path, sig):
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(tmp_path / "state")],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert parent.stdout is not None
        service = int(parent.stdout.readline())
        tree = [service, *descendants(service)]
        assert len(tree) >= 2, tree  # the service and at least its worker
        os.kill(parent.pid, sig)
        parent.wait(timeout=60)
        end = time.monotonic() + 60
        while time.monotonic() < end and any(map(_alive, tree)):
            time.sleep(0.2)
        left = [p for p in tree if _alive(p)]
        assert left == [], f"still running after the parent's {sig.name}: {left}"
    finally:
        if parent.poll() is None:
            parent.kill()
