"""Selective validation (PerfAgent §III-D): testmon's database built on the original repository,
failing and flaky tests filtered by N shuffled runs, a patch's affected tests, the full suite.

Every pytest run goes through perfgym's test supervisor (`perfgym.repos.outcomes`): outcomes
leave pytest as they happen, under the original's pytest configuration, and the full suite must
pass every stable test of the baseline; a selection of no test runs the full suite instead."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from perfgym.agent.errors import ValidationSetupError
from perfgym.agent.shell import CLEAN_ENV, command_limits, run_in_copy
from perfgym.repos.outcomes import (
    PytestConfig,
    SupervisedRun,
    original_config,
    pytest_argv,
    run_supervised,
)
from perfgym.repos.task import RepoTask
from perfgym.repos.verdict import PatchTests
from perfgym.sandbox import Sandbox

_SHUFFLE = "perfgym_shuffle"
_DB = ".testmondata"
_SHUFFLE_SOURCE = '''\
"""Shuffles the collected tests (seed PERFGYM_SHUFFLE_SEED)."""
import os, random


def pytest_collection_modifyitems(session, config, items):
    seed = os.environ.get("PERFGYM_SHUFFLE_SEED")
    if seed is not None:
        random.Random(int(seed)).shuffle(items)
'''
_CHECKPOINT = (
    "python3 -c \"import sqlite3; c = sqlite3.connect('/tmp/.testmondata'); "
    "c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.execute('PRAGMA journal_mode=DELETE'); "
    'c.close()"'
)


class TestBaseline(BaseModel):
    """The original repository's suite: the tests kept, those dropped, testmon's database."""

    runs: int
    stable: list[str]
    flaky: list[str]
    broken: list[str]
    full_wall_s: list[float]
    selectable: bool
    """False when testmon built no database (every patch then runs the full suite) or the
    test command is not a plain pytest command (every patch then runs the whole command)."""
    supervised: bool = True
    """The test command is a plain pytest command, run under perfgym's test supervisor."""
    config_name: str = ""
    config_text: str = Field(default="", repr=False)
    config_originals: dict[str, str] | None = Field(default=None, exclude=True, repr=False)
    """The original's pytest configuration file (every run uses it, never a patch's)."""
    config_logs: bool = True
    """Whether the original's tests use pytest's logging plugin (`PytestConfig.logs`)."""
    config_warns: bool = True
    """Whether they use its warnings plugin (`PytestConfig.warns`)."""
    database: bytes = Field(default=b"", exclude=True, repr=False)

    @property
    def excluded(self) -> list[str]:
        return sorted(set(self.flaky) | set(self.broken))


def is_pytest(command: str) -> bool:
    """A plain pytest command (`pytest ...`, `python -m pytest ...`): supervised, selectable."""
    return pytest_argv(command) is not None


def _supervised(
    sandbox: Sandbox | None, copy: Path, task: RepoTask, config: PytestConfig, *,
    extra: tuple[str, ...] = (), expected: list[str] | None = None,
    stable: list[str] | None = None,
    files: dict[str, str | bytes] | None = None, env: dict[str, str] | None = None,
    collect: tuple[str, ...] = (), after: str = "",
) -> SupervisedRun:  # fmt: skip
    return run_supervised(copy, task.test_command, timeout_s=task.limits.test_s,
                          memory_mb=task.limits.memory_mb, config=config, expected=expected, stable=stable,
                          extra_args=extra, files=files, collect=collect,
                          env={**CLEAN_ENV, **(env or {})}, after=after, sandbox=sandbox,
                          protected=task.protected_paths)  # fmt: skip


def build_baseline(
    sandbox: Sandbox | None, copy: Path, task: RepoTask, *, runs: int = 3, seed: int = 0
) -> TestBaseline:
    """Run the whole suite `runs` times in shuffled orders on the (built) original copy; the
    first run also builds testmon's database. A test failing in every run is broken, in some
    runs flaky; both are left out of every later run."""
    if not is_pytest(task.test_command):
        limits = command_limits(task.limits.test_s, task.limits.memory_mb)
        plain = run_in_copy(sandbox, copy, task.test_command, limits=limits)
        if not plain.ok:
            raise ValidationSetupError(
                f"the test command fails on the original: {_last(plain.output)}"
            )
        return TestBaseline(runs=1, stable=[], flaky=[], broken=[], full_wall_s=[plain.wall_s],
                            selectable=False, supervised=False)  # fmt: skip
    config = original_config(copy)
    seen: list[dict[str, str]] = []
    walls: list[float] = []
    database = b""
    for i in range(max(1, runs)):
        extra = ("-p", _SHUFFLE, *(("--testmon", "--testmon-forceselect") if i == 0 else ()))
        res = _supervised(sandbox, copy, task, config, extra=extra,
                          files={f"{_SHUFFLE}.py": _SHUFFLE_SOURCE},
                          collect=(_DB,) if i == 0 else (),
                          env={"PERFGYM_SHUFFLE_SEED": str(seed + i),
                               "TESTMON_DATAFILE": f"/tmp/{_DB}"},
                          after=_CHECKPOINT if i == 0 else "")  # fmt: skip
        outcome = res.outcomes
        if not outcome:
            why = "; ".join(res.problems[:2]) or _last(res.output)
            raise ValidationSetupError(f"the test command fails on the original: {why}")
        if i == 0:
            database = res.files.get(_DB, b"")
        seen.append(outcome)
        walls.append(res.wall_s)
    names = sorted(set().union(*seen))
    broken = [n for n in names if all(o.get(n) == "failed" for o in seen)]
    flaky = [n for n in names if n not in broken and any(o.get(n, "missing") not in ("passed", "skipped") for o in seen)]  # fmt: skip
    stable = [n for n in names if n not in broken and n not in flaky and seen[0][n] == "passed"]
    if not stable:
        raise ValidationSetupError("no test of the original repository passes reliably")
    return TestBaseline(runs=len(seen), stable=stable, flaky=flaky, broken=broken,
                        full_wall_s=walls, selectable=bool(database), config_name=config.name,
                        config_text=config.text, config_originals=config.originals,
                        config_logs=config.logs, config_warns=config.warns,
                        database=database)  # fmt: skip


def _last(output: str) -> str:
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "no output"


def run_tests(
    sandbox: Sandbox | None,
    copy: Path,
    task: RepoTask,
    baseline: TestBaseline,
    *,
    full: bool = False,
) -> PatchTests:
    """The tests of a patched, built copy: testmon's selection (`--testmon-forceselect`, which
    also works beside `-p no:cacheprovider`), or with `full` every stable test."""
    if not baseline.supervised:
        limits = command_limits(task.limits.test_s, task.limits.memory_mb)
        plain = run_in_copy(sandbox, copy, task.test_command, limits=limits)
        return PatchTests(mode="command", passed=plain.ok, ran=0,
                          failed=[] if plain.ok else ["<command>"], wall_s=plain.wall_s,
                          reason="" if plain.ok else _last(plain.output),
                          output=plain.output[-2000:])  # fmt: skip
    config = PytestConfig(name=baseline.config_name, text=baseline.config_text,
                          originals=baseline.config_originals, logs=baseline.config_logs,
                          warns=baseline.config_warns)  # fmt: skip
    deselect = tuple(a for n in baseline.excluded for a in ("--deselect", n))
    env = {"TESTMON_DATAFILE": f"/tmp/{_DB}"}
    if not full and baseline.selectable:
        res = _supervised(sandbox, copy, task, config, env=env,
                          extra=("--testmon", "--testmon-forceselect", *deselect),
                          stable=baseline.stable,
                          files={_DB: baseline.database})  # fmt: skip
        if res.collected > 0 or res.problems != ["no test ran"]:
            return _test_run("selected", res)
        # testmon selected nothing: the full suite decides (never "passed, 0 run")
    res = _supervised(sandbox, copy, task, config, extra=deselect, expected=baseline.stable,
                      env=env)  # fmt: skip
    return _test_run("full", res)


def _test_run(mode: str, res: SupervisedRun) -> PatchTests:
    return PatchTests(
        mode=mode,
        passed=res.passed,
        ran=res.ran,
        failed=res.failed,
        missing=res.missing,
        problems=res.problems,
        wall_s=res.wall_s,
        reason="" if res.passed else res.summary,
        output=(res.output[-2000:] + "\n[perfgym] tests: " + res.summary)[-2400:],
    )
