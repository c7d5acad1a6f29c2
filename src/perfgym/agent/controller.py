"""The PerfAgent controller: profile the original, let the inner agent patch, validate and
measure each submission, feed the result back, keep the best patch, check it on the full suite."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from perfgym.agent.attempt import Attempt, AttemptStage
from perfgym.agent.environment import SandboxEnvironment
from perfgym.agent.inner import ContinuingAgent
from perfgym.agent.model_adapter import PerfgymModel
from perfgym.agent.profile import ProfileConfig
from perfgym.agent.prompts import (
    DUPLICATE_FEEDBACK,
    EMPTY_FEEDBACK,
    INSTANCE_TEMPLATE,
    SYSTEM_TEMPLATE,
    failure_feedback,
    measured_feedback,
)
from perfgym.agent.selector import best_attempt, speedup_curve
from perfgym.agent.validation import build_baseline, run_tests
from perfgym.agent.workbench import Workbench, judge_attempt, profile_visible
from perfgym.llm.protocol import ChatModel
from perfgym.repos.checks import TaskCheckError, build_copy, check_task
from perfgym.repos.copy import RepoCopy
from perfgym.repos.evaluate import HackCheck
from perfgym.repos.runner import workload_path
from perfgym.repos.shell import PatchError, run_shell, take_patch
from perfgym.repos.task import RepoTask
from perfgym.sandbox import Sandbox


class AgentSettings(BaseModel):
    """The loop's knobs and budgets (PerfAgent: θ = 5, $5 and 200 steps per task)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    iterations: int = 5
    step_limit: int = 200
    cost_limit: float = 5.0
    token_limit: int = 0
    wall_limit_s: float = 0.0
    tools: bool = False
    command_timeout_s: float = 60.0
    test_runs: int = 3
    rounds: int = 5
    repeats: int = 2
    profile: ProfileConfig = Field(default_factory=ProfileConfig)


class TaskPrep(BaseModel):
    """What task setup found on the original: the kept, flaky and broken tests, its profile."""

    stable_tests: int
    flaky: list[str]
    broken: list[str]
    full_suite_s: float
    profile_summary: str
    speedscope: str = ""


class AgentResult(BaseModel):
    """One task's run: every attempt, the best one, the full-suite check, spend and curve."""

    task_id: str
    model: str
    exit_status: str
    prep: TaskPrep
    attempts: list[Attempt]
    best: int | None = None
    """Index of the kept submission (None: no correct, significantly faster, unflagged patch)."""
    best_speedup: float | None = None
    best_ci: tuple[float, float] | None = None
    best_patch: str = ""
    full_suite_passed: bool | None = None
    rejected_by_full_suite: list[int] = Field(default_factory=list)
    curve: list[float] = Field(default_factory=list)
    agent_steps: int = 0
    commands: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0
    expert_speedup: float | None = None


OnAttempt = Callable[[Attempt], None]


class Controller:
    """Runs one task end to end. `on_attempt` sees each attempt as soon as it is evaluated."""

    def __init__(self, task: RepoTask, chat: ChatModel, sandbox: Sandbox | None, *,
                 settings: AgentSettings | None = None, work_dir: Path,
                 hack_check: HackCheck | None = None, on_attempt: OnAttempt | None = None) -> None:  # fmt: skip
        self.task = task
        self.chat = chat
        self.sandbox = sandbox
        self.settings = settings or AgentSettings()
        self.work_dir = work_dir
        self.hack_check = hack_check
        self.on_attempt = on_attempt
        self.attempts: list[Attempt] = []
        self._seen_diffs: set[str] = set()
        self._last_rejected = False
        self._stop = False

    # -- setup, before any model call -------------------------------------------------------
    def prepare(self) -> tuple[Workbench, TaskPrep]:
        """Check the task (`perfgym.repos.checks.check_task`: fetch, build, test, run each
        workload), build the test baseline and profile the original; a task that cannot run
        is one line (TaskCheckError, ValidationSetupError, ProfileError) before any model call."""
        s = self.settings
        copies = self.work_dir / "copies"
        copies.mkdir(parents=True, exist_ok=True)
        checked = check_task(self.task, sandbox=self.sandbox)
        original = checked.original
        try:
            baseline = build_baseline(self.sandbox, original.path, self.task, runs=s.test_runs)
            bench = Workbench(self.task, self.sandbox, original, baseline, rounds=s.rounds,
                              repeats=s.repeats, profile=s.profile, copies_root=copies,
                              hack_check=self.hack_check)  # fmt: skip
            profiles = profile_visible(bench, original.path)
        except BaseException:
            original.remove()
            raise
        speedscope = ""
        if profiles:
            speedscope = f"{self.task.id}.original.speedscope.json"
            (self.work_dir / speedscope).write_text(profiles[0].speedscope)
        prep = TaskPrep(stable_tests=len(baseline.stable), flaky=baseline.flaky,
                        broken=baseline.broken, full_suite_s=max(baseline.full_wall_s),
                        profile_summary="\n".join(p.summary for p in profiles),
                        speedscope=speedscope)  # fmt: skip
        return bench, prep

    # -- the loop ---------------------------------------------------------------------------
    def run(self, prepared: tuple[Workbench, TaskPrep] | None = None) -> AgentResult:
        """The loop on a prepared task (`prepare()` now when not given); the copies go after."""
        start = time.monotonic()
        bench, prep = prepared or self.prepare()
        s = self.settings
        working = build_copy(self.task, sandbox=self.sandbox, dest_root=bench.copies_root)
        try:
            model = PerfgymModel(self.chat, tools=s.tools)
            env = SandboxEnvironment(working.path, sandbox=self.sandbox,
                                     timeout_s=s.command_timeout_s, memory_mb=self.task.limits.memory_mb)  # fmt: skip
            agent = ContinuingAgent(
                model, env, on_submit=lambda: self._on_submit(bench, working, agent),
                token_limit=s.token_limit, system_template=SYSTEM_TEMPLATE,
                instance_template=INSTANCE_TEMPLATE, step_limit=s.step_limit,
                cost_limit=s.cost_limit, wall_time_limit_seconds=int(s.wall_limit_s),
            )  # fmt: skip
            exit_status = "Submitted"
            try:
                extra = agent.run(
                    "", task_id=self.task.id, description=self.task.description,
                    workloads=self._workload_text(), perf_report=prep.profile_summary,
                    iterations=s.iterations,
                )  # fmt: skip
                exit_status = str(extra.get("exit_status", ""))
            finally:
                # not ours: "Submitted" is mini-swe-agent's own exit status, a string it defines
                if exit_status != "Submitted" and not self._stop:  # not ours: mini-swe-agent's
                    self._evaluate_leftover(bench, working, agent)
            return self._finish(bench, prep, agent, model, env, exit_status, start)
        finally:
            working.remove()
            bench.original.remove()

    def _on_submit(self, bench: Workbench, working, agent: ContinuingAgent) -> str | None:  # type: ignore[no-untyped-def]
        diff = self._take(working)
        counted = sum(1 for a in self.attempts if a.counts)
        left = self.settings.iterations - counted
        if not diff.strip():
            self._record(Attempt(task_id=self.task.id, index=0, stage=AttemptStage.EMPTY, diff="",
                                 agent_steps=agent.n_calls))  # fmt: skip
            return EMPTY_FEEDBACK if left > 0 else None
        if diff in self._seen_diffs:
            self._record(Attempt(task_id=self.task.id, index=0, stage=AttemptStage.DUPLICATE, diff=diff,
                                 agent_steps=agent.n_calls))  # fmt: skip
            if self._last_rejected:
                self._stop = True
                return None
            self._last_rejected = True
            return DUPLICATE_FEEDBACK
        self._last_rejected = False
        self._seen_diffs.add(diff)
        attempt = self._evaluate(bench, diff, counted + 1, agent.n_calls)
        left -= 1
        if left <= 0:
            self._stop = True
            return None
        if attempt.measured:
            # Visible workloads only: the hidden ones decide, so no figure of theirs is shown
            # (the verdict, accepted or not, is the one bit the agent learns of them).
            per = "; ".join(f"{w.name}: {w.speedup:.2f}x" for w in attempt.workloads
                            if not w.hidden and w.speedup)  # fmt: skip
            shown = [w for w in attempt.workloads if not w.hidden]
            ci = shown[0].ci if len(shown) == 1 else None
            return measured_feedback(attempt.index, attempt.visible_speedup or 1.0, ci,
                                     attempt.significant, per,
                                     attempt.profile_summary or "(re-profile failed)", left)  # fmt: skip
        return failure_feedback(attempt.index, attempt.stage.value, attempt.detail, left)

    def _take(self, working: RepoCopy) -> str:
        """The working copy's diff; its git index is put back to the original commit after
        (take_patch stages everything, and a staged file would make the agent's
        `git checkout FILE` restore the staged version instead of the original)."""
        diff = take_patch(working, sandbox=self.sandbox)
        run_shell(working, "git reset -q", timeout_s=60, memory_mb=512, sandbox=self.sandbox)
        return diff

    def _evaluate(self, bench: Workbench, diff: str, index: int, steps: int) -> Attempt:
        draft = Attempt(task_id=self.task.id, index=index, stage=AttemptStage.SUBMITTED,
                        diff=diff, agent_steps=steps)  # fmt: skip
        attempt, _, _ = judge_attempt(bench, draft, self.work_dir)
        self._record(attempt)
        return attempt

    def _evaluate_leftover(self, bench: Workbench, working, agent: ContinuingAgent) -> None:  # type: ignore[no-untyped-def]
        """A limit stopped the agent: an unsubmitted diff is still validated (PerfAgent)."""
        counted = sum(1 for a in self.attempts if a.counts)
        if counted >= self.settings.iterations:
            return
        diff = self._take(working)
        if diff.strip() and diff not in self._seen_diffs:
            self._seen_diffs.add(diff)
            self._evaluate(bench, diff, counted + 1, agent.n_calls)

    def _record(self, attempt: Attempt) -> None:
        self.attempts.append(attempt)
        if self.on_attempt is not None:
            self.on_attempt(attempt)

    # -- the result -------------------------------------------------------------------------
    def _finish(self, bench: Workbench, prep: TaskPrep, agent: ContinuingAgent,
                model: PerfgymModel, env: SandboxEnvironment, exit_status: str, start: float) -> AgentResult:  # fmt: skip
        rejected: list[int] = []
        best = best_attempt(self.attempts)
        full: bool | None = None
        while best is not None:
            full = self._full_suite(bench, best.diff)
            if full:
                break
            rejected.append(best.index)
            best = best_attempt(self.attempts, excluded=rejected)
        return AgentResult(
            task_id=self.task.id, model=self.chat.name, exit_status=exit_status, prep=prep,
            attempts=self.attempts, best=best.index if best else None,
            best_speedup=best.speedup if best else None, best_ci=best.ci if best else None,
            best_patch=best.diff if best else "", full_suite_passed=full,
            rejected_by_full_suite=rejected, curve=speedup_curve(self.attempts),
            agent_steps=agent.n_calls, commands=env.commands, tokens=model.spend.tokens,
            cost_usd=model.spend.cost_usd, wall_s=time.monotonic() - start,
            expert_speedup=self.task.expert_speedup,
        )  # fmt: skip

    def _full_suite(self, bench: Workbench, diff: str) -> bool:
        try:
            copy = build_copy(self.task, diff, sandbox=self.sandbox, dest_root=bench.copies_root)
        except (PatchError, TaskCheckError):
            return False
        try:
            return run_tests(self.sandbox, copy.path, self.task, bench.baseline, full=True).passed
        finally:
            copy.remove()

    def _workload_text(self) -> str:
        parts = []
        for w in self.task.visible_workloads:
            src = workload_path(self.task, w).read_text()
            parts.append(f"# workload {w.name}\n{src[:4000]}")
        return "\n".join(parts)
