"""What the agent's validation and profiling cost on the example repositories (perfgym-repos).

(a) Selective validation: the testmon database is built on the original, the expert patch is
    applied to a fresh copy, and the tests testmon selects run against the whole suite (less
    broken/flaky tests): tests run and wall time, median of `--runs`, and their ratio.
(b) py-spy's overhead: the visible workload's experiment() looped `--loops` times in one
    sandboxed process, timed from inside the process, with and without `py-spy record` at
    `--rate` around it; interleaved rounds, the ratio of medians.

    PYTHONPATH=src python3 bench/agent_validation.py [--runs 3] [--rate 100] [--loops 20]

Targets per task: selection saves time (selected / full <= 1) and py-spy costs at most 10 %.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

from targets import Target, at_most, report

from perfgym.agent.shell import command_limits, run_in_copy
from perfgym.agent.validation import build_baseline, run_tests
from perfgym.repos.checks import build_copy
from perfgym.repos.loading import expert_patch_text, load_repo_suite
from perfgym.repos.runner import workload_path
from perfgym.repos.shell import shared_sandbox

_LOOP = """\
import importlib.util, sys, time
sys.path.insert(0, "/work/repo")
spec = importlib.util.spec_from_file_location("w", "/tmp/w.py")
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
state = mod.setup()
start = time.perf_counter()
for _ in range({loops}):
    mod.experiment(state)
print("ELAPSED", time.perf_counter() - start)
"""


def _elapsed(output: str) -> float:
    return float(next(ln.split()[1] for ln in output.splitlines() if ln.startswith("ELAPSED")))


def selective(task, runs: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    sb = shared_sandbox()
    original = build_copy(task, sandbox=sb)
    patched = build_copy(task, expert_patch_text(task), sandbox=sb)
    try:
        baseline = build_baseline(sb, original.path, task, runs=1)
        sel = [run_tests(sb, patched.path, task, baseline) for _ in range(runs)]
        full = [run_tests(sb, patched.path, task, baseline, full=True) for _ in range(runs)]
    finally:
        original.remove()
        patched.remove()
    assert all(r.passed for r in sel + full), "the expert patch must pass its tests"
    s_wall = statistics.median(r.wall_s for r in sel)
    f_wall = statistics.median(r.wall_s for r in full)
    return {"selected_tests": sel[0].ran, "full_tests": full[0].ran, "selected_s": s_wall,
            "full_s": f_wall, "time_ratio": s_wall / f_wall}  # fmt: skip


def overhead(task, runs: int, rate: int, loops: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    sb = shared_sandbox()
    copy = build_copy(task, sandbox=sb)
    files = {"w.py": workload_path(task, task.visible_workloads[0]).read_text(),
             "loop.py": _LOOP.format(loops=loops)}  # fmt: skip
    limits = command_limits(task.limits.workload_s * 4, task.limits.memory_mb)
    plain: list[float] = []
    spied: list[float] = []
    try:
        for r in range(runs):
            order = [("plain", "python3 /tmp/loop.py"),
                     ("spied", f"py-spy record -r {rate} -f raw -o /tmp/p.raw -- python3 /tmp/loop.py")]  # fmt: skip
            for name, cmd in order if r % 2 == 0 else order[::-1]:
                res = run_in_copy(sb, copy.path, cmd, limits=limits, files=files)
                assert res.ok, res.output[-500:]
                (plain if name == "plain" else spied).append(_elapsed(res.stdout))
    finally:
        copy.remove()
    p, s = statistics.median(plain), statistics.median(spied)
    return {"plain_s": p, "pyspy_s": s, "overhead_ratio": s / p}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rate", type=int, default=100)
    ap.add_argument("--loops", type=int, default=20)
    args = ap.parse_args(argv)
    print(f"load average: {os.getloadavg()[0]:.2f} (1 min), {len(os.sched_getaffinity(0))} cores")
    print("(a) testmon-selected tests against the full suite, expert patch applied")
    print(f"{'task':<10} {'selected':>8} {'full':>5} {'sel s':>7} {'full s':>7} {'ratio':>6}")
    tasks = load_repo_suite("perfgym-repos")
    targets: list[Target] = []
    for t in tasks:
        m = selective(t, args.runs)
        print(f"{t.id:<10} {m['selected_tests']:>8.0f} {m['full_tests']:>5.0f} {m['selected_s']:>7.2f} "
              f"{m['full_s']:>7.2f} {m['time_ratio']:>6.2f}")  # fmt: skip
        targets.append(at_most(f"{t.id} selected / full tests' time", m["time_ratio"], 1.0, "x"))
    print(f"(b) py-spy at {args.rate} Hz around {args.loops} experiment() calls (in-process time)")
    print(f"{'task':<10} {'plain s':>8} {'py-spy s':>9} {'ratio':>6}")
    for t in tasks:
        m = overhead(t, args.runs, args.rate, args.loops)
        print(f"{t.id:<10} {m['plain_s']:>8.3f} {m['pyspy_s']:>9.3f} {m['overhead_ratio']:>6.3f}")
        targets.append(at_most(f"{t.id} py-spy / plain", m["overhead_ratio"], 1.1, "x"))
    return report(targets)


if __name__ == "__main__":
    sys.exit(main())
