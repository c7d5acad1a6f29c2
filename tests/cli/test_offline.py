"""`--model scripted` runs each model command offline on each shipped suite, from the scripts
that ship in perfgym.llm (core_script for perfgym-core, repo_script for perfgym-repos); a suite
given to the wrong kind of command is one line and exit 2, with nothing written.

Covered elsewhere, not repeated here: `perfgym generate perfgym-core --model scripted`
(tests/cli/test_generate.py), `perfgym optimize perfgym-core --model scripted` (tests/optimize,
optimize_helpers.core_run) and `perfgym agent <repo task> --model scripted`
(tests/agent/test_offline.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfgym.cli import app
from perfgym.llm.core_script import suite_script
from perfgym.llm.repo_script import SUBMIT, repo_script
from perfgym.repos.loading import load_repo_suite
from perfgym.tasks.suite import load_suite

#: perfgym-core's cheapest Python baseline to measure.
TASK = "py-lis-dp"


@pytest.fixture(autouse=True)
def no_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any request to a real endpoint would fail: nothing listens on port 9."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def invoke(*args: object):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, [str(a) for a in args])


def one_line(result, *needles: str) -> str:  # type: ignore[no-untyped-def]
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def test_every_shipped_task_has_a_scripted_answer() -> None:
    core = load_suite("perfgym-core").tasks
    assert set(suite_script(core).tasks) == {t.id for t in core}
    repos = load_repo_suite("perfgym-repos")
    script = repo_script(repos)
    assert set(script.tasks) == {t.id for t in repos} and len(repos) >= 3
    for task in repos:  # each applies its expert patch, then submits
        texts = [a.content or "" for a in script.tasks[task.id]]
        assert any("git apply" in t for t in texts) and SUBMIT in texts[-1], task.id


def test_eval_model_offline(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = invoke("eval", "perfgym-core", "--model", "scripted", "--task", TASK, "--repeats", "1",
                 "-o", out, "--no-store", "--no-report", "-q")  # fmt: skip
    assert res.exit_code == 0, res.output
    header, verdict = (json.loads(ln) for ln in out.read_text().splitlines())
    assert header["perfgym_results"]["totals"]["requests"] == 1
    # The script's first answer for a task is its slowest pool program: correct.
    assert verdict["task_id"] == TASK and verdict["stage"] == "OK", verdict


@pytest.mark.parametrize("command", ["generate", "eval", "optimize"])
@pytest.mark.parametrize("suite", ["perfgym-repos", "suites/perfgym-repos/peakscan"])
def test_a_repository_suite_for_a_program_command_is_one_line(
    command: str, suite: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2] if "/" in suite else tmp_path)
    out = tmp_path / "out"
    out_flag = "--out-dir" if command == "optimize" else "-o"  # optimize writes a folder
    one_line(invoke(command, suite, "--model", "scripted", out_flag, out, "--store",
                    tmp_path / "s.sqlite"), "perfgym agent", "repository tasks")  # fmt: skip
    assert not out.exists() and not (tmp_path / "s.sqlite").exists()


def test_a_program_suite_for_the_agent_is_one_line(tmp_path: Path) -> None:
    out = tmp_path / "agent.jsonl"
    one_line(invoke("agent", "perfgym-core", "--model", "scripted", "-o", out),
             "program tasks", "perfgym eval perfgym-core")  # fmt: skip
    assert not out.exists()
