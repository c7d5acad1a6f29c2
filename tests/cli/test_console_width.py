"""Console tables honour COLUMNS, and a pipe or a CI log gets 100 columns (it got 220)."""

from __future__ import annotations

import subprocess
import sys


def _width(env_columns: str | None) -> int | None:
    import os

    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if env_columns is not None:
        env["COLUMNS"] = env_columns
    code = "from perfgym.cli.output import console; print(console.width)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120, check=True)  # fmt: skip
    return int(out.stdout.strip())


def test_columns_is_honoured_when_piped():
    assert _width("100") == 100
    assert _width("132") == 132


def test_piped_without_columns_gets_100_and_nonsense_is_ignored():
    assert _width(None) == 100
    assert _width("abc") == 100 and _width("5") == 100
