"""Every reward's docstring example runs, and docs/rewards.md covers every registered reward."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from perfgym.rewards import (
    _afterburner,
    _baselines,
    _percentile,
    _rlpf,
    list_rewards,
    reward_factory,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rewards.md"


@pytest.mark.parametrize("module", [_rlpf, _baselines, _percentile, _afterburner])
def test_docstring_examples(module) -> None:
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


@pytest.mark.parametrize("name", list_rewards())
def test_each_reward_is_documented(name: str) -> None:
    assert "paper" in (reward_factory(name).__doc__ or "")
    assert f"`{name}`" in DOCS.read_text()


def test_the_writing_a_reward_example_runs_and_conforms() -> None:
    from perfgym.registry import Kind, unregister

    text = DOCS.read_text()
    section = text[text.index("## Writing a reward") :]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    try:
        exec(compile(code, str(DOCS), "exec"), {})  # runs check_reward on the example
        assert "speedup_capped" in list_rewards()
    finally:
        unregister(Kind.REWARDS, "speedup_capped")
