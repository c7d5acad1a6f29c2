"""Shared ENAMEL fixtures: one HumanEval/1 task, a warm worker pool and its measured reference,
each made once per test module."""

import pytest

from perfgym.enamel.reference import measure_reference
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.tasks import load_suite


@pytest.fixture(scope="module")
def task():
    return load_suite("enamel").get("HumanEval/1")


@pytest.fixture(scope="module")
def workers():
    with PythonWorkerPool() as pool:
        yield pool


@pytest.fixture(scope="module")
def ref(task, workers):
    return measure_reference(task, workers, repeats=3)
