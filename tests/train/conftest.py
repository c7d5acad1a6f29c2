"""Training-test fixtures: the small suite on disk, shared by the session."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from train_tasks import write_suite  # noqa: E402


@pytest.fixture(scope="session")
def train_suite(tmp_path_factory):
    """Path of a tasks.jsonl suite (sum-a, sum-b train; sum-c test)."""
    return str(write_suite(tmp_path_factory.mktemp("train-suite")))
