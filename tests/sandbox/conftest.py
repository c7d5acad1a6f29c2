"""Sandbox fixtures: one instance of each backend per test session."""

import pytest

from perfgym.sandbox import BwrapSandbox
from perfgym.sandbox.warm import WarmSandbox


@pytest.fixture(scope="session", params=["warm", "bwrap"])
def sandbox(request):
    sb = WarmSandbox() if request.param == "warm" else BwrapSandbox()
    yield sb
    sb.close()


@pytest.fixture(scope="session")
def warm():
    sb = WarmSandbox()
    yield sb
    sb.close()
