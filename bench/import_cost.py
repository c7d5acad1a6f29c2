"""What importing perfgym's layers costs: perfgym modules loaded, heavy packages pulled in, time.

For each module it runs fresh `python3 -X importtime -c "import X"` subprocesses (nothing
cached in this process can hide a cost), counts the perfgym modules the import loaded, lists
the heavy packages among them, and prints the median wall time of `--runs` fresh imports
(interpreter start-up included, so compare rows with each other, not with zero).

Targets: no entry point loads a heavy package it does not need (numpy only `perfgym.metrics`,
httpx only the service client, the sandbox's data types only the service client) nor more
perfgym modules than its ceiling in `tests/test_import_cost.py`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from targets import Target, at_most, holds, report

#: The public entry points, each with the perfgym-module ceiling its guard test holds.
MODULES = {
    "perfgym": 5,
    "perfgym.rewards": 40,
    "perfgym.metrics": 52,
    "perfgym.service.client": 75,
    "perfgym.train.trl": 62,
    "perfgym.train.verl": 12,
}
#: Packages a pure reward or metric must not need to load.
HEAVY = (
    "perfgym.sandbox",
    "perfgym.service",
    "fastapi",
    "ray",
    "matplotlib",
    "numpy",
    "scipy",
    "httpx",
    "uvicorn",
)
#: What an entry point may load of HEAVY: metrics computes with numpy; the client speaks HTTP
#: and carries a run's data types (sandbox.execution, .limits, .run_request, .bind).
NEEDS = {
    "perfgym.metrics": {"numpy"},
    "perfgym.service.client": {"perfgym.service", "httpx", "perfgym.sandbox"},
}
SANDBOX_DATA = {"execution", "limits", "run_request", "bind"}


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


def engine_loaded(names: list[str]) -> list[str]:
    """Sandbox modules beyond a run's data types."""
    return [
        n for n in names if n.startswith("perfgym.sandbox.") and n.split(".")[2] not in SANDBOX_DATA
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", default=list(MODULES))
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    baseline = import_seconds("pydantic", args.runs)
    targets: list[Target] = []
    print(f"{'module':<26} {'perfgym':>7} {'all':>5} {'median s':>9}  heavy packages loaded")
    for module in args.modules:
        names = loaded_modules(module)
        ours = [n for n in names if n == "perfgym" or n.startswith("perfgym.")]
        heavy = heavy_loaded(names)
        secs = import_seconds(module, args.runs)
        print(
            f"{module:<26} {len(ours):>7} {len(names):>5} {secs:>9.3f}  {', '.join(heavy) or '-'}"
        )
        unneeded = [h for h in heavy if h not in NEEDS.get(module, set())] + engine_loaded(names)
        targets.append(holds(f"{module} loads nothing heavy it does not need", not unneeded))
        if module in MODULES:
            targets.append(at_most(f"{module} perfgym modules", len(ours), MODULES[module]))
    print(f"(python -c 'import pydantic' alone: {baseline:.3f} s)")
    return report(targets)


if __name__ == "__main__":
    sys.exit(main())
