"""`run_session`: one `perfgym optimize` invocation — the judge, the history, the loop, the
outputs (best candidates, curves, report) — for a model the caller opened."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfgym.judge.config import JudgeConfig
from perfgym.judge.judge import Judge
from perfgym.llm.protocol import ChatModel
from perfgym.optimize.config import OptimizeConfig
from perfgym.optimize.curves import IterationRow, iteration_rows
from perfgym.optimize.judging import JudgeQueue
from perfgym.optimize.loop import Optimizer, Progress, check_resumable
from perfgym.optimize.outputs import write_outputs
from perfgym.optimize.search import TaskState
from perfgym.store.optimize_history import OptimizeHistory
from perfgym.tasks.task import Task


@dataclass
class SessionResult:
    run: str
    states: dict[str, TaskState]
    rows: list[IterationRow]
    best_path: Path
    summary_path: Path
    report_path: Path | None
    wall_s: float
    judge_s: float
    overhead_s: float
    calls: int
    doc: dict[str, Any]
    replayed_rounds: int = 0
    replayed_steps: int = 0


async def _drive(model: ChatModel, loop: Optimizer, tasks: list[Task]) -> dict[str, TaskState]:
    """The loop in one event loop with the model's preflight (an unreachable endpoint or a
    refused key fails before anything is asked) and its closing, where the model has them."""
    check = getattr(model, "check", None)
    try:
        if check is not None:
            await check()
        return await loop.optimize(tasks)
    finally:
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()


def judge_config(repeats: int, hidden: bool = True) -> JudgeConfig:
    """The judge of a run: the CPU clock, `repeats` interleaved rounds (paired tests from 3);
    `hidden`: correctness and speed decided on hidden workloads (`perfgym.judge.hidden`)."""
    return JudgeConfig(repeats=repeats, clock="cpu", hidden_workloads=hidden)


#: Where a run with a fixed hidden seed (`JudgeConfig.hidden_seed`) keeps it in its history
#: (never in its outputs). Without one, every round's batch draws fresh hidden inputs: what a
#: program leaks about one round's hidden inputs through its feedback (a memory figure, a kind
#: of failure) is stale by the next round, where its proposal is decided (red team round 2: a
#: table of the hidden answers, leaked two bits a round, was accepted).
SEED_KEY = "hidden_seed"


def run_name(config: OptimizeConfig, suite: str, tasks: list[Task], model: str,
             judge: JudgeConfig) -> str:  # fmt: skip
    return config.run_id(suite, [t.id for t in tasks], model, judge.model_dump(mode="json"))


def run_session(
    config: OptimizeConfig,
    suite: str,
    tasks: list[Task],
    model: ChatModel,
    *,
    judge: JudgeConfig,
    history: OptimizeHistory,
    out: Path | None,
    resume: bool,
    report: bool = True,
    progress: Progress | None = None,
    stats: dict[str, Any] | None = None,
) -> SessionResult:
    """Run (or continue) the optimisation; writes every step to `history` as it is produced."""
    run = run_name(config, suite, tasks, model.name, judge)
    header = {"run": run, "suite": suite, "model": model.name, "strategy": config.strategy,
              "objective": config.objective, "config": config.model_dump(mode="json"),
              "judge": judge.model_dump(mode="json")}  # fmt: skip
    check_resumable(history, run, header, resume)
    secret = {SEED_KEY: judge.hidden_seed} if judge.hidden_seed is not None else {}
    history.start_run(run, {**header, **secret})
    out = out or Path("results") / "optimize" / run
    start = time.perf_counter()
    with Judge(judge) as j:
        queue = JudgeQueue(j)
        loop = Optimizer(model, queue, history, run, config, suite=suite, progress=progress)
        states = asyncio.run(_drive(model, loop, tasks))
    wall = time.perf_counter() - start
    rows = iteration_rows(states, config.iterations)
    timing = {"wall_s": wall, "judge_s": queue.busy_s, "loop_s": loop.overhead_s,
              "model_calls": loop.calls, "batches": queue.batches,
              "replayed_rounds": loop.replayed_rounds, "replayed_steps": loop.replayed_steps,
              "tokens": loop.budget.tokens, "cost_usd": loop.budget.cost_usd}  # fmt: skip
    if stats:
        timing.update(stats)
    header["timing"] = timing
    best, summary = write_outputs(out, states, rows, header)
    doc = {**header, "iterations": [r.model_dump() for r in rows],
           "best": str(best), "summary": str(summary)}  # fmt: skip
    report_path = None
    if report:
        from perfgym.report import write_report

        report_path = write_report([], out / "report.html", optimize=[summary],
                                   title=f"perfgym optimize {suite}")  # fmt: skip
        doc["report"] = str(report_path)
    stopped = {s.stopped for s in states.values() if s.stopped}
    history.finish_run(run, "stopped: " + "; ".join(sorted(stopped)) if stopped else "done",
                       {"iterations": doc["iterations"]})  # fmt: skip
    return SessionResult(run, states, rows, best, summary, report_path, wall, queue.busy_s,
                         loop.overhead_s, loop.calls, doc, loop.replayed_rounds,
                         loop.replayed_steps)  # fmt: skip
