"""How close `perfgym optimize` comes to its lower bound, and what the loop itself costs.

A scripted model (the real loopback server, `--latency` seconds per answer, default 300 ms)
answers through the real client; N tasks of perfgym-core x I iterations (default 40 x 4, greedy)
are optimised twice: by the loop (tasks at once, model calls overlapping the judge) and by a
sequential loop (one task, one call, one judgement at a time). Printed:

    lower bound = max(model-bound, judge-bound)
        model-bound: the longest chain of calls one task must wait for (iterations x latency),
                     or all calls through the client's concurrency cap, whichever is longer
        judge-bound: the time the judge was busy (one judge; it uses every core itself)
    wall / lower bound             (target <= 1.3)
    sequential wall / loop wall    (how much the overlap buys)
    loop's own work / judge time   (prompts, decisions, history writes; target <= 5 %)

Run: PYTHONPATH=src python3 bench/optimize_overhead.py [--tasks 40] [--iterations 4]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import shutil
import sys
import time
from pathlib import Path

from targets import at_most, report

from perfgym.judge import Judge
from perfgym.llm.client import ModelClient
from perfgym.llm.config import ModelConfig
from perfgym.llm.core_script import suite_script
from perfgym.llm.scripted import ScriptedServer
from perfgym.optimize.config import OptimizeConfig
from perfgym.optimize.judging import JudgeQueue
from perfgym.optimize.loop import Optimizer
from perfgym.optimize.session import judge_config
from perfgym.store.optimize_history import OptimizeHistory
from perfgym.tasks.suite import load_suite

HERE = Path(__file__).resolve().parent


def one_run(tasks, cfg, latency, repeats, work: Path, sequential: bool) -> dict[str, float]:  # type: ignore[no-untyped-def]
    history = OptimizeHistory(work / ("seq.sqlite" if sequential else "loop.sqlite"))
    history.start_run("bench", {})
    with ScriptedServer(suite_script(tasks), latency_s=latency) as srv:
        client = ModelClient(ModelConfig(model="scripted", base_url=srv.base_url,
                                         api_key_env="PERFGYM_BENCH_NO_KEY",
                                         concurrency=1 if sequential else cfg.concurrency))  # fmt: skip
        with Judge(judge_config(repeats)) as judge:
            queue = JudgeQueue(judge)
            loop = Optimizer(client, queue, history, "bench", cfg, suite="perfgym-core")

            async def go() -> None:
                if sequential:
                    for t in tasks:
                        await loop.optimize([t])
                else:
                    await loop.optimize(tasks)
                await client.aclose()

            start = time.perf_counter()
            asyncio.run(go())
            wall = time.perf_counter() - start
        calls = srv.stats.answers_served
    history.close()
    return {"wall": wall, "judge": queue.busy_s, "loop": loop.overhead_s, "calls": calls,
            "batches": queue.batches, "judged": queue.judged}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tasks", type=int, default=40)
    ap.add_argument("--iterations", type=int, default=4)
    ap.add_argument("--latency", type=float, default=0.3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--no-sequential", action="store_true", help="skip the sequential loop")
    args = ap.parse_args()
    tasks = list(load_suite("perfgym-core").tasks)[: args.tasks]
    cfg = OptimizeConfig(iterations=args.iterations, strategy="greedy",
                         concurrency=args.concurrency)  # fmt: skip
    work = HERE.parent / "results" / "bench-optimize"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    print(f"{len(tasks)} tasks x {args.iterations} iterations, latency {args.latency * 1000:.0f} ms,"
          f" {args.repeats} timing rounds, load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    loop = one_run(tasks, cfg, args.latency, args.repeats, work, sequential=False)
    per_task = loop["calls"] / len(tasks)
    model_bound = max(math.ceil(per_task) * args.latency,
                      loop["calls"] * args.latency / args.concurrency)  # fmt: skip
    bound = max(model_bound, loop["judge"])
    print(f"loop: wall {loop['wall']:.1f} s, judge busy {loop['judge']:.1f} s in "
          f"{loop['batches']} batches ({loop['judged']} programs), {loop['calls']} model calls, "
          f"model-bound {model_bound:.1f} s", flush=True)  # fmt: skip
    seq = None
    if not args.no_sequential:
        seq = one_run(tasks, cfg, args.latency, args.repeats, work, sequential=True)
        print(f"sequential: wall {seq['wall']:.1f} s, judge busy {seq['judge']:.1f} s, "
              f"{seq['calls']} model calls", flush=True)  # fmt: skip
    print(f"load after: {os.getloadavg()[0]:.1f}")
    print(f"loop's own work per iteration: {1000 * loop['loop'] / max(1, loop['calls']):.1f} ms; "
          f"{100 * loop['loop'] / loop['judge']:.2f} % of judge time (target <= 5 %)")  # fmt: skip
    if seq is not None:
        print(f"sequential wall / loop wall: {seq['wall'] / loop['wall']:.2f}x")
    print(f"wall / lower bound max(model {model_bound:.1f} s, judge {loop['judge']:.1f} s): "
          f"{loop['wall'] / bound:.3f}x (target <= 1.3)")  # fmt: skip
    return report([
        at_most("loop's own work / judge time", 100 * loop["loop"] / loop["judge"], 5, " %"),
        at_most("wall / lower bound", loop["wall"] / bound, 1.3, "x"),
    ])  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
