"""Bad input to `perfgym agent`: one clear line (exit 2) before any model call."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from perfgym.cli import app
from perfgym.llm.script import Script
from perfgym.llm.scripted import ScriptedServer

TOML = """\
id = "bad"
repo = "{repo}"
setup = "{setup}"
test_command = "{tests}"

[[workloads]]
name = "visible"
script = "workloads/{workload}"

[limits]
build_s = 30
test_s = 60
workload_s = 30
memory_mb = 512
"""
CRASH = "def setup():\n    return 1\n\n\ndef experiment(state):\n    raise RuntimeError('workload crashed')\n"


@pytest.fixture(scope="module")
def server():  # type: ignore[no-untyped-def]
    with ScriptedServer(Script(tasks={"*": ["```mswea_bash_command\nls\n```"]})) as srv:
        yield srv


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"setup": "python3 -c 'raise SystemExit(3)'"}, "setup"),
        (
            {"tests": "python3 -m pytest -q -p no:cacheprovider tests/test_nope.py"},
            "test command fails",
        ),
        ({"workload": "crash.py"}, "workload crashed"),
        ({"repo": "file:///nonexistent/perfgym-agent.git"}, "cannot fetch"),
    ],
    ids=["does-not-build", "failing-tests", "crashing-workload", "unfetchable-url"],
)
def test_bad_task_is_one_line_before_any_model_call(
    agent_cache, dedup_task, server, fields, words, tmp_path
):  # type: ignore[no-untyped-def]
    folder = agent_cache / "bad" / tmp_path.name
    shutil.copytree(dedup_task.folder, folder)
    (folder / "workloads" / "crash.py").write_text(CRASH)
    values = {"repo": "repo", "setup": "true", "tests": "python3 -m pytest -q -p no:cacheprovider tests",
              "workload": "visible.py", **fields}  # fmt: skip
    (folder / "task.toml").write_text(TOML.format(**values))
    before = server.stats.requests
    res = CliRunner().invoke(app, ["agent", str(folder), "--model", "scripted", "--base-url",
                                   server.base_url, "-o", str(tmp_path / "r.jsonl")])  # fmt: skip
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert res.exit_code == 2, res.output
    assert lines[-1].startswith("error:") and words in lines[-1]
    assert len([ln for ln in lines if ln.startswith("error:")]) == 1
    assert server.stats.requests == before  # no model call was made


def test_unknown_task_is_one_line(tmp_path):  # type: ignore[no-untyped-def]
    res = CliRunner().invoke(
        app, ["agent", str(tmp_path / "nope"), "--model", "m", "-o", str(tmp_path / "r.jsonl")]
    )
    assert (
        res.exit_code == 2
        and res.output.strip().startswith("error:")
        and len(res.output.strip().splitlines()) == 1
    )
