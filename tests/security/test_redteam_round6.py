"""Red team, round 6: can a wrong candidate buy an OK through the reference runs kept on disk?

The judge keeps a task's reference runs (the expected outputs of its tests) on disk between
judges (`perfgym.judge.reference_disk`), keyed by a SHA-256 of what the runs depend on and
HMAC-checked; a wrong answer judged against a kept output stands only if a fresh reference run
gives that output again (`ExpectedOutputs.confirm`). A candidate that MATCHES a kept output is
never confirmed: any difference between what was kept and what the reference gives now is an
OK for a candidate that answers what was kept. Each test runs the real judge and sandbox on a
two-test correctness-only task and asserts the SAFE behaviour. Found on 5864560 (branch
redteam36); both closed on branch cachefix.

  test_kept_outputs_of_another_sandbox_interpreter_are_not_trusted        CLOSED (was OK: the key
      holds the JUDGE's `sys.version`, not the interpreter the runs use, which is
      `SandboxConfig.python`. A judge on the host's 3.11.7 keeps the reference's outputs; a
      judge whose sandbox runs /usr/bin/python3.11 (3.11.2) reads them under the same key. A
      candidate returning the constant the reference gave under 3.11.7 is OK; the same judge
      without a cache says WO "expected '3.11.2 ...', got '3.11.7 ...'". The honest reference
      still passes there (its WO is confirmed away), so nothing flags the stale entry. The
      same gap holds for anything else a run sees and the key does not hold: the sandbox's
      site-packages (a library upgraded under the reference), site_hooks.)
  test_a_confirmation_does_not_turn_a_wrong_answer_into_an_ok            CLOSED (was OK with a warm
      cache, WO without one, same judge config: the reference's kept outputs come from one
      batch process, the confirmation from a fresh process alone. A reference that is not a
      pure function of its arguments (here a mutable default: a call counter) gives 1, 2 in the
      batch and 1 alone; the candidate `return 1` is judged against the fresh 1 on t1 and
      passes. With a random reference a wrong candidate gets a second draw on every test it
      fails. Without a cache, or on a cold one, the verdict is WO "expected 2, got 1".)

Tried and failed (the cache held):
  * a candidate reading the kept outputs or the HMAC key from inside the sandbox: the default
    root /var/tmp/perfgym/reference-runs is not in a run's view (FileNotFoundError; /var/tmp/
    perfgym shows only helpers/); a root put inside a bound directory (sys.prefix) is in the
    view but 0700 root's, and runs are uid nobody: PermissionError on the root.
  * a root another user owns, or one group-writable: "not private to this user; nothing kept"
    (the cache is off, nothing read).
  * an HMAC key file readable by others: refused, the cache off.
  * an entry with an output edited and its MAC kept: "fails its check; ignored" (runs made
    again); an authentic entry copied under another task's key: ignored (the key is inside
    the MACed body); an entry truncated to half: ignored.
  * another user owning the root's PARENT (a pre-made /var/tmp/perfgym) renaming the root away
    after the judge opened it and putting a copy of its own in place: every entry is then
    theirs, and an entry not owned by the judge is ignored (fstat of the open file); files
    the judge writes there carry its own MAC under their own key, so a replay gives only the
    authentic runs; hard links to the judge's files are refused (protected_hardlinks=1).
  * two judges writing one entry at once: 4 processes opening one fresh root together (the
    key file's race) and each saving and loading one 50-test entry 300 times read 1,200 whole,
    right entries, one key, no stray temporary file (written whole, then renamed or linked).
  * a candidate changing the warm worker that later runs the reference's confirmation and
    re-batch (whose outputs would then be kept on disk for every later judge): the run's uid
    is its own, not the server's; opening /proc/<server>/mem for writing is PermissionError.

Run: PYTHONPATH=src python3 -m pytest -q tests/security/test_redteam_round6.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from perfgym.judge.config import JudgeConfig
from perfgym.judge.judge import Judge
from perfgym.judge.verdict import Stage
from perfgym.sandbox.base import SandboxConfig
from perfgym.sandbox.factory import make_sandbox
from perfgym.tasks.task import Language, Oracle, Solution, Task, TaskKind, TestCase

#: A second interpreter of the same minor version (Debian's), where the host has one.
OTHER_PYTHON = "/usr/bin/python3.11"


def _task(task_id: str, reference: str) -> Task:
    """A correctness-only function task of two tests whose expected outputs are the
    reference's (nothing measured: seconds per judge)."""
    return Task(id=task_id, family="math", language=Language.PYTHON, kind=TaskKind.FUNCTION,
                entry_point="f", goal="Return what the reference returns.",
                baseline=Solution(label="baseline", source=reference),
                references=[Solution(label="reference", source=reference)],
                tests=[TestCase(id=f"t{k}", args=[k]) for k in range(2)], workloads=[],
                oracle=Oracle(kind="exact"), metadata={"not_timed": True})  # fmt: skip


@pytest.fixture
def cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh reference cache root (tests run with PERFGYM_REFERENCE_CACHE=off by default)."""
    monkeypatch.delenv("PERFGYM_REFERENCE_CACHE", raising=False)
    return str(tmp_path / "reference-runs")


def _other_version() -> str | None:
    if not os.path.exists(OTHER_PYTHON):
        return None
    out = subprocess.run([OTHER_PYTHON, "-c", "import sys; print(sys.version)"],
                         capture_output=True, text=True, check=False)  # fmt: skip
    version = out.stdout.strip()
    return version if out.returncode == 0 and version and version != sys.version else None


def test_kept_outputs_of_another_sandbox_interpreter_are_not_trusted(cache_root: str) -> None:
    if _other_version() is None:
        pytest.skip(f"no second Python interpreter of another version at {OTHER_PYTHON}")
    reference = "import sys\n\ndef f(k):\n    return sys.version\n"
    task = _task("rt6_sandbox_python", reference)
    config = JudgeConfig(reference_cache=cache_root)
    with Judge(config) as judge:  # keeps the reference's outputs under the host's interpreter
        assert judge.judge(task, source=reference).stage is Stage.OK
    stale = f"def f(k):\n    return {sys.version!r}\n"  # no work: what was kept
    sandbox = make_sandbox("warm", SandboxConfig(python=OTHER_PYTHON))
    try:
        with Judge(config, sandbox=sandbox) as judge:
            verdict = judge.judge(task, source=stale)
    finally:
        sandbox.close()
    assert verdict.stage is Stage.WO, (verdict.stage, verdict.reason)


def test_a_confirmation_does_not_turn_a_wrong_answer_into_an_ok(cache_root: str) -> None:
    reference = "def f(k, _calls=[]):\n    _calls.append(k)\n    return len(_calls)\n"
    task = _task("rt6_confirm_flip", reference)
    wrong = "def f(k):\n    return 1\n"
    with Judge(JudgeConfig(reference_cache=None)) as judge:
        uncached = judge.judge(task, source=wrong)
    assert uncached.stage is Stage.WO, (uncached.stage, uncached.reason)
    with Judge(JudgeConfig(reference_cache=cache_root)) as judge:  # keeps the batch's 1, 2
        assert judge.judge(task, source=wrong).stage is Stage.WO
    with Judge(JudgeConfig(reference_cache=cache_root)) as judge:  # reads them back
        verdict = judge.judge(task, source=wrong)
    assert verdict.stage is uncached.stage, (verdict.stage, verdict.reason)
