"""GRPO-shaped batch latency, measured in one run on this machine; prints ratios (figures last).

One small Python task, 8 completions per call (the task's own solutions cycled, each a distinct
program per call, and one `while True: pass`), judged through the reward path (`Judge` +
`get_reward("rlpf")`) call after call, as a GRPO trainer does, by long-lived workers:
  before      another checkout's perfgym (`--before-src`, e.g. `git worktree add
              /opt/perfgym-15base 608603b`): every test under the task's limit, the baseline and
              reference measured on every call;
  no-reuse    this checkout, correctness tests under max(floor, k x the own solutions' time),
              the baseline and reference measured on every call;
  reuse       this checkout with `reuse_references` (the training protocol): the baseline
              measured once, reused while the drift probes show the machine unchanged and the
              reference (measured alone first, then beside the candidates) agrees with its kept
              timing.
All three use the training protocol (5 interleaved rounds, CPU clock, drift probes). The calls
are interleaved (one call of each worker per round, in a rotating order), so the load others
put on a shared machine hits all alike. Prints per-call seconds, the median ratios
before/no-reuse, before/reuse and no-reuse/reuse, and whether any decision changes: per
candidate the stage, RLPF's reward, the strict 'faster than the baseline' and 'reference or
better', and the significant ones (`perfgym.timing.compare`), reuse vs no-reuse beside the
A/A noise floor before vs no-reuse (both measure everything together).

Targets: reuse is not slower than no-reuse (and than before, when run), and reuse changes no
candidate's stage.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from targets import Target, at_least, holds
from targets import report as report_targets

HERE = Path(__file__).resolve()
SRC = HERE.parent.parent / "src"
LOOP = "while True:\n    pass\n"


# -- a worker: one long-lived Judge, one batch per request ----------------------------------------
def worker(task_id: str, n: int, overrides: dict) -> None:
    import time

    from perfgym.judge import Candidate, Judge, JudgeConfig
    from perfgym.rewards import get_reward
    from perfgym.tasks import load_suite
    from perfgym.timing.compare import compare

    task = load_suite("perfgym-core").get(task_id)
    sols = task.solutions()
    reward = get_reward("rlpf")

    def batch(tag: str) -> list:
        # distinct programs (an assignment each, not a comment: one program is judged once)
        texts = [f"{sols[k % len(sols)].source}\n_completion = '{k} {tag}'\n"
                 for k in range(n - 1)]  # fmt: skip
        texts.insert(n // 2, f"{LOOP}# completion {tag}\n")
        return [Candidate(task, completion=f"```python\n{t}```", model="grpo", sample=k)
                for k, t in enumerate(texts)]  # fmt: skip

    def faster(a, b, strict: bool) -> bool | None:
        if a is None or b is None or not a.ok or not b.ok or not a.samples_s or not b.samples_s:
            return None
        if strict:
            return a.estimate_s < b.estimate_s
        c = compare(a.samples_s, b.samples_s)
        return c.significant and c.faster == "a"

    with Judge(JudgeConfig.protocol("training", **overrides)) as judge:
        for line in sys.stdin:
            tag = line.strip()
            t0 = time.perf_counter()
            verdicts = judge.judge_many(batch(tag))
            rewards = reward(verdicts)
            took = time.perf_counter() - t0
            decisions = [
                {"stage": v.stage.value, "detail": v.detail, "reward": r,
                 "faster_strict": faster(v.candidate, v.baseline, True),
                 "ref_or_better_strict": None if faster(v.reference, v.candidate, True) is None
                 else not faster(v.reference, v.candidate, True),
                 "faster_significant": faster(v.candidate, v.baseline, False),
                 "slower_than_ref_significant": faster(v.reference, v.candidate, False)}
                for v, r in zip(verdicts, rewards, strict=True)
            ]  # fmt: skip
            loop = next(v for v in verdicts if "while True" in (v.source or ""))
            reused = any("reused_timing" in (v.baseline.flags if v.baseline else [])
                         for v in verdicts)  # fmt: skip
            print("@@" + json.dumps({"seconds": took, "decisions": decisions,
                                     "loop": f"{loop.stage.value} {loop.detail}", "reused": reused,
                                     "loop_reason": loop.reason[:160]}), flush=True)  # fmt: skip


# -- the parent: interleaved rounds, ratios ---------------------------------------------------------
class Worker:
    def __init__(self, name: str, src: Path, task: str, n: int, overrides: dict) -> None:
        self.name = name
        env = {**os.environ, "PYTHONPATH": str(src)}
        args = [sys.executable, str(HERE), "--worker", json.dumps(overrides), "--task", task,
                "--completions", str(n)]  # fmt: skip
        # cwd /var/tmp: no checkout's src on the path but the one PYTHONPATH names
        self.proc = subprocess.Popen(args, env=env, cwd="/var/tmp", stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)  # fmt: skip

    def call(self, tag: str) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(tag + "\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            if line.startswith("@@"):
                return json.loads(line[2:])
        raise RuntimeError(f"worker {self.name} ended (rc {self.proc.wait()})")

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def agreement(a: list[list[dict]], b: list[list[dict]], key: str) -> tuple[int, int]:
    """Candidates (over rounds) whose `key` decision is the same in both, and how many."""
    same = total = 0
    for ra, rb in zip(a, b, strict=True):
        for da, db in zip(ra, rb, strict=True):
            total += 1
            same += da[key] == db[key]
    return same, total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--task", default="py-lis-dp", help="A perfgym-core Python task.")
    ap.add_argument("--completions", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=5, help="Interleaved rounds (medians).")
    ap.add_argument("--config", default="{}",
                    help='JudgeConfig overrides for every worker, as JSON (e.g. \'{"repeats": 1}\': '
                    "RLPF's single timed run).")  # fmt: skip
    ap.add_argument("--before-src", default="/opt/perfgym-15base/src",
                    help="The src folder of the perfgym to compare against (skipped if absent).")  # fmt: skip
    args = ap.parse_args()
    if args.worker is not None:
        worker(args.task, args.completions, json.loads(args.worker))
        return 0
    base = json.loads(args.config)
    setups = {"no-reuse": (SRC, {**base, "reuse_references": False}), "reuse": (SRC, base)}
    if Path(args.before_src).is_dir():
        setups = {"before": (Path(args.before_src), base), **setups}
    workers = {name: Worker(name, src, args.task, args.completions, ov)
               for name, (src, ov) in setups.items()}  # fmt: skip
    print(f"GRPO batch latency: {args.completions} completions of {args.task} (one `while True: "
          f"pass`), training protocol {base}, {args.rounds} rounds, {os.cpu_count()} cpus",
          flush=True)  # fmt: skip
    seconds: dict[str, list[float]] = {n: [] for n in workers}
    decisions: dict[str, list[list[dict]]] = {n: [] for n in workers}
    try:
        for w in workers.values():  # warm: workers, own runs, the first measurement of each
            out = w.call("warm-up")
            print(f"  warm-up {w.name:9s} {out['seconds']:6.2f} s  loop: {out['loop']}  "
                  f"{out['loop_reason']}", flush=True)  # fmt: skip
        names = list(workers)
        for r in range(args.rounds):
            order = names[r % len(names) :] + names[: r % len(names)]
            print(f"round {r + 1}/{args.rounds}, load average {os.getloadavg()[0]:.1f}", flush=True)
            for name in order:
                out = workers[name].call(f"round {r}")  # the same texts for every worker
                seconds[name].append(out["seconds"])
                decisions[name].append(out["decisions"])
                print(
                    f"  {name:9s} {out['seconds']:6.2f} s  loop: {out['loop']}"
                    + ("  (baseline/reference reused)" if out["reused"] else ""),
                    flush=True,
                )
    finally:
        for w in workers.values():
            w.close()
    report(seconds, decisions)
    return report_targets(targets(seconds, decisions))


def targets(
    seconds: dict[str, list[float]], decisions: dict[str, list[list[dict]]]
) -> list[Target]:
    med = {n: statistics.median(v) for n, v in seconds.items()}
    out = [at_least(f"{a} / reuse", med[a] / med["reuse"], 1.0, "x")
           for a in ("before", "no-reuse") if a in med]  # fmt: skip
    same, total = agreement(decisions["no-reuse"], decisions["reuse"], "stage")
    out.append(holds(f"reuse changes no stage ({same}/{total} agree)", same == total))
    return out


def report(seconds: dict[str, list[float]], decisions: dict[str, list[list[dict]]]) -> None:
    print(json.dumps({"seconds": seconds}))
    print(f"load average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus")
    med = {n: statistics.median(v) for n, v in seconds.items()}
    for n, m in med.items():
        print(f"   {n:9s} median {m:6.2f} s per call")
    for a, b in (("before", "no-reuse"), ("before", "reuse"), ("no-reuse", "reuse")):
        if a in med and b in med:
            per_round = [x / y for x, y in zip(seconds[a], seconds[b], strict=True)]
            print(f"   {a}/{b}: {med[a] / med[b]:5.2f}x (median of per-round ratios "
                  f"{statistics.median(per_round):5.2f}x)")  # fmt: skip
    keys = ["stage", "faster_strict", "ref_or_better_strict", "faster_significant",
            "slower_than_ref_significant"]  # fmt: skip
    pairs = [("no-reuse", "reuse"), ("before", "no-reuse")]
    for a, b in pairs:
        if a in decisions and b in decisions:
            cells = []
            for k in keys:
                same, total = agreement(decisions[a], decisions[b], k)
                cells.append(f"{k} {same}/{total}")
            diffs = [abs(x["reward"] - y["reward"]) for ra, rb in zip(decisions[a], decisions[b], strict=True)
                     for x, y in zip(ra, rb, strict=True) if x["reward"] is not None and y["reward"] is not None]  # fmt: skip
            if diffs:
                cells.append(
                    f"reward |diff| median {statistics.median(diffs):.3f} max {max(diffs):.3f}"
                )
            print(f"   decisions {a} vs {b}: " + ", ".join(cells))


if __name__ == "__main__":
    sys.exit(main())
