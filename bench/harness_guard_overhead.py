"""What the Python harness guard's process split adds to a harness's own time, and how much it
compresses a speed-up ratio.

The guard (src/perfgym/judge/trailer_src/perfgym_guard.py) runs the solution in a process of
its own: each call the harness times sends its arguments (pickled) through a pipe and reads the
result back, inside the harness's clock. For each Python harness task (PerfCodeBench python_*
tasks under PERFGYM_PERFCODEBENCH or argv[1]; without either, the test fixtures py_range_sums
and the squares checksum of tests/security) and each of its reference and baseline, the
harness runs ROUNDS times directly on the solution (in one process, no guard) and ROUNDS times
through the wrapper and guard, interleaved; the minima of elapsed_ns are compared (the
machine's load only adds time, and the pipe's hand-offs wait on a free core: the minimum is
the figure a quiet, pinned core approaches; the medians are printed beside them). Prints
per-run rows, then the figures: (guarded - direct) / direct per run, and per task the
baseline/reference ratio guarded over direct (1.0: the ratio is kept; 0.8: compressed by 20 %).
Targets: every run ok; the added share at most 0.25 at the median; a ratio kept within 15 %.

Usage: PYTHONPATH=src python3 bench/harness_guard_overhead.py [TASKS_DIR] [--rounds N]
       [--core K]   (every run pinned to core K, harness and solution processes together, as
       the judge pins a run's processes to one core)
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from targets import at_least, at_most, report

MEDIAN_SHARE, RATIO_KEPT = 0.25, 0.85
ROOT = Path(__file__).resolve().parents[1]
GUARD_DIR = ROOT / "src/perfgym/judge/trailer_src"
FILES = ("perfgym_trailer.py", "perfgym_guard.py", "perfgym_solution.py",
         "perfgym_solution_process.py")  # fmt: skip


def _fixture_tasks(into: Path) -> list[Path]:
    sys.path.insert(0, str(ROOT / "tests/security"))
    from squares_task import SQUARES_BASELINE, SQUARES_HARNESS, SQUARES_REFERENCE

    shutil.copytree(ROOT / "tests/fixtures/perfcodebench/executable_tasks/py_range_sums",
                    into / "python_range_sums")  # fmt: skip
    sq = into / "python_square_checksum"
    for part, text in (("harness/bench.py", SQUARES_HARNESS),
                       ("baseline/solution.py", SQUARES_BASELINE),
                       ("reference/solution.py", SQUARES_REFERENCE)):  # fmt: skip
        (sq / part).parent.mkdir(parents=True, exist_ok=True)
        (sq / part).write_text(text)
    return [into / "python_range_sums", sq]


def _elapsed(argv: list[str], solution: Path, work: Path) -> int | None:
    env = dict(os.environ, PERFCODEBENCH_SOLUTION=str(solution))
    env.pop("PYTHONPATH", None)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, cwd=work)
    except subprocess.TimeoutExpired:
        return None
    line = next((x for x in done.stdout.splitlines() if x.startswith("{")), None)
    if line is None or json.loads(line).get("ok") is not True:
        return None
    return int(json.loads(line)["elapsed_ns"])


def main() -> int:
    args = sys.argv[1:]
    rounds = 7
    if "--rounds" in args:
        k = args.index("--rounds")
        rounds = int(args[k + 1])
        del args[k : k + 2]
    if "--core" in args:
        k = args.index("--core")
        os.sched_setaffinity(0, {int(args[k + 1])})  # inherited by every run started below
        del args[k : k + 2]
    tmp = Path(tempfile.mkdtemp(prefix="perfgym-guard-bench-"))
    wrap = tmp / "w"
    wrap.mkdir()
    for name in FILES:
        shutil.copy(GUARD_DIR / name, wrap / name)
    data = args[0] if args else os.environ.get("PERFGYM_PERFCODEBENCH")
    if data:
        tasks = sorted(p for p in Path(data).iterdir() if p.name.startswith("python_"))
    else:
        tasks = _fixture_tasks(tmp)
    shares, kept, failed = [], [], []
    for task in tasks:
        harness = next((task / "harness").glob("*.py"))
        med: dict[str, tuple[float, float]] = {}
        for role in ("reference", "baseline"):
            sol = task / role / "solution.py"
            if not sol.is_file():
                continue
            py = [sys.executable]
            direct = [*py, str(harness), str(sol)]
            guarded = [*py, str(wrap / "perfgym_trailer.py"), "--solution", str(sol),
                       str(harness), str(sol)]  # fmt: skip
            got: dict[str, list[int]] = {"direct": [], "guarded": []}
            for _ in range(rounds):
                for kind, argv in (("direct", direct), ("guarded", guarded)):
                    ns = _elapsed(argv, sol, tmp)
                    if ns is not None:
                        got[kind].append(ns)
            if len(got["direct"]) < rounds or len(got["guarded"]) < rounds:
                failed.append(f"{task.name}/{role}")
                print(f"{task.name:40s} {role:9s} FAILED", flush=True)
                continue
            d, g = min(got["direct"]), min(got["guarded"])
            dm, gm = statistics.median(got["direct"]), statistics.median(got["guarded"])
            med[role] = (d, g)
            shares.append((g - d) / d)
            print(f"{task.name:40s} {role:9s} min: direct {d / 1e6:8.2f} ms guarded "
                  f"{g / 1e6:8.2f} ms added {(g - d) / d:+.3f} | median: {dm / 1e6:8.2f} / "
                  f"{gm / 1e6:8.2f} ms", flush=True)  # fmt: skip
        if len(med) == 2:
            ratio_d = med["baseline"][0] / med["reference"][0]
            ratio_g = med["baseline"][1] / med["reference"][1]
            kept.append(ratio_g / ratio_d)
            print(f"{task.name:40s} baseline/reference: direct {ratio_d:.2f}x, guarded "
                  f"{ratio_g:.2f}x (kept {ratio_g / ratio_d:.3f})", flush=True)  # fmt: skip
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"added / direct: median {statistics.median(shares):+.3f}, max {max(shares):+.3f}; "
          f"ratio kept: min {min(kept):.3f}")  # fmt: skip
    return report([
        at_most("runs not ok through the guard", float(len(failed)), 0),
        at_most("added time / direct harness time, median", statistics.median(shares),
                MEDIAN_SHARE),
        at_least("speed-up ratio kept (guarded / direct), min", min(kept), RATIO_KEPT),
    ])  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
