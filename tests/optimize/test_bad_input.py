"""Bad input to `perfgym optimize`: one line, exit 2, and nothing already in the history lost."""

from __future__ import annotations

import socket

import pytest
from optimize_helpers import TASK, run_cli

from perfgym.store.optimize_history import OptimizeHistory, Step


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--task", "no-such-task"], "unknown task id"),
        (["--task", TASK, "--objective", "speed"], "unknown --objective"),
        (["--task", TASK, "--strategy", "random"], "unknown --strategy"),
        (["--task", TASK, "--iterations", "0"], "iterations"),
        (["--task", TASK, "--base-url", "http://127.0.0.1:{port}/v1"], "127.0.0.1"),
    ],
)
def test_one_line_exit_2_nothing_lost(tmp_path, args, says):
    store = tmp_path / "store.sqlite"
    h = OptimizeHistory(store)
    h.start_run("earlier", {})
    h.put("earlier", [Step(TASK, 1, 0, "optimize", answer="x", accepted=False, why="kept")])
    h.close()
    args = [a.replace("{port}", str(_free_port())) for a in args]
    done = run_cli("optimize", "perfgym-core", "--model", "scripted", "--store", str(store),
                   "--out-dir", str(tmp_path / "out"), "-q", *args)  # fmt: skip
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], lines
    assert "Traceback" not in done.stderr
    h = OptimizeHistory(store)
    assert [s.why for s in h.steps("earlier")] == ["kept"]
    assert not (tmp_path / "out").exists()


def test_help_and_the_shown_choices_equal_the_real_ones():
    from typer.testing import CliRunner

    from perfgym.cli import app, optimize_cmd
    from perfgym.optimize.objective import OBJECTIVES
    from perfgym.registry import Kind, names

    assert optimize_cmd.OBJECTIVES_SHOWN == OBJECTIVES
    assert sorted(optimize_cmd.STRATEGIES_SHOWN) == names(Kind.STRATEGIES)
    text = CliRunner().invoke(app, ["optimize", "-h"], terminal_width=200).output
    for name in ("--model", "--iterations", "--objective", "--strategy", "--resume",
                 "--patience", "--budget-tokens", "--budget-usd", "--budget-wall", "--base-url"):  # fmt: skip
        assert name in text, name
    assert "<bool>" not in text


@pytest.mark.parametrize(
    ("model", "says"), [("scripted", "refused the API key"), ("no-such-model", "no-such-model")]
)
def test_refused_key_and_unknown_model_are_one_line(tmp_path, model, says):
    from optimize_helpers import CORE

    from perfgym.llm.core_script import suite_script
    from perfgym.llm.scripted import ScriptedServer
    from perfgym.tasks.native import load_task_dir

    store = tmp_path / "store.sqlite"
    task = load_task_dir(CORE / TASK)
    key = "secret" if model == "scripted" else None
    with ScriptedServer(suite_script([task]), api_key=key) as srv:
        done = run_cli("optimize", "perfgym-core", "--model", model, "--base-url", srv.base_url,
                       "--task", TASK, "--store", str(store), "--out-dir", str(tmp_path / "out"),
                       "-q")  # fmt: skip
        served = srv.stats.answers_served
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], lines
    assert served == 0 and not (tmp_path / "out").exists()
