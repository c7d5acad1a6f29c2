"""`perfgym agent TASK --model scripted` runs offline: perfgym's own scripted server answers with
the task's expert patch (it tried https://api.openai.com/v1 after 91 s of setup before)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfgym.cli import app
from perfgym.llm.repo_script import repo_script
from perfgym.repos.loading import load_repo_task

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

PEAKSCAN = Path(__file__).resolve().parents[2] / "suites" / "perfgym-repos" / "peakscan"


def test_the_shipped_script_applies_each_expert_patch_then_submits():
    task = load_repo_task(PEAKSCAN)
    (answers,) = repo_script([task]).tasks.values()
    texts = [a.text if hasattr(a, "text") else str(a) for a in answers]
    assert "git apply" in texts[1] and "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in texts[-1]


def test_agent_with_the_scripted_model_needs_no_endpoint(agent_cache, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing else is asked
    out = tmp_path / "agent.jsonl"
    res = CliRunner().invoke(app, [
        "agent", str(PEAKSCAN), "--model", "scripted", "--iterations", "1", "--rounds", "3",
        "--repeats", "0", "--test-runs", "1", "--profile-seconds", "0.3", "-o", str(out),
    ])  # fmt: skip
    assert res.exit_code == 0, res.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    attempts = [r for r in records if r["kind"] == "attempt" and r["index"] > 0]
    assert attempts, records
    first = attempts[0]
    # The expert patch went through the whole pipeline: tests passed, workloads measured.
    assert first["stage"] == "measured", first
    assert not first["hacks"], first["hacks"]
    assert first["speedup"] is not None and first["speedup"] > 1.0, first
