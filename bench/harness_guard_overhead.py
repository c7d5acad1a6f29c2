"""What the Python harness guard adds inside the timed call, as a fraction of the harness's time.

The guard (src/perfgym/judge/trailer_src/perfgym_guard.py) runs the solution on a thread of
its own and rebuilds its result as plain builtin values; both happen inside the harness's
timed region. For each PerfCodeBench python_* task (PERFGYM_PERFCODEBENCH or argv[1]) and
each of its published reference and baseline, one fresh process runs the harness through the
guard, times every result's conversion, and reports the harness's own line; the hand-off (a
no-op call through the thread) is timed separately. Prints per-task rows, then the figure:
the median and largest (hand-off + conversion) / elapsed_ns, and how many runs were ok.
Targets: every run ok; the added share at most 1e-3 at the median and 1e-2 at the largest
(measured on 18 tasks: 2.5e-5 and 7.0e-3).

Usage: PYTHONPATH=src python3 bench/harness_guard_overhead.py [TASKS_DIR] [--limit N]
       [--roles reference,baseline] [--stride K]   (every K-th task; published baselines
       take up to ~25 s a run, a harness's own input and answer often 10 s)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from targets import at_most, report

#: The guard's added time over the harness's own, at most: at the median and the largest.
MEDIAN_SHARE, MAX_SHARE = 1e-3, 1e-2

GUARD_DIR = Path(__file__).resolve().parents[1] / "src/perfgym/judge/trailer_src"

#: Runs in a fresh process: argv = harness, solution. Prints the harness's line, then ours.
CHILD = r"""
import json, os, runpy, sys, time
sys.path.insert(0, os.environ["GUARD_DIR"])
import perfgym_guard as g
spent, handoff = [], []
def timed_plain(x, rec, _plain=g._plain):
    t = time.perf_counter_ns()
    out = _plain(x, _plain)
    spent.append(time.perf_counter_ns() - t)
    return out
g._plain = timed_plain  # bound into the shim's state by install() below
load, disarm = g.install()
harness, solution = sys.argv[1], sys.argv[2]
shim = os.path.join(os.environ["GUARD_DIR"], "perfgym_solution.py")
os.environ["PERFCODEBENCH_SOLUTION"] = shim
import types
shim_handoff = types.ModuleType("perfgym_guard_handoff")
shim_handoff.load = lambda name: load(name, solution)
sys.modules["perfgym_guard_handoff"] = shim_handoff
sys.argv = [harness, shim]
code = 0
try:
    runpy.run_path(harness, run_name="__main__")
except SystemExit as e:
    code = e.code or 0
disarm()
# The hand-off alone: a no-op call through a fresh solution thread.
on = g._start_worker()
for _ in range(300):
    t = time.perf_counter_ns(); on("call", int, (), {}); handoff.append(time.perf_counter_ns() - t)
handoff.sort()
sys.stdout.flush()
print("GUARD " + json.dumps({"plain_ns": sum(spent), "calls": len(spent),
                             "handoff_ns": handoff[len(handoff) // 2], "exit": code}))
"""


def _one(harness: Path, solution: Path) -> dict | None:
    env = dict(os.environ, GUARD_DIR=str(GUARD_DIR))
    try:
        out = subprocess.run([sys.executable, "-c", CHILD, str(harness), str(solution)],
                             capture_output=True, text=True, env=env, timeout=300).stdout  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    line = next((x for x in out.splitlines() if x.startswith("{") and '"elapsed_ns"' in x), None)
    ours = next((x for x in out.splitlines() if x.startswith("GUARD ")), None)
    if line is None or ours is None:
        return None
    got = json.loads(ours[6:])
    harness_line = json.loads(line)
    got.update(ok=harness_line.get("ok") is True, elapsed_ns=harness_line["elapsed_ns"])
    return got


def main() -> int:
    args = sys.argv[1:]
    limit = None
    if "--limit" in args:
        k = args.index("--limit")
        limit = int(args[k + 1])
        del args[k : k + 2]
    roles: tuple[str, ...] = ("reference", "baseline")
    if "--roles" in args:
        k = args.index("--roles")
        roles = tuple(args[k + 1].split(","))
        del args[k : k + 2]
    stride = 1
    if "--stride" in args:
        k = args.index("--stride")
        stride = int(args[k + 1])
        del args[k : k + 2]
    root = Path(args[0] if args else os.environ["PERFGYM_PERFCODEBENCH"])
    tasks = sorted(p for p in root.iterdir() if p.name.startswith("python_"))[::stride][:limit]
    fractions, failed, handoffs = [], [], []
    for task in tasks:
        harness = next((task / "harness").glob("*.py"))
        for role in roles:
            got = _one(harness, task / role / "solution.py")
            if got is None or not got["ok"] or got["exit"] not in (0, None):
                failed.append(f"{task.name}/{role}: {got}")
                print(f"{task.name:50s} {role:9s} FAILED {got}", flush=True)
                continue
            added = got["plain_ns"] + got["calls"] * got["handoff_ns"]
            frac = added / max(got["elapsed_ns"], 1)
            fractions.append(frac)
            handoffs.append(got["handoff_ns"])
            print(f"{task.name:50s} {role:9s} elapsed {got['elapsed_ns'] / 1e6:9.2f} ms  "
                  f"plain {got['plain_ns'] / 1e3:8.1f} us  hand-off {got['handoff_ns'] / 1e3:6.1f} "
                  f"us x{got['calls']}  added/elapsed {frac:.2e}", flush=True)  # fmt: skip
    for f in failed:
        print("not ok:", f)
    print(f"runs ok {len(fractions)} / {len(fractions) + len(failed)}; median hand-off "
          f"{statistics.median(handoffs) / 1e3:.1f} us")  # fmt: skip
    print(f"added time / harness time: median {statistics.median(fractions):.2e}, "
          f"max {max(fractions):.2e}")  # fmt: skip
    return report([
        at_most("runs not ok through the guard", float(len(failed)), 0),
        at_most("added time / harness time, median", statistics.median(fractions), MEDIAN_SHARE),
        at_most("added time / harness time, max", max(fractions), MAX_SHARE),
    ])  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
