"""GRPO-shaped batch on a test-heavy task: 8 completions x 1 HumanEval+ task (100+ tests),
judged call after call by one long-lived `Judge`, this checkout against another's src
(`--before-src`), interleaved; prints each call's seconds, the medians and their ratio.

The 8: the canonical solution (6 textually unique copies), a wrong one and `while True: pass`.

    python3 bench/grpo_evalplus_latency.py --before-src /opt/perfgym-16base/src --calls 3

Target: this checkout is not slower (before/after >= 1).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from targets import at_least, report

SRC = Path(__file__).resolve().parents[1] / "src"


def worker(task_id: str, calls: int) -> None:
    import time

    from perfgym.judge import Candidate, Judge, JudgeConfig
    from perfgym.tasks.humaneval import load_humanevalplus

    task = next(t for t in load_humanevalplus().tasks if t.id == task_id)
    ref = task.reference
    assert ref is not None
    with Judge(JudgeConfig(repeats=1)) as judge:
        for call in range(calls):
            sources = [f"{ref.source}\n# {call}-{k}\n" for k in range(6)]
            sources += [
                task.goal + "    return None\n",
                task.goal + "    while True:\n        pass\n",
            ]
            t0 = time.monotonic()
            vs = judge.judge_many([Candidate(task, source=s, model="m", sample=k)
                                   for k, s in enumerate(sources)])  # fmt: skip
            print(json.dumps({"s": time.monotonic() - t0,
                              "stages": [v.stage.value for v in vs]}), flush=True)  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="HumanEval/5")
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--before-src", type=Path, required=True)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a.task, a.calls)
        return 0
    runs = {}
    for rnd, (name, src) in enumerate([("before", a.before_src), ("after", SRC),
                                       ("after", SRC), ("before", a.before_src)]):  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(src)}
        out = subprocess.run([sys.executable, __file__, "--worker", "--task", a.task, "--calls",
                              str(a.calls), "--before-src", str(src)], env=env,
                             capture_output=True, text=True, check=True)  # fmt: skip
        rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
        runs.setdefault(name, []).extend(r["s"] for r in rows[1:])  # the first call warms up
        print(
            f"run {rnd + 1} {name} (load {os.getloadavg()[0]:.1f}): "
            f"{[round(r['s'], 2) for r in rows]} stages {rows[-1]['stages']}",
            flush=True,
        )
    b, f = statistics.median(runs["before"]), statistics.median(runs["after"])
    print(f"median per call: before {b:.2f} s, after {f:.2f} s, before/after = {b / f:.1f}x")
    return report([at_least("before / after", b / f, 1.0, "x")])


if __name__ == "__main__":
    sys.exit(main())
