"""What running a Python harness's solution in a process of its own costs the harness's clock.

The split (src/perfgym/judge/trailer_src/perfgym_split.py) hands each call's arguments to the
solution's process and its result back; the solution's decoding of the arguments is on the
harness's clock (the solution's process is untrusted: a time it reported could be forged), the
harness's own encoding and decoding are not. For each PerfCodeBench python_* task
(PERFGYM_PERFCODEBENCH or argv[1], every K-th with --stride) and each of its published
solutions (--roles), the harness runs the published way (the solution imported into its
process) and through perfgym's wrapper (`--solution`), interleaved, --rounds times each, and
the medians of `elapsed_ns` are compared. Prints per-task rows, then: runs ok both ways, the
median and largest ratio split/in-process, the median added milliseconds, and how far each
task's reference-over-baseline speed-up moves (the split adds about the same time to both).
Targets: every run ok both ways; split/in-process at most 1.5x at the median.

Usage: PYTHONPATH=src python3 bench/harness_split_overhead.py [TASKS_DIR] [--stride K]
       [--limit N] [--roles reference,baseline] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from targets import at_most, report

#: Split over in-process harness time, at most, at the median.
MEDIAN_RATIO = 1.5
WRAPPER = Path(__file__).resolve().parents[1] / "src/perfgym/judge/trailer_src"


def _elapsed(argv: list[str], solution: Path) -> int | None:
    env = dict(os.environ, PERFCODEBENCH_SOLUTION=str(solution))
    try:
        out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300).stdout
    except subprocess.TimeoutExpired:
        return None
    line = next((x for x in out.splitlines() if x.startswith("{") and '"elapsed_ns"' in x), None)
    if line is None:
        return None
    got = json.loads(line)
    return int(got["elapsed_ns"]) if got.get("ok") is True else None


def _medians(harness: Path, solution: Path, rounds: int, wrap_dir: Path) -> tuple:
    direct, split = [], []
    for _ in range(rounds):
        direct.append(_elapsed([sys.executable, "-S", str(harness)], solution))
        split.append(_elapsed([sys.executable, "-S", str(wrap_dir / "perfgym_trailer.py"),
                               "--solution", str(solution), str(harness)], solution))  # fmt: skip
    if None in direct or None in split:
        return None, None
    return statistics.median(direct), statistics.median(split)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("tasks", nargs="?", default=os.environ.get("PERFGYM_PERFCODEBENCH"))
    ap.add_argument("--stride", type=int, default=8)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--roles", default="reference,baseline")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if not args.tasks:
        ap.error("give the PerfCodeBench executable_tasks folder (or PERFGYM_PERFCODEBENCH)")
    root = Path(args.tasks)
    tasks = sorted(p for p in root.iterdir() if p.name.startswith("python_"))
    tasks = tasks[:: args.stride][: args.limit]
    roles = args.roles.split(",")
    ratios, added, failed, moves = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="perfgym-split-bench-") as tmp:
        wrap_dir = Path(tmp)
        for name in ("perfgym_trailer.py", "perfgym_split.py", "perfgym_solution_server.py",
                     "perfgym_solution.py"):  # fmt: skip
            (wrap_dir / name).write_bytes((WRAPPER / name).read_bytes())
        for task in tasks:
            harness = next((task / "harness").glob("*.py"))
            by_role = {}
            for role in roles:
                d, s = _medians(harness, task / role / "solution.py", args.rounds, wrap_dir)
                if d is None or s is None:
                    failed.append(f"{task.name}/{role}")
                    print(f"{task.name:50s} {role:9s} FAILED", flush=True)
                    continue
                by_role[role] = (d, s)
                ratios.append(s / d)
                added.append((s - d) / 1e6)
                print(f"{task.name:50s} {role:9s} in-process {d / 1e6:9.2f} ms  split "
                      f"{s / 1e6:9.2f} ms  x{s / d:5.2f}  +{(s - d) / 1e6:7.2f} ms", flush=True)  # fmt: skip
            if "reference" in by_role and "baseline" in by_role:
                (rd, rs), (bd, bs) = by_role["reference"], by_role["baseline"]
                moves.append((bs / rs) / (bd / rd))
    for f in failed:
        print("not ok:", f)
    print(f"runs ok both ways {len(ratios)} / {len(ratios) + len(failed)}")
    if not ratios:
        return 1
    print(f"split / in-process harness time: median {statistics.median(ratios):.2f}x, "
          f"max {max(ratios):.2f}x; added: median {statistics.median(added):.2f} ms, "
          f"max {max(added):.2f} ms")  # fmt: skip
    if moves:
        print(f"reference-over-baseline speed-up, split / in-process: median "
              f"{statistics.median(moves):.2f}, min {min(moves):.2f}, max {max(moves):.2f}")  # fmt: skip
    return report([
        at_most("runs not ok", float(len(failed)), 0),
        at_most("split / in-process harness time, median", statistics.median(ratios),
                MEDIAN_RATIO, "x"),
    ])  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
