"""Outputs as a user meets them: a command that fails before its first result leaves the
working folder as it found it (no results/, no store, no empty files), and `-o` is a file in
every command while a folder is `--out-dir` (the old `-o` still works, with a warning)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _dead_url() -> str:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "100"}
    return subprocess.Popen([sys.executable, "-m", "perfgym", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


@pytest.mark.slow  # eight commands, started together
def test_a_failed_command_leaves_the_working_folder_empty(tmp_path: Path) -> None:
    url = _dead_url()
    model = ["--model", "gpt-x", "--base-url", url, "--max-retries", "0"]
    textindex = str(ROOT / "suites" / "perfgym-repos" / "textindex")
    commands = {  # each fails after it made room for its outputs (or before), never after a result
        "eval-model": ["eval", "perfgym-core", "--limit", "1", *model[:4]],
        "eval-candidates": ["eval", "perfgym-core", "--candidates", "absent.jsonl"],
        "generate": ["generate", "perfgym-core", "--limit", "1", *model],
        "optimize": ["optimize", "perfgym-core", "--limit", "1", *model],
        "agent": ["agent", textindex, *model],
        "audit": ["audit", "perfgym-core", "--task", "absent-task"],
        "validate": ["validate", "perfgym-core", "--task", "absent-task"],
        "dataset": ["dataset", "grpo", "perfgym-core", "--split", "absent-split",
                    "--out-dir", "data"],
    }  # fmt: skip
    runs = {}
    for name, args in commands.items():
        (tmp_path / name).mkdir()
        runs[name] = _start(args, tmp_path / name)
    for name, proc in runs.items():
        _out, err = proc.communicate(timeout=600)
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert proc.returncode == 2, (name, err[-2000:])
        assert len(lines) == 1 and lines[0].startswith("error:"), (name, err[-2000:])
        left = sorted(str(p.relative_to(tmp_path / name)) for p in (tmp_path / name).rglob("*"))
        assert left == [], (name, left, lines[0])


def test_a_result_already_written_stays_when_the_rerun_fails(tmp_path: Path) -> None:
    """Adversarial to the clean-up: a store holding a result is never removed, nor its folder."""
    import sqlite3

    store = tmp_path / "results" / "perfgym.sqlite"
    store.parent.mkdir()
    with sqlite3.connect(store) as con:
        con.execute("CREATE TABLE model_calls (key TEXT)")
        con.execute("INSERT INTO model_calls VALUES ('paid')")
    proc = _start(["generate", "perfgym-core", "--limit", "1", "--model", "gpt-x",
                   "--base-url", _dead_url(), "--max-retries", "0"], tmp_path)  # fmt: skip
    _out, err = proc.communicate(timeout=600)
    assert proc.returncode == 2, err
    assert store.is_file() and sorted(p.name for p in tmp_path.rglob("*")) == [
        "perfgym.sqlite",
        "results",
    ]


def test_out_dir_is_a_folder_and_the_old_o_still_works_with_one_warning(tmp_path: Path) -> None:
    proc = _start(["dataset", "grpo", "perfgym-core", "--split", "all", "-o", "old"], tmp_path)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    warnings = [ln for ln in err.splitlines() if ln.strip()]
    assert len(warnings) == 1 and "deprecated" in warnings[0] and "--out-dir" in warnings[0]
    assert (tmp_path / "old" / "all.parquet").is_file()
    both = _start(["dataset", "grpo", "perfgym-core", "-o", "a", "--out-dir", "b"], tmp_path)
    _out, err = both.communicate(timeout=600)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert both.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:"), err
