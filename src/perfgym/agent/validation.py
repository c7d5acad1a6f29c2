"""Selective validation (PerfAgent §III-D): testmon's database built on the original repository,
failing and flaky tests filtered by N shuffled runs, a patch's affected tests, the full suite."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from pydantic import BaseModel, Field

from perfgym.agent.errors import ValidationSetupError
from perfgym.agent.shell import command_limits, run_in_copy
from perfgym.repos.task import RepoTask
from perfgym.sandbox import Sandbox

_PLUGIN = "perfgym_testlog"
_OUTCOMES = "perfgym_outcomes.json"
_DB = ".testmondata"
_PLUGIN_SOURCE = '''\
"""Shuffles the collected tests (seed PERFGYM_SHUFFLE_SEED) and records every test's outcome."""
import json, os, random

_outcomes = {}


def pytest_collection_modifyitems(session, config, items):
    seed = os.environ.get("PERFGYM_SHUFFLE_SEED")
    if seed is not None:
        random.Random(int(seed)).shuffle(items)


def pytest_runtest_logreport(report):
    if report.failed:
        _outcomes[report.nodeid] = "failed"
    elif report.when == "call":
        _outcomes.setdefault(report.nodeid, "skipped" if report.skipped else "passed")
    elif report.skipped:
        _outcomes.setdefault(report.nodeid, "skipped")


def pytest_sessionfinish(session, exitstatus):
    with open("/tmp/perfgym_outcomes.json", "w") as f:
        json.dump(_outcomes, f)
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
    """False when the test command is not pytest: every patch then runs the whole command."""
    database: bytes = Field(default=b"", exclude=True, repr=False)

    @property
    def excluded(self) -> list[str]:
        return sorted(set(self.flaky) | set(self.broken))


class TestRun(BaseModel):
    """One test run on a patched copy."""

    mode: str
    """"selected" (testmon), "full" (the whole suite less the excluded tests) or "command"."""
    passed: bool
    ran: int
    failed: list[str]
    missing: list[str] = []
    wall_s: float
    output_tail: str


def is_pytest(command: str) -> bool:
    return "pytest" in shlex.split(command)[:4] or "pytest" in command.split()[:3]


def _pytest_args(task: RepoTask, extra: list[str]) -> str:
    return f"{task.test_command} -p {_PLUGIN} " + " ".join(shlex.quote(a) for a in extra)


def _outcomes(files: dict[str, bytes]) -> dict[str, str]:
    raw = files.get(_OUTCOMES, b"")
    if not raw or len(raw) > 16 * 1024 * 1024:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def build_baseline(
    sandbox: Sandbox | None, copy: Path, task: RepoTask, *, runs: int = 3, seed: int = 0
) -> TestBaseline:
    """Run the whole suite `runs` times in shuffled orders on the (built) original copy; the
    first run also builds testmon's database. A test failing in every run is broken, in some
    runs flaky; both are left out of every later run."""
    limits = command_limits(task.limits.test_s, task.limits.memory_mb)
    if not is_pytest(task.test_command):
        res = run_in_copy(sandbox, copy, task.test_command, limits=limits)
        if not res.ok:
            raise ValidationSetupError(
                f"the test command fails on the original: {_last(res.output)}"
            )
        return TestBaseline(runs=1, stable=[], flaky=[], broken=[], full_wall_s=[res.wall_s],
                            selectable=False)  # fmt: skip
    seen: list[dict[str, str]] = []
    walls: list[float] = []
    database = b""
    for i in range(max(1, runs)):
        extra = ["--testmon", "--testmon-forceselect"] if i == 0 else []
        cmd = _pytest_args(task, extra) + (f"; rc=$?; {_CHECKPOINT}; exit $rc" if i == 0 else "")
        res = run_in_copy(
            sandbox, copy, cmd, limits=limits,
            files={f"{_PLUGIN}.py": _PLUGIN_SOURCE},
            collect=(_OUTCOMES, _DB) if i == 0 else (_OUTCOMES,),
            env={"PERFGYM_SHUFFLE_SEED": str(seed + i), "TESTMON_DATAFILE": f"/tmp/{_DB}"},
        )  # fmt: skip
        outcome = _outcomes(res.files)
        if not outcome:
            raise ValidationSetupError(
                f"the test command fails on the original: {_last(res.output)}"
            )
        if i == 0:
            database = res.files.get(_DB, b"")
        seen.append(outcome)
        walls.append(res.wall_s)
    names = sorted(set().union(*seen))
    broken = [n for n in names if all(o.get(n) == "failed" for o in seen)]
    flaky = [n for n in names if n not in broken and any(o.get(n, "missing") in ("failed", "missing") for o in seen)]  # fmt: skip
    stable = [n for n in names if n not in broken and n not in flaky and seen[0][n] == "passed"]
    if not stable:
        raise ValidationSetupError("no test of the original repository passes reliably")
    return TestBaseline(runs=len(seen), stable=stable, flaky=flaky, broken=broken,
                        full_wall_s=walls, selectable=bool(database), database=database)  # fmt: skip


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
) -> TestRun:
    """The tests of a patched, built copy: testmon's selection (`--testmon-forceselect`, which
    also works beside `-p no:cacheprovider`), or with `full` every stable test."""
    limits = command_limits(task.limits.test_s, task.limits.memory_mb)
    if not baseline.selectable:
        res = run_in_copy(sandbox, copy, task.test_command, limits=limits)
        return TestRun(mode="command", passed=res.ok, ran=0, failed=[] if res.ok else ["<command>"],
                       wall_s=res.wall_s, output_tail=res.output[-2000:])  # fmt: skip
    extra = [a for n in baseline.excluded for a in ("--deselect", n)]
    files: dict[str, str | bytes] = {f"{_PLUGIN}.py": _PLUGIN_SOURCE}
    env = {"TESTMON_DATAFILE": f"/tmp/{_DB}"}
    if not full:
        extra = ["--testmon", "--testmon-forceselect", *extra]
        files[_DB] = baseline.database
    res = run_in_copy(sandbox, copy, _pytest_args(task, extra), limits=limits, files=files,
                      collect=(_OUTCOMES,), env=env)  # fmt: skip
    outcome = _outcomes(res.files)
    failed = sorted(n for n, o in outcome.items() if o == "failed")
    missing = sorted(set(baseline.stable) - set(outcome)) if full else []
    clean_exit = res.returncode in (0, 5) and res.status == "OK"
    return TestRun(
        mode="full" if full else "selected",
        passed=clean_exit and not failed and not missing,
        ran=sum(1 for o in outcome.values() if o != "skipped"),
        failed=failed,
        missing=missing,
        wall_s=res.wall_s,
        output_tail=res.output[-2000:],
    )
