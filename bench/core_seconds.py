"""Core-seconds per completion by language on perfgym-core: the sizing input of docs/scaling.md.

For each language, `--tasks` of its perfgym-core tasks, each judged on `--per-task` distinct
completions cycling through the task's own solutions (a late-training mix: mostly correct),
through the local judge on all cores, measured as training measures (repeats 1, the CPU clock).
Prints per language: the wall x cores / completions (what a node pays, builds and set-up
included; on a loaded machine an upper bound) and the runs' own CPU seconds / completions (tests
and timed runs; little moved by load), and writes them as JSON with `--json`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from targets import holds, report

from perfgym.judge import Candidate, Judge, JudgeConfig, Verdict
from perfgym.sandbox.pool import usable_cores
from perfgym.tasks import load_suite


def run_seconds(verdicts: list[Verdict]) -> float:
    """The sandboxed runs' own CPU seconds: tests and every timed sample (baseline and reference
    once per task)."""
    total, seen = 0.0, set()
    for v in verdicts:
        total += sum(t.cpu_s if t.cpu_s is not None else (t.wall_s or 0.0) for t in v.tests)
        roles = [v.candidate] + ([] if v.task_id in seen else [v.baseline, v.reference])
        seen.add(v.task_id)
        total += sum(sum(t.samples_s) for t in roles if t is not None)
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=1, help="Tasks per language.")
    ap.add_argument("--per-task", type=int, default=8)
    ap.add_argument("--languages", nargs="*", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    cores = len(usable_cores())
    suite = load_suite("perfgym-core")
    langs = args.languages or sorted({t.language.value for t in suite.tasks})
    out: dict[str, dict[str, float]] = {}
    with Judge(JudgeConfig(repeats=1, clock="cpu")) as judge:
        for lang in langs:
            tasks = [t for t in suite.tasks if t.language.value == lang][: args.tasks]
            cands = []
            for t in tasks:
                sols = t.solutions()
                for k in range(args.per_task):
                    src = sols[k % len(sols)].source
                    tag = f"\n// candidate {k}\n" if lang != "python" else f"\n# candidate {k}\n"
                    cands.append(Candidate(t, source=src + tag, model="bench", sample=k))
            t0 = time.perf_counter()
            verdicts = judge.judge_many(cands)
            wall = time.perf_counter() - t0
            n = len(cands)
            ok = sum(v.stage.value == "OK" for v in verdicts)
            out[lang] = {"completions": n, "ok": ok, "wall_s": wall,
                         "core_s_per_completion": wall * cores / n,
                         "run_core_s_per_completion": run_seconds(verdicts) / n}  # fmt: skip
            print(f"{lang:10s} {n} completions ({ok} OK): {wall:.1f} s wall, "
                  f"{wall * cores / n:.2f} core-s per completion (runs' CPU "
                  f"{run_seconds(verdicts) / n:.2f})", flush=True)  # fmt: skip
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cores": cores, "languages": out}, f, indent=1)
    # The mix is the tasks' own solutions: a completion that is not OK is a broken measurement,
    # and its core-seconds (a short NR, a skipped timing) would understate the cost.
    return report([holds(f"{lang}: every completion judged OK ({v['ok']}/{v['completions']})",
                         v["ok"] == v["completions"]) for lang, v in out.items()])  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
