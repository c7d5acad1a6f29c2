"""Sandbox fixtures: one instance of each backend per test session, a host directory runs see."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from perfgym.sandbox import BwrapSandbox
from perfgym.sandbox.base import SandboxConfig
from perfgym.sandbox.warm import WarmSandbox


def _backend(name: str):
    if name == "warm":
        return WarmSandbox()
    if name == "warm-fork":  # the fallback when the exec stub cannot be built (no C compiler)
        return WarmSandbox(SandboxConfig(exec_stub=False))
    return BwrapSandbox()


@pytest.fixture(scope="session", params=["warm", "warm-fork", "bwrap"])
def sandbox(request):
    sb = _backend(request.param)
    yield sb
    sb.close()


@pytest.fixture(scope="session")
def warm():
    sb = WarmSandbox()
    yield sb
    sb.close()


@pytest.fixture
def outside_tmp():
    """A host directory the worker can see (its own /tmp is a private tmpfs; its view is an
    allow-list, of which the exec stub's helper directory is one writable place)."""
    from perfgym.sandbox.exec_stub import HELPERS

    HELPERS.mkdir(parents=True, exist_ok=True)
    if not os.access(HELPERS, os.W_OK):
        pytest.skip(f"no writable {HELPERS}")
    path = Path(tempfile.mkdtemp(prefix="pyworker-", dir=HELPERS))
    path.chmod(0o755)  # readable by the worker's unprivileged uid
    yield path
    shutil.rmtree(path, ignore_errors=True)
