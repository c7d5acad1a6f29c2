"""`perfgym eval --model -k 2`: pass@k by the unbiased estimator per task, then the mean over
tasks; `n` counts tasks and `samples` samples, in one format (fractions) in the console, the
JSON and the HTML report; the failure reasons are printed as `eval --candidates` prints them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from small_tasks import SUM, sum_task

from perfgym.llm.script import Script
from perfgym.llm.scripted import ScriptedServer

SRC = Path(__file__).resolve().parents[2] / "src"
IDS = ["sum-marker-a", "sum-marker-b"]


def _perfgym(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-m", "perfgym", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def test_pass_at_k_is_per_task_then_over_tasks_in_one_format_everywhere(tmp_path: Path) -> None:
    suite = tmp_path / "tasks.jsonl"  # two tiny stdio tasks, the prompt names each one's goal
    suite.write_text("".join(sum_task(t).model_copy(update={"goal": f"Sum them ({t})."})
                             .model_dump_json() + "\n" for t in IDS))  # fmt: skip
    prose = "I cannot improve this."  # builds nothing: NC, judged without running anything
    good = f"```python\n{SUM}\n```"
    # Task 0: no sample passes; task 1: one of two. Pooled over samples pass@2 would be
    # 1 - C(3, 2)/C(4, 2) = 0.5 too, but pass@1 pooled and per task agree only by chance;
    # per task: pass@1 = (0 + 0.5) / 2 = 0.25, pass@2 = (0 + 1) / 2 = 0.5.
    script = Script().add(IDS[0], prose, prose).add(IDS[1], prose, good)
    config = tmp_path / "model.toml"
    args = ["eval", str(suite), "--model", "scripted", "--model-config", str(config),
            "-k", "2", "--task", IDS[0], "--task", IDS[1], "--repeats", "1", "-o", "r.jsonl",
            "--no-store"]  # fmt: skip
    with ScriptedServer(script) as srv:
        config.write_text(f'model = "scripted"\nbase_url = "{srv.base_url}"\n')
        shown = _perfgym(*args, cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr[-2000:]
        again = _perfgym(*args, "--json", cwd=tmp_path)  # every verdict reused from r.jsonl
    assert again.returncode == 0, again.stderr[-2000:]
    lines = shown.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 100, shown.stdout
    table = {ln.split()[0]: ln.split()[1:] for ln in lines if ln.strip()}
    assert table["tasks"] == ["2"] and table["samples"] == ["4"], shown.stdout
    assert table["pass@1"][0] == "0.250" and table["pass@2"][0] == "0.500", shown.stdout
    assert "failures by stage (top per model):" in shown.stdout
    assert "scripted: NC" in shown.stdout and "×3" in shown.stdout
    doc = json.loads(again.stdout)
    (row,) = doc["models"]
    assert row["n"] == 2 and row["samples"] == 4
    assert row["metrics"]["pass@1"][0] == 0.25 and row["metrics"]["pass@2"][0] == 0.5
    assert doc["failures"]["scripted"].startswith("NC")
    html = (tmp_path / "r.html").read_text()
    assert "scripted: 2 tasks, 4 samples; pass@1 0.250 [" in html
    assert "pass@2 0.500 [" in html
