"""What reserving two cores changes: a two-thread program's CPU and wall time on one and on two
pinned cores, and the judge's reference/baseline speed-up of a two-core task on each.

The program is tests/fixtures/threads/executable_tasks/cpp_two_threads (its baseline splits a
division-per-term sum over two threads; its reference steps the remainder instead). Runs are
interleaved (baseline and reference, one core and two, in turn), medians over `--rounds`.
The figure printed last is the baseline's CPU/wall on two reserved cores (2 at best: both
threads busy all the time; 1 or below: they took turns). Target: at least 1.5.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from targets import at_least, report

from perfgym.judge import Candidate, Judge, JudgeConfig
from perfgym.judge.variant import prepare
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pool import usable_cores
from perfgym.tasks import load_suite

TASKS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "threads" / "executable_tasks"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    cores = usable_cores()
    if len(cores) < 2:
        raise SystemExit("needs two usable cores")
    task = load_suite(str(TASKS)).get("cpp_two_threads")
    print(f"load average before: {os.getloadavg()[0]:.1f} on {len(cores)} cores")
    runs: dict[tuple[str, int], list[tuple[float, float]]] = {}
    with Judge(JudgeConfig()) as judge:
        built = {label: prepare(task, label, source=source, sandbox=judge.sandbox,
                                cache=judge.cache)
                 for label, source in (("baseline", task.baseline.source),
                                       ("reference", task.reference.source))}  # fmt: skip
        for _ in range(args.rounds):
            for label, v in built.items():
                for pin in (cores[:1], cores[:2]):
                    ex = judge.sandbox.run(v.argv, binds=v.binds, limits=Limits(wall_s=30),
                                           cpu=pin)  # fmt: skip
                    m = ex.measurement
                    assert m is not None and ex.status.value == "OK", ex.reason
                    runs.setdefault((label, len(pin)), []).append((m.cpu_s, m.wall_s))
        speedups = {}
        for n in (1, 2):
            config = JudgeConfig(repeats=args.rounds, cores=cores[:n], use_harness_time=False)
            with Judge(config) as j:
                (v,) = j.judge_many([Candidate(task, source=task.reference.source, model="r")])
            speedups[n] = (v.baseline.estimate_s / v.candidate.estimate_s, v.candidate.clock)
    for (label, n), xs in sorted(runs.items()):
        cpu = statistics.median(c for c, _ in xs)
        wall = statistics.median(w for _, w in xs)
        ratio = statistics.median(c / w for c, w in xs)
        print(f"{label:9} on {n} core(s): CPU {cpu * 1e3:6.1f} ms  wall {wall * 1e3:6.1f} ms  "
              f"CPU/wall {ratio:.2f}")  # fmt: skip
    for n, (s, clock) in speedups.items():
        print(f"judge, {n} reserved core(s): baseline/reference {s:.2f}x on the {clock} clock")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    two = runs[("baseline", 2)]
    both = statistics.median(c / w for c, w in two)
    print(f"{both:.2f}")
    return report([at_least("baseline CPU/wall on two reserved cores", both, 1.5)])


if __name__ == "__main__":
    sys.exit(main())
