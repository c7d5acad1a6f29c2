"""`perfgym --help` wall time: the median of fresh runs of this checkout, beside another's.

Each run is a fresh `python3 -m perfgym --help` with PYTHONPATH set to a checkout's `src`
(interpreter start-up included), so nothing cached in this process hides an import. Pass
`--against DIR` (e.g. /opt/perfgym-14base) to print the ratio to that checkout; the figure
printed last is this checkout's median. Target: that median at most `--target-s` (1.0 s).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from targets import at_most, report

HERE = Path(__file__).resolve().parents[1]


def help_wall_s(checkout: Path, runs: int) -> list[float]:
    env = {**os.environ, "PYTHONPATH": str(checkout / "src")}
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "perfgym", "--help"], env=env, check=True,
                       capture_output=True)  # fmt: skip
        times.append(time.perf_counter() - t0)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--target-s", type=float, default=1.0, help="Most a median may take.")
    parser.add_argument("--against", type=Path, help="Another checkout to compare with.")
    args = parser.parse_args()
    here = statistics.median(help_wall_s(HERE, args.runs))
    if args.against is not None:
        other = statistics.median(help_wall_s(args.against, args.runs))
        print(f"{args.against}: perfgym --help median {other:.3f} s over {args.runs} runs")
        print(f"ratio (other / this): {other / here:.2f}x")
    print(f"{HERE}: perfgym --help median {here:.3f} s over {args.runs} runs")
    return report([at_most("perfgym --help median", here, args.target_s, " s")])


if __name__ == "__main__":
    sys.exit(main())
