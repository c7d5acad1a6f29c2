"""Shared fixtures of the task-loader tests: the shipped suites (loaded once) and fixture paths."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perfgym.tasks import Suite, load_suite

# Under --import-mode=importlib the helper modules beside the tests (enamel_selfcheck.py) need
# their directory on the path.
sys.path.insert(0, str(Path(__file__).resolve().parent))

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "perfcodebench"
EXECUTABLE_TASKS = FIXTURES / "executable_tasks"


@pytest.fixture(scope="session")
def enamel() -> Suite:
    return load_suite("enamel")


@pytest.fixture(scope="session")
def humaneval() -> Suite:
    return load_suite("humaneval")


@pytest.fixture(scope="session")
def humanevalplus() -> Suite:
    return load_suite("humanevalplus")


@pytest.fixture(scope="session")
def pcb_fixtures() -> Suite:
    return load_suite(EXECUTABLE_TASKS)
