"""One submitted patch, validated and measured: fresh copy → apply → build → selected tests →
workloads against the original (fresh processes, interleaved) → hack checks → re-profile."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from perfgym.agent.attempt import Attempt, HackFinding, WorkloadSpeed
from perfgym.agent.errors import ProfileError
from perfgym.agent.profile import Profile, ProfileConfig, profile_workload
from perfgym.agent.shell import command_limits
from perfgym.agent.validation import TestBaseline, TestRun, run_tests
from perfgym.repos.checks import TaskCheckError, build_copy
from perfgym.repos.copy import RepoCopy
from perfgym.repos.hacks_testconfig import testconfig_findings
from perfgym.repos.measure import TaskMeasurement, measure_workloads
from perfgym.repos.runner import workload_path
from perfgym.repos.shell import PatchError
from perfgym.repos.task import RepoTask
from perfgym.sandbox import Sandbox
from perfgym.timing.estimators import geometric_mean

HackCheck = Callable[[RepoTask, str, Path, "TaskMeasurement | None"], Sequence[HackFinding]]
"""(task, diff, patched copy, measurement or None for the static checks alone) -> findings."""


@dataclass
class Workbench:
    """What every evaluation of one task shares: the built original, its test baseline."""

    task: RepoTask
    sandbox: Sandbox | None
    original: RepoCopy
    baseline: TestBaseline
    rounds: int = 5
    repeats: int = 2
    profile: ProfileConfig = field(default_factory=ProfileConfig)
    copies_root: Path | None = None
    hack_check: HackCheck | None = None


def profile_visible(bench: Workbench, copy: Path) -> list[Profile]:
    task = bench.task
    limits = command_limits(task.limits.workload_s, task.limits.memory_mb)
    return [
        profile_workload(
            bench.sandbox,
            copy,
            w.name,
            workload_path(task, w).read_text(),
            config=bench.profile,
            limits=limits,
        )  # fmt: skip
        for w in task.visible_workloads
    ]


def _geo(values: list[float]) -> float | None:
    return geometric_mean(values, "speed-up over workloads") if values else None


def significant(speeds: list[WorkloadSpeed], ci: tuple[float, float] | None) -> bool:
    """Whether a patch counts as faster: decided on the workloads the agent never saw (its
    task's hidden ones, every one significantly faster) where the task has any, else on the
    visible ones; and the whole task's interval above 1."""
    hidden = [w for w in speeds if w.hidden]
    decided = hidden or [w for w in speeds if not w.hidden]
    faster = all(w.significant and (w.speedup or 0.0) > 1.0 for w in decided)
    return bool(decided) and faster and (ci is None or ci[0] > 1.0)


def workload_failure(m: TaskMeasurement) -> str:
    """What the agent is told about failed workloads: a visible one's error in full, a hidden
    one only that it failed and how (never its name, script, input or traceback)."""
    parts = []
    for w in m.workloads:
        if not w.error and w.outputs_match:
            continue
        if not w.hidden:
            parts.append(f"{w.name}: {w.error or 'outputs differ from the original'}")
        elif "outputs differ" in w.error or not w.error:
            parts.append("a hidden workload: outputs differ from the original's")
        else:
            parts.append("a hidden workload: the run failed")
    return "; ".join(dict.fromkeys(parts)) or "outputs differ from the original's"


def _speeds(m: TaskMeasurement) -> list[WorkloadSpeed]:
    return [WorkloadSpeed(name=w.name, hidden=w.hidden, speedup=w.speedup, ci=w.ci,
                          significant=w.significant, outputs_match=w.outputs_match,
                          error=w.error) for w in m.workloads]  # fmt: skip


def evaluate_patch(bench: Workbench, attempt: Attempt, speedscope_dir: Path | None) -> tuple[Attempt, TestRun | None, list[Profile]]:  # fmt: skip
    """Fill in `attempt` (its diff set) stage by stage; the first failing stage ends it."""
    start = time.monotonic()
    result, tests, profiles = _stages(bench, attempt, speedscope_dir)
    result.wall_s = time.monotonic() - start
    return result, tests, profiles


def _stages(bench: Workbench, attempt: Attempt, speedscope_dir: Path | None) -> tuple[Attempt, TestRun | None, list[Profile]]:  # fmt: skip
    task = bench.task
    try:
        copy = build_copy(task, attempt.diff, sandbox=bench.sandbox, dest_root=bench.copies_root)
    except PatchError as exc:
        return attempt.model_copy(update={"stage": "apply", "detail": str(exc)}), None, []
    except TaskCheckError as exc:
        return attempt.model_copy(update={"stage": "build", "detail": str(exc)}), None, []
    tests: TestRun | None = None
    profiles: list[Profile] = []
    try:
        update: dict[str, object] = {}
        static: list[HackFinding] = []
        if bench.hack_check is not None:  # the static checks, whatever the tests say
            static = list(bench.hack_check(task, attempt.diff, copy.path, None))
            update["hacks"] = static
        outcome_hacks = testconfig_findings(attempt.diff, copy.path)
        if outcome_hacks:  # test configuration or pytest reached into: the tests cannot decide
            found = [HackFinding(kind=f.kind, evidence=f"{f.message} ({f.evidence})")
                     for f in outcome_hacks]  # fmt: skip
            update |= {"stage": "tests", "hacks": [*static, *(f for f in found if f not in static)],
                       "detail": "the patch changes how the tests run: "
                                 + "; ".join(f.message for f in outcome_hacks[:3])}  # fmt: skip
            return attempt.model_copy(update=update), None, []
        tests = run_tests(bench.sandbox, copy.path, task, bench.baseline)
        update |= {"tests_mode": tests.mode, "tests_ran": tests.ran,
                                     "tests_failed": tests.failed, "tests_wall_s": tests.wall_s}  # fmt: skip
        if not tests.passed:
            update |= {"stage": "tests", "detail": tests.output_tail}
            return attempt.model_copy(update=update), tests, []
        m = measure_workloads(task, bench.original, copy, rounds=bench.rounds,
                              repeats=bench.repeats, sandbox=bench.sandbox)  # fmt: skip
        speeds = _speeds(m)
        visible = [w.speedup for w in speeds if not w.hidden and w.speedup]
        hidden = [w.speedup for w in speeds if w.hidden and w.speedup]
        update |= {
            "workloads": speeds,
            "speedup": m.speedup,
            "ci": m.ci,
            "visible_speedup": _geo(visible),
            "hidden_speedup": _geo(hidden),
            "significant": significant(speeds, m.ci),
        }
        if not m.correct:
            update |= {"stage": "workload", "detail": workload_failure(m)}
            return attempt.model_copy(update=update), tests, []
        if bench.hack_check is not None:
            update["hacks"] = list(bench.hack_check(task, attempt.diff, copy.path, m))
        try:
            profiles = profile_visible(bench, copy.path)
        except ProfileError as exc:
            update["detail"] = f"re-profile failed: {exc}"
        update["profile_summary"] = "\n".join(p.summary for p in profiles)
        if profiles and speedscope_dir is not None:
            name = f"{task.id}.attempt{attempt.index}.speedscope.json"
            (speedscope_dir / name).write_text(profiles[0].speedscope)
            update["speedscope"] = name
        update["stage"] = "measured"
        return attempt.model_copy(update=update), tests, profiles
    finally:
        copy.remove()
