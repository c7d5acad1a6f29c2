"""Ctrl-C during `perfgym agent`: exit 130 with one line, the attempts already evaluated stay in
the results file, and no repository copy is left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from scripts import act, submit

from perfgym.llm.script import Script
from perfgym.llm.scripted import ScriptedServer

SRC = Path(__file__).resolve().parents[2] / "src"
TOML = """\
id = "dedup"
repo = "repo"
test_command = "python3 -m pytest -q -p no:cacheprovider tests"

[[workloads]]
name = "visible"
script = "workloads/visible.py"

[[workloads]]
name = "hidden"
script = "workloads/hidden.py"
hidden = true
"""
FAST_CORE = "def dedup(items):\n    return list(dict.fromkeys(items))\n"


def test_ctrl_c_keeps_finished_attempts(agent_cache, dedup_task, tmp_path):  # type: ignore[no-untyped-def]
    (dedup_task.folder / "task.toml").write_text(TOML)
    out = tmp_path / "agent.jsonl"
    answers = [
        act("Order-preserving dict dedup.", f"printf '%s' '{FAST_CORE}' > dedup/_core.py"),
        submit(),
        act("Thinking.", "sleep 3"),  # repeated from here on: the agent stays busy
    ]
    env = {**os.environ, "PYTHONPATH": str(SRC), "PERFGYM_REPO_CACHE": str(agent_cache)}
    with ScriptedServer(Script(tasks={"dedup": answers})) as srv:
        proc = subprocess.Popen(
            [sys.executable, "-m", "perfgym", "agent", str(dedup_task.folder), "--model", "scripted",
             "--base-url", srv.base_url, "--rounds", "3", "--test-runs", "1",
             "--profile-seconds", "0.2", "-o", str(out)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 600  # a hang guard: the setup is slow under load
            while time.monotonic() < deadline and proc.poll() is None:
                if out.exists() and '"kind": "attempt"' in out.read_text():
                    break
                time.sleep(0.5)
            time.sleep(1.0)  # the agent is now in its `sleep 3` steps
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=240)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 130, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines[-1].startswith("interrupted: kept 0 of 1 tasks") and "Traceback" not in err
    records = [json.loads(ln) for ln in out.read_text().splitlines()]
    assert records[0]["kind"] == "header"
    first = next(r for r in records if r["kind"] == "attempt")
    assert first["index"] == 1 and first["stage"] == "measured" and first["speedup"] > 1
    leftovers = [p for p in agent_cache.rglob("copy-*") if p.is_dir()]
    leftovers += [p for p in (tmp_path / "agent.files").rglob("copy-*") if p.is_dir()]
    assert leftovers == []
