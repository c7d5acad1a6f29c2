"""Store fixtures; store_helpers.py importable by the tests (importlib import mode)."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from store_helpers import CountingSandbox  # noqa: E402

from perfgym.sandbox.warm import WarmSandbox  # noqa: E402
from perfgym.toolchains import BuildCache  # noqa: E402


@pytest.fixture
def counting_sandbox():
    # Builds need a sandbox whose runs cannot see the build cache, as the Judge makes its own.
    sb = CountingSandbox(WarmSandbox(BuildCache().hiding()))
    yield sb
    sb.close()
