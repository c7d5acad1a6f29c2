"""The import layers of DESIGN.md hold: `lint-imports` keeps every contract in pyproject.toml."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _executable() -> str | None:
    """import-linter's script beside this interpreter (a pyenv shim may not be made yet)."""
    beside = Path(sys.executable).parent / "lint-imports"
    return str(beside) if beside.exists() else shutil.which("lint-imports")


def _lint_imports() -> subprocess.CompletedProcess[str]:
    exe = _executable()
    if exe is None:
        pytest.fail(
            "lint-imports is not installed: `pip install -e .[test]` installs import-linter"
        )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [exe, "--no-cache"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240
    )


def test_every_layer_contract_is_kept() -> None:
    done = _lint_imports()
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout, done.stdout[-4000:]


def test_a_back_import_breaks_the_layers(tmp_path: Path) -> None:
    """The guard is live: a sandbox module importing the judge makes `lint-imports` fail, and so
    (in the same run) do a CLI module building a sandbox worker itself and a metric reaching
    ENAMEL's protocol (a layer above the metrics)."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "perfgym", src / "perfgym")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (src / "perfgym" / "sandbox" / "_back_import.py").write_text(
        '"""A deliberate layer violation."""\n\nimport perfgym.judge.verdict  # noqa: F401\n'
    )
    (src / "perfgym" / "cli" / "_back_import.py").write_text(
        '"""A CLI module building a worker."""\n\nimport perfgym.sandbox.pyworker  # noqa: F401\n'
    )
    (src / "perfgym" / "metrics" / "_back_import.py").write_text(
        '"""A metric running ENAMEL."""\n\nimport perfgym.enamel.protocol  # noqa: F401\n'
    )
    exe = _executable()
    assert exe is not None
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [exe, "--no-cache"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode != 0
    assert "perfgym.sandbox is not allowed to import perfgym.judge" in done.stdout
    out = " ".join(done.stdout.split())  # import-linter wraps long lines
    assert "the CLI builds no sandbox worker" in out and "BROKEN" in out
    assert "perfgym.cli._back_import -> perfgym.sandbox.pyworker" in out
    assert "perfgym.metrics is not allowed to import perfgym.enamel" in out


def test_a_local_eval_reaching_the_service_or_the_registry_a_kind_breaks_them(
    tmp_path: Path,
) -> None:
    """The registry's two contracts are live: `perfgym eval`'s module importing the service's
    backends, or the registry importing a kind's home, makes `lint-imports` fail; so do the
    eval <-> eval_model loop coming back and the evaluation layer importing the CLI."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "perfgym", src / "perfgym")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for module, target in (("cli/eval_cmd.py", "service.backend"), ("registry.py", "rewards"),
                           ("cli/eval_model.py", "cli.eval_cmd"), ("evaluation/run.py", "cli.output")):  # fmt: skip
        path = src / "perfgym" / module
        path.write_text(path.read_text() + f"\nimport perfgym.{target}  # noqa: E402,F401\n")
    exe = _executable()
    assert exe is not None
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [exe, "--no-cache"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode != 0
    assert "perfgym.cli.eval_cmd is not allowed to import perfgym.service" in done.stdout
    assert "perfgym.registry is not allowed to import perfgym.rewards" in done.stdout
    assert "perfgym.cli.eval_model is not allowed to import perfgym.cli.eval_cmd" in done.stdout
    assert "perfgym.evaluation is not allowed to import perfgym.cli" in done.stdout
    assert "perfgym.evaluation.run -> perfgym.cli.output" in done.stdout
