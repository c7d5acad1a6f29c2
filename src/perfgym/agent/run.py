"""Running the agent over tasks: every task prepared (built, tested, profiled) before the first
model call, then one controller per task, each attempt written to the results as it ends."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from perfgym.agent.controller import AgentResult, AgentSettings, Controller
from perfgym.agent.profile import ProfileConfig
from perfgym.agent.results import AgentResultsFile
from perfgym.llm.protocol import ChatModel
from perfgym.repos.evaluate import HackCheck, every_hack_check
from perfgym.repos.task import RepoTask
from perfgym.sandbox import Sandbox


def default_hack_check() -> HackCheck | None:
    """Every hack check (`perfgym.repos.hacks.detect_hacks`): a flagged patch is never kept."""
    return every_hack_check()


def run_tasks(
    tasks: Sequence[RepoTask],
    chat: ChatModel,
    out: Path,
    *,
    iterations: int = 5,
    steps: int = 200,
    cost: float = 5.0,
    tokens: int = 0,
    wall: float = 0.0,
    rounds: int = 5,
    repeats: int = 2,
    test_runs: int = 3,
    rate: int = 100,
    native: bool = False,
    tools: bool = False,
    profile_seconds: float = 1.0,
    sandbox: Sandbox | None = None,
    work_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> int:
    """Run every task; returns how many finished. Results go to `out` as they are produced."""
    from perfgym.repos.shell import shared_sandbox

    say = progress or (lambda _line: None)
    settings = AgentSettings(iterations=iterations, step_limit=steps, cost_limit=cost,
                             token_limit=tokens, wall_limit_s=wall, rounds=rounds, repeats=repeats,
                             test_runs=test_runs, tools=tools,
                             profile=ProfileConfig(rate=rate, native=native, seconds=profile_seconds))  # fmt: skip
    sb = sandbox or shared_sandbox()
    root = work_dir or out.parent / (out.stem + ".files")
    root.mkdir(parents=True, exist_ok=True)
    results = AgentResultsFile(out, {"model": chat.name, "tasks": [t.id for t in tasks],
                                     "settings": _settings_record(settings)})  # fmt: skip
    controllers = [Controller(t, chat, sb, settings=settings, work_dir=root,
                              hack_check=default_hack_check(), on_attempt=results.attempt)
                   for t in tasks]  # fmt: skip
    prepared = []
    try:
        for c in controllers:
            say(f"{c.task.id}: building, testing and profiling the original")
            prepared.append(c.prepare())
        done = 0
        for c, prep in zip(controllers, prepared, strict=True):
            say(f"{c.task.id}: agent running ({settings.iterations} submissions at most)")
            result: AgentResult = c.run(prep)
            results.task(result)
            say(_summary(result))
            done += 1
        return done
    finally:
        for bench, _ in prepared:
            bench.original.remove()


def _settings_record(s: AgentSettings) -> dict[str, object]:
    return {"iterations": s.iterations, "step_limit": s.step_limit, "cost_limit": s.cost_limit,
            "token_limit": s.token_limit, "wall_limit_s": s.wall_limit_s, "rounds": s.rounds, "repeats": s.repeats,
            "test_runs": s.test_runs, "tools": s.tools, "py_spy_rate": s.profile.rate,
            "native": s.profile.native}  # fmt: skip


def _summary(r: AgentResult) -> str:
    if r.best is None:
        return f"{r.task_id}: no patch kept ({len(r.attempts)} attempt(s), {r.exit_status})"
    ci = f" [{r.best_ci[0]:.2f}, {r.best_ci[1]:.2f}]" if r.best_ci else ""
    return (f"{r.task_id}: kept submission {r.best}: {r.best_speedup:.2f}x{ci}, full suite "
            f"{'passed' if r.full_suite_passed else 'failed'}")  # fmt: skip
