"""Sandbox fixtures: one instance of each backend per test session."""

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
