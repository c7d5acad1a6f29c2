"""ENAMEL run-to-run stability: eff@1 / pass@1 of each results file and how much the per-problem
limit T moved between them, over the problems every file holds.

    python bench/enamel_stability.py results/a.jsonl results/b.jsonl [more.jsonl ...]

Each file is what `perfgym eval enamel --solutions NAME -o FILE` writes (one trace per problem).
Printed: per file eff@1 and pass@1 with their bootstrap CIs on the common problems; per pair the
median, 75th percentile and largest factor max(T_a, T_b) / min(T_a, T_b), the difference of
eff@1, and where it came from: the part the reference's timing moved (run b's r and T with run
a's sample times), the part the sample's timing moved (the rest), the problems whose level
break (timeout) flipped, and the problems that moved eff@1 the most.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from targets import Target, at_most, report

from perfgym.metrics.enamel import (
    EnamelConfig,
    enamel_eff_at_k,
    enamel_pass_at_k,
    sample_efficiency,
)
from perfgym.metrics.enamel_levels import EnamelProblem, EnamelSample


def traces(path: Path) -> dict[str, dict]:
    """Task id -> its trace (the header and excluded problems left out)."""
    out = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        if "task_id" in row and not row.get("stopped", "").startswith("excluded"):
            out[row["task_id"]] = row
    return out


def problem(tr: dict) -> EnamelProblem:
    sample = EnamelSample(correct=tr["correct"], level_times_s=tr["level_times_s"])
    n = len(tr["level_times_s"])
    return EnamelProblem(task_id=tr["task_id"], reference_times_s=tr["reference_times_s"],
                         level_limits_s=[tr["limit_s"]] * n, samples=[sample])  # fmt: skip


def score(tr: dict, ref: dict | None = None) -> float:
    """The problem's score from `tr`'s sample times, against `ref`'s r and T (default its own)."""
    ref = ref or tr
    n = len(tr["level_times_s"])
    p = EnamelProblem(task_id=tr["task_id"], reference_times_s=ref["reference_times_s"],
                      level_limits_s=[ref["limit_s"]] * n, samples=[])  # fmt: skip
    s = EnamelSample(correct=tr["correct"], level_times_s=tr["level_times_s"])
    return sample_efficiency(s, p)


def attribute(a: dict[str, dict], b: dict[str, dict], common: list[str]) -> None:
    """Print where eff@1 moved between runs a and b (means over the common problems)."""
    n = len(common)
    ref_part = sum(score(a[t], b[t]) - score(a[t]) for t in common) / n
    total = sum(score(b[t]) - score(a[t]) for t in common) / n
    flips = [t for t in common if a[t]["stopped"] != b[t]["stopped"]
             and "at level" in a[t]["stopped"] + b[t]["stopped"]]  # fmt: skip
    flip_part = sum(score(b[t]) - score(a[t]) for t in flips) / n
    print(f"  eff@1 b - a {total:+.4f} = reference's timing (r, T) {ref_part:+.4f} "
          f"+ sample's timing {total - ref_part:+.4f}; level breaks flipped on {len(flips)} "
          f"problem(s), {flip_part:+.4f} of the total")  # fmt: skip
    d = np.array([score(b[t]) - score(a[t]) for t in common])
    print(f"  per-problem score difference: sd {d.std(ddof=1):.3f}, so eff@1's run-to-run "
          f"difference has sd ~{d.std(ddof=1) / np.sqrt(n):.4f} over these {n} problems and "
          f"~{d.std(ddof=1) / np.sqrt(142):.4f} over ENAMEL's 142")  # fmt: skip
    moves = sorted(common, key=lambda t: -abs(score(b[t]) - score(a[t])))
    for t in moves[:8]:
        fa, fb = a[t]["limit_s"], b[t]["limit_s"]
        ta, tb = a[t]["level_times_s"], b[t]["level_times_s"]
        ra, rb = a[t]["reference_times_s"], b[t]["reference_times_s"]
        ratio = [f"{x / r:.2f}->{y / q:.2f}" if x and y else f"{x}->{y}"
                 for x, y, r, q in zip(ta[1:], tb[1:], ra[1:], rb[1:], strict=True)]  # fmt: skip
        print(
            f"  {t}: score {score(a[t]):.3f} -> {score(b[t]):.3f}, T {fa * 1e3:.3g} -> "
            f"{fb * 1e3:.3g} ms, t_j/r_j (levels 1-3) {', '.join(ratio)}"
            f"{'; ' + a[t]['stopped'] + ' / ' + b[t]['stopped'] if t in flips else ''}"
        )


def main() -> int:
    if len(sys.argv) < 3:
        sys.exit("usage: enamel_stability.py RESULTS.jsonl RESULTS.jsonl [...]")
    paths = [Path(p) for p in sys.argv[1:]]
    runs = {p.name: traces(p) for p in paths}
    common = sorted(set.intersection(*(set(r) for r in runs.values())))
    print(f"{len(common)} problems in every file")
    effs = {}
    for name, tr in runs.items():
        probs = [problem(tr[t]) for t in common]
        eff = enamel_eff_at_k(probs, EnamelConfig(k=1))
        pas = enamel_pass_at_k(probs, EnamelConfig(k=1))
        effs[name] = eff.value
        print(f"{name}: eff@1 {eff.value:.3f} [{eff.ci_low:.3f}, {eff.ci_high:.3f}]  "
              f"pass@1 {pas.value:.3f}")  # fmt: skip
    names = list(runs)
    targets: list[Target] = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            ta = np.array([runs[a][t]["limit_s"] for t in common])
            tb = np.array([runs[b][t]["limit_s"] for t in common])
            f = np.maximum(ta, tb) / np.minimum(ta, tb)
            print(f"{a} vs {b}: T factor median {np.median(f):.3f}, p75 "
                  f"{np.percentile(f, 75):.3f}, max {f.max():.2f}; "
                  f"eff@1 difference {abs(effs[a] - effs[b]):.3f}")  # fmt: skip
            attribute(runs[a], runs[b], common)
            # issue 28 item 7: T stable run to run, eff@1 within +-0.01 across runs
            targets.append(at_most(f"{a} vs {b}: T factor median", float(np.median(f)), 1.2))
            targets.append(at_most(f"{a} vs {b}: eff@1 difference", abs(effs[a] - effs[b]), 0.01))
    return report(targets)


if __name__ == "__main__":
    sys.exit(main())
