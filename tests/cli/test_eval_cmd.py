"""`perfgym eval`: how many measured runs each protocol gets."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from perfgym.cli import app, eval_cmd
from perfgym.judge.enamel_protocol import REPEATS as ENAMEL_REPEATS


def test_repeats_default_is_the_protocols_own():
    assert eval_cmd.resolve_repeats(None, enamel=False) == eval_cmd.JUDGE_REPEATS == 3
    assert eval_cmd.resolve_repeats(None, enamel=True) == ENAMEL_REPEATS == 6


@pytest.mark.parametrize("enamel", [False, True])
@pytest.mark.parametrize("repeats", [1, 3, 6, 9])
def test_an_explicit_repeats_is_honoured(repeats, enamel):
    assert eval_cmd.resolve_repeats(repeats, enamel=enamel) == repeats


@pytest.mark.parametrize(("given", "reaches"), [(["--repeats", "3"], 3), ([], ENAMEL_REPEATS)])
def test_enamel_protocol_receives_the_resolved_repeats(tmp_path, monkeypatch, given, reaches):
    seen = []
    monkeypatch.setattr(eval_cmd, "run_enamel", lambda tasks, labels, out, repeats, as_json:
                        seen.append(repeats))  # fmt: skip
    out = tmp_path / "o.jsonl"
    args = ["eval", "enamel", "--task", "HumanEval/0", "--no-store", "--out", str(out), *given]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert seen == [reaches]
