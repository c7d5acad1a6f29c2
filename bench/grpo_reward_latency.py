"""GRPO reward latency: perfgym's batched reward against one judge call per completion.

A GRPO step of 8 prompts x 8 completions on perfgym-core Python tasks. Each prompt's 8
completions are real programs from the task's pool: the reference and a pool solution (twice
each, the copies differing in a comment, as a policy late in training repeats itself), the
baseline handed back with a comment, the baseline slowed by a 50 ms spin (correct and slow), a
wrong answer and prose with no program (`--mix early`: one correct, seven failing at every
stage, as a policy early in training writes). `--distinct`: each copy an assignment apart
instead of a comment, so no completion is the same program as another, or as the baseline or
the reference (`perfgym.judge.twins` judges one program once). Two ways to reward the step, in
one run, interleaved round by round (the order alternates, so the load others put on a shared
machine hits both alike):
  batched        `perfgym.train.batch.BatchReward.score` on all 64 at once: one judge call,
                 each task's baseline and reference measured once, beside all its candidates;
  per-completion one judge call per completion (the pattern of verl's reward loop calling a
                 sandbox service per sample): each call measures its own baseline and reference.
Both use one long-lived local `Judge` each with the same configuration (RLPF's training
measurement: one timed run per variant), warmed by one untimed step first.

A third contender, `no twins`, is the batched reward with `same_program_once=False` (every
completion judged and timed on its own): no-twins / batched is what the twin rule saves, and the
twins and role timings it found in a step are printed. Only byte-identical sources are one
program (`perfgym.judge.twins`), so in the late mix a copy with its own comment is judged on its
own and the baseline handed back with a comment is timed; `--prose`: the copies differ only in
the text around the code block (the same program, byte for byte, and the baseline handed back
as it is), what the rule still saves. `--no-per-completion` leaves out the per-completion
contender (the slow one).

Prints per-round seconds, then the median ratio per-completion / batched (target >= 3x) and the
batched step's wall time against its floor: the CPU seconds of the runs the step made (each
judged candidate's correctness tests and timed runs, the shared baseline and reference once
per task; `run_seconds`) divided by the cores the judge runs on (target <= 1.25x).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Sequence

from targets import Target, at_least, at_most, report

from perfgym.judge.judge import Judge
from perfgym.judge.twins import ROLE_TIMING, SAME_PROGRAM
from perfgym.judge.verdict import Timing, Verdict
from perfgym.sandbox.pool import usable_cores
from perfgym.tasks.suite import load_suite
from perfgym.tasks.task import Task
from perfgym.train.batch import BatchReward, training_judge_config

TASKS = ["py-topk-words", "py-prefix-range-sums", "py-interval-merge", "py-substring-count",
         "py-lis-dp", "py-hash-join", "py-bfs-grid", "py-record-decode"]  # fmt: skip
SPIN = "import time as _t\n_s = _t.perf_counter()\nwhile _t.perf_counter() - _s < 0.05:\n    pass\n"


def completions(task: Task, tag: str, mix: str = "late", distinct: bool = False,
                prose: bool = False) -> list[str]:  # fmt: skip
    """Eight completions of one prompt. late: correct (fast and not), slow, wrong and no
    program; early (a policy that rarely gets it right yet): one correct, the rest failing at
    every stage (no program, syntax error, crash, wrong output)."""
    ref, pool, base = (
        task.references[0].source,
        (task.pool or task.references)[0].source,
        task.baseline.source,
    )

    def fenced(src: str, k: int) -> str:
        if distinct:  # an assignment: another program, judged on its own
            return f"```python\n{src}\n_completion = '{k} {tag}'\n```"
        if prose:  # the same bytes (one program): only the text around the code differs
            return f"Attempt {k} ({tag}):\n```python\n{src}```"
        return f"```python\n{src}\n# completion {k} {tag}\n```"

    if mix == "early":
        return [fenced(ref, 0), fenced("def main(:\n", 1), fenced("raise SystemExit(3)\n", 2),
                fenced("print(0)\n", 3), fenced("print('')\n", 4), f"No idea ({tag}).",
                f"Use a heap ({tag}).", f"Sort it ({tag})."]  # fmt: skip
    return [fenced(ref, 0), fenced(pool, 1), fenced(base, 2), fenced(ref, 3), fenced(pool, 4),
            fenced(SPIN + base, 5), fenced("print(0)\n", 6),
            f"I would make it faster ({tag})."]  # fmt: skip


def step(tasks: Sequence[Task], tag: str, mix: str = "late", distinct: bool = False,
         prose: bool = False) -> list[tuple[str, str]]:  # fmt: skip
    return [(t.id, c) for t in tasks for c in completions(t, tag, mix, distinct, prose)]


def run_seconds(tasks: Sequence[Task], verdicts: Sequence[Verdict]) -> float:
    """CPU seconds of every run the step made: each judged candidate's correctness tests and
    timed runs, and each task's baseline and reference timed runs once (shared by its
    candidates). A checked timed run is in a verdict's tests too (as its workload's result):
    counted once, as a timed run. A twin judged with another candidate, or a timing taken from
    the baseline's or the reference's (the same program), ran nothing of its own. CPU, not
    wall: on a shared machine a run's wall time counts the time others held its core."""
    workloads = {t.id: {w.id for w in t.workloads} for t in tasks}
    total = 0.0
    shared: dict[str, float] = {}
    for v in verdicts:
        roles = [x for x in (v.baseline, v.reference) if x is not None]
        shared.setdefault(v.task_id, sum(_timed(x) for x in roles))
        if SAME_PROGRAM in v.flags:
            continue
        timed = workloads.get(v.task_id, set())
        total += sum(t.cpu_s if t.cpu_s is not None else (t.wall_s or 0.0)
                     for t in v.tests if t.id not in timed)  # fmt: skip
        if v.candidate is not None and ROLE_TIMING not in v.candidate.flags:
            total += _timed(v.candidate)
    return total + sum(shared.values())


def _timed(timing: Timing) -> float:
    # The judge's clock is the CPU clock (training_judge_config): CPU seconds per timed run.
    return float(sum(timing.samples_s))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="Interleaved rounds (medians).")
    ap.add_argument("--tasks", default=",".join(TASKS), help="Comma-separated task ids.")
    ap.add_argument("--mix", choices=["late", "early"], default="late",
                    help="The completions' mix (see `completions`).")  # fmt: skip
    ap.add_argument("--distinct", action="store_true",
                    help="Every completion a distinct program (an assignment of its own where "
                    "the mix has a comment): nothing is judged once as another's twin.")  # fmt: skip
    ap.add_argument("--prose", action="store_true",
                    help="Copies differ in the text around the code, not in a comment: the "
                    "same bytes, so one program to the twin rule.")  # fmt: skip
    ap.add_argument("--no-per-completion", action="store_true",
                    help="Only the batched reward, with and without the twin rule.")  # fmt: skip
    args = ap.parse_args()
    suite = load_suite("perfgym-core")
    tasks = [suite.get(t) for t in args.tasks.split(",")]
    cores = len(usable_cores())
    config = training_judge_config()
    batched = BatchReward(suite, "rlpf", judge_config=config)
    no_twins = BatchReward(
        suite, "rlpf", judge_config=config.model_copy(update={"same_program_once": False})
    )
    alone = Judge(config)
    found: list[tuple[int, int]] = []  # per batched step: (twins, role timings)

    def run_batched(tag: str) -> float:
        t0 = time.perf_counter()
        batched.score(step(tasks, tag, args.mix, args.distinct, args.prose))
        took = time.perf_counter() - t0
        found.append(twins_found(batched.last_verdicts))
        return took

    def run_no_twins(tag: str) -> float:
        t0 = time.perf_counter()
        no_twins.score(step(tasks, tag, args.mix, args.distinct, args.prose))
        return time.perf_counter() - t0

    def run_alone(tag: str) -> float:
        t0 = time.perf_counter()
        for c in batched.candidates(step(tasks, tag, args.mix, args.distinct, args.prose)):
            batched.reward.score(alone.judge_many([c]))
        return time.perf_counter() - t0

    n = len(step(tasks, ""))
    kind = ", distinct programs" if args.distinct else ", copies in prose" if args.prose else ""
    print(f"GRPO reward latency: {len(tasks)} prompts x 8 completions = {n} ({args.mix} mix"
          f"{kind}), "
          f"{cores} cores, "
          f"judge {config.model_dump(exclude_defaults=True)}", flush=True)  # fmt: skip
    contenders = [run_batched, run_no_twins]
    if not args.no_per_completion:
        contenders.append(run_alone)
    names = {"run_batched": "batched", "run_no_twins": "no twins", "run_alone": "per-completion"}
    try:
        warm = {names[fn.__name__]: fn("warm") for fn in contenders}
        print("  warm-up " + ", ".join(f"{k} {v:.1f} s" for k, v in warm.items()), flush=True)
        rows = []
        for r in range(args.rounds):
            took: dict[str, float] = {}
            k = r % len(contenders)
            for fn in contenders[k:] + contenders[:k]:  # the order rotates round by round
                took[names[fn.__name__]] = fn(f"round {r}")
            floor = run_seconds(tasks, batched.last_verdicts) / cores
            rows.append((took["batched"], took.get("per-completion"), floor, took["no twins"]))
            shown = "  ".join(f"{k} {v:6.1f} s" for k, v in took.items())
            print(f"  round {r + 1}: {shown}  floor {floor:5.1f} s  "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    finally:
        batched.close()
        no_twins.close()
        alone.close()
    twins, roles = found[-1]
    print(f"twin rule: {twins} completions judged once as another's twin, {roles} given the "
          f"baseline's or reference's timing, of {n} per step")  # fmt: skip
    benefit = statistics.median(nt / ba for ba, _, _, nt in rows)
    print(f"no twins / batched: {benefit:.2f}x (what the twin rule saves), median over "
          f"{len(rows)} rounds")  # fmt: skip
    targets: list[Target] = []
    if not args.no_per_completion:
        speedup = statistics.median(al / ba for ba, al, _, _ in rows if al is not None)
        print(f"per-completion / batched: {speedup:.2f}x (target >= 3x), median over "
              f"{len(rows)} rounds")  # fmt: skip
        targets.append(at_least("per-completion / batched", speedup, 3, "x"))
    over_floor = statistics.median(ba / fl for ba, _, fl, _ in rows)
    print(f"batched / floor (run seconds / {cores} cores): {over_floor:.2f}x (target <= 1.25x)")
    targets.append(at_most("batched / floor", over_floor, 1.25, "x"))
    return report(targets)


def twins_found(verdicts: Sequence[Verdict]) -> tuple[int, int]:
    """(verdicts judged once as another's twin, candidates given a role's timing)."""
    twins = sum(SAME_PROGRAM in v.flags for v in verdicts)
    roles = sum(v.candidate is not None and ROLE_TIMING in v.candidate.flags for v in verdicts)
    return twins, roles


if __name__ == "__main__":
    sys.exit(main())
