"""Where the local pool's core-seconds go for one reward batch: measured workload runs, tests, rest.

For each task, judges a warmed `Judge` on `--candidates` textually unique candidates (as
`reward_throughput.py` builds them) and prints the batch's wall time, its core-seconds (wall x
cores), the sum of the candidates' measured workload runs, the sum of their test runs, and the
remainder (builds, sandbox set-up, the baseline and reference, scheduling) as shares. The
workload share bounds what any pool can gain over a harness that runs the same workloads.
Target: the rest (what is neither a measured run nor a test) at most 25 % of the core-seconds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from reward_throughput import DEFAULT_TASKS, batch  # noqa: E402
from targets import Target, at_most, report

from perfgym.judge import Judge, JudgeConfig  # noqa: E402
from perfgym.tasks import load_suite  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="*", default=DEFAULT_TASKS)
    ap.add_argument("--candidates", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    suite = load_suite("perfgym-core")
    cores = os.cpu_count() or 1
    targets: list[Target] = []
    with Judge(JudgeConfig(repeats=args.repeats)) as judge:
        for task in (suite.get(t) for t in args.tasks):
            judge.judge_many(batch(task, 2, tag="warm-up"))
            cands = batch(task, args.candidates, tag="breakdown")
            t0 = time.perf_counter()
            verdicts = judge.judge_many(cands)
            wall = time.perf_counter() - t0
            test_ids = {t.id for t in task.tests}
            measured = sum(v.candidate.estimate_s or 0.0 for v in verdicts if v.candidate)
            measured *= args.repeats
            tests = sum(r.wall_s or 0.0 for v in verdicts for r in v.tests if r.id in test_ids)
            core_s = wall * cores
            rest = core_s - measured - tests
            print(
                f"{task.id:16s} wall {wall:6.1f} s  core-s {core_s:6.1f}  "
                f"measured workloads {measured:6.1f} ({measured / core_s:4.0%})  "
                f"tests {tests:5.1f} ({tests / core_s:4.0%})  rest {rest:5.1f} ({rest / core_s:4.0%})",
                flush=True,
            )
            targets.append(
                at_most(f"{task.id} rest of the core-seconds", 100 * rest / core_s, 25, " %")
            )
    return report(targets)


if __name__ == "__main__":
    sys.exit(main())
