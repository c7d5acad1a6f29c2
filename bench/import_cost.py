"""What importing perfgym's layers costs: perfgym modules loaded, heavy packages pulled in, time.

For each module it runs fresh `python3 -X importtime -c "import X"` subprocesses (nothing
cached in this process can hide a cost), counts the perfgym modules the import loaded, lists
the heavy packages among them, and prints the median wall time of `--runs` fresh imports
(interpreter start-up included, so compare rows with each other, not with zero).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

MODULES = ("perfgym.rewards", "perfgym.metrics", "perfgym.service.client", "perfgym.judge")
#: Packages a pure reward or metric must not need to load.
HEAVY = (
    "perfgym.sandbox",
    "perfgym.service",
    "fastapi",
    "ray",
    "matplotlib",
    "scipy",
    "httpx",
    "uvicorn",
)


def loaded_modules(module: str) -> list[str]:
    """Module names `import module` loads in a fresh interpreter, from -X importtime."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=True,
    )
    names = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.append(name)
    return names


def import_seconds(module: str, runs: int) -> float:
    """Median wall time of `runs` fresh `python -c "import module"` processes."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def heavy_loaded(names: list[str]) -> list[str]:
    return [h for h in HEAVY if any(n == h or n.startswith(h + ".") for n in names)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", default=list(MODULES))
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    baseline = import_seconds("pydantic", args.runs)
    print(f"{'module':<26} {'perfgym':>7} {'all':>5} {'median s':>9}  heavy packages loaded")
    for module in args.modules:
        names = loaded_modules(module)
        ours = [n for n in names if n == "perfgym" or n.startswith("perfgym.")]
        heavy = ", ".join(heavy_loaded(names)) or "-"
        secs = import_seconds(module, args.runs)
        print(f"{module:<26} {len(ours):>7} {len(names):>5} {secs:>9.3f}  {heavy}")
    print(f"(python -c 'import pydantic' alone: {baseline:.3f} s)")


if __name__ == "__main__":
    main()
