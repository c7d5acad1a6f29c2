"""The README's Python snippet runs as written: suite, judge, reward, metrics per model."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _snippet() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## In Python", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None, "README's 'In Python' section has no python block"
    return found.group(1)


def test_the_readme_snippet_runs(tmp_path: Path) -> None:
    code = _snippet()
    assert len(code.strip().splitlines()) <= 12, "the README snippet should stay about ten lines"
    script = tmp_path / "snippet.py"
    script.write_text(code)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("rlpf rewards: [")
    rewards = ast.literal_eval(lines[0].split(":", 1)[1].strip())
    assert len(rewards) == 4 and all(isinstance(r, float) for r in rewards)
    by_model = {m: ast.literal_eval(row) for m, row in (line.split(" ", 1) for line in lines[1:])}
    assert set(by_model) == {"baseline", "expert"}
    for row in by_model.values():
        assert set(row) == {"crr", "fbr", "rbr", "cgre"}
        assert row["crr"] == 1.0  # the suite's own baseline and reference are correct
