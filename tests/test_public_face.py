"""`import perfgym` offers the names a user starts with, and loads them only when used."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import perfgym

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", perfgym.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(perfgym, name) is not None
    assert name in dir(perfgym)


def test_one_name_per_concept() -> None:
    from perfgym.judge import Candidate as JudgeCandidate
    from perfgym.metrics import evaluate
    from perfgym.rewards import get_reward

    assert perfgym.Candidate is JudgeCandidate
    assert perfgym.evaluate is evaluate and perfgym.get_reward is get_reward
    assert not hasattr(perfgym.tasks, "Candidate")  # the stored kind is PublishedCandidate


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'judge_everything'"):
        _ = perfgym.judge_everything  # type: ignore[attr-defined]


def test_importing_perfgym_loads_no_judge_sandbox_or_service() -> None:
    code = "import sys, perfgym; print(sorted(m for m in sys.modules if m.startswith('perfgym')))"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "['perfgym', 'perfgym._lazy']"
