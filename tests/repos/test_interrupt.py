"""Interrupting a long repository command leaves no copies behind and no half-written task."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from perfgym.repos.loading import builtin_suite_dir


def test_interrupted_expert_measurement_cleans_up(tmp_path: Path, repo_cache: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(builtin_suite_dir() / "textindex", suite / "textindex")
    toml = (suite / "textindex" / "task.toml").read_text()
    cache = repo_cache / "interrupt"
    env = {**os.environ, "PERFGYM_REPO_CACHE": str(cache),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "perfgym.repos.expert", str(suite), "--rounds", "50", "--write"],
        env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    copies = cache / "copies"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if copies.is_dir() and any(p.is_dir() for p in copies.iterdir()):
            break  # the original's copy exists: it is checking the task
        time.sleep(0.2)
    assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err
    assert list(copies.iterdir()) == []
    assert (suite / "textindex" / "task.toml").read_text() == toml
