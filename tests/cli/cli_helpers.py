"""Running the real `perfgym` entry point, and what a one-line CLI error looks like."""

import os
import subprocess
import sys


def perfgym(*args, timeout=300):
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    return subprocess.run([sys.executable, "-m", "perfgym", *map(str, args)],
                          capture_output=True, text=True, errors="replace", timeout=timeout,
                          env=env)  # fmt: skip


def one_line_error(p, *needles):
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 2, (p.returncode, p.stderr[-3000:])
    assert "Traceback" not in p.stderr
    assert len(lines) == 1 and lines[0].startswith("error:"), p.stderr[-3000:]
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]
